//! Delayed arrays (Yarr's `D`): index -> element functions, and the fusing adaptors
//! (`map`, `zip_with`, `imap`, `izip`, `traverse`, `map_elems`, `zip_elems`,
//! `cart_product2/3`) that build them without allocating.

use crate::error::{index_out_of_bounds, Error};
use crate::shape::{Dim1, Dim2, Dim3, Shape};
use std::ops::Range;

use crate::explicit::Array;
use crate::source::{
    fill_span_by_elements, map_span, zip_span, SliceWriter, Source, Target, Writer,
};

/// A delayed array: an extent and a function from index to element.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct Delayed<S, F> {
    extent: S,
    f: F,
}

/// Builds a delayed array from its extent and index function (Yarr's `fromFunction`).
pub fn from_fn<S: Shape, T, F: Fn(S) -> T>(extent: S, f: F) -> Delayed<S, F> {
    Delayed { extent, f }
}

// SAFETY: the extent is a field set once; reads call `f`, which touches no memory of ours.
unsafe impl<S: Shape, T: Copy + Send + Sync, F: Fn(S) -> T + Sync> Source for Delayed<S, F> {
    type Elem = T;
    type Shape = S;
    const LINEAR: bool = false;
    #[inline(always)]
    fn extent(&self) -> S {
        self.extent
    }
    #[inline(always)]
    #[track_caller]
    fn index(&self, idx: S) -> T {
        if !self.extent.contains(idx) {
            index_out_of_bounds(idx, self.extent);
        }
        (self.f)(idx)
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: S) -> T {
        (self.f)(idx)
    }
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> T {
        (self.f)(self.extent.index_at(i))
    }
}

/// `map`: an element-wise function over one source.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct Map<A, F> {
    a: A,
    f: F,
}

/// `zip_with`: an element-wise function over two sources of equal extent.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct ZipWith<A, B, F> {
    a: A,
    b: B,
    f: F,
}

/// `zip_with3`: an element-wise function over three sources of equal extent.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct ZipWith3<A, B, C, F> {
    a: A,
    b: B,
    c: C,
    f: F,
}

/// `imap`: an element-wise function that also sees the index.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct IMap<A, F> {
    a: A,
    f: F,
}

/// `izip`: a function of the index and two elements.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct IZip<A, B, F> {
    a: A,
    b: B,
    f: F,
}

/// `traverse`: a new extent whose elements are computed from the whole source.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct Traverse<A, S, F> {
    a: A,
    extent: S,
    f: F,
}

/// `cart_product2`: `f(a[i], b[j])` over the Cartesian product of two 1-D sources.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct CartProduct2<A, B, F> {
    a: A,
    b: B,
    f: F,
}

/// `cart_product3`: `f(a[i], b[j], c[k])` over the product of three 1-D sources.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct CartProduct3<A, B, C, F> {
    a: A,
    b: B,
    c: C,
    f: F,
}

fn same_extent<S: Shape>(operation: &'static str, a: S, b: S) -> Result<(), Error> {
    if a == b {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            operation,
            expected: a.dims(),
            got: b.dims(),
        })
    }
}

/// Fusing adaptors, available on every [`Source`]; each returns a delayed array.
pub trait SourceExt: Source + Sized {
    /// `f` applied to every element (Yarr's `dmap`).
    fn map<U, F: Fn(Self::Elem) -> U + Sync>(self, f: F) -> Map<Self, F> {
        Map { a: self, f }
    }

    /// `f` applied to pairs of elements (Yarr's `dzip2`); the extents must be equal.
    fn zip_with<B: Source<Shape = Self::Shape>, U, F: Fn(Self::Elem, B::Elem) -> U + Sync>(
        self,
        b: B,
        f: F,
    ) -> Result<ZipWith<Self, B, F>, Error> {
        same_extent("zip_with", self.extent(), b.extent())?;
        Ok(ZipWith { a: self, b, f })
    }

