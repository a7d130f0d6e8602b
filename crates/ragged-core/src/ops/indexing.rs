//! Structural operations on `Ragged<T>`: the shape operations of `structure.rs` carried over
//! to the values (gathering them through new2old maps), plus filters and prefixes/suffixes.

use std::cmp::Ordering;
use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::error::{precondition, Error};
use crate::par::go_parallel;
use crate::ragged::Ragged;
use crate::renumbering::Renumbering;
use crate::row_partition::RowPartition;
use crate::shape::RaggedShape;

/// The arrays [`Ragged::unstack`] returns, with their split maps.
pub type Unstacked<T> = (Vec<Ragged<T>>, Vec<Vec<i32>>);

pub(crate) use super::gather::gather_values;

/// How many rows ahead [`gather_rows`] prefetches a source row (and twice that for the row's
/// split): the rows are picked at random, so each one is a cache miss whose latency the
/// prefetches overlap.
const PREFETCH_ROWS: usize = 16;

/// Hints the CPU to bring the cache line of `p` in; never faults, whatever the address.
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect and does not fault on any address;
    // SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The rows `indexes` (`-1` = empty) of a 2-axis array with `splits` and `values`, appended,
/// where `new_splits` is the exclusive sum of the picked rows' lengths. The output is written
/// once (no fill beforehand), in blocks of rows in parallel above the threshold.
///
/// `splits`, `values` and `indexes` are read with checked indexing: a row that does not fit
/// panics, whatever they hold.
///
/// # Safety
///
/// `new_splits` must be valid row splits (start at 0, never decrease) with
/// `indexes.len() + 1` entries: the output's length is taken from its last entry, and
/// only consecutive rows starting at 0 write every slot below it.
pub(crate) unsafe fn gather_rows<T: Clone + Send + Sync>(
    splits: &[i32],
    values: &[T],
    indexes: &[i32],
    new_splits: &[i32],
) -> Vec<T> {
    debug_assert_eq!(new_splits.len(), indexes.len() + 1);
    let total = new_splits[indexes.len()] as usize;
    let mut out: Vec<T> = Vec::with_capacity(total);
    // Fills `block` (outputs `new_splits[r0]..new_splits[r1]`) with rows `r0..r1`.
    let fill = |r0: usize, r1: usize, block: &mut [MaybeUninit<T>]| {
        let base = new_splits[r0] as usize;
        let start_of = |i: i32| {
            if i < 0 {
                0
            } else {
                splits[i as usize] as usize
            }
        };
        for row in r0..r1 {
            if let Some(&i) = indexes.get(row + 2 * PREFETCH_ROWS) {
                if i >= 0 {
                    prefetch(&splits[i as usize]);
                }
            }
            if let Some(&i) = indexes.get(row + PREFETCH_ROWS) {
                if i >= 0 {
                    let (b, e) = (splits[i as usize] as usize, splits[i as usize + 1] as usize);
                    if e > b {
                        prefetch(values.as_ptr().wrapping_add(b));
                        prefetch(values.as_ptr().wrapping_add(e - 1));
                    }
                }
            }
            let (o0, o1) = (
                new_splits[row] as usize - base,
                new_splits[row + 1] as usize - base,
            );
            let b = start_of(indexes[row]);
            let src = &values[b..b + (o1 - o0)];
            for (slot, v) in block[o0..o1].iter_mut().zip(src) {
                slot.write(v.clone());
            }
        }
    };
    let spare = &mut out.spare_capacity_mut()[..total];
    if total > 0 && go_parallel(total + indexes.len()) {
        // One output buffer, cut into blocks of rows that rayon fills independently.
        const BLOCK: usize = 2048;
        let mut blocks = Vec::with_capacity(indexes.len() / BLOCK + 1);
        let mut rest = spare;
        for r0 in (0..indexes.len()).step_by(BLOCK) {
            let r1 = (r0 + BLOCK).min(indexes.len());
            let (head, tail) = rest.split_at_mut((new_splits[r1] - new_splits[r0]) as usize);
            blocks.push((r0, r1, head));
            rest = tail;
        }
        blocks
            .into_par_iter()
            .for_each(|(r0, r1, block)| fill(r0, r1, block));
    } else {
        fill(0, indexes.len(), spare);
    }
    // SAFETY: `new_splits` starts at 0 and never decreases (the caller's contract), so
    // the blocks partition `0..total` and row `r` writes exactly the slots
    // `new_splits[r]..new_splits[r + 1]` of its block (by checked slicing, from a source
    // row of that length, or it panics), so every slot below `total` has been initialised.
    // (Should a `clone` or a check panic, the length stays 0 and the clones leak.)
    unsafe { out.set_len(total) };
    out
}

