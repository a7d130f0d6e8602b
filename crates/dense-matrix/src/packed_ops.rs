//! Issue 12's packed algebra: products of dense and packed matrices (`add_sp_mat`,
//! `add_tp_mat`, `add_sp_mat_sp`, ...), the small `SpMatrix` methods (`set_unit`,
//! `scale_diag`, `add_vec2`, `add_mat2`, `vec_sp_vec`, `trace_sp_sp`, ...), the vector
//! copies out of packed matrices, and `min_singular_value` / `invert_double`.
//!
//! The products unpack the packed operands into full matrices and call gemm, as Kaldi's
//! own implementations do; packed storage saves memory, not flops. `add_sp_mat` unpacks
//! into a per-thread buffer kept between calls: only the lower triangle, row by row, for
//! symm when `B` is not transposed; mirrored in tiles for gemm when it is.

use crate::blas::int;
use crate::error::{out_of_bounds, shape_mismatch};
use crate::{Error, Matrix, MatrixBase, Real, SpMatrix, TpMatrix, Trans, VectorBase};

fn flip(t: Trans) -> Trans {
    match t {
        Trans::NoTrans => Trans::Trans,
        Trans::Trans => Trans::NoTrans,
    }
}

/// Offset of row `i` in the packed layout.
fn row_start(i: usize) -> usize {
    i * (i + 1) / 2
}

/// The lower triangle of `a` (`n x n`) into the rows of `full` (row-major, leading
/// dimension `n`, `n * n` elements), one contiguous copy per row; the strict upper
/// triangle keeps what it held.
fn unpack_lower<R: Real>(a: &SpMatrix<R>, full: &mut [R]) {
    let (n, data) = (a.num_rows(), a.data());
    for (i, row) in full.chunks_exact_mut(n).enumerate() {
        row[..=i].copy_from_slice(&data[row_start(i)..row_start(i) + i + 1]);
    }
}

/// Copies the strict lower triangle of `full` (`n x n`, row-major) onto the upper one,
/// in 64 x 64 tiles so the column-wise writes stay within a few pages.
fn mirror_lower<R: Real>(full: &mut [R], n: usize) {
    const TILE: usize = 64;
    for col_tile in (0..n).step_by(TILE) {
        for row_tile in (col_tile..n).step_by(TILE) {
            for i in row_tile..(row_tile + TILE).min(n) {
                for j in col_tile..(col_tile + TILE).min(i) {
                    full[j * n + i] = full[i * n + j];
                }
            }
        }
    }
}

impl<R: Real> MatrixBase<R> {
    /// The smallest singular value (Kaldi's `MinSingularValue`); 0 x 0 gives `+inf`.
    #[doc(alias = "MinSingularValue")]
    pub fn min_singular_value(&self) -> Result<R, Error> {
        let s = self.svd()?.s;
        Ok(if s.dim() == 0 { R::INFINITY } else { s.min() })
    }

    /// Inverts in place through `f64` arithmetic whatever `R` is, and returns
    /// `(ln|det|, sign of det)` (Kaldi's `InvertDouble`).
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    #[doc(alias = "InvertDouble")]
    pub fn invert_double(&mut self) -> Result<(R, R), Error> {
        let mut d = Matrix::<f64>::new(self.num_rows(), self.num_cols());
        d.copy_from_mat(self, Trans::NoTrans);
        let (log_det, sign) = d.invert()?;
        self.copy_from_mat(&d, Trans::NoTrans);
        Ok((R::from_f64(log_det), R::from_f64(sign)))
    }

    /// `self += alpha * S` with `S` symmetric, packed (Kaldi's `AddSp`).
    ///
    /// # Panics
    /// If `self` is not `n x n`.
    #[track_caller]
    #[doc(alias = "AddSp")]
    pub fn add_sp(&mut self, alpha: R, s: &SpMatrix<R>) {
        let n = s.num_rows();
        self.check_same_shape("add_sp", (n, n));
        for i in 0..n {
            for j in 0..=i {
                let v = alpha * s[(i, j)];
                self.row_data_mut(i)[j] += v;
                if j != i {
                    self.row_data_mut(j)[i] += v;
                }
            }
        }
    }

