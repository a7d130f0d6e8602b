//! Kaldi's `matrix-sum` in its three usages: tables summed key by key into a table (with
//! `--scale1`, `--scale2` and `--average`), one table summed into one matrix (in `f64`,
//! written as `f32`), or matrix files summed (or averaged) into one file; `--binary` for
//! file output. Relative paths are taken from the current directory.

use std::process::ExitCode;

use kaldi_io::cli::{run_tool, OptionKind, ParseOptions, ToolResult};
use kaldi_io::{
    read_kaldi_object, write_kaldi_object, Matrix, RandomAccessTableReader, Rspecifier,
    SequentialTableReader, TableWriter, Wspecifier,
};

const USAGE: &str = "Add matrices (supports various forms)

Type one usage:
 matrix-sum [options] <matrix-in-rspecifier1> [<matrix-in-rspecifier2> <matrix-in-rspecifier3> ...] <matrix-out-wspecifier>
  e.g.: matrix-sum ark:1.weights ark:2.weights ark:combine.weights
  This usage supports the --scale1 and --scale2 options to scale the
  first two input tables.
Type two usage (sums a single table input to produce a single output):
 matrix-sum [options] <matrix-in-rspecifier> <matrix-out-wxfilename>
 e.g.: matrix-sum --binary=false mats.ark sum.mat
Type three usage (sums or averages single-file inputs to produce
a single output):
 matrix-sum [options] <matrix-in-rxfilename1> <matrix-in-rxfilename2> ... <matrix-out-wxfilename>
 e.g.: matrix-sum --binary=false 1.mat 2.mat 3.mat sum.mat
See also: copy-matrix
";

/// `out += alpha * m`, element by element.
fn add_mat(out: &mut Matrix<f32>, alpha: f32, m: &Matrix<f32>) {
    for r in 0..out.num_rows() {
        for (o, &x) in out.row_data_mut(r).iter_mut().zip(m.row_data(r)) {
            *o += alpha * x;
        }
    }
}

fn same_dim(a: &Matrix<f32>, b: &Matrix<f32>) -> bool {
    a.num_rows() == b.num_rows() && a.num_cols() == b.num_cols()
}

/// Type one: the first table read in order, the others by key.
fn type_one(args: &[String], scale1: f32, scale2: f32, average: bool) -> ToolResult {
    let n = args.len();
    let (first, out) = (&args[0], &args[n - 1]);
    let mut writer = TableWriter::<Matrix<f32>>::create(out)?;
    let mut others = Vec::new();
    for spec in &args[1..n - 1] {
        others.push((spec, RandomAccessTableReader::<Matrix<f32>>::open(spec)?));
    }
    let average_scale = 1.0 / (n - 1) as f32;
    let (mut n_utts, mut n_total, mut n_success, mut n_missing) = (0usize, 0usize, 0usize, 0usize);
    for entry in SequentialTableReader::<Matrix<f32>>::open(first)? {
        let (key, mut m) = entry?;
        n_utts += 1;
        n_total += 1;
        m.scale(if average { average_scale } else { scale1 });
        for (i, (spec, reader)) in others.iter_mut().enumerate() {
            match reader.get(&key)? {
                Some(m2) => {
                    n_total += 1;
                    if same_dim(&m2, &m) {
                        let scale = if average {
                            average_scale
                        } else if i == 0 {
                            scale2
                        } else {
                            1.0
                        };
                        add_mat(&mut m, scale, &m2);
                    } else {
                        eprintln!(
                            "matrix-sum: WARNING: Dimension mismatch for utterance {key} : {} by {} for system {}, rspecifier: {spec} vs {} by {} primary matrix, rspecifier:{first}",
                            m2.num_rows(),
                            m2.num_cols(),
                            i + 2,
                            m.num_rows(),
                            m.num_cols()
                        );
                    }
                }
                None => {
                    eprintln!(
                        "matrix-sum: WARNING: No matrix found for utterance {key} for system {}, rspecifier: {spec}",
                        i + 2
                    );
                    n_missing += 1;
                }
            }
        }
        writer.write(&key, &m)?;
        n_success += 1;
    }
    writer.finish()?;
    eprintln!(
        "matrix-sum: Processed {n_utts} utterances: with a total of {n_total} matrices across {} different systems",
        n - 1
    );
    eprintln!(
        "matrix-sum: Produced output for {n_success} utterances; {n_missing} total missing matrices"
    );
    Ok(n_success != 0 && n_missing < n_success - n_missing.min(n_success))
}

