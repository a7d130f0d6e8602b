//! Row selection in chunks, for large gathers of rank-1 structs: the selected rows are
//! cut into chunks, and for each leaf column in turn the chunks' outputs are counted (in
//! parallel), the column's output buffers are allocated once, and the chunks then fill
//! their own disjoint parts of them (in parallel). One pass per chunk
//! walks every level of the column at once, from its rows down to its leaf values, so no
//! list of element runs is built between the levels.
//!
//! ```text
//! rows => per column: count (chunks in parallel) => allocate (one thread) => fill (chunks in parallel)
//! ```
//!
//! The whole selection runs as one job of the rayon pool ([`rayon::scope`]), so its
//! parallel loops start from a worker. Started from a thread outside the pool, each loop
//! puts that thread to sleep and wakes the workers: about 28 µs a loop on a 2-core
//! virtual machine, where an empty loop inside the pool costs well under one.

use std::mem::MaybeUninit;

use indexmap::IndexMap;
use rayon::prelude::*;

use crate::array::Array;
use crate::partition::RowPartition;
use crate::runs::{copy_run, put_run, BLOCK_BYTES};
use crate::strings::{BytesColumn, StringColumn};
use crate::structured::{FieldValue, StructuredTensor};
use crate::validity::{BitWriter, Validity};
use crate::values::Values;

/// Offsets written as one block per run: a block of `i32`s.
const LANES: usize = BLOCK_BYTES / 4;

/// The fewest selected rows a chunk is given (fewer make the tasks cost more than they do).
const MIN_CHUNK_ROWS: usize = 4096;

/// The most levels of offsets a column may have on this path (an array of rank 4, a
/// string array of rank 3); deeper ones take the general path.
const MAX_LEVELS: usize = 3;

/// Chunks per rayon thread, so that a slow chunk does not hold the others up.
const CHUNKS_PER_THREAD: usize = 4;

/// True when a selection of `n` rows or row ranges takes the chunked, parallel path (at a
/// quarter of ragged-core's parallel threshold: each row costs a copy in every column).
pub(crate) fn go_chunked(n: usize) -> bool {
    n > 0 && n >= ragged_core::parallel_threshold() / 4
}

/// The rows a selection picks: runs of rows `(start, end)`, or single rows.
pub(crate) trait Rows: Sync {
    /// The number of runs.
    fn count(&self) -> usize;
    /// Run `i` as `(start, end)`.
    fn run(&self, i: usize) -> (usize, usize);
    /// True when every run is one row (then a leaf without levels needs no count: the
    /// fill's slice indexing checks each row against it).
    fn single_rows(&self) -> bool {
        false
    }
    /// True when every run selects exactly one element at `depth` (0 = top level,
    /// `levels.len()` = leaf): the fill writes that element alone, without a block, and
    /// the prefetch then fetches no block end there.
    #[inline(always)]
    fn one_element_at(&self, depth: usize) -> bool {
        depth == 0 && self.single_rows()
    }
}