    /// `self = beta * self + alpha * A op(B)`, `A` symmetric packed (Kaldi's `AddSpMat`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias = "AddSpMat")]
    pub fn add_sp_mat(
        &mut self,
        alpha: R,
        a: &SpMatrix<R>,
        b: &MatrixBase<R>,
        trans_b: Trans,
        beta: R,
    ) {
        let n = a.num_rows();
        let (k, m) = match trans_b {
            Trans::NoTrans => b.shape(),
            Trans::Trans => (b.num_cols(), b.num_rows()),
        };
        if k != n {
            shape_mismatch("add_sp_mat (A x op(B))", (n, n), (k, m));
        }
        self.check_same_shape("add_sp_mat (output vs A op(B))", (n, m));
        // with beta = 0 the old contents (NaN included) do not survive, as in add_mat_mat:
        // symm and gemm then store alpha A op(B) without reading C (the BLAS definition;
        // OpenBLAS's beta pass writes zeros), so no clearing pass of our own is needed
        if n == 0 || m == 0 {
            return;
        }
        // n (n + 1) / 2 elements exist, so n^2 < 2 len fits; checked all the same
        let Some(len) = n.checked_mul(n) else {
            shape_mismatch("add_sp_mat (A unpacked: n * n overflows)", (n, n), (n, n));
        };
        let (ldc, out) = (int(self.stride()), self.as_mut_ptr());
        crate::scratch::with_buffer(len, |full: &mut [R]| {
            unpack_lower(a, full);
            match trans_b {
                // symm reads the lower triangle only: no mirroring needed
                // SAFETY: `full` holds n x n elements (leading dimension n), `b` is n x m
                // and `self` n x m (both checked above), each addressed with its stride.
                Trans::NoTrans => unsafe {
                    R::cblas_symm_left_lower(
                        int(n),
                        int(m),
                        alpha,
                        full.as_ptr(),
                        int(n),
                        b.as_ptr(),
                        int(b.stride()),
                        beta,
                        out,
                        ldc,
                    )
                },
                Trans::Trans => {
                    mirror_lower(full, n);
                    // SAFETY: as above, with `b` m x n (checked above) read transposed.
                    unsafe {
                        R::cblas_gemm(
                            Trans::NoTrans,
                            Trans::Trans,
                            int(n),
                            int(m),
                            int(n),
                            alpha,
                            full.as_ptr(),
                            int(n),
                            b.as_ptr(),
                            int(b.stride()),
                            beta,
                            out,
                            ldc,
                        )
                    }
                }
            }
        });
    }

    /// `self = beta * self + alpha * op(A) op(B)`, `A` lower-triangular packed (Kaldi's
    /// `AddTpMat`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias = "AddTpMat")]
    pub fn add_tp_mat(
        &mut self,
        alpha: R,
        a: &TpMatrix<R>,
        trans_a: Trans,
        b: &MatrixBase<R>,
        trans_b: Trans,
        beta: R,
    ) {
        let a = a.to_matrix();
        self.add_mat_mat(alpha, &a, trans_a, b, trans_b, beta);
    }

    /// `self = beta * self + alpha * op(A) B`, `B` symmetric packed (Kaldi's `AddMatSp`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias = "AddMatSp")]
    pub fn add_mat_sp(
        &mut self,
        alpha: R,
        a: &MatrixBase<R>,
        trans_a: Trans,
        b: &SpMatrix<R>,
        beta: R,
    ) {
        let b = b.to_matrix();
        self.add_mat_mat(alpha, a, trans_a, &b, Trans::NoTrans, beta);
    }

    /// `self = beta * self + alpha * op(A) op(B)`, `B` lower-triangular packed (Kaldi's
    /// `AddMatTp`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias = "AddMatTp")]
    pub fn add_mat_tp(
        &mut self,
        alpha: R,
        a: &MatrixBase<R>,
        trans_a: Trans,
        b: &TpMatrix<R>,
        trans_b: Trans,
        beta: R,
    ) {
        let b = b.to_matrix();
        self.add_mat_mat(alpha, a, trans_a, &b, trans_b, beta);
    }

    /// `self = beta * self + alpha * op(A) op(B)`, both lower-triangular packed (Kaldi's
    /// `AddTpTp`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias = "AddTpTp")]
    pub fn add_tp_tp(
        &mut self,
        alpha: R,
        a: &TpMatrix<R>,
        trans_a: Trans,
        b: &TpMatrix<R>,
        trans_b: Trans,
        beta: R,
    ) {
        let (a, b) = (a.to_matrix(), b.to_matrix());
        self.add_mat_mat(alpha, &a, trans_a, &b, trans_b, beta);
    }

    /// `self = beta * self + alpha * A B`, both symmetric packed (Kaldi's `AddSpSp`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias = "AddSpSp")]
    pub fn add_sp_sp(&mut self, alpha: R, a: &SpMatrix<R>, b: &SpMatrix<R>, beta: R) {
        let (a, b) = (a.to_matrix(), b.to_matrix());
        self.add_mat_mat(alpha, &a, Trans::NoTrans, &b, Trans::NoTrans, beta);
    }

