//! Kaldi's `apply-cmvn`: cepstral mean (and with `--norm-vars`, variance) normalization
//! from statistics per utterance, per speaker (`--utt2spk`) or global (an rxfilename),
//! with Kaldi's `--norm-means`, `--skip-dims` and `--reverse`. The arithmetic is Kaldi's
//! `ApplyCmvn`: offsets and scales computed in `f64`, rounded to `f32`, then applied to
//! the `f32` features. Relative paths are taken from the current directory.

use std::process::ExitCode;

use kaldi_io::cli::{copy_table, run_tool, OptionKind, ParseOptions, ToolResult};
use kaldi_io::{read_kaldi_object, Matrix, RandomAccessTableReader, Rspecifier};

const USAGE: &str = "Apply cepstral mean and (optionally) variance normalization
Per-utterance by default, or per-speaker if utt2spk option provided
Usage: apply-cmvn [options] (<cmvn-stats-rspecifier>|<cmvn-stats-rxfilename>) <feats-rspecifier> <feats-wspecifier>
e.g.: apply-cmvn --utt2spk=ark:data/train/utt2spk scp:data/train/cmvn.scp scp:data/train/feats.scp ark:-
See also: compute-cmvn-stats, matrix-sum
";

/// Kaldi's `FakeStatsForSomeDims`: zero mean and unit variance for `dims`.
fn fake_stats_for_some_dims(dims: &[usize], stats: &mut Matrix<f64>) -> Result<(), String> {
    if stats.num_rows() != 2 || stats.num_cols() < 2 {
        return Err(format!(
            "--skip-dims needs 2-row CMVN stats, got {} x {}",
            stats.num_rows(),
            stats.num_cols()
        ));
    }
    let dim = stats.num_cols() - 1;
    let count = stats[(0, dim)];
    for &d in dims {
        if d >= dim {
            return Err(format!("--skip-dims: dimension {d} is outside 0..{dim}"));
        }
        stats[(0, d)] = 0.0;
        stats[(1, d)] = count;
    }
    Ok(())
}

/// Kaldi's `ApplyCmvn` (and `ApplyCmvnReverse` with `reverse`).
fn apply_cmvn(
    stats: &Matrix<f64>,
    norm_vars: bool,
    reverse: bool,
    feats: &mut Matrix<f32>,
) -> Result<(), String> {
    let rows = stats.num_rows();
    let dim = stats.num_cols().saturating_sub(1);
    if !(1..=2).contains(&rows) || feats.num_cols() != dim {
        return Err(format!(
            "Dim mismatch: cmvn {}x{}, feats {}x{}",
            rows,
            stats.num_cols(),
            feats.num_rows(),
            feats.num_cols()
        ));
    }
    if rows == 1 && norm_vars {
        return Err(
            "You requested variance normalization but no variance stats are supplied.".into(),
        );
    }
    let count = stats[(0, dim)];
    if count.is_nan() || count < 1.0 {
        return Err(format!(
            "Insufficient stats for cepstral mean and variance normalization: count = {count}"
        ));
    }
    let mut offset = vec![0f32; dim];
    let mut scale = vec![1f32; dim];
    if !norm_vars && !reverse {
        // offset.AddVec(-1.0 / count, mean_stats): the factor is rounded to f32 first
        let alpha = (-1.0 / count) as f32;
        for d in 0..dim {
            offset[d] = (f64::from(alpha) * stats[(0, d)]) as f32;
        }
    } else {
        for d in 0..dim {
            let mean = stats[(0, d)] / count;
            if !norm_vars {
                offset[d] = mean as f32; // reverse, means only
                continue;
            }
            let mut var = stats[(1, d)] / count - mean * mean;
            let floor = 1.0e-20;
            if var < floor {
                eprintln!("apply-cmvn: WARNING: Flooring cepstral variance from {var} to {floor}");
                var = floor;
            }
            if reverse {
                scale[d] = var.sqrt() as f32;
                offset[d] = mean as f32;
            } else {
                let s = 1.0 / var.sqrt();
                if s.is_nan() || (1.0 / s) == 0.0 {
                    return Err("NaN or infinity in cepstral mean/variance computation".into());
                }
                scale[d] = s as f32;
                offset[d] = (-(mean * s)) as f32;
            }
        }
    }
    for r in 0..feats.num_rows() {
        for (d, x) in feats.row_data_mut(r).iter_mut().enumerate() {
            if norm_vars {
                *x *= scale[d];
            }
            *x += offset[d];
        }
    }
    Ok(())
}

