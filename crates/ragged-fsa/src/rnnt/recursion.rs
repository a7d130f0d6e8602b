//! k2's `mutual_information_recursion` and `joint_mutual_information_recursion`: the
//! log-semiring recursion over the (S + 1) x (T + 1) lattice that every RNN-T loss reduces
//! to, with its occupation gradients.

use ndarray::{Array1, Array2, Array3, ArrayView2, ArrayView3};
use rayon::prelude::*;

use crate::error::Error;
use crate::kernels::scores::Real;
use crate::rnnt::check::{self, Boundary};
use crate::rnnt::math;

/// Below this many lattice cells (`B (S + 1) (T + 1)`) the batch runs on the calling thread.
pub const RNNT_PARALLEL_MIN_CELLS: usize = 1 << 14;

/// The result of [`mutual_information_recursion`].
#[derive(Debug, Clone, PartialEq)]
pub struct MutualInformation<T> {
    /// `p[b][s_end][t_end]` per sequence, shape `[B]`; `-inf` when no path exists.
    pub scores: Array1<T>,
    /// With `return_grad`: `d(sum of scores) / d(px)`, the shape of `px` (the occupation
    /// probability of each `px` transition); zero outside the boundary and for `-inf` scores.
    pub px_grad: Option<Array3<T>>,
    /// With `return_grad`: `d(sum of scores) / d(py)`, the shape of `py`.
    pub py_grad: Option<Array3<T>>,
}

/// `log_add` and `exp` of the recursion: for `f32`, the inline kernels of `math` (the
/// conversions through `f64` vanish once `T` is `f32`); otherwise `Real`'s.
#[inline(always)]
fn log_add<T: Real>(a: T, b: T) -> T {
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() {
        T::from_f32(math::log_add_f32(a.to_f64() as f32, b.to_f64() as f32))
    } else {
        T::log_add(a, b)
    }
}

#[inline(always)]
fn exp<T: Real>(x: T) -> T {
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() {
        T::from_f32(math::exp_f32(x.to_f64() as f32))
    } else {
        x.exp()
    }
}

/// One sequence of the recursion: its `px`, `py` and box.
pub(crate) struct Lattice<'a, T> {
    pub(crate) px: ArrayView2<'a, T>,
    pub(crate) py: ArrayView2<'a, T>,
    pub(crate) bound: Boundary,
    /// `px` has `T` columns (`modified`/`constrained`): an `x` step also takes a `y` step.
    pub(crate) modified: bool,
}

