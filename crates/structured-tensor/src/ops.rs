//! Shape and schema transforms: `merge_dims`, `partition_outer_dimension`, `promote` and
//! `with_updates`. Results share partitions with their inputs wherever the rows agree.

use std::fmt;

use crate::array::{merge_partitions, positive_axis};
use crate::error::{Error, FieldPath};
use crate::partition::RowPartition;
use crate::structured::{FieldValue, StructuredTensor};

/// A closure that computes a field's new value from its current one.
pub type FieldFn = Box<dyn FnOnce(&FieldValue) -> Result<FieldValue, Error>>;

/// One change for [`StructuredTensor::with_updates`].
pub enum Update {
    /// Sets the field to a value (adding it when absent).
    Set(FieldValue),
    /// Replaces the field by a function of its current value (it must exist).
    Transform(FieldFn),
    /// Removes the field (it must exist).
    Delete,
}

impl Update {
    /// `Update::Set` from anything that converts to a field value.
    pub fn set(value: impl Into<FieldValue>) -> Update {
        Update::Set(value.into())
    }

    /// `Update::Transform` from a closure.
    pub fn transform(f: impl FnOnce(&FieldValue) -> Result<FieldValue, Error> + 'static) -> Update {
        Update::Transform(Box::new(f))
    }
}

impl fmt::Debug for Update {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Update::Set(v) => write!(f, "Set({v})"),
            Update::Transform(_) => f.write_str("Transform(..)"),
            Update::Delete => f.write_str("Delete"),
        }
    }
}

impl StructuredTensor {
    /// Merges dimensions `outer_axis..=inner_axis` into one, in row-major order; negative
    /// axes count from the end. The result has shape
    /// `shape[..outer] + [N] + shape[inner + 1..]`.
    pub fn merge_dims(
        &self,
        outer_axis: isize,
        inner_axis: isize,
    ) -> Result<StructuredTensor, Error> {
        let outer = positive_axis(outer_axis, self.rank(), "outer_axis")?;
        let inner = positive_axis(inner_axis, self.rank(), "inner_axis")?;
        if outer > inner {
            return Err(Error::AxisOrder { outer, inner });
        }
        self.merge_dims_unchecked(outer, inner)
    }

    /// `merge_dims` on non-negative axes with `outer <= inner < rank`.
    pub(crate) fn merge_dims_unchecked(
        &self,
        outer: usize,
        inner: usize,
    ) -> Result<StructuredTensor, Error> {
        if outer == inner {
            return Ok(self.clone());
        }
        let nrows = self.nrows().unwrap_or(1);
        let (new_nrows, parts) = merge_partitions(nrows, self.row_partitions(), outer, inner)?;
        Ok(self.with_outer(self.rank() - 1, parts, new_nrows))
    }

    /// Replaces the struct's `drop` outer partitions (all of them) by `parts`.
    fn with_outer(&self, drop: usize, parts: Vec<RowPartition>, nrows: usize) -> StructuredTensor {
        let fields = self
            .fields()
            .iter()
            .map(|(k, v)| (k.clone(), v.replace_prefix(drop, &parts, nrows)))
            .collect();
        StructuredTensor::from_parts_unchecked(parts.len() + 1, nrows, parts, fields)
            .tagged(self.shape_dtype())
    }

    /// Splits the outer dimension into two by `partition` (whose `nvals` must equal
    /// `nrows`): the result has rank `rank + 1`.
    pub fn partition_outer_dimension(
        &self,
        partition: &RowPartition,
    ) -> Result<StructuredTensor, Error> {
        let nrows = self.nrows().ok_or_else(|| Error::RankTooLow {
            shape: self.shape(),
        })?;
        if partition.nvals() != nrows {
            return Err(Error::PartitionMismatch {
                nvals: partition.nvals(),
                nrows,
            });
        }
        let mut parts = Vec::with_capacity(self.rank());
        parts.push(partition.clone());
        parts.extend_from_slice(self.row_partitions());
        Ok(self.with_outer(self.rank() - 1, parts, partition.nrows()))
    }