fn body(po: &ParseOptions, args: &[String]) -> ToolResult {
    let norm_vars = po.get_bool("norm-vars");
    let norm_means = po.get_bool("norm-means");
    let reverse = po.get_bool("reverse");
    let utt2spk = po.get_string("utt2spk");
    if norm_vars && !norm_means {
        return Err("You cannot normalize the variance but not the mean.".into());
    }
    let (cmvn, feats_in, feats_out) = (&args[0], &args[1], &args[2]);
    let skip_dims: Vec<usize> = match po.get_string("skip-dims") {
        "" => Vec::new(),
        text => text
            .split(':')
            .map(|t| t.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                format!(
                    "Bad --skip-dims option {text:?} (should be colon-separated list of integers)"
                )
            })?,
    };
    if !norm_means {
        // a no-op: the input is echoed
        let num_done =
            copy_table::<Matrix<f32>, _, kaldi_io::Error>(feats_in, feats_out, |_, m| Ok(Some(m)))?;
        eprintln!("apply-cmvn: Copied {num_done} utterances.");
        return Ok(num_done != 0);
    }
    let mut num_err = 0usize;
    let num_done = if Rspecifier::parse(cmvn).is_ok() {
        let mut cmvn_reader = RandomAccessTableReader::<Matrix<f64>>::open(cmvn)?;
        let mut utt2spk_reader = match utt2spk {
            "" => None,
            u => Some(RandomAccessTableReader::<String>::open(u)?),
        };
        copy_table(feats_in, feats_out, |utt, mut feats: Matrix<f32>| {
            let key = match utt2spk_reader.as_mut() {
                None => Some(utt.to_string()),
                Some(reader) => reader.get(utt)?,
            };
            let stats = match key {
                Some(key) => cmvn_reader.get(&key)?,
                None => None,
            };
            let Some(mut stats) = stats else {
                eprintln!(
                    "apply-cmvn: WARNING: No normalization statistics available for key {utt}, \
                     producing no output for this utterance"
                );
                num_err += 1;
                return Ok(None);
            };
            if !skip_dims.is_empty() {
                fake_stats_for_some_dims(&skip_dims, &mut stats)?;
            }
            apply_cmvn(&stats, norm_vars, reverse, &mut feats)
                .map_err(|e| format!("utterance {utt}: {e}"))?;
            Ok::<_, Box<dyn std::error::Error>>(Some(feats))
        })?
    } else {
        if !utt2spk.is_empty() {
            return Err("--utt2spk option not compatible with rxfilename as input \
                        (did you forget ark:?)"
                .into());
        }
        let mut stats: Matrix<f64> = read_kaldi_object(cmvn)?;
        if !skip_dims.is_empty() {
            fake_stats_for_some_dims(&skip_dims, &mut stats)?;
        }
        copy_table(feats_in, feats_out, |utt, mut feats: Matrix<f32>| {
            apply_cmvn(&stats, norm_vars, reverse, &mut feats)
                .map_err(|e| format!("utterance {utt}: {e}"))?;
            Ok::<_, Box<dyn std::error::Error>>(Some(feats))
        })?
    };
    let what = if norm_vars {
        "cepstral mean and variance normalization"
    } else {
        "cepstral mean normalization"
    };
    eprintln!("apply-cmvn: Applied {what} to {num_done} utterances, errors on {num_err}");
    Ok(num_done != 0)
}

fn main() -> ExitCode {
    let mut po = ParseOptions::new(USAGE);
    po.register(
        "utt2spk",
        OptionKind::String,
        "",
        "rspecifier for utterance to speaker map",
    );
    po.register(
        "norm-vars",
        OptionKind::Bool,
        "false",
        "If true, normalize variances.",
    );
    po.register(
        "norm-means",
        OptionKind::Bool,
        "true",
        "You can set this to false to turn off mean normalization.",
    );
    po.register(
        "skip-dims",
        OptionKind::String,
        "",
        "Dimensions for which to skip normalization: colon-separated list of integers, e.g. 13:14:15)",
    );
    po.register(
        "reverse",
        OptionKind::Bool,
        "false",
        "If true, apply CMVN in a reverse sense, so as to transform zero-mean, unit-variance input into data with the given mean and variance.",
    );
    run_tool(
        "apply-cmvn",
        &mut po,
        std::env::args().skip(1),
        |n| n == 3,
        body,
    )
}
