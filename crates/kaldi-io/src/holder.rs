//! The `Holder` trait (Kaldi's holders: how one table value is read and written) and its
//! implementations for the matrix, vector, packed, sparse, integer, float, token and
//! posterior types.

use std::io::{BufRead, Read, Write};

use dense_matrix::{
    CompressedMatrix, CompressionMethod, Error as ObjError, GeneralMatrix, Matrix, Real, SpMatrix,
    SparseMatrix, SparseVector, TpMatrix, Vector,
};

use crate::range::{parse_matrix_range, parse_vector_range};

/// Kaldi's `Posterior`: per frame, a list of (index, weight) pairs.
pub type Posterior = Vec<Vec<(i32, f32)>>;

/// How a table value is read and written: Kaldi's holder classes (`KaldiObjectHolder`,
/// `BasicHolder`, `BasicVectorHolder`, `TokenHolder`, `PosteriorHolder`, ...).
///
/// Implementing it for a new type is all a new table type needs. Values are `Send` and
/// own their data (`'static`), so the `bg` option can read them in another thread.
pub trait Holder: Sized + Clone + Send + 'static {
    /// Whether a binary value starts with Kaldi's `\0B` marker (false for the token
    /// holders, which are text in both modes).
    const BINARY_MARKER: bool = true;

    /// Reads one value, the marker (if any) already consumed; `binary` says which form.
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError>;

    /// Writes one value, after the marker (if any); `binary` chooses the form.
    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError>;

    /// Reads one value into `self` (the marker, if any, already consumed), reusing its
    /// memory where the type can: the matrix and vector holders read a binary object over
    /// the elements they hold, neither reallocating nor zeroing first. The default reads a
    /// new value and assigns it. After an error `self` holds some valid value (the matrix
    /// and vector holders: an empty one, their memory kept).
    fn read_into<R: BufRead>(&mut self, r: &mut R, binary: bool) -> Result<(), ObjError> {
        *self = Self::read(r, binary)?;
        Ok(())
    }

    /// Kaldi's `ExtractRange`: the part named by an scp line's `[...]` range; only the
    /// matrix and vector holders have one.
    fn extract_range(&self, range: &str) -> Result<Self, String> {
        let _ = range;
        Err("ranges are defined only for matrices and vectors".to_string())
    }
}

pub(crate) fn io(e: std::io::Error) -> ObjError {
    ObjError::Io {
        kind: e.kind(),
        message: e.to_string(),
    }
}

pub(crate) fn format_err(expected: &'static str, found: impl Into<String>) -> ObjError {
    ObjError::Format {
        expected,
        found: found.into(),
    }
}

/// Fills `buf`, or reports the end of data naming `what`.
pub(crate) fn read_exact<R: Read>(r: &mut R, buf: &mut [u8], what: &str) -> Result<(), ObjError> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => {
                return Err(ObjError::UnexpectedEnd {
                    reading: what.to_string(),
                    needed: buf.len() as u64,
                    got: filled as u64,
                })
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(())
}

/// The next byte, not consumed.
pub(crate) fn peek<R: BufRead>(r: &mut R) -> Result<Option<u8>, ObjError> {
    Ok(r.fill_buf().map_err(io)?.first().copied())
}

/// Kaldi's `InitKaldiInputStream`: consumes `\0B` and says binary, or says text.
pub(crate) fn read_binary_marker<R: BufRead>(r: &mut R) -> Result<bool, ObjError> {
    if peek(r)? != Some(0) {
        return Ok(false);
    }
    r.consume(1);
    match peek(r)? {
        Some(b'B') => {
            r.consume(1);
            Ok(true)
        }
        other => Err(format_err(
            "the binary marker `\\0B`",
            match other {
                Some(b) => format!("\\0 then byte {b}"),
                None => "\\0 then the end of data".to_string(),
            },
        )),
    }
}

/// Kaldi's binary `ReadBasicType<int32>`: size byte 4, then the little-endian value.
fn read_i32_binary<R: Read>(r: &mut R, what: &str) -> Result<i32, ObjError> {
    let mut b = [0u8; 5];
    read_exact(r, &mut b, what)?;
    if b[0] != 4 {
        return Err(format_err("the int32 size byte 4", b[0].to_string()));
    }
    Ok(i32::from_le_bytes([b[1], b[2], b[3], b[4]]))
}

