//! Structural operations on shapes (k2 names in Rust case): `index`, `prefix`, `arange`,
//! `remove_axis`, `unsqueeze`, `change_sublist_size`, `index_axis`, `subset_ragged_shape`,
//! `remove_empty_lists`, `transpose`, `merge`, `unstack`, `covering_shape`, ...

use std::ops::Range;

use rayon::prelude::*;

use super::gather::{elements_of, gather_runs, merge_map_of, offset, Run};
use crate::error::{index_out_of_bounds, precondition, Error};
use crate::par::go_parallel;
use crate::renumbering::Renumbering;
use crate::row_partition::RowPartition;
use crate::shape::RaggedShape;

impl RaggedShape {
    /// The sub-shape at index `i` of axis 0, with one fewer axis, and the range of element
    /// offsets it covers (k2's `RaggedShape::Index(0, i, &value_offset)`). Offsets are rebased,
    /// so this copies the row splits; [`crate::Ragged::index`] borrows instead.
    ///
    /// # Panics
    /// If `axis != 0`, `num_axes() < 3` or `i >= dim0()`.
    #[track_caller]
    pub fn index(&self, axis: usize, i: usize) -> (RaggedShape, Range<usize>) {
        if axis != 0 || self.num_axes() < 3 {
            precondition(format!(
                "RaggedShape::index needs axis 0 and at least 3 axes, got axis {axis} with {} axes",
                self.num_axes()
            ));
        }
        if i >= self.dim0() {
            index_out_of_bounds("index", i, self.dim0());
        }
        self.arange(0, i, i + 1)
            .map(|(s, r)| (s.remove_axis(0).expect("3+ axes"), r))
            .expect("range checked")
    }

    /// The first `n` items of axis 0, sharing every layer's storage (k2's `Prefix`).
    #[track_caller]
    pub fn prefix(&self, n: usize) -> RaggedShape {
        if n > self.dim0() {
            index_out_of_bounds("prefix length", n, self.dim0() + 1);
        }
        let mut layers = Vec::with_capacity(self.num_layers());
        let mut rows = n;
        for layer in self.layers() {
            let p = layer.prefix(rows);
            rows = p.nvals();
            layers.push(p);
        }
        RaggedShape::from_matching_layers(layers)
    }

    /// Prefixes of several lengths (k2's `GetPrefixes`).
    #[track_caller]
    pub fn get_prefixes(&self, sizes: &[usize]) -> Vec<RaggedShape> {
        sizes.iter().map(|&n| self.prefix(n)).collect()
    }

