//! The minimization kernel: the coarsest partition (signature refinement of the classes
//! that can still split, Valmari and Lehtinen's refinement behind it, Moore's as the test
//! model) of a connected acceptor whose arcs are encoded as (label, quantized score, extra
//! key) symbols, as Kaldi's `fstminimizeencoded` sees them.

use std::collections::HashMap;
use std::hash::Hasher;
use std::ops::Range;

use rayon::prelude::*;

use super::rmeps::state_ranges;
use super::{FastBuild, FastHasher};

use crate::arc::Arc;
use crate::attr::map_arcs;
use crate::error::Error;
use crate::view::{Built, FsaView};

mod valmari;

use valmari::coarsest_partition;

/// A refinement round with fewer states to hash than this (or the stability check of an
/// FSA with fewer states) runs on the calling thread.
const PARALLEL_MIN_STATES: usize = 4096;

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

/// Merges the equivalent states of one connected FSA whose arcs, encoded as (label,
/// quantized score, `extra(arc)`), are deterministic (checked: [`Error::NotDeterministic`]).
/// Classes are numbered by their lowest state, so the start stays 0 and the final state,
/// alone in its class, stays last; each class keeps the arcs of its lowest state.
///
/// The classes are the coarsest partition of the states that separates the final state
/// from the others and in which two states of a class have the same encoded symbols, each
/// leading to one class, found by [`partition`]. That partition is unique, so the result is
/// the one Moore's round-by-round refinement gives (the unit tests hold them side by side).
pub(crate) fn minimize<'e>(
    view: FsaView<'_>,
    fsa_idx: usize,
    extra: impl Fn(usize) -> &'e [i32] + Sync,
) -> Result<Built, Error> {
    let n = view.num_states();
    if n == 0 {
        return Ok(Built::empty());
    }
    let symbols = Symbols {
        view,
        extra,
        hash_mask: u64::MAX,
    };
    let hashed = Hashed::encode(&symbols, fsa_idx)?;
    let (class, num_classes) = partition(&symbols, &hashed, u64::MAX);
    Ok(build(view, &class, num_classes))
}

/// The coarsest partition ([`coarsest_partition`]): by signature refinement when its
/// result checks out as stable, which it does unless two hashes (masked with `hash_mask`,
/// which tests narrow to force collisions) collide; otherwise by Valmari and Lehtinen's
/// refinement over the symbols numbered.
fn partition<'e, E: Fn(usize) -> &'e [i32] + Sync>(
    symbols: &Symbols<'_, E>,
    hashed: &Hashed,
    hash_mask: u64,
) -> (Vec<u32>, usize) {
    let n = symbols.view.num_states();
    refine_by_signatures(symbols, hashed, hash_mask)
        .unwrap_or_else(|| coarsest_partition(n, &Moves::numbered(symbols, hashed)))
}

/// The arcs of one FSA read as (label, quantized score, extra key) symbols.
struct Symbols<'v, E> {
    view: FsaView<'v>,
    extra: E,
    /// Symbol hashes are masked with this: all bits, but few in tests that force
    /// collisions.
    hash_mask: u64,
}

impl<'e, E: Fn(usize) -> &'e [i32]> Symbols<'_, E> {
    /// A hash of arc `idx`'s symbol: equal symbols hash alike.
    #[inline]
    fn hash(&self, idx: usize) -> u64 {
        let arc = self.view.arcs[idx];
        let extra = (self.extra)(idx);
        let mut hasher = FastHasher::default();
        hasher.write_i32(arc.label);
        hasher.write_u64(quantized(arc.score));
        hasher.write_usize(extra.len());
        for &value in extra {
            hasher.write_i32(value);
        }
        hasher.finish() & self.hash_mask
    }

    /// Whether arcs `i` and `j` have one symbol.
    #[inline]
    fn same(&self, i: usize, j: usize) -> bool {
        let (a, b) = (self.view.arcs[i], self.view.arcs[j]);
        a.label == b.label
            && quantized(a.score) == quantized(b.score)
            && (self.extra)(i) == (self.extra)(j)
    }

    /// The key of arc `idx`'s symbol in a map.
    fn key(&self, idx: usize) -> (i32, u64, &'e [i32]) {
        let arc = self.view.arcs[idx];
        (arc.label, quantized(arc.score), (self.extra)(idx))
    }
}

