//! A small probe of the decoding bench (`benches/decode.rs`): the same seeded HLG and network
//! outputs, but with a chosen word count, number of utterances and threads, so a profile of
//! the search can be taken in seconds. Prints the time of each decode on stderr and a
//! fingerprint of the lattice (its arcs, scores and arc maps) and best paths on stdout, so
//! two builds can be checked to give the very same results.
//!
//! `cargo run --profile bench -p ragged-fsa --example ragged-fsa-decode-probe -- WORDS
//! UTTERANCES THREADS REPEATS` (defaults 5000 2 1 1).

use ndarray::ArrayView3;
use ragged_fsa::{create_fsa_vec, intersect_dense_pruned, one_best, Attr, DenseFsaVec};

#[path = "../tests/common/hlg.rs"]
mod hlg;

/// FNV-1a over 32-bit words.
fn fnv(h: &mut u64, x: u32) {
    for b in x.to_le_bytes() {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let arg = |i: usize, default: usize| args.get(i).copied().unwrap_or(default);
    let (words, n, threads, repeats) = (arg(0, 5000), arg(1, 2), arg(2, 1), arg(3, 1));
    let graph = hlg::compile_hlg(words);
    let graphs = create_fsa_vec(std::slice::from_ref(&graph));
    let (t, symbols) = (500, hlg::NUM_PHONES + 1);
    // the bench's batch of 16; the first `n` utterances of it
    let input = benches::ctc::ctc_input(16, t, symbols, 50, 120, 14);
    let log_probs = input.log_probs();
    let view = ArrayView3::from_shape((16, t, symbols), &log_probs).expect("sizes match");
    let segments: Vec<[i32; 3]> = input
        .lengths
        .iter()
        .take(n)
        .enumerate()
        .map(|(i, &len)| [i as i32, 0, len as i32])
        .collect();
    let dense = DenseFsaVec::new(view, &segments);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    for _ in 0..repeats {
        let (start, cpu) = (std::time::Instant::now(), benches::process_cpu_seconds());
        let (lattice, a_map, b_map) = pool.install(|| {
            intersect_dense_pruned(&graphs, &dense, 20.0, 8.0, 30, 10_000).expect("decodable")
        });
        let search_cpu = benches::process_cpu_seconds() - cpu;
        let best = pool.install(|| one_best(&lattice).expect("acyclic"));
        eprintln!(
            "decode: {n} utterances, {words} words, {threads} threads: {:.3} s, CPU {:.3} s \
             ({search_cpu:.3} s before one_best)",
            start.elapsed().as_secs_f64(),
            benches::process_cpu_seconds() - cpu
        );
        let mut h = 0xCBF2_9CE4_8422_2325u64;
        for a in lattice.arcs().values() {
            fnv(&mut h, a.src_state as u32);
            fnv(&mut h, a.dest_state as u32);
            fnv(&mut h, a.label as u32);
            fnv(&mut h, a.score.to_bits());
        }
        for &x in a_map.iter().chain(&b_map) {
            fnv(&mut h, x as u32);
        }
        for axis in 1..lattice.arcs().num_axes() {
            for &x in lattice.arcs().row_splits(axis) {
                fnv(&mut h, x as u32);
            }
        }
        if let Some(Attr::Ragged(r)) = lattice.aux_labels() {
            for &x in r.values() {
                fnv(&mut h, x as u32);
            }
        }
        println!(
            "lattice: {} arcs, fingerprint {h:016x}",
            lattice.arcs().values().len()
        );
        for p in &best {
            println!("{:?} {:?} {}", p.aux_labels, p.labels.len(), p.score);
        }
    }
}
