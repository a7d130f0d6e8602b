//! Kaldi's `Write` / `Read` of vectors and matrices, binary and text.
//!
//! Binary is exactly Kaldi's object layout: the token `FM ` / `DM ` (matrix) or `FV ` /
//! `DV ` (vector, `F` for `f32`, `D` for `f64`), then each dimension as Kaldi's
//! `WriteBasicType<int32>` (a size byte `4` and the little-endian value), then the elements
//! row by row. As in Kaldi, the `\0B` marker that starts a binary file or archive entry
//! belongs to the stream, not to the object, and reading converts between precisions.
//! Text is the `Display` / `FromStr` form (`[ 1 2 ]`).
//!
//! Packed matrices (`SpMatrix`, `TpMatrix`, Kaldi's `PackedMatrix::Write`) are the token
//! `FP ` / `DP `, the order `n` as an int32, then the `n (n + 1) / 2` elements of the
//! lower triangle row by row; their text form is `[`, one row of the triangle per line,
//! `]`.

use std::io::{BufRead, Read, Write};

use crate::{Error, Matrix, MatrixBase, Real, SpMatrix, TpMatrix, Vector, VectorBase};

pub(crate) fn io_err(e: std::io::Error) -> Error {
    Error::Io {
        kind: e.kind(),
        message: e.to_string(),
    }
}

/// The largest piece read at once: a header that claims more than the input holds costs at
/// most this much memory before the end of the data is found.
pub(crate) const READ_CHUNK: usize = 1 << 18;

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

/// Fills as much of `buf` as the reader has; returns the bytes read (short only at the end
/// of the data).
pub(crate) fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, Error> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(e)),
        }
    }
    Ok(filled)
}

/// Fills `buf` or names what was being read when the data ends.
pub(crate) fn read_exact_named(
    r: &mut impl Read,
    buf: &mut [u8],
    reading: impl FnOnce() -> String,
) -> Result<(), Error> {
    let got = read_up_to(r, buf)?;
    if got < buf.len() {
        return Err(Error::UnexpectedEnd {
            reading: reading(),
            needed: buf.len() as u64,
            got: got as u64,
        });
    }
    Ok(())
}

/// Kaldi's `ReadBasicType<int32>` for a size: the size byte `4`, the little-endian value,
/// which must not be negative.
pub(crate) fn read_size(r: &mut impl Read, what: &'static str) -> Result<usize, Error> {
    let mut b = [0u8; 5];
    read_exact_named(r, &mut b, || what.to_string())?;
    if b[0] != 4 {
        return Err(Error::Format {
            expected: "the int32 size byte 4",
            found: b[0].to_string(),
        });
    }
    let v = i32::from_le_bytes([b[1], b[2], b[3], b[4]]);
    usize::try_from(v).map_err(|_| Error::NegativeSize { what, value: v })
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

/// Reads `n` elements stored as `f32` (`single`) or `f64`, converting to `R`, into `out`
/// (replacing its contents and reusing its memory), in bounded pieces; `what` names the
/// object for the overflow error, `reading` for the end of data. On an error `out` holds
/// the elements read before it.
fn read_elements_into<R: Real>(
    r: &mut impl Read,
    out: &mut Vec<R>,
    n: usize,
    single: bool,
    what: &'static str,
    reading: impl Fn() -> String,
) -> Result<(), Error> {
    let width = if single { 4 } else { 8 };
    let total = n
        .checked_mul(width)
        .ok_or_else(|| Error::HeaderSizeOverflow {
            what,
            factors: vec![n as u64, width as u64],
        })?;
    #[cfg(target_endian = "little")]
    if width == std::mem::size_of::<R>() {
        return read_native_into(r, out, n, total, reading);
    }
    out.clear();
    out.reserve(n.min(READ_CHUNK / width));
    let mut buf = vec![0u8; total.min(READ_CHUNK)];
    let mut done = 0;
    while done < total {
        let piece = (total - done).min(READ_CHUNK);
        let got = read_up_to(r, &mut buf[..piece])?;
        if got < piece {
            return Err(Error::UnexpectedEnd {
                reading: reading(),
                needed: total as u64,
                got: (done + got) as u64,
            });
        }
        if single {
            out.extend(
                buf[..piece]
                    .chunks_exact(4)
                    .map(|c| R::from_f64(f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)),
            );
        } else {
            out.extend(buf[..piece].chunks_exact(8).map(|c| {
                R::from_f64(f64::from_le_bytes([
                    c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
                ]))
            }));
        }
        done += piece;
    }
    Ok(())
}

/// Reads `n` elements stored in `R`'s own little-endian layout straight into `out` (one
/// copy fewer than decoding), in pieces of at most [`READ_CHUNK`] bytes so the memory
/// follows the data actually present. Elements `out` already holds are read over in place
/// (a reused buffer is neither zeroed nor reallocated); only its growth is zeroed first.
#[cfg(target_endian = "little")]
fn read_native_into<R: Real>(
    r: &mut impl Read,
    out: &mut Vec<R>,
    n: usize,
    total: usize,
    reading: impl Fn() -> String,
) -> Result<(), Error> {
    let size = std::mem::size_of::<R>();
    let per_piece = READ_CHUNK / size;
    out.truncate(n);
    let mut start = 0;
    while start < n {
        let piece = (n - start).min(per_piece);
        if out.len() < start + piece {
            out.resize(start + piece, R::ZERO);
        }
        let dst = &mut out[start..start + piece];
        let len = std::mem::size_of_val(dst);
        // SAFETY: `R` is `f32` or `f64` (`Real` is sealed): plain old data with no padding,
        // for which every bit pattern is a valid value, and whose alignment is at least
        // `u8`'s. The byte view covers exactly the `dst.len()` initialised elements of
        // `dst` (`size_of_val`), and `dst` is not touched while the view lives. The header's
        // count never sizes it: `piece` is capped by `READ_CHUNK`, and a short read is
        // an error below (tested with headers claiming 2^31 - 1 rows).
        let bytes = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), len) };
        let got = read_up_to(r, bytes)?;
        if got < len {
            out.truncate(start + got / size);
            return Err(Error::UnexpectedEnd {
                reading: reading(),
                needed: total as u64,
                got: (start * size + got) as u64,
            });
        }
        start += piece;
    }
    Ok(())
}

