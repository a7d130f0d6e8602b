//! Issue 12's nnet kernels against naive loops over a `Vec<Vec<f64>>` model, on padded
//! matrices (NaN in the stride padding, which must stay untouched), in both precisions;
//! error paths with their exact variants; panics with their messages.

#![allow(clippy::needless_range_loop, clippy::type_complexity)]

use crate::common;

use common::*;
use dense_matrix::{
    trace_mat_mat_mat, trace_mat_mat_mat_mat, Error, Matrix, MatrixBase, Position, Real, Trans,
    Vector,
};

fn map_model(m: &Model, f: impl Fn(f64) -> f64) -> Model {
    m.iter()
        .map(|r| r.iter().map(|&x| f(x)).collect())
        .collect()
}

/// Runs `op(out, src)` for a padded output and source of random shapes and compares
/// with `f` applied to the source element by element.
fn check_copy_form<R: Real>(
    what: &str,
    op: impl Fn(&mut MatrixBase<R>, &MatrixBase<R>),
    f: impl Fn(f64) -> f64,
) {
    let mut r = rng(41);
    for _ in 0..10 {
        let (rows, cols) = shape(&mut r, 9);
        let src = Padded::<R>::random(&mut r, rows, cols);
        let mut out = Padded::<R>::random(&mut r, rows, cols);
        op(&mut out.view_mut(), &src.view());
        let want = map_model(&model_of(&src.view()), &f);
        assert_close::<R>(&model_of(&out.view()), &want, what);
        assert!(out.padding_untouched(), "{what} wrote into the padding");
    }
}

/// As `check_copy_form` for an in-place op.
fn check_in_place<R: Real>(what: &str, op: impl Fn(&mut MatrixBase<R>), f: impl Fn(f64) -> f64) {
    let mut r = rng(42);
    for _ in 0..10 {
        let (rows, cols) = shape(&mut r, 9);
        let mut m = Padded::<R>::random(&mut r, rows, cols);
        let want = map_model(&model_of(&m.view()), &f);
        op(&mut m.view_mut());
        assert_close::<R>(&model_of(&m.view()), &want, what);
        assert!(m.padding_untouched(), "{what} wrote into the padding");
    }
}

fn copy_forms<R: Real>() {
    let c = |x: f64| R::from_f64(x);
    check_copy_form::<R>("exp", |o, s| o.exp(s), f64::exp);
    check_copy_form::<R>(
        "pow_abs",
        |o, s| o.pow_abs(s, c(1.5), false),
        |x| x.abs().powf(1.5),
    );
    check_copy_form::<R>(
        "pow_abs signed",
        |o, s| o.pow_abs(s, c(0.5), true),
        |x| x.abs().sqrt() * if x < 0.0 { -1.0 } else { 1.0 },
    );
    check_copy_form::<R>("pow 3", |o, s| o.pow(s, c(3.0)).unwrap(), |x| x.powi(3));
    check_copy_form::<R>(
        "floor",
        |o, s| o.floor(s, c(-0.25)),
        |x| if x < -0.25 { -0.25 } else { x },
    );
    check_copy_form::<R>(
        "ceiling",
        |o, s| o.ceiling(s, c(0.25)),
        |x| if x > 0.25 { 0.25 } else { x },
    );
    check_copy_form::<R>(
        "heaviside",
        |o, s| o.heaviside(s),
        |x| if x > 0.0 { 1.0 } else { 0.0 },
    );
    check_copy_form::<R>(
        "exp_special",
        |o, s| o.exp_special(s),
        |x| if x < 0.0 { x.exp() } else { x + 1.0 },
    );
    check_copy_form::<R>(
        "exp_limited",
        |o, s| o.exp_limited(s, c(-0.5), c(0.25)),
        |x| x.clamp(-0.5, 0.25).exp(),
    );
    check_in_place::<R>(
        "apply_heaviside",
        |m| m.apply_heaviside(),
        |x| if x > 0.0 { 1.0 } else { 0.0 },
    );
    check_in_place::<R>(
        "apply_exp_special",
        |m| m.apply_exp_special(),
        |x| if x < 0.0 { x.exp() } else { x + 1.0 },
    );
    check_in_place::<R>(
        "apply_exp_limited",
        |m| m.apply_exp_limited(c(-0.5), c(0.25)),
        |x| x.clamp(-0.5, 0.25).exp(),
    );
    // log and fractional pow of the absolute values (positive sources).
    let mut r = rng(43);
    for _ in 0..10 {
        let (rows, cols) = shape(&mut r, 9);
        let mut src = Padded::<R>::random(&mut r, rows, cols);
        for i in 0..rows {
            src.view_mut().row_mut(i).apply_abs();
        }
        let mut out = Padded::<R>::random(&mut r, rows, cols);
        out.view_mut().log(&src.view()).unwrap();
        assert_close::<R>(
            &model_of(&out.view()),
            &map_model(&model_of(&src.view()), f64::ln),
            "log",
        );
        out.view_mut().pow(&src.view(), c(0.5)).unwrap();
        assert_close::<R>(
            &model_of(&out.view()),
            &map_model(&model_of(&src.view()), f64::sqrt),
            "pow 0.5",
        );
        assert!(out.padding_untouched());
    }
}