    /// `self = beta * self + alpha * A op(B) C`, `A` and `C` symmetric packed (Kaldi's
    /// `AddSpMatSp`).
    ///
    /// # Panics
    /// If the shapes do not fit.
    #[track_caller]
    #[doc(alias = "AddSpMatSp")]
    pub fn add_sp_mat_sp(
        &mut self,
        alpha: R,
        a: &SpMatrix<R>,
        b: &MatrixBase<R>,
        trans_b: Trans,
        c: &SpMatrix<R>,
        beta: R,
    ) {
        let (a, c) = (a.to_matrix(), c.to_matrix());
        self.add_mat_mat_mat(
            alpha,
            &a,
            Trans::NoTrans,
            b,
            trans_b,
            &c,
            Trans::NoTrans,
            beta,
        );
    }
}

impl<R: Real> SpMatrix<R> {
    /// The identity (Kaldi's `SetUnit`).
    #[doc(alias = "SetUnit")]
    pub fn set_unit(&mut self) {
        self.data_mut().fill(R::ZERO);
        self.set_diag(R::ONE);
    }

    /// Every diagonal element becomes `alpha` (Kaldi's `SetDiag`).
    #[doc(alias = "SetDiag")]
    pub fn set_diag(&mut self, alpha: R) {
        for i in 0..self.num_rows() {
            self.data_mut()[row_start(i) + i] = alpha;
        }
    }

    /// The diagonal is multiplied by `alpha` (Kaldi's `ScaleDiag`).
    #[doc(alias = "ScaleDiag")]
    pub fn scale_diag(&mut self, alpha: R) {
        for i in 0..self.num_rows() {
            self.data_mut()[row_start(i) + i] *= alpha;
        }
    }

    /// `self(i, i) += alpha * v(i)` (Kaldi's `AddDiagVec`).
    ///
    /// # Panics
    /// If `v.dim() != n`.
    #[track_caller]
    #[doc(alias = "AddDiagVec")]
    pub fn add_diag_vec(&mut self, alpha: R, v: &VectorBase<R>) {
        v.check_same_dim("add_diag_vec", self.num_rows());
        for i in 0..self.num_rows() {
            self.data_mut()[row_start(i) + i] += alpha * v[i];
        }
    }

    /// `self += alpha * v v^T` (Kaldi's `AddVec2`).
    ///
    /// # Panics
    /// If `v.dim() != n`.
    #[track_caller]
    #[doc(alias = "AddVec2")]
    pub fn add_vec2(&mut self, alpha: R, v: &VectorBase<R>) {
        v.check_same_dim("add_vec2", self.num_rows());
        for i in 0..self.num_rows() {
            let a = alpha * v[i];
            let start = row_start(i);
            for (o, &x) in self.data_mut()[start..=start + i].iter_mut().zip(v.data()) {
                *o += a * x;
            }
        }
    }

    /// `self = beta * self + alpha * op(M) op(M)^T`: `M M^T` for `NoTrans`, `M^T M` for
    /// `Trans` (Kaldi's `AddMat2`).
    ///
    /// # Panics
    /// If `op(M)` does not have `n` rows.
    #[track_caller]
    #[doc(alias = "AddMat2")]
    pub fn add_mat2(&mut self, alpha: R, m: &MatrixBase<R>, trans: Trans, beta: R) {
        let n = self.num_rows();
        let rows = match trans {
            Trans::NoTrans => m.num_rows(),
            Trans::Trans => m.num_cols(),
        };
        if rows != n {
            shape_mismatch("add_mat2 (op(M) rows, n)", m.shape(), (n, n));
        }
        let mut full = self.to_matrix();
        if n > 0 {
            full.sym_add_mat2(alpha, m, trans, beta);
        }
        for i in 0..n {
            let start = row_start(i);
            self.data_mut()[start..=start + i].copy_from_slice(&full.row_data(i)[..=i]);
        }
    }

    /// `self = beta * self + alpha * P` over the lower triangle of a full square `P`.
    fn axpby_lower(&mut self, beta: R, alpha: R, p: &MatrixBase<R>) {
        for i in 0..self.num_rows() {
            let start = row_start(i);
            let src = &p.row_data(i)[..=i];
            for (o, &x) in self.data_mut()[start..=start + i].iter_mut().zip(src) {
                *o = if beta == R::ZERO {
                    alpha * x
                } else {
                    beta * *o + alpha * x
                };
            }
        }
    }

    /// `self = beta * self + alpha * op(M) A op(M)^T`: `M A M^T` for `NoTrans`, `M^T A M`
    /// for `Trans` (Kaldi's `AddMat2Sp`).
    ///
    /// # Panics
    /// If `op(M)` is not `n x A.n`.
    #[track_caller]
    #[doc(alias = "AddMat2Sp")]
    pub fn add_mat2_sp(
        &mut self,
        alpha: R,
        m: &MatrixBase<R>,
        trans: Trans,
        a: &SpMatrix<R>,
        beta: R,
    ) {
        let a = a.to_matrix();
        self.add_sandwich("add_mat2_sp", alpha, m, trans, &a, beta);
    }