/// Type two: one table summed (in `f64`) into one matrix.
fn type_two(args: &[String], binary: bool) -> ToolResult {
    let mut sum: Option<Matrix<f64>> = None;
    let (mut num_done, mut num_err) = (0usize, 0usize);
    for entry in SequentialTableReader::<Matrix<f32>>::open(&args[0])? {
        let (key, m) = entry?;
        if m.num_rows() == 0 {
            eprintln!("matrix-sum: WARNING: Zero matrix input for key {key}");
            num_err += 1;
            continue;
        }
        let sum = sum.get_or_insert_with(|| Matrix::new(m.num_rows(), m.num_cols()));
        if sum.num_rows() != m.num_rows() || sum.num_cols() != m.num_cols() {
            eprintln!(
                "matrix-sum: WARNING: Dimension mismatch for key {key}: {} by {} vs. {} by {}",
                m.num_rows(),
                m.num_cols(),
                sum.num_rows(),
                sum.num_cols()
            );
            num_err += 1;
            continue;
        }
        for r in 0..m.num_rows() {
            for (s, &x) in sum.row_data_mut(r).iter_mut().zip(m.row_data(r)) {
                *s += f64::from(x);
            }
        }
        num_done += 1;
    }
    let sum = sum.unwrap_or_else(|| Matrix::new(0, 0));
    let mut sum_float = Matrix::<f32>::new(sum.num_rows(), sum.num_cols());
    sum_float.copy_from_mat(&sum, kaldi_io::dense_matrix::Trans::NoTrans);
    write_kaldi_object(&args[1], &sum_float, binary)?;
    eprintln!(
        "matrix-sum: Summed {num_done} matrices, {num_err} with errors; wrote sum to {}",
        args[1]
    );
    Ok(num_done > 0 && num_err < num_done)
}

/// Type three: matrix files summed (or averaged) into one file.
fn type_three(args: &[String], binary: bool, average: bool) -> ToolResult {
    let n = args.len();
    let mut sum: Option<Matrix<f32>> = None;
    for input in &args[..n - 1] {
        if Rspecifier::parse(input).is_ok() {
            return Err(
                "Wrong usage (type 3): if first and last arguments are not tables, \
                        the intermediate arguments must not be tables."
                    .into(),
            );
        }
        let m: Matrix<f32> = read_kaldi_object(input)?;
        match sum.as_mut() {
            None => sum = Some(m),
            Some(s) if s.num_rows() == 0 && s.num_cols() == 0 => *s = m,
            Some(_) if m.num_rows() == 0 && m.num_cols() == 0 => {}
            Some(s) => {
                if !same_dim(s, &m) {
                    return Err(format!(
                        "{input} is {} by {}, the sum so far {} by {}",
                        m.num_rows(),
                        m.num_cols(),
                        s.num_rows(),
                        s.num_cols()
                    )
                    .into());
                }
                add_mat(s, 1.0, &m);
            }
        }
    }
    let mut sum = sum.unwrap_or_else(|| Matrix::new(0, 0));
    if average {
        sum.scale(1.0 / (n - 1) as f32);
    }
    write_kaldi_object(&args[n - 1], &sum, binary)?;
    eprintln!(
        "matrix-sum: Summed {} matrices; wrote sum to {}",
        n - 1,
        args[n - 1]
    );
    Ok(true)
}

fn body(po: &ParseOptions, args: &[String]) -> ToolResult {
    let scale1 = po.get_f64("scale1") as f32;
    let scale2 = po.get_f64("scale2") as f32;
    let binary = po.get_bool("binary");
    let average = po.get_bool("average");
    let n = args.len();
    let out_is_table = Wspecifier::parse(&args[n - 1]).is_ok();
    let first_is_table = Rspecifier::parse(&args[0]).is_ok();
    if out_is_table {
        return type_one(args, scale1, scale2, average);
    }
    if scale1 != 1.0 || scale2 != 1.0 {
        return Err("--scale1 and --scale2 apply to type one usage only".into());
    }
    if n == 2 && first_is_table {
        if average {
            return Err("--average option not compatible with type two usage.".into());
        }
        return type_two(args, binary);
    }
    if first_is_table {
        return Err(
            "Wrong usage: a table input needs a table output (type one) or \
                    exactly one input (type two)"
                .into(),
        );
    }
    type_three(args, binary, average)
}

fn main() -> ExitCode {
    let mut po = ParseOptions::new(USAGE);
    po.register(
        "scale1",
        OptionKind::Float,
        "1",
        "Scale applied to first matrix (only for type one usage)",
    );
    po.register(
        "scale2",
        OptionKind::Float,
        "1",
        "Scale applied to second matrix (only for type one usage)",
    );
    po.register(
        "binary",
        OptionKind::Bool,
        "true",
        "If true, write output as binary (only relevant for usage types two or three",
    );
    po.register(
        "average",
        OptionKind::Bool,
        "false",
        "If true, compute average instead of sum; currently compatible with type 3 or type 1 usage.",
    );
    run_tool(
        "matrix-sum",
        &mut po,
        std::env::args().skip(1),
        |n| n >= 2,
        body,
    )
}
