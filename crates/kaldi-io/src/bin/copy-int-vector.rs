//! Kaldi's `copy-int-vector`: copies vectors of integers (alignments), or archives of
//! them, with Kaldi's `--binary` option for a single vector. A single vector is in Kaldi's
//! `WriteIntegerVector` form, not the table holder's: binary, a size byte (4), the count
//! and the elements packed; text, `[ 1 2 3 ]`. Relative paths are taken from the current
//! directory.

use std::process::ExitCode;

use kaldi_io::cli::{run_tool, OptionKind, ParseOptions, ToolResult};
use std::io::{BufRead, Write};

use kaldi_io::dense_matrix::Error as ObjError;
use kaldi_io::{
    read_kaldi_object, write_kaldi_object, Holder, Rspecifier, SequentialTableReader, TableWriter,
    Wspecifier,
};

/// One vector in Kaldi's `ReadIntegerVector` / `WriteIntegerVector` form.
#[derive(Debug, Clone)]
struct IntegerVector(Vec<i32>);

fn format_err(expected: &'static str, found: impl Into<String>) -> ObjError {
    ObjError::Format {
        expected,
        found: found.into(),
    }
}

fn io_err(e: std::io::Error) -> ObjError {
    ObjError::Io {
        kind: e.kind(),
        message: e.to_string(),
    }
}

fn read_bytes<R: BufRead>(r: &mut R, buf: &mut [u8], what: &str) -> Result<(), ObjError> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => {
                return Err(ObjError::UnexpectedEnd {
                    reading: what.to_string(),
                    needed: buf.len() as u64,
                    got: filled as u64,
                })
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(e)),
        }
    }
    Ok(())
}

impl Holder for IntegerVector {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        if binary {
            let mut head = [0u8; 5];
            read_bytes(
                r,
                &mut head,
                "the size byte and length of an integer vector",
            )?;
            if head[0] != 4 {
                return Err(format_err("size byte 4 (int32)", format!("{}", head[0])));
            }
            let n = i32::from_le_bytes([head[1], head[2], head[3], head[4]]);
            let n = usize::try_from(n)
                .map_err(|_| format_err("a non-negative length", n.to_string()))?;
            let bytes = n
                .checked_mul(4)
                .ok_or_else(|| format_err("a length", n.to_string()))?;
            // read in pieces, so a hostile length allocates no more than the input holds
            let mut v = Vec::new();
            let mut chunk = [0u8; 4096];
            let mut left = bytes;
            while left > 0 {
                let take = left.min(chunk.len());
                read_bytes(r, &mut chunk[..take], "the elements of an integer vector")?;
                v.extend(
                    chunk[..take]
                        .chunks_exact(4)
                        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                );
                left -= take;
            }
            return Ok(IntegerVector(v));
        }
        let mut text = String::new();
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).map_err(io_err)? == 0 {
                return Err(format_err("`]` closing an integer vector", "end of data"));
            }
            text.push_str(&line);
            if line.contains(']') {
                break;
            }
        }
        let body = text
            .trim()
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .ok_or_else(|| format_err("`[ ... ]`", text.trim().to_string()))?;
        body.split_whitespace()
            .map(|t| {
                t.parse::<i32>()
                    .map_err(|_| format_err("an int32", t.to_string()))
            })
            .collect::<Result<_, _>>()
            .map(IntegerVector)
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        if binary {
            let n = i32::try_from(self.0.len())
                .map_err(|_| format_err("at most 2^31 - 1 elements", self.0.len().to_string()))?;
            let mut out = Vec::with_capacity(5 + 4 * self.0.len());
            out.push(4u8);
            out.extend_from_slice(&n.to_le_bytes());
            for x in &self.0 {
                out.extend_from_slice(&x.to_le_bytes());
            }
            return w.write_all(&out).map_err(io_err);
        }
        let mut out = String::from("[ ");
        for x in &self.0 {
            out.push_str(&x.to_string());
            out.push(' ');
        }
        out.push_str("]\n");
        w.write_all(out.as_bytes()).map_err(io_err)
    }
}

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
