//! Canny edges of a PNG, timed.
//!
//! `cargo run --release -p dataflow --example canny -- IN.png OUT.png --low L --high H [--l2] [--threads N] [--repeat R]`
//!
//! Reads an 8-bit grey or RGB PNG (RGB converted to grey with OpenCV's weights), writes an
//! 8-bit PNG with 255 on edges and 0 elsewhere, runs the edge detection R times and prints
//! the median time of the edge detection alone as `edges in 12.345 ms`.

use std::process::ExitCode;
use std::time::Instant;

use dataflow::image::{canny, read_grey_png, write_grey_png, Canny, Norm};
use dataflow::Threads;

const USAGE: &str =
    "usage: canny IN.png OUT.png --low L --high H [--l2] [--threads N] [--repeat R]";

struct Args {
    input: String,
    output: String,
    params: Canny,
    repeat: usize,
}

fn parse() -> Result<Args, String> {
    let mut positional = Vec::new();
    let mut low = None;
    let mut high = None;
    let mut norm = Norm::L1;
    let mut threads = Threads::All;
    let mut repeat = 1usize;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--low" => {
                low = Some(
                    value("--low")?
                        .parse::<f64>()
                        .map_err(|e| format!("--low: {e}"))?,
                )
            }
            "--high" => {
                high = Some(
                    value("--high")?
                        .parse::<f64>()
                        .map_err(|e| format!("--high: {e}"))?,
                )
            }
            "--l2" => norm = Norm::L2,
            "--threads" => {
                let n: usize = value("--threads")?
                    .parse()
                    .map_err(|e| format!("--threads: {e}"))?;
                if n == 0 {
                    return Err("--threads must be at least 1".into());
                }
                threads = Threads::Fixed(n);
            }
            "--repeat" => {
                repeat = value("--repeat")?
                    .parse()
                    .map_err(|e| format!("--repeat: {e}"))?;
                if repeat == 0 {
                    return Err("--repeat must be at least 1".into());
                }
            }
            "-h" | "--help" => return Err(USAGE.into()),
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            _ => positional.push(arg),
        }
    }
    let [input, output]: [String; 2] = positional
        .try_into()
        .map_err(|p: Vec<String>| format!("expected IN.png and OUT.png, got {} paths", p.len()))?;
    let low = low.ok_or("--low is required")?;
    let high = high.ok_or("--high is required")?;
    Ok(Args {
        input,
        output,
        params: Canny {
            low,
            high,
            norm,
            threads,
        },
        repeat,
    })
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let grey = read_grey_png(&args.input)?;
    let pool = match args.params.threads {
        Threads::Fixed(n) => Some(rayon::ThreadPoolBuilder::new().num_threads(n).build()?),
        _ => None,
    };
    let detect = || canny(&grey, &args.params);
    let mut times = Vec::with_capacity(args.repeat);
    let mut edges = None;
    for _ in 0..args.repeat {
        let start = Instant::now();
        let out = match &pool {
            Some(p) => p.install(detect)?,
            None => detect()?,
        };
        times.push(start.elapsed().as_secs_f64());
        edges = Some(out);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    write_grey_png(&args.output, &edges.expect("repeat >= 1"))?;
    println!("edges in {:.3} ms", median * 1e3);
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("{msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
