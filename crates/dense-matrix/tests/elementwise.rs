//! Element-wise, softmax, reduction, copy and gather operations against per-element
//! models; the seed's worked `ApplySoftMax`; NaN padding; sequential == parallel.

#![allow(clippy::type_complexity, clippy::needless_range_loop)]

use crate::common;

use common::*;
use dense_matrix::{
    Error, Matrix, MatrixBase, Position, Real, Trans, Vector, VectorBase,
    DEFAULT_PARALLEL_THRESHOLD,
};

/// Applies `op` to a padded random matrix and compares with `f` per element.
fn check_map<R: Real>(
    what: &str,
    op: impl Fn(&mut MatrixBase<R>),
    f: impl Fn(f64) -> f64,
    positive: bool,
) {
    let mut r = rng(21);
    for _ in 0..12 {
        let (rows, cols) = shape(&mut r, 9);
        let mut p = Padded::<R>::random(&mut r, rows, cols);
        if positive {
            for row in 0..rows {
                p.view_mut().row_mut(row).apply_abs();
            }
        }
        let before = model_of(&p.view());
        op(&mut p.view_mut());
        let want: Model = before
            .iter()
            .map(|row| row.iter().map(|&x| f(x)).collect())
            .collect();
        assert_close::<R>(&model_of(&p.view()), &want, what);
        assert!(p.padding_untouched(), "{what} wrote into the padding");
    }
}

fn element_wise<R: Real>() {
    let c = |x: f64| R::from_f64(x);
    check_map::<R>("add", |m| m.add(c(0.5)), |x| x + 0.5, false);
    check_map::<R>("scale", |m| m.scale(c(-2.0)), |x| -2.0 * x, false);
    check_map::<R>(
        "invert_elements",
        |m| m.invert_elements(),
        |x| 1.0 / x,
        true,
    );
    check_map::<R>("apply_log", |m| m.apply_log().unwrap(), f64::ln, true);
    check_map::<R>("apply_exp", |m| m.apply_exp(), f64::exp, false);
    check_map::<R>("apply_abs", |m| m.apply_abs(), f64::abs, false);
    check_map::<R>(
        "apply_pow",
        |m| m.apply_pow(c(1.5)).unwrap(),
        |x| x.powf(1.5),
        true,
    );
    check_map::<R>(
        "apply_pow 2",
        |m| m.apply_pow(c(2.0)).unwrap(),
        |x| x * x,
        false,
    );
    check_map::<R>(
        "apply_pow_abs signed",
        |m| m.apply_pow_abs(c(0.5), true),
        |x| x.abs().sqrt() * x.signum(),
        false,
    );
    check_map::<R>(
        "apply_floor",
        |m| m.apply_floor(c(-0.25)),
        |x| x.max(-0.25),
        false,
    );
    check_map::<R>(
        "apply_ceiling",
        |m| m.apply_ceiling(c(0.25)),
        |x| x.min(0.25),
        false,
    );
}

/// `add_to_diag` against a naive loop over `(i, i)`, `i < min(rows, cols)`, on padded
/// square and non-square matrices; a no-op would fail (the value added is non-zero).
fn add_to_diag_case<R: Real>() {
    let mut r = rng(23);
    for _ in 0..12 {
        let (rows, cols) = shape(&mut r, 9);
        let mut p = Padded::<R>::random(&mut r, rows, cols);
        let mut want = model_of(&p.view());
        for i in 0..rows.min(cols) {
            want[i][i] += 0.75;
        }
        p.view_mut().add_to_diag(R::from_f64(0.75));
        assert_close::<R>(&model_of(&p.view()), &want, "add_to_diag");
        assert!(p.padding_untouched(), "add_to_diag wrote into the padding");
    }
    let mut m = Matrix::<R>::new(2, 3);
    m.add_to_diag(R::from_f64(-2.0));
    let want = Matrix::from_rows(&[
        [R::from_f64(-2.0), R::ZERO, R::ZERO],
        [R::ZERO, R::from_f64(-2.0), R::ZERO],
    ]);
    assert!(m == want, "{m:?}");
}

