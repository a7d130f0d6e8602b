//! Parquet for real-world data (feature `parquet`): every common codec on write
//! ([`Codec`]: Snappy, gzip, zstd), files read under a spec or with nulls and any field
//! name, a directory read under one unified spec, and partitioned writes that many
//! writers can share (a file-name stem, an append mode).

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::arrow::ArrowOptions;
use crate::error::{Error, FieldPath};
use crate::parquet::{
    combine, io_error, parquet_dir_files, parquet_error, read_dir_files, read_file_with,
    PartitionMode,
};
use crate::schema::{node_to_spec, unify, Node};
use crate::spec::Spec;
use crate::structured::{FieldValue, StructuredTensor};

/// The compression codec of every column written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Codec {
    /// No compression.
    Uncompressed,
    /// Snappy, pyarrow's and Spark's default.
    #[default]
    Snappy,
    /// gzip (deflate, a pure-Rust backend) at a level 0-9 (pyarrow's default is 6).
    Gzip(u32),
    /// zstd at a level 1-22 (polars' default codec, at level 3).
    Zstd(i32),
}

/// How Parquet files are written: row groups, codec, and for [`write_parquet_dir_with`]
/// the file-name stem and whether to append to an existing dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// The most rows per row group (at least 1).
    pub row_group_size: usize,
    /// The codec of every column.
    pub codec: Codec,
    /// The file name in each partition directory is `<stem>.parquet` (default `part-0`);
    /// give each writer its own stem so that writers never collide.
    pub file_stem: String,
    /// Write into a directory that already holds a dataset of the same partition keys;
    /// only a file of the same name is refused. Off: the directory must be empty.
    pub append: bool,
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            row_group_size: ragged_core::parquet::DEFAULT_ROW_GROUP_SIZE,
            codec: Codec::Snappy,
            file_stem: "part-0".to_string(),
            append: false,
        }
    }
}

impl WriteOptions {
    /// With `codec`.
    pub fn with_codec(mut self, codec: Codec) -> WriteOptions {
        self.codec = codec;
        self
    }

    /// With row groups of at most `rows` rows.
    pub fn with_row_group_size(mut self, rows: usize) -> WriteOptions {
        self.row_group_size = rows;
        self
    }

    /// With files named `<stem>.parquet`.
    pub fn with_file_stem(mut self, stem: impl Into<String>) -> WriteOptions {
        self.file_stem = stem.into();
        self
    }

    /// Appending to an existing dataset.
    pub fn with_append(mut self, append: bool) -> WriteOptions {
        self.append = append;
        self
    }

    fn properties(&self, path: &Path) -> Result<WriterProperties, Error> {
        if self.row_group_size == 0 {
            return Err(Error::Ragged(ragged_core::Error::InvalidArgument {
                what: "Parquet row_group_size (at least 1)",
                value: 0,
            }));
        }
        let compression = match self.codec {
            Codec::Uncompressed => Compression::UNCOMPRESSED,
            Codec::Snappy => Compression::SNAPPY,
            Codec::Gzip(level) => Compression::GZIP(
                GzipLevel::try_new(level).map_err(|err| parquet_error(path, err))?,
            ),
            Codec::Zstd(level) => Compression::ZSTD(
                ZstdLevel::try_new(level).map_err(|err| parquet_error(path, err))?,
            ),
        };
        Ok(WriterProperties::builder()
            .set_max_row_group_row_count(Some(self.row_group_size))
            .set_compression(compression)
            .build())
    }
}

impl From<ragged_core::ParquetOptions> for WriteOptions {
    fn from(options: ragged_core::ParquetOptions) -> WriteOptions {
        let codec = match options.compression {
            ragged_core::Compression::Uncompressed => Codec::Uncompressed,
            _ => Codec::Snappy,
        };
        WriteOptions {
            row_group_size: options.row_group_size,
            codec,
            ..WriteOptions::default()
        }
    }
}

/// The footer key that holds the row count of a file without columns.
pub(crate) const NUM_ROWS_KEY: &str = "structured_tensor.num_rows";

