//! `cargo xtask bench`: our criterion benchmarks and the peers' runs of the same workloads,
//! joined into one table of ratios (ours / peer) in `docs/BENCHMARKS.md`.
//!
//! Protocol, shared with every crate's benches:
//! - our side is criterion, one group per crate named after it; a bench `W` is our time for
//!   workload `W`, a bench `peer_P__W` is an in-Rust peer `P` (a memset, a hand loop, a
//!   Rust crate) for the same workload;
//! - the Python peers are `benches/peers/<crate>*.py`; each prints JSON lines
//!   `{"crate", "workload", "peer", "seconds", "version"}` (or `{"crate", "peer",
//!   "skipped"}`); scripts ending in `_k2.py` run in the Python 3.9 venv that has k2.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::venv::{ensure_venv, find_python39, python_works, venv_python};
use crate::{cargo, members, root, run_step, target_dir, Failure, Step};

/// The environment variable that shrinks every workload for a quick smoke run.
const QUICK_ENV: &str = "ARRAYS_BENCH_QUICK";

/// The Python peers, installed from the package registry by `--peers`.
const PEER_PACKAGES: &[&str] = &[
    "numpy",
    "scipy",
    "awkward",
    "opencv-python-headless",
    "tensorflow-cpu",
    "kaldifst",
    "kaldi-native-io",
    "kaldi-decoder",
    "threadpoolctl",
    "pyarrow",
    // structured-tensor's JSON Lines row times pandas.read_json(lines=True) too
    "pandas",
];

/// Variables that pin OpenBLAS's kernel choice, removed from both sides' environment (a
/// machine may set them globally): at the processor's own level each side's OpenBLAS
/// picks its kernel (ours after dense-matrix's guard), at the masked level both are
/// pinned to `Haswell`.
const OPENBLAS_FORCING: [&str; 2] = ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"];

/// k2 exists on the registry only as 1.23.2 (with torch 1.12.1) for Python 3.9.
const K2_PACKAGES: &[&str] = &["k2==1.23.2", "numpy<2"];

/// The environment variable our crates (dataflow, ragged-core, dense-matrix) read once to
/// cap their vector kernels' level.
pub const SIMD_CAP_ENV: &str = "ARRAYS_SIMD_CAP";

/// One instruction-set level a run measures both sides at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The processor's own level: every side dispatches to the best it has.
    Native,
    /// AVX-512 masked on both sides, as an AVX2-only processor would run: our kernels
    /// capped at AVX2 and OpenBLAS on its `Haswell` kernel; the peers' own switches turn
    /// their AVX-512 dispatch off.
    Avx2,
}

/// AVX-512 dispatch targets named for OpenCV (`OPENCV_CPU_DISABLE`, read when `cv2`
/// loads; `cv2.getCPUFeaturesLine()` then marks them with `?`).
const OPENCV_AVX512: &str = "AVX512F,AVX512BW,AVX512CD,AVX512DQ,AVX512VL,AVX512-SKX,\
AVX512-COMMON,AVX512-CLX,AVX512-CNL,AVX512-ICL";

/// AVX-512 dispatch targets named for numpy (`NPY_DISABLE_CPU_FEATURES`): numpy 2's groups
/// (`X86_V4`, `AVX512_ICL`, `AVX512_SPR`) and numpy 1's names (the k2 venv's numpy < 2);
/// each version ignores, with a silent `ImportWarning`, the names it does not dispatch on.
const NUMPY_AVX512: &str =
    "X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL";

impl Level {
    /// The variables our side's processes (criterion benches, the `blas-kernel` example)
    /// get at this level.
    pub fn ours_env(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Level::Native => Vec::new(),
            Level::Avx2 => vec![(SIMD_CAP_ENV, "avx2"), ("OPENBLAS_CORETYPE", "Haswell")],
        }
    }

    /// The variables the peers' processes get at this level (after the OpenBLAS forcing
    /// of the machine was removed): each library's own switch.
    pub fn peer_env(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Level::Native => Vec::new(),
            Level::Avx2 => vec![
                // numpy's and scipy's bundled OpenBLAS
                ("OPENBLAS_CORETYPE", "Haswell"),
                ("NPY_DISABLE_CPU_FEATURES", NUMPY_AVX512),
                ("OPENCV_CPU_DISABLE", OPENCV_AVX512),
                // pyarrow's compute kernels
                ("ARROW_USER_SIMD_LEVEL", "AVX2"),
                // TensorFlow's oneDNN kernels
                ("ONEDNN_MAX_CPU_ISA", "AVX2"),
                // torch (beside k2)
                ("ATEN_CPU_CAPABILITY", "avx2"),
                // so a script can say which level it ran at
                (SIMD_CAP_ENV, "avx2"),
            ],
        }
    }

    /// How the command line names this level (`--simd-cap ...`).
    fn flag(self) -> &'static str {
        match self {
            Level::Native => "native",
            Level::Avx2 => "avx2",
        }
    }
}

/// Command-line options of `bench`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Options {
    /// A short smoke run with small inputs.
    pub quick: bool,
    /// Install (if needed) and run the Python peers.
    pub peers: bool,
    /// How many rounds of ours-then-peer to time (`None`: 3 for a full run, 1 for `--quick`).
    pub rounds: Option<usize>,
    /// The levels to measure at, each into its own section (`--simd-cap`; empty: the
    /// processor's own level only).
    pub levels: Vec<Level>,
    /// The crates to bench (empty: every crate).
    pub crates: Vec<String>,
}

impl Options {
    /// Parses `--quick`, `--peers`, `--rounds N`, `--simd-cap native|avx2|both` and crate
    /// names.
    pub fn parse(args: &[String]) -> Result<Options, Failure> {
        let mut options = Options::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--quick" => options.quick = true,
                "--peers" => options.peers = true,
                "--rounds" => {
                    let value = args
                        .next()
                        .ok_or_else(|| Failure("bench: `--rounds` needs a number".into()))?;
                    options.rounds = Some(parse_rounds(value)?);
                }
                other if other.starts_with("--rounds=") => {
                    options.rounds = Some(parse_rounds(&other["--rounds=".len()..])?);
                }
                "--simd-cap" => {
                    let value = args.next().ok_or_else(|| {
                        Failure("bench: `--simd-cap` needs native, avx2 or both".into())
                    })?;
                    options.levels = parse_levels(value)?;
                }
                other if other.starts_with("--simd-cap=") => {
                    options.levels = parse_levels(&other["--simd-cap=".len()..])?;
                }
                other if other.starts_with('-') => {
                    return Err(Failure(format!("bench: unknown option `{other}`")))
                }
                name => options.crates.push(name.to_string()),
            }
        }
        Ok(options)
    }

    /// The number of rounds this run makes.
    pub fn rounds(&self) -> usize {
        self.rounds.unwrap_or(if self.quick { 1 } else { 3 })
    }

    /// The levels this run measures, in order.
    pub fn levels(&self) -> Vec<Level> {
        if self.levels.is_empty() {
            vec![Level::Native]
        } else {
            self.levels.clone()
        }
    }
}

fn parse_levels(value: &str) -> Result<Vec<Level>, Failure> {
    match value {
        "native" => Ok(vec![Level::Native]),
        "avx2" => Ok(vec![Level::Avx2]),
        "both" => Ok(vec![Level::Native, Level::Avx2]),
        _ => Err(Failure(format!(
            "bench: `--simd-cap` takes native (the processor's own level), avx2 (AVX-512 \
             masked on both sides) or both, not `{value}`"
        ))),
    }
}

fn parse_rounds(value: &str) -> Result<usize, Failure> {
    match value.parse::<usize>() {
        Ok(n) if (1..=50).contains(&n) => Ok(n),
        _ => Err(Failure(format!(
            "bench: `--rounds` takes a whole number from 1 to 50, not `{value}`"
        ))),
    }
}

/// One timing: ours (`peer == None`) or a peer's.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The crate the workload belongs to.
    pub krate: String,
    /// The workload name, shared by both sides.
    pub workload: String,
    /// `None` for ours, else the peer's name.
    pub peer: Option<String>,
    /// Median (criterion: median estimate) time of one run, in seconds.
    pub seconds: f64,
    /// The peer's library version, when it reported one.
    pub version: String,
    /// The round (0-based) of the run in which it was timed.
    pub round: usize,
}