#[test]
fn copy_from_source_forms_match_per_element_models() {
    copy_forms::<f32>();
    copy_forms::<f64>();
}

#[test]
fn log_and_pow_of_negatives_are_errors_and_change_nothing() {
    let src = Matrix::from_rows(&[[1.0f64, 2.0], [3.0, -0.5]]);
    let mut out = Matrix::from_rows(&[[7.0f64, 7.0], [7.0, 7.0]]);
    let before = out.clone();
    assert_eq!(
        out.log(&src),
        Err(Error::LogOfNegative {
            position: Position::Matrix(1, 1),
            value: -0.5
        })
    );
    assert_eq!(
        out.pow(&src, 0.5),
        Err(Error::PowerOfNegative {
            position: Position::Matrix(1, 1),
            value: -0.5,
            power: 0.5
        })
    );
    assert!(out == before);
    // An integer power of a negative is fine.
    out.pow(&src, 2.0).unwrap();
    assert_eq!(out[(1, 1)], 0.25);
    let mut v = Vector::from_vec(vec![9.0f32, 9.0]);
    assert_eq!(
        v.apply_log_and_copy(&Vector::from_vec(vec![1.0, -2.0])),
        Err(Error::LogOfNegative {
            position: Position::Vector(1),
            value: -2.0
        })
    );
    assert_eq!(v.data(), &[9.0, 9.0]);
}

#[test]
#[should_panic(expected = "exp_limited: lower limit 1 is above the upper limit 0")]
fn exp_limited_rejects_crossed_limits() {
    let src = Matrix::<f64>::new(1, 1);
    let mut out = Matrix::<f64>::new(1, 1);
    out.exp_limited(&src, 1.0, 0.0);
}

#[test]
#[should_panic(expected = "exp: shape 2 x 3 does not match shape 3 x 2")]
fn copy_forms_check_the_shape() {
    let src = Matrix::<f64>::new(3, 2);
    let mut out = Matrix::<f64>::new(2, 3);
    out.exp(&src);
}

