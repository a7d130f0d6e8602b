//! Kaldi's `copy-feats`: copies a table of feature matrices, optionally compressing them.
//!
//! ```text
//! copy-feats [options] <feature-rspecifier> <feature-wspecifier>
//!   --compress=true|false        write CompressedMatrix values (Kaldi's default: false)
//!   --compression-method=N       Kaldi's CompressionMethod number 1..7 (default 1, auto)
//!   --binary=true|false          with an rxfilename/wxfilename pair: binary output
//! ```
//!
//! As Kaldi's tool, it also copies a single matrix when both arguments are filenames
//! rather than specifiers, prints `Copied N feature matrices.` on standard error, and
//! exits with 1 when nothing was copied.

use std::process::ExitCode;

use dense_matrix::{CompressedMatrix, CompressionMethod, Matrix};
use kaldi_io::{
    read_kaldi_object, write_kaldi_object, Rspecifier, SequentialTableReader, TableWriter,
};

const USAGE: &str = r"Copy features [and possibly change format]
Usage: copy-feats [options] <feature-rspecifier> <feature-wspecifier>
 or:   copy-feats [options] <feats-rxfilename> <feats-wxfilename>
e.g.: copy-feats ark:- ark,scp:foo.ark,foo.scp
 or: copy-feats ark:foo.ark ark,t:txt.ark
Options:
  --binary              : Binary-mode output (not relevant if writing to archive) (bool, default = true)
  --compress            : If true, write output in compressed form (bool, default = false)
  --compression-method  : Only relevant if --compress=true; the method (1 through 7) to compress
                          the matrix, Kaldi's CompressionMethod numbers (int, default = 1)
";

pub(crate) struct Options {
    binary: bool,
    compress: bool,
    method: CompressionMethod,
}

fn parse_bool(name: &str, value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => Err(format!(
            "invalid value `{other}` for --{name} (true or false)"
        )),
    }
}

pub(crate) fn parse_args(args: &[String]) -> Result<(Options, Vec<String>), String> {
    let mut options = Options {
        binary: true,
        compress: false,
        method: CompressionMethod::Auto,
    };
    let mut positional = Vec::new();
    for arg in args {
        let Some(option) = arg.strip_prefix("--") else {
            positional.push(arg.clone());
            continue;
        };
        let (name, value) = match option.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (option, None),
        };
        match name {
            "binary" => options.binary = parse_bool(name, value)?,
            "compress" => options.compress = parse_bool(name, value)?,
            "compression-method" => {
                let code: i32 = value
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| format!("--compression-method needs a number, got {value:?}"))?;
                options.method = CompressionMethod::from_kaldi_code(code)
                    .ok_or_else(|| format!("invalid --compression-method={code} (1 through 7)"))?;
            }
            other => return Err(format!("unknown option --{other}")),
        }
    }
    Ok((options, positional))
}

pub(crate) fn run(options: &Options, input: &str, output: &str) -> Result<usize, kaldi_io::Error> {
    if Rspecifier::parse(input).is_err() {
        // a single matrix from an rxfilename to a wxfilename
        let m: Matrix<f32> = read_kaldi_object(input)?;
        if options.compress {
            let cm = CompressedMatrix::compress(&m, options.method).map_err(|source| {
                kaldi_io::Error::Object {
                    name: input.to_string(),
                    key: None,
                    offset: 0,
                    source,
                }
            })?;
            write_kaldi_object(output, &cm, options.binary)?;
        } else {
            write_kaldi_object(output, &m, options.binary)?;
        }
        return Ok(1);
    }
    let mut copied = 0;
    if options.compress {
        let mut writer = TableWriter::<CompressedMatrix>::create(output)?;
        for entry in SequentialTableReader::<Matrix<f32>>::open(input)? {
            let (key, m) = entry?;
            let cm = CompressedMatrix::compress(&m, options.method).map_err(|source| {
                kaldi_io::Error::Object {
                    name: input.to_string(),
                    key: Some(key.clone()),
                    offset: 0,
                    source,
                }
            })?;
            writer.write(&key, &cm)?;
            copied += 1;
        }
        writer.finish()?;
    } else {
        let mut writer = TableWriter::<Matrix<f32>>::create(output)?;
        for entry in SequentialTableReader::<Matrix<f32>>::open(input)? {
            let (key, m) = entry?;
            writer.write(&key, &m)?;
            copied += 1;
        }
        writer.finish()?;
    }
    Ok(copied)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (options, positional) = match parse_args(&args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("copy-feats: {message}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    if positional.len() != 2 {
        eprint!("{USAGE}");
        return ExitCode::from(1);
    }
    match run(&options, &positional[0], &positional[1]) {
        Ok(n) => {
            eprintln!("copy-feats: Copied {n} feature matrices.");
            if n == 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("copy-feats: ERROR: {e}");
            ExitCode::from(1)
        }
    }
}
