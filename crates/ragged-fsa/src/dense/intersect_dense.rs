//! `intersect_dense`: the exact intersection of graphs with dense FSAs (k2's
//! `IntersectDense`), pruned afterwards with forward-backward scores to `output_beam`.

use rayon::prelude::*;

use crate::arc::Arc;
use crate::dense::banded::{Banded, WIDTH};
use crate::dense::dense_fsa::DenseFsaVecOf;
use crate::error::Error;
use crate::fsa::{FsaVec, FsaVecRef};
use crate::view::{ArcBudget, Built, FsaView, MAX_OUTPUT_ARCS};

/// Pairs of (graph index, dense FSA index) to intersect: `a_to_b_map` when given (one entry
/// per graph), else graph `i` with dense FSA `i`, or one graph shared by every dense FSA.
pub(crate) fn pair_up(
    num_graphs: usize,
    num_dense: usize,
    a_to_b_map: Option<&[i32]>,
) -> Result<Vec<(usize, usize)>, Error> {
    match a_to_b_map {
        Some(map) => {
            if map.len() != num_graphs {
                return Err(Error::CountMismatch {
                    what: "entries in a_to_b_map",
                    expected: num_graphs,
                    got: map.len(),
                });
            }
            map.iter()
                .enumerate()
                .map(|(position, &value)| {
                    if value < 0 || value as usize >= num_dense {
                        Err(Error::MapOutOfRange {
                            map: "a_to_b_map",
                            position,
                            value,
                            size: num_dense,
                        })
                    } else {
                        Ok((position, value as usize))
                    }
                })
                .collect()
        }
        None if num_graphs == num_dense => Ok((0..num_dense).map(|i| (i, i)).collect()),
        None if num_graphs == 1 => Ok((0..num_dense).map(|i| (0, i)).collect()),
        None => Err(Error::CountMismatch {
            what: "graphs",
            expected: num_dense,
            got: num_graphs,
        }),
    }
}

/// Checks that every label of graph `fsa_idx` is in `-1..num_symbols`.
pub(crate) fn check_labels(
    view: FsaView<'_>,
    fsa_idx: usize,
    num_symbols: usize,
) -> Result<(), Error> {
    for (arc_idx, arc) in view.arcs.iter().enumerate() {
        if arc.label < -1 || arc.label as i64 >= num_symbols as i64 {
            return Err(Error::LabelOutOfRange {
                fsa: fsa_idx,
                arc: arc_idx,
                label: arc.label,
                num_symbols,
            });
        }
    }
    Ok(())
}

/// Checks a beam: positive (infinity allowed), not NaN.
pub(crate) fn check_beam(name: &'static str, value: f32) -> Result<(), Error> {
    if value.is_nan() || value <= 0.0 {
        return Err(Error::BadBeam { name, value });
    }
    Ok(())
}

/// Below this much work (arcs times frames, summed) the pairs run on the calling thread.
pub(crate) const PARALLEL_MIN_WORK: usize = 1 << 15;

/// Runs `f` over the pairs, in parallel when there is enough work.
pub(crate) fn map_pairs<R: Send>(
    pairs: &[(usize, usize)],
    work: impl Fn(usize, usize) -> usize,
    f: impl Fn(usize, usize) -> R + Sync + Send,
) -> Vec<R> {
    let total: usize = pairs.iter().map(|&(a, b)| work(a, b)).sum();
    if pairs.len() > 1 && total >= PARALLEL_MIN_WORK {
        pairs.par_iter().map(|&(a, b)| f(a, b)).collect()
    } else {
        pairs.iter().map(|&(a, b)| f(a, b)).collect()
    }
}

/// Forward and backward Viterbi scores of one graph against one dense FSA, as k2 keeps them:
/// `fwd[t * S + s]` (best score from the start to state `s` after `t` frames) and
/// `bwd[t * S + s]` (best score from state `s` at frame `t` to the final state after the
/// last row), for `t in 0..=rows`, in `f32` as k2 accumulates them.
pub(crate) struct Viterbi {
    pub(crate) fwd: Vec<f32>,
    pub(crate) bwd: Vec<f32>,
    pub(crate) cutoff: f32,
    /// The smaller of the forward and backward best scores (`-inf`: no path).
    pub(crate) tot: f32,
    /// With the forward pass restricted to the widened beam, each row's band of the states
    /// it kept (`within[t].0..within[t].1`; rows past the list have none), which holds
    /// every state the beam keeps; `None` after a full forward pass.
    pub(crate) within: Option<Vec<(usize, usize)>>,
}

#[inline]
fn arc_score(arc: &Arc, row: &[f32]) -> f32 {
    arc.score + row[(arc.label + 1) as usize]
}

pub(crate) fn viterbi(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    output_beam: f32,
) -> Viterbi {
    viterbi_with(graph, dense, num_cols, output_beam, true)
}

/// [`viterbi`], with `restrict` choosing the forward pass: over every state (`false`), or
/// (`true`) only from the states within a widened beam of the backward best, the others
/// left at `-inf`; the forward scores of every state the beam keeps, and so the cutoff,
/// are the same bits either way (see [`forward_within`]).
pub(crate) fn viterbi_with(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    output_beam: f32,
    restrict: bool,
) -> Viterbi {
    viterbi_reusing(
        graph,
        dense,
        num_cols,
        output_beam,
        restrict,
        Vec::new(),
        Vec::new(),
    )
}

/// [`viterbi_with`] writing into `fwd` and `bwd` (whatever they hold), which a caller scoring
/// many segments hands back from the last [`Viterbi`]: their memory is then reused instead
/// of taken (and faulted in) afresh per segment.
pub(crate) fn viterbi_reusing(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    output_beam: f32,
    restrict: bool,
    fwd: Vec<f32>,
    bwd: Vec<f32>,
) -> Viterbi {
    viterbi_in(
        graph,
        dense,
        num_cols,
        output_beam,
        restrict,
        true,
        (fwd, bwd),
    )
}

