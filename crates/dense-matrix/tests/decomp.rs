//! LAPACK decompositions by their reconstruction identities, plus errors that name the
//! routine and its `info`.

#![allow(clippy::needless_range_loop)]

use crate::common;

use common::*;
use dense_matrix::{Error, Matrix, MatrixBase, Real, SpMatrix, TpMatrix, Trans, Vector};
use rand::Rng;

fn mul<R: Real>(a: &MatrixBase<R>, ta: Trans, b: &MatrixBase<R>, tb: Trans) -> Matrix<R> {
    let rows = if ta == Trans::NoTrans {
        a.num_rows()
    } else {
        a.num_cols()
    };
    let cols = if tb == Trans::NoTrans {
        b.num_cols()
    } else {
        b.num_rows()
    };
    let mut out =
        Matrix::try_new(rows, cols, Default::default()).unwrap_or_else(|_| Matrix::empty());
    if rows > 0 && cols > 0 {
        out.add_mat_mat(R::ONE, a, ta, b, tb, R::ZERO);
    }
    out
}

fn decomposition_tol<R: Real>() -> f64 {
    if R::NAME == "f32" {
        1e-4
    } else {
        1e-10
    }
}

#[track_caller]
fn assert_rec<R: Real>(got: &MatrixBase<R>, want: &MatrixBase<R>, what: &str) {
    let e = rel_err(&model_of(got), &model_of(want));
    assert!(
        e <= decomposition_tol::<R>(),
        "{what} ({}): reconstruction error {e:e}",
        R::NAME
    );
}

/// A random symmetric positive definite matrix `A A^T + n I`.
fn spd<R: Real>(rng: &mut rand::rngs::StdRng, n: usize) -> Matrix<R> {
    let a = random_matrix::<R>(rng, n, n);
    let mut s = mul(&a, Trans::NoTrans, &a, Trans::Trans);
    s.add_to_diag(R::from_f64(n as f64));
    s
}

fn svd_sweep<R: Real>() {
    let mut r = rng(31);
    for _ in 0..20 {
        let (rows, cols) = shape(&mut r, 12);
        let p = Padded::<R>::random(&mut r, rows, cols);
        let m = p.view();
        let svd = m.svd().unwrap();
        let k = rows.min(cols);
        assert_eq!(
            (svd.s.dim(), svd.u.shape(), svd.vt.shape()),
            (k, (rows, k), (k, cols))
        );
        assert!((1..k).all(|i| svd.s[i - 1] >= svd.s[i]), "descending");
        assert!(svd.s.data().iter().all(|&x| x >= R::ZERO));
        let mut us = svd.u.clone();
        us.mul_cols_vec(&svd.s);
        if k > 0 {
            assert_rec(
                &mul(&us, Trans::NoTrans, &svd.vt, Trans::NoTrans),
                &m,
                "U diag(s) Vt = M",
            );
            assert!(mul(&svd.u, Trans::Trans, &svd.u, Trans::NoTrans).is_unit(R::from_f64(1e-3)));
            assert!(mul(&svd.vt, Trans::NoTrans, &svd.vt, Trans::Trans).is_unit(R::from_f64(1e-3)));
        }
    }
}

#[test]
fn svd_reconstructs_with_sorted_singular_values() {
    svd_sweep::<f32>();
    svd_sweep::<f64>();
}

#[test]
fn svd_of_a_known_matrix() {
    // [[3, 0], [4, 5]] has singular values sqrt(45) and sqrt(5)
    let m = Matrix::from_rows(&[[3.0f64, 0.0], [4.0, 5.0]]);
    let s = m.svd().unwrap().s;
    assert!((s[0] - 45f64.sqrt()).abs() < 1e-12 && (s[1] - 5f64.sqrt()).abs() < 1e-12);
    assert!((m.cond().unwrap() - 3.0).abs() < 1e-12);
    let singular = Matrix::from_rows(&[[1.0f64, 2.0], [2.0, 4.0]]);
    assert!(singular.cond().unwrap() > 1e15);
}

