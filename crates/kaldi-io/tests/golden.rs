//! Golden archives written by kaldi-native-io (Kaldi's own code; `golden/gen_goldens.py`):
//! every holder read in binary and text and compared with the values the script wrote
//! (`golden/values.json`), and the same values written back byte for byte.

use std::fmt::Debug;
use std::path::PathBuf;

use dense_matrix::{CompressedMatrix, CompressionMethod, Matrix, Vector};
use kaldi_io::{Holder, Posterior, RandomAccessTableReader, SequentialTableReader, TableWriter};
use serde_json::Value;

fn values() -> Value {
    serde_json::from_str(include_str!("golden/values.json")).unwrap()
}

fn golden(name: &str) -> String {
    format!("tests/golden/{name}")
}

/// A fresh scratch folder under cargo's target tmp dir.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kaldi-io-golden")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read_all<T: Holder>(rspecifier: &str) -> Vec<(String, T)> {
    SequentialTableReader::<T>::open(rspecifier)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

/// A float the script stored as the bits of its `f64` value.
fn float(v: &Value) -> f64 {
    f64::from_bits(v.as_u64().unwrap())
}

fn f64s(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(float).collect()
}

fn matrix<R: dense_matrix::Real>(v: &Value) -> Matrix<R> {
    let rows: Vec<Vec<R>> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|row| f64s(row).into_iter().map(R::from_f64).collect())
        .collect();
    if rows.is_empty() {
        Matrix::empty()
    } else {
        Matrix::from_rows(&rows)
    }
}

fn vector<R: dense_matrix::Real>(v: &Value) -> Vector<R> {
    Vector::from_vec(f64s(v).into_iter().map(R::from_f64).collect())
}

fn i32s(v: &Value) -> Vec<i32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap() as i32)
        .collect()
}

/// Reads `<name>.ark` and `<name>_t.ark` and compares with the script's values; writes the
/// script's (binary) values in both modes and compares the bytes with Kaldi's.
#[track_caller]
fn check_holder<T: Holder + Debug>(
    name: &str,
    from_json: impl Fn(&Value) -> T,
    eq: impl Fn(&T, &T) -> bool,
) {
    let all = values();
    let dir = scratch(name);
    for (suffix, binary) in [("", true), ("_t", false)] {
        let expected: Vec<(String, T)> = all[format!("{name}{suffix}")]
            .as_array()
            .unwrap()
            .iter()
            .map(|kv| (kv[0].as_str().unwrap().to_string(), from_json(&kv[1])))
            .collect();
        let path = golden(&format!("{name}{suffix}.ark"));
        let got: Vec<(String, T)> = read_all(&format!("ark:{path}"));
        assert_eq!(got.len(), expected.len(), "{path}");
        for ((gk, gv), (ek, ev)) in got.iter().zip(&expected) {
            assert_eq!(gk, ek, "{path}");
            assert!(eq(gv, ev), "{path} key {gk}: read {gv:?}, expected {ev:?}");
        }
        // write the exact values (the text goldens were written from them too)
        let exact: Vec<(String, T)> = all[name]
            .as_array()
            .unwrap()
            .iter()
            .map(|kv| (kv[0].as_str().unwrap().to_string(), from_json(&kv[1])))
            .collect();
        let out = dir.join(format!("{name}{suffix}.ark"));
        let spec = format!("ark{}:{}", if binary { "" } else { ",t" }, out.display());
        let mut writer = TableWriter::<T>::create(&spec).unwrap();
        for (k, v) in &exact {
            writer.write(k, v).unwrap();
        }
        writer.finish().unwrap();
        let mut kaldi = std::fs::read(&path).unwrap();
        if name == "token_vector" {
            kaldi = kaldi_token_vector_bytes(&kaldi);
        }
        assert_eq!(std::fs::read(&out).unwrap(), kaldi, "bytes of {path}");
    }
}

