//! Parquet files and hive-partitioned directories of them (feature `parquet`), built on the
//! Arrow conversion: a rank-1 `StructuredTensor` is a `RecordBatch` (one column per field,
//! one row per struct), which the `parquet` crate's Arrow writer and reader store.
//!
//! ```text
//! write_parquet:     tensor => to_record_batch => ArrowWriter => file
//! read_parquet:      file => footer (schema checked first) => record batches => concat => from_record_batch
//! read_parquet_dir:  dir/k=v/../part-0.parquet, sorted => each file + key columns => one tensor or one per file
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    Array as ArrowArray, ArrayRef, Int64Array, RecordBatch, RecordBatchReader, StringArray,
    UInt32Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use rayon::prelude::*;

use ragged_core::parquet::{
    catch_reader_panic, check_declared_sizes, with_read_batch_size, write_batch_parquet,
    ParquetOptions, StrictFile,
};

use crate::arrow::ArrowOptions;
use crate::error::{is_valid_field_name, Error};
use crate::spec::{FieldSpec, Spec};
use crate::structured::{FieldValue, StructuredTensor};
use crate::values::DType;

/// How [`read_parquet_dir`] returns the files of a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PartitionMode {
    /// One tensor: the files' rows one after another, in sorted path order (pyarrow's
    /// `pq.read_table(dir)` / `ds.dataset(dir, partitioning="hive")`).
    Combined,
    /// One tensor per file, in sorted path order; concatenated they are `Combined`'s tensor.
    PerFile,
}

/// One data file of a hive-partitioned directory and the partition keys of its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParquetPart {
    /// The file.
    pub path: PathBuf,
    /// `(key, value)` of each `key=value` directory between the root and the file, outermost
    /// first, values percent-decoded.
    pub keys: Vec<(String, String)>,
}

/// `Error::Ragged(Io)` for a failed `operation` on `path`.
pub(crate) fn io_error(path: &Path, operation: &'static str, err: &std::io::Error) -> Error {
    Error::Ragged(ragged_core::Error::Io {
        path: path.to_path_buf(),
        operation,
        message: err.to_string(),
    })
}

/// `Error::Ragged(Parquet)` for a file the `parquet` crate could not read or write.
pub(crate) fn parquet_error(path: &Path, message: impl ToString) -> Error {
    Error::Ragged(ragged_core::Error::Parquet {
        path: path.to_path_buf(),
        message: message.to_string(),
    })
}

/// An error of the Arrow conversion, placed in the file it happened in.
pub(crate) fn in_file(path: &Path) -> impl Fn(Error) -> Error + '_ {
    move |source| Error::InParquetFile {
        path: path.to_path_buf(),
        source: Box::new(source),
    }
}

/// Writes a rank-1 `StructuredTensor` to a Parquet file at `path` (replacing one that
/// exists): one column per field, one row per struct, nested structs as Parquet groups,
/// ragged dimensions as lists, row groups of at most `options.row_group_size` rows. The
/// file is written under a hidden name beside `path` and renamed into place when complete.
/// Another rank is [`Error::Arrow`] (merge or partition it first); I/O failures are
/// `Error::Ragged(ragged_core::Error::Io { .. })`.
///
/// ```
/// use structured_tensor::{read_parquet, write_parquet, ParquetOptions, StructuredTensor};
/// let dir = std::env::temp_dir().join(format!("st-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("people.parquet");
/// let people = serde_json::json!([{"age": 12, "shoes": {"sizes": [8.0, 7.5]}}, {"age": 82, "shoes": {"sizes": []}}]);
/// let st = StructuredTensor::from_json(&people)?;
/// write_parquet(&path, &st, &ParquetOptions::default())?;
/// assert_eq!(read_parquet(&path)?.to_json(), people);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), structured_tensor::Error>(())
/// ```
pub fn write_parquet(
    path: impl AsRef<Path>,
    st: &StructuredTensor,
    options: &ParquetOptions,
) -> Result<(), Error> {
    let batch = st.to_record_batch()?;
    if batch.num_columns() == 0 {
        // no columns: the row count goes in the footer's key-value metadata
        let options = crate::parquet_io::WriteOptions::from(*options);
        return crate::parquet_io::write_batch(path.as_ref(), &batch, &options);
    }
    write_batch_parquet(path.as_ref(), &batch, options)?;
    Ok(())
}

