//! Checks of the RNN-T inputs: shapes, `boundary` rows, symbols, values.

use ndarray::{ArrayView, ArrayView2, ArrayView3, Dimension};

use crate::error::Error;
use crate::kernels::scores::Real;

/// One row of `boundary`: `[s_begin, t_begin, s_end, t_end]`, checked against `S` and `T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Boundary {
    pub(crate) s_begin: usize,
    pub(crate) t_begin: usize,
    pub(crate) s_end: usize,
    pub(crate) t_end: usize,
}

/// `what`'s count must equal `expected`.
pub(crate) fn dim(what: &'static str, expected: usize, got: usize) -> Result<(), Error> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::CountMismatch {
            what,
            expected,
            got,
        })
    }
}

fn as_i32(v: i64) -> i32 {
    // for the message only: the value is out of range either way
    i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX })
}

/// The rows of `boundary` (`[B][4]`), defaulting to `[0, 0, S, T]`, with
/// `0 <= s_begin <= s_end <= S` and `0 <= t_begin <= t_end <= T`. An entry out of range is
/// `Error::MapOutOfRange` at its row-major position (`4 b + column`).
pub(crate) fn boundaries(
    boundary: Option<ArrayView2<'_, i64>>,
    b_count: usize,
    s_count: usize,
    t_count: usize,
) -> Result<Vec<Boundary>, Error> {
    let Some(boundary) = boundary else {
        return Ok(vec![
            Boundary {
                s_begin: 0,
                t_begin: 0,
                s_end: s_count,
                t_end: t_count,
            };
            b_count
        ]);
    };
    dim("rows of boundary (B)", b_count, boundary.nrows())?;
    dim("columns of boundary", 4, boundary.ncols())?;
    let mut out = Vec::with_capacity(b_count);
    for (b, row) in boundary.outer_iter().enumerate() {
        let entry = |col: usize, low: i64, high: i64| -> Result<usize, Error> {
            let v = row[col];
            if v < low || v > high {
                return Err(Error::MapOutOfRange {
                    map: "boundary (rows [s_begin, t_begin, s_end, t_end], row-major)",
                    position: 4 * b + col,
                    value: as_i32(v),
                    size: usize::try_from(high + 1).unwrap_or(usize::MAX),
                });
            }
            Ok(v as usize)
        };
        let s_end = entry(2, 0, s_count as i64)?;
        let t_end = entry(3, 0, t_count as i64)?;
        let s_begin = entry(0, 0, s_end as i64)?;
        let t_begin = entry(1, 0, t_end as i64)?;
        out.push(Boundary {
            s_begin,
            t_begin,
            s_end,
            t_end,
        });
    }
    Ok(out)
}

/// The shapes of `px` (`[B][S][T + 1]` or `[B][S][T]`) and `py` (`[B][S + 1][T]`) and the
/// boundary rows.
pub(crate) fn recursion_inputs<T>(
    px: ArrayView3<'_, T>,
    py: ArrayView3<'_, T>,
    boundary: Option<ArrayView2<'_, i64>>,
) -> Result<Vec<Boundary>, Error> {
    let (b_count, s_count, t1_count) = px.dim();
    let t_count = py.dim().2;
    dim("sequences in py (B of px)", b_count, py.dim().0)?;
    dim("rows of py (S + 1, S rows of px)", s_count + 1, py.dim().1)?;
    if t1_count != t_count && t1_count != t_count + 1 {
        return Err(Error::CountMismatch {
            what: "columns of px (T + 1, or T for modified; T columns of py)",
            expected: t_count + 1,
            got: t1_count,
        });
    }
    boundaries(boundary, b_count, s_count, t_count)
}

/// NaN or `+inf` anywhere in `values` is an error (`-inf`, a forbidden transition, is fine).
pub(crate) fn no_nan_or_pos_inf<T: Real, D: Dimension>(
    what: &'static str,
    values: ArrayView<'_, T, D>,
) -> Result<(), Error> {
    let pos_inf = T::ZERO - T::NEG_INFINITY;
    for &v in values.iter() {
        #[allow(clippy::eq_op)] // NaN is the only value unequal to itself
        if v != v || v == pos_inf {
            return Err(Error::InvalidArgument {
                what,
                value: v.to_f64(),
                allowed: "finite values or -inf",
            });
        }
    }
    Ok(())
}

/// NaN or an infinity anywhere in `values` is an error. Contiguous inputs are scanned in
/// blocks without an early exit (so the scan vectorises), the offender found afterwards.
pub(crate) fn finite<D: Dimension>(
    what: &'static str,
    values: ArrayView<'_, f32, D>,
) -> Result<(), Error> {
    let all_finite = match values.as_slice_memory_order() {
        Some(slice) => slice
            .chunks(256)
            .all(|block| block.iter().fold(true, |ok, v| ok & v.is_finite())),
        None => values.iter().all(|v| v.is_finite()),
    };
    if all_finite {
        return Ok(());
    }
    let bad = values
        .iter()
        .copied()
        .find(|v| !v.is_finite())
        .unwrap_or(f32::NAN);
    Err(Error::InvalidArgument {
        what,
        value: f64::from(bad),
        allowed: "finite values",
    })
}

/// `symbols` (`[B][S]`) hold values in `0..C`, `termination_symbol < C`, and `S <= T`
/// unless `allow_s_above_t`.
pub(crate) fn symbols(
    symbols: ArrayView2<'_, i64>,
    termination_symbol: usize,
    b_count: usize,
    s_count: usize,
    c_count: usize,
) -> Result<(), Error> {
    dim("rows of symbols (B)", b_count, symbols.nrows())?;
    dim("columns of symbols (S)", s_count, symbols.ncols())?;
    if termination_symbol >= c_count {
        return Err(Error::InvalidArgument {
            what: "termination_symbol",
            value: termination_symbol as f64,
            allowed: "0..C",
        });
    }
    for (position, &v) in symbols.iter().enumerate() {
        if v < 0 || v >= c_count as i64 {
            return Err(Error::MapOutOfRange {
                map: "symbols (row-major [B][S])",
                position,
                value: as_i32(v),
                size: c_count,
            });
        }
    }
    Ok(())
}

/// k2's `S >= 1` and `T >= S`.
pub(crate) fn s_and_t(s_count: usize, t_count: usize) -> Result<(), Error> {
    if s_count == 0 {
        return Err(Error::InvalidArgument {
            what: "S (symbols per sequence)",
            value: 0.0,
            allowed: "at least 1",
        });
    }
    if s_count > t_count {
        return Err(Error::InvalidArgument {
            what: "S (symbols per sequence)",
            value: s_count as f64,
            allowed: "at most T, the number of frames",
        });
    }
    Ok(())
}
