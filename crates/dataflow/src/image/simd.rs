//! Which vector instruction set the image kernels run: the best the processor has
//! (detected at run time), optionally capped for the whole process (for benchmarks and
//! tests). Every level gives bit-identical results.

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level of the image kernels, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Simd {
    /// Portable code only.
    Scalar,
    /// x86-64 AVX2.
    Avx2,
    /// x86-64 AVX-512 F and BW (with AVX2).
    Avx512,
}

impl Simd {
    fn from_u8(v: u8) -> Simd {
        match v {
            0 => Simd::Scalar,
            1 => Simd::Avx2,
            _ => Simd::Avx512,
        }
    }
}

static CAP: AtomicU8 = AtomicU8::new(Simd::Avx512 as u8);

/// The detected level, or `UNKNOWN` before the first question.
static DETECTED: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = u8::MAX;

/// The best level this processor supports (detected once, then remembered).
#[inline]
pub fn detected_simd() -> Simd {
    match DETECTED.load(Ordering::Relaxed) {
        UNKNOWN => {
            let level = detect();
            DETECTED.store(level as u8, Ordering::Relaxed);
            level
        }
        v => Simd::from_u8(v),
    }
}

fn detect() -> Simd {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx2")
        {
            return Simd::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Simd::Avx2;
        }
    }
    Simd::Scalar
}

/// The level the image kernels use now: the detected one, lowered to the cap of
/// [`set_simd_cap`].
#[inline]
pub fn simd() -> Simd {
    detected_simd().min(Simd::from_u8(CAP.load(Ordering::Relaxed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_is_remembered_and_the_cap_lowers_it() {
        let _guard = testing::CAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(detected_simd(), detect());
        assert_eq!(DETECTED.load(Ordering::Relaxed), detect() as u8);
        let old = set_simd_cap(Simd::Scalar);
        assert_eq!(simd(), Simd::Scalar);
        assert_eq!(set_simd_cap(Simd::Avx2), Simd::Scalar);
        assert_eq!(simd(), detect().min(Simd::Avx2));
        set_simd_cap(old);
        assert_eq!(simd(), detect().min(old));
    }
}

/// Caps the level of the image kernels for the whole process (`Simd::Avx512`, the
/// default, lets them use the best the processor has) and returns the previous cap.
///
/// This exists to compare the paths (benchmarks, tests, an AVX2-only machine emulated on
/// an AVX-512 one); results never depend on it.
pub fn set_simd_cap(cap: Simd) -> Simd {
    Simd::from_u8(CAP.swap(cap as u8, Ordering::Relaxed))
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Serialises the tests that change the process-wide cap.
    pub(crate) static CAP_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Runs `f` once per level this processor has (lowest first) with the cap at that
    /// level, and returns the results in that order.
    pub(crate) fn at_every_level<R>(mut f: impl FnMut(Simd) -> R) -> Vec<R> {
        let _guard = CAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let levels: Vec<Simd> = [Simd::Scalar, Simd::Avx2, Simd::Avx512]
            .into_iter()
            .filter(|&l| l <= detected_simd())
            .collect();
        let old = set_simd_cap(Simd::Scalar);
        let out = levels
            .into_iter()
            .map(|l| {
                set_simd_cap(l);
                assert_eq!(simd(), l);
                f(l)
            })
            .collect();
        set_simd_cap(old);
        out
    }
}
