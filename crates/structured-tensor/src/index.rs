//! Multi-dimensional indexing with TensorFlow's rules: integer, negative integer, slice
//! with step, and field-name keys.

use std::fmt;

use indexmap::IndexMap;

use crate::array::Array;
use crate::error::{Error, FieldPath};
use crate::structured::{FieldValue, StructuredTensor};

/// One key of a multi-dimensional index (one element of TensorFlow's `__getitem__` tuple).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// An integer index; negative counts from the end. Removes the dimension.
    Index(isize),
    /// A Python slice `start:stop:step` (`None` = default). Keeps the dimension.
    Slice {
        /// First index (default: the start, or the end for a negative step).
        start: Option<isize>,
        /// Stop index, exclusive.
        stop: Option<isize>,
        /// Step (default 1; never 0).
        step: Option<isize>,
    },
    /// A field name.
    Field(String),
    /// `...` (not supported, as in TensorFlow).
    Ellipsis,
    /// `tf.newaxis` (not supported, as in TensorFlow).
    NewAxis,
}

impl Key {
    /// The full slice `:`.
    pub fn all() -> Key {
        Key::Slice {
            start: None,
            stop: None,
            step: None,
        }
    }

    /// The slice `start:stop:step`.
    pub fn slice(start: Option<isize>, stop: Option<isize>, step: Option<isize>) -> Key {
        Key::Slice { start, stop, step }
    }

    /// A field-name key.
    pub fn field(name: &str) -> Key {
        Key::Field(name.to_string())
    }

    fn is_full_slice(&self) -> bool {
        matches!(
            self,
            Key::Slice {
                start: None,
                stop: None,
                step: None
            }
        )
    }

    fn is_positional(&self) -> bool {
        matches!(self, Key::Index(_) | Key::Slice { .. })
    }
}

impl From<isize> for Key {
    fn from(i: isize) -> Key {
        Key::Index(i)
    }
}

impl From<i32> for Key {
    fn from(i: i32) -> Key {
        Key::Index(i as isize)
    }
}

impl From<&str> for Key {
    fn from(name: &str) -> Key {
        Key::Field(name.to_string())
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |v: &Option<isize>| v.map(|x| x.to_string()).unwrap_or_default();
        match self {
            Key::Index(i) => write!(f, "{i}"),
            Key::Slice { start, stop, step } => {
                write!(f, "{}:{}", opt(start), opt(stop))?;
                if step.is_some() {
                    write!(f, ":{}", opt(step))?;
                }
                Ok(())
            }
            Key::Field(name) => write!(f, "'{name}'"),
            Key::Ellipsis => f.write_str("Ellipsis"),
            Key::NewAxis => f.write_str("tf.newaxis"),
        }
    }
}

/// The indices selected by a Python slice over a dimension of size `n`.
pub(crate) fn slice_indices(
    n: usize,
    start: Option<isize>,
    stop: Option<isize>,
    step: Option<isize>,
) -> Result<Vec<usize>, Error> {
    let n = n as isize;
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(Error::ZeroSliceStep);
    }
    let clamp = |v: isize, lo: isize, hi: isize| v.max(lo).min(hi);
    let norm = |v: isize| if v < 0 { v + n } else { v };
    let mut out = Vec::new();
    if step > 0 {
        let a = start.map_or(0, |s| clamp(norm(s), 0, n));
        let b = stop.map_or(n, |s| clamp(norm(s), 0, n));
        let mut i = a;
        while i < b {
            out.push(i as usize);
            match i.checked_add(step) {
                Some(next) => i = next,
                None => break,
            }
        }
    } else {
        let a = start.map_or(n - 1, |s| clamp(norm(s), -1, n - 1));
        let b = stop.map_or(-1, |s| clamp(norm(s), -1, n - 1));
        let mut i = a;
        while i > b {
            out.push(i as usize);
            match i.checked_add(step) {
                Some(next) => i = next,
                None => break,
            }
        }
    }
    Ok(out)
}

fn normalize_index(i: isize, n: usize, axis: usize) -> Result<usize, Error> {
    let ni = n as isize;
    let j = if i < 0 { i + ni } else { i };
    if j < 0 || j >= ni {
        return Err(Error::IndexOutOfRange {
            index: i,
            size: n,
            axis,
        });
    }
    Ok(j as usize)
}

impl Array {
    /// Indexes the array with integer and slice keys, one per leading dimension.
    pub fn get(&self, keys: &[Key]) -> Result<Array, Error> {
        if keys.len() > self.rank() {
            return Err(Error::TooManyIndices {
                rank: self.rank(),
                got: keys.len(),
            });
        }
        if let Some(k) = keys.iter().find(|k| !k.is_positional()) {
            return Err(Error::UnsupportedKey { key: k.to_string() });
        }
        select(self, keys, 0)
    }
}

fn select(a: &Array, keys: &[Key], axis: usize) -> Result<Array, Error> {
    let Some((key, rest)) = keys.split_first() else {
        return Ok(a.clone());
    };
    let n = a.nrows().unwrap_or(0);
    match key {
        Key::Index(i) => {
            let row = a.row(normalize_index(*i, n, axis)?)?;
            select(&row, rest, axis + 1)
        }
        Key::Slice { start, stop, step } => {
            let idx = slice_indices(n, *start, *stop, *step)?;
            if rest.is_empty() {
                if step.unwrap_or(1) == 1 {
                    let (lo, hi) = idx.first().map_or((0, 0), |&f| (f, f + idx.len()));
                    return a.gather_ranges(&[(lo, hi)]);
                }
                let ranges: Vec<(usize, usize)> = idx.iter().map(|&i| (i, i + 1)).collect();
                return a.gather_ranges(&ranges);
            }
            let dropped = rest.iter().filter(|k| matches!(k, Key::Index(_))).count();
            let part_rank = a.rank() - 1 - dropped;
            let mut parts = Vec::with_capacity(idx.len());
            for i in idx {
                parts.push(select(&a.row(i)?, rest, axis + 1)?);
            }
            Array::stack(&parts, part_rank, a.dtype(), a.is_dense())
        }
        _ => Err(Error::UnsupportedKey {
            key: key.to_string(),
        }),
    }
}

