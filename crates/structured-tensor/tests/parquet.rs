//! Parquet files (feature `parquet`): pyarrow's golden files (written by
//! `tests/golden/make_parquet.py`) read back and compared with the JSON they hold, read by
//! our JSON reader; our files written for that script's `--check` mode; round trips JSON ->
//! tensor -> Arrow -> Parquet -> tensor -> JSON over generated records; hive-partitioned
//! directories; and every error path.
#![cfg(feature = "parquet")]

use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use structured_tensor::{
    parquet_dir_files, read_parquet, read_parquet_dir, write_parquet, write_parquet_dir,
    Compression, Error, FieldPath, ParquetOptions, ParquetPart, PartitionMode, StructuredTensor,
};

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/parquet")
        .join(name)
}

fn golden_json(name: &str) -> StructuredTensor {
    let text = std::fs::read_to_string(golden(name)).unwrap();
    StructuredTensor::from_json_str(&text).unwrap()
}

/// A fresh, empty scratch directory under cargo's temporary directory for tests.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("parquet-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn st(v: Value) -> StructuredTensor {
    StructuredTensor::from_json(&v).unwrap()
}

const UNCOMPRESSED: ParquetOptions = ParquetOptions {
    row_group_size: 1 << 20,
    compression: Compression::Uncompressed,
};

#[test]
fn pyarrow_records_read_as_their_json() {
    let expected = golden_json("records.json");
    for name in ["records_snappy.parquet", "records_uncompressed.parquet"] {
        let got = read_parquet(golden(name)).unwrap();
        assert_eq!(got.to_json(), expected.to_json(), "{name}");
        assert_eq!(got, expected, "{name}");
    }
}

