//! CPU time of the calling thread, the clock the A/B examples time with: unlike wall time
//! it leaves out the time a thread waits for a core, the main noise on a loaded machine;
//! and of the whole process, for work spread over a thread pool.

/// The CPU clock `id` (`CLOCK_THREAD_CPUTIME_ID` or `CLOCK_PROCESS_CPUTIME_ID`), in seconds.
#[cfg(unix)]
fn cpu_clock(id: libc::clockid_t, name: &str) -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable `timespec` for the call's duration and the clock id
    // is one of the C library's own constants; the call writes `t` and nothing else, and
    // its status is checked before `t` is read.
    let status = unsafe { libc::clock_gettime(id, &mut t) };
    assert_eq!(status, 0, "clock_gettime({name}) failed");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Wall time since the first call, for systems without CPU clocks.
#[cfg(not(unix))]
fn wall_since_first_call() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// CPU time of the calling thread, in seconds (on systems without a thread CPU clock, the
/// wall time since the first call).
pub fn thread_cpu_seconds() -> f64 {
    #[cfg(unix)]
    return cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID, "CLOCK_THREAD_CPUTIME_ID");
    #[cfg(not(unix))]
    return wall_since_first_call();
}

/// CPU time of every thread of this process together, in seconds (on systems without a
/// process CPU clock, the wall time since the first call).
pub fn process_cpu_seconds() -> f64 {
    #[cfg(unix)]
    return cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID, "CLOCK_PROCESS_CPUTIME_ID");
    #[cfg(not(unix))]
    return wall_since_first_call();
}

#[cfg(test)]
mod tests {
    use super::{process_cpu_seconds, thread_cpu_seconds};
    use std::time::{Duration, Instant};

    /// This thread's CPU time as the kernel's resource accounting counts it, a second
    /// clock independent of `clock_gettime`.
    #[cfg(target_os = "linux")]
    fn rusage_thread_seconds() -> f64 {
        // SAFETY: all-zero bytes are a valid `rusage` (integers and `timeval`s only).
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is a valid, writable `rusage` for the call's duration; the status
        // is checked before it is read.
        let status = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
        assert_eq!(status, 0, "getrusage(RUSAGE_THREAD) failed");
        let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Spins until the kernel has counted `seconds` of this thread's CPU (by getrusage),
    /// however loaded the machine is, or 20 s of wall time have passed.
    #[cfg(target_os = "linux")]
    fn spin_for_cpu(seconds: f64) {
        let (start, wall) = (rusage_thread_seconds(), Instant::now());
        let mut x = 1u64;
        while rusage_thread_seconds() - start < seconds && wall.elapsed() < Duration::from_secs(20)
        {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn busy_work_advances_the_clock_and_sleeping_does_not() {
        // the work is measured in CPU by a second clock, not in wall time: on a loaded
        // machine 50 ms of wall time held as little as 17 ms of CPU
        let start = thread_cpu_seconds();
        spin_for_cpu(0.05);
        let busy = thread_cpu_seconds() - start;
        assert!(
            busy >= 0.04,
            "50 ms of CPU by getrusage counted as {busy} s by the thread clock"
        );
        let before_sleep = thread_cpu_seconds();
        std::thread::sleep(Duration::from_millis(100));
        let slept = thread_cpu_seconds() - before_sleep;
        assert!(slept < 0.05, "100 ms of sleep counted as {slept} s of CPU");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_clock_counts_work_on_other_threads() {
        let (process, thread) = (process_cpu_seconds(), thread_cpu_seconds());
        std::thread::spawn(|| spin_for_cpu(0.05)).join().unwrap();
        let process = process_cpu_seconds() - process;
        assert!(
            process >= 0.04,
            "50 ms of CPU on another thread counted as {process} s of process CPU"
        );
        let thread = thread_cpu_seconds() - thread;
        assert!(
            thread < 0.02,
            "waiting for the other thread counted as {thread} s of this thread's CPU"
        );
    }
}
