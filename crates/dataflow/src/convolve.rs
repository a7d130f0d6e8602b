//! Convolution with static stencils (Yarr's `CV` representation): const-generic 1-D and
//! 2-D stencils, a centre read without bounds checks and a border read through one of
//! OpenCV's border modes.
//!
//! Stencils are applied as correlation, like OpenCV's `filter2D`/`sepFilter2D`:
//! `out(y, x) = sum taps[i][j] * src(y + i - H/2, x + j - W/2)`.

use std::ops::{Add, Mul, Sub};

use std::mem::MaybeUninit;
use std::ops::Range;

use crate::shape::{Block, Clipped, Dim2, Margin, Shape};
use crate::source::{checked_index, fill_span_by_elements, Source, CHUNK};

/// The widest stencil (minus one) whose spans are evaluated row-vectorised; wider ones are
/// evaluated element by element.
const HALO: usize = 64;

/// Reads `len <= CHUNK + HALO` elements of flattened row `row` from column `c0`, as `K`.
///
/// # Safety
/// The span must lie inside `a`'s extent.
#[inline(always)]
unsafe fn read_k<A: Source, K: Tap + From<A::Elem>>(
    a: &A,
    extent: A::Shape,
    ncols: usize,
    row: usize,
    c0: usize,
    len: usize,
    kbuf: &mut [K; CHUNK + HALO],
) {
    // SAFETY: the caller keeps the span inside the extent.
    if let Some(slice) = unsafe { a.span_slice(ncols, row, c0..c0 + len) } {
        for (k, &v) in kbuf[..len].iter_mut().zip(slice) {
            *k = K::from(v);
        }
        return;
    }
    let mut tmp = [MaybeUninit::<A::Elem>::uninit(); CHUNK + HALO];
    // SAFETY: the caller keeps the span inside the extent; tmp holds CHUNK + HALO elements.
    unsafe { a.fill_span(extent, ncols, row, c0..c0 + len, tmp.as_mut_ptr().cast()) };
    for (k, v) in kbuf[..len].iter_mut().zip(&tmp[..len]) {
        // SAFETY: fill_span initialised tmp[..len].
        *k = K::from(unsafe { v.assume_init() });
    }
}

/// `acc[x] += tap * src[x]` for a whole chunk, with the same tap rules (and so the same
/// results) as [`accumulate`], decided once per chunk instead of once per element.
#[inline(always)]
fn accumulate_row<K: Tap>(acc: &mut [K], tap: K, src: &[K]) {
    if tap == K::ZERO {
    } else if tap == K::ONE {
        acc.iter_mut().zip(src).for_each(|(a, &v)| *a = *a + v);
    } else if tap == K::MINUS_ONE {
        acc.iter_mut().zip(src).for_each(|(a, &v)| *a = *a - v);
    } else {
        acc.iter_mut()
            .zip(src)
            .for_each(|(a, &v)| *a = *a + tap * v);
    }
}

/// As [`accumulate_row`], converting each source element on the way.
#[inline(always)]
fn accumulate_converted<E: Copy, K: Tap + From<E>>(acc: &mut [K], tap: K, src: &[E]) {
    if tap == K::ZERO {
    } else if tap == K::ONE {
        acc.iter_mut()
            .zip(src)
            .for_each(|(a, &v)| *a = *a + K::from(v));
    } else if tap == K::MINUS_ONE {
        acc.iter_mut()
            .zip(src)
            .for_each(|(a, &v)| *a = *a - K::from(v));
    } else {
        acc.iter_mut()
            .zip(src)
            .for_each(|(a, &v)| *a = *a + tap * K::from(v));
    }
}

/// Writes `acc[..n]` to `out`.
///
/// # Safety
/// `out` must be writable for `n` elements.
#[inline(always)]
unsafe fn store<K: Copy>(acc: &[K], out: *mut K) {
    for (k, &v) in acc.iter().enumerate() {
        // SAFETY: the caller's contract.
        unsafe { out.add(k).write(v) };
    }
}

/// The part of `cols` whose stencil reads stay inside `0..ncols` for radius `r`.
fn centre_cols(cols: &Range<usize>, ncols: usize, r: usize) -> Range<usize> {
    let lo = r.min(ncols);
    let hi = ncols.saturating_sub(r).max(lo);
    let c_lo = cols.start.max(lo).min(cols.end);
    let c_hi = cols.end.min(hi).max(c_lo);
    c_lo..c_hi
}

