//! `linear_cgd` and `OptimizeLbfgs` (Kaldi's `optimization.h`): CGD against the solution
//! by LU inversion, Kaldi's `UnitTestLinearCgd` bounds, and errors for indefinite systems;
//! L-BFGS on Rosenbrock, on Kaldi's `UnitTestLbfgs` objective (both directions), and on
//! random convex quadratics against scipy's minimiser and the closed form
//! (`golden/lbfgs_goldens.txt`, written by `golden/gen_lbfgs_goldens.py`).
#![allow(clippy::needless_range_loop)]

use crate::common;

use common::rng;
use dense_matrix::{
    linear_cgd, vec_vec, Error, LbfgsOptions, LinearCgdOptions, Matrix, OptimizeLbfgs, Real,
    SpCopyType, SpMatrix, Trans, Vector, VectorBase,
};
use rand::rngs::StdRng;
use rand::Rng;

const SEED: u64 = 0xc9d_1bf9;

/// A random symmetric positive definite matrix `Q Q^T + n/2 I`.
fn random_spd<R: Real>(g: &mut StdRng, n: usize) -> Matrix<R> {
    let mut q = Matrix::<R>::new(n, n);
    q.set_randn(g);
    let mut s = Matrix::<R>::new(n, n);
    s.add_mat_mat(R::ONE, &q, Trans::NoTrans, &q, Trans::Trans, R::ZERO);
    s.add_to_diag(R::from_f64(0.5 * n as f64));
    s
}

/// `A^{-1} b` by LU inversion (the independent model).
fn solve(a: &Matrix<f64>, b: &VectorBase<f64>) -> Vector<f64> {
    let mut inv = a.clone();
    inv.invert().unwrap();
    let mut x = Vector::new(b.dim());
    x.add_mat_vec(1.0, &inv, Trans::NoTrans, b, 0.0);
    x
}

fn residual_norm(a: &SpMatrix<f64>, b: &VectorBase<f64>, x: &VectorBase<f64>) -> f64 {
    let mut r = b.to_vector();
    r.add_sp_vec(-1.0, a, x, 1.0);
    r.norm(2.0)
}

#[test]
fn cgd_solves_spd_systems_to_rounding() {
    let mut g = rng(SEED);
    eprintln!("linear_cgd: seed {SEED:#x}");
    for _ in 0..30 {
        let n = g.random_range(1..=20);
        let a = random_spd::<f64>(&mut g, n);
        let sp = SpMatrix::from_mat(&a, SpCopyType::TakeLower);
        let mut b = Vector::new(n);
        b.set_randn(&mut g);
        let want = solve(&a, &b);
        let mut x = Vector::new(n);
        x.set_randn(&mut g);
        let iters = linear_cgd(&LinearCgdOptions::default(), &sp, &b, &mut x).unwrap();
        assert!(iters <= n + 5, "{iters} iterations for dimension {n}");
        let mut diff = x.clone();
        diff.add_vec(-1.0, &want);
        assert!(
            diff.norm(2.0) <= 1e-9 * want.norm(2.0).max(1.0),
            "n {n}: error {}",
            diff.norm(2.0)
        );
    }
}

#[test]
fn cgd_in_f32_reaches_f32_accuracy() {
    let mut g = rng(SEED + 1);
    let n = 12;
    let a = random_spd::<f32>(&mut g, n);
    let sp = SpMatrix::from_mat(&a, SpCopyType::TakeLower);
    let mut b = Vector::<f32>::new(n);
    b.set_randn(&mut g);
    let mut x = Vector::<f32>::new(n);
    linear_cgd(&LinearCgdOptions::default(), &sp, &b, &mut x).unwrap();
    let a64 =
        Matrix::<f64>::from_vec(n, n, a.rows().flatten().map(|&v| f64::from(v)).collect()).unwrap();
    let mut b64 = Vector::<f64>::new(n);
    b64.copy_from_vec(&b);
    let want = solve(&a64, &b64);
    for i in 0..n {
        assert!(
            (f64::from(x[i]) - want[i]).abs() < 1e-4 * want.norm(2.0),
            "{i}"
        );
    }
}

