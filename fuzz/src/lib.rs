//! Fuzz targets for every parser, binary reader and validating constructor of the workspace.
//!
//! Each target is a plain `fn(&[u8])` that feeds the bytes to one public entry point, then
//! checks what it can about the result: a round trip through the printer, agreement with a
//! second reader or a naive model, the invariants every algorithm's output must keep. The
//! same functions serve the coverage-guided engine (the `afl/` harness that `cargo xtask
//! fuzz` builds) and the replay test (`tests/replay.rs`), which feeds them every checked-in
//! corpus file and every past crash.
//!
//! **What counts as a failure:** a panic (the checks here panic with a message when a round
//! trip breaks or two readers disagree), an abort (a failed allocation, a stack overflow), or
//! a hang (the engine's time limit). Documented panics, such as out-of-range indexing, are
//! never called. Each target bounds its own work: inputs longer than its cap are ignored and
//! sizes read from the bytes are capped, so the engine spends its time on bugs rather than
//! on legitimately huge inputs.
//!
//! **Known defects.** A few guards skip inputs that would trigger a defect already listed in
//! the workspace's hardening issue (issue 17), so that a known crash does not mask the rest
//! of a target. Each guard names its item; remove it once that item's fix is merged.
//!
//! ```
//! // Every target accepts any bytes without failing.
//! for (name, target) in fuzz_targets::TARGETS {
//!     target(b"[ [ 1 2 ] [ 3 ] ]");
//!     target(&[0xff, 0x00, 0x7f]);
//!     assert!(fuzz_targets::target(name).is_some());
//! }
//! ```

pub mod dataflow_new;
pub mod dense_intersect;
pub mod dense_new;
pub mod fsa;
pub mod fsa_algebra;
pub mod json;
pub mod kaldi;
pub mod kaldi_holders;
pub mod kaldi_tables;
pub mod parquet;
pub mod png;
pub mod ragged_text;

/// A fuzz target: any bytes in, a panic out when a check fails.
pub type Target = fn(&[u8]);

/// Every target by name; the names are the folder names under `corpus/`, `regressions/`
/// and `found/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("ragged_text", ragged_text::ragged_text),
    ("shape_text", ragged_text::shape_text),
    ("fsa_k2_text", fsa::fsa_k2_text),
    ("fsa_openfst_text", fsa::fsa_openfst_text),
    ("fsa_from_arcs", fsa::fsa_from_arcs),
    ("fsa_algebra", fsa_algebra::fsa_algebra),
    ("kaldi_binary", kaldi::kaldi_binary),
    ("kaldi_text", kaldi::kaldi_text),
    ("kaldi_holders", kaldi_holders::kaldi_holders),
    ("kaldi_tables", kaldi_tables::kaldi_tables),
    ("dense_new", dense_new::dense_new),
    ("dense_intersect", dense_intersect::dense_intersect),
    ("json", json::json),
    ("parquet_read", parquet::parquet_read),
    ("parquet_dir", parquet::parquet_dir),
    ("png_pipeline", png::png_pipeline),
    ("dataflow_new", dataflow_new::dataflow_new),
];

/// The target called `name`, if there is one.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|&(_, t)| t)
}

/// Reads structured values off the front of the fuzz input; past the end it yields zeros,
/// so every input decodes to something.
#[derive(Debug, Clone)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// The next byte, or 0 at the end.
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next little-endian `u16`.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// Whether no byte is left.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.data
    }
}

/// Bit-for-bit equality of floats, where every NaN equals every NaN (text and precision
/// conversions need not keep a NaN's payload).
pub fn same_f64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// [`same_f64`] for `f32`.
pub fn same_f32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_reads_in_order_then_zeros() {
        let mut b = Bytes::new(&[1, 2, 3]);
        assert_eq!(b.byte(), 1);
        assert_eq!(b.u16(), 0x0302);
        assert!(b.is_empty());
        assert_eq!(b.byte(), 0);
        assert_eq!(b.u16(), 0);
    }

    #[test]
    fn same_float_treats_nans_alike_and_signs_apart() {
        assert!(same_f64(f64::NAN, -f64::NAN));
        assert!(!same_f64(0.0, -0.0));
        assert!(same_f32(1.5, 1.5));
        assert!(!same_f32(f32::NAN, 1.0));
    }

    #[test]
    fn target_names_are_unique_and_found() {
        for (i, (name, _)) in TARGETS.iter().enumerate() {
            assert!(
                TARGETS[..i].iter().all(|(other, _)| other != name),
                "{name}"
            );
            assert!(target(name).is_some());
        }
        assert!(target("no_such_target").is_none());
    }
}