/// Reads a three-byte token and says whether it is the single-precision one of the pair.
fn read_token(
    r: &mut impl Read,
    single: &[u8],
    double: &[u8],
    expected: &'static str,
) -> Result<bool, Error> {
    let mut t = [0u8; 3];
    read_exact_named(r, &mut t, || expected.to_string())?;
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

/// The longest line of a text matrix or vector the readers take: 64 MiB, far above a real
/// one (Kaldi writes a matrix a row a line; a 1,000,000-element vector on one line is about
/// 12 MiB), so an input without a newline (`/dev/zero`, a truncated binary object read as
/// text) is an error once it passes the limit, not a line that grows until memory runs out.
/// Kaldi reads such lines without a bound.
pub const MAX_TEXT_LINE_LEN: usize = 1 << 26;

/// The error for a text token that reached [`MAX_TEXT_LINE_LEN`] bytes at `line` (the
/// packed and sparse text readers), showing its first 32 bytes.
pub(crate) fn token_too_long(line: usize, token: &[u8]) -> Error {
    Error::Parse {
        line,
        token: format!(
            "{}...",
            String::from_utf8_lossy(&token[..token.len().min(32)])
        ),
        reason: "a token longer than MAX_TEXT_LINE_LEN bytes",
    }
}

/// The lines of a text object up to the one holding its `]` (or the end of data). Each
/// line is searched for `]` once, as it is read (searching all the text read so far after
/// every line had made a 40,000-row matrix quadratic: 15.5 s). A line longer than
/// [`MAX_TEXT_LINE_LEN`] is [`Error::Format`], with no more than that read.
fn read_text(r: &mut impl BufRead) -> Result<String, Error> {
    let mut text = String::new();
    loop {
        let start = text.len();
        let read = r
            .by_ref()
            .take(MAX_TEXT_LINE_LEN as u64 + 1)
            .read_line(&mut text)
            .map_err(io_err)?;
        if read > MAX_TEXT_LINE_LEN && !text.ends_with('\n') {
            return Err(Error::Format {
                expected: "a text matrix or vector line of at most MAX_TEXT_LINE_LEN bytes",
                found: format!(
                    "more than {MAX_TEXT_LINE_LEN} bytes without a newline, at line {}",
                    text[..start].matches('\n').count() + 1
                ),
            });
        }
        if read == 0 || text[start..].contains(']') {
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
    /// Kaldi's `Read(is, binary)`: a binary `FM` or `DM` object (converted to `R`), a
    /// compressed `CM`, `CM2` or `CM3` one (decompressed, as Kaldi's `Matrix::Read` does),
    /// or the text form.
    pub fn read_kaldi(r: &mut impl BufRead, binary: bool) -> Result<Self, Error> {
        if !binary {
            return read_text(r)?.parse();
        }
        let mut m = Matrix::empty();
        m.read_kaldi_into(r, binary)?;
        Ok(m)
    }

    /// [`Matrix::read_kaldi`] into this matrix, reusing its memory (as Kaldi's `Read`
    /// into an existing matrix does): the matrix takes the object's shape, with stride
    /// equal to its columns, and a binary object of no more elements than the matrix's
    /// memory holds is read over it in place, neither reallocated nor zeroed first. On
    /// an error the matrix is left 0 x 0 (its memory kept for the next read).
    pub fn read_kaldi_into(&mut self, r: &mut impl BufRead, binary: bool) -> Result<(), Error> {
        let mut data = std::mem::take(self).data;
        match read_matrix_into(r, binary, &mut data) {
            Ok((rows, cols)) => {
                *self = Matrix::from_parts(data, rows, cols, cols);
                Ok(())
            }
            Err(e) => {
                data.clear();
                *self = Matrix::from_parts(data, 0, 0, 0);
                Err(e)
            }
        }
    }
}

/// The element count a compressed matrix's header claims, when the header is in `head`.
fn compressed_elements(head: &[u8]) -> Option<usize> {
    let start = match head.get(..4)? {
        [b'C', b'M', b' ', _] => 3,
        [b'C', b'M', b'2' | b'3', b' '] => 4,
        _ => return None,
    };
    let h = head.get(start + 8..start + 16)?;
    let rows = usize::try_from(i32::from_le_bytes([h[0], h[1], h[2], h[3]])).ok()?;
    let cols = usize::try_from(i32::from_le_bytes([h[4], h[5], h[6], h[7]])).ok()?;
    rows.checked_mul(cols)
}

/// The body of [`Matrix::read_kaldi_into`]: reads the object's elements into `data` (row
/// by row, `rows * cols` of them) and returns its shape.
fn read_matrix_into<R: Real>(
    r: &mut impl BufRead,
    binary: bool,
    data: &mut Vec<R>,
) -> Result<(usize, usize), Error> {
    if !binary {
        let m: Matrix<R> = read_text(r)?.parse()?;
        let shape = m.shape();
        data.clear();
        for row in m.rows() {
            data.extend_from_slice(row);
        }
        return Ok(shape);
    }
    let head = r.fill_buf().map_err(io_err)?;
    if head.first() == Some(&b'C') {
        // the decompressed matrix's memory first, then the compressed data's: in this
        // order a loop that drops each matrix reuses the same two blocks, where the other
        // made the allocator give back the top of its heap and take it again for every
        // matrix (a page fault and the kernel's zeroing for each of its pages)
        if let Some(n) = compressed_elements(head) {
            let want = n.min(READ_CHUNK / std::mem::size_of::<R>());
            data.reserve(want.saturating_sub(data.len()));
        }
        let cm = crate::CompressedMatrix::read_kaldi(r)?;
        cm.decompress_into(data);
        return Ok((cm.num_rows(), cm.num_cols()));
    }
    let single = read_token(r, b"FM ", b"DM ", "the matrix token `FM ` or `DM `")?;
    let name = if single { "FM" } else { "DM" };
    let rows = read_size(r, "the number of rows of a Kaldi matrix")?;
    let cols = read_size(r, "the number of columns of a Kaldi matrix")?;
    if (rows == 0) != (cols == 0) {
        return Err(Error::EmptyDimension { rows, cols });
    }
    let n = rows.checked_mul(cols).ok_or(Error::HeaderSizeOverflow {
        what: "a Kaldi matrix",
        factors: vec![rows as u64, cols as u64],
    })?;
    read_elements_into::<R>(r, data, n, single, "a Kaldi matrix", || {
        format!("the elements of a {rows} x {cols} `{name}` matrix")
    })?;
    Ok((rows, cols))
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
        let mut v = Vector::empty();
        v.read_kaldi_into(r, binary)?;
        Ok(v)
    }

    /// [`Vector::read_kaldi`] into this vector, reusing its memory: a binary object of no
    /// more elements than the vector's memory holds is read over it in place, neither
    /// reallocated nor zeroed first. On an error the vector is left empty (its memory kept).
    pub fn read_kaldi_into(&mut self, r: &mut impl BufRead, binary: bool) -> Result<(), Error> {
        let mut data = std::mem::take(self).into_vec();
        let read = if binary {
            read_vector_into(r, &mut data)
        } else {
            read_text(r)
                .and_then(|text| text.parse::<Vector<R>>())
                .map(|v| data = v.into_vec())
        };
        if read.is_err() {
            data.clear();
        }
        *self = Vector::from_vec(data);
        read
    }
}

/// The binary body of [`Vector::read_kaldi_into`].
fn read_vector_into<R: Real>(r: &mut impl BufRead, data: &mut Vec<R>) -> Result<(), Error> {
    let single = read_token(r, b"FV ", b"DV ", "the vector token `FV ` or `DV `")?;
    let name = if single { "FV" } else { "DV" };
    let n = read_size(r, "the dimension of a Kaldi vector")?;
    read_elements_into::<R>(r, data, n, single, "a Kaldi vector", || {
        format!("the elements of a `{name}` vector of dimension {n}")
    })
}

/// The `n (n + 1) / 2` elements of an order-`n` packed matrix from a header, checked.
fn packed_count(n: usize) -> Result<usize, Error> {
    let overflow = || Error::HeaderSizeOverflow {
        what: "a Kaldi packed matrix",
        factors: vec![n as u64, n as u64 + 1, 2],
    };
    let n1 = n.checked_add(1).ok_or_else(overflow)?;
    let (a, b) = if n.is_multiple_of(2) {
        (n / 2, n1)
    } else {
        (n, n1 / 2)
    };
    a.checked_mul(b).ok_or_else(overflow)
}

/// Kaldi's `PackedMatrix::Write`: binary `FP`/`DP` + order + elements, or the text form
/// `[`, each row of the lower triangle on its own line, `]` (`[ ]` when empty).
fn write_packed<R: Real>(
    w: &mut impl Write,
    n: usize,
    data: &[R],
    binary: bool,
) -> Result<(), Error> {
    if binary {
        let token: &[u8] = if R::NAME == "f32" { b"FP " } else { b"DP " };
        w.write_all(token).map_err(io_err)?;
        write_int32(w, n)?;
        return write_elements(w, data);
    }
    if n == 0 {
        return w.write_all(b"[ ]\n").map_err(io_err);
    }
    let mut text = String::from("[\n");
    let mut start = 0;
    for row in 0..n {
        for x in &data[start..=start + row] {
            text.push_str(&format!("{x} "));
        }
        start += row + 1;
        text.push_str(if row + 1 == n { "]\n" } else { "\n" });
    }
    w.write_all(text.as_bytes()).map_err(io_err)
}

/// Whitespace-separated tokens of Kaldi text, with the line each starts on.
struct Tokens<'a, B> {
    r: &'a mut B,
    line: usize,
}

impl<B: BufRead> Tokens<'_, B> {
    fn peek(&mut self) -> Result<Option<u8>, Error> {
        Ok(self.r.fill_buf().map_err(io_err)?.first().copied())
    }

    /// The next token, `None` at the end of the data.
    fn next(&mut self) -> Result<Option<(String, usize)>, Error> {
        while let Some(b) = self.peek()? {
            if !b.is_ascii_whitespace() {
                break;
            }
            if b == b'\n' {
                self.line += 1;
            }
            self.r.consume(1);
        }
        let line = self.line;
        let mut token = Vec::new();
        while let Some(b) = self.peek()? {
            if b.is_ascii_whitespace() {
                break;
            }
            if token.len() == MAX_TEXT_LINE_LEN {
                return Err(token_too_long(line, &token));
            }
            token.push(b);
            self.r.consume(1);
        }
        if token.is_empty() {
            return Ok(None);
        }
        Ok(Some((String::from_utf8_lossy(&token).into_owned(), line)))
    }

    /// The next token, or an error naming what was expected.
    fn expect(&mut self, what: &'static str) -> Result<(String, usize), Error> {
        self.next()?.ok_or(Error::Parse {
            line: self.line,
            token: String::new(),
            reason: what,
        })
    }
}