    /// `f` applied to triples of elements (Yarr's `dzip3`); the extents must be equal.
    fn zip_with3<B, C, U, F>(self, b: B, c: C, f: F) -> Result<ZipWith3<Self, B, C, F>, Error>
    where
        B: Source<Shape = Self::Shape>,
        C: Source<Shape = Self::Shape>,
        F: Fn(Self::Elem, B::Elem, C::Elem) -> U + Sync,
    {
        same_extent("zip_with3", self.extent(), b.extent())?;
        same_extent("zip_with3", self.extent(), c.extent())?;
        Ok(ZipWith3 { a: self, b, c, f })
    }

    /// `f(index, element)` for every element (Yarr's `imap`).
    fn imap<U, F: Fn(Self::Shape, Self::Elem) -> U + Sync>(self, f: F) -> IMap<Self, F> {
        IMap { a: self, f }
    }

    /// `f(index, a, b)` over two sources of equal extent (Yarr's `izip2`).
    fn izip<
        B: Source<Shape = Self::Shape>,
        U,
        F: Fn(Self::Shape, Self::Elem, B::Elem) -> U + Sync,
    >(
        self,
        b: B,
        f: F,
    ) -> Result<IZip<Self, B, F>, Error> {
        same_extent("izip", self.extent(), b.extent())?;
        Ok(IZip { a: self, b, f })
    }

    /// A delayed array of `extent` whose element at `idx` is `f(&self, idx)` (Repa's
    /// `traverse`): transposes, crops, stencils written by hand.
    fn traverse<S2: Shape, U, F: Fn(&Self, S2) -> U + Sync>(
        self,
        extent: S2,
        f: F,
    ) -> Traverse<Self, S2, F> {
        Traverse { a: self, extent, f }
    }

    /// `f` applied to every component of vector elements (Yarr's `dmapElems`).
    #[allow(clippy::type_complexity)]
    fn map_elems<T, U, const N: usize, F>(self, f: F) -> Map<Self, impl Fn([T; N]) -> [U; N] + Sync>
    where
        Self: Source<Elem = [T; N]>,
        F: Fn(T) -> U + Sync,
    {
        self.map(move |v: [T; N]| v.map(&f))
    }

    /// `f` applied component by component to two arrays of vectors (Yarr's `dzipElems`).
    #[allow(clippy::type_complexity)]
    fn zip_elems<B, T, V, U, const N: usize, F>(
        self,
        b: B,
        f: F,
    ) -> Result<ZipWith<Self, B, impl Fn([T; N], [V; N]) -> [U; N] + Sync>, Error>
    where
        Self: Source<Elem = [T; N]>,
        B: Source<Shape = Self::Shape, Elem = [V; N]>,
        T: Copy,
        V: Copy,
        F: Fn(T, V) -> U + Sync,
    {
        self.zip_with(b, move |x: [T; N], y: [V; N]| {
            std::array::from_fn(|k| f(x[k], y[k]))
        })
    }

    /// A bounds-checked wrapper (Yarr's `CHK`): every read checks the index against the
    /// extent, axis by axis, and panics naming both.
    fn checked(self) -> Checked<Self> {
        Checked { a: self }
    }
}

impl<A: Source> SourceExt for A {}

/// `f(a[i], b[j])` over `Dim2(len a, len b)`.
pub fn cart_product2<A, B, U, F>(a: A, b: B, f: F) -> CartProduct2<A, B, F>
where
    A: Source<Shape = Dim1>,
    B: Source<Shape = Dim1>,
    F: Fn(A::Elem, B::Elem) -> U + Sync,
{
    CartProduct2 { a, b, f }
}

/// `f(a[i], b[j], c[k])` over `Dim3(len a, len b, len c)`.
pub fn cart_product3<A, B, C, U, F>(a: A, b: B, c: C, f: F) -> CartProduct3<A, B, C, F>
where
    A: Source<Shape = Dim1>,
    B: Source<Shape = Dim1>,
    C: Source<Shape = Dim1>,
    F: Fn(A::Elem, B::Elem, C::Elem) -> U + Sync,
{
    CartProduct3 { a, b, c, f }
}

