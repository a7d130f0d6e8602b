//! Benchmarks of ragged-fsa's training and decoding path: the CTC loss with its gradient,
//! exact and at k2's `output_beam = 10`, on 1 and 2 threads, on three shapes
//! (`benches::ctc::ctc_input`): N = 16 sequences of up to T = 500 frames over C = 500
//! symbols, targets of 50-120 tokens, seed 14 (rows without a shape suffix); a small phone
//! model, N = 32, T = 200, C = 80, targets of 20-50 tokens, seed 15 (`_small`); long
//! utterances over a large vocabulary, N = 8, T = 1000, C = 2000, targets of 100-250 tokens,
//! seed 16 (`_long`). The timed call starts from the log-probabilities and the token lists:
//! CTC graphs, `DenseFsaVec` (borrowing the log-probs: `DenseFsaVecOf::borrowed`), loss and
//! gradient. The peers
//! (`benches/peers/ragged-fsa-dense_k2.py`: torch 1.12 `ctc_loss` on the exact rows,
//! `k2.ctc_loss` at `output_beam = 10` on the beam rows, forward and backward) run the same
//! inputs. Quick runs shrink T and C.

// criterion_group! generates an undocumented function
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use ndarray::ArrayView3;
use ragged_fsa::{ctc_loss, intersect_dense_pruned, DenseFsaVec, DenseFsaVecOf, FsaVec};

/// One CTC workload: row suffix, N, T, C, target lengths and seed (as the peer script's).
struct Shape {
    suffix: &'static str,
    n: usize,
    t: usize,
    c: usize,
    tokens: (usize, usize),
    seed: u64,
}

const SHAPES: [Shape; 3] = [
    Shape {
        suffix: "",
        n: 16,
        t: 500,
        c: 500,
        tokens: (50, 120),
        seed: 14,
    },
    Shape {
        suffix: "_small",
        n: 32,
        t: 200,
        c: 80,
        tokens: (20, 50),
        seed: 15,
    },
    Shape {
        suffix: "_long",
        n: 8,
        t: 1000,
        c: 2000,
        tokens: (100, 250),
        seed: 16,
    },
];

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("ragged-fsa");
    group.sample_size(10);
    for shape in &SHAPES {
        let (n, t, symbols) = (
            shape.n,
            benches::size(shape.t, 5),
            benches::size(shape.c, 5),
        );
        let (lo, hi) = shape.tokens;
        let input =
            benches::ctc::ctc_input(n, t, symbols, lo.min(t / 5), hi.min(t / 4), shape.seed);
        let log_probs = input.log_probs();
        let view = ArrayView3::from_shape((n, t, symbols), &log_probs).expect("sizes match");
        let segments: Vec<[i32; 3]> = input
            .lengths
            .iter()
            .enumerate()
            .map(|(i, &len)| [i as i32, 0, len as i32])
            .collect();
        let suffix = shape.suffix;
        for threads in [1usize, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            let run = |beam: f32| {
                let graphs = FsaVec::ctc_graph(&input.targets, false).expect("valid targets");
                let dense = DenseFsaVecOf::borrowed(view, &segments, 0).expect("valid segments");
                ctc_loss(&graphs, &dense, beam).expect("matching graphs")
            };
            group.bench_function(format!("ctc_loss{suffix}_t{threads}"), |b| {
                b.iter(|| pool.install(|| run(f32::INFINITY)))
            });
            group.bench_function(format!("ctc_loss_beam10{suffix}_t{threads}"), |b| {
                b.iter(|| pool.install(|| run(10.0)))
            });
            if !suffix.is_empty() {
                continue;
            }
            // decoding the same batch against its own CTC graphs (a stand-in for an HLG)
            let graphs = FsaVec::ctc_graph(&input.targets, false).expect("valid targets");
            let dense = DenseFsaVec::new(view, &segments);
            group.bench_function(format!("intersect_dense_pruned_t{threads}"), |b| {
                b.iter(|| {
                    pool.install(|| {
                        intersect_dense_pruned(&graphs, &dense, 20.0, 8.0, 30, 10_000)
                            .expect("matching graphs")
                    })
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
