//! The vectorised `e^x` kernels behind `Real::exp_slice` (`apply_exp`, the softmaxes),
//! one copy per [`crate::SimdLevel`].

use cpu_features::SimdLevel;

/// A fast `e^x` that the compiler vectorises: Cody-Waite range reduction and a degree-12
/// (f64) or degree-7 (f32) polynomial (`poly` of each module, by Estrin's scheme), within
/// 1.05 ulp of the exact `e^x` for f32 (every input checked) and 2.5 ulp of `std`'s `exp`
/// for f64, subnormal results included, with `std`'s behaviour for overflow, underflow
/// and NaN. Blocks whose inputs all give normal results take a shorter path
/// (`exp_in_range`) with the same bits. Branch-free within a block and
/// without float-to-int casts (the integer `k` comes from the bits of `k + magic`), so it
/// vectorises even on baseline SSE2. Also defines `exp_slice`, which runs the loop compiled
/// for the best instruction set the CPU has.
macro_rules! exp_kernel {
    ($t:ty, $bits:ty, $mant:expr, $bias:expr, $hi:expr, $lo:expr, $ln2hi:expr, $ln2lo:expr,
     $split:expr, $up:expr, $down:expr, $fast_lo:expr, $fast_hi:expr, $block:expr) => {
        #[inline(always)]
        fn exp_one(x: $t) -> $t {
            const MAGIC: $t = 1.5 * ((1u64 << $mant) as $t);
            // Clamp so the integer part stays in range; out-of-range inputs are fixed below.
            let xc = x.clamp($lo, $hi);
            // round to nearest by the magic-number addition
            let k = (xc * core::f64::consts::LOG2_E as $t + MAGIC) - MAGIC;
            let r = (xc - k * $ln2hi) - k * $ln2lo;
            let p = poly(r);
            // 2^k = 2^(k - k2) * 2^k2, with k2 = +-split near the ends of the range so that
            // both factors are normal numbers (results near overflow and subnormal ones).
            let k2: $t = if k < -$split {
                -$split
            } else if k > $split {
                $split
            } else {
                0.0
            };
            let s2: $t = if k < -$split {
                $down
            } else if k > $split {
                $up
            } else {
                1.0
            };
            let e = (k - k2 + MAGIC).to_bits().wrapping_sub(MAGIC.to_bits());
            let s1 = <$t>::from_bits(e.wrapping_add($bias) << $mant);
            let y = p * s1 * s2;
            let y = if x > $hi { <$t>::INFINITY } else { y };
            let y = if x < $lo { 0.0 } else { y };
            // `x + x` is `x` for a quiet NaN (and quiets a signalling one, as `std`'s exp
            // does). Returning `x` itself let the compiler skip the store of NaN lanes
            // with a masked store (`vmaskmovps` at AVX2, microcoded on older AMD cores;
            // no difference measured on Zen 5).
            if x.is_nan() {
                x + x
            } else {
                y
            }
        }

        /// [`exp_one`] for `x` in `[FAST_LO, FAST_HI]`, where `k` stays within the normal
        /// exponents and the result is a normal number: `2^k` is then added to the exponent
        /// bits of `p` (one integer shift and add) instead of multiplying by two factors,
        /// and the clamps and NaN and overflow selects are not needed. `p 2^k` is exact
        /// there in both, so the result has the same bits as [`exp_one`]'s.
        #[inline(always)]
        fn exp_in_range(x: $t) -> $t {
            const MAGIC: $t = 1.5 * ((1u64 << $mant) as $t);
            let t = x * core::f64::consts::LOG2_E as $t + MAGIC;
            let k = t - MAGIC;
            let r = (x - k * $ln2hi) - k * $ln2lo;
            let p = poly(r);
            // the low bits of `t` hold `k` in two's complement; shifted to the exponent
            // field, the offset of MAGIC's own bits cancels with its shifted copy
            let scale = (t.to_bits() << $mant).wrapping_sub(MAGIC.to_bits() << $mant);
            <$t>::from_bits(p.to_bits().wrapping_add(scale))
        }

        /// The inputs of which [`exp_in_range`] gives [`exp_one`]'s bits (NaN is outside).
        const FAST_LO: $t = $fast_lo;
        const FAST_HI: $t = $fast_hi;

        /// `e^x` of each element in place: blocks of `BLOCK` elements (two 512-bit
        /// vectors) whose elements all lie in `[FAST_LO, FAST_HI]` take
        /// [`exp_in_range`], other blocks and the tail [`exp_one`]. The test is one
        /// comparison per vector and a branch per block, which is predicted well: the
        /// inputs of `exp` rarely hold values near overflow or underflow, and when they
        /// do, they come in runs (the tail of a softmax row).
        #[inline(always)]
        fn exp_body(xs: &mut [$t]) {
            const BLOCK: usize = $block;
            let mut blocks = xs.chunks_exact_mut(BLOCK);
            for block in &mut blocks {
                let mut in_range = true;
                for &x in block.iter() {
                    // `&` rather than `contains`' `&&`: both comparisons, no branch
                    #[allow(clippy::manual_range_contains)]
                    let inside = (x >= FAST_LO) & (x <= FAST_HI);
                    in_range &= inside;
                }
                if in_range {
                    for x in block.iter_mut() {
                        *x = exp_in_range(*x);
                    }
                } else {
                    for x in block.iter_mut() {
                        *x = exp_one(*x);
                    }
                }
            }
            for x in blocks.into_remainder() {
                *x = exp_one(*x);
            }
        }

        /// The portable loop alone, the model the tests hold every copy to.
        #[cfg(test)]
        pub(crate) fn exp_loop(xs: &mut [$t]) {
            exp_body(xs)
        }

        /// `e^x` of every element in place, in the copy of the current [`simd_level`]
        /// (lowered to `EXP_MAX_LEVEL`): 4 or 8 lanes with AVX2 and FMA, 16 or 8 with
        /// AVX-512, instead of SSE2's 2 or 4; every copy gives the same bits.
        pub(crate) fn exp_slice(xs: &mut [$t]) {
            at_level!(
                simd_level().min(EXP_MAX_LEVEL),
                [],
                (xs: &mut [$t]) -> (),
                exp_body(xs)
            )
        }
    };
}

