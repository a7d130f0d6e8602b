//! dense-matrix's Kaldi readers: binary and text `Matrix`/`Vector` objects in `f32` and `f64`,
//! checked against a naive decoding of the bytes and written back and read again; and the
//! packed `SpMatrix`/`TpMatrix` constructors, checked element by element.

use dense_matrix::{Matrix, Real, SpMatrix, TpMatrix, Vector};

use crate::{same_f64, Bytes};

/// Inputs longer than this are ignored.
pub const MAX_LEN: usize = 1 << 16;

/// Packed matrices are at most this many rows.
const MAX_PACKED_ROWS: usize = 24;

/// Binary objects: the first byte picks the reader (matrix or vector, `f32` or `f64`, or a
/// packed matrix), the rest is the stream.
pub fn kaldi_binary(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let Some((&selector, stream)) = data.split_first() else {
        return;
    };
    match selector % 6 {
        0 => binary_matrix::<f32>(stream),
        1 => binary_matrix::<f64>(stream),
        2 => binary_vector::<f32>(stream),
        3 => binary_vector::<f64>(stream),
        4 => packed(stream),
        _ => {
            // Kaldi's stream: an optional `\0B` marker says binary, anything else is text.
            let binary = stream.starts_with(b"\0B");
            let body = if binary { &stream[2..] } else { stream };
            let _ = Matrix::<f64>::read_kaldi(&mut &body[..], binary);
        }
    }
}

/// Text objects: the first byte picks the reader, the rest is the text.
pub fn kaldi_text(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let Some((&selector, text)) = data.split_first() else {
        return;
    };
    match selector % 4 {
        0 => text_matrix::<f32>(text),
        1 => text_matrix::<f64>(text),
        2 => text_vector::<f32>(text),
        _ => text_vector::<f64>(text),
    }
}

/// What a binary header claims: the element width and count, when the header is complete.
fn claim(stream: &[u8]) -> Option<(usize, usize, usize)> {
    let token = stream.get(..3)?;
    let width = match token[0] {
        b'F' => 4,
        b'D' => 8,
        _ => return None,
    };
    let int = |at: usize| -> Option<usize> {
        let b = stream.get(at..at + 5)?;
        if b[0] != 4 {
            return None;
        }
        usize::try_from(i32::from_le_bytes([b[1], b[2], b[3], b[4]])).ok()
    };
    let header = if token[1] == b'M' { 13 } else { 8 };
    let count = if token[1] == b'M' {
        int(3)?.checked_mul(int(8)?)?
    } else {
        int(3)?
    };
    Some((width, count, header))
}

/// Whether the element bytes a header claims are present in full. A reader given less must
/// fail, having allocated no more than the input could fill (issue 17, item 5: it used to
/// allocate what the header claimed, 64 GiB for a 13-byte input, and item 1: `rows * cols`
/// could wrap).
fn fits(stream: &[u8]) -> bool {
    match claim(stream) {
        Some((width, count, header)) => count
            .checked_mul(width)
            .and_then(|bytes| bytes.checked_add(header))
            .is_some_and(|total| total <= stream.len()),
        None => true,
    }
}

/// The elements of a complete binary object, decoded by hand.
fn model_elements(stream: &[u8], width: usize, count: usize, header: usize) -> Vec<f64> {
    stream[header..header + width * count]
        .chunks_exact(width)
        .map(|c| {
            if width == 4 {
                f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            } else {
                f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
            }
        })
        .collect()
}

fn binary_matrix<R: Real>(stream: &[u8]) {
    if !fits(stream) {
        let read = Matrix::<R>::read_kaldi(&mut &stream[..], true);
        assert!(read.is_err(), "read a matrix whose elements are cut short");
        return;
    }
    let Ok(m) = Matrix::<R>::read_kaldi(&mut &stream[..], true) else {
        return;
    };
    // `FM`/`DM` elements against the bytes; a compressed `CM` matrix has no such model and
    // is checked by its round trips alone
    if let Some((width, count, header)) = claim(stream) {
        let model = model_elements(stream, width, count, header);
        let cols = m.num_cols();
        assert_eq!(m.num_rows() * cols, model.len(), "element count");
        for (k, &x) in model.iter().enumerate() {
            let got = m[(k / cols, k % cols)].to_f64();
            let want = R::from_f64(x).to_f64();
            assert!(same_f64(got, want), "element {k}: {got} vs {want}");
        }
    }
    let back = rewrite(
        |w| m.write_kaldi(w, true),
        |r| Matrix::<R>::read_kaldi(r, true),
    );
    assert_same_matrix(&m, &back, "binary");
    let back = rewrite(
        |w| m.write_kaldi(w, false),
        |r| Matrix::<R>::read_kaldi(r, false),
    );
    assert_same_matrix(&m, &back, "text");
}

fn binary_vector<R: Real>(stream: &[u8]) {
    if !fits(stream) {
        let read = Vector::<R>::read_kaldi(&mut &stream[..], true);
        assert!(read.is_err(), "read a vector whose elements are cut short");
        return;
    }
    let Ok(v) = Vector::<R>::read_kaldi(&mut &stream[..], true) else {
        return;
    };
    let (width, count, header) = claim(stream).expect("a vector was read, so its header is whole");
    let model = model_elements(stream, width, count, header);
    assert_eq!(v.dim(), model.len(), "element count");
    for (k, &x) in model.iter().enumerate() {
        let (got, want) = (v[k].to_f64(), R::from_f64(x).to_f64());
        assert!(same_f64(got, want), "element {k}: {got} vs {want}");
    }
    let back = rewrite(
        |w| v.write_kaldi(w, true),
        |r| Vector::<R>::read_kaldi(r, true),
    );
    assert_same_vector(&v, &back, "binary");
    let back = rewrite(
        |w| v.write_kaldi(w, false),
        |r| Vector::<R>::read_kaldi(r, false),
    );
    assert_same_vector(&v, &back, "text");
}

