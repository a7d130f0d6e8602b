//! Kaldi's packed eigen-solvers: `tridiagonalize` and `qr` checked by reconstruction in
//! an `f64` loop model and against LAPACK's `syevd` (`sym_eig`, an independent route),
//! Kaldi's `UnitTestTridiagonalize` / `UnitTestTridiagonalizeAndQr` / `UnitTestTopEigs`
//! identities, and the eigenvalue-based methods (`limit_cond`, `apply_floor`).

#![allow(clippy::needless_range_loop)]

use crate::common;

use common::*;
use dense_matrix::{Error, Matrix, Position, Real, SpCopyType, SpMatrix, Trans, Vector};
use rand::Rng;

/// `||got - want||_F / ||want||_F` (plain difference when `want` is zero).
fn rel(got: &Model, want: &Model) -> f64 {
    let mut diff = 0.0;
    for (g, w) in got.iter().zip(want) {
        for (x, y) in g.iter().zip(w) {
            diff += (x - y).powi(2);
        }
    }
    let norm = frob(want);
    if norm == 0.0 {
        diff.sqrt()
    } else {
        diff.sqrt() / norm
    }
}

fn sp_model<R: Real>(s: &SpMatrix<R>) -> Model {
    let n = s.num_rows();
    (0..n)
        .map(|i| (0..n).map(|j| s[(i, j)].to_f64()).collect())
        .collect()
}

fn identity(n: usize) -> Model {
    (0..n)
        .map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect()
}

