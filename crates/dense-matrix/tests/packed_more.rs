//! The remaining small `SpMatrix` methods of Kaldi's `sp-matrix.h` against `f64` loop
//! models and hand-worked values: `is_diagonal`, `is_unit`, `is_zero`,
//! `frobenius_norm`, `approx_equal`, `log_det`, `add_vec_vec`, `sym_pos_semi_def_eig`,
//! and the traces `trace_sp_sp_lower`, `trace_mat_sp_mat`, `trace_mat_sp_mat_sp`.

#![allow(clippy::needless_range_loop)]

use crate::common;

use common::*;
use dense_matrix::{
    trace_mat_sp_mat, trace_mat_sp_mat_sp, trace_sp_sp_lower, Error, Matrix, Real, SpCopyType,
    SpMatrix, Trans, Vector,
};

fn sp(n: usize, packed: &[f64]) -> SpMatrix<f64> {
    SpMatrix::from_packed(n, packed.to_vec()).unwrap()
}

fn sp_model<R: Real>(s: &SpMatrix<R>) -> Model {
    let n = s.num_rows();
    (0..n)
        .map(|i| (0..n).map(|j| s[(i, j)].to_f64()).collect())
        .collect()
}

fn random_sp<R: Real>(r: &mut rand::rngs::StdRng, n: usize) -> SpMatrix<R> {
    SpMatrix::from_mat(&random_matrix::<R>(r, n, n), SpCopyType::TakeMean)
}

#[test]
fn predicates_follow_kaldis_definitions() {
    // is_diagonal: off-diagonal |sum| (lower triangle, once) <= cutoff * diagonal |sum|
    let m = sp(2, &[1.0, 1e-6, -1.0]);
    assert!(m.is_diagonal(1e-5)); // 1e-6 <= 2e-5
    assert!(!m.is_diagonal(1e-7));
    assert!(sp(0, &[]).is_diagonal(0.0));
    // is_unit: every element within the cutoff
    let u = sp(2, &[1.0, 1e-6, 1.0 - 2e-6]);
    assert!(u.is_unit(3e-6));
    assert!(!u.is_unit(1.5e-6));
    // is_zero
    assert!(sp(2, &[1e-6, -1e-6, 0.0]).is_zero(1e-6));
    assert!(!sp(2, &[1e-6, -2e-6, 0.0]).is_zero(1e-6));
    assert!(sp(0, &[]).is_zero(0.0));
}

#[test]
fn frobenius_norm_and_approx_equal() {
    let mut r = rng(1401);
    for n in [0, 1, 4, 9] {
        let a = random_sp::<f64>(&mut r, n);
        let want = frob(&sp_model(&a));
        assert!((a.frobenius_norm() - want).abs() <= 1e-14 * want.max(1.0));
        let a32 = random_sp::<f32>(&mut r, n);
        let want = frob(&sp_model(&a32));
        assert!((a32.frobenius_norm().to_f64() - want).abs() <= 1e-6 * want.max(1.0));
    }
    // ||a - b|| = 0.5 * sqrt(2) for one off-diagonal change of 0.5; ||a|| = sqrt(1 + 4 + 2*4)
    let a = sp(2, &[1.0, 2.0, 2.0]);
    let b = sp(2, &[1.0, 2.5, 2.0]);
    let (dist, norm_b) = (0.5 * 2f64.sqrt(), (1.0f64 + 4.0 + 2.0 * 6.25).sqrt());
    assert!(a.approx_equal(&b, dist / norm_b + 1e-12));
    assert!(!a.approx_equal(&b, dist / norm_b - 1e-6));
}

#[test]
#[should_panic(expected = "approx_equal: shape 2 x 2 does not match shape 3 x 3")]
fn approx_equal_checks_the_orders() {
    sp(2, &[1.0, 0.0, 1.0]).approx_equal(&SpMatrix::new(3), 0.01);
}

#[test]
fn log_det_of_known_matrices() {
    let check = |m: SpMatrix<f64>, log_det: f64, sign: f64| {
        let (l, s) = m.log_det();
        assert!((l - log_det).abs() < 1e-14 && s == sign, "{l} {s}");
    };
    check(sp(2, &[2.0, 1.0, 2.0]), 3f64.ln(), 1.0);
    check(sp(2, &[1.0, 2.0, 1.0]), 3f64.ln(), -1.0);
    let (l, s) = sp(2, &[1.0, 1.0, 1.0]).log_det();
    assert_eq!((l, s), (f64::NEG_INFINITY, 0.0));
}

