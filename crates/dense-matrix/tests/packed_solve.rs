//! Kaldi's quadratic solvers against closed-form minimisers computed by Gaussian
//! elimination in an `f64` model (`x = H^-1 g`, `M = Y Q^-1`, the Kronecker system of
//! the double problem), objectives evaluated by naive loops, and the guarantee on
//! singular terms: the improvement is never negative and the objective never goes down.

#![allow(clippy::needless_range_loop)]

use crate::common;

use common::*;
use dense_matrix::{
    solve_double_quadratic_matrix_problem, solve_quadratic_matrix_problem, solve_quadratic_problem,
    Error, Matrix, Real, SolverOptions, SpMatrix, Trans, Vector,
};

fn quiet() -> SolverOptions {
    SolverOptions {
        print_debug_output: false,
        ..SolverOptions::new("test")
    }
}

/// Solves `A z = b` by Gaussian elimination with partial pivoting.
fn solve(a: &Model, b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut a: Model = a.iter().map(|r| r.to_vec()).collect();
    let mut b = b.to_vec();
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap();
        a.swap(col, piv);
        b.swap(col, piv);
        for r in col + 1..n {
            let f = a[r][col] / a[col][col];
            for c in col..n {
                a[r][c] -= f * a[col][c];
            }
            b[r] -= f * b[col];
        }
    }
    let mut z = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|c| a[r][c] * z[c]).sum();
        z[r] = (b[r] - s) / a[r][r];
    }
    z
}

fn sp_model<R: Real>(s: &SpMatrix<R>) -> Model {
    let n = s.num_rows();
    (0..n)
        .map(|i| (0..n).map(|j| s[(i, j)].to_f64()).collect())
        .collect()
}

/// `M M^T + n I`: positive definite, condition far below Kaldi's `K = 1e4`.
fn well_conditioned<R: Real>(r: &mut rand::rngs::StdRng, n: usize) -> SpMatrix<R> {
    let m = random_matrix::<R>(r, n, n);
    let mut s = SpMatrix::new(n);
    s.add_mat2(R::ONE, &m, Trans::NoTrans, R::ZERO);
    s.add_to_diag(R::from_f64(n as f64));
    s
}

fn quad_objective(h: &Model, g: &[f64], x: &[f64]) -> f64 {
    let n = g.len();
    let mut q = 0.0;
    for i in 0..n {
        q += g[i] * x[i];
        for j in 0..n {
            q -= 0.5 * x[i] * h[i][j] * x[j];
        }
    }
    q
}

fn tol_of<R: Real>() -> f64 {
    if R::NAME == "f32" {
        2e-4
    } else {
        1e-9
    }
}

fn quadratic_cases<R: Real>() {
    let mut r = rng(1301);
    for n in [1, 3, 7] {
        for (optimize_delta, diagonal_precondition) in
            [(true, false), (false, false), (true, true), (false, true)]
        {
            let h = well_conditioned::<R>(&mut r, n);
            let g = random_vector::<R>(&mut r, n);
            let x0 = random_vector::<R>(&mut r, n);
            let mut x = x0.clone();
            let opts = SolverOptions {
                optimize_delta,
                diagonal_precondition,
                ..quiet()
            };
            let got = solve_quadratic_problem(&h, &g, &opts, &mut x).unwrap();
            let (hm, gm) = (sp_model(&h), vec_model(&g));
            let want = solve(&hm, &gm);
            assert_vec_close_tol(&x, &want, tol_of::<R>(), "x = H^-1 g");
            // Kaldi's improvement is measured from x0 whatever optimize_delta says.
            let impr = quad_objective(&hm, &gm, &want) - quad_objective(&hm, &gm, &vec_model(&x0));
            assert!(
                (got.to_f64() - impr).abs() <= tol_of::<R>() * impr.abs().max(1.0),
                "improvement {got} vs {impr}"
            );
            assert!(got >= R::ZERO);
        }
    }
}

#[track_caller]
fn assert_vec_close_tol<R: Real>(
    got: &dense_matrix::VectorBase<R>,
    want: &[f64],
    tol: f64,
    what: &str,
) {
    let e = rel_err(&vec![vec_model(got)], &vec![want.to_vec()]);
    assert!(e <= tol, "{what} ({}): relative error {e:e}", R::NAME);
}

