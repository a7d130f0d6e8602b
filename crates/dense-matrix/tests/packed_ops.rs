//! Issue 12's packed algebra against naive loops over full `Vec<Vec<f64>>` models:
//! products with packed operands, the small `SpMatrix` methods, traces, the vector copies
//! out of packed storage, `min_singular_value` and `invert_double`.

#![allow(clippy::needless_range_loop)]

use crate::common;

use common::*;
use dense_matrix::{
    trace_sp_mat, trace_sp_sp, vec_sp_vec, Error, Matrix, Real, SpCopyType, SpMatrix, TpMatrix,
    Trans, Vector,
};

fn random_sp<R: Real>(r: &mut rand::rngs::StdRng, n: usize) -> SpMatrix<R> {
    SpMatrix::from_mat(&random_matrix::<R>(r, n, n), SpCopyType::TakeMean)
}

fn random_tp<R: Real>(r: &mut rand::rngs::StdRng, n: usize) -> TpMatrix<R> {
    TpMatrix::from_mat(&random_matrix::<R>(r, n, n))
}

/// Full model of a symmetric packed matrix, element by element through indexing.
fn sp_model<R: Real>(s: &SpMatrix<R>) -> Model {
    let n = s.num_rows();
    (0..n)
        .map(|i| (0..n).map(|j| s[(i, j)].to_f64()).collect())
        .collect()
}

fn tp_model<R: Real>(t: &TpMatrix<R>) -> Model {
    let n = t.num_rows();
    (0..n)
        .map(|i| (0..n).map(|j| t.get(i, j).to_f64()).collect())
        .collect()
}

fn op(m: &Model, t: Trans) -> Model {
    match t {
        Trans::NoTrans => m.clone(),
        Trans::Trans => transpose(m),
    }
}

fn axpby(beta: f64, before: &Model, alpha: f64, prod: &Model) -> Model {
    before
        .iter()
        .zip(prod)
        .map(|(b, p)| b.iter().zip(p).map(|(x, y)| beta * x + alpha * y).collect())
        .collect()
}