#[test]
fn add_vec_vec_is_a_symmetric_rank_two_update() {
    let mut r = rng(1402);
    let n = 6;
    let a = random_sp::<f64>(&mut r, n);
    let (v, w) = (
        random_vector::<f64>(&mut r, n),
        random_vector::<f64>(&mut r, n),
    );
    let mut got = a.clone();
    got.add_vec_vec(0.75, &v, &w);
    let am = sp_model(&a);
    let want: Model = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| am[i][j] + 0.75 * (v[i] * w[j] + w[i] * v[j]))
                .collect()
        })
        .collect();
    assert_close::<f64>(&sp_model(&got), &want, "add_vec_vec");
}

#[test]
#[should_panic(expected = "add_vec_vec (w): vector dim 2 does not match dim 3")]
fn add_vec_vec_checks_dimensions() {
    SpMatrix::<f64>::new(3).add_vec_vec(1.0, &Vector::new(3), &Vector::new(2));
}

#[test]
fn sym_pos_semi_def_eig_reconstructs_and_checks() {
    let mut r = rng(1403);
    let n = 5;
    let m = random_matrix::<f64>(&mut r, n, n);
    let mut a = SpMatrix::new(n);
    a.add_mat2(1.0, &m, Trans::NoTrans, 0.0);
    let eig = a.sym_pos_semi_def_eig(0.001).unwrap();
    let (pm, s) = (model_of(&eig.p), vec_model(&eig.s));
    let back: Model = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| (0..n).map(|k| pm[i][k] * s[k] * pm[j][k]).sum())
                .collect()
        })
        .collect();
    assert_close::<f64>(&back, &sp_model(&a), "P diag(s) P^T");
    assert!(s.windows(2).all(|w| w[0] <= w[1]) && s[0] >= 0.0);
    // diag(4, -0.002): -0.002 is within 0.001 * 4, set to 0; diag(4, -0.01) is not
    let eig = sp(2, &[4.0, 0.0, -0.002])
        .sym_pos_semi_def_eig(0.001)
        .unwrap();
    assert_eq!(eig.s.data(), &[0.0, 4.0]);
    assert_eq!(
        sp(2, &[4.0, 0.0, -0.01])
            .sym_pos_semi_def_eig(0.001)
            .unwrap_err(),
        Error::NegativeEigenvalue {
            op: "SpMatrix::sym_pos_semi_def_eig",
            min: -0.01,
            max: 4.0,
            tolerance: 0.001,
        }
    );
}

fn op_model(m: &Model, t: Trans) -> Model {
    match t {
        Trans::NoTrans => m.clone(),
        Trans::Trans => transpose(m),
    }
}

fn trace(m: &Model) -> f64 {
    (0..m.len()).map(|i| m[i][i]).sum()
}

fn traces<R: Real>() {
    let mut r = rng(1404);
    let (p, q) = (4, 3);
    let b = random_sp::<R>(&mut r, q);
    let d = random_sp::<R>(&mut r, p);
    let (bm, dm) = (sp_model(&b), sp_model(&d));
    let tol = if R::NAME == "f32" { 1e-5 } else { 1e-13 };
    // trace_sp_sp_lower: the packed dot product
    let b2 = random_sp::<R>(&mut r, q);
    let want: f64 = (0..q)
        .map(|i| (0..=i).map(|j| bm[i][j] * b2[(i, j)].to_f64()).sum::<f64>())
        .sum();
    assert!((trace_sp_sp_lower(&b, &b2).to_f64() - want).abs() <= tol);
    for ta in [Trans::NoTrans, Trans::Trans] {
        for tc in [Trans::NoTrans, Trans::Trans] {
            // op(A) is p x q, op(C) is q x p
            let a = match ta {
                Trans::NoTrans => random_matrix::<R>(&mut r, p, q),
                Trans::Trans => random_matrix::<R>(&mut r, q, p),
            };
            let c = match tc {
                Trans::NoTrans => random_matrix::<R>(&mut r, q, p),
                Trans::Trans => random_matrix::<R>(&mut r, p, q),
            };
            let (oa, oc) = (op_model(&model_of(&a), ta), op_model(&model_of(&c), tc));
            let want = trace(&matmul(&oa, &matmul(&bm, &oc)));
            let got = trace_mat_sp_mat(&a, ta, &b, &c, tc).to_f64();
            assert!(
                (got - want).abs() <= tol * want.abs().max(1.0),
                "{ta:?} {tc:?}"
            );
            let want = trace(&matmul(&oa, &matmul(&bm, &matmul(&oc, &dm))));
            let got = trace_mat_sp_mat_sp(&a, ta, &b, &c, tc, &d).to_f64();
            assert!(
                (got - want).abs() <= tol * want.abs().max(1.0),
                "{ta:?} {tc:?}"
            );
        }
    }
}

