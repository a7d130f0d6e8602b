//! Kaldi's own symmetric eigen-solvers on packed storage (`qr.cc`): Householder
//! tridiagonalisation, the implicit symmetric QR algorithm with Wilkinson shifts
//! (Golub and Van Loan, 3rd ed., algorithms 8.3.1 to 8.3.3), Lanczos `top_eigs`, and the
//! eigenvalue-based `SpMatrix` methods built on them (`limit_cond`, `apply_floor`).
//!
//! Kaldi's convention throughout, which is the transpose of the textbook's: the
//! orthogonal `Q` maps the original `A` to `T = Q A Q^T`, so the rows of `Q` (not its
//! columns) are the eigenvectors once `T` is diagonal.

use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::error::{dim_mismatch, shape_mismatch};
use crate::packed::check_finite_packed;
use crate::{
    Error, Matrix, MatrixBase, Position, Real, SpMatrix, SymEig, Trans, Vector, VectorBase,
};

/// The seed of the generator that starts `top_eigs`'s Lanczos iteration (and restarts it
/// when the Krylov space is exhausted): the results are the same on every run.
pub const TOP_EIGS_SEED: u64 = 0x6b61_6c64_695f_6c7a;

/// Kaldi's default `cutoff` of `IsTridiagonal`, used by `qr` to check its input.
const TRIDIAGONAL_CUTOFF: f64 = 1.0e-5;

/// Offset of row `i` in the packed layout.
fn row_start(i: usize) -> usize {
    i * (i + 1) / 2
}

/// The smallest positive normal number of `R` (C++'s `numeric_limits<Real>::min()`).
fn min_positive<R: Real>() -> R {
    if R::NAME == "f32" {
        R::from_f64(f32::MIN_POSITIVE as f64)
    } else {
        R::from_f64(f64::MIN_POSITIVE)
    }
}

/// The Householder reflection `P = I - beta v v^T` with `P x = alpha e_last` (Kaldi's
/// `HouseBackward`: the last element is the special one). Writes `v` (with `v_last = 1`)
/// and returns `(beta, alpha)`. `x` is scaled by its largest element first, so no square
/// overflows; when `x` is already a multiple of `e_last`, `beta = 0` and `alpha = x_last`.
fn house_backward<R: Real>(x: &[R], v: &mut [R]) -> (R, R) {
    let dim = x.len();
    let max_x = x.iter().fold(min_positive::<R>(), |m, &xi| m.max(xi.abs()));
    let s = R::ONE / max_x;
    let mut sigma = R::ZERO;
    for (vi, &xi) in v[..dim - 1].iter_mut().zip(&x[..dim - 1]) {
        *vi = xi * s;
        sigma += *vi * *vi;
    }
    v[dim - 1] = R::ONE;
    if sigma == R::ZERO {
        return (R::ZERO, x[dim - 1]);
    }
    let x1 = x[dim - 1] * s;
    let mu = (x1 * x1 + sigma).sqrt();
    let v1 = if x1 <= R::ZERO {
        x1 - mu
    } else {
        -sigma / (x1 + mu)
    };
    v[dim - 1] = v1;
    let v1sq = v1 * v1;
    let beta = R::from_f64(2.0) * v1sq / (sigma + v1sq);
    let inv_v1 = R::ONE / v1;
    if inv_v1.is_finite() {
        v.iter_mut().for_each(|vi| *vi *= inv_v1);
    } else {
        // v1 is subnormal: dividing keeps the precision that the reciprocal lost.
        v.iter_mut().for_each(|vi| *vi /= v1);
    }
    // P x = mu e_last, in the unscaled units.
    (beta, mu * max_x)
}

/// The Givens rotation `(c, s)` that zeroes `b` in `[c s; -s c]^T [a; b]` (Golub and Van
/// Loan 5.1.8).
fn givens<R: Real>(a: R, b: R) -> (R, R) {
    if b == R::ZERO {
        return (R::ONE, R::ZERO);
    }
    if b.abs() > a.abs() {
        let tau = -a / b;
        let s = R::ONE / (R::ONE + tau * tau).sqrt();
        (s * tau, s)
    } else {
        let tau = -b / a;
        let c = R::ONE / (R::ONE + tau * tau).sqrt();
        (c, c * tau)
    }
}

