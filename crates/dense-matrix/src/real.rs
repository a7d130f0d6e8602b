//! The `Real` trait (`f32` or `f64`) and its thin bindings to CBLAS and LAPACK.
//!
//! Every BLAS call in the crate goes through the row-major entry points below; every
//! LAPACK call goes through the column-major Fortran routines, with the row-major to
//! column-major bookkeeping done at the call site (a row-major matrix is the column-major
//! storage of its transpose).

use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};
use std::os::raw::{c_char, c_int};

use cblas_sys as cb;
use lapack_sys as lp;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The transpose flag of BLAS-like calls, Kaldi's `kNoTrans` / `kTrans`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trans {
    /// Use the matrix as it is (Kaldi's `kNoTrans`).
    NoTrans,
    /// Use the transpose of the matrix (Kaldi's `kTrans`).
    Trans,
}

impl Trans {
    pub(crate) fn cblas(self) -> cb::CBLAS_TRANSPOSE {
        match self {
            Trans::NoTrans => cb::CblasNoTrans,
            Trans::Trans => cb::CblasTrans,
        }
    }
}

/// A floating-point element type: `f32` or `f64` (sealed).
///
/// Besides arithmetic, it carries the BLAS and LAPACK routine of its precision
/// (`sgemm` / `dgemm` and so on), so generic code is compiled once per type.
///
/// # Safety
///
/// The `cblas_*` and `lapack_*` methods are the raw routines of the element's precision
/// (row-major CBLAS, column-major LAPACK): every pointer must address a buffer of the
/// size and leading dimension passed with it, exactly as the C or Fortran routine needs.
#[allow(missing_docs, clippy::missing_safety_doc)] // raw entry points named after their routines
pub trait Real:
    sealed::Sealed
    + Copy
    + Send
    + Sync
    + 'static
    + Default
    + PartialOrd
    + PartialEq
    + fmt::Debug
    + fmt::Display
    + fmt::LowerExp
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + Sum
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// Machine epsilon.
    const EPSILON: Self;
    /// Positive infinity.
    const INFINITY: Self;
    /// Negative infinity.
    const NEG_INFINITY: Self;
    /// Not a number.
    const NAN: Self;
    /// `"f32"` or `"f64"`.
    const NAME: &'static str;

    /// Conversion from `f64` (rounding for `f32`).
    fn from_f64(x: f64) -> Self;
    /// Conversion to `f64` (exact).
    fn to_f64(self) -> f64;
    /// `e^self`.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// `ln(1 + self)`, accurate near zero.
    fn ln_1p(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// `self^p`.
    fn powf(self, p: Self) -> Self;
    /// Largest integer not above `self`.
    fn floor(self) -> Self;
    /// Smallest integer not below `self`.
    fn ceil(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Four-quadrant arctangent of `self / x`.
    fn atan2(self, x: Self) -> Self;
    /// True for NaN.
    fn is_nan(self) -> bool;
    /// True unless infinite or NaN.
    fn is_finite(self) -> bool;
    /// Maximum (NaN-ignoring, as `f64::max`).
    fn max(self, other: Self) -> Self;
    /// Minimum (NaN-ignoring, as `f64::min`).
    fn min(self, other: Self) -> Self;

    /// Applies `exp` to every element of a slice (vectorisable kernel).
    fn exp_slice(xs: &mut [Self]);

    unsafe fn cblas_dot(n: c_int, x: *const Self, incx: c_int, y: *const Self, incy: c_int)
        -> Self;
    unsafe fn cblas_axpy(
        n: c_int,
        alpha: Self,
        x: *const Self,
        incx: c_int,
        y: *mut Self,
        incy: c_int,
    );
    unsafe fn cblas_scal(n: c_int, alpha: Self, x: *mut Self, incx: c_int);
    #[allow(clippy::too_many_arguments)]
    unsafe fn cblas_gemv(
        trans: Trans,
        m: c_int,
        n: c_int,
        alpha: Self,
        a: *const Self,
        lda: c_int,
        x: *const Self,
        incx: c_int,
        beta: Self,
        y: *mut Self,
        incy: c_int,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn cblas_ger(
        m: c_int,
        n: c_int,
        alpha: Self,
        x: *const Self,
        incx: c_int,
        y: *const Self,
        incy: c_int,
        a: *mut Self,
        lda: c_int,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn cblas_gemm(
        ta: Trans,
        tb: Trans,
        m: c_int,
        n: c_int,
        k: c_int,
        alpha: Self,
        a: *const Self,
        lda: c_int,
        b: *const Self,
        ldb: c_int,
        beta: Self,
        c: *mut Self,
        ldc: c_int,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn cblas_syrk_lower(
        trans: Trans,
        n: c_int,
        k: c_int,
        alpha: Self,
        a: *const Self,
        lda: c_int,
        beta: Self,
        c: *mut Self,
        ldc: c_int,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn cblas_spmv_lower(
        n: c_int,
        alpha: Self,
        ap: *const Self,
        x: *const Self,
        incx: c_int,
        beta: Self,
        y: *mut Self,
        incy: c_int,
    );
    unsafe fn cblas_tpmv_lower(trans: Trans, n: c_int, ap: *const Self, x: *mut Self, incx: c_int);
    unsafe fn cblas_tpsv_lower(trans: Trans, n: c_int, ap: *const Self, x: *mut Self, incx: c_int);

    #[allow(clippy::too_many_arguments)]
    unsafe fn lapack_gesdd(
        jobz: c_char,
        m: *const c_int,
        n: *const c_int,
        a: *mut Self,
        lda: *const c_int,
        s: *mut Self,
        u: *mut Self,
        ldu: *const c_int,
        vt: *mut Self,
        ldvt: *const c_int,
        work: *mut Self,
        lwork: *const c_int,
        iwork: *mut c_int,
        info: *mut c_int,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn lapack_syevd(
        jobz: c_char,
        uplo: c_char,
        n: *const c_int,
        a: *mut Self,
        lda: *const c_int,
        w: *mut Self,
        work: *mut Self,
        lwork: *const c_int,
        iwork: *mut c_int,
        liwork: *const c_int,
        info: *mut c_int,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn lapack_geev(
        jobvl: c_char,
        jobvr: c_char,
        n: *const c_int,
        a: *mut Self,
        lda: *const c_int,
        wr: *mut Self,
        wi: *mut Self,
        vl: *mut Self,
        ldvl: *const c_int,
        vr: *mut Self,
        ldvr: *const c_int,
        work: *mut Self,
        lwork: *const c_int,
        info: *mut c_int,
    );
    unsafe fn lapack_getrf(
        m: *const c_int,
        n: *const c_int,
        a: *mut Self,
        lda: *const c_int,
        ipiv: *mut c_int,
        info: *mut c_int,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn lapack_getri(
        n: *const c_int,
        a: *mut Self,
        lda: *const c_int,
        ipiv: *const c_int,
        work: *mut Self,
        lwork: *const c_int,
        info: *mut c_int,
    );
    unsafe fn lapack_potrf(
        uplo: c_char,
        n: *const c_int,
        a: *mut Self,
        lda: *const c_int,
        info: *mut c_int,
    );
    unsafe fn lapack_pptrf(uplo: c_char, n: *const c_int, ap: *mut Self, info: *mut c_int);
    unsafe fn lapack_tptri(
        uplo: c_char,
        diag: c_char,
        n: *const c_int,
        ap: *mut Self,
        info: *mut c_int,
    );
    unsafe fn lapack_sptrf(
        uplo: c_char,
        n: *const c_int,
        ap: *mut Self,
        ipiv: *mut c_int,
        info: *mut c_int,
    );
    unsafe fn lapack_sptri(
        uplo: c_char,
        n: *const c_int,
        ap: *mut Self,
        ipiv: *const c_int,
        work: *mut Self,
        info: *mut c_int,
    );
}

/// A fast `e^x` that the compiler vectorises: Cody-Waite range reduction and a degree-12
/// (f64) or degree-7 (f32) polynomial, within a few ulp of `std`'s `exp` on the whole
/// finite range, with `std`'s behaviour for overflow, underflow and NaN. Branch-free and
/// without float-to-int casts (the integer `k` comes from the bits of `k + magic`), so it
/// vectorises even on baseline SSE2.
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
    };
}

mod exp_f64 {
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
    pub(super) fn exp_loop(xs: &mut [f64]) {
        for x in xs {
            *x = exp_one(*x);
        }
    }

    /// The same loop compiled for AVX2 + FMA (4 or 8 lanes instead of SSE2's 2 or 4).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn exp_loop_avx2(xs: &mut [f64]) {
        for x in xs {
            *x = exp_one(*x);
        }
    }

    /// The same loop compiled for AVX-512 (16 or 8 lanes).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn exp_loop_avx512(xs: &mut [f64]) {
        for x in xs {
            *x = exp_one(*x);
        }
    }

    pub(super) fn exp_slice(xs: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports the features the function was compiled for.
            unsafe { exp_loop_avx512(xs) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports the features the function was compiled for.
            unsafe { exp_loop_avx2(xs) };
            return;
        }
        exp_loop(xs)
    }
}

mod exp_f32 {
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
    pub(super) fn exp_loop(xs: &mut [f32]) {
        for x in xs {
            *x = exp_one(*x);
        }
    }

    /// The same loop compiled for AVX2 + FMA (4 or 8 lanes instead of SSE2's 2 or 4).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn exp_loop_avx2(xs: &mut [f32]) {
        for x in xs {
            *x = exp_one(*x);
        }
    }

    /// The same loop compiled for AVX-512 (16 or 8 lanes).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn exp_loop_avx512(xs: &mut [f32]) {
        for x in xs {
            *x = exp_one(*x);
        }
    }

    pub(super) fn exp_slice(xs: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports the features the function was compiled for.
            unsafe { exp_loop_avx512(xs) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports the features the function was compiled for.
            unsafe { exp_loop_avx2(xs) };
            return;
        }
        exp_loop(xs)
    }
}

fn uplo_blas() -> cb::CBLAS_UPLO {
    cb::CblasLower
}

macro_rules! impl_real {
    ($t:ty, $name:expr, $expmod:ident,
     $dot:ident, $axpy:ident, $scal:ident, $gemv:ident, $ger:ident, $gemm:ident, $syrk:ident,
     $spmv:ident, $tpmv:ident, $tpsv:ident,
     $gesdd:ident, $syevd:ident, $geev:ident, $getrf:ident, $getri:ident, $potrf:ident,
     $pptrf:ident, $tptri:ident, $sptrf:ident, $sptri:ident) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const EPSILON: Self = <$t>::EPSILON;
            const INFINITY: Self = <$t>::INFINITY;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            const NAN: Self = <$t>::NAN;
            const NAME: &'static str = $name;

            #[inline]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            #[inline]
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline]
            fn powf(self, p: Self) -> Self {
                <$t>::powf(self, p)
            }
            #[inline]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline]
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            #[inline]
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            #[inline]
            fn atan2(self, x: Self) -> Self {
                <$t>::atan2(self, x)
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            fn exp_slice(xs: &mut [Self]) {
                $expmod::exp_slice(xs)
            }

            unsafe fn cblas_dot(
                n: c_int,
                x: *const Self,
                incx: c_int,
                y: *const Self,
                incy: c_int,
            ) -> Self {
                unsafe { cb::$dot(n, x, incx, y, incy) }
            }
            unsafe fn cblas_axpy(
                n: c_int,
                alpha: Self,
                x: *const Self,
                incx: c_int,
                y: *mut Self,
                incy: c_int,
            ) {
                unsafe { cb::$axpy(n, alpha, x, incx, y, incy) }
            }
            unsafe fn cblas_scal(n: c_int, alpha: Self, x: *mut Self, incx: c_int) {
                unsafe { cb::$scal(n, alpha, x, incx) }
            }
            unsafe fn cblas_gemv(
                trans: Trans,
                m: c_int,
                n: c_int,
                alpha: Self,
                a: *const Self,
                lda: c_int,
                x: *const Self,
                incx: c_int,
                beta: Self,
                y: *mut Self,
                incy: c_int,
            ) {
                unsafe {
                    cb::$gemv(
                        cb::CblasRowMajor,
                        trans.cblas(),
                        m,
                        n,
                        alpha,
                        a,
                        lda,
                        x,
                        incx,
                        beta,
                        y,
                        incy,
                    )
                }
            }
            unsafe fn cblas_ger(
                m: c_int,
                n: c_int,
                alpha: Self,
                x: *const Self,
                incx: c_int,
                y: *const Self,
                incy: c_int,
                a: *mut Self,
                lda: c_int,
            ) {
                unsafe { cb::$ger(cb::CblasRowMajor, m, n, alpha, x, incx, y, incy, a, lda) }
            }
            unsafe fn cblas_gemm(
                ta: Trans,
                tb: Trans,
                m: c_int,
                n: c_int,
                k: c_int,
                alpha: Self,
                a: *const Self,
                lda: c_int,
                b: *const Self,
                ldb: c_int,
                beta: Self,
                c: *mut Self,
                ldc: c_int,
            ) {
                unsafe {
                    cb::$gemm(
                        cb::CblasRowMajor,
                        ta.cblas(),
                        tb.cblas(),
                        m,
                        n,
                        k,
                        alpha,
                        a,
                        lda,
                        b,
                        ldb,
                        beta,
                        c,
                        ldc,
                    )
                }
            }
            unsafe fn cblas_syrk_lower(
                trans: Trans,
                n: c_int,
                k: c_int,
                alpha: Self,
                a: *const Self,
                lda: c_int,
                beta: Self,
                c: *mut Self,
                ldc: c_int,
            ) {
                unsafe {
                    cb::$syrk(
                        cb::CblasRowMajor,
                        uplo_blas(),
                        trans.cblas(),
                        n,
                        k,
                        alpha,
                        a,
                        lda,
                        beta,
                        c,
                        ldc,
                    )
                }
            }
            unsafe fn cblas_spmv_lower(
                n: c_int,
                alpha: Self,
                ap: *const Self,
                x: *const Self,
                incx: c_int,
                beta: Self,
                y: *mut Self,
                incy: c_int,
            ) {
                unsafe {
                    cb::$spmv(
                        cb::CblasRowMajor,
                        uplo_blas(),
                        n,
                        alpha,
                        ap,
                        x,
                        incx,
                        beta,
                        y,
                        incy,
                    )
                }
            }
            unsafe fn cblas_tpmv_lower(
                trans: Trans,
                n: c_int,
                ap: *const Self,
                x: *mut Self,
                incx: c_int,
            ) {
                unsafe {
                    cb::$tpmv(
                        cb::CblasRowMajor,
                        uplo_blas(),
                        trans.cblas(),
                        cb::CblasNonUnit,
                        n,
                        ap,
                        x,
                        incx,
                    )
                }
            }
            unsafe fn cblas_tpsv_lower(
                trans: Trans,
                n: c_int,
                ap: *const Self,
                x: *mut Self,
                incx: c_int,
            ) {
                unsafe {
                    cb::$tpsv(
                        cb::CblasRowMajor,
                        uplo_blas(),
                        trans.cblas(),
                        cb::CblasNonUnit,
                        n,
                        ap,
                        x,
                        incx,
                    )
                }
            }

            unsafe fn lapack_gesdd(
                jobz: c_char,
                m: *const c_int,
                n: *const c_int,
                a: *mut Self,
                lda: *const c_int,
                s: *mut Self,
                u: *mut Self,
                ldu: *const c_int,
                vt: *mut Self,
                ldvt: *const c_int,
                work: *mut Self,
                lwork: *const c_int,
                iwork: *mut c_int,
                info: *mut c_int,
            ) {
                unsafe {
                    lp::$gesdd(
                        &jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info,
                    )
                }
            }
            unsafe fn lapack_syevd(
                jobz: c_char,
                uplo: c_char,
                n: *const c_int,
                a: *mut Self,
                lda: *const c_int,
                w: *mut Self,
                work: *mut Self,
                lwork: *const c_int,
                iwork: *mut c_int,
                liwork: *const c_int,
                info: *mut c_int,
            ) {
                unsafe { lp::$syevd(&jobz, &uplo, n, a, lda, w, work, lwork, iwork, liwork, info) }
            }
            unsafe fn lapack_geev(
                jobvl: c_char,
                jobvr: c_char,
                n: *const c_int,
                a: *mut Self,
                lda: *const c_int,
                wr: *mut Self,
                wi: *mut Self,
                vl: *mut Self,
                ldvl: *const c_int,
                vr: *mut Self,
                ldvr: *const c_int,
                work: *mut Self,
                lwork: *const c_int,
                info: *mut c_int,
            ) {
                unsafe {
                    lp::$geev(
                        &jobvl, &jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork, info,
                    )
                }
            }
            unsafe fn lapack_getrf(
                m: *const c_int,
                n: *const c_int,
                a: *mut Self,
                lda: *const c_int,
                ipiv: *mut c_int,
                info: *mut c_int,
            ) {
                unsafe { lp::$getrf(m, n, a, lda, ipiv, info) }
            }
            unsafe fn lapack_getri(
                n: *const c_int,
                a: *mut Self,
                lda: *const c_int,
                ipiv: *const c_int,
                work: *mut Self,
                lwork: *const c_int,
                info: *mut c_int,
            ) {
                unsafe { lp::$getri(n, a, lda, ipiv, work, lwork, info) }
            }
            unsafe fn lapack_potrf(
                uplo: c_char,
                n: *const c_int,
                a: *mut Self,
                lda: *const c_int,
                info: *mut c_int,
            ) {
                unsafe { lp::$potrf(&uplo, n, a, lda, info) }
            }
            unsafe fn lapack_pptrf(uplo: c_char, n: *const c_int, ap: *mut Self, info: *mut c_int) {
                unsafe { lp::$pptrf(&uplo, n, ap, info) }
            }
            unsafe fn lapack_tptri(
                uplo: c_char,
                diag: c_char,
                n: *const c_int,
                ap: *mut Self,
                info: *mut c_int,
            ) {
                unsafe { lp::$tptri(&uplo, &diag, n, ap, info) }
            }
            unsafe fn lapack_sptrf(
                uplo: c_char,
                n: *const c_int,
                ap: *mut Self,
                ipiv: *mut c_int,
                info: *mut c_int,
            ) {
                unsafe { lp::$sptrf(&uplo, n, ap, ipiv, info) }
            }
            unsafe fn lapack_sptri(
                uplo: c_char,
                n: *const c_int,
                ap: *mut Self,
                ipiv: *const c_int,
                work: *mut Self,
                info: *mut c_int,
            ) {
                unsafe { lp::$sptri(&uplo, n, ap, ipiv, work, info) }
            }
        }
    };
}