impl Rows for [(usize, usize)] {
    fn count(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn run(&self, i: usize) -> (usize, usize) {
        self[i]
    }
}

impl Rows for [u32] {
    fn count(&self) -> usize {
        self.len()
    }
    fn single_rows(&self) -> bool {
        true
    }
    #[inline(always)]
    fn run(&self, i: usize) -> (usize, usize) {
        let row = self[i] as usize;
        (row, row + 1)
    }
}

/// The flat values of one leaf column, by element type (a string column's bytes are `U8`).
#[derive(Clone, Copy)]
pub(crate) enum Leaf<'a> {
    I64(&'a [i64]),
    F64(&'a [f64]),
    Bool(&'a [bool]),
    I32(&'a [i32]),
    F32(&'a [f32]),
    U8(&'a [u8]),
}

/// A selected leaf column's values, by element type.
#[derive(Debug, PartialEq)]
pub(crate) enum LeafVec {
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    U8(Vec<u8>),
}

/// One chunk's slots in a selected leaf column, by element type.
enum LeafSlots<'a> {
    I64(&'a mut [MaybeUninit<i64>]),
    F64(&'a mut [MaybeUninit<f64>]),
    Bool(&'a mut [MaybeUninit<bool>]),
    I32(&'a mut [MaybeUninit<i32>]),
    F32(&'a mut [MaybeUninit<f32>]),
    U8(&'a mut [MaybeUninit<u8>]),
}

/// Applies `$body` to the slice inside a [`Leaf`], [`LeafVec`] or [`LeafSlots`], binding
/// it to `$v`, and wraps the result in variant `$wrap::…` of the same element type.
macro_rules! per_type {
    ($value:expr, $from:ident => $to:ident, $v:ident => $body:expr) => {
        match $value {
            $from::I64($v) => $to::I64($body),
            $from::F64($v) => $to::F64($body),
            $from::Bool($v) => $to::Bool($body),
            $from::I32($v) => $to::I32($body),
            $from::F32($v) => $to::F32($body),
            $from::U8($v) => $to::U8($body),
        }
    };
}

impl Leaf<'_> {
    fn len(&self) -> usize {
        match self {
            Leaf::I64(v) => v.len(),
            Leaf::F64(v) => v.len(),
            Leaf::Bool(v) => v.len(),
            Leaf::I32(v) => v.len(),
            Leaf::F32(v) => v.len(),
            Leaf::U8(v) => v.len(),
        }
    }

    /// An empty buffer of this element type with room for `n` elements.
    fn with_capacity(&self, n: usize) -> LeafVec {
        per_type!(self, Leaf => LeafVec, _v => Vec::with_capacity(n))
    }
}

/// A leaf column under its levels of offsets (`levels[k][i]..levels[k][i + 1]` are the
/// rows of level `k + 1` under row `i` of level `k`; the last level's offsets index the
/// leaf, and with no levels the selected rows index the leaf directly).
pub(crate) struct Column<'a> {
    pub(crate) levels: Vec<&'a [i32]>,
    pub(crate) leaf: Leaf<'a>,
    /// A nullable column's bitmap and the depth whose elements it covers (`levels.len()`
    /// for a leaf of values, one less for a string column, whose bitmap covers strings).
    pub(crate) validity: Option<(&'a Validity, usize)>,
}

/// A selected column: the offsets of the selected rows at every level (each starting at
/// 0), and the leaf elements under them, in order.
#[derive(Debug, PartialEq)]
pub(crate) struct SelectedColumn {
    pub(crate) levels: Vec<Vec<i32>>,
    pub(crate) leaf: LeafVec,
    /// The bits of the selected elements, for a nullable column.
    pub(crate) validity: Option<Validity>,
}

/// One chunk's share of one column's output: where it starts at every depth (0 = top
/// level, `levels.len()` = leaf), and its disjoint slots in each level's offsets (one per
/// selected row, after the leading 0) and in the leaf.
struct Part<'a, T> {
    starts: Vec<usize>,
    offsets: Vec<&'a mut [MaybeUninit<i32>]>,
    leaf: &'a mut [MaybeUninit<T>],
}

/// Selects `rows` of the top level of every column (all columns share that top level).
///
/// `None` when a level of a result would hold more than `i32::MAX` rows or elements (the
/// caller's sequential path reports that). Panics when a run is out of bounds or a level's
/// offsets decrease or point past the level below.
pub(crate) fn select_columns<R: Rows + ?Sized>(
    columns: &[Column<'_>],
    rows: &R,
) -> Option<Vec<SelectedColumn>> {
    select_columns_in_chunks(columns, rows, MIN_CHUNK_ROWS)
}

/// [`select_columns`] in chunks of at least `min_rows` runs (small ones in tests).
fn select_columns_in_chunks<R: Rows + ?Sized>(
    columns: &[Column<'_>],
    rows: &R,
    min_rows: usize,
) -> Option<Vec<SelectedColumn>> {
    let chunks = chunk_bounds(rows.count(), min_rows);
    columns
        .iter()
        .map(|column| select_column(column, rows, &chunks))
        .collect()
}

/// One column of [`select_columns`]: its chunks counted (rayon), its buffers allocated
/// (here), its chunks filled (rayon). Column after column, each over all chunks, and
/// each column filled right after its count: a column's random reads stay in the caches
/// (every column's chunks at once measured 1.3x slower).
fn select_column<R: Rows + ?Sized>(
    column: &Column<'_>,
    rows: &R,
    chunks: &[(usize, usize)],
) -> Option<SelectedColumn> {
    let depth = column.levels.len();
    // counts[chunk][depth]
    let counts: Vec<Vec<usize>> = if depth == 0 && rows.single_rows() {
        // Single rows straight into the leaf: a chunk holds as many as it has runs.
        chunks
            .iter()
            .map(|&(first, end)| vec![end - first])
            .collect()
    } else {
        chunks
            .par_iter()
            .map(|&chunk| count_chunk(&column.levels, column.leaf.len(), rows, chunk))
            .collect()
    };
    // Totals per depth, and each chunk's start at each depth.
    let mut totals = vec![0usize; depth + 1];
    let mut starts = Vec::with_capacity(chunks.len());
    for chunk_counts in &counts {
        starts.push(totals.clone());
        for (total, &n) in totals.iter_mut().zip(chunk_counts) {
            *total = total.checked_add(n)?;
        }
    }
    // Offsets are `i32`: the rows of every level and the elements each level points at.
    if depth > 0 && totals.iter().any(|&t| t > i32::MAX as usize) {
        return None;
    }
    let levels: Vec<Vec<i32>> = totals[..depth]
        .iter()
        .map(|&rows| {
            let mut v = Vec::with_capacity(rows + 1);
            v.push(0);
            v
        })
        .collect();
    let leaf = column.leaf.with_capacity(totals[depth]);
    let mut selected = SelectedColumn {
        levels,
        leaf,
        validity: None,
    };
    let parts = split_parts(&mut selected, counts.iter().map(Vec::as_slice), starts);
    // Each chunk gathers the bits of its elements beside its fill; the chunks' bitmaps
    // are joined after.
    let chunk_bits: Vec<Option<Validity>> = parts
        .into_par_iter()
        .zip(chunks)
        .zip(&counts)
        .map(|((part, &chunk), chunk_counts)| {
            let bits = column
                .validity
                .map(|(src, at)| (at, BitWriter::new(src, chunk_counts[at])));
            fill_column(column, rows, chunk, part, bits).map(|(_, out)| out.finish())
        })
        .collect();
    if column.validity.is_some() {
        let parts: Vec<(Option<&Validity>, usize)> = chunk_bits
            .iter()
            .map(|v| (v.as_ref(), v.as_ref().map_or(0, Validity::len)))
            .collect();
        selected.validity = Validity::concat(&parts);
    }
    for (v, &rows) in selected.levels.iter_mut().zip(&totals) {
        // SAFETY: `v` holds its leading 0 and has room for `rows` more; `split_parts` cut
        // exactly those `rows` spare slots into the chunks' disjoint parts, and
        // `fill_chunk` asserted that each chunk wrote every slot of its part (a panic in
        // any chunk reaches this thread before this line).
        unsafe { v.set_len(rows + 1) };
    }
    let n = totals[depth];
    // SAFETY: as above, for the `n` leaf slots.
    unsafe {
        match &mut selected.leaf {
            LeafVec::I64(v) => v.set_len(n),
            LeafVec::F64(v) => v.set_len(n),
            LeafVec::Bool(v) => v.set_len(n),
            LeafVec::I32(v) => v.set_len(n),
            LeafVec::F32(v) => v.set_len(n),
            LeafVec::U8(v) => v.set_len(n),
        }
    }
    Some(selected)
}

/// A [`Part`] of a column of any element type.
type PartOf<'a> = (Vec<usize>, Vec<&'a mut [MaybeUninit<i32>]>, LeafSlots<'a>);

/// The chunks of `n` runs, as `(first, end)` run indices: equal shares, one per
/// [`CHUNKS_PER_THREAD`] of each rayon thread, at least `min_rows` runs each.
fn chunk_bounds(n: usize, min_rows: usize) -> Vec<(usize, usize)> {
    let wanted = rayon::current_num_threads() * CHUNKS_PER_THREAD;
    let per_chunk = n.div_ceil(wanted).max(min_rows.max(1));
    let mut chunks: Vec<(usize, usize)> = (0..n)
        .step_by(per_chunk)
        .map(|first| (first, (first + per_chunk).min(n)))
        .collect();
    if chunks.is_empty() {
        chunks.push((0, 0));
    }
    chunks
}

/// The rows one chunk of runs selects at every depth (`levels.len()` levels, then the
/// leaf), the depth dispatched once.
fn count_chunk<R: Rows + ?Sized>(
    levels: &[&[i32]],
    leaf_len: usize,
    rows: &R,
    chunk: (usize, usize),
) -> Vec<usize> {
    match levels.len() {
        0 => count_chunk_at::<R, 0>(&[], leaf_len, rows, chunk),
        1 => count_chunk_at::<R, 1>(levels_array(levels), leaf_len, rows, chunk),
        2 => count_chunk_at::<R, 2>(levels_array(levels), leaf_len, rows, chunk),
        3 => count_chunk_at::<R, 3>(levels_array(levels), leaf_len, rows, chunk),
        n => unreachable!("{n} levels: columns have at most {MAX_LEVELS}"),
    }
}

/// `levels` as an array of `D` (the caller matched its length).
fn levels_array<'l, 'a, const D: usize>(levels: &'l [&'a [i32]]) -> &'l [&'a [i32]; D] {
    levels.try_into().expect("the matched length")
}

/// [`count_chunk`] with `D` levels: the loops over the levels unrolled, the counts in
/// registers.
fn count_chunk_at<R: Rows + ?Sized, const D: usize>(
    levels: &[&[i32]; D],
    leaf_len: usize,
    rows: &R,
    (first, end): (usize, usize),
) -> Vec<usize> {
    let top = levels
        .first()
        .map_or(leaf_len, |s| s.len().saturating_sub(1));
    let mut counts = [0usize; D];
    let mut leaf_count = 0usize;
    for i in first..end {
        prefetch_ahead::<u8, R, D>(levels, None, rows, i, end);
        let (a, b) = rows.run(i);
        if a > b || b > top {
            range_out_of_bounds(a, b, top);
        }
        let (mut lo, mut hi) = (a, b);
        for (count, offsets) in counts.iter_mut().zip(levels) {
            *count += hi - lo;
            (lo, hi) = (offsets[lo] as usize, offsets[hi] as usize);
            if lo > hi {
                decreasing_offsets(lo, hi);
            }
        }
        leaf_count += hi - lo;
    }
    let mut out = counts.to_vec();
    out.push(leaf_count);
    out
}

/// How many runs ahead each depth is prefetched (see [`prefetch_ahead`]).
const PREFETCH_DISTANCE: usize = 8;

/// Prefetches what the runs ahead of run `i` will read, one depth per step: the run
/// `PREFETCH_DISTANCE * (stages - s)` ahead has its line at depth `s` fetched, its start
/// looked up through the depths above (fetched by the steps before). A run of a gather is
/// a chain of dependent loads (the row's offsets, then the level below, then the leaf)
/// that would otherwise overlap with only the few runs the processor's window holds.
/// Where the fill reads a block (of [`LANES`] offsets, or [`BLOCK_BYTES`] of leaf), the
/// block's last line is fetched too: a block starting at a random place crosses into the
/// next line about half the time. `leaf` is `None` for a loop that reads the levels only.
#[inline(always)]
fn prefetch_ahead<T, R: Rows + ?Sized, const D: usize>(
    levels: &[&[i32]; D],
    leaf: Option<&[T]>,
    rows: &R,
    i: usize,
    end: usize,
) {
    let stages = D + usize::from(leaf.is_some());
    for s in 0..stages {
        let ahead = i + PREFETCH_DISTANCE * (stages - s);
        if ahead >= end {
            continue;
        }
        let (mut lo, _) = rows.run(ahead);
        for offsets in &levels[..s] {
            match offsets.get(lo) {
                Some(&o) => lo = o as usize,
                None => return,
            }
        }
        match (levels.get(s), leaf) {
            (Some(offsets), _) => {
                prefetch(offsets.as_ptr().wrapping_add(lo));
                if !rows.one_element_at(s) {
                    prefetch(offsets.as_ptr().wrapping_add(lo.wrapping_add(LANES)));
                }
            }
            (None, Some(leaf)) => {
                prefetch(leaf.as_ptr().wrapping_add(lo));
                if !rows.one_element_at(D) {
                    prefetch(
                        leaf.as_ptr()
                            .cast::<u8>()
                            .wrapping_add(lo.wrapping_mul(std::mem::size_of::<T>()))
                            .wrapping_add(BLOCK_BYTES - 1),
                    );
                }
            }
            (None, None) => {}
        }
    }
}

/// Asks for the cache line holding `p` (never dereferenced, so any address will do).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect and does not fault on any address;
    // SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Cuts the spare slots of one selected column into one part per chunk, `sizes` slots
/// each at every depth, starting at `starts`.
fn split_parts<'a, 's>(
    selected: &'a mut SelectedColumn,
    sizes: impl Iterator<Item = &'s [usize]>,
    starts: Vec<Vec<usize>>,
) -> Vec<PartOf<'a>> {
    let mut level_rest: Vec<&mut [MaybeUninit<i32>]> = selected
        .levels
        .iter_mut()
        .map(|v| v.spare_capacity_mut())
        .collect();
    let mut leaf_rest =
        per_type!(&mut selected.leaf, LeafVec => LeafSlots, v => v.spare_capacity_mut());
    let mut parts = Vec::new();
    for (c, starts) in sizes.zip(starts) {
        let mut offsets = Vec::with_capacity(level_rest.len());
        for (rest, &n) in level_rest.iter_mut().zip(c) {
            let (head, tail) = std::mem::take(rest).split_at_mut(n);
            offsets.push(head);
            *rest = tail;
        }
        let n = c[c.len() - 1];
        let (leaf, tail) = leaf_rest.split_off(n);
        leaf_rest = tail;
        parts.push((starts, offsets, leaf));
    }
    parts
}

impl<'a> LeafSlots<'a> {
    /// The first `n` slots, and the rest.
    fn split_off(self, n: usize) -> (LeafSlots<'a>, LeafSlots<'a>) {
        macro_rules! split {
            ($($variant:ident),*) => {
                match self {
                    $(LeafSlots::$variant(v) => {
                        let (head, tail) = v.split_at_mut(n);
                        (LeafSlots::$variant(head), LeafSlots::$variant(tail))
                    })*
                }
            };
        }
        split!(I64, F64, Bool, I32, F32, U8)
    }
}

/// Fills one chunk's part of one column, the element type dispatched once.
fn fill_column<'b, R: Rows + ?Sized>(
    column: &Column<'_>,
    rows: &R,
    chunk: (usize, usize),
    (starts, offsets, leaf): PartOf<'_>,
    bits: Option<Bits<'b>>,
) -> Option<Bits<'b>> {
    macro_rules! fill {
        ($($variant:ident),*) => {
            match (column.leaf, leaf) {
                $((Leaf::$variant(src), LeafSlots::$variant(slots)) => fill_typed(
                    &column.levels,
                    src,
                    rows,
                    chunk,
                    Part { starts, offsets, leaf: slots },
                    bits,
                ),)*
                _ => unreachable!("a column's slots have its element type"),
            }
        };
    }
    fill!(I64, F64, Bool, I32, F32, U8)
}

/// [`fill_chunk`] with leaf blocks of 32 bytes, the depth dispatched once.
fn fill_typed<'b, T: Copy, R: Rows + ?Sized>(
    levels: &[&[i32]],
    leaf: &[T],
    rows: &R,
    chunk: (usize, usize),
    part: Part<'_, T>,
    bits: Option<Bits<'b>>,
) -> Option<Bits<'b>> {
    match levels.len() {
        0 => fill_blocked::<T, R, 0>(&[], leaf, rows, chunk, part, bits),
        1 => fill_blocked::<T, R, 1>(levels_array(levels), leaf, rows, chunk, part, bits),
        2 => fill_blocked::<T, R, 2>(levels_array(levels), leaf, rows, chunk, part, bits),
        3 => fill_blocked::<T, R, 3>(levels_array(levels), leaf, rows, chunk, part, bits),
        n => unreachable!("{n} levels: columns have at most {MAX_LEVELS}"),
    }
}

/// [`fill_chunk`] with `D` levels, leaf blocks of 32 bytes.
fn fill_blocked<'b, T: Copy, R: Rows + ?Sized, const D: usize>(
    levels: &[&[i32]; D],
    leaf: &[T],
    rows: &R,
    chunk: (usize, usize),
    part: Part<'_, T>,
    bits: Option<Bits<'b>>,
) -> Option<Bits<'b>> {
    match std::mem::size_of::<T>() {
        1 => fill_chunk::<T, BLOCK_BYTES, R, D>(levels, leaf, rows, chunk, part, bits),
        2 => fill_chunk::<T, { BLOCK_BYTES / 2 }, R, D>(levels, leaf, rows, chunk, part, bits),
        4 => fill_chunk::<T, { BLOCK_BYTES / 4 }, R, D>(levels, leaf, rows, chunk, part, bits),
        8 => fill_chunk::<T, { BLOCK_BYTES / 8 }, R, D>(levels, leaf, rows, chunk, part, bits),
        _ => fill_chunk::<T, 1, R, D>(levels, leaf, rows, chunk, part, bits),
    }
}

/// The depth whose elements a nullable column's bitmap covers, and the writer of one
/// chunk's selected bits from it.
type Bits<'a> = (usize, BitWriter<'a>);

/// Appends the bits of elements `lo..hi` at `depth` when `bits` covers that depth.
#[inline(always)]
fn take_bits(bits: &mut Option<Bits<'_>>, depth: usize, lo: usize, hi: usize) {
    if let Some((at, out)) = bits {
        if *at == depth {
            out.extend(lo, hi);
        }
    }
}

/// Writes one chunk of one column with `D` levels: for each run, the rebased offsets of
/// its rows at every level, then its leaf elements (in blocks of `W`). The loops over the
/// levels unroll and the write positions stay in registers. Panics unless the chunk
/// filled its part exactly.
fn fill_chunk<'b, T: Copy, const W: usize, R: Rows + ?Sized, const D: usize>(
    levels: &[&[i32]; D],
    leaf: &[T],
    rows: &R,
    (first, end): (usize, usize),
    mut part: Part<'_, T>,
    mut bits: Option<Bits<'b>>,
) -> Option<Bits<'b>> {
    let offsets_out: &mut [&mut [MaybeUninit<i32>]; D] = part
        .offsets
        .as_mut_slice()
        .try_into()
        .expect("a part has a slot slice per level");
    // Where the part's rows start at every depth below the top, in the whole output.
    let mut below = [0usize; D];
    below.copy_from_slice(&part.starts[1..]);
    let mut written = [0usize; D];
    let mut written_leaf = 0usize;
    for i in first..end {
        prefetch_ahead(levels, Some(leaf), rows, i, end);
        let (mut lo, mut hi) = rows.run(i);
        for k in 0..D {
            let offsets = levels[k];
            let (first, last) = (offsets[lo] as usize, offsets[hi] as usize);
            // Output position of element `first` one level down; lanes past the run may
            // wrap, as they are overwritten or never part of the result.
            let next = if k + 1 < D {
                written[k + 1]
            } else {
                written_leaf
            };
            let base = (below[k] + next).wrapping_sub(first);
            if rows.one_element_at(k) {
                // One row, one offset: a block would read (and miss on) the next line too.
                offsets_out[k][written[k]].write(last.wrapping_add(base) as i32);
            } else {
                put_run::<i32, i32, LANES>(
                    offsets_out[k],
                    written[k],
                    offsets,
                    lo + 1,
                    hi + 1,
                    |o| (o as usize).wrapping_add(base) as i32,
                );
            }
            written[k] += hi - lo;
            take_bits(&mut bits, k, lo, hi);
            (lo, hi) = (first, last);
        }
        take_bits(&mut bits, D, lo, hi);
        if rows.one_element_at(D) {
            part.leaf[written_leaf].write(leaf[lo]);
        } else {
            copy_run::<T, W>(part.leaf, written_leaf, leaf, lo, hi);
        }
        written_leaf += hi - lo;
    }
    for (k, slots) in offsets_out.iter().enumerate() {
        let n = slots.len();
        assert_eq!(
            written[k], n,
            "a chunk wrote {} rows of level {k}, not {n}",
            written[k]
        );
    }
    let n = part.leaf.len();
    assert_eq!(
        written_leaf, n,
        "a chunk wrote {written_leaf} leaf elements, not {n}"
    );
    bits
}