/// Runs everything and writes the table.
///
/// Ours and the peers alternate: each round times every selected crate's criterion benches
/// and then that crate's peer scripts, so noise on a shared machine lands on both sides of
/// a ratio rather than on one; the table reports the median ratio over the rounds with its
/// spread.
pub fn run(options: &Options) -> Step {
    let all_members = members()?;
    for name in &options.crates {
        if !all_members.iter().any(|member| &member.name == name) {
            let known: Vec<&str> = all_members.iter().map(|m| m.name.as_str()).collect();
            return Err(Failure(format!(
                "bench: no crate named `{name}` (crates: {})",
                known.join(", ")
            )));
        }
    }
    let selected: Vec<String> = all_members
        .into_iter()
        .map(|member| member.name)
        .filter(|name| options.crates.is_empty() || options.crates.contains(name))
        .collect();
    let with_benches: Vec<&String> = selected
        .iter()
        .filter(|name| has_rust_files(&root().join("crates").join(name.as_str()).join("benches")))
        .collect();
    let scripts = peer_scripts(&selected)?;

    let mut notes = Vec::new();
    if with_benches.is_empty() {
        notes.push("no selected crate has criterion benches yet".to_string());
    }
    let envs = if options.peers {
        let (envs, env_notes) = PeerEnvs::prepare(&scripts)?;
        notes.extend(env_notes);
        Some(envs)
    } else {
        notes.push("Python peers not run (add `--peers` to install and run them)".to_string());
        None
    };

    let executables = build_benches(&with_benches, options)?;
    let criterion_dir = target_dir().join("criterion");
    let rounds = options.rounds();
    for level in options.levels() {
        let mut notes = notes.clone();
        if level == Level::Avx2 && !cpu_info().1.split_whitespace().any(|f| f == "avx512f") {
            notes.push(
                "this CPU has no AVX-512: the masked run is the same as its own level".into(),
            );
        }
        // the kernel our side runs at this level, reported in the header and handed to
        // the peers' same-kernel rerun
        let our_kernel = selected
            .iter()
            .any(|name| name == "dense-matrix")
            .then(|| blas_kernel(level));
        let kernel_name = our_kernel.as_deref().and_then(kernel_name_of);
        let mut measurements = Vec::new();
        for round in 0..rounds {
            for krate in &selected {
                if with_benches.contains(&krate) {
                    let group = criterion_dir.join(krate);
                    if group.exists() {
                        std::fs::remove_dir_all(&group).map_err(|err| {
                            Failure(format!("removing old {}: {err}", group.display()))
                        })?;
                    }
                    let none = Vec::new();
                    let found = executables.get(krate.as_str()).unwrap_or(&none);
                    run_criterion(krate, found, options, level, round, rounds)?;
                    measurements.extend(read_criterion_group(&group, krate, round)?);
                }
                if let Some(envs) = &envs {
                    for (script, script_crate) in &scripts {
                        if script_crate == krate {
                            let (found, script_notes) =
                                envs.run_script(script, options, level, kernel_name, round)?;
                            measurements.extend(found);
                            if round == 0 {
                                notes.extend(script_notes);
                            }
                        }
                    }
                }
            }
        }

        let facts = machine_facts(options, &selected, level, our_kernel.as_deref());
        let section = render(&measurements, &notes, &facts);
        print!("{section}");
        let path = benchmarks_path(options);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|err| Failure(format!("creating {}: {err}", dir.display())))?;
        }
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let title = machine_title(level);
        let heading = format!("## {title}");
        let section = match machine_sections(&old)
            .into_iter()
            .find(|(h, _)| *h == heading)
        {
            Some((_, old_section)) if !options.crates.is_empty() => {
                keep_other_crates(&old_section, &section, &options.crates)
            }
            _ => section,
        };
        let doc = merge_machine_section(&old, &title, &section);
        std::fs::write(&path, &doc)
            .map_err(|err| Failure(format!("writing {}: {err}", path.display())))?;
        println!("xtask: wrote {} ({} level)", path.display(), level.flag());
    }
    Ok(())
}

/// The file a run writes its table into: `docs/BENCHMARKS.md` for a full run; for
/// `--quick`, whose figures are not comparable, `BENCHMARKS-quick.md` in the target
/// directory, never over this machine's section of the docs.
fn benchmarks_path(options: &Options) -> PathBuf {
    if options.quick {
        target_dir().join("BENCHMARKS-quick.md")
    } else {
        root().join("docs").join("BENCHMARKS.md")
    }
}

fn has_rust_files(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| entry.path().extension().is_some_and(|ext| ext == "rs"))
    })
}

/// Builds the criterion bench executables of `crates` once, in one cargo call (so features
/// are unified as in any workspace build and nothing is rebuilt between rounds), and returns
/// them by crate.
fn build_benches(
    crates: &[&String],
    options: &Options,
) -> Result<BTreeMap<String, Vec<PathBuf>>, Failure> {
    let mut by_crate: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    if crates.is_empty() {
        return Ok(by_crate);
    }
    let mut command = cargo();
    command.arg("bench");
    for name in crates {
        command.args(["-p", name.as_str()]);
    }
    // the optional Rust peers (features named `*-peer`, such as dataflow's
    // `imageproc-peer`), which normal builds and tests never compile; not `--all-features`,
    // which would also build features that are no peer (a BLAS built through a crate,
    // Arrow) for nothing
    let peer_features: Vec<String> = crates
        .iter()
        .flat_map(|name| {
            let manifest = root().join("crates").join(name.as_str()).join("Cargo.toml");
            let text = std::fs::read_to_string(manifest).unwrap_or_default();
            let benched = crate::manifest_features(&text)
                .into_iter()
                .filter(|feature| crate::INTERCHANGE_FEATURES.contains(&feature.as_str()));
            peer_features(&text)
                .into_iter()
                .chain(benched)
                .map(move |feature| format!("{name}/{feature}"))
        })
        .collect();
    if !peer_features.is_empty() {
        command.args(["--features", &peer_features.join(",")]);
    }
    command.args(["--bench", "*", "--no-run"]);
    command.args(["--message-format", "json-render-diagnostics"]);
    if options.quick {
        command.env(QUICK_ENV, "1");
    }
    println!("xtask: cargo bench --no-run (building the benches)");
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|err| Failure(format!("cargo bench --no-run: could not start: {err}")))?;
    if !output.status.success() {
        return Err(Failure(format!("cargo bench --no-run ({})", output.status)));
    }
    let dirs: Vec<(PathBuf, String)> = members()?
        .into_iter()
        .map(|member| (member.dir.join("Cargo.toml"), member.name))
        .collect();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        if let Some((manifest, executable)) = bench_artifact(line) {
            let owner = dirs
                .iter()
                .find(|(path, _)| same_file(path, Path::new(&manifest)));
            if let Some((_, name)) = owner {
                by_crate
                    .entry(name.clone())
                    .or_default()
                    .push(executable.into());
            }
        }
    }
    Ok(by_crate)
}

/// The features of a manifest's `[features]` table whose names end in `-peer`.
fn peer_features(manifest: &str) -> Vec<String> {
    crate::manifest_features(manifest)
        .into_iter()
        .filter(|name| name.ends_with("-peer"))
        .collect()
}

