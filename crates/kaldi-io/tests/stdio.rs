//! Standard input and output: rspecifier `ark:-` / `scp:-` / `ark,t:-`, wspecifier `ark:-`
//! and `ark,t:-`, and the `-` rxfilename and wxfilename, exercised as Kaldi's users do:
//! `copy-feats ark:- ark:-` in a pipeline. The test binary runs itself as the child
//! process (with `--child`, it is the `copy-feats` example reading its standard input and
//! writing its standard output), and compares what comes out of the pipe with the
//! archives kaldi-native-io wrote (`tests/golden/`).

#[allow(dead_code)]
#[path = "../src/bin/copy-feats.rs"]
mod copy_feats;

use std::io::Write;
use std::process::{Command, ExitCode, Stdio};

/// What the child process gave back.
struct Outcome {
    success: bool,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `copy-feats <args>` as a child with `stdin` piped in.
fn copy_feats(args: &[&str], stdin: &[u8]) -> Outcome {
    let mut child = Command::new(std::env::current_exe().expect("the test binary's path"))
        .arg("--child")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the child starts");
    let mut pipe = child.stdin.take().expect("stdin was piped");
    let input = stdin.to_vec();
    // written from a thread: the child's output may fill its pipe before it reads all
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("the child runs");
    writer.join().expect("the writer thread");
    Outcome {
        success: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn golden(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/golden/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// The child side: `copy-feats` on the remaining arguments.
fn child(args: &[String]) -> ExitCode {
    let (options, positional) = match copy_feats::parse_args(args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("copy-feats: {message}");
            return ExitCode::from(1);
        }
    };
    match copy_feats::run(&options, &positional[0], &positional[1]) {
        Ok(n) => {
            eprintln!("copy-feats: Copied {n} feature matrices.");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("copy-feats: ERROR: {e}");
            ExitCode::from(1)
        }
    }
}

/// `ark:-` in, `ark:-` out, binary: the bytes Kaldi wrote come back unchanged; the same
/// with the `bg` reader.
fn binary_archive_through_the_pipe() {
    let ark = golden("float_matrix.ark");
    for rspecifier in ["ark:-", "ark,bg:-"] {
        let out = copy_feats(&[rspecifier, "ark:-"], &ark);
        assert!(out.success, "{rspecifier}: {}", out.stderr);
        assert_eq!(out.stdout, ark, "{rspecifier}");
        assert_eq!(out.stderr, "copy-feats: Copied 4 feature matrices.\n");
    }
}

/// `ark:-` to `ark,t:-` gives Kaldi's text archive, and `ark,t:-` (text read from
/// standard input) to `ark:-` gives a binary one that prints as the same text (text keeps
/// 7 digits, so not the original binary bytes).
fn text_archive_both_ways() {
    let (binary, text) = (golden("float_matrix.ark"), golden("float_matrix_t.ark"));
    let out = copy_feats(&["ark:-", "ark,t:-"], &binary);
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stdout, text);
    let out = copy_feats(&["ark,t:-", "ark:-"], &text);
    assert!(out.success, "{}", out.stderr);
    assert!(out.stdout.starts_with(b"a \0BFM "));
    assert_eq!(out.stdout.len(), binary.len());
    let again = copy_feats(&["ark:-", "ark,t:-"], &out.stdout);
    assert!(again.success, "{}", again.stderr);
    assert_eq!(again.stdout, text);
}

/// `scp:-`: the script on standard input, its entries read from the archive it names.
fn script_on_standard_input() {
    let out = copy_feats(&["scp:-", "ark:-"], &golden("feats.scp"));
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stdout, golden("feats.ark"));
}

/// `-` as rxfilename and wxfilename: one matrix object, binary in, text out.
fn single_object_through_dash() {
    let ark = golden("float_matrix.ark");
    let text = golden("float_matrix_t.ark");
    // the first entry `a`: `\0B`, `FM `, two sizes, 3 x 4 floats after the key `a `
    let object = &ark[2..2 + 2 + 3 + 10 + 48];
    let want_end = text.iter().position(|&b| b == b']').unwrap() + 2;
    let out = copy_feats(&["--binary=false", "-", "-"], object);
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stdout, &text[2..want_end]);
}

/// A truncated archive on standard input: the complete entries before it are copied, and
/// the error names standard input, the key and the byte where its object starts.
fn truncated_archive_on_standard_input() {
    let ark = golden("float_matrix.ark");
    // entry `b` starts after `a`'s 2 + 2 + 3 + 10 + 48 bytes; `b ` then its object
    let b_start = 2 + 2 + 3 + 10 + 48;
    let cut = &ark[..b_start + 2 + 2 + 3 + 10 + 1];
    for rspecifier in ["ark:-", "ark,bg:-"] {
        let out = copy_feats(&[rspecifier, "ark:-"], cut);
        assert!(!out.success, "{rspecifier}");
        assert_eq!(out.stdout, &ark[..b_start], "{rspecifier}");
        assert_eq!(
            out.stderr,
            format!(
                "copy-feats: ERROR: standard input: key `b` at byte {}: unexpected end of data \
                 while reading the elements of a 1 x 1 `FM` matrix: it needs 4 bytes, 1 were \
                 there\n",
                b_start + 2
            ),
            "{rspecifier}"
        );
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1..]);
    }
    // the test harness's own options (`--quiet`, filters) are accepted and ignored
    let cases: [(&str, fn()); 5] = [
        (
            "binary_archive_through_the_pipe",
            binary_archive_through_the_pipe,
        ),
        ("text_archive_both_ways", text_archive_both_ways),
        ("script_on_standard_input", script_on_standard_input),
        ("single_object_through_dash", single_object_through_dash),
        (
            "truncated_archive_on_standard_input",
            truncated_archive_on_standard_input,
        ),
    ];
    println!("\nrunning {} tests", cases.len());
    for (name, case) in cases {
        case();
        println!("test {name} ... ok");
    }
    println!("\ntest result: ok. {} passed; 0 failed\n", cases.len());
    ExitCode::SUCCESS
}
