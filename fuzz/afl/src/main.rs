//! The AFL++ harness: `fuzz-afl <target>` runs one fuzz target in AFL's persistent mode.
//! Built and started by `cargo xtask fuzz`; a panic that leaves the target is a crash for
//! AFL.
//!
//! The harness installs no panic hook (`fuzz_nohook!`): afl.rs's `fuzz!` installs one that
//! aborts at every panic, also at one the code under test catches on purpose. The Parquet
//! readers catch the `parquet` crate's panics on corrupt files and return an error naming
//! the file (`catch_reader_panic`), which is their documented behaviour, not a defect; with
//! the hook, each such file was reported as a crash. A panic that reaches the harness still
//! aborts the process: afl.rs catches it around each input and aborts.

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
    afl::fuzz_nohook!(|data: &[u8]| {
        target(data);
    });
    ExitCode::SUCCESS
}
