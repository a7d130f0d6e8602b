//! The Canny edge detector as `cv2.Canny` computes it: Sobel 3x3 with replicated borders,
//! magnitude (L1 or squared L2 in integers), non-maximum suppression with OpenCV's sector
//! tests and tie rules, double threshold, and 8-connected hysteresis that is deterministic
//! in parallel (a local pass per band, then a serial fix-up across band borders).

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::convolve::Border;
use crate::error::Error;
use crate::explicit::Array;
use crate::load::{schedule_bands, Threads};
use crate::shape::{Dim2, Shape};
use crate::source::Source;

use super::sobel::SobelRows;

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

#[inline(always)]
fn magnitude(g: [i16; 2], norm: Norm) -> i32 {
    let (x, y) = (g[0] as i32, g[1] as i32);
    match norm {
        Norm::L1 => x.abs() + y.abs(),
        Norm::L2 => x * x + y * y,
    }
}

/// Suppression and double threshold at one pixel of gradient `g` and magnitude `m`:
/// `NONE`, `WEAK` or `EDGE`. `mag_at(dy, dx)` is the magnitude of a neighbour (0 outside).
#[inline(always)]
fn decide(g: [i16; 2], m: i32, low: i64, high: i64, mag_at: impl Fn(isize, isize) -> i32) -> u8 {
    if (m as i64) <= low {
        return NONE;
    }
    let (xs, ys) = (g[0] as i32, g[1] as i32);
    let ax = xs.abs();
    let ay = ys.abs() << SHIFT;
    let tg22x = ax * TG22;
    let is_max = if ay < tg22x {
        m > mag_at(0, -1) && m >= mag_at(0, 1)
    } else {
        let tg67x = tg22x + (ax << (SHIFT + 1));
        if ay > tg67x {
            m > mag_at(-1, 0) && m >= mag_at(1, 0)
        } else {
            let s: isize = if (xs ^ ys) < 0 { -1 } else { 1 };
            m > mag_at(-1, -s) && m > mag_at(1, s)
        }
    };
    match (is_max, m as i64 > high) {
        (false, _) => NONE,
        (true, true) => EDGE,
        (true, false) => WEAK,
    }
}

/// Chunks with at least this many of their 32 pixels above `low` are decided whole by
/// [`decide_chunk`]; sparser ones pixel by pixel by [`decide`], whose branches cost less
/// there (2560 x 1600, one thread: 6, 16 and all-chunks thresholds gave 3.05, 2.86 and
/// 6.1 ms, against 3.18 ms pixel by pixel).
const DENSE: u32 = 16;

/// [`decide`] for the 32 columns `c..c + 32` of the middle row, without branches, so the
/// compiler keeps the lanes in vector registers: `g` holds their gradients, `rows` the
/// zero-padded magnitudes of the three rows (`rows[k][x + 1]` is column `x`). The same
/// integer tests as [`decide`] (sectors by `tan 22.5`, strict and non-strict neighbours),
/// written as selects; `low` and `high` are the thresholds clamped to `i32`.
#[inline(always)]
fn decide_chunk(
    g: &[[i16; 2]],
    rows: [&[i32]; 3],
    c: usize,
    low: i32,
    high: i32,
    class: &mut [u8; 32],
) {
    let [m0, m1, m2] = rows;
    // columns c - 1 ..= c + 32 of each row, at padded positions c ..= c + 33
    let (m0, m1, m2) = (&m0[c..c + 34], &m1[c..c + 34], &m2[c..c + 34]);
    let g = &g[..32];
    // `&` and `|` rather than `&&` and `||`, and values rather than places chosen: every
    // lane computes everything, which is what lets the compiler vectorise the loop
    for (k, (out, &[gx, gy])) in class.iter_mut().zip(g).enumerate() {
        let (gx, gy) = (i32::from(gx), i32::from(gy));
        let m = m1[k + 1];
        let ax = gx.abs();
        let ay = gy.abs() << SHIFT;
        let tg22x = ax * TG22;
        let tg67x = tg22x + (ax << (SHIFT + 1));
        let horizontal = ay < tg22x;
        let vertical = !horizontal & (ay > tg67x);
        // the diagonal neighbours: (-1, -s) and (1, s), s the sign of gx * gy
        let falling = (gx ^ gy) < 0;
        let (ul, ur, dl, dr) = (m0[k], m0[k + 2], m2[k], m2[k + 2]);
        let diag_a = if falling { ur } else { ul };
        let diag_b = if falling { dl } else { dr };
        let (left, right, up, down) = (m1[k], m1[k + 2], m0[k + 1], m2[k + 1]);
        let a = if horizontal {
            left
        } else if vertical {
            up
        } else {
            diag_a
        };
        let b = if horizontal {
            right
        } else if vertical {
            down
        } else {
            diag_b
        };
        // horizontal and vertical keep `m >= after`, diagonals need `m > both`
        let is_max = (m > a) & ((m > b) | ((m == b) & (horizontal | vertical)));
        let kept = (m > low) & is_max;
        let strong = u8::from(m > high);
        *out = u8::from(kept) * (WEAK + strong);
    }
}

/// Grows edges from the `EDGE` positions `(y, x)` on `stack` into 8-connected `WEAK`
/// pixels of `map` (rows `0..rows` of width `cols`).
fn flood(map: &mut [u8], rows: usize, cols: usize, mut stack: Vec<(u32, u32)>) {
    assert_eq!(map.len(), rows * cols, "flood: a map of the wrong size");
    while let Some((y, x)) = stack.pop() {
        let (y, x) = (y as usize, x as usize);
        if y > 0 && y + 1 < rows && x > 0 && x + 1 < cols {
            // Inside the image, the eight neighbours lie at fixed offsets from `at`: no
            // clipping, no row slices (the checked path below took four times as long).
            let at = y * cols + x;
            let (up, down) = (at - cols, at + cols);
            // `WEAK` is the only class with bit 0 set: one test for the eight neighbours,
            // since most pixels popped have none left to grow into
            let any = map[up - 1]
                | map[up]
                | map[up + 1]
                | map[at - 1]
                | map[at + 1]
                | map[down - 1]
                | map[down]
                | map[down + 1];
            if any & WEAK == 0 {
                continue;
            }
            for (p, ny, nx) in [
                (up - 1, y - 1, x - 1),
                (up, y - 1, x),
                (up + 1, y - 1, x + 1),
                (at - 1, y, x - 1),
                (at + 1, y, x + 1),
                (down - 1, y + 1, x - 1),
                (down, y + 1, x),
                (down + 1, y + 1, x + 1),
            ] {
                if map[p] == WEAK {
                    map[p] = EDGE;
                    stack.push((ny as u32, nx as u32));
                }
            }
            continue;
        }
        let y0 = y.saturating_sub(1);
        let y1 = (y + 1).min(rows - 1);
        let x0 = x.saturating_sub(1);
        let x1 = (x + 1).min(cols - 1);
        for yy in y0..=y1 {
            let line = &mut map[yy * cols..(yy + 1) * cols];
            for (xx, v) in line[x0..=x1].iter_mut().enumerate() {
                if *v == WEAK {
                    *v = EDGE;
                    stack.push((yy as u32, (x0 + xx) as u32));
                }
            }
        }
    }
}

/// The gradient and magnitudes (zero-padded: `mag[x + 1]` is column `x`) of image row
/// `r`, or zero magnitudes outside the image.
#[inline(always)]
fn load_row<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    norm: Norm,
    sobel: &mut SobelRows,
    r: isize,
    grad: &mut [[i16; 2]],
    mag: &mut [i32],
) {
    let Dim2(rows, cols) = a.extent();
    if r < 0 || r as usize >= rows {
        mag.fill(0);
        return;
    }
    sobel.row(a, &Border::Replicate, r as usize);
    for ((g, &x), &y) in grad.iter_mut().zip(&sobel.dx).zip(&sobel.dy) {
        *g = [x, y];
    }
    for ((o, &x), &y) in mag[1..cols + 1].iter_mut().zip(&sobel.dx).zip(&sobel.dy) {
        *o = magnitude([x, y], norm);
    }
}

