//! The 256-bin histogram (a parallel walk with per-thread tables joined, as Yarr's
//! `computeHist`) and histogram equalisation with `cv2.equalizeHist` semantics.

use std::ops::Range;

use rayon::prelude::*;

use crate::delayed::SourceExt;
use crate::explicit::Array;
use crate::load::{compute_with, schedule_bands, Plain, Threads};
use crate::shape::Shape;
use crate::source::Source;

/// Adds the counts of `s` to four interleaved tables (so consecutive equal levels do not
/// wait on each other's increments).
#[inline(always)]
fn count4(s: &[u8], t: &mut [[u32; 256]; 4]) {
    let mut quads = s.chunks_exact(4);
    for q in &mut quads {
        t[0][q[0] as usize] += 1;
        t[1][q[1] as usize] += 1;
        t[2][q[2] as usize] += 1;
        t[3][q[3] as usize] += 1;
    }
    for &v in quads.remainder() {
        t[0][v as usize] += 1;
    }
}

/// Adds the counts of `s` as pairs of neighbouring levels: one increment of `pairs[lo + 256
/// hi]` counts the two pixels `lo, hi`, so a pixel costs half a read-modify-write of
/// memory, the cost that bounds a histogram's speed (the table is folded into levels by
/// [`fold_pairs`]); an odd last pixel goes to `single`.
#[inline(always)]
fn count_pairs(s: &[u8], pairs: &mut [u32; 1 << 16], single: &mut [u64; 256]) {
    let mut words = s.chunks_exact(8);
    for word in &mut words {
        let v = u64::from_le_bytes(word.try_into().expect("chunks of 8 bytes"));
        pairs[(v & 0xffff) as usize] += 1;
        pairs[((v >> 16) & 0xffff) as usize] += 1;
        pairs[((v >> 32) & 0xffff) as usize] += 1;
        pairs[(v >> 48) as usize] += 1;
    }
    let mut rest = words.remainder().chunks_exact(2);
    for pair in &mut rest {
        pairs[usize::from(u16::from_le_bytes([pair[0], pair[1]]))] += 1;
    }
    for &v in rest.remainder() {
        single[v as usize] += 1;
    }
}

/// Adds the pair table into `total` (each pair counts once for each of its two levels)
/// and clears it.
fn fold_pairs(pairs: &mut [u32; 1 << 16], total: &mut [u64; 256]) {
    let mut low = [0u64; 256];
    for (hi, row) in pairs.chunks_exact(256).enumerate() {
        let mut row_sum = 0u64;
        for (l, &c) in low.iter_mut().zip(row) {
            *l += u64::from(c);
            row_sum += u64::from(c);
        }
        total[hi] += row_sum;
    }
    for (t, l) in total.iter_mut().zip(low) {
        *t += l;
    }
    pairs.fill(0);
}

/// Bands of at least this many pixels count pairs of levels ([`count_pairs`]): clearing
/// and folding its 256 KiB table costs about as much as counting 150 Ki pixels the
/// four-table way, and each pixel after that costs about half (measured on an AMD EPYC
/// Zen 5, see the crate guide).
const PAIR_MIN_PIXELS: usize = 1 << 18;

/// The tables a band counts into.
enum Tables {
    /// Four interleaved tables of levels.
    Quads(Box<[[u32; 256]; 4]>),
    /// The table of pairs of levels, and the odd pixels of spans.
    Pairs(Box<[u32; 1 << 16]>, Box<[u64; 256]>),
}

impl Tables {
    fn for_pixels(pixels: usize) -> Tables {
        if pixels >= PAIR_MIN_PIXELS {
            let pairs: Box<[u32; 1 << 16]> = vec![0u32; 1 << 16]
                .into_boxed_slice()
                .try_into()
                .expect("the length is 2^16");
            Tables::Pairs(pairs, Box::new([0u64; 256]))
        } else {
            Tables::Quads(Box::new([[0u32; 256]; 4]))
        }
    }

    #[inline(always)]
    fn count(&mut self, s: &[u8]) {
        match self {
            Tables::Quads(t) => count4(s, t),
            Tables::Pairs(pairs, single) => count_pairs(s, pairs, single),
        }
    }

