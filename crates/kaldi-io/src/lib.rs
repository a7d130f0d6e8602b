//! Kaldi's tables in Rust: archives (`ark`), scripts (`scp`), rspecifiers and wspecifiers
//! with all of Kaldi's options, and holders for the value types of Kaldi's tools.
//!
//! Core items:
//! - [`SequentialTableReader`]: iterate `(key, value)` over `ark:...` or `scp:...`; or
//!   `next_into`, reading each value into one the caller reuses (no allocation, no zeroing).
//! - [`RandomAccessTableReader`]: values by key, with Kaldi's `s`, `cs`, `o`, `p` options;
//!   `get_into` reads into a reused value.
//! - [`TableWriter`]: `ark:`, `scp:`, `ark,scp:` (with byte offsets), `t`/`b`, `f`/`nf`.
//! - [`read_kaldi_object`] / [`write_kaldi_object`]: one object from or to an
//!   rxfilename / wxfilename (files, `file:offset`, `-`, pipes `cmd |` and `| cmd`).
//! - [`Holder`]: how one value is read and written; implemented for `Matrix<f32/f64>`
//!   (reading `FM`, `DM`, `CM`, `CM2`, `CM3` alike), `Vector<f32/f64>`,
//!   [`CompressedMatrix`], `i32`, `f32`, `f64`, `bool`,
//!   `Vec<i32>`, `Vec<Vec<i32>>`, `Vec<(i32, i32)>`, `String`, `Vec<String>`,
//!   [`Posterior`], [`AnyObject`] (the type told by each record's header, as kaldiio
//!   reads), [`HtkMatrix`] and [`SphinxMatrix`] (HTK and Sphinx feature files) and
//!   [`IntegerVector`] (Kaldi's `WriteIntegerVector` form).
//!
//! ```
//! use kaldi_io::{CompressedMatrix, CompressionMethod, Matrix};
//! use kaldi_io::{RandomAccessTableReader, SequentialTableReader, TableWriter};
//!
//! let dir = std::env::temp_dir().join(format!("kaldi-io-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let (ark, scp) = (dir.join("feats.ark"), dir.join("feats.scp"));
//! let wspecifier = format!("ark,scp:{},{}", ark.display(), scp.display());
//!
//! let mut writer = TableWriter::<Matrix<f32>>::create(&wspecifier).unwrap();
//! writer.write("utt1", &Matrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]])).unwrap();
//! writer.write("utt2", &Matrix::from_rows(&[[5.0, 6.0]])).unwrap();
//! writer.finish().unwrap();
//!
//! // the scp points into the archive: "utt1 <ark>:5"
//! let rspecifier = format!("scp:{}", scp.display());
//! let keys: Vec<String> = SequentialTableReader::<Matrix<f32>>::open(&rspecifier)
//!     .unwrap()
//!     .map(|entry| entry.unwrap().0)
//!     .collect();
//! assert_eq!(keys, ["utt1", "utt2"]);
//!
//! let mut reader = RandomAccessTableReader::<Matrix<f64>>::open(&rspecifier).unwrap();
//! assert_eq!(reader.get("utt2").unwrap().unwrap()[(0, 1)], 6.0);
//! assert!(reader.get("utt3").unwrap().is_none());
//!
//! // Kaldi's compressed matrices, as `copy-feats --compress=true` writes them
//! let m = reader.get("utt1").unwrap().unwrap();
//! let cm = CompressedMatrix::compress(&m, CompressionMethod::Auto).unwrap();
//! assert_eq!(cm.to_matrix::<f32>()[(1, 1)], 4.0);
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```
//!
//! The dense-matrix types that the holders read and write ([`Matrix`], [`Vector`],
//! [`CompressedMatrix`], [`CompressionMethod`], [`Real`], the packed [`SpMatrix`] and
//! [`TpMatrix`], the sparse [`SparseVector`], [`SparseMatrix`] and [`GeneralMatrix`]) are
//! re-exported, and the crate itself as [`dense_matrix`] (whose `Error` is what a
//! [`Holder`] returns), so `kaldi-io` is the one dependency a reader of archives needs:
//!
//! ```
//! use kaldi_io::{Holder, SpMatrix};
//!
//! // a 2 x 2 symmetric matrix, packed lower triangle by rows, in Kaldi's binary form
//! let sp = SpMatrix::<f64>::from_packed(2, vec![1.0, 2.0, 3.0]).unwrap();
//! let mut bytes = Vec::new();
//! sp.write(&mut bytes, true).unwrap();
//! assert_eq!(&bytes[..3], b"DP "); // Kaldi's token for a double packed matrix
//! let back: Result<SpMatrix<f64>, kaldi_io::dense_matrix::Error> =
//!     SpMatrix::read(&mut bytes.as_slice(), true);
//! assert_eq!(back.unwrap().data(), &[1.0, 2.0, 3.0]);
//! ```
//!
//! Kaldi's tools `copy-feats`, `copy-matrix`, `copy-int-vector`,
//! `compute-cmvn-stats`, `apply-cmvn` and `matrix-sum` are binaries of this crate
//! (`cargo install --path crates/kaldi-io`), on the option parser in [`cli`].
//!
//! Feature flags: none. See `docs/kaldi-io.md` for the rspecifier table and the Kaldi ->
//! Rust mapping.

pub mod cli;
mod error;
mod foreign;
mod fresh;
mod holder;
mod object;
mod range;
mod specifier;
mod stream;
mod table;

/// dense-matrix, whose types the tables read and write: one dependency is enough.
pub use dense_matrix;
/// The dense-matrix types kaldi-io reads and writes, re-exported.
pub use dense_matrix::{
    CompressedMatrix, CompressionMethod, GeneralMatrix, Matrix, Real, SpMatrix, SparseMatrix,
    SparseVector, TpMatrix, Vector,
};
pub use error::Error;
pub use foreign::{HtkHeader, HtkMatrix, IntegerVector, SphinxMatrix, SPHINX_FEAT_DIM};
pub use holder::{Holder, Posterior, MAX_TEXT_LINE_LEN};
pub use object::AnyObject;
pub use specifier::{
    classify_rxfilename, classify_wxfilename, InputKind, OutputKind, Rspecifier, RspecifierKind,
    RspecifierOptions, Wspecifier, WspecifierKind, WspecifierOptions,
};
pub use table::{
    read_kaldi_object, write_kaldi_object, RandomAccessTableReader, SequentialTableReader,
    TableWriter, MAX_KEY_LEN, MAX_SCP_LINE_LEN,
};
