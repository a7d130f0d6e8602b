//! The `Source` and `Target` traits (Yarr's `USource`/`UTarget`): reading and writing by
//! shape index or by linear index, and the writers that parallel loads share between threads.

use std::ops::Range;

use crate::error::index_out_of_bounds;
use crate::shape::Shape;

/// An array that can be read: explicit storage, a foreign view, or a delayed function.
///
/// Reading never allocates; a chain of delayed adaptors over sources is itself a source, so
/// a whole chain runs as one loop when it is loaded or walked.
///
/// # Safety
///
/// Loads and walks trust a source's answers to stay inside buffers without checking them
/// element by element (as the standard library trusts `TrustedLen`), so the trait is
/// `unsafe` to implement. An implementation must guarantee that:
///
/// - `extent()` returns the same extent on every call, for as long as the value lives
///   (loads size their output once, then read by it);
/// - the unchecked reads (`index_unchecked`, `linear_index_unchecked`,
///   `row_col_unchecked`) are sound for every position inside that extent;
/// - `fill_span` initialises exactly `out[0..cols.len()]`, every one of those elements,
///   and writes nowhere else (a load hands over uninitialised memory and then reads it);
/// - `span_slice`, when it returns `Some`, returns exactly `cols.len()` elements.
///
/// The crate's own sources and adaptors uphold this whenever their operands do, so a
/// delayed array built with [`from_fn`](crate::from_fn) and the adaptors of
/// [`SourceExt`](crate::SourceExt) needs no `unsafe` at all. A type implementing only
/// the safe methods (`extent`, `index`) meets the last three points through the default
/// methods, which call `index`.
///
/// ```compile_fail
/// // The trait cannot be implemented without `unsafe`:
/// struct Ones;
/// impl dataflow::Source for Ones {
///     type Elem = u8;
///     type Shape = dataflow::Dim1;
///     const LINEAR: bool = false;
///     fn extent(&self) -> dataflow::Dim1 { dataflow::Dim1(4) }
///     fn index(&self, _: dataflow::Dim1) -> u8 { 1 }
/// }
/// ```
pub unsafe trait Source: Sync {
    /// The element type.
    type Elem: Copy + Send + Sync;
    /// The shape type (`Dim1`, `Dim2`, `Dim3`).
    type Shape: Shape;
    /// True when reading by linear index is the natural (fast) access, as for explicit
    /// storage and element-wise maps over it (Yarr's linear `L` vs shaped `SH` indexing).
    const LINEAR: bool;

    /// The extent of the array.
    fn extent(&self) -> Self::Shape;

    /// The element at shape index `idx`; panics when `idx` is outside the extent.
    fn index(&self, idx: Self::Shape) -> Self::Elem;

    /// The element at row-major linear position `i`.
    #[inline(always)]
    fn linear_index(&self, i: usize) -> Self::Elem {
        self.index(self.extent().index_at(i))
    }