/// A binary int32 count, which must not be negative.
fn read_count<R: Read>(r: &mut R, what: &'static str) -> Result<usize, ObjError> {
    let v = read_i32_binary(r, what)?;
    usize::try_from(v).map_err(|_| ObjError::NegativeSize { what, value: v })
}

/// Kaldi's binary `ReadBasicType<float/double>`: size byte 4 or 8, then the value.
fn read_real_binary<R: Read>(r: &mut R, what: &str) -> Result<f64, ObjError> {
    let mut size = [0u8; 1];
    read_exact(r, &mut size, what)?;
    match size[0] {
        4 => {
            let mut b = [0u8; 4];
            read_exact(r, &mut b, what)?;
            Ok(f32::from_le_bytes(b) as f64)
        }
        8 => {
            let mut b = [0u8; 8];
            read_exact(r, &mut b, what)?;
            Ok(f64::from_le_bytes(b))
        }
        other => Err(format_err("the float size byte 4 or 8", other.to_string())),
    }
}

fn write_all<W: Write>(w: &mut W, bytes: &[u8]) -> Result<(), ObjError> {
    w.write_all(bytes).map_err(io)
}

fn write_i32_binary<W: Write>(w: &mut W, v: i32) -> Result<(), ObjError> {
    let b = v.to_le_bytes();
    write_all(w, &[4, b[0], b[1], b[2], b[3]])
}

fn write_count<W: Write>(w: &mut W, n: usize) -> Result<(), ObjError> {
    let v =
        i32::try_from(n).map_err(|_| format_err("a count that fits in int32", n.to_string()))?;
    write_i32_binary(w, v)
}

/// A capacity for `n` items announced by a header: never more than a small piece, so the
/// memory follows the data actually read.
fn bounded_capacity(n: usize) -> usize {
    n.min(4096)
}

