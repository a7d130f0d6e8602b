//! `intersect_dense_pruned`: k2's frame-synchronous beam search of graphs against dense FSAs
//! (dynamic beam between `min_active_states` and `max_active_states`), then output-beam
//! pruning of what the search kept.

use crate::arc::Arc;
use crate::dense::dense_fsa::DenseFsaVecOf;
use crate::dense::intersect_dense::{assemble, check_beam, collect_parts, map_pairs, prepare};
use crate::error::Error;
use crate::fsa::{FsaVec, FsaVecRef};
use crate::view::{reserve_bounded, ArcBudget, Built, FsaView, MAX_OUTPUT_ARCS};

/// The larger of `acc` and `x`, `acc` when `x` is NaN (as `f32::max` with `acc` never NaN,
/// in one instruction; which zero of `-0.0` and `0.0` it keeps differs, and no result
/// depends on that: these maxima only enter sums and comparisons).
#[inline]
fn larger(acc: f32, x: f32) -> f32 {
    if x > acc {
        x
    } else {
        acc
    }
}

/// k2's dynamic beam update for one frame (`GetPruningCutoffs`). As in k2, the state
/// limits are compared as floats (so `max_active / 2` may be fractional) and the products are
/// taken in `f64`.
fn next_beam(
    beam: f32,
    search_beam: f32,
    active: usize,
    min_active: usize,
    max_active: usize,
    t: usize,
    final_t: usize,
) -> f32 {
    let (active, min_active, max_active) = (active as f32, min_active as f32, max_active as f32);
    let mut beam = beam;
    let current_min = if t + 5 >= final_t {
        min_active.max(max_active / 2.0)
    } else {
        min_active
    };
    if active <= max_active {
        if active >= current_min || active == 0.0 {
            beam = (0.8 * beam as f64 + 0.2 * search_beam as f64) as f32;
        } else {
            if beam < search_beam {
                beam = search_beam;
            }
            beam = (beam as f64 * 1.25) as f32;
        }
    } else if t + 5 < final_t {
        if beam > search_beam {
            beam = search_beam;
        }
        beam = (beam as f64 * 0.8) as f32;
    }
    if t + 1 == final_t {
        beam = 1.0e10;
    }
    beam
}

/// How far below `forward best - output_beam` the backward pass still records an arc as
/// a candidate of the lattice. The exact threshold, `tot - output_beam` with `tot` the
/// backward score of the start, is only known once the backward pass is done; the forward
/// score of the final state equals `tot` up to rounding, so this slack (absolute plus
/// relative to that score) makes the recorded arcs a superset of the kept ones. That is
/// checked, and the pass is redone at the exact threshold when it does not hold.
const CANDIDATE_SLACK: f32 = 0.5;
/// The relative part of [`CANDIDATE_SLACK`].
const CANDIDATE_SLACK_REL: f32 = 2e-4;

/// One arc the backward pass recorded as a candidate of the lattice.
#[derive(Clone, Copy)]
struct Candidate {
    /// Index of the source among all active states (`states`).
    src: u32,
    /// Index of the destination among all active states.
    dest: u32,
    /// Local arc index in the graph.
    arc: u32,
    /// Graph score plus dense score.
    score: f32,
    /// Forward score of the source plus `score` plus backward score of the destination.
    total: f32,
}

/// A key of [`Hop`]: the destination state shifted left by [`Hops::shift`], or-ed with
/// the column of the arc's label in the dense rows (`label + 1`).
trait Key: Copy {
    /// The key of `dest` and `col`, `None` when they do not fit.
    fn pack(dest: usize, col: usize, shift: u32) -> Option<Self>;
    /// The destination and column of the key.
    fn unpack(self, shift: u32) -> (usize, usize);
}

macro_rules! impl_key {
    ($t:ty) => {
        impl Key for $t {
            #[inline]
            fn pack(dest: usize, col: usize, shift: u32) -> Option<Self> {
                if shift >= <$t>::BITS {
                    return None;
                }
                <$t>::try_from(((dest as u128) << shift) | col as u128).ok()
            }
            #[inline]
            fn unpack(self, shift: u32) -> (usize, usize) {
                (
                    (self >> shift) as usize,
                    (self & ((1 << shift) - 1)) as usize,
                )
            }
        }
    };
}
impl_key!(u32);
impl_key!(u64);

