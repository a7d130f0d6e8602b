//! The seeded CTC workload shared by ragged-fsa's `dense` bench and its Python twin
//! (`benches/peers/ctc_inputs.py`): network logits, frame counts and token targets.
//!
//! Streams (SplitMix64): `seed` gives the logits, `4 * u - 2` for each uniform `u` in
//! `[0, 1)`, row-major `[N, T, C]`, as f32; `seed + 1` the frame count of sequence `i`,
//! `T - x % (T / 5 + 1)`; `seed + 2` the target length, `min + x % (max - min + 1)`, then its
//! tokens `1 + x % (C - 1)` (blank 0 never appears in a target).

use crate::SplitMix64;

/// One batch of CTC inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct CtcInput {
    /// Sequences `N`.
    pub n: usize,
    /// Frames `T` (the longest sequence).
    pub t: usize,
    /// Symbols `C`, blank 0 included.
    pub c: usize,
    /// Logits, row-major `[N, T, C]`.
    pub logits: Vec<f32>,
    /// The frames of each sequence.
    pub lengths: Vec<usize>,
    /// The tokens of each sequence.
    pub targets: Vec<Vec<i32>>,
}

impl CtcInput {
    /// Row-wise log-softmax of the logits (accumulated in f64), row-major `[N, T, C]`.
    pub fn log_probs(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.logits.len());
        for row in self.logits.chunks(self.c) {
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            let z = m + row.iter().map(|&x| (x as f64 - m).exp()).sum::<f64>().ln();
            out.extend(row.iter().map(|&x| (x as f64 - z) as f32));
        }
        out
    }
}

/// The batch for `(n, t, c)` with targets of `min_tokens..=max_tokens` tokens.
pub fn ctc_input(
    n: usize,
    t: usize,
    c: usize,
    min_tokens: usize,
    max_tokens: usize,
    seed: u64,
) -> CtcInput {
    assert!(c >= 2 && t >= 1 && max_tokens >= min_tokens);
    let mut values = SplitMix64::new(seed);
    let logits = (0..n * t * c)
        .map(|_| (4.0 * values.next_f64() - 2.0) as f32)
        .collect();
    let mut frames = SplitMix64::new(seed + 1);
    let lengths = (0..n)
        .map(|_| t - (frames.next_u64() % (t as u64 / 5 + 1)) as usize)
        .collect();
    let mut tokens = SplitMix64::new(seed + 2);
    let targets = (0..n)
        .map(|_| {
            let len =
                min_tokens + (tokens.next_u64() % (max_tokens - min_tokens + 1) as u64) as usize;
            (0..len)
                .map(|_| 1 + (tokens.next_u64() % (c as u64 - 1)) as i32)
                .collect()
        })
        .collect();
    CtcInput {
        n,
        t,
        c,
        logits,
        lengths,
        targets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_in_range_and_reproducible() {
        let a = ctc_input(3, 50, 7, 2, 9, 5);
        assert_eq!(a, ctc_input(3, 50, 7, 2, 9, 5));
        assert!(a.logits.iter().all(|x| (-2.0..2.0).contains(x)));
        assert!(a.lengths.iter().all(|&l| (40..=50).contains(&l)));
        for tgt in &a.targets {
            assert!((2..=9).contains(&tgt.len()));
            assert!(tgt.iter().all(|&x| (1..7).contains(&x)));
        }
        // what the Python twin (`benches/peers/ctc_inputs.py`) gives for this seed
        assert_eq!(
            a.logits[..4],
            [-0.45292783, 1.0092281, -1.0691633, -1.6026423]
        );
        assert_eq!(a.lengths, [49, 40, 45]);
        assert_eq!(a.targets[0], [1, 1, 4, 5, 4, 5, 1, 6, 6]);
        let lp = a.log_probs();
        let total: f64 = lp[..7].iter().map(|&x| (x as f64).exp()).sum();
        assert!((total - 1.0).abs() < 1e-6);
    }
}
