//! Criterion benches of structured-tensor, joined with the Python peers (TensorFlow's
//! `StructuredTensor`, Awkward Array) of `benches/peers/structured-tensor.py` by workload name.
//!
//! Input (SplitMix64 seed 7, identical in the peers; 100,000 records, 1,000 in quick runs):
//! for each record, in this order: `age = below(100)`; `k = below(4)` nicknames, each
//! `"n{below(1000)}"`; `m = below(4)` shoe sizes, each `5.0 + below(20) * 0.5`. A record is
//! `{"age": age, "nicknames": [...], "shoes": {"sizes": [...]}}`. Households for the rank-2
//! workloads: from seed 8, lengths `below(4)` until the records are used up (the last one
//! clipped).
//! - `from_json`: the already-parsed JSON value -> StructuredTensor.
//! - `from_json_text`: JSON text -> StructuredTensor (`peer_serde_json__from_json_text`
//!   only parses the text into a `serde_json::Value`).
//! - `to_json`: StructuredTensor -> JSON value (`peer_serde_json__to_json` clones the same
//!   value: what serde_json itself takes to build, and free, that tree).
//! - `to_json_free`: freeing the value `to_json` returned, alone (the part of `to_json`'s
//!   time that is serde_json's drop, paid by whoever drops the value).
//! - `to_json_text`: StructuredTensor -> JSON text, written from the columns.
//! - `merge_dims`: the households (rank 2) merged back to rank 1, `merge_dims(0, 1)`.
//! - `promote`: `promote(("shoes", "sizes"), "shoe_sizes")` on the rank-1 records.
//! - `gather`: `gather(indices, 0)` on the rank-1 records, `indices` as many as the records,
//!   each `below(n)` from seed 9 (TensorFlow's `tf.gather`).
//! - `concat`: `concat([records, records], 0)` (TensorFlow's `tf.concat`).
//! - `gather_1m`, `concat_1m`: the same two on 1,000,000 records (10,000 in quick runs),
//!   the size the Arrow and Parquet workloads use: past the last-level cache, where every
//!   selected row is a miss to memory.
//!
//! The process first settles glibc's allocator thresholds (`benches::settle_allocator`) where
//! a long-running process has them, so that no workload's figure depends on the ones
//! before it.

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use benches::records::records;
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use serde_json::Value;
use structured_tensor::{RowPartition, StructuredTensor};

fn households(n: usize) -> RowPartition {
    let mut rng = benches::SplitMix64::new(8);
    let mut lengths = Vec::new();
    let mut used = 0usize;
    while used < n {
        let len = (rng.below(4) as usize).min(n - used);
        lengths.push(len as i32);
        used += len;
    }
    RowPartition::from_row_lengths(&lengths).unwrap()
}

fn gather_indices(n: usize) -> Vec<i64> {
    let mut rng = benches::SplitMix64::new(9);
    (0..n).map(|_| rng.below(n as u64) as i64).collect()
}

fn bench(c: &mut Criterion) {
    benches::settle_allocator();
    let mut g = c.benchmark_group("structured-tensor");
    let n = benches::size(100_000, 100);
    let value = records(n);
    let text = serde_json::to_string(&value).unwrap();

    g.bench_function("from_json", |b| {
        b.iter(|| StructuredTensor::from_json(black_box(&value)).unwrap())
    });
    g.bench_function("from_json_text", |b| {
        b.iter(|| StructuredTensor::from_json_str(black_box(&text)).unwrap())
    });
    g.bench_function("peer_serde_json__from_json_text", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(&text)).unwrap())
    });

    let st = StructuredTensor::from_json(&value).unwrap();
    g.bench_function("to_json", |b| b.iter(|| black_box(&st).to_json()));
    g.bench_function("peer_serde_json__to_json", |b| {
        b.iter(|| black_box(&value).clone())
    });
    g.bench_function("to_json_free", |b| {
        b.iter_batched(|| st.to_json(), drop, BatchSize::LargeInput)
    });
    g.bench_function("to_json_text", |b| {
        b.iter(|| black_box(&st).to_json_string())
    });

    let grouped = st.partition_outer_dimension(&households(n)).unwrap();
    g.bench_function("merge_dims", |b| {
        b.iter(|| black_box(&grouped).merge_dims(0, 1).unwrap())
    });
    g.bench_function("promote", |b| {
        b.iter(|| {
            black_box(&st)
                .promote(["shoes", "sizes"], "shoe_sizes")
                .unwrap()
        })
    });
    let indices = gather_indices(n);
    g.bench_function("gather", |b| {
        b.iter(|| black_box(&st).gather(black_box(&indices), 0).unwrap())
    });
    g.bench_function("concat", |b| {
        b.iter(|| StructuredTensor::concat(&[black_box(&st), black_box(&st)], 0).unwrap())
    });

    let n_large = benches::size(1_000_000, 100);
    let large = StructuredTensor::from_json(&records(n_large)).unwrap();
    let large_indices = gather_indices(n_large);
    g.bench_function("gather_1m", |b| {
        b.iter(|| {
            black_box(&large)
                .gather(black_box(&large_indices), 0)
                .unwrap()
        })
    });
    g.bench_function("concat_1m", |b| {
        b.iter(|| StructuredTensor::concat(&[black_box(&large), black_box(&large)], 0).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
