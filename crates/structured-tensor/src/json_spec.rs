//! `from_json_with_spec`: TensorFlow's `StructuredTensor.from_pyval(pyval, typespec)`. The
//! spec fixes every field's dtype, rank, static sizes and (for ragged fields) which
//! dimensions may be ragged; values that do not fit are errors naming the path.

use indexmap::IndexMap;
use serde_json::Value;

use crate::array::Array;
use crate::error::{Error, FieldPath, ShapeDisplay};
use crate::partition::{self, RowPartition};
use crate::spec::{FieldSpec, Spec};
use crate::strings::BytesColumn;
use crate::structured::{FieldValue, StructuredTensor};
use crate::values::{DType, Values};

fn mismatch(path: &FieldPath, problem: impl Into<String>) -> Error {
    Error::SpecMismatch {
        path: path.clone(),
        problem: problem.into(),
    }
}

fn parse_error(path: &FieldPath, source: Error) -> Error {
    match source {
        // already placed
        e @ (Error::SpecMismatch { .. } | Error::ParsePath { .. }) => e,
        e => Error::ParsePath {
            path: path.clone(),
            source: Box::new(e),
        },
    }
}

/// A short form of a JSON value for messages (at most 60 characters).
fn brief(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= 60 {
        return text;
    }
    let cut: String = text.chars().take(57).collect();
    format!("{cut}...")
}

/// What kind of JSON value `v` is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a dict",
    }
}

/// The list depth at which `v` holds objects: `Some(d)` when every object sits at depth
/// `d`, `None` when it holds none; an error for objects at two depths.
fn dict_depth(
    v: &Value,
    depth: usize,
    found: &mut Option<usize>,
    path: &FieldPath,
) -> Result<(), Error> {
    match v {
        Value::Object(_) => match *found {
            Some(d) if d != depth => Err(Error::InconsistentDictDepth {
                path: path.clone(),
                first: d,
                second: depth,
            }),
            _ => {
                *found = Some(depth);
                Ok(())
            }
        },
        Value::Array(items) => items
            .iter()
            .try_for_each(|x| dict_depth(x, depth + 1, found, path)),
        _ => Ok(()),
    }
}

/// The nesting depth of a value made only of (nested) empty lists, `None` when it holds
/// anything else.
fn empty_list_depth(v: &Value) -> Option<usize> {
    let items = v.as_array()?;
    let mut depth = 1;
    for x in items {
        depth = depth.max(1 + empty_list_depth(x)?);
    }
    Some(depth)
}

