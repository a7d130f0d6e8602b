//! Reading a binary matrix or vector stored in its own precision (`FM` / `FV` into `f32`,
//! `DM` / `DV` into `f64`) straight into new memory, with no zeroing before the read: the
//! table readers' path for new values of those four holders and of [`AnyObject`] (whose
//! record's token picks the type). Anything else (the other
//! precision, compressed matrices, a header not wholly in the input's buffer, or one that
//! is not valid) goes through the holder's own `read`, which also words every error about
//! the header; the errors of this path (the end of data inside the elements) are worded as
//! dense-matrix words them.

use std::any::Any;
use std::io::BufRead;
use std::mem::MaybeUninit;

use dense_matrix::{Error as ObjError, Matrix, Real, Vector};

use crate::object::AnyObject;
use crate::stream::Input;

/// The most elements' bytes read before the vector grows again: a header that claims more
/// than the input holds costs at most this much memory before the end of the data is found
/// (as in dense-matrix's reader).
const PIECE: usize = 1 << 18;

/// A new value of the four holders above read by this path, or `None` (nothing consumed)
/// for the holder's own `read` to read it.
pub(crate) fn read_new<T: 'static>(input: &mut Input) -> Result<Option<T>, ObjError> {
    let mut value: Option<T> = None;
    if cfg!(target_endian = "big") {
        return Ok(value); // the elements are little-endian: they need decoding
    }
    let slot: &mut dyn Any = &mut value;
    if let Some(m) = slot.downcast_mut::<Option<Matrix<f32>>>() {
        *m = read_matrix::<f32>(input, b"FM ", "FM")?;
    } else if let Some(m) = slot.downcast_mut::<Option<Matrix<f64>>>() {
        *m = read_matrix::<f64>(input, b"DM ", "DM")?;
    } else if let Some(v) = slot.downcast_mut::<Option<Vector<f32>>>() {
        *v = read_vector::<f32>(input, b"FV ", "FV")?;
    } else if let Some(v) = slot.downcast_mut::<Option<Vector<f64>>>() {
        *v = read_vector::<f64>(input, b"DV ", "DV")?;
    } else if let Some(v) = slot.downcast_mut::<Option<AnyObject>>() {
        *v = read_any(input)?;
    }
    Ok(value)
}

/// An [`AnyObject`] of the four types above, told by its token (each try consumes nothing
/// unless its token is the one in the buffer).
fn read_any(input: &mut Input) -> Result<Option<AnyObject>, ObjError> {
    if let Some(m) = read_matrix::<f32>(input, b"FM ", "FM")? {
        return Ok(Some(AnyObject::MatrixF32(m)));
    }
    if let Some(m) = read_matrix::<f64>(input, b"DM ", "DM")? {
        return Ok(Some(AnyObject::MatrixF64(m)));
    }
    if let Some(v) = read_vector::<f32>(input, b"FV ", "FV")? {
        return Ok(Some(AnyObject::VectorF32(v)));
    }
    Ok(read_vector::<f64>(input, b"DV ", "DV")?.map(AnyObject::VectorF64))
}

fn io(e: std::io::Error) -> ObjError {
    ObjError::Io {
        kind: e.kind(),
        message: e.to_string(),
    }
}

/// Kaldi's binary int32 size in `b` (size byte 4, little-endian value), if it is one and
/// not negative.
fn size_at(b: &[u8]) -> Option<usize> {
    if b[0] != 4 {
        return None;
    }
    usize::try_from(i32::from_le_bytes([b[1], b[2], b[3], b[4]])).ok()
}

/// The sizes in a header of `sizes` int32s after `token`, when the whole header is in the
/// input's buffer, every size is valid and the elements' byte count fits (then consumed);
/// otherwise `None`, nothing consumed.
fn header<const N: usize>(
    input: &mut Input,
    token: &[u8],
    width: usize,
) -> Result<Option<[usize; N]>, ObjError> {
    let len = 3 + 5 * N;
    let head = input.fill_buf().map_err(io)?;
    if head.len() < len || &head[..3] != token {
        return Ok(None);
    }
    let mut sizes = [0; N];
    let mut count = Some(width);
    for (k, size) in sizes.iter_mut().enumerate() {
        let Some(v) = size_at(&head[3 + 5 * k..8 + 5 * k]) else {
            return Ok(None);
        };
        *size = v;
        count = count.and_then(|c| c.checked_mul(v));
    }
    if count.is_none() || (N == 2 && (sizes[0] == 0) != (sizes[1] == 0)) {
        return Ok(None);
    }
    input.consume(len);
    Ok(Some(sizes))
}

fn read_matrix<R: Real>(
    input: &mut Input,
    token: &[u8],
    name: &str,
) -> Result<Option<Matrix<R>>, ObjError> {
    let size = std::mem::size_of::<R>();
    let Some([rows, cols]) = header::<2>(input, token, size)? else {
        return Ok(None);
    };
    let data = read_elements::<R>(input, rows * cols, || {
        format!("the elements of a {rows} x {cols} `{name}` matrix")
    })?;
    Matrix::from_vec(rows, cols, data).map(Some)
}

fn read_vector<R: Real>(
    input: &mut Input,
    token: &[u8],
    name: &str,
) -> Result<Option<Vector<R>>, ObjError> {
    let size = std::mem::size_of::<R>();
    let Some([n]) = header::<1>(input, token, size)? else {
        return Ok(None);
    };
    let data = read_elements::<R>(input, n, || {
        format!("the elements of a `{name}` vector of dimension {n}")
    })?;
    Ok(Some(Vector::from_vec(data)))
}

/// Reads `n` elements of `R`'s own little-endian layout into a new vector, piece by piece,
/// each piece straight into the vector's spare capacity (`n * size_of::<R>()` fits in
/// `usize`: the header checked it).
fn read_elements<R: Real>(
    input: &mut Input,
    n: usize,
    reading: impl Fn() -> String,
) -> Result<Vec<R>, ObjError> {
    let size = std::mem::size_of::<R>();
    let per_piece = PIECE / size;
    let mut data: Vec<R> = Vec::with_capacity(n.min(per_piece));
    while data.len() < n {
        let start = data.len();
        let piece = (n - start).min(per_piece);
        data.reserve(piece);
        let spare = &mut data.spare_capacity_mut()[..piece];
        let len = std::mem::size_of_val(spare);
        // SAFETY: `MaybeUninit<u8>` has no validity requirement and alignment 1, and the
        // byte view covers exactly the `piece` elements of `spare` (`size_of_val`), memory
        // the vector owns and that nothing else touches while the view lives.
        let bytes: &mut [MaybeUninit<u8>] =
            unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast(), len) };
        let got = input.read_uninit(bytes).map_err(io)?;
        if got < len {
            return Err(ObjError::UnexpectedEnd {
                reading: reading(),
                needed: (n * size) as u64,
                got: (start * size + got) as u64,
            });
        }
        // SAFETY: `read_uninit` initialised all `len` bytes of the `piece` spare elements
        // (it returned `len`, checked above; a short read returned before this), and every
        // bit pattern is a valid `f32` / `f64` (`Real` is sealed to those two). The header's
        // count never sizes the memory: `piece` is capped by `PIECE` (tested with headers
        // claiming 2^31 - 1 rows and with archives cut inside the elements).
        unsafe { data.set_len(start + piece) };
    }
    Ok(data)
}
