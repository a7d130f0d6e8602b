//! Matrix set/copy, gather, element-wise, softmax and reduction methods (the non-BLAS part
//! of Kaldi's `MatrixBase`), plus the vector methods that read a matrix.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

use crate::error::{dim_mismatch, out_of_bounds, precondition, shape_mismatch};
use crate::kernels;
use crate::{Error, MatrixBase, Position, Real, Trans, VectorBase};

/// `p`-norm over a sequence of slices (shared by vectors and matrices).
#[track_caller]
pub(crate) fn slices_norm<'a, R: Real>(parts: impl Iterator<Item = &'a [R]>, p: R) -> R {
    let p64 = p.to_f64();
    if p64 < 0.0 || p64.is_nan() {
        precondition(&format!("norm: p must be >= 0, got {p64}"));
    }
    if p64 == 0.0 {
        let n: usize = parts
            .map(|x| x.iter().filter(|&&v| v != R::ZERO).count())
            .sum();
        return R::from_f64(n as f64);
    }
    if p64.is_infinite() {
        return parts.fold(R::ZERO, |m, x| x.iter().fold(m, |m, v| m.max(v.abs())));
    }
    let sum: f64 = if p64 == 1.0 {
        parts
            .map(|x| x.iter().map(|v| v.to_f64().abs()).sum::<f64>())
            .sum()
    } else if p64 == 2.0 {
        parts
            .map(|x| x.iter().map(|v| v.to_f64().powi(2)).sum::<f64>())
            .sum()
    } else {
        parts
            .map(|x| x.iter().map(|v| v.to_f64().abs().powf(p64)).sum::<f64>())
            .sum()
    };
    R::from_f64(sum.powf(1.0 / p64))
}

/// Index `idx` of a gather, as `Some(row)` or `None` for a negative (zero-filling) index.
#[track_caller]
fn gather_index(idx: i32, limit: usize, what: &str) -> Option<usize> {
    if idx < 0 {
        return None;
    }
    let i = idx as usize;
    if i >= limit {
        out_of_bounds(what, i, limit, "the source matrix");
    }
    Some(i)
}

impl<R: Real> MatrixBase<R> {
    /// Sum of `f(row)` over rows, added in row order (same result sequential or parallel).
    pub(crate) fn sum_rows_f64(&self, f: impl Fn(&[R]) -> f64 + Sync + Send) -> f64 {
        if cpu_features::go_parallel(self.num_rows() * self.num_cols()) {
            let partials: Vec<f64> = (0..self.num_rows())
                .into_par_iter()
                .map(|r| f(self.row_data(r)))
                .collect();
            partials.into_iter().sum()
        } else {
            self.rows().map(f).sum()
        }
    }

    // ------------------------------------------------------------------ set and copy

    /// Sets every element to zero.
    #[doc(alias = "SetZero")]
    pub fn set_zero(&mut self) {
        self.for_each_row_mut(|_, row| row.fill(R::ZERO));
    }

    /// Sets every element to `value`.
    pub fn set(&mut self, value: R) {
        self.for_each_row_mut(|_, row| row.fill(value));
    }

    /// Sets the identity (ones on the diagonal, zeros elsewhere; any shape).
    #[doc(alias = "SetUnit")]
    pub fn set_unit(&mut self) {
        self.for_each_row_mut(|r, row| {
            row.fill(R::ZERO);
            if r < row.len() {
                row[r] = R::ONE;
            }
        });
    }

    /// Fills with standard normal samples from `rng` (Kaldi's `SetRandn`).
    #[doc(alias = "SetRandn")]
    pub fn set_randn(&mut self, rng: &mut impl Rng) {
        for r in 0..self.num_rows() {
            for v in self.row_data_mut(r) {
                let x: f64 = StandardNormal.sample(rng);
                *v = R::from_f64(x);
            }
        }
    }

    /// Fills with uniform samples in `[0, 1)` from `rng` (Kaldi's `SetRandUniform`).
    #[doc(alias = "SetRandUniform")]
    pub fn set_rand_uniform(&mut self, rng: &mut impl Rng) {
        for r in 0..self.num_rows() {
            for v in self.row_data_mut(r) {
                *v = R::from_f64(rng.random::<f64>());
            }
        }
    }

