//! Benchmarks of dataflow: the image pipeline at 2560 x 1600 on 1 and 2 threads, and a
//! fused chain of maps against the hand-written loop.
//!
//! Input (the same in `benches/peers/dataflow.py`): an RGB image of `H x W` pixels from
//! `SplitMix64::new(6)`, one output per pixel in row-major order; with
//! `base = 40 + 120 * ((x / 64 + y / 64) % 2) + ((x + 2 y) % 256) / 4`, channel `c` is
//! `base + ((r >> 8c) & 15)`. Grey is our (OpenCV-exact) conversion of it.

#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use dataflow::image::{
    canny, gaussian_blur, gaussian_blur_rgb, grey, histogram, set_simd_cap, simd_level, sobel_xy,
    Canny, Norm, SimdLevel,
};
use dataflow::{compute_with, Array, Border, Dim2, Plain, SourceExt, Threads, View};

fn input() -> Array<[u8; 3], Dim2> {
    let (w, h) = (benches::size(2560, 4), benches::size(1600, 4));
    Array::from_vec(Dim2(h, w), benches::image_rgb(w, h)).expect("extent matches")
}

/// Runs `f` on the calling thread for one thread (as a sequential caller does, and as
/// OpenCV's one-thread calls run), in the pool of `t` threads otherwise. (Handing a
/// one-thread call to a pool's worker costs two thread switches per call, which showed
/// as a fixed ~40 us on the quick run's small images.)
fn on<R: Send>(p: &rayon::ThreadPool, t: usize, f: impl FnOnce() -> R + Send) -> R {
    if t == 1 {
        f()
    } else {
        p.install(f)
    }
}

fn pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("thread pool")
}

fn bench(c: &mut Criterion) {
    let rgb = input();
    let grey_img = compute_with(&grey(rgb.view()), Plain, Threads::Seq);
    let mut g = c.benchmark_group("dataflow");
    g.sample_size(10);

    let rgb_bytes: Vec<u8> = rgb.as_slice().iter().flatten().copied().collect();
    g.bench_function("peer_memcpy__grey_t1", |b| {
        let mut dst = vec![0u8; rgb_bytes.len()];
        b.iter(|| {
            dst.copy_from_slice(black_box(&rgb_bytes));
            black_box(&dst);
        })
    });

    image_workloads(&mut g, &rgb, &grey_img);
    #[cfg(feature = "imageproc-peer")]
    imageproc_peers(&mut g, &grey_img);

    // A fused chain of maps and a zip, loaded once, against the same arithmetic by hand.
    let a: Vec<f32> = grey_img.as_slice().iter().map(|&v| v as f32).collect();
    let bb: Vec<f32> = a.iter().rev().copied().collect();
    let extent = grey_img.extent();
    g.bench_function("fused_chain", |b| {
        b.iter(|| {
            let va = View::new(extent, black_box(&a[..]));
            let vb = View::new(extent, black_box(&bb[..]));
            let chain = va
                .map(|v| v * (1.0 / 255.0))
                .zip_with(vb, |x, y| x * 0.7 + y * (0.3 / 255.0))
                .expect("same extent")
                .map(|v| v * v + 0.5);
            compute_with(&chain, Plain, Threads::Seq)
        })
    });
    g.bench_function("peer_hand_loop__fused_chain", |b| {
        b.iter(|| {
            let (xa, xb) = (black_box(&a[..]), black_box(&bb[..]));
            let mut out = vec![0f32; xa.len()];
            for ((o, &x), &y) in out.iter_mut().zip(xa).zip(xb) {
                let v = (x * (1.0 / 255.0)) * 0.7 + y * (0.3 / 255.0);
                *o = v * v + 0.5;
            }
            out
        })
    });
    g.finish();
}

