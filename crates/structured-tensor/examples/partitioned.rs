//! Past one machine, in miniature: a dataset split into hive partitions
//! (`day=D/part-0.parquet`), each partition processed by a separate worker process, the
//! results read back as one table. An engine (Spark, Ray, DataFusion, a batch scheduler)
//! would place the workers on other machines; the files between the steps are the same.
//!
//! ```text
//! generate => write_parquet_dir(input, partition_by day)
//!          => one worker process per file: read_parquet => keep readings, add mean => write_parquet(output/day=D/part-0.parquet)
//!          => read_parquet_dir(output, Combined) => counts
//! ```
//!
//! Run: `cargo run -p structured-tensor --features parquet --example partitioned [DIR]`
//! (the files go under DIR, default `target/demo/partitioned`). The program starts itself
//! with `worker IN OUT` for each partition.
//!
//! This is the single-machine baseline, not the way to scale out: for a real cluster use
//! an engine that exists. `docs/scaling.md` runs the same kind of partitioned pipeline on
//! Ray (Ray Data over Parquet, through the Python package's `arrays.structured`), tested
//! on a two-node cluster that loses a worker and a node.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use structured_tensor::{
    parquet_dir_files, read_parquet, read_parquet_dir, write_parquet, write_parquet_dir, Array,
    ParquetOptions, PartitionMode, StructuredTensor, Update, Values,
};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A small fixed-seed generator (SplitMix64), so that every run makes the same dataset.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// Weather readings: a day, a station, 0 to 5 temperatures and a nested status struct.
fn dataset(n: usize) -> Value {
    let mut rng = Rng(2026);
    let records: Vec<Value> = (0..n)
        .map(|_| {
            let temps: Vec<f64> = (0..rng.below(6))
                .map(|_| rng.below(400) as f64 / 10.0 - 10.0)
                .collect();
            json!({
                "day": rng.below(4) as i64,
                "station": format!("s{}", rng.below(50)),
                "temps": temps,
                "status": {"ok": rng.below(10) != 0, "battery": rng.below(100) as i64},
            })
        })
        .collect();
    Value::Array(records)
}

/// The work of one partition: records with at least one reading, each with the mean of its
/// temperatures as a new field `mean_temp`.
fn process(input: &Path, output: &Path) -> Result<()> {
    let st = read_parquet(input)?;
    let temps = st
        .field_value("temps")?
        .as_array()
        .and_then(Array::to_ragged_f64)
        .ok_or("temps is not a ragged float64 field")?;
    let keep: Vec<bool> = (0..temps.dim0())
        .map(|i| temps.row_splits(1)[i + 1] > temps.row_splits(1)[i])
        .collect();
    let sums = temps.sum_per_sublist(0.0);
    let means: Vec<f64> = (0..temps.dim0())
        .filter(|&i| keep[i])
        .map(|i| sums[i] / f64::from(temps.row_splits(1)[i + 1] - temps.row_splits(1)[i]))
        .collect();
    let kept = st.boolean_mask(&keep)?;
    let result = kept.with_updates(vec![(
        "mean_temp",
        Update::set(Array::from_values(Values::F64(means.into()))),
    )])?;
    std::fs::create_dir_all(output.parent().ok_or("an output file has a directory")?)?;
    write_parquet(output, &result, &ParquetOptions::default())?;
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("worker") {
        let [_, input, output] = &args[..] else {
            return Err("usage: partitioned worker IN OUT".into());
        };
        return process(Path::new(input), Path::new(output));
    }
    let root = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/demo/partitioned"));
    let (input, output) = (root.join("input"), root.join("output"));
    for dir in [&input, &output] {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
    }

    // 1. split: one directory per day, the `day` field in the path only
    let data = StructuredTensor::from_json(&dataset(100_000))?;
    let files = write_parquet_dir(&input, &data, &["day"], &ParquetOptions::default())?;
    println!(
        "wrote {} records as {} partitions under {}",
        data.nrows().unwrap_or(0),
        files.len(),
        input.display()
    );

    // 2. process: one worker process per partition, all at once; each writes its result
    //    under the same partition path of the output directory
    let this_program = std::env::current_exe()?;
    let mut workers = Vec::new();
    for part in parquet_dir_files(&input)? {
        let relative = part.path.strip_prefix(&input)?;
        let target = output.join(relative);
        let child = Command::new(&this_program)
            .arg("worker")
            .arg(&part.path)
            .arg(&target)
            .spawn()?;
        println!("worker {} <- {}", child.id(), relative.display());
        workers.push((relative.to_path_buf(), child));
    }
    for (relative, mut child) in workers {
        let status = child.wait()?;
        if !status.success() {
            return Err(format!("the worker of {} failed ({status})", relative.display()).into());
        }
    }

    // 3. read the results back as one table, the partition key again a field
    let combined = read_parquet_dir(&output, PartitionMode::Combined)?.remove(0);
    println!(
        "read back {} records with at least one reading; fields {:?}",
        combined.nrows().unwrap_or(0),
        combined.field_names()
    );
    let per_file = read_parquet_dir(&output, PartitionMode::PerFile)?;
    for (part, tensor) in parquet_dir_files(&output)?.iter().zip(&per_file) {
        println!("  {:?}: {} records", part.keys, tensor.nrows().unwrap_or(0));
    }
    let input_temps = data
        .field_value("temps")?
        .as_array()
        .and_then(Array::to_ragged_f64)
        .ok_or("temps is not a ragged float64 field")?;
    let expected = input_temps
        .row_splits(1)
        .windows(2)
        .filter(|w| w[1] > w[0])
        .count();
    println!(
        "records with readings in the input: {expected} (the same count: {})",
        expected == combined.nrows().unwrap_or(0)
    );
    Ok(())
}