/// What the search reads of one graph arc: destination and label column packed into a key,
/// and the score (8 bytes with a `u32` key, half of an [`Arc`], so that the arcs of a
/// frame's active states take half the cache).
#[derive(Clone, Copy)]
struct Hop<K> {
    key: K,
    score: f32,
}

/// The graph as the search reads it: per state its arcs as [`Hop`]s.
struct Hops<K> {
    /// Local arc offsets, `num_states + 1` of them.
    splits: Vec<u32>,
    hops: Vec<Hop<K>>,
    /// Bits of the label column in a key.
    shift: u32,
}

impl<K: Key> Hops<K> {
    /// The graph's arcs as hops for dense rows of `num_cols` columns; `None` when some
    /// destination and column do not fit a `K`.
    fn new(graph: FsaView<'_>, num_cols: usize) -> Option<Self> {
        let shift = usize::BITS - num_cols.saturating_sub(1).leading_zeros();
        let hops = graph
            .arcs
            .iter()
            .map(|a| {
                let col = usize::try_from(a.label + 1)
                    .ok()
                    .filter(|&c| c < num_cols)?;
                Some(Hop {
                    key: K::pack(usize::try_from(a.dest_state).ok()?, col, shift)?,
                    score: a.score,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let base = graph.splits[0];
        let splits = graph
            .splits
            .iter()
            .map(|&s| u32::try_from(s - base).ok())
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            splits,
            hops,
            shift,
        })
    }

    /// The local index of the first arc of `state`, and its arcs.
    #[inline]
    fn arcs(&self, state: usize) -> (usize, &[Hop<K>]) {
        let (b, e) = (self.splits[state] as usize, self.splits[state + 1] as usize);
        (b, &self.hops[b..e])
    }
}

/// The search of one graph against one dense FSA; the lattice's arcs are taken from
/// `budget` before they are stored, and past it the count of kept arcs is the error.
fn search_one(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    [search_beam, output_beam]: [f32; 2],
    [min_active, max_active]: [usize; 2],
    budget: &ArcBudget,
) -> Result<(Built, Vec<(u32, u32)>), usize> {
    search_with_slack(
        graph,
        dense,
        num_cols,
        [search_beam, output_beam],
        [min_active, max_active],
        CANDIDATE_SLACK,
        budget,
    )
}

/// [`search_one`] with the candidates' slack given (tests feed it one that fails the check).
fn search_with_slack(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    [search_beam, output_beam]: [f32; 2],
    [min_active, max_active]: [usize; 2],
    slack: f32,
    budget: &ArcBudget,
) -> Result<(Built, Vec<(u32, u32)>), usize> {
    let (beams, active) = ([search_beam, output_beam], [min_active, max_active]);
    if let Some(hops) = Hops::<u32>::new(graph, num_cols) {
        search_hops(graph, &hops, dense, num_cols, beams, active, slack, budget)
    } else {
        let hops = Hops::<u64>::new(graph, num_cols)
            .expect("labels are checked against the columns, states and arcs fit a u32");
        search_hops(graph, &hops, dense, num_cols, beams, active, slack, budget)
    }
}

/// [`search_with_slack`] on the graph's arcs read as `hops`.
#[allow(clippy::too_many_arguments)]
fn search_hops<K: Key>(
    graph: FsaView<'_>,
    hops: &Hops<K>,
    dense: &[f32],
    num_cols: usize,
    [search_beam, output_beam]: [f32; 2],
    [min_active, max_active]: [usize; 2],
    slack: f32,
    budget: &ArcBudget,
) -> Result<(Built, Vec<(u32, u32)>), usize> {
    let num_states = graph.num_states();
    let rows = dense.len() / num_cols;
    if num_states == 0 {
        return Ok((Built::empty(), Vec::new()));
    }
    // the active states of every frame, flat: (graph state, forward score); frame `t` is
    // `states[state_splits[t]..state_splits[t + 1]]`, ascending by graph state (so that the
    // graph's arcs are read forwards)
    // (reserved for twice `max_active` states a frame, at most 2^24: pages are only touched
    // when used, and a search near the limit is not copied to grow)
    let per_frame = max_active.saturating_mul(2).min(num_states);
    let mut states: Vec<(u32, f32)> =
        Vec::with_capacity(1 + rows.saturating_mul(per_frame).min(1 << 24));
    states.push((0, 0.0));
    let mut state_splits: Vec<usize> = vec![0, 1];
    // per graph state, for the next frame: its best arc end so far (-inf: not reached)
    let mut reached_score = vec![f32::NEG_INFINITY; num_states];
    let mut beam = search_beam;
    for t in 0..rows {
        let row = &dense[t * num_cols..(t + 1) * num_cols];
        let (cur_begin, cur_end) = (state_splits[t], state_splits[t + 1]);
        // one pass over the arcs: the frame's best arc end, and each destination's best
        // arc end. A state survives when some arc enters it above the cutoff, that is when
        // its best arc end is above it, and its forward score is that best end, so the
        // cutoff need not be known while the arcs are read.
        let mut best = f32::NEG_INFINITY;
        for &(state, f) in &states[cur_begin..cur_end] {
            for hop in hops.arcs(state as usize).1 {
                let (d, col) = hop.key.unpack(hops.shift);
                // k2's order of the sums (arc score plus dense score, then forward), so
                // that scores at the cutoff round the same way as k2's
                let x = row[col] + hop.score;
                let end = f + x;
                best = larger(best, end);
                // without a branch (whether an arc improves its destination is a coin flip)
                let r = reached_score[d];
                reached_score[d] = if end > r { end } else { r };
            }
        }
        beam = next_beam(
            beam,
            search_beam,
            cur_end - cur_begin,
            min_active,
            max_active,
            t,
            rows,
        );
        let cutoff = best - beam;
        // the surviving states in graph order, from a scan of every state's best end (a
        // compare per state, faster than marking each arc's destination in a bit set),
        // and the scores cleared for the next frame
        for (w, chunk) in reached_score.chunks_mut(64).enumerate() {
            let mut bits = 0u64;
            for (k, &v) in chunk.iter().enumerate() {
                bits |= ((v > cutoff) as u64) << k;
            }
            while bits != 0 {
                let k = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                states.push(((w * 64 + k) as u32, chunk[k]));
            }
            chunk.fill(f32::NEG_INFINITY);
        }
        state_splits.push(states.len());
    }
    // the final state must be active after the last row
    let final_state = (num_states - 1) as u32;
    let last = &states[state_splits[rows]..state_splits[rows + 1]];
    let Ok(final_pos) = last.binary_search_by_key(&final_state, |&(s, _)| s) else {
        return Ok((Built::empty(), Vec::new()));
    };
    let final_idx = state_splits[rows] + final_pos;
    let forward_tot = states[final_idx].1;
    let guess = forward_tot - output_beam - (slack + CANDIDATE_SLACK_REL * forward_tot.abs());
    // at most the whole budget of candidates is stored (those past it are only counted)
    let max_candidates = budget.limit;
    let (mut bwd, mut candidates, mut frame_ends, mut missed) = backward(
        hops,
        dense,
        num_cols,
        &states,
        &state_splits,
        final_idx,
        guess,
        max_candidates,
    );
    let tot = bwd[0];
    if tot == f32::NEG_INFINITY {
        return Ok((Built::empty(), Vec::new()));
    }
    // keep arcs within output_beam (k2: `>=`), then the states they touch
    let threshold = tot - output_beam;
    if guess.is_nan() || guess > threshold || missed > 0 {
        // some arc at the threshold may not have been recorded (or too many candidates
        // were): record them again at the exact threshold (the backward scores come out the
        // same), where the candidates are exactly the lattice's arcs; the first pass's are
        // dropped first, so that the two are never held together
        drop(std::mem::take(&mut candidates));
        (bwd, candidates, frame_ends, missed) = backward(
            hops,
            dense,
            num_cols,
            &states,
            &state_splits,
            final_idx,
            threshold,
            max_candidates,
        );
        if missed > 0 {
            let count = candidates.len().saturating_add(missed);
            budget.take(count);
            return Err(count);
        }
    }
    drop(bwd);
    let mut keep_state = vec![false; states.len()];
    let mut num_arcs = 0usize;
    for c in &candidates {
        if c.total >= threshold {
            keep_state[c.src as usize] = true;
            keep_state[c.dest as usize] = true;
            num_arcs += 1;
        }
    }
    // number the kept states in order: by frame, by graph state within a frame
    let mut ids = vec![-1i32; states.len()];
    let mut next_id = 0i32;
    for (id, &keep) in ids.iter_mut().zip(&keep_state) {
        if keep {
            *id = next_id;
            next_id += 1;
        }
    }
    drop(keep_state);
    if !budget.take(num_arcs) {
        return Err(num_arcs);
    }
    // the kept arcs, by frame and then (as the candidates are) by source and graph arc,
    // so by source id; `splits` from each kept state's count of them
    let mut counts = vec![0i32; next_id as usize + 1];
    let mut arcs = Vec::with_capacity(num_arcs);
    let mut arc_map = Vec::with_capacity(num_arcs);
    let mut b_map = Vec::with_capacity(num_arcs);
    let graph_arcs = graph.arcs;
    for t in 0..rows {
        // this frame's candidates (the backward pass recorded the frames last to first)
        let k = rows - 1 - t;
        let begin = if k == 0 { 0 } else { frame_ends[k - 1] };
        for a in &candidates[begin..frame_ends[k]] {
            if a.total >= threshold {
                let (src, dest) = (ids[a.src as usize], ids[a.dest as usize]);
                counts[src as usize + 1] += 1;
                let label = graph_arcs[a.arc as usize].label;
                arcs.push(Arc::new(src, dest, label, a.score));
                arc_map.push(a.arc as i32);
                b_map.push((t as u32, (label + 1) as u32));
            }
        }
    }
    let mut splits = counts;
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

/// The backward pass over what the search kept: every arc from an active state into an
/// active state of the next frame (read again from the graph, with the same sums as the
/// forward pass). Returns the backward score of every active state, the arcs whose
/// `forward + score + backward` is at least `threshold` (by frame, last frame first; by
/// source and graph arc within a frame), and where each frame's candidates end. At most
/// `max_candidates` are stored (the vector never grows past them); the count of those
/// left out is the last value returned.
#[allow(clippy::too_many_arguments)]
fn backward<K: Key>(
    hops: &Hops<K>,
    dense: &[f32],
    num_cols: usize,
    states: &[(u32, f32)],
    state_splits: &[usize],
    final_idx: usize,
    threshold: f32,
    max_candidates: usize,
) -> (Vec<f32>, Vec<Candidate>, Vec<usize>, usize) {
    let mut missed = 0usize;
    let rows = state_splits.len() - 2;
    let mut bwd = vec![f32::NEG_INFINITY; states.len()];
    bwd[final_idx] = 0.0;
    // per graph state: 1 + its index among the next frame's active states, 0 when it is not
    // one; `after[j]` the backward score of slot `j`, `after[0] = -inf`, so that arcs into
    // states that are not active add nothing to the maximum (without a branch)
    let mut slot = vec![0u32; hops.splits.len() - 1];
    let mut after = vec![f32::NEG_INFINITY];
    let mut candidates = Vec::new();
    let mut frame_ends = Vec::with_capacity(rows);
    for t in (0..rows).rev() {
        let row = &dense[t * num_cols..(t + 1) * num_cols];
        let (begin, next, next_end) = (state_splits[t], state_splits[t + 1], state_splits[t + 2]);
        for (j, &(s, _)) in states[next..next_end].iter().enumerate() {
            slot[s as usize] = j as u32 + 1;
        }
        after.truncate(1);
        after.extend_from_slice(&bwd[next..next_end]);
        for (i, &(state, f)) in states.iter().enumerate().take(next).skip(begin) {
            let (first, state_hops) = hops.arcs(state as usize);
            // the state's backward score, and the best `forward + score + backward` of its
            // arcs, in a loop without stores; the arcs at the threshold, if any, in another
            let (mut b, mut best_total) = (f32::NEG_INFINITY, f32::NEG_INFINITY);
            for hop in state_hops {
                let (d, col) = hop.key.unpack(hops.shift);
                let x = row[col] + hop.score;
                let a = after[slot[d] as usize];
                // `x + -inf` is -inf (or NaN for an infinite `x`, which is ignored)
                b = larger(b, x + a);
                best_total = larger(best_total, f + x + a);
            }
            if best_total >= threshold {
                for (k, hop) in state_hops.iter().enumerate() {
                    let (d, col) = hop.key.unpack(hops.shift);
                    let j = slot[d];
                    let x = row[col] + hop.score;
                    let total = f + x + after[j as usize];
                    if total >= threshold && j != 0 {
                        if candidates.len() >= max_candidates {
                            missed += 1;
                            continue;
                        }
                        if candidates.len() == candidates.capacity() {
                            reserve_bounded(&mut candidates, 1, max_candidates);
                        }
                        candidates.push(Candidate {
                            src: i as u32,
                            dest: (next + j as usize - 1) as u32,
                            arc: (first + k) as u32,
                            score: x,
                            total,
                        });
                    }
                }
            }
            bwd[i] = b;
        }
        frame_ends.push(candidates.len());
        for &(s, _) in &states[next..next_end] {
            slot[s as usize] = 0;
        }
    }
    (bwd, candidates, frame_ends, missed)
}

/// Decodes each dense FSA against its graph (one per dense FSA, or one shared) with k2's
/// pruned search (`intersect_dense_pruned`): frame by frame, a state survives when some arc
/// enters it with a forward score within a dynamic beam of the frame's best, and every arc
/// into a surviving state is kept; the beam starts at
/// `search_beam` and shrinks (x0.8) while more than `max_active_states` states are active,
/// grows (x1.25) while fewer than `min_active_states` are, and drifts back to `search_beam`
/// otherwise; the last frame is not pruned. What the search kept is then pruned to
/// `output_beam` of its best path. Returns the lattice and the arc maps as
/// [`intersect_dense`](crate::intersect_dense) does; states within a frame are numbered by
/// graph state (k2 numbers them in hash order).
///
/// **Bound.** The lattices hold at most [`MAX_OUTPUT_ARCS`](crate::MAX_OUTPUT_ARCS) arcs in
/// all, counted before they are stored; past it the call returns [`Error::OutputLimit`]
/// with the count. (The search also stores no more than that many candidate arcs per
/// segment while it looks for them.)
pub fn intersect_dense_pruned<'g>(
    a_fsas: impl Into<FsaVecRef<'g>>,
    b: &DenseFsaVecOf<'_>,
    search_beam: f32,
    output_beam: f32,
    min_active_states: usize,
    max_active_states: usize,
) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
    let a_fsas = a_fsas.into();
    check_beam("search_beam", search_beam)?;
    check_beam("output_beam", output_beam)?;
    if max_active_states <= min_active_states {
        return Err(Error::BadActiveStates {
            min_active_states,
            max_active_states,
        });
    }
    let pairs = prepare(a_fsas, b, None)?;
    // k2's layout, built now for a borrowed form (a failed allocation is an error)
    b.try_scores()?;
    let num_cols = b.num_cols();
    let budget = ArcBudget::new(MAX_OUTPUT_ARCS);
    let parts = map_pairs(
        &pairs,
        |a, bi| {
            a_fsas
                .arc_range(a)
                .len()
                .min(max_active_states.saturating_mul(4))
                .saturating_mul(b.duration(bi) + 1)
        },
        |a, bi| {
            search_one(
                a_fsas.view(a),
                b.fsa_scores(bi),
                num_cols,
                [search_beam, output_beam],
                [min_active_states, max_active_states],
                &budget,
            )
        },
    );
    let parts = collect_parts(
        parts,
        &budget,
        "intersect_dense_pruned",
        "lattice arcs (MAX_OUTPUT_ARCS)",
    )?;
    assemble(a_fsas, b, &pairs, parts)
}

#[cfg(test)]
mod tests {
    //! The search against the straightforward one it replaced (every kept arc stored on
    //! the way forward), kept here as the reference.
    use super::*;

