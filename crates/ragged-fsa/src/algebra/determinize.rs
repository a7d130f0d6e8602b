//! The determinization kernel: weighted subset construction in the tropical semiring
//! (scores combined with `max`). A subset is a list of (input state, residual score,
//! residual output string); for an acceptor every string is empty, for a transducer the
//! output labels are delayed until the paths agree on them (as Kaldi's `DeterminizeStar`).

use std::collections::HashMap;

use super::rmeps::BuiltDerivs;
use crate::arc::Arc;
use crate::error::Error;
use crate::view::FsaView;

/// Residuals are rounded to multiples of this before subsets are compared, so that scores
/// equal up to rounding make one subset (as OpenFst's `delta` does).
const QUANTUM: f64 = 1.0 / 65536.0;

/// A subset: (input state, residual in quanta, residual string id), sorted by state.
type Subset = Vec<(i32, i64, u32)>;

/// Output label sequences, numbered; 0 is the empty sequence.
struct Strings {
    all: Vec<Vec<i32>>,
    ids: HashMap<Vec<i32>, u32>,
}

impl Strings {
    fn new() -> Self {
        let mut ids = HashMap::new();
        ids.insert(Vec::new(), 0);
        Self {
            all: vec![Vec::new()],
            ids,
        }
    }

    fn id(&mut self, s: &[i32]) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.all.len() as u32;
        self.all.push(s.to_vec());
        self.ids.insert(s.to_vec(), id);
        id
    }
}

/// The output of one FSA's determinization: arcs with their derivs, and each arc's output
/// labels (all empty for an acceptor).
pub(crate) struct Determinized {
    pub(crate) fsa: BuiltDerivs,
    pub(crate) out_splits: Vec<i32>,
    pub(crate) out_labels: Vec<i32>,
}

/// Determinizes one connected, epsilon-free FSA whose arc `i` outputs `output(i)` (empty
/// for an acceptor; zeros and the `-1` of final arcs are not output). The output states are
/// numbered in the order a queue started at the start subset meets them, the final state
/// last; each state's arcs are in k2's order. Output arc `i`'s derivs list, for each input
/// state of its destination subset, the input arc that gave it its best score, best first.
/// Where paths with one input disagree on their output, the best path's output is kept.
pub(crate) fn determinize<'o>(
    view: FsaView<'_>,
    fsa_idx: usize,
    max_states: usize,
    max_arcs: usize,
    output: impl Fn(usize) -> &'o [i32],
) -> Result<Determinized, Error> {
    let n = view.num_states();
    let mut result = Determinized {
        fsa: BuiltDerivs::empty(),
        out_splits: vec![0],
        out_labels: Vec::new(),
    };
    if n == 0 {
        return Ok(result);
    }
    let final_state = (n - 1) as i32;
    const FINAL: i32 = -1;
    let limit = || Error::DeterminizeLimit {
        fsa: fsa_idx,
        max_states,
        max_arcs,
    };
    let mut strings = Strings::new();
    let mut ids: HashMap<Subset, i32> = HashMap::new();
    let mut subsets: Vec<Subset> = vec![vec![(0, 0, 0)]];
    ids.insert(vec![(0, 0, 0)], 0);
    ids.entry(vec![(final_state, 0, 0)]).or_insert(FINAL);
    let out = &mut result.fsa;
    // (label as u32, dest, value, arc index, residual string id of the source element)
    let mut moves: Vec<(u32, i32, f64, i32, u32)> = Vec::new();
    let mut heads: Vec<(i32, f64, i32, Vec<i32>)> = Vec::new();
    let mut next = 0usize;
    while next < subsets.len() {
        let src = next as i32;
        moves.clear();
        for &(state, residual, string) in &subsets[next] {
            let r = residual as f64 * QUANTUM;
            for idx in view.arc_range(state as usize) {
                let arc = view.arcs[idx];
                moves.push((
                    arc.label as u32,
                    arc.dest_state,
                    r + arc.score as f64,
                    idx as i32,
                    string,
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
            // the best move of each destination (first of its run) with its pending output
            heads.clear();
            for k in begin..end {
                if k == begin || moves[k].1 != moves[k - 1].1 {
                    let (_, dest, value, arc, string) = moves[k];
                    let mut pending = strings.all[string as usize].clone();
                    pending.extend(
                        output(arc as usize)
                            .iter()
                            .copied()
                            .filter(|&x| x != 0 && x != -1),
                    );
                    heads.push((dest, value, arc, pending));
                }
            }
            let best_pos = (0..heads.len())
                .max_by(|&x, &y| {
                    heads[x]
                        .1
                        .partial_cmp(&heads[y].1)
                        .unwrap_or(std::cmp::Ordering::Equal)
                        .then(y.cmp(&x))
                })
                .expect("a move exists");
            let best = heads[best_pos].1;
            // emit what every path agrees on; a final arc emits all of the best path's rest
            let emit_len = if label == u32::MAX {
                heads[best_pos].3.len()
            } else {
                let first = &heads[0].3;
                heads.iter().skip(1).fold(first.len(), |len, h| {
                    first[..len]
                        .iter()
                        .zip(&h.3)
                        .take_while(|(a, b)| a == b)
                        .count()
                })
            };
            let emitted: Vec<i32> = heads[best_pos].3[..emit_len].to_vec();
            let mut subset: Subset = Vec::with_capacity(heads.len());
            for h in heads.iter() {
                let rest = if label == u32::MAX {
                    0
                } else {
                    strings.id(&h.3[emit_len..])
                };
                subset.push((h.0, ((h.1 - best) / QUANTUM).round() as i64, rest));
            }
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
            result.out_labels.extend_from_slice(&emitted);
            result.out_splits.push(result.out_labels.len() as i32);
            // derivs: the best arc first, then the others in destination order
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
    Ok(result)
}
