//! The determinization kernel: weighted subset construction in the tropical semiring
//! (scores combined with `max`). A subset is a list of (input state, residual score,
//! residual output string); for an acceptor every string is empty, for a transducer the
//! output labels wait, as in k2, until the best paths into a subset share the input arcs
//! that carry them (k2's base state advances). Each element also keeps its best path from
//! that base state, which gives k2's unpushed scores (see [`Determinized::pending`]).

use super::rmeps::BuiltDerivs;
use crate::arc::Arc;
use crate::error::Error;
use crate::view::FsaView;

/// Residuals are rounded to multiples of this before subsets are compared, so that scores
/// equal up to rounding make one subset (as OpenFst's `delta` does).
const QUANTUM: f64 = 1.0 / 65536.0;

/// One element of a subset: (input state, residual in quanta, residual string id).
type Element = (i32, i64, u32);

/// One step of the multiply-and-fold hash of [`super::FastHasher`], for keys hashed in place
/// (slices of an arena) rather than through `Hash`.
#[inline]
fn mix(hash: u64, x: u64) -> u64 {
    (hash.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

/// An open-addressing table (linear probing, at most half full) of ids whose keys live in
/// an arena elsewhere, so that a key is stored once and looked up as a slice. Each slot
/// holds a key's full hash and its id plus one (0 marks an empty slot); callers compare
/// keys through a closure.
struct IdTable {
    slots: Vec<(u64, u32)>,
    /// `64 - log2(slots.len())`: a slot is taken from the hash's high bits, the best mixed.
    shift: u32,
    len: usize,
}

impl IdTable {
    fn new() -> Self {
        Self {
            slots: vec![(0, 0); 16],
            shift: 64 - 4,
            len: 0,
        }
    }

    /// The id of the key hashed `hash` that `eq` accepts, or the slot where it would go.
    #[inline]
    fn find(&self, hash: u64, eq: impl Fn(u32) -> bool) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut pos = (hash >> self.shift) as usize;
        loop {
            let (slot_hash, slot) = self.slots[pos];
            if slot == 0 {
                return Err(pos);
            }
            if slot_hash == hash && eq(slot - 1) {
                return Ok(slot - 1);
            }
            pos = (pos + 1) & mask;
        }
    }

    /// Puts `id` in the empty `slot` that [`IdTable::find`] gave for `hash`.
    fn insert(&mut self, slot: usize, hash: u64, id: u32) {
        debug_assert_eq!(self.slots[slot].1, 0, "find gave an empty slot");
        self.slots[slot] = (hash, id + 1);
        self.len += 1;
        if 2 * self.len > self.slots.len() {
            let doubled = vec![(0, 0); 2 * self.slots.len()];
            let old = std::mem::replace(&mut self.slots, doubled);
            self.shift -= 1;
            let mask = self.slots.len() - 1;
            for (h, v) in old {
                if v != 0 {
                    let mut pos = (h >> self.shift) as usize;
                    while self.slots[pos].1 != 0 {
                        pos = (pos + 1) & mask;
                    }
                    self.slots[pos] = (h, v);
                }
            }
        }
    }

    /// The bytes the slots hold.
    fn bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<(u64, u32)>()
    }
}

/// Sequences of `i32` (output label strings, chains of input arcs), numbered in the order
/// they are first met and stored once, end to end in one arena; 0 is the empty sequence.
struct Sequences {
    data: Vec<i32>,
    /// Sequence `i` is `data[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    table: IdTable,
}

impl Sequences {
    fn new() -> Self {
        let mut sequences = Self {
            data: Vec::new(),
            starts: vec![0],
            table: IdTable::new(),
        };
        sequences.id(&[]);
        sequences
    }

    #[inline]
    fn get(&self, id: u32) -> &[i32] {
        &self.data[self.starts[id as usize]..self.starts[id as usize + 1]]
    }

    fn id(&mut self, s: &[i32]) -> u32 {
        let hash = s
            .iter()
            .fold(mix(0, s.len() as u64), |h, &x| mix(h, x as u32 as u64));
        match self.table.find(hash, |id| self.get(id) == s) {
            Ok(id) => id,
            Err(slot) => {
                let id = (self.starts.len() - 1) as u32;
                self.data.extend_from_slice(s);
                self.starts.push(self.data.len());
                self.table.insert(slot, hash, id);
                id
            }
        }
    }

