//! The machine a section was measured on: the CPU and its instruction-set level (the
//! section's heading), the OpenBLAS kernel our side runs, and the facts listed above a table.

use std::fmt::Write as _;
use std::process::Command;

use super::running::ours_level_env;
use super::{Level, Options, SIMD_CAP_ENV};
use crate::{cargo, root};

pub(super) fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

/// The CPU's model name with its family and model numbers, and its `flags` line, from
/// `/proc/cpuinfo`.
pub(super) fn cpu_info() -> (String, String) {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    cpu_info_of(&info)
}

/// [`cpu_info`] of a `/proc/cpuinfo` text. The numbers are part of the name because
/// virtual machines often report only a vendor line ("AMD EPYC"), which a Zen 4 and a
/// Zen 5 share, and their figures must not land in one section.
pub fn cpu_info_of(info: &str) -> (String, String) {
    let field = |name: &str| {
        info.lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.trim() == name)
            .map(|(_, value)| value.trim().to_string())
    };
    let name = field("model name").unwrap_or_else(|| "unknown CPU".to_string());
    let model = match (field("cpu family"), field("model")) {
        (Some(family), Some(model)) => format!("{name} (family {family}, model {model})"),
        _ => name,
    };
    (model, field("flags").unwrap_or_default())
}

/// The x86-64 micro-architecture level (psABI `x86-64-v1` .. `v4`) a `flags` line shows.
pub fn isa_level(flags: &str) -> &'static str {
    let have: Vec<&str> = flags.split_whitespace().collect();
    let all = |wanted: &[&str]| wanted.iter().all(|flag| have.contains(flag));
    if have.is_empty() {
        return "unknown";
    }
    let v2 = all(&["cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"]);
    let v3 = v2
        && all(&[
            "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave",
        ]);
    let v4 = v3 && all(&["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"]);
    match (v2, v3, v4) {
        (_, _, true) => "x86-64-v4 (AVX-512)",
        (_, true, _) => "x86-64-v3 (AVX2, FMA)",
        (true, _, _) => "x86-64-v2 (SSE4.2)",
        _ => "x86-64-v1",
    }
}

/// The heading of this machine's section of `docs/BENCHMARKS.md`: one section per kind of
/// machine, so a run on another CPU adds its own table instead of replacing this one's.
pub(super) fn machine_title(level: Level) -> String {
    let (model, flags) = cpu_info();
    machine_title_of(&model, &flags, level)
}

/// [`machine_title`] of a CPU `model` with `flags`: at the masked level the heading says
/// that this is the CPU with AVX-512 switched off, not an AVX2-only one.
pub fn machine_title_of(model: &str, flags: &str, level: Level) -> String {
    match level {
        Level::Native => format!("Machine: {model}, {}", isa_level(flags)),
        Level::Avx2 => format!(
            "Machine: {model}, {}, AVX-512 masked to AVX2 on both sides (emulated AVX2-only \
             machine, not a real one)",
            isa_level(flags)
        ),
    }
}

/// The OpenBLAS kernel our side runs, as dense-matrix reports it (its `blas-kernel`
/// example), or why it is not known.
pub(super) fn blas_kernel(level: Level) -> String {
    let example = root()
        .join("crates")
        .join("dense-matrix")
        .join("examples")
        .join("blas-kernel.rs");
    if !example.is_file() {
        return "unknown".to_string();
    }
    let mut command = cargo();
    command
        .args(["run", "--quiet", "--release", "-p", "dense-matrix"])
        .args(["--example", "blas-kernel"]);
    ours_level_env(&mut command, level);
    command
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown (the blas-kernel example failed)".to_string())
}

/// The kernel's name, the first word of the `blas-kernel` example's line, if it names one.
pub fn kernel_name_of(line: &str) -> Option<&str> {
    let word = line.split_whitespace().next()?;
    (word.chars().all(|c| c.is_ascii_alphanumeric()) && word != "unknown").then_some(word)
}

