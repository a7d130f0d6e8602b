//! The intersection kernel: k2's host `Intersection`, a breadth-first walk over pairs of
//! states of two arc-sorted FSAs.

use std::collections::HashMap;

use super::PairMap;
use crate::arc::Arc;
use crate::view::{reserve_bounded, ArcBudget, Built, FsaView};

/// The intersection of two arc-sorted FSAs and, per output arc, the local arc of `a` and of
/// `b` it came from (`-1` where the arc moves the other side alone).
///
/// As k2: state pairs are numbered in the order a queue started at `(0, 0)` first meets them;
/// the pair of final states becomes the last state. Per pair, with
/// `treat_epsilons_specially`, the epsilon arcs of `a` come first (they move `a` alone), then
/// those of `b`; then every arc of the side with fewer remaining arcs is matched with the
/// arcs of the other side that carry its label (labels compared as `u32`). Without it, 0 is
/// an ordinary label. The result is not connected.
///
/// The arcs of each state pair are counted and taken from `budget` before they are stored
/// (and the arc vectors never grow past the budget's limit); past it, the error is the count
/// the budget reached.
pub(crate) fn intersect(
    a: FsaView<'_>,
    b: FsaView<'_>,
    treat_epsilons_specially: bool,
    budget: &ArcBudget,
) -> Result<(Built, Vec<i32>, Vec<i32>), usize> {
    if a.num_states() == 0 || b.num_states() == 0 {
        return Ok((Built::empty(), Vec::new(), Vec::new()));
    }
    const FINAL: i32 = -1;
    let final_pair = (a.num_states() as i32 - 1, b.num_states() as i32 - 1);
    let mut ids: PairMap = HashMap::with_capacity_and_hasher(
        (a.arcs.len() + b.arcs.len()).min(1 << 20),
        Default::default(),
    );
    let mut pairs: Vec<(i32, i32)> = vec![(0, 0)];
    ids.insert(key(0, 0), 0);
    ids.entry(key(final_pair.0, final_pair.1)).or_insert(FINAL);
    let mut splits = vec![0i32];
    let mut arcs: Vec<Arc> = Vec::new();
    let mut a_map: Vec<i32> = Vec::new();
    let mut b_map: Vec<i32> = Vec::new();
    let mut id_of = |pair: (i32, i32), pairs: &mut Vec<(i32, i32)>| -> i32 {
        *ids.entry(key(pair.0, pair.1)).or_insert_with(|| {
            pairs.push(pair);
            pairs.len() as i32 - 1
        })
    };
    // per outer arc of a state pair, the range of inner arcs with its label
    let mut matches: Vec<(usize, usize, usize)> = Vec::new();
    let cap = budget.limit;
    let mut next = 0usize;
    while next < pairs.len() {
        let (sa, sb) = pairs[next];
        let src = next as i32;
        next += 1;
        let ra = a.arc_range(sa as usize);
        let rb = b.arc_range(sb as usize);
        let (mut ia, mut ib) = (ra.start, rb.start);
        // count this pair's arcs and take them from the budget before storing any
        let (mut ea, mut eb) = (ia, ib);
        if treat_epsilons_specially {
            while ea < ra.end && a.arcs[ea].label == 0 {
                ea += 1;
            }
            while eb < rb.end && b.arcs[eb].label == 0 {
                eb += 1;
            }
        }
        let swapped = ra.end - ea > rb.end - eb;
        let (outer, inner, outer_arcs, inner_arcs) = if swapped {
            (eb..rb.end, ea..ra.end, b.arcs, a.arcs)
        } else {
            (ea..ra.end, eb..rb.end, a.arcs, b.arcs)
        };
        matches.clear();
        let mut count = (ea - ia) + (eb - ib);
        for io in outer {
            let label = outer_arcs[io].label as u32;
            let slice = &inner_arcs[inner.clone()];
            let lo = slice.partition_point(|x| (x.label as u32) < label);
            let hi = lo + slice[lo..].partition_point(|x| x.label as u32 == label);
            if hi > lo {
                matches.push((io, inner.start + lo, inner.start + hi));
                count = count.saturating_add(hi - lo);
            }
        }
        if !budget.take(count) {
            return Err(budget.taken());
        }
        reserve_bounded(&mut arcs, count, cap);
        reserve_bounded(&mut a_map, count, cap);
        reserve_bounded(&mut b_map, count, cap);
        if treat_epsilons_specially {
            while ia < ra.end && a.arcs[ia].label == 0 {
                let arc = a.arcs[ia];
                let dest = id_of((arc.dest_state, sb), &mut pairs);
                arcs.push(Arc::new(src, dest, 0, arc.score));
                a_map.push(ia as i32);
                b_map.push(-1);
                ia += 1;
            }
            while ib < rb.end && b.arcs[ib].label == 0 {
                let arc = b.arcs[ib];
                let dest = id_of((sa, arc.dest_state), &mut pairs);
                arcs.push(Arc::new(src, dest, 0, arc.score));
                a_map.push(-1);
                b_map.push(ib as i32);
                ib += 1;
            }
        }
        debug_assert_eq!((ia, ib), (ea, eb));
        for &(io, first, end) in &matches {
            for (ii, &inner_arc) in inner_arcs[first..end].iter().enumerate() {
                let ii = first + ii;
                let (arc_a, idx_a, arc_b, idx_b) = if swapped {
                    (inner_arc, ii, outer_arcs[io], io)
                } else {
                    (outer_arcs[io], io, inner_arc, ii)
                };
                let dest = id_of((arc_a.dest_state, arc_b.dest_state), &mut pairs);
                arcs.push(Arc::new(src, dest, arc_a.label, arc_a.score + arc_b.score));
                a_map.push(idx_a as i32);
                b_map.push(idx_b as i32);
            }
        }
        splits.push(arcs.len() as i32);
    }
    // the final pair becomes the last state
    let final_state = pairs.len() as i32;
    for arc in &mut arcs {
        if arc.dest_state == FINAL {
            arc.dest_state = final_state;
        }
    }
    splits.push(arcs.len() as i32);
    let built = Built {
        splits,
        arcs,
        arc_map: Vec::new(),
    };
    Ok((built, a_map, b_map))
}

#[inline]
fn key(a: i32, b: i32) -> u64 {
    ((a as u32 as u64) << 32) | b as u32 as u64
}