    #[derive(Clone, Copy)]
    struct Kept {
        dest: u32,
        arc: u32,
        score: f32,
    }

    fn reference(
        graph: FsaView<'_>,
        dense: &[f32],
        num_cols: usize,
        search_beam: f32,
        output_beam: f32,
        min_active: usize,
        max_active: usize,
    ) -> (Built, Vec<(u32, u32)>) {
        let num_states = graph.num_states();
        let rows = dense.len() / num_cols;
        if num_states == 0 {
            return (Built::empty(), Vec::new());
        }
        // the active states of every frame, flat: (graph state, forward score); frame `t` is
        // `states[state_splits[t]..state_splits[t + 1]]`, ascending by graph state (so that the
        // graph's arcs are read forwards)
        let mut states: Vec<(u32, f32)> = vec![(0, 0.0)];
        let mut state_splits: Vec<usize> = vec![0, 1];
        // the arcs the search kept, one vector per frame (reserved at the frame's arc count, so
        // that nothing large is ever copied to grow): those of active state `i` (an index into
        // `states`, on frame `t`) are `kept[t][arc_begin[i]..end]`, `end` the next state's
        // begin or the end of the frame's vector
        let mut kept: Vec<Vec<Kept>> = Vec::with_capacity(rows);
        let mut arc_begin: Vec<u32> = Vec::new();
        // per graph state, for the next frame: its best arc end so far (-inf: not reached),
        // whether it is reached (one bit each, scanned in order), and its index there
        let mut reached_score = vec![f32::NEG_INFINITY; num_states];
        let mut reached = vec![0u64; num_states.div_ceil(64)];
        let mut slot = vec![u32::MAX; num_states];
        // per arc leaving the frame's states, in order: dense score + arc score, destination
        let mut xs: Vec<f32> = Vec::new();
        let mut ds: Vec<u32> = Vec::new();
        let mut beam = search_beam;
        for t in 0..rows {
            let row = &dense[t * num_cols..(t + 1) * num_cols];
            let (cur_begin, cur_end) = (state_splits[t], state_splits[t + 1]);
            // the frame's best arc end; `f + x` rounds monotonically in `x`, so the best end
            // of a state is `f` plus its best arc, as k2's maximum over all arcs gives it
            xs.clear();
            ds.clear();
            let mut best = f32::NEG_INFINITY;
            for &(state, f) in &states[cur_begin..cur_end] {
                let mut state_best = f32::NEG_INFINITY;
                for arc in graph.state_arcs(state as usize) {
                    // k2's order of the sums (arc score plus dense score, then forward), so
                    // that scores at the cutoff round the same way as k2's
                    let x = row[(arc.label + 1) as usize] + arc.score;
                    xs.push(x);
                    ds.push(arc.dest_state as u32);
                    state_best = state_best.max(x);
                }
                best = best.max(f + state_best);
            }
            beam = next_beam(
                beam,
                search_beam,
                cur_end - cur_begin,
                min_active,
                max_active,
                t,
                rows,
            );
            let cutoff = best - beam;
            // the next frame's states: destinations of arcs above the cutoff; then, as in k2,
            // every arc into a surviving state is kept, whatever its own score
            let next_begin = states.len();
            let mut k = 0;
            for &(state, f) in &states[cur_begin..cur_end] {
                let num_arcs = graph.arc_range(state as usize).len();
                for (&x, &d) in xs[k..k + num_arcs].iter().zip(&ds[k..k + num_arcs]) {
                    let end = f + x;
                    let d = d as usize;
                    if end > cutoff && end > reached_score[d] {
                        if reached_score[d] == f32::NEG_INFINITY {
                            reached[d / 64] |= 1 << (d % 64);
                        }
                        reached_score[d] = end;
                    }
                }
                k += num_arcs;
            }
            // the reached states in graph order (and the bits and scores cleared for the next)
            for (w, word) in reached.iter_mut().enumerate() {
                let mut bits = *word;
                *word = 0;
                while bits != 0 {
                    let d = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    slot[d] = (states.len() - next_begin) as u32;
                    states.push((d as u32, reached_score[d]));
                    reached_score[d] = f32::NEG_INFINITY;
                }
            }
            let mut frame_kept: Vec<Kept> = Vec::with_capacity(xs.len());
            let mut k = 0;
            for &(state, _) in &states[cur_begin..cur_end] {
                arc_begin.push(frame_kept.len() as u32);
                let state = state as usize;
                let arcs = graph.arc_range(state);
                let first = arcs.start as u32;
                let num_arcs = arcs.len();
                for (j, (&x, &d)) in xs[k..k + num_arcs]
                    .iter()
                    .zip(&ds[k..k + num_arcs])
                    .enumerate()
                {
                    let dest = slot[d as usize];
                    if dest != u32::MAX {
                        frame_kept.push(Kept {
                            dest,
                            arc: first + j as u32,
                            score: x,
                        });
                    }
                }
                k += num_arcs;
            }
            kept.push(frame_kept);
            for &(s, _) in &states[next_begin..] {
                slot[s as usize] = u32::MAX;
            }
            state_splits.push(states.len());
        }
        // backward over the kept arcs; the final state must be active after the last row
        let final_state = (num_states - 1) as u32;
        let mut bwd = vec![f32::NEG_INFINITY; states.len()];
        for i in state_splits[rows]..state_splits[rows + 1] {
            if states[i].0 == final_state {
                bwd[i] = 0.0;
            }
        }
        // the arcs of state `i` on frame `t`, as a range of `kept[t]`
        let arcs_of = |t: usize, i: usize| {
            let end = if i + 1 < state_splits[t + 1] {
                arc_begin[i + 1] as usize
            } else {
                kept[t].len()
            };
            arc_begin[i] as usize..end
        };
        for t in (0..rows).rev() {
            let next = state_splits[t + 1];
            let (head, tail) = bwd.split_at_mut(next);
            for i in state_splits[t]..next {
                let mut b = f32::NEG_INFINITY;
                for a in &kept[t][arcs_of(t, i)] {
                    b = b.max(a.score + tail[a.dest as usize]);
                }
                head[i] = b;
            }
        }
        let tot = bwd[0];
        if tot == f32::NEG_INFINITY {
            return (Built::empty(), Vec::new());
        }
        // keep arcs within output_beam (k2: `>=`), then the states they touch
        let mut keep_arc: Vec<Vec<bool>> = kept.iter().map(|f| vec![false; f.len()]).collect();
        let mut keep_state = vec![false; states.len()];
        for t in 0..rows {
            let next = state_splits[t + 1];
            let keep_arc = &mut keep_arc[t];
            for i in state_splits[t]..next {
                let f = states[i].1;
                for k in arcs_of(t, i) {
                    let a = kept[t][k];
                    let dest = next + a.dest as usize;
                    if f + a.score + bwd[dest] >= tot - output_beam {
                        keep_arc[k] = true;
                        keep_state[i] = true;
                        keep_state[dest] = true;
                    }
                }
            }
        }
        // number the kept states in order: by frame, by graph state within a frame
        let mut ids = vec![-1i32; states.len()];
        let mut next_id = 0i32;
        for (id, &keep) in ids.iter_mut().zip(&keep_state) {
            if keep {
                *id = next_id;
                next_id += 1;
            }
        }
        let mut splits = vec![0i32];
        let mut arcs = Vec::new();
        let mut arc_map = Vec::new();
        let mut b_map = Vec::new();
        let graph_arcs = graph.arcs;
        for t in 0..=rows {
            let next = state_splits[(t + 1).min(rows)];
            for i in state_splits[t]..state_splits[t + 1] {
                if !keep_state[i] {
                    continue;
                }
                if t < rows {
                    for k in arcs_of(t, i) {
                        if !keep_arc[t][k] {
                            continue;
                        }
                        let a = kept[t][k];
                        let label = graph_arcs[a.arc as usize].label;
                        arcs.push(Arc::new(
                            ids[i],
                            ids[next + a.dest as usize],
                            label,
                            a.score,
                        ));
                        arc_map.push(a.arc as i32);
                        b_map.push((t as u32, (label + 1) as u32));
                    }
                }
                splits.push(arcs.len() as i32);
            }
        }
        (
            Built {
                splits,
                arcs,
                arc_map,
            },
            b_map,
        )
    }

