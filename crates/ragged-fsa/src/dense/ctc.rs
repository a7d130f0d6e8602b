//! CTC loss and its gradient (k2's `ctc_loss`, torch's `ctc_loss`): forward-backward in the
//! log semiring over the graph x frames trellis, without building the lattice.

use ndarray::Array3;

use crate::dense::beam::{pruned_posteriors, used_columns};
use crate::dense::dense_fsa::DenseFsaVecOf;
use crate::dense::intersect_dense::{
    check_beam, check_trellis_size, intersect_dense_bounded, map_pairs, prepare,
};
use crate::error::Error;
use crate::fsa::FsaVecRef;
use crate::kernels::scores::{self, Semiring};
use crate::view::{ArcBudget, FsaView, MAX_OUTPUT_ARCS};

/// The CTC loss of every supervision segment and its gradient.
#[derive(Debug, Clone, PartialEq)]
pub struct CtcLoss {
    /// One per supervision segment, in the order given: `-(total log score)`; `+inf` for a
    /// segment no path survives (or 0 with [`CtcLossConfig::zero_infinity`]). Never NaN and
    /// never `-inf`: the inputs that would make it so are errors (see [`ctc_loss_with`]).
    pub loss: Vec<f64>,
    /// `d(sum of loss) / d(log_probs)`, the shape of `log_probs`; zero on frames outside
    /// every segment and for infinite losses, finite everywhere.
    pub grad: Array3<f32>,
}

/// Options of [`ctc_loss_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CtcLossConfig {
    /// k2's `output_beam`: the lattice keeps arcs within this of the best path before the
    /// log-semiring total is taken. `f32::INFINITY` (the default) gives the exact CTC
    /// objective (torch's), computed on the trellis directly; a finite beam keeps the arcs
    /// of k2's pruned lattice (those [`intersect_dense`](crate::intersect_dense) keeps) and
    /// scores them on the trellis without building the lattice.
    pub output_beam: f32,
    /// torch's `zero_infinity`: an infinite loss (no path) is reported as 0. Its gradient is
    /// zero either way.
    pub zero_infinity: bool,
    /// With a finite `output_beam`, the most arcs the pruned lattices may hold in all
    /// (default [`MAX_OUTPUT_ARCS`](crate::MAX_OUTPUT_ARCS)): no more than that many are
    /// stored, and past it the loss is [`Error::OutputLimit`] with the whole count. A graph
    /// with many parallel arcs keeps up to arcs x frames of them. (The exact path stores no
    /// lattice.)
    pub max_lattice_arcs: usize,
}

impl Default for CtcLossConfig {
    fn default() -> Self {
        Self {
            output_beam: f32::INFINITY,
            zero_infinity: false,
            max_lattice_arcs: MAX_OUTPUT_ARCS,
        }
    }
}

/// The log-semiring forward-backward of one graph against one dense FSA: the total log
/// score and the occupation of every (frame, column) the graph's labels use.
#[derive(Debug, Clone)]
pub(crate) struct Posteriors {
    /// The total log score, `-inf` when no path exists.
    pub(crate) tot: f64,
    /// The dense-score columns (label + 1) the graph uses, ascending.
    pub(crate) cols: Vec<u32>,
    /// `occ[t * cols.len() + k]`: the posterior probability of column `cols[k]` on frame `t`,
    /// for the frames of the segment (the final row left out). Empty when `tot` is `-inf`.
    pub(crate) occ: Vec<f64>,
}

/// Scaled probabilities below this (relative to their frame's largest) are flushed to zero.
pub(crate) const TINY: f64 = 1e-120;

fn log_add(a: f64, b: f64) -> f64 {
    ragged_core::log_add(a, b)
}

/// One arc of a prepared graph as a pass reads it: the state at its other end (the source
/// in the forward pass, the destination in the backward pass), its compact label index and
/// `exp(score - max)`.
#[derive(Clone, Copy)]
struct PackedArc {
    other: u32,
    lab: u32,
    weight: f64,
}

