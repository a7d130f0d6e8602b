//! The Python step of `cargo xtask test` and `cargo xtask demo`, for every crate under
//! `crates/` that has a `pyproject.toml` (a PyO3 package built by maturin).
//!
//! Each such crate's wheel is built once per run, in the dev profile (so the shared target
//! directory's dev artefacts are reused), by maturin from a tools venv, and installed into
//! two test venvs that are made once and reused (a stamp file records what they hold):
//! - Python 3.11 with numpy, pytest and the peers of `arrays.kaldi`, `arrays.image` and
//!   `arrays.structured` (kaldiio, kaldi-native-io, opencv-python-headless, pyarrow; each a
//!   wheel), Ray (the cluster test of the Ray pipelines) and Dask (the data pipeline's
//!   batch function on another engine), without torch: the package must work without it;
//! - Python 3.9 with k2 1.23.2 (which pulls torch 1.12.1), torchaudio and numpy < 2: the
//!   torch adapters and the comparisons with k2 itself.
//!
//! `test` runs the crate's `tests/` with pytest in both venvs; `demo` runs its
//! `examples/tour.py` in the 3.9 venv. A new Python crate needs no edit here.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::venv::{ensure_venv, find_python39, python_works, venv_python};
use crate::{members, root, run_step, target_dir, Failure, Member, Step};

/// What the tools venv holds: the PEP 517 backend, used here as a command.
const TOOLS: &[&str] = &["maturin>=1.5,<2"];

/// The venv without torch, with the peers the kaldi and image tests compare against live
/// (pinned: the byte-for-byte and pixel-for-pixel comparisons are with these versions).
const PLAIN: &[&str] = &[
    "numpy",
    "pytest",
    "kaldiio==2.18.1",
    "kaldi-native-io==1.23.0",
    "opencv-python-headless==5.0.0.93",
    "pyarrow==26.0.1",
    // the two-node cluster test of the Ray pipelines (tests/test_ray_cluster.py): Ray Data
    // pulls pandas and fsspec; 2.60.0 has a manylinux x86_64 wheel for CPython 3.11
    "ray[data]==2.60.0",
    // the data pipeline's batch function through Dask's map_partitions (tests/test_engines.py)
    "dask[dataframe]==2026.8.0",
];

/// The venv with k2 and torch (k2 1.23.2 is built for CPython 3.9 and torch 1.12.1); the
/// benchmarks' k2 peers run in it too.
pub const WITH_K2: &[&str] = &["k2==1.23.2", "numpy<2", "torchaudio==0.12.1", "pytest"];

/// A test venv: its folder name under `target/python/` and what it holds.
struct TestEnv {
    name: &'static str,
    python: String,
    packages: &'static [&'static str],
    /// The optional modules the tests must find here (`ARRAYS_TEST_REQUIRE`): a test that
    /// needs one fails rather than skips, so the torch and k2 tests always run in one venv.
    require: &'static str,
}

/// The crates under `crates/` with a `pyproject.toml`.
pub fn python_members() -> Result<Vec<Member>, Failure> {
    Ok(members()?
        .into_iter()
        .filter(|member| member.dir.join("pyproject.toml").is_file())
        .collect())
}

/// `cargo xtask test`'s Python step: build, install, and run pytest in both venvs.
pub fn test() -> Step {
    let crates = python_members()?;
    if crates.is_empty() {
        return Ok(());
    }
    let envs = test_envs()?;
    let mut failures = Vec::new();
    for member in &crates {
        let wheel = build_wheel(member)?;
        for env in &envs {
            let venv = venv_dir(env.name);
            install_wheel(&venv, &wheel)?;
            let step = format!("pytest {} ({})", member.name, env.name);
            let started = std::time::Instant::now();
            let status = Command::new(venv_python(&venv))
                .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
                .env("ARRAYS_TEST_REQUIRE", env.require)
                .current_dir(&member.dir)
                .status()
                .map_err(|err| Failure(format!("{step}: could not start: {err}")))?;
            println!(
                "xtask: {step}: {status} in {:.1} s",
                started.elapsed().as_secs_f64()
            );
            if let Some(why) = pytest_failure(status.code()) {
                failures.push(format!("{step}: {why}"));
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Failure(failures.join(", ")))
    }
}

/// Why a pytest exit code fails the step, or `None` when every test passed. Exit 5 ("no
/// tests were collected") is a failure: a suite that vanished must not pass.
fn pytest_failure(code: Option<i32>) -> Option<String> {
    match code {
        Some(0) => None,
        Some(1) => Some("tests failed".into()),
        Some(5) => Some("no tests were collected".into()),
        Some(code) => Some(format!("pytest exited with {code}")),
        None => Some("pytest was killed by a signal".into()),
    }
}

/// `cargo xtask demo`'s Python part: each Python crate's `examples/tour.py`, run in the 3.9
/// venv (with torch) with `DEMO_OUT_DIR` set; its `artefact:` lines are returned.
pub fn demo(demo_root: &Path, failures: &mut Vec<String>) -> Result<Vec<String>, Failure> {
    let crates: Vec<Member> = python_members()?
        .into_iter()
        .filter(|member| member.dir.join("examples").join("tour.py").is_file())
        .collect();
    if crates.is_empty() {
        return Ok(Vec::new());
    }
    let env = test_envs()?
        .into_iter()
        .last()
        .expect("test_envs returns both venvs");
    let venv = venv_dir(env.name);
    let mut artefacts = Vec::new();
    for member in &crates {
        println!("\n==== {} (Python) ====", member.name);
        let wheel = build_wheel(member)?;
        install_wheel(&venv, &wheel)?;
        let output = Command::new(venv_python(&venv))
            .arg(member.dir.join("examples").join("tour.py"))
            .env("DEMO_OUT_DIR", demo_root.join(&member.name))
            .current_dir(root())
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|err| Failure(format!("tour.py of {}: {err}", member.name)))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        print!("{stdout}");
        artefacts.extend(
            stdout
                .lines()
                .filter_map(|line| line.strip_prefix("artefact:"))
                .map(|path| path.trim().to_string()),
        );
        if !output.status.success() {
            failures.push(format!("tour.py of {} ({})", member.name, output.status));
        }
    }
    Ok(artefacts)
}

