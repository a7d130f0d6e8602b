//! Kaldi's FFTs (`srfft.h`, `matrix-functions.h`): `SplitRadixComplexFft`,
//! `SplitRadixRealFft`, `ComplexFft`, `RealFft`, `RealFftInefficient`, and
//! `ComputeDctMatrix`.
//!
//! Conventions are Kaldi's: the forward transform is `X_k = sum_n x_n e^{-2 pi i k n / N}`,
//! the backward one uses `e^{+2 pi i k n / N}` and has no `1/N` factor. Complex data is
//! interleaved `[re0, im0, re1, im1, ...]`. A real transform of `N` points is packed in
//! place as `[Re X_0, Re X_{N/2}, Re X_1, Im X_1, ..., Re X_{N/2-1}, Im X_{N/2-1}]` (both
//! `X_0` and `X_{N/2}` are real), and the backward real transform takes that packing back
//! to `N` times the signal.
//!
//! The power-of-two transform is an iterative radix-2 FFT with twiddles computed in `f64`
//! (Kaldi's is split-radix; the results agree to rounding). The real transform is the
//! half-length complex one plus Kaldi's split step (`RealFft`'s "long comment" math).
//! Other lengths of `complex_fft` use Bluestein's algorithm: the DFT as a circular
//! convolution with a chirp, done by three power-of-two transforms in `f64`, so every
//! length costs `O(N log N)` (Kaldi factorises `N` and recurses on its prime factors,
//! which is `O(N^2)` for a prime).

use crate::error::dim_mismatch;
use crate::{Error, MatrixBase, Real, VectorBase};

/// Kaldi's `SplitRadixComplexFft<Real>`: a planned complex FFT of `N` points, `N` a power
/// of two.
#[derive(Debug, Clone)]
pub struct SplitRadixComplexFft<R: Real> {
    n: usize,
    /// `rev[i]`: the bit reversal of `i` in `log2 N` bits.
    rev: Vec<u32>,
    /// The twiddles of each butterfly stage, stored contiguously: the stage that combines
    /// halves of length `h` reads `e^{-i pi j / h}`, `j < h`, at `h - 1 .. 2h - 1`.
    tw_re: Vec<R>,
    /// Imaginary parts of the forward twiddles (same layout as `tw_re`).
    tw_im: Vec<R>,
    /// Imaginary parts of the backward twiddles (`-tw_im`).
    tw_im_inv: Vec<R>,
}

fn check_power_of_two(n: usize, min: usize, what: &'static str) -> Result<(), Error> {
    if n < min || !n.is_power_of_two() {
        return Err(Error::FftSize { n, what });
    }
    if u32::try_from(n).is_err() {
        return Err(Error::FftSize { n, what });
    }
    Ok(())
}

impl<R: Real> SplitRadixComplexFft<R> {
    /// Kaldi's `SplitRadixComplexFft(N)` for a size known to be valid.
    ///
    /// # Panics
    ///
    /// When [`SplitRadixComplexFft::try_new`] would return an error (`N` not a valid size), naming `N`.
    #[track_caller]
    pub fn new(n: usize) -> Self {
        match Self::try_new(n) {
            Ok(plan) => plan,
            Err(err) => panic!("SplitRadixComplexFft::new: {err}"),
        }
    }

    /// Kaldi's `SplitRadixComplexFft(N)`, checked: plans the transform; `N` must be a power of two
    /// (1 included) below 2^32, else [`Error::FftSize`].
    pub fn try_new(n: usize) -> Result<Self, Error> {
        check_power_of_two(n, 1, "a power of two")?;
        let bits = n.trailing_zeros();
        let rev = (0..n as u32)
            .map(|i| {
                if bits == 0 {
                    0
                } else {
                    i.reverse_bits() >> (32 - bits)
                }
            })
            .collect();
        let mut tw_re = Vec::with_capacity(n);
        let mut tw_im = Vec::with_capacity(n);
        let mut h = 1;
        while h < n {
            for j in 0..h {
                let a = -std::f64::consts::PI * j as f64 / h as f64;
                tw_re.push(R::from_f64(a.cos()));
                tw_im.push(R::from_f64(a.sin()));
            }
            h *= 2;
        }
        let tw_im_inv = tw_im.iter().map(|&v| -v).collect();
        Ok(SplitRadixComplexFft {
            n,
            rev,
            tw_re,
            tw_im,
            tw_im_inv,
        })
    }

