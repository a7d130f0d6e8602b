//! Interop: zero-copy `ndarray` views of vectors and matrices (and back), and the
//! `approx` crate's `AbsDiffEq` / `RelativeEq`.

use approx::{AbsDiffEq, RelativeEq};
use ndarray::{
    ArrayBase, ArrayView1, ArrayView2, ArrayViewMut1, ArrayViewMut2, Data, Ix1, Ix2, ShapeBuilder,
};

use crate::{Error, Matrix, MatrixBase, MatrixView, MatrixViewMut, Real, Vector, VectorBase};

impl<R: Real> VectorBase<R> {
    /// A zero-copy `ndarray` view.
    pub fn as_array(&self) -> ArrayView1<'_, R> {
        ArrayView1::from(self.data())
    }

    /// A zero-copy mutable `ndarray` view.
    pub fn as_array_mut(&mut self) -> ArrayViewMut1<'_, R> {
        ArrayViewMut1::from(self.data_mut())
    }
}

impl<R: Real> Vector<R> {
    /// A vector copied from any one-dimensional `ndarray` array.
    pub fn from_array<S: Data<Elem = R>>(a: &ArrayBase<S, Ix1>) -> Self {
        Vector::from_vec(a.iter().copied().collect())
    }
}

impl<R: Real> MatrixBase<R> {
    /// A zero-copy `ndarray` view with strides `(stride, 1)`.
    pub fn as_array(&self) -> ArrayView2<'_, R> {
        let shape = self.shape().strides((self.stride(), 1));
        // SAFETY: the window is `rows x cols` with row stride `stride`, borrowed for `'_`.
        unsafe { ArrayView2::from_shape_ptr(shape, self.as_ptr()) }
    }

    /// A zero-copy mutable `ndarray` view with strides `(stride, 1)`.
    pub fn as_array_mut(&mut self) -> ArrayViewMut2<'_, R> {
        let shape = self.shape().strides((self.stride(), 1));
        let ptr = self.as_mut_ptr();
        // SAFETY: as in `as_array`, with exclusive access through `&mut self`.
        unsafe { ArrayViewMut2::from_shape_ptr(shape, ptr) }
    }
}

impl<R: Real> Matrix<R> {
    /// A matrix (default stride) copied from any two-dimensional `ndarray` array; an
    /// error for a `0 x n` array.
    pub fn from_array<S: Data<Elem = R>>(a: &ArrayBase<S, Ix2>) -> Result<Self, Error> {
        let (rows, cols) = a.dim();
        let mut m = Matrix::try_new(rows, cols, crate::StrideType::Default)?;
        for (r, row) in a.outer_iter().enumerate() {
            for (o, &x) in m.row_data_mut(r).iter_mut().zip(row.iter()) {
                *o = x;
            }
        }
        Ok(m)
    }
}

/// Row stride of a row-major `ndarray` view, or the layout error.
fn row_major_stride(dim: (usize, usize), strides: &[isize]) -> Result<usize, Error> {
    let (rows, cols) = dim;
    if (rows == 0) != (cols == 0) {
        return Err(Error::EmptyDimension { rows, cols });
    }
    if rows == 0 {
        return Ok(0);
    }
    let col_ok = strides[1] == 1 || cols == 1;
    let row_stride = if rows == 1 { cols as isize } else { strides[0] };
    if !col_ok || row_stride < cols as isize {
        return Err(Error::NotRowMajor {
            row_stride: strides[0],
            col_stride: strides[1],
        });
    }
    Ok(row_stride as usize)
}

impl<'a, R: Real> MatrixView<'a, R> {
    /// A zero-copy matrix view of a row-major `ndarray` view (unit column stride, row
    /// stride at least the number of columns).
    ///
    /// The view keeps ndarray's pointer and strides and reaches its elements one row at a
    /// time, so the gaps between rows (which may belong to a sibling view, as after
    /// `split_at(Axis(1), _)`) are never part of any slice.
    pub fn from_array(a: ArrayView2<'a, R>) -> Result<Self, Error> {
        let stride = row_major_stride(a.dim(), a.strides())?;
        let (rows, cols) = a.dim();
        // SAFETY: `row_major_stride` checked that `rows` and `cols` are both zero or both
        // non-zero, that columns are contiguous and `stride >= cols`; `a` guarantees that
        // element `(r, c)` at `ptr + r * stride + c` is readable for `'a`, so each row of
        // `cols` elements is, and the view never touches the memory between rows.
        Ok(unsafe { MatrixView::from_raw_parts(a.as_ptr(), rows, cols, stride) })
    }
}

impl<'a, R: Real> MatrixViewMut<'a, R> {
    /// A zero-copy mutable matrix view of a row-major `ndarray` view; the gaps between
    /// rows are never part of any slice, as in [`MatrixView::from_array`].
    pub fn from_array(mut a: ArrayViewMut2<'a, R>) -> Result<Self, Error> {
        let stride = row_major_stride(a.dim(), a.strides())?;
        let (rows, cols) = a.dim();
        let ptr = a.as_mut_ptr();
        // SAFETY: as in `MatrixView::from_array`; `a` is an exclusive borrow for `'a`
        // (ndarray's mutable views never alias), so each row is writable by us alone.
        Ok(unsafe { MatrixViewMut::from_raw_parts_mut(ptr, rows, cols, stride) })
    }
}

