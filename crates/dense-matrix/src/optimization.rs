//! Kaldi's `optimization.h`: linear conjugate gradient (`LinearCgd`) for symmetric positive
//! definite systems, and L-BFGS (`OptimizeLbfgs`) driven step by step by the caller.
//!
//! Both follow Nocedal and Wright, "Numerical Optimization" (2nd ed.), as Kaldi does:
//! Algorithm 5.2 for the conjugate gradient (with Kaldi's `-p^T r` step numerator and its
//! periodic recomputation of the residual), Algorithms 7.4 and 7.5 for L-BFGS, with Kaldi's
//! line search on the two Wolfe conditions (multiply or divide the step by `d`, take the
//! square root of `d` when the failing condition switches, restart after too many tries).

use crate::error::{dim_mismatch, precondition};
use crate::{vec_vec, Error, Matrix, Real, SpMatrix, Vector, VectorBase};

/// Kaldi's `LinearCgdOptions`, with its defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearCgdOptions {
    /// Kaldi's `max_iters`: stop after this many iterations; `None` (Kaldi's `-1`) means
    /// no limit but the dimension plus 5.
    pub max_iters: Option<usize>,
    /// Kaldi's `max_error`: stop once `||A x - b||_2 <= max_error` (absolute); default 0.
    pub max_error: f64,
    /// Kaldi's `recompute_residual_factor`: recompute `r = A x - b` from scratch whenever
    /// its norm has fallen (or grown) by this factor since the last recomputation;
    /// default 0.01, at most 1.
    pub recompute_residual_factor: f64,
}

impl Default for LinearCgdOptions {
    fn default() -> Self {
        LinearCgdOptions {
            max_iters: None,
            max_error: 0.0,
            recompute_residual_factor: 0.01,
        }
    }
}

/// Kaldi's `LinearCgd(opts, A, b, &x)`: solves `A x = b` for a symmetric positive definite
/// `A` by conjugate gradients, starting from the `x` given; returns the number of
/// iterations done (at most `dim + 5`, or `max_iters`).
///
/// # Errors
/// If `A` shows it is not positive definite, `x` is put back as it was on entry and the
/// result is [`Error::CgdNotPositiveDefinite`] (a direction with `p^T A p <= 0`) or
/// [`Error::CgdResidualGrew`] (the residual ended above where it started: Kaldi's test,
/// after which Kaldi falls back to an exact solver).
///
/// # Panics
/// If `b` or `x` does not have `A`'s dimension, or `recompute_residual_factor` is not in
/// `(0, 1]`.
#[track_caller]
#[doc(alias = "LinearCgd")]
pub fn linear_cgd<R: Real>(
    opts: &LinearCgdOptions,
    a: &SpMatrix<R>,
    b: &VectorBase<R>,
    x: &mut VectorBase<R>,
) -> Result<usize, Error> {
    let m = a.num_rows();
    if b.dim() != m {
        dim_mismatch("linear_cgd", "b dim", b.dim(), "A dim", m);
    }
    if x.dim() != m {
        dim_mismatch("linear_cgd", "x dim", x.dim(), "A dim", m);
    }
    let factor = opts.recompute_residual_factor;
    if !(factor > 0.0 && factor <= 1.0) {
        precondition(&format!(
            "linear_cgd: recompute_residual_factor {factor} is not in (0, 1]"
        ));
    }
    let mut p = Vector::<R>::new(m);
    let mut r = Vector::<R>::new(m);
    let mut ap = Vector::<R>::new(m);
    let x_orig = x.to_vector();
    // p_0 = b - A x_0, r_0 = -p_0
    p.copy_from_vec(b);
    p.add_sp_vec(-R::ONE, a, x, R::ONE);
    r.add_vec(-R::ONE, &p);
    let mut r_cur_norm_sq = vec_vec(&r, &r);
    let r_initial_norm_sq = r_cur_norm_sq;
    let mut r_recompute_norm_sq = r_cur_norm_sq;
    if r_cur_norm_sq == R::ZERO {
        // already exact (Kaldi would divide 0 by 0 here)
        return Ok(0);
    }
    let max_error_sq = R::from_f64((opts.max_error * opts.max_error).max(min_positive::<R>()));
    let residual_factor = R::from_f64(factor * factor);
    let inv_residual_factor = R::ONE / residual_factor;
    let limit = opts.max_iters.map_or(m + 5, |n| n.min(m + 5));
    let restore = |x: &mut VectorBase<R>, e: Error| {
        x.copy_from_vec(&x_orig);
        Err(e)
    };
    let mut iterations = 0;
    while iterations < limit {
        ap.add_sp_vec(R::ONE, a, &p, R::ZERO);
        let curvature = vec_vec(&p, &ap);
        if curvature.is_nan() || curvature <= R::ZERO {
            if vec_vec(&p, &p) == R::ZERO {
                break; // no direction left: converged to rounding
            }
            return restore(
                x,
                Error::CgdNotPositiveDefinite {
                    iteration: iterations,
                    curvature: curvature.to_f64(),
                },
            );
        }
        // Kaldi's step: -p^T r / p^T A p (more robust than r^T r / p^T A p)
        let alpha = -vec_vec(&p, &r) / curvature;
        x.add_vec(alpha, &p);
        r.add_vec(alpha, &ap);
        let mut r_next_norm_sq = vec_vec(&r, &r);
        iterations += 1;
        if r_next_norm_sq < residual_factor * r_recompute_norm_sq
            || r_next_norm_sq > inv_residual_factor * r_recompute_norm_sq
        {
            // r = A x - b from scratch, against the drift of the updates
            r.add_sp_vec(R::ONE, a, x, R::ZERO);
            r.add_vec(-R::ONE, b);
            r_next_norm_sq = vec_vec(&r, &r);
            r_recompute_norm_sq = r_next_norm_sq;
        }
        if r_next_norm_sq <= max_error_sq {
            r_cur_norm_sq = r_next_norm_sq;
            break;
        }
        let beta = r_next_norm_sq / r_cur_norm_sq;
        p.scale(beta);
        p.add_vec(-R::ONE, &r);
        r_cur_norm_sq = r_next_norm_sq;
    }
    let b_norm_sq = vec_vec(b, b);
    if !(r_cur_norm_sq <= r_initial_norm_sq
        || r_cur_norm_sq <= r_initial_norm_sq + R::from_f64(1e-10) * b_norm_sq)
    {
        return restore(
            x,
            Error::CgdResidualGrew {
                iterations,
                residual_sq: r_cur_norm_sq.to_f64(),
                initial_sq: r_initial_norm_sq.to_f64(),
            },
        );
    }
    Ok(iterations)
}

