//! Reading into the caller's value: `SequentialTableReader::next_into` and
//! `RandomAccessTableReader::get_into` give the same keys, values and errors as the
//! iterator and `get` (which the golden and table tests check against Kaldi's own files),
//! and a matrix of no fewer elements is read over in place, not reallocated.

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use dense_matrix::{Matrix, Vector};
use kaldi_io::TableWriter;
use kaldi_io::{Error, Holder, Posterior, RandomAccessTableReader, SequentialTableReader};
use proptest::prelude::*;

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kaldi-io-read-into")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

type Items<T> = Vec<Result<(String, T), Error>>;

/// Every item through `next_into` into one value (cloned after each read), then two more
/// calls that must give `None`.
fn items_into<T: Holder>(rspecifier: &str, mut value: T) -> Items<T> {
    let mut reader = SequentialTableReader::<T>::open(rspecifier).unwrap();
    let mut items = Vec::new();
    loop {
        match reader.next_into(&mut value) {
            Ok(Some(key)) => items.push(Ok((key, value.clone()))),
            Ok(None) => break,
            Err(e) => items.push(Err(e)),
        }
    }
    assert_eq!(reader.next_into(&mut value).unwrap(), None);
    assert_eq!(reader.next_into(&mut value).unwrap(), None);
    items
}

/// `next_into` from `start`, plain and with `bg`, gives the iterator's items.
#[track_caller]
fn check_same<T: Holder + PartialEq + Debug>(rspecifier: &str, start: T) -> Items<T> {
    let (kind, rest) = rspecifier.split_once(':').unwrap();
    let plain: Items<T> = SequentialTableReader::<T>::open(rspecifier)
        .unwrap()
        .collect();
    assert_eq!(items_into(rspecifier, start.clone()), plain, "{rspecifier}");
    let bg = format!("{kind},bg:{rest}");
    assert_eq!(items_into(&bg, start), plain, "{bg}");
    plain
}

#[test]
fn golden_tables_read_into_one_value_as_the_iterator_reads_them() {
    let g = "tests/golden";
    let big = Matrix::<f32>::new(40, 9);
    assert_eq!(
        check_same(&format!("ark:{g}/float_matrix.ark"), Matrix::<f32>::empty()).len(),
        4
    );
    check_same(&format!("ark:{g}/float_matrix.ark"), big.clone());
    check_same(
        &format!("ark:{g}/double_matrix.ark"),
        Matrix::<f64>::empty(),
    );
    check_same(
        &format!("ark:{g}/double_matrix_t.ark"),
        Matrix::<f64>::new(3, 3),
    );
    check_same(&format!("ark:{g}/compressed.ark"), big.clone());
    check_same(&format!("ark:{g}/float_vector.ark"), Vector::<f32>::new(50));
    check_same(
        &format!("ark:{g}/double_vector_t.ark"),
        Vector::<f64>::empty(),
    );
    check_same(
        &format!("ark:{g}/int32_vector_vector.ark"),
        vec![vec![7i32]],
    );
    check_same(&format!("ark:{g}/posterior_t.ark"), Posterior::new());
    check_same(&format!("ark:{g}/token_vector.ark"), vec!["x".to_string()]);
    let feats = check_same(&format!("scp:{g}/feats.scp"), big.clone());
    assert!(!feats.is_empty() && feats.iter().all(Result::is_ok));
    check_same(&format!("scp:{g}/ranges.scp"), big.clone());
    check_same(&format!("ark:cat {g}/float_matrix.ark |"), big);
}

/// Writes `matrices` as `ark,scp:` under `dir`; returns the archive and script paths.
fn write_table(dir: &Path, matrices: &[(String, Matrix<f32>)]) -> (String, String) {
    let (ark, scp) = (dir.join("m.ark"), dir.join("m.scp"));
    let (ark, scp) = (ark.display().to_string(), scp.display().to_string());
    let mut w = TableWriter::<Matrix<f32>>::create(&format!("ark,scp:{ark},{scp}")).unwrap();
    for (key, m) in matrices {
        w.write(key, m).unwrap();
    }
    w.finish().unwrap();
    (ark, scp)
}

/// Matrix `i` of `rows x cols` with elements that name their place.
fn numbered(i: usize, rows: usize, cols: usize) -> Matrix<f32> {
    let data = (0..rows * cols)
        .map(|k| (i * 1000 + k) as f32 * 0.5 - 3.0)
        .collect();
    Matrix::from_vec(rows, cols, data).unwrap()
}