macro_rules! impl_approx {
    ($t:ty) => {
        impl AbsDiffEq for MatrixBase<$t> {
            type Epsilon = $t;
            fn default_epsilon() -> $t {
                <$t>::EPSILON
            }
            fn abs_diff_eq(&self, other: &Self, epsilon: $t) -> bool {
                self.shape() == other.shape()
                    && self
                        .rows()
                        .zip(other.rows())
                        .all(|(a, b)| a.iter().zip(b).all(|(x, y)| x.abs_diff_eq(y, epsilon)))
            }
        }
        impl RelativeEq for MatrixBase<$t> {
            fn default_max_relative() -> $t {
                <$t>::EPSILON
            }
            fn relative_eq(&self, other: &Self, epsilon: $t, max_relative: $t) -> bool {
                self.shape() == other.shape()
                    && self.rows().zip(other.rows()).all(|(a, b)| {
                        a.iter()
                            .zip(b)
                            .all(|(x, y)| x.relative_eq(y, epsilon, max_relative))
                    })
            }
        }
        impl AbsDiffEq for Matrix<$t> {
            type Epsilon = $t;
            fn default_epsilon() -> $t {
                <$t>::EPSILON
            }
            fn abs_diff_eq(&self, other: &Self, epsilon: $t) -> bool {
                (**self).abs_diff_eq(&**other, epsilon)
            }
        }
        impl RelativeEq for Matrix<$t> {
            fn default_max_relative() -> $t {
                <$t>::EPSILON
            }
            fn relative_eq(&self, other: &Self, epsilon: $t, max_relative: $t) -> bool {
                (**self).relative_eq(&**other, epsilon, max_relative)
            }
        }
        impl AbsDiffEq for VectorBase<$t> {
            type Epsilon = $t;
            fn default_epsilon() -> $t {
                <$t>::EPSILON
            }
            fn abs_diff_eq(&self, other: &Self, epsilon: $t) -> bool {
                self.dim() == other.dim()
                    && self
                        .data()
                        .iter()
                        .zip(other.data())
                        .all(|(x, y)| x.abs_diff_eq(y, epsilon))
            }
        }
        impl RelativeEq for VectorBase<$t> {
            fn default_max_relative() -> $t {
                <$t>::EPSILON
            }
            fn relative_eq(&self, other: &Self, epsilon: $t, max_relative: $t) -> bool {
                self.dim() == other.dim()
                    && self
                        .data()
                        .iter()
                        .zip(other.data())
                        .all(|(x, y)| x.relative_eq(y, epsilon, max_relative))
            }
        }
        impl AbsDiffEq for Vector<$t> {
            type Epsilon = $t;
            fn default_epsilon() -> $t {
                <$t>::EPSILON
            }
            fn abs_diff_eq(&self, other: &Self, epsilon: $t) -> bool {
                (**self).abs_diff_eq(&**other, epsilon)
            }
        }
        impl RelativeEq for Vector<$t> {
            fn default_max_relative() -> $t {
                <$t>::EPSILON
            }
            fn relative_eq(&self, other: &Self, epsilon: $t, max_relative: $t) -> bool {
                (**self).relative_eq(&**other, epsilon, max_relative)
            }
        }
    };
}

impl_approx!(f32);
impl_approx!(f64);

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, s, Array2};

    #[test]
    fn as_array_respects_the_stride() {
        let mut m = Matrix::<f32>::new(2, 3);
        assert_eq!(m.stride(), 4);
        m[(1, 2)] = 5.0;
        let a = m.as_array();
        assert_eq!(a.strides(), &[4, 1]);
        assert_eq!(a[[1, 2]], 5.0);
        m.as_array_mut()[[0, 1]] = 2.0;
        assert_eq!(m[(0, 1)], 2.0);
    }

    #[test]
    fn zero_copy_from_an_ndarray_window() {
        let mut a: Array2<f64> = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
        let v = MatrixView::from_array(a.slice(s![1.., ..2])).unwrap();
        assert_eq!((v.shape(), v.stride()), ((2, 2), 3));
        assert_eq!(v.sum(), 4.0 + 5.0 + 7.0 + 8.0);
        assert!(matches!(
            MatrixView::from_array(a.t()),
            Err(Error::NotRowMajor { .. })
        ));
        let mut w = MatrixViewMut::from_array(a.slice_mut(s![.., 1..])).unwrap();
        w.scale(10.0);
        assert_eq!(
            a,
            array![[1.0, 20.0, 30.0], [4.0, 50.0, 60.0], [7.0, 80.0, 90.0]]
        );
        let back = Matrix::from_array(&a).unwrap();
        assert_eq!(back.as_array(), a);
    }

    #[test]
    fn approx_traits() {
        let a = Matrix::from_rows(&[[1.0f64, 2.0]]);
        let b = Matrix::from_rows(&[[1.0f64, 2.0 + 1e-12]]);
        approx::assert_relative_eq!(a, b, max_relative = 1e-10);
        assert!(!a.abs_diff_eq(&b, 1e-14));
        let v = Vector::from_vec(vec![1.0f32]);
        approx::assert_abs_diff_eq!(v, Vector::from_vec(vec![1.0f32 + 1e-7]), epsilon = 1e-6);
    }
}
