//! Kaldi's `compute-cmvn-stats`: cepstral mean and variance statistics per utterance, per
//! speaker (`--spk2utt`), or global when the output is a wxfilename, with per-frame
//! `--weights` and `--binary`, as Kaldi's tool. The statistics are Kaldi's 2 x (dim + 1)
//! double matrix: row 0 the weighted sums of the features and the total weight, row 1
//! the weighted sums of their squares (products in `f32`, sums in `f64`, as Kaldi's
//! `AccCmvnStats`). Relative paths are taken from the current directory.

use std::process::ExitCode;

use kaldi_io::cli::{run_tool, OptionKind, ParseOptions, ToolResult};
use kaldi_io::{
    write_kaldi_object, Matrix, RandomAccessTableReader, SequentialTableReader, TableWriter,
    Vector, Wspecifier,
};

const USAGE: &str = "Compute cepstral mean and variance normalization statistics
If wspecifier provided: per-utterance by default, or per-speaker if
spk2utt option provided; if wxfilename: global
Usage: compute-cmvn-stats  [options] <feats-rspecifier> (<stats-wspecifier>|<stats-wxfilename>)
e.g.: compute-cmvn-stats --spk2utt=ark:data/train/spk2utt scp:data/train/feats.scp ark,scp:/foo/bar/cmvn.ark,data/train/cmvn.scp
See also: apply-cmvn, matrix-sum
";

/// Kaldi's `AccCmvnStats` over the frames of `feats`, each weighted (1 without weights).
fn acc_cmvn_stats(feats: &Matrix<f32>, weights: Option<&[f32]>, stats: &mut Matrix<f64>) {
    let dim = feats.num_cols();
    for r in 0..feats.num_rows() {
        let weight = weights.map_or(1.0, |w| w[r]);
        if weight == 0.0 {
            continue;
        }
        let frame = feats.row_data(r);
        stats[(0, dim)] += f64::from(weight);
        for (d, &x) in frame.iter().enumerate() {
            stats[(0, d)] += f64::from(x * weight);
            stats[(1, d)] += f64::from(x * x * weight);
        }
    }
}

/// `AccCmvnStatsWrapper`: accumulates, or warns and returns false when the weights of
/// `utt` are missing or of the wrong length.
fn accumulate(
    utt: &str,
    feats: &Matrix<f32>,
    weights: &mut Option<RandomAccessTableReader<Vector<f32>>>,
    stats: &mut Matrix<f64>,
) -> Result<bool, kaldi_io::Error> {
    let Some(reader) = weights.as_mut() else {
        acc_cmvn_stats(feats, None, stats);
        return Ok(true);
    };
    let Some(w) = reader.get(utt)? else {
        eprintln!("compute-cmvn-stats: WARNING: No weights available for utterance {utt}");
        return Ok(false);
    };
    if w.dim() != feats.num_rows() {
        eprintln!(
            "compute-cmvn-stats: WARNING: Weights for utterance {utt} have wrong dimension {} vs. {}",
            w.dim(),
            feats.num_rows()
        );
        return Ok(false);
    }
    acc_cmvn_stats(feats, Some(w.data()), stats);
    Ok(true)
}

fn init_stats(dim: usize) -> Matrix<f64> {
    Matrix::new(2, dim + 1)
}

