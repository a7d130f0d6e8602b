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
