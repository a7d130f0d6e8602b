//! The intersection kernel: k2's host `Intersection`, a breadth-first walk over pairs of
//! states of two arc-sorted FSAs.
//!
//! On one thread, or while fewer than two chunks of pairs wait, the walk is the queue itself,
//! a pair at a time. Otherwise the pairs numbered and not yet expanded (the frontier) are
//! matched in parallel, in chunks of [`CHUNK`] pairs, each arc's destination looked up among
//! the pairs numbered before the frontier; then one thread goes through the chunks in
//! order, numbering the new pairs as the queue would have met them. So every thread count
//! gives the queue's numbering, arc for arc.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::{FastBuild, PairMap};
use crate::arc::Arc;
use crate::view::{reserve_bounded, Allowance, ArcBudget, Built, FsaView};

/// State pairs matched by one job; frontiers of at least two chunks are matched in parallel.
const CHUNK: usize = 256;

/// A destination not numbered when its frontier began.
const UNKNOWN: i32 = i32::MIN;

/// Per state of one side with many arcs, its label index (`None` when its labels are too
/// sparse for one).
type Indexes = HashMap<u32, Option<LabelIndex>, FastBuild>;

/// What the matching reads: both inputs and the label indexes built so far.
#[derive(Clone, Copy)]
struct Walk<'a> {
    a: FsaView<'a>,
    b: FsaView<'a>,
    eps: bool,
    a_indexes: &'a Indexes,
    b_indexes: &'a Indexes,
}

/// The arcs of some consecutive state pairs of a frontier, as matched: destinations
/// numbered where the pair was known when the frontier began ([`UNKNOWN`] otherwise, with
/// the pair's key).
#[derive(Default)]
struct Matched {
    /// Per pair matched, its arc count (pairs past the room the frontier had are left to the
    /// numbering pass).
    counts: Vec<usize>,
    arcs: Vec<Arc>,
    /// Per arc, the key of its destination pair.
    keys: Vec<u64>,
    a_map: Vec<i32>,
    b_map: Vec<i32>,
    /// Label indexes to build: (on `a`'s side, state, its range of non-epsilon arcs).
    wanted: Vec<(bool, u32, usize, usize)>,
    /// Per outer arc of a pair, the range of inner arcs with its label (scratch).
    matches: Vec<(usize, usize, usize)>,
}

/// How the arcs of one pair are made: its epsilon arcs on each side, then the matches.
struct Plan {
    count: usize,
    a_arcs: Range<usize>,
    b_arcs: Range<usize>,
    /// Where the non-epsilon arcs of each side start.
    ea: usize,
    eb: usize,
    swapped: bool,
}

