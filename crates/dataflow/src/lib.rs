//! Yarr's fused, delayed, parallel arrays in Rust.
//!
//! Arrays of any element (numbers, or fixed-size vectors such as RGB pixels) in one to
//! three dimensions come in two kinds: explicit arrays that live in memory, and delayed
//! arrays that are functions from index to element. Maps, zips and convolutions over
//! delayed arrays fuse into one loop; a load evaluates the chain into memory, a walk folds
//! it, and both choose their schedule (fill strategy, threads) at the call site. The crate
//! also carries an image pipeline built only from these pieces: grey conversion,
//! histogram, equalisation, Gaussian blur, Sobel gradient and the Canny edge detector,
//! each agreeing with OpenCV.
//!
//! Core types:
//! - [`Dim1`], [`Dim2`], [`Dim3`] shapes, [`Block`]s and their centre/border clipping;
//! - [`Source`] / [`Target`]: reading and writing by shape or linear index;
//! - [`Array`] (owned), [`View`] / [`ViewMut`] (zero-copy over a buffer, an
//!   `image::ImageBuffer` or an ndarray view);
//! - [`Delayed`] and the fusing adaptors of [`SourceExt`] (`map`, `zip_with`, `imap`, ...),
//!   [`ComponentSlice`], [`Separate`], [`Checked`], [`DelayedTarget`];
//! - [`load`] / [`compute_with`] with [`Plain`], [`Unrolled`], [`BlockFill`] and
//!   [`Threads`]; [`walk`], [`mutate`], [`walk_p`];
//! - [`convolve2`], [`convolve_rows`], [`convolve_cols`] with [`Stencil1`], [`Stencil2`]
//!   and [`Border`]; [`convolve_separable`] (a banded load of separable stencils);
//! - the [`image`] pipeline: [`image::grey`], [`image::histogram`],
//!   [`image::gaussian_blur`], [`image::sobel_dx`], [`image::canny`].
//!
//! ```
//! use dataflow::{compute_with, from_fn, walk_p, Dim2, Plain, SourceExt, Threads};
//!
//! // A delayed 2-D array, two fused maps, one loop when computed.
//! let ramp = from_fn(Dim2(4, 6), |Dim2(y, x)| (y * 6 + x) as u32);
//! let chain = ramp.map(|v| v * 2).map(|v| v + 1);
//! let out = compute_with(&chain, Plain, Threads::Fixed(2));
//! assert_eq!(out[Dim2(3, 5)], 47);
//!
//! // A parallel walk with a join: the sum of the odd numbers 1..=47.
//! let sum = walk_p(&chain, Threads::All, || 0u64, |s, v| *s += v as u64, |a, b| a + b);
//! assert_eq!(sum, 24 * 24);
//! ```
//!
//! Feature flags: `imageproc-peer` (off by default) only adds the crate imageproc for the
//! Rust peer benchmarks; the crate depends on rayon, ndarray and image (PNG only).

// Every public function that can panic says when, in a `# Panics` section.
#![warn(clippy::missing_panics_doc)]

mod convolve;
mod delayed;
mod error;
mod explicit;
pub mod image;
mod load;
mod separable;
mod shape;
mod source;
mod walk;

pub use convolve::{
    border_interpolate, convolve2, convolve_cols, convolve_rows, Border, Convolved2, ConvolvedCols,
    ConvolvedRows, Stencil1, Stencil2, Tap,
};
pub use delayed::{
    cart_product2, cart_product3, from_fn, slices, CartProduct2, CartProduct3, Checked,
    ComponentSlice, Delayed, IMap, IZip, Map, Separate, SeparateWriter, SourceExt, Traverse,
    ZipWith, ZipWith3,
};
pub use error::Error;
pub use explicit::{Array, View, ViewMut};
pub use load::last_band_count;
pub use load::{
    compute, compute_slices, compute_with, delayed_target, dim2_rect, load, range_load, BlockFill,
    DelayedTarget, DelayedWriter, Fill, Plain, Threads, Unrolled,
};
/// The `ndarray` this crate is built with (0.16), whose types its API takes and returns;
/// use it instead of adding your own to avoid two versions.
pub use ndarray;
// The parallel threshold is cpu-features', shared with every crate: one override holds all
// of them.
pub use cpu_features::{
    load_parallel_threshold, with_parallel_threshold, DEFAULT_LOAD_PARALLEL_THRESHOLD,
};
pub use separable::convolve_separable;
pub use shape::{Block, Clipped, Dim1, Dim2, Dim3, Margin, Shape};
pub use source::{SliceWriter, Source, Target, Writer};
pub use walk::{
    fold_right, iwalk, mutate, range_walk, walk, walk_p, walk_slices_separate, walk_unrolled,
};

#[cfg(test)]
pub(crate) mod testing {
    //! Helpers shared by the unit tests.

    /// A proptest configuration with a fixed seed, printed (shown when a case fails), so
    /// that every run draws the same cases and a failure can be replayed. `PROPTEST_CASES`,
    /// when set, replaces `cases` (the memory checker runs a few under valgrind).
    pub(crate) fn proptest_config(cases: u32, seed: u64) -> proptest::test_runner::Config {
        let cases = std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(cases);
        eprintln!("proptest: {cases} cases from the fixed seed {seed}");
        proptest::test_runner::Config {
            cases,
            rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        }
    }
}
