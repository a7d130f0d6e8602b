//! The determinization kernel: weighted subset construction in the tropical semiring
//! (scores combined with `max`), each subset a list of (input state, residual score).

use std::collections::HashMap;

use super::rmeps::BuiltDerivs;
use crate::arc::Arc;
use crate::error::Error;
use crate::view::FsaView;

/// Residuals are rounded to multiples of this before subsets are compared, so that scores
/// equal up to rounding make one subset (as OpenFst's `delta` does).
const QUANTUM: f64 = 1.0 / 65536.0;

/// A subset: (input state, residual in quanta), sorted by state.
type Subset = Vec<(i32, i64)>;

/// Determinizes one connected, epsilon-free FSA. The output states are numbered in the
/// order a queue started at the start subset meets them, the final state last; each state's
/// arcs are in k2's order. Output arc `i`'s derivs list, for each input state of its
/// destination subset, the input arc that gave it its best score, best first.
pub(crate) fn determinize(
    view: FsaView<'_>,
    fsa_idx: usize,
    max_states: usize,
    max_arcs: usize,
) -> Result<BuiltDerivs, Error> {
    let n = view.num_states();
    if n == 0 {
        return Ok(BuiltDerivs::empty());
    }
    let final_state = (n - 1) as i32;
    const FINAL: i32 = -1;
    let limit = || Error::DeterminizeLimit {
        fsa: fsa_idx,
        max_states,
        max_arcs,
    };
    let mut ids: HashMap<Subset, i32> = HashMap::new();
    let mut subsets: Vec<Subset> = vec![vec![(0, 0)]];
    ids.insert(vec![(0, 0)], 0);
    ids.entry(vec![(final_state, 0)]).or_insert(FINAL);
    let mut out = BuiltDerivs::empty();
    // (label as u32, dest, value, arc index)
    let mut moves: Vec<(u32, i32, f64, i32)> = Vec::new();
    let mut next = 0usize;
    while next < subsets.len() {
        let src = next as i32;
        moves.clear();
        for &(state, residual) in &subsets[next] {
            let r = residual as f64 * QUANTUM;
            for idx in view.arc_range(state as usize) {
                let arc = view.arcs[idx];
                moves.push((
                    arc.label as u32,
                    arc.dest_state,
                    r + arc.score as f64,
                    idx as i32,
                ));
            }
        }
        next += 1;
        moves.sort_by(|x, y| {
            (x.0, x.1)
                .cmp(&(y.0, y.1))
                .then(y.2.partial_cmp(&x.2).unwrap_or(std::cmp::Ordering::Equal))
                .then(x.3.cmp(&y.3))
        });
        let mut begin = 0;
        while begin < moves.len() {
            let label = moves[begin].0;
            let mut end = begin;
            while end < moves.len() && moves[end].0 == label {
                end += 1;
            }
            // the best move of each destination (first of its run), and the best of all
            let mut heads: Vec<(i32, f64, i32)> = Vec::new();
            for k in begin..end {
                if k == begin || moves[k].1 != moves[k - 1].1 {
                    heads.push((moves[k].1, moves[k].2, moves[k].3));
                }
            }
            let best = heads.iter().map(|h| h.1).fold(f64::NEG_INFINITY, f64::max);
            let subset: Subset = heads
                .iter()
                .map(|&(dest, value, _)| (dest, ((value - best) / QUANTUM).round() as i64))
                .collect();
            let dest = match ids.get(&subset) {
                Some(&id) => id,
                None => {
                    if subsets.len() + 1 >= max_states {
                        return Err(limit());
                    }
                    let id = subsets.len() as i32;
                    ids.insert(subset.clone(), id);
                    subsets.push(subset);
                    id
                }
            };
            if out.arcs.len() >= max_arcs {
                return Err(limit());
            }
            out.arcs
                .push(Arc::new(src, dest, label as i32, best as f32));
            // derivs: the best arc first, then the others in destination order
            let best_pos = heads
                .iter()
                .position(|h| h.1 == best)
                .expect("a best move exists");
            out.deriv_values.push(heads[best_pos].2);
            for (k, h) in heads.iter().enumerate() {
                if k != best_pos {
                    out.deriv_values.push(h.2);
                }
            }
            out.deriv_splits.push(out.deriv_values.len() as i32);
            begin = end;
        }
        out.splits.push(out.arcs.len() as i32);
    }
    let final_id = subsets.len() as i32;
    for arc in &mut out.arcs {
        if arc.dest_state == FINAL {
            arc.dest_state = final_id;
        }
    }
    out.splits.push(out.arcs.len() as i32);
    Ok(out)
}
