//! Matrices: the owned [`Matrix`], the views [`MatrixView`] / [`MatrixViewMut`], and the
//! unsized [`MatrixBase`] that every method lives on.
//!
//! A matrix is row-major: element `(r, c)` sits at `data[r * stride + c]`, with
//! `stride >= cols`. Elements between `cols` and `stride` of a row (the padding) are never
//! read or written by any operation. Owned matrices and both views dereference to
//! `MatrixBase<R>` (shared or mutable), Kaldi's `MatrixBase`, so one method serves all
//! three; because `MatrixBase` is unsized it cannot be moved or swapped out from under its
//! owner, and the borrow checker makes the views as safe as slices.
//!
//! ```
//! use dense_matrix::Matrix;
//! let mut m = Matrix::<f64>::new(4, 3);
//! let (mut top, mut bottom) = m.split_rows_at_mut(2); // two disjoint mutable views
//! top.set(1.0);
//! bottom.col_range_mut(1, 2).set(2.0);
//! assert_eq!(m.sum(), 6.0 + 8.0);
//! ```
//!
//! A view keeps its parent borrowed, so Kaldi's dangling or aliasing `SubMatrix` cannot be
//! written:
//!
//! ```compile_fail
//! use dense_matrix::Matrix;
//! let mut m = Matrix::<f64>::new(2, 2);
//! let row = m.row(0);
//! m.set_zero(); // error: `m` is borrowed by `row`
//! println!("{}", row[0]);
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, Index, IndexMut};
use std::ptr;

use rayon::prelude::*;

use crate::error::{out_of_bounds, shape_mismatch};
use crate::{Error, Real, VectorBase};

/// How a new matrix lays out its rows (Kaldi's `MatrixStrideType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[doc(alias = "MatrixStrideType")]
pub enum StrideType {
    /// Each row padded to a multiple of 16 bytes (Kaldi's `kDefaultStride`).
    #[default]
    #[doc(alias = "kDefaultStride")]
    Default,
    /// Dense rows, `stride == cols` (Kaldi's `kStrideEqualNumCols`).
    #[doc(alias = "kStrideEqualNumCols")]
    EqualNumCols,
}

/// The four words that describe a window of memory as a matrix.
#[repr(C)]
pub(crate) struct Header<R> {
    pub(crate) ptr: *mut R,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) stride: usize,
}

impl<R> Clone for Header<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for Header<R> {}

impl<R> Header<R> {
    fn base(&self) -> &MatrixBase<R> {
        let fat: *const [()] = ptr::slice_from_raw_parts(self as *const Self as *const (), 0);
        // SAFETY: `MatrixBase<R>` is `repr(C)` with `Header<R>`'s fields followed by a
        // zero-length `[()]` tail, so a fat pointer to `self` with length 0 is valid for it.
        unsafe { &*(fat as *const MatrixBase<R>) }
    }

    fn base_mut(&mut self) -> &mut MatrixBase<R> {
        let fat: *mut [()] = ptr::slice_from_raw_parts_mut(self as *mut Self as *mut (), 0);
        // SAFETY: as in `base`.
        unsafe { &mut *(fat as *mut MatrixBase<R>) }
    }
}

/// The operations of a matrix, on owned matrices and views alike (Kaldi's `MatrixBase`).
///
/// Reached only through `&MatrixBase<R>` (a shared view) or `&mut MatrixBase<R>` (a
/// mutable view), by dereferencing a [`Matrix`], [`MatrixView`] or [`MatrixViewMut`];
/// functions taking `&MatrixBase<R>` therefore accept `&m` for all three.
#[repr(C)]
pub struct MatrixBase<R> {
    ptr: *mut R,
    rows: usize,
    cols: usize,
    stride: usize,
    _unsized: [()],
}

// SAFETY: a `MatrixBase` only hands out access to its elements under the borrow rules of
// the reference it is reached through, exactly like `[R]`.
unsafe impl<R: Send> Send for MatrixBase<R> {}
// SAFETY: as above.
unsafe impl<R: Sync> Sync for MatrixBase<R> {}

