//! Hostile Parquet files and directories: declared sizes beyond the file, duplicate
//! column, child and partition key names, and directory trees whose symbolic links loop. Each file is built here, from a small valid file the
//! `parquet` crate writes, with the one hostile value patched in; each must give a clear
//! error, never an abort, a panic or a hang.
#![cfg(feature = "parquet")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use serde_json::{json, Value};
use structured_tensor::{
    parquet_dir_files, read_parquet, read_parquet_dir, write_parquet, write_parquet_with, Codec,
    Error, FieldPath, ParquetOptions, PartitionMode, StructuredTensor, WriteOptions,
};

/// A fresh, empty scratch directory under cargo's temporary directory for tests.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("parquet-hostile")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn st(v: Value) -> StructuredTensor {
    StructuredTensor::from_json(&v).unwrap()
}

/// The bytes of a small valid file of one `int64` column `a`, Snappy (pyarrow's default).
fn small_file(dir: &Path) -> Vec<u8> {
    let path = dir.join("valid.parquet");
    let options = ParquetOptions::default();
    write_parquet(&path, &st(json!([{"a": 1}, {"a": 2}, {"a": 3}])), &options).unwrap();
    std::fs::read(&path).unwrap()
}

/// The bytes of `small_file`'s records written with `codec`.
fn small_file_with(dir: &Path, codec: Codec) -> Vec<u8> {
    let path = dir.join("valid.parquet");
    let options = WriteOptions::default().with_codec(codec);
    write_parquet_with(&path, &st(json!([{"a": 1}, {"a": 2}, {"a": 3}])), &options).unwrap();
    std::fs::read(&path).unwrap()
}

// ---- a minimal Thrift compact protocol walker, written from the protocol's spec ----

/// An unsigned LEB128 varint at `bytes[at..]`: (value, length).
fn varint(bytes: &[u8], at: usize) -> (u64, usize) {
    let mut value = 0u64;
    for (i, &b) in bytes[at..].iter().enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return (value, i + 1);
        }
    }
    panic!("unterminated varint at {at}")
}

