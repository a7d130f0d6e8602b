//! Explicit (in-memory) representations: owned arrays, zero-copy views over a caller's
//! buffer, an `image::ImageBuffer` or an ndarray view, and mutable views as load targets.

use std::ops;

use crate::error::{index_out_of_bounds, Error};
use crate::shape::{Dim1, Dim2, Dim3, Shape};
use crate::source::{SliceWriter, Source, Target};

/// An owned, row-major, explicit array (Yarr's `F`/`B` representations).
#[derive(Clone, Debug, PartialEq)]
pub struct Array<T, S: Shape> {
    data: Vec<T>,
    extent: S,
}

/// A zero-copy, read-only view over row-major memory owned elsewhere (Yarr's foreign `F`).
#[derive(Clone, Copy, Debug)]
pub struct View<'a, T, S: Shape> {
    data: &'a [T],
    extent: S,
}

/// A zero-copy, mutable view over row-major memory owned elsewhere; a load target.
#[derive(Debug)]
pub struct ViewMut<'a, T, S: Shape> {
    data: &'a mut [T],
    extent: S,
}

/// Checks that `extent` counts exactly `len` elements, with the product of its extents
/// computed without wrapping.
fn check_len<S: Shape>(extent: S, len: usize) -> Result<(), Error> {
    match extent.checked_size() {
        None => Err(Error::SizeOverflow {
            extent: extent.dims(),
        }),
        Some(size) if size == len => Ok(()),
        Some(size) => Err(Error::BufferLength {
            expected: size,
            got: len,
        }),
    }
}

impl<T: Copy, S: Shape> Array<T, S> {
    /// An array of `extent` with every element `value`.
    ///
    /// # Panics
    /// When the product of the extents overflows `usize` ("extent ... has more elements
    /// than usize can count"); [`Array::try_filled`] returns an error instead.
    #[track_caller]
    pub fn filled(extent: S, value: T) -> Self {
        Array {
            data: vec![value; extent.size()],
            extent,
        }
    }

    /// An array of `extent` with every element `value`, or [`Error::SizeOverflow`] when
    /// the product of the extents overflows `usize`.
    pub fn try_filled(extent: S, value: T) -> Result<Self, Error> {
        let size = extent.checked_size().ok_or(Error::SizeOverflow {
            extent: extent.dims(),
        })?;
        Ok(Array {
            data: vec![value; size],
            extent,
        })
    }

    /// An array over `data` (row-major); fails when the length does not fit the extent.
    pub fn from_vec(extent: S, data: Vec<T>) -> Result<Self, Error> {
        check_len(extent, data.len())?;
        Ok(Array { data, extent })
    }

    /// The extent.
    pub fn extent(&self) -> S {
        self.extent
    }

    /// The elements in row-major order.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements in row-major order, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The storage, giving up the shape.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// The element at `idx`, or `None` outside the extent.
    pub fn get(&self, idx: S) -> Option<&T> {
        if self.extent.contains(idx) {
            self.data.get(self.extent.to_linear(idx))
        } else {
            None
        }
    }

    /// A read-only view of the whole array.
    pub fn view(&self) -> View<'_, T, S> {
        View {
            data: &self.data,
            extent: self.extent,
        }
    }

    /// A mutable view of the whole array.
    pub fn view_mut(&mut self) -> ViewMut<'_, T, S> {
        ViewMut {
            data: &mut self.data,
            extent: self.extent,
        }
    }
}

impl<T: Copy, S: Shape> ops::Index<S> for Array<T, S> {
    type Output = T;
    #[track_caller]
    fn index(&self, idx: S) -> &T {
        if !self.extent.contains(idx) {
            index_out_of_bounds(idx, self.extent);
        }
        &self.data[self.extent.to_linear(idx)]
    }
}

impl<T: Copy, S: Shape> ops::IndexMut<S> for Array<T, S> {
    #[track_caller]
    fn index_mut(&mut self, idx: S) -> &mut T {
        if !self.extent.contains(idx) {
            index_out_of_bounds(idx, self.extent);
        }
        &mut self.data[self.extent.to_linear(idx)]
    }
}