#[test]
fn add_to_diag_adds_only_to_the_diagonal() {
    add_to_diag_case::<f32>();
    add_to_diag_case::<f64>();
}

#[test]
fn element_wise_ops_match_per_element_models() {
    element_wise::<f32>();
    element_wise::<f64>();
}

fn activations<R: Real>() {
    let mut r = rng(22);
    let (rows, cols) = (5, 7);
    let src = Padded::<R>::random(&mut r, rows, cols);
    let s = model_of(&src.view());
    let cases: [(&str, fn(&mut MatrixBase<R>, &MatrixBase<R>), fn(f64) -> f64); 3] = [
        ("sigmoid", |o, s| o.sigmoid(s), |x| 1.0 / (1.0 + (-x).exp())),
        ("tanh", |o, s| o.tanh(s), f64::tanh),
        (
            "soft_hinge",
            |o, s| o.soft_hinge(s),
            |x| (1.0 + x.exp()).ln(),
        ),
    ];
    for (what, op, f) in cases {
        let mut out = Padded::<R>::random(&mut r, rows, cols);
        op(&mut out.view_mut(), &src.view());
        let want: Model = s
            .iter()
            .map(|row| row.iter().map(|&x| f(x)).collect())
            .collect();
        assert_close::<R>(&model_of(&out.view()), &want, what);
        assert!(out.padding_untouched());
    }
    let diff = Padded::<R>::random(&mut r, rows, cols);
    let d = model_of(&diff.view());
    let mut out = Padded::<R>::random(&mut r, rows, cols);
    out.view_mut().diff_sigmoid(&src.view(), &diff.view());
    let want: Model = (0..rows)
        .map(|i| {
            (0..cols)
                .map(|j| d[i][j] * s[i][j] * (1.0 - s[i][j]))
                .collect()
        })
        .collect();
    assert_close::<R>(&model_of(&out.view()), &want, "diff_sigmoid");
    out.view_mut().diff_tanh(&src.view(), &diff.view());
    let want: Model = (0..rows)
        .map(|i| {
            (0..cols)
                .map(|j| d[i][j] * (1.0 - s[i][j] * s[i][j]))
                .collect()
        })
        .collect();
    assert_close::<R>(&model_of(&out.view()), &want, "diff_tanh");

    // vector versions
    let x = random_vector::<R>(&mut r, 9);
    let mut y = Vector::<R>::new(9);
    y.sigmoid(&x);
    let want: Vec<f64> = vec_model(&x)
        .iter()
        .map(|v| 1.0 / (1.0 + (-v).exp()))
        .collect();
    assert_vec_close(&y, &want, "vector sigmoid");
    y.tanh(&x);
    let want: Vec<f64> = vec_model(&x).iter().map(|v| v.tanh()).collect();
    assert_vec_close(&y, &want, "vector tanh");
}

#[test]
fn activations_and_their_derivatives_match_models() {
    activations::<f32>();
    activations::<f64>();
}

fn row_col_ops<R: Real>() {
    let mut r = rng(23);
    for _ in 0..10 {
        let (rows, cols) = shape(&mut r, 8);
        let vr = random_vector::<R>(&mut r, rows);
        let vc = random_vector::<R>(&mut r, cols);
        let (mr, mc) = (vec_model(&vr), vec_model(&vc));
        let cases: [(
            &str,
            Box<dyn Fn(&mut MatrixBase<R>)>,
            Box<dyn Fn(usize, usize, f64) -> f64>,
        ); 4] = [
            (
                "mul_rows_vec",
                Box::new(|m| m.mul_rows_vec(&vr)),
                Box::new(|i, _, x| x * mr[i]),
            ),
            (
                "mul_cols_vec",
                Box::new(|m| m.mul_cols_vec(&vc)),
                Box::new(|_, j, x| x * mc[j]),
            ),
            (
                "add_vec_to_rows",
                Box::new(|m| m.add_vec_to_rows(R::from_f64(2.0), &vc)),
                Box::new(|_, j, x| x + 2.0 * mc[j]),
            ),
            (
                "add_vec_to_cols",
                Box::new(|m| m.add_vec_to_cols(R::from_f64(-1.0), &vr)),
                Box::new(|i, _, x| x - mr[i]),
            ),
        ];
        for (what, op, f) in cases {
            let mut p = Padded::<R>::random(&mut r, rows, cols);
            let before = model_of(&p.view());
            op(&mut p.view_mut());
            let want: Model = (0..rows)
                .map(|i| (0..cols).map(|j| f(i, j, before[i][j])).collect())
                .collect();
            assert_close::<R>(&model_of(&p.view()), &want, what);
            assert!(p.padding_untouched());
        }
    }
}

