//! The determinization kernel: weighted subset construction in the tropical semiring
//! (scores combined with `max`). A subset is a list of (input state, residual score,
//! residual output string); for an acceptor every string is empty, for a transducer the
//! output labels wait, as in k2, until the best paths into a subset share the input arcs
//! that carry them (k2's base state advances). Each element also keeps its best path from
//! that base state, which gives k2's unpushed scores (see [`Determinized::pending`]).

use std::collections::HashMap;

use super::rmeps::BuiltDerivs;
use super::FastBuild;
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
    ids: HashMap<Vec<i32>, u32, FastBuild>,
    /// The bytes the sequences' elements hold: each twice (in `all` and as a key of
    /// `ids`). (The headers and table entries are counted from the capacities.)
    bytes: usize,
}

/// The bytes of one `Vec` header.
const VEC_BYTES: usize = std::mem::size_of::<Vec<i32>>();

impl Strings {
    fn new() -> Self {
        let mut ids = HashMap::default();
        ids.insert(Vec::new(), 0);
        Self {
            all: vec![Vec::new()],
            ids,
            bytes: 0,
        }
    }

    fn id(&mut self, s: &[i32]) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.all.len() as u32;
        self.all.push(s.to_vec());
        self.ids.insert(s.to_vec(), id);
        self.bytes = self.bytes.saturating_add(8 * s.len());
        id
    }
}

/// The bounds of one determinization ([`crate::DeterminizeConfig`]'s).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub(crate) max_states: usize,
    pub(crate) max_arcs: usize,
    pub(crate) max_bytes: usize,
}

/// The output of one FSA's determinization: arcs with their derivs, and each arc's output
/// labels (all empty for an acceptor).
pub(crate) struct Determinized {
    pub(crate) fsa: BuiltDerivs,
    pub(crate) out_splits: Vec<i32>,
    pub(crate) out_labels: Vec<i32>,
    /// Per output state, the score of the best path from k2's base state of that subset
    /// (the last input state all of its best paths share) to its best element. The arc
    /// scores are those of the eager construction (each arc carries the best score so
    /// far); `score + pending[src] - pending[dest]` gives k2's unpushed scores, where each
    /// arc carries the scores of the input arcs the best paths agree on so far.
    pub(crate) pending: Vec<f64>,
}