/// The varint encoding of `value`'s zigzag form (Thrift's i32 and i64).
fn zigzag_varint(value: i64) -> Vec<u8> {
    let mut v = ((value << 1) ^ (value >> 63)) as u64;
    let mut out = Vec::new();
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

/// An integer field found by [`walk_struct`]: its field-id path, value start and end.
#[derive(Debug, Clone)]
struct IntField {
    path: Vec<i16>,
    start: usize,
    end: usize,
}

/// Walks the struct at `bytes[at..]`, recording every integer field under `path`; returns
/// the position after its stop byte.
fn walk_struct(bytes: &[u8], mut at: usize, path: &[i16], out: &mut Vec<IntField>) -> usize {
    let mut id = 0i16;
    loop {
        let header = bytes[at];
        at += 1;
        if header == 0 {
            return at;
        }
        let kind = header & 0x0f;
        id = if header >> 4 == 0 {
            let (v, n) = varint(bytes, at);
            at += n;
            ((v >> 1) as i16) ^ -((v & 1) as i16)
        } else {
            id + i16::from(header >> 4)
        };
        let mut field_path = path.to_vec();
        field_path.push(id);
        at = walk_value(bytes, at, kind, &field_path, out);
    }
}

fn walk_value(bytes: &[u8], at: usize, kind: u8, path: &[i16], out: &mut Vec<IntField>) -> usize {
    match kind {
        1 | 2 => at,
        3 => at + 1,
        4..=6 => {
            let (_, n) = varint(bytes, at);
            out.push(IntField {
                path: path.to_vec(),
                start: at,
                end: at + n,
            });
            at + n
        }
        7 => at + 8,
        8 => {
            let (len, n) = varint(bytes, at);
            at + n + len as usize
        }
        9 | 10 => {
            let header = bytes[at];
            let mut at = at + 1;
            let count = if header >> 4 == 15 {
                let (v, n) = varint(bytes, at);
                at += n;
                v
            } else {
                u64::from(header >> 4)
            };
            for _ in 0..count {
                at = match header & 0x0f {
                    1 | 2 => at + 1,
                    element => walk_value(bytes, at, element, path, out),
                };
            }
            at
        }
        12 => walk_struct(bytes, at, path, out),
        other => panic!("Thrift type {other} at {at}"),
    }
}

/// The first integer field at `path`.
fn find(fields: &[IntField], path: &[i16]) -> IntField {
    fields
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no field {path:?} in {fields:?}"))
        .clone()
}

/// `file` with the first page's declared decompressed size (`PageHeader` field 2) set to
/// `size`. The file keeps its length, so no offset in the footer moves: the header grows by
/// the longer varint, and the page's compressed size and body shrink by as many bytes.
fn with_first_page_uncompressed_size(file: &[u8], size: i32) -> Vec<u8> {
    assert_eq!(&file[..4], b"PAR1");
    let mut fields = Vec::new();
    let header_end = walk_struct(file, 4, &[], &mut fields);
    let uncompressed = find(&fields, &[2]);
    let compressed = find(&fields, &[3]);
    let new_size = zigzag_varint(i64::from(size));
    let grow = new_size.len() - (uncompressed.end - uncompressed.start);
    let (old_compressed, _) = varint(file, compressed.start);
    let old_compressed = (old_compressed >> 1) as usize;
    let new_compressed = zigzag_varint((old_compressed - grow) as i64);
    assert_eq!(new_compressed.len(), compressed.end - compressed.start);
    let body_end = header_end + old_compressed;
    let mut out = file[..uncompressed.start].to_vec();
    out.extend(&new_size);
    out.extend(&file[uncompressed.end..compressed.start]);
    out.extend(&new_compressed);
    out.extend(&file[compressed.end..body_end - grow]);
    out.extend(&file[body_end..]);
    assert_eq!(out.len(), file.len());
    out
}

/// `file` with the first column chunk's `total_compressed_size` (`FileMetaData.row_groups`
/// -> `RowGroup.columns` -> `ColumnChunk.meta_data` -> field 7) set to `size`; the footer
/// length at the end is updated for the longer varint.
fn with_first_chunk_size(file: &[u8], size: i64) -> Vec<u8> {
    let n = file.len();
    let footer_len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
    let footer_start = n - 8 - footer_len;
    let mut fields = Vec::new();
    let end = walk_struct(file, footer_start, &[], &mut fields);
    assert_eq!(end, n - 8);
    let field = find(&fields, &[4, 1, 3, 7]);
    let new_size = zigzag_varint(size);
    let mut out = file[..field.start].to_vec();
    out.extend(&new_size);
    out.extend(&file[field.end..n - 8]);
    let new_footer_len = footer_len + new_size.len() - (field.end - field.start);
    out.extend((new_footer_len as u32).to_le_bytes());
    out.extend(b"PAR1");
    out
}

#[track_caller]
fn parquet_message(err: Error) -> String {
    match err {
        Error::Ragged(ragged_core::Error::Parquet { message, .. }) => message,
        other => panic!("expected a Parquet error, got {other:?}"),
    }
}

// ---- declared sizes ----

#[test]
fn the_walker_finds_the_sizes_of_a_valid_file() {
    // the model of the patches: the first page of a three-row int64 Snappy column is its
    // dictionary page, which the reader accepts as written
    let dir = scratch("walker");
    let file = small_file(&dir);
    let mut fields = Vec::new();
    walk_struct(&file, 4, &[], &mut fields);
    let (kind, _) = varint(&file, find(&fields, &[1]).start);
    assert_eq!(kind >> 1, 2, "DICTIONARY_PAGE");
    // the same sizes written back give the same bytes
    let (uncompressed, _) = varint(&file, find(&fields, &[2]).start);
    let same = with_first_page_uncompressed_size(&file, (uncompressed >> 1) as i32);
    assert_eq!(same, file);
    let path = dir.join("same.parquet");
    std::fs::write(&path, &same).unwrap();
    assert_eq!(
        read_parquet(&path).unwrap().to_json(),
        json!([{"a": 1}, {"a": 2}, {"a": 3}])
    );
}

#[test]
fn a_page_declaring_2_pow_31_minus_1_bytes_is_an_error_before_any_allocation() {
    let dir = scratch("page-size");
    let hostile = with_first_page_uncompressed_size(&small_file(&dir), i32::MAX);
    let path = dir.join("hostile.parquet");
    std::fs::write(&path, &hostile).unwrap();
    let started = Instant::now();
    let message = parquet_message(read_parquet(&path).unwrap_err());
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        message
            .starts_with("row group 0, column 'a': the page at byte 4 declares 2147483647 bytes"),
        "{message}"
    );
    assert!(message.contains("at most 22 times"), "{message}");
}