impl<T: Real> Lattice<'_, T> {
    fn width(&self) -> usize {
        self.bound.t_end - self.bound.t_begin + 1
    }

    /// The forward scores of the box, row-major with `width()` columns, and the total.
    pub(crate) fn forward(&self, alpha: &mut Vec<T>) -> T {
        let Boundary {
            s_begin,
            t_begin,
            s_end,
            t_end,
        } = self.bound;
        let width = self.width();
        let rows = s_end - s_begin + 1;
        alpha.clear();
        alpha.resize(rows * width, T::NEG_INFINITY);
        alpha[0] = T::ZERO;
        for t in t_begin + 1..=t_end {
            let j = t - t_begin;
            alpha[j] = alpha[j - 1] + self.py[[s_begin, t - 1]];
        }
        let off = usize::from(self.modified);
        for s in s_begin + 1..=s_end {
            let i = s - s_begin;
            let (done, row) = alpha.split_at_mut(i * width);
            let prev = &done[(i - 1) * width..];
            let row = &mut row[..width];
            let px_row = self.px.row(s - 1);
            let py_row = self.py.row(s);
            let mut left = if self.modified {
                T::NEG_INFINITY
            } else {
                prev[0] + px_row[t_begin]
            };
            row[0] = left;
            for j in 1..width {
                let t = t_begin + j;
                let up = prev[j - off] + px_row[t - off];
                left = log_add(up, left + py_row[t - 1]);
                row[j] = left;
            }
        }
        alpha[rows * width - 1]
    }

    /// Writes the occupation of every transition of the box into `px_grad` (`[S][T1]`) and
    /// `py_grad` (`[S + 1][T]`), given the forward scores and a finite total.
    pub(crate) fn occupation(
        &self,
        alpha: &[T],
        total: T,
        beta: &mut Vec<T>,
        px_grad: &mut [T],
        py_grad: &mut [T],
    ) {
        let Boundary {
            s_begin,
            t_begin,
            s_end,
            ..
        } = self.bound;
        let width = self.width();
        let (px_cols, py_cols) = (self.px.ncols(), self.py.ncols());
        let off = usize::from(self.modified);
        // beta[0..width]: the row below (s + 1); beta[width..]: this row (s).
        beta.clear();
        beta.resize(2 * width, T::NEG_INFINITY);
        for s in (s_begin..=s_end).rev() {
            let i = s - s_begin;
            let (below, this) = beta.split_at_mut(width);
            let alpha_row = &alpha[i * width..(i + 1) * width];
            let py_row = self.py.row(s);
            let py_grad_row = &mut py_grad[s * py_cols..(s + 1) * py_cols];
            let mut right = T::NEG_INFINITY;
            if s < s_end {
                let px_row = self.px.row(s);
                let px_grad_row = &mut px_grad[s * px_cols..(s + 1) * px_cols];
                for j in (0..width).rev() {
                    let t = t_begin + j;
                    let mut down = T::NEG_INFINITY;
                    if j + off < width {
                        let x = px_row[t];
                        down = x + below[j + off];
                        px_grad_row[t] = exp(alpha_row[j] + down - total);
                    }
                    if j + 1 < width {
                        let y = py_row[t];
                        let step = y + right;
                        py_grad_row[t] = exp(alpha_row[j] + step - total);
                        right = log_add(down, step);
                    } else {
                        right = if s == s_end { T::ZERO } else { down };
                    }
                    this[j] = right;
                }
            } else {
                right = T::ZERO;
                this[width - 1] = right;
                for j in (0..width - 1).rev() {
                    let t = t_begin + j;
                    let step = py_row[t] + right;
                    py_grad_row[t] = exp(alpha_row[j] + step - total);
                    right = step;
                    this[j] = right;
                }
            }
            below.copy_from_slice(this);
        }
    }
}