fn log_sum_exp_case<R: Real>() {
    let mut r = rng(44);
    for _ in 0..10 {
        let (rows, cols) = shape(&mut r, 9);
        let mut p = Padded::<R>::random(&mut r, rows, cols);
        p.view_mut().scale(R::from_f64(20.0));
        let m = model_of(&p.view());
        let all: Vec<f64> = m.iter().flatten().copied().collect();
        let naive = |prune: Option<f64>| -> f64 {
            if all.is_empty() {
                return f64::NEG_INFINITY;
            }
            let mx = all.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = all
                .iter()
                .filter(|&&x| prune.is_none_or(|p| x >= mx - p))
                .map(|x| (x - mx).exp())
                .sum();
            mx + s.ln()
        };
        for prune in [None, Some(5.0), Some(0.5)] {
            let got = p.view().log_sum_exp(prune.map(R::from_f64)).to_f64();
            let want = naive(prune);
            if want.is_infinite() {
                assert_eq!(got, want);
            } else {
                assert!(
                    (got - want).abs() <= tol::<R>() * 10.0 * want.abs().max(1.0),
                    "{got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn log_sum_exp_matches_the_naive_formula() {
    log_sum_exp_case::<f32>();
    log_sum_exp_case::<f64>();
    // Kaldi's identity: log_sum_exp of a matrix is that of its rows' concatenation.
    let m = Matrix::from_rows(&[[1.0f64, -2.0, 3.0], [0.5, 4.0, -1.0]]);
    let mut v = Vector::<f64>::new(6);
    v.copy_rows_from_mat(&m);
    let diff: f64 = m.log_sum_exp(None) - v.log_sum_exp(None);
    assert!(diff.abs() < 1e-14);
}

fn max_min_case<R: Real>() {
    let mut r = rng(45);
    for _ in 0..10 {
        let (rows, cols) = shape(&mut r, 9);
        let a = Padded::<R>::random(&mut r, rows, cols);
        let mut hi = Padded::<R>::random(&mut r, rows, cols);
        let mut lo = Padded::<R>::from_model(&mut r, &model_of(&hi.view()));
        let (am, bm) = (model_of(&a.view()), model_of(&hi.view()));
        hi.view_mut().max_elements(&a.view());
        lo.view_mut().min_elements(&a.view());
        let zip = |f: fn(f64, f64) -> f64| -> Model {
            am.iter()
                .zip(&bm)
                .map(|(x, y)| x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect())
                .collect()
        };
        assert_close::<R>(&model_of(&hi.view()), &zip(f64::max), "max_elements");
        assert_close::<R>(&model_of(&lo.view()), &zip(f64::min), "min_elements");
        assert!(hi.padding_untouched() && lo.padding_untouched());
    }
}

#[test]
fn element_wise_max_and_min() {
    max_min_case::<f32>();
    max_min_case::<f64>();
}

fn diag_scalings<R: Real>() {
    let mut r = rng(46);
    for _ in 0..10 {
        let (rows, cols) = shape(&mut r, 9);
        if rows == 0 {
            continue;
        }
        for trans in [Trans::NoTrans, Trans::Trans] {
            let m = match trans {
                Trans::NoTrans => Padded::<R>::random(&mut r, rows, cols),
                Trans::Trans => Padded::<R>::random(&mut r, cols, rows),
            };
            let opm = match trans {
                Trans::NoTrans => model_of(&m.view()),
                Trans::Trans => transpose(&model_of(&m.view())),
            };
            let vc = random_vector::<R>(&mut r, cols);
            let vr = random_vector::<R>(&mut r, rows);
            for beta in [0.0, 0.5] {
                let mut out = Padded::<R>::random(&mut r, rows, cols);
                let before = model_of(&out.view());
                out.view_mut().add_mat_diag_vec(
                    R::from_f64(2.0),
                    &m.view(),
                    trans,
                    &vc,
                    R::from_f64(beta),
                );
                let want: Model = (0..rows)
                    .map(|i| {
                        (0..cols)
                            .map(|j| beta * before[i][j] + 2.0 * opm[i][j] * vc[j].to_f64())
                            .collect()
                    })
                    .collect();
                assert_close::<R>(&model_of(&out.view()), &want, "add_mat_diag_vec");
                let mut out = Padded::<R>::random(&mut r, rows, cols);
                let before = model_of(&out.view());
                out.view_mut().add_diag_vec_mat(
                    R::from_f64(-1.5),
                    &vr,
                    &m.view(),
                    trans,
                    R::from_f64(beta),
                );
                let want: Model = (0..rows)
                    .map(|i| {
                        (0..cols)
                            .map(|j| beta * before[i][j] - 1.5 * vr[i].to_f64() * opm[i][j])
                            .collect()
                    })
                    .collect();
                assert_close::<R>(&model_of(&out.view()), &want, "add_diag_vec_mat");
                assert!(out.padding_untouched());
            }
        }
    }
}

#[test]
fn diagonal_scalings_match_loops() {
    diag_scalings::<f32>();
    diag_scalings::<f64>();
}

#[test]
#[should_panic(expected = "add_mat_diag_vec (cols): vector dim 2 does not match dim 3")]
fn add_mat_diag_vec_checks_the_vector() {
    let m = Matrix::<f64>::new(2, 3);
    let mut out = Matrix::<f64>::new(2, 3);
    out.add_mat_diag_vec(1.0, &m, Trans::NoTrans, &Vector::new(2), 0.0);
}

#[test]
fn gathers_and_scatters_by_index_and_by_row_slices() {
    let src = Matrix::from_rows(&[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    // add_cols: self(r, c) += src(r, idx[c]).
    let mut m = Matrix::from_rows(&[[10.0f64, 10.0], [20.0, 20.0]]);
    m.add_cols(&src, &[2, -1]);
    assert!(m == Matrix::from_rows(&[[13.0, 10.0], [26.0, 20.0]]));
    // add_to_rows: dst.row(idx[r]) += alpha * row r, repeated indexes accumulate.
    let rows3 = Matrix::from_rows(&[[1.0f64, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]);
    let mut dst = Matrix::<f64>::new(2, 3);
    rows3.add_to_rows(2.0, &[1, -1, 1], &mut dst);
    assert!(dst == Matrix::from_rows(&[[0.0, 0.0, 0.0], [8.0, 8.0, 8.0]]));
    // copy_to_rows / add_to_row_slices into optional destinations.
    let (mut a, mut b) = ([0.0f64; 3], [1.0f64; 3]);
    src.copy_to_rows(&mut [Some(&mut a[..]), None]);
    assert_eq!(a, [1.0, 2.0, 3.0]);
    src.add_to_row_slices(-1.0, &mut [None, Some(&mut b[..])]);
    assert_eq!(b, [-3.0, -4.0, -5.0]);
    // copy_rows_from_slices / add_rows_from_slices from optional sources.
    let mut m = Matrix::from_rows(&[[9.0f64, 9.0, 9.0], [9.0, 9.0, 9.0]]);
    m.copy_rows_from_slices(&[None, Some(&[7.0, 8.0, 9.0][..])]);
    assert!(m == Matrix::from_rows(&[[0.0, 0.0, 0.0], [7.0, 8.0, 9.0]]));
    m.add_rows_from_slices(0.5, &[Some(src.row_data(1)), None]);
    assert!(m == Matrix::from_rows(&[[2.0, 2.5, 3.0], [7.0, 8.0, 9.0]]));
    // copy_row_from_vec / copy_col_from_vec.
    m.copy_row_from_vec(&Vector::from_vec(vec![1.0, 1.0, 1.0]), 1);
    m.copy_col_from_vec(&Vector::from_vec(vec![-1.0, -2.0]), 2);
    assert!(m == Matrix::from_rows(&[[2.0, 2.5, -1.0], [1.0, 1.0, -2.0]]));
}

#[test]
#[should_panic(expected = "column 3 out of bounds for the source matrix with 3 columns")]
fn add_cols_rejects_an_index_past_the_source() {
    let src = Matrix::<f64>::new(2, 3);
    let mut m = Matrix::<f64>::new(2, 2);
    m.add_cols(&src, &[0, 3]);
}

#[test]
#[should_panic(
    expected = "copy_rows_from_slices: row slice 0 has 2 elements, the matrix has 3 columns"
)]
fn row_slices_must_have_the_row_length() {
    let mut m = Matrix::<f64>::new(1, 3);
    m.copy_rows_from_slices(&[Some(&[1.0, 2.0][..])]);
}

/// Group reductions and their derivatives against loops over each group; the
/// derivative of the p-norm also against a central finite difference.
fn groups<R: Real>() {
    let mut r = rng(47);
    for _ in 0..8 {
        let rows = 1 + (r.next_u32_helper() % 6) as usize;
        let groups = 1 + (r.next_u32_helper() % 4) as usize;
        let g = 1 + (r.next_u32_helper() % 4) as usize;
        let src = Padded::<R>::random(&mut r, rows, groups * g);
        let s = model_of(&src.view());
        for p in [0.0, 1.0, 2.0, 3.0, f64::INFINITY] {
            let mut out = Padded::<R>::random(&mut r, rows, groups);
            out.view_mut().group_pnorm(&src.view(), R::from_f64(p));
            let want: Model = s
                .iter()
                .map(|row| {
                    row.chunks(g)
                        .map(|grp| {
                            if p == 0.0 {
                                grp.iter().filter(|&&x| x != 0.0).count() as f64
                            } else if p.is_infinite() {
                                grp.iter().fold(0.0, |m: f64, x| m.max(x.abs()))
                            } else {
                                grp.iter()
                                    .map(|x| x.abs().powf(p))
                                    .sum::<f64>()
                                    .powf(1.0 / p)
                            }
                        })
                        .collect()
                })
                .collect();
            assert_close::<R>(&model_of(&out.view()), &want, "group_pnorm");
            assert!(out.padding_untouched());
            if p == 0.0 {
                continue;
            }
            let mut deriv = Padded::<R>::random(&mut r, rows, groups * g);
            deriv
                .view_mut()
                .group_pnorm_deriv(&src.view(), &out.view(), R::from_f64(p));
            let d = model_of(&deriv.view());
            for i in 0..rows {
                for j in 0..groups * g {
                    let (x, y) = (s[i][j], want[i][j / g]);
                    let sign = if x >= 0.0 { 1.0 } else { -1.0 };
                    let w = if p == 1.0 {
                        if x == 0.0 {
                            0.0
                        } else {
                            sign
                        }
                    } else if y == 0.0 {
                        0.0
                    } else if p.is_infinite() {
                        if (x.abs() - y).abs() <= 1e-7 * y {
                            sign
                        } else {
                            0.0
                        }
                    } else {
                        x.abs().powf(p - 1.0) * y.powf(1.0 - p) * sign
                    };
                    assert!(
                        (d[i][j] - w).abs() <= 1e-4 * (1.0 + w.abs()),
                        "group_pnorm_deriv p={p}"
                    );
                    if p == 2.0 || p == 3.0 {
                        // central difference of the group's norm in x
                        let h = 1e-6;
                        let grp: Vec<f64> = s[i][(j / g) * g..(j / g + 1) * g].to_vec();
                        let norm = |k: usize, dx: f64| -> f64 {
                            grp.iter()
                                .enumerate()
                                .map(|(t, v)| (if t == k { v + dx } else { *v }).abs().powf(p))
                                .sum::<f64>()
                                .powf(1.0 / p)
                        };
                        let fd = (norm(j % g, h) - norm(j % g, -h)) / (2.0 * h);
                        assert!((fd - w).abs() <= 1e-4, "finite difference {fd} vs {w}");
                    }
                }
            }
        }
        // maxout
        let mut mx = Padded::<R>::random(&mut r, rows, groups);
        mx.view_mut().group_max(&src.view());
        let want: Model = s
            .iter()
            .map(|row| {
                row.chunks(g)
                    .map(|grp| grp.iter().cloned().fold(f64::NEG_INFINITY, f64::max))
                    .collect()
            })
            .collect();
        assert_close::<R>(&model_of(&mx.view()), &want, "group_max");
        let mut d = Padded::<R>::random(&mut r, rows, groups * g);
        d.view_mut().group_max_deriv(&src.view(), &mx.view());
        let want_d: Model = s
            .iter()
            .zip(&want)
            .map(|(row, m)| {
                row.iter()
                    .enumerate()
                    .map(|(j, &x)| if x == m[j / g] { 1.0 } else { 0.0 })
                    .collect()
            })
            .collect();
        assert_eq!(model_of(&d.view()), want_d, "group_max_deriv");
        // mul_rows_group_mat
        let mut scaled = Padded::<R>::from_model(&mut r, &s);
        let scales = Padded::<R>::random(&mut r, rows, groups);
        scaled.view_mut().mul_rows_group_mat(&scales.view());
        let sc = model_of(&scales.view());
        let want: Model = s
            .iter()
            .enumerate()
            .map(|(i, row)| {
                row.iter()
                    .enumerate()
                    .map(|(j, &x)| x * sc[i][j / g])
                    .collect()
            })
            .collect();
        assert_close::<R>(&model_of(&scaled.view()), &want, "mul_rows_group_mat");
        assert!(d.padding_untouched() && scaled.padding_untouched() && mx.padding_untouched());
    }
}

/// A tiny deterministic helper so the group sizes vary without another RNG trait import.
trait NextU32 {
    fn next_u32_helper(&mut self) -> u32;
}
impl NextU32 for rand::rngs::StdRng {
    fn next_u32_helper(&mut self) -> u32 {
        rand::RngCore::next_u32(self)
    }
}

#[test]
fn group_reductions_and_derivatives_match_loops() {
    groups::<f32>();
    groups::<f64>();
}

#[test]
#[should_panic(
    expected = "group_pnorm (columns must be a multiple of the group count): shape 2 x 5 does not match shape 2 x 2"
)]
fn group_pnorm_needs_whole_groups() {
    let src = Matrix::<f64>::new(2, 5);
    let mut out = Matrix::<f64>::new(2, 2);
    out.group_pnorm(&src, 2.0);
}

#[test]
fn set_mat_mat_div_mat_keeps_a_where_c_is_zero() {
    let a = Matrix::from_rows(&[[1.0f64, 2.0], [3.0, 4.0]]);
    let b = Matrix::from_rows(&[[5.0f64, 6.0], [7.0, 8.0]]);
    let c = Matrix::from_rows(&[[2.0f64, 0.0], [0.5, 4.0]]);
    let mut out = Matrix::<f64>::new(2, 2);
    out.set_mat_mat_div_mat(&a, &b, &c);
    assert!(out == Matrix::from_rows(&[[2.5, 2.0], [42.0, 8.0]]));
}

fn traces<R: Real>() {
    let mut r = rng(48);
    let ops = [Trans::NoTrans, Trans::Trans];
    for _ in 0..4 {
        let (n1, n2, n3, n4) = (
            2 + r.next_u32_helper() as usize % 4,
            1 + r.next_u32_helper() as usize % 4,
            1 + r.next_u32_helper() as usize % 4,
            1 + r.next_u32_helper() as usize % 4,
        );
        for &ta in &ops {
            for &tb in &ops {
                for &tc in &ops {
                    // op(A): n1 x n2, op(B): n2 x n3, op(C): n3 x n1
                    let mk =
                        |r: &mut rand::rngs::StdRng, rows: usize, cols: usize, t: Trans| match t {
                            Trans::NoTrans => random_matrix::<R>(r, rows, cols),
                            Trans::Trans => random_matrix::<R>(r, cols, rows),
                        };
                    let opm = |m: &Matrix<R>, t: Trans| match t {
                        Trans::NoTrans => model_of(m),
                        Trans::Trans => transpose(&model_of(m)),
                    };
                    let a = mk(&mut r, n1, n2, ta);
                    let b = mk(&mut r, n2, n3, tb);
                    let c = mk(&mut r, n3, n1, tc);
                    let abc = matmul(&matmul(&opm(&a, ta), &opm(&b, tb)), &opm(&c, tc));
                    let want: f64 = (0..n1).map(|i| abc[i][i]).sum();
                    let got = trace_mat_mat_mat(&a, ta, &b, tb, &c, tc).to_f64();
                    assert!(
                        (got - want).abs() <= 100.0 * tol::<R>() * (1.0 + want.abs()),
                        "{got} vs {want}"
                    );
                    let c4 = mk(&mut r, n3, n4, tc);
                    let d = mk(&mut r, n4, n1, ta);
                    let abcd = matmul(
                        &matmul(&matmul(&opm(&a, ta), &opm(&b, tb)), &opm(&c4, tc)),
                        &opm(&d, ta),
                    );
                    let want: f64 = (0..n1).map(|i| abcd[i][i]).sum();
                    let got = trace_mat_mat_mat_mat(&a, ta, &b, tb, &c4, tc, &d, ta).to_f64();
                    assert!(
                        (got - want).abs() <= 100.0 * tol::<R>() * (1.0 + want.abs()),
                        "{got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn traces_of_three_and_four_products() {
    traces::<f32>();
    traces::<f64>();
}

#[test]
#[should_panic(
    expected = "trace_mat_mat_mat (op(A) op(B)): shape 2 x 3 does not match shape 2 x 2"
)]
fn trace_mat_mat_mat_checks_the_chain() {
    let a = Matrix::<f64>::new(2, 3);
    let b = Matrix::<f64>::new(2, 2);
    let _ = trace_mat_mat_mat(&a, Trans::NoTrans, &b, Trans::NoTrans, &a, Trans::Trans);
}

fn vector_ops<R: Real>() {
    let mut r = rng(49);
    for n in [1, 5, 17] {
        let v = random_vector::<R>(&mut r, n);
        let mut d = random_vector::<R>(&mut r, n);
        d.apply_abs();
        d.add(R::from_f64(0.5));
        for beta in [0.0, 2.0] {
            let mut out = random_vector::<R>(&mut r, n);
            let before = vec_model(&out);
            out.add_vec_div_vec(R::from_f64(3.0), &v, &d, R::from_f64(beta));
            let want: Vec<f64> = (0..n)
                .map(|i| beta * before[i] + 3.0 * v[i].to_f64() / d[i].to_f64())
                .collect();
            assert_vec_close(&out, &want, "add_vec_div_vec");
        }
        for (tm, tn) in [
            (Trans::NoTrans, Trans::NoTrans),
            (Trans::Trans, Trans::NoTrans),
            (Trans::NoTrans, Trans::Trans),
            (Trans::Trans, Trans::Trans),
        ] {
            let k = 4;
            let m = match tm {
                Trans::NoTrans => random_matrix::<R>(&mut r, n, k),
                Trans::Trans => random_matrix::<R>(&mut r, k, n),
            };
            let nn = match tn {
                Trans::NoTrans => random_matrix::<R>(&mut r, k, n),
                Trans::Trans => random_matrix::<R>(&mut r, n, k),
            };
            let opm = if tm == Trans::NoTrans {
                model_of(&m)
            } else {
                transpose(&model_of(&m))
            };
            let opn = if tn == Trans::NoTrans {
                model_of(&nn)
            } else {
                transpose(&model_of(&nn))
            };
            let prod = matmul(&opm, &opn);
            let mut out = random_vector::<R>(&mut r, n);
            let before = vec_model(&out);
            out.add_diag_mat_mat(R::from_f64(0.5), &m, tm, &nn, tn, R::from_f64(-1.0));
            let want: Vec<f64> = (0..n).map(|i| -before[i] + 0.5 * prod[i][i]).collect();
            assert_vec_close(&out, &want, "add_diag_mat_mat");
        }
        let mut out = Vector::<R>::new(n);
        out.apply_log_and_copy(&d).unwrap();
        let want: Vec<f64> = vec_model(&d).iter().map(|x| x.ln()).collect();
        assert_vec_close(&out, &want, "apply_log_and_copy");
    }
    let mut v = Vector::from_vec(vec![R::ONE, R::ZERO, R::ONE, R::from_f64(2.0)]);
    v.replace_value(R::ONE, R::from_f64(-3.0));
    assert_eq!(vec_model(&v), vec![-3.0, 0.0, -3.0, 2.0]);
}

#[test]
fn vector_methods_match_loops() {
    vector_ops::<f32>();
    vector_ops::<f64>();
}

/// From `DEFAULT_PARALLEL_THRESHOLD` elements on the row loops run on rayon: the results still equal the
/// per-element and per-group loops exactly (each element is computed the same way).
#[test]
fn parallel_paths_equal_the_loops() {
    let (rows, cols, g) = (260, 264, 4);
    assert!(rows * cols >= dense_matrix::DEFAULT_PARALLEL_THRESHOLD);
    let mut r = rng(50);
    let src = random_matrix::<f64>(&mut r, rows, cols);
    let s = model_of(&src);
    let v = random_vector::<f64>(&mut r, cols);
    let mut out = Matrix::<f64>::new(rows, cols);
    out.add_mat_diag_vec(2.0, &src, Trans::NoTrans, &v, 0.0);
    let mut special = Matrix::<f64>::new(rows, cols);
    special.exp_special(&src);
    let mut norms = Matrix::<f64>::new(rows, cols / g);
    norms.group_pnorm(&src, 2.0);
    let mut maxes = Matrix::<f64>::new(rows, cols / g);
    maxes.group_max(&src);
    for i in 0..rows {
        for j in 0..cols {
            assert_eq!(out[(i, j)], 2.0 * s[i][j] * v[j]);
            let x = s[i][j];
            assert_eq!(special[(i, j)], if x < 0.0 { x.exp() } else { x + 1.0 });
        }
        for k in 0..cols / g {
            let grp = &s[i][k * g..(k + 1) * g];
            let want = grp.iter().map(|x| x * x).sum::<f64>().sqrt();
            assert_eq!(norms[(i, k)], want);
            assert_eq!(
                maxes[(i, k)],
                grp.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
            );
        }
    }
}