    /// The number of complex points `N`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Kaldi's `Compute(x, forward)`: transforms `2N` interleaved values in place; panics
    /// if `x.len() != 2N`.
    pub fn compute(&self, x: &mut [R], forward: bool) {
        if x.len() != 2 * self.n {
            dim_mismatch(
                "SplitRadixComplexFft::compute",
                "data length",
                x.len(),
                "2 N",
                2 * self.n,
            );
        }
        let n = self.n;
        for i in 0..n {
            let j = self.rev[i] as usize;
            if i < j {
                x.swap(2 * i, 2 * j);
                x.swap(2 * i + 1, 2 * j + 1);
            }
        }
        // first stage: halves of length 1, twiddle 1
        if n >= 2 {
            for c in x.chunks_exact_mut(4) {
                let (ar, ai, br, bi) = (c[0], c[1], c[2], c[3]);
                c[0] = ar + br;
                c[1] = ai + bi;
                c[2] = ar - br;
                c[3] = ai - bi;
            }
        }
        let tw_im_all = if forward {
            &self.tw_im
        } else {
            &self.tw_im_inv
        };
        let mut half = 2;
        while half < n {
            let tw_re = &self.tw_re[half - 1..2 * half - 1];
            let tw_im = &tw_im_all[half - 1..2 * half - 1];
            for block in x.chunks_exact_mut(4 * half) {
                let (lo, hi) = block.split_at_mut(2 * half);
                for (((a, b), &wr), &wi) in lo
                    .chunks_exact_mut(2)
                    .zip(hi.chunks_exact_mut(2))
                    .zip(tw_re)
                    .zip(tw_im)
                {
                    let (br, bi) = (b[0], b[1]);
                    let tr = br * wr - bi * wi;
                    let ti = br * wi + bi * wr;
                    let (ar, ai) = (a[0], a[1]);
                    a[0] = ar + tr;
                    a[1] = ai + ti;
                    b[0] = ar - tr;
                    b[1] = ai - ti;
                }
            }
            half *= 2;
        }
    }

    /// Kaldi's `Compute(xr, xi, forward)`: real and imaginary parts in separate arrays of
    /// `N` each; panics on other lengths.
    pub fn compute_split(&self, xr: &mut [R], xi: &mut [R], forward: bool) {
        if xr.len() != self.n || xi.len() != self.n {
            dim_mismatch(
                "SplitRadixComplexFft::compute_split",
                "real and imaginary lengths",
                xr.len().max(xi.len()),
                "N",
                self.n,
            );
        }
        let mut buf: Vec<R> = xr
            .iter()
            .zip(xi.iter())
            .flat_map(|(&r, &i)| [r, i])
            .collect();
        self.compute(&mut buf, forward);
        for (k, c) in buf.chunks_exact(2).enumerate() {
            xr[k] = c[0];
            xi[k] = c[1];
        }
    }
}

/// Kaldi's `SplitRadixRealFft<Real>`: a planned real FFT of `N` points in Kaldi's packing,
/// `N` a power of two, at least 4.
#[derive(Debug, Clone)]
pub struct SplitRadixRealFft<R: Real> {
    complex: SplitRadixComplexFft<R>,
    /// `e^{-2 pi i k / N}` for `k <= N/4`, interleaved re, im.
    twiddles: Vec<R>,
}

impl<R: Real> SplitRadixRealFft<R> {
    /// Kaldi's `SplitRadixRealFft(N)` for a size known to be valid.
    ///
    /// # Panics
    ///
    /// When [`SplitRadixRealFft::try_new`] would return an error (`N` not a valid size), naming `N`.
    #[track_caller]
    pub fn new(n: usize) -> Self {
        match Self::try_new(n) {
            Ok(plan) => plan,
            Err(err) => panic!("SplitRadixRealFft::new: {err}"),
        }
    }

