//! RGB -> grey with OpenCV's fixed-point `cvtColor(COLOR_RGB2GRAY)` weights and rounding.

use crate::delayed::{Map, SourceExt};
use crate::source::Source;

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

/// The grey image of an RGB source, delayed.
#[allow(clippy::type_complexity)]
pub fn grey<A: Source<Elem = [u8; 3]>>(rgb: A) -> Map<A, impl Fn([u8; 3]) -> u8 + Copy + Sync> {
    rgb.map(rgb_to_grey)
}

/// Alias of [`grey`] for readers who look for a noun.
#[allow(clippy::type_complexity)]
pub fn grey_of<A: Source<Elem = [u8; 3]>>(rgb: A) -> Map<A, impl Fn([u8; 3]) -> u8 + Copy + Sync> {
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
}