#[test]
fn solve_quadratic_problem_finds_the_closed_form_minimiser() {
    quadratic_cases::<f64>();
    quadratic_cases::<f32>();
}

/// Singular `H` (rank 2 of 5) and a `g` outside its range: the objective is unbounded,
/// the floored solver still takes a finite step that does not lower the objective.
#[test]
fn singular_quadratic_term_never_lowers_the_objective() {
    let mut r = rng(1302);
    let n = 5;
    for trial in 0..10 {
        let mut h = SpMatrix::<f64>::new(n);
        h.add_vec2(1.0, &random_vector::<f64>(&mut r, n));
        h.add_vec2(2.0, &random_vector::<f64>(&mut r, n));
        let g = random_vector::<f64>(&mut r, n);
        let x0 = random_vector::<f64>(&mut r, n);
        let mut x = x0.clone();
        let opts = SolverOptions {
            diagonal_precondition: trial % 2 == 1,
            ..quiet()
        };
        let got = solve_quadratic_problem(&h, &g, &opts, &mut x).unwrap();
        let (hm, gm) = (sp_model(&h), vec_model(&g));
        let before = quad_objective(&hm, &gm, &vec_model(&x0));
        let after = quad_objective(&hm, &gm, &vec_model(&x));
        assert!(got >= 0.0, "improvement {got}");
        assert!(after >= before - 1e-9 * before.abs().max(1.0));
        assert!((after - before - got).abs() <= 1e-8 * got.abs().max(1.0));
        assert!(x.data().iter().all(|v| v.is_finite()));
    }
}

#[test]
fn quadratic_problem_edge_cases_and_errors() {
    // zero H: unchanged, improvement 0
    let h = SpMatrix::<f64>::new(2);
    let g = Vector::from_vec(vec![1.0, 2.0]);
    let mut x = Vector::from_vec(vec![0.5, -0.5]);
    assert_eq!(solve_quadratic_problem(&h, &g, &quiet(), &mut x), Ok(0.0));
    assert_eq!(x.data(), &[0.5, -0.5]);
    // at the optimum already: no change in the objective
    let mut h = SpMatrix::<f64>::new(2);
    h.set_unit();
    let mut x = g.clone();
    assert_eq!(solve_quadratic_problem(&h, &g, &quiet(), &mut x), Ok(0.0));
    assert_eq!(x.data(), &[1.0, 2.0]);
    // indefinite H: Kaldi's assertion in SymPosSemiDefEig, as an error; x unchanged
    h[(1, 1)] = -1.0;
    let mut x = Vector::from_vec(vec![0.5, -0.5]);
    assert!(matches!(
        solve_quadratic_problem(&h, &g, &quiet(), &mut x),
        Err(Error::NegativeEigenvalue {
            op: "solve_quadratic_problem",
            ..
        })
    ));
    assert_eq!(x.data(), &[0.5, -0.5]);
    // options out of Kaldi's Check range
    h[(1, 1)] = 1.0;
    let bad_k = SolverOptions { k: 5.0, ..quiet() };
    assert_eq!(
        solve_quadratic_problem(&h, &g, &bad_k, &mut x)
            .unwrap_err()
            .to_string(),
        "SolverOptions: k = 5 must be greater than 10"
    );
    let bad_eps = SolverOptions {
        eps: 1e-5,
        ..quiet()
    };
    assert_eq!(
        bad_eps.check().unwrap_err(),
        Error::InvalidArgument {
            op: "SolverOptions",
            name: "eps",
            value: 1e-5,
            requirement: "below 1e-10",
        }
    );
    let g_nan = Vector::from_vec(vec![1.0, f64::NAN]);
    assert_eq!(
        solve_quadratic_problem(&h, &g_nan, &quiet(), &mut x)
            .unwrap_err()
            .to_string(),
        "solve_quadratic_problem: element 1 is NaN; the input must be finite"
    );
    // Kaldi's defaults
    let d = SolverOptions::default();
    assert_eq!(
        (
            d.name.as_str(),
            d.k,
            d.eps,
            d.optimize_delta,
            d.diagonal_precondition,
            d.print_debug_output
        ),
        ("[unknown]", 1e4, 1e-40, true, false, true)
    );
    // the empty problem
    let mut e = Vector::<f32>::new(0);
    assert_eq!(
        solve_quadratic_problem(&SpMatrix::new(0), &Vector::new(0), &quiet(), &mut e),
        Ok(0.0)
    );
}