fn parse_number<R: Real>(token: &str, line: usize) -> Result<R, Error> {
    token
        .parse::<f64>()
        .map(R::from_f64)
        .map_err(|_| Error::Parse {
            line,
            token: token.to_string(),
            reason: "not a number",
        })
}

/// Kaldi's `PackedMatrix::Read` of the text forms: `[ ... ]` (the element count must be
/// triangular) or the older `FP n x0 x1 ...` / `DP n ...`. Memory grows with the numbers
/// actually read, never with a size written in the text.
fn read_packed_text<R: Real>(r: &mut impl BufRead) -> Result<(usize, Vec<R>), Error> {
    let mut tokens = Tokens { r, line: 1 };
    let (first, line) = tokens.expect("expected `[`, `FP` or `DP`")?;
    if first == "FP" || first == "DP" {
        let (size, line) = tokens.expect("expected the order of the packed matrix")?;
        let n: i32 = size.parse().map_err(|_| Error::Parse {
            line,
            token: size.clone(),
            reason: "not an int32 order",
        })?;
        let n = usize::try_from(n).map_err(|_| Error::NegativeSize {
            what: "the order of a Kaldi packed matrix",
            value: n,
        })?;
        let count = packed_count(n)?;
        let mut data = Vec::new();
        while data.len() < count {
            let (tok, line) = tokens.expect("expected another element of the packed matrix")?;
            data.push(parse_number::<R>(&tok, line)?);
        }
        return Ok((n, data));
    }
    if first != "[" {
        return Err(Error::Parse {
            line,
            token: first,
            reason: "expected `[`, `FP` or `DP`",
        });
    }
    let mut data = Vec::new();
    loop {
        let (tok, line) = tokens.expect("expected `]` at the end")?;
        let (number, end) = match tok.strip_suffix(']') {
            Some(rest) => (rest, true),
            None => (tok.as_str(), false),
        };
        if !number.is_empty() {
            data.push(parse_number::<R>(number, line)?);
        }
        if end {
            break;
        }
    }
    // Kaldi eats the newline after `]`.
    if tokens.peek()? == Some(b'\r') {
        tokens.r.consume(1);
    }
    if tokens.peek()? == Some(b'\n') {
        tokens.r.consume(1);
    }
    // n = floor(sqrt(2 count)) is the only candidate: n (n + 1) / 2 <= count < (n + 1)^2 / 2.
    let count = data.len();
    let mut n = ((2 * count) as f64).sqrt() as usize;
    while n * (n + 1) / 2 > count {
        n -= 1;
    }
    while (n + 1) * (n + 2) / 2 <= count {
        n += 1;
    }
    if n * (n + 1) / 2 != count {
        return Err(Error::Parse {
            line: tokens.line,
            token: format!("{count} numbers"),
            reason: "a packed matrix holds a triangular number of elements",
        });
    }
    Ok((n, data))
}

