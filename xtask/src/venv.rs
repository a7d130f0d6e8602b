//! Python virtual environments for the runner: the benchmarks' peers and the Python
//! packages' tests make theirs through the same functions.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{run_step, Failure, Step};

/// The interpreter inside `venv`.
pub fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// Makes `venv` with `python` (cleared first) and installs `packages` into it, once (a stamp
/// file records what was installed, so a changed list remakes it).
pub fn ensure_venv(python: &str, venv: &Path, packages: &[&str]) -> Step {
    let stamp = venv.join(".installed");
    let wanted = packages.join(" ");
    if std::fs::read_to_string(&stamp).is_ok_and(|have| have == wanted) {
        return Ok(());
    }
    run_step(
        &format!("{python} -m venv {}", venv.display()),
        Command::new(python)
            .args(["-m", "venv", "--clear"])
            .arg(venv),
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

pub fn python_works(python: &str) -> bool {
    Command::new(python)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// A Python 3.9 interpreter: `python3.9` on the PATH, else one that pyenv installed but
/// did not put on the PATH.
pub fn find_python39() -> Option<String> {
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