/// The two test venvs, made (or found made) with what they must hold.
fn test_envs() -> Result<Vec<TestEnv>, Failure> {
    let python311 = if python_works("python3.11") {
        "python3.11".to_string()
    } else {
        "python3".to_string()
    };
    let python39 = find_python39().ok_or_else(|| {
        Failure(
            "the Python tests need Python 3.9 (k2 1.23.2 and torch 1.12 are built for it)".into(),
        )
    })?;
    let envs = vec![
        TestEnv {
            name: "venv-plain",
            python: python311,
            packages: PLAIN,
            require: "kaldiio,kaldi_native_io,cv2,pyarrow,ray,dask",
        },
        TestEnv {
            name: "venv-k2",
            python: python39,
            packages: WITH_K2,
            require: "torch,k2",
        },
    ];
    for env in &envs {
        ensure_venv(&env.python, &venv_dir(env.name), env.packages)?;
    }
    Ok(envs)
}

/// Builds `member`'s wheel with maturin (dev profile) into `target/python/wheels/<crate>/`
/// and returns its path.
fn build_wheel(member: &Member) -> Result<PathBuf, Failure> {
    let tools = venv_dir("venv-tools");
    let python = if python_works("python3.11") {
        "python3.11"
    } else {
        "python3"
    };
    ensure_venv(python, &tools, TOOLS)?;
    let out = python_dir().join("wheels").join(&member.name);
    // one wheel in the folder: the one just built
    let _ = std::fs::remove_dir_all(&out);
    run_step(
        &format!("maturin build ({})", member.name),
        Command::new(tools.join("bin").join("maturin"))
            .args(["build", "--quiet", "--profile", "dev", "--out"])
            .arg(&out)
            .arg("--manifest-path")
            .arg(member.dir.join("Cargo.toml"))
            .current_dir(root()),
    )?;
    let wheel = std::fs::read_dir(&out)
        .map_err(|err| Failure(format!("{}: {err}", out.display())))?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .ok_or_else(|| Failure(format!("maturin wrote no wheel to {}", out.display())))?;
    Ok(wheel)
}

/// Installs `wheel` into `venv`, replacing the copy a previous run installed.
fn install_wheel(venv: &Path, wheel: &Path) -> Step {
    run_step(
        &format!("pip install {}", wheel.display()),
        Command::new(venv_python(venv))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--no-deps", "--force-reinstall"])
            .arg(wheel),
    )
}

/// `target/python/`: the venvs and wheels of this step.
fn python_dir() -> PathBuf {
    target_dir().join("python")
}

/// The folder of the venv `name` under `target/python/`.
pub fn venv_dir(name: &str) -> PathBuf {
    python_dir().join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_exit_codes() {
        assert_eq!(pytest_failure(Some(0)), None);
        assert!(pytest_failure(Some(1)).is_some());
        // no tests collected is a failure, not a pass
        assert!(pytest_failure(Some(5)).unwrap().contains("no tests"));
        assert!(pytest_failure(Some(2)).is_some());
        assert!(pytest_failure(None).is_some());
    }

    #[test]
    fn the_python_crate_is_found() {
        let names: Vec<String> = python_members()
            .unwrap()
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert!(names.iter().any(|n| n == "arrays-python"), "{names:?}");
    }
}