/// The numeric type of stencil taps and sums.
pub trait Tap:
    Copy + Send + Sync + PartialEq + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self>
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// Minus one.
    const MINUS_ONE: Self;
}

macro_rules! tap {
    ($($t:ty: $z:expr, $o:expr;)*) => {$(
        impl Tap for $t {
            const ZERO: Self = $z;
            const ONE: Self = $o;
            const MINUS_ONE: Self = -$o;
        }
    )*};
}
tap! { i16: 0, 1; i32: 0, 1; i64: 0, 1; f32: 0.0, 1.0; f64: 0.0, 1.0; }

/// Unsigned taps: `MINUS_ONE` is the all-ones value (minus one modulo 2^16), so a `-1`
/// tap subtracts; sums must stay inside `0..=u16::MAX`, as for the 8-bit blur's row pass.
impl Tap for u16 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
    const MINUS_ONE: Self = u16::MAX;
}

/// `acc + tap * v`, with zero taps dropped and +-1 taps not multiplied; for a stencil known
/// at compile time the tests fold away.
#[inline(always)]
fn accumulate<K: Tap>(acc: K, tap: K, v: K) -> K {
    if tap == K::ZERO {
        acc
    } else if tap == K::ONE {
        acc + v
    } else if tap == K::MINUS_ONE {
        acc - v
    } else {
        acc + tap * v
    }
}

/// How reads outside the array are answered (OpenCV's `BorderTypes`).
///
/// With `|` marking the array edges and `abcdefgh` its elements:
/// `Constant(i)`: `iiiiii|abcdefgh|iiiiiii`; `Replicate`: `aaaaaa|abcdefgh|hhhhhhh`;
/// `Reflect`: `fedcba|abcdefgh|hgfedcb`; `Reflect101`: `gfedcb|abcdefgh|gfedcba`;
/// `Wrap`: `cdefgh|abcdefgh|abcdefg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Border<T> {
    /// A fixed value outside.
    Constant(T),
    /// The nearest edge element (Yarr's clamp).
    Replicate,
    /// Mirror including the edge element.
    Reflect,
    /// Mirror excluding the edge element (OpenCV's default).
    #[default]
    Reflect101,
    /// Periodic.
    Wrap,
}

/// The position inside `0..len` that border mode `border` reads for position `p`
/// (OpenCV's `borderInterpolate`), in constant time whatever the distance.
///
/// `None` for a constant border outside the array, and for an empty axis (`len == 0`),
/// which has no position to read (OpenCV asserts there; its reflect loop would not end).
pub fn border_interpolate<T>(p: isize, len: usize, border: &Border<T>) -> Option<usize> {
    if len == 0 {
        return None;
    }
    if let Ok(inside) = usize::try_from(p) {
        if inside < len {
            return Some(inside);
        }
    }
    // In i128 neither `2 * len` nor any difference below can overflow.
    let (p, n) = (p as i128, len as i128);
    let q = match border {
        Border::Constant(_) => return None,
        Border::Replicate => {
            if p < 0 {
                0
            } else {
                n - 1
            }
        }
        Border::Reflect | Border::Reflect101 => {
            if len == 1 {
                return Some(0);
            }
            // The mirrored sequence repeats every `2 len` positions (`2 len - 2` when the
            // edge element is not repeated): `abc|cba|abc..` or `abc|ba|bc..`.
            let delta = i128::from(matches!(border, Border::Reflect101));
            let period = 2 * n - 2 * delta;
            let r = p.rem_euclid(period);
            if r < n {
                r
            } else {
                period - 1 - r + delta
            }
        }
        Border::Wrap => p.rem_euclid(n),
    };
    // 0 <= q < len, so the conversion is exact.
    Some(q as usize)
}

/// A 1-D stencil of `N` taps (odd `N`; anchor at the middle).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stencil1<K, const N: usize> {
    /// The taps, first applied at offset `-N/2`.
    pub taps: [K; N],
}

/// A 2-D stencil of `H x W` taps (odd sizes; anchor at the middle).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stencil2<K, const H: usize, const W: usize> {
    /// The taps, row by row, first applied at offset `(-H/2, -W/2)`.
    pub taps: [[K; W]; H],
}

impl<K: Tap, const N: usize> Stencil1<K, N> {
    /// A stencil from its taps; `N` must be odd (checked at compile time).
    ///
    /// # Panics
    /// If `N` is even (a compile error where the stencil is built in a `const`).
    pub const fn new(taps: [K; N]) -> Self {
        assert!(N % 2 == 1, "stencil sizes must be odd");
        Stencil1 { taps }
    }
}

