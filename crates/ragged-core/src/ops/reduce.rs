//! Reductions over the last axis (`sum_per_sublist` and friends), sequential or rayon.

use std::mem::MaybeUninit;
use std::ops::Add;

use rayon::prelude::*;

use crate::par::{go_parallel, CHUNK};
use crate::ragged::Ragged;
use cpu_features::{at_level, simd_level, SimdLevel};

/// `f(sublist_values, sublist_start)` for every sublist of the last axis, in order.
pub(crate) fn map_sublists<T, U, F>(row_splits: &[i32], values: &[T], f: F) -> Vec<U>
where
    T: Sync,
    U: Send,
    F: Fn(&[T], usize) -> U + Sync + Send,
{
    let nrows = row_splits.len() - 1;
    let run = |row: usize| {
        let (b, e) = (row_splits[row] as usize, row_splits[row + 1] as usize);
        f(&values[b..e], b)
    };
    if go_parallel(nrows + values.len()) {
        (0..nrows)
            .into_par_iter()
            .with_min_len(1024)
            .map(run)
            .collect()
    } else {
        (0..nrows).map(run).collect()
    }
}

/// Sublists up to this length are folded by a loop of fixed trip count.
const SHORT_ROW: usize = 24;

/// Writes the folds (by `op`, from `initial`) of rows `first_row..first_row + out.len()`.
#[inline(always)]
fn fold_rows_portable<T, U: Copy, F: Fn(U, &T) -> U>(
    row_splits: &[i32],
    values: &[T],
    initial: U,
    op: &F,
    first_row: usize,
    out: &mut [MaybeUninit<U>],
) {
    let splits = &row_splits[first_row..first_row + out.len() + 1];
    for (slot, se) in out.iter_mut().zip(splits.windows(2)) {
        let xs = &values[se[0] as usize..se[1] as usize];
        let acc = if xs.len() <= SHORT_ROW {
            // A fixed trip count with a guarded step instead of a loop exit that depends
            // on the length: same operations in the same order.
            let mut acc = initial;
            for k in 0..SHORT_ROW {
                if k < xs.len() {
                    acc = op(acc, &xs[k]);
                }
            }
            acc
        } else {
            xs.iter().fold(initial, op)
        };
        slot.write(acc);
    }
}

/// [`fold_rows_portable`] in the copy of `level`. There is no AVX-512 copy (it measured no
/// faster than AVX2 on a Zen 4, see the guide): the AVX2 copy runs at that level.
#[inline]
fn fold_rows<T, U: Copy, F: Fn(U, &T) -> U>(
    level: SimdLevel,
    row_splits: &[i32],
    values: &[T],
    initial: U,
    op: &F,
    first_row: usize,
    out: &mut [MaybeUninit<U>],
) {
    at_level!(
        level,
        max Avx2,
        [T, U: Copy, F: Fn(U, &T) -> U],
        (
            row_splits: &[i32],
            values: &[T],
            initial: U,
            op: &F,
            first_row: usize,
            out: &mut [MaybeUninit<U>]
        ) -> (),
        fold_rows_portable(row_splits, values, initial, op, first_row, out)
    )
}

/// The fold of every row of `row_splits` over `values`, front to back from `initial`, in
/// the copy of the current [`simd_level`], sequential or rayon.
pub(crate) fn fold_per_row<T, U, F>(row_splits: &[i32], values: &[T], initial: U, op: F) -> Vec<U>
where
    T: Sync,
    U: Copy + Send + Sync,
    F: Fn(U, &T) -> U + Sync,
{
    let nrows = row_splits.len() - 1;
    let level = simd_level();
    let run = |first_row: usize, out: &mut [MaybeUninit<U>]| {
        fold_rows(level, row_splits, values, initial, &op, first_row, out)
    };
    let mut out: Vec<U> = Vec::with_capacity(nrows);
    let slots = &mut out.spare_capacity_mut()[..nrows];
    if go_parallel(nrows + values.len()) {
        slots
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, o)| run(c * CHUNK, o));
    } else {
        run(0, slots);
    }
    // SAFETY: every one of the `nrows` slots was written above: the chunks cover them all,
    // and `fold_rows_portable` writes each slot it is given (zipped with the windows of a
    // checked slice of `row_splits`, the values read by checked slicing, so any splits are
    // sound here).
    unsafe { out.set_len(nrows) };
    out
}