impl StructuredTensor {
    /// The rows `rows` of a rank-1 struct whose nested structs are all rank 1 and whose
    /// string columns have `i32` offsets, its leaf columns selected one after another in
    /// chunks ([`select_columns`]); `None` when the struct is not of that form or the result is
    /// too large for `i32` offsets, for the caller's general path.
    pub(crate) fn take_rows_chunked<R: Rows + ?Sized>(
        &self,
        rows: &R,
        nrows: usize,
    ) -> Option<StructuredTensor> {
        let mut columns = Vec::new();
        self.leaf_columns(&mut columns)?;
        // One entry into the pool for the whole selection: from a thread outside it,
        // every parallel loop would put the caller to sleep and wake the workers.
        rayon::scope(|_| {
            let mut selected = select_columns(&columns, rows)?.into_iter();
            self.rebuild(&mut selected, nrows)
        })
    }

    /// Appends the leaf columns of every field, depth first in field order; `None` when a
    /// struct is not rank 1 or a string column has `i64` offsets.
    fn leaf_columns<'a>(&'a self, out: &mut Vec<Column<'a>>) -> Option<()> {
        if self.rank() != 1 {
            return None;
        }
        for field in self.fields().values() {
            match field {
                FieldValue::Struct(s) => s.leaf_columns(out)?,
                FieldValue::Array(a) => {
                    let mut levels: Vec<&[i32]> = a
                        .row_partitions()
                        .iter()
                        .map(RowPartition::row_splits)
                        .collect();
                    let leaf = match a.values() {
                        Values::I64(v) => Leaf::I64(v),
                        Values::F64(v) => Leaf::F64(v),
                        Values::Bool(v) => Leaf::Bool(v),
                        Values::I32(v) => Leaf::I32(v),
                        Values::F32(v) => Leaf::F32(v),
                        Values::U8(v) => Leaf::U8(v),
                        Values::Str(c) => {
                            levels.push(c.as_bytes().offsets_i32()?);
                            Leaf::U8(c.as_bytes().bytes())
                        }
                        Values::Bytes(c) => {
                            levels.push(c.offsets_i32()?);
                            Leaf::U8(c.bytes())
                        }
                    };
                    if levels.len() > MAX_LEVELS {
                        return None;
                    }
                    // A bitmap without a null selects to all valid (`rebuild_array`):
                    // only bitmaps with nulls are gathered.
                    let validity = a
                        .validity()
                        .filter(|v| v.null_count() > 0)
                        .map(|v| (v, a.row_partitions().len()));
                    out.push(Column {
                        levels,
                        leaf,
                        validity,
                    });
                }
            }
        }
        Some(())
    }

    /// This struct with every leaf column replaced, in [`StructuredTensor::leaf_columns`]
    /// order, by the next of `selected` (its bitmap too, when it is nullable), `nrows` rows.
    fn rebuild(
        &self,
        selected: &mut impl Iterator<Item = SelectedColumn>,
        nrows: usize,
    ) -> Option<StructuredTensor> {
        let mut fields = IndexMap::new();
        for (name, field) in self.fields() {
            let value = match field {
                FieldValue::Struct(s) => FieldValue::Struct(s.rebuild(selected, nrows)?),
                FieldValue::Array(a) => {
                    let column = selected.next().expect("a selected column per leaf");
                    FieldValue::Array(rebuild_array(a, column, nrows))
                }
            };
            fields.insert(name.clone(), value);
        }
        Some(
            StructuredTensor::from_parts_unchecked(1, nrows, Vec::new(), fields)
                .tagged(self.shape_dtype()),
        )
    }
}