fn text_matrix<R: Real>(text: &[u8]) {
    let Ok(m) = Matrix::<R>::read_kaldi(&mut &text[..], false) else {
        return;
    };
    let back = rewrite(
        |w| m.write_kaldi(w, false),
        |r| Matrix::<R>::read_kaldi(r, false),
    );
    assert_same_matrix(&m, &back, "text");
    let back = rewrite(
        |w| m.write_kaldi(w, true),
        |r| Matrix::<R>::read_kaldi(r, true),
    );
    assert_same_matrix(&m, &back, "binary");
}

fn text_vector<R: Real>(text: &[u8]) {
    let Ok(v) = Vector::<R>::read_kaldi(&mut &text[..], false) else {
        return;
    };
    let back = rewrite(
        |w| v.write_kaldi(w, false),
        |r| Vector::<R>::read_kaldi(r, false),
    );
    assert_same_vector(&v, &back, "text");
    let back = rewrite(
        |w| v.write_kaldi(w, true),
        |r| Vector::<R>::read_kaldi(r, true),
    );
    assert_same_vector(&v, &back, "binary");
}

/// Writes with `write`, reads the bytes back with `read`; both must succeed.
fn rewrite<T, E: std::fmt::Display>(
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    read: impl FnOnce(&mut &[u8]) -> Result<T, E>,
) -> T {
    let mut bytes = Vec::new();
    if let Err(e) = write(&mut bytes) {
        panic!("an object that was read does not write: {e}");
    }
    let mut reader: &[u8] = &bytes;
    match read(&mut reader) {
        Ok(back) => back,
        Err(e) => panic!(
            "written bytes {:?} do not read back: {e}",
            String::from_utf8_lossy(&bytes)
        ),
    }
}

fn assert_same_matrix<R: Real>(a: &Matrix<R>, b: &Matrix<R>, how: &str) {
    assert_eq!(
        (a.num_rows(), a.num_cols()),
        (b.num_rows(), b.num_cols()),
        "{how} round trip: size"
    );
    for r in 0..a.num_rows() {
        for c in 0..a.num_cols() {
            let (x, y) = (a[(r, c)].to_f64(), b[(r, c)].to_f64());
            assert!(same_f64(x, y), "{how} round trip: ({r}, {c}) {x} -> {y}");
        }
    }
}

fn assert_same_vector<R: Real>(a: &Vector<R>, b: &Vector<R>, how: &str) {
    assert_eq!(a.dim(), b.dim(), "{how} round trip: length");
    for k in 0..a.dim() {
        let (x, y) = (a[k].to_f64(), b[k].to_f64());
        assert!(same_f64(x, y), "{how} round trip: element {k} {x} -> {y}");
    }
}

/// `SpMatrix`/`TpMatrix::from_packed` with a size and data from the bytes: accepted exactly
/// when the length is `n (n + 1) / 2`, and then element `(i, j)` is the packed one.
fn packed(stream: &[u8]) {
    let mut bytes = Bytes::new(stream);
    let n = usize::from(bytes.byte()) % (MAX_PACKED_ROWS + 1);
    let data: Vec<f64> = bytes
        .rest()
        .iter()
        .take(MAX_PACKED_ROWS * (MAX_PACKED_ROWS + 1))
        .map(|&b| f64::from(b as i8) / 8.0)
        .collect();
    let expected_len = n * (n + 1) / 2;
    // an order whose packed length `n (n + 1) / 2` overflows is refused (issue 17, item 12:
    // it used to wrap)
    let huge = usize::MAX - usize::from(bytes.byte());
    assert!(
        SpMatrix::from_packed(huge, data.clone()).is_err(),
        "SpMatrix::from_packed({huge})"
    );
    assert!(
        TpMatrix::from_packed(huge, data.clone()).is_err(),
        "TpMatrix::from_packed({huge})"
    );
    match SpMatrix::from_packed(n, data.clone()) {
        Ok(sp) => {
            assert_eq!(data.len(), expected_len, "accepted a wrong length");
            assert_eq!(sp.num_rows(), n);
            for i in 0..n {
                for j in 0..=i {
                    let want = data[i * (i + 1) / 2 + j];
                    assert_eq!(sp[(i, j)], want, "sp ({i}, {j})");
                    assert_eq!(sp[(j, i)], want, "sp ({j}, {i}) mirrors ({i}, {j})");
                }
            }
        }
        Err(_) => assert_ne!(data.len(), expected_len, "rejected the right length"),
    }
    match TpMatrix::from_packed(n, data.clone()) {
        Ok(tp) => {
            assert_eq!(data.len(), expected_len, "accepted a wrong length");
            for i in 0..n {
                for j in 0..=i {
                    assert_eq!(tp[(i, j)], data[i * (i + 1) / 2 + j], "tp ({i}, {j})");
                }
            }
        }
        Err(_) => assert_ne!(data.len(), expected_len, "rejected the right length"),
    }
}
