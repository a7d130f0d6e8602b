//! k2's RNN-T losses on the CPU: the mutual-information recursion, the simple (additive
//! joiner), smoothed, full and pruned losses, the pruning ranges, each with its gradients as
//! explicit outputs.
//!
//! The pruned recipe, as icefall trains transducers:
//! `rnnt_loss_smoothed (return_grad) => get_rnnt_prune_ranges => do_rnnt_pruning =>
//! joiner => rnnt_loss_pruned`. Shapes are k2's: `lm` `[B][S + 1][C]`, `am` `[B][T][C]`,
//! `symbols` `[B][S]`, `logits` `[B][T][S + 1][C]` (pruned: `[B][T][s_range][C]`), `px`
//! `[B][S][T + 1]` (`[B][S][T]` unless `regular`), `py` `[B][S + 1][T]`, `boundary`
//! `[B][4]` rows `[s_begin, t_begin, s_end, t_end]`.

mod check;
mod joint;
mod math;
mod pruned;
mod recursion;
mod simple;

use ndarray::{
    Array, Array1, Array3, Array4, ArrayView2, ArrayViewMut, Axis, Dimension, RemoveAxis,
};
use rayon::prelude::*;

pub use joint::{get_rnnt_logprobs_joint, rnnt_loss};
pub use pruned::{
    do_rnnt_pruning, get_rnnt_logprobs_pruned, get_rnnt_prune_ranges, rnnt_loss_pruned,
};
pub use recursion::{
    joint_mutual_information_recursion, mutual_information_recursion, JointMutualInformation,
    MutualInformation, RNNT_PARALLEL_MIN_CELLS,
};
pub use simple::{
    get_rnnt_logprobs, get_rnnt_logprobs_smoothed, rnnt_loss_simple, rnnt_loss_smoothed,
};

use crate::error::Error;
use check::Boundary;

/// k2's `rnnt_type`: which steps a non-blank symbol takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RnntType {
    /// A symbol keeps the frame; only the blank (termination symbol) moves to the next one.
    /// `px` is `[B][S][T + 1]`, its last column (or `t_end`'s) `-inf`.
    #[default]
    Regular,
    /// Every symbol also moves to the next frame (at most one symbol per frame; needs
    /// `S <= T`). `px` is `[B][S][T]`.
    Modified,
    /// As `Modified`, but emitting a symbol forces the blank of the next context on the
    /// same frame: `px[s][t] += py[s + 1][t]`.
    Constrained,
}

/// k2's `reduction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reduction {
    /// One loss per sequence.
    None,
    /// The mean over the batch (k2's default).
    #[default]
    Mean,
    /// The sum over the batch.
    Sum,
}

/// Options of the RNN-T losses (k2 1.23.2's keyword arguments, same defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RnntLossConfig {
    /// `rnnt_type` (default `Regular`).
    pub rnnt_type: RnntType,
    /// `delay_penalty` (default 0; only a positive value acts, as in k2): adds
    /// `delay_penalty * ((t_end - 1) / 2 - t)` to `px[s][t]`, rewarding early symbols.
    pub delay_penalty: f32,
    /// `reduction` (default `Mean`).
    pub reduction: Reduction,
    /// `return_grad` (default false): also return `px_grad`, `py_grad`, the gradients of
    /// `-sum(loss with reduction none)` with respect to `px` and `py` (the occupation
    /// probabilities that [`get_rnnt_prune_ranges`] reads).
    pub return_grad: bool,
    /// Whether to compute the gradient of the (reduced) loss with respect to the inputs
    /// (`lm` and `am`, or `logits`), as `requires_grad` would in torch (default true).
    pub requires_grad: bool,
    /// `lm_only_scale` of [`rnnt_loss_smoothed`] (default 0.1; other losses ignore it).
    pub lm_only_scale: f32,
    /// `am_only_scale` of [`rnnt_loss_smoothed`] (default 0.1; other losses ignore it).
    pub am_only_scale: f32,
}

impl Default for RnntLossConfig {
    fn default() -> Self {
        Self {
            rnnt_type: RnntType::Regular,
            delay_penalty: 0.0,
            reduction: Reduction::Mean,
            return_grad: false,
            requires_grad: true,
            lm_only_scale: 0.1,
            am_only_scale: 0.1,
        }
    }
}

/// What an RNN-T loss returns; each gradient is present when asked for and meaningful for
/// that loss.
#[derive(Debug, Clone, PartialEq)]
pub struct RnntLoss {
    /// `[B]` with `Reduction::None`, else one value. A sequence without a path has loss
    /// `+inf` (and so does a reduction over it) and zero gradient.
    pub loss: Array1<f32>,
    /// `d(loss)/d(lm)` (`[B][S + 1][C]`) of [`rnnt_loss_simple`] and
    /// [`rnnt_loss_smoothed`], with `requires_grad`.
    pub lm_grad: Option<Array3<f32>>,
    /// `d(loss)/d(am)` (`[B][T][C]`), likewise.
    pub am_grad: Option<Array3<f32>>,
    /// `d(loss)/d(logits)` of [`rnnt_loss`] (`[B][T][S + 1][C]`) and [`rnnt_loss_pruned`]
    /// (`[B][T][s_range][C]`), with `requires_grad`.
    pub logits_grad: Option<Array4<f32>>,
    /// With `return_grad`: `d(-sum of per-sequence losses)/d(px)` (k2's `px_grad`).
    pub px_grad: Option<Array3<f32>>,
    /// With `return_grad`: `d(-sum of per-sequence losses)/d(py)`.
    pub py_grad: Option<Array3<f32>>,
}