fn products<R: Real>() {
    let mut r = rng(61);
    let n = 5;
    let k = 3;
    let ts = [Trans::NoTrans, Trans::Trans];
    for &tb in &ts {
        let a = random_sp::<R>(&mut r, n);
        let b = match tb {
            Trans::NoTrans => random_matrix::<R>(&mut r, n, k),
            Trans::Trans => random_matrix::<R>(&mut r, k, n),
        };
        let bm = op(&model_of(&b), tb);
        // add_sp_mat: n x k
        let mut out = random_matrix::<R>(&mut r, n, k);
        let before = model_of(&out);
        out.add_sp_mat(R::from_f64(2.0), &a, &b, tb, R::from_f64(0.5));
        let want = axpby(0.5, &before, 2.0, &matmul(&sp_model(&a), &bm));
        assert_close::<R>(&model_of(&out), &want, "add_sp_mat");
        // add_mat_sp: k x n = op(B)^T-shaped input times A
        let c = random_matrix::<R>(&mut r, k, n);
        let mut out = random_matrix::<R>(&mut r, k, n);
        let before = model_of(&out);
        out.add_mat_sp(R::from_f64(-1.0), &c, Trans::NoTrans, &a, R::from_f64(1.0));
        let want = axpby(1.0, &before, -1.0, &matmul(&model_of(&c), &sp_model(&a)));
        assert_close::<R>(&model_of(&out), &want, "add_mat_sp");
        // add_sp_mat_sp: A op(B') C with B' n x n
        let b2 = random_matrix::<R>(&mut r, n, n);
        let c2 = random_sp::<R>(&mut r, n);
        let mut out = random_matrix::<R>(&mut r, n, n);
        let before = model_of(&out);
        out.add_sp_mat_sp(R::from_f64(1.5), &a, &b2, tb, &c2, R::from_f64(0.0));
        let prod = matmul(
            &matmul(&sp_model(&a), &op(&model_of(&b2), tb)),
            &sp_model(&c2),
        );
        assert_close::<R>(
            &model_of(&out),
            &axpby(0.0, &before, 1.5, &prod),
            "add_sp_mat_sp",
        );
        // add_sp_sp
        let mut out = random_matrix::<R>(&mut r, n, n);
        let before = model_of(&out);
        out.add_sp_sp(R::from_f64(1.0), &a, &c2, R::from_f64(2.0));
        let want = axpby(2.0, &before, 1.0, &matmul(&sp_model(&a), &sp_model(&c2)));
        assert_close::<R>(&model_of(&out), &want, "add_sp_sp");
        for &ta in &ts {
            let t = random_tp::<R>(&mut r, n);
            let t2 = random_tp::<R>(&mut r, n);
            let tm = op(&tp_model(&t), ta);
            // add_tp_mat: op(T) op(B), n x k
            let mut out = random_matrix::<R>(&mut r, n, k);
            let before = model_of(&out);
            out.add_tp_mat(R::from_f64(0.5), &t, ta, &b, tb, R::from_f64(1.0));
            let want = axpby(1.0, &before, 0.5, &matmul(&tm, &bm));
            assert_close::<R>(&model_of(&out), &want, "add_tp_mat");
            // add_mat_tp: op(C') op(T), C' k x n
            let cc = random_matrix::<R>(&mut r, k, n);
            let mut out = random_matrix::<R>(&mut r, k, n);
            let before = model_of(&out);
            out.add_mat_tp(
                R::from_f64(1.0),
                &cc,
                Trans::NoTrans,
                &t,
                ta,
                R::from_f64(-0.5),
            );
            let want = axpby(-0.5, &before, 1.0, &matmul(&model_of(&cc), &tm));
            assert_close::<R>(&model_of(&out), &want, "add_mat_tp");
            // add_tp_tp
            let mut out = random_matrix::<R>(&mut r, n, n);
            let before = model_of(&out);
            out.add_tp_tp(R::from_f64(1.0), &t, ta, &t2, tb, R::from_f64(0.0));
            let want = axpby(0.0, &before, 1.0, &matmul(&tm, &op(&tp_model(&t2), tb)));
            assert_close::<R>(&model_of(&out), &want, "add_tp_tp");
        }
    }
    // add_sp: full += alpha S
    let s = random_sp::<R>(&mut r, 4);
    let mut m = random_matrix::<R>(&mut r, 4, 4);
    let before = model_of(&m);
    m.add_sp(R::from_f64(3.0), &s);
    assert_close::<R>(
        &model_of(&m),
        &axpby(1.0, &before, 3.0, &sp_model(&s)),
        "add_sp",
    );
}

#[test]
fn products_with_packed_operands_match_loops() {
    products::<f32>();
    products::<f64>();
}

/// `add_sp_mat` (unpacked into a reused per-thread buffer, then symm or gemm) against the
/// naive `beta C + alpha A op(B)` over full models: sizes around the 64-element tiles of
/// the mirroring, padded (strided) operands whose padding must stay untouched, both
/// transposes, beta 0 over NaN (the old contents do not survive, as in add_mat_mat),
/// and sizes that grow and shrink so the buffer holds stale values of earlier calls.
fn add_sp_mat_cases<R: Real>() {
    let mut r = rng(35);
    let cases = [
        (1, 1),
        (3, 5),
        (64, 7),
        (65, 64),
        (130, 3),
        (2, 9),
        (129, 130),
        (5, 1),
    ];
    for &(n, m) in &cases {
        for &tb in &[Trans::NoTrans, Trans::Trans] {
            for &(alpha, beta) in &[(1.0, 0.0), (-0.5, 2.0), (0.0, 1.0)] {
                let a = random_sp::<R>(&mut r, n);
                let b_shape = match tb {
                    Trans::NoTrans => (n, m),
                    Trans::Trans => (m, n),
                };
                let b = Padded::<R>::random(&mut r, b_shape.0, b_shape.1);
                let mut out = Padded::<R>::random(&mut r, n, m);
                if beta == 0.0 {
                    for v in out.buf.iter_mut() {
                        *v = R::NAN;
                    }
                }
                let before = model_of(&out.view());
                out.view_mut()
                    .add_sp_mat(R::from_f64(alpha), &a, &b.view(), tb, R::from_f64(beta));
                let prod = matmul(&sp_model(&a), &op(&model_of(&b.view()), tb));
                let want: Model = if beta == 0.0 {
                    prod.iter()
                        .map(|row| row.iter().map(|v| alpha * v).collect())
                        .collect()
                } else {
                    axpby(beta, &before, alpha, &prod)
                };
                let what = format!("add_sp_mat n={n} m={m} {tb:?} alpha={alpha} beta={beta}");
                assert_close::<R>(&model_of(&out.view()), &want, &what);
                assert!(out.padding_untouched(), "{what}: padding written");
            }
        }
    }
}

