//! The dispatch macro: one generic body compiled once per level, the copy of the current
//! level run.

/// Runs `$body` (an expression calling generic code) in a copy compiled for `$level`:
/// the portable code at `Scalar`, a function with AVX2 and FMA enabled at `Avx2`, one with
/// AVX-512 F/BW/VL, AVX2 and FMA enabled at `Avx512`; a level above
/// [`detected_simd`](crate::detected_simd) is lowered to it first, so the macro is sound
/// for any level it is given. The body's free variables are passed as `$arg: $ty` and its
/// type parameters, with their bounds, in `[...]`.
///
/// Functions the body calls are compiled into each copy only when they are inlined into it
/// (`#[inline(always)]`, or generic), which is how a kernel gets its wider vectors. Every
/// copy gives the same bits: Rust neither reassociates floating-point operations nor
/// contracts `a * b + c` into a fused multiply-add.
///
/// ```
/// use cpu_features::{at_level, simd_level};
///
/// #[inline(always)]
/// fn dot(a: &[f32], b: &[f32]) -> f32 {
///     a.iter().zip(b).map(|(x, y)| x * y).sum()
/// }
///
/// fn fast_dot(a: &[f32], b: &[f32]) -> f32 {
///     at_level!(simd_level(), [], (a: &[f32], b: &[f32]) -> f32, dot(a, b))
/// }
///
/// let a: Vec<f32> = (0..100).map(|i| i as f32).collect();
/// assert_eq!(fast_dot(&a, &a), dot(&a, &a));
/// ```
///
/// `at_level!(level, max Avx2, [...], (...) -> ret, body)` compiles only the portable and
/// the AVX2 copies and runs the AVX2 one at `Avx512` too: for a kernel whose AVX-512 copy
/// was measured to gain nothing, so that the binary carries no copy that does not pay.
///
/// ```
/// use cpu_features::{at_level, simd_level};
///
/// #[inline(always)]
/// fn total(xs: &[i32]) -> i64 {
///     xs.iter().map(|&x| i64::from(x)).sum()
/// }
///
/// fn fast_total(xs: &[i32]) -> i64 {
///     at_level!(simd_level(), max Avx2, [], (xs: &[i32]) -> i64, total(xs))
/// }
///
/// assert_eq!(fast_total(&[1, -2, 3]), 2);
/// ```
#[macro_export]
macro_rules! at_level {
    ($level:expr, max Avx2, [$($gen:tt)*], ($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty, $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn avx2_copy<$($gen)*>($($arg: $ty),*) -> $ret {
            $body
        }
        let level: $crate::SimdLevel = $level;
        match level.min($crate::detected_simd()) {
            #[cfg(target_arch = "x86_64")]
            $crate::SimdLevel::Avx2 | $crate::SimdLevel::Avx512 => {
                // SAFETY: the level was lowered to `detected_simd()` just above, so the
                // processor has AVX2 and FMA (`Avx512` includes both).
                unsafe { avx2_copy($($arg),*) }
            }
            _ => $body,
        }
    }};
    ($level:expr, [$($gen:tt)*], ($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty, $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn avx2_copy<$($gen)*>($($arg: $ty),*) -> $ret {
            $body
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
        fn avx512_copy<$($gen)*>($($arg: $ty),*) -> $ret {
            $body
        }
        let level: $crate::SimdLevel = $level;
        match level.min($crate::detected_simd()) {
            #[cfg(target_arch = "x86_64")]
            $crate::SimdLevel::Avx512 => {
                // SAFETY: the level was lowered to `detected_simd()` just above, so the
                // processor has AVX-512 F, BW, VL, AVX2 and FMA.
                unsafe { avx512_copy($($arg),*) }
            }
            #[cfg(target_arch = "x86_64")]
            $crate::SimdLevel::Avx2 => {
                // SAFETY: as above: the processor has AVX2 and FMA.
                unsafe { avx2_copy($($arg),*) }
            }
            _ => $body,
        }
    }};
}

#[cfg(test)]
mod tests {
    use crate::{at_every_level, detected_simd, simd_level, SimdLevel};

    /// A generic kernel, compiled into each copy (inlined).
    #[inline(always)]
    fn sum_squares<T: Copy + Into<f64>>(xs: &[T]) -> f64 {
        xs.iter().map(|&x| x.into() * x.into()).sum()
    }

    #[test]
    fn every_level_gives_the_same_bits_as_the_portable_code() {
        let xs: Vec<f32> = (0..1003).map(|i| (i as f32).sin() * 1e3).collect();
        let want = sum_squares(&xs);
        let got = at_every_level(|_| {
            let xs = xs.as_slice();
            at_level!(
                simd_level(),
                [T: Copy + Into<f64>],
                (xs: &[T]) -> f64,
                sum_squares(xs)
            )
        });
        assert_eq!(
            got.len(),
            SimdLevel::ALL
                .iter()
                .filter(|&&l| l <= detected_simd())
                .count()
        );
        for g in got {
            assert_eq!(g.to_bits(), want.to_bits());
        }
    }

    #[test]
    fn the_form_without_an_avx512_copy_gives_the_same_bits_at_every_level() {
        let xs: Vec<f64> = (0..1003).map(|i| (i as f64).cos() * 1e7).collect();
        let want = sum_squares(&xs);
        let got = at_every_level(|_| {
            let xs = xs.as_slice();
            at_level!(simd_level(), max Avx2, [], (xs: &[f64]) -> f64, sum_squares(xs))
        });
        assert!(!got.is_empty());
        for g in got {
            assert_eq!(g.to_bits(), want.to_bits());
        }
        // asked for AVX-512 on any processor, it runs a copy it has
        let xs: &[f64] = &[1.5, -2.0, 3.25];
        let got = at_level!(SimdLevel::Avx512, max Avx2, [], (xs: &[f64]) -> f64, sum_squares(xs));
        assert_eq!(got, 1.5 * 1.5 + 4.0 + 3.25 * 3.25);
    }

    #[test]
    fn a_level_above_the_processor_is_lowered_not_run() {
        // Asking for AVX-512 on any processor is sound: the macro lowers the level first
        // (on one without AVX-512 this runs the AVX2 or the portable copy).
        let xs: &[f64] = &[1.5, -2.0, 3.25];
        let got = at_level!(SimdLevel::Avx512, [], (xs: &[f64]) -> f64, sum_squares(xs));
        assert_eq!(got, 1.5 * 1.5 + 4.0 + 3.25 * 3.25);
    }
}