/// `narrow.json` as the tensor pyarrow's `narrow.parquet` holds: read with the spec of its
/// dtypes (int32, float32, uint8; the bytes fields as their hex strings, then decoded).
fn narrow_expected() -> StructuredTensor {
    use structured_tensor::{BytesColumn, DType, FieldSpec, Spec, Update, Values};
    let t = |shape: &[Option<usize>], dtype| FieldSpec::Tensor {
        shape: shape.to_vec(),
        dtype,
    };
    let r = |shape: &[Option<usize>], dtype| FieldSpec::Ragged {
        shape: shape.to_vec(),
        dtype,
        ragged_rank: shape.len() - 1,
    };
    let n = None;
    let fields = |v: Vec<(&str, FieldSpec)>| {
        v.into_iter()
            .map(|(k, f)| (k.to_string(), f))
            .collect::<structured_tensor::IndexMap<_, _>>()
    };
    let pts = Spec {
        shape: vec![n, n],
        fields: fields(vec![
            ("x", r(&[n, n], DType::F32)),
            ("n", r(&[n, n], DType::I32)),
        ]),
    };
    let s = Spec {
        shape: vec![n],
        fields: fields(vec![
            ("u8s", r(&[n, n], DType::U8)),
            ("raw", t(&[n], DType::Str)),
            ("pts", FieldSpec::Struct(pts)),
        ]),
    };
    let spec = Spec {
        shape: vec![n],
        fields: fields(vec![
            ("i", t(&[n], DType::I32)),
            ("f", t(&[n], DType::F32)),
            ("u", t(&[n], DType::U8)),
            ("b", t(&[n], DType::Str)),
            ("li", r(&[n, n], DType::I32)),
            ("lf", r(&[n, n, n], DType::F32)),
            ("s", FieldSpec::Struct(s)),
        ]),
    };
    let text = std::fs::read_to_string(golden("narrow.json")).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let typed = StructuredTensor::from_json_with_spec(&value, &spec).unwrap();
    let unhex = || {
        Update::transform(|v| {
            let a = v.as_array().expect("a bytes field");
            let Values::Str(hex) = a.values() else {
                panic!("hex strings")
            };
            let bytes: BytesColumn = hex
                .iter()
                .map(|h| {
                    (0..h.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                        .collect::<Vec<u8>>()
                })
                .collect();
            Ok(a.with_values(Values::Bytes(bytes))?.into())
        })
    };
    typed
        .with_updates(vec![(vec!["b"], unhex()), (vec!["s", "raw"], unhex())])
        .unwrap()
}

#[test]
fn pyarrow_narrow_dtypes_read_as_their_json() {
    let got = read_parquet(golden("narrow.parquet")).unwrap();
    let expected = narrow_expected();
    assert_eq!(got, expected);
    let dtype = |path: &[&str]| {
        got.field_value(path.to_vec())
            .unwrap()
            .as_array()
            .unwrap()
            .dtype()
    };
    use structured_tensor::DType;
    assert_eq!(dtype(&["i"]), DType::I32);
    assert_eq!(dtype(&["f"]), DType::F32);
    assert_eq!(dtype(&["u"]), DType::U8);
    assert_eq!(dtype(&["b"]), DType::Bytes);
    assert_eq!(dtype(&["s", "u8s"]), DType::U8);
    assert_eq!(dtype(&["s", "pts", "n"]), DType::I32);
    // the bytes that are not UTF-8 come out of JSON as their byte values
    assert_eq!(
        got.field_value("b").unwrap().to_json()[1],
        serde_json::json!([0xc3, 0x28])
    );
}

#[test]
fn pyarrow_hive_directory_reads_as_pyarrow_dataset_does() {
    let expected = golden_json("hive.json");
    let combined = read_parquet_dir(golden("hive"), PartitionMode::Combined).unwrap();
    assert_eq!(combined.len(), 1);
    assert_eq!(combined[0].to_json(), expected.to_json());
    assert_eq!(combined[0], expected);
    // one tensor per file, in sorted path order, each with its keys; together the whole
    let per_file = read_parquet_dir(golden("hive"), PartitionMode::PerFile).unwrap();
    let rows: Vec<usize> = per_file.iter().map(|t| t.nrows().unwrap()).collect();
    assert_eq!(rows, vec![1, 2, 1, 1, 1]);
    assert_eq!(
        per_file[4].to_json(),
        json!([{"year": 2024, "city": "São Paulo/SP", "temp": 24.0, "events": []}])
    );
    let parts: Vec<&StructuredTensor> = per_file.iter().collect();
    assert_eq!(StructuredTensor::concat(&parts, 0).unwrap(), expected);
}

#[test]
fn directory_listing_is_sorted_with_decoded_keys() {
    let root = golden("hive");
    let parts = parquet_dir_files(&root).unwrap();
    let keys = |year: &str, city: &str| {
        vec![
            ("year".to_string(), year.to_string()),
            ("city".to_string(), city.to_string()),
        ]
    };
    let part = |dir: &str, year: &str, city: &str| ParquetPart {
        path: root.join(dir).join("part-0.parquet"),
        keys: keys(year, city),
    };
    assert_eq!(
        parts,
        vec![
            part("year=2023/city=New%20York", "2023", "New York"),
            part("year=2023/city=Oslo", "2023", "Oslo"),
            part("year=2024/city=New%20York", "2024", "New York"),
            part("year=2024/city=Oslo", "2024", "Oslo"),
            part(
                "year=2024/city=S%C3%A3o%20Paulo%2FSP",
                "2024",
                "São Paulo/SP"
            ),
        ]
    );
}

#[test]
fn a_type_we_do_not_hold_names_the_file_column_and_type() {
    let path = golden("timestamp.parquet");
    let err = read_parquet(&path).unwrap_err();
    let Error::InParquetFile { path: at, source } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(at, &path);
    let Error::Arrow {
        path: field,
        problem,
    } = source.as_ref()
    else {
        panic!("{source:?}")
    };
    assert_eq!(field, &FieldPath::from("when"));
    assert!(
        problem.starts_with("unsupported Arrow type Timestamp("),
        "{problem}"
    );
    assert!(err.to_string().starts_with(&format!(
        "Parquet file {}: Arrow conversion at path ('when',): unsupported Arrow type Timestamp(",
        path.display()
    )));
}

#[test]
fn a_null_is_an_error_naming_the_file_column_and_row() {
    let path = golden("nulls.parquet");
    assert_eq!(
        read_parquet(&path).unwrap_err().to_string(),
        format!(
            "Parquet file {}: Arrow conversion at path ('n',): null at index 1; \
             StructuredTensor values hold no nulls",
            path.display()
        )
    );
}

#[test]
fn a_missing_file_names_the_path() {
    let path = scratch("missing").join("nowhere.parquet");
    let err = read_parquet(&path).unwrap_err();
    let Error::Ragged(ragged_core::Error::Io {
        path: at,
        operation,
        message,
    }) = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((at, *operation), (&path, "open"));
    assert_eq!(
        err.to_string(),
        format!("cannot open {}: {message}", path.display())
    );
    assert!(message.contains("No such file"), "{message}");
}

#[test]
fn a_file_that_is_not_parquet_is_a_parquet_error_with_the_path() {
    let dir = scratch("not-parquet");
    let path = dir.join("text.parquet");
    std::fs::write(&path, "id,name\n1,Bob\n").unwrap();
    let err = read_parquet(&path).unwrap_err();
    let Error::Ragged(ragged_core::Error::Parquet { path: at, message }) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(at, &path);
    assert!(!message.is_empty());
    assert_eq!(
        err.to_string(),
        format!("Parquet file {}: {message}", path.display())
    );
}

/// Every truncation of a golden file is an error; every single-byte corruption is an error
/// or a tensor, never a panic (the reader's own checks, and a guard that turns a panic
/// inside the decoder into an error).
#[test]
fn corrupt_files_are_errors_never_panics() {
    let dir = scratch("corrupt");
    let bytes = std::fs::read(golden("records_uncompressed.parquet")).unwrap();
    let path = dir.join("bad.parquet");
    for len in (0..bytes.len()).step_by(7) {
        std::fs::write(&path, &bytes[..len]).unwrap();
        let err = read_parquet(&path).unwrap_err();
        assert!(
            matches!(err, Error::Ragged(ragged_core::Error::Parquet { .. })),
            "truncated to {len}: {err:?}"
        );
    }
    let mut errors = 0;
    for position in (0..bytes.len()).step_by(3) {
        let mut bad = bytes.clone();
        bad[position] ^= 0x5A;
        std::fs::write(&path, &bad).unwrap();
        if let Err(err) = read_parquet(&path) {
            errors += 1;
            assert!(
                matches!(
                    err,
                    Error::Ragged(ragged_core::Error::Parquet { .. }) | Error::InParquetFile { .. }
                ),
                "byte {position}: {err:?}"
            );
        }
    }
    assert!(errors > 0);
}

/// Our files of the golden JSON, for `make_parquet.py --check` (pyarrow reads them back);
/// each is also read back here.
#[test]
fn our_files_of_the_golden_json_for_pyarrow() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("parquet-ours");
    std::fs::create_dir_all(&dir).unwrap();
    for (stem, options) in [
        ("records", ParquetOptions::default()),
        (
            "hive",
            ParquetOptions {
                row_group_size: 2,
                compression: Compression::Uncompressed,
            },
        ),
    ] {
        let tensor = golden_json(&format!("{stem}.json"));
        let path = dir.join(format!("{stem}.parquet"));
        write_parquet(&path, &tensor, &options).unwrap();
        std::fs::copy(
            golden(&format!("{stem}.json")),
            dir.join(format!("{stem}.json")),
        )
        .unwrap();
        assert_eq!(read_parquet(&path).unwrap(), tensor);
    }
    // the narrow dtypes, from pyarrow's file; make_parquet.py --check also compares the
    // leaf types of ours with pyarrow's
    let tensor = narrow_expected();
    let path = dir.join("narrow.parquet");
    write_parquet(&path, &tensor, &ParquetOptions::default()).unwrap();
    std::fs::copy(golden("narrow.json"), dir.join("narrow.json")).unwrap();
    assert_eq!(read_parquet(&path).unwrap(), tensor);
}