impl<T: Sync> Ragged<T> {
    /// The `row_splits` of the last axis.
    fn last_splits(&self) -> &[i32] {
        self.shape().row_splits(self.num_axes() - 1)
    }

    /// Reduces each last-axis sublist with `op`, starting from `initial` (k2's `SegmentedReduce`).
    pub fn reduce_per_sublist<U, F>(&self, initial: U, op: F) -> Vec<U>
    where
        U: Copy + Send + Sync,
        F: Fn(U, &T) -> U + Sync + Send,
    {
        fold_per_row(self.last_splits(), self.values(), initial, op)
    }

    /// `initial +` the sum of each last-axis sublist (k2's `SumPerSublist`).
    ///
    /// Each sublist is summed in one fixed order that depends only on its length, never on
    /// the number of threads: eight lanes, lane `j` adding elements `j, j + 8, j + 16, ...`
    /// front to back, the lanes combined pairwise (`j` with `j + 4`, then `j` with `j + 2`,
    /// then lane 0 with lane 1), and `initial` added last; an empty sublist gives `initial`.
    /// Sums of floats may differ from a strict left-to-right sum in the last bits; integers
    /// are exact.
    pub fn sum_per_sublist(&self, initial: T) -> Vec<T>
    where
        T: Copy + Send + Add<Output = T>,
    {
        super::sum::sum_per_row(self.last_splits(), self.values(), initial)
    }

    /// The maximum of `initial` and each last-axis sublist (k2's `MaxPerSublist`).
    ///
    /// Compared with `>` as a front-to-back fold would (a NaN element is passed over), in
    /// eight lanes without a branch per element; among maxima that compare equal (`-0.0`
    /// and `0.0`) which one is returned is fixed by the sublist's length, not by position.
    pub fn max_per_sublist(&self, initial: T) -> Vec<T>
    where
        T: Copy + Send + PartialOrd,
    {
        super::sum::extreme_per_row(self.last_splits(), self.values(), initial, |x, acc| x > acc)
    }

    /// The minimum of `initial` and each last-axis sublist (k2's `MinPerSublist`), computed
    /// as [`Ragged::max_per_sublist`] is, with `<`.
    pub fn min_per_sublist(&self, initial: T) -> Vec<T>
    where
        T: Copy + Send + PartialOrd,
    {
        super::sum::extreme_per_row(self.last_splits(), self.values(), initial, |x, acc| x < acc)
    }

    /// For each last-axis sublist, the offset in `values()` of its largest element, or `-1`
    /// when it is empty or every element is below `initial` (k2's `ArgMaxPerSublist`).
    /// Among equal maxima the last one wins.
    pub fn argmax_per_sublist(&self, initial: T) -> Vec<i32>
    where
        T: Copy + PartialOrd,
    {
        map_sublists(self.last_splits(), self.values(), |xs, start| {
            let mut best = -1i32;
            let mut best_value = initial;
            for (k, &x) in xs.iter().enumerate() {
                if x >= best_value {
                    best_value = x;
                    best = (start + k) as i32;
                }
            }
            best
        })
    }