#[test]
fn add_sp_mat_matches_a_loop_at_every_size_and_transpose() {
    add_sp_mat_cases::<f32>();
    add_sp_mat_cases::<f64>();
}

#[test]
#[should_panic(expected = "add_sp_mat")]
fn add_sp_mat_checks_the_inner_dimension() {
    let a = SpMatrix::<f64>::new(3);
    let b = Matrix::<f64>::new(4, 2);
    let mut out = Matrix::<f64>::new(3, 2);
    out.add_sp_mat(1.0, &a, &b, Trans::NoTrans, 0.0);
}

#[test]
#[should_panic(expected = "add_sp_mat")]
fn add_sp_mat_checks_the_output_shape() {
    let a = SpMatrix::<f64>::new(3);
    let b = Matrix::<f64>::new(2, 3);
    let mut out = Matrix::<f64>::new(3, 3);
    out.add_sp_mat(1.0, &a, &b, Trans::Trans, 0.0);
}

fn sp_methods<R: Real>() {
    let mut r = rng(62);
    let n = 6;
    let c = |x: f64| R::from_f64(x);
    let s = random_sp::<R>(&mut r, n);
    let m = sp_model(&s);
    // set_unit, set_diag, scale_diag, add_diag_vec
    let mut u = s.clone();
    u.set_unit();
    assert_eq!(sp_model(&u), model_of(&Matrix::<R>::eye(n)));
    let mut d = s.clone();
    d.scale_diag(c(2.0));
    let v = random_vector::<R>(&mut r, n);
    d.add_diag_vec(c(-1.0), &v);
    let want: Model = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if i == j {
                        2.0 * m[i][i] - v[i].to_f64()
                    } else {
                        m[i][j]
                    }
                })
                .collect()
        })
        .collect();
    assert_close::<R>(&sp_model(&d), &want, "scale_diag + add_diag_vec");
    d.set_diag(c(7.0));
    assert!((0..n).all(|i| d[(i, i)] == c(7.0)));
    // add_vec2
    let mut a = s.clone();
    a.add_vec2(c(0.5), &v);
    let want: Model = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| m[i][j] + 0.5 * v[i].to_f64() * v[j].to_f64())
                .collect()
        })
        .collect();
    assert_close::<R>(&sp_model(&a), &want, "add_vec2");
    // add_mat2, both transposes
    for t in [Trans::NoTrans, Trans::Trans] {
        let x = match t {
            Trans::NoTrans => random_matrix::<R>(&mut r, n, 3),
            Trans::Trans => random_matrix::<R>(&mut r, 3, n),
        };
        let xm = op(&model_of(&x), t);
        let mut a = s.clone();
        a.add_mat2(c(2.0), &x, t, c(0.5));
        let want = axpby(0.5, &m, 2.0, &matmul(&xm, &transpose(&xm)));
        assert_close::<R>(&sp_model(&a), &want, "add_mat2");
    }
    // add_packed, max, min
    let s2 = random_sp::<R>(&mut r, n);
    let mut a = s.clone();
    a.add_packed(c(-2.0), &s2);
    assert_close::<R>(
        &sp_model(&a),
        &axpby(1.0, &m, -2.0, &sp_model(&s2)),
        "add_packed",
    );
    let flat: Vec<f64> = m.iter().flatten().copied().collect();
    assert_eq!(
        s.max().to_f64(),
        flat.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
    );
    assert_eq!(
        s.min().to_f64(),
        flat.iter().cloned().fold(f64::INFINITY, f64::min)
    );
    // vec_sp_vec, trace_sp_sp, trace_sp_mat
    let v2 = random_vector::<R>(&mut r, n);
    let want: f64 = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| v[i].to_f64() * m[i][j] * v2[j].to_f64())
        .sum();
    let got = vec_sp_vec(&v, &s, &v2).to_f64();
    assert!(
        (got - want).abs() <= 10.0 * tol::<R>() * (1.0 + want.abs()),
        "vec_sp_vec"
    );
    let m2 = sp_model(&s2);
    let want: f64 = (0..n)
        .map(|i| (0..n).map(|j| m[i][j] * m2[j][i]).sum::<f64>())
        .sum();
    let got = trace_sp_sp(&s, &s2).to_f64();
    assert!(
        (got - want).abs() <= 10.0 * tol::<R>() * (1.0 + want.abs()),
        "trace_sp_sp"
    );
    let full = random_matrix::<R>(&mut r, n, n);
    let fm = model_of(&full);
    let want: f64 = (0..n)
        .map(|i| (0..n).map(|j| m[i][j] * fm[j][i]).sum::<f64>())
        .sum();
    let got = trace_sp_mat(&s, &full).to_f64();
    assert!(
        (got - want).abs() <= 10.0 * tol::<R>() * (1.0 + want.abs()),
        "trace_sp_mat"
    );
}

