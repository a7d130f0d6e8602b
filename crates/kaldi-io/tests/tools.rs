//! Kaldi's command-line tools, run as the installed binaries are (`copy-feats`,
//! `copy-matrix`, `copy-int-vector`, `compute-cmvn-stats`, `apply-cmvn`, `matrix-sum`):
//! outputs compared with the archives kaldi-native-io wrote (`tests/golden/`) and with
//! naive models of Kaldi's formulas written out here, relative paths taken from the
//! caller's directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kaldi_io::{read_kaldi_object, Matrix, SequentialTableReader, TableWriter, Vector};

/// The crate's root, where the goldens' scp files are relative to.
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kaldi-io-tools")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn exe(tool: &str) -> &'static str {
    match tool {
        "copy-feats" => env!("CARGO_BIN_EXE_copy-feats"),
        "copy-matrix" => env!("CARGO_BIN_EXE_copy-matrix"),
        "copy-int-vector" => env!("CARGO_BIN_EXE_copy-int-vector"),
        "compute-cmvn-stats" => env!("CARGO_BIN_EXE_compute-cmvn-stats"),
        "apply-cmvn" => env!("CARGO_BIN_EXE_apply-cmvn"),
        "matrix-sum" => env!("CARGO_BIN_EXE_matrix-sum"),
        other => panic!("no tool {other}"),
    }
}

/// Runs `tool args` in `cwd`.
fn run_in(cwd: &Path, tool: &str, args: &[&str]) -> Output {
    Command::new(exe(tool))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the tool runs")
}

/// Runs `tool args` in the crate's root and checks that it succeeded.
fn ok(cwd: &Path, tool: &str, args: &[&str]) -> String {
    let out = run_in(cwd, tool, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{tool} {args:?}: {stderr}");
    stderr
}

fn root() -> &'static Path {
    Path::new(ROOT)
}

fn golden(name: &str) -> String {
    format!("{ROOT}/tests/golden/{name}")
}

