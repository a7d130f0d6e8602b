//! The epsilon-removal kernel, exact in the tropical semiring: each kept state gets, for
//! every non-epsilon arc reachable through a chain of epsilon arcs, one arc carrying the
//! best chain's score.

use std::ops::Range;

use rayon::prelude::*;

use crate::arc::Arc;
use crate::error::Error;
use crate::fsa::PARALLEL_MIN_ARCS;
use crate::view::FsaView;

/// An FSA with a ragged arc map: output arc `i` stands for the input arcs
/// `deriv_values[deriv_splits[i]..deriv_splits[i + 1]]` (local indices).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BuiltDerivs {
    pub(crate) splits: Vec<i32>,
    pub(crate) arcs: Vec<Arc>,
    pub(crate) deriv_splits: Vec<i32>,
    pub(crate) deriv_values: Vec<i32>,
}

impl BuiltDerivs {
    pub(crate) fn empty() -> Self {
        Self {
            splits: vec![0],
            arcs: Vec::new(),
            deriv_splits: vec![0],
            deriv_values: Vec::new(),
        }
    }

    pub(crate) fn view(&self) -> FsaView<'_> {
        FsaView::new(&self.splits, &self.arcs)
    }

    /// The parts built for consecutive state ranges as one FSA, in their order.
    fn joined(parts: Vec<BuiltDerivs>) -> Self {
        let mut parts = parts.into_iter();
        let mut all = parts.next().unwrap_or_else(Self::empty);
        for part in parts {
            let (arcs, derivs) = (all.arcs.len() as i32, all.deriv_values.len() as i32);
            all.splits.extend(part.splits[1..].iter().map(|x| x + arcs));
            all.arcs.extend_from_slice(&part.arcs);
            all.deriv_splits
                .extend(part.deriv_splits[1..].iter().map(|x| x + derivs));
            all.deriv_values.extend_from_slice(&part.deriv_values);
        }
        all
    }

    pub(crate) fn derivs(&self, arc: usize) -> &[i32] {
        &self.deriv_values[self.deriv_splits[arc] as usize..self.deriv_splits[arc + 1] as usize]
    }

    /// Keeps the arcs `arc_map` names (new -> old index into `self`), with new states.
    pub(crate) fn select(&self, splits: Vec<i32>, arcs: Vec<Arc>, arc_map: &[i32]) -> Self {
        let mut deriv_splits = Vec::with_capacity(arc_map.len() + 1);
        let mut deriv_values = Vec::new();
        deriv_splits.push(0);
        for &m in arc_map {
            if m >= 0 {
                deriv_values.extend_from_slice(self.derivs(m as usize));
            }
            deriv_splits.push(deriv_values.len() as i32);
        }
        Self {
            splits,
            arcs,
            deriv_splits,
            deriv_values,
        }
    }
}

/// Scratch space for the epsilon closure of one state, reused across states.
struct Closure {
    best: Vec<f64>,
    /// The epsilon arc by which `best` was reached (`-1` for the state itself).
    via: Vec<i32>,
    relaxed: Vec<u32>,
    queued: Vec<bool>,
    touched: Vec<usize>,
    queue: std::collections::VecDeque<usize>,
}

impl Closure {
    fn new(n: usize) -> Self {
        Self {
            best: vec![f64::NEG_INFINITY; n],
            via: vec![-1; n],
            relaxed: vec![0; n],
            queued: vec![false; n],
            touched: Vec::new(),
            queue: std::collections::VecDeque::new(),
        }
    }

    fn clear(&mut self) {
        for &s in &self.touched {
            self.best[s] = f64::NEG_INFINITY;
            self.via[s] = -1;
            self.relaxed[s] = 0;
            self.queued[s] = false;
        }
        self.touched.clear();
    }