    /// Items `begin..end` of axis `axis` and everything under them, as a shape with
    /// `num_axes() - axis` axes, plus the range of element offsets covered (k2's `Arange`).
    /// Needs `axis < num_axes() - 1` and `begin <= end <= tot_size(axis)`. Shares storage when
    /// `axis == 0 && begin == 0` (a prefix).
    pub fn arange(
        &self,
        axis: usize,
        begin: usize,
        end: usize,
    ) -> Result<(RaggedShape, Range<usize>), Error> {
        if axis + 1 >= self.num_axes() {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: self.num_axes() - 1,
            });
        }
        if begin > end || end > self.tot_size(axis) {
            return Err(Error::IndexOutOfRange {
                what: "arange end",
                position: 0,
                index: end as i64,
                size: self.tot_size(axis),
            });
        }
        if axis == 0 && begin == 0 {
            let p = self.prefix(end);
            let n = p.num_elements();
            return Ok((p, 0..n));
        }
        let (layers, runs) = gather_runs(&[self], axis, vec![Run { src: 0, begin, end }])?;
        let range = match runs.first() {
            Some(r) => r.begin..r.end,
            None => {
                let e = self.element_range(axis, begin, end);
                e.start..e.start
            }
        };
        Ok((RaggedShape::from_matching_layers(layers), range))
    }

    /// Removes axis `axis` (k2's `RemoveAxis`): for the first or last axis the layer is dropped;
    /// otherwise the axis is merged into the one below it by appending lists. Other layers are
    /// shared. Needs `num_axes() > 2`.
    pub fn remove_axis(&self, axis: usize) -> Result<RaggedShape, Error> {
        if self.num_axes() <= 2 {
            return Err(Error::TooFewAxes {
                got: self.num_axes() - 1,
                min: 2,
            });
        }
        if axis >= self.num_axes() {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: self.num_axes(),
            });
        }
        let layers = self.layers();
        let mut out: Vec<RowPartition> = Vec::with_capacity(layers.len() - 1);
        if axis == 0 {
            out.extend_from_slice(&layers[1..]);
        } else if axis == self.num_axes() - 1 {
            out.extend_from_slice(&layers[..layers.len() - 1]);
        } else {
            let upper = layers[axis - 1].row_splits();
            let lower = layers[axis].row_splits();
            let merged: Vec<i32> = if go_parallel(upper.len()) {
                upper.par_iter().map(|&u| lower[u as usize]).collect()
            } else {
                upper.iter().map(|&u| lower[u as usize]).collect()
            };
            out.extend_from_slice(&layers[..axis - 1]);
            // SAFETY: `lower[upper[i]]` composes two valid splits: `upper` starts at 0 and
            // never decreases, so the indexes into `lower` do too, and `lower` starts at 0
            // and never decreases; the indexing is checked.
            out.push(unsafe { RowPartition::from_row_splits_unchecked(merged) });
            out.extend_from_slice(&layers[axis + 1..]);
        }
        Ok(RaggedShape::from_matching_layers(out))
    }

    /// Inserts a new axis at `axis` (`0 <= axis <= num_axes()`) whose lists all have size 1
    /// (k2's `Unsqueeze`); the existing layers are shared.
    pub fn unsqueeze(&self, axis: usize) -> Result<RaggedShape, Error> {
        if axis > self.num_axes() {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: self.num_axes() + 1,
            });
        }
        let mut layers = self.layers().to_vec();
        if axis == 0 {
            let n = offset(self.dim0())?;
            layers.insert(0, RowPartition::from_row_splits(vec![0, n])?);
        } else {
            let n = self.tot_size(axis - 1);
            offset(n)?;
            let identity: Vec<i32> = (0..=n as i32).collect();
            // SAFETY: `0, 1, .., n` with `n` checked to fit `i32` just above.
            layers.insert(axis - 1, unsafe {
                RowPartition::from_row_splits_unchecked(identity)
            });
        }
        Ok(RaggedShape::from_matching_layers(layers))
    }

    /// Changes the size of every last-axis sublist by `size_delta` (k2's `ChangeSublistSize`);
    /// an error if a size would become negative.
    pub fn change_sublist_size(&self, size_delta: i32) -> Result<RaggedShape, Error> {
        self.change_last_sizes(|row, len| {
            let new = len as i64 + size_delta as i64;
            if new < 0 {
                Err(Error::NegativeRowLength {
                    row,
                    length: new.max(i32::MIN as i64) as i32,
                })
            } else {
                Ok(new)
            }
        })
    }

    /// k2's `ChangeSublistSizePinned`: empty sublists stay empty, and sizes stop at 0.
    pub fn change_sublist_size_pinned(&self, size_delta: i32) -> Result<RaggedShape, Error> {
        self.change_last_sizes(|_, len| {
            Ok(if len == 0 {
                0
            } else {
                (len as i64 + size_delta as i64).max(0)
            })
        })
    }

    fn change_last_sizes(
        &self,
        f: impl Fn(usize, i32) -> Result<i64, Error>,
    ) -> Result<RaggedShape, Error> {
        let last = self.layers().last().expect("at least one layer");
        let mut lengths = Vec::with_capacity(last.nrows());
        for (row, w) in last.row_splits().windows(2).enumerate() {
            let new = f(row, w[1] - w[0])?;
            if new > i32::MAX as i64 {
                return Err(Error::Overflow {
                    what: "a sublist size",
                    value: new as u64,
                });
            }
            lengths.push(new as i32);
        }
        let mut layers = self.layers().to_vec();
        *layers.last_mut().expect("at least one layer") = RowPartition::from_row_lengths(&lengths)?;
        Ok(RaggedShape::from_matching_layers(layers))
    }

    /// Indexes axis `axis` with `indexes` (k2's `Index(src, axis, indexes, &elem_indexes)`):
    /// the result has `tot_size(axis) == indexes.len()`, and the second return value is the
    /// new2old map of the elements (`ans_values = src_values[elem_indexes]`).
    ///
    /// On axis 0 an index of `-1` gives an empty list. On other axes the indexes must keep
    /// the order of the axes above (`row_ids(axis)[indexes]` non-decreasing), as in k2.
    pub fn index_axis(
        &self,
        axis: usize,
        indexes: &[i32],
    ) -> Result<(RaggedShape, Vec<i32>), Error> {
        self.check_axis_indexes(axis, indexes)?;
        if axis == 0 {
            return self.index_axis0(indexes);
        }
        // Layers above `axis - 1` are shared; layer `axis` gets new row ids.
        let row_ids = self.row_ids(axis);
        let lookup = |&i: &i32| row_ids[i as usize];
        let new_ids: Vec<i32> = if go_parallel(indexes.len()) {
            indexes.par_iter().map(lookup).collect()
        } else {
            indexes.iter().map(lookup).collect()
        };
        if let Some(p) = crate::par::first_decrease(&new_ids) {
            return Err(Error::DecreasingRowIds {
                position: p + 1,
                previous: new_ids[p],
                value: new_ids[p + 1],
            });
        }
        // The ids are in range (looked up) and non-decreasing (checked): build the splits.
        let nrows = self.tot_size(axis - 1);
        let mut splits = vec![0i32; nrows + 1];
        crate::par::row_ids_to_row_splits(&new_ids, &mut splits);
        // SAFETY: every id was looked up in `row_ids(axis)`, so lies in `0..nrows`, they
        // never decrease (`first_decrease` above) and there are at most `i32::MAX`
        // (`check_axis_indexes`), so the splits counted from them start at 0, never
        // decrease and imply exactly these ids.
        let mid = unsafe { RowPartition::from_parts_unchecked(splits, Some(new_ids)) };
        if axis == self.num_axes() - 1 {
            let mut layers = self.layers()[..axis - 1].to_vec();
            layers.push(mid);
            return Ok((RaggedShape::from_matching_layers(layers), indexes.to_vec()));
        }
        let runs: Vec<Run> = indexes
            .iter()
            .map(|&i| Run {
                src: 0,
                begin: i as usize,
                end: i as usize + 1,
            })
            .collect();
        let (below, ends) = gather_runs(&[self], axis, runs)?;
        let mut layers = self.layers()[..axis - 1].to_vec();
        layers.push(mid);
        layers.extend(below);
        let elems = if axis == self.num_axes() - 1 {
            indexes.to_vec()
        } else {
            elements_of(&ends)
        };
        Ok((RaggedShape::from_matching_layers(layers), elems))
    }

    /// The new axis-0 layer of `index_axis(0, indexes)` (indexes already checked).
    pub(crate) fn index_axis0_top(&self, indexes: &[i32]) -> Result<RowPartition, Error> {
        let top = self.row_splits(1);
        let len_of = |&i: &i32| {
            if i < 0 {
                0
            } else {
                top[i as usize + 1] - top[i as usize]
            }
        };
        let lengths: Vec<i32> = if go_parallel(indexes.len()) {
            indexes.par_iter().map(len_of).collect()
        } else {
            indexes.iter().map(len_of).collect()
        };
        RowPartition::from_row_lengths(&lengths)
    }

    /// Checks `indexes` for [`RaggedShape::index_axis`] on `axis` (`-1` allowed on axis 0).
    pub(crate) fn check_axis_indexes(&self, axis: usize, indexes: &[i32]) -> Result<(), Error> {
        if axis >= self.num_axes() {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: self.num_axes(),
            });
        }
        offset(indexes.len())?;
        let size = self.tot_size(axis) as i64;
        let min_index = if axis == 0 { -1 } else { 0 };
        let bad = |&i: &i32| i < min_index || i as i64 >= size;
        let found = if go_parallel(indexes.len()) {
            indexes.par_iter().position_first(bad)
        } else {
            indexes.iter().position(bad)
        };
        match found {
            Some(position) => Err(Error::IndexOutOfRange {
                what: "index_axis",
                position,
                index: indexes[position] as i64,
                size: size as usize,
            }),
            None => Ok(()),
        }
    }

    fn index_axis0(&self, indexes: &[i32]) -> Result<(RaggedShape, Vec<i32>), Error> {
        let top = self.row_splits(1);
        let first = self.index_axis0_top(indexes)?;
        if self.num_axes() == 2 {
            let elems = gather_elements_2axis(top, indexes, first.row_splits());
            return Ok((RaggedShape::from_matching_layers(vec![first]), elems));
        }
        let runs: Vec<Run> = indexes
            .iter()
            .filter(|&&i| i >= 0)
            .map(|&i| Run {
                src: 0,
                begin: top[i as usize] as usize,
                end: top[i as usize + 1] as usize,
            })
            .collect();
        let (below, ends) = gather_runs(&[self], 1, runs)?;
        let mut layers = vec![first];
        layers.extend(below);
        Ok((
            RaggedShape::from_matching_layers(layers),
            elements_of(&ends),
        ))
    }

    /// Keeps the items of axis `axis` that `renumbering` keeps (k2's `SubsetRaggedShape`),
    /// returning the new shape and the elements' new2old map. Sizes of earlier axes stay, which
    /// may leave empty lists.
    pub fn subset_ragged_shape(
        &self,
        renumbering: &Renumbering,
        axis: usize,
    ) -> Result<(RaggedShape, Vec<i32>), Error> {
        if axis >= self.num_axes() {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: self.num_axes(),
            });
        }
        if renumbering.num_old_elems() != self.tot_size(axis) {
            return Err(Error::SizeMismatch {
                what: "renumbering.num_old_elems() vs tot_size(axis)",
                expected: self.tot_size(axis),
                got: renumbering.num_old_elems(),
            });
        }
        self.index_axis(axis, renumbering.new2old())
    }

    /// Removes the empty lists of axis `axis < num_axes() - 1` (k2's `RemoveEmptyLists`),
    /// returning the shape and the renumbering of that axis' items.
    pub fn remove_empty_lists(&self, axis: usize) -> Result<(RaggedShape, Renumbering), Error> {
        if axis + 1 >= self.num_axes() {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: self.num_axes() - 1,
            });
        }
        let splits = self.row_splits(axis + 1);
        let keep: Vec<bool> = splits.windows(2).map(|w| w[1] > w[0]).collect();
        let renumbering = Renumbering::from_keep(&keep)?;
        let (shape, _) = self.index_axis(axis, renumbering.new2old())?;
        Ok((shape, renumbering))
    }

    /// Removes axis-0 items that `renumbering` drops; they must be empty (k2's
    /// `RenumberAxis0Simple`). Sizes of the other axes stay the same.
    pub fn renumber_axis0_simple(&self, renumbering: &Renumbering) -> Result<RaggedShape, Error> {
        let top = self.row_splits(1);
        if renumbering.num_old_elems() != self.dim0() {
            return Err(Error::SizeMismatch {
                what: "renumbering.num_old_elems() vs dim0()",
                expected: self.dim0(),
                got: renumbering.num_old_elems(),
            });
        }
        if let Some(i) = (0..self.dim0()).find(|&i| !renumbering.keep()[i] && top[i + 1] > top[i]) {
            return Err(Error::NonEmptyListRemoved {
                index: i,
                size: (top[i + 1] - top[i]) as usize,
            });
        }
        Ok(self.index_axis(0, renumbering.new2old())?.0)
    }

    /// Transposes axes 0 and 1 (k2's `Transpose`), which needs regular axis-1 lists and
    /// `num_axes() > 2`; also returns the values' new2old map.
    pub fn transpose(&self) -> Result<(RaggedShape, Vec<i32>), Error> {
        if self.num_axes() < 3 {
            return Err(Error::TooFewAxes {
                got: self.num_axes(),
                min: 3,
            });
        }
        let d0 = self.dim0();
        let splits = self.row_splits(1);
        let d1 = if d0 == 0 {
            0
        } else {
            (splits[1] - splits[0]) as usize
        };
        if let Some(row) = (0..d0).find(|&r| (splits[r + 1] - splits[r]) as usize != d1) {
            return Err(Error::NotRegular {
                axis: 1,
                row,
                expected: d1,
                got: (splits[row + 1] - splits[row]) as usize,
            });
        }
        let top = RowPartition::from_uniform_row_length(d0, d1)?;
        let runs: Vec<Run> = (0..d1)
            .flat_map(|i| {
                (0..d0).map(move |j| Run {
                    src: 0,
                    begin: j * d1 + i,
                    end: j * d1 + i + 1,
                })
            })
            .collect();
        let (below, ends) = gather_runs(&[self], 1, runs)?;
        let mut layers = vec![top];
        layers.extend(below);
        Ok((
            RaggedShape::from_matching_layers(layers),
            elements_of(&ends),
        ))
    }

    /// Pads axis-1 lists with empty lists at the end to the longest one's size, so that
    /// [`RaggedShape::transpose`] applies (k2's `MakeTransposable`).
    pub fn make_transposable(&self) -> Result<RaggedShape, Error> {
        if self.num_axes() < 3 {
            return Err(Error::TooFewAxes {
                got: self.num_axes(),
                min: 3,
            });
        }
        let width = self.max_size(1);
        let top = self.row_splits(1);
        let new_top = RowPartition::from_uniform_row_length(width, self.dim0())?;
        // Each padded slot is an axis-1 item: real ones keep their lists, padding ones are empty.
        let second = self.row_splits(2);
        let mut lengths = Vec::with_capacity(new_top.nvals());
        for r in 0..self.dim0() {
            let (b, e) = (top[r] as usize, top[r + 1] as usize);
            for k in 0..width {
                lengths.push(if b + k < e {
                    second[b + k + 1] - second[b + k]
                } else {
                    0
                });
            }
        }
        let mut layers = vec![new_top, RowPartition::from_row_lengths(&lengths)?];
        layers.extend_from_slice(&self.layers()[2..]);
        Ok(RaggedShape::from_matching_layers(layers))
    }

    /// Interleaves the axis-0 items of several shapes as `merge_map` dictates (k2's `Merge`):
    /// item `i` of the result is item `merge_map[i] / n` of source `merge_map[i] % n`. Returns
    /// the shape and the elements' merge map.
    pub fn merge(
        srcs: &[&RaggedShape],
        merge_map: &[u32],
    ) -> Result<(RaggedShape, Vec<u32>), Error> {
        if srcs.is_empty() {
            return Err(Error::InvalidArgument {
                what: "number of sources (need at least one)",
                value: 0,
            });
        }
        let n = srcs.len();
        let total: usize = srcs.iter().map(|s| s.dim0()).sum();
        if merge_map.len() != total {
            return Err(Error::SizeMismatch {
                what: "merge_map length vs total dim0 of the sources",
                expected: total,
                got: merge_map.len(),
            });
        }
        for s in srcs {
            if s.num_axes() != srcs[0].num_axes() {
                return Err(Error::SizeMismatch {
                    what: "num_axes of the sources",
                    expected: srcs[0].num_axes(),
                    got: s.num_axes(),
                });
            }
        }
        let mut runs = Vec::with_capacity(merge_map.len());
        for (position, &m) in merge_map.iter().enumerate() {
            let (src, item) = ((m as usize) % n, (m as usize) / n);
            if item >= srcs[src].dim0() {
                return Err(Error::IndexOutOfRange {
                    what: "merge_map item",
                    position,
                    index: item as i64,
                    size: srcs[src].dim0(),
                });
            }
            runs.push(Run {
                src,
                begin: item,
                end: item + 1,
            });
        }
        let (layers, ends) = gather_runs(srcs, 0, runs)?;
        Ok((
            RaggedShape::from_matching_layers(layers),
            merge_map_of(&ends, n)?,
        ))
    }

    /// Splits along axis `axis` into shapes with one fewer axis (k2's `Unstack`), returning
    /// them and, for each, its elements' offsets in `self` (the split map).
    ///
    /// On axis 0 output `i` is item `i`. On another axis, the lists of that axis are padded
    /// (conceptually) with empty lists to the longest size, on the right when `pad_right`,
    /// and output `j` takes the `j`-th of each. A 2-axis source gives outputs with a trivial
    /// top axis (`[ [ x x ] ]`), as in k2.
    pub fn unstack(
        &self,
        axis: usize,
        pad_right: bool,
    ) -> Result<(Vec<RaggedShape>, Vec<Vec<i32>>), Error> {
        let n_axes = self.num_axes();
        if axis >= n_axes {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: n_axes,
            });
        }
        let mut shapes = Vec::new();
        let mut maps = Vec::new();
        if axis == 0 {
            for i in 0..self.dim0() {
                let (s, r) = self.arange(0, i, i + 1)?;
                let s = if n_axes == 2 {
                    crate::build::trivial_shape(r.len())?
                } else {
                    s.remove_axis(0)?
                };
                maps.push((r.start as i32..r.end as i32).collect());
                shapes.push(s);
            }
            return Ok((shapes, maps));
        }
        let parent = self.row_splits(axis);
        let width = self.max_size(axis);
        let n_parents = self.tot_size(axis - 1);
        for j in 0..width {
            // The chosen child on `axis` of every parent item on axis - 1, if it has one.
            let chosen: Vec<Option<usize>> = (0..n_parents)
                .map(|p| {
                    let (b, e) = (parent[p] as usize, parent[p + 1] as usize);
                    let len = e - b;
                    let k = if pad_right {
                        Some(j)
                    } else {
                        (j + len).checked_sub(width)
                    };
                    k.filter(|&k| k < len).map(|k| b + k)
                })
                .collect();
            if axis == n_axes - 1 {
                // Children are elements: parents without one are dropped.
                let keep: Vec<bool> = chosen.iter().map(|c| c.is_some()).collect();
                let elems: Vec<i32> = chosen.iter().flatten().map(|&c| c as i32).collect();
                let shape = if n_axes == 2 {
                    crate::build::trivial_shape(elems.len())?
                } else {
                    let without_last = self.remove_axis(n_axes - 1)?;
                    without_last
                        .subset_ragged_shape(&Renumbering::from_keep(&keep)?, axis - 1)?
                        .0
                };
                shapes.push(shape);
                maps.push(elems);
                continue;
            }
            let below = self.row_splits(axis + 1);
            let lengths: Vec<i32> = chosen
                .iter()
                .map(|c| c.map_or(0, |c| below[c + 1] - below[c]))
                .collect();
            let runs: Vec<Run> = chosen
                .iter()
                .flatten()
                .map(|&c| Run {
                    src: 0,
                    begin: below[c] as usize,
                    end: below[c + 1] as usize,
                })
                .collect();
            let (lower, ends) = gather_runs(&[self], axis + 1, runs)?;
            let mut layers = self.layers()[..axis - 1].to_vec();
            layers.push(RowPartition::from_row_lengths(&lengths)?);
            layers.extend(lower);
            shapes.push(RaggedShape::from_matching_layers(layers));
            maps.push(elements_of(&ends));
        }
        Ok((shapes, maps))
    }

    /// The smallest 2-axis shape covering all `srcs` (k2's `CoveringShape`): row `i` has the
    /// largest size of row `i` among the sources, which must have 2 axes and equal `dim0()`.
    pub fn covering_shape(srcs: &[&RaggedShape]) -> Result<RaggedShape, Error> {
        let Some(first) = srcs.first() else {
            return Err(Error::InvalidArgument {
                what: "number of sources (need at least one)",
                value: 0,
            });
        };
        for s in srcs {
            if s.num_axes() != 2 {
                return Err(Error::SizeMismatch {
                    what: "num_axes of a covering_shape source",
                    expected: 2,
                    got: s.num_axes(),
                });
            }
            if s.dim0() != first.dim0() {
                return Err(Error::SizeMismatch {
                    what: "dim0 of the sources",
                    expected: first.dim0(),
                    got: s.dim0(),
                });
            }
        }
        let lengths: Vec<i32> = (0..first.dim0())
            .map(|i| {
                srcs.iter()
                    .map(|s| s.layer(1).row_length(i) as i32)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        Ok(RaggedShape::from_matching_layers(vec![
            RowPartition::from_row_lengths(&lengths)?,
        ]))
    }

    /// For each element of `covering`, the matching element of `self` or -1 (k2's
    /// `CoveringShapeForwardMap`); both must have 2 axes, the same `dim0()`, and `covering`'s
    /// rows at least as long.
    pub fn covering_shape_forward_map(&self, covering: &RaggedShape) -> Result<Vec<i32>, Error> {
        if self.num_axes() != 2 || covering.num_axes() != 2 || self.dim0() != covering.dim0() {
            return Err(Error::SizeMismatch {
                what: "dim0 of covering vs source (both need 2 axes)",
                expected: self.dim0(),
                got: covering.dim0(),
            });
        }
        let (s, c) = (self.row_splits(1), covering.row_splits(1));
        let mut out = Vec::with_capacity(covering.num_elements());
        for i in 0..self.dim0() {
            let (len, clen) = (s[i + 1] - s[i], c[i + 1] - c[i]);
            if clen < len {
                return Err(Error::SizeMismatch {
                    what: "covering row shorter than source row",
                    expected: len as usize,
                    got: clen as usize,
                });
            }
            out.extend((0..clen).map(|k| if k < len { s[i] + k } else { -1 }));
        }
        Ok(out)
    }

    /// The axis-0 indexes sorted by decreasing number of elements under them, ties in order
    /// (k2's `GetDecreasingSizeOrder`).
    pub fn get_decreasing_size_order(&self) -> Vec<i32> {
        let sizes: Vec<usize> = (0..self.dim0())
            .map(|i| self.element_range(0, i, i + 1).len())
            .collect();
        let mut order: Vec<i32> = (0..self.dim0() as i32).collect();
        order.sort_by(|&a, &b| sizes[b as usize].cmp(&sizes[a as usize]));
        order
    }
}

/// The elements of a 2-axis shape picked row by row; rayon over blocks of rows above the
/// threshold (each block owns a contiguous part of the output).
fn gather_elements_2axis(top: &[i32], indexes: &[i32], new_splits: &[i32]) -> Vec<i32> {
    const BLOCK: usize = 2048;
    let total = new_splits[indexes.len()] as usize;
    let mut out = vec![0i32; total];
    let fill = |(block, out_block): (usize, &mut [i32])| {
        let r0 = block * BLOCK;
        let r1 = (r0 + BLOCK).min(indexes.len());
        let base = new_splits[r0] as usize;
        for row in r0..r1 {
            let i = indexes[row];
            if i >= 0 {
                let b = top[i as usize];
                let (o0, o1) = (
                    new_splits[row] as usize - base,
                    new_splits[row + 1] as usize - base,
                );
                for (k, slot) in out_block[o0..o1].iter_mut().enumerate() {
                    *slot = b + k as i32;
                }
            }
        }
    };
    let mut blocks: Vec<&mut [i32]> = Vec::with_capacity(indexes.len() / BLOCK + 1);
    let mut rest = &mut out[..];
    for r0 in (0..indexes.len()).step_by(BLOCK) {
        let r1 = (r0 + BLOCK).min(indexes.len());
        let (head, tail) = rest.split_at_mut((new_splits[r1] - new_splits[r0]) as usize);
        blocks.push(head);
        rest = tail;
    }
    if go_parallel(total + indexes.len()) {
        blocks.into_par_iter().enumerate().for_each(fill);
    } else {
        blocks.into_iter().enumerate().for_each(fill);
    }
    out
}
