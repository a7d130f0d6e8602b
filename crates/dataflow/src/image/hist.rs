//! The 256-bin histogram (a parallel walk with per-thread tables joined, as Yarr's
//! `computeHist`) and histogram equalisation with `cv2.equalizeHist` semantics.

use crate::delayed::SourceExt;
use crate::explicit::Array;
use crate::load::{compute_with, Plain, Threads};
use crate::source::Source;
use crate::walk::walk_p;

/// Counts of each grey level (`cv2.calcHist([img], [0], None, [256], [0, 256])`).
pub fn histogram<A: Source<Elem = u8>>(a: &A, threads: Threads) -> [u64; 256] {
    // Per band: one table of u64 counts; joined by adding.
    let table = walk_p(
        a,
        threads,
        || Box::new([0u64; 256]),
        |t, v| t[v as usize] += 1,
        |mut x, y| {
            x.iter_mut().zip(y.iter()).for_each(|(p, q)| *p += q);
            x
        },
    );
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
}
