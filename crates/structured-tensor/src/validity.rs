//! `Validity`: which elements of a nullable leaf hold a value, one bit per element as in
//! Arrow's validity bitmaps (least significant bit first; a set bit is a valid element).

use std::fmt;

/// A validity bitmap: bit `i` (least significant bit first, as Arrow lays it out) is set
/// when element `i` holds a value and clear when it is null.
///
/// **Invariant:** `bits.len() == len.div_ceil(8)`, the bits past `len` are clear, and
/// `null_count` is the number of clear bits below `len`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Validity {
    bits: Vec<u8>,
    len: usize,
    null_count: usize,
}

impl Validity {
    /// `len` valid elements.
    pub fn all_valid(len: usize) -> Validity {
        let mut bits = vec![0xFFu8; len.div_ceil(8)];
        clear_tail(&mut bits, len);
        Validity {
            bits,
            len,
            null_count: 0,
        }
    }

    /// `len` null elements.
    pub fn all_null(len: usize) -> Validity {
        Validity {
            bits: vec![0u8; len.div_ceil(8)],
            len,
            null_count: len,
        }
    }

    /// One bit per flag (`true` = valid).
    pub fn from_bools(valid: &[bool]) -> Validity {
        let mut bits = vec![0u8; valid.len().div_ceil(8)];
        let mut nulls = 0;
        for (i, &v) in valid.iter().enumerate() {
            if v {
                bits[i / 8] |= 1 << (i % 8);
            } else {
                nulls += 1;
            }
        }
        Validity {
            bits,
            len: valid.len(),
            null_count: nulls,
        }
    }

    /// The bitmap of `len` elements starting at bit `offset` of `bytes` (Arrow's layout);
    /// `None` when `bytes` is too short.
    pub fn from_bitmap(bytes: &[u8], offset: usize, len: usize) -> Option<Validity> {
        let end = offset.checked_add(len)?;
        if end.div_ceil(8) > bytes.len() {
            return None;
        }
        let mut out = Validity {
            bits: Vec::with_capacity(len.div_ceil(8)),
            len: 0,
            null_count: 0,
        };
        out.append_range(bytes, offset, end);
        Some(out)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of null elements.
    pub fn null_count(&self) -> usize {
        self.null_count
    }

    /// Whether element `i` holds a value (panics when `i` is out of range).
    #[inline]
    pub fn is_valid(&self, i: usize) -> bool {
        if i >= self.len {
            crate::error::index_panic("validity bit", i, self.len);
        }
        self.bits[i / 8] & (1 << (i % 8)) != 0
    }

    /// The bitmap's bytes, least significant bit first (`len().div_ceil(8)` of them).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bits
    }

    /// The flags, one per element (`true` = valid).
    pub fn to_bools(&self) -> Vec<bool> {
        (0..self.len).map(|i| self.is_valid(i)).collect()
    }

    /// Appends bits `start..end` of the bitmap `src` (bit `i` at `src[i / 8] >> (i % 8)`).
    fn append_range(&mut self, src: &[u8], start: usize, end: usize) {
        debug_assert!(start <= end && end.div_ceil(8) <= src.len());
        let n = end - start;
        let new_len = self.len + n;
        self.bits.resize(new_len.div_ceil(8), 0);
        let mut at = self.len;
        let mut i = start;
        // Whole bytes when both sides are byte-aligned, else 8-bit windows read with a
        // shift: each step moves up to 8 bits.
        while i < end {
            let take = (end - i).min(8 - at % 8).min(8);
            let byte = read_bits(src, i, take);
            self.bits[at / 8] |= byte << (at % 8);
            self.null_count += take - byte.count_ones() as usize;
            at += take;
            i += take;
        }
        self.len = new_len;
    }

    /// The bits in `runs` (each `(start, end)` in range), one after another.
    pub(crate) fn gather_runs(&self, runs: &[(usize, usize)]) -> Validity {
        let total: usize = runs.iter().map(|(a, b)| b - a).sum();
        let mut out = Validity {
            bits: Vec::with_capacity(total.div_ceil(8)),
            len: 0,
            null_count: 0,
        };
        for &(a, b) in runs {
            assert!(
                a <= b && b <= self.len,
                "validity run {a}..{b} out of range"
            );
            out.append_range(&self.bits, a, b);
        }
        out
    }

