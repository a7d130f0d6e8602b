//! The minimization kernel: Moore's partition refinement of a connected acceptor whose arcs
//! are encoded as (label, quantized score, extra key) symbols, as Kaldi's
//! `fstminimizeencoded` sees them.

use std::collections::HashMap;
use std::hash::Hasher;

use super::{FastBuild, FastHasher};

use crate::arc::Arc;
use crate::error::Error;
use crate::view::{Built, FsaView};

/// Scores are quantized to multiples of this before encoding, as Kaldi's
/// `fstminimizeencoded` does with its default `delta` (1/1024).
const QUANTUM: f64 = 1.0 / 1024.0;

/// The encoded score of an arc: its score rounded to a multiple of [`QUANTUM`], exactly (in
/// `f64`, which holds every `f32` times 1024 and its rounding), as the bits of that `f64`.
/// Two scores encode alike exactly when they round to the same multiple: no cast saturates,
/// so `1e16`, `1e17` and `+inf` stay apart. `-0` is `0`, and every NaN is one symbol.
fn quantized(score: f32) -> u64 {
    let q = (score as f64 / QUANTUM).round();
    if q == 0.0 {
        0f64.to_bits()
    } else if q.is_nan() {
        f64::NAN.to_bits()
    } else {
        q.to_bits()
    }
}

/// Signature hashes are masked with this: all bits in use, but only two in unit tests, so
/// that they run the collision path on every other state.
#[cfg(not(test))]
const HASH_MASK: u64 = u64::MAX;
#[cfg(test)]
const HASH_MASK: u64 = 0b11;