    /// For each last-axis sublist, the offset of its smallest element, or `-1` when it is
    /// empty or every element is above `initial`. Among equal minima the last one wins.
    pub fn argmin_per_sublist(&self, initial: T) -> Vec<i32>
    where
        T: Copy + PartialOrd,
    {
        map_sublists(self.last_splits(), self.values(), |xs, start| {
            let mut best = -1i32;
            let mut best_value = initial;
            for (k, &x) in xs.iter().enumerate() {
                if x <= best_value {
                    best_value = x;
                    best = (start + k) as i32;
                }
            }
            best
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::with_parallel_threshold;
    use crate::Ragged;

    #[test]
    fn every_level_of_the_fold_equals_a_naive_fold() {
        let mut splits = vec![0i32];
        for len in (0..=60).chain((0..30).rev()) {
            splits.push(splits.last().unwrap() + len);
        }
        let n = *splits.last().unwrap() as u64;
        let xs: Vec<u64> = (0..n)
            .map(|k| !(1u64 << (k % 64)) ^ (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0xF0))
            .collect();
        let want: Vec<u64> = splits
            .windows(2)
            .map(|w| {
                xs[w[0] as usize..w[1] as usize]
                    .iter()
                    .fold(!0u64, |a, &b| a & b)
            })
            .collect();
        for level in [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512] {
            let mut out = vec![MaybeUninit::uninit(); want.len()];
            fold_rows(level, &splits, &xs, !0u64, &|a, &b| a & b, 0, &mut out);
            let got: Vec<u64> = out
                .into_iter()
                .map(|x| {
                    // SAFETY: `fold_rows` writes every slot it is given.
                    unsafe { x.assume_init() }
                })
                .collect();
            assert_eq!(got, want, "{level:?}");
        }
    }

    #[test]
    fn short_and_long_rows_fold_in_order() {
        // Row lengths 0..=30 on both sides of the fixed-trip-count limit, with float values
        // whose sums depend on the order of the additions: the maxima must be those of a
        // front-to-back fold, the sums equal to its sums up to rounding.
        let rows: Vec<Vec<f32>> = (0..3_000)
            .map(|r| {
                (0..(r * 7) % 31)
                    .map(|k| ((r * 31 + k * 17) % 1000) as f32 * 1.37e-3 + (k % 3) as f32 * 1e4)
                    .collect()
            })
            .collect();
        let r = Ragged::from_nested(rows.clone()).unwrap();
        let sums: Vec<f32> = rows
            .iter()
            .map(|x| x.iter().fold(0.5, |a, &b| a + b))
            .collect();
        let maxes: Vec<f32> = rows
            .iter()
            .map(|x| x.iter().fold(f32::MIN, |a, &b| if b > a { b } else { a }))
            .collect();
        for t in [0, usize::MAX] {
            with_parallel_threshold(t, || {
                let got = r.sum_per_sublist(0.5);
                for (a, b) in got.iter().zip(&sums) {
                    assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{a} vs {b}");
                }
                assert_eq!(r.max_per_sublist(f32::MIN), maxes);
            });
        }
    }

    #[test]
    fn nan_elements_are_passed_over_as_by_a_fold() {
        let rows: Vec<Vec<f32>> = (0..200)
            .map(|r| {
                (0..r % 37)
                    .map(|k| {
                        if (r + k) % 5 == 0 {
                            f32::NAN
                        } else {
                            (k * r % 11) as f32
                        }
                    })
                    .collect()
            })
            .collect();
        let r = Ragged::from_nested(rows.clone()).unwrap();
        let max = |x: &Vec<f32>| x.iter().fold(-1.0f32, |a, &b| if b > a { b } else { a });
        let min = |x: &Vec<f32>| x.iter().fold(100.0f32, |a, &b| if b < a { b } else { a });
        assert_eq!(
            r.max_per_sublist(-1.0),
            rows.iter().map(max).collect::<Vec<_>>()
        );
        assert_eq!(
            r.min_per_sublist(100.0),
            rows.iter().map(min).collect::<Vec<_>>()
        );
        assert!(r.max_per_sublist(f32::NAN).iter().all(|x| x.is_nan()));
    }

    #[test]
    fn k2_style_reductions() {
        let r: Ragged<i32> = "[ [ [ 1 5 ] [ ] ] [ [ -2 7 7 ] ] ]".parse().unwrap();
        for t in [0, usize::MAX] {
            with_parallel_threshold(t, || {
                assert_eq!(r.sum_per_sublist(0), vec![6, 0, 12]);
                assert_eq!(r.sum_per_sublist(10), vec![16, 10, 22]);
                assert_eq!(r.max_per_sublist(i32::MIN), vec![5, i32::MIN, 7]);
                assert_eq!(r.max_per_sublist(6), vec![6, 6, 7]);
                assert_eq!(r.min_per_sublist(0), vec![0, 0, -2]);
                assert_eq!(r.argmax_per_sublist(i32::MIN), vec![1, -1, 4]);
                assert_eq!(r.argmax_per_sublist(6), vec![-1, -1, 4]);
                assert_eq!(r.argmin_per_sublist(i32::MAX), vec![0, -1, 2]);
            });
        }
    }
}
