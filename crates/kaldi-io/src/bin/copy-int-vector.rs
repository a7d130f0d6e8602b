//! Kaldi's `copy-int-vector`: copies vectors of integers (alignments), or archives of
//! them. Relative paths are taken from the current directory. Kaldi's single-vector form
//! (`copy-int-vector foo -`, with `--binary`) is not supported yet: tables only.

use std::process::ExitCode;

use kaldi_io::cli::{run_tool, OptionKind, ParseOptions, ToolResult};
use kaldi_io::{Rspecifier, SequentialTableReader, TableWriter, Wspecifier};

const USAGE: &str = "Copy vectors of integers, or archives of vectors of integers
(e.g. alignments)

Usage: copy-int-vector [options] (vector-in-rspecifier|vector-in-rxfilename) (vector-out-wspecifier|vector-out-wxfilename)
 e.g.: copy-int-vector --binary=false foo -
   copy-int-vector ark:1.ali ark,t:-
";

fn body(po: &ParseOptions, args: &[String]) -> ToolResult {
    let (input, output) = (&args[0], &args[1]);
    let in_is_table = Rspecifier::parse(input).is_ok();
    let out_is_table = Wspecifier::parse(output).is_ok();
    if in_is_table != out_is_table {
        return Err("Cannot mix archives with regular files (copying vectors)".into());
    }
    if !in_is_table {
        // Kaldi's single-object form (`ReadIntegerVector`: one size byte, then the
        // elements packed; text `[ 1 2 3 ]`) differs from the table holder's
        let _ = po.get_bool("binary");
        return Err(format!(
            "copying a single vector ({input} to {output}) is not supported yet; \
             use tables (ark:...)"
        )
        .into());
    }
    let mut writer = TableWriter::<Vec<i32>>::create(output)?;
    let mut num_done = 0usize;
    for entry in SequentialTableReader::<Vec<i32>>::open(input)? {
        let (key, v) = entry?;
        writer.write(&key, &v)?;
        num_done += 1;
    }
    writer.finish()?;
    eprintln!("copy-int-vector: Copied {num_done} vectors of int32.");
    Ok(num_done != 0)
}

fn main() -> ExitCode {
    let mut po = ParseOptions::new(USAGE);
    po.register(
        "binary",
        OptionKind::Bool,
        "true",
        "Write in binary mode (only relevant if output is a wxfilename)",
    );
    run_tool(
        "copy-int-vector",
        &mut po,
        std::env::args().skip(1),
        |n| n == 2,
        body,
    )
}
