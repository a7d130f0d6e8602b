//! Real-world Parquet and Arrow (feature `parquet`): nulls in and out, gzip and zstd,
//! empty structs, a directory read under one unified spec, partitioned writes with a
//! file stem and an append mode.
#![cfg(feature = "parquet")]

use std::path::PathBuf;

use serde_json::{json, Value};

// the seeded schema and record generators are real_world.rs's (one test binary)
use crate::real_world::{random_record, random_schema, Rng};
use structured_tensor::{
    read_parquet, read_parquet_dir_with, read_parquet_with_options, read_parquet_with_spec,
    write_parquet, write_parquet_dir_with, write_parquet_with, ArrowOptions, Codec, DirReadOptions,
    Error, JsonOptions, ParquetOptions, PartitionMode, Spec, StructuredTensor, WriteOptions,
};

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("real_world_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn nullable(v: &Value) -> StructuredTensor {
    StructuredTensor::from_json_with_options(
        v,
        &JsonOptions::default()
            .with_nulls(true)
            .with_any_field_names(true),
    )
    .unwrap()
}

fn records() -> Value {
    json!([
        {"id": 1, "name": "a", "xs": [1.5, null], "s": {"t": true, "u": ["p"]}, "user-id": "u1"},
        {"id": null, "name": null, "xs": null, "s": null, "user-id": "u2"},
        {"id": 3, "name": "c", "xs": [], "s": {"t": null, "u": [null, "q"]}, "user-id": null},
    ])
}

/// What `records()` reads as: a null list is empty, a null struct's leaves are null.
fn records_read() -> Value {
    json!([
        {"id": 1, "name": "a", "xs": [1.5, null], "s": {"t": true, "u": ["p"]}, "user-id": "u1"},
        {"id": null, "name": null, "xs": [], "s": {"t": null, "u": []}, "user-id": "u2"},
        {"id": 3, "name": "c", "xs": [], "s": {"t": null, "u": [null, "q"]}, "user-id": null},
    ])
}

#[test]
fn nulls_round_trip_through_arrow_and_every_codec() {
    let st = nullable(&records());
    assert_eq!(st.to_json(), records_read());
    let batch = st.to_record_batch().unwrap();
    assert_eq!(batch.column_by_name("id").unwrap().null_count(), 1);
    let back =
        StructuredTensor::from_record_batch_with_options(&batch, &ArrowOptions::permissive())
            .unwrap();
    assert_eq!(back, st);
    assert_eq!(back.spec(), st.spec());
    // refused by default, as before
    assert!(StructuredTensor::from_record_batch(&batch).is_err());
    let dir = temp_dir("codecs");
    for codec in [
        Codec::Uncompressed,
        Codec::Snappy,
        Codec::Gzip(6),
        Codec::Zstd(3),
    ] {
        let path = dir.join(format!("{codec:?}.parquet"));
        write_parquet_with(&path, &st, &WriteOptions::default().with_codec(codec)).unwrap();
        let back = read_parquet_with_options(&path, &ArrowOptions::permissive()).unwrap();
        assert_eq!(back.to_json(), records_read(), "{codec:?}");
        assert!(read_parquet(&path).is_err());
    }
    let bad = WriteOptions::default().with_codec(Codec::Zstd(99));
    assert!(write_parquet_with(dir.join("bad.parquet"), &st, &bad).is_err());
}

#[test]
fn an_empty_struct_array_round_trips() {
    let st = StructuredTensor::from_json(&json!([{}, {}])).unwrap();
    assert_eq!(st.nrows(), Some(2));
    let path = temp_dir("empty").join("empty.parquet");
    write_parquet(&path, &st, &ParquetOptions::default()).unwrap();
    let back = read_parquet(&path).unwrap();
    assert_eq!(back.nrows(), Some(2));
    assert_eq!(back.to_json(), json!([{}, {}]));
}