/// Reads a Parquet file (ours, pyarrow's, Spark's, ...) as a rank-1 `StructuredTensor`: one
/// field per column, one struct per row, all row groups in order. The schema is checked
/// from the footer before any row is read: a column we cannot hold is
/// [`Error::InParquetFile`] around the Arrow conversion's error, which names the column's
/// path and type; so is a null. A missing file is `Error::Ragged(Io)` (with the path), a
/// file that is not Parquet or is corrupt `Error::Ragged(Parquet)` (the `parquet` crate's
/// message, with the path).
pub fn read_parquet(path: impl AsRef<Path>) -> Result<StructuredTensor, Error> {
    read_file(path.as_ref(), &[])
}

/// The columns a file holds (`schema`) followed by the partition key columns.
fn schema_with_keys(schema: &Schema, keys: &[(String, KeyColumn)]) -> SchemaRef {
    let mut fields: Vec<Arc<Field>> = schema.fields().iter().cloned().collect();
    fields.extend(
        keys.iter()
            .map(|(name, column)| Arc::new(Field::new(name, column.data_type(), false))),
    );
    Arc::new(Schema::new(fields))
}

/// The type of a partition key column: integers when every value of the key is one (as
/// pyarrow infers them), strings otherwise.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KeyColumn {
    Int(i64),
    Str(String),
}

impl KeyColumn {
    fn data_type(&self) -> DataType {
        match self {
            KeyColumn::Int(_) => DataType::Int64,
            KeyColumn::Str(_) => DataType::Utf8,
        }
    }

    /// The value repeated `n` times.
    fn column(&self, n: usize) -> ArrayRef {
        match self {
            KeyColumn::Int(v) => Arc::new(Int64Array::from_value(*v, n)),
            KeyColumn::Str(v) => Arc::new(StringArray::from_iter_values(std::iter::repeat_n(v, n))),
        }
    }
}

/// Reads the Parquet file at `path` as a tensor, with the constant `keys` columns as
/// fields; checks first, from the footer alone, that the columns (keys included) convert
/// to a `StructuredTensor`, and that no key is also a column of the file.
fn read_file(path: &Path, keys: &[(String, KeyColumn)]) -> Result<StructuredTensor, Error> {
    read_file_with(path, keys, &ArrowOptions::default())
}

/// [`read_file`] under `options`.
pub(crate) fn read_file_with(
    path: &Path,
    keys: &[(String, KeyColumn)],
    options: &ArrowOptions,
) -> Result<StructuredTensor, Error> {
    let file = File::open(path).map_err(|err| io_error(path, "open", &err))?;
    catch_reader_panic(path, || read_opened(path, file, keys, options))
}