    /// The element at `idx` without bounds checks where the source can skip them.
    ///
    /// # Safety
    /// `idx` must lie inside `self.extent()`.
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: Self::Shape) -> Self::Elem {
        self.index(idx)
    }

    /// The element at linear position `i` without bounds checks where possible.
    ///
    /// # Safety
    /// `i` must be below `self.extent().size()`.
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> Self::Elem {
        self.linear_index(i)
    }

    /// The element at flattened `(row, col)`, by linear or shape index as the source prefers.
    ///
    /// # Safety
    /// `(row, col)` must lie inside `self.extent().rows_cols()`.
    #[inline(always)]
    unsafe fn row_col_unchecked(
        &self,
        extent: Self::Shape,
        cols: usize,
        row: usize,
        col: usize,
    ) -> Self::Elem {
        if Self::LINEAR {
            // SAFETY: the caller keeps (row, col) inside the extent.
            unsafe { self.linear_index_unchecked(row * cols + col) }
        } else {
            // SAFETY: as above.
            unsafe { self.index_unchecked(extent.index_at_row_col(row, col)) }
        }
    }

    /// Writes the elements of flattened row `row`, columns `cols`, to `out[0..cols.len()]`.
    ///
    /// Sources that can evaluate a whole span faster than element by element (stencils,
    /// chains over them) override this; loads call it for every row span they fill.
    ///
    /// # Safety
    /// The span must lie inside the extent (`extent == self.extent()`, `ncols` its
    /// flattened width) and `out` must be valid for `cols.len()` writes.
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: Self::Shape,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
        out: *mut Self::Elem,
    ) {
        // SAFETY: forwarded contract.
        unsafe { fill_span_by_elements(self, extent, ncols, row, cols, out) }
    }

    /// The elements of flattened row `row`, columns `cols`, as a slice of memory, when the
    /// source is explicit memory; `None` otherwise.
    ///
    /// # Safety
    /// The span must lie inside the extent (`ncols` its flattened width).
    #[inline(always)]
    unsafe fn span_slice(
        &self,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
    ) -> Option<&[Self::Elem]> {
        let _ = (ncols, row, cols);
        None
    }
}

/// The element at `idx` by the source's unchecked read, after checking `idx` against the
/// extent: the body of [`Source::index`] for sources whose unchecked read is the real one.
#[inline(always)]
#[track_caller]
pub(crate) fn checked_index<A: Source + ?Sized>(src: &A, idx: A::Shape) -> A::Elem {
    let extent = src.extent();
    if !extent.contains(idx) {
        index_out_of_bounds(idx, extent);
    }
    // SAFETY: checked above.
    unsafe { src.index_unchecked(idx) }
}

/// The element-by-element span fill every source can use.
///
/// # Safety
/// As [`Source::fill_span`].
#[inline(always)]
pub unsafe fn fill_span_by_elements<A: Source + ?Sized>(
    a: &A,
    extent: A::Shape,
    ncols: usize,
    row: usize,
    cols: Range<usize>,
    out: *mut A::Elem,
) {
    let start = cols.start;
    for col in cols {
        // SAFETY: the caller keeps the span inside the extent and `out` writable.
        unsafe {
            out.add(col - start)
                .write(a.row_col_unchecked(extent, ncols, row, col))
        }
    }
}

/// Fills a span of `out` with `f` over the spans of `a` and `b`, chunk by chunk.
///
/// # Safety
/// As [`Source::fill_span`] for the common extent of `a` and `b`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn zip_span<A: Source + ?Sized, B: Source<Shape = A::Shape> + ?Sized, U>(
    a: &A,
    b: &B,
    extent: A::Shape,
    ncols: usize,
    row: usize,
    cols: Range<usize>,
    out: *mut U,
    f: impl Fn(A::Elem, B::Elem) -> U,
) {
    let mut buf_a = [std::mem::MaybeUninit::<A::Elem>::uninit(); CHUNK];
    let mut buf_b = [std::mem::MaybeUninit::<B::Elem>::uninit(); CHUNK];
    let mut c = cols.start;
    while c < cols.end {
        let n = CHUNK.min(cols.end - c);
        // SAFETY: the chunk lies inside the span; the buffers hold CHUNK elements.
        unsafe {
            a.fill_span(extent, ncols, row, c..c + n, buf_a.as_mut_ptr().cast());
            b.fill_span(extent, ncols, row, c..c + n, buf_b.as_mut_ptr().cast());
        }
        for k in 0..n {
            // SAFETY: fill_span initialised both buffers up to n.
            unsafe {
                let v = f(buf_a[k].assume_init(), buf_b[k].assume_init());
                out.add(c - cols.start + k).write(v);
            }
        }
        c += n;
    }
}

/// Elements per chunk when a span is evaluated through a stack buffer.
pub(crate) const CHUNK: usize = 256;

