//! Alternates the AVX-512 and AVX2 copies of the `exp` kernels call by call (A B A B ...)
//! on the criterion benches' inputs and prints, per workload, the median, minimum and
//! maximum of the per-round ratios AVX-512 time / AVX2 time, and the ratio of the minimum
//! times, both in CPU time of the calling thread (the per-row softmax runs on one
//! thread here: the rows are left to rayon only from `DEFAULT_PARALLEL_THRESHOLD` elements on, so the example sets
//! a one-thread pool). Alternating within one process lands a burst of noise from other work on both
//! sides alike, which sequential criterion runs do not.
//!
//! Run: `cargo run --release -p dense-matrix --example dense-matrix-simd-ab [rounds]` (default 15).
//! On a processor without AVX-512 both sides run the AVX2 copy and every ratio is about 1.

use std::hint::black_box;
#[cfg(not(target_os = "linux"))]
use std::time::Instant;

use dense_matrix::{set_simd_cap, Matrix, SimdLevel, Vector};

use benches::thread_cpu_seconds;

/// A small deterministic generator (SplitMix64, as the benches use), uniform in [0, 1).
struct Rng(u64);
impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One workload: makes a fresh input, then hands the timed operation to its argument.
type Workload<'a> = &'a mut dyn FnMut(&mut dyn FnMut(&mut dyn FnMut()));

/// Seconds of one timed operation of `f` at `level`.
fn time_at(level: SimdLevel, f: Workload<'_>) -> f64 {
    set_simd_cap(level);
    let mut seconds = 0.0;
    f(&mut |work: &mut dyn FnMut()| {
        let t = thread_cpu_seconds();
        work();
        seconds = thread_cpu_seconds() - t;
    });
    seconds
}

fn report(name: &str, rounds: usize, f: Workload<'_>) {
    time_at(SimdLevel::Avx512, f);
    time_at(SimdLevel::Avx2, f);
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // alternate which side goes first, so neither always runs on a warm cache
        let (ta, tb) = if round % 2 == 0 {
            let ta = time_at(SimdLevel::Avx512, f);
            (ta, time_at(SimdLevel::Avx2, f))
        } else {
            let tb = time_at(SimdLevel::Avx2, f);
            (time_at(SimdLevel::Avx512, f), tb)
        };
        a.push(ta);
        b.push(tb);
        ratios.push(ta / tb);
    }
    set_simd_cap(SimdLevel::Avx512);
    ratios.sort_by(f64::total_cmp);
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "{name:<22} avx512/avx2 median {:.3} (min {:.3}, max {:.3}); min times {:.2} / {:.2} ms = {:.3}",
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1],
        min(&a) * 1e3,
        min(&b) * 1e3,
        min(&a) / min(&b),
    );
}

fn main() {
    // One thread: its CPU time is the kernels' time.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    pool.install(run);
}

fn run() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    println!(
        "detected level {:?}, {rounds} rounds",
        dense_matrix::detected_simd()
    );
    let mut rng = Rng(8);
    let v = Vector::from_vec(
        (0..16 << 20)
            .map(|_| (20.0 * rng.next_f64() - 10.0) as f32)
            .collect(),
    );
    report("apply_exp f32", rounds, &mut |time| {
        let mut x = v.clone();
        time(&mut || x.apply_exp());
        black_box(&x);
    });
    let v64 = Vector::from_vec(v.data().iter().map(|&x| x as f64).collect::<Vec<f64>>());
    drop(v);
    report("apply_exp f64", rounds, &mut |time| {
        let mut x = v64.clone();
        time(&mut || x.apply_exp());
        black_box(&x);
    });
    drop(v64);
    let n = 4096;
    let mut rng = Rng(5);
    let mut s = Matrix::<f32>::new(n, n);
    for r in 0..n {
        for c in 0..n {
            s[(r, c)] = (10.0 * rng.next_f64() - 5.0) as f32;
        }
    }
    report("apply_softmax_per_row", rounds, &mut |time| {
        let mut m = s.clone();
        time(&mut || m.apply_softmax_per_row());
        black_box(&m);
    });
}
