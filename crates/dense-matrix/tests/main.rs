//! dense-matrix's integration tests as one binary (one link instead of one per file);
//! the tests that need a process of their own (a counting global allocator, a
//! process-wide SIMD cap or environment, their own `main`) stay separate targets
//! in Cargo.toml.

mod beta_scaling;
mod blas;
mod common;
mod decomp;
mod elementwise;
mod fft;
mod hardening;
mod hardening3;
mod nnet;
mod optimization;
mod packed;
mod packed_eig;
mod packed_io;
mod packed_more;
mod packed_ops;
mod packed_solve;
mod pca;
mod sparse;
mod sparse_build;
mod sparse_general;
