//! Kaldi's `copy-feats`: copies a table of feature matrices, optionally compressing them.
//!
//! ```text
//! copy-feats [options] <feature-rspecifier> <feature-wspecifier>
//! copy-feats [options] <feats-rxfilename> <feats-wxfilename>
//!   --compress=true|false        write CompressedMatrix values (Kaldi's default: false)
//!   --compression-method=N       Kaldi's CompressionMethod number 1..7 (default 1, auto)
//!   --binary=true|false          with an rxfilename/wxfilename pair: binary output
//!   --write-num-frames=WSPEC     the number of frames of each utterance, as int32
//!   --htk-in=true|false          the input's values are HTK feature files (`HtkMatrix`)
//!   --sphinx-in=true|false       the input's values are Sphinx feature files (tables only)
//! ```
//!
//! As Kaldi's tool, it also copies a single matrix when both arguments are filenames
//! rather than specifiers, prints `Copied N feature matrices.` on standard error, and
//! exits with 1 when nothing was copied. Relative paths (in specifiers and inside scp
//! files) are taken from the current directory.

use std::process::ExitCode;

use kaldi_io::cli::{copy_table, run_tool, OptionKind, ParseOptions, Parsed};
use kaldi_io::{
    read_kaldi_object, write_kaldi_object, CompressedMatrix, CompressionMethod, Holder, HtkMatrix,
    Matrix, Rspecifier, SphinxMatrix, TableWriter,
};

const USAGE: &str = "Copy features [and possibly change format]
Usage: copy-feats [options] <feature-rspecifier> <feature-wspecifier>
or:   copy-feats [options] <feats-rxfilename> <feats-wxfilename>
e.g.: copy-feats ark:- ark,scp:foo.ark,foo.scp
 or: copy-feats ark:foo.ark ark,t:txt.ark
See also: copy-matrix
";

/// What the input's values are: Kaldi matrices, or HTK or Sphinx feature files.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InputFormat {
    Kaldi,
    Htk,
    Sphinx,
}

/// The options of one run.
pub(crate) struct Options {
    format: InputFormat,
    binary: bool,
    compress: bool,
    method: CompressionMethod,
    num_frames_wspecifier: String,
}

fn parser() -> ParseOptions {
    let mut po = ParseOptions::new(USAGE);
    po.register(
        "htk-in",
        OptionKind::Bool,
        "false",
        "Read input as HTK features",
    );
    po.register(
        "sphinx-in",
        OptionKind::Bool,
        "false",
        "Read input as Sphinx features",
    );
    po.register(
        "binary",
        OptionKind::Bool,
        "true",
        "Binary-mode output (not relevant if writing to archive)",
    );
    po.register(
        "compress",
        OptionKind::Bool,
        "false",
        "If true, write output in compressed form",
    );
    po.register(
        "compression-method",
        OptionKind::Int,
        "1",
        "Only relevant if --compress=true; the method (1 through 7) to compress the matrix",
    );
    po.register(
        "write-num-frames",
        OptionKind::String,
        "",
        "Wspecifier to write length in frames of each utterance, e.g. 'ark,t:utt2num_frames'",
    );
    po
}

fn options_of(po: &ParseOptions) -> Result<Options, String> {
    // Kaldi's copy-feats looks at --htk-in first
    let format = if po.get_bool("htk-in") {
        InputFormat::Htk
    } else if po.get_bool("sphinx-in") {
        InputFormat::Sphinx
    } else {
        InputFormat::Kaldi
    };
    let code = po.get_i32("compression-method");
    let method = CompressionMethod::from_kaldi_code(code)
        .ok_or_else(|| format!("invalid --compression-method={code} (1 through 7)"))?;
    Ok(Options {
        format,
        binary: po.get_bool("binary"),
        compress: po.get_bool("compress"),
        method,
        num_frames_wspecifier: po.get_string("write-num-frames").to_string(),
    })
}

