//! The `bg` option: a sequential reader that reads ahead in a background thread gives the
//! same items, values and errors alike, in the same order, as the plain reader (which the
//! golden and table tests check against Kaldi's own files).

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use dense_matrix::{CompressedMatrix, Error as DmError, Matrix, Vector};
use kaldi_io::{Error, Holder, Posterior, SequentialTableReader};
use proptest::prelude::*;

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kaldi-io-background")
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

type Items<T> = Vec<Result<(String, T), Error>>;

/// Every item of `rspecifier`, then two more calls that must give `None`.
fn all_items<T: Holder>(rspecifier: &str) -> Items<T> {
    let mut reader = SequentialTableReader::<T>::open(rspecifier).unwrap();
    let items: Items<T> = reader.by_ref().collect();
    assert!(reader.next().is_none() && reader.next().is_none());
    items
}

/// `bg` inserted into `rspecifier` (`ark:x` -> `ark,bg:x`) gives the plain items.
#[track_caller]
fn check_same<T: Holder + PartialEq + Debug>(rspecifier: &str) -> Items<T> {
    let (kind, rest) = rspecifier.split_once(':').unwrap();
    let plain = all_items::<T>(rspecifier);
    let bg = all_items::<T>(&format!("{kind},bg:{rest}"));
    assert_eq!(bg, plain, "{rspecifier}");
    plain
}

#[test]
fn golden_tables_read_the_same_in_the_background() {
    let g = "tests/golden";
    assert_eq!(
        check_same::<Matrix<f32>>(&format!("ark:{g}/float_matrix.ark")).len(),
        4
    );
    check_same::<Matrix<f64>>(&format!("ark:{g}/double_matrix_t.ark"));
    check_same::<Matrix<f32>>(&format!("ark:{g}/compressed.ark"));
    check_same::<CompressedMatrix>(&format!("ark:{g}/compressed.ark"));
    check_same::<Vector<f32>>(&format!("ark:{g}/float_vector.ark"));
    check_same::<Vec<Vec<i32>>>(&format!("ark:{g}/int32_vector_vector.ark"));
    check_same::<Posterior>(&format!("ark:{g}/posterior_t.ark"));
    check_same::<Vec<String>>(&format!("ark:{g}/token_vector.ark"));
    let feats = check_same::<Matrix<f32>>(&format!("scp:{g}/feats.scp"));
    assert!(!feats.is_empty() && feats.iter().all(Result::is_ok));
    check_same::<Matrix<f32>>(&format!("scp:{g}/ranges.scp"));
    check_same::<Matrix<f32>>(&format!("ark:cat {g}/float_matrix.ark |"));
}

/// `key \0B` and an int32 vector.
fn int_vector_entry(key: &str, xs: &[i32]) -> Vec<u8> {
    let mut b = format!("{key} \0B\x04").into_bytes();
    b.extend((xs.len() as i32).to_le_bytes());
    for x in xs {
        b.push(4);
        b.extend(x.to_le_bytes());
    }
    b
}

#[test]
fn errors_come_in_order_and_end_the_table() {
    let dir = scratch("errors");
    let mut bytes = Vec::new();
    for (i, key) in ["a", "b", "c"].iter().enumerate() {
        bytes.extend(int_vector_entry(key, &[i as i32; 3]));
    }
    let good = bytes.len();
    bytes.extend(int_vector_entry("d", &[7, 8]));
    let ark = write_file(&dir, "cut.ark", &bytes[..bytes.len() - 3]);
    let items = check_same::<Vec<i32>>(&format!("ark:{ark}"));
    assert_eq!(items.len(), 4);
    assert_eq!(items[2], Ok(("c".to_string(), vec![2, 2, 2])));
    assert_eq!(
        items[3],
        Err(Error::Object {
            name: ark.clone(),
            key: Some("d".into()),
            offset: good as u64 + 2,
            source: DmError::UnexpectedEnd {
                reading: "an element of an int32 vector".into(),
                needed: 5,
                got: 2,
            },
        })
    );
    // `p`: the error ends the archive quietly, in the background as in the foreground
    assert_eq!(check_same::<Vec<i32>>(&format!("ark,p:{ark}")).len(), 3);
    // scp: a bad entry in the middle stops the table there; with `p` it is skipped
    let scp = write_file(
        &dir,
        "mid.scp",
        format!("a {ark}:2\nz {ark}:99999\nb {ark}:{}\n", good / 3 + 2).as_bytes(),
    );
    let items = check_same::<Vec<i32>>(&format!("scp:{scp}"));
    assert_eq!(items.len(), 2);
    assert_eq!(
        items[1],
        Err(Error::OffsetPastEnd {
            name: ark.clone(),
            offset: 99999,
            len: (bytes.len() - 3) as u64,
        })
    );
    let keys: Vec<String> = check_same::<Vec<i32>>(&format!("scp,p:{scp}"))
        .into_iter()
        .map(|item| item.unwrap().0)
        .collect();
    assert_eq!(keys, ["a", "b"]);
}