#[test]
#[should_panic(expected = "solve_quadratic_problem (x, H): vector dim 3 does not match dim 2")]
fn quadratic_problem_checks_dimensions() {
    let mut x = Vector::<f64>::new(3);
    let _ = solve_quadratic_problem(&SpMatrix::new(2), &Vector::new(2), &quiet(), &mut x);
}

/// `tr(M^T P Y) - tr(P M Q M^T) / 2` by loops.
fn matrix_objective(q: &Model, y: &Model, p: &Model, m: &Model) -> f64 {
    let py = matmul(p, y);
    let mqmt = matmul(m, &matmul(q, &transpose(m)));
    let mut f = 0.0;
    for i in 0..m.len() {
        for j in 0..m[0].len() {
            f += m[i][j] * py[i][j];
        }
    }
    let pm = matmul(p, &mqmt);
    f - 0.5 * (0..pm.len()).map(|i| pm[i][i]).sum::<f64>()
}

fn matrix_cases<R: Real>() {
    let mut r = rng(1303);
    for (rows, cols) in [(1, 1), (3, 4), (5, 2)] {
        for diagonal_precondition in [false, true] {
            let q = well_conditioned::<R>(&mut r, cols);
            let p = well_conditioned::<R>(&mut r, rows);
            let y = random_matrix::<R>(&mut r, rows, cols);
            let m0 = random_matrix::<R>(&mut r, rows, cols);
            let mut m = m0.clone();
            let opts = SolverOptions {
                diagonal_precondition,
                ..quiet()
            };
            let got = solve_quadratic_matrix_problem(&q, &y, &p, &opts, &mut m).unwrap();
            let (qm, ym, pm) = (sp_model(&q), model_of(&y), sp_model(&p));
            // M = Y Q^-1, row by row: Q m_r = y_r (Q symmetric)
            let want: Model = ym.iter().map(|row| solve(&qm, row)).collect();
            let e = rel_err(&model_of(&m), &want);
            assert!(e <= tol_of::<R>(), "M = Y Q^-1 ({}): {e:e}", R::NAME);
            let impr = matrix_objective(&qm, &ym, &pm, &want)
                - matrix_objective(&qm, &ym, &pm, &model_of(&m0));
            assert!(
                (got.to_f64() - impr).abs() <= tol_of::<R>() * impr.abs().max(1.0),
                "improvement {got} vs {impr}"
            );
        }
    }
}

#[test]
fn solve_quadratic_matrix_problem_finds_y_q_inverse() {
    matrix_cases::<f64>();
    matrix_cases::<f32>();
}

#[test]
fn singular_matrix_problem_never_lowers_the_objective() {
    let mut r = rng(1304);
    let (rows, cols) = (3, 4);
    let mut q = SpMatrix::<f64>::new(cols);
    q.add_vec2(1.0, &random_vector::<f64>(&mut r, cols));
    let p = well_conditioned::<f64>(&mut r, rows);
    let y = random_matrix::<f64>(&mut r, rows, cols);
    let m0 = random_matrix::<f64>(&mut r, rows, cols);
    let mut m = m0.clone();
    let got = solve_quadratic_matrix_problem(&q, &y, &p, &quiet(), &mut m).unwrap();
    let (qm, ym, pm) = (sp_model(&q), model_of(&y), sp_model(&p));
    let before = matrix_objective(&qm, &ym, &pm, &model_of(&m0));
    let after = matrix_objective(&qm, &ym, &pm, &model_of(&m));
    assert!(got >= 0.0 && after >= before - 1e-9 * before.abs().max(1.0));
    assert!((after - before - got).abs() <= 1e-8 * got.abs().max(1.0));
}

#[test]
#[should_panic(
    expected = "solve_quadratic_matrix_problem: order of Q 3 does not match columns of M 4"
)]
fn matrix_problem_checks_dimensions() {
    let mut m = Matrix::<f64>::new(2, 4);
    let _ = solve_quadratic_matrix_problem(
        &SpMatrix::new(3),
        &Matrix::new(2, 4),
        &SpMatrix::new(2),
        &quiet(),
        &mut m,
    );
}

