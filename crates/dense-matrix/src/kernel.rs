//! Which OpenBLAS kernel runs ([`blas_kernel`]), and the guard that keeps it from silently
//! degrading: an OpenBLAS built with `DYNAMIC_ARCH` (Debian's is) picks its kernel table
//! from the CPU at load time, and one that does not recognise a CPU (a cloud VM reporting
//! only "Intel Xeon Processor") falls back to its SSE3 `Prescott` kernels, several times
//! slower on a CPU with AVX2 or AVX-512.
//!
//! Before the crate's first BLAS or LAPACK call, [`ensure_kernel`] compares the kernel
//! OpenBLAS chose (`openblas_get_corename`) with the CPU's instruction set
//! (`is_x86_feature_detected!`). If the kernel is below the CPU (an SSE kernel on a CPU
//! with AVX2 and FMA, or an AVX2 kernel such as `Haswell` on a CPU with AVX-512), and the
//! user did not choose one with `OPENBLAS_CORETYPE`, it re-selects the table the way
//! OpenBLAS does at load time (`gotoblas_dynamic_quit`, `OPENBLAS_CORETYPE` set to
//! `Haswell` or `SkylakeX`, `gotoblas_dynamic_init`), then restores the environment. If
//! an SSE kernel stays (an OpenBLAS without `DYNAMIC_ARCH`, or a switch that did not
//! help), it warns once on stderr with the remedy.

use std::ffi::{c_void, CStr};
use std::fmt;
use std::os::raw::c_char;
use std::sync::{Mutex, Once, OnceLock};

use crate::Error;

extern "C" {
    fn openblas_get_corename() -> *const c_char;
}

/// An x86-64 instruction-set level, as far as BLAS kernels care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IsaLevel {
    /// SSE2/SSE3 only (OpenBLAS's `Prescott`, `Core2`, `Nehalem`, ... kernels), or not x86.
    Sse,
    /// AVX without AVX2 (`Sandybridge`, `Bulldozer`, ...).
    Avx,
    /// AVX2 with FMA (`Haswell`, `Zen`, `Excavator`).
    Avx2,
    /// AVX-512 (`SkylakeX`, `Cooperlake`, `Sapphirerapids`).
    Avx512,
}

impl fmt::Display for IsaLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IsaLevel::Sse => "SSE",
            IsaLevel::Avx => "AVX",
            IsaLevel::Avx2 => "AVX2",
            IsaLevel::Avx512 => "AVX-512",
        })
    }
}

impl IsaLevel {
    /// The level an OpenBLAS kernel name (`openblas_get_corename`) is written for.
    pub fn of_kernel(name: &str) -> IsaLevel {
        match name.to_ascii_lowercase().as_str() {
            "skylakex" | "cooperlake" | "sapphirerapids" => IsaLevel::Avx512,
            "haswell" | "zen" | "excavator" => IsaLevel::Avx2,
            "sandybridge" | "bulldozer" | "piledriver" | "steamroller" => IsaLevel::Avx,
            _ => IsaLevel::Sse,
        }
    }

    /// The level of the CPU this runs on (AVX-512 meaning F, BW, DQ and VL, what
    /// OpenBLAS's `SkylakeX` kernels use).
    pub fn of_cpu() -> IsaLevel {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
            if avx2
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512dq")
                && is_x86_feature_detected!("avx512vl")
            {
                return IsaLevel::Avx512;
            }
            if avx2 {
                return IsaLevel::Avx2;
            }
            if is_x86_feature_detected!("avx") {
                return IsaLevel::Avx;
            }
        }
        IsaLevel::Sse
    }

    /// The OpenBLAS kernel to ask for on a CPU of this level (`OPENBLAS_CORETYPE` value).
    fn coretype(self) -> Option<&'static str> {
        match self {
            IsaLevel::Avx512 => Some("SkylakeX"),
            IsaLevel::Avx2 => Some("Haswell"),
            IsaLevel::Avx | IsaLevel::Sse => None,
        }
    }
}

/// The OpenBLAS kernel in use ([`blas_kernel`]); `Display` gives its name, e.g. `Haswell`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlasKernel {
    name: String,
    cpu: IsaLevel,
    reselected_from: Option<String>,
    chosen_by_env: Option<String>,
}

