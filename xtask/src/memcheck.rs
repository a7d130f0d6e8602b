//! `cargo xtask memcheck [--quick]`: the test binaries of the crates with `unsafe` code run
//! under valgrind's memcheck, one after another, with the result of each.
//!
//! Valgrind emulates the processor up to AVX2 (it cannot run AVX-512), so our kernels are
//! capped at AVX2 (`ARRAYS_SIMD_CAP`) and OpenBLAS is pinned to its `Haswell` kernel. Each
//! binary runs its tests on one thread with a few proptest cases, and memcheck reports
//! errors only (`--leak-check=no`: rayon's global pool lives until the process exits). A
//! binary passes when its tests pass and memcheck finds no error.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::bench::SIMD_CAP_ENV;
use crate::{cargo, members, run_step, target_dir, Failure, Step};

/// The crates whose test binaries the full run checks: those with `unsafe` code (or, for
/// kaldi-io, `unsafe` reads of files) below the Python bindings.
pub const CRATES: &[&str] = &["ragged-core", "dataflow", "structured-tensor", "kaldi-io"];

/// The short run: each crate's library tests, filtered to the modules holding `unsafe`
/// blocks (test names are `module::tests::name`, and a filter keeps the tests whose name
/// contains it).
pub const QUICK: &[(&str, &[&str])] = &[
    (
        "ragged-core",
        &[
            "row_partition::",
            "ops::indexing::",
            "ops::gather::",
            "ops::sum::",
            "ops::reduce::",
            "append::",
            "par::",
        ],
    ),
    ("dataflow", &["load::", "source::", "explicit::", "walk::"]),
];

/// Tests that cannot pass under valgrind, skipped there (`--skip`), with the reason: they
/// compare what the processor says of itself (CPUID, which valgrind emulates) with what
/// the kernel says (`/proc/cpuinfo`, the real processor).
/// (cpu-features, where detection lives, holds no `unsafe` of its own but `cpuid`, and is
/// not among [`CRATES`]; its kernels' dispatch is checked in the crates that expand it.)
pub const SKIP: &[(&str, &str)] = &[
    ("cpu-features", "level::tests::zen4_is_amd_family_25"),
    (
        "cpu-features",
        "level::tests::detection_matches_the_processor_features",
    ),
];

/// The memcheck exit code of a binary in which valgrind found errors.
const ERROR_EXIT_CODE: i32 = 99;

/// The environment every checked binary runs with.
pub const ENV: &[(&str, &str)] = &[
    (SIMD_CAP_ENV, "avx2"),
    ("OPENBLAS_CORETYPE", "Haswell"),
    ("OPENBLAS_NUM_THREADS", "1"),
    ("RUST_TEST_THREADS", "1"),
    ("PROPTEST_CASES", "4"),
];

/// `cargo xtask memcheck [--quick]`.
pub fn command(rest: &[String]) -> Step {
    match rest {
        [] => run(),
        [flag] if flag == "--quick" => quick(),
        [other, ..] => Err(Failure(format!(
            "memcheck: unexpected argument `{other}` (only --quick)"
        ))),
    }
}

/// Every test binary of [`CRATES`] (with their optional features, as `cargo xtask test`
/// builds them) under memcheck.
pub fn run() -> Step {
    let plan: Vec<(&str, &[&str])> = CRATES.iter().map(|&name| (name, &[][..])).collect();
    check(&plan, false)
}

/// The short run of [`QUICK`]: the library tests of ragged-core and dataflow that touch
/// their `unsafe` code, a few minutes under memcheck.
pub fn quick() -> Step {
    check(QUICK, true)
}

/// One test binary cargo built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    /// The package it tests.
    pub package: String,
    /// The target: `lib`, or the name of an integration test.
    pub target: String,
    /// The executable.
    pub path: PathBuf,
    /// The package's folder (where `cargo test` runs it).
    pub dir: PathBuf,
}

/// What memcheck said about one binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The tests passed and memcheck found no error.
    Passed,
    /// Memcheck found this many errors (see the log).
    Errors(u64),
    /// The tests failed (exit code), memcheck found no error.
    TestsFailed(Option<i32>),
}

