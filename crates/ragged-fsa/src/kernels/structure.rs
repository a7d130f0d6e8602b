//! Kernels that rearrange one FSA: arc sort, top sort, connect, reverse, closure, epsilon
//! self-loops and the expansion of ragged aux labels used by `invert`.

use crate::arc::Arc;
use crate::error::Error;
use crate::view::{Built, FsaView};

/// k2's arc order packed in one integer: the label as `u32` above the destination state.
#[inline]
fn packed_key(arc: &Arc) -> u64 {
    ((arc.label as u32 as u64) << 32) | (arc.dest_state as u32 as u64)
}

/// Sorts the arcs of every state by k2's order (label as `u32`, then dest); stable.
#[cfg(test)]
pub(crate) fn arc_sort(view: FsaView<'_>) -> Built {
    let mut out = Built::copy_of(view);
    let splits: Vec<i32> = out.splits.clone();
    arc_sort_in_place(&splits, &mut out.arcs, &mut out.arc_map);
    out
}

/// Sorts, in place, the arcs of the states whose arcs `splits` delimits (offsets relative to
/// `arcs[0]` after subtracting `splits[0]`), permuting `arc_map` along; stable.
pub(crate) fn arc_sort_in_place(splits: &[i32], arcs: &mut [Arc], arc_map: &mut [i32]) {
    let base = splits[0];
    let mut keyed: Vec<(u64, u32)> = Vec::new();
    let mut saved_arcs: Vec<Arc> = Vec::new();
    let mut saved_map: Vec<i32> = Vec::new();
    for w in splits.windows(2) {
        let range = (w[0] - base) as usize..(w[1] - base) as usize;
        let state_arcs = &mut arcs[range.clone()];
        let mut sorted = true;
        for pair in state_arcs.windows(2) {
            if packed_key(&pair[1]) < packed_key(&pair[0]) {
                sorted = false;
                break;
            }
        }
        if sorted {
            continue;
        }
        keyed.clear();
        keyed.extend(
            state_arcs
                .iter()
                .enumerate()
                .map(|(i, arc)| (packed_key(arc), i as u32)),
        );
        if keyed.len() <= 16 {
            // insertion sort: stable and quickest for the few arcs of a typical state
            for j in 1..keyed.len() {
                let item = keyed[j];
                let mut k = j;
                while k > 0 && keyed[k - 1].0 > item.0 {
                    keyed[k] = keyed[k - 1];
                    k -= 1;
                }
                keyed[k] = item;
            }
        } else {
            keyed.sort_by_key(|&(key, _)| key);
        }
        saved_arcs.clear();
        saved_arcs.extend_from_slice(state_arcs);
        saved_map.clear();
        saved_map.extend_from_slice(&arc_map[range.clone()]);
        for (k, &(_, i)) in keyed.iter().enumerate() {
            state_arcs[k] = saved_arcs[i as usize];
            arc_map[range.start + k] = saved_map[i as usize];
        }
    }
}

/// Whether every state's arcs are in k2's order.
pub(crate) fn is_arc_sorted(view: FsaView<'_>) -> bool {
    (0..view.num_states()).all(|s| {
        view.state_arcs(s)
            .windows(2)
            .all(|w| w[0].sort_key() <= w[1].sort_key())
    })
}

/// Renumbers states by `new_of_old` (`-1` drops the state and the arcs entering or leaving
/// it), keeping each kept state's arcs in their order.
fn renumber(view: FsaView<'_>, new_of_old: &[i32], order: &[usize]) -> Built {
    let mut arcs = Vec::new();
    let mut arc_map = Vec::new();
    let mut splits = Vec::with_capacity(order.len() + 1);
    splits.push(0);
    for &old in order {
        let new_src = new_of_old[old];
        for arc_idx in view.arc_range(old) {
            let arc = view.arcs[arc_idx];
            let new_dest = new_of_old[arc.dest_state as usize];
            if new_dest >= 0 {
                arcs.push(Arc::new(new_src, new_dest, arc.label, arc.score));
                arc_map.push(arc_idx as i32);
            }
        }
        splits.push(arcs.len() as i32);
    }
    Built {
        splits,
        arcs,
        arc_map,
    }
}

