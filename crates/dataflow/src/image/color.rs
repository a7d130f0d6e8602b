//! RGB -> grey with OpenCV's fixed-point `cvtColor(COLOR_RGB2GRAY)` weights and rounding.

use std::ops::Range;

use crate::source::{map_span, Source};

use cpu_features::{detected_simd, simd_level, SimdLevel};

/// Fixed-point weights of R, G and B with 15 fraction bits (0.299, 0.587, 0.114, summing
/// to exactly `1 << 15`), as OpenCV's 8-bit `RGB2Gray`.
pub const GREY_WEIGHTS: [u32; 3] = [9798, 19235, 3735];
const SHIFT: u32 = 15;

/// The grey level of one RGB pixel: `(9798 r + 19235 g + 3735 b + 2^14) >> 15`.
#[inline(always)]
pub fn rgb_to_grey([r, g, b]: [u8; 3]) -> u8 {
    let [wr, wg, wb] = GREY_WEIGHTS;
    ((r as u32 * wr + g as u32 * wg + b as u32 * wb + (1 << (SHIFT - 1))) >> SHIFT) as u8
}

/// Whether grey conversion uses [`grey_bytes_avx512`] on this processor: where it has
/// AVX-512 at full width. On a Zen 5 it takes 0.72 of the AVX2 kernel's time; on a Zen 4
/// (512-bit operations issued as two 256-bit halves) it was 8 to 15% slower, so the AVX2
/// kernel runs there.
fn grey_avx512() -> bool {
    !cpu_features::splits_512_bit_ops()
}

/// 64 pixels per step, the AVX2 kernel widened to four 128-bit lanes: each 16-pixel group
/// is loaded as lanes at bytes 0, 8, 24 and 32 (pixels 0-3, 4-7 at byte 4 of the lane,
/// 8-11, 12-15 at byte 4), shuffled lane by lane into `(r, g)` and `(b, 0)` `u16` pairs, and
/// `vpmaddwd` gives the same exact 32-bit sums. Returns how many pixels it converted (a
/// multiple of 64).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn grey_bytes_avx512(src: &[u8], out: &mut [u8]) -> usize {
    use std::arch::x86_64::*;
    let n = out.len().min(src.len() / 3);
    let steps = n / 64;
    let [wr, wg, wb] = GREY_WEIGHTS;
    let ctl = |pair: usize| {
        let mut m = [0u8; 64];
        for (lane, off) in [0usize, 4, 0, 4].into_iter().enumerate() {
            m[16 * lane..16 * lane + 16].copy_from_slice(&grey_shuffle(off, pair));
        }
        m
    };
    let (rg_bytes, b_bytes) = (ctl(0), ctl(1));
    // SAFETY: (whole body) the controls are read from 64-byte arrays; in a step at pixel
    // `i`, group `g` loads 16 bytes at `3 (i + 16 g) + {0, 8, 24, 32}`, ending at most at
    // `3 (i + 16 g) + 48 <= 3 (i + 64)`, inside `src` (`i + 64 <= n`); every store writes
    // 64 bytes at `i <= n - 64` of `out`.
    unsafe {
        let rg_ctl = _mm512_loadu_si512(rg_bytes.as_ptr().cast());
        let b_ctl = _mm512_loadu_si512(b_bytes.as_ptr().cast());
        let w_rg = _mm512_set1_epi32((wr | (wg << 16)) as i32);
        let w_b = _mm512_set1_epi32(wb as i32);
        let half = _mm512_set1_epi32(1 << (SHIFT - 1));
        // After the lane-wise packs, lane k holds 4 pixels of each group j at dword
        // 4 k + j; pixel block 4 j + k of the output must come from there.
        let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        let group = |p: *const u8| {
            let l0 = _mm_loadu_si128(p.cast());
            let l1 = _mm_loadu_si128(p.add(8).cast());
            let l2 = _mm_loadu_si128(p.add(24).cast());
            let l3 = _mm_loadu_si128(p.add(32).cast());
            let v = _mm512_inserti32x4::<1>(_mm512_castsi128_si512(l0), l1);
            let v = _mm512_inserti32x4::<2>(v, l2);
            let v = _mm512_inserti32x4::<3>(v, l3);
            let rg = _mm512_madd_epi16(_mm512_shuffle_epi8(v, rg_ctl), w_rg);
            let b = _mm512_madd_epi16(_mm512_shuffle_epi8(v, b_ctl), w_b);
            _mm512_srli_epi32::<{ SHIFT }>(_mm512_add_epi32(_mm512_add_epi32(rg, b), half))
        };
        for s in 0..steps {
            let i = 64 * s;
            let p = src.as_ptr().add(3 * i);
            let v0 = group(p);
            let v1 = group(p.add(48));
            let v2 = group(p.add(96));
            let v3 = group(p.add(144));
            let w01 = _mm512_packs_epi32(v0, v1);
            let w23 = _mm512_packs_epi32(v2, v3);
            let bytes = _mm512_permutexvar_epi32(order, _mm512_packus_epi16(w01, w23));
            _mm512_storeu_si512(out.as_mut_ptr().add(i).cast(), bytes);
        }
    }
    64 * steps
}

