//! Benchmarks of ragged-fsa: the everyday algorithms over 1000 random FSAs (about 1,000
//! states and 5,000 arcs each), on 1 and 2 threads. The peers (`benches/peers/ragged-fsa.py`
//! with OpenFst through kaldifst, `benches/peers/ragged-fsa_k2.py` with k2) build the same
//! FSAs from the same generator.
//!
//! Input (per FSA `i`, `n` states, final state `n - 1`): four SplitMix64 streams seeded
//! `4 * (1000 + i) + {0, 1, 2, 3}`. Stream 0 gives each non-final state `s` its arc count
//! `k_s = x % 11`; for the `j`-th arc overall (in state order), stream 1 gives the destination
//! `s + 1 + x % min(n - 1 - s, 20)`, stream 2 the label `1 + x % 100` (`-1` when the
//! destination is the final state), stream 3 the score `-5 * ((x >> 11) / 2^53)` as f32.

// criterion_group! generates an undocumented function
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use ragged_fsa::{create_fsa_vec, Arc, Fsa, FsaVec, Semiring};

fn random_fsa(i: u64, n: usize) -> Fsa {
    let seed = 4 * (1000 + i);
    let mut counts = benches::SplitMix64::new(seed);
    let mut dests = benches::SplitMix64::new(seed + 1);
    let mut labels = benches::SplitMix64::new(seed + 2);
    let mut scores = benches::SplitMix64::new(seed + 3);
    let mut arcs = Vec::with_capacity(5 * n);
    for s in 0..n - 1 {
        let k = counts.next_u64() % 11;
        for _ in 0..k {
            let span = (n - 1 - s).min(20) as u64;
            let dest = s + 1 + (dests.next_u64() % span) as usize;
            let label = 1 + (labels.next_u64() % 100) as i32;
            let label = if dest == n - 1 { -1 } else { label };
            let score = (-5.0 * scores.next_f64()) as f32;
            arcs.push(Arc::new(s as i32, dest as i32, label, score));
        }
    }
    Fsa::from_arcs(arcs, n).expect("generated arcs are valid")
}

fn input() -> FsaVec {
    let num_fsas = benches::size(1000, 50);
    let fsas: Vec<Fsa> = (0..num_fsas as u64).map(|i| random_fsa(i, 1000)).collect();
    create_fsa_vec(&fsas)
}

fn bench(c: &mut Criterion) {
    let fsas = input();
    let mut group = c.benchmark_group("ragged-fsa");
    group.sample_size(10);
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let name = |w: &str| format!("{w}_t{threads}");
        group.bench_function(name("arc_sort"), |b| {
            b.iter(|| pool.install(|| fsas.arc_sort()))
        });
        group.bench_function(name("connect"), |b| {
            b.iter(|| pool.install(|| fsas.connect()))
        });
        group.bench_function(name("top_sort"), |b| {
            b.iter(|| pool.install(|| fsas.top_sort().expect("acyclic")))
        });
        group.bench_function(name("shortest_path"), |b| {
            b.iter(|| pool.install(|| fsas.shortest_path().expect("top-sorted")))
        });
        group.bench_function(name("get_tot_scores"), |b| {
            b.iter(|| {
                pool.install(|| {
                    fsas.get_tot_scores::<f64>(Semiring::Log)
                        .expect("top-sorted")
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
