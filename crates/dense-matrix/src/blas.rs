//! BLAS-backed operations (Kaldi's `AddMatVec`, `AddMatMat`, `AddVecVec`, `SymAddMat2`,
//! ...) and the small products `vec_vec`, `trace_mat_mat`, `vec_mat_vec`.
//!
//! All calls use CBLAS's row-major entry points with the matrix stride as the leading
//! dimension, so padding is never read. As in BLAS, `beta == 0` overwrites the output
//! (a NaN already in it does not survive).
//!
//! An output can never alias an input: the output is borrowed `&mut` and the inputs `&`,
//! so the compiler rejects Kaldi's forbidden `m.AddMatMat(1.0, m, ...)`:
//!
//! ```compile_fail
//! use dense_matrix::{Matrix, Trans};
//! let mut m = Matrix::<f64>::eye(3);
//! m.add_mat_mat(1.0, &m, Trans::NoTrans, &m, Trans::NoTrans, 0.0);
//! ```

use std::os::raw::c_int;

use crate::error::{precondition, shape_mismatch};
use crate::{Matrix, MatrixBase, Real, Trans, VectorBase};

/// A dimension as a BLAS `int`.
#[track_caller]
pub(crate) fn int(n: usize) -> c_int {
    match c_int::try_from(n) {
        Ok(v) => v,
        Err(_) => precondition(&format!("dimension {n} exceeds the BLAS/LAPACK int range")),
    }
}

/// Shape of `op(m)`.
fn op_shape<R: Real>(m: &MatrixBase<R>, t: Trans) -> (usize, usize) {
    match t {
        Trans::NoTrans => m.shape(),
        Trans::Trans => (m.num_cols(), m.num_rows()),
    }
}

/// The dot product `a . b` (Kaldi's `VecVec`).
///
/// # Panics
/// If the dimensions differ.
#[track_caller]
#[doc(alias("VecVec", "dot"))]
pub fn vec_vec<R: Real>(a: &VectorBase<R>, b: &VectorBase<R>) -> R {
    a.check_same_dim("vec_vec", b.dim());
    if a.dim() == 0 {
        return R::ZERO;
    }
    // SAFETY: both slices hold `dim` elements.
    unsafe { R::cblas_dot(int(a.dim()), a.data().as_ptr(), 1, b.data().as_ptr(), 1) }
}

/// `v1^T M v2` (Kaldi's `VecMatVec`).
///
/// # Panics
/// If `v1.dim() != rows` or `v2.dim() != cols`.
#[track_caller]
#[doc(alias = "VecMatVec")]
pub fn vec_mat_vec<R: Real>(v1: &VectorBase<R>, m: &MatrixBase<R>, v2: &VectorBase<R>) -> R {
    if v1.dim() != m.num_rows() || v2.dim() != m.num_cols() {
        shape_mismatch(
            "vec_mat_vec (v1 dim x v2 dim)",
            m.shape(),
            (v1.dim(), v2.dim()),
        );
    }
    let mut mv = crate::Vector::new(m.num_rows());
    mv.add_mat_vec(R::ONE, m, Trans::NoTrans, v2, R::ZERO);
    vec_vec(v1, &mv)
}

/// `tr(A B)` (`trans == NoTrans`, `B` is the transposed shape of `A`) or `tr(A B^T)`
/// (`trans == Trans`, same shapes) (Kaldi's `TraceMatMat`).
///
/// # Panics
/// If the shapes do not fit.
#[track_caller]
#[doc(alias = "TraceMatMat")]
pub fn trace_mat_mat<R: Real>(a: &MatrixBase<R>, b: &MatrixBase<R>, trans: Trans) -> R {
    let want = match trans {
        Trans::NoTrans => (a.num_cols(), a.num_rows()),
        Trans::Trans => a.shape(),
    };
    if b.shape() != want {
        shape_mismatch("trace_mat_mat", a.shape(), b.shape());
    }
    let mut sum = 0.0f64;
    for (r, row) in a.rows().enumerate() {
        match trans {
            Trans::Trans => {
                sum += row
                    .iter()
                    .zip(b.row_data(r))
                    .map(|(&x, &y)| (x * y).to_f64())
                    .sum::<f64>()
            }
            Trans::NoTrans => {
                sum += row
                    .iter()
                    .enumerate()
                    .map(|(c, &x)| (x * b.row_data(c)[r]).to_f64())
                    .sum::<f64>()
            }
        }
    }
    R::from_f64(sum)
}