    /// Kaldi's `SplitRadixRealFft(N)`, checked: `N` must be a power of two, at least 4 (Kaldi's
    /// condition), else [`Error::FftSize`].
    pub fn try_new(n: usize) -> Result<Self, Error> {
        check_power_of_two(n, 4, "a power of two, at least 4")?;
        Ok(SplitRadixRealFft {
            complex: SplitRadixComplexFft::try_new(n / 2)?,
            twiddles: split_twiddles(n),
        })
    }

    /// The number of real points `N`.
    pub fn n(&self) -> usize {
        2 * self.complex.n
    }

    /// Kaldi's `Compute(data, forward)`: forward, `N` real points become their spectrum
    /// in Kaldi's packing; backward, that packing becomes `N` times the signal. Panics if
    /// `data.len() != N`.
    pub fn compute(&self, data: &mut [R], forward: bool) {
        if data.len() != self.n() {
            dim_mismatch(
                "SplitRadixRealFft::compute",
                "data length",
                data.len(),
                "N",
                self.n(),
            );
        }
        if forward {
            self.complex.compute(data, true);
        }
        split_step(data, forward, &self.twiddles);
        if !forward {
            self.complex.compute(data, false);
            let two = R::from_f64(2.0);
            for v in data.iter_mut() {
                *v *= two;
            }
        }
    }
}

/// `e^{-2 pi i k / N}` for `k <= N/4`, interleaved.
fn split_twiddles<R: Real>(n: usize) -> Vec<R> {
    (0..=n / 4)
        .flat_map(|k| {
            let a = -2.0 * std::f64::consts::PI * k as f64 / n as f64;
            [R::from_f64(a.cos()), R::from_f64(a.sin())]
        })
        .collect()
}

/// The step between the half-length complex transform of the even/odd interleaved real
/// signal and the real spectrum (Kaldi's `RealFft` math); `tw[k] = e^{-2 pi i k / N}`.
fn split_step<R: Real>(data: &mut [R], forward: bool, tw: &[R]) {
    let n = data.len();
    let n2 = n / 2;
    let half = R::from_f64(0.5);
    for k in 1..=n2 / 2 {
        // Kaldi's kN: e^{-2 pi i k / N} forward, -e^{+2 pi i k / N} backward
        let (kr, ki) = if forward {
            (tw[2 * k], tw[2 * k + 1])
        } else {
            (-tw[2 * k], tw[2 * k + 1])
        };
        let (bkr, bki) = (data[2 * k], data[2 * k + 1]);
        let (bmr, bmi) = (data[n - 2 * k], data[n - 2 * k + 1]);
        // C_k = (B_k + conj(B_{N/2-k})) / 2, D_k = -i (B_k - conj(B_{N/2-k})) / 2
        let cr = half * (bkr + bmr);
        let ci = half * (bki - bmi);
        let dr = half * (bki + bmi);
        let di = -half * (bkr - bmr);
        data[2 * k] = cr + (dr * kr - di * ki);
        data[2 * k + 1] = ci + (dr * ki + di * kr);
        let kd = n2 - k;
        if kd != k {
            // the mirror index: conj(C_k) + conj(D_k) * (-conj(kN))
            let (mr, mi) = (-kr, ki);
            let (er, ei) = (dr, -di);
            data[2 * kd] = cr + (er * mr - ei * mi);
            data[2 * kd + 1] = -ci + (er * mi + ei * mr);
        }
    }
    let zeroth = data[0] + data[1];
    let nyquist = data[0] - data[1];
    if forward {
        data[0] = zeroth;
        data[1] = nyquist;
    } else {
        data[0] = zeroth * half;
        data[1] = nyquist * half;
    }
}