/// One graph prepared for the trellis: its arcs with compact label indices and weights.
struct Trellis {
    num_states: usize,
    src: Vec<u32>,
    dest: Vec<u32>,
    lab: Vec<u32>,
    weight: Vec<f64>,
    /// The arcs grouped by destination (`into[into_splits[d]..into_splits[d + 1]]` enter
    /// `d`), for the forward pass: each state's new value is summed in a register and
    /// written once.
    into: Vec<PackedArc>,
    into_splits: Vec<u32>,
    /// The arcs grouped by source, in the graph's order (`out_splits` as the graph's row
    /// splits), for the backward pass.
    out: Vec<PackedArc>,
    out_splits: Vec<u32>,
    /// The positions in `out` of the arcs of each compact label
    /// (`by_label[label_splits[l]..label_splits[l + 1]]`), so that a frame's label
    /// occupations are summed in registers from the arcs' posteriors.
    by_label: Vec<u32>,
    label_splits: Vec<u32>,
    /// When every arc into a state has the same label (CTC graphs, HMM topologies), that
    /// label per state (0 for a state nothing enters), and the states of each label
    /// (`label_states[label_state_splits[l]..label_state_splits[l + 1]]`): the emission then
    /// factors out of each state's sum, and a frame's label occupations are the products of
    /// the next frame's forward and backward values, summed per label.
    state_lab: Option<Vec<u32>>,
    label_states: Vec<u32>,
    label_state_splits: Vec<u32>,
    max_score: f64,
    cols: Vec<u32>,
}

impl Trellis {
    fn new(graph: FsaView<'_>, num_cols: usize) -> Self {
        let (cols, used) = used_columns(graph, num_cols);
        let max_score = graph
            .arcs
            .iter()
            .map(|a| a.score as f64)
            .filter(|s| s.is_finite())
            .fold(f64::NEG_INFINITY, f64::max);
        let max_score = if max_score.is_finite() {
            max_score
        } else {
            0.0
        };
        let num_states = graph.num_states();
        let weight_of = |a: &crate::arc::Arc| (a.score as f64 - max_score).exp();
        let out: Vec<PackedArc> = graph
            .arcs
            .iter()
            .map(|a| PackedArc {
                other: a.dest_state as u32,
                lab: used[(a.label + 1) as usize],
                weight: weight_of(a),
            })
            .collect();
        let base = graph.splits.first().copied().unwrap_or(0);
        let out_splits: Vec<u32> = graph.splits.iter().map(|&x| (x - base) as u32).collect();
        // a counting sort by destination (stable: arcs into one state keep their order)
        let mut into_splits = vec![0u32; num_states + 1];
        for a in graph.arcs {
            into_splits[a.dest_state as usize + 1] += 1;
        }
        for d in 0..num_states {
            into_splits[d + 1] += into_splits[d];
        }
        let mut fill: Vec<u32> = into_splits[..num_states].to_vec();
        let mut into = vec![
            PackedArc {
                other: 0,
                lab: 0,
                weight: 0.0
            };
            graph.arcs.len()
        ];
        for a in graph.arcs {
            let slot = &mut fill[a.dest_state as usize];
            into[*slot as usize] = PackedArc {
                other: a.src_state as u32,
                lab: used[(a.label + 1) as usize],
                weight: weight_of(a),
            };
            *slot += 1;
        }
        let mut label_splits = vec![0u32; cols.len() + 1];
        for arc in &out {
            label_splits[arc.lab as usize + 1] += 1;
        }
        for l in 0..cols.len() {
            label_splits[l + 1] += label_splits[l];
        }
        let mut fill: Vec<u32> = label_splits[..cols.len()].to_vec();
        let mut by_label = vec![0u32; out.len()];
        for (i, arc) in out.iter().enumerate() {
            let slot = &mut fill[arc.lab as usize];
            by_label[*slot as usize] = i as u32;
            *slot += 1;
        }
        let mut state_lab = vec![u32::MAX; num_states];
        let mut state_labelled = true;
        for arc in &out {
            let (d, lab) = (arc.other as usize, arc.lab);
            if state_lab[d] == u32::MAX {
                state_lab[d] = lab;
            } else if state_lab[d] != lab {
                state_labelled = false;
            }
        }
        // (a graph without arcs uses no label: nothing to factor out, and no label 0 for the
        // states nothing enters)
        let state_labelled = state_labelled && !cols.is_empty();
        let (state_lab, label_states, label_state_splits) = if state_labelled {
            for l in state_lab.iter_mut() {
                if *l == u32::MAX {
                    *l = 0;
                }
            }
            let mut splits = vec![0u32; cols.len() + 1];
            for &l in &state_lab {
                splits[l as usize + 1] += 1;
            }
            for l in 0..cols.len() {
                splits[l + 1] += splits[l];
            }
            let mut fill: Vec<u32> = splits[..cols.len()].to_vec();
            let mut states = vec![0u32; num_states];
            for (d, &l) in state_lab.iter().enumerate() {
                states[fill[l as usize] as usize] = d as u32;
                fill[l as usize] += 1;
            }
            (Some(state_lab), states, splits)
        } else {
            (None, Vec::new(), Vec::new())
        };
        Self {
            num_states,
            into,
            into_splits,
            out,
            out_splits,
            by_label,
            label_splits,
            state_lab,
            label_states,
            label_state_splits,
            src: graph.arcs.iter().map(|a| a.src_state as u32).collect(),
            dest: graph.arcs.iter().map(|a| a.dest_state as u32).collect(),
            lab: graph
                .arcs
                .iter()
                .map(|a| used[(a.label + 1) as usize])
                .collect(),
            weight: graph
                .arcs
                .iter()
                .map(|a| (a.score as f64 - max_score).exp())
                .collect(),
            max_score,
            cols,
        }
    }

