//! New float matrices and vectors in their own precision (`FM`/`FV` as `f32`, `DM`/`DV` as
//! `f64`, and as `AnyObject`, which takes each record's type from its token) are read by the table readers straight into new memory, without zeroing it
//! first. The model is the holder's own `read` (dense-matrix's reader, checked against
//! Kaldi's files by the golden tests), reached through a wrapper holder the fast path does
//! not know: the items, values and errors alike, must be the same for whole archives, for
//! archives cut at every byte, for matrices larger than one read piece, for headers that
//! straddle the input's buffer, through pipes, and for hostile headers.

use std::fmt::Debug;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use dense_matrix::{Error as DmError, Matrix, Vector};
use kaldi_io::{AnyObject, Error, Holder, RandomAccessTableReader, SequentialTableReader};

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kaldi-io-new-values")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `T` read through its own `read` only.
#[derive(Clone, Debug, PartialEq)]
struct Slow<T>(T);

impl<T: Holder> Holder for Slow<T> {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, DmError> {
        T::read(r, binary).map(Slow)
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), DmError> {
        self.0.write(w, binary)
    }
}

type Items<T> = Vec<Result<(String, T), Error>>;

/// The table's items through the fast path and through the holder's own `read`.
fn both<T: Holder>(rspecifier: &str) -> (Items<T>, Items<T>) {
    let fast: Items<T> = SequentialTableReader::<T>::open(rspecifier)
        .unwrap()
        .collect();
    let slow: Items<T> = SequentialTableReader::<Slow<T>>::open(rspecifier)
        .unwrap()
        .map(|item| item.map(|(key, Slow(value))| (key, value)))
        .collect();
    (fast, slow)
}

#[track_caller]
fn check<T: Holder + PartialEq + Debug>(rspecifier: &str) -> Items<T> {
    let (fast, slow) = both::<T>(rspecifier);
    assert_eq!(fast, slow, "{rspecifier}");
    fast
}

fn numbered(i: usize, rows: usize, cols: usize) -> Matrix<f32> {
    let data = (0..rows * cols)
        .map(|k| (i * 7919 + k) as f32 * 0.25 - 100.0)
        .collect();
    Matrix::from_vec(rows, cols, data).unwrap()
}

/// `key \0B` and the object as dense-matrix writes it.
fn entry(key: &str, write: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = format!("{key} \0B").into_bytes();
    write(&mut b);
    b
}

fn matrix_entry<R: dense_matrix::Real>(key: &str, m: &Matrix<R>) -> Vec<u8> {
    entry(key, |b| m.write_kaldi(b, true).unwrap())
}

fn vector_entry<R: dense_matrix::Real>(key: &str, v: &Vector<R>) -> Vec<u8> {
    entry(key, |b| v.write_kaldi(b, true).unwrap())
}

/// Reads `bytes` as an archive with each holder the fast path serves, and with the other
/// precision (which it leaves to the holder).
#[track_caller]
fn check_all_holders(dir: &Path, name: &str, bytes: &[u8]) {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let ark = format!("ark:{}", path.display());
    check::<Matrix<f32>>(&ark);
    check::<Matrix<f64>>(&ark);
    check::<Vector<f32>>(&ark);
    check::<Vector<f64>>(&ark);
    check::<AnyObject>(&ark);
}

#[test]
fn archives_cut_at_every_byte_read_as_the_holders_read_them() {
    let dir = scratch("cut");
    let mut bytes = Vec::new();
    bytes.extend(matrix_entry("m1", &numbered(1, 3, 4)));
    bytes.extend(matrix_entry("m0", &Matrix::<f32>::empty()));
    bytes.extend(matrix_entry("m2", &numbered(2, 2, 1)));
    bytes.extend(matrix_entry(
        "d1",
        &Matrix::from_rows(&[[0.1f64, -2.0], [1e300, 5.0]]),
    ));
    bytes.extend(vector_entry(
        "v1",
        &Vector::from_vec(vec![1.5f32, -2.5, 3.0]),
    ));
    bytes.extend(vector_entry("v0", &Vector::<f32>::empty()));
    bytes.extend(vector_entry("w1", &Vector::from_vec(vec![0.25f64, 1e-300])));
    // the whole archive: every value as written
    let path = dir.join("whole.ark");
    std::fs::write(&path, &bytes).unwrap();
    let items = check::<Matrix<f32>>(&format!("ark:{}", path.display()));
    // three float matrices, the double one converted, then the vector is an error
    assert_eq!(items.len(), 5);
    assert!(items[..4].iter().all(Result::is_ok) && items[4].is_err());
    assert!(items[0].as_ref().unwrap().1 == numbered(1, 3, 4));
    assert!(items[2].as_ref().unwrap().1 == numbered(2, 2, 1));
    for cut in 0..=bytes.len() {
        check_all_holders(&dir, "cut.ark", &bytes[..cut]);
    }
}

