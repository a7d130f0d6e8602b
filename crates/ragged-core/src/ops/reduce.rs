//! Reductions over the last axis (`sum_per_sublist` and friends), sequential or rayon.

use std::ops::Add;

use rayon::prelude::*;

use crate::par::go_parallel;
use crate::ragged::Ragged;

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
        map_sublists(self.last_splits(), self.values(), |xs, _| {
            xs.iter().fold(initial, &op)
        })
    }

    /// `initial +` the sum of each last-axis sublist (k2's `SumPerSublist`).
    pub fn sum_per_sublist(&self, initial: T) -> Vec<T>
    where
        T: Copy + Send + Add<Output = T>,
    {
        self.reduce_per_sublist(initial, |acc, &x| acc + x)
    }

    /// The maximum of `initial` and each last-axis sublist (k2's `MaxPerSublist`).
    pub fn max_per_sublist(&self, initial: T) -> Vec<T>
    where
        T: Copy + Send + PartialOrd,
    {
        self.reduce_per_sublist(initial, |acc, &x| if x > acc { x } else { acc })
    }

    /// The minimum of `initial` and each last-axis sublist (k2's `MinPerSublist`).
    pub fn min_per_sublist(&self, initial: T) -> Vec<T>
    where
        T: Copy + Send + PartialOrd,
    {
        self.reduce_per_sublist(initial, |acc, &x| if x < acc { x } else { acc })
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
    use crate::par::with_parallel_threshold;
    use crate::Ragged;

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
