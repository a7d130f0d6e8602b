//! Parallel kernels on offsets (row_splits <-> row_ids, exclusive sums) and the size threshold
//! that decides between the sequential and the rayon path.

use cpu_features::{at_level, simd_level, SimdLevel};
use rayon::prelude::*;

use crate::error::Error;

/// Items per parallel task in the chunked kernels.
pub(crate) const CHUNK: usize = 1 << 14;

/// The threshold and the test of the sequential/parallel split are cpu-features' (one
/// override for every crate).
pub(crate) use cpu_features::{go_parallel, parallel_threshold};

/// The first `k` with `values[k + 1] < values[k]`, if any. Blocks of [`CHUNK`] are checked
/// without an early exit, so the compare vectorises, in parallel above the threshold;
/// the first bad block is then searched again for the position. (`par_windows(2)` with
/// `position_first` took 0.9 ms to check 100,000 row splits, a task per few windows.)
pub(crate) fn first_decrease(values: &[i32]) -> Option<usize> {
    let n = values.len().saturating_sub(1);
    let block_has_decrease = |block: usize| {
        let lo = block * CHUNK;
        let hi = (lo + CHUNK).min(n);
        values[lo..hi]
            .iter()
            .zip(&values[lo + 1..=hi])
            .fold(false, |bad, (a, b)| bad | (b < a))
    };
    let n_blocks = n.div_ceil(CHUNK);
    let block = if go_parallel(n) {
        (0..n_blocks)
            .into_par_iter()
            .find_first(|&b| block_has_decrease(b))
    } else {
        (0..n_blocks).find(|&b| block_has_decrease(b))
    }?;
    let lo = block * CHUNK;
    let within = values[lo..].windows(2).position(|w| w[1] < w[0]);
    Some(lo + within.expect("the block holds a decrease"))
}

/// Fills `out`, which holds the row ids of elements `base..base + out.len()`, for rows
/// starting at `first_row` (the row holding element `base`, or an earlier row ending at `base`).
/// Short rows are written twenty-four at a time (then eight): a store that runs past a row's end is
/// overwritten by the rows after it, and the buffer's tail is written exactly.
///
/// Returns a row from which the elements after `out` can be filled in the same way.
#[inline(always)]
fn fill_row_ids_from(row_splits: &[i32], first_row: usize, base: usize, out: &mut [i32]) -> usize {
    let len = out.len();
    let mut row = first_row;
    if len == 0 {
        return first_row;
    }
    loop {
        let b = (row_splits[row] as usize).max(base) - base;
        if b >= len {
            break;
        }
        let e = (row_splits[row + 1] as usize - base).min(len);
        let id8 = [row as i32; 8];
        if e + 8 <= len && b + 24 <= len {
            // Rows of up to 24 elements (the common case) take no data-dependent branch: a
            // loop exit that depends on the row length mispredicts on mixed lengths, and
            // costs more than the store it would save.
            out[b..b + 8].copy_from_slice(&id8);
            out[b + 8..b + 16].copy_from_slice(&id8);
            out[b + 16..b + 24].copy_from_slice(&id8);
            let mut k = b + 24;
            while k < e {
                out[k..k + 8].copy_from_slice(&id8);
                k += 8;
            }
        } else {
            let id = row as i32;
            out[b..e].fill(id);
        }
        row += 1;
        if row + 1 >= row_splits.len() {
            break;
        }
    }
    // `row` starts at or after the end of `out` (or is the last row): the row before it
    // holds the next element or ends exactly at it.
    row.saturating_sub(1).max(first_row)
}

/// [`fill_row_ids_from`], compiled for `level`: from AVX2 up, each
/// eight-id store is one 32-byte store instead of two 16-byte ones, which halves the stores
/// per short row. There is no AVX-512 copy (it measured no faster than AVX2 on a Zen 4, see
/// the guide): the AVX2 copy runs at that level.
#[inline]
fn fill_row_ids_block(
    level: SimdLevel,
    row_splits: &[i32],
    first_row: usize,
    base: usize,
    out: &mut [i32],
) {
    at_level!(
        level,
        max Avx2,
        [],
        (row_splits: &[i32], first_row: usize, base: usize, out: &mut [i32]) -> usize,
        fill_row_ids_from(row_splits, first_row, base, out)
    );
}

