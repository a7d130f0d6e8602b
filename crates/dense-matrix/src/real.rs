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

/// The transpose flag of BLAS-like calls, Kaldi's `kNoTrans` / `kTrans`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[doc(alias("MatrixTransposeType", "Transpose"))]
pub enum Trans {
    /// Use the matrix as it is (Kaldi's `kNoTrans`).
    #[doc(alias("kNoTrans", "No", "CblasNoTrans"))]
    NoTrans,
    /// Use the transpose of the matrix (Kaldi's `kTrans`).
    #[doc(alias("kTrans", "Transposed", "CblasTrans"))]
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

/// The raw BLAS and LAPACK routines of one precision (`sgemm` / `dgemm` and so on),
/// private to this crate: [`Real`] requires it, so only `f32` and `f64` can be `Real`,
/// and code outside the crate can neither call these routines nor implement `Real`.
///
/// # Safety
///
/// The `cblas_*` and `lapack_*` methods are the raw routines of the element's precision
/// (row-major CBLAS, column-major LAPACK): every pointer must address a buffer of the
/// size and leading dimension passed with it, exactly as the C or Fortran routine needs.
#[allow(clippy::missing_safety_doc)] // raw entry points named after their routines
pub(crate) trait Blas: Sized {
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
    /// `C = alpha A B + beta C` with `A` (`m x m`) symmetric, read from its lower
    /// triangle only (`symm`, side left, row-major).
    #[allow(clippy::too_many_arguments)]
    unsafe fn cblas_symm_left_lower(
        m: c_int,
        n: c_int,
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

/// A floating-point element type: `f32` or `f64` (sealed).
///
/// Besides arithmetic, it carries (through a supertrait private to this crate) the BLAS
/// and LAPACK routines of its precision, so generic code is compiled once per type. The
/// routines cannot be reached from outside the crate, nor can `Real` be implemented there:
///
/// ```compile_fail,E0624
/// fn dot<T: dense_matrix::Real>(x: &[T]) -> T {
///     // the raw routine is private to dense-matrix
///     unsafe { T::cblas_dot(x.len() as i32, x.as_ptr(), 1, x.as_ptr(), 1) }
/// }
/// ```
///
/// ```compile_fail,E0599
/// use dense_matrix::Real;
/// let x = [1.0f64, 2.0];
/// // f64's raw routine is not reachable either
/// let d = unsafe { f64::cblas_dot(2, x.as_ptr(), 1, x.as_ptr(), 1) };
/// ```
///
/// ```compile_fail,E0277
/// # use std::{fmt, iter::Sum, ops::*};
/// #
/// # #[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
/// # struct Half(f32);
/// # impl fmt::Display for Half {
/// #     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { fmt::Display::fmt(&self.0, f) }
/// # }
/// # impl fmt::LowerExp for Half {
/// #     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { fmt::LowerExp::fmt(&self.0, f) }
/// # }
/// # macro_rules! ops { ($($tr:ident $m:ident $tra:ident $ma:ident),*) => {$(
/// #     impl $tr for Half { type Output = Half; fn $m(self, o: Half) -> Half { Half(self.0.$m(o.0)) } }
/// #     impl $tra for Half { fn $ma(&mut self, o: Half) { self.0.$ma(o.0) } }
/// # )*} }
/// # ops!(Add add AddAssign add_assign, Sub sub SubAssign sub_assign,
/// #      Mul mul MulAssign mul_assign, Div div DivAssign div_assign);
/// # impl Neg for Half { type Output = Half; fn neg(self) -> Half { Half(-self.0) } }
/// # impl Sum for Half { fn sum<I: Iterator<Item = Half>>(i: I) -> Half { Half(i.map(|h| h.0).sum()) } }
/// #
/// // Half has every public supertrait of Real; the private one cannot be written
/// impl dense_matrix::Real for Half {
/// #     const ZERO: Self = Half(0.0);
/// #     const ONE: Self = Half(1.0);
/// #     const EPSILON: Self = Half(f32::EPSILON);
/// #     const INFINITY: Self = Half(f32::INFINITY);
/// #     const NEG_INFINITY: Self = Half(f32::NEG_INFINITY);
/// #     const NAN: Self = Half(f32::NAN);
/// #     const NAME: &'static str = "half";
/// #     fn from_f64(x: f64) -> Self { Half(x as f32) }
/// #     fn to_f64(self) -> f64 { self.0 as f64 }
/// #     fn exp(self) -> Self { Half(self.0.exp()) }
/// #     fn ln(self) -> Self { Half(self.0.ln()) }
/// #     fn ln_1p(self) -> Self { Half(self.0.ln_1p()) }
/// #     fn sqrt(self) -> Self { Half(self.0.sqrt()) }
/// #     fn abs(self) -> Self { Half(self.0.abs()) }
/// #     fn floor(self) -> Self { Half(self.0.floor()) }
/// #     fn ceil(self) -> Self { Half(self.0.ceil()) }
/// #     fn tanh(self) -> Self { Half(self.0.tanh()) }
/// #     fn cos(self) -> Self { Half(self.0.cos()) }
/// #     fn sin(self) -> Self { Half(self.0.sin()) }
/// #     fn powf(self, p: Self) -> Self { Half(self.0.powf(p.0)) }
/// #     fn atan2(self, x: Self) -> Self { Half(self.0.atan2(x.0)) }
/// #     fn is_nan(self) -> bool { self.0.is_nan() }
/// #     fn is_finite(self) -> bool { self.0.is_finite() }
/// #     fn max(self, o: Self) -> Self { Half(self.0.max(o.0)) }
/// #     fn min(self, o: Self) -> Self { Half(self.0.min(o.0)) }
/// #     fn exp_slice(xs: &mut [Self]) { xs.iter_mut().for_each(|x| x.0 = x.0.exp()) }
/// }
/// ```
// `Blas` is private on purpose: it seals `Real` and keeps the FFI out of the public API.
#[allow(private_bounds)]
pub trait Real:
    Blas
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
    /// `self * a + b`, rounded once where the type has a fused multiply-add (`f32`,
    /// `f64`; a kernel compiled with FMA enabled gets the instruction).
    #[inline]
    fn mul_add(self, a: Self, b: Self) -> Self {
        self * a + b
    }
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
}

fn uplo_blas() -> cb::CBLAS_UPLO {
    cb::CblasLower
}

macro_rules! impl_real {
    ($t:ty, $name:expr, $expmod:ident,
     $dot:ident, $axpy:ident, $gemv:ident, $ger:ident, $gemm:ident, $syrk:ident,
     $symm:ident, $spmv:ident, $tpmv:ident, $tpsv:ident,
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
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
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
                crate::exp::$expmod::exp_slice(xs)
            }
        }

