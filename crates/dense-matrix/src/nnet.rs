//! The nnet kernels of Kaldi's `MatrixBase` / `VectorBase` (issue 12, first part): the
//! copy-from-source element-wise forms (`exp`, `log`, `pow`, `heaviside`, `exp_special`,
//! ...), element-wise `max_elements` / `min_elements`, diagonal scalings
//! (`add_mat_diag_vec`, `add_diag_vec_mat`), gathers and scatters by index or by optional
//! row slices, and the group reductions of p-norm and maxout layers with their
//! derivatives. The traces of longer products and the vector methods of issue 12 are in
//! `matrix_funcs.rs`.
//!
//! Shapes follow Kaldi's `KALDI_ASSERT`s and a mismatch panics naming both shapes;
//! numerical failures that Kaldi would turn into NaN or an exception (`log` of a
//! negative, a negative to a fractional power) return an error and change nothing.

use crate::error::{dim_mismatch, out_of_bounds, precondition, shape_mismatch};
use crate::{Error, MatrixBase, Position, Real, Trans, VectorBase};

/// Shape of `op(m)`.
pub(crate) fn op_shape<R: Real>(m: &MatrixBase<R>, t: Trans) -> (usize, usize) {
    match t {
        Trans::NoTrans => m.shape(),
        Trans::Trans => (m.num_cols(), m.num_rows()),
    }
}

/// Element `(i, j)` of `op(m)`.
#[inline]
pub(crate) fn op_at<R: Real>(m: &MatrixBase<R>, t: Trans, i: usize, j: usize) -> R {
    match t {
        Trans::NoTrans => m.row_data(i)[j],
        Trans::Trans => m.row_data(j)[i],
    }
}

/// A gather/scatter index: `Some(i)` for `0 <= idx < limit`, `None` for a negative one.
#[track_caller]
fn index(idx: i32, limit: usize, what: &str, container: &str) -> Option<usize> {
    if idx < 0 {
        return None;
    }
    let i = idx as usize;
    if i >= limit {
        out_of_bounds(what, i, limit, container);
    }
    Some(i)
}

/// The group size of a group reduction: `wide_cols / narrow_cols`, which must divide.
#[track_caller]
fn group_size(op: &str, wide: (usize, usize), narrow: (usize, usize)) -> usize {
    if wide.0 != narrow.0 || narrow.1 == 0 || !wide.1.is_multiple_of(narrow.1) {
        shape_mismatch(
            &format!("{op} (columns must be a multiple of the group count)"),
            wide,
            narrow,
        );
    }
    wide.1 / narrow.1
}

/// The first negative element, for the checked `log` / `pow`.
fn first_negative<R: Real>(m: &MatrixBase<R>) -> Option<(usize, usize, R)> {
    m.rows().enumerate().find_map(|(r, row)| {
        row.iter()
            .position(|&v| v < R::ZERO)
            .map(|c| (r, c, row[c]))
    })
}

impl<R: Real> MatrixBase<R> {
    /// `ln sum e^(x_ij)` over all elements, computed relative to the maximum; with
    /// `prune = Some(p)` the terms below `max - p` are left out (Kaldi's `LogSumExp`).
    /// `-inf` for the empty matrix or one of `-inf`s.
    #[doc(alias = "LogSumExp")]
    pub fn log_sum_exp(&self, prune: Option<R>) -> R {
        if self.is_empty() {
            return R::NEG_INFINITY;
        }
        let max = self.max();
        if max == R::NEG_INFINITY {
            return max;
        }
        let cutoff = prune.filter(|&p| p > R::ZERO).map(|p| max - p);
        let sum = self.sum_rows_f64(|row| {
            row.iter()
                .filter(|&&v| cutoff.is_none_or(|c| v >= c))
                .map(|&v| (v - max).to_f64().exp())
                .sum()
        });
        max + R::from_f64(sum.ln())
    }