    /// The bytes the arena, its bounds and the table hold.
    fn bytes(&self) -> usize {
        self.data.capacity() * 4 + self.starts.capacity() * 8 + self.table.bytes()
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
    let mut strings = Sequences::new();
    // the subsets, end to end: subset `i` is `elements[subset_starts[i]..subset_starts[i + 1]]`
    // (sorted by state), and `element_chains` holds, per element, the input arcs of its best
    // path from the subset's base state (an id in `chains`; 0 is the empty path)
    let mut elements: Vec<Element> = vec![(0, 0, 0)];
    let mut element_chains: Vec<u32> = vec![0];
    let mut subset_starts: Vec<usize> = vec![0, 1];
    // subsets of two or more elements, by content
    let mut subset_ids = IdTable::new();
    let mut chains = Sequences::new();
    // per subset, its pending score
    let pending_scores = &mut result.pending;
    pending_scores.push(0.0);
    // singleton subsets {(state, 0, empty)}, the common case, are found without hashing
    let mut singleton: Vec<i32> = vec![i32::MIN; n];
    singleton[0] = 0;
    singleton[final_state as usize] = FINAL;
    let out = &mut result.fsa;
    // room for an output of about the input's size from the start (within the bounds):
    // growing by doubling copies each vector and touches fresh pages at every step
    let room = view.arcs.len().min(max_arcs).min(max_bytes / 64);
    let states = n.min(max_states).min(max_bytes / 64);
    out.arcs.reserve(room);
    out.deriv_values.reserve(room);
    out.deriv_splits.reserve(room);
    result.out_splits.reserve(room);
    elements.reserve(states);
    element_chains.reserve(states);
    subset_starts.reserve(states);
    pending_scores.reserve(states);
    // (label as u32 << 32 | dest, value, arc index, residual string id and chain id of the
    // source element)
    let mut moves: Vec<(u64, f64, i32, u32, u32)> = Vec::new();
    // per destination: (dest, value, arc, residual string id, chain id of the source element)
    let mut heads: Vec<(i32, f64, i32, u32, u32)> = Vec::new();
    // per head, its pending output (`pending_labels[pending_starts[k]..pending_starts[k + 1]]`)
    // and its best path from the base state (`paths[path_starts[k]..path_starts[k + 1]]`)
    let mut pending_labels: Vec<i32> = Vec::new();
    let mut pending_starts: Vec<usize> = Vec::new();
    let mut paths: Vec<i32> = Vec::new();
    let mut path_starts: Vec<usize> = Vec::new();
    let mut next = 0usize;
    while next + 1 < subset_starts.len() {
        let src = next as i32;
        moves.clear();
        for e in subset_starts[next]..subset_starts[next + 1] {
            let (state, residual, string) = elements[e];
            let chain = element_chains[e];
            let r = residual as f64 * QUANTUM;
            for idx in view.arc_range(state as usize) {
                let arc = view.arcs[idx];
                moves.push((
                    ((arc.label as u32 as u64) << 32) | arc.dest_state as u32 as u64,
                    r + arc.score as f64,
                    idx as i32,
                    string,
                    chain,
                ));
            }
        }
        next += 1;
        moves.sort_unstable_by(|x, y| {
            x.0.cmp(&y.0)
                .then(crate::algebra::rmeps::best_score_first(x.1, y.1))
                .then(x.2.cmp(&y.2))
        });
        let mut begin = 0;
        while begin < moves.len() {
            let label = (moves[begin].0 >> 32) as u32;
            let mut end = begin;
            while end < moves.len() && (moves[end].0 >> 32) as u32 == label {
                end += 1;
            }
            // the best move of each destination (first of its run)
            heads.clear();
            for k in begin..end {
                if k == begin || moves[k].0 != moves[k - 1].0 {
                    let (key, value, arc, string, chain) = moves[k];
                    heads.push((key as u32 as i32, value, arc, string, chain));
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
                result.out_labels.extend_from_slice(strings.get(string));
                result.out_labels.extend(output_of(arc));
                if is_final {
                    FINAL
                } else {
                    let known = singleton[dest_state as usize];
                    if known != i32::MIN {
                        known
                    } else {
                        if subset_starts.len() >= max_states {
                            return Err(limit());
                        }
                        let id = (subset_starts.len() - 1) as i32;
                        singleton[dest_state as usize] = id;
                        elements.push((dest_state, 0, 0));
                        element_chains.push(0);
                        subset_starts.push(elements.len());
                        pending_scores.push(0.0);
                        id
                    }
                }
            } else {
                // k2's rule: the input arcs every best path shares (from the base state
                // on) are emitted with their outputs; the rest stays pending
                pending_labels.clear();
                pending_starts.clear();
                pending_starts.push(0);
                for h in heads.iter() {
                    pending_labels.extend_from_slice(strings.get(h.3));
                    pending_labels.extend(output_of(h.2));
                    pending_starts.push(pending_labels.len());
                }
                let shared = shared_chain_prefix(&chains, &heads);
                let best_chain = chains.get(heads[best_pos].4);
                let emit_len: usize = best_chain[..shared]
                    .iter()
                    .map(|&a| output_of(a).count())
                    .sum();
                result
                    .out_labels
                    .extend_from_slice(&pending_labels[pending_starts[best_pos]..][..emit_len]);
                // the candidate subset goes at the end of the arena, and away again if it
                // is known
                let candidate = elements.len();
                let mut hash = mix(0, heads.len() as u64);
                for (k, h) in heads.iter().enumerate() {
                    let rest = strings
                        .id(&pending_labels[pending_starts[k] + emit_len..pending_starts[k + 1]]);
                    let element = (h.0, ((h.1 - best) / QUANTUM).round() as i64, rest);
                    hash = mix(
                        mix(mix(hash, element.0 as u32 as u64), element.1 as u64),
                        element.2 as u64,
                    );
                    elements.push(element);
                }
                let found = subset_ids.find(hash, |id| {
                    let id = id as usize;
                    elements[subset_starts[id]..subset_starts[id + 1]] == elements[candidate..]
                });
                match found {
                    Ok(id) => {
                        elements.truncate(candidate);
                        id as i32
                    }
                    Err(slot) => {
                        if subset_starts.len() >= max_states {
                            return Err(limit());
                        }
                        let id = (subset_starts.len() - 1) as i32;
                        // k2's base state: the best paths' common prefix is dropped
                        paths.clear();
                        path_starts.clear();
                        path_starts.push(0);
                        for h in heads.iter() {
                            paths.extend_from_slice(chains.get(h.4));
                            paths.push(h.2);
                            path_starts.push(paths.len());
                        }
                        let best_path = &paths[path_starts[best_pos]..path_starts[best_pos + 1]];
                        let pending: f64 = best_path[shared..]
                            .iter()
                            .map(|&a| view.arcs[a as usize].score as f64)
                            .sum();
                        for k in 0..heads.len() {
                            let path = &paths[path_starts[k]..path_starts[k + 1]];
                            element_chains.push(chains.id(&path[shared..]));
                        }
                        subset_starts.push(elements.len());
                        subset_ids.insert(slot, hash, id as u32);
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
            // the bytes held, every vector and table at its capacity
            let held = [
                elements.capacity() * std::mem::size_of::<Element>(),
                element_chains.capacity() * 4 + subset_starts.capacity() * 8,
                subset_ids.bytes(),
                strings.bytes(),
                chains.bytes(),
                moves.capacity() * std::mem::size_of::<(u64, f64, i32, u32, u32)>(),
                out.arcs.capacity() * std::mem::size_of::<Arc>(),
                (out.deriv_values.capacity() + out.deriv_splits.capacity()) * 4,
                (result.out_labels.capacity() + result.out_splits.capacity()) * 4,
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
    let final_id = (subset_starts.len() - 1) as i32;
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
fn shared_chain_prefix(chains: &Sequences, heads: &[(i32, f64, i32, u32, u32)]) -> usize {
    let first = chains.get(heads[0].4);
    let mut shared = first.len();
    for h in &heads[1..] {
        let other = chains.get(h.4);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_number_each_distinct_sequence_once_in_order() {
        // a naive model: a list searched from the start
        let mut sequences = Sequences::new();
        let mut model: Vec<Vec<i32>> = vec![Vec::new()];
        let mut state = 7u64;
        for _ in 0..5_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let len = (state >> 60) as usize % 4;
            let s: Vec<i32> = (0..len)
                .map(|k| ((state >> (8 * k)) % 5) as i32 - 1)
                .collect();
            let expected = match model.iter().position(|m| *m == s) {
                Some(id) => id,
                None => {
                    model.push(s.clone());
                    model.len() - 1
                }
            };
            assert_eq!(sequences.id(&s) as usize, expected, "{s:?}");
        }
        for (id, m) in model.iter().enumerate() {
            assert_eq!(sequences.get(id as u32), &m[..]);
        }
    }

    #[test]
    fn id_table_keeps_keys_apart_when_every_hash_collides() {
        // every key hashed alike: found only by probing past the others, also after growth
        let keys: Vec<u32> = (0..100).map(|k| k * 3).collect();
        let mut table = IdTable::new();
        for (id, &key) in keys.iter().enumerate() {
            let slot = table.find(42, |i| keys[i as usize] == key).unwrap_err();
            table.insert(slot, 42, id as u32);
        }
        for (id, &key) in keys.iter().enumerate() {
            assert_eq!(table.find(42, |i| keys[i as usize] == key), Ok(id as u32));
        }
        assert!(table.find(42, |i| keys[i as usize] == 1).is_err());
        assert!(table.slots.len() >= 2 * keys.len());
    }
}