/// The grey image of an RGB source, delayed: `map(rgb_to_grey)` whose row spans over
/// explicit memory are converted a whole row at a time (an AVX2 kernel where the CPU has it).
#[derive(Clone, Copy, Debug)]
#[must_use = "a delayed array does nothing until it is loaded or walked"]
pub struct Grey<A> {
    rgb: A,
}

/// Pixel by pixel over interleaved bytes: 3 bytes in, 1 out, with the kernels of the
/// current [`simd_level`] level.
#[inline(always)]
fn grey_bytes(src: &[u8], out: &mut [u8]) {
    grey_bytes_at(simd_level(), src, out)
}

/// [`grey_bytes`] at a given level (lowered to what the processor has).
#[inline(always)]
fn grey_bytes_at(level: SimdLevel, src: &[u8], out: &mut [u8]) {
    let level = level.min(detected_simd());
    let n = out.len().min(src.len() / 3);
    let (src, out) = (&src[..3 * n], &mut out[..n]);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        if level >= SimdLevel::Avx512 && n >= 64 && grey_avx512() {
            // SAFETY: AVX-512 F/BW are present (`level` is capped by `detected_simd`); the
            // kernel reads and writes inside the slices it is given.
            done = unsafe { grey_bytes_avx512(src, out) };
        }
        if level >= SimdLevel::Avx2 && n - done >= 32 {
            // SAFETY: AVX2 is present (as above); the kernel stays inside the slices.
            done += unsafe { grey_bytes_avx2(&src[3 * done..], &mut out[done..]) };
        }
    }
    let _ = level;
    grey_bytes_scalar(&src[3 * done..], &mut out[done..]);
}

#[inline(always)]
fn grey_bytes_scalar(src: &[u8], out: &mut [u8]) {
    for (o, p) in out.iter_mut().zip(src.chunks_exact(3)) {
        *o = rgb_to_grey([p[0], p[1], p[2]]);
    }
}

/// The `pshufb` control that turns the 4 pixels at byte `off` of a 128-bit lane into
/// `u16` pairs: `(r, g)` for `pair == 0`, `(b, 0)` otherwise (0x80 writes a zero byte).
#[cfg(target_arch = "x86_64")]
const fn grey_shuffle(off: usize, pair: usize) -> [u8; 16] {
    let mut m = [0x80u8; 16];
    let mut k = 0;
    while k < 4 {
        if pair == 0 {
            m[4 * k] = (off + 3 * k) as u8;
            m[4 * k + 2] = (off + 3 * k + 1) as u8;
        } else {
            m[4 * k] = (off + 3 * k + 2) as u8;
        }
        k += 1;
    }
    m
}

