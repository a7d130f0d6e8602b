//! The 8-bit separable blur in integers over whole interleaved rows: the row pass in `u16`
//! (taps with 8 fraction bits, so at most `255 * 256`), the column pass in `u32` rounded
//! to the nearest level (`(sum + 2^15) >> 16`), as OpenCV's fixed-point `GaussianBlur`.
//! Grey and RGB share the kernel: an RGB row is `3 * cols` bytes whose neighbours along
//! the row are 3 bytes apart, so no channel planes are ever made.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::convolve::{border_interpolate, Border};
use crate::load::{schedule_bands, Threads};
use crate::shape::{Dim2, Shape};
use crate::source::Source;

/// An 8-bit pixel of `C` interleaved channels.
pub(crate) trait Pixel: Copy + Send + Sync + Default + 'static {
    /// Channels per pixel.
    const C: usize;
    /// The bytes of a run of pixels.
    fn bytes(s: &[Self]) -> &[u8];
    /// The bytes of a run of pixels not written yet.
    fn bytes_uninit(s: &mut [MaybeUninit<Self>]) -> &mut [MaybeUninit<u8>];
}

impl Pixel for u8 {
    const C: usize = 1;
    fn bytes(s: &[u8]) -> &[u8] {
        s
    }
    fn bytes_uninit(s: &mut [MaybeUninit<u8>]) -> &mut [MaybeUninit<u8>] {
        s
    }
}

impl Pixel for [u8; 3] {
    const C: usize = 3;
    fn bytes(s: &[[u8; 3]]) -> &[u8] {
        s.as_flattened()
    }
    fn bytes_uninit(s: &mut [MaybeUninit<[u8; 3]>]) -> &mut [MaybeUninit<u8>] {
        const _: () = assert!(
            std::mem::size_of::<MaybeUninit<[u8; 3]>>() == 3
                && std::mem::align_of::<MaybeUninit<[u8; 3]>>() == 1
        );
        let len = s.len() * 3;
        // SAFETY: `MaybeUninit<[u8; 3]>` is 3 bytes with alignment 1 (asserted at compile
        // time above), so the `s.len()` pixels are `len` consecutive `MaybeUninit<u8>`
        // of the same allocation (`len` cannot overflow: the slice already spans those
        // bytes); the exclusive borrow of `s` moves into the result.
        unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<MaybeUninit<u8>>(), len) }
    }
}

/// Which source row a ring slot holds (`None` for a constant border row).
type Key = Option<usize>;

/// The row pass of image row `q` into `h` (`cols * C` sums), through the padded row `pad`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn row_pass<P: Pixel, A: Source<Shape = Dim2, Elem = P>, const N: usize>(
    a: &A,
    q: usize,
    taps: &[u16; N],
    border: &Border<u8>,
    scratch: &mut [P],
    pad: &mut [u8],
    h: &mut [u16],
) {
    let Dim2(_, cols) = a.extent();
    let c = P::C;
    let r = N / 2;
    let w = cols * c;
    assert_eq!(scratch.len(), cols, "blur: scratch row of the wrong length");
    // SAFETY: row q and columns 0..cols lie inside the extent (the caller's rows).
    let row: &[u8] = match unsafe { a.span_slice(cols, q, 0..cols) } {
        Some(s) => P::bytes(s),
        None => {
            // SAFETY: as above; `scratch` holds `cols` pixels (asserted above).
            unsafe { a.fill_span(a.extent(), cols, q, 0..cols, scratch.as_mut_ptr()) };
            P::bytes(scratch)
        }
    };
    pad[r * c..r * c + w].copy_from_slice(row);
    let constant = match border {
        Border::Constant(v) => *v,
        _ => 0,
    };
    for i in 0..r {
        for (p, at) in [
            (i as isize - r as isize, i),
            ((cols + i) as isize, r + cols + i),
        ] {
            let dst = &mut pad[at * c..(at + 1) * c];
            match border_interpolate(p, cols, border) {
                Some(s) => dst.copy_from_slice(&row[s * c..(s + 1) * c]),
                None => dst.fill(constant),
            }
        }
    }
    let pad = &pad[..w + 2 * r * c];
    let h = &mut h[..w];
    if taps[..] == BINOMIAL_5 {
        // p0 + 4 p1 + 6 p2 + 4 p3 + p4 as (p0 + p4) + 4 (p1 + p3) + 6 p2: six operations a
        // lane instead of nine, the same integers
        let tap = |k: usize| &pad[k * c..k * c + w];
        let (p0, p1, p2, p3, p4) = (tap(0), tap(1), tap(2), tap(3), tap(4));
        for (out, ((&a, &e), ((&b, &d), &c))) in h
            .iter_mut()
            .zip(p0.iter().zip(p4).zip(p1.iter().zip(p3).zip(p2)))
        {
            let outer = u16::from(a) + u16::from(e);
            let inner = u16::from(b) + u16::from(d);
            *out = outer + (inner << 2) + 6 * u16::from(c);
        }
        return;
    }
    for (x, out) in h.iter_mut().enumerate() {
        let mut s = 0u16;
        for (k, &t) in taps.iter().enumerate() {
            // SAFETY: x + k * c <= w - 1 + 2 r c < pad.len().
            s = s.wrapping_add(t.wrapping_mul(u16::from(unsafe { *pad.get_unchecked(x + k * c) })));
        }
        *out = s;
    }
}