/// Suppression and double threshold of rows `band`, written to `out` (the band's rows),
/// in one pass over the image: each row's Sobel gradient is computed once, its magnitudes
/// kept in a ring of three zero-padded rows, and the middle row decided from them.
/// Returns the band's `EDGE` positions, relative to the band.
#[inline(always)]
fn classify_band<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    norm: Norm,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [u8],
) -> Vec<(u32, u32)> {
    const CH: usize = 32;
    let Dim2(_, cols) = a.extent();
    // Magnitudes are non-negative `i32`, so comparing with `low` (or `high`) clamped to
    // `i32` is exact.
    let low32 = low.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    let high32 = high.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    let mut sobel = SobelRows::new(cols);
    // Slot k: the gradient and magnitudes (zero-padded, `cols + 2`) of one image row.
    let mut grads: [Vec<[i16; 2]>; 3] = std::array::from_fn(|_| vec![[0i16; 2]; cols]);
    let mut mags: [Vec<i32>; 3] = std::array::from_fn(|_| vec![0i32; cols + 2]);
    let mut seeds = Vec::new();
    // order[k] is the slot of image row y - 1 + k.
    let mut order = [0usize, 1, 2];
    let start = band.start as isize;
    load_row(a, norm, &mut sobel, start - 1, &mut grads[0], &mut mags[0]);
    load_row(a, norm, &mut sobel, start, &mut grads[1], &mut mags[1]);
    for y in band.clone() {
        load_row(
            a,
            norm,
            &mut sobel,
            y as isize + 1,
            &mut grads[order[2]],
            &mut mags[order[2]],
        );
        let [m0, m1, m2] = order.map(|k| &mags[k][..]);
        let g = &grads[order[1]];
        // (`out` starts as `NONE` everywhere: only the pixels above `low` are written)
        let line = &mut out[(y - band.start) * cols..(y - band.start + 1) * cols];
        let mut c = 0;
        while c < cols {
            let n = CH.min(cols - c);
            // Bit k: column c + k is above `low`; only those are decided.
            let mut above = m1[c + 1..c + 1 + n]
                .iter()
                .enumerate()
                .fold(0u32, |bits, (k, &m)| bits | (u32::from(m > low32) << k));
            if above.count_ones() >= DENSE && n == CH {
                // many candidates: decide the whole chunk without branches, in vector
                // lanes, then collect its edges
                let mut class = [NONE; CH];
                decide_chunk(&g[c..c + CH], [m0, m1, m2], c, low32, high32, &mut class);
                line[c..c + CH].copy_from_slice(&class);
                let mut edges = class
                    .iter()
                    .enumerate()
                    .fold(0u32, |bits, (k, &v)| bits | (u32::from(v == EDGE) << k));
                while edges != 0 {
                    let x = c + edges.trailing_zeros() as usize;
                    edges &= edges - 1;
                    seeds.push(((y - band.start) as u32, x as u32));
                }
                c += n;
                continue;
            }
            while above != 0 {
                let x = c + above.trailing_zeros() as usize;
                above &= above - 1;
                let j = x + 1;
                let rows3 = [m0, m1, m2];
                // SAFETY: 1 <= j <= cols, so j + dx lies in 0..cols + 2, the rows' length.
                let mag_at = |dy: isize, dx: isize| unsafe {
                    *rows3[(1 + dy) as usize].get_unchecked((j as isize + dx) as usize)
                };
                let class = decide(g[x], m1[j], low, high, mag_at);
                if class == EDGE {
                    seeds.push(((y - band.start) as u32, x as u32));
                }
                line[x] = class;
            }
            c += n;
        }
        order = [order[1], order[2], order[0]];
    }
    seeds
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classify_band_avx2<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    norm: Norm,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [u8],
) -> Vec<(u32, u32)> {
    classify_band(a, norm, low, high, band, out)
}

/// One row of the L1 classification in vector registers: decides columns `0..n` of the
/// middle row (`n` the multiple of 32 it returns, at most `line.len()`) and writes their
/// classes to `line` (the seeds of the flood come later, from [`SeedKernel`]). `rows` are
/// the zero-padded magnitudes of the three rows (`rows[k][x + 1]` is column `x`), `dx`
/// and `dy` the middle row's gradient; the thresholds `[low, high]` are clamped to
/// `-1..=i16::MAX`. Unsafe to call only for the target features its level needs.
type RowKernel = unsafe fn(
    rows: [&[i16]; 3],
    dx: &[i16],
    dy: &[i16],
    thresholds: [i16; 2],
    line: &mut [u8],
) -> usize;

/// `2 tan(22.5 deg)` in 16 fraction bits: `mulhi(ax, TG22_X2)` is `(ax * TG22) >> 15`.
const TG22_X2: i16 = (2 * TG22) as i16;

/// Panics unless `rows`, `dx` and `dy` cover the `cols` columns of `line` (the bounds
/// every vector row kernel relies on).
#[inline(always)]
fn check_row_bounds(rows: [&[i16]; 3], dx: &[i16], dy: &[i16], cols: usize) {
    assert!(
        dx.len() >= cols && dy.len() >= cols && rows.iter().all(|r| r.len() >= cols + 2),
        "canny: row buffers of {}, {} and {:?} for {cols} columns",
        dx.len(),
        dy.len(),
        rows.map(<[i16]>::len)
    );
}

/// [`RowKernel`] with AVX-512 F/BW: 32 columns a step, in `i16` lanes and mask registers.
///
/// The sector tests in 16 bits: with `t = (ax * TG22) >> 15`, `ay << 15 < ax * TG22` is
/// `ay <= t && ax != 0` (`ax * TG22` is never a multiple of `2^15` for `0 < ax < 2^15`,
/// TG22 being odd), and `ay << 15 > ax * (TG22 + 2^16)` is `ay > 2 ax + t`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn decide_row_avx512(
    rows: [&[i16]; 3],
    dx: &[i16],
    dy: &[i16],
    [low, high]: [i16; 2],
    line: &mut [u8],
) -> usize {
    use std::arch::x86_64::*;
    let cols = line.len();
    check_row_bounds(rows, dx, dy, cols);
    let n = cols / 32 * 32;
    let [r0, r1, r2] = rows.map(<[i16]>::as_ptr);
    let (px, py, out) = (dx.as_ptr(), dy.as_ptr(), line.as_mut_ptr());
    let (lowv, highv) = (_mm512_set1_epi16(low), _mm512_set1_epi16(high));
    let tg = _mm512_set1_epi16(TG22_X2);
    let (one, two) = (_mm512_set1_epi8(WEAK as i8), _mm512_set1_epi8(EDGE as i8));
    let mut c = 0;
    while c < n {
        // SAFETY: AVX-512 F/BW are present (the caller's contract, from `simd_level()`); c + 32
        // <= cols, so the loads read `dx`, `dy` at c..c + 32 and the padded rows at
        // c..c + 34 <= cols + 2, and the store writes `line` at c..c + 32, all inside the
        // lengths `check_row_bounds` asserted above.
        unsafe {
            let ld = |p: *const i16| _mm512_loadu_si512(p.cast());
            let m = ld(r1.add(c + 1));
            let above = _mm512_cmpgt_epi16_mask(m, lowv);
            if above == 0 {
                _mm256_storeu_si256(out.add(c).cast(), _mm256_setzero_si256());
                c += 32;
                continue;
            }
            let (gx, gy) = (ld(px.add(c)), ld(py.add(c)));
            let (ax, ay) = (_mm512_abs_epi16(gx), _mm512_abs_epi16(gy));
            let t = _mm512_mulhi_epu16(ax, tg);
            let horizontal = _mm512_cmple_epi16_mask(ay, t) & _mm512_test_epi16_mask(ax, ax);
            let t67 = _mm512_add_epi16(_mm512_add_epi16(ax, ax), t);
            let vertical = !horizontal & _mm512_cmpgt_epi16_mask(ay, t67);
            // the diagonal neighbours: (-1, -s) and (1, s), s the sign of gx * gy
            let falling = _mm512_movepi16_mask(_mm512_xor_si512(gx, gy));
            let diag_a = _mm512_mask_blend_epi16(falling, ld(r0.add(c)), ld(r0.add(c + 2)));
            let diag_b = _mm512_mask_blend_epi16(falling, ld(r2.add(c + 2)), ld(r2.add(c)));
            let a = _mm512_mask_blend_epi16(vertical, diag_a, ld(r0.add(c + 1)));
            let a = _mm512_mask_blend_epi16(horizontal, a, ld(r1.add(c)));
            let b = _mm512_mask_blend_epi16(vertical, diag_b, ld(r2.add(c + 1)));
            let b = _mm512_mask_blend_epi16(horizontal, b, ld(r1.add(c + 2)));
            // horizontal and vertical keep `m >= after`, diagonals need `m > both`
            let axis = horizontal | vertical;
            let after =
                (_mm512_cmpgt_epi16_mask(m, b) & !axis) | (_mm512_cmpge_epi16_mask(m, b) & axis);
            let kept = above & _mm512_cmpgt_epi16_mask(m, a) & after;
            let strong = kept & _mm512_cmpgt_epi16_mask(m, highv);
            // (512-bit byte operations, whose low 32 bytes are the chunk: the 256-bit
            // masked forms would need AVX-512 VL as well)
            let class = _mm512_mask_blend_epi8(
                u64::from(strong),
                _mm512_maskz_mov_epi8(u64::from(kept), one),
                two,
            );
            _mm256_storeu_si256(out.add(c).cast(), _mm512_castsi512_si256(class));
        }
        c += 32;
    }
    n
}

