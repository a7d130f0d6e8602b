//! Kaldi's numerically stable quadratic solvers (`sp-matrix.h`): maximise
//! `x.g - x^T H x / 2` and its matrix forms with the eigenvalues of the quadratic term
//! floored at `max / K`, so a singular or badly conditioned term still gives a finite
//! step, and the step is rejected if the objective would go down.
//!
//! Each returns the objective improvement, which is never negative.

use crate::error::{dim_mismatch, shape_mismatch};
use crate::packed_eig::PSD_TOLERANCE;
use crate::{
    trace_mat_mat, trace_sp_sp, vec_sp_vec, vec_vec, Error, Matrix, MatrixBase, Position, Real,
    SpMatrix, SymEig, TpMatrix, Trans, Vector, VectorBase,
};

/// Options of the quadratic solvers (Kaldi's `SolverOptions`); `Default` gives Kaldi's
/// defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct SolverOptions {
    /// Name of the problem, used in the messages (`"[unknown]"`).
    pub name: String,
    /// The largest condition number kept: eigenvalues below `max / k` are floored
    /// (Kaldi's `K`, `1e4`; must exceed 10).
    pub k: f64,
    /// The smallest floor of the eigenvalues (`1e-40`; must be below `1e-10`).
    pub eps: f64,
    /// Solve for the change from the current value, which starts the objective from the
    /// current point (`true`).
    pub optimize_delta: bool,
    /// Rescale by the diagonal of the quadratic term first, for problems whose dimensions
    /// are scaled very differently (`false`, as Kaldi for compatibility).
    pub diagonal_precondition: bool,
    /// Print Kaldi's log and warning lines (floored eigenvalues, a rejected step) to
    /// stderr (`true`).
    pub print_debug_output: bool,
}

impl Default for SolverOptions {
    fn default() -> Self {
        Self {
            name: "[unknown]".to_string(),
            k: 1.0e4,
            eps: 1.0e-40,
            optimize_delta: true,
            diagonal_precondition: false,
            print_debug_output: true,
        }
    }
}

impl SolverOptions {
    /// Kaldi's defaults with a name (Kaldi's `SolverOptions(name)`).
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            ..Self::default()
        }
    }

    /// Kaldi's `Check`: `k > 10` and `eps < 1e-10`, as [`Error::InvalidArgument`].
    pub fn check(&self) -> Result<(), Error> {
        if self.k.is_nan() || self.k <= 10.0 {
            return Err(Error::InvalidArgument {
                op: "SolverOptions",
                name: "k",
                value: self.k,
                requirement: "greater than 10",
            });
        }
        if self.eps.is_nan() || self.eps >= 1.0e-10 {
            return Err(Error::InvalidArgument {
                op: "SolverOptions",
                name: "eps",
                value: self.eps,
                requirement: "below 1e-10",
            });
        }
        Ok(())
    }
}

fn check_finite_vec<R: Real>(v: &[R], op: &'static str) -> Result<(), Error> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(i) => Err(Error::NotFinite {
            op,
            position: Position::Vector(i),
            value: v[i].to_f64(),
        }),
        None => Ok(()),
    }
}

fn check_finite_mat<R: Real>(m: &MatrixBase<R>, op: &'static str) -> Result<(), Error> {
    for (r, row) in m.rows().enumerate() {
        if let Some(c) = row.iter().position(|x| !x.is_finite()) {
            return Err(Error::NotFinite {
                op,
                position: Position::Matrix(r, c),
                value: row[c].to_f64(),
            });
        }
    }
    Ok(())
}

/// The eigendecomposition of the positive semi-definite quadratic term with its
/// eigenvalues floored at `max(eps, max / k)`; logs the count as Kaldi does.
fn floored_eig<R: Real>(
    h: &SpMatrix<R>,
    opts: &SolverOptions,
    op: &'static str,
    what: &str,
) -> Result<SymEig<R>, Error> {
    let mut eig = h.psd_eig(op, PSD_TOLERANCE)?;
    let max = eig.s.data().iter().fold(R::ZERO, |m, &x| m.max(x));
    let floor = R::from_f64(opts.eps).max(max / R::from_f64(opts.k));
    let mut floored = 0;
    for x in eig.s.data_mut() {
        if *x < floor {
            floored += 1;
            *x = floor;
        }
    }
    if floored != 0 && opts.print_debug_output {
        eprintln!(
            "Solving {what} problem for {}: floored {floored} eigenvalues.",
            opts.name
        );
    }
    Ok(eig)
}

