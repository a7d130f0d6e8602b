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

    /// Appends `take` (0..=8) bits, the low bits of `byte` (the bits above them clear),
    /// without crossing the byte the bitmap ends in: `take <= 8 - len % 8`.
    #[inline(always)]
    fn put_bits(&mut self, byte: u8, take: usize) {
        debug_assert!(take <= 8 - self.len % 8 && (take == 8 || byte >> take == 0));
        if self.len.is_multiple_of(8) {
            self.bits.push(0);
        }
        let last = self.bits.len() - 1;
        self.bits[last] |= byte << (self.len % 8);
        self.null_count += take - byte.count_ones() as usize;
        self.len += take;
    }

    /// Appends bits `start..end` of the bitmap `src` (bit `i` at `src[i / 8] >> (i % 8)`):
    /// a few bits to bring the end of this bitmap to a byte boundary, then whole bytes
    /// (copied when `start` is byte-aligned there, else each made of two source bytes
    /// shifted), then the last few bits.
    fn append_range(&mut self, src: &[u8], start: usize, end: usize) {
        debug_assert!(start <= end && end.div_ceil(8) <= src.len());
        let mut i = start;
        if !self.len.is_multiple_of(8) && i < end {
            let take = (end - i).min(8 - self.len % 8);
            self.put_bits(read_bits(src, i, take), take);
            i += take;
        }
        let whole = (end - i) / 8;
        if whole > 0 {
            let (first, shift) = (i / 8, i % 8);
            let from = self.bits.len();
            if shift == 0 {
                self.bits.extend_from_slice(&src[first..first + whole]);
            } else {
                // Output byte j holds bits i + 8j .. i + 8j + 8, which lie in source bytes
                // first + j and first + j + 1; the last of them is below `end`, so both
                // bytes exist.
                self.bits.extend(
                    src[first..first + whole + 1]
                        .windows(2)
                        .map(|w| (w[0] >> shift) | (w[1] << (8 - shift))),
                );
            }
            self.null_count += whole * 8 - count_ones(&self.bits[from..]);
            self.len += whole * 8;
            i += whole * 8;
        }
        if i < end {
            let take = end - i;
            self.put_bits(read_bits(src, i, take), take);
        }
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
    ///
    /// Each part goes in whole: its bytes copied when the output ends on a byte boundary,
    /// else shifted eight bytes at a time; a part without a bitmap is a fill of ones; the
    /// null count is the parts' counts summed, never recounted.
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
                    out.append_all(v);
                }
                None => out.append_ones(n),
            }
        }
        Some(out)
    }

    /// Appends all of `v`: its bytes copied when this bitmap ends on a byte boundary, else
    /// each eight new bytes one unaligned word of `v` shifted; `v`'s null count added.
    fn append_all(&mut self, v: &Validity) {
        let s = self.len % 8;
        if s == 0 {
            self.bits.extend_from_slice(&v.bits);
        } else if v.len > 0 {
            // The last byte holds `s` bits: bit j of `v` goes to bit s + j of it, and new
            // byte k holds bits 8k + 8 - s .. 8k + 16 - s of `v` (zeros past `v.len`, as
            // `v`'s bits past its length are clear).
            let last = self.bits.len() - 1;
            self.bits[last] |= v.bits[0] << s;
            let new = (self.len + v.len).div_ceil(8) - self.bits.len();
            let src = &v.bits;
            let mut k = 0;
            while k < new {
                let word = (load_u64(src, k) >> (8 - s))
                    | (u64::from(src.get(k + 8).copied().unwrap_or(0)) << (56 + s));
                let n = (new - k).min(8);
                self.bits.extend_from_slice(&word.to_le_bytes()[..n]);
                k += 8;
            }
        }
        self.len += v.len;
        self.null_count += v.null_count;
    }

    /// Appends `n` valid elements: the free bits of the last byte set, then bytes of ones.
    fn append_ones(&mut self, n: usize) {
        let s = self.len % 8;
        if s != 0 && n > 0 {
            let take = n.min(8 - s);
            let last = self.bits.len() - 1;
            self.bits[last] |= (((1u16 << take) - 1) as u8) << s;
        }
        let len = self.len + n;
        self.bits.resize(len.div_ceil(8), 0xFF);
        clear_tail(&mut self.bits, len);
        self.len = len;
    }
}

/// A bitmap built by appending runs of the bits of another, for gathers: the bits
/// gather in a 64-bit register and go out 32 at a time, and the null count is taken once
/// at the end ([`BitWriter::finish`]).
pub(crate) struct BitWriter<'a> {
    src: &'a Validity,
    out: Vec<u8>,
    /// Bits not yet written out, the first in the lowest bit; fewer than 32 between calls.
    pending: u64,
    pending_len: u32,
    len: usize,
}