    /// Forward-backward in scaled probabilities (each frame's vector divided by its largest
    /// entry, the logs of the divisors summed in `f64`), over the segment's scores in the
    /// graph's columns (`dense` rows of `num_cols = cols.len()` values, as
    /// [`DenseFsaVecOf::gather_columns`] writes them).
    fn run(&self, dense: &[f32], num_cols: usize) -> Posteriors {
        // (a graph without arcs reads no column: no path)
        let rows = dense.len().checked_div(num_cols).unwrap_or(0);
        let (num_states, k) = (self.num_states, self.cols.len());
        let infeasible = || Posteriors {
            tot: f64::NEG_INFINITY,
            cols: self.cols.clone(),
            occ: Vec::new(),
        };
        if num_states == 0 || rows == 0 {
            return infeasible();
        }
        // per-frame emission weights exp(score - frame max) over the used columns
        let mut emit = vec![0f64; rows * k];
        let mut shift = vec![0f64; rows];
        for t in 0..rows {
            let row = &dense[t * num_cols..(t + 1) * num_cols];
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            if m == f32::NEG_INFINITY {
                return infeasible();
            }
            shift[t] = m as f64 + self.max_score;
            for (e, &x) in emit[t * k..(t + 1) * k].iter_mut().zip(row) {
                *e = (x as f64 - m as f64).exp();
            }
        }
        // forward: alpha[t] for t in 0..=rows, each scaled to max 1
        let mut alpha = vec![0f64; (rows + 1) * num_states];
        alpha[0] = 1.0;
        let mut log_scale = 0f64;
        for t in 0..rows {
            let e = &emit[t * k..(t + 1) * k];
            let (cur, next) = alpha[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
            let mut m = 0f64;
            match &self.state_lab {
                Some(state_lab) => {
                    for (d, (x, &lab)) in next.iter_mut().zip(state_lab).enumerate() {
                        let arcs = &self.into
                            [self.into_splits[d] as usize..self.into_splits[d + 1] as usize];
                        let mut acc = 0f64;
                        for arc in arcs {
                            acc += cur[arc.other as usize] * arc.weight;
                        }
                        *x = acc * e[lab as usize];
                        m = m.max(*x);
                    }
                }
                None => {
                    for (d, x) in next.iter_mut().enumerate() {
                        let arcs = &self.into
                            [self.into_splits[d] as usize..self.into_splits[d + 1] as usize];
                        let mut acc = 0f64;
                        for arc in arcs {
                            acc += cur[arc.other as usize] * arc.weight * e[arc.lab as usize];
                        }
                        *x = acc;
                        m = m.max(acc);
                    }
                }
            }
            if m == 0.0 || !m.is_finite() {
                // no path, or only paths the flushing dropped: the log domain decides
                return self.run_log(dense, num_cols);
            }
            let inv = 1.0 / m;
            for x in next.iter_mut() {
                *x *= inv;
                // flush what cannot matter to zero: subnormals are slow
                if *x < TINY {
                    *x = 0.0;
                }
            }
            log_scale += m.ln() + shift[t];
        }
        let last = alpha[rows * num_states + num_states - 1];
        if last == 0.0 {
            return self.run_log(dense, num_cols);
        }
        let tot = log_scale + last.ln();
        // backward, with arc posteriors of each frame normalised to sum to one (every path
        // takes exactly one arc per frame)
        let mut beta_next = vec![0f64; num_states];
        let mut beta_cur = vec![0f64; num_states];
        beta_next[num_states - 1] = 1.0;
        let frames = rows - 1;
        let mut occ = vec![0f64; frames * k];
        // each arc's posterior on the frame (alpha * arc * beta, in the frame's scale), or
        // for a state-labelled graph each state's emission times its backward value and its
        // occupation
        let mut post = vec![0f64; self.out.len()];
        let mut emitted_beta = vec![0f64; num_states];
        let mut gamma = vec![0f64; num_states];
        let mut log_scale_bwd = 0f64;
        for t in (0..rows).rev() {
            let e = &emit[t * k..(t + 1) * k];
            let a_t = &alpha[t * num_states..(t + 1) * num_states];
            let mut sum = 0f64;
            if let Some(state_lab) = &self.state_lab {
                // the arcs into d carry d's label: what enters d on this frame is
                // alpha[t + 1][d] (up to the frame's scale), its occupation that times beta
                let a_next = &alpha[(t + 1) * num_states..(t + 2) * num_states];
                for d in 0..num_states {
                    emitted_beta[d] = e[state_lab[d] as usize] * beta_next[d];
                    gamma[d] = a_next[d] * beta_next[d];
                    sum += gamma[d];
                }
                for (src, x) in beta_cur.iter_mut().enumerate() {
                    let arcs =
                        &self.out[self.out_splits[src] as usize..self.out_splits[src + 1] as usize];
                    let mut acc = 0f64;
                    for arc in arcs {
                        acc += arc.weight * emitted_beta[arc.other as usize];
                    }
                    *x = acc;
                }
                if t < frames && sum > 0.0 {
                    let inv = 1.0 / sum;
                    for (l, o) in occ[t * k..(t + 1) * k].iter_mut().enumerate() {
                        let states = &self.label_states[self.label_state_splits[l] as usize
                            ..self.label_state_splits[l + 1] as usize];
                        *o = states.iter().map(|&d| gamma[d as usize]).sum::<f64>() * inv;
                    }
                }
            } else {
                for (src, x) in beta_cur.iter_mut().enumerate() {
                    let range = self.out_splits[src] as usize..self.out_splits[src + 1] as usize;
                    let mut acc = 0f64;
                    let a = a_t[src];
                    for (arc, p) in self.out[range.clone()].iter().zip(&mut post[range]) {
                        let w = arc.weight * e[arc.lab as usize] * beta_next[arc.other as usize];
                        acc += w;
                        *p = a * w;
                    }
                    sum += a * acc;
                    *x = acc;
                }
                if t < frames && sum > 0.0 {
                    let inv = 1.0 / sum;
                    for (l, o) in occ[t * k..(t + 1) * k].iter_mut().enumerate() {
                        let arcs = &self.by_label
                            [self.label_splits[l] as usize..self.label_splits[l + 1] as usize];
                        *o = arcs.iter().map(|&i| post[i as usize]).sum::<f64>() * inv;
                    }
                }
            }
            let m = beta_cur.iter().copied().fold(0f64, f64::max);
            if m > 0.0 {
                let inv = 1.0 / m;
                for x in beta_cur.iter_mut() {
                    *x *= inv;
                    if *x < TINY {
                        *x = 0.0;
                    }
                }
                log_scale_bwd += m.ln() + shift[t];
            }
            std::mem::swap(&mut beta_cur, &mut beta_next);
        }
        // the backward total must agree with the forward one; when the flushing or the
        // range of f64 made them differ, redo the segment in the log domain
        let tot_bwd = log_scale_bwd + beta_next[0].ln();
        let agree = (tot - tot_bwd).abs() <= 1e-9 * tot.abs().max(1.0);
        if !agree {
            return self.run_log(dense, num_cols);
        }
        Posteriors {
            tot,
            cols: self.cols.clone(),
            occ,
        }
    }

    /// The same in the log domain (one `exp` per arc and frame): slower, but with the full
    /// range of `f64` exponents; the fallback when the scaled run loses range.
    fn run_log(&self, dense: &[f32], num_cols: usize) -> Posteriors {
        let rows = dense.len() / num_cols;
        let (num_states, k) = (self.num_states, self.cols.len());
        let score = |i: usize, row: &[f32]| {
            self.weight[i].ln() + self.max_score + row[self.lab[i] as usize] as f64
        };
        let mut alpha = vec![f64::NEG_INFINITY; (rows + 1) * num_states];
        alpha[0] = 0.0;
        for t in 0..rows {
            let row = &dense[t * num_cols..(t + 1) * num_cols];
            let (cur, next) = alpha[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
            for i in 0..self.src.len() {
                let a = cur[self.src[i] as usize];
                if a == f64::NEG_INFINITY {
                    continue;
                }
                let d = self.dest[i] as usize;
                next[d] = log_add(next[d], a + score(i, row));
            }
        }
        let tot = alpha[rows * num_states + num_states - 1];
        if tot == f64::NEG_INFINITY {
            return Posteriors {
                tot,
                cols: self.cols.clone(),
                occ: Vec::new(),
            };
        }
        let frames = rows - 1;
        let mut occ = vec![0f64; frames * k];
        let mut beta_next = vec![f64::NEG_INFINITY; num_states];
        let mut beta_cur = vec![f64::NEG_INFINITY; num_states];
        beta_next[num_states - 1] = 0.0;
        for t in (0..rows).rev() {
            let row = &dense[t * num_cols..(t + 1) * num_cols];
            let a_t = &alpha[t * num_states..(t + 1) * num_states];
            beta_cur.iter_mut().for_each(|x| *x = f64::NEG_INFINITY);
            for i in 0..self.src.len() {
                let b = beta_next[self.dest[i] as usize];
                if b == f64::NEG_INFINITY {
                    continue;
                }
                let src = self.src[i] as usize;
                let w = score(i, row) + b;
                beta_cur[src] = log_add(beta_cur[src], w);
                if t < frames && a_t[src] > f64::NEG_INFINITY {
                    // a posterior is at most 1; only rounding makes it more, when the scores
                    // are so large (near f32::MAX) that their sums cancel, and then without
                    // the bound it could be infinite
                    occ[t * k + self.lab[i] as usize] += (a_t[src] + w - tot).exp().min(1.0);
                }
            }
            std::mem::swap(&mut beta_cur, &mut beta_next);
        }
        Posteriors {
            tot,
            cols: self.cols.clone(),
            occ,
        }
    }
}

/// The losses' rule for hostile values, the same on the exact and the pruned path: a graph
/// arc scored NaN or `+inf` is [`Error::BadScore`], a `+inf` in `log_probs` at a (frame,
/// symbol) that a segment's graph reads (a frame of the segment, a symbol some arc of its
/// graph carries) is [`Error::InfiniteLogProb`]. (NaN in `log_probs` never gets here:
/// [`DenseFsaVecOf`] refuses it.) What is left is finite or `-inf`, which both paths agree on:
/// a total of `-inf` (no path) or a finite one, never `+inf` or NaN.
pub(crate) fn check_loss_inputs(
    graphs: FsaVecRef<'_>,
    dense: &DenseFsaVecOf<'_>,
    pairs: &[(usize, usize)],
    op: &'static str,
) -> Result<(), Error> {
    let num_cols = dense.num_cols();
    let mut used: Vec<Option<Vec<u32>>> = vec![None; graphs.num_fsas()];
    let mut rows = Vec::new();
    for &(a, b) in pairs {
        let cols = match &mut used[a] {
            Some(cols) => cols,
            slot => {
                let view = graphs.view(a);
                let bad = |x: &crate::arc::Arc| x.score.is_nan() || x.score == f32::INFINITY;
                if let Some(arc) = view.arcs.iter().position(bad) {
                    return Err(Error::BadScore {
                        op,
                        fsa: a,
                        arc,
                        score: view.arcs[arc].score,
                        reason: "graph scores must be finite or -inf (NaN and +inf make the loss undefined)",
                    });
                }
                let mut seen = vec![false; num_cols];
                for x in view.arcs {
                    seen[(x.label + 1) as usize] = true;
                }
                // column 0 is the final arcs' -1, not a symbol of log_probs
                let cols = (1..num_cols as u32).filter(|&c| seen[c as usize]).collect();
                slot.insert(cols)
            }
        };
        let [seq, start, _] = dense.segments()[b];
        dense.gather_columns(b, cols, &mut rows);
        if let Some(at) = rows.iter().position(|&x| x == f32::INFINITY) {
            // (the final row has no +inf)
            return Err(Error::InfiniteLogProb {
                sequence: seq as usize,
                frame: start as usize + at / cols.len(),
                symbol: cols[at % cols.len()] as usize - 1,
            });
        }
    }
    Ok(())
}

/// Posteriors of every (graph, dense FSA) pair, on the trellis (`output_beam` infinite) or
/// on k2's pruned lattice (at most `max_arcs` lattice arcs, `what` naming that bound).
/// Checks the inputs first ([`check_loss_inputs`], `op` naming the loss).
pub(crate) fn pair_posteriors(
    graphs: FsaVecRef<'_>,
    dense: &DenseFsaVecOf<'_>,
    pairs: &[(usize, usize)],
    output_beam: f32,
    max_arcs: usize,
    (op, what): (&'static str, &'static str),
) -> Result<Vec<Posteriors>, Error> {
    check_trellis_size(graphs, dense, pairs)?;
    check_loss_inputs(graphs, dense, pairs, op)?;
    let num_cols = dense.num_cols();
    // each pair's work: arcs times frames
    let work = |a: usize, b: usize| graphs.arc_range(a).len() * (dense.duration(b) + 1);
    if output_beam == f32::INFINITY {
        // prepare each distinct graph once
        let trellises: Vec<Option<Trellis>> = {
            let mut needed = vec![false; graphs.num_fsas()];
            pairs.iter().for_each(|&(a, _)| needed[a] = true);
            needed
                .iter()
                .enumerate()
                .map(|(a, &n)| n.then(|| Trellis::new(graphs.view(a), num_cols)))
                .collect()
        };
        return Ok(map_pairs(pairs, work, |a, b| {
            let trellis = trellises[a].as_ref().expect("prepared above");
            let mut rows = Vec::new();
            dense.gather_columns(b, &trellis.cols, &mut rows);
            trellis.run(&rows, trellis.cols.len())
        }));
    }
    // k2's pruned lattice, scored on the kept part of the trellis
    let budget = ArcBudget::new(max_arcs);
    let posts = map_pairs(pairs, work, |a, b| {
        pruned_posteriors(graphs.view(a), dense, b, output_beam, &budget)
    });
    if posts.iter().any(|p| p.is_err()) {
        return Err(Error::OutputLimit {
            op,
            what,
            count: budget.taken(),
            limit: max_arcs,
        });
    }
    let posts: Option<Vec<Posteriors>> = posts.into_iter().flatten().collect();
    match posts {
        Some(posts) => Ok(posts),
        // a segment lost range in scaled probabilities: the log semiring on the lattice
        None => lattice_posteriors(graphs, dense, pairs, output_beam, max_arcs, (op, what)),
    }
}

/// The pruned path's reference: k2's way, the lattice built with `intersect_dense`, then
/// arc posteriors on it in the log semiring.
pub(crate) fn lattice_posteriors(
    graphs: FsaVecRef<'_>,
    dense: &DenseFsaVecOf<'_>,
    pairs: &[(usize, usize)],
    output_beam: f32,
    max_arcs: usize,
    (op, what): (&'static str, &'static str),
) -> Result<Vec<Posteriors>, Error> {
    let num_cols = dense.num_cols();
    let map: Vec<i32> = pairs.iter().map(|&(_, b)| b as i32).collect();
    let bound = (op, what);
    let (lattice, _, b_arc_map) = if pairs.iter().enumerate().all(|(i, &(a, _))| a == i) {
        intersect_dense_bounded(graphs, dense, output_beam, Some(&map), max_arcs, bound)?
    } else {
        // a shared graph: repeat it per pair
        let repeated: Vec<crate::fsa::Fsa> = pairs.iter().map(|&(a, _)| graphs.get(a)).collect();
        let graphs = crate::fsa::create_fsa_vec(&repeated);
        intersect_dense_bounded(
            (&graphs).into(),
            dense,
            output_beam,
            Some(&map),
            max_arcs,
            bound,
        )?
    };
    let arc_splits: Vec<usize> = (0..=lattice.num_fsas())
        .map(|i| {
            if i == lattice.num_fsas() {
                lattice.num_arcs()
            } else {
                lattice.arc_range(i).start
            }
        })
        .collect();
    Ok(lattice.map_views(|i, view| {
        let (cols, _) = used_columns(graphs.view(pairs[i].0), num_cols);
        let b = pairs[i].1;
        let frames = dense.duration(b);
        let tot = scores::tot::<f64>(view, Semiring::Log);
        if tot == f64::NEG_INFINITY {
            return Posteriors {
                tot,
                cols,
                occ: Vec::new(),
            };
        }
        let post = scores::arc_post::<f64>(view, Semiring::Log);
        let mut occ = vec![0f64; frames * cols.len()];
        let row0 = dense.row_splits()[b] as usize;
        for (local, p) in post.iter().enumerate() {
            let idx = b_arc_map[arc_splits[i] + local] as usize;
            let (row, col) = (idx / num_cols - row0, (idx % num_cols) as u32);
            if row < frames {
                let k = cols.binary_search(&col).expect("a column of the graph");
                // at most 1, as on the trellis
                occ[row * cols.len() + k] += p.exp().min(1.0);
            }
        }
        Posteriors { tot, cols, occ }
    }))
}

/// Adds `scale * occ` of each pair into `grad` (shape of `log_probs`): the plain model of
/// [`gradient`].
#[cfg(test)]
fn scatter(
    grad: &mut Array3<f32>,
    dense: &DenseFsaVecOf<'_>,
    pairs: &[(usize, usize)],
    posts: &[Posteriors],
    scale: f64,
) {
    let (_, num_frames, num_symbols) = grad.dim();
    let flat = grad
        .as_slice_mut()
        .expect("the gradient is created in standard layout");
    for (&(_, b), post) in pairs.iter().zip(posts) {
        if post.occ.is_empty() {
            continue;
        }
        let [seq, start, _] = dense.segments()[b];
        let k = post.cols.len();
        for t in 0..dense.duration(b) {
            let row_start = (seq as usize * num_frames + start as usize + t) * num_symbols;
            let row = &mut flat[row_start..row_start + num_symbols];
            for (&col, &o) in post.cols.iter().zip(&post.occ[t * k..(t + 1) * k]) {
                if col > 0 {
                    row[col as usize - 1] += (scale * o) as f32;
                }
            }
        }
    }
}

/// One group of terms of a gradient: the pairs, their posteriors and the scale of their
/// occupations.
pub(crate) type GradientTerms<'p> = (&'p [(usize, usize)], &'p [Posteriors], f64);

/// `scale * occ` of each pair of each group as a gradient of the shape of `log_probs`,
/// written in one pass over it (zero outside every segment): the values [`scatter`] adds
/// into zeros group after group, each element's terms summed in that order (groups in
/// order, pairs in order within a group).
pub(crate) fn gradient(dense: &DenseFsaVecOf<'_>, groups: &[GradientTerms<'_>]) -> Array3<f32> {
    let [num_seqs, num_frames, num_symbols] = dense.log_probs_dim();
    // per sequence, the (group, pair) terms with a gradient on it, in summing order
    let mut by_seq: Vec<Vec<(usize, usize)>> = vec![Vec::new(); num_seqs];
    for (g, &(pairs, posts, _)) in groups.iter().enumerate() {
        for (i, (&(_, b), post)) in pairs.iter().zip(posts).enumerate() {
            if !post.occ.is_empty() {
                by_seq[dense.segments()[b][0] as usize].push((g, i));
            }
        }
    }
    let total = num_seqs * num_frames * num_symbols;
    let mut flat: Vec<f32> = Vec::with_capacity(total);
    for covering in &by_seq {
        for t in 0..num_frames {
            let at = flat.len();
            flat.resize(at + num_symbols, 0.0);
            let row = &mut flat[at..];
            for &(g, i) in covering {
                let (pairs, posts, scale) = groups[g];
                let b = pairs[i].1;
                let [_, start, duration] = dense.segments()[b];
                let Some(local) = t
                    .checked_sub(start as usize)
                    .filter(|&l| l < duration as usize)
                else {
                    continue;
                };
                let post = &posts[i];
                let k = post.cols.len();
                for (&col, &o) in post.cols.iter().zip(&post.occ[local * k..(local + 1) * k]) {
                    if col > 0 {
                        row[col as usize - 1] += (scale * o) as f32;
                    }
                }
            }
        }
    }
    Array3::from_shape_vec((num_seqs, num_frames, num_symbols), flat)
        .expect("one value per element of log_probs")
}

/// The CTC loss of each supervision segment against its graph (k2's `ctc_loss` with
/// `reduction="none"`), with `output_beam` as k2's; see [`ctc_loss_with`].
pub fn ctc_loss<'g>(
    graphs: impl Into<FsaVecRef<'g>>,
    dense: &DenseFsaVecOf<'_>,
    output_beam: f32,
) -> Result<CtcLoss, Error> {
    ctc_loss_with(
        graphs,
        dense,
        &CtcLossConfig {
            output_beam,
            ..CtcLossConfig::default()
        },
    )
}

