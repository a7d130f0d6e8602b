//! Per-FSA algorithm kernels on plain slices ([`FsaView`](crate::view::FsaView) in,
//! [`Built`](crate::view::Built) out); the public `Fsa`/`FsaVec` methods wrap them.

pub(crate) mod construct;
pub(crate) mod scores;
pub(crate) mod structure;
