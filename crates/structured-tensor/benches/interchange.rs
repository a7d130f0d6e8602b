//! Criterion benches of structured-tensor's Arrow and Parquet interchange (feature
//! `parquet`), joined with pyarrow in `benches/peers/structured-tensor.py` by workload name.
//!
//! Input: the records of `benches/structured-tensor.rs` (SplitMix64 seed 7, identical in
//! the peers), 1,000,000 of them (10,000 in quick runs): `{"age": below(100), "nicknames":
//! ["n{below(1000)}"; below(4)], "shoes": {"sizes": [5.0 + below(20) * 0.5; below(4)]}}`.
//! - `to_arrow`: the tensor -> an Arrow `RecordBatch` (pyarrow: `pa.array(list_of_dicts)`,
//!   from its own native form, Python objects, into Arrow).
//! - `from_arrow`: that `RecordBatch` -> a tensor (pyarrow: `to_pylist()`, Arrow back to its
//!   native form).
//! - `write_parquet`: the tensor -> a Snappy Parquet file, row groups of 1,048,576 rows
//!   (pyarrow: `pq.write_table` of the same records with its defaults, the same codec and
//!   row group size).
//! - `read_parquet`: that file -> a tensor (pyarrow: `pq.read_table` of the same file, which
//!   this bench leaves at `target/structured-tensor-bench/records.parquet`; of its own file
//!   of the same records when ours is not there).
//! - `to_arrow_10k`, `to_arrow_100k`: `to_arrow` at 10,000 and 100,000 records, to read the
//!   time against the record count (no peer).

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use benches::records::records;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use structured_tensor::{read_parquet, write_parquet, ParquetOptions, StructuredTensor};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("structured-tensor");
    g.sample_size(10);
    let n = benches::size(1_000_000, 100);
    let st = StructuredTensor::from_json(&records(n)).unwrap();

    for (name, size) in [("to_arrow_10k", 10_000), ("to_arrow_100k", 100_000)] {
        if size < n {
            let small = StructuredTensor::from_json(&records(size)).unwrap();
            g.bench_function(name, |b| {
                b.iter(|| black_box(&small).to_record_batch().unwrap())
            });
        }
    }
    g.bench_function("to_arrow", |b| {
        b.iter(|| black_box(&st).to_record_batch().unwrap())
    });
    let batch = st.to_record_batch().unwrap();
    g.bench_function("from_arrow", |b| {
        b.iter(|| StructuredTensor::from_record_batch(black_box(&batch)).unwrap())
    });

    // the file stays for the peer, which reads the same file
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target")
        })
        .join("structured-tensor-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.parquet");
    let options = ParquetOptions::default();
    g.bench_function("write_parquet", |b| {
        b.iter(|| write_parquet(&path, black_box(&st), &options).unwrap())
    });
    write_parquet(&path, &st, &options).unwrap();
    g.bench_function("read_parquet", |b| b.iter(|| read_parquet(&path).unwrap()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