impl BlasKernel {
    /// OpenBLAS's name of the kernel (`openblas_get_corename`), e.g. `"SkylakeX"`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The instruction-set level the kernel is written for.
    pub fn kernel_level(&self) -> IsaLevel {
        IsaLevel::of_kernel(&self.name)
    }

    /// The instruction-set level of the CPU.
    pub fn cpu_level(&self) -> IsaLevel {
        self.cpu
    }

    /// True if the kernel is below AVX2 on a CPU that has AVX2 and FMA: a fallback that
    /// costs several times the speed of the matching kernel.
    pub fn is_degraded(&self) -> bool {
        is_degraded(&self.name, self.cpu)
    }

    /// True if the kernel is written for less than the CPU has, on a CPU with AVX2 and
    /// FMA: a degraded kernel, or an AVX2 kernel (`Haswell`, `Zen`) on a CPU with AVX-512
    /// (on an AMD EPYC Zen 5, OpenBLAS 0.3.21's `Haswell` took 1.6 times the time of its
    /// `SkylakeX` for a 1024 x 1024 gemm, 1.3 times for the inverse; see the crate guide).
    pub fn is_below_cpu(&self) -> bool {
        is_below_cpu(&self.name, self.cpu)
    }

    /// The kernel OpenBLAS had chosen at load time, if the guard replaced it.
    pub fn reselected_from(&self) -> Option<&str> {
        self.reselected_from.as_deref()
    }

    /// `OPENBLAS_CORETYPE` as it was when the guard ran, if set: the user's choice of
    /// kernel, which the guard never overrides.
    pub fn chosen_by_env(&self) -> Option<&str> {
        self.chosen_by_env.as_deref()
    }
}

impl fmt::Display for BlasKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

fn is_degraded(name: &str, cpu: IsaLevel) -> bool {
    cpu >= IsaLevel::Avx2 && IsaLevel::of_kernel(name) < IsaLevel::Avx2
}

fn is_below_cpu(name: &str, cpu: IsaLevel) -> bool {
    cpu >= IsaLevel::Avx2 && IsaLevel::of_kernel(name) < cpu
}