    /// The bitmaps of parts of `lens[k]` elements one after another; a part without a
    /// bitmap is all valid. `None` when no part has one.
    pub(crate) fn concat(parts: &[(Option<&Validity>, usize)]) -> Option<Validity> {
        if parts.iter().all(|(v, _)| v.is_none()) {
            return None;
        }
        let total: usize = parts.iter().map(|(_, n)| n).sum();
        let mut out = Validity {
            bits: Vec::with_capacity(total.div_ceil(8)),
            len: 0,
            null_count: 0,
        };
        for &(v, n) in parts {
            match v {
                Some(v) => {
                    debug_assert_eq!(v.len, n);
                    out.append_range(&v.bits, 0, v.len);
                }
                None => {
                    let ones = Validity::all_valid(n);
                    out.append_range(&ones.bits, 0, n);
                }
            }
        }
        Some(out)
    }
}

/// `take` (1..=8) bits of `src` from bit `i`, in the low bits of the result.
#[inline]
fn read_bits(src: &[u8], i: usize, take: usize) -> u8 {
    let byte = i / 8;
    let shift = i % 8;
    let lo = u16::from(src[byte]);
    let hi = if shift + take > 8 {
        u16::from(src[byte + 1])
    } else {
        0
    };
    let window = ((hi << 8) | lo) >> shift;
    (window as u8) & (((1u16 << take) - 1) as u8)
}

/// Clears the bits of the last byte past `len`.
fn clear_tail(bits: &mut [u8], len: usize) {
    if !len.is_multiple_of(8) {
        if let Some(last) = bits.last_mut() {
            *last &= (1u8 << (len % 8)) - 1;
        }
    }
}

impl fmt::Debug for Validity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Validity[")?;
        for i in 0..self.len {
            f.write_str(if self.is_valid(i) { "1" } else { "0" })?;
        }
        write!(f, "]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small SplitMix64 stream of flags.
    fn flags(seed: u64, n: usize) -> Vec<bool> {
        let mut rng = crate::tf_ops::SplitMix64(seed);
        (0..n).map(|_| rng.below(3) != 0).collect()
    }

    #[test]
    fn bools_round_trip_with_counts() {
        for n in [0, 1, 7, 8, 9, 63, 64, 65, 200] {
            let f = flags(n as u64, n);
            let v = Validity::from_bools(&f);
            assert_eq!(v.to_bools(), f);
            assert_eq!(v.null_count(), f.iter().filter(|b| !**b).count());
            assert_eq!(v.as_bytes().len(), n.div_ceil(8));
        }
        assert_eq!(Validity::all_valid(13).null_count(), 0);
        assert_eq!(Validity::all_null(13).to_bools(), vec![false; 13]);
        assert_eq!(Validity::all_valid(13), Validity::from_bools(&[true; 13]));
    }

    /// Gathers and concatenations against the same on `Vec<bool>`, runs at every bit
    /// offset.
    #[test]
    fn gather_and_concat_match_a_bool_model() {
        let f = flags(3, 150);
        let v = Validity::from_bools(&f);
        let mut rng = crate::tf_ops::SplitMix64(5);
        for _ in 0..200 {
            let runs: Vec<(usize, usize)> = (0..rng.below(6))
                .map(|_| {
                    let a = rng.below(151) as usize;
                    (a, a + rng.below((151 - a) as u64 + 1) as usize)
                })
                .map(|(a, b)| (a, b.min(150)))
                .collect();
            let mut model = Vec::new();
            for &(a, b) in &runs {
                model.extend_from_slice(&f[a..b]);
            }
            assert_eq!(
                v.gather_runs(&runs),
                Validity::from_bools(&model),
                "{runs:?}"
            );
        }
        let g = flags(4, 21);
        let w = Validity::from_bools(&g);
        let joined = Validity::concat(&[(Some(&v), 150), (None, 5), (Some(&w), 21)]).unwrap();
        let mut model = f.clone();
        model.extend([true; 5]);
        model.extend(&g);
        assert_eq!(joined, Validity::from_bools(&model));
        assert!(Validity::concat(&[(None, 3)]).is_none());
    }

    #[test]
    fn from_bitmap_reads_at_an_offset_and_refuses_short_input() {
        let bytes = [0b1010_1100u8, 0b0000_0011];
        let v = Validity::from_bitmap(&bytes, 2, 8).unwrap();
        assert_eq!(
            v.to_bools(),
            [true, true, false, true, false, true, true, true]
        );
        assert!(Validity::from_bitmap(&bytes, 9, 8).is_none());
        assert!(Validity::from_bitmap(&bytes, usize::MAX, 2).is_none());
    }

    #[test]
    #[should_panic(expected = "validity bit 3 out of bounds")]
    fn is_valid_out_of_range_panics() {
        Validity::all_valid(3).is_valid(3);
    }
}
