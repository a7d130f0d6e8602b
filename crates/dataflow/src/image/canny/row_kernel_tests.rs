//! The tests of the vector row kernels against the plain loops, and of their bounds
//! checks with buffers one short.

use super::classify::{decide, load_row_kernel, row_seeds, seeds_none, sobel_row_none, Mag};
use super::x86::{RowKernel, SeedKernel, SobelKernel};
use super::*;
use crate::explicit::View;
use crate::image::sobel::SobelRows;

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

/// Every vector Sobel kernel the processor can run, with its name: L1 ones.
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

/// The L2 Sobel kernels the processor can run.
fn sobel_kernels_l2() -> Vec<(&'static str, SobelKernel<i32>)> {
    let level = cpu_features::detected_simd();
    let mut out: Vec<(&'static str, SobelKernel<i32>)> = Vec::new();
    if level >= crate::image::SimdLevel::Avx2 {
        out.push(("l2 avx2", sobel_l2_row_avx2));
    }
    if level >= crate::image::SimdLevel::Avx512 {
        out.push(("l2 avx512", sobel_l2_row_avx512));
    }
    out
}

/// `kernel` against the plain loop on rows of random and extreme bytes, and its bounds
/// checks with each buffer one short.
fn check_sobel_kernel<M: Mag + std::fmt::Debug + std::panic::RefUnwindSafe>(
    name: &str,
    kernel: SobelKernel<M>,
) {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    for &cols in &[1usize, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100] {
        let data: Vec<u8> = (0..3 * cols)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                // extremes often: the sums must not overflow
                [0, 255, (s >> 8) as u8][(s % 3) as usize]
            })
            .collect();
        let a = View::new(Dim2(3, cols), &data);
        let run = |k: SobelKernel<M>| {
            let mut sobel = SobelRows::new(cols);
            let (mut dx, mut dy, mut mag) = (
                vec![7i16; cols],
                vec![7i16; cols],
                vec![M::default(); cols + 2],
            );
            // SAFETY: the callers pass kernels this processor can run.
            unsafe { load_row_kernel(&a, &mut sobel, k, 1, &mut dx, &mut dy, &mut mag) };
            (dx, dy, mag)
        };
        assert_eq!(run(kernel), run(sobel_row_none), "{name} {cols} columns");
    }
    // one element short in each buffer in turn, for 64 columns
    for short in 0..4 {
        let cols = 64;
        let len = |k: usize, full: usize| if short == k { full - 1 } else { full };
        let p = [len(0, cols + 2), cols + 2, cols + 2].map(|n| vec![0u8; n]);
        let got = std::panic::catch_unwind(|| {
            let (mut dx, mut dy) = (vec![0i16; len(1, cols)], vec![0i16; len(2, cols)]);
            let mut mag = vec![M::default(); len(3, cols + 2)];
            let p = [&p[0][..], &p[1][..], &p[2][..]];
            // SAFETY: the callers pass kernels this processor can run.
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

#[test]
fn sobel_kernels_equal_the_plain_loop_and_refuse_short_buffers() {
    for (name, kernel) in sobel_kernels() {
        check_sobel_kernel(name, kernel);
    }
    for (name, kernel) in sobel_kernels_l2() {
        check_sobel_kernel(name, kernel);
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

/// The L2 row kernels the processor can run.
fn kernels_l2() -> Vec<(&'static str, RowKernel<i32>)> {
    let level = cpu_features::detected_simd();
    let mut out: Vec<(&'static str, RowKernel<i32>)> = Vec::new();
    if level >= crate::image::SimdLevel::Avx2 {
        out.push(("l2 avx2", decide_row_l2_avx2));
    }
    if level >= crate::image::SimdLevel::Avx512 {
        out.push(("l2 avx512", decide_row_l2_avx512));
    }
    out
}

/// Each buffer one element short of what a 64-column line needs: the bounds check before
/// the vector loop must panic instead of reading past the buffer.
fn check_row_kernel_bounds<M: Mag + std::panic::RefUnwindSafe>(name: &str, kernel: RowKernel<M>) {
    for short in 0..4 {
        let cols = 64;
        let len = |k: usize, full: usize| if short == k { full - 1 } else { full };
        let rows =
            [len(0, cols + 2), len(1, cols + 2), len(1, cols + 2)].map(|n| vec![M::default(); n]);
        let (dx, dy) = (vec![0i16; len(2, cols)], vec![0i16; len(3, cols)]);
        let got = std::panic::catch_unwind(|| {
            let mut line = vec![0u8; cols];
            let refs = [&rows[0][..], &rows[1][..], &rows[2][..]];
            // SAFETY: the callers pass kernels this processor can run.
            unsafe { kernel(refs, &dx, &dy, [M::default(); 2], &mut line) }
        });
        assert!(got.is_err(), "{name}: buffer {short} short was accepted");
    }
}

#[test]
fn row_kernels_refuse_rows_shorter_than_the_line() {
    for (name, kernel) in kernels() {
        check_row_kernel_bounds(name, kernel);
    }
    for (name, kernel) in kernels_l2() {
        check_row_kernel_bounds(name, kernel);
    }
}

/// `kernel` against [`decide`] at every pixel: magnitudes below `spreads` (ties with the
/// neighbours common at the small ones), gradients on and around the sector boundaries,
/// thresholds that keep all, none, or some (`M::threshold(v)` is the magnitude `v`).
fn check_row_kernel<M: Mag>(name: &str, kernel: RowKernel<M>, spreads: [u64; 4]) {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n
    };
    for &cols in &[1usize, 2, 31, 32, 33, 63, 64, 65, 100] {
        for round in 0..60 {
            let spread = spreads[round % 4];
            let rows: [Vec<M>; 3] = std::array::from_fn(|_| {
                let mut r: Vec<M> = (0..cols + 2)
                    .map(|_| M::threshold(next(spread) as i64))
                    .collect();
                r[0] = M::default();
                r[cols + 1] = M::default();
                r
            });
            let g: Vec<[i16; 2]> = (0..cols)
                .map(|k| {
                    let x = next(2041) as i16 - 1020;
                    let y =
                        match (round + k) % 4 {
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
                1 => (5_000_000, 6_000_000),
                _ => {
                    let t = spread.min(60).max(spread / 8);
                    (next(t) as i64, next(t + 3) as i64)
                }
            };
            let mut line = vec![7u8; cols];
            let refs = [&rows[0][..], &rows[1][..], &rows[2][..]];
            let th = [M::threshold(low), M::threshold(high)];
            // SAFETY: the callers pass kernels this processor can run.
            let done = unsafe { kernel(refs, &dx, &dy, th, &mut line) };
            assert_eq!(done, cols / 32 * 32);
            for x in 0..done {
                let j = x + 1;
                let mag_at = |dy: isize, dx: isize| {
                    rows[(1 + dy) as usize][(j as isize + dx) as usize].into()
                };
                let want = decide(g[x], rows[1][j].into(), low, high, mag_at);
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

#[test]
fn row_kernels_equal_the_pixel_decision() {
    for (name, kernel) in kernels() {
        check_row_kernel(name, kernel, [3, 9, 40, 2041]);
    }
    // squared magnitudes: up to 2 * 1020^2
    for (name, kernel) in kernels_l2() {
        check_row_kernel(name, kernel, [3, 40, 5000, 2 * 1020 * 1020 + 1]);
    }
}