/// kaldi-native-io's token-vector writer drops the space Kaldi's `TokenVectorHolder`
/// writes after each token (`os << token << ' '`, then `\n`); we write Kaldi's form.
fn kaldi_token_vector_bytes(native: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(native).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let (key, tokens) = line.split_once(' ').unwrap();
        out.push_str(key);
        out.push(' ');
        for t in tokens.split_whitespace() {
            out.push_str(t);
            out.push(' ');
        }
        out.push('\n');
    }
    out.into_bytes()
}

#[test]
fn matrices_and_vectors() {
    check_holder("float_matrix", matrix::<f32>, |a, b| a == b);
    check_holder("double_matrix", matrix::<f64>, |a, b| a == b);
    check_holder("float_vector", vector::<f32>, |a, b| a.data() == b.data());
    check_holder("double_vector", vector::<f64>, |a, b| a.data() == b.data());
}

#[test]
fn basic_types() {
    check_holder("int32", |v| v.as_i64().unwrap() as i32, |a, b| a == b);
    check_holder("float", |v| float(v) as f32, |a, b| a == b);
    check_holder("double", float, |a, b| a == b);
    check_holder("bool", |v| v.as_bool().unwrap(), |a, b| a == b);
}

#[test]
fn vectors_of_integers_tokens_and_posteriors() {
    check_holder("int32_vector", i32s, |a, b| a == b);
    check_holder(
        "int32_vector_vector",
        |v| v.as_array().unwrap().iter().map(i32s).collect::<Vec<_>>(),
        |a, b| a == b,
    );
    check_holder(
        "int32_pair_vector",
        |v| {
            v.as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_i64().unwrap() as i32, p[1].as_i64().unwrap() as i32))
                .collect::<Vec<_>>()
        },
        |a, b| a == b,
    );
    check_holder("token", |v| v.as_str().unwrap().to_string(), |a, b| a == b);
    check_holder(
        "token_vector",
        |v| {
            v.as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        },
        |a, b| a == b,
    );
    check_holder(
        "posterior",
        |v| -> Posterior {
            v.as_array()
                .unwrap()
                .iter()
                .map(|frame| {
                    frame
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| (p[0].as_i64().unwrap() as i32, float(&p[1]) as f32))
                        .collect()
                })
                .collect()
        },
        |a, b| a == b,
    );
}

/// `feats.scp` (written by Kaldi's `ark,scp:`) reads the same matrices as the archive,
/// sequentially and by key, and our `ark,scp:` writes the same archive and the same
/// offsets.
#[test]
fn ark_scp_offsets() {
    for (suffix, t) in [("", ""), ("_t", ",t")] {
        let from_ark: Vec<(String, Matrix<f32>)> =
            read_all(&format!("ark:{}", golden(&format!("feats{suffix}.ark"))));
        let scp = golden(&format!("feats{suffix}.scp"));
        let from_scp: Vec<(String, Matrix<f32>)> = read_all(&format!("scp:{scp}"));
        assert_eq!(from_ark.len(), 4);
        assert_eq!(from_ark, from_scp);
        let mut random =
            RandomAccessTableReader::<Matrix<f32>>::open(&format!("scp:{scp}")).unwrap();
        for (k, v) in from_ark.iter().rev() {
            assert_eq!(&random.get(k).unwrap().unwrap(), v);
        }
        assert!(random.get("utt9").unwrap().is_none());

        let dir = scratch(&format!("feats{suffix}"));
        let (ark, out_scp) = (dir.join("feats.ark"), dir.join("feats.scp"));
        let spec = format!("ark,scp{t}:{},{}", ark.display(), out_scp.display());
        let mut writer = TableWriter::<Matrix<f32>>::create(&spec).unwrap();
        for (k, v) in &from_ark {
            writer.write(k, v).unwrap();
        }
        writer.finish().unwrap();
        assert_eq!(
            std::fs::read(&ark).unwrap(),
            std::fs::read(golden(&format!("feats{suffix}.ark"))).unwrap()
        );
        let ours = std::fs::read_to_string(&out_scp).unwrap().replace(
            &ark.display().to_string(),
            &golden(&format!("feats{suffix}.ark")),
        );
        assert_eq!(ours, std::fs::read_to_string(&scp).unwrap());
    }
}

