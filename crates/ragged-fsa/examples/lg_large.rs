//! The LG pipeline of `benches/algebra.rs` (compose, determinize without weight pushing,
//! minimize) run once in this process at a chosen size, for issue 35's table at 200,000
//! words: each stage timed by the wall clock, and the peak resident memory read from
//! `/proc/self/status` (`VmHWM`), the same way `benches/peers/lg_large.py` reads it in the
//! k2 and kaldifst processes.
//!
//! Reading and parsing the inputs is timed apart and left out of the pipeline's time. After
//! it the process reports its resident memory (`VmRSS`) and the peak so far, then resets
//! the peak to the current RSS (writing `5` to `/proc/self/clear_refs`, Linux 4.0 and
//! later), so the peak at the end is the pipeline's own (inputs included, loading not).
//!
//! - `lg_large write DIR WORDS`: writes `DIR/L.txt` and `DIR/G.txt` (OpenFst text, seed
//!   2026, 40 phones) from `benches::graphs`, the inputs every side reads.
//! - `lg_large run DIR THREADS`: one run on a rayon pool of `THREADS` threads; prints one
//!   JSON line (stage times in seconds, memory in KiB, states and arcs per graph).
//!
//! `cargo build --release -p ragged-fsa --example lg_large`; the driver
//! `benches/peers/lg_large.py` alternates it with the peers. Not part of CI (the test below
//! runs the same code at 200 words).

use std::path::Path;
use std::time::Instant;

use ragged_fsa::{Fsa, WeightPushing};

/// Seed and phone count of the bench graphs (`benches/algebra.rs`).
const SEED: u64 = 2026;
const NUM_PHONES: usize = 40;

/// One field (`VmRSS`, `VmHWM`) of a `/proc/<pid>/status` text, in KiB.
fn status_kib(status: &str, field: &str) -> Result<u64, String> {
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .ok_or_else(|| format!("no {field} line in /proc/self/status"))?;
    let value = line
        .trim()
        .strip_suffix("kB")
        .ok_or_else(|| format!("{field} in /proc/self/status is {line:?}, not a size in kB"))?;
    value
        .trim()
        .parse()
        .map_err(|err| format!("{field} in /proc/self/status is {line:?}: {err}"))
}

/// (current RSS, peak RSS) of this process, in KiB.
fn memory_kib() -> Result<(u64, u64), String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|err| format!("reading /proc/self/status: {err}"))?;
    Ok((status_kib(&status, "VmRSS")?, status_kib(&status, "VmHWM")?))
}

