//! kaldi-io's holders (the objects of Kaldi's tables: matrices, vectors, packed, sparse and
//! general matrices, ...) and dense-matrix's `CompressedMatrix`:
//! any bytes through each holder's reader, binary or text; an object that was read is
//! written back and read again, and the second writing must equal the first byte for byte
//! (the writer is a fixed point of read-after-write).

use std::io::Cursor;

use dense_matrix::{
    CompressedMatrix, GeneralMatrix, Matrix, SpMatrix, SparseMatrix, SparseVector, TpMatrix, Vector,
};
use kaldi_io::{Holder, Posterior};

/// Inputs longer than this are ignored.
pub const MAX_LEN: usize = 1 << 16;

/// The first byte picks the holder and the mode (binary when its top bit is set); the rest
/// is the object as it would stand in an archive after its key.
pub fn kaldi_holders(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let binary = selector & 0x80 != 0;
    match selector % 18 {
        0 => round_trip::<Matrix<f32>>(body, binary),
        1 => round_trip::<Matrix<f64>>(body, binary),
        2 => round_trip::<Vector<f32>>(body, binary),
        3 => round_trip::<Vector<f64>>(body, binary),
        4 => compressed(body, binary),
        5 => round_trip::<i32>(body, binary),
        6 => round_trip::<f32>(body, binary),
        7 => round_trip::<bool>(body, binary),
        8 => round_trip::<Vec<i32>>(body, binary),
        9 => round_trip::<Vec<Vec<i32>>>(body, binary),
        10 => round_trip::<Vec<(i32, i32)>>(body, binary),
        11 => round_trip::<Vec<String>>(body, binary),
        12 => round_trip::<Posterior>(body, binary),
        13 => round_trip::<SpMatrix<f32>>(body, binary),
        14 => round_trip::<TpMatrix<f64>>(body, binary),
        15 => round_trip::<SparseVector<f32>>(body, binary),
        16 => round_trip::<SparseMatrix<f64>>(body, binary),
        _ => round_trip::<GeneralMatrix<f32>>(body, binary),
    }
}

/// Reads `T` from the bytes; when that works, `write(read(write(x))) == write(x)`.
fn round_trip<T: Holder>(body: &[u8], binary: bool) {
    let Ok(value) = T::read(&mut Cursor::new(body), binary) else {
        return;
    };
    let first = written(&value, binary);
    let again = T::read(&mut Cursor::new(&first[..]), binary).unwrap_or_else(|e| {
        panic!(
            "{} written as {:?} does not read back: {e}",
            std::any::type_name::<T>(),
            String::from_utf8_lossy(&first)
        )
    });
    let second = written(&again, binary);
    assert!(
        first == second,
        "{} changes when written again:\n{:?}\n{:?}",
        std::any::type_name::<T>(),
        String::from_utf8_lossy(&first),
        String::from_utf8_lossy(&second)
    );
}

/// A compressed matrix: the binary form is a fixed point as above; the text form is the
/// decompressed matrix, which reading compresses again (as Kaldi does), so a second writing
/// may quantise differently: there the text must read back, and decompress to a matrix of
/// the same shape whose values are finite.
fn compressed(body: &[u8], binary: bool) {
    if binary {
        round_trip::<CompressedMatrix>(body, binary);
        return;
    }
    let Ok(value) = CompressedMatrix::read(&mut Cursor::new(body), false) else {
        return;
    };
    let text = written(&value, false);
    let again = CompressedMatrix::read(&mut Cursor::new(&text[..]), false).unwrap_or_else(|e| {
        panic!(
            "compressed text {:?} does not read back: {e}",
            String::from_utf8_lossy(&text)
        )
    });
    assert_eq!(
        (again.num_rows(), again.num_cols()),
        (value.num_rows(), value.num_cols()),
        "shape"
    );
    let m: Matrix<f32> = again.to_matrix();
    assert!(
        m.rows().all(|row| row.iter().all(|x| x.is_finite())),
        "a compressed matrix decompresses to non-finite values"
    );
}

fn written<T: Holder>(value: &T, binary: bool) -> Vec<u8> {
    let mut out = Vec::new();
    value
        .write(&mut out, binary)
        .unwrap_or_else(|e| panic!("{} does not write: {e}", std::any::type_name::<T>()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_binary_objects_go_through() {
        // a text vector, a text alignment, a binary int32 (Kaldi's: size byte 4, then LE)
        kaldi_holders(b"\x02 [ 1 2.5 -3 ]\n");
        kaldi_holders(b"\x08 1 2 3 \n");
        kaldi_holders(&[0x80 | 5, 4, 7, 0, 0, 0]);
        // and bytes that are no object at all
        kaldi_holders(&[0x84, 0xff, 0x00]);
        kaldi_holders(b"\x0c [ 1 0.5 ]");
    }
}
