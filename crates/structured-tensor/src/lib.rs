//! TensorFlow's `tf.experimental.StructuredTensor` in Rust: a multi-dimensional array of
//! structs that share one schema, stored field-major (one array per leaf field) over ragged
//! row partitions that every field shares. A partition is a [`ragged_core::RowPartition`]
//! (cloning shares it, nothing is copied). JSON goes in with [`StructuredTensor::from_json`]
//! (TensorFlow's `from_pyval` rules) and comes out with [`StructuredTensor::to_json`]
//! (`to_pyval`); JSON text has its own fast paths ([`StructuredTensor::from_json_str`],
//! [`StructuredTensor::to_json_string`]), and large data can skip JSON through the column
//! [`Builder`].
//!
//! Core types:
//! - [`StructuredTensor`]: rank, shape, `nrows`, `row_partitions`, fields; `from_fields`,
//!   `from_json`, `from_json_with_spec` (a [`Spec`] fixes dtypes and shapes), `to_json`,
//!   `field_value`, `merge_dims`, `partition_outer_dimension`, `promote`, `with_updates`,
//!   `get` (multi-dimensional indexing), `dynamic_shape`, `with_shape_dtype` (`int32` or
//!   `int64` row partitions); TensorFlow's dispatched ops `concat`, `stack`, `gather`
//!   (`gather_with_batch_dims` for any `batch_dims` and indices of any rank; `gather_one`,
//!   `gather_ragged`, `gather_batched`, `gather_one_batched`), `expand_dims`, `size`,
//!   `boolean_mask`, `random_shuffle`, `zeros_like`, `ones_like`.
//! - [`DynamicRaggedShape`] / [`Length`]: TensorFlow's shape of ragged values
//!   (`from_lengths`, dimensions, slices, `broadcast_dynamic_shape`, `Array::broadcast_to`).
//! - [`FieldValue`]: a field's value, an [`Array`] or a nested [`StructuredTensor`].
//! - [`Array`]: a dense or ragged array of [`Values`] (`int64`, `int32`, `float64`, `float32`,
//!   `bool`, `uint8`, `string`, `bytes`).
//! - [`StringColumn`] / [`BytesColumn`]: string and bytes values Arrow-style, one byte
//!   buffer plus offsets (gather and concat copy byte ranges).
//! - [`Spec`] / [`FieldSpec`]: the type of a struct array, comparable and printable, with a
//!   JSON form (`Spec::to_json`/`from_json`) and `Spec::infer` over many inputs;
//!   `StructuredTensor::conform` casts an input to a unified spec.
//! - [`Validity`]: the null bitmap of a nullable leaf; [`Reduction`] for
//!   `Array::reduce_innermost`, which skips nulls.
//! - [`JsonOptions`]: nulls, missing keys, any field name, a spec, for
//!   `from_json_with_options` and the JSON Lines reader `from_json_lines`
//!   ([`json_lines_batches`]); errors name the record, line and column.
//! - [`Tree`]: a document a binding builds by walking its own objects (Python's dicts and
//!   lists), read by `StructuredTensor::from_tree` with the rules of JSON.
//! - [`Key`] (index keys), [`Update`] (set / transform / delete), [`FieldPath`], [`Error`].
//! - [`IndexMap`] (re-exported from `indexmap`): the map of a struct's or a spec's fields,
//!   in the order they were written.
//!
//! ```
//! use structured_tensor::{Key, StructuredTensor, Update};
//! use serde_json::json;
//!
//! let people = json!([
//!     {"age": 12, "nicknames": ["Josaphine"], "shoes": {"sizes": [8.0, 7.5, 7.5]}},
//!     {"age": 82, "nicknames": ["Bob", "Bobby"], "shoes": {"sizes": [11.0, 11.5, 12.0]}},
//!     {"age": 42, "nicknames": ["Elmo"], "shoes": {"sizes": [9.0, 9.5, 10.0]}},
//! ]);
//! let st = StructuredTensor::from_json(&people)?;
//! assert_eq!(st.shape(), vec![Some(3)]);
//! assert_eq!(st.get(&[Key::Index(0), Key::field("age")])?.to_json(), json!(12));
//!
//! // Shoe sizes US -> EU, as in TensorFlow's `with_updates` example.
//! let eu = st.with_updates(vec![(
//!     ["shoes", "sizes"],
//!     Update::transform(|v| {
//!         let sizes = v.as_array().expect("sizes is an array");
//!         Ok(sizes.map_f64(|us| (us * 2.54 + 17.0).round())?.into())
//!     }),
//! )])?;
//! assert_eq!(
//!     eu.field_value(["shoes", "sizes"])?.to_json(),
//!     json!([[37.0, 36.0, 36.0], [45.0, 46.0, 47.0], [40.0, 41.0, 42.0]])
//! );
//! assert_eq!(StructuredTensor::from_json(&people)?.to_json(), people);
//! # Ok::<(), structured_tensor::Error>(())
//! ```
//!
//! Feature flags: `arrow` (off by default): `StructuredTensor::to_arrow`/`from_arrow`
//! (nested `ListArray`s over a `StructArray`, the row partitions shared with the offsets)
//! and `to_record_batch`/`from_record_batch`; `parquet` (off by default, implies `arrow`):
//! `write_parquet`/`read_parquet` for one file, `read_parquet_dir`/`write_parquet_dir` for a
//! directory of hive partitions (`key=value/part-0.parquet`); `ArrowOptions` (nulls, any
//! field name), `Codec` (Snappy, gzip, zstd) and `WriteOptions` (file stem, append),
//! `read_parquet_with_spec` and `read_parquet_dir_with` (one spec for every file). Large `to_json` calls build their field
//! columns in parallel with rayon (a sequential path below a size threshold gives the same
//! result).

