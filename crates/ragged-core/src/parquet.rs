//! Parquet files (feature `parquet`): a `Ragged<T>` as one list column of a Parquet file,
//! through its Arrow form (`to_arrow` / `from_arrow`) and the `parquet` crate's Arrow writer
//! and reader; the write options shared with structured-tensor's Parquet files.
//!
//! ```text
//! Ragged<T> (n axes) <=> column `name`: List<..<List<T>>> (n - 1 lists), one row per idx0
//! ```

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::file::properties::WriterProperties;

use crate::arrow::ArrowValue;
use crate::error::Error;
use crate::ragged::Ragged;

/// The compression codec of the pages of a Parquet file we write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Compression {
    /// No compression.
    Uncompressed,
    /// Snappy, pyarrow's and Spark's default.
    #[default]
    Snappy,
}

/// How a Parquet file is written: the largest row group (in rows) and the compression.
/// The default is pyarrow's: row groups of up to 1,048,576 rows, Snappy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParquetOptions {
    /// The most rows per row group (at least 1); larger inputs are split into several.
    pub row_group_size: usize,
    /// The codec of every column.
    pub compression: Compression,
}

/// The default row group size, pyarrow's and the `parquet` crate's: 1,048,576 rows.
pub const DEFAULT_ROW_GROUP_SIZE: usize = 1 << 20;

impl Default for ParquetOptions {
    fn default() -> ParquetOptions {
        ParquetOptions {
            row_group_size: DEFAULT_ROW_GROUP_SIZE,
            compression: Compression::Snappy,
        }
    }
}

impl ParquetOptions {
    /// The `parquet` crate's writer properties for these options; a `row_group_size` of 0 is
    /// [`Error::InvalidArgument`].
    pub fn writer_properties(&self) -> Result<WriterProperties, Error> {
        if self.row_group_size == 0 {
            return Err(Error::InvalidArgument {
                what: "Parquet row_group_size (at least 1)",
                value: 0,
            });
        }
        let compression = match self.compression {
            Compression::Uncompressed => parquet::basic::Compression::UNCOMPRESSED,
            Compression::Snappy => parquet::basic::Compression::SNAPPY,
        };
        Ok(WriterProperties::builder()
            .set_max_row_group_row_count(Some(self.row_group_size))
            .set_compression(compression)
            .build())
    }
}

/// `Error::Io` for a failed `operation` on `path`.
pub(crate) fn io_error(path: &Path, operation: &'static str, err: &io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        operation,
        message: err.to_string(),
    }
}

/// `Error::Parquet` for a file the `parquet` crate could not read or write.
pub(crate) fn parquet_error(path: &Path, message: impl ToString) -> Error {
    Error::Parquet {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// The hidden file a write goes to before it is renamed onto `path`: a reader of the
/// directory (ours, pyarrow's, Spark's) skips names that start with a dot, and a failed
/// write never leaves a half-written file under the final name.
pub fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.partial"))
}

/// Writes `batch` to a new Parquet file at `path` (replacing one that exists), through a
/// hidden partial file renamed into place once complete.
pub fn write_batch_parquet(
    path: &Path,
    batch: &RecordBatch,
    options: &ParquetOptions,
) -> Result<(), Error> {
    let properties = options.writer_properties()?;
    let partial = partial_path(path);
    let file = File::create(&partial).map_err(|err| io_error(path, "create", &err))?;
    let written = ArrowWriter::try_new(file, batch.schema(), Some(properties))
        .and_then(|mut writer| {
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

/// Runs `read`, turning a panic inside the `parquet` crate (which a corrupt file must never
/// cause, but a decoder bug could) into `Error::Parquet` for `path` (converted into `E`, the
/// caller's error type).
pub fn catch_reader_panic<R, E: From<Error>>(
    path: &Path,
    read: impl FnOnce() -> Result<R, E>,
) -> Result<R, E> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the decoder panicked".to_string());
        Err(parquet_error(path, format!("corrupt file: {message}")).into())
    })
}

/// Writes `ragged` to a Parquet file at `path` as one column named `column`: a list column
/// nested `num_axes() - 1` deep (one row per element of axis 0), leaves of `T`'s Arrow type.
///
/// ```
/// use ragged_core::{read_ragged_parquet, write_ragged_parquet, ParquetOptions, Ragged};
/// let dir = std::env::temp_dir().join(format!("ragged-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("tokens.parquet");
/// let r: Ragged<i32> = "[ [ 1 2 ] [ ] [ 3 ] ]".parse().unwrap();
/// write_ragged_parquet(&path, &r, "tokens", &ParquetOptions::default()).unwrap();
/// let back: Ragged<i32> = read_ragged_parquet(&path, "tokens").unwrap();
/// assert_eq!(back.to_vec_vec(), vec![vec![1, 2], vec![], vec![3]]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn write_ragged_parquet<T: ArrowValue>(
    path: impl AsRef<Path>,
    ragged: &Ragged<T>,
    column: &str,
    options: &ParquetOptions,
) -> Result<(), Error> {
    let path = path.as_ref();
    let list: ArrayRef = Arc::new(ragged.to_arrow());
    let schema = Schema::new(vec![Field::new(column, list.data_type().clone(), false)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![list])
        .map_err(|err| parquet_error(path, err))?;
    write_batch_parquet(path, &batch, options)
}

/// Reads the list column `column` of the Parquet file at `path` as a ragged array (any file
/// whose column is lists, `List` or `LargeList`, nested over `T`'s Arrow type, such as one
/// pyarrow writes); the other columns are not read. A missing file is [`Error::Io`], a file
/// that is not Parquet or is corrupt [`Error::Parquet`], a missing column
/// [`Error::ParquetColumn`] (listing those there are), a column of another type or with nulls
/// [`Error::InParquetColumn`] around the Arrow conversion's error.
pub fn read_ragged_parquet<T: ArrowValue>(
    path: impl AsRef<Path>,
    column: &str,
) -> Result<Ragged<T>, Error> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|err| io_error(path, "open", &err))?;
    let array = catch_reader_panic(path, || read_column(path, file, column))?;
    Ragged::from_arrow(array).map_err(|source| Error::InParquetColumn {
        path: path.to_path_buf(),
        column: column.to_string(),
        source: Box::new(source),
    })
}

