//! Benchmarks of ragged-fsa's training and decoding path: the CTC loss with its gradient
//! for N = 16 sequences of up to T = 500 frames over C = 500 symbols, targets of 50-120
//! tokens (`benches::ctc::ctc_input`, seed 14), on 1 and 2 threads. The timed call starts
//! from the log-probabilities and the token lists: CTC graphs, `DenseFsaVec`, loss and
//! gradient. The peers (`benches/peers/ragged-fsa-ctc_k2.py`: torch 1.12 `ctc_loss` and
//! `k2.ctc_loss`, forward and backward) run the same input. Quick runs shrink T and C.

// criterion_group! generates an undocumented function
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use ndarray::ArrayView3;
use ragged_fsa::{ctc_loss, intersect_dense_pruned, DenseFsaVec, FsaVec};

fn bench(c: &mut Criterion) {
    let (n, t, symbols) = (16, benches::size(500, 5), benches::size(500, 5));
    let input = benches::ctc::ctc_input(n, t, symbols, 50.min(t / 5), 120.min(t / 4), 14);
    let log_probs = input.log_probs();
    let view = ArrayView3::from_shape((n, t, symbols), &log_probs).expect("sizes match");
    let segments: Vec<[i32; 3]> = input
        .lengths
        .iter()
        .enumerate()
        .map(|(i, &len)| [i as i32, 0, len as i32])
        .collect();
    let mut group = c.benchmark_group("ragged-fsa");
    group.sample_size(10);
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let run = |beam: f32| {
            let graphs = FsaVec::ctc_graph(&input.targets, false).expect("valid targets");
            let dense = DenseFsaVec::new(view, &segments);
            ctc_loss(&graphs, &dense, beam).expect("matching graphs")
        };
        group.bench_function(format!("ctc_loss_t{threads}"), |b| {
            b.iter(|| pool.install(|| run(f32::INFINITY)))
        });
        group.bench_function(format!("ctc_loss_beam10_t{threads}"), |b| {
            b.iter(|| pool.install(|| run(10.0)))
        });
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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
