//! A borrowed view of one FSA (its state row-splits and arcs) and the plain output every
//! per-FSA algorithm builds; the `Fsa`/`FsaVec` wrappers turn these into ragged arrays.

use std::ops::Range;

use crate::arc::Arc;

/// One FSA: `splits` has `num_states + 1` entries (absolute offsets, maybe not starting at
/// 0 when the FSA lives inside an `FsaVec`), `arcs` are this FSA's arcs only.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FsaView<'a> {
    pub(crate) splits: &'a [i32],
    pub(crate) arcs: &'a [Arc],
}

impl<'a> FsaView<'a> {
    pub(crate) fn new(splits: &'a [i32], arcs: &'a [Arc]) -> Self {
        debug_assert!(!splits.is_empty());
        Self { splits, arcs }
    }

    /// The number of states.
    #[inline]
    pub(crate) fn num_states(&self) -> usize {
        self.splits.len() - 1
    }

    /// The final state (the highest-numbered), or `None` for an empty FSA.
    #[inline]
    pub(crate) fn final_state(&self) -> Option<usize> {
        self.num_states().checked_sub(1)
    }

    /// The local arc indices of the arcs leaving `state`.
    #[inline]
    pub(crate) fn arc_range(&self, state: usize) -> Range<usize> {
        let base = self.splits[0];
        (self.splits[state] - base) as usize..(self.splits[state + 1] - base) as usize
    }

    /// The arcs leaving `state`.
    #[inline]
    pub(crate) fn state_arcs(&self, state: usize) -> &'a [Arc] {
        &self.arcs[self.arc_range(state)]
    }
}

/// The output of a per-FSA algorithm: local row-splits (starting at 0), arcs, and for each
/// new arc the local index of the input arc it came from (`-1` for a new arc).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Built {
    pub(crate) splits: Vec<i32>,
    pub(crate) arcs: Vec<Arc>,
    pub(crate) arc_map: Vec<i32>,
}

impl Built {
    /// An FSA with no states.
    pub(crate) fn empty() -> Self {
        Self {
            splits: vec![0],
            arcs: Vec::new(),
            arc_map: Vec::new(),
        }
    }

    /// Builds the row-splits from arcs already grouped by non-decreasing `src_state`.
    pub(crate) fn from_sorted_arcs(num_states: usize, arcs: Vec<Arc>, arc_map: Vec<i32>) -> Self {
        let mut splits = vec![0i32; num_states + 1];
        for arc in &arcs {
            splits[arc.src_state as usize + 1] += 1;
        }
        for i in 0..num_states {
            splits[i + 1] += splits[i];
        }
        debug_assert!(arcs.windows(2).all(|w| w[0].src_state <= w[1].src_state));
        Self {
            splits,
            arcs,
            arc_map,
        }
    }

    /// A copy of the input as it is (identity arc map).
    #[cfg(test)]
    pub(crate) fn copy_of(view: FsaView<'_>) -> Self {
        let base = view.splits[0];
        Self {
            splits: view.splits.iter().map(|&s| s - base).collect(),
            arcs: view.arcs.to_vec(),
            arc_map: (0..view.arcs.len() as i32).collect(),
        }
    }

    #[cfg(test)]
    pub(crate) fn view(&self) -> FsaView<'_> {
        FsaView::new(&self.splits, &self.arcs)
    }
}

/// The most arcs one call of `intersect`, `compose`, `intersect_dense` or
/// `intersect_dense_pruned` may produce (all FSAs of the call together), and the default of
/// `CtcLossConfig::max_lattice_arcs` and `MmiLossConfig::max_lattice_arcs`: 2^25, about
/// 1.7 GiB at the roughly 50 bytes an arc takes at the peak (arc, arc maps, the copy into
/// the result). The count is checked before the arcs are stored; past it the call returns
/// [`Error::OutputLimit`](crate::Error::OutputLimit) naming the count and the bound.
pub const MAX_OUTPUT_ARCS: usize = 1 << 25;