/// The column `column` of a Parquet file, all row groups concatenated.
fn read_column(path: &Path, file: File, column: &str) -> Result<ArrayRef, Error> {
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|err| parquet_error(path, err))?;
    let schema = builder.schema().clone();
    let Some(index) = schema.fields().iter().position(|f| f.name() == column) else {
        return Err(Error::ParquetColumn {
            path: path.to_path_buf(),
            column: column.to_string(),
            found: schema.fields().iter().map(|f| f.name().clone()).collect(),
        });
    };
    let mask = ProjectionMask::roots(builder.parquet_schema(), [index]);
    let reader = with_read_batch_size(builder.with_projection(mask))
        .build()
        .map_err(|err| parquet_error(path, err))?;
    let mut chunks = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|err| parquet_error(path, err))?;
        chunks.push(batch.column(0).clone());
    }
    match chunks.len() {
        0 => Ok(arrow_array::new_empty_array(
            schema.field(index).data_type(),
        )),
        1 => Ok(chunks.pop().expect("one chunk")),
        _ => {
            let parts: Vec<&dyn Array> = chunks.iter().map(|c| c.as_ref()).collect();
            arrow_select::concat::concat(&parts).map_err(|err| parquet_error(path, err))
        }
    }
}

/// `builder` reading batches of [`READ_BATCH_ROWS`] rows, or of the file's row count when
/// smaller; a footer claiming no rows keeps the reader's default (a batch size of 0 would
/// read nothing of row groups that hold rows after all).
pub fn with_read_batch_size<T>(
    builder: parquet::arrow::arrow_reader::ArrowReaderBuilder<T>,
) -> parquet::arrow::arrow_reader::ArrowReaderBuilder<T> {
    if builder.metadata().file_metadata().num_rows() > 0 {
        builder.with_batch_size(READ_BATCH_ROWS)
    } else {
        builder
    }
}

/// Rows per batch when reading: the default row group size, so that a file of one row group
/// comes back as one batch (no concatenation); the reader clips it to the file's row count.
pub const READ_BATCH_ROWS: usize = DEFAULT_ROW_GROUP_SIZE;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_row_group_size_is_an_error() {
        let options = ParquetOptions {
            row_group_size: 0,
            compression: Compression::Uncompressed,
        };
        assert_eq!(
            options.writer_properties().unwrap_err(),
            Error::InvalidArgument {
                what: "Parquet row_group_size (at least 1)",
                value: 0
            }
        );
    }

    #[test]
    fn partial_path_is_hidden_beside_the_target() {
        assert_eq!(
            partial_path(Path::new("out/a=1/part-0.parquet")),
            Path::new("out/a=1/.part-0.parquet.partial")
        );
    }

    #[test]
    fn panics_in_the_reader_become_parquet_errors() {
        let got: Result<(), Error> =
            catch_reader_panic(Path::new("x.parquet"), || panic!("bad page header"));
        assert_eq!(
            got.unwrap_err(),
            Error::Parquet {
                path: PathBuf::from("x.parquet"),
                message: "corrupt file: bad page header".to_string()
            }
        );
    }
}