/// Merges the equivalent states of one connected FSA whose arcs, encoded as (label,
/// quantized score, `extra(arc)`), are deterministic (checked: [`Error::NotDeterministic`]).
/// Classes are numbered by their lowest state, so the start stays 0 and the final state,
/// alone in its class, stays last; each class keeps the arcs of its lowest state.
pub(crate) fn minimize<'e>(
    view: FsaView<'_>,
    fsa_idx: usize,
    extra: impl Fn(usize) -> &'e [i32],
) -> Result<Built, Error> {
    let n = view.num_states();
    if n == 0 {
        return Ok(Built::empty());
    }
    // encoded symbols, numbered; then the per-state (symbol, dest) lists sorted by symbol
    let mut extra_ids: HashMap<&'e [i32], u32, FastBuild> = HashMap::default();
    let mut symbol_ids: HashMap<(i32, u64, u32), u32, FastBuild> = HashMap::default();
    let mut labels_of_symbol: Vec<i32> = Vec::new();
    let mut move_splits: Vec<usize> = Vec::with_capacity(n + 1);
    let mut moves: Vec<(u32, u32)> = Vec::with_capacity(view.arcs.len());
    move_splits.push(0);
    for state in 0..n {
        let begin = moves.len();
        for idx in view.arc_range(state) {
            let arc = view.arcs[idx];
            let next_extra = extra_ids.len() as u32;
            let extra_id = *extra_ids.entry(extra(idx)).or_insert(next_extra);
            let score = quantized(arc.score);
            let next_id = symbol_ids.len() as u32;
            let id = *symbol_ids
                .entry((arc.label, score, extra_id))
                .or_insert_with(|| {
                    labels_of_symbol.push(arc.label);
                    next_id
                });
            moves.push((id, arc.dest_state as u32));
        }
        let list = &mut moves[begin..];
        list.sort_unstable();
        if let Some(w) = list.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::NotDeterministic {
                fsa: fsa_idx,
                state: state as i32,
                label: labels_of_symbol[w[0].0 as usize],
            });
        }
        move_splits.push(moves.len());
    }
    let state_moves = |s: usize| &moves[move_splits[s]..move_splits[s + 1]];
    // Moore: start from {non-final, final}; refine by (class, [(symbol, class of dest)])
    // until the number of classes stops growing. A class is found by the signature's hash
    // and then checked against the class's first state, so a hash collision only costs a
    // lookup in a map of full signatures.
    let final_state = n - 1;
    let mut class: Vec<u32> = (0..n).map(|s| u32::from(s == final_state)).collect();
    let mut num_classes = if n > 1 { 2 } else { 1 };
    let mut by_hash: HashMap<u64, (u32, u32), FastBuild> = HashMap::default();
    let mut by_signature: HashMap<Vec<u32>, u32, FastBuild> = HashMap::default();
    let mut next_class = vec![0u32; n];
    loop {
        by_hash.clear();
        by_signature.clear();
        let mut count = 0u32;
        for state in 0..n {
            let mut hasher = FastHasher::default();
            hasher.write_u32(class[state]);
            for &(sym, dest) in state_moves(state) {
                hasher.write_u32(sym);
                hasher.write_u32(class[dest as usize]);
            }
            let hash = hasher.finish() & HASH_MASK;
            let same = |other: usize| {
                class[other] == class[state]
                    && state_moves(other).len() == state_moves(state).len()
                    && state_moves(other)
                        .iter()
                        .zip(state_moves(state))
                        .all(|(x, y)| x.0 == y.0 && class[x.1 as usize] == class[y.1 as usize])
            };
            next_class[state] = match by_hash.get(&hash) {
                Some(&(id, first)) if same(first as usize) => id,
                Some(_) => {
                    // a collision: fall back on the full signature
                    let mut signature = vec![class[state]];
                    for &(sym, dest) in state_moves(state) {
                        signature.push(sym);
                        signature.push(class[dest as usize]);
                    }
                    *by_signature.entry(signature).or_insert_with(|| {
                        count += 1;
                        count - 1
                    })
                }
                None => {
                    by_hash.insert(hash, (count, state as u32));
                    count += 1;
                    count - 1
                }
            };
        }
        std::mem::swap(&mut class, &mut next_class);
        if count as usize == num_classes {
            break;
        }
        num_classes = count as usize;
    }
    // number classes by their lowest state
    let mut new_of_class = vec![-1i32; num_classes];
    let mut representatives = Vec::new();
    for (state, &c) in class.iter().enumerate() {
        let c = c as usize;
        if new_of_class[c] < 0 {
            new_of_class[c] = representatives.len() as i32;
            representatives.push(state);
        }
    }
    let mut out = Built::empty();
    for (new_src, &state) in representatives.iter().enumerate() {
        for idx in view.arc_range(state) {
            let arc = view.arcs[idx];
            let dest = new_of_class[class[arc.dest_state as usize] as usize];
            out.arcs
                .push(Arc::new(new_src as i32, dest, arc.label, arc.score));
            out.arc_map.push(idx as i32);
        }
        out.splits.push(out.arcs.len() as i32);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::Built;

    /// Minimizes an acceptor given as (src, dest, label, score) arcs grouped by source.
    fn min_states(arcs: &[(i32, i32, i32, f32)], n: usize) -> (usize, Vec<i32>) {
        let arcs: Vec<Arc> = arcs
            .iter()
            .map(|&(s, d, l, w)| Arc::new(s, d, l, w))
            .collect();
        let built = Built::from_sorted_arcs(n, arcs, Vec::new());
        let out = minimize(built.view(), 0, |_| &[]).unwrap();
        (out.splits.len() - 1, out.arc_map)
    }

    #[test]
    fn hash_collisions_never_merge_different_states() {
        // with two hash bits most signatures collide; the checks keep the classes right
        // two equal branches merge
        let (n, map) = min_states(
            &[
                (0, 1, 1, 0.0),
                (0, 2, 2, 0.0),
                (1, 3, 3, 0.5),
                (2, 3, 3, 0.5),
                (3, 4, -1, 0.0),
            ],
            5,
        );
        assert_eq!((n, map), (4, vec![0, 1, 2, 4]));
        // a chain of distinct labels: nothing merges
        let chain: Vec<(i32, i32, i32, f32)> = (0..8)
            .map(|s| (s, s + 1, if s == 7 { -1 } else { s + 1 }, 0.0))
            .collect();
        assert_eq!(min_states(&chain, 9).0, 9);
        // five parallel branches, two groups of equal tails (labels 5 and 6)
        let mut arcs = Vec::new();
        for b in 0..5 {
            arcs.push((0, b + 1, b + 1, 0.0));
        }
        for b in 0..5 {
            arcs.push((b + 1, 6, if b % 2 == 0 { 5 } else { 6 }, 0.0));
        }
        arcs.push((6, 7, -1, 0.0));
        assert_eq!(min_states(&arcs, 8).0, 5);
    }
}