impl<K: Tap, const H: usize, const W: usize> Stencil2<K, H, W> {
    /// A stencil from its taps; `H` and `W` must be odd (checked at compile time).
    ///
    /// # Panics
    /// If `H` or `W` is even (a compile error where the stencil is built in a `const`).
    pub const fn new(taps: [[K; W]; H]) -> Self {
        assert!(H % 2 == 1 && W % 2 == 1, "stencil sizes must be odd");
        Stencil2 { taps }
    }

    /// The outer product `col x row` of two 1-D stencils (a separable stencil).
    pub fn outer(col: Stencil1<K, H>, row: Stencil1<K, W>) -> Self {
        Stencil2 {
            taps: std::array::from_fn(|i| std::array::from_fn(|j| col.taps[i] * row.taps[j])),
        }
    }
}

/// Reads `a` at flattened `(row, col)` through the border mode, converted to `K`.
#[inline(always)]
fn read_bordered<A: Source, K: Tap + From<A::Elem>>(
    a: &A,
    extent: A::Shape,
    rows: usize,
    cols: usize,
    row: isize,
    col: isize,
    border: &Border<A::Elem>,
) -> K {
    match (
        border_interpolate(row, rows, border),
        border_interpolate(col, cols, border),
    ) {
        // SAFETY: border_interpolate returns positions inside 0..len.
        (Some(r), Some(c)) => K::from(unsafe { a.row_col_unchecked(extent, cols, r, c) }),
        _ => match border {
            Border::Constant(v) => K::from(*v),
            _ => unreachable!("only constant borders leave the array"),
        },
    }
}

/// Convolution along the innermost axis (rows of an image, or a 1-D array).
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct ConvolvedRows<A: Source, K, const N: usize> {
    a: A,
    stencil: Stencil1<K, N>,
    border: Border<A::Elem>,
}

/// Convolution down the columns of a 2-D array.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct ConvolvedCols<A: Source, K, const N: usize> {
    a: A,
    stencil: Stencil1<K, N>,
    border: Border<A::Elem>,
}

/// 2-D convolution of a 2-D array with an `H x W` stencil.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct Convolved2<A: Source, K, const H: usize, const W: usize> {
    a: A,
    stencil: Stencil2<K, H, W>,
    border: Border<A::Elem>,
}

/// Convolves `a` along its innermost axis with `stencil`, reading outside through `border`.
pub fn convolve_rows<A: Source, K: Tap + From<A::Elem>, const N: usize>(
    a: A,
    stencil: Stencil1<K, N>,
    border: Border<A::Elem>,
) -> ConvolvedRows<A, K, N> {
    ConvolvedRows { a, stencil, border }
}

/// Convolves a 2-D `a` down its columns with `stencil`, reading outside through `border`.
pub fn convolve_cols<A: Source<Shape = Dim2>, K: Tap + From<A::Elem>, const N: usize>(
    a: A,
    stencil: Stencil1<K, N>,
    border: Border<A::Elem>,
) -> ConvolvedCols<A, K, N> {
    ConvolvedCols { a, stencil, border }
}

/// Convolves a 2-D `a` with a 2-D `stencil`, reading outside through `border`.
pub fn convolve2<
    A: Source<Shape = Dim2>,
    K: Tap + From<A::Elem>,
    const H: usize,
    const W: usize,
>(
    a: A,
    stencil: Stencil2<K, H, W>,
    border: Border<A::Elem>,
) -> Convolved2<A, K, H, W> {
    Convolved2 { a, stencil, border }
}

impl<A: Source<Shape = Dim2>, K, const H: usize, const W: usize> Convolved2<A, K, H, W> {
    /// The whole extent split into the centre (read without checks) and the border strips.
    pub fn clip(&self) -> Clipped {
        Block::whole(self.a.extent()).clip(Margin {
            top: H / 2,
            bottom: H / 2,
            left: W / 2,
            right: W / 2,
        })
    }
}

