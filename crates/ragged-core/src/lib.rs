//! Ragged arrays in the manner of k2: a [`RaggedShape`] of any number of axes, stored as one
//! `row_splits` vector per axis with `row_ids` computed lazily and cached, and [`Ragged<T>`],
//! a shape plus a flat vector of values. Indexing uses k2's names (idx0, idx01, idx012, ...)
//! and the operations of k2's `ragged_ops.h` appear under their k2 names in Rust case, with
//! TensorFlow's `RowPartition` encodings (`row_lengths`, `value_rowids`, `uniform_row_length`)
//! as constructors and getters. Hot kernels run sequentially below a size threshold and with
//! rayon above it, with identical results.
//!
//! Core types:
//! - [`RowPartition`]: one layer (k2's `RaggedShapeLayer`, TF's `RowPartition`).
//! - [`RaggedShape`]: the layers of a ragged shape, cheap to clone.
//! - [`Ragged<T>`]: a shape and its values.
//! - [`RaggedView`]: a zero-copy sub-array, as returned by [`Ragged::index`].
//! - [`Renumbering`]: a keep mask with its `old2new`/`new2old` maps, for subsetting.
//! - [`Error`]: every fallible operation's error.
//! - [`SimdLevel`]: the vector level of the hot kernels, detected at run time
//!   ([`detected_simd`]) and capped for comparisons ([`set_simd_cap`], or the environment
//!   variable [`SIMD_CAP_ENV`], `ARRAYS_SIMD_CAP`); results never depend on it.
//!
//! Highlights: shape building ([`ragged_shape2`], [`compose_ragged_shapes`], ...), structure
//! ([`Ragged::cat`], [`Ragged::stack`], [`Ragged::index_axis`], [`RaggedShape::remove_axis`],
//! [`Ragged::subset_ragged`], [`Ragged::transpose`], [`Ragged::unstack`], ...), values
//! ([`Ragged::sum_per_sublist`], [`Ragged::normalize_per_sublist`], [`Ragged::sort_sublists`],
//! [`Ragged::unique_sequences`], [`Ragged::reduce_axis`], [`Ragged::pad`], ...), flat arrays
//! ([`append`], [`append_map`], [`splice_row_splits`]: k2's `Append` and `SpliceRowSplits`,
//! in parallel tasks when large). The guide
//! `docs/ragged-core.md` maps every k2 name to ours and lists where we differ.
//!
//! ```
//! use ragged_core::Ragged;
//!
//! // Words and their phones: row_splits map coordinates to offsets, row_ids back.
//! let phones: Ragged<String> = "[ [ h e ] [ sh an ] [ t on g ] [ yi ] ]".parse().unwrap();
//! assert_eq!(phones.row_splits(1), &[0, 2, 4, 7, 8]);
//! assert_eq!(phones.row_ids(1), &[0, 0, 1, 1, 2, 2, 2, 3]);
//! let offset = phones.shape().offset_of(&[2, 2]).unwrap();
//! assert_eq!((offset, phones.values()[offset].as_str()), (6, "g"));
//! assert_eq!(phones.shape().coords_of(6), vec![2, 2]);
//!
//! let counts: Ragged<i32> = "[ [ 1 2 ] [ ] [ 3 ] ]".parse().unwrap();
//! assert_eq!(counts.sum_per_sublist(0), vec![3, 0, 3]);
//! ```
//!
//! Every item has one path, at the crate root: `ragged_core::Real`, `ragged_core::log_add`;
//! the module that implements the operations is private.
//!
//! ```compile_fail,E0603
//! use ragged_core::ops::values::Real; // not a second path to ragged_core::Real
//! ```
//!
//! Feature flags: `arrow` (off by default) converts a `Ragged<T>` to and from an Arrow
//! `ListArray` (`into_arrow`, `to_arrow`, `from_arrow`), zero-copy where the layouts agree;
//! `parquet` (off by default, implies `arrow`) writes and reads a `Ragged<T>` as one list
//! column of a Parquet file (`write_ragged_parquet`, `read_ragged_parquet`);
//! rayon is always on (see [`with_parallel_threshold`]).

// Every public function that can panic says when, in a `# Panics` section.
#![warn(clippy::missing_panics_doc)]

mod append;
#[cfg(feature = "arrow")]
mod arrow;
mod build;
mod error;
// Private: its free items are re-exported below, once, at the crate root; the rest are
// methods of `Ragged` and `RaggedShape`.
mod ops;
mod par;
#[cfg(feature = "parquet")]
pub mod parquet;
mod ragged;
mod renumbering;
mod row_partition;
mod shape;
mod text;

#[cfg(feature = "parquet")]
pub use crate::parquet::{
    read_ragged_parquet, write_ragged_parquet, Compression, ParquetOptions, DEFAULT_ROW_GROUP_SIZE,
};
pub use append::{append, append_map, splice_row_splits};
#[cfg(feature = "arrow")]
pub use arrow::ArrowValue;
pub use build::{
    compose_ragged_shapes, compose_ragged_shapes3, decompose_ragged_shape, empty_ragged_shape,
    get_layer, ragged_shape2, ragged_shape3, ragged_shape4, random_ragged, random_ragged_shape,
    regular_ragged_shape, trivial_shape, ShapeRng,
};
pub use error::Error;
/// The `ndarray` this crate is built with (0.16), whose types its API takes and returns;
/// use it instead of adding your own to avoid two versions.
pub use ndarray;
pub use ops::indexing::{get_counts_partitioned, get_transpose_reordering, Unstacked};
pub use ops::layers::{
    append_ragged_layer, check_layer_equal, intersperse_ragged_layer, merge_ragged_layer,
    subsample_ragged_layer,
};
pub use ops::more::get_offsets;
pub use ops::values::{log_add, PadMode, PadSide, Real, Reduced, UniqueSequences};
pub use ragged::{Ragged, RaggedView};
pub use renumbering::Renumbering;
pub use row_partition::{row_ids_to_row_splits, row_splits_to_row_ids, RowPartition};
pub use shape::RaggedShape;
// The vector level and the parallel threshold are cpu-features', shared with every crate:
// one cap or override holds all of them.
pub use cpu_features::{
    detected_simd, parallel_threshold, set_simd_cap, simd_level, with_parallel_threshold,
    SimdLevel, DEFAULT_PARALLEL_THRESHOLD, SIMD_CAP_ENV,
};