fn corename() -> String {
    // SAFETY: `openblas_get_corename` takes no arguments and returns a pointer to a
    // NUL-terminated static string (it is never null in OpenBLAS); we copy it at once.
    let ptr = unsafe { openblas_get_corename() };
    if ptr.is_null() {
        return String::from("unknown");
    }
    // SAFETY: checked non-null above; OpenBLAS's corename strings are NUL-terminated
    // literals that live for the whole program.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

static GUARD: Once = Once::new();
static RESELECTED_FROM: OnceLock<Option<String>> = OnceLock::new();
static CHOSEN_BY_ENV: OnceLock<Option<String>> = OnceLock::new();
/// Serialises kernel switches (`select_blas_kernel` and the guard).
static SWITCH: Mutex<()> = Mutex::new(());

/// The warning printed once when the kernel stays degraded; `chosen` is the
/// `OPENBLAS_CORETYPE` the user set, if any.
fn degraded_warning(name: &str, cpu: IsaLevel, chosen: Option<&str>) -> String {
    let remedy = cpu.coretype().unwrap_or("Haswell");
    let why = match chosen {
        Some(value) => format!("OPENBLAS_CORETYPE={value} chose it"),
        None => "it could not be switched at run time".to_string(),
    };
    format!(
        "dense-matrix: OpenBLAS runs its {name} kernel ({}) on a CPU with {cpu}, several \
         times slower than its matching kernel, and {why}; start the program with \
         OPENBLAS_CORETYPE={remedy} (or OPENBLAS_CORETYPE=Haswell on a CPU without AVX-512) \
         to fix it",
        IsaLevel::of_kernel(name)
    )
}

/// Runs the kernel guard once (before the crate's first BLAS or LAPACK call).
pub(crate) fn ensure_kernel() {
    GUARD.call_once(|| {
        let name = corename();
        let cpu = IsaLevel::of_cpu();
        let mut from = None;
        let chosen =
            std::env::var_os("OPENBLAS_CORETYPE").map(|value| value.to_string_lossy().into_owned());
        if is_below_cpu(&name, cpu) && chosen.is_none() {
            if let Some(target) = cpu.coretype() {
                let _lock = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
                // SAFETY: this runs inside `GUARD` before the crate's first BLAS call, so
                // no BLAS call of ours runs on another thread; `switch_kernel` checks the
                // symbols exist before calling them.
                if unsafe { switch_kernel(target) }.is_ok() {
                    from = Some(name.clone());
                }
            }
        }
        let now = corename();
        if is_degraded(&now, cpu) {
            eprintln!("{}", degraded_warning(&now, cpu, chosen.as_deref()));
        }
        let _ = RESELECTED_FROM.set(from);
        let _ = CHOSEN_BY_ENV.set(chosen);
    });
}

/// The kernel now in use, with what the guard recorded.
fn current_kernel() -> BlasKernel {
    BlasKernel {
        name: corename(),
        cpu: IsaLevel::of_cpu(),
        reselected_from: RESELECTED_FROM.get().cloned().flatten(),
        chosen_by_env: CHOSEN_BY_ENV.get().cloned().flatten(),
    }
}

/// The OpenBLAS kernel that runs, after the degradation guard has had its say: on an
/// x86-64 CPU with AVX2 (or AVX-512), a kernel below the CPU chosen at load time (an SSE
/// fallback; an AVX2 kernel on an AVX-512 CPU) is replaced by `Haswell` (or `SkylakeX`)
/// unless `OPENBLAS_CORETYPE` was set, and a warning is printed once if an SSE kernel
/// stays.
///
/// ```
/// let kernel = dense_matrix::blas_kernel();
/// println!("OpenBLAS kernel: {kernel} (CPU: {})", kernel.cpu_level());
/// assert!(!kernel.name().is_empty());
/// ```
pub fn blas_kernel() -> BlasKernel {
    ensure_kernel();
    current_kernel()
}

/// Switches OpenBLAS's kernel table at run time, as `OPENBLAS_CORETYPE=<coretype>` would at
/// load time (OpenBLAS's `DYNAMIC_ARCH` builds only), and returns the kernel now in use.
/// OpenBLAS ignores a name it does not know or a kernel the CPU cannot run, keeping its
/// own choice for the CPU.
///
/// An OpenBLAS without `DYNAMIC_ARCH` gives [`Error::BlasKernel`].
///
/// # Safety
/// No BLAS or LAPACK routine may run on any other thread during the call (OpenBLAS's
/// kernel table is briefly unset), and no other thread may read or write the environment
/// (`OPENBLAS_CORETYPE` is set for the switch, then restored).
pub unsafe fn select_blas_kernel(coretype: &str) -> Result<BlasKernel, Error> {
    ensure_kernel();
    let _lock = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the caller guarantees no concurrent BLAS call or environment access.
    unsafe { switch_kernel(coretype) }?;
    Ok(current_kernel())
}

#[cfg(target_os = "linux")]
extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// Looks a symbol of the loaded OpenBLAS up at run time, so that a build without it
/// still links.
#[cfg(target_os = "linux")]
fn openblas_symbol(name: &CStr) -> Option<unsafe extern "C" fn()> {
    // SAFETY: `RTLD_DEFAULT` (a null handle on glibc and musl) searches the global
    // symbol scope; `name` is NUL-terminated.
    let ptr = unsafe { dlsym(std::ptr::null_mut(), name.as_ptr()) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: checked non-null; both symbols looked up here are OpenBLAS functions of
    // type `void (void)`.
    Some(unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(ptr) })
}

/// Quit and re-run OpenBLAS's dynamic kernel selection with `OPENBLAS_CORETYPE` set.
///
/// # Safety
/// As [`select_blas_kernel`].
unsafe fn switch_kernel(coretype: &str) -> Result<(), Error> {
    #[cfg(target_os = "linux")]
    {
        let quit = openblas_symbol(c"gotoblas_dynamic_quit");
        let init = openblas_symbol(c"gotoblas_dynamic_init");
        let (Some(quit), Some(init)) = (quit, init) else {
            return Err(Error::BlasKernel {
                coretype: coretype.to_string(),
                reason: "this OpenBLAS was built without DYNAMIC_ARCH",
            });
        };
        let previous = std::env::var_os("OPENBLAS_CORETYPE");
        std::env::set_var("OPENBLAS_CORETYPE", coretype);
        // SAFETY: the caller guarantees no BLAS routine runs meanwhile; `quit` only
        // unsets the table pointer and `init` selects and initialises a table again
        // (reading OPENBLAS_CORETYPE), exactly what OpenBLAS does at load time.
        unsafe {
            quit();
            init();
        }
        match previous {
            Some(value) => std::env::set_var("OPENBLAS_CORETYPE", value),
            None => std::env::remove_var("OPENBLAS_CORETYPE"),
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(Error::BlasKernel {
            coretype: coretype.to_string(),
            reason: "switching kernels at run time is implemented for Linux only",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_map_to_their_instruction_sets() {
        let cases = [
            ("Prescott", IsaLevel::Sse),
            ("Core2", IsaLevel::Sse),
            ("Nehalem", IsaLevel::Sse),
            ("Unknown", IsaLevel::Sse),
            ("Sandybridge", IsaLevel::Avx),
            ("Haswell", IsaLevel::Avx2),
            ("Zen", IsaLevel::Avx2),
            ("SkylakeX", IsaLevel::Avx512),
            ("Cooperlake", IsaLevel::Avx512),
            ("sapphirerapids", IsaLevel::Avx512),
        ];
        for (name, level) in cases {
            assert_eq!(IsaLevel::of_kernel(name), level, "{name}");
        }
    }

    #[test]
    fn degradation_is_a_pre_avx2_kernel_on_an_avx2_cpu() {
        assert!(is_degraded("Prescott", IsaLevel::Avx512));
        assert!(is_degraded("Sandybridge", IsaLevel::Avx2));
        assert!(!is_degraded("Haswell", IsaLevel::Avx512));
        assert!(!is_degraded("Prescott", IsaLevel::Avx));
        assert!(!is_degraded("Prescott", IsaLevel::Sse));
        // below the CPU: also an AVX2 kernel on an AVX-512 CPU, which the guard replaces
        for (kernel, cpu, below) in [
            ("Prescott", IsaLevel::Avx512, true),
            ("Haswell", IsaLevel::Avx512, true),
            ("Zen", IsaLevel::Avx512, true),
            ("SkylakeX", IsaLevel::Avx512, false),
            ("Cooperlake", IsaLevel::Avx512, false),
            ("Haswell", IsaLevel::Avx2, false),
            ("Sandybridge", IsaLevel::Avx2, true),
            ("Prescott", IsaLevel::Avx, false),
        ] {
            assert_eq!(is_below_cpu(kernel, cpu), below, "{kernel} on {cpu}");
        }
        assert_eq!(
            degraded_warning("Prescott", IsaLevel::Avx512, Some("Prescott")),
            "dense-matrix: OpenBLAS runs its Prescott kernel (SSE) on a CPU with AVX-512, \
             several times slower than its matching kernel, and OPENBLAS_CORETYPE=Prescott \
             chose it; start the program with OPENBLAS_CORETYPE=SkylakeX (or \
             OPENBLAS_CORETYPE=Haswell on a CPU without AVX-512) to fix it"
        );
        assert_eq!(
            degraded_warning("Prescott", IsaLevel::Avx512, None),
            "dense-matrix: OpenBLAS runs its Prescott kernel (SSE) on a CPU with AVX-512, \
             several times slower than its matching kernel, and it could not be switched at \
             run time; start the program with OPENBLAS_CORETYPE=SkylakeX (or \
             OPENBLAS_CORETYPE=Haswell on a CPU without AVX-512) to fix it"
        );
    }

    /// The machine's own kernel matches its instruction set (not degraded), and the
    /// CPU level agrees with the features std detects.
    #[test]
    fn the_kernel_here_matches_the_cpu() {
        let kernel = blas_kernel();
        assert!(!kernel.is_degraded(), "{kernel} on {}", kernel.cpu_level());
        // a kernel below the CPU stays only when the user chose it
        if kernel.chosen_by_env().is_none() {
            assert!(!kernel.is_below_cpu(), "{kernel} on {}", kernel.cpu_level());
        }
        assert_eq!(
            kernel.chosen_by_env().map(str::to_string),
            std::env::var("OPENBLAS_CORETYPE").ok()
        );
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("fma")
        {
            assert_eq!(kernel.cpu_level(), IsaLevel::Avx512);
            assert!(kernel.kernel_level() >= IsaLevel::Avx2, "{kernel}");
        }
        assert_eq!(kernel.to_string(), kernel.name());
    }
}