/// The (manifest path, executable) of a cargo `compiler-artifact` message for a bench target.
fn bench_artifact(line: &str) -> Option<(String, String)> {
    let value: Value = serde_json::from_str(line).ok()?;
    if value["reason"] != "compiler-artifact" {
        return None;
    }
    let kinds = value["target"]["kind"].as_array()?;
    if !kinds.iter().any(|kind| kind == "bench") {
        return None;
    }
    Some((
        value["manifest_path"].as_str()?.to_string(),
        value["executable"].as_str()?.to_string(),
    ))
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Runs one crate's criterion bench executables, as `cargo bench` would (in the crate's
/// folder, with `--bench`).
fn run_criterion(
    krate: &str,
    executables: &[PathBuf],
    options: &Options,
    level: Level,
    round: usize,
    rounds: usize,
) -> Step {
    // criterion's own defaults (3 s warm-up, 5 s and 100 samples) would take most of
    // an hour over every workload; 20 samples give a steady median.
    let (warm_up, measurement, samples) = if options.quick {
        ("0.1", "0.3", "10")
    } else {
        ("1", "3", "20")
    };
    for executable in executables {
        let mut command = criterion_command(executable, krate, options, level);
        command.args(["--bench", "--warm-up-time", warm_up]);
        command.args(["--measurement-time", measurement, "--sample-size", samples]);
        let name = executable
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        run_step(
            &format!(
                "bench {krate}: {name} ({} level, round {} of {rounds})",
                level.flag(),
                round + 1
            ),
            &mut command,
        )?;
    }
    Ok(())
}

/// Sets our side's environment for `level`: the caller's SIMD cap and OpenBLAS forcing
/// removed (they would blur which level a section shows), then the level's variables.
fn ours_level_env(command: &mut Command, level: Level) {
    command.env_remove(SIMD_CAP_ENV);
    for key in OPENBLAS_FORCING {
        command.env_remove(key);
    }
    command.envs(level.ours_env());
}

/// The command that runs one criterion bench executable of `krate` at `level`, before
/// criterion's own arguments.
fn criterion_command(executable: &Path, krate: &str, options: &Options, level: Level) -> Command {
    let mut command = Command::new(executable);
    command.current_dir(root().join("crates").join(krate));
    command.env("CRITERION_HOME", target_dir().join("criterion"));
    ours_level_env(&mut command, level);
    if options.quick {
        command.env(QUICK_ENV, "1");
    }
    command
}

/// The peer scripts of the selected crates, with the crate each belongs to: a script
/// `benches/peers/<crate>.py`, `<crate>_k2.py` or `<crate>-<anything>.py` belongs to
/// `<crate>`; other scripts there (shared generators such as `common.py`) are not peers.
fn peer_scripts(selected: &[String]) -> Result<Vec<(PathBuf, String)>, Failure> {
    let peers_dir = root().join("benches").join("peers");
    let mut scripts: Vec<(PathBuf, String)> = std::fs::read_dir(&peers_dir)
        .map_err(|err| Failure(format!("{}: {err}", peers_dir.display())))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "py"))
        .filter_map(|path| {
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            let krate = script_crate(&stem, selected)?;
            Some((path, krate))
        })
        .collect();
    scripts.sort();
    Ok(scripts)
}

/// The crate a peer script's file stem belongs to, the longest matching name first (so
/// `ragged-core-x` goes to `ragged-core`, not to a crate named `ragged`).
fn script_crate(stem: &str, crates: &[String]) -> Option<String> {
    let mut by_length: Vec<&String> = crates.iter().collect();
    by_length.sort_by_key(|name| std::cmp::Reverse(name.len()));
    by_length
        .into_iter()
        .find(|name| {
            stem.strip_prefix(name.as_str()).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with('_') || rest.starts_with('-')
            })
        })
        .cloned()
}

/// Reads `criterion/<crate>/<bench>/new/estimates.json` (median point estimate, ns) of one
/// crate's group.
fn read_criterion_group(
    group: &Path,
    krate: &str,
    round: usize,
) -> Result<Vec<Measurement>, Failure> {
    let mut out = Vec::new();
    let Ok(benches) = std::fs::read_dir(group) else {
        return Ok(out);
    };
    for bench in benches.flatten() {
        let estimates = bench.path().join("new").join("estimates.json");
        let Ok(text) = std::fs::read_to_string(&estimates) else {
            continue;
        };
        let value: Value = serde_json::from_str(&text)
            .map_err(|err| Failure(format!("{}: {err}", estimates.display())))?;
        let Some(nanos) = value["median"]["point_estimate"].as_f64() else {
            return Err(Failure(format!(
                "{}: no median.point_estimate",
                estimates.display()
            )));
        };
        let name = bench.file_name().to_string_lossy().into_owned();
        let mut measurement = criterion_measurement(krate, &name, nanos * 1e-9);
        measurement.round = round;
        out.push(measurement);
    }
    Ok(out)
}

/// Splits a criterion bench name into (peer, workload): `peer_memset__row_ids` is the
/// in-Rust peer `memset` of workload `row_ids`; anything else is ours.
fn criterion_measurement(krate: &str, name: &str, seconds: f64) -> Measurement {
    let (peer, workload) = match name
        .strip_prefix("peer_")
        .and_then(|rest| rest.split_once("__"))
    {
        Some((peer, workload)) => (Some(peer.to_string()), workload.to_string()),
        None => (None, name.to_string()),
    };
    Measurement {
        krate: krate.to_string(),
        workload,
        peer,
        seconds,
        version: String::new(),
        round: 0,
    }
}

/// Parses the JSON lines a peer script prints: measurements, notes for skipped peers, and
/// `{"crate", "peer", "note"}` lines (what a peer says about its library, such as the CPU
/// features it dispatches on).
fn parse_peer_output(script: &str, stdout: &str, round: usize) -> (Vec<Measurement>, Vec<String>) {
    let mut measurements = Vec::new();
    let mut notes = Vec::new();
    for line in stdout.lines().map(str::trim).filter(|l| l.starts_with('{')) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            notes.push(format!("{script}: unreadable line `{line}`"));
            continue;
        };
        let text = |key: &str| value[key].as_str().unwrap_or_default().to_string();
        if let Some(why) = value["skipped"].as_str() {
            notes.push(format!(
                "{} peer {} skipped: {why}",
                text("crate"),
                text("peer")
            ));
            continue;
        }
        // what a peer reports about itself (the CPU features its library dispatches on)
        if let Some(note) = value["note"].as_str() {
            notes.push(format!("{} peer {}: {note}", text("crate"), text("peer")));
            continue;
        }
        match value["seconds"].as_f64() {
            Some(seconds) if seconds > 0.0 => measurements.push(Measurement {
                krate: text("crate"),
                workload: text("workload"),
                peer: Some(text("peer")),
                seconds,
                version: text("version"),
                round,
            }),
            _ => notes.push(format!("{script}: line without positive seconds `{line}`")),
        }
    }
    (measurements, notes)
}

/// The Python environments of the peers, made (once) before the first round.
struct PeerEnvs {
    /// The main venv (numpy, scipy, awkward, OpenCV, TensorFlow, kaldifst, ...), if usable.
    main: Option<PathBuf>,
    /// The Python 3.9 venv with k2, if usable.
    k2: Option<PathBuf>,
}

impl PeerEnvs {
    /// Installs the venvs the selected scripts need.
    fn prepare(scripts: &[(PathBuf, String)]) -> Result<(PeerEnvs, Vec<String>), Failure> {
        let mut notes = Vec::new();
        let needs_k2 = scripts.iter().any(|(path, _)| is_k2_script(path));
        let needs_main = scripts.iter().any(|(path, _)| !is_k2_script(path));
        let venvs = target_dir().join("peers");
        let main = if !needs_main {
            None
        } else if python_works("python3") {
            let venv = venvs.join("venv");
            ensure_venv("python3", &venv, PEER_PACKAGES)?;
            Some(venv)
        } else {
            notes.push("no python3: ran ours alone".to_string());
            None
        };
        let k2 = if !needs_k2 {
            None
        } else if let Some(python39) = find_python39() {
            let venv = venvs.join("venv-k2");
            match ensure_venv(&python39, &venv, K2_PACKAGES) {
                Ok(()) => Some(venv),
                Err(Failure(why)) => {
                    notes.push(format!("k2 peer not installed: {why}"));
                    None
                }
            }
        } else {
            notes.push(
                "k2 peer not run: k2 1.23.2 needs Python 3.9, which this machine lacks".into(),
            );
            None
        };
        Ok((PeerEnvs { main, k2 }, notes))
    }

    /// Runs one peer script in its venv and parses what it printed.
    fn run_script(
        &self,
        script: &Path,
        options: &Options,
        level: Level,
        our_kernel: Option<&str>,
        round: usize,
    ) -> Result<(Vec<Measurement>, Vec<String>), Failure> {
        let venv = if is_k2_script(script) {
            &self.k2
        } else {
            &self.main
        };
        let Some(venv) = venv else {
            return Ok((Vec::new(), Vec::new()));
        };
        let name = script.file_name().unwrap_or_default().to_string_lossy();
        println!(
            "xtask: peer {name} ({} level, round {})",
            level.flag(),
            round + 1
        );
        let mut command = peer_command(&venv_python(venv), script, options, level, our_kernel);
        let output = command
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|err| Failure(format!("peer {name}: could not start: {err}")))?;
        let (found, mut notes) =
            parse_peer_output(&name, &String::from_utf8_lossy(&output.stdout), round);
        if !output.status.success() {
            notes.push(format!("peer script {name} failed ({})", output.status));
        }
        Ok((found, notes))
    }
}