// SAFETY: extent and reads are the operand's; `fill_span` writes the span through the
// operand's `fill_span` (`map_span`) or element by element.
unsafe impl<A: Source, U: Copy + Send + Sync, F: Fn(A::Elem) -> U + Sync> Source for Map<A, F> {
    type Elem = U;
    type Shape = A::Shape;
    const LINEAR: bool = A::LINEAR;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.a.extent()
    }
    #[inline(always)]
    fn index(&self, idx: A::Shape) -> U {
        (self.f)(self.a.index(idx))
    }
    #[inline(always)]
    fn linear_index(&self, i: usize) -> U {
        (self.f)(self.a.linear_index(i))
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> U {
        // SAFETY: forwarded contract.
        (self.f)(unsafe { self.a.index_unchecked(idx) })
    }
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> U {
        // SAFETY: forwarded contract.
        (self.f)(unsafe { self.a.linear_index_unchecked(i) })
    }
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: A::Shape,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
        out: *mut U,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            if A::LINEAR {
                fill_span_by_elements(self, extent, ncols, row, cols, out)
            } else {
                map_span(&self.a, extent, ncols, row, cols, out, &self.f)
            }
        }
    }
}

// SAFETY: the operands' extents were equal at construction and stay so (their contract);
// `fill_span` writes the span chunk by chunk (`zip_span`) or element by element.
unsafe impl<A, B, U, F> Source for ZipWith<A, B, F>
where
    A: Source,
    B: Source<Shape = A::Shape>,
    U: Copy + Send + Sync,
    F: Fn(A::Elem, B::Elem) -> U + Sync,
{
    type Elem = U;
    type Shape = A::Shape;
    const LINEAR: bool = A::LINEAR && B::LINEAR;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.a.extent()
    }
    #[inline(always)]
    fn index(&self, idx: A::Shape) -> U {
        (self.f)(self.a.index(idx), self.b.index(idx))
    }
    #[inline(always)]
    fn linear_index(&self, i: usize) -> U {
        (self.f)(self.a.linear_index(i), self.b.linear_index(i))
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> U {
        // SAFETY: both operands share the extent (checked at construction).
        unsafe { (self.f)(self.a.index_unchecked(idx), self.b.index_unchecked(idx)) }
    }
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> U {
        // SAFETY: as above.
        unsafe {
            (self.f)(
                self.a.linear_index_unchecked(i),
                self.b.linear_index_unchecked(i),
            )
        }
    }
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: A::Shape,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
        out: *mut U,
    ) {
        // SAFETY: forwarded contract; both operands share the extent.
        unsafe {
            if Self::LINEAR {
                fill_span_by_elements(self, extent, ncols, row, cols, out)
            } else {
                zip_span(&self.a, &self.b, extent, ncols, row, cols, out, &self.f)
            }
        }
    }
}

// SAFETY: the operands' extents were equal at construction and stay so; the span fill is
// the element-by-element default.
unsafe impl<A, B, C, U, F> Source for ZipWith3<A, B, C, F>
where
    A: Source,
    B: Source<Shape = A::Shape>,
    C: Source<Shape = A::Shape>,
    U: Copy + Send + Sync,
    F: Fn(A::Elem, B::Elem, C::Elem) -> U + Sync,
{
    type Elem = U;
    type Shape = A::Shape;
    const LINEAR: bool = A::LINEAR && B::LINEAR && C::LINEAR;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.a.extent()
    }
    #[inline(always)]
    fn index(&self, idx: A::Shape) -> U {
        (self.f)(self.a.index(idx), self.b.index(idx), self.c.index(idx))
    }
    #[inline(always)]
    fn linear_index(&self, i: usize) -> U {
        (self.f)(
            self.a.linear_index(i),
            self.b.linear_index(i),
            self.c.linear_index(i),
        )
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> U {
        // SAFETY: the operands share the extent (checked at construction).
        unsafe {
            (self.f)(
                self.a.index_unchecked(idx),
                self.b.index_unchecked(idx),
                self.c.index_unchecked(idx),
            )
        }
    }
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> U {
        // SAFETY: as above.
        unsafe {
            (self.f)(
                self.a.linear_index_unchecked(i),
                self.b.linear_index_unchecked(i),
                self.c.linear_index_unchecked(i),
            )
        }
    }
}

