//! k2's randomized checks: `random_fsa` (an FSA of random arcs, for tests) and
//! `is_rand_equivalent` (two FSAs give the same total score to random label sequences).

use crate::arc::Arc;
use crate::error::Error;
use crate::fsa::{Fsa, FsaVec};
use crate::kernels::scores::Semiring;

/// SplitMix64: a small, seedable generator (as `random_paths` and the benches use).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (`lo <= hi`).
    fn int_in(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Options of [`Fsa::random`] (k2's `random_fsa` arguments and defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RandomFsaConfig {
    /// Every arc goes to a higher-numbered state (else to any state, self-loops included).
    pub acyclic: bool,
    /// Labels are drawn from `0..=max_symbol` (`-1` on the arcs entering the final state).
    pub max_symbol: i32,
    /// The fewest arcs.
    pub min_num_arcs: usize,
    /// The most arcs.
    pub max_num_arcs: usize,
}

impl Default for RandomFsaConfig {
    fn default() -> Self {
        RandomFsaConfig {
            acyclic: true,
            max_symbol: 50,
            min_num_arcs: 0,
            max_num_arcs: 1000,
        }
    }
}

/// Options of [`Fsa::is_rand_equivalent`] (k2's `is_rand_equivalent` arguments and
/// defaults, and the seed of the draws, which k2 takes from the system).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandEquivalentConfig {
    /// How the scores of alternative paths combine (k2's `log_semiring`).
    pub semiring: Semiring,
    /// Only label sequences within `beam` of an FSA's total score are compared.
    pub beam: f64,
    /// Epsilon arcs (label 0) match nothing, as in [`Fsa::intersect`]; else 0 is a label.
    pub treat_epsilons_specially: bool,
    /// Two totals within `delta` of each other are equal.
    pub delta: f64,
    /// The number of label sequences drawn.
    pub num_paths: usize,
    /// Seeds the draws, so that a check repeats.
    pub seed: u64,
}

impl Default for RandEquivalentConfig {
    fn default() -> Self {
        RandEquivalentConfig {
            semiring: Semiring::Tropical,
            beam: f64::INFINITY,
            treat_epsilons_specially: true,
            delta: 1e-6,
            num_paths: 100,
            seed: 0,
        }
    }
}

impl Fsa {
    /// A random FSA as k2's `random_fsa` makes one: between `min_num_arcs` and
    /// `max_num_arcs` arcs over a random number of states, each arc from a random state to
    /// a random later state (any state when not `acyclic`), labelled from
    /// `0..=max_symbol` (`-1` when it enters the final state), scored in `[0, 10)`. The
    /// draws come from `seed`, so the same seed gives the same FSA.
    pub fn random(config: &RandomFsaConfig, seed: u64) -> Result<Fsa, Error> {
        if config.max_symbol < 0 {
            return Err(Error::InvalidArgument {
                what: "random_fsa max_symbol",
                value: config.max_symbol as f64,
                allowed: "at least 0",
            });
        }
        if config.min_num_arcs > config.max_num_arcs || config.max_num_arcs > i32::MAX as usize {
            return Err(Error::InvalidArgument {
                what: "random_fsa max_num_arcs",
                value: config.max_num_arcs as f64,
                allowed: "at least min_num_arcs and at most 2^31 - 1",
            });
        }
        let mut rng = SplitMix64(seed);
        let num_arcs = rng.int_in(config.min_num_arcs as u64, config.max_num_arcs as u64);
        if num_arcs == 0 {
            return Ok(Fsa::empty());
        }
        // the states that arcs leave, one to num_arcs of them, then the final state
        let num_sources = rng.int_in(1, num_arcs);
        let final_state = num_sources;
        let mut sources: Vec<u64> = (0..num_arcs)
            .map(|_| rng.int_in(0, num_sources - 1))
            .collect();
        sources.sort_unstable();
        let arcs = sources
            .into_iter()
            .map(|src| {
                let lowest = if config.acyclic { src + 1 } else { 0 };
                let dest = rng.int_in(lowest, final_state);
                let label = if dest == final_state {
                    -1
                } else {
                    rng.int_in(0, config.max_symbol as u64) as i32
                };
                let score = (rng.unit() * 10.0) as f32;
                Arc::new(src as i32, dest as i32, label, score)
            })
            .collect();
        Fsa::from_arcs(arcs, final_state as usize + 1)
    }

