//! Eight-lane kernels of the last-axis reductions: the blocked sum behind
//! [`crate::Ragged::sum_per_sublist`] and the maxima and minima behind
//! [`crate::Ragged::max_per_sublist`] and [`crate::Ragged::min_per_sublist`].
//!
//! Every sublist is summed in one fixed order that depends only on its length: eight lanes,
//! lane `j` adding elements `j, j + 8, j + 16, ...` front to back, then the lanes combined
//! pairwise (`j` with `j + 4`, then `j` with `j + 2`, then `0` with `1`), then `initial`
//! plus that total. Sublists of up to [`WINDOW`] elements run a straight-line kernel over a
//! fixed window of values with selects instead of branches on the length; longer ones (and
//! the few whose window would run past the end of the values) take a loop computing the
//! same additions in the same order, so the result never depends on the path or on the
//! number of threads.

use std::mem::MaybeUninit;
use std::ops::Add;

use rayon::prelude::*;

use crate::par::{go_parallel, CHUNK};
use cpu_features::{at_level, simd_level, SimdLevel};

/// Lanes of the blocked sum.
const LANES: usize = 8;

/// Sublists up to this length take the straight-line kernel.
const WINDOW: usize = 3 * LANES;

/// Whether [`window_sum`] picks with the branch-free select: in optimised builds. Builds
/// with debug assertions (and so, by default, overflow checks) branch instead, so that an
/// addition not taken never runs (it may overflow for integers); the tests reach the
/// select directly through `window_sum::<true, _>`.
const BRANCH_FREE: bool = !cfg!(debug_assertions);

/// `acc + x` when `take`, else `acc`. With `SELECT` it computes both and picks one by
/// indexing, without a branch (a branch on the length mispredicts on mixed lengths, and an
/// `if` here is compiled into a chain of such branches); without, it branches.
#[inline(always)]
fn add_if<const SELECT: bool, T: Copy + Add<Output = T>>(take: bool, acc: T, x: T) -> T {
    if SELECT {
        [acc, acc + x][take as usize]
    } else if take {
        acc + x
    } else {
        acc
    }
}

/// The blocked sum of `xs`, by a loop (any length).
#[inline(always)]
pub(crate) fn blocked_sum<T: Copy + Add<Output = T>>(initial: T, xs: &[T]) -> T {
    let Some(&first) = xs.first() else {
        return initial;
    };
    let mut lane = [first; LANES];
    for (j, &x) in xs.iter().take(LANES).enumerate() {
        lane[j] = x;
    }
    for (k, &x) in xs.iter().enumerate().skip(LANES) {
        lane[k % LANES] = lane[k % LANES] + x;
    }
    initial + combine_lanes::<false, T>(lane, xs.len())
}

/// The blocked sum of the first `len <= WINDOW` values of `w`; the others are never added in
/// (with `SELECT`, they are added and the sum thrown away).
#[inline(always)]
fn window_sum<const SELECT: bool, T: Copy + Add<Output = T>>(
    initial: T,
    w: &[T; WINDOW],
    len: usize,
) -> T {
    let mut lane: [T; LANES] = w[..LANES].try_into().unwrap();
    for (j, (l, &x)) in lane.iter_mut().zip(&w[LANES..]).enumerate() {
        *l = add_if::<SELECT, T>(LANES + j < len, *l, x);
    }
    for (j, (l, &x)) in lane.iter_mut().zip(&w[2 * LANES..]).enumerate() {
        *l = add_if::<SELECT, T>(2 * LANES + j < len, *l, x);
    }
    add_if::<SELECT, T>(len > 0, initial, combine_lanes::<SELECT, T>(lane, len))
}

/// Combines the eight lanes of a sublist of `len` elements (lane `j` holds something only
/// when `j < len`; for `len == 0` the result is meaningless).
#[inline(always)]
fn combine_lanes<const SELECT: bool, T: Copy + Add<Output = T>>(lane: [T; LANES], len: usize) -> T {
    let [l0, l1, l2, l3, l4, l5, l6, l7] = lane;
    let (m0, m1) = (
        add_if::<SELECT, T>(4 < len, l0, l4),
        add_if::<SELECT, T>(5 < len, l1, l5),
    );
    let (m2, m3) = (
        add_if::<SELECT, T>(6 < len, l2, l6),
        add_if::<SELECT, T>(7 < len, l3, l7),
    );
    let (n0, n1) = (
        add_if::<SELECT, T>(2 < len, m0, m2),
        add_if::<SELECT, T>(3 < len, m1, m3),
    );
    add_if::<SELECT, T>(1 < len, n0, n1)
}

