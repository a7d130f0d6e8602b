//! The `rust-version` check of `cargo xtask test`: the version the workspace declares must
//! be at least the `rust-version` of every locked dependency built for this machine, so the
//! declaration never promises a toolchain the dependencies have left behind.
//!
//! This checks the dependencies only. Our own use of the standard library is checked by
//! clippy's `incompatible_msrv` lint, which reads the same declaration.

use serde_json::Value;

use crate::{cargo, Failure, Step};

/// A `major.minor.patch` version; a missing part counts as 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(u32, u32, u32);

impl Version {
    /// Parses `1.88`, `1.88.0` (and nothing else: a suffix or a fourth part is an error).
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = text.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next().map_or(Some(0), |p| p.parse().ok())?;
        let patch = parts.next().map_or(Some(0), |p| p.parse().ok())?;
        if parts.next().is_some() {
            return None;
        }
        Some(Version(major, minor, patch))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// Runs `cargo metadata` for this machine's target and checks its answer.
pub fn run() -> Step {
    println!("xtask: rust-version check");
    let host = host_triple()?;
    let output = cargo()
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--filter-platform", &host])
        .output()
        .map_err(|err| Failure(format!("rust-version check: cargo metadata: {err}")))?;
    if !output.status.success() {
        return Err(Failure(format!(
            "rust-version check: cargo metadata failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let metadata: Value = serde_json::from_slice(&output.stdout)
        .map_err(|err| Failure(format!("rust-version check: cargo metadata output: {err}")))?;
    let declared = check(&metadata).map_err(|msg| Failure(format!("rust-version check: {msg}")))?;
    println!("xtask: rust-version {declared} covers every locked dependency");
    Ok(())
}

/// The host triple, from `rustc -vV`.
fn host_triple() -> Result<String, Failure> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .map_err(|err| Failure(format!("rust-version check: rustc -vV: {err}")))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(|host| host.trim().to_string())
        .ok_or_else(|| Failure("rust-version check: rustc -vV names no host".into()))
}

/// The workspace's declared version (the lowest its members declare), or a message naming
/// every member without one and every dependency that needs a newer toolchain.
pub fn check(metadata: &Value) -> Result<Version, String> {
    let members: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .ok_or("cargo metadata has no workspace_members")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let packages = metadata["packages"]
        .as_array()
        .ok_or("cargo metadata has no packages")?;
    let rust_version = |p: &Value| p["rust_version"].as_str().and_then(Version::parse);
    let label = |p: &Value| {
        let field = |key: &str| p[key].as_str().unwrap_or("?").to_string();
        format!("{} {}", field("name"), field("version"))
    };
    let is_member = |p: &Value| p["id"].as_str().is_some_and(|id| members.contains(&id));

    let mut declared: Option<Version> = None;
    let mut problems = Vec::new();
    for p in packages.iter().filter(|p| is_member(p)) {
        match rust_version(p) {
            Some(v) => declared = Some(declared.map_or(v, |d| d.min(v))),
            None => problems.push(format!("{} declares no rust-version", label(p))),
        }
    }
    let declared = declared.ok_or("no workspace member declares a rust-version")?;
    for p in packages.iter().filter(|p| !is_member(p)) {
        if let Some(needed) = rust_version(p).filter(|&v| v > declared) {
            problems.push(format!(
                "{} needs rust {needed}, the workspace declares {declared}",
                label(p)
            ));
        }
    }
    if problems.is_empty() {
        Ok(declared)
    } else {
        Err(problems.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(Version::parse("1.88"), Some(Version(1, 88, 0)));
        assert_eq!(Version::parse("1.88.1"), Some(Version(1, 88, 1)));
        assert_eq!(Version::parse("2"), Some(Version(2, 0, 0)));
        assert_eq!(Version::parse("1.88-beta"), None);
        assert_eq!(Version::parse("1.2.3.4"), None);
        assert_eq!(Version::parse(""), None);
        assert!(Version::parse("1.9").unwrap() < Version::parse("1.10").unwrap());
        assert_eq!(Version(1, 88, 0).to_string(), "1.88.0");
    }

    fn metadata(packages: Value) -> Value {
        json!({"workspace_members": ["a 0.1.0", "b 0.1.0"], "packages": packages})
    }

    #[test]
    fn declared_version_covers_dependencies() {
        let m = metadata(json!([
            {"id": "a 0.1.0", "name": "a", "version": "0.1.0", "rust_version": "1.88"},
            {"id": "b 0.1.0", "name": "b", "version": "0.1.0", "rust_version": "1.88"},
            {"id": "dep", "name": "dep", "version": "1.0.0", "rust_version": "1.88.0"},
            {"id": "old", "name": "old", "version": "0.3.0", "rust_version": null},
        ]));
        assert_eq!(check(&m), Ok(Version(1, 88, 0)));
    }

    #[test]
    fn newer_dependency_and_missing_declaration_are_named() {
        let m = metadata(json!([
            {"id": "a 0.1.0", "name": "a", "version": "0.1.0", "rust_version": "1.80"},
            {"id": "b 0.1.0", "name": "b", "version": "0.1.0", "rust_version": null},
            {"id": "image", "name": "image", "version": "0.25.10", "rust_version": "1.88.0"},
        ]));
        let err = check(&m).unwrap_err();
        assert!(err.contains("b 0.1.0 declares no rust-version"), "{err}");
        assert!(
            err.contains("image 0.25.10 needs rust 1.88.0, the workspace declares 1.80.0"),
            "{err}"
        );
    }
}