/// Rows `k` and `k + 1` of `q` become `c r_k - s r_{k+1}` and `s r_k + c r_{k+1}`.
fn rotate_rows<R: Real>(q: &mut MatrixBase<R>, k: usize, c: R, s: R) {
    let (mut top, mut bottom) = q.split_rows_at_mut(k + 1);
    let row_k = top.row_data_mut(k);
    let row_k1 = bottom.row_data_mut(0);
    for (x, y) in row_k.iter_mut().zip(row_k1.iter_mut()) {
        let (a, b) = (*x, *y);
        *x = c * a - s * b;
        *y = s * a + c * b;
    }
}

/// One implicit symmetric QR step with Wilkinson shift on the unreduced tridiagonal
/// matrix `(diag, off)` (Golub and Van Loan 8.3.2), applying the rotations to the rows of
/// `q`, which has as many rows as `diag` elements.
fn qr_step<R: Real>(diag: &mut [R], off: &mut [R], mut q: Option<&mut MatrixBase<R>>) {
    let n = diag.len();
    debug_assert!(n >= 2 && off.len() == n - 1);
    let half = R::from_f64(0.5);
    let d = (diag[n - 2] - diag[n - 1]) * half;
    let t = off[n - 2];
    // Scale so that the squares below stay in range.
    let inv_scale = d.abs().max(t.abs()).max(min_positive::<R>());
    let scale = R::ONE / inv_scale;
    let (d_scaled, t_scaled) = (d * scale, t * scale);
    let t2_scaled = t_scaled * t_scaled;
    let sign_d = if d > R::ZERO { R::ONE } else { -R::ONE };
    let mu = diag[n - 1]
        - inv_scale * t2_scaled / (d_scaled + sign_d * (d_scaled * d_scaled + t2_scaled).sqrt());
    let mut x = diag[0] - mu;
    let mut z = off[0];
    for k in 0..n - 1 {
        let (c, s) = givens(x, z);
        // T <- G^T T G on rows and columns k, k + 1.
        let (p, e, r) = (diag[k], off[k], diag[k + 1]);
        diag[k] = c * (c * p - s * e) - s * (c * e - s * r);
        off[k] = s * (c * p - s * e) + c * (c * e - s * r);
        diag[k + 1] = s * (s * p + c * e) + c * (s * e + c * r);
        if k > 0 {
            // `z` holds the bulge (k + 1, k - 1) of the previous rotation.
            off[k - 1] = c * off[k - 1] - s * z;
        }
        if let Some(q) = q.as_deref_mut() {
            rotate_rows(q, k, c, s);
        }
        if k + 2 < n {
            // The rotation creates the bulge (k + 2, k) and scales (k + 2, k + 1).
            z = -s * off[k + 1];
            off[k + 1] = c * off[k + 1];
            x = off[k];
        }
    }
}

/// Diagonalises the symmetric tridiagonal `(diag, off)` in place by the symmetric QR
/// algorithm (Golub and Van Loan 8.3.3), rotating the rows of `q` along; an error if it
/// has not converged after Kaldi's `500 + 4 n` iterations (the matrix then holds the
/// partial result).
fn qr_internal<R: Real>(
    diag: &mut [R],
    off: &mut [R],
    mut q: Option<&mut MatrixBase<R>>,
    op: &'static str,
) -> Result<(), Error> {
    let n = diag.len();
    if n < 2 {
        return Ok(());
    }
    let max_iters = 500 + 4 * n;
    let large_iters = 100 + 2 * n;
    let mut epsilon = R::EPSILON;
    for counter in 0..max_iters {
        // Kaldi doubles the tolerance every 50 iterations after `large_iters`.
        if counter == large_iters
            || (counter > large_iters && (counter - large_iters).is_multiple_of(50))
        {
            epsilon *= R::from_f64(2.0);
        }
        for i in 0..n - 1 {
            if off[i].abs() <= epsilon * (diag[i].abs() + diag[i + 1].abs()) {
                off[i] = R::ZERO;
            }
        }
        // Split the indices into [0, p) | [p, p + npq) unreduced | [n - q, n) diagonal.
        let mut q_len = 0;
        while q_len < n && (n - q_len < 2 || off[n - 2 - q_len] == R::ZERO) {
            q_len += 1;
        }
        if q_len == n {
            return Ok(());
        }
        let mut npq = 2;
        while npq + q_len < n && off[n - q_len - npq - 1] != R::ZERO {
            npq += 1;
        }
        let p = n - q_len - npq;
        let block = q.as_deref_mut().map(|m| m.row_range_mut(p, npq));
        match block {
            Some(mut rows) => qr_step(
                &mut diag[p..p + npq],
                &mut off[p..p + npq - 1],
                Some(&mut *rows),
            ),
            None => qr_step(&mut diag[p..p + npq], &mut off[p..p + npq - 1], None),
        }
    }
    Err(Error::NoConvergence {
        op,
        iterations: max_iters,
    })
}

