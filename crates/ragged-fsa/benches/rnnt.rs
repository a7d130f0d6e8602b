//! Benchmarks of ragged-fsa's RNN-T losses on B = 16 sequences of T = 300 frames, S = 60
//! symbols, C = 500 classes (inputs from `SplitMix64`, the same in
//! `benches/peers/ragged-fsa-rnnt_k2.py`), on 1 and 2 threads, every call with gradients:
//! - `rnnt_pruned`: icefall's pruned recipe, `rnnt_loss_smoothed` (scales 0.1, 0.1,
//!   `return_grad`, gradients for `lm` and `am`) => `get_rnnt_prune_ranges` (s_range 5) =>
//!   `rnnt_loss_pruned` on given joiner logits `[B][T][5][C]` (gradient for them);
//! - `rnnt_loss_full`: `rnnt_loss` on the full joiner logits `[B][T][S + 1][C]` (585 MB)
//!   with their gradient (torchaudio's `rnnt_loss` is the peer).
//!
//! Quick runs shrink T and C.

// criterion_group! generates an undocumented function
#![allow(missing_docs)]

use benches::SplitMix64;
use criterion::{criterion_group, criterion_main, Criterion};
use ndarray::{Array2, Array3, Array4};
use ragged_fsa::{
    get_rnnt_prune_ranges, rnnt_loss, rnnt_loss_pruned, rnnt_loss_smoothed, Reduction,
    RnntLossConfig,
};

/// `n` uniform values in `[-scale, scale)` from `SplitMix64::new(seed)`.
fn uniform(seed: u64, n: usize, scale: f64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| ((rng.next_f64() * 2.0 - 1.0) * scale) as f32)
        .collect()
}

fn bench(c: &mut Criterion) {
    let (b, s, t, classes) = (16, 60, benches::size(300, 5), benches::size(500, 5));
    let s_range = 5;
    let lm = Array3::from_shape_vec((b, s + 1, classes), uniform(21, b * (s + 1) * classes, 2.0))
        .expect("sizes match");
    let am = Array3::from_shape_vec((b, t, classes), uniform(22, b * t * classes, 2.0))
        .expect("sizes match");
    let mut rng = SplitMix64::new(23);
    let symbols = Array2::from_shape_fn((b, s), |_| 1 + rng.below(classes as u64 - 1) as i64);
    let pruned_logits = Array4::from_shape_vec(
        (b, t, s_range, classes),
        uniform(24, b * t * s_range * classes, 2.0),
    )
    .expect("sizes match");
    let boundary = Array2::from_shape_fn((b, 4), |(_, j)| [0, 0, s as i64, t as i64][j]);
    let smoothed = RnntLossConfig {
        reduction: Reduction::Sum,
        return_grad: true,
        ..RnntLossConfig::default()
    };
    let pruned = RnntLossConfig {
        reduction: Reduction::Sum,
        ..RnntLossConfig::default()
    };
    let mut group = c.benchmark_group("ragged-fsa");
    group.sample_size(10);
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        group.bench_function(format!("rnnt_pruned_t{threads}"), |bencher| {
            bencher.iter(|| {
                pool.install(|| {
                    let simple = rnnt_loss_smoothed(
                        lm.view(),
                        am.view(),
                        symbols.view(),
                        0,
                        Some(boundary.view()),
                        &smoothed,
                    )
                    .expect("valid input");
                    let ranges = get_rnnt_prune_ranges(
                        simple.px_grad.as_ref().expect("asked for").view(),
                        simple.py_grad.as_ref().expect("asked for").view(),
                        boundary.view(),
                        s_range,
                    )
                    .expect("valid gradients");
                    let out = rnnt_loss_pruned(
                        pruned_logits.view(),
                        symbols.view(),
                        ranges.view(),
                        0,
                        Some(boundary.view()),
                        &pruned,
                    )
                    .expect("valid input");
                    (simple, out)
                })
            })
        });
    }
    drop(pruned_logits);
    let logits = Array4::from_shape_vec(
        (b, t, s + 1, classes),
        uniform(25, b * t * (s + 1) * classes, 2.0),
    )
    .expect("sizes match");
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        group.bench_function(format!("rnnt_loss_full_t{threads}"), |bencher| {
            bencher.iter(|| {
                pool.install(|| {
                    rnnt_loss(
                        logits.view(),
                        symbols.view(),
                        0,
                        Some(boundary.view()),
                        &pruned,
                    )
                    .expect("valid input")
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
