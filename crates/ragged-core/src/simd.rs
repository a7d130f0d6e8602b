//! Which vector instruction set the hot kernels (per-sublist reductions, gathers, row ids)
//! run: the best the processor has, detected at run time, optionally capped for the whole
//! process (for benchmarks and tests). Every level gives bit-identical results: the vector
//! copies are the same Rust code compiled with more target features, and Rust never
//! reassociates or contracts floating-point operations.

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level of the kernels, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SimdLevel {
    /// Portable code only (the x86-64 baseline, SSE2, on x86-64).
    Scalar,
    /// x86-64 AVX2.
    Avx2,
    /// x86-64 AVX-512 F, BW and VL (with AVX2).
    Avx512,
}

impl SimdLevel {
    fn from_u8(v: u8) -> SimdLevel {
        match v {
            0 => SimdLevel::Scalar,
            1 => SimdLevel::Avx2,
            _ => SimdLevel::Avx512,
        }
    }
}

/// The environment variable that caps the level for the whole process, as
/// [`set_simd_cap`] does: `scalar`, `avx2` or `avx512` (any case). It is read once, at the
/// first question about the level; a later [`set_simd_cap`] overrides it. dataflow and dense-matrix
/// read the same variable, so `ARRAYS_SIMD_CAP=avx2` runs every crate's kernels as on an
/// AVX2-only processor.
pub const SIMD_CAP_ENV: &str = "ARRAYS_SIMD_CAP";

/// The cap, or `UNKNOWN` before [`SIMD_CAP_ENV`] was read.
static CAP: AtomicU8 = AtomicU8::new(UNKNOWN);

/// The detected level, or `UNKNOWN` before the first question.
static DETECTED: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = u8::MAX;

/// The best level this processor supports (detected once, then remembered).
#[inline]
pub fn detected_simd() -> SimdLevel {
    match DETECTED.load(Ordering::Relaxed) {
        UNKNOWN => {
            let level = detect();
            DETECTED.store(level as u8, Ordering::Relaxed);
            level
        }
        v => SimdLevel::from_u8(v),
    }
}

fn detect() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        if avx2
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            return SimdLevel::Avx512;
        }
        if avx2 {
            return SimdLevel::Avx2;
        }
    }
    SimdLevel::Scalar
}

/// The level the kernels use now: [`detected_simd`] lowered to the cap of
/// [`set_simd_cap`]. Never above what the processor has, so a kernel may run the copy of
/// this level without another check.
#[inline]
pub fn simd_level() -> SimdLevel {
    detected_simd().min(cap())
}

/// The level a value of [`SIMD_CAP_ENV`] names (`scalar`, `avx2`, `avx512`, any case,
/// blanks around ignored), or `None` for anything else.
fn parse_cap(value: &str) -> Option<SimdLevel> {
    match value.trim().to_ascii_lowercase().as_str() {
        "scalar" => Some(SimdLevel::Scalar),
        "avx2" => Some(SimdLevel::Avx2),
        "avx512" => Some(SimdLevel::Avx512),
        _ => None,
    }
}

/// The cap [`SIMD_CAP_ENV`] asks for (no cap when it is unset or empty); an unknown value
/// is reported once on stderr and ignored.
fn cap_from_env() -> SimdLevel {
    match std::env::var(SIMD_CAP_ENV) {
        Ok(value) if !value.trim().is_empty() => parse_cap(&value).unwrap_or_else(|| {
            eprintln!(
                "ragged-core: ignoring {SIMD_CAP_ENV}={value:?}: the vector kernels take \
                 scalar, avx2 or avx512"
            );
            SimdLevel::Avx512
        }),
        _ => SimdLevel::Avx512,
    }
}

/// The process-wide cap: [`SIMD_CAP_ENV`] until [`set_simd_cap`] changes it.
#[inline]
fn cap() -> SimdLevel {
    match CAP.load(Ordering::Relaxed) {
        UNKNOWN => {
            let from_env = cap_from_env();
            // a cap set meanwhile by `set_simd_cap` wins over the environment
            match CAP.compare_exchange(
                UNKNOWN,
                from_env as u8,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => from_env,
                Err(now) => SimdLevel::from_u8(now),
            }
        }
        v => SimdLevel::from_u8(v),
    }
}

/// Caps the level of ragged-core's kernels for the whole process (`SimdLevel::Avx512`, the
/// default, lets them use the best the processor has) and returns the previous cap.
///
/// This exists to compare the paths (benchmarks, tests, an AVX2-only machine emulated on
/// an AVX-512 one); results never depend on it. It overrides [`SIMD_CAP_ENV`].
pub fn set_simd_cap(level: SimdLevel) -> SimdLevel {
    // read the environment first, so it cannot replace this cap later
    let _ = cap();
    SimdLevel::from_u8(CAP.swap(level as u8, Ordering::Relaxed))
}

