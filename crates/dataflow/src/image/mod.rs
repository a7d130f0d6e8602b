//! The image pipeline, built only from the crate's core: grey conversion, histogram and
//! equalisation, Gaussian blur, Sobel gradient and Canny edges, each agreeing with OpenCV.
//!
//! One line per algorithm (`=>` is a delayed step, `|>` a load into memory):
//! - grey: `rgb => map(cvtColor fixed-point weights) |> grey`
//! - histogram: `grey => walk_p(mutate bins, join by adding tables)`
//! - equalise: `grey => histogram => lut(cumulative * 255 / (n - first)) ; grey => map(lut) |> out`
//! - blur: `grey or rgb rows => row pass in u16 (ring of N rows) => cols in u32 => round |> out`
//! - gradient: `grey => convolve2(sobel dx), convolve2(sobel dy) => zip_with(magnitude) |> mag`
//! - canny: `grey => zip(sobel dx, sobel dy) |> [dx, dy] => suppress |> map => hysteresis(bands, fix-up) => edges`
//! - canny RGB: `rgb => per channel sobel dx, dy => per pixel the channel of largest magnitude => as grey`

mod blur;
mod canny;
mod color;
mod fixed_blur;
mod hist;
mod io;
mod sobel;

pub use blur::{
    gaussian_blur, gaussian_blur_rgb, gaussian_kernel, gaussian_stencil, sigma_for_ksize,
};
pub use canny::{canny, canny_rgb, Canny, Norm};
pub use color::{grey, grey_of, rgb_to_grey, Grey};
pub use hist::{equalize_hist, equalize_lut, histogram};
pub use io::{read_grey_png, write_grey_png};
// The vector level and its cap are cpu-features', shared with every crate: one cap holds
// all of their kernels.
pub use cpu_features::{detected_simd, set_simd_cap, simd_level, SimdLevel, SIMD_CAP_ENV};
pub use sobel::{
    direction, magnitude_l1, magnitude_l2, sobel_dx, sobel_dy, sobel_xy, SOBEL_DX, SOBEL_DY,
};

/// What the tests of every SIMD level share: image widths around the vector widths, and
/// seeded random pixels.
#[cfg(test)]
mod simd_test_support {
    /// Widths around the vector widths (32 and 64 pixels), and odd ones.
    pub(super) const WIDTHS: [usize; 12] = [1, 3, 31, 32, 33, 63, 64, 65, 100, 127, 129, 301];

    /// `n` bytes from a seeded linear congruential generator (the high byte of each step).
    pub(super) fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (s >> 56) as u8
            })
            .collect()
    }
}