/// Kaldi's `UnitTestLinearCgd`: with `max_iters` the count is bounded; stopping early on
/// `max_error` leaves a residual within it (Kaldi allows 10% wiggle room).
#[test]
fn cgd_respects_max_iters_and_max_error() {
    let mut g = rng(SEED + 2);
    eprintln!("linear_cgd limits: seed {:#x}", SEED + 2);
    for case in 0..40 {
        let n = g.random_range(1..=20);
        let a = random_spd::<f64>(&mut g, n);
        let sp = SpMatrix::from_mat(&a, SpCopyType::TakeLower);
        let mut x_true = Vector::new(n);
        x_true.set_randn(&mut g);
        let mut b = Vector::new(n);
        b.add_sp_vec(1.0, &sp, &x_true, 0.0);
        let opts = LinearCgdOptions {
            max_iters: (case % 2 == 0).then(|| g.random_range(1..=10)),
            max_error: if case % 4 < 2 { 1.0 } else { 0.0 },
            ..LinearCgdOptions::default()
        };
        let mut x = Vector::new(n);
        x.set_randn(&mut g);
        let iters = linear_cgd(&opts, &sp, &b, &mut x).unwrap();
        let err = residual_norm(&sp, &b, &x);
        if let Some(max) = opts.max_iters {
            assert!(iters <= max, "{iters} > {max}");
        }
        let stopped_early = opts.max_iters.is_none_or(|max| iters < max) && iters < n + 5;
        if stopped_early {
            let bound = if opts.max_error > 0.0 {
                1.1 * opts.max_error
            } else {
                1e-8 * b.norm(2.0).max(1.0)
            };
            assert!(err <= bound, "case {case}: residual {err} after {iters}");
        }
    }
}

#[test]
fn cgd_defaults_are_kaldis() {
    let o = LinearCgdOptions::default();
    assert_eq!(
        (o.max_iters, o.max_error, o.recompute_residual_factor),
        (None, 0.0, 0.01)
    );
}

#[test]
fn cgd_from_the_exact_solution_does_nothing() {
    let a = SpMatrix::from_packed(2, vec![2.0f64, 1.0, 3.0]).unwrap();
    let x0 = Vector::from_vec(vec![1.0, -1.0]);
    let mut b = Vector::new(2);
    b.add_sp_vec(1.0, &a, &x0, 0.0);
    let mut x = x0.clone();
    assert_eq!(
        linear_cgd(&LinearCgdOptions::default(), &a, &b, &mut x),
        Ok(0)
    );
    assert_eq!(x, x0);
}

#[test]
fn cgd_on_an_indefinite_matrix_is_an_error_and_keeps_x() {
    // diag(1, -1): the first direction (1, 1) has p^T A p = 0
    let a = SpMatrix::from_packed(2, vec![1.0f64, 0.0, -1.0]).unwrap();
    let b = Vector::from_vec(vec![1.0, 1.0]);
    let mut x = Vector::new(2);
    let e = linear_cgd(&LinearCgdOptions::default(), &a, &b, &mut x).unwrap_err();
    assert_eq!(
        e,
        Error::CgdNotPositiveDefinite {
            iteration: 0,
            curvature: 0.0
        }
    );
    assert_eq!(x.data(), &[0.0, 0.0]);
    assert_eq!(
        e.to_string(),
        "linear_cgd: p^T A p = 0 at iteration 0; A is not positive definite"
    );
    // diag(2, -1): the second direction (6, 12) has p^T A p = 72 - 144 = -72
    let a = SpMatrix::from_packed(2, vec![2.0f64, 0.0, -1.0]).unwrap();
    let mut x = Vector::from_vec(vec![0.5, 0.25]);
    let before = x.clone();
    let mut b2 = Vector::from_vec(vec![1.0, 1.0]);
    // shift b so that r_0 = A x_0 - b is (-1, -1) as in the hand computation
    b2.add_sp_vec(1.0, &a, &before, 1.0);
    let e = linear_cgd(&LinearCgdOptions::default(), &a, &b2, &mut x).unwrap_err();
    assert_eq!(
        e,
        Error::CgdNotPositiveDefinite {
            iteration: 1,
            curvature: -72.0
        }
    );
    assert_eq!(x, before);
}

#[test]
fn cgd_stopping_with_a_grown_residual_is_an_error_and_keeps_x() {
    // diag(2, -1), b = (1, 1), x = 0: r_0 = (-1, -1) (|r|^2 = 2), p = (1, 1), p^T A p = 1,
    // alpha = 2, x = (2, 2), r = (3, -3) (|r|^2 = 18); one iteration allowed, so it ends there
    let a = SpMatrix::from_packed(2, vec![2.0f64, 0.0, -1.0]).unwrap();
    let b = Vector::from_vec(vec![1.0, 1.0]);
    let mut x = Vector::new(2);
    let opts = LinearCgdOptions {
        max_iters: Some(1),
        ..LinearCgdOptions::default()
    };
    assert_eq!(
        linear_cgd(&opts, &a, &b, &mut x),
        Err(Error::CgdResidualGrew {
            iterations: 1,
            residual_sq: 18.0,
            initial_sq: 2.0
        })
    );
    assert_eq!(x.data(), &[0.0, 0.0]);
}

