//! `RowPartition`: one layer of a ragged shape (k2's `RaggedShapeLayer`, TensorFlow's
//! `RowPartition`): `row_splits`, and `row_ids` computed lazily and cached.

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::error::{to_offset, Error};
use crate::par;

struct Inner {
    /// A `Vec` (not a boxed slice) so that Arrow's buffers can be taken over, and handed
    /// over, without copying (see `arrow.rs`). Never mutated once shared.
    row_splits: Vec<i32>,
    row_ids: OnceLock<Box<[i32]>>,
    declared_uniform: Option<usize>,
}

/// One layer of a ragged shape: how `nvals` elements are split into `nrows` rows.
///
/// **Invariant:** `row_splits` is non-empty, starts at 0 and never decreases; `row_ids`, once
/// computed, satisfies `row_splits[row_ids[i]] <= i < row_splits[row_ids[i] + 1]`.
///
/// Cloning shares the data (an `Arc`), including the cached `row_ids`.
///
/// ```
/// use ragged_core::RowPartition;
/// let p = RowPartition::from_row_lengths(&[2, 0, 3]).unwrap();
/// assert_eq!(p.row_splits(), &[0, 2, 2, 5]);
/// assert_eq!(p.row_ids(), &[0, 0, 2, 2, 2]);
/// assert_eq!(p.nrows(), 3);
/// assert_eq!(p.nvals(), 5);
/// ```
#[derive(Clone)]
pub struct RowPartition {
    inner: Arc<Inner>,
    /// The rows visible through this handle: a prefix of the stored rows (see `prefix`).
    nrows: usize,
}

impl RowPartition {
    /// A partition from its `row_splits` (k2's `row_splits`, TF's `from_row_splits`).
    pub fn from_row_splits(row_splits: Vec<i32>) -> Result<Self, Error> {
        check_row_splits(&row_splits)?;
        // SAFETY: `check_row_splits` just passed.
        Ok(unsafe { Self::from_row_splits_unchecked(row_splits) })
    }

    /// A partition from the length of each row (TF's `from_row_lengths`).
    pub fn from_row_lengths(row_lengths: &[i32]) -> Result<Self, Error> {
        to_offset(row_lengths.len(), "the number of rows")?;
        let row_splits = par::exclusive_sum_lengths(row_lengths)?;
        // SAFETY: the exclusive sum from 0 of lengths that `exclusive_sum_lengths` checked
        // to be non-negative, with the total checked against `i32::MAX`: it starts at 0 and
        // never decreases, and its rows fit in `i32` (checked just above).
        Ok(unsafe { Self::from_row_splits_unchecked(row_splits) })
    }

    /// A partition from the row of each element (k2's `row_ids`, TF's `value_rowids`);
    /// `nrows` may exceed `row_ids.last() + 1` to add trailing empty rows.
    pub fn from_value_rowids(row_ids: Vec<i32>, nrows: usize) -> Result<Self, Error> {
        to_offset(row_ids.len(), "the number of elements")?;
        to_offset(nrows, "the number of rows")?;
        check_row_ids(&row_ids, nrows)?;
        let mut row_splits = vec![0i32; nrows + 1];
        par::row_ids_to_row_splits(&row_ids, &mut row_splits);
        // SAFETY: `check_row_ids` passed (every id in `0..nrows`, never decreasing) and both
        // counts fit in `i32` (checked above), so the splits `row_ids_to_row_splits` counts
        // from them start at 0, never decrease and imply exactly these ids.
        Ok(unsafe { Self::from_parts_unchecked(row_splits, Some(row_ids)) })
    }