/// [`RowKernel`] with AVX2: 32 columns a step as two halves of 16 `i16` lanes, the same
/// tests as [`decide_row_avx512`] with compares producing lane masks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn decide_row_avx2(
    rows: [&[i16]; 3],
    dx: &[i16],
    dy: &[i16],
    [low, high]: [i16; 2],
    line: &mut [u8],
) -> usize {
    use std::arch::x86_64::*;
    let cols = line.len();
    check_row_bounds(rows, dx, dy, cols);
    let n = cols / 32 * 32;
    let [r0, r1, r2] = rows.map(<[i16]>::as_ptr);
    let (px, py, out) = (dx.as_ptr(), dy.as_ptr(), line.as_mut_ptr());
    let (lowv, highv) = (_mm256_set1_epi16(low), _mm256_set1_epi16(high));
    let tg = _mm256_set1_epi16(TG22_X2);
    let zero = _mm256_setzero_si256();
    let one = _mm256_set1_epi8(1);
    // (kept, strong) lane masks of the 16 columns at c
    // SAFETY: (the closure's body) AVX2 is present (the caller's contract); it is only
    // called with c + 16 <= cols, so the loads read `dx`, `dy` at c..c + 16 and the padded
    // rows at c..c + 18 <= cols + 2, inside the lengths asserted above.
    let half = |c: usize, m: __m256i, above: __m256i| unsafe {
        let ld = |p: *const i16| _mm256_loadu_si256(p.cast());
        let (gx, gy) = (ld(px.add(c)), ld(py.add(c)));
        let (ax, ay) = (_mm256_abs_epi16(gx), _mm256_abs_epi16(gy));
        let t = _mm256_mulhi_epu16(ax, tg);
        let not_horizontal =
            _mm256_or_si256(_mm256_cmpgt_epi16(ay, t), _mm256_cmpeq_epi16(ax, zero));
        let t67 = _mm256_add_epi16(_mm256_add_epi16(ax, ax), t);
        let vertical = _mm256_and_si256(not_horizontal, _mm256_cmpgt_epi16(ay, t67));
        let falling = _mm256_srai_epi16::<15>(_mm256_xor_si256(gx, gy));
        let diag_a = _mm256_blendv_epi8(ld(r0.add(c)), ld(r0.add(c + 2)), falling);
        let diag_b = _mm256_blendv_epi8(ld(r2.add(c + 2)), ld(r2.add(c)), falling);
        let a = _mm256_blendv_epi8(diag_a, ld(r0.add(c + 1)), vertical);
        let a = _mm256_blendv_epi8(ld(r1.add(c)), a, not_horizontal);
        let b = _mm256_blendv_epi8(diag_b, ld(r2.add(c + 1)), vertical);
        let b = _mm256_blendv_epi8(ld(r1.add(c + 2)), b, not_horizontal);
        // axis: horizontal or vertical, which keep `m >= after` (`!(b > m)`)
        let axis = _mm256_or_si256(
            _mm256_andnot_si256(not_horizontal, _mm256_cmpeq_epi16(zero, zero)),
            vertical,
        );
        let after = _mm256_or_si256(
            _mm256_cmpgt_epi16(m, b),
            _mm256_andnot_si256(_mm256_cmpgt_epi16(b, m), axis),
        );
        let kept = _mm256_and_si256(_mm256_and_si256(above, _mm256_cmpgt_epi16(m, a)), after);
        let strong = _mm256_and_si256(kept, _mm256_cmpgt_epi16(m, highv));
        (kept, strong)
    };
    let mut c = 0;
    while c < n {
        // SAFETY: AVX2 is present (the caller's contract); c + 32 <= cols, so the loads
        // read the padded middle row at c + 1..c + 33 <= cols + 2 and the halves stay in
        // bounds (see `half`), and the store writes `line` at c..c + 32, inside the
        // lengths `check_row_bounds` asserted above.
        unsafe {
            let m_lo = _mm256_loadu_si256(r1.add(c + 1).cast());
            let m_hi = _mm256_loadu_si256(r1.add(c + 17).cast());
            let (above_lo, above_hi) = (
                _mm256_cmpgt_epi16(m_lo, lowv),
                _mm256_cmpgt_epi16(m_hi, lowv),
            );
            if _mm256_testz_si256(
                _mm256_or_si256(above_lo, above_hi),
                _mm256_or_si256(above_lo, above_hi),
            ) != 0
            {
                _mm256_storeu_si256(out.add(c).cast(), zero);
                c += 32;
                continue;
            }
            let (kept_lo, strong_lo) = half(c, m_lo, above_lo);
            let (kept_hi, strong_hi) = half(c + 16, m_hi, above_hi);
            // packs interleaves the 128-bit lanes; the permute puts columns in order
            let bytes =
                |lo, hi| _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi16(lo, hi));
            let (kept, strong) = (bytes(kept_lo, kept_hi), bytes(strong_lo, strong_hi));
            // WEAK + 1 = EDGE for the strong ones (a subset of the kept)
            let class = _mm256_add_epi8(_mm256_and_si256(kept, one), _mm256_and_si256(strong, one));
            _mm256_storeu_si256(out.add(c).cast(), class);
        }
        c += 32;
    }
    n
}

/// The Sobel gradient and L1 magnitude of one row from its three padded source rows
/// (`p[k][x + 1]` is column `x` of row `y - 1 + k`): columns `0..n` of `dx`, `dy` and of
/// `mag[1..]`, `n` the multiple of 32 it returns (at most `dx.len()`). Unsafe to call only
/// for the target features its level needs.
type SobelKernel =
    unsafe fn(p: [&[u8]; 3], dx: &mut [i16], dy: &mut [i16], mag: &mut [i16]) -> usize;

/// Panics unless the buffers of a [`SobelKernel`] cover `dx.len()` columns.
#[inline(always)]
fn check_sobel_bounds(p: [&[u8]; 3], dy: &[i16], mag: &[i16], cols: usize) {
    assert!(
        dy.len() >= cols && mag.len() >= cols + 2 && p.iter().all(|r| r.len() >= cols + 2),
        "canny: Sobel buffers of {:?}, {} and {} for {cols} columns",
        p.map(<[u8]>::len),
        dy.len(),
        mag.len()
    );
}