/// `tr(M^T G) - tr(P1 M Q1 M^T) / 2 - tr(P2 M Q2 M^T) / 2` by loops.
fn double_objective(g: &Model, p1: &Model, p2: &Model, q1: &Model, q2: &Model, m: &Model) -> f64 {
    let mut f = 0.0;
    for i in 0..m.len() {
        for j in 0..m[0].len() {
            f += m[i][j] * g[i][j];
        }
    }
    for (p, q) in [(p1, q1), (p2, q2)] {
        let t = matmul(p, &matmul(m, &matmul(q, &transpose(m))));
        f -= 0.5 * (0..t.len()).map(|i| t[i][i]).sum::<f64>();
    }
    f
}

/// The stationary point: `P1 M Q1 + P2 M Q2 = G`, i.e. `(P1 (x) Q1 + P2 (x) Q2) vec(M) =
/// vec(G)` with row-major `vec`.
fn double_closed_form(g: &Model, p1: &Model, p2: &Model, q1: &Model, q2: &Model) -> Model {
    let (rows, cols) = (g.len(), g[0].len());
    let n = rows * cols;
    let mut a = vec![vec![0.0; n]; n];
    for i in 0..rows {
        for j in 0..cols {
            for k in 0..rows {
                for l in 0..cols {
                    a[i * cols + j][k * cols + l] = p1[i][k] * q1[l][j] + p2[i][k] * q2[l][j];
                }
            }
        }
    }
    let b: Vec<f64> = g.iter().flatten().copied().collect();
    let z = solve(&a, &b);
    z.chunks(cols).map(|c| c.to_vec()).collect()
}

fn double_cases<R: Real>() {
    let mut r = rng(1305);
    for (rows, cols) in [(1, 1), (2, 3), (4, 2)] {
        let g = random_matrix::<R>(&mut r, rows, cols);
        let p1 = well_conditioned::<R>(&mut r, rows);
        let p2 = well_conditioned::<R>(&mut r, rows);
        let q1 = well_conditioned::<R>(&mut r, cols);
        let q2 = well_conditioned::<R>(&mut r, cols);
        let m0 = random_matrix::<R>(&mut r, rows, cols);
        let mut m = m0.clone();
        let got = solve_double_quadratic_matrix_problem(&g, &p1, &p2, &q1, &q2, &quiet(), &mut m)
            .unwrap();
        let (gm, p1m, p2m, q1m, q2m) = (
            model_of(&g),
            sp_model(&p1),
            sp_model(&p2),
            sp_model(&q1),
            sp_model(&q2),
        );
        let want = double_closed_form(&gm, &p1m, &p2m, &q1m, &q2m);
        let e = rel_err(&model_of(&m), &want);
        assert!(e <= tol_of::<R>(), "double problem M ({}): {e:e}", R::NAME);
        let impr = double_objective(&gm, &p1m, &p2m, &q1m, &q2m, &want)
            - double_objective(&gm, &p1m, &p2m, &q1m, &q2m, &model_of(&m0));
        assert!(
            (got.to_f64() - impr).abs() <= tol_of::<R>() * impr.abs().max(1.0),
            "improvement {got} vs {impr}"
        );
    }
}

#[test]
fn solve_double_quadratic_matrix_problem_finds_the_stationary_point() {
    double_cases::<f64>();
    double_cases::<f32>();
}

/// `Q1 = Q2 = diag(1, 0)`: every `Q1 + d Q2` is exactly singular, so each row goes
/// through the stable fallback; the objective still never goes down, and the first
/// column (the determined one) reaches its optimum.
#[test]
fn double_problem_with_singular_rows_falls_back_and_never_lowers_the_objective() {
    let mut r = rng(1306);
    let (rows, cols) = (3, 2);
    let mut q = SpMatrix::<f64>::new(cols);
    q[(0, 0)] = 1.0;
    let g = random_matrix::<f64>(&mut r, rows, cols);
    let p1 = well_conditioned::<f64>(&mut r, rows);
    let p2 = well_conditioned::<f64>(&mut r, rows);
    let m0 = random_matrix::<f64>(&mut r, rows, cols);
    let mut m = m0.clone();
    let got =
        solve_double_quadratic_matrix_problem(&g, &p1, &p2, &q, &q, &quiet(), &mut m).unwrap();
    let (gm, p1m, p2m, qm) = (model_of(&g), sp_model(&p1), sp_model(&p2), sp_model(&q));
    let before = double_objective(&gm, &p1m, &p2m, &qm, &qm, &model_of(&m0));
    let after = double_objective(&gm, &p1m, &p2m, &qm, &qm, &model_of(&m));
    assert!(got >= 0.0, "improvement {got}");
    assert!(
        after >= before - 1e-9 * before.abs().max(1.0),
        "{before} -> {after}"
    );
    assert!((after - before - got).abs() <= 1e-8 * got.abs().max(1.0));
    // the first column solves (P1 + P2) m_0 = g_0
    let psum: Model = (0..rows)
        .map(|i| (0..rows).map(|j| p1m[i][j] + p2m[i][j]).collect())
        .collect();
    let g0: Vec<f64> = gm.iter().map(|row| row[0]).collect();
    let want0 = solve(&psum, &g0);
    for i in 0..rows {
        assert!((m[(i, 0)] - want0[i]).abs() < 1e-9, "row {i}");
    }
}