    /// A seeded graph of `n` states (arcs to any state, cycles and self-loops included,
    /// labels `0..symbols`, `-1` only into the final state) and `frames` dense rows plus the
    /// final row, as `DenseFsaVec` lays them out.
    fn case(seed: u64, n: usize, symbols: usize, frames: usize) -> (Vec<i32>, Vec<Arc>, Vec<f32>) {
        let mut x = seed;
        let mut next = move || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut splits = vec![0i32];
        let mut arcs = Vec::new();
        for s in 0..n {
            if s + 1 < n {
                let mut out: Vec<(i32, i32)> = (0..1 + next() % 4)
                    .map(|_| ((next() % n as u64) as i32, (next() % symbols as u64) as i32))
                    .collect();
                if next() % 3 == 0 {
                    out.push((n as i32 - 1, -1));
                }
                out.sort_unstable_by_key(|&(d, l)| (l, d));
                for (d, l) in out {
                    let d = if l == -1 { n as i32 - 1 } else { d };
                    let score = -((next() % 1000) as f32) / 250.0;
                    arcs.push(Arc::new(s as i32, d, l, score));
                }
            }
            splits.push(arcs.len() as i32);
        }
        let cols = symbols + 1;
        let mut dense = Vec::new();
        for _ in 0..frames {
            dense.push(f32::NEG_INFINITY);
            dense.extend((0..symbols).map(|_| -((next() % 4000) as f32) / 1000.0));
        }
        dense.push(0.0);
        dense.extend(std::iter::repeat_n(f32::NEG_INFINITY, cols - 1));
        (splits, arcs, dense)
    }

