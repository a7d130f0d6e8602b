//! `Array`: a dense or ragged array of any `DType` (TensorFlow's `Tensor`
//! and `RaggedTensor`), stored as flat values under a stack of row partitions.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::error::{Error, ShapeDisplay};
use crate::partition::{self, RowPartition};
use crate::validity::Validity;
use crate::values::{DType, Scalar, Values};

/// A leaf field value: rank `r >= 0`, `nrows` rows (rank >= 1), `r - 1` row partitions
/// (uniform ones are TensorFlow's dense dimensions, the others ragged) and flat values.
///
/// **Invariant:** rank 0 holds exactly one value and no partitions; rank 1 holds `nrows`
/// values; rank `r >= 2` has `partitions[0].nrows() == nrows`, each partition's `nvals`
/// equals the next one's `nrows`, and the last `nvals` equals the number of values.
#[derive(Clone)]
pub struct Array {
    rank: usize,
    nrows: usize,
    partitions: Vec<RowPartition>,
    values: Arc<Values>,
    /// The row partitions' integer type as reported (`int32` or `int64`; TensorFlow's
    /// `row_splits.dtype`); the partitions themselves always hold `i32` offsets.
    shape_dtype: DType,
    /// Which flat values hold a value (`None`: all of them, the array is not nullable);
    /// as long as `values` when present.
    validity: Option<Arc<Validity>>,
}

impl Array {
    /// A rank-0 array holding one value.
    pub fn scalar(value: Scalar) -> Array {
        let values = match value {
            Scalar::I64(v) => Values::I64(vec![v].into()),
            Scalar::F64(v) => Values::F64(vec![v].into()),
            Scalar::Bool(v) => Values::Bool(vec![v]),
            Scalar::Str(v) => Values::Str(std::iter::once(v).collect()),
            Scalar::I32(v) => Values::I32(vec![v].into()),
            Scalar::F32(v) => Values::F32(vec![v].into()),
            Scalar::U8(v) => Values::U8(vec![v].into()),
            Scalar::Bytes(v) => Values::Bytes(std::iter::once(v).collect()),
        };
        Array {
            rank: 0,
            nrows: 1,
            partitions: Vec::new(),
            values: Arc::new(values),
            shape_dtype: DType::I32,
            validity: None,
        }
    }

    /// A rank-1 (dense) array of the given values.
    pub fn from_values(values: Values) -> Array {
        Array {
            rank: 1,
            nrows: values.len(),
            partitions: Vec::new(),
            values: Arc::new(values),
            shape_dtype: DType::I32,
            validity: None,
        }
    }

    /// A rank-2 ragged array: row `i` holds `values[splits[i]..splits[i + 1]]`.
    pub fn from_row_splits(values: Values, row_splits: Vec<i32>) -> Result<Array, Error> {
        let p = partition::from_splits(row_splits)?;
        Array::from_partitions(p.nrows(), vec![p], values)
    }

    /// A rank-2 ragged array from row lengths.
    pub fn from_row_lengths(values: Values, row_lengths: &[usize]) -> Result<Array, Error> {
        let p = partition::from_lengths(row_lengths.iter().copied())?;
        Array::from_partitions(p.nrows(), vec![p], values)
    }

    /// A dense array of the given shape (row-major values); uniform partitions.
    pub fn dense(shape: &[usize], values: Values) -> Result<Array, Error> {
        if shape.is_empty() {
            if values.len() != 1 {
                return Err(Error::ValuesLength {
                    expected: 1,
                    got: values.len(),
                });
            }
            return Ok(Array {
                rank: 0,
                nrows: 1,
                partitions: Vec::new(),
                values: Arc::new(values),
                shape_dtype: DType::I32,
                validity: None,
            });
        }
        let mut partitions = Vec::with_capacity(shape.len() - 1);
        let mut rows = shape[0];
        for &len in &shape[1..] {
            partitions.push(partition::uniform(len, rows)?);
            rows = rows
                .checked_mul(len)
                .ok_or_else(|| Error::InvalidPartition {
                    what: format!("shape {shape:?} overflows"),
                })?;
        }
        Array::from_partitions(shape[0], partitions, values)
    }

