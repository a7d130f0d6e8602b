//! Parquet files (feature `parquet`): pyarrow's golden file (written by structured-tensor's
//! `tests/golden/make_parquet.py`, whose values are written out here as the model), round
//! trips against a `Vec<Vec<..>>` model, row groups, and the errors.
#![cfg(feature = "parquet")]

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use proptest::prelude::*;
use ragged_core::{
    read_ragged_parquet, write_ragged_parquet, Compression, Error, ParquetOptions, Ragged,
};

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/ragged.parquet")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("ragged-parquet")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn pyarrow_list_columns_read_as_written() {
    let tokens: Ragged<i32> = read_ragged_parquet(golden(), "tokens").unwrap();
    assert_eq!(
        tokens.to_vec_vec(),
        vec![vec![1, 2, 3], vec![], vec![4], vec![i32::MIN, i32::MAX]]
    );
    let frames: Ragged<f32> = read_ragged_parquet(golden(), "frames").unwrap();
    assert_eq!(frames.num_axes(), 3);
    assert_eq!(
        frames.to_vec_vec_vec(),
        vec![
            vec![vec![0.5, 1.5], vec![]],
            vec![],
            vec![vec![2.25]],
            vec![vec![-1.0, 3.0, 1e-3]]
        ]
    );
}

#[test]
fn golden_errors_name_file_and_column() {
    let path = golden();
    let err = read_ragged_parquet::<i32>(&path, "nope").unwrap_err();
    assert_eq!(
        err,
        Error::ParquetColumn {
            path: path.clone(),
            column: "nope".to_string(),
            found: vec![
                "tokens".to_string(),
                "frames".to_string(),
                "ids".to_string(),
                "holes".to_string()
            ]
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "Parquet file {} has no column 'nope' (its columns: tokens, frames, ids, holes)",
            path.display()
        )
    );
    // not a list
    let err = read_ragged_parquet::<i64>(&path, "ids").unwrap_err();
    assert_eq!(
        err,
        Error::InParquetColumn {
            path: path.clone(),
            column: "ids".to_string(),
            source: Box::new(Error::ArrowType {
                axis: 0,
                expected: "a list (List or LargeList)".to_string(),
                found: "Int64".to_string()
            })
        }
    );
    // lists of another element type
    let err = read_ragged_parquet::<i64>(&path, "tokens").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Parquet file {}, column 'tokens': Arrow array at nesting level 1 has type Int32, \
             expected a list or Int64",
            path.display()
        )
    );
    // a null item: an error, never dropped
    assert_eq!(
        read_ragged_parquet::<i32>(&path, "holes").unwrap_err(),
        Error::InParquetColumn {
            path: path.clone(),
            column: "holes".to_string(),
            source: Box::new(Error::ArrowNull { axis: 1, index: 2 })
        }
    );
}

/// `file` with the root schema element's `num_children` (1, the byte after the root's name
/// `arrow_schema`, as the writer puts it) raised to `children`, and the footer length in
/// the tail raised to match the longer varint.
fn with_root_children(file: &[u8], children: i32) -> Vec<u8> {
    let mut name = vec![0x48, 12];
    name.extend_from_slice(b"arrow_schema");
    name.extend_from_slice(&[0x15, 0x02]);
    let at = file
        .windows(name.len())
        .rposition(|w| w == name)
        .expect("the root schema element, as the writer writes it")
        + name.len()
        - 1;
    let mut zigzag = ((children << 1) ^ (children >> 31)) as u32;
    let mut varint = Vec::new();
    while zigzag >= 0x80 {
        varint.push(zigzag as u8 | 0x80);
        zigzag >>= 7;
    }
    varint.push(zigzag as u8);
    let mut out = file[..at].to_vec();
    out.extend_from_slice(&varint);
    out.extend_from_slice(&file[at + 1..]);
    let tail = out.len() - 8;
    let footer_len = u32::from_le_bytes(out[tail..tail + 4].try_into().unwrap());
    let footer_len = footer_len + varint.len() as u32 - 1;
    out[tail..tail + 4].copy_from_slice(&footer_len.to_le_bytes());
    out
}

