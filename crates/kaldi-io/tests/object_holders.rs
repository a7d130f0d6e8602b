//! Tables of packed (`SpMatrix`, `TpMatrix`), sparse (`SparseVector`, `SparseMatrix`) and
//! `GeneralMatrix` values: archives written here equal bytes built by hand from Kaldi's
//! binary format (token, then each int32 as a size byte 4 and little-endian bytes, each
//! float as a size byte 4 and its bytes), read back through both readers, and text
//! archives round-trip.

use std::path::PathBuf;

use dense_matrix::{GeneralMatrix, Matrix, SpMatrix, SparseMatrix, SparseVector, TpMatrix};
use kaldi_io::{Holder, RandomAccessTableReader, SequentialTableReader, TableWriter};

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kaldi-io-object-holders")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn int(b: &mut Vec<u8>, v: i32) {
    b.push(4);
    b.extend(v.to_le_bytes());
}

fn float(b: &mut Vec<u8>, v: f32) {
    b.push(4);
    b.extend(v.to_le_bytes());
}

/// Kaldi's binary `SV`: dim, count, then (index, value) pairs.
fn sv_bytes(dim: i32, pairs: &[(i32, f32)]) -> Vec<u8> {
    let mut b = b"SV ".to_vec();
    int(&mut b, dim);
    int(&mut b, pairs.len() as i32);
    for &(i, v) in pairs {
        int(&mut b, i);
        float(&mut b, v);
    }
    b
}

fn write_all<T: Holder>(wspecifier: &str, items: &[(&str, T)]) {
    let mut w = TableWriter::<T>::create(wspecifier).unwrap();
    for (k, v) in items {
        w.write(k, v).unwrap();
    }
    w.finish().unwrap();
}