fn check(plan: &[(&str, &[&str])], lib_only: bool) -> Step {
    let valgrind = ensure_valgrind()?;
    let started = Instant::now();
    let packages: Vec<&str> = plan.iter().map(|&(name, _)| name).collect();
    let binaries = build(&packages, lib_only)?;
    let build_time = started.elapsed();
    let logs = target_dir().join("memcheck");
    std::fs::create_dir_all(&logs)
        .map_err(|err| Failure(format!("memcheck: creating {}: {err}", logs.display())))?;
    let mut results = Vec::new();
    for binary in &binaries {
        let filters = plan
            .iter()
            .find(|(name, _)| *name == binary.package)
            .map_or(&[][..], |&(_, filters)| filters);
        let log = logs.join(format!("{}-{}.log", binary.package, binary.target));
        println!(
            "xtask: memcheck {} ({}), log {}",
            binary.package,
            binary.target,
            log.display()
        );
        let begin = Instant::now();
        let outcome = run_one(&valgrind, binary, filters, &log)?;
        let took = begin.elapsed();
        println!(
            "xtask: memcheck {} ({}): {} in {}",
            binary.package,
            binary.target,
            describe(outcome),
            seconds(took)
        );
        results.push((binary, outcome, took));
    }
    println!(
        "\nxtask: memcheck summary (build {}, total {}):",
        seconds(build_time),
        seconds(started.elapsed())
    );
    for (binary, outcome, took) in &results {
        println!(
            "  {:<18} {:<22} {:<28} {}",
            binary.package,
            binary.target,
            describe(*outcome),
            seconds(*took)
        );
    }
    let bad: Vec<String> = results
        .iter()
        .filter(|(_, outcome, _)| *outcome != Outcome::Passed)
        .map(|(binary, outcome, _)| {
            format!(
                "{} ({}): {}",
                binary.package,
                binary.target,
                describe(*outcome)
            )
        })
        .collect();
    if bad.is_empty() {
        println!("xtask: memcheck: {} binaries, no error", results.len());
        Ok(())
    } else {
        Err(Failure(format!("memcheck: {}", bad.join("; "))))
    }
}

fn describe(outcome: Outcome) -> String {
    match outcome {
        Outcome::Passed => "passed, 0 errors".to_string(),
        Outcome::Errors(n) => format!("{n} memcheck errors"),
        Outcome::TestsFailed(Some(code)) => format!("tests failed (exit {code}), 0 errors"),
        Outcome::TestsFailed(None) => "killed by a signal".to_string(),
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.0} s", d.as_secs_f64())
}

/// Builds the test binaries of `packages` and lists them (only the library's with
/// `lib_only`).
fn build(packages: &[&str], lib_only: bool) -> Result<Vec<Binary>, Failure> {
    let members = members()?;
    let mut command = cargo();
    command.args(["test", "--no-run", "--message-format=json"]);
    for &package in packages {
        if !members.iter().any(|m| m.name == package) {
            return Err(Failure(format!("memcheck: no crate named {package}")));
        }
        command.args(["-p", package]);
    }
    let features: Vec<String> = if lib_only {
        Vec::new()
    } else {
        crate::optional_features()?
            .into_iter()
            .filter(|f| {
                packages
                    .iter()
                    .any(|p| f.split_once('/').map(|(c, _)| c) == Some(*p))
            })
            .collect()
    };
    if lib_only {
        command.arg("--lib");
    }
    if !features.is_empty() {
        command.args(["--features", &features.join(",")]);
    }
    let step = format!("cargo test --no-run -p {}", packages.join(" -p "));
    println!("xtask: {step}");
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|err| Failure(format!("{step}: could not start: {err}")))?;
    if !output.status.success() {
        return Err(Failure(format!("{step} ({})", output.status)));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut binaries = Vec::new();
    for line in stdout.lines() {
        if let Some(binary) = test_binary(line, &members) {
            if !binaries.contains(&binary) {
                binaries.push(binary);
            }
        }
    }
    if binaries.is_empty() {
        return Err(Failure(format!("{step}: no test binary in its output")));
    }
    Ok(binaries)
}

/// The test binary a line of cargo's JSON messages announces, if it does.
fn test_binary(line: &str, members: &[crate::Member]) -> Option<Binary> {
    let message: serde_json::Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
        return None;
    }
    let path = PathBuf::from(message["executable"].as_str()?);
    let manifest = Path::new(message["manifest_path"].as_str()?);
    let dir = manifest.parent()?.to_path_buf();
    let member = members.iter().find(|m| m.dir == dir)?;
    let kinds = message["target"]["kind"].as_array()?;
    let target = if kinds.iter().any(|k| k == "lib") {
        "lib".to_string()
    } else {
        message["target"]["name"].as_str()?.to_string()
    };
    Some(Binary {
        package: member.name.clone(),
        target,
        path,
        dir,
    })
}

