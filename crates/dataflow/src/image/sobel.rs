//! The Sobel 3x3 gradient (`cv2.Sobel(img, CV_16S, 1, 0)` and `(0, 1)`), its magnitude in
//! the L1 and L2 norms, and its direction.

use crate::convolve::{convolve2, Border, Convolved2, Stencil2};
use crate::delayed::{SourceExt, ZipWith};
use crate::error::Error;
use crate::shape::Dim2;
use crate::source::Source;

/// The Sobel stencil for d/dx (applied as correlation, like OpenCV).
pub const SOBEL_DX: Stencil2<i16, 3, 3> = Stencil2::new([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]);
/// The Sobel stencil for d/dy.
pub const SOBEL_DY: Stencil2<i16, 3, 3> = Stencil2::new([[-1, -2, -1], [0, 0, 0], [1, 2, 1]]);

/// The horizontal derivative, delayed, computed in `i16` (at most 1020 in magnitude).
#[allow(clippy::type_complexity)]
pub fn sobel_dx<A: Source<Shape = Dim2, Elem = u8>>(
    a: A,
    border: Border<u8>,
) -> Convolved2<A, i16, 3, 3> {
    convolve2(a, SOBEL_DX, border)
}

/// The vertical derivative, delayed, computed in `i16`.
#[allow(clippy::type_complexity)]
pub fn sobel_dy<A: Source<Shape = Dim2, Elem = u8>>(
    a: A,
    border: Border<u8>,
) -> Convolved2<A, i16, 3, 3> {
    convolve2(a, SOBEL_DY, border)
}

/// `|dx| + |dy|`, delayed.
#[allow(clippy::type_complexity)]
pub fn magnitude_l1<X, Y>(
    dx: X,
    dy: Y,
) -> Result<ZipWith<X, Y, impl Fn(i16, i16) -> i32 + Copy + Sync>, Error>
where
    X: Source<Elem = i16>,
    Y: Source<Elem = i16, Shape = X::Shape>,
{
    dx.zip_with(
        dy,
        (|x: i16, y: i16| (x as i32).abs() + (y as i32).abs()) as fn(i16, i16) -> i32,
    )
}

/// `sqrt(dx^2 + dy^2)` in `f32`, delayed (`cv2.magnitude`).
#[allow(clippy::type_complexity)]
pub fn magnitude_l2<X, Y>(
    dx: X,
    dy: Y,
) -> Result<ZipWith<X, Y, impl Fn(i16, i16) -> f32 + Copy + Sync>, Error>
where
    X: Source<Elem = i16>,
    Y: Source<Elem = i16, Shape = X::Shape>,
{
    dx.zip_with(
        dy,
        (|x: i16, y: i16| (x as f32).hypot(y as f32)) as fn(i16, i16) -> f32,
    )
}

/// The gradient direction `atan2(dy, dx)` in radians, in `(-pi, pi]`, delayed.
#[allow(clippy::type_complexity)]
pub fn direction<X, Y>(
    dx: X,
    dy: Y,
) -> Result<ZipWith<X, Y, impl Fn(i16, i16) -> f32 + Copy + Sync>, Error>
where
    X: Source<Elem = i16>,
    Y: Source<Elem = i16, Shape = X::Shape>,
{
    dx.zip_with(
        dy,
        (|x: i16, y: i16| (y as f32).atan2(x as f32)) as fn(i16, i16) -> f32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explicit::View;
    use crate::load::{compute_with, Plain, Threads};

    #[test]
    fn sobel_hand_worked() {
        // A vertical step from 0 to 10 between columns 1 and 2.
        let data = [0u8, 0, 10, 10, 0, 0, 10, 10, 0, 0, 10, 10];
        let a = View::new(Dim2(3, 4), &data).unwrap();
        let dx = compute_with(&sobel_dx(a, Border::Reflect101), Plain, Threads::Seq);
        assert_eq!(dx.as_slice(), &[0, 40, 40, 0, 0, 40, 40, 0, 0, 40, 40, 0]);
        let dy = compute_with(&sobel_dy(a, Border::Reflect101), Plain, Threads::Seq);
        assert!(dy.as_slice().iter().all(|&v| v == 0));
        let l1 = compute_with(
            &magnitude_l1(dx.view(), dx.view()).unwrap(),
            Plain,
            Threads::Seq,
        );
        assert_eq!(l1[Dim2(1, 1)], 80);
        let l2 = magnitude_l2(dx.view(), dx.view()).unwrap();
        assert!((l2.index(Dim2(0, 2)) - 40.0 * 2f32.sqrt()).abs() < 1e-4);
        let dir = direction(dx.view(), dy.view()).unwrap();
        assert_eq!(dir.index(Dim2(1, 1)), 0.0);
    }
}
