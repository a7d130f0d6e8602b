//! The processor features the workspace's kernels are built on, in one place: which vector
//! level they run ([`SimdLevel`], detected at run time by [`detected_simd`]), one cap on it
//! for the whole process ([`set_simd_cap`], or the environment variable [`SIMD_CAP_ENV`],
//! `ARRAYS_SIMD_CAP`), the macro that compiles a kernel once per level and runs the copy of
//! the current one ([`at_level!`]), the helpers that hold the cap for a test
//! ([`with_simd_cap`], [`at_every_level`]), and the sizes at which kernels go parallel
//! ([`parallel_threshold`], [`load_parallel_threshold`], overridden per thread by
//! [`with_parallel_threshold`]).
//!
//! ragged-core, dense-matrix and dataflow ask this crate and re-export its items, so one
//! cap holds all of their kernels and each of them is still usable alone. The crate has no
//! dependencies.
//!
//! Core items:
//! - [`SimdLevel`]: `Scalar`, `Avx2` (with FMA), `Avx512` (F, BW, VL), lowest first.
//! - [`simd_level`]: the level kernels run now, never above the processor's.
//! - [`at_level!`]: dispatch; every level gives the same bits.
//! - [`parallel_threshold`]: the size of the sequential/parallel split.
//!
//! ```
//! use cpu_features::{at_every_level, at_level, set_simd_cap, simd_level, SimdLevel};
//!
//! #[inline(always)]
//! fn sum_of_squares(xs: &[f32]) -> f32 {
//!     xs.iter().map(|x| x * x).sum()
//! }
//!
//! // a kernel with one copy per level; the current level's copy runs
//! fn kernel(xs: &[f32]) -> f32 {
//!     at_level!(simd_level(), [], (xs: &[f32]) -> f32, sum_of_squares(xs))
//! }
//!
//! let xs: Vec<f32> = (0..1000).map(|i| i as f32 * 0.25).collect();
//! // the same bits at every level this processor has
//! let sums = at_every_level(|_level| kernel(&xs).to_bits());
//! assert!(sums.iter().all(|&s| s == sum_of_squares(&xs).to_bits()));
//!
//! // one call caps every crate's kernels (ARRAYS_SIMD_CAP=avx2 does it from outside)
//! let old = set_simd_cap(SimdLevel::Avx2);
//! assert!(simd_level() <= SimdLevel::Avx2);
//! set_simd_cap(old);
//! ```
//!
//! Feature flags: none.

// Every public function that can panic says when, in a `# Panics` section.
#![warn(clippy::missing_panics_doc)]

mod dispatch;
mod level;
mod testing;
mod threshold;

pub use level::{
    detected_simd, set_simd_cap, simd_level, splits_512_bit_ops, SimdLevel, SIMD_CAP_ENV,
};
pub use testing::{at_every_level, with_simd_cap};
pub use threshold::{
    go_parallel, load_parallel_threshold, parallel_threshold, with_parallel_threshold,
    DEFAULT_LOAD_PARALLEL_THRESHOLD, DEFAULT_PARALLEL_THRESHOLD,
};