/// Largest `|(Q Q^T - I)_ij|` (Kaldi's `NonOrthogonality`).
fn non_orthogonality(q: &Model) -> f64 {
    let qqt = matmul(q, &transpose(q));
    let id = identity(q.len());
    qqt.iter()
        .flatten()
        .zip(id.iter().flatten())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

/// A random symmetric matrix with elements uniform in [-1, 1).
fn random_sp<R: Real>(r: &mut rand::rngs::StdRng, n: usize) -> SpMatrix<R> {
    SpMatrix::from_mat(&random_matrix::<R>(r, n, n), SpCopyType::TakeLower)
}

/// A random symmetric positive definite matrix `M M^T + I`.
fn random_spd<R: Real>(r: &mut rand::rngs::StdRng, n: usize) -> SpMatrix<R> {
    let m = random_matrix::<R>(r, n, n);
    let mut s = SpMatrix::new(n);
    s.add_mat2(R::ONE, &m, Trans::NoTrans, R::ZERO);
    s.add_to_diag(R::ONE);
    s
}

/// The tolerance of a reconstruction of an `n x n` matrix in precision `R`.
fn tol_n<R: Real>(n: usize) -> f64 {
    let eps = if R::NAME == "f32" { 1.2e-7 } else { 2.3e-16 };
    eps * 50.0 * (n.max(1) as f64)
}

/// Tridiagonalises `a` and checks Kaldi's identities: `T` tridiagonal (exactly zero
/// outside the band), `Q` orthogonal, `Q^T T Q = A`, `Q A Q^T = T`, trace kept.
#[track_caller]
fn check_tridiagonalize<R: Real>(a: &SpMatrix<R>, what: &str) -> (SpMatrix<R>, Matrix<R>) {
    let n = a.num_rows();
    let mut t = a.clone();
    let mut q = Matrix::<R>::new(n, n);
    q.set(R::NAN);
    t.tridiagonalize(Some(&mut q)).unwrap();
    for i in 0..n {
        for j in 0..i.saturating_sub(1) {
            assert_eq!(t[(i, j)], R::ZERO, "{what}: T({i}, {j}) is off the band");
        }
    }
    let (am, tm, qm) = (sp_model(a), sp_model(&t), model_of(&q));
    let tol = tol_n::<R>(n);
    assert!(non_orthogonality(&qm) <= tol, "{what}: Q is not orthogonal");
    let back = matmul(&transpose(&qm), &matmul(&tm, &qm));
    assert!(
        rel(&back, &am) <= tol,
        "{what}: Q^T T Q != A: {:e}",
        rel(&back, &am)
    );
    let fwd = matmul(&qm, &matmul(&am, &transpose(&qm)));
    assert!(rel(&fwd, &tm) <= tol, "{what}: Q A Q^T != T");
    let (ta, tt) = (a.trace().to_f64(), t.trace().to_f64());
    assert!(
        (ta - tt).abs() <= tol * frob(&am).max(f64::MIN_POSITIVE),
        "{what}: trace"
    );
    (t, q)
}

/// `tridiagonalize` then `qr` with the same `Q`: `D` diagonal, `Q` orthogonal,
/// `Q^T D Q = A`, and the diagonal sorted equals LAPACK's eigenvalues.
#[track_caller]
fn check_eig<R: Real>(a: &SpMatrix<R>, what: &str) {
    let n = a.num_rows();
    let (mut d, mut q) = check_tridiagonalize(a, what);
    d.qr(Some(&mut q)).unwrap();
    assert!(d.is_diagonal_exact(), "{what}: D is not diagonal");
    let (am, dm, qm) = (sp_model(a), sp_model(&d), model_of(&q));
    let tol = tol_n::<R>(n);
    assert!(
        non_orthogonality(&qm) <= tol,
        "{what}: Q after qr is not orthogonal"
    );
    let back = matmul(&transpose(&qm), &matmul(&dm, &qm));
    assert!(
        rel(&back, &am) <= tol,
        "{what}: Q^T D Q != A: {:e}",
        rel(&back, &am)
    );
    let mut ours: Vec<f64> = (0..n).map(|i| d[(i, i)].to_f64()).collect();
    ours.sort_by(f64::total_cmp);
    let lapack = a.to_matrix().sym_eig().unwrap().s;
    let scale = frob(&am).max(f64::MIN_POSITIVE);
    for i in 0..n {
        assert!(
            (ours[i] - lapack[i].to_f64()).abs() <= tol * scale,
            "{what}: eigenvalue {i}: {} vs LAPACK {}",
            ours[i],
            lapack[i]
        );
    }
}

trait ExactDiag {
    fn is_diagonal_exact(&self) -> bool;
}

impl<R: Real> ExactDiag for SpMatrix<R> {
    fn is_diagonal_exact(&self) -> bool {
        (0..self.num_rows()).all(|i| (0..i).all(|j| self[(i, j)] == R::ZERO))
    }
}

fn tridiagonalize_and_qr<R: Real>() {
    let mut r = rng(1201);
    for n in [0, 1, 2, 3, 4, 5, 8, 13, 16, 41, 53] {
        check_eig(&random_sp::<R>(&mut r, n), &format!("indefinite n = {n}"));
        check_eig(&random_spd::<R>(&mut r, n), &format!("SPD n = {n}"));
    }
    // Kaldi's UnitTestTridiagonalize: a 16 x 16 matrix of 27s (rank one), and of
    // -1.61558713e-27; random matrices scaled by 1e-15 and 1e15.
    for value in [27.0, -1.61558713e-27] {
        let mut m = Matrix::<R>::new(16, 16);
        m.set(R::from_f64(value));
        check_eig(
            &SpMatrix::from_mat(&m, SpCopyType::TakeMean),
            &format!("constant {value}"),
        );
    }
    for scale in [1e-15, 1e15] {
        let mut s = random_sp::<R>(&mut r, 40);
        s.scale(R::from_f64(scale));
        check_eig(&s, &format!("scaled by {scale}"));
    }
}

#[test]
fn tridiagonalize_and_qr_reconstruct_and_match_lapack() {
    tridiagonalize_and_qr::<f64>();
    tridiagonalize_and_qr::<f32>();
}

/// An input already tridiagonal with negative off-diagonal elements: the Householder
/// step is the identity there, and the element must keep its sign (Kaldi writes its
/// absolute value without changing Q, which breaks `A = Q^T T Q`).
#[test]
fn tridiagonal_input_with_negative_off_diagonal_is_kept() {
    let mut a = SpMatrix::<f64>::new(4);
    for i in 0..4 {
        a[(i, i)] = 1.0 + i as f64;
        if i > 0 {
            a[(i, i - 1)] = -0.5 * i as f64;
        }
    }
    let (t, q) = check_tridiagonalize(&a, "negative off-diagonal");
    assert!(t == a, "T = A when A is already tridiagonal");
    assert!(q.is_unit(0.0));
    check_eig(&a, "negative off-diagonal");
}

/// Hand-worked: [[2, 1], [1, 2]] has eigenvalues 1 and 3 with eigenvectors
/// (1, -1) / sqrt 2 and (1, 1) / sqrt 2 as rows of Q.
#[test]
fn qr_of_a_known_two_by_two() {
    let mut a = SpMatrix::<f64>::from_packed(2, vec![2.0, 1.0, 2.0]).unwrap();
    let mut q = Matrix::<f64>::new(2, 2);
    q.set_unit();
    a.qr(Some(&mut q)).unwrap();
    let mut eigs = [a[(0, 0)], a[(1, 1)]];
    eigs.sort_by(f64::total_cmp);
    assert!((eigs[0] - 1.0).abs() < 1e-14 && (eigs[1] - 3.0).abs() < 1e-14);
    assert_eq!(a[(1, 0)], 0.0);
    for i in 0..2 {
        let (x, y) = (q[(i, 0)], q[(i, 1)]);
        let lambda = a[(i, i)];
        // Row i of Q is the eigenvector of D(i, i).
        assert!((2.0 * x + y - lambda * x).abs() < 1e-14);
        assert!((x + 2.0 * y - lambda * y).abs() < 1e-14);
    }
}

#[test]
fn qr_without_q_gives_the_same_eigenvalues() {
    let mut r = rng(1202);
    let a = random_sp::<f64>(&mut r, 20);
    let mut t = a.clone();
    t.tridiagonalize(None).unwrap();
    let mut with_q = t.clone();
    let mut q = Matrix::new(20, 20);
    q.set_unit();
    with_q.qr(Some(&mut q)).unwrap();
    t.qr(None).unwrap();
    assert!(t == with_q, "the rotations do not depend on Q");
}

#[test]
fn qr_rejects_a_matrix_that_is_not_tridiagonal() {
    let mut a = SpMatrix::<f64>::from_packed(3, vec![1.0, 0.5, 2.0, 0.25, 0.5, 3.0]).unwrap();
    assert!(!a.is_tridiagonal(1e-5));
    assert_eq!(
        a.qr(None).unwrap_err(),
        Error::NotTridiagonal {
            op: "SpMatrix::qr",
            position: Position::Matrix(2, 0),
            value: 0.25,
            band_max: 3.0,
        }
    );
    // Kaldi's tolerance: below 1e-5 of the band's largest passes, and is dropped.
    a[(2, 0)] = 3e-6 * 0.9;
    assert!(a.is_tridiagonal(1e-5));
    a.qr(None).unwrap();
    assert_eq!(a[(2, 0)], 0.0);
}

#[test]
fn is_tridiagonal_follows_kaldis_unit_test() {
    // Kaldi's UnitTestTridiag.
    let mut a = SpMatrix::<f64>::new(3);
    a[(1, 1)] = 1.0;
    a[(1, 2)] = 1.0;
    assert!(a.is_tridiagonal(1e-5));
    a[(0, 2)] = 1.0;
    assert!(!a.is_tridiagonal(1e-5));
    a[(0, 2)] = 0.0;
    a[(0, 1)] = 1.0;
    assert!(a.is_tridiagonal(1e-5));
}

#[test]
fn non_finite_input_is_an_error_and_changes_nothing() {
    let mut a = SpMatrix::<f64>::from_packed(3, vec![1.0, 0.5, 2.0, 0.25, f64::NAN, 3.0]).unwrap();
    let before = a.clone();
    let mut q = Matrix::<f64>::new(3, 3);
    let err = a.tridiagonalize(Some(&mut q)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "SpMatrix::tridiagonalize: element (2, 1) is NaN; the input must be finite"
    );
    assert!(q.is_zero(0.0), "Q untouched");
    let err = a.qr(None).unwrap_err();
    assert!(matches!(
        err,
        Error::NotFinite {
            op: "SpMatrix::qr",
            position: Position::Matrix(2, 1),
            ..
        }
    ));
    assert_eq!(a.data().len(), before.data().len());
    assert!(a.data()[4].is_nan() && a.data()[..4] == before.data()[..4]);
}

#[test]
#[should_panic(expected = "tridiagonalize (Q, A): shape 3 x 2 does not match shape 3 x 3")]
fn tridiagonalize_checks_the_shape_of_q() {
    let mut a = SpMatrix::<f64>::new(3);
    let mut q = Matrix::<f64>::new(3, 2);
    let _ = a.tridiagonalize(Some(&mut q));
}

#[test]
#[should_panic(expected = "qr (Q, A): shape 2 x 2 does not match shape 3 x 3")]
fn qr_checks_the_shape_of_q() {
    let mut a = SpMatrix::<f64>::new(3);
    let mut q = Matrix::<f64>::new(2, 2);
    let _ = a.qr(Some(&mut q));
}

/// Kaldi's UnitTestTopEigs (smaller): columns of P orthonormal, `diag(P^T S P) = s`, and
/// the eigenvalues close to the largest-magnitude ones from LAPACK.
fn top_eigs_case<R: Real>(n: usize, k: usize, lanczos_dim: Option<usize>, seed: u64) {
    let mut r = rng(seed);
    let mut a = SpMatrix::<R>::new(n);
    for x in a.data_mut() {
        *x = R::from_f64(r.random::<f64>() * 2.0 - 1.0);
    }
    let mut s = Vector::<R>::new(k);
    let mut p = Matrix::<R>::new(n, k);
    a.top_eigs(&mut s, &mut p, lanczos_dim).unwrap();
    let (am, pm) = (sp_model(&a), model_of(&p));
    let ptp = matmul(&transpose(&pm), &pm);
    let tol = if R::NAME == "f32" { 1e-4 } else { 1e-10 };
    assert!(rel(&ptp, &identity(k)) <= tol, "P^T P = I");
    let psp = matmul(&transpose(&pm), &matmul(&am, &pm));
    for i in 0..k {
        let scale = s[0].to_f64().abs();
        assert!(
            (psp[i][i] - s[i].to_f64()).abs() <= tol * scale,
            "diag(P^T S P)[{i}] = {} vs s = {}",
            psp[i][i],
            s[i]
        );
        if i > 0 {
            assert!(s[i - 1].abs() >= s[i].abs(), "sorted by |s|");
        }
    }
    // Against the full LAPACK spectrum by magnitude: the Lanczos values of a random
    // matrix are close to the extreme eigenvalues (Kaldi only logs this comparison).
    let mut full: Vec<f64> = vec_model(&a.to_matrix().sym_eig().unwrap().s);
    full.sort_by(|x, y| y.abs().total_cmp(&x.abs()));
    let real_sum: f64 = full[..k].iter().map(|x| x.abs()).sum();
    let approx_sum: f64 = s.data().iter().map(|x| x.to_f64().abs()).sum();
    assert!(
        approx_sum <= real_sum * (1.0 + tol),
        "Ritz values are within the spectrum"
    );
    assert!(
        approx_sum >= 0.9 * real_sum,
        "sum |s| = {approx_sum}, LAPACK {real_sum}"
    );
}

#[test]
fn top_eigs_follows_kaldis_identities() {
    top_eigs_case::<f64>(200, 10, None, 1203);
    top_eigs_case::<f32>(200, 10, None, 1204);
    top_eigs_case::<f64>(150, 40, Some(100), 1205);
    // lanczos_dim reaching n goes through the full decomposition
    top_eigs_case::<f64>(30, 5, None, 1206);
}

/// The top eigenvalues of a matrix with a known, well separated spectrum are found to
/// full precision: S = U diag(e) U^T with U orthogonal from a QR of random data.
#[test]
fn top_eigs_of_a_known_spectrum() {
    let mut r = rng(1207);
    let n = 120;
    let mut spectrum: Vec<f64> = (0..n).map(|i| 0.01 * i as f64 / n as f64).collect();
    spectrum[7] = 10.0;
    spectrum[50] = -8.0;
    spectrum[90] = 6.0;
    let mut u = random_matrix::<f64>(&mut r, n, n);
    u.orthogonalize_rows(&mut r);
    let mut s = SpMatrix::<f64>::new(n);
    s.add_mat2_vec(1.0, &u, Trans::Trans, &Vector::from_vec(spectrum), 0.0);
    let mut vals = Vector::new(3);
    let mut p = Matrix::new(n, 3);
    s.top_eigs(&mut vals, &mut p, Some(40)).unwrap();
    assert_vec_close(&vals, &[10.0, -8.0, 6.0], "top 3 eigenvalues");
    // The eigenvectors are rows 7, 50, 90 of U, up to sign.
    for (col, row) in [7, 50, 90].into_iter().enumerate() {
        let dot: f64 = (0..n).map(|i| p[(i, col)] * u[(row, i)]).sum();
        assert!(
            (dot.abs() - 1.0).abs() < 1e-9,
            "eigenvector {col}: |dot| = {dot}"
        );
    }
}

#[test]
fn top_eigs_is_deterministic_and_survives_a_small_krylov_space() {
    // Rank 2: the Krylov space is exhausted after two steps and the iteration restarts.
    let n = 60;
    let mut s = SpMatrix::<f64>::new(n);
    let a = Vector::from_vec((0..n).map(|i| (i as f64).sin()).collect());
    let b = Vector::from_vec((0..n).map(|i| (i as f64 * 0.3).cos()).collect());
    s.add_vec2(3.0, &a);
    s.add_vec2(-1.0, &b);
    let mut vals = Vector::new(4);
    let mut p = Matrix::new(n, 4);
    s.top_eigs(&mut vals, &mut p, Some(10)).unwrap();
    let full = s.to_matrix().sym_eig().unwrap().s;
    let (lo, hi) = (full[0], full[n - 1]);
    assert!((vals[0] - hi).abs() < 1e-10 * hi, "{} vs {hi}", vals[0]);
    assert!((vals[1] - lo).abs() < 1e-10 * hi, "{} vs {lo}", vals[1]);
    assert!(vals[2].abs() < 1e-10 * hi && vals[3].abs() < 1e-10 * hi);
    let mut again = Vector::new(4);
    let mut p2 = Matrix::new(n, 4);
    s.top_eigs(&mut again, &mut p2, Some(10)).unwrap();
    assert!(again == vals && p2 == p, "same seed, same result");
}

#[test]
fn top_eigs_argument_errors() {
    let s = SpMatrix::<f64>::new(10);
    let mut vals = Vector::new(3);
    let mut p = Matrix::new(10, 3);
    assert_eq!(
        s.top_eigs(&mut vals, &mut p, Some(2))
            .unwrap_err()
            .to_string(),
        "SpMatrix::top_eigs: lanczos_dim = 2 must be at least the number of eigenvalues asked for"
    );
    let mut bad = s.clone();
    bad[(3, 1)] = f64::INFINITY;
    assert!(matches!(
        bad.top_eigs(&mut vals, &mut p, None).unwrap_err(),
        Error::NotFinite {
            position: Position::Matrix(3, 1),
            ..
        }
    ));
    // the zero matrix: zero eigenvalues, orthonormal vectors
    s.top_eigs(&mut vals, &mut p, None).unwrap();
    assert!(vals.is_zero(0.0));
}

#[test]
#[should_panic(expected = "top_eigs (P, n x s.dim()): shape 10 x 2 does not match shape 10 x 3")]
fn top_eigs_checks_the_shape_of_p() {
    let s = SpMatrix::<f64>::new(10);
    let mut vals = Vector::new(3);
    let mut p = Matrix::new(10, 2);
    let _ = s.top_eigs(&mut vals, &mut p, None);
}

/// `U^T diag(e) U` in the `f64` model, and the same as a packed matrix.
fn with_spectrum<R: Real>(u: &Model, e: &[f64]) -> (Model, SpMatrix<R>) {
    let n = e.len();
    let mut m = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            m[i][j] = (0..n).map(|k| u[k][i] * e[k] * u[k][j]).sum();
        }
    }
    let mut s = SpMatrix::<R>::new(n);
    for i in 0..n {
        for j in 0..=i {
            s[(i, j)] = R::from_f64(m[i][j]);
        }
    }
    (m, s)
}