    /// An array of rank `partitions.len() + 1` with `nrows` rows, checking that the
    /// partitions chain and that the number of values matches.
    pub fn from_partitions(
        nrows: usize,
        partitions: Vec<RowPartition>,
        values: Values,
    ) -> Result<Array, Error> {
        let mut rows = nrows;
        for (k, p) in partitions.iter().enumerate() {
            if p.nrows() != rows {
                return Err(Error::LayerMismatch {
                    axis: k + 1,
                    expected: rows,
                    got: p.nrows(),
                });
            }
            rows = p.nvals();
        }
        if values.len() != rows {
            return Err(Error::ValuesLength {
                expected: rows,
                got: values.len(),
            });
        }
        Ok(Array {
            rank: partitions.len() + 1,
            nrows,
            partitions,
            values: Arc::new(values),
            shape_dtype: DType::I32,
            validity: None,
        })
    }

    /// Internal constructor; the caller guarantees the invariant.
    pub(crate) fn from_parts_unchecked(
        rank: usize,
        nrows: usize,
        partitions: Vec<RowPartition>,
        values: Arc<Values>,
    ) -> Array {
        debug_assert_eq!(rank, if rank == 0 { 0 } else { partitions.len() + 1 });
        Array {
            rank,
            nrows,
            partitions,
            values,
            shape_dtype: DType::I32,
            validity: None,
        }
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Size of the outer dimension (`None` at rank 0).
    pub fn nrows(&self) -> Option<usize> {
        (self.rank > 0).then_some(self.nrows)
    }

    /// The element dtype.
    pub fn dtype(&self) -> DType {
        self.values.dtype()
    }

    /// The flat values (every element, in row-major order).
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// The flat values' shared handle (Arrow buffers keep it alive instead of copying).
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn values_arc(&self) -> &Arc<Values> {
        &self.values
    }

    /// The row partitions' integer type as TensorFlow reports it (`row_splits.dtype`):
    /// `int32` (the default) or `int64`. The partitions hold `i32` offsets either way; the
    /// dtype decides what they are reported as and what Arrow gets (`List` / `LargeList`).
    pub fn shape_dtype(&self) -> DType {
        self.shape_dtype
    }

    /// The same array with row partitions reported as `dtype` (TensorFlow's
    /// `RaggedTensor.with_row_splits_dtype`; only `int32` and `int64`, else
    /// `Error::ShapeDType`). Nothing is copied.
    pub fn with_shape_dtype(&self, dtype: DType) -> Result<Array, Error> {
        crate::dynamic_shape::check_shape_dtype(dtype)?;
        let mut out = self.clone();
        out.shape_dtype = dtype;
        Ok(out)
    }

    /// The shape dtype this array asks of a struct holding it (TensorFlow's
    /// `_field_shape_dtype`): its own when it has a ragged dimension, none when dense.
    pub(crate) fn shape_dtype_claim(&self) -> Option<DType> {
        (!self.is_dense()).then_some(self.shape_dtype)
    }

    /// The `rank - 1` row partitions, outermost first.
    pub fn row_partitions(&self) -> &[RowPartition] {
        &self.partitions
    }

    /// The static shape: `[nrows, d1, ...]` where a ragged dimension is `None`.
    pub fn shape(&self) -> Vec<Option<usize>> {
        if self.rank == 0 {
            return Vec::new();
        }
        let mut shape = Vec::with_capacity(self.rank);
        shape.push(Some(self.nrows));
        shape.extend(self.partitions.iter().map(|p| p.uniform_row_length()));
        shape
    }

    /// The array's shape as a ragged-core `RaggedShape` (rank >= 2), sharing its partitions.
    pub fn ragged_shape(&self) -> Option<ragged_core::RaggedShape> {
        ragged_core::RaggedShape::from_layers(self.partitions.clone()).ok()
    }

    /// The array as a ragged-core `Ragged<i64>` (rank >= 2, dtype `int64`), sharing its
    /// partitions; the values are copied.
    pub fn to_ragged_i64(&self) -> Option<ragged_core::Ragged<i64>> {
        match &*self.values {
            Values::I64(v) => ragged_core::Ragged::try_new(self.ragged_shape()?, v.to_vec()).ok(),
            _ => None,
        }
    }

    /// The array as a ragged-core `Ragged<f64>` (rank >= 2, dtype `float64`), sharing its
    /// partitions; the values are copied.
    pub fn to_ragged_f64(&self) -> Option<ragged_core::Ragged<f64>> {
        match &*self.values {
            Values::F64(v) => ragged_core::Ragged::try_new(self.ragged_shape()?, v.to_vec()).ok(),
            _ => None,
        }
    }

    /// True when every dimension is uniform (TensorFlow would hold it as a `Tensor`).
    pub fn is_dense(&self) -> bool {
        self.partitions
            .iter()
            .all(|p| p.uniform_row_length().is_some())
    }

    /// The same shape with new flat values (same count; the dtype may change).
    pub fn with_values(&self, values: Values) -> Result<Array, Error> {
        if values.len() != self.values.len() {
            return Err(Error::ValuesLength {
                expected: self.values.len(),
                got: values.len(),
            });
        }
        Ok(Array {
            rank: self.rank,
            nrows: self.nrows,
            partitions: self.partitions.clone(),
            values: Arc::new(values),
            shape_dtype: self.shape_dtype,
            validity: self.validity.clone(),
        })
    }

    /// Applies `f` to every `f64` element (an `int64` array is converted to `f64` first).
    pub fn map_f64(&self, f: impl Fn(f64) -> f64) -> Result<Array, Error> {
        let mapped = match &*self.values {
            Values::F64(v) => v.iter().map(|&x| f(x)).collect(),
            Values::I64(v) => v.iter().map(|&x| f(x as f64)).collect(),
            other => {
                return Err(Error::DTypeMismatch {
                    expected: DType::F64,
                    got: other.dtype(),
                })
            }
        };
        self.with_values(Values::F64(mapped))
    }

    /// Applies `f` to every `i64` element.
    pub fn map_i64(&self, f: impl Fn(i64) -> i64) -> Result<Array, Error> {
        match &*self.values {
            Values::I64(v) => self.with_values(Values::I64(v.iter().map(|&x| f(x)).collect())),
            other => Err(Error::DTypeMismatch {
                expected: DType::I64,
                got: other.dtype(),
            }),
        }
    }

    /// Which flat values hold a value: `None` when the array is not nullable (every value
    /// is valid), else one bit per flat value.
    pub fn validity(&self) -> Option<&Validity> {
        self.validity.as_deref()
    }

    /// True when the array carries a validity bitmap (it may still have no null).
    pub fn is_nullable(&self) -> bool {
        self.validity.is_some()
    }

    /// The number of null flat values.
    pub fn null_count(&self) -> usize {
        self.validity.as_ref().map_or(0, |v| v.null_count())
    }

    /// Whether flat value `i` holds a value (panics when `i` is out of range).
    pub fn is_valid(&self, i: usize) -> bool {
        match &self.validity {
            Some(v) => v.is_valid(i),
            None => {
                if i >= self.values.len() {
                    crate::error::index_panic("value", i, self.values.len());
                }
                true
            }
        }
    }

    /// The same array with a validity bitmap over its flat values (`None` makes it not
    /// nullable); a bitmap of another length is `Error::ValuesLength`. The values under a
    /// null are kept but never read.
    pub fn with_validity(&self, validity: Option<Validity>) -> Result<Array, Error> {
        if let Some(v) = &validity {
            if v.len() != self.values.len() {
                return Err(Error::ValuesLength {
                    expected: self.values.len(),
                    got: v.len(),
                });
            }
        }
        let mut out = self.clone();
        out.validity = validity.map(Arc::new);
        Ok(out)
    }

    /// Flat value `i` as JSON (`null` where it is null).
    pub(crate) fn json_at(&self, i: usize) -> serde_json::Value {
        match &self.validity {
            Some(v) if !v.is_valid(i) => serde_json::Value::Null,
            _ => self.values.json_at(i),
        }
    }

    /// The array as nested JSON lists (a bare value at rank 0); a null is `null`.
    pub fn to_json(&self) -> serde_json::Value {
        if self.rank == 0 {
            return self.json_at(0);
        }
        let mut level: Vec<serde_json::Value> =
            (0..self.values.len()).map(|i| self.json_at(i)).collect();
        for p in self.partitions.iter().rev() {
            level = nest_json(level, p);
        }
        serde_json::Value::Array(level)
    }

    /// The elements at depth `depth` (`0 < depth <= rank`) as JSON, one per position of
    /// the first `depth` dimensions, in row-major order.
    pub(crate) fn elements_json(&self, depth: usize) -> Vec<serde_json::Value> {
        debug_assert!(depth >= 1 && depth <= self.rank);
        let mut level: Vec<serde_json::Value> =
            (0..self.values.len()).map(|i| self.json_at(i)).collect();
        for p in self.partitions[depth - 1..].iter().rev() {
            level = nest_json(level, p);
        }
        level
    }

    /// Replaces the first `drop` partitions by `prefix` and the row count by `nrows` (the
    /// caller guarantees they describe the same values).
    pub(crate) fn replace_prefix(
        &self,
        drop: usize,
        prefix: &[RowPartition],
        nrows: usize,
    ) -> Array {
        debug_assert!(self.rank >= 1 && drop < self.rank);
        let mut partitions = Vec::with_capacity(prefix.len() + self.partitions.len() - drop);
        partitions.extend_from_slice(prefix);
        partitions.extend_from_slice(&self.partitions[drop..]);
        Array {
            rank: partitions.len() + 1,
            nrows,
            partitions,
            values: Arc::clone(&self.values),
            shape_dtype: self.shape_dtype,
            validity: self.validity.clone(),
        }
    }

    /// Merges dimensions `outer..=inner` (non-negative, `outer <= inner < rank`).
    pub(crate) fn merge_dims_unchecked(&self, outer: usize, inner: usize) -> Result<Array, Error> {
        if outer == inner {
            return Ok(self.clone());
        }
        let (nrows, partitions) = merge_partitions(self.nrows, &self.partitions, outer, inner)?;
        Ok(Array {
            rank: partitions.len() + 1,
            nrows,
            partitions,
            values: Arc::clone(&self.values),
            shape_dtype: self.shape_dtype,
            validity: self.validity.clone(),
        })
    }

    /// Merges dimensions `outer_axis..=inner_axis` into one (negative axes count from the end).
    pub fn merge_dims(&self, outer_axis: isize, inner_axis: isize) -> Result<Array, Error> {
        let outer = positive_axis(outer_axis, self.rank, "outer_axis")?;
        let inner = positive_axis(inner_axis, self.rank, "inner_axis")?;
        if outer > inner {
            return Err(Error::AxisOrder { outer, inner });
        }
        self.merge_dims_unchecked(outer, inner)
    }

    /// The rows in the given ranges of the outer dimension (same rank).
    pub(crate) fn gather_ranges(&self, ranges: &[(usize, usize)]) -> Result<Array, Error> {
        debug_assert!(self.rank >= 1);
        let nrows = ranges.iter().map(|(a, b)| b - a).sum();
        self.gather_ranges_below(0, &[], nrows, ranges)
    }

    /// The same selection of outer rows as a struct above this array made: its first
    /// `drop` partitions are that struct's, already selected into `prefix` (shared, not
    /// rebuilt), `nrows` rows in all, and `ranges` are the runs selected at level `drop`
    /// (the struct's elements). Only this array's own partitions are selected here.
    pub(crate) fn gather_ranges_below(
        &self,
        drop: usize,
        prefix: &[RowPartition],
        nrows: usize,
        ranges: &[(usize, usize)],
    ) -> Result<Array, Error> {
        debug_assert!(self.rank >= 1 && drop < self.rank && prefix.len() == drop);
        let (own, runs) = select_through(ranges, &self.partitions[drop..])?;
        let mut partitions = Vec::with_capacity(prefix.len() + own.len());
        partitions.extend_from_slice(prefix);
        partitions.extend(own);
        let values = self.values.gather_ranges(&runs);
        let validity = self.validity.as_ref().map(|v| {
            Arc::new(if v.null_count() == 0 {
                Validity::all_valid(values.len())
            } else {
                v.gather_runs(&runs)
            })
        });
        Ok(Array {
            rank: self.rank,
            nrows,
            partitions,
            values: Arc::new(values),
            shape_dtype: self.shape_dtype,
            validity,
        })
    }

    /// Concatenation along the outer dimension of arrays of one rank and dtype (checked by
    /// the caller) under a struct whose first `drop` partitions are already joined into
    /// `prefix` (shared), `nrows` rows in all: only the arrays' own partitions are joined.
    pub(crate) fn concat_below(
        arrays: &[&Array],
        drop: usize,
        prefix: &[RowPartition],
        nrows: usize,
    ) -> Result<Array, Error> {
        let first = arrays[0];
        debug_assert!(first.rank >= 1 && drop < first.rank && prefix.len() == drop);
        let mut partitions = Vec::with_capacity(first.partitions.len());
        partitions.extend_from_slice(prefix);
        for level in drop..first.partitions.len() {
            let parts: Vec<&RowPartition> = arrays.iter().map(|a| &a.partitions[level]).collect();
            partitions.push(RowPartition::concat(&parts)?);
        }
        let buffers: Vec<&Values> = arrays.iter().map(|a| &*a.values).collect();
        let values = Values::concat(&buffers, first.dtype());
        let validity = concat_validity(arrays.iter().copied());
        Ok(Array {
            rank: first.rank,
            nrows,
            partitions,
            values: Arc::new(values),
            shape_dtype: first.shape_dtype,
            validity,
        })
    }

    /// Row `i` of the outer dimension (rank - 1).
    pub(crate) fn row(&self, i: usize) -> Result<Array, Error> {
        debug_assert!(self.rank >= 1 && i < self.nrows);
        let one = self.gather_ranges(&[(i, i + 1)])?;
        Ok(one.drop_outer())
    }

    /// A single-row array without its outer dimension.
    fn drop_outer(self) -> Array {
        debug_assert_eq!(self.nrows, 1);
        if self.rank == 1 {
            return Array {
                rank: 0,
                nrows: 1,
                partitions: Vec::new(),
                values: self.values,
                shape_dtype: self.shape_dtype,
                validity: self.validity,
            };
        }
        let nrows = self.partitions[0].nvals();
        Array {
            rank: self.rank - 1,
            nrows,
            partitions: self.partitions[1..].to_vec(),
            values: self.values,
            shape_dtype: self.shape_dtype,
            validity: self.validity,
        }
    }

    /// Stacks arrays of equal rank `q` into one of rank `q + 1`; `outer_uniform` says
    /// whether the dimension they came from was uniform.
    pub(crate) fn stack(
        parts: &[Array],
        rank: usize,
        dtype: DType,
        outer_uniform: bool,
    ) -> Result<Array, Error> {
        let n = parts.len();
        if rank == 0 {
            let mut values = Values::with_capacity(dtype, n);
            for p in parts {
                values.extend_promoting(&p.values, 0, 1);
            }
            let mut out = Array::from_values(values);
            out.validity = concat_validity(parts.iter());
            return Ok(out);
        }
        let mut partitions = Vec::with_capacity(rank);
        let lens: Vec<usize> = parts.iter().map(|p| p.nrows).collect();
        let same_len = lens.windows(2).all(|w| w[0] == w[1]);
        let first_len = lens.first().copied().unwrap_or(0);
        let uniform0 = (outer_uniform && same_len).then_some(first_len);
        partitions.push(partition::from_splits_maybe_uniform(
            splits_from_lengths(lens.iter().copied())?,
            uniform0,
        )?);
        for level in 0..rank - 1 {
            let mut splits = Vec::with_capacity(
                1 + parts
                    .iter()
                    .map(|p| p.partitions[level].nrows())
                    .sum::<usize>(),
            );
            splits.push(0i32);
            let mut base = 0usize;
            let mut uniform = parts
                .first()
                .and_then(|p| p.partitions[level].uniform_row_length());
            for p in parts {
                let ps = &p.partitions[level];
                if ps.uniform_row_length() != uniform {
                    uniform = None;
                }
                for &s in &ps.row_splits()[1..] {
                    splits.push(partition::offset(base + s as usize)?);
                }
                base += ps.nvals();
            }
            partitions.push(partition::from_splits_maybe_uniform(splits, uniform)?);
        }
        let buffers: Vec<&Values> = parts.iter().map(|p| &*p.values).collect();
        let values = Values::concat(&buffers, dtype);
        let validity = concat_validity(parts.iter());
        Ok(Array {
            rank: rank + 1,
            nrows: n,
            partitions,
            values: Arc::new(values),
            shape_dtype: parts.first().map_or(DType::I32, |p| p.shape_dtype),
            validity,
        })
    }
}

/// The validity of arrays' values one after another (`None` when none is nullable).
fn concat_validity<'a>(arrays: impl Iterator<Item = &'a Array>) -> Option<Arc<Validity>> {
    let parts: Vec<(Option<&Validity>, usize)> = arrays
        .map(|a| (a.validity.as_deref(), a.values.len()))
        .collect();
    Validity::concat(&parts).map(Arc::new)
}