/// The highest level the `exp` kernels run at (decided by measurement; see the guide).
const EXP_MAX_LEVEL: SimdLevel = SimdLevel::Avx512;

pub(crate) mod exp_f64 {
    use super::EXP_MAX_LEVEL;
    use cpu_features::{at_level, simd_level};

    exp_kernel!(
        f64,
        u64,
        52,
        1023,
        709.782_712_893_384,
        -745.133_219_101_941_1,
        6.931_471_803_691_238e-1,
        1.908_214_929_270_587_7e-10,
        100.0,
        // 2^100 and 2^-100, exactly
        f64::from_bits((1023 + 100) << 52),
        f64::from_bits((1023 - 100) << 52),
        // k = round(x log2 e) within [-1021, 1023]: p 2^k (p in [0.70, 1.42]) is normal
        -708.0,
        709.0,
        16
    );

    /// The degree-12 Taylor polynomial of `e^r` (`|r| <= ln 2 / 2`) as `1 + (r + r^2
    /// Q(r))`, with `Q`'s eleven terms by Estrin's scheme: pairs `a[2j] + a[2j + 1] r`,
    /// then pairs of those with `r^2`, `r^4`, `r^8`. The chain is seven multiply-adds
    /// long instead of Horner's twelve, so more elements are in flight at once (Horner's
    /// chain bounded the loop's speed), and adding the small `r + r^2 Q` to 1 last keeps
    /// the rounding error below Horner's (1.42 against 2.12 units of `f64::EPSILON` over
    /// 4 M points of [-700, 700]). The operations are written out in a fixed order, so
    /// every compiled copy gives the same bits.
    #[inline(always)]
    fn poly(r: f64) -> f64 {
        const A: [f64; 13] = {
            let mut a = [0.0; 13];
            let mut k = 0;
            while k < 13 {
                a[k] = 1.0 / FACTORIALS[k];
                k += 1;
            }
            a
        };
        let r2 = r * r;
        let r4 = r2 * r2;
        let r8 = r4 * r4;
        let q0 = A[2] + A[3] * r;
        let q1 = A[4] + A[5] * r;
        let q2 = A[6] + A[7] * r;
        let q3 = A[8] + A[9] * r;
        let q4 = A[10] + A[11] * r;
        let s0 = q0 + q1 * r2;
        let s1 = q2 + q3 * r2;
        let s2 = q4 + A[12] * r2;
        let tail = (s0 + s1 * r4) + s2 * r8;
        1.0 + (r + tail * r2)
    }