    /// Best epsilon-chain scores from `start` (label-correcting search); an epsilon cycle
    /// with positive score makes some state improve more than `n` times. `cycles` (see
    /// [`epsilon_components`]) marks the epsilon arcs on epsilon cycles when some epsilon
    /// arc scores `+inf` or NaN: reaching such an arc on a cycle is an error, since the
    /// cycle's score is `+inf` (a positive cycle that the improvement count cannot see once
    /// the scores are infinite) or undefined.
    fn run(
        &mut self,
        view: FsaView<'_>,
        start: usize,
        fsa_idx: usize,
        cycles: Option<&[u32]>,
    ) -> Result<(), Error> {
        let n = view.num_states() as u32;
        self.clear();
        self.best[start] = 0.0;
        self.touched.push(start);
        let queue = &mut self.queue;
        queue.clear();
        queue.push_back(start);
        self.queued[start] = true;
        while let Some(s) = queue.pop_front() {
            self.queued[s] = false;
            let base = self.best[s];
            for idx in view.arc_range(s) {
                let arc = view.arcs[idx];
                if arc.label != 0 {
                    continue;
                }
                let d = arc.dest_state as usize;
                if let Some(component) = cycles {
                    if (arc.score.is_nan() || arc.score == f32::INFINITY)
                        && component[s] == component[d]
                    {
                        return Err(bad_cycle_arc(idx, arc, fsa_idx, start));
                    }
                }
                let cand = base + arc.score as f64;
                if cand > self.best[d] {
                    if self.best[d] == f64::NEG_INFINITY && d != start {
                        self.touched.push(d);
                    }
                    if d == start || self.relaxed[d] > n {
                        return Err(Error::PositiveEpsilonCycle {
                            fsa: fsa_idx,
                            state: start as i32,
                        });
                    }
                    self.relaxed[d] += 1;
                    self.best[d] = cand;
                    self.via[d] = idx as i32;
                    if !self.queued[d] {
                        self.queued[d] = true;
                        queue.push_back(d);
                    }
                }
            }
        }
        Ok(())
    }

    /// The epsilon arcs of the best chain from the start to `s`, in path order. A chain is
    /// at most `n - 1` arcs long; a longer walk has met a cycle of `via` links, which only a
    /// cycle of non-decreasing scores can leave behind: [`Error::PositiveEpsilonCycle`]
    /// (a guard: the checks of [`Closure::run`] stop such inputs first).
    fn chain(
        &self,
        view: FsaView<'_>,
        mut s: usize,
        out: &mut Vec<i32>,
        fsa_idx: usize,
        start: usize,
    ) -> Result<(), Error> {
        let begin = out.len();
        let n = view.num_states();
        while self.via[s] >= 0 {
            if out.len() - begin >= n {
                out.truncate(begin);
                return Err(Error::PositiveEpsilonCycle {
                    fsa: fsa_idx,
                    state: start as i32,
                });
            }
            let idx = self.via[s];
            out.push(idx);
            s = view.arcs[idx as usize].src_state as usize;
        }
        out[begin..].reverse();
        Ok(())
    }
}

/// The error for an epsilon arc scored `+inf` or NaN on an epsilon cycle that the closure of
/// `start` reaches: `+inf` makes the cycle's score `+inf`, a positive cycle; NaN makes it
/// undefined.
fn bad_cycle_arc(idx: usize, arc: Arc, fsa_idx: usize, start: usize) -> Error {
    if arc.score.is_nan() {
        Error::BadScore {
            op: "remove_epsilon",
            fsa: fsa_idx,
            arc: idx,
            score: arc.score,
            reason: "an epsilon arc on an epsilon cycle must not score NaN (the cycle's score is undefined)",
        }
    } else {
        Error::PositiveEpsilonCycle {
            fsa: fsa_idx,
            state: start as i32,
        }
    }
}

