//! The RNN-T losses with an additive joiner (`lm + am`, normalised over the symbols):
//! k2's `get_rnnt_logprobs`, `rnnt_loss_simple`, `get_rnnt_logprobs_smoothed`,
//! `rnnt_loss_smoothed`, with the gradients with respect to `lm` and `am`.
//!
//! The normaliser `N[s][t] = ln sum_c e^(lm[s][c] + am[t][c])` is one matrix product per
//! sequence (`e^(lm - max) . e^(am - max)^T`), and its gradient two more, as in k2.

use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array1, Array2, Array3, ArrayView2, ArrayView3, Axis};
use rayon::prelude::*;

use crate::error::Error;
use crate::rnnt::check::{self, Boundary};
use crate::rnnt::math::exp_f32;
use crate::rnnt::{finish_logprobs, loss_core, outer_views, RnntLoss, RnntLossConfig, RnntType};

/// torch.finfo(float32).tiny, which k2 adds before every `log`.
const TINY: f32 = f32::MIN_POSITIVE;

/// The per-sequence quantities the gradient needs again.
struct Prepared {
    /// Row maxima of `lm`, `[S + 1]`.
    lm_max: Vec<f32>,
    /// Row maxima of `am`, `[T]`.
    am_max: Vec<f32>,
    /// `e^(lm - lm_max)`, `[S + 1][C]`.
    lmp: Array2<f32>,
    /// `e^(am - am_max)`, `[T][C]`.
    amp: Array2<f32>,
    /// `lmp . amp^T + tiny`, `[S + 1][T]`.
    z: Array2<f32>,
    /// `sum_c lmp[s][c]`, `[S + 1]` (smoothed only).
    lm_sum: Vec<f32>,
    /// `sum_c amp[t][c] u[c]`, `[T]` (smoothed only).
    am_uni: Vec<f32>,
}

/// The smoothing scales as k2 applies them.
#[derive(Clone, Copy)]
struct Smooth {
    combined: f32,
    lm_only: f32,
    am_only: f32,
}

impl Smooth {
    fn new(lm_only_scale: f32, am_only_scale: f32) -> Self {
        // k2 replaces exact zeros by 1e-20 (after taking the combined scale) so that
        // -inf * scale stays -inf rather than NaN.
        let fix = |x: f32| if x == 0.0 { 1.0e-20 } else { x };
        Smooth {
            combined: 1.0 - lm_only_scale - am_only_scale,
            lm_only: fix(lm_only_scale),
            am_only: fix(am_only_scale),
        }
    }
}

struct Inputs<'a> {
    lm: ArrayView3<'a, f32>,
    am: ArrayView3<'a, f32>,
    symbols: ArrayView2<'a, i64>,
    termination_symbol: usize,
    bounds: Vec<Boundary>,
}

fn check_inputs<'a>(
    lm: ArrayView3<'a, f32>,
    am: ArrayView3<'a, f32>,
    symbols: ArrayView2<'a, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
) -> Result<Inputs<'a>, Error> {
    let (b_count, t_count, c_count) = am.dim();
    check::dim("sequences in lm (B of am)", b_count, lm.dim().0)?;
    check::dim("symbol classes in lm (C of am)", c_count, lm.dim().2)?;
    if lm.dim().1 == 0 {
        return Err(Error::CountMismatch {
            what: "rows of lm (S + 1, at least 1)",
            expected: 1,
            got: 0,
        });
    }
    let s_count = lm.dim().1 - 1;
    check::s_and_t(s_count, t_count)?;
    check::symbols(symbols, termination_symbol, b_count, s_count, c_count)?;
    check::finite("lm", lm)?;
    check::finite("am", am)?;
    let bounds = check::boundaries(boundary, b_count, s_count, t_count)?;
    Ok(Inputs {
        lm,
        am,
        symbols,
        termination_symbol,
        bounds,
    })
}

