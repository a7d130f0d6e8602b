//! Packed symmetric ([`SpMatrix`]) and lower-triangular ([`TpMatrix`]) matrices in Kaldi's
//! layout: the lower triangle row by row, element `(i, j)` (`j <= i`) at `i (i + 1) / 2 + j`.
//!
//! That layout is BLAS's row-major lower packed storage (so `spmv`, `tpmv`, `tpsv` take it
//! as it is) and LAPACK's column-major upper packed storage of the transpose (so
//! `pptrf`, `tptri`, `sptrf`/`sptri` are called with `uplo = 'U'`).

use std::ops::{Index, IndexMut};
use std::os::raw::{c_char, c_int};

use rand_distr::Distribution;

use crate::blas::int;
use crate::decomp::{check_info, routine};
use crate::error::{out_of_bounds, precondition, shape_mismatch};
use crate::{Error, Matrix, MatrixBase, Position, Real, SymEig, Trans, VectorBase};

const UPLO_U: c_char = b'U' as c_char;
const DIAG_N: c_char = b'N' as c_char;

/// How `SpMatrix::from_mat` makes a symmetric matrix of a square one (Kaldi's
/// `SpCopyType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpCopyType {
    /// `(M + M^T) / 2` (Kaldi's `kTakeMean`, the default).
    #[default]
    #[doc(alias = "kTakeMean")]
    TakeMean,
    /// The lower triangle (Kaldi's `kTakeLower`).
    #[doc(alias = "kTakeLower")]
    TakeLower,
    /// The upper triangle (Kaldi's `kTakeUpper`).
    #[doc(alias = "kTakeUpper")]
    TakeUpper,
}

/// Offset of row `i` in the packed layout (`i (i + 1) / 2`), for `i < n` of a matrix
/// whose `packed_len_checked(n)` succeeded, so it cannot overflow.
fn packed_len(n: usize) -> usize {
    n * (n + 1) / 2
}

/// `n (n + 1) / 2` elements of an `n x n` packed matrix, checked: the count must neither
/// overflow `usize` nor exceed `isize::MAX` bytes.
fn packed_len_checked<R>(what: &'static str, n: usize) -> Result<usize, Error> {
    let overflow = Error::SizeOverflow {
        what,
        rows: n,
        cols: n,
    };
    // One of n, n + 1 is even: halve that one first so the product is exact.
    let n1 = n.checked_add(1).ok_or(overflow.clone())?;
    let len = if n.is_multiple_of(2) {
        (n / 2).checked_mul(n1)
    } else {
        n.checked_mul(n1 / 2)
    }
    .ok_or(overflow.clone())?;
    match len.checked_mul(std::mem::size_of::<R>()) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(len),
        _ => Err(overflow),
    }
}

/// The first NaN or infinite element of packed data, as [`Error::NotFinite`] with its
/// `(row, column)` in the lower triangle.
pub(crate) fn check_finite_packed<R: Real>(data: &[R], op: &'static str) -> Result<(), Error> {
    let Some(k) = data.iter().position(|x| !x.is_finite()) else {
        return Ok(());
    };
    // Row i starts at i (i + 1) / 2; find the row holding k without overflow.
    let mut row = 0;
    while packed_len(row + 1) <= k {
        row += 1;
    }
    Err(Error::NotFinite {
        op,
        position: Position::Matrix(row, k - packed_len(row)),
        value: data[k].to_f64(),
    })
}

/// A symmetric `n x n` matrix, lower triangle packed (Kaldi's `SpMatrix`).
#[derive(Debug, Clone, PartialEq)]
pub struct SpMatrix<R> {
    n: usize,
    data: Vec<R>,
}

/// A lower-triangular `n x n` matrix, packed (Kaldi's `TpMatrix`).
#[derive(Debug, Clone, PartialEq)]
pub struct TpMatrix<R> {
    n: usize,
    data: Vec<R>,
}

