//! The owned [`Matrix`]: constructors, Kaldi's resize rules, `swap`, `remove_row`,
//! `transpose`.

use crate::error::out_of_bounds;
use crate::matrix::{checked_buffer_len, checked_default_stride, Header};
use crate::vector::ResizeType;
use crate::{Error, Matrix, MatrixBase, Real, StrideType};

impl<R: Real> Matrix<R> {
    /// A `rows x cols` matrix of zeros with the default stride.
    ///
    /// # Panics
    /// If exactly one of `rows`, `cols` is zero, or if the size in bytes overflows the
    /// address space (use [`Matrix::try_new`] to get an error).
    #[track_caller]
    pub fn new(rows: usize, cols: usize) -> Self {
        match Self::try_new(rows, cols, StrideType::Default) {
            Ok(m) => m,
            Err(e) => crate::error::precondition(&e.to_string()),
        }
    }

    /// A `rows x cols` matrix of zeros with the given stride type; `0 x n` is an error.
    ///
    /// A shape whose size in bytes overflows the address space is
    /// [`Error::SizeOverflow`]; one that fits but exceeds the memory available aborts,
    /// as `Vec` does.
    pub fn try_new(rows: usize, cols: usize, stride_type: StrideType) -> Result<Self, Error> {
        if (rows == 0) != (cols == 0) {
            return Err(Error::EmptyDimension { rows, cols });
        }
        let overflow = Error::SizeOverflow {
            what: "Matrix::try_new",
            rows,
            cols,
        };
        let stride = match stride_type {
            StrideType::Default => checked_default_stride::<R>(cols).ok_or(overflow)?,
            StrideType::EqualNumCols => cols,
        };
        let len = checked_buffer_len::<R>("Matrix::try_new", rows, cols, stride)?;
        let data = vec![R::ZERO; len];
        Ok(Self::from_parts(data, rows, cols, stride))
    }

    /// The 0 x 0 matrix.
    pub fn empty() -> Self {
        Self::from_parts(Vec::new(), 0, 0, 0)
    }

    /// A matrix over `data`, which holds `rows * stride` elements (not checked).
    pub(crate) fn from_parts(mut data: Vec<R>, rows: usize, cols: usize, stride: usize) -> Self {
        let ptr = data.as_mut_ptr();
        Self {
            data,
            header: Header {
                ptr,
                rows,
                cols,
                stride,
            },
        }
    }

    /// A matrix from row-major data with `stride == cols`; `0 x n` or a length other than
    /// `rows * cols` is an error.
    pub fn from_vec(rows: usize, cols: usize, data: Vec<R>) -> Result<Self, Error> {
        if (rows == 0) != (cols == 0) {
            return Err(Error::EmptyDimension { rows, cols });
        }
        let expected = rows.checked_mul(cols).ok_or(Error::SizeOverflow {
            what: "Matrix::from_vec",
            rows,
            cols,
        })?;
        if data.len() != expected {
            return Err(Error::LengthMismatch {
                expected,
                got: data.len(),
            });
        }
        Ok(Self::from_parts(data, rows, cols, cols))
    }

    /// A matrix from nested rows (all the same length), default stride.
    ///
    /// # Panics
    /// If the rows have different lengths, or there are rows but no columns.
    #[track_caller]
    pub fn from_rows<Row: AsRef<[R]>>(rows: &[Row]) -> Self {
        let n_rows = rows.len();
        let n_cols = rows.first().map_or(0, |r| r.as_ref().len());
        let mut m = Self::new(n_rows, n_cols);
        for (r, row) in rows.iter().enumerate() {
            let row = row.as_ref();
            if row.len() != n_cols {
                crate::error::dim_mismatch(
                    "from_rows",
                    "row length",
                    row.len(),
                    "first row length",
                    n_cols,
                );
            }
            m.row_data_mut(r).copy_from_slice(row);
        }
        m
    }

    /// The identity matrix of size `n`.
    pub fn eye(n: usize) -> Self {
        let mut m = Self::new(n, n);
        m.set_unit();
        m
    }