fn body(po: &ParseOptions, args: &[String]) -> ToolResult {
    let (rspecifier, output) = (&args[0], &args[1]);
    let spk2utt = po.get_string("spk2utt");
    let mut weights = match po.get_string("weights") {
        "" => None,
        w => Some(RandomAccessTableReader::<Vector<f32>>::open(w)?),
    };
    let (mut num_done, mut num_err) = (0usize, 0usize);
    if Wspecifier::parse(output).is_ok() {
        let mut writer = TableWriter::<Matrix<f64>>::create(output)?;
        if !spk2utt.is_empty() {
            let mut feats_reader = RandomAccessTableReader::<Matrix<f32>>::open(rspecifier)?;
            for entry in SequentialTableReader::<Vec<String>>::open(spk2utt)? {
                let (spk, utts) = entry?;
                let mut stats: Option<Matrix<f64>> = None;
                for utt in &utts {
                    let Some(feats) = feats_reader.get(utt)? else {
                        eprintln!(
                            "compute-cmvn-stats: WARNING: Did not find features for utterance {utt}"
                        );
                        num_err += 1;
                        continue;
                    };
                    let stats = stats.get_or_insert_with(|| init_stats(feats.num_cols()));
                    check_dim(utt, &feats, stats)?;
                    if accumulate(utt, &feats, &mut weights, stats)? {
                        num_done += 1;
                    } else {
                        num_err += 1;
                    }
                }
                match stats {
                    Some(stats) => writer.write(&spk, &stats)?,
                    None => eprintln!(
                        "compute-cmvn-stats: WARNING: No stats accumulated for speaker {spk}"
                    ),
                }
            }
        } else {
            for entry in SequentialTableReader::<Matrix<f32>>::open(rspecifier)? {
                let (utt, feats) = entry?;
                let mut stats = init_stats(feats.num_cols());
                if !accumulate(&utt, &feats, &mut weights, &mut stats)? {
                    num_err += 1;
                    continue;
                }
                writer.write(&utt, &stats)?;
                num_done += 1;
            }
        }
        writer.finish()?;
    } else {
        if !spk2utt.is_empty() {
            return Err("--spk2utt option not compatible with wxfilename as output \
                        (did you forget ark:?)"
                .into());
        }
        let mut stats: Option<Matrix<f64>> = None;
        for entry in SequentialTableReader::<Matrix<f32>>::open(rspecifier)? {
            let (utt, feats) = entry?;
            let stats = stats.get_or_insert_with(|| init_stats(feats.num_cols()));
            check_dim(&utt, &feats, stats)?;
            if accumulate(&utt, &feats, &mut weights, stats)? {
                num_done += 1;
            } else {
                num_err += 1;
            }
        }
        let stats = stats.unwrap_or_else(|| Matrix::new(0, 0));
        let mut stats_float = Matrix::<f32>::new(stats.num_rows(), stats.num_cols());
        stats_float.copy_from_mat(&stats, kaldi_io::dense_matrix::Trans::NoTrans);
        write_kaldi_object(output, &stats_float, po.get_bool("binary"))?;
        eprintln!("compute-cmvn-stats: Wrote global CMVN stats to {output}");
    }
    eprintln!(
        "compute-cmvn-stats: Done accumulating CMVN stats for {num_done} utterances; \
         {num_err} had errors."
    );
    Ok(num_done != 0)
}

/// Kaldi asserts that every utterance of a speaker (or of the global stats) has the
/// dimension of the first; here it is an error naming the utterance.
fn check_dim(utt: &str, feats: &Matrix<f32>, stats: &Matrix<f64>) -> Result<(), String> {
    if feats.num_cols() + 1 != stats.num_cols() {
        return Err(format!(
            "utterance {utt} has {} feature dimensions where earlier ones had {}",
            feats.num_cols(),
            stats.num_cols() - 1
        ));
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut po = ParseOptions::new(USAGE);
    po.register(
        "spk2utt",
        OptionKind::String,
        "",
        "rspecifier for speaker to utterance-list map",
    );
    po.register(
        "binary",
        OptionKind::Bool,
        "true",
        "write in binary mode (applies only to global CMN/CVN)",
    );
    po.register(
        "weights",
        OptionKind::String,
        "",
        "rspecifier for a vector of floats for each utterance, that's a per-frame weight.",
    );
    run_tool(
        "compute-cmvn-stats",
        &mut po,
        std::env::args().skip(1),
        |n| n == 2,
        body,
    )
}