/// [`viterbi_reusing`], with `banded` choosing whether a graph whose arcs advance by 0 to 2
/// states takes the [`Banded`] steps (the same bits; `false` for the tests that show it).
fn viterbi_in(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    output_beam: f32,
    restrict: bool,
    banded: bool,
    (mut fwd, mut bwd): (Vec<f32>, Vec<f32>),
) -> Viterbi {
    let num_states = graph.num_states();
    let rows = dense.len() / num_cols;
    let slots = (rows + 1) * num_states;
    fwd.clear();
    fwd.resize(slots, f32::NEG_INFINITY);
    // (the backward passes write every slot of the frames before the last row: only that
    // row is filled here, whatever the reused buffer held before)
    bwd.resize(slots, f32::NEG_INFINITY);
    bwd.truncate(slots);
    bwd[slots - num_states..].fill(f32::NEG_INFINITY);
    if num_states == 0 {
        return Viterbi {
            fwd,
            bwd,
            cutoff: f32::INFINITY,
            tot: f32::NEG_INFINITY,
            within: None,
        };
    }
    fwd[0] = 0.0;
    bwd[rows * num_states + num_states - 1] = 0.0;
    let entry = UniformEntry::new(graph).map(|e| if banded { e.with_band(graph) } else { e });
    match &entry {
        Some(entry) => entry.backward(dense, num_cols, bwd.as_mut_slice()),
        None => general_backward(graph, dense, num_cols, bwd.as_mut_slice()),
    }
    let widened = if restrict {
        widened_cutoff(&bwd, rows, output_beam)
    } else {
        None
    };
    let mut within = widened.map(|_| Vec::with_capacity(rows + 1));
    match (widened, &entry, &mut within) {
        (
            Some(loose),
            Some(
                entry @ UniformEntry {
                    banded: Some(band), ..
                },
            ),
            Some(bands),
        ) => entry.forward_within(band, dense, num_cols, &bwd, loose, &mut fwd, bands),
        (Some(loose), _, Some(bands)) => {
            forward_within(graph, dense, num_cols, &bwd, loose, &mut fwd, bands)
        }
        (_, Some(entry), _) => entry.forward(dense, num_cols, &mut fwd),
        (_, None, _) => general_forward(graph, dense, num_cols, &mut fwd),
    }
    let tot_fwd = fwd[rows * num_states + num_states - 1];
    let tot_bwd = bwd[0];
    Viterbi {
        fwd,
        bwd,
        cutoff: tot_fwd.min(tot_bwd) - output_beam,
        tot: tot_fwd.min(tot_bwd),
        within,
    }
}

/// A cutoff below every state the beam keeps, by more than `f32` rounding can move a sum:
/// `tot_bwd - beam - slack`, or `None` when there is no path, the beam is not finite or the
/// segment is too long for the bound.
///
/// On the best path into a kept state `(t, d)`, its predecessor `s` has, in exact
/// arithmetic, `fwd[s] + bwd[s] >= fwd[d] + bwd[d]` (`bwd[s]` is at least the arc's score
/// plus `bwd[d]`, and `fwd[d]` is `fwd[s]` plus that score). In `f32` four roundings (the
/// two Viterbi additions and the two sums) take at most half an ulp of `M` each, `M`
/// bounding the magnitudes involved: `|bwd|`, and `|fwd + bwd|` and `|fwd|` on the states
/// within the widened beam, at most `max |bwd| + |tot| + beam + slack` (below `M`, doubled
/// here, while the slack stays below half of it). So along `rows + 1` steps the path's
/// sums fall at most `(rows + 1) * 2^-22 * M` below the kept state's, and the forward total
/// (which the cutoff takes if smaller) at most as much below `tot_bwd`; the slack is twice
/// their sum.
fn widened_cutoff(bwd: &[f32], rows: usize, output_beam: f32) -> Option<f32> {
    let tot = bwd[0];
    if !tot.is_finite() || !output_beam.is_finite() || rows >= 1 << 18 {
        return None;
    }
    // (in f32, where `abs` and `max` are exact, so the same value as in f64; eight lanes
    // of selects, which the compiler vectorizes)
    let mut lanes = [0f32; 8];
    let chunks = bwd.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (l, &b) in lanes.iter_mut().zip(chunk) {
            let a = b.abs();
            let a = if a < f32::INFINITY { a } else { 0.0 };
            *l = if a > *l { a } else { *l };
        }
    }
    for (l, &b) in lanes.iter_mut().zip(rest) {
        let a = b.abs();
        if a < f32::INFINITY && a > *l {
            *l = a;
        }
    }
    let max_bwd = lanes.iter().fold(0f32, |m, &l| if l > m { l } else { m }) as f64;
    let beam = output_beam as f64;
    let m = 2.0 * (max_bwd + (tot as f64).abs() + beam) + 1.0;
    // (rows < 2^18: the slack is below m / 2)
    let slack = 4.0 * (rows as f64 + 1.0) * m * 2f64.powi(-22);
    if m + slack > f32::MAX as f64 / 4.0 {
        // sums could overflow to infinity, outside the bound's reasoning
        return None;
    }
    let loose = tot as f64 - beam - slack;
    // rounded to f32 downwards, with room to spare
    let loose = (loose - loose.abs() * 2f64.powi(-20)) as f32;
    loose.is_finite().then_some(loose)
}