    /// `k!` for `k` in `0..=12`.
    const FACTORIALS: [f64; 13] = [
        1.0,
        1.0,
        2.0,
        6.0,
        24.0,
        120.0,
        720.0,
        5040.0,
        40320.0,
        362880.0,
        3628800.0,
        39916800.0,
        479001600.0,
    ];
}

pub(crate) mod exp_f32 {
    use super::EXP_MAX_LEVEL;
    use cpu_features::{at_level, simd_level};

    exp_kernel!(
        f32,
        u32,
        23,
        127,
        88.722_83,
        -103.972_08,
        0.693_145_75,
        1.428_606_8e-6,
        60.0,
        // 2^60 and 2^-60, exactly (the decimal 8.673_617e-19 rounds to 2^-60 - 2^-84,
        // which cost results below e^-41.6 an ulp)
        f32::from_bits((127 + 60) << 23),
        f32::from_bits((127 - 60) << 23),
        // k = round(x log2 e) within [-124, 127]: p 2^k (p in [0.70, 1.42]) is normal
        -86.0,
        88.0,
        32
    );

    /// The degree-7 Taylor polynomial of `e^r` (`|r| <= ln 2 / 2`) as `1 + (r + r^2
    /// Q(r))`, `Q` by Estrin's scheme, as the f64 one (1.50 against Horner's 1.54 units of
    /// `f32::EPSILON` over 4 M points of [-87, 88]).
    #[inline(always)]
    fn poly(r: f32) -> f32 {
        let r2 = r * r;
        let r4 = r2 * r2;
        let q1 = 0.5 + (1.0 / 6.0) * r;
        let q2 = (1.0 / 24.0) + (1.0 / 120.0) * r;
        let q3 = (1.0 / 720.0) + (1.0 / 5040.0) * r;
        let tail = (q1 + q2 * r2) + q3 * r4;
        1.0 + (r + tail * r2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Matrix, Real};
    use cpu_features::at_every_level;

    #[track_caller]
    fn check_exp64(x: f64) {
        let mut v = [x];
        f64::exp_slice(&mut v);
        let want = x.exp();
        if want.is_nan() {
            assert!(v[0].is_nan());
        } else if want == 0.0 || want.is_infinite() {
            assert_eq!(v[0], want, "exp({x})");
        } else {
            let rel = ((v[0] - want) / want).abs();
            // subnormal results lose relative precision in both implementations
            let tol = if want < f64::MIN_POSITIVE {
                1e-3
            } else {
                4e-15
            };
            assert!(rel <= tol, "exp({x}) = {} vs {want}, rel {rel}", v[0]);
        }
    }

    #[track_caller]
    fn check_exp32(x: f32) {
        let mut v = [x];
        f32::exp_slice(&mut v);
        let want = (x as f64).exp();
        if want.is_nan() {
            assert!(v[0].is_nan());
        } else if want > f32::MAX as f64 {
            assert_eq!(v[0], f32::INFINITY, "exp({x})");
        } else if want < 1e-45 {
            assert!(v[0] <= 1.5e-45, "exp({x}) = {}", v[0]);
        } else {
            let err = (v[0] as f64 - want).abs();
            // subnormal results are exact only to the subnormal spacing (1.4e-45)
            let tol = if want < f32::MIN_POSITIVE as f64 {
                3e-45 + 1e-3 * want
            } else {
                4e-7 * want
            };
            assert!(err <= tol, "exp({x}) = {} vs {want}, err {err}", v[0]);
        }
    }

    #[test]
    fn fast_exp_f64_matches_std() {
        at_every_level(|_| fast_exp_f64_matches_std_here());
    }

    fn fast_exp_f64_matches_std_here() {
        for &x in &[
            0.0,
            1.0,
            -1.0,
            0.5,
            1e-300,
            -1e-10,
            700.0,
            709.7,
            709.8,
            -700.0,
            -740.0,
            -746.0,
            -1000.0,
            1000.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            check_exp64(x);
        }
        let mut x = -745.0;
        while x < 709.0 {
            check_exp64(x);
            x += 0.7312;
        }
    }

    /// The largest relative error of `exp_slice` against `reference` over `n` points
    /// evenly spread over `[lo, hi]`, in units of `eps`.
    fn worst_error<T: Copy>(
        lo: f64,
        hi: f64,
        n: usize,
        from: impl Fn(f64) -> T,
        run: impl Fn(&mut [T]),
        to: impl Fn(T) -> f64,
        eps: f64,
    ) -> f64 {
        let xs: Vec<T> = (0..n)
            .map(|i| from(lo + (hi - lo) * i as f64 / n as f64))
            .collect();
        let mut ys = xs.clone();
        run(&mut ys);
        xs.iter()
            .zip(&ys)
            .map(|(&x, &y)| {
                let want = to(x).exp();
                ((to(y) - want) / want).abs() / eps
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn the_polynomials_stay_within_their_measured_error() {
        // Measured 1.42 (f64) and 1.50 (f32) units of epsilon with these grids; Horner's
        // evaluation of the same polynomials gave 2.12 and 1.54.
        at_every_level(|level| {
            let f64_worst = worst_error(
                -700.0,
                700.0,
                400_000,
                |x| x,
                f64::exp_slice,
                |x| x,
                f64::EPSILON,
            );
            assert!(f64_worst < 1.6, "{level:?}: f64 error {f64_worst} eps");
            let f32_worst = worst_error(
                -87.0,
                88.0,
                400_000,
                |x| x as f32,
                f32::exp_slice,
                f64::from,
                f32::EPSILON as f64,
            );
            assert!(f32_worst < 1.6, "{level:?}: f32 error {f32_worst} eps");
        });
    }

    /// The distance of `got` from the exact `want` in units in the last place at `want`
    /// (`spacing(want)`, the gap between neighbouring values of `got`'s type there, the
    /// smallest subnormal below the normal range). Infinities and NaN must match exactly.
    fn ulps(got: f64, want: f64, spacing: impl Fn(f64) -> f64) -> f64 {
        if want.is_nan() || got.is_nan() {
            return if want.is_nan() && got.is_nan() {
                0.0
            } else {
                f64::INFINITY
            };
        }
        if got.is_infinite() || want.is_infinite() {
            return if got == want { 0.0 } else { f64::INFINITY };
        }
        (got - want).abs() / spacing(want)
    }

    /// The gap between f32 values at `v` (2^-149 below the normal range).
    fn f32_spacing(v: f64) -> f64 {
        let v = v.abs().max(f32::MIN_POSITIVE as f64);
        2f64.powi(v.log2().floor() as i32 - 23)
    }

    /// The gap between f64 values at `v` (2^-1074 below the normal range).
    fn f64_spacing(v: f64) -> f64 {
        let v = v.abs();
        v.next_up() - v
    }

    /// `e^x` for an f32 `x`, exactly enough for f32: computed in f64 (within 1e-16
    /// relative, far below an f32 ulp), infinity where it rounds past `f32::MAX`.
    fn exact32(x: f32) -> f64 {
        let want = (x as f64).exp();
        if (want as f32).is_infinite() {
            f64::INFINITY
        } else {
            want
        }
    }

    /// The largest error in ulps of `f32::exp_slice` over `xs` against [`exact32`], with
    /// the input where it occurs.
    fn worst_ulps32(xs: &[f32]) -> (f64, f32) {
        let mut ys = xs.to_vec();
        f32::exp_slice(&mut ys);
        xs.iter()
            .zip(&ys)
            .map(|(&x, &y)| (ulps(y as f64, exact32(x), f32_spacing), x))
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
    }

    /// Every f32 from -110 to 95 (both signs, subnormal and overflowing results
    /// included) with a stride of 61 bit patterns, about 35 M inputs, plus every f32
    /// whose result is subnormal and the 80 around the overflow threshold.
    fn dense_f32_sweep() -> Vec<f32> {
        let mut xs = Vec::new();
        let top = 95f32.to_bits();
        let bottom = 110f32.to_bits();
        xs.extend((0..top).step_by(61).map(f32::from_bits));
        xs.extend((0..bottom).step_by(61).map(|b| -f32::from_bits(b)));
        // results below f32::MIN_POSITIVE: x in [-103.98, -87.33]
        xs.extend((87.33f32.to_bits()..=103.98f32.to_bits()).map(|b| -f32::from_bits(b)));
        let max_x = 88.722_84f32.to_bits();
        xs.extend((max_x - 40..max_x + 40).map(f32::from_bits));
        xs
    }

    /// The largest error of the f32 kernel against the exact `e^x`, stated in the guide:
    /// 1.047 ulps over every f32 in [-104, 89] (checked once, exhaustively, at the
    /// AVX-512 and the scalar level: 2.2 G inputs); the sweep below prints its worst
    /// with `--nocapture`.
    const F32_MAX_ULPS: f64 = 1.05;

    #[test]
    fn f32_exp_is_within_its_stated_ulps_on_a_dense_sweep() {
        let xs = dense_f32_sweep();
        assert!(xs.len() > 10_000_000);
        at_every_level(|level| {
            let (worst, at) = worst_ulps32(&xs);
            println!("{level:?}: f32 exp worst {worst:.4} ulps at exp({at:e})");
            assert!(
                worst <= F32_MAX_ULPS,
                "{level:?}: {worst} ulps at exp({at:e})"
            );
        });
    }

    #[test]
    fn f32_exp_edge_cases_at_every_level() {
        let min_sub = f32::from_bits(1);
        // exactly given results
        #[rustfmt::skip]
        let exact: &[(f32, f32)] = &[
            (f32::NEG_INFINITY, 0.0), (f32::INFINITY, f32::INFINITY),
            (f32::MAX, f32::INFINITY), (f32::MIN, 0.0),
            (0.0, 1.0), (-0.0, 1.0),
            // subnormal and tiny inputs: e^x rounds to 1
            (min_sub, 1.0), (-min_sub, 1.0), (f32::MIN_POSITIVE, 1.0), (1e-30, 1.0),
            // past ln(f32::MAX) = 88.7228391...: overflow
            (88.722_84, f32::INFINITY), (89.0, f32::INFINITY), (1e4, f32::INFINITY),
            // the smallest subnormal, then underflow to zero
            (-103.972_08, min_sub), (-104.0, 0.0), (-1e4, 0.0),
        ];
        // within the stated ulps: the largest finite result, the last normal one, the
        // subnormal range, the ends of the in-range block path
        let near: &[f32] = &[
            88.722_83, 88.0, 88.000_01, 87.999_99, -86.0, -86.000_01, -85.999_99, -87.336_55,
            -87.336_54, -87.4, -100.0, -103.0, -103.9,
        ];
        at_every_level(|level| {
            for &(x, want) in exact {
                let mut v = [x];
                f32::exp_slice(&mut v);
                assert_eq!(
                    v[0].to_bits(),
                    want.to_bits(),
                    "{level:?}: exp({x:e}) = {:e}",
                    v[0]
                );
            }
            for &x in near {
                // alone (the tail path) and inside a block of ordinary values
                let mut block = [0.25f32; 40];
                block[5] = x;
                let mut v = [x];
                f32::exp_slice(&mut v);
                f32::exp_slice(&mut block);
                let err = ulps(v[0] as f64, exact32(x), f32_spacing);
                assert!(
                    err <= F32_MAX_ULPS,
                    "{level:?}: exp({x:e}) = {:e}, {err} ulps",
                    v[0]
                );
                assert_eq!(block[5].to_bits(), v[0].to_bits(), "{level:?}: exp({x:e})");
            }
            // NaN stays NaN, in a block of otherwise ordinary values too (the in-range
            // test of a block must send it to the careful path)
            let mut block = [0.5f32; 40];
            block[3] = f32::NAN;
            block[37] = -f32::NAN;
            f32::exp_slice(&mut block);
            assert!(block[3].is_nan() && block[37].is_nan(), "{level:?}");
            assert!(block
                .iter()
                .filter(|v| !v.is_nan())
                .all(|&v| v == 0.5f32.exp()));
        });
    }

    /// The largest error of the f64 kernel against std's `exp` (itself within 1 ulp),
    /// stated in the guide; 2.0 measured on the sweep below.
    const F64_MAX_ULPS: f64 = 2.5;

    #[test]
    fn f64_exp_is_within_its_stated_ulps() {
        // against std's f64 `exp` (itself within 1 ulp): 2 M points over [-746, 710],
        // subnormal results included, and the ends of the range
        let n = 2_000_000;
        let mut xs: Vec<f64> = (0..n)
            .map(|i| -746.0 + 1456.0 * i as f64 / n as f64)
            .collect();
        xs.extend([
            709.782_712_893_383_9,
            709.782_712_893_384_1,
            -708.396_418_532_264_1,
            -745.133_219_101_941_1,
            -745.2,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::from_bits(1),
        ]);
        at_every_level(|level| {
            let mut ys = xs.clone();
            f64::exp_slice(&mut ys);
            let (worst, at) = xs
                .iter()
                .zip(&ys)
                .map(|(&x, &y)| (ulps(y, x.exp(), f64_spacing), x))
                .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
            println!("{level:?}: f64 exp worst {worst:.4} ulps at exp({at:e})");
            assert!(
                worst <= F64_MAX_ULPS,
                "{level:?}: {worst} ulps at exp({at:e})"
            );
        });
    }

    #[test]
    fn fast_exp_f32_matches_std() {
        at_every_level(|_| fast_exp_f32_matches_std_here());
    }

    fn fast_exp_f32_matches_std_here() {
        for &x in &[
            0.0f32,
            1.0,
            -1.0,
            0.5,
            -1e-10,
            88.0,
            88.7,
            89.0,
            -87.0,
            -100.0,
            -104.0,
            -200.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ] {
            check_exp32(x);
        }
        let mut x = -103.0f32;
        while x < 88.0 {
            check_exp32(x);
            x += 0.0731;
        }
    }

    #[test]
    fn portable_and_simd_exp_agree_bit_for_bit() {
        let xs32: Vec<f32> = (0..20000).map(|i| i as f32 * 0.0097 - 100.0).collect();
        let mut want32 = xs32.clone();
        exp_f32::exp_loop(&mut want32);
        let xs64: Vec<f64> = (0..20000).map(|i| i as f64 * 0.0731 - 740.0).collect();
        let mut want64 = xs64.clone();
        exp_f64::exp_loop(&mut want64);
        let levels = at_every_level(|level| {
            let (mut a, mut b) = (xs32.clone(), xs64.clone());
            f32::exp_slice(&mut a);
            f64::exp_slice(&mut b);
            assert!(a
                .iter()
                .zip(&want32)
                .all(|(x, y)| x.to_bits() == y.to_bits()));
            assert!(b
                .iter()
                .zip(&want64)
                .all(|(x, y)| x.to_bits() == y.to_bits()));
            level
        });
        assert_eq!(levels.last(), Some(&crate::detected_simd()));
    }

    #[test]
    fn remainders_and_unaligned_starts_agree_with_the_portable_loop() {
        // Every length up to 70 (remainders of the 16- and 8-lane loops) at starts 0..4
        // elements past an aligned buffer, with specials among ordinary values; the
        // elements around the slice must stay untouched.
        let pool32: Vec<f32> = (0..80)
            .map(|i| match i % 13 {
                0 => f32::NAN,
                5 => 100.0,
                7 => -110.0,
                _ => i as f32 * 0.37 - 12.0,
            })
            .collect();
        let pool64: Vec<f64> = pool32.iter().map(|&x| x as f64 * 7.9).collect();
        at_every_level(|level| {
            for start in 0..4 {
                for len in 0..=70 {
                    let mut a = pool32.clone();
                    f32::exp_slice(&mut a[start..start + len]);
                    let mut want = pool32.clone();
                    exp_f32::exp_loop(&mut want[start..start + len]);
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&a), bits(&want), "{level:?} f32 {start}+{len}");
                    let mut b = pool64.clone();
                    f64::exp_slice(&mut b[start..start + len]);
                    let mut want = pool64.clone();
                    exp_f64::exp_loop(&mut want[start..start + len]);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&b), bits(&want), "{level:?} f64 {start}+{len}");
                }
            }
        });
    }

