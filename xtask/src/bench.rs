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
    "threadpoolctl",
];

/// Variables that pin OpenBLAS's kernel choice, removed from the peers' environment.
const OPENBLAS_FORCING: [&str; 2] = ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"];

/// k2 exists on the registry only as 1.23.2 (with torch 1.12.1) for Python 3.9.
const K2_PACKAGES: &[&str] = &["k2==1.23.2", "numpy<2"];

/// Command-line options of `bench`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Options {
    /// A short smoke run with small inputs.
    pub quick: bool,
    /// Install (if needed) and run the Python peers.
    pub peers: bool,
}

impl Options {
    /// Parses `--quick` and `--peers`.
    pub fn parse(args: &[String]) -> Result<Options, Failure> {
        let mut options = Options::default();
        for arg in args {
            match arg.as_str() {
                "--quick" => options.quick = true,
                "--peers" => options.peers = true,
                other => return Err(Failure(format!("bench: unknown option `{other}`"))),
            }
        }
        Ok(options)
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
}

/// Runs everything and writes the table.
pub fn run(options: &Options) -> Step {
    let criterion_dir = target_dir().join("criterion");
    if criterion_dir.exists() {
        std::fs::remove_dir_all(&criterion_dir)
            .map_err(|err| Failure(format!("removing old {}: {err}", criterion_dir.display())))?;
    }
    let with_benches: Vec<String> = members()?
        .into_iter()
        .filter(|member| has_rust_files(&member.dir.join("benches")))
        .map(|member| member.name)
        .collect();
    let mut notes = Vec::new();
    if with_benches.is_empty() {
        notes.push("no crate has criterion benches yet".to_string());
    } else {
        let mut command = cargo();
        command.arg("bench");
        for name in &with_benches {
            command.args(["-p", name]);
        }
        // `--all-features` turns on the optional Rust peers (such as dataflow's
        // `imageproc-peer`), which normal builds and tests never compile.
        command.args(["--all-features", "--bench", "*", "--"]);
        // criterion's own defaults (3 s warm-up, 5 s and 100 samples) would take most of
        // an hour over every workload; 20 samples give a steady median.
        let (warm_up, measurement, samples) = if options.quick {
            ("0.1", "0.3", "10")
        } else {
            ("1", "3", "20")
        };
        command.args(["--warm-up-time", warm_up, "--measurement-time", measurement]);
        command.args(["--sample-size", samples]);
        if options.quick {
            command.env(QUICK_ENV, "1");
        }
        run_step("cargo bench (criterion)", &mut command)?;
    }
    let mut measurements = read_criterion(&criterion_dir)?;

    if options.peers {
        let (peer_measurements, peer_notes) = run_peers(options)?;
        measurements.extend(peer_measurements);
        notes.extend(peer_notes);
    } else {
        notes.push("Python peers not run (add `--peers` to install and run them)".to_string());
    }

    let table = render(&measurements, &notes, &machine_facts(options));
    print!("{table}");
    let docs = root().join("docs");
    std::fs::create_dir_all(&docs)
        .map_err(|err| Failure(format!("creating {}: {err}", docs.display())))?;
    let path = docs.join("BENCHMARKS.md");
    std::fs::write(&path, &table)
        .map_err(|err| Failure(format!("writing {}: {err}", path.display())))?;
    println!("xtask: wrote {}", path.display());
    Ok(())
}

fn has_rust_files(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| entry.path().extension().is_some_and(|ext| ext == "rs"))
    })
}

/// Reads `criterion/<crate>/<bench>/new/estimates.json` (median point estimate, ns).
fn read_criterion(dir: &Path) -> Result<Vec<Measurement>, Failure> {
    let mut out = Vec::new();
    let Ok(groups) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    for group in groups.flatten().filter(|entry| entry.path().is_dir()) {
        let krate = group.file_name().to_string_lossy().into_owned();
        if krate == "report" {
            continue;
        }
        let Ok(benches) = std::fs::read_dir(group.path()) else {
            continue;
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
            out.push(criterion_measurement(&krate, &name, nanos * 1e-9));
        }
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
    }
}

/// Parses the JSON lines a peer script prints: measurements, and notes for skipped peers.
fn parse_peer_output(script: &str, stdout: &str) -> (Vec<Measurement>, Vec<String>) {
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
        match value["seconds"].as_f64() {
            Some(seconds) if seconds > 0.0 => measurements.push(Measurement {
                krate: text("crate"),
                workload: text("workload"),
                peer: Some(text("peer")),
                seconds,
                version: text("version"),
            }),
            _ => notes.push(format!("{script}: line without positive seconds `{line}`")),
        }
    }
    (measurements, notes)
}

fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// Makes `venv` with `python` and installs `packages` into it, once (a stamp file records
/// what was installed).
fn ensure_venv(python: &str, venv: &Path, packages: &[&str]) -> Step {
    let stamp = venv.join(".installed");
    let wanted = packages.join(" ");
    if std::fs::read_to_string(&stamp).is_ok_and(|have| have == wanted) {
        return Ok(());
    }
    run_step(
        &format!("{python} -m venv {}", venv.display()),
        Command::new(python).args(["-m", "venv"]).arg(venv),
    )?;
    run_step(
        "pip install --upgrade pip",
        Command::new(venv_python(venv))
            .args(["-m", "pip", "install", "--quiet", "--upgrade", "pip"])
            .args(["--disable-pip-version-check"]),
    )?;
    run_step(
        &format!("pip install {wanted}"),
        Command::new(venv_python(venv))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(packages),
    )?;
    std::fs::write(&stamp, wanted).map_err(|err| Failure(format!("{}: {err}", stamp.display())))
}

fn python_works(python: &str) -> bool {
    Command::new(python)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// A Python 3.9 interpreter: `python3.9` on the PATH, else one that pyenv installed but
/// did not put on the PATH.
fn find_python39() -> Option<String> {
    if python_works("python3.9") {
        return Some("python3.9".to_string());
    }
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pyenv")))?;
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(pyenv_root.join("versions"))
        .ok()?
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("3.9"))
        .map(|entry| entry.path().join("bin").join("python3.9"))
        .collect();
    candidates.sort();
    candidates
        .into_iter()
        .rev()
        .map(|path| path.to_string_lossy().into_owned())
        .find(|python| python_works(python))
}

fn run_peers(options: &Options) -> Result<(Vec<Measurement>, Vec<String>), Failure> {
    let mut measurements = Vec::new();
    let mut notes = Vec::new();
    let peers_dir = root().join("benches").join("peers");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&peers_dir)
        .map_err(|err| Failure(format!("{}: {err}", peers_dir.display())))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension().is_some_and(|ext| ext == "py")
                && path.file_name().is_some_and(|name| name != "common.py")
        })
        .collect();
    scripts.sort();

    let venvs = target_dir().join("peers");
    let main_venv = venvs.join("venv");
    let main_ready = if python_works("python3") {
        ensure_venv("python3", &main_venv, PEER_PACKAGES)?;
        true
    } else {
        notes.push("no python3: ran ours alone".to_string());
        false
    };
    let k2_venv = venvs.join("venv-k2");
    let k2_ready = if let Some(python39) = find_python39() {
        match ensure_venv(&python39, &k2_venv, K2_PACKAGES) {
            Ok(()) => true,
            Err(Failure(why)) => {
                notes.push(format!("k2 peer not installed: {why}"));
                false
            }
        }
    } else {
        notes.push("k2 peer not run: k2 1.23.2 needs Python 3.9, which this machine lacks".into());
        false
    };

    for script in scripts {
        let name = script.file_name().unwrap_or_default().to_string_lossy();
        let is_k2 = name.ends_with("_k2.py");
        let (ready, venv) = if is_k2 {
            (k2_ready, &k2_venv)
        } else {
            (main_ready, &main_venv)
        };
        if !ready {
            continue;
        }
        println!("xtask: peer {name}");
        let mut command = Command::new(venv_python(venv));
        command.arg(&script).current_dir(root());
        // Some machines force an OpenBLAS core type for the system library's sake; the
        // peers' own newer OpenBLAS picks its best kernel by itself, so they run without.
        for key in OPENBLAS_FORCING {
            command.env_remove(key);
        }
        // ...but a peer may rerun its BLAS workloads on our kernel, for a like-for-like ratio.
        if let Ok(core_type) = std::env::var(OPENBLAS_FORCING[0]) {
            command.env("ARRAYS_OUR_OPENBLAS_CORETYPE", core_type);
        }
        if options.quick {
            command.env(QUICK_ENV, "1");
        }
        let output = command
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|err| Failure(format!("peer {name}: could not start: {err}")))?;
        if !output.status.success() {
            notes.push(format!("peer script {name} failed ({})", output.status));
        }
        let (found, script_notes) =
            parse_peer_output(&name, &String::from_utf8_lossy(&output.stdout));
        measurements.extend(found);
        notes.extend(script_notes);
    }
    Ok((measurements, notes))
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

