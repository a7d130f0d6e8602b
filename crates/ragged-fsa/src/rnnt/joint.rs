//! The full RNN-T loss from the joiner's logits `[B][T][S + 1][C]` (k2's
//! `get_rnnt_logprobs_joint` and `rnnt_loss`, torchaudio's `rnnt_loss`), with the gradient
//! with respect to the logits. Two passes over the logits (log-sum-exp of each row, then
//! the gradient row) and no other array of their size.

use ndarray::{Array3, Array4, ArrayView1, ArrayView2, ArrayView4, Axis};
use rayon::prelude::*;

use crate::error::Error;
use crate::rnnt::check::{self, Boundary};
use crate::rnnt::math::{log_sum_exp, scaled_softmax};
use crate::rnnt::{finish_logprobs, loss_core, outer_views, RnntLoss, RnntLossConfig, RnntType};

/// `ln sum_c e^row[c]`, reading the row in place when it is contiguous.
pub(crate) fn row_norm(row: ArrayView1<'_, f32>) -> f32 {
    match row.as_slice() {
        Some(slice) => log_sum_exp(slice),
        None => log_sum_exp(&row.to_vec()),
    }
}

/// Checks `logits` (`[B][T][S1][C]`), `symbols` (`[B][S]`), `S <= T`; returns the bounds.
fn check_joint(
    logits: ArrayView4<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
) -> Result<Vec<Boundary>, Error> {
    let (b_count, t_count, s1_count, c_count) = logits.dim();
    if s1_count == 0 {
        return Err(Error::CountMismatch {
            what: "symbol positions in logits (S + 1, at least 1)",
            expected: 1,
            got: 0,
        });
    }
    let s_count = s1_count - 1;
    check::s_and_t(s_count, t_count)?;
    check::symbols(symbols, termination_symbol, b_count, s_count, c_count)?;
    check::finite("logits", logits)?;
    check::boundaries(boundary, b_count, s_count, t_count)
}

/// `px`, `py` and the normalisers `[B][S + 1][T]` of the full joiner output.
fn joint_logprobs(
    logits: ArrayView4<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    rnnt_type: RnntType,
    bounds: &[Boundary],
) -> (Array3<f32>, Array3<f32>, Array3<f32>) {
    let (b_count, t_count, s1_count, _) = logits.dim();
    let s_count = s1_count - 1;
    let t1_count = if rnnt_type == RnntType::Regular {
        t_count + 1
    } else {
        t_count
    };
    let mut px = Array3::<f32>::zeros((b_count, s_count, t1_count));
    let mut py = Array3::<f32>::zeros((b_count, s1_count, t_count));
    let mut norms = Array3::<f32>::zeros((b_count, s1_count, t_count));
    outer_views(&mut px)
        .zip(outer_views(&mut py))
        .zip(outer_views(&mut norms))
        .enumerate()
        .for_each(|(b, ((mut px_b, mut py_b), mut norm_b))| {
            let logits_b = logits.index_axis(Axis(0), b);
            let syms = symbols.row(b);
            for t in 0..t_count {
                let frame = logits_b.index_axis(Axis(0), t);
                for (s, row) in frame.outer_iter().enumerate() {
                    let norm = row_norm(row);
                    norm_b[[s, t]] = norm;
                    py_b[[s, t]] = row[termination_symbol] - norm;
                    if s < s_count {
                        px_b[[s, t]] = row[syms[s] as usize] - norm;
                    }
                }
            }
            if t1_count > t_count {
                px_b.column_mut(t_count).fill(f32::NEG_INFINITY);
            }
        });
    finish_logprobs(&mut px, &py, rnnt_type, bounds);
    (px, py, norms)
}