/// When some epsilon arc scores `+inf` or NaN, the strongly connected component of every
/// state in the graph of epsilon arcs (an epsilon arc is on an epsilon cycle exactly when
/// its ends share a component); `None` otherwise, when the improvement count of
/// [`Closure::run`] finds every positive cycle by itself. Tarjan's algorithm, iterative.
fn epsilon_components(view: FsaView<'_>) -> Option<Vec<u32>> {
    if !view
        .arcs
        .iter()
        .any(|a| a.label == 0 && (a.score.is_nan() || a.score == f32::INFINITY))
    {
        return None;
    }
    const UNSEEN: u32 = u32::MAX;
    let n = view.num_states();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![UNSEEN; n];
    let mut stack: Vec<usize> = Vec::new();
    // (state, next arc to look at)
    let mut frames: Vec<(usize, usize)> = Vec::new();
    let mut next_index = 0u32;
    let mut next_component = 0u32;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        frames.push((root, view.arc_range(root).start));
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&(s, mut pos)) = frames.last() {
            let end = view.arc_range(s).end;
            let mut child = None;
            while pos < end {
                let arc = view.arcs[pos];
                pos += 1;
                if arc.label != 0 {
                    continue;
                }
                let d = arc.dest_state as usize;
                if index[d] == UNSEEN {
                    child = Some(d);
                    break;
                } else if on_stack[d] {
                    low[s] = low[s].min(index[d]);
                }
            }
            if let Some(d) = child {
                if let Some(top) = frames.last_mut() {
                    top.1 = pos;
                }
                index[d] = next_index;
                low[d] = next_index;
                next_index += 1;
                stack.push(d);
                on_stack[d] = true;
                frames.push((d, view.arc_range(d).start));
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[s]);
            }
            if low[s] == index[s] {
                while let Some(t) = stack.pop() {
                    on_stack[t] = false;
                    component[t] = next_component;
                    if t == s {
                        break;
                    }
                }
                next_component += 1;
            }
        }
    }
    Some(component)
}

/// Removes the epsilon arcs of one FSA (exact in the tropical semiring), given which states
/// are reachable from the start. The kept states are the start and the destinations of the
/// non-epsilon arcs leaving reachable states, in their order (the final state stays
/// last); each gets one arc per (label, destination) of the non-epsilon arcs its epsilon
/// closure reaches, with the best score, sorted as k2 sorts arcs; the arc's derivs are the
/// epsilon chain then the arc. States are visited in order, so memory is read forwards;
/// above [`PARALLEL_MIN_ARCS`] arcs on several threads, by ranges of states whose parts are
/// joined in order (the same result, arc for arc).
pub(crate) fn remove_epsilon(
    view: FsaView<'_>,
    fsa_idx: usize,
    accessible: &[bool],
) -> Result<BuiltDerivs, Error> {
    let n = view.num_states();
    if n == 0 {
        return Ok(BuiltDerivs::empty());
    }
    let mut kept = vec![false; n];
    kept[0] = true;
    for arc in view.arcs {
        if arc.label != 0 && accessible[arc.src_state as usize] {
            kept[arc.dest_state as usize] = true;
        }
    }
    if !kept[n - 1] {
        return Ok(BuiltDerivs::empty());
    }
    let mut new_of_old = vec![-1i32; n];
    let mut count = 0i32;
    for s in 0..n {
        if kept[s] {
            new_of_old[s] = count;
            count += 1;
        }
    }
    let ranges = state_ranges(view);
    let parts = in_parts(
        &ranges,
        || Closure::new(n),
        |closure, range| closed_arcs_in(view, range, fsa_idx, &kept, &new_of_old, closure),
    );
    // (collected in order: the first part's error is that of the first state that fails)
    let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(BuiltDerivs::joined(parts))
}