fn row_groups(path: &Path) -> Vec<(usize, parquet::basic::Compression)> {
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    reader
        .metadata()
        .row_groups()
        .iter()
        .map(|g| (g.num_rows() as usize, g.column(0).compression()))
        .collect()
}

#[test]
fn row_group_size_and_compression_are_as_asked() {
    let dir = scratch("row-groups");
    let tensor = golden_json("records.json");
    let path = dir.join("groups.parquet");
    let options = ParquetOptions {
        row_group_size: 2,
        compression: Compression::Snappy,
    };
    write_parquet(&path, &tensor, &options).unwrap();
    let snappy = parquet::basic::Compression::SNAPPY;
    assert_eq!(
        row_groups(&path),
        vec![(2, snappy), (2, snappy), (1, snappy)]
    );
    assert_eq!(read_parquet(&path).unwrap(), tensor);
    write_parquet(&path, &tensor, &UNCOMPRESSED).unwrap();
    assert_eq!(
        row_groups(&path),
        vec![(5, parquet::basic::Compression::UNCOMPRESSED)]
    );
    assert_eq!(ParquetOptions::default().row_group_size, 1 << 20);
    assert_eq!(ParquetOptions::default().compression, Compression::Snappy);
    // no half-written file is left beside it
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["groups.parquet"]);
}