pub(super) fn machine_facts(
    options: &Options,
    selected: &[String],
    level: Level,
    our_kernel: Option<&str>,
    load: &str,
) -> Vec<(String, String)> {
    let (cpu, flags) = cpu_info();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let env_or =
        |key: &str, default: &str| std::env::var(key).unwrap_or_else(|_| default.to_string());
    let mut run = String::from("cargo xtask bench");
    if options.quick {
        run.push_str(" --quick");
    }
    if options.peers {
        run.push_str(" --peers");
    }
    if let Some(rounds) = options.rounds {
        let _ = write!(run, " --rounds {rounds}");
    }
    match options.levels().as_slice() {
        [Level::Native] => {}
        [one] => {
            let _ = write!(run, " --simd-cap {}", one.flag());
        }
        _ => run.push_str(" --simd-cap both"),
    }
    for name in &options.benches {
        let _ = write!(run, " --bench {name}");
    }
    for name in &options.crates {
        let _ = write!(run, " {name}");
    }
    let mut facts: Vec<(String, String)> = vec![
        ("command".into(), format!("`{run}`")),
        (
            "kind of run".into(),
            if options.quick {
                "quick smoke run: small inputs, short measurements; figures are not comparable"
                    .into()
            } else {
                "full run".into()
            },
        ),
        (
            "rounds".into(),
            format!(
                "{}: each round times a crate's criterion benches, then its peers, so the two \
                 sides alternate; times are medians over the rounds, the ratio is the median \
                 of the per-round ratios with its min-max spread",
                options.rounds()
            ),
        ),
        (
            "date".into(),
            command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        ),
        ("CPU".into(), cpu),
        ("instruction set".into(), isa_level(&flags).to_string()),
        ("level measured".into(), level_fact(level)),
        ("cores".into(), cores.to_string()),
        ("load average (1, 5, 15 min)".into(), load.to_string()),
        (
            "threads".into(),
            format!(
                "workloads named `_t1`/`_t2` pin 1/2 threads on both sides; others use rayon's \
                 default (RAYON_NUM_THREADS={}) and OpenBLAS's (OPENBLAS_NUM_THREADS={})",
                env_or("RAYON_NUM_THREADS", "unset: all cores"),
                env_or("OPENBLAS_NUM_THREADS", "unset: all cores")
            ),
        ),
    ];
    if selected.iter().any(|name| name == "dense-matrix") {
        facts.push((
            "BLAS kernel (ours)".into(),
            our_kernel.unwrap_or("unknown").to_string(),
        ));
        facts.push((
            "OpenBLAS kernel".into(),
            match level {
                Level::Native => format!(
                    "both sides run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed \
                     (this shell had OPENBLAS_CORETYPE={}), so ours (the system OpenBLAS, \
                     after dense-matrix's guard) and the Python peers' bundled OpenBLAS each \
                     pick their own kernel; `numpy_same_kernel` rows rerun numpy pinned to \
                     our kernel",
                    env_or("OPENBLAS_CORETYPE", "unset")
                ),
                Level::Avx2 => "ours and the Python peers' bundled OpenBLAS both pinned to \
                                Haswell (OPENBLAS_CORETYPE=Haswell)"
                    .into(),
            },
        ));
        facts.push((
            "OpenBLAS".into(),
            command_line("dpkg-query", &["-W", "-f", "${Version}", "libopenblas-dev"]),
        ));
    }
    facts.push(("rustc".into(), command_line("rustc", &["--version"])));
    facts
}

/// The machine's load averages over 1, 5 and 15 minutes, from `/proc/loadavg`.
pub(super) fn load_average() -> String {
    load_of(&std::fs::read_to_string("/proc/loadavg").unwrap_or_default())
}

/// [`load_average`] of a `/proc/loadavg` text: its first three fields.
fn load_of(text: &str) -> String {
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    if fields.len() == 3 {
        fields.join(", ")
    } else {
        "unknown".to_string()
    }
}

