//! CTC against its peers: golden files written by `tests/golden/ctc_generate.py` with torch
//! 1.12 (`ctc_loss`, gradient through `log_softmax`) and k2 1.23.2 (`intersect_dense` total
//! scores at two output beams, `ctc_loss` and its gradient).

use crate::common;

use common::{cases, Case};
use ndarray::Array3;
use ragged_fsa::{
    ctc_loss, ctc_loss_with, intersect_dense, CtcLossConfig, DenseFsaVec, FsaVec, Semiring,
};

impl Case {
    fn log_probs(&self) -> Array3<f32> {
        let d = self.get::<i32>("dims");
        let values: Vec<f32> = self
            .get::<f64>("log_probs")
            .iter()
            .map(|&x| x as f32)
            .collect();
        Array3::from_shape_vec((d[0] as usize, d[1] as usize, d[2] as usize), values).unwrap()
    }
    fn segments(&self) -> Vec<[i32; 3]> {
        self.get::<i32>("segments")
            .chunks(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect()
    }
    fn graphs(&self) -> FsaVec {
        let targets: Vec<Vec<i32>> = (0..self.segments().len())
            .map(|i| self.get::<i32>(&format!("target {i}")))
            .collect();
        FsaVec::ctc_graph(&targets, false).unwrap()
    }
}

#[track_caller]
fn check_close(got: f64, want: f64, rel: f64, what: &str) {
    if want.is_infinite() {
        assert_eq!(got, want, "{what}");
    } else {
        assert!(
            (got - want).abs() <= rel * want.abs().max(1.0),
            "{what}: {got} vs {want}"
        );
    }
}

#[test]
fn ctc_loss_agrees_with_torch() {
    let all = cases(include_str!("golden/ctc_torch.txt"));
    assert_eq!(all.len(), 9);
    let mut saw_inf = false;
    for case in &all {
        let lp = case.log_probs();
        let dense = DenseFsaVec::new(lp.view(), &case.segments());
        let out = ctc_loss(&case.graphs(), &dense, f32::INFINITY).unwrap();
        let want = case.get::<f64>("loss");
        assert_eq!(out.loss.len(), want.len());
        for (i, (&g, &w)) in out.loss.iter().zip(&want).enumerate() {
            saw_inf |= w.is_infinite();
            check_close(g, w, 1e-4, &format!("{} loss {i}", case.name));
        }
        // gradient w.r.t. the logits, through log_softmax
        let grad_logits = case.get::<f64>("grad_logits");
        let (n, t, c) = lp.dim();
        for s in 0..n {
            for f in 0..t {
                let row_sum: f64 = (0..c).map(|k| out.grad[[s, f, k]] as f64).sum();
                for k in 0..c {
                    let g = out.grad[[s, f, k]] as f64 - (lp[[s, f, k]] as f64).exp() * row_sum;
                    let w = grad_logits[(s * t + f) * c + k];
                    assert!(
                        (g - w).abs() < 1e-4,
                        "{} grad [{s},{f},{k}]: {g} vs {w}",
                        case.name
                    );
                }
            }
        }
        // zero_infinity: infinite losses become 0, the gradient is unchanged
        let zeroed = ctc_loss_with(
            &case.graphs(),
            &dense,
            &CtcLossConfig {
                zero_infinity: true,
                ..CtcLossConfig::default()
            },
        )
        .unwrap();
        for (z, l) in zeroed.loss.iter().zip(&out.loss) {
            assert_eq!(*z, if l.is_infinite() { 0.0 } else { *l });
        }
        assert_eq!(zeroed.grad, out.grad);
    }
    assert!(saw_inf);
}

#[test]
fn intersect_dense_and_ctc_loss_agree_with_k2() {
    let all = cases(include_str!("golden/ctc_k2.txt"));
    assert_eq!(all.len(), 6);
    for case in &all {
        let lp = case.log_probs();
        let dense = DenseFsaVec::new(lp.view(), &case.segments());
        let graphs = case.graphs();
        for beam in [10.0f32, 3.0] {
            let (lattice, _, _) = intersect_dense(&graphs, &dense, beam, None).unwrap();
            let log: Vec<f64> = lattice.get_tot_scores(Semiring::Log).unwrap();
            let trop: Vec<f64> = lattice.get_tot_scores(Semiring::Tropical).unwrap();
            for (i, w) in case
                .get::<f64>(&format!("tot_log_{beam}"))
                .iter()
                .enumerate()
            {
                check_close(
                    log[i],
                    *w,
                    1e-5,
                    &format!("{} log beam {beam} fsa {i}", case.name),
                );
            }
            for (i, w) in case
                .get::<f64>(&format!("tot_tropical_{beam}"))
                .iter()
                .enumerate()
            {
                check_close(
                    trop[i],
                    *w,
                    1e-5,
                    &format!("{} tropical beam {beam} fsa {i}", case.name),
                );
            }
        }
        let out = ctc_loss(&graphs, &dense, 10.0).unwrap();
        for (i, w) in case.get::<f64>("k2_loss").iter().enumerate() {
            check_close(out.loss[i], *w, 1e-5, &format!("{} k2 loss {i}", case.name));
        }
        let grad = case.get::<f64>("k2_grad");
        for (g, w) in out.grad.iter().zip(&grad) {
            assert!(
                (*g as f64 - w).abs() < 1e-5,
                "{}: grad {g} vs {w}",
                case.name
            );
        }
    }
}
