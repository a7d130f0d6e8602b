//! A tour of dataflow: a photograph-like scene made as a delayed array, then grey,
//! histogram (as a bar chart picture), equalisation, Gaussian blur, gradient and Canny edges,
//! each written as a PNG under `DEMO_OUT_DIR` (default `target/demo/dataflow`).

use std::path::{Path, PathBuf};

use dataflow::image::{
    canny, equalize_hist, gaussian_blur, grey, histogram, magnitude_l1, sobel_dx, sobel_dy, Canny,
    Norm,
};
use dataflow::{compute_with, from_fn, Array, BlockFill, Border, Dim2, Plain, SourceExt, Threads};

const W: usize = 640;
const H: usize = 400;

/// A hash of a lattice point to `[0, 1)`.
fn hash(ix: i64, iy: i64, seed: u64) -> f32 {
    let mut z = (ix as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (iy as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
}

/// Smooth value noise with cells of `cell` pixels.
fn noise(x: f32, y: f32, cell: f32, seed: u64) -> f32 {
    let (fx, fy) = (x / cell, y / cell);
    let (ix, iy) = (fx.floor() as i64, fy.floor() as i64);
    let (tx, ty) = (fx - fx.floor(), fy - fy.floor());
    let (sx, sy) = (tx * tx * (3.0 - 2.0 * tx), ty * ty * (3.0 - 2.0 * ty));
    let top = hash(ix, iy, seed) * (1.0 - sx) + hash(ix + 1, iy, seed) * sx;
    let bottom = hash(ix, iy + 1, seed) * (1.0 - sx) + hash(ix + 1, iy + 1, seed) * sx;
    top * (1.0 - sy) + bottom * sy
}

/// The scene at one pixel: sky with clouds, a sun, three textured ridges, a lake, grain.
fn scene(Dim2(y, x): Dim2) -> [u8; 3] {
    let (xf, yf) = (x as f32, y as f32);
    let t = yf / H as f32;
    let clouds =
        (0.6 * noise(xf, yf, 60.0, 1) + 0.4 * noise(xf, yf, 22.0, 2) - 0.55).max(0.0) * 220.0;
    let mut px = [
        90.0 + 100.0 * t + clouds,
        140.0 + 80.0 * t + clouds,
        230.0 - 30.0 * t + clouds,
    ];
    if (yf - 90.0).powi(2) + (xf - 480.0).powi(2) < 34.0f32.powi(2) {
        px = [255.0, 240.0, 190.0];
    }
    let ridges = [
        (175.0, 45.0, [70.0, 110.0, 80.0]),
        (240.0, 35.0, [50.0, 95.0, 45.0]),
        (295.0, 22.0, [85.0, 120.0, 50.0]),
    ];
    for (k, (base, amp, colour)) in ridges.into_iter().enumerate() {
        let ridge = base
            + amp * (xf / (58.0 + 22.0 * k as f32) + k as f32).sin()
            + 25.0 * noise(xf, 0.0, 40.0, 10 + k as u64);
        if yf > ridge {
            let tex = noise(xf, yf, 12.0 + 5.0 * k as f32, 20 + k as u64) * 50.0 - 25.0;
            px = colour.map(|c| c + tex);
        }
    }
    if yf > 330.0 && (xf - 200.0).abs() < 150.0 + (yf - 330.0) * 2.0 {
        px = [px[0] * 0.4 + 24.0, px[1] * 0.4 + 42.0, px[2] * 0.4 + 72.0];
    }
    let grain = (hash(x as i64, y as i64, 99) - 0.5) * 10.0;
    px.map(|c| (c + grain).round().clamp(0.0, 255.0) as u8)
}

fn save_grey(dir: &Path, name: &str, img: Array<u8, Dim2>) -> PathBuf {
    let path = dir.join(name);
    img.into_luma().save(&path).expect("write PNG");
    println!("artefact: {}", path.display());
    path
}

fn main() {
    let dir = std::env::var_os("DEMO_OUT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/demo/dataflow"));
    std::fs::create_dir_all(&dir).expect("create the output directory");
    let threads = Threads::All;

    // The scene is a delayed array: a function of the index, evaluated once, in 2-D tiles.
    let rgb = compute_with(
        &from_fn(Dim2(H, W), scene),
        BlockFill { bx: 64, by: 16 },
        threads,
    );
    println!(
        "scene: {W} x {H} RGB, computed from an index function in 64 x 16 tiles on {} threads",
        threads.count()
    );
    let path = dir.join("scene.png");
    rgb.clone().into_rgb().save(&path).expect("write PNG");
    println!("artefact: {}", path.display());

    // Grey: a fused map with OpenCV's fixed-point weights.
    let grey_img = compute_with(&grey(rgb.view()), Plain, threads);
    save_grey(&dir, "grey.png", grey_img.clone());

    // Histogram: a parallel walk with per-band tables joined, drawn as a bar chart.
    let hist = histogram(&grey_img, threads);
    let peak = *hist.iter().max().unwrap_or(&1).max(&1);
    let (chart_h, bar_w) = (160usize, 3usize);
    let chart = from_fn(Dim2(chart_h, 256 * bar_w), |Dim2(y, x)| {
        let bar = (hist[x / bar_w] as f64 / peak as f64 * (chart_h - 1) as f64).round() as usize;
        if chart_h - 1 - y < bar {
            40u8
        } else {
            235
        }
    });
    let busiest = (0..256).max_by_key(|&i| hist[i]).unwrap_or(0);
    println!(
        "histogram: {} pixels, most frequent level {busiest} ({} pixels)",
        hist.iter().sum::<u64>(),
        hist[busiest]
    );
    save_grey(&dir, "histogram.png", compute_with(&chart, Plain, threads));

    let equalised = equalize_hist(&grey_img, threads);
    save_grey(&dir, "equalised.png", equalised);

    // Blur: separable 5x5 Gaussian, the row pass loaded once, the column pass fused with rounding.
    let blurred =
        gaussian_blur::<5, _>(&grey_img, 0.0, Border::Reflect101, threads).expect("odd kernel");
    save_grey(&dir, "blurred.png", blurred.clone());

    // Gradient: two Sobel stencils zipped into the L1 magnitude and scaled, all in one loop.
    let magnitude = magnitude_l1(
        sobel_dx(&blurred, Border::Reflect101),
        sobel_dy(&blurred, Border::Reflect101),
    )
    .expect("same extent")
    .map(|m| (m / 4).min(255) as u8);
    save_grey(
        &dir,
        "gradient.png",
        compute_with(&magnitude, Plain, threads),
    );

    let params = Canny {
        low: 20.0,
        high: 60.0,
        norm: Norm::L2,
        threads,
    };
    let edges = canny(&blurred, &params).expect("valid thresholds");
    let on = edges.as_slice().iter().filter(|&&v| v == 255).count();
    println!(
        "canny (L2, 20/60) on the blurred image: {on} edge pixels ({:.2}%)",
        100.0 * on as f64 / (W * H) as f64
    );
    save_grey(&dir, "edges.png", edges);
}