#[test]
fn zero_row_group_size_is_an_error_and_writes_nothing() {
    let dir = scratch("zero-groups");
    let path = dir.join("x.parquet");
    let options = ParquetOptions {
        row_group_size: 0,
        compression: Compression::Snappy,
    };
    assert_eq!(
        write_parquet(&path, &st(json!([{"a": 1}])), &options).unwrap_err(),
        Error::Ragged(ragged_core::Error::InvalidArgument {
            what: "Parquet row_group_size (at least 1)",
            value: 0
        })
    );
    assert!(!path.exists());
}

#[test]
fn only_rank_1_tensors_are_written() {
    let dir = scratch("rank");
    let rank2 = st(json!([[{"a": 1}], []]));
    assert_eq!(
        write_parquet(dir.join("x.parquet"), &rank2, &UNCOMPRESSED)
            .unwrap_err()
            .to_string(),
        "Arrow conversion at path (): a RecordBatch holds a rank-1 StructuredTensor, this one has rank 2"
    );
}

#[test]
fn writing_into_a_missing_directory_names_the_file() {
    let dir = scratch("no-dir");
    let path = dir.join("absent").join("x.parquet");
    let err = write_parquet(&path, &st(json!([{"a": 1}])), &UNCOMPRESSED).unwrap_err();
    let Error::Ragged(ragged_core::Error::Io {
        path: at,
        operation,
        ..
    }) = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((at, *operation), (&path, "create"));
}

#[test]
fn empty_tensor_with_fields_round_trips() {
    let dir = scratch("empty");
    let path = dir.join("empty.parquet");
    let tensor = StructuredTensor::from_json(&json!([{"a": 1, "b": ["x"]}]))
        .unwrap()
        .boolean_mask(&[false])
        .unwrap();
    write_parquet(&path, &tensor, &UNCOMPRESSED).unwrap();
    let back = read_parquet(&path).unwrap();
    assert_eq!(back, tensor);
    assert_eq!(back.nrows(), Some(0));
}

fn write_json(path: &Path, v: Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    write_parquet(path, &st(v), &UNCOMPRESSED).unwrap();
}

#[test]
fn differing_schemas_in_a_directory_name_the_file() {
    let dir = scratch("mismatch");
    write_json(&dir.join("a.parquet"), json!([{"x": 1, "s": ["a"]}]));
    write_json(
        &dir.join("b.parquet"),
        json!([{"x": 2, "s": ["b", "c"]}, {"x": 3, "s": []}]),
    );
    write_json(&dir.join("c.parquet"), json!([{"x": 1.5, "s": ["a"]}]));
    let err = read_parquet_dir(&dir, PartitionMode::Combined).unwrap_err();
    let Error::ParquetSchemaMismatch {
        path,
        first,
        expected,
        found,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (path, first),
        (&dir.join("c.parquet"), &dir.join("a.parquet"))
    );
    assert_eq!(
        expected,
        "StructuredTensorSpec(shape=(None,), fields={\"x\": TensorSpec(shape=(None,), \
         dtype=int64), \"s\": TensorSpec(shape=(None, None), dtype=string)})"
    );
    assert!(found.contains("dtype=float64"), "{found}");
    assert_eq!(
        err.to_string(),
        format!(
            "Parquet file {} has type {found}, but the first file {} has {expected}",
            dir.join("c.parquet").display(),
            dir.join("a.parquet").display()
        )
    );
}