fn machine_facts(options: &Options) -> Vec<(String, String)> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string());
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
    vec![
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
            "date".into(),
            command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        ),
        ("CPU".into(), cpu),
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
        (
            "OpenBLAS kernel".into(),
            format!(
                "ours: system OpenBLAS with OPENBLAS_CORETYPE={}; the Python peers run with \
                 OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed so their bundled OpenBLAS picks \
                 its own kernel; `numpy_same_kernel` rows rerun numpy pinned to our kernel",
                env_or("OPENBLAS_CORETYPE", "unset")
            ),
        ),
        ("rustc".into(), command_line("rustc", &["--version"])),
        (
            "OpenBLAS".into(),
            command_line("dpkg-query", &["-W", "-f", "${Version}", "libopenblas-dev"]),
        ),
    ]
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

/// The markdown document: machine facts, then one row per (workload, peer).
pub fn render(
    measurements: &[Measurement],
    notes: &[String],
    facts: &[(String, String)],
) -> String {
    let mut ours: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    let mut peers: BTreeMap<(&str, &str), Vec<&Measurement>> = BTreeMap::new();
    for m in measurements {
        let key = (m.krate.as_str(), m.workload.as_str());
        match &m.peer {
            None => {
                ours.insert(key, m.seconds);
            }
            Some(_) => peers.entry(key).or_default().push(m),
        }
    }
    let mut keys: Vec<(&str, &str)> = ours.keys().chain(peers.keys()).copied().collect();
    keys.sort();
    keys.dedup();

    let mut doc = String::new();
    doc.push_str("# Benchmarks\n\n");
    doc.push_str(
        "Generated by `cargo xtask bench`; do not edit by hand. Each row is one workload, \
         timed by criterion on our side (median) and by the peer in the same run on the same \
         seeded input; ratio = ours / peer, so below 1.0 means we are faster.\n\n",
    );
    for (key, value) in facts {
        let _ = writeln!(doc, "- {key}: {value}");
    }
    doc.push_str("\n| crate | workload | ours | peer | peer time | ratio ours/peer |\n");
    doc.push_str("| --- | --- | ---: | --- | ---: | ---: |\n");
    for key in keys {
        let our_time = ours.get(&key).copied();
        let ours_text = our_time.map_or_else(|| "—".to_string(), format_seconds);
        match peers.get(&key) {
            None => {
                let _ = writeln!(doc, "| {} | {} | {ours_text} | — | — | — |", key.0, key.1);
            }
            Some(list) => {
                for peer in list {
                    let name = peer.peer.as_deref().unwrap_or_default();
                    let label = if peer.version.is_empty() {
                        name.to_string()
                    } else {
                        format!("{name} ({})", peer.version)
                    };
                    let ratio = our_time
                        .map_or_else(|| "—".to_string(), |t| format!("{:.2}", t / peer.seconds));
                    let _ = writeln!(
                        doc,
                        "| {} | {} | {ours_text} | {label} | {} | {ratio} |",
                        key.0,
                        key.1,
                        format_seconds(peer.seconds)
                    );
                }
            }
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
        );
        let (found, notes) = parse_peer_output("c.py", stdout);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].peer.as_deref(), Some("numpy"));
        assert_eq!(found[0].seconds, 0.5);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].contains("torch skipped: not installed"));
    }

    #[test]
    fn table_has_one_row_per_peer_with_the_ratio() {
        let mut peer = ours("c", "w", 0.004);
        peer.peer = Some("numpy".into());
        peer.version = "numpy 2.0".into();
        let doc = render(
            &[ours("c", "w", 0.002), peer, ours("c", "alone", 3e-7)],
            &["a note".into()],
            &[("cores".into(), "2".into())],
        );
        assert!(doc.contains("| c | w | 2.000 ms | numpy (numpy 2.0) | 4.000 ms | 0.50 |"));
        assert!(doc.contains("| c | alone | 300.000 ns | — | — | — |"));
        assert!(doc.contains("- cores: 2"));
        assert!(doc.contains("- a note"));
    }

    #[test]
    fn options_reject_unknown_flags() {
        let parsed = Options::parse(&["--quick".into(), "--peers".into()]).unwrap();
        assert_eq!(
            parsed,
            Options {
                quick: true,
                peers: true
            }
        );
        assert!(Options::parse(&["--fast".into()]).is_err());
    }
}
