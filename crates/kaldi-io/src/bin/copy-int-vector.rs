//! Kaldi's `copy-int-vector`: copies vectors of integers (alignments), or archives of
//! them, with Kaldi's `--binary` option for a single vector. A single vector is in Kaldi's
//! `WriteIntegerVector` form, not the table holder's: binary, a size byte (4), the count
//! and the elements packed; text, `[ 1 2 3 ]`. Relative paths are taken from the current
//! directory.

use std::process::ExitCode;

use kaldi_io::cli::{copy_table, run_tool, OptionKind, ParseOptions, ToolResult};
use kaldi_io::{read_kaldi_object, write_kaldi_object, IntegerVector, Rspecifier, Wspecifier};

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
        let v: IntegerVector = read_kaldi_object(input)?;
        write_kaldi_object(output, &v, po.get_bool("binary"))?;
        eprintln!("copy-int-vector: Copied vector to {output}");
        return Ok(true);
    }
    let num_done = copy_table::<Vec<i32>, _, kaldi_io::Error>(input, output, |_, v| Ok(Some(v)))?;
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
