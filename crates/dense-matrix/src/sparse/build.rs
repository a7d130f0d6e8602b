//! Kaldi's sparse-matrix builders: `SelectRows`, `AppendSparseMatrixRows`, the one-hot
//! constructors `SparseMatrix(indexes, dim, trans)` and `SparseMatrix(indexes, weights, dim,
//! trans)`, and `SetRandn(zero_prob)` of sparse vectors and matrices.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use super::{SparseMatrix, SparseVector};
use crate::error::{dim_mismatch, out_of_bounds, precondition};
use crate::{Error, Real, Trans, VectorBase};

impl<R: Real> SparseVector<R> {
    /// Kaldi's `SetRandn(zero_prob)`: each element is zero with probability `zero_prob`,
    /// else a standard normal draw from `rng`; the dimension stays.
    ///
    /// # Panics
    /// If `zero_prob` is not in `[0, 1]` (Kaldi asserts it).
    #[track_caller]
    pub fn set_randn(&mut self, zero_prob: f64, rng: &mut impl Rng) {
        check_probability(zero_prob);
        self.pairs.clear();
        for i in 0..self.dim {
            // Kaldi's WithProb(1 - zero_prob): keep the element
            if rng.random::<f64>() < 1.0 - zero_prob {
                let x: f64 = StandardNormal.sample(rng);
                self.pairs.push((i, R::from_f64(x)));
            }
        }
    }
}

#[track_caller]
fn check_probability(zero_prob: f64) {
    if !(0.0..=1.0).contains(&zero_prob) {
        precondition(&format!(
            "set_randn: zero_prob {zero_prob} is not a probability in [0, 1]"
        ));
    }
}

impl<R: Real> SparseMatrix<R> {
    /// Kaldi's `SetRandn(zero_prob)`: every row as [`SparseVector::set_randn`].
    ///
    /// # Panics
    /// If `zero_prob` is not in `[0, 1]`.
    #[track_caller]
    pub fn set_randn(&mut self, zero_prob: f64, rng: &mut impl Rng) {
        check_probability(zero_prob);
        for row in &mut self.rows {
            row.set_randn(zero_prob, rng);
        }
    }

    /// Kaldi's `SelectRows(row_indexes, smat_other)`: a matrix of the rows of `self` listed
    /// in `row_indexes` (repeats allowed), with `self`'s column count.
    ///
    /// # Panics
    /// If an index is negative or not below `num_rows()` (Kaldi asserts it).
    #[track_caller]
    pub fn select_rows(&self, row_indexes: &[i32]) -> SparseMatrix<R> {
        let rows = row_indexes
            .iter()
            .map(
                |&i| match usize::try_from(i).ok().and_then(|r| self.rows.get(r)) {
                    Some(row) => row.clone(),
                    None if i < 0 => precondition(&format!(
                        "select_rows: row index {i} is negative; a sparse matrix has rows 0..{}",
                        self.rows.len()
                    )),
                    None => out_of_bounds("row", i as usize, self.rows.len(), "sparse matrix"),
                },
            )
            .collect();
        SparseMatrix {
            cols: self.cols,
            rows,
        }
    }

    /// Kaldi's `AppendSparseMatrixRows(inputs)`: the rows of all `inputs`, in order, in one
    /// matrix (the inputs are consumed, as Kaldi's are emptied). Inputs without rows may have
    /// any column count, as in Kaldi; inputs with rows must agree
    /// ([`Error::AppendDim`]). With no rows at all the column count is the first input's
    /// (0 for no inputs).
    pub fn append_sparse_matrix_rows(inputs: Vec<SparseMatrix<R>>) -> Result<Self, Error> {
        let mut cols: Option<usize> = None;
        for (input, m) in inputs.iter().enumerate() {
            if m.rows.is_empty() {
                continue;
            }
            match cols {
                None => cols = Some(m.cols),
                Some(expected) if expected != m.cols => {
                    return Err(Error::AppendDim {
                        input,
                        cols: m.cols,
                        expected,
                    })
                }
                Some(_) => {}
            }
        }
        let cols = cols.unwrap_or_else(|| inputs.first().map_or(0, |m| m.cols));
        let total: usize = inputs.iter().map(|m| m.rows.len()).sum();
        let mut rows = Vec::with_capacity(total);
        for m in inputs {
            rows.extend(m.rows);
        }
        Ok(SparseMatrix { cols, rows })
    }

    /// Kaldi's `SparseMatrix(indexes, dim, trans)`: with [`Trans::NoTrans`], row `i` holds a
    /// single 1 at column `indexes[i]` (a negative index leaves the row empty, as Kaldi's
    /// `-1`), giving `indexes.len() x dim`; with [`Trans::Trans`], the transpose of that.
    /// An index `>= dim` is [`Error::SparseIndex`] naming its position.
    pub fn from_one_hot(indexes: &[i32], dim: usize, trans: Trans) -> Result<Self, Error> {
        Self::one_hot(indexes, |_| R::ONE, dim, trans)
    }

    /// Kaldi's `SparseMatrix(indexes, weights, dim, trans)`: as [`Self::from_one_hot`] with
    /// the value `weights[i]` in place of 1 (a zero weight is not stored, as Kaldi's
    /// `SparseVector` constructor drops zeros).
    ///
    /// # Panics
    /// If `weights.dim() != indexes.len()`.
    #[track_caller]
    pub fn from_one_hot_weighted(
        indexes: &[i32],
        weights: &VectorBase<R>,
        dim: usize,
        trans: Trans,
    ) -> Result<Self, Error> {
        if weights.dim() != indexes.len() {
            dim_mismatch(
                "from_one_hot_weighted",
                "weights dim",
                weights.dim(),
                "number of indexes",
                indexes.len(),
            );
        }
        let w = weights.data();
        Self::one_hot(indexes, |i| w[i], dim, trans)
    }

    fn one_hot(
        indexes: &[i32],
        weight: impl Fn(usize) -> R,
        dim: usize,
        trans: Trans,
    ) -> Result<Self, Error> {
        if let Some((element, &index)) = indexes
            .iter()
            .enumerate()
            .find(|&(_, &i)| i >= 0 && i as usize >= dim)
        {
            return Err(Error::SparseIndex {
                element,
                index: i64::from(index),
                dim,
                previous: None,
            });
        }
        let n = indexes.len();
        let entries = indexes
            .iter()
            .enumerate()
            .filter(|&(i, &c)| c >= 0 && weight(i) != R::ZERO)
            .map(|(i, &c)| (i, c as usize, weight(i)));
        match trans {
            Trans::NoTrans => {
                let mut rows = vec![SparseVector::new(dim); n];
                for (i, c, v) in entries {
                    rows[i].pairs.push((c, v));
                }
                Ok(SparseMatrix { cols: dim, rows })
            }
            Trans::Trans => {
                // row c lists the positions i whose index is c, in increasing order
                let mut rows = vec![SparseVector::new(n); dim];
                for (i, c, v) in entries {
                    rows[c].pairs.push((i, v));
                }
                Ok(SparseMatrix { cols: n, rows })
            }
        }
    }
}
