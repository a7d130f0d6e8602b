//! `StructuredTensor` and `FieldValue`: the model, `from_fields`, accessors and `to_json`.

use std::fmt;

use indexmap::IndexMap;

use crate::array::Array;
use crate::error::{is_valid_field_name, Error, FieldPath, ShapeDisplay};
use crate::partition::{self, RowPartition};
use crate::values::DType;

/// The value of one field: a leaf array or a nested `StructuredTensor`.
#[derive(Clone, PartialEq)]
pub enum FieldValue {
    /// A dense or ragged leaf array.
    Array(Array),
    /// A nested struct array.
    Struct(StructuredTensor),
}

impl FieldValue {
    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        match self {
            FieldValue::Array(a) => a.rank(),
            FieldValue::Struct(s) => s.rank(),
        }
    }

    /// Size of the outer dimension (`None` at rank 0).
    pub fn nrows(&self) -> Option<usize> {
        match self {
            FieldValue::Array(a) => a.nrows(),
            FieldValue::Struct(s) => s.nrows(),
        }
    }

    /// The static shape (`None` for ragged dimensions).
    pub fn shape(&self) -> Vec<Option<usize>> {
        match self {
            FieldValue::Array(a) => a.shape(),
            FieldValue::Struct(s) => s.shape(),
        }
    }

    /// The row partitions of the value's own dimensions (rank - 1 of them).
    pub fn row_partitions(&self) -> &[RowPartition] {
        match self {
            FieldValue::Array(a) => a.row_partitions(),
            FieldValue::Struct(s) => s.row_partitions(),
        }
    }

    /// The row partitions' integer type as reported (see
    /// [`StructuredTensor::shape_dtype`]).
    pub fn shape_dtype(&self) -> DType {
        match self {
            FieldValue::Array(a) => a.shape_dtype(),
            FieldValue::Struct(s) => s.shape_dtype(),
        }
    }

    /// The same value with row partitions reported as `dtype` (`int32` or `int64`).
    pub fn with_shape_dtype(&self, dtype: DType) -> Result<FieldValue, Error> {
        match self {
            FieldValue::Array(a) => Ok(FieldValue::Array(a.with_shape_dtype(dtype)?)),
            FieldValue::Struct(s) => Ok(FieldValue::Struct(s.with_shape_dtype(dtype)?)),
        }
    }

    /// The shape dtype this value asks of a struct holding it: a nested struct's, a ragged
    /// array's; none for a dense array (TensorFlow's `_field_shape_dtype`).
    pub(crate) fn shape_dtype_claim(&self) -> Option<DType> {
        match self {
            FieldValue::Array(a) => a.shape_dtype_claim(),
            FieldValue::Struct(s) => Some(s.shape_dtype()),
        }
    }

    /// The leaf array, if this is one.
    pub fn as_array(&self) -> Option<&Array> {
        match self {
            FieldValue::Array(a) => Some(a),
            FieldValue::Struct(_) => None,
        }
    }

    /// The nested struct, if this is one.
    pub fn as_struct(&self) -> Option<&StructuredTensor> {
        match self {
            FieldValue::Array(_) => None,
            FieldValue::Struct(s) => Some(s),
        }
    }

    /// The value as JSON (nested lists, objects for structs).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            FieldValue::Array(a) => a.to_json(),
            FieldValue::Struct(s) => s.to_json(),
        }
    }

    /// Elements at list depth `depth >= 1` as JSON.
    pub(crate) fn elements_json(&self, depth: usize) -> Vec<serde_json::Value> {
        match self {
            FieldValue::Array(a) => a.elements_json(depth),
            FieldValue::Struct(s) => s.elements_json(depth),
        }
    }

    /// Replaces the first `drop` partitions by `prefix` (shared) and the row count.
    pub(crate) fn replace_prefix(
        &self,
        drop: usize,
        prefix: &[RowPartition],
        nrows: usize,
    ) -> FieldValue {
        match self {
            FieldValue::Array(a) => FieldValue::Array(a.replace_prefix(drop, prefix, nrows)),
            FieldValue::Struct(s) => FieldValue::Struct(s.replace_prefix(drop, prefix, nrows)),
        }
    }

    /// Merges dimensions `outer..=inner` (non-negative, `outer <= inner < rank`).
    pub(crate) fn merge_dims_unchecked(
        &self,
        outer: usize,
        inner: usize,
    ) -> Result<FieldValue, Error> {
        match self {
            FieldValue::Array(a) => Ok(FieldValue::Array(a.merge_dims_unchecked(outer, inner)?)),
            FieldValue::Struct(s) => Ok(FieldValue::Struct(s.merge_dims_unchecked(outer, inner)?)),
        }
    }
}

