//! The workspace runner: `cargo xtask setup | test | demo | bench | fuzz`.
//!
//! A plain std binary (plus serde_json to read criterion's result files). It finds the
//! crates under `crates/` by itself, so a new crate with an `examples/tour.rs` joins the
//! tour, and one with criterion benches joins the benchmark table, without editing this file.

mod bench;
mod fuzz;
mod memcheck;
mod msrv;
mod python;
mod setup;
mod tidy;
mod venv;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  setup              make sure the system libraries (OpenBLAS with LAPACK) are installed
  test               setup, then the rust-version check, cargo fmt --check, clippy
                     -D warnings, every test, the Python packages' pytest suites
                     (python-test) and a short valgrind run (memcheck --quick)
  demo               setup, then each crate's tour (examples/tour.rs, and examples/tour.py
                     of a Python crate), listing what it wrote
  python-test        only the Python step of `test`: each crate with a pyproject.toml
                     built by maturin and its tests/ run by pytest in two venvs under
                     target/python/ (Python 3.11 without torch; 3.9 with k2 and torch)
  bench [--quick] [--peers] [--rounds N] [--simd-cap native|avx2|both] [--bench NAME]
        [--charts-only] [CRATE...]
                     criterion benchmarks side by side with the peers, written to
                     docs/BENCHMARKS.md (one section per kind of machine); --quick makes a
                     short smoke run, --peers installs and runs the Python peers (numpy,
                     scipy, awkward, OpenCV, TensorFlow, kaldifst, k2) in venvs under
                     target/; ours and the peers alternate over N rounds (default 3, 1 with
                     --quick); --simd-cap avx2 masks AVX-512 on both sides (our kernels
                     capped with ARRAYS_SIMD_CAP=avx2, OpenBLAS on Haswell, the peers'
                     AVX-512 dispatch off) into its own section, both runs both levels;
                     crate names restrict the run to those crates, --bench NAME to one
                     bench target (benches/NAME.rs and the peers <crate>-NAME*.py), whose
                     rows replace only the workloads it measured; each section's ratios
                     are drawn per crate as SVG in docs/bench-charts/, linked from it
                     (--charts-only redraws them from the tables without a run)
  fuzz [target] [--seconds N] [--execs N]
                     the AFL++ campaign (cargo-afl, installed if missing) of one target or
                     all, N seconds each (default 60) or N executions if sooner: new corpus
                     entries to fuzz/corpus/, crashes to fuzz/found/; prints executions,
                     execs/s and crashes, and appends each run to fuzz/campaigns.tsv
  memcheck [--quick] the test binaries of ragged-core, dataflow, structured-tensor and
                     kaldi-io under valgrind's memcheck (installed if missing), SIMD capped
                     at AVX2; --quick: the unsafe-touching lib tests of the first two
";

/// Optional features that the tours and the benches turn on where a crate has them:
/// Parquet files (and the Arrow conversion they imply), which the structured-tensor tour
/// writes and whose benches are timed against pyarrow.
pub const INTERCHANGE_FEATURES: &[&str] = &["parquet"];

/// A failed step: what failed, for the one-line report at the end.
#[derive(Debug)]
pub struct Failure(pub String);

/// The result of a step.
pub type Step = Result<(), Failure>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    let result = match command.as_str() {
        "setup" => no_options(rest).and_then(|()| setup::run()),
        "test" => no_options(rest).and_then(|()| test()),
        "demo" => no_options(rest).and_then(|()| demo()),
        "python-test" => no_options(rest).and_then(|()| python::test()),
        "bench" => bench::Options::parse(rest).and_then(|options| {
            setup::run()?;
            bench::run(&options)
        }),
        "fuzz" => fuzz::Options::parse(rest).and_then(|options| fuzz::run(&options)),
        "memcheck" => setup::run().and_then(|()| memcheck::command(rest)),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(Failure(format!("unknown command `{other}`\n{USAGE}"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("xtask: FAILED: {message}");
            ExitCode::FAILURE
        }
    }
}

fn no_options(rest: &[String]) -> Step {
    match rest.first() {
        None => Ok(()),
        Some(option) => Err(Failure(format!("unexpected argument `{option}`\n{USAGE}"))),
    }
}

/// The workspace root (the parent of this crate's folder).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// The cargo target directory, honouring `CARGO_TARGET_DIR`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                root().join(dir)
            }
        }
        None => root().join("target"),
    }
}