/// Kaldi's `PackedMatrix::Read`: binary `FP` / `DP` (converted to `R`) or text.
fn read_packed<R: Real>(r: &mut impl BufRead, binary: bool) -> Result<(usize, Vec<R>), Error> {
    if !binary {
        return read_packed_text(r);
    }
    let single = read_token(r, b"FP ", b"DP ", "the packed matrix token `FP ` or `DP `")?;
    let name = if single { "FP" } else { "DP" };
    let n = read_size(r, "the order of a Kaldi packed matrix")?;
    let count = packed_count(n)?;
    let mut data = Vec::new();
    read_elements_into::<R>(r, &mut data, count, single, "a Kaldi packed matrix", || {
        format!("the elements of an order-{n} `{name}` packed matrix")
    })?;
    Ok((n, data))
}

impl<R: Real> SpMatrix<R> {
    /// Kaldi's `Write(os, binary)`: the binary `FP`/`DP` object or the text form.
    pub fn write_kaldi(&self, w: &mut impl Write, binary: bool) -> Result<(), Error> {
        write_packed(w, self.num_rows(), self.data(), binary)
    }

    /// Kaldi's `Read(is, binary)`: a binary `FP` or `DP` object (converted to `R`) or
    /// the text form (`[ ... ]`, or `FP n ...`).
    pub fn read_kaldi(r: &mut impl BufRead, binary: bool) -> Result<Self, Error> {
        let (n, data) = read_packed(r, binary)?;
        SpMatrix::from_packed(n, data)
    }
}