/// `e^(x - max)` of each row and the row maxima.
fn exp_rows(x: ArrayView2<'_, f32>) -> (Vec<f32>, Array2<f32>) {
    let mut maxes = Vec::with_capacity(x.nrows());
    let mut out = Array2::zeros(x.dim());
    for (row, mut out_row) in x.outer_iter().zip(out.outer_iter_mut()) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for (o, &v) in out_row.iter_mut().zip(row) {
            *o = exp_f32(v - max);
        }
        maxes.push(max);
    }
    (maxes, out)
}

/// `px`, `py` and the per-sequence intermediates, for the simple (`smooth = None`) or the
/// smoothed loss.
fn logprobs(
    inputs: &Inputs<'_>,
    rnnt_type: RnntType,
    smooth: Option<Smooth>,
) -> (Array3<f32>, Array3<f32>, Vec<Prepared>, Array1<f32>) {
    let (b_count, t_count, c_count) = inputs.am.dim();
    let s_count = inputs.lm.dim().1 - 1;
    let t1_count = if rnnt_type == RnntType::Regular {
        t_count + 1
    } else {
        t_count
    };
    let term = inputs.termination_symbol;
    // stage 1: the exponentials and the normaliser products, per sequence
    let mut prepared: Vec<Prepared> = (0..b_count)
        .into_par_iter()
        .map(|b| {
            let (lm_max, lmp) = exp_rows(inputs.lm.index_axis(Axis(0), b));
            let (am_max, amp) = exp_rows(inputs.am.index_axis(Axis(0), b));
            let mut z = Array2::zeros((s_count + 1, t_count));
            general_mat_mul(1.0, &lmp, &amp.t(), 0.0, &mut z);
            z.mapv_inplace(|v| v + TINY);
            // keep the maxima in the normaliser: N = ln z + lm_max + am_max
            let lm_sum = if smooth.is_some() {
                lmp.outer_iter().map(|r| r.sum()).collect()
            } else {
                Vec::new()
            };
            Prepared {
                lm_max,
                am_max,
                lmp,
                amp,
                z,
                lm_sum,
                am_uni: Vec::new(),
            }
        })
        .collect();
    // stage 2 (smoothed): the unigram, the mean over the batch and positions of the
    // LM-only softmax
    let unigram = if smooth.is_some() {
        let mut u = Array1::<f32>::zeros(c_count);
        for p in &prepared {
            for (row, &sum) in p.lmp.outer_iter().zip(&p.lm_sum) {
                u.zip_mut_with(&row, |acc, &v| *acc += v / sum);
            }
        }
        let count = (b_count * (s_count + 1)) as f32;
        u.mapv_inplace(|v| v / count + TINY);
        u
    } else {
        Array1::zeros(0)
    };
    // stage 3: px and py
    let mut px = Array3::<f32>::zeros((b_count, s_count, t1_count));
    let mut py = Array3::<f32>::zeros((b_count, s_count + 1, t_count));
    outer_views(&mut px)
        .zip(outer_views(&mut py))
        .zip(prepared.par_iter_mut())
        .enumerate()
        .for_each(|(b, ((mut px_b, mut py_b), prep))| {
            let lm = inputs.lm.index_axis(Axis(0), b);
            let am = inputs.am.index_axis(Axis(0), b);
            let syms = inputs.symbols.row(b);
            let (lm_max, am_max) = (&prep.lm_max, &prep.am_max);
            let norm = |s: usize, t: usize| prep.z[[s, t]].ln() + lm_max[s] + am_max[t];
            let mut am_uni_norm = Vec::new();
            let mut lm_only_norm = Vec::new();
            if smooth.is_some() {
                let amp_u = prep.amp.dot(&unigram);
                am_uni_norm = amp_u
                    .iter()
                    .zip(am_max)
                    .map(|(&v, &m)| v.ln() + m)
                    .collect();
                prep.am_uni = amp_u.to_vec();
                lm_only_norm = prep
                    .lm_sum
                    .iter()
                    .zip(lm_max)
                    .map(|(&v, &m)| v.ln() + m)
                    .collect();
            }
            let log_u = |c: usize| unigram[c].ln();
            for s in 0..=s_count {
                for t in 0..t_count {
                    let mut y = am[[t, term]] + lm[[s, term]] - norm(s, t);
                    if let Some(sm) = smooth {
                        let y_lm = lm[[s, term]] - lm_only_norm[s];
                        let y_am = am[[t, term]] + log_u(term) - am_uni_norm[t];
                        y = y * sm.combined + y_lm * sm.lm_only + y_am * sm.am_only;
                    }
                    py_b[[s, t]] = y;
                }
            }
            for s in 0..s_count {
                let sym = syms[s] as usize;
                for t in 0..t_count {
                    let mut x = am[[t, sym]] + lm[[s, sym]] - norm(s, t);
                    if let Some(sm) = smooth {
                        let x_lm = lm[[s, sym]] - lm_only_norm[s];
                        let x_am = am[[t, sym]] + log_u(sym) - am_uni_norm[t];
                        x = x * sm.combined + x_lm * sm.lm_only + x_am * sm.am_only;
                    }
                    px_b[[s, t]] = x;
                }
                if t1_count > t_count {
                    px_b[[s, t_count]] = f32::NEG_INFINITY;
                }
            }
        });
    finish_logprobs(&mut px, &py, rnnt_type, &inputs.bounds);
    (px, py, prepared, unigram)
}