/// `cargo` as the user invoked it (the `CARGO` variable cargo sets), run at the root.
pub fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(root());
    command
}

/// Runs `command` to completion, naming `step` in the failure.
pub fn run_step(step: &str, command: &mut Command) -> Step {
    println!("xtask: {step}");
    let status = command
        .status()
        .map_err(|err| Failure(format!("{step}: could not start: {err}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure(format!("{step} ({status})")))
    }
}

fn test() -> Step {
    setup::run()?;
    msrv::run()?;
    run_step(
        "cargo fmt --check",
        cargo().args(["fmt", "--all", "--check"]),
    )?;
    run_step(
        "cargo clippy",
        cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    // optional features (Arrow, a BLAS linked through a crate, ...) are tested too, all of
    // them together, but only in the crates that have them; the Rust peers behind `*-peer`
    // features are benchmark code, built by `cargo xtask bench`. Clippy checks the code
    // both without and with them; the tests run once, with them: a second build of every
    // test binary, differing only in features, doubled the disk the run needed
    let features = optional_features()?;
    if !features.is_empty() {
        let packages: Vec<String> = features
            .iter()
            .filter_map(|f| f.split_once('/').map(|(package, _)| package.to_string()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .flat_map(|name| ["-p".to_string(), name])
            .collect();
        let features = features.join(",");
        run_step(
            &format!("cargo clippy --features {features}"),
            cargo()
                .arg("clippy")
                .args(&packages)
                .args(["--all-targets", "--features", &features])
                .args(["--", "-D", "warnings"]),
        )?;
    }
    // the docs build without a warning (broken or private links, bad code blocks), with
    // every optional feature so that feature-gated items are documented too
    let mut doc = cargo();
    doc.env("RUSTDOCFLAGS", "-D warnings")
        .args(["doc", "--workspace", "--no-deps"]);
    if !features.is_empty() {
        doc.args(["--features", &features.join(",")]);
    }
    run_step("cargo doc --workspace --no-deps (-D warnings)", &mut doc)?;
    let mut test = cargo();
    test.args(["test", "--workspace"]);
    if !features.is_empty() {
        test.args(["--features", &features.join(",")]);
    }
    run_step(
        &format!("cargo test --workspace --features {}", features.join(",")),
        &mut test,
    )?;
    python::test()?;
    // valgrind over the unit tests of the two crates with the most `unsafe` (about two
    // minutes); `cargo xtask memcheck` runs the four crates' every test binary
    memcheck::quick()?;
    println!("xtask: every step passed");
    Ok(())
}

/// Every member's optional features, as `crate/feature`, but the `*-peer` ones (benchmark
/// code, built by `cargo xtask bench`).
pub fn optional_features() -> Result<Vec<String>, Failure> {
    let mut features = Vec::new();
    for member in members()? {
        let manifest = std::fs::read_to_string(member.dir.join("Cargo.toml")).unwrap_or_default();
        features.extend(
            manifest_features(&manifest)
                .into_iter()
                .filter(|name| !name.ends_with("-peer"))
                .map(|name| format!("{}/{name}", member.name)),
        );
    }
    Ok(features)
}

/// The names in a manifest's `[features]` table, but `default`.
pub fn manifest_features(manifest: &str) -> Vec<String> {
    let mut in_features = false;
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if !in_features || line.starts_with('#') {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            let name = name.trim().trim_matches('"');
            if !name.is_empty() && name != "default" {
                found.push(name.to_string());
            }
        }
    }
    found
}

/// A workspace crate found under `crates/`.
#[derive(Debug, Clone)]
pub struct Member {
    /// The package name from its `Cargo.toml`.
    pub name: String,
    /// Its folder.
    pub dir: PathBuf,
}

/// Every crate under `crates/`, sorted by name, with the package name read from its manifest.
pub fn members() -> Result<Vec<Member>, Failure> {
    let crates = root().join("crates");
    let entries = std::fs::read_dir(&crates)
        .map_err(|err| Failure(format!("reading {}: {err}", crates.display())))?;
    let mut members = Vec::new();
    for entry in entries.flatten() {
        let manifest = entry.path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        if let Some(name) = package_name(&text) {
            members.push(Member {
                name,
                dir: entry.path(),
            });
        }
    }
    members.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(members)
}

/// The `name = "..."` of the `[package]` table of a manifest.
fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if in_package {
            if let Some(value) = line.strip_prefix("name") {
                let value = value.trim_start().strip_prefix('=')?.trim();
                return Some(value.trim_matches('"').to_string());
            }
        }
    }
    None
}

fn demo() -> Step {
    setup::run()?;
    let have_dot = setup::ensure_graphviz();
    let demo_root = target_dir().join("demo");
    let mut artefacts = Vec::new();
    let mut failures = Vec::new();
    // every tour is built in one release build, with cargo's progress shown (a quiet
    // `cargo run` per crate sat silent for minutes on a fresh machine), then run in turn
    let mut tours = Vec::new();
    for member in members()? {
        if !member.dir.join("examples").join("tour.rs").is_file() {
            println!("xtask: {} has no tour yet", member.name);
            continue;
        }
        let manifest = std::fs::read_to_string(member.dir.join("Cargo.toml")).unwrap_or_default();
        let features: Vec<String> = manifest_features(&manifest)
            .into_iter()
            .filter(|feature| INTERCHANGE_FEATURES.contains(&feature.as_str()))
            .map(|feature| format!("{}/{feature}", member.name))
            .collect();
        tours.push((member, tour_example_name(&manifest), features));
    }
    let started = std::time::Instant::now();
    println!(
        "xtask: demo: building {} tours in release, once (a few minutes on a fresh machine)",
        tours.len()
    );
    let mut build = cargo();
    build.args(["build", "--release"]);
    for (member, example, _) in &tours {
        build.args(["-p", &member.name, "--example", example]);
    }
    let features: Vec<&str> = tours
        .iter()
        .flat_map(|(_, _, features)| features.iter().map(String::as_str))
        .collect();
    if !features.is_empty() {
        build.args(["--features", &features.join(",")]);
    }
    run_step("cargo build --release (the tours)", &mut build)?;
    println!(
        "xtask: demo: built in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    for (member, example, _) in &tours {
        let out_dir = demo_root.join(&member.name);
        println!("\n==== {} ====", member.name);
        let started = std::time::Instant::now();
        let binary = target_dir().join("release").join("examples").join(example);
        let output = Command::new(&binary)
            .current_dir(root())
            .env("DEMO_OUT_DIR", &out_dir)
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|err| Failure(format!("tour of {}: could not start: {err}", member.name)))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        print!("{stdout}");
        println!(
            "xtask: demo: tour of {} took {:.1} s",
            member.name,
            started.elapsed().as_secs_f64()
        );
        artefacts.extend(
            stdout
                .lines()
                .filter_map(|line| line.strip_prefix("artefact:"))
                .map(|path| path.trim().to_string()),
        );
        if !output.status.success() {
            failures.push(format!("tour of {} ({})", member.name, output.status));
        }
    }
    artefacts.extend(python::demo(&demo_root, &mut failures)?);
    if have_dot {
        artefacts = render_dot_files(artefacts, &mut failures);
    }
    println!("\n==== artefacts ====");
    if artefacts.is_empty() {
        println!("(none)");
    }
    for path in &artefacts {
        println!("{path}");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Failure(failures.join(", ")))
    }
}