impl<R: Real> TpMatrix<R> {
    /// Kaldi's `Write(os, binary)`: the binary `FP`/`DP` object or the text form (the
    /// same layout as `SpMatrix`, as in Kaldi).
    pub fn write_kaldi(&self, w: &mut impl Write, binary: bool) -> Result<(), Error> {
        write_packed(w, self.num_rows(), self.data(), binary)
    }

    /// Kaldi's `Read(is, binary)`: a binary `FP` or `DP` object (converted to `R`) or
    /// the text form.
    pub fn read_kaldi(r: &mut impl BufRead, binary: bool) -> Result<Self, Error> {
        let (n, data) = read_packed(r, binary)?;
        TpMatrix::from_packed(n, data)
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

    /// The archive entry `key \0B` + object that kaldi-native-io (Kaldi's own I/O code)
    /// wrote, split into key and object; see `tests/golden/gen_io_goldens.py`.
    fn golden_entry<'a>(ark: &'a [u8], key: &str) -> &'a [u8] {
        let head = format!("{key} \0B");
        assert!(
            ark.starts_with(head.as_bytes()),
            "golden archive starts with `{key} \\0B`"
        );
        &ark[head.len()..]
    }

    #[test]
    fn reads_and_writes_what_kaldi_native_io_writes() {
        // FloatMatrixWriter["key"] = [[1, 2], [3, 4]]
        let ark = include_bytes!("../tests/golden/io_float_matrix.ark");
        let object = golden_entry(ark, "key");
        let m = Matrix::<f32>::read_kaldi(&mut &object[..], true).unwrap();
        assert!(m == Matrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]]));
        let mut out = Vec::new();
        m.write_kaldi(&mut out, true).unwrap();
        assert_eq!(out, object);
        // DoubleVectorWriter["v"] = [0.5, -1.25, 1e300]
        let ark = include_bytes!("../tests/golden/io_double_vector.ark");
        let object = golden_entry(ark, "v");
        let v = Vector::<f64>::read_kaldi(&mut &object[..], true).unwrap();
        assert_eq!(v.data(), &[0.5, -1.25, 1e300]);
        let mut out = Vec::new();
        v.write_kaldi(&mut out, true).unwrap();
        assert_eq!(out, object);
        // DoubleMatrixWriter["m"] = [[0.1, -2], [3e-300, 7], [inf, -0.0]], text mode
        let ark = include_bytes!("../tests/golden/io_double_matrix_text.ark");
        let text = std::str::from_utf8(ark).unwrap();
        let object = text.strip_prefix("m ").unwrap();
        let m = Matrix::<f64>::read_kaldi(&mut object.as_bytes(), false).unwrap();
        assert_eq!(m.shape(), (3, 2));
        assert_eq!(m[(0, 0)], 0.1);
        assert_eq!(m[(1, 0)], 3e-300);
        assert_eq!(m[(2, 0)], f64::INFINITY);
        assert!(m[(2, 1)] == 0.0 && m[(2, 1)].is_sign_negative());
    }

    #[track_caller]
    fn check_matrix_err(bytes: &[u8], want: Error) {
        let err = Matrix::<f32>::read_kaldi(&mut &bytes[..], true).unwrap_err();
        assert_eq!(err, want);
    }

    /// The headers of issue 17 item 5: each claimed gigabytes and allocated them before
    /// reading; now the memory follows the data and the end of data is an error.
    #[test]
    fn hostile_headers_are_errors_not_allocations() {
        check_matrix_err(
            b"DM \x04\xff\xff\xff\x7f\x04\x04\0\0\0",
            Error::UnexpectedEnd {
                reading: "the elements of a 2147483647 x 4 `DM` matrix".into(),
                needed: 2147483647 * 4 * 8,
                got: 0,
            },
        );
        // rows = cols = 2^31 - 1: 2^62 elements; as f32 the byte count still fits in u64,
        // as f64 it overflows
        check_matrix_err(
            b"FM \x04\xff\xff\xff\x7f\x04\xff\xff\xff\x7f\x01\x02",
            Error::UnexpectedEnd {
                reading: "the elements of a 2147483647 x 2147483647 `FM` matrix".into(),
                needed: 2147483647 * 2147483647 * 4,
                got: 2,
            },
        );
        check_matrix_err(
            b"DM \x04\xff\xff\xff\x7f\x04\xff\xff\xff\x7f",
            Error::HeaderSizeOverflow {
                what: "a Kaldi matrix",
                factors: vec![2147483647 * 2147483647, 8],
            },
        );
        let err = Vector::<f64>::read_kaldi(&mut &b"FV \x04\xff\xff\xff\x7f"[..], true);
        assert_eq!(
            err.unwrap_err().to_string(),
            "unexpected end of data while reading the elements of a `FV` vector of dimension \
             2147483647: it needs 8589934588 bytes, 0 were there"
        );
        check_matrix_err(
            b"FM \x04\xfe\xff\xff\xff\x04\x01\0\0\0",
            Error::NegativeSize {
                what: "the number of rows of a Kaldi matrix",
                value: -2,
            },
        );
        let err = Vector::<f32>::read_kaldi(&mut &b"FV \x04\x00\x00\x00\x80"[..], true);
        assert_eq!(
            err.unwrap_err().to_string(),
            "the dimension of a Kaldi vector is negative: -2147483648"
        );
        check_matrix_err(
            b"FM \x04\x00\0\0\0\x04\x03\0\0\0",
            Error::EmptyDimension { rows: 0, cols: 3 },
        );
        check_matrix_err(
            b"FM \x04\x02\0",
            Error::UnexpectedEnd {
                reading: "the number of rows of a Kaldi matrix".into(),
                needed: 5,
                got: 3,
            },
        );
        check_matrix_err(
            b"F",
            Error::UnexpectedEnd {
                reading: "the matrix token `FM ` or `DM `".into(),
                needed: 3,
                got: 1,
            },
        );
    }

    /// A matrix larger than one read piece comes back whole (the piece boundary falls
    /// inside an element's bytes when the element count is odd).
    #[test]
    fn reading_in_pieces_keeps_every_element() {
        let rows = 3 * READ_CHUNK / (4 * 7) + 1;
        let mut bytes = b"FM ".to_vec();
        bytes.extend([4]);
        bytes.extend((rows as i32).to_le_bytes());
        bytes.extend([4, 7, 0, 0, 0]);
        for i in 0..rows * 7 {
            bytes.extend((i as f32).to_le_bytes());
        }
        // decoded into f64, and read natively into f32
        let m = Matrix::<f64>::read_kaldi(&mut &bytes[..], true).unwrap();
        let m32 = Matrix::<f32>::read_kaldi(&mut &bytes[..], true).unwrap();
        assert_eq!((m.shape(), m32.shape()), ((rows, 7), (rows, 7)));
        for r in [0, rows / 2, rows - 1] {
            for c in 0..7 {
                assert_eq!(m[(r, c)], (r * 7 + c) as f64);
                assert_eq!(m32[(r, c)], (r * 7 + c) as f32);
            }
        }
        let cut = &bytes[..bytes.len() - 3];
        assert_eq!(
            Matrix::<f32>::read_kaldi(&mut &cut[..], true).unwrap_err(),
            Error::UnexpectedEnd {
                reading: format!("the elements of a {rows} x 7 `FM` matrix"),
                needed: (rows * 7 * 4) as u64,
                got: (rows * 7 * 4 - 3) as u64,
            }
        );
    }

    /// Kaldi's bytes for a `rows x cols` float (`FM`) or double (`DM`) matrix whose element
    /// `(r, c)` is `f(r, c)`, built by hand as in `kaldi_fm_bytes`.
    fn matrix_bytes(
        single: bool,
        rows: usize,
        cols: usize,
        f: impl Fn(usize, usize) -> f64,
    ) -> Vec<u8> {
        let mut b = if single {
            b"FM ".to_vec()
        } else {
            b"DM ".to_vec()
        };
        for n in [rows, cols] {
            b.push(4);
            b.extend((n as i32).to_le_bytes());
        }
        for r in 0..rows {
            for c in 0..cols {
                if single {
                    b.extend((f(r, c) as f32).to_le_bytes());
                } else {
                    b.extend(f(r, c).to_le_bytes());
                }
            }
        }
        b
    }

    #[track_caller]
    fn assert_elements<R: Real>(
        m: &Matrix<R>,
        rows: usize,
        cols: usize,
        f: impl Fn(usize, usize) -> f64,
    ) {
        assert_eq!((m.shape(), m.stride()), ((rows, cols), cols));
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(m[(r, c)].to_f64(), f(r, c), "element ({r}, {c})");
            }
        }
    }

    #[test]
    fn reading_into_a_matrix_reuses_its_memory() {
        let big = |r: usize, c: usize| (r * 8 + c) as f64;
        let small = |r: usize, c: usize| -(r as f64) - c as f64 / 8.0;
        let big_bytes = matrix_bytes(true, 50, 8, big);
        let small_bytes = matrix_bytes(true, 3, 5, small);
        // a padded 2 x 3 matrix (stride 4) to start from: its shape and stride go
        let mut m = Matrix::from_rows(&[[9.0f32; 3]; 2]);
        m.read_kaldi_into(&mut &big_bytes[..], true).unwrap();
        assert_elements(&m, 50, 8, big);
        let memory = m.as_ptr();
        // smaller, then as large again: read over the same memory, every element new
        m.read_kaldi_into(&mut &small_bytes[..], true).unwrap();
        assert_elements(&m, 3, 5, small);
        assert_eq!(m.as_ptr(), memory);
        m.read_kaldi_into(&mut &big_bytes[..], true).unwrap();
        assert_elements(&m, 50, 8, big);
        assert_eq!(m.as_ptr(), memory);
        // doubles converted to f32, as `read_kaldi` does
        let wide = matrix_bytes(false, 4, 2, |r, c| (r as f64 - 1.5) * (c as f64 + 0.25));
        m.read_kaldi_into(&mut &wide[..], true).unwrap();
        assert_elements(&m, 4, 2, |r, c| {
            ((r as f64 - 1.5) * (c as f64 + 0.25)) as f32 as f64
        });
        assert_eq!(m.as_ptr(), memory);
        // an empty matrix, then a compressed one (the same floats as decompressing it)
        m.read_kaldi_into(&mut &b"FM \x04\0\0\0\0\x04\0\0\0\0"[..], true)
            .unwrap();
        assert_eq!(m.shape(), (0, 0));
        let source = Matrix::<f32>::read_kaldi(&mut &big_bytes[..], true).unwrap();
        let cm =
            crate::CompressedMatrix::compress(&source, crate::CompressionMethod::SpeechFeature)
                .unwrap();
        let mut cm_bytes = Vec::new();
        cm.write_kaldi(&mut cm_bytes).unwrap();
        m.read_kaldi_into(&mut &cm_bytes[..], true).unwrap();
        assert!(m == cm.to_matrix::<f32>());
        assert_eq!(m.as_ptr(), memory);
        // text
        m.read_kaldi_into(&mut &b" [ 1 2\n 3 4 ]\n"[..], false)
            .unwrap();
        assert!(m == Matrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]]));
    }

    /// The element count read ahead from a compressed header (to reserve the matrix's
    /// memory before the compressed data's), for each format, and none from a header that
    /// is cut short or negative.
    #[test]
    fn compressed_header_element_count() {
        let m = Matrix::from_vec(7, 3, (0..21).map(|i| i as f32).collect()).unwrap();
        for method in [
            crate::CompressionMethod::SpeechFeature,
            crate::CompressionMethod::TwoByteAuto,
            crate::CompressionMethod::OneByteAuto,
        ] {
            let mut bytes = Vec::new();
            crate::CompressedMatrix::compress(&m, method)
                .unwrap()
                .write_kaldi(&mut bytes)
                .unwrap();
            let header = if bytes[2] == b' ' { 3 + 16 } else { 4 + 16 };
            assert_eq!(compressed_elements(&bytes), Some(21), "{method:?}");
            assert_eq!(compressed_elements(&bytes[..header]), Some(21));
            assert_eq!(compressed_elements(&bytes[..header - 1]), None);
            let mut negative = bytes.clone();
            negative[header - 5] = 0xff; // the top byte of the row count
            assert_eq!(compressed_elements(&negative), None);
        }
        assert_eq!(compressed_elements(b"FM \x04"), None);
    }

    #[test]
    fn reading_into_after_an_error_leaves_an_empty_matrix() {
        let f = |r: usize, c: usize| (r * 100 + c) as f64;
        let bytes = matrix_bytes(true, 20, 6, f);
        let mut m = Matrix::<f32>::read_kaldi(&mut &bytes[..], true).unwrap();
        let cut = &bytes[..bytes.len() - 5];
        assert_eq!(
            m.read_kaldi_into(&mut &cut[..], true).unwrap_err(),
            Error::UnexpectedEnd {
                reading: "the elements of a 20 x 6 `FM` matrix".into(),
                needed: 20 * 6 * 4,
                got: 20 * 6 * 4 - 5,
            }
        );
        assert_eq!(m.shape(), (0, 0));
        // a header claiming 2^31 - 1 rows: the same error as for a new matrix, and the
        // memory does not follow the claim
        let hostile = b"FM \x04\xff\xff\xff\x7f\x04\x04\0\0\0\x01\x02";
        assert_eq!(
            m.read_kaldi_into(&mut &hostile[..], true).unwrap_err(),
            Error::UnexpectedEnd {
                reading: "the elements of a 2147483647 x 4 `FM` matrix".into(),
                needed: 2147483647 * 4 * 4,
                got: 2,
            }
        );
        assert_eq!(m.shape(), (0, 0));
        m.read_kaldi_into(&mut &b"FM \x04\x02\0\0\0\x04\x03\0\0\0"[..], true)
            .unwrap_err();
        assert_eq!(m.shape(), (0, 0));
        m.read_kaldi_into(&mut &bytes[..], true).unwrap();
        assert_elements(&m, 20, 6, f);
    }

    #[test]
    fn reading_into_a_vector_reuses_its_memory() {
        let mut long = b"FV \x04\x06\0\0\0".to_vec();
        for x in [1.0f32, -2.0, 3.5, 4.0, 5.0, 6.25] {
            long.extend(x.to_le_bytes());
        }
        let mut short = b"DV \x04\x02\0\0\0".to_vec();
        for x in [0.1f64, 1e300] {
            short.extend(x.to_le_bytes());
        }
        let mut v = Vector::<f64>::from_vec(vec![7.0; 3]);
        v.read_kaldi_into(&mut &long[..], true).unwrap();
        assert_eq!(v.data(), &[1.0, -2.0, 3.5, 4.0, 5.0, 6.25]);
        let memory = v.data().as_ptr();
        v.read_kaldi_into(&mut &short[..], true).unwrap();
        assert_eq!(v.data(), &[0.1, 1e300]);
        assert_eq!(v.data().as_ptr(), memory);
        assert!(v.read_kaldi_into(&mut &long[..10], true).is_err());
        assert_eq!(v.dim(), 0);
        v.read_kaldi_into(&mut &b" [ 1.5 -2 ]\n"[..], false)
            .unwrap();
        assert_eq!(v.data(), &[1.5, -2.0]);
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
        assert_eq!(
            Matrix::<f32>::read_kaldi(&mut &cut[..], true).unwrap_err(),
            Error::UnexpectedEnd {
                reading: "the number of columns of a Kaldi matrix".into(),
                needed: 5,
                got: 4,
            }
        );
    }
}