/// The recursion's result on the loss side: per-sequence losses, the reduced loss, and the
/// gradients of the reduced loss with respect to `px`, `py` (when asked for).
pub(crate) struct LossCore {
    pub(crate) loss: Array1<f32>,
    /// `d(reduced loss)/d(px)`, with `requires_grad`.
    pub(crate) gx: Option<Array3<f32>>,
    /// `d(reduced loss)/d(py)`, with `requires_grad`; for `Constrained` it already holds
    /// the part that reaches `py` through `px[s][t] += py[s + 1][t]`.
    pub(crate) gy: Option<Array3<f32>>,
    pub(crate) px_grad: Option<Array3<f32>>,
    pub(crate) py_grad: Option<Array3<f32>>,
}

/// The outer slices (`[b]`) of a fresh array as mutable views, for rayon (ndarray is built
/// without its rayon feature).
pub(crate) fn outer_views<A: Send, D: RemoveAxis>(
    arr: &mut Array<A, D>,
) -> rayon::vec::IntoIter<ArrayViewMut<'_, A, D::Smaller>> {
    let inner = arr.raw_dim().remove_axis(Axis(0));
    let count = arr.len_of(Axis(0));
    let len = inner.size();
    let slice = arr
        .as_slice_mut()
        .expect("a fresh array is in standard layout");
    let chunks: Vec<&mut [A]> = if len == 0 {
        (0..count).map(|_| <&mut [A]>::default()).collect()
    } else {
        slice.chunks_mut(len).collect()
    };
    chunks
        .into_iter()
        .map(|chunk| ArrayViewMut::from_shape(inner.clone(), chunk).expect("chunk fits"))
        .collect::<Vec<_>>()
        .into_par_iter()
}

/// k2's `fix_for_boundary` (regular: `px[b][:, t_end] = -inf`) and the `constrained` rule
/// (`px[s][t] += py[s + 1][t]`), applied in place by every `get_rnnt_logprobs*`.
pub(crate) fn finish_logprobs(
    px: &mut Array3<f32>,
    py: &Array3<f32>,
    rnnt_type: RnntType,
    bounds: &[Boundary],
) {
    match rnnt_type {
        RnntType::Regular => {
            for (mut px_b, bound) in px.outer_iter_mut().zip(bounds) {
                px_b.column_mut(bound.t_end).fill(f32::NEG_INFINITY);
            }
        }
        RnntType::Modified => {}
        RnntType::Constrained => {
            let s_count = px.dim().1;
            for (mut px_b, py_b) in px.outer_iter_mut().zip(py.outer_iter()) {
                px_b += &py_b.slice(ndarray::s![1..=s_count, ..]);
            }
        }
    }
}

/// Checks the shared options.
pub(crate) fn check_config(config: &RnntLossConfig) -> Result<(), Error> {
    for (what, v) in [
        ("delay_penalty", config.delay_penalty),
        ("lm_only_scale", config.lm_only_scale),
        ("am_only_scale", config.am_only_scale),
    ] {
        if !v.is_finite() {
            return Err(Error::InvalidArgument {
                what,
                value: f64::from(v),
                allowed: "a finite number",
            });
        }
    }
    Ok(())
}

/// The part every loss shares: the delay penalty on `px`, the recursion, the reduction, and
/// the gradients with respect to `px` and `py`.
pub(crate) fn loss_core(
    mut px: Array3<f32>,
    py: &Array3<f32>,
    boundary: Option<ArrayView2<'_, i64>>,
    config: &RnntLossConfig,
) -> Result<LossCore, Error> {
    let bounds = check::recursion_inputs(px.view(), py.view(), boundary)?;
    let t_count = py.dim().2;
    if config.delay_penalty > 0.0 {
        let t1_count = px.dim().2;
        for (mut px_b, bound) in px.outer_iter_mut().zip(&bounds) {
            // k2: ((t_end - 1) / 2 - t) * delay_penalty, in the float type
            let offset = (bound.t_end as f32 - 1.0) / 2.0;
            for t in 0..t1_count {
                let penalty = (offset - t as f32) * config.delay_penalty;
                px_b.column_mut(t).mapv_inplace(|x| x + penalty);
            }
        }
    }
    let need_grad = config.requires_grad || config.return_grad;
    let out = recursion::run_batch(px.view(), py.view(), &bounds, need_grad);
    let b_count = px.dim().0;
    let per_seq: Vec<f32> = out.scores.iter().map(|&s| -s).collect();
    let loss = match config.reduction {
        Reduction::None => Array1::from(per_seq),
        Reduction::Sum => Array1::from(vec![per_seq.iter().sum::<f32>()]),
        Reduction::Mean => Array1::from(vec![per_seq.iter().sum::<f32>() / b_count.max(1) as f32]),
    };
    let (mut gx, mut gy) = (None, None);
    if config.requires_grad {
        let scale = match config.reduction {
            Reduction::Mean => -1.0 / b_count.max(1) as f32,
            _ => -1.0,
        };
        let ox = out.px_grad.as_ref().expect("asked for");
        let oy = out.py_grad.as_ref().expect("asked for");
        let gx_b = ox.mapv(|o| o * scale);
        let mut gy_b = oy.mapv(|o| o * scale);
        if config.rnnt_type == RnntType::Constrained {
            let s_count = px.dim().1;
            for (mut gy_one, gx_one) in gy_b.outer_iter_mut().zip(gx_b.outer_iter()) {
                let mut rows = gy_one.slice_mut(ndarray::s![1..=s_count, ..t_count]);
                rows += &gx_one.slice(ndarray::s![.., ..t_count]);
            }
        }
        gx = Some(gx_b);
        gy = Some(gy_b);
    }
    let (px_grad, py_grad) = if config.return_grad {
        (out.px_grad, out.py_grad)
    } else {
        (None, None)
    };
    Ok(LossCore {
        loss,
        gx,
        gy,
        px_grad,
        py_grad,
    })
}
