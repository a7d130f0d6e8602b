//! Parquet files (feature `parquet`): a `Ragged<T>` as one list column of a Parquet file,
//! through its Arrow form (`to_arrow` / `from_arrow`) and the `parquet` crate's Arrow writer
//! and reader; the write options shared with structured-tensor's Parquet files.
//!
//! ```text
//! Ragged<T> (n axes) <=> column `name`: List<..<List<T>>> (n - 1 lists), one row per idx0
//! ```

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::WriterProperties;

use crate::arrow::ArrowValue;
use crate::error::Error;
use crate::ragged::Ragged;

#[path = "parquet_footer.rs"]
mod footer;

pub use footer::MAX_SCHEMA_DEPTH;

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

/// A Parquet file opened for reading, whose readers take a read past the file's end as an
/// error where a `File`'s return no bytes. The `parquet` crate skips a Thrift field of a
/// page header by copying up to the field's declared length, and takes a short copy for
/// the whole field; a header whose fields ran past the end of the file made it read
/// nothing over and over, without end (a 494-byte file, found by fuzzing `parquet_read`).
/// Through this reader that header is a Parquet error.
#[derive(Debug)]
pub struct StrictFile(File);

impl StrictFile {
    /// Wraps an open file whose footer was checked already (a reader built from metadata
    /// that [`StrictFile::with_checked_footer`] let through).
    pub fn new(file: File) -> StrictFile {
        StrictFile(file)
    }

    /// Wraps an open file after checking what its footer declares that the `parquet` crate
    /// would allocate by before checking it itself ([`check_footer`]): read a file's
    /// metadata only through a reader made here.
    pub fn with_checked_footer(path: &Path, file: File) -> Result<StrictFile, Error> {
        check_footer(path, &file)?;
        Ok(StrictFile(file))
    }
}

/// Checks a Parquet file's footer before the `parquet` crate parses it: the footer is walked
/// by Parquet's IDL with the allocation-free Thrift reader of the page checks, so that every
/// count the crate would reserve by, or loop over, was bounded first. A known field must
/// come with the wire type the IDL gives it (the crate reads it by the IDL whatever came, so
/// a walk by wire types could stand elsewhere in the footer than the crate); every list
/// count and binary length must fit in the bytes left; every group's `num_children` must
/// fit in the schema elements that follow it, together with the children its enclosing
/// groups still expect; groups nest at most [`MAX_SCHEMA_DEPTH`] deep. The crate reserves
/// a vector of `num_children` entries before it looks for them, so a 424-byte file
/// declaring 2^31 - 1 children asked for 16 GiB and aborted the process (found by fuzzing
/// `parquet_read`, as were skipped lists far longer than the footer and fields sent with
/// another wire type than the IDL's). A violation is [`Error::Parquet`] naming the place:
/// the struct, the field, both wire types, or the schema element and the counts.
pub fn check_footer(path: &Path, file: &File) -> Result<(), Error> {
    let (mut reader, file_len, start) = footer_reader(path, file)?;
    reader
        .seek(SeekFrom::Start(start))
        .map_err(|err| io_error(path, "read", &err))?;
    ThriftReader::new(&mut reader, file_len - 8 - start, "the footer")
        .file_meta_data()
        .map_err(|refusal| match refusal {
            footer::Refusal::Corrupt(problem) => {
                parquet_error(path, format!("the footer is corrupt: {problem}"))
            }
            footer::Refusal::Schema(message) => parquet_error(path, message),
        })
}

impl parquet::file::reader::Length for StrictFile {
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl parquet::file::reader::ChunkReader for StrictFile {
    type T = EndIsError<BufReader<File>>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        self.0.get_read(start).map(EndIsError)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        // reads exactly `length` bytes or fails
        self.0.get_bytes(start, length)
    }
}

/// A reader that fails with `UnexpectedEof` where the reader it wraps returns no bytes for
/// a non-empty buffer (see [`StrictFile`]).
#[derive(Debug)]
pub struct EndIsError<R>(R);

impl<R: Read> Read for EndIsError<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        if n == 0 && !buf.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a read past the end of the Parquet file",
            ));
        }
        Ok(n)
    }
}

