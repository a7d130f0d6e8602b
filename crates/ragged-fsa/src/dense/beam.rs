//! The losses at a finite `output_beam`: the posteriors of k2's pruned lattice (the arcs
//! `intersect_dense` keeps), computed on the kept part of the trellis without building the
//! lattice as an FSA and without the log semiring's `exp`/`log` per arc.
//!
//! What is kept is what `intersect_dense` keeps: both walk one [`KeptTrellis`], so the arcs
//! are the lattice's. Each kept arc's score is its lattice score (graph score plus dense score,
//! summed in `f32`); forward and backward run in scaled probabilities (each frame's vector
//! divided by its largest entry, one `exp` per kept arc), and a segment whose scaled run
//! loses range returns `None`, for the caller to score the built lattice instead.

use crate::dense::ctc::{Posteriors, TINY};
use crate::dense::intersect_dense::KeptTrellis;
use crate::view::{ArcBudget, FsaView};

/// The dense-score columns (label + 1) a graph's arcs read, ascending, and per column its
/// index in that list (`u32::MAX` for a column no arc reads).
pub(crate) fn used_columns(graph: FsaView<'_>, num_cols: usize) -> (Vec<u32>, Vec<u32>) {
    let mut index = vec![u32::MAX; num_cols];
    for arc in graph.arcs {
        index[(arc.label + 1) as usize] = 0;
    }
    let mut cols = Vec::new();
    for (col, slot) in index.iter_mut().enumerate() {
        if *slot == 0 {
            *slot = cols.len() as u32;
            cols.push(col as u32);
        }
    }
    (cols, index)
}

/// The posteriors of one pair's pruned lattice (`output_beam` finite), or `None` when the
/// scaled run lost range. Each frame's kept arcs are taken from `budget` as they are
/// stored; past it nothing more is stored, the rest is only counted, and the whole count
/// is the error.
pub(crate) fn pruned_posteriors(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    output_beam: f32,
    budget: &ArcBudget,
) -> Result<Option<Posteriors>, usize> {
    let (cols, index) = used_columns(graph, num_cols);
    let num_states = graph.num_states();
    let rows = dense.len() / num_cols;
    let Some(kept) = KeptTrellis::new(graph, dense, num_cols, output_beam) else {
        return Ok(Some(Posteriors {
            tot: f64::NEG_INFINITY,
            cols,
            occ: Vec::new(),
        }));
    };
    let frame_ids = &kept.frame_ids;
    // the kept arcs, frame by frame: ends, column index, weight exp(score - frame's best);
    // each frame's count is taken from `budget` once visited, and past it nothing more is
    // stored: the rest is only counted, so that the error carries the whole count
    let mut src = Vec::new();
    let mut dest = Vec::new();
    let mut lab = Vec::new();
    let mut weight: Vec<f64> = Vec::new();
    let mut arc_splits = Vec::with_capacity(rows + 1);
    let mut shift = Vec::with_capacity(rows);
    arc_splits.push(0);
    // `count`: the kept arcs visited; `taken`: those taken from the budget; past the budget
    // (or once a frame has lost range) nothing more is stored
    let (mut count, mut taken) = (0usize, 0usize);
    let (mut within, mut lost) = (true, false);
    for t in 0..rows {
        if !within || lost {
            kept.for_each_arc(t, &mut |_, _, _, _, _| count += 1);
            continue;
        }
        let begin = weight.len();
        kept.for_each_arc(t, &mut |s, d, _, arc, score| {
            src.push(s);
            dest.push(d);
            lab.push(index[(arc.label + 1) as usize]);
            weight.push(score as f64);
        });
        let n = weight.len() - begin;
        count += n;
        taken += n;
        within = budget.take(n);
        let best = weight[begin..]
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        // a frame without a finite kept arc: the lattice has no path through it
        lost = !best.is_finite();
        if !within || lost {
            (src, dest, lab, weight) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            continue;
        }
        for w in &mut weight[begin..] {
            *w = (*w - best).exp();
        }
        shift.push(best);
        arc_splits.push(weight.len());
    }
    if taken < count {
        within &= budget.take(count - taken);
    }
    if !within {
        return Err(count);
    }
    if lost {
        return Ok(None);
    }
    let (Some(first), Some(last)) = (kept.state(0, 0), kept.state(rows, num_states - 1)) else {
        return Ok(None);
    };
    // forward
    let mut alpha = vec![0f64; kept.num_kept()];
    alpha[first as usize] = 1.0;
    let mut log_scale = 0f64;
    for t in 0..rows {
        let arcs = arc_splits[t]..arc_splits[t + 1];
        for i in arcs {
            let a = alpha[src[i] as usize];
            alpha[dest[i] as usize] += a * weight[i];
        }
        let next = &mut alpha[frame_ids[t + 1]..frame_ids[t + 2]];
        let m = next.iter().copied().fold(0f64, f64::max);
        if m == 0.0 || !m.is_finite() {
            return Ok(None);
        }
        let inv = 1.0 / m;
        for x in next.iter_mut() {
            *x *= inv;
            if *x < TINY {
                *x = 0.0;
            }
        }
        log_scale += m.ln() + shift[t];
    }
    let end = alpha[last as usize];
    if end == 0.0 {
        return Ok(None);
    }
    let tot = log_scale + end.ln();
    // backward, each frame's arc posteriors normalised to sum to one (every path takes one
    // arc per frame)
    let k = cols.len();
    let frames = rows - 1;
    let mut occ = vec![0f64; frames * k];
    let mut beta = vec![0f64; kept.num_kept()];
    beta[last as usize] = 1.0;
    let mut post = Vec::new();
    let mut log_scale_bwd = 0f64;
    for t in (0..rows).rev() {
        let arcs = arc_splits[t]..arc_splits[t + 1];
        post.clear();
        let mut sum = 0f64;
        for i in arcs.clone() {
            let p = weight[i] * beta[dest[i] as usize];
            let s = src[i] as usize;
            beta[s] += p;
            let q = alpha[s] * p;
            post.push(q);
            sum += q;
        }
        if t < frames && sum > 0.0 {
            let inv = 1.0 / sum;
            let row = &mut occ[t * k..(t + 1) * k];
            for (i, q) in arcs.zip(&post) {
                // at most 1, as on the trellis
                row[lab[i] as usize] += (q * inv).min(1.0);
            }
        }
        let cur = &mut beta[frame_ids[t]..frame_ids[t + 1]];
        let m = cur.iter().copied().fold(0f64, f64::max);
        if m > 0.0 {
            let inv = 1.0 / m;
            for x in cur.iter_mut() {
                *x *= inv;
                if *x < TINY {
                    *x = 0.0;
                }
            }
            log_scale_bwd += m.ln() + shift[t];
        }
    }
    // the backward total must agree with the forward one; when the flushing or the range of
    // f64 made them differ, the caller scores the built lattice
    let tot_bwd = log_scale_bwd + beta[first as usize].ln();
    if (tot - tot_bwd).abs() > 1e-9 * tot.abs().max(1.0) {
        return Ok(None);
    }
    Ok(Some(Posteriors { tot, cols, occ }))
}

