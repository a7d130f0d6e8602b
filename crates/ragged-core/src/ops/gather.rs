//! The shared kernels of concatenation, indexing and subsetting: building the lower layers
//! of a result from runs of source items, level by level, and gathering values by index.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::error::{to_offset, Error};
use crate::par::go_parallel;
use crate::row_partition::RowPartition;
use crate::shape::RaggedShape;
use cpu_features::{at_level, simd_level, SimdLevel};

/// Indexes per task of the parallel gather.
const GATHER_CHUNK: usize = 4096;

/// True when every index is in `0..len` (one pass without an early exit, so it vectorises).
#[inline(always)]
fn all_in_range(indexes: &[i32], len: usize) -> bool {
    // A negative index becomes a `u32` of at least 2^31; with `len` capped at 2^31 (every
    // non-negative `i32` is below it, so the cap changes no answer for those), one
    // unsigned comparison checks both ends.
    let len = len.min(1 << 31) as u32;
    indexes.iter().fold(true, |ok, &i| ok & ((i as u32) < len))
}

/// `values[indexes]` into `out` (same length): a vectorisable pass checks every index,
/// then a loop without bounds checks gathers. When an index is out of range the checked
/// loop runs instead and panics at the first bad index, as `values[i as usize]` does.
#[inline(always)]
fn gather_into_portable<T: Clone>(values: &[T], indexes: &[i32], out: &mut [MaybeUninit<T>]) {
    if all_in_range(indexes, values.len()) {
        for (slot, &i) in out.iter_mut().zip(indexes) {
            // SAFETY: `all_in_range` checked just above that every index is in
            // `0..values.len()`.
            slot.write(unsafe { values.get_unchecked(i as u32 as usize) }.clone());
        }
    } else {
        for (slot, &i) in out.iter_mut().zip(indexes) {
            slot.write(values[i as usize].clone());
        }
    }
}

/// [`gather_into_portable`] in the copy of `level`. There is no AVX-512 copy (it measured
/// no faster than AVX2 on a Zen 4, see the guide): the AVX2 copy runs at that level.
#[inline]
fn gather_into<T: Clone>(
    level: SimdLevel,
    values: &[T],
    indexes: &[i32],
    out: &mut [MaybeUninit<T>],
) {
    at_level!(
        level,
        max Avx2,
        [T: Clone],
        (values: &[T], indexes: &[i32], out: &mut [MaybeUninit<T>]) -> (),
        gather_into_portable(values, indexes, out)
    )
}

/// `values[indexes]`, rayon above the threshold, in the copy of the current
/// [`simd_level`]. An index outside `0..values.len()` panics with std's slice message.
pub(crate) fn gather_values<T: Clone + Send + Sync>(values: &[T], indexes: &[i32]) -> Vec<T> {
    let level = simd_level();
    let n = indexes.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    let slots = &mut out.spare_capacity_mut()[..n];
    if go_parallel(n) {
        slots
            .par_chunks_mut(GATHER_CHUNK)
            .zip(indexes.par_chunks(GATHER_CHUNK))
            .for_each(|(o, i)| gather_into(level, values, i, o));
    } else {
        gather_into(level, values, indexes, slots);
    }
    // SAFETY: `slots` and `indexes` both hold `n` elements, cut into chunks of the same
    // size, so the chunks pair up one to one, and `gather_into_portable` writes each slot of
    // a chunk, zipped with its index (a panic on a bad index leaves the length at 0).
    unsafe { out.set_len(n) };
    out
}

/// A run of items `begin..end` on one axis of source `src`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run {
    pub(crate) src: usize,
    pub(crate) begin: usize,
    pub(crate) end: usize,
}

/// Builds the layers below axis `axis` of a result whose axis-`axis` items are the items of
/// `runs`, in order. Returns those layers (one per source layer `axis..`) and the runs of
/// elements (last-axis items) they cover.
pub(crate) fn gather_runs(
    srcs: &[&RaggedShape],
    axis: usize,
    mut runs: Vec<Run>,
) -> Result<(Vec<RowPartition>, Vec<Run>), Error> {
    let num_layers = srcs[0].num_layers();
    let mut layers = Vec::with_capacity(num_layers.saturating_sub(axis));
    for layer in axis..num_layers {
        let n_items: usize = runs.iter().map(|r| r.end - r.begin).sum();
        let mut splits = Vec::with_capacity(n_items + 1);
        splits.push(0i32);
        let mut total = 0usize;
        let mut next = Vec::with_capacity(runs.len());
        for run in &runs {
            let s = srcs[run.src].layers()[layer].row_splits();
            let base = s[run.begin] as usize;
            let top = s[run.end] as usize;
            if top - base + total > i32::MAX as usize {
                return Err(Error::Overflow {
                    what: "the number of items of the result",
                    value: (top - base + total) as u64,
                });
            }
            let shift = total as i32 - base as i32;
            splits.extend(s[run.begin + 1..=run.end].iter().map(|&x| x + shift));
            total += top - base;
            if top > base {
                next.push(Run {
                    src: run.src,
                    begin: base,
                    end: top,
                });
            }
        }
        // SAFETY: `splits` starts at 0 and each run appends the splits of rows
        // `begin..end` of a valid partition (a run with `begin > end` fails the size check
        // or the slicing), shifted to start at the running `total`, so it never decreases;
        // `total` stays within `i32::MAX` (checked per run above).
        layers.push(unsafe { RowPartition::from_row_splits_unchecked(splits) });
        runs = next;
    }
    Ok((layers, runs))
}