#[test]
fn gzip_and_zstd_pages_declaring_more_than_their_codec_expands_are_errors() {
    // deflate expands at most 1032 times, zstd 32,768 times (an RLE block); a 2^31-1 byte
    // page from a few compressed bytes is past both, and refused before the allocation
    for (codec, name, factor) in [
        (Codec::Gzip(6), "gzip", 1032),
        (Codec::Zstd(3), "zstd", 32_768),
    ] {
        let dir = scratch(&format!("page-size-{name}"));
        let hostile = with_first_page_uncompressed_size(&small_file_with(&dir, codec), i32::MAX);
        let path = dir.join("hostile.parquet");
        std::fs::write(&path, &hostile).unwrap();
        let started = Instant::now();
        let message = parquet_message(read_parquet(&path).unwrap_err());
        assert!(started.elapsed() < Duration::from_secs(5), "{name}");
        assert!(
            message.starts_with("row group 0, column 'a': the page at byte 4 declares 2147483647"),
            "{name}: {message}"
        );
        assert!(
            message.contains(&format!(
                "more than {name} can expand them (at most {factor} times)"
            )),
            "{name}: {message}"
        );
    }
}

#[test]
fn a_page_header_whose_fields_run_past_the_end_is_an_error_not_a_hang() {
    // found by fuzzing: a 494-byte file whose page header's fields run past the end of the
    // file; the parquet crate's reader skipped them reading nothing, over and over. Its
    // footer also sends a field with another wire type than Parquet's IDL gives it, which
    // the footer check (added later) refuses first; the page check and `StrictFile` stay
    // behind it
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/parquet/thrift_past_the_end.parquet");
    let started = Instant::now();
    let message = parquet_message(read_parquet(&path).unwrap_err());
    assert!(started.elapsed() < Duration::from_secs(5), "{message}");
    assert_eq!(
        message,
        "the footer is corrupt: FileMetaData.schema (field 2): element 1: SchemaElement \
         field 3 (repetition_type) has the wire type 3, where Parquet's IDL has 5 (i32)"
    );
    let err = ragged_core::read_ragged_parquet::<i64>(&path, "a").unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "{err}");
}

#[test]
fn a_schema_declaring_more_children_than_it_has_is_an_error_not_an_abort() {
    // found by fuzzing: a 424-byte file whose root schema element declares 2^31 - 1
    // children; the parquet crate reserved room for them all (16 GiB) before looking
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/parquet/schema_children_past_the_end.parquet");
    let expected = "schema element 0 of the footer declares 2147483647 children, but the \
                    schema ends 1 element after it";
    let message = parquet_message(read_parquet(&path).unwrap_err());
    assert_eq!(message, expected);
    let err = ragged_core::read_ragged_parquet::<i64>(&path, "a").unwrap_err();
    assert!(err.to_string().contains(expected), "{err}");
}

#[test]
fn a_negative_page_size_is_an_error() {
    let dir = scratch("page-negative");
    let hostile = with_first_page_uncompressed_size(&small_file(&dir), -1);
    let path = dir.join("hostile.parquet");
    std::fs::write(&path, &hostile).unwrap();
    let message = parquet_message(read_parquet(&path).unwrap_err());
    assert!(message.contains("declares a negative size"), "{message}");
}

#[test]
fn a_column_chunk_beyond_the_file_is_an_error() {
    let dir = scratch("chunk-size");
    let file = small_file(&dir);
    for size in [1i64 << 40, i64::MAX, -1] {
        let hostile = with_first_chunk_size(&file, size);
        let path = dir.join("hostile.parquet");
        std::fs::write(&path, &hostile).unwrap();
        let message = parquet_message(read_parquet(&path).unwrap_err());
        assert!(
            message.starts_with(&format!(
                "row group 0, column 'a': the column chunk declares {size} bytes at byte 4"
            )),
            "{size}: {message}"
        );
    }
    // reaching into the footer by one byte is refused too
    let footer_start = {
        let n = file.len();
        n - 8 - u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize
    };
    let hostile = with_first_chunk_size(&file, footer_start as i64 - 4 + 1);
    let path = dir.join("into-footer.parquet");
    std::fs::write(&path, &hostile).unwrap();
    let message = parquet_message(read_parquet(&path).unwrap_err());
    assert!(
        message.contains("reaches outside the file's data"),
        "{message}"
    );
}

