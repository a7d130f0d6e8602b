//! Objects in forms other than Kaldi's object holders: HTK and CMU Sphinx feature files
//! (Kaldi's `HtkMatrixHolder` and `SphinxMatrixHolder`, read by `copy-feats --htk-in` and
//! `--sphinx-in`) and a single integer vector in Kaldi's `WriteIntegerVector` form
//! (`copy-int-vector` on files).

use std::io::{BufRead, Write};

use dense_matrix::{Error as ObjError, Matrix};

use crate::holder::{format_err, io, read_exact, read_until_bounded, Holder, MAX_TEXT_LINE_LEN};

/// The most rows' bytes read before the matrix grows again: a header that claims more than
/// the input holds costs at most about this much memory before the end of the data is found.
const PIECE: usize = 1 << 18;

/// Reads `rows` rows of `cols` big-endian `f32`s (as HTK and Sphinx store them), growing
/// the matrix's memory only as the data arrives.
fn read_big_endian_rows<R: BufRead>(
    r: &mut R,
    rows: usize,
    cols: usize,
    what: &str,
) -> Result<Matrix<f32>, ObjError> {
    if rows == 0 {
        // no frames (Kaldi's `Resize(0, cols)` asserts; an empty file is read as empty)
        return Ok(Matrix::empty());
    }
    if cols == 0 {
        return Err(format_err(
            "a feature file whose frames have at least one value",
            format!("{rows} frames of 0 values"),
        ));
    }
    let total = rows
        .checked_mul(cols)
        .and_then(|n| n.checked_mul(4))
        .ok_or_else(|| format_err("a feature matrix whose size fits in memory", what))?;
    let rows_per_piece = (PIECE / (4 * cols)).max(1);
    let mut data: Vec<f32> = Vec::new();
    let mut bytes = vec![0u8; 4 * cols * rows_per_piece.min(rows)];
    let mut row = 0;
    while row < rows {
        let n = rows_per_piece.min(rows - row);
        let piece = &mut bytes[..4 * cols * n];
        read_exact(r, piece, what).map_err(|e| match e {
            ObjError::UnexpectedEnd { reading, got, .. } => ObjError::UnexpectedEnd {
                reading,
                needed: total as u64,
                got: (4 * cols * row) as u64 + got,
            },
            other => other,
        })?;
        data.reserve(cols * n);
        data.extend(
            piece
                .chunks_exact(4)
                .map(|b| f32::from_be_bytes([b[0], b[1], b[2], b[3]])),
        );
        row += n;
    }
    Matrix::from_vec(rows, cols, data)
}

fn write_big_endian_rows<W: Write>(w: &mut W, m: &Matrix<f32>) -> Result<(), ObjError> {
    let mut out = Vec::with_capacity(4 * m.num_cols());
    for r in 0..m.num_rows() {
        out.clear();
        for &x in m.row(r).data() {
            out.extend_from_slice(&x.to_be_bytes());
        }
        w.write_all(&out).map_err(io)?;
    }
    Ok(())
}

/// HTK's feature file header (Kaldi's `HtkHeader`), stored big-endian before the
/// features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HtkHeader {
    /// `mNSamples`: the number of frames (rows).
    pub n_samples: i32,
    /// `mSamplePeriod`: the frame period in units of 100 ns.
    pub sample_period: i32,
    /// `mSampleSize`: the bytes per frame (4 per column).
    pub sample_size: i16,
    /// `mSampleKind`: HTK's parameter kind (low 6 bits) and qualifier bits.
    pub sample_kind: u16,
}

/// HTK's parameter kind bits that Kaldi's `ReadHtk` refuses or drops.
const HTK_COMPRESSED: u16 = 0o2000;
const HTK_CHECKSUM: u16 = 0o10000;
const HTK_VQ: u16 = 0o40000;
/// HTK's base kinds `WAVEFORM`, `IREFC` and `DISCRETE`: not features Kaldi reads.
const HTK_UNSUPPORTED_BASE: [u16; 3] = [0, 5, 10];