    /// `self = beta * self + alpha * op(M) diag(v) op(M)^T` (Kaldi's `AddMat2Vec`).
    ///
    /// # Panics
    /// If `op(M)` is not `n x v.dim()`.
    #[track_caller]
    #[doc(alias = "AddMat2Vec")]
    pub fn add_mat2_vec(
        &mut self,
        alpha: R,
        m: &MatrixBase<R>,
        trans: Trans,
        v: &VectorBase<R>,
        beta: R,
    ) {
        let mut d = Matrix::new(v.dim(), v.dim());
        d.copy_diag_from_vec(v);
        self.add_sandwich("add_mat2_vec", alpha, m, trans, &d, beta);
    }

    /// `self = beta * self + alpha * op(T) op(T)^T`, `T` lower-triangular packed (Kaldi's
    /// `AddTp2`).
    ///
    /// # Panics
    /// If the orders differ.
    #[track_caller]
    #[doc(alias = "AddTp2")]
    pub fn add_tp2(&mut self, alpha: R, t: &TpMatrix<R>, trans: Trans, beta: R) {
        let t = t.to_matrix();
        self.add_mat2(alpha, &t, trans, beta);
    }

    /// `self = beta * self + alpha * op(T) A op(T)^T` (Kaldi's `AddTp2Sp`).
    ///
    /// # Panics
    /// If the orders differ.
    #[track_caller]
    #[doc(alias = "AddTp2Sp")]
    pub fn add_tp2_sp(
        &mut self,
        alpha: R,
        t: &TpMatrix<R>,
        trans: Trans,
        a: &SpMatrix<R>,
        beta: R,
    ) {
        let t = t.to_matrix();
        self.add_mat2_sp(alpha, &t, trans, a, beta);
    }

    /// `self = beta * self + alpha * diag(v) S diag(v)`: element `(i, j)` gets
    /// `alpha v_i S_ij v_j` (Kaldi's `AddVec2Sp`).
    ///
    /// # Panics
    /// If the orders differ.
    #[track_caller]
    #[doc(alias = "AddVec2Sp")]
    pub fn add_vec2_sp(&mut self, alpha: R, v: &VectorBase<R>, s: &SpMatrix<R>, beta: R) {
        let n = self.num_rows();
        v.check_same_dim("add_vec2_sp (v)", n);
        if s.num_rows() != n {
            shape_mismatch("add_vec2_sp", (n, n), (s.num_rows(), s.num_rows()));
        }
        for i in 0..n {
            let start = row_start(i);
            for j in 0..=i {
                let add = alpha * v[i] * s.data()[start + j] * v[j];
                let o = &mut self.data_mut()[start + j];
                *o = if beta == R::ZERO {
                    add
                } else {
                    beta * *o + add
                };
            }
        }
    }

    /// `self = P diag(s^power) P^T` from `self = P diag(s) P^T` (Kaldi's `ApplyPow`): the
    /// matrix must be positive semi-definite (through `sym_pos_semi_def_eig` with Kaldi's
    /// tolerance 0.001), else an error and no change.
    #[doc(alias = "ApplyPow")]
    pub fn apply_pow(&mut self, power: R) -> Result<(), Error> {
        if power == R::ONE || self.num_rows() == 0 {
            return Ok(());
        }
        let crate::SymEig { mut s, mut p } =
            self.to_matrix().sym_pos_semi_def_eig(R::from_f64(0.001))?;
        s.apply_pow(power * R::from_f64(0.5))?;
        p.mul_cols_vec(&s);
        self.add_mat2(R::ONE, &p, Trans::NoTrans, R::ZERO);
        Ok(())
    }

    #[track_caller]
    fn add_sandwich(
        &mut self,
        op: &str,
        alpha: R,
        m: &MatrixBase<R>,
        trans: Trans,
        middle: &MatrixBase<R>,
        beta: R,
    ) {
        let n = self.num_rows();
        let (rows, inner) = match trans {
            Trans::NoTrans => m.shape(),
            Trans::Trans => (m.num_cols(), m.num_rows()),
        };
        if rows != n || inner != middle.num_rows() {
            shape_mismatch(op, (rows, inner), (n, middle.num_rows()));
        }
        if n == 0 {
            return;
        }
        let mut full = Matrix::new(n, n);
        if inner > 0 {
            full.add_mat_mat_mat(
                R::ONE,
                m,
                trans,
                middle,
                Trans::NoTrans,
                m,
                flip(trans),
                R::ZERO,
            );
        }
        self.axpby_lower(beta, alpha, &full);
    }

