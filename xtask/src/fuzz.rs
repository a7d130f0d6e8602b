//! `cargo xtask fuzz [target] [--seconds N] [--execs N]`: the coverage-guided fuzzing
//! campaign.
//!
//! The engine is AFL++ through cargo-afl, which builds AFL++ from the sources inside its own
//! crate (nothing is downloaded outside crates.io) and runs on stable Rust. This command
//! installs cargo-afl when it is missing, builds the harness (`fuzz/afl`, a workspace of its
//! own, into `target/afl/`), then fuzzes each target for N seconds on one core (rayon held
//! to one thread unless `RAYON_NUM_THREADS` says otherwise), starting from
//! `fuzz/corpus/<target>/`, or until N executions when `--execs` is given, whichever comes
//! first. Afterwards it minimises the queue (`afl-cmin`) back into the corpus (the
//! smallest entries first, within a byte budget per target), copies every crash and hang to
//! `fuzz/found/<target>/`, prints executions, execs/s and crashes per target, and appends
//! each run to `fuzz/campaigns.tsv`, the checked-in ledger whose totals per target
//! docs/RELIABILITY.md reports.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{cargo, root, run_step, target_dir, Failure, Step};

/// Seconds per target when `--seconds` is not given.
pub const DEFAULT_SECONDS: u64 = 60;

/// Corpus files larger than this are not checked in (the corpus must stay small).
const MAX_CORPUS_FILE: u64 = 64 << 10;

/// The bytes of minimised entries one target's corpus keeps (its seeds aside): with 17
/// targets this keeps the whole corpus under the 4 MiB the replay test allows.
const CORPUS_BUDGET: u64 = 192 << 10;

/// The header line of the ledger `fuzz/campaigns.tsv`.
const LEDGER_HEADER: &str = "date\tcommit\ttarget\texecutions\tseconds\tcrashes\thangs";

/// The options of `cargo xtask fuzz`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// One target, or every target when `None`.
    pub target: Option<String>,
    /// Seconds of fuzzing per target.
    pub seconds: u64,
    /// Executions per target after which AFL++ stops early, if given.
    pub execs: Option<u64>,
}

impl Options {
    /// Parses `[target] [--seconds N]` (also `--seconds=N`).
    pub fn parse(args: &[String]) -> Result<Options, Failure> {
        let mut target = None;
        let mut seconds = None;
        let mut execs = None;
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (arg.as_str(), None),
            };
            let slot = match name {
                "--seconds" => &mut seconds,
                "--execs" => &mut execs,
                _ if arg.starts_with('-') => {
                    return Err(Failure(format!("fuzz: unknown option `{arg}`")));
                }
                _ => {
                    if let Some(first) = &target {
                        return Err(Failure(format!(
                            "fuzz: one target at most (got `{first}` and `{arg}`)"
                        )));
                    }
                    target = Some(arg.clone());
                    continue;
                }
            };
            let value = match inline {
                Some(value) => value,
                None => rest
                    .next()
                    .ok_or_else(|| Failure(format!("fuzz: `{name}` needs a number")))?,
            };
            if slot.is_some() {
                return Err(Failure(format!("fuzz: `{name}` given twice")));
            }
            *slot = Some(parse_positive(name, value)?);
        }
        Ok(Options {
            target,
            seconds: seconds.unwrap_or(DEFAULT_SECONDS),
            execs,
        })
    }
}