/// Fills `row_ids` (of length `row_splits.last()`) from valid `row_splits`.
pub(crate) fn row_splits_to_row_ids(row_splits: &[i32], row_ids: &mut [i32]) {
    let nrows = row_splits.len() - 1;
    debug_assert_eq!(row_ids.len(), row_splits[nrows] as usize);
    if row_ids.is_empty() {
        return;
    }
    let level = simd_level();
    if !go_parallel(row_ids.len() + nrows) {
        fill_row_ids_block(level, row_splits, 0, 0, row_ids);
        return;
    }
    row_ids
        .par_chunks_mut(CHUNK * 4)
        .enumerate()
        .for_each(|(chunk_idx, out)| {
            let begin = chunk_idx * CHUNK * 4;
            // The last row whose start is <= begin: the row holding element `begin`.
            let row = row_splits.partition_point(|&s| s as usize <= begin) - 1;
            fill_row_ids_block(level, row_splits, row, begin, out);
        });
}

/// Fills `row_splits` (of length `nrows + 1`) from valid, non-decreasing `row_ids`.
pub(crate) fn row_ids_to_row_splits(row_ids: &[i32], row_splits: &mut [i32]) {
    let nrows = row_splits.len() - 1;
    let n = row_ids.len() as i32;
    if !go_parallel(row_ids.len() + nrows) {
        let mut pos = 0usize;
        for (row, out) in row_splits.iter_mut().enumerate() {
            while pos < row_ids.len() && (row_ids[pos] as usize) < row {
                pos += 1;
            }
            *out = pos as i32;
        }
        row_splits[nrows] = n;
        return;
    }
    row_splits
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(chunk_idx, out)| {
            let first_row = chunk_idx * CHUNK;
            let mut pos = row_ids.partition_point(|&r| (r as usize) < first_row);
            for (k, slot) in out.iter_mut().enumerate() {
                let row = first_row + k;
                while pos < row_ids.len() && (row_ids[pos] as usize) < row {
                    pos += 1;
                }
                *slot = pos as i32;
            }
        });
}

/// How many times the parallel threshold the exclusive sum of row lengths needs before it
/// takes its rayon path.
const SCAN_FACTOR: usize = 32;

/// Exclusive prefix sum of non-negative `lengths` into a `row_splits` vector of
/// `lengths.len() + 1` entries; an error when a length is negative or the total overflows.
///
/// The parallel path makes two passes (chunk totals with the sign check, then the scan), so
/// that it meets the worker threads only twice.
pub(crate) fn exclusive_sum_lengths(lengths: &[i32]) -> Result<Vec<i32>, Error> {
    let negative = |row: usize| Error::NegativeRowLength {
        row,
        length: lengths[row],
    };
    let overflow = |total: i64| Error::Overflow {
        what: "the total of the row lengths",
        value: total as u64,
    };
    // The output is written once, into reserved capacity; its length is set once every
    // entry is written.
    let mut splits: Vec<i32> = Vec::with_capacity(lengths.len() + 1);
    splits.push(0);
    // The scan is bound by memory traffic and its parallel path makes two passes, so it pays
    // off only on longer inputs than the other kernels (on two cores, 1 M lengths take about
    // 0.3 ms in one sequential pass and no less in two parallel ones).
    if !go_parallel(lengths.len() / SCAN_FACTOR) {
        // One pass: the running total is kept in i64 (it cannot overflow there) and checked
        // against the i32 limit once at the end, or at the first negative length (so that an
        // overflow before it is reported as such, as a row-by-row check would).
        let mut acc = 0i64;
        let slots = &mut splits.spare_capacity_mut()[..lengths.len()];
        for (row, (&l, slot)) in lengths.iter().zip(slots).enumerate() {
            if l < 0 {
                if acc > i32::MAX as i64 {
                    break;
                }
                return Err(negative(row));
            }
            acc += l as i64;
            slot.write(acc as i32);
        }
        if acc > i32::MAX as i64 {
            return Err(overflow(lengths.iter().map(|&l| l.max(0) as i64).sum()));
        }
        // SAFETY: no negative length and no overflow, so the loop ran over every length and
        // wrote all `lengths.len()` slots after the leading 0.
        unsafe { splits.set_len(lengths.len() + 1) };
        return Ok(splits);
    }
    // Pass 1: per-chunk totals, or the first negative length of the chunk.
    let totals: Vec<Result<i64, usize>> = lengths
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut t = 0i64;
            for (k, &l) in chunk.iter().enumerate() {
                if l < 0 {
                    return Err(c * CHUNK + k);
                }
                t += l as i64;
            }
            Ok(t)
        })
        .collect();
    let mut offsets = Vec::with_capacity(totals.len());
    let mut acc = 0i64;
    for t in &totals {
        match t {
            Err(row) => {
                // As on the sequential path: an overflow before the negative length wins.
                let before: i64 = lengths[..*row].iter().map(|&l| l as i64).sum();
                if before > i32::MAX as i64 {
                    return Err(overflow(lengths.iter().map(|&l| l.max(0) as i64).sum()));
                }
                return Err(negative(*row));
            }
            Ok(t) => {
                offsets.push(acc as i32);
                acc += t;
            }
        }
    }
    if acc > i32::MAX as i64 {
        return Err(overflow(acc));
    }
    // Pass 2: scan each chunk from its offset.
    splits.spare_capacity_mut()[..lengths.len()]
        .par_chunks_mut(CHUNK)
        .zip(lengths.par_chunks(CHUNK))
        .zip(offsets.par_iter())
        .for_each(|((o, i), &start)| {
            let mut acc = start;
            for (slot, &x) in o.iter_mut().zip(i) {
                acc += x;
                slot.write(acc);
            }
        });
    // SAFETY: the chunks of pass 2 cover all `lengths.len()` slots after the leading 0 and
    // every slot of a chunk is written.
    unsafe { splits.set_len(lengths.len() + 1) };
    Ok(splits)
}