/// The smallest positive normal value of `R` (C++'s `numeric_limits<Real>::min()`).
fn min_positive<R: Real>() -> f64 {
    if R::NAME == "f32" {
        f64::from(f32::MIN_POSITIVE)
    } else {
        f64::MIN_POSITIVE
    }
}

/// Kaldi's `LbfgsOptions`, with its defaults (`Default` minimises).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsOptions {
    /// Minimise (`true`, the default) or maximise.
    pub minimize: bool,
    /// The number of `(s, y)` pairs kept; default 10.
    pub m: usize,
    /// The first step is gradient descent with this learning rate; default 1.
    pub first_step_learning_rate: f64,
    /// If positive, the first step has this length instead (overrides the learning rate).
    pub first_step_length: f64,
    /// If positive, the first step is sized to improve a linear objective by this much.
    pub first_step_impr: f64,
    /// The Armijo constant of Wolfe condition (i); default 1e-4.
    pub c1: f64,
    /// The curvature constant of Wolfe condition (ii); default 0.9.
    pub c2: f64,
    /// The factor (> 1) the line search first multiplies or divides the step by; default 2.
    pub d: f64,
    /// Line-search tries after which L-BFGS restarts; default 50.
    pub max_line_search_iters: usize,
    /// How many recent steps `recent_step_length` averages; default 4.
    pub avg_step_length: usize,
}

