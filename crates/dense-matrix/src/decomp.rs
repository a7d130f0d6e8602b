//! LAPACK decompositions: `svd`, `sym_eig`, `eig`, `invert`, `log_det`, `cholesky`,
//! `sym_pos_semi_def_eig`, `cond`, `power`.
//!
//! LAPACK is column-major and our matrices are row-major, so each routine sees the
//! transpose of what we store; the comments at each call say how that is undone.
//! Numerical failures (singular, not positive definite, no convergence) are
//! [`Error::Lapack`] values naming the routine and its `info`. Every routine checks its
//! input is finite first ([`Error::NotFinite`]): LAPACK flags a NaN as an invalid
//! argument and can iterate forever on an infinity.

use std::os::raw::{c_char, c_int};

use crate::blas::int;
use crate::error::shape_mismatch;
use crate::{Error, Matrix, MatrixBase, Position, Real, StrideType, Trans, Vector};

/// The thin singular value decomposition `M = U diag(s) Vt`, `s` descending.
#[derive(Debug, Clone)]
pub struct Svd<R: Real> {
    /// Singular values, largest first (`min(rows, cols)` of them).
    pub s: Vector<R>,
    /// Left singular vectors as columns, `rows x k`.
    pub u: Matrix<R>,
    /// Right singular vectors as rows, `k x cols`.
    pub vt: Matrix<R>,
}

/// The symmetric eigendecomposition `M = P diag(s) P^T`.
#[derive(Debug, Clone)]
pub struct SymEig<R: Real> {
    /// Eigenvalues (ascending from [`MatrixBase::sym_eig`], descending from
    /// [`MatrixBase::sym_pos_semi_def_eig`]).
    pub s: Vector<R>,
    /// Orthonormal eigenvectors as columns.
    pub p: Matrix<R>,
}

/// The general eigendecomposition `M = P D P^-1` (Kaldi's `Eig`): `D` is diagonal for
/// real eigenvalues and has a block `[[a, b], [-b, a]]` for each pair `a +- ib`, whose
/// columns in `P` are the real and imaginary parts of the eigenvector of `a + ib`.
#[derive(Debug, Clone)]
pub struct Eig<R: Real> {
    /// Eigenvectors (real form, see above) as columns.
    pub p: Matrix<R>,
    /// Real parts of the eigenvalues.
    pub re: Vector<R>,
    /// Imaginary parts of the eigenvalues (pairs `+b, -b` adjacent, positive first).
    pub im: Vector<R>,
}

impl<R: Real> Eig<R> {
    /// The block-diagonal `D` with `M = P D P^-1` (Kaldi's `CreateEigenvalueMatrix`).
    pub fn d(&self) -> Matrix<R> {
        eigenvalue_matrix(&self.re, &self.im)
    }
}

fn eigenvalue_matrix<R: Real>(re: &Vector<R>, im: &Vector<R>) -> Matrix<R> {
    let n = re.dim();
    let mut d = Matrix::new(n, n);
    let mut j = 0;
    while j < n {
        if im[j] == R::ZERO || j + 1 == n {
            d[(j, j)] = re[j];
            j += 1;
        } else {
            let (a, b) = (re[j], im[j]);
            d[(j, j)] = a;
            d[(j, j + 1)] = b;
            d[(j + 1, j)] = -b;
            d[(j + 1, j + 1)] = a;
            j += 2;
        }
    }
    d
}

/// `s` for `f32`, `d` for `f64`, prefixed to a LAPACK routine name.
pub(crate) fn routine<R: Real>(single: &'static str, double: &'static str) -> &'static str {
    if R::NAME == "f32" {
        single
    } else {
        double
    }
}

/// A workspace size LAPACK reported as a float, rounded up with a little slack.
fn lwork_from<R: Real>(w: R) -> usize {
    let w = w.to_f64();
    (w * (1.0 + 1e-6)).ceil() as usize + 1
}