    /// A regular partition: `nrows` rows of `len` elements each (TF's `from_uniform_row_length`).
    #[allow(
        clippy::missing_panics_doc,
        reason = "the partition was built just above, so nothing shares it"
    )]
    pub fn from_uniform_row_length(len: usize, nrows: usize) -> Result<Self, Error> {
        let total = (len as u128) * (nrows as u128);
        if total > i32::MAX as u128 || nrows > i32::MAX as usize {
            return Err(Error::Overflow {
                what: "the number of elements of a regular partition",
                value: total.min(u64::MAX as u128) as u64,
            });
        }
        let row_splits: Vec<i32> = (0..=nrows).map(|r| (r * len) as i32).collect();
        // SAFETY: `r * len` for `r` in `0..=nrows` starts at 0, never decreases and stays at
        // or below `nrows * len <= i32::MAX` (checked above, as is `nrows`), so no cast wraps.
        let mut p = unsafe { Self::from_row_splits_unchecked(row_splits) };
        p.nrows = nrows;
        Arc::get_mut(&mut p.inner)
            .expect("freshly built partition is unshared")
            .declared_uniform = Some(len);
        Ok(p)
    }

    /// A partition from `row_splits` the caller has already validated.
    ///
    /// # Safety
    ///
    /// `row_splits` must be non-empty, start at 0 and never decrease. `unsafe` code relies
    /// on it: the Arrow offsets of `to_arrow_offsets` are built with
    /// `OffsetBuffer::new_unchecked`, here and in the crates above, which read a
    /// `RowPartition`'s splits as valid offsets. (The crate's constructors also keep the
    /// number of rows within `i32::MAX`, as [`check_row_splits`] does; no `unsafe` code
    /// relies on that.)
    pub(crate) unsafe fn from_row_splits_unchecked(row_splits: Vec<i32>) -> Self {
        // SAFETY: the caller's contract; no row ids.
        unsafe { Self::from_parts_unchecked(row_splits, None) }
    }

    /// A partition from validated `row_splits` and, optionally, matching `row_ids`.
    ///
    /// # Safety
    ///
    /// As [`RowPartition::from_row_splits_unchecked`] for `row_splits`; `row_ids`, when
    /// given, must be exactly the row ids they imply (what [`check_row_ids_against_splits`]
    /// checks).
    pub(crate) unsafe fn from_parts_unchecked(
        row_splits: Vec<i32>,
        row_ids: Option<Vec<i32>>,
    ) -> Self {
        debug_assert!(check_row_splits(&row_splits).is_ok());
        let cell = OnceLock::new();
        if let Some(ids) = row_ids {
            debug_assert!(check_row_ids_against_splits(&row_splits, &ids).is_ok());
            let _ = cell.set(ids.into_boxed_slice());
        }
        Self {
            nrows: row_splits.len() - 1,
            inner: Arc::new(Inner {
                row_splits,
                row_ids: cell,
                declared_uniform: None,
            }),
        }
    }

    /// The `nrows + 1` row splits: row `i` holds elements `row_splits[i]..row_splits[i + 1]`.
    #[inline]
    pub fn row_splits(&self) -> &[i32] {
        &self.inner.row_splits[..=self.nrows]
    }

    /// The row of each element (`nvals` entries), computed on first use and cached.
    #[allow(
        clippy::missing_panics_doc,
        reason = "row splits are never empty (the type's invariant)"
    )]
    pub fn row_ids(&self) -> &[i32] {
        let all = self.inner.row_ids.get_or_init(|| {
            let splits = &self.inner.row_splits;
            let mut ids = vec![0i32; *splits.last().expect("row_splits is never empty") as usize];
            par::row_splits_to_row_ids(splits, &mut ids);
            ids.into_boxed_slice()
        });
        &all[..self.nvals()]
    }

    /// Writes the row ids into `out` (`nvals()` entries) without caching them; for callers
    /// that own the output buffer (k2's `RowSplitsToRowIds` on a valid partition).
    #[track_caller]
    pub fn write_row_ids(&self, out: &mut [i32]) {
        if out.len() != self.nvals() {
            crate::error::precondition(format!(
                "write_row_ids: output has {} entries, the partition {} elements",
                out.len(),
                self.nvals()
            ));
        }
        par::row_splits_to_row_ids(self.row_splits(), out);
    }

    /// TensorFlow's name for [`RowPartition::row_ids`].
    pub fn value_rowids(&self) -> &[i32] {
        self.row_ids()
    }

    /// The cached `row_ids`, if they have been computed.
    pub fn row_ids_if_cached(&self) -> Option<&[i32]> {
        self.inner.row_ids.get().map(|b| &b[..self.nvals()])
    }

    /// The number of rows.
    #[inline]
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// The number of elements (k2's cached tot size): `row_splits.last()`.
    #[inline]
    pub fn nvals(&self) -> usize {
        self.inner.row_splits[self.nrows] as usize
    }

    /// The first `n` rows, sharing storage (and cached `row_ids`) with `self`; panics when
    /// `n > nrows()`.
    #[track_caller]
    pub fn prefix(&self, n: usize) -> RowPartition {
        if n > self.nrows {
            crate::error::index_out_of_bounds("prefix length", n, self.nrows + 1);
        }
        RowPartition {
            inner: Arc::clone(&self.inner),
            nrows: n,
        }
    }

    /// The length of each row.
    pub fn row_lengths(&self) -> Vec<i32> {
        self.row_splits().windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// The length of row `row`; panics when `row >= nrows()`.
    #[inline]
    #[track_caller]
    pub fn row_length(&self, row: usize) -> usize {
        if row >= self.nrows() {
            crate::error::index_out_of_bounds("row", row, self.nrows());
        }
        let s = self.row_splits();
        (s[row + 1] - s[row]) as usize
    }

    /// The start offset of each row (`row_splits[..nrows]`).
    pub fn row_starts(&self) -> &[i32] {
        &self.row_splits()[..self.nrows()]
    }

    /// The end offset of each row (`row_splits[1..]`).
    pub fn row_limits(&self) -> &[i32] {
        &self.row_splits()[1..]
    }

    /// `Some(len)` when every row has length `len`.
    ///
    /// With zero rows there is no length to observe: the answer is the `len` given to
    /// [`RowPartition::from_uniform_row_length`] if the partition was built that way, else `None`.
    pub fn uniform_row_length(&self) -> Option<usize> {
        if let Some(len) = self.inner.declared_uniform {
            return Some(len);
        }
        let s = self.row_splits();
        if s.len() < 2 {
            return None;
        }
        let len = s[1] - s[0];
        s.windows(2)
            .all(|w| w[1] - w[0] == len)
            .then_some(len as usize)
    }

    /// The longest row length (0 with no rows).
    pub fn max_row_length(&self) -> usize {
        self.row_splits()
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0)
    }

    /// Checks every invariant, including cached `row_ids` (k2's `Check()` for one layer).
    pub fn validate(&self) -> Result<(), Error> {
        check_row_splits(self.row_splits())?;
        if let Some(ids) = self.row_ids_if_cached() {
            check_row_ids_against_splits(self.row_splits(), ids)?;
        }
        Ok(())
    }

    /// True when both share the same storage (a clone of one another).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner) && self.nrows == other.nrows
    }

    /// True when both handles use the same storage (possibly different prefixes of it).
    pub fn shares_storage_with(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// The largest element count a partition holds (`row_splits` are `i32`).
const MAX_ELEMENTS: u64 = i32::MAX as u64;

impl RowPartition {
    /// The rows in `ranges` (each `(start, end)` a run of rows of this partition), one
    /// after another, as a new partition, and the runs of elements those rows cover (in the
    /// same order, adjacent runs merged). This is one level of a gather along the outer
    /// dimension (TensorFlow's `tf.gather` of a `RowPartition`, k2's `Index` on axis 0
    /// with runs of indexes): feeding the element runs to the next partition down selects
    /// the same rows there. The new `row_splits` are built in one pass and not checked
    /// again (they start at 0 and never decrease by construction); a partition built with
    /// [`RowPartition::from_uniform_row_length`] gives a uniform one.
    ///
    /// Fails when the selected rows hold more than `i32::MAX` elements (a row selected
    /// many times). Panics when a run is out of range or has `start > end`.
    pub fn select_row_ranges(
        &self,
        ranges: &[(usize, usize)],
    ) -> Result<(RowPartition, Vec<(usize, usize)>), Error> {
        let splits = self.row_splits();
        let mut n_rows = 0usize;
        for &(start, end) in ranges {
            if start > end || end > self.nrows {
                select_out_of_bounds(start, end, self.nrows);
            }
            n_rows += end - start;
        }
        to_offset(n_rows, "the number of rows")?;
        let mut out: Vec<i32> = Vec::with_capacity(n_rows + 1);
        out.push(0);
        let mut runs = RunWriter::with_capacity(ranges.len());
        // `total` grows by row lengths (each at most `i32::MAX`), once per selected row, so
        // it fits in a `u64`; it is checked against `i32::MAX` once, at the end, and the
        // `as i32` casts below wrap only when that check fails and the splits are dropped.
        let mut total: u64 = 0;
        for &(start, end) in ranges {
            let first = splits[start];
            let last = splits[end];
            if end == start + 1 {
                total += (last - first) as u64;
                out.push(total as i32);
            } else {
                let base = total as i64 - i64::from(first);
                out.extend(
                    splits[start + 1..=end]
                        .iter()
                        .map(|&s| (base + i64::from(s)) as i32),
                );
                total += (last - first) as u64;
            }
            runs.push(first as usize, last as usize);
        }
        let element_runs = runs.finish();
        if total > MAX_ELEMENTS {
            return Err(Error::Overflow {
                what: "the number of elements of the selected rows",
                value: total,
            });
        }
        // SAFETY: `out` starts at 0, and each run appends its rows' splits shifted to start
        // at the running `total` (itself a sum of non-negative row lengths of this valid
        // partition), so it never decreases; `total <= i32::MAX` was checked just above,
        // so no cast wrapped, and `n_rows` was checked by `to_offset`.
        let mut selected = unsafe { Self::from_row_splits_unchecked(out) };
        if let Some(len) = self.uniform_row_length() {
            selected.declare_uniform(len);
        }
        Ok((selected, element_runs))
    }

    /// The rows of every partition in `parts`, one after another (TensorFlow's `tf.concat`
    /// of row partitions, one layer of k2's `Cat` on axis 0): each part's `row_splits`
    /// shifted by the elements before it, in one pass (in parallel tasks when large, see
    /// [`crate::splice_row_splits`]), not checked again. The result is
    /// uniform when every part reports the same [`RowPartition::uniform_row_length`].
    ///
    /// Fails when the parts hold more than `i32::MAX` elements or rows in total.
    pub fn concat(parts: &[&RowPartition]) -> Result<RowPartition, Error> {
        let n_rows: usize = parts.iter().map(|p| p.nrows).sum();
        to_offset(n_rows, "the number of rows")?;
        let n_elements: u64 = parts.iter().map(|p| p.nvals() as u64).sum();
        if n_elements > MAX_ELEMENTS {
            return Err(Error::Overflow {
                what: "the number of elements of the concatenated partitions",
                value: n_elements,
            });
        }
        let splits: Vec<&[i32]> = parts.iter().map(|p| p.row_splits()).collect();
        let out = crate::append::splice_row_splits(&splits)?;
        let uniform = match parts.first() {
            Some(first) => first.uniform_row_length().filter(|&len| {
                parts[1..]
                    .iter()
                    .all(|p| p.uniform_row_length() == Some(len))
            }),
            None => None,
        };
        // SAFETY: `splice_row_splits` of valid partitions' splits starts at 0, continues
        // each part where the one before ended and checks the end against `i32::MAX`, so it
        // never decreases; the number of rows was checked by `to_offset` above.
        let mut joined = unsafe { Self::from_row_splits_unchecked(out) };
        if let Some(len) = uniform {
            joined.declare_uniform(len);
        }
        Ok(joined)
    }

    /// Marks a freshly built (unshared) partition whose rows all have length `len` as
    /// uniform, so that it keeps saying so with zero rows.
    fn declare_uniform(&mut self, len: usize) {
        debug_assert!(self
            .row_splits()
            .windows(2)
            .all(|w| (w[1] - w[0]) as usize == len));
        Arc::get_mut(&mut self.inner)
            .expect("freshly built partition is unshared")
            .declared_uniform = Some(len);
    }
}

/// The element runs of a selection, built without a branch on each run's length: a run
/// is written into the next free slot whether or not it is kept, and the count of kept
/// runs moves on only for a run that is not empty and does not continue the last one
/// (which it extends instead). A gather of random rows has a quarter of empty rows or
/// more, and a branch on each one was the most mispredicted in the loop.
///
/// **Invariant:** `slots[..kept]` are initialised, each slot is written before `kept`
/// moves past it, and `kept <= slots.capacity()`.
struct RunWriter {
    slots: Vec<(usize, usize)>,
    kept: usize,
    /// The last kept run (`usize::MAX` ends while there is none, matching no start).
    last: (usize, usize),
}

impl RunWriter {
    fn with_capacity(n: usize) -> RunWriter {
        RunWriter {
            slots: Vec::with_capacity(n),
            kept: 0,
            last: (usize::MAX, usize::MAX),
        }
    }

    /// Appends the run `first..last` (`first <= last`), merged into the last kept run when
    /// it starts where that one ends, dropped when empty.
    #[inline]
    fn push(&mut self, first: usize, last: usize) {
        let merge = first == self.last.1;
        let slot = if merge { self.kept - 1 } else { self.kept };
        let start = if merge { self.last.0 } else { first };
        // `slot <= kept`, and `kept` never exceeds the number of runs pushed, which the
        // capacity covers; `get_mut` keeps a longer input from writing past it.
        match self.slots.spare_capacity_mut().get_mut(slot) {
            Some(cell) => {
                cell.write((start, last));
            }
            None => run_capacity_exceeded(slot, self.slots.capacity()),
        }
        let keep = start != last;
        self.kept = slot + usize::from(keep);
        self.last = if keep { (start, last) } else { self.last };
    }

    fn finish(mut self) -> Vec<(usize, usize)> {
        // SAFETY: every slot below `kept` was written by `push` before `kept` moved past
        // it (`kept` is at most one more than the last slot written), and `kept` is within
        // the capacity because each write went through `spare.get_mut`, which checks it.
        unsafe { self.slots.set_len(self.kept) };
        self.slots
    }
}

#[cold]
#[track_caller]
fn run_capacity_exceeded(slot: usize, capacity: usize) -> ! {
    panic!("run slot {slot} out of bounds for a run buffer of capacity {capacity}")
}

#[cold]
#[track_caller]
fn select_out_of_bounds(start: usize, end: usize, nrows: usize) -> ! {
    crate::error::precondition(format!(
        "row range {start}..{end} out of bounds for a partition with {nrows} rows"
    ))
}

impl PartialEq for RowPartition {
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other) || self.row_splits() == other.row_splits()
    }
}