#[test]
fn traces_with_packed_operands_match_loops() {
    traces::<f64>();
    traces::<f32>();
}

#[test]
#[should_panic(expected = "trace_mat_mat")]
fn trace_mat_sp_mat_checks_shapes() {
    let a = Matrix::<f64>::new(2, 3);
    let c = Matrix::<f64>::new(2, 3);
    trace_mat_sp_mat(&a, Trans::NoTrans, &SpMatrix::new(3), &c, Trans::NoTrans);
}

#[test]
fn tp_matrix_methods() {
    use dense_matrix::TpMatrix;
    let mut t = TpMatrix::<f32>::from_packed(3, vec![2.0, 1.0, -3.0, 4.0, 5.0, 0.5]).unwrap();
    assert_eq!(t.determinant(), -3.0);
    assert_eq!(TpMatrix::<f64>::new(0).determinant(), 1.0);
    // invert_double: T T^-1 = I by loops
    let before = t.clone();
    t.invert_double().unwrap();
    for i in 0..3 {
        for j in 0..3 {
            let p: f64 = (0..3)
                .map(|k| before.get(i, k) as f64 * t.get(k, j) as f64)
                .sum();
            assert!(
                (p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-6,
                "({i}, {j})"
            );
        }
    }
    let mut singular = TpMatrix::<f32>::from_packed(2, vec![1.0, 2.0, 0.0]).unwrap();
    let copy = singular.clone();
    assert!(matches!(
        singular.invert_double().unwrap_err(),
        Error::Lapack {
            routine: "dtptri",
            info: 2,
            ..
        }
    ));
    assert!(singular == copy, "unchanged on error");
    // copy_from_mat: lower triangle of M, or of M^T (the upper triangle of M)
    let m = Matrix::from_rows(&[[1.0f64, 2.0], [3.0, 4.0]]);
    let mut t = TpMatrix::<f64>::new(2);
    t.copy_from_mat(&m, Trans::NoTrans);
    assert_eq!(t.data(), &[1.0, 3.0, 4.0]);
    t.copy_from_mat(&m, Trans::Trans);
    assert_eq!(t.data(), &[1.0, 2.0, 4.0]);
    // add_tp
    let mut a = TpMatrix::<f64>::from_packed(2, vec![1.0, 2.0, 3.0]).unwrap();
    a.add_tp(2.0, &t);
    assert_eq!(a.data(), &[3.0, 6.0, 11.0]);
}

#[test]
#[should_panic(expected = "TpMatrix::copy_from_mat: shape 2 x 2 does not match shape 2 x 3")]
fn tp_copy_from_mat_checks_the_shape() {
    dense_matrix::TpMatrix::<f64>::new(2).copy_from_mat(&Matrix::new(2, 3), Trans::NoTrans);
}

/// The messages of the errors the packed eigen-solvers add.
#[test]
fn new_error_messages_name_the_values() {
    use dense_matrix::Position;
    assert_eq!(
        Error::NotTridiagonal {
            op: "SpMatrix::qr",
            position: Position::Matrix(2, 0),
            value: 0.25,
            band_max: 3.0,
        }
        .to_string(),
        "SpMatrix::qr needs a tridiagonal matrix: element (2, 0) = 0.25 lies outside the \
         band, whose largest absolute value is 3"
    );
    assert_eq!(
        Error::NoConvergence {
            op: "SpMatrix::qr",
            iterations: 520,
        }
        .to_string(),
        "SpMatrix::qr did not converge in 520 iterations"
    );
}
