//! k2's FSA properties bitmask (`Valid`, `Nonempty`, `TopSorted`, ...), computed per FSA and
//! combined with AND over an `FsaVec`.

use std::fmt;
use std::ops::{BitAnd, BitOr};

use crate::kernels::structure::{accessible_coaccessible, is_arc_sorted};
use crate::view::FsaView;

/// A set of k2 FSA properties (the bits of k2's `FsaProperties`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Properties(u32);

impl Properties {
    /// Start state 0, one final state (the last) without leaving arcs, `-1` exactly on the
    /// arcs entering it, arcs stored under their source state, destinations in range.
    pub const VALID: Properties = Properties(0x01);
    /// At least one state.
    pub const NONEMPTY: Properties = Properties(0x02);
    /// Every arc goes to a state numbered no lower than its source.
    pub const TOPSORTED: Properties = Properties(0x04);
    /// Every arc goes to a higher-numbered state (no self-loops, hence no cycles).
    pub const TOPSORTED_AND_ACYCLIC: Properties = Properties(0x08);
    /// The arcs of every state are in k2's order (label as `u32`, then destination).
    pub const ARC_SORTED: Properties = Properties(0x10);
    /// Arc-sorted with no two arcs of a state sharing a label.
    pub const ARC_SORTED_AND_DETERMINISTIC: Properties = Properties(0x20);
    /// No arc labelled 0.
    pub const EPSILON_FREE: Properties = Properties(0x40);
    /// Every state is reachable from the start state.
    pub const ACCESSIBLE: Properties = Properties(0x80);
    /// Every state can reach the final state.
    pub const COACCESSIBLE: Properties = Properties(0x100);
    /// All the bits above.
    pub const ALL: Properties = Properties(0x1ff);