        impl Blas for $t {
            unsafe fn cblas_dot(
                n: c_int,
                x: *const Self,
                incx: c_int,
                y: *const Self,
                incy: c_int,
            ) -> Self {
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
                unsafe { cb::$axpy(n, alpha, x, incx, y, incy) }
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
            unsafe fn cblas_symm_left_lower(
                m: c_int,
                n: c_int,
                alpha: Self,
                a: *const Self,
                lda: c_int,
                b: *const Self,
                ldb: c_int,
                beta: Self,
                c: *mut Self,
                ldc: c_int,
            ) {
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
                unsafe {
                    cb::$symm(
                        cb::CblasRowMajor,
                        cb::CblasLeft,
                        uplo_blas(),
                        m,
                        n,
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
                unsafe { lp::$getri(n, a, lda, ipiv, work, lwork, info) }
            }
            unsafe fn lapack_potrf(
                uplo: c_char,
                n: *const c_int,
                a: *mut Self,
                lda: *const c_int,
                info: *mut c_int,
            ) {
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
                unsafe { lp::$potrf(&uplo, n, a, lda, info) }
            }
            unsafe fn lapack_pptrf(uplo: c_char, n: *const c_int, ap: *mut Self, info: *mut c_int) {
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
                unsafe { lp::$pptrf(&uplo, n, ap, info) }
            }
            unsafe fn lapack_tptri(
                uplo: c_char,
                diag: c_char,
                n: *const c_int,
                ap: *mut Self,
                info: *mut c_int,
            ) {
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
                unsafe { lp::$tptri(&uplo, &diag, n, ap, info) }
            }
            unsafe fn lapack_sptrf(
                uplo: c_char,
                n: *const c_int,
                ap: *mut Self,
                ipiv: *mut c_int,
                info: *mut c_int,
            ) {
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
                crate::kernel::ensure_kernel();
                // SAFETY: forwarded unchanged; the caller upholds the trait's `# Safety` contract
                // (every pointer addresses a buffer of the size and leading dimension passed).
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
    cblas_sgemv,
    cblas_sger,
    cblas_sgemm,
    cblas_ssyrk,
    cblas_ssymm,
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
    cblas_dgemv,
    cblas_dger,
    cblas_dgemm,
    cblas_dsyrk,
    cblas_dsymm,
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