/// [`SobelKernel`] with AVX-512 BW: 32 columns a step in `i16` lanes, one pass (the
/// column sums `p0 + 2 p1 + p2` and `p2 - p0` at the three offsets, then across).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn sobel_l1_row_avx512(
    p: [&[u8]; 3],
    dx: &mut [i16],
    dy: &mut [i16],
    mag: &mut [i16],
) -> usize {
    use std::arch::x86_64::*;
    let cols = dx.len();
    check_sobel_bounds(p, dy, mag, cols);
    let n = cols / 32 * 32;
    let [q0, q1, q2] = p.map(<[u8]>::as_ptr);
    let (ox, oy, om) = (dx.as_mut_ptr(), dy.as_mut_ptr(), mag.as_mut_ptr());
    let mut c = 0;
    while c < n {
        // SAFETY: AVX-512 F/BW are present (the caller's contract, from `simd_level()`); c + 32
        // <= cols, so the loads read the padded rows at c..c + 34 <= cols + 2 and the
        // stores write `dx`, `dy` at c..c + 32 and `mag` at c + 1..c + 33, all inside the
        // lengths `check_sobel_bounds` asserted above.
        unsafe {
            let ld = |q: *const u8, o: usize| {
                _mm512_cvtepu8_epi16(_mm256_loadu_si256(q.add(c + o).cast()))
            };
            let smooth = |o: usize| {
                let m = ld(q1, o);
                _mm512_add_epi16(
                    _mm512_add_epi16(ld(q0, o), ld(q2, o)),
                    _mm512_add_epi16(m, m),
                )
            };
            let diff = |o: usize| _mm512_sub_epi16(ld(q2, o), ld(q0, o));
            let gx = _mm512_sub_epi16(smooth(2), smooth(0));
            let d1 = diff(1);
            let gy = _mm512_add_epi16(_mm512_add_epi16(diff(0), diff(2)), _mm512_add_epi16(d1, d1));
            let m = _mm512_add_epi16(_mm512_abs_epi16(gx), _mm512_abs_epi16(gy));
            _mm512_storeu_si512(ox.add(c).cast(), gx);
            _mm512_storeu_si512(oy.add(c).cast(), gy);
            _mm512_storeu_si512(om.add(c + 1).cast(), m);
        }
        c += 32;
    }
    n
}

/// [`SobelKernel`] with AVX2: [`sobel_l1_row_avx512`] in two halves of 16 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sobel_l1_row_avx2(
    p: [&[u8]; 3],
    dx: &mut [i16],
    dy: &mut [i16],
    mag: &mut [i16],
) -> usize {
    use std::arch::x86_64::*;
    let cols = dx.len();
    check_sobel_bounds(p, dy, mag, cols);
    let n = cols / 32 * 32;
    let [q0, q1, q2] = p.map(<[u8]>::as_ptr);
    let (ox, oy, om) = (dx.as_mut_ptr(), dy.as_mut_ptr(), mag.as_mut_ptr());
    let mut c = 0;
    while c < n {
        for h in [c, c + 16] {
            // SAFETY: AVX2 is present (the caller's contract); h + 16 <= c + 32 <= cols,
            // so the loads read the padded rows at h..h + 18 <= cols + 2 and the stores
            // write `dx`, `dy` at h..h + 16 and `mag` at h + 1..h + 17, all inside the
            // lengths `check_sobel_bounds` asserted above.
            unsafe {
                let ld = |q: *const u8, o: usize| {
                    _mm256_cvtepu8_epi16(_mm_loadu_si128(q.add(h + o).cast()))
                };
                let smooth = |o: usize| {
                    let m = ld(q1, o);
                    _mm256_add_epi16(
                        _mm256_add_epi16(ld(q0, o), ld(q2, o)),
                        _mm256_add_epi16(m, m),
                    )
                };
                let diff = |o: usize| _mm256_sub_epi16(ld(q2, o), ld(q0, o));
                let gx = _mm256_sub_epi16(smooth(2), smooth(0));
                let d1 = diff(1);
                let gy =
                    _mm256_add_epi16(_mm256_add_epi16(diff(0), diff(2)), _mm256_add_epi16(d1, d1));
                let m = _mm256_add_epi16(_mm256_abs_epi16(gx), _mm256_abs_epi16(gy));
                _mm256_storeu_si256(ox.add(h).cast(), gx);
                _mm256_storeu_si256(oy.add(h).cast(), gy);
                _mm256_storeu_si256(om.add(h + 1).cast(), m);
            }
        }
        c += 32;
    }
    n
}

/// The gradient and `i16` L1 magnitudes (zero-padded: `mag[x + 1]` is column `x`) of
/// image row `r`, or zero magnitudes outside the image: columns `0..n` by `kernel`, the
/// rest here.
#[inline(always)]
fn load_row_l1<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    sobel: &mut SobelRows,
    kernel: SobelKernel,
    r: isize,
    dx: &mut [i16],
    dy: &mut [i16],
    mag: &mut [i16],
) {
    let Dim2(rows, cols) = a.extent();
    if r < 0 || r as usize >= rows {
        mag.fill(0);
        return;
    }
    let p = sobel.padded(a, &Border::Replicate, r as usize);
    // SAFETY: the caller of `classify_band_l1` guarantees the kernel's target features;
    // the kernel checks the buffer lengths itself.
    let done = unsafe { kernel(p, dx, dy, mag) };
    let [p0, p1, p2] = p;
    // (the Sobel gradient of bytes is at most 1020 in magnitude: the sum fits `i16`)
    for x in done..cols {
        let at = |q: &[u8], o: usize| i16::from(q[x + o]);
        let gx = at(p0, 2) - at(p0, 0) + 2 * (at(p1, 2) - at(p1, 0)) + at(p2, 2) - at(p2, 0);
        let gy = at(p2, 0) - at(p0, 0) + 2 * (at(p2, 1) - at(p0, 1)) + at(p2, 2) - at(p0, 2);
        (dx[x], dy[x]) = (gx, gy);
        mag[x + 1] = gx.abs() + gy.abs();
    }
}

/// [`SobelKernel`] of the plain loop (every column in [`load_row_l1`]), for the tests.
#[cfg(test)]
unsafe fn sobel_l1_row_none(_: [&[u8]; 3], _: &mut [i16], _: &mut [i16], _: &mut [i16]) -> usize {
    0
}

/// [`classify_band`] for the L1 norm with a vector row kernel: magnitudes in `i16`, whole
/// rows of 32-column chunks decided by `kernel`, the last `cols % 32` columns by
/// [`decide`]. Unsafe to call only for the target features `kernel` needs.
#[inline(always)]
unsafe fn classify_band_l1<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [u8],
    (sobel_kernel, kernel, seed_kernel): (SobelKernel, RowKernel, SeedKernel),
) -> Vec<(u32, u32)> {
    let Dim2(_, cols) = a.extent();
    // Magnitudes lie in 0..=2040, so comparing with the thresholds clamped to
    // -1..=i16::MAX is exact.
    let low16 = low.clamp(-1, i64::from(i16::MAX)) as i16;
    let high16 = high.clamp(-1, i64::from(i16::MAX)) as i16;
    let mut sobel = SobelRows::new(cols);
    let mut dxs: [Vec<i16>; 3] = std::array::from_fn(|_| vec![0i16; cols]);
    let mut dys: [Vec<i16>; 3] = std::array::from_fn(|_| vec![0i16; cols]);
    let mut mags: [Vec<i16>; 3] = std::array::from_fn(|_| vec![0i16; cols + 2]);
    let mut seeds = Vec::new();
    // order[k] is the slot of image row y - 1 + k.
    let mut order = [0usize, 1, 2];
    let start = band.start as isize;
    for (k, r) in [(0, start - 1), (1, start)] {
        load_row_l1(
            a,
            &mut sobel,
            sobel_kernel,
            r,
            &mut dxs[k],
            &mut dys[k],
            &mut mags[k],
        );
    }
    for y in band.clone() {
        let s = order[2];
        load_row_l1(
            a,
            &mut sobel,
            sobel_kernel,
            y as isize + 1,
            &mut dxs[s],
            &mut dys[s],
            &mut mags[s],
        );
        let rows = order.map(|k| &mags[k][..]);
        let (dx, dy) = (&dxs[order[1]][..], &dys[order[1]][..]);
        let yb = y - band.start;
        let line = &mut out[yb * cols..(yb + 1) * cols];
        // SAFETY: the caller's contract (the processor has the kernel's features); the
        // kernel checks the row lengths itself.
        let done = unsafe { kernel(rows, dx, dy, [low16, high16], line) };
        for x in done..cols {
            let j = x + 1;
            let mag_at = |dy: isize, dx: isize| {
                i32::from(rows[(1 + dy) as usize][(j as isize + dx) as usize])
            };
            line[x] = decide([dx[x], dy[x]], i32::from(rows[1][j]), low, high, mag_at);
        }
        // the row above is decided and so are its neighbour rows: its seeds
        if yb >= 1 {
            row_seeds(out, cols, yb - 1, yb + 1, seed_kernel, &mut seeds);
        }
        order = [order[1], order[2], order[0]];
    }
    row_seeds(
        out,
        cols,
        band.len() - 1,
        band.len(),
        seed_kernel,
        &mut seeds,
    );
    seeds
}