/// k2's `get_rnnt_logprobs(lm, am, symbols, termination_symbol, rnnt_type, boundary)`:
/// `(px, py)` of the RNN-T with joiner `lm + am` (log-softmax over the `C` classes), for
/// [`mutual_information_recursion`](crate::mutual_information_recursion).
///
/// `px[b][s][t]` is the log-probability of `symbols[b][s]` at `(s, t)`, `py[b][s][t]` that of
/// `termination_symbol`; for `Regular`, `px[b][:, t_end]` is `-inf`; for `Constrained`,
/// `px[s][t]` includes `py[s + 1][t]`. Needs `1 <= S <= T`, symbols in `0..C`, finite
/// `lm` (`[B][S + 1][C]`) and `am` (`[B][T][C]`).
pub fn get_rnnt_logprobs(
    lm: ArrayView3<'_, f32>,
    am: ArrayView3<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    rnnt_type: RnntType,
    boundary: Option<ArrayView2<'_, i64>>,
) -> Result<(Array3<f32>, Array3<f32>), Error> {
    let inputs = check_inputs(
        lm.view(),
        am.view(),
        symbols.view(),
        termination_symbol,
        boundary,
    )?;
    let (px, py, _, _) = logprobs(&inputs, rnnt_type, None);
    Ok((px, py))
}

/// k2's `get_rnnt_logprobs_smoothed(lm, am, symbols, termination_symbol, lm_only_scale,
/// am_only_scale, boundary, rnnt_type)` (the scales from `config`, `config.rnnt_type`):
/// `(px, py)` interpolating, in the log domain, the joint log-probabilities (weight
/// `1 - lm_only_scale - am_only_scale`), the LM-only ones (`log_softmax(lm)`) and the AM-only
/// ones (`am` against a unigram LM: the mean of `softmax(lm)` over the batch and positions).
pub fn get_rnnt_logprobs_smoothed(
    lm: ArrayView3<'_, f32>,
    am: ArrayView3<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
    config: &RnntLossConfig,
) -> Result<(Array3<f32>, Array3<f32>), Error> {
    crate::rnnt::check_config(config)?;
    let inputs = check_inputs(
        lm.view(),
        am.view(),
        symbols.view(),
        termination_symbol,
        boundary,
    )?;
    let smooth = Smooth::new(config.lm_only_scale, config.am_only_scale);
    let (px, py, _, _) = logprobs(&inputs, config.rnnt_type, Some(smooth));
    Ok((px, py))
}

