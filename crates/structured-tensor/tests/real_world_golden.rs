//! Goldens written by pyarrow (every nullable type we hold, with nulls, in every codec),
//! polars (zstd, its default) and DuckDB (zstd and Snappy), by
//! `tests/golden/make_real_world.py`; the rows are in
//! `real_world.json`. Read with nulls and any field name, each file must give those rows
//! under our documented policy (a null list is an empty list, a null struct's leaves are
//! null). No Python is needed here.
#![cfg(feature = "parquet")]

use std::path::PathBuf;

use serde_json::{json, Value};
use structured_tensor::{read_parquet, read_parquet_with_options, ArrowOptions};

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/real_world")
        .join(name)
}

/// A hex string as our JSON form of bytes: a string when UTF-8, else the byte values.
fn bytes_json(hex: &str) -> Value {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    match String::from_utf8(bytes.clone()) {
        Ok(s) => json!(s),
        Err(_) => json!(bytes),
    }
}

/// The rows as we read them: null lists empty, a null struct's leaves null.
fn expected() -> Vec<Value> {
    let text = std::fs::read_to_string(golden("real_world.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let mut r = row.as_object().unwrap().clone();
            for list in ["tags", "grid", "events"] {
                if r[list].is_null() {
                    r.insert(list.into(), json!([]));
                }
            }
            if r["point"].is_null() {
                r.insert("point".into(), json!({"x": null, "label": null}));
            }
            if let Some(hex) = r["blob"].as_str() {
                let b = bytes_json(hex);
                r.insert("blob".into(), b);
            }
            Value::Object(r)
        })
        .collect()
}

#[test]
fn pyarrow_polars_and_duckdb_nullable_files_read_as_written() {
    let rows = expected();
    for name in [
        "nullable_snappy.parquet",
        "nullable_gzip.parquet",
        "nullable_zstd.parquet",
        "nullable_uncompressed.parquet",
        "polars_zstd.parquet",
        "duckdb_zstd.parquet",
        "duckdb_snappy.parquet",
    ] {
        let st = read_parquet_with_options(golden(name), &ArrowOptions::permissive())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(st.to_json(), Value::Array(rows.clone()), "{name}");
        let i64s = st.field_value("i64").unwrap().as_array().unwrap();
        assert_eq!(i64s.null_count(), 1, "{name}");
        // TensorFlow's rules refuse the nulls, naming the file
        let e = read_parquet(golden(name)).unwrap_err();
        assert!(e.to_string().contains(name), "{e}");
    }
}