impl<'a, T: Copy, S: Shape> View<'a, T, S> {
    /// A view of `data` (row-major) as an array of `extent`, for data whose length is known to match.
    ///
    /// # Panics
    ///
    /// When `data.len()` is not the extent's size (or that size overflows), naming both.
    /// [`View::try_new`] returns the same check as an error.
    #[track_caller]
    pub fn new(extent: S, data: &'a [T]) -> Self {
        match Self::try_new(extent, data) {
            Ok(view) => view,
            Err(err) => panic!("View::new: {err}"),
        }
    }

    /// A view of `data` (row-major) as an array of `extent`; `data.len()` must be the extent's size, else an error naming both.
    pub fn try_new(extent: S, data: &'a [T]) -> Result<Self, Error> {
        check_len(extent, data.len())?;
        Ok(View { data, extent })
    }

    /// The viewed elements.
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }

    /// Copies the view into an owned array.
    pub fn to_array(&self) -> Array<T, S> {
        Array {
            data: self.data.to_vec(),
            extent: self.extent,
        }
    }
}

impl<'a, T: Copy, S: Shape> ViewMut<'a, T, S> {
    /// A mutable view of `data` (row-major) as an array of `extent`, for data whose length is known to match.
    ///
    /// # Panics
    ///
    /// When `data.len()` is not the extent's size (or that size overflows), naming both.
    /// [`ViewMut::try_new`] returns the same check as an error.
    #[track_caller]
    pub fn new(extent: S, data: &'a mut [T]) -> Self {
        match Self::try_new(extent, data) {
            Ok(view) => view,
            Err(err) => panic!("ViewMut::new: {err}"),
        }
    }

    /// A mutable view of `data` (row-major) as an array of `extent`; `data.len()` must be the extent's size, else an error naming both.
    pub fn try_new(extent: S, data: &'a mut [T]) -> Result<Self, Error> {
        check_len(extent, data.len())?;
        Ok(ViewMut { data, extent })
    }

    /// The viewed elements.
    pub fn as_slice(&self) -> &[T] {
        self.data
    }

    /// A read-only view.
    pub fn view(&self) -> View<'_, T, S> {
        View {
            data: self.data,
            extent: self.extent,
        }
    }
}

macro_rules! explicit_source {
    ($ty:ty, $($lt:lifetime)?) => {
        // SAFETY: the extent is a private field checked against the buffer's length
        // (`check_len`, with the size computed without wrapping) and never changed;
        // unchecked reads stay below that length; `fill_span` copies exactly the span.
        unsafe impl<$($lt,)? T: Copy + Send + Sync, S: Shape> Source for $ty {
            type Elem = T;
            type Shape = S;
            const LINEAR: bool = true;
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
                self.data[self.extent.to_linear(idx)]
            }
            #[inline(always)]
            #[track_caller]
            fn linear_index(&self, i: usize) -> T {
                self.data[i]
            }
            #[inline(always)]
            unsafe fn index_unchecked(&self, idx: S) -> T {
                // SAFETY: the caller keeps idx inside the extent, which equals the data length.
                unsafe { *self.data.get_unchecked(self.extent.to_linear(idx)) }
            }
            #[inline(always)]
            unsafe fn linear_index_unchecked(&self, i: usize) -> T {
                // SAFETY: the caller keeps i below the size.
                unsafe { *self.data.get_unchecked(i) }
            }
            #[inline(always)]
            unsafe fn span_slice(&self, ncols: usize, row: usize, cols: std::ops::Range<usize>) -> Option<&[T]> {
                let start = row * ncols;
                // SAFETY: the caller keeps the span inside the extent.
                Some(unsafe { self.data.get_unchecked(start + cols.start..start + cols.end) })
            }
            #[inline(always)]
            unsafe fn fill_span(&self, _extent: S, ncols: usize, row: usize, cols: std::ops::Range<usize>, out: *mut T) {
                let start = row * ncols;
                // SAFETY: the caller keeps the span inside the extent and `out` writable
                // for it; a load never writes into a source it reads.
                unsafe {
                    std::ptr::copy_nonoverlapping(self.data.as_ptr().add(start + cols.start), out, cols.len())
                }
            }
        }
    };
}