    /// `self += alpha * M` element-wise over the packed storage (Kaldi's `AddPacked`).
    ///
    /// # Panics
    /// If the orders differ.
    #[track_caller]
    #[doc(alias = "AddPacked")]
    pub fn add_packed(&mut self, alpha: R, m: &SpMatrix<R>) {
        if m.num_rows() != self.num_rows() {
            shape_mismatch(
                "add_packed",
                (self.num_rows(), self.num_rows()),
                (m.num_rows(), m.num_rows()),
            );
        }
        for (o, &x) in self.data_mut().iter_mut().zip(m.data()) {
            *o += alpha * x;
        }
    }

    /// The largest element (Kaldi's `Max`); `-inf` for the empty matrix.
    pub fn max(&self) -> R {
        self.data()
            .iter()
            .fold(R::NEG_INFINITY, |m, &x| if x > m { x } else { m })
    }

    /// The smallest element (Kaldi's `Min`); `+inf` for the empty matrix.
    pub fn min(&self) -> R {
        self.data()
            .iter()
            .fold(R::INFINITY, |m, &x| if x < m { x } else { m })
    }

    /// Whether the matrix is positive definite: its Cholesky factorisation succeeds
    /// (Kaldi's `IsPosDef`); a NaN or infinite element gives `false`.
    #[doc(alias = "IsPosDef")]
    pub fn is_pos_def(&self) -> bool {
        TpMatrix::cholesky(self).is_ok()
    }

    /// The determinant, by LU (Kaldi's `Determinant`); 1 for the empty matrix.
    pub fn determinant(&self) -> R {
        let (log_det, sign) = self.to_matrix().log_det();
        sign * log_det.exp()
    }

    /// The largest eigenvalue in absolute value (Kaldi's `MaxAbsEig`); 0 when empty.
    #[doc(alias = "MaxAbsEig")]
    pub fn max_abs_eig(&self) -> Result<R, Error> {
        let s = self.eig()?.s;
        Ok(s.data().iter().fold(R::ZERO, |m, &x| m.max(x.abs())))
    }
}

/// `v1^T S v2` (Kaldi's `VecSpVec`).
///
/// # Panics
/// If the dimensions differ from `n`.
#[track_caller]
#[doc(alias = "VecSpVec")]
pub fn vec_sp_vec<R: Real>(v1: &VectorBase<R>, s: &SpMatrix<R>, v2: &VectorBase<R>) -> R {
    v1.check_same_dim("vec_sp_vec (v1)", s.num_rows());
    v2.check_same_dim("vec_sp_vec (v2)", s.num_rows());
    let mut sv = crate::Vector::<R>::new(s.num_rows());
    sv.add_sp_vec(R::ONE, s, v2, R::ZERO);
    crate::vec_vec(v1, &sv)
}

/// `tr(A B)` of two symmetric packed matrices (Kaldi's `TraceSpSp`).
///
/// # Panics
/// If the orders differ.
#[track_caller]
#[doc(alias = "TraceSpSp")]
pub fn trace_sp_sp<R: Real>(a: &SpMatrix<R>, b: &SpMatrix<R>) -> R {
    let n = a.num_rows();
    if b.num_rows() != n {
        shape_mismatch("trace_sp_sp", (n, n), (b.num_rows(), b.num_rows()));
    }
    // Off-diagonal elements appear twice in the trace, diagonal ones once.
    let mut sum = 0.0f64;
    for i in 0..n {
        let start = row_start(i);
        for j in 0..=i {
            let p = (a.data()[start + j] * b.data()[start + j]).to_f64();
            sum += if i == j { p } else { 2.0 * p };
        }
    }
    R::from_f64(sum)
}

/// `tr(A M)` of a symmetric packed `A` and a square `M` (Kaldi's `TraceSpMat`).
///
/// # Panics
/// If `M` is not `n x n`.
#[track_caller]
#[doc(alias = "TraceSpMat")]
pub fn trace_sp_mat<R: Real>(a: &SpMatrix<R>, m: &MatrixBase<R>) -> R {
    let n = a.num_rows();
    if m.shape() != (n, n) {
        shape_mismatch("trace_sp_mat", (n, n), m.shape());
    }
    let mut sum = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            sum += (a[(i, j)] * m[(j, i)]).to_f64();
        }
    }
    R::from_f64(sum)
}