// SAFETY: the extent is the operand's (constant by its contract); the centre of a span
// reads the operand only inside it (`centre_cols`), the border through
// `border_interpolate`, and `fill_span` writes exactly the span.
unsafe impl<A, K, const N: usize> Source for ConvolvedRows<A, K, N>
where
    A: Source,
    A::Elem: Sync,
    K: Tap + From<A::Elem>,
{
    type Elem = K;
    type Shape = A::Shape;
    const LINEAR: bool = false;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.a.extent()
    }
    #[inline(always)]
    #[track_caller]
    fn index(&self, idx: A::Shape) -> K {
        checked_index(self, idx)
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> K {
        let extent = self.a.extent();
        let (rows, cols) = extent.rows_cols();
        let flat = extent.to_linear(idx);
        let (row, col) = (flat / cols, flat % cols);
        let r = N / 2;
        let mut acc = K::ZERO;
        if col >= r && col + r < cols {
            for (j, &tap) in self.stencil.taps.iter().enumerate() {
                // SAFETY: the centre keeps col + j - r inside 0..cols.
                let v = unsafe { self.a.row_col_unchecked(extent, cols, row, col + j - r) };
                acc = accumulate(acc, tap, K::from(v));
            }
        } else {
            for (j, &tap) in self.stencil.taps.iter().enumerate() {
                let c = col as isize + j as isize - r as isize;
                let v = read_bordered(&self.a, extent, rows, cols, row as isize, c, &self.border);
                acc = accumulate(acc, tap, v);
            }
        }
        acc
    }
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: A::Shape,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
        out: *mut K,
    ) {
        let r = N / 2;
        let centre = centre_cols(&cols, ncols, r);
        // SAFETY: (whole body) the caller keeps the span inside the extent and `out`
        // writable; centre chunks read `c - r .. c + n + r`, inside the row.
        unsafe {
            if N > HALO + 1 || centre.is_empty() {
                return fill_span_by_elements(self, extent, ncols, row, cols, out);
            }
            fill_span_by_elements(self, extent, ncols, row, cols.start..centre.start, out);
            fill_span_by_elements(
                self,
                extent,
                ncols,
                row,
                centre.end..cols.end,
                out.add(centre.end - cols.start),
            );
            let mut kbuf = [K::ZERO; CHUNK + HALO];
            let mut c = centre.start;
            while c < centre.end {
                let n = CHUNK.min(centre.end - c);
                read_k(&self.a, extent, ncols, row, c - r, n + 2 * r, &mut kbuf);
                let mut acc = [K::ZERO; CHUNK];
                for (j, &tap) in self.stencil.taps.iter().enumerate() {
                    accumulate_row(&mut acc[..n], tap, &kbuf[j..j + n]);
                }
                store(&acc[..n], out.add(c - cols.start));
                c += n;
            }
        }
    }
}

// SAFETY: as for `ConvolvedRows`, down the columns (`Block::clip` keeps the centre rows
// `r` away from the edges).
unsafe impl<A, K, const N: usize> Source for ConvolvedCols<A, K, N>
where
    A: Source<Shape = Dim2>,
    K: Tap + From<A::Elem>,
{
    type Elem = K;
    type Shape = Dim2;
    const LINEAR: bool = false;
    #[inline(always)]
    fn extent(&self) -> Dim2 {
        self.a.extent()
    }
    #[inline(always)]
    #[track_caller]
    fn index(&self, idx: Dim2) -> K {
        checked_index(self, idx)
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: Dim2) -> K {
        let extent = self.a.extent();
        let Dim2(rows, cols) = extent;
        let Dim2(row, col) = idx;
        let r = N / 2;
        let mut acc = K::ZERO;
        if row >= r && row + r < rows {
            for (i, &tap) in self.stencil.taps.iter().enumerate() {
                // SAFETY: the centre keeps row + i - r inside 0..rows.
                let v = unsafe { self.a.row_col_unchecked(extent, cols, row + i - r, col) };
                acc = accumulate(acc, tap, K::from(v));
            }
        } else {
            for (i, &tap) in self.stencil.taps.iter().enumerate() {
                let rr = row as isize + i as isize - r as isize;
                let v = read_bordered(&self.a, extent, rows, cols, rr, col as isize, &self.border);
                acc = accumulate(acc, tap, v);
            }
        }
        acc
    }
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: Dim2,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
        out: *mut K,
    ) {
        let r = N / 2;
        let Dim2(rows, _) = extent;
        // SAFETY: (whole body) the caller keeps the span inside the extent and `out`
        // writable; centre rows read rows `row - r ..= row + r`, inside the array.
        unsafe {
            if N > HALO + 1 || row < r || row + r >= rows {
                return fill_span_by_elements(self, extent, ncols, row, cols, out);
            }
            let mut kbuf = [K::ZERO; CHUNK + HALO];
            let mut c = cols.start;
            while c < cols.end {
                let n = CHUNK.min(cols.end - c);
                let mut acc = [K::ZERO; CHUNK];
                for (i, &tap) in self.stencil.taps.iter().enumerate() {
                    if tap == K::ZERO {
                        continue;
                    }
                    if let Some(slice) = self.a.span_slice(ncols, row + i - r, c..c + n) {
                        accumulate_converted(&mut acc[..n], tap, slice);
                        continue;
                    }
                    read_k(&self.a, extent, ncols, row + i - r, c, n, &mut kbuf);
                    accumulate_row(&mut acc[..n], tap, &kbuf[..n]);
                }
                store(&acc[..n], out.add(c - cols.start));
                c += n;
            }
        }
    }
}

