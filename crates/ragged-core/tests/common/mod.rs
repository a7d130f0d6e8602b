//! The naive model shared by the property tests: nested `Vec`s, their strategies, and the
//! seeded proptest configuration.

use proptest::prelude::*;
use ragged_core::Ragged;

/// A 2-axis ragged array as nested vectors.
pub type V2 = Vec<Vec<i32>>;
/// A 3-axis ragged array as nested vectors.
pub type V3 = Vec<Vec<Vec<i32>>>;

/// Small 2-axis arrays, empty rows included.
pub fn v2() -> impl Strategy<Value = V2> {
    prop::collection::vec(prop::collection::vec(-20i32..20, 0..5), 0..7)
}

/// Small 3-axis arrays.
pub fn v3() -> impl Strategy<Value = V3> {
    prop::collection::vec(v2(), 0..5)
}

/// The ragged array of a 2-axis model.
pub fn r2(v: &V2) -> Ragged<i32> {
    Ragged::from_nested(v.clone()).unwrap()
}

/// The ragged array of a 3-axis model.
pub fn r3(v: &V3) -> Ragged<i32> {
    Ragged::from_nested3(v.clone()).unwrap()
}

/// The fixed seed of the property tests; `PROPTEST_RNG_SEED` runs another.
pub const PROPTEST_SEED: u64 = 0x5EED_2026_0017;

/// A fixed, printed seed (ChaCha) and failures persisted next to the test file, so that a
/// failing case can be reproduced and is re-run first; 64 cases, or `PROPTEST_CASES` when
/// set (the memory checker runs a few under valgrind).
pub fn config() -> ProptestConfig {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(PROPTEST_SEED);
    eprintln!("proptest seed {seed} (set PROPTEST_RNG_SEED to run another)");
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    }
}
