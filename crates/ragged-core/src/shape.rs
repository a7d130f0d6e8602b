//! `RaggedShape`: the layers of row partitions that give a ragged array its structure,
//! with k2's axis numbering, text form, and the coordinate <-> offset conversions.

use std::fmt;
use std::str::FromStr;

use crate::error::{index_out_of_bounds, precondition, Error};
use crate::row_partition::{check_row_ids_against_splits, RowPartition};
use crate::text::parse_nested;

/// The shape of a ragged array with `num_axes() >= 2` axes (k2's `RaggedShape`).
///
/// Layer `axis - 1` (for `1 <= axis < num_axes()`) splits the `tot_size(axis - 1)` items of
/// axis `axis - 1` into rows of items of axis `axis`. Indexes follow k2's names: an *idx0* is
/// an index on axis 0, an *idx01* the offset of an axis-1 item among all axis-1 items, an
/// *idx012* the offset of an axis-2 item, and so on.
///
/// **Invariant:** `layer(axis).nrows() == tot_size(axis - 1)` for every layer.
/// Cloning shares the layers.
///
/// ```
/// use ragged_core::RaggedShape;
/// let shape: RaggedShape = "[ [ x x ] [ ] [ x ] ]".parse().unwrap();
/// assert_eq!(shape.num_axes(), 2);
/// assert_eq!(shape.dim0(), 3);
/// assert_eq!(shape.row_splits(1), &[0, 2, 2, 3]);
/// assert_eq!(shape.row_ids(1), &[0, 0, 2]);
/// assert_eq!(shape.to_string(), "[ [ x x ] [ ] [ x ] ]");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct RaggedShape {
    layers: Vec<RowPartition>,
}

impl RaggedShape {
    /// A shape from its layers, outermost first; layer k's `nvals` must equal layer k+1's `nrows`.
    pub fn from_layers(layers: Vec<RowPartition>) -> Result<Self, Error> {
        Self::check_layers(&layers)?;
        Ok(Self { layers })
    }

    /// A shape from layers the caller has built to match, checked in O(layers) all the
    /// same (no `unsafe` code relies on the layers matching, but the check costs nothing);
    /// panics, as for a broken invariant, when there are none or two adjacent ones differ.
    #[track_caller]
    pub(crate) fn from_matching_layers(layers: Vec<RowPartition>) -> Self {
        if let Err(e) = Self::check_layers(&layers) {
            precondition(format!(
                "a shape built inside the crate is inconsistent: {e}"
            ));
        }
        Self { layers }
    }

    /// Checks that there is at least one layer and that each layer's `nvals` is the next
    /// layer's `nrows`.
    fn check_layers(layers: &[RowPartition]) -> Result<(), Error> {
        if layers.is_empty() {
            return Err(Error::TooFewAxes { got: 1, min: 2 });
        }
        for k in 1..layers.len() {
            if layers[k - 1].nvals() != layers[k].nrows() {
                return Err(Error::LayerMismatch {
                    axis: k + 1,
                    expected: layers[k - 1].nvals(),
                    got: layers[k].nrows(),
                });
            }
        }
        Ok(())
    }