/// An HTK feature file: Kaldi's `HtkMatrixHolder` (`std::pair<Matrix<BaseFloat>,
/// HtkHeader>`), what `copy-feats --htk-in` reads.
///
/// Read as Kaldi's `ReadHtk` reads: the 12-byte big-endian header, then `n_samples` rows of
/// `sample_size / 4` big-endian floats; compressed (`_C`) and vector-quantised (`_V`)
/// files and the waveform, `IREFC` and discrete kinds are refused; the checksum bit (`_K`)
/// is cleared from the header. Kaldi's reader never reads the 2-byte checksum (its test
/// masks the kind to 6 bits first), so neither does this one: bytes after the features
/// are left in the input. Unlike Kaldi (which truncates, or asserts), a sample size that
/// is not a multiple of 4, a negative size, or frames without values are errors, and a
/// file of no frames is an empty matrix (Kaldi asserts on `0 x cols`). No `\0B`
/// marker: HTK files are binary only; writing in text is refused, as in Kaldi.
#[derive(Debug, Clone, PartialEq)]
#[doc(alias = "HtkMatrixHolder")]
#[doc(alias = "ReadHtk")]
#[doc(alias = "WriteHtk")]
pub struct HtkMatrix {
    /// The features, one frame per row.
    pub matrix: Matrix<f32>,
    /// The file's header (the checksum bit cleared).
    pub header: HtkHeader,
}

impl Holder for HtkMatrix {
    const BINARY_MARKER: bool = false;

    fn read<R: BufRead>(r: &mut R, _binary: bool) -> Result<Self, ObjError> {
        let mut head = [0u8; 12];
        read_exact(r, &mut head, "the header of an HTK feature file")?;
        let mut header = HtkHeader {
            n_samples: i32::from_be_bytes([head[0], head[1], head[2], head[3]]),
            sample_period: i32::from_be_bytes([head[4], head[5], head[6], head[7]]),
            sample_size: i16::from_be_bytes([head[8], head[9]]),
            sample_kind: u16::from_be_bytes([head[10], head[11]]),
        };
        header.sample_kind &= !HTK_CHECKSUM;
        if header.sample_kind & (HTK_COMPRESSED | HTK_VQ) != 0 {
            return Err(format_err(
                "an HTK feature file neither compressed (_C) nor vector-quantised (_V)",
                format!("parameter kind {:#o}", header.sample_kind),
            ));
        }
        let base = header.sample_kind & 0o77;
        if HTK_UNSUPPORTED_BASE.contains(&base) {
            return Err(format_err(
                "HTK features (not the waveform, IREFC or discrete kinds)",
                format!(
                    "parameter kind {:#o} (base kind {base})",
                    header.sample_kind
                ),
            ));
        }
        let rows = usize::try_from(header.n_samples).map_err(|_| ObjError::NegativeSize {
            what: "the number of samples of an HTK feature file",
            value: header.n_samples,
        })?;
        let size = usize::try_from(header.sample_size).map_err(|_| ObjError::NegativeSize {
            what: "the sample size of an HTK feature file",
            value: i32::from(header.sample_size),
        })?;
        if size % 4 != 0 {
            return Err(format_err(
                "an HTK sample size that is a multiple of 4 (float features)",
                size.to_string(),
            ));
        }
        let what = format!("the features of an HTK file of {rows} samples of {size} bytes");
        let matrix = read_big_endian_rows(r, rows, size / 4, &what)?;
        Ok(HtkMatrix { matrix, header })
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if !binary {
            return Err(format_err(
                "binary output (Kaldi writes HTK features in binary only)",
                "text",
            ));
        }
        let h = &self.header;
        let cols_ok = usize::try_from(h.sample_size).is_ok_and(|s| s == 4 * self.matrix.num_cols());
        if usize::try_from(h.n_samples) != Ok(self.matrix.num_rows()) || !cols_ok {
            return Err(format_err(
                "an HTK header whose samples and sample size match the matrix",
                format!(
                    "{} samples of {} bytes for a {} x {} matrix",
                    h.n_samples,
                    h.sample_size,
                    self.matrix.num_rows(),
                    self.matrix.num_cols()
                ),
            ));
        }
        let mut head = Vec::with_capacity(12);
        head.extend_from_slice(&h.n_samples.to_be_bytes());
        head.extend_from_slice(&h.sample_period.to_be_bytes());
        head.extend_from_slice(&h.sample_size.to_be_bytes());
        head.extend_from_slice(&h.sample_kind.to_be_bytes());
        w.write_all(&head).map_err(io)?;
        write_big_endian_rows(w, &self.matrix)
    }
}

/// A CMU Sphinx feature file: Kaldi's `SphinxMatrixHolder<13>`, what `copy-feats
/// --sphinx-in` reads: a big-endian int32 count of floats, then the floats, big-endian,
/// 13 per frame.
///
/// A count that is not a multiple of 13 is an error, as in Kaldi; so is a negative one
/// (Kaldi asserts). No `\0B` marker; writing (Kaldi's holder's `Write`, big-endian) is
/// binary only.
#[derive(Debug, Clone, PartialEq)]
#[doc(alias = "SphinxMatrixHolder")]
pub struct SphinxMatrix(pub Matrix<f32>);