#[test]
fn a_directory_is_read_under_one_unified_spec() {
    let dir = temp_dir("unified");
    let a = StructuredTensor::from_json(&json!([{"user": 1, "sessions": []}])).unwrap();
    let b = StructuredTensor::from_json(
        &json!([{"user": 2, "sessions": [{"len": 2.5}]}, {"user": 3, "sessions": []}]),
    )
    .unwrap();
    write_parquet(dir.join("a.parquet"), &a, &ParquetOptions::default()).unwrap();
    write_parquet(dir.join("b.parquet"), &b, &ParquetOptions::default()).unwrap();
    // the TensorFlow-typed reader refuses the two types
    assert!(structured_tensor::read_parquet_dir(&dir, PartitionMode::Combined).is_err());
    let st = read_parquet_dir_with(&dir, PartitionMode::Combined, &DirReadOptions::permissive())
        .unwrap()
        .remove(0);
    assert_eq!(
        st.to_json(),
        json!([{"user": 1, "sessions": []}, {"user": 2, "sessions": [{"len": 2.5}]},
               {"user": 3, "sessions": []}])
    );
    // a shipped spec reads each file the same way
    let spec = Spec::from_json(&st.spec().without_sizes().to_json()).unwrap();
    let one = read_parquet_with_spec(dir.join("a.parquet"), &spec).unwrap();
    assert_eq!(one.spec().without_sizes(), spec);
    // a file that does not fit names the field path, both types and the file
    let c = StructuredTensor::from_json(&json!([{"user": "x", "sessions": []}])).unwrap();
    write_parquet(dir.join("c.parquet"), &c, &ParquetOptions::default()).unwrap();
    let e = read_parquet_dir_with(&dir, PartitionMode::Combined, &DirReadOptions::permissive())
        .unwrap_err();
    match &e {
        Error::SchemaMismatch {
            path,
            file: Some(f),
            ..
        } => {
            assert_eq!(path.to_string(), "('user',)");
            assert!(f.ends_with("c.parquet"), "{e}");
        }
        other => panic!("{other}"),
    }
    assert!(
        e.to_string()
            .contains("has type string, but the schema has int64"),
        "{e}"
    );
    let e = read_parquet_with_spec(dir.join("c.parquet"), &spec).unwrap_err();
    assert!(
        e.to_string()
            .contains("c.parquet: field ('user',) has type"),
        "{e}"
    );
}

#[test]
fn partitioned_writers_share_a_dataset() {
    let dir = temp_dir("append");
    let rows = |offset: i64| {
        StructuredTensor::from_json(&json!([
            {"day": 1, "v": offset}, {"day": 2, "v": offset + 1}, {"day": 1, "v": offset + 2}
        ]))
        .unwrap()
    };
    let first = WriteOptions::default()
        .with_codec(Codec::Zstd(3))
        .with_file_stem("writer-a");
    let written = write_parquet_dir_with(&dir, &rows(0), &["day"], &first).unwrap();
    assert!(written[0].ends_with("day=1/writer-a.parquet"));
    // without append: refused, the directory is not empty
    let second = first.clone().with_file_stem("writer-b");
    assert!(write_parquet_dir_with(&dir, &rows(10), &["day"], &second).is_err());
    let second = second.with_append(true);
    write_parquet_dir_with(&dir, &rows(10), &["day"], &second).unwrap();
    // the same stem again is a real clash, refused before anything is written
    let again = first.clone().with_append(true);
    let e = write_parquet_dir_with(&dir, &rows(20), &["day"], &again).unwrap_err();
    assert!(e.to_string().contains("writer-a.parquet"), "{e}");
    // other partition keys would make an unreadable dataset
    let e =
        write_parquet_dir_with(&dir, &rows(30), &["v"], &second.with_file_stem("c")).unwrap_err();
    assert!(e.to_string().contains("partitioned by"), "{e}");
    let all = structured_tensor::read_parquet_dir(&dir, PartitionMode::Combined)
        .unwrap()
        .remove(0);
    let mut vs: Vec<i64> = all
        .to_json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["v"].as_i64().unwrap())
        .collect();
    vs.sort();
    assert_eq!(vs, [0, 1, 2, 10, 11, 12]);
}

#[test]
fn random_records_with_nulls_round_trip_through_parquet_as_the_model() {
    let dir = temp_dir("random");
    let mut rng = Rng(77);
    let codecs = [
        Codec::Snappy,
        Codec::Gzip(1),
        Codec::Zstd(1),
        Codec::Uncompressed,
    ];
    let mut tested = 0;
    for case in 0..30 {
        let schema = random_schema(&mut rng);
        let n = 1 + rng.below(20) as usize;
        let (raw, model): (Vec<Value>, Vec<Value>) =
            (0..n).map(|_| random_record(&mut rng, &schema)).unzip();
        let st = StructuredTensor::from_json_lines(
            raw.iter()
                .map(|r| serde_json::to_string(r).unwrap() + "\n")
                .collect::<String>()
                .as_bytes(),
            &JsonOptions::default()
                .with_nulls(true)
                .with_any_field_names(true)
                .with_batch_size(1 + rng.below(5) as usize),
        );
        let Ok(st) = st else {
            continue; // a field never seen has no type (the JSON Lines test covers it)
        };
        assert_eq!(st.to_json(), Value::Array(model.clone()), "case {case}");
        let codec = codecs[case % codecs.len()];
        let path = dir.join(format!("case{case}.parquet"));
        let options = WriteOptions::default()
            .with_codec(codec)
            .with_row_group_size(1 + rng.below(4) as usize);
        write_parquet_with(&path, &st, &options).unwrap();
        let back = read_parquet_with_options(&path, &ArrowOptions::permissive()).unwrap();
        assert_eq!(back.to_json(), Value::Array(model), "case {case} {codec:?}");
        assert_eq!(back, st, "case {case}");
        tested += 1;
    }
    assert!(
        tested >= 15,
        "only {tested} of 30 cases had every field typed"
    );
}