/// An owned row-major matrix (Kaldi's `Matrix`).
pub struct Matrix<R> {
    pub(crate) data: Vec<R>,
    pub(crate) header: Header<R>,
}

// SAFETY: `Matrix` owns its buffer like a `Vec<R>`.
unsafe impl<R: Send> Send for Matrix<R> {}
// SAFETY: as above.
unsafe impl<R: Sync> Sync for Matrix<R> {}

/// A shared view of a rectangular window of a matrix (Kaldi's `SubMatrix`, read-only).
pub struct MatrixView<'a, R> {
    header: Header<R>,
    _borrow: PhantomData<&'a R>,
}

// SAFETY: a `MatrixView` is a `&[R]` in spirit.
unsafe impl<R: Sync> Send for MatrixView<'_, R> {}
// SAFETY: as above.
unsafe impl<R: Sync> Sync for MatrixView<'_, R> {}

impl<R> Clone for MatrixView<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for MatrixView<'_, R> {}

/// A mutable view of a rectangular window of a matrix (Kaldi's `SubMatrix`).
pub struct MatrixViewMut<'a, R> {
    header: Header<R>,
    _borrow: PhantomData<&'a mut R>,
}

// SAFETY: a `MatrixViewMut` is a `&mut [R]` in spirit.
unsafe impl<R: Send> Send for MatrixViewMut<'_, R> {}
// SAFETY: as above.
unsafe impl<R: Sync> Sync for MatrixViewMut<'_, R> {}

impl<R> Deref for Matrix<R> {
    type Target = MatrixBase<R>;
    fn deref(&self) -> &MatrixBase<R> {
        self.header.base()
    }
}
impl<R> DerefMut for Matrix<R> {
    fn deref_mut(&mut self) -> &mut MatrixBase<R> {
        self.header.base_mut()
    }
}
impl<R> Deref for MatrixView<'_, R> {
    type Target = MatrixBase<R>;
    fn deref(&self) -> &MatrixBase<R> {
        self.header.base()
    }
}
impl<R> Deref for MatrixViewMut<'_, R> {
    type Target = MatrixBase<R>;
    fn deref(&self) -> &MatrixBase<R> {
        self.header.base()
    }
}
impl<R> DerefMut for MatrixViewMut<'_, R> {
    fn deref_mut(&mut self) -> &mut MatrixBase<R> {
        self.header.base_mut()
    }
}

/// Kaldi's default stride: `cols` rounded up so that a row is a multiple of 16 bytes.
///
/// # Panics
/// If the rounded-up stride overflows `usize` (`cols` within 16 bytes of `usize::MAX`).
#[track_caller]
pub fn default_stride<R>(cols: usize) -> usize {
    match checked_default_stride::<R>(cols) {
        Some(stride) => stride,
        None => crate::error::precondition(&format!(
            "default_stride: {cols} columns rounded up to 16 bytes overflow usize"
        )),
    }
}

/// [`default_stride`], or `None` when it overflows.
pub(crate) fn checked_default_stride<R>(cols: usize) -> Option<usize> {
    let per16 = (16 / std::mem::size_of::<R>()).max(1);
    cols.div_ceil(per16).checked_mul(per16)
}

/// The element count `rows * stride` of a buffer, checked: it must neither overflow
/// `usize` nor exceed `isize::MAX` bytes (the most any allocation or slice can hold).
pub(crate) fn checked_buffer_len<R>(
    what: &'static str,
    rows: usize,
    cols: usize,
    stride: usize,
) -> Result<usize, Error> {
    let overflow = Error::SizeOverflow { what, rows, cols };
    let len = rows.checked_mul(stride).ok_or(overflow.clone())?;
    let bytes = len
        .checked_mul(std::mem::size_of::<R>())
        .ok_or(overflow.clone())?;
    if bytes > isize::MAX as usize {
        return Err(overflow);
    }
    Ok(len)
}