#[test]
fn a_schema_declaring_more_children_than_follow_is_an_error_not_an_abort() {
    let dir = scratch("children");
    let path = dir.join("small.parquet");
    let ragged = Ragged::from_nested(vec![vec![1i64, 2], vec![3]]).unwrap();
    write_ragged_parquet(&path, &ragged, "a", &ParquetOptions::default()).unwrap();
    let file = std::fs::read(&path).unwrap();
    // the file as written reads back, and so does one whose count is rewritten as is
    let same = dir.join("same.parquet");
    std::fs::write(&same, with_root_children(&file, 1)).unwrap();
    assert_eq!(read_ragged_parquet::<i64>(&same, "a").unwrap(), ragged);
    // the root, the list group, its repeated group and the leaf: three elements follow
    // the root, so 3 children pass this check (the parquet crate refuses them itself)
    let three = dir.join("three.parquet");
    std::fs::write(&three, with_root_children(&file, 3)).unwrap();
    let err = read_ragged_parquet::<i64>(&three, "a").unwrap_err();
    assert!(matches!(err, Error::Parquet { .. }), "{err:?}");
    // 2^31 - 1 children made the parquet crate reserve 16 GiB before looking for them
    for children in [4, 1000, i32::MAX] {
        let hostile = dir.join("hostile.parquet");
        std::fs::write(&hostile, with_root_children(&file, children)).unwrap();
        let err = read_ragged_parquet::<i64>(&hostile, "a").unwrap_err();
        assert_eq!(
            err,
            Error::Parquet {
                path: hostile.clone(),
                message: format!(
                    "schema element 0 of the footer declares {children} children, but the \
                     schema ends 3 elements after it"
                ),
            }
        );
    }
}

#[test]
fn missing_and_corrupt_files_are_clear_errors() {
    let dir = scratch("errors");
    let missing = dir.join("none.parquet");
    let err = read_ragged_parquet::<i32>(&missing, "x").unwrap_err();
    let Error::Io {
        path,
        operation,
        message,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((path, *operation), (&missing, "open"));
    assert_eq!(
        err.to_string(),
        format!("cannot open {}: {message}", missing.display())
    );
    let bytes = std::fs::read(golden()).unwrap();
    let bad = dir.join("bad.parquet");
    for len in (0..bytes.len()).step_by(11) {
        std::fs::write(&bad, &bytes[..len]).unwrap();
        let err = read_ragged_parquet::<i32>(&bad, "tokens").unwrap_err();
        assert!(
            matches!(&err, Error::Parquet { path, .. } if *path == bad),
            "truncated to {len}: {err:?}"
        );
    }
    for position in (0..bytes.len()).step_by(5) {
        let mut corrupt = bytes.clone();
        corrupt[position] ^= 0xA5;
        std::fs::write(&bad, &corrupt).unwrap();
        // an error or an array, never a panic
        let _ = read_ragged_parquet::<i32>(&bad, "tokens");
    }
}

#[test]
fn row_groups_split_and_read_back_in_order() {
    let dir = scratch("row-groups");
    let path = dir.join("r.parquet");
    let v: V2 = (0..10).map(|i| (0..i % 4).collect()).collect();
    let options = ParquetOptions {
        row_group_size: 3,
        compression: Compression::Uncompressed,
    };
    write_ragged_parquet(&path, &r2(&v), "rows", &options).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
    use parquet::file::reader::FileReader;
    let rows: Vec<i64> = reader
        .metadata()
        .row_groups()
        .iter()
        .map(|g| g.num_rows())
        .collect();
    assert_eq!(rows, vec![3, 3, 3, 1]);
    let back: Ragged<i32> = read_ragged_parquet(&path, "rows").unwrap();
    assert_eq!(back.to_vec_vec(), v);
}

#[test]
fn write_errors() {
    let dir = scratch("write-errors");
    let r = r2(&vec![vec![1]]);
    let path = dir.join("absent/x.parquet");
    let err = write_ragged_parquet(&path, &r, "x", &ParquetOptions::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Io { path: at, operation: "create", .. } if *at == path),
        "{err:?}"
    );
    let options = ParquetOptions {
        row_group_size: 0,
        compression: Compression::Snappy,
    };
    assert_eq!(
        write_ragged_parquet(dir.join("y.parquet"), &r, "x", &options).unwrap_err(),
        Error::InvalidArgument {
            what: "Parquet row_group_size (at least 1)",
            value: 0
        }
    );
    assert!(!dir.join("y.parquet").exists());
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn two_axes_round_trip(v in v2(), snappy in any::<bool>(), row_group_size in 1usize..5) {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ragged-parquet").join("prop2");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.parquet");
        let options = ParquetOptions {
            row_group_size,
            compression: if snappy { Compression::Snappy } else { Compression::Uncompressed },
        };
        write_ragged_parquet(&path, &r2(&v), "col", &options).unwrap();
        let back: Ragged<i32> = read_ragged_parquet(&path, "col").unwrap();
        prop_assert_eq!(back.to_vec_vec(), v);
    }

    #[test]
    fn three_axes_round_trip(v in v3()) {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ragged-parquet").join("prop3");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.parquet");
        write_ragged_parquet(&path, &r3(&v), "col", &ParquetOptions::default()).unwrap();
        let back: Ragged<i32> = read_ragged_parquet(&path, "col").unwrap();
        prop_assert_eq!(back.to_vec_vec_vec(), v);
    }
}

