//! Weight pushing of an FSA's scores towards its start state, in the tropical or the log
//! semiring: OpenFst's generic single-source shortest distance, run backwards from the
//! final state.

use std::collections::VecDeque;

use crate::arc::Arc;
use crate::error::Error;
use crate::view::FsaView;

/// Changes under this are taken as converged (OpenFst's `kShortestDelta`).
const DELTA: f64 = 1e-6;

fn plus(log: bool, x: f64, y: f64) -> f64 {
    if !log {
        return x.max(y);
    }
    if x == f64::NEG_INFINITY {
        return y;
    }
    if y == f64::NEG_INFINITY {
        return x;
    }
    let m = x.max(y);
    m + ((x - m).exp() + (y - m).exp()).ln()
}

/// The backward potential of every state: the best (tropical) or log-sum (log) score of
/// the paths from it to the final state. Cycles are allowed; a cycle with positive score, or
/// an iteration that does not settle in `1000 * (states + arcs)` steps, is an error.
pub(crate) fn backward_potentials(
    view: FsaView<'_>,
    log: bool,
    fsa_idx: usize,
) -> Result<Vec<f64>, Error> {
    let n = view.num_states();
    // incoming arcs by destination
    let mut in_splits = vec![0usize; n + 1];
    for arc in view.arcs {
        in_splits[arc.dest_state as usize + 1] += 1;
    }
    for i in 0..n {
        in_splits[i + 1] += in_splits[i];
    }
    let mut fill = in_splits.clone();
    let mut incoming = vec![0u32; view.arcs.len()];
    for (i, arc) in view.arcs.iter().enumerate() {
        let d = arc.dest_state as usize;
        incoming[fill[d]] = i as u32;
        fill[d] += 1;
    }
    let mut dist = vec![f64::NEG_INFINITY; n];
    let mut residual = vec![f64::NEG_INFINITY; n];
    let mut queued = vec![false; n];
    let mut queue = VecDeque::new();
    let final_state = n - 1;
    dist[final_state] = 0.0;
    residual[final_state] = 0.0;
    queue.push_back(final_state);
    queued[final_state] = true;
    let mut budget = 1000u64 * (n as u64 + view.arcs.len() as u64) + 1000;
    while let Some(s) = queue.pop_front() {
        queued[s] = false;
        let r = std::mem::replace(&mut residual[s], f64::NEG_INFINITY);
        for &i in &incoming[in_splits[s]..in_splits[s + 1]] {
            let arc: Arc = view.arcs[i as usize];
            let p = arc.src_state as usize;
            let add = r + arc.score as f64;
            let new = plus(log, dist[p], add);
            let changed = if dist[p] == f64::NEG_INFINITY {
                new > f64::NEG_INFINITY
            } else {
                (new - dist[p]).abs() > DELTA * new.abs().max(1.0)
            };
            if changed {
                budget = budget.saturating_sub(1);
                if budget == 0 || new.is_infinite() {
                    return Err(Error::PushingDiverged { fsa: fsa_idx });
                }
                dist[p] = new;
                residual[p] = plus(log, residual[p], add);
                if !queued[p] {
                    queued[p] = true;
                    queue.push_back(p);
                }
            }
        }
    }
    Ok(dist)
}

/// Pushes the scores of one connected FSA: each arc gets `score + pot[dest] - pot[src]`,
/// and the total `pot[0]` goes on the arcs leaving the start state (or, when some arc
/// re-enters the start state, on the arcs entering the final state), so every path keeps
/// its score.
pub(crate) fn push(
    splits: &[i32],
    arcs: &mut [Arc],
    log: bool,
    fsa_idx: usize,
) -> Result<(), Error> {
    if splits.len() < 2 {
        return Ok(());
    }
    let view = FsaView::new(splits, arcs);
    let pot = backward_potentials(view, log, fsa_idx)?;
    let n = view.num_states();
    let total = pot[0];
    if total == f64::NEG_INFINITY {
        return Ok(());
    }
    let start_reentered = arcs.iter().any(|a| a.dest_state == 0);
    for arc in arcs.iter_mut() {
        let (s, d) = (arc.src_state as usize, arc.dest_state as usize);
        if pot[s] == f64::NEG_INFINITY || pot[d] == f64::NEG_INFINITY {
            continue;
        }
        let mut score = arc.score as f64 + pot[d] - pot[s];
        let carries_total = if start_reentered { d == n - 1 } else { s == 0 };
        if carries_total {
            score += total;
        }
        arc.score = score as f32;
    }
    Ok(())
}