#[test]
fn row_and_column_vector_ops_match_models() {
    row_col_ops::<f32>();
    row_col_ops::<f64>();
}

/// The seed's `ApplySoftMax`: `max = Max(); x = exp(x - max); Scale(1/sum); return max +
/// Log(sum)`, worked by hand for `[1, 2, 3]`.
#[test]
fn seed_apply_softmax_worked_example() {
    let mut v = Vector::from_vec(vec![1.0f64, 2.0, 3.0]);
    let log_norm = v.apply_softmax();
    // sum = e^-2 + e^-1 + 1 = 1.5032147244080551; ln(sum) = 0.4076059644443806
    assert!((log_norm - 3.4076059644443806).abs() < 1e-14);
    let want = [0.09003057317038046, 0.24472847105479767, 0.6652409557748219];
    for (got, want) in v.data().iter().zip(want) {
        assert!((got - want).abs() < 1e-15, "{got} vs {want}");
    }
    assert!((v.sum() - 1.0).abs() < 1e-15);

    let mut v32 = Vector::from_vec(vec![1.0f32, 2.0, 3.0]);
    assert!((v32.apply_softmax() - 3.407_606).abs() < 1e-6);

    // the log-softmax of the same input is x - log_norm
    let mut l = Vector::from_vec(vec![1.0f64, 2.0, 3.0]);
    assert!((l.apply_log_softmax() - 3.4076059644443806).abs() < 1e-14);
    assert!((l[0] - (1.0 - 3.4076059644443806)).abs() < 1e-14);
    assert!(
        (Vector::from_vec(vec![1.0f64, 2.0, 3.0]).log_sum_exp(None) - 3.4076059644443806).abs()
            < 1e-14
    );
    // pruning drops terms below max - prune: only 3 and 2 are kept
    let pruned = Vector::from_vec(vec![1.0f64, 2.0, 3.0]).log_sum_exp(Some(1.5));
    assert!((pruned - (3.0 + (1.0 + (-1.0f64).exp()).ln())).abs() < 1e-14);
}

#[test]
fn softmax_is_stable_for_large_inputs_and_matches_model_per_row() {
    let mut v = Vector::from_vec(vec![1000.0f64, 1000.0]);
    assert!((v.apply_softmax() - (1000.0 + 2f64.ln())).abs() < 1e-12);
    assert_eq!(v.data(), &[0.5, 0.5]);

    let mut r = rng(24);
    let mut p = Padded::<f32>::random(&mut r, 6, 11);
    let m = model_of(&p.view());
    p.view_mut().apply_softmax_per_row();
    let want: Model = m
        .iter()
        .map(|row| {
            let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = row.iter().map(|x| (x - mx).exp()).sum();
            row.iter().map(|x| (x - mx).exp() / s).collect()
        })
        .collect();
    assert_close::<f32>(&model_of(&p.view()), &want, "apply_softmax_per_row");
    assert!(p.padding_untouched());

    let mut whole = Padded::<f64>::random(&mut r, 3, 5);
    let m = model_of(&whole.view());
    let log_norm = whole.view_mut().apply_softmax();
    let lse = m.iter().flatten().map(|x| x.exp()).sum::<f64>().ln();
    assert!((log_norm - lse).abs() < 1e-12);
    assert!((whole.view().sum() - 1.0).abs() < 1e-12);
}

