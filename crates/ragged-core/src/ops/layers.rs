//! k2's `ragged_utils.h`: operations on one layer of several shapes (check, append,
//! intersperse, merge, subsample), each giving a 2-axis shape and a merge map.

use crate::error::{to_offset, Error};
use crate::row_partition::RowPartition;
use crate::shape::RaggedShape;

fn check_layer_index(layer: usize, srcs: &[&RaggedShape]) -> Result<(), Error> {
    let Some(first) = srcs.first() else {
        return Err(Error::InvalidArgument {
            what: "number of sources (need at least one)",
            value: 0,
        });
    };
    for s in srcs {
        if s.num_axes() != first.num_axes() {
            return Err(Error::SizeMismatch {
                what: "num_axes of the sources",
                expected: first.num_axes(),
                got: s.num_axes(),
            });
        }
    }
    if layer >= first.num_layers() {
        return Err(Error::AxisOutOfRange {
            axis: layer,
            min: 0,
            end: first.num_layers(),
        });
    }
    Ok(())
}

/// Builds one layer from rows `(src, row)` taken in order, with the merge map of the
/// layer's elements (`position * num_srcs + src`).
fn layer_from_rows(
    layer: usize,
    srcs: &[&RaggedShape],
    rows: impl Iterator<Item = (usize, usize)>,
) -> Result<(RaggedShape, Vec<u32>), Error> {
    let n = srcs.len() as u64;
    let mut splits = vec![0i32];
    let mut merge_map = Vec::new();
    for (src, row) in rows {
        let s = srcs[src].layers()[layer].row_splits();
        for e in s[row]..s[row + 1] {
            let m = e as u64 * n + src as u64;
            merge_map.push(u32::try_from(m).map_err(|_| Error::Overflow {
                what: "a merge-map entry",
                value: m,
            })?);
        }
        splits.push(to_offset(
            merge_map.len(),
            "the number of elements of the layer",
        )?);
    }
    // SAFETY: `splits` starts at 0 and pushes `merge_map.len()`, which only grows, each
    // checked by `to_offset`.
    let layer = unsafe { RowPartition::from_row_splits_unchecked(splits) };
    let shape = RaggedShape::from_matching_layers(vec![layer]);
    Ok((shape, merge_map))
}

/// k2's `CheckLayerEqual`: `Ok` when layer `layer` is the same in every source.
pub fn check_layer_equal(layer: usize, srcs: &[&RaggedShape]) -> Result<(), Error> {
    check_layer_index(layer, srcs)?;
    let first = srcs[0].layers()[layer].row_splits();
    match srcs
        .iter()
        .position(|s| s.layers()[layer].row_splits() != first)
    {
        Some(src) => Err(Error::LayersDiffer { layer, src }),
        None => Ok(()),
    }
}

/// k2's `AppendRaggedLayer`: the rows of layer `layer` of source 0, then of source 1, ...
/// as a 2-axis shape, with the merge map of its elements.
pub fn append_ragged_layer(
    layer: usize,
    srcs: &[&RaggedShape],
) -> Result<(RaggedShape, Vec<u32>), Error> {
    check_layer_index(layer, srcs)?;
    let rows = srcs
        .iter()
        .enumerate()
        .flat_map(|(src, s)| (0..s.layers()[layer].nrows()).map(move |row| (src, row)));
    layer_from_rows(layer, srcs, rows)
}

/// k2's `IntersperseRaggedLayer`: row 0 of every source, then row 1 of every source, ...;
/// the sources need the same number of rows in that layer.
pub fn intersperse_ragged_layer(
    layer: usize,
    srcs: &[&RaggedShape],
) -> Result<(RaggedShape, Vec<u32>), Error> {
    check_layer_index(layer, srcs)?;
    let nrows = srcs[0].layers()[layer].nrows();
    for s in srcs {
        if s.layers()[layer].nrows() != nrows {
            return Err(Error::SizeMismatch {
                what: "rows of the layer in each source",
                expected: nrows,
                got: s.layers()[layer].nrows(),
            });
        }
    }
    let n = srcs.len();
    layer_from_rows(
        layer,
        srcs,
        (0..nrows).flat_map(move |row| (0..n).map(move |src| (src, row))),
    )
}