/// The name of the example built from `examples/tour.rs`: the `name` of the `[[example]]`
/// table whose `path` is that file (each crate names its tour `<crate>-tour`, so the
/// workspace's examples do not share an output file), else cargo's default, `tour`.
fn tour_example_name(manifest: &str) -> String {
    let mut name: Option<String> = None;
    let mut path: Option<String> = None;
    let mut in_example = false;
    let mut found = None;
    let value = |line: &str, key: &str| {
        let rest = line.strip_prefix(key)?.trim_start().strip_prefix('=')?;
        Some(rest.trim().trim_matches('"').to_string())
    };
    for line in manifest
        .lines()
        .map(str::trim)
        .chain(std::iter::once("[end]"))
    {
        if line.starts_with('[') {
            if in_example && path.as_deref() == Some("examples/tour.rs") {
                found = name.take();
            }
            in_example = line == "[[example]]";
            name = None;
            path = None;
            if found.is_some() {
                break;
            }
            continue;
        }
        if in_example {
            if let Some(v) = value(line, "name") {
                name = Some(v);
            } else if let Some(v) = value(line, "path") {
                path = Some(v);
            }
        }
    }
    found.unwrap_or_else(|| "tour".to_string())
}

/// Renders every `.dot` artefact to an `.svg` beside it with Graphviz, listing both.
/// (A tour that rendered its own picture already listed the `.svg`: that one is kept.)
fn render_dot_files(artefacts: Vec<String>, failures: &mut Vec<String>) -> Vec<String> {
    let listed: std::collections::HashSet<String> = artefacts.iter().cloned().collect();
    let mut out = Vec::with_capacity(artefacts.len());
    for path in artefacts {
        let is_dot = Path::new(&path).extension().is_some_and(|ext| ext == "dot");
        out.push(path.clone());
        if !is_dot {
            continue;
        }
        let svg = Path::new(&path).with_extension("svg");
        if listed.contains(&svg.display().to_string()) {
            continue;
        }
        let status = std::process::Command::new("dot")
            .args(["-Tsvg", "-o"])
            .arg(&svg)
            .arg(&path)
            .status();
        match status {
            Ok(status) if status.success() => out.push(svg.display().to_string()),
            Ok(status) => failures.push(format!("dot -Tsvg {path} ({status})")),
            Err(err) => failures.push(format!("dot -Tsvg {path}: {err}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_name_reads_only_the_package_table() {
        let manifest =
            "[workspace]\nname = \"no\"\n[package]\nname = \"ragged-core\"\nversion = \"1\"\n";
        assert_eq!(package_name(manifest).as_deref(), Some("ragged-core"));
        assert_eq!(package_name("[dependencies]\nname = \"x\"\n"), None);
    }

    #[test]
    fn manifest_features_lists_the_features_table() {
        let manifest = "[package]\nname = \"d\"\n[features]\n# a comment\ndefault = []\n\
                        arrow = [\"dep:a\"]\n\"x-peer\" = []\n[dependencies]\ny = \"1\"\n";
        assert_eq!(manifest_features(manifest), ["arrow", "x-peer"]);
        assert!(manifest_features("[package]\nname = \"e\"\n").is_empty());
    }

    #[test]
    fn tour_example_name_comes_from_the_example_table() {
        let manifest = "[package]\nname = \"x\"\n\n[[example]]\nname = \"canny\"\n\n\
                        [[example]]\nname = \"x-tour\"\npath = \"examples/tour.rs\"\n\n\
                        [[bench]]\nname = \"x\"\n";
        assert_eq!(tour_example_name(manifest), "x-tour");
        // path before name, as the last table
        let manifest = "[[example]]\npath = \"examples/tour.rs\"\nname = \"y-tour\"\n";
        assert_eq!(tour_example_name(manifest), "y-tour");
        // no table for the tour: cargo's own name
        assert_eq!(tour_example_name("[package]\nname = \"z\"\n"), "tour");
        let other = "[[example]]\nname = \"canny\"\npath = \"examples/canny.rs\"\n";
        assert_eq!(tour_example_name(other), "tour");
    }

    #[test]
    fn every_tour_has_its_own_example_name() {
        let mut names = Vec::new();
        for member in members().unwrap() {
            if member.dir.join("examples").join("tour.rs").is_file() {
                let manifest = std::fs::read_to_string(member.dir.join("Cargo.toml")).unwrap();
                names.push(tour_example_name(&manifest));
            }
        }
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count, "tours share an example name: {names:?}");
    }

    #[test]
    fn members_finds_the_five_crates() {
        let names: Vec<String> = members().unwrap().into_iter().map(|m| m.name).collect();
        for expected in [
            "dataflow",
            "dense-matrix",
            "ragged-core",
            "ragged-fsa",
            "structured-tensor",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} in {names:?}"
            );
        }
    }
}