    /// Adds the counts into `total` and clears the tables.
    fn flush(&mut self, total: &mut [u64; 256]) {
        match self {
            Tables::Quads(t) => {
                for (k, sum) in total.iter_mut().enumerate() {
                    *sum += t.iter().map(|tab| u64::from(tab[k])).sum::<u64>();
                }
                **t = [[0u32; 256]; 4];
            }
            Tables::Pairs(pairs, single) => {
                fold_pairs(pairs, total);
                for (t, s) in total.iter_mut().zip(single.iter_mut()) {
                    *t += std::mem::take(s);
                }
            }
        }
    }
}

/// Counts of rows `rows` (of the flattened extent, `cols` wide) of `a`.
fn count_band<A: Source<Elem = u8>>(a: &A, rows: Range<usize>, cols: usize) -> Box<[u64; 256]> {
    // u32 tables are flushed into the u64 total before any could overflow.
    const PIECE: usize = 1 << 30;
    let extent = a.extent();
    let mut total = Box::new([0u64; 256]);
    let mut t = Tables::for_pixels(rows.len().saturating_mul(cols));
    let mut pending = 0usize;
    let mut buf = Vec::new();
    for row in rows {
        let mut c = 0;
        while c < cols {
            let n = PIECE.min(cols - c);
            if pending + n > PIECE {
                t.flush(&mut total);
                pending = 0;
            }
            // SAFETY: the row and columns lie inside the flattened extent; `buf` holds n.
            match unsafe { a.span_slice(cols, row, c..c + n) } {
                Some(s) => t.count(s),
                None => {
                    buf.resize(n, 0u8);
                    // SAFETY: as above; `buf` was just resized to hold the n elements.
                    unsafe { a.fill_span(extent, cols, row, c..c + n, buf.as_mut_ptr()) };
                    t.count(&buf);
                }
            }
            pending += n;
            c += n;
        }
    }
    t.flush(&mut total);
    total
}

/// Counts of each grey level (`cv2.calcHist([img], [0], None, [256], [0, 256])`): one
/// table per row band (while counting, four interleaved `u32` tables, or a table of pairs
/// of neighbouring levels in bands of 256 Ki pixels and more), joined by adding, as
/// Yarr's `walkP ... joinHists`. Counts are integers, so the result does not depend on
/// `threads`.
pub fn histogram<A: Source<Elem = u8>>(a: &A, threads: Threads) -> [u64; 256] {
    let (rows, cols) = a.extent().rows_cols();
    let work = schedule_bands(&[(0..rows, 0..cols)], threads);
    let add = |mut x: Box<[u64; 256]>, y: Box<[u64; 256]>| {
        x.iter_mut().zip(y.iter()).for_each(|(p, q)| *p += q);
        x
    };
    let table = if work.len() > 1 {
        work.into_par_iter()
            .with_max_len(1)
            .map(|(r, _)| count_band(a, r, cols))
            .reduce(|| Box::new([0u64; 256]), add)
    } else {
        work.into_iter()
            .map(|(r, _)| count_band(a, r, cols))
            .fold(Box::new([0u64; 256]), add)
    };
    *table
}

/// The look-up table of `cv2.equalizeHist` for a histogram: levels below the first used
/// one map to 0; from there `lut[i] = round(cumsum(hist[first+1..=i]) * 255 / (n - hist[first]))`
/// computed in `f32`; an image of one level maps to itself.
pub fn equalize_lut(hist: &[u64; 256]) -> [u8; 256] {
    let total: u64 = hist.iter().sum();
    let mut lut = [0u8; 256];
    let Some(first) = hist.iter().position(|&c| c != 0) else {
        return lut;
    };
    if hist[first] == total {
        return [first as u8; 256];
    }
    let scale = 255.0f32 / (total - hist[first]) as f32;
    let mut sum = 0u64;
    for i in first + 1..256 {
        sum += hist[i];
        lut[i] = (sum as f32 * scale).round_ties_even().clamp(0.0, 255.0) as u8;
    }
    lut
}