#[test]
fn files_are_read_in_sorted_order_and_hidden_ones_skipped() {
    let dir = scratch("sorted");
    write_json(&dir.join("part-10.parquet"), json!([{"x": 10}]));
    write_json(&dir.join("part-02.parquet"), json!([{"x": 2}, {"x": 3}]));
    write_json(&dir.join("sub/part-00.parquet"), json!([{"x": 4}]));
    std::fs::write(dir.join("_SUCCESS"), "").unwrap();
    std::fs::write(dir.join(".part-99.parquet.partial"), "half").unwrap();
    std::fs::create_dir_all(dir.join("_temporary")).unwrap();
    std::fs::write(dir.join("_temporary/junk"), "junk").unwrap();
    let all = read_parquet_dir(&dir, PartitionMode::Combined).unwrap();
    assert_eq!(
        all[0].to_json(),
        json!([{"x": 2}, {"x": 3}, {"x": 10}, {"x": 4}])
    );
    let each = read_parquet_dir(&dir, PartitionMode::PerFile).unwrap();
    let json: Vec<Value> = each.iter().map(|t| t.to_json()).collect();
    assert_eq!(
        json,
        vec![
            json!([{"x": 2}, {"x": 3}]),
            json!([{"x": 10}]),
            json!([{"x": 4}])
        ]
    );
}

#[test]
fn partition_key_types_follow_all_their_values() {
    let dir = scratch("key-types");
    write_json(&dir.join("n=7/c=x/p.parquet"), json!([{"v": 1}]));
    write_json(&dir.join("n=-3/c=12/p.parquet"), json!([{"v": 2}]));
    write_json(&dir.join("n=5/c=1.5/p.parquet"), json!([{"v": 3}]));
    let all = read_parquet_dir(&dir, PartitionMode::Combined).unwrap();
    assert_eq!(
        all[0].to_json(),
        json!([
            {"v": 2, "n": -3, "c": "12"},
            {"v": 3, "n": 5, "c": "1.5"},
            {"v": 1, "n": 7, "c": "x"}
        ])
    );
}

#[test]
fn directory_errors_are_clear() {
    let dir = scratch("dir-errors");
    // empty
    assert_eq!(
        read_parquet_dir(&dir, PartitionMode::Combined).unwrap_err(),
        Error::ParquetDirEmpty { dir: dir.clone() }
    );
    assert_eq!(
        Error::ParquetDirEmpty { dir: dir.clone() }.to_string(),
        format!(
            "Parquet directory {} holds no data files (names starting with '.' or '_' are skipped)",
            dir.display()
        )
    );
    // missing
    let missing = dir.join("absent");
    let err = read_parquet_dir(&missing, PartitionMode::Combined).unwrap_err();
    assert!(
        matches!(&err, Error::Ragged(ragged_core::Error::Io { path, operation: "list", .. }) if *path == missing),
        "{err:?}"
    );
    // different keys in different files
    write_json(&dir.join("a=1/p.parquet"), json!([{"v": 1}]));
    write_json(&dir.join("b=2/p.parquet"), json!([{"v": 2}]));
    assert_eq!(
        read_parquet_dir(&dir, PartitionMode::PerFile).unwrap_err(),
        Error::HivePartition {
            path: dir.join("b=2/p.parquet"),
            problem: format!(
                "partition keys [b] differ from those of {} ([a])",
                dir.join("a=1/p.parquet").display()
            )
        }
    );
    std::fs::remove_dir_all(dir.join("b=2")).unwrap();
    // a key that is also a column
    write_json(&dir.join("a=2/p.parquet"), json!([{"a": 2}]));
    assert_eq!(
        read_parquet_dir(&dir, PartitionMode::Combined)
            .unwrap_err()
            .to_string(),
        format!(
            "hive partitions at {}: the partition key 'a' is also a column of the file",
            dir.join("a=2/p.parquet").display()
        )
    );
    std::fs::remove_dir_all(dir.join("a=2")).unwrap();
    // null and broken partition values, bad key names
    for (segment, problem) in [
        (
            "a=__HIVE_DEFAULT_PARTITION__",
            "partition key 'a' is null; StructuredTensor values hold no nulls",
        ),
        (
            "a=%zz",
            "partition value '%zz' is not valid percent-encoded UTF-8",
        ),
        (
            "9a=1",
            "partition key '9a' is no valid field name (^[a-zA-Z][a-zA-Z0-9_]*$)",
        ),
    ] {
        write_json(&dir.join(segment).join("p.parquet"), json!([{"v": 3}]));
        assert_eq!(
            read_parquet_dir(&dir, PartitionMode::Combined).unwrap_err(),
            Error::HivePartition {
                path: dir.join(segment),
                problem: problem.to_string()
            },
            "{segment}"
        );
        std::fs::remove_dir_all(dir.join(segment)).unwrap();
    }
    // a corrupt file in a directory names that file
    std::fs::write(dir.join("a=1/q.parquet"), "not parquet").unwrap();
    let err = read_parquet_dir(&dir, PartitionMode::Combined).unwrap_err();
    assert!(
        matches!(&err, Error::Ragged(ragged_core::Error::Parquet { path, .. }) if *path == dir.join("a=1/q.parquet")),
        "{err:?}"
    );
}