/// k2's `rnnt_loss_simple(lm, am, symbols, termination_symbol, boundary, rnnt_type,
/// delay_penalty, reduction, return_grad)`: the RNN-T loss of [`get_rnnt_logprobs`], with
/// `lm_grad` and `am_grad` (of the reduced loss) when `config.requires_grad`.
pub fn rnnt_loss_simple(
    lm: ArrayView3<'_, f32>,
    am: ArrayView3<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
    config: &RnntLossConfig,
) -> Result<RnntLoss, Error> {
    loss(lm, am, symbols, termination_symbol, boundary, config, false)
}

/// k2's `rnnt_loss_smoothed(lm, am, symbols, termination_symbol, lm_only_scale,
/// am_only_scale, boundary, rnnt_type, delay_penalty, reduction, return_grad)`: the loss of
/// [`get_rnnt_logprobs_smoothed`]. Through the unigram, each sequence's `lm` reaches every
/// sequence's loss, and `lm_grad` includes that.
pub fn rnnt_loss_smoothed(
    lm: ArrayView3<'_, f32>,
    am: ArrayView3<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
    config: &RnntLossConfig,
) -> Result<RnntLoss, Error> {
    loss(lm, am, symbols, termination_symbol, boundary, config, true)
}

fn loss(
    lm: ArrayView3<'_, f32>,
    am: ArrayView3<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
    config: &RnntLossConfig,
    smoothed: bool,
) -> Result<RnntLoss, Error> {
    crate::rnnt::check_config(config)?;
    let inputs = check_inputs(
        lm.view(),
        am.view(),
        symbols.view(),
        termination_symbol,
        boundary,
    )?;
    let smooth = smoothed.then(|| Smooth::new(config.lm_only_scale, config.am_only_scale));
    let (px, py, prepared, unigram) = logprobs(&inputs, config.rnnt_type, smooth);
    let core = loss_core(px, &py, boundary, config)?;
    let (mut lm_grad, mut am_grad) = (None, None);
    if let (Some(gx), Some(gy)) = (&core.gx, &core.gy) {
        let (l, a) = backward(&inputs, &prepared, gx, gy, smooth, &unigram);
        lm_grad = Some(l);
        am_grad = Some(a);
    }
    Ok(RnntLoss {
        loss: core.loss,
        lm_grad,
        am_grad,
        logits_grad: None,
        px_grad: core.px_grad,
        py_grad: core.py_grad,
    })
}