/// Splits (`i32`, starting at 0) from lengths.
pub(crate) fn splits_from_lengths<I: IntoIterator<Item = usize>>(
    lens: I,
) -> Result<Vec<i32>, Error> {
    let iter = lens.into_iter();
    let mut splits = Vec::with_capacity(iter.size_hint().0 + 1);
    splits.push(0i32);
    let mut total = 0usize;
    for len in iter {
        total = total
            .checked_add(len)
            .ok_or_else(|| Error::InvalidPartition {
                what: "row lengths overflow".to_string(),
            })?;
        splits.push(partition::offset(total)?);
    }
    Ok(splits)
}

/// Groups `values` into JSON lists by the rows of `p`.
pub(crate) fn nest_json(
    values: Vec<serde_json::Value>,
    p: &RowPartition,
) -> Vec<serde_json::Value> {
    let mut out = Vec::with_capacity(p.nrows());
    let mut it = values.into_iter();
    for len in partition::lengths(p) {
        out.push(serde_json::Value::Array(it.by_ref().take(len).collect()));
    }
    out
}

/// Normalises a possibly negative axis against `rank`.
pub(crate) fn positive_axis(axis: isize, rank: usize, name: &'static str) -> Result<usize, Error> {
    let r = rank as isize;
    if axis >= r || axis < -r {
        return Err(Error::AxisOutOfRange { name, axis, rank });
    }
    Ok(if axis < 0 {
        (axis + r) as usize
    } else {
        axis as usize
    })
}

