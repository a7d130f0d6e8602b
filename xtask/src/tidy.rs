//! Tidy checks of the repository's own documents and conventions, run as tests:
//! ARCHITECTURE.md's code map names every source file, and every file it names exists; no
//! public `new` returns a `Result` (ARCHITECTURE.md's constructor convention: `new`
//! panics, `try_new` returns the error).
//!
//! A section of the code map is headed ``### `crates/<name>` `` (or `fuzz`, or
//! `` `xtask` and `benches` ``). A Rust file under that crate's `src/` counts as named when
//! a backticked word of its section is its file name (`text.rs`), its path below `src/`
//! (`ops/sum.rs`), or a folder holding it (`ops/`, `sparse/`). `lib.rs`, `main.rs` and
//! `mod.rs` are the entry points and need no entry.

#![cfg(test)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The code map's sections: the source roots each covers, and the backticked words in it.
fn sections(map: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut in_code_map = false;
    for line in map.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            in_code_map = title.trim() == "Code map";
            current = None;
            continue;
        }
        if !in_code_map {
            continue;
        }
        if let Some(title) = line.strip_prefix("### ") {
            current = Some(title.trim().to_string());
            out.entry(title.trim().to_string()).or_default();
            continue;
        }
        if let Some(title) = &current {
            let words = out.get_mut(title).expect("section was entered");
            words.extend(
                line.split('`')
                    .skip(1)
                    .step_by(2)
                    .map(|word| word.trim().to_string()),
            );
        }
    }
    out
}

/// The folders a section's title stands for, relative to the workspace root.
fn roots(title: &str) -> Vec<PathBuf> {
    title
        .split('`')
        .skip(1)
        .step_by(2)
        .map(PathBuf::from)
        .collect()
}

/// Every `.rs` file under `dir`, as paths relative to `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                out.push(path.strip_prefix(dir).expect("under dir").to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The problems of the code map in `map` against the files under `root`.
fn code_map_problems(root: &Path, map: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (title, words) in sections(map) {
        for crate_dir in roots(&title) {
            let src = root.join(&crate_dir).join("src");
            let files = rust_files(&src);
            for file in &files {
                let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if matches!(name, "lib.rs" | "main.rs" | "mod.rs") {
                    continue;
                }
                let relative = file.to_string_lossy().replace('\\', "/");
                let from_root = format!("{}/src/{relative}", crate_dir.display());
                let named = words.iter().any(|word| {
                    word == name
                        || word == &from_root
                        || *word == format!("src/{relative}")
                        || word == &relative
                        || relative.ends_with(&format!("/{word}"))
                        || (word.ends_with('/') && relative.starts_with(word.as_str()))
                        || (word.ends_with('/') && relative.contains(&format!("/{word}")))
                });
                if !named {
                    problems.push(format!(
                        "{}/src/{relative} is missing from the code map's section {title}",
                        crate_dir.display()
                    ));
                }
            }
        }
        // a `*.rs` word must name a file of one of the section's folders (or, for a
        // pattern such as `examples/tour.rs`, of some crate)
        let mut searched = roots(&title);
        searched.push(PathBuf::from("crates"));
        let all: Vec<String> = searched
            .iter()
            .flat_map(|dir| {
                rust_files(&root.join(dir))
                    .into_iter()
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
            })
            .collect();
        for word in words
            .iter()
            .filter(|w| w.ends_with(".rs") && !w.contains(' '))
        {
            // a path from the workspace root, or a name of a file of the section's folders
            let found = root.join(word).is_file()
                || all
                    .iter()
                    .any(|path| path == word || path.ends_with(&format!("/{word}")));
            if !found {
                problems.push(format!(
                    "the code map's section {title} names `{word}`, which is not there"
                ));
            }
        }
    }
    problems
}

#[test]
fn the_code_map_names_every_source_file_and_no_file_that_is_gone() {
    let root = crate::root();
    let map = std::fs::read_to_string(root.join("docs").join("ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md is readable");
    let problems = code_map_problems(&root, &map);
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md's code map is out of date:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_file_left_out_and_a_file_gone_are_both_reported() {
    let dir = std::env::temp_dir().join(format!("xtask-tidy-{}", std::process::id()));
    let src = dir.join("crates").join("demo").join("src");
    std::fs::create_dir_all(src.join("ops")).unwrap();
    for file in [
        "lib.rs",
        "named.rs",
        "left_out.rs",
        "ops/sum.rs",
        "ops/mod.rs",
    ] {
        std::fs::write(src.join(file), "").unwrap();
    }
    let map = "## Code map\n\n### `crates/demo`\n\n- `named.rs`, `ops/`, `gone.rs`.\n\n## Next\n`left_out.rs`\n";
    let mut problems = code_map_problems(&dir, map);
    problems.sort();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        problems,
        [
            "crates/demo/src/left_out.rs is missing from the code map's section `crates/demo`",
            "the code map's section `crates/demo` names `gone.rs`, which is not there",
        ]
    );
}

/// The public functions named `new` in `source` whose signature returns a `Result`, as
/// 1-based line numbers: the constructor convention gives that signature to `try_new`.
fn fallible_news(source: &str) -> Vec<usize> {
    let mut found = Vec::new();
    for (start, line) in source.lines().enumerate() {
        let code = line.trim_start();
        if !(code.starts_with("pub fn new(") || code.starts_with("pub fn new<")) {
            continue;
        }
        // The signature runs to the body's opening brace (or a trait item's `;`).
        let signature: String = source
            .lines()
            .skip(start)
            .take_while(|l| !l.trim_end().ends_with('{') && !l.trim_end().ends_with(';'))
            .chain(
                source
                    .lines()
                    .skip(start)
                    .find(|l| l.trim_end().ends_with('{') || l.trim_end().ends_with(';')),
            )
            .collect();
        if signature
            .split_once("->")
            .is_some_and(|(_, output)| output.trim_start().starts_with("Result"))
        {
            found.push(start + 1);
        }
    }
    found
}

#[test]
fn no_public_new_returns_a_result() {
    let root = crate::root();
    let mut problems = Vec::new();
    let Ok(crates) = std::fs::read_dir(root.join("crates")) else {
        panic!("crates/ is readable");
    };
    for krate in crates.flatten() {
        let src = krate.path().join("src");
        for file in rust_files(&src) {
            let text = std::fs::read_to_string(src.join(&file)).expect("a readable source file");
            for line in fallible_news(&text) {
                problems.push(format!(
                    "{}:{line}",
                    src.join(&file)
                        .strip_prefix(&root)
                        .expect("under root")
                        .display()
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "a public `new` returns a Result (name it `try_new`, with a panicking `new`, as \
         ARCHITECTURE.md's constructor convention says):\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_fallible_new_is_found_on_one_line_and_across_lines() {
    let source = "impl A {\n    pub fn new(x: u8) -> Result<Self, E> {\n    }\n    pub fn new(\n        x: u8,\n    ) -> Result<Self, E> {\n    }\n    pub fn new(x: u8) -> Self {\n    }\n    pub fn try_new(x: u8) -> Result<Self, E> {\n    }\n}\n";
    assert_eq!(fallible_news(source), [2, 4]);
}