macro_rules! packed_common {
    ($ty:ident, $what:expr) => {
        impl<R: Real> $ty<R> {
            /// An `n x n` zero matrix.
            ///
            /// # Panics
            /// If `n (n + 1) / 2` elements overflow the address space.
            #[track_caller]
            pub fn new(n: usize) -> Self {
                match packed_len_checked::<R>(concat!(stringify!($ty), "::new"), n) {
                    Ok(len) => Self {
                        n,
                        data: vec![R::ZERO; len],
                    },
                    Err(e) => precondition(&e.to_string()),
                }
            }

            /// From packed data (`n (n + 1) / 2` elements, lower triangle by rows); any
            /// other length is an error, and so is an `n` whose packed length overflows.
            pub fn from_packed(n: usize, data: Vec<R>) -> Result<Self, Error> {
                let expected =
                    packed_len_checked::<R>(concat!(stringify!($ty), "::from_packed"), n)?;
                if data.len() != expected {
                    return Err(Error::LengthMismatch {
                        expected,
                        got: data.len(),
                    });
                }
                Ok(Self { n, data })
            }

            /// Number of rows (= columns).
            #[doc(alias = "NumRows")]
            pub fn num_rows(&self) -> usize {
                self.n
            }

            /// The packed elements.
            pub fn data(&self) -> &[R] {
                &self.data
            }

            /// The packed elements, mutable.
            pub fn data_mut(&mut self) -> &mut [R] {
                &mut self.data
            }

            /// The packed elements as a vector view (Kaldi's `SubVector(PackedMatrix)`).
            pub fn as_vector(&self) -> &VectorBase<R> {
                VectorBase::from_slice(&self.data)
            }

            /// Fills the packed elements with standard normal samples from `rng` (Kaldi's
            /// `SetRandn`; `Matrix::set_randn`'s convention).
            #[doc(alias = "SetRandn")]
            pub fn set_randn(&mut self, rng: &mut impl rand::Rng) {
                for v in self.data.iter_mut() {
                    let x: f64 = rand_distr::StandardNormal.sample(rng);
                    *v = R::from_f64(x);
                }
            }

            /// Multiplies every element by `alpha`.
            pub fn scale(&mut self, alpha: R) {
                self.data.iter_mut().for_each(|v| *v *= alpha);
            }

            /// Adds `alpha` to the diagonal.
            #[doc(alias = "AddToDiag")]
            pub fn add_to_diag(&mut self, alpha: R) {
                for i in 0..self.n {
                    self.data[packed_len(i) + i] += alpha;
                }
            }

            /// Sum of the diagonal.
            pub fn trace(&self) -> R {
                (0..self.n).map(|i| self.data[packed_len(i) + i]).sum()
            }

            #[track_caller]
            fn packed_index(&self, i: usize, j: usize) -> usize {
                if i >= self.n {
                    out_of_bounds("row", i, self.n, $what);
                }
                if j >= self.n {
                    out_of_bounds("column", j, self.n, $what);
                }
                packed_len(i) + j
            }
        }
    };
}

packed_common!(SpMatrix, "a packed symmetric matrix");
packed_common!(TpMatrix, "a packed triangular matrix");

impl<R: Real> SpMatrix<R> {
    /// A symmetric matrix from a square one (Kaldi's `SpMatrix(M, copy_type)`).
    ///
    /// # Panics
    /// If `m` is not square.
    #[track_caller]
    pub fn from_mat(m: &MatrixBase<R>, copy_type: SpCopyType) -> Self {
        if m.num_rows() != m.num_cols() {
            shape_mismatch(
                "SpMatrix::from_mat needs a square matrix",
                m.shape(),
                (m.num_rows(), m.num_rows()),
            );
        }
        let n = m.num_rows();
        let mut sp = Self::new(n);
        let half = R::from_f64(0.5);
        for i in 0..n {
            for j in 0..=i {
                sp.data[packed_len(i) + j] = match copy_type {
                    SpCopyType::TakeMean => half * (m[(i, j)] + m[(j, i)]),
                    SpCopyType::TakeLower => m[(i, j)],
                    SpCopyType::TakeUpper => m[(j, i)],
                };
            }
        }
        sp
    }

    /// The full symmetric matrix.
    pub fn to_matrix(&self) -> Matrix<R> {
        let mut m = Matrix::new(self.n, self.n);
        for i in 0..self.n {
            for j in 0..=i {
                let v = self.data[packed_len(i) + j];
                m[(i, j)] = v;
                m[(j, i)] = v;
            }
        }
        m
    }

    /// Inverts in place by Bunch-Kaufman (LAPACK `sptrf` + `sptri`; Kaldi's `Invert`); a
    /// NaN or infinite element is [`Error::NotFinite`] and leaves the matrix unchanged.
    #[doc(alias("inverse", "inv"))]
    pub fn invert(&mut self) -> Result<(), Error> {
        if self.n == 0 {
            return Ok(());
        }
        check_finite_packed(&self.data, "SpMatrix::invert")?;
        let ln = int(self.n);
        let mut ipiv = vec![0 as c_int; self.n];
        let mut info: c_int = 0;
        // SAFETY: `data.len() == n (n + 1) / 2`, the invariant `new` / `from_packed` check
        // with `packed_len_checked` (nothing resizes it), and `int` checked `n` fits a c_int.
        unsafe {
            R::lapack_sptrf(
                UPLO_U,
                &ln,
                self.data.as_mut_ptr(),
                ipiv.as_mut_ptr(),
                &mut info,
            )
        };
        check_info(
            info,
            routine::<R>("ssptrf", "dsptrf"),
            "a diagonal block of D is exactly zero: the matrix is singular",
        )?;
        let mut work = vec![R::ZERO; self.n];
        // SAFETY: as above; `ipiv` and `work` hold `n` elements, as sptri reads.
        unsafe {
            R::lapack_sptri(
                UPLO_U,
                &ln,
                self.data.as_mut_ptr(),
                ipiv.as_ptr(),
                work.as_mut_ptr(),
                &mut info,
            )
        };
        check_info(
            info,
            routine::<R>("ssptri", "dsptri"),
            "the matrix is singular",
        )
    }

