//! Kaldi's `ComputePca` (`matrix-functions.h`): principal directions of the rows of a data
//! matrix, without mean removal (Kaldi leaves centring to the caller).
//!
//! With `N` points of dimension `D` in the rows of `X` and `G` directions asked for (the
//! rows of `U`):
//! - `D < N` ("conventional" PCA): the eigenvectors of the `D x D` scatter `X^T X`, the
//!   largest first, become the rows of `U`; `A = X U^T`.
//! - `D >= N` ("inner-product" PCA): the eigenvectors `v_g` of the `N x N` Gram matrix
//!   `X X^T`, with eigenvalues `l_g`, give `U_g = X^T v_g / sqrt(l_g)` and
//!   `A[n][g] = sqrt(l_g) v_g[n]`; a zero eigenvalue gives the unit vector `e_g`, and the
//!   rows of `U` are orthogonalised at the end, as in Kaldi.
//!
//! Kaldi's inexact route (`exact = false`) takes the top `G` eigenpairs with
//! `SpMatrix::TopEigs`, a randomised Lanczos method. Here both routes take the full
//! symmetric eigendecomposition (LAPACK `syevd`), which is exact and, for the dimensions
//! PCA is used at, cheaper than the products that form the scatter matrix.

use rand::SeedableRng;

use crate::error::{dim_mismatch, shape_mismatch};
use crate::{Error, Matrix, MatrixBase, Real, Trans, Vector};

/// Kaldi's `ComputePca(X, &U, &A, print_eigs, exact)`: fills the rows of `u` (`G x D`)
/// with the top `G` principal directions of the rows of `x` (`N x D`, not centred) and,
/// if given, `a` (`N x G`) with the projections `X U^T`. Returns the eigenvalues of the
/// scatter (`X^T X` if `D < N`, else `X X^T`; negative ones set to zero in the second
/// case), largest first; `print_eigs` also prints them to stderr, as Kaldi logs them.
/// `exact = false` takes the exact route too (see the module documentation).
///
/// # Errors
/// [`Error::NotFinite`] if `x` holds a NaN or infinity (found in the scatter matrix), or
/// [`Error::Lapack`] if the eigensolver fails.
///
/// # Panics
/// If `u.num_cols() != D`, `G > min(N, D)`, or `a` is not `N x G`.
#[track_caller]
#[doc(alias = "ComputePca")]
pub fn compute_pca<R: Real>(
    x: &MatrixBase<R>,
    u: &mut MatrixBase<R>,
    a: Option<&mut MatrixBase<R>>,
    print_eigs: bool,
    exact: bool,
) -> Result<Vector<R>, Error> {
    let (n, d) = x.shape();
    let g = u.num_rows();
    if u.num_cols() != d && g != 0 {
        dim_mismatch("compute_pca", "U's columns", u.num_cols(), "X's columns", d);
    }
    if g > n || g > d {
        shape_mismatch("compute_pca (U vs X: G <= min(N, D))", u.shape(), x.shape());
    }
    if let Some(a) = &a {
        if a.shape() != (n, g) {
            shape_mismatch("compute_pca (A vs N x G)", a.shape(), (n, g));
        }
    }
    let _ = exact; // both routes are exact here
    if d < n {
        let mut scatter = Matrix::new(d, d);
        scatter.sym_add_mat2(R::ONE, x, Trans::Trans, R::ZERO);
        let eig = scatter.sym_eig()?;
        // syevd sorts ascending: the largest eigenvalue is the last column
        let l = Vector::from_vec(eig.s.data().iter().rev().copied().collect());
        for row in 0..g {
            u.row_mut(row).copy_col_from_mat(&eig.p, d - 1 - row);
        }
        if print_eigs {
            eprintln!("PCA eigenvalues are {l}");
        }
        if let Some(a) = a {
            if g > 0 {
                a.add_mat_mat(R::ONE, x, Trans::NoTrans, u, Trans::Trans, R::ZERO);
            }
        }
        Ok(l)
    } else {
        let mut gram = Matrix::new(n, n);
        gram.sym_add_mat2(R::ONE, x, Trans::NoTrans, R::ZERO);
        let eig = gram.sym_eig()?;
        let l = Vector::from_vec(
            eig.s
                .data()
                .iter()
                .rev()
                .map(|&v| if v < R::ZERO { R::ZERO } else { v })
                .collect(),
        );
        // an eigenvalue at the Gram matrix's roundoff level (below N ulps of the largest)
        // is a zero that LAPACK could not resolve: dividing by its root would turn noise
        // into a direction, so it counts as zero (Kaldi tests `l(g) != 0.0` only)
        let roundoff =
            l.data().first().copied().unwrap_or(R::ZERO) * R::from_f64(n as f64) * R::EPSILON;
        let mut l = l;
        for v in l.data_mut() {
            if *v <= roundoff {
                *v = R::ZERO;
            }
        }
        let mut a = a;
        for row in 0..g {
            let col = n - 1 - row;
            let mut v = Vector::new(n);
            v.copy_col_from_mat(&eig.p, col);
            let lg = l[row];
            let sqrt_lg = lg.sqrt();
            if lg != R::ZERO {
                u.row_mut(row)
                    .add_mat_vec(R::ONE / sqrt_lg, x, Trans::Trans, &v, R::ZERO);
            } else {
                u.row_mut(row).set_zero();
                u[(row, row)] = R::ONE;
            }
            if let Some(a) = a.as_deref_mut() {
                for point in 0..n {
                    a[(point, row)] = sqrt_lg * v[point];
                }
            }
        }
        // the sort above put zero eigenvalues last, so their arbitrary unit rows are the
        // ones Gram-Schmidt replaces; a fixed seed keeps the result reproducible
        if g > 0 {
            u.orthogonalize_rows(&mut rand::rngs::StdRng::seed_from_u64(0x9ca));
        }
        if print_eigs {
            eprintln!("(inner-product) PCA eigenvalues are {l}");
        }
        Ok(l)
    }
}
