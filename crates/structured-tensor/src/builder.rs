//! `Builder`: a struct array built column by column from flat values plus row lengths or
//! splits, so large data never goes through per-element JSON. Every field shares the
//! builder's outer partitions.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::array::Array;
use crate::error::{is_valid_field_name, Error, FieldPath};
use crate::partition::{self, RowPartition};
use crate::structured::{FieldValue, StructuredTensor};
use crate::values::Values;

/// Builds a struct array of a fixed shape one field at a time.
///
/// ```
/// use structured_tensor::{Builder, Values};
/// let st = Builder::vector(2)
///     .scalar("age", Values::I64(vec![12, 82].into()))?
///     .list_lengths("nicknames", Values::Str(vec!["Jo", "Bob", "Bobby"].into()), &[1, 2])?
///     .build()?;
/// assert_eq!(
///     st.to_json(),
///     serde_json::json!([{"age": 12, "nicknames": ["Jo"]}, {"age": 82, "nicknames": ["Bob", "Bobby"]}])
/// );
/// # Ok::<(), structured_tensor::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    rank: usize,
    nrows: usize,
    partitions: Vec<RowPartition>,
    fields: IndexMap<String, FieldValue>,
}

impl Builder {
    /// A rank-0 (single struct) builder.
    pub fn scalar_struct() -> Builder {
        Builder {
            rank: 0,
            nrows: 1,
            partitions: Vec::new(),
            fields: IndexMap::new(),
        }
    }

    /// A rank-1 builder of `nrows` structs.
    pub fn vector(nrows: usize) -> Builder {
        Builder {
            rank: 1,
            nrows,
            partitions: Vec::new(),
            fields: IndexMap::new(),
        }
    }

    /// A builder of rank `partitions.len() + 1` over the given (shared) partitions.
    pub fn with_partitions(nrows: usize, partitions: Vec<RowPartition>) -> Result<Builder, Error> {
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
        Ok(Builder {
            rank: partitions.len() + 1,
            nrows,
            partitions,
            fields: IndexMap::new(),
        })
    }

    /// A builder of rank `row_splits.len() + 1`, one partition per list of splits.
    pub fn with_row_splits(row_splits: Vec<Vec<i32>>) -> Result<Builder, Error> {
        let partitions = row_splits
            .into_iter()
            .map(partition::from_splits)
            .collect::<Result<Vec<_>, _>>()?;
        let nrows = partitions.first().map_or(0, RowPartition::nrows);
        Self::with_partitions(nrows, partitions)
    }

    /// A builder of rank 2 whose rows hold the given numbers of structs.
    pub fn with_row_lengths(row_lengths: &[usize]) -> Result<Builder, Error> {
        let p = partition::from_lengths(row_lengths.iter().copied())?;
        Self::with_partitions(p.nrows(), vec![p])
    }

    /// The number of structs (one value per struct for a scalar field).
    pub fn num_structs(&self) -> usize {
        match self.rank {
            0 => 1,
            1 => self.nrows,
            _ => self.partitions.last().map_or(0, RowPartition::nvals),
        }
    }

    fn check_name(&self, name: &str) -> Result<(), Error> {
        if is_valid_field_name(name) {
            Ok(())
        } else {
            Err(Error::InvalidFieldName {
                name: name.to_string(),
                path: FieldPath::root(),
            })
        }
    }

    /// Adds a field with one value per struct.
    pub fn scalar(mut self, name: &str, values: Values) -> Result<Builder, Error> {
        self.check_name(name)?;
        let expected = self.num_structs();
        if values.len() != expected {
            return Err(Error::ValuesLength {
                expected,
                got: values.len(),
            });
        }
        let array = Array::from_parts_unchecked(
            self.rank,
            self.nrows,
            self.partitions.clone(),
            Arc::new(values),
        );
        self.fields
            .insert(name.to_string(), FieldValue::Array(array));
        Ok(self)
    }

    /// Adds a field with one list per struct: `values` split by `row_lengths`.
    pub fn list_lengths(
        self,
        name: &str,
        values: Values,
        row_lengths: &[usize],
    ) -> Result<Builder, Error> {
        let p = partition::from_lengths(row_lengths.iter().copied())?;
        self.list(name, values, p)
    }

    /// Adds a field with one list per struct: `values` split by `row_splits`.
    pub fn list_splits(
        self,
        name: &str,
        values: Values,
        row_splits: Vec<i32>,
    ) -> Result<Builder, Error> {
        let p = partition::from_splits(row_splits)?;
        self.list(name, values, p)
    }

    fn list(mut self, name: &str, values: Values, p: RowPartition) -> Result<Builder, Error> {
        self.check_name(name)?;
        let expected = self.num_structs();
        if p.nrows() != expected {
            return Err(Error::LayerMismatch {
                axis: self.rank,
                expected,
                got: p.nrows(),
            });
        }
        if values.len() != p.nvals() {
            return Err(Error::ValuesLength {
                expected: p.nvals(),
                got: values.len(),
            });
        }
        let array = if self.rank == 0 {
            Array::from_parts_unchecked(1, p.nvals(), Vec::new(), Arc::new(values))
        } else {
            let mut parts = self.partitions.clone();
            parts.push(p);
            Array::from_parts_unchecked(self.rank + 1, self.nrows, parts, Arc::new(values))
        };
        self.fields
            .insert(name.to_string(), FieldValue::Array(array));
        Ok(self)
    }

    /// Adds a nested struct field of the same outer shape, built by `f` from a builder that
    /// shares this one's partitions.
    pub fn nested(
        mut self,
        name: &str,
        f: impl FnOnce(Builder) -> Result<Builder, Error>,
    ) -> Result<Builder, Error> {
        self.check_name(name)?;
        let inner = f(Builder {
            rank: self.rank,
            nrows: self.nrows,
            partitions: self.partitions.clone(),
            fields: IndexMap::new(),
        })?;
        self.fields
            .insert(name.to_string(), FieldValue::Struct(inner.build()?));
        Ok(self)
    }

    /// Adds any field value whose outer shape matches; it is rebuilt over the shared
    /// partitions.
    pub fn field(mut self, name: &str, value: impl Into<FieldValue>) -> Result<Builder, Error> {
        self.check_name(name)?;
        self.fields.insert(name.to_string(), value.into());
        Ok(self)
    }

    /// The struct array; every field is checked against the shape and then shares the
    /// builder's partitions.
    pub fn build(self) -> Result<StructuredTensor, Error> {
        let shape: Vec<Option<usize>> = vec![None; self.rank];
        let nrows = (self.rank > 0).then_some(self.nrows);
        let parts = (self.rank > 1).then_some(self.partitions);
        StructuredTensor::from_field_map(self.fields, &shape, nrows, parts)
    }
}
