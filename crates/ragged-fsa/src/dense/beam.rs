//! The losses at a finite `output_beam`: the posteriors of k2's pruned lattice (the arcs
//! `intersect_dense` keeps), computed on the kept part of the trellis without building the
//! lattice as an FSA and without the log semiring's `exp`/`log` per arc.
//!
//! What is kept is what `intersect_dense` keeps: both apply the rule of
//! [`KeptTrellis`](crate::dense::intersect_dense::KeptTrellis) to the same Viterbi scores,
//! so the arcs are the lattice's. Each kept arc's score is its lattice score (graph score
//! plus dense score, summed in `f32`); forward and backward run in scaled
//! probabilities (each frame's vector divided by its largest entry) over each frame's band
//! of kept states, with one `exp` per kept arc, or per kept destination state when all arcs
//! into a state share label and score (CTC graphs). For such a graph whose arcs advance by 0
//! to 2 states (CTC graphs again) the sweeps go destination by destination over each
//! frame's band, the three arcs into a state side by side and selected by bit masks, not
//! branches (see [`banded_sweeps`]); otherwise the forward sweep records the kept arcs for
//! the backward one (uniform entries) or each sweep tests the rule again. A segment whose
//! scaled run loses range returns `None`, for the caller to score the built lattice instead.

use crate::arc::Arc;
use crate::dense::banded::Banded;
use crate::dense::ctc::{Posteriors, TINY};
use crate::dense::dense_fsa::DenseFsaVecOf;
use crate::dense::intersect_dense::{viterbi_reusing, Viterbi};
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

/// Per graph state, the column and score of the arcs into it when all arcs into each state
/// share them (CTC graphs, HMM topologies): an arc's score on a frame is then its
/// destination's, so its weight is taken once per (frame, destination) instead of per arc.
/// `None` when some state is entered by arcs of two columns or two scores.
fn uniform_entry(graph: FsaView<'_>) -> Option<Vec<(u32, f32)>> {
    let mut entry = vec![(u32::MAX, 0f32); graph.num_states()];
    for arc in graph.arcs {
        let slot = &mut entry[arc.dest_state as usize];
        let col = (arc.label + 1) as u32;
        if slot.0 == u32::MAX {
            *slot = (col, arc.score);
        } else if slot.0 != col || slot.1.to_bits() != arc.score.to_bits() {
            return None;
        }
    }
    Some(entry)
}

/// Divides `values` by their largest entry and flushes what falls below [`TINY`] to zero;
/// returns that largest entry (0 when all are 0).
fn rescale(values: &mut [f64]) -> f64 {
    let m = values.iter().copied().fold(0f64, f64::max);
    scale_by(values, m)
}

/// [`rescale`] with the largest entry `m` known; returns it.
fn scale_by(values: &mut [f64], m: f64) -> f64 {
    if m > 0.0 && m.is_finite() {
        let inv = 1.0 / m;
        for x in values.iter_mut() {
            *x *= inv;
            if *x < TINY {
                *x = 0.0;
            }
        }
    }
    m
}

/// The kept part of one trellis as the probability sweeps visit it: the Viterbi scores,
/// the cutoff and each frame's band of kept states.
struct Kept<'a> {
    graph: FsaView<'a>,
    dense: &'a [f32],
    num_cols: usize,
    fwd: &'a [f32],
    bwd: &'a [f32],
    cutoff: f32,
    band: &'a [(usize, usize)],
}

impl Kept<'_> {
    /// Calls `f` on the kept arcs leaving frame `t`'s kept states, in order (source, then
    /// the graph's arc order): source and destination graph states, the arc and its score
    /// on the frame (graph score plus dense score, in `f32`).
    #[inline]
    fn visit<F: FnMut(usize, usize, &Arc, f32)>(&self, t: usize, mut f: F) {
        let num_states = self.graph.num_states();
        let row = &self.dense[t * self.num_cols..(t + 1) * self.num_cols];
        let (lo, hi) = self.band[t];
        let (here, next) = (t * num_states, (t + 1) * num_states);
        let kept = |x: f32| x > self.cutoff;
        for s in lo..hi {
            let f_score = self.fwd[here + s];
            if !kept(f_score + self.bwd[here + s]) {
                continue;
            }
            for arc in self.graph.state_arcs(s) {
                let d = next + arc.dest_state as usize;
                let b = self.bwd[d];
                if !kept(self.fwd[d] + b) {
                    continue;
                }
                let score = arc.score + row[(arc.label + 1) as usize];
                if kept(f_score + score + b) {
                    f(s, arc.dest_state as usize, arc, score);
                }
            }
        }
    }
}