/// Writes the sums of rows `first_row..first_row + out.len()`.
#[inline(always)]
fn sum_rows_portable<T: Copy + Add<Output = T>>(
    row_splits: &[i32],
    values: &[T],
    initial: T,
    first_row: usize,
    out: &mut [MaybeUninit<T>],
) {
    let splits = &row_splits[first_row..first_row + out.len() + 1];
    for (slot, se) in out.iter_mut().zip(splits.windows(2)) {
        let (b, e) = (se[0] as usize, se[1] as usize);
        let len = e - b;
        let sum = match values.get(b..b + WINDOW) {
            Some(w) if len <= WINDOW => {
                window_sum::<BRANCH_FREE, T>(initial, w.try_into().unwrap(), len)
            }
            _ => blocked_sum(initial, &values[b..e]),
        };
        slot.write(sum);
    }
}

/// [`sum_rows_portable`], compiled for the instruction set `level` (for `f32` the lanes
/// become vector adds and blends at AVX2 and above). Every level adds in the same order.
/// There is no AVX-512 copy (it measured no faster than AVX2 on a Zen 4, see the guide):
/// the AVX2 copy runs at that level.
#[inline]
fn sum_rows<T: Copy + Add<Output = T>>(
    level: SimdLevel,
    row_splits: &[i32],
    values: &[T],
    initial: T,
    first_row: usize,
    out: &mut [MaybeUninit<T>],
) {
    at_level!(
        level,
        max Avx2,
        [T: Copy + Add<Output = T>],
        (
            row_splits: &[i32],
            values: &[T],
            initial: T,
            first_row: usize,
            out: &mut [MaybeUninit<T>]
        ) -> (),
        sum_rows_portable(row_splits, values, initial, first_row, out)
    )
}

/// The blocked sums of every row of `row_splits` over `values`, sequential or rayon.
pub(crate) fn sum_per_row<T>(row_splits: &[i32], values: &[T], initial: T) -> Vec<T>
where
    T: Copy + Send + Sync + Add<Output = T>,
{
    let nrows = row_splits.len() - 1;
    let level = simd_level();
    let mut out: Vec<T> = Vec::with_capacity(nrows);
    let slots = &mut out.spare_capacity_mut()[..nrows];
    if go_parallel(nrows + values.len()) {
        slots
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, o)| sum_rows(level, row_splits, values, initial, c * CHUNK, o));
    } else {
        sum_rows(level, row_splits, values, initial, 0, slots);
    }
    // SAFETY: the chunks cover all `nrows` slots, and the row kernel writes every slot it
    // is given: it zips them with the windows of `row_splits[first_row..=first_row +
    // out.len()]`, a checked slice (it panics, leaving the length 0, when the splits are
    // short), and reads the values by checked slicing, so any splits are sound here.
    unsafe { out.set_len(nrows) };
    out
}

/// `x` when `take` and `better(x, acc)`, else `acc`, picked by indexing (no branch).
#[inline(always)]
fn step_if<T: Copy, F: Fn(T, T) -> bool>(take: bool, acc: T, x: T, better: &F) -> T {
    [acc, x][(take & better(x, acc)) as usize]
}

/// Folds the eight lanes of an extremum (each starts at `initial`) pairwise.
#[inline(always)]
fn combine_extreme<T: Copy, F: Fn(T, T) -> bool>(lane: [T; LANES], better: &F) -> T {
    let [l0, l1, l2, l3, l4, l5, l6, l7] = lane;
    let (m0, m1) = (step_if(true, l0, l4, better), step_if(true, l1, l5, better));
    let (m2, m3) = (step_if(true, l2, l6, better), step_if(true, l3, l7, better));
    let (n0, n1) = (step_if(true, m0, m2, better), step_if(true, m1, m3, better));
    step_if(true, n0, n1, better)
}

