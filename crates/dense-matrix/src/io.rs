//! Kaldi's `Write` / `Read` of vectors and matrices, binary and text.
//!
//! Binary is exactly Kaldi's object layout: the token `FM ` / `DM ` (matrix) or `FV ` /
//! `DV ` (vector, `F` for `f32`, `D` for `f64`), then each dimension as Kaldi's
//! `WriteBasicType<int32>` (a size byte `4` and the little-endian value), then the elements
//! row by row. As in Kaldi, the `\0B` marker that starts a binary file or archive entry
//! belongs to the stream, not to the object, and reading converts between precisions.
//! Text is the `Display` / `FromStr` form (`[ 1 2 ]`).

use std::io::{BufRead, Read, Write};

use crate::{Error, Matrix, MatrixBase, Real, Vector, VectorBase};

fn io_err(e: std::io::Error) -> Error {
    Error::Io {
        kind: e.kind(),
        message: e.to_string(),
    }
}

fn token<R: Real>(matrix: bool) -> &'static [u8] {
    match (R::NAME == "f32", matrix) {
        (true, true) => b"FM ",
        (false, true) => b"DM ",
        (true, false) => b"FV ",
        (false, false) => b"DV ",
    }
}

fn write_int32(w: &mut impl Write, v: usize) -> Result<(), Error> {
    let v = i32::try_from(v).map_err(|_| Error::Format {
        expected: "a dimension that fits in int32",
        found: v.to_string(),
    })?;
    w.write_all(&[4]).map_err(io_err)?;
    w.write_all(&v.to_le_bytes()).map_err(io_err)
}

fn read_int32(r: &mut impl Read) -> Result<usize, Error> {
    let mut b = [0u8; 5];
    r.read_exact(&mut b).map_err(io_err)?;
    if b[0] != 4 {
        return Err(Error::Format {
            expected: "the int32 size byte 4",
            found: b[0].to_string(),
        });
    }
    let v = i32::from_le_bytes([b[1], b[2], b[3], b[4]]);
    usize::try_from(v).map_err(|_| Error::Format {
        expected: "a non-negative dimension",
        found: v.to_string(),
    })
}

fn write_elements<R: Real>(w: &mut impl Write, xs: &[R]) -> Result<(), Error> {
    let mut buf = Vec::with_capacity(std::mem::size_of_val(xs));
    for &x in xs {
        if R::NAME == "f32" {
            buf.extend_from_slice(&(x.to_f64() as f32).to_le_bytes());
        } else {
            buf.extend_from_slice(&x.to_f64().to_le_bytes());
        }
    }
    w.write_all(&buf).map_err(io_err)
}