impl_real!(
    f32,
    "f32",
    exp_f32,
    cblas_sdot,
    cblas_saxpy,
    cblas_sscal,
    cblas_sgemv,
    cblas_sger,
    cblas_sgemm,
    cblas_ssyrk,
    cblas_sspmv,
    cblas_stpmv,
    cblas_stpsv,
    sgesdd_,
    ssyevd_,
    sgeev_,
    sgetrf_,
    sgetri_,
    spotrf_,
    spptrf_,
    stptri_,
    ssptrf_,
    ssptri_
);
impl_real!(
    f64,
    "f64",
    exp_f64,
    cblas_ddot,
    cblas_daxpy,
    cblas_dscal,
    cblas_dgemv,
    cblas_dger,
    cblas_dgemm,
    cblas_dsyrk,
    cblas_dspmv,
    cblas_dtpmv,
    cblas_dtpsv,
    dgesdd_,
    dsyevd_,
    dgeev_,
    dgetrf_,
    dgetri_,
    dpotrf_,
    dpptrf_,
    dtptri_,
    dsptrf_,
    dsptri_
);

extern "C" {
    fn openblas_get_num_threads() -> c_int;
    fn openblas_set_num_threads(n: c_int);
}

/// The number of threads OpenBLAS uses (its `openblas_get_num_threads`).
pub fn blas_num_threads() -> usize {
    // SAFETY: a plain query of OpenBLAS's global setting.
    unsafe { openblas_get_num_threads() }.max(1) as usize
}

/// Sets the number of threads OpenBLAS uses (its `openblas_set_num_threads`).
pub fn set_blas_num_threads(n: usize) {
    // SAFETY: OpenBLAS's documented global setter; any positive count is valid.
    unsafe { openblas_set_num_threads(n.clamp(1, c_int::MAX as usize) as c_int) }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (mut a, mut b) = (xs32.clone(), xs32);
        exp_f32::exp_loop(&mut a);
        f32::exp_slice(&mut b);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        let xs64: Vec<f64> = (0..20000).map(|i| i as f64 * 0.0731 - 740.0).collect();
        let (mut a, mut b) = (xs64.clone(), xs64);
        exp_f64::exp_loop(&mut a);
        f64::exp_slice(&mut b);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    }

    #[test]
    fn openblas_reports_a_thread_count() {
        assert!(blas_num_threads() >= 1);
    }
}
