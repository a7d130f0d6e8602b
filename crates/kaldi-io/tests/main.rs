//! kaldi-io's integration tests as one binary (one link instead of one per file);
//! the tests that need a process of their own (a counting global allocator, a
//! process-wide SIMD cap or environment, their own `main`) stay separate targets
//! in Cargo.toml.

mod background;
mod copy_feats;
#[allow(dead_code)]
#[path = "../src/bin/copy-feats.rs"]
mod copy_feats_tool;
mod golden;
mod hardening3;
mod new_values;
mod object_holders;
mod read_into;
mod tables;
mod tools;
