//! The AFL++ harness: `fuzz-afl <target>` runs one fuzz target in AFL's persistent mode.
//! Built and started by `cargo xtask fuzz`; a panic in the target is a crash for AFL.

use std::process::ExitCode;

fn main() -> ExitCode {
    let name = std::env::args().nth(1).unwrap_or_default();
    let Some(target) = fuzz_targets::target(&name) else {
        eprintln!("usage: fuzz-afl <target>; targets:");
        for (known, _) in fuzz_targets::TARGETS {
            eprintln!("  {known}");
        }
        return ExitCode::from(2);
    };
    afl::fuzz!(|data: &[u8]| {
        target(data);
    });
    ExitCode::SUCCESS
}