impl<R: Real> VectorBase<R> {
    /// An index drawn with probability proportional to its element (Kaldi's
    /// `RandCategorical`; the elements need not sum to 1).
    ///
    /// # Panics
    /// If an element is negative or NaN, or the sum is not positive and finite.
    #[track_caller]
    #[doc(alias = "RandCategorical")]
    pub fn rand_categorical(&self, rng: &mut impl rand::Rng) -> usize {
        if let Some(i) = self.data().iter().position(|&x| x < R::ZERO || x.is_nan()) {
            crate::error::precondition(&format!(
                "rand_categorical: element {i} is {}, not a non-negative weight",
                self[i]
            ));
        }
        let total: f64 = self.data().iter().map(|x| x.to_f64()).sum();
        if !(total > 0.0 && total.is_finite()) {
            crate::error::precondition(&format!(
                "rand_categorical: the weights sum to {total}, not a positive finite number"
            ));
        }
        let target = rng.random::<f64>() * total;
        let mut acc = 0.0;
        for (i, &x) in self.data().iter().enumerate() {
            acc += x.to_f64();
            if target < acc {
                return i;
            }
        }
        // Rounding left `target` at the very end: the last non-zero weight.
        self.data().iter().rposition(|&x| x > R::ZERO).unwrap_or(0)
    }

    /// The packed elements of `m`, `n (n + 1) / 2` of them (Kaldi's `CopyFromPacked`).
    ///
    /// # Panics
    /// If the dimension differs.
    #[track_caller]
    #[doc(alias = "CopyFromPacked")]
    pub fn copy_from_packed(&mut self, packed: &[R]) {
        self.check_same_dim("copy_from_packed", packed.len());
        self.data_mut().copy_from_slice(packed);
    }

    /// The diagonal of a symmetric packed matrix (Kaldi's `CopyDiagFromSp`).
    ///
    /// # Panics
    /// If `dim() != n`.
    #[track_caller]
    #[doc(alias = "CopyDiagFromSp")]
    pub fn copy_diag_from_sp(&mut self, s: &SpMatrix<R>) {
        self.copy_diag_from_packed(s.num_rows(), s.data());
    }

    /// The diagonal of a triangular packed matrix (Kaldi's `CopyDiagFromTp`).
    ///
    /// # Panics
    /// If `dim() != n`.
    #[track_caller]
    #[doc(alias = "CopyDiagFromTp")]
    pub fn copy_diag_from_tp(&mut self, t: &TpMatrix<R>) {
        self.copy_diag_from_packed(t.num_rows(), t.data());
    }

    /// The diagonal of `n x n` packed data (Kaldi's `CopyDiagFromPacked`).
    ///
    /// # Panics
    /// If `dim() != n` or `packed` is not `n (n + 1) / 2` long.
    #[track_caller]
    #[doc(alias = "CopyDiagFromPacked")]
    pub fn copy_diag_from_packed(&mut self, n: usize, packed: &[R]) {
        self.check_same_dim("copy_diag_from_packed", n);
        if n.checked_mul(n + 1).map(|x| x / 2) != Some(packed.len()) {
            shape_mismatch(
                "copy_diag_from_packed (packed length, n)",
                (packed.len(), 1),
                (n, n),
            );
        }
        for i in 0..n {
            self.data_mut()[i] = packed[row_start(i) + i];
        }
    }

    /// Row `row` of the full symmetric matrix (Kaldi's `CopyRowFromSp`).
    ///
    /// # Panics
    /// If `dim() != n` or `row >= n`.
    #[track_caller]
    #[doc(alias = "CopyRowFromSp")]
    pub fn copy_row_from_sp(&mut self, s: &SpMatrix<R>, row: usize) {
        let n = s.num_rows();
        self.check_same_dim("copy_row_from_sp", n);
        if row >= n {
            out_of_bounds("row", row, n, "a packed symmetric matrix");
        }
        for j in 0..n {
            self.data_mut()[j] = s[(row, j)];
        }
    }
}

impl<R: Real> SpMatrix<R> {
    /// Kaldi's `IsDiagonal(cutoff)`: the off-diagonal absolute sum (lower triangle) is at
    /// most `cutoff` times the diagonal's.
    #[doc(alias = "IsDiagonal")]
    pub fn is_diagonal(&self, cutoff: R) -> bool {
        let (mut good, mut bad) = (0.0f64, 0.0f64);
        for i in 0..self.num_rows() {
            let start = row_start(i);
            for (j, x) in self.data()[start..=start + i].iter().enumerate() {
                if i == j {
                    good += x.to_f64().abs();
                } else {
                    bad += x.to_f64().abs();
                }
            }
        }
        bad <= good * cutoff.to_f64()
    }