/// The output arcs of the kept states in `range` of [`remove_epsilon`] (splits from 0,
/// derivs numbered within the part).
fn closed_arcs_in(
    view: FsaView<'_>,
    range: Range<usize>,
    fsa_idx: usize,
    kept: &[bool],
    new_of_old: &[i32],
    closure: &mut Closure,
) -> Result<BuiltDerivs, Error> {
    let arcs = (view.splits[range.end] - view.splits[range.start]) as usize;
    let mut out = BuiltDerivs::empty();
    out.arcs.reserve(arcs);
    out.deriv_splits.reserve(arcs);
    out.deriv_values.reserve(arcs);
    out.splits.reserve(range.len());
    let mut candidates: Vec<(u32, i32, f64, usize, i32)> = Vec::new();
    for s in range {
        if !kept[s] {
            continue;
        }
        let new_src = new_of_old[s];
        let state_arcs = view.state_arcs(s);
        let plain = state_arcs.iter().all(|a| a.label != 0)
            && state_arcs
                .windows(2)
                .all(|w| w[0].sort_key() < w[1].sort_key());
        if plain {
            // no epsilon, sorted, no repeated (label, dest): the arcs as they are
            let base = view.arc_range(s).start;
            for (k, arc) in state_arcs.iter().enumerate() {
                out.arcs.push(Arc::new(
                    new_src,
                    new_of_old[arc.dest_state as usize],
                    arc.label,
                    arc.score,
                ));
                out.deriv_values.push((base + k) as i32);
                out.deriv_splits.push(out.deriv_values.len() as i32);
            }
        } else {
            // a top-sorted acyclic input has no epsilon cycle
            closure.run(view, s, fsa_idx, None)?;
            candidates.clear();
            for &t in &closure.touched {
                let base = closure.best[t];
                for idx in view.arc_range(t) {
                    let arc = view.arcs[idx];
                    if arc.label == 0 {
                        continue;
                    }
                    candidates.push((
                        arc.label as u32,
                        arc.dest_state,
                        base + arc.score as f64,
                        t,
                        idx as i32,
                    ));
                }
            }
            // k2's arc order; the best score first within a (label, dest) group (a stable
            // sort, which merges the already sorted runs of each closure state quickly). A
            // NaN score sorts after every number, so the order stays total: the sort may
            // panic on a comparison that is not (NaN equal to everything was not)
            candidates.sort_by(|x, y| {
                (x.0, x.1)
                    .cmp(&(y.0, y.1))
                    .then(best_score_first(x.2, y.2))
                    .then(x.4.cmp(&y.4))
            });
            let mut last: Option<(u32, i32)> = None;
            for &(label, dest, score, t, idx) in &candidates {
                if last == Some((label, dest)) {
                    continue;
                }
                last = Some((label, dest));
                out.arcs.push(Arc::new(
                    new_src,
                    new_of_old[dest as usize],
                    label as i32,
                    score as f32,
                ));
                closure.chain(view, t, &mut out.deriv_values, fsa_idx, s)?;
                out.deriv_values.push(idx);
                out.deriv_splits.push(out.deriv_values.len() as i32);
            }
        }
        out.splits.push(out.arcs.len() as i32);
    }
    Ok(out)
}

/// One arc of the epsilon closure between two kept states: its destination, the best
/// epsilon chain's score and that chain (a range of `Combining::chains`).
#[derive(Clone, Copy)]
struct ClosureArc {
    dest: usize,
    score: f64,
    chain: (u32, u32),
}

/// The epsilon closure restricted to kept states, split by where each arc is folded: into
/// the non-epsilon arcs that follow it (`foll`) or into those that precede it (`prec`).
struct Combining {
    /// Per input state, the range of its closure arcs in `foll` / `prec`.
    foll_splits: Vec<u32>,
    foll: Vec<ClosureArc>,
    prec_splits: Vec<u32>,
    prec: Vec<ClosureArc>,
    chains: Vec<i32>,
}

impl Combining {
    fn foll(&self, s: usize) -> &[ClosureArc] {
        &self.foll[self.foll_splits[s] as usize..self.foll_splits[s + 1] as usize]
    }

    fn prec(&self, s: usize) -> &[ClosureArc] {
        &self.prec[self.prec_splits[s] as usize..self.prec_splits[s + 1] as usize]
    }

    fn chain(&self, e: &ClosureArc) -> &[i32] {
        &self.chains[e.chain.0 as usize..e.chain.1 as usize]
    }

    /// The parts of consecutive state ranges as one, in their order; the first part's
    /// error when there is one (the error of the first state in order that fails).
    fn joined(parts: Vec<Result<Combining, Error>>) -> Result<Combining, Error> {
        let mut parts = parts.into_iter();
        let mut all = parts.next().expect("at least one range of states")?;
        for part in parts {
            let part = part?;
            let (foll, prec) = (all.foll.len() as u32, all.prec.len() as u32);
            let chains = all.chains.len() as u32;
            let moved = |e: &ClosureArc| ClosureArc {
                chain: (e.chain.0 + chains, e.chain.1 + chains),
                ..*e
            };
            all.foll.extend(part.foll.iter().map(moved));
            all.prec.extend(part.prec.iter().map(moved));
            all.chains.extend_from_slice(&part.chains);
            all.foll_splits
                .extend(part.foll_splits[1..].iter().map(|x| x + foll));
            all.prec_splits
                .extend(part.prec_splits[1..].iter().map(|x| x + prec));
        }
        Ok(all)
    }
}