/// Sorts `s` by decreasing absolute value (stable), permuting the rows of `r` with it
/// (Kaldi's `SortSvd(s, NULL, R)` with `sort_on_absolute_value`).
fn sort_abs_desc_rows<R: Real>(s: &mut Vector<R>, r: &mut Matrix<R>) {
    let mut order: Vec<usize> = (0..s.dim()).collect();
    order.sort_by(|&a, &b| {
        s[b].abs()
            .partial_cmp(&s[a].abs())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let (s0, r0) = (s.clone(), r.clone());
    for (new, &old) in order.iter().enumerate() {
        s[new] = s0[old];
        r.row_mut(new).copy_from_vec(r0.row(old));
    }
}

impl<R: Real> SpMatrix<R> {
    /// Kaldi's `IsTridiagonal(cutoff)`: every element more than one place off the diagonal
    /// is at most `cutoff` times the largest absolute value on the band.
    #[doc(alias = "IsTridiagonal")]
    pub fn is_tridiagonal(&self, cutoff: R) -> bool {
        self.largest_off_band().1 <= cutoff.to_f64() * self.band_max()
    }

    /// The largest absolute value on the diagonal and first sub-diagonal.
    fn band_max(&self) -> f64 {
        let data = self.data();
        (0..self.num_rows())
            .flat_map(|i| {
                let start = row_start(i);
                let j0 = i.saturating_sub(1);
                data[start + j0..=start + i].iter()
            })
            .fold(0.0, |m: f64, x| m.max(x.to_f64().abs()))
    }

    /// Position and absolute value of the largest element outside the band.
    fn largest_off_band(&self) -> ((usize, usize), f64) {
        let mut best = ((0, 0), 0.0f64);
        for i in 2..self.num_rows() {
            let start = row_start(i);
            for j in 0..i - 1 {
                let a = self.data()[start + j].to_f64().abs();
                if a > best.1 || a.is_nan() {
                    best = ((i, j), a);
                }
            }
        }
        best
    }

    /// Householder tridiagonalisation (Kaldi's `Tridiagonalize`): replaces `self = A` by
    /// a tridiagonal `T = Q A Q^T` with `Q` orthogonal, so `A = Q^T T Q` (Kaldi's
    /// convention, the transpose of Golub and Van Loan's). If `q` is given it is
    /// overwritten with `Q`. A NaN or infinite element is [`Error::NotFinite`] and leaves
    /// everything unchanged.
    ///
    /// # Panics
    /// If `q` is not `n x n`.
    #[track_caller]
    pub fn tridiagonalize(&mut self, mut q: Option<&mut Matrix<R>>) -> Result<(), Error> {
        let n = self.num_rows();
        if let Some(q) = q.as_deref() {
            if q.shape() != (n, n) {
                shape_mismatch("tridiagonalize (Q, A)", q.shape(), (n, n));
            }
        }
        check_finite_packed(self.data(), "SpMatrix::tridiagonalize")?;
        if let Some(q) = q.as_deref_mut() {
            q.set_unit();
        }
        if n < 3 {
            return Ok(());
        }
        let mut v = vec![R::ZERO; n - 1];
        let mut w = vec![R::ZERO; n - 1];
        let mut x = Vector::<R>::new(n);
        // Step k reduces row k of the leading (k + 1) x (k + 1) block, from the last row up.
        for k in (2..n).rev() {
            let ksize = row_start(k);
            let (lead, rest) = self.data_mut().split_at_mut(ksize);
            let row = &mut rest[..k];
            let (v, w) = (&mut v[..k], &mut w[..k]);
            let (beta, alpha) = house_backward(row, v);
            // w = p - (beta p.v / 2) v, with p = beta A_k v (A_k the leading k x k block).
            sp_mul_vec(lead, k, beta, v, w);
            let pv: R = w.iter().zip(v.iter()).map(|(&a, &b)| a * b).sum();
            let c = -R::from_f64(0.5) * beta * pv;
            w.iter_mut()
                .zip(v.iter())
                .for_each(|(wi, &vi)| *wi += c * vi);
            row.fill(R::ZERO);
            row[k - 1] = alpha;
            // A_k -= v w^T + w v^T (lower triangle).
            for i in 0..k {
                let start = row_start(i);
                let (vi, wi) = (v[i], w[i]);
                for (j, a) in lead[start..=start + i].iter_mut().enumerate() {
                    *a -= vi * w[j] + wi * v[j];
                }
            }
            if let Some(q) = q.as_deref_mut() {
                // Q(0:k, :) <- (I - beta v v^T) Q(0:k, :).
                let vk = VectorBase::from_slice(v);
                x.add_mat_vec(-beta, &q.row_range(0, k), Trans::Trans, vk, R::ZERO);
                q.row_range_mut(0, k).add_vec_vec(R::ONE, vk, &x);
            }
        }
        Ok(())
    }

    /// The symmetric QR algorithm (Kaldi's `Qr`): diagonalises a tridiagonal `self` in
    /// place by Givens rotations, left-multiplying `q` by each, so that `Q^T self Q` is
    /// the same at exit as at entry. After [`SpMatrix::tridiagonalize`] with the same `q`,
    /// the diagonal holds the eigenvalues (unsorted) and the rows of `q` the eigenvectors:
    /// `A = Q^T diag(s) Q`.
    ///
    /// Errors: [`Error::NotTridiagonal`] if an element outside the band exceeds Kaldi's
    /// `IsTridiagonal` cutoff (`1e-5` of the band's largest), [`Error::NotFinite`],
    /// [`Error::NoConvergence`] after `500 + 4 n` QR steps (the matrix and `q` then hold
    /// the partial result, as Kaldi leaves them after its warning).
    ///
    /// # Panics
    /// If `q` is not `n x n`.
    #[track_caller]
    pub fn qr(&mut self, q: Option<&mut Matrix<R>>) -> Result<(), Error> {
        let n = self.num_rows();
        if let Some(q) = q.as_deref() {
            if q.shape() != (n, n) {
                shape_mismatch("qr (Q, A)", q.shape(), (n, n));
            }
        }
        check_finite_packed(self.data(), "SpMatrix::qr")?;
        let ((i, j), off_max) = self.largest_off_band();
        let band_max = self.band_max();
        if off_max > TRIDIAGONAL_CUTOFF * band_max {
            return Err(Error::NotTridiagonal {
                op: "SpMatrix::qr",
                position: Position::Matrix(i, j),
                value: self[(i, j)].to_f64(),
                band_max,
            });
        }
        let mut diag: Vec<R> = (0..n).map(|i| self[(i, i)]).collect();
        let mut off: Vec<R> = (1..n).map(|i| self[(i, i - 1)]).collect();
        let result = qr_internal(&mut diag, &mut off, q.map(|m| &mut **m), "SpMatrix::qr");
        self.data_mut().fill(R::ZERO);
        for i in 0..n {
            self[(i, i)] = diag[i];
            if i > 0 {
                self[(i, i - 1)] = off[i - 1];
            }
        }
        result
    }

    /// The eigenvalues of largest absolute value and their eigenvectors, by Lanczos
    /// iteration with full re-orthogonalisation (Kaldi's `TopEigs`): `s` receives
    /// `s.dim()` eigenvalues, largest `|s_i|` first, and the columns of `p` (`n x
    /// s.dim()`) orthonormal vectors with `p^T self p = diag(s)`, so `p diag(s) p^T` is a
    /// low-rank approximation of `self`.
    ///
    /// `lanczos_dim` is the Krylov dimension; `None`, or `Some(0)` (Kaldi's `lanczos_dim
    /// <= 0`, its default argument `0`), takes Kaldi's default, the larger of `s.dim() +
    /// 50` and `1.5 s.dim()`. When it reaches `n` the full eigendecomposition
    /// is used instead (LAPACK `syevd`, sorted by decreasing `|s_i|`). The starting vector
    /// is drawn from a generator seeded with [`TOP_EIGS_SEED`] (Kaldi uses its global
    /// `Rand()`), so the result is the same on every run.
    ///
    /// Errors: [`Error::NotFinite`]; [`Error::InvalidArgument`] if a non-zero `lanczos_dim`
    /// is below `s.dim()`; [`Error::NoConvergence`] if the iteration had to restart more than 100
    /// times in one step (Kaldi's "loop detected") or the QR algorithm did not converge.
    ///
    /// # Panics
    /// If `s.dim() > n` or `p` is not `n x s.dim()`.
    #[track_caller]
    #[allow(clippy::needless_range_loop)] // `d` indexes rows of `q` and of `T` alike
    #[doc(alias = "TopEigs")]
    pub fn top_eigs(
        &self,
        s: &mut VectorBase<R>,
        p: &mut MatrixBase<R>,
        lanczos_dim: Option<usize>,
    ) -> Result<(), Error> {
        let dim = self.num_rows();
        let eig_dim = s.dim();
        if eig_dim > dim {
            dim_mismatch("top_eigs", "eigenvalue count", eig_dim, "matrix order", dim);
        }
        if p.shape() != (dim, eig_dim) {
            shape_mismatch("top_eigs (P, n x s.dim())", p.shape(), (dim, eig_dim));
        }
        check_finite_packed(self.data(), "SpMatrix::top_eigs")?;
        if eig_dim == 0 {
            return Ok(());
        }
        let lanczos_dim = lanczos_dim
            .filter(|&d| d > 0)
            .unwrap_or((eig_dim + 50).max(eig_dim + eig_dim / 2));
        if lanczos_dim < eig_dim {
            return Err(Error::InvalidArgument {
                op: "SpMatrix::top_eigs",
                name: "lanczos_dim",
                value: lanczos_dim as f64,
                requirement: "at least the number of eigenvalues asked for",
            });
        }
        if lanczos_dim >= dim {
            let eig = self.eig()?;
            // Rows of `r` are the eigenvectors, as in the Lanczos path.
            let mut r = eig.p;
            r.transpose();
            let mut vals = eig.s;
            sort_abs_desc_rows(&mut vals, &mut r);
            s.copy_from_vec(vals.range(0, eig_dim));
            p.copy_from_mat(&r.row_range(0, eig_dim), Trans::Trans);
            return Ok(());
        }
        let mut rng = StdRng::seed_from_u64(TOP_EIGS_SEED);
        // Rows of `q` are an orthonormal basis of the Krylov space; T = q S q^T is
        // tridiagonal (diagonal `alpha`, sub-diagonal `beta`).
        let mut q = Matrix::<R>::new(lanczos_dim, dim);
        let mut t_diag = vec![R::ZERO; lanczos_dim];
        let mut t_off = vec![R::ZERO; lanczos_dim - 1];
        q.row_mut(0).set_randn(&mut rng);
        let norm = q.row(0).norm(R::from_f64(2.0));
        q.row_mut(0).scale(R::ONE / norm);
        let mut r = Vector::<R>::new(dim);
        for d in 0..lanczos_dim {
            r.add_sp_vec(R::ONE, self, q.row(d), R::ZERO);
            let mut restarts = 0;
            let mut end_prod;
            loop {
                // Full (modified Gram-Schmidt) orthogonalisation against every row so
                // far, newest first; repeated when r lost most of its length.
                let start_prod = crate::vec_vec(&r, &r);
                for e in (0..=d).rev() {
                    let prod = crate::vec_vec(&r, q.row(e));
                    if restarts == 0 && e + 1 >= d {
                        if e == d {
                            t_diag[d] = prod;
                        } else {
                            t_off[e] = prod;
                        }
                    }
                    r.add_vec(-prod, q.row(e));
                }
                if d + 1 == lanczos_dim {
                    end_prod = R::ZERO;
                    break;
                }
                end_prod = crate::vec_vec(&r, &r);
                if end_prod <= R::from_f64(0.1) * start_prod {
                    if end_prod == R::ZERO {
                        // The Krylov space is exhausted: restart from a random vector.
                        r.set_randn(&mut rng);
                    }
                    restarts += 1;
                    if restarts > 100 {
                        return Err(Error::NoConvergence {
                            op: "SpMatrix::top_eigs (Lanczos restarts)",
                            iterations: restarts,
                        });
                    }
                } else {
                    break;
                }
            }
            if d + 1 != lanczos_dim {
                r.scale(R::ONE / end_prod.sqrt());
                q.row_mut(d + 1).copy_from_vec(&r);
            }
        }
        let mut rot = Matrix::<R>::new(lanczos_dim, lanczos_dim);
        rot.set_unit();
        qr_internal(
            &mut t_diag,
            &mut t_off,
            Some(&mut rot),
            "SpMatrix::top_eigs",
        )?;
        // T = rot^T diag(t_diag) rot, and S ~ q^T T q, so P = q^T rot_sub^T.
        let mut vals = Vector::from_vec(t_diag);
        sort_abs_desc_rows(&mut vals, &mut rot);
        s.copy_from_vec(vals.range(0, eig_dim));
        p.add_mat_mat(
            R::ONE,
            &q,
            Trans::Trans,
            &rot.row_range(0, eig_dim),
            Trans::Trans,
            R::ZERO,
        );
        Ok(())
    }
}

/// `out = alpha A v` for the leading `k x k` block `A` of packed data (BLAS-free: the
/// blocks of `tridiagonalize` shrink every step, and this is a small share of its work).
fn sp_mul_vec<R: Real>(packed: &[R], k: usize, alpha: R, v: &[R], out: &mut [R]) {
    out.fill(R::ZERO);
    for i in 0..k {
        let start = row_start(i);
        let row = &packed[start..=start + i];
        let mut acc = R::ZERO;
        for (j, &a) in row[..i].iter().enumerate() {
            acc += a * v[j];
            out[j] += a * v[i];
        }
        out[i] += acc + row[i] * v[i];
    }
    out.iter_mut().for_each(|o| *o *= alpha);
}

/// Kaldi's default tolerance of `SpMatrix::SymPosSemiDefEig`: the most negative
/// eigenvalue may be `0.001` of the largest.
pub(crate) const PSD_TOLERANCE: f64 = 0.001;

impl<R: Real> SpMatrix<R> {
    /// Kaldi's `SpMatrix::SymPosSemiDefEig`: the eigendecomposition (LAPACK `syevd`,
    /// ascending) of a matrix whose most negative eigenvalue is at most `tolerance` times
    /// the largest ([`Error::NegativeEigenvalue`] otherwise), negative eigenvalues set to 0.
    pub(crate) fn psd_eig(&self, op: &'static str, tolerance: f64) -> Result<SymEig<R>, Error> {
        let mut eig = self.eig()?;
        let n = eig.s.dim();
        if n == 0 {
            return Ok(eig);
        }
        let (min, max) = (eig.s[0].to_f64(), eig.s[n - 1].to_f64());
        if -min > tolerance * max {
            return Err(Error::NegativeEigenvalue {
                op,
                min,
                max,
                tolerance,
            });
        }
        eig.s
            .data_mut()
            .iter_mut()
            .for_each(|x| *x = x.max(R::ZERO));
        Ok(eig)
    }

    /// Limits the condition number of a positive semi-definite matrix to `max_cond` by
    /// flooring its eigenvalues at `max eigenvalue / max_cond` (at least `1e-40`), and
    /// returns how many were at or below that floor (Kaldi's `LimitCond`). With `invert`
    /// the result is the inverse of the floored matrix.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `max_cond > 1`; [`Error::NegativeEigenvalue`]
    /// if an eigenvalue is below `-0.001` times the largest (Kaldi asserts); the matrix is
    /// then unchanged.
    #[doc(alias = "LimitCond")]
    pub fn limit_cond(&mut self, max_cond: R, invert: bool) -> Result<usize, Error> {
        if max_cond.partial_cmp(&R::ONE) != Some(std::cmp::Ordering::Greater) {
            return Err(Error::InvalidArgument {
                op: "SpMatrix::limit_cond",
                name: "max_cond",
                value: max_cond.to_f64(),
                requirement: "greater than 1",
            });
        }
        let n = self.num_rows();
        if n == 0 {
            return Ok(0);
        }
        let SymEig { mut s, mut p } = self.psd_eig("SpMatrix::limit_cond", PSD_TOLERANCE)?;
        let mut floor = (s[n - 1] / max_cond).max(R::ZERO);
        let min_floor = R::from_f64(1.0e-40);
        if floor < min_floor {
            floor = min_floor;
        }
        let mut floored = 0;
        for x in s.data_mut() {
            if *x <= floor {
                floored += 1;
            }
            let root = x.max(floor).sqrt();
            *x = if invert { R::ONE / root } else { root };
        }
        p.mul_cols_vec(&s);
        self.add_mat2(R::ONE, &p, Trans::NoTrans, R::ZERO);
        Ok(floored)
    }

    /// [`SpMatrix::limit_cond`] computed in `f64` whatever `R` is (Kaldi's
    /// `LimitCondDouble`).
    #[allow(
        clippy::missing_panics_doc,
        reason = "the f64 copy has the same packed length"
    )]
    #[doc(alias = "LimitCondDouble")]
    pub fn limit_cond_double(&mut self, max_cond: R, invert: bool) -> Result<usize, Error> {
        let mut wide = SpMatrix::<f64>::from_packed(
            self.num_rows(),
            self.data().iter().map(|x| x.to_f64()).collect(),
        )
        .expect("the f64 copy has the same packed length");
        let floored = wide.limit_cond(max_cond.to_f64(), invert)?;
        for (o, &x) in self.data_mut().iter_mut().zip(wide.data()) {
            *o = R::from_f64(x);
        }
        Ok(floored)
    }

    /// Floors `self` to `alpha * floor` in the positive semi-definite sense (Kaldi's
    /// `ApplyFloor(Floor, alpha)`): afterwards `x^T self x >= alpha x^T floor x` for every
    /// `x`, by flooring at 1 the eigenvalues of `L^-1 self L^-T`, where `alpha floor = L
    /// L^T`. Returns how many eigenvalues were floored.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `alpha > 0`; the Cholesky error
    /// ([`Error::Lapack`]) if `floor` is not positive definite; [`Error::NotFinite`]. The
    /// matrix is unchanged on error.
    ///
    /// # Panics
    /// If the orders differ.
    #[track_caller]
    #[doc(alias = "ApplyFloor")]
    pub fn apply_floor(&mut self, floor: &SpMatrix<R>, alpha: R) -> Result<usize, Error> {
        let n = self.num_rows();
        if floor.num_rows() != n {
            shape_mismatch(
                "apply_floor (self, floor)",
                (n, n),
                (floor.num_rows(), floor.num_rows()),
            );
        }
        if alpha.partial_cmp(&R::ZERO) != Some(std::cmp::Ordering::Greater) {
            return Err(Error::InvalidArgument {
                op: "SpMatrix::apply_floor",
                name: "alpha",
                value: alpha.to_f64(),
                requirement: "positive",
            });
        }
        check_finite_packed(self.data(), "SpMatrix::apply_floor")?;
        let mut l = crate::TpMatrix::cholesky(floor)?;
        l.scale(alpha.sqrt());
        let mut l_inv = l.clone();
        l_inv.invert()?;
        let mut d = SpMatrix::new(n);
        d.add_mat2_sp(R::ONE, &l_inv.to_matrix(), Trans::NoTrans, self, R::ZERO);
        let SymEig { mut s, mut p } = d.eig()?;
        let mut floored = 0;
        for x in s.data_mut() {
            if *x < R::ONE {
                floored += 1;
                *x = R::ONE;
            }
            *x = x.sqrt();
        }
        p.mul_cols_vec(&s);
        d.add_mat2(R::ONE, &p, Trans::NoTrans, R::ZERO);
        self.add_mat2_sp(R::ONE, &l.to_matrix(), Trans::NoTrans, &d, R::ZERO);
        Ok(floored)
    }

    /// Floors the eigenvalues at `floor` (Kaldi's `ApplyFloor(Real)`), returning how
    /// many were below it; [`Error::NotFinite`] leaves the matrix unchanged.
    pub fn apply_floor_scalar(&mut self, floor: R) -> Result<usize, Error> {
        let SymEig { mut s, p } = self.eig()?;
        let mut floored = 0;
        for x in s.data_mut() {
            if *x < floor {
                floored += 1;
                *x = floor;
            }
        }
        if self.num_rows() > 0 {
            self.add_mat2_vec(R::ONE, &p, Trans::NoTrans, &s, R::ZERO);
        }
        Ok(floored)
    }
}
