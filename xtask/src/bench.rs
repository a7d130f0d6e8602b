//! `cargo xtask bench`: our criterion benchmarks and the peers' runs of the same workloads,
//! joined into one table of ratios (ours / peer) in `docs/BENCHMARKS.md`.
//!
//! Protocol, shared with every crate's benches:
//! - our side is criterion, one group per crate named after it; a bench `W` is our time for
//!   workload `W`, a bench `peer_P__W` is an in-Rust peer `P` (a memset, a hand loop, a
//!   Rust crate) for the same workload;
//! - the Python peers are `benches/peers/<crate>*.py`; each prints JSON lines
//!   `{"crate", "workload", "peer", "seconds", "version"}` (or `{"crate", "peer",
//!   "skipped"}`); scripts ending in `_k2.py` run in the Python 3.9 venv that has k2.
//!
//! By concern: [`running`] builds the criterion benches and alternates them with the peers
//! round by round, [`peers`] finds the peer scripts and runs them in their venvs,
//! [`machine`] describes the machine a section was measured on, [`report`] writes the
//! sections of `docs/BENCHMARKS.md`, and [`chart`] draws their ratios as SVG beside it.

mod chart;
mod machine;
mod peers;
mod report;
mod running;

pub use running::run;

use crate::Failure;

/// The environment variable that shrinks every workload for a quick smoke run.
const QUICK_ENV: &str = "ARRAYS_BENCH_QUICK";

/// Variables that pin OpenBLAS's kernel choice, removed from both sides' environment (a
/// machine may set them globally): at the processor's own level each side's OpenBLAS
/// picks its kernel (ours after dense-matrix's guard), at the masked level both are
/// pinned to `Haswell`.
const OPENBLAS_FORCING: [&str; 2] = ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"];

/// The environment variable our crates (dataflow, ragged-core, dense-matrix) read once to
/// cap their vector kernels' level.
pub const SIMD_CAP_ENV: &str = "ARRAYS_SIMD_CAP";

/// One instruction-set level a run measures both sides at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The processor's own level: every side dispatches to the best it has.
    Native,
    /// AVX-512 masked on both sides, as an AVX2-only processor would run: our kernels
    /// capped at AVX2 and OpenBLAS on its `Haswell` kernel; the peers' own switches turn
    /// their AVX-512 dispatch off.
    Avx2,
}

/// AVX-512 dispatch targets named for OpenCV (`OPENCV_CPU_DISABLE`, read when `cv2`
/// loads; `cv2.getCPUFeaturesLine()` then marks them with `?`).
const OPENCV_AVX512: &str = "AVX512F,AVX512BW,AVX512CD,AVX512DQ,AVX512VL,AVX512-SKX,\
AVX512-COMMON,AVX512-CLX,AVX512-CNL,AVX512-ICL";

/// AVX-512 dispatch targets named for numpy (`NPY_DISABLE_CPU_FEATURES`): numpy 2's groups
/// (`X86_V4`, `AVX512_ICL`, `AVX512_SPR`) and numpy 1's names (the k2 venv's numpy < 2);
/// each version ignores, with a silent `ImportWarning`, the names it does not dispatch on.
const NUMPY_AVX512: &str =
    "X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL";