/// The gradients with respect to `lm` and `am`, given those with respect to `px` and `py`
/// (the constrained rule already folded into `gy`).
fn backward(
    inputs: &Inputs<'_>,
    prepared: &[Prepared],
    gx: &Array3<f32>,
    gy: &Array3<f32>,
    smooth: Option<Smooth>,
    unigram: &Array1<f32>,
) -> (Array3<f32>, Array3<f32>) {
    let (b_count, t_count, c_count) = inputs.am.dim();
    let s_count = inputs.lm.dim().1 - 1;
    let term = inputs.termination_symbol;
    let combined = smooth.map_or(1.0, |sm| sm.combined);
    let mut lm_grad = Array3::<f32>::zeros((b_count, s_count + 1, c_count));
    let mut am_grad = Array3::<f32>::zeros((b_count, t_count, c_count));
    // per sequence: its part of d(loss)/d(unigram) (smoothed only)
    let unigram_grads: Vec<Array1<f32>> = outer_views(&mut lm_grad)
        .zip(outer_views(&mut am_grad))
        .enumerate()
        .map(|(b, (mut lm_g, mut am_g))| {
            let prep = &prepared[b];
            let gx_b = gx.index_axis(Axis(0), b);
            let gy_b = gy.index_axis(Axis(0), b);
            let gx_b = gx_b.slice(s![.., ..t_count]);
            let syms = inputs.symbols.row(b);
            // the joint part: W = -(gx + gy) combined / z
            let mut w = gy_b.to_owned();
            w.slice_mut(s![..s_count, ..])
                .zip_mut_with(&gx_b, |a, &b| *a += b);
            w.zip_mut_with(&prep.z, |a, &z| *a *= -combined / z);
            general_mat_mul(1.0, &w, &prep.amp, 0.0, &mut lm_g);
            lm_g.zip_mut_with(&prep.lmp, |a, &p| *a *= p);
            general_mat_mul(1.0, &w.t(), &prep.lmp, 0.0, &mut am_g);
            am_g.zip_mut_with(&prep.amp, |a, &p| *a *= p);
            let gx_rows: Vec<f32> = gx_b.outer_iter().map(|r| r.sum()).collect();
            let gy_rows: Vec<f32> = gy_b.outer_iter().map(|r| r.sum()).collect();
            let gy_cols: Vec<f32> = gy_b.axis_iter(Axis(1)).map(|c| c.sum()).collect();
            for s in 0..s_count {
                let sym = syms[s] as usize;
                lm_g[[s, sym]] += combined * gx_rows[s];
                for t in 0..t_count {
                    am_g[[t, sym]] += combined * gx_b[[s, t]];
                }
            }
            for s in 0..=s_count {
                lm_g[[s, term]] += combined * gy_rows[s];
            }
            for t in 0..t_count {
                am_g[[t, term]] += combined * gy_cols[t];
            }
            let Some(sm) = smooth else {
                return Array1::zeros(0);
            };
            // LM-only part: px_lm[s] = lm[s][y_s] - logsumexp(lm[s]), likewise py_lm
            for s in 0..=s_count {
                let gxs = if s < s_count {
                    sm.lm_only * gx_rows[s]
                } else {
                    0.0
                };
                let gys = sm.lm_only * gy_rows[s];
                let sum = prep.lm_sum[s];
                let mut row = lm_g.row_mut(s);
                row.zip_mut_with(&prep.lmp.row(s), |a, &p| *a -= (gxs + gys) * p / sum);
                if s < s_count {
                    row[syms[s] as usize] += gxs;
                }
                row[term] += gys;
            }
            // AM-only part: px_am[s][t] = am[t][y_s] + ln u[y_s] - ln(sum_c e^am[t][c] u[c])
            let mut du = Array1::<f32>::zeros(c_count);
            let gx_cols: Vec<f32> = gx_b.axis_iter(Axis(1)).map(|c| c.sum()).collect();
            for t in 0..t_count {
                let ct = sm.am_only * (gx_cols[t] + gy_cols[t]);
                let asum = prep.am_uni[t];
                let mut row = am_g.row_mut(t);
                let amp_row = prep.amp.row(t);
                for c in 0..c_count {
                    let q = amp_row[c] / asum;
                    row[c] -= ct * q * unigram[c];
                    du[c] -= ct * q;
                }
                for s in 0..s_count {
                    row[syms[s] as usize] += sm.am_only * gx_b[[s, t]];
                }
                row[term] += sm.am_only * gy_cols[t];
            }
            for s in 0..s_count {
                let sym = syms[s] as usize;
                du[sym] += sm.am_only * gx_rows[s] / unigram[sym];
            }
            du[term] += sm.am_only * gy_rows.iter().sum::<f32>() / unigram[term];
            du
        })
        .collect();
    if smooth.is_some() {
        // u = mean over (b, s) of softmax(lm[b][s]) + tiny: spread d(loss)/du back to lm
        let mut du = Array1::<f32>::zeros(c_count);
        for g in &unigram_grads {
            du += g;
        }
        let k = 1.0 / (b_count * (s_count + 1)) as f32;
        outer_views(&mut lm_grad)
            .zip(prepared.par_iter())
            .for_each(|(mut lm_g, prep)| {
                for s in 0..=s_count {
                    let sum = prep.lm_sum[s];
                    let p = prep.lmp.row(s);
                    let dot: f32 = p.iter().zip(&du).map(|(&p, &d)| p / sum * d).sum();
                    let mut row = lm_g.row_mut(s);
                    for c in 0..c_count {
                        row[c] += k * p[c] / sum * (du[c] - dot);
                    }
                }
            });
    }
    (lm_grad, am_grad)
}
