//! The RNN-T losses against k2 1.23.2 and torchaudio 0.12.1: golden cases written by
//! `tests/golden/rnnt_generate_k2.py` (k2 in float64 on float32 inputs, torchaudio in
//! float32). Losses to 1e-5 relative, gradients to 1e-4 absolute.

use crate::common;

use common::{cases, Case};
use ndarray::{Array2, Array3, Array4};
use ragged_fsa::{
    do_rnnt_pruning, get_rnnt_logprobs, get_rnnt_logprobs_joint, get_rnnt_logprobs_pruned,
    get_rnnt_logprobs_smoothed, get_rnnt_prune_ranges, joint_mutual_information_recursion,
    mutual_information_recursion, rnnt_loss, rnnt_loss_pruned, rnnt_loss_simple,
    rnnt_loss_smoothed, Reduction, RnntLossConfig, RnntType,
};

const GOLDEN: &str = include_str!("golden/rnnt_k2.txt");

fn of_kind(kind: &str) -> Vec<Case> {
    let all: Vec<Case> = cases(GOLDEN)
        .into_iter()
        .filter(|c| c.name.split_whitespace().next() == Some(kind))
        .collect();
    assert!(!all.is_empty(), "no {kind} cases");
    all
}

impl Case {
    fn has(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }
    fn dims(&self) -> Vec<usize> {
        self.get::<usize>("dims")
    }
    fn f32s(&self, key: &str) -> Vec<f32> {
        self.get::<f64>(key).iter().map(|&x| x as f32).collect()
    }
    fn a3<T: Clone + std::str::FromStr>(&self, key: &str, d: [usize; 3]) -> Array3<T>
    where
        T::Err: std::fmt::Debug,
    {
        Array3::from_shape_vec(d, self.get::<T>(key)).unwrap()
    }
    fn f3(&self, key: &str, d: [usize; 3]) -> Array3<f32> {
        Array3::from_shape_vec(d, self.f32s(key)).unwrap()
    }
    fn f4(&self, key: &str, d: [usize; 4]) -> Array4<f32> {
        Array4::from_shape_vec(d, self.f32s(key)).unwrap()
    }
    fn boundary(&self) -> Option<Array2<i64>> {
        self.has("boundary").then(|| {
            let v = self.get::<i64>("boundary");
            Array2::from_shape_vec((v.len() / 4, 4), v).unwrap()
        })
    }
    fn symbols(&self, b: usize) -> Array2<i64> {
        let v = self.get::<i64>("symbols");
        Array2::from_shape_vec((b, v.len() / b), v).unwrap()
    }
    fn rnnt_type(&self) -> RnntType {
        [RnntType::Regular, RnntType::Modified, RnntType::Constrained][self.get::<usize>("type")[0]]
    }
    fn config(&self) -> RnntLossConfig {
        let mut config = RnntLossConfig {
            rnnt_type: self.rnnt_type(),
            delay_penalty: self.get::<f32>("delay")[0],
            reduction: [Reduction::None, Reduction::Mean, Reduction::Sum]
                [self.get::<usize>("reduction")[0]],
            return_grad: true,
            ..RnntLossConfig::default()
        };
        if self.has("scales") {
            let s = self.get::<f32>("scales");
            config.lm_only_scale = s[0];
            config.am_only_scale = s[1];
        }
        config
    }
}

/// Every value within `abs + rel * |want|`; infinities equal.
#[track_caller]
fn close<'a>(got: impl IntoIterator<Item = &'a f32>, want: &[f64], abs: f64, rel: f64, what: &str) {
    let got: Vec<f64> = got.into_iter().map(|&x| f64::from(x)).collect();
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if w.is_infinite() {
            assert_eq!(g, w, "{what}[{i}]");
        } else {
            assert!(
                (g - w).abs() <= abs + rel * w.abs(),
                "{what}[{i}]: got {g}, k2 {w}"
            );
        }
    }
}

#[test]
fn mutual_information_recursion_agrees_with_k2() {
    for case in of_kind("mi") {
        let d = case.dims();
        let (b, s, t1, t) = (d[0], d[1], d[2], d[3]);
        let px = case.a3::<f64>("px", [b, s, t1]);
        let py = case.a3::<f64>("py", [b, s + 1, t]);
        let boundary = case.boundary();
        let out = mutual_information_recursion(
            px.view(),
            py.view(),
            boundary.as_ref().map(|x| x.view()),
            true,
        )
        .unwrap();
        let name = &case.name;
        for (got, want) in [
            (out.scores.to_vec(), case.get::<f64>("scores")),
            (
                out.px_grad.unwrap().iter().copied().collect(),
                case.get::<f64>("px_grad"),
            ),
            (
                out.py_grad.unwrap().iter().copied().collect(),
                case.get::<f64>("py_grad"),
            ),
        ] {
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                    "{name}: {g} vs {w}"
                );
            }
        }
        // f32 too
        let out32 = mutual_information_recursion(
            px.mapv(|x| x as f32).view(),
            py.mapv(|x| x as f32).view(),
            boundary.as_ref().map(|x| x.view()),
            true,
        )
        .unwrap();
        close(
            out32.scores.iter(),
            &case.get::<f64>("scores"),
            0.0,
            1e-5,
            name,
        );
        close(
            out32.px_grad.as_ref().unwrap().iter(),
            &case.get::<f64>("px_grad"),
            1e-4,
            0.0,
            name,
        );
    }
}