impl Walk<'_> {
    /// Matches the arcs of pair `(sa, sb)` into `out.matches` and counts them, storing none;
    /// a state wanting a label index it does not have yet goes to `out.wanted`.
    #[inline(always)]
    fn plan(&self, sa: i32, sb: i32, out: &mut Matched) -> Plan {
        let (a, b) = (self.a, self.b);
        let ra = a.arc_range(sa as usize);
        let rb = b.arc_range(sb as usize);
        let (mut ea, mut eb) = (ra.start, rb.start);
        if self.eps {
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
        out.matches.clear();
        let mut count = (ea - ra.start) + (eb - rb.start);
        let slice = &inner_arcs[inner.clone()];
        // a state with many arcs is looked up through its label index (built once), as a
        // binary search over a large state's arcs misses the cache at every step
        let index = if slice.len() >= INDEXED_ARCS {
            let inner_state = if swapped { sa } else { sb } as u32;
            let indexes = if swapped {
                self.a_indexes
            } else {
                self.b_indexes
            };
            match indexes.get(&inner_state) {
                Some(index) => index.as_ref(),
                None => {
                    out.wanted
                        .push((swapped, inner_state, inner.start, inner.end));
                    None
                }
            }
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
                out.matches.push((io, inner.start + lo, inner.start + hi));
                count = count.saturating_add(hi - lo);
            }
        }
        Plan {
            count,
            a_arcs: ra,
            b_arcs: rb,
            ea,
            eb,
            swapped,
        }
    }

    /// `f(destination key, label, score, arc of a, arc of b)` on each arc `plan` counted
    /// for pair `(sa, sb)`, in order, with `matches` as [`Walk::plan`] left them.
    #[inline(always)]
    fn each_arc(
        &self,
        (sa, sb): (i32, i32),
        plan: &Plan,
        matches: &[(usize, usize, usize)],
        mut f: impl FnMut(u64, i32, f32, i32, i32),
    ) {
        let (a, b) = (self.a, self.b);
        for ia in plan.a_arcs.start..plan.ea {
            let arc = a.arcs[ia];
            f(key(arc.dest_state, sb), 0, arc.score, ia as i32, -1);
        }
        for ib in plan.b_arcs.start..plan.eb {
            let arc = b.arcs[ib];
            f(key(sa, arc.dest_state), 0, arc.score, -1, ib as i32);
        }
        for &(io, first, end) in matches {
            for ii in first..end {
                let (ia, ib) = if plan.swapped { (ii, io) } else { (io, ii) };
                let (arc_a, arc_b) = (a.arcs[ia], b.arcs[ib]);
                f(
                    key(arc_a.dest_state, arc_b.dest_state),
                    arc_a.label,
                    arc_a.score + arc_b.score,
                    ia as i32,
                    ib as i32,
                );
            }
        }
    }

    /// Matches the pairs `first..` (`pairs`) in order into `out`, destinations looked up in
    /// `ids`, while the frontier's `room` lasts (the arcs the budget can still give); the
    /// pairs past it are left to the numbering pass.
    fn match_frontier(
        &self,
        first: usize,
        pairs: &[(i32, i32)],
        ids: &PairMap,
        room: &AtomicUsize,
        out: &mut Matched,
    ) {
        for (j, &pair) in pairs.iter().enumerate() {
            let plan = self.plan(pair.0, pair.1, out);
            let fits = room
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
                    r.checked_sub(plan.count)
                })
                .is_ok();
            if !fits {
                return;
            }
            out.counts.push(plan.count);
            let src = (first + j) as i32;
            let Matched {
                arcs,
                keys,
                a_map,
                b_map,
                matches,
                ..
            } = out;
            self.each_arc(pair, &plan, matches, |k, label, score, ia, ib| {
                let dest = ids.get(&k).copied().unwrap_or(UNKNOWN);
                arcs.push(Arc::new(src, dest, label, score));
                keys.push(k);
                a_map.push(ia);
                b_map.push(ib);
            });
        }
    }
}

/// The pairs numbered so far and the output built so far.
struct Numbering {
    ids: PairMap,
    pairs: Vec<(i32, i32)>,
    splits: Vec<i32>,
    arcs: Vec<Arc>,
    a_map: Vec<i32>,
    b_map: Vec<i32>,
    cap: usize,
}

impl Numbering {
    /// The number of pair `k`, numbering it if it is new.
    #[inline(always)]
    fn id(ids: &mut PairMap, pairs: &mut Vec<(i32, i32)>, k: u64) -> i32 {
        *ids.entry(k).or_insert_with(|| {
            pairs.push(((k >> 32) as u32 as i32, k as u32 as i32));
            pairs.len() as i32 - 1
        })
    }

    /// Room for `n` more arcs in the output vectors (within the budget's limit).
    fn reserve(&mut self, n: usize) {
        reserve_bounded(&mut self.arcs, n, self.cap);
        reserve_bounded(&mut self.a_map, n, self.cap);
        reserve_bounded(&mut self.b_map, n, self.cap);
    }

    /// The queue's step: matches pair `src` and stores its arcs, numbering new destinations
    /// as they are met, after taking its arcs from `budget` (if it refuses, the error is the
    /// count the budget reached).
    fn expand(
        &mut self,
        walk: &Walk<'_>,
        src: usize,
        scratch: &mut Matched,
        budget: &mut Allowance<'_>,
    ) -> Result<(), usize> {
        let pair = self.pairs[src];
        let plan = walk.plan(pair.0, pair.1, scratch);
        if !budget.take(plan.count) {
            return Err(budget.taken());
        }
        self.reserve(plan.count);
        let Self {
            ids,
            pairs,
            arcs,
            a_map,
            b_map,
            ..
        } = self;
        walk.each_arc(pair, &plan, &scratch.matches, |k, label, score, ia, ib| {
            let dest = Self::id(ids, pairs, k);
            arcs.push(Arc::new(src as i32, dest, label, score));
            a_map.push(ia);
            b_map.push(ib);
        });
        self.splits.push(self.arcs.len() as i32);
        Ok(())
    }

