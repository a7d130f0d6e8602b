//! Valmari and Lehtinen's partition refinement for deterministic automata with partial
//! transition functions: the fallback of minimize when its signature hashes collide.

use super::Moves;

/// A partition of `0..n` into sets, each set a range of `elems`, refined by marking
/// elements and then splitting every set that has marked and unmarked ones (Valmari and
/// Lehtinen's "refinable partition").
struct Partition {
    /// The elements, each set's contiguous; the marked ones at the front of their set.
    elems: Vec<u32>,
    /// The position of each element in `elems`.
    position: Vec<u32>,
    /// The set of each element.
    set_of: Vec<u32>,
    /// Per set, its range `first..past` in `elems`.
    first: Vec<u32>,
    past: Vec<u32>,
    /// Per set, how many of its elements are marked.
    marked: Vec<u32>,
    /// The sets with marked elements.
    touched: Vec<u32>,
}

impl Partition {
    /// One set of all `n` elements (no set when `n` is 0), in the order of `elems`.
    fn new(elems: Vec<u32>) -> Self {
        let n = elems.len();
        let mut position = vec![0u32; n];
        for (i, &e) in elems.iter().enumerate() {
            position[e as usize] = i as u32;
        }
        let mut partition = Self {
            elems,
            position,
            set_of: vec![0; n],
            first: Vec::new(),
            past: Vec::new(),
            marked: Vec::new(),
            touched: Vec::new(),
        };
        if n > 0 {
            partition.first.push(0);
            partition.past.push(n as u32);
            partition.marked.push(0);
        }
        partition
    }

    fn num_sets(&self) -> usize {
        self.first.len()
    }

    /// The elements of set `s`.
    fn set(&self, s: usize) -> std::ops::Range<usize> {
        self.first[s] as usize..self.past[s] as usize
    }

    /// Marks `e` (once per refinement: an element is never marked twice before `split`).
    #[inline]
    fn mark(&mut self, e: u32) {
        let s = self.set_of[e as usize] as usize;
        let i = self.position[e as usize];
        let j = self.first[s] + self.marked[s];
        if i < j {
            return; // marked already
        }
        let other = self.elems[j as usize];
        self.elems[i as usize] = other;
        self.position[other as usize] = i;
        self.elems[j as usize] = e;
        self.position[e as usize] = j;
        if self.marked[s] == 0 {
            self.touched.push(s as u32);
        }
        self.marked[s] += 1;
    }

    /// Splits every touched set into its marked and unmarked elements; the smaller part
    /// (the marked one on a tie) becomes a new set, numbered after all others.
    fn split(&mut self) {
        while let Some(s) = self.touched.pop() {
            let s = s as usize;
            let j = self.first[s] + self.marked[s];
            self.marked[s] = 0;
            if j == self.past[s] {
                continue;
            }
            let z = self.first.len();
            if j - self.first[s] <= self.past[s] - j {
                self.first.push(self.first[s]);
                self.past.push(j);
                self.first[s] = j;
            } else {
                self.past.push(self.past[s]);
                self.first.push(j);
                self.past[s] = j;
            }
            self.marked.push(0);
            for i in self.set(z) {
                self.set_of[self.elems[i] as usize] = z as u32;
            }
        }
    }
}

/// The class of every state (classes numbered in no particular order) and the number of
/// classes: the coarsest partition that separates the final state `n - 1` from the others
/// and is stable under every symbol (two states of a class either both lack the symbol or
/// both have it, leading to one class). Hopcroft's "process the smaller half" rule over
/// blocks of states and cords of transitions (one cord per symbol at the start): O(m log n)
/// for m arcs and n states, with no hashing.
pub(super) fn coarsest_partition(n: usize, moves: &Moves) -> (Vec<u32>, usize) {
    let m = moves.moves.len();
    // blocks of states: {non-final, final}
    let mut blocks = Partition::new((0..n as u32).collect());
    blocks.mark(n as u32 - 1);
    blocks.split();
    // transition t is moves.moves[t]; its tail from the splits
    let mut tails = vec![0u32; m];
    for state in 0..n {
        tails[moves.splits[state]..moves.splits[state + 1]].fill(state as u32);
    }
    // cords of transitions, one per symbol (a counting sort by symbol)
    let mut cord_first = vec![0u32; moves.num_symbols + 1];
    for &(sym, _) in &moves.moves {
        cord_first[sym as usize + 1] += 1;
    }
    for sym in 0..moves.num_symbols {
        cord_first[sym + 1] += cord_first[sym];
    }
    let mut fill = cord_first.clone();
    let mut by_symbol = vec![0u32; m];
    for (t, &(sym, _)) in moves.moves.iter().enumerate() {
        by_symbol[fill[sym as usize] as usize] = t as u32;
        fill[sym as usize] += 1;
    }
    drop(fill);
    let mut cords = Partition::new(by_symbol);
    if m > 0 {
        cords.first = cord_first[..moves.num_symbols].to_vec();
        cords.past = cord_first[1..].to_vec();
        cords.marked = vec![0; moves.num_symbols];
        for sym in 0..moves.num_symbols {
            for i in cords.set(sym) {
                cords.set_of[cords.elems[i] as usize] = sym as u32;
            }
        }
    }
    drop(cord_first);
    // incoming transitions per state (CSR by head)
    let mut in_first = vec![0u32; n + 1];
    for &(_, dest) in &moves.moves {
        in_first[dest as usize + 1] += 1;
    }
    for state in 0..n {
        in_first[state + 1] += in_first[state];
    }
    let mut fill = in_first.clone();
    let mut incoming = vec![0u32; m];
    for (t, &(_, dest)) in moves.moves.iter().enumerate() {
        incoming[fill[dest as usize] as usize] = t as u32;
        fill[dest as usize] += 1;
    }
    drop(fill);
    // Each cord splits the blocks by "has a transition in the cord"; each block but the
    // first splits the cords by "leads into the block". A set that splits leaves its smaller
    // part as a new set, which is processed later: every transition is looked at
    // O(log n) times.
    let (mut next_block, mut next_cord) = (1usize, 0usize);
    while next_cord < cords.num_sets() {
        for i in cords.set(next_cord) {
            blocks.mark(tails[cords.elems[i] as usize]);
        }
        blocks.split();
        next_cord += 1;
        while next_block < blocks.num_sets() {
            for i in blocks.set(next_block) {
                let state = blocks.elems[i] as usize;
                for &t in &incoming[in_first[state] as usize..in_first[state + 1] as usize] {
                    cords.mark(t);
                }
            }
            cords.split();
            next_block += 1;
        }
    }
    let num_classes = blocks.num_sets();
    (blocks.set_of, num_classes)
}