#[test]
fn ragged_core_reads_check_declared_sizes_too() {
    let dir = scratch("ragged");
    let path = dir.join("tokens.parquet");
    let r: ragged_core::Ragged<i64> = "[ [ 1 2 ] [ ] [ 3 ] ]".parse().unwrap();
    ragged_core::write_ragged_parquet(&path, &r, "tokens", &ParquetOptions::default()).unwrap();
    let hostile = with_first_page_uncompressed_size(&std::fs::read(&path).unwrap(), i32::MAX);
    std::fs::write(&path, &hostile).unwrap();
    let err = ragged_core::read_ragged_parquet::<i64>(&path, "tokens").unwrap_err();
    let ragged_core::Error::Parquet { message, .. } = err else {
        panic!("{err:?}")
    };
    assert!(message.contains("declares 2147483647 bytes"), "{message}");
}

#[test]
fn every_page_size_patched_is_an_error_or_the_data() {
    // every decompressed size from 0 to 4095 in the first page, in every codec: the file
    // reads back exactly as written, or is a Parquet error; never a panic
    let dir = scratch("page-sweep");
    let expected = json!([{"a": 1}, {"a": 2}, {"a": 3}]);
    for codec in [
        Codec::Snappy,
        Codec::Uncompressed,
        Codec::Gzip(6),
        Codec::Zstd(3),
    ] {
        let file = small_file_with(&dir, codec);
        for size in (0..4096).step_by(7) {
            let path = dir.join("patched.parquet");
            std::fs::write(&path, with_first_page_uncompressed_size(&file, size)).unwrap();
            match read_parquet(&path) {
                Ok(got) => assert_eq!(got.to_json(), expected, "{codec:?} {size}"),
                Err(Error::Ragged(ragged_core::Error::Parquet { .. })) => {}
                Err(other) => panic!("{codec:?} {size}: {other:?}"),
            }
        }
    }
}

// ---- duplicate names ----

fn write_batch(path: &Path, batch: &RecordBatch) {
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
}

fn int64(values: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(values.to_vec()))
}

#[test]
fn two_columns_of_one_name_are_an_error_naming_it_and_the_file() {
    let dir = scratch("duplicate-columns");
    let path = dir.join("two-a.parquet");
    let schema = Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("a", DataType::Int64, false),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![int64(&[1]), int64(&[2])]).unwrap();
    write_batch(&path, &batch);
    let err = read_parquet(&path).unwrap_err();
    assert_eq!(
        err,
        Error::InParquetFile {
            path: path.clone(),
            source: Box::new(Error::Arrow {
                path: FieldPath::root(),
                problem: "the field name 'a' appears twice".to_string()
            })
        }
    );
    assert!(err.to_string().contains("two-a.parquet"), "{err}");
    // and the Arrow conversion itself refuses the batch
    assert!(StructuredTensor::from_record_batch(&batch).is_err());
}