    /// Matches the frontier (pairs `next..`) in parallel by chunks, then stores the chunks in
    /// order (the pairs past the frontier's share of the budget one by one); the label
    /// indexes wanted go to `wanted`. Gives the end of the frontier, or the count the budget
    /// reached when it refused.
    #[inline(never)]
    fn frontier(
        &mut self,
        walk: &Walk<'_>,
        next: usize,
        budget: &mut Allowance<'_>,
        scratch: &mut Matched,
        wanted: &mut Vec<(bool, u32, usize, usize)>,
    ) -> Result<usize, usize> {
        let end = self.pairs.len();
        let room = AtomicUsize::new(budget.room());
        let ids = &self.ids;
        let mut chunks: Vec<Matched> = self.pairs[next..end]
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, pairs)| {
                let mut out = Matched::default();
                walk.match_frontier(next + c * CHUNK, pairs, ids, &room, &mut out);
                out
            })
            .collect();
        wanted.clear();
        for (c, matched) in chunks.iter_mut().enumerate() {
            self.commit(matched, budget)?;
            wanted.extend_from_slice(&matched.wanted);
            // the pairs past the frontier's room, one by one
            let first = next + c * CHUNK + matched.counts.len();
            for src in first..(next + (c + 1) * CHUNK).min(end) {
                self.expand(walk, src, scratch, budget)?;
                wanted.append(&mut scratch.wanted);
            }
        }
        Ok(end)
    }

    /// Stores the pairs `matched` holds (the first of a chunk of a frontier on), after taking
    /// each one's arcs from `budget` in order (if it refuses, the error is the count the
    /// budget reached), numbering new destinations in order.
    fn commit(&mut self, matched: &mut Matched, budget: &mut Allowance<'_>) -> Result<(), usize> {
        let mut total = 0usize;
        for &count in &matched.counts {
            if !budget.take(count) {
                return Err(budget.taken());
            }
            total += count;
        }
        for (arc, &k) in matched.arcs.iter_mut().zip(&matched.keys) {
            if arc.dest_state == UNKNOWN {
                arc.dest_state = Self::id(&mut self.ids, &mut self.pairs, k);
            }
        }
        self.reserve(total);
        self.arcs.extend_from_slice(&matched.arcs);
        self.a_map.extend_from_slice(&matched.a_map);
        self.b_map.extend_from_slice(&matched.b_map);
        let mut end = *self.splits.last().expect("splits start at 0");
        for &count in &matched.counts {
            end += count as i32;
            self.splits.push(end);
        }
        Ok(())
    }
}