impl<R: Real> VectorBase<R> {
    /// `self += alpha * v` (BLAS axpy; Kaldi's `AddVec`).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "AddVec")]
    pub fn add_vec(&mut self, alpha: R, v: &VectorBase<R>) {
        self.check_same_dim("add_vec", v.dim());
        if self.dim() == 0 {
            return;
        }
        let n = int(self.dim());
        // SAFETY: both slices hold `n` elements; they cannot overlap (`&mut` vs `&`).
        unsafe {
            R::cblas_axpy(
                n,
                alpha,
                v.data().as_ptr(),
                1,
                self.data_mut().as_mut_ptr(),
                1,
            )
        }
    }

    /// `self += alpha * v .* v` (Kaldi's `AddVec2`).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "AddVec2")]
    pub fn add_vec2(&mut self, alpha: R, v: &VectorBase<R>) {
        self.check_same_dim("add_vec2", v.dim());
        crate::kernels::zip_inplace(self.data_mut(), v.data(), |o, x| {
            o.iter_mut().zip(x).for_each(|(o, &x)| *o += alpha * x * x)
        });
    }

    /// `self = alpha * op(M) v + beta * self` (BLAS gemv; Kaldi's `AddMatVec`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias("AddMatVec", "gemv", "matvec"))]
    pub fn add_mat_vec(
        &mut self,
        alpha: R,
        m: &MatrixBase<R>,
        trans: Trans,
        v: &VectorBase<R>,
        beta: R,
    ) {
        let (rows, cols) = op_shape(m, trans);
        if rows != self.dim() || cols != v.dim() {
            shape_mismatch(
                "add_mat_vec (op(M) vs out dim x in dim)",
                (rows, cols),
                (self.dim(), v.dim()),
            );
        }
        if beta == R::ZERO {
            self.set_zero();
        }
        if m.is_empty() {
            return;
        }
        // SAFETY: `m` is `num_rows x num_cols` with row stride `stride >= num_cols`; the
        // vectors have the lengths checked above.
        unsafe {
            R::cblas_gemv(
                trans,
                int(m.num_rows()),
                int(m.num_cols()),
                alpha,
                m.as_ptr(),
                int(m.stride()),
                v.data().as_ptr(),
                1,
                beta,
                self.data_mut().as_mut_ptr(),
                1,
            )
        }
    }

    /// `self = alpha * v .* r + beta * self` (Kaldi's `VectorBase::AddVecVec`).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "AddVecVec")]
    pub fn add_vec_vec(&mut self, alpha: R, v: &VectorBase<R>, r: &VectorBase<R>, beta: R) {
        self.check_same_dim("add_vec_vec (v)", v.dim());
        self.check_same_dim("add_vec_vec (r)", r.dim());
        for ((o, &a), &b) in self.data_mut().iter_mut().zip(v.data()).zip(r.data()) {
            *o = if beta == R::ZERO {
                alpha * a * b
            } else {
                alpha * a * b + beta * *o
            };
        }
    }

    /// `self = beta * self + alpha * diag(M M^T)` (`NoTrans`) or `diag(M^T M)` (`Trans`)
    /// (Kaldi's `AddDiagMat2`).
    ///
    /// # Panics
    /// If the dimension does not fit.
    #[track_caller]
    #[doc(alias = "AddDiagMat2")]
    pub fn add_diag_mat2(&mut self, alpha: R, m: &MatrixBase<R>, trans: Trans, beta: R) {
        let mut sums = vec![0.0f64; op_shape(m, trans).0];
        self.check_same_dim("add_diag_mat2", sums.len());
        for (r, row) in m.rows().enumerate() {
            match trans {
                Trans::NoTrans => sums[r] = row.iter().map(|&x| (x * x).to_f64()).sum(),
                Trans::Trans => sums
                    .iter_mut()
                    .zip(row)
                    .for_each(|(s, &x)| *s += (x * x).to_f64()),
            }
        }
        self.combine(alpha, &sums, beta);
    }