impl Eq for RowPartition {}

impl fmt::Debug for RowPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowPartition")
            .field("row_splits", &self.row_splits())
            .finish()
    }
}

/// Fills `row_ids` from `row_splits` (k2's `RowSplitsToRowIds`); `row_ids.len()` must be
/// `row_splits.last()`. Runs on rayon above the parallel threshold.
///
/// ```
/// let mut ids = [0; 5];
/// ragged_core::row_splits_to_row_ids(&[0, 2, 2, 5], &mut ids).unwrap();
/// assert_eq!(ids, [0, 0, 2, 2, 2]);
/// ```
#[allow(
    clippy::missing_panics_doc,
    reason = "`check_row_splits` refused empty row splits"
)]
pub fn row_splits_to_row_ids(row_splits: &[i32], row_ids: &mut [i32]) -> Result<(), Error> {
    check_row_splits(row_splits)?;
    let nvals = *row_splits.last().expect("checked non-empty") as usize;
    if row_ids.len() != nvals {
        return Err(Error::SizeMismatch {
            what: "row_ids length vs row_splits.last()",
            expected: nvals,
            got: row_ids.len(),
        });
    }
    par::row_splits_to_row_ids(row_splits, row_ids);
    Ok(())
}

/// Fills `row_splits` (`nrows + 1` entries) from `row_ids` (k2's `RowIdsToRowSplits`);
/// the ids must be non-decreasing and below `nrows`.
///
/// ```
/// let mut splits = [0; 4];
/// ragged_core::row_ids_to_row_splits(&[0, 0, 2, 2, 2], &mut splits).unwrap();
/// assert_eq!(splits, [0, 2, 2, 5]);
/// ```
pub fn row_ids_to_row_splits(row_ids: &[i32], row_splits: &mut [i32]) -> Result<(), Error> {
    if row_splits.is_empty() {
        return Err(Error::EmptyRowSplits);
    }
    to_offset(row_ids.len(), "the number of elements")?;
    check_row_ids(row_ids, row_splits.len() - 1)?;
    par::row_ids_to_row_splits(row_ids, row_splits);
    Ok(())
}

