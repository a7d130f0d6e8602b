//! `cargo xtask fuzz [target] [--seconds N]`: the coverage-guided fuzzing campaign.
//!
//! The engine is AFL++ through cargo-afl, which builds AFL++ from the sources inside its own
//! crate (nothing is downloaded outside crates.io) and runs on stable Rust. This command
//! installs cargo-afl when it is missing, builds the harness (`fuzz/afl`, a workspace of its
//! own, into `target/afl/`), then fuzzes each target for N seconds on one core, starting
//! from `fuzz/corpus/<target>/`. Afterwards it minimises the queue (`afl-cmin`) back into
//! the corpus, copies every crash and hang to `fuzz/found/<target>/`, and prints executions,
//! execs/s and crashes per target.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{cargo, root, run_step, target_dir, Failure, Step};

/// Seconds per target when `--seconds` is not given.
pub const DEFAULT_SECONDS: u64 = 60;

/// Corpus files larger than this are not checked in (the corpus must stay small).
const MAX_CORPUS_FILE: u64 = 64 << 10;

/// The options of `cargo xtask fuzz`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// One target, or every target when `None`.
    pub target: Option<String>,
    /// Seconds of fuzzing per target.
    pub seconds: u64,
}

impl Options {
    /// Parses `[target] [--seconds N]` (also `--seconds=N`).
    pub fn parse(args: &[String]) -> Result<Options, Failure> {
        let mut target = None;
        let mut seconds = None;
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            let value = if arg == "--seconds" {
                Some(rest.next().ok_or_else(|| {
                    Failure("fuzz: `--seconds` needs a number of seconds".to_string())
                })?)
            } else {
                arg.strip_prefix("--seconds=").map(|_| arg)
            };
            if let Some(value) = value {
                let value = value.strip_prefix("--seconds=").unwrap_or(value);
                if seconds.is_some() {
                    return Err(Failure("fuzz: `--seconds` given twice".to_string()));
                }
                seconds = Some(parse_seconds(value)?);
            } else if arg.starts_with('-') {
                return Err(Failure(format!("fuzz: unknown option `{arg}`")));
            } else if let Some(first) = &target {
                return Err(Failure(format!(
                    "fuzz: one target at most (got `{first}` and `{arg}`)"
                )));
            } else {
                target = Some(arg.clone());
            }
        }
        Ok(Options {
            target,
            seconds: seconds.unwrap_or(DEFAULT_SECONDS),
        })
    }
}

fn parse_seconds(value: &str) -> Result<u64, Failure> {
    match value.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Failure(format!(
            "fuzz: `--seconds` takes a positive whole number, not `{value}`"
        ))),
    }
}

/// The figures of one target's run, from AFL's `fuzzer_stats`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Executions of the target.
    pub execs: u64,
    /// Seconds fuzzed.
    pub seconds: u64,
    /// Distinct crashes AFL saved.
    pub crashes: u64,
    /// Distinct hangs AFL saved.
    pub hangs: u64,
    /// Entries in the minimised corpus afterwards.
    pub corpus: usize,
}

impl Figures {
    /// Executions per second over the run.
    pub fn execs_per_sec(&self) -> f64 {
        self.execs as f64 / self.seconds.max(1) as f64
    }
}

