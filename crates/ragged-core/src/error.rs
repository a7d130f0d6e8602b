//! The crate's error type: every fallible constructor, parser and operation returns it.

use std::fmt;

/// Errors of ragged-core. Each variant names the offending value and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A `row_splits` vector was empty; it needs at least the leading 0.
    EmptyRowSplits,
    /// A `row_splits` vector did not start at 0.
    RowSplitsStart {
        /// The first entry found.
        first: i32,
    },
    /// A `row_splits` vector decreased.
    DecreasingRowSplits {
        /// Position of the entry that is smaller than its predecessor.
        position: usize,
        /// The predecessor.
        previous: i32,
        /// The offending entry.
        value: i32,
    },
    /// A row length was negative.
    NegativeRowLength {
        /// The row.
        row: usize,
        /// Its length.
        length: i32,
    },
    /// A row id was outside `0..nrows`.
    RowIdOutOfRange {
        /// Position in `row_ids`.
        position: usize,
        /// The row id found.
        value: i32,
        /// The number of rows.
        nrows: usize,
    },
    /// A `row_ids` vector decreased.
    DecreasingRowIds {
        /// Position of the entry that is smaller than its predecessor.
        position: usize,
        /// The predecessor.
        previous: i32,
        /// The offending entry.
        value: i32,
    },
    /// `row_ids` disagrees with `row_splits`.
    RowIdsMismatch {
        /// Position in `row_ids`.
        position: usize,
        /// The row id implied by `row_splits`.
        expected: i32,
        /// The row id stored.
        got: i32,
    },
    /// An offset or a size would not fit in the `i32` offsets.
    Overflow {
        /// What was being computed.
        what: &'static str,
        /// The value it would have reached.
        value: u64,
    },
    /// A layer's number of rows differs from the number of elements of the layer above.
    LayerMismatch {
        /// The axis whose `row_splits` has the wrong number of rows (1-based, as `row_splits(axis)`).
        axis: usize,
        /// `tot_size(axis)` according to the layer above.
        expected: usize,
        /// The number of rows of this layer.
        got: usize,
    },
    /// A shape needs at least one layer (two axes).
    TooFewAxes {
        /// Axes requested or found.
        got: usize,
        /// The least allowed.
        min: usize,
    },
    /// An error in the layer of one axis.
    InAxis {
        /// The axis (1-based, as `row_splits(axis)`).
        axis: usize,
        /// What was wrong there.
        source: Box<Error>,
    },
    /// Two sizes that must agree do not.
    SizeMismatch {
        /// What is being compared.
        what: &'static str,
        /// The size required.
        expected: usize,
        /// The size found.
        got: usize,
    },
    /// An axis outside the allowed range for this operation.
    AxisOutOfRange {
        /// The axis given.
        axis: usize,
        /// The smallest allowed axis.
        min: usize,
        /// One past the largest allowed axis.
        end: usize,
    },
    /// An index (in an index array) outside its range.
    IndexOutOfRange {
        /// What was being indexed.
        what: &'static str,
        /// Position of the index in its array.
        position: usize,
        /// The index.
        index: i64,
        /// The size of what was indexed.
        size: usize,
    },
    /// Text could not be parsed as a ragged array or shape.
    Parse {
        /// Byte position in the input.
        position: usize,
        /// What the parser expected there.
        expected: &'static str,
        /// What it found (`end of input` at the end).
        found: String,
    },
    /// A shape that must be regular along an axis is not.
    NotRegular {
        /// The axis.
        axis: usize,
        /// The first row whose length differs.
        row: usize,
        /// The length of row 0.
        expected: usize,
        /// The length of `row`.
        got: usize,
    },
    /// A layer that must be the same in every source differs in one.
    LayersDiffer {
        /// The layer (index into `layers()`).
        layer: usize,
        /// The first source whose layer differs from source 0's.
        src: usize,
    },
    /// A list that an operation may only drop when empty was not empty.
    NonEmptyListRemoved {
        /// The list's index on axis 0.
        index: usize,
        /// Its size.
        size: usize,
    },
    /// An argument outside its allowed range.
    InvalidArgument {
        /// The argument.
        what: &'static str,
        /// Its value.
        value: i64,
    },
    /// An Arrow array of a type the conversion does not take (feature `arrow`).
    ArrowType {
        /// The nesting level (0 for the array given, 1 for its child, ...).
        axis: usize,
        /// What the conversion needed there.
        expected: String,
        /// The Arrow type found.
        found: String,
    },
    /// A null in an Arrow array: a ragged array has no place for it (feature `arrow`).
    ArrowNull {
        /// The nesting level (0 for the array given, 1 for its child, ...).
        axis: usize,
        /// The index of the first null at that level.
        index: usize,
    },
    /// A file operation failed (feature `parquet`).
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What was being done (`open`, `create`, ...).
        operation: &'static str,
        /// The operating system's message.
        message: String,
    },
    /// A file the `parquet` crate could not read (not Parquet, corrupt) or write (feature
    /// `parquet`).
    Parquet {
        /// The file.
        path: std::path::PathBuf,
        /// The `parquet` crate's message.
        message: String,
    },
    /// A Parquet file without the column asked for (feature `parquet`).
    ParquetColumn {
        /// The file.
        path: std::path::PathBuf,
        /// The column asked for.
        column: String,
        /// The columns the file has.
        found: Vec<String>,
    },
    /// A Parquet column that is no ragged array of the type asked for (feature `parquet`).
    InParquetColumn {
        /// The file.
        path: std::path::PathBuf,
        /// The column.
        column: String,
        /// The Arrow conversion's error ([`Error::ArrowType`], [`Error::ArrowNull`], ...).
        source: Box<Error>,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::EmptyRowSplits => {
                write!(f, "row_splits is empty; it needs at least the leading 0")
            }
            Error::RowSplitsStart { first } => {
                write!(f, "row_splits must start at 0, found {first} at position 0")
            }
            Error::DecreasingRowSplits {
                position,
                previous,
                value,
            } => write!(
                f,
                "row_splits decreases at position {position}: {value} after {previous}"
            ),
            Error::NegativeRowLength { row, length } => {
                write!(f, "row length {length} of row {row} is negative")
            }
            Error::RowIdOutOfRange {
                position,
                value,
                nrows,
            } => write!(
                f,
                "row id {value} at position {position} is outside 0..{nrows}"
            ),
            Error::DecreasingRowIds {
                position,
                previous,
                value,
            } => write!(
                f,
                "row_ids decreases at position {position}: {value} after {previous}"
            ),
            Error::RowIdsMismatch {
                position,
                expected,
                got,
            } => write!(
                f,
                "row_ids[{position}] is {got} but row_splits puts that element in row {expected}"
            ),
            Error::Overflow { what, value } => write!(
                f,
                "{what} would be {value}, beyond the i32 offset limit {}",
                i32::MAX
            ),
            Error::LayerMismatch {
                axis,
                expected,
                got,
            } => write!(
                f,
                "axis {axis} has {got} rows but the axis above has {expected} elements"
            ),
            Error::TooFewAxes { got, min } => {
                write!(f, "a ragged shape needs at least {min} axes, got {got}")
            }
            Error::InAxis { axis, source } => write!(f, "axis {axis}: {source}"),
            Error::SizeMismatch {
                what,
                expected,
                got,
            } => {
                write!(f, "{what}: expected {expected}, got {got}")
            }
            Error::AxisOutOfRange { axis, min, end } => {
                write!(f, "axis {axis} is outside the allowed range {min}..{end}")
            }
            Error::IndexOutOfRange {
                what,
                position,
                index,
                size,
            } => write!(
                f,
                "{what}: index {index} at position {position} is out of range for size {size}"
            ),
            Error::Parse {
                position,
                expected,
                found,
            } => write!(
                f,
                "parse error at byte {position}: expected {expected}, found {found}"
            ),
            Error::NotRegular {
                axis,
                row,
                expected,
                got,
            } => write!(
                f,
                "axis {axis} is not regular: row {row} has length {got}, row 0 has {expected}"
            ),
            Error::LayersDiffer { layer, src } => {
                write!(f, "layer {layer} of source {src} differs from source 0's")
            }
            Error::NonEmptyListRemoved { index, size } => write!(
                f,
                "list {index} would be removed but has {size} items; only empty lists may be"
            ),
            Error::InvalidArgument { what, value } => {
                write!(f, "invalid {what}: {value}")
            }
            Error::ArrowType {
                axis,
                expected,
                found,
            } => write!(
                f,
                "Arrow array at nesting level {axis} has type {found}, expected {expected}"
            ),
            Error::ArrowNull { axis, index } => write!(
                f,
                "Arrow array at nesting level {axis} has a null at index {index}; ragged arrays hold no nulls"
            ),
            Error::Io {
                path,
                operation,
                message,
            } => write!(f, "cannot {operation} {}: {message}", path.display()),
            Error::Parquet { path, message } => {
                write!(f, "Parquet file {}: {message}", path.display())
            }
            Error::ParquetColumn {
                path,
                column,
                found,
            } => write!(
                f,
                "Parquet file {} has no column '{column}' (its columns: {})",
                path.display(),
                found.join(", ")
            ),
            Error::InParquetColumn {
                path,
                column,
                source,
            } => write!(
                f,
                "Parquet file {}, column '{column}': {source}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::InAxis { source, .. } | Error::InParquetColumn { source, .. } => {
                Some(source.as_ref())
            }
            _ => None,
        }
    }
}

/// Panics for an out-of-range index, naming the index and the size.
#[cold]
#[track_caller]
pub(crate) fn index_out_of_bounds(what: &str, index: usize, size: usize) -> ! {
    panic!("{what} {index} out of bounds for size {size}")
}

/// Panics for a violated precondition that the caller could have checked.
#[cold]
#[track_caller]
pub(crate) fn precondition(message: String) -> ! {
    panic!("{message}")
}

/// Converts a size to an `i32` offset, or reports the overflow.
pub(crate) fn to_offset(value: usize, what: &'static str) -> Result<i32, Error> {
    i32::try_from(value).map_err(|_| Error::Overflow {
        what,
        value: value as u64,
    })
}