/// `diag(H)` floored at `1e3` times the smallest normal number, its square root and the
/// inverse square root (Kaldi's diagonal preconditioner).
fn diag_scales<R: Real>(h: &SpMatrix<R>) -> (Vector<R>, Vector<R>) {
    let tiny = if R::NAME == "f32" {
        R::from_f64(f32::MIN_POSITIVE as f64 * 1.0e3)
    } else {
        R::from_f64(f64::MIN_POSITIVE * 1.0e3)
    };
    let n = h.num_rows();
    let sqrt = Vector::from_vec((0..n).map(|i| h[(i, i)].max(tiny).sqrt()).collect());
    let inv_sqrt = Vector::from_vec(sqrt.data().iter().map(|&x| R::ONE / x).collect());
    (sqrt, inv_sqrt)
}

fn is_zero<R: Real>(h: &SpMatrix<R>) -> bool {
    h.data().iter().all(|&x| x == R::ZERO)
}

/// Maximises `Q(x) = x.g - x^T H x / 2` for a positive semi-definite `H`, starting from
/// `x`, and returns the improvement `Q(x_new) - Q(x_old)` (Kaldi's
/// `SolveQuadraticProblem`): a numerically stable `x = H^-1 g` with the eigenvalues of `H`
/// floored at `max(eps, max / k)`. The step is kept only if `Q` does not go down (then
/// the improvement is 0 and `x` is unchanged), and a zero `H` leaves `x` unchanged. The
/// arithmetic is in `f64` for both precisions, as Kaldi's.
///
/// Errors: [`SolverOptions::check`]; [`Error::NotFinite`]; [`Error::NegativeEigenvalue`] if
/// `H` has an eigenvalue below `-0.001` times its largest. `x` is unchanged on error.
///
/// # Panics
/// If `g` or `x` does not have `H`'s order.
#[track_caller]
#[doc(alias = "SolveQuadraticProblem")]
pub fn solve_quadratic_problem<R: Real>(
    h: &SpMatrix<R>,
    g: &VectorBase<R>,
    opts: &SolverOptions,
    x: &mut VectorBase<R>,
) -> Result<R, Error> {
    let n = h.num_rows();
    g.check_same_dim("solve_quadratic_problem (g, H)", n);
    x.check_same_dim("solve_quadratic_problem (x, H)", n);
    opts.check()?;
    let op = "solve_quadratic_problem";
    crate::packed::check_finite_packed(h.data(), op)?;
    check_finite_vec(g.data(), op)?;
    check_finite_vec(x.data(), op)?;
    let hd = SpMatrix::<f64>::from_packed(n, h.data().iter().map(|v| v.to_f64()).collect())
        .expect("the f64 copy has the same packed length");
    let gd = Vector::from_vec(g.data().iter().map(|v| v.to_f64()).collect());
    let mut xd = Vector::from_vec(x.data().iter().map(|v| v.to_f64()).collect());
    let improvement = solve_quadratic_f64(&hd, &gd, opts, &mut xd)?;
    x.copy_from_vec(&xd);
    Ok(R::from_f64(improvement))
}