/// The arcs with their symbols hashed, not numbered: per state, (symbol hash, arc, dest)
/// in (label, hash) order.
struct Hashed {
    /// Per state, where its moves start in `moves` (n + 1 entries).
    splits: Vec<usize>,
    /// (symbol hash, arc index, dest) per arc, grouped by source state.
    moves: Vec<(u64, u32, u32)>,
}

impl Hashed {
    /// Hashes every arc's symbol and checks that no state has two arcs with one symbol. A
    /// state whose labels already rise (as a determinized FSA's do) is left in its order;
    /// others are sorted by (label, hash), so two states with the same symbols list them
    /// alike (but for hash collisions, which the stability check catches). Ranges of states
    /// are hashed in parallel ([`state_ranges`]); the error names the first state in order
    /// that repeats a symbol, as on one thread.
    fn encode<'e, E: Fn(usize) -> &'e [i32] + Sync>(
        symbols: &Symbols<'_, E>,
        fsa_idx: usize,
    ) -> Result<Self, Error> {
        let view = symbols.view;
        let base = view.splits[0];
        let splits: Vec<usize> = view.splits.iter().map(|&s| (s - base) as usize).collect();
        // one move per arc, where the arc is: each range of states fills its own slice
        let mut moves: Vec<(u64, u32, u32)> = vec![(0, 0, 0); view.arcs.len()];
        let mut parts = Vec::new();
        let mut rest = moves.as_mut_slice();
        for range in state_ranges(view) {
            let (part, tail) = rest.split_at_mut(splits[range.end] - splits[range.start]);
            parts.push((range, part));
            rest = tail;
        }
        let repeating = parts
            .into_par_iter()
            .find_map_first(|(range, part)| hash_states(symbols, range, part));
        if let Some(state) = repeating {
            return Err(not_deterministic(symbols, fsa_idx, state));
        }
        Ok(Self { splits, moves })
    }

    /// The moves of `state`.
    #[inline]
    fn of(&self, state: usize) -> &[(u64, u32, u32)] {
        &self.moves[self.splits[state]..self.splits[state + 1]]
    }
}

/// Fills `part` with the moves of the states in `range` (their arcs, in order) as
/// [`Hashed::encode`] lists them; returns the first of those states with two arcs of one
/// symbol, if any.
fn hash_states<'e, E: Fn(usize) -> &'e [i32]>(
    symbols: &Symbols<'_, E>,
    range: Range<usize>,
    part: &mut [(u64, u32, u32)],
) -> Option<usize> {
    let view = symbols.view;
    let mut at = 0;
    for state in range {
        let arc_range = view.arc_range(state);
        let arcs = &view.arcs[arc_range.clone()];
        let list = &mut part[at..at + arcs.len()];
        at += arcs.len();
        for ((slot, idx), arc) in list.iter_mut().zip(arc_range).zip(arcs) {
            *slot = (symbols.hash(idx), idx as u32, arc.dest_state as u32);
        }
        if arcs.windows(2).all(|w| w[0].label < w[1].label) {
            continue;
        }
        list.sort_unstable_by_key(|&(hash, idx, _)| (view.arcs[idx as usize].label, hash, idx));
        // equal symbols have equal (label, hash): compare within such runs
        let repeats = list.iter().enumerate().any(|(i, x)| {
            list[i + 1..]
                .iter()
                .take_while(|y| {
                    y.0 == x.0 && view.arcs[y.1 as usize].label == view.arcs[x.1 as usize].label
                })
                .any(|y| symbols.same(x.1 as usize, y.1 as usize))
        });
        if repeats {
            return Some(state);
        }
    }
    None
}

