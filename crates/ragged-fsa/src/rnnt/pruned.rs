//! Pruned RNN-T: k2's `get_rnnt_prune_ranges` (with its monotonic lower-bound adjustment),
//! `do_rnnt_pruning`, `get_rnnt_logprobs_pruned` and `rnnt_loss_pruned`.

use ndarray::{Array2, Array3, Array4, ArrayView2, ArrayView3, ArrayView4, Axis, CowArray, Ix4};
use rayon::prelude::*;

use crate::error::Error;
use crate::rnnt::check::{self, Boundary};
use crate::rnnt::joint::{joint_grad, row_norm};
use crate::rnnt::{finish_logprobs, loss_core, outer_views, RnntLoss, RnntLossConfig, RnntType};

/// k2's `_monotonic_lower_bound`: `x[i] = min(x[i..])`, in place.
fn monotonic_lower_bound(x: &mut [i64]) {
    let mut min = i64::MAX;
    for v in x.iter_mut().rev() {
        min = min.min(*v);
        *v = min;
    }
}

/// k2's `_adjust_pruning_lower_bound`: makes `s_begin` non-decreasing, starting at 0 (or
/// above), with steps below `s_range`.
fn adjust_pruning_lower_bound(s_begin: &mut [i64], s_range: i64) {
    monotonic_lower_bound(s_begin);
    let step = s_range - 1;
    for (t, v) in s_begin.iter_mut().enumerate() {
        *v = step * t as i64 - *v;
    }
    monotonic_lower_bound(s_begin);
    for (t, v) in s_begin.iter_mut().enumerate() {
        *v = step * t as i64 - (*v).max(0);
    }
}

/// k2's `get_rnnt_prune_ranges(px_grad, py_grad, boundary, s_range)`: for each frame the
/// `s_range` consecutive symbol positions (`[B][T][s_range]`) holding the most occupation,
/// from the gradients [`rnnt_loss_smoothed`](crate::rnnt_loss_smoothed) (or
/// `rnnt_loss_simple`) returns with `return_grad`.
///
/// Frame `t`'s window starts at the `k` maximising `sum(py_grad[k..k + s_range][t]) -
/// px_grad[k - 1][t]` (the first on ties); frames from `t_end - 1` on start at
/// `max(s_end - s_range + 1, 0)`; then the starts are made non-decreasing, starting at 0,
/// with steps below `s_range` (below 2 for `modified`/`constrained`, `px_grad` `[B][S][T]`).
/// `s_range` above `S` becomes `S + 1`; it must be at least 2 (`regular`) or 1.
pub fn get_rnnt_prune_ranges(
    px_grad: ArrayView3<'_, f32>,
    py_grad: ArrayView3<'_, f32>,
    boundary: ArrayView2<'_, i64>,
    s_range: usize,
) -> Result<Array3<i64>, Error> {
    let bounds = check::recursion_inputs(px_grad, py_grad, Some(boundary))?;
    let (b_count, s_count, t1_count) = px_grad.dim();
    let t_count = py_grad.dim().2;
    check::s_and_t(s_count, t_count)?;
    let modified = t1_count == t_count;
    let s_range = if s_range > s_count {
        s_count + 1
    } else {
        s_range
    };
    let least = if modified { 1 } else { 2 };
    if s_range < least {
        return Err(Error::InvalidArgument {
            what: "s_range",
            value: s_range as f64,
            allowed: "at least 2 (regular) or 1 (modified, constrained)",
        });
    }
    check::no_nan_or_pos_inf("px_grad", px_grad)?;
    check::no_nan_or_pos_inf("py_grad", py_grad)?;
    let windows = s_count + 2 - s_range;
    let mut ranges = Array3::<i64>::zeros((b_count, t_count, s_range));
    outer_views(&mut ranges)
        .enumerate()
        .for_each(|(b, mut out)| {
            let Boundary { s_end, t_end, .. } = bounds[b];
            let gx = px_grad.index_axis(Axis(0), b);
            let gy = py_grad.index_axis(Axis(0), b);
            let padding = (s_end as i64 - s_range as i64 + 1).max(0);
            let mut s_begin: Vec<i64> = (0..t_count)
                .map(|t| {
                    if (t as i64) >= t_end as i64 - 1 {
                        return padding;
                    }
                    let mut best = (f32::NEG_INFINITY, 0usize);
                    for k in 0..windows {
                        let mut sum = 0f32;
                        for j in 0..s_range {
                            sum += gy[[k + j, t]];
                        }
                        let score = if k > 0 {
                            sum - gx[[k - 1, t]]
                        } else {
                            sum - 0.0
                        };
                        if score > best.0 || k == 0 {
                            best = (score, k);
                        }
                    }
                    best.1 as i64
                })
                .collect();
            adjust_pruning_lower_bound(&mut s_begin, if modified { 2 } else { s_range as i64 });
            for (t, &start) in s_begin.iter().enumerate() {
                for r in 0..s_range {
                    out[[t, r]] = start + r as i64;
                }
            }
        });
    Ok(ranges)
}