/// The features per frame of a Sphinx file (the holder's default `kFeatDim`).
pub const SPHINX_FEAT_DIM: usize = 13;

impl Holder for SphinxMatrix {
    const BINARY_MARKER: bool = false;

    fn read<R: BufRead>(r: &mut R, _binary: bool) -> Result<Self, ObjError> {
        let mut head = [0u8; 4];
        read_exact(r, &mut head, "the feature count of a Sphinx feature file")?;
        let count = i32::from_be_bytes(head);
        let n = usize::try_from(count).map_err(|_| ObjError::NegativeSize {
            what: "the feature count of a Sphinx feature file",
            value: count,
        })?;
        if n % SPHINX_FEAT_DIM != 0 {
            return Err(format_err(
                "a Sphinx feature count that is a multiple of the vector length 13",
                n.to_string(),
            ));
        }
        let rows = n / SPHINX_FEAT_DIM;
        let what = format!("the {n} features of a Sphinx feature file");
        read_big_endian_rows(r, rows, SPHINX_FEAT_DIM, &what).map(SphinxMatrix)
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if !binary {
            return Err(format_err(
                "binary output (Sphinx features are binary only)",
                "text",
            ));
        }
        let n = self.0.num_rows() * self.0.num_cols();
        let count =
            i32::try_from(n).map_err(|_| format_err("at most 2^31 - 1 features", n.to_string()))?;
        w.write_all(&count.to_be_bytes()).map_err(io)?;
        write_big_endian_rows(w, &self.0)
    }
}

/// One integer vector in Kaldi's `ReadIntegerVector` / `WriteIntegerVector` form, which
/// is not the table holder's (`Vec<i32>`): binary, a size byte (4), the count and the
/// elements packed (no size byte each); text, `[ 1 2 3 ]` (at most [`MAX_TEXT_LINE_LEN`]
/// bytes up to the `]`). `copy-int-vector` copies single files in it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(alias = "ReadIntegerVector")]
#[doc(alias = "WriteIntegerVector")]
pub struct IntegerVector(pub Vec<i32>);