/// A `*mut R` that may cross threads; users guarantee disjoint access.
#[derive(Clone, Copy)]
pub(crate) struct SyncPtr<R>(pub(crate) *mut R);
// SAFETY: only used to hand disjoint rows to rayon workers.
unsafe impl<R> Send for SyncPtr<R> {}
// SAFETY: as above.
unsafe impl<R> Sync for SyncPtr<R> {}

impl<R: Real> MatrixBase<R> {
    fn header(&self) -> Header<R> {
        Header {
            ptr: self.ptr,
            rows: self.rows,
            cols: self.cols,
            stride: self.stride,
        }
    }

    /// Number of rows.
    #[inline]
    #[doc(alias = "NumRows")]
    pub fn num_rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    #[inline]
    #[doc(alias = "NumCols")]
    pub fn num_cols(&self) -> usize {
        self.cols
    }

    /// Distance in elements between the starts of consecutive rows (`>= num_cols()`).
    #[inline]
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// `(rows, cols)`.
    #[inline]
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// True for the 0 x 0 matrix.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The raw pointer to element (0, 0), for FFI; elements are at `r * stride + c`.
    pub fn as_ptr(&self) -> *const R {
        self.ptr
    }

    /// The raw mutable pointer to element (0, 0), for FFI; it carries the provenance of
    /// the whole window (unlike a pointer taken from one row's slice).
    pub fn as_mut_ptr(&mut self) -> *mut R {
        self.ptr
    }

    /// Row `r` as a slice.
    ///
    /// # Panics
    /// If `r >= num_rows()`.
    #[inline]
    #[track_caller]
    #[doc(alias = "RowData")]
    pub fn row_data(&self, r: usize) -> &[R] {
        if r >= self.rows {
            out_of_bounds("row", r, self.rows, "a matrix");
        }
        // SAFETY: `r < rows` (checked above), and every constructor (`try_new` through
        // `checked_buffer_len`, `from_slice` through `check_view`, `from_array` through
        // ndarray's own layout) guaranteed that rows `0..rows` of `cols` elements at
        // `ptr + r * stride` are inside the window this shared reference borrows.
        unsafe { std::slice::from_raw_parts(self.ptr.add(r * self.stride), self.cols) }
    }

    /// Row `r` as a mutable slice.
    ///
    /// # Panics
    /// If `r >= num_rows()`.
    #[inline]
    #[track_caller]
    pub fn row_data_mut(&mut self, r: usize) -> &mut [R] {
        if r >= self.rows {
            out_of_bounds("row", r, self.rows, "a matrix");
        }
        // SAFETY: `r < rows` (checked above) and the constructors' checked sizes, as in
        // `row_data`; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(r * self.stride), self.cols) }
    }

    /// Row `r` as a vector view (Kaldi's `Row`).
    ///
    /// # Panics
    /// If `r >= num_rows()`.
    #[track_caller]
    pub fn row(&self, r: usize) -> &VectorBase<R> {
        VectorBase::from_slice(self.row_data(r))
    }

    /// Row `r` as a mutable vector view.
    ///
    /// # Panics
    /// If `r >= num_rows()`.
    #[track_caller]
    pub fn row_mut(&mut self, r: usize) -> &mut VectorBase<R> {
        VectorBase::from_slice_mut(self.row_data_mut(r))
    }

    /// Element `(r, c)`, or `None` when out of range.
    pub fn get(&self, r: usize, c: usize) -> Option<R> {
        (r < self.rows && c < self.cols).then(|| self.row_data(r)[c])
    }