/// Merges dimensions `outer..=inner` (`outer < inner`) of a shape given as `nrows` and
/// partitions; returns the new `nrows` and partitions.
pub(crate) fn merge_partitions(
    nrows: usize,
    partitions: &[RowPartition],
    outer: usize,
    inner: usize,
) -> Result<(usize, Vec<RowPartition>), Error> {
    debug_assert!(outer < inner && inner <= partitions.len());
    if outer == 0 {
        let new_nrows = partitions[inner - 1].nvals();
        return Ok((new_nrows, partitions[inner..].to_vec()));
    }
    let mut merged: Vec<i32> = partitions[outer - 1].row_splits().to_vec();
    let mut uniform = partitions[outer - 1].uniform_row_length();
    for p in &partitions[outer..inner] {
        let s = p.row_splits();
        for m in merged.iter_mut() {
            *m = s[*m as usize];
        }
        uniform = match (uniform, p.uniform_row_length()) {
            (Some(a), Some(b)) => Some(a * b),
            _ => None,
        };
    }
    let mut out = Vec::with_capacity(partitions.len() - (inner - outer));
    out.extend_from_slice(&partitions[..outer - 1]);
    out.push(partition::from_splits_maybe_uniform(merged, uniform)?);
    out.extend_from_slice(&partitions[inner..]);
    Ok((nrows, out))
}

