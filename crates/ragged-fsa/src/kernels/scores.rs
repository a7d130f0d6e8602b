//! Score kernels on one top-sorted acyclic FSA: forward and backward scores in the tropical
//! and log semirings, arc posteriors and the best path.

use crate::error::Error;
use crate::view::FsaView;

/// The semiring scores are combined in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Semiring {
    /// Max over paths (k2's `log_semiring=False`): best-path scores.
    Tropical,
    /// Log-add over paths (k2's `log_semiring=True`): log of the summed probabilities.
    Log,
}

/// The float types scores may be accumulated in (`f32` or `f64`): ragged-core's `Real`,
/// re-exported, so one trait serves both crates.
pub use ragged_core::Real;

/// Checks that every arc goes to a higher-numbered state.
pub(crate) fn check_top_sorted_acyclic(view: FsaView<'_>, fsa_idx: usize) -> Result<(), Error> {
    for (arc_idx, arc) in view.arcs.iter().enumerate() {
        if arc.dest_state <= arc.src_state {
            return Err(Error::NotTopSortedAcyclic {
                fsa: fsa_idx,
                arc: arc_idx,
                src_state: arc.src_state,
                dest_state: arc.dest_state,
            });
        }
    }
    Ok(())
}

/// A running log-sum-exp: the largest term and the sum of `exp(term - max)`, so that each
/// added term costs one `exp` and reading the total one `ln`.
#[derive(Clone, Copy)]
struct LogSum<T> {
    max: T,
    sum: T,
}

impl<T: Real> LogSum<T> {
    const EMPTY: Self = LogSum {
        max: T::NEG_INFINITY,
        sum: T::ZERO,
    };

    #[inline]
    fn add(&mut self, x: T) {
        if x == T::NEG_INFINITY {
            return;
        }
        if x <= self.max {
            self.sum = self.sum + (x - self.max).exp();
        } else {
            self.sum = if self.max == T::NEG_INFINITY {
                T::ONE
            } else {
                self.sum.mul((self.max - x).exp()) + T::ONE
            };
            self.max = x;
        }
    }

    #[inline]
    fn total(&self) -> T {
        if self.max == T::NEG_INFINITY {
            T::NEG_INFINITY
        } else {
            self.max + self.sum.ln()
        }
    }
}

/// Forward scores of every state (0 at the start state), and for the tropical semiring the
/// best entering arc of every state (local arc index, `-1` for none; the lowest-numbered arc
/// wins ties). Arcs must go to higher-numbered states.
pub(crate) fn forward<T: Real>(
    view: FsaView<'_>,
    semiring: Semiring,
    want_entering: bool,
) -> (Vec<T>, Vec<i32>) {
    let n = view.num_states();
    let mut scores = vec![T::NEG_INFINITY; n];
    let mut entering = if want_entering {
        vec![-1i32; n]
    } else {
        Vec::new()
    };
    if n == 0 {
        return (scores, entering);
    }
    scores[0] = T::ZERO;
    if semiring == Semiring::Log && !want_entering {
        // every arc into a state comes from a lower state, so its sum is complete when the
        // loop reaches it
        let mut sums = vec![LogSum::<T>::EMPTY; n];
        for state in 0..n {
            let here = if state == 0 {
                T::ZERO
            } else {
                sums[state].total()
            };
            scores[state] = here;
            if here == T::NEG_INFINITY {
                continue;
            }
            for arc in view.state_arcs(state) {
                sums[arc.dest_state as usize].add(here + T::from_f32(arc.score));
            }
        }
        return (scores, entering);
    }
    for state in 0..n {
        let here = scores[state];
        if here == T::NEG_INFINITY {
            continue;
        }
        for arc_idx in view.arc_range(state) {
            let arc = view.arcs[arc_idx];
            let dest = arc.dest_state as usize;
            let candidate = here + T::from_f32(arc.score);
            if candidate > scores[dest] {
                scores[dest] = candidate;
                if want_entering {
                    entering[dest] = arc_idx as i32;
                }
            }
        }
    }
    (scores, entering)
}

/// Backward scores of every state (0 at the final state).
pub(crate) fn backward<T: Real>(view: FsaView<'_>, semiring: Semiring) -> Vec<T> {
    let n = view.num_states();
    let mut scores = vec![T::NEG_INFINITY; n];
    if n == 0 {
        return scores;
    }
    scores[n - 1] = T::ZERO;
    for state in (0..n - 1).rev() {
        let arcs = view.state_arcs(state);
        scores[state] = match semiring {
            Semiring::Tropical => arcs.iter().fold(T::NEG_INFINITY, |acc, arc| {
                T::max_of(
                    acc,
                    scores[arc.dest_state as usize] + T::from_f32(arc.score),
                )
            }),
            Semiring::Log => {
                let mut sum = LogSum::<T>::EMPTY;
                for arc in arcs {
                    sum.add(scores[arc.dest_state as usize] + T::from_f32(arc.score));
                }
                sum.total()
            }
        };
    }
    scores
}

