//! The Canny edge detector as `cv2.Canny` computes it: Sobel 3x3 with replicated borders,
//! magnitude (L1 or squared L2 in integers), non-maximum suppression with OpenCV's sector
//! tests and tie rules, double threshold, and 8-connected hysteresis that is deterministic
//! in parallel (a local pass per band, then a serial fix-up across band borders). RGB
//! images take, at each pixel, the gradient of the channel with the largest magnitude.
//!
//! By concern: this file holds the parameters, the thresholds, the dispatch by level and
//! the driver (bands, the flood across band borders, the output); `classify.rs` the
//! suppression and double threshold (the pixel decision, the compiled chunk and band
//! loops, the grey and RGB gradient rows); `x86.rs` the hand-written AVX2 and AVX-512
//! row kernels; `flood.rs` the hysteresis flood; `tests.rs`
//! and `row_kernel_tests.rs` the tests.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::error::Error;
use crate::explicit::Array;
use crate::load::{schedule_bands, Threads};
use crate::shape::{Dim2, Shape};
use crate::source::Source;

mod classify;
mod flood;
#[cfg(all(test, target_arch = "x86_64"))]
mod row_kernel_tests;
#[cfg(test)]
mod tests;
mod x86;

#[cfg(target_arch = "x86_64")]
use classify::classify_band_rows_avx2;
use classify::{
    classify_band, classify_band_rows, decide_row_none, seeds_none, sobel_row_none, GreyRows,
    RgbRows,
};
use flood::{edge_positions, flood};
#[cfg(target_arch = "x86_64")]
use x86::{
    decide_row_avx2, decide_row_avx512, decide_row_l2_avx2, decide_row_l2_avx512, seeds_avx2,
    seeds_avx512, sobel_l1_row_avx2, sobel_l1_row_avx512, sobel_l2_row_avx2, sobel_l2_row_avx512,
};
use x86::{RowKernel, SeedKernel, SobelKernel};

/// The gradient norm used for the thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Norm {
    /// `|dx| + |dy|` (OpenCV's default).
    #[default]
    L1,
    /// `sqrt(dx^2 + dy^2)`, compared as `dx^2 + dy^2` against squared thresholds.
    L2,
}

/// Parameters of [`canny`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Canny {
    /// The low (weak-edge) threshold.
    pub low: f64,
    /// The high (strong-edge) threshold; swapped with `low` when smaller, as OpenCV does.
    pub high: f64,
    /// The gradient norm.
    pub norm: Norm,
    /// Threads of every stage.
    pub threads: Threads,
}

impl Default for Canny {
    fn default() -> Self {
        Canny {
            low: 50.0,
            high: 150.0,
            norm: Norm::L1,
            threads: Threads::All,
        }
    }
}

/// `tan(22.5 deg)` with 15 fraction bits, rounded.
const TG22: i32 = 13573;
const SHIFT: u32 = 15;

/// Map classes during suppression and hysteresis.
const NONE: u8 = 0;
const WEAK: u8 = 1;
const EDGE: u8 = 2;

/// The integer thresholds OpenCV compares magnitudes against.
fn thresholds(p: &Canny) -> Result<(i64, i64), Error> {
    for (name, v) in [("low", p.low), ("high", p.high)] {
        if v.is_nan() {
            return Err(Error::InvalidArgument {
                name,
                value: v.to_string(),
                rule: "a Canny threshold must be a number",
            });
        }
    }
    let (mut low, mut high) = if p.low > p.high {
        (p.high, p.low)
    } else {
        (p.low, p.high)
    };
    if p.norm == Norm::L2 {
        low = low.min(32767.0);
        high = high.min(32767.0);
        if low > 0.0 {
            low *= low;
        }
        if high > 0.0 {
            high *= high;
        }
    }
    Ok((
        low.floor().max(i64::MIN as f64) as i64,
        high.floor().max(i64::MIN as f64) as i64,
    ))
}

/// `out` filled with `value`, as initialised bytes.
fn init_bytes(out: &mut [MaybeUninit<u8>], value: u8) -> &mut [u8] {
    for b in out.iter_mut() {
        b.write(value);
    }
    // SAFETY: every element was written just above, and `MaybeUninit<u8>` has the layout
    // of `u8`; the exclusive borrow moves into the result.
    unsafe { &mut *(out as *mut [MaybeUninit<u8>] as *mut [u8]) }
}

/// The kernels of a band's rows at `level`, for magnitudes of type `M`: the Sobel row,
/// the decision and the seed scan.
type Kernels<M> = (SobelKernel<M>, RowKernel<M>, SeedKernel);

/// The row kernels of L1 and L2 at `level` (`None` below AVX2: the generic
/// classification for grey images, the plain loops for RGB).
fn kernels(level: cpu_features::SimdLevel) -> Option<(Kernels<i16>, Kernels<i32>)> {
    #[cfg(target_arch = "x86_64")]
    {
        use cpu_features::SimdLevel;
        if level >= SimdLevel::Avx512 {
            return Some((
                (sobel_l1_row_avx512, decide_row_avx512, seeds_avx512),
                (sobel_l2_row_avx512, decide_row_l2_avx512, seeds_avx512),
            ));
        }
        if level >= SimdLevel::Avx2 {
            return Some((
                (sobel_l1_row_avx2, decide_row_avx2, seeds_avx2),
                (sobel_l2_row_avx2, decide_row_l2_avx2, seeds_avx2),
            ));
        }
    }
    let _ = level;
    None
}