/// Appends `x` as C++'s `ostream << x` does at Kaldi's precision 7 (`%.7g`).
pub(crate) fn push_g7(out: &mut String, x: f64) {
    use std::fmt::Write as _;
    if x.is_nan() {
        out.push_str(if x.is_sign_negative() { "-nan" } else { "nan" });
        return;
    }
    if x.is_infinite() {
        out.push_str(if x < 0.0 { "-inf" } else { "inf" });
        return;
    }
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    let sci = format!("{x:.6e}");
    let (mantissa, exp) = sci.split_once('e').expect("`e` format has an exponent");
    let exp: i32 = exp.parse().expect("`e` format exponent is an integer");
    if !(-4..7).contains(&exp) {
        let m = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        let _ = write!(out, "{m}e{sign}{:02}", exp.abs());
    } else {
        let fixed = format!("{x:.*}", (6 - exp) as usize);
        out.push_str(strip_zeros(&fixed));
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// The longest line a text value may take (tokens, token vectors, int32 vectors and their
/// vectors and pairs, posteriors): 64 MiB, far above any real one (an alignment of an hour
/// of speech at 100 frames a second is about 2 MiB of text), so a hostile value without a
/// newline (`ark,t:/dev/zero`) is an error at its key and offset, not a line that grows
/// until memory runs out. Kaldi reads such lines without a bound.
pub const MAX_TEXT_LINE_LEN: usize = dense_matrix::MAX_TEXT_LINE_LEN;

/// The bytes of `r` up to and including `delim` (or the end of data), refusing more than
/// `max` bytes without `delim` (memory stays bounded by `max`).
pub(crate) fn read_until_bounded<R: BufRead>(
    r: &mut R,
    delim: u8,
    max: usize,
    what: &'static str,
) -> Result<Vec<u8>, ObjError> {
    let mut bytes = Vec::new();
    r.by_ref()
        .take(max as u64 + 1)
        .read_until(delim, &mut bytes)
        .map_err(io)?;
    if bytes.len() > max && bytes.last() != Some(&delim) {
        return Err(ObjError::Format {
            expected: what,
            found: match delim {
                b'\n' => format!("more than {max} bytes without a newline"),
                _ => format!("more than {max} bytes without a {:?}", delim as char),
            },
        });
    }
    Ok(bytes)
}

/// Reads one line (without its `\n`) as UTF-8, of at most [`MAX_TEXT_LINE_LEN`] bytes; the
/// end of data ends the line.
fn read_line<R: BufRead>(r: &mut R, what: &'static str) -> Result<String, ObjError> {
    let mut bytes = read_until_bounded(r, b'\n', MAX_TEXT_LINE_LEN, what)?;
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    String::from_utf8(bytes).map_err(|e| format_err(what, String::from_utf8_lossy(e.as_bytes())))
}

fn parse_text<T: std::str::FromStr>(token: &str, what: &'static str) -> Result<T, ObjError> {
    token.parse().map_err(|_| ObjError::Parse {
        line: 1,
        token: token.to_string(),
        reason: what,
    })
}

/// A line holding exactly one token (Kaldi's text `BasicHolder`).
fn read_single_token<R: BufRead>(r: &mut R, what: &'static str) -> Result<String, ObjError> {
    let line = read_line(r, what)?;
    let mut tokens = line.split_whitespace();
    match (tokens.next(), tokens.next()) {
        (Some(t), None) => Ok(t.to_string()),
        (None, _) => Err(format_err(what, "an empty line")),
        (Some(_), Some(extra)) => Err(ObjError::Parse {
            line: 1,
            token: extra.to_string(),
            reason: "expected a newline after the value",
        }),
    }
}

fn write_matrix_text<R: Real, W: Write>(m: &Matrix<R>, w: &mut W) -> Result<(), ObjError> {
    let mut s = String::new();
    if m.num_cols() == 0 {
        s.push_str(" [ ]\n");
    } else {
        s.push_str(" [");
        for row in m.rows() {
            s.push_str("\n  ");
            for &x in row {
                push_g7(&mut s, x.to_f64());
                s.push(' ');
            }
        }
        s.push_str("]\n");
    }
    write_all(w, s.as_bytes())
}

fn write_vector_text<R: Real, W: Write>(v: &Vector<R>, w: &mut W) -> Result<(), ObjError> {
    let mut s = String::from(" [ ");
    for &x in v.data() {
        push_g7(&mut s, x.to_f64());
        s.push(' ');
    }
    s.push_str("]\n");
    write_all(w, s.as_bytes())
}

fn matrix_range<R: Real>(m: &Matrix<R>, range: &str) -> Result<Matrix<R>, String> {
    let (r0, nr, c0, nc) = parse_matrix_range(range, m.num_rows(), m.num_cols())?;
    Ok(Matrix::from(&*m.range(r0, nr, c0, nc)))
}

macro_rules! matrix_holder {
    ($t:ty) => {
        impl Holder for Matrix<$t> {
            fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
                Matrix::read_kaldi(r, binary)
            }

            fn read_into<R: BufRead>(&mut self, r: &mut R, binary: bool) -> Result<(), ObjError> {
                self.read_kaldi_into(r, binary)
            }

            fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
                if binary {
                    self.write_kaldi(w, true)
                } else {
                    write_matrix_text(self, w)
                }
            }

            fn extract_range(&self, range: &str) -> Result<Self, String> {
                matrix_range(self, range)
            }
        }

        impl Holder for Vector<$t> {
            fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
                Vector::read_kaldi(r, binary)
            }

            fn read_into<R: BufRead>(&mut self, r: &mut R, binary: bool) -> Result<(), ObjError> {
                self.read_kaldi_into(r, binary)
            }

            fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
                if binary {
                    self.write_kaldi(w, true)
                } else {
                    write_vector_text(self, w)
                }
            }

            fn extract_range(&self, range: &str) -> Result<Self, String> {
                let (start, len) = parse_vector_range(range, self.dim())?;
                Ok(Vector::from_slice(&self.data()[start..start + len]))
            }
        }
    };
}

matrix_holder!(f32);
matrix_holder!(f64);

impl Holder for CompressedMatrix {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        if binary && peek(r)? == Some(b'C') {
            return CompressedMatrix::read_kaldi(r);
        }
        // Kaldi reads a plain matrix and compresses it with the automatic method
        let m = Matrix::<f32>::read_kaldi(r, binary)?;
        CompressedMatrix::compress(&m, CompressionMethod::Auto)
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if binary {
            self.write_kaldi(w)
        } else {
            write_matrix_text(&self.to_matrix::<f32>(), w)
        }
    }
}

