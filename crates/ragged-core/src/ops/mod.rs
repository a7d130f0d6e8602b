//! Ragged operations, one file per family: reductions, concatenation, indexing, ...

pub mod cat;
mod gather;
pub mod indexing;
pub mod layers;
pub mod more;
pub mod prune;
pub mod reduce;
pub mod structure;
mod sum;
pub mod values;
