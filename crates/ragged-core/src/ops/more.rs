//! The remaining k2 shape helpers: `get_offsets`, `remove_some_empty_lists`,
//! `unsqueeze_parallel` and the two-renumbering `subset_ragged_shape2`.

use ndarray::Array2;

use crate::error::{to_offset, Error};
use crate::renumbering::Renumbering;
use crate::shape::RaggedShape;

/// k2's `GetOffsets`: a `(num_axes + 1) x (srcs.len() + 1)` array whose row `i` is the
/// exclusive sum over the sources of `tot_size(i - 1)` (of 1 for row 0); the last column
/// holds the totals. All sources need the same number of axes.
pub fn get_offsets(srcs: &[&RaggedShape]) -> Result<Array2<i32>, Error> {
    let Some(first) = srcs.first() else {
        return Err(Error::InvalidArgument {
            what: "number of sources (need at least one)",
            value: 0,
        });
    };
    let n_axes = first.num_axes();
    let mut out = Array2::zeros((n_axes + 1, srcs.len() + 1));
    for (j, s) in srcs.iter().enumerate() {
        if s.num_axes() != n_axes {
            return Err(Error::SizeMismatch {
                what: "num_axes of the sources",
                expected: n_axes,
                got: s.num_axes(),
            });
        }
        for i in 0..=n_axes {
            let size = if i == 0 { 1 } else { s.tot_size(i - 1) };
            let total = out[[i, j]] as usize + size;
            out[[i, j + 1]] = to_offset(total, "an offset of get_offsets")?;
        }
    }
    Ok(out)
}

impl RaggedShape {
    /// Removes the lists of axis `axis` (not the last) that `renumbering` drops, which must be
    /// empty (k2's `RemoveSomeEmptyLists`); other sizes stay the same.
    pub fn remove_some_empty_lists(
        &self,
        axis: usize,
        renumbering: &Renumbering,
    ) -> Result<RaggedShape, Error> {
        if axis + 1 >= self.num_axes() {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: self.num_axes() - 1,
            });
        }
        if renumbering.num_old_elems() != self.tot_size(axis) {
            return Err(Error::SizeMismatch {
                what: "renumbering.num_old_elems() vs tot_size(axis)",
                expected: self.tot_size(axis),
                got: renumbering.num_old_elems(),
            });
        }
        let below = self.row_splits(axis + 1);
        if let Some(i) =
            (0..self.tot_size(axis)).find(|&i| !renumbering.keep()[i] && below[i + 1] > below[i])
        {
            return Err(Error::NonEmptyListRemoved {
                index: i,
                size: (below[i + 1] - below[i]) as usize,
            });
        }
        Ok(self.index_axis(axis, renumbering.new2old())?.0)
    }

    /// k2's `UnsqueezeParallel`: [`RaggedShape::unsqueeze`] of every source (axis 0 only, as in k2).
    pub fn unsqueeze_parallel(
        srcs: &[&RaggedShape],
        axis: usize,
    ) -> Result<Vec<RaggedShape>, Error> {
        if axis != 0 {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: 1,
            });
        }
        srcs.iter().map(|s| s.unsqueeze(0)).collect()
    }

    /// k2's two-renumbering `SubsetRaggedShape`: keeps the elements `renumbering_last` keeps
    /// and the last-but-one items `renumbering_before_last` keeps. Returns the shape and the
    /// elements' new2old map.
    pub fn subset_ragged_shape2(
        &self,
        renumbering_before_last: &Renumbering,
        renumbering_last: &Renumbering,
    ) -> Result<(RaggedShape, Vec<i32>), Error> {
        let last = self.num_axes() - 1;
        let (inner, elems) = self.subset_ragged_shape(renumbering_last, last)?;
        let (outer, new2old) = inner.subset_ragged_shape(renumbering_before_last, last - 1)?;
        Ok((outer, new2old.iter().map(|&k| elems[k as usize]).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> RaggedShape {
        text.parse().unwrap()
    }

    #[test]
    fn offsets_of_two_shapes() {
        let a = shape("[ [ x x ] [ x ] ]");
        let b = shape("[ [ x ] ]");
        let o = get_offsets(&[&a, &b]).unwrap();
        assert_eq!(o, ndarray::arr2(&[[0, 1, 2], [0, 2, 3], [0, 3, 4]]));
    }

    #[test]
    fn remove_some_empty_lists_only_empty_ones() {
        let s = shape("[ [ [ x ] [ ] ] [ [ ] [ x x ] ] ]");
        let r = Renumbering::from_keep(&[true, false, true, true]).unwrap();
        assert_eq!(
            s.remove_some_empty_lists(1, &r).unwrap().to_string(),
            "[ [ [ x ] ] [ [ ] [ x x ] ] ]"
        );
        let bad = Renumbering::from_keep(&[false, true, true, true]).unwrap();
        assert_eq!(
            s.remove_some_empty_lists(1, &bad).unwrap_err(),
            Error::NonEmptyListRemoved { index: 0, size: 1 }
        );
    }

    #[test]
    fn subset_two_axes_and_unsqueeze_parallel() {
        let s = shape("[ [ [ x x ] [ x ] ] [ [ x ] ] ]");
        let before_last = Renumbering::from_keep(&[true, false, true]).unwrap();
        let last = Renumbering::from_keep(&[false, true, true, true]).unwrap();
        let (sub, new2old) = s.subset_ragged_shape2(&before_last, &last).unwrap();
        assert_eq!(sub.to_string(), "[ [ [ x ] ] [ [ x ] ] ]");
        assert_eq!(new2old, vec![1, 3]);
        let u = RaggedShape::unsqueeze_parallel(&[&s, &sub], 0).unwrap();
        assert_eq!(u[1].to_string(), "[ [ [ [ x ] ] [ [ x ] ] ] ]");
        assert!(RaggedShape::unsqueeze_parallel(&[&s], 1).is_err());
    }
}