/// The holders whose value reads and writes itself in both forms through dense-matrix's
/// own `read_kaldi` / `write_kaldi` (Kaldi's `KaldiObjectHolder<T>`, whose `Write` and
/// `Read` are the object's own).
macro_rules! object_holder {
    ($($t:ty),* $(,)?) => {
        $(
            impl Holder for $t {
                fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
                    <$t>::read_kaldi(r, binary)
                }

                fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
                    self.write_kaldi(w, binary)
                }
            }
        )*
    };
}

object_holder!(
    SpMatrix<f32>,
    SpMatrix<f64>,
    TpMatrix<f32>,
    TpMatrix<f64>,
    SparseVector<f32>,
    SparseVector<f64>,
    SparseMatrix<f32>,
    SparseMatrix<f64>,
    GeneralMatrix<f32>,
    GeneralMatrix<f64>,
);

impl Holder for i32 {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        if binary {
            read_i32_binary(r, "an int32")
        } else {
            parse_text(&read_single_token(r, "an int32")?, "not an int32")
        }
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if binary {
            write_i32_binary(w, *self)
        } else {
            write_all(w, format!("{self} \n").as_bytes())
        }
    }
}

macro_rules! real_holder {
    ($t:ty, $what:literal) => {
        impl Holder for $t {
            fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
                if binary {
                    Ok(read_real_binary(r, $what)? as $t)
                } else {
                    parse_text(&read_single_token(r, $what)?, concat!("not ", $what))
                }
            }

            fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
                if binary {
                    let mut b = vec![std::mem::size_of::<$t>() as u8];
                    b.extend_from_slice(&self.to_le_bytes());
                    write_all(w, &b)
                } else {
                    let mut s = String::new();
                    push_g7(&mut s, *self as f64);
                    s.push_str(" \n");
                    write_all(w, s.as_bytes())
                }
            }
        }
    };
}

real_holder!(f32, "a float");
real_holder!(f64, "a double");

impl Holder for bool {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        let token = if binary {
            let mut b = [0u8; 1];
            read_exact(r, &mut b, "a bool")?;
            (b[0] as char).to_string()
        } else {
            read_single_token(r, "a bool")?
        };
        match token.as_str() {
            "T" => Ok(true),
            "F" => Ok(false),
            _ => Err(format_err("the bool `T` or `F`", token)),
        }
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        let t = if *self { "T" } else { "F" };
        if binary {
            write_all(w, t.as_bytes())
        } else {
            write_all(w, format!("{t} \n").as_bytes())
        }
    }
}

impl Holder for Vec<i32> {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        if binary {
            let n = read_count(r, "the length of an int32 vector")?;
            let mut v = Vec::with_capacity(bounded_capacity(n));
            for _ in 0..n {
                v.push(read_i32_binary(r, "an element of an int32 vector")?);
            }
            Ok(v)
        } else {
            read_line(r, "an int32 vector")?
                .split_whitespace()
                .map(|t| parse_text(t, "not an int32"))
                .collect()
        }
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if binary {
            let mut b = Vec::with_capacity(5 * (self.len() + 1));
            write_count(&mut b, self.len())?;
            for &x in self {
                write_i32_binary(&mut b, x)?;
            }
            write_all(w, &b)
        } else {
            let mut s = String::new();
            for x in self {
                s.push_str(&format!("{x} "));
            }
            s.push('\n');
            write_all(w, s.as_bytes())
        }
    }
}