/// Runs one binary under memcheck, its log in `log`.
fn run_one(
    valgrind: &Path,
    binary: &Binary,
    filters: &[&str],
    log: &Path,
) -> Result<Outcome, Failure> {
    let mut command = Command::new(valgrind);
    command
        .arg("--tool=memcheck")
        .arg(format!("--error-exitcode={ERROR_EXIT_CODE}"))
        .arg("--leak-check=no")
        .arg(format!("--log-file={}", log.display()))
        .arg(&binary.path)
        .args(filters)
        .args(
            SKIP.iter()
                .filter(|(package, _)| *package == binary.package)
                .flat_map(|(_, test)| ["--skip", test]),
        )
        .current_dir(&binary.dir)
        .env("CARGO_MANIFEST_DIR", &binary.dir);
    for (key, value) in ENV {
        command.env(key, value);
    }
    let status = command
        .status()
        .map_err(|err| Failure(format!("memcheck: could not start valgrind: {err}")))?;
    let errors = std::fs::read_to_string(log)
        .ok()
        .and_then(|text| error_count(&text));
    Ok(match (status.code(), errors) {
        (_, Some(n)) if n > 0 => Outcome::Errors(n),
        (Some(ERROR_EXIT_CODE), _) => Outcome::Errors(errors.unwrap_or(0).max(1)),
        (Some(0), _) => Outcome::Passed,
        (code, _) => Outcome::TestsFailed(code),
    })
}

/// The count of `ERROR SUMMARY: N errors from M contexts` in a memcheck log.
fn error_count(log: &str) -> Option<u64> {
    log.lines().rev().find_map(|line| {
        let rest = &line[line.find("ERROR SUMMARY: ")? + "ERROR SUMMARY: ".len()..];
        rest.split_whitespace()
            .next()?
            .replace(',', "")
            .parse()
            .ok()
    })
}

/// The path of `valgrind`, installing Debian's package with apt-get when it is missing
/// and we are root; otherwise the failure says the one command to run.
fn ensure_valgrind() -> Result<PathBuf, Failure> {
    if let Some(path) = which("valgrind") {
        return Ok(path);
    }
    let command = "apt-get update && apt-get install -y valgrind";
    if !(is_root() && which("apt-get").is_some()) {
        return Err(Failure(format!(
            "memcheck: valgrind is missing; install it with:\n    sudo sh -c '{command}'"
        )));
    }
    println!("xtask: memcheck: valgrind is missing; installing Debian's valgrind with apt-get");
    run_step(
        "apt-get update",
        Command::new("apt-get")
            .arg("update")
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    run_step(
        "apt-get install -y valgrind",
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "valgrind"])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    which("valgrind")
        .ok_or_else(|| Failure("memcheck: valgrind installed but not on PATH".to_string()))
}

/// The first `program` on `PATH`.
fn which(program: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// True when the effective uid (the second number of `/proc/self/status`'s `Uid:` line)
/// is 0.
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("Uid:"))
                .and_then(|line| line.split_whitespace().nth(2).map(|uid| uid == "0"))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_count(log: &str, expected: Option<u64>) {
        assert_eq!(error_count(log), expected, "{log}");
    }

    #[test]
    fn error_count_reads_the_last_summary() {
        check_count(
            "==1== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)\n",
            Some(0),
        );
        check_count(
            "==7== ERROR SUMMARY: 1,024 errors from 3 contexts\n",
            Some(1024),
        );
        check_count(
            "==7== ERROR SUMMARY: 2 errors from 1 contexts\n==7== ERROR SUMMARY: 5 errors from 2 contexts\n",
            Some(5),
        );
        check_count("==1== Memcheck, a memory error detector\n", None);
    }

    #[test]
    fn test_binary_takes_test_artifacts_of_members_only() {
        let members = members().unwrap();
        let dir = members
            .iter()
            .find(|m| m.name == "ragged-core")
            .unwrap()
            .dir
            .clone();
        let manifest = dir.join("Cargo.toml");
        let line = |kind: &str, name: &str, test: bool| {
            serde_json::json!({
                "reason": "compiler-artifact",
                "manifest_path": manifest,
                "target": {"kind": [kind], "name": name},
                "profile": {"test": test},
                "executable": "/somewhere/deps/x-0123",
            })
            .to_string()
        };
        let lib = test_binary(&line("lib", "ragged_core", true), &members).unwrap();
        assert_eq!(
            (lib.package.as_str(), lib.target.as_str()),
            ("ragged-core", "lib")
        );
        assert_eq!(lib.dir, dir);
        let test = test_binary(&line("test", "model", true), &members).unwrap();
        assert_eq!(test.target, "model");
        assert_eq!(test_binary(&line("example", "tour", false), &members), None);
        assert_eq!(test_binary("not json", &members), None);
    }

    #[test]
    fn quick_names_only_checked_crates() {
        for (name, filters) in QUICK {
            assert!(CRATES.contains(name), "{name}");
            assert!(!filters.is_empty(), "{name}");
        }
    }
}
