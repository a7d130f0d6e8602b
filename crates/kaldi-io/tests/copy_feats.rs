//! The `copy-feats` example against Kaldi's outputs: its options parsed as Kaldi's tool
//! does, its tables equal to what kaldi-native-io wrote.

use crate::copy_feats_tool as copy_feats;

use std::path::PathBuf;

use dense_matrix::{CompressedMatrix, Matrix};
use kaldi_io::SequentialTableReader;

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kaldi-io-copy-feats")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn copies_to_kaldi_text_form() {
    let dir = scratch("text");
    let out = dir.join("t.ark");
    let (options, positional) = copy_feats::parse_args(&args(&[
        "ark:tests/golden/float_matrix.ark",
        &format!("ark,t:{}", out.display()),
    ]))
    .unwrap();
    let n = copy_feats::run(&options, &positional[0], &positional[1]).unwrap();
    assert_eq!(n, 4);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read("tests/golden/float_matrix_t.ark").unwrap()
    );
}

/// `--compress=true --compression-method=N` gives Kaldi's compressed matrices for N.
#[test]
fn compresses_with_each_method_as_kaldi() {
    let dir = scratch("compress");
    let kaldi: Vec<(String, CompressedMatrix)> =
        SequentialTableReader::open("ark:tests/golden/compressed.ark")
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    for code in 1..=7 {
        let out = dir.join(format!("m{code}.ark"));
        let (options, positional) = copy_feats::parse_args(&args(&[
            "--compress=true",
            &format!("--compression-method={code}"),
            "ark:tests/golden/compressed_input.ark",
            &format!("ark:{}", out.display()),
        ]))
        .unwrap();
        copy_feats::run(&options, &positional[0], &positional[1]).unwrap();
        let ours: Vec<(String, CompressedMatrix)> =
            SequentialTableReader::open(&format!("ark:{}", out.display()))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        for (key, cm) in &ours {
            let want = &kaldi
                .iter()
                .find(|(k, _)| *k == format!("m{code}_{key}"))
                .unwrap()
                .1;
            assert_eq!(cm, want, "method {code}, {key}");
        }
    }
}

#[test]
fn single_objects_and_bad_options() {
    let dir = scratch("single");
    let out = dir.join("one.mat").display().to_string();
    let (options, positional) =
        copy_feats::parse_args(&args(&["--binary=false", "tests/golden/feats.ark:5", &out]))
            .unwrap();
    assert_eq!(
        copy_feats::run(&options, &positional[0], &positional[1]).unwrap(),
        1
    );
    let back: Matrix<f32> = kaldi_io::read_kaldi_object(&out).unwrap();
    assert_eq!(back.shape(), (10, 6));
    assert!(std::fs::read(&out).unwrap().starts_with(b" ["));
    assert_eq!(
        copy_feats::parse_args(&args(&["--compression-method=9"]))
            .err()
            .unwrap(),
        "invalid --compression-method=9 (1 through 7)"
    );
    assert_eq!(
        copy_feats::parse_args(&args(&["--compress=yes"]))
            .err()
            .unwrap(),
        "invalid value \"yes\" for --compress (expected true or false)"
    );
    assert_eq!(
        copy_feats::parse_args(&args(&["--frames=3"]))
            .err()
            .unwrap(),
        "invalid option --frames"
    );
}

/// An HTK feature file built by hand from HTK's definition (Kaldi's `HtkHeader`): frames,
/// sample period, bytes per frame and parameter kind, big-endian, then the frames'
/// floats, big-endian.
fn htk_file(path: &std::path::Path, kind: u16, frames: &[Vec<f32>]) {
    let cols = frames.first().map_or(0, Vec::len);
    let mut b = Vec::new();
    b.extend_from_slice(&(frames.len() as i32).to_be_bytes());
    b.extend_from_slice(&100_000i32.to_be_bytes());
    b.extend_from_slice(&(4 * cols as i16).to_be_bytes());
    b.extend_from_slice(&kind.to_be_bytes());
    for v in frames.iter().flatten() {
        b.extend_from_slice(&v.to_bits().to_be_bytes());
    }
    std::fs::write(path, b).unwrap();
}

/// A CMU Sphinx feature file built by hand: the count of floats, big-endian, then the
/// floats, big-endian, 13 per frame.
fn sphinx_file(path: &std::path::Path, frames: &[Vec<f32>]) {
    let mut b = ((13 * frames.len()) as i32).to_be_bytes().to_vec();
    for v in frames.iter().flatten() {
        b.extend_from_slice(&v.to_bits().to_be_bytes());
    }
    std::fs::write(path, b).unwrap();
}

fn frames(n: usize, cols: usize, seed: f32) -> Vec<Vec<f32>> {
    (0..n)
        .map(|r| {
            (0..cols)
                .map(|c| seed + r as f32 * 1.5 - c as f32 * 0.25)
                .collect()
        })
        .collect()
}

fn as_matrix(frames: &[Vec<f32>]) -> Matrix<f32> {
    let cols = frames[0].len();
    Matrix::from_vec(frames.len(), cols, frames.concat()).unwrap()
}

