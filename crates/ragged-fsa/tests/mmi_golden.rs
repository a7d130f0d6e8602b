//! `mmi_loss_with` and its output beam against k2 1.23.2: icefall's `LFMMILoss` with
//! `k2.intersect_dense(..., output_beam)` on the numerator and the denominator (golden file
//! and script: `tests/golden/mmi_k2.txt`, `tests/golden/mmi_generate_k2.py`).

use crate::common;

use common::{cases, Case};
use ndarray::Array3;
use ragged_fsa::{mmi_loss, mmi_loss_with, DenseFsaVec, Error, Fsa, FsaVec, MmiLossConfig};

fn inputs(case: &Case) -> (Array3<f32>, Vec<[i32; 3]>, FsaVec, Fsa, f64) {
    let d: Vec<usize> = case.get("dims");
    let values: Vec<f32> = case.get("log_probs");
    let lp = Array3::from_shape_vec((d[0], d[1], d[2]), values).unwrap();
    let segs: Vec<i32> = case.get("segments");
    let segments: Vec<[i32; 3]> = segs.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
    let targets: Vec<Vec<i32>> = (0..segments.len())
        .map(|i| case.get(&format!("target {i}")))
        .collect();
    let num = FsaVec::ctc_graph(&targets, false).unwrap();
    let den: Fsa = case.fields["den_graph"]
        .replace(" ; ", "\n")
        .trim()
        .parse()
        .unwrap();
    let den_scale: Vec<f64> = case.get("den_scale");
    (lp, segments, num, den, den_scale[0])
}

#[test]
fn pruned_mmi_loss_and_gradient_agree_with_k2() {
    let all = cases(include_str!("golden/mmi_k2.txt"));
    assert_eq!(all.len(), 3);
    for case in &all {
        let (lp, segments, num, den, den_scale) = inputs(case);
        let dense = DenseFsaVec::new(lp.view(), &segments);
        let exact = mmi_loss(&num, &den, &dense, den_scale).unwrap();
        for beam in [8.0f32, 2.0] {
            let config = MmiLossConfig {
                den_scale,
                output_beam: beam,
                ..MmiLossConfig::default()
            };
            let out = mmi_loss_with(&num, &den, &dense, &config).unwrap();
            let want_loss: Vec<f64> = case.get(&format!("loss_{beam}"));
            let num_tot: Vec<f64> = case.get(&format!("num_tot_{beam}"));
            let den_tot: Vec<f64> = case.get(&format!("den_tot_{beam}"));
            for i in 0..segments.len() {
                let what = format!("{} beam {beam} segment {i}", case.name);
                let want = -(num_tot[i] - den_scale * den_tot[i]);
                assert!(
                    (want - want_loss[i]).abs() < 1e-9,
                    "{what}: the file agrees"
                );
                assert!(
                    (out.loss[i] - want_loss[i]).abs() < 1e-4 * want_loss[i].abs().max(1.0),
                    "{what}: {} vs k2's {}",
                    out.loss[i],
                    want_loss[i]
                );
            }
            let want_grad: Vec<f32> = case.get(&format!("grad_{beam}"));
            for (k, (g, w)) in out.grad.iter().zip(&want_grad).enumerate() {
                assert!(
                    (g - w).abs() < 1e-4,
                    "{} beam {beam} grad[{k}]: {g} vs k2's {w}",
                    case.name
                );
            }
            // a narrow beam drops paths: the pruned totals differ from the exact ones
            if beam == 2.0 {
                assert!(
                    out.loss
                        .iter()
                        .zip(&exact.loss)
                        .any(|(a, b)| (a - b).abs() > 1e-3),
                    "{}: pruning changes the loss",
                    case.name
                );
            }
        }
    }
}

#[test]
fn default_config_is_the_exact_loss_and_bad_beams_are_errors() {
    let case = &cases(include_str!("golden/mmi_k2.txt"))[0];
    let (lp, segments, num, den, den_scale) = inputs(case);
    let dense = DenseFsaVec::new(lp.view(), &segments);
    let config = MmiLossConfig {
        den_scale,
        ..MmiLossConfig::default()
    };
    assert_eq!(config.output_beam, f32::INFINITY);
    assert_eq!(
        mmi_loss_with(&num, &den, &dense, &config).unwrap(),
        mmi_loss(&num, &den, &dense, den_scale).unwrap()
    );
    for beam in [0.0f32, -1.0, f32::NAN] {
        let err = mmi_loss_with(
            &num,
            &den,
            &dense,
            &MmiLossConfig {
                den_scale,
                output_beam: beam,
                ..MmiLossConfig::default()
            },
        )
        .unwrap_err();
        match err {
            Error::BadBeam { name, value } => {
                assert_eq!(name, "output_beam");
                assert!(value.is_nan() && beam.is_nan() || value == beam);
            }
            other => panic!("beam {beam}: {other:?}"),
        }
    }
}