/// The array `source` selected into `column`.
fn rebuild_array(source: &Array, column: SelectedColumn, nrows: usize) -> Array {
    let SelectedColumn {
        mut levels,
        leaf,
        validity,
    } = column;
    let values = match (source.values(), leaf) {
        (Values::Str(_), LeafVec::U8(bytes)) => {
            let offsets = levels.pop().expect("the offsets level");
            let column = BytesColumn::from_gathered_i32_parts(offsets, bytes);
            Values::Str(StringColumn::from_gathered(column))
        }
        (Values::Bytes(_), LeafVec::U8(bytes)) => {
            let offsets = levels.pop().expect("the offsets level");
            Values::Bytes(BytesColumn::from_gathered_i32_parts(offsets, bytes))
        }
        (_, LeafVec::I64(v)) => Values::I64(v.into()),
        (_, LeafVec::F64(v)) => Values::F64(v.into()),
        (_, LeafVec::Bool(v)) => Values::Bool(v),
        (_, LeafVec::I32(v)) => Values::I32(v.into()),
        (_, LeafVec::F32(v)) => Values::F32(v.into()),
        (_, LeafVec::U8(v)) => Values::U8(v.into()),
    };
    let partitions = source
        .row_partitions()
        .iter()
        .zip(levels)
        .map(|(p, splits)| {
            let selected = match p.uniform_row_length() {
                Some(len) => RowPartition::from_uniform_row_length(len, splits.len() - 1),
                None => RowPartition::from_row_splits(splits),
            };
            selected.expect("a selection of valid rows is a valid partition")
        })
        .collect();
    let array = Array::from_parts_unchecked(
        source.rank(),
        nrows,
        partitions,
        std::sync::Arc::new(values),
    )
    .with_shape_dtype(source.shape_dtype())
    .expect("the source's shape dtype");
    // A nullable source stays nullable; one without nulls gave no bits to gather.
    let validity = match (validity, source.is_nullable()) {
        (Some(v), _) => Some(v),
        (None, true) => Some(Validity::all_valid(array.values().len())),
        (None, false) => None,
    };
    array
        .with_validity(validity)
        .expect("a bit per selected element")
}