/// Topologically sorts one FSA the way k2's `TopSort` does: Kahn's algorithm in batches.
/// Batch 0 is the start state; batch `k + 1` holds the states whose last remaining entering
/// arc left batch `k` (self-loops do not count), in increasing state order; the final state
/// comes last. States not reachable from the start are dropped (the final state is always
/// kept); a cycle other than a self-loop among the reachable states is an error naming a
/// state on it, and so is an arc leaving the final state (which the constructors refuse,
/// but a view can still hold): the final state must come last, so it cannot be sorted.
pub(crate) fn top_sort(view: FsaView<'_>, fsa_idx: usize) -> Result<Built, Error> {
    let n = view.num_states();
    if n == 0 {
        return Ok(Built::empty());
    }
    let final_state = n - 1;
    if let Some(arc) = view.arc_range(final_state).next() {
        return Err(Error::ArcLeavesFinal { arc, final_state });
    }
    let accessible = accessible(view);
    let mut in_degree = vec![0u32; n];
    for arc in view.arcs {
        if accessible[arc.src_state as usize] && arc.src_state != arc.dest_state {
            in_degree[arc.dest_state as usize] += 1;
        }
    }
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut batch: Vec<usize> = if in_degree[0] == 0 {
        vec![0]
    } else {
        Vec::new()
    };
    let mut next: Vec<usize> = Vec::new();
    while !batch.is_empty() {
        next.clear();
        for &state in &batch {
            for arc in view.state_arcs(state) {
                let dest = arc.dest_state as usize;
                if dest == state {
                    continue;
                }
                in_degree[dest] -= 1;
                if in_degree[dest] == 0 && dest != final_state {
                    next.push(dest);
                }
            }
        }
        order.extend(batch.iter().copied().filter(|&s| s != final_state));
        next.sort_unstable();
        std::mem::swap(&mut batch, &mut next);
    }
    order.push(final_state);
    let placed = order.len() - usize::from(!accessible[final_state]);
    let num_accessible = accessible.iter().filter(|&&a| a).count();
    if placed < num_accessible || (accessible[final_state] && in_degree[final_state] > 0) {
        return Err(Error::Cycle {
            fsa: fsa_idx,
            state: state_on_cycle(view, &accessible, &in_degree) as i32,
        });
    }
    let mut new_of_old = vec![-1i32; n];
    for (new, &old) in order.iter().enumerate() {
        new_of_old[old] = new as i32;
    }
    Ok(renumber(view, &new_of_old, &order))
}

/// A state on a cycle among the states Kahn's algorithm could not place (those reachable
/// with entering arcs left): walking back along such arcs must come round to a state twice.
/// (With no arc leaving the final state, every such state has such a predecessor; should a
/// walk still reach a state without one, that state is returned rather than indexed past.)
fn state_on_cycle(view: FsaView<'_>, accessible: &[bool], in_degree: &[u32]) -> usize {
    let n = view.num_states();
    let stuck = |s: usize| accessible[s] && in_degree[s] > 0;
    let mut predecessor = vec![usize::MAX; n];
    for arc in view.arcs {
        let (src, dest) = (arc.src_state as usize, arc.dest_state as usize);
        if src != dest && stuck(src) && stuck(dest) {
            predecessor[dest] = src;
        }
    }
    let mut state = (0..n)
        .find(|&s| stuck(s) && predecessor[s] != usize::MAX)
        .unwrap_or(0);
    let mut seen = vec![false; n];
    while !seen[state] {
        seen[state] = true;
        match predecessor[state] {
            usize::MAX => break,
            p => state = p,
        }
    }
    state
}

