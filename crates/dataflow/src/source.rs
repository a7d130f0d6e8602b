//! The `Source` and `Target` traits (Yarr's `USource`/`UTarget`): reading and writing by
//! shape index or by linear index, and the writers that parallel loads share between threads.

use crate::shape::Shape;

/// An array that can be read: explicit storage, a foreign view, or a delayed function.
///
/// Reading never allocates; a chain of delayed adaptors over sources is itself a source, so
/// a whole chain runs as one loop when it is loaded or walked.
pub trait Source: Sync {
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
}

impl<A: Source + ?Sized> Source for &A {
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
}

/// An array that can be written: explicit storage, a mutable foreign view, or a delayed
/// target (a write function, Yarr's `DT`).
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

// SAFETY: writes stay inside the borrowed slice (debug-checked) and the caller keeps
// concurrent positions distinct.
unsafe impl<T: Send + Copy> Writer<T> for SliceWriter<'_, T> {
    #[inline(always)]
    unsafe fn write(&self, i: usize, _row: usize, _col: usize, v: T) {
        debug_assert!(i < self.len, "write at {i} beyond {}", self.len);
        // SAFETY: see the trait contract.
        unsafe { self.ptr.add(i).write(v) }
    }
}