/// Reads `key : value` lines of AFL's `fuzzer_stats` into figures.
pub fn parse_stats(text: &str) -> Figures {
    let values: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    let number = |key: &str| {
        values
            .get(key)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Figures {
        execs: number("execs_done"),
        seconds: number("run_time"),
        crashes: number("saved_crashes"),
        hangs: number("saved_hangs"),
        corpus: 0,
    }
}

/// A 64-bit FNV-1a hash, for content-addressed file names.
pub fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Runs the campaign.
pub fn run(options: &Options) -> Step {
    let fuzz = root().join("fuzz");
    let known = known_targets(&fuzz)?;
    let targets = match &options.target {
        Some(t) if known.contains(t) => vec![t.clone()],
        Some(t) => {
            return Err(Failure(format!(
                "fuzz: unknown target `{t}`; targets: {}",
                known.join(", ")
            )))
        }
        None => known,
    };
    ensure_engine()?;
    let afl_target = target_dir().join("afl");
    run_step(
        "cargo afl build --release (the fuzz harness, into target/afl)",
        cargo()
            .args(["afl", "build", "--release", "--manifest-path"])
            .arg(fuzz.join("afl").join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &afl_target),
    )?;
    let harness = afl_target.join("release").join("fuzz-afl");
    let mut table = Vec::new();
    for target in &targets {
        let figures = fuzz_one(&fuzz, &harness, target, options.seconds)?;
        println!(
            "xtask: fuzz {target}: {} executions in {} s ({:.0}/s), {} crashes, {} hangs, corpus {}",
            figures.execs,
            figures.seconds,
            figures.execs_per_sec(),
            figures.crashes,
            figures.hangs,
            figures.corpus
        );
        table.push((target.clone(), figures));
    }
    println!("\n| target | executions | seconds | execs/s | crashes | hangs | corpus |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (target, f) in &table {
        println!(
            "| {target} | {} | {} | {:.0} | {} | {} | {} |",
            f.execs,
            f.seconds,
            f.execs_per_sec(),
            f.crashes,
            f.hangs,
            f.corpus
        );
    }
    let failing: Vec<&str> = table
        .iter()
        .filter(|(_, f)| f.crashes + f.hangs > 0)
        .map(|(t, _)| t.as_str())
        .collect();
    if failing.is_empty() {
        Ok(())
    } else {
        Err(Failure(format!(
            "fuzz: crashes or hangs in {} (inputs under fuzz/found/)",
            failing.join(", ")
        )))
    }
}

/// The target names: the folders of `fuzz/corpus/` (the replay test checks that every
/// target has one).
fn known_targets(fuzz: &Path) -> Result<Vec<String>, Failure> {
    let corpus = fuzz.join("corpus");
    let entries = fs::read_dir(&corpus)
        .map_err(|err| Failure(format!("fuzz: reading {}: {err}", corpus.display())))?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

/// Installs cargo-afl and builds AFL++ when they are missing.
fn ensure_engine() -> Step {
    let have_cargo_afl = cargo()
        .args(["afl", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have_cargo_afl {
        println!(
            "xtask: cargo-afl is missing; installing it from crates.io (it builds AFL++ from \
             the sources in its crate)"
        );
        run_step(
            "cargo install cargo-afl",
            cargo().args(["install", "cargo-afl", "--locked"]),
        )?;
    }
    // Once AFL++ is built for this toolchain, `cargo afl fuzz -h` prints afl-fuzz's usage
    // (and exits 1, as afl-fuzz does for `-h`); before, cargo-afl says it is not built.
    let have_afl = cargo()
        .args(["afl", "fuzz", "-h"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("Required parameters"));
    if !have_afl {
        run_step(
            "cargo afl config --build (AFL++ from cargo-afl's sources)",
            cargo().args(["afl", "config", "--build"]),
        )?;
    }
    Ok(())
}

/// The AFL++ settings for a shared machine: no CPU binding or frequency check, plain
/// status lines instead of the screen UI, and no demand on the system's core pattern.
fn afl_command(args: &[&str]) -> Command {
    let mut command = Command::new("nice");
    command
        .args(["-n", "10"])
        .arg(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .arg("afl")
        .args(args)
        .current_dir(root())
        .env("AFL_NO_UI", "1")
        .env("AFL_NO_AFFINITY", "1")
        .env("AFL_SKIP_CPUFREQ", "1")
        .env("AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES", "1")
        .env("AFL_NO_WARN_INSTABILITY", "1");
    command
}

fn fuzz_one(fuzz: &Path, harness: &Path, target: &str, seconds: u64) -> Result<Figures, Failure> {
    let corpus = fuzz.join("corpus").join(target);
    let out = fuzz.join("out").join(target);
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(&out).map_err(|e| Failure(format!("fuzz: {}: {e}", out.display())))?;
    let seconds_arg = seconds.to_string();
    let (corpus_s, out_s, harness_s) = (
        corpus.display().to_string(),
        out.display().to_string(),
        harness.display().to_string(),
    );
    // -m: 4 GiB of address space per run; -t: 2 s per input before it counts as a hang.
    let fuzz_args = [
        "fuzz",
        "-i",
        &corpus_s,
        "-o",
        &out_s,
        "-V",
        &seconds_arg,
        "-m",
        "4096",
        "-t",
        "2000",
        "--",
        &harness_s,
        target,
    ];
    run_step(
        &format!("afl-fuzz {target} for {seconds} s"),
        afl_command(&fuzz_args).stdout(Stdio::null()),
    )?;
    let stats_path = out.join("default").join("fuzzer_stats");
    let stats = fs::read_to_string(&stats_path)
        .map_err(|e| Failure(format!("fuzz: {}: {e}", stats_path.display())))?;
    let mut figures = parse_stats(&stats);
    let found = fuzz.join("found").join(target);
    for (kind, prefix) in [("crashes", "crash"), ("hangs", "hang")] {
        copy_inputs(&out.join("default").join(kind), &found, prefix, u64::MAX)?;
    }
    figures.corpus = minimise(&out, &corpus, &harness_s, target)?;
    Ok(figures)
}

/// `afl-cmin` over the queue, then the corpus keeps its seeds plus the minimised entries.
fn minimise(out: &Path, corpus: &Path, harness: &str, target: &str) -> Result<usize, Failure> {
    let queue = out.join("default").join("queue");
    let minimised = out.join("cmin");
    let (queue_s, minimised_s) = (queue.display().to_string(), minimised.display().to_string());
    let cmin_args = [
        "cmin",
        "-i",
        &queue_s,
        "-o",
        &minimised_s,
        "-m",
        "4096",
        "-t",
        "2000",
        "--",
        harness,
        target,
    ];
    run_step(
        &format!("afl-cmin {target}"),
        afl_command(&cmin_args).stdout(Stdio::null()),
    )?;
    let entries =
        fs::read_dir(corpus).map_err(|e| Failure(format!("fuzz: {}: {e}", corpus.display())))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("seed-") {
            let _ = fs::remove_file(entry.path());
        }
    }
    copy_inputs(&minimised, corpus, "id", MAX_CORPUS_FILE)?;
    Ok(fs::read_dir(corpus).map(|d| d.count()).unwrap_or(0))
}

/// Copies the inputs AFL saved in `from` (not its README) into `to`, named
/// `<prefix>-<content hash>` so that the same input is never stored twice.
fn copy_inputs(from: &Path, to: &Path, prefix: &str, max_len: u64) -> Step {
    let Ok(entries) = fs::read_dir(from) else {
        return Ok(());
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if !path.is_file() || name.as_deref() == Some("README.txt") {
            continue;
        }
        let data =
            fs::read(&path).map_err(|e| Failure(format!("fuzz: {}: {e}", path.display())))?;
        if data.len() as u64 > max_len {
            continue;
        }
        fs::create_dir_all(to).map_err(|e| Failure(format!("fuzz: {}: {e}", to.display())))?;
        let dest = to.join(format!("{prefix}-{:016x}", fnv1a(&data)));
        fs::write(&dest, &data).map_err(|e| Failure(format!("fuzz: {}: {e}", dest.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        Options::parse(&args).map_err(|Failure(message)| message)
    }

    #[track_caller]
    fn check(args: &[&str], target: Option<&str>, seconds: u64) {
        assert_eq!(
            parse(args),
            Ok(Options {
                target: target.map(str::to_string),
                seconds
            })
        );
    }

    #[test]
    fn options_parse() {
        check(&[], None, DEFAULT_SECONDS);
        check(&["json"], Some("json"), DEFAULT_SECONDS);
        check(&["--seconds", "300"], None, 300);
        check(&["json", "--seconds", "5"], Some("json"), 5);
        check(&["--seconds", "5", "json"], Some("json"), 5);
        check(&["--seconds=7", "png_pipeline"], Some("png_pipeline"), 7);
    }

    #[test]
    fn options_errors_say_what_is_wrong() {
        assert_eq!(
            parse(&["--seconds"]),
            Err("fuzz: `--seconds` needs a number of seconds".to_string())
        );
        assert_eq!(
            parse(&["--seconds", "0"]),
            Err("fuzz: `--seconds` takes a positive whole number, not `0`".to_string())
        );
        assert_eq!(
            parse(&["--seconds=-3"]),
            Err("fuzz: `--seconds` takes a positive whole number, not `-3`".to_string())
        );
        assert_eq!(
            parse(&["--seconds", "1", "--seconds", "2"]),
            Err("fuzz: `--seconds` given twice".to_string())
        );
        assert_eq!(
            parse(&["--quick"]),
            Err("fuzz: unknown option `--quick`".to_string())
        );
        assert_eq!(
            parse(&["json", "png_pipeline"]),
            Err("fuzz: one target at most (got `json` and `png_pipeline`)".to_string())
        );
    }

    #[test]
    fn stats_are_read_from_afl_lines() {
        let text = "start_time        : 1700000000\nrun_time          : 120\n\
                    execs_done        : 360000\nexecs_per_sec     : 2999.50\n\
                    saved_crashes     : 2\nsaved_hangs       : 1\n";
        let f = parse_stats(text);
        assert_eq!(
            f,
            Figures {
                execs: 360_000,
                seconds: 120,
                crashes: 2,
                hangs: 1,
                corpus: 0
            }
        );
        assert_eq!(f.execs_per_sec(), 3000.0);
        assert_eq!(parse_stats(""), Figures::default());
    }

    #[test]
    fn fnv1a_matches_the_reference_values() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn every_corpus_folder_is_a_target() {
        let names = known_targets(&root().join("fuzz")).unwrap();
        assert!(names.iter().any(|n| n == "json"), "{names:?}");
        assert!(names.iter().any(|n| n == "fsa_from_arcs"), "{names:?}");
    }
}
