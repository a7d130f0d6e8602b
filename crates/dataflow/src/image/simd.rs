//! Which vector instruction set the image kernels run: the best the processor has
//! (detected at run time), optionally capped for the whole process (for benchmarks and
//! tests, and to emulate an AVX2-only machine: [`set_simd_cap`] or the environment
//! variable [`SIMD_CAP_ENV`]). Every level gives bit-identical results.

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

/// The environment variable that caps the level for the whole process, as
/// [`set_simd_cap`] does: `scalar`, `avx2` or `avx512` (any case). It is read once, at the
/// first question about the level; a later [`set_simd_cap`] overrides it. ragged-core and
/// dense-matrix read the same variable, so `ARRAYS_SIMD_CAP=avx2` runs every crate's
/// kernels as on an AVX2-only processor.
pub const SIMD_CAP_ENV: &str = "ARRAYS_SIMD_CAP";

/// The cap, or `UNKNOWN` before [`SIMD_CAP_ENV`] was read.
static CAP: AtomicU8 = AtomicU8::new(UNKNOWN);

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

/// The level a value of [`SIMD_CAP_ENV`] names (`scalar`, `avx2`, `avx512`, any case,
/// blanks around ignored), or `None` for anything else.
fn parse_cap(value: &str) -> Option<Simd> {
    match value.trim().to_ascii_lowercase().as_str() {
        "scalar" => Some(Simd::Scalar),
        "avx2" => Some(Simd::Avx2),
        "avx512" => Some(Simd::Avx512),
        _ => None,
    }
}

/// The cap [`SIMD_CAP_ENV`] asks for (no cap when it is unset or empty); an unknown value
/// is reported once on stderr and ignored.
fn cap_from_env() -> Simd {
    match std::env::var(SIMD_CAP_ENV) {
        Ok(value) if !value.trim().is_empty() => parse_cap(&value).unwrap_or_else(|| {
            eprintln!(
                "dataflow: ignoring {SIMD_CAP_ENV}={value:?}: the image kernels take \
                 scalar, avx2 or avx512"
            );
            Simd::Avx512
        }),
        _ => Simd::Avx512,
    }
}

/// Whether the processor issues 512-bit operations as two 256-bit halves: AMD's Zen 4
/// (family 25 with AVX-512) does; Zen 5 (family 26) and Intel's AVX-512 cores do not. A
/// kernel whose AVX-512 copy only pays at full width (grey conversion: 0.72 of the AVX2
/// time on a Zen 5, 1.08-1.15 on a Zen 4) asks this. Read once from `cpuid`.
pub(crate) fn splits_512_bit_ops() -> bool {
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

/// The process-wide cap: [`SIMD_CAP_ENV`] until [`set_simd_cap`] changes it.
#[inline]
fn cap() -> Simd {
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
                Err(now) => Simd::from_u8(now),
            }
        }
        v => Simd::from_u8(v),
    }
}

/// The level the image kernels use now: the detected one, lowered to the cap of
/// [`set_simd_cap`] (or of [`SIMD_CAP_ENV`]).
#[inline]
pub fn simd() -> Simd {
    detected_simd().min(cap())
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

    #[test]
    fn cap_values_parse_and_unknown_ones_are_refused() {
        for (text, want) in [
            ("scalar", Some(Simd::Scalar)),
            ("avx2", Some(Simd::Avx2)),
            ("AVX2", Some(Simd::Avx2)),
            (" avx2\n", Some(Simd::Avx2)),
            ("avx512", Some(Simd::Avx512)),
            ("Avx512", Some(Simd::Avx512)),
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
        assert_eq!(cap_from_env(), Simd::Avx512);
        std::env::set_var(SIMD_CAP_ENV, " ");
        assert_eq!(cap_from_env(), Simd::Avx512);
        std::env::remove_var(SIMD_CAP_ENV);
        assert_eq!(cap_from_env(), Simd::Avx512);
    }
}

/// Caps the level of the image kernels for the whole process (`Simd::Avx512`, the
/// default, lets them use the best the processor has) and returns the previous cap.
///
/// This exists to compare the paths (benchmarks, tests, an AVX2-only machine emulated on
/// an AVX-512 one); results never depend on it. It overrides [`SIMD_CAP_ENV`].
pub fn set_simd_cap(level: Simd) -> Simd {
    // read the environment first, so it cannot replace this cap later
    let _ = cap();
    Simd::from_u8(CAP.swap(level as u8, Ordering::Relaxed))
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
