//! The shared kernel of concatenation, indexing and subsetting: building the lower layers
//! of a result from runs of source items, level by level.

use crate::error::{to_offset, Error};
use crate::row_partition::RowPartition;
use crate::shape::RaggedShape;

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
        layers.push(RowPartition::from_row_splits_unchecked(splits));
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