// SAFETY: extent and reads are the operand's; the span fill is the default.
unsafe impl<A: Source, U: Copy + Send + Sync, F: Fn(A::Shape, A::Elem) -> U + Sync> Source
    for IMap<A, F>
{
    type Elem = U;
    type Shape = A::Shape;
    const LINEAR: bool = false;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.a.extent()
    }
    #[inline(always)]
    fn index(&self, idx: A::Shape) -> U {
        (self.f)(idx, self.a.index(idx))
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> U {
        // SAFETY: forwarded contract.
        (self.f)(idx, unsafe { self.a.index_unchecked(idx) })
    }
}

// SAFETY: the operands' extents were equal at construction and stay so; the span fill is
// the default.
unsafe impl<A, B, U, F> Source for IZip<A, B, F>
where
    A: Source,
    B: Source<Shape = A::Shape>,
    U: Copy + Send + Sync,
    F: Fn(A::Shape, A::Elem, B::Elem) -> U + Sync,
{
    type Elem = U;
    type Shape = A::Shape;
    const LINEAR: bool = false;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.a.extent()
    }
    #[inline(always)]
    fn index(&self, idx: A::Shape) -> U {
        (self.f)(idx, self.a.index(idx), self.b.index(idx))
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> U {
        // SAFETY: the operands share the extent.
        unsafe {
            (self.f)(
                idx,
                self.a.index_unchecked(idx),
                self.b.index_unchecked(idx),
            )
        }
    }
}

// SAFETY: the extent is a field set once; reads call `f` with a safe reference to the
// operand, so they touch no memory unchecked.
unsafe impl<A: Source, S: Shape, U: Copy + Send + Sync, F: Fn(&A, S) -> U + Sync> Source
    for Traverse<A, S, F>
{
    type Elem = U;
    type Shape = S;
    const LINEAR: bool = false;
    #[inline(always)]
    fn extent(&self) -> S {
        self.extent
    }
    #[inline(always)]
    #[track_caller]
    fn index(&self, idx: S) -> U {
        if !self.extent.contains(idx) {
            index_out_of_bounds(idx, self.extent);
        }
        (self.f)(&self.a, idx)
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: S) -> U {
        (self.f)(&self.a, idx)
    }
}

// SAFETY: the extent is the product of the operands' (constant) extents, so an index
// inside it is inside both operands.
unsafe impl<A, B, U, F> Source for CartProduct2<A, B, F>
where
    A: Source<Shape = Dim1>,
    B: Source<Shape = Dim1>,
    U: Copy + Send + Sync,
    F: Fn(A::Elem, B::Elem) -> U + Sync,
{
    type Elem = U;
    type Shape = Dim2;
    const LINEAR: bool = false;
    #[inline(always)]
    fn extent(&self) -> Dim2 {
        Dim2(self.a.extent().0, self.b.extent().0)
    }
    #[inline(always)]
    fn index(&self, idx: Dim2) -> U {
        (self.f)(self.a.index(Dim1(idx.0)), self.b.index(Dim1(idx.1)))
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: Dim2) -> U {
        // SAFETY: idx inside the product extent means both parts are inside.
        unsafe {
            (self.f)(
                self.a.index_unchecked(Dim1(idx.0)),
                self.b.index_unchecked(Dim1(idx.1)),
            )
        }
    }
}

