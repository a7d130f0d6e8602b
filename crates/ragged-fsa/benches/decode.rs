//! Decoding benchmark: `intersect_dense_pruned` (search beam 20, output beam 8, 30 to
//! 10,000 active states) then `one_best`, of the N = 16, T = 500 batch of the CTC bench
//! (`benches::ctc::ctc_input`, seed 14, log-softmaxed) with C = 41 symbols, against an HLG
//! compiled as icefall's `compile_hlg.py` does from the seeded lexicon and bigram of the
//! algebra bench (5,000 words, 40 phones; 500 words in a quick run; see
//! `tests/common/hlg.rs`). Only the decoding is timed, on 1 and 2 threads.
//!
//! The graph is written once as OpenFst text with a bracketed list of word ids per arc to
//! `<target>/ragged-fsa-bench/hlg_<words>.txt`, with our best word sequences beside it
//! (`best_<words>.txt`, one line per utterance), so the peers decode the very same graph:
//! `benches/peers/ragged-fsa-decode_k2.py` (k2's `intersect_dense_pruned` +
//! `shortest_path`) and `benches/peers/ragged-fsa-decode.py` (Kaldi's `FasterDecoder`).

// criterion_group! generates an undocumented function
#![allow(missing_docs)]

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};
use ndarray::ArrayView3;
use ragged_fsa::{create_fsa_vec, intersect_dense_pruned, one_best, DenseFsaVec};

#[path = "../tests/common/hlg.rs"]
mod hlg;

fn bench_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("ragged-fsa-bench")
}

fn bench(c: &mut Criterion) {
    let words = benches::size(5000, 10);
    let graph = hlg::compile_hlg(words);
    let graphs = create_fsa_vec(std::slice::from_ref(&graph));
    let (n, t, symbols) = (16, benches::size(500, 5), hlg::NUM_PHONES + 1);
    let input = benches::ctc::ctc_input(n, t, symbols, 50.min(t / 5), 120.min(t / 4), 14);
    let log_probs = input.log_probs();
    let view = ArrayView3::from_shape((n, t, symbols), &log_probs).expect("sizes match");
    let segments: Vec<[i32; 3]> = input
        .lengths
        .iter()
        .enumerate()
        .map(|(i, &len)| [i as i32, 0, len as i32])
        .collect();
    let dense = DenseFsaVec::new(view, &segments);
    let decode = || {
        let (lattice, _, _) =
            intersect_dense_pruned(&graphs, &dense, 20.0, 8.0, 30, 10_000).expect("decodable");
        one_best(&lattice).expect("lattices are acyclic")
    };

    // the graph and our answers, for the peers
    let dir = bench_dir();
    std::fs::create_dir_all(&dir).expect("bench dir");
    let text = hlg::hlg_text(&graph);
    std::fs::write(dir.join(format!("hlg_{words}.txt")), text).expect("write HLG");
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a thread pool");
    let start = std::time::Instant::now();
    let first = one_thread.install(decode);
    eprintln!(
        "decode: one untimed-by-criterion run on 1 thread took {:.2} s",
        start.elapsed().as_secs_f64()
    );
    let best: String = first
        .iter()
        .map(|p| {
            let words: Vec<String> = p.aux_labels.iter().map(|w| w.to_string()).collect();
            format!("{}\n", words.join(" "))
        })
        .collect();
    std::fs::write(dir.join(format!("best_{words}.txt")), best).expect("write best paths");
    eprintln!(
        "decode: HLG of {words} words has {} states and {} arcs",
        graph.num_states(),
        graph.num_arcs()
    );

    let mut group = c.benchmark_group("ragged-fsa");
    group.sample_size(10);
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        group.bench_function(format!("decode_hlg_t{threads}"), |b| {
            b.iter(|| pool.install(decode))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