/// The options and the positional arguments of a command line (without the program name);
/// the tests, which include this file, call it.
#[allow(dead_code)]
pub(crate) fn parse_args(args: &[String]) -> Result<(Options, Vec<String>), String> {
    let mut po = parser();
    match po.read(args.iter().cloned())? {
        Parsed::Help => Err(po.usage()),
        Parsed::Args(positional) => Ok((options_of(&po)?, positional)),
    }
}

fn compress(
    m: &Matrix<f32>,
    method: CompressionMethod,
    name: &str,
    key: Option<&str>,
) -> Result<CompressedMatrix, kaldi_io::Error> {
    CompressedMatrix::compress(m, method).map_err(|source| kaldi_io::Error::Object {
        name: name.to_string(),
        key: key.map(str::to_string),
        offset: 0,
        source,
    })
}

/// Copies `input` to `output`; the number of matrices copied.
pub(crate) fn run(options: &Options, input: &str, output: &str) -> Result<usize, kaldi_io::Error> {
    if Rspecifier::parse(input).is_err() {
        // a single matrix from an rxfilename to a wxfilename
        let m: Matrix<f32> = match options.format {
            InputFormat::Kaldi => read_kaldi_object(input)?,
            InputFormat::Htk => read_kaldi_object::<HtkMatrix>(input)?.matrix,
            InputFormat::Sphinx => {
                // as Kaldi's copy-feats: "For single files, sphinx input is not yet
                // supported."
                return Err(kaldi_io::Error::Rxfilename {
                    rxfilename: input.to_string(),
                    reason: "a single file, but --sphinx-in reads tables only (as Kaldi's \
                             copy-feats)",
                });
            }
        };
        if options.compress {
            let cm = compress(&m, options.method, input, None)?;
            write_kaldi_object(output, &cm, options.binary)?;
        } else {
            write_kaldi_object(output, &m, options.binary)?;
        }
        return Ok(1);
    }
    match options.format {
        InputFormat::Kaldi => copy_tables(options, input, output, |m: Matrix<f32>| m),
        InputFormat::Htk => copy_tables(options, input, output, |h: HtkMatrix| h.matrix),
        InputFormat::Sphinx => copy_tables(options, input, output, |s: SphinxMatrix| s.0),
    }
}

/// The table case of [`run`] for input values of holder `T`, turned into matrices by
/// `features`.
fn copy_tables<T: Holder>(
    options: &Options,
    input: &str,
    output: &str,
    features: fn(T) -> Matrix<f32>,
) -> Result<usize, kaldi_io::Error> {
    let mut num_frames = if options.num_frames_wspecifier.is_empty() {
        None
    } else {
        Some(TableWriter::<i32>::create(&options.num_frames_wspecifier)?)
    };
    let mut count_frames = |key: &str, m: &Matrix<f32>| match num_frames.as_mut() {
        Some(writer) => writer.write(key, &i32::try_from(m.num_rows()).unwrap_or(i32::MAX)),
        None => Ok(()),
    };
    let copied = if options.compress {
        copy_table(input, output, |key, value: T| {
            let m = features(value);
            count_frames(key, &m)?;
            compress(&m, options.method, input, Some(key)).map(Some)
        })?
    } else {
        copy_table(input, output, |key, value: T| {
            let m = features(value);
            count_frames(key, &m)?;
            Ok::<_, kaldi_io::Error>(Some(m))
        })?
    };
    if let Some(writer) = num_frames {
        writer.finish()?;
    }
    Ok(copied)
}

fn main() -> ExitCode {
    let mut po = parser();
    run_tool(
        "copy-feats",
        &mut po,
        std::env::args().skip(1),
        |n| n == 2,
        |po, args| {
            let options = options_of(po)?;
            let n = run(&options, &args[0], &args[1])?;
            if Rspecifier::parse(&args[0]).is_err() {
                eprintln!(
                    "copy-feats: Copied features from {} to {}",
                    args[0], args[1]
                );
                return Ok(true);
            }
            eprintln!("copy-feats: Copied {n} feature matrices.");
            Ok(n != 0)
        },
    )
}