    /// `self(i, j) = max(self(i, j), a(i, j))` (Kaldi's element-wise `Max(A)`; a NaN in
    /// `self` stays, one in `a` is ignored, as `std::max` does).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn max_elements(&mut self, a: &MatrixBase<R>) {
        self.zip_rows_mut("max_elements", a, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                if *o < x {
                    *o = x;
                }
            }
        });
    }

    /// `self(i, j) = min(self(i, j), a(i, j))` (Kaldi's element-wise `Min(A)`).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn min_elements(&mut self, a: &MatrixBase<R>) {
        self.zip_rows_mut("min_elements", a, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                if *o > x {
                    *o = x;
                }
            }
        });
    }

    /// `self = e^src` element-wise (Kaldi's `Exp(src)`).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn exp(&mut self, src: &MatrixBase<R>) {
        self.zip_rows_mut("exp", src, |o, x| {
            o.copy_from_slice(x);
            R::exp_slice(o);
        });
    }

    /// `self = ln(src)` element-wise (Kaldi's `Log(src)`); an error naming the first
    /// negative element, and no change, if there is one.
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn log(&mut self, src: &MatrixBase<R>) -> Result<(), Error> {
        self.check_same_shape("log", src.shape());
        if let Some((r, c, v)) = first_negative(src) {
            return Err(Error::LogOfNegative {
                position: Position::Matrix(r, c),
                value: v.to_f64(),
            });
        }
        self.zip_rows_mut("log", src, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = x.ln();
            }
        });
        Ok(())
    }

    /// `self = src^power` element-wise (Kaldi's `Pow(src, power)`); a negative element
    /// with a non-integer power is an error, and nothing changes.
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn pow(&mut self, src: &MatrixBase<R>, power: R) -> Result<(), Error> {
        self.check_same_shape("pow", src.shape());
        if power.floor() != power {
            if let Some((r, c, v)) = first_negative(src) {
                return Err(Error::PowerOfNegative {
                    position: Position::Matrix(r, c),
                    value: v.to_f64(),
                    power: power.to_f64(),
                });
            }
        }
        self.zip_rows_mut("pow", src, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = x.powf(power);
            }
        });
        Ok(())
    }

    /// `self = |src|^power`, times the sign of `src` when `include_sign` (Kaldi's
    /// `PowAbs(src, power, include_sign)`).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "PowAbs")]
    pub fn pow_abs(&mut self, src: &MatrixBase<R>, power: R, include_sign: bool) {
        self.zip_rows_mut("pow_abs", src, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                let p = x.abs().powf(power);
                *o = if include_sign && x < R::ZERO { -p } else { p };
            }
        });
    }

    /// `self = max(src, floor_val)` element-wise (Kaldi's `Floor(src, floor_val)`).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn floor(&mut self, src: &MatrixBase<R>, floor_val: R) {
        self.zip_rows_mut("floor", src, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = if x < floor_val { floor_val } else { x };
            }
        });
    }

    /// `self = min(src, ceiling_val)` element-wise (Kaldi's `Ceiling(src, ceiling_val)`).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn ceiling(&mut self, src: &MatrixBase<R>, ceiling_val: R) {
        self.zip_rows_mut("ceiling", src, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = if x > ceiling_val { ceiling_val } else { x };
            }
        });
    }

    /// `self = 1` where `src > 0`, else `0` (Kaldi's `Heaviside(src)`).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    pub fn heaviside(&mut self, src: &MatrixBase<R>) {
        self.zip_rows_mut("heaviside", src, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = step(x);
            }
        });
    }

    /// `x = 1` where `x > 0`, else `0`, in place (Kaldi's `ApplyHeaviside`).
    #[doc(alias = "ApplyHeaviside")]
    pub fn apply_heaviside(&mut self) {
        self.for_each_row_mut(|_, row| {
            for v in row.iter_mut() {
                *v = step(*v);
            }
        });
    }

    /// `self = e^x` for `x < 0`, `x + 1` otherwise, with `x = src` (Kaldi's
    /// `ExpSpecial(src)`: a smooth, positive, never-overflowing exponential).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "ExpSpecial")]
    pub fn exp_special(&mut self, src: &MatrixBase<R>) {
        self.zip_rows_mut("exp_special", src, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = exp_special(x);
            }
        });
    }

    /// [`MatrixBase::exp_special`] in place (Kaldi's `ApplyExpSpecial`).
    #[doc(alias = "ApplyExpSpecial")]
    pub fn apply_exp_special(&mut self) {
        self.for_each_row_mut(|_, row| {
            for v in row.iter_mut() {
                *v = exp_special(*v);
            }
        });
    }

    /// `self = e^clamp(src, lower, upper)` element-wise (Kaldi's `ExpLimited`).
    ///
    /// # Panics
    /// If the shapes differ or `lower > upper`.
    #[track_caller]
    #[doc(alias = "ExpLimited")]
    pub fn exp_limited(&mut self, src: &MatrixBase<R>, lower_limit: R, upper_limit: R) {
        check_limits("exp_limited", lower_limit, upper_limit);
        self.zip_rows_mut("exp_limited", src, |o, x| {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = limited_exp(x, lower_limit, upper_limit);
            }
        });
    }

    /// [`MatrixBase::exp_limited`] in place (Kaldi's `ApplyExpLimited`).
    ///
    /// # Panics
    /// If `lower > upper`.
    #[track_caller]
    #[doc(alias = "ApplyExpLimited")]
    pub fn apply_exp_limited(&mut self, lower_limit: R, upper_limit: R) {
        check_limits("apply_exp_limited", lower_limit, upper_limit);
        self.for_each_row_mut(|_, row| {
            for v in row.iter_mut() {
                *v = limited_exp(*v, lower_limit, upper_limit);
            }
        });
    }

    /// `self = beta * self + alpha * op(M) diag(v)`: column `j` of `op(M)` scaled by
    /// `v(j)` (Kaldi's `AddMatDiagVec`).
    ///
    /// # Panics
    /// If `op(M)` is not the shape of `self` or `v.dim() != cols`.
    #[track_caller]
    #[doc(alias = "AddMatDiagVec")]
    pub fn add_mat_diag_vec(
        &mut self,
        alpha: R,
        m: &MatrixBase<R>,
        trans: Trans,
        v: &VectorBase<R>,
        beta: R,
    ) {
        self.check_same_shape("add_mat_diag_vec (op(M))", op_shape(m, trans));
        v.check_same_dim("add_mat_diag_vec (cols)", self.num_cols());
        let v = v.data();
        match trans {
            Trans::NoTrans => self.for_each_row_mut(|r, row| {
                let src = m.row_data(r);
                if beta == R::ZERO {
                    for ((o, &x), &s) in row.iter_mut().zip(src).zip(v) {
                        *o = alpha * x * s;
                    }
                } else {
                    for ((o, &x), &s) in row.iter_mut().zip(src).zip(v) {
                        *o = beta * *o + alpha * x * s;
                    }
                }
            }),
            Trans::Trans => self.for_each_row_mut(|r, row| {
                for (c, (o, &s)) in row.iter_mut().zip(v).enumerate() {
                    let x = m.row_data(c)[r];
                    *o = if beta == R::ZERO {
                        alpha * x * s
                    } else {
                        beta * *o + alpha * x * s
                    };
                }
            }),
        }
    }

    /// `self = beta * self + alpha * diag(v) op(M)`: row `i` of `op(M)` scaled by `v(i)`
    /// (Kaldi's `AddDiagVecMat`).
    ///
    /// # Panics
    /// If `op(M)` is not the shape of `self` or `v.dim() != rows`.
    #[track_caller]
    #[doc(alias = "AddDiagVecMat")]
    pub fn add_diag_vec_mat(
        &mut self,
        alpha: R,
        v: &VectorBase<R>,
        m: &MatrixBase<R>,
        trans: Trans,
        beta: R,
    ) {
        self.check_same_shape("add_diag_vec_mat (op(M))", op_shape(m, trans));
        v.check_same_dim("add_diag_vec_mat (rows)", self.num_rows());
        self.for_each_row_mut(|r, row| {
            let scale = alpha * v[r];
            for (c, o) in row.iter_mut().enumerate() {
                let x = op_at(m, trans, r, c);
                *o = if beta == R::ZERO {
                    scale * x
                } else {
                    beta * *o + scale * x
                };
            }
        });
    }

    /// `self(r, c) += src(r, indices[c])`; a negative index adds nothing (Kaldi's
    /// `AddCols`).
    ///
    /// # Panics
    /// If `indices.len() != cols`, the row counts differ, or an index is too large.
    #[track_caller]
    #[doc(alias = "AddCols")]
    pub fn add_cols(&mut self, src: &MatrixBase<R>, indices: &[i32]) {
        if indices.len() != self.num_cols() || src.num_rows() != self.num_rows() {
            shape_mismatch(
                "add_cols (source rows x indices)",
                self.shape(),
                (src.num_rows(), indices.len()),
            );
        }
        let gathered: Vec<Option<usize>> = indices
            .iter()
            .map(|&i| index(i, src.num_cols(), "column", "the source matrix"))
            .collect();
        self.for_each_row_mut(|r, row| {
            let s = src.row_data(r);
            for (o, idx) in row.iter_mut().zip(&gathered) {
                if let Some(i) = idx {
                    *o += s[*i];
                }
            }
        });
    }

    /// `dst.row(indexes[r]) += alpha * self.row(r)` for every row `r` with a
    /// non-negative index (Kaldi's `AddToRows(alpha, indexes, dst)`); repeated indexes
    /// accumulate.
    ///
    /// # Panics
    /// If `indexes.len() != rows`, the column counts differ, or an index is too large.
    #[track_caller]
    #[doc(alias = "AddToRows")]
    pub fn add_to_rows(&self, alpha: R, indexes: &[i32], dst: &mut MatrixBase<R>) {
        if indexes.len() != self.num_rows() || dst.num_cols() != self.num_cols() {
            shape_mismatch(
                "add_to_rows (indexes x destination cols)",
                self.shape(),
                (indexes.len(), dst.num_cols()),
            );
        }
        for (r, &idx) in indexes.iter().enumerate() {
            if let Some(i) = index(idx, dst.num_rows(), "row", "the destination matrix") {
                for (o, &x) in dst.row_data_mut(i).iter_mut().zip(self.row_data(r)) {
                    *o += alpha * x;
                }
            }
        }
    }

    /// Row `r` is copied into `dst[r]` where that is `Some` (Kaldi's `CopyToRows` with
    /// row pointers, `NULL` as `None`).
    ///
    /// # Panics
    /// If `dst.len() != rows` or a destination's length is not `cols`.
    #[track_caller]
    #[doc(alias = "CopyToRows")]
    pub fn copy_to_rows(&self, dst: &mut [Option<&mut [R]>]) {
        if dst.len() != self.num_rows() {
            dim_mismatch(
                "copy_to_rows",
                "destinations",
                dst.len(),
                "rows",
                self.num_rows(),
            );
        }
        for (r, d) in dst.iter_mut().enumerate() {
            if let Some(d) = d {
                check_row_len("copy_to_rows", r, d.len(), self.num_cols());
                d.copy_from_slice(self.row_data(r));
            }
        }
    }

    /// `dst[r] += alpha * row r` where `dst[r]` is `Some` (Kaldi's `AddToRows` with row
    /// pointers).
    ///
    /// # Panics
    /// If `dst.len() != rows` or a destination's length is not `cols`.
    #[track_caller]
    pub fn add_to_row_slices(&self, alpha: R, dst: &mut [Option<&mut [R]>]) {
        if dst.len() != self.num_rows() {
            dim_mismatch(
                "add_to_row_slices",
                "destinations",
                dst.len(),
                "rows",
                self.num_rows(),
            );
        }
        for (r, d) in dst.iter_mut().enumerate() {
            if let Some(d) = d {
                check_row_len("add_to_row_slices", r, d.len(), self.num_cols());
                for (o, &x) in d.iter_mut().zip(self.row_data(r)) {
                    *o += alpha * x;
                }
            }
        }
    }

    /// Row `r` becomes `src[r]`, or zeros where it is `None` (Kaldi's `CopyRows` with row
    /// pointers).
    ///
    /// # Panics
    /// If `src.len() != rows` or a source's length is not `cols`.
    #[track_caller]
    pub fn copy_rows_from_slices(&mut self, src: &[Option<&[R]>]) {
        if src.len() != self.num_rows() {
            dim_mismatch(
                "copy_rows_from_slices",
                "sources",
                src.len(),
                "rows",
                self.num_rows(),
            );
        }
        for (r, s) in src.iter().enumerate() {
            match s {
                Some(s) => {
                    check_row_len("copy_rows_from_slices", r, s.len(), self.num_cols());
                    self.row_data_mut(r).copy_from_slice(s);
                }
                None => self.row_data_mut(r).fill(R::ZERO),
            }
        }
    }

    /// Row `r` += `alpha * src[r]` where it is `Some` (Kaldi's `AddRows` with row
    /// pointers).
    ///
    /// # Panics
    /// If `src.len() != rows` or a source's length is not `cols`.
    #[track_caller]
    pub fn add_rows_from_slices(&mut self, alpha: R, src: &[Option<&[R]>]) {
        if src.len() != self.num_rows() {
            dim_mismatch(
                "add_rows_from_slices",
                "sources",
                src.len(),
                "rows",
                self.num_rows(),
            );
        }
        for (r, s) in src.iter().enumerate() {
            if let Some(s) = s {
                check_row_len("add_rows_from_slices", r, s.len(), self.num_cols());
                for (o, &x) in self.row_data_mut(r).iter_mut().zip(s.iter()) {
                    *o += alpha * x;
                }
            }
        }
    }

    /// Row `row` becomes `v` (Kaldi's `CopyRowFromVec`).
    ///
    /// # Panics
    /// If `v.dim() != cols` or `row` is out of range.
    #[track_caller]
    #[doc(alias = "CopyRowFromVec")]
    pub fn copy_row_from_vec(&mut self, v: &VectorBase<R>, row: usize) {
        v.check_same_dim("copy_row_from_vec (cols)", self.num_cols());
        self.row_data_mut(row).copy_from_slice(v.data());
    }

    /// Column `col` becomes `v` (Kaldi's `CopyColFromVec`).
    ///
    /// # Panics
    /// If `v.dim() != rows` or `col` is out of range.
    #[track_caller]
    #[doc(alias = "CopyColFromVec")]
    pub fn copy_col_from_vec(&mut self, v: &VectorBase<R>, col: usize) {
        v.check_same_dim("copy_col_from_vec (rows)", self.num_rows());
        if col >= self.num_cols() {
            out_of_bounds("column", col, self.num_cols(), "a matrix");
        }
        for r in 0..self.num_rows() {
            self.row_data_mut(r)[col] = v[r];
        }
    }

    /// `self(i, j)` = the `power`-norm of group `j` of row `i` of `src`, the groups being
    /// `src.cols / cols` consecutive columns (Kaldi's `GroupPnorm`; `power` 0 counts
    /// non-zeros, `inf` takes the largest magnitude).
    ///
    /// # Panics
    /// If the rows differ, `cols` does not divide `src.cols`, or `power < 0`.
    #[track_caller]
    #[doc(alias = "GroupPnorm")]
    pub fn group_pnorm(&mut self, src: &MatrixBase<R>, power: R) {
        let g = group_size("group_pnorm", src.shape(), self.shape());
        if power < R::ZERO || power.is_nan() {
            precondition(&format!("group_pnorm: power must be >= 0, got {power}"));
        }
        let p = power.to_f64();
        self.for_each_row_mut(|r, row| {
            let s = src.row_data(r);
            for (o, group) in row.iter_mut().zip(s.chunks_exact(g)) {
                *o = group_norm(group, p);
            }
        });
    }

    /// The derivative of [`MatrixBase::group_pnorm`]: `self(i, j) = d output(i, j / g) /
    /// d input(i, j)` = `sign(x) |x|^(p-1) y^(1-p)` with `x = input(i, j)` and `y` its
    /// group's norm (Kaldi's `GroupPnormDeriv`: `sign(x)` for `p = 1`; for `p = inf`, 1 with
    /// the sign of `x` where `|x| = y`; 0 where `y = 0`).
    ///
    /// # Panics
    /// If `input` is not the shape of `self`, or `output`'s columns do not divide it.
    #[track_caller]
    #[doc(alias = "GroupPnormDeriv")]
    pub fn group_pnorm_deriv(&mut self, input: &MatrixBase<R>, output: &MatrixBase<R>, power: R) {
        self.check_same_shape("group_pnorm_deriv (input)", input.shape());
        let g = group_size("group_pnorm_deriv", self.shape(), output.shape());
        let sign = |x: R| if x >= R::ZERO { R::ONE } else { -R::ONE };
        self.for_each_row_mut(|r, row| {
            let (x_row, y_row) = (input.row_data(r), output.row_data(r));
            for (j, (o, &x)) in row.iter_mut().zip(x_row).enumerate() {
                let y = y_row[j / g];
                *o = if power == R::ONE {
                    if x == R::ZERO {
                        R::ZERO
                    } else {
                        sign(x)
                    }
                } else if y == R::ZERO {
                    R::ZERO
                } else if power == R::INFINITY {
                    if x.abs() == y {
                        sign(x)
                    } else {
                        R::ZERO
                    }
                } else {
                    x.abs().powf(power - R::ONE) * y.powf(R::ONE - power) * sign(x)
                };
            }
        });
    }

    /// `self(i, j)` = the maximum of group `j` of row `i` of `src` (Kaldi's `GroupMax`,
    /// the maxout nonlinearity).
    ///
    /// # Panics
    /// If the rows differ or `cols` does not divide `src.cols`.
    #[track_caller]
    #[doc(alias = "GroupMax")]
    pub fn group_max(&mut self, src: &MatrixBase<R>) {
        let g = group_size("group_max", src.shape(), self.shape());
        self.for_each_row_mut(|r, row| {
            let s = src.row_data(r);
            for (o, group) in row.iter_mut().zip(s.chunks_exact(g)) {
                let mut m = group[0];
                for &x in &group[1..] {
                    if x > m {
                        m = x;
                    }
                }
                *o = m;
            }
        });
    }

    /// `self(i, j) = 1` where `input(i, j)` equals its group's maximum in `output`, else 0
    /// (Kaldi's `GroupMaxDeriv`; ties all get 1).
    ///
    /// # Panics
    /// If `input` is not the shape of `self`, or `output`'s columns do not divide it.
    #[track_caller]
    #[doc(alias = "GroupMaxDeriv")]
    pub fn group_max_deriv(&mut self, input: &MatrixBase<R>, output: &MatrixBase<R>) {
        self.check_same_shape("group_max_deriv (input)", input.shape());
        let g = group_size("group_max_deriv", self.shape(), output.shape());
        self.for_each_row_mut(|r, row| {
            let (x_row, y_row) = (input.row_data(r), output.row_data(r));
            for (j, (o, &x)) in row.iter_mut().zip(x_row).enumerate() {
                *o = if x == y_row[j / g] { R::ONE } else { R::ZERO };
            }
        });
    }

    /// Group `j` of row `i` is multiplied by `src(i, j)` (Kaldi's `MulRowsGroupMat`).
    ///
    /// # Panics
    /// If the rows differ or `src.cols` does not divide `cols`.
    #[track_caller]
    #[doc(alias = "MulRowsGroupMat")]
    pub fn mul_rows_group_mat(&mut self, src: &MatrixBase<R>) {
        let g = group_size("mul_rows_group_mat", self.shape(), src.shape());
        self.for_each_row_mut(|r, row| {
            let s = src.row_data(r);
            for (group, &scale) in row.chunks_exact_mut(g).zip(s) {
                group.iter_mut().for_each(|v| *v *= scale);
            }
        });
    }

    /// `self = a * b / c` element-wise, and `a` where `c = 0` (Kaldi's `SetMatMatDivMat`).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "SetMatMatDivMat")]
    pub fn set_mat_mat_div_mat(&mut self, a: &MatrixBase<R>, b: &MatrixBase<R>, c: &MatrixBase<R>) {
        self.check_same_shape("set_mat_mat_div_mat (a)", a.shape());
        self.check_same_shape("set_mat_mat_div_mat (b)", b.shape());
        self.check_same_shape("set_mat_mat_div_mat (c)", c.shape());
        self.for_each_row_mut(|r, row| {
            let (a, b, c) = (a.row_data(r), b.row_data(r), c.row_data(r));
            for (j, o) in row.iter_mut().enumerate() {
                *o = if c[j] == R::ZERO {
                    a[j]
                } else {
                    a[j] * b[j] / c[j]
                };
            }
        });
    }
}