fn reductions<R: Real>() {
    let mut r = rng(25);
    for _ in 0..20 {
        let (rows, cols) = shape(&mut r, 9);
        let p = Padded::<R>::random(&mut r, rows, cols);
        let m = model_of(&p.view());
        let flat: Vec<f64> = m.iter().flatten().cloned().collect();
        let v = p.view();
        let close = |got: R, want: f64| {
            (got.to_f64() - want).abs() <= tol::<R>() * 10.0 * (1.0 + want.abs())
        };
        assert!(close(v.sum(), flat.iter().sum()));
        assert!(close(v.frobenius_norm(), frob(&m)));
        assert_eq!(
            v.max().to_f64(),
            flat.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
        );
        assert_eq!(
            v.min().to_f64(),
            flat.iter().cloned().fold(f64::INFINITY, f64::min)
        );
        assert_eq!(
            v.largest_abs_elem().to_f64(),
            flat.iter().map(|x| x.abs()).fold(0.0, f64::max)
        );
        if rows == cols {
            assert!(close(v.trace(), (0..rows).map(|i| m[i][i]).sum()));
        }
        let vec = Vector::<R>::from_vec(flat.iter().map(|&x| R::from_f64(x)).collect());
        for p_norm in [0.0, 1.0, 2.0, 3.0] {
            let want = if p_norm == 0.0 {
                flat.iter().filter(|&&x| x != 0.0).count() as f64
            } else {
                flat.iter()
                    .map(|x| x.abs().powf(p_norm))
                    .sum::<f64>()
                    .powf(1.0 / p_norm)
            };
            assert!(close(vec.norm(R::from_f64(p_norm)), want), "norm({p_norm})");
        }
        assert_eq!(
            vec.norm(R::INFINITY).to_f64(),
            flat.iter().map(|x| x.abs()).fold(0.0, f64::max)
        );
        if !flat.is_empty() {
            let (mx, imx) = vec.max_index();
            assert_eq!(mx.to_f64(), flat[imx]);
            assert!(flat.iter().all(|&x| x <= mx.to_f64()));
            let (mn, imn) = vec.min_index();
            assert_eq!(mn.to_f64(), flat[imn]);
            let pos =
                Vector::<R>::from_vec(flat.iter().map(|&x| R::from_f64(x.abs() + 0.5)).collect());
            assert!(close(
                pos.sum_log(),
                flat.iter().map(|x| (x.abs() + 0.5).ln()).sum()
            ));
        }
    }
    let empty = Vector::<R>::empty();
    assert_eq!(empty.max(), R::NEG_INFINITY);
    assert_eq!(empty.sum(), R::ZERO);
}

#[test]
fn reductions_match_models() {
    reductions::<f32>();
    reductions::<f64>();
}

#[test]
fn kaldi_predicates() {
    let sym = Matrix::from_rows(&[[2.0f64, 1.0], [1.0, 3.0]]);
    assert!(sym.is_symmetric(1e-5));
    let almost = Matrix::from_rows(&[[2.0f64, 1.0], [1.0 + 1e-7, 3.0]]);
    assert!(almost.is_symmetric(1e-5));
    assert!(!Matrix::from_rows(&[[2.0f64, 1.0], [0.0, 3.0]]).is_symmetric(1e-5));
    assert!(!Matrix::<f64>::new(2, 3).is_symmetric(1e-5));
    assert!(Matrix::from_rows(&[[2.0f64, 0.0], [1e-9, 3.0]]).is_diagonal(1e-5));
    assert!(!sym.is_diagonal(1e-5));
    assert!(Matrix::<f32>::eye(3).is_unit(0.0));
    assert!(!sym.is_unit(1e-5));
    assert!(Matrix::<f32>::new(2, 2).is_zero(0.0));
    assert!(!sym.is_zero(1.0));
    let a = Matrix::from_rows(&[[1.0f64, 2.0], [3.0, 4.0]]);
    let mut b = a.clone();
    b[(0, 0)] += 0.01;
    assert!(a.approx_equal(&b, 0.01));
    assert!(!a.approx_equal(&b, 0.001));
}