impl From<Array> for FieldValue {
    fn from(a: Array) -> FieldValue {
        FieldValue::Array(a)
    }
}

impl From<StructuredTensor> for FieldValue {
    fn from(s: StructuredTensor) -> FieldValue {
        FieldValue::Struct(s)
    }
}

impl fmt::Debug for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::Array(a) => write!(f, "{a}"),
            FieldValue::Struct(s) => write!(f, "{s}"),
        }
    }
}

/// A multi-dimensional array of structs sharing one schema, stored field-major.
///
/// **Invariant:** every field has rank >= `rank`, `nrows` rows (rank >= 1), and its first
/// `rank - 1` partitions are the struct's own `row_partitions` (the same shared objects,
/// not copies); field names match `^[a-zA-Z][a-zA-Z0-9_]*$`.
#[derive(Clone)]
pub struct StructuredTensor {
    rank: usize,
    nrows: usize,
    row_partitions: Vec<RowPartition>,
    fields: IndexMap<String, FieldValue>,
    /// The row partitions' integer type as reported (`int32` or `int64`), shared by every
    /// field; the partitions always hold `i32` offsets.
    shape_dtype: DType,
}

impl StructuredTensor {
    /// Builds a struct array from fields (TensorFlow's `from_fields`): `shape` gives the rank
    /// and any static sizes (`None` = inferred); `nrows` and `row_partitions` are optional
    /// and inferred from the fields; fields then share one set of partitions.
    pub fn from_fields<I, K, V>(
        fields: I,
        shape: &[Option<usize>],
        nrows: Option<usize>,
        row_partitions: Option<Vec<RowPartition>>,
    ) -> Result<StructuredTensor, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<FieldValue>,
    {
        let fields: IndexMap<String, FieldValue> = fields
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Self::from_field_map(fields, shape, nrows, row_partitions)
    }