/// `f(value)` for every value, rayon above the threshold.
fn keep_mask<T: Sync>(values: &[T], f: impl Fn(&T) -> bool + Sync + Send) -> Vec<bool> {
    if go_parallel(values.len()) {
        values.par_iter().map(f).collect()
    } else {
        values.iter().map(f).collect()
    }
}

/// Keeps the values where `keep` is true, with the shape's last axis subset accordingly.
fn filter_last_axis<T: Clone + Send + Sync>(src: &Ragged<T>, keep: &[bool]) -> Ragged<T> {
    let renumbering =
        Renumbering::from_keep(keep).unwrap_or_else(|e| precondition(format!("filter: {e}")));
    let (shape, new2old) = src
        .shape()
        .subset_ragged_shape(&renumbering, src.num_axes() - 1)
        .unwrap_or_else(|e| precondition(format!("filter: {e}")));
    Ragged::from_matching_parts(shape, gather_values(src.values(), &new2old))
}

impl<T: Clone + Send + Sync> Ragged<T> {
    /// Indexes axis `axis` with `indexes` (k2's `Index(src, axis, indexes)`): the result has
    /// `tot_size(axis) == indexes.len()`. On axis 0, `-1` gives an empty list; on other axes
    /// the indexes must keep the order of the axes above. [`Ragged::index_axis_with_map`]
    /// also returns the values' new2old map.
    pub fn index_axis(&self, axis: usize, indexes: &[i32]) -> Result<Ragged<T>, Error> {
        if axis != 0 || self.num_axes() != 2 {
            return self.index_axis_with_map(axis, indexes).map(|r| r.0);
        }
        // Rows of a 2-axis array are contiguous runs of values: copy them row by row.
        self.shape().check_axis_indexes(0, indexes)?;
        let top = self.shape().index_axis0_top(indexes)?;
        // SAFETY: `top` is a `RowPartition` with one row per index, so its splits start at
        // 0, never decrease and have `indexes.len() + 1` entries.
        let out =
            unsafe { gather_rows(self.row_splits(1), self.values(), indexes, top.row_splits()) };
        Ok(Ragged::from_matching_parts(
            RaggedShape::from_matching_layers(vec![top]),
            out,
        ))
    }

    /// [`Ragged::index_axis`] and the values' new2old map
    /// (k2's `Index(src, axis, indexes, &value_indexes)`): `result.values[k] == values[new2old[k]]`.
    pub fn index_axis_with_map(
        &self,
        axis: usize,
        indexes: &[i32],
    ) -> Result<(Ragged<T>, Vec<i32>), Error> {
        let (shape, new2old) = self.shape().index_axis(axis, indexes)?;
        let values = gather_values(self.values(), &new2old);
        Ok((Ragged::from_matching_parts(shape, values), new2old))
    }

    /// Indexes axis 0 with a ragged array of indexes (k2's `Index(src, indexes, remove_axis)`):
    /// the result has the shape of `indexes` on top of the picked sub-arrays. With
    /// `remove_axis` the axis between them is removed, appending the picked lists, e.g.
    /// `[[10 11] [12 13]]` indexed by `[[0 1]]` gives `[[10 11 12 13]]`.
    pub fn index_ragged(
        &self,
        indexes: &Ragged<i32>,
        remove_axis: bool,
    ) -> Result<Ragged<T>, Error> {
        let (picked, new2old) = self.shape().index_axis(0, indexes.values())?;
        if let Some(p) = indexes.values().iter().position(|&i| i < 0) {
            return Err(Error::IndexOutOfRange {
                what: "index_ragged",
                position: p,
                index: indexes.values()[p] as i64,
                size: self.dim0(),
            });
        }
        let shape = crate::build::compose_ragged_shapes(indexes.shape(), &picked)?;
        let shape = if remove_axis {
            shape.remove_axis(indexes.num_axes() - 1)?
        } else {
            shape
        };
        Ok(Ragged::from_matching_parts(
            shape,
            gather_values(self.values(), &new2old),
        ))
    }

