//! Shared helpers of the integration tests: padded random matrices (NaN in the stride
//! padding, odd strides), a `Vec<Vec<f64>>` model, and relative-Frobenius comparisons.
#![allow(dead_code, clippy::needless_range_loop)]

use dense_matrix::{
    Matrix, MatrixBase, MatrixView, MatrixViewMut, Real, SparseMatrix, SparseVector, Vector,
    VectorBase,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The model: a dense row-major `Vec<Vec<f64>>`.
pub type Model = Vec<Vec<f64>>;

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// A matrix living in a buffer whose stride padding is NaN.
pub struct Padded<R> {
    pub buf: Vec<R>,
    pub rows: usize,
    pub cols: usize,
    pub stride: usize,
}

impl<R: Real> Padded<R> {
    /// Random `rows x cols` (both zero or both positive) with a random stride
    /// `cols + 0..3`, values uniform in [-1, 1), NaN in the padding.
    pub fn random(rng: &mut StdRng, rows: usize, cols: usize) -> Self {
        let stride = cols + rng.random_range(0..4);
        let mut buf = vec![R::NAN; rows * stride];
        for r in 0..rows {
            for c in 0..cols {
                buf[r * stride + c] = R::from_f64(rng.random::<f64>() * 2.0 - 1.0);
            }
        }
        Self {
            buf,
            rows,
            cols,
            stride,
        }
    }

    pub fn from_model(rng: &mut StdRng, m: &Model) -> Self {
        let rows = m.len();
        let cols = m.first().map_or(0, |r| r.len());
        let mut p = Self::random(rng, rows, cols);
        for r in 0..rows {
            for c in 0..cols {
                p.buf[r * p.stride + c] = R::from_f64(m[r][c]);
            }
        }
        p
    }

    pub fn view(&self) -> MatrixView<'_, R> {
        MatrixView::from_slice(&self.buf, self.rows, self.cols, self.stride).unwrap()
    }

    pub fn view_mut(&mut self) -> MatrixViewMut<'_, R> {
        MatrixViewMut::from_slice(&mut self.buf, self.rows, self.cols, self.stride).unwrap()
    }

    /// True if every padding element is still NaN (nothing wrote into it).
    pub fn padding_untouched(&self) -> bool {
        (0..self.rows)
            .all(|r| (self.cols..self.stride).all(|c| self.buf[r * self.stride + c].is_nan()))
    }
}

pub fn model_of<R: Real>(m: &MatrixBase<R>) -> Model {
    m.rows()
        .map(|row| row.iter().map(|v| v.to_f64()).collect())
        .collect()
}

pub fn vec_model<R: Real>(v: &VectorBase<R>) -> Vec<f64> {
    v.data().iter().map(|x| x.to_f64()).collect()
}

pub fn random_vector<R: Real>(rng: &mut StdRng, n: usize) -> Vector<R> {
    Vector::from_vec(
        (0..n)
            .map(|_| R::from_f64(rng.random::<f64>() * 2.0 - 1.0))
            .collect(),
    )
}

pub fn random_matrix<R: Real>(rng: &mut StdRng, rows: usize, cols: usize) -> Matrix<R> {
    Padded::<R>::random(rng, rows, cols).view().to_matrix()
}

pub fn transpose(m: &Model) -> Model {
    let rows = m.len();
    let cols = m.first().map_or(0, |r| r.len());
    (0..cols)
        .map(|c| (0..rows).map(|r| m[r][c]).collect())
        .collect()
}

/// Kahan-summed naive product.
pub fn matmul(a: &Model, b: &Model) -> Model {
    let m = a.len();
    let k = b.len();
    let n = b.first().map_or(0, |r| r.len());
    let mut out = vec![vec![0.0; n]; m];
    for i in 0..m {
        for j in 0..n {
            let (mut sum, mut comp) = (0.0f64, 0.0f64);
            for l in 0..k {
                let y = a[i][l] * b[l][j] - comp;
                let t = sum + y;
                comp = (t - sum) - y;
                sum = t;
            }
            out[i][j] = sum;
        }
    }
    out
}

pub fn frob(a: &Model) -> f64 {
    a.iter().flatten().map(|x| x * x).sum::<f64>().sqrt()
}

/// `||got - want||_F / max(||want||_F, 1)`; panics on a shape mismatch.
#[track_caller]
pub fn rel_err(got: &Model, want: &Model) -> f64 {
    assert_eq!(got.len(), want.len(), "row count");
    let mut diff = 0.0;
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.len(), w.len(), "column count");
        for (x, y) in g.iter().zip(w) {
            diff += (x - y).powi(2);
        }
    }
    diff.sqrt() / frob(want).max(1.0)
}

/// The tolerance for precision `R`.
pub fn tol<R: Real>() -> f64 {
    if R::NAME == "f32" {
        2e-5
    } else {
        1e-12
    }
}

#[track_caller]
pub fn assert_close<R: Real>(got: &Model, want: &Model, what: &str) {
    let e = rel_err(got, want);
    assert!(
        e <= tol::<R>(),
        "{what} ({}): relative error {e:e}",
        R::NAME
    );
}

#[track_caller]
pub fn assert_vec_close<R: Real>(got: &VectorBase<R>, want: &[f64], what: &str) {
    let e = rel_err(&vec![vec_model(got)], &vec![want.to_vec()]);
    assert!(
        e <= tol::<R>(),
        "{what} ({}): relative error {e:e}",
        R::NAME
    );
}

/// Random legal shape: both zero sometimes, else 1..=max.
pub fn shape(rng: &mut StdRng, max: usize) -> (usize, usize) {
    if rng.random_range(0..8) == 0 {
        (0, 0)
    } else {
        (rng.random_range(1..=max), rng.random_range(1..=max))
    }
}

/// A sparse matrix holding the non-zeros of a dense model (zeros not stored), built pair by
/// pair through `from_pairs` / `from_rows`.
pub fn smat_of<R: Real>(m: &Model, cols: usize) -> SparseMatrix<R> {
    let rows = m
        .iter()
        .map(|row| {
            let pairs = row
                .iter()
                .enumerate()
                .filter(|(_, &v)| v != 0.0)
                .map(|(i, &v)| (i, R::from_f64(v)))
                .collect();
            SparseVector::from_pairs(cols, pairs).unwrap()
        })
        .collect();
    SparseMatrix::from_rows(cols, rows).unwrap()
}

/// A model with about a third of its elements non-zero (quarters in -2..2: exact in f32).
pub fn random_sparse_model(g: &mut StdRng, rows: usize, cols: usize) -> Model {
    (0..rows)
        .map(|_| {
            (0..cols)
                .map(|_| {
                    if g.random_range(0..3) == 0 {
                        f64::from(g.random_range(-8i32..8)) / 4.0
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect()
}
