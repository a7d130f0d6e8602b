//! Row partitions: every partition is a `ragged_core::RowPartition` (shared on clone, never
//! copied); the crate builds them through these helpers.

use crate::error::Error;

pub use ragged_core::RowPartition;

/// A partition from `row_splits` (validated: starts at 0, non-decreasing).
pub(crate) fn from_splits(splits: Vec<i32>) -> Result<RowPartition, Error> {
    Ok(RowPartition::from_row_splits(splits)?)
}

/// Converts a running offset to `i32`, failing instead of wrapping.
pub(crate) fn offset(n: usize) -> Result<i32, Error> {
    i32::try_from(n).map_err(|_| Error::InvalidPartition {
        what: format!("offset {n} does not fit in i32"),
    })
}

/// A partition from row lengths given as `usize`.
pub(crate) fn from_lengths<I: IntoIterator<Item = usize>>(
    lengths: I,
) -> Result<RowPartition, Error> {
    let iter = lengths.into_iter();
    let mut splits = Vec::with_capacity(iter.size_hint().0 + 1);
    splits.push(0i32);
    let mut total = 0usize;
    for len in iter {
        total = total
            .checked_add(len)
            .ok_or_else(|| Error::InvalidPartition {
                what: "row lengths overflow".to_string(),
            })?;
        splits.push(offset(total)?);
    }
    from_splits(splits)
}

/// A uniform partition: `nrows` rows of `len` values each.
pub(crate) fn uniform(len: usize, nrows: usize) -> Result<RowPartition, Error> {
    let total = len
        .checked_mul(nrows)
        .ok_or_else(|| Error::InvalidPartition {
            what: format!("{nrows} rows of {len} values overflow"),
        })?;
    offset(total)?;
    Ok(RowPartition::from_uniform_row_length(len, nrows)?)
}

/// A partition from splits, marked uniform when `uniform_len` is given and every row has
/// that length.
pub(crate) fn from_splits_maybe_uniform(
    splits: Vec<i32>,
    uniform_len: Option<usize>,
) -> Result<RowPartition, Error> {
    if let Some(len) = uniform_len {
        let nrows = splits.len().saturating_sub(1);
        if splits.windows(2).all(|w| (w[1] - w[0]) as usize == len) {
            return uniform(len, nrows);
        }
    }
    from_splits(splits)
}

/// Row lengths of a partition as `usize`.
pub(crate) fn lengths(p: &RowPartition) -> impl Iterator<Item = usize> + '_ {
    p.row_splits().windows(2).map(|w| (w[1] - w[0]) as usize)
}

/// True when two partitions describe the same rows (shared storage, or equal splits).
pub(crate) fn same_rows(a: &RowPartition, b: &RowPartition) -> bool {
    a == b
}

/// Row ranges `(start, end)` covering `ids` in order, consecutive ids merged into one range.
pub(crate) fn ranges_of(ids: impl IntoIterator<Item = usize>) -> Vec<(usize, usize)> {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for id in ids {
        match ranges.last_mut() {
            Some(last) if last.1 == id => last.1 += 1,
            _ => ranges.push((id, id + 1)),
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_ranges(ids: &[usize], expected: &[(usize, usize)]) {
        assert_eq!(ranges_of(ids.iter().copied()), expected);
    }

    #[test]
    fn consecutive_ids_merge_into_ranges() {
        check_ranges(&[], &[]);
        check_ranges(&[3], &[(3, 4)]);
        check_ranges(&[0, 1, 2], &[(0, 3)]);
        check_ranges(&[2, 0, 1, 1], &[(2, 3), (0, 2), (1, 2)]);
        check_ranges(&[5, 6, 4, 5], &[(5, 7), (4, 6)]);
    }
}