/// Writes the extremum (by `better`) of `initial` and each of rows
/// `first_row..first_row + out.len()`: eight lanes from `initial`, lane `j` taking elements
/// `j, j + 8, ...`, straight-line over a window for rows up to [`WINDOW`] long.
#[inline(always)]
fn extreme_rows_portable<T: Copy, F: Fn(T, T) -> bool>(
    row_splits: &[i32],
    values: &[T],
    initial: T,
    better: &F,
    first_row: usize,
    out: &mut [MaybeUninit<T>],
) {
    let splits = &row_splits[first_row..first_row + out.len() + 1];
    for (slot, se) in out.iter_mut().zip(splits.windows(2)) {
        let (b, e) = (se[0] as usize, se[1] as usize);
        let len = e - b;
        let mut lane = [initial; LANES];
        match values.get(b..b + WINDOW) {
            Some(w) if len <= WINDOW => {
                for (k, &x) in w.iter().enumerate() {
                    lane[k % LANES] = step_if(k < len, lane[k % LANES], x, better);
                }
            }
            _ => {
                for (k, &x) in values[b..e].iter().enumerate() {
                    lane[k % LANES] = step_if(true, lane[k % LANES], x, better);
                }
            }
        }
        slot.write(combine_extreme(lane, better));
    }
}

/// [`extreme_rows_portable`], compiled for the instruction set `level`. There is no
/// AVX-512 copy (on a Zen 4 it took 1.10-1.13x the AVX2 time for `f32` and 0.86-0.93x for
/// `i32`, short of the 10% a copy must gain; see the guide): the AVX2 copy runs at that
/// level.
#[inline]
fn extreme_rows<T: Copy, F: Fn(T, T) -> bool>(
    level: SimdLevel,
    row_splits: &[i32],
    values: &[T],
    initial: T,
    better: &F,
    first_row: usize,
    out: &mut [MaybeUninit<T>],
) {
    at_level!(
        level,
        max Avx2,
        [T: Copy, F: Fn(T, T) -> bool],
        (
            row_splits: &[i32],
            values: &[T],
            initial: T,
            better: &F,
            first_row: usize,
            out: &mut [MaybeUninit<T>]
        ) -> (),
        extreme_rows_portable(row_splits, values, initial, better, first_row, out)
    )
}

