//! Ragged operations, one file per family: reductions, concatenation, indexing, ...

pub mod cat;
pub mod reduce;