fn eig_sweep<R: Real>() {
    let mut r = rng(32);
    for n in [1usize, 2, 3, 5, 8, 13] {
        // symmetric
        let s = spd::<R>(&mut r, n);
        let e = s.sym_eig().unwrap();
        assert!((1..n).all(|i| e.s[i - 1] <= e.s[i]), "ascending");
        let mut pd = e.p.clone();
        pd.mul_cols_vec(&e.s);
        assert_rec(
            &mul(&pd, Trans::NoTrans, &e.p, Trans::Trans),
            &s,
            "P diag(s) P^T = M",
        );
        assert!(mul(&e.p, Trans::Trans, &e.p, Trans::NoTrans).is_unit(R::from_f64(1e-3)));
        // general: P D P^-1 = M, checked as M P = P D
        let g = random_matrix::<R>(&mut r, n, n);
        let e = g.eig().unwrap();
        let d = e.d();
        assert_rec(
            &mul(&g, Trans::NoTrans, &e.p, Trans::NoTrans),
            &mul(&e.p, Trans::NoTrans, &d, Trans::NoTrans),
            "M P = P D",
        );
        let mut p_inv = e.p.clone();
        p_inv.invert().unwrap();
        let rec = mul(
            &mul(&e.p, Trans::NoTrans, &d, Trans::NoTrans),
            Trans::NoTrans,
            &p_inv,
            Trans::NoTrans,
        );
        let err = rel_err(&model_of(&rec), &model_of(&g));
        assert!(
            err <= decomposition_tol::<R>() * 100.0,
            "P D P^-1 = M: {err:e}"
        );
        // trace = sum of eigenvalues
        assert!((g.trace().to_f64() - e.re.sum().to_f64()).abs() <= 1e-3);
    }
}

#[test]
fn eigendecompositions_reconstruct() {
    eig_sweep::<f32>();
    eig_sweep::<f64>();
}

#[test]
fn rotation_has_imaginary_eigenvalues_in_kaldi_block_form() {
    let m = Matrix::from_rows(&[[0.0f64, -1.0], [1.0, 0.0]]);
    let e = m.eig().unwrap();
    assert!(e.re.data().iter().all(|x| x.abs() < 1e-12));
    assert!((e.im[0] - 1.0).abs() < 1e-12 && (e.im[1] + 1.0).abs() < 1e-12);
    let d = e.d();
    assert_eq!(model_of(&d), vec![vec![0.0, 1.0], vec![-1.0, 0.0]]);
}

/// Determinant by Gaussian elimination with partial pivoting, in f64 (the model).
fn naive_det(m: &Model) -> f64 {
    let n = m.len();
    let mut a = m.clone();
    let mut det = 1.0;
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| a[i][c].abs().partial_cmp(&a[j][c].abs()).unwrap())
            .unwrap();
        if a[p][c] == 0.0 {
            return 0.0;
        }
        if p != c {
            a.swap(p, c);
            det = -det;
        }
        det *= a[c][c];
        for i in c + 1..n {
            let f = a[i][c] / a[c][c];
            for j in c..n {
                a[i][j] -= f * a[c][j];
            }
        }
    }
    det
}

fn invert_sweep<R: Real>() {
    let mut r = rng(33);
    for _ in 0..15 {
        let n = r.random_range(1..10);
        let p = Padded::<R>::random(&mut r, n, n);
        let m = p.view().to_matrix();
        let mut inv = p;
        let (log_det, sign) = inv.view_mut().invert().unwrap();
        assert!(inv.padding_untouched());
        let det = naive_det(&model_of(&m));
        assert_eq!(sign.to_f64(), det.signum());
        assert!((log_det.to_f64() - det.abs().ln()).abs() <= 1e-3);
        let (ld2, s2) = m.log_det();
        assert_eq!((ld2, s2), (log_det, sign));
        let prod = mul(&m, Trans::NoTrans, &inv.view(), Trans::NoTrans);
        let e = rel_err(&model_of(&prod), &model_of(&Matrix::<R>::eye(n)));
        let cond = m.cond().unwrap().to_f64();
        assert!(
            e <= decomposition_tol::<R>() * cond.max(1.0),
            "A A^-1 = I: {e:e} (cond {cond:e})"
        );
    }
}