#[test]
fn joint_mutual_information_recursion_agrees_with_k2() {
    for case in of_kind("joint_mi") {
        let d = case.dims();
        let (b, s, t1, t) = (d[0], d[1], d[2], d[3]);
        let px = [
            case.a3::<f64>("px0", [b, s, t1]),
            case.a3::<f64>("px1", [b, s, t1]),
        ];
        let py = [
            case.a3::<f64>("py0", [b, s + 1, t]),
            case.a3::<f64>("py1", [b, s + 1, t]),
        ];
        let out = joint_mutual_information_recursion(
            &[px[0].view(), px[1].view()],
            &[py[0].view(), py[1].view()],
            None,
        )
        .unwrap();
        for (g, w) in out.scores.iter().zip(&case.get::<f64>("scores")) {
            assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "{g} vs {w}");
        }
        for (g, w) in out.px_grad.iter().zip(&case.get::<f64>("px0_grad")) {
            assert!((g - w).abs() <= 1e-9, "{g} vs {w}");
        }
    }
}

fn check_simple(kind: &str) {
    let all = of_kind(kind);
    assert_eq!(all.len(), 18);
    for case in all {
        let d = case.dims();
        let (b, s, t, c) = (d[0], d[1], d[2], d[3]);
        let lm = case.f3("lm", [b, s + 1, c]);
        let am = case.f3("am", [b, t, c]);
        let symbols = case.symbols(b);
        let term = case.get::<usize>("term")[0];
        let boundary = case.boundary();
        let bview = boundary.as_ref().map(|x| x.view());
        let config = case.config();
        let name = &case.name;
        let (px, py) = if kind == "simple" {
            get_rnnt_logprobs(
                lm.view(),
                am.view(),
                symbols.view(),
                term,
                config.rnnt_type,
                bview,
            )
        } else {
            get_rnnt_logprobs_smoothed(lm.view(), am.view(), symbols.view(), term, bview, &config)
        }
        .unwrap();
        close(
            px.iter(),
            &case.get::<f64>("px"),
            1e-5,
            1e-5,
            &format!("{name} px"),
        );
        close(
            py.iter(),
            &case.get::<f64>("py"),
            1e-5,
            1e-5,
            &format!("{name} py"),
        );
        let out = if kind == "simple" {
            rnnt_loss_simple(lm.view(), am.view(), symbols.view(), term, bview, &config)
        } else {
            rnnt_loss_smoothed(lm.view(), am.view(), symbols.view(), term, bview, &config)
        }
        .unwrap();
        close(
            out.loss.iter(),
            &case.get::<f64>("loss"),
            0.0,
            1e-5,
            &format!("{name} loss"),
        );
        for (got, key) in [
            (out.px_grad.as_ref(), "px_grad"),
            (out.py_grad.as_ref(), "py_grad"),
            (out.lm_grad.as_ref(), "lm_grad"),
            (out.am_grad.as_ref(), "am_grad"),
        ] {
            close(
                got.unwrap().iter(),
                &case.get::<f64>(key),
                1e-4,
                0.0,
                &format!("{name} {key}"),
            );
        }
    }
}

#[test]
fn rnnt_loss_simple_agrees_with_k2() {
    check_simple("simple");
}

#[test]
fn rnnt_loss_smoothed_agrees_with_k2() {
    check_simple("smoothed");
}

#[test]
fn rnnt_loss_agrees_with_k2() {
    let all = of_kind("joint");
    assert_eq!(all.len(), 9);
    for case in all {
        let d = case.dims();
        let (b, t, s1, c) = (d[0], d[1], d[2], d[3]);
        let logits = case.f4("logits", [b, t, s1, c]);
        let symbols = case.symbols(b);
        let term = case.get::<usize>("term")[0];
        let boundary = case.boundary();
        let bview = boundary.as_ref().map(|x| x.view());
        let config = case.config();
        let name = &case.name;
        let (px, py) =
            get_rnnt_logprobs_joint(logits.view(), symbols.view(), term, config.rnnt_type, bview)
                .unwrap();
        close(
            px.iter(),
            &case.get::<f64>("px"),
            1e-5,
            1e-5,
            &format!("{name} px"),
        );
        close(
            py.iter(),
            &case.get::<f64>("py"),
            1e-5,
            1e-5,
            &format!("{name} py"),
        );
        let out = rnnt_loss(logits.view(), symbols.view(), term, bview, &config).unwrap();
        close(
            out.loss.iter(),
            &case.get::<f64>("loss"),
            0.0,
            1e-5,
            &format!("{name} loss"),
        );
        close(
            out.logits_grad.as_ref().unwrap().iter(),
            &case.get::<f64>("logits_grad"),
            1e-4,
            0.0,
            &format!("{name} logits_grad"),
        );
    }
}