explicit_source!(Array<T, S>,);
explicit_source!(View<'a, T, S>, 'a);
explicit_source!(ViewMut<'a, T, S>, 'a);

impl<T: Copy + Send + Sync, S: Shape> Target for Array<T, S> {
    type Elem = T;
    type Shape = S;
    type Writer<'w>
        = SliceWriter<'w, T>
    where
        Self: 'w;
    fn extent(&self) -> S {
        self.extent
    }
    fn writer(&mut self) -> SliceWriter<'_, T> {
        SliceWriter::new(&mut self.data)
    }
}

impl<T: Copy + Send + Sync, S: Shape> Target for ViewMut<'_, T, S> {
    type Elem = T;
    type Shape = S;
    type Writer<'w>
        = SliceWriter<'w, T>
    where
        Self: 'w;
    fn extent(&self) -> S {
        self.extent
    }
    fn writer(&mut self) -> SliceWriter<'_, T> {
        SliceWriter::new(self.data)
    }
}

// ---- foreign memory: image buffers and ndarray views -------------------------------------

/// Reinterprets interleaved channels as an array of pixels.
fn as_pixels<const N: usize>(raw: &[u8]) -> &[[u8; N]] {
    let n = raw.len() / N;
    // SAFETY: [u8; N] has alignment 1 and size N; n * N <= raw.len().
    unsafe { std::slice::from_raw_parts(raw.as_ptr().cast::<[u8; N]>(), n) }
}

/// Reinterprets interleaved channels as an array of pixels, mutably.
fn as_pixels_mut<const N: usize>(raw: &mut [u8]) -> &mut [[u8; N]] {
    let n = raw.len() / N;
    // SAFETY: as in `as_pixels`, and the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(raw.as_mut_ptr().cast::<[u8; N]>(), n) }
}

fn image_extent(width: u32, height: u32) -> Dim2 {
    Dim2(height as usize, width as usize)
}

impl<'a> View<'a, u8, Dim2> {
    /// A zero-copy view of an 8-bit grey image, `Dim2(height, width)`.
    pub fn from_luma<C: ops::Deref<Target = [u8]>>(
        img: &'a image::ImageBuffer<image::Luma<u8>, C>,
    ) -> Self {
        let extent = image_extent(img.width(), img.height());
        View {
            data: &img.as_raw()[..extent.size()],
            extent,
        }
    }
}

impl<'a> View<'a, [u8; 3], Dim2> {
    /// A zero-copy view of an 8-bit RGB image as an array of `[r, g, b]` pixels.
    pub fn from_rgb<C: ops::Deref<Target = [u8]>>(
        img: &'a image::ImageBuffer<image::Rgb<u8>, C>,
    ) -> Self {
        let extent = image_extent(img.width(), img.height());
        View {
            data: &as_pixels::<3>(img.as_raw())[..extent.size()],
            extent,
        }
    }
}

impl<'a> ViewMut<'a, u8, Dim2> {
    /// A zero-copy mutable view of an 8-bit grey image; a load target.
    pub fn from_luma<C: ops::DerefMut<Target = [u8]>>(
        img: &'a mut image::ImageBuffer<image::Luma<u8>, C>,
    ) -> Self {
        let extent = image_extent(img.width(), img.height());
        let raw: &mut [u8] = img;
        ViewMut {
            data: &mut raw[..extent.size()],
            extent,
        }
    }
}

impl<'a> ViewMut<'a, [u8; 3], Dim2> {
    /// A zero-copy mutable view of an 8-bit RGB image; a load target.
    pub fn from_rgb<C: ops::DerefMut<Target = [u8]>>(
        img: &'a mut image::ImageBuffer<image::Rgb<u8>, C>,
    ) -> Self {
        let extent = image_extent(img.width(), img.height());
        let raw: &mut [u8] = img;
        ViewMut {
            data: &mut as_pixels_mut::<3>(raw)[..extent.size()],
            extent,
        }
    }
}