/// k2's `get_rnnt_logprobs_joint(logits, symbols, termination_symbol, rnnt_type, boundary)`:
/// `px[b][s][t] = log_softmax(logits[b][t][s])[symbols[b][s]]`, `py[b][s][t]` the same for
/// `termination_symbol`, with the `regular` and `constrained` rules of
/// [`get_rnnt_logprobs`](crate::get_rnnt_logprobs).
pub fn get_rnnt_logprobs_joint(
    logits: ArrayView4<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    rnnt_type: RnntType,
    boundary: Option<ArrayView2<'_, i64>>,
) -> Result<(Array3<f32>, Array3<f32>), Error> {
    let bounds = check_joint(logits, symbols, termination_symbol, boundary)?;
    let (px, py, _) = joint_logprobs(logits, symbols, termination_symbol, rnnt_type, &bounds);
    Ok((px, py))
}

/// k2's `rnnt_loss(logits, symbols, termination_symbol, boundary, rnnt_type,
/// delay_penalty, reduction)` (torchaudio's `rnnt_loss` for `Regular` with `blank =
/// termination_symbol`), with `logits_grad`, `d(loss)/d(logits)`, when
/// `config.requires_grad` (and `px_grad`, `py_grad` with `config.return_grad`).
///
/// `logits_grad` is the only array of the logits' size this allocates; rows whose
/// `(s, t)` no path visits get exact zeros.
pub fn rnnt_loss(
    logits: ArrayView4<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
    config: &RnntLossConfig,
) -> Result<RnntLoss, Error> {
    crate::rnnt::check_config(config)?;
    let bounds = check_joint(logits, symbols, termination_symbol, boundary)?;
    let (px, py, norms) = joint_logprobs(
        logits,
        symbols,
        termination_symbol,
        config.rnnt_type,
        &bounds,
    );
    let core = loss_core(px, &py, boundary, config)?;
    let logits_grad = match (&core.gx, &core.gy) {
        (Some(gx), Some(gy)) => Some(joint_grad(
            logits,
            symbols,
            termination_symbol,
            &norms,
            gx,
            gy,
            |_, _, s| s,
        )),
        _ => None,
    };
    Ok(RnntLoss {
        loss: core.loss,
        lm_grad: None,
        am_grad: None,
        logits_grad,
        px_grad: core.px_grad,
        py_grad: core.py_grad,
    })
}

/// `d(loss)/d(logits)` for logits `[B][T][R][C]` whose row `(b, t, r)` holds symbol position
/// `position(b, t, r)` (`r` itself for the full loss, `ranges[b][t][r]` when pruned), given
/// the row normalisers `norms[b][r][t]` and the gradients `gx`, `gy` with respect to `px`,
/// `py`.
pub(crate) fn joint_grad(
    logits: ArrayView4<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    norms: &Array3<f32>,
    gx: &Array3<f32>,
    gy: &Array3<f32>,
    position: impl Fn(usize, usize, usize) -> usize + Sync,
) -> Array4<f32> {
    let (b_count, t_count, r_count, c_count) = logits.dim();
    let s_count = symbols.ncols();
    let mut grad = Array4::<f32>::zeros((b_count, t_count, r_count, c_count));
    outer_views(&mut grad)
        .enumerate()
        .for_each(|(b, mut grad_b)| {
            let logits_b = logits.index_axis(Axis(0), b);
            let syms = symbols.row(b);
            let mut scratch = Vec::new();
            for t in 0..t_count {
                for r in 0..r_count {
                    let s = position(b, t, r);
                    let x = if s < s_count { gx[[b, s, t]] } else { 0.0 };
                    let y = gy[[b, s, t]];
                    let row = logits_b.slice(ndarray::s![t, r, ..]);
                    let mut out = grad_b.slice_mut(ndarray::s![t, r, ..]);
                    let out = out.as_slice_mut().expect("a fresh array is contiguous");
                    let coef = x + y;
                    match row.as_slice() {
                        Some(slice) => scaled_softmax(slice, norms[[b, r, t]], coef, out),
                        None => {
                            scratch.clear();
                            scratch.extend(row.iter().copied());
                            scaled_softmax(&scratch, norms[[b, r, t]], coef, out);
                        }
                    }
                    if s < s_count {
                        out[syms[s] as usize] += x;
                    }
                    out[termination_symbol] += y;
                }
            }
        });
    grad
}