#[cold]
#[track_caller]
fn range_out_of_bounds(start: usize, end: usize, n: usize) -> ! {
    panic!("row range {start}..{end} out of bounds for {n} rows")
}

#[cold]
#[track_caller]
fn decreasing_offsets(lo: usize, hi: usize) -> ! {
    panic!("offsets decrease ({lo} then {hi}) under a selected range")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tf_ops::SplitMix64;

    /// Rows with `below(max_len + 1)` elements each, as offsets.
    fn random_offsets(rng: &mut SplitMix64, rows: usize, max_len: u64) -> Vec<i32> {
        let mut offsets = vec![0i32];
        for _ in 0..rows {
            let len = rng.below(max_len + 1) as i32;
            offsets.push(offsets.last().unwrap() + len);
        }
        offsets
    }

    /// The model: each selected row of the top level, expanded level by level into the
    /// offsets of every level and the leaf elements, one row at a time.
    fn model<T: Copy>(
        levels: &[Vec<i32>],
        leaf: &[T],
        runs: &[(usize, usize)],
    ) -> (Vec<Vec<i32>>, Vec<T>) {
        let mut out_levels: Vec<Vec<i32>> = vec![vec![0]; levels.len()];
        let mut rows: Vec<usize> = runs.iter().flat_map(|&(a, b)| a..b).collect();
        for (k, offsets) in levels.iter().enumerate() {
            let mut next = Vec::new();
            for &row in &rows {
                let (first, last) = (offsets[row] as usize, offsets[row + 1] as usize);
                let end = out_levels[k].last().unwrap() + (last - first) as i32;
                out_levels[k].push(end);
                next.extend(first..last);
            }
            rows = next;
        }
        (out_levels, rows.iter().map(|&i| leaf[i]).collect())
    }

    /// Random columns of depths 0 to 3 under `top_rows` shared rows, one of each leaf type.
    struct Columns {
        levels: Vec<Vec<Vec<i32>>>,
        i64s: Vec<i64>,
        f64s: Vec<f64>,
        bools: Vec<bool>,
        i32s: Vec<i32>,
        f32s: Vec<f32>,
        u8s: Vec<u8>,
    }

    impl Columns {
        fn random(rng: &mut SplitMix64, top_rows: usize) -> Columns {
            let mut levels = Vec::new();
            let mut leaf_lens = Vec::new();
            for col in 0..6 {
                let depth = col % 4;
                let mut column = Vec::new();
                let mut rows = top_rows;
                for _ in 0..depth {
                    let offsets = random_offsets(rng, rows, 4);
                    rows = *offsets.last().unwrap() as usize;
                    column.push(offsets);
                }
                levels.push(column);
                leaf_lens.push(rows);
            }
            Columns {
                levels,
                i64s: (0..leaf_lens[0] as i64).map(|i| i * 3).collect(),
                f64s: (0..leaf_lens[1]).map(|i| i as f64 + 0.5).collect(),
                bools: (0..leaf_lens[2]).map(|i| i % 3 == 0).collect(),
                i32s: (0..leaf_lens[3] as i32).map(|i| -i).collect(),
                f32s: (0..leaf_lens[4]).map(|i| i as f32).collect(),
                u8s: (0..leaf_lens[5]).map(|i| i as u8).collect(),
            }
        }

        fn columns(&self) -> Vec<Column<'_>> {
            let leaves = [
                Leaf::I64(&self.i64s),
                Leaf::F64(&self.f64s),
                Leaf::Bool(&self.bools),
                Leaf::I32(&self.i32s),
                Leaf::F32(&self.f32s),
                Leaf::U8(&self.u8s),
            ];
            self.levels
                .iter()
                .zip(leaves)
                .map(|(levels, leaf)| Column {
                    levels: levels.iter().map(Vec::as_slice).collect(),
                    leaf,
                    validity: None,
                })
                .collect()
        }

        fn expected(&self, runs: &[(usize, usize)]) -> Vec<SelectedColumn> {
            fn one<T: Copy>(
                levels: &[Vec<i32>],
                leaf: &[T],
                runs: &[(usize, usize)],
                wrap: fn(Vec<T>) -> LeafVec,
            ) -> SelectedColumn {
                let (levels, leaf) = model(levels, leaf, runs);
                SelectedColumn {
                    levels,
                    leaf: wrap(leaf),
                    validity: None,
                }
            }
            let l = &self.levels;
            vec![
                one(&l[0], &self.i64s, runs, LeafVec::I64),
                one(&l[1], &self.f64s, runs, LeafVec::F64),
                one(&l[2], &self.bools, runs, LeafVec::Bool),
                one(&l[3], &self.i32s, runs, LeafVec::I32),
                one(&l[4], &self.f32s, runs, LeafVec::F32),
                one(&l[5], &self.u8s, runs, LeafVec::U8),
            ]
        }
    }

    #[test]
    fn selections_match_the_row_by_row_model() {
        for seed in 0..60 {
            let mut rng = SplitMix64(seed);
            let top_rows = 1 + rng.below(300) as usize;
            let data = Columns::random(&mut rng, top_rows);
            let runs: Vec<(usize, usize)> = (0..rng.below(400))
                .map(|_| {
                    let a = rng.below(top_rows as u64 + 1) as usize;
                    let len = [0, 1, 1, 1, 2, 5][rng.below(6) as usize];
                    (a, (a + len).min(top_rows))
                })
                .collect();
            let ids: Vec<u32> = (0..rng.below(400))
                .map(|_| rng.below(top_rows as u64) as u32)
                .collect();
            let id_runs: Vec<(usize, usize)> =
                ids.iter().map(|&i| (i as usize, i as usize + 1)).collect();
            for min_rows in [1, 7, 100_000] {
                let got = select_columns_in_chunks(&data.columns(), runs.as_slice(), min_rows);
                assert_eq!(got.unwrap(), data.expected(&runs), "seed {seed}, runs");
                let got = select_columns_in_chunks(&data.columns(), ids.as_slice(), min_rows);
                assert_eq!(got.unwrap(), data.expected(&id_runs), "seed {seed}, ids");
            }
        }
    }

    /// The indices of the elements at `depth` under the selected runs, in order.
    fn elements_at(levels: &[Vec<i32>], runs: &[(usize, usize)], depth: usize) -> Vec<usize> {
        let mut rows: Vec<usize> = runs.iter().flat_map(|&(a, b)| a..b).collect();
        for offsets in &levels[..depth] {
            rows = rows
                .iter()
                .flat_map(|&r| offsets[r] as usize..offsets[r + 1] as usize)
                .collect();
        }
        rows
    }

    #[test]
    fn bitmaps_follow_the_selection_at_their_depth() {
        for seed in 0..40 {
            let mut rng = SplitMix64(1000 + seed);
            let top_rows = 1 + rng.below(300) as usize;
            let data = Columns::random(&mut rng, top_rows);
            // A bitmap at every depth of every column (depth 0 included: the top rows).
            let mut bitmaps = Vec::new();
            for levels in &data.levels {
                for depth in 0..=levels.len() {
                    let n = if depth == 0 {
                        top_rows
                    } else {
                        *levels[depth - 1].last().unwrap() as usize
                    };
                    let flags: Vec<bool> = (0..n).map(|_| rng.below(3) != 0).collect();
                    bitmaps.push((depth, flags));
                }
            }
            let validities: Vec<Validity> = bitmaps
                .iter()
                .map(|(_, f)| Validity::from_bools(f))
                .collect();
            let ids: Vec<u32> = (0..rng.below(600))
                .map(|_| rng.below(top_rows as u64) as u32)
                .collect();
            let runs: Vec<(usize, usize)> = (0..rng.below(300))
                .map(|_| {
                    let a = rng.below(top_rows as u64 + 1) as usize;
                    (a, (a + rng.below(4) as usize).min(top_rows))
                })
                .collect();
            let id_runs: Vec<(usize, usize)> =
                ids.iter().map(|&i| (i as usize, i as usize + 1)).collect();
            let mut k = 0;
            for (c, levels) in data.levels.iter().enumerate() {
                for depth in 0..=levels.len() {
                    let mut column = data.columns().swap_remove(c);
                    column.validity = Some((&validities[k], depth));
                    for min_rows in [1, 7, 100_000] {
                        for (got, model_runs) in [
                            (
                                select_columns_in_chunks(
                                    std::slice::from_ref(&column),
                                    ids.as_slice(),
                                    min_rows,
                                ),
                                &id_runs,
                            ),
                            (
                                select_columns_in_chunks(
                                    std::slice::from_ref(&column),
                                    runs.as_slice(),
                                    min_rows,
                                ),
                                &runs,
                            ),
                        ] {
                            let got = got.unwrap().pop().unwrap().validity.unwrap();
                            let flags = &bitmaps[k].1;
                            let expected: Vec<bool> = elements_at(levels, model_runs, depth)
                                .iter()
                                .map(|&i| flags[i])
                                .collect();
                            assert_eq!(
                                got,
                                Validity::from_bools(&expected),
                                "seed {seed}, column {c}, depth {depth}, chunks of {min_rows}"
                            );
                        }
                    }
                    k += 1;
                }
            }
        }
    }

    #[track_caller]
    fn check_chunks(n: usize, min_rows: usize, expected: &[(usize, usize)]) {
        let got = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| chunk_bounds(n, min_rows));
        assert_eq!(got, expected);
    }

    #[test]
    fn chunks_cover_the_runs_in_order() {
        check_chunks(0, 1, &[(0, 0)]);
        check_chunks(3, 1, &[(0, 1), (1, 2), (2, 3)]);
        check_chunks(10, 100, &[(0, 10)]);
        check_chunks(10, 4, &[(0, 4), (4, 8), (8, 10)]);
        check_chunks(
            16,
            1,
            &[
                (0, 2),
                (2, 4),
                (4, 6),
                (6, 8),
                (8, 10),
                (10, 12),
                (12, 14),
                (14, 16),
            ],
        );
    }

    #[test]
    fn a_result_past_i32_offsets_takes_the_other_path() {
        // 2,100 copies of a row of 2^20 elements: more than i32::MAX elements, refused
        // after counting, before anything is allocated.
        let offsets = [0, 1 << 20];
        let leaf = vec![0u8; 1 << 20];
        let column = Column {
            levels: vec![&offsets],
            leaf: Leaf::U8(&leaf),
            validity: None,
        };
        let ids = vec![0u32; 2100];
        assert_eq!(select_columns(&[column], ids.as_slice()), None);
    }

    #[test]
    #[should_panic(expected = "row range 2..5 out of bounds for 3 rows")]
    fn a_run_past_the_rows_panics() {
        let offsets = [0, 1, 2, 3];
        let column = Column {
            levels: vec![&offsets],
            leaf: Leaf::U8(&[1, 2, 3]),
            validity: None,
        };
        select_columns(&[column], [(2, 5)].as_slice());
    }

    #[test]
    #[should_panic(expected = "out of bounds for 3 rows")]
    fn a_run_near_the_end_of_the_address_space_is_a_range_error() {
        // The prefetches look at runs before the count checks them: their addresses wrap.
        let offsets = [0, 1, 2, 3];
        let column = Column {
            levels: vec![&offsets],
            leaf: Leaf::F64(&[1.0, 2.0, 3.0]),
            validity: None,
        };
        let mut runs = vec![(0, 1); 40];
        runs.push((usize::MAX - 1, usize::MAX));
        select_columns(&[column], runs.as_slice());
    }

    #[test]
    #[should_panic(expected = "offsets decrease")]
    fn decreasing_offsets_panic() {
        let offsets = [0, 3, 1];
        let column = Column {
            levels: vec![&offsets],
            leaf: Leaf::U8(&[1, 2, 3]),
            validity: None,
        };
        select_columns(&[column], [1u32].as_slice());
    }

    /// A part of `slots` leaf slots filled by one run of `run` elements.
    fn fill_part(slots: usize, run: usize) {
        let leaf = [7u8; 8];
        let runs = [(0, run)];
        let mut out: Vec<u8> = Vec::with_capacity(slots);
        let part = Part {
            starts: vec![0],
            offsets: Vec::new(),
            leaf: &mut out.spare_capacity_mut()[..slots],
        };
        fill_chunk::<u8, BLOCK_BYTES, _, 0>(&[], &leaf, runs.as_slice(), (0, 1), part, None);
    }

    #[test]
    fn a_part_filled_exactly_passes() {
        fill_part(3, 3);
    }

    #[test]
    #[should_panic(expected = "a chunk wrote 3 leaf elements, not 5")]
    fn a_part_left_partly_unwritten_panics() {
        // The check `set_len` relies on: two slots would stay uninitialised.
        fill_part(5, 3);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn a_part_too_small_for_its_rows_panics() {
        fill_part(2, 3);
    }

    /// Random records: numbers, booleans, strings, nested structs, lists of lists and
    /// empty lists, so that every leaf type and depth this path takes appears.
    fn random_records(rng: &mut SplitMix64, n: usize) -> serde_json::Value {
        let list = |rng: &mut SplitMix64, f: &dyn Fn(&mut SplitMix64) -> serde_json::Value| {
            let k = rng.below(4);
            serde_json::Value::Array((0..k).map(|_| f(rng)).collect())
        };
        let records: Vec<serde_json::Value> = (0..n)
            .map(|_| {
                serde_json::json!({
                    "age": rng.below(100),
                    "ok": rng.below(2) == 1,
                    "name": format!("n{}é", rng.below(1000)),
                    "tags": list(rng, &|r| serde_json::Value::from(format!("t{}", r.below(50)))),
                    "shoes": {
                        "sizes": list(rng, &|r| serde_json::Value::from(5.0 + r.below(20) as f64 * 0.5)),
                        "grid": list(rng, &|r| {
                            let k = r.below(3);
                            serde_json::Value::Array((0..k).map(|_| serde_json::Value::from(r.below(9))).collect())
                        }),
                    },
                })
            })
            .collect();
        serde_json::Value::Array(records)
    }

    #[test]
    fn chunked_gathers_match_the_records_picked_one_by_one() {
        for seed in 0..6 {
            let mut rng = SplitMix64(100 + seed);
            let n = 1 + rng.below(3000) as usize;
            let records = random_records(&mut rng, n);
            let st = StructuredTensor::from_json(&records).unwrap();
            let indices: Vec<i64> = (0..rng.below(5000))
                .map(|_| rng.below(n as u64) as i64)
                .collect();
            let picked: Vec<serde_json::Value> = indices
                .iter()
                .map(|&i| records[i as usize].clone())
                .collect();
            let expected = serde_json::Value::Array(picked);
            let chunked = ragged_core::with_parallel_threshold(0, || st.gather(&indices, 0));
            let general =
                ragged_core::with_parallel_threshold(usize::MAX, || st.gather(&indices, 0));
            assert_eq!(chunked.unwrap().to_json(), expected, "seed {seed}");
            assert_eq!(general.unwrap().to_json(), expected, "seed {seed}");
            // The chunked path directly, on runs of rows, against the same records.
            let runs: Vec<(usize, usize)> = (0..200)
                .map(|_| {
                    let a = rng.below(n as u64) as usize;
                    (a, (a + rng.below(4) as usize).min(n))
                })
                .collect();
            let picked: Vec<serde_json::Value> = runs
                .iter()
                .flat_map(|&(a, b)| (a..b).map(|i| records[i].clone()))
                .collect();
            let rows = picked.len();
            let taken = ragged_core::with_parallel_threshold(0, || {
                st.take_rows_chunked(runs.as_slice(), rows)
                    .expect("rank-1 records")
            });
            assert_eq!(
                taken.to_json(),
                serde_json::Value::Array(picked),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn a_bitmap_without_nulls_selects_to_all_valid_and_stays() {
        let records = serde_json::json!([
            {"age": 1, "tags": ["a", "b"]},
            {"age": null, "tags": []},
            {"age": 3, "tags": ["c"]},
        ]);
        let options = crate::JsonOptions::default().with_nulls(true);
        let st = StructuredTensor::from_json_with_options(&records, &options).unwrap();
        // `tags` gets an all-valid bitmap through a spec that makes it nullable.
        let mut spec = st.spec();
        let tags = spec.fields["tags"].clone();
        spec.fields.insert(
            "tags".to_string(),
            crate::FieldSpec::Nullable(Box::new(tags)),
        );
        let st = st.conform(&spec).unwrap();
        let leaf = |st: &StructuredTensor, name: &str| match &st.fields()[name] {
            FieldValue::Array(a) => a.clone(),
            FieldValue::Struct(_) => unreachable!(),
        };
        assert_eq!(leaf(&st, "tags").null_count(), 0);
        assert!(leaf(&st, "tags").is_nullable());
        for threshold in [0, usize::MAX] {
            let got =
                ragged_core::with_parallel_threshold(threshold, || st.gather(&[2, 1, 1, 0], 0))
                    .unwrap();
            let tags = leaf(&got, "tags");
            assert!(tags.is_nullable(), "threshold {threshold}");
            assert_eq!(tags.validity().unwrap().to_bools(), [true; 3]);
            assert_eq!(
                leaf(&got, "age").validity().unwrap().to_bools(),
                [true, false, false, true]
            );
            assert_eq!(
                got.to_json(),
                serde_json::json!([
                    {"age": 3, "tags": ["c"]},
                    {"age": null, "tags": []},
                    {"age": null, "tags": []},
                    {"age": 1, "tags": ["a", "b"]},
                ])
            );
        }
    }

    #[test]
    fn chunked_gathers_keep_uniform_partitions_and_the_shape_dtype() {
        let records = serde_json::json!([
            {"xy": [1, 2], "s": ["a", "b"]},
            {"xy": [3, 4], "s": ["c", ""]},
            {"xy": [5, 6], "s": ["", "d"]},
        ]);
        let spec_free = StructuredTensor::from_json(&records).unwrap();
        let xy = match &spec_free.fields()["xy"] {
            FieldValue::Array(a) => a.clone(),
            FieldValue::Struct(_) => unreachable!(),
        };
        let uniform = Array::from_parts_unchecked(
            2,
            3,
            vec![RowPartition::from_uniform_row_length(2, 3).unwrap()],
            std::sync::Arc::new(xy.values().clone()),
        )
        .with_shape_dtype(crate::values::DType::I64)
        .unwrap();
        let selected = rebuild_array(
            &uniform,
            SelectedColumn {
                levels: vec![vec![0, 2, 4]],
                leaf: LeafVec::I64(vec![5, 6, 1, 2]),
                validity: None,
            },
            2,
        );
        assert_eq!(selected.row_partitions()[0].uniform_row_length(), Some(2));
        assert_eq!(selected.shape_dtype(), crate::values::DType::I64);
        assert_eq!(selected.to_json(), serde_json::json!([[5, 6], [1, 2]]));
    }

    #[test]
    fn structs_this_path_does_not_take_go_the_general_way() {
        // A rank-2 struct (records grouped in pairs) is not a rank-1 struct of columns.
        let records = serde_json::json!([{"a": 1}, {"a": 2}, {"a": 3}, {"a": 4}]);
        let st = StructuredTensor::from_json(&records).unwrap();
        let grouped = st
            .partition_outer_dimension(&RowPartition::from_uniform_row_length(2, 2).unwrap())
            .unwrap();
        assert!(grouped.take_rows_chunked([1u32, 0].as_slice(), 2).is_none());
        let gathered = ragged_core::with_parallel_threshold(0, || grouped.gather(&[1, 0], 0));
        assert_eq!(
            gathered.unwrap().to_json(),
            serde_json::json!([[{"a": 3}, {"a": 4}], [{"a": 1}, {"a": 2}]])
        );
        // An index out of range is TensorFlow's error on either path.
        for threshold in [0, usize::MAX] {
            let err = ragged_core::with_parallel_threshold(threshold, || st.gather(&[0, 4, -1], 0));
            assert_eq!(
                err.unwrap_err().to_string(),
                st.gather(&[4], 0)
                    .unwrap_err()
                    .to_string()
                    .replace("indices[0]", "indices[1]")
            );
        }
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn a_row_past_a_leaf_without_levels_panics() {
        // Not counted first (single rows need no count): the fill's indexing catches it.
        let column = Column {
            levels: Vec::new(),
            leaf: Leaf::I64(&[1, 2, 3]),
            validity: None,
        };
        select_columns(&[column], [0u32, 3].as_slice());
    }
}
