//! The minimization kernel: Moore's partition refinement of a connected acceptor whose arcs
//! are encoded as (label, quantized score, extra key) symbols, as Kaldi's
//! `fstminimizeencoded` sees them.

use std::collections::HashMap;

use crate::arc::Arc;
use crate::error::Error;
use crate::view::{Built, FsaView};

/// Scores are quantized to multiples of this before encoding, as Kaldi's
/// `fstminimizeencoded` does with its default `delta` (1/1024).
const QUANTUM: f64 = 1.0 / 1024.0;

/// The symbol an arc is encoded as: label, the quantized score and the arc's extra key
/// (its aux labels, if any).
fn symbol(arc: &Arc, extra: &[i32]) -> (i32, i64, Vec<i32>) {
    let score = (arc.score as f64 / QUANTUM).round() as i64;
    (arc.label, score, extra.to_vec())
}

/// Merges the equivalent states of one connected FSA whose arcs, encoded by `extra(arc)`,
/// are deterministic (checked: [`Error::NotDeterministic`]). Classes are numbered by their
/// lowest state, so the start stays 0 and the final state, alone in its class, stays last;
/// each class keeps the arcs of its lowest state.
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
    let mut symbol_ids: HashMap<(i32, i64, Vec<i32>), u32> = HashMap::new();
    let mut moves: Vec<Vec<(u32, i32)>> = Vec::with_capacity(n);
    for state in 0..n {
        let mut list: Vec<(u32, i32)> = Vec::with_capacity(view.arc_range(state).len());
        for idx in view.arc_range(state) {
            let arc = view.arcs[idx];
            let next_id = symbol_ids.len() as u32;
            let id = *symbol_ids
                .entry(symbol(&arc, extra(idx)))
                .or_insert(next_id);
            list.push((id, arc.dest_state));
        }
        list.sort_unstable();
        if let Some(w) = list.windows(2).find(|w| w[0].0 == w[1].0) {
            let label = symbol_ids
                .iter()
                .find(|(_, &v)| v == w[0].0)
                .map(|(k, _)| k.0)
                .unwrap_or(0);
            return Err(Error::NotDeterministic {
                fsa: fsa_idx,
                state: state as i32,
                label,
            });
        }
        moves.push(list);
    }
    // Moore: start from {non-final, final}, refine by (class, [(symbol, class of dest)])
    let final_state = n - 1;
    let mut class: Vec<u32> = (0..n).map(|s| u32::from(s == final_state)).collect();
    let mut num_classes = if n > 1 { 2 } else { 1 };
    let mut signatures: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut signature: Vec<u32> = Vec::new();
    loop {
        signatures.clear();
        let mut next_class = vec![0u32; n];
        for state in 0..n {
            signature.clear();
            signature.push(class[state]);
            for &(sym, dest) in &moves[state] {
                signature.push(sym);
                signature.push(class[dest as usize]);
            }
            let next_id = signatures.len() as u32;
            next_class[state] = match signatures.get(signature.as_slice()) {
                Some(&id) => id,
                None => {
                    signatures.insert(signature.clone(), next_id);
                    next_id
                }
            };
        }
        let count = signatures.len();
        class = next_class;
        if count == num_classes {
            break;
        }
        num_classes = count;
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
