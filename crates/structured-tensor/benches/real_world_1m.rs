//! The full-size JSON Lines run: 1,000,000 records of the benchmark schema
//! (`benches/structured-tensor.rs`' records, SplitMix64 seed 7) read by `from_json_lines`
//! once per round, with the time of each round and the process's peak resident memory
//! during the read (Linux: `VmHWM` from `/proc/self/status`, reset through
//! `/proc/self/clear_refs` before each read), beside the resident memory before it (the
//! text in memory) and the bytes of the tensor's buffers. Not a criterion bench: one
//! read takes about a second and its memory is the point. `ARRAYS_BENCH_QUICK=1` reads
//! 100,000 records.
//!
//! Run: `cargo bench -p structured-tensor --bench real_world_1m`.

#![allow(missing_docs)]

use std::time::Instant;

use benches::records::records;
use structured_tensor::{FieldValue, JsonOptions, StructuredTensor, Values};

/// A field of `/proc/self/status` in bytes (`None` off Linux).
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The bytes of a tensor's values, bitmaps and row splits (what an Arrow result holds).
fn buffer_bytes(st: &StructuredTensor) -> usize {
    let mut n = st
        .row_partitions()
        .iter()
        .map(|p| p.row_splits().len() * 4)
        .sum::<usize>();
    for field in st.fields().values() {
        n += match field {
            FieldValue::Struct(s) => buffer_bytes(s),
            FieldValue::Array(a) => {
                let values = match a.values() {
                    Values::Str(c) => c.as_bytes().bytes().len() + (c.len() + 1) * 4,
                    Values::Bytes(c) => c.bytes().len() + (c.len() + 1) * 4,
                    Values::I64(_) | Values::F64(_) => a.values().len() * 8,
                    Values::I32(_) | Values::F32(_) => a.values().len() * 4,
                    Values::Bool(_) | Values::U8(_) => a.values().len(),
                };
                let splits: usize = a
                    .row_partitions()
                    .iter()
                    .map(|p| p.row_splits().len() * 4)
                    .sum();
                values + splits + a.validity().map_or(0, |v| v.as_bytes().len())
            }
        };
    }
    n
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn main() {
    // `real_world_1m <file>` reads the file (a fresh process, so that the memory of
    // building the records is not there to be reused); with no file (cargo passes
    // `--bench`), writes the text and starts itself on it.
    if let Some(path) = std::env::args().nth(1).filter(|a| !a.starts_with('-')) {
        return read(&path);
    }
    let n = benches::size(1_000_000, 10);
    let recs = records(n);
    let mut text = String::new();
    for r in recs.as_array().expect("a list of records") {
        text.push_str(&serde_json::to_string(r).expect("JSON"));
        text.push('\n');
    }
    drop(recs);
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target")
        })
        .join("structured-tensor-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("records-{n}.jsonl"));
    std::fs::write(&path, &text).unwrap();
    println!(
        "structured-tensor/json_lines_1m: {n} records, {:.1} MiB of JSON Lines",
        mib(text.len() as u64)
    );
    drop(text);
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success(), "the reading process failed");
}

/// Reads the JSON Lines file at `path` into memory, then from memory three times.
fn read(path: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let options = JsonOptions::default();
    for round in 0..3 {
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let before = status_bytes("VmRSS:");
        let start = Instant::now();
        let st = StructuredTensor::from_json_lines(text.as_bytes(), &options).unwrap();
        let took = start.elapsed();
        let peak = status_bytes("VmHWM:");
        let result = buffer_bytes(&st);
        match (before, peak) {
            (Some(before), Some(peak)) => println!(
                "round {round}: {:.1} ms; resident before {:.1} MiB, peak {:.1} MiB \
                 (+{:.1} MiB during the read); result buffers {:.1} MiB",
                took.as_secs_f64() * 1e3,
                mib(before),
                mib(peak),
                mib(peak.saturating_sub(before)),
                mib(result as u64)
            ),
            _ => println!(
                "round {round}: {:.1} ms; result buffers {:.1} MiB (no /proc here)",
                took.as_secs_f64() * 1e3,
                mib(result as u64)
            ),
        }
        drop(st);
    }
}
