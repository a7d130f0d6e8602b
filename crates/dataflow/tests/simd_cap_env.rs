//! The environment variable `ARRAYS_SIMD_CAP` caps the kernels' level for the whole
//! process (how `cargo xtask bench --simd-cap avx2` emulates an AVX2-only machine). Its own
//! test binary: the variable is read once per process, at the first question.

use dataflow::image::{detected_simd, set_simd_cap, simd_level, SimdLevel, SIMD_CAP_ENV};

#[test]
fn the_environment_caps_the_level_until_set_simd_cap_overrides_it() {
    assert_eq!(SIMD_CAP_ENV, "ARRAYS_SIMD_CAP");
    // before the first question about the level, as a program started with the variable
    std::env::set_var(SIMD_CAP_ENV, "AVX2");
    assert_eq!(simd_level(), detected_simd().min(SimdLevel::Avx2));
    // read once: a later change of the environment does nothing
    std::env::set_var(SIMD_CAP_ENV, "scalar");
    assert_eq!(simd_level(), detected_simd().min(SimdLevel::Avx2));
    // the programmatic cap overrides it, and reports the cap the environment had set
    assert_eq!(set_simd_cap(SimdLevel::Scalar), SimdLevel::Avx2);
    assert_eq!(simd_level(), SimdLevel::Scalar);
    assert_eq!(set_simd_cap(SimdLevel::Avx512), SimdLevel::Scalar);
    assert_eq!(simd_level(), detected_simd());
}