#[test]
fn double_problem_needs_a_positive_definite_p1() {
    let g = Matrix::<f64>::new(2, 2);
    let mut p1 = SpMatrix::<f64>::new(2);
    p1[(0, 0)] = 1.0;
    let mut unit = SpMatrix::<f64>::new(2);
    unit.set_unit();
    let mut m = Matrix::<f64>::new(2, 2);
    m.set(3.0);
    let err = solve_double_quadratic_matrix_problem(&g, &p1, &unit, &unit, &unit, &quiet(), &mut m)
        .unwrap_err();
    assert!(matches!(
        err,
        Error::Lapack {
            routine: "dpptrf",
            info: 2,
            ..
        }
    ));
    assert!(m.data_rows_all(3.0));
}

trait AllEqual {
    fn data_rows_all(&self, v: f64) -> bool;
}

impl AllEqual for Matrix<f64> {
    fn data_rows_all(&self, v: f64) -> bool {
        (0..self.num_rows()).all(|r| self.row(r).data().iter().all(|&x| x == v))
    }
}

/// Kaldi's `UnitTestSolve`, block by block: rank-deficient `H = M M^T` with `g` in its
/// range (two option sets agree within 1%, each improvement equals the observed change),
/// the matrix problem against `Y Q^-1` when `Q` is well conditioned, and the double
/// problem never lowering the objective (with Kaldi's `P2 = 0`: its test initialises `P1`
/// twice).
#[test]
fn kaldis_unit_test_solve() {
    use dense_matrix::{trace_mat_mat, trace_mat_sp_mat, trace_mat_sp_mat_sp, vec_sp_vec, vec_vec};
    let mut r = rng(1307);
    let objective = |h: &SpMatrix<f64>, g: &Vector<f64>, x: &Vector<f64>| {
        vec_vec(x, g) - 0.5 * vec_sp_vec(x, h, x)
    };
    for i in 0..5 {
        let dim_m = 10 + (i * 3) % 10;
        let dim_n = dim_m - i % 3;
        let mut m = Matrix::<f64>::new(dim_m, dim_n);
        m.set_randn(&mut r);
        let mut h = SpMatrix::new(dim_m);
        h.add_mat2(1.0, &m, Trans::NoTrans, 0.0);
        let mut x = Vector::new(dim_m);
        x.set_randn(&mut r);
        let mut tmp = Vector::new(dim_m);
        tmp.set_randn(&mut r);
        let mut g = Vector::new(dim_m);
        g.add_sp_vec(1.0, &h, &tmp, 0.0);
        let opts2 = SolverOptions {
            diagonal_precondition: i % 2 == 0,
            optimize_delta: i % 3 != 0,
            ..quiet()
        };
        let opts3 = SolverOptions {
            diagonal_precondition: i % 2 == 1,
            optimize_delta: i % 3 == 0,
            ..quiet()
        };
        let (mut x2, mut x3) = (x.clone(), x.clone());
        let ans2 = solve_quadratic_problem(&h, &g, &opts2, &mut x2).unwrap();
        let ans3 = solve_quadratic_problem(&h, &g, &opts3, &mut x3).unwrap();
        let before = objective(&h, &g, &x);
        for (ans, xn) in [(ans2, &x2), (ans3, &x3)] {
            let observed = objective(&h, &g, xn) - before;
            assert!(
                (observed - ans).abs() <= 0.01 * ans.abs().max(1e-12),
                "{observed} vs {ans}"
            );
            assert!(ans >= 0.0);
        }
        assert!(
            (ans2 - ans3).abs() / ans2.max(ans3) < 0.01,
            "{ans2} vs {ans3}"
        );
    }
    for i in 0..5 {
        let dim_m = 10 + (i * 7) % 10;
        let dim_n = dim_m - i % 3;
        let dim_o = 10 + (i * 3) % 10;
        let mut mtmp = Matrix::<f64>::new(dim_m, dim_n);
        mtmp.set_randn(&mut r);
        let mut q = SpMatrix::new(dim_m);
        q.add_mat2(1.0, &mtmp, Trans::NoTrans, 0.0);
        let mut ntmp = Matrix::<f64>::new(dim_o, dim_n);
        ntmp.set_randn(&mut r);
        let mut sigma_inv = SpMatrix::new(dim_o);
        sigma_inv.add_mat2(1.0, &ntmp, Trans::NoTrans, 0.0);
        let mut m = Matrix::<f64>::new(dim_o, dim_m);
        m.set_randn(&mut r);
        let mut y = Matrix::<f64>::new(dim_o, dim_m);
        y.set_randn(&mut r);
        let opts = SolverOptions {
            optimize_delta: i % 2 == 0,
            diagonal_precondition: i % 3 == 0,
            ..quiet()
        };
        let mut m2 = m.clone();
        let ans = solve_quadratic_matrix_problem(&q, &y, &sigma_inv, &opts, &mut m2).unwrap();
        if q.to_matrix().cond().unwrap() < 1000.0 {
            let mut q_inv = q.clone();
            q_inv.invert().unwrap();
            let mut m3 = Matrix::new(dim_o, dim_m);
            m3.add_mat_sp(1.0, &y, Trans::NoTrans, &q_inv, 0.0);
            assert!(m2.approx_equal(&m3, 0.01));
        }
        let objf = |mm: &Matrix<f64>| {
            trace_mat_sp_mat(mm, Trans::Trans, &sigma_inv, &y, Trans::NoTrans)
                - 0.5 * trace_mat_sp_mat_sp(mm, Trans::NoTrans, &q, mm, Trans::Trans, &sigma_inv)
        };
        let (a3, b3) = (objf(&m2), objf(&m));
        assert!(a3 >= b3);
        assert!(
            (a3 - b3 - ans).abs() <= 0.01 * ans.abs().max(1e-12),
            "{} vs {ans}",
            a3 - b3
        );
    }
    for i in 0..5 {
        let dim_m = 10 + (i * 7) % 10;
        let dim_o = 10 + (i * 3) % 10;
        let posdef = |r: &mut rand::rngs::StdRng, n: usize| {
            let mut a = Matrix::<f64>::new(n, n);
            a.set_randn(r);
            let mut s = SpMatrix::new(n);
            s.add_mat2(1.0, &a, Trans::NoTrans, 0.0);
            s.add_to_diag(0.1);
            s
        };
        let (q1, q2, p1) = (
            posdef(&mut r, dim_m),
            posdef(&mut r, dim_m),
            posdef(&mut r, dim_o),
        );
        let p2 = SpMatrix::<f64>::new(dim_o);
        let mut m = Matrix::<f64>::new(dim_o, dim_m);
        m.set_randn(&mut r);
        let mut g = Matrix::<f64>::new(dim_o, dim_m);
        g.set_randn(&mut r);
        let opts = SolverOptions {
            optimize_delta: i % 2 == 0,
            ..quiet()
        };
        let mut m2 = m.clone();
        let ans =
            solve_double_quadratic_matrix_problem(&g, &p1, &p2, &q1, &q2, &opts, &mut m2).unwrap();
        let objf = |mm: &Matrix<f64>| {
            trace_mat_mat(mm, &g, Trans::Trans)
                - 0.5 * trace_mat_sp_mat_sp(mm, Trans::NoTrans, &q1, mm, Trans::Trans, &p1)
                - 0.5 * trace_mat_sp_mat_sp(mm, Trans::NoTrans, &q2, mm, Trans::Trans, &p2)
        };
        let (a4, b4) = (objf(&m2), objf(&m));
        assert!(a4 >= b4, "{a4} < {b4}");
        assert!(
            (a4 - b4 - ans).abs() <= 1e-6 * ans.abs().max(1.0),
            "{} vs {ans}",
            a4 - b4
        );
    }
}