/// The columns of a file are decoded and converted in parallel, one task per top-level
/// column (pyarrow's `read_table` also reads columns on several threads); each task opens
/// the file itself and reuses the footer parsed here.
fn read_opened(
    path: &Path,
    file: File,
    keys: &[(String, KeyColumn)],
    options: &ArrowOptions,
) -> Result<StructuredTensor, Error> {
    let probe = file
        .try_clone()
        .map_err(|err| io_error(path, "open", &err))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(StrictFile::with_checked_footer(path, file)?)
            .map_err(|err| parquet_error(path, err))?;
    check_declared_sizes(path, &probe, builder.metadata())?;
    drop(probe);
    let file_schema = builder.schema().clone();
    for (name, _) in keys {
        if file_schema.field_with_name(name).is_ok() {
            return Err(Error::HivePartition {
                path: path.to_path_buf(),
                problem: format!("the partition key '{name}' is also a column of the file"),
            });
        }
    }
    if file_schema.fields().is_empty() && keys.is_empty() {
        // a struct array with rows and no fields: the footer alone holds its row count
        let meta = builder.metadata().file_metadata();
        let ours = meta.key_value_metadata().and_then(|kv| {
            kv.iter()
                .find(|e| e.key == crate::parquet_io::NUM_ROWS_KEY)
                .and_then(|e| e.value.as_deref()?.parse::<i64>().ok())
        });
        let n = ours.unwrap_or(meta.num_rows());
        let n = usize::try_from(n)
            .map_err(|_| parquet_error(path, format!("the footer declares {n} rows")))?;
        return StructuredTensor::from_shape(1, n, Vec::new()).map_err(in_file(path));
    }
    let schema = schema_with_keys(&file_schema, keys);
    StructuredTensor::from_record_batch_with_options(
        &RecordBatch::new_empty(schema.clone()),
        options,
    )
    .map_err(in_file(path))?;
    if file_schema.fields().len() < 2 {
        let batch = read_all(path, builder)?;
        let n = batch.num_rows();
        let mut columns = batch.columns().to_vec();
        columns.extend(keys.iter().map(|(_, key)| key.column(n)));
        let batch =
            RecordBatch::try_new(schema, columns).map_err(|err| parquet_error(path, err))?;
        return StructuredTensor::from_record_batch_with_options(&batch, options)
            .map_err(in_file(path));
    }
    let footer =
        ArrowReaderMetadata::try_new(builder.metadata().clone(), ArrowReaderOptions::new())
            .map_err(|err| parquet_error(path, err))?;
    drop(builder);
    let read: Vec<Result<(Arc<Field>, ArrayRef), Error>> = (0..file_schema.fields().len())
        .into_par_iter()
        .map(|index| {
            let file = File::open(path).map_err(|err| io_error(path, "open", &err))?;
            let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
                StrictFile::new(file),
                footer.clone(),
            );
            let mask = ProjectionMask::roots(builder.parquet_schema(), [index]);
            let batch = read_all(path, builder.with_projection(mask))?;
            if batch.num_columns() != 1 {
                return Err(parquet_error(
                    path,
                    format!("column {index} read as {} columns", batch.num_columns()),
                ));
            }
            Ok((file_schema.fields()[index].clone(), batch.column(0).clone()))
        })
        .collect();
    let mut columns = read.into_iter().collect::<Result<Vec<_>, Error>>()?;
    let n = columns[0].1.len();
    if let Some((field, column)) = columns.iter().find(|(_, c)| c.len() != n) {
        return Err(parquet_error(
            path,
            format!(
                "column '{}' has {} rows, column '{}' {n}",
                field.name(),
                column.len(),
                columns[0].0.name()
            ),
        ));
    }
    for (name, key) in keys {
        columns.push((
            Arc::new(Field::new(name, key.data_type(), false)),
            key.column(n),
        ));
    }
    let fields: Vec<Result<(String, FieldValue), Error>> = columns
        .into_par_iter()
        .map(|(field, column)| {
            let name = field.name().clone();
            let batch = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![column])
                .map_err(|err| parquet_error(path, err))?;
            let one = StructuredTensor::from_record_batch_with_options(&batch, options)
                .map_err(in_file(path))?;
            let value = one.fields().get(&name).cloned().ok_or_else(|| {
                parquet_error(path, format!("column '{name}' did not become a field"))
            })?;
            Ok((name, value))
        })
        .collect();
    let fields = fields.into_iter().collect::<Result<Vec<_>, Error>>()?;
    if options.any_field_names {
        // the names were allowed by the conversion; the shape dtype is the widest
        let wide = fields.iter().any(|(_, v)| v.shape_dtype() == DType::I64);
        let dtype = if wide { DType::I64 } else { DType::I32 };
        let fields = fields
            .into_iter()
            .map(|(k, v)| Ok((k, v.with_shape_dtype(dtype)?)))
            .collect::<Result<_, Error>>()
            .map_err(in_file(path))?;
        return Ok(StructuredTensor::from_parts_unchecked(1, n, Vec::new(), fields).tagged(dtype));
    }
    StructuredTensor::from_fields(fields, &[Some(n)], Some(n), None).map_err(in_file(path))
}

/// Every row of the file `builder` reads, as one batch (row groups concatenated).
fn read_all(
    path: &Path,
    builder: ParquetRecordBatchReaderBuilder<StrictFile>,
) -> Result<RecordBatch, Error> {
    let reader = with_read_batch_size(builder)
        .build()
        .map_err(|err| parquet_error(path, err))?;
    // the projected columns' schema
    let schema = reader.schema();
    let mut batches = Vec::new();
    for batch in reader {
        batches.push(batch.map_err(|err| parquet_error(path, err))?);
    }
    match batches.len() {
        0 => Ok(RecordBatch::new_empty(schema)),
        1 => Ok(batches.pop().expect("one batch")),
        _ => arrow_select::concat::concat_batches(&schema, &batches)
            .map_err(|err| parquet_error(path, err)),
    }
}