    /// `src[indexes]` with the shape of `indexes` (k2's `Index(Array1, Ragged<int32>)`).
    pub fn from_index(src: &[T], indexes: &Ragged<i32>) -> Result<Ragged<T>, Error> {
        if let Some(p) = indexes
            .values()
            .iter()
            .position(|&i| i < 0 || i as usize >= src.len())
        {
            return Err(Error::IndexOutOfRange {
                what: "from_index",
                position: p,
                index: indexes.values()[p] as i64,
                size: src.len(),
            });
        }
        Ok(Ragged::from_matching_parts(
            indexes.shape().clone(),
            gather_values(src, indexes.values()),
        ))
    }

    /// `src[indexes]` with the shape of `indexes`, where an index of `-1` gives `default_value`
    /// (k2's `Index(src, indexes, default_value)`).
    pub fn from_index_or(
        src: &[T],
        indexes: &Ragged<i32>,
        default_value: T,
    ) -> Result<Ragged<T>, Error> {
        if let Some(p) = indexes
            .values()
            .iter()
            .position(|&i| i < -1 || i as i64 >= src.len() as i64)
        {
            return Err(Error::IndexOutOfRange {
                what: "from_index_or",
                position: p,
                index: indexes.values()[p] as i64,
                size: src.len(),
            });
        }
        let values = indexes
            .values()
            .iter()
            .map(|&i| {
                if i < 0 {
                    default_value.clone()
                } else {
                    src[i as usize].clone()
                }
            })
            .collect();
        Ok(Ragged::from_matching_parts(indexes.shape().clone(), values))
    }

    /// The first `n` items of axis 0 (k2's `Prefix`); the shape is shared, the values copied.
    #[track_caller]
    pub fn prefix(&self, n: usize) -> Ragged<T> {
        let shape = self.shape().prefix(n);
        let k = shape.num_elements();
        Ragged::from_matching_parts(shape, self.values()[..k].to_vec())
    }

    /// Items `begin..end` of axis `axis` and everything under them (k2's `Arange`).
    pub fn arange(&self, axis: usize, begin: usize, end: usize) -> Result<Ragged<T>, Error> {
        let (shape, range) = self.shape().arange(axis, begin, end)?;
        Ok(Ragged::from_matching_parts(
            shape,
            self.values()[range].to_vec(),
        ))
    }

    /// Keeps the items of axis `axis` that `renumbering` keeps (k2's `SubsetRagged`);
    /// returns the result and the values' new2old map.
    pub fn subset_ragged(
        &self,
        renumbering: &Renumbering,
        axis: usize,
    ) -> Result<(Ragged<T>, Vec<i32>), Error> {
        let (shape, new2old) = self.shape().subset_ragged_shape(renumbering, axis)?;
        Ok((
            Ragged::from_matching_parts(shape, gather_values(self.values(), &new2old)),
            new2old,
        ))
    }

    /// Transposes axes 0 and 1, which must be regular (k2's `Transpose`); returns the result
    /// and the values' new2old map.
    pub fn transpose(&self) -> Result<(Ragged<T>, Vec<i32>), Error> {
        let (shape, new2old) = self.shape().transpose()?;
        Ok((
            Ragged::from_matching_parts(shape, gather_values(self.values(), &new2old)),
            new2old,
        ))
    }

    /// Interleaves the axis-0 items of several arrays (k2's `Merge`); see [`RaggedShape::merge`].
    pub fn merge(srcs: &[&Ragged<T>], merge_map: &[u32]) -> Result<(Ragged<T>, Vec<u32>), Error> {
        let shapes: Vec<&RaggedShape> = srcs.iter().map(|r| r.shape()).collect();
        let (shape, mm) = RaggedShape::merge(&shapes, merge_map)?;
        let n = srcs.len() as u32;
        let values = mm
            .iter()
            .map(|&m| srcs[(m % n) as usize].values()[(m / n) as usize].clone())
            .collect();
        Ok((Ragged::from_matching_parts(shape, values), mm))
    }

