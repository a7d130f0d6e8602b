//! Kernels that build FSAs: linear FSAs from label sequences, CTC topologies and graphs,
//! and the union of several FSAs.

use crate::arc::Arc;
use crate::view::{Built, FsaView};

/// A linear FSA accepting `labels`: states `0..=n+1`, arc `i -> i+1` with label `labels[i]`,
/// then a `-1` arc into the final state; all scores 0.
pub(crate) fn linear(labels: &[i32]) -> Built {
    let n = labels.len();
    let mut arcs: Vec<Arc> = labels
        .iter()
        .enumerate()
        .map(|(i, &l)| Arc::new(i as i32, i as i32 + 1, l, 0.0))
        .collect();
    arcs.push(Arc::new(n as i32, n as i32 + 1, -1, 0.0));
    Built::from_sorted_arcs(n + 2, arcs, Vec::new())
}

/// k2's CTC topology for tokens `0..=max_token` (0 is blank), with its aux labels;
/// `num_arcs` (checked by the caller to fit `i32`) is reserved up front, and a reservation
/// the allocator refuses is an error rather than an abort.
pub(crate) fn ctc_topo(
    max_token: i32,
    modified: bool,
    num_arcs: usize,
) -> Result<(Built, Vec<i32>), std::collections::TryReserveError> {
    let num_states = max_token as usize + 2;
    let final_state = max_token + 1;
    let mut arcs: Vec<Arc> = Vec::new();
    let mut aux: Vec<i32> = Vec::new();
    arcs.try_reserve_exact(num_arcs)?;
    aux.try_reserve_exact(num_arcs)?;
    if modified {
        // state 0: a self-loop per token (emitting it), then an arc into every token state
        for token in 0..=max_token {
            arcs.push(Arc::new(0, 0, token, 0.0));
            aux.push(token);
        }
        for dest in 1..=final_state {
            let label = if dest == final_state { -1 } else { dest };
            arcs.push(Arc::new(0, dest, label, 0.0));
            aux.push(label);
        }
        // token state i: repeat (self-loop) and return to state 0, both emitting nothing
        for state in 1..=max_token {
            arcs.push(Arc::new(state, state, state, 0.0));
            aux.push(0);
            arcs.push(Arc::new(state, 0, state, 0.0));
            aux.push(0);
        }
    } else {
        for src in 0..=max_token {
            for dest in 0..=final_state {
                let label = if dest == final_state { -1 } else { dest };
                arcs.push(Arc::new(src, dest, label, 0.0));
                aux.push(if src == dest { 0 } else { label });
            }
        }
    }
    debug_assert_eq!(arcs.len(), num_arcs);
    Ok((Built::from_sorted_arcs(num_states, arcs, Vec::new()), aux))
}

/// k2's CTC graph for one token sequence: blank states `2k`, token states `2k+1`, final
/// state `2n+1`; with its aux labels.
pub(crate) fn ctc_graph(symbols: &[i32], modified: bool) -> (Built, Vec<i32>) {
    let n = symbols.len() as i32;
    let num_states = (2 * n + 2) as usize;
    let mut arcs = Vec::new();
    let mut aux = Vec::new();
    for k in 0..=n {
        let blank = 2 * k;
        let current = if k == n { -1 } else { symbols[k as usize] };
        // blank state: self-loop, then the arc into the next token (or final) state
        arcs.push(Arc::new(blank, blank, 0, 0.0));
        aux.push(0);
        arcs.push(Arc::new(blank, blank + 1, current, 0.0));
        aux.push(current);
        if k == n {
            break;
        }
        let token_state = blank + 1;
        let next = if k + 1 == n {
            -1
        } else {
            symbols[k as usize + 1]
        };
        arcs.push(Arc::new(token_state, token_state + 1, 0, 0.0));
        aux.push(0);
        arcs.push(Arc::new(token_state, token_state, current, 0.0));
        aux.push(0);
        if modified || current != next {
            arcs.push(Arc::new(token_state, token_state + 2, next, 0.0));
            aux.push(next);
        }
    }
    (Built::from_sorted_arcs(num_states, arcs, Vec::new()), aux)
}