fn read_table<T: kaldi_io::Holder>(rspecifier: &str) -> Vec<(String, T)> {
    SequentialTableReader::<T>::open(rspecifier)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn rows_of<R: kaldi_io::Real>(m: &Matrix<R>) -> Vec<Vec<R>> {
    (0..m.num_rows()).map(|r| m.row_data(r).to_vec()).collect()
}

fn matrix(rows: &[Vec<f32>]) -> Matrix<f32> {
    if rows.is_empty() {
        return Matrix::new(0, 0);
    }
    Matrix::from_rows(rows)
}

fn write_table(path: &Path, entries: &[(&str, Vec<Vec<f32>>)]) {
    let mut writer =
        TableWriter::<Matrix<f32>>::create(&format!("ark:{}", path.display())).unwrap();
    for (key, rows) in entries {
        writer.write(key, &matrix(rows)).unwrap();
    }
    writer.finish().unwrap();
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

#[track_caller]
fn assert_rows_close(got: &[Vec<f32>], want: &[Vec<f64>], tol: f64) {
    assert_eq!(got.len(), want.len(), "rows");
    for (r, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.len(), "columns of row {r}");
        for (c, (&x, &y)) in g.iter().zip(w).enumerate() {
            assert!(close(f64::from(x), y, tol), "({r}, {c}): {x} vs {y}");
        }
    }
}

#[test]
fn copy_feats_binary_writes_kaldis_text_archive() {
    let dir = scratch("copy_feats_text");
    let out = dir.join("t.ark");
    let stderr = ok(
        root(),
        "copy-feats",
        &[
            "ark:tests/golden/float_matrix.ark",
            &format!("ark,t:{}", out.display()),
        ],
    );
    assert!(stderr.contains("Copied 4 feature matrices."), "{stderr}");
    // Kaldi's --print-args: the command line first
    assert!(
        stderr.starts_with("copy-feats ark:tests/golden/float_matrix.ark ark,t:"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(golden("float_matrix_t.ark")).unwrap()
    );
}

/// An scp with relative paths, run from another directory: the paths are taken from the
/// caller's directory, as Kaldi's tools take them.
#[test]
fn copy_feats_resolves_relative_paths_from_the_callers_directory() {
    let dir = scratch("relative");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::copy(golden("feats.ark"), dir.join("data/feats.ark")).unwrap();
    let scp = std::fs::read_to_string(golden("feats.scp"))
        .unwrap()
        .replace("tests/golden/", "data/");
    std::fs::write(dir.join("data/feats.scp"), scp).unwrap();
    ok(
        &dir,
        "copy-feats",
        &[
            "--write-num-frames=ark,t:utt2num_frames",
            "scp:data/feats.scp",
            "ark:out.ark",
        ],
    );
    assert_eq!(
        std::fs::read(dir.join("out.ark")).unwrap(),
        std::fs::read(golden("feats.ark")).unwrap()
    );
    // four utterances of 10 frames (gen_goldens.py), as Kaldi's int32 holder writes
    // text: the value and a space
    assert_eq!(
        std::fs::read_to_string(dir.join("utt2num_frames")).unwrap(),
        "utt1 10 \nutt2 10 \nutt3 10 \nutt4 10 \n"
    );
    // the same from the crate's root with the golden scp's own relative paths
    let out = dir.join("from_root.ark");
    ok(
        root(),
        "copy-feats",
        &[
            "scp:tests/golden/feats.scp",
            &format!("ark:{}", out.display()),
        ],
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(golden("feats.ark")).unwrap()
    );
}

#[test]
fn copy_feats_exit_codes_as_kaldis() {
    let dir = scratch("exit_codes");
    std::fs::write(dir.join("empty.ark"), b"").unwrap();
    // nothing copied: 1
    let out = run_in(&dir, "copy-feats", &["ark:empty.ark", "ark:out.ark"]);
    assert_eq!(out.status.code(), Some(1));
    // a bad option: 1 and the usage
    let out = run_in(
        &dir,
        "copy-feats",
        &["--compress=maybe", "ark:empty.ark", "ark:o.ark"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid value \"maybe\" for --compress"),
        "{stderr}"
    );
    assert!(stderr.contains("Usage: copy-feats"), "{stderr}");
    // the wrong number of arguments: 1 and the usage
    let out = run_in(&dir, "copy-feats", &["ark:empty.ark"]);
    assert_eq!(out.status.code(), Some(1));
    // --help: 0 and the options
    let out = run_in(&dir, "copy-feats", &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--compression-method"));
    // a missing archive: Kaldi's -1 (255) and an error naming the file
    let out = run_in(&dir, "copy-feats", &["ark:missing.ark", "ark:o.ark"]);
    assert_eq!(out.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("copy-feats: ERROR:") && stderr.contains("missing.ark"),
        "{stderr}"
    );
}

#[test]
fn copy_feats_compresses_as_kaldi_does() {
    let dir = scratch("compress");
    let out = dir.join("c.ark");
    ok(
        root(),
        "copy-feats",
        &[
            "--compress=true",
            "--compression-method=2",
            "ark:tests/golden/float_matrix.ark",
            &format!("ark:{}", out.display()),
        ],
    );
    // what comes back is each matrix compressed with Kaldi's method 2 (speech feature)
    let got: Vec<(String, Matrix<f32>)> = read_table(&format!("ark:{}", out.display()));
    let input: Vec<(String, Matrix<f32>)> =
        read_table(&format!("ark:{}", golden("float_matrix.ark")));
    assert_eq!(got.len(), input.len());
    for ((k1, m1), (k2, m2)) in got.iter().zip(&input) {
        assert_eq!(k1, k2);
        let method = kaldi_io::CompressionMethod::from_kaldi_code(2).unwrap();
        let want = kaldi_io::CompressedMatrix::compress(m2, method)
            .unwrap()
            .to_matrix::<f32>();
        assert_eq!(rows_of(m1), rows_of(&want), "{k1}");
    }
}

#[test]
fn copy_matrix_scales_and_maps_like_a_per_element_loop() {
    let dir = scratch("copy_matrix");
    let input: Vec<(String, Matrix<f32>)> =
        read_table(&format!("ark:{}", golden("float_matrix.ark")));
    type Case<'a> = (&'a [&'a str], fn(f32) -> f64);
    let cases: [Case<'_>; 4] = [
        (&[], |x| f64::from(x)),
        (&["--scale=0.5"], |x| f64::from(x) * 0.5),
        (&["--scale=2", "--apply-exp=true"], |x| {
            (f64::from(x) * 2.0).exp()
        }),
        (&["--apply-power=2"], |x| f64::from(x) * f64::from(x)),
    ];
    for (k, (options, model)) in cases.iter().enumerate() {
        let out = dir.join(format!("{k}.ark"));
        let wspec = format!("ark:{}", out.display());
        let mut args: Vec<&str> = options.to_vec();
        args.push("ark:tests/golden/float_matrix.ark");
        args.push(&wspec);
        let stderr = ok(root(), "copy-matrix", &args);
        assert!(stderr.contains("Copied 4 matrices."), "{stderr}");
        let got: Vec<(String, Matrix<f32>)> = read_table(&wspec);
        assert_eq!(got.len(), input.len());
        for ((key, m), (_, x)) in got.iter().zip(&input) {
            let want: Vec<Vec<f64>> = rows_of(x)
                .iter()
                .map(|row| row.iter().map(|&v| model(v)).collect())
                .collect();
            assert_rows_close(&rows_of(m), &want, 1e-6);
            let _ = key;
        }
    }
    // no options: the bytes kaldi-native-io wrote
    assert_eq!(
        std::fs::read(dir.join("0.ark")).unwrap(),
        std::fs::read(golden("float_matrix.ark")).unwrap()
    );
    // softmax per row, a single file in text
    let single = dir.join("m.mat");
    kaldi_io::write_kaldi_object(
        &single.display().to_string(),
        &Matrix::from_rows(&[[1.0f32, 2.0, 3.0], [0.0, 0.0, 0.0]]),
        true,
    )
    .unwrap();
    let text = dir.join("soft.txt");
    ok(
        &dir,
        "copy-matrix",
        &[
            "--apply-softmax-per-row",
            "--binary=false",
            "m.mat",
            "soft.txt",
        ],
    );
    let soft: Matrix<f32> = read_kaldi_object(&text.display().to_string()).unwrap();
    let e: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|x| x.exp()).collect();
    let z: f64 = e.iter().sum();
    assert_rows_close(
        &rows_of(&soft),
        &[e.iter().map(|x| x / z).collect(), vec![1.0 / 3.0; 3]],
        1e-6,
    );
    assert!(std::fs::read(&text).unwrap().starts_with(b" ["));
    // Kaldi's checks
    let out = run_in(
        &dir,
        "copy-matrix",
        &["--apply-log", "--apply-exp", "m.mat", "x.mat"],
    );
    assert_eq!(out.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Only one of apply-log"));
    let out = run_in(&dir, "copy-matrix", &["m.mat", "ark:x.ark"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Cannot mix archives"));
}

#[test]
fn copy_int_vector_writes_kaldis_archives() {
    let dir = scratch("copy_int_vector");
    for (input, output, want) in [
        (
            "ark:tests/golden/int32_vector.ark",
            "t.ark",
            "int32_vector_t.ark",
        ),
        (
            "ark,t:tests/golden/int32_vector_t.ark",
            "b.ark",
            "int32_vector.ark",
        ),
    ] {
        let out = dir.join(output);
        let wspec = if output.starts_with('t') {
            format!("ark,t:{}", out.display())
        } else {
            format!("ark:{}", out.display())
        };
        let stderr = ok(root(), "copy-int-vector", &[input, &wspec]);
        assert!(stderr.contains("vectors of int32."), "{stderr}");
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(golden(want)).unwrap(),
            "{input}"
        );
    }
}

/// Kaldi's CMVN statistics by a plain loop in `f64`: row 0 the sums and the count, row 1
/// the sums of squares.
fn stats_model(utts: &[&[Vec<f32>]], weights: Option<&[Vec<f32>]>) -> Vec<Vec<f64>> {
    let dim = utts[0][0].len();
    let mut stats = vec![vec![0.0f64; dim + 1]; 2];
    for (u, frames) in utts.iter().enumerate() {
        for (t, frame) in frames.iter().enumerate() {
            let w = weights.map_or(1.0, |w| f64::from(w[u][t]));
            stats[0][dim] += w;
            for (d, &x) in frame.iter().enumerate() {
                stats[0][d] += w * f64::from(x);
                stats[1][d] += w * f64::from(x) * f64::from(x);
            }
        }
    }
    stats
}

fn feats_fixture() -> Vec<(&'static str, Vec<Vec<f32>>)> {
    let frames = |seed: u32, n: usize| -> Vec<Vec<f32>> {
        (0..n)
            .map(|t| {
                (0..3)
                    .map(|d| {
                        let v = ((seed * 31 + t as u32 * 7 + d as u32 * 13) % 23) as f32;
                        v * 0.37 - 2.5 + d as f32
                    })
                    .collect()
            })
            .collect()
    };
    vec![
        ("spkA-u1", frames(1, 5)),
        ("spkA-u2", frames(2, 3)),
        ("spkB-u1", frames(3, 4)),
    ]
}

#[test]
fn compute_cmvn_stats_per_utterance_speaker_and_global() {
    let dir = scratch("cmvn_stats");
    let feats = feats_fixture();
    write_table(&dir.join("feats.ark"), &feats);
    // per utterance
    ok(
        &dir,
        "compute-cmvn-stats",
        &["ark:feats.ark", "ark:cmvn_utt.ark"],
    );
    let got: Vec<(String, Matrix<f64>)> =
        read_table(&format!("ark:{}", dir.join("cmvn_utt.ark").display()));
    assert_eq!(got.len(), 3);
    for ((key, stats), (want_key, frames)) in got.iter().zip(&feats) {
        assert_eq!(key, want_key);
        let want = stats_model(&[frames], None);
        for (g, w) in rows_of(stats).iter().zip(&want) {
            for (&x, &y) in g.iter().zip(w) {
                assert!(close(x, y, 1e-6), "{key}: {x} vs {y}");
            }
        }
        assert_eq!(stats[(1, 3)], 0.0);
    }
    // per speaker, from a spk2utt in text form (one utterance missing: counted, warned)
    std::fs::write(
        dir.join("spk2utt"),
        "spkA spkA-u1 spkA-u2\nspkB spkB-u1 spkB-u9\n",
    )
    .unwrap();
    let stderr = ok(
        &dir,
        "compute-cmvn-stats",
        &[
            "--spk2utt=ark,t:spk2utt",
            "ark:feats.ark",
            "ark,t:cmvn_spk.ark",
        ],
    );
    assert!(
        stderr.contains("Did not find features for utterance spkB-u9"),
        "{stderr}"
    );
    assert!(
        stderr.contains("for 3 utterances; 1 had errors."),
        "{stderr}"
    );
    let got: Vec<(String, Matrix<f64>)> =
        read_table(&format!("ark:{}", dir.join("cmvn_spk.ark").display()));
    let want_a = stats_model(&[&feats[0].1, &feats[1].1], None);
    let want_b = stats_model(&[&feats[2].1], None);
    assert_eq!(got[0].0, "spkA");
    assert_eq!(got[1].0, "spkB");
    for ((_, stats), want) in got.iter().zip([want_a, want_b]) {
        for (g, w) in rows_of(stats).iter().zip(&want) {
            for (&x, &y) in g.iter().zip(w) {
                // the text archive keeps 7 digits
                assert!(close(x, y, 1e-6), "{x} vs {y}");
            }
        }
    }
    // global, with per-frame weights, to a single file
    let weights: Vec<Vec<f32>> = feats
        .iter()
        .map(|(_, f)| (0..f.len()).map(|t| 0.25 * (t % 4) as f32).collect())
        .collect();
    {
        let mut w = TableWriter::<Vector<f32>>::create(&format!(
            "ark:{}",
            dir.join("weights.ark").display()
        ))
        .unwrap();
        for ((key, _), ws) in feats.iter().zip(&weights) {
            w.write(key, &Vector::from_slice(ws)).unwrap();
        }
        w.finish().unwrap();
    }
    ok(
        &dir,
        "compute-cmvn-stats",
        &[
            "--weights=ark:weights.ark",
            "--binary=false",
            "ark:feats.ark",
            "global.mat",
        ],
    );
    let global: Matrix<f64> =
        read_kaldi_object(&dir.join("global.mat").display().to_string()).unwrap();
    let all: Vec<&[Vec<f32>]> = feats.iter().map(|(_, f)| f.as_slice()).collect();
    let want = stats_model(&all, Some(&weights));
    for (g, w) in rows_of(&global).iter().zip(&want) {
        for (&x, &y) in g.iter().zip(w) {
            // written as f32 text (7 digits)
            assert!(close(x, y, 1e-6), "{x} vs {y}");
        }
    }
    // --spk2utt with a file output is Kaldi's error
    let out = run_in(
        &dir,
        "compute-cmvn-stats",
        &["--spk2utt=ark,t:spk2utt", "ark:feats.ark", "g.mat"],
    );
    assert_eq!(out.status.code(), Some(255));
}

/// Kaldi's normalization by a plain loop in `f64`.
fn cmvn_model(
    frames: &[Vec<f32>],
    stats: &[Vec<f64>],
    norm_vars: bool,
    reverse: bool,
) -> Vec<Vec<f64>> {
    let dim = frames[0].len();
    let count = stats[0][dim];
    frames
        .iter()
        .map(|frame| {
            (0..dim)
                .map(|d| {
                    let x = f64::from(frame[d]);
                    let mean = stats[0][d] / count;
                    let var = (stats[1][d] / count - mean * mean).max(1e-20);
                    match (norm_vars, reverse) {
                        (false, false) => x - mean,
                        (true, false) => (x - mean) / var.sqrt(),
                        (false, true) => x + mean,
                        (true, true) => x * var.sqrt() + mean,
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn apply_cmvn_equals_kaldis_formulas() {
    let dir = scratch("apply_cmvn");
    let feats = feats_fixture();
    write_table(&dir.join("feats.ark"), &feats);
    ok(
        &dir,
        "compute-cmvn-stats",
        &["ark:feats.ark", "ark:cmvn.ark"],
    );
    let stats_of = |frames: &[&[Vec<f32>]]| stats_model(frames, None);
    for (options, norm_vars, reverse) in [
        (vec![], false, false),
        (vec!["--norm-vars=true"], true, false),
        (vec!["--reverse=true"], false, true),
        (vec!["--norm-vars=true", "--reverse=true"], true, true),
    ] {
        let mut args = options.clone();
        args.extend(["ark:cmvn.ark", "ark:feats.ark", "ark:out.ark"]);
        let stderr = ok(&dir, "apply-cmvn", &args);
        assert!(stderr.contains("to 3 utterances, errors on 0"), "{stderr}");
        let got: Vec<(String, Matrix<f32>)> =
            read_table(&format!("ark:{}", dir.join("out.ark").display()));
        for ((key, m), (_, frames)) in got.iter().zip(&feats) {
            let want = cmvn_model(frames, &stats_of(&[frames]), norm_vars, reverse);
            assert_rows_close(&rows_of(m), &want, 2e-6);
            let _ = key;
        }
    }
    // per speaker through utt2spk, one utterance without a speaker (skipped, counted)
    std::fs::write(dir.join("spk2utt"), "spkA spkA-u1 spkA-u2\n").unwrap();
    std::fs::write(dir.join("utt2spk"), "spkA-u1 spkA\nspkA-u2 spkA\n").unwrap();
    ok(
        &dir,
        "compute-cmvn-stats",
        &["--spk2utt=ark,t:spk2utt", "ark:feats.ark", "ark:spk.ark"],
    );
    let stderr = ok(
        &dir,
        "apply-cmvn",
        &[
            "--utt2spk=ark,t:utt2spk",
            "--norm-vars",
            "ark:spk.ark",
            "ark:feats.ark",
            "ark:out.ark",
        ],
    );
    assert!(
        stderr.contains("No normalization statistics available for key spkB-u1"),
        "{stderr}"
    );
    assert!(stderr.contains("to 2 utterances, errors on 1"), "{stderr}");
    let got: Vec<(String, Matrix<f32>)> =
        read_table(&format!("ark:{}", dir.join("out.ark").display()));
    let spk_stats = stats_of(&[&feats[0].1, &feats[1].1]);
    assert_eq!(got.len(), 2);
    for ((_, m), (_, frames)) in got.iter().zip(&feats) {
        assert_rows_close(
            &rows_of(m),
            &cmvn_model(frames, &spk_stats, true, false),
            2e-6,
        );
    }
    // global stats from a file, --skip-dims 1 leaves that column as it is
    ok(&dir, "compute-cmvn-stats", &["ark:feats.ark", "global.mat"]);
    ok(
        &dir,
        "apply-cmvn",
        &[
            "--norm-vars=true",
            "--skip-dims=1",
            "global.mat",
            "ark:feats.ark",
            "ark:out.ark",
        ],
    );
    let all: Vec<&[Vec<f32>]> = feats.iter().map(|(_, f)| f.as_slice()).collect();
    let global = stats_of(&all);
    let got: Vec<(String, Matrix<f32>)> =
        read_table(&format!("ark:{}", dir.join("out.ark").display()));
    for ((_, m), (_, frames)) in got.iter().zip(&feats) {
        let mut want = cmvn_model(frames, &global, true, false);
        for (row, frame) in want.iter_mut().zip(frames.iter()) {
            row[1] = f64::from(frame[1]);
        }
        // the global stats went through f32 (Kaldi writes them so)
        assert_rows_close(&rows_of(m), &want, 2e-5);
    }
    // --norm-means=false echoes the input
    ok(
        &dir,
        "apply-cmvn",
        &[
            "--norm-means=false",
            "global.mat",
            "ark:feats.ark",
            "ark:echo.ark",
        ],
    );
    assert_eq!(
        std::fs::read(dir.join("echo.ark")).unwrap(),
        std::fs::read(dir.join("feats.ark")).unwrap()
    );
    // Kaldi's errors
    let out = run_in(
        &dir,
        "apply-cmvn",
        &[
            "--norm-vars",
            "--norm-means=false",
            "global.mat",
            "ark:feats.ark",
            "ark:o.ark",
        ],
    );
    assert_eq!(out.status.code(), Some(255));
    let out = run_in(
        &dir,
        "apply-cmvn",
        &[
            "--skip-dims=1:x",
            "global.mat",
            "ark:feats.ark",
            "ark:o.ark",
        ],
    );
    assert_eq!(out.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Bad --skip-dims"));
}

#[test]
fn matrix_sum_three_usages() {
    let dir = scratch("matrix_sum");
    let a = vec![vec![1.0f32, 2.0], vec![3.0, 4.0]];
    let b = vec![vec![0.5f32, -1.0], vec![2.0, 8.0]];
    let c = vec![vec![10.0f32, 20.0], vec![30.0, 40.0]];
    write_table(&dir.join("a.ark"), &[("x", a.clone()), ("y", b.clone())]);
    write_table(&dir.join("b.ark"), &[("x", b.clone()), ("y", a.clone())]);
    write_table(&dir.join("c.ark"), &[("x", c.clone())]);
    let combine = |f: &dyn Fn(f64, f64, f64) -> f64,
                   p: &[Vec<f32>],
                   q: &[Vec<f32>],
                   r: Option<&[Vec<f32>]>|
     -> Vec<Vec<f64>> {
        (0..2)
            .map(|i| {
                (0..2)
                    .map(|j| {
                        f(
                            f64::from(p[i][j]),
                            f64::from(q[i][j]),
                            r.map_or(0.0, |r| f64::from(r[i][j])),
                        )
                    })
                    .collect()
            })
            .collect()
    };
    // type one with scales; c.ark has no "y": warned, counted as missing, and as in
    // Kaldi the exit status is 1 when the missing are not fewer than the complete (1 of 2)
    let out = run_in(
        &dir,
        "matrix-sum",
        &[
            "--scale1=2",
            "--scale2=0.5",
            "ark:a.ark",
            "ark:b.ark",
            "ark:c.ark",
            "ark:sum.ark",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("No matrix found for utterance y for system 3"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Produced output for 2 utterances; 1 total missing matrices"),
        "{stderr}"
    );
    let got: Vec<(String, Matrix<f32>)> =
        read_table(&format!("ark:{}", dir.join("sum.ark").display()));
    assert_eq!(got.len(), 2);
    assert_rows_close(
        &rows_of(&got[0].1),
        &combine(&|p, q, r| 2.0 * p + 0.5 * q + r, &a, &b, Some(&c)),
        1e-7,
    );
    assert_rows_close(
        &rows_of(&got[1].1),
        &combine(&|p, q, _| 2.0 * p + 0.5 * q, &b, &a, None),
        1e-7,
    );
    // type one, average
    ok(
        &dir,
        "matrix-sum",
        &["--average", "ark:a.ark", "ark:b.ark", "ark:avg.ark"],
    );
    let got: Vec<(String, Matrix<f32>)> =
        read_table(&format!("ark:{}", dir.join("avg.ark").display()));
    assert_rows_close(
        &rows_of(&got[0].1),
        &combine(&|p, q, _| (p + q) / 2.0, &a, &b, None),
        1e-7,
    );
    // type two: one table into one matrix
    ok(
        &dir,
        "matrix-sum",
        &["--binary=false", "ark:a.ark", "total.mat"],
    );
    let total: Matrix<f32> =
        read_kaldi_object(&dir.join("total.mat").display().to_string()).unwrap();
    assert_rows_close(
        &rows_of(&total),
        &combine(&|p, q, _| p + q, &a, &b, None),
        1e-7,
    );
    // type three: files, averaged
    for (name, m) in [("a.mat", &a), ("b.mat", &b), ("c.mat", &c)] {
        kaldi_io::write_kaldi_object(&dir.join(name).display().to_string(), &matrix(m), true)
            .unwrap();
    }
    ok(
        &dir,
        "matrix-sum",
        &["--average=true", "a.mat", "b.mat", "c.mat", "mean.mat"],
    );
    let mean: Matrix<f32> = read_kaldi_object(&dir.join("mean.mat").display().to_string()).unwrap();
    assert_rows_close(
        &rows_of(&mean),
        &combine(&|p, q, r| (p + q + r) / 3.0, &a, &b, Some(&c)),
        1e-6,
    );
    // --average with type two is Kaldi's error
    let out = run_in(&dir, "matrix-sum", &["--average", "ark:a.ark", "x.mat"]);
    assert_eq!(out.status.code(), Some(255));
}

/// A single vector in Kaldi's `WriteIntegerVector` form, worked out by hand from Kaldi's
/// source: `\0B`, the size byte 4, the count, the elements packed; text `[ 1 2 -3 ]`.
#[test]
fn copy_int_vector_single_vector_form() {
    let dir = scratch("copy_int_vector_single");
    std::fs::write(dir.join("ali.txt"), "[ 1 2 -3 ]\n").unwrap();
    ok(&dir, "copy-int-vector", &["ali.txt", "ali.bin"]);
    let mut want = b"\0B\x04".to_vec();
    want.extend_from_slice(&3i32.to_le_bytes());
    for x in [1i32, 2, -3] {
        want.extend_from_slice(&x.to_le_bytes());
    }
    assert_eq!(std::fs::read(dir.join("ali.bin")).unwrap(), want);
    let out = run_in(&dir, "copy-int-vector", &["--binary=false", "ali.bin", "-"]);
    assert!(out.status.success());
    assert_eq!(out.stdout, b"[ 1 2 -3 ]\n");
    // an empty vector both ways
    std::fs::write(dir.join("empty.txt"), "[ ]\n").unwrap();
    ok(&dir, "copy-int-vector", &["empty.txt", "empty.bin"]);
    assert_eq!(
        std::fs::read(dir.join("empty.bin")).unwrap(),
        b"\0B\x04\0\0\0\0"
    );
    // a hostile count with no elements: an error, not an allocation
    let mut hostile = b"\0B\x04".to_vec();
    hostile.extend_from_slice(&i32::MAX.to_le_bytes());
    std::fs::write(dir.join("hostile.bin"), hostile).unwrap();
    let out = run_in(&dir, "copy-int-vector", &["hostile.bin", "x.txt"]);
    assert_eq!(out.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("hostile.bin"), "{stderr}");
    // mixing a table and a file is Kaldi's error
    let out = run_in(&dir, "copy-int-vector", &["ali.bin", "ark:x.ark"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Cannot mix archives"));
}
