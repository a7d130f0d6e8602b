//! Replays every checked-in corpus file (`corpus/<target>/`) and every past crash
//! (`regressions/<target>/`) through its target: deterministic and quick, so CI keeps the
//! class of defects the fuzzing campaign found from coming back. Inputs in `found/` are
//! crashes of defects not fixed yet; they are not replayed here (the lead moves them to
//! `regressions/` once the fixes land).

use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use fuzz_targets::{target, TARGETS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The files under `folder/<target>/` for every target folder there, sorted; a folder
/// that names no target is an error, so nothing is skipped silently.
fn inputs(folder: &str) -> Vec<(String, PathBuf)> {
    let root = fuzz_dir().join(folder);
    let Ok(entries) = fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries {
        let dir = entry.expect("readable folder entry").path();
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 folder name")
            .to_string();
        if !dir.is_dir() {
            continue;
        }
        assert!(
            target(&name).is_some(),
            "{folder}/{name} names no fuzz target (known: {:?})",
            TARGETS.iter().map(|t| t.0).collect::<Vec<_>>()
        );
        for file in fs::read_dir(&dir).expect("readable target folder") {
            let path = file.expect("readable file entry").path();
            if path.is_file() {
                found.push((name.clone(), path));
            }
        }
    }
    found.sort();
    found
}

/// Runs every input, collecting the failures so one run reports them all.
fn replay(folder: &str) -> usize {
    let all = inputs(folder);
    let mut failures = Vec::new();
    for (name, path) in &all {
        let data = fs::read(path).expect("readable input");
        let run = target(name).expect("checked in inputs()");
        if let Err(cause) = panic::catch_unwind(AssertUnwindSafe(|| run(&data))) {
            let message = cause
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| cause.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)")
                .to_string();
            failures.push(format!("{}: {message}", path.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} inputs failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
    all.len()
}

#[test]
fn corpus_replays_clean() {
    let count = replay("corpus");
    println!("replayed {count} corpus inputs");
}

#[test]
fn every_target_has_a_corpus() {
    let all = inputs("corpus");
    for (name, _) in TARGETS {
        assert!(
            all.iter().any(|(t, _)| t == name),
            "corpus/{name}/ is missing or empty"
        );
    }
}

#[test]
fn past_crashes_stay_fixed() {
    let count = replay("regressions");
    println!("replayed {count} past crashes");
}

#[test]
fn checked_in_corpus_stays_small() {
    let total: u64 = inputs("corpus")
        .iter()
        .map(|(_, path)| fs::metadata(path).expect("readable").len())
        .sum();
    assert!(
        total < 4 << 20,
        "the corpus holds {total} bytes; minimise it"
    );
}

#[test]
fn a_failing_input_is_reported_with_its_path() {
    // The replay machinery itself: a panic inside a target is caught and carries its message.
    let result = panic::catch_unwind(|| {
        let run: fuzz_targets::Target = |_| panic!("round trip broke");
        run(b"x");
    });
    let cause = result.expect_err("the target panicked");
    assert_eq!(cause.downcast_ref::<&str>(), Some(&"round trip broke"));
}