fn solve_quadratic_f64(
    h: &SpMatrix<f64>,
    g: &VectorBase<f64>,
    opts: &SolverOptions,
    x: &mut VectorBase<f64>,
) -> Result<f64, Error> {
    let n = h.num_rows();
    if n == 0 {
        return Ok(0.0);
    }
    if is_zero(h) {
        if opts.print_debug_output {
            eprintln!(
                "Zero quadratic term in quadratic vector problem for {}: leaving it unchanged.",
                opts.name
            );
        }
        return Ok(0.0);
    }
    if opts.diagonal_precondition {
        // Solve for y = diag(sqrt h_ii) x with H' = D^-1/2 H D^-1/2, g' = D^-1/2 g.
        let (sqrt, inv_sqrt) = diag_scales(h);
        let mut x_scaled = x.to_vector();
        x_scaled.mul_elements(&sqrt);
        let mut g_scaled = g.to_vector();
        g_scaled.mul_elements(&inv_sqrt);
        let mut h_scaled = SpMatrix::new(n);
        h_scaled.add_vec2_sp(1.0, &inv_sqrt, h, 0.0);
        let inner = SolverOptions {
            diagonal_precondition: false,
            ..opts.clone()
        };
        let improvement = solve_quadratic_f64(&h_scaled, &g_scaled, &inner, &mut x_scaled)?;
        x_scaled.mul_elements(&inv_sqrt);
        x.copy_from_vec(&x_scaled);
        return Ok(improvement);
    }
    let mut gbar = g.to_vector();
    if opts.optimize_delta {
        gbar.add_sp_vec(-1.0, h, x, 1.0); // g - H x
    }
    let SymEig { s: l, p: u } = floored_eig(h, opts, "solve_quadratic_problem", "quadratic")?;
    // delta = U diag(l)^-1 U^T gbar
    let mut tmp = Vector::new(n);
    tmp.add_mat_vec(1.0, &u, Trans::Trans, &gbar, 0.0);
    tmp.div_elements(&l);
    let mut xhat = Vector::new(n);
    xhat.add_mat_vec(1.0, &u, Trans::NoTrans, &tmp, 0.0);
    if opts.optimize_delta {
        xhat.add_vec(1.0, x);
    }
    let objective = |v: &VectorBase<f64>| vec_vec(g, v) - 0.5 * vec_sp_vec(v, h, v);
    let (before, after) = (objective(x), objective(&xhat));
    if after < before {
        if after < before - 1.0e-10 && opts.print_debug_output {
            eprintln!(
                "Optimizing vector auxiliary function for {}: auxf decreased {before} to \
                 {after}, change is {}",
                opts.name,
                after - before
            );
        }
        return Ok(0.0);
    }
    x.copy_from_vec(&xhat);
    Ok(after - before)
}

