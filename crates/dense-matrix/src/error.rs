//! The crate's error type and the panic helpers for broken preconditions.

use std::fmt;

/// Where in a vector or matrix an offending element sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Element `i` of a vector.
    Vector(usize),
    /// Element `(row, col)` of a matrix.
    Matrix(usize, usize),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Vector(i) => write!(f, "element {i}"),
            Position::Matrix(r, c) => write!(f, "element ({r}, {c})"),
        }
    }
}

/// Errors of this crate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A matrix with zero rows or zero columns but not both (Kaldi forbids `0 x n`).
    EmptyDimension {
        /// Rows asked for.
        rows: usize,
        /// Columns asked for.
        cols: usize,
    },
    /// A row stride smaller than the number of columns.
    StrideTooSmall {
        /// The stride given.
        stride: usize,
        /// The number of columns.
        cols: usize,
    },
    /// A data buffer whose length does not fit the shape asked for.
    LengthMismatch {
        /// Elements the shape needs.
        expected: usize,
        /// Elements given.
        got: usize,
    },
    /// Kaldi text that does not parse.
    Parse {
        /// Line of the input (from 1; line 1 holds the opening `[`).
        line: usize,
        /// The offending token.
        token: String,
        /// What was wrong with it.
        reason: &'static str,
    },
    /// Reading or writing failed.
    Io {
        /// The I/O error's kind.
        kind: std::io::ErrorKind,
        /// Its message.
        message: String,
    },
    /// Kaldi binary data with an unexpected token or header byte.
    Format {
        /// What was expected.
        expected: &'static str,
        /// What was found.
        found: String,
    },
    /// A buffer too short for the view asked of it.
    BufferTooShort {
        /// Elements the view needs.
        needed: usize,
        /// Elements the buffer has.
        len: usize,
    },
    /// An `ndarray` view that is not row-major with unit column stride.
    NotRowMajor {
        /// Its row stride.
        row_stride: isize,
        /// Its column stride.
        col_stride: isize,
    },
    /// A LAPACK routine reported failure (`info != 0`).
    Lapack {
        /// The routine, e.g. `"dgetrf"`.
        routine: &'static str,
        /// Its `info` output.
        info: i32,
        /// What that `info` means for this call.
        meaning: &'static str,
    },
    /// The logarithm of a negative number was asked for.
    LogOfNegative {
        /// Where the element is.
        position: Position,
        /// Its value.
        value: f64,
    },
    /// A negative number raised to a non-integer power.
    PowerOfNegative {
        /// Where the element is.
        position: Position,
        /// Its value.
        value: f64,
        /// The power.
        power: f64,
    },
    /// `power` met an eigenvalue with no real power: a negative real one, or zero with a
    /// negative power.
    EigenvaluePower {
        /// Index of the eigenvalue.
        index: usize,
        /// Its value.
        value: f64,
        /// The power asked for.
        power: f64,
    },
    /// `sym_pos_semi_def_eig`: the reconstruction from non-negative eigenvalues is too far
    /// from the input, so it was not symmetric positive semi-definite.
    NotPositiveSemiDefinite {
        /// Frobenius norm of the reconstruction error.
        diff_norm: f64,
        /// Frobenius norm of the input.
        norm: f64,
        /// The relative tolerance.
        tolerance: f64,
    },
    /// A shape whose element count (or byte size) does not fit in the address space.
    SizeOverflow {
        /// The constructor or view that was asked for it.
        what: &'static str,
        /// Rows asked for (the order `n` for packed matrices).
        rows: usize,
        /// Columns asked for, or the row stride where that is what overflowed.
        cols: usize,
    },
    /// A decomposition was given a NaN or infinite element (LAPACK would fail or loop).
    NotFinite {
        /// The operation, e.g. `"svd"`.
        op: &'static str,
        /// Where the first non-finite element is.
        position: Position,
        /// Its value.
        value: f64,
    },
    /// Kaldi binary data that ends before the object it announces is complete.
    UnexpectedEnd {
        /// What was being read, e.g. "the elements of a 3 x 4 `FM` matrix".
        reading: String,
        /// Bytes that object needs.
        needed: u64,
        /// Bytes that were there.
        got: u64,
    },
    /// A negative size in a Kaldi binary header.
    NegativeSize {
        /// Which size, e.g. "the number of rows of an `FM` matrix".
        what: &'static str,
        /// The value read.
        value: i32,
    },
    /// A size from a header whose product (elements times bytes) overflows `usize`.
    HeaderSizeOverflow {
        /// What the size belongs to.
        what: &'static str,
        /// The factors whose product overflows.
        factors: Vec<u64>,
    },
    /// An element Kaldi's `CompressedMatrix` cannot store: NaN, infinite or beyond `f32`,
    /// or one that makes the matrix span more than `CompressedMatrix`'s `MAX_RANGE`.
    CannotCompress {
        /// Where the element is.
        position: Position,
        /// Its value.
        value: f64,
    },
    /// OpenBLAS's kernel could not be switched at run time.
    BlasKernel {
        /// The kernel asked for (an `OPENBLAS_CORETYPE` value).
        coretype: String,
        /// Why not.
        reason: &'static str,
    },
    /// A sparse vector pair whose index is out of range or not above the index before it.
    SparseIndex {
        /// Which pair (from 0).
        element: usize,
        /// Its index.
        index: i64,
        /// The vector's dimension.
        dim: usize,
        /// The index of the pair before it, if any.
        previous: Option<usize>,
    },
    /// A binary sparse vector announcing more pairs than its dimension.
    SparseCount {
        /// Pairs announced.
        count: usize,
        /// The dimension.
        dim: usize,
    },
    /// A sparse matrix row whose dimension differs from the matrix's column count.
    SparseRowDim {
        /// The row.
        row: usize,
        /// Its dimension.
        dim: usize,
        /// The column count of the matrix (its first row's dimension when read).
        expected: usize,
    },
    /// An FFT planned for a length it does not support.
    FftSize {
        /// The length asked for.
        n: usize,
        /// What the length must be, e.g. "a power of two, at least 4".
        what: &'static str,
    },
    /// `append_sparse_matrix_rows`: an input whose column count differs from the first
    /// non-empty input's.
    AppendDim {
        /// Which input (from 0).
        input: usize,
        /// Its column count.
        cols: usize,
        /// The column count of the inputs before it.
        expected: usize,
    },
    /// `linear_cgd` met a search direction `p` with `p^T A p <= 0` (or not finite): `A` is
    /// not positive definite. `x` is left as it was on entry.
    CgdNotPositiveDefinite {
        /// The iteration (from 0).
        iteration: usize,
        /// The value of `p^T A p`.
        curvature: f64,
    },
    /// `linear_cgd` ended with a squared residual larger than at the start (Kaldi's test
    /// for an indefinite or ill-conditioned `A`). `x` is left as it was on entry.
    CgdResidualGrew {
        /// Iterations done.
        iterations: usize,
        /// The final squared residual `||A x - b||^2`.
        residual_sq: f64,
        /// The squared residual at the start.
        initial_sq: f64,
    },
    /// `OptimizeLbfgs::do_step_with_hessian`: a diagonal second derivative of the wrong sign
    /// (it must be positive when minimising, negative when maximising).
    HessianSign {
        /// Where the element is.
        index: usize,
        /// Its value.
        value: f64,
        /// Whether the optimiser minimises.
        minimize: bool,
    },
    /// A packed symmetric matrix that should be tridiagonal (Kaldi's `IsTridiagonal`) has
    /// an element outside the band that is not negligible.
    NotTridiagonal {
        /// The operation, e.g. `"SpMatrix::qr"`.
        op: &'static str,
        /// The largest element outside the band.
        position: Position,
        /// Its value.
        value: f64,
        /// The largest absolute value on the band (diagonal and first sub-diagonal).
        band_max: f64,
    },
    /// An iterative algorithm stopped before it converged.
    NoConvergence {
        /// The operation, e.g. `"SpMatrix::qr"`.
        op: &'static str,
        /// Iterations done.
        iterations: usize,
    },
    /// A matrix required to be positive semi-definite has an eigenvalue more negative
    /// than the tolerance allows (Kaldi's `SpMatrix::SymPosSemiDefEig` assertion).
    NegativeEigenvalue {
        /// The operation, e.g. `"SpMatrix::limit_cond"`.
        op: &'static str,
        /// The smallest eigenvalue.
        min: f64,
        /// The largest eigenvalue.
        max: f64,
        /// `-min` may be at most `tolerance * max`.
        tolerance: f64,
    },
    /// A scalar argument outside the range the operation accepts.
    InvalidArgument {
        /// The operation, e.g. `"SpMatrix::limit_cond"`.
        op: &'static str,
        /// The parameter, e.g. `"max_cond"`.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What it must be, e.g. `"greater than 1"`.
        requirement: &'static str,
    },
    /// A row filter (Kaldi's `FilterMatrixRows` and kin) whose `keep_rows` keeps no row.
    NoKeptRows {
        /// The function, e.g. `"filter_matrix_rows"`.
        op: &'static str,
        /// The number of rows of the input (the length of `keep_rows`).
        num_rows: usize,
    },
    /// `extract_row_range_with_padding` asked for rows of a matrix that has none, so there
    /// is no row to repeat.
    PadEmptyMatrix {
        /// The number of rows asked for.
        num_rows: usize,
        /// The row offset asked for.
        row_offset: i32,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::EmptyDimension { rows, cols } => write!(
                f,
                "a {rows} x {cols} matrix is not allowed: a matrix is either empty (0 x 0) \
                 or has rows and columns"
            ),
            Error::StrideTooSmall { stride, cols } => {
                write!(f, "row stride {stride} is smaller than the {cols} columns")
            }
            Error::LengthMismatch { expected, got } => {
                write!(
                    f,
                    "the shape needs {expected} elements but {got} were given"
                )
            }
            Error::Parse {
                line,
                token,
                reason,
            } => write!(f, "line {line}: `{token}`: {reason}"),
            Error::Io { kind, message } => write!(f, "I/O error ({kind:?}): {message}"),
            Error::Format { expected, found } => write!(f, "expected {expected}, found `{found}`"),
            Error::BufferTooShort { needed, len } => {
                write!(
                    f,
                    "the view needs {needed} elements but the buffer has {len}"
                )
            }
            Error::NotRowMajor {
                row_stride,
                col_stride,
            } => write!(
                f,
                "strides ({row_stride}, {col_stride}) are not row-major with unit column stride"
            ),
            Error::Lapack {
                routine,
                info,
                meaning,
            } => write!(f, "LAPACK {routine} failed with info = {info}: {meaning}"),
            Error::LogOfNegative { position, value } => {
                write!(f, "cannot take the log of {value} at {position}")
            }
            Error::PowerOfNegative {
                position,
                value,
                power,
            } => write!(f, "cannot raise {value} at {position} to the power {power}"),
            Error::EigenvaluePower {
                index,
                value,
                power,
            } => write!(f, "eigenvalue {index} = {value} has no real power {power}"),
            Error::NotPositiveSemiDefinite {
                diff_norm,
                norm,
                tolerance,
            } => write!(
                f,
                "not symmetric positive semi-definite: reconstruction error {diff_norm} exceeds \
                 {tolerance} x the norm {norm}"
            ),
            Error::SizeOverflow { what, rows, cols } => write!(
                f,
                "{what}: a {rows} x {cols} shape overflows the address space"
            ),
            Error::NotFinite {
                op,
                position,
                value,
            } => write!(f, "{op}: {position} is {value}; the input must be finite"),
            Error::UnexpectedEnd {
                reading,
                needed,
                got,
            } => write!(
                f,
                "unexpected end of data while reading {reading}: it needs {needed} bytes, \
                 {got} were there"
            ),
            Error::NegativeSize { what, value } => write!(f, "{what} is negative: {value}"),
            Error::HeaderSizeOverflow { what, factors } => {
                let product: Vec<String> = factors.iter().map(u64::to_string).collect();
                write!(
                    f,
                    "the size of {what} overflows: {} does not fit in memory",
                    product.join(" x ")
                )
            }
            Error::CannotCompress { position, value } => {
                write!(
                    f,
                    "cannot compress {value} at {position}: a compressed matrix holds finite \
                     f32 values spanning at most {:e}",
                    crate::compressed::MAX_RANGE
                )
            }
            Error::BlasKernel { coretype, reason } => {
                write!(
                    f,
                    "cannot switch OpenBLAS to its {coretype} kernel: {reason}"
                )
            }
            Error::SparseIndex {
                element,
                index,
                dim,
                previous,
            } => match previous {
                Some(p) if *index < *dim as i64 => write!(
                    f,
                    "sparse vector pair {element} has index {index}, not above the index {p} \
                     before it"
                ),
                _ => write!(
                    f,
                    "sparse vector pair {element} has index {index}, out of range for dimension \
                     {dim}"
                ),
            },
            Error::SparseCount { count, dim } => write!(
                f,
                "a sparse vector of dimension {dim} cannot hold {count} pairs"
            ),
            Error::SparseRowDim { row, dim, expected } => write!(
                f,
                "sparse matrix row {row} has dimension {dim}, expected {expected}"
            ),
            Error::FftSize { n, what } => {
                write!(
                    f,
                    "cannot plan an FFT of {n} points: the length must be {what}"
                )
            }
            Error::AppendDim {
                input,
                cols,
                expected,
            } => write!(
                f,
                "append_sparse_matrix_rows: input {input} has {cols} columns, the inputs \
                 before it have {expected}"
            ),
            Error::CgdNotPositiveDefinite {
                iteration,
                curvature,
            } => write!(
                f,
                "linear_cgd: p^T A p = {curvature} at iteration {iteration}; A is not \
                 positive definite"
            ),
            Error::CgdResidualGrew {
                iterations,
                residual_sq,
                initial_sq,
            } => write!(
                f,
                "linear_cgd: after {iterations} iterations the squared residual {residual_sq} \
                 is above the initial {initial_sq}; A is not positive definite or too badly \
                 conditioned"
            ),
            Error::HessianSign {
                index,
                value,
                minimize,
            } => {
                write!(
                f,
                "L-BFGS: the diagonal second derivative at element {index} is {value}; it must \
                 be {} when {}",
                if *minimize { "positive" } else { "negative" },
                if *minimize { "minimising" } else { "maximising" }
            )
            }
            Error::NotTridiagonal {
                op,
                position,
                value,
                band_max,
            } => write!(
                f,
                "{op} needs a tridiagonal matrix: {position} = {value} lies outside the band, \
                 whose largest absolute value is {band_max}"
            ),
            Error::NoConvergence { op, iterations } => {
                write!(f, "{op} did not converge in {iterations} iterations")
            }
            Error::NegativeEigenvalue {
                op,
                min,
                max,
                tolerance,
            } => write!(
                f,
                "{op} needs a positive semi-definite matrix: its eigenvalue {min} is below \
                 -{tolerance} x the largest eigenvalue {max}"
            ),
            Error::InvalidArgument {
                op,
                name,
                value,
                requirement,
            } => write!(f, "{op}: {name} = {value} must be {requirement}"),
            Error::NoKeptRows { op, num_rows } => write!(
                f,
                "{op}: keep_rows keeps none of the {num_rows} rows (at least one must be kept)"
            ),
            Error::PadEmptyMatrix {
                num_rows,
                row_offset,
            } => write!(
                f,
                "extract_row_range_with_padding: {num_rows} rows from row {row_offset} asked of \
                 a matrix with no rows, which has no row to repeat"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// Panics because two operands' shapes disagree; names the operation and both shapes.
#[cold]
#[track_caller]
pub(crate) fn shape_mismatch(op: &str, a: (usize, usize), b: (usize, usize)) -> ! {
    panic!(
        "{op}: shape {} x {} does not match shape {} x {}",
        a.0, a.1, b.0, b.1
    )
}

/// Panics because two vector lengths (or a length and a dimension) disagree.
#[cold]
#[track_caller]
pub(crate) fn dim_mismatch(op: &str, what_a: &str, a: usize, what_b: &str, b: usize) -> ! {
    panic!("{op}: {what_a} {a} does not match {what_b} {b}")
}

/// Panics because an index is out of range.
#[cold]
#[track_caller]
pub(crate) fn out_of_bounds(what: &str, index: usize, size: usize, container: &str) -> ! {
    panic!("{what} {index} out of bounds for {container} with {size} {what}s")
}

/// Panics with a broken precondition that is neither a shape nor an index.
#[cold]
#[track_caller]
pub(crate) fn precondition(msg: &str) -> ! {
    panic!("{msg}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(e: Error, want: &str) {
        assert_eq!(e.to_string(), want);
    }

    #[test]
    fn messages_name_the_value_and_position() {
        check(
            Error::EmptyDimension { rows: 0, cols: 3 },
            "a 0 x 3 matrix is not allowed: a matrix is either empty (0 x 0) or has rows and columns",
        );
        check(
            Error::Lapack {
                routine: "dgetrf",
                info: 2,
                meaning: "U(2,2) is exactly zero: the matrix is singular",
            },
            "LAPACK dgetrf failed with info = 2: U(2,2) is exactly zero: the matrix is singular",
        );
        check(
            Error::LogOfNegative {
                position: Position::Matrix(1, 2),
                value: -0.5,
            },
            "cannot take the log of -0.5 at element (1, 2)",
        );
        check(
            Error::StrideTooSmall { stride: 2, cols: 3 },
            "row stride 2 is smaller than the 3 columns",
        );
        check(
            Error::SizeOverflow {
                what: "Matrix::try_new",
                rows: 1 << 62,
                cols: 4,
            },
            "Matrix::try_new: a 4611686018427387904 x 4 shape overflows the address space",
        );
        check(
            Error::NotFinite {
                op: "svd",
                position: Position::Matrix(0, 1),
                value: f64::NAN,
            },
            "svd: element (0, 1) is NaN; the input must be finite",
        );
        check(
            Error::BlasKernel {
                coretype: "Haswell".into(),
                reason: "this OpenBLAS was built without DYNAMIC_ARCH",
            },
            "cannot switch OpenBLAS to its Haswell kernel: this OpenBLAS was built without \
             DYNAMIC_ARCH",
        );
    }

    #[test]
    #[should_panic(expected = "add_mat: shape 2 x 3 does not match shape 3 x 2")]
    fn shape_mismatch_names_both_shapes() {
        shape_mismatch("add_mat", (2, 3), (3, 2));
    }
}