/// 32 pixels per step: each 8-pixel group is loaded as two 128-bit lanes (pixels 0-3 at
/// byte 0, pixels 4-7 at byte 8 + 4), shuffled into `u16` pairs `(r, g)` and `(b, 0)`,
/// and `pmaddwd` with `(wr, wg)` and `(wb, 0)` gives the exact 32-bit sums. Returns how
/// many pixels it converted (a multiple of 32).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn grey_bytes_avx2(src: &[u8], out: &mut [u8]) -> usize {
    use std::arch::x86_64::*;
    let n = out.len().min(src.len() / 3);
    let steps = n / 32;
    let [wr, wg, wb] = GREY_WEIGHTS;
    // SAFETY: (whole body) every load reads 16 bytes at `3 * (i + 8 g) + {0, 8}`, whose end
    // `3 i + 24 g + 24 <= 3 (i + 32)` stays inside `src`; every store writes 32 bytes at
    // `i <= n - 32` of `out`.
    unsafe {
        let lanes = |a: [u8; 16], b: [u8; 16]| {
            let mut m = [0u8; 32];
            m[..16].copy_from_slice(&a);
            m[16..].copy_from_slice(&b);
            _mm256_loadu_si256(m.as_ptr().cast())
        };
        let rg_ctl = lanes(grey_shuffle(0, 0), grey_shuffle(4, 0));
        let b_ctl = lanes(grey_shuffle(0, 1), grey_shuffle(4, 1));
        let w_rg = _mm256_set1_epi32((wr | (wg << 16)) as i32);
        let w_b = _mm256_set1_epi32(wb as i32);
        let half = _mm256_set1_epi32(1 << (SHIFT - 1));
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let group = |p: *const u8| {
            let lo = _mm_loadu_si128(p.cast());
            let hi = _mm_loadu_si128(p.add(8).cast());
            let v = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
            let rg = _mm256_madd_epi16(_mm256_shuffle_epi8(v, rg_ctl), w_rg);
            let b = _mm256_madd_epi16(_mm256_shuffle_epi8(v, b_ctl), w_b);
            _mm256_srli_epi32::<{ SHIFT as i32 }>(_mm256_add_epi32(_mm256_add_epi32(rg, b), half))
        };
        for s in 0..steps {
            let i = 32 * s;
            let p = src.as_ptr().add(3 * i);
            let v0 = group(p);
            let v1 = group(p.add(24));
            let v2 = group(p.add(48));
            let v3 = group(p.add(72));
            let w01 = _mm256_packs_epi32(v0, v1);
            let w23 = _mm256_packs_epi32(v2, v3);
            let bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(w01, w23), order);
            _mm256_storeu_si256(out.as_mut_ptr().add(i).cast(), bytes);
        }
    }
    32 * steps
}

// SAFETY: extent and positions are the RGB operand's; `fill_span` writes the span from
// the operand's span (or element by element).
unsafe impl<A: Source<Elem = [u8; 3]>> Source for Grey<A> {
    type Elem = u8;
    type Shape = A::Shape;
    const LINEAR: bool = A::LINEAR;
    #[inline(always)]
    fn extent(&self) -> A::Shape {
        self.rgb.extent()
    }
    #[inline(always)]
    fn index(&self, idx: A::Shape) -> u8 {
        rgb_to_grey(self.rgb.index(idx))
    }
    #[inline(always)]
    fn linear_index(&self, i: usize) -> u8 {
        rgb_to_grey(self.rgb.linear_index(i))
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: A::Shape) -> u8 {
        // SAFETY: forwarded contract.
        rgb_to_grey(unsafe { self.rgb.index_unchecked(idx) })
    }
    #[inline(always)]
    unsafe fn linear_index_unchecked(&self, i: usize) -> u8 {
        // SAFETY: forwarded contract.
        rgb_to_grey(unsafe { self.rgb.linear_index_unchecked(i) })
    }
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: A::Shape,
        ncols: usize,
        row: usize,
        cols: Range<usize>,
        out: *mut u8,
    ) {
        // SAFETY: (whole body) the caller keeps the span inside the extent and `out`
        // writable for `cols.len()` elements.
        unsafe {
            let n = cols.len();
            match self.rgb.span_slice(ncols, row, cols.clone()) {
                Some(px) => grey_bytes(px.as_flattened(), std::slice::from_raw_parts_mut(out, n)),
                None => map_span(&self.rgb, extent, ncols, row, cols, out, rgb_to_grey),
            }
        }
    }
}

/// The grey image of an RGB source, delayed.
pub fn grey<A: Source<Elem = [u8; 3]>>(rgb: A) -> Grey<A> {
    Grey { rgb }
}