/// Elements with the type the spec asks for: integers into the narrower integer types
/// when they fit, integers or floats into floats, strings into bytes; anything else (a
/// float into an integer type, a bool into a number, ...) is refused, as
/// `tf.constant(value, dtype)` refuses it.
fn convert_values(values: &Values, dtype: DType) -> Result<Values, Error> {
    let refuse = |from: DType| Error::SpecValue {
        problem: format!("{from} values cannot be read as {dtype}"),
    };
    if values.is_empty() {
        return Ok(Values::with_capacity(dtype, 0));
    }
    if values.dtype() == dtype {
        return Ok(values.clone());
    }
    Ok(match (values, dtype) {
        (Values::I64(v), DType::I32) => Values::I32(
            v.iter()
                .map(|&x| {
                    i32::try_from(x).map_err(|_| Error::SpecValue {
                        problem: format!("{x} does not fit in int32"),
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
        (Values::I64(v), DType::U8) => Values::U8(
            v.iter()
                .map(|&x| {
                    u8::try_from(x).map_err(|_| Error::SpecValue {
                        problem: format!("{x} does not fit in uint8"),
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
        (Values::I64(v), DType::F64) => Values::F64(v.iter().map(|&x| x as f64).collect()),
        (Values::I64(v), DType::F32) => Values::F32(v.iter().map(|&x| x as f32).collect()),
        (Values::F64(v), DType::F32) => Values::F32(v.iter().map(|&x| x as f32).collect()),
        (Values::Str(v), DType::Bytes) => {
            Values::Bytes(v.iter().map(str::as_bytes).collect::<BytesColumn>())
        }
        (other, _) => return Err(refuse(other.dtype())),
    })
}

/// `shape` with `None` as "any size": compatible when the ranks agree and every known size
/// matches.
fn compatible(spec: &[Option<usize>], actual: &[Option<usize>]) -> bool {
    spec.len() == actual.len()
        && spec
            .iter()
            .zip(actual)
            .all(|(s, a)| s.is_none() || a.is_none() || s == a)
}

/// An array of `rank` dimensions with no values: `partitions` below `nrows` rows padded
/// with empty partitions (uniform where the spec gives a size).
fn pad_empty(array: Array, shape: &[Option<usize>]) -> Result<Array, Error> {
    let mut partitions = array.row_partitions().to_vec();
    let nrows = array.nrows().unwrap_or(0);
    while partitions.len() + 1 < shape.len() {
        let rows = partitions.last().map_or(nrows, RowPartition::nvals);
        debug_assert_eq!(rows, 0, "only empty arrays are padded");
        let p = match shape[partitions.len() + 1] {
            Some(len) => partition::uniform(len, 0)?,
            None => partition::from_splits(vec![0])?,
        };
        partitions.push(p);
    }
    Array::from_partitions(nrows, partitions, array.values().clone())
}

/// A leaf field of spec `spec` (`Tensor` or `Ragged`) from `v`.
fn typed_array(v: &Value, spec: &FieldSpec, path: &FieldPath) -> Result<Array, Error> {
    let (shape, dtype, ragged_rank) = match spec {
        FieldSpec::Tensor { shape, dtype } => (shape, *dtype, None),
        FieldSpec::Ragged {
            shape,
            dtype,
            ragged_rank,
        } => (shape, *dtype, Some(*ragged_rank)),
        FieldSpec::Struct(_) | FieldSpec::Nullable(_) => {
            unreachable!("structs and nullable leaves are read by typed_value")
        }
    };
    if matches!(v, Value::Object(_)) {
        return Err(mismatch(path, format!("{} vs {spec}", brief(v))));
    }
    if !v.is_array() && !shape.is_empty() {
        return Err(mismatch(
            path,
            format!(
                "{} vs {spec} (a scalar where rank {} is expected)",
                brief(v),
                shape.len()
            ),
        ));
    }
    let untyped = Array::from_json(v).map_err(|e| parse_error(path, e))?;
    let values = convert_values(untyped.values(), dtype).map_err(|e| parse_error(path, e))?;
    let mut array = untyped.with_values(values)?;
    if array.values().is_empty() && array.rank() < shape.len() && ragged_rank.is_some() {
        // ragged.constant gives an empty value the spec's rank
        array = pad_empty(array, shape)?;
    }
    let actual = array.shape();
    if !compatible(shape, &actual) {
        return Err(mismatch(
            path,
            format!(
                "{} has shape {}, the spec {spec}",
                brief(v),
                ShapeDisplay(&actual)
            ),
        ));
    }
    match ragged_rank {
        None => {
            if let Some(axis) = array
                .row_partitions()
                .iter()
                .position(|p| p.uniform_row_length().is_none())
            {
                return Err(parse_error(
                    path,
                    Error::SpecValue {
                        problem: format!(
                            "Can't convert non-rectangular Python sequence to Tensor \
                             (dimension {} is ragged)",
                            axis + 1
                        ),
                    },
                ));
            }
        }
        Some(ragged_rank) => {
            if let Some(k) = array
                .row_partitions()
                .iter()
                .enumerate()
                .skip(ragged_rank)
                .find(|(_, p)| p.uniform_row_length().is_none())
                .map(|(k, _)| k)
            {
                return Err(parse_error(
                    path,
                    Error::SpecValue {
                        problem: format!(
                            "dimension {} is ragged but the spec has ragged_rank={ragged_rank} \
                             (the inner values must have a uniform shape)",
                            k + 1
                        ),
                    },
                ));
            }
        }
    }
    Ok(array)
}

/// A field of spec `spec` from `v`.
fn typed_value(v: &Value, spec: &FieldSpec, path: &FieldPath) -> Result<FieldValue, Error> {
    match spec {
        FieldSpec::Struct(s) => Ok(FieldValue::Struct(typed_struct(v, s, path)?)),
        FieldSpec::Nullable(inner) => match typed_value(v, inner, path)? {
            FieldValue::Array(a) => {
                let n = a.values().len();
                Ok(FieldValue::Array(a.with_validity(Some(
                    crate::validity::Validity::all_valid(n),
                ))?))
            }
            other => Ok(other),
        },
        leaf => Ok(FieldValue::Array(typed_array(v, leaf, path)?)),
    }
}

/// For each field name, the nested lists (like the outer lists of `v`, `depth` deep) of
/// that field's values in the objects at depth `depth`; every object must have exactly the
/// spec's keys.
fn split_fields(
    v: &Value,
    depth: usize,
    spec: &Spec,
    path: &FieldPath,
    out: &mut IndexMap<String, Value>,
) -> Result<(), Error> {
    fn build(v: &Value, depth: usize, name: &str) -> Value {
        if depth == 0 {
            return v
                .as_object()
                .and_then(|o| o.get(name))
                .cloned()
                .unwrap_or(Value::Null);
        }
        Value::Array(
            v.as_array()
                .map(|items| items.iter().map(|x| build(x, depth - 1, name)).collect())
                .unwrap_or_default(),
        )
    }
    fn check(v: &Value, depth: usize, spec: &Spec, path: &FieldPath) -> Result<(), Error> {
        if depth == 0 {
            let Some(object) = v.as_object() else {
                return Err(Error::ExpectedDict {
                    path: path.clone(),
                    depth: 0,
                    found: kind(v),
                });
            };
            for key in object.keys() {
                if !spec.fields.contains_key(key) {
                    return Err(mismatch(
                        path,
                        format!("key '{key}' is not a field of the spec {spec}"),
                    ));
                }
            }
            if let Some(missing) = spec.fields.keys().find(|k| !object.contains_key(*k)) {
                return Err(mismatch(
                    path,
                    format!("key '{missing}' of the spec is missing from {}", brief(v)),
                ));
            }
            return Ok(());
        }
        match v.as_array() {
            Some(items) => items
                .iter()
                .try_for_each(|x| check(x, depth - 1, spec, path)),
            None => Err(Error::ExpectedDict {
                path: path.clone(),
                depth,
                found: kind(v),
            }),
        }
    }
    check(v, depth, spec, path)?;
    for name in spec.fields.keys() {
        out.insert(name.clone(), build(v, depth, name));
    }
    Ok(())
}

/// A struct array of spec `spec` from `v`.
fn typed_struct(v: &Value, spec: &Spec, path: &FieldPath) -> Result<StructuredTensor, Error> {
    let rank = spec.rank();
    let depth = match v {
        Value::Object(_) => Some(0),
        Value::Array(_) => {
            let mut found = None;
            dict_depth(v, 0, &mut found, path)?;
            found
        }
        _ => {
            return Err(mismatch(path, format!("{} vs {spec}", brief(v))));
        }
    };
    let Some(depth) = depth else {
        // no object at all: only nested empty lists fit a struct spec
        let Some(empty) = empty_list_depth(v) else {
            return Err(mismatch(path, format!("{} vs {spec}", brief(v))));
        };
        if empty > rank {
            return Err(mismatch(
                path,
                format!(
                    "{} vs {spec} (rank mismatch: lists {empty} deep for rank {rank})",
                    brief(v)
                ),
            ));
        }
        return empty_struct(v, spec, path);
    };
    if depth != rank {
        return Err(mismatch(
            path,
            format!(
                "{} vs {spec} (rank mismatch: objects at depth {depth} for rank {rank})",
                brief(v)
            ),
        ));
    }
    let mut columns = IndexMap::new();
    split_fields(v, depth, spec, path, &mut columns)?;
    let mut fields = IndexMap::new();
    for (name, field_spec) in &spec.fields {
        let column = &columns[name];
        fields.insert(
            name.clone(),
            typed_value(column, field_spec, &path.child(name))?,
        );
    }
    let st = if fields.is_empty() {
        // a struct spec without fields: the shape comes from the lists of `{}`
        StructuredTensor::from_json(v).map_err(|e| parse_error(path, e))?
    } else {
        StructuredTensor::from_fields(fields, &spec.shape, None, None)
            .map_err(|e| parse_error(path, e))?
    };
    if !compatible(&spec.shape, &st.shape()) {
        return Err(mismatch(
            path,
            format!("shape {} vs {spec}", ShapeDisplay(&st.shape())),
        ));
    }
    Ok(st)
}

/// A struct array of spec `spec` from nested empty lists (no struct in them): the lists
/// give the outer dimensions, each field is empty with the spec's dtype.
fn empty_struct(v: &Value, spec: &Spec, path: &FieldPath) -> Result<StructuredTensor, Error> {
    let rank = spec.rank();
    let carrier = pad_empty(
        Array::from_json(v)
            .map_err(|e| parse_error(path, e))?
            .with_values(Values::Bool(Vec::new()))?,
        &spec.shape,
    )?;
    if carrier.rank() != rank {
        return Err(mismatch(path, format!("{} vs {spec}", brief(v))));
    }
    let nrows = carrier.nrows().unwrap_or(0);
    let outer = carrier.row_partitions().to_vec();
    let mut fields = IndexMap::new();
    for (name, field_spec) in &spec.fields {
        fields.insert(name.clone(), empty_field(field_spec, nrows, &outer)?);
    }
    let st = if fields.is_empty() {
        StructuredTensor::from_shape(rank, nrows, outer)?
    } else {
        StructuredTensor::from_fields(fields, &spec.shape, Some(nrows), Some(outer))
            .map_err(|e| parse_error(path, e))?
    };
    if !compatible(&spec.shape, &st.shape()) {
        return Err(mismatch(
            path,
            format!("shape {} vs {spec}", ShapeDisplay(&st.shape())),
        ));
    }
    Ok(st)
}

/// A field with no elements under the outer dimensions `outer` (`nrows` rows).
fn empty_field(
    spec: &FieldSpec,
    nrows: usize,
    outer: &[RowPartition],
) -> Result<FieldValue, Error> {
    let own_dims = |shape: &[Option<usize>]| -> Result<Vec<RowPartition>, Error> {
        let mut parts = outer.to_vec();
        while parts.len() + 1 < shape.len() {
            let p = match shape[parts.len() + 1] {
                Some(len) => partition::uniform(len, 0)?,
                None => partition::from_splits(vec![0])?,
            };
            parts.push(p);
        }
        Ok(parts)
    };
    match spec {
        FieldSpec::Nullable(inner) => match empty_field(inner, nrows, outer)? {
            FieldValue::Array(a) => Ok(FieldValue::Array(
                a.with_validity(Some(crate::validity::Validity::all_valid(0)))?,
            )),
            other => Ok(other),
        },
        FieldSpec::Tensor { shape, dtype } | FieldSpec::Ragged { shape, dtype, .. } => {
            let values = Values::with_capacity(*dtype, 0);
            if shape.len() <= 1 {
                return Ok(FieldValue::Array(Array::from_values(values)));
            }
            Ok(FieldValue::Array(Array::from_partitions(
                nrows,
                own_dims(shape)?,
                values,
            )?))
        }
        FieldSpec::Struct(s) => {
            let parts = own_dims(&s.shape)?;
            let mut fields = IndexMap::new();
            for (name, f) in &s.fields {
                fields.insert(name.clone(), empty_field(f, nrows, &parts)?);
            }
            let st = if fields.is_empty() {
                StructuredTensor::from_shape(s.rank(), nrows, parts)?
            } else {
                StructuredTensor::from_fields(fields, &s.shape, Some(nrows), Some(parts))?
            };
            Ok(FieldValue::Struct(st))
        }
    }
}

impl StructuredTensor {
    /// TensorFlow's `StructuredTensor.from_pyval(pyval, typespec)`: `value` read as the
    /// struct array `spec` describes. The spec fixes each field's dtype (JSON integers
    /// become `int32`/`uint8` when they fit, `float32`/`float64` always; floats become
    /// `float32` or stay `float64`; strings can be `bytes`; any other change is refused,
    /// as `tf.constant(value, dtype)` refuses it), its rank and static sizes (they must be
    /// compatible), which dimensions may be ragged (a `Tensor` field must be rectangular,
    /// a `Ragged` one uniform after its `ragged_rank`), and the field names (every object
    /// has exactly the spec's keys). Nested empty lists fit any spec of at least their
    /// depth, fields empty.
    ///
    /// Errors say where: `Value at ('a',) does not match typespec: ...` for a value that
    /// does not fit the spec, `Error parsing path ('a',): 3000000000 does not fit in
    /// int32` for elements that cannot be converted.
    pub fn from_json_with_spec(value: &Value, spec: &Spec) -> Result<StructuredTensor, Error> {
        typed_struct(value, spec, &FieldPath::root())
    }
}

impl Array {
    /// A leaf array read as `spec` (a `Tensor` or `Ragged` field spec) says, with the
    /// rules of [`StructuredTensor::from_json_with_spec`].
    pub fn from_json_with_spec(value: &Value, spec: &FieldSpec) -> Result<Array, Error> {
        match spec {
            FieldSpec::Struct(_) => Err(mismatch(
                &FieldPath::root(),
                format!("{} vs {spec} (a struct spec for an array)", brief(value)),
            )),
            leaf => match typed_value(value, leaf, &FieldPath::root())? {
                FieldValue::Array(a) => Ok(a),
                FieldValue::Struct(_) => unreachable!("a leaf spec gives an array"),
            },
        }
    }
}
