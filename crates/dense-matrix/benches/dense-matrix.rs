//! Benchmarks of dense-matrix against numpy / scipy / torch (`benches/peers/dense-matrix.py`).
//!
//! Inputs (the same in the peer script): values `u = next_f64()` from
//! `benches::SplitMix64::new(seed)` in row-major order, mapped per workload:
//! - `add_mat_vec`: `M` 4096 x 4096 f32 (seed 1, `2u - 1`), `x` 4096 (seed 2, `2u - 1`);
//!   `y = M x`. Throughput counted as the bytes of `M`.
//! - `add_mat_mat`: `A`, `B` 1024 x 1024 f64 (seeds 3, 4, `2u - 1`); `C = A B`.
//!   Throughput counted as `2 n^3` flops (criterion's "elements" are flops).
//! - `apply_softmax_per_row`: 4096 x 4096 f32 (seed 5, `10u - 5`), softmax of each row.
//! - `svd`: 512 x 512 f64 (seed 6, `2u - 1`), thin SVD with U and Vt.
//! - `invert`: 1024 x 1024 f64 (seed 7, `2u - 1`, plus 1024 on the diagonal).
//! - `apply_exp`: 16 M f32 (seed 8, `20u - 10`), in place; throughput = bytes read + written.
//! - `peer_stdexp__apply_exp`: the same with a plain `f32::exp` loop (the in-Rust baseline).
//! - `peer_avx2__apply_exp`, `peer_avx2__apply_softmax_per_row`: the same workloads with
//!   the vector kernels capped at AVX2 (`set_simd_cap`), as an AVX2-only processor runs
//!   them; ours / `avx2` is what the AVX-512 copies gain (1.0 without AVX-512).
//! - `add_mat_diag_vec`: `M` 4096 x 1024 f32 (seed 9, `2u - 1`), `v` 1024 (seed 10,
//!   `2u - 1`); `out = M diag(v)` (numpy: `np.multiply(M, v, out=out)`). Throughput =
//!   bytes read + written.
//! - `group_pnorm`: 4096 x 2048 f32 (seed 11, `2u - 1`), groups of 4 columns, power 2
//!   (numpy: `np.sqrt(np.square(S).reshape(4096, 512, 4).sum(axis=2))`). Throughput =
//!   bytes read.
//! - `split_radix_real_fft`: 100,000 frames x 512 points f32 (seed 12, `2u - 1`), each
//!   row transformed in place by one `SplitRadixRealFft` plan on one thread (numpy:
//!   `np.fft.rfft(X, axis=1)`, which also returns a new array). Throughput = bytes of `X`.
//! - `compute_pca`: `X` 100,000 x 80 f32 (seed 13, `2u - 1`), the top 40 directions `U`
//!   and the projections `A = X U^T` (numpy: `np.linalg.svd(X, full_matrices=False)`, then
//!   `X @ Vt[:40].T`; and, as `numpy_eigh`, `np.linalg.eigh(X.T @ X)`, then the same
//!   product). Throughput = bytes of `X`.
//! - `top_eigs`: `S` symmetric 500 x 500 f64 (seed 13, `2u - 1`, filling the packed lower
//!   triangle row by row), its 10 eigenpairs of largest magnitude by Kaldi's Lanczos
//!   `TopEigs` (default Krylov dimension 60; scipy: `eigsh(S, k=10)`, ARPACK, which='LM').
//!   `top_eigs_converged`: the same with Krylov dimension 200, where all 10 pairs reach
//!   eigsh's precision (with 60, pairs 6 to 10 of this clustered spectrum are rougher).
//! - `add_sp_mat`: `S` symmetric 1024 x 1024 f32 (seed 14, `2u - 1`, the packed lower
//!   triangle row by row) times `B` 1024 x 1024 f32 (seed 15, `2u - 1`), `out = S B`
//!   (numpy: `np.matmul(S, B, out=out)` on the full symmetric array).
//!
//! In-place workloads time only the operation (a fresh copy of the input is made outside
//! the timed region). OpenBLAS and rayon use all cores (2 on the reference machine); the
//! thread count is printed at start.

#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use dense_matrix::{
    blas_num_threads, compute_pca, set_simd_cap, Matrix, Real, SimdLevel, SpMatrix,
    SplitRadixRealFft, Trans, Vector,
};

fn values(seed: u64, n: usize, scale: f64, offset: f64) -> Vec<f64> {
    let mut rng = benches::SplitMix64::new(seed);
    (0..n).map(|_| scale * rng.next_f64() + offset).collect()
}