    /// `ln det` of a positive definite matrix via its Cholesky factor (Kaldi's
    /// `LogPosDefDet`); an error if it is not positive definite.
    #[doc(alias = "LogPosDefDet")]
    pub fn log_pos_def_det(&self) -> Result<R, Error> {
        let l = TpMatrix::cholesky(self)?;
        let sum: f64 = (0..self.n)
            .map(|i| l.data[packed_len(i) + i].to_f64().ln())
            .sum();
        Ok(R::from_f64(2.0 * sum))
    }

    /// Eigendecomposition `self = P diag(s) P^T`, eigenvalues ascending (LAPACK `syevd`).
    pub fn eig(&self) -> Result<SymEig<R>, Error> {
        self.to_matrix().sym_eig()
    }
}

impl<R: Real> TpMatrix<R> {
    /// The lower triangle of a square matrix (Kaldi's `TpMatrix::CopyFromMat`).
    ///
    /// # Panics
    /// If `m` is not square.
    #[track_caller]
    pub fn from_mat(m: &MatrixBase<R>) -> Self {
        if m.num_rows() != m.num_cols() {
            shape_mismatch(
                "TpMatrix::from_mat needs a square matrix",
                m.shape(),
                (m.num_rows(), m.num_rows()),
            );
        }
        let n = m.num_rows();
        let mut tp = Self::new(n);
        for i in 0..n {
            tp.data[packed_len(i)..packed_len(i) + i + 1].copy_from_slice(&m.row_data(i)[..=i]);
        }
        tp
    }

    /// The full matrix (zeros above the diagonal).
    pub fn to_matrix(&self) -> Matrix<R> {
        let mut m = Matrix::new(self.n, self.n);
        for i in 0..self.n {
            m.row_data_mut(i)[..=i]
                .copy_from_slice(&self.data[packed_len(i)..packed_len(i) + i + 1]);
        }
        m
    }

    /// Element `(i, j)`: zero above the diagonal.
    ///
    /// # Panics
    /// If out of range.
    #[track_caller]
    pub fn get(&self, i: usize, j: usize) -> R {
        if j > i && i < self.n && j < self.n {
            return R::ZERO;
        }
        self.data[self.packed_index(i, j)]
    }

    /// The Cholesky factor `L` of a positive definite `sp = L L^T` (LAPACK `pptrf`;
    /// Kaldi's `TpMatrix::Cholesky`).
    pub fn cholesky(sp: &SpMatrix<R>) -> Result<Self, Error> {
        check_finite_packed(&sp.data, "TpMatrix::cholesky")?;
        let mut data = sp.data.clone();
        if sp.n > 0 {
            let mut info: c_int = 0;
            // SAFETY: `data.len() == n (n + 1) / 2`, the invariant `new` / `from_packed`
            // check with `packed_len_checked`, and `int` checked `n` fits a c_int.
            unsafe { R::lapack_pptrf(UPLO_U, &int(sp.n), data.as_mut_ptr(), &mut info) };
            check_info(
                info,
                routine::<R>("spptrf", "dpptrf"),
                "a leading minor is not positive definite",
            )?;
        }
        Ok(Self { n: sp.n, data })
    }

    /// Inverts in place (LAPACK `tptri`; Kaldi's `TpMatrix::Invert`); a NaN or infinite
    /// element is [`Error::NotFinite`] and leaves the matrix unchanged.
    #[doc(alias("inverse", "inv"))]
    pub fn invert(&mut self) -> Result<(), Error> {
        if self.n == 0 {
            return Ok(());
        }
        check_finite_packed(&self.data, "TpMatrix::invert")?;
        let mut info: c_int = 0;
        // SAFETY: `data.len() == n (n + 1) / 2` (checked by `new` / `from_packed`), and `int`
        // checked `n` fits a c_int.
        unsafe {
            R::lapack_tptri(
                UPLO_U,
                DIAG_N,
                &int(self.n),
                self.data.as_mut_ptr(),
                &mut info,
            )
        };
        check_info(
            info,
            routine::<R>("stptri", "dtptri"),
            "a diagonal element is exactly zero: the matrix is singular",
        )
    }
}