/// `score + pending[src] - pending[dest]` on every arc: k2's `kNoWeightPushing` scores from
/// the eager ones (see [`Determinized::pending`]).
pub(crate) fn delay_scores(fsa: &mut BuiltDerivs, pending: &[f64]) {
    for arc in &mut fsa.arcs {
        let shift = pending[arc.src_state as usize] - pending[arc.dest_state as usize];
        if shift != 0.0 {
            arc.score = (arc.score as f64 + shift) as f32;
        }
    }
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
    bounds: Bounds,
    output: impl Fn(usize) -> &'o [i32],
) -> Result<Determinized, Error> {
    let Bounds {
        max_states,
        max_arcs,
        max_bytes,
    } = bounds;
    let n = view.num_states();
    let mut result = Determinized {
        fsa: BuiltDerivs::empty(),
        out_splits: vec![0],
        out_labels: Vec::new(),
        pending: Vec::new(),
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
    // subsets of two or more elements, by content
    let mut ids: HashMap<Subset, i32, FastBuild> = HashMap::default();
    let mut subsets: Vec<Subset> = vec![vec![(0, 0, 0)]];
    // per subset and element, the input arcs of its best path from the subset's base state
    // (an id in `chains`; 0 is the empty path), and the subset's pending score
    let mut chains = Strings::new();
    let mut subset_chains: Vec<Vec<u32>> = vec![vec![0]];
    let pending_scores = &mut result.pending;
    pending_scores.push(0.0);
    let mut chain_scratch: Vec<Vec<i32>> = Vec::new();
    // singleton subsets {(state, 0, empty)}, the common case, are found without hashing
    let mut singleton: Vec<i32> = vec![i32::MIN; n];
    singleton[0] = 0;
    singleton[final_state as usize] = FINAL;
    let out = &mut result.fsa;
    // (label as u32, dest, value, arc index, residual string id and chain id of the source
    // element)
    let mut moves: Vec<(u32, i32, f64, i32, u32, u32)> = Vec::new();
    // per destination: (dest, value, arc, residual string id, chain id of the source element)
    let mut heads: Vec<(i32, f64, i32, u32, u32)> = Vec::new();
    let mut pending: Vec<Vec<i32>> = Vec::new();
    // the bytes the subsets' elements hold (in `subsets`, again as a key of `ids` when the
    // subset has two or more elements, and their chain ids)
    let element = std::mem::size_of::<(i32, i64, u32)>();
    let mut subset_bytes = 0usize;
    let mut next = 0usize;
    while next < subsets.len() {
        let src = next as i32;
        moves.clear();
        for (&(state, residual, string), &chain) in subsets[next].iter().zip(&subset_chains[next]) {
            let r = residual as f64 * QUANTUM;
            for idx in view.arc_range(state as usize) {
                let arc = view.arcs[idx];
                moves.push((
                    arc.label as u32,
                    arc.dest_state,
                    r + arc.score as f64,
                    idx as i32,
                    string,
                    chain,
                ));
            }
        }
        next += 1;
        moves.sort_unstable_by(|x, y| {
            (x.0, x.1)
                .cmp(&(y.0, y.1))
                .then(crate::algebra::rmeps::best_score_first(x.2, y.2))
                .then(x.3.cmp(&y.3))
        });
        let mut begin = 0;
        while begin < moves.len() {
            let label = moves[begin].0;
            let mut end = begin;
            while end < moves.len() && moves[end].0 == label {
                end += 1;
            }
            // the best move of each destination (first of its run)
            heads.clear();
            for k in begin..end {
                if k == begin || moves[k].1 != moves[k - 1].1 {
                    let (_, dest, value, arc, string, chain) = moves[k];
                    heads.push((dest, value, arc, string, chain));
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
            let is_final = label == u32::MAX;
            let output_of = |arc: i32| {
                output(arc as usize)
                    .iter()
                    .copied()
                    .filter(|&x| x != 0 && x != -1)
            };
            let dest = if heads.len() == 1 || is_final {
                // one path (or the end): everything pending is emitted
                let (dest_state, _, arc, string, _) = heads[best_pos];
                result
                    .out_labels
                    .extend_from_slice(&strings.all[string as usize]);
                result.out_labels.extend(output_of(arc));
                if is_final {
                    FINAL
                } else {
                    let known = singleton[dest_state as usize];
                    if known != i32::MIN {
                        known
                    } else {
                        if subsets.len() + 1 >= max_states {
                            return Err(limit());
                        }
                        let id = subsets.len() as i32;
                        singleton[dest_state as usize] = id;
                        subset_bytes = subset_bytes.saturating_add(element + 4);
                        subsets.push(vec![(dest_state, 0, 0)]);
                        subset_chains.push(vec![0]);
                        pending_scores.push(0.0);
                        id
                    }
                }
            } else {
                // k2's rule: the input arcs every best path shares (from the base state
                // on) are emitted with their outputs; the rest stays pending
                pending.clear();
                for h in heads.iter() {
                    let mut p = strings.all[h.3 as usize].clone();
                    p.extend(output_of(h.2));
                    pending.push(p);
                }
                let shared = shared_chain_prefix(&chains, &heads);
                let best_chain = &chains.all[heads[best_pos].4 as usize];
                let emit_len: usize = best_chain[..shared]
                    .iter()
                    .map(|&a| output_of(a).count())
                    .sum();
                result
                    .out_labels
                    .extend_from_slice(&pending[best_pos][..emit_len]);
                let mut subset: Subset = Vec::with_capacity(heads.len());
                for (h, p) in heads.iter().zip(&pending) {
                    let rest = strings.id(&p[emit_len..]);
                    subset.push((h.0, ((h.1 - best) / QUANTUM).round() as i64, rest));
                }
                match ids.get(&subset) {
                    Some(&id) => id,
                    None => {
                        if subsets.len() + 1 >= max_states {
                            return Err(limit());
                        }
                        let id = subsets.len() as i32;
                        // k2's base state: the best paths' common prefix is dropped
                        chain_scratch.clear();
                        for h in heads.iter() {
                            let mut c = chains.all[h.4 as usize].clone();
                            c.push(h.2);
                            chain_scratch.push(c);
                        }
                        let pending: f64 = chain_scratch[best_pos][shared..]
                            .iter()
                            .map(|&a| view.arcs[a as usize].score as f64)
                            .sum();
                        let element_chains: Vec<u32> = chain_scratch
                            .iter()
                            .map(|c| chains.id(&c[shared..]))
                            .collect();
                        subset_bytes = subset_bytes
                            .saturating_add((2 * element + 4) * subset.len() + VEC_BYTES);
                        ids.insert(subset.clone(), id);
                        subsets.push(subset);
                        subset_chains.push(element_chains);
                        pending_scores.push(pending);
                        id
                    }
                }
            };
            if out.arcs.len() >= max_arcs {
                return Err(limit());
            }
            out.arcs
                .push(Arc::new(src, dest, label as i32, best as f32));
            result.out_splits.push(result.out_labels.len() as i32);
            // derivs: the best arc first, then the others in destination order
            out.deriv_values.push(heads[best_pos].2);
            for (k, h) in heads.iter().enumerate() {
                if k != best_pos {
                    out.deriv_values.push(h.2);
                }
            }
            out.deriv_splits.push(out.deriv_values.len() as i32);
            // the bytes held: the elements counted as they are made, and the vectors and
            // tables at their capacity (a `Vec` header per subset, string and chain, a
            // table entry per key)
            let entry = VEC_BYTES + 4 + 1;
            let held = [
                subset_bytes,
                strings.bytes,
                chains.bytes,
                out.arcs.capacity() * std::mem::size_of::<Arc>(),
                (out.deriv_values.capacity() + out.deriv_splits.capacity()) * 4,
                (result.out_labels.capacity() + result.out_splits.capacity()) * 4,
                (subsets.capacity() + subset_chains.capacity()) * VEC_BYTES,
                (ids.capacity() + strings.ids.capacity() + chains.ids.capacity()) * entry,
                (strings.all.capacity() + chains.all.capacity()) * VEC_BYTES,
                pending_scores.capacity() * 8,
            ]
            .iter()
            .fold(0usize, |acc, &x| acc.saturating_add(x));
            if held > max_bytes {
                return Err(Error::OutputLimit {
                    op: "determinize",
                    what: "bytes held by the subset construction (DeterminizeConfig::max_bytes)",
                    count: held,
                    limit: max_bytes,
                });
            }
            begin = end;
        }
        out.splits.push(out.arcs.len() as i32);
    }
    let final_id = subsets.len() as i32;
    pending_scores.push(0.0);
    for arc in &mut out.arcs {
        if arc.dest_state == FINAL {
            arc.dest_state = final_id;
        }
    }
    out.splits.push(out.arcs.len() as i32);
    Ok(result)
}

/// The length of the common prefix of the heads' best paths (each the chain of its source
/// element followed by its arc). The paths are equally long and end in distinct states, so
/// the prefix is shorter than each.
fn shared_chain_prefix(chains: &Strings, heads: &[(i32, f64, i32, u32, u32)]) -> usize {
    let first = &chains.all[heads[0].4 as usize];
    let mut shared = first.len();
    for h in &heads[1..] {
        let other = &chains.all[h.4 as usize];
        debug_assert_eq!(
            other.len(),
            first.len(),
            "chains from one base are equally long"
        );
        shared = first[..shared]
            .iter()
            .zip(other)
            .take_while(|(a, b)| a == b)
            .count();
        if shared == 0 {
            break;
        }
    }
    shared
}
