//! Benchmarks of ragged-fsa's algebra on the LG workload of Kaldi's `mkgraph.sh`: a seeded
//! lexicon L (20,000 words of 2-10 phones, disambiguation symbols) and bigram grammar G
//! (20,000 words, about 310,000 arcs) from `benches::graphs` (1,000 words in a quick run),
//! read from OpenFst text. Workloads, on 1 and 2 threads (each op works on one graph;
//! `remove_epsilon`, `compose`'s wide frontiers, `minimize`'s hashing by ranges of states and
//! the connection searches give the second thread work; `determinize` does not):
//! - `compose_lg`: `L.compose(&G, true)`;
//! - `determinize_lg`: `determinize` of `L o G` (no weight pushing);
//! - `rmeps_lg`: `remove_epsilon` of the determinized `L o G` as an acceptor of its input
//!   labels, with the disambiguation symbols turned into epsilons (OpenFst removes only
//!   arcs whose input and output are both epsilon, so all sides work on the acceptor);
//! - `minimize_lg`: `minimize` of the determinized `L o G`;
//! - `pipeline_lg`: compose, determinize, minimize.
//!
//! The peers (`benches/peers/ragged-fsa-algebra.py`: kaldifst's `compose`,
//! `determinize_star`, `rmepsilon`, `minimize_encoded`; `benches/peers/ragged-fsa-algebra_k2.py`:
//! k2's `compose`, `determinize`, `remove_epsilon`) time the same graphs.

// criterion_group! generates an undocumented function
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use ragged_fsa::{Arc, Fsa, WeightPushing};

/// Seed, phone count and word count shared with the peers.
const SEED: u64 = 2026;
const NUM_PHONES: usize = 40;

fn num_words() -> usize {
    benches::size(20_000, 20)
}

fn inputs() -> (Fsa, Fsa) {
    let words = num_words();
    let l_text = benches::graphs::lexicon_text(words, NUM_PHONES, SEED);
    let g_text = benches::graphs::grammar_text(words, SEED);
    let l = Fsa::from_openfst(&l_text, false).expect("the generator writes valid L");
    let g = Fsa::from_openfst(&g_text, true).expect("the generator writes valid G");
    (l, g)
}

fn pipeline(l: &Fsa, g: &Fsa) -> Fsa {
    let (lg, _, _) = l.compose(g, true).expect("L has aux labels");
    let (det, _) = lg
        .determinize(WeightPushing::None)
        .expect("L o G with disambiguation symbols is determinizable");
    det.minimize().expect("deterministic").0
}

/// The determinized graph's input side, with the phone disambiguation symbols turned into
/// epsilons.
fn without_disambig(det: &Fsa) -> Fsa {
    let arcs: Vec<Arc> = det
        .arcs()
        .values()
        .iter()
        .map(|a| {
            let label = if a.label as usize > NUM_PHONES {
                0
            } else {
                a.label
            };
            Arc::new(a.src_state, a.dest_state, label, a.score)
        })
        .collect();
    Fsa::from_arcs(arcs, det.num_states()).expect("same structure")
}

fn bench(c: &mut Criterion) {
    let (l, g) = inputs();
    let (lg, _, _) = l.compose(&g, true).expect("L has aux labels");
    let (det, _) = lg.determinize(WeightPushing::None).expect("determinizable");
    let plain = without_disambig(&det);
    let mut group = c.benchmark_group("ragged-fsa");
    group.sample_size(10);
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let name = |w: &str| format!("{w}_t{threads}");
        group.bench_function(name("compose_lg"), |b| {
            b.iter(|| pool.install(|| l.compose(&g, true).expect("compose")))
        });
        group.bench_function(name("determinize_lg"), |b| {
            b.iter(|| pool.install(|| lg.determinize(WeightPushing::None).expect("determinize")))
        });
        group.bench_function(name("rmeps_lg"), |b| {
            b.iter(|| pool.install(|| plain.remove_epsilon().expect("no positive cycles")))
        });
        group.bench_function(name("minimize_lg"), |b| {
            b.iter(|| pool.install(|| det.minimize().expect("deterministic")))
        });
        group.bench_function(name("pipeline_lg"), |b| {
            b.iter(|| pool.install(|| pipeline(&l, &g)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