/// The data files under `dir`, in sorted path order, with the `key=value` partition keys of
/// their paths (pyarrow's and Spark's hive layout). Names starting with `.` or `_` (hidden
/// files, `_SUCCESS`, `_metadata`, our unfinished writes) are skipped, as pyarrow skips
/// them; a directory without `=` in its name adds no key. A value is percent-decoded
/// (`a%20b` is `a b`); pyarrow's null marker `__HIVE_DEFAULT_PARTITION__` is
/// [`Error::HivePartition`] (a tensor holds no nulls), so is a key that is no valid field
/// name, and a key named twice on one path (`k=1/k=2/`). Symbolic links are followed, but
/// each directory is listed once: a link that leads to a directory already reached (an
/// ancestor, such as a link to `.`, or another directory of the tree) is
/// [`Error::ParquetDirRevisit`], naming both paths, so a loop of links ends at once.
pub fn parquet_dir_files(dir: impl AsRef<Path>) -> Result<Vec<ParquetPart>, Error> {
    let dir = dir.as_ref();
    let mut parts = Vec::new();
    let mut visited = HashMap::new();
    visited.insert(dir_id(dir)?, dir.to_path_buf());
    collect_files(dir, &mut Vec::new(), &mut visited, &mut parts)?;
    Ok(parts)
}

/// What tells two paths to one directory apart from two directories: the device and inode.
#[cfg(unix)]
type DirId = (u64, u64);
/// What tells two paths to one directory apart from two directories: the canonical path.
#[cfg(not(unix))]
type DirId = PathBuf;

/// The identity of the directory at `path` (symbolic links followed).
fn dir_id(path: &Path) -> Result<DirId, Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path).map_err(|err| io_error(path, "list", &err))?;
        Ok((metadata.dev(), metadata.ino()))
    }
    #[cfg(not(unix))]
    {
        std::fs::canonicalize(path).map_err(|err| io_error(path, "list", &err))
    }
}

fn collect_files(
    dir: &Path,
    keys: &mut Vec<(String, String)>,
    visited: &mut HashMap<DirId, PathBuf>,
    parts: &mut Vec<ParquetPart>,
) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(|err| io_error(dir, "list", &err))?;
    let mut children = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|err| io_error(dir, "list", &err))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        let path = entry.path();
        // follows symbolic links, as pyarrow's local file system does
        let is_dir = path.is_dir();
        children.push((name, path, is_dir));
    }
    children.sort();
    for (name, path, is_dir) in children {
        if !is_dir {
            parts.push(ParquetPart {
                path,
                keys: keys.clone(),
            });
            continue;
        }
        // every directory is listed once, so links cannot make the walk loop or multiply
        if let Some(first) = visited.insert(dir_id(&path)?, path.clone()) {
            return Err(Error::ParquetDirRevisit { path, first });
        }
        let Some((key, value)) = name.split_once('=') else {
            collect_files(&path, keys, visited, parts)?;
            continue;
        };
        if !is_valid_field_name(key) {
            return Err(Error::HivePartition {
                path,
                problem: format!(
                    "partition key '{key}' is no valid field name (^[a-zA-Z][a-zA-Z0-9_]*$)"
                ),
            });
        }
        if value == "__HIVE_DEFAULT_PARTITION__" {
            return Err(Error::HivePartition {
                path,
                problem: format!(
                    "partition key '{key}' is null; StructuredTensor values hold no nulls"
                ),
            });
        }
        let value = percent_decode(value).ok_or_else(|| Error::HivePartition {
            path: path.clone(),
            problem: format!("partition value '{value}' is not valid percent-encoded UTF-8"),
        })?;
        if let Some((_, outer)) = keys.iter().find(|(k, _)| k == key) {
            return Err(Error::HivePartition {
                path,
                problem: format!(
                    "partition key '{key}' appears twice on the path ({key}={outer}, then \
                     {key}={value})"
                ),
            });
        }
        keys.push((key.to_string(), value));
        collect_files(&path, keys, visited, parts)?;
        keys.pop();
    }
    Ok(())
}