/// The CTC loss of each supervision segment and `d(sum of loss)/d(log_probs)`.
///
/// `graphs` holds one graph per segment (e.g. from
/// [`FsaVec::ctc_graph`](crate::FsaVec::ctc_graph)) or is a single graph shared by all (an
/// `&Fsa`, borrowed, or an `FsaVec` of one). Every graph arc consumes one frame (label 0 is
/// blank), `-1` arcs the final row. A segment with no path gets `loss = +inf` (0 with
/// `zero_infinity`) and no gradient.
///
/// **Hostile values**, one rule on the exact and the pruned path: a graph arc scored NaN
/// or `+inf` is [`Error::BadScore`] (graph and arc named), and a `+inf` in `log_probs` at
/// a frame of a segment, on a symbol its graph carries, is [`Error::InfiniteLogProb`]
/// (sequence, frame and symbol named); NaN in `log_probs` is refused by [`DenseFsaVecOf`]
/// ([`Error::NanLogProb`]). `-inf` anywhere is a probability of zero. So every loss is
/// finite or `+inf`, and every gradient value finite.
pub fn ctc_loss_with<'g>(
    graphs: impl Into<FsaVecRef<'g>>,
    dense: &DenseFsaVecOf<'_>,
    config: &CtcLossConfig,
) -> Result<CtcLoss, Error> {
    let graphs = graphs.into();
    check_beam("output_beam", config.output_beam)?;
    let pairs = prepare(graphs, dense, None)?;
    let posts = pair_posteriors(
        graphs,
        dense,
        &pairs,
        config.output_beam,
        config.max_lattice_arcs,
        ("ctc_loss", "lattice arcs (CtcLossConfig::max_lattice_arcs)"),
    )?;
    let grad = gradient(dense, &[(&pairs, &posts, -1.0)]);
    let loss = posts
        .iter()
        .map(|p| {
            if p.tot == f64::NEG_INFINITY && config.zero_infinity {
                0.0
            } else {
                -p.tot
            }
        })
        .collect();
    Ok(CtcLoss { loss, grad })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gradient_written_once_is_the_scatter_into_zeros() {
        // overlapping segments on one sequence, a frame no segment covers, a pair without
        // a path, columns with and without label -1
        let x = Array3::<f32>::zeros((3, 6, 4));
        let segments = [[0, 1, 4], [2, 0, 6], [0, 0, 3], [1, 2, 2]];
        let dense = DenseFsaVecOf::borrowed(x.view(), &segments, 0).unwrap();
        let pairs: Vec<(usize, usize)> = (0..4).map(|i| (i, i)).collect();
        let mut value = 0.1f64;
        let posts: Vec<Posteriors> = segments
            .iter()
            .enumerate()
            .map(|(i, &[_, _, frames])| {
                let cols = [vec![0, 1, 3], vec![2, 4], vec![1, 2, 3, 4], vec![4]][i].clone();
                if i == 3 {
                    return Posteriors {
                        tot: f64::NEG_INFINITY,
                        cols,
                        occ: Vec::new(),
                    };
                }
                let occ = (0..frames as usize * cols.len())
                    .map(|_| {
                        value = (value * 7.3) % 1.0;
                        value
                    })
                    .collect();
                Posteriors {
                    tot: 0.0,
                    cols,
                    occ,
                }
            })
            .collect();
        let bits = |a: &Array3<f32>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for scale in [-1.0, 0.37] {
            let mut want = Array3::<f32>::zeros((3, 6, 4));
            scatter(&mut want, &dense, &pairs, &posts, scale);
            let got = gradient(&dense, &[(&pairs, &posts, scale)]);
            assert_eq!(bits(&got), bits(&want));
            assert!(got[[0, 0, 0]] != 0.0 && got[[1, 0, 0]] == 0.0);
        }
        // two groups (as MMI's numerator and denominator): the second scattered after the
        // first, with its own pairs (all segments against pair 1's posteriors reversed)
        let den_pairs: Vec<(usize, usize)> = (0..4).map(|i| (0, 3 - i)).collect();
        let den_posts: Vec<Posteriors> = (0..4).map(|i| posts[3 - i].clone()).collect();
        let mut want = Array3::<f32>::zeros((3, 6, 4));
        scatter(&mut want, &dense, &pairs, &posts, -1.0);
        scatter(&mut want, &dense, &den_pairs, &den_posts, 0.37);
        let got = gradient(
            &dense,
            &[(&pairs, &posts, -1.0), (&den_pairs, &den_posts, 0.37)],
        );
        assert_eq!(bits(&got), bits(&want));
    }
}