impl<'a> BitWriter<'a> {
    /// A writer of bits of `src`, with room for `len` of them.
    pub(crate) fn new(src: &'a Validity, len: usize) -> BitWriter<'a> {
        BitWriter {
            src,
            out: Vec::with_capacity(len.div_ceil(8) + 4),
            pending: 0,
            pending_len: 0,
            len: 0,
        }
    }

    /// Appends bits `start..end` of the source (panics when the range is out of bounds).
    #[inline(always)]
    pub(crate) fn extend(&mut self, start: usize, end: usize) {
        if start > end || end > self.src.len {
            bits_out_of_range(start, end, self.src.len);
        }
        let mut start = start;
        while end - start > 32 {
            self.put(start, 32);
            start += 32;
        }
        self.put(start, (end - start) as u32);
    }

    /// Appends `n` (at most 32) bits of the source from bit `start` (in range).
    #[inline(always)]
    fn put(&mut self, start: usize, n: u32) {
        let window = load_u64(&self.src.bits, start / 8) >> (start % 8);
        // At most 7 bits shifted out: the 32 wanted are all in the window.
        let bits = window & ((1u64 << n) - 1);
        self.pending |= bits << self.pending_len;
        self.pending_len += n;
        if self.pending_len >= 32 {
            self.out
                .extend_from_slice(&(self.pending as u32).to_le_bytes());
            self.pending >>= 32;
            self.pending_len -= 32;
        }
        self.len += n as usize;
    }

    /// The bitmap written, its null count taken.
    pub(crate) fn finish(mut self) -> Validity {
        let bytes = self.pending.to_le_bytes();
        self.out
            .extend_from_slice(&bytes[..self.pending_len.div_ceil(8) as usize]);
        let null_count = self.len - count_ones(&self.out);
        Validity {
            bits: self.out,
            len: self.len,
            null_count,
        }
    }
}

/// Eight bytes of `bytes` from `at` as a little-endian word, zeros past the end.
#[inline(always)]
fn load_u64(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at + 8) {
        Some(word) => u64::from_le_bytes(word.try_into().expect("8 bytes")),
        None => {
            let mut word = [0u8; 8];
            let tail = &bytes[at.min(bytes.len())..];
            word[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(word)
        }
    }
}

#[cold]
#[track_caller]
fn bits_out_of_range(start: usize, end: usize, len: usize) -> ! {
    panic!("validity run {start}..{end} out of range for {len} bits")
}

/// The number of set bits in `bytes`, eight bytes at a time.
fn count_ones(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut n: usize = words
        .by_ref()
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")).count_ones() as usize)
        .sum();
    n += words
        .remainder()
        .iter()
        .map(|b| b.count_ones() as usize)
        .sum::<usize>();
    n
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

    /// Concatenations of random parts (odd lengths, bitmaps cut at odd offsets, parts
    /// without bitmaps) against a per-bit model: the bits, the null count and the clear
    /// bits past the end.
    #[test]
    fn concat_matches_a_per_bit_model_on_random_parts() {
        let mut rng = crate::tf_ops::SplitMix64(11);
        for round in 0..300 {
            let mut owned = Vec::new();
            let mut model: Vec<bool> = Vec::new();
            for _ in 0..rng.below(7) {
                let len = rng.below(if round % 3 == 0 { 9 } else { 150 }) as usize;
                let offset = rng.below(13) as usize;
                let source = flags(rng.below(1 << 30), offset + len);
                let part = if rng.below(4) == 0 {
                    model.extend(std::iter::repeat_n(true, len));
                    None
                } else {
                    let whole = Validity::from_bools(&source);
                    let v = Validity::from_bitmap(whole.as_bytes(), offset, len).unwrap();
                    model.extend_from_slice(&source[offset..]);
                    Some(v)
                };
                owned.push((part, len));
            }
            let parts: Vec<(Option<&Validity>, usize)> =
                owned.iter().map(|(v, n)| (v.as_ref(), *n)).collect();
            let Some(joined) = Validity::concat(&parts) else {
                assert!(owned.iter().all(|(v, _)| v.is_none()));
                continue;
            };
            let mut bytes = vec![0u8; model.len().div_ceil(8)];
            for (i, _) in model.iter().enumerate().filter(|(_, b)| **b) {
                bytes[i / 8] |= 1 << (i % 8);
            }
            assert_eq!(joined.len(), model.len(), "round {round}");
            assert_eq!(joined.as_bytes(), &bytes[..], "round {round}");
            assert_eq!(
                joined.null_count(),
                model.iter().filter(|b| !**b).count(),
                "round {round}"
            );
            assert_eq!(joined.to_bools(), model, "round {round}");
        }
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