fn parse_positive(name: &str, value: &str) -> Result<u64, Failure> {
    match value.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Failure(format!(
            "fuzz: `{name}` takes a positive whole number, not `{value}`"
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
    // the commit the harness is built from, for the ledger
    let commit = head_commit();
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
        let figures = fuzz_one(&fuzz, &harness, target, options)?;
        record(&fuzz.join("campaigns.tsv"), &commit, target, &figures)?;
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

/// Holds a campaign's harness to one rayon thread, unless the caller chose a count
/// (`chosen`): a campaign is one core's, and a harness that reaches rayon
/// (`dense_intersect`) ran 531 inputs/s with a pool of two threads beside a second
/// campaign, 987/s with one.
fn one_rayon_thread(command: &mut Command, chosen: bool) {
    if !chosen {
        command.env("RAYON_NUM_THREADS", "1");
    }
}

/// The AFL++ settings for a shared machine: no CPU binding or frequency check, plain
/// status lines instead of the screen UI, and no demand on the system's core pattern;
/// temporary files in `memory` when given (see [`memory_tmpdir`]).
fn afl_command(args: &[&str], memory: Option<&Path>) -> Command {
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
    // The targets that write files (kaldi_tables, parquet_read, parquet_dir) write them
    // under the temporary folder, and AFL++ its current input under AFL_TMPDIR: in memory
    // where the system has a tmpfs, so that creating and removing them per input does not
    // go through the disk's journal.
    if let Some(memory) = memory {
        command.env("TMPDIR", memory).env("AFL_TMPDIR", memory);
    }
    command
}

/// `target`'s folder under `/dev/shm`, made if needed, when that is a writable folder (a
/// tmpfs on Linux): one per target, so that campaigns of two targets side by side do not
/// both claim AFL++'s one current-input file there.
fn memory_tmpdir(target: &str) -> Option<PathBuf> {
    let dir = Path::new("/dev/shm").join(format!("xtask-fuzz-{target}"));
    fs::create_dir_all(&dir).ok()?;
    let probe = dir.join(format!("probe-{}", std::process::id()));
    fs::write(&probe, b"").ok()?;
    let _ = fs::remove_file(&probe);
    Some(dir)
}

fn fuzz_one(
    fuzz: &Path,
    harness: &Path,
    target: &str,
    options: &Options,
) -> Result<Figures, Failure> {
    let seconds = options.seconds;
    let corpus = fuzz.join("corpus").join(target);
    let out = fuzz.join("out").join(target);
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(&out).map_err(|e| Failure(format!("fuzz: {}: {e}", out.display())))?;
    // this run's own copy of the harness: another campaign's build may replace the built
    // binary while this one's AFL++ starts or minimises
    let own = out.join("harness");
    fs::copy(harness, &own).map_err(|e| {
        Failure(format!(
            "fuzz: copying {} to {}: {e}",
            harness.display(),
            own.display()
        ))
    })?;
    let harness = own.as_path();
    let seconds_arg = seconds.to_string();
    let (corpus_s, out_s, harness_s) = (
        corpus.display().to_string(),
        out.display().to_string(),
        harness.display().to_string(),
    );
    let execs_arg = options.execs.map(|n| n.to_string());
    // -m: 4 GiB of address space per run; -t: 2 s per input before it counts as a hang;
    // -V: seconds; -E: executions (AFL++ stops at whichever comes first).
    let mut fuzz_args = vec![
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
    ];
    if let Some(execs) = &execs_arg {
        fuzz_args.extend(["-E", execs.as_str()]);
    }
    fuzz_args.extend(["--", &harness_s, target]);
    // AFL++ prints its status, and why it stopped when it fails, on stdout: kept in a log
    // beside the run's output (`fuzz/out/<target>/afl-fuzz.log`), named when it fails
    let log_path = out.join("afl-fuzz.log");
    let log = fs::File::create(&log_path)
        .map_err(|e| Failure(format!("fuzz: {}: {e}", log_path.display())))?;
    let memory = TempFolder(memory_tmpdir(target));
    let mut afl = afl_command(&fuzz_args, memory.0.as_deref());
    afl.stdout(log);
    one_rayon_thread(&mut afl, std::env::var_os("RAYON_NUM_THREADS").is_some());
    run_step(
        &format!(
            "afl-fuzz {target} for {seconds} s (its output: {})",
            log_path.display()
        ),
        &mut afl,
    )?;
    let stats_path = out.join("default").join("fuzzer_stats");
    let stats = fs::read_to_string(&stats_path)
        .map_err(|e| Failure(format!("fuzz: {}: {e}", stats_path.display())))?;
    let mut figures = parse_stats(&stats);
    let found = fuzz.join("found").join(target);
    for (kind, prefix) in [("crashes", "crash"), ("hangs", "hang")] {
        copy_inputs(&out.join("default").join(kind), &found, prefix)?;
    }
    figures.corpus = minimise(&out, &corpus, &harness_s, target, memory.0.as_deref())?;
    Ok(figures)
}

/// A campaign's temporary folder ([`memory_tmpdir`]), removed when the campaign ends,
/// whether it succeeded or failed.
struct TempFolder(Option<PathBuf>);

impl Drop for TempFolder {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

/// `afl-cmin` over the queue, then the corpus keeps its seeds plus the minimised entries.
fn minimise(
    out: &Path,
    corpus: &Path,
    harness: &str,
    target: &str,
    memory: Option<&Path>,
) -> Result<usize, Failure> {
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
        afl_command(&cmin_args, memory).stdout(Stdio::null()),
    )?;
    let entries =
        fs::read_dir(corpus).map_err(|e| Failure(format!("fuzz: {}: {e}", corpus.display())))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("seed-") {
            let _ = fs::remove_file(entry.path());
        }
    }
    let kept = within_budget(&minimised, MAX_CORPUS_FILE, CORPUS_BUDGET)?;
    for path in &kept {
        copy_input(path, corpus, "id")?;
    }
    Ok(fs::read_dir(corpus).map(|d| d.count()).unwrap_or(0))
}

/// The files of `dir` of at most `max_len` bytes, smallest first (ties by name), as many as
/// fit in `budget` bytes together: a size-bounded cut of a minimised queue.
fn within_budget(dir: &Path, max_len: u64, budget: u64) -> Result<Vec<PathBuf>, Failure> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut sized = Vec::new();
    for path in entries.flatten().map(|e| e.path()) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if !path.is_file() || name.as_deref() == Some("README.txt") {
            continue;
        }
        let len = fs::metadata(&path)
            .map_err(|e| Failure(format!("fuzz: {}: {e}", path.display())))?
            .len();
        if len <= max_len {
            sized.push((len, path));
        }
    }
    sized.sort();
    let mut total = 0u64;
    Ok(sized
        .into_iter()
        .take_while(|(len, _)| {
            total += len;
            total <= budget
        })
        .map(|(_, path)| path)
        .collect())
}

