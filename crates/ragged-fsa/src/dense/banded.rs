//! Viterbi steps for graphs with uniform entries whose every arc advances by 0, 1 or 2
//! states (CTC graphs: self-loops, the next state, the skip over a blank): each state's
//! best is a maximum over three neighbours, computed for all states of a frame at once with
//! selects instead of arc by arc through index lists, which the compiler vectorizes.
//!
//! **Invariant:** the values are those of the per-destination passes of
//! `intersect_dense` bit for bit. The maxima are taken over values that are never NaN and
//! never `-0` (a Viterbi score is `0`, `-inf`, or a sum `m + e` of such a score and an
//! entry score, which is `-0` only when both are `-0`), so their order does not matter.

use crate::view::FsaView;

/// How far one arc may advance (`dest - src` in `0..WIDTH`).
pub(crate) const WIDTH: usize = 3;

/// The arcs of a banded graph as masks of all ones (`u32::MAX`) or zeros: `out[o][s]` set
/// when an arc leaves `s` for `s + o`, `into[o][d]` when an arc enters `d` from `d - o`.
/// (Words as wide as an `f32`, so that a select is two bitwise operations on a lane.)
pub(crate) struct Banded {
    out: [Vec<u32>; WIDTH],
    pub(crate) into: [Vec<u32>; WIDTH],
}

/// `x` where `mask` is all ones, `-inf` where it is zero.
#[inline]
fn select(mask: u32, x: f32) -> f32 {
    f32::from_bits((x.to_bits() & mask) | (f32::NEG_INFINITY.to_bits() & !mask))
}

impl Banded {
    /// The masks of `graph`, or `None` when some arc goes back or advances by more than
    /// `WIDTH - 1` states.
    pub(crate) fn new(graph: FsaView<'_>) -> Option<Self> {
        Self::build(graph, true)
    }

    /// The masks of `graph` when, besides, no two arcs join the same two states (sums over
    /// arcs, unlike maxima, count parallel arcs, which one bit cannot hold).
    pub(crate) fn without_parallel_arcs(graph: FsaView<'_>) -> Option<Self> {
        Self::build(graph, false)
    }

    fn build(graph: FsaView<'_>, parallel: bool) -> Option<Self> {
        let num_states = graph.num_states();
        let mut out: [Vec<u32>; WIDTH] = std::array::from_fn(|_| vec![0; num_states]);
        let mut into: [Vec<u32>; WIDTH] = std::array::from_fn(|_| vec![0; num_states]);
        for arc in graph.arcs {
            let (s, d) = (arc.src_state as usize, arc.dest_state as usize);
            let o = d.checked_sub(s).filter(|&o| o < WIDTH)?;
            if !parallel && out[o][s] != 0 {
                return None;
            }
            out[o][s] = u32::MAX;
            into[o][d] = u32::MAX;
        }
        Some(Self { out, into })
    }

    /// One backward step: `cur[s]` is the largest `reach[d]` over the arcs `s -> d`
    /// (`-inf` for a state without arcs). `reach` has `WIDTH - 1` entries past the states,
    /// read only through masks that are false there; its values are never NaN.
    #[inline]
    pub(crate) fn backward_step(&self, reach: &[f32], cur: &mut [f32]) {
        let n = cur.len();
        let (r0, r1, r2) = (&reach[..n], &reach[1..n + 1], &reach[2..n + 2]);
        let (m0, m1, m2) = (&self.out[0][..n], &self.out[1][..n], &self.out[2][..n]);
        for i in 0..n {
            let (a, b, c) = (
                select(m0[i], r0[i]),
                select(m1[i], r1[i]),
                select(m2[i], r2[i]),
            );
            let ab = if b > a { b } else { a };
            cur[i] = if c > ab { c } else { ab };
        }
    }

    /// One forward step over the destinations `lo..hi`: `next[d] = max(prev[d - o] over
    /// the arcs into d) + entry[d]`, `-inf` where that is `-inf` or NaN. `prev` is the
    /// previous frame shifted by `WIDTH - 1` (`prev[d + WIDTH - 1]` is state `d`, the first
    /// `WIDTH - 1` entries `-inf`); its values are never NaN.
    #[inline]
    pub(crate) fn forward_step(
        &self,
        prev: &[f32],
        entry: &[f32],
        next: &mut [f32],
        lo: usize,
        hi: usize,
    ) {
        // prev[d + 2 - o] is state d - o
        let (p0, p1, p2) = (&prev[lo + 2..hi + 2], &prev[lo + 1..hi + 1], &prev[lo..hi]);
        let (m0, m1, m2) = (
            &self.into[0][lo..hi],
            &self.into[1][lo..hi],
            &self.into[2][lo..hi],
        );
        let (e, out) = (&entry[lo..hi], &mut next[lo..hi]);
        for i in 0..out.len() {
            let (a, b, c) = (
                select(m0[i], p0[i]),
                select(m1[i], p1[i]),
                select(m2[i], p2[i]),
            );
            let ab = if b > a { b } else { a };
            let m = if c > ab { c } else { ab };
            let v = m + e[i];
            out[i] = if v > f32::NEG_INFINITY {
                v
            } else {
                f32::NEG_INFINITY
            };
        }
    }
}
