//! Slice kernels shared by vectors and matrix rows, and the sequential/parallel switch.
//!
//! Every element-wise kernel works on a contiguous slice; a matrix applies it row by row,
//! never touching the stride padding. From [`parallel_threshold`](crate::parallel_threshold)
//! elements on (cpu-features' light-work threshold) the work is split
//! over rayon in fixed-size chunks (element-wise results do not depend on the split), and
//! sums add fixed-size block partials in order, so both paths give identical answers.

use cpu_features::go_parallel;
use rayon::prelude::*;

use crate::Real;

/// Chunk length of parallel element-wise work and of block partial sums.
pub(crate) const CHUNK: usize = 1 << 13;

/// Applies `f` to `x`, in parallel chunks when `x` is long.
pub(crate) fn map_inplace<R: Real>(x: &mut [R], f: impl Fn(&mut [R]) + Sync + Send) {
    if go_parallel(x.len()) {
        x.par_chunks_mut(CHUNK).for_each(f);
    } else {
        f(x);
    }
}

/// Applies `f` to matching chunks of `x` and `y` (same length), in parallel when long.
pub(crate) fn zip_inplace<R: Real, S: Copy + Sync>(
    x: &mut [R],
    y: &[S],
    f: impl Fn(&mut [R], &[S]) + Sync + Send,
) {
    debug_assert_eq!(x.len(), y.len());
    if go_parallel(x.len()) {
        x.par_chunks_mut(CHUNK)
            .zip(y.par_chunks(CHUNK))
            .for_each(|(a, b)| f(a, b));
    } else {
        f(x, y);
    }
}

/// Sum of `f` over fixed-size blocks of `x`, the partials added in order (in `f64`).
pub(crate) fn block_sum<R: Real>(x: &[R], f: impl Fn(&[R]) -> f64 + Sync + Send) -> f64 {
    if go_parallel(x.len()) {
        let partials: Vec<f64> = x.par_chunks(CHUNK).map(f).collect();
        partials.into_iter().sum()
    } else {
        x.chunks(CHUNK).map(f).sum()
    }
}

/// Plain sum in `f64`.
pub(crate) fn sum_f64<R: Real>(x: &[R]) -> f64 {
    x.iter().map(|&v| v.to_f64()).sum()
}

/// Maximum; `-inf` for an empty slice (Kaldi's `Max` of an empty vector).
pub(crate) fn max<R: Real>(x: &[R]) -> R {
    x.iter()
        .fold(R::NEG_INFINITY, |m, &v| if v > m { v } else { m })
}

/// Minimum; `+inf` for an empty slice.
pub(crate) fn min<R: Real>(x: &[R]) -> R {
    x.iter()
        .fold(R::INFINITY, |m, &v| if v < m { v } else { m })
}

/// Maximum with 16 independent lanes (vectorises); `-inf` for an empty slice.
pub(crate) fn lane_max<R: Real>(x: &[R]) -> R {
    let mut acc = [R::NEG_INFINITY; 16];
    let chunks = x.chunks_exact(16);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = if v > *a { v } else { *a };
        }
    }
    let m = max(rest);
    acc.iter().fold(m, |m, &v| if v > m { v } else { m })
}

/// Sum in `f64` with 8 independent lanes (vectorises), lanes added in order at the end.
pub(crate) fn lane_sum_f64<R: Real>(x: &[R]) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += v.to_f64();
        }
    }
    acc.iter().sum::<f64>() + sum_f64(rest)
}

/// `x = e^(x - shift)`, returning the sum of the results (in `f64`).
pub(crate) fn exp_shifted_sum<R: Real>(x: &mut [R], shift: R) -> f64 {
    let mut total = 0.0;
    for chunk in x.chunks_mut(1024) {
        for v in chunk.iter_mut() {
            *v -= shift;
        }
        R::exp_slice(chunk);
        total += lane_sum_f64(chunk);
    }
    total
}

/// Softmax of one slice in place; returns the log normaliser `max + ln(sum)`.
pub(crate) fn softmax<R: Real>(x: &mut [R]) -> R {
    let m = lane_max(x);
    let sum = exp_shifted_sum(x, m);
    let inv = R::from_f64(1.0 / sum);
    for v in x.iter_mut() {
        *v *= inv;
    }
    m + R::from_f64(sum.ln())
}

/// Log-softmax of one slice in place; returns the log normaliser.
pub(crate) fn log_softmax<R: Real>(x: &mut [R]) -> R {
    let m = max(x);
    let sum: f64 = x.iter().map(|&v| (v - m).to_f64().exp()).sum();
    let log_norm = m + R::from_f64(sum.ln());
    for v in x.iter_mut() {
        *v -= log_norm;
    }
    log_norm
}

/// Sigmoid `1 / (1 + e^-x)` written to `y`.
pub(crate) fn sigmoid<R: Real>(y: &mut [R], x: &[R]) {
    for (o, &v) in y.iter_mut().zip(x) {
        // Kaldi's form: stable for both signs.
        *o = if v > R::ZERO {
            R::ONE / (R::ONE + (-v).exp())
        } else {
            let e = v.exp();
            e / (e + R::ONE)
        };
    }
}

/// `tanh(x)` written to `y`.
pub(crate) fn tanh<R: Real>(y: &mut [R], x: &[R]) {
    for (o, &v) in y.iter_mut().zip(x) {
        *o = v.tanh();
    }
}

/// Soft hinge `ln(1 + e^x)` written to `y` (Kaldi: `x` itself above 10).
pub(crate) fn soft_hinge<R: Real>(y: &mut [R], x: &[R]) {
    let ten = R::from_f64(10.0);
    for (o, &v) in y.iter_mut().zip(x) {
        *o = if v > ten { v } else { v.exp().ln_1p() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_kernels_match_plain_ones() {
        for n in [0usize, 1, 7, 8, 15, 16, 17, 100, 1000] {
            let x: Vec<f64> = (0..n).map(|i| ((i * 37) % 101) as f64 - 50.5).collect();
            assert_eq!(lane_max(&x), max(&x), "n = {n}");
            assert!((lane_sum_f64(&x) - sum_f64(&x)).abs() <= 1e-9, "n = {n}");
        }
    }
}
