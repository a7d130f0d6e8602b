//! Accessible and co-accessible states by sweeps over the states in their order, which read
//! the arcs front to back instead of jumping between states as a graph search does.

use crate::kernels::structure;
use crate::view::FsaView;

/// How many sweeps each direction may take before the graph search takes over.
const MAX_SWEEPS: usize = 8;

/// The accessible and co-accessible states of `view`, as
/// [`structure::accessible_coaccessible`] gives them. Sweeps first: forward over the states
/// in order, each accessible state marking its dests; backward, each state that has an arc
/// into a co-accessible state becoming one. A sweep misses only what an arc to a state
/// already passed would have marked, so the sweeps repeat until one changes nothing (or,
/// forward, until no arc going back marked a new state). The states of a result of
/// compose or determinize are numbered in the order a search from the start met them, so
/// one forward sweep finds them all, and the backward ones need only as many rounds as
/// the longest chain of arcs that go back. Past [`MAX_SWEEPS`] sweeps in either direction
/// the graph search computes that direction instead.
pub(crate) fn accessible_coaccessible(view: FsaView<'_>) -> (Vec<bool>, Vec<bool>) {
    let n = view.num_states();
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    // the two directions share nothing: one per thread when rayon has two
    rayon::join(
        || accessible_by_sweeps(view).unwrap_or_else(|| structure::reachable(view, true)),
        || coaccessible_by_sweeps(view).unwrap_or_else(|| structure::reachable(view, false)),
    )
}

/// Forward sweeps from the start state until one marks no state behind it.
fn accessible_by_sweeps(view: FsaView<'_>) -> Option<Vec<bool>> {
    let n = view.num_states();
    let mut seen = vec![false; n];
    seen[0] = true;
    for _ in 0..MAX_SWEEPS {
        let mut marked_behind = false;
        for state in 0..n {
            if !seen[state] {
                continue;
            }
            for arc in view.state_arcs(state) {
                let dest = arc.dest_state as usize;
                if !seen[dest] {
                    seen[dest] = true;
                    marked_behind |= dest < state;
                }
            }
        }
        if !marked_behind {
            return Some(seen);
        }
    }
    None
}

/// Backward sweeps from the final state until one adds no state.
fn coaccessible_by_sweeps(view: FsaView<'_>) -> Option<Vec<bool>> {
    let n = view.num_states();
    let mut seen = vec![false; n];
    seen[n - 1] = true;
    let mut missing = n - 1;
    for _ in 0..MAX_SWEEPS {
        let mut added = false;
        for state in (0..n - 1).rev() {
            if !seen[state]
                && view
                    .state_arcs(state)
                    .iter()
                    .any(|arc| seen[arc.dest_state as usize])
            {
                seen[state] = true;
                missing -= 1;
                added = true;
            }
        }
        if !added || missing == 0 {
            return Some(seen);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arc::Arc;
    use crate::view::Built;

    /// Reachability by its definition: repeat "mark the dests of marked states" (or the
    /// sources of arcs into marked states) over all arcs until nothing changes.
    fn fixpoint(view: FsaView<'_>, forward: bool) -> Vec<bool> {
        let n = view.num_states();
        let mut seen = vec![false; n];
        seen[if forward { 0 } else { n - 1 }] = true;
        loop {
            let mut changed = false;
            for arc in view.arcs {
                let (from, to) = if forward {
                    (arc.src_state as usize, arc.dest_state as usize)
                } else {
                    (arc.dest_state as usize, arc.src_state as usize)
                };
                if seen[from] && !seen[to] {
                    seen[to] = true;
                    changed = true;
                }
            }
            if !changed {
                return seen;
            }
        }
    }

    #[test]
    fn sweeps_find_what_a_search_finds() {
        let mut seed = 0x853c_49e6_748f_ea9b_u64;
        let mut next = |bound: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % bound as u64) as usize
        };
        let mut swept = 0;
        for case in 0..3000 {
            let n = 1 + next(40);
            // mostly forward arcs, some back, some states without arcs (the chain test
            // below is the one that sends the sweeps past their limit)
            let back = [0, 5, 20, 60][case % 4];
            let mut arcs = Vec::new();
            for src in 0..n - 1 {
                for _ in 0..next(3) {
                    let dest = if next(100) < back {
                        next(n)
                    } else {
                        src + 1 + next(n - src - 1)
                    };
                    arcs.push(Arc::new(src as i32, dest as i32, 1 + next(3) as i32, 0.0));
                }
            }
            let built = Built::from_sorted_arcs(n, arcs, Vec::new());
            let view = built.view();
            let want = (fixpoint(view, true), fixpoint(view, false));
            assert_eq!(
                accessible_coaccessible(view),
                want,
                "case {case}: {built:?}"
            );
            if let Some(acc) = accessible_by_sweeps(view) {
                assert_eq!(acc, want.0);
                swept += 1;
            }
            if let Some(coacc) = coaccessible_by_sweeps(view) {
                assert_eq!(coacc, want.1);
                swept += 1;
            }
        }
        assert!(swept > 5000, "{swept} of 6000 swept");
    }

    #[test]
    fn a_chain_of_arcs_going_back_is_left_to_the_search() {
        // 0 -> n-2 -> n-3 -> ... -> 1 -> n-1: each forward sweep adds one state behind
        let n = 3 * MAX_SWEEPS;
        let mut arcs = vec![Arc::new(0, n as i32 - 2, 1, 0.0)];
        arcs.push(Arc::new(1, n as i32 - 1, -1, 0.0));
        for src in 2..n - 1 {
            arcs.push(Arc::new(src as i32, src as i32 - 1, 1, 0.0));
        }
        arcs.sort_by_key(|a| a.src_state);
        let built = Built::from_sorted_arcs(n, arcs, Vec::new());
        assert!(accessible_by_sweeps(built.view()).is_none());
        assert!(coaccessible_by_sweeps(built.view()).is_none());
        let (acc, coacc) = accessible_coaccessible(built.view());
        assert!(acc.iter().all(|&a| a) && coacc.iter().all(|&c| c));
    }
}
