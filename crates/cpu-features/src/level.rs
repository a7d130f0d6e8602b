//! The vector levels, their detection at run time and the one process-wide cap (set by
//! [`set_simd_cap`] or the environment variable [`SIMD_CAP_ENV`]).

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level of the kernels, lowest first.
///
/// A level names what its copies of a kernel may use, and detection grants it only when the
/// processor has all of that: `Avx2` is AVX2 with FMA, `Avx512` is AVX-512 F, BW and VL
/// with AVX2 and FMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SimdLevel {
    /// Portable code only (the x86-64 baseline, SSE2, on x86-64).
    Scalar,
    /// x86-64 AVX2 with FMA.
    Avx2,
    /// x86-64 AVX-512 F, BW and VL (with AVX2 and FMA).
    Avx512,
}

impl SimdLevel {
    /// Every level, lowest first.
    pub const ALL: [SimdLevel; 3] = [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512];

    /// The level's name as [`SIMD_CAP_ENV`] takes it: `scalar`, `avx2` or `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Scalar => "scalar",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
        }
    }

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
/// first question about the level; a later [`set_simd_cap`] overrides it. Every crate's
/// kernels ask this crate, so `ARRAYS_SIMD_CAP=avx2` runs all of them as on an AVX2-only
/// processor.
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
        let avx2 = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma");
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
/// [`set_simd_cap`] (or of [`SIMD_CAP_ENV`]). Never above what the processor has, so a
/// kernel may run the copy of this level without another check.
#[inline]
pub fn simd_level() -> SimdLevel {
    detected_simd().min(cap())
}

/// The level a value of [`SIMD_CAP_ENV`] names (`scalar`, `avx2`, `avx512`, any case,
/// blanks around ignored), or `None` for anything else.
pub(crate) fn parse_cap(value: &str) -> Option<SimdLevel> {
    let value = value.trim().to_ascii_lowercase();
    SimdLevel::ALL.into_iter().find(|l| l.name() == value)
}