/// Checks that `row_splits` is non-empty, starts at 0 and never decreases.
pub(crate) fn check_row_splits(row_splits: &[i32]) -> Result<(), Error> {
    let Some(&first) = row_splits.first() else {
        return Err(Error::EmptyRowSplits);
    };
    if first != 0 {
        return Err(Error::RowSplitsStart { first });
    }
    if row_splits.len() - 1 > i32::MAX as usize {
        return Err(Error::Overflow {
            what: "the number of rows",
            value: (row_splits.len() - 1) as u64,
        });
    }
    if let Some(k) = par::first_decrease(row_splits) {
        return Err(Error::DecreasingRowSplits {
            position: k + 1,
            previous: row_splits[k],
            value: row_splits[k + 1],
        });
    }
    Ok(())
}

/// Checks that `row_ids` is non-decreasing with every id in `0..nrows`.
pub(crate) fn check_row_ids(row_ids: &[i32], nrows: usize) -> Result<(), Error> {
    for (position, &value) in row_ids.iter().enumerate() {
        if value < 0 || value as usize >= nrows {
            return Err(Error::RowIdOutOfRange {
                position,
                value,
                nrows,
            });
        }
        if position > 0 && value < row_ids[position - 1] {
            return Err(Error::DecreasingRowIds {
                position,
                previous: row_ids[position - 1],
                value,
            });
        }
    }
    Ok(())
}

