//! Kaldi's `copy-matrix`: copies matrices, or archives of matrices, optionally scaling
//! them or applying log, exp, a power or a softmax per row, with Kaldi's options
//! (`--binary`, `--scale`, `--apply-log`, `--apply-exp`, `--apply-power`,
//! `--apply-softmax-per-row`), in Kaldi's order: scale, log (after flooring at 1e-20),
//! exp, softmax, power. Relative paths are taken from the current directory.

use std::process::ExitCode;

use kaldi_io::cli::{copy_table, run_tool, OptionKind, ParseOptions, ToolResult};
use kaldi_io::{read_kaldi_object, write_kaldi_object, Matrix, Rspecifier, Wspecifier};

const USAGE: &str = "Copy matrices, or archives of matrices (e.g. features or transforms)
Also see copy-feats which has other format options

Usage: copy-matrix [options] <matrix-in-rspecifier> <matrix-out-wspecifier>
  or: copy-matrix [options] <matrix-in-rxfilename> <matrix-out-wxfilename>
 e.g.: copy-matrix --binary=false 1.mat -
   copy-matrix ark:2.trans ark,t:-
See also: copy-feats, matrix-sum
";

struct Transform {
    scale: f32,
    apply_log: bool,
    apply_exp: bool,
    apply_power: f32,
    apply_softmax_per_row: bool,
}

impl Transform {
    fn is_identity(&self) -> bool {
        self.scale == 1.0
            && !self.apply_log
            && !self.apply_exp
            && self.apply_power == 1.0
            && !self.apply_softmax_per_row
    }

    fn apply(&self, m: &mut Matrix<f32>, what: &str) -> Result<(), String> {
        if self.scale != 1.0 {
            m.scale(self.scale);
        }
        if self.apply_log {
            m.apply_floor(1.0e-20);
            m.apply_log().map_err(|e| format!("{what}: {e}"))?;
        }
        if self.apply_exp {
            m.apply_exp();
        }
        if self.apply_softmax_per_row {
            m.apply_softmax_per_row();
        }
        if self.apply_power != 1.0 {
            m.apply_pow(self.apply_power)
                .map_err(|e| format!("{what}: {e}"))?;
        }
        Ok(())
    }
}

fn body(po: &ParseOptions, args: &[String]) -> ToolResult {
    let t = Transform {
        scale: po.get_f64("scale") as f32,
        apply_log: po.get_bool("apply-log"),
        apply_exp: po.get_bool("apply-exp"),
        apply_power: po.get_f64("apply-power") as f32,
        apply_softmax_per_row: po.get_bool("apply-softmax-per-row"),
    };
    if [t.apply_log, t.apply_exp, t.apply_softmax_per_row]
        .iter()
        .filter(|&&b| b)
        .count()
        > 1
    {
        return Err(
            "Only one of apply-log, apply-exp and apply-softmax-per-row can be given".into(),
        );
    }
    let (input, output) = (&args[0], &args[1]);
    let in_is_table = Rspecifier::parse(input).is_ok();
    let out_is_table = Wspecifier::parse(output).is_ok();
    if in_is_table != out_is_table {
        return Err("Cannot mix archives with regular files (copying matrices)".into());
    }
    if !in_is_table {
        let mut m: Matrix<f32> = read_kaldi_object(input)?;
        t.apply(&mut m, input)?;
        write_kaldi_object(output, &m, po.get_bool("binary"))?;
        eprintln!("copy-matrix: Copied matrix to {output}");
        return Ok(true);
    }
    let num_done = copy_table(input, output, |key, mut m: Matrix<f32>| {
        if !t.is_identity() {
            t.apply(&mut m, &format!("key {key}"))?;
        }
        Ok::<_, Box<dyn std::error::Error>>(Some(m))
    })?;
    eprintln!("copy-matrix: Copied {num_done} matrices.");
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
    po.register(
        "scale",
        OptionKind::Float,
        "1",
        "This option can be used to scale the matrices being copied.",
    );
    po.register(
        "apply-log",
        OptionKind::Bool,
        "false",
        "This option can be used to apply log on the matrices. Must be avoided if matrix has negative quantities.",
    );
    po.register(
        "apply-exp",
        OptionKind::Bool,
        "false",
        "This option can be used to apply exp on the matrices",
    );
    po.register(
        "apply-power",
        OptionKind::Float,
        "1",
        "This option can be used to apply a power on the matrices",
    );
    po.register(
        "apply-softmax-per-row",
        OptionKind::Bool,
        "false",
        "This option can be used to apply softmax per row of the matrices",
    );
    run_tool(
        "copy-matrix",
        &mut po,
        std::env::args().skip(1),
        |n| n == 2,
        body,
    )
}