    #[test]
    fn same_as_reference_and_hostile_slack_falls_back() {
        let mut checked = 0;
        for seed in 0..200u64 {
            let n = 2 + (seed as usize * 7) % 40;
            let (symbols, frames) = (1 + seed as usize % 6, seed as usize % 13);
            let (splits, arcs, dense) = case(seed, n, symbols, frames);
            let graph = FsaView::new(&splits, &arcs);
            let beams = [
                [20.0, 8.0],
                [3.0, 1.0],
                [1.0, f32::INFINITY],
                [f32::INFINITY, 0.5],
            ];
            for (k, &[sb, ob]) in beams.iter().enumerate() {
                let (min_a, max_a) = [(1, 3), (2, 100), (0, 5), (30, 10_000)][k];
                let want = reference(graph, &dense, symbols + 1, sb, ob, min_a, max_a);
                if !want.0.arcs.is_empty() {
                    checked += 1;
                }
                // the slack of the search, none, and ones that make the guessed threshold
                // too high (the exact pass must then be redone) or not a number
                for slack in [CANDIDATE_SLACK, 0.0, -1e30, f32::NAN, f32::INFINITY] {
                    let got = search_with_slack(
                        graph,
                        &dense,
                        symbols + 1,
                        [sb, ob],
                        [min_a, max_a],
                        slack,
                        &ArcBudget::new(usize::MAX),
                    )
                    .unwrap();
                    assert_eq!(got, want, "seed {seed}, beams {sb} {ob}, slack {slack}");
                }
            }
        }
        assert!(checked > 100, "only {checked} cases with a lattice");
    }