    /// Kaldi's `IsUnit(cutoff)`: every element within `cutoff` of the identity's.
    #[doc(alias = "IsUnit")]
    pub fn is_unit(&self, cutoff: R) -> bool {
        (0..self.num_rows()).all(|i| {
            let start = row_start(i);
            self.data()[start..=start + i]
                .iter()
                .enumerate()
                .all(|(j, &x)| (x - if i == j { R::ONE } else { R::ZERO }).abs() <= cutoff)
        })
    }

    /// Kaldi's `IsZero(cutoff)`: every `|x| <= cutoff` (true when empty).
    #[doc(alias = "IsZero")]
    pub fn is_zero(&self, cutoff: R) -> bool {
        self.data().iter().all(|x| x.abs() <= cutoff)
    }

    /// The Frobenius norm of the full symmetric matrix (off-diagonal elements count
    /// twice; Kaldi's `FrobeniusNorm`), accumulated in `f64`.
    #[doc(alias = "FrobeniusNorm")]
    pub fn frobenius_norm(&self) -> R {
        let mut sum = 0.0f64;
        for i in 0..self.num_rows() {
            let start = row_start(i);
            for (j, x) in self.data()[start..=start + i].iter().enumerate() {
                let sq = x.to_f64() * x.to_f64();
                sum += if i == j { sq } else { 2.0 * sq };
            }
        }
        R::from_f64(sum.sqrt())
    }

    /// Kaldi's `ApproxEqual(other, tol)`: `||self - other||_F <= tol * max(||self||_F,
    /// ||other||_F)`.
    ///
    /// # Panics
    /// If the orders differ.
    #[track_caller]
    #[doc(alias = "ApproxEqual")]
    pub fn approx_equal(&self, other: &SpMatrix<R>, tol: R) -> bool {
        let n = self.num_rows();
        if other.num_rows() != n {
            shape_mismatch("approx_equal", (n, n), (other.num_rows(), other.num_rows()));
        }
        let mut diff = self.clone();
        diff.add_packed(-R::ONE, other);
        diff.frobenius_norm() <= tol * self.frobenius_norm().max(other.frobenius_norm())
    }

    /// `(ln|det|, sign of det)` by LU (Kaldi's `LogDet(&sign)`); `(-inf, 0)` if singular.
    #[doc(alias = "LogDet")]
    pub fn log_det(&self) -> (R, R) {
        self.to_matrix().log_det()
    }

    /// `self += alpha (v w^T + w v^T)` (Kaldi's `AddVecVec`, BLAS `spr2`).
    ///
    /// # Panics
    /// If `v` or `w` does not have dimension `n`.
    #[track_caller]
    #[doc(alias = "AddVecVec")]
    pub fn add_vec_vec(&mut self, alpha: R, v: &VectorBase<R>, w: &VectorBase<R>) {
        let n = self.num_rows();
        v.check_same_dim("add_vec_vec (v)", n);
        w.check_same_dim("add_vec_vec (w)", n);
        for i in 0..n {
            let (av, aw) = (alpha * v[i], alpha * w[i]);
            let start = row_start(i);
            for (j, o) in self.data_mut()[start..=start + i].iter_mut().enumerate() {
                *o += av * w[j] + aw * v[j];
            }
        }
    }

    /// Kaldi's `SpMatrix::SymPosSemiDefEig(s, P, tolerance)`: `self = P diag(s) P^T` with
    /// the eigenvalues ascending (LAPACK `syevd`) and negative ones set to 0; an
    /// eigenvalue below `-tolerance` times the largest is [`Error::NegativeEigenvalue`]
    /// (Kaldi asserts; its default tolerance is `0.001`).
    #[doc(alias = "SymPosSemiDefEig")]
    pub fn sym_pos_semi_def_eig(&self, tolerance: R) -> Result<crate::SymEig<R>, Error> {
        self.psd_eig("SpMatrix::sym_pos_semi_def_eig", tolerance.to_f64())
    }
}

/// `A . B` summed over the lower triangles only, off-diagonal products counted once
/// (Kaldi's `TraceSpSpLower`).
///
/// # Panics
/// If the orders differ.
#[track_caller]
#[doc(alias = "TraceSpSpLower")]
pub fn trace_sp_sp_lower<R: Real>(a: &SpMatrix<R>, b: &SpMatrix<R>) -> R {
    let n = a.num_rows();
    if b.num_rows() != n {
        shape_mismatch("trace_sp_sp_lower", (n, n), (b.num_rows(), b.num_rows()));
    }
    let sum: f64 = a
        .data()
        .iter()
        .zip(b.data())
        .map(|(&x, &y)| (x * y).to_f64())
        .sum();
    R::from_f64(sum)
}

