//! Criterion benches of structured-tensor on real-world data, joined with pyarrow and
//! pandas in `benches/peers/structured-tensor-real_world.py` by workload name.
//!
//! Input: the records of `benches/structured-tensor.rs` (SplitMix64 seed 7, identical in
//! the peers), 1,000,000 of them (100,000 in quick runs), as JSON Lines.
//! - `json_lines`: the JSON Lines text (in memory; the peers read the same bytes from
//!   `target/structured-tensor-bench/records.jsonl`, which this bench leaves there) ->
//!   a tensor with `from_json_lines` (pyarrow: `pyarrow.json.read_json`; pandas:
//!   `read_json(lines=True)`).
//! - `gather_nullable`, `concat_nullable`: `gather` of as many random rows (SplitMix64
//!   seed 9) and `concat` of the records with themselves when every leaf carries a
//!   validity bitmap (every tenth age null), against the same ops on the records without
//!   bitmaps as the in-Rust peer `nonnull` (alternated in one run; both tensors made by
//!   `conform`).

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use benches::records::records;
use benches::SplitMix64;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde_json::Value;
use structured_tensor::{FieldSpec, JsonOptions, Spec, StructuredTensor};

/// `spec` with every leaf nullable.
fn all_nullable(spec: &Spec) -> Spec {
    let fields = spec
        .fields
        .iter()
        .map(|(k, f)| {
            let f = match f {
                FieldSpec::Struct(s) => FieldSpec::Struct(all_nullable(s)),
                FieldSpec::Nullable(_) => f.clone(),
                leaf => FieldSpec::Nullable(Box::new(leaf.clone())),
            };
            (k.clone(), f)
        })
        .collect();
    Spec {
        shape: spec.shape.clone(),
        fields,
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("structured-tensor");
    g.sample_size(10);
    let n = benches::size(1_000_000, 10);
    let recs = records(n);
    let mut text = String::new();
    for r in recs.as_array().expect("a list of records") {
        text.push_str(&serde_json::to_string(r).expect("JSON"));
        text.push('\n');
    }
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target")
        })
        .join("structured-tensor-bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("records.jsonl"), &text).unwrap();
    let options = JsonOptions::default();
    g.bench_function("json_lines", |b| {
        b.iter(|| StructuredTensor::from_json_lines(black_box(text.as_bytes()), &options).unwrap())
    });

    // the same records with nulls: every tenth age null, so every leaf is nullable
    let with_nulls: Vec<Value> = recs
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.clone();
            if i % 10 == 0 {
                r["age"] = Value::Null;
            }
            r
        })
        .collect();
    let nullable = StructuredTensor::from_json_with_options(
        &Value::Array(with_nulls),
        &JsonOptions::default().with_nulls(true),
    )
    .unwrap();
    let nullable = nullable.conform(&all_nullable(&nullable.spec())).unwrap();
    // The peer goes through `conform` too, to its own spec (no bitmaps), so that the two
    // differ only in the bitmaps: a tensor straight from `from_json` concatenates about
    // 1.4x faster than the same one after `conform`, bitmaps or not.
    let plain = StructuredTensor::from_json(&recs).unwrap();
    let plain = plain.conform(&plain.spec()).unwrap();
    let mut rng = SplitMix64::new(9);
    let indices: Vec<i64> = (0..n).map(|_| rng.below(n as u64) as i64).collect();
    g.bench_function("gather_nullable", |b| {
        b.iter(|| black_box(&nullable).gather(&indices, 0).unwrap())
    });
    g.bench_function("peer_nonnull__gather_nullable", |b| {
        b.iter(|| black_box(&plain).gather(&indices, 0).unwrap())
    });
    g.bench_function("concat_nullable", |b| {
        b.iter(|| StructuredTensor::concat(&[black_box(&nullable), &nullable], 0).unwrap())
    });
    g.bench_function("peer_nonnull__concat_nullable", |b| {
        b.iter(|| StructuredTensor::concat(&[black_box(&plain), &plain], 0).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