    const NAMES: [(Properties, &'static str); 9] = [
        (Self::VALID, "Valid"),
        (Self::NONEMPTY, "Nonempty"),
        (Self::TOPSORTED, "TopSorted"),
        (Self::TOPSORTED_AND_ACYCLIC, "TopSortedAndAcyclic"),
        (Self::ARC_SORTED, "ArcSorted"),
        (
            Self::ARC_SORTED_AND_DETERMINISTIC,
            "ArcSortedAndDeterministic",
        ),
        (Self::EPSILON_FREE, "EpsilonFree"),
        (Self::ACCESSIBLE, "MaybeAccessible"),
        (Self::COACCESSIBLE, "MaybeCoaccessible"),
    ];

    /// The raw bits, equal to k2's.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// From raw bits (unknown bits are dropped).
    pub const fn from_bits(bits: u32) -> Self {
        Properties(bits & Self::ALL.0)
    }

    /// The empty set.
    pub const fn empty() -> Self {
        Properties(0)
    }

    /// Whether every property in `other` is set.
    pub const fn contains(self, other: Properties) -> bool {
        self.0 & other.0 == other.0
    }

    fn set_if(&mut self, flag: Properties, cond: bool) {
        if cond {
            self.0 |= flag.0;
        }
    }
}

impl BitOr for Properties {
    type Output = Properties;
    fn bitor(self, rhs: Properties) -> Properties {
        Properties(self.0 | rhs.0)
    }
}

impl BitAnd for Properties {
    type Output = Properties;
    fn bitand(self, rhs: Properties) -> Properties {
        Properties(self.0 & rhs.0)
    }
}

impl fmt::Display for Properties {
    /// k2's `FsaPropertiesAsString`: the names of the set bits joined by `|`, e.g.
    /// `"Valid|Nonempty|TopSorted"`; `""` when none is set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (flag, name) in Self::NAMES {
            if self.contains(flag) {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// The properties of one FSA.
pub(crate) fn of_view(view: FsaView<'_>) -> Properties {
    let n = view.num_states();
    if n == 0 {
        return Properties(Properties::ALL.0 & !Properties::NONEMPTY.0);
    }
    let final_state = (n - 1) as i32;
    let mut props = Properties::NONEMPTY;
    let mut valid = n > 1;
    let mut topsorted = true;
    let mut acyclic = true;
    let mut deterministic = true;
    let mut epsilon_free = true;
    for state in 0..n {
        let arcs = view.state_arcs(state);
        for (k, arc) in arcs.iter().enumerate() {
            if arc.src_state != state as i32 || arc.dest_state < 0 || arc.dest_state > final_state {
                // structural breakage: nothing else can be trusted
                return Properties::NONEMPTY;
            }
            if (arc.label == -1) != (arc.dest_state == final_state) {
                valid = false;
            }
            topsorted &= arc.dest_state >= arc.src_state;
            acyclic &= arc.dest_state > arc.src_state;
            epsilon_free &= arc.label != 0;
            if k > 0 && arcs[k - 1].label == arc.label {
                deterministic = false;
            }
        }
    }
    if !view.state_arcs(n - 1).is_empty() {
        valid = false;
    }
    let arc_sorted = is_arc_sorted(view);
    let (acc, coacc) = accessible_coaccessible(view);
    props.set_if(Properties::VALID, valid);
    props.set_if(Properties::TOPSORTED, topsorted);
    props.set_if(Properties::TOPSORTED_AND_ACYCLIC, topsorted && acyclic);
    props.set_if(Properties::ARC_SORTED, arc_sorted);
    props.set_if(
        Properties::ARC_SORTED_AND_DETERMINISTIC,
        arc_sorted && deterministic,
    );
    props.set_if(Properties::EPSILON_FREE, epsilon_free);
    props.set_if(Properties::ACCESSIBLE, acc.iter().all(|&x| x));
    props.set_if(Properties::COACCESSIBLE, coacc.iter().all(|&x| x));
    props
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arc::Arc;
    use crate::view::Built;

    fn props(num_states: usize, arcs: &[(i32, i32, i32)]) -> Properties {
        let arcs: Vec<Arc> = arcs
            .iter()
            .map(|&(s, d, l)| Arc::new(s, d, l, 0.0))
            .collect();
        of_view(Built::from_sorted_arcs(num_states, arcs, Vec::new()).view())
    }

    #[track_caller]
    fn check(num_states: usize, arcs: &[(i32, i32, i32)], expected: &str) {
        assert_eq!(props(num_states, arcs).to_string(), expected);
    }

    #[test]
    fn names_follow_k2() {
        check(
            3,
            &[(0, 1, 1), (0, 1, 2), (1, 2, -1)],
            "Valid|Nonempty|TopSorted|TopSortedAndAcyclic|ArcSorted|ArcSortedAndDeterministic|EpsilonFree|MaybeAccessible|MaybeCoaccessible",
        );
        assert_eq!(Properties::ALL.bits(), 0x1ff);
        assert_eq!(Properties::empty().to_string(), "");
    }

    #[test]
    fn each_property_can_fail_alone() {
        // epsilon
        check(
            3,
            &[(0, 1, 0), (1, 2, -1)],
            "Valid|Nonempty|TopSorted|TopSortedAndAcyclic|ArcSorted|ArcSortedAndDeterministic|MaybeAccessible|MaybeCoaccessible",
        );
        // self-loop: top-sorted but cyclic
        check(
            3,
            &[(0, 1, 1), (1, 1, 2), (1, 2, -1)],
            "Valid|Nonempty|TopSorted|ArcSorted|ArcSortedAndDeterministic|EpsilonFree|MaybeAccessible|MaybeCoaccessible",
        );
        // two arcs with one label: not deterministic
        check(
            3,
            &[(0, 1, 1), (0, 2, 1), (1, 2, -1)],
            "Nonempty|TopSorted|TopSortedAndAcyclic|ArcSorted|EpsilonFree|MaybeAccessible|MaybeCoaccessible",
        );
        // unsorted arcs
        check(
            3,
            &[(0, 1, 2), (0, 1, 1), (1, 2, -1)],
            "Valid|Nonempty|TopSorted|TopSortedAndAcyclic|EpsilonFree|MaybeAccessible|MaybeCoaccessible",
        );
        // state 2 unreachable; state 1 a dead end
        check(
            4,
            &[(0, 1, 1), (0, 3, -1), (2, 3, -1)],
            "Valid|Nonempty|TopSorted|TopSortedAndAcyclic|ArcSorted|ArcSortedAndDeterministic|EpsilonFree",
        );
        // backwards arc
        check(
            3,
            &[(0, 1, 1), (1, 0, 2), (1, 2, -1)],
            "Valid|Nonempty|ArcSorted|ArcSortedAndDeterministic|EpsilonFree|MaybeAccessible|MaybeCoaccessible",
        );
    }

    #[test]
    fn empty_fsa_has_everything_but_nonempty() {
        check(
            0,
            &[],
            "Valid|TopSorted|TopSortedAndAcyclic|ArcSorted|ArcSortedAndDeterministic|EpsilonFree|MaybeAccessible|MaybeCoaccessible",
        );
        assert!(!props(1, &[]).contains(Properties::VALID));
    }
}