/// A one-row batch of one column `s0`: structs nested `depth` deep over an int64 leaf `x`.
fn nested_structs(depth: usize) -> arrow_array::RecordBatch {
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StructArray};
    use arrow_schema::{Field, Fields, Schema};
    use std::sync::Arc;
    let mut array: ArrayRef = Arc::new(Int64Array::from(vec![7]));
    let mut name = "x".to_string();
    for level in (0..depth).rev() {
        let field = Field::new(&name, array.data_type().clone(), false);
        array = Arc::new(StructArray::new(
            Fields::from(vec![field]),
            vec![array],
            None,
        ));
        name = format!("s{level}");
    }
    let schema = Schema::new(vec![Field::new(&name, array.data_type().clone(), false)]);
    RecordBatch::try_new(Arc::new(schema), vec![array]).unwrap()
}

#[test]
fn schemas_nested_to_the_limit_read_and_deeper_ones_are_refused() {
    // the root and 127 structs are 128 groups: the parquet crate builds that tree (by
    // recursion) within a test thread's stack, then refuses the file's embedded Arrow
    // schema as too deep for its flatbuffer reader: an error, not an overflow
    let dir = scratch("deep");
    let path = dir.join("deep.parquet");
    let options = ParquetOptions::default();
    assert_eq!(ragged_core::parquet::MAX_SCHEMA_DEPTH, 128);
    ragged_core::parquet::write_batch_parquet(&path, &nested_structs(127), &options).unwrap();
    let err = read_ragged_parquet::<i64>(&path, "s0").unwrap_err();
    assert!(
        matches!(&err, Error::Parquet { message, .. } if message.contains("DepthLimitReached")),
        "{err:?}"
    );
    // one struct more: refused before the crate builds it
    ragged_core::parquet::write_batch_parquet(&path, &nested_structs(128), &options).unwrap();
    let err = read_ragged_parquet::<i64>(&path, "s0").unwrap_err();
    assert_eq!(
        err,
        Error::Parquet {
            path: path.clone(),
            message: "schema element 128 of the footer opens a group nested deeper than 128"
                .to_string()
        }
    );
}