fn read_table<T: kaldi_io::Holder>(rspecifier: &str) -> Vec<(String, T)> {
    SequentialTableReader::open(rspecifier)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[track_caller]
fn copy(list: &[&str]) -> Result<usize, kaldi_io::Error> {
    let (options, positional) = copy_feats::parse_args(&args(list)).unwrap();
    copy_feats::run(&options, &positional[0], &positional[1])
}

/// `--htk-in`: each scp entry an HTK file (MFCC_E_D, 6 | 0100 | 0400), copied as Kaldi's
/// `SequentialTableReader<HtkMatrixHolder>` loop does, plain, compressed and with
/// `--write-num-frames`; a single file too.
#[test]
fn htk_input_is_copied_as_kaldi_copies_it() {
    use kaldi_io::CompressionMethod;
    let dir = scratch("htk");
    let want = [("u1", frames(2, 3, 1.0)), ("u2", frames(5, 3, -7.0))];
    let mut scp = String::new();
    for (key, f) in &want {
        let path = dir.join(format!("{key}.htk"));
        htk_file(&path, 6 | 0o100 | 0o400, f);
        scp.push_str(&format!("{key} {}\n", path.display()));
    }
    let scp_path = dir.join("htk.scp");
    std::fs::write(&scp_path, scp).unwrap();
    let rspecifier = format!("scp:{}", scp_path.display());
    let out = dir.join("out.ark");
    let nf = dir.join("nf.ark");
    let n = copy(&[
        "--htk-in",
        &format!("--write-num-frames=ark:{}", nf.display()),
        &rspecifier,
        &format!("ark:{}", out.display()),
    ])
    .unwrap();
    assert_eq!(n, 2);
    let got: Vec<(String, Matrix<f32>)> = read_table(&format!("ark:{}", out.display()));
    assert_eq!(got.len(), 2);
    for ((key, m), (want_key, f)) in got.iter().zip(&want) {
        assert_eq!(key, want_key);
        assert!(*m == as_matrix(f), "{key}");
    }
    let num_frames: Vec<(String, i32)> = read_table(&format!("ark:{}", nf.display()));
    assert_eq!(num_frames, [("u1".to_string(), 2), ("u2".to_string(), 5)]);
    // compressed, with Kaldi's method 3 (kTwoByteAuto)
    copy(&[
        "--htk-in=true",
        "--compress=true",
        "--compression-method=3",
        &rspecifier,
        &format!("ark:{}", out.display()),
    ])
    .unwrap();
    let got: Vec<(String, CompressedMatrix)> = read_table(&format!("ark:{}", out.display()));
    for ((_, cm), (_, f)) in got.iter().zip(&want) {
        let kaldi = CompressedMatrix::compress(&as_matrix(f), CompressionMethod::TwoByteAuto);
        assert_eq!(*cm, kaldi.unwrap());
    }
    // one file to one file, as Kaldi's `ReadHtk` then `WriteKaldiObject`
    let single = dir.join("u1.mat");
    copy(&[
        "--htk-in",
        "--binary=false",
        &dir.join("u1.htk").display().to_string(),
        &single.display().to_string(),
    ])
    .unwrap();
    let m: Matrix<f32> = kaldi_io::read_kaldi_object(&single.display().to_string()).unwrap();
    assert!(m == as_matrix(&want[0].1));
}

#[test]
fn sphinx_input_is_copied_as_kaldi_copies_it() {
    let dir = scratch("sphinx");
    let want = [("s1", frames(3, 13, 0.5)), ("s2", frames(1, 13, 9.0))];
    let mut scp = String::new();
    for (key, f) in &want {
        let path = dir.join(format!("{key}.mfc"));
        sphinx_file(&path, f);
        scp.push_str(&format!("{key} {}\n", path.display()));
    }
    let scp_path = dir.join("sphinx.scp");
    std::fs::write(&scp_path, scp).unwrap();
    let out = dir.join("out.ark");
    let n = copy(&[
        "--sphinx-in",
        &format!("scp:{}", scp_path.display()),
        &format!("ark,t:{}", out.display()),
    ])
    .unwrap();
    assert_eq!(n, 2);
    let got: Vec<(String, Matrix<f32>)> = read_table(&format!("ark:{}", out.display()));
    for ((key, m), (want_key, f)) in got.iter().zip(&want) {
        assert_eq!(key, want_key);
        assert!(*m == as_matrix(f), "{key}");
    }
    // Kaldi's copy-feats reads Sphinx input from tables only
    let err = copy(&[
        "--sphinx-in",
        &dir.join("s1.mfc").display().to_string(),
        &dir.join("s1.mat").display().to_string(),
    ])
    .unwrap_err();
    assert!(
        err.to_string().contains("--sphinx-in reads tables only"),
        "{err}"
    );
}

/// A file Kaldi's `ReadHtk` refuses (compressed, `_C`) stops the copy with an error naming
/// the key; a Sphinx file whose count is not a multiple of 13 likewise.
#[test]
fn bad_htk_and_sphinx_files_are_errors_naming_the_key() {
    let dir = scratch("bad-foreign");
    htk_file(&dir.join("ok.htk"), 6, &frames(2, 2, 0.0));
    htk_file(&dir.join("bad.htk"), 6 | 0o2000, &frames(2, 2, 0.0));
    let scp = dir.join("htk.scp");
    std::fs::write(
        &scp,
        format!(
            "ok {}\nbad {}\n",
            dir.join("ok.htk").display(),
            dir.join("bad.htk").display()
        ),
    )
    .unwrap();
    let out = format!("ark:{}", dir.join("out.ark").display());
    let err = copy(&["--htk-in", &format!("scp:{}", scp.display()), &out]).unwrap_err();
    match &err {
        kaldi_io::Error::Object { key, .. } => assert_eq!(key.as_deref(), Some("bad")),
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("compressed"), "{err}");
    let mut bytes = 14i32.to_be_bytes().to_vec();
    bytes.extend_from_slice(&[0; 56]);
    std::fs::write(dir.join("bad.mfc"), bytes).unwrap();
    std::fs::write(&scp, format!("s {}\n", dir.join("bad.mfc").display())).unwrap();
    let err = copy(&["--sphinx-in", &format!("scp:{}", scp.display()), &out]).unwrap_err();
    assert!(
        err.to_string().contains("multiple of the vector length 13"),
        "{err}"
    );
}