    /// Copies the field at `source_path` next to its grandparent as `new_name`, merging the
    /// dimensions between the grandparent and the parent:
    /// `[{docs: [{tokens: [1, 2]}, {tokens: [3]}]}]` promoted on `("docs", "tokens")` gains
    /// `docs_tokens: [1, 2, 3]`.
    pub fn promote<P: Into<FieldPath>>(
        &self,
        source_path: P,
        new_name: &str,
    ) -> Result<StructuredTensor, Error> {
        let path: FieldPath = source_path.into();
        let names = path.names();
        if names.len() < 2 {
            return Err(Error::PromotePathTooShort { path });
        }
        let current = self.field_value(&path)?.clone();
        let grandparent = FieldPath(names[..names.len() - 2].to_vec());
        let parent = FieldPath(names[..names.len() - 1].to_vec());
        let new_parent_rank = if grandparent.is_empty() {
            self.rank()
        } else {
            self.field_value(&grandparent)?.rank()
        };
        let parent_rank = self.field_value(&parent)?.rank();
        let new_field = if new_parent_rank == parent_rank {
            current
        } else {
            let inner = parent_rank.min(current.rank().saturating_sub(1));
            if inner <= new_parent_rank {
                current
            } else {
                current.merge_dims_unchecked(new_parent_rank, inner)?
            }
        };
        self.with_updates(vec![(grandparent.child(new_name), Update::Set(new_field))])
    }

    /// A copy with fields set, transformed or deleted, each keyed by a name or a path.
    /// New values must have this struct's shape as the prefix of theirs; the result has the
    /// same shape, and its fields share its partitions.
    pub fn with_updates<P: Into<FieldPath>>(
        &self,
        updates: Vec<(P, Update)>,
    ) -> Result<StructuredTensor, Error> {
        let mut items: Vec<(FieldPath, Update)> =
            updates.into_iter().map(|(p, u)| (p.into(), u)).collect();
        items.sort_by(|a, b| a.0.cmp(&b.0));
        for w in items.windows(2) {
            let (prev, name) = (&w[0].0, &w[1].0);
            if name.names().starts_with(prev.names()) {
                return Err(Error::UpdateParentAndChild {
                    parent: prev.clone(),
                    child: name.clone(),
                });
            }
        }
        self.with_updates_impl(&FieldPath::root(), items)
    }

    fn with_updates_impl(
        &self,
        prefix: &FieldPath,
        items: Vec<(FieldPath, Update)>,
    ) -> Result<StructuredTensor, Error> {
        let mut fields = self.fields().clone();
        let full = |name: &[String]| {
            let mut all = prefix.0.clone();
            all.extend_from_slice(name);
            FieldPath(all)
        };
        for (name, update) in items {
            let names = name.names();
            if names.is_empty() || names[0].is_empty() {
                return Err(Error::UpdateEmptyName { path: full(names) });
            }
            let head = &names[0];
            if names.len() == 1 {
                match update {
                    Update::Delete => {
                        if fields.shift_remove(head).is_none() {
                            return Err(Error::UpdateDeleteMissing { path: full(names) });
                        }
                    }
                    Update::Set(v) => {
                        fields.insert(head.clone(), v);
                    }
                    Update::Transform(f) => {
                        let old = fields
                            .get(head)
                            .ok_or_else(|| Error::UpdateTransformMissing { path: full(names) })?;
                        let new = f(old)?;
                        fields.insert(head.clone(), new);
                    }
                }
            } else {
                let parent = full(&names[..1]);
                let nested = match fields.get(head) {
                    None => {
                        return Err(Error::UpdateMissingParent {
                            path: full(names),
                            parent,
                        })
                    }
                    Some(FieldValue::Array(_)) => {
                        return Err(Error::UpdateParentNotStruct {
                            path: full(names),
                            parent,
                        })
                    }
                    Some(FieldValue::Struct(s)) => s,
                };
                let rest = FieldPath(names[1..].to_vec());
                let updated = nested.with_updates_impl(&parent, vec![(rest, update)])?;
                fields.insert(head.clone(), FieldValue::Struct(updated));
            }
        }
        let updated = StructuredTensor::from_field_map(
            fields,
            &self.shape(),
            self.nrows(),
            Some(self.row_partitions().to_vec()),
        )
        .map_err(|e| Error::UpdateFailed {
            path: prefix.clone(),
            source: Box::new(e),
        })?;
        // TensorFlow's `_find_shape_dtype` counts the struct's own partitions too: an
        // int64 struct stays int64 whatever the new fields ask for
        if self.shape_dtype() == crate::values::DType::I64 {
            return updated.with_shape_dtype(crate::values::DType::I64);
        }
        Ok(updated)
    }
}