/// `out[0] = 0; out[i + 1] = out[i] + input[i]`, for inputs known not to overflow.
pub(crate) fn exclusive_sum_into(input: &[i32], out: &mut [i32]) {
    debug_assert_eq!(out.len(), input.len() + 1);
    out[0] = 0;
    if !go_parallel(input.len()) {
        let mut acc = 0i32;
        for (o, &x) in out[1..].iter_mut().zip(input) {
            acc += x;
            *o = acc;
        }
        return;
    }
    // Pass 1: per-chunk totals; pass 2: scan each chunk from its offset.
    let totals: Vec<i32> = input.par_chunks(CHUNK).map(|c| c.iter().sum()).collect();
    let mut offsets = Vec::with_capacity(totals.len());
    let mut acc = 0i32;
    for t in &totals {
        offsets.push(acc);
        acc += t;
    }
    out[1..]
        .par_chunks_mut(CHUNK)
        .zip(input.par_chunks(CHUNK))
        .zip(offsets.par_iter())
        .for_each(|((o, i), &start)| {
            let mut acc = start;
            for (slot, &x) in o.iter_mut().zip(i) {
                acc += x;
                *slot = acc;
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::with_parallel_threshold;

    fn ids_naive(splits: &[i32]) -> Vec<i32> {
        let mut ids = Vec::new();
        for r in 0..splits.len() - 1 {
            for _ in splits[r]..splits[r + 1] {
                ids.push(r as i32);
            }
        }
        ids
    }

    #[test]
    fn splits_to_ids_both_paths() {
        let lengths: Vec<i32> = (0..50_000i32).map(|i| i * 7 % 5).collect();
        let splits = exclusive_sum_lengths(&lengths).unwrap();
        let expected = ids_naive(&splits);
        for threshold in [0, usize::MAX] {
            with_parallel_threshold(threshold, || {
                let mut ids = vec![-1; expected.len()];
                row_splits_to_row_ids(&splits, &mut ids);
                assert_eq!(ids, expected);
                let mut back = vec![-1; splits.len()];
                row_ids_to_row_splits(&ids, &mut back);
                assert_eq!(back, splits);
                assert_eq!(exclusive_sum_lengths(&lengths).unwrap(), splits);
            });
        }
    }

    #[test]
    fn blocked_row_ids_match_the_naive_model() {
        // Lengths 0..40 (runs longer than the twenty-four-wide stores) and some long rows that
        // span several staging blocks.
        let mut lengths: Vec<i32> = (0..30_000i32).map(|i| (i * 13 + i / 7) % 41).collect();
        lengths[100] = 9_000;
        lengths[20_000] = 5_000;
        let splits = exclusive_sum_lengths(&lengths).unwrap();
        let expected = ids_naive(&splits);
        // Start offsets at different alignments, inside and at the start of rows.
        // Every level (AVX-512 runs the AVX2 copy); a level above the processor's is
        // lowered inside `at_level!`.
        for level in [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512] {
            for begin in [0usize, 1, 2, 3, 5, 4097, 123_457] {
                let row = splits.partition_point(|&s| s as usize <= begin) - 1;
                let mut ids = vec![-1; expected.len() + 3];
                let out = &mut ids[3..3 + expected.len() - begin];
                fill_row_ids_block(level, &splits, row, begin, out);
                let mut portable = vec![-1; expected.len() - begin];
                fill_row_ids_from(&splits, row, begin, &mut portable);
                assert_eq!(portable, &expected[begin..]);
                assert_eq!(out, &expected[begin..], "begin {begin}");
                // Starting one row early (a row ending exactly at `begin`) gives the same ids.
                if let Some(r) = (1..splits.len()).find(|&r| splits[r] as usize == begin) {
                    let mut again = vec![-1; expected.len() - begin];
                    fill_row_ids_block(level, &splits, r - 1, begin, &mut again);
                    assert_eq!(again, &expected[begin..]);
                }
            }
            let mut whole = vec![-1; expected.len()];
            fill_row_ids_block(level, &splits, 0, 0, &mut whole);
            assert_eq!(whole, expected);
        }
    }

    #[test]
    fn negative_and_overflowing_lengths_are_errors() {
        for threshold in [0, usize::MAX] {
            with_parallel_threshold(threshold, || {
                assert_eq!(
                    exclusive_sum_lengths(&[1, -2]),
                    Err(Error::NegativeRowLength { row: 1, length: -2 })
                );
                assert!(matches!(
                    exclusive_sum_lengths(&[i32::MAX, 1]),
                    Err(Error::Overflow {
                        value: 2_147_483_648,
                        ..
                    })
                ));
                // An overflow before a negative length is reported as the overflow, with
                // the total of the non-negative lengths.
                assert_eq!(
                    exclusive_sum_lengths(&[i32::MAX, 1, -1, 3]),
                    Err(Error::Overflow {
                        what: "the total of the row lengths",
                        value: 2_147_483_651,
                    })
                );
                let mut wide = vec![1 << 20; 40_000];
                wide[39_000] = -1;
                assert_eq!(
                    exclusive_sum_lengths(&wide),
                    Err(Error::Overflow {
                        what: "the total of the row lengths",
                        value: 39_999 << 20,
                    })
                );
                let mut long = vec![1; 40_000];
                long[33_333] = -5;
                assert_eq!(
                    exclusive_sum_lengths(&long),
                    Err(Error::NegativeRowLength {
                        row: 33_333,
                        length: -5
                    })
                );
            });
        }
    }

    #[test]
    fn first_decrease_finds_the_first_one_on_both_paths() {
        // a rising sequence with drops placed around block edges, against `windows`
        let n = 3 * CHUNK + 5;
        for drops in [
            vec![],
            vec![1],
            vec![CHUNK - 1],
            vec![CHUNK],
            vec![CHUNK + 1, 2 * CHUNK + 7],
            vec![n - 1],
        ] {
            let mut values: Vec<i32> = (0..n as i32).collect();
            for &d in &drops {
                values[d] = values[d - 1] - 1;
            }
            let expected = values.windows(2).position(|w| w[1] < w[0]);
            for threshold in [0, usize::MAX] {
                let got = with_parallel_threshold(threshold, || first_decrease(&values));
                assert_eq!(got, expected, "drops {drops:?}, threshold {threshold}");
            }
        }
        assert_eq!(first_decrease(&[]), None);
        assert_eq!(first_decrease(&[5]), None);
        assert_eq!(first_decrease(&[5, 4]), Some(0));
    }
}
