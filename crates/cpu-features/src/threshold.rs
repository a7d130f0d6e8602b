//! The parallel thresholds: the sizes at and above which a kernel takes its rayon path,
//! with one per-thread override for tests and tuning ([`with_parallel_threshold`]).

use std::cell::Cell;

/// Items of light work (an offset, a compare, an add, an `exp`) at and above which
/// ragged-core's and dense-matrix's kernels take their rayon path: the default of
/// [`parallel_threshold`].
pub const DEFAULT_PARALLEL_THRESHOLD: usize = 1 << 16;

/// Elements of a delayed array (a function call each: dataflow's loads, walks and image
/// kernels) at and above which a parallel request is split into bands: the default of
/// [`load_parallel_threshold`]. Lower than [`DEFAULT_PARALLEL_THRESHOLD`] because an
/// element costs more.
pub const DEFAULT_LOAD_PARALLEL_THRESHOLD: usize = 1 << 14;

thread_local! {
    /// The threshold [`with_parallel_threshold`] set on this thread, if any.
    static OVERRIDE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The light-work threshold of the calling thread: [`DEFAULT_PARALLEL_THRESHOLD`] unless
/// [`with_parallel_threshold`] changed it.
#[inline]
pub fn parallel_threshold() -> usize {
    OVERRIDE
        .with(Cell::get)
        .unwrap_or(DEFAULT_PARALLEL_THRESHOLD)
}

/// The delayed-array threshold of the calling thread: [`DEFAULT_LOAD_PARALLEL_THRESHOLD`]
/// unless [`with_parallel_threshold`] changed it.
#[inline]
pub fn load_parallel_threshold() -> usize {
    OVERRIDE
        .with(Cell::get)
        .unwrap_or(DEFAULT_LOAD_PARALLEL_THRESHOLD)
}

/// Whether work of `n` light items takes the parallel path on the calling thread
/// (`n >= parallel_threshold()`, and never for no work).
#[inline]
pub fn go_parallel(n: usize) -> bool {
    n > 0 && n >= parallel_threshold()
}

/// Runs `f` with every parallel threshold of the calling thread set to `threshold` (`0`
/// forces the rayon paths, `usize::MAX` the sequential ones), then restores them, also
/// when `f` panics.
///
/// Results never depend on the thresholds; this exists for tests and tuning. The override
/// belongs to the calling thread: work that starts threads of its own passes it on where
/// it says so (dataflow's component-wise loads and walks).
pub fn with_parallel_threshold<R>(threshold: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            OVERRIDE.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(OVERRIDE.with(|t| t.replace(Some(threshold))));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_hold_until_overridden_and_come_back_after() {
        assert_eq!(parallel_threshold(), 65_536);
        assert_eq!(load_parallel_threshold(), 16_384);
        assert!(!go_parallel(65_535) && go_parallel(65_536) && !go_parallel(0));
        let inner = with_parallel_threshold(0, || {
            let nested = with_parallel_threshold(usize::MAX, || {
                (parallel_threshold(), go_parallel(usize::MAX - 1))
            });
            (
                nested,
                parallel_threshold(),
                load_parallel_threshold(),
                go_parallel(1),
            )
        });
        assert_eq!(inner, ((usize::MAX, false), 0, 0, true));
        assert!(!go_parallel(0), "no work never goes parallel");
        assert_eq!(parallel_threshold(), DEFAULT_PARALLEL_THRESHOLD);
        assert_eq!(load_parallel_threshold(), DEFAULT_LOAD_PARALLEL_THRESHOLD);
    }

    #[test]
    fn a_panic_restores_the_threshold() {
        let r = std::panic::catch_unwind(|| with_parallel_threshold(5, || panic!("inside")));
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"inside"));
        assert_eq!(parallel_threshold(), DEFAULT_PARALLEL_THRESHOLD);
    }

    #[test]
    fn the_override_is_the_calling_threads() {
        with_parallel_threshold(3, || {
            let other = std::thread::spawn(parallel_threshold).join().unwrap();
            assert_eq!(
                (parallel_threshold(), other),
                (3, DEFAULT_PARALLEL_THRESHOLD)
            );
        });
    }
}