    /// `self = src` or `self = src^T`, converting between precisions if needed (Kaldi's
    /// `CopyFromMat`).
    ///
    /// # Panics
    /// If the shapes do not match.
    #[track_caller]
    #[doc(alias = "CopyFromMat")]
    pub fn copy_from_mat<S: Real>(&mut self, src: &MatrixBase<S>, trans: Trans) {
        match trans {
            Trans::NoTrans => self.zip_rows_mut("copy_from_mat", src, |a, b| {
                for (o, &x) in a.iter_mut().zip(b) {
                    *o = R::from_f64(x.to_f64());
                }
            }),
            Trans::Trans => {
                let t_shape = (src.num_cols(), src.num_rows());
                self.check_same_shape("copy_from_mat (transposed source)", t_shape);
                const BLOCK: usize = 32;
                let (rows, cols) = self.shape();
                for r0 in (0..rows).step_by(BLOCK) {
                    for c0 in (0..cols).step_by(BLOCK) {
                        for r in r0..(r0 + BLOCK).min(rows) {
                            let row = self.row_data_mut(r);
                            for (c, o) in row
                                .iter_mut()
                                .enumerate()
                                .take((c0 + BLOCK).min(cols))
                                .skip(c0)
                            {
                                *o = R::from_f64(src.row_data(c)[r].to_f64());
                            }
                        }
                    }
                }
            }
        }
    }

    /// Copies `v` into the rows: if `v.dim() == rows * cols` it is the concatenation of the
    /// rows, if `v.dim() == cols` every row becomes `v` (Kaldi's `CopyRowsFromVec`).
    ///
    /// # Panics
    /// For any other length.
    #[track_caller]
    #[doc(alias = "CopyRowsFromVec")]
    pub fn copy_rows_from_vec(&mut self, v: &VectorBase<R>) {
        let (rows, cols) = self.shape();
        if v.dim() == rows * cols {
            self.for_each_row_mut(|r, row| {
                row.copy_from_slice(&v.data()[r * cols..(r + 1) * cols])
            });
        } else if v.dim() == cols {
            self.for_each_row_mut(|_, row| row.copy_from_slice(v.data()));
        } else {
            dim_mismatch(
                "copy_rows_from_vec",
                "vector dim",
                v.dim(),
                "rows * cols or cols of a matrix with cols",
                cols,
            );
        }
    }

    /// Copies `v` into the columns: if `v.dim() == rows * cols` it is the concatenation of
    /// the columns, if `v.dim() == rows` every column becomes `v` (Kaldi's
    /// `CopyColsFromVec`).
    ///
    /// # Panics
    /// For any other length.
    #[track_caller]
    #[doc(alias = "CopyColsFromVec")]
    pub fn copy_cols_from_vec(&mut self, v: &VectorBase<R>) {
        let (rows, cols) = self.shape();
        if v.dim() == rows * cols {
            self.for_each_row_mut(|r, row| {
                for (c, o) in row.iter_mut().enumerate() {
                    *o = v.data()[c * rows + r];
                }
            });
        } else if v.dim() == rows {
            self.for_each_row_mut(|r, row| row.fill(v.data()[r]));
        } else {
            dim_mismatch(
                "copy_cols_from_vec",
                "vector dim",
                v.dim(),
                "rows * cols or rows of a matrix with rows",
                rows,
            );
        }
    }

    /// Copies `v` onto the diagonal (Kaldi's `CopyDiagFromVec`); the rest is untouched.
    ///
    /// # Panics
    /// If `v.dim() != min(rows, cols)`.
    #[track_caller]
    #[doc(alias = "CopyDiagFromVec")]
    pub fn copy_diag_from_vec(&mut self, v: &VectorBase<R>) {
        let n = self.num_rows().min(self.num_cols());
        v.check_same_dim("copy_diag_from_vec", n);
        for i in 0..n {
            self.row_data_mut(i)[i] = v[i];
        }
    }