#[test]
fn invert_and_log_det_match_naive_determinant() {
    invert_sweep::<f32>();
    invert_sweep::<f64>();
}

#[test]
fn singular_matrix_errors_name_routine_and_info() {
    let mut m = Matrix::from_rows(&[[1.0f64, 2.0], [2.0, 4.0]]);
    match m.invert() {
        Err(Error::Lapack { routine, info, .. }) => assert_eq!((routine, info), ("dgetrf", 2)),
        other => panic!("expected a dgetrf error, got {other:?}"),
    }
    let m = Matrix::from_rows(&[[1.0f32, 2.0], [2.0, 4.0]]);
    assert_eq!(m.log_det(), (f32::NEG_INFINITY, 0.0));
    let mut m32 = m.clone();
    let err = m32.invert().unwrap_err();
    assert!(
        err.to_string()
            .starts_with("LAPACK sgetrf failed with info = 2"),
        "{err}"
    );
}

fn cholesky_sweep<R: Real>() {
    let mut r = rng(34);
    for n in [0usize, 1, 2, 4, 9] {
        let s = if n == 0 {
            Matrix::empty()
        } else {
            spd::<R>(&mut r, n)
        };
        let l = s.cholesky().unwrap();
        if n > 0 {
            assert!(
                (0..n).all(|i| (i + 1..n).all(|j| l[(i, j)] == R::ZERO)),
                "lower triangular"
            );
            assert_rec(&mul(&l, Trans::NoTrans, &l, Trans::Trans), &s, "L L^T = M");
            // the packed route gives the same factor
            let tp = TpMatrix::cholesky(&SpMatrix::from_mat(&s, Default::default())).unwrap();
            assert_rec(&tp.to_matrix(), &l, "TpMatrix::cholesky = cholesky");
        }
    }
}

#[test]
fn cholesky_reconstructs() {
    cholesky_sweep::<f32>();
    cholesky_sweep::<f64>();
}

#[test]
fn cholesky_of_indefinite_is_a_potrf_error() {
    let m = Matrix::from_rows(&[[1.0f64, 2.0], [2.0, 1.0]]);
    match m.cholesky() {
        Err(Error::Lapack { routine, info, .. }) => assert_eq!((routine, info), ("dpotrf", 2)),
        other => panic!("expected a dpotrf error, got {other:?}"),
    }
    let sp = SpMatrix::from_mat(&m, Default::default());
    assert!(matches!(
        sp.log_pos_def_det(),
        Err(Error::Lapack {
            routine: "dpptrf",
            info: 2,
            ..
        })
    ));
}

#[test]
fn sym_pos_semi_def_eig_reconstructs_and_rejects_indefinite() {
    let mut r = rng(35);
    // rank-deficient PSD: A A^T with A 6 x 3
    let a = random_matrix::<f64>(&mut r, 6, 3);
    let s = mul(&a, Trans::NoTrans, &a, Trans::Trans);
    let e = s.sym_pos_semi_def_eig(1e-3).unwrap();
    assert!((1..6).all(|i| e.s[i - 1] >= e.s[i]), "{:?}", e.s);
    let mut pd = e.p.clone();
    pd.mul_cols_vec(&e.s);
    assert_rec(
        &mul(&pd, Trans::NoTrans, &e.p, Trans::Trans),
        &s,
        "P diag(s) P^T = M",
    );
    let indefinite = Matrix::from_rows(&[[1.0f64, 0.0], [0.0, -1.0]]);
    assert!(matches!(
        indefinite.sym_pos_semi_def_eig(1e-3),
        Err(Error::NotPositiveSemiDefinite { .. })
    ));
}