/// The union of several FSAs (k2's `Union`): a new start state 0 with an epsilon arc (score
/// 0, arc map `-1`) to the start of every non-empty input, the inputs' non-final states
/// renumbered one after another, and all their final states merged into one final state.
/// The arc map gives `(fsa index, local arc index)` for arcs that come from an input.
pub(crate) fn union(views: &[FsaView<'_>]) -> (Built, Vec<Option<(usize, usize)>>) {
    let mut offsets = Vec::with_capacity(views.len());
    let mut next = 1i32;
    for view in views {
        offsets.push(next);
        next += view.num_states().saturating_sub(1) as i32;
    }
    let final_state = next;
    let mut arcs = Vec::new();
    let mut origin = Vec::new();
    for (i, view) in views.iter().enumerate() {
        if view.num_states() > 0 {
            let dest = if view.num_states() == 1 {
                final_state
            } else {
                offsets[i]
            };
            arcs.push(Arc::new(0, dest, 0, 0.0));
            origin.push(None);
        }
    }
    for (i, view) in views.iter().enumerate() {
        let f = view.num_states() as i32 - 1;
        let map = |s: i32| if s == f { final_state } else { offsets[i] + s };
        for (arc_idx, arc) in view.arcs.iter().enumerate() {
            arcs.push(Arc::new(
                map(arc.src_state),
                map(arc.dest_state),
                arc.label,
                arc.score,
            ));
            origin.push(Some((i, arc_idx)));
        }
    }
    // inputs whose final state has leaving arcs (invalid FSAs) would break the grouping
    let mut order: Vec<usize> = (0..arcs.len()).collect();
    order.sort_by_key(|&i| arcs[i].src_state);
    let arcs = order.iter().map(|&i| arcs[i]).collect();
    let origin = order.iter().map(|&i| origin[i]).collect();
    let built = Built::from_sorted_arcs(final_state as usize + 1, arcs, Vec::new());
    (built, origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuples(b: &Built) -> Vec<(i32, i32, i32)> {
        b.arcs
            .iter()
            .map(|a| (a.src_state, a.dest_state, a.label))
            .collect()
    }

    #[test]
    fn linear_fsa_of_three_labels() {
        let b = linear(&[2, 5, 8]);
        assert_eq!(b.splits, vec![0, 1, 2, 3, 4, 4]);
        assert_eq!(
            tuples(&b),
            vec![(0, 1, 2), (1, 2, 5), (2, 3, 8), (3, 4, -1)]
        );
    }

    #[test]
    fn standard_ctc_topo_for_two_tokens() {
        let (b, aux) = ctc_topo(2, false, 12).unwrap();
        assert_eq!(b.splits, vec![0, 4, 8, 12, 12]);
        assert_eq!(
            tuples(&b)[..4],
            [(0, 0, 0), (0, 1, 1), (0, 2, 2), (0, 3, -1)]
        );
        // from token 1: repeat emits nothing, blank and 2 emit themselves
        assert_eq!(
            tuples(&b)[4..8],
            [(1, 0, 0), (1, 1, 1), (1, 2, 2), (1, 3, -1)]
        );
        assert_eq!(aux[4..8], [0, 0, 2, -1]);
        assert_eq!(aux[..4], [0, 1, 2, -1]);
    }

    #[test]
    fn modified_ctc_topo_for_two_tokens() {
        let (b, aux) = ctc_topo(2, true, 10).unwrap();
        // (states - 1) * 2 + (states - 2) * 2 arcs with states = 4
        assert_eq!(b.arcs.len(), 10);
        assert_eq!(b.splits, vec![0, 6, 8, 10, 10]);
        assert_eq!(
            tuples(&b),
            vec![
                (0, 0, 0),
                (0, 0, 1),
                (0, 0, 2),
                (0, 1, 1),
                (0, 2, 2),
                (0, 3, -1),
                (1, 1, 1),
                (1, 0, 1),
                (2, 2, 2),
                (2, 0, 2)
            ]
        );
        assert_eq!(aux, vec![0, 1, 2, 1, 2, -1, 0, 0, 0, 0]);
    }

    #[test]
    fn ctc_graph_needs_a_blank_between_repeats() {
        let (b, aux) = ctc_graph(&[1, 1], false);
        assert_eq!(b.splits.len(), 7); // 6 states
        assert_eq!(
            tuples(&b),
            vec![
                (0, 0, 0),
                (0, 1, 1),
                (1, 2, 0),
                (1, 1, 1),
                (2, 2, 0),
                (2, 3, 1),
                (3, 4, 0),
                (3, 3, 1),
                (3, 5, -1),
                (4, 4, 0),
                (4, 5, -1)
            ]
        );
        assert_eq!(aux, vec![0, 1, 0, 0, 0, 1, 0, 0, -1, 0, -1]);
        let (m, _) = ctc_graph(&[1, 1], true);
        assert_eq!(m.arcs.len(), 12);
        assert!(m.arcs.contains(&Arc::new(1, 3, 1, 0.0)));
    }

    #[test]
    fn union_merges_final_states() {
        let a = linear(&[1]);
        let b = linear(&[2, 3]);
        let (u, origin) = union(&[a.view(), b.view()]);
        // new start, a: 0,1 -> 1,2 ; b: 0,1,2 -> 3,4,5 ; final 6
        assert_eq!(
            tuples(&u),
            vec![
                (0, 1, 0),
                (0, 3, 0),
                (1, 2, 1),
                (2, 6, -1),
                (3, 4, 2),
                (4, 5, 3),
                (5, 6, -1)
            ]
        );
        assert_eq!(origin[0], None);
        assert_eq!(origin[2], Some((0, 0)));
        assert_eq!(origin[6], Some((1, 2)));
    }
}