fn read_all<T: Holder>(rspecifier: &str) -> Vec<(String, T)> {
    SequentialTableReader::<T>::open(rspecifier)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn sparse_matrix() -> SparseMatrix<f32> {
    let row0 = SparseVector::from_pairs(3, vec![(1, 0.5), (2, -2.0)]).unwrap();
    let row1 = SparseVector::new(3);
    SparseMatrix::from_rows(3, vec![row0, row1]).unwrap()
}

#[test]
fn packed_archive_bytes_are_kaldis() {
    let dir = scratch("packed");
    let ark = dir.join("sp.ark").display().to_string();
    // [[1, 2], [2, 3]] as a packed lower triangle: 1; 2 3
    let sp = SpMatrix::<f32>::from_packed(2, vec![1.0, 2.0, 3.0]).unwrap();
    write_all(&format!("ark:{ark}"), &[("utt1", sp.clone())]);
    let mut want = b"utt1 \0BFP ".to_vec();
    int(&mut want, 2);
    for x in [1.0f32, 2.0, 3.0] {
        want.extend(x.to_le_bytes());
    }
    assert_eq!(std::fs::read(&ark).unwrap(), want);
    assert_eq!(
        read_all::<SpMatrix<f32>>(&format!("ark:{ark}")),
        vec![("utt1".to_string(), sp.clone())]
    );
    // read in double precision, as Kaldi's Read converts
    let sp64 = read_all::<SpMatrix<f64>>(&format!("ark:{ark}"));
    assert_eq!(sp64[0].1.data(), &[1.0, 2.0, 3.0]);
    // a triangular matrix has the same on-disk form
    let tp = read_all::<TpMatrix<f32>>(&format!("ark:{ark}"));
    assert_eq!(tp[0].1.data(), &[1.0, 2.0, 3.0]);
    // random access through an scp written beside the archive
    let scp = dir.join("sp.scp").display().to_string();
    write_all(
        &format!("ark,scp:{ark},{scp}"),
        &[
            ("a", sp.clone()),
            ("b", SpMatrix::from_packed(1, vec![7.0]).unwrap()),
        ],
    );
    let mut ra = RandomAccessTableReader::<SpMatrix<f32>>::open(&format!("scp:{scp}")).unwrap();
    assert_eq!(ra.get("b").unwrap().unwrap().data(), &[7.0]);
    assert_eq!(ra.get("a").unwrap().unwrap(), sp);
    assert_eq!(ra.get("c").unwrap(), None);
}

#[test]
fn sparse_archive_bytes_are_kaldis() {
    let dir = scratch("sparse");
    let ark = dir.join("sm.ark").display().to_string();
    let sm = sparse_matrix();
    write_all(&format!("ark:{ark}"), &[("x", sm.clone())]);
    let mut want = b"x \0BSM ".to_vec();
    int(&mut want, 2);
    want.extend(sv_bytes(3, &[(1, 0.5), (2, -2.0)]));
    want.extend(sv_bytes(3, &[]));
    assert_eq!(std::fs::read(&ark).unwrap(), want);
    assert_eq!(
        read_all::<SparseMatrix<f32>>(&format!("ark:{ark}")),
        vec![("x".to_string(), sm.clone())]
    );

    // a GeneralMatrix table reads the sparse object as sparse, a full one as full
    let full = Matrix::<f32>::from_vec(1, 2, vec![1.5, -1.0]).unwrap();
    let ark2 = dir.join("fm.ark").display().to_string();
    write_all(&format!("ark:{ark2}"), &[("y", full.clone())]);
    match &read_all::<GeneralMatrix<f32>>(&format!("ark:{ark}"))[0].1 {
        GeneralMatrix::Sparse(s) => assert_eq!(s, &sm),
        other => panic!("expected a sparse GeneralMatrix, got {other:?}"),
    }
    match &read_all::<GeneralMatrix<f32>>(&format!("ark:{ark2}"))[0].1 {
        GeneralMatrix::Full(m) => assert_eq!(m, &full),
        other => panic!("expected a full GeneralMatrix, got {other:?}"),
    }

    let ark3 = dir.join("sv.ark").display().to_string();
    let sv = SparseVector::<f32>::from_pairs(5, vec![(4, 1.25), (0, 3.0)]).unwrap();
    write_all(&format!("ark:{ark3}"), &[("v", sv.clone())]);
    let mut want = b"v \0B".to_vec();
    want.extend(sv_bytes(5, &[(0, 3.0), (4, 1.25)]));
    assert_eq!(std::fs::read(&ark3).unwrap(), want);
    assert_eq!(
        read_all::<SparseVector<f32>>(&format!("ark:{ark3}"))[0].1,
        sv
    );
}

#[test]
fn text_archives_round_trip() {
    let dir = scratch("text");
    let sp = SpMatrix::<f64>::from_packed(3, vec![1.0, -2.5, 3.0, 0.125, 4.0, 5.0]).unwrap();
    let sm = sparse_matrix();
    let sv = SparseVector::<f64>::from_pairs(4, vec![(2, 0.75)]).unwrap();
    let ark = |name: &str| format!("ark,t:{}", dir.join(name).display());
    write_all(&ark("sp"), &[("a", sp.clone()), ("b", sp.clone())]);
    assert_eq!(
        read_all::<SpMatrix<f64>>(&ark("sp")),
        vec![("a".into(), sp.clone()), ("b".into(), sp)]
    );
    write_all(
        &ark("sm"),
        &[("a", sm.clone()), ("b", SparseMatrix::new(0, 3))],
    );
    let back = read_all::<SparseMatrix<f32>>(&ark("sm"));
    assert_eq!(back[0], ("a".to_string(), sm));
    assert_eq!(back[1].1.num_rows(), 0);
    write_all(&ark("sv"), &[("a", sv.clone()), ("b", sv.clone())]);
    assert_eq!(
        read_all::<SparseVector<f64>>(&ark("sv")),
        vec![("a".into(), sv.clone()), ("b".into(), sv)]
    );
}

#[test]
fn a_truncated_packed_object_is_an_error_naming_the_key() {
    let dir = scratch("truncated");
    let path = dir.join("cut.ark");
    let mut bytes = b"good \0BFP ".to_vec();
    int(&mut bytes, 1);
    bytes.extend(2.0f32.to_le_bytes());
    bytes.extend(b"bad \0BFP ");
    int(&mut bytes, 1000);
    bytes.extend(1.0f32.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    let mut r =
        SequentialTableReader::<SpMatrix<f32>>::open(&format!("ark:{}", path.display())).unwrap();
    assert_eq!(r.next().unwrap().unwrap().0, "good");
    let err = r.next().unwrap().unwrap_err().to_string();
    assert!(err.contains("bad"), "the error names the key: {err}");
    assert!(r.next().is_none());
}