    /// Row `r` of `self` becomes row `indices[r]` of `src`, or zeros where the index is
    /// negative (Kaldi's `CopyRows`).
    ///
    /// # Panics
    /// If `indices.len() != rows`, the column counts differ, or an index is too large.
    #[track_caller]
    #[doc(alias = "CopyRows")]
    pub fn copy_rows(&mut self, src: &MatrixBase<R>, indices: &[i32]) {
        if indices.len() != self.num_rows() || src.num_cols() != self.num_cols() {
            shape_mismatch(
                "copy_rows (indices x source cols)",
                self.shape(),
                (indices.len(), src.num_cols()),
            );
        }
        for (r, &idx) in indices.iter().enumerate() {
            match gather_index(idx, src.num_rows(), "row") {
                Some(i) => self.row_data_mut(r).copy_from_slice(src.row_data(i)),
                None => self.row_data_mut(r).fill(R::ZERO),
            }
        }
    }

    /// Column `c` of `self` becomes column `indices[c]` of `src`, or zeros where the index
    /// is negative (Kaldi's `CopyCols`).
    ///
    /// # Panics
    /// If `indices.len() != cols`, the row counts differ, or an index is too large.
    #[track_caller]
    #[doc(alias = "CopyCols")]
    pub fn copy_cols(&mut self, src: &MatrixBase<R>, indices: &[i32]) {
        if indices.len() != self.num_cols() || src.num_rows() != self.num_rows() {
            shape_mismatch(
                "copy_cols (source rows x indices)",
                self.shape(),
                (src.num_rows(), indices.len()),
            );
        }
        let gathered: Vec<Option<usize>> = indices
            .iter()
            .map(|&i| gather_index(i, src.num_cols(), "column"))
            .collect();
        self.for_each_row_mut(|r, row| {
            let s = src.row_data(r);
            for (o, idx) in row.iter_mut().zip(&gathered) {
                *o = idx.map_or(R::ZERO, |i| s[i]);
            }
        });
    }

    /// Row `r` of `self` += `alpha` times row `indices[r]` of `src`; negative indices add
    /// nothing (Kaldi's `AddRows`).
    ///
    /// # Panics
    /// If `indices.len() != rows`, the column counts differ, or an index is too large.
    #[track_caller]
    #[doc(alias = "AddRows")]
    pub fn add_rows(&mut self, alpha: R, src: &MatrixBase<R>, indices: &[i32]) {
        if indices.len() != self.num_rows() || src.num_cols() != self.num_cols() {
            shape_mismatch(
                "add_rows (indices x source cols)",
                self.shape(),
                (indices.len(), src.num_cols()),
            );
        }
        for (r, &idx) in indices.iter().enumerate() {
            if let Some(i) = gather_index(idx, src.num_rows(), "row") {
                for (o, &x) in self.row_data_mut(r).iter_mut().zip(src.row_data(i)) {
                    *o += alpha * x;
                }
            }
        }
    }

    #[track_caller]
    fn check_square(&self, op: &str) -> usize {
        if self.num_rows() != self.num_cols() {
            shape_mismatch(
                &format!("{op} needs a square matrix"),
                self.shape(),
                (self.num_rows(), self.num_rows()),
            );
        }
        self.num_rows()
    }

    /// Copies the lower triangle onto the upper one (Kaldi's `CopyLowerToUpper`).
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    #[doc(alias = "CopyLowerToUpper")]
    pub fn copy_lower_to_upper(&mut self) {
        let n = self.check_square("copy_lower_to_upper");
        for r in 0..n {
            for c in 0..r {
                let v = self[(r, c)];
                self[(c, r)] = v;
            }
        }
    }

    /// Copies the upper triangle onto the lower one (Kaldi's `CopyUpperToLower`).
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    #[doc(alias = "CopyUpperToLower")]
    pub fn copy_upper_to_lower(&mut self) {
        let n = self.check_square("copy_upper_to_lower");
        for r in 0..n {
            for c in 0..r {
                let v = self[(c, r)];
                self[(r, c)] = v;
            }
        }
    }

    // ------------------------------------------------------------------ element-wise

    /// Adds `c` to every element.
    pub fn add(&mut self, c: R) {
        self.for_each_row_mut(|_, row| row.iter_mut().for_each(|v| *v += c));
    }

    /// Multiplies every element by `alpha`.
    pub fn scale(&mut self, alpha: R) {
        self.for_each_row_mut(|_, row| row.iter_mut().for_each(|v| *v *= alpha));
    }