#[test]
fn sp_matrix_methods_match_loops() {
    sp_methods::<f32>();
    sp_methods::<f64>();
}

#[test]
fn definiteness_determinant_and_eigenvalues_of_known_matrices() {
    // [[2, 1], [1, 2]]: eigenvalues 1 and 3, determinant 3.
    let s = SpMatrix::<f64>::from_packed(2, vec![2.0, 1.0, 2.0]).unwrap();
    assert!(s.is_pos_def());
    assert!((s.determinant() - 3.0).abs() < 1e-12);
    assert!((s.max_abs_eig().unwrap() - 3.0).abs() < 1e-12);
    // [[1, 2], [2, 1]]: eigenvalues -1 and 3, determinant -3, indefinite.
    let s = SpMatrix::<f64>::from_packed(2, vec![1.0, 2.0, 1.0]).unwrap();
    assert!(!s.is_pos_def());
    assert!((s.determinant() + 3.0).abs() < 1e-12);
    // [[1, 0], [0, -5]]: the largest magnitude is the negative one.
    let s = SpMatrix::<f64>::from_packed(2, vec![1.0, 0.0, -5.0]).unwrap();
    assert!((s.max_abs_eig().unwrap() - 5.0).abs() < 1e-12);
    // singular: determinant 0
    let s = SpMatrix::<f32>::from_packed(2, vec![1.0, 1.0, 1.0]).unwrap();
    assert_eq!(s.determinant(), 0.0);
    let mut nan = SpMatrix::<f64>::new(2);
    nan.set_unit();
    nan[(1, 0)] = f64::NAN;
    assert!(!nan.is_pos_def());
}