#[test]
fn power_matches_products_and_square_roots() {
    let mut r = rng(36);
    let s = spd::<f64>(&mut r, 5);
    let mut root = s.clone();
    root.power(0.5).unwrap();
    assert_rec(
        &mul(&root, Trans::NoTrans, &root, Trans::NoTrans),
        &s,
        "(M^0.5)^2 = M",
    );
    // Symmetric positive definite matrices of known spectra: Q diag(d) Q^T with Q from the
    // eigenvectors of a random symmetric matrix, so every eigenvalue is positive and
    // `power(2.0)` must succeed; M^2 is then checked against the product M M.
    for (n, spectrum) in [
        (3, vec![1.0, 2.0, 5.0]),
        (4, vec![0.5, 1.5, 3.0, 7.0]),
        (5, vec![0.1, 0.2, 1.0, 4.0, 9.0]),
    ] {
        let q = spd::<f64>(&mut r, n).sym_eig().unwrap().p;
        let mut qd = q.clone();
        qd.mul_cols_vec(&Vector::from_vec(spectrum.clone()));
        let m = mul(&qd, Trans::NoTrans, &q, Trans::Trans);
        let mut sq = m.clone();
        sq.power(2.0).unwrap();
        assert_rec(
            &sq,
            &mul(&m, Trans::NoTrans, &m, Trans::NoTrans),
            "M^2 = M M",
        );
        let squares: Vec<f64> = spectrum.iter().map(|x| x * x).collect();
        let got = sq.sym_eig().unwrap().s;
        for (g, w) in got.data().iter().zip(&squares) {
            assert!((g - w).abs() <= 1e-9 * w.max(1.0), "eigenvalue {g} vs {w}");
        }
    }
    // A matrix that must fail: eigenvalues -3 (negative real) and 2, power 0.5.
    let mut bad = Matrix::from_rows(&[[-3.0f64, 1.0], [0.0, 2.0]]);
    let before = bad.clone();
    assert_eq!(
        bad.power(0.5),
        Err(Error::EigenvaluePower {
            index: 0,
            value: -3.0,
            power: 0.5
        })
    );
    assert_eq!(bad, before);
    // complex eigenvalues: a rotation by 90 degrees squared is a rotation by 180
    let mut rot = Matrix::from_rows(&[[0.0f64, -1.0], [1.0, 0.0]]);
    rot.power(2.0).unwrap();
    assert_rec(
        &rot,
        &Matrix::from_rows(&[[-1.0, 0.0], [0.0, -1.0]]),
        "rotation^2",
    );
    let mut neg = Matrix::from_rows(&[[-1.0f64, 0.0], [0.0, 2.0]]);
    let before = neg.clone();
    assert!(matches!(
        neg.power(0.5),
        Err(Error::EigenvaluePower { index: 0, .. })
    ));
    assert_eq!(neg, before);
    let _ = Vector::<f64>::new(0);
}

/// `sym_eig` and `cholesky` read only the lower triangle, as documented.
#[test]
fn symmetric_routines_read_only_the_lower_triangle() {
    let mut r = rng(37);
    let s = spd::<f64>(&mut r, 6);
    let mut lower_only = s.clone();
    for i in 0..6 {
        for j in i + 1..6 {
            lower_only[(i, j)] = f64::NAN;
        }
    }
    let a = s.sym_eig().unwrap();
    let b = lower_only.sym_eig().unwrap();
    assert!(a.s.approx_equal(&b.s, 1e-12));
    let l1 = s.cholesky().unwrap();
    let l2 = lower_only.cholesky().unwrap();
    assert!(l1.approx_equal(&l2, 1e-12));
}