/// The seeds of the flood in row `y` of a classified band `map` (rows `0..rows`, `cols`
/// wide): its `EDGE` pixels with a `WEAK` neighbour inside the band. The others can be
/// left out: a flood from them would find nothing to grow into, since pixels only ever
/// change from `WEAK` to `EDGE`. Columns `1..1 + n` by `kernel`, the rest here.
#[inline(always)]
fn row_seeds(
    map: &[u8],
    cols: usize,
    y: usize,
    rows: usize,
    kernel: SeedKernel,
    seeds: &mut Vec<(u32, u32)>,
) {
    let no_row: &[u8] = &[];
    let row = |r: usize| &map[r * cols..(r + 1) * cols];
    let up = if y > 0 { row(y - 1) } else { no_row };
    let down = if y + 1 < rows { row(y + 1) } else { no_row };
    let mid = row(y);
    // SAFETY: the caller of `classify_band_l1` guarantees the kernel's target features;
    // the kernel checks the row lengths itself (and takes the missing rows as empty).
    let n = unsafe { kernel([up, mid, down], y as u32, seeds) };
    let near_weak = |x: usize| {
        let (x0, x1) = (x.saturating_sub(1), (x + 1).min(cols - 1));
        [up, mid, down]
            .iter()
            .any(|r| !r.is_empty() && r[x0..=x1].contains(&WEAK))
    };
    for x in std::iter::once(0).chain(1 + n..cols) {
        if mid[x] == EDGE && near_weak(x) {
            seeds.push((y as u32, x as u32));
        }
    }
}

/// The seeds of [`row_seeds`] in columns `1..1 + n` of the middle row of `rows` (`[up,
/// mid, down]`, `up` and `down` either as long as `mid` or empty: no row there), `n` the
/// multiple of the vector width it returns (with `n + 2 <= mid.len()`), pushed as `(y,
/// x)`. Unsafe to call only for the target features its level needs.
type SeedKernel = unsafe fn(rows: [&[u8]; 3], y: u32, seeds: &mut Vec<(u32, u32)>) -> usize;

/// Panics unless the rows above and below the seed scan's row are as long as it, or empty
/// (no row there): the seed kernels' loads rely on it.
fn assert_neighbour_rows([up, mid, down]: [&[u8]; 3]) {
    let cols = mid.len();
    assert!(
        [up, down].iter().all(|r| r.is_empty() || r.len() == cols),
        "canny: neighbour rows of {} and {} for {cols} columns",
        up.len(),
        down.len()
    );
}

/// [`SeedKernel`] with AVX-512 BW: 64 columns a step; the eight neighbours' bytes OR-ed
/// together carry bit 0 (`WEAK`'s only bit) when one of them is `WEAK`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn seeds_avx512(rows: [&[u8]; 3], y: u32, seeds: &mut Vec<(u32, u32)>) -> usize {
    use std::arch::x86_64::*;
    let [up, mid, down] = rows;
    let cols = mid.len();
    assert_neighbour_rows(rows);
    let n = cols.saturating_sub(2) / 64 * 64;
    let (edge, weak) = (_mm512_set1_epi8(EDGE as i8), _mm512_set1_epi8(WEAK as i8));
    let mut x = 1;
    while x < 1 + n {
        // SAFETY: AVX-512 F/BW are present (the caller's contract, from `simd_level()`); x >= 1
        // and x + 64 <= n + 1 <= cols - 1, so the loads at x - 1..x + 65 stay inside
        // `mid`, and inside `up` and `down`, which are read only when as long as `mid`
        // (asserted above).
        unsafe {
            let ld = |r: &[u8], at: usize| _mm512_loadu_si512(r.as_ptr().add(at).cast());
            let strong = _mm512_cmpeq_epi8_mask(ld(mid, x), edge);
            if strong != 0 {
                let mut any = _mm512_or_si512(ld(mid, x - 1), ld(mid, x + 1));
                for r in [up, down] {
                    if !r.is_empty() {
                        let three = _mm512_or_si512(ld(r, x - 1), ld(r, x + 1));
                        any = _mm512_or_si512(any, _mm512_or_si512(three, ld(r, x)));
                    }
                }
                let mut s = strong & _mm512_test_epi8_mask(any, weak);
                while s != 0 {
                    seeds.push((y, (x + s.trailing_zeros() as usize) as u32));
                    s &= s - 1;
                }
            }
        }
        x += 64;
    }
    n
}