#[test]
fn partitioned_write_groups_rows_and_reads_back() {
    let dir = scratch("partitioned-write").join("out");
    let rows = json!([
        {"year": 2024, "city": "Oslo", "t": 1.0, "e": ["a"]},
        {"year": 2023, "city": "São Paulo/SP", "t": 2.0, "e": []},
        {"year": 2024, "city": "Oslo", "t": 3.0, "e": ["b", "c"]},
        {"year": 2023, "city": "Oslo", "t": 4.0, "e": ["d"]}
    ]);
    let written = write_parquet_dir(&dir, &st(rows), &["year", "city"], &UNCOMPRESSED).unwrap();
    assert_eq!(
        written,
        vec![
            dir.join("year=2023/city=Oslo/part-0.parquet"),
            dir.join("year=2023/city=S%C3%A3o%20Paulo%2FSP/part-0.parquet"),
            dir.join("year=2024/city=Oslo/part-0.parquet"),
        ]
    );
    // the files hold the other fields only
    assert_eq!(
        read_parquet(&written[2]).unwrap().to_json(),
        json!([{"t": 1.0, "e": ["a"]}, {"t": 3.0, "e": ["b", "c"]}])
    );
    let back = read_parquet_dir(&dir, PartitionMode::Combined).unwrap();
    assert_eq!(
        back[0].to_json(),
        json!([
            {"year": 2023, "city": "Oslo", "t": 4.0, "e": ["d"]},
            {"year": 2023, "city": "São Paulo/SP", "t": 2.0, "e": []},
            {"year": 2024, "city": "Oslo", "t": 1.0, "e": ["a"]},
            {"year": 2024, "city": "Oslo", "t": 3.0, "e": ["b", "c"]}
        ])
    );
    // a second write into the same directory would mix old and new files
    assert_eq!(
        write_parquet_dir(
            &dir,
            &st(json!([{"year": 1, "v": 1}])),
            &["year"],
            &UNCOMPRESSED
        )
        .unwrap_err(),
        Error::HivePartition {
            path: dir.clone(),
            problem: "the directory to write is not empty".to_string()
        }
    );
    // partition fields must exist, be named once, and be int64 or string
    let other = scratch("partitioned-write-bad");
    assert_eq!(
        write_parquet_dir(
            &other,
            &st(json!([{"v": 1, "w": 1}])),
            &["w", "w"],
            &UNCOMPRESSED
        )
        .unwrap_err(),
        Error::HivePartition {
            path: other.clone(),
            problem: "partition field 'w' is named twice".to_string()
        }
    );
    assert_eq!(
        write_parquet_dir(&other, &st(json!([{"v": 1}])), &["w"], &UNCOMPRESSED).unwrap_err(),
        Error::FieldNotFound {
            path: FieldPath::from("w")
        }
    );
    assert_eq!(
        write_parquet_dir(
            &other,
            &st(json!([{"v": 1.5, "w": 1}])),
            &["v"],
            &UNCOMPRESSED
        )
        .unwrap_err(),
        Error::HivePartition {
            path: other.clone(),
            problem: "partition field 'v' has Arrow type Float64; partitions take rank-1 int64 \
                      or string fields"
                .to_string()
        }
    );
}