/// The "level measured" fact of a section: what was switched off, and how.
fn level_fact(level: Level) -> String {
    match level {
        Level::Native => "the processor's own: every side dispatches to the best it has".into(),
        Level::Avx2 => {
            let list = |env: Vec<(&str, &str)>| {
                env.iter()
                    .map(|(key, value)| format!("`{key}={value}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!(
                "AVX-512 masked to AVX2 on this CPU, not an AVX2-only CPU (`--simd-cap avx2`); \
                 ours: {}; the peers: {}; the peers' notes below show what their libraries \
                 report",
                list(Level::Avx2.ours_env()),
                list(
                    Level::Avx2
                        .peer_env()
                        .into_iter()
                        .filter(|(key, _)| *key != SIMD_CAP_ENV)
                        .collect()
                )
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::report::merge_machine_section;
    use super::*;

    #[test]
    fn isa_levels_from_cpu_flags() {
        let v2 = "cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3";
        let v3 = format!("{v2} avx avx2 bmi1 bmi2 f16c fma abm movbe xsave");
        let v4 = format!("{v3} avx512f avx512bw avx512cd avx512dq avx512vl");
        assert_eq!(isa_level(""), "unknown");
        assert_eq!(isa_level("sse2"), "x86-64-v1");
        assert_eq!(isa_level(v2), "x86-64-v2 (SSE4.2)");
        assert_eq!(isa_level(&v3), "x86-64-v3 (AVX2, FMA)");
        assert_eq!(isa_level(&v4), "x86-64-v4 (AVX-512)");
        // AVX-512F alone (no BW/VL) is not level 4
        assert_eq!(isa_level(&format!("{v3} avx512f")), "x86-64-v3 (AVX2, FMA)");
    }

    #[test]
    fn the_load_is_the_first_three_fields_of_loadavg() {
        assert_eq!(load_of("4.68 5.40 5.88 3/812 12345\n"), "4.68, 5.40, 5.88");
        assert_eq!(load_of(""), "unknown");
    }

    #[test]
    fn kernel_names_come_from_the_first_word_of_the_report() {
        assert_eq!(
            kernel_name_of("Cooperlake (CPU level: AVX-512)"),
            Some("Cooperlake")
        );
        assert_eq!(
            kernel_name_of("Haswell (CPU level: AVX-512; OPENBLAS_CORETYPE=Haswell set)"),
            Some("Haswell")
        );
        assert_eq!(kernel_name_of("unknown"), None);
        assert_eq!(
            kernel_name_of("unknown (the blas-kernel example failed)"),
            None
        );
        assert_eq!(kernel_name_of(""), None);
    }

    #[test]
    fn the_cpu_name_carries_family_and_model() {
        let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n\
                    model name\t: AMD EPYC\nflags\t\t: fpu avx2\n";
        let (model, flags) = cpu_info_of(info);
        assert_eq!(model, "AMD EPYC (family 25, model 17)");
        assert_eq!(flags, "fpu avx2");
        let (model, _) = cpu_info_of("model name\t: Some CPU\n");
        assert_eq!(model, "Some CPU");
    }

    #[test]
    fn the_masked_level_has_its_own_section_saying_so() {
        let v4 = "cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm \
                  movbe xsave avx512f avx512bw avx512cd avx512dq avx512vl";
        let native = machine_title_of("AMD EPYC", v4, Level::Native);
        let masked = machine_title_of("AMD EPYC", v4, Level::Avx2);
        assert_eq!(native, "Machine: AMD EPYC, x86-64-v4 (AVX-512)");
        assert!(masked.starts_with("Machine: AMD EPYC, x86-64-v4 (AVX-512), AVX-512 masked"));
        assert!(masked.contains("not a real one"), "{masked}");
        let doc = merge_machine_section("", &native, "- native\n");
        let doc = merge_machine_section(&doc, &masked, "- masked\n");
        let doc = merge_machine_section(&doc, &native, "- native again\n");
        assert!(
            doc.contains(&format!("## {native}\n\n- native again\n")),
            "{doc}"
        );
        assert!(doc.contains(&format!("## {masked}\n\n- masked\n")), "{doc}");
        let fact = level_fact(Level::Avx2);
        assert!(fact.contains("`ARRAYS_SIMD_CAP=avx2`") && fact.contains("OPENCV_CPU_DISABLE"));
    }
}