#[test]
fn large_matrices_headers_across_the_buffer_and_pipes() {
    let dir = scratch("large");
    // 700 x 100 floats: 280,000 bytes, more than one read piece (256 KiB); then many
    // small matrices whose headers fall at every place in the 4 KiB input buffer
    let mut bytes = Vec::new();
    let mut written = Vec::new();
    for i in 0..3 {
        let m = numbered(i, 700, 100);
        bytes.extend(matrix_entry(&format!("big{i}"), &m));
        written.push(m);
    }
    for i in 0..400 {
        let m = numbered(i, i % 37 + 1, i % 11 + 1);
        bytes.extend(matrix_entry(&format!("s{i}"), &m));
        written.push(m);
    }
    let path = dir.join("large.ark");
    std::fs::write(&path, &bytes).unwrap();
    for rspecifier in [
        format!("ark:{}", path.display()),
        format!("ark:cat {} |", path.display()),
    ] {
        check::<AnyObject>(&rspecifier);
        let items = check::<Matrix<f32>>(&rspecifier);
        assert_eq!(items.len(), written.len());
        for (item, want) in items.iter().zip(&written) {
            assert!(item.as_ref().unwrap().1 == *want, "{rspecifier}");
        }
    }
    // cut inside the first piece, at its end, inside the second, and one byte short
    let first = b"big0 \0BFM ".len() + 10;
    for cut in [
        first + 1000,
        first + (1 << 18),
        first + (1 << 18) + 1,
        first + 280_000 - 1,
    ] {
        check_all_holders(&dir, "cut.ark", &bytes[..cut]);
        let path = dir.join("cut.ark");
        check::<Matrix<f32>>(&format!("ark:cat {} |", path.display()));
    }
    // random access through an scp, new values each time
    let scp = dir.join("large.scp");
    let mut lines = String::new();
    let mut offset = 0;
    for (i, chunk) in [0usize, 1, 2].iter().enumerate() {
        let key = format!("big{chunk}");
        lines.push_str(&format!(
            "{key} {}:{}\n",
            path.display(),
            offset + key.len() + 1
        ));
        offset += matrix_entry(&key, &written[i]).len();
    }
    std::fs::write(&scp, lines).unwrap();
    let mut reader =
        RandomAccessTableReader::<Matrix<f32>>::open(&format!("scp:{}", scp.display())).unwrap();
    for i in [2, 0, 1] {
        assert!(reader.get(&format!("big{i}")).unwrap().unwrap() == written[i]);
    }
}

#[test]
fn hostile_headers_are_the_holders_errors() {
    let dir = scratch("hostile");
    for (name, object) in [
        (
            "rows",
            &b"FM \x04\xff\xff\xff\x7f\x04\x04\0\0\0\x01\x02"[..],
        ),
        ("square", b"FM \x04\xff\xff\xff\x7f\x04\xff\xff\xff\x7f\x01"),
        ("overflow", b"DM \x04\xff\xff\xff\x7f\x04\xff\xff\xff\x7f"),
        ("negative", b"FM \x04\xfe\xff\xff\xff\x04\x01\0\0\0"),
        ("half-empty", b"DM \x04\0\0\0\0\x04\x03\0\0\0"),
        ("size-byte", b"FM \x08\x01\0\0\0\x04\x01\0\0\0"),
        ("vector", b"FV \x04\xff\xff\xff\x7f\x01\x02\x03"),
        ("negative-vector", b"DV \x04\x00\x00\x00\x80"),
    ] {
        let bytes = entry("k", |b| b.extend_from_slice(object));
        check_all_holders(&dir, &format!("{name}.ark"), &bytes);
    }
    // what the holders say, for the first
    let path = dir.join("rows.ark");
    let items = check::<Matrix<f32>>(&format!("ark:{}", path.display()));
    match &items[..] {
        [Err(Error::Object { source, .. })] => assert_eq!(
            *source,
            DmError::UnexpectedEnd {
                reading: "the elements of a 2147483647 x 4 `FM` matrix".into(),
                needed: 2147483647 * 16,
                got: 2,
            }
        ),
        other => panic!("{other:?}"),
    }
}