/// Suppression and double threshold of the rows `band` of a grey image into `out` (the
/// band's rows, all `NONE`): by the row kernels of `level` (AVX2 and up), else by the
/// generic classification. Returns the flood's seeds.
fn classify_grey<A: Source<Shape = Dim2, Elem = u8>>(
    level: cpu_features::SimdLevel,
    a: &A,
    norm: Norm,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [u8],
) -> Vec<(u32, u32)> {
    #[cfg(target_arch = "x86_64")]
    if let Some(((s1, d1, e1), (s2, d2, e2))) = kernels(level) {
        // `kernels` gives the kernels of `level`, which comes from `simd_level()` (capped
        // by the detected level), and `classify_band_rows_avx2` needs AVX2, which every
        // such level includes.
        return match norm {
            // SAFETY: the processor has the kernels' features and AVX2 (above).
            Norm::L1 => unsafe {
                let mut grads = GreyRows::new(a, s1);
                classify_band_rows_avx2(&mut grads, low, high, band, out, (d1, e1))
            },
            // SAFETY: as for L1.
            Norm::L2 => unsafe {
                let mut grads = GreyRows::new(a, s2);
                classify_band_rows_avx2(&mut grads, low, high, band, out, (d2, e2))
            },
        };
    }
    let _ = level;
    classify_band(a, norm, low, high, band, out)
}

/// [`classify_grey`] for an RGB image: each channel's gradient, the channel with the
/// largest magnitude at each pixel (see [`RgbRows`]), then the rows of a grey image;
/// below AVX2, the same by the plain loops.
fn classify_rgb<A: Source<Shape = Dim2, Elem = [u8; 3]>>(
    level: cpu_features::SimdLevel,
    a: &A,
    norm: Norm,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [u8],
) -> Vec<(u32, u32)> {
    #[cfg(target_arch = "x86_64")]
    if let Some(((s1, d1, e1), (s2, d2, e2))) = kernels(level) {
        return match norm {
            // SAFETY: the processor has the kernels' features and AVX2, as in
            // `classify_grey`.
            Norm::L1 => unsafe {
                let mut grads = RgbRows::new(a, s1);
                classify_band_rows_avx2(&mut grads, low, high, band, out, (d1, e1))
            },
            // SAFETY: as for L1.
            Norm::L2 => unsafe {
                let mut grads = RgbRows::new(a, s2);
                classify_band_rows_avx2(&mut grads, low, high, band, out, (d2, e2))
            },
        };
    }
    let _ = level;
    match norm {
        // SAFETY: the plain loops need no target feature.
        Norm::L1 => unsafe {
            let mut grads = RgbRows::<_, i16>::new(a, sobel_row_none);
            classify_band_rows(
                &mut grads,
                low,
                high,
                band,
                out,
                (decide_row_none, seeds_none),
            )
        },
        // SAFETY: as for L1.
        Norm::L2 => unsafe {
            let mut grads = RgbRows::<_, i32>::new(a, sobel_row_none);
            classify_band_rows(
                &mut grads,
                low,
                high,
                band,
                out,
                (decide_row_none, seeds_none),
            )
        },
    }
}

/// Canny edges of a grey image: 255 on edges, 0 elsewhere (`cv2.Canny(img, low, high,
/// L2gradient = norm == L2)` with aperture 3). Like OpenCV, the input is not blurred.
///
/// One pass per row band: the Sobel gradient of each row (replicated borders) is computed
/// once and kept for three rows only, suppression and the double threshold write the map,
/// and a flood grows edges inside the band; then a serial flood from the edge pixels of
/// every band's first and last row crosses bands, so the result does not depend on the
/// bands. Working memory: the edge map (`u8`, which becomes the output), row buffers and
/// the flood stacks.
///
/// # Panics
/// If the extent's size overflows `usize` (no such image fits in memory; a delayed source
/// can claim one).
pub fn canny<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    params: &Canny,
) -> Result<Array<u8, Dim2>, Error> {
    canny_with(a, params, avx512_rows_pay())
}

/// Whether L1 takes the hand-written AVX-512 rows where the level allows them: only on
/// processors that run 512-bit operations at full width. On a Zen 4, which issues them as
/// two 256-bit halves, they took 1.02-1.06x the AVX2 rows' time (median of alternated
/// calls; ratio of the minima 1.06-1.11), on an Intel Xeon 0.86-0.88x (see the guide).
fn avx512_rows_pay() -> bool {
    !cpu_features::splits_512_bit_ops()
}