/// The error for `state`, which has two arcs with one symbol: symbols are numbered in
/// order of first use over the arcs of the states up to it, and the error names the label
/// of the lowest-numbered symbol that repeats.
fn not_deterministic<'e, E: Fn(usize) -> &'e [i32]>(
    symbols: &Symbols<'_, E>,
    fsa_idx: usize,
    state: usize,
) -> Error {
    let view = symbols.view;
    let mut ids: HashMap<(i32, u64, &'e [i32]), u32, FastBuild> = HashMap::default();
    for idx in 0..view.arc_range(state).end {
        let next = ids.len() as u32;
        ids.entry(symbols.key(idx)).or_insert(next);
    }
    let mut list: Vec<(u32, i32)> = view
        .arc_range(state)
        .map(|idx| (ids[&symbols.key(idx)], view.arcs[idx].label))
        .collect();
    list.sort_unstable();
    let repeated = list.windows(2).find(|w| w[0].0 == w[1].0);
    Error::NotDeterministic {
        fsa: fsa_idx,
        state: state as i32,
        label: repeated.expect("a repeated symbol")[0].1,
    }
}

/// Moore's refinement restricted to the classes that can still split: each round hashes
/// the signature (class, [(symbol, class of dest)]) of every state whose class has two or
/// more states, and splits each such class by those hashes (the first group keeps the
/// class's number, so numbers stay below n). A state alone in its class is done, so when
/// most states are told apart early (as in a graph where nothing merges) the later rounds
/// cost little. Stops when a round splits nothing; then checks in one pass that every state
/// has its class's first state's signature. Returns `None` when that fails (a hash
/// collision kept two different signatures together); the partition is then too coarse
/// but never too fine, since equivalent states always hash alike.
fn refine_by_signatures<'e, E: Fn(usize) -> &'e [i32] + Sync>(
    symbols: &Symbols<'_, E>,
    moves: &Hashed,
    hash_mask: u64,
) -> Option<(Vec<u32>, usize)> {
    let n = symbols.view.num_states();
    let final_state = n - 1;
    let mut class: Vec<u32> = vec![0; n];
    let mut num_classes = 1usize;
    if n > 1 {
        class[final_state] = 1;
        num_classes = 2;
    }
    let mut size = vec![0u32; n];
    for &c in &class {
        size[c as usize] += 1;
    }
    let mut active: Vec<u32> = (0..n as u32)
        .filter(|&s| size[class[s as usize] as usize] > 1)
        .collect();
    let mut keyed: Vec<(u64, u32)> = Vec::with_capacity(active.len());
    // grown as needed: the first rounds have far fewer groups than states, and a map sized
    // for every state is cleared and probed out of cache (10 % slower at 200,000 words)
    let mut group_ids: HashMap<(u32, u64), u32, FastBuild> = HashMap::default();
    // per class, the last round in which a group took over its number
    let mut kept_in_round = vec![0u32; n];
    let mut round = 0u32;
    let parallel = rayon::current_num_threads() > 1;
    while !active.is_empty() {
        round += 1;
        let signature = |&state: &u32| {
            let mut hasher = FastHasher::default();
            for &(sym, _, dest) in moves.of(state as usize) {
                hasher.write_u64(sym);
                hasher.write_u32(class[dest as usize]);
            }
            (hasher.finish() & hash_mask, state)
        };
        // the hashes in parallel, in the order of `active`; the groups below are numbered
        // in that order on one thread, so the classes do not depend on the thread count
        if parallel && active.len() >= PARALLEL_MIN_STATES {
            active
                .par_iter()
                .with_min_len(PARALLEL_MIN_STATES / 4)
                .map(signature)
                .collect_into_vec(&mut keyed);
        } else {
            keyed.clear();
            keyed.extend(active.iter().map(signature));
        }
        group_ids.clear();
        let before = num_classes;
        for &(key, state) in &keyed {
            let old = class[state as usize];
            let id = *group_ids.entry((old, key)).or_insert_with(|| {
                if kept_in_round[old as usize] != round {
                    kept_in_round[old as usize] = round;
                    old
                } else {
                    num_classes += 1;
                    (num_classes - 1) as u32
                }
            });
            if id != old {
                size[old as usize] -= 1;
                size[id as usize] += 1;
                class[state as usize] = id;
            }
        }
        if num_classes == before {
            break;
        }
        active.retain(|&s| size[class[s as usize] as usize] > 1);
    }
    // stable: every state's signature is its class's first state's (checked in parallel)
    let mut first_of_class = vec![u32::MAX; num_classes];
    for state in (0..n).rev() {
        first_of_class[class[state] as usize] = state as u32;
    }
    let stable = |state: usize| {
        let first = first_of_class[class[state] as usize] as usize;
        let (mine, theirs) = (moves.of(state), moves.of(first));
        first == state
            || mine.len() == theirs.len()
                && mine.iter().zip(theirs).all(|(x, y)| {
                    class[x.2 as usize] == class[y.2 as usize]
                        && x.0 == y.0
                        && symbols.same(x.1 as usize, y.1 as usize)
                })
    };
    let all_stable = if parallel && n >= PARALLEL_MIN_STATES {
        (0..n)
            .into_par_iter()
            .with_min_len(PARALLEL_MIN_STATES / 4)
            .all(stable)
    } else {
        (0..n).all(stable)
    };
    all_stable.then_some((class, num_classes))
}

/// The arcs with their symbols numbered: per state, its (symbol, dest) pairs sorted by
/// symbol.
struct Moves {
    /// Per state, where its moves start in `moves` (n + 1 entries).
    splits: Vec<usize>,
    /// (symbol, dest) per arc, grouped by source state.
    moves: Vec<(u32, u32)>,
    /// How many distinct symbols there are (symbols are `0..num_symbols`).
    num_symbols: usize,
}

impl Moves {
    /// Numbers the symbols of `hashed`'s arcs in order of first use.
    fn numbered<'e, E: Fn(usize) -> &'e [i32]>(symbols: &Symbols<'_, E>, hashed: &Hashed) -> Self {
        let mut ids: HashMap<(i32, u64, &'e [i32]), u32, FastBuild> = HashMap::default();
        let mut moves: Vec<(u32, u32)> = Vec::with_capacity(hashed.moves.len());
        for state in 0..hashed.splits.len() - 1 {
            let begin = moves.len();
            for &(_, idx, dest) in hashed.of(state) {
                let next = ids.len() as u32;
                moves.push((*ids.entry(symbols.key(idx as usize)).or_insert(next), dest));
            }
            moves[begin..].sort_unstable();
        }
        Self {
            splits: hashed.splits.clone(),
            moves,
            num_symbols: ids.len(),
        }
    }

    /// The moves of `state`.
    #[cfg(test)]
    fn of(&self, state: usize) -> &[(u32, u32)] {
        &self.moves[self.splits[state]..self.splits[state + 1]]
    }
}

/// The result: classes numbered by their lowest state, each with its lowest state's arcs.
/// The arcs are made in parallel above [`PARALLEL_MIN_ARCS`](crate::PARALLEL_MIN_ARCS) arcs.
fn build(view: FsaView<'_>, class: &[u32], num_classes: usize) -> Built {
    let mut new_of_class = vec![-1i32; num_classes];
    let mut splits = Vec::with_capacity(num_classes + 1);
    splits.push(0i32);
    let mut arc_map = Vec::with_capacity(if num_classes == class.len() {
        view.arcs.len()
    } else {
        0
    });
    for (state, &c) in class.iter().enumerate() {
        let c = c as usize;
        if new_of_class[c] < 0 {
            new_of_class[c] = (splits.len() - 1) as i32;
            arc_map.extend(view.arc_range(state).map(|idx| idx as i32));
            splits.push(arc_map.len() as i32);
        }
    }
    // an arc of a representative: its source is the representative (an FSA's arcs leave
    // the state whose range holds them)
    let renumbered = |&idx: &i32| {
        let arc = view.arcs[idx as usize];
        let class_of = |state: i32| new_of_class[class[state as usize] as usize];
        Arc::new(
            class_of(arc.src_state),
            class_of(arc.dest_state),
            arc.label,
            arc.score,
        )
    };
    let arcs = map_arcs(&arc_map, renumbered);
    Built {
        splits,
        arcs,
        arc_map,
    }
}

/// Moore's refinement, the model the fast kernel is checked against: start from {non-final,
/// final}; refine by (class, [(symbol, class of dest)]) until the number of classes stops
/// growing. A class is found by the signature's hash and then checked against the class's
/// first state, so a hash collision only costs a lookup in a map of full signatures.
#[cfg(test)]
fn moore_partition(n: usize, moves: &Moves) -> (Vec<u32>, usize) {
    // only two hash bits, so that the collision path runs on every other state
    const HASH_MASK: u64 = 0b11;
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
            for &(sym, dest) in moves.of(state) {
                hasher.write_u32(sym);
                hasher.write_u32(class[dest as usize]);
            }
            let hash = hasher.finish() & HASH_MASK;
            let same = |other: usize| {
                class[other] == class[state]
                    && moves.of(other).len() == moves.of(state).len()
                    && moves
                        .of(other)
                        .iter()
                        .zip(moves.of(state))
                        .all(|(x, y)| x.0 == y.0 && class[x.1 as usize] == class[y.1 as usize])
            };
            next_class[state] = match by_hash.get(&hash) {
                Some(&(id, first)) if same(first as usize) => id,
                Some(_) => {
                    // a collision: fall back on the full signature
                    let mut signature = vec![class[state]];
                    for &(sym, dest) in moves.of(state) {
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
    (class, num_classes)
}

/// [`minimize`] with Moore's refinement in place of the fast one.
#[cfg(test)]
pub(crate) fn minimize_moore<'e>(
    view: FsaView<'_>,
    fsa_idx: usize,
    extra: impl Fn(usize) -> &'e [i32] + Sync,
) -> Result<Built, Error> {
    let n = view.num_states();
    if n == 0 {
        return Ok(Built::empty());
    }
    let symbols = Symbols {
        view,
        extra,
        hash_mask: u64::MAX,
    };
    let moves = Moves::numbered(&symbols, &Hashed::encode(&symbols, fsa_idx)?);
    let (class, num_classes) = moore_partition(n, &moves);
    Ok(build(view, &class, num_classes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::on_threads;
    use crate::view::Built;

    /// Minimizes an acceptor given as (src, dest, label, score) arcs grouped by source, with
    /// the fast kernel and with Moore's, which must agree.
    fn min_states(arcs: &[(i32, i32, i32, f32)], n: usize) -> (usize, Vec<i32>) {
        let arcs: Vec<Arc> = arcs
            .iter()
            .map(|&(s, d, l, w)| Arc::new(s, d, l, w))
            .collect();
        let built = Built::from_sorted_arcs(n, arcs, Vec::new());
        let out = minimize(built.view(), 0, |_| &[]).unwrap();
        assert_eq!(out, minimize_moore(built.view(), 0, |_| &[]).unwrap());
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
        // a single state, and a start that is the final state's only predecessor
        assert_eq!(min_states(&[], 1).0, 1);
        assert_eq!(min_states(&[(0, 1, -1, 0.0)], 2).0, 2);
    }

    #[test]
    fn a_repeated_symbol_is_named_by_first_use() {
        // state 0 repeats label 5's symbol and label 2's; 5's was used first, so it is named
        let arcs = vec![
            Arc::new(0, 1, 5, 0.0),
            Arc::new(0, 1, 2, 0.0),
            Arc::new(0, 2, 5, 0.0),
            Arc::new(0, 2, 2, 0.0),
            Arc::new(1, 3, -1, 0.0),
            Arc::new(2, 3, -1, 0.0),
        ];
        let built = Built::from_sorted_arcs(4, arcs, Vec::new());
        let err = minimize(built.view(), 3, |_| &[]).unwrap_err();
        assert_eq!(
            err,
            Error::NotDeterministic {
                fsa: 3,
                state: 0,
                label: 5
            }
        );
        // the same label twice with different scores or extra keys is no repeat
        let arcs = vec![
            Arc::new(0, 1, 5, 0.0),
            Arc::new(0, 1, 5, 1.0),
            Arc::new(0, 1, 5, 0.0),
            Arc::new(1, 2, -1, 0.0),
        ];
        let extra = [0, 0, 1, 0];
        let built = Built::from_sorted_arcs(3, arcs, Vec::new());
        let key = |i: usize| std::slice::from_ref(&extra[i]);
        assert_eq!(minimize(built.view(), 0, key).unwrap().arcs.len(), 4);
        let err = minimize(built.view(), 0, |_| &[]).unwrap_err();
        assert!(matches!(err, Error::NotDeterministic { label: 5, .. }));
    }

    /// A small xorshift generator for the random cases.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// A random deterministic acceptor that has many equivalent states: a small "base"
    /// automaton whose states are copied several times, each copy's arcs going to random
    /// copies of the base arcs' dests (so copies of one base state are equivalent), plus a
    /// few stray arcs that break some of the equivalences. Scores come from a small set
    /// (two of them round to one multiple of the quantum); some arcs loop back.
    fn random_dfa(rng: &mut Rng) -> (Built, Vec<i32>) {
        let base_states = 1 + rng.below(6);
        let copies = 1 + rng.below(5);
        random_dfa_of(rng, base_states, copies)
    }

    /// [`random_dfa`] with `base_states` states copied `copies` times.
    fn random_dfa_of(rng: &mut Rng, base_states: usize, copies: usize) -> (Built, Vec<i32>) {
        let num_labels = 1 + rng.below(4);
        let scores = [0.0f32, 0.5, 0.5 + 1e-5, -1.0];
        // base arcs per base state: (label, base dest, score)
        let mut base: Vec<Vec<(i32, usize, f32)>> = vec![Vec::new(); base_states];
        for (state, arcs) in base.iter_mut().enumerate() {
            for label in 1..=num_labels as i32 {
                if rng.below(3) == 0 {
                    continue;
                }
                // mostly forward, sometimes back (cycles)
                let dest = if rng.below(5) == 0 {
                    rng.below(base_states)
                } else {
                    state + rng.below(base_states - state)
                };
                arcs.push((label, dest, scores[rng.below(scores.len())]));
            }
            if rng.below(3) == 0 || state == base_states - 1 {
                arcs.push((-1, usize::MAX, scores[rng.below(2)]));
            }
        }
        // states: copy c of base state b is b * copies + c; then the final state
        let n = base_states * copies + 1;
        let final_state = (n - 1) as i32;
        let mut arcs = Vec::new();
        let mut extra = Vec::new();
        for state in 0..n - 1 {
            let b = state / copies;
            let mut used = Vec::new();
            for &(label, dest, score) in &base[b] {
                let dest = if dest == usize::MAX {
                    final_state
                } else {
                    (dest * copies + rng.below(copies)) as i32
                };
                used.push(label);
                arcs.push(Arc::new(state as i32, dest, label, score));
                extra.push(if label < 0 { -1 } else { label % 2 });
            }
            if rng.below(8) == 0 {
                // a stray arc on an unused label, or with another extra key
                let label = num_labels as i32 + 1 + rng.below(2) as i32;
                let dest = rng.below(n - 1) as i32;
                arcs.push(Arc::new(state as i32, dest, label, 0.0));
                extra.push(rng.below(2) as i32);
            }
            if rng.below(3) == 0 {
                // label 1 again after the others, with an extra key no other arc has: the
                // labels no longer rise, the symbols stay distinct
                let dest = rng.below(n - 1) as i32;
                arcs.push(Arc::new(state as i32, dest, 1, 0.0));
                extra.push(7);
            }
        }
        (Built::from_sorted_arcs(n, arcs, Vec::new()), extra)
    }

    #[test]
    fn fast_refinement_agrees_with_moore_on_random_automata() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut merged, mut verified) = (0, 0);
        for _ in 0..4000 {
            let (built, extra) = random_dfa(&mut rng);
            let key = |i: usize| std::slice::from_ref(&extra[i]);
            let fast = minimize(built.view(), 0, key).unwrap();
            let model = minimize_moore(built.view(), 0, key).unwrap();
            assert_eq!(fast, model, "input {built:?}");
            // each way on its own: Valmari's, and signatures with few hash bits (mostly
            // colliding, so the check sends many of them to Valmari's)
            let symbols = Symbols {
                view: built.view(),
                extra: key,
                hash_mask: u64::MAX,
            };
            let hashed = Hashed::encode(&symbols, 0).unwrap();
            let moves = Moves::numbered(&symbols, &hashed);
            let n = built.splits.len() - 1;
            let want = build(
                built.view(),
                &moore_partition(n, &moves).0,
                moore_partition(n, &moves).1,
            );
            let (class, count) = coarsest_partition(n, &moves);
            assert_eq!(build(built.view(), &class, count), want);
            // symbol hashes of two bits: orders and signatures collide, the checks hold
            let narrow = Symbols {
                view: built.view(),
                extra: key,
                hash_mask: 0b11,
            };
            let narrow_hashed = Hashed::encode(&narrow, 0).unwrap();
            let (class, count) = partition(&narrow, &narrow_hashed, u64::MAX);
            assert_eq!(build(built.view(), &class, count), want);
            for mask in [u64::MAX, 0b111] {
                if let Some((class, count)) = refine_by_signatures(&symbols, &hashed, mask) {
                    assert_eq!(build(built.view(), &class, count), want);
                    verified += usize::from(mask == u64::MAX);
                }
                let (class, count) = partition(&symbols, &hashed, mask);
                assert_eq!(build(built.view(), &class, count), want);
            }
            merged += usize::from(fast.splits.len() < built.splits.len());
        }
        // most cases merge something, so the test sees the interesting path
        assert!(merged > 2000, "only {merged} of 4000 merged");
        assert_eq!(verified, 4000, "full hashes collided");
    }

    #[test]
    fn fast_refinement_agrees_with_moore_on_lg_graphs() {
        use crate::attr::{ragged_parts, Attr};
        use crate::{Fsa, WeightPushing};

        for (words, seed) in [(150, 1), (300, 2026)] {
            let l = Fsa::from_openfst(&benches::graphs::lexicon_text(words, 40, seed), false);
            let g = Fsa::from_openfst(&benches::graphs::grammar_text(words, seed), true);
            let (lg, _, _) = l.unwrap().compose(&g.unwrap(), true).unwrap();
            let (det, _) = lg.determinize(WeightPushing::None).unwrap();
            let Some(Attr::Ragged(aux)) = det.aux_labels() else {
                panic!("determinize gives ragged aux labels");
            };
            let (splits, values) = ragged_parts(aux);
            let key = |i: usize| &values[splits[i] as usize..splits[i + 1] as usize];
            let fast = minimize(det.view(), 0, key).unwrap();
            assert_eq!(fast, minimize_moore(det.view(), 0, key).unwrap());
            assert!(det.num_states() > 1000, "{} states", det.num_states());
        }
    }

    #[test]
    fn large_automata_get_moore_s_classes_on_any_number_of_threads() {
        // thousands of states: the encoding, the rounds' hashes, the stability check and the
        // copy of the result run in parallel on two threads or more
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..6 {
            let base_states = 250 + rng.below(150);
            let copies = 40 + rng.below(20);
            let (built, extra) = random_dfa_of(&mut rng, base_states, copies);
            let n = built.splits.len() - 1;
            assert!(n >= 2 * PARALLEL_MIN_STATES && built.arcs.len() >= crate::PARALLEL_MIN_ARCS);
            let key = |i: usize| std::slice::from_ref(&extra[i]);
            let model = minimize_moore(built.view(), 0, key).unwrap();
            assert!(model.splits.len() - 1 + 300 <= n, "copies merge");
            for threads in [1, 2, 3] {
                let fast = on_threads(threads, || minimize(built.view(), 0, key).unwrap());
                assert_eq!(fast, model, "{threads} threads");
                // with two hash bits: collisions, caught by the parallel stability check
                let narrow = on_threads(threads, || {
                    let symbols = Symbols {
                        view: built.view(),
                        extra: key,
                        hash_mask: u64::MAX,
                    };
                    let hashed = Hashed::encode(&symbols, 0).unwrap();
                    assert!(refine_by_signatures(&symbols, &hashed, 0b11).is_none());
                    let (class, count) = partition(&symbols, &hashed, 0b11);
                    build(built.view(), &class, count)
                });
                assert_eq!(narrow, model, "{threads} threads, narrow hashes");
            }
        }
    }

    #[test]
    fn the_first_state_repeating_a_symbol_is_named_on_any_number_of_threads() {
        let mut rng = Rng(77);
        let (built, extra) = random_dfa_of(&mut rng, 200, 40);
        let n = built.splits.len() - 1;
        // a copy of one arc of an early and of a late state (which lie in different ranges
        // on two threads): the same symbol twice
        let (early, late) = (n / 10, n - n / 10);
        let mut arcs = Vec::new();
        let mut keys = Vec::new();
        for state in 0..n {
            for idx in built.view().arc_range(state) {
                arcs.push(built.arcs[idx]);
                keys.push(extra[idx]);
            }
            if state == early || state == late {
                let idx = built.view().arc_range(state).start;
                arcs.push(built.arcs[idx]);
                keys.push(extra[idx]);
            }
        }
        let repeated = Built::from_sorted_arcs(n, arcs, Vec::new());
        let key = |i: usize| std::slice::from_ref(&keys[i]);
        let label = repeated.arcs[repeated.view().arc_range(early).start].label;
        for threads in [1, 2, 4] {
            let err = on_threads(threads, || minimize(repeated.view(), 2, key).unwrap_err());
            assert_eq!(
                err,
                Error::NotDeterministic {
                    fsa: 2,
                    state: early as i32,
                    label
                },
                "{threads} threads"
            );
        }
    }
}