#[track_caller]
pub(crate) fn check_info(
    info: c_int,
    routine: &'static str,
    meaning: &'static str,
) -> Result<(), Error> {
    if info < 0 {
        // A negative info means an argument was wrong: a bug here, not bad input.
        crate::error::precondition(&format!("{routine}: argument {} was invalid", -info));
    }
    if info > 0 {
        return Err(Error::Lapack {
            routine,
            info,
            meaning,
        });
    }
    Ok(())
}

/// Runs a LAPACK routine that takes a float workspace twice: first as a workspace query
/// (`lwork = -1`, the size comes back in `work[0]`), then with a workspace of the size it
/// asked for (at least `min_lwork`). `call(work, lwork, info)` makes the call; `failure`
/// says what a positive `info` from the second call means.
fn with_workspace<R: Real>(
    name: &'static str,
    failure: &'static str,
    min_lwork: usize,
    mut call: impl FnMut(*mut R, c_int, &mut c_int),
) -> Result<(), Error> {
    let mut info: c_int = 0;
    let mut query = [R::ZERO];
    call(query.as_mut_ptr(), -1, &mut info);
    check_info(info, name, "workspace query failed")?;
    let lwork = lwork_from(query[0]).max(min_lwork);
    let mut work = vec![R::ZERO; lwork];
    call(work.as_mut_ptr(), int(lwork), &mut info);
    check_info(info, name, failure)
}

/// The first NaN or infinite element as [`Error::NotFinite`]: LAPACK reports NaN as an
/// invalid argument and can loop forever on infinities, so no decomposition sees them.
pub(crate) fn check_finite<R: Real>(m: &MatrixBase<R>, op: &'static str) -> Result<(), Error> {
    for (r, row) in m.rows().enumerate() {
        if let Some(c) = row.iter().position(|x| !x.is_finite()) {
            return Err(Error::NotFinite {
                op,
                position: Position::Matrix(r, c),
                value: row[c].to_f64(),
            });
        }
    }
    Ok(())
}

/// [`check_finite`] over the lower triangle only, for routines that read nothing else.
fn check_finite_lower<R: Real>(m: &MatrixBase<R>, op: &'static str) -> Result<(), Error> {
    for (r, row) in m.rows().enumerate() {
        let lower = &row[..(r + 1).min(row.len())];
        if let Some(c) = lower.iter().position(|x| !x.is_finite()) {
            return Err(Error::NotFinite {
                op,
                position: Position::Matrix(r, c),
                value: row[c].to_f64(),
            });
        }
    }
    Ok(())
}

const JOB_S: c_char = b'S' as c_char;
const JOB_N: c_char = b'N' as c_char;
const JOB_V: c_char = b'V' as c_char;
const UPLO_U: c_char = b'U' as c_char;

impl<R: Real> MatrixBase<R> {
    #[track_caller]
    fn square_dim(&self, op: &str) -> usize {
        if self.num_rows() != self.num_cols() {
            shape_mismatch(
                &format!("{op} needs a square matrix"),
                self.shape(),
                (self.num_rows(), self.num_rows()),
            );
        }
        self.num_rows()
    }

    /// The thin SVD `self = U diag(s) Vt`, singular values descending (Kaldi's `Svd` with
    /// `SortSvd`), by LAPACK `gesdd`.
    pub fn svd(&self) -> Result<Svd<R>, Error> {
        check_finite(self, "svd")?;
        let (m, n) = self.shape();
        let k = m.min(n);
        let mut s = Vector::new(k);
        let mut u = Matrix::new(m, k);
        let mut vt = Matrix::new(k, n);
        if k == 0 {
            return Ok(Svd { s, u, vt });
        }
        let mut a = self.to_matrix();
        // LAPACK sees A^T (n x m, column-major). A^T = U' S VT' gives A = VT'^T S U'^T,
        // and the column-major VT' (k x m) is our row-major U, U' (n x k) our row-major Vt.
        let (lm, ln, lda) = (int(n), int(m), int(a.stride()));
        let (ldu, ldvt) = (int(vt.stride()), int(u.stride()));
        let mut iwork = vec![0 as c_int; 8 * k];
        with_workspace(
            routine::<R>("sgesdd", "dgesdd"),
            "the divide-and-conquer SVD did not converge",
            1,
            |work, lwork, info| {
                // SAFETY: every buffer has the size and leading dimension passed with it,
                // and `work` holds `lwork` elements (one for the query).
                unsafe {
                    R::lapack_gesdd(
                        JOB_S,
                        &lm,
                        &ln,
                        a.as_mut_ptr(),
                        &lda,
                        s.data_mut().as_mut_ptr(),
                        vt.as_mut_ptr(),
                        &ldu,
                        u.as_mut_ptr(),
                        &ldvt,
                        work,
                        &lwork,
                        iwork.as_mut_ptr(),
                        info,
                    )
                }
            },
        )?;
        sort_svd(&mut s, &mut u, &mut vt);
        Ok(Svd { s, u, vt })
    }