    #[test]
    fn the_arc_budget_is_exact_and_checked_on_every_path() {
        // a budget one short of the lattice gives its exact count as the error, whether the
        // candidates overflow on the guessed threshold or only the lattice does
        let mut checked = 0;
        for seed in 0..120u64 {
            let n = 2 + (seed as usize * 5) % 30;
            let (symbols, frames) = (1 + seed as usize % 5, 1 + seed as usize % 11);
            let (splits, arcs, dense) = case(seed, n, symbols, frames);
            let graph = FsaView::new(&splits, &arcs);
            for slack in [CANDIDATE_SLACK, 0.0, f32::NAN, f32::INFINITY] {
                let run = |limit: usize| {
                    search_with_slack(
                        graph,
                        &dense,
                        symbols + 1,
                        [20.0, 8.0],
                        [1, 1000],
                        slack,
                        &ArcBudget::new(limit),
                    )
                };
                let want = run(usize::MAX).unwrap();
                let count = want.0.arcs.len();
                if count == 0 {
                    continue;
                }
                checked += 1;
                assert_eq!(run(count).unwrap(), want, "seed {seed}");
                assert_eq!(run(count - 1).unwrap_err(), count, "seed {seed}");
                assert_eq!(run(0).unwrap_err(), count, "seed {seed}");
            }
        }
        assert!(checked > 100, "only {checked} cases");
    }

