//! structured-tensor's integration tests as one binary (one link instead of one per file);
//! the tests that need a process of their own (a counting global allocator, a
//! process-wide SIMD cap or environment, their own `main`) stay separate targets
//! in Cargo.toml.

mod arrow;
mod defaults;
mod dynamic_ragged_shape;
mod field_order;
mod gather_batch_dims;
mod json_spec;
mod parquet;
mod parquet_hostile;
mod properties;
mod real_world;
mod real_world_golden;
mod real_world_parquet;
mod shape_dtype;
mod string_columns;
mod tensorflow_ops;
mod tensorflow_pyval;
mod tensorflow_slice;
mod tf_ops;
mod tf_ops_golden;
