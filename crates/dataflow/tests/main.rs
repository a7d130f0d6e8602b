//! dataflow's integration tests as one binary (one link instead of one per file);
//! the tests that need a process of their own (a counting global allocator, a
//! process-wide SIMD cap or environment, their own `main`) stay separate targets
//! in Cargo.toml.

mod opencv_agreement;
mod png_io;