// ---- round trips over generated records ----

// SplitMix64 (the benchmarks' generator), driven by a proptest seed.
use benches::SplitMix64 as Rng;

/// A field type: a leaf (0 int64, 1 float64, 2 bool, 3 string) under `depth` lists, a
/// struct, or a list of structs.
enum Ty {
    Leaf(u64, usize),
    Struct(Vec<(String, Ty)>),
    ListOfStruct(Vec<(String, Ty)>),
}

fn gen_fields(rng: &mut Rng, budget: u32, at_least_one: bool) -> Vec<(String, Ty)> {
    let mut names = vec!["a", "b", "c1", "D_x", "e9", "nick_names"];
    let n = rng.below(4) as usize + usize::from(at_least_one);
    (0..n)
        .map(|_| {
            let name = names.remove(rng.below(names.len() as u64) as usize);
            let choice = if budget == 0 { 0 } else { rng.below(5) };
            let ty = match choice {
                0..=2 => Ty::Leaf(rng.below(4), rng.below(3) as usize),
                3 => Ty::Struct(gen_fields(rng, budget - 1, true)),
                _ => Ty::ListOfStruct(gen_fields(rng, budget - 1, true)),
            };
            (name.to_string(), ty)
        })
        .collect()
}

fn gen_scalar(rng: &mut Rng, leaf: u64) -> Value {
    match leaf {
        0 => json!(rng.next_u64() as i64 >> rng.below(64)),
        1 => json!((rng.next_u64() as i64 >> 11) as f64 / 1024.0),
        2 => json!(rng.below(2) == 1),
        _ => json!(["", "Bob", "Жозефина", "😀 x", "a\"b\\c"][rng.below(5) as usize]),
    }
}

fn gen_value(rng: &mut Rng, ty: &Ty) -> Value {
    fn nested(rng: &mut Rng, depth: usize, leaf: u64) -> Value {
        if depth == 0 {
            return gen_scalar(rng, leaf);
        }
        Value::Array(
            (0..rng.below(4))
                .map(|_| nested(rng, depth - 1, leaf))
                .collect(),
        )
    }
    match ty {
        Ty::Leaf(leaf, depth) => nested(rng, *depth, *leaf),
        Ty::Struct(fields) => gen_object(rng, fields),
        Ty::ListOfStruct(fields) => {
            Value::Array((0..rng.below(4)).map(|_| gen_object(rng, fields)).collect())
        }
    }
}

fn gen_object(rng: &mut Rng, fields: &[(String, Ty)]) -> Value {
    let mut map = Map::new();
    for (name, ty) in fields {
        map.insert(name.clone(), gen_value(rng, ty));
    }
    Value::Object(map)
}

/// 1 to 8 records of one generated schema (at least one field: a Parquet file has columns).
fn gen_records(seed: u64) -> Value {
    let mut rng = Rng::new(seed);
    let fields = gen_fields(&mut rng, 3, true);
    Value::Array(
        (0..1 + rng.below(8))
            .map(|_| gen_object(&mut rng, &fields))
            .collect(),
    )
}

/// The fixed seed of these property tests; `PROPTEST_RNG_SEED` runs another.
const PROPTEST_SEED: u64 = 0x5EED_2026_0011;

fn config() -> ProptestConfig {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(PROPTEST_SEED);
    eprintln!("proptest seed {seed} (set PROPTEST_RNG_SEED to run another)");
    ProptestConfig {
        cases: 48,
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// JSON -> tensor -> Arrow -> Parquet -> tensor -> JSON is the identity, for either
    /// codec and row groups of any size.
    #[test]
    fn json_round_trips_through_parquet(seed in any::<u64>(), row_group_size in 1usize..4, snappy in any::<bool>()) {
        let v = gen_records(seed);
        let tensor = st(v.clone());
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("parquet-tests").join("prop");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{seed}.parquet"));
        let options = ParquetOptions {
            row_group_size,
            compression: if snappy { Compression::Snappy } else { Compression::Uncompressed },
        };
        write_parquet(&path, &tensor, &options).unwrap();
        let back = read_parquet(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        prop_assert_eq!(back.to_json(), v);
        prop_assert_eq!(back, tensor);
    }
}