/// Checks `ranges` (`[B][T][R]`): each row `R` consecutive positions starting in
/// `0..=S + 1 - R`, the starts non-decreasing over the frames. Returns the starts `[B][T]`.
fn check_ranges(
    ranges: ArrayView3<'_, i64>,
    b_count: usize,
    t_count: usize,
    s_count: usize,
) -> Result<Array2<usize>, Error> {
    let (rb, rt, r_count) = ranges.dim();
    check::dim("sequences in ranges (B)", b_count, rb)?;
    check::dim("frames in ranges (T)", t_count, rt)?;
    if r_count == 0 || r_count > s_count + 1 {
        return Err(Error::InvalidArgument {
            what: "s_range (last dimension of ranges)",
            value: r_count as f64,
            allowed: "1..=S + 1",
        });
    }
    let max_start = (s_count + 1 - r_count) as i64;
    let mut starts = Array2::<usize>::zeros((b_count, t_count));
    for b in 0..b_count {
        let mut previous = 0i64;
        for t in 0..t_count {
            let start = ranges[[b, t, 0]];
            let position = (b * t_count + t) * r_count;
            let bad = |value: i64, position: usize, size: usize| {
                Error::MapOutOfRange {
                map: "ranges (row-major [B][T][s_range]; rows must be consecutive positions whose starts never decrease)",
                position,
                value: i32::try_from(value).unwrap_or(i32::MAX),
                size,
            }
            };
            if start < previous || start > max_start {
                // below the previous frame's start, or past the last window
                return Err(bad(start, position, (max_start + 1) as usize));
            }
            for r in 1..r_count {
                if ranges[[b, t, r]] != start + r as i64 {
                    return Err(bad(ranges[[b, t, r]], position + r, s_count + 1));
                }
            }
            starts[[b, t]] = start as usize;
            previous = start;
        }
    }
    Ok(starts)
}

/// k2's `do_rnnt_pruning(am, lm, ranges)`: the joiner's inputs on the pruned band,
/// `am_pruned[b][t][r] = am[b][t]` (`[B][T][s_range][E]`, a broadcast view when `am` is in
/// standard layout, as k2's `expand`) and `lm_pruned[b][t][r] = lm[b][ranges[b][t][r]]`
/// (`[B][T][s_range][D]`, gathered).
pub fn do_rnnt_pruning<'a>(
    am: ArrayView3<'a, f32>,
    lm: ArrayView3<'_, f32>,
    ranges: ArrayView3<'_, i64>,
) -> Result<(CowArray<'a, f32, Ix4>, Array4<f32>), Error> {
    let (b_count, t_count, e_count) = am.dim();
    let (lb, s1_count, d_count) = lm.dim();
    check::dim("sequences in lm (B of am)", b_count, lb)?;
    if s1_count == 0 {
        return Err(Error::CountMismatch {
            what: "rows of lm (S + 1, at least 1)",
            expected: 1,
            got: 0,
        });
    }
    let starts = check_ranges(ranges, b_count, t_count, s1_count - 1)?;
    let r_count = ranges.dim().2;
    let shape = (b_count, t_count, r_count, e_count);
    let am_pruned = match am.to_slice() {
        Some(slice) => {
            let strides = (t_count * e_count, e_count, 0, 1);
            let view =
                ArrayView4::from_shape(ndarray::ShapeBuilder::strides(shape, strides), slice)
                    .expect("a standard-layout slice covers the broadcast view");
            CowArray::from(view)
        }
        None => {
            let owned = am
                .insert_axis(Axis(2))
                .broadcast(shape)
                .expect("axis 2 has length 1")
                .to_owned();
            CowArray::from(owned)
        }
    };
    let mut lm_pruned = Array4::<f32>::zeros((b_count, t_count, r_count, d_count));
    outer_views(&mut lm_pruned)
        .enumerate()
        .for_each(|(b, mut out)| {
            for t in 0..t_count {
                for r in 0..r_count {
                    out.slice_mut(ndarray::s![t, r, ..])
                        .assign(&lm.slice(ndarray::s![b, starts[[b, t]] + r, ..]));
                }
            }
        });
    Ok((am_pruned, lm_pruned))
}

