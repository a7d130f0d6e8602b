//! Running a bench: the criterion executables built once, then round by round each crate's
//! criterion benches followed by its peer scripts, so the two sides of a ratio alternate.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::machine::{blas_kernel, cpu_info, kernel_name_of, load_average, machine_facts};
use super::peers::{peer_scripts, PeerEnvs};
use super::report::{redraw_charts, render, write_section};
use super::{Level, Measurement, Options, OPENBLAS_FORCING, QUICK_ENV, SIMD_CAP_ENV};
use crate::{cargo, members, root, run_step, target_dir, Failure, Step};

/// Runs everything and writes the table.
///
/// Ours and the peers alternate: each round times every selected crate's criterion benches
/// and then that crate's peer scripts, so noise on a shared machine lands on both sides of
/// a ratio rather than on one; the table reports the median ratio over the rounds with its
/// spread.
pub fn run(options: &Options) -> Step {
    if options.charts_only {
        return redraw_charts(options);
    }
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
        .filter(|name| {
            let dir = root().join("crates").join(name.as_str()).join("benches");
            if options.benches.is_empty() {
                has_rust_files(&dir)
            } else {
                options
                    .benches
                    .iter()
                    .any(|bench| dir.join(format!("{bench}.rs")).is_file())
            }
        })
        .collect();
    for bench in &options.benches {
        let owners = selected.iter().filter(|name| {
            root()
                .join("crates")
                .join(name.as_str())
                .join("benches")
                .join(format!("{bench}.rs"))
                .is_file()
        });
        if owners.count() == 0 {
            return Err(Failure(format!(
                "bench: no selected crate ({}) has a bench target `{bench}` (benches/{bench}.rs)",
                selected.join(", ")
            )));
        }
    }
    let scripts = peer_scripts(&selected, &options.benches)?;

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
        let load_before = load_average();
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

        let load = format!("{load_before} before the rounds, {} after", load_average());
        let facts = machine_facts(options, &selected, level, our_kernel.as_deref(), &load);
        let section = render(&measurements, &notes, &facts);
        print!("{section}");
        write_section(options, level, section)?;
    }
    Ok(())
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
    if options.benches.is_empty() {
        command.args(["--bench", "*"]);
    } else {
        for bench in &options.benches {
            command.args(["--bench", bench.as_str()]);
        }
    }
    command.arg("--no-run");
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
        if let Some((manifest, target, executable)) = bench_artifact(line) {
            if !options.benches.is_empty() && !options.benches.contains(&target) {
                continue;
            }
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

/// The (manifest path, target name, executable) of a cargo `compiler-artifact` message for
/// a bench target.
fn bench_artifact(line: &str) -> Option<(String, String, String)> {
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
        value["target"]["name"].as_str()?.to_string(),
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
pub(super) fn ours_level_env(command: &mut Command, level: Level) {
    command.env_remove(SIMD_CAP_ENV);
    for key in OPENBLAS_FORCING {
        command.env_remove(key);
    }
    command.envs(level.ours_env());
}

/// The command that runs one criterion bench executable of `krate` at `level`, before
/// criterion's own arguments.
pub(super) fn criterion_command(
    executable: &Path,
    krate: &str,
    options: &Options,
    level: Level,
) -> Command {
    let mut command = Command::new(executable);
    command.current_dir(root().join("crates").join(krate));
    command.env("CRITERION_HOME", target_dir().join("criterion"));
    ours_level_env(&mut command, level);
    if options.quick {
        command.env(QUICK_ENV, "1");
    }
    command
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn bench_artifacts_are_read_from_cargo_messages() {
        let bench = r#"{"reason":"compiler-artifact","manifest_path":"/w/crates/a/Cargo.toml","target":{"kind":["bench"],"name":"a"},"executable":"/w/target/release/deps/a-123"}"#;
        assert_eq!(
            bench_artifact(bench),
            Some((
                "/w/crates/a/Cargo.toml".to_string(),
                "a".to_string(),
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
}
