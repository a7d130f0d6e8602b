//! The intersection kernel: k2's host `Intersection`, a breadth-first walk over pairs of
//! states of two arc-sorted FSAs.

use std::collections::HashMap;

use super::{FastBuild, PairMap};
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
    // per state with many non-epsilon arcs, its label index (`None` when its labels are
    // too sparse for one)
    let mut a_indexes: HashMap<u32, Option<LabelIndex>, FastBuild> = HashMap::default();
    let mut b_indexes: HashMap<u32, Option<LabelIndex>, FastBuild> = HashMap::default();
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
        let slice = &inner_arcs[inner.clone()];
        // a state with many arcs is looked up through its label index (built once), as a
        // binary search over a large state's arcs misses the cache at every step
        let index = if slice.len() >= INDEXED_ARCS {
            let inner_state = if swapped { sa } else { sb } as u32;
            let indexes = if swapped {
                &mut a_indexes
            } else {
                &mut b_indexes
            };
            indexes
                .entry(inner_state)
                .or_insert_with(|| LabelIndex::new(slice))
                .as_ref()
        } else {
            None
        };
        // outer labels rise, so each search starts where the last one ended
        let mut from = 0usize;
        for io in outer {
            let label = outer_arcs[io].label as u32;
            let lo = match index {
                Some(index) => index.first_at_least(label),
                None => from + slice[from..].partition_point(|x| (x.label as u32) < label),
            };
            from = lo;
            // the run of equal labels is as long as the arcs it makes
            let hi = lo
                + slice[lo..]
                    .iter()
                    .take_while(|x| x.label as u32 == label)
                    .count();
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

/// States with at least this many arcs to match against get a [`LabelIndex`].
const INDEXED_ARCS: usize = 64;

/// For the arcs of one state (sorted by label as `u32`), the position of the first arc with
/// a label at least `l`, for every `l` from the lowest label to the highest below `-1`
/// (`u32::MAX`, the final arcs, which sort last): a lookup in place of a binary search.
struct LabelIndex {
    /// The lowest label.
    min: u32,
    /// `first[l - min]` for `l` in `min..=max`.
    first: Vec<u32>,
    /// Where the arcs labelled `-1` start (the number of the other arcs).
    end: u32,
}

impl LabelIndex {
    /// The index of `arcs`, or `None` when their labels span more than four times their
    /// count (plus 64) values, which would make the table large and mostly empty.
    fn new(arcs: &[Arc]) -> Option<Self> {
        let end = arcs.partition_point(|x| (x.label as u32) < u32::MAX);
        if end == 0 {
            return None;
        }
        let min = arcs[0].label as u32;
        let max = arcs[end - 1].label as u32;
        let span = (max - min) as usize + 1;
        if span > end.checked_mul(4)?.checked_add(64)? {
            return None;
        }
        let mut first = vec![0u32; span];
        let mut pos = 0usize;
        for (offset, slot) in first.iter_mut().enumerate() {
            let label = min + offset as u32;
            while (arcs[pos].label as u32) < label {
                pos += 1;
            }
            *slot = pos as u32;
        }
        Some(Self {
            min,
            first,
            end: end as u32,
        })
    }

    /// The position of the first arc whose label (as `u32`) is at least `label`.
    #[inline]
    fn first_at_least(&self, label: u32) -> usize {
        if label < self.min {
            0
        } else {
            match self.first.get((label - self.min) as usize) {
                Some(&pos) => pos as usize,
                None => self.end as usize,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_index_finds_what_a_binary_search_finds() {
        // labels with gaps, repeats, an epsilon-free start above 0 and final arcs (-1)
        let labels = [3, 3, 4, 7, 7, 7, 9, 12, -1, -1];
        let arcs: Vec<Arc> = labels.iter().map(|&l| Arc::new(0, 1, l, 0.0)).collect();
        let index = LabelIndex::new(&arcs).expect("dense enough");
        for label in [
            0u32,
            2,
            3,
            4,
            5,
            7,
            8,
            9,
            10,
            12,
            13,
            1000,
            u32::MAX - 1,
            u32::MAX,
        ] {
            let want = arcs.partition_point(|x| (x.label as u32) < label);
            assert_eq!(index.first_at_least(label), want, "label {label}");
        }
        // only final arcs, or labels too sparse: no index
        assert!(LabelIndex::new(&arcs[8..]).is_none());
        let sparse = [Arc::new(0, 1, 1, 0.0), Arc::new(0, 1, 1_000_000, 0.0)];
        assert!(LabelIndex::new(&sparse).is_none());
    }

    /// The intersection by its definition: the same walk and numbering, every arc of one
    /// side compared with every arc of the other.
    fn naive(a: FsaView<'_>, b: FsaView<'_>, eps: bool) -> (Built, Vec<i32>, Vec<i32>) {
        let final_pair = (a.num_states() as i32 - 1, b.num_states() as i32 - 1);
        let mut ids = std::collections::HashMap::new();
        ids.insert((0, 0), 0);
        ids.entry(final_pair).or_insert(-1);
        let mut pairs = vec![(0, 0)];
        let (mut splits, mut arcs, mut a_map, mut b_map) = (vec![0], vec![], vec![], vec![]);
        let mut next = 0;
        while next < pairs.len() {
            let (sa, sb) = pairs[next];
            let src = next as i32;
            next += 1;
            let mut out: Vec<(i32, i32, i32, f32, i32, i32)> = Vec::new();
            let a_arcs: Vec<usize> = a.arc_range(sa as usize).collect();
            let b_arcs: Vec<usize> = b.arc_range(sb as usize).collect();
            let is_eps = |arc: &Arc| eps && arc.label == 0;
            for &i in a_arcs.iter().filter(|&&i| is_eps(&a.arcs[i])) {
                out.push((a.arcs[i].dest_state, sb, 0, a.arcs[i].score, i as i32, -1));
            }
            for &i in b_arcs.iter().filter(|&&i| is_eps(&b.arcs[i])) {
                out.push((sa, b.arcs[i].dest_state, 0, b.arcs[i].score, -1, i as i32));
            }
            let a_rest: Vec<usize> = a_arcs
                .into_iter()
                .filter(|&i| !is_eps(&a.arcs[i]))
                .collect();
            let b_rest: Vec<usize> = b_arcs
                .into_iter()
                .filter(|&i| !is_eps(&b.arcs[i]))
                .collect();
            let swapped = a_rest.len() > b_rest.len();
            let (outer, inner) = if swapped {
                (&b_rest, &a_rest)
            } else {
                (&a_rest, &b_rest)
            };
            for &o in outer {
                for &i in inner {
                    let (ia, ib) = if swapped { (i, o) } else { (o, i) };
                    let (x, y) = (a.arcs[ia], b.arcs[ib]);
                    if x.label == y.label {
                        out.push((
                            x.dest_state,
                            y.dest_state,
                            x.label,
                            x.score + y.score,
                            ia as i32,
                            ib as i32,
                        ));
                    }
                }
            }
            for (da, db, label, score, ia, ib) in out {
                let dest = *ids.entry((da, db)).or_insert_with(|| {
                    pairs.push((da, db));
                    pairs.len() as i32 - 1
                });
                arcs.push(Arc::new(src, dest, label, score));
                a_map.push(ia);
                b_map.push(ib);
            }
            splits.push(arcs.len() as i32);
        }
        let final_state = pairs.len() as i32;
        for arc in &mut arcs {
            if arc.dest_state == -1 {
                arc.dest_state = final_state;
            }
        }
        splits.push(arcs.len() as i32);
        (
            Built {
                splits,
                arcs,
                arc_map: Vec::new(),
            },
            a_map,
            b_map,
        )
    }

    /// A random arc-sorted FSA of `n` states whose states have up to `max_arcs` arcs with
    /// labels below `num_labels` (0 among them), some with sparse labels, some with final
    /// arcs.
    fn random_fsa(seed: &mut u64, n: usize, max_arcs: usize, num_labels: i32) -> Built {
        let mut next = |bound: usize| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed % bound as u64) as usize
        };
        let mut arcs = Vec::new();
        for src in 0..n - 1 {
            let sparse = next(4) == 0;
            for _ in 0..next(max_arcs + 1) {
                let label = if sparse {
                    next(3) as i32 * 100_000 + next(3) as i32
                } else {
                    next(num_labels as usize) as i32
                };
                let dest = 1 + next(n - 1);
                arcs.push(Arc::new(src as i32, dest as i32, label, next(8) as f32));
            }
            if next(3) == 0 {
                arcs.push(Arc::new(src as i32, n as i32 - 1, -1, 0.5));
            }
        }
        arcs.sort_by_key(|x| (x.src_state, x.label as u32, x.dest_state));
        Built::from_sorted_arcs(n, arcs, Vec::new())
    }

    #[test]
    fn intersect_matches_the_definition_on_states_with_many_arcs() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut indexed = 0;
        for case in 0..300 {
            // one side with few arcs per state, the other with many (either way round)
            let small = random_fsa(&mut seed, 6, 4, 12);
            let big = random_fsa(&mut seed, 5, 3 * INDEXED_ARCS, 40);
            let (a, b) = if case % 2 == 0 {
                (&small, &big)
            } else {
                (&big, &small)
            };
            for eps in [true, false] {
                let budget = ArcBudget::new(usize::MAX);
                let got = intersect(a.view(), b.view(), eps, &budget).unwrap();
                assert_eq!(
                    got,
                    naive(a.view(), b.view(), eps),
                    "case {case}, eps {eps}"
                );
            }
            indexed += usize::from(
                big.splits
                    .windows(2)
                    .any(|w| w[1] - w[0] >= INDEXED_ARCS as i32),
            );
        }
        assert!(indexed > 250, "{indexed}");
    }
}
