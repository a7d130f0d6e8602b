//! `cargo xtask setup`: makes sure OpenBLAS (with its LAPACK) is there for the linker.
//!
//! Debian's `libopenblas-dev` provides `libopenblas.so`, which exports the CBLAS and the
//! LAPACK symbols `dense-matrix` needs. When it is missing and we are root with apt-get,
//! it is installed; otherwise the exact command to run is printed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{run_step, Failure, Step};

const PACKAGE: &str = "libopenblas-dev";

/// Folders the linker searches for `libopenblas.so` on Debian-like systems.
fn library_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("OPENBLAS_LIB_DIR") {
        dirs.push(dir.into());
    }
    for base in ["/usr/lib", "/usr/lib64", "/usr/local/lib", "/lib"] {
        dirs.push(base.into());
        // multiarch folders such as /usr/lib/x86_64-linux-gnu and their openblas-pthread/
        if let Ok(entries) = std::fs::read_dir(base) {
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name();
                if name.to_string_lossy().ends_with("-linux-gnu") && path.is_dir() {
                    dirs.push(path.join("openblas-pthread"));
                    dirs.push(path);
                }
            }
        }
    }
    dirs
}

/// Where `libopenblas.so` is, if anywhere.
pub fn find_openblas() -> Option<PathBuf> {
    library_dirs()
        .into_iter()
        .map(|dir| dir.join("libopenblas.so"))
        .find(|path| path.exists())
}

fn is_root() -> bool {
    // The `Uid:` line of /proc/self/status holds the real, effective, saved and filesystem
    // uids after its label; the second number is the effective one.
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

fn have(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| Path::new(&dir).join(program).is_file())
    })
}

/// Checks for OpenBLAS and installs it when it can.
pub fn run() -> Step {
    if let Some(path) = find_openblas() {
        println!("xtask: setup: OpenBLAS found at {}", path.display());
        return Ok(());
    }
    let command = format!("apt-get update && apt-get install -y {PACKAGE}");
    if !(is_root() && have("apt-get")) {
        return Err(Failure(format!(
            "setup: OpenBLAS (libopenblas.so) is missing; install it with:\n    sudo sh -c '{command}'"
        )));
    }
    println!("xtask: setup: OpenBLAS is missing; installing {PACKAGE} with apt-get");
    run_step(
        "apt-get update",
        Command::new("apt-get")
            .arg("update")
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    run_step(
        &format!("apt-get install -y {PACKAGE}"),
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", PACKAGE])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    match find_openblas() {
        Some(path) => {
            println!("xtask: setup: OpenBLAS installed at {}", path.display());
            Ok(())
        }
        None => Err(Failure(format!(
            "setup: {PACKAGE} installed but libopenblas.so was not found in {:?}",
            library_dirs()
        ))),
    }
}

/// Makes sure Graphviz's `dot` is there for the demo's pictures: installs Debian's
/// `graphviz` as root with apt-get, otherwise says how. Never fatal: without `dot` the demo
/// keeps its `.dot` files and says so.
pub fn ensure_graphviz() -> bool {
    if have("dot") {
        return true;
    }
    if !(is_root() && have("apt-get")) {
        println!(
            "xtask: setup: Graphviz is missing, so the demo writes .dot files without SVG \
             pictures; install it with: sudo apt-get install graphviz"
        );
        return false;
    }
    println!("xtask: setup: installing graphviz with apt-get for the demo's pictures");
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|status| status.success())
    };
    let installed = apt(&["install", "-y", "--no-install-recommends", "graphviz"])
        || (apt(&["update"]) && apt(&["install", "-y", "--no-install-recommends", "graphviz"]));
    if !installed || !have("dot") {
        println!("xtask: setup: could not install graphviz; the demo keeps its .dot files");
        return false;
    }
    true
}