    /// Eigendecomposition of a symmetric matrix `self = P diag(s) P^T` by LAPACK `syevd`,
    /// eigenvalues ascending. Only the lower triangle is read.
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    #[doc(alias = "SymEig")]
    pub fn sym_eig(&self) -> Result<SymEig<R>, Error> {
        let n = self.square_dim("sym_eig");
        check_finite_lower(self, "sym_eig")?;
        let mut s = Vector::new(n);
        if n == 0 {
            return Ok(SymEig {
                s,
                p: Matrix::empty(),
            });
        }
        let mut a = self.to_matrix();
        // Column-major with uplo = 'U' reads our row-major lower triangle. On exit the
        // column-major columns (our rows) are the eigenvectors: P is the transpose.
        let (ln, lda) = (int(n), int(a.stride()));
        let mut info: c_int = 0;
        let mut query = [R::ZERO];
        let mut iquery: [c_int; 1] = [0];
        let name = routine::<R>("ssyevd", "dsyevd");
        // SAFETY: buffers sized as passed.
        unsafe {
            R::lapack_syevd(
                JOB_V,
                UPLO_U,
                &ln,
                a.as_mut_ptr(),
                &lda,
                s.data_mut().as_mut_ptr(),
                query.as_mut_ptr(),
                &-1,
                iquery.as_mut_ptr(),
                &-1,
                &mut info,
            );
        }
        check_info(info, name, "workspace query failed")?;
        let lwork = lwork_from(query[0]);
        let liwork = iquery[0].max(1) as usize;
        let mut work = vec![R::ZERO; lwork];
        let mut iwork = vec![0 as c_int; liwork];
        // SAFETY: buffers sized as LAPACK asked.
        unsafe {
            R::lapack_syevd(
                JOB_V,
                UPLO_U,
                &ln,
                a.as_mut_ptr(),
                &lda,
                s.data_mut().as_mut_ptr(),
                work.as_mut_ptr(),
                &int(lwork),
                iwork.as_mut_ptr(),
                &int(liwork),
                &mut info,
            );
        }
        check_info(info, name, "the eigenvalue algorithm did not converge")?;
        a.transpose();
        Ok(SymEig { s, p: a })
    }

    /// General eigendecomposition `self = P D P^-1` by LAPACK `geev` (Kaldi's `Eig`; see
    /// [`Eig`] for the real form of complex pairs).
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    pub fn eig(&self) -> Result<Eig<R>, Error> {
        let n = self.square_dim("eig");
        check_finite(self, "eig")?;
        let (mut re, mut im) = (Vector::new(n), Vector::new(n));
        if n == 0 {
            return Ok(Eig {
                p: Matrix::empty(),
                re,
                im,
            });
        }
        // Our transpose, stored densely row-major, is `self` in column-major order.
        let mut a = Matrix::try_new(n, n, StrideType::EqualNumCols)?;
        a.copy_from_mat(self, Trans::Trans);
        let mut vr = Matrix::try_new(n, n, StrideType::EqualNumCols)?;
        let (ln, one) = (int(n), 1 as c_int);
        let mut vl_dummy = [R::ZERO];
        with_workspace(
            routine::<R>("sgeev", "dgeev"),
            "the QR algorithm failed to compute all eigenvalues",
            1,
            |work, lwork, info| {
                // SAFETY: buffers sized as passed (VL is not referenced with jobvl = 'N'),
                // and `work` holds `lwork` elements (one for the query).
                unsafe {
                    R::lapack_geev(
                        JOB_N,
                        JOB_V,
                        &ln,
                        a.as_mut_ptr(),
                        &ln,
                        re.data_mut().as_mut_ptr(),
                        im.data_mut().as_mut_ptr(),
                        vl_dummy.as_mut_ptr(),
                        &one,
                        vr.as_mut_ptr(),
                        &ln,
                        work,
                        &lwork,
                        info,
                    )
                }
            },
        )?;
        // VR is column-major: our row-major buffer holds P^T.
        vr.transpose();
        Ok(Eig { p: vr, re, im })
    }

