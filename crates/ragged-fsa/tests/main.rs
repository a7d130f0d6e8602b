//! ragged-fsa's integration tests as one binary (one link instead of one per file);
//! the tests that need a process of their own (a counting global allocator, a
//! process-wide SIMD cap or environment, their own `main`) stay separate targets
//! in Cargo.toml.

mod algebra;
mod algebra_extras;
mod algebra_golden;
mod algebra_k2;
mod algorithms;
mod common;
mod ctc_golden;
mod decode_golden;
mod dense_intersect;
mod dense_lattice;
mod dense_pruned;
mod golden;
mod hardening;
#[path = "common/hlg.rs"]
mod hlg;
mod hlg_golden;
mod mmi_golden;
mod parallel;
mod rnnt;
mod rnnt_golden;
mod seed;
mod single_graph;
mod text;