/// The image workloads at 1 and 2 threads; each is timed at the processor's best level
/// and then, right after, capped at AVX2 as an AVX2-only processor runs it
/// (`peer_avx2__<workload>`): the ratio ours / `avx2` is what the AVX-512 paths gain (1.0
/// on a processor without AVX-512, where the cap changes nothing).
fn image_workloads(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rgb: &Array<[u8; 3], Dim2>,
    grey_img: &Array<u8, Dim2>,
) {
    // (no AVX2 copy when the level is AVX2 already, `ARRAYS_SIMD_CAP=avx2` or an
    // AVX2-only processor: it would time the same code again)
    let above_avx2 = simd_level() > SimdLevel::Avx2;
    let mut both = |name: String, f: &mut dyn FnMut()| {
        g.bench_function(&name, |b| b.iter(&mut *f));
        if !above_avx2 {
            return;
        }
        let old = set_simd_cap(SimdLevel::Avx2);
        g.bench_function(format!("peer_avx2__{name}"), |b| b.iter(&mut *f));
        set_simd_cap(old);
    };
    for (t, name) in [(1usize, "t1"), (2, "t2")] {
        let p = pool(t);
        let threads = if t == 1 {
            Threads::Seq
        } else {
            Threads::Fixed(t)
        };
        both(format!("grey_{name}"), &mut || {
            black_box(on(&p, t, || {
                compute_with(&grey(black_box(rgb.view())), Plain, threads)
            }));
        });
        both(format!("hist_{name}"), &mut || {
            black_box(on(&p, t, || histogram(black_box(grey_img), threads)));
        });
        both(format!("blur5_grey_{name}"), &mut || {
            black_box(on(&p, t, || {
                gaussian_blur::<5, _>(black_box(grey_img), 0.0, Border::Reflect101, threads)
            }))
            .expect("blur");
        });
        both(format!("blur5_rgb_{name}"), &mut || {
            black_box(on(&p, t, || {
                gaussian_blur_rgb::<5, _>(black_box(rgb.view()), 0.0, Border::Reflect101, threads)
            }))
            .expect("blur");
        });
        both(format!("sobel_{name}"), &mut || {
            black_box(on(&p, t, || {
                sobel_xy(black_box(grey_img), Border::Reflect101, threads)
            }));
        });
        let params = Canny {
            low: 50.0,
            high: 150.0,
            norm: Norm::L1,
            threads,
        };
        both(format!("canny_{name}"), &mut || {
            black_box(on(&p, t, || canny(black_box(grey_img), &params))).expect("canny");
        });
    }
}

/// Rust peer: the crate imageproc on the same grey input as `canny_t1` / `blur5_grey_t1`.
/// Its `canny` and `gaussian_blur_f32` are sequential whatever its features, so only the
/// `_t1` workloads are measured.
#[cfg(feature = "imageproc-peer")]
fn imageproc_peers(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    grey_img: &Array<u8, Dim2>,
) {
    let Dim2(h, w) = grey_img.extent();
    let img = image::GrayImage::from_raw(w as u32, h as u32, grey_img.as_slice().to_vec())
        .expect("extent matches");
    // Same thresholds as `canny_t1`. imageproc's `canny` does more than ours: it first
    // blurs with sigma 1.4 (ours, as OpenCV's, does not blur) and thresholds the L2
    // magnitude (ours: L1).
    g.bench_function("peer_imageproc__canny_t1", |b| {
        b.iter(|| imageproc::edges::canny(black_box(&img), 50.0, 150.0))
    });
    // sigma 1.1 is what OpenCV derives for a 5-tap kernel (0.3 * ((5 - 1) / 2 - 1) + 0.8).
    // imageproc derives the kernel size from sigma (radius ceil(2 sigma) = 3, so 7 taps, in
    // f32) and replicates the border, so it is not the identical kernel: ours is 5 taps
    // in integers with reflect-101.
    g.bench_function("peer_imageproc__blur5_grey_t1", |b| {
        b.iter(|| imageproc::filter::gaussian_blur_f32(black_box(&img), 1.1))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