/// The total score: the final state's forward score, `-inf` for an empty FSA.
pub(crate) fn tot<T: Real>(view: FsaView<'_>, semiring: Semiring) -> T {
    let (scores, _) = forward::<T>(view, semiring, false);
    scores.last().copied().unwrap_or(T::NEG_INFINITY)
}

/// Arc posteriors: `forward[src] + score + backward[dest] - tot` (`-inf` when the FSA has no
/// successful path).
pub(crate) fn arc_post<T: Real>(view: FsaView<'_>, semiring: Semiring) -> Vec<T> {
    let (fwd, _) = forward::<T>(view, semiring, false);
    let bwd = backward::<T>(view, semiring);
    let total = fwd.last().copied().unwrap_or(T::NEG_INFINITY);
    view.arcs
        .iter()
        .map(|arc| {
            let f = fwd[arc.src_state as usize];
            let b = bwd[arc.dest_state as usize];
            if total == T::NEG_INFINITY || f == T::NEG_INFINITY || b == T::NEG_INFINITY {
                T::NEG_INFINITY
            } else {
                f + T::from_f32(arc.score) + b - total
            }
        })
        .collect()
}

/// The local arc indices of the best path from the start to the final state (empty when
/// there is none).
pub(crate) fn best_path<T: Real>(view: FsaView<'_>) -> Vec<usize> {
    let n = view.num_states();
    if n == 0 {
        return Vec::new();
    }
    let (scores, entering) = forward::<T>(view, Semiring::Tropical, true);
    if scores[n - 1] == T::NEG_INFINITY {
        return Vec::new();
    }
    let mut path = Vec::new();
    let mut state = n - 1;
    while state != 0 {
        let arc_idx = entering[state];
        debug_assert!(arc_idx >= 0);
        path.push(arc_idx as usize);
        state = view.arcs[arc_idx as usize].src_state as usize;
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arc::Arc;
    use crate::view::Built;

    fn fsa(num_states: usize, arcs: &[(i32, i32, i32, f32)]) -> Built {
        let arcs: Vec<Arc> = arcs
            .iter()
            .map(|&(s, d, l, w)| Arc::new(s, d, l, w))
            .collect();
        Built::from_sorted_arcs(num_states, arcs, Vec::new())
    }

    #[test]
    fn log_add_is_exact_at_the_edges() {
        assert_eq!(f64::log_add(f64::NEG_INFINITY, 3.0), 3.0);
        assert_eq!(
            f32::log_add(f32::NEG_INFINITY, f32::NEG_INFINITY),
            f32::NEG_INFINITY
        );
        assert!((f64::log_add(0.0, 0.0) - 2f64.ln()).abs() < 1e-15);
    }

    #[test]
    fn two_paths_by_hand() {
        // 0 -a(1)-> 1 -(-1)(0)-> 3 ; 0 -b(2)-> 2 -(-1)(0.5)-> 3
        let b = fsa(
            4,
            &[
                (0, 1, 1, 1.0),
                (0, 2, 2, 2.0),
                (1, 3, -1, 0.0),
                (2, 3, -1, 0.5),
            ],
        );
        let v = b.view();
        assert_eq!(tot::<f64>(v, Semiring::Tropical), 2.5);
        let log = tot::<f64>(v, Semiring::Log);
        assert!((log - (1f64.exp() + 2.5f64.exp()).ln()).abs() < 1e-12);
        assert_eq!(best_path::<f32>(v), vec![1, 3]);
        let post = arc_post::<f64>(v, Semiring::Tropical);
        assert_eq!(post, vec![-1.5, 0.0, -1.5, 0.0]);
        let bwd = backward::<f64>(v, Semiring::Tropical);
        assert_eq!(bwd, vec![2.5, 0.0, 0.5, 0.0]);
    }

    #[test]
    fn no_successful_path_gives_minus_infinity() {
        let b = fsa(3, &[(0, 1, 1, 1.0)]);
        assert_eq!(tot::<f32>(b.view(), Semiring::Log), f32::NEG_INFINITY);
        assert!(best_path::<f32>(b.view()).is_empty());
        assert_eq!(
            arc_post::<f32>(b.view(), Semiring::Log),
            vec![f32::NEG_INFINITY]
        );
    }

    #[test]
    fn cycles_are_reported() {
        let b = fsa(3, &[(0, 1, 1, 1.0), (1, 1, 2, 0.0), (1, 2, -1, 0.0)]);
        assert_eq!(
            check_top_sorted_acyclic(b.view(), 4),
            Err(Error::NotTopSortedAcyclic {
                fsa: 4,
                arc: 1,
                src_state: 1,
                dest_state: 1
            })
        );
    }
}
