//! Packed symmetric and triangular matrices against their dense counterparts.

#![allow(clippy::needless_range_loop)]

use crate::common;

use common::*;
use dense_matrix::{Matrix, Real, SpCopyType, SpMatrix, TpMatrix, Trans, Vector};

fn packed_ops<R: Real>() {
    let mut r = rng(41);
    for n in [0usize, 1, 2, 5, 8] {
        let a = if n == 0 {
            Matrix::empty()
        } else {
            random_matrix::<R>(&mut r, n, n)
        };
        let am = model_of(&a);
        // layout: (i, j), j <= i, at i (i + 1) / 2 + j
        let lower = SpMatrix::from_mat(&a, SpCopyType::TakeLower);
        for i in 0..n {
            for j in 0..=i {
                assert_eq!(lower.data()[i * (i + 1) / 2 + j].to_f64(), am[i][j]);
                assert_eq!(lower[(j, i)].to_f64(), am[i][j]);
            }
        }
        let upper = SpMatrix::from_mat(&a, SpCopyType::TakeUpper);
        let mean = SpMatrix::from_mat(&a, SpCopyType::TakeMean);
        for i in 0..n {
            for j in 0..=i {
                assert_eq!(upper[(i, j)].to_f64(), am[j][i]);
                assert!((mean[(i, j)].to_f64() - 0.5 * (am[i][j] + am[j][i])).abs() < 1e-6);
            }
        }
        let full = mean.to_matrix();
        assert!(full.is_symmetric(R::ZERO));
        assert_eq!(SpMatrix::from_mat(&full, SpCopyType::TakeLower), mean);

        // spmv vs dense gemv
        let v = random_vector::<R>(&mut r, n);
        let mut y = random_vector::<R>(&mut r, n);
        let mut y_dense = y.clone();
        y.add_sp_vec(R::from_f64(2.0), &mean, &v, R::from_f64(0.5));
        y_dense.add_mat_vec(
            R::from_f64(2.0),
            &full,
            Trans::NoTrans,
            &v,
            R::from_f64(0.5),
        );
        assert_vec_close(&y, &vec_model(&y_dense), "add_sp_vec");

        // tpmv / tpsv / add_tp_vec vs dense triangular products
        let mut tri = a.clone();
        for i in 0..n {
            tri[(i, i)] = R::from_f64(2.0 + i as f64); // well conditioned
        }
        let tp = TpMatrix::from_mat(&tri);
        let dense = tp.to_matrix();
        for i in 0..n {
            for j in 0..n {
                let want = if j <= i { tri[(i, j)] } else { R::ZERO };
                assert_eq!(dense[(i, j)], want);
                assert_eq!(tp.get(i, j), want);
            }
        }
        for t in [Trans::NoTrans, Trans::Trans] {
            let mut x = v.clone();
            x.mul_tp(&tp, t);
            let mut want = Vector::new(n);
            want.add_mat_vec(R::ONE, &dense, t, &v, R::ZERO);
            assert_vec_close(&x, &vec_model(&want), "mul_tp");
            x.solve(&tp, t);
            assert_vec_close(&x, &vec_model(&v), "solve undoes mul_tp");
            let mut z = y.clone();
            let mut z_dense = y.clone();
            z.add_tp_vec(R::from_f64(-1.0), &tp, t, &v, R::from_f64(3.0));
            z_dense.add_mat_vec(R::from_f64(-1.0), &dense, t, &v, R::from_f64(3.0));
            assert_vec_close(&z, &vec_model(&z_dense), "add_tp_vec");
        }

        // inverses agree with the dense inverse
        let mut tp_inv = tp.clone();
        tp_inv.invert().unwrap();
        let mut dense_inv = dense.clone();
        dense_inv.invert().unwrap();
        assert_close::<R>(
            &model_of(&tp_inv.to_matrix()),
            &model_of(&dense_inv),
            "TpMatrix::invert",
        );
        let mut spd = Matrix::<R>::new(n, n);
        if n > 0 {
            spd.add_mat_mat(R::ONE, &a, Trans::NoTrans, &a, Trans::Trans, R::ZERO);
            spd.add_to_diag(R::from_f64(n as f64));
        }
        let mut sp = SpMatrix::from_mat(&spd, SpCopyType::TakeLower);
        let (log_det, sign) = spd.log_det();
        assert_eq!(sign, R::ONE);
        let lpd = sp.log_pos_def_det().unwrap();
        assert!((lpd - log_det).abs().to_f64() <= 1e-4 * (1.0 + log_det.abs().to_f64()));
        sp.invert().unwrap();
        let mut spd_inv = spd.clone();
        spd_inv.invert().unwrap();
        let tol = if R::NAME == "f32" { 1e-4 } else { 1e-10 };
        assert!(
            rel_err(&model_of(&sp.to_matrix()), &model_of(&spd_inv)) <= tol,
            "SpMatrix::invert"
        );
        // eig of the packed matrix reconstructs
        let e = SpMatrix::from_mat(&spd, SpCopyType::TakeLower)
            .eig()
            .unwrap();
        let mut pd = e.p.clone();
        pd.mul_cols_vec(&e.s);
        let mut rec = Matrix::<R>::new(n, n);
        if n > 0 {
            rec.add_mat_mat(R::ONE, &pd, Trans::NoTrans, &e.p, Trans::Trans, R::ZERO);
        }
        assert!(rel_err(&model_of(&rec), &model_of(&spd)) <= tol);
        assert!((sp.trace().to_f64() - spd_inv.trace().to_f64()).abs() < 1e-3);
    }
}

#[test]
fn packed_matrices_match_dense_ones() {
    packed_ops::<f32>();
    packed_ops::<f64>();
}

#[test]
#[should_panic(expected = "element (0, 1) is above the diagonal of a triangular matrix")]
fn triangular_index_above_the_diagonal_panics() {
    let tp = TpMatrix::<f64>::new(2);
    let _ = tp[(0, 1)];
}

#[test]
fn singular_triangular_inverse_names_tptri() {
    let mut tp = TpMatrix::from_packed(2, vec![1.0f64, 3.0, 0.0]).unwrap();
    assert!(TpMatrix::from_packed(2, vec![1.0f64]).is_err());
    let err = tp.invert().unwrap_err();
    assert_eq!(
        err.to_string(),
        "LAPACK dtptri failed with info = 2: a diagonal element is exactly zero: the matrix is singular"
    );
}