/// Resets this process's peak RSS to its current RSS.
fn reset_peak() -> Result<(), String> {
    std::fs::write("/proc/self/clear_refs", "5")
        .map_err(|err| format!("resetting the peak RSS (/proc/self/clear_refs): {err}"))
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
struct Report {
    words: usize,
    threads: usize,
    /// Reading and parsing L and G, seconds.
    load_s: f64,
    /// RSS and peak RSS after loading, KiB.
    rss_after_load_kib: u64,
    peak_load_kib: u64,
    compose_s: f64,
    determinize_s: f64,
    minimize_s: f64,
    /// The three stages together (one clock around them).
    total_s: f64,
    /// CPU time of the process (all its threads) in each stage and in all three, seconds.
    cpu_s: [f64; 4],
    /// Peak RSS from the end of loading to the end of compose, of determinize and of the
    /// pipeline, KiB.
    peak_compose_kib: u64,
    peak_determinize_kib: u64,
    peak_kib: u64,
    /// (states, arcs) of L, G, L o G, its determinization and its minimization.
    sizes: [(usize, usize); 5],
}

impl Report {
    /// The JSON line the driver reads.
    fn json(&self) -> String {
        let names = ["L", "G", "LG", "det", "min"];
        let sizes: Vec<String> = names
            .iter()
            .zip(self.sizes)
            .map(|(name, (states, arcs))| format!("\"{name}\": [{states}, {arcs}]"))
            .collect();
        format!(
            "{{\"side\": \"ours\", \"words\": {}, \"threads\": {}, \"load_s\": {:.6}, \
             \"rss_after_load_kib\": {}, \"peak_load_kib\": {}, \"compose_s\": {:.6}, \
             \"determinize_s\": {:.6}, \"minimize_s\": {:.6}, \"total_s\": {:.6}, \
             \"compose_cpu_s\": {:.6}, \"determinize_cpu_s\": {:.6}, \"minimize_cpu_s\": {:.6}, \
             \"total_cpu_s\": {:.6}, \"peak_compose_kib\": {}, \"peak_determinize_kib\": {}, \
             \"peak_kib\": {}, \"sizes\": {{{}}}}}",
            self.words,
            self.threads,
            self.load_s,
            self.rss_after_load_kib,
            self.peak_load_kib,
            self.compose_s,
            self.determinize_s,
            self.minimize_s,
            self.total_s,
            self.cpu_s[0],
            self.cpu_s[1],
            self.cpu_s[2],
            self.cpu_s[3],
            self.peak_compose_kib,
            self.peak_determinize_kib,
            self.peak_kib,
            sizes.join(", ")
        )
    }
}

/// Writes `dir/L.txt` and `dir/G.txt` for `words` words.
fn write_inputs(dir: &Path, words: usize) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|err| format!("creating {}: {err}", dir.display()))?;
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|err| format!("writing {}: {err}", path.display()))
    };
    write(
        "L.txt",
        benches::graphs::lexicon_text(words, NUM_PHONES, SEED),
    )?;
    write("G.txt", benches::graphs::grammar_text(words, SEED))
}

/// The number of words of a G text: its final lines (`state cost`) are one per word plus
/// the start state.
fn words_of_grammar(g_text: &str) -> usize {
    let finals = g_text
        .lines()
        .filter(|line| line.split(' ').count() == 2)
        .count();
    finals.saturating_sub(1)
}

/// Reads and parses `dir/L.txt` and `dir/G.txt`, then runs the pipeline on `threads`
/// threads.
fn run(dir: &Path, threads: usize) -> Result<Report, String> {
    let start = Instant::now();
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(|err| format!("reading {}: {err}", path.display()))
    };
    let (l_text, g_text) = (read("L.txt")?, read("G.txt")?);
    let words = words_of_grammar(&g_text);
    let l = Fsa::from_openfst(&l_text, false).map_err(|err| format!("L.txt: {err}"))?;
    let g = Fsa::from_openfst(&g_text, true).map_err(|err| format!("G.txt: {err}"))?;
    drop((l_text, g_text));
    let load_s = start.elapsed().as_secs_f64();
    measure(l, g, words, threads, load_s)
}