#[test]
fn bad_input_errors_name_the_position_and_leave_data_unchanged() {
    let mut m = Matrix::from_rows(&[[1.0f64, 2.0], [3.0, -4.0]]);
    assert_eq!(
        m.apply_log(),
        Err(Error::LogOfNegative {
            position: Position::Matrix(1, 1),
            value: -4.0
        })
    );
    assert_eq!(m[(0, 1)], 2.0);
    assert_eq!(
        m.apply_pow(0.5),
        Err(Error::PowerOfNegative {
            position: Position::Matrix(1, 1),
            value: -4.0,
            power: 0.5
        })
    );
    let mut v = Vector::from_vec(vec![1.0f32, -1.0]);
    assert_eq!(
        v.apply_log().unwrap_err().to_string(),
        "cannot take the log of -1 at element 1"
    );
    assert!(v.apply_pow(3.0).is_ok());
    assert_eq!(v.data(), &[1.0, -1.0]);
}

fn copies<R: Real>() {
    let mut r = rng(26);
    let src = Padded::<R>::random(&mut r, 4, 3);
    let s = model_of(&src.view());
    // copy_from_mat with transpose, and across precisions
    let mut t = Matrix::<R>::new(3, 4);
    t.copy_from_mat(&src.view(), Trans::Trans);
    assert_eq!(model_of(&t), transpose(&s));
    let mut other = Matrix::<f64>::new(4, 3);
    other.copy_from_mat(&src.view(), Trans::NoTrans);
    assert_eq!(model_of(&other), s);
    // rows / cols / diag to and from vectors
    let mut flat = Vector::<R>::new(12);
    flat.copy_rows_from_mat(&src.view());
    assert_eq!(
        vec_model(&flat),
        s.iter().flatten().cloned().collect::<Vec<_>>()
    );
    let mut back = Matrix::<R>::new(4, 3);
    back.copy_rows_from_vec(&flat);
    assert_eq!(model_of(&back), s);
    let mut cols = Vector::<R>::new(12);
    cols.copy_cols_from_mat(&src.view());
    assert_eq!(
        vec_model(&cols),
        transpose(&s).into_iter().flatten().collect::<Vec<_>>()
    );
    let mut back = Matrix::<R>::new(4, 3);
    back.copy_cols_from_vec(&cols);
    assert_eq!(model_of(&back), s);
    let mut row = Vector::<R>::new(3);
    row.copy_row_from_mat(&src.view(), 2);
    assert_eq!(vec_model(&row), s[2]);
    let mut col = Vector::<R>::new(4);
    col.copy_col_from_mat(&src.view(), 1);
    assert_eq!(vec_model(&col), (0..4).map(|i| s[i][1]).collect::<Vec<_>>());
    let mut diag = Vector::<R>::new(3);
    diag.copy_diag_from_mat(&src.view());
    assert_eq!(
        vec_model(&diag),
        (0..3).map(|i| s[i][i]).collect::<Vec<_>>()
    );
    let mut every_row = Matrix::<R>::new(2, 3);
    every_row.copy_rows_from_vec(&row);
    assert_eq!(model_of(&every_row), vec![s[2].clone(), s[2].clone()]);
    let mut every_col = Matrix::<R>::new(4, 2);
    every_col.copy_cols_from_vec(&col);
    assert_eq!(
        model_of(&every_col),
        (0..4).map(|i| vec![s[i][1]; 2]).collect::<Model>()
    );
    // gathers with -1 giving zeros
    let mut g = Matrix::<R>::new(3, 3);
    g.copy_rows(&src.view(), &[3, -1, 0]);
    assert_eq!(model_of(&g), vec![s[3].clone(), vec![0.0; 3], s[0].clone()]);
    let mut gc = Matrix::<R>::new(4, 2);
    gc.copy_cols(&src.view(), &[2, -1]);
    assert_eq!(
        model_of(&gc),
        (0..4).map(|i| vec![s[i][2], 0.0]).collect::<Model>()
    );
    let mut acc = Matrix::<R>::new(2, 3);
    acc.set(R::ONE);
    acc.add_rows(R::from_f64(2.0), &src.view(), &[1, -1]);
    let want: Model = vec![s[1].iter().map(|x| 1.0 + 2.0 * x).collect(), vec![1.0; 3]];
    assert_close::<R>(&model_of(&acc), &want, "add_rows");
    // lower to upper
    let mut sq = Matrix::from_rows(
        &[[1.0, 9.0, 9.0], [2.0, 3.0, 9.0], [4.0, 5.0, 6.0]].map(|row| row.map(R::from_f64)),
    );
    sq.copy_lower_to_upper();
    assert!(sq.is_symmetric(R::ZERO));
    assert_eq!(sq[(0, 2)].to_f64(), 4.0);
    let mut d = Matrix::<R>::new(2, 2);
    d.copy_diag_from_vec(&Vector::from_vec(vec![R::ONE, R::from_f64(2.0)]));
    assert_eq!(model_of(&d), vec![vec![1.0, 0.0], vec![0.0, 2.0]]);
}