    /// Iterator over the rows as slices.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &[R]> + '_ {
        (0..self.rows).map(move |r| self.row_data(r))
    }

    #[track_caller]
    fn window(&self, row0: usize, n_rows: usize, col0: usize, n_cols: usize) -> Header<R> {
        let row_end = row0.checked_add(n_rows);
        let col_end = col0.checked_add(n_cols);
        if row_end.is_none_or(|e| e > self.rows) || col_end.is_none_or(|e| e > self.cols) {
            panic!(
                "window rows {row0}..{} x cols {col0}..{} out of bounds for a {} x {} matrix",
                row0.saturating_add(n_rows),
                col0.saturating_add(n_cols),
                self.rows,
                self.cols
            );
        }
        if n_rows == 0 || n_cols == 0 {
            // Kaldi turns an empty window into the 0 x 0 matrix.
            return Header {
                ptr: self.ptr,
                rows: 0,
                cols: 0,
                stride: 0,
            };
        }
        Header {
            // SAFETY: `row0 + n_rows <= rows` and `col0 + n_cols <= cols` (checked above with
            // `checked_add`) with both non-zero, so `row0 * stride + col0` is an element of
            // the window, whose size the constructors checked.
            ptr: unsafe { self.ptr.add(row0 * self.stride + col0) },
            rows: n_rows,
            cols: n_cols,
            stride: self.stride,
        }
    }

    /// The view of rows `row0 .. row0 + n_rows`, columns `col0 .. col0 + n_cols` (Kaldi's
    /// `Range`); a window with no rows or no columns is the 0 x 0 view.
    ///
    /// # Panics
    /// If the window does not fit.
    #[track_caller]
    pub fn range(
        &self,
        row0: usize,
        n_rows: usize,
        col0: usize,
        n_cols: usize,
    ) -> MatrixView<'_, R> {
        MatrixView {
            header: self.window(row0, n_rows, col0, n_cols),
            _borrow: PhantomData,
        }
    }

    /// The mutable view of a window, as [`MatrixBase::range`].
    ///
    /// # Panics
    /// If the window does not fit.
    #[track_caller]
    pub fn range_mut(
        &mut self,
        row0: usize,
        n_rows: usize,
        col0: usize,
        n_cols: usize,
    ) -> MatrixViewMut<'_, R> {
        MatrixViewMut {
            header: self.window(row0, n_rows, col0, n_cols),
            _borrow: PhantomData,
        }
    }

    /// Rows `row0 .. row0 + n_rows` (Kaldi's `RowRange`).
    #[track_caller]
    #[doc(alias = "RowRange")]
    pub fn row_range(&self, row0: usize, n_rows: usize) -> MatrixView<'_, R> {
        self.range(row0, n_rows, 0, self.cols)
    }

    /// Mutable rows `row0 .. row0 + n_rows`.
    #[track_caller]
    pub fn row_range_mut(&mut self, row0: usize, n_rows: usize) -> MatrixViewMut<'_, R> {
        let cols = self.cols;
        self.range_mut(row0, n_rows, 0, cols)
    }

    /// Columns `col0 .. col0 + n_cols` (Kaldi's `ColRange`).
    #[track_caller]
    #[doc(alias = "ColRange")]
    pub fn col_range(&self, col0: usize, n_cols: usize) -> MatrixView<'_, R> {
        self.range(0, self.rows, col0, n_cols)
    }

    /// Mutable columns `col0 .. col0 + n_cols`.
    #[track_caller]
    pub fn col_range_mut(&mut self, col0: usize, n_cols: usize) -> MatrixViewMut<'_, R> {
        let rows = self.rows;
        self.range_mut(0, rows, col0, n_cols)
    }

    /// The whole matrix as a shared view.
    pub fn view(&self) -> MatrixView<'_, R> {
        MatrixView {
            header: self.header(),
            _borrow: PhantomData,
        }
    }

    /// The whole matrix as a mutable view.
    pub fn view_mut(&mut self) -> MatrixViewMut<'_, R> {
        MatrixViewMut {
            header: self.header(),
            _borrow: PhantomData,
        }
    }

    /// Two disjoint mutable views: rows before `mid` and rows from `mid`.
    ///
    /// # Panics
    /// If `mid > num_rows()`.
    #[track_caller]
    pub fn split_rows_at_mut(
        &mut self,
        mid: usize,
    ) -> (MatrixViewMut<'_, R>, MatrixViewMut<'_, R>) {
        if mid > self.rows {
            out_of_bounds("split row", mid, self.rows, "a matrix");
        }
        let top = self.window(0, mid, 0, self.cols);
        let bottom = self.window(mid, self.rows - mid, 0, self.cols);
        (
            MatrixViewMut {
                header: top,
                _borrow: PhantomData,
            },
            MatrixViewMut {
                header: bottom,
                _borrow: PhantomData,
            },
        )
    }

    /// Two disjoint mutable views: columns before `mid` and columns from `mid`.
    ///
    /// # Panics
    /// If `mid > num_cols()`.
    #[track_caller]
    pub fn split_cols_at_mut(
        &mut self,
        mid: usize,
    ) -> (MatrixViewMut<'_, R>, MatrixViewMut<'_, R>) {
        if mid > self.cols {
            out_of_bounds("split column", mid, self.cols, "a matrix");
        }
        let left = self.window(0, self.rows, 0, mid);
        let right = self.window(0, self.rows, mid, self.cols - mid);
        (
            MatrixViewMut {
                header: left,
                _borrow: PhantomData,
            },
            MatrixViewMut {
                header: right,
                _borrow: PhantomData,
            },
        )
    }

    /// A copy as an owned matrix with the default stride.
    pub fn to_matrix(&self) -> Matrix<R> {
        let mut m = Matrix::new(self.rows, self.cols);
        m.copy_from_mat(self, crate::Trans::NoTrans);
        m
    }

    #[track_caller]
    pub(crate) fn check_same_shape(&self, op: &str, other: (usize, usize)) {
        if self.shape() != other {
            shape_mismatch(op, self.shape(), other);
        }
    }

    /// Calls `f(r, row)` for every row, in parallel over rows when the matrix is large.
    pub(crate) fn for_each_row_mut(&mut self, f: impl Fn(usize, &mut [R]) + Sync + Send) {
        let (rows, cols, stride) = (self.rows, self.cols, self.stride);
        let base = SyncPtr(self.ptr);
        let row = move |r: usize| {
            let base = base;
            // SAFETY: `r < rows` (the caller iterates `0..rows`), rows are inside the
            // window by the constructors' checked sizes, distinct `r` give disjoint rows,
            // and `&mut self` makes the window exclusive.
            unsafe { std::slice::from_raw_parts_mut(base.0.add(r * stride), cols) }
        };
        if cpu_features::go_parallel(rows * cols) && rows > 1 {
            (0..rows).into_par_iter().for_each(|r| f(r, row(r)));
        } else {
            (0..rows).for_each(|r| f(r, row(r)));
        }
    }

    /// Like `for_each_row_mut` with the matching row of `other` (same shape, checked).
    #[track_caller]
    pub(crate) fn zip_rows_mut<S: Real>(
        &mut self,
        op: &str,
        other: &MatrixBase<S>,
        f: impl Fn(&mut [R], &[S]) + Sync + Send,
    ) {
        self.check_same_shape(op, other.shape());
        self.for_each_row_mut(|r, row| f(row, other.row_data(r)));
    }
}