/// k2's merge map of element runs: `offset * num_srcs + src` for every element.
pub(crate) fn merge_map_of(runs: &[Run], num_srcs: usize) -> Result<Vec<u32>, Error> {
    let n = num_srcs as u64;
    let total: usize = runs.iter().map(|r| r.end - r.begin).sum();
    let mut merge_map = Vec::with_capacity(total);
    for run in runs {
        for e in run.begin..run.end {
            let m = e as u64 * n + run.src as u64;
            merge_map.push(u32::try_from(m).map_err(|_| Error::Overflow {
                what: "a merge-map entry",
                value: m,
            })?);
        }
    }
    Ok(merge_map)
}

/// The element offsets covered by runs (of a single source), in order.
pub(crate) fn elements_of(runs: &[Run]) -> Vec<i32> {
    let total: usize = runs.iter().map(|r| r.end - r.begin).sum();
    let mut out = Vec::with_capacity(total);
    for run in runs {
        out.extend(run.begin as i32..run.end as i32);
    }
    out
}

/// Total size check: converts a count to an `i32` offset.
pub(crate) fn offset(value: usize) -> Result<i32, Error> {
    to_offset(value, "the number of items of the result")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::with_parallel_threshold;
    use cpu_features::at_every_level;

    /// The panic message of `gather_values(values, indexes)`, or `None` when it returns.
    fn panic_of(values: &[u16], indexes: &[i32]) -> Option<String> {
        let r = std::panic::catch_unwind(|| gather_values(values, indexes));
        r.err().map(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| "not a String".to_string())
        })
    }

    #[test]
    fn every_level_gathers_and_rejects_alike() {
        let values: Vec<u64> = (0..1000).map(|k| k * k + 3).collect();
        let idx: Vec<i32> = (0..777).map(|k| k * 389 % 1000).collect();
        let want: Vec<u64> = idx.iter().map(|&i| values[i as usize]).collect();
        for level in [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512] {
            let mut out = vec![MaybeUninit::uninit(); idx.len()];
            gather_into(level, &values, &idx, &mut out);
            let got: Vec<u64> = out
                .into_iter()
                .map(|x| {
                    // SAFETY: `gather_into` writes every slot when it returns.
                    unsafe { x.assume_init() }
                })
                .collect();
            assert_eq!(got, want, "{level:?}");
            for bad in [-1i32, 1000, i32::MIN] {
                let mut hostile = idx.clone();
                hostile[500] = bad;
                let r = std::panic::catch_unwind(|| {
                    let mut out = vec![MaybeUninit::uninit(); hostile.len()];
                    gather_into(level, &values, &hostile, &mut out);
                });
                let msg = r.unwrap_err().downcast_ref::<String>().cloned();
                assert_eq!(
                    msg,
                    Some(format!(
                        "index out of bounds: the len is 1000 but the index is {}",
                        bad as usize
                    ))
                );
            }
        }
    }

    #[test]
    fn the_range_check_passes_exactly_the_indexes_in_range() {
        let ok: Vec<i32> = (0..100).collect();
        assert!(all_in_range(&ok, 100));
        assert!(all_in_range(&[], 0));
        for bad in [100, 101, -1, -2, i32::MIN, i32::MAX] {
            let mut xs = ok.clone();
            xs[37] = bad;
            assert!(!all_in_range(&xs, 100), "{bad}");
        }
        assert!(all_in_range(&[i32::MAX - 1], i32::MAX as usize));
        assert!(!all_in_range(&[0], 0));
        // Sources longer than 2^31 (zero-sized values cost no memory): every non-negative
        // index below the length passes, no negative one does.
        for len in [(1usize << 31) - 1, 1 << 31, 3_000_000_000, usize::MAX] {
            assert!(all_in_range(&[0, i32::MAX], len) == (len > i32::MAX as usize));
            for bad in [-1, -1_000_000_000, -1_500_000_000, i32::MIN] {
                assert!(!all_in_range(&[bad], len), "{bad} of {len}");
            }
        }
        let huge = vec![(); 3_000_000_000];
        for bad in [-1_500_000_000i32, i32::MIN] {
            let r = std::panic::catch_unwind(|| gather_values(&huge, &[5, bad]));
            let msg = r.unwrap_err().downcast_ref::<String>().cloned();
            assert_eq!(
                msg,
                Some(format!(
                    "index out of bounds: the len is 3000000000 but the index is {}",
                    bad as usize
                ))
            );
        }
        assert_eq!(gather_values(&huge, &[i32::MAX, 0]).len(), 2);
    }

    #[test]
    fn a_hostile_index_panics_as_slice_indexing_does_at_every_level() {
        let values: Vec<u16> = (0..50).collect();
        for threshold in [usize::MAX, 0] {
            let results = at_every_level(|_| {
                with_parallel_threshold(threshold, || {
                    let good: Vec<i32> = (0..10_000).map(|k| k * 7 % 50).collect();
                    let got = gather_values(&values, &good);
                    let want: Vec<u16> = good.iter().map(|&i| values[i as usize]).collect();
                    assert_eq!(got, want);
                    [-1i32, -2, 50, i32::MAX, i32::MIN]
                        .iter()
                        .map(|&bad| {
                            let mut idx = good.clone();
                            idx[9_000] = bad;
                            panic_of(&values, &idx)
                        })
                        .collect::<Vec<_>>()
                })
            });
            for messages in results {
                let want: Vec<Option<String>> = [-1i32, -2, 50, i32::MAX, i32::MIN]
                    .iter()
                    .map(|&bad| {
                        Some(format!(
                            "index out of bounds: the len is 50 but the index is {}",
                            bad as usize
                        ))
                    })
                    .collect();
                assert_eq!(messages, want);
            }
        }
    }
}
