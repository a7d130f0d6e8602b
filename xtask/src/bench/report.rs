//! The report: one machine's section of `docs/BENCHMARKS.md` rendered from the
//! measurements (a row per workload and peer, the ratio with its spread over the rounds),
//! and merged into the document without touching other machines' sections.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::chart::{with_charts, CHART_DIR};
use super::machine::machine_title;
use super::{Level, Measurement, Options};
use crate::{root, target_dir, Failure, Step};

/// Writes one level's `section` into this machine's section of the benchmarks document
/// ([`benchmarks_path`]), keeping other machines' sections and, for a run of some crates or
/// bench targets, the rows it did not measure ([`keep_earlier_rows`]).
pub(super) fn write_section(options: &Options, level: Level, section: String) -> Step {
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
        Some((_, old_section)) if !options.crates.is_empty() || !options.benches.is_empty() => {
            keep_earlier_rows(
                &old_section,
                &section,
                &options.crates,
                !options.benches.is_empty(),
            )
        }
        _ => section,
    };
    let doc = merge_machine_section(&old, &title, &section);
    write_with_charts(&path, &doc)?;
    println!("xtask: wrote {} ({} level)", path.display(), level.flag());
    Ok(())
}

/// Writes the benchmarks document `doc` to `path` with every section's chart line, and the
/// charts into [`CHART_DIR`] beside it (removing the charts no section links any more).
pub(super) fn write_with_charts(path: &Path, doc: &str) -> Step {
    let (doc, charts) = charted(doc);
    std::fs::write(path, &doc)
        .map_err(|err| Failure(format!("writing {}: {err}", path.display())))?;
    let dir = path.parent().unwrap_or(Path::new(".")).join(CHART_DIR);
    std::fs::create_dir_all(&dir)
        .map_err(|err| Failure(format!("creating {}: {err}", dir.display())))?;
    for (name, svg) in &charts {
        let file = dir.join(name);
        std::fs::write(&file, svg)
            .map_err(|err| Failure(format!("writing {}: {err}", file.display())))?;
    }
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".svg") && !charts.iter().any(|(chart, _)| *chart == name) {
            std::fs::remove_file(entry.path())
                .map_err(|err| Failure(format!("removing {name}: {err}")))?;
        }
    }
    println!("xtask: drew {} charts in {}", charts.len(), dir.display());
    Ok(())
}

/// The benchmarks document `doc` with every machine section's chart line, and the charts
/// (file name, SVG text); a section written by hand is left as it is, without a chart.
fn charted(doc: &str) -> (String, Vec<(String, String)>) {
    let mut charts = Vec::new();
    let sections = machine_sections(doc)
        .into_iter()
        .map(|(head, body)| {
            if !head.starts_with(MACHINE_HEADING) {
                return (head, body);
            }
            let (body, of_section) = with_charts(&head, &body);
            charts.extend(of_section);
            (head, body)
        })
        .collect();
    (assemble(sections), charts)
}

/// Redraws the charts of the benchmarks document from its tables, without running a
/// bench (`cargo xtask bench --charts-only`).
pub(super) fn redraw_charts(options: &Options) -> Step {
    let path = benchmarks_path(options);
    let doc = std::fs::read_to_string(&path)
        .map_err(|err| Failure(format!("reading {}: {err}", path.display())))?;
    write_with_charts(&path, &assemble(machine_sections(&doc)))
}

/// The file a run writes its table into: `docs/BENCHMARKS.md` for a full run; for
/// `--quick`, whose figures are not comparable, `BENCHMARKS-quick.md` in the target
/// directory, never over this machine's section of the docs.
pub(super) fn benchmarks_path(options: &Options) -> PathBuf {
    if options.quick {
        target_dir().join("BENCHMARKS-quick.md")
    } else {
        root().join("docs").join("BENCHMARKS.md")
    }
}