/// Kaldi's `ComplexFft(v, forward)`: the transform of `dim / 2` interleaved complex points
/// in place, for any length in `O(N log N)`: powers of two by the radix-2 FFT, other
/// lengths by Bluestein's chirp-z algorithm on power-of-two FFTs in `f64`.
/// Panics on an odd dimension.
#[doc(alias = "ComplexFft")]
pub fn complex_fft<R: Real>(v: &mut VectorBase<R>, forward: bool) {
    let dim = v.dim();
    if dim <= 1 {
        return;
    }
    if !dim.is_multiple_of(2) {
        dim_mismatch(
            "complex_fft",
            "dimension",
            dim,
            "an even number, at least",
            2,
        );
    }
    let n = dim / 2;
    if n.is_power_of_two() && u32::try_from(n).is_ok() {
        match SplitRadixComplexFft::try_new(n) {
            Ok(plan) => plan.compute(v.data_mut(), forward),
            Err(e) => unreachable!("a power of two below 2^32 is planned: {e}"),
        }
        return;
    }
    if !bluestein(v.data_mut(), forward) {
        direct_dft(v.data_mut(), forward);
    }
}

/// Bluestein's chirp-z transform: the DFT of any length `n` as a circular convolution of
/// length `m`, a power of two at least `2n - 1`, done by three power-of-two FFTs in `f64`.
/// With `c_k = e^{-i pi k^2 / n}` (conjugated for the backward transform) and
/// `km = (k^2 + m^2 - (m - k)^2) / 2`, `X_m = c_m sum_k (x_k c_k) conj(c_{m-k})`.
/// Returns `false` (doing nothing) if `m` is beyond what a plan supports.
fn bluestein<R: Real>(data: &mut [R], forward: bool) -> bool {
    let n = data.len() / 2;
    let Some(m) = (2 * n - 1).checked_next_power_of_two() else {
        return false;
    };
    let Ok(plan) = SplitRadixComplexFft::<f64>::try_new(m) else {
        return false;
    };
    // the chirp, with k^2 reduced mod 2n so the angle stays exact for large k
    let two_n = 2 * n as u64;
    let sign = if forward { -1.0 } else { 1.0 };
    let chirp: Vec<(f64, f64)> = (0..n as u64)
        .map(|k| {
            let a = sign * std::f64::consts::PI * ((k * k) % two_n) as f64 / n as f64;
            (a.cos(), a.sin())
        })
        .collect();
    // a = x .* c, zero-padded to m
    let mut a = vec![0.0f64; 2 * m];
    for (k, (&(cr, ci), x)) in chirp.iter().zip(data.chunks_exact(2)).enumerate() {
        let (xr, xi) = (x[0].to_f64(), x[1].to_f64());
        a[2 * k] = xr * cr - xi * ci;
        a[2 * k + 1] = xr * ci + xi * cr;
    }
    // b_j = conj(c_|j|) for -(n-1) <= j <= n-1, negative j wrapped to m + j
    let mut b = vec![0.0f64; 2 * m];
    for (j, &(cr, ci)) in chirp.iter().enumerate() {
        b[2 * j] = cr;
        b[2 * j + 1] = -ci;
        if j > 0 {
            b[2 * (m - j)] = cr;
            b[2 * (m - j) + 1] = -ci;
        }
    }
    plan.compute(&mut a, true);
    plan.compute(&mut b, true);
    for (p, q) in a.chunks_exact_mut(2).zip(b.chunks_exact(2)) {
        let (pr, pi) = (p[0], p[1]);
        p[0] = pr * q[0] - pi * q[1];
        p[1] = pr * q[1] + pi * q[0];
    }
    plan.compute(&mut a, false);
    let scale = 1.0 / m as f64;
    for (k, (&(cr, ci), out)) in chirp.iter().zip(data.chunks_exact_mut(2)).enumerate() {
        let (yr, yi) = (a[2 * k] * scale, a[2 * k + 1] * scale);
        out[0] = R::from_f64(yr * cr - yi * ci);
        out[1] = R::from_f64(yr * ci + yi * cr);
    }
    true
}