/// `%XX` escapes decoded; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Every byte but the unreserved ones of URIs (`A-Z a-z 0-9 - . _ ~`) as `%XX`, as pyarrow
/// writes partition values.
pub(crate) fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The partition key columns of every part: the same keys in the same order everywhere,
/// each an integer column when all its values are integers, else a string column.
pub(crate) fn key_columns(parts: &[ParquetPart]) -> Result<Vec<Vec<(String, KeyColumn)>>, Error> {
    let first = &parts[0];
    for part in parts {
        let names: Vec<&str> = part.keys.iter().map(|(k, _)| k.as_str()).collect();
        let expected: Vec<&str> = first.keys.iter().map(|(k, _)| k.as_str()).collect();
        if names != expected {
            return Err(Error::HivePartition {
                path: part.path.clone(),
                problem: format!(
                    "partition keys [{}] differ from those of {} ([{}])",
                    names.join(", "),
                    first.path.display(),
                    expected.join(", ")
                ),
            });
        }
    }
    let integer: Vec<bool> = (0..first.keys.len())
        .map(|k| parts.iter().all(|p| p.keys[k].1.parse::<i64>().is_ok()))
        .collect();
    Ok(parts
        .iter()
        .map(|part| {
            part.keys
                .iter()
                .zip(&integer)
                .map(|((name, value), &is_int)| {
                    let column = match value.parse::<i64>() {
                        Ok(v) if is_int => KeyColumn::Int(v),
                        _ => KeyColumn::Str(value.clone()),
                    };
                    (name.clone(), column)
                })
                .collect()
        })
        .collect())
}

/// `spec` with every size left out: each dimension unknown, and a leaf a `TensorSpec` of its
/// rank and dtype whether its data happen to be ragged or uniform (a file whose lists all
/// have one length reads as a dense dimension). The type every file of a directory shares.
fn without_sizes(spec: &Spec) -> Spec {
    fn field(spec: &FieldSpec) -> FieldSpec {
        match spec {
            FieldSpec::Tensor { shape, dtype } | FieldSpec::Ragged { shape, dtype, .. } => {
                FieldSpec::Tensor {
                    shape: vec![None; shape.len()],
                    dtype: *dtype,
                }
            }
            FieldSpec::Struct(s) => FieldSpec::Struct(without_sizes(s)),
            FieldSpec::Nullable(inner) => FieldSpec::Nullable(Box::new(field(inner))),
        }
    }
    Spec {
        shape: vec![None; spec.shape.len()],
        fields: spec
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), field(v)))
            .collect(),
    }
}

/// Reads every data file under `dir` (see [`parquet_dir_files`]) in sorted path order, each
/// with its partition keys as fields (pyarrow's dataset does the same): a key is an `int64`
/// field when every file's value of it is an integer, else a `string` field.
/// [`PartitionMode::Combined`] gives one tensor (a `Vec` of one), the rows of the files one
/// after another; [`PartitionMode::PerFile`] one tensor per file. The files are read in
/// parallel. Errors: an empty directory is [`Error::ParquetDirEmpty`]; files whose types
/// differ (keys included) [`Error::ParquetSchemaMismatch`], naming the file and the first
/// file; differing keys or a key that is also a column [`Error::HivePartition`]; and the
/// errors of [`read_parquet`], first file first.
pub fn read_parquet_dir(
    dir: impl AsRef<Path>,
    mode: PartitionMode,
) -> Result<Vec<StructuredTensor>, Error> {
    let (parts, read) = read_dir_files(dir.as_ref(), &ArrowOptions::default())?;
    let mut tensors = Vec::with_capacity(read.len());
    let mut expected: Option<Spec> = None;
    for (part, tensor) in parts.iter().zip(read) {
        let tensor = tensor?;
        let spec = without_sizes(&tensor.spec());
        match &expected {
            None => expected = Some(spec),
            Some(first) if *first != spec => {
                return Err(Error::ParquetSchemaMismatch {
                    path: part.path.clone(),
                    first: parts[0].path.clone(),
                    expected: first.to_string(),
                    found: spec.to_string(),
                })
            }
            Some(_) => {}
        }
        tensors.push(tensor);
    }
    combine(tensors, mode)
}