/// Maximises `Q(M) = tr(M^T P Y) - tr(P M Q M^T) / 2` over `M` (`rows x cols`), for
/// positive semi-definite `Q` (`cols x cols`) and `P` (`rows x rows`, Kaldi's
/// `SigmaInv`), and returns the improvement (Kaldi's `SolveQuadraticMatrixProblem`): a
/// stable `M = Y Q^-1` with the eigenvalues of `Q` floored as in
/// [`solve_quadratic_problem`]. The step is kept only if `Q(M)` does not go down.
///
/// Errors: as [`solve_quadratic_problem`] (for `Q`); `M` is unchanged on error.
///
/// # Panics
/// If the shapes do not fit `M`.
#[track_caller]
#[doc(alias = "SolveQuadraticMatrixProblem")]
pub fn solve_quadratic_matrix_problem<R: Real>(
    q: &SpMatrix<R>,
    y: &MatrixBase<R>,
    p: &SpMatrix<R>,
    opts: &SolverOptions,
    m: &mut MatrixBase<R>,
) -> Result<R, Error> {
    let (rows, cols) = m.shape();
    let op = "solve_quadratic_matrix_problem";
    if y.shape() != (rows, cols) {
        shape_mismatch(
            "solve_quadratic_matrix_problem (Y, M)",
            y.shape(),
            (rows, cols),
        );
    }
    if q.num_rows() != cols {
        dim_mismatch(op, "order of Q", q.num_rows(), "columns of M", cols);
    }
    if p.num_rows() != rows {
        dim_mismatch(op, "order of P", p.num_rows(), "rows of M", rows);
    }
    opts.check()?;
    crate::packed::check_finite_packed(q.data(), op)?;
    crate::packed::check_finite_packed(p.data(), op)?;
    check_finite_mat(y, op)?;
    check_finite_mat(m, op)?;
    if rows == 0 {
        return Ok(R::ZERO);
    }
    if is_zero(q) {
        if opts.print_debug_output {
            eprintln!(
                "Zero quadratic term in quadratic matrix problem for {}: leaving it unchanged.",
                opts.name
            );
        }
        return Ok(R::ZERO);
    }
    if opts.diagonal_precondition {
        // Columns of M scaled by sqrt(q_jj), of Y by its inverse.
        let (sqrt, inv_sqrt) = diag_scales(q);
        let mut m_scaled = m.to_matrix();
        m_scaled.mul_cols_vec(&sqrt);
        let mut y_scaled = y.to_matrix();
        y_scaled.mul_cols_vec(&inv_sqrt);
        let mut q_scaled = SpMatrix::new(cols);
        q_scaled.add_vec2_sp(R::ONE, &inv_sqrt, q, R::ZERO);
        let inner = SolverOptions {
            diagonal_precondition: false,
            ..opts.clone()
        };
        let improvement =
            solve_quadratic_matrix_problem(&q_scaled, &y_scaled, p, &inner, &mut m_scaled)?;
        m_scaled.mul_cols_vec(&inv_sqrt);
        m.copy_from_mat(&m_scaled, Trans::NoTrans);
        return Ok(improvement);
    }
    let q_full = q.to_matrix();
    let mut ybar = y.to_matrix();
    if opts.optimize_delta {
        ybar.add_mat_mat(-R::ONE, m, Trans::NoTrans, &q_full, Trans::NoTrans, R::ONE);
    }
    let SymEig { s: mut l, p: u } = floored_eig(q, opts, op, "matrix")?;
    // Delta = Ybar U diag(l)^-1 U^T
    let mut tmp = Matrix::new(rows, cols);
    tmp.add_mat_mat(R::ONE, &ybar, Trans::NoTrans, &u, Trans::NoTrans, R::ZERO);
    l.invert_elements();
    tmp.mul_cols_vec(&l);
    let mut m_hat = Matrix::new(rows, cols);
    m_hat.add_mat_mat(R::ONE, &tmp, Trans::NoTrans, &u, Trans::Trans, R::ZERO);
    if opts.optimize_delta {
        m_hat.add_mat(R::ONE, m, Trans::NoTrans);
    }
    let mut p_y = Matrix::new(rows, cols);
    p_y.add_mat_mat(
        R::ONE,
        &p.to_matrix(),
        Trans::NoTrans,
        y,
        Trans::NoTrans,
        R::ZERO,
    );
    let objective = |mm: &MatrixBase<R>| {
        let mut mqm = SpMatrix::new(rows);
        mqm.add_mat2_sp(R::ONE, mm, Trans::NoTrans, q, R::ZERO);
        trace_mat_mat(mm, &p_y, Trans::Trans) - R::from_f64(0.5) * trace_sp_sp(p, &mqm)
    };
    let (before, after) = (objective(m), objective(&m_hat));
    if after < before {
        if after.to_f64() < before.to_f64() - 1.0e-10 && opts.print_debug_output {
            eprintln!(
                "Optimizing matrix auxiliary function for {}, auxf decreased {before} to \
                 {after}, change is {}",
                opts.name,
                after - before
            );
        }
        return Ok(R::ZERO);
    }
    m.copy_from_mat(&m_hat, Trans::NoTrans);
    Ok(after - before)
}