/// Removes the epsilon arcs of one FSA as k2 does for an input that is not top-sorted and
/// acyclic (k2's `RemoveEpsilonDevice`, which its CPU build also runs on cyclic input):
/// exact in the tropical semiring, and small when an epsilon arc leads into a state with
/// many arcs (the back-off and word-end arcs of a decoding graph).
///
/// The kept states are the start, the final state and every state with a non-epsilon arc
/// entering or leaving it, in their order. The best epsilon chain between two kept states
/// (the epsilon closure) becomes one closure arc `a -> b`, folded into the non-epsilon
/// arcs that follow it (those leaving `b`) when `a` is the start or fewer non-epsilon arcs
/// leave `b` than enter `a`, and otherwise into the non-epsilon arcs that precede it (those
/// entering `a`). Each kept state's arcs are, in this order: closure arcs folded forwards
/// (`[e, n]`), its non-epsilon arcs folded with a following closure arc (`[n, e]`), the
/// former folded with a following closure arc (`[e, n, e']`), its non-epsilon arcs; then
/// sorted as k2 sorts arcs (stable). The result need not be connected. Derivs: the input
/// arcs of each combination in path order. Above [`PARALLEL_MIN_ARCS`] arcs on several
/// threads, the closures and then the arcs are computed by ranges of states, joined in
/// order (the same result, arc for arc).
pub(crate) fn remove_epsilon_combining(
    view: FsaView<'_>,
    fsa_idx: usize,
) -> Result<BuiltDerivs, Error> {
    let n = view.num_states();
    if n == 0 || view.arcs.is_empty() {
        return Ok(BuiltDerivs::empty());
    }
    let mut kept = vec![false; n];
    let mut entering = vec![0u32; n];
    let mut leaving = vec![0u32; n];
    let mut has_epsilon = vec![false; n];
    kept[0] = true;
    kept[n - 1] = true;
    for arc in view.arcs {
        let (src, dest) = (arc.src_state as usize, arc.dest_state as usize);
        if arc.label == 0 {
            has_epsilon[src] = true;
        } else {
            kept[src] = true;
            kept[dest] = true;
            leaving[src] += 1;
            entering[dest] += 1;
        }
    }
    let mut new_of_old = vec![-1i32; n];
    let mut count = 0i32;
    for s in 0..n {
        if kept[s] {
            new_of_old[s] = count;
            count += 1;
        }
    }

    let cycles = epsilon_components(view);
    let sides = Sides {
        view,
        fsa_idx,
        kept: &kept,
        has_epsilon: &has_epsilon,
        leaving: &leaving,
        entering: &entering,
        cycles: cycles.as_deref(),
    };
    let ranges = state_ranges(view);
    let parts = in_parts(
        &ranges,
        || Closure::new(n),
        |closure, range| closures_in(&sides, range, closure),
    );
    let combining = Combining::joined(parts)?;
    let parts = in_parts(
        &ranges,
        || (),
        |_, range| arcs_in(view, range, &kept, &new_of_old, &combining),
    );
    Ok(BuiltDerivs::joined(parts))
}

/// What the closure of each kept state needs to know of the whole FSA.
struct Sides<'a> {
    view: FsaView<'a>,
    fsa_idx: usize,
    kept: &'a [bool],
    has_epsilon: &'a [bool],
    /// Per state, the non-epsilon arcs leaving it and entering it.
    leaving: &'a [u32],
    entering: &'a [u32],
    cycles: Option<&'a [u32]>,
}

