//! `gather_with_batch_dims`: TensorFlow's `tf.gather(params, indices, axis, batch_dims)`
//! for struct arrays with indices of any rank (dense or ragged) and any number of batch
//! dimensions.

use crate::array::{select_through, Array};
use crate::error::Error;
use crate::partition::{self, ranges_of, RowPartition};
use crate::structured::StructuredTensor;
use crate::tf_ops::push_checked_indices;
use crate::values::Values;

/// The flat index values as `i64` (`int32` widened), or the dtype error.
fn index_values(indices: &Array) -> Result<Vec<i64>, Error> {
    match indices.values() {
        Values::I64(v) => Ok(v.to_vec()),
        Values::I32(v) => Ok(v.iter().map(|&i| i64::from(i)).collect()),
        other => Err(Error::GatherIndicesDType {
            dtype: other.dtype(),
        }),
    }
}

impl StructuredTensor {
    /// TensorFlow's `tf.gather(params, indices, axis, batch_dims)` with `indices` an
    /// `int64` or `int32` array of any rank, dense or ragged.
    ///
    /// The first `batch_dims` dimensions of `indices` and of the struct are batch
    /// dimensions and must agree (sizes, and the row lengths of ragged ones); for each
    /// position of the struct's dimensions `0..axis`, the elements along `axis` are picked
    /// by the indices of its batch position. The result has the shape
    /// `shape[..axis] + indices.shape[batch_dims..] + shape[axis + 1..]` (rank
    /// `rank - 1 + rank(indices) - batch_dims`). A negative `axis` counts from the struct's
    /// rank, a negative `batch_dims` from the indices' rank. With `batch_dims = 0` and a
    /// vector of indices this is [`StructuredTensor::gather`]; with `batch_dims = 1` and
    /// rank-2 indices, [`StructuredTensor::gather_batched`].
    ///
    /// Errors (TensorFlow's): `batch_dims` outside `0..=rank(indices)`, not below the
    /// struct's rank, or above `axis`; batch dimensions that differ; indices of another
    /// dtype; an index outside its row (`indices[k] = i is not in [0, n)`, `k` counting
    /// the gathered elements in order).
    pub fn gather_with_batch_dims(
        &self,
        indices: &Array,
        axis: isize,
        batch_dims: isize,
    ) -> Result<StructuredTensor, Error> {
        let index_rank = indices.rank();
        let batch = if batch_dims < 0 {
            batch_dims + index_rank as isize
        } else {
            batch_dims
        };
        if batch < 0 || batch as usize > index_rank {
            return Err(Error::GatherBatchDimsRange {
                batch_dims,
                indices_rank: index_rank,
            });
        }
        let batch = batch as usize;
        if batch >= self.rank() {
            return Err(Error::GatherBatchDimsRank {
                batch_dims: batch,
                rank: self.rank(),
            });
        }
        let axis = crate::array::positive_axis(axis, self.rank(), "axis")?;
        if axis < batch {
            return Err(Error::GatherAxisInBatch {
                axis,
                batch_dims: batch,
            });
        }
        let values = index_values(indices)?;
        if index_rank == 0 {
            return self.gather_one(values[0], axis as isize);
        }
        self.check_batch_shape(indices, batch)?;
        let index_nrows = indices.nrows().unwrap_or(0);
        if axis == 0 {
            // No batch: the rows picked by every index, then the indices' own dimensions.
            let mut ids = Vec::with_capacity(values.len());
            let nrows = self.nrows().unwrap_or(0);
            for (position, &index) in values.iter().enumerate() {
                match usize::try_from(index) {
                    Ok(i) if i < nrows => ids.push(i),
                    _ => {
                        return Err(Error::GatherIndexOutOfRange {
                            position,
                            index,
                            size: nrows,
                        })
                    }
                }
            }
            let mut out = self.take_rows(&ranges_of(ids))?;
            for p in indices.row_partitions().iter().rev() {
                out = out.partition_outer_dimension(p)?;
            }
            return Ok(out);
        }
        // The indices below their batch dimensions: one row per batch position.
        let below: Vec<RowPartition> = if batch == 0 {
            let mut parts = vec![partition::uniform(index_nrows, 1)?];
            parts.extend_from_slice(indices.row_partitions());
            parts
        } else {
            indices.row_partitions()[batch - 1..].to_vec()
        };
        // (With `batch == rank(indices)` each batch position holds one index.)
        let n_batch = below.first().map_or(values.len(), RowPartition::nrows);
        // Where each batch position's index values start and end in `values`.
        let mut bounds: Vec<usize> = (0..=n_batch).collect();
        for p in &below {
            let s = p.row_splits();
            for b in bounds.iter_mut() {
                *b = s[*b] as usize;
            }
        }
        let batch_of = self.batch_positions(axis, batch);
        let splits = self.row_partitions()[axis - 1].row_splits();
        let mut ids = Vec::with_capacity(values.len());
        let mut position = 0usize;
        for (pos, &b) in batch_of.iter().enumerate() {
            let start = splits[pos] as usize;
            let len = splits[pos + 1] as usize - start;
            let mine = &values[bounds[b]..bounds[b + 1]];
            push_checked_indices(&mut ids, mine, start, len, &mut position)?;
        }
        // Each position repeats its batch position's index structure.
        let (structure, _) = select_through(&ranges_of(batch_of.iter().copied()), &below)?;
        let flat = self.merge_dims_unchecked(0, axis)?;
        let mut out = flat.take_rows(&ranges_of(ids))?;
        for p in structure.iter().rev() {
            out = out.partition_outer_dimension(p)?;
        }
        self.resplit_outer(out, axis - 1)
    }

    /// Checks that the first `batch` dimensions of `indices` are the struct's.
    fn check_batch_shape(&self, indices: &Array, batch: usize) -> Result<(), Error> {
        let mismatch = |axis| Error::GatherBatchShape {
            axis,
            indices_shape: indices.shape(),
            params_shape: self.shape(),
        };
        if batch == 0 {
            return Ok(());
        }
        if indices.nrows() != self.nrows() {
            return Err(mismatch(0));
        }
        for level in 0..batch - 1 {
            if !partition::same_rows(
                &indices.row_partitions()[level],
                &self.row_partitions()[level],
            ) {
                return Err(mismatch(level + 1));
            }
        }
        Ok(())
    }

    /// For each position of dimensions `0..axis` (flattened, `axis >= 1`), the position of
    /// dimensions `0..batch` it lies in (all 0 when `batch == 0`).
    fn batch_positions(&self, axis: usize, batch: usize) -> Vec<usize> {
        let mut batch_of: Vec<usize> = if batch == 0 {
            vec![0; self.nrows().unwrap_or(0)]
        } else {
            let n = match batch {
                1 => self.nrows().unwrap_or(0),
                _ => self.row_partitions()[batch - 2].nvals(),
            };
            (0..n).collect()
        };
        let first_level = batch.saturating_sub(1);
        for p in &self.row_partitions()[first_level..axis - 1] {
            let mut next = Vec::with_capacity(p.nvals());
            for (row, len) in partition::lengths(p).enumerate() {
                next.extend(std::iter::repeat_n(batch_of[row], len));
            }
            batch_of = next;
        }
        batch_of
    }
}