/// Checks that `row_ids` is exactly what valid `row_splits` implies.
pub(crate) fn check_row_ids_against_splits(
    row_splits: &[i32],
    row_ids: &[i32],
) -> Result<(), Error> {
    let nvals = *row_splits.last().unwrap() as usize;
    if row_ids.len() != nvals {
        return Err(Error::SizeMismatch {
            what: "row_ids length vs row_splits.last()",
            expected: nvals,
            got: row_ids.len(),
        });
    }
    for (row, w) in row_splits.windows(2).enumerate() {
        let (b, e) = (w[0] as usize, w[1] as usize);
        if let Some(k) = row_ids[b..e].iter().position(|&id| id != row as i32) {
            return Err(Error::RowIdsMismatch {
                position: b + k,
                expected: row as i32,
                got: row_ids[b + k],
            });
        }
    }
    Ok(())
}

#[cfg(feature = "arrow")]
impl RowPartition {
    /// The visible row splits as an Arrow offsets buffer, moving the stored `Vec` into it
    /// when this handle is the only one (no copy; Arrow can later hand the `Vec` back), and
    /// otherwise sharing it (see [`RowPartition::to_arrow_offsets`]).
    pub(crate) fn into_arrow_offsets(self) -> arrow_buffer::OffsetBuffer<i32> {
        let nrows = self.nrows;
        match Arc::try_unwrap(self.inner) {
            Ok(inner) => {
                let mut splits = inner.row_splits;
                splits.truncate(nrows + 1);
                let buffer = arrow_buffer::ScalarBuffer::from(splits);
                // SAFETY: `row_splits` (and so its prefix) is non-empty, starts at 0 and never
                // decreases: the invariant the safe constructors of `RowPartition` check and
                // the `unsafe` `from_row_splits_unchecked` / `from_parts_unchecked` demand of
                // their callers (hostile splits: `hostile_row_splits_are_errors`).
                unsafe { arrow_buffer::OffsetBuffer::new_unchecked(buffer) }
            }
            Err(inner) => Self { inner, nrows }.to_arrow_offsets(),
        }
    }

    /// The row splits as an Arrow offsets buffer over the same memory, without copying
    /// (feature `arrow`): the buffer holds a clone of this partition's `Arc`, which keeps the
    /// splits alive and unchanged.
    pub fn to_arrow_offsets(&self) -> arrow_buffer::OffsetBuffer<i32> {
        let splits = self.row_splits();
        let ptr = std::ptr::NonNull::from(splits).cast::<u8>();
        let owner: Arc<dyn arrow_buffer::alloc::Allocation> = self.inner.clone();
        // SAFETY: `ptr` points at `splits.len()` initialised `i32`s inside `inner.row_splits`,
        // a `Vec` that is never mutated, moved or freed while `inner` is shared, and `owner`
        // keeps `inner` alive as long as the buffer lives.
        let buffer = unsafe {
            arrow_buffer::Buffer::from_custom_allocation(ptr, std::mem::size_of_val(splits), owner)
        };
        // SAFETY: the row-splits invariant (non-empty, starts at 0, never decreases), checked
        // by the safe constructors of `RowPartition` and demanded of the callers of the
        // `unsafe` ones, holds for any prefix.
        unsafe {
            arrow_buffer::OffsetBuffer::new_unchecked(arrow_buffer::ScalarBuffer::from(buffer))
        }
    }

