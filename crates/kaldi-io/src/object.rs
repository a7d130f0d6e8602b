//! [`AnyObject`]: a table value whose type is told by each record's own header, as kaldiio
//! reads archives (float matrices and vectors of either precision, compressed matrices,
//! int32 vectors), for readers that do not know the archive's holder in advance.

use std::io::{BufRead, Cursor, Read, Write};

use dense_matrix::{Error as ObjError, Matrix, Vector};

use crate::holder::Holder;

/// One value of the types kaldiio reads, chosen per record by its header: `FM` (and the
/// compressed `CM`, `CM2`, `CM3`, decompressed to `f32` as kaldiio does), `DM`, `FV`,
/// `DV`, or an int32 vector (Kaldi's `BasicVectorHolder<int32>`, alignments).
///
/// Reading a binary `FM`, `DM`, `FV` or `DV` through a table reader goes straight into new
/// memory, without zeroing it first, as it does for `Matrix<f32>` and the others.
#[derive(Clone, Debug, PartialEq)]
#[doc(alias = "load_mat")]
pub enum AnyObject {
    /// `FM`, or a compressed matrix (`CM`, `CM2`, `CM3`) decompressed.
    MatrixF32(Matrix<f32>),
    /// `DM`.
    MatrixF64(Matrix<f64>),
    /// `FV`.
    VectorF32(Vector<f32>),
    /// `DV`.
    VectorF64(Vector<f64>),
    /// An int32 vector (binary: a size byte `4` and a count; text: a line of integers).
    Int32Vector(Vec<i32>),
}

/// Consumes bytes of `r` while `keep` holds for them (at most `max`), returning them.
fn take_while<R: BufRead>(
    r: &mut R,
    max: usize,
    keep: impl Fn(u8) -> bool,
) -> Result<Vec<u8>, ObjError> {
    let mut out = Vec::new();
    while out.len() < max {
        let byte = match r.fill_buf() {
            Ok(buf) => buf.first().copied(),
            Err(e) => {
                return Err(ObjError::Io {
                    kind: e.kind(),
                    message: e.to_string(),
                })
            }
        };
        match byte {
            Some(b) if keep(b) => {
                out.push(b);
                r.consume(1);
            }
            _ => break,
        }
    }
    Ok(out)
}

/// The most spaces read before a text value's `[` (or its first integer): text values
/// begin with one.
const MAX_LEADING_SPACES: usize = 1 << 10;

