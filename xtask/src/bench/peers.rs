//! The peers: the Python scripts under `benches/peers/`, the venvs they run in (the main
//! one, and the Python 3.9 one with k2), and the JSON lines they print.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{Level, Measurement, Options, OPENBLAS_FORCING, QUICK_ENV, SIMD_CAP_ENV};
use crate::python::{venv_dir, WITH_K2};
use crate::venv::{ensure_venv, find_python39, python_works, venv_python};
use crate::{root, target_dir, Failure};

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

/// The peer scripts of the selected crates, with the crate each belongs to: a script
/// `benches/peers/<crate>.py`, `<crate>_k2.py` or `<crate>-<anything>.py` belongs to
/// `<crate>`; other scripts there (shared generators such as `common.py`) are not peers.
/// With `benches` named (`--bench`), only the scripts of those bench targets
/// ([`script_bench`]).
pub(super) fn peer_scripts(
    selected: &[String],
    benches: &[String],
) -> Result<Vec<(PathBuf, String)>, Failure> {
    let peers_dir = root().join("benches").join("peers");
    let mut scripts: Vec<(PathBuf, String)> = std::fs::read_dir(&peers_dir)
        .map_err(|err| Failure(format!("{}: {err}", peers_dir.display())))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "py"))
        .filter_map(|path| {
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            let krate = script_crate(&stem, selected)?;
            let wanted = benches.is_empty() || benches.contains(&script_bench(&stem, &krate));
            wanted.then_some((path, krate))
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

/// The bench target a peer script of `krate` times the workloads of: `<crate>-<bench>.py`
/// and `<crate>-<bench>_k2.py` go with `benches/<bench>.rs`, `<crate>.py` and
/// `<crate>_k2.py` with the crate's bench named after it.
fn script_bench(stem: &str, krate: &str) -> String {
    let rest = stem.strip_prefix(krate).unwrap_or(stem);
    let rest = rest.strip_suffix("_k2").unwrap_or(rest);
    match rest.strip_prefix('-') {
        Some(bench) if !bench.is_empty() => bench.to_string(),
        _ => krate.to_string(),
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
pub(super) struct PeerEnvs {
    /// The main venv (numpy, scipy, awkward, OpenCV, TensorFlow, kaldifst, ...), if usable.
    main: Option<PathBuf>,
    /// The Python 3.9 venv with k2, if usable.
    k2: Option<PathBuf>,
}

impl PeerEnvs {
    /// Installs the venvs the selected scripts need.
    pub(super) fn prepare(
        scripts: &[(PathBuf, String)],
    ) -> Result<(PeerEnvs, Vec<String>), Failure> {
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
            // the Python tests' k2 venv (k2 1.23.2, which exists on the registry only for
            // Python 3.9, with torch 1.12.1 and torchaudio for the RNN-T peer), shared
            // rather than installed twice
            let venv = venv_dir("venv-k2");
            match ensure_venv(&python39, &venv, WITH_K2) {
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
    pub(super) fn run_script(
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
pub(super) fn peer_command(
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn peer_scripts_go_with_the_bench_target_they_name() {
        let check = |stem: &str, bench: &str| assert_eq!(script_bench(stem, "ragged-fsa"), bench);
        check("ragged-fsa-rnnt_k2", "rnnt");
        check("ragged-fsa-algebra", "algebra");
        check("ragged-fsa-decode_k2", "decode");
        check("ragged-fsa", "ragged-fsa");
        check("ragged-fsa_k2", "ragged-fsa");
    }
}