#[cfg(test)]
mod tests {
    //! The scores on the kept trellis against the built lattice scored in the log semiring
    //! (`lattice_posteriors`, k2's way, which the golden tests check against k2).
    use super::*;
    use crate::dense::ctc::lattice_posteriors;
    use crate::dense::intersect_dense::prepare;
    use crate::{create_fsa_vec, Arc, DenseFsaVec, Fsa, FsaVec};
    use ndarray::Array3;

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
        fn unit(&mut self) -> f32 {
            self.below(1 << 24) as f32 / (1 << 24) as f32
        }
    }

    /// A graph on 2 to 9 states with arcs between any states (self-loops and cycles too),
    /// labels in `0..symbols`, and `-1` arcs into the last state.
    fn random_graph(rng: &mut Rng, symbols: u64) -> Fsa {
        let n = 2 + rng.below(8) as i32;
        let mut arcs = Vec::new();
        for src in 0..n - 1 {
            for _ in 0..1 + rng.below(4) {
                let dest = rng.below(n as u64 - 1) as i32;
                let label = rng.below(symbols) as i32;
                arcs.push(Arc::new(src, dest, label, rng.unit() * 4.0 - 2.0));
            }
            if rng.below(3) == 0 || src == n - 2 {
                arcs.push(Arc::new(src, n - 1, -1, rng.unit() - 0.5));
            }
        }
        arcs.sort_by_key(|a| a.src_state);
        Fsa::from_arcs(arcs, n as usize).unwrap()
    }

    fn compare(graphs: &FsaVec, dense: &DenseFsaVec, beam: f32) -> usize {
        let pairs = prepare(graphs, dense, None).unwrap();
        let reference =
            lattice_posteriors(graphs, dense, &pairs, beam, usize::MAX, ("t", "t")).unwrap();
        let budget = ArcBudget::new(usize::MAX);
        let mut scored = 0;
        for (&(a, b), want) in pairs.iter().zip(&reference) {
            let got = pruned_posteriors(
                graphs.view(a),
                dense.fsa_scores(b),
                dense.num_cols(),
                beam,
                &budget,
            )
            .unwrap();
            let Some(got) = got else { continue };
            scored += 1;
            assert_eq!(got.cols, want.cols);
            if want.tot == f64::NEG_INFINITY {
                assert_eq!(got.tot, f64::NEG_INFINITY, "pair {a} {b}");
                assert!(got.occ.is_empty());
                continue;
            }
            assert!(
                (got.tot - want.tot).abs() <= 1e-9 * want.tot.abs().max(1.0),
                "pair {a} {b} beam {beam}: {} against {}",
                got.tot,
                want.tot
            );
            assert_eq!(got.occ.len(), want.occ.len());
            for (i, (g, w)) in got.occ.iter().zip(&want.occ).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-9,
                    "pair {a} {b} occ {i}: {g} against {w}"
                );
            }
        }
        scored
    }

    #[test]
    fn the_kept_trellis_scores_as_the_built_lattice() {
        let mut rng = Rng(7);
        let (mut pairs, mut scored) = (0, 0);
        for case in 0..300 {
            let symbols = 2 + rng.below(5);
            let num_graphs = 1 + rng.below(3) as usize;
            let graphs: Vec<Fsa> = (0..num_graphs)
                .map(|_| random_graph(&mut rng, symbols))
                .collect();
            let frames = 1 + rng.below(12) as usize;
            let mut lp = Array3::<f32>::zeros((num_graphs, frames, symbols as usize));
            for x in lp.iter_mut() {
                // now and then a symbol that cannot be emitted
                *x = if rng.below(15) == 0 {
                    f32::NEG_INFINITY
                } else {
                    -4.0 * rng.unit()
                };
            }
            let segments: Vec<[i32; 3]> = (0..num_graphs)
                .map(|i| {
                    let start = rng.below(frames as u64) as i32;
                    let len = 1 + rng.below((frames as i32 - start) as u64) as i32;
                    [i as i32, start, len]
                })
                .collect();
            let dense = DenseFsaVec::new(lp.view(), &segments);
            let beam = [0.25f32, 1.0, 3.0, 10.0, 1e4][case % 5];
            pairs += num_graphs;
            scored += compare(&create_fsa_vec(&graphs), &dense, beam);
        }
        // the fallback is for lost range; these small cases keep theirs
        assert_eq!(scored, pairs);
    }

    #[test]
    fn ctc_graphs_over_long_segments() {
        let mut rng = Rng(11);
        let targets: Vec<Vec<i32>> = (0..4)
            .map(|_| {
                (0..3 + rng.below(20))
                    .map(|_| 1 + rng.below(30) as i32)
                    .collect()
            })
            .collect();
        let graphs = FsaVec::ctc_graph(&targets, false).unwrap();
        let frames = 120;
        let mut lp = Array3::<f32>::zeros((4, frames, 31));
        for x in lp.iter_mut() {
            *x = -8.0 * rng.unit();
        }
        let segments: Vec<[i32; 3]> = (0..4).map(|i| [i, 0, frames as i32 - 7 * i]).collect();
        let dense = DenseFsaVec::new(lp.view(), &segments);
        for beam in [2.0f32, 10.0, 30.0] {
            assert_eq!(compare(&graphs, &dense, beam), 4);
        }
    }

    #[test]
    fn a_lost_range_is_reported_and_the_loss_taken_from_the_lattice() {
        // after the first frame, state 1 (score 0) dwarfs state 2 (score -2000), which is
        // flushed to zero; but only state 2 reaches the end at a score that counts (state 1's
        // way out scores -3000). A beam of 1e7 keeps both.
        let arcs = vec![
            Arc::new(0, 1, 0, 0.0),
            Arc::new(0, 2, 0, -2000.0),
            Arc::new(1, 3, -1, -3000.0),
            Arc::new(2, 3, -1, 0.0),
        ];
        let graphs = create_fsa_vec(&[Fsa::from_arcs(arcs, 4).unwrap()]);
        let lp = Array3::<f32>::zeros((1, 1, 1));
        let dense = DenseFsaVec::new(lp.view(), &[[0, 0, 1]]);
        let budget = ArcBudget::new(usize::MAX);
        let view = graphs.view(0);
        let cols = dense.num_cols();
        let got = pruned_posteriors(view, dense.fsa_scores(0), cols, 1e7, &budget).unwrap();
        assert!(
            got.is_none(),
            "the scaled run should have lost the only path that counts"
        );
        // the loss falls back to the lattice in the log semiring: -log(e^-2000 + e^-3000)
        let loss = crate::ctc_loss(&graphs, &dense, 1e7).unwrap();
        assert!((loss.loss[0] - 2000.0).abs() < 1e-9, "{:?}", loss.loss);
        // and the gradient: the frame's symbol is taken with probability 1
        assert!((loss.grad[[0, 0, 0]] + 1.0).abs() < 1e-6, "{:?}", loss.grad);
    }
}
