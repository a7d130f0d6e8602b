//! RGB -> grey with OpenCV's fixed-point `cvtColor(COLOR_RGB2GRAY)` weights and rounding.

use std::ops::Range;

use crate::source::{map_span, Source};

/// Fixed-point weights of R, G and B with 15 fraction bits (0.299, 0.587, 0.114, summing
/// to exactly `1 << 15`), as OpenCV's 8-bit `RGB2Gray`.
pub const GREY_WEIGHTS: [u32; 3] = [9798, 19235, 3735];
const SHIFT: u32 = 15;

/// The grey level of one RGB pixel: `(9798 r + 19235 g + 3735 b + 2^14) >> 15`.
#[inline(always)]
pub fn rgb_to_grey([r, g, b]: [u8; 3]) -> u8 {
    let [wr, wg, wb] = GREY_WEIGHTS;
    ((r as u32 * wr + g as u32 * wg + b as u32 * wb + (1 << (SHIFT - 1))) >> SHIFT) as u8
}

/// The grey image of an RGB source, delayed: `map(rgb_to_grey)` whose row spans over
/// explicit memory are converted a whole row at a time, in a loop the compiler vectorises.
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct Grey<A> {
    rgb: A,
}

/// Pixel by pixel over interleaved bytes: 3 bytes in, 1 out.
#[inline(always)]
fn grey_bytes(src: &[u8], out: &mut [u8]) {
    for (o, p) in out.iter_mut().zip(src.chunks_exact(3)) {
        *o = rgb_to_grey([p[0], p[1], p[2]]);
    }
}

impl<A: Source<Elem = [u8; 3]>> Source for Grey<A> {
    type Elem = u8;
    type Shape = A::Shape;
    const LINEAR: bool = A::LINEAR;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.rgb.extent()
    }
    #[inline(always)]
    fn index(&self, idx: A::Shape) -> u8 {
        rgb_to_grey(self.rgb.index(idx))
    }
    #[inline(always)]
    fn linear_index(&self, i: usize) -> u8 {
        rgb_to_grey(self.rgb.linear_index(i))
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> u8 {
        // SAFETY: forwarded contract.
        rgb_to_grey(unsafe { self.rgb.index_unchecked(idx) })
    }
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> u8 {
        // SAFETY: forwarded contract.
        rgb_to_grey(unsafe { self.rgb.linear_index_unchecked(i) })
    }
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: A::Shape,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
        out: *mut u8,
    ) {
        // SAFETY (whole body): the caller keeps the span inside the extent and `out`
        // writable for `cols.len()` elements.
        unsafe {
            let n = cols.len();
            match self.rgb.span_slice(ncols, row, cols.clone()) {
                Some(px) => grey_bytes(px.as_flattened(), std::slice::from_raw_parts_mut(out, n)),
                None => map_span(&self.rgb, extent, ncols, row, cols, out, rgb_to_grey),
            }
        }
    }
}

/// The grey image of an RGB source, delayed.
pub fn grey<A: Source<Elem = [u8; 3]>>(rgb: A) -> Grey<A> {
    Grey { rgb }
}

/// Alias of [`grey`] for readers who look for a noun.
pub fn grey_of<A: Source<Elem = [u8; 3]>>(rgb: A) -> Grey<A> {
    grey(rgb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_and_primaries() {
        assert_eq!(GREY_WEIGHTS.iter().sum::<u32>(), 1 << 15);
        // Values printed by cv2.cvtColor for pure primaries (OpenCV 5.0).
        assert_eq!(rgb_to_grey([255, 0, 0]), 76);
        assert_eq!(rgb_to_grey([0, 255, 0]), 150);
        assert_eq!(rgb_to_grey([0, 0, 255]), 29);
        assert_eq!(rgb_to_grey([255, 255, 255]), 255);
    }

    #[test]
    fn row_spans_equal_pixel_by_pixel() {
        use crate::delayed::SourceExt;
        use crate::explicit::View;
        use crate::load::{compute_with, Plain, Threads};
        use crate::shape::Dim2;
        let (rows, cols) = (37usize, 301usize);
        let px: Vec<[u8; 3]> = (0..(rows * cols) as u64)
            .map(|i| {
                let v = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                [v >> 56, v >> 48, v >> 40].map(|b| b as u8)
            })
            .collect();
        let want: Vec<u8> = px.iter().map(|&p| rgb_to_grey(p)).collect();
        let a = View::new(Dim2(rows, cols), &px).unwrap();
        for threads in [Threads::Seq, Threads::Fixed(3)] {
            assert_eq!(compute_with(&grey(a), Plain, threads).as_slice(), &want[..]);
            // A delayed RGB source goes through the element path.
            let d = grey(a.map(|p| p));
            assert_eq!(compute_with(&d, Plain, threads).as_slice(), &want[..]);
        }
        assert_eq!(grey(a).index(Dim2(3, 7)), want[3 * cols + 7]);
    }
}