// SAFETY: as for `CartProduct2`; reads go through the operands' checked `index`.
unsafe impl<A, B, C, U, F> Source for CartProduct3<A, B, C, F>
where
    A: Source<Shape = Dim1>,
    B: Source<Shape = Dim1>,
    C: Source<Shape = Dim1>,
    U: Copy + Send + Sync,
    F: Fn(A::Elem, B::Elem, C::Elem) -> U + Sync,
{
    type Elem = U;
    type Shape = Dim3;
    const LINEAR: bool = false;
    #[inline(always)]
    fn extent(&self) -> Dim3 {
        Dim3(self.a.extent().0, self.b.extent().0, self.c.extent().0)
    }
    #[inline(always)]
    fn index(&self, idx: Dim3) -> U {
        (self.f)(
            self.a.index(Dim1(idx.0)),
            self.b.index(Dim1(idx.1)),
            self.c.index(Dim1(idx.2)),
        )
    }
}

/// The bounds-checked wrapper returned by [`SourceExt::checked`] (Yarr's `CHK`).
#[derive(Clone, Copy, Debug)]
pub struct Checked<A> {
    a: A,
}

// SAFETY: extent is the operand's; every read, unchecked ones included, is checked.
unsafe impl<A: Source> Source for Checked<A> {
    type Elem = A::Elem;
    type Shape = A::Shape;
    const LINEAR: bool = A::LINEAR;
    fn extent(&self) -> A::Shape {
        self.a.extent()
    }
    #[track_caller]
    fn index(&self, idx: A::Shape) -> A::Elem {
        let extent = self.a.extent();
        if !extent.contains(idx) {
            index_out_of_bounds(idx, extent);
        }
        self.a.index(idx)
    }
    #[track_caller]
    fn linear_index(&self, i: usize) -> A::Elem {
        let size = self.a.extent().size();
        if i >= size {
            index_out_of_bounds(i, size);
        }
        self.a.linear_index(i)
    }
    unsafe fn index_unchecked(&self, idx: A::Shape) -> A::Elem {
        self.index(idx)
    }
    unsafe fn linear_index_unchecked(&self, i: usize) -> A::Elem {
        self.linear_index(i)
    }
}

/// One component of an array of vectors, e.g. the red channel of RGB pixels (Yarr's `FS`
/// slices); reads through to the original array without copying.
#[derive(Clone, Copy, Debug)]
pub struct ComponentSlice<A> {
    a: A,
    component: usize,
}

/// The `N` component slices of an array of `[T; N]` vectors.
pub fn slices<A, T, const N: usize>(a: A) -> [ComponentSlice<A>; N]
where
    A: Source<Elem = [T; N]> + Copy,
{
    std::array::from_fn(|component| ComponentSlice { a, component })
}

// SAFETY: extent and positions are the operand's; the component is below N by
// construction (`slices`).
unsafe impl<A: Source<Elem = [T; N]>, T: Copy + Send + Sync, const N: usize> Source
    for ComponentSlice<A>
{
    type Elem = T;
    type Shape = A::Shape;
    const LINEAR: bool = A::LINEAR;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.a.extent()
    }
    #[inline(always)]
    fn index(&self, idx: A::Shape) -> T {
        self.a.index(idx)[self.component]
    }
    #[inline(always)]
    fn linear_index(&self, i: usize) -> T {
        self.a.linear_index(i)[self.component]
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> T {
        // SAFETY: forwarded contract; the component is below N by construction.
        unsafe { *self.a.index_unchecked(idx).get_unchecked(self.component) }
    }
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> T {
        // SAFETY: as above.
        unsafe {
            *self
                .a
                .linear_index_unchecked(i)
                .get_unchecked(self.component)
        }
    }
}

/// An array of vectors stored as `N` separate component arrays (Yarr's `SE`): reading
/// gathers the components, loading slice by slice fills them independently.
#[derive(Clone, Debug, PartialEq)]
pub struct Separate<A, const N: usize> {
    parts: [A; N],
}