/// The direct `O(N^2)` DFT in `f64`, for lengths Bluestein's plan cannot reach.
fn direct_dft<R: Real>(data: &mut [R], forward: bool) {
    let n = data.len() / 2;
    let x: Vec<(f64, f64)> = data
        .chunks_exact(2)
        .map(|c| (c[0].to_f64(), c[1].to_f64()))
        .collect();
    let sign = if forward { -1.0 } else { 1.0 };
    let roots: Vec<(f64, f64)> = (0..n)
        .map(|k| {
            let a = sign * 2.0 * std::f64::consts::PI * k as f64 / n as f64;
            (a.cos(), a.sin())
        })
        .collect();
    for m in 0..n {
        let (mut sr, mut si) = (0.0, 0.0);
        for (j, &(xr, xi)) in x.iter().enumerate() {
            let (wr, wi) = roots[((m as u128 * j as u128) % n as u128) as usize];
            sr += xr * wr - xi * wi;
            si += xr * wi + xi * wr;
        }
        data[2 * m] = R::from_f64(sr);
        data[2 * m + 1] = R::from_f64(si);
    }
}

/// Kaldi's `RealFft(v, forward)`: the real transform of any even length in Kaldi's
/// packing (a power of two plans like [`SplitRadixRealFft`]). Panics on an odd dimension.
#[doc(alias = "RealFft")]
pub fn real_fft<R: Real>(v: &mut VectorBase<R>, forward: bool) {
    let n = v.dim();
    if n == 0 {
        return;
    }
    if !n.is_multiple_of(2) {
        dim_mismatch("real_fft", "dimension", n, "an even number, at least", 2);
    }
    let tw: Vec<R> = (0..=n / 4)
        .flat_map(|k| {
            let a = -2.0 * std::f64::consts::PI * k as f64 / n as f64;
            [R::from_f64(a.cos()), R::from_f64(a.sin())]
        })
        .collect();
    if forward {
        complex_fft(v, true);
    }
    split_step(v.data_mut(), forward, &tw);
    if !forward {
        complex_fft(v, false);
        v.scale(R::from_f64(2.0));
    }
}

/// Kaldi's `RealFftInefficient(v, forward)`: [`real_fft`] through a full complex
/// transform of length `N` (for testing). Panics on an odd dimension.
#[doc(alias = "RealFftInefficient")]
pub fn real_fft_inefficient<R: Real>(v: &mut VectorBase<R>, forward: bool) {
    let n = v.dim();
    if n == 0 {
        return;
    }
    if !n.is_multiple_of(2) {
        dim_mismatch(
            "real_fft_inefficient",
            "dimension",
            n,
            "an even number, at least",
            2,
        );
    }
    let mut tmp = crate::Vector::<R>::new(2 * n);
    let d = v.data_mut();
    if forward {
        for i in 0..n {
            tmp[2 * i] = d[i];
        }
        complex_fft(&mut tmp, true);
        d.copy_from_slice(&tmp.data()[..n]);
        d[1] = tmp[n];
    } else {
        tmp[0] = d[0];
        tmp[n] = d[1];
        for i in 1..n / 2 {
            tmp[2 * i] = d[2 * i];
            tmp[2 * i + 1] = d[2 * i + 1];
            tmp[2 * (n - i)] = d[2 * i];
            tmp[2 * (n - i) + 1] = -d[2 * i + 1];
        }
        complex_fft(&mut tmp, false);
        for i in 0..n {
            d[i] = tmp[2 * i];
        }
    }
}

/// Kaldi's `ComputeDctMatrix(M)`: `M[k][n] = c_k cos(pi / N (n + 1/2) k)` for a `K x N`
/// matrix, `c_0 = sqrt(1/N)`, else `sqrt(2/N)` (the orthonormal DCT-II, first `K` rows).
/// Panics on an empty matrix, as Kaldi asserts.
#[doc(alias = "ComputeDctMatrix")]
pub fn compute_dct_matrix<R: Real>(m: &mut MatrixBase<R>) {
    let (k_rows, n) = m.shape();
    if k_rows == 0 || n == 0 {
        crate::error::precondition("compute_dct_matrix: the matrix must not be empty");
    }
    let nf = n as f64;
    for k in 0..k_rows {
        let c = if k == 0 {
            (1.0 / nf).sqrt()
        } else {
            (2.0 / nf).sqrt()
        };
        let row = m.row_data_mut(k);
        for (j, out) in row.iter_mut().enumerate() {
            *out = R::from_f64(c * (std::f64::consts::PI / nf * (j as f64 + 0.5) * k as f64).cos());
        }
    }
}
