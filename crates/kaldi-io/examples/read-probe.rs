//! The Rust half of the alternated speed comparison in `docs/kaldi-io.md` ("Speed"): times
//! the reading workloads of the `kaldi-io` benches, in turn, round after round, on an
//! archive kaldi-native-io wrote, next to the yardsticks (an in-process `cat`, the system's
//! `cat`, a bare copy of the same bytes), and prints per workload the median, fastest and
//! slowest wall time and the median CPU time of this thread (in the same form as
//! `benches/peers/kaldi-io.py probe`, its peer half).
//!
//! ```text
//! read-probe DIR PASSES WORKLOAD[,WORKLOAD...]
//! ```
//!
//! `DIR` holds `feats.ark`/`feats.scp` (1,000 matrices of 500 x 80 floats) and
//! `feats_cm.ark`/`feats_cm.scp` (the same compressed), as the peer script writes them under
//! `target/kaldi-io-bench/peer`. Workloads: `read_scp_float`, `read_scp_float_into`,
//! `random_access_scp`, `random_access_scp_into`, `read_scp_compressed`,
//! `read_scp_compressed_into` (as in the benches), `read_128k` (the archive read in 128 KiB
//! pieces into one buffer, as `cat` reads: the page-cache ceiling without a process
//! start), `cat` (the system's `cat DIR/feats.ark > /dev/null`, its start included) and
//! `memcpy` (each matrix's bytes copied from the archive, held in memory, into one reused
//! buffer: the floor of any reader that hands out the values).

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use dense_matrix::Matrix;
use kaldi_io::{RandomAccessTableReader, SequentialTableReader};

/// The CPU time of this thread, in ms.
fn thread_cpu_ms() -> f64 {
    benches::thread_cpu_seconds() * 1e3
}

/// The byte ranges of the matrices' elements in the float archive (`key \0BFM `, two
/// int32 sizes, the elements).
fn element_ranges(ark: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut at = 0;
    while at < ark.len() {
        let key = ark[at..].iter().position(|&b| b == b' ').expect("a key");
        let head = at + key + 1 + 2 + 3;
        let size = |k: usize| {
            let b = &ark[head + 5 * k + 1..head + 5 * k + 5];
            i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
        };
        let start = head + 10;
        let end = start + size(0) * size(1) * 4;
        ranges.push(start..end);
        at = end;
    }
    ranges
}

struct Inputs {
    dir: String,
    keys: Vec<String>,
    ark: Vec<u8>,
    ranges: Vec<std::ops::Range<usize>>,
}

/// Runs one workload once; returns a count so that nothing is optimised away.
fn run(workload: &str, inputs: &Inputs, reused: &mut Matrix<f32>) -> usize {
    let dir = &inputs.dir;
    let (scp, cscp) = (
        format!("scp:{dir}/feats.scp"),
        format!("scp:{dir}/feats_cm.scp"),
    );
    let mut count = 0;
    let mut sequential = |rspecifier: &str, into: bool, reused: &mut Matrix<f32>| {
        let mut reader = SequentialTableReader::<Matrix<f32>>::open(rspecifier).unwrap();
        if into {
            while reader.next_into(reused).unwrap().is_some() {
                count += reused.num_rows();
            }
        } else {
            for entry in reader {
                count += entry.unwrap().1.num_rows();
            }
        }
        count
    };
    match workload {
        "read_scp_float" => sequential(&scp, false, reused),
        "read_scp_float_into" => sequential(&scp, true, reused),
        "read_scp_compressed" => sequential(&cscp, false, reused),
        "read_scp_compressed_into" => sequential(&cscp, true, reused),
        "random_access_scp" | "random_access_scp_into" => {
            let mut reader = RandomAccessTableReader::<Matrix<f32>>::open(&scp).unwrap();
            for key in &inputs.keys {
                if workload == "random_access_scp" {
                    count += reader.get(key).unwrap().unwrap().num_rows();
                } else {
                    assert!(reader.get_into(key, reused).unwrap());
                    count += reused.num_rows();
                }
            }
            count
        }
        "read_128k" => {
            let mut file = std::fs::File::open(Path::new(dir).join("feats.ark")).unwrap();
            let mut buffer = vec![0u8; 1 << 17];
            loop {
                let n = file.read(&mut buffer).unwrap();
                if n == 0 {
                    break count;
                }
                count += n;
            }
        }
        "cat" => {
            let status = std::process::Command::new("cat")
                .arg(Path::new(dir).join("feats.ark"))
                .stdout(std::fs::File::create("/dev/null").unwrap())
                .status()
                .unwrap();
            assert!(status.success(), "cat");
            0
        }
        "memcpy" => {
            let mut buffer = vec![0u8; inputs.ranges[0].len()];
            for range in &inputs.ranges {
                buffer.copy_from_slice(&inputs.ark[range.clone()]);
                count += std::hint::black_box(&mut buffer)[0] as usize;
            }
            count
        }
        other => panic!("unknown workload `{other}`"),
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, passes, workloads] = &args[..] else {
        eprintln!("usage: read-probe DIR PASSES WORKLOAD[,WORKLOAD...]");
        std::process::exit(2);
    };
    let passes: usize = passes.parse().expect("PASSES is a number");
    let workloads: Vec<&str> = workloads.split(',').collect();
    let ark = if workloads.contains(&"memcpy") {
        std::fs::read(Path::new(dir).join("feats.ark")).unwrap()
    } else {
        Vec::new()
    };
    let inputs = Inputs {
        dir: dir.clone(),
        keys: benches::shuffled_keys(1000),
        ranges: element_ranges(&ark),
        ark,
    };
    let mut reused = Matrix::empty();
    let mut wall = vec![Vec::new(); workloads.len()];
    let mut cpu = vec![Vec::new(); workloads.len()];
    for pass in 0..=passes {
        for (k, workload) in workloads.iter().enumerate() {
            let (t, c) = (Instant::now(), thread_cpu_ms());
            std::hint::black_box(run(workload, &inputs, &mut reused));
            if pass > 0 {
                wall[k].push(t.elapsed().as_secs_f64() * 1e3);
                cpu[k].push(thread_cpu_ms() - c);
            }
        }
    }
    for (k, workload) in workloads.iter().enumerate() {
        let (lo, hi) = wall[k]
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        println!(
            "kaldi-io        {workload:26} wall {:7.1} ms [{lo:7.1} - {hi:7.1}]  cpu {:7.1} ms",
            median(wall[k].clone()),
            median(cpu[k].clone()),
        );
    }
}