/// `tr(op(A) B op(C))`, `B` symmetric packed (Kaldi's `TraceMatSpMat`).
///
/// # Panics
/// If the shapes do not fit.
#[track_caller]
#[doc(alias = "TraceMatSpMat")]
pub fn trace_mat_sp_mat<R: Real>(
    a: &MatrixBase<R>,
    trans_a: Trans,
    b: &SpMatrix<R>,
    c: &MatrixBase<R>,
    trans_c: Trans,
) -> R {
    let rows = match trans_a {
        Trans::NoTrans => a.num_rows(),
        Trans::Trans => a.num_cols(),
    };
    if rows == 0 || b.num_rows() == 0 {
        return R::ZERO;
    }
    let mut ab = Matrix::new(rows, b.num_rows());
    ab.add_mat_sp(R::ONE, a, trans_a, b, R::ZERO);
    crate::trace_mat_mat(&ab, c, trans_c)
}

/// `tr(op(A) B op(C) D)`, `B` and `D` symmetric packed (Kaldi's `TraceMatSpMatSp`).
///
/// # Panics
/// If the shapes do not fit.
#[track_caller]
#[doc(alias = "TraceMatSpMatSp")]
pub fn trace_mat_sp_mat_sp<R: Real>(
    a: &MatrixBase<R>,
    trans_a: Trans,
    b: &SpMatrix<R>,
    c: &MatrixBase<R>,
    trans_c: Trans,
    d: &SpMatrix<R>,
) -> R {
    let rows_a = match trans_a {
        Trans::NoTrans => a.num_rows(),
        Trans::Trans => a.num_cols(),
    };
    let rows_c = match trans_c {
        Trans::NoTrans => c.num_rows(),
        Trans::Trans => c.num_cols(),
    };
    if rows_a == 0 || rows_c == 0 || b.num_rows() == 0 || d.num_rows() == 0 {
        return R::ZERO;
    }
    let mut ab = Matrix::new(rows_a, b.num_rows());
    ab.add_mat_sp(R::ONE, a, trans_a, b, R::ZERO);
    let mut cd = Matrix::new(rows_c, d.num_rows());
    cd.add_mat_sp(R::ONE, c, trans_c, d, R::ZERO);
    crate::trace_mat_mat(&ab, &cd, Trans::NoTrans)
}

impl<R: Real> TpMatrix<R> {
    /// The product of the diagonal, accumulated in `f64` (Kaldi's `Determinant`); 1 when
    /// empty.
    pub fn determinant(&self) -> R {
        let det: f64 = (0..self.num_rows())
            .map(|i| self.data()[row_start(i) + i].to_f64())
            .product();
        R::from_f64(det)
    }

    /// Inverts in place through `f64` arithmetic whatever `R` is (Kaldi's
    /// `InvertDouble`); the errors of [`TpMatrix::invert`], leaving the matrix unchanged.
    #[allow(
        clippy::missing_panics_doc,
        reason = "the f64 copy has the same packed length"
    )]
    #[doc(alias = "InvertDouble")]
    pub fn invert_double(&mut self) -> Result<(), Error> {
        let mut wide = TpMatrix::<f64>::from_packed(
            self.num_rows(),
            self.data().iter().map(|x| x.to_f64()).collect(),
        )
        .expect("the f64 copy has the same packed length");
        wide.invert()?;
        for (o, &x) in self.data_mut().iter_mut().zip(wide.data()) {
            *o = R::from_f64(x);
        }
        Ok(())
    }

    /// The lower triangle of `op(M)` (Kaldi's `CopyFromMat(M, trans)`: `Trans` takes the
    /// upper triangle of `M`, transposed).
    ///
    /// # Panics
    /// If `M` is not `n x n`.
    #[track_caller]
    #[doc(alias = "CopyFromMat")]
    pub fn copy_from_mat(&mut self, m: &MatrixBase<R>, trans: Trans) {
        let n = self.num_rows();
        if m.shape() != (n, n) {
            shape_mismatch("TpMatrix::copy_from_mat", (n, n), m.shape());
        }
        for i in 0..n {
            let start = row_start(i);
            for j in 0..=i {
                self.data_mut()[start + j] = match trans {
                    Trans::NoTrans => m[(i, j)],
                    Trans::Trans => m[(j, i)],
                };
            }
        }
    }

    /// `self += alpha * M` over the packed storage (Kaldi's `AddTp`).
    ///
    /// # Panics
    /// If the orders differ.
    #[track_caller]
    #[doc(alias = "AddTp")]
    pub fn add_tp(&mut self, alpha: R, m: &TpMatrix<R>) {
        if m.num_rows() != self.num_rows() {
            shape_mismatch(
                "add_tp",
                (self.num_rows(), self.num_rows()),
                (m.num_rows(), m.num_rows()),
            );
        }
        for (o, &x) in self.data_mut().iter_mut().zip(m.data()) {
            *o += alpha * x;
        }
    }
}