    /// Splits along `axis` (k2's `Unstack`); see [`RaggedShape::unstack`]. Returns the arrays
    /// and their split maps (offsets of their values in `self`).
    pub fn unstack(&self, axis: usize, pad_right: bool) -> Result<Unstacked<T>, Error> {
        let (shapes, maps) = self.shape().unstack(axis, pad_right)?;
        let out = shapes
            .into_iter()
            .zip(&maps)
            .map(|(s, m)| Ragged::from_matching_parts(s, gather_values(self.values(), m)))
            .collect();
        Ok((out, maps))
    }

    /// Removes the values `<= cutoff`, keeping every list (k2's `RemoveValuesLeq`).
    pub fn remove_values_leq(&self, cutoff: T) -> Ragged<T>
    where
        T: PartialOrd,
    {
        let keep = keep_mask(self.values(), |v| {
            !matches!(
                v.partial_cmp(&cutoff),
                Some(Ordering::Less | Ordering::Equal)
            )
        });
        filter_last_axis(self, &keep)
    }

    /// Removes the values equal to `target`, keeping every list (k2's `RemoveValuesEq`).
    pub fn remove_values_eq(&self, target: T) -> Ragged<T>
    where
        T: PartialEq,
    {
        let keep = keep_mask(self.values(), |v| *v != target);
        filter_last_axis(self, &keep)
    }

    /// Keeps the values whose entry in the jagged boolean `mask` (same shape) is true
    /// (TF's `tf.ragged.boolean_mask`, Awkward's `a[mask]`).
    pub fn filter_by_mask(&self, mask: &Ragged<bool>) -> Result<Ragged<T>, Error> {
        if mask.shape() != self.shape() {
            return Err(Error::SizeMismatch {
                what: "mask shape vs array shape (element count)",
                expected: self.num_elements(),
                got: mask.num_elements(),
            });
        }
        Ok(filter_last_axis(self, mask.values()))
    }

    /// Appends one value to each last-axis sublist (k2's `AddSuffixToRagged`);
    /// `suffix.len()` must equal the number of sublists.
    pub fn add_suffix(&self, suffix: &[T]) -> Result<Ragged<T>, Error> {
        self.add_one(suffix, false)
    }

    /// Prepends one value to each last-axis sublist (k2's `AddPrefixToRagged`).
    pub fn add_prefix(&self, prefix: &[T]) -> Result<Ragged<T>, Error> {
        self.add_one(prefix, true)
    }

    fn add_one(&self, extra: &[T], front: bool) -> Result<Ragged<T>, Error> {
        let last = self.num_axes() - 1;
        let splits = self.row_splits(last);
        if extra.len() != splits.len() - 1 {
            return Err(Error::SizeMismatch {
                what: "one value per last-axis sublist",
                expected: splits.len() - 1,
                got: extra.len(),
            });
        }
        let shape = self.shape().change_sublist_size(1)?;
        let mut values = Vec::with_capacity(self.num_elements() + extra.len());
        for (row, w) in splits.windows(2).enumerate() {
            if front {
                values.push(extra[row].clone());
            }
            values.extend_from_slice(&self.values()[w[0] as usize..w[1] as usize]);
            if !front {
                values.push(extra[row].clone());
            }
        }
        Ok(Ragged::from_matching_parts(shape, values))
    }
}