    /// k2's `is_rand_equivalent`: whether `self` and `other` appear equivalent, judged on
    /// random label sequences. Both are connected first; two empty FSAs are equivalent,
    /// one empty one is not; their label sets may differ at most by epsilon (when
    /// `treat_epsilons_specially`); their total scores must agree within `delta`; then
    /// `num_paths` times a successful path is drawn (by its probability) from one of the
    /// two, chosen at random, its label sequence (epsilons dropped when treated specially)
    /// is intersected with both, and the two totals must agree within `delta` unless both
    /// lie more than `beam` below their FSA's total. The inputs must be acyclic once
    /// connected ([`Error::Cycle`] otherwise); they are top-sorted here.
    pub fn is_rand_equivalent(
        &self,
        other: &Fsa,
        config: &RandEquivalentConfig,
    ) -> Result<bool, Error> {
        let a = self.connect().0;
        let b = other.connect().0;
        match (a.num_states() == 0, b.num_states() == 0) {
            (true, true) => return Ok(true),
            (true, false) | (false, true) => return Ok(false),
            (false, false) => {}
        }
        // the draws and totals walk states in topological order
        let (a, b) = (a.top_sort()?.0, b.top_sort()?.0);
        let labels = |f: &Fsa| {
            let mut l = f.labels();
            l.sort_unstable();
            l.dedup();
            if config.treat_epsilons_specially {
                l.retain(|&x| x != 0);
            }
            l
        };
        if labels(&a) != labels(&b) {
            return Ok(false);
        }
        let semiring = config.semiring;
        let total_a: f64 = a.get_tot_score(semiring)?;
        let total_b: f64 = b.get_tot_score(semiring)?;
        if !approx_equal(total_a, total_b, config.delta) {
            return Ok(false);
        }
        let (cutoff_a, cutoff_b) = (total_a - config.beam, total_b - config.beam);
        let mut rng = SplitMix64(config.seed);
        for _ in 0..config.num_paths {
            let from = if rng.next_u64() & 1 == 0 { &a } else { &b };
            let path = from.random_paths(1, rng.next_u64())?;
            let arcs = from.arcs().values();
            let sequence: Vec<i32> = path
                .values()
                .iter()
                .map(|&arc| arcs[arc as usize].label)
                .filter(|&l| l != -1 && !(config.treat_epsilons_specially && l == 0))
                .collect();
            let linear = Fsa::linear(&sequence)?;
            let cost_a = sequence_total(&a, &linear, config)?;
            let cost_b = sequence_total(&b, &linear, config)?;
            if cost_a < cutoff_a && cost_b < cutoff_b {
                continue;
            }
            if !approx_equal(cost_a, cost_b, config.delta) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl FsaVec {
    /// [`Fsa::is_rand_equivalent`] for each pair of FSAs (FSA `i` draws from the stream
    /// seeded `seed + i`): true when every pair is. The vectors must hold as many FSAs.
    pub fn is_rand_equivalent(
        &self,
        other: &FsaVec,
        config: &RandEquivalentConfig,
    ) -> Result<bool, Error> {
        if self.num_fsas() != other.num_fsas() {
            return Err(Error::FsaCountMismatch {
                a: self.num_fsas(),
                b: other.num_fsas(),
            });
        }
        for i in 0..self.num_fsas() {
            let config = RandEquivalentConfig {
                seed: config.seed.wrapping_add(i as u64),
                ..*config
            };
            if !self.get(i).is_rand_equivalent(&other.get(i), &config)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The total score of `sequence` (a linear FSA) in `fsa`: `-inf` when `fsa` does not
/// accept it.
fn sequence_total(fsa: &Fsa, sequence: &Fsa, config: &RandEquivalentConfig) -> Result<f64, Error> {
    let (both, _, _) = fsa.intersect(sequence, config.treat_epsilons_specially)?;
    let both = both.connect().0;
    if both.num_states() == 0 {
        return Ok(f64::NEG_INFINITY);
    }
    // epsilons of `fsa` may leave the product out of topological order
    let both = both.top_sort()?.0;
    both.get_tot_score(config.semiring)
}

/// k2's `DoubleApproxEqual`: equal, or within `delta`.
fn approx_equal(a: f64, b: f64, delta: f64) -> bool {
    a == b || (a - b).abs() <= delta
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fsa(text: &str) -> Fsa {
        Fsa::from_text(text, &crate::TextFormat::acceptor()).expect("valid FSA text")
    }

    fn check(a: &str, b: &str, semiring: Semiring, expected: bool) {
        let config = RandEquivalentConfig {
            semiring,
            ..RandEquivalentConfig::default()
        };
        let got = fsa(a)
            .is_rand_equivalent(&fsa(b), &config)
            .expect("acyclic inputs");
        assert_eq!(got, expected, "{a:?} against {b:?} in {semiring:?}");
    }

    // "1 2" scored 3 on either of two paths (tropical total 3, log total 3 + ln 2), "1 3"
    // scored 1
    const TWO_PATHS: &str = "0 1 1 1\n0 2 1 2\n0 3 1 0\n1 3 2 2\n2 3 2 1\n3 4 -1 0\n4";
    const ONE_PATH: &str = "0 1 1 3\n0 2 1 0\n1 2 2 0\n2 3 -1 0\n3";
    const OFF_BY_HALF: &str = "0 1 1 3.5\n0 2 1 0\n1 2 2 0\n2 3 -1 0\n3";

    #[test]
    fn hand_worked_equivalences() {
        // one path per sequence with the best score: the same in the tropical semiring
        check(TWO_PATHS, ONE_PATH, Semiring::Tropical, true);
        // but not in the log semiring, where two paths of 3 sum to 3 + ln 2
        check(TWO_PATHS, ONE_PATH, Semiring::Log, false);
        let log_sum = format!("0 1 1 {}\n0 2 1 0\n1 2 2 0\n2 3 -1 0\n3", 3.0 + 2f64.ln());
        check(TWO_PATHS, &log_sum, Semiring::Log, true);
        // a score off by 0.5 on one sequence
        check(ONE_PATH, OFF_BY_HALF, Semiring::Tropical, false);
        // a label one side lacks
        check(
            ONE_PATH,
            "0 1 1 3\n0 2 4 0\n1 2 2 0\n2 3 -1 0\n3",
            Semiring::Tropical,
            false,
        );
        // the same labels and total, but "2" in place of "1": found on a drawn sequence
        check(
            ONE_PATH,
            "0 1 1 3\n0 2 2 0\n1 2 2 0\n2 3 -1 0\n3",
            Semiring::Tropical,
            false,
        );
        // an epsilon arc matches nothing: "1 <eps> 2" is "1 2"
        check(
            ONE_PATH,
            "0 1 1 3\n0 3 1 0\n1 2 0 0\n2 3 2 0\n3 4 -1 0\n4",
            Semiring::Tropical,
            true,
        );
    }

    #[test]
    fn empty_fsas() {
        // no path to the final state: empty after connect
        let dead = "0 1 1 0\n2 3 -1 0\n3";
        check(dead, dead, Semiring::Tropical, true);
        check(dead, ONE_PATH, Semiring::Tropical, false);
        check(ONE_PATH, dead, Semiring::Log, false);
    }

    #[test]
    fn a_cyclic_input_is_an_error() {
        let cyclic = fsa("0 1 1 0\n1 0 2 0\n1 2 -1 0\n2");
        // acyclic but not top-sorted (state 2 before state 1) is fine
        let unsorted = fsa("0 2 1 1\n1 3 -1 0\n2 1 2 0\n3");
        let sorted = fsa("0 1 1 1\n1 2 2 0\n2 3 -1 0\n3");
        let config = RandEquivalentConfig::default();
        assert!(unsorted
            .is_rand_equivalent(&sorted, &config)
            .expect("acyclic"));
        let err = cyclic
            .is_rand_equivalent(&cyclic, &RandEquivalentConfig::default())
            .expect_err("a cycle");
        assert!(matches!(err, Error::Cycle { .. }), "{err}");
    }

    #[test]
    fn vectors_compare_pairwise() {
        let v = |texts: &[&str]| {
            FsaVec::from_fsas(&texts.iter().map(|t| fsa(t)).collect::<Vec<_>>()).expect("FSAs")
        };
        let config = RandEquivalentConfig::default();
        let a = v(&[ONE_PATH, TWO_PATHS]);
        assert!(a
            .is_rand_equivalent(&v(&[ONE_PATH, ONE_PATH]), &config)
            .expect("acyclic"));
        assert!(!a
            .is_rand_equivalent(&v(&[ONE_PATH, OFF_BY_HALF]), &config)
            .expect("acyclic"));
        let err = a
            .is_rand_equivalent(&v(&[ONE_PATH]), &config)
            .expect_err("two against one");
        assert!(
            matches!(err, Error::FsaCountMismatch { a: 2, b: 1 }),
            "{err}"
        );
    }

    #[test]
    fn random_fsas_follow_the_config() {
        for seed in 0..200 {
            for acyclic in [true, false] {
                let config = RandomFsaConfig {
                    acyclic,
                    max_symbol: 7,
                    min_num_arcs: 5,
                    max_num_arcs: 40,
                };
                let f = Fsa::random(&config, seed).expect("a valid config");
                assert!(
                    (5..=40).contains(&f.num_arcs()),
                    "seed {seed}: {} arcs",
                    f.num_arcs()
                );
                let last = f.num_states() as i32 - 1;
                for arc in f.arcs().values() {
                    assert!((0.0..10.0).contains(&arc.score), "seed {seed}: {arc:?}");
                    assert_eq!(
                        arc.label == -1,
                        arc.dest_state == last,
                        "seed {seed}: {arc:?}"
                    );
                    assert!((-1..=7).contains(&arc.label), "seed {seed}: {arc:?}");
                    if acyclic {
                        assert!(arc.dest_state > arc.src_state, "seed {seed}: {arc:?}");
                    }
                }
            }
        }
        let config = RandomFsaConfig::default();
        assert_eq!(
            Fsa::random(&config, 3).expect("valid"),
            Fsa::random(&config, 3).expect("valid")
        );
    }

    #[test]
    fn random_fsa_rejects_bad_configs() {
        let bad = [
            RandomFsaConfig {
                max_symbol: -1,
                ..RandomFsaConfig::default()
            },
            RandomFsaConfig {
                min_num_arcs: 5,
                max_num_arcs: 4,
                ..RandomFsaConfig::default()
            },
        ];
        for config in bad {
            let err = Fsa::random(&config, 0).expect_err("a bad config");
            assert!(
                matches!(err, Error::InvalidArgument { .. }),
                "{config:?}: {err}"
            );
        }
    }
}
