//! The RNN-T losses of ragged-fsa for `arrays.k2`: float32 C arrays in, the loss and the
//! gradients the Rust code computes out (as numpy arrays), the GIL released around the work.

use numpy::{
    IntoPyArray, PyArray1, PyArray3, PyArray4, PyReadonlyArray2, PyReadonlyArray3, PyReadonlyArray4,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use ragged_fsa::{Reduction, RnntLoss, RnntLossConfig, RnntType};

use crate::py_err;

/// `(loss, lm_grad, am_grad, logits_grad, px_grad, py_grad)`, each gradient when computed.
type RnntOut<'py> = (
    Bound<'py, PyArray1<f32>>,
    Option<Bound<'py, PyArray3<f32>>>,
    Option<Bound<'py, PyArray3<f32>>>,
    Option<Bound<'py, PyArray4<f32>>>,
    Option<Bound<'py, PyArray3<f32>>>,
    Option<Bound<'py, PyArray3<f32>>>,
);

/// `(am_pruned, lm_pruned)`.
type PrunedOut<'py> = (Bound<'py, PyArray4<f32>>, Bound<'py, PyArray4<f32>>);

/// `(px, py)`.
type LogprobsOut<'py> = (Bound<'py, PyArray3<f32>>, Bound<'py, PyArray3<f32>>);

/// k2's keyword arguments as a config (a `ValueError` for an unknown name).
#[allow(clippy::too_many_arguments)]
fn config(
    rnnt_type: &str,
    delay_penalty: f32,
    reduction: &str,
    return_grad: bool,
    requires_grad: bool,
    lm_only_scale: f32,
    am_only_scale: f32,
) -> PyResult<RnntLossConfig> {
    let rnnt_type = match rnnt_type {
        "regular" => RnntType::Regular,
        "modified" => RnntType::Modified,
        "constrained" => RnntType::Constrained,
        other => {
            return Err(PyValueError::new_err(format!(
                "rnnt_type must be 'regular', 'modified' or 'constrained', not {other:?}"
            )))
        }
    };
    let reduction = match reduction {
        "none" => Reduction::None,
        "mean" => Reduction::Mean,
        "sum" => Reduction::Sum,
        other => {
            return Err(PyValueError::new_err(format!(
                "reduction must be 'none', 'mean' or 'sum', not {other:?}"
            )))
        }
    };
    Ok(RnntLossConfig {
        rnnt_type,
        delay_penalty,
        reduction,
        return_grad,
        requires_grad,
        lm_only_scale,
        am_only_scale,
    })
}

/// A termination symbol as an index (a `ValueError` when negative).
fn termination(termination_symbol: i64) -> PyResult<usize> {
    usize::try_from(termination_symbol).map_err(|_| {
        PyValueError::new_err(format!(
            "termination_symbol must be non-negative, got {termination_symbol}"
        ))
    })
}

fn out(py: Python<'_>, r: RnntLoss) -> RnntOut<'_> {
    (
        r.loss.into_pyarray(py),
        r.lm_grad.map(|a| a.into_pyarray(py)),
        r.am_grad.map(|a| a.into_pyarray(py)),
        r.logits_grad.map(|a| a.into_pyarray(py)),
        r.px_grad.map(|a| a.into_pyarray(py)),
        r.py_grad.map(|a| a.into_pyarray(py)),
    )
}

/// `rnnt_loss_simple` (`smoothed` false) or `rnnt_loss_smoothed` (true) on `lm`
/// `[B][S + 1][C]`, `am` `[B][T][C]`.
#[pyfunction]
#[pyo3(signature = (lm, am, symbols, termination_symbol, boundary, smoothed, rnnt_type,
    delay_penalty, reduction, return_grad, requires_grad, lm_only_scale, am_only_scale))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn rnnt_loss_lm_am<'py>(
    py: Python<'py>,
    lm: PyReadonlyArray3<'py, f32>,
    am: PyReadonlyArray3<'py, f32>,
    symbols: PyReadonlyArray2<'py, i64>,
    termination_symbol: i64,
    boundary: Option<PyReadonlyArray2<'py, i64>>,
    smoothed: bool,
    rnnt_type: &str,
    delay_penalty: f32,
    reduction: &str,
    return_grad: bool,
    requires_grad: bool,
    lm_only_scale: f32,
    am_only_scale: f32,
) -> PyResult<RnntOut<'py>> {
    let cfg = config(
        rnnt_type,
        delay_penalty,
        reduction,
        return_grad,
        requires_grad,
        lm_only_scale,
        am_only_scale,
    )?;
    let term = termination(termination_symbol)?;
    let (lm, am, symbols) = (lm.as_array(), am.as_array(), symbols.as_array());
    let boundary = boundary.as_ref().map(|b| b.as_array());
    let r = py
        .allow_threads(|| {
            if smoothed {
                ragged_fsa::rnnt_loss_smoothed(lm, am, symbols, term, boundary, &cfg)
            } else {
                ragged_fsa::rnnt_loss_simple(lm, am, symbols, term, boundary, &cfg)
            }
        })
        .map_err(py_err)?;
    Ok(out(py, r))
}