impl Holder for Vec<Vec<i32>> {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        if binary {
            let n = read_count(r, "the length of an int32 vector of vectors")?;
            let mut out = Vec::with_capacity(bounded_capacity(n));
            for _ in 0..n {
                let m = read_count(r, "the length of an inner int32 vector")?;
                let mut v = Vec::with_capacity(bounded_capacity(m));
                for _ in 0..m {
                    v.push(read_i32_binary(
                        r,
                        "an element of an int32 vector of vectors",
                    )?);
                }
                out.push(v);
            }
            Ok(out)
        } else {
            let line = read_line(r, "an int32 vector of vectors")?;
            let mut out = Vec::new();
            let mut current = Vec::new();
            for t in line.split_whitespace() {
                if t == ";" {
                    out.push(std::mem::take(&mut current));
                } else {
                    current.push(parse_text(t, "not an int32")?);
                }
            }
            if !current.is_empty() {
                return Err(format_err("`;` before the end of the line", line));
            }
            Ok(out)
        }
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if binary {
            let mut b = Vec::new();
            write_count(&mut b, self.len())?;
            for v in self {
                write_count(&mut b, v.len())?;
                for &x in v {
                    write_i32_binary(&mut b, x)?;
                }
            }
            write_all(w, &b)
        } else {
            let mut s = String::new();
            for v in self {
                for x in v {
                    s.push_str(&format!("{x} "));
                }
                s.push_str("; ");
            }
            s.push('\n');
            write_all(w, s.as_bytes())
        }
    }
}

impl Holder for Vec<(i32, i32)> {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        if binary {
            let n = read_count(r, "the length of an int32 pair vector")?;
            let mut out = Vec::with_capacity(bounded_capacity(n));
            for _ in 0..n {
                let a = read_i32_binary(r, "an element of an int32 pair vector")?;
                let b = read_i32_binary(r, "an element of an int32 pair vector")?;
                out.push((a, b));
            }
            Ok(out)
        } else {
            let line = read_line(r, "an int32 pair vector")?;
            let mut out = Vec::new();
            if line.trim().is_empty() {
                return Ok(out);
            }
            for pair in line.split(';') {
                let items: Vec<&str> = pair.split_whitespace().collect();
                match items.as_slice() {
                    [a, b] => out.push((
                        parse_text(a, "not an int32")?,
                        parse_text(b, "not an int32")?,
                    )),
                    _ => return Err(format_err("two int32s between `;`s", pair.trim())),
                }
            }
            Ok(out)
        }
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if binary {
            let mut b = Vec::new();
            write_count(&mut b, self.len())?;
            for &(x, y) in self {
                write_i32_binary(&mut b, x)?;
                write_i32_binary(&mut b, y)?;
            }
            write_all(w, &b)
        } else {
            let items: Vec<String> = self.iter().map(|(x, y)| format!("{x} {y} ")).collect();
            let mut s = items.join("; ");
            s.push('\n');
            write_all(w, s.as_bytes())
        }
    }
}