/// Appends one run, fuzzed at `commit`, to the ledger (made with its header when missing)
/// and prints the target's executions over every run the ledger holds since its last crash
/// or hang.
fn record(ledger: &Path, commit: &str, target: &str, figures: &Figures) -> Step {
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let mut text = fs::read_to_string(ledger).unwrap_or_default();
    if text.trim().is_empty() {
        text = format!("{LEDGER_HEADER}\n");
    }
    text.push_str(&format!(
        "{date}\t{commit}\t{target}\t{}\t{}\t{}\t{}\n",
        figures.execs, figures.seconds, figures.crashes, figures.hangs
    ));
    fs::write(ledger, &text).map_err(|e| Failure(format!("fuzz: {}: {e}", ledger.display())))?;
    println!(
        "xtask: fuzz {target}: {} executions in all since its last finding (fuzz/campaigns.tsv)",
        clean_executions(&text, target)
    );
    Ok(())
}

/// The checked-out commit (12 hex digits), with `+` when the working tree differs from it.
fn head_commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|out| !out.is_empty());
    if dirty {
        format!("{head}+")
    } else {
        head
    }
}

/// The executions of `target` over the ledger's runs after its last run with a crash or a
/// hang (a run with findings resets the count: its fixes change the code under test).
pub fn clean_executions(ledger: &str, target: &str) -> u64 {
    let mut total = 0;
    for line in ledger.lines().skip(1) {
        let cells: Vec<&str> = line.split('\t').collect();
        if cells.len() != 7 || cells[2] != target {
            continue;
        }
        let number = |i: usize| cells[i].parse::<u64>().unwrap_or(0);
        if number(5) + number(6) > 0 {
            total = 0;
        } else {
            total += number(3);
        }
    }
    total
}

/// Copies the inputs AFL saved in `from` (not its README) into `to`.
fn copy_inputs(from: &Path, to: &Path, prefix: &str) -> Step {
    let Ok(entries) = fs::read_dir(from) else {
        return Ok(());
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if path.is_file() && name.as_deref() != Some("README.txt") {
            copy_input(&path, to, prefix)?;
        }
    }
    Ok(())
}