/// The command that runs one peer script with `python` at `level`; `our_kernel` is the
/// OpenBLAS kernel our side ran, for the peers' same-kernel rerun.
fn peer_command(
    python: &Path,
    script: &Path,
    options: &Options,
    level: Level,
    our_kernel: Option<&str>,
) -> Command {
    let mut command = Command::new(python);
    command.arg(script).current_dir(root());
    // Some machines force an OpenBLAS core type for the system library's sake; the
    // peers' own newer OpenBLAS picks its best kernel by itself, so they run without.
    for key in OPENBLAS_FORCING {
        command.env_remove(key);
    }
    command.env_remove(SIMD_CAP_ENV);
    match level {
        // ...but a peer may rerun its BLAS workloads on our kernel, for a like-for-like
        // ratio.
        Level::Native => {
            if let Some(kernel) = our_kernel {
                command.env("ARRAYS_OUR_OPENBLAS_CORETYPE", kernel);
            }
        }
        // (at the masked level the peers run `Haswell` as ours does: no rerun needed)
        Level::Avx2 => {
            command.envs(level.peer_env());
        }
    }
    if options.quick {
        command.env(QUICK_ENV, "1");
    }
    command
}

fn is_k2_script(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.to_string_lossy().ends_with("_k2.py"))
}

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

/// The CPU's model name with its family and model numbers, and its `flags` line, from
/// `/proc/cpuinfo`.
fn cpu_info() -> (String, String) {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    cpu_info_of(&info)
}

/// [`cpu_info`] of a `/proc/cpuinfo` text. The numbers are part of the name because
/// virtual machines often report only a vendor line ("AMD EPYC"), which a Zen 4 and a
/// Zen 5 share, and their figures must not land in one section.
pub fn cpu_info_of(info: &str) -> (String, String) {
    let field = |name: &str| {
        info.lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.trim() == name)
            .map(|(_, value)| value.trim().to_string())
    };
    let name = field("model name").unwrap_or_else(|| "unknown CPU".to_string());
    let model = match (field("cpu family"), field("model")) {
        (Some(family), Some(model)) => format!("{name} (family {family}, model {model})"),
        _ => name,
    };
    (model, field("flags").unwrap_or_default())
}

/// The x86-64 micro-architecture level (psABI `x86-64-v1` .. `v4`) a `flags` line shows.
pub fn isa_level(flags: &str) -> &'static str {
    let have: Vec<&str> = flags.split_whitespace().collect();
    let all = |wanted: &[&str]| wanted.iter().all(|flag| have.contains(flag));
    if have.is_empty() {
        return "unknown";
    }
    let v2 = all(&["cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"]);
    let v3 = v2
        && all(&[
            "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave",
        ]);
    let v4 = v3 && all(&["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"]);
    match (v2, v3, v4) {
        (_, _, true) => "x86-64-v4 (AVX-512)",
        (_, true, _) => "x86-64-v3 (AVX2, FMA)",
        (true, _, _) => "x86-64-v2 (SSE4.2)",
        _ => "x86-64-v1",
    }
}

/// The heading of this machine's section of `docs/BENCHMARKS.md`: one section per kind of
/// machine, so a run on another CPU adds its own table instead of replacing this one's.
fn machine_title(level: Level) -> String {
    let (model, flags) = cpu_info();
    machine_title_of(&model, &flags, level)
}

/// [`machine_title`] of a CPU `model` with `flags`: at the masked level the heading says
/// that this is the CPU with AVX-512 switched off, not an AVX2-only one.
pub fn machine_title_of(model: &str, flags: &str, level: Level) -> String {
    match level {
        Level::Native => format!("Machine: {model}, {}", isa_level(flags)),
        Level::Avx2 => format!(
            "Machine: {model}, {}, AVX-512 masked to AVX2 on both sides (emulated AVX2-only \
             machine, not a real one)",
            isa_level(flags)
        ),
    }
}

/// The OpenBLAS kernel our side runs, as dense-matrix reports it (its `blas-kernel`
/// example), or why it is not known.
fn blas_kernel(level: Level) -> String {
    let example = root()
        .join("crates")
        .join("dense-matrix")
        .join("examples")
        .join("blas-kernel.rs");
    if !example.is_file() {
        return "unknown".to_string();
    }
    let mut command = cargo();
    command
        .args(["run", "--quiet", "--release", "-p", "dense-matrix"])
        .args(["--example", "blas-kernel"]);
    ours_level_env(&mut command, level);
    command
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown (the blas-kernel example failed)".to_string())
}

/// The kernel's name, the first word of the `blas-kernel` example's line, if it names one.
pub fn kernel_name_of(line: &str) -> Option<&str> {
    let word = line.split_whitespace().next()?;
    (word.chars().all(|c| c.is_ascii_alphanumeric()) && word != "unknown").then_some(word)
}

fn machine_facts(
    options: &Options,
    selected: &[String],
    level: Level,
    our_kernel: Option<&str>,
) -> Vec<(String, String)> {
    let (cpu, flags) = cpu_info();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let env_or =
        |key: &str, default: &str| std::env::var(key).unwrap_or_else(|_| default.to_string());
    let mut run = String::from("cargo xtask bench");
    if options.quick {
        run.push_str(" --quick");
    }
    if options.peers {
        run.push_str(" --peers");
    }
    if let Some(rounds) = options.rounds {
        let _ = write!(run, " --rounds {rounds}");
    }
    match options.levels().as_slice() {
        [Level::Native] => {}
        [one] => {
            let _ = write!(run, " --simd-cap {}", one.flag());
        }
        _ => run.push_str(" --simd-cap both"),
    }
    for name in &options.crates {
        let _ = write!(run, " {name}");
    }
    let mut facts: Vec<(String, String)> = vec![
        ("command".into(), format!("`{run}`")),
        (
            "kind of run".into(),
            if options.quick {
                "quick smoke run: small inputs, short measurements; figures are not comparable"
                    .into()
            } else {
                "full run".into()
            },
        ),
        (
            "rounds".into(),
            format!(
                "{}: each round times a crate's criterion benches, then its peers, so the two \
                 sides alternate; times are medians over the rounds, the ratio is the median \
                 of the per-round ratios with its min-max spread",
                options.rounds()
            ),
        ),
        (
            "date".into(),
            command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        ),
        ("CPU".into(), cpu),
        ("instruction set".into(), isa_level(&flags).to_string()),
        ("level measured".into(), level_fact(level)),
        ("cores".into(), cores.to_string()),
        (
            "threads".into(),
            format!(
                "workloads named `_t1`/`_t2` pin 1/2 threads on both sides; others use rayon's \
                 default (RAYON_NUM_THREADS={}) and OpenBLAS's (OPENBLAS_NUM_THREADS={})",
                env_or("RAYON_NUM_THREADS", "unset: all cores"),
                env_or("OPENBLAS_NUM_THREADS", "unset: all cores")
            ),
        ),
    ];
    if selected.iter().any(|name| name == "dense-matrix") {
        facts.push((
            "BLAS kernel (ours)".into(),
            our_kernel.unwrap_or("unknown").to_string(),
        ));
        facts.push((
            "OpenBLAS kernel".into(),
            match level {
                Level::Native => format!(
                    "both sides run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed \
                     (this shell had OPENBLAS_CORETYPE={}), so ours (the system OpenBLAS, \
                     after dense-matrix's guard) and the Python peers' bundled OpenBLAS each \
                     pick their own kernel; `numpy_same_kernel` rows rerun numpy pinned to \
                     our kernel",
                    env_or("OPENBLAS_CORETYPE", "unset")
                ),
                Level::Avx2 => "ours and the Python peers' bundled OpenBLAS both pinned to \
                                Haswell (OPENBLAS_CORETYPE=Haswell)"
                    .into(),
            },
        ));
        facts.push((
            "OpenBLAS".into(),
            command_line("dpkg-query", &["-W", "-f", "${Version}", "libopenblas-dev"]),
        ));
    }
    facts.push(("rustc".into(), command_line("rustc", &["--version"])));
    facts
}

