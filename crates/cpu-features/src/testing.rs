//! Holding the process-wide cap for the length of a closure: at one level
//! ([`with_simd_cap`]) or at every level the processor has ([`at_every_level`]), the
//! helpers the crates' tests and A/B examples compare their kernels' copies with.

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};

use crate::level::{detected_simd, set_simd_cap, simd_level, SimdLevel};

/// Serialises the closures that hold the cap: the cap is one for the whole process, so two
/// tests of one binary (of any crate) must not set it at once.
static CAP_LOCK: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread holds [`CAP_LOCK`] (so a nested call does not wait for itself).
    static HOLDS_CAP: Cell<bool> = const { Cell::new(false) };
}

/// The lock, taken unless this thread holds it already; released, and the cap restored,
/// when dropped (also when the closure panics).
struct CapHold {
    guard: Option<MutexGuard<'static, ()>>,
    old_cap: SimdLevel,
}

impl CapHold {
    fn take() -> CapHold {
        let guard = if HOLDS_CAP.with(Cell::get) {
            None
        } else {
            let guard = CAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            HOLDS_CAP.with(|h| h.set(true));
            Some(guard)
        };
        // reads the current cap without changing it
        let old_cap = set_simd_cap(SimdLevel::Avx512);
        set_simd_cap(old_cap);
        CapHold { guard, old_cap }
    }
}

impl Drop for CapHold {
    fn drop(&mut self) {
        set_simd_cap(self.old_cap);
        if self.guard.take().is_some() {
            HOLDS_CAP.with(|h| h.set(false));
        }
    }
}

/// Runs `f` with the process-wide cap at `level`, then restores the cap (also when `f`
/// panics). Calls from other threads wait meanwhile; a nested call from `f` does not.
pub fn with_simd_cap<R>(level: SimdLevel, f: impl FnOnce() -> R) -> R {
    let _hold = CapHold::take();
    set_simd_cap(level);
    f()
}

/// Runs `f` once at each level this processor has (lowest first), with the cap at that
/// level, and returns the results in that order; for tests that compare the copies of a
/// kernel with each other and with a model.
///
/// # Panics
///
/// Panics if [`simd_level`] does not follow the cap (which would be a defect of this crate),
/// and when `f` panics.
pub fn at_every_level<R>(mut f: impl FnMut(SimdLevel) -> R) -> Vec<R> {
    let _hold = CapHold::take();
    SimdLevel::ALL
        .into_iter()
        .filter(|&level| level <= detected_simd())
        .map(|level| {
            with_simd_cap(level, || {
                assert_eq!(simd_level(), level, "the cap did not hold");
                f(level)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_every_level_visits_the_processors_levels_in_order_and_restores_the_cap() {
        with_simd_cap(SimdLevel::Avx2, || {
            let seen = at_every_level(|level| (level, simd_level()));
            let want: Vec<SimdLevel> = SimdLevel::ALL
                .into_iter()
                .filter(|&l| l <= detected_simd())
                .collect();
            assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), want);
            assert!(seen.iter().all(|(asked, got)| asked == got));
            assert_eq!(simd_level(), detected_simd().min(SimdLevel::Avx2));
        });
    }

    #[test]
    fn the_cap_is_restored_after_a_panic_and_the_lock_freed() {
        let before = with_simd_cap(SimdLevel::Avx512, simd_level);
        let r = std::panic::catch_unwind(|| {
            with_simd_cap(SimdLevel::Scalar, || panic!("inside"));
        });
        assert!(r.is_err());
        // not poisoned for this thread's next call, and the cap is back
        assert_eq!(with_simd_cap(SimdLevel::Avx512, simd_level), before);
        assert!(!HOLDS_CAP.with(Cell::get));
    }

    #[test]
    fn another_thread_waits_for_the_cap() {
        let other = with_simd_cap(SimdLevel::Scalar, || {
            let other = std::thread::spawn(|| with_simd_cap(SimdLevel::Avx512, simd_level));
            std::thread::sleep(std::time::Duration::from_millis(20));
            // the other thread has not changed the cap under this closure
            assert_eq!(simd_level(), SimdLevel::Scalar);
            other
        });
        assert_eq!(other.join().unwrap(), detected_simd());
    }
}
