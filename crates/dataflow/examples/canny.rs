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

/// The most repetitions `--repeat` accepts: one time (8 bytes) is kept per run for the
/// median, so this bounds that memory at 8 MB.
const MAX_REPEAT: usize = 1_000_000;

/// The most threads `--threads` accepts (each is an operating-system thread).
const MAX_THREADS: usize = 1024;

#[derive(Debug)]
struct Args {
    input: String,
    output: String,
    params: Canny,
    repeat: usize,
}

/// Reads the command line (without the program name).
fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut positional = Vec::new();
    let mut low = None;
    let mut high = None;
    let mut norm = Norm::L1;
    let mut threads = Threads::All;
    let mut repeat = 1usize;
    let mut it = args.into_iter();
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
                if !(1..=MAX_THREADS).contains(&n) {
                    return Err(format!(
                        "--threads must be between 1 and {MAX_THREADS}, got {n}"
                    ));
                }
                threads = Threads::Fixed(n);
            }
            "--repeat" => {
                repeat = value("--repeat")?
                    .parse()
                    .map_err(|e| format!("--repeat: {e}"))?;
                if !(1..=MAX_REPEAT).contains(&repeat) {
                    return Err(format!(
                        "--repeat must be between 1 and {MAX_REPEAT}, got {repeat}"
                    ));
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
    let args = match parse(std::env::args().skip(1)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(line: &str) -> Result<Args, String> {
        parse(line.split_whitespace().map(String::from))
    }

    #[test]
    fn full_command_line() {
        let a =
            parse_str("in.png out.png --low 20.5 --high 60 --l2 --threads 3 --repeat 5").unwrap();
        assert_eq!((a.input.as_str(), a.output.as_str()), ("in.png", "out.png"));
        assert_eq!(
            a.params,
            Canny {
                low: 20.5,
                high: 60.0,
                norm: Norm::L2,
                threads: Threads::Fixed(3),
            }
        );
        assert_eq!(a.repeat, 5);
        let most = parse_str("a b --low 1 --high 2 --repeat 1000000 --threads 1024").unwrap();
        assert_eq!(
            (most.repeat, most.params.threads),
            (1_000_000, Threads::Fixed(1024))
        );
    }

    #[test]
    fn defaults_and_option_order() {
        let a = parse_str("--high 9 a.png --low 3 b.png").unwrap();
        assert_eq!((a.input.as_str(), a.output.as_str()), ("a.png", "b.png"));
        assert_eq!((a.params.low, a.params.high), (3.0, 9.0));
        assert_eq!(a.params.norm, Norm::L1);
        assert_eq!(a.params.threads, Threads::All);
        assert_eq!(a.repeat, 1);
    }

    #[test]
    fn bad_command_lines_are_refused() {
        for (line, says) in [
            ("a.png b.png --high 9", "--low is required"),
            ("a.png b.png --low 1", "--high is required"),
            ("a.png --low 1 --high 2", "got 1 paths"),
            ("a b c --low 1 --high 2", "got 3 paths"),
            ("a.png b.png --low x --high 2", "--low:"),
            ("a.png b.png --low 1 --high", "--high needs a value"),
            (
                "a.png b.png --low 1 --high 2 --threads 0",
                "--threads must be between 1 and 1024, got 0",
            ),
            (
                "a.png b.png --low 1 --high 2 --threads 18446744073709551615",
                "--threads must be between 1 and 1024, got 18446744073709551615",
            ),
            (
                "a.png b.png --low 1 --high 2 --repeat 0",
                "--repeat must be between 1 and 1000000, got 0",
            ),
            (
                "a.png b.png --low 1 --high 2 --repeat 18446744073709551615",
                "--repeat must be between 1 and 1000000, got 18446744073709551615",
            ),
            (
                "a.png b.png --low 1 --high 2 --repeat 1000000000000",
                "--repeat must be between 1 and 1000000, got 1000000000000",
            ),
            (
                "a.png b.png --low 1 --high 2 --repeat 18446744073709551616",
                "--repeat: number too large",
            ),
            ("a.png b.png --low 1 --high 2 --repeat -1", "--repeat:"),
            (
                "a.png b.png --low 1 --high 2 --fast",
                "unknown option --fast",
            ),
            ("--help", "usage:"),
        ] {
            let err = parse_str(line).unwrap_err();
            assert!(err.contains(says), "{line}: {err}");
        }
    }
}
