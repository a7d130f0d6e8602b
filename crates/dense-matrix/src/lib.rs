//! Kaldi's dense matrix library (`Vector`, `Matrix`, `SubVector`, `SubMatrix`, `SpMatrix`,
//! `TpMatrix`) in Rust, on OpenBLAS (CBLAS) and LAPACK, with views that the borrow checker
//! keeps safe. Every method carries its Kaldi name in snake case (`AddMatVec` ->
//! [`VectorBase::add_mat_vec`], `ApplySoftMax` -> [`VectorBase::apply_softmax`]) and
//! Kaldi's semantics; matrices are row-major with Kaldi's stride rules, and the padding
//! between `cols` and `stride` is never read.
//!
//! Core types:
//! - [`Real`]: the element type, `f32` or `f64`.
//! - [`Vector`] (owned) and [`VectorBase`] (the operations; `&VectorBase` is a shared view
//!   [`VectorView`], `&mut VectorBase` a mutable one [`VectorViewMut`]).
//! - [`Matrix`] (owned, row-major), [`MatrixView`] / [`MatrixViewMut`] (any rectangular
//!   window), all dereferencing to [`MatrixBase`], where the operations live.
//! - [`Trans`]: Kaldi's `kNoTrans` / `kTrans` flag; [`ResizeType`], [`StrideType`].
//! - [`SpMatrix`] / [`TpMatrix`]: packed symmetric and lower-triangular matrices.
//! - [`SparseVector`] / [`SparseMatrix`] / [`GeneralMatrix`]: Kaldi's sparse types and
//!   their binary `SV` / `SM` forms.
//! - [`SplitRadixRealFft`] / [`SplitRadixComplexFft`], [`real_fft`], [`complex_fft`],
//!   [`compute_dct_matrix`]: Kaldi's FFTs, with its packing of the real spectrum.
//! - [`compute_pca`], [`linear_cgd`], [`OptimizeLbfgs`]: Kaldi's PCA, conjugate gradients
//!   and L-BFGS.
//! - [`Svd`], [`Eig`], [`SymEig`]: decomposition results; [`Error`] for numerical failures.
//! - [`SimdLevel`]: the vector level of `exp` and the softmaxes, detected at run time
//!   ([`detected_simd`]) and capped for comparisons ([`set_simd_cap`], or the environment
//!   variable [`SIMD_CAP_ENV`], `ARRAYS_SIMD_CAP`); results never depend on it. The
//!   level, its cap and the parallel threshold ([`parallel_threshold`]) are the
//!   cpu-features crate's, re-exported, so one cap holds every crate's kernels.
//! - [`blas_kernel`]: which OpenBLAS kernel runs; a kernel below the CPU (an SSE fallback
//!   on an AVX2 CPU, an AVX2 kernel on an AVX-512 one) is replaced before the first BLAS
//!   call unless `OPENBLAS_CORETYPE` chose it, and an SSE kernel that stays is reported
//!   once on stderr.
//! - Interop: zero-copy `ndarray` views (`as_array`, `MatrixView::from_array`), the `approx`
//!   traits, and Kaldi's binary and text `Write`/`Read` (`write_kaldi`, `read_kaldi`,
//!   `Display`, `FromStr`).
//!
//! ```
//! use dense_matrix::{Matrix, Trans, Vector};
//!
//! let m = Matrix::from_rows(&[[1.0f64, 2.0], [3.0, 4.0]]);
//! let x = Vector::from_vec(vec![1.0, 1.0]);
//! let mut y = Vector::new(2);
//! y.add_mat_vec(1.0, &m, Trans::NoTrans, &x, 0.0); // y = M x
//! assert_eq!(y.data(), &[3.0, 7.0]);
//!
//! // a view of the second column, then Kaldi's ApplySoftMax on a row
//! assert_eq!(m.col_range(1, 1).sum(), 6.0);
//! let mut row = m.row(0).to_vector();
//! let log_norm = row.apply_softmax();
//! assert!((log_norm - (1f64.exp() + 2f64.exp()).ln()).abs() < 1e-12);
//!
//! let svd = m.svd().unwrap();
//! assert!(svd.s[0] >= svd.s[1]);
//! ```
//!
//! Feature flags:
//! - `openblas-src`: link OpenBLAS through the `openblas-src` crate (its `system` mode,
//!   found by `pkg-config`) instead of this crate's build script. Off by default: the
//!   build script links the system `libopenblas` (which holds both the CBLAS and the
//!   LAPACK symbols); set `OPENBLAS_LIB_DIR` to link one elsewhere.
//!
//! See `docs/dense-matrix.md` for the Kaldi -> Rust mapping table.

