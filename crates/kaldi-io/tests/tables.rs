//! Kaldi's table semantics (options, pipes, scp writing) and every bad input of issue 15
//! as a named error: hand-built archives, each case one line.

use std::path::{Path, PathBuf};

use dense_matrix::{Error as DmError, Matrix, Vector};
use kaldi_io::{
    read_kaldi_object, write_kaldi_object, Error, Holder, RandomAccessTableReader,
    SequentialTableReader, TableWriter,
};

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kaldi-io-tables")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

/// `key \0B FV n x...` for a float vector.
fn fv_entry(key: &str, xs: &[f32]) -> Vec<u8> {
    let mut b = format!("{key} ").into_bytes();
    b.extend(b"\0BFV \x04");
    b.extend((xs.len() as i32).to_le_bytes());
    for x in xs {
        b.extend(x.to_le_bytes());
    }
    b
}

fn first_error<T: Holder>(rspecifier: &str) -> Error {
    SequentialTableReader::<T>::open(rspecifier)
        .unwrap()
        .find_map(Result::err)
        .expect("an error")
}

#[test]
fn truncated_archive_names_file_key_and_offset() {
    let dir = scratch("truncated");
    let full = std::fs::read("tests/golden/float_matrix.ark").unwrap();
    let ark = write_file(&dir, "cut.ark", &full[..40]);
    let err = first_error::<Matrix<f32>>(&format!("ark:{ark}"));
    assert_eq!(
        err,
        Error::Object {
            name: ark.clone(),
            key: Some("a".into()),
            offset: 2,
            source: DmError::UnexpectedEnd {
                reading: "the elements of a 3 x 4 `FM` matrix".into(),
                needed: 48,
                got: 40 - 17,
            },
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{ark}: key `a` at byte 2: unexpected end of data while reading the elements of a \
             3 x 4 `FM` matrix: it needs 48 bytes, 23 were there"
        )
    );
}