/// Checks of the pruned logits; returns the bounds and the range starts.
fn check_pruned(
    logits: ArrayView4<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    ranges: ArrayView3<'_, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
) -> Result<(Vec<Boundary>, Array2<usize>), Error> {
    let (b_count, t_count, r_count, c_count) = logits.dim();
    let s_count = symbols.ncols();
    check::s_and_t(s_count, t_count)?;
    check::symbols(symbols, termination_symbol, b_count, s_count, c_count)?;
    check::dim(
        "s_range of ranges (s_range of logits)",
        r_count,
        ranges.dim().2,
    )?;
    let starts = check_ranges(ranges, b_count, t_count, s_count)?;
    check::finite("logits", logits)?;
    let bounds = check::boundaries(boundary, b_count, s_count, t_count)?;
    Ok((bounds, starts))
}

/// `px`, `py` and the row normalisers `[B][s_range][T]` of pruned logits.
fn pruned_logprobs(
    logits: ArrayView4<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    starts: &Array2<usize>,
    termination_symbol: usize,
    rnnt_type: RnntType,
    bounds: &[Boundary],
) -> (Array3<f32>, Array3<f32>, Array3<f32>) {
    let (b_count, t_count, r_count, _) = logits.dim();
    let s_count = symbols.ncols();
    let t1_count = if rnnt_type == RnntType::Regular {
        t_count + 1
    } else {
        t_count
    };
    let mut px = Array3::<f32>::from_elem((b_count, s_count, t1_count), f32::NEG_INFINITY);
    let mut py = Array3::<f32>::from_elem((b_count, s_count + 1, t_count), f32::NEG_INFINITY);
    let mut norms = Array3::<f32>::zeros((b_count, r_count, t_count));
    outer_views(&mut px)
        .zip(outer_views(&mut py))
        .zip(outer_views(&mut norms))
        .enumerate()
        .for_each(|(b, ((mut px_b, mut py_b), mut norm_b))| {
            let syms = symbols.row(b);
            for t in 0..t_count {
                let start = starts[[b, t]];
                for r in 0..r_count {
                    let row = logits.slice(ndarray::s![b, t, r, ..]);
                    let norm = row_norm(row);
                    norm_b[[r, t]] = norm;
                    let s = start + r;
                    py_b[[s, t]] = row[termination_symbol] - norm;
                    if s < s_count {
                        px_b[[s, t]] = row[syms[s] as usize] - norm;
                    }
                }
            }
        });
    finish_logprobs(&mut px, &py, rnnt_type, bounds);
    (px, py, norms)
}

/// k2's `get_rnnt_logprobs_pruned(logits, symbols, ranges, termination_symbol, boundary,
/// rnnt_type)`: `px`, `py` from the joiner's output on the pruned band (`logits`
/// `[B][T][s_range][C]`, row `r` of frame `t` at symbol position `ranges[b][t][r]`),
/// `-inf` off the band.
pub fn get_rnnt_logprobs_pruned(
    logits: ArrayView4<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    ranges: ArrayView3<'_, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
    rnnt_type: RnntType,
) -> Result<(Array3<f32>, Array3<f32>), Error> {
    let (bounds, starts) = check_pruned(logits, symbols, ranges, termination_symbol, boundary)?;
    let (px, py, _) = pruned_logprobs(
        logits,
        symbols,
        &starts,
        termination_symbol,
        rnnt_type,
        &bounds,
    );
    Ok((px, py))
}

/// k2's `rnnt_loss_pruned(logits, symbols, ranges, termination_symbol, boundary,
/// rnnt_type, delay_penalty, reduction)`, with `logits_grad` (`[B][T][s_range][C]`) when
/// `config.requires_grad`.
pub fn rnnt_loss_pruned(
    logits: ArrayView4<'_, f32>,
    symbols: ArrayView2<'_, i64>,
    ranges: ArrayView3<'_, i64>,
    termination_symbol: usize,
    boundary: Option<ArrayView2<'_, i64>>,
    config: &RnntLossConfig,
) -> Result<RnntLoss, Error> {
    crate::rnnt::check_config(config)?;
    let (bounds, starts) = check_pruned(logits, symbols, ranges, termination_symbol, boundary)?;
    let (px, py, norms) = pruned_logprobs(
        logits,
        symbols,
        &starts,
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
            |b, t, r| starts[[b, t]] + r,
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
