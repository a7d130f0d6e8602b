//! The vectorised `e^x` kernels behind `Real::exp_slice` (`apply_exp`, the softmaxes),
//! one copy per [`crate::SimdLevel`].

use crate::simd::SimdLevel;

/// A fast `e^x` that the compiler vectorises: Cody-Waite range reduction and a degree-12
/// (f64) or degree-7 (f32) polynomial, within a few ulp of `std`'s `exp` on the whole
/// finite range, with `std`'s behaviour for overflow, underflow and NaN. Branch-free and
/// without float-to-int casts (the integer `k` comes from the bits of `k + magic`), so it
/// vectorises even on baseline SSE2. Also defines `exp_slice`, which runs the loop compiled
/// for the best instruction set the CPU has.
macro_rules! exp_kernel {
    ($t:ty, $bits:ty, $mant:expr, $bias:expr, $hi:expr, $lo:expr, $ln2hi:expr, $ln2lo:expr,
     $split:expr, $up:expr, $down:expr, [$($c:expr),*]) => {
        #[inline(always)]
        fn exp_one(x: $t) -> $t {
            const MAGIC: $t = 1.5 * ((1u64 << $mant) as $t);
            // Clamp so the integer part stays in range; out-of-range inputs are fixed below.
            let xc = x.clamp($lo, $hi);
            // round to nearest by the magic-number addition
            let k = (xc * core::f64::consts::LOG2_E as $t + MAGIC) - MAGIC;
            let r = (xc - k * $ln2hi) - k * $ln2lo;
            let mut p: $t = 0.0;
            $( p = p * r + $c; )*
            // 2^k = 2^(k - k2) * 2^k2, with k2 = +-split near the ends of the range so that
            // both factors are normal numbers (results near overflow and subnormal ones).
            let k2: $t = if k < -$split { -$split } else if k > $split { $split } else { 0.0 };
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
            if x.is_nan() {
                x
            } else {
                y
            }
        }

        pub(crate) fn exp_loop(xs: &mut [$t]) {
            for x in xs {
                *x = exp_one(*x);
            }
        }

        /// The same loop compiled for AVX2 + FMA (4 or 8 lanes instead of SSE2's 2 or 4).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn exp_loop_avx2(xs: &mut [$t]) {
            for x in xs {
                *x = exp_one(*x);
            }
        }

        /// The same loop compiled for AVX-512 (16 or 8 lanes).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx2,fma")]
        fn exp_loop_avx512(xs: &mut [$t]) {
            for x in xs {
                *x = exp_one(*x);
            }
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
        7.888_609_052_210_118e-31,
        [
            1.0 / 479001600.0,
            1.0 / 39916800.0,
            1.0 / 3628800.0,
            1.0 / 362880.0,
            1.0 / 40320.0,
            1.0 / 5040.0,
            1.0 / 720.0,
            1.0 / 120.0,
            1.0 / 24.0,
            1.0 / 6.0,
            0.5,
            1.0,
            1.0
        ]
    );
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
        8.673_617e-19,
        [
            1.0 / 5040.0,
            1.0 / 720.0,
            1.0 / 120.0,
            1.0 / 24.0,
            1.0 / 6.0,
            0.5,
            1.0,
            1.0
        ]
    );
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
