//! Times the image kernels on the criterion benches' input (2560 x 1600, or the quick
//! run's 640 x 400 with `ARRAYS_BENCH_QUICK=1`) in CPU time of
//! the calling thread, which leaves out the time a thread waits for a core (the main
//! noise on a loaded machine).
//!
//! - `dataflow-simd-ab [rounds] [filter]` alternates the AVX-512 and AVX2 copies call by
//!   call (A B A B ...), one thread, and prints per workload the median, minimum and
//!   maximum of the per-round ratios AVX-512 time / AVX2 time and the ratio of the minimum
//!   times. On a processor without AVX-512 every ratio is about 1.
//! - `dataflow-simd-ab --time [reps] [filter]` times each workload `reps` times at the
//!   current level (`ARRAYS_SIMD_CAP` caps it) and prints the minimum and median thread
//!   CPU time of the one-thread run and the wall time of the two-thread run, to set
//!   beside OpenCV's figures taken the same way.
//!
//! Run: `cargo run --release -p dataflow --example dataflow-simd-ab -- [args]`; `filter`
//! keeps the workloads whose name contains it.

use std::hint::black_box;
use std::time::Instant;

use dataflow::image::{
    canny, canny_rgb, gaussian_blur, gaussian_blur_rgb, grey, histogram, set_simd_cap, simd_level,
    sobel_xy, Canny, Norm, SimdLevel,
};
use dataflow::{compute_with, Array, Border, Dim2, Plain, Threads};

use benches::thread_cpu_seconds;

/// The benches' input: see `benches/dataflow.rs` (640 x 400 with `ARRAYS_BENCH_QUICK=1`).
fn input() -> Array<[u8; 3], Dim2> {
    let (w, h) = (benches::size(2560, 4), benches::size(1600, 4));
    Array::from_vec(Dim2(h, w), benches::image_rgb(w, h)).expect("extent matches")
}

/// One workload at a thread count.
type Workload<'a> = Box<dyn Fn(Threads) + Sync + 'a>;

/// The Canny parameters every Canny workload times (OpenCV's usual 50/150) with `norm`.
fn canny_at(norm: Norm, threads: Threads) -> Canny {
    Canny {
        low: 50.0,
        high: 150.0,
        norm,
        threads,
    }
}

fn workloads<'a>(
    rgb: &'a Array<[u8; 3], Dim2>,
    grey_img: &'a Array<u8, Dim2>,
) -> Vec<(&'static str, Workload<'a>)> {
    vec![
        (
            "grey",
            Box::new(move |t| {
                black_box(compute_with(&grey(rgb.view()), Plain, t));
            }),
        ),
        (
            "hist",
            Box::new(move |t| {
                black_box(histogram(grey_img, t));
            }),
        ),
        (
            "blur5_grey",
            Box::new(move |t| {
                black_box(gaussian_blur::<5, _>(grey_img, 0.0, Border::Reflect101, t).unwrap());
            }),
        ),
        (
            "blur5_rgb",
            Box::new(move |t| {
                black_box(
                    gaussian_blur_rgb::<5, _>(rgb.view(), 0.0, Border::Reflect101, t).unwrap(),
                );
            }),
        ),
        (
            "sobel",
            Box::new(move |t| {
                black_box(sobel_xy(grey_img, Border::Reflect101, t));
            }),
        ),
        (
            "canny",
            Box::new(move |t| {
                black_box(canny(grey_img, &canny_at(Norm::L1, t)).unwrap());
            }),
        ),
        (
            "canny_l2",
            Box::new(move |t| {
                black_box(canny(grey_img, &canny_at(Norm::L2, t)).unwrap());
            }),
        ),
        (
            "canny_rgb",
            Box::new(move |t| {
                black_box(canny_rgb(rgb, &canny_at(Norm::L1, t)).unwrap());
            }),
        ),
    ]
}

fn cpu_time(f: &(dyn Fn(Threads) + Sync)) -> f64 {
    let t = thread_cpu_seconds();
    f(Threads::Seq);
    thread_cpu_seconds() - t
}

fn min_median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rgb = input();
    let grey_img = compute_with(&grey(rgb.view()), Plain, Threads::Seq);
    let all = workloads(&rgb, &grey_img);
    if args.first().map(String::as_str) == Some("--time") {
        let reps: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(30);
        let filter = args.get(2).cloned().unwrap_or_default();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a two-thread pool");
        println!("level {:?}, {reps} calls each", simd_level());
        for (name, f) in all.iter().filter(|(n, _)| n.contains(filter.as_str())) {
            f(Threads::Seq);
            let cpu: Vec<f64> = (0..reps).map(|_| cpu_time(f.as_ref())).collect();
            let wall: Vec<f64> = pool.install(|| {
                f(Threads::Fixed(2));
                (0..reps)
                    .map(|_| {
                        let t = Instant::now();
                        f(Threads::Fixed(2));
                        t.elapsed().as_secs_f64()
                    })
                    .collect()
            });
            let (c0, c1) = min_median(cpu);
            let (w0, w1) = min_median(wall);
            println!(
                "ours {name}: t1 thread cpu min {:.3} med {:.3} ms; t2 wall min {:.3} med {:.3} ms",
                c0 * 1e3,
                c1 * 1e3,
                w0 * 1e3,
                w1 * 1e3
            );
        }
        return;
    }
    let rounds: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(15);
    let filter = args.get(1).cloned().unwrap_or_default();
    println!("detected level {:?}, {rounds} rounds", simd_level());
    for (name, f) in all.iter().filter(|(n, _)| n.contains(filter.as_str())) {
        let at = |level: SimdLevel| {
            set_simd_cap(level);
            cpu_time(f.as_ref())
        };
        at(SimdLevel::Avx512);
        at(SimdLevel::Avx2);
        let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            // alternate which side goes first, so neither always runs on a warm cache
            let (ta, tb) = if round % 2 == 0 {
                let ta = at(SimdLevel::Avx512);
                (ta, at(SimdLevel::Avx2))
            } else {
                let tb = at(SimdLevel::Avx2);
                (at(SimdLevel::Avx512), tb)
            };
            a.push(ta);
            b.push(tb);
            ratios.push(ta / tb);
        }
        set_simd_cap(SimdLevel::Avx512);
        let (a0, _) = min_median(a);
        let (b0, _) = min_median(b);
        ratios.sort_by(f64::total_cmp);
        println!(
            "{name:<12} avx512/avx2 median {:.3} (min {:.3}, max {:.3}); min times {:.3} / {:.3} ms = {:.3}",
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1],
            a0 * 1e3,
            b0 * 1e3,
            a0 / b0
        );
    }
}