/// States reachable from the start (`forward`) or able to reach the final state.
pub(crate) fn reachable(view: FsaView<'_>, forward: bool) -> Vec<bool> {
    let n = view.num_states();
    let mut seen = vec![false; n];
    if n == 0 {
        return seen;
    }
    if forward {
        let mut stack = vec![0usize];
        seen[0] = true;
        while let Some(s) = stack.pop() {
            for arc in view.state_arcs(s) {
                let d = arc.dest_state as usize;
                if !seen[d] {
                    seen[d] = true;
                    stack.push(d);
                }
            }
        }
    } else {
        // incoming lists as a CSR built by counting
        let mut counts = vec![0usize; n + 1];
        for arc in view.arcs {
            counts[arc.dest_state as usize + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut srcs = vec![0usize; view.arcs.len()];
        for arc in view.arcs {
            let d = arc.dest_state as usize;
            srcs[fill[d]] = arc.src_state as usize;
            fill[d] += 1;
        }
        let mut stack = vec![n - 1];
        seen[n - 1] = true;
        while let Some(s) = stack.pop() {
            for &src in &srcs[counts[s]..counts[s + 1]] {
                if !seen[src] {
                    seen[src] = true;
                    stack.push(src);
                }
            }
        }
    }
    seen
}

/// Whether no arc goes to a lower-numbered state.
fn forward_only(view: FsaView<'_>) -> bool {
    view.arcs.iter().all(|a| a.dest_state >= a.src_state)
}

/// Accessibility in one sweep, for an FSA whose arcs all go forward (or are self-loops).
fn accessible_by_sweep(view: FsaView<'_>) -> Vec<bool> {
    let n = view.num_states();
    let mut acc = vec![false; n];
    if n == 0 {
        return acc;
    }
    acc[0] = true;
    for state in 0..n {
        if acc[state] {
            for arc in view.state_arcs(state) {
                acc[arc.dest_state as usize] = true;
            }
        }
    }
    acc
}

/// Accessibility of every state: a sweep when no arc goes backwards, else a search.
fn accessible(view: FsaView<'_>) -> Vec<bool> {
    if forward_only(view) {
        accessible_by_sweep(view)
    } else {
        reachable(view, true)
    }
}

/// Accessibility and co-accessibility of every state. When no arc goes backwards (the FSA is
/// top-sorted, self-loops allowed) one sweep each way suffices; otherwise a search is made.
pub(crate) fn accessible_coaccessible(view: FsaView<'_>) -> (Vec<bool>, Vec<bool>) {
    let n = view.num_states();
    if n == 0 || !forward_only(view) {
        // the two searches share nothing: one per thread when rayon has two
        return rayon::join(|| reachable(view, true), || reachable(view, false));
    }
    let acc = accessible_by_sweep(view);
    let mut coacc = vec![false; n];
    coacc[n - 1] = true;
    for state in (0..n - 1).rev() {
        coacc[state] = view
            .state_arcs(state)
            .iter()
            .any(|arc| coacc[arc.dest_state as usize]);
    }
    (acc, coacc)
}

/// Keeps the states that are both accessible and co-accessible, in their order. If the start
/// state is not kept the result is the empty FSA.
pub(crate) fn connect(view: FsaView<'_>) -> Built {
    let n = view.num_states();
    if n == 0 {
        return Built::empty();
    }
    let (acc, coacc) = accessible_coaccessible(view);
    connect_given(view, &acc, &coacc)
}

/// [`connect`] with the accessible and co-accessible states already known (`acc` and
/// `coacc` from [`accessible_coaccessible`] of `view`).
pub(crate) fn connect_given(view: FsaView<'_>, acc: &[bool], coacc: &[bool]) -> Built {
    let n = view.num_states();
    if n == 0 || !(acc[0] && coacc[0]) {
        return Built::empty();
    }
    let mut new_of_old = vec![-1i32; n];
    let mut order = Vec::new();
    for s in 0..n {
        if acc[s] && coacc[s] {
            new_of_old[s] = order.len() as i32;
            order.push(s);
        }
    }
    renumber(view, &new_of_old, &order)
}

/// Reverses one FSA as k2's `Reverse` does: the old final state `F` becomes the start state
/// 0, the old start state becomes state `F`, every other state keeps its number, and a new
/// final state `F + 1` is entered from state `F` by a `-1` arc of score 0 (arc map `-1`, the
/// last arc). Each state's arcs are the reversed arcs that entered it, in input arc order;
/// the old `-1` arcs become epsilon arcs.
pub(crate) fn reverse(view: FsaView<'_>) -> Built {
    let n = view.num_states();
    if n == 0 {
        return Built::empty();
    }
    let f = (n - 1) as i32;
    let new_of = |s: i32| {
        if s == 0 {
            f
        } else if s == f {
            0
        } else {
            s
        }
    };
    let mut tagged: Vec<(Arc, i32)> = view
        .arcs
        .iter()
        .enumerate()
        .map(|(i, arc)| {
            let label = if arc.label == -1 { 0 } else { arc.label };
            (
                Arc::new(
                    new_of(arc.dest_state),
                    new_of(arc.src_state),
                    label,
                    arc.score,
                ),
                i as i32,
            )
        })
        .collect();
    // stable: the arcs entering a state keep their input order
    tagged.sort_by_key(|(arc, _)| arc.src_state);
    tagged.push((Arc::new(f, f + 1, -1, 0.0), -1));
    let (arcs, arc_map) = tagged.into_iter().unzip();
    Built::from_sorted_arcs(n + 1, arcs, arc_map)
}

/// Kleene closure (k2's `Closure`): arcs entering the final state become epsilon arcs to the
/// start state, and the start state gets a new `-1` arc to the final state (score 0, arc map
/// `-1`), placed after its other arcs. Returns the output and the output index of that arc.
pub(crate) fn closure(view: FsaView<'_>) -> (Built, Option<usize>) {
    let n = view.num_states();
    if n == 0 {
        return (Built::empty(), None);
    }
    let f = (n - 1) as i32;
    let mut arcs = Vec::with_capacity(view.arcs.len() + 1);
    let mut arc_map = Vec::with_capacity(view.arcs.len() + 1);
    let mut new_arc = None;
    for state in 0..n {
        for arc_idx in view.arc_range(state) {
            let mut arc = view.arcs[arc_idx];
            if arc.dest_state == f {
                arc.dest_state = 0;
                arc.label = 0;
            }
            arcs.push(arc);
            arc_map.push(arc_idx as i32);
        }
        if state == 0 && n > 1 {
            new_arc = Some(arcs.len());
            arcs.push(Arc::new(0, f, -1, 0.0));
            arc_map.push(-1);
        }
    }
    (Built::from_sorted_arcs(n, arcs, arc_map), new_arc)
}

/// Adds an epsilon self-loop (score 0, arc map `-1`) as the first arc of every non-final state.
pub(crate) fn add_epsilon_self_loops(view: FsaView<'_>) -> Built {
    let n = view.num_states();
    if n == 0 {
        return Built::empty();
    }
    let mut arcs = Vec::with_capacity(view.arcs.len() + n - 1);
    let mut arc_map = Vec::with_capacity(view.arcs.len() + n - 1);
    for state in 0..n {
        if state + 1 < n {
            arcs.push(Arc::new(state as i32, state as i32, 0, 0.0));
            arc_map.push(-1);
        }
        for arc_idx in view.arc_range(state) {
            arcs.push(view.arcs[arc_idx]);
            arc_map.push(arc_idx as i32);
        }
    }
    Built::from_sorted_arcs(n, arcs, arc_map)
}

/// Removes arcs that are epsilon self-loops (label 0, source equal to destination).
pub(crate) fn remove_epsilon_self_loops(view: FsaView<'_>) -> Built {
    let mut arcs = Vec::with_capacity(view.arcs.len());
    let mut arc_map = Vec::with_capacity(view.arcs.len());
    for (i, arc) in view.arcs.iter().enumerate() {
        if !(arc.label == 0 && arc.src_state == arc.dest_state) {
            arcs.push(*arc);
            arc_map.push(i as i32);
        }
    }
    Built::from_sorted_arcs(view.num_states(), arcs, arc_map)
}

/// Inverts one FSA whose aux labels are ragged: k2's `expand_ragged_attributes` followed
/// by a swap of labels and aux labels. An arc with aux list `[a1 .. aL]` becomes a chain of
/// `max(L, 1)` arcs through new states numbered right after its source state (so a
/// top-sorted FSA stays top-sorted). The first arc of a chain carries the score (arc map =
/// the old arc; the others get score 0 and arc map `-1`). For an ordinary arc the labels are
/// `a1 .. aL` (or one epsilon when the list is empty) and the old label is the first arc's
/// aux label (the others get 0). For an arc into the final state, whose list is
/// `[x1 .. xn, -1]` in k2 (a missing trailing `-1` is supplied), the labels are
/// `x1 .. xn, -1` and the `-1` aux label goes on the last arc, as k2 does. Returns the
/// output and its plain aux labels.
pub(crate) fn invert_ragged(
    view: FsaView<'_>,
    aux_splits: &[i32],
    aux_values: &[i32],
) -> (Built, Vec<i32>) {
    let n = view.num_states();
    if n == 0 {
        return (Built::empty(), Vec::new());
    }
    let aux_base = aux_splits[0];
    let list = |arc_idx: usize| {
        &aux_values[(aux_splits[arc_idx] - aux_base) as usize
            ..(aux_splits[arc_idx + 1] - aux_base) as usize]
    };
    // the labels of the chain an arc becomes, and the old label's position in it
    let chain = |arc_idx: usize| -> (Vec<i32>, usize) {
        let arc = view.arcs[arc_idx];
        let labels = list(arc_idx);
        if arc.label == -1 {
            let mut xs: Vec<i32> = labels.strip_suffix(&[-1]).unwrap_or(labels).to_vec();
            xs.push(-1);
            let last = xs.len() - 1;
            (xs, last)
        } else if labels.is_empty() {
            (vec![0], 0)
        } else {
            (labels.to_vec(), 0)
        }
    };
    let extra = |arc_idx: usize| -> usize {
        let arc = view.arcs[arc_idx];
        let len = list(arc_idx).len();
        if arc.label == -1 {
            let trailing = usize::from(list(arc_idx).last() == Some(&-1));
            len - trailing
        } else {
            len.saturating_sub(1)
        }
    };
    let mut new_of_old = vec![0i32; n];
    let mut next = 0i32;
    for (state, slot) in new_of_old.iter_mut().enumerate() {
        *slot = next;
        next += 1 + view.arc_range(state).map(extra).sum::<usize>() as i32;
    }
    let num_new_states = next as usize;
    let mut arcs = Vec::new();
    let mut arc_map = Vec::new();
    let mut aux = Vec::new();
    let mut chain_arcs: Vec<(Arc, i32)> = Vec::new();
    for state in 0..n {
        let src = new_of_old[state];
        let mut next_extra = src + 1;
        chain_arcs.clear();
        for arc_idx in view.arc_range(state) {
            let arc = view.arcs[arc_idx];
            let dest = new_of_old[arc.dest_state as usize];
            let (labels, old_label_at) = chain(arc_idx);
            let aux_of = |k: usize| if k == old_label_at { arc.label } else { 0 };
            let first_dest = if labels.len() == 1 { dest } else { next_extra };
            arcs.push(Arc::new(src, first_dest, labels[0], arc.score));
            arc_map.push(arc_idx as i32);
            aux.push(aux_of(0));
            for (k, &label) in labels.iter().enumerate().skip(1) {
                let to = if k + 1 == labels.len() {
                    dest
                } else {
                    next_extra + 1
                };
                chain_arcs.push((Arc::new(next_extra, to, label, 0.0), aux_of(k)));
                next_extra += 1;
            }
        }
        for &(arc, aux_label) in &chain_arcs {
            arcs.push(arc);
            arc_map.push(-1);
            aux.push(aux_label);
        }
    }
    (Built::from_sorted_arcs(num_new_states, arcs, arc_map), aux)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fsa(num_states: usize, arcs: &[(i32, i32, i32, f32)]) -> Built {
        let arcs: Vec<Arc> = arcs
            .iter()
            .map(|&(s, d, l, w)| Arc::new(s, d, l, w))
            .collect();
        let n = arcs.len();
        Built::from_sorted_arcs(num_states, arcs, (0..n as i32).collect())
    }

    fn tuples(b: &Built) -> Vec<(i32, i32, i32, f32)> {
        b.arcs
            .iter()
            .map(|a| (a.src_state, a.dest_state, a.label, a.score))
            .collect()
    }

    #[test]
    fn arc_sort_orders_by_unsigned_label_then_dest() {
        let input = fsa(
            3,
            &[
                (0, 2, -1, 0.5),
                (0, 1, 3, 0.1),
                (0, 1, 0, 0.2),
                (0, 0, 3, 0.3),
                (1, 2, -1, 0.),
            ],
        );
        let out = arc_sort(input.view());
        assert_eq!(
            tuples(&out),
            vec![
                (0, 1, 0, 0.2),
                (0, 0, 3, 0.3),
                (0, 1, 3, 0.1),
                (0, 2, -1, 0.5),
                (1, 2, -1, 0.)
            ]
        );
        assert_eq!(out.arc_map, vec![2, 3, 1, 0, 4]);
        assert!(is_arc_sorted(out.view()));
        assert!(!is_arc_sorted(input.view()));
    }

    #[test]
    fn top_sort_follows_reverse_dfs_finish_order() {
        // 0 -> 2 -> 1 -> 3(final)
        let input = fsa(4, &[(0, 2, 1, 0.), (1, 3, -1, 0.), (2, 1, 2, 0.)]);
        let out = top_sort(input.view(), 0).unwrap();
        assert_eq!(
            tuples(&out),
            vec![(0, 1, 1, 0.), (1, 2, 2, 0.), (2, 3, -1, 0.)]
        );
        assert_eq!(out.arc_map, vec![0, 2, 1]);
    }

    #[test]
    fn top_sort_rejects_cycles_but_keeps_self_loops() {
        let looped = fsa(
            3,
            &[(0, 0, 1, 0.), (0, 1, 2, 0.), (1, 1, 3, 0.), (1, 2, -1, 0.)],
        );
        let out = top_sort(looped.view(), 0).unwrap();
        assert_eq!(out.arcs.len(), 4);
        let cyclic = fsa(3, &[(0, 1, 1, 0.), (1, 0, 2, 0.), (1, 2, -1, 0.)]);
        assert_eq!(
            top_sort(cyclic.view(), 7),
            Err(Error::Cycle { fsa: 7, state: 0 })
        );
    }

    #[test]
    fn top_sort_refuses_an_arc_leaving_the_final_state() {
        // The constructors refuse this FSA; a view built around them must still not panic
        // (this input once indexed a predecessor of usize::MAX).
        let input = fsa(3, &[(0, 2, -1, 0.), (2, 1, 1, 0.)]);
        assert_eq!(
            top_sort(input.view(), 4),
            Err(Error::ArcLeavesFinal {
                arc: 1,
                final_state: 2
            })
        );
        // a self-loop on the final state is a leaving arc too
        let looped = fsa(2, &[(0, 1, -1, 0.), (1, 1, 0, 0.)]);
        assert_eq!(
            top_sort(looped.view(), 0),
            Err(Error::ArcLeavesFinal {
                arc: 1,
                final_state: 1
            })
        );
    }

    #[test]
    fn state_on_cycle_stops_at_a_state_without_a_stuck_predecessor() {
        // states 1 and 2 are left with entering arcs, but only from the final state, which
        // Kahn's algorithm never expands: the walk must stop, not index usize::MAX
        let input = fsa(4, &[(0, 3, -1, 0.), (3, 1, 1, 0.), (3, 2, 1, 0.)]);
        let accessible = vec![true; 4];
        let in_degree = [0, 1, 1, 0];
        assert_eq!(state_on_cycle(input.view(), &accessible, &in_degree), 0);
    }

    #[test]
    fn connect_drops_useless_states() {
        // state 2 is not co-accessible, state 3 not accessible
        let input = fsa(
            5,
            &[(0, 1, 1, 0.), (0, 2, 2, 0.), (1, 4, -1, 0.), (3, 4, -1, 0.)],
        );
        let out = connect(input.view());
        assert_eq!(tuples(&out), vec![(0, 1, 1, 0.), (1, 2, -1, 0.)]);
        assert_eq!(out.arc_map, vec![0, 2]);
        assert_eq!(out.splits, vec![0, 1, 2, 2]);
        let dead = fsa(3, &[(0, 1, 1, 0.)]);
        assert_eq!(connect(dead.view()), Built::empty());
    }

    #[test]
    fn sweeps_and_searches_agree_on_reachability() {
        // top-sorted (sweeps) and the same graph with states renamed backwards (searches)
        let sorted = fsa(
            6,
            &[
                (0, 1, 1, 0.),
                (0, 2, 2, 0.),
                (1, 1, 3, 0.),
                (1, 5, -1, 0.),
                (3, 4, 4, 0.),
                (4, 5, -1, 0.),
            ],
        );
        let (acc, coacc) = accessible_coaccessible(sorted.view());
        assert_eq!(acc, vec![true, true, true, false, false, true]);
        assert_eq!(coacc, vec![true, true, false, true, true, true]);
        assert_eq!(
            (acc, coacc),
            (
                reachable(sorted.view(), true),
                reachable(sorted.view(), false)
            )
        );
    }

    #[test]
    fn closure_redirects_final_arcs_to_the_start() {
        let input = fsa(3, &[(0, 1, 1, 0.5), (1, 2, -1, 0.25)]);
        let (out, new_arc) = closure(input.view());
        assert_eq!(
            tuples(&out),
            vec![(0, 1, 1, 0.5), (0, 2, -1, 0.), (1, 0, 0, 0.25)]
        );
        assert_eq!(out.arc_map, vec![0, -1, 1]);
        assert_eq!(new_arc, Some(1));
    }

    #[test]
    fn reverse_maps_states_like_k2() {
        // 0 -5-> 1 -6-> 2 -(-1)-> 3 and 0 -7-> 2
        let input = fsa(
            4,
            &[
                (0, 1, 5, 0.5),
                (0, 2, 7, 1.5),
                (1, 2, 6, 0.75),
                (2, 3, -1, 0.25),
            ],
        );
        let out = reverse(input.view());
        // old 3 -> 0, old 0 -> 3, 1 and 2 stay; new final 4
        assert_eq!(
            tuples(&out),
            vec![
                (0, 2, 0, 0.25),
                (1, 3, 5, 0.5),
                (2, 3, 7, 1.5),
                (2, 1, 6, 0.75),
                (3, 4, -1, 0.)
            ]
        );
        assert_eq!(out.arc_map, vec![3, 0, 1, 2, -1]);
        assert_eq!(out.splits, vec![0, 1, 2, 4, 5, 5]);
    }

    #[test]
    fn epsilon_self_loops_round_trip() {
        let input = fsa(3, &[(0, 1, 5, 0.5), (1, 2, -1, 0.25)]);
        let added = add_epsilon_self_loops(input.view());
        assert_eq!(
            tuples(&added),
            vec![
                (0, 0, 0, 0.),
                (0, 1, 5, 0.5),
                (1, 1, 0, 0.),
                (1, 2, -1, 0.25)
            ]
        );
        assert_eq!(added.arc_map, vec![-1, 0, -1, 1]);
        let removed = remove_epsilon_self_loops(added.view());
        assert_eq!(tuples(&removed), tuples(&input));
        assert_eq!(removed.arc_map, vec![1, 3]);
    }

    #[test]
    fn invert_ragged_expands_long_lists_into_chains() {
        // 0 -1:[a b c]-> 1 -2:[]-> 2 -(-1):[-1]-> 3
        let input = fsa(4, &[(0, 1, 1, 0.5), (1, 2, 2, 0.25), (2, 3, -1, 1.0)]);
        let aux_splits = [0, 3, 3, 4];
        let aux_values = [10, 11, 12, -1];
        let (out, aux) = invert_ragged(input.view(), &aux_splits, &aux_values);
        assert_eq!(
            tuples(&out),
            vec![
                (0, 1, 10, 0.5),
                (1, 2, 11, 0.),
                (2, 3, 12, 0.),
                (3, 4, 0, 0.25),
                (4, 5, -1, 1.0)
            ]
        );
        assert_eq!(aux, vec![1, 0, 0, 2, -1]);
        assert_eq!(out.arc_map, vec![0, -1, -1, 1, 2]);
    }

    #[test]
    fn invert_ragged_puts_the_final_label_on_the_last_arc() {
        // 0 -5:[7]-> 1 -(-1):[8 9 -1]-> 2 ; the final arc becomes 8, 9, then -1
        let input = fsa(3, &[(0, 1, 5, 0.5), (1, 2, -1, 2.0)]);
        let (out, aux) = invert_ragged(input.view(), &[0, 1, 4], &[7, 8, 9, -1]);
        assert_eq!(
            tuples(&out),
            vec![
                (0, 1, 7, 0.5),
                (1, 2, 8, 2.0),
                (2, 3, 9, 0.),
                (3, 4, -1, 0.)
            ]
        );
        assert_eq!(aux, vec![5, 0, 0, -1]);
        assert_eq!(out.arc_map, vec![0, 1, -1, -1]);
        // a final arc whose list lacks the -1 gets it supplied
        let (same, _) = invert_ragged(input.view(), &[0, 1, 3], &[7, 8, 9]);
        assert_eq!(same, out);
    }
}