/// The maximum (`better = >`) or minimum (`better = <`) of `initial` and every row of
/// `row_splits` over `values`, sequential or rayon. Equal to a front-to-back fold except
/// which of several equal extrema is returned (`-0.0` or `0.0`).
pub(crate) fn extreme_per_row<T, F>(
    row_splits: &[i32],
    values: &[T],
    initial: T,
    better: F,
) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> bool + Sync,
{
    let nrows = row_splits.len() - 1;
    let level = simd_level();
    let mut out: Vec<T> = Vec::with_capacity(nrows);
    let slots = &mut out.spare_capacity_mut()[..nrows];
    if go_parallel(nrows + values.len()) {
        slots.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
            extreme_rows(level, row_splits, values, initial, &better, c * CHUNK, o)
        });
    } else {
        extreme_rows(level, row_splits, values, initial, &better, 0, slots);
    }
    // SAFETY: the chunks cover all `nrows` slots, and the row kernel writes every slot it
    // is given: it zips them with the windows of `row_splits[first_row..=first_row +
    // out.len()]`, a checked slice (it panics, leaving the length 0, when the splits are
    // short), and reads the values by checked slicing, so any splits are sound here.
    unsafe { out.set_len(nrows) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_equals_the_portable_kernel() {
        // Rows of every length 0..=60 and rows whose window runs past the end.
        let mut splits = vec![0i32];
        for len in (0..=60).chain((0..30).rev()) {
            splits.push(splits.last().unwrap() + len);
        }
        let n = *splits.last().unwrap() as usize;
        let xs: Vec<f32> = (0..n)
            .map(|k| ((k * 37) % 101) as f32 * 1.37e-3 - (k % 3) as f32 * 1e4)
            .collect();
        let nrows = splits.len() - 1;
        let run = |level: SimdLevel| {
            let mut sums = vec![MaybeUninit::uninit(); nrows];
            sum_rows(level, &splits, &xs, 0.5f32, 0, &mut sums);
            let mut maxes = vec![MaybeUninit::uninit(); nrows];
            extreme_rows(level, &splits, &xs, f32::MIN, &|x, a| x > a, 0, &mut maxes);
            let read = |v: Vec<MaybeUninit<f32>>| -> Vec<u32> {
                v.into_iter()
                    .map(|x| {
                        // SAFETY: both kernels write every slot they are given (all `nrows`).
                        unsafe { x.assume_init() }.to_bits()
                    })
                    .collect()
            };
            (read(sums), read(maxes))
        };
        let want = run(SimdLevel::Scalar);
        for level in [SimdLevel::Avx2, SimdLevel::Avx512] {
            // a level above the processor's is lowered inside `at_level!`
            assert_eq!(run(level), want, "{level:?}");
        }
    }

    #[test]
    fn window_kernel_matches_the_loop() {
        // Every length up to the window, at every start, with values whose sums depend on
        // the order of the additions and garbage after the row that must never be added in.
        let values: Vec<f32> = (0..200)
            .map(|k| ((k * 37) % 101) as f32 * 1.37e-3 + (k % 3) as f32 * 1e4)
            .collect();
        for b in 0..40 {
            for len in 0..=WINDOW {
                let w: &[f32; WINDOW] = values[b..b + WINDOW].try_into().unwrap();
                let fast = window_sum::<BRANCH_FREE, f32>(0.5f32, w, len);
                let slow = blocked_sum(0.5f32, &values[b..b + len]);
                assert_eq!(fast.to_bits(), slow.to_bits(), "start {b} length {len}");
            }
        }
        // The order written out for ten elements: lanes 0 and 1 hold two each.
        let xs: Vec<f32> = (1..=10)
            .map(|k| (k as f32).sqrt() * 1e3 + 1.0 / k as f32)
            .collect();
        let lane = |j: usize| if j < 2 { xs[j] + xs[j + 8] } else { xs[j] };
        let l4: Vec<f32> = (0..4).map(|j| lane(j) + lane(j + 4)).collect();
        let expected = 7.0 + ((l4[0] + l4[2]) + (l4[1] + l4[3]));
        assert_eq!(blocked_sum(7.0f32, &xs), expected);
    }

    /// A plain left-to-right sum: the naive model.
    fn naive_sum<T: Copy + Add<Output = T>>(initial: T, xs: &[T]) -> T {
        xs.iter().fold(initial, |acc, &x| acc + x)
    }

    #[test]
    fn branch_free_select_matches_a_naive_sum() {
        // The select that optimised builds run, called directly so that debug builds (the
        // test suite) execute it too. Integers are exact, so the blocked order cannot
        // matter; the values after each row (which the select adds and throws away) are
        // large, so a leaked one would show.
        let values: Vec<i64> = (0..200)
            .map(|k| {
                if k % 7 == 0 {
                    1_000_000_007 * k
                } else {
                    k % 13 - 6
                }
            })
            .collect();
        for b in 0..60 {
            for len in 0..=WINDOW {
                let w: &[i64; WINDOW] = values[b..b + WINDOW].try_into().unwrap();
                let want = naive_sum(3, &values[b..b + len]);
                assert_eq!(
                    window_sum::<true, i64>(3, w, len),
                    want,
                    "start {b} length {len}"
                );
                assert_eq!(
                    window_sum::<false, i64>(3, w, len),
                    want,
                    "start {b} length {len}"
                );
            }
        }
        // Floats whose sums are exact (small integers) against the naive sum, and the
        // select against the branching path bit for bit on inexact ones.
        let exact: Vec<f32> = (0..100).map(|k| ((k * 7) % 11) as f32 - 5.0).collect();
        let inexact: Vec<f64> = (0..100)
            .map(|k| ((k * 37) % 101) as f64 * 1.37e-3 + (k % 3) as f64 * 1e9)
            .collect();
        for b in 0..50 {
            for len in 0..=WINDOW {
                let w: &[f32; WINDOW] = exact[b..b + WINDOW].try_into().unwrap();
                assert_eq!(
                    window_sum::<true, f32>(-0.5, w, len),
                    naive_sum(-0.5, &exact[b..b + len])
                );
                let w: &[f64; WINDOW] = inexact[b..b + WINDOW].try_into().unwrap();
                assert_eq!(
                    window_sum::<true, f64>(0.25, w, len).to_bits(),
                    window_sum::<false, f64>(0.25, w, len).to_bits()
                );
                assert_eq!(
                    window_sum::<true, f64>(0.25, w, len).to_bits(),
                    blocked_sum(0.25, &inexact[b..b + len]).to_bits()
                );
            }
        }
        // an empty row gives `initial` itself, including -0.0
        let zeros = [1.0f32; WINDOW];
        assert_eq!(
            window_sum::<true, f32>(-0.0, &zeros, 0).to_bits(),
            (-0.0f32).to_bits()
        );
    }
}