/// Runs the recursion on every sequence, in parallel over the batch above
/// [`RNNT_PARALLEL_MIN_CELLS`] cells; `px`, `py` and `boundary` already checked.
pub(crate) fn run_batch<T: Real>(
    px: ArrayView3<'_, T>,
    py: ArrayView3<'_, T>,
    bounds: &[Boundary],
    return_grad: bool,
) -> MutualInformation<T> {
    let (b_count, s_count, t1_count) = px.dim();
    let t_count = py.dim().2;
    let modified = t1_count == t_count;
    let px_len = s_count * t1_count;
    let py_len = (s_count + 1) * t_count;
    let mut scores = vec![T::ZERO; b_count];
    // Chunks of at least one value, so that the zips below see every sequence even when
    // S or T is 0; cut back to size afterwards.
    let chunk_x = px_len.max(1);
    let chunk_y = py_len.max(1);
    let (mut px_grad, mut py_grad) = if return_grad {
        (
            vec![T::ZERO; b_count * chunk_x],
            vec![T::ZERO; b_count * chunk_y],
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let one = |b: usize, score: &mut T, gx: &mut [T], gy: &mut [T]| {
        let lattice = Lattice {
            px: px.index_axis(ndarray::Axis(0), b),
            py: py.index_axis(ndarray::Axis(0), b),
            bound: bounds[b],
            modified,
        };
        let mut alpha = Vec::new();
        let total = lattice.forward(&mut alpha);
        *score = total;
        if return_grad && total != T::NEG_INFINITY {
            let mut beta = Vec::new();
            lattice.occupation(&alpha, total, &mut beta, gx, gy);
        }
    };
    let cells = b_count * (s_count + 1) * (t_count + 1);
    if return_grad {
        if cells >= RNNT_PARALLEL_MIN_CELLS {
            scores
                .par_iter_mut()
                .zip(px_grad.par_chunks_mut(chunk_x))
                .zip(py_grad.par_chunks_mut(chunk_y))
                .enumerate()
                .for_each(|(b, ((score, gx), gy))| one(b, score, gx, gy));
        } else {
            scores
                .iter_mut()
                .zip(px_grad.chunks_mut(chunk_x))
                .zip(py_grad.chunks_mut(chunk_y))
                .enumerate()
                .for_each(|(b, ((score, gx), gy))| one(b, score, gx, gy));
        }
    } else if cells >= RNNT_PARALLEL_MIN_CELLS {
        scores
            .par_iter_mut()
            .enumerate()
            .for_each(|(b, score)| one(b, score, &mut [], &mut []));
    } else {
        scores
            .iter_mut()
            .enumerate()
            .for_each(|(b, score)| one(b, score, &mut [], &mut []));
    }
    px_grad.truncate(b_count * px_len);
    py_grad.truncate(b_count * py_len);
    let grads = return_grad.then(|| {
        (
            Array3::from_shape_vec((b_count, s_count, t1_count), px_grad)
                .expect("px_grad has B S T1 values"),
            Array3::from_shape_vec((b_count, s_count + 1, t_count), py_grad)
                .expect("py_grad has B (S + 1) T values"),
        )
    });
    let (px_grad, py_grad) = match grads {
        Some((x, y)) => (Some(x), Some(y)),
        None => (None, None),
    };
    MutualInformation {
        scores: Array1::from(scores),
        px_grad,
        py_grad,
    }
}

/// k2's `mutual_information_recursion(px, py, boundary, return_grad)`.
///
/// `px` is `[B][S][T + 1]` (or `[B][S][T]`, the "modified" recursion), `py` is
/// `[B][S + 1][T]`, `boundary` (rows `[s_begin, t_begin, s_end, t_end]`, with
/// `0 <= s_begin <= s_end <= S` and `0 <= t_begin <= t_end <= T`) defaults to `[0, 0, S, T]`.
/// With `p[b][s_begin][t_begin] = 0`:
///
/// ```text
/// p[b,s,t] = log_add(p[b,s-1,t] + px[b,s-1,t],   p[b,s,t-1] + py[b,s,t-1])   [B][S][T+1]
/// p[b,s,t] = log_add(p[b,s-1,t-1] + px[b,s-1,t-1], p[b,s,t-1] + py[b,s,t-1]) [B][S][T]
/// ```
///
/// and `scores[b] = p[b][s_end][t_end]`. With `return_grad` the gradients of
/// `sum(scores)` with respect to `px` and `py` (occupation probabilities) come back too.
/// `px` and `py` may hold `-inf` but not NaN or `+inf`. A sequence without a path scores
/// `-inf` and has zero gradient (k2 would put its gradient on the `py` side).
///
/// ```
/// use ndarray::{Array3, array};
/// use ragged_fsa::mutual_information_recursion;
///
/// // S = 1, T = 1: two paths, x then y or y then x.
/// let px = Array3::from_shape_vec((1, 1, 2), vec![0.5f64, 0.25]).unwrap();
/// let py = Array3::from_shape_vec((1, 2, 1), vec![1.0f64, 2.0]).unwrap();
/// let out = mutual_information_recursion(px.view(), py.view(), None, true).unwrap();
/// let want = ((0.5f64 + 2.0).exp() + (1.0f64 + 0.25).exp()).ln();
/// assert!((out.scores[0] - want).abs() < 1e-12);
/// ```
pub fn mutual_information_recursion<T: Real>(
    px: ArrayView3<'_, T>,
    py: ArrayView3<'_, T>,
    boundary: Option<ArrayView2<'_, i64>>,
    return_grad: bool,
) -> Result<MutualInformation<T>, Error> {
    let bounds = check::recursion_inputs(px, py, boundary)?;
    check::no_nan_or_pos_inf("px", px)?;
    check::no_nan_or_pos_inf("py", py)?;
    Ok(run_batch(px, py, &bounds, return_grad))
}

/// The result of [`joint_mutual_information_recursion`].
#[derive(Debug, Clone, PartialEq)]
pub struct JointMutualInformation<T> {
    /// `[N][B]`: the contribution of each `(px[n], py[n])` pair; summed over `n` it is the
    /// total log score of the recursion on `sum(px)`, `sum(py)`. Row 0 also carries the
    /// offset between log-of-sum and sum-of-log (as in k2).
    pub scores: Array2<T>,
    /// The occupation of each `px` transition (shape `[B][S][T1]`): the gradient of
    /// `scores[n]` with respect to `px[n]` (the offset in row 0 is treated as a constant,
    /// as k2's `no_grad` does).
    pub px_grad: Array3<T>,
    /// The occupation of each `py` transition (`[B][S + 1][T]`), likewise for `py[n]`.
    pub py_grad: Array3<T>,
}

/// k2's `joint_mutual_information_recursion(px, py, boundary)`: the recursion on the sums of
/// the `px` and `py` tensors, with its total broken down into one term per tensor pair
/// (`sum over s, t of occupation * px[n]`; a `-inf` entry has zero occupation and adds
/// nothing, as k2's clamping to the most negative finite value makes it), the first term absorbing the remainder.
pub fn joint_mutual_information_recursion<T: Real>(
    px: &[ArrayView3<'_, T>],
    py: &[ArrayView3<'_, T>],
    boundary: Option<ArrayView2<'_, i64>>,
) -> Result<JointMutualInformation<T>, Error> {
    if px.is_empty() || px.len() != py.len() {
        return Err(Error::CountMismatch {
            what: "py tensors (one per px tensor, at least one)",
            expected: px.len().max(1),
            got: py.len(),
        });
    }
    for (n, (x, y)) in px.iter().zip(py).enumerate() {
        if x.dim() != px[0].dim() || y.dim() != py[0].dim() {
            return Err(Error::CountMismatch {
                what: "px/py tensors with the shapes of px[0]/py[0] before the first different one",
                expected: px.len(),
                got: n,
            });
        }
        check::no_nan_or_pos_inf("px", *x)?;
        check::no_nan_or_pos_inf("py", *y)?;
    }
    let mut px_tot = px[0].to_owned();
    for x in &px[1..] {
        px_tot.zip_mut_with(x, |a, &b| *a = *a + b);
    }
    let mut py_tot = py[0].to_owned();
    for y in &py[1..] {
        py_tot.zip_mut_with(y, |a, &b| *a = *a + b);
    }
    let bounds = check::recursion_inputs(px_tot.view(), py_tot.view(), boundary)?;
    let out = run_batch(px_tot.view(), py_tot.view(), &bounds, true);
    let px_grad = out.px_grad.expect("asked for the gradient");
    let py_grad = out.py_grad.expect("asked for the gradient");
    let b_count = px_tot.dim().0;
    let mut scores = Array2::from_elem((px.len(), b_count), T::ZERO);
    for (n, (x, y)) in px.iter().zip(py).enumerate() {
        for b in 0..b_count {
            let mut acc = T::ZERO;
            for (&g, &v) in px_grad
                .index_axis(ndarray::Axis(0), b)
                .iter()
                .zip(x.index_axis(ndarray::Axis(0), b).iter())
            {
                if v != T::NEG_INFINITY {
                    acc = acc + g.mul(v);
                }
            }
            for (&g, &v) in py_grad
                .index_axis(ndarray::Axis(0), b)
                .iter()
                .zip(y.index_axis(ndarray::Axis(0), b).iter())
            {
                if v != T::NEG_INFINITY {
                    acc = acc + g.mul(v);
                }
            }
            scores[[n, b]] = acc;
        }
    }
    for b in 0..b_count {
        let mut sum = T::ZERO;
        for n in 0..px.len() {
            sum = sum + scores[[n, b]];
        }
        scores[[0, b]] = scores[[0, b]] + (out.scores[b] - sum);
    }
    Ok(JointMutualInformation {
        scores,
        px_grad,
        py_grad,
    })
}