    /// A shape from the `row_splits` of each axis, axis 1 first.
    pub fn from_row_splits(row_splits: Vec<Vec<i32>>) -> Result<Self, Error> {
        let layers = row_splits
            .into_iter()
            .enumerate()
            .map(|(k, s)| {
                RowPartition::from_row_splits(s).map_err(|e| Error::InAxis {
                    axis: k + 1,
                    source: Box::new(e),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_layers(layers)
    }

    /// The layers, outermost first: `layers()[axis - 1]` partitions axis `axis`.
    pub fn layers(&self) -> &[RowPartition] {
        &self.layers
    }

    /// The layer of axis `axis` (1-based like [`RaggedShape::row_splits`]); panics outside `1..num_axes()`.
    #[track_caller]
    pub fn layer(&self, axis: usize) -> &RowPartition {
        self.check_layer_axis(axis);
        &self.layers[axis - 1]
    }

    /// Consumes the shape, returning its layers.
    pub fn into_layers(self) -> Vec<RowPartition> {
        self.layers
    }

    #[inline]
    #[track_caller]
    fn check_layer_axis(&self, axis: usize) {
        if axis == 0 || axis >= self.num_axes() {
            precondition(format!(
                "axis {axis} has no row_splits: a shape with {} axes has them for axes 1..{}",
                self.num_axes(),
                self.num_axes()
            ));
        }
    }

    /// The number of axes (at least 2).
    #[inline]
    pub fn num_axes(&self) -> usize {
        self.layers.len() + 1
    }

    /// The number of layers (`num_axes() - 1`).
    #[inline]
    pub fn num_layers(&self) -> usize {
        self.layers.len()
    }

    /// The size of axis 0.
    #[inline]
    pub fn dim0(&self) -> usize {
        self.layers[0].nrows()
    }

    /// The total number of items on axis `axis` (`dim0()` for axis 0).
    #[inline]
    #[track_caller]
    pub fn tot_size(&self, axis: usize) -> usize {
        if axis == 0 {
            self.dim0()
        } else {
            if axis >= self.num_axes() {
                index_out_of_bounds("axis", axis, self.num_axes());
            }
            self.layers[axis - 1].nvals()
        }
    }

    /// The number of elements: `tot_size(num_axes() - 1)`.
    #[inline]
    pub fn num_elements(&self) -> usize {
        self.layers[self.layers.len() - 1].nvals()
    }

    /// The row splits of axis `axis`, `1 <= axis < num_axes()`.
    #[inline]
    #[track_caller]
    pub fn row_splits(&self, axis: usize) -> &[i32] {
        self.layer(axis).row_splits()
    }

    /// The row ids of axis `axis`, `1 <= axis < num_axes()`; computed on first use and cached.
    #[track_caller]
    pub fn row_ids(&self, axis: usize) -> &[i32] {
        self.layer(axis).row_ids()
    }

    /// The longest sublist on axis `axis` (k2's `MaxSize`), `1 <= axis < num_axes()`.
    #[track_caller]
    pub fn max_size(&self, axis: usize) -> usize {
        self.layer(axis).max_row_length()
    }

    /// Checks every invariant k2's `Check()` does: each layer's splits (non-empty, start at 0,
    /// non-decreasing), cached row ids against the splits, and sizes between layers.
    pub fn validate(&self) -> Result<(), Error> {
        for (k, layer) in self.layers.iter().enumerate() {
            let in_axis = |e| Error::InAxis {
                axis: k + 1,
                source: Box::new(e),
            };
            crate::row_partition::check_row_splits(layer.row_splits()).map_err(in_axis)?;
            if let Some(ids) = layer.row_ids_if_cached() {
                check_row_ids_against_splits(layer.row_splits(), ids).map_err(in_axis)?;
            }
            if k > 0 && self.layers[k - 1].nvals() != layer.nrows() {
                return Err(Error::LayerMismatch {
                    axis: k + 1,
                    expected: self.layers[k - 1].nvals(),
                    got: layer.nrows(),
                });
            }
        }
        Ok(())
    }

    /// Coordinates -> offset through `row_splits`: for `coords = [i0, i1, .., ik]` (`k < num_axes()`)
    /// the offset of that item on axis `k` (its idx0, idx01, idx012, ...), or `None` when a
    /// coordinate is out of range.
    ///
    /// `offset = row_splits(k)[ .. row_splits(2)[row_splits(1)[i0] + i1] + i2 .. ] + ik`.
    ///
    /// ```
    /// use ragged_core::RaggedShape;
    /// let s: RaggedShape = "[ [ [ x x ] [ x ] ] [ [ x ] [ ] [ x x ] ] ]".parse().unwrap();
    /// assert_eq!(s.offset_of(&[1, 2, 1]), Some(5)); // the idx012 of s[1][2][1]
    /// assert_eq!(s.offset_of(&[1, 2]), Some(4));    // the idx01 of s[1][2]
    /// assert_eq!(s.offset_of(&[1, 1, 0]), None);    // s[1][1] is empty
    /// ```
    pub fn offset_of(&self, coords: &[usize]) -> Option<usize> {
        let (&first, rest) = coords.split_first()?;
        if coords.len() > self.num_axes() || first >= self.dim0() {
            return None;
        }
        let mut offset = first;
        for (k, &c) in rest.iter().enumerate() {
            let splits = self.layers[k].row_splits();
            let begin = splits[offset] as usize;
            let end = splits[offset + 1] as usize;
            if c >= end - begin {
                return None;
            }
            offset = begin + c;
        }
        Some(offset)
    }

    /// Offset -> coordinates through `row_ids`: the full coordinates `[i0, .., i_{n-1}]` of
    /// element `offset` (an idx of the last axis). Panics when `offset >= num_elements()`.
    ///
    /// Going up one axis at a time: `row = row_ids(axis)[offset]`, the coordinate on `axis` is
    /// `offset - row_splits(axis)[row]`, and `row` becomes the offset on `axis - 1`.
    ///
    /// ```
    /// use ragged_core::RaggedShape;
    /// let s: RaggedShape = "[ [ [ x x ] [ x ] ] [ [ x ] [ ] [ x x ] ] ]".parse().unwrap();
    /// assert_eq!(s.coords_of(5), vec![1, 2, 1]);
    /// ```
    #[track_caller]
    pub fn coords_of(&self, offset: usize) -> Vec<usize> {
        self.coords_of_on_axis(self.num_axes() - 1, offset)
    }

    /// The coordinates `[i0, .., i_axis]` of the item at `offset` on axis `axis`.
    /// Panics when `axis >= num_axes()` or `offset >= tot_size(axis)`.
    #[track_caller]
    pub fn coords_of_on_axis(&self, axis: usize, offset: usize) -> Vec<usize> {
        if axis >= self.num_axes() {
            index_out_of_bounds("axis", axis, self.num_axes());
        }
        let size = self.tot_size(axis);
        if offset >= size {
            index_out_of_bounds("offset", offset, size);
        }
        let mut coords = vec![0usize; axis + 1];
        let mut offset = offset;
        for a in (1..=axis).rev() {
            let layer = &self.layers[a - 1];
            let row = layer.row_ids()[offset] as usize;
            coords[a] = offset - layer.row_splits()[row] as usize;
            offset = row;
        }
        coords[0] = offset;
        coords
    }

    /// Like [`RaggedShape::coords_of`], but `None` when `offset` is out of range.
    pub fn get_coords_of(&self, offset: usize) -> Option<Vec<usize>> {
        (offset < self.num_elements()).then(|| self.coords_of(offset))
    }

    /// The range of elements (last-axis offsets) under items `begin..end` of axis `axis`.
    #[track_caller]
    pub fn element_range(&self, axis: usize, begin: usize, end: usize) -> std::ops::Range<usize> {
        if end > self.tot_size(axis) || begin > end {
            precondition(format!(
                "range {begin}..{end} invalid on axis {axis} of size {}",
                self.tot_size(axis)
            ));
        }
        let (mut b, mut e) = (begin, end);
        for layer in &self.layers[axis..] {
            let s = layer.row_splits();
            b = s[b] as usize;
            e = s[e] as usize;
        }
        b..e
    }

    /// Writes the nested text form, calling `leaf` for each element offset.
    ///
    /// Iterative, with one frame per open list on a heap stack, so that a shape nested a
    /// million deep (which the parser accepts) prints without overflowing the thread's
    /// stack.
    pub(crate) fn fmt_with(
        &self,
        f: &mut fmt::Formatter<'_>,
        leaf: &mut dyn FnMut(&mut fmt::Formatter<'_>, usize) -> fmt::Result,
    ) -> fmt::Result {
        let num_layers = self.layers.len();
        f.write_str("[ ")?;
        // (level, next item, end): the items of axis `level` still to print inside the
        // innermost open list; level `num_layers` holds the elements.
        let mut stack: Vec<(usize, usize, usize)> = vec![(0, 0, self.dim0())];
        while let Some(top) = stack.last_mut() {
            let (level, item, end) = *top;
            if item == end {
                stack.pop();
                if !stack.is_empty() {
                    f.write_str("] ")?;
                }
                continue;
            }
            top.1 += 1;
            if level == num_layers {
                leaf(f, item)?;
                f.write_str(" ")?;
            } else {
                f.write_str("[ ")?;
                let splits = self.layers[level].row_splits();
                stack.push((level + 1, splits[item] as usize, splits[item + 1] as usize));
            }
        }
        f.write_str("]")
    }
}

impl fmt::Display for RaggedShape {
    /// k2's text form, e.g. `[ [ x x ] [ x ] ]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_with(f, &mut |f, _| f.write_str("x"))
    }
}

impl fmt::Debug for RaggedShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RaggedShape({self})")
    }
}

impl FromStr for RaggedShape {
    type Err = Error;

    /// Parses k2's text form, e.g. `[ [ x x ] [ x ] ]`; elements must be `x`.
    fn from_str(text: &str) -> Result<Self, Error> {
        let parsed = parse_nested(text)?;
        if let Some(&(position, word)) = parsed.leaves.iter().find(|l| l.1 != "x") {
            return Err(Error::Parse {
                position,
                expected: "'x'",
                found: format!("'{word}'"),
            });
        }
        // Text is untrusted input: the parsed splits go through the checked constructors.
        let layers = parsed
            .row_splits
            .into_iter()
            .map(RowPartition::from_row_splits)
            .collect::<Result<Vec<_>, Error>>()?;
        Self::from_layers(layers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn roundtrip(text: &str) {
        let s: RaggedShape = text.parse().unwrap();
        assert_eq!(s.to_string(), text);
        s.validate().unwrap();
    }

    #[test]
    fn text_roundtrips() {
        roundtrip("[ [ x x ] [ x ] ]");
        roundtrip("[ [ ] ]");
        roundtrip("[ [ [ x x x x ] [ x ] [ x ] [ x ] [ ] ] [ [ x ] [ x ] [ x ] [ ] ] ]");
        roundtrip("[ [ [ [ ] ] ] [ ] [ [ [ x ] ] ] ]");
    }

    #[test]
    fn non_x_leaves_are_rejected() {
        assert_eq!(
            "[ [ x 1 ] ]".parse::<RaggedShape>(),
            Err(Error::Parse {
                position: 6,
                expected: "'x'",
                found: "'1'".into()
            })
        );
    }

    #[test]
    fn layers_must_chain() {
        assert_eq!(
            RaggedShape::from_row_splits(vec![vec![0, 2], vec![0, 1, 1, 3]]),
            Err(Error::LayerMismatch {
                axis: 2,
                expected: 2,
                got: 3
            })
        );
        assert_eq!(
            RaggedShape::from_layers(vec![]),
            Err(Error::TooFewAxes { got: 1, min: 2 })
        );
        assert!(matches!(
            RaggedShape::from_row_splits(vec![vec![0, 2], vec![1, 1, 3]]),
            Err(Error::InAxis { axis: 2, .. })
        ));
    }

    #[test]
    fn offsets_and_coords_are_inverse() {
        let s: RaggedShape = "[ [ [ x x ] [ ] [ x ] ] [ ] [ [ x x x ] ] ]"
            .parse()
            .unwrap();
        let mut offset = 0;
        for i0 in 0..3usize {
            for i1 in 0..3usize {
                for i2 in 0..3usize {
                    if let Some(o) = s.offset_of(&[i0, i1, i2]) {
                        assert_eq!(o, offset, "[{i0},{i1},{i2}]");
                        assert_eq!(s.coords_of(o), vec![i0, i1, i2]);
                        offset += 1;
                    }
                }
            }
        }
        assert_eq!(offset, s.num_elements());
        assert_eq!(s.get_coords_of(offset), None);
        assert_eq!(s.offset_of(&[]), None);
        assert_eq!(s.offset_of(&[3]), None);
        assert_eq!(s.offset_of(&[0, 0, 0, 0]), None);
    }

    #[test]
    #[should_panic(expected = "offset 6 out of bounds for size 6")]
    fn coords_of_out_of_range_panics() {
        let s: RaggedShape = "[ [ [ x x ] [ ] [ x ] ] [ ] [ [ x x x ] ] ]"
            .parse()
            .unwrap();
        s.coords_of(6);
    }

    #[test]
    #[should_panic(expected = "axis 2 has no row_splits")]
    fn row_splits_of_a_missing_axis_panics() {
        let s: RaggedShape = "[ [ x ] ]".parse().unwrap();
        s.row_splits(2);
    }
}