#[test]
fn a_matrix_of_no_fewer_elements_is_read_over_in_place() {
    let dir = scratch("in-place");
    // the same size, smaller, larger, back: a value that first holds the largest keeps
    // its memory throughout
    let shapes = [(30, 8), (30, 8), (5, 3), (1, 1), (0, 0), (12, 20), (30, 8)];
    let matrices: Vec<(String, Matrix<f32>)> = shapes
        .iter()
        .enumerate()
        .map(|(i, &(r, c))| (format!("u{i}"), numbered(i, r, c)))
        .collect();
    let (ark, scp) = write_table(&dir, &matrices);
    for rspecifier in [format!("ark:{ark}"), format!("scp:{scp}")] {
        let mut reader = SequentialTableReader::<Matrix<f32>>::open(&rspecifier).unwrap();
        let mut value = Matrix::<f32>::new(30, 8);
        let memory = value.as_ptr();
        for (key, want) in &matrices {
            assert_eq!(
                reader.next_into(&mut value).unwrap().as_deref(),
                Some(&key[..])
            );
            assert!(value == *want, "{rspecifier} {key}");
            if value.num_rows() > 0 {
                assert_eq!(value.as_ptr(), memory, "{rspecifier} {key} was reallocated");
            }
        }
        assert_eq!(reader.next_into(&mut value).unwrap(), None);
    }
    // random access through the scp, in another order, with a key that is not there
    let mut reader = RandomAccessTableReader::<Matrix<f32>>::open(&format!("scp:{scp}")).unwrap();
    let mut value = Matrix::<f32>::new(30, 8);
    let memory = value.as_ptr();
    for i in [6, 2, 0, 5, 3, 1, 4] {
        let (key, want) = &matrices[i];
        assert!(reader.get_into(key, &mut value).unwrap());
        assert!(value == *want, "{key}");
        if value.num_rows() > 0 {
            assert_eq!(value.as_ptr(), memory, "{key} was reallocated");
        }
    }
    let before = value.clone();
    assert!(!reader.get_into("nope", &mut value).unwrap());
    assert!(value == before, "a missing key leaves the value as it was");
}

#[test]
fn get_into_gives_what_get_gives_with_every_option() {
    let dir = scratch("get-into");
    let matrices: Vec<(String, Matrix<f32>)> = (0..6)
        .map(|i| (format!("k{i}"), numbered(i, 2 + i, 3)))
        .collect();
    let (ark, scp) = write_table(&dir, &matrices);
    let asks = ["k3", "k0", "k9", "k3", "k5", "k1", "k4", "k2", "k2"];
    let sorted_asks = ["k0", "k1", "k1", "k2", "k4", "k5", "k7"];
    for (options, keys) in [
        ("", &asks[..]),
        ("s,", &asks[..]),
        ("o,", &["k4", "k1", "k0", "k8", "k5"][..]),
        ("s,cs,", &sorted_asks[..]),
        ("p,", &asks[..]),
    ] {
        for table in [format!("ark:{ark}"), format!("scp:{scp}")] {
            let (kind, path) = table.split_once(':').unwrap();
            let rspecifier = format!("{kind},{options}:{path}").replace(",:", ":");
            let mut by_get = RandomAccessTableReader::<Matrix<f32>>::open(&rspecifier).unwrap();
            let mut by_into = RandomAccessTableReader::<Matrix<f32>>::open(&rspecifier).unwrap();
            let mut value = Matrix::empty();
            for key in keys {
                let want = by_get.get(key).unwrap();
                let found = by_into.get_into(key, &mut value).unwrap();
                assert_eq!(found, want.is_some(), "{rspecifier} {key}");
                if let Some(want) = want {
                    assert!(value == want, "{rspecifier} {key}");
                    let i: usize = key[1..].parse().unwrap();
                    assert!(value == matrices[i].1, "{rspecifier} {key}");
                }
            }
        }
    }
    // an error is the same error
    let mut by_into = RandomAccessTableReader::<Matrix<f32>>::open(&format!("scp:{scp}")).unwrap();
    std::fs::write(&ark, b"").unwrap();
    let err = by_into.get_into("k1", &mut Matrix::empty()).unwrap_err();
    let mut by_get = RandomAccessTableReader::<Matrix<f32>>::open(&format!("scp:{scp}")).unwrap();
    assert_eq!(err, by_get.get("k1").unwrap_err());
    assert!(matches!(err, Error::OffsetPastEnd { .. }), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        rng_seed: proptest::test_runner::RngSeed::Fixed(31),
        ..ProptestConfig::default()
    })]

    /// Random matrices in random shapes, the archive cut at a random byte, read as `ark`
    /// and through the scp, with and without `p`, plain and `bg`, into a value that starts
    /// empty or large: the values read are the matrices written, and the items (errors
    /// included) are the iterator's.
    #[test]
    fn next_into_items_are_the_iterators(
        shapes in proptest::collection::vec((0usize..12, 1usize..9), 0..8),
        cut in any::<prop::sample::Index>(),
        permissive in any::<bool>(),
        start_large in any::<bool>(),
    ) {
        let dir = scratch("prop");
        let matrices: Vec<(String, Matrix<f32>)> = shapes
            .iter()
            .enumerate()
            .map(|(i, &(r, c))| {
                let (r, c) = if r == 0 { (0, 0) } else { (r, c) };
                (format!("u{i}"), numbered(i, r, c))
            })
            .collect();
        let (ark, scp) = write_table(&dir, &matrices);
        let bytes = std::fs::read(&ark).unwrap();
        let keep = if bytes.is_empty() { 0 } else { cut.index(bytes.len() + 1) };
        std::fs::write(&ark, &bytes[..keep]).unwrap();
        let p = if permissive { "p," } else { "" };
        let start = if start_large { Matrix::new(12, 8) } else { Matrix::empty() };
        for rspecifier in [format!("ark,{p}b:{ark}"), format!("scp,{p}b:{scp}")] {
            let items = check_same(&rspecifier, start.clone());
            for item in items.iter().flatten() {
                let i: usize = item.0[1..].parse().unwrap();
                prop_assert!(item.1 == matrices[i].1, "{} {}", rspecifier, item.0);
            }
        }
    }
}
