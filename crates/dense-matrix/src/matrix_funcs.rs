//! Issue 12's traces of three and four products (`trace_mat_mat_mat`,
//! `trace_mat_mat_mat_mat`), `orthogonalize_rows`, and its vector methods (`add_vec_div_vec`,
//! `add_diag_mat_mat`, `apply_log_and_copy`, `replace_value`).

use crate::error::shape_mismatch;
use crate::nnet::{op_at, op_shape};
use crate::{trace_mat_mat, Error, Matrix, MatrixBase, Position, Real, Trans, VectorBase};

/// `tr(op(A) op(B) op(C))` (Kaldi's `TraceMatMatMat`).
///
/// # Panics
/// If the shapes do not chain into a square product.
#[track_caller]
#[doc(alias = "TraceMatMatMat")]
pub fn trace_mat_mat_mat<R: Real>(
    a: &MatrixBase<R>,
    trans_a: Trans,
    b: &MatrixBase<R>,
    trans_b: Trans,
    c: &MatrixBase<R>,
    trans_c: Trans,
) -> R {
    let ab = product(a, trans_a, b, trans_b, "trace_mat_mat_mat (op(A) op(B))");
    trace_of_product(&ab, c, trans_c, "trace_mat_mat_mat (op(A) op(B) op(C))")
}

/// `tr(op(A) op(B) op(C) op(D))` (Kaldi's `TraceMatMatMatMat`).
///
/// # Panics
/// If the shapes do not chain into a square product.
#[track_caller]
#[allow(clippy::too_many_arguments)]
#[doc(alias = "TraceMatMatMatMat")]
pub fn trace_mat_mat_mat_mat<R: Real>(
    a: &MatrixBase<R>,
    trans_a: Trans,
    b: &MatrixBase<R>,
    trans_b: Trans,
    c: &MatrixBase<R>,
    trans_c: Trans,
    d: &MatrixBase<R>,
    trans_d: Trans,
) -> R {
    let ab = product(
        a,
        trans_a,
        b,
        trans_b,
        "trace_mat_mat_mat_mat (op(A) op(B))",
    );
    let abc = product(
        &ab,
        Trans::NoTrans,
        c,
        trans_c,
        "trace_mat_mat_mat_mat (op(A) op(B) op(C))",
    );
    trace_of_product(&abc, d, trans_d, "trace_mat_mat_mat_mat (... op(D))")
}

/// `op(A) op(B)` as a new matrix (empty for empty operands).
#[track_caller]
fn product<R: Real>(
    a: &MatrixBase<R>,
    ta: Trans,
    b: &MatrixBase<R>,
    tb: Trans,
    op: &str,
) -> Matrix<R> {
    let (m, k) = op_shape(a, ta);
    let (k2, n) = op_shape(b, tb);
    if k != k2 {
        shape_mismatch(op, (m, k), (k2, n));
    }
    if m == 0 || n == 0 {
        return Matrix::empty();
    }
    let mut out = Matrix::new(m, n);
    if k > 0 {
        out.add_mat_mat(R::ONE, a, ta, b, tb, R::ZERO);
    }
    out
}

/// `tr(P op(C))`, with the shape check.
#[track_caller]
fn trace_of_product<R: Real>(p: &MatrixBase<R>, c: &MatrixBase<R>, tc: Trans, op: &str) -> R {
    let (cr, cc) = op_shape(c, tc);
    if p.num_rows() != cc || p.num_cols() != cr {
        shape_mismatch(op, p.shape(), (cr, cc));
    }
    if p.is_empty() {
        return R::ZERO;
    }
    // trace_mat_mat(A, B, NoTrans) = tr(A B); with Trans it is tr(A B^T).
    trace_mat_mat(p, c, tc)
}