/// Copies one input into `to`, named `<prefix>-<content hash>` so that the same input is
/// never stored twice.
fn copy_input(path: &Path, to: &Path, prefix: &str) -> Step {
    let data = fs::read(path).map_err(|e| Failure(format!("fuzz: {}: {e}", path.display())))?;
    fs::create_dir_all(to).map_err(|e| Failure(format!("fuzz: {}: {e}", to.display())))?;
    let dest = to.join(format!("{prefix}-{:016x}", fnv1a(&data)));
    fs::write(&dest, &data).map_err(|e| Failure(format!("fuzz: {}: {e}", dest.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        Options::parse(&args).map_err(|Failure(message)| message)
    }

    #[test]
    fn a_campaign_runs_rayon_on_one_thread_unless_told_otherwise() {
        let rayon = |command: &Command| {
            command
                .get_envs()
                .find(|(name, _)| *name == "RAYON_NUM_THREADS")
                .and_then(|(_, value)| value.map(|v| v.to_string_lossy().into_owned()))
        };
        let mut command = afl_command(&["fuzz"], None);
        one_rayon_thread(&mut command, false);
        assert_eq!(rayon(&command).as_deref(), Some("1"));
        // a count the caller set stays in the inherited environment, untouched
        let mut command = afl_command(&["fuzz"], None);
        one_rayon_thread(&mut command, true);
        assert_eq!(rayon(&command), None);
    }

    #[test]
    fn campaigns_of_two_targets_keep_their_temporary_files_apart() {
        let (a, b) = (memory_tmpdir("xtask_test_a"), memory_tmpdir("xtask_test_b"));
        match (a, b) {
            (Some(a), Some(b)) => {
                assert_ne!(a, b);
                assert!(a.is_dir() && b.is_dir());
                let tmpdir = afl_command(&["fuzz"], Some(&a))
                    .get_envs()
                    .find(|(name, _)| *name == "AFL_TMPDIR")
                    .and_then(|(_, value)| value.map(PathBuf::from));
                assert_eq!(tmpdir.as_ref(), Some(&a));
                // dropped, the guard removes its folder
                drop(TempFolder(Some(a.clone())));
                assert!(!a.exists());
                let _ = fs::remove_dir_all(b);
            }
            // no tmpfs here: AFL++ keeps its default, each campaign's output folder
            (None, None) => {}
            other => panic!("one target got a folder and the other not: {other:?}"),
        }
    }

    #[track_caller]
    fn check(args: &[&str], target: Option<&str>, seconds: u64, execs: Option<u64>) {
        assert_eq!(
            parse(args),
            Ok(Options {
                target: target.map(str::to_string),
                seconds,
                execs
            })
        );
    }

    #[test]
    fn options_parse() {
        check(&[], None, DEFAULT_SECONDS, None);
        check(&["json"], Some("json"), DEFAULT_SECONDS, None);
        check(&["--seconds", "300"], None, 300, None);
        check(&["json", "--seconds", "5"], Some("json"), 5, None);
        check(&["--seconds", "5", "json"], Some("json"), 5, None);
        check(
            &["--seconds=7", "png_pipeline"],
            Some("png_pipeline"),
            7,
            None,
        );
        check(
            &["--execs", "10000000"],
            None,
            DEFAULT_SECONDS,
            Some(10_000_000),
        );
        check(
            &["--execs=9", "json", "--seconds=3"],
            Some("json"),
            3,
            Some(9),
        );
    }

    #[test]
    fn options_errors_say_what_is_wrong() {
        assert_eq!(
            parse(&["--seconds"]),
            Err("fuzz: `--seconds` needs a number".to_string())
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
            parse(&["--execs", "1e7"]),
            Err("fuzz: `--execs` takes a positive whole number, not `1e7`".to_string())
        );
        assert_eq!(
            parse(&["--execs=5", "--execs", "6"]),
            Err("fuzz: `--execs` given twice".to_string())
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
    fn executions_count_from_the_last_finding() {
        let ledger = "date\tcommit\ttarget\texecutions\tseconds\tcrashes\thangs\n\
                      2026-12-01\ta\tjson\t100\t10\t0\t0\n\
                      2026-12-01\ta\tpng\t7\t10\t0\t0\n\
                      2026-12-02\tb\tjson\t200\t10\t3\t0\n\
                      2026-12-03\tc\tjson\t40\t10\t0\t0\n\
                      2026-12-03\tc\tjson\t2\t10\t0\t0\n\
                      a line that is not a run\n";
        // json: 100 before the run with crashes, which resets; then 40 + 2.
        assert_eq!(clean_executions(ledger, "json"), 42);
        assert_eq!(clean_executions(ledger, "png"), 7);
        assert_eq!(clean_executions(ledger, "hangs_only"), 0);
        let hang = format!("{ledger}2026-12-04\td\tpng\t5\t1\t0\t1\n");
        assert_eq!(clean_executions(&hang, "png"), 0);
    }

    #[test]
    fn the_corpus_cut_keeps_the_smallest_within_the_budget() {
        let dir = std::env::temp_dir().join(format!("xtask-cut-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for (name, len) in [("a", 50), ("b", 10), ("c", 30), ("d", 500), ("e", 30)] {
            fs::write(dir.join(name), vec![b'x'; len]).unwrap();
        }
        fs::write(dir.join("README.txt"), "not an input").unwrap();
        let names = |max_len, budget| -> Vec<String> {
            within_budget(&dir, max_len, budget)
                .unwrap()
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        // Sizes 10, 30, 30, 50 (d is over the per-file limit): the first three fit in 75.
        assert_eq!(names(100, 75), ["b", "c", "e"]);
        assert_eq!(names(100, 1_000), ["b", "c", "e", "a"]);
        assert_eq!(names(100, 9), Vec::<String>::new());
        assert_eq!(names(1_000, 1_000), ["b", "c", "e", "a", "d"]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_corpus_folder_is_a_target() {
        let names = known_targets(&root().join("fuzz")).unwrap();
        assert!(names.iter().any(|n| n == "json"), "{names:?}");
        assert!(names.iter().any(|n| n == "fsa_from_arcs"), "{names:?}");
    }
}
