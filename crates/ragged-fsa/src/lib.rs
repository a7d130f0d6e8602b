//! FSAs stored as ragged arrays, in the manner of k2.
//!
//! An [`Fsa`] is a 2-axis ragged array of [`Arc`]s indexed `[state][arc]`; an [`FsaVec`] is a
//! 3-axis one indexed `[fsa][state][arc]`, with states numbered within each FSA, exactly as in
//! k2 (seed: the Shaanxi and Taiwan universities example). Start state 0, one final state
//! (the last) entered only by arcs labelled `-1`, scores are log-probabilities. Per-arc
//! attributes (`aux_labels`, plain or ragged, and any named `f32`/`i32` arrays) travel with the
//! arcs: every algorithm returns an arc map (new arc -> old arc) and carries them through it.
//! The algorithms run on an `FsaVec` in parallel across its FSAs (rayon).
//!
//! Core types:
//! - [`Arc`]: `{ src_state, dest_state, label, score }`, 16 bytes, k2's order.
//! - [`Fsa`], [`FsaVec`], [`create_fsa_vec`]: one FSA, a vector of FSAs, stacking.
//! - [`Attr`]: a per-arc attribute.
//! - [`TextFormat`]: k2 and OpenFst text, with aux and ragged label columns.
//! - [`Properties`]: k2's property bits, printed with k2's names.
//! - [`Semiring`], [`Real`]: tropical or log, accumulated in `f32` or `f64` (`Real` is
//!   ragged-core's, re-exported).
//! - [`DenseFsaVec`], [`intersect_dense`], [`intersect_dense_pruned`], [`ctc_loss`],
//!   [`mmi_loss`], [`one_best`]: network outputs as dense FSAs, training losses with their
//!   gradients, decoding (see the guide's "Training and decoding").
//! - [`WeightPushing`], [`DeterminizeConfig`]: options of the algebra (`intersect`,
//!   `compose`, `remove_epsilon`, `determinize`, `minimize`).
//! - [`SymbolTable`]: k2/OpenFst `words.txt` symbol tables.
//! - [`Error`]: every fallible operation's error.
//!
//! ```
//! use ragged_fsa::{create_fsa_vec, Fsa, Semiring};
//!
//! let shaanxi: Fsa = "0 1 1 0\n0 1 2 0\n0 1 3 0\n0 1 4 0\n1 2 5 0\n2 3 6 0\n3 4 -1 0\n4"
//!     .parse()
//!     .unwrap();
//! let taiwan: Fsa = "0 1 7 0\n1 2 8 0\n2 3 -1 0\n3".parse().unwrap();
//! let china = create_fsa_vec(&[shaanxi, taiwan]);
//! let shape = china.arcs().shape();
//! assert_eq!(shape.row_splits(1), &[0, 5, 9]);
//! assert_eq!(shape.row_ids(2), &[0, 0, 0, 0, 1, 2, 3, 5, 6, 7]);
//!
//! let (best, arc_map) = china.shortest_path().unwrap();
//! assert_eq!(best.get(1).labels(), vec![7, 8, -1]);
//! assert_eq!(arc_map, [0, 4, 5, 6, 7, 8, 9]); // ties go to the first arc
//! let tot: Vec<f64> = china.get_tot_scores(Semiring::Log).unwrap();
//! assert!((tot[0] - 4f64.ln()).abs() < 1e-12); // four equally likely paths
//! ```
//!
//! The arrays of the RNN-T functions are `ndarray` 0.16's, re-exported as [`ndarray`]:
//! build them with `ragged_fsa::ndarray` rather than a separate `ndarray` dependency, whose
//! version could differ and whose types would then not match.
//!
//! ```
//! use ragged_fsa::ndarray::{Array2, Array3};
//! use ragged_fsa::{get_rnnt_logprobs, RnntType};
//!
//! // one sequence, S = 2 symbols over T = 3 frames, C = 4 classes, blank 0
//! let lm = Array3::<f32>::zeros((1, 3, 4));
//! let am = Array3::<f32>::zeros((1, 3, 4));
//! let symbols = Array2::from_shape_vec((1, 2), vec![1i64, 2]).unwrap();
//! let (px, py) =
//!     get_rnnt_logprobs(lm.view(), am.view(), symbols.view(), 0, RnntType::Regular, None)
//!         .unwrap();
//! // all-zero logits: each class has probability 1/4
//! assert_eq!(px.shape(), &[1, 2, 4]);
//! assert!((px[[0, 1, 2]] - 0.25f32.ln()).abs() < 1e-6);
//! assert!((py[[0, 2, 0]] - 0.25f32.ln()).abs() < 1e-6);
//! ```
//!
//! Feature flags: none. Parallelism is always on above [`PARALLEL_MIN_ARCS`] arcs.

mod algebra;
mod arc;
mod attr;
mod dense;
mod dot;
mod equivalence;
mod error;
mod fsa;
mod kernels;
mod ops;
mod properties;
mod relabel;
pub mod rnnt;
mod symbol_table;
mod text;
mod view;

/// The guide (`docs/ragged-fsa.md`): the k2 -> Rust table, conventions, text formats and
/// the exact behaviour of each algorithm. Its examples run as doc tests.
#[doc = include_str!("../../../docs/ragged-fsa.md")]
pub mod guide {}

pub use algebra::{DeterminizeConfig, WeightPushing, INS_DEL_SCORE_OFFSET};
pub use arc::Arc;
pub use attr::{Attr, Attrs, AUX_LABELS};
pub use dense::{
    ctc_loss, ctc_loss_with, intersect_dense, intersect_dense_pruned, mmi_loss, mmi_loss_with,
    nbest, one_best, BestPath, CtcLoss, CtcLossConfig, DenseFsaVec, DenseFsaVecOf, MmiLoss,
    MmiLossConfig, MAX_TRELLIS_STATES,
};
pub use equivalence::{RandEquivalentConfig, RandomFsaConfig};
pub use error::{Error, ParseProblem};
pub use fsa::{create_fsa_vec, Fsa, FsaVec, FsaVecRef, PARALLEL_MIN_ARCS};
pub use kernels::scores::{Real, Semiring};
/// The `ndarray` this crate is built with (0.16), whose types its API takes and returns;
/// use it instead of adding your own to avoid two versions.
pub use ndarray;
pub use properties::Properties;
pub use rnnt::{
    do_rnnt_pruning, get_rnnt_logprobs, get_rnnt_logprobs_joint, get_rnnt_logprobs_pruned,
    get_rnnt_logprobs_smoothed, get_rnnt_prune_ranges, joint_mutual_information_recursion,
    mutual_information_recursion, rnnt_loss, rnnt_loss_pruned, rnnt_loss_simple,
    rnnt_loss_smoothed, JointMutualInformation, MutualInformation, Reduction, RnntLoss,
    RnntLossConfig, RnntType,
};
pub use symbol_table::SymbolTable;
pub use text::TextFormat;
pub use view::MAX_OUTPUT_ARCS;