#[test]
fn cgd_error_messages_name_the_numbers() {
    assert_eq!(
        Error::CgdResidualGrew {
            iterations: 7,
            residual_sq: 4.0,
            initial_sq: 1.0
        }
        .to_string(),
        "linear_cgd: after 7 iterations the squared residual 4 is above the initial 1; A is \
         not positive definite or too badly conditioned"
    );
}

#[test]
#[should_panic(expected = "linear_cgd: b dim 3 does not match A dim 2")]
fn cgd_checks_dimensions() {
    let a = SpMatrix::<f64>::new(2);
    let _ = linear_cgd(
        &LinearCgdOptions::default(),
        &a,
        &Vector::new(3),
        &mut Vector::new(2),
    );
}

/// Runs L-BFGS on `objective` (value and gradient) until the recent step length is below
/// `tol` or `max_evals` evaluations; returns the best point, its value and the count.
fn run<R: Real>(
    opt: &mut OptimizeLbfgs<R>,
    tol: f64,
    max_evals: usize,
    objective: impl Fn(&[f64]) -> (f64, Vec<f64>),
) -> (Vec<f64>, f64, usize) {
    let mut evals = 0;
    while opt.recent_step_length().to_f64() > tol && evals < max_evals {
        let x: Vec<f64> = opt
            .get_proposed_value()
            .data()
            .iter()
            .map(|v| v.to_f64())
            .collect();
        let (f, grad) = objective(&x);
        let g = Vector::from_vec(grad.into_iter().map(R::from_f64).collect());
        opt.do_step(R::from_f64(f), &g);
        evals += 1;
    }
    let (x, f) = opt.get_value();
    (
        x.data().iter().map(|v| v.to_f64()).collect(),
        f.to_f64(),
        evals,
    )
}

fn rosenbrock(x: &[f64]) -> (f64, Vec<f64>) {
    let (a, b) = (x[0], x[1]);
    let f = (1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2);
    let g = vec![
        -2.0 * (1.0 - a) - 400.0 * a * (b - a * a),
        200.0 * (b - a * a),
    ];
    (f, g)
}

#[test]
fn lbfgs_minimises_rosenbrock_from_the_classic_start() {
    let mut opt = OptimizeLbfgs::new(
        &Vector::from_vec(vec![-1.2f64, 1.0]),
        LbfgsOptions::default(),
    );
    let (x, f, evals) = run(&mut opt, 1e-12, 5000, rosenbrock);
    assert!(
        (x[0] - 1.0).abs() < 1e-6 && (x[1] - 1.0).abs() < 1e-6,
        "{x:?} after {evals} evaluations"
    );
    assert!(f < 1e-12, "{f}");
}

#[test]
fn lbfgs_maximises_negated_rosenbrock() {
    let mut opt = OptimizeLbfgs::new(
        &Vector::from_vec(vec![-1.2f64, 1.0]),
        LbfgsOptions::new(false),
    );
    let (x, f, _) = run(&mut opt, 1e-12, 5000, |x| {
        let (f, g) = rosenbrock(x);
        (-f, g.into_iter().map(|v| -v).collect())
    });
    assert!(
        (x[0] - 1.0).abs() < 1e-6 && (x[1] - 1.0).abs() < 1e-6,
        "{x:?}"
    );
    assert!(f > -1e-12);
}

/// Kaldi's `UnitTestLbfgs`: `f = exp(0.01 (x^T v - x^T S x / 2))`, maximised (or its
/// negation minimised), whose optimum is `S^{-1} v`.
#[test]
fn lbfgs_finds_kaldis_test_optimum_both_ways() {
    let mut g = rng(SEED + 3);
    eprintln!("lbfgs kaldi objective: seed {:#x}", SEED + 3);
    for iter in 0..6 {
        let minimize = iter % 2 == 0;
        let dim = g.random_range(1..=30);
        let s = random_spd::<f64>(&mut g, dim);
        let mut v = Vector::new(dim);
        v.set_randn(&mut g);
        let want = solve(&s, &v);
        let mut x0 = Vector::<f64>::new(dim);
        x0.set_randn(&mut g);
        let sign = if minimize { -1.0 } else { 1.0 };
        let c = 0.01;
        let mut opt = OptimizeLbfgs::new(&x0, LbfgsOptions::new(minimize));
        let (x, _, evals) = run(&mut opt, 1e-10, 20_000, |x| {
            let xv = Vector::from_vec(x.to_vec());
            let mut sx = Vector::new(dim);
            sx.add_mat_vec(1.0, &s, Trans::NoTrans, &xv, 0.0);
            let logf = vec_vec(&xv, &v) - 0.5 * vec_vec(&xv, &sx);
            let f = (c * logf).exp();
            let grad: Vec<f64> = (0..dim).map(|i| sign * f * c * (v[i] - sx[i])).collect();
            (sign * f, grad)
        });
        let err: f64 = x
            .iter()
            .zip(want.data())
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(
            err < 1e-4 * want.norm(2.0).max(1.0),
            "dim {dim}, minimize {minimize}: error {err} after {evals} evaluations"
        );
    }
}