#[test]
fn rnnt_loss_agrees_with_torchaudio() {
    for case in of_kind("torchaudio") {
        let d = case.dims();
        let (b, t, s1, c) = (d[0], d[1], d[2], d[3]);
        let logits = case.f4("logits", [b, t, s1, c]);
        let symbols = case.symbols(b);
        let frames = case.get::<i64>("logit_lengths");
        let lengths = case.get::<i64>("target_lengths");
        let boundary = Array2::from_shape_fn((b, 4), |(i, j)| match j {
            2 => lengths[i],
            3 => frames[i],
            _ => 0,
        });
        let config = RnntLossConfig {
            reduction: Reduction::None,
            ..RnntLossConfig::default()
        };
        let out = rnnt_loss(
            logits.view(),
            symbols.view(),
            0,
            Some(boundary.view()),
            &config,
        )
        .unwrap();
        let name = &case.name;
        close(out.loss.iter(), &case.get::<f64>("loss"), 0.0, 1e-5, name);
        close(
            out.logits_grad.as_ref().unwrap().iter(),
            &case.get::<f64>("logits_grad"),
            1e-4,
            0.0,
            name,
        );
    }
}

#[test]
fn get_rnnt_prune_ranges_agrees_with_k2() {
    let all = of_kind("ranges");
    assert_eq!(all.len(), 9);
    for case in all {
        let d = case.dims();
        let (b, s, t1, t) = (d[0], d[1], d[2], d[3]);
        let px_grad = case.f3("px_grad", [b, s, t1]);
        let py_grad = case.f3("py_grad", [b, s + 1, t]);
        let boundary = case.boundary().unwrap();
        let s_range = case.get::<usize>("s_range")[0];
        let ranges =
            get_rnnt_prune_ranges(px_grad.view(), py_grad.view(), boundary.view(), s_range)
                .unwrap();
        let want = case.get::<i64>("ranges");
        assert_eq!(
            ranges.iter().copied().collect::<Vec<_>>(),
            want,
            "{}",
            case.name
        );
    }
}

#[test]
fn do_rnnt_pruning_agrees_with_k2() {
    for case in of_kind("pruning") {
        let d = case.dims();
        let (b, t, r, e, dd, s1) = (d[0], d[1], d[2], d[3], d[4], d[5]);
        let am = case.f3("am", [b, t, e]);
        let lm = case.f3("lm", [b, s1, dd]);
        let ranges = case.a3::<i64>("ranges", [b, t, r]);
        let (am_pruned, lm_pruned) = do_rnnt_pruning(am.view(), lm.view(), ranges.view()).unwrap();
        close(
            lm_pruned.iter(),
            &case.get::<f64>("lm_pruned"),
            0.0,
            1e-7,
            &case.name,
        );
        assert_eq!(am_pruned.dim(), (b, t, r, e));
        for ((bi, ti, _, ei), &v) in am_pruned.indexed_iter() {
            assert_eq!(v, am[[bi, ti, ei]]);
        }
    }
}

#[test]
fn rnnt_loss_pruned_agrees_with_k2() {
    let all = of_kind("pruned");
    assert_eq!(all.len(), 9);
    for case in all {
        let d = case.dims();
        let (b, t, r, c) = (d[0], d[1], d[2], d[3]);
        let logits = case.f4("logits", [b, t, r, c]);
        let symbols = case.symbols(b);
        let ranges = case.a3::<i64>("ranges", [b, t, r]);
        let term = case.get::<usize>("term")[0];
        let boundary = case.boundary();
        let bview = boundary.as_ref().map(|x| x.view());
        let config = case.config();
        let name = &case.name;
        let (px, py) = get_rnnt_logprobs_pruned(
            logits.view(),
            symbols.view(),
            ranges.view(),
            term,
            bview,
            config.rnnt_type,
        )
        .unwrap();
        close(
            px.iter(),
            &case.get::<f64>("px"),
            1e-5,
            1e-5,
            &format!("{name} px"),
        );
        close(
            py.iter(),
            &case.get::<f64>("py"),
            1e-5,
            1e-5,
            &format!("{name} py"),
        );
        let out = rnnt_loss_pruned(
            logits.view(),
            symbols.view(),
            ranges.view(),
            term,
            bview,
            &config,
        )
        .unwrap();
        close(
            out.loss.iter(),
            &case.get::<f64>("loss"),
            0.0,
            1e-5,
            &format!("{name} loss"),
        );
        close(
            out.logits_grad.as_ref().unwrap().iter(),
            &case.get::<f64>("logits_grad"),
            1e-4,
            0.0,
            &format!("{name} logits_grad"),
        );
    }
}