/// k2's `MergeRaggedLayer`: the rows of layer `layer` in the order `merge_map` gives
/// (`m % num_srcs` the source, `m / num_srcs` the row), with the next level's merge map.
pub fn merge_ragged_layer(
    layer: usize,
    srcs: &[&RaggedShape],
    merge_map: &[u32],
) -> Result<(RaggedShape, Vec<u32>), Error> {
    check_layer_index(layer, srcs)?;
    let n = srcs.len();
    let total: usize = srcs.iter().map(|s| s.layers()[layer].nrows()).sum();
    if merge_map.len() != total {
        return Err(Error::SizeMismatch {
            what: "merge_map length vs the sources' rows",
            expected: total,
            got: merge_map.len(),
        });
    }
    let mut rows = Vec::with_capacity(total);
    for (position, &m) in merge_map.iter().enumerate() {
        let (src, row) = (m as usize % n, m as usize / n);
        let nrows = srcs[src].layers()[layer].nrows();
        if row >= nrows {
            return Err(Error::IndexOutOfRange {
                what: "merge_map row",
                position,
                index: row as i64,
                size: nrows,
            });
        }
        rows.push((src, row));
    }
    layer_from_rows(layer, srcs, rows.into_iter())
}

/// k2's `SubsampleRaggedLayer`: every `factor` consecutive rows of layer `layer` become one;
/// `factor` must divide the number of rows.
pub fn subsample_ragged_layer(
    src: &RaggedShape,
    layer: usize,
    factor: usize,
) -> Result<RaggedShape, Error> {
    check_layer_index(layer, &[src])?;
    let splits = src.layers()[layer].row_splits();
    let nrows = splits.len() - 1;
    if factor == 0 || !nrows.is_multiple_of(factor) {
        return Err(Error::InvalidArgument {
            what: "subsample factor (must divide the number of rows)",
            value: factor as i64,
        });
    }
    let new: Vec<i32> = splits.iter().step_by(factor).copied().collect();
    // SAFETY: every `factor`-th split of a valid partition, the first (0) and, as `factor`
    // divides `nrows`, the last among them: a subsequence of non-decreasing splits.
    let layer = unsafe { RowPartition::from_row_splits_unchecked(new) };
    Ok(RaggedShape::from_matching_layers(vec![layer]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> RaggedShape {
        text.parse().unwrap()
    }

    #[test]
    fn k2_append_ragged_layer_example() {
        let (a, b) = (shape("[ [ x x x ] [ x ] ]"), shape("[ [ ] [ x x ] ]"));
        let (ans, mm) = append_ragged_layer(0, &[&a, &b]).unwrap();
        assert_eq!(ans.to_string(), "[ [ x x x ] [ x ] [ ] [ x x ] ]");
        assert_eq!(mm, vec![0, 2, 4, 6, 1, 3]);
    }

    #[test]
    fn k2_intersperse_ragged_layer_example() {
        let (a, b) = (shape("[ [ x x x ] [ x x ] ]"), shape("[ [ x ] [ x x x ] ]"));
        let (ans, mm) = intersperse_ragged_layer(0, &[&a, &b]).unwrap();
        assert_eq!(ans.to_string(), "[ [ x x x ] [ x ] [ x x ] [ x x x ] ]");
        assert_eq!(mm, vec![0, 2, 4, 1, 6, 8, 3, 5, 7]);
        assert!(intersperse_ragged_layer(0, &[&a, &shape("[ [ x ] ]")]).is_err());
    }

    #[test]
    fn merge_check_and_subsample_layers() {
        let (a, b) = (shape("[ [ x x x ] [ x x ] ]"), shape("[ [ x ] [ x x x ] ]"));
        // Same order as interspersing: a0, b0, a1, b1.
        let (ans, mm) = merge_ragged_layer(0, &[&a, &b], &[0, 1, 2, 3]).unwrap();
        assert_eq!(ans, intersperse_ragged_layer(0, &[&a, &b]).unwrap().0);
        assert_eq!(mm, vec![0, 2, 4, 1, 6, 8, 3, 5, 7]);
        assert!(merge_ragged_layer(0, &[&a, &b], &[0, 1, 2, 5]).is_err());
        check_layer_equal(0, &[&a, &a.clone()]).unwrap();
        assert_eq!(
            check_layer_equal(0, &[&a, &a, &b]),
            Err(Error::LayersDiffer { layer: 0, src: 2 })
        );
        let s = shape("[ [ x ] [ x x ] [ ] [ x ] ]");
        assert_eq!(
            subsample_ragged_layer(&s, 0, 2).unwrap().to_string(),
            "[ [ x x x ] [ x ] ]"
        );
        assert!(subsample_ragged_layer(&s, 0, 3).is_err());
    }
}