/// A reader dropped part-way stops its thread (the next hand-over fails) without
/// blocking the caller.
#[test]
fn dropping_a_background_reader_part_way_returns() {
    let dir = scratch("drop");
    let mut bytes = Vec::new();
    for i in 0..200 {
        bytes.extend(int_vector_entry(&format!("k{i}"), &[i; 100]));
    }
    let ark = write_file(&dir, "long.ark", &bytes);
    for rspecifier in [format!("ark,bg:{ark}"), format!("ark,bg:cat {ark} |")] {
        let mut reader = SequentialTableReader::<Vec<i32>>::open(&rspecifier).unwrap();
        assert_eq!(reader.next().unwrap().unwrap().0, "k0");
        drop(reader);
    }
}

/// An int32 whose reading is logged with the reading thread, to see where and when the
/// values are read.
#[derive(Clone, Debug, PartialEq)]
struct Probe(i32);

static READS: std::sync::Mutex<Vec<(i32, Option<String>)>> = std::sync::Mutex::new(Vec::new());

impl Holder for Probe {
    fn read<R: std::io::BufRead>(r: &mut R, binary: bool) -> Result<Self, DmError> {
        let v = i32::read(r, binary)?;
        let thread = std::thread::current().name().map(str::to_string);
        READS.lock().unwrap().push((v, thread));
        Ok(Probe(v))
    }

    fn write<W: std::io::Write>(&self, w: &mut W, binary: bool) -> Result<(), DmError> {
        self.0.write(w, binary)
    }
}

/// The values are read in the `kaldi-io-bg` thread, and the next one is read before the
/// caller asks for it; without `bg` they are read in the caller's thread, on demand.
#[test]
fn background_reader_reads_ahead_in_its_own_thread() {
    let dir = scratch("ahead");
    let mut bytes = Vec::new();
    for i in 0..4 {
        bytes.extend(format!("k{i} \0B\x04").into_bytes());
        bytes.extend((1000i32 + i).to_le_bytes());
    }
    let ark = write_file(&dir, "probe.ark", &bytes);
    let me = std::thread::current().name().map(str::to_string);
    // plain: one read per call, here
    let mut plain = SequentialTableReader::<Probe>::open(&format!("ark:{ark}")).unwrap();
    READS.lock().unwrap().clear();
    assert_eq!(plain.next().unwrap().unwrap().1, Probe(1000));
    assert_eq!(*READS.lock().unwrap(), [(1000, me.clone())]);
    drop(plain);
    // bg: the second value is read while the caller holds the first
    READS.lock().unwrap().clear();
    let mut bg = SequentialTableReader::<Probe>::open(&format!("ark,bg:{ark}")).unwrap();
    assert_eq!(bg.next().unwrap().unwrap().1, Probe(1000));
    let mut waited = 0;
    while READS.lock().unwrap().len() < 2 {
        // a bound, not a timing: the read-ahead happens at once on any machine
        assert!(waited < 10_000, "the second value was not read ahead");
        std::thread::sleep(std::time::Duration::from_millis(1));
        waited += 1;
    }
    let values: Vec<i32> = bg.map(|item| item.unwrap().1 .0).collect();
    assert_eq!(values, [1001, 1002, 1003]);
    let reads = READS.lock().unwrap().clone();
    assert_eq!(
        reads.iter().map(|r| r.0).collect::<Vec<_>>(),
        [1000, 1001, 1002, 1003]
    );
    assert!(
        reads.iter().all(|r| r.1.as_deref() == Some("kaldi-io-bg")),
        "{reads:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(23),
        ..ProptestConfig::default()
    })]

    /// Random archives cut at a random byte, read as `ark` and through an scp, with and
    /// without `p`: the background reader's items equal the plain reader's.
    #[test]
    fn background_items_equal_plain_items(
        lengths in proptest::collection::vec(0usize..40, 0..12),
        cut in any::<prop::sample::Index>(),
        permissive in any::<bool>(),
    ) {
        let dir = scratch("prop");
        let mut bytes = Vec::new();
        let mut scp = String::new();
        for (i, &n) in lengths.iter().enumerate() {
            let key = format!("u{i}");
            scp.push_str(&format!("{key} ARK:{}\n", bytes.len() + key.len() + 1));
            bytes.extend(int_vector_entry(&key, &vec![i as i32 - 5; n]));
        }
        let keep = if bytes.is_empty() { 0 } else { cut.index(bytes.len() + 1) };
        let ark = write_file(&dir, "r.ark", &bytes[..keep]);
        let scp = write_file(&dir, "r.scp", scp.replace("ARK", &ark).as_bytes());
        let p = if permissive { "p," } else { "" };
        check_same::<Vec<i32>>(&format!("ark,{p}t:{ark}"));
        check_same::<Vec<i32>>(&format!("scp,{p}t:{scp}"));
    }
}