    /// `self .*= a`.
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "MulElements")]
    pub fn mul_elements(&mut self, a: &MatrixBase<R>) {
        self.zip_rows_mut("mul_elements", a, |x, y| {
            x.iter_mut().zip(y).for_each(|(o, &v)| *o *= v)
        });
    }

    /// `self ./= a`.
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "DivElements")]
    pub fn div_elements(&mut self, a: &MatrixBase<R>) {
        self.zip_rows_mut("div_elements", a, |x, y| {
            x.iter_mut().zip(y).for_each(|(o, &v)| *o /= v)
        });
    }

    /// `self(i, j) = 1 / self(i, j)`.
    #[doc(alias = "InvertElements")]
    pub fn invert_elements(&mut self) {
        self.for_each_row_mut(|_, row| row.iter_mut().for_each(|v| *v = R::ONE / *v));
    }

    /// Natural log of every element; an error (and no change) if one is negative.
    #[doc(alias = "ApplyLog")]
    pub fn apply_log(&mut self) -> Result<(), Error> {
        for (r, row) in self.rows().enumerate() {
            if let Some(c) = row.iter().position(|&v| v < R::ZERO) {
                return Err(Error::LogOfNegative {
                    position: Position::Matrix(r, c),
                    value: row[c].to_f64(),
                });
            }
        }
        self.for_each_row_mut(|_, row| row.iter_mut().for_each(|v| *v = v.ln()));
        Ok(())
    }

    /// `e^x` of every element.
    #[doc(alias = "ApplyExp")]
    pub fn apply_exp(&mut self) {
        self.for_each_row_mut(|_, row| R::exp_slice(row));
    }

    /// `|x|` of every element.
    #[doc(alias = "ApplyAbs")]
    pub fn apply_abs(&mut self) {
        self.for_each_row_mut(|_, row| row.iter_mut().for_each(|v| *v = v.abs()));
    }

    /// `x^power` of every element; an error (and no change) for a negative element and a
    /// non-integer power.
    #[doc(alias = "ApplyPow")]
    pub fn apply_pow(&mut self, power: R) -> Result<(), Error> {
        if power.floor() != power {
            for (r, row) in self.rows().enumerate() {
                if let Some(c) = row.iter().position(|&v| v < R::ZERO) {
                    return Err(Error::PowerOfNegative {
                        position: Position::Matrix(r, c),
                        value: row[c].to_f64(),
                        power: power.to_f64(),
                    });
                }
            }
        }
        self.for_each_row_mut(|_, row| row.iter_mut().for_each(|v| *v = v.powf(power)));
        Ok(())
    }

    /// `|x|^power`, times the sign of `x` when `include_sign` (Kaldi's `ApplyPowAbs`).
    #[doc(alias = "ApplyPowAbs")]
    pub fn apply_pow_abs(&mut self, power: R, include_sign: bool) {
        self.for_each_row_mut(|_, row| {
            for v in row.iter_mut() {
                let p = v.abs().powf(power);
                *v = if include_sign && *v < R::ZERO { -p } else { p };
            }
        });
    }

    /// `x = max(x, floor_val)`.
    #[doc(alias = "ApplyFloor")]
    pub fn apply_floor(&mut self, floor_val: R) {
        self.for_each_row_mut(|_, row| {
            row.iter_mut().for_each(|v| {
                if *v < floor_val {
                    *v = floor_val
                }
            })
        });
    }

    /// `x = min(x, ceiling_val)`.
    #[doc(alias = "ApplyCeiling")]
    pub fn apply_ceiling(&mut self, ceiling_val: R) {
        self.for_each_row_mut(|_, row| {
            row.iter_mut().for_each(|v| {
                if *v > ceiling_val {
                    *v = ceiling_val
                }
            })
        });
    }

    /// `self = sigmoid(src)` element-wise.
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn sigmoid(&mut self, src: &MatrixBase<R>) {
        self.zip_rows_mut("sigmoid", src, kernels::sigmoid);
    }

    /// `self = tanh(src)` element-wise.
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn tanh(&mut self, src: &MatrixBase<R>) {
        self.zip_rows_mut("tanh", src, kernels::tanh);
    }

    /// `self = ln(1 + e^src)` element-wise (`src` itself above 10, as Kaldi).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "SoftHinge")]
    pub fn soft_hinge(&mut self, src: &MatrixBase<R>) {
        self.zip_rows_mut("soft_hinge", src, kernels::soft_hinge);
    }

    /// Back-propagation through a sigmoid: `self = diff .* value .* (1 - value)`.
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "DiffSigmoid")]
    pub fn diff_sigmoid(&mut self, value: &MatrixBase<R>, diff: &MatrixBase<R>) {
        value.check_same_shape("diff_sigmoid (diff)", diff.shape());
        self.check_same_shape("diff_sigmoid", value.shape());
        self.for_each_row_mut(|r, o| {
            for ((o, &y), &d) in o.iter_mut().zip(value.row_data(r)).zip(diff.row_data(r)) {
                *o = d * y * (R::ONE - y);
            }
        });
    }

    /// Back-propagation through a tanh: `self = diff .* (1 - value^2)`.
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "DiffTanh")]
    pub fn diff_tanh(&mut self, value: &MatrixBase<R>, diff: &MatrixBase<R>) {
        value.check_same_shape("diff_tanh (diff)", diff.shape());
        self.check_same_shape("diff_tanh", value.shape());
        self.for_each_row_mut(|r, o| {
            for ((o, &y), &d) in o.iter_mut().zip(value.row_data(r)).zip(diff.row_data(r)) {
                *o = d * (R::ONE - y * y);
            }
        });
    }

    /// Row `r` is multiplied by `scale[r]` (Kaldi's `MulRowsVec`).
    ///
    /// # Panics
    /// If `scale.dim() != rows`.
    #[track_caller]
    #[doc(alias = "MulRowsVec")]
    pub fn mul_rows_vec(&mut self, scale: &VectorBase<R>) {
        scale.check_same_dim("mul_rows_vec (rows)", self.num_rows());
        self.for_each_row_mut(|r, row| {
            let s = scale[r];
            row.iter_mut().for_each(|v| *v *= s)
        });
    }

    /// Column `c` is multiplied by `scale[c]` (Kaldi's `MulColsVec`).
    ///
    /// # Panics
    /// If `scale.dim() != cols`.
    #[track_caller]
    #[doc(alias = "MulColsVec")]
    pub fn mul_cols_vec(&mut self, scale: &VectorBase<R>) {
        scale.check_same_dim("mul_cols_vec (cols)", self.num_cols());
        self.for_each_row_mut(|_, row| {
            row.iter_mut().zip(scale.data()).for_each(|(v, &s)| *v *= s)
        });
    }

    /// `alpha * v` is added to every row (Kaldi's `AddVecToRows`).
    ///
    /// # Panics
    /// If `v.dim() != cols`.
    #[track_caller]
    #[doc(alias = "AddVecToRows")]
    pub fn add_vec_to_rows(&mut self, alpha: R, v: &VectorBase<R>) {
        v.check_same_dim("add_vec_to_rows (cols)", self.num_cols());
        self.for_each_row_mut(|_, row| {
            row.iter_mut()
                .zip(v.data())
                .for_each(|(o, &x)| *o += alpha * x)
        });
    }

    /// `alpha * v` is added to every column (Kaldi's `AddVecToCols`).
    ///
    /// # Panics
    /// If `v.dim() != rows`.
    #[track_caller]
    #[doc(alias = "AddVecToCols")]
    pub fn add_vec_to_cols(&mut self, alpha: R, v: &VectorBase<R>) {
        v.check_same_dim("add_vec_to_cols (rows)", self.num_rows());
        self.for_each_row_mut(|r, row| {
            let a = alpha * v[r];
            row.iter_mut().for_each(|o| *o += a)
        });
    }

    /// `alpha` is added to the diagonal (Kaldi's `AddToDiag`).
    #[doc(alias = "AddToDiag")]
    pub fn add_to_diag(&mut self, alpha: R) {
        let n = self.num_rows().min(self.num_cols());
        for i in 0..n {
            self.row_data_mut(i)[i] += alpha;
        }
    }

    // ------------------------------------------------------------------ softmax

    /// Softmax over all elements; returns the log normaliser (Kaldi's
    /// `MatrixBase::ApplySoftMax`).
    #[doc(alias("ApplySoftMax", "softmax"))]
    pub fn apply_softmax(&mut self) -> R {
        let m = self.max();
        let shift = m;
        let sum = {
            let partial: Vec<f64> = (0..self.num_rows())
                .map(|r| kernels::exp_shifted_sum(self.row_data_mut(r), shift))
                .collect();
            partial.into_iter().sum::<f64>()
        };
        self.scale(R::from_f64(1.0 / sum));
        m + R::from_f64(sum.ln())
    }

    /// Softmax of every row separately (Kaldi's `SoftMaxPerRow`, in place).
    #[doc(alias = "SoftMaxPerRow")]
    pub fn apply_softmax_per_row(&mut self) {
        self.for_each_row_mut(|_, row| {
            kernels::softmax(row);
        });
    }

    /// Log-softmax of every row separately (Kaldi's `LogSoftMaxPerRow`, in place).
    #[doc(alias = "LogSoftMaxPerRow")]
    pub fn apply_log_softmax_per_row(&mut self) {
        self.for_each_row_mut(|_, row| {
            kernels::log_softmax(row);
        });
    }

    // ------------------------------------------------------------------ reductions

    /// Sum of the elements (accumulated in `f64`, rows added in order).
    pub fn sum(&self) -> R {
        R::from_f64(self.sum_rows_f64(kernels::sum_f64))
    }

    /// Largest element; `-inf` when empty.
    pub fn max(&self) -> R {
        self.rows().fold(R::NEG_INFINITY, |m, row| {
            let x = kernels::max(row);
            if x > m {
                x
            } else {
                m
            }
        })
    }

    /// Smallest element; `+inf` when empty.
    pub fn min(&self) -> R {
        self.rows().fold(R::INFINITY, |m, row| {
            let x = kernels::min(row);
            if x < m {
                x
            } else {
                m
            }
        })
    }

    /// Frobenius norm `sqrt(sum x^2)`.
    #[doc(alias = "FrobeniusNorm")]
    pub fn frobenius_norm(&self) -> R {
        R::from_f64(
            self.sum_rows_f64(|x| x.iter().map(|v| v.to_f64().powi(2)).sum())
                .sqrt(),
        )
    }

    /// Sum of the diagonal.
    ///
    /// # Panics
    /// If the matrix is not square (Kaldi's `Trace(check_square = true)`).
    #[track_caller]
    pub fn trace(&self) -> R {
        let n = self.check_square("trace");
        R::from_f64((0..n).map(|i| self.row_data(i)[i].to_f64()).sum())
    }

    /// Largest absolute value (`0` when empty).
    #[doc(alias("LargestAbsElem", "max_abs", "amax"))]
    pub fn largest_abs_elem(&self) -> R {
        slices_norm(self.rows(), R::INFINITY)
    }

    /// Kaldi's `IsSymmetric(cutoff)`: square, and the antisymmetric part's absolute sum is
    /// at most `cutoff` times the symmetric part's.
    #[doc(alias = "IsSymmetric")]
    pub fn is_symmetric(&self, cutoff: R) -> bool {
        if self.num_rows() != self.num_cols() {
            return false;
        }
        let (mut good, mut bad) = (0.0f64, 0.0f64);
        for i in 0..self.num_rows() {
            for j in 0..i {
                let (a, b) = (self[(i, j)].to_f64(), self[(j, i)].to_f64());
                good += (0.5 * (a + b)).abs();
                bad += (0.5 * (a - b)).abs();
            }
            good += self[(i, i)].to_f64().abs();
        }
        bad <= cutoff.to_f64() * good
    }

    /// Kaldi's `IsDiagonal(cutoff)`: off-diagonal absolute sum at most `cutoff` times the
    /// diagonal's.
    #[doc(alias = "IsDiagonal")]
    pub fn is_diagonal(&self, cutoff: R) -> bool {
        let (mut good, mut bad) = (0.0f64, 0.0f64);
        for (r, row) in self.rows().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                if r == c {
                    good += v.to_f64().abs();
                } else {
                    bad += v.to_f64().abs();
                }
            }
        }
        bad <= good * cutoff.to_f64()
    }

    /// Kaldi's `IsUnit(cutoff)`: every element within `cutoff` of the identity's.
    #[doc(alias = "IsUnit")]
    pub fn is_unit(&self, cutoff: R) -> bool {
        self.rows().enumerate().all(|(r, row)| {
            row.iter().enumerate().all(|(c, &v)| {
                let want = if r == c { R::ONE } else { R::ZERO };
                (v - want).abs() <= cutoff
            })
        })
    }

    /// Kaldi's `IsZero(cutoff)`: every `|x| <= cutoff`.
    #[doc(alias = "IsZero")]
    pub fn is_zero(&self, cutoff: R) -> bool {
        self.rows().all(|row| row.iter().all(|v| v.abs() <= cutoff))
    }

    /// Kaldi's `ApproxEqual`: `||self - other||_F <= tol * ||self||_F`.
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "ApproxEqual")]
    pub fn approx_equal(&self, other: &MatrixBase<R>, tol: R) -> bool {
        self.check_same_shape("approx_equal", other.shape());
        let diff: f64 = self
            .rows()
            .zip(other.rows())
            .map(|(a, b)| {
                a.iter()
                    .zip(b)
                    .map(|(&x, &y)| (x - y).to_f64().powi(2))
                    .sum::<f64>()
            })
            .sum();
        diff.sqrt() <= tol.to_f64() * self.frobenius_norm().to_f64()
    }
}