    /// Changes the size (Kaldi's `Resize`), with default stride.
    ///
    /// # Panics
    /// If exactly one of `rows`, `cols` is zero, or the size overflows the address space.
    #[track_caller]
    pub fn resize(&mut self, rows: usize, cols: usize, resize_type: ResizeType) {
        self.resize_with_stride(rows, cols, resize_type, StrideType::Default);
    }

    /// Changes the size with a stride type (Kaldi's `Resize(r, c, type, stride_type)`):
    /// `SetZero` zeroes everything, `CopyData` keeps the overlapping top-left block and
    /// zeroes the rest, `Undefined` keeps the contents if the shape and stride are unchanged.
    ///
    /// # Panics
    /// If exactly one of `rows`, `cols` is zero, or the size overflows the address space.
    #[track_caller]
    pub fn resize_with_stride(
        &mut self,
        rows: usize,
        cols: usize,
        resize_type: ResizeType,
        stride_type: StrideType,
    ) {
        let mut fresh = match Self::try_new(rows, cols, stride_type) {
            Ok(m) => m,
            Err(e) => crate::error::precondition(&e.to_string()),
        };
        let same = self.shape() == (rows, cols) && self.stride() == fresh.stride();
        match resize_type {
            ResizeType::SetZero if same => self.set_zero(),
            ResizeType::Undefined | ResizeType::CopyData if same => {}
            ResizeType::CopyData => {
                let (r, c) = (rows.min(self.header.rows), cols.min(self.header.cols));
                if r > 0 && c > 0 {
                    fresh
                        .range_mut(0, r, 0, c)
                        .copy_from_mat(&self.range(0, r, 0, c), crate::Trans::NoTrans);
                }
                *self = fresh;
            }
            _ => *self = fresh,
        }
    }

    /// Exchanges contents with `other` (Kaldi's `Swap`).
    pub fn swap(&mut self, other: &mut Matrix<R>) {
        std::mem::swap(self, other);
    }

    /// Removes row `r`, moving later rows up (Kaldi's `RemoveRow`); removing the last row
    /// leaves the 0 x 0 matrix.
    ///
    /// # Panics
    /// If `r >= num_rows()`.
    #[track_caller]
    #[doc(alias = "RemoveRow")]
    pub fn remove_row(&mut self, r: usize) {
        let (rows, stride) = (self.header.rows, self.header.stride);
        if r >= rows {
            out_of_bounds("row", r, rows, "a matrix");
        }
        if rows == 1 {
            *self = Self::empty();
            return;
        }
        self.data.copy_within((r + 1) * stride.., r * stride);
        self.data.truncate((rows - 1) * stride);
        self.header.rows -= 1;
        self.header.ptr = self.data.as_mut_ptr();
    }

    /// Transposes in place (Kaldi's `Transpose`), also for non-square matrices.
    pub fn transpose(&mut self) {
        let (rows, cols) = (self.header.rows, self.header.cols);
        if rows == cols {
            for r in 0..rows {
                for c in 0..r {
                    let (a, b) = (self[(r, c)], self[(c, r)]);
                    self[(r, c)] = b;
                    self[(c, r)] = a;
                }
            }
        } else {
            let mut t = Self::new(cols, rows);
            t.copy_from_mat(self, crate::Trans::Trans);
            *self = t;
        }
    }

    /// Consumes the matrix, giving its buffer and `(rows, cols, stride)`.
    pub fn into_raw_parts(self) -> (Vec<R>, usize, usize, usize) {
        let Header {
            rows, cols, stride, ..
        } = self.header;
        (self.data, rows, cols, stride)
    }
}

impl<R: Real> Clone for Matrix<R> {
    /// A copy with the same shape and stride; the padding is copied as zeros.
    fn clone(&self) -> Self {
        let (rows, cols, stride) = (self.header.rows, self.header.cols, self.header.stride);
        let mut data = vec![R::ZERO; rows * stride];
        for r in 0..rows {
            data[r * stride..r * stride + cols].copy_from_slice(self.row_data(r));
        }
        Self::from_parts(data, rows, cols, stride)
    }
}

impl<R: Real> Default for Matrix<R> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<R: Real> From<&MatrixBase<R>> for Matrix<R> {
    fn from(m: &MatrixBase<R>) -> Self {
        m.to_matrix()
    }
}
