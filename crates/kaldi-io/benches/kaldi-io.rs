//! Benchmarks of kaldi-io against kaldi-native-io (`benches/peers/kaldi-io.py`) and `cat`.
//!
//! Inputs (the same in the peer script): utterance `i` (0-based) is a 500 x 80 f32 matrix
//! of `20u - 10`, `u = next_f64()` from `benches::SplitMix64::new(1000 + i)`, row-major;
//! 1,000 utterances (20 under `ARRAYS_BENCH_QUICK`), keys `utt0000`, `utt0001`, ...
//! Each side writes its own archives (`ark,scp:`, float and SpeechFeature-compressed)
//! under the target dir (`kaldi-io-bench/`), outside the timed region.
//! - `read_scp_float`: every matrix of the float archive, in order, through its scp;
//!   throughput = the archive's bytes. `peer_cat__read_scp_float`: the system's `cat
//!   feats.ark > /dev/null` as a child process (its start included: about a millisecond),
//!   the page-cache ceiling. `peer_memcpy__read_scp_float`: each matrix's bytes copied from
//!   the archive in memory into one reused buffer, the floor of one copy of the data.
//! - `read_scp_float_into`: `read_scp_float` through `next_into`, every matrix read into
//!   one reused `Matrix` (the peer: kaldi-native-io's views of its reader's matrix, not
//!   copied).
//! - `read_scp_compressed`: the compressed archive through its scp, decompressed to f32;
//!   `read_scp_compressed_into` through `next_into` (the peer: views, not copied).
//! - `random_access_scp`: `get` of every key through the float scp in a shuffled order
//!   (Fisher-Yates with `SplitMix64::new(7).below`, from the last position down).
//!   `random_access_scp_into`: the same through `get_into`, into one reused `Matrix` (the
//!   peer: kaldi-native-io's views, not copied).
//! - `compress_speech_feature`: compressing utterance 0 with `SpeechFeature`.
//! - `read_scp_float_bg`: `read_scp_float` with the `bg` option (`scp,bg:`), the reading
//!   in a background thread.
//! - `copy_feats_compress` / `copy_feats_compress_bg`: Kaldi's `copy-feats --compress=true
//!   --compression-method=2 scp:first.scp ark:/dev/null` over the first 100 utterances
//!   (`first.scp`: the first 100 lines of the float scp): read, compress with
//!   `SpeechFeature`, write; with `bg`, reading overlaps compressing.

#![allow(missing_docs)]

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dense_matrix::{CompressedMatrix, CompressionMethod, Matrix};
use kaldi_io::{RandomAccessTableReader, SequentialTableReader, TableWriter};

fn utterance(i: usize) -> Matrix<f32> {
    let mut rng = benches::SplitMix64::new(1000 + i as u64);
    let data = (0..500 * 80)
        .map(|_| (20.0 * rng.next_f64() - 10.0) as f32)
        .collect();
    Matrix::from_vec(500, 80, data).expect("500 x 80")
}

fn bench_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("kaldi-io-bench").join("ours")
}

/// The byte ranges of the matrices' elements in a float archive of 500 x 80 matrices:
/// each entry is `key \0BFM `, two int32 sizes (5 bytes each) and the elements.
fn record_ranges(ark: &[u8]) -> Vec<std::ops::Range<usize>> {
    let len = 500 * 80 * 4;
    let mut ranges = Vec::new();
    let mut at = 0;
    while at < ark.len() {
        let key = ark[at..].iter().position(|&b| b == b' ').expect("a key");
        let start = at + key + 1 + 2 + 3 + 10;
        ranges.push(start..start + len);
        at = start + len;
    }
    ranges
}