impl<'a, R: Real> MatrixView<'a, R> {
    /// A view of `rows x cols` elements of `data`, row `r` starting at `r * stride`
    /// (Kaldi's `SubMatrix(data, rows, cols, stride)`).
    pub fn from_slice(
        data: &'a [R],
        rows: usize,
        cols: usize,
        stride: usize,
    ) -> Result<Self, Error> {
        check_view(data.len(), rows, cols, stride)?;
        Ok(Self {
            header: Header {
                ptr: data.as_ptr() as *mut R,
                rows,
                cols,
                stride,
            },
            _borrow: PhantomData,
        })
    }

    /// A view of `rows x cols` elements at `ptr`, row `r` at `ptr + r * stride`, without
    /// forming any slice over the gaps between rows (which may belong to someone else).
    ///
    /// # Safety
    /// `rows` and `cols` are both zero or both non-zero, `stride >= cols`, and for every
    /// row `r < rows` the `cols` elements at `ptr + r * stride` are valid for reads and
    /// not written through any other path for `'a`.
    pub(crate) unsafe fn from_raw_parts(
        ptr: *const R,
        rows: usize,
        cols: usize,
        stride: usize,
    ) -> Self {
        Self {
            header: Header {
                ptr: ptr as *mut R,
                rows,
                cols,
                stride,
            },
            _borrow: PhantomData,
        }
    }