/// The cap [`SIMD_CAP_ENV`] asks for (no cap when it is unset or empty); an unknown value
/// is reported once on stderr and ignored.
pub(crate) fn cap_from_env() -> SimdLevel {
    match std::env::var(SIMD_CAP_ENV) {
        Ok(value) if !value.trim().is_empty() => parse_cap(&value).unwrap_or_else(|| {
            eprintln!(
                "cpu-features: ignoring {SIMD_CAP_ENV}={value:?}: the vector kernels take \
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

/// Caps the level of every crate's kernels for the whole process (`SimdLevel::Avx512`, the
/// default, lets them use the best the processor has) and returns the previous cap.
///
/// This exists to compare the paths (benchmarks, tests, an AVX2-only machine emulated on
/// an AVX-512 one); results never depend on it. It overrides [`SIMD_CAP_ENV`]. Tests that
/// change the cap take [`with_simd_cap`](crate::with_simd_cap) or
/// [`at_every_level`](crate::at_every_level) instead, which hold it for their closure.
pub fn set_simd_cap(level: SimdLevel) -> SimdLevel {
    // read the environment first, so it cannot replace this cap later
    let _ = cap();
    SimdLevel::from_u8(CAP.swap(level as u8, Ordering::Relaxed))
}

/// Whether the processor issues 512-bit operations as two 256-bit halves: AMD's Zen 4
/// (family 25 with AVX-512) does; Zen 5 (family 26) and Intel's AVX-512 cores do not. A
/// kernel whose AVX-512 copy only pays at full width (dataflow's grey conversion: 0.72 of
/// the AVX2 time on a Zen 5, 1.08-1.15 on a Zen 4) asks this. Read once from `cpuid`.
pub fn splits_512_bit_ops() -> bool {
    use std::sync::OnceLock;
    static SPLITS: OnceLock<bool> = OnceLock::new();
    *SPLITS.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `cpuid` leaves 0 and 1 exist on every x86-64 processor. (`__cpuid`
            // became a safe function in newer Rust; the block serves the older ones.)
            #[allow(unused_unsafe)]
            let (vendor, signature) = unsafe {
                let leaf0 = std::arch::x86_64::__cpuid(0);
                let leaf1 = std::arch::x86_64::__cpuid(1);
                let mut vendor = [0u8; 12];
                vendor[..4].copy_from_slice(&leaf0.ebx.to_le_bytes());
                vendor[4..8].copy_from_slice(&leaf0.edx.to_le_bytes());
                vendor[8..].copy_from_slice(&leaf0.ecx.to_le_bytes());
                (vendor, leaf1.eax)
            };
            is_zen4(&vendor, signature)
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    })
}

/// Whether a `cpuid` vendor string and leaf-1 signature (`eax`) are AMD's family 25
/// (Zen 3 and Zen 4; only Zen 4 has AVX-512, which is what the callers ask about).
fn is_zen4(vendor: &[u8; 12], signature: u32) -> bool {
    let base = (signature >> 8) & 0xf;
    let family = if base == 0xf {
        base + ((signature >> 20) & 0xff)
    } else {
        base
    };
    vendor == b"AuthenticAMD" && family == 25
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::with_simd_cap;

    #[test]
    fn detection_is_remembered_and_the_cap_lowers_it() {
        assert_eq!(detected_simd(), detect());
        assert_eq!(DETECTED.load(Ordering::Relaxed), detect() as u8);
        with_simd_cap(SimdLevel::Avx512, || {
            let old = set_simd_cap(SimdLevel::Scalar);
            assert_eq!(old, SimdLevel::Avx512);
            assert_eq!(simd_level(), SimdLevel::Scalar);
            assert_eq!(set_simd_cap(SimdLevel::Avx2), SimdLevel::Scalar);
            assert_eq!(simd_level(), detect().min(SimdLevel::Avx2));
            set_simd_cap(old);
            assert_eq!(simd_level(), detect());
        });
    }

    #[test]
    fn detection_matches_the_processor_features() {
        #[cfg(target_arch = "x86_64")]
        {
            let has = |f: &str| {
                std::fs::read_to_string("/proc/cpuinfo")
                    .ok()
                    .and_then(|info| {
                        let flags = info.lines().find(|l| l.starts_with("flags"))?.to_owned();
                        Some(flags.split_whitespace().any(|w| w == f))
                    })
            };
            let avx2 = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            let avx512 = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl");
            let want = match (avx2, avx512) {
                (true, true) => SimdLevel::Avx512,
                (true, false) => SimdLevel::Avx2,
                _ => SimdLevel::Scalar,
            };
            assert_eq!(detected_simd(), want);
            // the kernel's own account of the processor, where there is one
            if let (Some(avx2), Some(fma), Some(f), Some(bw), Some(vl)) = (
                has("avx2"),
                has("fma"),
                has("avx512f"),
                has("avx512bw"),
                has("avx512vl"),
            ) {
                let want = match (avx2 && fma, f && bw && vl) {
                    (true, true) => SimdLevel::Avx512,
                    (true, false) => SimdLevel::Avx2,
                    _ => SimdLevel::Scalar,
                };
                assert_eq!(detected_simd(), want);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        assert_eq!(detected_simd(), SimdLevel::Scalar);
    }

    #[test]
    fn a_cap_above_the_processor_is_lowered_to_it() {
        with_simd_cap(SimdLevel::Avx512, || {
            assert_eq!(simd_level(), detected_simd());
        });
        for v in [0u8, 1, 2, 3, 200] {
            assert_eq!(SimdLevel::from_u8(v) as u8, v.min(2));
        }
    }

    #[test]
    fn levels_are_ordered_and_named() {
        assert!(SimdLevel::Scalar < SimdLevel::Avx2 && SimdLevel::Avx2 < SimdLevel::Avx512);
        let names: Vec<&str> = SimdLevel::ALL.iter().map(|l| l.name()).collect();
        assert_eq!(names, ["scalar", "avx2", "avx512"]);
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

    #[test]
    fn zen4_is_amd_family_25() {
        // signatures (cpuid leaf 1, eax): Zen 4 (EPYC 9004, family 25 model 17), Zen 5
        // (family 26), Zen 2 (family 23), an Intel Sapphire Rapids (family 6)
        let amd = b"AuthenticAMD";
        let intel = b"GenuineIntel";
        assert!(is_zen4(amd, 0x00A1_0F11));
        assert!(!is_zen4(amd, 0x00B0_0F21));
        assert!(!is_zen4(amd, 0x0083_0F10));
        assert!(!is_zen4(intel, 0x0008_06F8));
        // family 25 is AMD's only: the same signature from another vendor is not Zen 4
        assert!(!is_zen4(intel, 0x00A1_0F11));
        // the live answer agrees with the kernel's account of the processor
        #[cfg(target_os = "linux")]
        if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
            let field = |name: &str| {
                info.lines()
                    .find(|l| l.starts_with(name))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            };
            if let (Some(vendor), Some(family)) = (field("vendor_id"), field("cpu family")) {
                let want = vendor == "AuthenticAMD" && family == "25";
                assert_eq!(splits_512_bit_ops(), want, "{vendor} family {family}");
            }
        }
    }
}
