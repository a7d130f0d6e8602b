//! The crate's error type.

use std::fmt;

/// Errors of this crate; every variant names the offending values.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// Two arrays combined element by element have different extents.
    ShapeMismatch {
        /// What was being combined (e.g. `"zip_with"`).
        operation: &'static str,
        /// The extent of the first operand, outermost first.
        expected: [usize; 3],
        /// The extent of the offending operand.
        got: [usize; 3],
    },
    /// A buffer handed to a view or array has the wrong length for the extent.
    BufferLength {
        /// The length the extent needs.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A foreign array is not laid out contiguously in row-major order.
    NotContiguous {
        /// The strides of the foreign array, in elements.
        strides: Vec<isize>,
    },
    /// An argument outside its allowed range (the variant has this name in every crate).
    InvalidArgument {
        /// The parameter's name.
        name: &'static str,
        /// The value given, printed.
        value: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// An image could not be read or written.
    Image {
        /// The file or stream.
        path: String,
        /// The underlying message.
        message: String,
    },
    /// An extent whose number of elements (the product of its extents) overflows `usize`.
    SizeOverflow {
        /// The extent, outermost first (unused axes are 1).
        extent: [usize; 3],
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ShapeMismatch {
                operation,
                expected,
                got,
            } => write!(
                f,
                "{operation}: extent {got:?} of an operand differs from the first operand's {expected:?}"
            ),
            Error::BufferLength { expected, got } => write!(
                f,
                "buffer of length {got} does not fit an extent of {expected} elements"
            ),
            Error::NotContiguous { strides } => write!(
                f,
                "foreign array with strides {strides:?} is not contiguous in row-major order"
            ),
            Error::InvalidArgument { name, value, rule } => {
                write!(f, "parameter `{name}` = {value}: {rule}")
            }
            Error::Image { path, message } => write!(f, "image {path}: {message}"),
            Error::SizeOverflow { extent } => write!(
                f,
                "extent {extent:?} has more elements than usize can count"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// Panics for an index outside an extent, naming both.
#[cold]
#[track_caller]
pub(crate) fn index_out_of_bounds(idx: impl fmt::Debug, extent: impl fmt::Debug) -> ! {
    panic!("index {idx:?} out of bounds for an array of extent {extent:?}")
}