#[test]
fn hostile_sizes_are_errors_not_allocations() {
    let dir = scratch("hostile");
    let ark = write_file(
        &dir,
        "big.ark",
        b"k \0BFM \x04\xff\xff\xff\x7f\x04\x04\0\0\0",
    );
    match first_error::<Matrix<f32>>(&format!("ark:{ark}")) {
        Error::Object {
            key,
            offset,
            source,
            ..
        } => {
            assert_eq!((key.as_deref(), offset), (Some("k"), 2));
            assert_eq!(
                source,
                DmError::UnexpectedEnd {
                    reading: "the elements of a 2147483647 x 4 `FM` matrix".into(),
                    needed: 2147483647 * 16,
                    got: 0,
                }
            );
        }
        other => panic!("{other:?}"),
    }
    let neg = write_file(&dir, "neg.ark", b"k \0BFV \x04\xfe\xff\xff\xff");
    match first_error::<Vector<f32>>(&format!("ark:{neg}")) {
        Error::Object { source, .. } => assert_eq!(
            source,
            DmError::NegativeSize {
                what: "the dimension of a Kaldi vector",
                value: -2
            }
        ),
        other => panic!("{other:?}"),
    }
    let ali = write_file(&dir, "ali.ark", b"k \0B\x04\xff\xff\xff\xff");
    match first_error::<Vec<i32>>(&format!("ark:{ali}")) {
        Error::Object { source, .. } => assert_eq!(
            source,
            DmError::NegativeSize {
                what: "the length of an int32 vector",
                value: -1
            }
        ),
        other => panic!("{other:?}"),
    }
    // an int32 vector claiming 2^31 - 1 elements holds one: the end of data, not 8 GiB
    let long = write_file(&dir, "long.ark", b"k \0B\x04\xff\xff\xff\x7f\x04\x07\0\0\0");
    match first_error::<Vec<i32>>(&format!("ark:{long}")) {
        Error::Object { source, .. } => assert_eq!(
            source,
            DmError::UnexpectedEnd {
                reading: "an element of an int32 vector".into(),
                needed: 5,
                got: 0
            }
        ),
        other => panic!("{other:?}"),
    }
    let cm = write_file(
        &dir,
        "cm.ark",
        b"k \0BCM2 \0\0\0\0\0\0\x80?\xff\xff\xff\x7f\xff\xff\xff\x7f",
    );
    match first_error::<Matrix<f32>>(&format!("ark:{cm}")) {
        Error::Object { source, .. } => assert_eq!(
            source,
            DmError::UnexpectedEnd {
                reading: "the data of a 2147483647 x 2147483647 `CM2` matrix".into(),
                needed: 2 * 2147483647 * 2147483647,
                got: 0
            }
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn wrong_token_and_marker() {
    let dir = scratch("token");
    let ark = write_file(&dir, "a.ark", &fv_entry("v", &[1.0]));
    match first_error::<Matrix<f32>>(&format!("ark:{ark}")) {
        Error::Object { source, .. } => assert_eq!(
            source.to_string(),
            "expected the matrix token `FM ` or `DM `, found `FV `"
        ),
        other => panic!("{other:?}"),
    }
    let bad = write_file(&dir, "b.ark", b"v \0XFV ");
    match first_error::<Vector<f32>>(&format!("ark:{bad}")) {
        Error::Object { source, .. } => assert_eq!(
            source.to_string(),
            "expected the binary marker `\\0B`, found `\\0 then byte 88`"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_and_non_utf8_keys() {
    let dir = scratch("keys");
    let mut bytes = fv_entry("a", &[1.0]);
    bytes.extend(b"\n\0BFV \x04\0\0\0\0");
    let ark = write_file(&dir, "nokey.ark", &bytes);
    let err = first_error::<Vector<f32>>(&format!("ark:{ark}"));
    assert_eq!(
        err,
        Error::Archive {
            name: ark.clone(),
            offset: 17,
            reason: "expected a key, found `\\0BFV` (an object without its key?)".into(),
        }
    );
    let bad = write_file(
        &dir,
        "utf8.ark",
        &fv_entry("\u{e9}", &[])
            .iter()
            .map(|&b| if b == 0xc3 { 0xff } else { b })
            .collect::<Vec<u8>>(),
    );
    assert_eq!(
        first_error::<Vector<f32>>(&format!("ark:{bad}")),
        Error::Archive {
            name: bad.clone(),
            offset: 0,
            reason: "the key is not UTF-8: `\u{fffd}\u{fffd}`".into(),
        }
    );
    let good = write_file(&dir, "good.ark", &fv_entry("a", &[1.0]));
    let mut r = RandomAccessTableReader::<Vector<f32>>::open(&format!("ark:{good}")).unwrap();
    assert!(r.get("missing").unwrap().is_none());
    assert_eq!(r.get("a").unwrap().unwrap().data(), &[1.0]);
    let cut = write_file(&dir, "cut.ark", b"a");
    assert_eq!(
        first_error::<Vector<f32>>(&format!("ark:{cut}")),
        Error::Archive {
            name: cut.clone(),
            offset: 1,
            reason: "the archive ends after key `a`".into(),
        }
    );
}

fn archive(dir: &Path, name: &str, keys: &[&str]) -> String {
    let mut bytes = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        bytes.extend(fv_entry(k, &[i as f32]));
    }
    write_file(dir, name, &bytes)
}

#[test]
fn sorted_option_checks_order_and_stops_early() {
    let dir = scratch("sorted");
    let unsorted = archive(&dir, "u.ark", &["a", "c", "b"]);
    let mut r = RandomAccessTableReader::<Vector<f32>>::open(&format!("ark,s:{unsorted}")).unwrap();
    assert_eq!(r.get("a").unwrap().unwrap().data(), &[0.0]);
    // `c` comes first after `a`: with sorted keys, `bb` cannot follow
    assert!(r.get("bb").unwrap().is_none());
    assert_eq!(
        r.get("d").unwrap_err(),
        Error::KeyOrder {
            name: unsorted.clone(),
            previous: "c".into(),
            key: "b".into(),
            reason: "not sorted, but the `s` option says it is",
        }
    );
    // without `s` the same archive is fine, and every key is found
    let mut r = RandomAccessTableReader::<Vector<f32>>::open(&format!("ark:{unsorted}")).unwrap();
    assert_eq!(r.get("b").unwrap().unwrap().data(), &[2.0]);
    assert_eq!(r.get("a").unwrap().unwrap().data(), &[0.0]);
    let dup = archive(&dir, "d.ark", &["a", "a"]);
    for spec in [format!("ark:{dup}"), format!("ark,s:{dup}")] {
        let mut r = RandomAccessTableReader::<Vector<f32>>::open(&spec).unwrap();
        assert_eq!(
            r.get("z").unwrap_err(),
            Error::KeyOrder {
                name: dup.clone(),
                previous: "a".into(),
                key: "a".into(),
                reason: "duplicate key",
            }
        );
    }
    // `s` stops at the first larger key: the garbage after it is never read
    let mut bytes = std::fs::read(archive(&dir, "ok.ark", &["a", "c"])).unwrap();
    bytes.extend(b"d \0BFV \x04\xff\xff\xff\xff");
    let early = write_file(&dir, "early.ark", &bytes);
    let mut r = RandomAccessTableReader::<Vector<f32>>::open(&format!("ark,s:{early}")).unwrap();
    assert!(r.get("b").unwrap().is_none());
    assert_eq!(r.get("c").unwrap().unwrap().data(), &[1.0]);
    let mut r = RandomAccessTableReader::<Vector<f32>>::open(&format!("ark:{early}")).unwrap();
    assert!(matches!(r.get("b"), Err(Error::Object { key: Some(k), .. }) if k == "d"));
}

#[test]
fn called_sorted_once_and_permissive() {
    let dir = scratch("options");
    let ark = archive(&dir, "a.ark", &["a", "b", "c"]);
    let spec = format!("ark,cs:{ark}");
    let mut r = RandomAccessTableReader::<Vector<f32>>::open(&spec).unwrap();
    assert_eq!(r.get("b").unwrap().unwrap().data(), &[1.0]);
    assert_eq!(r.get("b").unwrap().unwrap().data(), &[1.0]);
    assert_eq!(
        r.get("a").unwrap_err(),
        Error::CalledOutOfOrder {
            rspecifier: spec.clone(),
            previous: "b".into(),
            key: "a".into(),
        }
    );
    // `o`: a value is handed out once and not kept
    let mut r = RandomAccessTableReader::<Vector<f32>>::open(&format!("ark,o:{ark}")).unwrap();
    assert_eq!(r.get("c").unwrap().unwrap().data(), &[2.0]);
    assert!(r.get("c").unwrap().is_none());
    assert_eq!(r.get("a").unwrap().unwrap().data(), &[0.0]);
    assert!(r.has_key("b").unwrap());
    assert_eq!(r.get("b").unwrap().unwrap().data(), &[1.0]);
    // `p`: scp entries that cannot be read are absent, not errors
    let scp = write_file(
        &dir,
        "p.scp",
        format!("a {ark}:2\nx {}/missing.ark\nc {ark}:34\n", dir.display()).as_bytes(),
    );
    let keys: Vec<String> = SequentialTableReader::<Vector<f32>>::open(&format!("scp,p:{scp}"))
        .unwrap()
        .map(|e| e.unwrap().0)
        .collect();
    assert_eq!(keys, ["a", "c"]);
    let mut r = RandomAccessTableReader::<Vector<f32>>::open(&format!("scp,p:{scp}")).unwrap();
    assert!(r.get("x").unwrap().is_none());
    assert_eq!(r.get("c").unwrap().unwrap().data(), &[2.0]);
    let missing = format!("{}/missing.ark", dir.display());
    match first_error::<Vector<f32>>(&format!("scp:{scp}")) {
        Error::Io { name, kind, .. } => {
            assert_eq!((name, kind), (missing, std::io::ErrorKind::NotFound))
        }
        other => panic!("{other:?}"),
    }
    // `p` on an archive: an error ends it quietly
    let mut bytes = std::fs::read(&ark).unwrap();
    bytes.extend(b"d \0BXX ");
    let bad = write_file(&dir, "bad.ark", &bytes);
    let keys: Vec<String> = SequentialTableReader::<Vector<f32>>::open(&format!("ark,p:{bad}"))
        .unwrap()
        .map(|e| e.unwrap().0)
        .collect();
    assert_eq!(keys, ["a", "b", "c"]);
}

#[test]
fn scp_errors() {
    let dir = scratch("scp");
    let ark = archive(&dir, "a.ark", &["a"]);
    let scp = write_file(&dir, "nospace.scp", b"utt1\n");
    let err = first_error::<Vector<f32>>(&format!("scp:{scp}"));
    assert_eq!(
        err,
        Error::ScpLine {
            name: scp.clone(),
            line: 1,
            text: "utt1".into(),
            reason: "expected `key rxfilename`, separated by a space",
        }
    );
    let len = std::fs::metadata(&ark).unwrap().len();
    let scp = write_file(&dir, "past.scp", format!("a {ark}:999\n").as_bytes());
    assert_eq!(
        first_error::<Vector<f32>>(&format!("scp:{scp}")),
        Error::OffsetPastEnd {
            name: ark.clone(),
            offset: 999,
            len
        }
    );
    let scp = write_file(
        &dir,
        "dup.scp",
        format!("a {ark}:2\na {ark}:2\n").as_bytes(),
    );
    assert_eq!(
        RandomAccessTableReader::<Vector<f32>>::open(&format!("scp:{scp}")).err(),
        Some(Error::KeyOrder {
            name: scp.clone(),
            previous: "a".into(),
            key: "a".into(),
            reason: "duplicate key",
        })
    );
    let scp = write_file(
        &dir,
        "unsorted.scp",
        format!("b {ark}:2\na {ark}:2\n").as_bytes(),
    );
    assert_eq!(
        RandomAccessTableReader::<Vector<f32>>::open(&format!("scp,s:{scp}")).err(),
        Some(Error::KeyOrder {
            name: scp.clone(),
            previous: "b".into(),
            key: "a".into(),
            reason: "not sorted, but the `s` option says it is",
        })
    );
    let scp = write_file(&dir, "range.scp", format!("a {ark}:2[0:4]\n").as_bytes());
    assert_eq!(
        first_error::<Vector<f32>>(&format!("scp:{scp}")),
        Error::Range {
            key: "a".into(),
            range: "0:4".into(),
            reason: "elements 0:4 do not fit a vector of dimension 1".into(),
        }
    );
    // up to 3 past the end is Kaldi's tolerance, clipped
    let scp = write_file(&dir, "tol.scp", format!("a {ark}:2[0:3]\n").as_bytes());
    let (_, v) = SequentialTableReader::<Vector<f32>>::open(&format!("scp:{scp}"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(v.data(), &[0.0]);
    // Kaldi defines no ranges for compressed matrices read as such
    let cm_scp = write_file(&dir, "cm.scp", b"u tests/golden/feats.ark:5[0:1]\n");
    assert_eq!(
        first_error::<dense_matrix::CompressedMatrix>(&format!("scp:{cm_scp}")),
        Error::Range {
            key: "u".into(),
            range: "0:1".into(),
            reason: "ranges are defined only for matrices and vectors".into(),
        }
    );
    let line = format!("a {ark}:2[0:1][2]");
    let scp = write_file(&dir, "badrange.scp", format!("{line}\n").as_bytes());
    assert_eq!(
        first_error::<Vector<f32>>(&format!("scp:{scp}")),
        Error::ScpLine {
            name: scp.clone(),
            line: 1,
            text: line,
            reason: "cannot make sense of the `[...]` range",
        }
    );
}

#[test]
fn pipes_in_and_out() {
    let dir = scratch("pipes");
    let direct: Vec<(String, Matrix<f32>)> =
        SequentialTableReader::open("ark:tests/golden/float_matrix.ark")
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    let piped: Vec<(String, Matrix<f32>)> =
        SequentialTableReader::open("ark:cat tests/golden/float_matrix.ark |")
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    assert_eq!(direct, piped);
    assert_eq!(
        first_error::<Matrix<f32>>("ark:exit 3 |"),
        Error::PipeFailed {
            command: "exit 3 ".into(),
            status: "exit status: 3".into(),
        }
    );
    assert_eq!(
        read_kaldi_object::<Matrix<f32>>("printf 'x' ; exit 4 |").unwrap_err(),
        Error::PipeFailed {
            command: "printf 'x' ; exit 4 ".into(),
            status: "exit status: 4".into(),
        }
    );
    let out = dir.join("out.ark");
    let mut w =
        TableWriter::<Matrix<f32>>::create(&format!("ark:| cat > {}", out.display())).unwrap();
    for (k, v) in &direct {
        w.write(k, v).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read("tests/golden/float_matrix.ark").unwrap()
    );
    let mut w = TableWriter::<i32>::create("ark:| exit 2").unwrap();
    let _ = w.write("k", &1);
    assert_eq!(
        w.finish().unwrap_err(),
        Error::PipeFailed {
            command: " exit 2".into(),
            status: "exit status: 2".into(),
        }
    );
}

#[test]
fn scp_wspecifier_writes_each_key_to_its_file() {
    let dir = scratch("scpwrite");
    let target = dir.join("a.vec");
    let scp = write_file(
        &dir,
        "w.scp",
        format!("a {}\n", target.display()).as_bytes(),
    );
    let v = Vector::from_vec(vec![1.5f32, -2.0]);
    let mut w = TableWriter::<Vector<f32>>::create(&format!("scp:{scp}")).unwrap();
    w.write("a", &v).unwrap();
    assert_eq!(
        w.write("z", &v).unwrap_err(),
        Error::KeyNotInScript {
            key: "z".into(),
            script: scp.clone()
        }
    );
    w.finish().unwrap();
    let back: Vector<f32> = read_kaldi_object(&target.display().to_string()).unwrap();
    assert_eq!(back.data(), v.data());
    let mut w = TableWriter::<Vector<f32>>::create(&format!("scp,p:{scp}")).unwrap();
    w.write("z", &v).unwrap();
    assert_eq!(
        std::fs::read(&target).unwrap()[..5],
        *b"\0BFV \x04"[..5].to_vec()
    );
}

#[test]
fn flush_option_and_keys() {
    let dir = scratch("flush");
    let v = Vector::from_vec(vec![1.0f32]);
    let flushed = dir.join("f.ark");
    let mut w =
        TableWriter::<Vector<f32>>::create(&format!("ark,f:{}", flushed.display())).unwrap();
    w.write("a", &v).unwrap();
    assert_eq!(std::fs::metadata(&flushed).unwrap().len(), 16);
    let buffered = dir.join("nf.ark");
    let mut w2 =
        TableWriter::<Vector<f32>>::create(&format!("ark,nf:{}", buffered.display())).unwrap();
    w2.write("a", &v).unwrap();
    assert_eq!(std::fs::metadata(&buffered).unwrap().len(), 0);
    assert_eq!(
        w2.write("a b", &v).unwrap_err(),
        Error::InvalidKey { key: "a b".into() }
    );
    assert_eq!(
        w2.write("", &v).unwrap_err(),
        Error::InvalidKey { key: "".into() }
    );
    drop(w2); // Drop flushes, as Kaldi's destructor does
    assert_eq!(std::fs::metadata(&buffered).unwrap().len(), 16);
    w.finish().unwrap();
    assert!(matches!(
        TableWriter::<i32>::create("ark,scp:x.ark"),
        Err(Error::Wspecifier { .. })
    ));
    assert!(matches!(
        SequentialTableReader::<i32>::open("foo.ark"),
        Err(Error::Rspecifier { .. })
    ));
}

#[test]
fn single_objects_with_ranges() {
    let dir = scratch("objects");
    let m = Matrix::from_rows(&[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let path = dir.join("m.mat").display().to_string();
    write_kaldi_object(&path, &m, true).unwrap();
    assert_eq!(read_kaldi_object::<Matrix<f64>>(&path).unwrap(), m);
    let part: Matrix<f64> = read_kaldi_object(&format!("{path}[1:1,1:2]")).unwrap();
    assert_eq!(part, Matrix::from_rows(&[[5.0, 6.0]]));
    write_kaldi_object(&path, &m, false).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        " [\n  1 2 3 \n  4 5 6 ]\n"
    );
    assert_eq!(read_kaldi_object::<Matrix<f64>>(&path).unwrap(), m);
    let from_offset: Matrix<f32> = read_kaldi_object("tests/golden/feats.ark:265").unwrap();
    assert_eq!(from_offset.shape(), (10, 6));
}

mod hostile_bytes {
    use proptest::prelude::*;

    use super::*;

    /// Reads `bytes` with holder `T` in both modes: a value or an error, never a panic.
    fn read_any<T: Holder>(bytes: &[u8]) {
        for binary in [true, false] {
            let _ = T::read(&mut &bytes[..], binary);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(17),
            ..ProptestConfig::default()
        })]

        /// Arbitrary bytes after each token a holder accepts, through every holder and
        /// through a whole archive: errors, never panics or huge allocations.
        #[test]
        fn holders_and_archives_never_panic(
            prefix in prop::sample::select(vec![
                &b""[..], b"FM ", b"DM ", b"FV ", b"DV ", b"CM ", b"CM2 ", b"CM3 ",
                b"\x04", b"\x04\x02\0\0\0", b"[ ", b" [\n", b"T",
            ]),
            tail in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut bytes = prefix.to_vec();
            bytes.extend(&tail);
            read_any::<Matrix<f32>>(&bytes);
            read_any::<Matrix<f64>>(&bytes);
            read_any::<Vector<f32>>(&bytes);
            read_any::<Vector<f64>>(&bytes);
            read_any::<dense_matrix::CompressedMatrix>(&bytes);
            read_any::<i32>(&bytes);
            read_any::<f32>(&bytes);
            read_any::<f64>(&bytes);
            read_any::<bool>(&bytes);
            read_any::<Vec<i32>>(&bytes);
            read_any::<Vec<Vec<i32>>>(&bytes);
            read_any::<Vec<(i32, i32)>>(&bytes);
            read_any::<String>(&bytes);
            read_any::<Vec<String>>(&bytes);
            read_any::<kaldi_io::Posterior>(&bytes);
            let dir = scratch("hostile_bytes");
            let mut archive = b"k \0B".to_vec();
            archive.extend(&bytes);
            let ark = write_file(&dir, "h.ark", &archive);
            for entry in SequentialTableReader::<Matrix<f32>>::open(&format!("ark:{ark}")).unwrap() {
                let _ = entry;
            }
            let mut r = RandomAccessTableReader::<Vec<i32>>::open(&format!("ark:{ark}")).unwrap();
            let _ = r.get("z");
        }
    }
}

#[test]
fn compressed_matrix_text_form_is_the_float_matrix() {
    let dir = scratch("cm_text");
    let m = Matrix::from_rows(&[[0.0f32, 1.0], [2.0, 4.0]]);
    // integers are exact under TwoByteSignedInteger, so the text shows them unchanged
    let cm = dense_matrix::CompressedMatrix::compress(
        &m,
        dense_matrix::CompressionMethod::TwoByteSignedInteger,
    )
    .unwrap();
    let path = dir.join("cm.txt").display().to_string();
    write_kaldi_object(&path, &cm, false).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        " [\n  0 1 \n  2 4 ]\n"
    );
    // Kaldi reads text into a CompressedMatrix by compressing with the automatic method
    let back: dense_matrix::CompressedMatrix = read_kaldi_object(&path).unwrap();
    let auto = dense_matrix::CompressedMatrix::compress(&m, dense_matrix::CompressionMethod::Auto)
        .unwrap();
    assert_eq!((back.token(), &back), ("CM2", &auto));
}

/// An scp interleaving entries of more archives than the reader keeps open: every value is
/// the one its archive holds, read in the script's order and by key in another order.
#[test]
fn scp_into_many_archives_reads_each_entry_from_its_own() {
    let dir = scratch("many_archives");
    let n_archives = 40; // more than the reader keeps open at once
    let mut scp = String::new();
    let mut want = Vec::new();
    for round in 0..3 {
        for a in 0..n_archives {
            let key = format!("k{a:02}_{round}");
            let value = [a as f32, round as f32, -1.5];
            // each archive gets one more entry per round: offsets differ per archive
            let path = dir.join(format!("a{a:02}.ark"));
            let mut bytes = std::fs::read(&path).unwrap_or_default();
            let offset = bytes.len() + key.len() + 1;
            bytes.extend(fv_entry(&key, &value));
            std::fs::write(&path, &bytes).unwrap();
            scp.push_str(&format!("{key} {}:{offset}\n", path.display()));
            want.push((key, value.to_vec()));
        }
    }
    let scp = write_file(&dir, "all.scp", scp.as_bytes());
    let got: Vec<(String, Vec<f32>)> =
        SequentialTableReader::<Vector<f32>>::open(&format!("scp:{scp}"))
            .unwrap()
            .map(|e| e.map(|(k, v)| (k, v.data().to_vec())))
            .collect::<Result<_, _>>()
            .unwrap();
    assert_eq!(got, want);
    let mut reader = RandomAccessTableReader::<Vector<f32>>::open(&format!("scp:{scp}")).unwrap();
    for (key, value) in want.iter().rev().step_by(7).chain(want.iter().step_by(5)) {
        assert_eq!(
            reader.get(key).unwrap().unwrap().data(),
            &value[..],
            "{key}"
        );
    }
}

/// A data file that grows while a script is read (an archive still being written): an
/// offset past the length seen at opening is checked against the file's length again.
#[test]
fn scp_offset_into_a_grown_archive_is_read() {
    let dir = scratch("grown");
    let first = fv_entry("a", &[1.0]);
    let ark = write_file(&dir, "g.ark", &first);
    let second_offset = first.len() + 2;
    let scp = write_file(
        &dir,
        "g.scp",
        format!("a {ark}:2\nb {ark}:{second_offset}\nc {ark}:999\n").as_bytes(),
    );
    let mut reader = SequentialTableReader::<Vector<f32>>::open(&format!("scp:{scp}")).unwrap();
    assert_eq!(reader.next().unwrap().unwrap().1.data(), &[1.0]);
    let mut grown = first.clone();
    grown.extend(fv_entry("b", &[2.0, 3.0]));
    std::fs::write(&ark, &grown).unwrap();
    let (key, value) = reader.next().unwrap().unwrap();
    assert_eq!((key.as_str(), value.data()), ("b", &[2.0f32, 3.0][..]));
    assert_eq!(
        reader.next().unwrap().unwrap_err(),
        Error::OffsetPastEnd {
            name: ark,
            offset: 999,
            len: grown.len() as u64
        }
    );
}
