//! The integration tests of cpu-features, one binary: one cap holds the kernels of every
//! crate that uses this one.

mod one_cap;
