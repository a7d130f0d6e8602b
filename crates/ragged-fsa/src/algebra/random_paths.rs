//! `random_paths`: successful paths drawn with their log-semiring probabilities (k2's
//! `random_paths`), from a seeded SplitMix64 stream so that runs repeat.

use ragged_core::Ragged;

use crate::error::Error;
use crate::fsa::{Fsa, FsaVec};
use crate::kernels::scores::Semiring;

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

/// `num_paths` paths of one FSA as lists of local arc indices; each step leaves the current
/// state by arc `a` with probability `exp(score(a) + backward(dest) - backward(src))`.
fn draw(fsa: &Fsa, num_paths: usize, rng: &mut SplitMix64) -> Result<Vec<Vec<i32>>, Error> {
    let backward: Vec<f64> = fsa.get_backward_scores(Semiring::Log)?;
    let Some(final_state) = fsa.final_state() else {
        return Ok(Vec::new());
    };
    if backward[0] == f64::NEG_INFINITY {
        return Ok(Vec::new());
    }
    let splits = fsa.arcs().shape().row_splits(1);
    let arcs = fsa.arcs().values();
    let mut paths = Vec::new();
    for _ in 0..num_paths {
        let mut path = Vec::new();
        let mut state = 0usize;
        while state != final_state {
            let range = splits[state] as usize..splits[state + 1] as usize;
            let r = rng.next_f64();
            let mut acc = 0.0;
            let mut chosen = None;
            for idx in range.clone() {
                let a = arcs[idx];
                let p = (a.score as f64 + backward[a.dest_state as usize] - backward[state]).exp();
                if p > 0.0 {
                    chosen = Some(idx);
                }
                acc += p;
                if r < acc {
                    break;
                }
            }
            // rounding can leave `r` just above the total: the last possible arc then
            let idx = chosen.expect("a state with finite backward score has a way out");
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
    /// path gives no paths. `seed` makes the draw repeatable.
    pub fn random_paths(&self, num_paths: usize, seed: u64) -> Result<Ragged<i32>, Error> {
        let paths = draw(self, num_paths, &mut SplitMix64(seed))?;
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
            let paths = draw(&self.get(i), num_paths, &mut rng)?;
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