/// Runs `$body` (an expression calling generic code) in a copy compiled for `$level`:
/// the portable code at `Scalar`, a function with AVX2 enabled at `Avx2`, one with
/// AVX-512 F/BW/VL enabled at `Avx512`; a level above [`detected_simd`] is lowered to it
/// first. The body's free variables are passed as `$arg: $ty` and its
/// type parameters, with their bounds, in `[...]`.
macro_rules! at_level {
    ($level:expr, [$($gen:tt)*], ($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty, $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn avx2_copy<$($gen)*>($($arg: $ty),*) -> $ret {
            $body
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
        fn avx512_copy<$($gen)*>($($arg: $ty),*) -> $ret {
            $body
        }
        let level: $crate::simd::SimdLevel = $level;
        match level.min($crate::simd::detected_simd()) {
            #[cfg(target_arch = "x86_64")]
            $crate::simd::SimdLevel::Avx512 => {
                // SAFETY: the level was lowered to `detected_simd()` just above, so the
                // processor has AVX-512 F, BW, VL and AVX2.
                unsafe { avx512_copy($($arg),*) }
            }
            #[cfg(target_arch = "x86_64")]
            $crate::simd::SimdLevel::Avx2 => {
                // SAFETY: as above: the processor has AVX2.
                unsafe { avx2_copy($($arg),*) }
            }
            _ => $body,
        }
    }};
}
pub(crate) use at_level;

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Serialises the tests that change the process-wide cap.
    pub(crate) static CAP_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Runs `f` once per level this processor has (lowest first) with the cap at that
    /// level, and returns the results in that order.
    pub(crate) fn at_every_level<R>(mut f: impl FnMut(SimdLevel) -> R) -> Vec<R> {
        let _guard = CAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let levels: Vec<SimdLevel> = [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512]
            .into_iter()
            .filter(|&l| l <= detected_simd())
            .collect();
        let old = set_simd_cap(SimdLevel::Scalar);
        let out = levels
            .into_iter()
            .map(|l| {
                set_simd_cap(l);
                assert_eq!(simd_level(), l);
                f(l)
            })
            .collect();
        set_simd_cap(old);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_is_remembered_and_the_cap_lowers_it() {
        let _guard = testing::CAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(detected_simd(), detect());
        assert_eq!(DETECTED.load(Ordering::Relaxed), detect() as u8);
        let old = set_simd_cap(SimdLevel::Scalar);
        assert_eq!(simd_level(), SimdLevel::Scalar);
        assert_eq!(set_simd_cap(SimdLevel::Avx2), SimdLevel::Scalar);
        assert_eq!(simd_level(), detect().min(SimdLevel::Avx2));
        set_simd_cap(old);
        assert_eq!(simd_level(), detect().min(old));
    }

    #[test]
    fn detection_matches_the_processor_features() {
        #[cfg(target_arch = "x86_64")]
        {
            let avx512 = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl");
            let avx2 = std::arch::is_x86_feature_detected!("avx2");
            let want = if avx2 && avx512 {
                SimdLevel::Avx512
            } else if avx2 {
                SimdLevel::Avx2
            } else {
                SimdLevel::Scalar
            };
            assert_eq!(detected_simd(), want);
        }
        #[cfg(not(target_arch = "x86_64"))]
        assert_eq!(detected_simd(), SimdLevel::Scalar);
    }

    #[test]
    fn a_cap_above_the_processor_is_lowered_to_it() {
        let _guard = testing::CAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let old = set_simd_cap(SimdLevel::Avx512);
        assert_eq!(simd_level(), detected_simd());
        set_simd_cap(old);
        for v in [0u8, 1, 2, 3, 200] {
            assert_eq!(SimdLevel::from_u8(v) as u8, v.min(2));
        }
    }

    #[test]
    fn cap_values_parse_and_unknown_ones_are_refused() {
        for (text, want) in [
            ("scalar", Some(SimdLevel::Scalar)),
            ("avx2", Some(SimdLevel::Avx2)),
            ("AVX2", Some(SimdLevel::Avx2)),
            (" avx2\n", Some(SimdLevel::Avx2)),
            ("avx512", Some(SimdLevel::Avx512)),
            ("Avx512", Some(SimdLevel::Avx512)),
            ("avx-512", None),
            ("sse2", None),
            ("avx3", None),
            ("", None),
        ] {
            assert_eq!(parse_cap(text), want, "{text:?}");
        }
    }

    #[test]
    fn an_unknown_environment_value_means_no_cap() {
        // (only values that mean "no cap" are set here: other tests of this process may
        // read the variable meanwhile)
        std::env::set_var(SIMD_CAP_ENV, "avx3");
        assert_eq!(cap_from_env(), SimdLevel::Avx512);
        std::env::set_var(SIMD_CAP_ENV, " ");
        assert_eq!(cap_from_env(), SimdLevel::Avx512);
        std::env::remove_var(SIMD_CAP_ENV);
        assert_eq!(cap_from_env(), SimdLevel::Avx512);
    }
}