impl<A: Source, const N: usize> Separate<A, N> {
    /// Joins `N` component arrays known to have equal extents.
    ///
    /// # Panics
    ///
    /// When two extents differ, naming both; [`Separate::try_new`] returns it as an error.
    #[track_caller]
    pub fn new(parts: [A; N]) -> Self {
        match Self::try_new(parts) {
            Ok(joined) => joined,
            Err(err) => panic!("Separate::new: {err}"),
        }
    }

    /// Joins `N` component arrays of equal extent, else an error naming the two extents.
    pub fn try_new(parts: [A; N]) -> Result<Self, Error> {
        if let Some(first) = parts.first() {
            for p in &parts[1..] {
                same_extent("Separate::try_new", first.extent(), p.extent())?;
            }
        }
        Ok(Separate { parts })
    }

    /// The component arrays.
    pub fn parts(&self) -> &[A; N] {
        &self.parts
    }

    /// The component arrays, by value.
    pub fn into_parts(self) -> [A; N] {
        self.parts
    }
}

// SAFETY: all parts had one extent at construction and keep it (their contract).
unsafe impl<A: Source, const N: usize> Source for Separate<A, N> {
    type Elem = [A::Elem; N];
    type Shape = A::Shape;
    const LINEAR: bool = A::LINEAR;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.parts[0].extent()
    }
    #[inline(always)]
    fn index(&self, idx: A::Shape) -> Self::Elem {
        std::array::from_fn(|k| self.parts[k].index(idx))
    }
    #[inline(always)]
    fn linear_index(&self, i: usize) -> Self::Elem {
        std::array::from_fn(|k| self.parts[k].linear_index(i))
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> Self::Elem {
        // SAFETY: all parts share the extent.
        std::array::from_fn(|k| unsafe { self.parts[k].index_unchecked(idx) })
    }
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> Self::Elem {
        // SAFETY: all parts share the extent.
        std::array::from_fn(|k| unsafe { self.parts[k].linear_index_unchecked(i) })
    }
}

/// The writer of a [`Separate`] target: one element's components go to the `N` arrays.
#[derive(Debug)]
pub struct SeparateWriter<'w, T, const N: usize> {
    parts: [SliceWriter<'w, T>; N],
}

// SAFETY: each component write goes to its own array at the same position, so distinct
// positions written concurrently stay distinct in every part.
unsafe impl<T: Copy + Send, const N: usize> Writer<[T; N]> for SeparateWriter<'_, T, N> {
    #[inline(always)]
    unsafe fn write(&self, i: usize, row: usize, col: usize, v: [T; N]) {
        for (part, c) in self.parts.iter().zip(v) {
            // SAFETY: forwarded contract; every part has the same extent.
            unsafe { part.write(i, row, col, c) };
        }
    }
}