/// Histogram equalisation of a grey source (`cv2.equalizeHist`).
pub fn equalize_hist<A: Source<Elem = u8>>(a: &A, threads: Threads) -> Array<u8, A::Shape> {
    let lut = equalize_lut(&histogram(a, threads));
    compute_with(&a.map(|v| lut[v as usize]), Plain, threads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explicit::View;
    use crate::shape::Dim2;

    #[test]
    fn histogram_counts_like_a_loop() {
        let data: Vec<u8> = (0..400 * 300u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
            .collect();
        let a = View::new(Dim2(400, 300), &data);
        let mut want = [0u64; 256];
        data.iter().for_each(|&v| want[v as usize] += 1);
        assert_eq!(histogram(&a, Threads::Seq), want);
        assert_eq!(histogram(&a, Threads::Fixed(3)), want);
        // A delayed source goes through the row-filling path; other ranks flatten.
        assert_eq!(histogram(&a.map(|v| v), Threads::Fixed(2)), want);
        let line = View::new(crate::shape::Dim1(data.len()), &data);
        assert_eq!(histogram(&line, Threads::Fixed(2)), want);
        let cube = View::new(crate::shape::Dim3(3, 400, 100), &data);
        assert_eq!(histogram(&cube, Threads::Seq), want);
        let empty = View::new(Dim2(0, 5), &data[..0]);
        assert_eq!(histogram(&empty, Threads::Fixed(2)), [0u64; 256]);
    }

    #[test]
    fn equalisation_hand_worked() {
        // Levels 10 x2, 20 x1, 30 x1: first = 10, n - h[first] = 2, scale 127.5;
        // lut[20] = round(127.5) = 128 (ties to even), lut[30] = 255.
        let data = [10u8, 10, 20, 30];
        let a = View::new(Dim2(2, 2), &data);
        assert_eq!(
            equalize_hist(&a, Threads::Seq).as_slice(),
            &[0, 0, 128, 255]
        );
        let flat = [7u8; 4];
        let f = View::new(Dim2(2, 2), &flat);
        assert_eq!(equalize_hist(&f, Threads::Seq).as_slice(), &[7; 4]);
    }

    use crate::image::simd_test_support::{random_bytes, WIDTHS};

    /// The counts of `data`, by a plain loop.
    fn naive(data: &[u8]) -> [u64; 256] {
        let mut want = [0u64; 256];
        data.iter().for_each(|&v| want[v as usize] += 1);
        want
    }

    #[test]
    fn both_ways_of_counting_agree_with_a_loop_on_every_length() {
        let data = random_bytes(300, 7);
        for len in 0..40 {
            for start in 0..3 {
                let s = &data[start..start + len];
                for pixels in [0, PAIR_MIN_PIXELS] {
                    let mut t = Tables::for_pixels(pixels);
                    assert_eq!(matches!(t, Tables::Pairs(..)), pixels > 0);
                    // counted twice with a flush between: the flush clears the tables
                    let mut total = [0u64; 256];
                    t.count(s);
                    t.flush(&mut total);
                    t.count(s);
                    t.count(&data[..1]);
                    t.flush(&mut total);
                    let mut want = naive(s).map(|c| 2 * c);
                    want[data[0] as usize] += 1;
                    assert_eq!(total, want, "{len} bytes from {start}, {pixels} pixels");
                }
            }
        }
    }

    #[test]
    fn large_bands_count_pairs_like_a_loop() {
        // Two bands of more than PAIR_MIN_PIXELS each, an odd width (each row leaves an
        // odd pixel), random levels and a run of one level (one pair entry, many counts).
        let (rows, cols) = (1030, 521);
        assert!(rows / 2 * cols >= PAIR_MIN_PIXELS);
        let mut data = random_bytes(rows * cols, 11);
        data[..40_000].fill(200);
        let a = View::new(Dim2(rows, cols), &data);
        let want = naive(&data);
        assert_eq!(histogram(&a, Threads::Seq), want);
        let two = crate::with_parallel_threshold(0, || {
            let h = histogram(&a, Threads::Fixed(2));
            assert_eq!(crate::load::last_band_count(), 2);
            h
        });
        assert_eq!(two, want);
        // a delayed source fills a buffer per row, then counts it the same way
        assert_eq!(histogram(&a.map(|v| v), Threads::Fixed(2)), want);
        let constant = vec![9u8; rows * cols];
        let c = View::new(Dim2(rows, cols), &constant);
        let mut want = [0u64; 256];
        want[9] = (rows * cols) as u64;
        assert_eq!(histogram(&c, Threads::Seq), want);
    }

    #[test]
    fn every_simd_level_counts_like_a_loop() {
        for (k, &cols) in WIDTHS.iter().enumerate() {
            let rows = 5;
            let data = random_bytes(rows * cols, 100 + k as u64);
            let mut want = [0u64; 256];
            for &v in &data {
                want[v as usize] += 1;
            }
            let a = View::new(Dim2(rows, cols), &data);
            for got in cpu_features::at_every_level(|_| {
                crate::with_parallel_threshold(0, || histogram(&a, Threads::Fixed(2)))
            }) {
                assert_eq!(got, want, "{cols} columns");
            }
        }
    }
}