/// The states cut into consecutive ranges of about equal arc counts, two per rayon thread;
/// one range (so no parallel job) on one thread or below [`PARALLEL_MIN_ARCS`] arcs.
pub(super) fn state_ranges(view: FsaView<'_>) -> Vec<Range<usize>> {
    let n = view.num_states();
    let threads = rayon::current_num_threads();
    if threads <= 1 || view.arcs.len() < PARALLEL_MIN_ARCS {
        return std::iter::once(0..n).collect();
    }
    let per = view.arcs.len().div_ceil(2 * threads);
    let mut ranges = Vec::with_capacity(2 * threads + 1);
    let mut start = 0;
    while start < n {
        // the first state whose arcs begin `per` arcs or more after `start`'s
        let target = view.splits[start] as usize + per;
        let end = start + 1 + view.splits[start + 1..n].partition_point(|&x| (x as usize) < target);
        ranges.push(start..end);
        start = end;
    }
    ranges
}

/// `f` on each range of states with a scratch value from `init`, in parallel when there
/// are several ranges; the results in the order of the ranges.
fn in_parts<S, T: Send>(
    ranges: &[Range<usize>],
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, Range<usize>) -> T + Sync + Send,
) -> Vec<T> {
    if let [range] = ranges {
        return vec![f(&mut init(), range.clone())];
    }
    ranges
        .par_iter()
        .map_init(init, |scratch, range| f(scratch, range.clone()))
        .collect()
}

/// The closure arcs of the states in `range`, each sent one way or the other; the splits
/// start at 0 and the chains are numbered within the part.
fn closures_in(
    sides: &Sides<'_>,
    range: Range<usize>,
    closure: &mut Closure,
) -> Result<Combining, Error> {
    let Sides {
        view,
        fsa_idx,
        kept,
        has_epsilon,
        leaving,
        entering,
        cycles,
    } = *sides;
    let mut part = Combining {
        foll_splits: Vec::with_capacity(range.len() + 1),
        foll: Vec::new(),
        prec_splits: Vec::with_capacity(range.len() + 1),
        prec: Vec::new(),
        chains: Vec::new(),
    };
    part.foll_splits.push(0);
    part.prec_splits.push(0);
    let mut reached: Vec<usize> = Vec::new();
    for a in range {
        if kept[a] && has_epsilon[a] {
            closure.run(view, a, fsa_idx, cycles)?;
            reached.clear();
            reached.extend(
                closure
                    .touched
                    .iter()
                    .copied()
                    .filter(|&b| b != a && kept[b]),
            );
            reached.sort_unstable();
            for &b in &reached {
                let begin = part.chains.len() as u32;
                closure.chain(view, b, &mut part.chains, fsa_idx, a)?;
                let e = ClosureArc {
                    dest: b,
                    score: closure.best[b],
                    chain: (begin, part.chains.len() as u32),
                };
                if a == 0 || leaving[b] < entering[a] {
                    part.foll.push(e);
                } else {
                    part.prec.push(e);
                }
            }
        }
        part.foll_splits.push(part.foll.len() as u32);
        part.prec_splits.push(part.prec.len() as u32);
    }
    Ok(part)
}