/// Runs `(start, end)` of rows or elements, in order.
pub(crate) type Runs<'a> = Cow<'a, [(usize, usize)]>;

/// Selects runs of rows through a stack of partitions, top down: the selected partitions
/// and the runs of flat values they cover (`ranges` itself when there is no partition).
pub(crate) fn select_through<'a>(
    ranges: &'a [(usize, usize)],
    partitions: &[RowPartition],
) -> Result<(Vec<RowPartition>, Runs<'a>), Error> {
    let mut current = Cow::Borrowed(ranges);
    let mut out = Vec::with_capacity(partitions.len());
    for p in partitions {
        let (selected, next) = p.select_row_ranges(&current)?;
        out.push(selected);
        current = Cow::Owned(next);
    }
    Ok((out, current))
}

impl Array {
    /// Equal flat values, nulls at the same places (the values under a null are not
    /// compared; an all-valid bitmap equals none).
    fn same_values(&self, other: &Array) -> bool {
        if self.null_count() == 0 && other.null_count() == 0 {
            return *self.values == *other.values;
        }
        let n = self.values.len();
        self.values.dtype() == other.values.dtype()
            && n == other.values.len()
            && (0..n).all(|i| {
                let (a, b) = (self.is_valid(i), other.is_valid(i));
                a == b && (!a || self.values.get(i) == other.values.get(i))
            })
    }
}

