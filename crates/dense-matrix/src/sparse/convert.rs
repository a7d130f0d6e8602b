//! Kaldi's sparse copies, transposes and resizes: `SparseVector::CopyFromSvec` and
//! `Resize`, `SparseMatrix::CopyFromSmat`, the transposing constructor
//! `SparseMatrix(other, trans)` and `SparseMatrix::Resize`.

use super::{SparseMatrix, SparseVector};
use crate::{Real, ResizeType, Trans};

impl<R: Real> SparseVector<R> {
    /// Kaldi's `CopyFromSvec(other)`: this vector becomes `other`, its values converted to
    /// `R` (as C++'s `static_cast`; a value that rounds to zero stays stored, as in Kaldi).
    pub fn copy_from_svec<O: Real>(&mut self, other: &SparseVector<O>) {
        self.dim = other.dim;
        self.pairs.clear();
        self.pairs.extend(
            other
                .pairs
                .iter()
                .map(|&(index, value)| (index, R::from_f64(value.to_f64()))),
        );
    }

    /// Kaldi's `Resize(dim, resize_type)`: with [`ResizeType::CopyData`] the pairs below
    /// `dim` are kept; with [`ResizeType::SetZero`] or [`ResizeType::Undefined`] the vector
    /// becomes all zeros.
    pub fn resize(&mut self, dim: usize, resize_type: ResizeType) {
        match resize_type {
            ResizeType::CopyData => {
                // the pairs are sorted by index: the ones to drop are at the end
                let keep = self.pairs.partition_point(|p| p.0 < dim);
                self.pairs.truncate(keep);
            }
            ResizeType::SetZero | ResizeType::Undefined => self.pairs.clear(),
        }
        self.dim = dim;
    }
}

impl<R: Real> SparseMatrix<R> {
    /// Kaldi's `SparseMatrix(other, kTrans)`: the transpose of `other`.
    pub fn from_transposed(other: &SparseMatrix<R>) -> Self {
        other.transpose()
    }

    /// The transpose: a `num_cols() x num_rows()` sparse matrix. As in Kaldi, stored zeros
    /// are not carried over.
    pub fn transpose(&self) -> SparseMatrix<R> {
        let mut out = SparseMatrix::new(0, 0);
        out.copy_from_smat(self, Trans::Trans);
        out
    }

    /// Kaldi's `CopyFromSmat(other, trans)`: this matrix becomes `op(other)`, its values
    /// converted to `R`. With [`Trans::NoTrans`] the rows are copied as they are (stored
    /// zeros included); with [`Trans::Trans`] they are rebuilt, and, as Kaldi's rebuilding
    /// through `SparseVector(dim, pairs)` does, a value that is (or converts to) zero is not
    /// stored.
    pub fn copy_from_smat<O: Real>(&mut self, other: &SparseMatrix<O>, trans: Trans) {
        match trans {
            Trans::NoTrans => {
                self.rows
                    .resize_with(other.rows.len(), SparseVector::default);
                for (dst, src) in self.rows.iter_mut().zip(&other.rows) {
                    dst.copy_from_svec(src);
                }
                self.cols = other.cols;
            }
            Trans::Trans => {
                let n_rows = other.rows.len();
                let mut rows = vec![SparseVector::new(n_rows); other.cols];
                for (row_idx, row) in other.rows.iter().enumerate() {
                    for &(col_idx, value) in &row.pairs {
                        let value = R::from_f64(value.to_f64());
                        if value != R::ZERO {
                            // row_idx grows, so each new row stays sorted
                            rows[col_idx].pairs.push((row_idx, value));
                        }
                    }
                }
                self.rows = rows;
                self.cols = n_rows;
            }
        }
    }

    /// Kaldi's `Resize(rows, cols, resize_type)`: with [`ResizeType::CopyData`] the rows
    /// below `num_rows` keep their pairs below `num_cols` and new rows are empty; with
    /// [`ResizeType::SetZero`] or [`ResizeType::Undefined`] the matrix becomes all zeros.
    pub fn resize(&mut self, num_rows: usize, num_cols: usize, resize_type: ResizeType) {
        match resize_type {
            ResizeType::CopyData => {
                self.rows.truncate(num_rows);
                if num_cols != self.cols {
                    for row in &mut self.rows {
                        row.resize(num_cols, ResizeType::CopyData);
                    }
                }
                self.rows.resize(num_rows, SparseVector::new(num_cols));
            }
            ResizeType::SetZero | ResizeType::Undefined => {
                self.rows.clear();
                self.rows.resize(num_rows, SparseVector::new(num_cols));
            }
        }
        self.cols = num_cols;
    }
}