fn nd_slice<'a, T, D: ndarray::Dimension>(
    a: ndarray::ArrayView<'a, T, D>,
) -> Result<&'a [T], Error> {
    let strides = a.strides().to_vec();
    a.to_slice().ok_or(Error::NotContiguous { strides })
}

impl<'a, T: Copy> View<'a, T, Dim1> {
    /// A zero-copy view of a contiguous 1-D ndarray view.
    pub fn from_ndarray1(a: ndarray::ArrayView1<'a, T>) -> Result<Self, Error> {
        let extent = Dim1(a.len());
        Ok(View {
            data: nd_slice(a)?,
            extent,
        })
    }
}

impl<'a, T: Copy> View<'a, T, Dim2> {
    /// A zero-copy view of a standard-layout 2-D ndarray view; fails on other strides.
    pub fn from_ndarray2(a: ndarray::ArrayView2<'a, T>) -> Result<Self, Error> {
        let (r, c) = a.dim();
        Ok(View {
            data: nd_slice(a)?,
            extent: Dim2(r, c),
        })
    }
}

impl<'a, T: Copy> View<'a, T, Dim3> {
    /// A zero-copy view of a standard-layout 3-D ndarray view; fails on other strides.
    pub fn from_ndarray3(a: ndarray::ArrayView3<'a, T>) -> Result<Self, Error> {
        let (z, y, x) = a.dim();
        Ok(View {
            data: nd_slice(a)?,
            extent: Dim3(z, y, x),
        })
    }
}

impl<T: Copy> Array<T, Dim2> {
    /// Copies the array into a 2-D ndarray.
    #[allow(
        clippy::missing_panics_doc,
        reason = "an array's length is its extent's size (checked at construction)"
    )]
    pub fn to_ndarray(&self) -> ndarray::Array2<T> {
        let Dim2(r, c) = self.extent;
        ndarray::Array2::from_shape_vec((r, c), self.data.clone()).expect("extent matches length")
    }
}

impl Array<u8, Dim2> {
    /// Converts into a grey image buffer without copying.
    ///
    /// # Panics
    /// If the width or the height exceeds `u32::MAX`, the image crate's limit.
    pub fn into_luma(self) -> image::GrayImage {
        let Dim2(h, w) = self.extent;
        image::GrayImage::from_raw(w as u32, h as u32, self.data).expect("extent matches length")
    }
}