impl<R: Real> MatrixBase<R> {
    /// Makes the rows orthonormal by Gram-Schmidt, in order (Kaldi's
    /// `OrthogonalizeRows`): each row loses its projections on the rows before it and is
    /// scaled to unit length. A row that is zero, not finite, or loses more than 99% of its
    /// squared length (linearly dependent on the rows before it) is redrawn from
    /// `N(0, 1)` with `rng` and tried again, as Kaldi does.
    ///
    /// # Panics
    /// If `rows > cols` (no such basis exists), or a row fails 100 redraws.
    #[track_caller]
    #[doc(alias = "OrthogonalizeRows")]
    pub fn orthogonalize_rows(&mut self, rng: &mut impl rand::Rng) {
        if self.num_rows() > self.num_cols() {
            shape_mismatch(
                "orthogonalize_rows needs rows <= cols",
                self.shape(),
                (self.num_cols(), self.num_cols()),
            );
        }
        for i in 0..self.num_rows() {
            let mut redraws = 0;
            loop {
                let start: f64 = self.row(i).data().iter().map(|x| x.to_f64().powi(2)).sum();
                let usable = start.is_finite() && start > 0.0;
                if usable {
                    for j in 0..i {
                        let prod = crate::vec_vec(self.row(i), self.row(j));
                        let (before, mut rest) = self.split_rows_at_mut(i);
                        rest.row_mut(0).add_vec(-prod, before.row(j));
                    }
                    let end: f64 = self.row(i).data().iter().map(|x| x.to_f64().powi(2)).sum();
                    if end > 0.01 * start {
                        self.row_mut(i).scale(R::from_f64(1.0 / end.sqrt()));
                        break;
                    }
                }
                redraws += 1;
                if redraws > 100 {
                    crate::error::precondition(&format!(
                        "orthogonalize_rows: row {i} stayed dependent after 100 redraws"
                    ));
                }
                self.row_mut(i).set_randn(rng);
            }
        }
    }
}

impl<R: Real> VectorBase<R> {
    /// `self = beta * self + alpha * v / r` element-wise (Kaldi's `AddVecDivVec`).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "AddVecDivVec")]
    pub fn add_vec_div_vec(&mut self, alpha: R, v: &VectorBase<R>, r: &VectorBase<R>, beta: R) {
        self.check_same_dim("add_vec_div_vec (v)", v.dim());
        self.check_same_dim("add_vec_div_vec (r)", r.dim());
        for ((o, &x), &d) in self.data_mut().iter_mut().zip(v.data()).zip(r.data()) {
            *o = if beta == R::ZERO {
                alpha * x / d
            } else {
                beta * *o + alpha * x / d
            };
        }
    }

    /// `self = beta * self + alpha * diag(op(M) op(N))`, without forming the product
    /// (Kaldi's `AddDiagMatMat`).
    ///
    /// # Panics
    /// If `op(M) op(N)` is not `dim x dim`.
    #[track_caller]
    #[doc(alias = "AddDiagMatMat")]
    pub fn add_diag_mat_mat(
        &mut self,
        alpha: R,
        m: &MatrixBase<R>,
        trans_m: Trans,
        n: &MatrixBase<R>,
        trans_n: Trans,
        beta: R,
    ) {
        let (mr, mc) = op_shape(m, trans_m);
        let (nr, nc) = op_shape(n, trans_n);
        if mc != nr || mr != self.dim() || nc != self.dim() {
            shape_mismatch(
                "add_diag_mat_mat (op(M) x op(N), output dim x dim)",
                (mr, mc),
                (nr, nc),
            );
        }
        for i in 0..self.dim() {
            let sum: f64 = (0..mc)
                .map(|j| (op_at(m, trans_m, i, j) * op_at(n, trans_n, j, i)).to_f64())
                .sum();
            let o = &mut self.data_mut()[i];
            let add = alpha * R::from_f64(sum);
            *o = if beta == R::ZERO {
                add
            } else {
                beta * *o + add
            };
        }
    }

    /// `self = ln(v)` element-wise (Kaldi's `ApplyLogAndCopy`); an error naming the first
    /// negative element, and no change, if there is one.
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "ApplyLogAndCopy")]
    pub fn apply_log_and_copy(&mut self, v: &VectorBase<R>) -> Result<(), Error> {
        self.check_same_dim("apply_log_and_copy", v.dim());
        if let Some(i) = v.data().iter().position(|&x| x < R::ZERO) {
            return Err(Error::LogOfNegative {
                position: Position::Vector(i),
                value: v[i].to_f64(),
            });
        }
        for (o, &x) in self.data_mut().iter_mut().zip(v.data()) {
            *o = x.ln();
        }
        Ok(())
    }

    /// Every element equal to `orig` becomes `changed` (Kaldi's `ReplaceValue`).
    #[doc(alias = "ReplaceValue")]
    pub fn replace_value(&mut self, orig: R, changed: R) {
        for v in self.data_mut() {
            if *v == orig {
                *v = changed;
            }
        }
    }
}
