//! Alternates the AVX-512 and AVX2 caps of the vector kernels call by call (A B A B ...)
//! on the criterion benches' inputs and prints, per workload, the median, minimum and
//! maximum of the per-round ratios AVX-512 time / AVX2 time, and the ratio of the minimum
//! times, both in CPU time of the one thread that runs the (sequential) kernels.
//! Alternating within one process lands a burst of noise from other work on both
//! sides alike, which sequential criterion runs do not.
//!
//! Run: `cargo run --release -p ragged-core --example ragged-core-simd-ab [rounds] [filter]` (15
//! rounds by default; only the workloads whose name contains `filter`).
//! No kernel of ragged-core has an AVX-512 copy (none gained 10% over AVX2, see the guide),
//! so both sides run the AVX2 copy and every ratio is about 1; to measure a copy, drop
//! `max Avx2` from the kernel's `at_level!` and run this. On a processor without AVX-512
//! the same holds.

use std::hint::black_box;
#[cfg(not(target_os = "linux"))]
use std::time::Instant;

use ragged_core::{
    set_simd_cap, with_parallel_threshold, Ragged, RaggedShape, RowPartition, SimdLevel,
};

use benches::thread_cpu_seconds;

/// A small deterministic generator (SplitMix64, as the benches use).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn lengths(seed: u64, rows: usize) -> Vec<i32> {
    let mut rng = Rng(seed);
    (0..rows).map(|_| rng.below(21) as i32).collect()
}

/// Seconds of one call of `f` at `level`.
fn time_at(level: SimdLevel, f: &mut dyn FnMut()) -> f64 {
    set_simd_cap(level);
    let t = thread_cpu_seconds();
    f();
    thread_cpu_seconds() - t
}

fn report(name: &str, rounds: usize, f: &mut dyn FnMut()) {
    let filter = std::env::args().nth(2).unwrap_or_default();
    if !name.contains(filter.as_str()) {
        return;
    }
    // one untimed call at each level first
    time_at(SimdLevel::Avx512, f);
    time_at(SimdLevel::Avx2, f);
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // alternate which side goes first, so neither always runs on a warm cache
        let (ta, tb) = if round % 2 == 0 {
            let ta = time_at(SimdLevel::Avx512, f);
            (ta, time_at(SimdLevel::Avx2, f))
        } else {
            let tb = time_at(SimdLevel::Avx2, f);
            (time_at(SimdLevel::Avx512, f), tb)
        };
        a.push(ta);
        b.push(tb);
        ratios.push(ta / tb);
    }
    set_simd_cap(SimdLevel::Avx512);
    ratios.sort_by(f64::total_cmp);
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "{name:<18} avx512/avx2 median {:.3} (min {:.3}, max {:.3}); min times {:.2} / {:.2} ms = {:.3}",
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1],
        min(&a) * 1e3,
        min(&b) * 1e3,
        min(&a) / min(&b),
    );
}

fn main() {
    // Sequential kernels on this thread, so its CPU time is the kernels' time.
    with_parallel_threshold(usize::MAX, run);
}

fn run() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    println!(
        "detected level {:?}, sequential kernels, thread CPU time, {rounds} rounds",
        ragged_core::detected_simd(),
    );

    let partition = RowPartition::from_row_lengths(&lengths(1, 5_000_000)).unwrap();
    let mut ids = vec![0i32; partition.nvals()];
    report("row_ids", rounds, &mut || {
        partition.write_row_ids(black_box(&mut ids))
    });
    drop(ids);

    let p = RowPartition::from_row_lengths(&lengths(2, 1_000_000)).unwrap();
    let shape = RaggedShape::from_layers(vec![p]).unwrap();
    let mut rng = Rng(3);
    let values: Vec<f32> = (0..shape.num_elements())
        .map(|_| (rng.next() >> 11) as f32 / (1u64 << 53) as f32)
        .collect();
    let a = Ragged::new(shape.clone(), values);
    report("sum_per_sublist", rounds, &mut || {
        black_box(a.sum_per_sublist(0.0));
    });
    report("max_per_sublist", rounds, &mut || {
        black_box(a.max_per_sublist(f32::NEG_INFINITY));
    });
    let a64 = Ragged::new(
        shape.clone(),
        a.values().iter().map(|&x| x as f64).collect(),
    );
    report("min_per_sublist", rounds, &mut || {
        black_box(a.min_per_sublist(f32::INFINITY));
    });
    report("sum_per_sublist64", rounds, &mut || {
        black_box(a64.sum_per_sublist(0.0));
    });
    let ai = Ragged::new(shape.clone(), (0..a.num_elements() as i32).collect());
    report("sum_per_sublist_i32", rounds, &mut || {
        black_box(ai.sum_per_sublist(0));
    });
    report("min_per_sublist_i32", rounds, &mut || {
        black_box(ai.min_per_sublist(i32::MAX));
    });
    report("max_per_sublist_i32", rounds, &mut || {
        black_box(ai.max_per_sublist(i32::MIN));
    });
    let bits = Ragged::new(
        shape,
        (0..a.num_elements()).map(|_| rng.next() as u32).collect(),
    );
    report("and_per_sublist", rounds, &mut || {
        black_box(bits.and_per_sublist(!0));
    });
    drop((a, a64, ai, bits));

    let n_src = 10_000_000;
    let src: Vec<f32> = (0..n_src).map(|k| k as f32).collect();
    let p = RowPartition::from_row_lengths(&lengths(9, 1_000_000)).unwrap();
    let picks: Vec<i32> = (0..p.nvals())
        .map(|_| rng.below(n_src as u64) as i32)
        .collect();
    let idx = Ragged::new(RaggedShape::from_layers(vec![p]).unwrap(), picks);
    report("from_index", rounds, &mut || {
        black_box(Ragged::from_index(&src, &idx).unwrap());
    });
    // the same gather from a source that fits in the L2 cache
    let small: Vec<f32> = (0..65_536).map(|k| k as f32).collect();
    let idx_small = idx.map(|&i| i & 0xFFFF);
    report("from_index_l2", rounds, &mut || {
        black_box(Ragged::from_index(&small, &idx_small).unwrap());
    });
}