    #[test]
    fn keys_that_do_not_fit_are_refused_and_wide_keys_search_the_same() {
        assert_eq!(<u32 as Key>::pack(3, 5, 3), Some((3 << 3) | 5));
        assert_eq!(
            <u32 as Key>::pack(3, 5, 3).map(|k| k.unpack(3)),
            Some((3, 5))
        );
        assert_eq!(<u32 as Key>::pack(1 << 29, 0, 3), None);
        assert_eq!(<u32 as Key>::pack(0, 1, 32), None);
        assert_eq!(<u64 as Key>::pack(usize::MAX, 1, 6), None);
        assert_eq!(
            <u64 as Key>::pack(1 << 40, 7, 6).map(|k| k.unpack(6)),
            Some((1 << 40, 7))
        );
        for seed in 0..50u64 {
            let (symbols, frames) = (1 + seed as usize % 6, seed as usize % 13);
            let (splits, arcs, dense) = case(seed, 2 + seed as usize % 30, symbols, frames);
            let graph = FsaView::new(&splits, &arcs);
            let wide = Hops::<u64>::new(graph, symbols + 1).unwrap();
            let want = reference(graph, &dense, symbols + 1, 3.0, 2.0, 2, 100);
            let budget = ArcBudget::new(usize::MAX);
            let got = search_hops(
                graph,
                &wide,
                &dense,
                symbols + 1,
                [3.0, 2.0],
                [2, 100],
                0.5,
                &budget,
            )
            .unwrap();
            assert_eq!(got, want, "seed {seed}");
        }
    }
}