#[test]
fn copies_and_gathers_match_models() {
    copies::<f32>();
    copies::<f64>();
}

#[test]
#[should_panic(expected = "row 4 out of bounds for the source matrix with 4 rows")]
fn gather_index_out_of_range_panics() {
    let src = Matrix::<f64>::new(4, 2);
    Matrix::<f64>::new(1, 2).copy_rows(&src, &[4]);
}

/// Element-wise results on a matrix big enough to take the parallel path equal the same
/// operation applied row by row (each row alone takes the sequential path); sums are
/// bit-identical to the row sums added in order.
#[test]
fn parallel_path_equals_sequential_path() {
    let mut r = rng(27);
    let (rows, cols) = (300, 301);
    assert!(rows * cols >= DEFAULT_PARALLEL_THRESHOLD && cols < DEFAULT_PARALLEL_THRESHOLD);
    let src = random_matrix::<f32>(&mut r, rows, cols);
    let ops: [(&str, fn(&mut MatrixBase<f32>)); 4] = [
        ("apply_exp", |m| m.apply_exp()),
        ("apply_softmax_per_row", |m| m.apply_softmax_per_row()),
        ("scale", |m| m.scale(1.7)),
        ("apply_pow_abs", |m| m.apply_pow_abs(0.3, true)),
    ];
    for (what, op) in ops {
        let mut big = src.clone();
        op(&mut big);
        let mut by_rows = src.clone();
        for i in 0..rows {
            op(&mut by_rows.range_mut(i, 1, 0, cols));
        }
        assert!(big == by_rows, "{what}: parallel and sequential differ");
    }
    let seq_sum: f64 = (0..rows)
        .map(|i| src.row(i).data().iter().map(|&x| x as f64).sum::<f64>())
        .sum();
    assert_eq!(src.sum(), seq_sum as f32);
    // vectors: the long vector's exp equals the exp of its pieces
    let long: Vector<f64> = random_vector(&mut r, DEFAULT_PARALLEL_THRESHOLD + 123);
    let mut a = long.clone();
    a.apply_exp();
    let mut b = long.clone();
    for chunk in b.data_mut().chunks_mut(1000) {
        VectorBase::from_slice_mut(chunk).apply_exp();
    }
    assert!(a == b);
    let seq: f64 = long
        .data()
        .chunks(1 << 13)
        .map(|c| c.iter().sum::<f64>())
        .sum();
    assert_eq!(long.sum(), seq);
}

/// Kaldi's test fills the stride padding with NaN and checks nothing leaks: results
/// computed on a NaN-padded view equal those computed on a dense copy.
#[test]
fn nan_in_stride_padding_never_leaks() {
    let mut r = rng(28);
    for _ in 0..10 {
        let (rows, cols) = shape(&mut r, 7);
        let p = Padded::<f64>::random(&mut r, rows, cols);
        let dense = p.view().to_matrix();
        let v = p.view();
        assert!(!v.sum().is_nan() && !v.max().is_nan() && !v.frobenius_norm().is_nan());
        assert_eq!(v.sum(), dense.sum());
        let mut prod = Matrix::<f64>::new(rows, rows);
        prod.add_mat_mat(1.0, &v, Trans::NoTrans, &v, Trans::Trans, 0.0);
        assert!(prod.rows().flatten().all(|x| !x.is_nan()));
        if rows > 0 {
            let svd = v.svd().unwrap();
            assert!(svd.s.data().iter().all(|x| !x.is_nan()));
            let mut copy = dense.clone();
            copy.add_mat(1.0, &v, Trans::Trans.flip_if(rows != cols));
            assert!(copy.rows().flatten().all(|x| !x.is_nan()));
        }
        assert_eq!(v.as_array().iter().filter(|x| x.is_nan()).count(), 0);
    }
}

