//! `random_paths`: successful paths drawn with their log-semiring probabilities (k2's
//! `random_paths`), from a seeded SplitMix64 stream so that runs repeat.

use ragged_core::Ragged;

use crate::error::Error;
use crate::fsa::{Fsa, FsaVec};
use crate::kernels::scores::{self, check_top_sorted_acyclic, Semiring};

/// SplitMix64: a small, seedable generator (the same one the benches use).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The log-semiring backward scores of a top-sorted acyclic FSA without NaN scores, in
/// `f64`, where an arc into a state with no way to the final state (backward `-inf`) adds
/// nothing whatever its score (so `+inf` into a dead end is not `+inf + -inf = NaN`), nor
/// does a `-inf` arc into a state of backward score `+inf`.
fn backward_scores(fsa: &Fsa) -> Vec<f64> {
    if !fsa.arcs().values().iter().any(|a| a.score == f32::INFINITY) {
        // no +inf: the score kernel's sums, as before
        return scores::backward::<f64>(fsa.view(), Semiring::Log);
    }
    let n = fsa.num_states();
    let splits = fsa.arcs().shape().row_splits(1);
    let arcs = fsa.arcs().values();
    let mut backward = vec![f64::NEG_INFINITY; n];
    if n == 0 {
        return backward;
    }
    backward[n - 1] = 0.0;
    for state in (0..n - 1).rev() {
        let range = splits[state] as usize..splits[state + 1] as usize;
        let terms = || {
            arcs[range.clone()].iter().filter_map(|a| {
                let term = a.score as f64 + backward[a.dest_state as usize];
                // `-inf` and the NaN of `-inf + inf` add nothing
                (term > f64::NEG_INFINITY).then_some(term)
            })
        };
        let max = terms().fold(f64::NEG_INFINITY, f64::max);
        backward[state] = if max.is_infinite() {
            max
        } else {
            max + terms().map(|x| (x - max).exp()).sum::<f64>().ln()
        };
    }
    backward
}

/// `num_paths` paths of one FSA as lists of local arc indices; each step leaves the current
/// state by arc `a` with probability `exp(score(a) + backward(dest) - backward(src))`.
/// A NaN score anywhere, or a successful path scoring `+inf` (the probabilities are then
/// undefined), is [`Error::BadScore`].
fn draw(
    fsa: &Fsa,
    fsa_idx: usize,
    num_paths: usize,
    rng: &mut SplitMix64,
) -> Result<Vec<Vec<i32>>, Error> {
    check_top_sorted_acyclic(fsa.view(), fsa_idx)?;
    let arcs = fsa.arcs().values();
    if let Some(arc) = arcs.iter().position(|a| a.score.is_nan()) {
        return Err(Error::BadScore {
            op: "random_paths",
            fsa: fsa_idx,
            arc,
            score: arcs[arc].score,
            reason: "paths are drawn with probability exp(score), which NaN does not give",
        });
    }
    let Some(final_state) = fsa.final_state() else {
        return Ok(Vec::new());
    };
    let backward = backward_scores(fsa);
    if backward[0] == f64::NEG_INFINITY {
        return Ok(Vec::new());
    }
    let splits = fsa.arcs().shape().row_splits(1);
    let state_arcs = |state: usize| splits[state] as usize..splits[state + 1] as usize;
    if backward[0] == f64::INFINITY {
        // name an arc scored +inf on a successful path: follow arcs whose score plus
        // backward score is +inf until the arc's own score is
        let mut state = 0usize;
        loop {
            let found = state_arcs(state).find(|&i| {
                arcs[i].score as f64 + backward[arcs[i].dest_state as usize] == f64::INFINITY
            });
            // (a state of backward score +inf always has such an arc; the fallback names
            // the state's first arc rather than panic)
            let idx = found.unwrap_or(state_arcs(state).start);
            if found.is_none() || arcs[idx].score == f32::INFINITY {
                return Err(Error::BadScore {
                    op: "random_paths",
                    fsa: fsa_idx,
                    arc: idx,
                    score: f32::INFINITY,
                    reason:
                        "a successful path scores +inf, so the path probabilities are undefined",
                });
            }
            state = arcs[idx].dest_state as usize;
        }
    }
    let mut paths = Vec::new();
    for _ in 0..num_paths {
        let mut path = Vec::new();
        let mut state = 0usize;
        // invariant: backward[state] is finite (it is at the start, and an arc is taken only
        // with a positive probability, which needs a finite backward score at its end)
        while state != final_state {
            let r = rng.next_f64();
            let mut acc = 0.0;
            // the arc with the largest probability, taken when rounding leaves `r` above the
            // total (one arc's term equals the state's maximum, so its probability is at
            // least 1 / the number of arcs)
            let mut fallback: Option<(usize, f64)> = None;
            let mut chosen = None;
            for idx in state_arcs(state) {
                let a = arcs[idx];
                let b = backward[a.dest_state as usize];
                if b == f64::NEG_INFINITY {
                    continue;
                }
                let p = (a.score as f64 + b - backward[state]).exp();
                if p.is_nan() || p <= 0.0 {
                    continue;
                }
                if fallback.is_none_or(|(_, q)| p > q) {
                    fallback = Some((idx, p));
                }
                acc += p;
                if r < acc {
                    chosen = Some(idx);
                    break;
                }
            }
            let Some(idx) = chosen.or(fallback.map(|(idx, _)| idx)) else {
                // unreachable while the invariant holds; an empty draw, never a panic
                return Err(Error::BadScore {
                    op: "random_paths",
                    fsa: fsa_idx,
                    arc: state_arcs(state).start,
                    score: f32::NAN,
                    reason: "no arc out of a state on a successful path has a probability",
                });
            };
            path.push(idx as i32);
            state = arcs[idx].dest_state as usize;
        }
        paths.push(path);
    }
    Ok(paths)
}

impl Fsa {
    /// k2's `random_paths`: `num_paths` successful paths, each drawn with its probability
    /// in the log semiring (scores as log-probabilities, normalised by the total), as
    /// `[path][arc]` arc indices. Needs a top-sorted acyclic FSA; an FSA with no successful
    /// path gives no paths. An arc into a state that cannot reach the final state is never
    /// taken, whatever its score (`+inf` included). A NaN score anywhere, or a successful
    /// path scoring `+inf` (its probability would be undefined), is [`Error::BadScore`]
    /// naming the arc. `seed` makes the draw repeatable.
    pub fn random_paths(&self, num_paths: usize, seed: u64) -> Result<Ragged<i32>, Error> {
        let paths = draw(self, 0, num_paths, &mut SplitMix64(seed))?;
        Ok(Ragged::from_nested(paths)?)
    }
}

impl FsaVec {
    /// [`Fsa::random_paths`] for every FSA, as `[fsa][path][arc]` arc indices (idx012);
    /// FSA `i` draws from the stream seeded `seed + i`.
    pub fn random_paths(&self, num_paths: usize, seed: u64) -> Result<Ragged<i32>, Error> {
        let offsets = self.arc_offsets();
        let mut all = Vec::with_capacity(self.num_fsas());
        for (i, &offset) in offsets.iter().enumerate() {
            let mut rng = SplitMix64(seed.wrapping_add(i as u64));
            let paths = draw(&self.get(i), i, num_paths, &mut rng)?;
            all.push(
                paths
                    .into_iter()
                    .map(|p| p.into_iter().map(|a| a + offset as i32).collect())
                    .collect(),
            );
        }
        Ok(Ragged::from_nested3(all)?)
    }
}