impl FieldValue {
    /// Indexes the value (see [`StructuredTensor::get`]).
    pub fn get(&self, keys: &[Key]) -> Result<FieldValue, Error> {
        match self {
            FieldValue::Array(a) => a.get(keys).map(FieldValue::Array),
            FieldValue::Struct(s) => s.get(keys),
        }
    }
}

impl StructuredTensor {
    /// Multi-dimensional indexing (TensorFlow's `__getitem__`). At rank 0 the first key must
    /// be a field name (the rest index into that field) or a full slice `:` (the rest index
    /// every field). At rank `R > 0`, up to `R` integer or slice keys select structs; a key
    /// list longer than `R` must have a field name at position `R`, and the other keys then
    /// index into that field: `people[3, "names", 0]` is `people[3]["names"][0]`.
    pub fn get(&self, keys: &[Key]) -> Result<FieldValue, Error> {
        let Some(first) = keys.first() else {
            return Ok(FieldValue::Struct(self.clone()));
        };
        let rank = self.rank();
        if rank == 0 {
            return match first {
                Key::Field(name) => self.field_value(name.as_str())?.get(&keys[1..]),
                k if k.is_full_slice() => {
                    let mut fields = IndexMap::new();
                    for (name, value) in self.fields() {
                        fields.insert(name.clone(), value.get(&keys[1..])?);
                    }
                    Ok(FieldValue::Struct(
                        StructuredTensor::from_field_map(fields, &[], None, None)?
                            .with_shape_dtype(self.shape_dtype())?,
                    ))
                }
                k => Err(Error::ScalarKey { key: k.to_string() }),
            };
        }
        if keys.len() <= rank {
            if let Some(k) = keys.iter().find(|k| !k.is_positional()) {
                return Err(Error::UnsupportedKey { key: k.to_string() });
            }
            // The shape of the result, from the struct's own partitions.
            let carrier = crate::array::Array::from_parts_unchecked(
                rank,
                self.nrows().unwrap_or(0),
                self.row_partitions().to_vec(),
                std::sync::Arc::new(crate::values::Values::Bool(vec![false; self.num_structs()])),
            );
            let shape = carrier.get(keys)?;
            let mut fields = IndexMap::new();
            for (name, value) in self.fields() {
                fields.insert(name.clone(), value.get(keys)?);
            }
            let new_rank = shape.rank();
            if new_rank == 0 {
                return Ok(FieldValue::Struct(
                    StructuredTensor::from_parts_unchecked(0, 1, Vec::new(), fields)
                        .tagged(self.shape_dtype()),
                ));
            }
            let parts = shape.row_partitions().to_vec();
            let nrows = shape.nrows().unwrap_or(0);
            let fields = fields
                .into_iter()
                .map(|(k, v)| (k, v.replace_prefix(new_rank - 1, &parts, nrows)))
                .collect();
            return Ok(FieldValue::Struct(
                StructuredTensor::from_parts_unchecked(new_rank, nrows, parts, fields)
                    .tagged(self.shape_dtype()),
            ));
        }
        let Key::Field(name) = &keys[rank] else {
            return Err(Error::KeyNotFieldName {
                key: keys[rank].to_string(),
                position: rank,
            });
        };
        let value = self
            .fields()
            .get(name)
            .ok_or_else(|| Error::FieldNotFound {
                path: FieldPath::from(name.as_str()),
            })?;
        let mut rest: Vec<Key> = keys[..rank].to_vec();
        rest.extend_from_slice(&keys[rank + 1..]);
        value.get(&rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(
        n: usize,
        start: Option<isize>,
        stop: Option<isize>,
        step: Option<isize>,
        expected: &[usize],
    ) {
        assert_eq!(slice_indices(n, start, stop, step).unwrap(), expected);
    }

    #[test]
    fn python_slice_semantics() {
        check(6, None, None, None, &[0, 1, 2, 3, 4, 5]);
        check(6, Some(5), None, None, &[5]);
        check(6, Some(3), None, None, &[3, 4, 5]);
        check(6, None, None, Some(2), &[0, 2, 4]);
        check(6, Some(1), None, Some(2), &[1, 3, 5]);
        check(6, Some(-2), None, None, &[4, 5]);
        check(6, None, Some(-4), None, &[0, 1]);
        check(6, None, None, Some(-1), &[5, 4, 3, 2, 1, 0]);
        check(6, Some(4), Some(1), Some(-2), &[4, 2]);
        check(6, Some(10), None, None, &[]);
        check(6, Some(-10), Some(2), None, &[0, 1]);
        check(0, None, None, None, &[]);
        assert_eq!(
            slice_indices(3, None, None, Some(0)),
            Err(Error::ZeroSliceStep)
        );
    }

    #[test]
    fn keys_print_like_python() {
        assert_eq!(Key::Index(-1).to_string(), "-1");
        assert_eq!(Key::all().to_string(), ":");
        assert_eq!(Key::slice(Some(1), None, Some(2)).to_string(), "1::2");
        assert_eq!(Key::field("f1").to_string(), "'f1'");
    }
}