impl<T> Ragged<T> {
    /// Removes axis `axis < num_axes() - 1` (k2's `Ragged::RemoveAxis`); values are kept as they are.
    pub fn remove_axis(self, axis: usize) -> Result<Ragged<T>, Error> {
        if axis + 1 >= self.num_axes() {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: self.num_axes() - 1,
            });
        }
        let (shape, values) = self.into_parts();
        Ok(Ragged::from_matching_parts(
            shape.remove_axis(axis)?,
            values,
        ))
    }

    /// Inserts an axis of size-1 lists at `axis <= num_axes() - 1` (k2's `Unsqueeze`).
    pub fn unsqueeze(self, axis: usize) -> Result<Ragged<T>, Error> {
        if axis >= self.num_axes() {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: self.num_axes(),
            });
        }
        let (shape, values) = self.into_parts();
        Ok(Ragged::from_matching_parts(shape.unsqueeze(axis)?, values))
    }

    /// Removes empty lists on axis `axis < num_axes() - 1` (k2's `RemoveEmptyLists`);
    /// values are unchanged. Returns the renumbering of that axis.
    pub fn remove_empty_lists(self, axis: usize) -> Result<(Ragged<T>, Renumbering), Error> {
        let (shape, renumbering) = self.shape().remove_empty_lists(axis)?;
        let (_, values) = self.into_parts();
        Ok((Ragged::from_matching_parts(shape, values), renumbering))
    }

    /// Removes axis-0 items dropped by `renumbering`, which must be empty (k2's `RenumberAxis0Simple`).
    pub fn renumber_axis0_simple(self, renumbering: &Renumbering) -> Result<Ragged<T>, Error> {
        let shape = self.shape().renumber_axis0_simple(renumbering)?;
        let (_, values) = self.into_parts();
        Ok(Ragged::from_matching_parts(shape, values))
    }
}

/// The order that sorts the values of `src` by column (value) in `0..num_cols`, keeping the
/// original order among equal values (k2's `GetTransposeReordering`): `src.values[ans]` is sorted.
pub fn get_transpose_reordering(src: &Ragged<i32>, num_cols: usize) -> Result<Vec<i32>, Error> {
    let mut counts = vec![0i32; num_cols + 1];
    for (position, &v) in src.values().iter().enumerate() {
        if v < 0 || v as usize >= num_cols {
            return Err(Error::IndexOutOfRange {
                what: "get_transpose_reordering column",
                position,
                index: v as i64,
                size: num_cols,
            });
        }
        counts[v as usize + 1] += 1;
    }
    for c in 1..=num_cols {
        counts[c] += counts[c - 1];
    }
    let mut order = vec![0i32; src.num_elements()];
    for (i, &v) in src.values().iter().enumerate() {
        order[counts[v as usize] as usize] = i as i32;
        counts[v as usize] += 1;
    }
    Ok(order)
}

/// How often each element of `ans_shape` occurs in the same row of `src` (k2's
/// `GetCountsPartitioned`): both have 2 axes and the same `dim0()`, and every value `e` in
/// row `i` of `src` must be an offset of row `i` of `ans_shape`. The answer has `ans_shape`.
pub fn get_counts_partitioned(
    src: &Ragged<i32>,
    ans_shape: &RaggedShape,
) -> Result<Ragged<i32>, Error> {
    if src.num_axes() != 2 || ans_shape.num_axes() != 2 {
        return Err(Error::SizeMismatch {
            what: "num_axes of get_counts_partitioned inputs",
            expected: 2,
            got: src.num_axes().max(ans_shape.num_axes()),
        });
    }
    if src.dim0() != ans_shape.dim0() {
        return Err(Error::SizeMismatch {
            what: "dim0 of src vs ans_shape",
            expected: ans_shape.dim0(),
            got: src.dim0(),
        });
    }
    let mut counts = vec![0i32; ans_shape.num_elements()];
    let (s, a) = (src.row_splits(1), ans_shape.row_splits(1));
    for i in 0..src.dim0() {
        for position in s[i] as usize..s[i + 1] as usize {
            let e = src.values()[position];
            if e < a[i] || e >= a[i + 1] {
                return Err(Error::IndexOutOfRange {
                    what: "get_counts_partitioned value outside its row",
                    position,
                    index: e as i64,
                    size: ans_shape.num_elements(),
                });
            }
            counts[e as usize] += 1;
        }
    }
    Ok(Ragged::from_matching_parts(ans_shape.clone(), counts))
}

/// A 2-axis shape from row lengths: a convenience for building ragged arrays from dense data.
pub(crate) fn shape_from_lengths(lengths: &[i32]) -> Result<RaggedShape, Error> {
    Ok(RaggedShape::from_matching_layers(vec![
        RowPartition::from_row_lengths(lengths)?,
    ]))
}
