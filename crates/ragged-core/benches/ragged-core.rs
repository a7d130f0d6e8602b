//! Criterion benches of ragged-core, joined with the Python peers (Awkward Array, k2) of
//! `benches/peers/ragged-core*.py` by workload name.
//!
//! Inputs (SplitMix64, identical in the peers; sizes shrink by `benches::size` in quick runs):
//! - `row_ids`: 5 M rows, lengths `below(21)` from seed 1 (about 50 M elements); row_splits ->
//!   row_ids into a preallocated buffer. `peer_memset__row_ids` fills a buffer of the same size.
//! - `sum_per_sublist` / `max_per_sublist`: 1 M rows, lengths `below(21)` from seed 2 (about
//!   10 M elements), f32 values `next_f64()` from seed 3.
//! - `index`: that array gathered by 1 M random rows `below(nrows)` from seed 4.
//! - `flatten`: `remove_axis(1)` of a 3-axis shape: 100 k rows of `below(21)` lists (seed 5),
//!   each of `below(21)` elements (seed 6).
//! - `from_row_lengths`: the 1 M row lengths of seed 2 -> row_splits.
//! - `and_per_sublist`: the shape of `sum_per_sublist` with u32 values `next()` from seed 7.
//! - `from_index`: 10 M f32 values (seed 8) gathered by a 2-axis index of 1 M rows of
//!   `below(21)` lengths (seed 9) and `below(10 M)` entries (seed 10).
//!
//! No workload is also timed capped at AVX2 (`peer_avx2__<workload>`, as dataflow's and
//! dense-matrix's are): ragged-core's kernels have no AVX-512 copy, so the capped run would
//! time the same code again.

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use ragged_core::{Ragged, RaggedShape, RowPartition};

fn lengths(seed: u64, rows: usize) -> Vec<i32> {
    let mut rng = benches::SplitMix64::new(seed);
    (0..rows).map(|_| rng.below(21) as i32).collect()
}

fn array_2axis() -> Ragged<f32> {
    let rows = benches::size(1_000_000, 100);
    let p = RowPartition::from_row_lengths(&lengths(2, rows)).unwrap();
    let shape = RaggedShape::from_layers(vec![p]).unwrap();
    let mut rng = benches::SplitMix64::new(3);
    let values = (0..shape.num_elements())
        .map(|_| rng.next_f64() as f32)
        .collect();
    Ragged::new(shape, values)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("ragged-core");

    let row_lengths = lengths(1, benches::size(5_000_000, 100));
    let partition = RowPartition::from_row_lengths(&row_lengths).unwrap();
    let mut ids = vec![0i32; partition.nvals()];
    g.bench_function("row_ids", |b| {
        b.iter(|| black_box(&partition).write_row_ids(&mut ids))
    });
    g.bench_function("peer_memset__row_ids", |b| {
        b.iter(|| black_box(&mut ids[..]).fill(black_box(7)))
    });

    let a = array_2axis();
    g.bench_function("sum_per_sublist", |b| {
        b.iter(|| {
            black_box(black_box(&a).sum_per_sublist(0.0));
        })
    });
    g.bench_function("max_per_sublist", |b| {
        b.iter(|| {
            black_box(black_box(&a).max_per_sublist(f32::NEG_INFINITY));
        })
    });
    let mut rng = benches::SplitMix64::new(7);
    let bits = Ragged::new(
        a.shape().clone(),
        (0..a.num_elements())
            .map(|_| rng.next_u64() as u32)
            .collect(),
    );
    g.bench_function("and_per_sublist", |b| {
        b.iter(|| {
            black_box(black_box(&bits).and_per_sublist(!0));
        })
    });
    drop(bits);

    let mut rng = benches::SplitMix64::new(4);
    let picks: Vec<i32> = (0..a.dim0())
        .map(|_| rng.below(a.dim0() as u64) as i32)
        .collect();
    g.bench_function("index", |b| {
        b.iter(|| black_box(&a).index_axis(0, &picks).unwrap())
    });

    let outer = RowPartition::from_row_lengths(&lengths(5, benches::size(100_000, 100))).unwrap();
    let inner = RowPartition::from_row_lengths(&lengths(6, outer.nvals())).unwrap();
    let shape3 = RaggedShape::from_layers(vec![outer, inner]).unwrap();
    g.bench_function("flatten", |b| {
        b.iter(|| black_box(&shape3).remove_axis(1).unwrap())
    });

    let n_src = benches::size(10_000_000, 1000);
    let mut rng = benches::SplitMix64::new(8);
    let src: Vec<f32> = (0..n_src).map(|_| rng.next_f64() as f32).collect();
    let p = RowPartition::from_row_lengths(&lengths(9, benches::size(1_000_000, 100))).unwrap();
    let mut rng = benches::SplitMix64::new(10);
    let picks: Vec<i32> = (0..p.nvals())
        .map(|_| rng.below(n_src as u64) as i32)
        .collect();
    let idx = Ragged::new(RaggedShape::from_layers(vec![p]).unwrap(), picks);
    g.bench_function("from_index", |b| {
        b.iter(|| {
            black_box(Ragged::from_index(black_box(&src), &idx).unwrap());
        })
    });
    drop((src, idx));
    let lens = lengths(2, benches::size(1_000_000, 100));
    g.bench_function("from_row_lengths", |b| {
        b.iter(|| RowPartition::from_row_lengths(black_box(&lens)).unwrap())
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = bench
}
criterion_main!(benches);