/// The pipeline on `l` and `g` (already loaded, in `load_s` seconds), with its memory.
fn measure(l: Fsa, g: Fsa, words: usize, threads: usize, load_s: f64) -> Result<Report, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|err| format!("a pool of {threads} threads: {err}"))?;
    let (rss_after_load_kib, peak_load_kib) = memory_kib()?;
    reset_peak()?;
    let (total, total_cpu) = (Instant::now(), benches::process_cpu_seconds());
    let mut cpu_s = [0.0; 4];
    let mut cpu = total_cpu;
    // the CPU time since the last lap, into `cpu_s[stage]`
    let mut lap = |stage: usize| {
        let now = benches::process_cpu_seconds();
        cpu_s[stage] = now - cpu;
        cpu = now;
    };
    let (lg, compose_s) = pool.install(|| {
        let start = Instant::now();
        let (lg, _, _) = l
            .compose(&g, true)
            .map_err(|err| format!("compose: {err}"))?;
        Ok::<_, String>((lg, start.elapsed().as_secs_f64()))
    })?;
    lap(0);
    let (_, peak_compose_kib) = memory_kib()?;
    let (det, determinize_s) = pool.install(|| {
        let start = Instant::now();
        let (det, _) = lg
            .determinize(WeightPushing::None)
            .map_err(|err| format!("determinize: {err}"))?;
        Ok::<_, String>((det, start.elapsed().as_secs_f64()))
    })?;
    lap(1);
    let (_, peak_determinize_kib) = memory_kib()?;
    let (min, minimize_s) = pool.install(|| {
        let start = Instant::now();
        let (min, _) = det.minimize().map_err(|err| format!("minimize: {err}"))?;
        Ok::<_, String>((min, start.elapsed().as_secs_f64()))
    })?;
    lap(2);
    let total_s = total.elapsed().as_secs_f64();
    cpu_s[3] = benches::process_cpu_seconds() - total_cpu;
    let (_, peak_kib) = memory_kib()?;
    let size = |f: &Fsa| (f.num_states(), f.num_arcs());
    Ok(Report {
        words,
        threads,
        load_s,
        rss_after_load_kib,
        peak_load_kib,
        compose_s,
        determinize_s,
        minimize_s,
        total_s,
        cpu_s,
        peak_compose_kib,
        peak_determinize_kib,
        peak_kib,
        sizes: [size(&l), size(&g), size(&lg), size(&det), size(&min)],
    })
}

const USAGE: &str = "usage: lg_large write DIR WORDS | lg_large run DIR THREADS";