/// The column `column` of a Parquet file, all row groups concatenated.
fn read_column(path: &Path, file: File, column: &str) -> Result<ArrayRef, Error> {
    let probe = file
        .try_clone()
        .map_err(|err| io_error(path, "open", &err))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(StrictFile::with_checked_footer(path, file)?)
            .map_err(|err| parquet_error(path, err))?;
    check_declared_sizes(path, &probe, builder.metadata())?;
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

/// The most a Snappy block can grow when decompressed: its longest element, a copy with a
/// two-byte offset, is 3 bytes that stand for 64 (so 64/3, rounded up).
pub const SNAPPY_MAX_EXPANSION: u64 = 22;

/// The most a gzip (deflate) stream can grow when decompressed: a 258-byte match costs at
/// least two bits in deflate's fixed or dynamic codes, which gives deflate's known limit of
/// 1032 to 1 (a gzip member's header and trailer only lower it).
pub const GZIP_MAX_EXPANSION: u64 = 1032;

/// The most a zstd frame can grow when decompressed: an RLE block is a 3-byte block header
/// and one byte standing for up to 128 KiB (a block's maximum size), so 131,072 / 4; every
/// other kind of block, and the frame header, expands less.
pub const ZSTD_MAX_EXPANSION: u64 = 32_768;

/// What the page walk checks in a chunk of `codec`: `Some(None)` for uncompressed pages (the
/// sizes only; nothing is decompressed), `Some(Some((factor, name)))` for a codec whose pages
/// may declare at most `factor` times their compressed size, and `None` for codecs this
/// build cannot decode (the `parquet` crate refuses their column chunks before it reads a
/// page, so they are not walked).
fn page_check(codec: parquet::basic::Compression) -> Option<Option<(u64, &'static str)>> {
    use parquet::basic::Compression as Codec;
    match codec {
        Codec::UNCOMPRESSED => Some(None),
        Codec::SNAPPY => Some(Some((SNAPPY_MAX_EXPANSION, "Snappy"))),
        Codec::GZIP(_) => Some(Some((GZIP_MAX_EXPANSION, "gzip"))),
        Codec::ZSTD(_) => Some(Some((ZSTD_MAX_EXPANSION, "zstd"))),
        _ => None,
    }
}

/// How deep the page header reader follows nested Thrift structs and lists before it calls
/// a header corrupt (a page header nests three deep: header, statistics, a value).
const THRIFT_MAX_DEPTH: u32 = 16;

/// Checks the sizes a Parquet file declares against the file itself, before the `parquet`
/// crate allocates by them (it reserves a column chunk's declared byte count, and a page's
/// declared decompressed size, up front). Each column chunk's byte range
/// (`dictionary_page_offset` or `data_page_offset`, `total_compressed_size`) must lie between
/// the leading magic and the footer; each page header in it (read here with a small Thrift
/// reader that allocates nothing) must declare a non-negative compressed size that fits in
/// what is left of the chunk, and a decompressed size no larger than its codec can expand
/// the compressed one: [`SNAPPY_MAX_EXPANSION`], [`GZIP_MAX_EXPANSION`] or
/// [`ZSTD_MAX_EXPANSION`] times. Uncompressed chunks, and chunks of codecs this build cannot
/// decode (which the `parquet` crate refuses before reading a page), are checked for their
/// range only. So a page never takes more memory than 22 times the file's size for Snappy,
/// 1,032 times for gzip and 32,768 times for zstd. A violation is [`Error::Parquet`] naming
/// the row group, the column, the byte offset, both sizes and the codec.
pub fn check_declared_sizes(
    path: &Path,
    file: &File,
    metadata: &ParquetMetaData,
) -> Result<(), Error> {
    let (mut reader, _, data_end) = footer_reader(path, file)?;
    for (group_idx, group) in metadata.row_groups().iter().enumerate() {
        for chunk in group.columns() {
            let column = chunk.column_path().string();
            let at = |problem: String| {
                parquet_error(
                    path,
                    format!("row group {group_idx}, column '{column}': {problem}"),
                )
            };
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let size = chunk.compressed_size();
            let end = start.checked_add(size);
            let (Ok(start), Ok(size), Some(Ok(end))) = (
                u64::try_from(start),
                u64::try_from(size),
                end.map(u64::try_from),
            ) else {
                return Err(at(format!(
                    "the column chunk declares {size} bytes at byte {start}, which lies \
                     outside the file's data (bytes 4..{data_end})"
                )));
            };
            if start < 4 || end > data_end {
                return Err(at(format!(
                    "the column chunk declares {size} bytes at byte {start}, which reaches \
                     outside the file's data (bytes 4..{data_end})"
                )));
            }
            let Some(bound) = page_check(chunk.compression()) else {
                continue;
            };
            check_pages(&mut reader, start, end, bound).map_err(at)?;
        }
    }
    Ok(())
}

/// A buffered reader of `file`, its length and the byte where its footer starts.
fn footer_reader<'f>(
    path: &Path,
    file: &'f File,
) -> Result<(BufReader<&'f File>, u64, u64), Error> {
    let file_len = file
        .metadata()
        .map_err(|err| io_error(path, "read the length of", &err))?
        .len();
    let mut reader = BufReader::with_capacity(8 * 1024, file);
    let start = footer_start(path, &mut reader, file_len)?;
    Ok((reader, file_len, start))
}

