//! The mutual-information recursion against brute force (every monotonic path of tiny
//! lattices) and finite differences in f64; the RNN-T losses on paths that do not exist and
//! on bad input.

use crate::common;

use common::Rng;
use ndarray::{Array2, Array3, Array4};
use ragged_fsa::rnnt::RNNT_PARALLEL_MIN_CELLS;
use ragged_fsa::{
    do_rnnt_pruning, get_rnnt_prune_ranges, mutual_information_recursion, rnnt_loss,
    rnnt_loss_pruned, rnnt_loss_simple, rnnt_loss_smoothed, Error, Reduction, RnntLossConfig,
    RnntType,
};

fn uniform(rng: &mut Rng) -> f64 {
    (rng.below(1 << 20) as f64 / (1 << 20) as f64) * 4.0 - 2.0
}

fn random3(rng: &mut Rng, d: (usize, usize, usize)) -> Array3<f64> {
    Array3::from_shape_fn(d, |_| uniform(rng))
}

/// One step of a path: (an x step?, s, t) where it leaves from.
type Step = (bool, usize, usize);

/// A path's score and its steps.
type Path = (f64, Vec<Step>);

/// Every path of one sequence from (s_begin, t_begin) to (s_end, t_end): log-sum-exp of the
/// path scores, and the occupation of each px and py entry (by the path probabilities).
fn brute_force(
    px: &Array2<f64>,
    py: &Array2<f64>,
    bound: [usize; 4],
    modified: bool,
) -> (f64, Array2<f64>, Array2<f64>) {
    let [s_begin, t_begin, s_end, t_end] = bound;
    let mut paths: Vec<Path> = Vec::new();
    fn walk(
        s: usize,
        t: usize,
        score: f64,
        steps: &mut Vec<Step>,
        ctx: &(&Array2<f64>, &Array2<f64>, usize, usize, bool),
        out: &mut Vec<Path>,
    ) {
        let (px, py, s_end, t_end, modified) = *ctx;
        if s == s_end && t == t_end {
            out.push((score, steps.clone()));
            return;
        }
        // an x step: (s, t) -> (s + 1, t), or (s + 1, t + 1) when modified
        if s < s_end && (!modified || t < t_end) {
            steps.push((true, s, t));
            let t2 = if modified { t + 1 } else { t };
            walk(s + 1, t2, score + px[[s, t]], steps, ctx, out);
            steps.pop();
        }
        if t < t_end {
            steps.push((false, s, t));
            walk(s, t + 1, score + py[[s, t]], steps, ctx, out);
            steps.pop();
        }
    }
    let ctx = (px, py, s_end, t_end, modified);
    walk(s_begin, t_begin, 0.0, &mut Vec::new(), &ctx, &mut paths);
    let max = paths.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let mut gx = Array2::zeros(px.dim());
    let mut gy = Array2::zeros(py.dim());
    if max == f64::NEG_INFINITY {
        return (f64::NEG_INFINITY, gx, gy);
    }
    let total = max + paths.iter().map(|p| (p.0 - max).exp()).sum::<f64>().ln();
    for (score, steps) in &paths {
        let w = (score - total).exp();
        for &(is_x, s, t) in steps {
            if is_x {
                gx[[s, t]] += w;
            } else {
                gy[[s, t]] += w;
            }
        }
    }
    (total, gx, gy)
}

#[track_caller]
fn assert_close(got: f64, want: f64, tol: f64, what: &str) {
    if want.is_infinite() {
        assert_eq!(got, want, "{what}");
    } else {
        assert!((got - want).abs() <= tol, "{what}: {got} vs {want}");
    }
}