/// `[r0:r1]` and `[r0:r1,c0:c1]` on scp lines, against what Kaldi read through them.
#[test]
fn scp_ranges() {
    let expected: Vec<(String, Matrix<f32>)> =
        read_all(&format!("ark:{}", golden("ranges_expected.ark")));
    let got: Vec<(String, Matrix<f32>)> = read_all(&format!("scp:{}", golden("ranges.scp")));
    assert_eq!(got, expected);
    assert_eq!(got[3].1.shape(), (2, 6)); // [8:11] on 10 rows: Kaldi's tolerance, clipped
    let mut random =
        RandomAccessTableReader::<Matrix<f64>>::open(&format!("scp:{}", golden("ranges.scp")))
            .unwrap();
    let r2 = random.get("r2").unwrap().unwrap();
    assert_eq!(r2.shape(), (7, 4));
    assert_eq!(r2[(0, 0)], expected[1].1[(0, 0)] as f64);
}

fn method_of(key: &str) -> CompressionMethod {
    let code: i32 = key[1..2].parse().unwrap();
    CompressionMethod::from_kaldi_code(code).unwrap()
}

/// Compressing the inputs with the method in each key gives Kaldi's archive byte for
/// byte, and decompressing gives Kaldi's floats.
#[test]
fn compressed_matrices_match_kaldi() {
    let inputs: Vec<(String, Matrix<f32>)> =
        read_all(&format!("ark:{}", golden("compressed_input.ark")));
    let golden_cm: Vec<(String, CompressedMatrix)> =
        read_all(&format!("ark:{}", golden("compressed.ark")));
    assert_eq!(golden_cm.len(), 7 * inputs.len());
    let dir = scratch("compressed");
    let out = dir.join("compressed.ark");
    let mut writer =
        TableWriter::<CompressedMatrix>::create(&format!("ark:{}", out.display())).unwrap();
    for (key, kaldi) in &golden_cm {
        let name = &key[3..];
        let input = &inputs.iter().find(|(k, _)| k == name).unwrap().1;
        let ours = CompressedMatrix::compress(input, method_of(key)).unwrap();
        assert_eq!(&ours, kaldi, "{key}");
        writer.write(key, &ours).unwrap();
    }
    writer.finish().unwrap();
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(golden("compressed.ark")).unwrap()
    );

    let decoded: Vec<(String, Matrix<f32>)> =
        read_all(&format!("ark:{}", golden("compressed_decoded.ark")));
    // Matrix<f32> reads CM/CM2/CM3 as Kaldi's Matrix::Read does
    let as_matrix: Vec<(String, Matrix<f32>)> =
        read_all(&format!("ark:{}", golden("compressed.ark")));
    assert_eq!(as_matrix, decoded);
    let as_double: Vec<(String, Matrix<f64>)> =
        read_all(&format!("ark:{}", golden("compressed.ark")));
    for ((key, ours), (_, kaldi)) in golden_cm.iter().zip(&decoded) {
        assert_eq!(&ours.to_matrix::<f32>(), kaldi, "{key}");
    }
    for ((_, wide), (_, narrow)) in as_double.iter().zip(&decoded) {
        let widened: Vec<f64> = narrow.rows().flatten().map(|&x| x as f64).collect();
        assert_eq!(wide.rows().flatten().copied().collect::<Vec<_>>(), widened);
    }
}

/// Kaldi writes the empty compressed matrix with 4 bytes too many; we read it as empty
/// and write the 16 header bytes Kaldi's reader takes.
#[test]
fn empty_compressed_matrix() {
    let got: Vec<(String, CompressedMatrix)> =
        read_all(&format!("ark:{}", golden("compressed_empty.ark")));
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].1.num_rows(), got[0].1.num_cols()), (0, 0));
    let mut out = Vec::new();
    CompressedMatrix::empty().write_kaldi(&mut out).unwrap();
    assert_eq!(out, b"CM \0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
    let m: Vec<(String, Matrix<f32>)> =
        read_all(&format!("ark:{}", golden("compressed_empty.ark")));
    assert_eq!(m[0].1.shape(), (0, 0));
}