/// Kaldi's `IsToken`: non-empty, no whitespace, no control characters.
pub(crate) fn is_token(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

impl Holder for String {
    const BINARY_MARKER: bool = false;

    fn read<R: BufRead>(r: &mut R, _binary: bool) -> Result<Self, ObjError> {
        let token = read_single_token(r, "a token")?;
        // what the writer (and Kaldi's `IsToken`) would refuse is refused here already, so
        // a token that was read can always be written back
        if !is_token(&token) {
            return Err(format_err("a token without control characters", token));
        }
        Ok(token)
    }

    fn write<W: Write>(&self, w: &mut W, _binary: bool) -> Result<(), ObjError> {
        if !is_token(self) {
            return Err(format_err("a token without whitespace", self.clone()));
        }
        write_all(w, format!("{self}\n").as_bytes())
    }
}

impl Holder for Vec<String> {
    const BINARY_MARKER: bool = false;

    fn read<R: BufRead>(r: &mut R, _binary: bool) -> Result<Self, ObjError> {
        let tokens: Vec<String> = read_line(r, "a token vector")?
            .split_whitespace()
            .map(str::to_string)
            .collect();
        // Kaldi reads any bytes between the separators and fails only when writing such a
        // token back; this reader refuses it at once, naming it
        if let Some(bad) = tokens.iter().find(|t| !is_token(t)) {
            return Err(format_err(
                "a token without control characters",
                bad.clone(),
            ));
        }
        Ok(tokens)
    }

    fn write<W: Write>(&self, w: &mut W, _binary: bool) -> Result<(), ObjError> {
        let mut s = String::new();
        for t in self {
            if !is_token(t) {
                return Err(format_err("a token without whitespace", t.clone()));
            }
            s.push_str(t);
            s.push(' ');
        }
        s.push('\n');
        write_all(w, s.as_bytes())
    }
}

impl Holder for Vec<Vec<(i32, f32)>> {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        if binary {
            let n = read_count(r, "the number of frames of a posterior")?;
            let mut out = Vec::with_capacity(bounded_capacity(n));
            for _ in 0..n {
                let m = read_count(r, "the length of a posterior frame")?;
                let mut frame = Vec::with_capacity(bounded_capacity(m));
                for _ in 0..m {
                    let id = read_i32_binary(r, "an index of a posterior")?;
                    let weight = read_real_binary(r, "a weight of a posterior")? as f32;
                    frame.push((id, weight));
                }
                out.push(frame);
            }
            Ok(out)
        } else {
            let line = read_line(r, "a posterior")?;
            let mut tokens = line.split_whitespace();
            let mut out = Vec::new();
            while let Some(t) = tokens.next() {
                if t != "[" {
                    return Err(format_err("`[` opening a posterior frame", t));
                }
                let mut frame = Vec::new();
                loop {
                    match tokens.next() {
                        Some("]") => break,
                        Some(id) => {
                            let weight = tokens
                                .next()
                                .ok_or_else(|| format_err("a weight after the index", id))?;
                            frame.push((
                                parse_text(id, "not an int32 index")?,
                                parse_text(weight, "not a float weight")?,
                            ));
                        }
                        None => return Err(format_err("`]` closing a posterior frame", line)),
                    }
                }
                out.push(frame);
            }
            Ok(out)
        }
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if binary {
            let mut b = Vec::new();
            write_count(&mut b, self.len())?;
            for frame in self {
                write_count(&mut b, frame.len())?;
                for &(id, weight) in frame {
                    write_i32_binary(&mut b, id)?;
                    b.push(4);
                    b.extend_from_slice(&weight.to_le_bytes());
                }
            }
            write_all(w, &b)
        } else {
            let mut s = String::new();
            for frame in self {
                s.push_str("[ ");
                for &(id, weight) in frame {
                    s.push_str(&format!("{id} "));
                    push_g7(&mut s, weight as f64);
                    s.push(' ');
                }
                s.push_str("] ");
            }
            s.push('\n');
            write_all(w, s.as_bytes())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_with_control_characters_are_refused_on_read() {
        // found by the fuzzer: a token vector read with a NUL inside a token, which the
        // writer then refused
        let err = Vec::<String>::read(&mut &b"the c\x00t sat\n"[..], false).unwrap_err();
        assert_eq!(
            err,
            ObjError::Format {
                expected: "a token without control characters",
                found: "c\u{0}t".to_string()
            }
        );
        let err = String::read(&mut &b"a\x01b\n"[..], true).unwrap_err();
        assert_eq!(
            err,
            ObjError::Format {
                expected: "a token without control characters",
                found: "a\u{1}b".to_string()
            }
        );
        // ordinary tokens, and non-ASCII ones, still read
        let read = Vec::<String>::read(&mut "the cat\tsät\n".as_bytes(), false).unwrap();
        assert_eq!(read, ["the", "cat", "sät"]);
    }

    #[track_caller]
    fn g7(x: f64, want: &str) {
        let mut s = String::new();
        push_g7(&mut s, x);
        assert_eq!(s, want, "{x:e}");
    }

    /// `printf("%.7g")` outputs, worked by hand from the C standard's rule (scientific
    /// when the exponent is below -4 or at least the precision).
    #[test]
    fn g7_matches_printf() {
        g7(0.5, "0.5");
        g7(-1e-7, "-1e-07");
        g7(3.4e38, "3.4e+38");
        g7(1.0 / 3.0, "0.3333333");
        g7(2.0 / 3.0, "0.6666667");
        g7(1e300, "1e+300");
        g7(-2.5e-300, "-2.5e-300");
        g7(1234567.0, "1234567");
        g7(12345678.0, "1.234568e+07");
        g7(0.0001, "0.0001");
        g7(0.00001234, "1.234e-05");
        g7(100.0, "100");
        g7(-0.0, "-0");
        g7(f64::INFINITY, "inf");
        g7(9999999.5, "1e+07");
        g7(0.1f32 as f64, "0.1");
        g7(-779.8170166015625, "-779.817");
    }
}