// Every public function that can panic says when, in a `# Panics` section.
#![warn(clippy::missing_panics_doc)]

// The `openblas-src` crate carries only the link line; naming it keeps it linked.
#[cfg(feature = "openblas-src")]
extern crate openblas_src as _;

mod blas;
mod compressed;
mod decomp;
mod error;
mod exp;
mod fft;
mod interop;
mod io;
mod kernel;
mod kernels;
mod matrix;
mod matrix_funcs;
mod matrix_ops;
mod nnet;
mod optimization;
mod owned;
mod packed;
mod packed_eig;
mod packed_ops;
mod packed_solve;
mod pca;
mod real;
mod scratch;
mod sparse;
mod text;
mod vector;

pub use blas::{trace_mat_mat, vec_mat_vec, vec_vec};
pub use compressed::{CompressedMatrix, CompressionMethod, MAX_RANGE as MAX_COMPRESSED_RANGE};
pub use decomp::{Eig, Svd, SymEig};
pub use error::{Error, Position};
pub use fft::{
    complex_fft, compute_dct_matrix, real_fft, real_fft_inefficient, SplitRadixComplexFft,
    SplitRadixRealFft,
};
pub use io::MAX_TEXT_LINE_LEN;
pub use kernel::{blas_kernel, select_blas_kernel, BlasKernel, IsaLevel};
pub use matrix::{default_stride, Matrix, MatrixBase, MatrixView, MatrixViewMut, StrideType};
pub use matrix_funcs::{trace_mat_mat_mat, trace_mat_mat_mat_mat};
/// The `ndarray` this crate is built with (0.16), whose types its API takes and returns;
/// use it instead of adding your own to avoid two versions.
pub use ndarray;
pub use optimization::{linear_cgd, LbfgsOptions, LinearCgdOptions, OptimizeLbfgs};
pub use packed::{SpCopyType, SpMatrix, TpMatrix};
pub use packed_eig::TOP_EIGS_SEED;
pub use packed_ops::{
    trace_mat_sp_mat, trace_mat_sp_mat_sp, trace_sp_mat, trace_sp_sp, trace_sp_sp_lower, vec_sp_vec,
};
pub use packed_solve::{
    solve_double_quadratic_matrix_problem, solve_quadratic_matrix_problem, solve_quadratic_problem,
    SolverOptions,
};
pub use pca::compute_pca;
pub use real::{blas_num_threads, set_blas_num_threads, Real, Trans};
// The vector level and the parallel threshold are cpu-features', shared with every crate:
// one cap or override holds all of them.
pub use cpu_features::{
    detected_simd, parallel_threshold, set_simd_cap, simd_level, with_parallel_threshold,
    SimdLevel, DEFAULT_PARALLEL_THRESHOLD, SIMD_CAP_ENV,
};
pub use sparse::{
    append_general_matrix_rows, extract_row_range_with_padding, filter_compressed_matrix_rows,
    filter_general_matrix_rows, filter_matrix_rows, filter_sparse_matrix_rows, trace_mat_smat,
    vec_svec, GeneralMatrix, SparseMatrix, SparseVector,
};
pub use vector::{ResizeType, Vector, VectorBase, VectorView, VectorViewMut};