/// The forward Viterbi pass from the states within `loose` (`fwd + bwd > loose`) only:
/// each frame's arcs leave the band of its states that pass (others set to `-inf`), arc by
/// arc as [`general_forward`] (the same bits as the per-destination pass). With `loose`
/// from [`widened_cutoff`], every state the beam keeps gets the forward score of the full
/// pass: its best path stays within the widened beam.
fn forward_within(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    bwd: &[f32],
    loose: f32,
    fwd: &mut [f32],
    bands: &mut Vec<(usize, usize)>,
) {
    let num_states = graph.num_states();
    let rows = dense.len() / num_cols;
    let within = |x: f32| x > loose;
    if !within(fwd[0] + bwd[0]) {
        fwd[0] = f32::NEG_INFINITY;
        return;
    }
    bands.push((0, 1));
    let (mut lo, mut hi) = (0usize, 1usize);
    for t in 0..rows {
        let row = &dense[t * num_cols..(t + 1) * num_cols];
        let (cur, next) = fwd[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
        let (mut dlo, mut dhi) = (usize::MAX, 0usize);
        for (s, &f) in cur.iter().enumerate().take(hi).skip(lo) {
            if f == f32::NEG_INFINITY {
                continue;
            }
            for arc in graph.state_arcs(s) {
                let v = f + arc_score(arc, row);
                let d = arc.dest_state as usize;
                let slot = &mut next[d];
                if v > *slot {
                    *slot = v;
                    dlo = dlo.min(d);
                    dhi = dhi.max(d + 1);
                }
            }
        }
        // drop the states outside the widened beam; the band of those left
        let b = &bwd[(t + 1) * num_states..(t + 2) * num_states];
        (lo, hi) = (usize::MAX, 0);
        for d in dlo..dhi {
            if within(next[d] + b[d]) {
                lo = lo.min(d);
                hi = d + 1;
            } else {
                next[d] = f32::NEG_INFINITY;
            }
        }
        if hi == 0 {
            return;
        }
        bands.push((lo, hi));
    }
}

/// The forward Viterbi pass of any graph, arc by arc (`fwd[0]` set, everything else
/// `-inf`).
fn general_forward(graph: FsaView<'_>, dense: &[f32], num_cols: usize, fwd: &mut [f32]) {
    let num_states = graph.num_states();
    let rows = dense.len() / num_cols;
    for t in 0..rows {
        let row = &dense[t * num_cols..(t + 1) * num_cols];
        let (cur, next) = fwd[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
        for (state, &f) in cur.iter().enumerate() {
            if f == f32::NEG_INFINITY {
                continue;
            }
            for arc in graph.state_arcs(state) {
                let v = f + arc_score(arc, row);
                let slot = &mut next[arc.dest_state as usize];
                if v > *slot {
                    *slot = v;
                }
            }
        }
    }
}

/// The backward Viterbi pass of any graph, arc by arc (the last slot of `bwd` set,
/// everything else `-inf`).
fn general_backward(graph: FsaView<'_>, dense: &[f32], num_cols: usize, bwd: &mut [f32]) {
    let num_states = graph.num_states();
    let rows = dense.len() / num_cols;
    for t in (0..rows).rev() {
        let row = &dense[t * num_cols..(t + 1) * num_cols];
        let (cur, next) = bwd[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
        for (state, slot) in cur.iter_mut().enumerate() {
            let mut best = f32::NEG_INFINITY;
            for arc in graph.state_arcs(state) {
                let b = next[arc.dest_state as usize];
                if b == f32::NEG_INFINITY {
                    continue;
                }
                let v = arc_score(arc, row) + b;
                if v > best {
                    best = v;
                }
            }
            *slot = best;
        }
    }
}

/// Both Viterbi passes of any graph, arc by arc.
#[cfg(test)]
fn general_passes(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    fwd: &mut [f32],
    bwd: &mut [f32],
) {
    general_forward(graph, dense, num_cols, fwd);
    general_backward(graph, dense, num_cols, bwd);
}

/// A graph in which all arcs into a state have one label and one score (CTC graphs, HMM
/// topologies): an arc's score on a frame then depends on its destination only, `c[d] =
/// score + dense[label + 1]`. Since `f32` rounding is monotonic, the largest `f + c[d]`
/// over the arcs into `d` is exactly `max(f) + c[d]`, and the largest `c[d] + b[d]` over a
/// state's arcs is a maximum over their destinations of one sum per state: the same values
/// as arc by arc, with one addition per state and frame instead of one per arc.
struct UniformEntry {
    /// Per state: the column its arcs read (`usize::MAX`: no arc enters it) and their score.
    col: Vec<usize>,
    score: Vec<f32>,
    /// The sources of the arcs into each state (`sources[into[d]..into[d + 1]]`).
    into: Vec<u32>,
    sources: Vec<u32>,
    /// The destinations of the arcs out of each state (`dests[out_splits[s]..out_splits[s +
    /// 1]]`), the graph's arcs in order.
    out_splits: Vec<u32>,
    dests: Vec<u32>,
    /// The graph's arcs as masks when each advances by 0 to 2 states (CTC graphs).
    banded: Option<Banded>,
}

impl UniformEntry {
    fn new(graph: FsaView<'_>) -> Option<Self> {
        let num_states = graph.num_states();
        let mut col = vec![usize::MAX; num_states];
        let mut score = vec![0f32; num_states];
        let mut into = vec![0u32; num_states + 1];
        for arc in graph.arcs {
            let d = arc.dest_state as usize;
            let c = (arc.label + 1) as usize;
            if col[d] == usize::MAX {
                (col[d], score[d]) = (c, arc.score);
            } else if col[d] != c || score[d].to_bits() != arc.score.to_bits() {
                return None;
            }
            into[d + 1] += 1;
        }
        for d in 0..num_states {
            into[d + 1] += into[d];
        }
        let mut fill = into.clone();
        let mut sources = vec![0u32; graph.arcs.len()];
        for arc in graph.arcs {
            let slot = &mut fill[arc.dest_state as usize];
            sources[*slot as usize] = arc.src_state as u32;
            *slot += 1;
        }
        Some(Self {
            col,
            score,
            into,
            sources,
            out_splits: (0..=num_states)
                .map(|s| {
                    if s == num_states {
                        graph.arcs.len() as u32
                    } else {
                        graph.arc_range(s).start as u32
                    }
                })
                .collect(),
            dests: graph.arcs.iter().map(|a| a.dest_state as u32).collect(),
            banded: None,
        })
    }

    /// The same, with the [`Banded`] steps when `graph`'s arcs allow them.
    fn with_band(mut self, graph: FsaView<'_>) -> Self {
        self.banded = Banded::new(graph);
        self
    }

    /// [`forward_within`] with the [`Banded`] steps: each frame's destinations from the
    /// first state of the previous frame's band to `WIDTH - 1` past its last, all at once.
    #[allow(clippy::too_many_arguments)]
    fn forward_within(
        &self,
        band: &Banded,
        dense: &[f32],
        num_cols: usize,
        bwd: &[f32],
        loose: f32,
        fwd: &mut [f32],
        bands: &mut Vec<(usize, usize)>,
    ) {
        let num_states = self.col.len();
        let rows = dense.len() / num_cols;
        let within = |x: f32| x > loose;
        if !within(fwd[0] + bwd[0]) {
            fwd[0] = f32::NEG_INFINITY;
            return;
        }
        bands.push((0, 1));
        // the previous frame's band, shifted by WIDTH - 1 and `-inf` elsewhere
        let mut prev = vec![f32::NEG_INFINITY; num_states + WIDTH - 1];
        let mut entry = vec![f32::NEG_INFINITY; num_states];
        let (mut lo, mut hi) = (0usize, 1usize);
        for t in 0..rows {
            let row = &dense[t * num_cols..(t + 1) * num_cols];
            let (cur, next) = fwd[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
            prev[lo + WIDTH - 1..hi + WIDTH - 1].copy_from_slice(&cur[lo..hi]);
            let dhi = (hi + WIDTH - 1).min(num_states);
            for (d, e) in entry.iter_mut().enumerate().take(dhi).skip(lo) {
                *e = self.entry(row, d);
            }
            band.forward_step(&prev, &entry, next, lo, dhi);
            prev[lo + WIDTH - 1..hi + WIDTH - 1].fill(f32::NEG_INFINITY);
            // drop the states outside the widened beam; the band of those left
            let b = &bwd[(t + 1) * num_states..(t + 2) * num_states];
            let (dlo, mut last) = (lo, 0usize);
            lo = usize::MAX;
            for d in dlo..dhi {
                if within(next[d] + b[d]) {
                    lo = lo.min(d);
                    last = d + 1;
                } else {
                    next[d] = f32::NEG_INFINITY;
                }
            }
            hi = last;
            if hi == 0 {
                return;
            }
            bands.push((lo, hi));
        }
    }

    /// Both passes, with the values [`general_passes`] gives.
    #[cfg(test)]
    fn passes(&self, dense: &[f32], num_cols: usize, fwd: &mut [f32], bwd: &mut [f32]) {
        self.forward(dense, num_cols, fwd);
        self.backward(dense, num_cols, bwd);
    }

    /// The score of the arcs into `d` on a frame (`-inf`: no arc enters it).
    #[inline]
    fn entry(&self, row: &[f32], d: usize) -> f32 {
        match self.col[d] {
            usize::MAX => f32::NEG_INFINITY,
            c => self.score[d] + row[c],
        }
    }

    /// The forward pass, with the values [`general_forward`] gives. `NaN` sums are dropped
    /// as its `>` comparisons drop them.
    fn forward(&self, dense: &[f32], num_cols: usize, fwd: &mut [f32]) {
        let num_states = self.col.len();
        let rows = dense.len() / num_cols;
        let entry = |row: &[f32], d: usize| self.entry(row, d);
        if let Some(band) = &self.banded {
            let mut prev = vec![f32::NEG_INFINITY; num_states + WIDTH - 1];
            let mut e = vec![f32::NEG_INFINITY; num_states];
            for t in 0..rows {
                let row = &dense[t * num_cols..(t + 1) * num_cols];
                let (cur, next) =
                    fwd[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
                prev[WIDTH - 1..].copy_from_slice(cur);
                for (d, x) in e.iter_mut().enumerate() {
                    *x = entry(row, d);
                }
                band.forward_step(&prev, &e, next, 0, num_states);
            }
            return;
        }
        for t in 0..rows {
            let row = &dense[t * num_cols..(t + 1) * num_cols];
            let (cur, next) = fwd[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
            for (d, slot) in next.iter_mut().enumerate() {
                let sources = &self.sources[self.into[d] as usize..self.into[d + 1] as usize];
                let m = sources
                    .iter()
                    .map(|&s| cur[s as usize])
                    .fold(f32::NEG_INFINITY, f32::max);
                if m == f32::NEG_INFINITY {
                    continue;
                }
                let v = m + entry(row, d);
                if v > f32::NEG_INFINITY {
                    *slot = v;
                }
            }
        }
    }

    /// The backward pass, with the values [`general_backward`] gives.
    fn backward(&self, dense: &[f32], num_cols: usize, bwd: &mut [f32]) {
        let num_states = self.col.len();
        let rows = dense.len() / num_cols;
        let entry = |row: &[f32], d: usize| self.entry(row, d);
        // (WIDTH - 1 entries past the states for the banded steps, never written)
        let mut reach = vec![f32::NEG_INFINITY; num_states + WIDTH - 1];
        for t in (0..rows).rev() {
            let row = &dense[t * num_cols..(t + 1) * num_cols];
            let (cur, next) = bwd[t * num_states..(t + 2) * num_states].split_at_mut(num_states);
            // (without a branch on `next[d] == -inf`: the sum is then `-inf` too, or NaN
            // from `+inf`, which is dropped as the arc-by-arc pass drops it)
            for (d, (r, &b)) in reach.iter_mut().zip(next.iter()).enumerate() {
                let v = entry(row, d) + b;
                *r = if v.is_nan() { f32::NEG_INFINITY } else { v };
            }
            if let Some(band) = &self.banded {
                band.backward_step(&reach, cur);
                continue;
            }
            // (NaN never enters `reach`, so `>` is f32::max here, and the order of
            // general_backward's comparisons)
            for (slot, w) in cur.iter_mut().zip(self.out_splits.windows(2)) {
                let mut best = f32::NEG_INFINITY;
                for &d in &self.dests[w[0] as usize..w[1] as usize] {
                    let r = reach[d as usize];
                    if r > best {
                        best = r;
                    }
                }
                *slot = best;
            }
        }
    }
}

/// One pair's lattice: the FSA (local arc map into the graph) and, per arc, the row within
/// the pair's scores and the column.
pub(crate) type Part = (Built, Vec<(u32, u32)>);

/// What k2's pruning keeps of one graph x dense FSA trellis: a state `(t, s)` when
/// `fwd + bwd > tot - beam`, an arc when its destination is kept and
/// `fwd[src] + score + bwd[dest] > tot - beam`, where `tot` is the smaller of the forward
/// and backward best scores. Kept states are numbered by frame, then by graph state.
pub(crate) struct KeptTrellis<'a> {
    graph: FsaView<'a>,
    dense: &'a [f32],
    num_cols: usize,
    vit: Viterbi,
    /// Per (frame, graph state) slot, the kept state's number (`u32::MAX`: pruned).
    id: Vec<u32>,
    /// The kept states of frame `t` are numbered `frame_ids[t]..frame_ids[t + 1]`.
    pub(crate) frame_ids: Vec<usize>,
}

impl<'a> KeptTrellis<'a> {
    /// The kept part of the trellis, or `None` when no path survives (no states, or a best
    /// score of `-inf` or NaN).
    pub(crate) fn new(
        graph: FsaView<'a>,
        dense: &'a [f32],
        num_cols: usize,
        output_beam: f32,
    ) -> Option<Self> {
        let num_states = graph.num_states();
        let vit = viterbi(graph, dense, num_cols, output_beam);
        if num_states == 0 || vit.tot == f32::NEG_INFINITY || vit.tot.is_nan() {
            return None;
        }
        let rows = dense.len() / num_cols;
        let mut id = vec![u32::MAX; (rows + 1) * num_states];
        let mut frame_ids = Vec::with_capacity(rows + 2);
        let mut num_kept = 0u32;
        for (slot, id) in id.iter_mut().enumerate() {
            if slot % num_states == 0 {
                frame_ids.push(num_kept as usize);
            }
            if vit.fwd[slot] + vit.bwd[slot] > vit.cutoff {
                *id = num_kept;
                num_kept += 1;
            }
        }
        frame_ids.push(num_kept as usize);
        Some(Self {
            graph,
            dense,
            num_cols,
            vit,
            id,
            frame_ids,
        })
    }

    /// The number of kept states.
    pub(crate) fn num_kept(&self) -> usize {
        self.frame_ids.last().copied().unwrap_or(0)
    }

    /// Visits the kept arcs leaving frame `t`'s kept states, in order (source, then the
    /// graph's arc order): source and destination numbers, the arc's index within the
    /// graph, the graph arc and its score on the frame (graph score plus dense score, in
    /// `f32`).
    pub(crate) fn for_each_arc(&self, t: usize, f: &mut dyn FnMut(u32, u32, usize, &Arc, f32)) {
        let num_states = self.graph.num_states();
        let num_cols = self.num_cols;
        let row = &self.dense[t * num_cols..(t + 1) * num_cols];
        let base = self.graph.splits[0];
        for state in 0..num_states {
            let slot = t * num_states + state;
            let src = self.id[slot];
            if src == u32::MAX {
                continue;
            }
            let f_score = self.vit.fwd[slot];
            let first = (self.graph.splits[state] - base) as usize;
            for (k, arc) in self.graph.state_arcs(state).iter().enumerate() {
                let dest_slot = (t + 1) * num_states + arc.dest_state as usize;
                let dest = self.id[dest_slot];
                if dest == u32::MAX {
                    continue;
                }
                let score = arc_score(arc, row);
                if f_score + score + self.vit.bwd[dest_slot] > self.vit.cutoff {
                    f(src, dest, first + k, arc, score);
                }
            }
        }
    }
}

/// Intersects one graph with one dense FSA (its rows of the scores) and prunes to
/// `output_beam` as k2 does (see [`KeptTrellis`]). Returns the lattice (local arc map into
/// the graph) and, per arc, the row within these scores and the column. The kept arcs are
/// counted first and taken from `budget`; past it, nothing is stored and the count is
/// returned as the error.
pub(crate) fn intersect_one(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    output_beam: f32,
    budget: &ArcBudget,
) -> Result<Part, usize> {
    let Some(kept) = KeptTrellis::new(graph, dense, num_cols, output_beam) else {
        return Ok((Built::empty(), Vec::new()));
    };
    let rows = dense.len() / num_cols;
    let mut count = 0usize;
    for t in 0..rows {
        kept.for_each_arc(t, &mut |_, _, _, _, _| count += 1);
    }
    if !budget.take(count) {
        return Err(count);
    }
    // per kept state, its arc count; then the splits
    let mut splits = vec![0i32; kept.num_kept() + 1];
    let mut arcs = Vec::with_capacity(count);
    let mut arc_map = Vec::with_capacity(count);
    let mut b_map = Vec::with_capacity(count);
    for t in 0..rows {
        kept.for_each_arc(t, &mut |src, dest, local, arc, score| {
            splits[src as usize + 1] += 1;
            arcs.push(Arc::new(src as i32, dest as i32, arc.label, score));
            arc_map.push(local as i32);
            b_map.push((t as u32, (arc.label + 1) as u32));
        });
    }
    for i in 1..splits.len() {
        splits[i] += splits[i - 1];
    }
    Ok((
        Built {
            splits,
            arcs,
            arc_map,
        },
        b_map,
    ))
}

/// The per-pair lattices, or [`Error::OutputLimit`] when some pair was past the budget; the
/// error's count is the sum over every pair (kept arcs where built, counted arcs where not).
pub(crate) fn collect_parts(
    parts: Vec<Result<Part, usize>>,
    budget: &ArcBudget,
    op: &'static str,
    what: &'static str,
) -> Result<Vec<Part>, Error> {
    if parts.iter().all(|p| p.is_ok()) {
        return Ok(parts.into_iter().flatten().collect());
    }
    let count = parts
        .iter()
        .map(|p| match p {
            Ok((built, _)) => built.arcs.len(),
            Err(n) => *n,
        })
        .fold(0usize, usize::saturating_add);
    Err(Error::OutputLimit {
        op,
        what,
        count,
        limit: budget.limit,
    })
}

/// Checks the graphs against the dense FSAs and pairs them up.
pub(crate) fn prepare(
    a_fsas: FsaVecRef<'_>,
    b: &DenseFsaVecOf<'_>,
    a_to_b_map: Option<&[i32]>,
) -> Result<Vec<(usize, usize)>, Error> {
    let pairs = pair_up(a_fsas.num_fsas(), b.num_fsas(), a_to_b_map)?;
    for i in 0..a_fsas.num_fsas() {
        check_labels(a_fsas.view(i), i, b.num_symbols())?;
    }
    Ok(pairs)
}

/// The most (frame, graph state) pairs one exact intersection may hold (its forward and
/// backward scores take 8 bytes each): 2^28, 2 GiB.
pub const MAX_TRELLIS_STATES: usize = 1 << 28;

/// Refuses pairs whose trellis (graph states x (frames + 2)) exceeds [`MAX_TRELLIS_STATES`].
pub(crate) fn check_trellis_size(
    a_fsas: FsaVecRef<'_>,
    b: &DenseFsaVecOf<'_>,
    pairs: &[(usize, usize)],
) -> Result<(), Error> {
    for &(a, bi) in pairs {
        let states = a_fsas.view(a).num_states();
        let slots = (b.duration(bi) + 2).checked_mul(states);
        if slots.is_none_or(|s| s > MAX_TRELLIS_STATES) {
            return Err(Error::TooLarge {
                what: "graph states x frames of one segment (intersect_dense_pruned bounds it)",
            });
        }
    }
    Ok(())
}

/// Intersects each graph in `a_fsas` with its dense FSA in `b` (k2's `intersect_dense`),
/// keeping the arcs on paths within `output_beam` of the best path (`f32::INFINITY` keeps
/// every arc on a successful path).
///
/// Pairing: with `a_to_b_map`, graph `i` goes with dense FSA `a_to_b_map[i]` (any order,
/// repeats allowed); without it, graph `i` with dense FSA `i`, or a single graph with every
/// dense FSA. Every arc of a graph consumes one frame, label 0 included; the `-1` arcs
/// consume the final row. The lattice has one FSA per pair, its states numbered by frame then
/// graph state; arc scores are graph score plus dense score. Returns the lattice (with the
/// graphs' attributes carried over), `a_arc_map` (lattice arc -> arc of `a_fsas`) and
/// `b_arc_map` (lattice arc -> index into [`DenseFsaVecOf::scores`]).
///
/// **Bounds.** Each pair's trellis (graph states x (frames + 2)) is at most
/// [`MAX_TRELLIS_STATES`] ([`Error::TooLarge`]), and the lattices hold at most
/// [`MAX_OUTPUT_ARCS`](crate::MAX_OUTPUT_ARCS) arcs in all: each pair counts its kept arcs
/// before storing them, and past the bound the call returns [`Error::OutputLimit`] with
/// the total count. (A graph with many parallel arcs can keep arcs x frames of them.)
pub fn intersect_dense<'g>(
    a_fsas: impl Into<FsaVecRef<'g>>,
    b: &DenseFsaVecOf<'_>,
    output_beam: f32,
    a_to_b_map: Option<&[i32]>,
) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
    intersect_dense_bounded(
        a_fsas.into(),
        b,
        output_beam,
        a_to_b_map,
        MAX_OUTPUT_ARCS,
        ("intersect_dense", "lattice arcs (MAX_OUTPUT_ARCS)"),
    )
}

/// [`intersect_dense`] with the bound on lattice arcs given, and the operation and bound
/// names its error carries.
pub(crate) fn intersect_dense_bounded(
    a_fsas: FsaVecRef<'_>,
    b: &DenseFsaVecOf<'_>,
    output_beam: f32,
    a_to_b_map: Option<&[i32]>,
    max_arcs: usize,
    (op, what): (&'static str, &'static str),
) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
    check_beam("output_beam", output_beam)?;
    let pairs = prepare(a_fsas, b, a_to_b_map)?;
    check_trellis_size(a_fsas, b, &pairs)?;
    // k2's layout, built now for a borrowed form (a failed allocation is an error)
    b.try_scores()?;
    let num_cols = b.num_cols();
    let budget = ArcBudget::new(max_arcs);
    let parts = map_pairs(
        &pairs,
        |a, bi| a_fsas.arc_range(a).len() * (b.duration(bi) + 1),
        |a, bi| {
            intersect_one(
                a_fsas.view(a),
                b.fsa_scores(bi),
                num_cols,
                output_beam,
                &budget,
            )
        },
    );
    let parts = collect_parts(parts, &budget, op, what)?;
    assemble(a_fsas, b, &pairs, parts)
}

/// Turns per-pair lattices into one FsaVec with global arc maps.
pub(crate) fn assemble(
    a_fsas: FsaVecRef<'_>,
    b: &DenseFsaVecOf<'_>,
    pairs: &[(usize, usize)],
    parts: Vec<(Built, Vec<(u32, u32)>)>,
) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
    let num_cols = b.num_cols();
    let total_arcs = parts
        .iter()
        .try_fold(0usize, |acc, p| acc.checked_add(p.0.arcs.len()))
        .filter(|&n| n <= i32::MAX as usize)
        .ok_or(Error::TooLarge {
            what: "lattice arcs",
        })?;
    let mut b_arc_map = Vec::with_capacity(total_arcs);
    for ((_, bi), (_, bmap)) in pairs.iter().zip(&parts) {
        let row0 = b.row_splits()[*bi] as usize;
        b_arc_map.extend(
            bmap.iter()
                .map(|&(t, col)| ((row0 + t as usize) * num_cols + col as usize) as i32),
        );
    }
    let offsets: Vec<usize> = pairs
        .iter()
        .map(|&(a, _)| a_fsas.arc_range(a).start)
        .collect();
    let built: Vec<Built> = parts.into_iter().map(|p| p.0).collect();
    let (lattice, a_arc_map) = FsaVec::from_built(built, &offsets, a_fsas.attrs());
    Ok((lattice, a_arc_map, b_arc_map))
}

#[cfg(test)]
mod tests {
    //! The per-destination passes against the arc-by-arc ones: the same bits.
    use super::*;
    use crate::{create_fsa_vec, Fsa};

    fn passes_both(graph: FsaView<'_>, dense: &[f32], num_cols: usize) -> [Vec<f32>; 4] {
        let slots = (dense.len() / num_cols + 1) * graph.num_states();
        let fresh = || {
            let mut fwd = vec![f32::NEG_INFINITY; slots];
            let mut bwd = vec![f32::NEG_INFINITY; slots];
            fwd[0] = 0.0;
            bwd[slots - 1] = 0.0;
            (fwd, bwd)
        };
        let (mut f1, mut b1) = fresh();
        general_passes(graph, dense, num_cols, &mut f1, &mut b1);
        let (mut f2, mut b2) = fresh();
        let entry = UniformEntry::new(graph).expect("a uniform graph");
        entry.passes(dense, num_cols, &mut f2, &mut b2);
        // and the banded steps, where the graph allows them
        let entry = entry.with_band(graph);
        if entry.banded.is_some() {
            let (mut f3, mut b3) = fresh();
            entry.passes(dense, num_cols, &mut f3, &mut b3);
            assert_eq!(bits(&f2), bits(&f3), "banded forward");
            assert_eq!(bits(&b2), bits(&b3), "banded backward");
        }
        [f1, b1, f2, b2]
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn uniform_entry_passes_give_the_same_bits() {
        let mut state = 5u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        // hostile values too: NaN and infinite graph scores, -inf and huge dense scores
        let specials = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            -f32::MAX,
            -0.0,
        ];
        let pick = |next: &mut dyn FnMut(u64) -> u64, scale: f32| -> f32 {
            if next(12) == 0 {
                specials[next(6) as usize]
            } else {
                (next(1 << 20) as f32 / (1 << 20) as f32 - 0.5) * scale
            }
        };
        let mut uniform = 0;
        for case in 0..400 {
            let n = 2 + next(9) as usize;
            let symbols = 1 + next(4) as usize;
            // per state one label and one score for every arc into it; the last state is
            // entered by -1 arcs
            let label: Vec<i32> = (0..n)
                .map(|d| {
                    if d == n - 1 {
                        -1
                    } else {
                        next(symbols as u64) as i32
                    }
                })
                .collect();
            let score: Vec<f32> = (0..n).map(|_| pick(&mut next, 4.0)).collect();
            let mut arcs = Vec::new();
            for src in 0..n - 1 {
                for _ in 0..1 + next(4) {
                    let d = next(n as u64) as usize;
                    arcs.push(crate::Arc::new(src as i32, d as i32, label[d], score[d]));
                }
            }
            if case % 2 == 0 {
                // a CTC graph instead
                let tokens: Vec<i32> = (0..1 + next(6)).map(|_| 1 + next(3) as i32).collect();
                let vec = crate::FsaVec::ctc_graph(&[tokens], case % 4 == 0).unwrap();
                arcs = vec.view(0).arcs.to_vec();
            }
            let num_states = arcs.iter().map(|a| a.dest_state.max(a.src_state) + 1).max();
            let Ok(fsa) = Fsa::from_arcs(arcs, num_states.unwrap_or(0) as usize) else {
                continue;
            };
            let graphs = create_fsa_vec(&[fsa]);
            let view = graphs.view(0);
            if view.num_states() == 0 {
                continue;
            }
            let num_cols = view
                .arcs
                .iter()
                .map(|a| (a.label + 2) as usize)
                .max()
                .unwrap_or(1)
                .max(symbols + 1);
            let rows = 1 + next(10) as usize;
            let dense: Vec<f32> = (0..rows * num_cols)
                .map(|_| pick(&mut next, 10.0))
                .map(|x| if x.is_nan() { f32::NEG_INFINITY } else { x })
                .collect();
            if UniformEntry::new(view).is_none() {
                continue;
            }
            uniform += 1;
            let [f1, b1, f2, b2] = passes_both(view, &dense, num_cols);
            assert_eq!(bits(&f1), bits(&f2), "forward, case {case}");
            assert_eq!(bits(&b1), bits(&b2), "backward, case {case}");
        }
        assert!(uniform > 300, "only {uniform} uniform cases");
    }

    /// The kept states of the full and the widened-beam forward pass, and their forward
    /// scores' bits where kept; asserts the totals and cutoffs agree. Returns how many
    /// slots the widened pass left at `-inf` that the full pass reached.
    fn compare_forward(view: FsaView<'_>, dense: &[f32], num_cols: usize, beam: f32) -> usize {
        let full = viterbi_with(view, dense, num_cols, beam, false);
        let fast = viterbi_with(view, dense, num_cols, beam, true);
        assert_eq!(full.tot.to_bits(), fast.tot.to_bits(), "beam {beam}");
        assert_eq!(full.cutoff.to_bits(), fast.cutoff.to_bits(), "beam {beam}");
        assert_eq!(bits(&full.bwd), bits(&fast.bwd));
        let mut skipped = 0;
        for slot in 0..full.fwd.len() {
            let kept_full = full.fwd[slot] + full.bwd[slot] > full.cutoff;
            let kept_fast = fast.fwd[slot] + fast.bwd[slot] > fast.cutoff;
            assert_eq!(kept_full, kept_fast, "slot {slot}, beam {beam}");
            // every kept state lies in its row's band of the widened beam
            if let (true, Some(within)) = (kept_fast, &fast.within) {
                let (t, s) = (slot / view.num_states(), slot % view.num_states());
                let (lo, hi) = within.get(t).copied().unwrap_or((0, 0));
                assert!(lo <= s && s < hi, "slot {slot} outside {lo}..{hi}");
            }
            if kept_full {
                assert_eq!(
                    full.fwd[slot].to_bits(),
                    fast.fwd[slot].to_bits(),
                    "slot {slot}"
                );
            }
            if full.fwd[slot] > f32::NEG_INFINITY && fast.fwd[slot] == f32::NEG_INFINITY {
                skipped += 1;
            }
        }
        skipped
    }

    #[test]
    fn the_widened_forward_keeps_what_the_full_one_keeps() {
        let mut state = 9u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut skipped = 0;
        for case in 0..300 {
            let symbols = 2 + next(6) as usize;
            let graphs = if case % 2 == 0 {
                // any graph: parallel arcs, cycles, labels and scores per arc
                let n = 2 + next(12) as i32;
                let mut arcs = Vec::new();
                for src in 0..n - 1 {
                    for _ in 0..1 + next(4) {
                        let d = next(n as u64 - 1) as i32;
                        let label = next(symbols as u64) as i32;
                        let score = (next(1 << 20) as f32 / (1 << 20) as f32 - 0.5) * 6.0;
                        arcs.push(crate::Arc::new(src, d, label, score));
                    }
                    if next(3) == 0 || src == n - 2 {
                        arcs.push(crate::Arc::new(src, n - 1, -1, 0.0));
                    }
                }
                arcs.sort_by_key(|a| a.src_state);
                create_fsa_vec(&[Fsa::from_arcs(arcs, n as usize).unwrap()])
            } else {
                let tokens: Vec<i32> = (0..1 + next(30))
                    .map(|_| 1 + next(symbols as u64 - 1) as i32)
                    .collect();
                crate::FsaVec::ctc_graph(&[tokens], case % 4 == 1).unwrap()
            };
            let view = graphs.view(0);
            let num_cols = symbols + 1;
            // long segments with scores of large magnitude: sums of thousands, where an
            // ulp is a thousandth and the roundings of the passes disagree
            let rows = 1 + next(200) as usize;
            let scale = [1.0f32, 30.0, 1000.0][case % 3];
            let dense: Vec<f32> = (0..rows * num_cols)
                .map(|_| -(next(1 << 20) as f32 / (1 << 20) as f32) * scale)
                .collect();
            for beam in [0.0f32, 0.5, 3.0, 10.0, 1e4] {
                skipped += compare_forward(view, &dense, num_cols, beam);
            }
        }
        // the widened pass does skip work
        assert!(skipped > 1000, "only {skipped} slots skipped");
    }

    #[test]
    fn banded_viterbi_gives_the_bits_of_the_index_lists() {
        let mut state = 21u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut banded = 0;
        for case in 0..300 {
            let symbols = 2 + next(6) as usize;
            let graphs = if case % 3 == 0 {
                // arcs advancing by 0 to 2 states, one label and score per destination
                let n = 2 + next(12) as usize;
                let label: Vec<i32> = (0..n)
                    .map(|d| {
                        if d == n - 1 {
                            -1
                        } else {
                            next(symbols as u64) as i32
                        }
                    })
                    .collect();
                let score: Vec<f32> = (0..n)
                    .map(|_| [0.0, -0.0, -1.5, f32::NEG_INFINITY][next(4) as usize])
                    .collect();
                let mut arcs = Vec::new();
                for src in 0..n - 1 {
                    for o in 0..WIDTH {
                        let d = src + o;
                        if d < n && (next(3) > 0 || d == src + 1) {
                            arcs.push(crate::Arc::new(src as i32, d as i32, label[d], score[d]));
                        }
                    }
                }
                create_fsa_vec(&[Fsa::from_arcs(arcs, n).unwrap()])
            } else {
                let tokens: Vec<i32> = (0..1 + next(30))
                    .map(|_| 1 + next(symbols as u64 - 1) as i32)
                    .collect();
                crate::FsaVec::ctc_graph(&[tokens], case % 3 == 1).unwrap()
            };
            let view = graphs.view(0);
            assert!(Banded::new(view).is_some(), "case {case}");
            banded += 1;
            let num_cols = symbols + 1;
            let rows = 1 + next(150) as usize;
            let scale = [1.0f32, 30.0, 1000.0][case % 3];
            let dense: Vec<f32> = (0..rows * num_cols)
                .map(|_| match next(40) {
                    0 => f32::NEG_INFINITY,
                    1 => -0.0,
                    2 => f32::INFINITY,
                    _ => -(next(1 << 20) as f32 / (1 << 20) as f32) * scale,
                })
                .collect();
            for beam in [0.5f32, 3.0, 10.0, f32::INFINITY] {
                for restrict in [false, true] {
                    let run = |band| {
                        let v = viterbi_in(
                            view,
                            &dense,
                            num_cols,
                            beam,
                            restrict,
                            band,
                            (Vec::new(), Vec::new()),
                        );
                        (bits(&v.fwd), bits(&v.bwd), v.cutoff.to_bits(), v.within)
                    };
                    assert_eq!(run(true), run(false), "case {case} beam {beam}");
                }
            }
        }
        assert_eq!(banded, 300);
    }

    #[test]
    fn arcs_going_back_or_far_are_not_banded() {
        for (src, dest) in [(1, 0), (0, 3)] {
            let arcs = vec![
                crate::Arc::new(0, 1, 1, 0.0),
                crate::Arc::new(1, 2, 1, 0.0),
                crate::Arc::new(src, dest, 1, 0.0),
                crate::Arc::new(2, 3, -1, 0.0),
            ];
            let mut arcs = arcs;
            arcs.sort_by_key(|a| a.src_state);
            let graphs = create_fsa_vec(&[Fsa::from_arcs(arcs, 4).unwrap()]);
            assert!(Banded::new(graphs.view(0)).is_none(), "{src} -> {dest}");
        }
    }

    #[test]
    fn a_graph_with_two_entries_into_a_state_is_not_uniform() {
        let arcs = vec![
            crate::Arc::new(0, 1, 1, 0.0),
            crate::Arc::new(0, 1, 2, 0.0),
            crate::Arc::new(1, 2, -1, 0.0),
        ];
        let graphs = create_fsa_vec(&[Fsa::from_arcs(arcs, 3).unwrap()]);
        assert!(UniformEntry::new(graphs.view(0)).is_none());
        let arcs = vec![
            crate::Arc::new(0, 1, 1, 0.0),
            crate::Arc::new(0, 1, 1, -0.0),
            crate::Arc::new(1, 2, -1, 0.0),
        ];
        let graphs = create_fsa_vec(&[Fsa::from_arcs(arcs, 3).unwrap()]);
        assert!(
            UniformEntry::new(graphs.view(0)).is_none(),
            "-0 and 0 differ in bits"
        );
    }
}