    /// LU factorisation of `self` in place (LAPACK `getrf`); returns the pivots, or an
    /// error naming the first zero pivot.
    fn lu_in_place(&mut self) -> Result<Vec<c_int>, (Error, Vec<c_int>)> {
        let n = self.num_rows();
        let mut ipiv = vec![0 as c_int; n];
        let (ln, lda) = (int(n), int(self.stride()));
        let mut info: c_int = 0;
        let ptr = self.as_mut_ptr();
        // SAFETY: `ptr` addresses an `n x n` window with leading dimension `stride`.
        unsafe { R::lapack_getrf(&ln, &ln, ptr, &lda, ipiv.as_mut_ptr(), &mut info) };
        match check_info(
            info,
            routine::<R>("sgetrf", "dgetrf"),
            "a diagonal element of U is exactly zero: the matrix is singular",
        ) {
            Ok(()) => Ok(ipiv),
            Err(e) => Err((e, ipiv)),
        }
    }

    /// `(ln|det|, sign)` from an LU factorisation in `self` and its pivots.
    fn lu_log_det(&self, ipiv: &[c_int]) -> (R, R) {
        let mut log_det = 0.0f64;
        let mut negative = false;
        for (i, &p) in ipiv.iter().enumerate() {
            let d = self.row_data(i)[i].to_f64();
            log_det += d.abs().ln();
            negative ^= d < 0.0;
            negative ^= p as usize != i + 1;
        }
        (
            R::from_f64(log_det),
            if negative { -R::ONE } else { R::ONE },
        )
    }

    /// Inverts in place (LAPACK `getrf` + `getri`; Kaldi's `Invert`) and returns
    /// `(ln|det|, sign of det)` of the original matrix. On error (a singular matrix) the
    /// contents are its LU factors, as in Kaldi.
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    #[doc(alias("inverse", "inv"))]
    pub fn invert(&mut self) -> Result<(R, R), Error> {
        // The row-major buffer is A^T column-major; (A^T)^-1 = (A^-1)^T, so inverting it
        // in place leaves A^-1 in row-major order; det(A^T) = det(A).
        let n = self.square_dim("invert");
        check_finite(self, "invert")?;
        if n == 0 {
            return Ok((R::ZERO, R::ONE));
        }
        let ipiv = self.lu_in_place().map_err(|(e, _)| e)?;
        let (log_det, sign) = self.lu_log_det(&ipiv);
        let (ln, lda) = (int(n), int(self.stride()));
        let ptr = self.as_mut_ptr();
        // getri wants at least n elements of workspace.
        with_workspace(
            routine::<R>("sgetri", "dgetri"),
            "the matrix is singular",
            n,
            |work, lwork, info| {
                // SAFETY: `ptr` addresses the factorised `n x n` window, and `work` holds
                // `lwork` elements (one for the query).
                unsafe { R::lapack_getri(&ln, ptr, &lda, ipiv.as_ptr(), work, &lwork, info) }
            },
        )?;
        Ok((log_det, sign))
    }

    /// `(ln|det|, sign of det)` by LU (Kaldi's `LogDet`); `(-inf, 0)` for a singular
    /// matrix, as Kaldi, and `(NaN, NaN)` when an element is NaN or infinite.
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    #[doc(alias = "LogDet")]
    pub fn log_det(&self) -> (R, R) {
        let n = self.square_dim("log_det");
        if n == 0 {
            return (R::ZERO, R::ONE);
        }
        if check_finite(self, "log_det").is_err() {
            return (R::NAN, R::NAN);
        }
        let mut a = self.to_matrix();
        match a.lu_in_place() {
            Ok(ipiv) => a.lu_log_det(&ipiv),
            Err(_) => (R::NEG_INFINITY, R::ZERO),
        }
    }