#[test]
fn vector_copies_out_of_packed_storage() {
    let s = SpMatrix::<f64>::from_packed(3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let t = TpMatrix::<f64>::from_packed(3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let mut v = Vector::<f64>::new(6);
    v.copy_from_packed(s.data());
    assert_eq!(v.data(), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let mut d = Vector::<f64>::new(3);
    d.copy_diag_from_sp(&s);
    assert_eq!(d.data(), &[1.0, 3.0, 6.0]);
    d.set_zero();
    d.copy_diag_from_tp(&t);
    assert_eq!(d.data(), &[1.0, 3.0, 6.0]);
    // Row 1 of [[1, 2, 4], [2, 3, 5], [4, 5, 6]].
    d.copy_row_from_sp(&s, 1);
    assert_eq!(d.data(), &[2.0, 3.0, 5.0]);
    d.copy_row_from_sp(&s, 2);
    assert_eq!(d.data(), &[4.0, 5.0, 6.0]);
}

#[test]
#[should_panic(expected = "row 3 out of bounds for a packed symmetric matrix with 3 rows")]
fn copy_row_from_sp_checks_the_row() {
    let s = SpMatrix::<f64>::new(3);
    let mut d = Vector::<f64>::new(3);
    d.copy_row_from_sp(&s, 3);
}

#[test]
fn min_singular_value_and_invert_double() {
    // diag(3, 0.5, 2) rotated: singular values are 3, 2, 0.5.
    let q = Matrix::from_rows(&[[0.0f64, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]);
    let mut d = Matrix::<f64>::new(3, 3);
    d.copy_diag_from_vec(&Vector::from_vec(vec![3.0, 0.5, 2.0]));
    let mut m = Matrix::<f64>::new(3, 3);
    m.add_mat_mat(1.0, &q, Trans::NoTrans, &d, Trans::NoTrans, 0.0);
    assert!((m.min_singular_value().unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(
        Matrix::<f64>::empty().min_singular_value(),
        Ok(f64::INFINITY)
    );
    // invert_double on f32: [[4, 7], [2, 6]]^-1 = [[0.6, -0.7], [-0.2, 0.4]], det 10.
    let mut a = Matrix::from_rows(&[[4.0f32, 7.0], [2.0, 6.0]]);
    let (log_det, sign) = a.invert_double().unwrap();
    assert!((log_det - 10f32.ln()).abs() < 1e-6 && sign == 1.0);
    let want = [[0.6f32, -0.7], [-0.2, 0.4]];
    for i in 0..2 {
        for j in 0..2 {
            assert!((a[(i, j)] - want[i][j]).abs() < 1e-7, "({i}, {j})");
        }
    }
    let mut singular = Matrix::from_rows(&[[1.0f32, 2.0], [2.0, 4.0]]);
    assert!(matches!(
        singular.invert_double(),
        Err(Error::Lapack {
            routine: "dgetrf",
            info: 2,
            ..
        })
    ));
}

fn sandwiches<R: Real>() {
    let mut r = rng(63);
    let n = 5;
    let c = |x: f64| R::from_f64(x);
    for t in [Trans::NoTrans, Trans::Trans] {
        let k = 3;
        let m = match t {
            Trans::NoTrans => random_matrix::<R>(&mut r, n, k),
            Trans::Trans => random_matrix::<R>(&mut r, k, n),
        };
        let mm = op(&model_of(&m), t);
        let a = random_sp::<R>(&mut r, k);
        let s = random_sp::<R>(&mut r, n);
        let before = sp_model(&s);
        // add_mat2_sp: op(M) A op(M)^T
        let mut out = s.clone();
        out.add_mat2_sp(c(2.0), &m, t, &a, c(0.5));
        let want = axpby(
            0.5,
            &before,
            2.0,
            &matmul(&matmul(&mm, &sp_model(&a)), &transpose(&mm)),
        );
        assert_close::<R>(&sp_model(&out), &want, "add_mat2_sp");
        // add_mat2_vec: op(M) diag(v) op(M)^T
        let v = random_vector::<R>(&mut r, k);
        let dv: Model = (0..k)
            .map(|i| {
                (0..k)
                    .map(|j| if i == j { v[i].to_f64() } else { 0.0 })
                    .collect()
            })
            .collect();
        let mut out = s.clone();
        out.add_mat2_vec(c(-1.0), &m, t, &v, c(1.0));
        let want = axpby(
            1.0,
            &before,
            -1.0,
            &matmul(&matmul(&mm, &dv), &transpose(&mm)),
        );
        assert_close::<R>(&sp_model(&out), &want, "add_mat2_vec");
        // add_tp2 and add_tp2_sp
        let tp = random_tp::<R>(&mut r, n);
        let tm = op(&tp_model(&tp), t);
        let mut out = s.clone();
        out.add_tp2(c(1.0), &tp, t, c(0.0));
        assert_close::<R>(&sp_model(&out), &matmul(&tm, &transpose(&tm)), "add_tp2");
        let a5 = random_sp::<R>(&mut r, n);
        let mut out = s.clone();
        out.add_tp2_sp(c(0.5), &tp, t, &a5, c(2.0));
        let want = axpby(
            2.0,
            &before,
            0.5,
            &matmul(&matmul(&tm, &sp_model(&a5)), &transpose(&tm)),
        );
        assert_close::<R>(&sp_model(&out), &want, "add_tp2_sp");
    }
    // add_vec2_sp: diag(v) S diag(v)
    let s = random_sp::<R>(&mut r, n);
    let a = random_sp::<R>(&mut r, n);
    let v = random_vector::<R>(&mut r, n);
    let mut out = s.clone();
    out.add_vec2_sp(c(3.0), &v, &a, c(-1.0));
    let am = sp_model(&a);
    let want: Model = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| -sp_model(&s)[i][j] + 3.0 * v[i].to_f64() * am[i][j] * v[j].to_f64())
                .collect()
        })
        .collect();
    assert_close::<R>(&sp_model(&out), &want, "add_vec2_sp");
}

#[test]
fn sandwich_products_into_packed_matrices() {
    sandwiches::<f32>();
    sandwiches::<f64>();
}

#[test]
fn apply_pow_of_a_known_spectrum() {
    // [[2, 1], [1, 2]] = Q diag(1, 3) Q^T with Q = [[1, 1], [-1, 1]] / sqrt 2; its square
    // is [[5, 4], [4, 5]] and its square root squared is itself.
    let s = SpMatrix::<f64>::from_packed(2, vec![2.0, 1.0, 2.0]).unwrap();
    let mut sq = s.clone();
    sq.apply_pow(2.0).unwrap();
    for (got, want) in sq.data().iter().zip([5.0, 4.0, 5.0]) {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }
    let mut root = s.clone();
    root.apply_pow(0.5).unwrap();
    let r = root.to_matrix();
    let mut back = Matrix::<f64>::new(2, 2);
    back.add_mat_mat(1.0, &r, Trans::NoTrans, &r, Trans::NoTrans, 0.0);
    assert!(back.approx_equal(&s.to_matrix(), 1e-12));
    // An indefinite matrix is not positive semi-definite: an error and no change.
    let mut bad = SpMatrix::<f64>::from_packed(2, vec![1.0, 2.0, 1.0]).unwrap();
    let before = bad.clone();
    assert!(matches!(
        bad.apply_pow(0.5),
        Err(Error::NotPositiveSemiDefinite { .. })
    ));
    assert_eq!(bad, before);
}

#[test]
fn rand_categorical_follows_the_weights() {
    let w = Vector::from_vec(vec![1.0f64, 0.0, 3.0]);
    let mut r = rng(64);
    let mut counts = [0usize; 3];
    for _ in 0..40_000 {
        counts[w.rand_categorical(&mut r)] += 1;
    }
    assert_eq!(counts[1], 0);
    let frac = counts[2] as f64 / 40_000.0;
    assert!((frac - 0.75).abs() < 0.01, "{counts:?}");
}

#[test]
#[should_panic(expected = "rand_categorical: element 1 is -1, not a non-negative weight")]
fn rand_categorical_rejects_negative_weights() {
    let w = Vector::from_vec(vec![1.0f64, -1.0]);
    let _ = w.rand_categorical(&mut rng(1));
}

#[test]
fn orthogonalize_rows_gives_an_orthonormal_basis_of_the_same_span() {
    let mut r = rng(65);
    let m0 = random_matrix::<f64>(&mut r, 3, 5);
    let mut m = m0.clone();
    m.orthogonalize_rows(&mut r);
    let mut g = Matrix::<f64>::new(3, 3);
    g.add_mat_mat(1.0, &m, Trans::NoTrans, &m, Trans::Trans, 0.0);
    assert!(g.is_unit(1e-12), "{g:?}");
    // Gram-Schmidt in order: row 0 is row 0 normalised.
    let n0 = m0.row(0).norm(2.0);
    for c in 0..5 {
        assert!((m[(0, c)] - m0[(0, c)] / n0).abs() < 1e-12);
    }
    // A zero row and a repeated row are redrawn, and the result is still orthonormal.
    let mut d = Matrix::from_rows(&[[1.0f64, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]);
    d.orthogonalize_rows(&mut r);
    let mut g = Matrix::<f64>::new(3, 3);
    g.add_mat_mat(1.0, &d, Trans::NoTrans, &d, Trans::Trans, 0.0);
    assert!(g.is_unit(1e-12), "{g:?}");
    assert_eq!(d.row_data(0), &[1.0, 0.0, 0.0]);
}

#[test]
#[should_panic(
    expected = "orthogonalize_rows needs rows <= cols: shape 3 x 2 does not match shape 2 x 2"
)]
fn orthogonalize_rows_needs_rows_at_most_cols() {
    let mut m = Matrix::<f64>::new(3, 2);
    m.orthogonalize_rows(&mut rng(1));
}