mod array;
#[cfg(feature = "arrow")]
mod arrow;
mod buffer;
mod builder;
mod dynamic_shape;
mod error;
mod gather;
mod index;
mod json_in;
mod json_out;
mod json_spec;
mod json_tree;
mod ops;
#[cfg(feature = "parquet")]
mod parquet;
#[cfg(feature = "parquet")]
mod parquet_io;
mod partition;
mod records;
mod reduce;
mod runs;
mod schema;
mod spec;
mod strings;
mod structured;
mod take;
mod text;
mod text_columns;
mod tf_ops;
mod tree;
mod validity;
mod values;

#[cfg(feature = "arrow")]
pub use crate::arrow::ArrowOptions;
#[cfg(feature = "parquet")]
pub use crate::parquet::{
    parquet_dir_files, read_parquet, read_parquet_dir, write_parquet, write_parquet_dir,
    ParquetPart, PartitionMode,
};
#[cfg(feature = "parquet")]
pub use crate::parquet_io::{
    read_parquet_dir_with, read_parquet_with_options, read_parquet_with_spec,
    write_parquet_dir_with, write_parquet_with, Codec, DirReadOptions, WriteOptions,
};
pub use array::Array;
pub use buffer::{Element, ShareError, StableBytes, ValueBuffer};
pub use builder::Builder;
pub use dynamic_shape::{DynamicRaggedShape, Length};
pub use error::{is_valid_field_name, Error, FieldPath};
pub use index::Key;
pub use indexmap::IndexMap;
pub use ops::{FieldFn, Update};
pub use partition::RowPartition;
#[cfg(feature = "parquet")]
pub use ragged_core::{Compression, ParquetOptions};
pub use records::{json_lines_batches, JsonOptions};
pub use reduce::Reduction;
pub use schema::SPEC_JSON_VERSION;
pub use spec::{FieldSpec, Spec};
pub use strings::{BytesColumn, StringColumn};
pub use structured::{FieldValue, StructuredTensor};
pub use tree::Tree;
pub use validity::Validity;
pub use values::{DType, Scalar, Values};