#[test]
fn two_struct_children_of_one_name_are_an_error_naming_the_path() {
    let dir = scratch("duplicate-children");
    let path = dir.join("s-two-x.parquet");
    let children = Fields::from(vec![
        Field::new("x", DataType::Int64, false),
        Field::new("x", DataType::Int64, false),
    ]);
    let s = StructArray::new(children.clone(), vec![int64(&[1, 2]), int64(&[3, 4])], None);
    let schema = Schema::new(vec![
        Field::new("b", DataType::Int64, false),
        Field::new("s", DataType::Struct(children), false),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![int64(&[5, 6]), Arc::new(s)]).unwrap();
    write_batch(&path, &batch);
    let err = read_parquet(&path).unwrap_err();
    assert_eq!(
        err,
        Error::InParquetFile {
            path: path.clone(),
            source: Box::new(Error::Arrow {
                path: FieldPath::from("s"),
                problem: "the field name 'x' appears twice".to_string()
            })
        }
    );
}

#[test]
fn a_partition_key_twice_on_a_path_is_an_error_naming_both_values() {
    let dir = scratch("duplicate-keys");
    let leaf = dir.join("k=1").join("k=2");
    std::fs::create_dir_all(&leaf).unwrap();
    write_parquet(
        leaf.join("part-0.parquet"),
        &st(json!([{"a": 1}])),
        &ParquetOptions::default(),
    )
    .unwrap();
    let expected = Error::HivePartition {
        path: leaf.clone(),
        problem: "partition key 'k' appears twice on the path (k=1, then k=2)".to_string(),
    };
    assert_eq!(parquet_dir_files(&dir).unwrap_err(), expected);
    assert_eq!(
        read_parquet_dir(&dir, PartitionMode::Combined).unwrap_err(),
        expected
    );
    // the same value twice is refused as well
    let dir = scratch("duplicate-keys-same");
    let leaf = dir.join("k=1").join("j=0").join("k=1");
    std::fs::create_dir_all(&leaf).unwrap();
    let err = parquet_dir_files(&dir).unwrap_err();
    assert!(err.to_string().contains("'k' appears twice"), "{err}");
}

// ---- symbolic links ----

#[cfg(unix)]
#[test]
fn two_links_to_the_directory_itself_end_at_once_with_an_error() {
    let dir = scratch("links-to-self");
    write_parquet(
        dir.join("part-0.parquet"),
        &st(json!([{"a": 1}])),
        &ParquetOptions::default(),
    )
    .unwrap();
    std::os::unix::fs::symlink(".", dir.join("l1")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("l2")).unwrap();
    let started = Instant::now();
    let err = read_parquet_dir(&dir, PartitionMode::Combined).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        err,
        Error::ParquetDirRevisit {
            path: dir.join("l1"),
            first: dir.clone()
        }
    );
    assert!(err.to_string().contains("through a symbolic link"), "{err}");
    assert_eq!(parquet_dir_files(&dir).unwrap_err(), err);
}

#[cfg(unix)]
#[test]
fn a_link_to_an_ancestor_deeper_down_is_an_error_naming_both_paths() {
    let dir = scratch("link-to-ancestor");
    let day = dir.join("day=1");
    std::fs::create_dir_all(day.join("inner")).unwrap();
    std::os::unix::fs::symlink("../..", day.join("inner").join("up")).unwrap();
    let err = parquet_dir_files(&dir).unwrap_err();
    assert_eq!(
        err,
        Error::ParquetDirRevisit {
            path: day.join("inner").join("up"),
            first: dir.clone()
        }
    );
}

#[cfg(unix)]
#[test]
fn links_to_files_and_to_directories_outside_the_tree_are_followed() {
    let dir = scratch("links-followed");
    let outside = scratch("links-followed-data");
    write_parquet(
        outside.join("part-0.parquet"),
        &st(json!([{"a": 7}])),
        &ParquetOptions::default(),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("day=1")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("day=2")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("part-0.parquet"),
        dir.join("day=1").join("f.parquet"),
    )
    .unwrap();
    let got = read_parquet_dir(&dir, PartitionMode::Combined).unwrap();
    assert_eq!(
        got[0].to_json(),
        json!([{"a": 7, "day": 1}, {"a": 7, "day": 2}])
    );
}

#[cfg(unix)]
#[test]
fn a_second_link_to_one_directory_is_refused_so_work_stays_linear() {
    // d0 holds two links to d1, d1 two links to d2, ...: no loop, but 2^20 paths if every
    // path were walked; each directory is listed once, so the second link is refused
    let dir = scratch("link-diamonds");
    for level in 0..20 {
        std::fs::create_dir_all(dir.join(format!("d{level}"))).unwrap();
    }
    for level in 0..19 {
        for link in ["a", "b"] {
            std::os::unix::fs::symlink(
                dir.join(format!("d{}", level + 1)),
                dir.join(format!("d{level}")).join(link),
            )
            .unwrap();
        }
    }
    let started = Instant::now();
    let err = parquet_dir_files(&dir).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(err, Error::ParquetDirRevisit { .. }), "{err:?}");
}