/// One file of a directory, read.
pub(crate) type FileRead = Result<StructuredTensor, Error>;

/// The data files under `dir` ([`parquet_dir_files`]; none is
/// [`Error::ParquetDirEmpty`]), each read in parallel under `options` with its partition
/// keys as fields, the results in the files' order.
pub(crate) fn read_dir_files(
    dir: &Path,
    options: &ArrowOptions,
) -> Result<(Vec<ParquetPart>, Vec<FileRead>), Error> {
    let parts = parquet_dir_files(dir)?;
    if parts.is_empty() {
        return Err(Error::ParquetDirEmpty {
            dir: dir.to_path_buf(),
        });
    }
    let keys = key_columns(&parts)?;
    let read = parts
        .par_iter()
        .zip(&keys)
        .map(|(part, keys)| read_file_with(&part.path, keys, options))
        .collect();
    Ok((parts, read))
}

/// The tensors of a directory's files as `mode` asks: one per file, or their rows joined.
pub(crate) fn combine(
    tensors: Vec<StructuredTensor>,
    mode: PartitionMode,
) -> Result<Vec<StructuredTensor>, Error> {
    match mode {
        PartitionMode::PerFile => Ok(tensors),
        PartitionMode::Combined if tensors.len() == 1 => Ok(tensors),
        PartitionMode::Combined => {
            let all: Vec<&StructuredTensor> = tensors.iter().collect();
            Ok(vec![StructuredTensor::concat(&all, 0)?])
        }
    }
}

/// Writes a rank-1 tensor as a hive-partitioned directory, as Spark's `partitionBy` and
/// pyarrow's `write_dataset(partitioning=..., partitioning_flavor="hive")` do: the rows
/// are grouped by the values of the fields `partition_by` (rank-1 `int64` or `string`
/// fields), each group written without those fields to
/// `dir/k1=v1/k2=v2/part-0.parquet` (values percent-encoded), groups in sorted order, rows
/// in their order within a group. `dir` must be empty or not exist
/// ([`Error::HivePartition`] otherwise: old files would mix with the new). Returns the files
/// written. [`read_parquet_dir`] reads it back (rows grouped by partition).
pub fn write_parquet_dir(
    dir: impl AsRef<Path>,
    st: &StructuredTensor,
    partition_by: &[&str],
    options: &ParquetOptions,
) -> Result<Vec<PathBuf>, Error> {
    let dir = dir.as_ref();
    if let Ok(mut entries) = std::fs::read_dir(dir) {
        if entries.next().is_some() {
            return Err(Error::HivePartition {
                path: dir.to_path_buf(),
                problem: "the directory to write is not empty".to_string(),
            });
        }
    }
    let groups = partition_groups(dir, st, partition_by)?;
    let mut written = Vec::with_capacity(groups.len());
    for (segment, group) in groups {
        let part_dir = dir.join(segment);
        std::fs::create_dir_all(&part_dir).map_err(|err| io_error(&part_dir, "create", &err))?;
        let path = part_dir.join("part-0.parquet");
        write_batch_parquet(&path, &group, options)?;
        written.push(path);
    }
    Ok(written)
}