#[test]
fn lbfgs_matches_scipy_and_the_closed_form_on_quadratics() {
    for line in include_str!("golden/lbfgs_goldens.txt").lines() {
        let parts: Vec<&str> = line.split(" : ").collect();
        assert_eq!(parts.len(), 7, "golden line: {line:.60}");
        let n: usize = parts[0].split_whitespace().nth(1).unwrap().parse().unwrap();
        let nums =
            |s: &str| -> Vec<f64> { s.split_whitespace().map(|x| x.parse().unwrap()).collect() };
        let s = Matrix::from_vec(n, n, nums(parts[1])).unwrap();
        let (v, x0) = (nums(parts[2]), nums(parts[3]));
        let (scipy_x, scipy_f, closed) = (nums(parts[4]), nums(parts[5])[0], nums(parts[6]));
        let quad = |x: &[f64]| {
            let xv = Vector::from_vec(x.to_vec());
            let mut sx = Vector::new(n);
            sx.add_mat_vec(1.0, &s, Trans::NoTrans, &xv, 0.0);
            let f = 0.5 * vec_vec(&xv, &sx) - x.iter().zip(&v).map(|(a, b)| a * b).sum::<f64>();
            let g: Vec<f64> = (0..n).map(|i| sx[i] - v[i]).collect();
            (f, g)
        };
        let mut opt = OptimizeLbfgs::new(&Vector::from_vec(x0), LbfgsOptions::default());
        let (x, f, evals) = run(&mut opt, 1e-12, 5000, quad);
        for i in 0..n {
            assert!(
                (x[i] - closed[i]).abs() < 1e-8,
                "n {n}: x[{i}] {} vs closed form {} ({evals} evaluations)",
                x[i],
                closed[i]
            );
            assert!((x[i] - scipy_x[i]).abs() < 1e-7, "n {n}: vs scipy");
        }
        assert!(
            (f - scipy_f).abs() <= 1e-10 * scipy_f.abs().max(1.0),
            "{f} vs {scipy_f}"
        );
    }
}

#[test]
fn lbfgs_f32_converges_on_a_quadratic() {
    let mut opt = OptimizeLbfgs::new(
        &Vector::from_vec(vec![0.0f32, 0.0, 0.0]),
        LbfgsOptions::default(),
    );
    let (x, _, _) = run(&mut opt, 1e-6, 2000, |x| {
        let w = [1.0, 4.0, 9.0];
        let t = [1.0, -2.0, 0.5];
        let f = (0..3).map(|i| w[i] * (x[i] - t[i]).powi(2)).sum();
        (f, (0..3).map(|i| 2.0 * w[i] * (x[i] - t[i])).collect())
    });
    for (got, want) in x.iter().zip([1.0, -2.0, 0.5]) {
        assert!((got - want).abs() < 1e-3, "{x:?}");
    }
}

#[test]
fn lbfgs_defaults_are_kaldis() {
    let o = LbfgsOptions::default();
    assert!(o.minimize);
    assert_eq!(
        (o.m, o.max_line_search_iters, o.avg_step_length),
        (10, 50, 4)
    );
    assert_eq!(
        (
            o.first_step_learning_rate,
            o.first_step_length,
            o.first_step_impr
        ),
        (1.0, 0.0, 0.0)
    );
    assert_eq!((o.c1, o.c2, o.d), (1e-4, 0.9, 2.0));
    assert!(!LbfgsOptions::new(false).minimize);
}