impl<R: Real> Index<(usize, usize)> for SpMatrix<R> {
    type Output = R;
    /// Element `(i, j)`, either triangle.
    #[track_caller]
    fn index(&self, (i, j): (usize, usize)) -> &R {
        let (a, b) = if j > i { (j, i) } else { (i, j) };
        &self.data[self.packed_index(a, b)]
    }
}

impl<R: Real> IndexMut<(usize, usize)> for SpMatrix<R> {
    /// Element `(i, j)`, either triangle (both are the same storage).
    #[track_caller]
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut R {
        let (a, b) = if j > i { (j, i) } else { (i, j) };
        let k = self.packed_index(a, b);
        &mut self.data[k]
    }
}

impl<R: Real> Index<(usize, usize)> for TpMatrix<R> {
    type Output = R;
    /// Element `(i, j)` on or below the diagonal; use [`TpMatrix::get`] for any element.
    #[track_caller]
    fn index(&self, (i, j): (usize, usize)) -> &R {
        if j > i {
            precondition(&format!(
                "element ({i}, {j}) is above the diagonal of a triangular matrix"
            ));
        }
        &self.data[self.packed_index(i, j)]
    }
}

impl<R: Real> IndexMut<(usize, usize)> for TpMatrix<R> {
    #[track_caller]
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut R {
        if j > i {
            precondition(&format!(
                "element ({i}, {j}) is above the diagonal of a triangular matrix"
            ));
        }
        let k = self.packed_index(i, j);
        &mut self.data[k]
    }
}

impl<R: Real> VectorBase<R> {
    /// `self = beta * self + alpha * S v` (BLAS spmv; Kaldi's `AddSpVec`).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "AddSpVec")]
    pub fn add_sp_vec(&mut self, alpha: R, sp: &SpMatrix<R>, v: &VectorBase<R>, beta: R) {
        self.check_same_dim("add_sp_vec (rows of S)", sp.n);
        v.check_same_dim("add_sp_vec (cols of S)", sp.n);
        if beta == R::ZERO {
            self.set_zero();
        }
        if sp.n == 0 {
            return;
        }
        // SAFETY: `sp.data` holds `n (n + 1) / 2` elements (checked at construction) and the
        // `check_same_dim` calls above made both vectors `n` long.
        unsafe {
            R::cblas_spmv_lower(
                int(sp.n),
                alpha,
                sp.data.as_ptr(),
                v.data().as_ptr(),
                1,
                beta,
                self.data_mut().as_mut_ptr(),
                1,
            )
        }
    }

    /// `self = op(T) self` (BLAS tpmv; Kaldi's `MulTp`).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "MulTp")]
    pub fn mul_tp(&mut self, tp: &TpMatrix<R>, trans: Trans) {
        self.check_same_dim("mul_tp", tp.n);
        if tp.n == 0 {
            return;
        }
        // SAFETY: `tp.data` holds `n (n + 1) / 2` elements (checked at construction) and
        // `check_same_dim` above made the vector `n` long.
        unsafe {
            R::cblas_tpmv_lower(
                trans,
                int(tp.n),
                tp.data.as_ptr(),
                self.data_mut().as_mut_ptr(),
                1,
            )
        }
    }

    /// `self = op(T)^-1 self` (BLAS tpsv; Kaldi's `Solve`).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    pub fn solve(&mut self, tp: &TpMatrix<R>, trans: Trans) {
        self.check_same_dim("solve", tp.n);
        if tp.n == 0 {
            return;
        }
        // SAFETY: `tp.data` holds `n (n + 1) / 2` elements (checked at construction) and
        // `check_same_dim` above made the vector `n` long.
        unsafe {
            R::cblas_tpsv_lower(
                trans,
                int(tp.n),
                tp.data.as_ptr(),
                self.data_mut().as_mut_ptr(),
                1,
            )
        }
    }

    /// `self = beta * self + alpha * op(T) v` (Kaldi's `AddTpVec`).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "AddTpVec")]
    pub fn add_tp_vec(
        &mut self,
        alpha: R,
        tp: &TpMatrix<R>,
        trans: Trans,
        v: &VectorBase<R>,
        beta: R,
    ) {
        self.check_same_dim("add_tp_vec", tp.n);
        let mut tmp = v.to_vector();
        tmp.mul_tp(tp, trans);
        if beta == R::ZERO {
            self.set_zero();
        } else {
            self.scale(beta);
        }
        self.add_vec(alpha, &tmp);
    }
}
