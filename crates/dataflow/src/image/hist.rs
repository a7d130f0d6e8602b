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

/// Counts of rows `rows` (of the flattened extent, `cols` wide) of `a`.
fn count_band<A: Source<Elem = u8>>(a: &A, rows: Range<usize>, cols: usize) -> Box<[u64; 256]> {
    // u32 tables are flushed into the u64 total before any could overflow.
    const PIECE: usize = 1 << 30;
    let extent = a.extent();
    let mut total = Box::new([0u64; 256]);
    let mut t = Box::new([[0u32; 256]; 4]);
    let mut pending = 0usize;
    let mut buf = Vec::new();
    for row in rows {
        let mut c = 0;
        while c < cols {
            let n = PIECE.min(cols - c);
            if pending + n > PIECE {
                flush(&mut t, &mut total);
                pending = 0;
            }
            // SAFETY: the row and columns lie inside the flattened extent; `buf` holds n.
            match unsafe { a.span_slice(cols, row, c..c + n) } {
                Some(s) => count4(s, &mut t),
                None => {
                    buf.resize(n, 0u8);
                    // SAFETY: as above; `buf` was just resized to hold the n elements.
                    unsafe { a.fill_span(extent, cols, row, c..c + n, buf.as_mut_ptr()) };
                    count4(&buf, &mut t);
                }
            }
            pending += n;
            c += n;
        }
    }
    flush(&mut t, &mut total);
    total
}

/// Adds the four tables into `total` and clears them.
fn flush(t: &mut [[u32; 256]; 4], total: &mut [u64; 256]) {
    for (k, sum) in total.iter_mut().enumerate() {
        *sum += t.iter().map(|tab| u64::from(tab[k])).sum::<u64>();
    }
    *t = [[0u32; 256]; 4];
}

/// Counts of each grey level (`cv2.calcHist([img], [0], None, [256], [0, 256])`): one
/// table per row band (four interleaved `u32` tables while counting), joined by adding, as
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
        let a = View::new(Dim2(400, 300), &data).unwrap();
        let mut want = [0u64; 256];
        data.iter().for_each(|&v| want[v as usize] += 1);
        assert_eq!(histogram(&a, Threads::Seq), want);
        assert_eq!(histogram(&a, Threads::Fixed(3)), want);
        // A delayed source goes through the row-filling path; other ranks flatten.
        assert_eq!(histogram(&a.map(|v| v), Threads::Fixed(2)), want);
        let line = View::new(crate::shape::Dim1(data.len()), &data).unwrap();
        assert_eq!(histogram(&line, Threads::Fixed(2)), want);
        let cube = View::new(crate::shape::Dim3(3, 400, 100), &data).unwrap();
        assert_eq!(histogram(&cube, Threads::Seq), want);
        let empty = View::new(Dim2(0, 5), &data[..0]).unwrap();
        assert_eq!(histogram(&empty, Threads::Fixed(2)), [0u64; 256]);
    }

    #[test]
    fn equalisation_hand_worked() {
        // Levels 10 x2, 20 x1, 30 x1: first = 10, n - h[first] = 2, scale 127.5;
        // lut[20] = round(127.5) = 128 (ties to even), lut[30] = 255.
        let data = [10u8, 10, 20, 30];
        let a = View::new(Dim2(2, 2), &data).unwrap();
        assert_eq!(
            equalize_hist(&a, Threads::Seq).as_slice(),
            &[0, 0, 128, 255]
        );
        let flat = [7u8; 4];
        let f = View::new(Dim2(2, 2), &flat).unwrap();
        assert_eq!(equalize_hist(&f, Threads::Seq).as_slice(), &[7; 4]);
    }

    use crate::image::simd_test_support::{random_bytes, WIDTHS};

    #[test]
    fn every_simd_level_counts_like_a_loop() {
        for (k, &cols) in WIDTHS.iter().enumerate() {
            let rows = 5;
            let data = random_bytes(rows * cols, 100 + k as u64);
            let mut want = [0u64; 256];
            for &v in &data {
                want[v as usize] += 1;
            }
            let a = View::new(Dim2(rows, cols), &data).unwrap();
            for got in super::super::simd::testing::at_every_level(|_| {
                crate::load::with_par_threshold(0, || histogram(&a, Threads::Fixed(2)))
            }) {
                assert_eq!(got, want, "{cols} columns");
            }
        }
    }
}