impl PartialEq for Array {
    /// Equal when rank, dtype, rows at every level, nulls and values agree (whether a
    /// dimension is stored as uniform or ragged is not compared, nor whether an array
    /// without nulls carries a bitmap).
    fn eq(&self, other: &Array) -> bool {
        self.rank == other.rank
            && self.nrows == other.nrows
            && self
                .partitions
                .iter()
                .zip(&other.partitions)
                .all(|(a, b)| partition::same_rows(a, b))
            && self.same_values(other)
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_dense() {
            "Tensor"
        } else {
            "RaggedTensor"
        };
        write!(
            f,
            "{kind}({}, shape={}, dtype={})",
            self.to_json(),
            ShapeDisplay(&self.shape()),
            self.dtype()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ragged_array_to_json() {
        let a = Array::from_row_lengths(Values::I64(vec![1, 2, 3].into()), &[2, 0, 1]).unwrap();
        assert_eq!(a.to_json(), json!([[1, 2], [], [3]]));
        assert_eq!(a.shape(), vec![Some(3), None]);
        assert!(!a.is_dense());
    }

    #[test]
    fn dense_array_shape_and_json() {
        let a = Array::dense(&[2, 2], Values::I64(vec![1, 2, 3, 4].into())).unwrap();
        assert_eq!(a.to_json(), json!([[1, 2], [3, 4]]));
        assert_eq!(a.shape(), vec![Some(2), Some(2)]);
        assert!(a.is_dense());
        assert!(Array::dense(&[2, 3], Values::I64(vec![1].into())).is_err());
    }

    #[test]
    fn merge_dims_of_dense_matches_reshape() {
        let a = Array::dense(
            &[2, 2, 2],
            Values::I64(vec![1, 11, 2, 12, 3, 13, 4, 14].into()),
        )
        .unwrap();
        let m = a.merge_dims(1, 2).unwrap();
        assert_eq!(m.to_json(), json!([[1, 11, 2, 12], [3, 13, 4, 14]]));
        assert_eq!(m.shape(), vec![Some(2), Some(4)]);
        let m0 = a.merge_dims(0, -1).unwrap();
        assert_eq!(m0.to_json(), json!([1, 11, 2, 12, 3, 13, 4, 14]));
        assert_eq!(a.merge_dims(2, 2).unwrap(), a);
        assert_eq!(
            a.merge_dims(2, 1).unwrap_err(),
            Error::AxisOrder { outer: 2, inner: 1 }
        );
        assert!(matches!(
            a.merge_dims(3, 3).unwrap_err(),
            Error::AxisOutOfRange { axis: 3, .. }
        ));
    }

    #[test]
    fn rows_and_gathers() {
        let a = Array::from_row_lengths(Values::I64(vec![1, 2, 3, 4].into()), &[2, 0, 2]).unwrap();
        assert_eq!(a.row(0).unwrap().to_json(), json!([1, 2]));
        assert_eq!(a.row(1).unwrap().to_json(), json!([]));
        let g = a.gather_ranges(&[(2, 3), (0, 1)]).unwrap();
        assert_eq!(g.to_json(), json!([[3, 4], [1, 2]]));
    }

    #[test]
    fn map_f64_keeps_shape() {
        let a = Array::from_row_lengths(Values::F64(vec![8.0, 7.5].into()), &[1, 1]).unwrap();
        let b = a.map_f64(|x| x * 2.0).unwrap();
        assert_eq!(b.to_json(), json!([[16.0], [15.0]]));
        let s = Array::from_values(Values::Str(vec!["a"].into()));
        assert!(s.map_f64(|x| x).is_err());
    }
}