/// The output arcs of the kept states in `range` (splits from 0, derivs numbered within
/// the part).
fn arcs_in(
    view: FsaView<'_>,
    range: Range<usize>,
    kept: &[bool],
    new_of_old: &[i32],
    combining: &Combining,
) -> BuiltDerivs {
    let mut out = BuiltDerivs::empty();
    // one state's arcs before sorting: (arc, range of `derivs`)
    let mut state_arcs: Vec<(Arc, u32, u32)> = Vec::new();
    let mut derivs: Vec<i32> = Vec::new();
    let non_epsilon = |s: usize| {
        view.arc_range(s)
            .filter(move |&idx| view.arcs[idx].label != 0)
    };
    for s in range {
        if !kept[s] {
            continue;
        }
        state_arcs.clear();
        derivs.clear();
        let new_src = new_of_old[s];
        let mut push = |arc: Arc, parts: &[&[i32]], state_arcs: &mut Vec<(Arc, u32, u32)>| {
            let begin = derivs.len() as u32;
            for part in parts {
                derivs.extend_from_slice(part);
            }
            state_arcs.push((arc, begin, derivs.len() as u32));
        };
        // [e, n]
        for e in combining.foll(s) {
            for idx in non_epsilon(e.dest) {
                let arc = view.arcs[idx];
                let score = (e.score + arc.score as f64) as f32;
                let out_arc = Arc::new(
                    new_src,
                    new_of_old[arc.dest_state as usize],
                    arc.label,
                    score,
                );
                push(
                    out_arc,
                    &[combining.chain(e), &[idx as i32]],
                    &mut state_arcs,
                );
            }
        }
        // [n, e]
        for idx in non_epsilon(s) {
            let arc = view.arcs[idx];
            for e in combining.prec(arc.dest_state as usize) {
                let score = (arc.score as f64 + e.score) as f32;
                let out_arc = Arc::new(new_src, new_of_old[e.dest], arc.label, score);
                push(
                    out_arc,
                    &[&[idx as i32], combining.chain(e)],
                    &mut state_arcs,
                );
            }
        }
        // [e, n, e']
        for e in combining.foll(s) {
            for idx in non_epsilon(e.dest) {
                let arc = view.arcs[idx];
                for e2 in combining.prec(arc.dest_state as usize) {
                    let score = (e.score + arc.score as f64 + e2.score) as f32;
                    let out_arc = Arc::new(new_src, new_of_old[e2.dest], arc.label, score);
                    push(
                        out_arc,
                        &[combining.chain(e), &[idx as i32], combining.chain(e2)],
                        &mut state_arcs,
                    );
                }
            }
        }
        // n
        for idx in non_epsilon(s) {
            let arc = view.arcs[idx];
            let out_arc = Arc::new(
                new_src,
                new_of_old[arc.dest_state as usize],
                arc.label,
                arc.score,
            );
            push(out_arc, &[&[idx as i32]], &mut state_arcs);
        }
        state_arcs.sort_by_key(|(arc, _, _)| arc.sort_key());
        for &(arc, begin, end) in &state_arcs {
            out.arcs.push(arc);
            out.deriv_values
                .extend_from_slice(&derivs[begin as usize..end as usize]);
            out.deriv_splits.push(out.deriv_values.len() as i32);
        }
        out.splits.push(out.arcs.len() as i32);
    }
    out
}

/// Orders scores best (largest) first, NaN after every number and equal to another NaN: a
/// total order, where `partial_cmp` with NaN as equal to everything is not (a NaN equal to
/// both 1 and 2 makes 1 and 2 equal), which the standard sorts detect and panic on. `-0.0`
/// and `0.0` stay equal.
pub(crate) fn best_score_first(a: f64, b: f64) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a.is_nan(), b.is_nan()) {
        (false, false) => b.partial_cmp(&a).unwrap_or(Ordering::Equal),
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
    }
}

#[cfg(test)]
mod tests {
    use super::best_score_first;

    #[test]
    fn best_score_first_is_a_total_order_with_nan_last() {
        let values = [
            f64::NAN,
            2.0,
            f64::NEG_INFINITY,
            1.0,
            -0.0,
            f64::INFINITY,
            0.0,
            f64::NAN,
        ];
        let mut sorted = values.to_vec();
        // the standard sort panics on a comparison that is not a total order
        sorted.sort_by(|a, b| best_score_first(*a, *b));
        assert_eq!(
            &sorted[..6],
            &[f64::INFINITY, 2.0, 1.0, -0.0, 0.0, f64::NEG_INFINITY]
        );
        assert!(sorted[6].is_nan() && sorted[7].is_nan());
        // transitivity on every triple, against the order of the ranks a naive key gives
        // the key (is it NaN, minus the score), compared field by field
        let key = |x: f64| (x.is_nan(), if x.is_nan() { 0.0 } else { -x });
        for &a in &values {
            for &b in &values {
                let (ka, kb) = (key(a), key(b));
                let naive = ka.0.cmp(&kb.0).then(ka.1.partial_cmp(&kb.1).unwrap());
                assert_eq!(best_score_first(a, b), naive, "{a} vs {b}");
            }
        }
    }
}