/// The byte where the footer (the file metadata) starts: the file's length less the 8-byte
/// tail (footer length, `PAR1`) and the footer length the tail declares.
fn footer_start(path: &Path, reader: &mut BufReader<&File>, file_len: u64) -> Result<u64, Error> {
    let mut tail = [0u8; 8];
    let read = file_len
        .checked_sub(8)
        .ok_or(())
        .and_then(|at| reader.seek(SeekFrom::Start(at)).map_err(|_| ()))
        .and_then(|_| reader.read_exact(&mut tail).map_err(|_| ()));
    let footer_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    match file_len.checked_sub(8 + footer_len) {
        Some(start) if read.is_ok() => Ok(start),
        _ => Err(parquet_error(
            path,
            format!("the footer declares {footer_len} bytes, more than the file's {file_len}"),
        )),
    }
}

/// Walks the page headers of the column chunk at bytes `start..end`, checking each page's
/// declared sizes (see [`check_declared_sizes`]); the message says which page is wrong.
fn check_pages(
    reader: &mut BufReader<&File>,
    start: u64,
    end: u64,
    max_expansion: Option<(u64, &str)>,
) -> Result<(), String> {
    let mut position = start;
    let mut here = None;
    while position < end {
        match here {
            Some(at) if at <= position && position - at <= i64::MAX as u64 => {
                reader
                    .seek_relative((position - at) as i64)
                    .map_err(|err| format!("cannot seek to byte {position}: {err}"))?;
            }
            _ => {
                reader
                    .seek(SeekFrom::Start(position))
                    .map_err(|err| format!("cannot seek to byte {position}: {err}"))?;
            }
        }
        let mut thrift = ThriftReader::new(&mut *reader, end - position, "the column chunk");
        let header = thrift.page_header().map_err(|problem| {
            format!("the page header at byte {position} is corrupt: {problem}")
        })?;
        let header_end = position + thrift.read;
        let left = end - header_end;
        let (Ok(compressed), Ok(uncompressed)) = (
            u64::try_from(header.compressed_size),
            u64::try_from(header.uncompressed_size),
        ) else {
            return Err(format!(
                "the page at byte {position} declares a negative size (compressed {}, \
                 uncompressed {})",
                header.compressed_size, header.uncompressed_size
            ));
        };
        if compressed > left {
            return Err(format!(
                "the page at byte {position} declares {compressed} compressed bytes, but \
                 {left} are left in the column chunk"
            ));
        }
        if let Some((factor, codec)) = max_expansion {
            if uncompressed > compressed.saturating_mul(factor) {
                return Err(format!(
                    "the page at byte {position} declares {uncompressed} bytes decompressed \
                     from {compressed} compressed ones, more than {codec} can expand them \
                     (at most {factor} times)"
                ));
            }
        }
        here = Some(header_end);
        position = header_end + compressed;
    }
    Ok(())
}

/// The sizes a page header declares (fields 2 and 3 of Parquet's `PageHeader`).
#[derive(Debug, Default)]
struct PageSizes {
    uncompressed_size: i64,
    compressed_size: i64,
}

/// Just enough of the Thrift compact protocol to read a page header's sizes, or walk a
/// footer by Parquet's IDL (`parquet_footer.rs`), and skip the rest, reading at most `limit`
/// bytes and allocating nothing.
struct ThriftReader<'r, R> {
    reader: &'r mut R,
    /// Bytes read so far.
    read: u64,
    /// Bytes there are to read (the rest of the column chunk, or the footer).
    limit: u64,
    /// What the bytes are, for messages: "the column chunk" or "the footer".
    within: &'static str,
    /// Skipped elements that take no byte (booleans in lists and maps, as the `parquet`
    /// crate skips them) still allowed: `limit` in all, so the crate's skip loops stay
    /// linear in the bytes.
    idle: u64,
}