    #[test]
    fn softmax_per_row_of_a_strided_view_matches_an_f64_model_at_every_level() {
        // A 9 x 37 window at column 3 of a 9 x 45 matrix: rows start at unaligned
        // addresses, 37 = 2 * 16 + 5 leaves remainders, and the columns outside the window
        // must not change.
        let (rows, cols) = (9, 45);
        let value = |r: usize, c: usize| ((r * 31 + c * 17) % 97) as f32 * 0.21 - 9.0;
        let mut m = Matrix::<f32>::new(rows, cols);
        for r in 0..rows {
            for c in 0..cols {
                m[(r, c)] = value(r, c);
            }
        }
        let results = at_every_level(|_| {
            let mut soft = m.clone();
            soft.col_range_mut(3, 37).apply_softmax_per_row();
            let mut log_soft = m.clone();
            log_soft.col_range_mut(3, 37).apply_log_softmax_per_row();
            (soft, log_soft)
        });
        for (soft, log_soft) in &results {
            for r in 0..rows {
                // The shift `x - max` is rounded to f32 as the kernel does; the rest in f64.
                let max = (3..40)
                    .map(|c| value(r, c))
                    .fold(f32::NEG_INFINITY, f32::max);
                let shifted = |c: usize| (value(r, c) - max) as f64;
                let sum: f64 = (3..40).map(|c| shifted(c).exp()).sum();
                for c in 0..cols {
                    if !(3..40).contains(&c) {
                        assert_eq!(soft[(r, c)], value(r, c));
                        assert_eq!(log_soft[(r, c)], value(r, c));
                        continue;
                    }
                    // exp's bound (4e-7) plus the roundings of 1 / sum and the product
                    let want = shifted(c).exp() / sum;
                    let got = soft[(r, c)] as f64;
                    assert!((got - want).abs() <= 6e-7 * want, "{got} vs {want}");
                    let want_log = value(r, c) as f64 - max as f64 - sum.ln();
                    let got_log = log_soft[(r, c)] as f64;
                    assert!(
                        (got_log - want_log).abs() <= 4e-6,
                        "{got_log} vs {want_log}"
                    );
                }
            }
        }
        // bit for bit between the levels
        for (soft, log_soft) in &results[1..] {
            assert_eq!(soft, &results[0].0);
            assert_eq!(log_soft, &results[0].1);
        }
    }
}