/// [`canny`], with the AVX-512 rows for L1 where the level allows them and `avx512_rows`
/// asks for them (the tests run both choices on any processor with AVX-512).
fn canny_with<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    params: &Canny,
    avx512_rows: bool,
) -> Result<Array<u8, Dim2>, Error> {
    let (low, high) = thresholds(params)?;
    let level = row_level(avx512_rows);
    Ok(edges(a.extent(), params.threads, |band, out| {
        classify_grey(level, a, params.norm, low, high, band, out)
    }))
}

/// Canny edges of an RGB image as `cv2.Canny` finds them on a 3-channel image: the Sobel
/// gradient of each channel and, at each pixel, the gradient of the channel with the
/// largest magnitude (in `params.norm`; the first channel on ties) go through the
/// suppression, threshold and hysteresis of [`canny`]. Channels count in the order they
/// are stored, as OpenCV counts them, so the result equals OpenCV's on the same pixels
/// whether they are RGB or BGR (swapping the channels can change which of two equal
/// magnitudes, with different directions, wins).
///
/// # Panics
/// As [`canny`].
pub fn canny_rgb<A: Source<Shape = Dim2, Elem = [u8; 3]>>(
    a: &A,
    params: &Canny,
) -> Result<Array<u8, Dim2>, Error> {
    canny_rgb_with(a, params, avx512_rows_pay())
}

/// [`canny_rgb`], with the AVX-512 rows as [`canny_with`] takes them.
fn canny_rgb_with<A: Source<Shape = Dim2, Elem = [u8; 3]>>(
    a: &A,
    params: &Canny,
    avx512_rows: bool,
) -> Result<Array<u8, Dim2>, Error> {
    let (low, high) = thresholds(params)?;
    let level = row_level(avx512_rows);
    Ok(edges(a.extent(), params.threads, |band, out| {
        classify_rgb(level, a, params.norm, low, high, band, out)
    }))
}

/// The SIMD level of the rows: `simd_level()`, capped at AVX2 unless `avx512_rows`.
fn row_level(avx512_rows: bool) -> cpu_features::SimdLevel {
    let level = cpu_features::simd_level();
    // the AVX-512 rows are the only AVX-512 code of Canny: without them, AVX2 at most
    if avx512_rows {
        level
    } else {
        level.min(cpu_features::SimdLevel::Avx2)
    }
}

/// The edge map of an image of `extent`: each row band cleared to `NONE`, classified by
/// `classify` (which returns the band's flood seeds) and flooded, then the flood across
/// band borders and the 255/0 output.
fn edges(
    extent: Dim2,
    threads: Threads,
    classify: impl Fn(std::ops::Range<usize>, &mut [u8]) -> Vec<(u32, u32)> + Sync,
) -> Array<u8, Dim2> {
    let Dim2(rows, cols) = extent;
    if rows == 0 || cols == 0 {
        return Array::filled(extent, NONE);
    }
    // panics, naming the extent, when its size overflows
    let n = extent.size();
    let band_rows: Vec<std::ops::Range<usize>> = schedule_bands(&[(0..rows, 0..cols)], threads)
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    // The map is not cleared on this thread first (a serial pass a two-thread run waits
    // for): each band clears and fills its own rows.
    let mut data: Vec<u8> = Vec::with_capacity(n);
    {
        let mut jobs = Vec::with_capacity(band_rows.len());
        let mut rest = &mut data.spare_capacity_mut()[..n];
        for r in &band_rows {
            let (head, tail) = rest.split_at_mut(r.len() * cols);
            jobs.push((r.clone(), head));
            rest = tail;
        }
        assert!(
            rest.is_empty(),
            "canny: the row bands leave {} bytes of the map unwritten",
            rest.len()
        );
        let job = |(r, out): (std::ops::Range<usize>, &mut [MaybeUninit<u8>])| {
            let n_rows = r.len();
            let out = init_bytes(out, NONE);
            let seeds = classify(r, out);
            flood(out, n_rows, cols, seeds);
        };
        if jobs.len() > 1 {
            jobs.into_par_iter().for_each(job);
        } else {
            jobs.into_iter().for_each(job);
        }
    }
    // SAFETY: the bands cover all `n` bytes (checked above) and each job writes every
    // byte of its piece (`init_bytes`) before anything else.
    unsafe { data.set_len(n) };
    let mut map = Array::from_vec(extent, data).expect("the length is the extent's size");
    if band_rows.len() > 1 {
        let data = map.as_mut_slice();
        let mut seeds = Vec::new();
        for r in &band_rows {
            for row in [r.start, r.end - 1] {
                seeds.extend(
                    edge_positions(data, row * cols..(row + 1) * cols)
                        .into_iter()
                        .map(|p| (row as u32, (p - row * cols) as u32)),
                );
            }
        }
        flood(data, rows, cols, seeds);
    }
    let finish = |chunk: &mut [u8]| {
        chunk
            .iter_mut()
            .for_each(|c| *c = if *c == EDGE { 255 } else { 0 })
    };
    if n >= cpu_features::load_parallel_threshold() && threads.count() > 1 {
        let chunk = n.div_ceil(threads.count()).max(1);
        map.as_mut_slice().par_chunks_mut(chunk).for_each(finish);
    } else {
        finish(map.as_mut_slice());
    }
    map
}