impl<'r, R: Read> ThriftReader<'r, R> {
    fn new(reader: &'r mut R, limit: u64, within: &'static str) -> ThriftReader<'r, R> {
        ThriftReader {
            reader,
            read: 0,
            limit,
            within,
            idle: limit,
        }
    }

    /// Takes `n` skipped elements of no byte from the allowance.
    fn idle(&mut self, n: u64) -> Result<(), String> {
        self.idle = self.idle.checked_sub(n).ok_or_else(|| {
            format!(
                "skipped booleans in lists and maps, which take no byte, number more than \
                 the {} bytes of {}",
                self.limit, self.within
            )
        })?;
        Ok(())
    }

    fn byte(&mut self) -> Result<u8, String> {
        if self.read >= self.limit {
            return Err(format!("it runs past the end of {}", self.within));
        }
        let mut byte = [0u8; 1];
        self.reader
            .read_exact(&mut byte)
            .map_err(|err| format!("cannot read it: {err}"))?;
        self.read += 1;
        Ok(byte[0])
    }

    /// An unsigned LEB128 varint of at most 10 bytes.
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a varint longer than 10 bytes".to_string())
    }

    /// A zigzag varint (Thrift's i16, i32 and i64).
    fn zigzag(&mut self) -> Result<i64, String> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// Skips `n` bytes, which must lie within the limit.
    fn skip_bytes(&mut self, n: u64) -> Result<(), String> {
        if n > self.limit - self.read {
            return Err(format!(
                "a binary field of {n} bytes runs past the end of {}",
                self.within
            ));
        }
        let copied = io::copy(&mut (&mut *self.reader).take(n), &mut io::sink())
            .map_err(|err| format!("cannot read it: {err}"))?;
        if copied != n {
            return Err("it runs past the end of the file".to_string());
        }
        self.read += n;
        Ok(())
    }

    /// Skips one value of compact type `kind` as the `parquet` crate skips it: a boolean in
    /// a list or a map takes no byte there (though one on the wire), so the walk takes none
    /// either and stays where the crate is, and counts them against `idle`.
    fn skip(&mut self, kind: u8, depth: u32) -> Result<(), String> {
        if depth > THRIFT_MAX_DEPTH {
            return Err(format!("structs nested deeper than {THRIFT_MAX_DEPTH}"));
        }
        match kind {
            1 | 2 => Ok(()),
            3 => self.byte().map(drop),
            4..=6 => self.varint().map(drop),
            7 => self.skip_bytes(8),
            8 => {
                let n = self.varint()?;
                self.skip_bytes(n)
            }
            9 | 10 => {
                let header = self.byte()?;
                let n = match header >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                let element = header & 0x0f;
                if n > self.limit - self.read {
                    return Err(format!("a list of {n} elements runs past {}", self.within));
                }
                if matches!(element, 1 | 2) {
                    return self.idle(n);
                }
                for _ in 0..n {
                    self.skip(element, depth + 1)?;
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let types = self.byte()?;
                if n > self.limit - self.read {
                    return Err(format!("a map of {n} entries runs past {}", self.within));
                }
                let (key, value) = (types >> 4, types & 0x0f);
                if matches!(key, 1 | 2) && matches!(value, 1 | 2) {
                    return self.idle(n);
                }
                for _ in 0..n {
                    self.skip(key, depth + 1)?;
                    self.skip(value, depth + 1)?;
                }
                Ok(())
            }
            12 => self.fields(depth + 1, |_, _, _| Ok(false)),
            13 => self.skip_bytes(16),
            other => Err(format!("unknown Thrift type {other}")),
        }
    }

    /// Reads a struct's fields up to its stop byte; `take(self, id, kind)` reads the field
    /// and returns true, or returns false to have it skipped.
    fn fields(
        &mut self,
        depth: u32,
        mut take: impl FnMut(&mut Self, i16, u8) -> Result<bool, String>,
    ) -> Result<(), String> {
        let mut id: i16 = 0;
        loop {
            let header = self.byte()?;
            // a type of 0 is a stop whatever the upper bits say, as the parquet crate reads it
            if header & 0x0f == 0 {
                return Ok(());
            }
            let kind = header & 0x0f;
            id = match header >> 4 {
                0 => i16::try_from(self.zigzag()?).map_err(|_| "a field id beyond i16")?,
                delta => id
                    .checked_add(i16::from(delta))
                    .ok_or("a field id beyond i16")?,
            };
            if !take(self, id, kind)? {
                self.skip(kind, depth)?;
            }
        }
    }

    /// The sizes of a `PageHeader`, the rest skipped.
    fn page_header(&mut self) -> Result<PageSizes, String> {
        let mut sizes = PageSizes::default();
        let (mut seen_uncompressed, mut seen_compressed) = (false, false);
        self.fields(0, |thrift, id, kind| match (id, kind) {
            (2, 5) => {
                sizes.uncompressed_size = thrift.zigzag()?;
                seen_uncompressed = true;
                Ok(true)
            }
            (3, 5) => {
                sizes.compressed_size = thrift.zigzag()?;
                seen_compressed = true;
                Ok(true)
            }
            _ => Ok(false),
        })?;
        if !(seen_uncompressed && seen_compressed) {
            return Err("it lacks the page sizes".to_string());
        }
        Ok(sizes)
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

    /// The page sizes the Thrift reader finds in `header` when `limit` bytes may be read,
    /// and the bytes it read; or its message.
    #[track_caller]
    fn check_header(header: &[u8], limit: u64, expected: Result<(i64, i64, u64), &str>) {
        let mut bytes = header;
        let mut thrift = ThriftReader::new(&mut bytes, limit, "the column chunk");
        let got = thrift
            .page_header()
            .map(|sizes| (sizes.uncompressed_size, sizes.compressed_size, thrift.read));
        match expected {
            Ok(sizes) => assert_eq!(got, Ok(sizes)),
            Err(part) => {
                let message = got.unwrap_err();
                assert!(message.contains(part), "{message}");
            }
        }
    }

    /// A dictionary page header as the `parquet` crate writes it for three int64 values:
    /// type 2, 24 bytes decompressed, 23 compressed, a dictionary page header (3 values,
    /// plain, not sorted).
    const DICTIONARY_HEADER: [u8; 14] = [
        0x15, 0x04, 0x15, 0x30, 0x15, 0x2e, 0x4c, 0x15, 0x06, 0x15, 0x00, 0x12, 0x00, 0x00,
    ];

    #[test]
    fn thrift_reader_reads_page_sizes_and_skips_the_rest() {
        check_header(&DICTIONARY_HEADER, 14, Ok((24, 23, 14)));
        check_header(&DICTIONARY_HEADER, 1 << 20, Ok((24, 23, 14)));
        // 2^31-1 in five bytes; a negative size (zigzag 1 is -1, padded to five bytes)
        let mut big = vec![
            0x15, 0x04, 0x15, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x15, 0x2e, 0x00,
        ];
        check_header(&big, 64, Ok((i32::MAX as i64, 23, 11)));
        big[3..8].copy_from_slice(&[0x81, 0x80, 0x80, 0x80, 0x00]);
        check_header(&big, 64, Ok((-1, 23, 11)));
        // a field id given in full (delta 0): field 2 as i16 zigzag 4
        check_header(&[0x05, 0x04, 0x30, 0x15, 0x2e, 0x00], 64, Ok((24, 23, 6)));
    }

    #[test]
    fn thrift_reader_refuses_hostile_headers_without_allocating() {
        check_header(
            &DICTIONARY_HEADER,
            13,
            Err("runs past the end of the column chunk"),
        );
        check_header(&[0x15, 0x04, 0x00], 64, Err("lacks the page sizes"));
        // a binary field (type 8) declaring 2^62 bytes
        let binary = [
            0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x00,
        ];
        check_header(
            &binary,
            1 << 20,
            Err("a binary field of 4611686018427387904 bytes"),
        );
        // a list (type 9) of 2^40 i32 elements
        let list = [0x19, 0xf5, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x00];
        check_header(&list, 1 << 20, Err("a list of 1099511627776 elements"));
        // a map (type 11) of 2^40 entries
        let map = [0x1b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x55, 0x00];
        check_header(&map, 1 << 20, Err("a map of 1099511627776 entries"));
        // structs nested 20 deep
        let mut deep = vec![0x1c; 20];
        deep.extend([0x00; 21]);
        check_header(&deep, 1 << 20, Err("nested deeper than 16"));
        // a varint of 11 bytes
        let mut long = vec![0x15];
        long.extend([0x80; 10]);
        long.push(0x01);
        check_header(&long, 64, Err("longer than 10 bytes"));
        check_header(&[0x1e, 0x00], 64, Err("unknown Thrift type 14"));
        // a UUID (type 13) is 16 bytes, as the parquet crate skips it
        let mut uuid = vec![0x1d];
        uuid.extend([0xff; 16]);
        uuid.extend([0x15, 0x04, 0x15, 0x06, 0x00]);
        check_header(&uuid, 64, Ok((2, 3, 22)));
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