    /// `from_fields` on an owned map.
    pub(crate) fn from_field_map(
        fields: IndexMap<String, FieldValue>,
        shape: &[Option<usize>],
        nrows: Option<usize>,
        row_partitions: Option<Vec<RowPartition>>,
    ) -> Result<StructuredTensor, Error> {
        let rank = shape.len();
        if rank < 2 && row_partitions.as_ref().is_some_and(|p| !p.is_empty()) {
            return Err(Error::RowPartitionsBelowRank2);
        }
        if rank == 0 && nrows.is_some() {
            return Err(Error::NrowsAtRank0);
        }
        if let Some(p) = &row_partitions {
            if p.len() != rank.saturating_sub(1) {
                return Err(Error::RowPartitionsLength {
                    expected: rank.saturating_sub(1),
                    got: p.len(),
                });
            }
        }
        for name in fields.keys() {
            if !is_valid_field_name(name) {
                return Err(Error::InvalidFieldName {
                    name: name.clone(),
                    path: FieldPath::root(),
                });
            }
        }
        // TensorFlow's `_find_shape_dtype`: int64 when any field asks for it, else int32;
        // every field is converted to it.
        let claims: Vec<DType> = fields
            .values()
            .filter_map(FieldValue::shape_dtype_claim)
            .collect();
        let shape_dtype = if claims.contains(&DType::I64) {
            DType::I64
        } else {
            DType::I32
        };
        let fields: IndexMap<String, FieldValue> =
            if fields.values().all(|v| v.shape_dtype() == shape_dtype) {
                fields
            } else {
                fields
                    .into_iter()
                    .map(|(k, v)| Ok((k, v.with_shape_dtype(shape_dtype)?)))
                    .collect::<Result<_, Error>>()?
            };
        if rank == 0 {
            return Ok(StructuredTensor {
                rank: 0,
                nrows: 1,
                row_partitions: Vec::new(),
                fields,
                shape_dtype,
            });
        }
        // Static shape: every field's outer shape must be compatible with the merged shape.
        let mut merged: Vec<Option<usize>> = shape.to_vec();
        for (name, value) in &fields {
            let fshape = value.shape();
            let outer: Vec<Option<usize>> = fshape.iter().take(rank).copied().collect();
            let compatible = fshape.len() >= rank
                && merged
                    .iter()
                    .zip(&outer)
                    .all(|(a, b)| a.is_none() || b.is_none() || a == b);
            if !compatible {
                return Err(Error::IncompatibleFieldShape {
                    field: name.clone(),
                    field_shape: outer,
                    shape: merged,
                });
            }
            for (m, o) in merged.iter_mut().zip(&outer) {
                if m.is_none() {
                    *m = *o;
                }
            }
        }
        let partitions: Vec<RowPartition> = if rank == 1 {
            Vec::new()
        } else {
            let mut current = row_partitions;
            for (name, value) in &fields {
                let fp = &value.row_partitions()[..rank - 1];
                match &current {
                    None => current = Some(fp.to_vec()),
                    Some(cur) => {
                        if let Some(level) = cur
                            .iter()
                            .zip(fp)
                            .position(|(a, b)| !partition::same_rows(a, b))
                        {
                            return Err(Error::IncompatibleRowSplits {
                                field: name.clone(),
                                axis: level + 1,
                            });
                        }
                    }
                }
            }
            match current {
                Some(p) => p,
                None => {
                    if merged.iter().all(Option::is_some) {
                        let dims: Vec<usize> = merged.iter().map(|d| d.unwrap_or(0)).collect();
                        let mut parts = Vec::with_capacity(rank - 1);
                        let mut rows = dims[0];
                        for &len in &dims[1..] {
                            parts.push(partition::uniform(len, rows)?);
                            rows *= len;
                        }
                        parts
                    } else {
                        return Err(Error::RowPartitionsRequired);
                    }
                }
            }
        };
        // Determine nrows.
        let inferred = if rank >= 2 {
            Some(partitions[0].nrows())
        } else {
            fields
                .values()
                .next()
                .and_then(FieldValue::nrows)
                .or(merged[0])
        };
        let nrows = match (nrows, inferred) {
            (Some(n), Some(m)) if n != m => {
                return Err(Error::IncompatibleNrows {
                    expected: n,
                    got: m,
                    field: fields.keys().next().cloned(),
                })
            }
            (Some(n), _) | (None, Some(n)) => n,
            (None, None) => return Err(Error::NrowsRequired),
        };
        if let Some(n) = merged[0] {
            if n != nrows {
                return Err(Error::IncompatibleNrows {
                    expected: n,
                    got: nrows,
                    field: None,
                });
            }
        }
        // The partitions must chain, and match any static sizes.
        let mut rows = nrows;
        for (k, p) in partitions.iter().enumerate() {
            if p.nrows() != rows {
                return Err(Error::LayerMismatch {
                    axis: k + 1,
                    expected: rows,
                    got: p.nrows(),
                });
            }
            if let Some(len) = merged[k + 1] {
                if partition::lengths(p).any(|l| l != len) {
                    return Err(Error::IncompatibleDim {
                        axis: k + 1,
                        expected: len,
                    });
                }
            }
            rows = p.nvals();
        }
        let fields = fields
            .into_iter()
            .map(|(k, v)| {
                let shared = v.replace_prefix(rank - 1, &partitions, nrows);
                (k, shared)
            })
            .collect();
        Ok(StructuredTensor {
            rank,
            nrows,
            row_partitions: partitions,
            fields,
            shape_dtype,
        })
    }

    /// TensorFlow's `from_fields_and_rank`: a non-empty field map and a rank; the shape is
    /// inferred from the fields.
    pub fn from_fields_and_rank<I, K, V>(fields: I, rank: usize) -> Result<StructuredTensor, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<FieldValue>,
    {
        let fields: IndexMap<String, FieldValue> = fields
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        if fields.is_empty() {
            return Err(Error::NoFields);
        }
        Self::from_field_map(fields, &vec![None; rank], None, None)
    }

