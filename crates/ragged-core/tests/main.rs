//! ragged-core's integration tests as one binary (one link instead of one per file);
//! the tests that need a process of their own (a counting global allocator, a
//! process-wide SIMD cap or environment, their own `main`) stay separate targets
//! in Cargo.toml.

mod arrow;
mod common;
mod deep_shapes;
mod k2_examples;
mod log_add;
mod model;
mod model_more;
mod parallel;
mod parquet;
mod seed;