/// Writes `batch` to a hidden partial file beside `path`, renamed into place when done.
pub(crate) fn write_batch(
    path: &Path,
    batch: &RecordBatch,
    options: &WriteOptions,
) -> Result<(), Error> {
    let properties = options.properties(path)?;
    let partial = ragged_core::parquet::partial_path(path);
    let file = File::create(&partial).map_err(|err| io_error(path, "create", &err))?;
    let written = ArrowWriter::try_new(file, batch.schema(), Some(properties))
        .and_then(|mut writer| {
            if batch.num_columns() == 0 {
                // Parquet counts rows by their columns: a struct array without fields
                // keeps its row count here (read back by our reader)
                writer.append_key_value_metadata(KeyValue::new(
                    NUM_ROWS_KEY.to_string(),
                    batch.num_rows().to_string(),
                ));
            }
            writer.write(batch)?;
            writer.close()
        })
        .map_err(|err| parquet_error(path, err));
    if let Err(err) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(err);
    }
    std::fs::rename(&partial, path).map_err(|err| {
        let _ = std::fs::remove_file(&partial);
        io_error(path, "rename a finished write onto", &err)
    })
}

/// [`crate::write_parquet`] with any [`Codec`] (gzip and zstd too).
pub fn write_parquet_with(
    path: impl AsRef<Path>,
    st: &StructuredTensor,
    options: &WriteOptions,
) -> Result<(), Error> {
    let batch = st.to_record_batch()?;
    write_batch(path.as_ref(), &batch, options)
}

/// Reads a Parquet file under `options` (nulls, any field name; see [`ArrowOptions`]).
pub fn read_parquet_with_options(
    path: impl AsRef<Path>,
    options: &ArrowOptions,
) -> Result<StructuredTensor, Error> {
    read_file_with(path.as_ref(), &[], options)
}

/// Sets the file of a schema mismatch.
fn with_file(path: &Path) -> impl Fn(Error) -> Error + '_ {
    move |err| match err {
        Error::SchemaMismatch {
            path: field,
            expected,
            found,
            file: None,
        } => Error::SchemaMismatch {
            path: field,
            expected,
            found,
            file: Some(path.to_path_buf()),
        },
        other => other,
    }
}

/// Reads a Parquet file as `spec` says (nulls and any field name allowed; the result is
/// conformed to the spec by [`StructuredTensor::conform`]: an empty list takes the spec's
/// type, `int64` widens to `float64`, a column the spec has as nullable but the file
/// lacks is null). A mismatch is [`Error::SchemaMismatch`] naming the field path, both
/// types and the file.
pub fn read_parquet_with_spec(
    path: impl AsRef<Path>,
    spec: &Spec,
) -> Result<StructuredTensor, Error> {
    let path = path.as_ref();
    let st = read_file_with(path, &[], &ArrowOptions::permissive())?;
    st.conform(spec).map_err(with_file(path))
}

/// How a directory is read by [`read_parquet_dir_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DirReadOptions {
    /// Nulls and field names (see [`ArrowOptions`]).
    pub arrow: ArrowOptions,
    /// The spec every file is read as; `None`: the files' types unified.
    pub spec: Option<Spec>,
    /// With no spec: a column missing from some files is null there (else an error).
    pub allow_missing_columns: bool,
}

impl DirReadOptions {
    /// Nulls and any field name, missing columns allowed: what real datasets need.
    pub fn permissive() -> DirReadOptions {
        DirReadOptions {
            arrow: ArrowOptions::permissive(),
            spec: None,
            allow_missing_columns: true,
        }
    }

    /// Every file read as `spec`.
    pub fn with_spec(mut self, spec: Spec) -> DirReadOptions {
        self.spec = Some(spec);
        self
    }
}