#[test]
fn lbfgs_first_step_is_gradient_descent_and_tracks_the_best_point() {
    // f = (x - 3)^2 at x = 0: gradient -6; learning rate 0.25 proposes 1.5
    let opts = LbfgsOptions {
        first_step_learning_rate: 0.25,
        ..LbfgsOptions::default()
    };
    let mut opt = OptimizeLbfgs::new(&Vector::from_vec(vec![0.0f64]), opts);
    assert!(opt.recent_step_length().is_infinite());
    assert_eq!(opt.get_value().1, f64::INFINITY);
    assert_eq!(opt.get_proposed_value().data(), &[0.0]);
    opt.do_step(9.0, &Vector::from_vec(vec![-6.0]));
    assert_eq!(opt.get_proposed_value().data(), &[1.5]);
    let (x, f) = opt.get_value();
    assert_eq!((x.data(), f), (&[0.0][..], 9.0));
    // first_step_length 2 overrides it: the step is 2 long whatever the gradient
    let opts = LbfgsOptions {
        first_step_length: 2.0,
        ..LbfgsOptions::default()
    };
    let mut opt = OptimizeLbfgs::new(&Vector::from_vec(vec![0.0f64, 0.0]), opts);
    opt.do_step(1.0, &Vector::from_vec(vec![-30.0, 40.0]));
    let p = opt.get_proposed_value();
    assert!((p[0] - 1.2).abs() < 1e-12 && (p[1] + 1.6).abs() < 1e-12);
}

#[test]
fn lbfgs_with_a_diagonal_hessian_takes_the_newton_step() {
    // f = 2 (x - 1)^2 + 8 (y + 1)^2: with the exact diagonal second derivative the first
    // proposal is the optimum
    let mut opt = OptimizeLbfgs::new(
        &Vector::from_vec(vec![0.0f64, 0.0]),
        LbfgsOptions::default(),
    );
    let x = [0.0, 0.0];
    let grad = Vector::from_vec(vec![4.0 * (x[0] - 1.0), 16.0 * (x[1] + 1.0)]);
    opt.do_step_with_hessian(10.0, &grad, &Vector::from_vec(vec![4.0, 16.0]))
        .unwrap();
    assert_eq!(opt.get_proposed_value().data(), &[1.0, -1.0]);
}

#[test]
fn lbfgs_rejects_a_hessian_of_the_wrong_sign() {
    let mut opt = OptimizeLbfgs::new(
        &Vector::from_vec(vec![0.0f64, 0.0]),
        LbfgsOptions::default(),
    );
    let e = opt
        .do_step_with_hessian(
            1.0,
            &Vector::from_vec(vec![1.0, 1.0]),
            &Vector::from_vec(vec![2.0, -0.5]),
        )
        .unwrap_err();
    assert_eq!(
        e,
        Error::HessianSign {
            index: 1,
            value: -0.5,
            minimize: true
        }
    );
    assert_eq!(
        e.to_string(),
        "L-BFGS: the diagonal second derivative at element 1 is -0.5; it must be positive \
         when minimising"
    );
    // nothing changed: the proposal is still the start
    assert_eq!(opt.get_proposed_value().data(), &[0.0, 0.0]);
}

#[test]
fn lbfgs_handles_an_infinite_value_outside_a_constraint() {
    // minimise x - ln x (optimum 1) over x > 0, +inf elsewhere, from 0.1: the first step
    // (learning rate 1, gradient -9) lands at 9.1, and later overshoots below 0 are refused
    let mut opt = OptimizeLbfgs::new(&Vector::from_vec(vec![0.1f64]), LbfgsOptions::default());
    let (x, f, _) = run(&mut opt, 1e-12, 2000, |x| {
        if x[0] <= 0.0 {
            (f64::INFINITY, vec![0.0])
        } else {
            (x[0] - x[0].ln(), vec![1.0 - 1.0 / x[0]])
        }
    });
    assert!((x[0] - 1.0).abs() < 1e-5, "{x:?}");
    assert!((f - 1.0).abs() < 1e-10);
}

#[test]
#[should_panic(expected = "OptimizeLbfgs::do_step: gradient dim 3 does not match x dim 2")]
fn lbfgs_checks_the_gradient_dimension() {
    let mut opt = OptimizeLbfgs::new(
        &Vector::from_vec(vec![0.0f64, 0.0]),
        LbfgsOptions::default(),
    );
    opt.do_step(0.0, &Vector::new(3));
}

#[test]
#[should_panic(expected = "OptimizeLbfgs::new: opts.m must be at least 1")]
fn lbfgs_needs_memory() {
    let opts = LbfgsOptions {
        m: 0,
        ..LbfgsOptions::default()
    };
    OptimizeLbfgs::new(&Vector::from_vec(vec![0.0f64]), opts);
}