impl Level {
    /// The variables our side's processes (criterion benches, the `blas-kernel` example)
    /// get at this level.
    pub fn ours_env(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Level::Native => Vec::new(),
            Level::Avx2 => vec![(SIMD_CAP_ENV, "avx2"), ("OPENBLAS_CORETYPE", "Haswell")],
        }
    }

    /// The variables the peers' processes get at this level (after the OpenBLAS forcing
    /// of the machine was removed): each library's own switch.
    pub fn peer_env(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Level::Native => Vec::new(),
            Level::Avx2 => vec![
                // numpy's and scipy's bundled OpenBLAS
                ("OPENBLAS_CORETYPE", "Haswell"),
                ("NPY_DISABLE_CPU_FEATURES", NUMPY_AVX512),
                ("OPENCV_CPU_DISABLE", OPENCV_AVX512),
                // pyarrow's compute kernels
                ("ARROW_USER_SIMD_LEVEL", "AVX2"),
                // TensorFlow's oneDNN kernels
                ("ONEDNN_MAX_CPU_ISA", "AVX2"),
                // torch (beside k2)
                ("ATEN_CPU_CAPABILITY", "avx2"),
                // so a script can say which level it ran at
                (SIMD_CAP_ENV, "avx2"),
            ],
        }
    }

    /// How the command line names this level (`--simd-cap ...`).
    fn flag(self) -> &'static str {
        match self {
            Level::Native => "native",
            Level::Avx2 => "avx2",
        }
    }
}

/// Command-line options of `bench`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Options {
    /// A short smoke run with small inputs.
    pub quick: bool,
    /// Install (if needed) and run the Python peers.
    pub peers: bool,
    /// How many rounds of ours-then-peer to time (`None`: 3 for a full run, 1 for `--quick`).
    pub rounds: Option<usize>,
    /// The levels to measure at, each into its own section (`--simd-cap`; empty: the
    /// processor's own level only).
    pub levels: Vec<Level>,
    /// Only redraw the charts from the tables of the benchmarks document (`--charts-only`).
    pub charts_only: bool,
    /// The crates to bench (empty: every crate).
    pub crates: Vec<String>,
    /// The bench targets to run (`--bench NAME`, empty: all): criterion's `benches/NAME.rs`
    /// and the peer scripts `<crate>-NAME.py` / `<crate>-NAME_k2.py` (a crate's bench named
    /// after it goes with `<crate>.py` / `<crate>_k2.py`); the section keeps every row the
    /// run did not measure.
    pub benches: Vec<String>,
}

impl Options {
    /// Parses `--quick`, `--peers`, `--rounds N`, `--simd-cap native|avx2|both`,
    /// `--bench NAME`, `--charts-only` and crate names.
    pub fn parse(args: &[String]) -> Result<Options, Failure> {
        let mut options = Options::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--quick" => options.quick = true,
                "--peers" => options.peers = true,
                "--charts-only" => options.charts_only = true,
                "--rounds" => {
                    let value = args
                        .next()
                        .ok_or_else(|| Failure("bench: `--rounds` needs a number".into()))?;
                    options.rounds = Some(parse_rounds(value)?);
                }
                other if other.starts_with("--rounds=") => {
                    options.rounds = Some(parse_rounds(&other["--rounds=".len()..])?);
                }
                "--simd-cap" => {
                    let value = args.next().ok_or_else(|| {
                        Failure("bench: `--simd-cap` needs native, avx2 or both".into())
                    })?;
                    options.levels = parse_levels(value)?;
                }
                other if other.starts_with("--simd-cap=") => {
                    options.levels = parse_levels(&other["--simd-cap=".len()..])?;
                }
                "--bench" => {
                    let value = args.next().ok_or_else(|| {
                        Failure("bench: `--bench` needs a bench target's name".into())
                    })?;
                    options.benches.push(value.clone());
                }
                other if other.starts_with("--bench=") => {
                    options.benches.push(other["--bench=".len()..].to_string());
                }
                other if other.starts_with('-') => {
                    return Err(Failure(format!("bench: unknown option `{other}`")))
                }
                name => options.crates.push(name.to_string()),
            }
        }
        Ok(options)
    }

    /// The number of rounds this run makes.
    pub fn rounds(&self) -> usize {
        self.rounds.unwrap_or(if self.quick { 1 } else { 3 })
    }

    /// The levels this run measures, in order.
    pub fn levels(&self) -> Vec<Level> {
        if self.levels.is_empty() {
            vec![Level::Native]
        } else {
            self.levels.clone()
        }
    }
}