impl Holder for AnyObject {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        if binary {
            let first = take_while(r, 1, |_| true)?;
            if first.first() == Some(&4) {
                // a size byte right after `\0B`: an int32 vector, as kaldiio tells it
                let mut chained = Cursor::new(first).chain(r);
                return Ok(AnyObject::Int32Vector(Vec::<i32>::read(
                    &mut chained,
                    true,
                )?));
            }
            // the type token (`FM`, `CM2`, ...) and its space, handed back to the reader
            let mut token = first;
            if token.first().is_some_and(|&b| b != b' ') {
                token.extend(take_while(r, 3, |b| b != b' ')?);
                token.extend(take_while(r, 1, |b| b == b' ')?);
            }
            let name = String::from_utf8_lossy(&token).trim_end().to_string();
            let mut chained = Cursor::new(token).chain(r);
            return match name.as_str() {
                "FM" | "CM" | "CM2" | "CM3" => Ok(AnyObject::MatrixF32(Matrix::read_kaldi(
                    &mut chained,
                    true,
                )?)),
                "DM" => Ok(AnyObject::MatrixF64(Matrix::read_kaldi(
                    &mut chained,
                    true,
                )?)),
                "FV" => Ok(AnyObject::VectorF32(Vector::read_kaldi(
                    &mut chained,
                    true,
                )?)),
                "DV" => Ok(AnyObject::VectorF64(Vector::read_kaldi(
                    &mut chained,
                    true,
                )?)),
                _ => Err(ObjError::Format {
                    expected: "one of the tokens FM, DM, FV, DV, CM, CM2, CM3 or an int32 vector",
                    found: format!("`{name}`"),
                }),
            };
        }
        // text: ` [` then a newline is a matrix, ` [ x ...` a vector, a bare line int32s
        let spaces = take_while(r, MAX_LEADING_SPACES, |b| b == b' ' || b == b'\t')?;
        let bracket = take_while(r, 1, |b| b == b'[')?;
        if bracket.is_empty() {
            let mut chained = Cursor::new(spaces).chain(r);
            return Ok(AnyObject::Int32Vector(Vec::<i32>::read(
                &mut chained,
                false,
            )?));
        }
        let inner = take_while(r, MAX_LEADING_SPACES, |b| b == b' ' || b == b'\t')?;
        let newline = take_while(r, 1, |b| b == b'\n' || b == b'\r')?;
        let is_matrix = !newline.is_empty();
        let mut head = spaces;
        head.extend(bracket);
        head.extend(inner);
        head.extend(newline);
        let mut chained = Cursor::new(head).chain(r);
        if is_matrix {
            Ok(AnyObject::MatrixF32(Matrix::read_kaldi(
                &mut chained,
                false,
            )?))
        } else {
            Ok(AnyObject::VectorF32(Vector::read_kaldi(
                &mut chained,
                false,
            )?))
        }
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        match self {
            AnyObject::MatrixF32(m) => m.write(w, binary),
            AnyObject::MatrixF64(m) => m.write(w, binary),
            AnyObject::VectorF32(v) => v.write(w, binary),
            AnyObject::VectorF64(v) => v.write(w, binary),
            AnyObject::Int32Vector(v) => v.write(w, binary),
        }
    }

    fn extract_range(&self, range: &str) -> Result<Self, String> {
        match self {
            AnyObject::MatrixF32(m) => m.extract_range(range).map(AnyObject::MatrixF32),
            AnyObject::MatrixF64(m) => m.extract_range(range).map(AnyObject::MatrixF64),
            AnyObject::VectorF32(v) => v.extract_range(range).map(AnyObject::VectorF32),
            AnyObject::VectorF64(v) => v.extract_range(range).map(AnyObject::VectorF64),
            AnyObject::Int32Vector(_) => {
                Err("ranges are defined only for matrices and vectors".to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use dense_matrix::{CompressedMatrix, CompressionMethod};

    use super::*;

    /// Reads `bytes` (what follows the `\0B` marker, or a text value) as an `AnyObject`.
    #[track_caller]
    fn check(bytes: &[u8], binary: bool, want: AnyObject) {
        let mut r = Cursor::new(bytes);
        assert_eq!(AnyObject::read(&mut r, binary).unwrap(), want);
        assert_eq!(r.position() as usize, bytes.len(), "all of it read");
    }

    fn written(value: &impl Holder, binary: bool) -> Vec<u8> {
        let mut out = Vec::new();
        value.write(&mut out, binary).unwrap();
        out
    }

    #[test]
    fn each_header_gives_its_type() {
        let m32 = Matrix::from_rows(&[[1.0f32, 2.0], [3.0, 4.5]]);
        let m64 = Matrix::from_rows(&[[1.0f64, -2.0, 1e300]]);
        let v32 = Vector::from_vec(vec![0.5f32, -1.0]);
        let v64 = Vector::from_vec(vec![1e-300f64]);
        for binary in [true, false] {
            check(
                &written(&m32, binary),
                binary,
                AnyObject::MatrixF32(m32.clone()),
            );
            check(
                &written(&v32, binary),
                binary,
                AnyObject::VectorF32(v32.clone()),
            );
            check(
                &written(&vec![3i32, -1, 7], binary),
                binary,
                AnyObject::Int32Vector(vec![3, -1, 7]),
            );
        }
        check(
            &written(&m64, true),
            true,
            AnyObject::MatrixF64(m64.clone()),
        );
        check(&written(&v64, true), true, AnyObject::VectorF64(v64));
        // text holds no precision: a text matrix is read as f32, as kaldiio does
        check(
            &written(&m64, false),
            false,
            AnyObject::MatrixF32(Matrix::from_rows(&[[1.0f32, -2.0, f32::INFINITY]])),
        );
        // compressed matrices are decompressed to f32
        let cm = CompressedMatrix::compress(&m32, CompressionMethod::TwoByteAuto).unwrap();
        check(
            &written(&cm, true),
            true,
            AnyObject::MatrixF32(cm.to_matrix::<f32>()),
        );
    }

    #[test]
    fn unknown_tokens_and_long_runs_of_spaces_are_errors() {
        let err = AnyObject::read(&mut Cursor::new(b"XM \x04"), true).unwrap_err();
        assert!(err.to_string().contains("`XM`"), "{err}");
        // a hostile run of spaces is not gathered without bound before the value
        let spaces = vec![b' '; MAX_LEADING_SPACES * 4];
        assert!(AnyObject::read(&mut Cursor::new(spaces), false)
            .is_ok_and(|v| v == AnyObject::Int32Vector(vec![])));
    }

    #[test]
    fn writes_and_ranges_follow_the_value() {
        let m = Matrix::from_rows(&[[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        let any = AnyObject::MatrixF32(m.clone());
        assert_eq!(written(&any, true), written(&m, true));
        assert_eq!(
            any.extract_range("1:2").unwrap(),
            AnyObject::MatrixF32(m.extract_range("1:2").unwrap())
        );
        assert!(AnyObject::Int32Vector(vec![1])
            .extract_range("0:0")
            .is_err());
    }
}