/// Alias of [`grey`] for readers who look for a noun.
pub fn grey_of<A: Source<Elem = [u8; 3]>>(rgb: A) -> Grey<A> {
    grey(rgb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_and_primaries() {
        assert_eq!(GREY_WEIGHTS.iter().sum::<u32>(), 1 << 15);
        // Values printed by cv2.cvtColor for pure primaries (OpenCV 5.0).
        assert_eq!(rgb_to_grey([255, 0, 0]), 76);
        assert_eq!(rgb_to_grey([0, 255, 0]), 150);
        assert_eq!(rgb_to_grey([0, 0, 255]), 29);
        assert_eq!(rgb_to_grey([255, 255, 255]), 255);
    }

    #[test]
    fn row_kernel_exact_on_every_colour() {
        // Each row holds the 65536 (g, b) pairs for one r, converted as one span (the
        // vector kernel where the machine has it, then the scalar tail of 7 pixels), and
        // checked against the formula pixel by pixel.
        let mut src = vec![0u8; 3 * 65536 + 3 * 7];
        let mut out = vec![0u8; 65536 + 7];
        for r in 0..=255u8 {
            for (i, p) in src.chunks_exact_mut(3).enumerate() {
                p.copy_from_slice(&[r, (i >> 8) as u8, i as u8]);
            }
            grey_bytes(&src, &mut out);
            for (i, (&o, p)) in out.iter().zip(src.chunks_exact(3)).enumerate() {
                let want = rgb_to_grey([p[0], p[1], p[2]]);
                assert_eq!(o, want, "r {r} pixel {i}");
            }
        }
    }

    #[test]
    fn row_spans_equal_pixel_by_pixel() {
        use crate::delayed::SourceExt;
        use crate::explicit::View;
        use crate::load::{compute_with, Plain, Threads};
        use crate::shape::Dim2;
        let (rows, cols) = (37usize, 301usize);
        let px: Vec<[u8; 3]> = (0..(rows * cols) as u64)
            .map(|i| {
                let v = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                [v >> 56, v >> 48, v >> 40].map(|b| b as u8)
            })
            .collect();
        let want: Vec<u8> = px.iter().map(|&p| rgb_to_grey(p)).collect();
        let a = View::new(Dim2(rows, cols), &px);
        for threads in [Threads::Seq, Threads::Fixed(3)] {
            let got = crate::with_parallel_threshold(0, || compute_with(&grey(a), Plain, threads));
            assert_eq!(crate::load::last_band_count(), threads.count());
            assert_eq!(got.as_slice(), &want[..]);
            // A delayed RGB source goes through the element path.
            let d = grey(a.map(|p| p));
            assert_eq!(compute_with(&d, Plain, threads).as_slice(), &want[..]);
        }
        assert_eq!(grey(a).index(Dim2(3, 7)), want[3 * cols + 7]);
    }

    use crate::image::simd_test_support::{random_bytes, WIDTHS};

    #[test]
    fn every_simd_level_equals_the_pixel_formula() {
        use crate::explicit::View;
        use crate::load::{compute_with, Plain, Threads};
        use crate::shape::Dim2;
        for (k, &cols) in WIDTHS.iter().enumerate() {
            let rows = 3;
            let bytes = random_bytes(3 * rows * cols, k as u64);
            let px: Vec<[u8; 3]> = bytes.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
            let want: Vec<u8> = px.iter().map(|&p| rgb_to_grey(p)).collect();
            let a = View::new(Dim2(rows, cols), &px);
            let got = cpu_features::at_every_level(|_| {
                compute_with(&grey(a), Plain, Threads::Seq).into_vec()
            });
            for (level, g) in got.iter().enumerate() {
                assert_eq!(g, &want, "{cols} columns, level {level}");
            }
            // The kernels themselves, on every length up to the width.
            for level in [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512] {
                for n in [cols, cols.saturating_sub(1), cols / 2] {
                    let mut out = vec![0u8; n];
                    grey_bytes_at(level, &bytes[..3 * n], &mut out);
                    assert_eq!(out, want[..n], "{n} pixels at {level:?}");
                }
            }
            // The AVX-512 kernel directly (the dispatch leaves it off on a Zen 4).
            #[cfg(target_arch = "x86_64")]
            if detected_simd() >= SimdLevel::Avx512 {
                let mut out = vec![0u8; cols];
                // SAFETY: AVX-512 F/BW are present (checked just above).
                let done = unsafe { grey_bytes_avx512(&bytes, &mut out) };
                assert_eq!(done, cols / 64 * 64);
                assert_eq!(out[..done], want[..done], "{cols} pixels, AVX-512 kernel");
            }
        }
    }
}