/// Per-thread buffers of [`pruned_posteriors`], kept from one segment to the next so that a
/// batch allocates them once per thread, not once per segment. Only what a segment writes
/// is read back, so nothing is cleared between segments but the few per-state flags.
#[derive(Default)]
struct Scratch {
    compact: Vec<f32>,
    arcs: Vec<Arc>,
    band: Vec<(usize, usize)>,
    alpha: Vec<f64>,
    entry_weight: Vec<f64>,
    entry_score: Vec<f32>,
    col_weight: Vec<f64>,
    col_stamp: Vec<usize>,
    keep_next: Vec<bool>,
    kept_arcs: Vec<(u32, u32)>,
    weights: Vec<f64>,
    arc_splits: Vec<usize>,
    shift: Vec<f64>,
    beta_next: Vec<f64>,
    beta_cur: Vec<f64>,
    post: Vec<(f64, u32)>,
    source_score: Vec<f32>,
    masks: Vec<u8>,
    /// The last segment's Viterbi scores, whose buffers the next segment's reuse.
    vit: Option<Viterbi>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// The posteriors of one pair's pruned lattice (`output_beam` finite), or `None` when the
/// scaled run lost range. Each frame's kept arcs are taken from `budget` as they are
/// visited; past it nothing more is computed, the rest is only counted, and the whole count
/// is the error.
///
/// What is kept is the rule of [`KeptTrellis`](crate::dense::intersect_dense::KeptTrellis):
/// a state when `fwd + bwd > cutoff`, an arc when both ends are kept and
/// `fwd[src] + score + bwd[dest] > cutoff` (all in `f32`, as k2 and `intersect_dense`).
/// Each frame's kept states lie within a band (the first to the last kept graph state), and
/// the probability sweeps visit that band only. For a graph with uniform entries (CTC
/// graphs) the forward sweep tests the rule once per arc and records the kept arcs, which
/// the backward sweep replays; otherwise each sweep tests it again.
pub(crate) fn pruned_posteriors(
    graph: FsaView<'_>,
    dense: &DenseFsaVecOf<'_>,
    fsa: usize,
    output_beam: f32,
    budget: &ArcBudget,
) -> Result<Option<Posteriors>, usize> {
    let mut scratch = SCRATCH.with(|s| s.take());
    let result = pruned_posteriors_in(graph, dense, fsa, output_beam, budget, &mut scratch);
    SCRATCH.with(|s| s.replace(scratch));
    result
}

/// [`pruned_posteriors`] with its buffers.
fn pruned_posteriors_in(
    graph: FsaView<'_>,
    dense: &DenseFsaVecOf<'_>,
    fsa: usize,
    output_beam: f32,
    budget: &ArcBudget,
    scratch: &mut Scratch,
) -> Result<Option<Posteriors>, usize> {
    let Scratch {
        compact,
        arcs,
        band,
        alpha,
        entry_weight,
        entry_score,
        col_weight,
        col_stamp,
        keep_next,
        kept_arcs,
        weights,
        arc_splits,
        shift,
        beta_next,
        beta_cur,
        post,
        source_score,
        masks,
        vit: last_vit,
    } = scratch;
    let (cols, index) = used_columns(graph, dense.num_cols());
    let num_states = graph.num_states();
    let rows = dense.duration(fsa) + 1;
    // the columns the graph reads, gathered once per segment, and the graph relabelled to
    // read them (label + 1 the gathered column): every pass then reads a frame's few
    // scores side by side instead of scattered over a long row (over a large vocabulary,
    // a cache miss each); the scores, and so every sum, are the same
    let k = cols.len();
    dense.gather_columns(fsa, &cols, compact);
    arcs.clear();
    arcs.extend(graph.arcs.iter().map(|a| Arc {
        label: index[(a.label + 1) as usize] as i32 - 1,
        ..*a
    }));
    let graph = FsaView::new(graph.splits, arcs);
    let (dense, num_cols) = (&compact[..], k);
    // (a graph without arcs has no path: every frame takes an arc)
    let (f0, b0) = match last_vit.take() {
        Some(v) => (v.fwd, v.bwd),
        None => (Vec::new(), Vec::new()),
    };
    let vit = (k > 0).then(|| viterbi_reusing(graph, dense, num_cols, output_beam, true, f0, b0));
    let Some(vit) = vit.filter(|v| num_states > 0 && v.tot > f32::NEG_INFINITY) else {
        return Ok(Some(Posteriors {
            tot: f64::NEG_INFINITY,
            cols,
            occ: Vec::new(),
        }));
    };
    let vit: &Viterbi = last_vit.insert(vit);
    let (fwd, bwd, cutoff) = (&vit.fwd[..], &vit.bwd[..], vit.cutoff);
    let kept = |slot: usize| fwd[slot] + bwd[slot] > cutoff;
    // each frame's band of kept graph states, `band[t].0..band[t].1` (empty: none kept)
    band.clear();
    // (searched within the rows' bands of the widened beam, which hold every kept state)
    band.extend((0..=rows).map(|t| {
        let base = t * num_states;
        let (wlo, whi) = match &vit.within {
            None => (0, num_states),
            Some(within) => within.get(t).copied().unwrap_or((0, 0)),
        };
        match (wlo..whi).find(|&s| kept(base + s)) {
            None => (0, 0),
            Some(lo) => {
                let hi = (lo..whi).rev().find(|&s| kept(base + s));
                (lo, hi.unwrap_or(lo) + 1)
            }
        }
    }));
    let band = &band[..];
    let trellis = Kept {
        graph,
        dense,
        num_cols,
        fwd,
        bwd,
        cutoff,
        band,
    };
    let entry = uniform_entry(graph);
    // when all states entered by one column share their score too (CTC graphs: score 0),
    // a frame's weights are taken once per column
    let by_column = entry.as_ref().is_some_and(|entry| {
        let mut score = vec![None; k];
        entry.iter().all(|&(col, s)| {
            col == u32::MAX || *score[col as usize].get_or_insert(s.to_bits()) == s.to_bits()
        })
    });
    if entry.is_some() {
        col_weight.clear();
        col_weight.resize(k, 0.0);
        col_stamp.clear();
        col_stamp.resize(k, 0);
    }
    let mut column_weights = ColumnWeights {
        by_column,
        weight: col_weight,
        stamp: col_stamp,
    };
    if let (Some(entry), Some(banded)) = (&entry, Banded::without_parallel_arcs(graph)) {
        let bufs = BandedBuffers {
            alpha,
            weight: entry_weight,
            score: entry_score,
            source: source_score,
            masks,
            shift,
            beta_next,
            beta_cur,
        };
        return banded_sweeps(&trellis, entry, &banded, column_weights, budget, bufs, cols);
    }
    // scaled forward probabilities, (rows + 1) x states; only the bands are written (each
    // zeroed before it is summed into) and read
    alpha.resize(alpha.len().max((rows + 1) * num_states), 0.0);
    alpha[0] = 1.0;
    // the kept arcs' weights exp(score - shift[t]): per (frame, destination) for a graph
    // with uniform entries (then the kept arcs themselves are recorded in `kept_arcs`),
    // else per kept arc in visiting order; `arc_splits` by frame either way
    if entry.is_some() {
        entry_weight.resize(entry_weight.len().max(rows * num_states), 0.0);
        entry_score.resize(entry_score.len().max(num_states), 0.0);
        keep_next.clear();
        keep_next.resize(num_states, false);
    }
    kept_arcs.clear();
    weights.clear();
    arc_splits.clear();
    arc_splits.push(0);
    shift.clear();
    let mut log_scale = 0f64;
    // `count`: the kept arcs visited; `taken`: those taken from the budget; past the budget
    // (or once a frame has lost range) nothing more is computed
    let (mut count, mut taken) = (0usize, 0usize);
    let (mut within, mut lost) = (true, false);
    for t in 0..rows {
        if !within || lost {
            trellis.visit(t, |_, _, _, _| count += 1);
            continue;
        }
        let (cur, next) = alpha[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
        let (lo, hi) = band[t + 1];
        next[lo..hi].iter_mut().for_each(|x| *x = 0.0);
        let (n, best) = if let Some(entry) = &entry {
            // one weight per kept destination, the shift their largest score
            let row = &dense[t * num_cols..(t + 1) * num_cols];
            let ew = &mut entry_weight[t * num_states..(t + 1) * num_states];
            let next_base = (t + 1) * num_states;
            let mut best = f32::NEG_INFINITY;
            for d in lo..hi {
                let (col, score) = entry[d];
                let keep = col != u32::MAX && kept(next_base + d);
                keep_next[d] = keep;
                if keep {
                    let c = score + row[col as usize];
                    entry_score[d] = c;
                    best = best.max(c);
                }
            }
            let best = best as f64;
            for d in lo..hi {
                ew[d] = if !keep_next[d] {
                    0.0
                } else {
                    column_weights.get(t, entry[d].0 as usize, entry_score[d], best)
                };
            }
            // the rule of `Kept::visit`, in its order and with its sums: the source kept,
            // the destination kept, `fwd[src] + score + bwd[dest]` (the arc's score that of
            // its destination's entry, the same bits)
            let here = t * num_states;
            let b_next = &bwd[next_base..next_base + num_states];
            // (without branches on the rule: each arc is written at the end of the list,
            // which grows past it only when kept; outside the destination band `keep_next`
            // is false, and what else is read there is not used)
            let start = kept_arcs.len();
            let (slo, shi) = band[t];
            let most: usize = (slo..shi).map(|s| graph.arc_range(s).len()).sum();
            kept_arcs.resize(start + most, (0, 0));
            let mut end = start;
            for s in slo..shi {
                let f_score = fwd[here + s];
                if !kept(here + s) {
                    continue;
                }
                let a = cur[s];
                for arc in graph.state_arcs(s) {
                    let d = arc.dest_state as usize;
                    let keep = keep_next[d] & (f_score + entry_score[d] + b_next[d] > cutoff);
                    kept_arcs[end] = (s as u32, d as u32);
                    end += keep as usize;
                    let add = a * ew[d];
                    next[d] += if keep { add } else { 0.0 };
                }
            }
            kept_arcs.truncate(end);
            keep_next[lo..hi].iter_mut().for_each(|x| *x = false);
            arc_splits.push(end);
            (end - start, best)
        } else {
            let (mut n, mut best) = (0usize, f32::NEG_INFINITY);
            trellis.visit(t, |_, _, _, score| {
                n += 1;
                best = best.max(score);
            });
            let best = best as f64;
            if n > 0 {
                trellis.visit(t, |s, d, _, score| {
                    let w = (score as f64 - best).exp();
                    weights.push(w);
                    next[d] += cur[s] * w;
                });
            }
            arc_splits.push(weights.len());
            (n, best)
        };
        count += n;
        taken += n;
        within = budget.take(n);
        // a frame without a kept arc: the lattice has no path through it
        lost = n == 0;
        if !within || lost {
            continue;
        }
        shift.push(best);
        let m = rescale(&mut next[lo..hi]);
        if m == 0.0 || !m.is_finite() {
            // no path, or only paths the flushing dropped: the lattice decides
            lost = true;
            continue;
        }
        log_scale += m.ln() + best;
    }
    if taken < count {
        within &= budget.take(count - taken);
    }
    if !within {
        return Err(count);
    }
    let last = rows * num_states + num_states - 1;
    if lost || !kept(0) || !kept(last) {
        return Ok(None);
    }
    let end = alpha[last];
    if end == 0.0 {
        return Ok(None);
    }
    let tot = log_scale + end.ln();
    // backward, each frame's arc posteriors normalised to sum to one (every path takes one
    // arc per frame)
    let frames = rows - 1;
    let mut occ = vec![0f64; frames * k];
    start_backward(beta_next, beta_cur, num_states, num_states - 1);
    let mut log_scale_bwd = 0f64;
    for t in (0..rows).rev() {
        let mut sum = 0f64;
        let a_t = &alpha[t * num_states..(t + 1) * num_states];
        let (lo, hi) = band[t];
        beta_cur[lo..hi].iter_mut().for_each(|x| *x = 0.0);
        if let Some(entry) = &entry {
            // the frame's recorded arcs; each label's posteriors summed, then normalised
            let ew = &entry_weight[t * num_states..(t + 1) * num_states];
            let arcs = &kept_arcs[arc_splits[t]..arc_splits[t + 1]];
            if t < frames {
                let row = &mut occ[t * k..(t + 1) * k];
                for &(s, d) in arcs {
                    let (s, d) = (s as usize, d as usize);
                    let p = ew[d] * beta_next[d];
                    beta_cur[s] += p;
                    let q = a_t[s] * p;
                    row[entry[d].0 as usize] += q;
                    sum += q;
                }
                normalise(row, sum);
            } else {
                for &(s, d) in arcs {
                    let (s, d) = (s as usize, d as usize);
                    beta_cur[s] += ew[d] * beta_next[d];
                }
            }
        } else {
            post.clear();
            let mut i = arc_splits[t];
            trellis.visit(t, |s, d, arc, _| {
                i += 1;
                let p = weights[i - 1] * beta_next[d];
                beta_cur[s] += p;
                let q = a_t[s] * p;
                post.push((q, (arc.label + 1) as u32));
                sum += q;
            });
            if t < frames && sum > 0.0 {
                let inv = 1.0 / sum;
                let row = &mut occ[t * k..(t + 1) * k];
                for &(q, lab) in post.iter() {
                    // at most 1, as on the trellis
                    row[lab as usize] += (q * inv).min(1.0);
                }
            }
        }
        let m = rescale(&mut beta_cur[lo..hi]);
        if m > 0.0 && m.is_finite() {
            log_scale_bwd += m.ln() + shift[t];
        }
        // the band of frame t + 1 is done with: clear it for frame t - 1's use
        let (lo1, hi1) = band[t + 1];
        beta_next[lo1..hi1].iter_mut().for_each(|x| *x = 0.0);
        std::mem::swap(beta_cur, beta_next);
    }
    Ok(agreed(tot, log_scale_bwd + beta_next[0].ln(), cols, occ))
}

/// The backward sweep's two buffers as `len` zeros, with 1 for the final state in `next`.
fn start_backward(next: &mut Vec<f64>, cur: &mut Vec<f64>, len: usize, final_state: usize) {
    next.clear();
    next.resize(len, 0.0);
    cur.clear();
    cur.resize(len, 0.0);
    next[final_state] = 1.0;
}

/// A frame's occupations divided by their sum (when it is positive), each at most 1, as on
/// the trellis.
#[inline]
fn normalise(row: &mut [f64], sum: f64) {
    if sum > 0.0 {
        let inv = 1.0 / sum;
        row.iter_mut().for_each(|o| *o = (*o * inv).min(1.0));
    }
}

/// The posteriors when the backward total `tot_bwd` agrees with the forward one `tot`;
/// `None` when the flushing or the range of f64 made them differ, so that the caller scores
/// the built lattice.
fn agreed(tot: f64, tot_bwd: f64, cols: Vec<u32>, occ: Vec<f64>) -> Option<Posteriors> {
    if (tot - tot_bwd).abs() > 1e-9 * tot.abs().max(1.0) {
        return None;
    }
    Some(Posteriors { tot, cols, occ })
}

/// Frame by frame weights `exp(score - best)` of the destinations a column enters: when
/// all states one column enters share their score (`by_column`), taken once per column and
/// frame (`weight[col]` holds frame t's when `stamp[col] == t + 1`), else per destination.
struct ColumnWeights<'a> {
    by_column: bool,
    weight: &'a mut [f64],
    stamp: &'a mut [usize],
}

impl ColumnWeights<'_> {
    /// The weight on frame `t` of a destination entered through `col` at `score`.
    #[inline]
    fn get(&mut self, t: usize, col: usize, score: f32, best: f64) -> f64 {
        if !self.by_column {
            return (score as f64 - best).exp();
        }
        if self.stamp[col] != t + 1 {
            self.stamp[col] = t + 1;
            self.weight[col] = (score as f64 - best).exp();
        }
        self.weight[col]
    }
}