/// The "level measured" fact of a section: what was switched off, and how.
fn level_fact(level: Level) -> String {
    match level {
        Level::Native => "the processor's own: every side dispatches to the best it has".into(),
        Level::Avx2 => {
            let list = |env: Vec<(&str, &str)>| {
                env.iter()
                    .map(|(key, value)| format!("`{key}={value}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!(
                "AVX-512 masked to AVX2 on this CPU, not an AVX2-only CPU (`--simd-cap avx2`); \
                 ours: {}; the peers: {}; the peers' notes below show what their libraries \
                 report",
                list(Level::Avx2.ours_env()),
                list(
                    Level::Avx2
                        .peer_env()
                        .into_iter()
                        .filter(|(key, _)| *key != SIMD_CAP_ENV)
                        .collect()
                )
            )
        }
    }
}

fn format_seconds(seconds: f64) -> String {
    let (value, unit) = if seconds >= 1.0 {
        (seconds, "s")
    } else if seconds >= 1e-3 {
        (seconds * 1e3, "ms")
    } else if seconds >= 1e-6 {
        (seconds * 1e6, "µs")
    } else {
        (seconds * 1e9, "ns")
    };
    format!("{value:.3} {unit}")
}

/// The median of a non-empty list (the mean of the middle two for an even length).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The document's title and preamble, above the machine sections.
const PREAMBLE: &str = "# Benchmarks\n\n\
Generated by `cargo xtask bench`; do not edit by hand. One section per kind of machine \
(CPU name, family and model numbers, and instruction-set level in its heading); a run replaces its own machine's \
section and keeps the others, and a run of some crates only keeps the other crates' rows \
in it, with the date of the run they come from. A run with `--simd-cap avx2` (or `both`) writes a section of \
its own for the same CPU with AVX-512 masked on both sides, an emulated AVX2-only machine, \
headed so. Each row is one workload, timed by criterion on our side \
(median) and by the peer on the same seeded input, in alternating rounds; ratio = ours / \
peer, so below 1.0 means we are faster. A ratio whose spread over the rounds crosses 1.0 is \
marked *not settled*.\n";

/// Replaces (or appends) the section headed `## {title}` of the benchmarks document `old`
/// with `section`, keeping every other machine's section.
pub fn merge_machine_section(old: &str, title: &str, section: &str) -> String {
    let heading = format!("## {title}");
    let mut sections = machine_sections(old);
    let new_body = section.to_string();
    match sections.iter_mut().find(|(head, _)| *head == heading) {
        Some(existing) => existing.1 = new_body,
        None => sections.push((heading, new_body)),
    }
    let mut doc = String::from(PREAMBLE);
    for (head, body) in sections {
        // One blank line between sections: a body read back holds the blank lines that
        // stood before the next heading, which would otherwise pile up run after run.
        let _ = writeln!(doc, "\n{head}\n\n{}", body.trim_matches('\n'));
    }
    doc
}

/// The machine sections of a `BENCHMARKS.md`: (`## Machine: ...` heading, body), in order.
fn machine_sections(doc: &str) -> Vec<(String, String)> {
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in doc.lines() {
        if let Some(rest) = line.strip_prefix("## Machine: ") {
            if let Some(done) = current.take() {
                sections.push(done);
            }
            current = Some((format!("## Machine: {rest}"), String::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
        // lines before the first machine heading are the old preamble (or a document in
        // the older one-table form): replaced by the current preamble
    }
    if let Some(done) = current.take() {
        sections.push(done);
    }
    sections
}

/// The crate a table row (`| crate | workload | ...`) or a note (`- crate ...`) is about.
fn row_crate(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix("| ") {
        let name = rest.split(" |").next()?;
        return (name != "crate" && !name.starts_with("---")).then_some(name);
    }
    line.strip_prefix("- ")?.split([' ', ':']).next()
}

/// How a section names the crates whose rows an earlier run measured.
const KEPT_FACT: &str = "rows kept from the earlier run of ";

/// What follows the date in a [`KEPT_FACT`] line, before the crates.
const KEPT_TAIL: &str = " (this run did not bench them): ";

/// A section's parts: its text up to its notes, and the notes.
fn split_notes(section: &str) -> (&str, &str) {
    section.split_once("\nNotes:\n").unwrap_or((section, ""))
}

/// The `- key: value` facts at the head of a section, without the [`KEPT_FACT`] lines and
/// with a key's ` (earlier run)` mark taken off.
fn section_facts(table: &str) -> Vec<(&str, &str)> {
    table
        .lines()
        .take_while(|l| !l.starts_with("| "))
        .filter_map(|l| l.strip_prefix("- ")?.split_once(": "))
        .filter(|(key, _)| !key.starts_with(KEPT_FACT))
        .map(|(key, value)| (key.strip_suffix(" (earlier run)").unwrap_or(key), value))
        .collect()
}

/// A run restricted to some crates (`cargo xtask bench dataflow`) keeps the rows and notes
/// of the other crates from `old_section` (this machine's section before the run) in
/// `section`, says which earlier run each kept crate's figures come from, and keeps the
/// facts only that run recorded (the BLAS kernel, say) marked as the earlier run's.
pub fn keep_other_crates(old_section: &str, section: &str, selected: &[String]) -> String {
    let is_other = |name: &str| !selected.iter().any(|s| s == name);
    let (old_table, old_notes) = split_notes(old_section);
    let kept_rows: Vec<&str> = old_table
        .lines()
        .filter(|l| l.starts_with("| ") && row_crate(l).is_some_and(is_other))
        .collect();
    if kept_rows.is_empty() {
        return section.to_string();
    }
    let kept_notes = old_notes
        .lines()
        .filter(|l| row_crate(l).is_some_and(|name| is_other(name) && name != "Python"));
    // the run each kept crate's rows come from: the old section's own, or one it kept
    let old_date = old_table
        .lines()
        .find_map(|l| l.strip_prefix("- date: "))
        .unwrap_or("an unrecorded date");
    let mut date_of: BTreeMap<&str, &str> = BTreeMap::new();
    for line in old_table.lines() {
        let kept = line
            .strip_prefix("- ")
            .and_then(|l| l.strip_prefix(KEPT_FACT));
        if let Some((date, names)) = kept.and_then(|rest| rest.split_once(KEPT_TAIL)) {
            for name in names.split(", ") {
                date_of.insert(name, date);
            }
        }
    }
    let mut by_date: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for name in kept_rows.iter().filter_map(|l| row_crate(l)) {
        let names = by_date
            .entry(date_of.get(name).copied().unwrap_or(old_date))
            .or_default();
        if !names.contains(&name) {
            names.push(name);
        }
    }

    let (table, notes) = split_notes(section);
    let (head, body) = table
        .find("\n| crate |")
        .map_or((table, ""), |at| table.split_at(at));
    let mut out = head.trim_end().to_string();
    out.push('\n');
    let new_keys: Vec<&str> = section_facts(head)
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    for (key, value) in section_facts(old_table) {
        if !new_keys.contains(&key) {
            let _ = writeln!(out, "- {key} (earlier run): {value}");
        }
    }
    for (date, names) in &by_date {
        let _ = writeln!(out, "- {KEPT_FACT}{date}{KEPT_TAIL}{}", names.join(", "));
    }
    out.push('\n');
    let mut rows: Vec<&str> = Vec::new();
    for line in body.lines().skip_while(|l| l.is_empty()) {
        if line.starts_with("| ") && row_crate(line).is_some() {
            rows.push(line);
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    rows.extend(kept_rows);
    // by crate; each crate's rows stay in their order
    rows.sort_by_key(|l| row_crate(l).unwrap_or_default().to_string());
    for row in rows {
        out.push_str(row);
        out.push('\n');
    }
    let notes: Vec<&str> = notes
        .lines()
        .filter(|l| l.starts_with("- "))
        .chain(kept_notes)
        .collect();
    if !notes.is_empty() {
        out.push_str("\nNotes:\n\n");
        for note in notes {
            out.push_str(note);
            out.push('\n');
        }
    }
    out
}

/// One machine's section: its facts, then one row per (workload, peer).
pub fn render(
    measurements: &[Measurement],
    notes: &[String],
    facts: &[(String, String)],
) -> String {
    type Key<'a> = (&'a str, &'a str);
    let mut ours: BTreeMap<Key, BTreeMap<usize, f64>> = BTreeMap::new();
    let mut peers: BTreeMap<Key, BTreeMap<&str, Vec<&Measurement>>> = BTreeMap::new();
    for m in measurements {
        let key = (m.krate.as_str(), m.workload.as_str());
        match &m.peer {
            None => {
                ours.entry(key).or_default().insert(m.round, m.seconds);
            }
            Some(peer) => peers
                .entry(key)
                .or_default()
                .entry(peer.as_str())
                .or_default()
                .push(m),
        }
    }
    let mut keys: Vec<Key> = ours.keys().chain(peers.keys()).copied().collect();
    keys.sort();
    keys.dedup();

    let mut doc = String::new();
    for (key, value) in facts {
        let _ = writeln!(doc, "- {key}: {value}");
    }
    doc.push_str(
        "\n| crate | workload | ours | peer | peer time | ratio ours/peer | spread over rounds |\n",
    );
    doc.push_str("| --- | --- | ---: | --- | ---: | ---: | --- |\n");
    for key in keys {
        let our_rounds = ours.get(&key);
        let our_time =
            our_rounds.map(|by_round| median(&by_round.values().copied().collect::<Vec<_>>()));
        let ours_text = our_time.map_or_else(|| "—".to_string(), format_seconds);
        let Some(by_peer) = peers.get(&key) else {
            let _ = writeln!(
                doc,
                "| {} | {} | {ours_text} | — | — | — | — |",
                key.0, key.1
            );
            continue;
        };
        for (name, runs) in by_peer {
            let version = runs
                .iter()
                .map(|m| m.version.as_str())
                .find(|v| !v.is_empty());
            let label = version.map_or_else(|| name.to_string(), |v| format!("{name} ({v})"));
            let peer_time = median(&runs.iter().map(|m| m.seconds).collect::<Vec<_>>());
            // ratios round by round: ours and the peer timed back to back
            let ratios: Vec<f64> = runs
                .iter()
                .filter_map(|m| Some(our_rounds?.get(&m.round)? / m.seconds))
                .collect();
            let (ratio, spread) = if ratios.is_empty() {
                ("—".to_string(), "—".to_string())
            } else {
                let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
                let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let spread = if ratios.len() < 2 {
                    "one round".to_string()
                } else if low < 1.0 && high > 1.0 {
                    format!("{low:.2}–{high:.2}, *not settled*")
                } else {
                    format!("{low:.2}–{high:.2}")
                };
                (format!("{:.2}", median(&ratios)), spread)
            };
            let _ = writeln!(
                doc,
                "| {} | {} | {ours_text} | {label} | {} | {ratio} | {spread} |",
                key.0,
                key.1,
                format_seconds(peer_time)
            );
        }
    }
    if !notes.is_empty() {
        doc.push_str("\nNotes:\n\n");
        for note in notes {
            let _ = writeln!(doc, "- {note}");
        }
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(krate: &str, workload: &str, seconds: f64) -> Measurement {
        Measurement {
            krate: krate.into(),
            workload: workload.into(),
            peer: None,
            seconds,
            version: String::new(),
            round: 0,
        }
    }

    fn peer(workload: &str, name: &str, seconds: f64, round: usize) -> Measurement {
        Measurement {
            peer: Some(name.into()),
            round,
            ..ours("c", workload, seconds)
        }
    }

    #[test]
    fn criterion_names_split_into_peer_and_workload() {
        let m = criterion_measurement("ragged-core", "peer_memset__row_ids", 2.0);
        assert_eq!(m.peer.as_deref(), Some("memset"));
        assert_eq!(m.workload, "row_ids");
        let m = criterion_measurement("ragged-core", "row_ids", 1.0);
        assert_eq!(m.peer, None);
        assert_eq!(m.workload, "row_ids");
        // a name that merely starts with peer_ but has no separator stays ours
        let m = criterion_measurement("x", "peer_less", 1.0);
        assert_eq!((m.peer, m.workload.as_str()), (None, "peer_less"));
    }

    #[test]
    fn peer_lines_become_measurements_and_notes() {
        let stdout = concat!(
            "warming up\n",
            r#"{"crate": "c", "workload": "w", "peer": "numpy", "seconds": 0.5, "version": "numpy 2.0"}"#,
            "\n",
            r#"{"crate": "c", "peer": "torch", "skipped": "not installed"}"#,
            "\n",
            r#"{"crate": "c", "workload": "w", "peer": "bad", "seconds": 0}"#,
            "\n{not json\n",
            r#"{"crate": "c", "peer": "opencv", "note": "CPU features AVX2 *AVX512-SKX?"}"#,
            "\n",
        );
        let (found, notes) = parse_peer_output("c.py", stdout, 2);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].peer.as_deref(), Some("numpy"));
        assert_eq!(found[0].seconds, 0.5);
        assert_eq!(found[0].round, 2);
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(notes[0].contains("torch skipped: not installed"));
        assert_eq!(notes[3], "c peer opencv: CPU features AVX2 *AVX512-SKX?");
    }

    #[test]
    fn table_has_one_row_per_peer_with_the_ratio() {
        let mut numpy = peer("w", "numpy", 0.004, 0);
        numpy.version = "numpy 2.0".into();
        let doc = render(
            &[ours("c", "w", 0.002), numpy, ours("c", "alone", 3e-7)],
            &["a note".into()],
            &[("cores".into(), "2".into())],
        );
        assert!(
            doc.contains("| c | w | 2.000 ms | numpy (numpy 2.0) | 4.000 ms | 0.50 | one round |"),
            "{doc}"
        );
        assert!(doc.contains("| c | alone | 300.000 ns | — | — | — | — |"));
        assert!(doc.contains("- cores: 2"));
        assert!(doc.contains("- a note"));
    }

    #[test]
    fn ratios_pair_rounds_and_report_the_median_and_spread() {
        // ours 1, 2, 3 ms; the peer 2, 2, 2 ms: ratios 0.5, 1.0, 1.5 round by round
        let mut measurements = Vec::new();
        for (round, (our, their)) in [(1e-3, 2e-3), (2e-3, 2e-3), (3e-3, 2e-3)]
            .into_iter()
            .enumerate()
        {
            let mut mine = ours("c", "w", our);
            mine.round = round;
            measurements.push(mine);
            measurements.push(peer("w", "p", their, round));
        }
        let doc = render(&measurements, &[], &[]);
        assert!(
            doc.contains("| c | w | 2.000 ms | p | 2.000 ms | 1.00 | 0.50–1.50, *not settled* |"),
            "{doc}"
        );
        // a spread that stays below 1.0 is settled
        let settled = render(
            &[
                ours("c", "w", 1e-3),
                peer("w", "p", 4e-3, 0),
                Measurement {
                    round: 1,
                    ..ours("c", "w", 1e-3)
                },
                peer("w", "p", 2e-3, 1),
            ],
            &[],
            &[],
        );
        assert!(settled.contains("| 0.38 | 0.25–0.50 |"), "{settled}");
    }

    #[test]
    fn bench_artifacts_are_read_from_cargo_messages() {
        let bench = r#"{"reason":"compiler-artifact","manifest_path":"/w/crates/a/Cargo.toml","target":{"kind":["bench"],"name":"a"},"executable":"/w/target/release/deps/a-123"}"#;
        assert_eq!(
            bench_artifact(bench),
            Some((
                "/w/crates/a/Cargo.toml".to_string(),
                "/w/target/release/deps/a-123".to_string()
            ))
        );
        let lib = r#"{"reason":"compiler-artifact","manifest_path":"/w/crates/a/Cargo.toml","target":{"kind":["lib"],"name":"a"},"executable":null}"#;
        assert_eq!(bench_artifact(lib), None);
        assert_eq!(
            bench_artifact(r#"{"reason":"build-finished","success":true}"#),
            None
        );
        assert_eq!(bench_artifact("not json"), None);
    }

    #[test]
    fn only_peer_features_are_turned_on_for_benches() {
        let manifest = "[package]\nname = \"d\"\n[features]\n# a comment\n\
                        imageproc-peer = [\"dep:imageproc\"]\nopenblas-src = [\"dep:o\"]\n\
                        \"torch-peer\" = []\n[dependencies]\nx-peer = \"1\"\n";
        assert_eq!(peer_features(manifest), ["imageproc-peer", "torch-peer"]);
        assert!(peer_features("[package]\nname = \"e\"\n").is_empty());
    }

    #[test]
    fn median_of_odd_and_even_lists() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[7.0]), 7.0);
    }

    #[test]
    fn machine_sections_are_replaced_or_appended() {
        let first = merge_machine_section("", "Machine: A, v3", "- one\n");
        assert!(first.starts_with("# Benchmarks\n"));
        assert!(first.contains("\n## Machine: A, v3\n\n- one\n"), "{first}");
        let second = merge_machine_section(&first, "Machine: B, v4", "- two\n");
        assert!(second.contains("## Machine: A, v3\n\n- one\n"), "{second}");
        assert!(second.contains("## Machine: B, v4\n\n- two\n"), "{second}");
        let third = merge_machine_section(&second, "Machine: A, v3", "- three\n");
        assert!(!third.contains("- one"), "{third}");
        assert!(third.contains("## Machine: A, v3\n\n- three\n"), "{third}");
        assert!(third.contains("## Machine: B, v4\n\n- two\n"), "{third}");
        assert_eq!(third.matches("# Benchmarks").count(), 1);
        // a section kept as it was comes back byte for byte: no blank lines pile up
        let fourth = merge_machine_section(&third, "Machine: A, v3", "- three\n");
        assert_eq!(fourth, third);
        assert!(third.contains("- three\n\n## Machine: B"), "{third}");
        // an old single-table document is replaced by the sectioned form
        let old = "# Benchmarks\n\n- CPU: X\n\n| a | b |\n";
        let upgraded = merge_machine_section(old, "Machine: X, v4", "- new\n");
        assert!(!upgraded.contains("| a | b |"), "{upgraded}");
    }

    #[test]
    fn isa_levels_from_cpu_flags() {
        let v2 = "cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3";
        let v3 = format!("{v2} avx avx2 bmi1 bmi2 f16c fma abm movbe xsave");
        let v4 = format!("{v3} avx512f avx512bw avx512cd avx512dq avx512vl");
        assert_eq!(isa_level(""), "unknown");
        assert_eq!(isa_level("sse2"), "x86-64-v1");
        assert_eq!(isa_level(v2), "x86-64-v2 (SSE4.2)");
        assert_eq!(isa_level(&v3), "x86-64-v3 (AVX2, FMA)");
        assert_eq!(isa_level(&v4), "x86-64-v4 (AVX-512)");
        // AVX-512F alone (no BW/VL) is not level 4
        assert_eq!(isa_level(&format!("{v3} avx512f")), "x86-64-v3 (AVX2, FMA)");
    }

    #[test]
    fn peer_scripts_belong_to_the_longest_matching_crate() {
        let crates: Vec<String> = ["ragged", "ragged-core", "ragged-fsa"]
            .map(String::from)
            .to_vec();
        let owner = |stem: &str| script_crate(stem, &crates);
        assert_eq!(owner("ragged-core").as_deref(), Some("ragged-core"));
        assert_eq!(owner("ragged-core_k2").as_deref(), Some("ragged-core"));
        assert_eq!(owner("ragged-fsa-algebra").as_deref(), Some("ragged-fsa"));
        assert_eq!(owner("ragged").as_deref(), Some("ragged"));
        assert_eq!(owner("common"), None);
        // `-corex` is a suffix of `ragged`, not the crate `ragged-core`
        assert_eq!(owner("ragged-corex").as_deref(), Some("ragged"));
        let two = ["ragged-core".to_string()];
        assert_eq!(script_crate("ragged-corex", &two), None);
        assert_eq!(script_crate("graphs", &two), None);
    }

    #[test]
    fn a_run_of_some_crates_keeps_the_other_crates_rows_and_notes() {
        let m = |krate: &str, workload: &str, peer: Option<&str>, seconds: f64| Measurement {
            krate: krate.into(),
            workload: workload.into(),
            peer: peer.map(Into::into),
            seconds,
            version: String::new(),
            round: 0,
        };
        let facts = |date: &str| vec![("date".to_string(), date.to_string())];
        let mut old_facts = facts("day 1");
        old_facts.push(("BLAS kernel (ours)".to_string(), "SkylakeX".to_string()));
        let old = render(
            &[
                m("alpha", "w1", None, 1.0),
                m("alpha", "w1", Some("p"), 2.0),
                m("beta", "w2", None, 3.0),
                m("gamma", "w3", None, 4.0),
                m("gamma", "w4", None, 5.0),
            ],
            &[
                "alpha peer p: old alpha note".to_string(),
                "beta peer q skipped: old beta note".to_string(),
                "Python peers not run (add `--peers` to install and run them)".to_string(),
            ],
            &old_facts,
        );
        let new = render(
            &[m("beta", "w2", None, 6.0), m("beta", "w5", None, 7.0)],
            &["beta peer q: new beta note".to_string()],
            &facts("day 2"),
        );
        let merged = keep_other_crates(&old, &new, &["beta".to_string()]);
        let rows: Vec<&str> = merged
            .lines()
            .filter(|l| row_crate(l).is_some() && l.starts_with("| "))
            .collect();
        let workloads: Vec<(&str, &str)> = rows
            .iter()
            .map(|l| {
                let mut cells = l.split(" | ");
                (
                    cells.next().unwrap().trim_start_matches("| "),
                    cells.next().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            workloads,
            [
                ("alpha", "w1"),
                ("beta", "w2"),
                ("beta", "w5"),
                ("gamma", "w3"),
                ("gamma", "w4")
            ]
        );
        // beta's rows are the new run's, the others the old run's
        assert!(rows[1].contains("6.000 s"), "{}", rows[1]);
        assert!(
            rows[0].contains("1.000 s") && rows[0].contains("| p |"),
            "{}",
            rows[0]
        );
        assert!(merged.contains("- date: day 2"));
        assert!(!merged.contains("- date (earlier run)"));
        assert!(merged.contains("- BLAS kernel (ours) (earlier run): SkylakeX"));
        assert!(merged.contains("rows kept from the earlier run of day 1"));
        assert!(merged.contains("alpha, gamma"));
        assert!(merged.contains("- alpha peer p: old alpha note"));
        assert!(merged.contains("- beta peer q: new beta note"));
        assert!(!merged.contains("old beta note"));
        assert!(!merged.contains("Python peers not run"));
        // a second run, of alpha only: gamma's rows still date from day 1, beta's from day 2
        let third = render(
            &[m("alpha", "w1", None, 8.0)],
            &[],
            &[("date".to_string(), "day 3".to_string())],
        );
        let again = keep_other_crates(&merged, &third, &["alpha".to_string()]);
        assert!(
            again.contains(
                "rows kept from the earlier run of day 1 (this run did not bench them): gamma\n"
            ),
            "{again}"
        );
        assert!(
            again.contains(
                "rows kept from the earlier run of day 2 (this run did not bench them): beta\n"
            ),
            "{again}"
        );
        assert_eq!(again.matches("BLAS kernel").count(), 1, "{again}");
        assert!(again.contains("- BLAS kernel (ours) (earlier run): SkylakeX"));
        assert!(again.contains("| alpha | w1 | 8.000 s |"), "{again}");
        // a run of every crate (or one with nothing to keep) is the new section as is
        assert_eq!(
            keep_other_crates(&old, &new, &["alpha".into(), "beta".into(), "gamma".into()]),
            new
        );
    }

    #[test]
    fn a_quick_run_never_writes_the_docs_table() {
        let quick = Options {
            quick: true,
            ..Options::default()
        };
        let full = Options::default();
        assert_eq!(
            benchmarks_path(&full),
            root().join("docs").join("BENCHMARKS.md")
        );
        let quick = benchmarks_path(&quick);
        assert!(
            !quick.starts_with(root().join("docs")),
            "{}",
            quick.display()
        );
        assert_eq!(quick.file_name().unwrap(), "BENCHMARKS-quick.md");
    }

    #[test]
    fn options_take_crates_rounds_and_reject_unknown_flags() {
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let parsed = Options::parse(&args(&["--quick", "--peers", "dataflow"])).unwrap();
        assert_eq!(
            parsed,
            Options {
                quick: true,
                peers: true,
                rounds: None,
                levels: Vec::new(),
                crates: vec!["dataflow".into()],
            }
        );
        assert_eq!(parsed.levels(), [Level::Native]);
        assert_eq!(parsed.rounds(), 1);
        assert_eq!(Options::default().rounds(), 3);
        let parsed = Options::parse(&args(&["--rounds", "5", "a", "b"])).unwrap();
        assert_eq!((parsed.rounds(), parsed.crates.len()), (5, 2));
        assert_eq!(Options::parse(&args(&["--rounds=2"])).unwrap().rounds(), 2);
        for bad in [
            &["--fast"][..],
            &["--rounds"],
            &["--rounds", "0"],
            &["--rounds=x"],
            &["--simd-cap"],
            &["--simd-cap", "avx512"],
            &["--simd-cap=AVX2"],
            &["--simd-cap", "sse2"],
        ] {
            assert!(Options::parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn simd_cap_names_the_levels_to_run() {
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let levels = |list: &[&str]| Options::parse(&args(list)).unwrap().levels();
        assert_eq!(levels(&["--simd-cap", "avx2"]), [Level::Avx2]);
        assert_eq!(levels(&["--simd-cap=avx2", "dataflow"]), [Level::Avx2]);
        assert_eq!(levels(&["--simd-cap", "native"]), [Level::Native]);
        assert_eq!(
            levels(&["--simd-cap", "both"]),
            [Level::Native, Level::Avx2]
        );
        // the last one given wins, as with --rounds
        assert_eq!(
            levels(&["--simd-cap", "both", "--simd-cap", "avx2"]),
            [Level::Avx2]
        );
        let parsed = Options::parse(&args(&["--peers", "--simd-cap", "avx2", "x"])).unwrap();
        assert_eq!(
            (parsed.peers, parsed.crates.as_slice()),
            (true, &["x".to_string()][..])
        );
        let err = Options::parse(&args(&["--simd-cap", "avx3"])).unwrap_err();
        assert!(
            err.0.contains("not `avx3`") && err.0.contains("both"),
            "{}",
            err.0
        );
    }

    /// The variables a command sets (`Some`) or removes (`None`).
    fn envs_of(command: &Command) -> BTreeMap<String, Option<String>> {
        command
            .get_envs()
            .map(|(key, value)| {
                (
                    key.to_string_lossy().into_owned(),
                    value.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect()
    }

    #[test]
    fn the_masked_level_reaches_our_benches_and_every_peer_library() {
        let options = Options::default();
        let exe = Path::new("/nonexistent/bench");
        let ours = envs_of(&criterion_command(exe, "dataflow", &options, Level::Avx2));
        // every crate's kernels read ARRAYS_SIMD_CAP; OpenBLAS its own variable
        assert_eq!(ours[SIMD_CAP_ENV].as_deref(), Some("avx2"));
        assert_eq!(ours["OPENBLAS_CORETYPE"].as_deref(), Some("Haswell"));
        // at the processor's own level a cap of the caller's environment is removed
        assert_eq!(ours["OPENBLAS_L2_SIZE"], None);
        // at the processor's own level a cap or an OpenBLAS forcing of the caller's
        // environment is removed
        let native = envs_of(&criterion_command(exe, "dataflow", &options, Level::Native));
        assert_eq!(native[SIMD_CAP_ENV], None);
        assert_eq!(native["OPENBLAS_CORETYPE"], None);
        assert_eq!(native["OPENBLAS_L2_SIZE"], None);

        let python = Path::new("/nonexistent/python");
        let script = Path::new("dataflow.py");
        let peers = envs_of(&peer_command(
            python,
            script,
            &options,
            Level::Avx2,
            Some("Cooperlake"),
        ));
        assert_eq!(peers["OPENBLAS_CORETYPE"].as_deref(), Some("Haswell"));
        assert_eq!(peers["OPENBLAS_L2_SIZE"], None);
        let opencv = peers["OPENCV_CPU_DISABLE"].clone().unwrap();
        for feature in ["AVX512F", "AVX512BW", "AVX512-SKX", "AVX512-ICL"] {
            assert!(opencv.split(',').any(|f| f == feature), "{opencv}");
        }
        let numpy = peers["NPY_DISABLE_CPU_FEATURES"].clone().unwrap();
        for feature in ["X86_V4", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR"] {
            assert!(numpy.split(' ').any(|f| f == feature), "{numpy}");
        }
        assert_eq!(peers["ARROW_USER_SIMD_LEVEL"].as_deref(), Some("AVX2"));
        assert_eq!(peers["ONEDNN_MAX_CPU_ISA"].as_deref(), Some("AVX2"));
        assert_eq!(peers["ATEN_CPU_CAPABILITY"].as_deref(), Some("avx2"));
        assert_eq!(peers[SIMD_CAP_ENV].as_deref(), Some("avx2"));
        // no rerun on "our kernel": the peers run Haswell already
        assert!(!peers.contains_key("ARRAYS_OUR_OPENBLAS_CORETYPE"));
        let native = envs_of(&peer_command(
            python,
            script,
            &options,
            Level::Native,
            Some("Cooperlake"),
        ));
        assert_eq!(native["OPENBLAS_CORETYPE"], None);
        assert!(!native.contains_key("OPENCV_CPU_DISABLE"));
        assert!(!native.contains_key("NPY_DISABLE_CPU_FEATURES"));
        // the peers' same-kernel rerun gets the kernel our side reported
        assert_eq!(
            native["ARRAYS_OUR_OPENBLAS_CORETYPE"].as_deref(),
            Some("Cooperlake")
        );
        let none = envs_of(&peer_command(python, script, &options, Level::Native, None));
        assert!(!none.contains_key("ARRAYS_OUR_OPENBLAS_CORETYPE"));
    }

    #[test]
    fn kernel_names_come_from_the_first_word_of_the_report() {
        assert_eq!(
            kernel_name_of("Cooperlake (CPU level: AVX-512)"),
            Some("Cooperlake")
        );
        assert_eq!(
            kernel_name_of("Haswell (CPU level: AVX-512; OPENBLAS_CORETYPE=Haswell set)"),
            Some("Haswell")
        );
        assert_eq!(kernel_name_of("unknown"), None);
        assert_eq!(
            kernel_name_of("unknown (the blas-kernel example failed)"),
            None
        );
        assert_eq!(kernel_name_of(""), None);
    }

    #[test]
    fn the_cpu_name_carries_family_and_model() {
        let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n\
                    model name\t: AMD EPYC\nflags\t\t: fpu avx2\n";
        let (model, flags) = cpu_info_of(info);
        assert_eq!(model, "AMD EPYC (family 25, model 17)");
        assert_eq!(flags, "fpu avx2");
        let (model, _) = cpu_info_of("model name\t: Some CPU\n");
        assert_eq!(model, "Some CPU");
    }

    #[test]
    fn the_masked_level_has_its_own_section_saying_so() {
        let v4 = "cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm \
                  movbe xsave avx512f avx512bw avx512cd avx512dq avx512vl";
        let native = machine_title_of("AMD EPYC", v4, Level::Native);
        let masked = machine_title_of("AMD EPYC", v4, Level::Avx2);
        assert_eq!(native, "Machine: AMD EPYC, x86-64-v4 (AVX-512)");
        assert!(masked.starts_with("Machine: AMD EPYC, x86-64-v4 (AVX-512), AVX-512 masked"));
        assert!(masked.contains("not a real one"), "{masked}");
        let doc = merge_machine_section("", &native, "- native\n");
        let doc = merge_machine_section(&doc, &masked, "- masked\n");
        let doc = merge_machine_section(&doc, &native, "- native again\n");
        assert!(
            doc.contains(&format!("## {native}\n\n- native again\n")),
            "{doc}"
        );
        assert!(doc.contains(&format!("## {masked}\n\n- masked\n")), "{doc}");
        let fact = level_fact(Level::Avx2);
        assert!(fact.contains("`ARRAYS_SIMD_CAP=avx2`") && fact.contains("OPENCV_CPU_DISABLE"));
    }
}