/// Reads `n` elements stored as `f32` (`single`) or `f64`, converting to `R`.
fn read_elements<R: Real>(r: &mut impl Read, n: usize, single: bool) -> Result<Vec<R>, Error> {
    let width = if single { 4 } else { 8 };
    let mut buf = vec![0u8; n * width];
    r.read_exact(&mut buf).map_err(io_err)?;
    Ok(buf
        .chunks_exact(width)
        .map(|c| {
            if single {
                R::from_f64(f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
            } else {
                R::from_f64(f64::from_le_bytes([
                    c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
                ]))
            }
        })
        .collect())
}

/// Reads a three-byte token and says whether it is the single-precision one of the pair.
fn read_token(
    r: &mut impl Read,
    single: &[u8],
    double: &[u8],
    expected: &'static str,
) -> Result<bool, Error> {
    let mut t = [0u8; 3];
    r.read_exact(&mut t).map_err(io_err)?;
    if t == single {
        Ok(true)
    } else if t == double {
        Ok(false)
    } else {
        Err(Error::Format {
            expected,
            found: String::from_utf8_lossy(&t).into_owned(),
        })
    }
}

fn read_text(r: &mut impl BufRead) -> Result<String, Error> {
    let mut text = String::new();
    while !text.contains(']') {
        if r.read_line(&mut text).map_err(io_err)? == 0 {
            break;
        }
    }
    Ok(text)
}

impl<R: Real> MatrixBase<R> {
    /// Kaldi's `Write(os, binary)`: binary `FM`/`DM` object or the text form.
    pub fn write_kaldi(&self, w: &mut impl Write, binary: bool) -> Result<(), Error> {
        if !binary {
            return writeln!(w, " {self}").map_err(io_err);
        }
        w.write_all(token::<R>(true)).map_err(io_err)?;
        write_int32(w, self.num_rows())?;
        write_int32(w, self.num_cols())?;
        for row in self.rows() {
            write_elements(w, row)?;
        }
        Ok(())
    }
}

impl<R: Real> Matrix<R> {
    /// Kaldi's `Read(is, binary)`: a binary `FM` or `DM` object (converted to `R`), or
    /// the text form.
    pub fn read_kaldi(r: &mut impl BufRead, binary: bool) -> Result<Self, Error> {
        if !binary {
            return read_text(r)?.parse();
        }
        let single = read_token(r, b"FM ", b"DM ", "the matrix token `FM ` or `DM `")?;
        let rows = read_int32(r)?;
        let cols = read_int32(r)?;
        let data = read_elements::<R>(r, rows * cols, single)?;
        Matrix::from_vec(rows, cols, data)
    }
}

impl<R: Real> VectorBase<R> {
    /// Kaldi's `Write(os, binary)`: binary `FV`/`DV` object or the text form.
    pub fn write_kaldi(&self, w: &mut impl Write, binary: bool) -> Result<(), Error> {
        if !binary {
            return writeln!(w, " {self}").map_err(io_err);
        }
        w.write_all(token::<R>(false)).map_err(io_err)?;
        write_int32(w, self.dim())?;
        write_elements(w, self.data())
    }
}

impl<R: Real> Vector<R> {
    /// Kaldi's `Read(is, binary)`: a binary `FV` or `DV` object (converted to `R`), or
    /// the text form.
    pub fn read_kaldi(r: &mut impl BufRead, binary: bool) -> Result<Self, Error> {
        if !binary {
            return read_text(r)?.parse();
        }
        let single = read_token(r, b"FV ", b"DV ", "the vector token `FV ` or `DV `")?;
        let n = read_int32(r)?;
        Ok(Vector::from_vec(read_elements::<R>(r, n, single)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes Kaldi writes for the 2 x 2 float matrix [[1, 2], [3, 4]], by hand.
    fn kaldi_fm_bytes() -> Vec<u8> {
        let mut b = b"FM ".to_vec();
        b.extend([4, 2, 0, 0, 0, 4, 2, 0, 0, 0]);
        for x in [1.0f32, 2.0, 3.0, 4.0] {
            b.extend(x.to_le_bytes());
        }
        b
    }

    #[test]
    fn binary_matrix_matches_kaldi_bytes() {
        // a padded f32 matrix (stride 4): the padding is not written
        let m = Matrix::from_rows(&[[1.0f32, 2.0], [3.0, 4.0]]);
        let mut out = Vec::new();
        m.write_kaldi(&mut out, true).unwrap();
        assert_eq!(out, kaldi_fm_bytes());
        let back = Matrix::<f32>::read_kaldi(&mut &out[..], true).unwrap();
        assert!(back == m);
        // reading converts precision, as Kaldi's Read does
        let wide = Matrix::<f64>::read_kaldi(&mut &out[..], true).unwrap();
        assert_eq!(wide[(1, 0)], 3.0);
    }

    /// Archive entries written by kaldi-native-io 1.x (Kaldi's own I/O code) for
    /// `FloatMatrixWriter["key"] = [[1, 2], [3, 4]]` and
    /// `DoubleVectorWriter["v"] = [0.5, -1.25, 1e300]`: `key \0B` then the object.
    #[test]
    fn reads_and_writes_what_kaldi_native_io_writes() {
        let ark: &[u8] = b"key \x00BFM \x04\x02\x00\x00\x00\x04\x02\x00\x00\x00\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@";
        let object = &ark[b"key \x00B".len()..];
        let m = Matrix::<f32>::read_kaldi(&mut &object[..], true).unwrap();
        assert!(m == Matrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]]));
        let mut out = Vec::new();
        m.write_kaldi(&mut out, true).unwrap();
        assert_eq!(out, object);
        let ark_v: &[u8] = b"v \x00BDV \x04\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\xe0?\x00\x00\x00\x00\x00\x00\xf4\xbf\x9cu\x00\x88<\xe47~";
        let object = &ark_v[b"v \x00B".len()..];
        let v = Vector::<f64>::read_kaldi(&mut &object[..], true).unwrap();
        assert_eq!(v.data(), &[0.5, -1.25, 1e300]);
        let mut out = Vec::new();
        v.write_kaldi(&mut out, true).unwrap();
        assert_eq!(out, object);
    }

    #[test]
    fn binary_vector_round_trip_and_token() {
        let v = Vector::from_vec(vec![0.5f64, -1.25, 1e300]);
        let mut out = Vec::new();
        v.write_kaldi(&mut out, true).unwrap();
        assert_eq!(&out[..8], b"DV \x04\x03\x00\x00\x00");
        assert_eq!(out.len(), 8 + 3 * 8);
        assert!(Vector::<f64>::read_kaldi(&mut &out[..], true).unwrap() == v);
        let err = Matrix::<f64>::read_kaldi(&mut &out[..], true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected the matrix token `FM ` or `DM `, found `DV `"
        );
    }

    #[test]
    fn text_round_trip_and_truncated_input() {
        let m = Matrix::from_rows(&[[1.0f64, 2.5], [-3.0, 4.0]]);
        let mut out = Vec::new();
        m.write_kaldi(&mut out, false).unwrap();
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            " [\n  1 2.5\n  -3 4 ]\n"
        );
        assert!(Matrix::<f64>::read_kaldi(&mut &out[..], false).unwrap() == m);
        let cut = &kaldi_fm_bytes()[..12];
        assert!(matches!(
            Matrix::<f32>::read_kaldi(&mut &cut[..], true),
            Err(Error::Io { .. })
        ));
    }
}