    /// A partition from Arrow offsets (feature `arrow`), copied and rebased to start at 0
    /// (the offsets of a sliced array need not), with the range of child items they cover.
    /// Arrow's offsets are non-empty and non-decreasing, so nothing else can go wrong.
    pub fn from_arrow_offsets(
        offsets: &arrow_buffer::OffsetBuffer<i32>,
    ) -> (Self, std::ops::Range<usize>) {
        let first = offsets[0];
        let last = offsets[offsets.len() - 1];
        let splits = offsets.iter().map(|&o| o - first).collect();
        // SAFETY: an `OffsetBuffer` is non-empty, non-negative and never decreases (its own
        // invariant, which only its `unsafe` constructor skips), so its offsets minus the
        // first start at 0 and never decrease.
        let partition = unsafe { Self::from_row_splits_unchecked(splits) };
        (partition, first as usize..last as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_agree() {
        let a = RowPartition::from_row_splits(vec![0, 2, 2, 5]).unwrap();
        let b = RowPartition::from_row_lengths(&[2, 0, 3]).unwrap();
        let c = RowPartition::from_value_rowids(vec![0, 0, 2, 2, 2], 3).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a.row_ids(), &[0, 0, 2, 2, 2]);
        assert_eq!(a.row_starts(), &[0, 2, 2]);
        assert_eq!(a.row_limits(), &[2, 2, 5]);
        assert_eq!(a.row_lengths(), vec![2, 0, 3]);
        assert_eq!(a.uniform_row_length(), None);
    }

    #[test]
    fn trailing_empty_rows_from_value_rowids() {
        let p = RowPartition::from_value_rowids(vec![0, 1, 1], 5).unwrap();
        assert_eq!(p.row_splits(), &[0, 1, 3, 3, 3, 3]);
        assert_eq!(p.nrows(), 5);
    }

    #[test]
    fn uniform_row_length_cases() {
        let p = RowPartition::from_uniform_row_length(3, 2).unwrap();
        assert_eq!(p.row_splits(), &[0, 3, 6]);
        assert_eq!(p.uniform_row_length(), Some(3));
        assert_eq!(
            RowPartition::from_uniform_row_length(4, 0)
                .unwrap()
                .uniform_row_length(),
            Some(4)
        );
        assert_eq!(
            RowPartition::from_row_splits(vec![0])
                .unwrap()
                .uniform_row_length(),
            None
        );
        assert_eq!(
            RowPartition::from_row_splits(vec![0, 2, 4])
                .unwrap()
                .uniform_row_length(),
            Some(2)
        );
        assert!(matches!(
            RowPartition::from_uniform_row_length(1 << 16, 1 << 16),
            Err(Error::Overflow { .. })
        ));
    }

    #[test]
    fn bad_inputs_are_named() {
        assert_eq!(
            RowPartition::from_row_splits(vec![]),
            Err(Error::EmptyRowSplits)
        );
        assert_eq!(
            RowPartition::from_row_splits(vec![1, 2]),
            Err(Error::RowSplitsStart { first: 1 })
        );
        assert_eq!(
            RowPartition::from_row_splits(vec![0, 3, 2]),
            Err(Error::DecreasingRowSplits {
                position: 2,
                previous: 3,
                value: 2
            })
        );
        assert_eq!(
            RowPartition::from_value_rowids(vec![0, 3], 3),
            Err(Error::RowIdOutOfRange {
                position: 1,
                value: 3,
                nrows: 3
            })
        );
        assert_eq!(
            RowPartition::from_value_rowids(vec![1, 0], 3),
            Err(Error::DecreasingRowIds {
                position: 1,
                previous: 1,
                value: 0
            })
        );
        assert_eq!(
            RowPartition::from_row_lengths(&[1, -1]),
            Err(Error::NegativeRowLength { row: 1, length: -1 })
        );
    }

    #[test]
    fn clones_share_the_cache() {
        let p = RowPartition::from_row_splits(vec![0, 1, 3]).unwrap();
        let q = p.clone();
        assert!(q.row_ids_if_cached().is_none());
        p.row_ids();
        assert_eq!(q.row_ids_if_cached(), Some(&[0, 1, 1][..]));
        assert!(p.ptr_eq(&q));
        assert!(p.validate().is_ok());
    }

    #[test]
    fn row_ids_are_computed_once_across_threads() {
        let lengths: Vec<i32> = (0..20_000).map(|i| i % 7).collect();
        let p = RowPartition::from_row_lengths(&lengths).unwrap();
        let expected: Vec<i32> = (0..20_000)
            .flat_map(|r| std::iter::repeat_n(r, (r % 7) as usize))
            .collect();
        let pointers: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let q = p.clone();
                    let expected = &expected;
                    s.spawn(move || {
                        assert_eq!(q.value_rowids(), &expected[..]);
                        q.row_ids().as_ptr() as usize
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(pointers.windows(2).all(|w| w[0] == w[1]), "one cached copy");
    }

    #[test]
    fn public_conversions_check_their_inputs() {
        let mut ids = [0; 3];
        assert_eq!(
            row_splits_to_row_ids(&[0, 2, 4], &mut ids),
            Err(Error::SizeMismatch {
                what: "row_ids length vs row_splits.last()",
                expected: 4,
                got: 3
            })
        );
        assert_eq!(
            row_splits_to_row_ids(&[0, 2, 1], &mut ids[..1]),
            Err(Error::DecreasingRowSplits {
                position: 2,
                previous: 2,
                value: 1
            })
        );
        let mut splits = [0; 3];
        assert_eq!(
            row_ids_to_row_splits(&[0, 2], &mut splits),
            Err(Error::RowIdOutOfRange {
                position: 1,
                value: 2,
                nrows: 2
            })
        );
        row_ids_to_row_splits(&[0, 0, 1], &mut splits).unwrap();
        assert_eq!(splits, [0, 2, 3]);
    }

    #[test]
    #[should_panic(expected = "write_row_ids: output has 2 entries, the partition 3 elements")]
    fn write_row_ids_checks_the_output_size() {
        let p = RowPartition::from_row_lengths(&[1, 2]).unwrap();
        p.write_row_ids(&mut [0; 2]);
    }

    #[test]
    fn errors_name_the_value_and_position() {
        let text = |e: Error| e.to_string();
        assert_eq!(
            text(RowPartition::from_row_splits(vec![0, 3, 2]).unwrap_err()),
            "row_splits decreases at position 2: 2 after 3"
        );
        assert_eq!(
            text(RowPartition::from_value_rowids(vec![0, 5], 2).unwrap_err()),
            "row id 5 at position 1 is outside 0..2"
        );
        assert_eq!(
            text(RowPartition::from_row_lengths(&[i32::MAX, 1]).unwrap_err()),
            "the total of the row lengths would be 2147483648, beyond the i32 offset limit 2147483647"
        );
        assert_eq!(
            text(crate::RaggedShape::from_row_splits(vec![vec![0, 2], vec![0, 1]]).unwrap_err()),
            "axis 2 has 1 rows but the axis above has 2 elements"
        );
        assert_eq!(
            text("[ [ 1 ] [ [ 2 ] ] ]".parse::<crate::RaggedShape>().unwrap_err()),
            "parse error at byte 4: expected '[' or ']' (elements belong in the innermost lists), found '1'"
        );
    }

    /// `result` is the error `expected`, by value: a hostile input was refused.
    #[track_caller]
    fn check_err<T: fmt::Debug>(result: Result<T, Error>, expected: Error) {
        assert_eq!(result.unwrap_err(), expected);
    }

    /// Hardening round 3, item 2: the row-splits invariant is what
    /// `OffsetBuffer::new_unchecked` (here and in the crates above) and `gather_rows`'
    /// `set_len` rely on, and only the `unsafe` constructors skip its check. Every safe
    /// entry point that builds a partition from outside values refuses splits that
    /// decrease, do not start at 0 or are empty, row ids that decrease, leave `0..nrows`
    /// or disagree with the splits, and splits or layers that do not match their values.
    #[test]
    fn hostile_row_splits_are_errors() {
        use crate::{ragged_shape2, row_ids_to_row_splits, row_splits_to_row_ids, Ragged};
        use crate::{Error::*, RaggedShape};
        let decreasing = DecreasingRowSplits {
            position: 2,
            previous: 3,
            value: 2,
        };
        check_err(
            RowPartition::from_row_splits(vec![0, 3, 2]),
            decreasing.clone(),
        );
        check_err(
            RowPartition::from_row_splits(vec![1, 2]),
            RowSplitsStart { first: 1 },
        );
        check_err(
            RowPartition::from_row_splits(vec![-1, 0]),
            RowSplitsStart { first: -1 },
        );
        check_err(RowPartition::from_row_splits(vec![]), EmptyRowSplits);
        check_err(
            RowPartition::from_row_splits(vec![0, i32::MAX, i32::MIN]),
            DecreasingRowSplits {
                position: 2,
                previous: i32::MAX,
                value: i32::MIN,
            },
        );
        check_err(
            RowPartition::from_row_lengths(&[2, -1, 5]),
            NegativeRowLength { row: 1, length: -1 },
        );
        check_err(
            RowPartition::from_value_rowids(vec![0, 1, 0], 2),
            DecreasingRowIds {
                position: 2,
                previous: 1,
                value: 0,
            },
        );
        check_err(
            RowPartition::from_value_rowids(vec![0, -1], 2),
            RowIdOutOfRange {
                position: 1,
                value: -1,
                nrows: 2,
            },
        );
        check_err(
            RowPartition::from_value_rowids(vec![0, 2], 2),
            RowIdOutOfRange {
                position: 1,
                value: 2,
                nrows: 2,
            },
        );
        // Both encodings given: each valid on its own, but the ids do not match the splits.
        check_err(
            ragged_shape2(Some(&[0, 2, 3]), Some(&[0, 1, 1]), None),
            RowIdsMismatch {
                position: 1,
                expected: 0,
                got: 1,
            },
        );
        check_err(
            ragged_shape2(Some(&[0, 3, 2]), Some(&[0, 0]), None),
            decreasing.clone(),
        );
        // Splits past the values' length, and layers that do not match.
        let shape = RaggedShape::from_row_splits(vec![vec![0, 2, 5]]).unwrap();
        check_err(
            Ragged::try_new(shape, vec![1, 2, 3]),
            SizeMismatch {
                what: "number of values vs shape.num_elements()",
                expected: 5,
                got: 3,
            },
        );
        let (top, bottom) = (
            RowPartition::from_row_splits(vec![0, 2]).unwrap(),
            RowPartition::from_row_splits(vec![0, 1, 2, 3]).unwrap(),
        );
        check_err(
            RaggedShape::from_layers(vec![top, bottom]),
            LayerMismatch {
                axis: 2,
                expected: 2,
                got: 3,
            },
        );
        // The free functions over caller-owned buffers.
        check_err(row_splits_to_row_ids(&[0, 3, 2], &mut [0; 2]), decreasing);
        check_err(
            row_splits_to_row_ids(&[0, 2, 3], &mut [0; 5]),
            SizeMismatch {
                what: "row_ids length vs row_splits.last()",
                expected: 3,
                got: 5,
            },
        );
        check_err(
            row_ids_to_row_splits(&[1, 0], &mut [0; 3]),
            DecreasingRowIds {
                position: 1,
                previous: 1,
                value: 0,
            },
        );
        // Text: a shape whose brackets do not close is a parse error, not a partition.
        assert!(matches!(
            "[ [ 1 2 ] [ 3 ]".parse::<Ragged<i32>>(),
            Err(Parse { .. })
        ));
    }

    /// The panic of a shape or array built inside the crate from parts that do not match
    /// (its release-mode check), by hand.
    #[test]
    fn mismatched_internal_parts_panic_naming_the_sizes() {
        let shape = crate::RaggedShape::from_row_splits(vec![vec![0, 2, 5]]).unwrap();
        let r = std::panic::catch_unwind(|| crate::Ragged::from_matching_parts(shape, vec![1]));
        let msg = r.unwrap_err().downcast_ref::<String>().cloned().unwrap();
        assert_eq!(
            msg,
            "a ragged array built inside the crate has 1 values for a shape of 5 elements"
        );
        let layers = vec![
            RowPartition::from_row_splits(vec![0, 2]).unwrap(),
            RowPartition::from_row_splits(vec![0, 1]).unwrap(),
        ];
        let r = std::panic::catch_unwind(|| crate::RaggedShape::from_matching_layers(layers));
        let msg = r.unwrap_err().downcast_ref::<String>().cloned().unwrap();
        assert_eq!(
            msg,
            "a shape built inside the crate is inconsistent: axis 2 has 1 rows but the axis above has 2 elements"
        );
    }

    #[test]
    fn prefixes_share_storage() {
        let p = RowPartition::from_row_splits(vec![0, 2, 3, 6]).unwrap();
        let q = p.prefix(2);
        assert_eq!(q.row_splits(), &[0, 2, 3]);
        assert_eq!(q.row_ids(), &[0, 0, 1]);
        assert_eq!((q.nrows(), q.nvals()), (2, 3));
        assert!(q.shares_storage_with(&p));
        assert_eq!(p.row_ids(), &[0, 0, 1, 2, 2, 2]);
        assert_eq!(p.prefix(0).row_splits(), &[0]);
    }

    /// The runs a `RunWriter` keeps, against the same runs merged by hand: empty runs
    /// dropped, a run starting where the last kept one ends appended to it.
    #[track_caller]
    fn check_runs(input: &[(usize, usize)], expected: &[(usize, usize)]) {
        let mut writer = RunWriter::with_capacity(input.len());
        for &(a, b) in input {
            writer.push(a, b);
        }
        assert_eq!(writer.finish(), expected);
    }

    #[test]
    fn run_writer_merges_and_drops() {
        check_runs(&[], &[]);
        check_runs(&[(0, 0)], &[]);
        check_runs(&[(3, 3), (0, 0)], &[]);
        check_runs(&[(2, 5)], &[(2, 5)]);
        check_runs(&[(0, 2), (2, 5)], &[(0, 5)]);
        check_runs(&[(0, 2), (2, 2), (2, 5)], &[(0, 5)]);
        check_runs(&[(0, 2), (7, 7), (2, 5)], &[(0, 5)]);
        check_runs(
            &[(4, 6), (0, 0), (0, 3), (3, 3), (9, 10)],
            &[(4, 6), (0, 3), (9, 10)],
        );
        check_runs(&[(5, 5), (5, 6), (6, 8), (1, 2)], &[(5, 8), (1, 2)]);
    }

    /// The hostile value for `RunWriter::finish`'s `set_len`: more runs than the capacity
    /// the writer was made with must panic at the write, not write past the buffer.
    #[test]
    #[should_panic(expected = "run slot 1 out of bounds for a run buffer of capacity 1")]
    fn run_writer_refuses_runs_past_its_capacity() {
        let mut writer = RunWriter::with_capacity(1);
        writer.push(0, 1);
        writer.push(5, 6);
    }
}