    /// The Cholesky factor `L` (lower triangular, `self = L L^T`) by LAPACK `potrf`;
    /// only the lower triangle of `self` is read.
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    pub fn cholesky(&self) -> Result<Matrix<R>, Error> {
        let n = self.square_dim("cholesky");
        check_finite_lower(self, "cholesky")?;
        let mut a = self.to_matrix();
        if n == 0 {
            return Ok(a);
        }
        // Column-major 'U' (A = U^T U) is our row-major lower triangle: L = U^T.
        let (ln, lda) = (int(n), int(a.stride()));
        let mut info: c_int = 0;
        let ptr = a.as_mut_ptr();
        // SAFETY: `ptr` addresses the `n x n` copy.
        unsafe { R::lapack_potrf(UPLO_U, &ln, ptr, &lda, &mut info) };
        check_info(
            info,
            routine::<R>("spotrf", "dpotrf"),
            "a leading minor is not positive definite",
        )?;
        for r in 0..n {
            a.row_data_mut(r)[r + 1..].fill(R::ZERO);
        }
        Ok(a)
    }

    /// Eigendecomposition of a symmetric positive semi-definite matrix through the SVD
    /// (Kaldi's `SymPosSemiDefEig`): `self = P diag(s) P^T`, `s` descending; singular
    /// values whose left and right vectors disagree in sign (tiny negative eigenvalues)
    /// become 0. An error if the reconstruction misses `self` by more than
    /// `check_thresh` relative to its norm (Kaldi only warns).
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    #[doc(alias = "SymPosSemiDefEig")]
    pub fn sym_pos_semi_def_eig(&self, check_thresh: R) -> Result<SymEig<R>, Error> {
        self.square_dim("sym_pos_semi_def_eig");
        check_finite(self, "sym_pos_semi_def_eig")?;
        let Svd {
            mut s,
            mut u,
            mut vt,
        } = self.svd()?;
        for i in 0..s.dim() {
            let dot: f64 = (0..u.num_rows())
                .map(|j| (u[(j, i)] * vt[(i, j)]).to_f64())
                .sum();
            if dot < 0.0 {
                s[i] = R::ZERO;
            }
        }
        // Zeroing can put a 0 before a tiny positive value; sort again (stable), so the
        // eigenvalues are descending as documented (Kaldi leaves that order unsorted).
        sort_svd(&mut s, &mut u, &mut vt);
        let mut rec = u.clone();
        rec.mul_cols_vec(&s);
        let mut full = Matrix::new(self.num_rows(), self.num_cols());
        full.add_mat_mat(R::ONE, &rec, Trans::NoTrans, &u, Trans::Trans, R::ZERO);
        let old_norm = self.frobenius_norm().to_f64();
        let new_norm = full.frobenius_norm().to_f64();
        full.add_mat(-R::ONE, self, Trans::NoTrans);
        let diff_norm = full.frobenius_norm().to_f64();
        let tol = check_thresh.to_f64();
        if !(old_norm == 0.0 && new_norm == 0.0)
            && ((new_norm - old_norm).abs() > old_norm * tol || diff_norm > old_norm * tol)
        {
            return Err(Error::NotPositiveSemiDefinite {
                diff_norm,
                norm: old_norm,
                tolerance: tol,
            });
        }
        Ok(SymEig { s, p: u })
    }

    /// The 2-norm condition number `s_max / s_min` (Kaldi's `Cond`); `inf` if singular.
    pub fn cond(&self) -> Result<R, Error> {
        check_finite(self, "cond")?;
        let s = self.svd()?.s;
        if s.dim() == 0 {
            return Ok(R::ONE);
        }
        let (max, min) = (s.max(), s.min());
        Ok(if min > R::ZERO {
            max / min
        } else {
            R::INFINITY
        })
    }