impl Holder for IntegerVector {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        if binary {
            let mut head = [0u8; 5];
            read_exact(
                r,
                &mut head,
                "the size byte and length of an integer vector",
            )?;
            if head[0] != 4 {
                return Err(format_err("size byte 4 (int32)", format!("{}", head[0])));
            }
            let n = i32::from_le_bytes([head[1], head[2], head[3], head[4]]);
            let n = usize::try_from(n).map_err(|_| ObjError::NegativeSize {
                what: "the length of an integer vector",
                value: n,
            })?;
            // read in pieces, so a hostile length allocates no more than the input holds
            let mut v = Vec::new();
            let mut chunk = [0u8; 4096];
            let mut left = n * 4; // n < 2^31: fits
            while left > 0 {
                let take = left.min(chunk.len());
                read_exact(r, &mut chunk[..take], "the elements of an integer vector")?;
                v.extend(
                    chunk[..take]
                        .chunks_exact(4)
                        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                );
                left -= take;
            }
            return Ok(IntegerVector(v));
        }
        let text = read_until_bounded(r, b']', MAX_TEXT_LINE_LEN, "a text integer vector")?;
        if text.last() != Some(&b']') {
            return Err(format_err("`]` closing an integer vector", "end of data"));
        }
        let text = String::from_utf8_lossy(&text);
        let body = text
            .trim()
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .ok_or_else(|| format_err("`[ ... ]`", text.trim().to_string()))?;
        body.split_whitespace()
            .map(|t| {
                t.parse::<i32>()
                    .map_err(|_| format_err("an int32", t.to_string()))
            })
            .collect::<Result<_, _>>()
            .map(IntegerVector)
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if binary {
            let n = i32::try_from(self.0.len())
                .map_err(|_| format_err("at most 2^31 - 1 elements", self.0.len().to_string()))?;
            let mut out = Vec::with_capacity(5 + 4 * self.0.len());
            out.push(4u8);
            out.extend_from_slice(&n.to_le_bytes());
            for x in &self.0 {
                out.extend_from_slice(&x.to_le_bytes());
            }
            return w.write_all(&out).map_err(io);
        }
        let mut out = String::from("[ ");
        for x in &self.0 {
            out.push_str(&x.to_string());
            out.push(' ');
        }
        out.push_str("]\n");
        w.write_all(out.as_bytes()).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Cursor, Read};

    use super::*;

    /// An HTK file built by hand from HTK's definition (`HParm.h`, Kaldi's `HtkHeader`):
    /// the four header fields big-endian, then the rows of big-endian floats.
    fn htk_bytes(n: i32, period: i32, size: i16, kind: u16, values: &[f32]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&n.to_be_bytes());
        b.extend_from_slice(&period.to_be_bytes());
        b.extend_from_slice(&size.to_be_bytes());
        b.extend_from_slice(&kind.to_be_bytes());
        for v in values {
            b.extend_from_slice(&v.to_bits().to_be_bytes());
        }
        b
    }

    fn read<T: Holder>(bytes: &[u8]) -> Result<T, ObjError> {
        T::read(&mut Cursor::new(bytes), true)
    }

    fn written<T: Holder>(value: &T) -> Vec<u8> {
        let mut out = Vec::new();
        value.write(&mut out, true).unwrap();
        out
    }

    const MFCC: u16 = 6;

    #[test]
    fn htk_files_read_as_kaldi_reads_them() {
        let values = [1.0f32, -2.5, 3.25, 1e-30, -0.0, 7.0];
        // MFCC_E_D (6 | 0100 | 0400), 3 frames of 2 floats, 10 ms
        let kind = MFCC | 0o100 | 0o400;
        let bytes = htk_bytes(3, 100_000, 8, kind, &values);
        let h: HtkMatrix = read(&bytes).unwrap();
        let want = Matrix::from_vec(3, 2, values.to_vec()).unwrap();
        assert!(h.matrix == want);
        assert_eq!(
            h.header,
            HtkHeader {
                n_samples: 3,
                sample_period: 100_000,
                sample_size: 8,
                sample_kind: kind
            }
        );
        // Kaldi's WriteHtk gives the same bytes back
        assert_eq!(written(&h), bytes);
        // the checksum bit is cleared, and the checksum itself left unread (as Kaldi does)
        let mut with_sum = htk_bytes(3, 100_000, 8, kind | 0o10000, &values);
        with_sum.extend_from_slice(&[0xab, 0xcd]);
        let mut r = Cursor::new(&with_sum[..]);
        let h2 = HtkMatrix::read(&mut r, true).unwrap();
        assert_eq!(h2, h);
        assert_eq!(r.position() as usize, with_sum.len() - 2);
        // no frames
        let empty: HtkMatrix = read(&htk_bytes(0, 100_000, 52, MFCC, &[])).unwrap();
        assert_eq!(empty.matrix.num_rows(), 0);
    }

    #[test]
    fn htk_kinds_and_sizes_kaldi_refuses_or_we_do_are_errors() {
        for (kind, what) in [
            (MFCC | 0o2000, "compressed"),
            (MFCC | 0o40000, "vector-quantised"),
            (0, "waveform"),
            (5, "waveform, IREFC"),
            (10, "discrete"),
        ] {
            let err = read::<HtkMatrix>(&htk_bytes(1, 1, 4, kind, &[1.0])).unwrap_err();
            assert!(err.to_string().contains(what), "{kind:#o}: {err}");
        }
        let err = read::<HtkMatrix>(&htk_bytes(-1, 1, 4, MFCC, &[])).unwrap_err();
        assert!(
            matches!(err, ObjError::NegativeSize { value: -1, .. }),
            "{err}"
        );
        let err = read::<HtkMatrix>(&htk_bytes(1, 1, -4, MFCC, &[])).unwrap_err();
        assert!(
            matches!(err, ObjError::NegativeSize { value: -4, .. }),
            "{err}"
        );
        let err = read::<HtkMatrix>(&htk_bytes(1, 1, 6, MFCC, &[1.0, 2.0])).unwrap_err();
        assert!(err.to_string().contains("multiple of 4"), "{err}");
        let err = read::<HtkMatrix>(&htk_bytes(2, 1, 0, MFCC, &[])).unwrap_err();
        assert!(err.to_string().contains("2 frames of 0 values"), "{err}");
        let err = read::<HtkMatrix>(&[0, 0, 0, 1, 0]).unwrap_err();
        assert!(
            matches!(
                err,
                ObjError::UnexpectedEnd {
                    needed: 12,
                    got: 5,
                    ..
                }
            ),
            "{err}"
        );
        // text output is refused, as Kaldi's holder does; a header not matching the matrix too
        let h: HtkMatrix = read(&htk_bytes(1, 1, 4, MFCC, &[1.0])).unwrap();
        assert!(h.write(&mut Vec::new(), false).is_err());
        let mut wrong = h.clone();
        wrong.header.n_samples = 2;
        assert!(wrong.write(&mut Vec::new(), true).is_err());
    }

    /// A header claiming 2^31 - 1 frames of 32,764 bytes over a few bytes of data ends at
    /// the end of the data, having grown the matrix only by what was read (the check:
    /// memory in pieces of `PIECE` bytes, `checked_mul` on the sizes).
    #[test]
    fn hostile_sizes_end_at_the_end_of_the_data() {
        let bytes = htk_bytes(i32::MAX, 1, i16::MAX - 3, MFCC, &[1.0; 100]);
        let err = read::<HtkMatrix>(&bytes).unwrap_err();
        match err {
            ObjError::UnexpectedEnd { needed, got, .. } => {
                assert_eq!(needed, i32::MAX as u64 * (i16::MAX as u64 - 3));
                assert_eq!(got, 400);
            }
            other => panic!("{other}"),
        }
        let count = (i32::MAX / 13) * 13;
        let mut sphinx_bytes = count.to_be_bytes().to_vec();
        sphinx_bytes.extend_from_slice(&[0; 52]);
        let err = read::<SphinxMatrix>(&sphinx_bytes).unwrap_err();
        assert!(
            matches!(err, ObjError::UnexpectedEnd { got: 52, .. }),
            "{err}"
        );
        let err = read::<IntegerVector>(b"\x04\xff\xff\xff\x7f\x01\x00\x00\x00").unwrap_err();
        assert!(matches!(err, ObjError::UnexpectedEnd { .. }), "{err}");
    }

    #[test]
    fn sphinx_files_read_as_kaldi_reads_them() {
        // 2 frames of 13: a big-endian count of 26, then 26 big-endian floats
        let values: Vec<f32> = (0..26).map(|i| i as f32 * 0.5 - 3.0).collect();
        let mut bytes = 26i32.to_be_bytes().to_vec();
        for v in &values {
            bytes.extend_from_slice(&v.to_bits().to_be_bytes());
        }
        let s: SphinxMatrix = read(&bytes).unwrap();
        assert!(s.0 == Matrix::from_vec(2, 13, values).unwrap());
        assert_eq!(written(&s), bytes);
        assert_eq!(read::<SphinxMatrix>(&[0, 0, 0, 0]).unwrap().0.num_rows(), 0);
        let err = read::<SphinxMatrix>(&[0, 0, 0, 14]).unwrap_err();
        assert!(
            err.to_string().contains("multiple of the vector length 13"),
            "{err}"
        );
        let err = read::<SphinxMatrix>(&(-13i32).to_be_bytes()).unwrap_err();
        assert!(
            matches!(err, ObjError::NegativeSize { value: -13, .. }),
            "{err}"
        );
        let err = read::<SphinxMatrix>(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(
            matches!(
                err,
                ObjError::UnexpectedEnd {
                    needed: 104,
                    got: 103,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn integer_vectors_in_kaldis_write_integer_vector_form() {
        // binary: size byte 4, count 3, then the elements without size bytes
        let bytes = b"\x04\x03\0\0\0\x01\0\0\0\xff\xff\xff\xff\x07\0\0\0";
        let v: IntegerVector = read(bytes).unwrap();
        assert_eq!(v, IntegerVector(vec![1, -1, 7]));
        assert_eq!(written(&v), bytes);
        let mut text = Vec::new();
        v.write(&mut text, false).unwrap();
        assert_eq!(text, b"[ 1 -1 7 ]\n");
        let mut r = Cursor::new(&b" [ 1\n -1 7 ]\n"[..]);
        assert_eq!(IntegerVector::read(&mut r, false).unwrap(), v);
        assert!(IntegerVector::read(&mut Cursor::new(&b"[ 1 2"[..]), false).is_err());
        assert!(IntegerVector::read(&mut Cursor::new(&b"1 2 ]"[..]), false).is_err());
        assert!(read::<IntegerVector>(b"\x08\x01\0\0\0").is_err());
    }

    /// A hostile text integer vector (no `]` for more than [`MAX_TEXT_LINE_LEN`] bytes) is
    /// an error, its memory bounded by the limit.
    #[test]
    fn a_text_integer_vector_without_its_bracket_is_bounded() {
        let endless = std::io::repeat(b'1').take(MAX_TEXT_LINE_LEN as u64 + 100);
        let mut r = BufReader::new(Cursor::new(b"[ ".to_vec()).chain(endless));
        let err = IntegerVector::read(&mut r, false).unwrap_err();
        assert!(err.to_string().contains("without a ']'"), "{err}");
    }
}