fn kaldi_io(c: &mut Criterion) {
    let n = benches::size(1000, 50);
    let dir = bench_dir();
    std::fs::create_dir_all(&dir).expect("bench dir");
    let (ark, scp) = (dir.join("feats.ark"), dir.join("feats.scp"));
    let (cark, cscp) = (dir.join("feats_cm.ark"), dir.join("feats_cm.scp"));
    let mut plain =
        TableWriter::<Matrix<f32>>::create(&format!("ark,scp:{},{}", ark.display(), scp.display()))
            .unwrap();
    let mut compressed = TableWriter::<CompressedMatrix>::create(&format!(
        "ark,scp:{},{}",
        cark.display(),
        cscp.display()
    ))
    .unwrap();
    for i in 0..n {
        let m = utterance(i);
        let key = format!("utt{i:04}");
        plain.write(&key, &m).unwrap();
        let cm = CompressedMatrix::compress(&m, CompressionMethod::SpeechFeature).unwrap();
        compressed.write(&key, &cm).unwrap();
    }
    plain.finish().unwrap();
    compressed.finish().unwrap();
    let ark_bytes = std::fs::metadata(&ark).unwrap().len();
    println!(
        "kaldi-io bench: {n} utterances of 500 x 80, {ark_bytes} bytes in {}",
        ark.display()
    );

    let mut group = c.benchmark_group("kaldi-io");
    group.throughput(Throughput::Bytes(ark_bytes));
    let rspecifier = format!("scp:{}", scp.display());
    group.bench_function("read_scp_float", |b| {
        b.iter(|| {
            let mut rows = 0;
            for entry in SequentialTableReader::<Matrix<f32>>::open(&rspecifier).unwrap() {
                rows += entry.unwrap().1.num_rows();
            }
            black_box(rows)
        })
    });
    group.bench_function("read_scp_float_into", |b| {
        b.iter(|| {
            let mut reader = SequentialTableReader::<Matrix<f32>>::open(&rspecifier).unwrap();
            let mut m = Matrix::empty();
            let mut rows = 0;
            while reader.next_into(&mut m).unwrap().is_some() {
                rows += m.num_rows();
            }
            black_box(rows)
        })
    });
    group.bench_function("peer_cat__read_scp_float", |b| {
        let sink = || std::fs::File::create("/dev/null").unwrap();
        b.iter(|| {
            let cat = std::process::Command::new("cat")
                .arg(&ark)
                .stdout(sink())
                .status()
                .unwrap();
            assert!(cat.success(), "cat {}", ark.display())
        })
    });
    // the archive's records copied out of memory into one reused buffer: one copy of the
    // data and nothing else, the floor of any reader that hands out the values
    let bytes = std::fs::read(&ark).unwrap();
    let records = record_ranges(&bytes);
    group.bench_function("peer_memcpy__read_scp_float", |b| {
        let mut buffer = vec![0u8; 500 * 80 * 4];
        b.iter(|| {
            for range in &records {
                buffer.copy_from_slice(&bytes[range.clone()]);
                black_box(&mut buffer);
            }
        })
    });
    drop(bytes);
    let crspecifier = format!("scp:{}", cscp.display());
    group.bench_function("read_scp_compressed", |b| {
        b.iter(|| {
            let mut rows = 0;
            for entry in SequentialTableReader::<Matrix<f32>>::open(&crspecifier).unwrap() {
                rows += entry.unwrap().1.num_rows();
            }
            black_box(rows)
        })
    });
    group.bench_function("read_scp_compressed_into", |b| {
        b.iter(|| {
            let mut reader = SequentialTableReader::<Matrix<f32>>::open(&crspecifier).unwrap();
            let mut m = Matrix::empty();
            let mut rows = 0;
            while reader.next_into(&mut m).unwrap().is_some() {
                rows += m.num_rows();
            }
            black_box(rows)
        })
    });
    let keys = benches::shuffled_keys(n);
    group.bench_function("random_access_scp", |b| {
        b.iter(|| {
            let mut reader = RandomAccessTableReader::<Matrix<f32>>::open(&rspecifier).unwrap();
            let mut rows = 0;
            for key in &keys {
                rows += reader.get(key).unwrap().unwrap().num_rows();
            }
            black_box(rows)
        })
    });
    group.bench_function("random_access_scp_into", |b| {
        b.iter(|| {
            let mut reader = RandomAccessTableReader::<Matrix<f32>>::open(&rspecifier).unwrap();
            let mut m = Matrix::empty();
            let mut rows = 0;
            for key in &keys {
                assert!(reader.get_into(key, &mut m).unwrap());
                rows += m.num_rows();
            }
            black_box(rows)
        })
    });
    let bg_rspecifier = format!("scp,bg:{}", scp.display());
    group.bench_function("read_scp_float_bg", |b| {
        b.iter(|| {
            let mut rows = 0;
            for entry in SequentialTableReader::<Matrix<f32>>::open(&bg_rspecifier).unwrap() {
                rows += entry.unwrap().1.num_rows();
            }
            black_box(rows)
        })
    });
    let first = dir.join("first.scp");
    let lines: Vec<String> = std::fs::read_to_string(&scp)
        .unwrap()
        .lines()
        .take(100)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&first, lines.concat()).unwrap();
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.sample_size(10);
    for (name, options) in [
        ("copy_feats_compress", ""),
        ("copy_feats_compress_bg", ",bg"),
    ] {
        let rspecifier = format!("scp{options}:{}", first.display());
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut writer = TableWriter::<CompressedMatrix>::create("ark:/dev/null").unwrap();
                for entry in SequentialTableReader::<Matrix<f32>>::open(&rspecifier).unwrap() {
                    let (key, m) = entry.unwrap();
                    let cm = CompressedMatrix::compress(&m, CompressionMethod::SpeechFeature);
                    writer.write(&key, &cm.unwrap()).unwrap();
                }
                writer.finish().unwrap();
            })
        });
    }
    group.sample_size(100);
    group.throughput(Throughput::Elements(500 * 80));
    let m = utterance(0);
    group.bench_function("compress_speech_feature", |b| {
        b.iter(|| {
            black_box(CompressedMatrix::compress(&m, CompressionMethod::SpeechFeature).unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, kaldi_io);
criterion_main!(benches);