// SAFETY: as for `ConvolvedRows`, in both directions (the centre comes from `clip`).
unsafe impl<A, K, const H: usize, const W: usize> Source for Convolved2<A, K, H, W>
where
    A: Source<Shape = Dim2>,
    K: Tap + From<A::Elem>,
{
    type Elem = K;
    type Shape = Dim2;
    const LINEAR: bool = false;
    #[inline(always)]
    fn extent(&self) -> Dim2 {
        self.a.extent()
    }
    #[inline(always)]
    #[track_caller]
    fn index(&self, idx: Dim2) -> K {
        checked_index(self, idx)
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: Dim2) -> K {
        let extent = self.a.extent();
        let Dim2(rows, cols) = extent;
        let Dim2(row, col) = idx;
        let (ry, rx) = (H / 2, W / 2);
        let mut acc = K::ZERO;
        if row >= ry && row + ry < rows && col >= rx && col + rx < cols {
            for (i, taps) in self.stencil.taps.iter().enumerate() {
                for (j, &tap) in taps.iter().enumerate() {
                    // SAFETY: the centre keeps every read inside the extent.
                    let v = unsafe {
                        self.a
                            .row_col_unchecked(extent, cols, row + i - ry, col + j - rx)
                    };
                    acc = accumulate(acc, tap, K::from(v));
                }
            }
        } else {
            for (i, taps) in self.stencil.taps.iter().enumerate() {
                for (j, &tap) in taps.iter().enumerate() {
                    let rr = row as isize + i as isize - ry as isize;
                    let cc = col as isize + j as isize - rx as isize;
                    let v = read_bordered(&self.a, extent, rows, cols, rr, cc, &self.border);
                    acc = accumulate(acc, tap, v);
                }
            }
        }
        acc
    }
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: Dim2,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
        out: *mut K,
    ) {
        let (ry, rx) = (H / 2, W / 2);
        let Dim2(rows, _) = extent;
        let centre = centre_cols(&cols, ncols, rx);
        // SAFETY: (whole body) the caller keeps the span inside the extent and `out`
        // writable; centre chunks read inside the array.
        unsafe {
            if W > HALO + 1 || row < ry || row + ry >= rows || centre.is_empty() {
                return fill_span_by_elements(self, extent, ncols, row, cols, out);
            }
            fill_span_by_elements(self, extent, ncols, row, cols.start..centre.start, out);
            fill_span_by_elements(
                self,
                extent,
                ncols,
                row,
                centre.end..cols.end,
                out.add(centre.end - cols.start),
            );
            let mut kbuf = [K::ZERO; CHUNK + HALO];
            let mut c = centre.start;
            while c < centre.end {
                let n = CHUNK.min(centre.end - c);
                let mut acc = [K::ZERO; CHUNK];
                for (i, taps) in self.stencil.taps.iter().enumerate() {
                    if taps.iter().all(|&t| t == K::ZERO) {
                        continue;
                    }
                    read_k(
                        &self.a,
                        extent,
                        ncols,
                        row + i - ry,
                        c - rx,
                        n + 2 * rx,
                        &mut kbuf,
                    );
                    for (j, &tap) in taps.iter().enumerate() {
                        accumulate_row(&mut acc[..n], tap, &kbuf[j..j + n]);
                    }
                }
                store(&acc[..n], out.add(c - cols.start));
                c += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explicit::View;
    use crate::load::{compute_with, BlockFill, Plain, Threads};
    use crate::shape::Dim1;
    use proptest::prelude::*;

    /// OpenCV's documented border pictures, read literally: for `abcdefgh`, the six
    /// positions left of the array and the seven right of it.
    #[track_caller]
    fn check_picture(border: Border<u8>, left: &str, right: &str) {
        let len = 8;
        let name = |p: isize| match border_interpolate(p, len, &border) {
            Some(i) => (b'a' + i as u8) as char,
            None => 'i',
        };
        let l: String = (-6..0).map(name).collect();
        let r: String = (8..15).map(name).collect();
        assert_eq!((l.as_str(), r.as_str()), (left, right), "{border:?}");
    }

    #[test]
    fn border_modes_match_opencv_pictures() {
        check_picture(Border::Constant(0), "iiiiii", "iiiiiii");
        check_picture(Border::Replicate, "aaaaaa", "hhhhhhh");
        check_picture(Border::Reflect, "fedcba", "hgfedcb");
        check_picture(Border::Reflect101, "gfedcb", "gfedcba");
        check_picture(Border::Wrap, "cdefgh", "abcdefg");
    }

    /// OpenCV's `borderInterpolate`, written from its definition as a reference model.
    fn model(p: isize, len: isize, mode: &Border<i32>) -> Option<isize> {
        if (0..len).contains(&p) {
            return Some(p);
        }
        match mode {
            Border::Constant(_) => None,
            Border::Replicate => Some(if p < 0 { 0 } else { len - 1 }),
            Border::Reflect | Border::Reflect101 => {
                let delta = if matches!(mode, Border::Reflect101) {
                    1
                } else {
                    0
                };
                if len == 1 {
                    return Some(0);
                }
                let mut p = p;
                loop {
                    if p < 0 {
                        p = -p - 1 + delta;
                    } else {
                        p = len - 1 - (p - len) - delta;
                    }
                    if (p as usize) < len as usize {
                        return Some(p);
                    }
                }
            }
            Border::Wrap => {
                let mut p = p;
                if p < 0 {
                    p -= ((p - len + 1) / len) * len;
                }
                if p >= len {
                    p %= len;
                }
                Some(p)
            }
        }
    }

    const MODES: [Border<i32>; 5] = [
        Border::Constant(-7),
        Border::Replicate,
        Border::Reflect,
        Border::Reflect101,
        Border::Wrap,
    ];

    #[test]
    fn border_interpolate_matches_the_model() {
        for len in 1..9usize {
            for p in -25..25isize {
                for mode in &MODES {
                    assert_eq!(
                        border_interpolate(p, len, mode).map(|v| v as isize),
                        model(p, len as isize, mode),
                        "p={p} len={len} {mode:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn border_interpolate_far_away_matches_the_model() {
        // Far positions with lengths of the same order: the model's loop ends in a few
        // rounds, so it can be run as written.
        let far = 1isize << 40;
        for len in [
            (1usize << 39) - 1,
            1 << 39,
            (1 << 39) + 3,
            (1 << 40) - 1,
            1 << 41,
        ] {
            for p in [far - 1, far, far + 7, -far, -far - 5, 3 * far, -3 * far + 1] {
                for mode in &MODES {
                    assert_eq!(
                        border_interpolate(p, len, mode).map(|v| v as isize),
                        model(p, len as isize, mode),
                        "p={p} len={len} {mode:?}"
                    );
                }
            }
        }
        // Extreme positions do not overflow.
        for mode in &MODES {
            for p in [isize::MIN, isize::MAX] {
                for len in [1usize, 2, 3, usize::MAX] {
                    if let Some(q) = border_interpolate(p, len, mode) {
                        assert!(q < len, "p={p} len={len} {mode:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn border_interpolate_far_from_short_arrays() {
        // 2^40 = 4 (mod 6) and 0 (mod 4), 1 (mod 3), 0 (mod 2), hand-worked.
        let far = 1isize << 40;
        let cases: [(usize, isize, [Option<usize>; 5]); 6] = [
            // len 2, "ab": Reflect "ab|ba|ab|ba.." period 4; Reflect101 "ab|ab.."
            // period 2; Wrap period 2.
            (2, far, [None, Some(1), Some(0), Some(0), Some(0)]),
            (2, -far, [None, Some(0), Some(0), Some(0), Some(0)]),
            (2, far + 1, [None, Some(1), Some(1), Some(1), Some(1)]),
            // len 3, "abc": Reflect "abccba" period 6 (far -> 4 -> b); Reflect101
            // "abcb" period 4 (far -> 0 -> a); Wrap period 3 (far -> 1 -> b).
            (3, far, [None, Some(2), Some(1), Some(0), Some(1)]),
            // -far = 2 (mod 6) -> c, 0 (mod 4) -> a, 2 (mod 3) -> c.
            (3, -far, [None, Some(0), Some(2), Some(0), Some(2)]),
            (3, far + 2, [None, Some(2), Some(0), Some(2), Some(0)]),
        ];
        for (len, p, want) in cases {
            for (mode, want) in MODES.iter().zip(want) {
                assert_eq!(
                    border_interpolate(p, len, mode),
                    want,
                    "p={p} len={len} {mode:?}"
                );
                // The model, run from the same position shifted by whole periods of
                // the mirrored pattern (2 len for Reflect, 2 len - 2 for Reflect101,
                // len for Wrap) to a near one, agrees.
                let n = len as isize;
                let period = (2 * n) * (2 * n - 2) * n;
                let near = p.rem_euclid(period) - period;
                if !matches!(mode, Border::Constant(_) | Border::Replicate) {
                    assert_eq!(want.map(|v| v as isize), model(near, len as isize, mode));
                }
            }
        }
    }

    #[test]
    fn border_interpolate_on_an_empty_axis_is_none() {
        for mode in &MODES {
            for p in [-1isize, 0, 1, 1 << 40] {
                assert_eq!(border_interpolate(p, 0, mode), None, "{mode:?} p={p}");
            }
        }
    }

    fn naive_conv2<const H: usize, const W: usize>(
        data: &[i32],
        rows: usize,
        cols: usize,
        st: &[[i32; W]; H],
        mode: &Border<i32>,
    ) -> Vec<i32> {
        let mut out = vec![0; rows * cols];
        for y in 0..rows {
            for x in 0..cols {
                let mut s = 0;
                for (i, row) in st.iter().enumerate() {
                    for (j, &t) in row.iter().enumerate() {
                        let yy = model(
                            y as isize + i as isize - (H / 2) as isize,
                            rows as isize,
                            mode,
                        );
                        let xx = model(
                            x as isize + j as isize - (W / 2) as isize,
                            cols as isize,
                            mode,
                        );
                        let v = match (yy, xx) {
                            (Some(a), Some(b)) => data[a as usize * cols + b as usize],
                            _ => match mode {
                                Border::Constant(c) => *c,
                                _ => unreachable!(),
                            },
                        };
                        s += t * v;
                    }
                }
                out[y * cols + x] = s;
            }
        }
        out
    }

    proptest! {
        #![proptest_config(crate::testing::proptest_config(48, 0x5eed_0003))]
        #[test]
        fn convolutions_match_a_naive_model(rows in 1usize..12, cols in 1usize..12, seed in any::<u64>(), mode_k in 0usize..5) {
            let mode = MODES[mode_k];
            let data: Vec<i32> = (0..rows * cols).map(|i| ((i as u64).wrapping_mul(seed | 1) >> 20) as i32 % 50 - 25).collect();
            let a = View::new(Dim2(rows, cols), &data);
            let st = Stencil2::new([[1, -2, 0, 3, 1], [0, 1, 1, -1, 2], [4, 0, -1, 1, 1]]);
            let got = compute_with(&convolve2(a, st, mode), BlockFill { bx: 4, by: 2 }, Threads::Seq);
            prop_assert_eq!(got.as_slice(), &naive_conv2(&data, rows, cols, &st.taps, &mode)[..]);
            let row = Stencil1::new([2, -1, 0, 1, 5]);
            let col = Stencil1::new([1, 2, 1]);
            let rows_got = compute_with(&convolve_rows(a, row, mode), Plain, Threads::Seq);
            prop_assert_eq!(rows_got.as_slice(), &naive_conv2(&data, rows, cols, &[row.taps], &mode)[..]);
            let cols_got = compute_with(&convolve_cols(a, col, mode), Plain, Threads::Seq);
            prop_assert_eq!(cols_got.as_slice(), &naive_conv2(&data, rows, cols, &[[1], [2], [1]], &mode)[..]);
        }
    }

    /// Loads through contiguous memory take the row-vectorised span path; loads into a
    /// delayed target evaluate element by element. Both must agree bit for bit.
    #[test]
    fn span_path_equals_element_path() {
        use crate::delayed::SourceExt;
        use crate::load::{delayed_target, load, Unrolled};
        let (rows, cols) = (9, 613);
        let data: Vec<f32> = (0..rows * cols)
            .map(|i| ((i * 37) % 101) as f32 * 0.37)
            .collect();
        let a = View::new(Dim2(rows, cols), &data);
        let st2 = Stencil2::new([
            [0.1f32, -1.0, 0.0, 0.3, 1.0],
            [0.0; 5],
            [2.5, 0.5, 1.0, -0.25, 0.125],
        ]);
        let st1 = Stencil1::new([0.2f32, 0.3, -1.0, 0.7, 1.0, 0.1, 0.05]);
        fn by_elements<S: Source<Shape = Dim2, Elem = f32>>(s: &S) -> Vec<u32> {
            let Dim2(rows, cols) = s.extent();
            let out: Vec<std::sync::atomic::AtomicU32> =
                (0..rows * cols).map(|_| Default::default()).collect();
            let mut t = delayed_target(s.extent(), |Dim2(y, x), v: f32| {
                out[y * cols + x].store(v.to_bits(), std::sync::atomic::Ordering::Relaxed)
            });
            load(s, &mut t, Unrolled::<3>, Threads::Fixed(2));
            out.into_iter().map(|v| v.into_inner()).collect()
        }
        fn by_spans<S: Source<Shape = Dim2, Elem = f32>>(s: &S) -> Vec<u32> {
            crate::with_parallel_threshold(0, || compute_with(s, Plain, Threads::Fixed(3)))
                .as_slice()
                .iter()
                .map(|v| v.to_bits())
                .collect()
        }
        for border in [Border::Reflect101, Border::Constant(3.0), Border::Wrap] {
            let c2 = convolve2(a, st2, border);
            assert_eq!(by_spans(&c2), by_elements(&c2));
            let cr = convolve_rows(a, st1, border).map(|v| v * 2.0);
            assert_eq!(by_spans(&cr), by_elements(&cr));
            let cc = convolve_cols(a, st1, border);
            assert_eq!(by_spans(&cc), by_elements(&cc));
        }
    }

    #[test]
    fn one_dimensional_and_parallel() {
        let xs: Vec<f32> = (0..10).map(|v| v as f32).collect();
        let a = View::new(Dim1(10), &xs);
        let d = compute_with(
            &convolve_rows(a, Stencil1::new([-1.0f32, 0.0, 1.0]), Border::Replicate),
            Plain,
            Threads::Seq,
        );
        assert_eq!(
            d.as_slice(),
            &[1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0]
        );
        let big: Vec<i32> = (0..300 * 200).map(|i: i32| i * 7919 % 255).collect();
        let img = View::new(Dim2(300, 200), &big);
        let c = convolve2(
            img,
            Stencil2::outer(Stencil1::new([1, 2, 1]), Stencil1::new([-1, 0, 1])),
            Border::Reflect101,
        );
        assert_eq!(
            compute_with(&c, Plain, Threads::Seq),
            compute_with(&c, BlockFill { bx: 32, by: 8 }, Threads::Fixed(3))
        );
        assert_eq!(c.clip().centre, Block::new(Dim2(1, 1), Dim2(299, 199)));
    }

    /// Every convolution's `index` checks bounds: inside, the convolved value; one row past
    /// the end, a panic naming the index and the extent.
    #[test]
    fn index_is_checked() {
        let xs: Vec<i32> = (0..12).collect();
        let a = View::new(Dim2(3, 4), &xs);
        let st = Stencil1::new([1, 2, 1]);
        let rows = convolve_rows(a, st, Border::Replicate);
        let cols = convolve_cols(a, st, Border::Replicate);
        let both = convolve2(a, Stencil2::outer(st, st), Border::Replicate);
        // Row 1 is 4 5 6 7 (7 replicated past the end); column 3 is 3 7 11.
        assert_eq!(rows.index(Dim2(1, 3)), 6 + 2 * 7 + 7);
        assert_eq!(cols.index(Dim2(1, 3)), 3 + 2 * 7 + 11);
        let loaded = compute_with(&both, Plain, Threads::Seq);
        assert_eq!(both.index(Dim2(1, 3)), loaded.as_slice()[7]);
        let reads: [&dyn Fn(Dim2) -> i32; 3] =
            [&|i| rows.index(i), &|i| cols.index(i), &|i| both.index(i)];
        for read in reads {
            let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read(Dim2(3, 0))))
                .unwrap_err();
            assert_eq!(
                err.downcast_ref::<String>().map(String::as_str),
                Some("index Dim2(3, 0) out of bounds for an array of extent Dim2(3, 4)")
            );
        }
    }
}