fn matrix<R: Real>(seed: u64, rows: usize, cols: usize, scale: f64, offset: f64) -> Matrix<R> {
    let v: Vec<R> = values(seed, rows * cols, scale, offset)
        .into_iter()
        .map(R::from_f64)
        .collect();
    let mut m = Matrix::new(rows, cols);
    m.copy_rows_from_vec(&Vector::from_vec(v));
    m
}

fn bench(c: &mut Criterion) {
    eprintln!(
        "dense-matrix benches: OpenBLAS threads = {}, rayon threads = {}",
        blas_num_threads(),
        rayon::current_num_threads()
    );
    let mut g = c.benchmark_group("dense-matrix");
    g.sample_size(10);

    // decompositions first: criterion keeps a group's throughput setting, and these have none
    let n = benches::size(512, 4);
    let a = matrix::<f64>(6, n, n, 2.0, -1.0);
    g.bench_function("svd", |b| {
        b.iter(|| black_box(black_box(&a).svd().expect("svd")))
    });

    let n = benches::size(1024, 4);
    let mut a = matrix::<f64>(7, n, n, 2.0, -1.0);
    a.add_to_diag(n as f64);
    g.bench_function("invert", |b| {
        b.iter_batched_ref(
            || a.clone(),
            |m| m.invert().expect("invertible"),
            BatchSize::LargeInput,
        )
    });

    // issue 12's Lanczos top eigenpairs of a packed symmetric matrix
    let n = benches::size(500, 4);
    let sp = SpMatrix::<f64>::from_packed(n, values(13, n * (n + 1) / 2, 2.0, -1.0))
        .expect("n (n + 1) / 2 values");
    let mut eigs = Vector::<f64>::new(10);
    let mut vecs = Matrix::<f64>::new(n, 10);
    g.bench_function("top_eigs", |b| {
        b.iter(|| {
            black_box(&sp)
                .top_eigs(&mut eigs, &mut vecs, None)
                .expect("finite input");
            black_box(&vecs);
        })
    });
    // the same with a Krylov dimension of 200, where all 10 pairs agree with LAPACK to
    // about 1e-13 (eigsh's precision); with Kaldi's default 60 the last five are rougher
    let krylov = Some(200.min(n));
    g.bench_function("top_eigs_converged", |b| {
        b.iter(|| {
            black_box(&sp)
                .top_eigs(&mut eigs, &mut vecs, krylov)
                .expect("finite input");
            black_box(&vecs);
        })
    });

    // issue 12's product of a packed symmetric matrix and a full one (Kaldi's `AddSpMat`:
    // unpack, then gemm)
    let n = benches::size(1024, 8);
    let sp = SpMatrix::<f32>::from_packed(
        n,
        values(14, n * (n + 1) / 2, 2.0, -1.0)
            .into_iter()
            .map(|v| v as f32)
            .collect(),
    )
    .expect("n (n + 1) / 2 values");
    let bm = matrix::<f32>(15, n, n, 2.0, -1.0);
    let mut out = Matrix::<f32>::new(n, n);
    g.bench_function("add_sp_mat", |b| {
        b.iter(|| {
            out.add_sp_mat(1.0, black_box(&sp), &bm, Trans::NoTrans, 0.0);
            black_box(&out);
        })
    });

    let n = benches::size(4096, 8);
    let m = matrix::<f32>(1, n, n, 2.0, -1.0);
    let x = Vector::from_vec(
        values(2, n, 2.0, -1.0)
            .into_iter()
            .map(|v| v as f32)
            .collect(),
    );
    let mut y = Vector::<f32>::new(n);
    g.throughput(Throughput::Bytes((n * n * 4) as u64));
    g.bench_function("add_mat_vec", |b| {
        b.iter(|| {
            y.add_mat_vec(1.0, black_box(&m), Trans::NoTrans, black_box(&x), 0.0);
            black_box(&y);
        })
    });
    drop(m);

    let n = benches::size(1024, 4);
    let a = matrix::<f64>(3, n, n, 2.0, -1.0);
    let bm = matrix::<f64>(4, n, n, 2.0, -1.0);
    let mut out = Matrix::<f64>::new(n, n);
    g.throughput(Throughput::Elements((2 * n * n * n) as u64));
    g.bench_function("add_mat_mat", |b| {
        b.iter(|| {
            out.add_mat_mat(
                1.0,
                black_box(&a),
                Trans::NoTrans,
                black_box(&bm),
                Trans::NoTrans,
                0.0,
            );
            black_box(&out);
        })
    });

    let n = benches::size(4096, 8);
    let s = matrix::<f32>(5, n, n, 10.0, -5.0);
    g.throughput(Throughput::Bytes((2 * n * n * 4) as u64));
    g.bench_function("apply_softmax_per_row", |b| {
        b.iter_batched_ref(
            || s.clone(),
            |m| m.apply_softmax_per_row(),
            BatchSize::LargeInput,
        )
    });
    // the AVX2 copy, unless the level is AVX2 already (`ARRAYS_SIMD_CAP=avx2`, or an
    // AVX2-only processor), where it would time the same code again
    let above_avx2 = dense_matrix::simd_level() > SimdLevel::Avx2;
    if above_avx2 {
        let old = set_simd_cap(SimdLevel::Avx2);
        g.bench_function("peer_avx2__apply_softmax_per_row", |b| {
            b.iter_batched_ref(
                || s.clone(),
                |m| m.apply_softmax_per_row(),
                BatchSize::LargeInput,
            )
        });
        set_simd_cap(old);
    }
    drop(s);

    let len = benches::size(16 << 20, 16);
    let v = Vector::from_vec(
        values(8, len, 20.0, -10.0)
            .into_iter()
            .map(|v| v as f32)
            .collect(),
    );
    g.throughput(Throughput::Bytes((2 * len * 4) as u64));
    g.bench_function("apply_exp", |b| {
        b.iter_batched_ref(|| v.clone(), |x| x.apply_exp(), BatchSize::LargeInput)
    });
    if above_avx2 {
        let old = set_simd_cap(SimdLevel::Avx2);
        g.bench_function("peer_avx2__apply_exp", |b| {
            b.iter_batched_ref(|| v.clone(), |x| x.apply_exp(), BatchSize::LargeInput)
        });
        set_simd_cap(old);
    }
    g.bench_function("peer_stdexp__apply_exp", |b| {
        b.iter_batched_ref(
            || v.clone(),
            |x| x.data_mut().iter_mut().for_each(|e| *e = e.exp()),
            BatchSize::LargeInput,
        )
    });

    // issue 12's nnet kernels, against numpy expressions
    let (rows, cols) = (benches::size(4096, 8), 1024);
    let m = matrix::<f32>(9, rows, cols, 2.0, -1.0);
    let d = Vector::from_vec(
        values(10, cols, 2.0, -1.0)
            .into_iter()
            .map(|v| v as f32)
            .collect(),
    );
    let mut out = Matrix::<f32>::new(rows, cols);
    g.throughput(Throughput::Bytes((2 * rows * cols * 4) as u64));
    g.bench_function("add_mat_diag_vec", |b| {
        b.iter(|| {
            out.add_mat_diag_vec(1.0, black_box(&m), Trans::NoTrans, black_box(&d), 0.0);
            black_box(&out);
        })
    });
    drop(m);
    drop(out);

    let (rows, cols, group) = (benches::size(4096, 8), 2048, 4);
    let src = matrix::<f32>(11, rows, cols, 2.0, -1.0);
    let mut out = Matrix::<f32>::new(rows, cols / group);
    g.throughput(Throughput::Bytes((rows * cols * 4) as u64));
    g.bench_function("group_pnorm", |b| {
        b.iter(|| {
            out.group_pnorm(black_box(&src), 2.0);
            black_box(&out);
        })
    });

    // issue 12's split-radix real FFT: frames of 512 points, one plan, Kaldi's packing
    let (frames, n) = (benches::size(100_000, 100), 512);
    let x = matrix::<f32>(12, frames, n, 2.0, -1.0);
    let plan = SplitRadixRealFft::<f32>::new(n);
    g.throughput(Throughput::Bytes((frames * n * 4) as u64));
    g.bench_function("split_radix_real_fft", |b| {
        b.iter_batched_ref(
            || x.clone(),
            |m| {
                for r in 0..frames {
                    plan.compute(m.row_data_mut(r), true);
                }
            },
            BatchSize::LargeInput,
        )
    });

    // issue 12's ComputePca: 100,000 points of dimension 80, the top 40 directions and the
    // projections (numpy: the SVD route, and the eigh route of the scatter matrix)
    let (points, dim, keep) = (benches::size(100_000, 100), 80, 40);
    let x = matrix::<f32>(13, points, dim, 2.0, -1.0);
    let mut u = Matrix::<f32>::new(keep, dim);
    let mut a = Matrix::<f32>::new(points, keep);
    g.throughput(Throughput::Bytes((points * dim * 4) as u64));
    g.bench_function("compute_pca", |b| {
        b.iter(|| {
            black_box(compute_pca(black_box(&x), &mut u, Some(&mut a), false, true).expect("pca"));
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