    /// Row `r` with the view's full lifetime.
    #[track_caller]
    pub fn into_row(self, r: usize) -> &'a VectorBase<R> {
        let row = self.header.base().row_data(r);
        // SAFETY: the data is borrowed for `'a`, not from the header.
        VectorBase::from_slice(unsafe { std::slice::from_raw_parts(row.as_ptr(), row.len()) })
    }
}

impl<'a, R: Real> MatrixViewMut<'a, R> {
    /// A mutable view of `rows x cols` elements of `data`, row `r` at `r * stride`.
    pub fn from_slice(
        data: &'a mut [R],
        rows: usize,
        cols: usize,
        stride: usize,
    ) -> Result<Self, Error> {
        check_view(data.len(), rows, cols, stride)?;
        Ok(Self {
            header: Header {
                ptr: data.as_mut_ptr(),
                rows,
                cols,
                stride,
            },
            _borrow: PhantomData,
        })
    }

    /// A mutable view of `rows x cols` elements at `ptr`, row `r` at `ptr + r * stride`,
    /// without forming any slice over the gaps between rows.
    ///
    /// # Safety
    /// As [`MatrixView::from_raw_parts`], with the rows valid for writes and accessed
    /// through no other path for `'a`.
    pub(crate) unsafe fn from_raw_parts_mut(
        ptr: *mut R,
        rows: usize,
        cols: usize,
        stride: usize,
    ) -> Self {
        Self {
            header: Header {
                ptr,
                rows,
                cols,
                stride,
            },
            _borrow: PhantomData,
        }
    }

    /// Splits into two views, rows before and from `mid`, each with the full lifetime.
    ///
    /// # Panics
    /// If `mid > num_rows()`.
    #[track_caller]
    pub fn split_rows_at(mut self, mid: usize) -> (MatrixViewMut<'a, R>, MatrixViewMut<'a, R>) {
        let (a, b) = self.split_rows_at_mut(mid);
        (
            MatrixViewMut {
                header: a.header,
                _borrow: PhantomData,
            },
            MatrixViewMut {
                header: b.header,
                _borrow: PhantomData,
            },
        )
    }
}

fn check_view(len: usize, rows: usize, cols: usize, stride: usize) -> Result<(), Error> {
    if (rows == 0) != (cols == 0) {
        return Err(Error::EmptyDimension { rows, cols });
    }
    if stride < cols {
        return Err(Error::StrideTooSmall { stride, cols });
    }
    // Checked: a wrapped product would let an impossible shape pass as a short one.
    let needed = if rows == 0 {
        Some(0)
    } else {
        (rows - 1)
            .checked_mul(stride)
            .and_then(|n| n.checked_add(cols))
    };
    let Some(needed) = needed else {
        return Err(Error::SizeOverflow {
            what: "MatrixView::from_slice (rows - 1) * stride + cols",
            rows,
            cols: stride,
        });
    };
    if needed > len {
        return Err(Error::BufferTooShort { needed, len });
    }
    Ok(())
}

impl<R: Real> Index<(usize, usize)> for MatrixBase<R> {
    type Output = R;
    #[track_caller]
    fn index(&self, (r, c): (usize, usize)) -> &R {
        if c >= self.cols {
            out_of_bounds("column", c, self.cols, "a matrix");
        }
        &self.row_data(r)[c]
    }
}

