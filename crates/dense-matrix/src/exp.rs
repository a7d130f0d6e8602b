//! The vectorised `e^x` kernels behind `Real::exp_slice` (`apply_exp`, the softmaxes),
//! one copy per [`crate::SimdLevel`].

use crate::simd::SimdLevel;

/// A fast `e^x` that the compiler vectorises: Cody-Waite range reduction and a degree-12
/// (f64) or degree-7 (f32) polynomial (`poly` of each module, by Estrin's scheme), within
/// a few ulp of `std`'s `exp` on the whole
/// finite range, with `std`'s behaviour for overflow, underflow and NaN. Branch-free and
/// without float-to-int casts (the integer `k` comes from the bits of `k + magic`), so it
/// vectorises even on baseline SSE2. Also defines `exp_slice`, which runs the loop compiled
/// for the best instruction set the CPU has.
macro_rules! exp_kernel {
    ($t:ty, $bits:ty, $mant:expr, $bias:expr, $hi:expr, $lo:expr, $ln2hi:expr, $ln2lo:expr,
     $split:expr, $up:expr, $down:expr) => {
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

        /// `e^x` of each element in place.
        #[inline(always)]
        fn exp_body(xs: &mut [$t]) {
            for x in xs {
                *x = exp_one(*x);
            }
        }

        pub(crate) fn exp_loop(xs: &mut [$t]) {
            exp_body(xs)
        }

        /// The same loop compiled for AVX2 + FMA (4 or 8 lanes instead of SSE2's 2 or 4).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn exp_loop_avx2(xs: &mut [$t]) {
            exp_body(xs)
        }

        /// The same loop compiled for AVX-512 (16 or 8 lanes).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx2,fma")]
        fn exp_loop_avx512(xs: &mut [$t]) {
            exp_body(xs)
        }

        /// `e^x` of every element in place, in the copy of the current [`simd_level`]
        /// (lowered to `EXP_MAX_LEVEL`); every copy gives the same bits.
        pub(crate) fn exp_slice(xs: &mut [$t]) {
            match simd_level().min(EXP_MAX_LEVEL) {
                #[cfg(target_arch = "x86_64")]
                SimdLevel::Avx512 => {
                    // SAFETY: `simd_level()` never exceeds `detected_simd()`, which found
                    // AVX-512 F, AVX2 and FMA, the features the function was compiled for.
                    unsafe { exp_loop_avx512(xs) }
                }
                #[cfg(target_arch = "x86_64")]
                SimdLevel::Avx2 => {
                    // SAFETY: as above: the processor has AVX2 and FMA.
                    unsafe { exp_loop_avx2(xs) }
                }
                _ => exp_loop(xs),
            }
        }
    };
}

/// The highest level the `exp` kernels run at (decided by measurement; see the guide).
const EXP_MAX_LEVEL: SimdLevel = SimdLevel::Avx512;

pub(crate) mod exp_f64 {
    use super::EXP_MAX_LEVEL;
    use crate::simd::{simd_level, SimdLevel};

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
        1.267_650_600_228_229_4e30,
        7.888_609_052_210_118e-31
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
    use crate::simd::{simd_level, SimdLevel};

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
        1.152_921_5e18,
        8.673_617e-19
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
    use crate::simd::testing::at_every_level;
    use crate::{Matrix, Real};

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