impl LbfgsOptions {
    /// Kaldi's `LbfgsOptions(minimize)`: the defaults, minimising or maximising.
    pub fn new(minimize: bool) -> Self {
        LbfgsOptions {
            minimize,
            m: 10,
            first_step_learning_rate: 1.0,
            first_step_length: 0.0,
            first_step_impr: 0.0,
            c1: 1.0e-4,
            c2: 0.9,
            d: 2.0,
            max_line_search_iters: 50,
            avg_step_length: 4,
        }
    }
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions::new(true)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// About to compute a new direction (Kaldi's `kBeforeStep`).
    BeforeStep,
    /// Inside the line search (Kaldi's `kWithinStep`).
    WithinStep,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Failure {
    WolfeI,
    WolfeII,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Action {
    Accept,
    DecreaseStep,
    IncreaseStep,
    Restart,
}

/// Kaldi's `OptimizeLbfgs<Real>`: L-BFGS where the caller evaluates the function. Ask
/// [`Self::get_proposed_value`], evaluate the objective and its gradient there, hand them
/// to [`Self::do_step`], and repeat until [`Self::recent_step_length`] is small; then
/// [`Self::get_value`] is the best point seen. Outside a constraint, report `+inf`
/// (minimising) or `-inf` (maximising).
///
/// ```
/// use dense_matrix::{LbfgsOptions, OptimizeLbfgs, Vector};
///
/// // minimise (x0 - 3)^2 + 2 (x1 + 1)^2
/// let mut opt = OptimizeLbfgs::new(&Vector::from_vec(vec![0.0f64, 0.0]), LbfgsOptions::default());
/// for _ in 0..200 {
///     if opt.recent_step_length() < 1e-10 {
///         break;
///     }
///     let x = opt.get_proposed_value().data().to_vec();
///     let f = (x[0] - 3.0).powi(2) + 2.0 * (x[1] + 1.0).powi(2);
///     let g = Vector::from_vec(vec![2.0 * (x[0] - 3.0), 4.0 * (x[1] + 1.0)]);
///     opt.do_step(f, &g);
/// }
/// let (x, f) = opt.get_value();
/// assert!((x[0] - 3.0).abs() < 1e-6 && (x[1] + 1.0).abs() < 1e-6 && f < 1e-10);
/// ```
#[derive(Debug, Clone)]
pub struct OptimizeLbfgs<R: Real> {
    opts: LbfgsOptions,
    /// Iteration number since the last restart.
    k: usize,
    state: State,
    /// Whether the caller set the diagonal inverse Hessian (`do_step_with_hessian`).
    h_was_set: bool,
    /// `x_k`.
    x: Vector<R>,
    /// Where the function is to be evaluated next.
    new_x: Vector<R>,
    /// The best point so far.
    best_x: Vector<R>,
    /// The gradient at `x_k`.
    deriv: Vector<R>,
    /// The function at `x_k`.
    f: R,
    /// The best function value so far.
    best_f: R,
    /// The line search's current factor (`opts.d`, square-rooted on each switch).
    d: R,
    num_wolfe_i_failures: usize,
    num_wolfe_ii_failures: usize,
    last_failure: Failure,
    /// The diagonal inverse Hessian estimate (empty until the first step).
    h: Vector<R>,
    /// `2 m x dim`: even rows the gradient differences `y_i`, odd rows the steps `s_i`.
    data: Matrix<R>,
    /// `rho_i = 1 / (y_i^T s_i)`.
    rho: Vector<R>,
    /// The lengths of the last (up to `avg_step_length`) steps.
    step_lengths: Vec<R>,
}

impl<R: Real> OptimizeLbfgs<R> {
    /// Kaldi's `OptimizeLbfgs(x, opts)`: starts at `x`.
    ///
    /// # Panics
    /// If `x` is empty or `opts.m` is 0 (Kaldi asserts both).
    #[track_caller]
    pub fn new(x: &VectorBase<R>, opts: LbfgsOptions) -> Self {
        if opts.m == 0 {
            precondition("OptimizeLbfgs::new: opts.m must be at least 1");
        }
        let dim = x.dim();
        if dim == 0 {
            precondition("OptimizeLbfgs::new: the starting point must not be empty");
        }
        let f = if opts.minimize {
            R::INFINITY
        } else {
            R::NEG_INFINITY
        };
        OptimizeLbfgs {
            opts,
            k: 0,
            state: State::BeforeStep,
            h_was_set: false,
            x: x.to_vector(),
            new_x: x.to_vector(),
            best_x: x.to_vector(),
            deriv: Vector::new(dim),
            f,
            best_f: f,
            d: R::from_f64(opts.d),
            num_wolfe_i_failures: 0,
            num_wolfe_ii_failures: 0,
            last_failure: Failure::None,
            h: Vector::new(0),
            data: Matrix::new(2 * opts.m, dim),
            rho: Vector::new(opts.m),
            step_lengths: Vec::new(),
        }
    }

    /// Kaldi's `GetValue(&objf)`: the best point so far and its function value (the
    /// starting point and `+inf` / `-inf` before any step).
    #[doc(alias = "GetValue")]
    pub fn get_value(&self) -> (&VectorBase<R>, R) {
        (&self.best_x, self.best_f)
    }

    /// Kaldi's `GetProposedValue()`: where the caller should evaluate the function next.
    #[doc(alias = "GetProposedValue")]
    pub fn get_proposed_value(&self) -> &VectorBase<R> {
        &self.new_x
    }

    /// Kaldi's `RecentStepLength()`: the mean length of the last steps (`+inf` before any;
    /// 0 after two zero-length steps in a row, a sign of repeated restarts).
    #[doc(alias = "RecentStepLength")]
    pub fn recent_step_length(&self) -> R {
        let n = self.step_lengths.len();
        if n == 0 {
            return R::INFINITY;
        }
        if n >= 2 && self.step_lengths[n - 1] == R::ZERO && self.step_lengths[n - 2] == R::ZERO {
            return R::ZERO;
        }
        let nr = R::from_f64(n as f64);
        self.step_lengths
            .iter()
            .fold(R::ZERO, |acc, &s| acc + s / nr)
    }

    /// Kaldi's `DoStep(function_value, gradient)`: the function and its gradient at
    /// [`Self::get_proposed_value`].
    ///
    /// # Panics
    /// If `gradient` does not have the dimension of `x`.
    #[track_caller]
    #[doc(alias = "DoStep")]
    pub fn do_step(&mut self, function_value: R, gradient: &VectorBase<R>) {
        if gradient.dim() != self.x.dim() {
            dim_mismatch(
                "OptimizeLbfgs::do_step",
                "gradient dim",
                gradient.dim(),
                "x dim",
                self.x.dim(),
            );
        }
        let better = if self.opts.minimize {
            function_value < self.best_f
        } else {
            function_value > self.best_f
        };
        if better {
            self.best_f = function_value;
            self.best_x.copy_from_vec(&self.new_x);
        }
        match self.state {
            State::BeforeStep => self.compute_new_direction(function_value, gradient),
            State::WithinStep => self.step_size_iteration(function_value, gradient),
        }
    }

    /// Kaldi's `DoStep(function_value, gradient, diag_approx_2nd_deriv)`: as
    /// [`Self::do_step`], with the caller's diagonal approximation of the second derivative
    /// (its inverse becomes the initial inverse Hessian from now on).
    ///
    /// # Errors
    /// [`Error::HessianSign`] if an element is not positive (minimising) or not negative
    /// (maximising), as Kaldi asserts; nothing changes then.
    ///
    /// # Panics
    /// If a vector does not have the dimension of `x`.
    #[track_caller]
    pub fn do_step_with_hessian(
        &mut self,
        function_value: R,
        gradient: &VectorBase<R>,
        diag_approx_2nd_deriv: &VectorBase<R>,
    ) -> Result<(), Error> {
        let dim = self.x.dim();
        if diag_approx_2nd_deriv.dim() != dim {
            dim_mismatch(
                "OptimizeLbfgs::do_step_with_hessian",
                "second derivative dim",
                diag_approx_2nd_deriv.dim(),
                "x dim",
                dim,
            );
        }
        let minimize = self.opts.minimize;
        if let Some((index, &value)) =
            diag_approx_2nd_deriv
                .data()
                .iter()
                .enumerate()
                .find(|(_, &v)| {
                    if minimize {
                        v.is_nan() || v <= R::ZERO
                    } else {
                        v.is_nan() || v >= R::ZERO
                    }
                })
        {
            return Err(Error::HessianSign {
                index,
                value: value.to_f64(),
                minimize,
            });
        }
        self.h_was_set = true;
        self.h = diag_approx_2nd_deriv.to_vector();
        self.h.invert_elements();
        self.do_step(function_value, gradient);
        Ok(())
    }

    fn y(&self, i: usize) -> &VectorBase<R> {
        self.data.row((i % self.opts.m) * 2)
    }

    fn s(&self, i: usize) -> &VectorBase<R> {
        self.data.row((i % self.opts.m) * 2 + 1)
    }

    /// Kaldi's `ComputeHifNeeded`: the initial inverse Hessian, a multiple of the identity
    /// (N&W formula 7.20) unless the caller set it.
    fn compute_h_if_needed(&mut self, gradient: &VectorBase<R>) {
        if self.k == 0 {
            if self.h.dim() == 0 {
                let grad_len = gradient.norm(R::from_f64(2.0)).to_f64();
                let learning_rate = if self.opts.first_step_length > 0.0 {
                    if grad_len > 0.0 {
                        self.opts.first_step_length / grad_len
                    } else {
                        1.0
                    }
                } else if self.opts.first_step_impr > 0.0 {
                    if grad_len > 0.0 {
                        self.opts.first_step_impr / (grad_len * grad_len)
                    } else {
                        1.0
                    }
                } else {
                    self.opts.first_step_learning_rate
                };
                if learning_rate.is_nan() || learning_rate <= 0.0 {
                    precondition(&format!(
                        "OptimizeLbfgs: the first step's learning rate {learning_rate} is not \
                         positive"
                    ));
                }
                self.h = Vector::new(self.x.dim());
                let lr = if self.opts.minimize {
                    learning_rate
                } else {
                    -learning_rate
                };
                self.h.set(R::from_f64(lr));
            }
        } else if !self.h_was_set {
            let (s, y) = (self.s(self.k - 1), self.y(self.k - 1));
            let mut gamma = vec_vec(s, y).to_f64() / vec_vec(y, y).to_f64();
            if !gamma.is_finite() {
                // already converged, most likely (Kaldi warns)
                gamma = if self.opts.minimize { 1.0 } else { -1.0 };
            }
            self.h.set(R::from_f64(gamma));
        }
    }

    /// Kaldi's `ComputeNewDirection`: `p_k = -H_k grad f_k` by the two-loop recursion
    /// (N&W Algorithm 7.4), then the first trial point `x_k + p_k`.
    fn compute_new_direction(&mut self, function_value: R, gradient: &VectorBase<R>) {
        debug_assert_eq!(self.state, State::BeforeStep);
        self.compute_h_if_needed(gradient);
        let (m, k) = (self.opts.m, self.k);
        let first = k.saturating_sub(m);
        let mut q = gradient.to_vector();
        let mut alpha = vec![R::ZERO; m];
        for i in (first..k).rev() {
            let a = self.rho[i % m] * vec_vec(self.s(i), &q);
            alpha[i % m] = a;
            q.add_vec(-a, self.y(i));
        }
        let mut r = Vector::new(self.x.dim());
        r.add_vec_vec(R::ONE, &self.h, &q, R::ZERO);
        for i in first..k {
            let beta = self.rho[i % m] * vec_vec(self.y(i), &r);
            r.add_vec(alpha[i % m] - beta, self.s(i));
        }
        // new_x = x - r
        self.new_x.copy_from_vec(&self.x);
        self.new_x.add_vec(-R::ONE, &r);
        self.deriv.copy_from_vec(gradient);
        self.f = function_value;
        self.d = R::from_f64(self.opts.d);
        self.num_wolfe_i_failures = 0;
        self.num_wolfe_ii_failures = 0;
        self.last_failure = Failure::None;
        self.state = State::WithinStep;
    }

    /// Kaldi's `AcceptStep`: stores `s_k`, `y_k`, `rho_k` and moves to `new_x`; `false`
    /// (forcing a restart) if the curvature `y^T s` has the wrong sign or the step is 0.
    fn accept_step(&mut self, function_value: R, gradient: &VectorBase<R>) -> bool {
        let m = self.opts.m;
        let slot = self.k % m;
        let dim = self.x.dim();
        let mut s = Vector::<R>::new(dim);
        s.copy_from_vec(&self.new_x);
        s.add_vec(-R::ONE, &self.x);
        let mut y = Vector::<R>::new(dim);
        y.copy_from_vec(gradient);
        y.add_vec(-R::ONE, &self.deriv);
        self.data.row_mut(slot * 2).copy_from_vec(&y);
        self.data.row_mut(slot * 2 + 1).copy_from_vec(&s);
        let prod = vec_vec(&y, &s);
        self.rho[slot] = R::ONE / prod;
        let len = s.norm(R::from_f64(2.0));
        let tiny = R::from_f64(1.0e-20);
        let bad_curvature = if self.opts.minimize {
            prod.is_nan() || prod <= tiny
        } else {
            prod.is_nan() || prod >= -tiny
        };
        if bad_curvature || len == R::ZERO {
            return false;
        }
        self.record_step_length(len);
        self.x.copy_from_vec(&self.new_x);
        self.f = function_value;
        self.k += 1;
        true
    }

    fn record_step_length(&mut self, len: R) {
        self.step_lengths.push(len);
        if self.step_lengths.len() > self.opts.avg_step_length {
            self.step_lengths.remove(0);
        }
    }

    /// Kaldi's `Restart`: back to `k = 0` at `x` (keeping the inverse Hessian); the move
    /// counts as a step, so a loop of restarts shows as zero step lengths.
    fn restart(&mut self, x: &VectorBase<R>, f: R, gradient: &VectorBase<R>) {
        let mut diff = x.to_vector();
        diff.add_vec(-R::ONE, &self.x);
        self.record_step_length(diff.norm(R::from_f64(2.0)));
        self.k = 0;
        self.x.copy_from_vec(x);
        self.new_x.copy_from_vec(x);
        self.f = f;
        self.state = State::BeforeStep;
        self.compute_new_direction(f, gradient);
    }

    /// Kaldi's `StepSizeIteration`: checks both Wolfe conditions at the trial point and
    /// accepts it, shrinks or grows the step, or restarts.
    fn step_size_iteration(&mut self, function_value: R, gradient: &VectorBase<R>) {
        let minimize = self.opts.minimize;
        // pf = alpha p^T grad f(x_k), with alpha p = new_x - x
        let pf = vec_vec(&self.new_x, &self.deriv) - vec_vec(&self.x, &self.deriv);
        let armijo_bound = self.f + R::from_f64(self.opts.c1) * pf;
        let wolfe_i_ok = if minimize {
            function_value <= armijo_bound
        } else {
            function_value >= armijo_bound
        };
        // p2f = alpha p^T grad f(new_x)
        let p2f = vec_vec(&self.new_x, gradient) - vec_vec(&self.x, gradient);
        let c2pf = R::from_f64(self.opts.c2) * pf;
        let wolfe_ii_ok = if minimize { p2f >= c2pf } else { p2f <= c2pf };

        let mut decrease_d = false;
        let mut action = if wolfe_i_ok && wolfe_ii_ok {
            Action::Accept
        } else if !wolfe_i_ok {
            // too far (or numerical trouble)
            decrease_d = self.last_failure == Failure::WolfeII;
            self.last_failure = Failure::WolfeI;
            self.num_wolfe_i_failures += 1;
            Action::DecreaseStep
        } else {
            // not far enough
            decrease_d = self.last_failure == Failure::WolfeI;
            self.last_failure = Failure::WolfeII;
            self.num_wolfe_ii_failures += 1;
            Action::IncreaseStep
        };
        if self.num_wolfe_i_failures + self.num_wolfe_ii_failures > self.opts.max_line_search_iters
        {
            action = Action::Restart;
        }
        if decrease_d {
            self.d = self.d.sqrt();
        }
        if action == Action::Accept {
            if self.accept_step(function_value, gradient) {
                self.state = State::BeforeStep;
                self.compute_new_direction(function_value, gradient);
            } else {
                action = Action::Restart;
            }
        }
        if action == Action::DecreaseStep || action == Action::IncreaseStep {
            let scale = if action == Action::DecreaseStep {
                R::ONE / self.d
            } else {
                self.d
            };
            let previous = self.new_x.clone();
            // new_x = x + scale (new_x - x)
            self.new_x.scale(scale);
            self.new_x.add_vec(R::ONE - scale, &self.x);
            if self.new_x.approx_equal(&previous, R::ZERO) {
                action = Action::Restart; // the step no longer changes x
            }
            if action == Action::DecreaseStep
                && self.new_x.approx_equal(&previous, R::from_f64(1.0e-8))
                && (self.f - function_value).abs() < R::from_f64(1.0e-8) * self.f.abs()
            {
                action = Action::Restart; // backtracking on rounding noise
            }
            // Kaldi counts the change of step once more here
            if action == Action::DecreaseStep {
                self.num_wolfe_i_failures += 1;
                self.last_failure = Failure::WolfeI;
            } else {
                self.num_wolfe_ii_failures += 1;
                self.last_failure = Failure::WolfeII;
            }
        }
        if action == Action::Restart {
            let use_new_x = if minimize {
                function_value < self.f
            } else {
                function_value > self.f
            };
            if use_new_x {
                let new_x = self.new_x.clone();
                self.restart(&new_x, function_value, gradient);
            } else {
                let (x, f, deriv) = (self.x.clone(), self.f, self.deriv.clone());
                self.restart(&x, f, &deriv);
            }
        }
    }
}