/// Maximises `Q(M) = tr(M^T G) - tr(P1 M Q1 M^T) / 2 - tr(P2 M Q2 M^T) / 2` (a matrix
/// update with a prior) and returns the improvement (Kaldi's
/// `SolveDoubleQuadraticMatrixProblem`). `P1` must be positive definite, `P2` positive
/// semi-definite, and `Q1 + d Q2` positive semi-definite for `d >= 0`. It simultaneously
/// diagonalises `P1` and `P2` by `T` (`T P1 T^T = I`, `T P2 T^T = diag(d)`), then solves
/// each row of `T^-T M` with `Q1 + d_n Q2`, falling back to [`solve_quadratic_problem`]
/// for a row whose matrix is singular or whose objective would go down.
///
/// Errors: [`SolverOptions::check`], [`Error::NotFinite`], the Cholesky error of `P1`, the
/// errors of the row fallback; `M` is unchanged on error.
///
/// # Panics
/// If the shapes do not fit `M` (`rows x cols`; `P1`, `P2` of order `rows`, `Q1`, `Q2` of
/// order `cols`).
#[track_caller]
#[allow(clippy::too_many_arguments)] // Kaldi's signature
#[doc(alias = "SolveDoubleQuadraticMatrixProblem")]
pub fn solve_double_quadratic_matrix_problem<R: Real>(
    g: &MatrixBase<R>,
    p1: &SpMatrix<R>,
    p2: &SpMatrix<R>,
    q1: &SpMatrix<R>,
    q2: &SpMatrix<R>,
    opts: &SolverOptions,
    m: &mut MatrixBase<R>,
) -> Result<R, Error> {
    let (rows, cols) = m.shape();
    let op = "solve_double_quadratic_matrix_problem";
    if g.shape() != (rows, cols) {
        shape_mismatch(
            "solve_double_quadratic_matrix_problem (G, M)",
            g.shape(),
            (rows, cols),
        );
    }
    for (what, s, want, of) in [
        ("order of P1", p1, rows, "rows of M"),
        ("order of P2", p2, rows, "rows of M"),
        ("order of Q1", q1, cols, "columns of M"),
        ("order of Q2", q2, cols, "columns of M"),
    ] {
        if s.num_rows() != want {
            dim_mismatch(op, what, s.num_rows(), of, want);
        }
    }
    opts.check()?;
    for s in [p1, p2, q1, q2] {
        crate::packed::check_finite_packed(s.data(), op)?;
    }
    check_finite_mat(g, op)?;
    check_finite_mat(m, op)?;
    if rows == 0 {
        return Ok(R::ZERO);
    }
    let mut l_inv = TpMatrix::cholesky(p1)?;
    l_inv.invert()?;
    let l_inv_full = l_inv.to_matrix();
    let mut s = SpMatrix::new(rows);
    s.add_mat2_sp(R::ONE, &l_inv_full, Trans::NoTrans, p2, R::ZERO); // L^-1 P2 L^-T
    let SymEig { s: d, p: u } = s.psd_eig(op, PSD_TOLERANCE)?;
    let mut t = Matrix::new(rows, rows);
    t.add_mat_mat(
        R::ONE,
        &u,
        Trans::Trans,
        &l_inv_full,
        Trans::NoTrans,
        R::ZERO,
    ); // U^T L^-1
    let mut t_inv = t.clone();
    t_inv.invert()?;
    let mut g_dash = Matrix::new(rows, cols);
    g_dash.add_mat_mat(R::ONE, &t, Trans::NoTrans, g, Trans::NoTrans, R::ZERO);
    let mut m_dash = Matrix::new(rows, cols);
    m_dash.add_mat_mat(R::ONE, &t_inv, Trans::Trans, m, Trans::NoTrans, R::ZERO);
    let half = R::from_f64(0.5);
    let mut improvement = R::ZERO;
    for n in 0..rows {
        let mut q_sum = q1.clone();
        q_sum.add_packed(d[n], q2);
        let g_n = g_dash.row(n);
        let old_row = m_dash.row(n).to_vector();
        let objective = |v: &VectorBase<R>| vec_vec(v, g_n) - half * vec_sp_vec(v, &q_sum, v);
        let old = objective(&old_row);
        let mut q_inv = q_sum.to_matrix();
        let direct = match q_inv.invert() {
            Ok(_) => {
                let mut new_row = Vector::new(cols);
                new_row.add_mat_vec(R::ONE, &q_inv, Trans::NoTrans, g_n, R::ZERO);
                let new = objective(&new_row);
                if new >= old && new.is_finite() {
                    m_dash.row_mut(n).copy_from_vec(&new_row);
                    improvement += new - old;
                    true
                } else {
                    // Very close to the optimum (Kaldi keeps the old row) or a failed
                    // inversion (Kaldi's warning, then the stable solver).
                    new.is_finite() && new.to_f64() >= old.to_f64() - 1.0e-5
                }
            }
            Err(_) => false,
        };
        if !direct {
            if opts.print_debug_output {
                eprintln!(
                    "Matrix inversion or optimization failed during double quadratic \
                     problem, solving for {}: trying more stable approach.",
                    opts.name
                );
            }
            let g_row = g_n.to_vector();
            improvement += solve_quadratic_problem(&q_sum, &g_row, opts, m_dash.row_mut(n))?;
        }
    }
    m.add_mat_mat(R::ONE, &t, Trans::Trans, &m_dash, Trans::NoTrans, R::ZERO);
    Ok(improvement)
}