fn random_orthogonal(r: &mut rand::rngs::StdRng, n: usize) -> Model {
    let mut u = random_matrix::<f64>(r, n, n);
    u.orthogonalize_rows(r);
    model_of(&u)
}

#[track_caller]
fn assert_sp_close<R: Real>(got: &SpMatrix<R>, want: &Model, what: &str) {
    let e = rel(&sp_model(got), want);
    let tol = if R::NAME == "f32" { 1e-5 } else { 1e-12 };
    assert!(e <= tol, "{what} ({}): relative error {e:e}", R::NAME);
}

fn limit_cond_cases<R: Real>() {
    let mut r = rng(1210);
    let u = random_orthogonal(&mut r, 5);
    // max 100, cond 1000: floor 0.1 catches 1e-3 and 0 (and the tiny negative -0.05,
    // allowed by Kaldi's 0.001 tolerance).
    let (_, mut s) = with_spectrum::<R>(&u, &[100.0, 1.0, 1e-3, 0.0, -0.05]);
    let before = s.clone();
    assert_eq!(s.limit_cond(R::from_f64(1000.0), false), Ok(3));
    let (want, _) = with_spectrum::<R>(&u, &[100.0, 1.0, 0.1, 0.1, 0.1]);
    assert_sp_close(&s, &want, "limit_cond");
    let mut inv = before.clone();
    assert_eq!(inv.limit_cond(R::from_f64(1000.0), true), Ok(3));
    let (want, _) = with_spectrum::<R>(&u, &[0.01, 1.0, 10.0, 10.0, 10.0]);
    assert_sp_close(&inv, &want, "limit_cond inverted");
    let mut wide = before.clone();
    assert_eq!(wide.limit_cond_double(R::from_f64(1000.0), false), Ok(3));
    let (want, _) = with_spectrum::<R>(&u, &[100.0, 1.0, 0.1, 0.1, 0.1]);
    assert_sp_close(&wide, &want, "limit_cond_double");
    // already well conditioned: nothing floored, nothing changed beyond rounding
    let (want, mut good) = with_spectrum::<R>(&u, &[3.0, 2.0, 1.0, 1.0, 0.5]);
    assert_eq!(good.limit_cond(R::from_f64(1e5), false), Ok(0));
    assert_sp_close(&good, &want, "limit_cond of a well-conditioned matrix");
}