#[track_caller]
fn check_limits<R: Real>(op: &str, lower: R, upper: R) {
    // NaN limits fail too, as they compare false.
    if lower
        .partial_cmp(&upper)
        .is_none_or(|o| o == std::cmp::Ordering::Greater)
    {
        precondition(&format!(
            "{op}: lower limit {lower} is above the upper limit {upper}"
        ));
    }
}

/// Kaldi's Heaviside step: 1 for `x > 0`, else 0 (NaN gives 0).
#[inline]
fn step<R: Real>(x: R) -> R {
    if x > R::ZERO {
        R::ONE
    } else {
        R::ZERO
    }
}

/// Kaldi's `ExpSpecial` of one element: `e^x` for `x < 0`, `x + 1` otherwise.
#[inline]
fn exp_special<R: Real>(x: R) -> R {
    if x < R::ZERO {
        x.exp()
    } else {
        x + R::ONE
    }
}

/// Kaldi's `ExpLimited` of one element: `e^x` with `x` clamped to `[lower, upper]`.
#[inline]
fn limited_exp<R: Real>(x: R, lower: R, upper: R) -> R {
    let clamped = if x < lower {
        lower
    } else if x > upper {
        upper
    } else {
        x
    };
    clamped.exp()
}

#[track_caller]
fn check_row_len(op: &str, r: usize, len: usize, cols: usize) {
    if len != cols {
        precondition(&format!(
            "{op}: row slice {r} has {len} elements, the matrix has {cols} columns"
        ));
    }
}

/// The `p`-norm of one group, as Kaldi's `VectorBase::Norm`.
fn group_norm<R: Real>(x: &[R], p: f64) -> R {
    if p == 0.0 {
        return R::from_f64(x.iter().filter(|&&v| v != R::ZERO).count() as f64);
    }
    if p.is_infinite() {
        return x.iter().fold(R::ZERO, |m, &v| m.max(v.abs()));
    }
    if p == 1.0 {
        return R::from_f64(x.iter().map(|v| v.to_f64().abs()).sum());
    }
    if p == 2.0 {
        return R::from_f64(x.iter().map(|v| v.to_f64().powi(2)).sum::<f64>().sqrt());
    }
    let sum: f64 = x.iter().map(|v| v.to_f64().abs().powf(p)).sum();
    R::from_f64(sum.powf(1.0 / p))
}