/// [`crate::read_parquet_dir`] under one schema: every file is read (in parallel) with
/// `options.arrow`, then conformed to `options.spec` or, without one, to the files' types
/// unified (an empty list takes another file's type, `int64` widens to `float64`, a
/// nullable column in one file is nullable; missing columns by
/// `allow_missing_columns`). A file that does not fit is [`Error::SchemaMismatch`]
/// naming the field path, both types and the file.
pub fn read_parquet_dir_with(
    dir: impl AsRef<Path>,
    mode: PartitionMode,
    options: &DirReadOptions,
) -> Result<Vec<StructuredTensor>, Error> {
    let (parts, read) = read_dir_files(dir.as_ref(), &options.arrow)?;
    let tensors = read.into_iter().collect::<Result<Vec<_>, Error>>()?;
    let spec = match &options.spec {
        Some(s) => s.clone(),
        None => {
            let mut node: Option<Node> = None;
            for (part, st) in parts.iter().zip(&tensors) {
                let n = Node::of_field(&FieldValue::Struct(st.clone()), 0);
                node = Some(match node {
                    None => n,
                    Some(prev) => unify(prev, n, &FieldPath::root(), options.allow_missing_columns)
                        .map_err(with_file(&part.path))
                        .map_err(|e| match e {
                            Error::MissingKey { key, path } => Error::SchemaMismatch {
                                path: path.child(&key),
                                expected: "a column of the other files".to_string(),
                                found: "no such column".to_string(),
                                file: Some(part.path.clone()),
                            },
                            other => other,
                        })?,
                });
            }
            node_to_spec(&node.expect("one file at least"), 1)
        }
    };
    let conformed: Vec<StructuredTensor> = parts
        .iter()
        .zip(&tensors)
        .map(|(part, st)| st.conform(&spec).map_err(with_file(&part.path)))
        .collect::<Result<_, _>>()?;
    combine(conformed, mode)
}

/// [`crate::write_parquet_dir`] with any [`Codec`], files named `<file_stem>.parquet`,
/// and, with `append`, into a directory that already holds a dataset: its partition keys
/// must be `partition_by` (else the dataset could not be read as one), and a file that
/// would replace an existing one is refused before anything is written
/// ([`Error::HivePartition`] naming it). Returns the files written.
pub fn write_parquet_dir_with(
    dir: impl AsRef<Path>,
    st: &StructuredTensor,
    partition_by: &[&str],
    options: &WriteOptions,
) -> Result<Vec<PathBuf>, Error> {
    let dir = dir.as_ref();
    let stem = &options.file_stem;
    if stem.is_empty()
        || stem.starts_with('.')
        || stem.starts_with('_')
        || stem.contains('/')
        || stem.contains('\\')
    {
        return Err(Error::HivePartition {
            path: dir.to_path_buf(),
            problem: format!(
                "file stem {stem:?} must be a plain name not starting with '.' or '_' \
                 (readers skip those)"
            ),
        });
    }
    let non_empty = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some());
    if non_empty && !options.append {
        return Err(Error::HivePartition {
            path: dir.to_path_buf(),
            problem: "the directory to write is not empty (WriteOptions::with_append adds \
                      to a dataset)"
                .to_string(),
        });
    }
    if non_empty {
        for part in parquet_dir_files(dir)? {
            let names: Vec<&str> = part.keys.iter().map(|(k, _)| k.as_str()).collect();
            if names != partition_by {
                return Err(Error::HivePartition {
                    path: part.path.clone(),
                    problem: format!(
                        "the dataset is partitioned by {names:?}, this write by \
                         {partition_by:?}"
                    ),
                });
            }
        }
    }
    let groups = crate::parquet::partition_groups(dir, st, partition_by)?;
    let file_name = format!("{stem}.parquet");
    let targets: Vec<PathBuf> = groups
        .iter()
        .map(|(segment, _)| dir.join(segment).join(&file_name))
        .collect();
    if let Some(clash) = targets.iter().find(|p| p.exists()) {
        return Err(Error::HivePartition {
            path: clash.clone(),
            problem: "a file of this name is already in the dataset (give this writer \
                      another file stem)"
                .to_string(),
        });
    }
    let mut written = Vec::with_capacity(groups.len());
    for ((segment, group), path) in groups.into_iter().zip(targets) {
        let part_dir = dir.join(segment);
        std::fs::create_dir_all(&part_dir).map_err(|err| io_error(&part_dir, "create", &err))?;
        write_batch(&path, &group, options)?;
        written.push(path);
    }
    Ok(written)
}