#[test]
fn limit_cond_floors_the_spectrum() {
    limit_cond_cases::<f64>();
    limit_cond_cases::<f32>();
}

#[test]
fn limit_cond_errors() {
    let mut r = rng(1211);
    let u = random_orthogonal(&mut r, 3);
    let (_, mut s) = with_spectrum::<f64>(&u, &[100.0, 1.0, -1.0]);
    let before = s.clone();
    let err = s.limit_cond(1e5, false).unwrap_err();
    match err {
        Error::NegativeEigenvalue {
            op: "SpMatrix::limit_cond",
            min,
            max,
            tolerance,
        } => {
            assert!((min + 1.0).abs() < 1e-12 && (max - 100.0).abs() < 1e-12);
            assert_eq!(tolerance, 0.001);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(s == before, "unchanged on error");
    assert_eq!(
        s.limit_cond(1.0, false).unwrap_err().to_string(),
        "SpMatrix::limit_cond: max_cond = 1 must be greater than 1"
    );
    assert_eq!(
        Error::NegativeEigenvalue {
            op: "SpMatrix::limit_cond",
            min: -1.0,
            max: 100.0,
            tolerance: 0.001
        }
        .to_string(),
        "SpMatrix::limit_cond needs a positive semi-definite matrix: its eigenvalue -1 is \
         below -0.001 x the largest eigenvalue 100"
    );
    // the zero matrix is floored to 1e-40 everywhere, as Kaldi
    let mut zero = SpMatrix::<f64>::new(2);
    assert_eq!(zero.limit_cond(10.0, false), Ok(2));
    assert!((zero[(0, 0)] - 1e-40).abs() < 1e-52 && zero[(1, 0)].abs() < 1e-52);
}

#[test]
fn apply_floor_scalar_floors_eigenvalues() {
    let mut r = rng(1212);
    let u = random_orthogonal(&mut r, 4);
    // no eigenvalue sits at the floor itself: whether a computed 1.0 lands a rounding
    // below or above 1.0 depends on the BLAS kernel, and Kaldi counts only `s < floor`
    let (_, mut s) = with_spectrum::<f64>(&u, &[-1.0, 0.5, 2.0, 1.5]);
    assert_eq!(s.apply_floor_scalar(1.0), Ok(2));
    let (want, _) = with_spectrum::<f64>(&u, &[1.0, 1.0, 2.0, 1.5]);
    assert_sp_close(&s, &want, "apply_floor_scalar");
    let mut e = SpMatrix::<f32>::new(0);
    assert_eq!(e.apply_floor_scalar(1.0), Ok(0));
}

/// Eigenvalues (ascending) of a model matrix, through LAPACK.
fn eigs_of(m: &Model) -> Vec<f64> {
    let n = m.len();
    let mut full = Matrix::<f64>::new(n, n);
    for i in 0..n {
        for j in 0..n {
            full[(i, j)] = m[i][j];
        }
    }
    vec_model(&full.sym_eig().unwrap().s)
}

fn apply_floor_cases<R: Real>() {
    let mut r = rng(1213);
    let tol = if R::NAME == "f32" { 1e-4 } else { 1e-10 };
    // Hand-worked: diag(0.5, 2, 3) floored to 2 I: diag(2, 2, 3), two floored.
    let mut a = SpMatrix::<R>::new(3);
    for (i, v) in [0.5, 2.0, 3.0].into_iter().enumerate() {
        a[(i, i)] = R::from_f64(v);
    }
    let mut unit = SpMatrix::<R>::new(3);
    unit.set_unit();
    assert_eq!(a.apply_floor(&unit, R::from_f64(2.0)), Ok(2));
    assert_sp_close(
        &a,
        &vec![
            vec![2.0, 0.0, 0.0],
            vec![0.0, 2.0, 0.0],
            vec![0.0, 0.0, 3.0],
        ],
        "diag floored",
    );
    // Random: the result dominates both alpha C and A, and differs from A by a
    // positive semi-definite matrix of rank = the count.
    for n in [1, 4, 9] {
        let a = random_sp::<R>(&mut r, n);
        let c = random_spd::<R>(&mut r, n);
        let alpha = 0.3;
        let mut f = a.clone();
        let count = f.apply_floor(&c, R::from_f64(alpha)).unwrap();
        let (am, cm, fm) = (sp_model(&a), sp_model(&c), sp_model(&f));
        let scale = frob(&cm) + frob(&am);
        let minus_floor: Model = (0..n)
            .map(|i| (0..n).map(|j| fm[i][j] - alpha * cm[i][j]).collect())
            .collect();
        assert!(eigs_of(&minus_floor)[0] >= -tol * scale, "F >= alpha C");
        let added: Model = (0..n)
            .map(|i| (0..n).map(|j| fm[i][j] - am[i][j]).collect())
            .collect();
        let e = eigs_of(&added);
        assert!(e[0] >= -tol * scale, "F >= A");
        let rank = e.iter().filter(|&&x| x > tol * scale).count();
        assert_eq!(rank, count, "n = {n}: rank of F - A is the count");
        // flooring again changes nothing
        let mut again = f.clone();
        assert_eq!(again.apply_floor(&c, R::from_f64(alpha * 0.999)), Ok(0));
        assert_sp_close(&again, &fm, "second floor");
    }
}

#[test]
fn apply_floor_keeps_the_matrix_above_the_floor() {
    apply_floor_cases::<f64>();
    apply_floor_cases::<f32>();
}

#[test]
fn apply_floor_errors() {
    let mut a = SpMatrix::<f64>::new(2);
    a.set_unit();
    let mut indefinite = SpMatrix::<f64>::new(2);
    indefinite[(0, 0)] = 1.0;
    indefinite[(1, 1)] = -1.0;
    let before = a.clone();
    assert!(matches!(
        a.apply_floor(&indefinite, 1.0).unwrap_err(),
        Error::Lapack {
            routine: "dpptrf",
            info: 2,
            ..
        }
    ));
    assert_eq!(
        a.apply_floor(&before, 0.0).unwrap_err().to_string(),
        "SpMatrix::apply_floor: alpha = 0 must be positive"
    );
    assert!(a == before);
}

#[test]
#[should_panic(expected = "apply_floor (self, floor): shape 2 x 2 does not match shape 3 x 3")]
fn apply_floor_checks_the_orders() {
    let mut a = SpMatrix::<f64>::new(2);
    let _ = a.apply_floor(&SpMatrix::new(3), 1.0);
}

/// Kaldi's UnitTestSetRandn: the first four moments of the samples are those of the
/// standard normal (0, 1, 0, 3) within 10 sigma-ish; and a fixed seed repeats.
#[test]
fn set_randn_draws_standard_normal_samples() {
    let mut r = rng(1214);
    let mut sp = SpMatrix::<f64>::new(140);
    sp.set_randn(&mut r);
    let mut tp = dense_matrix::TpMatrix::<f32>::new(120);
    tp.set_randn(&mut r);
    let samples: Vec<Vec<f64>> = vec![
        sp.data().to_vec(),
        tp.data().iter().map(|&x| x as f64).collect(),
    ];
    for xs in samples {
        let count = xs.len() as f64;
        for pow in 1..5 {
            let moment = xs.iter().map(|x| x.powi(pow)).sum::<f64>() / count;
            let want = [0.0, 1.0, 0.0, 3.0][pow as usize - 1];
            let allowed = 10.0 * pow as f64 / count.sqrt();
            assert!(
                (moment - want).abs() <= allowed,
                "moment {pow}: {moment} vs {want}"
            );
        }
    }
    let mut a = SpMatrix::<f64>::new(5);
    let mut b = SpMatrix::<f64>::new(5);
    a.set_randn(&mut rng(7));
    b.set_randn(&mut rng(7));
    assert!(a == b && a.data().iter().all(|&x| x != 0.0));
}

/// The fixed proptest seed of this file, printed so a failure names it.
const SEED: u64 = 12;

fn config() -> proptest::prelude::ProptestConfig {
    eprintln!("proptest: rng_seed = RngSeed::Fixed({SEED}), 64 cases");
    proptest::prelude::ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(SEED),
        ..proptest::prelude::ProptestConfig::default()
    }
}

/// A symmetric matrix that stresses deflation: a share of exact zeros (reduced rows,
/// split tridiagonal blocks) and, in `integers` mode, small integers (repeated
/// eigenvalues).
fn awkward_sp<R: Real>(n: usize, seed: u64, zeros_in_4: usize, integers: bool) -> SpMatrix<R> {
    let mut r = rng(seed);
    let mut s = SpMatrix::<R>::new(n);
    for x in s.data_mut() {
        *x = if r.random_range(0..4) < zeros_in_4 {
            R::ZERO
        } else if integers {
            R::from_f64(r.random_range(-2i32..=2) as f64)
        } else {
            R::from_f64(r.random::<f64>() * 2.0 - 1.0)
        };
    }
    s
}

proptest::proptest! {
    #![proptest_config(config())]
    #[test]
    fn tridiagonalize_and_qr_property(
        n in 0usize..24,
        seed in 0u64..100_000,
        zeros_in_4 in 0usize..4,
        integers in proptest::bool::ANY,
    ) {
        check_eig(&awkward_sp::<f64>(n, seed, zeros_in_4, integers), "f64 property");
        check_eig(&awkward_sp::<f32>(n, seed, zeros_in_4, integers), "f32 property");
    }
}