    /// TensorFlow's `from_shape`: a struct array with no fields and the given shape
    /// (`nrows` plus `rank - 1` partitions; `nrows` is ignored at rank 0).
    pub fn from_shape(
        rank: usize,
        nrows: usize,
        row_partitions: Vec<RowPartition>,
    ) -> Result<StructuredTensor, Error> {
        if rank == 0 {
            return Self::from_field_map(IndexMap::new(), &[], None, Some(row_partitions));
        }
        Self::from_field_map(
            IndexMap::new(),
            &vec![None; rank],
            Some(nrows),
            Some(row_partitions),
        )
    }

    /// Internal constructor for results whose invariant holds by construction.
    pub(crate) fn from_parts_unchecked(
        rank: usize,
        nrows: usize,
        row_partitions: Vec<RowPartition>,
        fields: IndexMap<String, FieldValue>,
    ) -> StructuredTensor {
        debug_assert!(rank == 0 || row_partitions.len() == rank - 1);
        // every field reports the struct's shape dtype (the invariant)
        let shape_dtype = fields
            .values()
            .next()
            .map_or(DType::I32, FieldValue::shape_dtype);
        StructuredTensor {
            rank,
            nrows,
            row_partitions,
            fields,
            shape_dtype,
        }
    }

    /// `self` reported with shape dtype `dtype` at the top level only (for results built
    /// from an input of that dtype whose fields already carry it, or that have no field).
    pub(crate) fn tagged(mut self, dtype: DType) -> StructuredTensor {
        self.shape_dtype = dtype;
        self
    }

    /// The row partitions' integer type as TensorFlow reports it (`shape_dtype` of the
    /// struct's `DynamicRaggedShape`, the dtype of `row_partitions`): `int32` (the default
    /// here; TensorFlow's is `int64`) or `int64`, the same for every field. The partitions
    /// hold `i32` offsets either way; the dtype decides what they are reported as and what
    /// Arrow gets (`List` or `LargeList` offsets).
    pub fn shape_dtype(&self) -> DType {
        self.shape_dtype
    }