#[test]
fn recursion_equals_brute_force_on_tiny_lattices() {
    let mut rng = Rng(0x5eed);
    let mut checked = 0;
    for s_count in 0..=3usize {
        for t_count in 0..=4usize {
            for modified in [false, true] {
                let b_count = 3;
                let t1 = if modified { t_count } else { t_count + 1 };
                let mut px = random3(&mut rng, (b_count, s_count, t1));
                let py = random3(&mut rng, (b_count, s_count + 1, t_count));
                if s_count > 0 && t1 > 1 {
                    px[[1, 0, 1]] = f64::NEG_INFINITY; // a forbidden transition
                }
                // rows: the default box, a shifted one, and a random one
                let mut rows = vec![[0, 0, s_count, t_count]];
                rows.push([s_count.min(1), 0, s_count, t_count]);
                let s_end = rng.below(s_count as u64 + 1) as usize;
                let t_end = rng.below(t_count as u64 + 1) as usize;
                let s_begin = rng.below(s_end as u64 + 1) as usize;
                let t_begin = rng.below(t_end as u64 + 1) as usize;
                rows.push([s_begin, t_begin, s_end, t_end]);
                let boundary = Array2::from_shape_fn((b_count, 4), |(b, j)| rows[b][j] as i64);
                for with_boundary in [false, true] {
                    let bview = with_boundary.then(|| boundary.view());
                    let out =
                        mutual_information_recursion(px.view(), py.view(), bview, true).unwrap();
                    let gx = out.px_grad.unwrap();
                    let gy = out.py_grad.unwrap();
                    for (b, row) in rows.iter().enumerate() {
                        let bound = if with_boundary {
                            *row
                        } else {
                            [0, 0, s_count, t_count]
                        };
                        let (total, want_x, want_y) = brute_force(
                            &px.index_axis(ndarray::Axis(0), b).to_owned(),
                            &py.index_axis(ndarray::Axis(0), b).to_owned(),
                            bound,
                            modified,
                        );
                        let what =
                            format!("S={s_count} T={t_count} modified={modified} b={b} {bound:?}");
                        assert_close(out.scores[b], total, 1e-10, &what);
                        for (g, w) in gx.index_axis(ndarray::Axis(0), b).iter().zip(&want_x) {
                            assert_close(*g, *w, 1e-10, &format!("{what} px_grad"));
                        }
                        for (g, w) in gy.index_axis(ndarray::Axis(0), b).iter().zip(&want_y) {
                            assert_close(*g, *w, 1e-10, &format!("{what} py_grad"));
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 4 * 5 * 2 * 2 * 3);
}

#[test]
fn recursion_gradient_equals_finite_differences() {
    let mut rng = Rng(77);
    for modified in [false, true] {
        let (b_count, s_count, t_count) = (2, 3, 4);
        let t1 = if modified { t_count } else { t_count + 1 };
        let px = random3(&mut rng, (b_count, s_count, t1));
        let py = random3(&mut rng, (b_count, s_count + 1, t_count));
        let boundary = Array2::from_shape_vec((2, 4), vec![0, 0, 3, 4, 1, 1, 3, 4]).unwrap();
        let f = |px: &Array3<f64>, py: &Array3<f64>| {
            mutual_information_recursion(px.view(), py.view(), Some(boundary.view()), false)
                .unwrap()
                .scores
                .sum()
        };
        let out = mutual_information_recursion(px.view(), py.view(), Some(boundary.view()), true)
            .unwrap();
        let h = 1e-6;
        for (idx, &g) in out.px_grad.unwrap().indexed_iter() {
            let (mut plus, mut minus) = (px.clone(), px.clone());
            plus[idx] += h;
            minus[idx] -= h;
            let numeric = (f(&plus, &py) - f(&minus, &py)) / (2.0 * h);
            assert_close(g, numeric, 1e-7, &format!("px_grad{idx:?}"));
        }
        for (idx, &g) in out.py_grad.unwrap().indexed_iter() {
            let (mut plus, mut minus) = (py.clone(), py.clone());
            plus[idx] += h;
            minus[idx] -= h;
            let numeric = (f(&px, &plus) - f(&px, &minus)) / (2.0 * h);
            assert_close(g, numeric, 1e-7, &format!("py_grad{idx:?}"));
        }
    }
}

#[test]
fn recursion_parallel_and_sequential_paths_agree() {
    // a batch above the parallel threshold, and each sequence alone (below it)
    let mut rng = Rng(3);
    let (b_count, s_count, t_count) = (8, 20, 120);
    assert!(b_count * (s_count + 1) * (t_count + 1) >= RNNT_PARALLEL_MIN_CELLS);
    assert!((s_count + 1) * (t_count + 1) < RNNT_PARALLEL_MIN_CELLS);
    let px = random3(&mut rng, (b_count, s_count, t_count + 1)).mapv(|x| x as f32);
    let py = random3(&mut rng, (b_count, s_count + 1, t_count)).mapv(|x| x as f32);
    let all = mutual_information_recursion(px.view(), py.view(), None, true).unwrap();
    for b in 0..b_count {
        let one = mutual_information_recursion(
            px.slice(ndarray::s![b..b + 1, .., ..]),
            py.slice(ndarray::s![b..b + 1, .., ..]),
            None,
            true,
        )
        .unwrap();
        assert_eq!(one.scores[0].to_bits(), all.scores[b].to_bits());
        let gx = all.px_grad.as_ref().unwrap();
        assert_eq!(
            one.px_grad.unwrap().index_axis(ndarray::Axis(0), 0),
            gx.index_axis(ndarray::Axis(0), b)
        );
    }
}

#[test]
fn no_path_gives_minus_inf_and_zero_gradient() {
    // modified: 3 symbols cannot fit in 2 frames
    let px = Array3::<f32>::zeros((1, 3, 5));
    let py = Array3::<f32>::zeros((1, 4, 5));
    let boundary = Array2::from_shape_vec((1, 4), vec![0, 0, 3, 2]).unwrap();
    let out =
        mutual_information_recursion(px.view(), py.view(), Some(boundary.view()), true).unwrap();
    assert_eq!(out.scores[0], f32::NEG_INFINITY);
    assert!(out.px_grad.unwrap().iter().all(|&g| g == 0.0));
    assert!(out.py_grad.unwrap().iter().all(|&g| g == 0.0));

    // the losses: +inf, and zero gradients (never NaN)
    let (b, s, t, c) = (1, 3, 5, 4);
    let lm = Array3::<f32>::from_shape_fn((b, s + 1, c), |(_, i, j)| (i * 7 + j) as f32 * 0.1);
    let am = Array3::<f32>::from_shape_fn((b, t, c), |(_, i, j)| (i * 3 + j) as f32 * 0.2);
    let symbols = Array2::<i64>::from_elem((b, s), 1);
    let config = RnntLossConfig {
        rnnt_type: RnntType::Modified,
        reduction: Reduction::None,
        return_grad: true,
        ..RnntLossConfig::default()
    };
    for smoothed in [false, true] {
        let out = if smoothed {
            rnnt_loss_smoothed(
                lm.view(),
                am.view(),
                symbols.view(),
                0,
                Some(boundary.view()),
                &config,
            )
        } else {
            rnnt_loss_simple(
                lm.view(),
                am.view(),
                symbols.view(),
                0,
                Some(boundary.view()),
                &config,
            )
        }
        .unwrap();
        assert_eq!(out.loss[0], f32::INFINITY);
        for g in [&out.lm_grad, &out.am_grad, &out.px_grad, &out.py_grad] {
            assert!(g.as_ref().unwrap().iter().all(|&x| x == 0.0));
        }
    }
    let logits = Array4::<f32>::from_shape_fn((b, t, s + 1, c), |(_, i, j, k)| {
        ((i + 2 * j + 3 * k) % 5) as f32 * 0.3
    });
    let out = rnnt_loss(
        logits.view(),
        symbols.view(),
        0,
        Some(boundary.view()),
        &config,
    )
    .unwrap();
    assert_eq!(out.loss[0], f32::INFINITY);
    assert!(out.logits_grad.unwrap().iter().all(|&x| x == 0.0));
}

fn expect_err<T: std::fmt::Debug>(r: Result<T, Error>, needle: &str) {
    let err = r.expect_err("bad input must be an error");
    let text = err.to_string();
    assert!(text.contains(needle), "{text:?} should mention {needle:?}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let (b, s, t, c) = (2, 3, 4, 5);
    let lm = Array3::<f32>::zeros((b, s + 1, c));
    let am = Array3::<f32>::zeros((b, t, c));
    let symbols = Array2::<i64>::from_elem((b, s), 2);
    let config = RnntLossConfig::default();
    let px = Array3::<f32>::zeros((b, s, t + 1));
    let py = Array3::<f32>::zeros((b, s + 1, t));

    // boundary outside the shapes: s_end > S (row 1, column 2 -> position 6)
    let boundary = Array2::from_shape_vec((2, 4), vec![0, 0, 3, 4, 0, 0, 4, 4]).unwrap();
    expect_err(
        mutual_information_recursion(px.view(), py.view(), Some(boundary.view()), false),
        "boundary (rows [s_begin, t_begin, s_end, t_end], row-major)[6] = 4 is outside 0..4",
    );
    // t_begin > t_end
    let boundary = Array2::from_shape_vec((2, 4), vec![0, 3, 3, 2, 0, 0, 3, 4]).unwrap();
    expect_err(
        rnnt_loss_simple(
            lm.view(),
            am.view(),
            symbols.view(),
            0,
            Some(boundary.view()),
            &config,
        ),
        "[1] = 3 is outside 0..3",
    );
    // a boundary of the wrong shape
    let boundary = Array2::<i64>::zeros((3, 4));
    expect_err(
        mutual_information_recursion(px.view(), py.view(), Some(boundary.view()), false),
        "3 rows of boundary (B) where 2 are needed",
    );
    // S > T
    let long = Array2::<i64>::from_elem((b, 5), 1);
    let lm_long = Array3::<f32>::zeros((b, 6, c));
    let modified = RnntLossConfig {
        rnnt_type: RnntType::Modified,
        ..RnntLossConfig::default()
    };
    expect_err(
        rnnt_loss_simple(lm_long.view(), am.view(), long.view(), 0, None, &modified),
        "S (symbols per sequence) = 5 is out of range: at most T",
    );
    // NaN and infinities
    let mut bad = lm.clone();
    bad[[1, 2, 3]] = f32::NAN;
    expect_err(
        rnnt_loss_simple(bad.view(), am.view(), symbols.view(), 0, None, &config),
        "lm = NaN",
    );
    let mut bad = am.clone();
    bad[[0, 1, 1]] = f32::INFINITY;
    expect_err(
        rnnt_loss_smoothed(lm.view(), bad.view(), symbols.view(), 0, None, &config),
        "am = inf",
    );
    let mut bad = py.clone();
    bad[[0, 0, 0]] = f32::INFINITY;
    expect_err(
        mutual_information_recursion(px.view(), bad.view(), None, false),
        "py = inf",
    );
    let logits = Array4::<f32>::from_elem((b, t, s + 1, c), f32::NEG_INFINITY);
    expect_err(
        rnnt_loss(logits.view(), symbols.view(), 0, None, &config),
        "logits = -inf",
    );
    // symbols and termination symbol outside 0..C
    let mut bad_symbols = symbols.clone();
    bad_symbols[[1, 0]] = 5;
    expect_err(
        rnnt_loss_simple(lm.view(), am.view(), bad_symbols.view(), 0, None, &config),
        "symbols (row-major [B][S])[3] = 5 is outside 0..5",
    );
    expect_err(
        rnnt_loss_simple(lm.view(), am.view(), symbols.view(), 5, None, &config),
        "termination_symbol = 5",
    );
    // shapes that do not match
    let py_bad = Array3::<f32>::zeros((b, s, t));
    expect_err(
        mutual_information_recursion(px.view(), py_bad.view(), None, false),
        "3 rows of py (S + 1, S rows of px) where 4 are needed",
    );
    let px_bad = Array3::<f32>::zeros((b, s, t + 2));
    expect_err(
        mutual_information_recursion(px_bad.view(), py.view(), None, false),
        "6 columns of px",
    );
    expect_err(
        rnnt_loss_simple(
            lm.view(),
            am.view(),
            symbols.view(),
            0,
            None,
            &RnntLossConfig {
                delay_penalty: f32::NAN,
                ..RnntLossConfig::default()
            },
        ),
        "delay_penalty = NaN",
    );
}

#[test]
fn bad_ranges_are_clear_errors() {
    let (b, s, t, c, r) = (1, 3, 4, 5, 2);
    let symbols = Array2::<i64>::from_elem((b, s), 2);
    let logits = Array4::<f32>::zeros((b, t, r, c));
    let config = RnntLossConfig::default();
    let ranges =
        |starts: [i64; 4]| Array3::from_shape_fn((b, t, r), |(_, ti, ri)| starts[ti] + ri as i64);
    // not monotonic: frame 2 starts before frame 1
    let bad = ranges([0, 2, 1, 2]);
    expect_err(
        rnnt_loss_pruned(logits.view(), symbols.view(), bad.view(), 0, None, &config),
        "ranges (row-major [B][T][s_range]; rows must be consecutive positions whose starts never decrease)[4] = 1",
    );
    // past the last window (S + 1 - s_range = 2)
    let bad = ranges([0, 1, 2, 3]);
    expect_err(
        rnnt_loss_pruned(logits.view(), symbols.view(), bad.view(), 0, None, &config),
        "[6] = 3 is outside 0..3",
    );
    // a row that is not consecutive
    let mut bad = ranges([0, 0, 1, 1]);
    bad[[0, 2, 1]] = 3;
    let am = Array3::<f32>::zeros((b, t, 2));
    let lm = Array3::<f32>::zeros((b, s + 1, 2));
    expect_err(do_rnnt_pruning(am.view(), lm.view(), bad.view()), "[5] = 3");
    // s_range too small for the regular RNN-T
    let px_grad = Array3::<f32>::zeros((b, s, t + 1));
    let py_grad = Array3::<f32>::zeros((b, s + 1, t));
    let boundary = Array2::from_shape_vec((1, 4), vec![0, 0, 3, 4]).unwrap();
    expect_err(
        get_rnnt_prune_ranges(px_grad.view(), py_grad.view(), boundary.view(), 1),
        "s_range = 1 is out of range: at least 2",
    );
}

#[test]
fn strided_views_give_the_same_answers_as_contiguous_ones() {
    // logits whose class axis is not the last in memory (rows not contiguous), and an `am`
    // that is not in standard layout (do_rnnt_pruning then copies instead of broadcasting)
    let (b, t, s, c) = (2, 5, 3, 4);
    let mut rng = Rng(91);
    let stored = Array4::from_shape_fn((b, t, c, s + 1), |_| uniform(&mut rng) as f32);
    let strided = stored.view().permuted_axes([0, 1, 3, 2]);
    assert!(strided.as_slice().is_none());
    let contiguous = strided.as_standard_layout().into_owned();
    let symbols = Array2::from_shape_vec((b, s), vec![1i64, 2, 3, 3, 2, 1]).unwrap();
    let config = RnntLossConfig {
        reduction: Reduction::None,
        ..RnntLossConfig::default()
    };
    let a = rnnt_loss(strided, symbols.view(), 0, None, &config).unwrap();
    let want = rnnt_loss(contiguous.view(), symbols.view(), 0, None, &config).unwrap();
    assert_eq!(a, want);

    let am_stored = Array3::from_shape_fn((b, 2 * t, 3), |_| uniform(&mut rng) as f32);
    let am = am_stored.slice(ndarray::s![.., ..;2, ..]);
    let lm = Array3::from_shape_fn((b, s + 1, 2), |_| uniform(&mut rng) as f32);
    let ranges = Array3::from_shape_fn((b, t, 2), |(_, ti, ri)| (ti / 2 + ri) as i64);
    let (am_pruned, lm_pruned) = do_rnnt_pruning(am, lm.view(), ranges.view()).unwrap();
    for ((bi, ti, ri, e), &v) in am_pruned.indexed_iter() {
        assert_eq!(v, am[[bi, ti, e]], "am_pruned[{bi}, {ti}, {ri}, {e}]");
    }
    for ((bi, ti, ri, d), &v) in lm_pruned.indexed_iter() {
        assert_eq!(v, lm[[bi, ranges[[bi, ti, ri]] as usize, d]]);
    }
}