    /// `self = beta * self + alpha * (sum of the rows of M)` (Kaldi's `AddRowSumMat`).
    ///
    /// # Panics
    /// If `dim() != cols`.
    #[track_caller]
    #[doc(alias = "AddRowSumMat")]
    pub fn add_row_sum_mat(&mut self, alpha: R, m: &MatrixBase<R>, beta: R) {
        self.check_same_dim("add_row_sum_mat (cols)", m.num_cols());
        let mut sums = vec![0.0f64; m.num_cols()];
        for row in m.rows() {
            sums.iter_mut()
                .zip(row)
                .for_each(|(s, &x)| *s += x.to_f64());
        }
        self.combine(alpha, &sums, beta);
    }

    /// `self = beta * self + alpha * (sum of the columns of M)` (Kaldi's `AddColSumMat`).
    ///
    /// # Panics
    /// If `dim() != rows`.
    #[track_caller]
    #[doc(alias = "AddColSumMat")]
    pub fn add_col_sum_mat(&mut self, alpha: R, m: &MatrixBase<R>, beta: R) {
        self.check_same_dim("add_col_sum_mat (rows)", m.num_rows());
        let sums: Vec<f64> = m.rows().map(crate::kernels::sum_f64).collect();
        self.combine(alpha, &sums, beta);
    }

    fn combine(&mut self, alpha: R, sums: &[f64], beta: R) {
        for (o, &s) in self.data_mut().iter_mut().zip(sums) {
            let add = alpha * R::from_f64(s);
            *o = if beta == R::ZERO {
                add
            } else {
                beta * *o + add
            };
        }
    }
}

impl<R: Real> MatrixBase<R> {
    /// `self += alpha * op(A)` (Kaldi's `AddMat`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias = "AddMat")]
    pub fn add_mat(&mut self, alpha: R, a: &MatrixBase<R>, trans: Trans) {
        match trans {
            Trans::NoTrans => self.zip_rows_mut("add_mat", a, |o, x| {
                o.iter_mut().zip(x).for_each(|(o, &x)| *o += alpha * x)
            }),
            Trans::Trans => {
                self.check_same_shape("add_mat (transposed)", op_shape(a, trans));
                self.for_each_row_mut(|r, row| {
                    for (c, o) in row.iter_mut().enumerate() {
                        *o += alpha * a.row_data(c)[r];
                    }
                });
            }
        }
    }

    /// `self += alpha * a b^T` (BLAS ger; Kaldi's `MatrixBase::AddVecVec`).
    ///
    /// # Panics
    /// If `a.dim() != rows` or `b.dim() != cols`.
    #[track_caller]
    #[doc(alias = "AddVecVec")]
    pub fn add_vec_vec(&mut self, alpha: R, a: &VectorBase<R>, b: &VectorBase<R>) {
        if (a.dim(), b.dim()) != self.shape() {
            shape_mismatch(
                "add_vec_vec (a dim x b dim)",
                self.shape(),
                (a.dim(), b.dim()),
            );
        }
        if self.is_empty() {
            return;
        }
        let (rows, cols, stride) = (
            int(self.num_rows()),
            int(self.num_cols()),
            int(self.stride()),
        );
        let out = self.as_mut_ptr();
        // SAFETY: `out` points at a `rows x cols` window with row stride `stride`.
        unsafe {
            R::cblas_ger(
                rows,
                cols,
                alpha,
                a.data().as_ptr(),
                1,
                b.data().as_ptr(),
                1,
                out,
                stride,
            )
        }
    }

    /// `self = alpha * op(A) op(B) + beta * self` (BLAS gemm; Kaldi's `AddMatMat`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    #[doc(alias("AddMatMat", "gemm", "matmul"))]
    pub fn add_mat_mat(
        &mut self,
        alpha: R,
        a: &MatrixBase<R>,
        trans_a: Trans,
        b: &MatrixBase<R>,
        trans_b: Trans,
        beta: R,
    ) {
        let (m, k) = op_shape(a, trans_a);
        let (k2, n) = op_shape(b, trans_b);
        if k != k2 {
            shape_mismatch("add_mat_mat (op(A) x op(B))", (m, k), (k2, n));
        }
        self.check_same_shape("add_mat_mat (output vs op(A) op(B))", (m, n));
        // beta = 0 overwrites (NaN included): gemm stores alpha op(A) op(B) without reading
        // C (the BLAS definition; OpenBLAS's beta pass writes zeros), except that with
        // k = 0 there is no product to store, so that case is cleared here
        if beta == R::ZERO && k == 0 {
            self.set_zero();
        }
        if self.is_empty() {
            return;
        }
        let (ldc, out) = (int(self.stride()), self.as_mut_ptr());
        // SAFETY: each pointer addresses a window of the shape and stride passed with it.
        unsafe {
            R::cblas_gemm(
                trans_a,
                trans_b,
                int(m),
                int(n),
                int(k),
                alpha,
                a.as_ptr(),
                int(a.stride()),
                b.as_ptr(),
                int(b.stride()),
                beta,
                out,
                ldc,
            )
        }
    }