    /// TensorFlow's `StructuredTensor.with_shape_dtype(dtype)`: the same struct array with
    /// row partitions reported as `dtype` (`int32` or `int64`; any other is
    /// `Error::ShapeDType`), every nested struct and ragged field converted too. Nothing is
    /// copied.
    pub fn with_shape_dtype(&self, dtype: DType) -> Result<StructuredTensor, Error> {
        crate::dynamic_shape::check_shape_dtype(dtype)?;
        if dtype == self.shape_dtype {
            return Ok(self.clone());
        }
        let fields = self
            .fields
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.with_shape_dtype(dtype)?)))
            .collect::<Result<_, Error>>()?;
        Ok(StructuredTensor {
            rank: self.rank,
            nrows: self.nrows,
            row_partitions: self.row_partitions.clone(),
            fields,
            shape_dtype: dtype,
        })
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Size of the outer dimension (`None` at rank 0).
    pub fn nrows(&self) -> Option<usize> {
        (self.rank > 0).then_some(self.nrows)
    }

    /// The static shape `[nrows, d1, ...]`; ragged dimensions are `None`.
    pub fn shape(&self) -> Vec<Option<usize>> {
        if self.rank == 0 {
            return Vec::new();
        }
        let mut shape = Vec::with_capacity(self.rank);
        shape.push(Some(self.nrows));
        shape.extend(self.row_partitions.iter().map(|p| p.uniform_row_length()));
        shape
    }

    /// The `rank - 1` row partitions shared by every field.
    pub fn row_partitions(&self) -> &[RowPartition] {
        &self.row_partitions
    }

    /// The struct array's shape as a ragged-core `RaggedShape` (rank >= 2), sharing its
    /// partitions.
    pub fn ragged_shape(&self) -> Option<ragged_core::RaggedShape> {
        ragged_core::RaggedShape::from_layers(self.row_partitions.clone()).ok()
    }

    /// The number of structs (the product of the shape's sizes).
    pub fn num_structs(&self) -> usize {
        match self.rank {
            0 => 1,
            1 => self.nrows,
            _ => self.row_partitions.last().map_or(0, |p| p.nvals()),
        }
    }

    /// The field names, in the order they were written (see the crate guide's "Field
    /// order").
    pub fn field_names(&self) -> Vec<&str> {
        self.fields.keys().map(String::as_str).collect()
    }

    /// The fields by name, in the order they were written.
    pub fn fields(&self) -> &IndexMap<String, FieldValue> {
        &self.fields
    }

    /// The value of a field, or of a nested field given a path of names:
    /// `field_value(["a", "b"])` is `field_value("a")` then `.field_value("b")`.
    pub fn field_value<P: Into<FieldPath>>(&self, path: P) -> Result<&FieldValue, Error> {
        let path = path.into();
        let mut names = path.names().iter();
        let first = names
            .next()
            .ok_or_else(|| Error::FieldNotFound { path: path.clone() })?;
        let mut value = self
            .fields
            .get(first)
            .ok_or_else(|| Error::FieldNotFound { path: path.clone() })?;
        for name in names {
            value = match value {
                FieldValue::Struct(s) => s
                    .fields
                    .get(name)
                    .ok_or_else(|| Error::FieldNotFound { path: path.clone() })?,
                FieldValue::Array(_) => return Err(Error::FieldNotFound { path }),
            };
        }
        Ok(value)
    }

    /// The struct array as JSON (TensorFlow's `to_pyval`): an object at rank 0, otherwise
    /// nested lists of objects.
    pub fn to_json(&self) -> serde_json::Value {
        if self.rank == 0 {
            let map = self
                .fields
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect();
            return serde_json::Value::Object(map);
        }
        serde_json::Value::Array(self.elements_json(1))
    }

    /// The elements at list depth `depth` (1..=rank) as JSON.
    pub(crate) fn elements_json(&self, depth: usize) -> Vec<serde_json::Value> {
        let records = crate::json_out::records(self);
        let mut level = records;
        for p in self.row_partitions[depth - 1..].iter().rev() {
            level = crate::array::nest_json(level, p);
        }
        level
    }

    /// The type of this value: shape and field specs (TensorFlow's `StructuredTensor.Spec`).
    pub fn spec(&self) -> crate::spec::Spec {
        crate::spec::Spec::of(self)
    }

    /// Replaces the first `drop` partitions by `prefix` (shared) and the row count,
    /// recursively in every field.
    pub(crate) fn replace_prefix(
        &self,
        drop: usize,
        prefix: &[RowPartition],
        nrows: usize,
    ) -> StructuredTensor {
        debug_assert!(self.rank >= 1);
        let mut row_partitions =
            Vec::with_capacity(prefix.len() + self.row_partitions.len() - drop);
        row_partitions.extend_from_slice(prefix);
        row_partitions.extend_from_slice(&self.row_partitions[drop..]);
        let fields = self
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), v.replace_prefix(drop, prefix, nrows)))
            .collect();
        StructuredTensor {
            rank: row_partitions.len() + 1,
            nrows,
            row_partitions,
            fields,
            shape_dtype: self.shape_dtype,
        }
    }
}

impl PartialEq for StructuredTensor {
    /// Equal when shape (rows at every level), field names and field values agree,
    /// whatever the order of the fields (as Python dicts compare; `field_names` tells the
    /// orders apart).
    fn eq(&self, other: &StructuredTensor) -> bool {
        self.rank == other.rank
            && (self.rank == 0 || self.nrows == other.nrows)
            && self
                .row_partitions
                .iter()
                .zip(&other.row_partitions)
                .all(|(a, b)| partition::same_rows(a, b))
            && self.fields == other.fields
    }
}

impl fmt::Debug for StructuredTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// TensorFlow's `repr`, which lists the fields sorted by name (whatever their order).
impl fmt::Display for StructuredTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<StructuredTensor(fields={")?;
        let mut fields: Vec<(&String, &FieldValue)> = self.fields.iter().collect();
        fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (i, (k, v)) in fields.into_iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "\"{k}\": {v}")?;
        }
        write!(f, "}}, shape={})>", ShapeDisplay(&self.shape()))
    }
}