/// A positive number from the command line.
fn positive(arg: Option<&String>, what: &str) -> Result<usize, String> {
    let text = arg.ok_or_else(|| format!("missing {what}; {USAGE}"))?;
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{what} must be a positive integer, got {text:?}; {USAGE}"
        )),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match (args.first().map(String::as_str), args.get(1)) {
        (Some("write"), Some(dir)) => positive(args.get(2), "WORDS")
            .and_then(|words| write_inputs(Path::new(dir), words))
            .map(|()| format!("wrote {dir}/L.txt and {dir}/G.txt")),
        (Some("run"), Some(dir)) => positive(args.get(2), "THREADS")
            .and_then(|threads| run(Path::new(dir), threads))
            .map(|report| report.json()),
        _ => Err(USAGE.to_string()),
    };
    match outcome {
        Ok(line) => println!("{line}"),
        Err(message) => {
            eprintln!("lg_large: {message}");
            std::process::exit(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// The tests that reset or read the process's peak RSS run one at a time.
    static PEAK: Mutex<()> = Mutex::new(());

    /// (states, arcs) of OpenFst text counted line by line, in k2's form: one more state
    /// (the final one) and one arc into it per final state.
    fn k2_size_of_text(text: &str, arc_fields: usize) -> (usize, usize) {
        let (mut max_state, mut arcs, mut finals) = (0usize, 0usize, 0usize);
        for line in text.lines() {
            let fields: Vec<usize> = line
                .split(' ')
                .take(2)
                .map(|f| f.parse().unwrap_or(0))
                .collect();
            max_state = max_state.max(fields[0]);
            if line.split(' ').count() == arc_fields {
                max_state = max_state.max(fields[1]);
                arcs += 1;
            } else {
                finals += 1;
            }
        }
        (max_state + 2, arcs + finals)
    }

    #[test]
    fn a_run_at_200_words_reads_what_write_wrote_and_reports_every_field() {
        let _peak = PEAK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let dir = std::env::temp_dir().join(format!("lg_large_test_{}", std::process::id()));
        write_inputs(&dir, 200).unwrap();
        let l_text = std::fs::read_to_string(dir.join("L.txt")).unwrap();
        let g_text = std::fs::read_to_string(dir.join("G.txt")).unwrap();
        assert_eq!(l_text, benches::graphs::lexicon_text(200, NUM_PHONES, SEED));
        let report = run(&dir, 2).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((report.words, report.threads), (200, 2));
        // L: 200 chains of 2..=10 phones plus their disambiguation arcs, and the #0 loop
        assert_eq!(report.sizes[0], k2_size_of_text(&l_text, 5));
        // G: 200 unigram arcs, 1..=26 bigram draws and a back-off arc per history
        assert_eq!(report.sizes[1], k2_size_of_text(&g_text, 4));
        assert!(report.sizes[1].1 > 200 + 200 + 200 + 1);
        let [_, _, lg, det, min] = report.sizes;
        assert!(lg.1 > 0 && det.1 > 0 && min.1 > 0, "{:?}", report.sizes);
        assert!(min.0 <= det.0 && min.1 <= det.1, "{:?}", report.sizes);
        let stages = report.compose_s + report.determinize_s + report.minimize_s;
        assert!(stages > 0.0 && stages <= report.total_s, "{report:?}");
        let [compose_cpu, determinize_cpu, minimize_cpu, total_cpu] = report.cpu_s;
        let stages_cpu = compose_cpu + determinize_cpu + minimize_cpu;
        assert!(
            stages_cpu > 0.0 && stages_cpu <= total_cpu + 1e-6,
            "{report:?}"
        );
        assert!(report.load_s > 0.0);
        assert!(report.rss_after_load_kib > 0 && report.peak_load_kib >= report.rss_after_load_kib);
        assert!(report.peak_compose_kib > 0);
        assert!(report.peak_compose_kib <= report.peak_determinize_kib);
        assert!(report.peak_determinize_kib <= report.peak_kib);
        let json = report.json();
        for key in [
            "\"side\": \"ours\"",
            "\"words\": 200",
            "\"peak_kib\": ",
            "\"min\": [",
        ] {
            assert!(json.contains(key), "{key} missing from {json}");
        }
    }

    #[test]
    fn the_peak_rises_by_what_was_touched_and_resets_to_the_current_rss() {
        let _peak = PEAK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        reset_peak().unwrap();
        let (_, before) = memory_kib().unwrap();
        let mib = 96usize;
        let mut buffer = vec![0u8; mib << 20];
        // touch every page, so all of it is resident
        for page in buffer.chunks_mut(4096) {
            page[0] = 1;
        }
        let touched: usize = std::hint::black_box(&buffer)
            .iter()
            .map(|&b| b as usize)
            .sum();
        assert_eq!(touched, (mib << 20) / 4096);
        let (_, during) = memory_kib().unwrap();
        assert!(
            during >= before + (mib as u64 - 8) * 1024,
            "{before} -> {during} KiB"
        );
        drop(buffer);
        reset_peak().unwrap();
        let (rss, after) = memory_kib().unwrap();
        assert!(
            after + (mib as u64 / 2) * 1024 < during,
            "{during} -> {after} KiB"
        );
        assert!(after >= rss);
    }

    #[test]
    fn bad_status_text_and_arguments_are_named() {
        let status = "Name:\tx\nVmHWM:\t  1234 kB\nVmRSS:\t12 MB\n";
        assert_eq!(status_kib(status, "VmHWM"), Ok(1234));
        let err = status_kib(status, "VmRSS").unwrap_err();
        assert!(err.contains("VmRSS") && err.contains("12 MB"), "{err}");
        let err = status_kib(status, "VmPeak").unwrap_err();
        assert!(err.contains("no VmPeak line"), "{err}");
        let zero = "0".to_string();
        let err = positive(Some(&zero), "THREADS").unwrap_err();
        assert!(err.contains("THREADS") && err.contains("\"0\""), "{err}");
        assert!(positive(None, "WORDS")
            .unwrap_err()
            .contains("missing WORDS"));
        let err = run(Path::new("/nonexistent/lg_large"), 1).unwrap_err();
        assert!(err.contains("/nonexistent/lg_large/L.txt"), "{err}");
    }
}