/// OpenCV's 5-tap kernel for sigma 0 (`[16, 64, 96, 64, 16] / 256`), divided by 16 as
/// the band uses it: its two passes have a form with fewer operations.
const BINOMIAL_5: [u16; 5] = [1, 4, 6, 4, 1];

/// One band of output rows, written to `out` (the band's rows only, as bytes): every
/// byte of `out` is written.
#[inline(always)]
fn band<P: Pixel, A: Source<Shape = Dim2, Elem = P>, const N: usize>(
    a: &A,
    taps: [u16; N],
    border: Border<u8>,
    band: std::ops::Range<usize>,
    out: &mut [MaybeUninit<u8>],
) {
    let Dim2(rows, cols) = a.extent();
    let w = cols * P::C;
    let r = N / 2;
    let mut scratch = vec![P::default(); cols];
    let mut pad = vec![0u8; w + 2 * r * P::C];
    // N + 1 slots: the binomial path finishes two output rows a step, from N + 1 rows
    let mut keys: Vec<Option<Key>> = vec![None; N + 1];
    let mut ring: Vec<Vec<u16>> = (0..N + 1).map(|_| vec![0u16; w]).collect();
    let mut need: Vec<Key> = Vec::with_capacity(N + 1);
    // When every tap is a multiple of 16 (OpenCV's 3x3 and 5x5 kernels), both passes use
    // the taps divided by 16: row sums are at most 255 * 16 and column sums at most
    // 255 * 256, so the column pass stays in u16 lanes too; and since the full-precision
    // sum is 256 times the reduced one, `(sum + 2^15) >> 16` is `(reduced + 2^7) >> 8`.
    let reduced = taps.iter().all(|&t| t % 16 == 0);
    let taps = if reduced { taps.map(|t| t / 16) } else { taps };
    let binomial = reduced && taps[..] == BINOMIAL_5;
    let constant_row = match border {
        Border::Constant(v) => u16::from(v) * taps.iter().sum::<u16>(),
        _ => 0,
    };
    let mut y = band.start;
    while y < band.end {
        // the rows this step reads: N, or N + 1 for two output rows
        let pair = binomial && y + 1 < band.end;
        need.clear();
        need.extend(
            (0..N + usize::from(pair))
                .map(|i| border_interpolate(y as isize + i as isize - r as isize, rows, &border)),
        );
        for &key in &need {
            if keys.contains(&Some(key)) {
                continue;
            }
            let slot = keys
                .iter()
                .position(|k| k.is_none_or(|k| !need.contains(&k)))
                .expect("N + 1 slots hold at most N + 1 needed rows");
            match key {
                Some(q) => row_pass(
                    a,
                    q,
                    &taps,
                    &border,
                    &mut scratch,
                    &mut pad,
                    &mut ring[slot],
                ),
                None => ring[slot].fill(constant_row),
            }
            keys[slot] = Some(key);
        }
        let row_of = |i: usize| -> &[u16] {
            let slot = keys
                .iter()
                .position(|k| *k == Some(need[i]))
                .expect("loaded above");
            &ring[slot][..w]
        };
        if pair {
            // as the row pass: (r0 + r4) + 4 (r1 + r3) + 6 r2 (at most 16 * 4080 + 128),
            // for rows y and y + 1 in one sweep over the six ring rows they share
            let (r0, r1, r2, r3, r4, r5) = (
                row_of(0),
                row_of(1),
                row_of(2),
                row_of(3),
                row_of(4),
                row_of(5),
            );
            let at = (y - band.start) * w;
            let (first, second) = out[at..at + 2 * w].split_at_mut(w);
            for ((o, p), (((&a, &b), (&c, &d)), (&e, &f))) in first.iter_mut().zip(second).zip(
                r0.iter()
                    .zip(r1)
                    .zip(r2.iter().zip(r3))
                    .zip(r4.iter().zip(r5)),
            ) {
                let s = (a + e) + ((b + d) << 2) + 6 * c + (1 << 7);
                let t = (b + f) + ((c + e) << 2) + 6 * d + (1 << 7);
                o.write((s >> 8) as u8);
                p.write((t >> 8) as u8);
            }
            y += 2;
            continue;
        }
        let src: [&[u16]; N] = std::array::from_fn(row_of);
        let dst = &mut out[(y - band.start) * w..(y - band.start + 1) * w];
        if binomial {
            // the last row of an odd band
            let (r0, r1, r2, r3, r4) = (src[0], src[1], src[2], src[3], src[4]);
            for (o, ((&a, &e), ((&b, &d), &c))) in dst
                .iter_mut()
                .zip(r0.iter().zip(r4).zip(r1.iter().zip(r3).zip(r2)))
            {
                let s = (a + e) + ((b + d) << 2) + 6 * c + (1 << 7);
                o.write((s >> 8) as u8);
            }
            y += 1;
            continue;
        }
        if reduced {
            for (x, o) in dst.iter_mut().enumerate() {
                let mut s = 1u16 << 7;
                for i in 0..N {
                    // SAFETY: every ring row holds `w` sums and x < w.
                    s = s.wrapping_add(taps[i].wrapping_mul(unsafe { *src[i].get_unchecked(x) }));
                }
                o.write((s >> 8) as u8);
            }
            y += 1;
            continue;
        }
        for (x, o) in dst.iter_mut().enumerate() {
            let mut s = 1u32 << 15;
            for i in 0..N {
                // SAFETY: every ring row holds `w` sums and x < w.
                s += u32::from(taps[i]) * u32::from(unsafe { *src[i].get_unchecked(x) });
            }
            o.write((s >> 16) as u8);
        }
        y += 1;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn band_avx2<P: Pixel, A: Source<Shape = Dim2, Elem = P>, const N: usize>(
    a: &A,
    taps: [u16; N],
    border: Border<u8>,
    rows: std::ops::Range<usize>,
    out: &mut [MaybeUninit<u8>],
) {
    band(a, taps, border, rows, out)
}

/// [`band`] compiled with AVX-512 F/BW enabled (the same integer arithmetic).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn band_avx512<P: Pixel, A: Source<Shape = Dim2, Elem = P>, const N: usize>(
    a: &A,
    taps: [u16; N],
    border: Border<u8>,
    rows: std::ops::Range<usize>,
    out: &mut [MaybeUninit<u8>],
) {
    band(a, taps, border, rows, out)
}

/// Whether the blur takes its AVX-512 copy where the processor has it (kept only where
/// it measured faster than the AVX2 copy; see the crate guide).
const BLUR_AVX512: bool = true;

/// The separable blur of an 8-bit source of `P` pixels with taps summing to 256, into
/// `out` (`rows * cols` pixels, not written yet), in static row bands: the result does
/// not depend on `threads`. Every pixel of `out` is written (checked: `out` holds exactly
/// the extent's pixels and the bands cover them), so the caller may treat it as
/// initialised afterwards.
pub(crate) fn blur_fixed<P: Pixel, A: Source<Shape = Dim2, Elem = P>, const N: usize>(
    a: &A,
    taps: [u16; N],
    border: Border<u8>,
    threads: Threads,
    out: &mut [MaybeUninit<P>],
) {
    let Dim2(rows, cols) = a.extent();
    assert_eq!(
        out.len(),
        a.extent().size(),
        "blur: an output of {} pixels for an extent of {rows} x {cols}",
        out.len()
    );
    if rows == 0 || cols == 0 {
        return;
    }
    let w = cols * P::C;
    let work = schedule_bands(&[(0..rows, 0..cols)], threads);
    let mut pieces = Vec::with_capacity(work.len());
    let mut rest = P::bytes_uninit(out);
    for (r, _) in &work {
        let (head, tail) = rest.split_at_mut(r.len() * w);
        pieces.push((r.clone(), head));
        rest = tail;
    }
    assert!(
        rest.is_empty(),
        "blur: the row bands leave {} bytes of the output unwritten",
        rest.len()
    );
    let level = cpu_features::simd_level();
    let run = |(r, piece): (std::ops::Range<usize>, &mut [MaybeUninit<u8>])| {
        #[cfg(target_arch = "x86_64")]
        {
            use cpu_features::SimdLevel;
            if level == SimdLevel::Avx512 && BLUR_AVX512 {
                // SAFETY: the processor supports AVX-512 F/BW (`simd_level()` is capped by the
                // detected level).
                return unsafe { band_avx512(a, taps, border, r, piece) };
            }
            if level >= SimdLevel::Avx2 {
                // SAFETY: the processor supports AVX2 (as above).
                return unsafe { band_avx2(a, taps, border, r, piece) };
            }
        }
        let _ = level;
        band(a, taps, border, r, piece)
    };
    if pieces.len() > 1 {
        pieces.into_par_iter().for_each(run);
    } else {
        pieces.into_iter().for_each(run);
    }
}