/// Separate component arrays as a load target (Yarr's `SE` target): one pass over an
/// array of vectors writes every component plane.
impl<T: Copy + Send + Sync, S: Shape, const N: usize> Target for Separate<Array<T, S>, N> {
    type Elem = [T; N];
    type Shape = S;
    type Writer<'w>
        = SeparateWriter<'w, T, N>
    where
        Self: 'w;
    fn extent(&self) -> S {
        self.parts[0].extent()
    }
    fn writer(&mut self) -> SeparateWriter<'_, T, N> {
        let mut it = self.parts.iter_mut();
        SeparateWriter {
            parts: std::array::from_fn(|_| {
                SliceWriter::new(it.next().expect("N parts").as_mut_slice())
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explicit::View;

    #[test]
    fn adaptors_read_like_their_definitions() {
        let xs: Vec<i32> = (0..12).collect();
        let ys: Vec<i32> = (0..12).map(|v| v * v).collect();
        let a = View::new(Dim2(3, 4), &xs);
        let b = View::new(Dim2(3, 4), &ys);
        let m = a.map(|v| v + 1);
        assert_eq!(m.index(Dim2(1, 1)), 6);
        let z = a.zip_with(b, |x, y| y - x).unwrap();
        assert_eq!(z.linear_index(5), 20);
        let z3 = a.zip_with3(b, a, |x, y, w| x + y + w).unwrap();
        assert_eq!(z3.index(Dim2(2, 3)), 11 + 121 + 11);
        let im = a.imap(|Dim2(y, x), v| (y * 100 + x) as i32 - v);
        assert_eq!(im.index(Dim2(2, 1)), 201 - 9);
        let iz = a
            .izip(b, |Dim2(y, _), v, w| y as i32 * 1000 + v + w)
            .unwrap();
        assert_eq!(iz.index(Dim2(1, 0)), 1000 + 4 + 16);
        let t = a.traverse(Dim2(4, 3), |src, Dim2(y, x)| src.index(Dim2(x, y)));
        assert_eq!(t.index(Dim2(3, 2)), 11);
        assert!(matches!(
            a.zip_with(View::new(Dim2(4, 3), &xs), |x, _| x),
            Err(Error::ShapeMismatch { .. })
        ));
    }

    #[test]
    fn vector_elements_and_products() {
        let px = vec![[1u8, 2, 3], [4, 5, 6]];
        let v = View::new(Dim1(2), &px);
        assert_eq!(v.map_elems(|c| c as u32 * 10).index(Dim1(1)), [40, 50, 60]);
        assert_eq!(
            v.zip_elems(v, |a, b| a * b).unwrap().index(Dim1(0)),
            [1, 4, 9]
        );
        let [r, g, b] = slices(v);
        assert_eq!(
            (r.index(Dim1(1)), g.index(Dim1(1)), b.index(Dim1(0))),
            (4, 5, 3)
        );
        let sep = Separate::new([r, g, b]);
        assert_eq!(sep.index(Dim1(1)), [4, 5, 6]);
        let mut planes = Separate::new([(); 3].map(|_| Array::filled(Dim1(2), 0u8)));
        crate::load::load(
            &v,
            &mut planes,
            crate::load::Plain,
            crate::load::Threads::Seq,
        );
        let [pr, pg, pb] = planes.into_parts();
        assert_eq!(
            (pr.as_slice(), pg.as_slice(), pb.as_slice()),
            (&[1, 4][..], &[2, 5][..], &[3, 6][..])
        );
        let xs = [1, 2, 3];
        let ys = [10, 20];
        let x = View::new(Dim1(3), &xs[..]);
        let y = View::new(Dim1(2), &ys[..]);
        let p = cart_product2(x, y, |a, b| a * b);
        assert_eq!(p.extent(), Dim2(3, 2));
        assert_eq!(p.index(Dim2(2, 1)), 60);
        let p3 = cart_product3(x, y, x, |a, b, c| a + b + c);
        assert_eq!(p3.index(Dim3(0, 1, 2)), 1 + 20 + 3);
    }

    #[test]
    #[should_panic(expected = "index Dim2(0, 4) out of bounds for an array of extent Dim2(3, 4)")]
    fn checked_reads_catch_row_overrun() {
        let xs: Vec<i32> = (0..12).collect();
        let a = View::new(Dim2(3, 4), &xs).checked();
        let _ = a.index(Dim2(0, 4));
    }

    #[test]
    fn separate_refuses_components_of_different_extents() {
        let (a, b) = (Array::filled(Dim1(2), 0u8), Array::filled(Dim1(3), 0u8));
        assert_eq!(
            Separate::try_new([a.clone(), b.clone()]).unwrap_err(),
            Error::ShapeMismatch {
                operation: "Separate::try_new",
                expected: Dim1(2).dims(),
                got: Dim1(3).dims(),
            }
        );
    }

    #[test]
    #[should_panic(expected = "Separate::new: ")]
    fn separate_new_panics_on_components_of_different_extents() {
        let _ = Separate::new([Array::filled(Dim1(2), 0u8), Array::filled(Dim1(3), 0u8)]);
    }
}