impl<R: Real> IndexMut<(usize, usize)> for MatrixBase<R> {
    #[track_caller]
    fn index_mut(&mut self, (r, c): (usize, usize)) -> &mut R {
        if c >= self.cols {
            out_of_bounds("column", c, self.cols, "a matrix");
        }
        &mut self.row_data_mut(r)[c]
    }
}

/// Equal shapes and equal elements (the padding and the stride do not matter).
impl<R: Real> PartialEq for MatrixBase<R> {
    fn eq(&self, other: &Self) -> bool {
        self.shape() == other.shape() && self.rows().zip(other.rows()).all(|(a, b)| a == b)
    }
}

impl<R: Real> PartialEq for Matrix<R> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

/// Kaldi's text form: `[\n  1 2\n  3 4 ]`.
impl<R: Real> fmt::Display for MatrixBase<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return write!(f, "[ ]");
        }
        write!(f, "[")?;
        for row in self.rows() {
            write!(f, "\n ")?;
            for v in row {
                write!(f, " {v}")?;
            }
        }
        write!(f, " ]")
    }
}

impl<R: Real> fmt::Debug for MatrixBase<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} x {} (stride {}) ", self.rows, self.cols, self.stride)?;
        fmt::Display::fmt(self, f)
    }
}

macro_rules! forward_fmt {
    ($($ty:ty),*) => {$(
        impl<R: Real> fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&**self, f)
            }
        }
        impl<R: Real> fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&**self, f)
            }
        }
    )*};
}
forward_fmt!(Matrix<R>, MatrixView<'_, R>, MatrixViewMut<'_, R>);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ResizeType, Trans};

    #[test]
    fn default_stride_pads_rows_to_16_bytes() {
        assert_eq!(Matrix::<f32>::new(2, 5).stride(), 8);
        assert_eq!(Matrix::<f32>::new(2, 4).stride(), 4);
        assert_eq!(Matrix::<f64>::new(2, 3).stride(), 4);
        assert_eq!(Matrix::<f64>::new(2, 2).stride(), 2);
        let m = Matrix::<f32>::try_new(3, 5, StrideType::EqualNumCols).unwrap();
        assert_eq!(m.stride(), 5);
    }

    #[test]
    fn from_vec_checks_the_length() {
        let m = Matrix::from_vec(2, 2, vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!((m.stride(), m[(1, 0)]), (2, 3.0));
        assert_eq!(
            Matrix::from_vec(2, 2, vec![1.0f64]).err(),
            Some(Error::LengthMismatch {
                expected: 4,
                got: 1
            })
        );
    }

    #[test]
    fn zero_by_n_is_illegal() {
        assert_eq!(
            Matrix::<f64>::try_new(0, 3, StrideType::Default).err(),
            Some(Error::EmptyDimension { rows: 0, cols: 3 })
        );
        assert!(Matrix::<f64>::try_new(0, 0, StrideType::Default).is_ok());
    }

    #[test]
    #[should_panic(expected = "a 3 x 0 matrix is not allowed")]
    fn new_panics_on_n_by_zero() {
        let _ = Matrix::<f64>::new(3, 0);
    }

    #[test]
    fn resize_copy_data_keeps_the_top_left_block() {
        let mut m = Matrix::from_rows(&[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        m.resize(3, 2, ResizeType::CopyData);
        assert_eq!(m, Matrix::from_rows(&[[1.0, 2.0], [4.0, 5.0], [0.0, 0.0]]));
        m.resize(3, 2, ResizeType::Undefined);
        assert_eq!(m[(1, 1)], 5.0);
        m.resize(3, 2, ResizeType::SetZero);
        assert!(m.is_zero(0.0));
    }

    #[test]
    fn remove_row_and_transpose() {
        let mut m = Matrix::from_rows(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let mut t = m.clone();
        t.transpose();
        assert_eq!(t, Matrix::from_rows(&[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]));
        m.remove_row(0);
        assert_eq!(m, Matrix::from_rows(&[[4.0, 5.0, 6.0]]));
        m.remove_row(0);
        assert_eq!(m.shape(), (0, 0));
        let mut sq = Matrix::from_rows(&[[1.0f64, 2.0], [3.0, 4.0]]);
        sq.transpose();
        assert_eq!(sq, Matrix::from_rows(&[[1.0, 3.0], [2.0, 4.0]]));
    }

    #[test]
    fn views_share_the_parent_and_keep_its_stride() {
        let mut m = Matrix::<f64>::new(4, 5);
        m.range_mut(1, 2, 2, 3).set(1.0);
        let v = m.range(1, 2, 2, 3);
        assert_eq!((v.shape(), v.stride()), ((2, 3), m.stride()));
        assert_eq!(m.sum(), 6.0);
        assert_eq!(m[(1, 2)], 1.0);
        assert_eq!(m[(0, 2)], 0.0);
        assert_eq!(m.range(1, 0, 0, 3).shape(), (0, 0));
        let (mut top, mut bottom) = m.split_rows_at_mut(2);
        top.set(2.0);
        bottom.set(3.0);
        assert_eq!(m.sum(), 10.0 * 2.0 + 10.0 * 3.0);
        let (mut left, mut right) = m.split_cols_at_mut(1);
        left.set(0.0);
        right.set(1.0);
        assert_eq!(m.sum(), 16.0);
        assert_eq!(m.col_range(1, 4).sum(), 16.0);
        assert_eq!(m.row_range(3, 1).sum(), 4.0);
    }

    #[test]
    fn disjoint_views_can_be_filled_on_two_threads() {
        let mut m = Matrix::<f32>::new(6, 5);
        {
            let (top, bottom) = m.split_rows_at_mut(3);
            std::thread::scope(|s| {
                for (mut half, value) in [(top, 1.0f32), (bottom, 2.0)] {
                    s.spawn(move || half.set(value));
                }
            });
        }
        assert_eq!(m.row_range(0, 3).sum(), 15.0);
        assert_eq!(m.row_range(3, 3).sum(), 30.0);
        let shared = m.view();
        let row = std::thread::scope(|s| s.spawn(move || shared.into_row(4).sum()).join().unwrap());
        assert_eq!(row, 10.0);
    }

    #[test]
    fn from_slice_checks_stride_and_length() {
        let data = [0.0f64; 11];
        assert!(MatrixView::from_slice(&data, 3, 3, 4).is_ok());
        assert_eq!(
            MatrixView::from_slice(&data, 3, 3, 2).err(),
            Some(Error::StrideTooSmall { stride: 2, cols: 3 })
        );
        assert_eq!(
            MatrixView::from_slice(&data, 3, 3, 5).err(),
            Some(Error::BufferTooShort {
                needed: 13,
                len: 11
            })
        );
    }

    #[test]
    #[should_panic(expected = "window rows 1..3 x cols 0..2 out of bounds for a 2 x 2 matrix")]
    fn window_out_of_bounds() {
        let m = Matrix::<f64>::new(2, 2);
        let _ = m.range(1, 2, 0, 2);
    }

    #[test]
    #[should_panic(expected = "row 2 out of bounds for a matrix with 2 rows")]
    fn row_out_of_bounds() {
        let m = Matrix::<f64>::new(2, 2);
        let _ = m.row(2);
    }

    #[test]
    fn clone_and_display() {
        let m = Matrix::from_rows(&[[1.0f64, 2.0], [3.0, 4.0]]);
        let mut big = Matrix::<f64>::new(3, 3);
        big.range_mut(0, 2, 0, 2).copy_from_mat(&m, Trans::NoTrans);
        assert_eq!(big.range(0, 2, 0, 2).to_matrix(), m);
        assert_eq!(m.to_string(), "[\n  1 2\n  3 4 ]");
    }
}