/// Fills a span of `out` with `f` applied to the span of `a`, chunk by chunk through a
/// stack buffer, so a non-linear source (a stencil) still fills whole spans at a time.
///
/// # Safety
/// As [`Source::fill_span`] for `a`'s extent.
#[inline(always)]
pub(crate) unsafe fn map_span<A: Source + ?Sized, U>(
    a: &A,
    extent: A::Shape,
    ncols: usize,
    row: usize,
    cols: Range<usize>,
    out: *mut U,
    f: impl Fn(A::Elem) -> U,
) {
    let mut buf = [std::mem::MaybeUninit::<A::Elem>::uninit(); CHUNK];
    let mut c = cols.start;
    while c < cols.end {
        let n = CHUNK.min(cols.end - c);
        // SAFETY: the chunk lies inside the span; `buf` holds CHUNK elements.
        unsafe { a.fill_span(extent, ncols, row, c..c + n, buf.as_mut_ptr().cast()) };
        for (k, v) in buf[..n].iter().enumerate() {
            // SAFETY: fill_span initialised buf[..n]; out is writable for the span.
            unsafe { out.add(c - cols.start + k).write(f(v.assume_init())) };
        }
        c += n;
    }
}

// SAFETY: every method forwards to the referenced source, which upholds the contract.
unsafe impl<A: Source + ?Sized> Source for &A {
    type Elem = A::Elem;
    type Shape = A::Shape;
    const LINEAR: bool = A::LINEAR;
    #[inline(always)]
    fn extent(&self) -> Self::Shape {
        (**self).extent()
    }
    #[inline(always)]
    fn index(&self, idx: Self::Shape) -> Self::Elem {
        (**self).index(idx)
    }
    #[inline(always)]
    fn linear_index(&self, i: usize) -> Self::Elem {
        (**self).linear_index(i)
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: Self::Shape) -> Self::Elem {
        // SAFETY: forwarded contract.
        unsafe { (**self).index_unchecked(idx) }
    }
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> Self::Elem {
        // SAFETY: forwarded contract.
        unsafe { (**self).linear_index_unchecked(i) }
    }
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: Self::Shape,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
        out: *mut Self::Elem,
    ) {
        // SAFETY: forwarded contract.
        unsafe { (**self).fill_span(extent, ncols, row, cols, out) }
    }
    #[inline(always)]
    unsafe fn span_slice(
        &self,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
    ) -> Option<&[Self::Elem]> {
        // SAFETY: forwarded contract.
        unsafe { (**self).span_slice(ncols, row, cols) }
    }
}

/// Writes shared by the threads of a parallel load; each thread writes a disjoint band.
///
/// # Safety
/// Implementors must make `write` sound for concurrent calls at distinct positions.
pub unsafe trait Writer<T>: Sync {
    /// Writes `v` at linear position `i`, which is flattened `(row, col)`.
    ///
    /// # Safety
    /// `i` must be inside the target and no other call may write `i` concurrently.
    unsafe fn write(&self, i: usize, row: usize, col: usize, v: T);

    /// A pointer to `len` contiguous positions from linear position `i`, when the target
    /// is contiguous memory; `None` makes loads write element by element.
    ///
    /// # Safety
    /// `i..i + len` must be inside the target and owned by the calling thread.
    #[inline(always)]
    unsafe fn span_ptr(&self, i: usize, len: usize) -> Option<*mut T> {
        let _ = (i, len);
        None
    }
}

/// An array that can be written: explicit storage, a mutable foreign view, or a delayed
/// target (a write function, Yarr's `DT`).
///
/// The trait is safe to implement: nothing trusts its answers for memory safety. A load
/// hands the writer positions inside `extent()`, and the writers that reach memory
/// ([`SliceWriter`]) check every position and span against their buffer, so a target whose
/// extent claims more elements than its writer holds makes the load panic, never write
/// past the buffer.
pub trait Target {
    /// The element type.
    type Elem: Copy + Send + Sync;
    /// The shape type.
    type Shape: Shape;
    /// The writer handed to the threads of a load.
    type Writer<'w>: Writer<Self::Elem>
    where
        Self: 'w;