impl<R: Real> VectorBase<R> {
    /// `self` becomes the concatenation of the rows of `m` (Kaldi's `CopyRowsFromMat`).
    ///
    /// # Panics
    /// If `dim() != rows * cols`.
    #[track_caller]
    #[doc(alias = "CopyRowsFromMat")]
    pub fn copy_rows_from_mat<S: Real>(&mut self, m: &MatrixBase<S>) {
        let cols = m.num_cols();
        self.check_same_dim("copy_rows_from_mat (rows * cols)", m.num_rows() * cols);
        for (r, row) in m.rows().enumerate() {
            for (o, &x) in self.data_mut()[r * cols..(r + 1) * cols]
                .iter_mut()
                .zip(row)
            {
                *o = R::from_f64(x.to_f64());
            }
        }
    }

    /// `self` becomes the concatenation of the columns of `m` (Kaldi's `CopyColsFromMat`).
    ///
    /// # Panics
    /// If `dim() != rows * cols`.
    #[track_caller]
    #[doc(alias = "CopyColsFromMat")]
    pub fn copy_cols_from_mat<S: Real>(&mut self, m: &MatrixBase<S>) {
        let rows = m.num_rows();
        self.check_same_dim("copy_cols_from_mat (rows * cols)", rows * m.num_cols());
        for (r, row) in m.rows().enumerate() {
            for (c, &x) in row.iter().enumerate() {
                self.data_mut()[c * rows + r] = R::from_f64(x.to_f64());
            }
        }
    }