/// [`SeedKernel`] with AVX2: [`seeds_avx512`] 32 columns a step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn seeds_avx2(rows: [&[u8]; 3], y: u32, seeds: &mut Vec<(u32, u32)>) -> usize {
    use std::arch::x86_64::*;
    let [up, mid, down] = rows;
    let cols = mid.len();
    assert_neighbour_rows(rows);
    let n = cols.saturating_sub(2) / 32 * 32;
    let (edge, weak) = (_mm256_set1_epi8(EDGE as i8), _mm256_set1_epi8(WEAK as i8));
    let mut x = 1;
    while x < 1 + n {
        // SAFETY: AVX2 is present (the caller's contract); x >= 1 and x + 32 <= n + 1 <=
        // cols - 1, so the loads at x - 1..x + 33 stay inside `mid`, and inside `up` and
        // `down`, which are read only when as long as `mid` (asserted above).
        unsafe {
            let ld = |r: &[u8], at: usize| _mm256_loadu_si256(r.as_ptr().add(at).cast());
            let strong = _mm256_movemask_epi8(_mm256_cmpeq_epi8(ld(mid, x), edge)) as u32;
            if strong != 0 {
                let mut any = _mm256_or_si256(ld(mid, x - 1), ld(mid, x + 1));
                for r in [up, down] {
                    if !r.is_empty() {
                        let three = _mm256_or_si256(ld(r, x - 1), ld(r, x + 1));
                        any = _mm256_or_si256(any, _mm256_or_si256(three, ld(r, x)));
                    }
                }
                let near = _mm256_cmpeq_epi8(_mm256_and_si256(any, weak), weak);
                let mut s = strong & _mm256_movemask_epi8(near) as u32;
                while s != 0 {
                    seeds.push((y, (x + s.trailing_zeros() as usize) as u32));
                    s &= s - 1;
                }
            }
        }
        x += 32;
    }
    n
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classify_band_l1_avx2<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [u8],
    kernels: (SobelKernel, RowKernel, SeedKernel),
) -> Vec<(u32, u32)> {
    // SAFETY: forwarded contract.
    unsafe { classify_band_l1(a, low, high, band, out, kernels) }
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

/// Suppression, threshold and the band-local flood of one band, with the AVX2 copy of
/// the classification when `level` allows it. Every byte of `out` (the band's rows, not
/// written yet) is written: first cleared to `NONE` on the band's own thread.
fn band_edges<A: Source<Shape = Dim2, Elem = u8>>(
    level: cpu_features::SimdLevel,
    a: &A,
    norm: Norm,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [MaybeUninit<u8>],
) {
    use cpu_features::SimdLevel;
    let out = init_bytes(out, NONE);
    let Dim2(_, cols) = a.extent();
    let n_rows = band.len();
    // L1 rows are decided by hand-written vector kernels (AVX-512 or AVX2) around the
    // AVX2-compiled Sobel rows; L2 keeps the AVX2 copy of the generic classification (an
    // AVX-512 recompile of it measured 3 to 5% slower on Zen 4, see the crate guide).
    #[cfg(target_arch = "x86_64")]
    let seeds = if level >= SimdLevel::Avx512 && norm == Norm::L1 {
        // SAFETY: the processor supports AVX-512 F/BW and AVX2 (`level` comes from
        // `simd_level()`, capped by the detected level).
        unsafe {
            classify_band_l1_avx2(
                a,
                low,
                high,
                band,
                out,
                (sobel_l1_row_avx512, decide_row_avx512, seeds_avx512),
            )
        }
    } else if level >= SimdLevel::Avx2 && norm == Norm::L1 {
        // SAFETY: the processor supports AVX2 (as above).
        unsafe {
            classify_band_l1_avx2(
                a,
                low,
                high,
                band,
                out,
                (sobel_l1_row_avx2, decide_row_avx2, seeds_avx2),
            )
        }
    } else if level >= SimdLevel::Avx2 {
        // SAFETY: the processor supports AVX2 (as above).
        unsafe { classify_band_avx2(a, norm, low, high, band, out) }
    } else {
        classify_band(a, norm, low, high, band, out)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let seeds = classify_band(a, norm, low, high, band, out);
    let _ = level;
    flood(out, n_rows, cols, seeds);
}

/// Positions inside `range` of `map` holding `EDGE`, eight bytes at a time: `EDGE` is the
/// only class with bit 1 set, so a word's bits `0x02` mark its edge bytes.
fn edge_positions(map: &[u8], range: std::ops::Range<usize>) -> Vec<usize> {
    const MARK: u64 = 0x0202_0202_0202_0202;
    let mut out = Vec::new();
    let slice = &map[range.clone()];
    let words = slice.chunks_exact(8);
    let tail_start = range.start + slice.len() / 8 * 8;
    let tail = words.remainder();
    for (w, word) in words.enumerate() {
        let mut bits = u64::from_le_bytes(word.try_into().expect("8 bytes")) & MARK;
        while bits != 0 {
            out.push(range.start + w * 8 + (bits.trailing_zeros() / 8) as usize);
            bits &= bits - 1;
        }
    }
    out.extend(
        tail.iter()
            .enumerate()
            .filter(|(_, &v)| v == EDGE)
            .map(|(k, _)| tail_start + k),
    );
    out
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
    let norm = params.norm;
    let threads = params.threads;
    let level = cpu_features::simd_level();
    // the AVX-512 rows are the only AVX-512 code of Canny: without them, AVX2 at most
    let level = if avx512_rows {
        level
    } else {
        level.min(cpu_features::SimdLevel::Avx2)
    };
    let extent = a.extent();
    let Dim2(rows, cols) = extent;
    if rows == 0 || cols == 0 {
        return Ok(Array::filled(extent, NONE));
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
            band_edges(level, a, norm, low, high, r, out)
        };
        if jobs.len() > 1 {
            jobs.into_par_iter().for_each(job);
        } else {
            jobs.into_iter().for_each(job);
        }
    }
    // SAFETY: the bands cover all `n` bytes (checked above) and `band_edges` writes every
    // byte of its piece before anything else.
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
    let n = extent.size();
    if n >= cpu_features::load_parallel_threshold() && threads.count() > 1 {
        let chunk = n.div_ceil(threads.count()).max(1);
        map.as_mut_slice().par_chunks_mut(chunk).for_each(finish);
    } else {
        finish(map.as_mut_slice());
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delayed::SourceExt;
    use crate::explicit::View;

    /// A direct transcription of the algorithm's definition: Sobel with replicated
    /// borders, the same sector tests, then hysteresis by repeated sweeps until nothing
    /// changes.
    fn model(data: &[u8], rows: usize, cols: usize, low: i64, high: i64, l2: bool) -> Vec<u8> {
        let px = |y: isize, x: isize| -> i32 {
            let y = y.clamp(0, rows as isize - 1) as usize;
            let x = x.clamp(0, cols as isize - 1) as usize;
            data[y * cols + x] as i32
        };
        let mut dx = vec![0i32; rows * cols];
        let mut dy = vec![0i32; rows * cols];
        for y in 0..rows as isize {
            for x in 0..cols as isize {
                let i = y as usize * cols + x as usize;
                dx[i] = px(y - 1, x + 1) + 2 * px(y, x + 1) + px(y + 1, x + 1)
                    - px(y - 1, x - 1)
                    - 2 * px(y, x - 1)
                    - px(y + 1, x - 1);
                dy[i] = px(y + 1, x - 1) + 2 * px(y + 1, x) + px(y + 1, x + 1)
                    - px(y - 1, x - 1)
                    - 2 * px(y - 1, x)
                    - px(y - 1, x + 1);
            }
        }
        let mag = |y: isize, x: isize| -> i64 {
            if y < 0 || x < 0 || y >= rows as isize || x >= cols as isize {
                return 0;
            }
            let i = y as usize * cols + x as usize;
            let (a, b) = (dx[i] as i64, dy[i] as i64);
            if l2 {
                a * a + b * b
            } else {
                a.abs() + b.abs()
            }
        };
        let mut class = vec![0u8; rows * cols];
        for y in 0..rows as isize {
            for x in 0..cols as isize {
                let i = y as usize * cols + x as usize;
                let m = mag(y, x);
                if m <= low {
                    continue;
                }
                // The angle in floating point: sector boundaries at 22.5 and 67.5 degrees.
                let (gx, gy) = (dx[i] as f64, dy[i] as f64);
                let t = gy.abs() / gx.abs().max(1e-300);
                let ok = if gy.abs() < gx.abs() * 0.41421356 || (gx == 0.0 && gy == 0.0) {
                    m > mag(y, x - 1) && m >= mag(y, x + 1)
                } else if t > 2.41421356 || gx == 0.0 {
                    m > mag(y - 1, x) && m >= mag(y + 1, x)
                } else {
                    let s = if (gx < 0.0) != (gy < 0.0) { -1 } else { 1 };
                    m > mag(y - 1, x - s) && m > mag(y + 1, x + s)
                };
                if ok {
                    class[i] = if m > high { 2 } else { 1 };
                }
            }
        }
        loop {
            let mut changed = false;
            for y in 0..rows {
                for x in 0..cols {
                    if class[y * cols + x] != 1 {
                        continue;
                    }
                    let near = (y.saturating_sub(1)..=(y + 1).min(rows - 1)).any(|yy| {
                        (x.saturating_sub(1)..=(x + 1).min(cols - 1))
                            .any(|xx| class[yy * cols + xx] == 2)
                    });
                    if near {
                        class[y * cols + x] = 2;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        class
            .into_iter()
            .map(|c| if c == 2 { 255 } else { 0 })
            .collect()
    }

    fn scene(rows: usize, cols: usize, seed: u64) -> Vec<u8> {
        (0..rows * cols)
            .map(|i| {
                let (y, x) = ((i / cols) as f64, (i % cols) as f64);
                let disc = ((y - rows as f64 / 2.0).powi(2) + (x - cols as f64 / 3.0).powi(2))
                    .sqrt()
                    < rows as f64 / 3.0;
                let noise = ((i as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as f64;
                (if disc { 180.0 } else { 40.0 + x * 0.5 } + noise * 3.0).min(255.0) as u8
            })
            .collect()
    }

    #[test]
    fn matches_the_model_and_is_deterministic_in_parallel() {
        for (rows, cols, seed) in [(64, 80, 1), (150, 130, 7), (33, 200, 3)] {
            let data = scene(rows, cols, seed);
            let a = View::new(Dim2(rows, cols), &data).unwrap();
            for (norm, low, high) in [
                (Norm::L1, 20.0, 60.0),
                (Norm::L2, 15.0, 50.0),
                (Norm::L1, 90.0, 30.0),
            ] {
                let p = Canny {
                    low,
                    high,
                    norm,
                    threads: Threads::Seq,
                };
                let seq = canny(&a, &p).unwrap();
                let (l, h) = thresholds(&p).unwrap();
                assert_eq!(
                    seq.as_slice(),
                    &model(&data, rows, cols, l, h, norm == Norm::L2)[..],
                    "{rows}x{cols} {norm:?}"
                );
                // A delayed source goes through the row-filling path.
                assert_eq!(canny(&a.map(|v| v), &p).unwrap(), seq);
                for t in [2, 3, 7] {
                    // Two of the three sizes are under the default threshold: lower it
                    // so that every size runs in bands.
                    let par = crate::with_parallel_threshold(0, || {
                        let par = canny(
                            &a,
                            &Canny {
                                threads: Threads::Fixed(t),
                                ..p
                            },
                        );
                        assert_eq!(crate::load::last_band_count(), t, "threads {t}");
                        par
                    })
                    .unwrap();
                    assert_eq!(par, seq, "threads {t}");
                }
            }
        }
    }

    #[test]
    fn a_chunk_decided_at_once_equals_pixel_by_pixel() {
        // Gradients on and around the sector boundaries (|dy| / |dx| near tan 22.5 and
        // tan 67.5, both signs), magnitudes from a small range so that ties with the
        // neighbours are common, and thresholds on both sides of them.
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % n
        };
        for round in 0..400 {
            let cols = 40;
            let rows: [Vec<i32>; 3] =
                std::array::from_fn(|_| (0..cols + 2).map(|_| next(9) as i32).collect());
            let g: Vec<[i16; 2]> = (0..cols)
                .map(|k| {
                    let x = next(2041) as i16 - 1020;
                    let y =
                        match (round + k) % 4 {
                            // exactly on the lines |y| = tan(22.5) |x| and tan(67.5) |x|,
                            // as the fixed-point test rounds them
                            0 => ((i32::from(x).abs() * TG22) >> SHIFT) as i16,
                            1 => ((i32::from(x).abs() * (TG22 + (1 << (SHIFT + 1)))) >> SHIFT)
                                .min(1020) as i16,
                            _ => next(2041) as i16 - 1020,
                        };
                    let y = if next(2) == 0 { -y } else { y };
                    [x, y]
                })
                .collect();
            let (low, high) = (next(6) as i64, 2 + next(8) as i64);
            for c in [0usize, 3, 8] {
                let mut class = [NONE; 32];
                let refs = [&rows[0][..], &rows[1][..], &rows[2][..]];
                decide_chunk(&g[c..c + 32], refs, c, low as i32, high as i32, &mut class);
                for (k, &got) in class.iter().enumerate() {
                    let j = c + k + 1;
                    let mag_at =
                        |dy: isize, dx: isize| rows[(1 + dy) as usize][(j as isize + dx) as usize];
                    let want = decide(g[c + k], rows[1][j], low, high, mag_at);
                    assert_eq!(got, want, "round {round}, column {}", c + k);
                }
            }
        }
    }

    #[test]
    fn dense_noise_matches_the_model() {
        // Pure noise with a low threshold of 1: nearly every chunk is decided at once.
        for (rows, cols) in [(37, 70), (20, 129)] {
            let data: Vec<u8> = (0..rows * cols)
                .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as u8)
                .collect();
            let a = View::new(Dim2(rows, cols), &data).unwrap();
            for (norm, low, high) in [(Norm::L1, 1.0, 120.0), (Norm::L2, 1.0, 90.0)] {
                let p = Canny {
                    low,
                    high,
                    norm,
                    threads: Threads::Seq,
                };
                let (l, h) = thresholds(&p).unwrap();
                let want = model(&data, rows, cols, l, h, norm == Norm::L2);
                assert_eq!(canny(&a, &p).unwrap().as_slice(), &want[..], "{norm:?}");
                let two = crate::with_parallel_threshold(0, || {
                    canny(
                        &a,
                        &Canny {
                            threads: Threads::Fixed(2),
                            ..p
                        },
                    )
                })
                .unwrap();
                assert_eq!(two.as_slice(), &want[..], "{norm:?}, two bands");
            }
        }
    }

    #[test]
    fn edge_positions_like_a_filter() {
        let map: Vec<u8> = (0..203u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 29) as u8 % 3)
            .collect();
        for range in [0..203, 5..200, 17..18, 9..9] {
            let want: Vec<usize> = range.clone().filter(|&p| map[p] == EDGE).collect();
            assert_eq!(edge_positions(&map, range), want);
        }
    }

    #[test]
    fn thresholds_follow_opencv() {
        let p = Canny {
            low: 10.5,
            high: 3.2,
            norm: Norm::L2,
            threads: Threads::Seq,
        };
        assert_eq!(thresholds(&p).unwrap(), (10, 110));
        for (name, bad) in [
            ("low", Canny { low: f64::NAN, ..p }),
            (
                "high",
                Canny {
                    high: f64::NAN,
                    ..p
                },
            ),
        ] {
            assert_eq!(
                thresholds(&bad).unwrap_err(),
                Error::InvalidArgument {
                    name,
                    value: "NaN".into(),
                    rule: "a Canny threshold must be a number",
                }
            );
            let a = View::new(Dim2(1, 1), &[0u8]).unwrap();
            assert_eq!(
                canny(&a, &bad).unwrap_err().to_string(),
                format!("parameter `{name}` = NaN: a Canny threshold must be a number")
            );
        }
    }

    #[test]
    fn every_simd_level_equals_the_model_at_the_vector_edges() {
        // Widths around the 32-column steps of the vector rows (shorter than a step,
        // one over, one under), images one to three rows high, and thresholds that keep
        // every pixel (negative), a few, or none.
        for (k, &cols) in [1usize, 2, 31, 32, 33, 63, 64, 65, 97].iter().enumerate() {
            for rows in [1usize, 2, 3, 17] {
                let data = scene(rows, cols, 90 + k as u64);
                let a = View::new(Dim2(rows, cols), &data).unwrap();
                for (low, high) in [(-1.0, -1.0), (-1.0, 40.0), (10.0, 30.0), (5000.0, 6000.0)] {
                    let p = Canny {
                        low,
                        high,
                        norm: Norm::L1,
                        threads: Threads::Fixed(2),
                    };
                    let (l, h) = thresholds(&p).unwrap();
                    let want = model(&data, rows, cols, l, h, false);
                    for got in cpu_features::at_every_level(|_| {
                        crate::with_parallel_threshold(0, || canny(&a, &p)).unwrap()
                    }) {
                        assert_eq!(got.as_slice(), &want[..], "{rows}x{cols} {low}/{high}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_avx512_rows_and_the_avx2_rows_equal_the_model_on_any_processor() {
        // The dispatch leaves the AVX-512 rows off where 512-bit operations are split (a
        // Zen 4): both choices still run here, at every level the processor has.
        for (k, &cols) in [31usize, 64, 65, 97, 200].iter().enumerate() {
            let rows = 23;
            let data = scene(rows, cols, 70 + k as u64);
            let a = View::new(Dim2(rows, cols), &data).unwrap();
            let p = Canny {
                low: 20.0,
                high: 60.0,
                norm: Norm::L1,
                threads: Threads::Fixed(2),
            };
            let (l, h) = thresholds(&p).unwrap();
            let want = model(&data, rows, cols, l, h, false);
            for avx512_rows in [false, true] {
                for got in cpu_features::at_every_level(|_| {
                    crate::with_parallel_threshold(0, || canny_with(&a, &p, avx512_rows)).unwrap()
                }) {
                    assert_eq!(got.as_slice(), &want[..], "{cols} columns {avx512_rows}");
                }
            }
        }
        assert_eq!(avx512_rows_pay(), !cpu_features::splits_512_bit_ops());
    }

    #[test]
    fn every_simd_level_equals_the_model() {
        for (k, &cols) in [1usize, 31, 63, 64, 65, 129, 301].iter().enumerate() {
            let rows = 40;
            let data = scene(rows, cols, 50 + k as u64);
            let a = View::new(Dim2(rows, cols), &data).unwrap();
            for (norm, low, high) in [(Norm::L1, 20.0, 60.0), (Norm::L2, 15.0, 50.0)] {
                let p = Canny {
                    low,
                    high,
                    norm,
                    threads: Threads::Fixed(2),
                };
                let (l, h) = thresholds(&p).unwrap();
                let want = model(&data, rows, cols, l, h, norm == Norm::L2);
                for got in cpu_features::at_every_level(|_| {
                    crate::with_parallel_threshold(0, || canny(&a, &p)).unwrap()
                }) {
                    assert_eq!(got.as_slice(), &want[..], "{cols} columns {norm:?}");
                }
            }
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod row_kernel_tests {
    use super::*;
    use crate::explicit::View;

    /// Every vector row kernel the processor can run, with its name.
    fn kernels() -> Vec<(&'static str, RowKernel)> {
        let level = cpu_features::detected_simd();
        let mut out: Vec<(&'static str, RowKernel)> = Vec::new();
        if level >= crate::image::SimdLevel::Avx2 {
            out.push(("avx2", decide_row_avx2));
        }
        if level >= crate::image::SimdLevel::Avx512 {
            out.push(("avx512", decide_row_avx512));
        }
        out
    }

    /// Every vector Sobel kernel the processor can run, with its name.
    fn sobel_kernels() -> Vec<(&'static str, SobelKernel)> {
        let level = cpu_features::detected_simd();
        let mut out: Vec<(&'static str, SobelKernel)> = Vec::new();
        if level >= crate::image::SimdLevel::Avx2 {
            out.push(("avx2", sobel_l1_row_avx2));
        }
        if level >= crate::image::SimdLevel::Avx512 {
            out.push(("avx512", sobel_l1_row_avx512));
        }
        out
    }

    #[test]
    fn sobel_kernels_equal_the_plain_loop_and_refuse_short_buffers() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for (name, kernel) in sobel_kernels() {
            for &cols in &[1usize, 2, 31, 32, 33, 63, 64, 65, 100] {
                let data: Vec<u8> = (0..3 * cols)
                    .map(|_| {
                        s ^= s << 13;
                        s ^= s >> 7;
                        s ^= s << 17;
                        // extremes often: the sums must not overflow
                        [0, 255, (s >> 8) as u8][(s % 3) as usize]
                    })
                    .collect();
                let a = View::new(Dim2(3, cols), &data).unwrap();
                let run = |k: SobelKernel| {
                    let mut sobel = SobelRows::new(cols);
                    let (mut dx, mut dy, mut mag) =
                        (vec![7i16; cols], vec![7i16; cols], vec![0i16; cols + 2]);
                    load_row_l1(&a, &mut sobel, k, 1, &mut dx, &mut dy, &mut mag);
                    (dx, dy, mag)
                };
                assert_eq!(run(kernel), run(sobel_l1_row_none), "{name} {cols} columns");
            }
            // one element short in each buffer in turn, for 64 columns
            for short in 0..4 {
                let cols = 64;
                let len = |k: usize, full: usize| if short == k { full - 1 } else { full };
                let p = [len(0, cols + 2), cols + 2, cols + 2].map(|n| vec![0u8; n]);
                let got = std::panic::catch_unwind(|| {
                    let (mut dx, mut dy) = (vec![0i16; len(1, cols)], vec![0i16; len(2, cols)]);
                    let mut mag = vec![0i16; len(3, cols + 2)];
                    let p = [&p[0][..], &p[1][..], &p[2][..]];
                    // SAFETY: `sobel_kernels` lists only the kernels this processor can run.
                    unsafe { kernel(p, &mut dx, &mut dy, &mut mag) }
                });
                // a `dx` one short is a line of 63 columns: accepted, 32 columns done
                if short == 1 {
                    assert_eq!(got.ok(), Some(32), "{name}");
                } else {
                    assert!(got.is_err(), "{name}: buffer {short} short was accepted");
                }
            }
        }
    }

    /// Every vector seed kernel the processor can run, with its name.
    fn seed_kernels() -> Vec<(&'static str, SeedKernel)> {
        let level = cpu_features::detected_simd();
        let mut out: Vec<(&'static str, SeedKernel)> = Vec::new();
        if level >= crate::image::SimdLevel::Avx2 {
            out.push(("avx2", seeds_avx2));
        }
        if level >= crate::image::SimdLevel::Avx512 {
            out.push(("avx512", seeds_avx512));
        }
        out
    }

    /// [`SeedKernel`] of the plain loop (every column in [`row_seeds`]).
    unsafe fn seeds_none(_: [&[u8]; 3], _: u32, _: &mut Vec<(u32, u32)>) -> usize {
        0
    }

    #[test]
    fn seed_kernels_equal_the_plain_loop_and_refuse_unequal_rows() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for (name, kernel) in seed_kernels() {
            for &cols in &[1usize, 2, 3, 31, 32, 33, 34, 63, 64, 65, 66, 67, 130, 200] {
                for rows in [1usize, 2, 3, 5] {
                    // classes 0, 1, 2, with few WEAK pixels in some rounds
                    let map: Vec<u8> = (0..rows * cols)
                        .map(|_| {
                            s ^= s << 13;
                            s ^= s >> 7;
                            s ^= s << 17;
                            [NONE, NONE, EDGE, EDGE, WEAK][(s % [5, 4][(cols + rows) % 2]) as usize]
                        })
                        .collect();
                    for y in 0..rows {
                        let (mut got, mut want) = (Vec::new(), Vec::new());
                        row_seeds(&map, cols, y, rows, kernel, &mut got);
                        row_seeds(&map, cols, y, rows, seeds_none, &mut want);
                        got.sort_unstable();
                        want.sort_unstable();
                        assert_eq!(got, want, "{name} {rows}x{cols} row {y}");
                    }
                }
            }
            let (mid, short) = (vec![EDGE; 100], vec![WEAK; 99]);
            for rows in [
                [&short[..], &mid[..], &mid[..]],
                [&mid[..], &mid[..], &short[..]],
            ] {
                // SAFETY: `seed_kernels` lists only the kernels this processor can run.
                let got = std::panic::catch_unwind(|| unsafe { kernel(rows, 0, &mut Vec::new()) });
                assert!(
                    got.is_err(),
                    "{name}: a neighbour row one short was accepted"
                );
            }
        }
    }

    #[test]
    fn row_kernels_refuse_rows_shorter_than_the_line() {
        // Each buffer one element short of what a 64-column line needs: the bounds check
        // before the vector loop must panic instead of reading past the buffer.
        for (name, kernel) in kernels() {
            for short in 0..4 {
                let cols = 64;
                let len = |k: usize, full: usize| if short == k { full - 1 } else { full };
                let rows =
                    [len(0, cols + 2), len(1, cols + 2), len(1, cols + 2)].map(|n| vec![0i16; n]);
                let (dx, dy) = (vec![0i16; len(2, cols)], vec![0i16; len(3, cols)]);
                let got = std::panic::catch_unwind(|| {
                    let mut line = vec![0u8; cols];
                    let refs = [&rows[0][..], &rows[1][..], &rows[2][..]];
                    // SAFETY: `kernels` lists only the kernels this processor can run.
                    unsafe { kernel(refs, &dx, &dy, [0, 0], &mut line) }
                });
                assert!(got.is_err(), "{name}: buffer {short} short was accepted");
            }
        }
    }

    #[test]
    fn row_kernels_equal_the_pixel_decision() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % n
        };
        for (name, kernel) in kernels() {
            for &cols in &[1usize, 2, 31, 32, 33, 63, 64, 65, 100] {
                for round in 0..60 {
                    let spread = [3u64, 9, 40, 2041][round % 4];
                    let rows: [Vec<i16>; 3] = std::array::from_fn(|_| {
                        let mut r: Vec<i16> = (0..cols + 2).map(|_| next(spread) as i16).collect();
                        r[0] = 0;
                        r[cols + 1] = 0;
                        r
                    });
                    let g: Vec<[i16; 2]> = (0..cols)
                        .map(|k| {
                            let x = next(2041) as i16 - 1020;
                            let y = match (round + k) % 4 {
                                0 => ((i32::from(x).abs() * TG22) >> SHIFT) as i16,
                                1 => ((i32::from(x).abs() * (TG22 + (1 << (SHIFT + 1)))) >> SHIFT)
                                    .min(1020) as i16,
                                _ => next(2041) as i16 - 1020,
                            };
                            let y = if next(2) == 0 { -y } else { y };
                            if next(16) == 0 {
                                [0, y]
                            } else if next(16) == 0 {
                                [x, 0]
                            } else {
                                [x, y]
                            }
                        })
                        .collect();
                    let dx: Vec<i16> = g.iter().map(|g| g[0]).collect();
                    let dy: Vec<i16> = g.iter().map(|g| g[1]).collect();
                    let (low, high) = match round % 5 {
                        0 => (-1, -1),
                        1 => (5000, 6000),
                        _ => (next(spread.min(60)) as i64, next(spread.min(60) + 3) as i64),
                    };
                    let mut line = vec![7u8; cols];
                    let refs = [&rows[0][..], &rows[1][..], &rows[2][..]];
                    // SAFETY: `kernels` lists only the kernels this processor can run.
                    let done =
                        unsafe { kernel(refs, &dx, &dy, [low as i16, high as i16], &mut line) };
                    assert_eq!(done, cols / 32 * 32);
                    for x in 0..done {
                        let j = x + 1;
                        let mag_at = |dy: isize, dx: isize| {
                            i32::from(rows[(1 + dy) as usize][(j as isize + dx) as usize])
                        };
                        let want = decide(g[x], i32::from(rows[1][j]), low, high, mag_at);
                        assert_eq!(
                            line[x], want,
                            "{name} {cols} cols round {round} column {x} g {:?}",
                            g[x]
                        );
                    }
                    assert!(
                        line[done..].iter().all(|&v| v == 7),
                        "{name}: wrote past {done}"
                    );
                }
            }
        }
    }
}