    /// The extent of the target.
    fn extent(&self) -> Self::Shape;

    /// A writer over the whole target, valid while the target is mutably borrowed.
    fn writer(&mut self) -> Self::Writer<'_>;

    /// Writes `v` at shape index `idx`; panics when `idx` is outside the extent.
    #[track_caller]
    fn write(&mut self, idx: Self::Shape, v: Self::Elem) {
        let extent = self.extent();
        if !extent.contains(idx) {
            crate::error::index_out_of_bounds(idx, extent);
        }
        let i = extent.to_linear(idx);
        let (_, cols) = extent.rows_cols();
        let writer = self.writer();
        // SAFETY: `i` is inside the extent and we hold the target exclusively.
        unsafe { writer.write(i, i / cols, i % cols, v) }
    }

    /// Writes `v` at linear position `i`; panics when `i` is outside the extent.
    #[track_caller]
    fn linear_write(&mut self, i: usize, v: Self::Elem) {
        let extent = self.extent();
        if i >= extent.size() {
            crate::error::index_out_of_bounds(i, extent.size());
        }
        let (_, cols) = extent.rows_cols();
        let writer = self.writer();
        // SAFETY: `i` is inside the extent and we hold the target exclusively.
        unsafe { writer.write(i, i / cols, i % cols, v) }
    }
}

/// A writer into contiguous memory, shared between threads writing disjoint positions.
#[derive(Debug)]
pub struct SliceWriter<'w, T> {
    ptr: *mut T,
    len: usize,
    _borrow: std::marker::PhantomData<&'w mut [T]>,
}

impl<'w, T> SliceWriter<'w, T> {
    /// A writer over `len` elements from `ptr`, which may be uninitialised.
    ///
    /// # Safety
    /// `ptr` must be valid for `len` writes, exclusively, for `'w`.
    pub(crate) unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        SliceWriter {
            ptr,
            len,
            _borrow: std::marker::PhantomData,
        }
    }

    /// A writer over `slice`, which stays mutably borrowed while the writer lives.
    pub fn new(slice: &'w mut [T]) -> Self {
        SliceWriter {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _borrow: std::marker::PhantomData,
        }
    }
}

// SAFETY: the writer owns an exclusive borrow; concurrent writes go to distinct positions
// by the contract of `Writer::write`, so sharing it is like splitting the slice.
unsafe impl<T: Send> Sync for SliceWriter<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SliceWriter<'_, T> {}

/// Panics for a write outside a writer's buffer.
#[cold]
#[track_caller]
fn write_out_of_bounds(start: usize, len: usize, buffer: usize) -> ! {
    panic!(
        "load writes positions {start}..{} of a target buffer of {buffer} elements \
         (the target's extent and its writer disagree)",
        start.saturating_add(len)
    )
}

// SAFETY: every write and span is checked against the borrowed length (in release builds
// too, since a safe `Target` can pair any extent with any writer), and the caller keeps
// concurrent positions distinct.
unsafe impl<T: Send + Copy> Writer<T> for SliceWriter<'_, T> {
    #[inline(always)]
    unsafe fn write(&self, i: usize, _row: usize, _col: usize, v: T) {
        if i >= self.len {
            write_out_of_bounds(i, 1, self.len);
        }
        // SAFETY: i < self.len (checked above); `ptr` is valid for `len` writes.
        unsafe { self.ptr.add(i).write(v) }
    }
    #[inline(always)]
    unsafe fn span_ptr(&self, i: usize, len: usize) -> Option<*mut T> {
        match i.checked_add(len) {
            Some(end) if end <= self.len => {}
            _ => write_out_of_bounds(i, len, self.len),
        }
        // SAFETY: i + len <= self.len (checked above), so the span is inside the buffer.
        Some(unsafe { self.ptr.add(i) })
    }
}
