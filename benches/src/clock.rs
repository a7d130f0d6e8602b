//! The CPU time of the calling thread, the clock the A/B examples time with: unlike wall
//! time it leaves out the time a thread waits for a core, the main noise on a loaded
//! machine.

/// CPU time of the calling thread, in seconds (on systems without a thread CPU clock, the
/// wall time since the first call).
#[cfg(unix)]
pub fn thread_cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable `timespec` for the call's duration and the clock id
    // is the C library's own constant; the call writes `t` and nothing else, and its
    // status is checked before `t` is read.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// CPU time of the calling thread, in seconds (on systems without a thread CPU clock, the
/// wall time since the first call).
#[cfg(not(unix))]
pub fn thread_cpu_seconds() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::thread_cpu_seconds;
    use std::time::{Duration, Instant};

    #[test]
    fn busy_work_advances_the_clock_and_sleeping_does_not() {
        let start = thread_cpu_seconds();
        let wall = Instant::now();
        let mut x = 1u64;
        while wall.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let busy = thread_cpu_seconds() - start;
        assert!(
            busy >= 0.02,
            "50 ms of busy work counted as {busy} s of CPU"
        );
        let before_sleep = thread_cpu_seconds();
        std::thread::sleep(Duration::from_millis(100));
        let slept = thread_cpu_seconds() - before_sleep;
        if cfg!(unix) {
            assert!(slept < 0.05, "100 ms of sleep counted as {slept} s of CPU");
        }
    }
}