/// `get_rnnt_logprobs` (`smoothed` false) or `get_rnnt_logprobs_smoothed` (true) on `lm`
/// `[B][S + 1][C]`, `am` `[B][T][C]`: `(px, py)`.
#[pyfunction]
#[pyo3(signature = (lm, am, symbols, termination_symbol, boundary, rnnt_type, smoothed,
    lm_only_scale, am_only_scale))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn get_rnnt_logprobs<'py>(
    py: Python<'py>,
    lm: PyReadonlyArray3<'py, f32>,
    am: PyReadonlyArray3<'py, f32>,
    symbols: PyReadonlyArray2<'py, i64>,
    termination_symbol: i64,
    boundary: Option<PyReadonlyArray2<'py, i64>>,
    rnnt_type: &str,
    smoothed: bool,
    lm_only_scale: f32,
    am_only_scale: f32,
) -> PyResult<LogprobsOut<'py>> {
    let cfg = config(
        rnnt_type,
        0.0,
        "none",
        false,
        false,
        lm_only_scale,
        am_only_scale,
    )?;
    let term = termination(termination_symbol)?;
    let (lm, am, symbols) = (lm.as_array(), am.as_array(), symbols.as_array());
    let boundary = boundary.as_ref().map(|b| b.as_array());
    let (px, py_) = py
        .allow_threads(|| {
            if smoothed {
                ragged_fsa::get_rnnt_logprobs_smoothed(lm, am, symbols, term, boundary, &cfg)
            } else {
                ragged_fsa::get_rnnt_logprobs(lm, am, symbols, term, cfg.rnnt_type, boundary)
            }
        })
        .map_err(py_err)?;
    Ok((px.into_pyarray(py), py_.into_pyarray(py)))
}

/// `rnnt_loss` (full logits `[B][T][S + 1][C]`, `ranges` None) or `rnnt_loss_pruned`
/// (logits `[B][T][s_range][C]` and `ranges` `[B][T][s_range]`).
#[pyfunction]
#[pyo3(signature = (logits, symbols, ranges, termination_symbol, boundary, rnnt_type,
    delay_penalty, reduction, return_grad, requires_grad))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn rnnt_loss_logits<'py>(
    py: Python<'py>,
    logits: PyReadonlyArray4<'py, f32>,
    symbols: PyReadonlyArray2<'py, i64>,
    ranges: Option<PyReadonlyArray3<'py, i64>>,
    termination_symbol: i64,
    boundary: Option<PyReadonlyArray2<'py, i64>>,
    rnnt_type: &str,
    delay_penalty: f32,
    reduction: &str,
    return_grad: bool,
    requires_grad: bool,
) -> PyResult<RnntOut<'py>> {
    let cfg = config(
        rnnt_type,
        delay_penalty,
        reduction,
        return_grad,
        requires_grad,
        0.1,
        0.1,
    )?;
    let term = termination(termination_symbol)?;
    let (logits, symbols) = (logits.as_array(), symbols.as_array());
    let ranges = ranges.as_ref().map(|r| r.as_array());
    let boundary = boundary.as_ref().map(|b| b.as_array());
    let r = py
        .allow_threads(|| match ranges {
            Some(ranges) => {
                ragged_fsa::rnnt_loss_pruned(logits, symbols, ranges, term, boundary, &cfg)
            }
            None => ragged_fsa::rnnt_loss(logits, symbols, term, boundary, &cfg),
        })
        .map_err(py_err)?;
    Ok(out(py, r))
}