fn parse_levels(value: &str) -> Result<Vec<Level>, Failure> {
    match value {
        "native" => Ok(vec![Level::Native]),
        "avx2" => Ok(vec![Level::Avx2]),
        "both" => Ok(vec![Level::Native, Level::Avx2]),
        _ => Err(Failure(format!(
            "bench: `--simd-cap` takes native (the processor's own level), avx2 (AVX-512 \
             masked on both sides) or both, not `{value}`"
        ))),
    }
}

fn parse_rounds(value: &str) -> Result<usize, Failure> {
    match value.parse::<usize>() {
        Ok(n) if (1..=50).contains(&n) => Ok(n),
        _ => Err(Failure(format!(
            "bench: `--rounds` takes a whole number from 1 to 50, not `{value}`"
        ))),
    }
}

/// One timing: ours (`peer == None`) or a peer's.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The crate the workload belongs to.
    pub krate: String,
    /// The workload name, shared by both sides.
    pub workload: String,
    /// `None` for ours, else the peer's name.
    pub peer: Option<String>,
    /// Median (criterion: median estimate) time of one run, in seconds.
    pub seconds: f64,
    /// The peer's library version, when it reported one.
    pub version: String,
    /// The round (0-based) of the run in which it was timed.
    pub round: usize,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::process::Command;

    use super::peers::peer_command;
    use super::running::criterion_command;
    use super::*;

    #[test]
    fn options_take_crates_rounds_and_reject_unknown_flags() {
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let parsed = Options::parse(&args(&["--quick", "--peers", "dataflow"])).unwrap();
        assert_eq!(
            parsed,
            Options {
                quick: true,
                peers: true,
                rounds: None,
                levels: Vec::new(),
                charts_only: false,
                crates: vec!["dataflow".into()],
                benches: Vec::new(),
            }
        );
        assert_eq!(parsed.levels(), [Level::Native]);
        assert_eq!(parsed.rounds(), 1);
        assert_eq!(Options::default().rounds(), 3);
        let parsed = Options::parse(&args(&["--rounds", "5", "a", "b"])).unwrap();
        assert_eq!((parsed.rounds(), parsed.crates.len()), (5, 2));
        assert_eq!(Options::parse(&args(&["--rounds=2"])).unwrap().rounds(), 2);
        let parsed = Options::parse(&args(&["ragged-fsa", "--bench", "rnnt", "--bench=dense"]));
        assert_eq!(parsed.unwrap().benches, ["rnnt", "dense"]);
        for bad in [
            &["--fast"][..],
            &["--rounds"],
            &["--bench"],
            &["--rounds", "0"],
            &["--rounds=x"],
            &["--simd-cap"],
            &["--simd-cap", "avx512"],
            &["--simd-cap=AVX2"],
            &["--simd-cap", "sse2"],
        ] {
            assert!(Options::parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn simd_cap_names_the_levels_to_run() {
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let levels = |list: &[&str]| Options::parse(&args(list)).unwrap().levels();
        assert_eq!(levels(&["--simd-cap", "avx2"]), [Level::Avx2]);
        assert_eq!(levels(&["--simd-cap=avx2", "dataflow"]), [Level::Avx2]);
        assert_eq!(levels(&["--simd-cap", "native"]), [Level::Native]);
        assert_eq!(
            levels(&["--simd-cap", "both"]),
            [Level::Native, Level::Avx2]
        );
        // the last one given wins, as with --rounds
        assert_eq!(
            levels(&["--simd-cap", "both", "--simd-cap", "avx2"]),
            [Level::Avx2]
        );
        let parsed = Options::parse(&args(&["--peers", "--simd-cap", "avx2", "x"])).unwrap();
        assert_eq!(
            (parsed.peers, parsed.crates.as_slice()),
            (true, &["x".to_string()][..])
        );
        let err = Options::parse(&args(&["--simd-cap", "avx3"])).unwrap_err();
        assert!(
            err.0.contains("not `avx3`") && err.0.contains("both"),
            "{}",
            err.0
        );
    }

    /// The variables a command sets (`Some`) or removes (`None`).
    fn envs_of(command: &Command) -> BTreeMap<String, Option<String>> {
        command
            .get_envs()
            .map(|(key, value)| {
                (
                    key.to_string_lossy().into_owned(),
                    value.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect()
    }

    #[test]
    fn the_masked_level_reaches_our_benches_and_every_peer_library() {
        let options = Options::default();
        let exe = Path::new("/nonexistent/bench");
        let ours = envs_of(&criterion_command(exe, "dataflow", &options, Level::Avx2));
        // every crate's kernels read ARRAYS_SIMD_CAP; OpenBLAS its own variable
        assert_eq!(ours[SIMD_CAP_ENV].as_deref(), Some("avx2"));
        assert_eq!(ours["OPENBLAS_CORETYPE"].as_deref(), Some("Haswell"));
        // at the processor's own level a cap of the caller's environment is removed
        assert_eq!(ours["OPENBLAS_L2_SIZE"], None);
        // at the processor's own level a cap or an OpenBLAS forcing of the caller's
        // environment is removed
        let native = envs_of(&criterion_command(exe, "dataflow", &options, Level::Native));
        assert_eq!(native[SIMD_CAP_ENV], None);
        assert_eq!(native["OPENBLAS_CORETYPE"], None);
        assert_eq!(native["OPENBLAS_L2_SIZE"], None);

        let python = Path::new("/nonexistent/python");
        let script = Path::new("dataflow.py");
        let peers = envs_of(&peer_command(
            python,
            script,
            &options,
            Level::Avx2,
            Some("Cooperlake"),
        ));
        assert_eq!(peers["OPENBLAS_CORETYPE"].as_deref(), Some("Haswell"));
        assert_eq!(peers["OPENBLAS_L2_SIZE"], None);
        let opencv = peers["OPENCV_CPU_DISABLE"].clone().unwrap();
        for feature in ["AVX512F", "AVX512BW", "AVX512-SKX", "AVX512-ICL"] {
            assert!(opencv.split(',').any(|f| f == feature), "{opencv}");
        }
        let numpy = peers["NPY_DISABLE_CPU_FEATURES"].clone().unwrap();
        for feature in ["X86_V4", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR"] {
            assert!(numpy.split(' ').any(|f| f == feature), "{numpy}");
        }
        assert_eq!(peers["ARROW_USER_SIMD_LEVEL"].as_deref(), Some("AVX2"));
        assert_eq!(peers["ONEDNN_MAX_CPU_ISA"].as_deref(), Some("AVX2"));
        assert_eq!(peers["ATEN_CPU_CAPABILITY"].as_deref(), Some("avx2"));
        assert_eq!(peers[SIMD_CAP_ENV].as_deref(), Some("avx2"));
        // no rerun on "our kernel": the peers run Haswell already
        assert!(!peers.contains_key("ARRAYS_OUR_OPENBLAS_CORETYPE"));
        let native = envs_of(&peer_command(
            python,
            script,
            &options,
            Level::Native,
            Some("Cooperlake"),
        ));
        assert_eq!(native["OPENBLAS_CORETYPE"], None);
        assert!(!native.contains_key("OPENCV_CPU_DISABLE"));
        assert!(!native.contains_key("NPY_DISABLE_CPU_FEATURES"));
        // the peers' same-kernel rerun gets the kernel our side reported
        assert_eq!(
            native["ARRAYS_OUR_OPENBLAS_CORETYPE"].as_deref(),
            Some("Cooperlake")
        );
        let none = envs_of(&peer_command(python, script, &options, Level::Native, None));
        assert!(!none.contains_key("ARRAYS_OUR_OPENBLAS_CORETYPE"));
    }
}