    /// `self = alpha * op(A) op(B) op(C) + beta * self` (Kaldi's `AddMatMatMat`), with the
    /// cheaper association order.
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    #[doc(alias = "AddMatMatMat")]
    pub fn add_mat_mat_mat(
        &mut self,
        alpha: R,
        a: &MatrixBase<R>,
        trans_a: Trans,
        b: &MatrixBase<R>,
        trans_b: Trans,
        c: &MatrixBase<R>,
        trans_c: Trans,
        beta: R,
    ) {
        let (m, k) = op_shape(a, trans_a);
        let (k2, l) = op_shape(b, trans_b);
        let (l2, n) = op_shape(c, trans_c);
        if k != k2 {
            shape_mismatch("add_mat_mat_mat (op(A) x op(B))", (m, k), (k2, l));
        }
        if l != l2 {
            shape_mismatch("add_mat_mat_mat (op(B) x op(C))", (k2, l), (l2, n));
        }
        self.check_same_shape("add_mat_mat_mat (output)", (m, n));
        // Flop counts of the two association orders, in u128 so no shape can wrap them.
        let (m128, k128, l128, n128) = (m as u128, k as u128, l as u128, n as u128);
        if m128 * l128 * (k128 + n128) <= k128 * n128 * (m128 + l128) {
            let mut ab = Matrix::new(m, l);
            ab.add_mat_mat(R::ONE, a, trans_a, b, trans_b, R::ZERO);
            self.add_mat_mat(alpha, &ab, Trans::NoTrans, c, trans_c, beta);
        } else {
            let mut bc = Matrix::new(k, n);
            bc.add_mat_mat(R::ONE, b, trans_b, c, trans_c, R::ZERO);
            self.add_mat_mat(alpha, a, trans_a, &bc, Trans::NoTrans, beta);
        }
    }

    /// Lower triangle of `self = beta * self + alpha * A A^T` (`NoTrans`) or `A^T A`
    /// (`Trans`) (BLAS syrk; Kaldi's `SymAddMat2`). As in Kaldi only the lower triangle
    /// is written; call [`MatrixBase::copy_lower_to_upper`] for the full matrix.
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias("SymAddMat2", "syrk"))]
    pub fn sym_add_mat2(&mut self, alpha: R, a: &MatrixBase<R>, trans: Trans, beta: R) {
        let (n, k) = op_shape(a, trans);
        self.check_same_shape("sym_add_mat2 (output vs op(A) op(A)^T)", (n, n));
        if beta == R::ZERO {
            for r in 0..n {
                self.row_data_mut(r)[..=r].fill(R::ZERO);
            }
        }
        if n == 0 {
            return;
        }
        let (ldc, out) = (int(self.stride()), self.as_mut_ptr());
        // SAFETY: `a` and `out` address windows of the shapes and strides passed.
        unsafe {
            R::cblas_syrk_lower(
                trans,
                int(n),
                int(k),
                alpha,
                a.as_ptr(),
                int(a.stride()),
                beta,
                out,
                ldc,
            )
        }
    }

    /// `self = beta * self + alpha * A .* B` (Kaldi's `AddMatMatElements`).
    ///
    /// # Panics
    /// If the shapes differ.
    #[track_caller]
    #[doc(alias = "AddMatMatElements")]
    pub fn add_mat_mat_elements(
        &mut self,
        alpha: R,
        a: &MatrixBase<R>,
        b: &MatrixBase<R>,
        beta: R,
    ) {
        a.check_same_shape("add_mat_mat_elements (B)", b.shape());
        self.check_same_shape("add_mat_mat_elements", a.shape());
        self.for_each_row_mut(|r, o| {
            for ((o, &x), &y) in o.iter_mut().zip(a.row_data(r)).zip(b.row_data(r)) {
                *o = if beta == R::ZERO {
                    alpha * x * y
                } else {
                    beta * *o + alpha * x * y
                };
            }
        });
    }
}