impl Array<[u8; 3], Dim2> {
    /// Converts into an RGB image buffer.
    ///
    /// # Panics
    /// If the width or the height exceeds `u32::MAX`, the image crate's limit.
    pub fn into_rgb(self) -> image::RgbImage {
        let Dim2(h, w) = self.extent;
        let raw: Vec<u8> = self.data.iter().flatten().copied().collect();
        image::RgbImage::from_raw(w as u32, h as u32, raw).expect("extent matches length")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_read_what_the_buffer_holds() {
        let data: Vec<u32> = (0..12).collect();
        let v = View::new(Dim2(3, 4), &data);
        assert_eq!(v.index(Dim2(2, 1)), 9);
        assert_eq!(v.linear_index(5), 5);
        assert_eq!(
            View::try_new(Dim2(3, 5), &data).unwrap_err(),
            Error::BufferLength {
                expected: 15,
                got: 12
            }
        );
    }

    #[test]
    #[should_panic(expected = "View::new: ")]
    fn view_new_panics_on_a_short_buffer() {
        let _ = View::new(Dim2(3, 5), &[0u8; 12]);
    }

    #[test]
    #[should_panic(expected = "ViewMut::new: ")]
    fn view_mut_new_panics_on_an_extent_that_overflows() {
        let mut buf = [0u8; 4];
        let _ = ViewMut::new(Dim2((1 << 62) + 1, 4), &mut buf);
    }

    #[test]
    fn extents_whose_size_overflows_are_refused() {
        // (2^62 + 1) * 4 wraps to 4 in 64 bits: the length alone must not decide.
        let wraps_to_4 = Dim2((1 << 62) + 1, 4);
        assert_eq!(
            View::try_new(wraps_to_4, &[1, 2, 3, 4]).unwrap_err(),
            Error::SizeOverflow {
                extent: [1, (1 << 62) + 1, 4]
            }
        );
        let mut buf = [0u8; 4];
        assert_eq!(
            ViewMut::try_new(wraps_to_4, &mut buf).unwrap_err(),
            Error::SizeOverflow {
                extent: [1, (1 << 62) + 1, 4]
            }
        );
        assert_eq!(
            Array::from_vec(Dim3(1 << 32, 1 << 32, 0), Vec::<u8>::new()).unwrap_err(),
            Error::SizeOverflow {
                extent: [1 << 32, 1 << 32, 0]
            }
        );
        // 2^32 * 2^32 wraps to 0: an array of no bytes must not come out.
        assert_eq!(
            Array::try_filled(Dim2(1 << 32, 1 << 32), 0u8).unwrap_err(),
            Error::SizeOverflow {
                extent: [1, 1 << 32, 1 << 32]
            }
        );
        assert_eq!(
            Array::try_filled(Dim2(2, 3), 7u8).unwrap().as_slice(),
            &[7; 6]
        );
        assert_eq!(
            Error::SizeOverflow { extent: [1, 2, 3] }.to_string(),
            "extent [1, 2, 3] has more elements than usize can count"
        );
        assert_eq!(
            Dim3(1 << 21, 1 << 21, 1 << 21).checked_size(),
            Some(1 << 63)
        );
        assert_eq!(Dim3(1 << 21, 1 << 22, 1 << 21).checked_size(), None);
        assert_eq!(Dim2(usize::MAX, 1).checked_size(), Some(usize::MAX));
    }

    #[test]
    #[should_panic(
        expected = "extent Dim2(4294967296, 4294967296) has more elements than usize can count"
    )]
    fn filled_panics_on_an_overflowing_extent() {
        let _ = Array::filled(Dim2(1 << 32, 1 << 32), 0u8);
    }

    #[test]
    #[should_panic(
        expected = "extent Dim2(4611686018427387905, 4) has more elements than usize can count"
    )]
    fn loading_a_delayed_array_of_overflowing_extent_panics() {
        let d = crate::delayed::from_fn(Dim2((1 << 62) + 1, 4), |_| 0u8);
        let _ = crate::load::compute_with(&d, crate::load::Plain, crate::load::Threads::Seq);
    }

    #[test]
    #[should_panic(expected = "index Dim2(1, 4) out of bounds for an array of extent Dim2(3, 4)")]
    fn index_outside_panics_with_both() {
        let a = Array::filled(Dim2(3, 4), 0u8);
        let _ = a[Dim2(1, 4)];
    }

    #[test]
    fn image_views_are_zero_copy() {
        let img = image::RgbImage::from_fn(4, 2, |x, y| image::Rgb([x as u8, y as u8, 7]));
        let v = View::from_rgb(&img);
        assert_eq!(v.extent(), Dim2(2, 4));
        assert_eq!(v.index(Dim2(1, 3)), [3, 1, 7]);
        assert!(std::ptr::eq(
            v.as_slice().as_ptr().cast::<u8>(),
            img.as_raw().as_ptr()
        ));
        let mut grey = image::GrayImage::new(3, 2);
        {
            let mut t = ViewMut::from_luma(&mut grey);
            t.write(Dim2(1, 2), 99);
        }
        assert_eq!(grey.get_pixel(2, 1).0, [99]);
    }

    #[test]
    fn ndarray_views() {
        let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| i * 10 + j);
        let v = View::from_ndarray2(a.view()).unwrap();
        assert_eq!(v.index(Dim2(2, 3)), 23);
        let t = a.t();
        assert!(matches!(
            View::from_ndarray2(t),
            Err(Error::NotContiguous { .. })
        ));
        let a3 = ndarray::Array3::from_shape_fn((2, 3, 4), |(i, j, k)| i * 100 + j * 10 + k);
        assert_eq!(
            View::from_ndarray3(a3.view()).unwrap().index(Dim3(1, 2, 3)),
            123
        );
    }
}