    /// `self` becomes row `row` of `m` (Kaldi's `CopyRowFromMat`).
    ///
    /// # Panics
    /// If `dim() != cols` or `row` is out of range.
    #[track_caller]
    #[doc(alias = "CopyRowFromMat")]
    pub fn copy_row_from_mat<S: Real>(&mut self, m: &MatrixBase<S>, row: usize) {
        self.copy_from_vec(m.row(row));
    }

    /// `self` becomes column `col` of `m` (Kaldi's `CopyColFromMat`).
    ///
    /// # Panics
    /// If `dim() != rows` or `col` is out of range.
    #[track_caller]
    #[doc(alias = "CopyColFromMat")]
    pub fn copy_col_from_mat<S: Real>(&mut self, m: &MatrixBase<S>, col: usize) {
        self.check_same_dim("copy_col_from_mat (rows)", m.num_rows());
        if col >= m.num_cols() {
            out_of_bounds("column", col, m.num_cols(), "a matrix");
        }
        for (o, row) in self.data_mut().iter_mut().zip(m.rows()) {
            *o = R::from_f64(row[col].to_f64());
        }
    }

    /// `self` becomes the diagonal of `m` (Kaldi's `CopyDiagFromMat`).
    ///
    /// # Panics
    /// If `dim() != min(rows, cols)`.
    #[track_caller]
    #[doc(alias = "CopyDiagFromMat")]
    pub fn copy_diag_from_mat<S: Real>(&mut self, m: &MatrixBase<S>) {
        self.check_same_dim(
            "copy_diag_from_mat (min(rows, cols))",
            m.num_rows().min(m.num_cols()),
        );
        for (i, o) in self.data_mut().iter_mut().enumerate() {
            *o = R::from_f64(m.row_data(i)[i].to_f64());
        }
    }
}
