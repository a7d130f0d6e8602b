//! Compares OpenBLAS kernels on the criterion benches' BLAS and LAPACK workloads
//! (`add_mat_mat` 1024 f64, `add_mat_vec` 4096 f32, `svd` 512 f64, `invert` 1024 f64):
//! the kernels are switched with `select_blas_kernel` call by call (A B C A B C ...), so
//! noise from other work on the machine lands on all of them alike, and each call is
//! timed in CPU time of the calling thread with OpenBLAS on that one thread. Prints per
//! workload and kernel the minimum and median time and the median per-round ratio to the
//! first kernel.
//!
//! Run: `cargo run --release -p dense-matrix --example dense-matrix-blas-ab -- [rounds]
//! [kernels]`, e.g. `15 Haswell,SkylakeX,Cooperlake` (the default); `ARRAYS_BENCH_QUICK=1`
//! takes the quick run's smaller sizes, `OPENBLAS_AB_THREADS=n` gives OpenBLAS `n`
//! threads (then the calling thread's CPU time is only part of the work). A kernel the CPU
//! cannot run is refused by OpenBLAS, which keeps its own choice: the printed name is
//! the kernel that ran.

use std::hint::black_box;
#[cfg(not(target_os = "linux"))]
use std::time::Instant;

use dense_matrix::{select_blas_kernel, set_blas_num_threads, Matrix, Real, Trans, Vector};

use benches::thread_cpu_seconds;

/// One timed call of a workload, returning its seconds.
type Workload<'a> = Box<dyn FnMut() -> f64 + 'a>;

/// The benches' matrices: SplitMix64 `scale * u + offset`, row by row.
fn matrix<R: Real>(seed: u64, rows: usize, cols: usize, scale: f64, offset: f64) -> Matrix<R> {
    let mut rng = benches::SplitMix64::new(seed);
    let v: Vec<R> = (0..rows * cols)
        .map(|_| R::from_f64(scale * rng.next_f64() + offset))
        .collect();
    let mut m = Matrix::new(rows, cols);
    m.copy_rows_from_vec(&Vector::from_vec(v));
    m
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(15);
    let kernels: Vec<String> = args
        .get(1)
        .map_or("Haswell,SkylakeX,Cooperlake", String::as_str)
        .split(',')
        .map(str::to_string)
        .collect();

    // the benches' sizes (a quarter or an eighth with ARRAYS_BENCH_QUICK=1)
    let (n_mm, n_mv, n_svd, n_inv) = (
        benches::size(1024, 4),
        benches::size(4096, 8),
        benches::size(512, 4),
        benches::size(1024, 4),
    );
    let threads: usize = std::env::var("OPENBLAS_AB_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    set_blas_num_threads(threads);
    let a = matrix::<f64>(3, n_mm, n_mm, 2.0, -1.0);
    let b = matrix::<f64>(4, n_mm, n_mm, 2.0, -1.0);
    let mut c = Matrix::<f64>::new(n_mm, n_mm);
    let m = matrix::<f32>(1, n_mv, n_mv, 2.0, -1.0);
    let mut rng = benches::SplitMix64::new(2);
    let x = Vector::from_vec(
        (0..n_mv)
            .map(|_| (2.0 * rng.next_f64() - 1.0) as f32)
            .collect(),
    );
    let mut y = Vector::<f32>::new(n_mv);
    let s = matrix::<f64>(6, n_svd, n_svd, 2.0, -1.0);
    let mut inv = matrix::<f64>(7, n_inv, n_inv, 2.0, -1.0);
    inv.add_to_diag(n_inv as f64);

    let mut workloads: Vec<(&str, Workload<'_>)> = vec![
        (
            "add_mat_mat",
            Box::new(|| {
                let t = thread_cpu_seconds();
                c.add_mat_mat(1.0, &a, Trans::NoTrans, &b, Trans::NoTrans, 0.0);
                black_box(&c);
                thread_cpu_seconds() - t
            }),
        ),
        (
            "add_mat_vec",
            Box::new(|| {
                let t = thread_cpu_seconds();
                y.add_mat_vec(1.0, &m, Trans::NoTrans, &x, 0.0);
                black_box(&y);
                thread_cpu_seconds() - t
            }),
        ),
        (
            "svd",
            Box::new(|| {
                let t = thread_cpu_seconds();
                black_box(s.svd().expect("svd"));
                thread_cpu_seconds() - t
            }),
        ),
        (
            "invert",
            Box::new(|| {
                let mut m = inv.clone();
                let t = thread_cpu_seconds();
                m.invert().expect("invertible");
                let dt = thread_cpu_seconds() - t;
                black_box(&m);
                dt
            }),
        ),
    ];

    let select = |name: &str| {
        // SAFETY: this program calls BLAS from this thread only, and no other thread
        // reads or writes the environment.
        unsafe { select_blas_kernel(name) }
            .expect("OpenBLAS with DYNAMIC_ARCH")
            .to_string()
    };
    let ran: Vec<String> = kernels.iter().map(|k| select(k)).collect();
    println!(
        "kernels asked {kernels:?}, ran {ran:?}; {rounds} rounds, {threads} OpenBLAS thread(s)"
    );
    for (name, work) in &mut workloads {
        let mut times = vec![Vec::new(); kernels.len()];
        for kernel in &kernels {
            select(kernel);
            work();
        }
        for round in 0..rounds {
            // rotate the order so no kernel always runs first
            for i in 0..kernels.len() {
                let k = (i + round) % kernels.len();
                select(&kernels[k]);
                times[k].push(work());
            }
        }
        for (k, t) in times.iter().enumerate() {
            let mut sorted = t.clone();
            sorted.sort_by(f64::total_cmp);
            let mut ratios: Vec<f64> = t.iter().zip(&times[0]).map(|(x, y)| x / y).collect();
            ratios.sort_by(f64::total_cmp);
            println!(
                "{name:<12} {:<11} min {:8.3} ms, median {:8.3} ms; / {}: median {:.3} (min {:.3}, max {:.3})",
                ran[k],
                sorted[0] * 1e3,
                sorted[sorted.len() / 2] * 1e3,
                ran[0],
                ratios[ratios.len() / 2],
                ratios[0],
                ratios[ratios.len() - 1]
            );
        }
    }
}