/// A bound on the arcs the parts of one call produce together, shared across threads: each
/// part takes what it is about to store before storing it.
#[derive(Debug)]
pub(crate) struct ArcBudget {
    taken: std::sync::atomic::AtomicUsize,
    pub(crate) limit: usize,
}

impl ArcBudget {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            taken: std::sync::atomic::AtomicUsize::new(0),
            limit,
        }
    }

    /// Takes `n` arcs: whether the total taken, `n` included, is within the limit. The count
    /// is added even when it is not (saturating), so that [`ArcBudget::taken`] ends as the sum
    /// of what every part asked for.
    pub(crate) fn take(&self, n: usize) -> bool {
        use std::sync::atomic::Ordering;
        let previous = self
            .taken
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                Some(t.saturating_add(n))
            })
            .unwrap_or(usize::MAX);
        previous.saturating_add(n) <= self.limit
    }

    /// The arcs taken so far (saturating).
    pub(crate) fn taken(&self) -> usize {
        self.taken.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Takes `n` arcs only if the total stays within the limit: whether it did.
    fn take_if_within(&self, n: usize) -> bool {
        use std::sync::atomic::Ordering;
        self.taken
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                t.checked_add(n).filter(|&total| total <= self.limit)
            })
            .is_ok()
    }

    /// Returns `n` arcs taken and not used.
    fn give_back(&self, n: usize) {
        self.taken
            .fetch_sub(n, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Arcs taken from an [`ArcBudget`] a block ahead, so that a walk that takes a few arcs a
/// step does not update the shared counter (a locked instruction, which waits for every
/// store before it) at every step. Within [`Allowance::BLOCK`] arcs of the limit it takes
/// exactly what is asked, so the budget's count on failure is the one of taking step by
/// step. What is left goes back when it is dropped. (Parts sharing one budget: an
/// allowance one part holds can refuse another part's arcs within a block of the limit.)
pub(crate) struct Allowance<'a> {
    budget: &'a ArcBudget,
    left: usize,
}

impl<'a> Allowance<'a> {
    /// The arcs taken ahead at a time.
    pub(crate) const BLOCK: usize = 4096;

    pub(crate) fn new(budget: &'a ArcBudget) -> Self {
        Self { budget, left: 0 }
    }

    /// As [`ArcBudget::take`].
    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> bool {
        if n <= self.left {
            self.left -= n;
            return true;
        }
        let more = (n - self.left).saturating_add(Self::BLOCK);
        if self.budget.take_if_within(more) {
            self.left = self.left + more - n;
            return true;
        }
        // near the limit: step by step
        self.budget.give_back(std::mem::take(&mut self.left));
        self.budget.take(n)
    }

    /// As [`ArcBudget::taken`]: after a refusal, the count taking step by step reaches
    /// (nothing is held ahead then).
    pub(crate) fn taken(&self) -> usize {
        self.budget.taken()
    }

    /// The arcs this allowance can still take: its own and what the budget has left.
    pub(crate) fn room(&self) -> usize {
        (self.budget.limit.saturating_sub(self.budget.taken())).saturating_add(self.left)
    }
}

impl Drop for Allowance<'_> {
    fn drop(&mut self) {
        self.budget.give_back(self.left);
    }
}

/// Reserves room for `additional` more elements in `v`, growing as `Vec` does (doubling) but
/// never past `cap` elements in all (when `len + additional` is within it), so that a
/// bounded count of elements also bounds the memory.
pub(crate) fn reserve_bounded<T>(v: &mut Vec<T>, additional: usize, cap: usize) {
    let needed = v.len().saturating_add(additional);
    if needed <= v.capacity() {
        return;
    }
    let target = v
        .capacity()
        .saturating_mul(2)
        .max(needed)
        .min(cap.max(needed));
    v.reserve_exact(target - v.len());
}