/// Builds the label indexes in `wanted` that are not built yet.
fn build_indexes(
    wanted: &[(bool, u32, usize, usize)],
    a: FsaView<'_>,
    b: FsaView<'_>,
    a_indexes: &mut Indexes,
    b_indexes: &mut Indexes,
) {
    for &(on_a, state, first, last) in wanted {
        let (indexes, arcs) = if on_a {
            (&mut *a_indexes, a.arcs)
        } else {
            (&mut *b_indexes, b.arcs)
        };
        indexes
            .entry(state)
            .or_insert_with(|| LabelIndex::new(&arcs[first..last]));
    }
}

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
    ids.insert(key(0, 0), 0);
    ids.entry(key(final_pair.0, final_pair.1)).or_insert(FINAL);
    let mut num = Numbering {
        ids,
        pairs: vec![(0, 0)],
        splits: vec![0],
        arcs: Vec::new(),
        a_map: Vec::new(),
        b_map: Vec::new(),
        cap: budget.limit,
    };
    let mut a_indexes = Indexes::default();
    let mut b_indexes = Indexes::default();
    let threads = rayon::current_num_threads();
    let mut scratch = Matched::default();
    let mut wanted = Vec::new();
    let mut allowance = Allowance::new(budget);
    let mut next = 0usize;
    while next < num.pairs.len() {
        let walk = Walk {
            a,
            b,
            eps: treat_epsilons_specially,
            a_indexes: &a_indexes,
            b_indexes: &b_indexes,
        };
        if threads > 1 && num.pairs.len() - next >= 2 * CHUNK {
            // a wide frontier (every pair numbered and not expanded), matched in parallel
            // against the pairs numbered before it
            let end = num.frontier(&walk, next, &mut allowance, &mut scratch, &mut wanted)?;
            build_indexes(&wanted, a, b, &mut a_indexes, &mut b_indexes);
            next = end;
        } else {
            // the queue's own step (a label index is built when first wanted)
            num.expand(&walk, next, &mut scratch, &mut allowance)?;
            if !scratch.wanted.is_empty() {
                build_indexes(&scratch.wanted, a, b, &mut a_indexes, &mut b_indexes);
                scratch.wanted.clear();
            }
            next += 1;
        }
    }
    // the final pair becomes the last state
    let Numbering {
        pairs,
        mut splits,
        mut arcs,
        a_map,
        b_map,
        ..
    } = num;
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
    use crate::algebra::on_threads;

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

    /// The size of the largest frontier of the queue's walk (pairs at one distance from the
    /// start), from the numbering the definition gives.
    fn largest_frontier(built: &Built) -> usize {
        let n = built.splits.len() - 1;
        let mut depth = vec![usize::MAX; n];
        depth[0] = 0;
        for s in 0..n {
            let arcs = &built.arcs[built.splits[s] as usize..built.splits[s + 1] as usize];
            for arc in arcs {
                let d = arc.dest_state as usize;
                if depth[d] == usize::MAX {
                    depth[d] = depth[s] + 1;
                }
            }
        }
        let mut sizes = std::collections::HashMap::new();
        for d in depth.into_iter().filter(|&d| d != usize::MAX) {
            *sizes.entry(d).or_insert(0usize) += 1;
        }
        sizes.into_values().max().unwrap_or(0)
    }

    #[test]
    fn intersect_on_two_threads_numbers_as_the_queue_does() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut widest = 0;
        for case in 0..6 {
            // wide frontiers: many states, many arcs, few labels; one side with states of
            // many arcs now and then, for the label indexes built between frontiers
            let a = random_fsa(&mut seed, 150, 6, 5);
            let b = if case % 2 == 0 {
                random_fsa(&mut seed, 120, 8, 6)
            } else {
                random_fsa(&mut seed, 40, 2 * INDEXED_ARCS, 6)
            };
            for eps in [true, false] {
                let want = naive(a.view(), b.view(), eps);
                widest = widest.max(largest_frontier(&want.0));
                let got = on_threads(2, || {
                    intersect(a.view(), b.view(), eps, &ArcBudget::new(usize::MAX)).unwrap()
                });
                assert_eq!(got, want, "case {case}, eps {eps}");
            }
        }
        assert!(widest >= 4 * CHUNK, "{widest}");
    }

    #[test]
    fn intersect_stops_at_the_same_count_on_one_and_two_threads() {
        let mut seed = 0x0123_4567_89ab_cdef_u64;
        // the first draw whose start pairs lead far (a start state may have no arcs)
        let (a, b, want) = loop {
            let a = random_fsa(&mut seed, 150, 6, 5);
            let b = random_fsa(&mut seed, 120, 8, 6);
            let want = naive(a.view(), b.view(), true).0;
            if want.arcs.len() > 20_000 {
                break (a, b, want);
            }
        };
        let total = want.arcs.len();
        // taken pair by pair in the queue's order: the count at the first pair past the
        // limit
        let stops_at = |limit: usize| {
            want.splits[1..]
                .iter()
                .map(|&x| x as usize)
                .find(|&taken| taken > limit)
        };
        // limits inside the wide frontiers, where the room of a frontier runs out, and near
        // the limits where the block taken ahead no longer fits
        let mut ended = 0;
        let near = [
            1,
            Allowance::BLOCK - 1,
            Allowance::BLOCK,
            Allowance::BLOCK + 1,
        ];
        let limits = (0..40)
            .map(|k| k * total / 37)
            .chain(near.iter().flat_map(|&d| [total - d, d]));
        for limit in limits {
            let run = |threads| {
                on_threads(threads, || {
                    intersect(a.view(), b.view(), true, &ArcBudget::new(limit))
                })
            };
            let (one, two) = (run(1), run(2));
            match (&one, &two) {
                (Err(x), Err(y)) => {
                    assert_eq!(x, y, "limit {limit}");
                    assert_eq!(Some(*x), stops_at(limit), "limit {limit}");
                }
                (Ok(x), Ok(y)) => {
                    assert_eq!(x, y, "limit {limit}");
                    ended += 1;
                }
                _ => panic!("limit {limit}: {:?} against {:?}", one.is_ok(), two.is_ok()),
            }
        }
        assert_eq!(ended, 3, "limits at or past the total");
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