pub(super) fn format_seconds(seconds: f64) -> String {
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
pub(super) fn median(values: &[f64]) -> f64 {
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
section and keeps the others, a run of some crates only keeps the other crates' rows \
in it, and a run of some bench targets (`--bench rnnt`) every row but the workloads our \
side measured in it, with the date of the run they come from. A run with `--simd-cap avx2` (or `both`) writes a section of \
its own for the same CPU with AVX-512 masked on both sides, an emulated AVX2-only machine, \
headed so. Each row is one workload, timed by criterion on our side \
(median) and by the peer on the same seeded input, in alternating rounds; ratio = ours / \
peer, so below 1.0 means we are faster. A ratio whose spread over the rounds crosses 1.0 is \
marked *not settled*. A section under another heading than `## Machine:` was measured by \
hand (it says how) and every run keeps it as it is.\n";

/// How the heading of a section `cargo xtask bench` writes begins.
const MACHINE_HEADING: &str = "## Machine: ";

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
    assemble(sections)
}

/// The document of the preamble and `sections` (heading, body).
fn assemble(sections: Vec<(String, String)>) -> String {
    let mut doc = String::from(PREAMBLE);
    for (head, body) in sections {
        // One blank line between sections: a body read back holds the blank lines that
        // stood before the next heading, which would otherwise pile up run after run.
        let _ = writeln!(doc, "\n{head}\n\n{}", body.trim_matches('\n'));
    }
    doc
}

/// The sections of a `BENCHMARKS.md`: (heading, body), in order; the machine sections
/// (`## Machine: ...`) and the sections written by hand under another `## ` heading, which
/// a run keeps as they are.
pub(super) fn machine_sections(doc: &str) -> Vec<(String, String)> {
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in doc.lines() {
        if line.starts_with("## ") {
            if let Some(done) = current.take() {
                sections.push(done);
            }
            current = Some((line.to_string(), String::new()));
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

/// The (crate, workload) of a table row.
fn row_key(line: &str) -> Option<(&str, &str)> {
    let mut cells = line.strip_prefix("| ")?.split(" | ");
    let krate = cells.next()?;
    let workload = cells.next()?;
    (krate != "crate" && !krate.starts_with("---")).then_some((krate, workload))
}

/// A table cell with no figure: our time when our side did not time the workload, a ratio
/// without both sides.
const NO_FIGURE: &str = "—";

/// The time of ours in a table row ([`NO_FIGURE`] when our side did not time the workload).
fn ours_cell(line: &str) -> Option<&str> {
    row_key(line)?;
    line.strip_prefix("| ")?.split(" | ").nth(2)
}

/// How a [`KEPT_FACT`] line names a crate some of whose rows this run replaced.
const PARTLY_KEPT: &str = " (other workloads)";

/// A restricted run keeps the earlier rows it did not measure from `old_section` (this
/// machine's section before the run) in `section`: a run of some crates (`cargo xtask
/// bench dataflow`, `by_workload == false`) replaces every row of the `selected` crates; a
/// run of some bench targets (`--bench rnnt`, `by_workload == true`) replaces only the rows
/// of the (crate, workload) pairs it measured. The section says which earlier run each kept
/// crate's figures come from, keeps the earlier notes of the crates it kept rows of (but
/// the ones this run repeats), and keeps the facts only that run recorded (the BLAS kernel,
/// say) marked as the earlier run's.
pub fn keep_earlier_rows(
    old_section: &str,
    section: &str,
    selected: &[String],
    by_workload: bool,
) -> String {
    let is_other = |name: &str| !selected.iter().any(|s| s == name);
    let (old_table, old_notes) = split_notes(old_section);
    // a workload counts as measured when our side timed it: a peer script may time more
    // workloads than the bench targets run (the peers of every target of a crate), and
    // those rows, with no time of ours, must not replace complete earlier ones
    let measured: Vec<(&str, &str)> = split_notes(section)
        .0
        .lines()
        .filter(|l| !by_workload || ours_cell(l).is_some_and(|ours| ours != NO_FIGURE))
        .filter_map(row_key)
        .collect();
    let replaced = |key: (&str, &str)| {
        if by_workload {
            measured.contains(&key)
        } else {
            !is_other(key.0)
        }
    };
    let kept_rows: Vec<&str> = old_table
        .lines()
        .filter(|l| row_key(l).is_some_and(|key| !replaced(key)))
        .collect();
    if kept_rows.is_empty() {
        return section.to_string();
    }
    let new_notes: Vec<&str> = split_notes(section)
        .1
        .lines()
        .filter(|l| l.starts_with("- "))
        .collect();
    let kept_notes = old_notes.lines().filter(|l| {
        !new_notes.contains(l)
            && row_crate(l).is_some_and(|name| (by_workload || is_other(name)) && name != "Python")
    });
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
                date_of.insert(name.strip_suffix(PARTLY_KEPT).unwrap_or(name), date);
            }
        }
    }
    let mut by_date: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for name in kept_rows.iter().filter_map(|l| row_crate(l)) {
        let label = if measured.iter().any(|(krate, _)| *krate == name) {
            format!("{name}{PARTLY_KEPT}")
        } else {
            name.to_string()
        };
        let names = by_date
            .entry(date_of.get(name).copied().unwrap_or(old_date))
            .or_default();
        if !names.contains(&label) {
            names.push(label);
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
            let kept_instead = row_key(line).is_some_and(|key| {
                !replaced(key) && kept_rows.iter().any(|k| row_key(k) == Some(key))
            });
            if !kept_instead {
                rows.push(line);
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    rows.extend(kept_rows);
    // by crate and workload; a workload's rows (one per peer) stay in their order
    rows.sort_by_key(|l| row_key(l).map(|(c, w)| (c.to_string(), w.to_string())));
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
        let ours_text = our_time.map_or_else(|| NO_FIGURE.to_string(), format_seconds);
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
                (NO_FIGURE.to_string(), NO_FIGURE.to_string())
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
    fn a_section_written_by_hand_is_kept_as_it_is_and_gets_no_chart() {
        let machine =
            merge_machine_section("", "Machine: A, v3", "| c | w | 1 s | p | 2 s | 0.50 |\n");
        let hand = "## LG at 200,000 words (by hand)\n\n- command: `x`\n\n\
                    | side | a | b | c | d | 0.25 | e |\n";
        let doc = format!("{machine}\n{hand}");
        let rerun =
            merge_machine_section(&doc, "Machine: A, v3", "| c | w | 3 s | p | 2 s | 1.50 |\n");
        assert!(rerun.contains(hand), "{rerun}");
        assert!(
            rerun.contains("| 1.50 |") && !rerun.contains("| 0.50 |"),
            "{rerun}"
        );
        let newer = merge_machine_section(&rerun, "Machine: B, v4", "- two\n");
        assert!(newer.contains(hand), "{newer}");
        let (charted_doc, charts) = charted(&newer);
        assert_eq!(
            charts.len(),
            1,
            "only the machine section's crate is charted"
        );
        assert!(charted_doc.contains(hand), "{charted_doc}");
        let (_, hand_body) = charted_doc.split_once("(by hand)\n").unwrap();
        assert!(!hand_body.contains("Charts ("), "{charted_doc}");
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
        let merged = keep_earlier_rows(&old, &new, &["beta".to_string()], false);
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
        let again = keep_earlier_rows(&merged, &third, &["alpha".to_string()], false);
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
            keep_earlier_rows(
                &old,
                &new,
                &["alpha".into(), "beta".into(), "gamma".into()],
                false
            ),
            new
        );
    }

    /// One round-0 measurement.
    fn measured(krate: &str, workload: &str, peer: Option<&str>, seconds: f64) -> Measurement {
        Measurement {
            krate: krate.into(),
            workload: workload.into(),
            peer: peer.map(Into::into),
            seconds,
            version: String::new(),
            round: 0,
        }
    }

    /// A section's facts with only its date.
    fn dated(day: &str) -> Vec<(String, String)> {
        vec![("date".to_string(), day.to_string())]
    }

    #[test]
    fn a_run_of_one_bench_target_replaces_only_the_workloads_it_measured() {
        let m = measured;
        let date = dated;
        let old = render(
            &[
                m("fsa", "arc_sort", None, 1.0),
                m("fsa", "arc_sort", Some("k2"), 2.0),
                m("fsa", "rnnt_loss", None, 3.0),
                m("fsa", "rnnt_loss", Some("k2"), 4.0),
                m("fsa", "rnnt_loss", Some("torchaudio"), 5.0),
                m("other", "w", None, 6.0),
            ],
            &[
                "fsa peer kaldifst skipped: arc_sort note".to_string(),
                "fsa peer k2: same note".to_string(),
            ],
            &date("day 1"),
        );
        let new = render(
            &[
                m("fsa", "rnnt_loss", None, 7.0),
                m("fsa", "rnnt_loss", Some("k2"), 8.0),
                m("fsa", "rnnt_pruned", None, 9.0),
            ],
            &["fsa peer k2: same note".to_string()],
            &date("day 2"),
        );
        let merged = keep_earlier_rows(&old, &new, &["fsa".to_string()], true);
        let rows: Vec<(&str, &str, &str)> = merged
            .lines()
            .filter_map(|l| {
                let (krate, workload) = row_key(l)?;
                Some((krate, workload, l.split(" | ").nth(2)?))
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("fsa", "arc_sort", "1.000 s"),
                ("fsa", "rnnt_loss", "7.000 s"),
                ("fsa", "rnnt_pruned", "9.000 s"),
                ("other", "w", "6.000 s"),
            ],
            "{merged}"
        );
        // the measured workload's old peer rows went with it, the other workload's stayed
        assert!(!merged.contains("torchaudio"), "{merged}");
        assert!(merged.contains("| fsa | arc_sort | 1.000 s | k2 | 2.000 s |"));
        assert!(merged.contains(
            "- rows kept from the earlier run of day 1 (this run did not bench them): \
             fsa (other workloads), other\n"
        ));
        assert!(merged.contains("- date: day 2"));
        // the crate's earlier notes stay, once
        assert!(merged.contains("- fsa peer kaldifst skipped: arc_sort note"));
        assert_eq!(merged.matches("same note").count(), 1, "{merged}");
        // a later run of another crate keeps the dates apart again
        let later = render(&[m("other", "w", None, 1.0)], &[], &date("day 3"));
        let again = keep_earlier_rows(&merged, &later, &["other".to_string()], false);
        assert!(again.contains("earlier run of day 1 (this run did not bench them): fsa\n"));
        assert!(again.contains("| fsa | rnnt_loss | 7.000 s |"), "{again}");
    }

    #[test]
    fn a_peer_timing_a_workload_our_run_did_not_bench_keeps_the_earlier_row() {
        // `--bench structured-tensor` runs one bench target, but the crate's peer script
        // times the workloads of the others too (pyarrow's `from_arrow`, say)
        let m = |workload: &str, peer: Option<&str>, seconds: f64| {
            measured("st", workload, peer, seconds)
        };
        let date = dated;
        let old = render(
            &[
                m("from_arrow", None, 1.0),
                m("from_arrow", Some("pyarrow"), 2.0),
                m("gather", None, 3.0),
                m("gather", Some("awkward"), 4.0),
            ],
            &[],
            &date("day 1"),
        );
        let new = render(
            &[
                m("from_arrow", Some("pyarrow"), 5.0),
                m("gather", None, 6.0),
                m("gather", Some("awkward"), 7.0),
                m("peer_only", Some("pandas"), 8.0),
            ],
            &[],
            &date("day 2"),
        );
        let merged = keep_earlier_rows(&old, &new, &["st".to_string()], true);
        let rows: Vec<&str> = merged.lines().filter(|l| row_key(l).is_some()).collect();
        assert_eq!(
            rows,
            [
                "| st | from_arrow | 1.000 s | pyarrow | 2.000 s | 0.50 | one round |",
                "| st | gather | 6.000 s | awkward | 7.000 s | 0.86 | one round |",
                "| st | peer_only | — | pandas | 8.000 s | — | — |",
            ],
            "{merged}"
        );
        assert!(merged.contains(
            "- rows kept from the earlier run of day 1 (this run did not bench them): \
             st (other workloads)\n"
        ));
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
}
