//! The epsilon-removal kernel, exact in the tropical semiring: each kept state gets, for
//! every non-epsilon arc reachable through a chain of epsilon arcs, one arc carrying the
//! best chain's score.

use crate::arc::Arc;
use crate::error::Error;
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
}

impl Closure {
    fn new(n: usize) -> Self {
        Self {
            best: vec![f64::NEG_INFINITY; n],
            via: vec![-1; n],
            relaxed: vec![0; n],
            queued: vec![false; n],
            touched: Vec::new(),
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
    /// with positive score makes some state improve more than `n` times.
    fn run(&mut self, view: FsaView<'_>, start: usize, fsa_idx: usize) -> Result<(), Error> {
        let n = view.num_states() as u32;
        self.clear();
        self.best[start] = 0.0;
        self.touched.push(start);
        let mut queue = std::collections::VecDeque::new();
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

    /// The epsilon arcs of the best chain from the start to `s`, in path order.
    fn chain(&self, view: FsaView<'_>, mut s: usize, out: &mut Vec<i32>) {
        let begin = out.len();
        while self.via[s] >= 0 {
            let idx = self.via[s];
            out.push(idx);
            s = view.arcs[idx as usize].src_state as usize;
        }
        out[begin..].reverse();
    }
}

/// One kept state's arcs, deriv row-splits and deriv values.
type StateOut = (Vec<Arc>, Vec<i32>, Vec<i32>);

/// Removes the epsilon arcs of one FSA (exact in the tropical semiring). States reachable
/// from the start through non-epsilon arcs are kept, in their order; each gets one arc per
/// (label, destination) of the non-epsilon arcs its epsilon closure reaches, with the best
/// score, sorted as k2 sorts arcs; the arc's derivs are the epsilon chain then the arc. The
/// result is then connected by the caller.
pub(crate) fn remove_epsilon(view: FsaView<'_>, fsa_idx: usize) -> Result<BuiltDerivs, Error> {
    let n = view.num_states();
    if n == 0 {
        return Ok(BuiltDerivs::empty());
    }
    let mut closure = Closure::new(n);
    // per kept state: its arcs (local src = old state for now) and derivs
    let mut per_state: Vec<Option<StateOut>> = vec![None; n];
    let mut stack = vec![0usize];
    let mut seen = vec![false; n];
    seen[0] = true;
    let mut candidates: Vec<(u32, i32, f64, usize, i32)> = Vec::new();
    while let Some(s) = stack.pop() {
        closure.run(view, s, fsa_idx)?;
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
        // k2's arc order; the best score first within a (label, dest) group
        candidates.sort_by(|x, y| {
            (x.0, x.1)
                .cmp(&(y.0, y.1))
                .then(y.2.partial_cmp(&x.2).unwrap_or(std::cmp::Ordering::Equal))
        });
        let mut arcs = Vec::new();
        let mut dsplits = vec![0i32];
        let mut dvalues = Vec::new();
        let mut last: Option<(u32, i32)> = None;
        for &(label, dest, score, t, idx) in &candidates {
            if last == Some((label, dest)) {
                continue;
            }
            last = Some((label, dest));
            arcs.push(Arc::new(s as i32, dest, label as i32, score as f32));
            closure.chain(view, t, &mut dvalues);
            dvalues.push(idx);
            dsplits.push(dvalues.len() as i32);
            let d = dest as usize;
            if !seen[d] {
                seen[d] = true;
                stack.push(d);
            }
        }
        per_state[s] = Some((arcs, dsplits, dvalues));
    }
    if !seen[n - 1] {
        return Ok(BuiltDerivs::empty());
    }
    // number the kept states in their old order; the final state stays last
    let mut new_of_old = vec![-1i32; n];
    let mut count = 0i32;
    for s in 0..n {
        if seen[s] {
            new_of_old[s] = count;
            count += 1;
        }
    }
    let mut out = BuiltDerivs::empty();
    for s in 0..n {
        let Some((arcs, dsplits, dvalues)) = per_state[s].take() else {
            continue;
        };
        let base = out.deriv_values.len() as i32;
        for mut arc in arcs {
            arc.src_state = new_of_old[s];
            arc.dest_state = new_of_old[arc.dest_state as usize];
            out.arcs.push(arc);
        }
        out.deriv_splits
            .extend(dsplits[1..].iter().map(|x| x + base));
        out.deriv_values.extend_from_slice(&dvalues);
        out.splits.push(out.arcs.len() as i32);
    }
    Ok(out)
}