/// `get_rnnt_prune_ranges(px_grad, py_grad, boundary, s_range)`: `[B][T][s_range]`.
#[pyfunction]
pub(crate) fn get_rnnt_prune_ranges<'py>(
    py: Python<'py>,
    px_grad: PyReadonlyArray3<'py, f32>,
    py_grad: PyReadonlyArray3<'py, f32>,
    boundary: PyReadonlyArray2<'py, i64>,
    s_range: i64,
) -> PyResult<Bound<'py, PyArray3<i64>>> {
    let s_range = usize::try_from(s_range)
        .map_err(|_| PyValueError::new_err(format!("s_range must be positive, got {s_range}")))?;
    let (px, pyg, b) = (px_grad.as_array(), py_grad.as_array(), boundary.as_array());
    let r = py
        .allow_threads(|| ragged_fsa::get_rnnt_prune_ranges(px, pyg, b, s_range))
        .map_err(py_err)?;
    Ok(r.into_pyarray(py))
}

/// `do_rnnt_pruning(am, lm, ranges)`: `(am_pruned, lm_pruned)`, both `[B][T][s_range][.]`
/// and owned by numpy.
#[pyfunction]
pub(crate) fn do_rnnt_pruning<'py>(
    py: Python<'py>,
    am: PyReadonlyArray3<'py, f32>,
    lm: PyReadonlyArray3<'py, f32>,
    ranges: PyReadonlyArray3<'py, i64>,
) -> PyResult<PrunedOut<'py>> {
    let (a, l, r) = (am.as_array(), lm.as_array(), ranges.as_array());
    let (am_pruned, lm_pruned) = py
        .allow_threads(|| ragged_fsa::do_rnnt_pruning(a, l, r).map(|(x, y)| (x.into_owned(), y)))
        .map_err(py_err)?;
    Ok((am_pruned.into_pyarray(py), lm_pruned.into_pyarray(py)))
}

/// `(scores, px_grad, py_grad)` of the recursion.
type MiOut<'py, T> = (
    Bound<'py, PyArray1<T>>,
    Option<Bound<'py, PyArray3<T>>>,
    Option<Bound<'py, PyArray3<T>>>,
);

fn mutual_information<'py, T: ragged_fsa::Real + numpy::Element>(
    py: Python<'py>,
    px: PyReadonlyArray3<'py, T>,
    pyy: PyReadonlyArray3<'py, T>,
    boundary: Option<PyReadonlyArray2<'py, i64>>,
    return_grad: bool,
) -> PyResult<MiOut<'py, T>> {
    let (x, y) = (px.as_array(), pyy.as_array());
    let boundary = boundary.as_ref().map(|b| b.as_array());
    let r = py
        .allow_threads(|| ragged_fsa::mutual_information_recursion(x, y, boundary, return_grad))
        .map_err(py_err)?;
    Ok((
        r.scores.into_pyarray(py),
        r.px_grad.map(|a| a.into_pyarray(py)),
        r.py_grad.map(|a| a.into_pyarray(py)),
    ))
}

/// `mutual_information_recursion(px, py, boundary, return_grad)` in float32.
#[pyfunction]
pub(crate) fn mutual_information_recursion_f32<'py>(
    py: Python<'py>,
    px: PyReadonlyArray3<'py, f32>,
    pyy: PyReadonlyArray3<'py, f32>,
    boundary: Option<PyReadonlyArray2<'py, i64>>,
    return_grad: bool,
) -> PyResult<MiOut<'py, f32>> {
    mutual_information(py, px, pyy, boundary, return_grad)
}

/// `mutual_information_recursion(px, py, boundary, return_grad)` in float64.
#[pyfunction]
pub(crate) fn mutual_information_recursion_f64<'py>(
    py: Python<'py>,
    px: PyReadonlyArray3<'py, f64>,
    pyy: PyReadonlyArray3<'py, f64>,
    boundary: Option<PyReadonlyArray2<'py, i64>>,
    return_grad: bool,
) -> PyResult<MiOut<'py, f64>> {
    mutual_information(py, px, pyy, boundary, return_grad)
}