/// `x` when `bits` has `bit` set, else `0.0`: a select by bitwise operations on a lane of
/// `f64` (not a branch), which the compiler vectorizes.
#[inline]
fn keep(bits: u8, bit: u8, x: f64) -> f64 {
    let mask = 0u64.wrapping_sub(((bits & bit) != 0) as u64);
    f64::from_bits(x.to_bits() & mask)
}

/// `x` when `kept`, else `-inf`, by bitwise operations (not a branch).
#[inline]
fn or_neg_inf(kept: bool, x: f32) -> f32 {
    let mask = 0u32.wrapping_sub(kept as u32);
    f32::from_bits((x.to_bits() & mask) | (f32::NEG_INFINITY.to_bits() & !mask))
}

/// The buffers of [`banded_sweeps`], borrowed from the thread's [`Scratch`].
struct BandedBuffers<'a> {
    alpha: &'a mut Vec<f64>,
    weight: &'a mut Vec<f64>,
    score: &'a mut Vec<f32>,
    source: &'a mut Vec<f32>,
    masks: &'a mut Vec<u8>,
    shift: &'a mut Vec<f64>,
    beta_next: &'a mut Vec<f64>,
    beta_cur: &'a mut Vec<f64>,
}

/// The probability sweeps of [`pruned_posteriors`] for a graph with uniform entries whose
/// arcs advance by 0 to 2 states, no two joining the same states (CTC graphs,
/// [`Banded::without_parallel_arcs`]).
///
/// Each frame's kept arcs are found per destination over its band, the three possible
/// arcs into it side by side (branch-free, so the compiler vectorizes), and kept as three
/// bits per (frame, destination) for the backward sweep. The rule is [`Kept::visit`]'s with
/// its sums (`fwd[src] + score + bwd[dest]` in `f32`); the forward values are the
/// arc-by-arc sweep's bit for bit (the same products, summed from zero in the order of
/// the sources); a frame's label occupations are each destination's forward value times
/// its backward value, summed per label and normalised.
fn banded_sweeps(
    trellis: &Kept<'_>,
    entry: &[(u32, f32)],
    banded: &Banded,
    mut weights: ColumnWeights<'_>,
    budget: &ArcBudget,
    bufs: BandedBuffers<'_>,
    cols: Vec<u32>,
) -> Result<Option<Posteriors>, usize> {
    let BandedBuffers {
        alpha,
        weight,
        score,
        source,
        masks,
        shift,
        beta_next,
        beta_cur,
    } = bufs;
    let &Kept {
        graph,
        dense,
        num_cols: k,
        fwd,
        bwd,
        cutoff,
        band,
    } = trellis;
    let num_states = graph.num_states();
    let rows = band.len() - 1;
    // rows of `num_states + 2` slots: in `alpha` and `source` state s sits at s + 2 (the
    // two slots before state 0 stand in for sources before it, never kept), in `masks`,
    // `weight` and the backward vectors at s (the two slots after the last state stand in
    // for destinations past it, never kept)
    let stride = num_states + 2;
    alpha.resize(alpha.len().max((rows + 1) * stride), 0.0);
    alpha[2] = 1.0;
    weight.resize(weight.len().max(rows * stride), 0.0);
    masks.clear();
    masks.resize(rows * stride, 0);
    score.resize(score.len().max(num_states), 0.0);
    source.clear();
    source.resize(stride, f32::NEG_INFINITY);
    shift.clear();
    let [into0, into1, into2] = &banded.into;
    // frame t's kept arcs into the destinations of its band, as bits `1 << o` (the arc
    // from d - o) in `masks`, with each destination's entry score in `score` (`-inf` for a
    // destination not kept); returns how many and the largest entry score kept
    let find = |t: usize, score: &mut [f32], source: &mut [f32], masks: &mut [u8]| {
        let (lo, hi) = band[t + 1];
        if lo >= hi {
            return (0, f32::NEG_INFINITY);
        }
        let (slo, shi) = band[t];
        let (here, next) = (t * num_states, (t + 1) * num_states);
        let source_score = |s: usize| {
            let f = fwd[here + s];
            or_neg_inf((s >= slo) & (s < shi) & (f + bwd[here + s] > cutoff), f)
        };
        for s in lo.saturating_sub(2)..lo {
            source[s + 2] = source_score(s);
        }
        let row = &dense[t * k..(t + 1) * k];
        let mut best = f32::NEG_INFINITY;
        for d in lo..hi {
            source[d + 2] = source_score(d);
            let (col, entry_score) = entry[d];
            let kept = (col != u32::MAX) & (fwd[next + d] + bwd[next + d] > cutoff);
            // (a state nothing enters reads some column, and is not kept)
            let c = or_neg_inf(kept, entry_score + row[(col as usize).min(k - 1)]);
            score[d] = c;
            best = best.max(c);
        }
        // (a source or destination not kept is -inf here, so its arcs fail the test)
        let (e, b) = (&score[lo..hi], &bwd[next + lo..next + hi]);
        let (s0, s1, s2) = (
            &source[lo + 2..hi + 2],
            &source[lo + 1..hi + 1],
            &source[lo..hi],
        );
        let (i0, i1, i2) = (&into0[lo..hi], &into1[lo..hi], &into2[lo..hi]);
        let out = &mut masks[t * stride + lo..t * stride + hi];
        let mut n = 0usize;
        for i in 0..out.len() {
            let k0 = (i0[i] != 0) & (s0[i] + e[i] + b[i] > cutoff);
            let k1 = (i1[i] != 0) & (s1[i] + e[i] + b[i] > cutoff);
            let k2 = (i2[i] != 0) & (s2[i] + e[i] + b[i] > cutoff);
            out[i] = k0 as u8 | (k1 as u8) << 1 | (k2 as u8) << 2;
            n += k0 as usize + k1 as usize + k2 as usize;
        }
        (n, best)
    };
    let mut log_scale = 0f64;
    // `count`: the kept arcs found; `taken`: those taken from the budget; past the budget
    // (or once a frame has lost range) they are only counted
    let (mut count, mut taken) = (0usize, 0usize);
    let (mut within, mut lost) = (true, false);
    for t in 0..rows {
        let (n, best) = find(t, score, source, masks);
        count += n;
        if !within || lost {
            continue;
        }
        taken += n;
        within = budget.take(n);
        // a frame without a kept arc: the lattice has no path through it
        lost = n == 0;
        if !within || lost {
            continue;
        }
        let (lo, hi) = band[t + 1];
        let best = best as f64;
        let w = &mut weight[t * stride..(t + 1) * stride];
        for d in lo..hi {
            w[d] = if score[d] == f32::NEG_INFINITY {
                0.0
            } else {
                weights.get(t, entry[d].0 as usize, score[d], best)
            };
        }
        let (cur, next) = alpha[t * stride..(t + 2) * stride].split_at_mut(stride);
        let (c0, c1, c2) = (&cur[lo + 2..hi + 2], &cur[lo + 1..hi + 1], &cur[lo..hi]);
        let (m, w) = (&masks[t * stride + lo..t * stride + hi], &w[lo..hi]);
        let out = &mut next[lo + 2..hi + 2];
        let mut largest = 0f64;
        for i in 0..out.len() {
            // the sources in ascending order: the skip, the step, the self-loop
            let x2 = keep(m[i], 4, c2[i] * w[i]);
            let x1 = keep(m[i], 2, c1[i] * w[i]);
            let x0 = keep(m[i], 1, c0[i] * w[i]);
            out[i] = 0.0 + x2 + x1 + x0;
            largest = if out[i] > largest { out[i] } else { largest };
        }
        shift.push(best);
        let m = scale_by(out, largest);
        if m == 0.0 || !m.is_finite() {
            // no path, or only paths the flushing dropped: the lattice decides
            lost = true;
            continue;
        }
        log_scale += m.ln() + best;
    }
    if taken < count {
        within &= budget.take(count - taken);
    }
    if !within {
        return Err(count);
    }
    let last = rows * num_states + num_states - 1;
    let kept = |slot: usize| fwd[slot] + bwd[slot] > cutoff;
    if lost || !kept(0) || !kept(last) {
        return Ok(None);
    }
    let end = alpha[rows * stride + 2 + num_states - 1];
    if end == 0.0 {
        return Ok(None);
    }
    let tot = log_scale + end.ln();
    // backward; a frame's occupations normalised to sum to one (every path takes one arc
    // per frame)
    let frames = rows - 1;
    let mut occ = vec![0f64; frames * k];
    start_backward(beta_next, beta_cur, stride, num_states - 1);
    let mut log_scale_bwd = 0f64;
    for t in (0..rows).rev() {
        let (lo, hi) = band[t];
        let (m, w) = (
            &masks[t * stride..(t + 1) * stride],
            &weight[t * stride..(t + 1) * stride],
        );
        let (m0, m1, m2) = (&m[lo..hi], &m[lo + 1..hi + 1], &m[lo + 2..hi + 2]);
        let (w0, w1, w2) = (&w[lo..hi], &w[lo + 1..hi + 1], &w[lo + 2..hi + 2]);
        let b = &beta_next[..];
        let (b0, b1, b2) = (&b[lo..hi], &b[lo + 1..hi + 1], &b[lo + 2..hi + 2]);
        let out = &mut beta_cur[lo..hi];
        let mut largest = 0f64;
        for i in 0..out.len() {
            let p0 = keep(m0[i], 1, w0[i] * b0[i]);
            let p1 = keep(m1[i], 2, w1[i] * b1[i]);
            let p2 = keep(m2[i], 4, w2[i] * b2[i]);
            out[i] = p0 + p1 + p2;
            largest = if out[i] > largest { out[i] } else { largest };
        }
        if t < frames {
            // what enters d on frame t, times d's backward value: alpha[t + 1][d] is that
            // sum over d's kept arcs in the frame's scale, which the normalising removes
            let (lo, hi) = band[t + 1];
            let a = &alpha[(t + 1) * stride + 2 + lo..(t + 1) * stride + 2 + hi];
            let row = &mut occ[t * k..(t + 1) * k];
            let mut sum = 0f64;
            for ((&a, &b), &(col, _)) in a.iter().zip(&beta_next[lo..hi]).zip(&entry[lo..hi]) {
                let q = a * b;
                if q > 0.0 {
                    row[col as usize] += q;
                    sum += q;
                }
            }
            normalise(row, sum);
        }
        let m = scale_by(&mut beta_cur[lo..hi], largest);
        if m > 0.0 && m.is_finite() {
            log_scale_bwd += m.ln() + shift[t];
        }
        std::mem::swap(beta_cur, beta_next);
    }
    Ok(agreed(tot, log_scale_bwd + beta_next[0].ln(), cols, occ))
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
        let pairs = prepare(graphs.into(), dense, None).unwrap();
        let reference =
            lattice_posteriors(graphs.into(), dense, &pairs, beam, usize::MAX, ("t", "t")).unwrap();
        let budget = ArcBudget::new(usize::MAX);
        let mut scored = 0;
        for (&(a, b), want) in pairs.iter().zip(&reference) {
            let got = pruned_posteriors(graphs.view(a), dense, b, beam, &budget).unwrap();
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

    /// Log-probs of shape `(sequences, frames, symbols)` in `[-scale, 0]`, one in
    /// `impossible` a symbol that cannot be emitted (`-inf`), and one segment per sequence
    /// at a random start with a random length.
    fn random_dense(
        rng: &mut Rng,
        (sequences, frames, symbols): (usize, usize, usize),
        impossible: u64,
        scale: f32,
    ) -> DenseFsaVec {
        let mut lp = Array3::<f32>::zeros((sequences, frames, symbols));
        for x in lp.iter_mut() {
            *x = if rng.below(impossible) == 0 {
                f32::NEG_INFINITY
            } else {
                -scale * rng.unit()
            };
        }
        let segments: Vec<[i32; 3]> = (0..sequences)
            .map(|i| {
                let start = rng.below(frames as u64) as i32;
                let len = 1 + rng.below((frames as i32 - start) as u64) as i32;
                [i as i32, start, len]
            })
            .collect();
        DenseFsaVec::new(lp.view(), &segments)
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
            let dense = random_dense(&mut rng, (num_graphs, frames, symbols as usize), 15, 4.0);
            let beam = [0.25f32, 1.0, 3.0, 10.0, 1e4][case % 5];
            pairs += num_graphs;
            scored += compare(&create_fsa_vec(&graphs), &dense, beam);
        }
        // the fallback is for lost range; these small cases keep theirs
        assert_eq!(scored, pairs);
    }

    /// A graph whose arcs advance by 0, 1 or 2 states, one label and score per destination
    /// (the banded sweeps' graphs beyond CTC's): states nothing enters, scores of `-inf`
    /// and above 0, `-1` arcs into the last state, and now and then two parallel arcs
    /// (which the other sweeps take).
    fn random_banded(rng: &mut Rng, symbols: u64) -> Fsa {
        let n = 2 + rng.below(14) as usize;
        let label: Vec<i32> = (0..n)
            .map(|d| {
                if d == n - 1 {
                    -1
                } else {
                    rng.below(symbols) as i32
                }
            })
            .collect();
        let scores = [0.0, -0.5, -2.0, f32::NEG_INFINITY, 1.0];
        let score: Vec<f32> = (0..n).map(|_| scores[rng.below(5) as usize]).collect();
        let mut arcs = Vec::new();
        for src in 0..n - 1 {
            for d in src..(src + 3).min(n) {
                if d == src + 1 || rng.below(3) > 0 {
                    arcs.push(Arc::new(src as i32, d as i32, label[d], score[d]));
                    // now and then a parallel arc, which the sums count twice
                    if rng.below(25) == 0 {
                        arcs.push(Arc::new(src as i32, d as i32, label[d], score[d]));
                    }
                }
            }
        }
        Fsa::from_arcs(arcs, n).unwrap()
    }

    #[test]
    fn banded_graphs_score_as_the_built_lattice_and_count_its_arcs() {
        let mut rng = Rng(23);
        let (mut pairs, mut scored) = (0, 0);
        let (mut banded, mut parallel) = (0, 0);
        for case in 0..200 {
            let symbols = 2 + rng.below(6);
            let num_graphs = 1 + rng.below(3) as usize;
            let graphs: Vec<Fsa> = (0..num_graphs)
                .map(|i| {
                    if (case + i) % 2 == 0 {
                        random_banded(&mut rng, symbols)
                    } else {
                        // CTC graphs, plain and modified, with repeated tokens now and then
                        let tokens: Vec<i32> = (0..1 + rng.below(12))
                            .map(|_| 1 + rng.below(symbols - 1) as i32)
                            .collect();
                        FsaVec::ctc_graph(&[tokens], case % 4 == 1).unwrap().get(0)
                    }
                })
                .collect();
            let frames = 1 + rng.below(60) as usize;
            let dense = random_dense(&mut rng, (num_graphs, frames, symbols as usize), 20, 6.0);
            let graphs = create_fsa_vec(&graphs);
            for i in 0..num_graphs {
                let view = graphs.view(i);
                assert!(Banded::new(view).is_some() && uniform_entry(view).is_some());
                match Banded::without_parallel_arcs(view) {
                    Some(_) => banded += 1,
                    None => parallel += 1,
                }
            }
            let beam = [0.5f32, 2.0, 5.0, 10.0, 1e4][case % 5];
            pairs += num_graphs;
            scored += compare(&graphs, &dense, beam);
            // past a budget of no arcs, the error counts the lattice's arcs
            let (lattice, _, _) = crate::intersect_dense(&graphs, &dense, beam, None).unwrap();
            for i in 0..num_graphs {
                let got = pruned_posteriors(graphs.view(i), &dense, i, beam, &ArcBudget::new(0));
                let want = lattice.arc_range(i).len();
                match got {
                    Err(n) => assert_eq!(n, want, "case {case} graph {i}"),
                    Ok(_) => assert_eq!(want, 0, "case {case} graph {i}"),
                }
            }
        }
        assert_eq!(scored, pairs);
        assert!(
            banded > 100 && parallel > 10,
            "{banded} banded, {parallel} parallel"
        );
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
        let got = pruned_posteriors(view, &dense, 0, 1e7, &budget).unwrap();
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
