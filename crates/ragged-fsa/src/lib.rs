//! FSAs stored as ragged arrays, in the manner of k2.
//!
//! (This crate is being built; see its issue.)

use std::fmt;

/// Errors of this crate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A placeholder until the crate lands its real variants.
    Invalid {
        /// What was wrong.
        what: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid { what } => write!(f, "invalid input: {what}"),
        }
    }
}

impl std::error::Error for Error {}