trait Flip {
    fn flip_if(self, cond: bool) -> Trans;
}
impl Flip for Trans {
    /// `NoTrans` when the shapes force it, else `self`.
    fn flip_if(self, non_square: bool) -> Trans {
        if non_square {
            Trans::NoTrans
        } else {
            self
        }
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn matrix_strategy() -> impl Strategy<Value = (usize, usize, Vec<f64>, usize)> {
        (1usize..12, 1usize..12, 0usize..3).prop_flat_map(|(r, c, pad)| {
            (
                Just(r),
                Just(c),
                proptest::collection::vec(-30.0f64..30.0, r * c),
                Just(pad),
            )
        })
    }

    fn padded(r: usize, c: usize, vals: &[f64], pad: usize) -> Padded<f64> {
        let stride = c + pad;
        let mut buf = vec![f64::NAN; r * stride];
        for i in 0..r {
            buf[i * stride..i * stride + c].copy_from_slice(&vals[i * c..(i + 1) * c]);
        }
        Padded {
            buf,
            rows: r,
            cols: c,
            stride,
        }
    }

    /// The fixed proptest seed of this file, printed so a failure names it.
    const SEED: u64 = 5;

    fn config() -> ProptestConfig {
        eprintln!("proptest: rng_seed = RngSeed::Fixed({SEED}), 64 cases");
        ProptestConfig {
            cases: 64,
            rng_seed: proptest::test_runner::RngSeed::Fixed(SEED),
            ..ProptestConfig::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// Softmax per row against the textbook formula; log-softmax is its log.
        #[test]
        fn softmax_per_row_matches_the_formula((r, c, vals, pad) in matrix_strategy()) {
            let mut p = padded(r, c, &vals, pad);
            p.view_mut().apply_softmax_per_row();
            let mut l = padded(r, c, &vals, pad);
            l.view_mut().apply_log_softmax_per_row();
            for i in 0..r {
                let row = &vals[i * c..(i + 1) * c];
                let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let s: f64 = row.iter().map(|x| (x - mx).exp()).sum();
                for j in 0..c {
                    let want = (row[j] - mx).exp() / s;
                    prop_assert!((p.view()[(i, j)] - want).abs() <= 1e-13);
                    prop_assert!((l.view()[(i, j)] - want.ln()).abs() <= 1e-12 * (1.0 + want.ln().abs()));
                }
            }
            prop_assert!(p.padding_untouched() && l.padding_untouched());
        }

        /// Transposing twice is the identity, and `transpose` agrees with `copy_from_mat(Trans)`.
        #[test]
        fn transpose_round_trip((r, c, vals, pad) in matrix_strategy()) {
            let p = padded(r, c, &vals, pad);
            let mut m = p.view().to_matrix();
            m.transpose();
            let mut t = Matrix::<f64>::new(c, r);
            t.copy_from_mat(&p.view(), Trans::Trans);
            prop_assert!(m == t);
            m.transpose();
            prop_assert!(*m == *p.view());
        }
    }
}

/// `set_randn` / `set_rand_uniform` draw from the stated distributions (moments of 40 k
/// samples) and are reproducible from the generator's seed.
#[test]
fn random_fills_have_the_stated_moments() {
    let mut m = Matrix::<f64>::new(200, 200);
    m.set_randn(&mut rng(1));
    let n = 40_000.0;
    let mean = m.sum() / n;
    let var = m.frobenius_norm().powi(2) / n - mean * mean;
    assert!(
        mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
        "mean {mean} var {var}"
    );
    let mut again = Matrix::<f64>::new(200, 200);
    again.set_randn(&mut rng(1));
    assert!(m == again);
    let mut v = Vector::<f32>::new(40_000);
    v.set_rand_uniform(&mut rng(2));
    assert!(v.min() >= 0.0 && v.max() < 1.0);
    assert!((v.sum() / 40_000.0 - 0.5).abs() < 0.01);
}
