//! Shared test helpers: a tiny seeded generator, random FSAs and brute-force path enumeration.
#![allow(dead_code)]

use std::collections::HashMap;
use std::str::FromStr;

use proptest::test_runner::{
    Config as ProptestConfig, FileFailurePersistence, RngAlgorithm, RngSeed,
};
use ragged_fsa::{Arc, Fsa};

/// SplitMix64, enough randomness for test inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A score in [-2, 2) with a few decimals, exactly representable as text.
    pub fn score(&mut self) -> f32 {
        (self.below(400) as f32 - 200.0) / 100.0
    }
}

/// A valid, top-sorted, acyclic FSA with `2..=max_states` states; labels 0..4 on inner arcs,
/// -1 exactly on arcs into the final state. Some states may be dead ends or unreachable.
pub fn random_acyclic(rng: &mut Rng, max_states: u64) -> Fsa {
    let n = 2 + rng.below(max_states - 1) as i32;
    let mut arcs = Vec::new();
    for s in 0..n - 1 {
        let k = rng.below(4);
        for _ in 0..k {
            let d = s + 1 + rng.below((n - 1 - s) as u64) as i32;
            let label = if d == n - 1 { -1 } else { rng.below(5) as i32 };
            arcs.push(Arc::new(s, d, label, rng.score()));
        }
    }
    Fsa::from_arcs(arcs, n as usize).unwrap()
}

/// A valid FSA that may have cycles (arcs go anywhere but into the final state only by -1).
pub fn random_cyclic(rng: &mut Rng, max_states: u64) -> Fsa {
    let n = 2 + rng.below(max_states - 1) as i32;
    let mut arcs = Vec::new();
    for s in 0..n - 1 {
        let k = rng.below(4);
        for _ in 0..k {
            let d = rng.below(n as u64) as i32;
            let label = if d == n - 1 {
                -1
            } else {
                1 + rng.below(6) as i32
            };
            arcs.push(Arc::new(s, d, label, rng.score()));
        }
    }
    Fsa::from_arcs(arcs, n as usize).unwrap()
}

/// Every successful path of an acyclic FSA: its arc indices and its score (in f64).
pub fn paths(fsa: &Fsa) -> Vec<(Vec<usize>, f64)> {
    let mut out = Vec::new();
    let Some(final_state) = fsa.final_state() else {
        return out;
    };
    let splits = fsa.arcs().shape().row_splits(1);
    let arcs = fsa.arcs().values();
    fn walk(
        state: usize,
        final_state: usize,
        splits: &[i32],
        arcs: &[Arc],
        path: &mut Vec<usize>,
        score: f64,
        out: &mut Vec<(Vec<usize>, f64)>,
    ) {
        if state == final_state {
            out.push((path.clone(), score));
            return;
        }
        for i in splits[state] as usize..splits[state + 1] as usize {
            path.push(i);
            walk(
                arcs[i].dest_state as usize,
                final_state,
                splits,
                arcs,
                path,
                score + arcs[i].score as f64,
                out,
            );
            path.pop();
        }
    }
    walk(0, final_state, splits, arcs, &mut Vec::new(), 0.0, &mut out);
    out
}

/// The label sequences (without the final -1) and scores of all paths, sorted.
pub fn path_labels(fsa: &Fsa) -> Vec<(Vec<i32>, i64)> {
    let arcs = fsa.arcs().values();
    let mut v: Vec<(Vec<i32>, i64)> = paths(fsa)
        .into_iter()
        .map(|(p, s)| {
            (
                p.iter()
                    .map(|&i| arcs[i].label)
                    .filter(|&l| l != -1)
                    .collect(),
                (s * 1000.0).round() as i64,
            )
        })
        .collect();
    v.sort();
    v
}

pub fn log_sum(xs: impl Iterator<Item = f64>) -> f64 {
    let xs: Vec<f64> = xs.collect();
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// One case of a golden file of `tests/golden/ctc_generate.py`: a line `=== name`, then
/// `key: values` lines.
pub struct Case {
    /// The case's name.
    pub name: String,
    /// Its fields, by key.
    pub fields: HashMap<String, String>,
}

impl Case {
    /// The whitespace-separated values of field `key`.
    pub fn get<T: FromStr>(&self, key: &str) -> Vec<T>
    where
        T::Err: std::fmt::Debug,
    {
        self.fields[key]
            .split_whitespace()
            .map(|x| x.parse::<T>().unwrap())
            .collect()
    }
}

/// The cases of a golden file's text.
pub fn cases(text: &str) -> Vec<Case> {
    text.split("=== ")
        .filter(|c| !c.trim().is_empty())
        .map(|case| {
            let (name, body) = case.split_once('\n').unwrap();
            let fields = body
                .lines()
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Case {
                name: name.to_string(),
                fields,
            }
        })
        .collect()
}

/// The property tests' configuration: `cases` cases from a fixed, printed ChaCha seed
/// (`seed`, or `PROPTEST_RNG_SEED` to run another), failures persisted next to the test
/// file, so that a failing case reproduces and is re-run first.
pub fn proptest_config(cases: u32, seed: u64) -> ProptestConfig {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(seed);
    eprintln!("proptest seed {seed} (set PROPTEST_RNG_SEED to run another)");
    ProptestConfig {
        cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

/// An FSA's arcs as `(src, dest, label, score)` tuples, for comparing with expected lists.
pub fn tuples(fsa: &Fsa) -> Vec<(i32, i32, i32, f32)> {
    fsa.arcs()
        .values()
        .iter()
        .map(|a| (a.src_state, a.dest_state, a.label, a.score))
        .collect()
}
