//! Training and decoding with dense FSAs (network outputs): `DenseFsaVec`, `intersect_dense`,
//! the CTC loss and their gradients.

pub(crate) mod banded;
pub(crate) mod beam;
pub(crate) mod ctc;
pub(crate) mod dense_fsa;
pub(crate) mod intersect_dense;
pub(crate) mod lattice;
pub(crate) mod pruned;

pub use ctc::{ctc_loss, ctc_loss_with, CtcLoss, CtcLossConfig};
pub use dense_fsa::{DenseFsaVec, DenseFsaVecOf};
pub use intersect_dense::{intersect_dense, MAX_TRELLIS_STATES};
pub use lattice::{mmi_loss, mmi_loss_with, nbest, one_best, BestPath, MmiLoss, MmiLossConfig};
pub use pruned::intersect_dense_pruned;
