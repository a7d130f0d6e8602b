//! The arc type shared by every FSA: `Arc { src_state, dest_state, label, score }`.

use std::cmp::Ordering;
use std::fmt;

/// One arc of an FSA, laid out exactly as k2's `Arc` (16 bytes, C layout).
///
/// States are numbered within their own FSA (k2's idx1), also inside an [`FsaVec`](crate::FsaVec).
/// The label `-1` is reserved for arcs entering the final state; `0` is epsilon. The score is a
/// log-probability: bigger is better.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Arc {
    /// The state this arc leaves.
    pub src_state: i32,
    /// The state this arc enters.
    pub dest_state: i32,
    /// The label (`0` epsilon, `-1` only on arcs entering the final state).
    pub label: i32,
    /// The score (a log-probability; OpenFst's cost is its negation).
    pub score: f32,
}

impl Arc {
    /// An arc from its four fields.
    pub const fn new(src_state: i32, dest_state: i32, label: i32, score: f32) -> Self {
        Self {
            src_state,
            dest_state,
            label,
            score,
        }
    }

    /// The key k2 sorts the arcs of one state by: the label as `u32` (so epsilon `0` comes
    /// first and the final-arc label `-1` last), then the destination state.
    #[inline]
    pub fn sort_key(&self) -> (u32, i32) {
        (self.label as u32, self.dest_state)
    }

    /// k2's arc order (see [`Arc::sort_key`]); scores and source states do not take part.
    #[inline]
    pub fn k2_cmp(&self, other: &Arc) -> Ordering {
        self.sort_key().cmp(&other.sort_key())
    }
}

impl fmt::Display for Arc {
    /// k2's text form of an acceptor arc: `src dest label score`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {}",
            self.src_state, self.dest_state, self.label, self.score
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_is_16_bytes_with_c_layout() {
        assert_eq!(std::mem::size_of::<Arc>(), 16);
        assert_eq!(std::mem::align_of::<Arc>(), 4);
        let arc = Arc::new(1, 2, 3, 0.5);
        let base = &arc as *const Arc as usize;
        assert_eq!(&arc.src_state as *const i32 as usize - base, 0);
        assert_eq!(&arc.dest_state as *const i32 as usize - base, 4);
        assert_eq!(&arc.label as *const i32 as usize - base, 8);
        assert_eq!(&arc.score as *const f32 as usize - base, 12);
    }

    #[track_caller]
    fn check(a: (i32, i32), b: (i32, i32), expected: Ordering) {
        let x = Arc::new(0, a.1, a.0, 1.0);
        let y = Arc::new(5, b.1, b.0, -3.0);
        assert_eq!(x.k2_cmp(&y), expected, "label/dest {a:?} vs {b:?}");
    }

    #[test]
    fn k2_order_compares_labels_as_unsigned_then_dest() {
        check((0, 9), (1, 0), Ordering::Less); // epsilon first
        check((-1, 0), (1000, 9), Ordering::Greater); // -1 last
        check((-1, 3), (-1, 3), Ordering::Equal);
        check((5, 2), (5, 3), Ordering::Less); // then dest_state
        check((5, 4), (5, 3), Ordering::Greater);
        check((i32::MAX, 0), (-1, 0), Ordering::Less);
    }

    #[test]
    fn display_is_k2_text() {
        assert_eq!(Arc::new(0, 1, 10, 0.1).to_string(), "0 1 10 0.1");
        assert_eq!(Arc::new(1, 3, -1, -2.5).to_string(), "1 3 -1 -2.5");
    }
}