    /// Raises a diagonalisable matrix to a real power through `P D^pow P^-1` (Kaldi's
    /// `Power`): complex eigenvalues use the principal branch; a negative real eigenvalue,
    /// or a zero one with a negative power, is an error and leaves `self` unchanged.
    ///
    /// # Panics
    /// If the matrix is not square.
    #[track_caller]
    pub fn power(&mut self, power: R) -> Result<(), Error> {
        let n = self.square_dim("power");
        check_finite(self, "power")?;
        if n == 0 {
            return Ok(());
        }
        let Eig { p, mut re, mut im } = self.eig()?;
        for i in 0..n {
            let (x, y) = (re[i], im[i]);
            let r = (x * x + y * y).sqrt();
            if (x < R::ZERO && y == R::ZERO) || (power < R::ZERO && r == R::ZERO) {
                return Err(Error::EigenvaluePower {
                    index: i,
                    value: x.to_f64(),
                    power: power.to_f64(),
                });
            }
            let theta = y.atan2(x) * power;
            let rp = r.powf(power);
            re[i] = rp * theta.cos();
            im[i] = rp * theta.sin();
        }
        let d = eigenvalue_matrix(&re, &im);
        let mut pd = Matrix::new(n, n);
        pd.add_mat_mat(R::ONE, &p, Trans::NoTrans, &d, Trans::NoTrans, R::ZERO);
        let mut p_inv = p;
        p_inv.invert()?;
        self.add_mat_mat(R::ONE, &pd, Trans::NoTrans, &p_inv, Trans::NoTrans, R::ZERO);
        Ok(())
    }
}

/// Sorts singular values descending, permuting the columns of `u` and rows of `vt` with
/// them (Kaldi's `SortSvd`; LAPACK already returns them sorted, this makes it certain).
fn sort_svd<R: Real>(s: &mut Vector<R>, u: &mut Matrix<R>, vt: &mut Matrix<R>) {
    let k = s.dim();
    if (1..k).all(|i| s[i - 1] >= s[i]) {
        return;
    }
    let mut order: Vec<usize> = (0..k).collect();
    // largest first, NaN last and equal to each other: a total order, which the standard
    // sort needs (NaN taken as equal to every value is not one, and the sort may panic)
    order.sort_by(|&a, &b| {
        s[b].partial_cmp(&s[a])
            .unwrap_or_else(|| s[a].is_nan().cmp(&s[b].is_nan()))
    });
    let (s0, u0, vt0) = (s.clone(), u.clone(), vt.clone());
    for (new, &old) in order.iter().enumerate() {
        s[new] = s0[old];
        for r in 0..u.num_rows() {
            u[(r, new)] = u0[(r, old)];
        }
        vt.row_mut(new).copy_from_vec(vt0.row(old));
    }
}

#[cfg(test)]
mod sort_svd_tests {
    use super::sort_svd;
    use crate::{Matrix, Vector};

    #[test]
    fn singular_values_sort_largest_first_with_nan_last() {
        // 40 values (past the standard sort's small-slice path) with NaN among them: NaN
        // taken as equal to every value made the sort panic
        let values: Vec<f64> = (0..40)
            .map(|i| {
                if i % 7 == 3 {
                    f64::NAN
                } else {
                    ((i * 13) % 40) as f64
                }
            })
            .collect();
        let k = values.len();
        let mut s = Vector::from_vec(values.clone());
        let (mut u, mut vt) = (Matrix::<f64>::new(2, k), Matrix::<f64>::new(k, 2));
        for j in 0..k {
            u[(0, j)] = j as f64; // column j of U follows value j
            vt[(j, 1)] = j as f64; // row j of Vt too
        }
        sort_svd(&mut s, &mut u, &mut vt);
        let numbers: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
        for i in 0..numbers.len() {
            // the i-th largest by counting, a naive model
            assert_eq!(numbers.iter().filter(|&&v| v > s[i]).count(), i);
        }
        assert!((numbers.len()..k).all(|i| s[i].is_nan()));
        for j in 0..k {
            let old = u[(0, j)] as usize;
            assert_eq!(vt[(j, 1)] as usize, old);
            assert!(s[j] == values[old] || (s[j].is_nan() && values[old].is_nan()));
        }
    }
}