/// The rows of `st` grouped by the values of the fields `partition_by`: each group's
/// directory (`k1=v1/k2=v2/`, values percent-encoded) and its rows without those fields,
/// groups in sorted order, rows in their order within a group.
pub(crate) fn partition_groups(
    dir: &Path,
    st: &StructuredTensor,
    partition_by: &[&str],
) -> Result<Vec<(String, RecordBatch)>, Error> {
    let batch = st.to_record_batch()?;
    for (i, key) in partition_by.iter().enumerate() {
        if partition_by[..i].contains(key) {
            return Err(Error::HivePartition {
                path: dir.to_path_buf(),
                problem: format!("partition field '{key}' is named twice"),
            });
        }
    }
    let mut segments_per_row: Vec<String> = vec![String::new(); batch.num_rows()];
    for &key in partition_by {
        let column = batch
            .column_by_name(key)
            .ok_or_else(|| Error::FieldNotFound {
                path: crate::error::FieldPath::from(key),
            })?;
        let values: Vec<String> = match column.data_type() {
            DataType::Int64 => column
                .as_primitive::<Int64Type>()
                .values()
                .iter()
                .map(|v| v.to_string())
                .collect(),
            DataType::Int32 => column
                .as_primitive::<Int32Type>()
                .values()
                .iter()
                .map(|v| v.to_string())
                .collect(),
            DataType::Utf8 => column
                .as_string::<i32>()
                .iter()
                .map(|v| percent_encode(v.unwrap_or_default()))
                .collect(),
            DataType::LargeUtf8 => column
                .as_string::<i64>()
                .iter()
                .map(|v| percent_encode(v.unwrap_or_default()))
                .collect(),
            other => {
                return Err(Error::HivePartition {
                    path: dir.to_path_buf(),
                    problem: format!(
                        "partition field '{key}' has Arrow type {other}; partitions take \
                         rank-1 int64 or string fields"
                    ),
                })
            }
        };
        for (segment, value) in segments_per_row.iter_mut().zip(values) {
            segment.push_str(key);
            segment.push('=');
            segment.push_str(&value);
            segment.push('/');
        }
    }
    let mut groups: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (row, segment) in segments_per_row.iter().enumerate() {
        let row = u32::try_from(row).map_err(|_| Error::HivePartition {
            path: dir.to_path_buf(),
            problem: format!(
                "{} rows are more than a partitioned write takes (2^32)",
                batch.num_rows()
            ),
        })?;
        groups.entry(segment).or_default().push(row);
    }
    let mut rest = batch.clone();
    for &key in partition_by {
        let index = rest
            .schema()
            .index_of(key)
            .expect("the key was found above");
        rest.remove_column(index);
    }
    let mut out = Vec::with_capacity(groups.len());
    for (segment, rows) in groups {
        let group = arrow_select::take::take_record_batch(&rest, &UInt32Array::from(rows))
            .map_err(|err| parquet_error(&dir.join(segment), err))?;
        out.push((segment.to_string(), group));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_coding_round_trips_and_rejects_broken_escapes() {
        assert_eq!(percent_encode("a b/c=d%é"), "a%20b%2Fc%3Dd%25%C3%A9");
        assert_eq!(
            percent_decode("a%20b%2Fc%3Dd%25%C3%A9").as_deref(),
            Some("a b/c=d%é")
        );
        assert_eq!(
            percent_decode("plain-1.5_~").as_deref(),
            Some("plain-1.5_~")
        );
        assert_eq!(percent_decode("a%2"), None);
        assert_eq!(percent_decode("a%zz"), None);
        assert_eq!(percent_decode("%FF"), None);
        assert_eq!(percent_decode("%e9%"), None);
        assert_eq!(percent_decode("%+1"), None);
    }

    #[test]
    fn sizes_are_left_out_of_directory_types() {
        let a =
            StructuredTensor::from_json(&serde_json::json!([{"x": [1], "s": {"y": 1.5}}])).unwrap();
        let b = StructuredTensor::from_json(
            &serde_json::json!([{"x": [], "s": {"y": 2.0}}, {"x": [2, 3], "s": {"y": 0.0}}]),
        )
        .unwrap();
        assert_ne!(a.spec(), b.spec());
        assert_eq!(without_sizes(&a.spec()), without_sizes(&b.spec()));
        let c = StructuredTensor::from_json(&serde_json::json!([{"x": [1.0], "s": {"y": 1.5}}]))
            .unwrap();
        assert_ne!(without_sizes(&a.spec()), without_sizes(&c.spec()));
        // uniform lists (a dense dimension) and ragged ones are one type
        let d = StructuredTensor::from_json(
            &serde_json::json!([{"x": [1], "s": {"y": 1.5}}, {"x": [2], "s": {"y": 1.5}}]),
        )
        .unwrap();
        assert_eq!(without_sizes(&a.spec()), without_sizes(&d.spec()));
        assert_eq!(
            without_sizes(&b.spec()).to_string(),
            "StructuredTensorSpec(shape=(None,), fields={\"x\": TensorSpec(shape=(None, None), \
             dtype=int64), \"s\": StructuredTensorSpec(shape=(None,), fields={\"y\": \
             TensorSpec(shape=(None,), dtype=float64)})})"
        );
    }
}
