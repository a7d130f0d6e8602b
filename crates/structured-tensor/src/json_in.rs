//! JSON ingestion: TensorFlow's `from_pyval` rules (struct depth, key union, dtype
//! inference, ragged nesting) applied column by column without copying JSON values.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use crate::array::Array;
use crate::error::{is_valid_field_name, Error, FieldPath};
use crate::partition::{self, RowPartition};
use crate::structured::{FieldValue, StructuredTensor};
use crate::values::{DType, Scalar, Values};

/// A nested list described by `nrows`, the partitions of its outer levels and its
/// elements at depth `parts.len() + 1` (borrowed from the JSON document).
struct Nested<'a> {
    nrows: usize,
    parts: Vec<RowPartition>,
    leaves: Vec<&'a Value>,
}

impl Nested<'_> {
    fn depth(&self) -> usize {
        self.parts.len() + 1
    }
}

/// A short description of a JSON value for messages.
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

impl StructuredTensor {
    /// Builds a struct array from JSON (TensorFlow's `from_pyval`): an object is a rank-0
    /// struct; a list whose objects all sit at list depth `d` is a rank-`d` struct array whose
    /// schema is the union of the keys. Integers stay `int64`, floats `float64` (a list mixing
    /// the two becomes `float64`), strings stay strings. A list of nothing but nested empty
    /// lists is a struct array with no fields of that shape. Every invalid input is an
    /// `Error`, never a panic.
    pub fn from_json(value: &Value) -> Result<StructuredTensor, Error> {
        let path = FieldPath::root();
        match value {
            Value::Object(map) => from_dict(map, &path),
            Value::Array(items) => {
                let nested = Nested {
                    nrows: items.len(),
                    parts: Vec::new(),
                    leaves: items.iter().collect(),
                };
                match scan_nested(&nested, &path)?.dict_depth {
                    Some(rank) => from_list_of_dicts(nested, rank, &path),
                    None => from_empty_lists(nested),
                }
            }
            other => Err(Error::NotAStruct { found: kind(other) }),
        }
    }

    /// Parses JSON text, then [`StructuredTensor::from_json`].
    pub fn from_json_str(text: &str) -> Result<StructuredTensor, Error> {
        let value: Value = serde_json::from_str(text).map_err(|e| Error::Json {
            message: e.to_string(),
        })?;
        Self::from_json(&value)
    }
}

impl Array {
    /// Builds a leaf array from JSON the way TensorFlow's `ragged.constant` does: a scalar is
    /// rank 0, a flat list rank 1 (dense), deeper lists ragged in every dimension.
    pub fn from_json(value: &Value) -> Result<Array, Error> {
        match value {
            Value::Array(items) => {
                let nested = Nested {
                    nrows: items.len(),
                    parts: Vec::new(),
                    leaves: items.iter().collect(),
                };
                let scan = scan_nested(&nested, &FieldPath::root())?;
                if scan.dict_depth.is_some() {
                    return Err(Error::ExpectedDict {
                        path: FieldPath::root(),
                        depth: scan.dict_depth.unwrap_or(0),
                        found: "a dict",
                    });
                }
                ragged_constant(nested, scan)
            }
            Value::Object(_) => Err(Error::ExpectedDict {
                path: FieldPath::root(),
                depth: 0,
                found: "a dict",
            }),
            scalar => Ok(Array::scalar(to_scalar(scalar)?)),
        }
    }
}

/// A field value from JSON.
fn convert_value(value: &Value, path: &FieldPath) -> Result<FieldValue, Error> {
    match value {
        Value::Object(map) => Ok(FieldValue::Struct(from_dict(map, path)?)),
        Value::Array(items) => convert_nested(
            Nested {
                nrows: items.len(),
                parts: Vec::new(),
                leaves: items.iter().collect(),
            },
            path,
        ),
        scalar => to_scalar(scalar)
            .map(|s| FieldValue::Array(Array::scalar(s)))
            .map_err(|e| parse_error(path, e)),
    }
}

fn parse_error(path: &FieldPath, source: Error) -> Error {
    Error::ParsePath {
        path: path.clone(),
        source: Box::new(source),
    }
}

/// A rank-0 struct from a JSON object.
fn from_dict(
    map: &serde_json::Map<String, Value>,
    path: &FieldPath,
) -> Result<StructuredTensor, Error> {
    let mut fields = BTreeMap::new();
    for (key, value) in map {
        let child = path.child(key);
        fields.insert(key.clone(), convert_value(value, &child)?);
    }
    if let Some(bad) = fields.keys().find(|k| !is_valid_field_name(k)) {
        return Err(Error::InvalidFieldName {
            name: bad.clone(),
            path: path.clone(),
        });
    }
    Ok(StructuredTensor::from_parts_unchecked(
        0,
        1,
        Vec::new(),
        fields,
    ))
}

/// A nested list: a struct array when it holds dicts, else a leaf array.
fn convert_nested(nested: Nested<'_>, path: &FieldPath) -> Result<FieldValue, Error> {
    let scan = scan_nested(&nested, path)?;
    match scan.dict_depth {
        Some(rank) => Ok(FieldValue::Struct(from_list_of_dicts(nested, rank, path)?)),
        None => ragged_constant(nested, scan)
            .map(FieldValue::Array)
            .map_err(|e| parse_error(path, e)),
    }
}

/// What one pass over a nested list finds: the depth of its dicts (an inconsistency is an
/// error at once, as in TensorFlow), and, for a list without dicts, the depth of its scalars,
/// its deepest list and its dtype (an error there is kept until we know there are no dicts).
struct Scan {
    dict_depth: Option<usize>,
    scalar_depth: Option<usize>,
    max_depth: usize,
    dtype: Option<DType>,
    deferred: Option<Error>,
}

fn scan_nested(nested: &Nested<'_>, path: &FieldPath) -> Result<Scan, Error> {
    let base = nested.depth();
    let mut scan = Scan {
        dict_depth: None,
        scalar_depth: None,
        max_depth: base,
        dtype: None,
        deferred: None,
    };
    for leaf in &nested.leaves {
        scan_value(leaf, base, &mut scan, path)?;
    }
    Ok(scan)
}

fn scan_value(v: &Value, at: usize, scan: &mut Scan, path: &FieldPath) -> Result<(), Error> {
    match v {
        Value::Object(_) => match scan.dict_depth {
            None => scan.dict_depth = Some(at),
            Some(prev) if prev != at => {
                return Err(Error::InconsistentDictDepth {
                    path: path.clone(),
                    first: prev,
                    second: at,
                })
            }
            Some(_) => {}
        },
        Value::Array(items) => {
            scan.max_depth = scan.max_depth.max(at + 1);
            for item in items {
                scan_value(item, at + 1, scan, path)?;
            }
        }
        scalar => {
            if scan.deferred.is_some() || scan.dict_depth.is_some() {
                return Ok(());
            }
            match scan.scalar_depth {
                None => scan.scalar_depth = Some(at),
                Some(d) if d != at => {
                    scan.deferred = Some(Error::ScalarDepthMismatch {
                        first: d,
                        second: at,
                    });
                    return Ok(());
                }
                Some(_) => {}
            }
            let combined = scalar_dtype(scalar).and_then(|t| match scan.dtype {
                None => Ok(t),
                Some(prev) => combine(prev, t),
            });
            match combined {
                Ok(t) => scan.dtype = Some(t),
                Err(e) => scan.deferred = Some(e),
            }
        }
    }
    Ok(())
}

/// Descends one list level: every leaf must be a list; returns the new partition and the
/// children.
fn expand<'a>(
    leaves: &[&'a Value],
    depth: usize,
    path: &FieldPath,
) -> Result<(RowPartition, Vec<&'a Value>), Error> {
    let mut splits = Vec::with_capacity(leaves.len() + 1);
    splits.push(0i32);
    let mut children = Vec::new();
    for leaf in leaves {
        match leaf {
            Value::Array(items) => {
                children.extend(items.iter());
                splits.push(partition::offset(children.len())?);
            }
            other => {
                return Err(Error::ExpectedDict {
                    path: path.clone(),
                    depth,
                    found: kind(other),
                })
            }
        }
    }
    Ok((partition::from_splits(splits)?, children))
}

/// A struct array of rank `rank` from a nested list whose dicts sit at depth `rank`.
fn from_list_of_dicts(
    nested: Nested<'_>,
    rank: usize,
    path: &FieldPath,
) -> Result<StructuredTensor, Error> {
    let Nested {
        nrows,
        mut parts,
        mut leaves,
    } = nested;
    let mut depth = parts.len() + 1;
    while depth < rank {
        let (p, children) = expand(&leaves, depth, path)?;
        parts.push(p);
        leaves = children;
        depth += 1;
    }
    let columns = split_columns(&leaves, rank, path)?;
    let mut fields = BTreeMap::new();
    for (key, column) in columns {
        let child = path.child(key);
        let value = convert_nested(
            Nested {
                nrows,
                parts: parts.clone(),
                leaves: column,
            },
            &child,
        )?;
        fields.insert(key.to_string(), value);
    }
    if let Some(bad) = fields.keys().find(|k| !is_valid_field_name(k)) {
        return Err(parse_error(
            path,
            Error::InvalidFieldName {
                name: bad.clone(),
                path: path.clone(),
            },
        ));
    }
    Ok(StructuredTensor::from_parts_unchecked(
        rank, nrows, parts, fields,
    ))
}

/// The column of every key: one pass over the dicts when they all have the keys of the
/// first one (the common case), else the union of the keys with a check that every dict
/// has each of them.
fn split_columns<'a>(
    leaves: &[&'a Value],
    rank: usize,
    path: &FieldPath,
) -> Result<Vec<(&'a str, Vec<&'a Value>)>, Error> {
    let as_dict = |leaf: &'a Value| match leaf {
        Value::Object(map) => Ok(map),
        other => Err(Error::ExpectedDict {
            path: path.clone(),
            depth: rank,
            found: kind(other),
        }),
    };
    let Some(first) = leaves.first() else {
        return Ok(Vec::new());
    };
    let first = as_dict(first)?;
    let mut columns: Vec<(&str, Vec<&Value>)> = first
        .keys()
        .map(|k| (k.as_str(), Vec::with_capacity(leaves.len())))
        .collect();
    let mut uniform = true;
    for leaf in leaves {
        let map = as_dict(leaf)?;
        if map.len() != columns.len() {
            uniform = false;
            break;
        }
        let mut same = true;
        for ((key, value), (name, column)) in map.iter().zip(columns.iter_mut()) {
            if key != name {
                same = false;
                break;
            }
            column.push(value);
        }
        if !same {
            uniform = false;
            break;
        }
    }
    if uniform {
        return Ok(columns);
    }
    // Slow path: the union of the keys, then every dict must have every key.
    let mut dicts = Vec::with_capacity(leaves.len());
    let mut keys: BTreeSet<&str> = BTreeSet::new();
    for leaf in leaves {
        let map = as_dict(leaf)?;
        keys.extend(map.keys().map(String::as_str));
        dicts.push(map);
    }
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let mut column = Vec::with_capacity(dicts.len());
        for map in &dicts {
            match map.get(key) {
                Some(v) => column.push(v),
                None => {
                    return Err(Error::MissingKey {
                        path: path.clone(),
                        key: key.to_string(),
                    })
                }
            }
        }
        out.push((key, column));
    }
    Ok(out)
}

/// A list of nested empty lists: a struct array with no fields and the list's shape.
fn from_empty_lists(nested: Nested<'_>) -> Result<StructuredTensor, Error> {
    let Nested {
        nrows,
        mut parts,
        mut leaves,
    } = nested;
    let mut depth = 1;
    while !leaves.is_empty() {
        if !leaves.iter().all(|l| l.is_array()) {
            return Err(Error::NotAStruct {
                found: "a list of values",
            });
        }
        let (p, children) = expand(&leaves, depth, &FieldPath::root())?;
        parts.push(p);
        leaves = children;
        depth += 1;
    }
    Ok(StructuredTensor::from_parts_unchecked(
        parts.len() + 1,
        nrows,
        parts,
        BTreeMap::new(),
    ))
}

/// The dtype of a JSON scalar.
fn scalar_dtype(v: &Value) -> Result<DType, Error> {
    match v {
        Value::Null => Err(Error::NullValue),
        Value::Bool(_) => Ok(DType::Bool),
        Value::String(_) => Ok(DType::Str),
        Value::Number(n) => {
            if n.is_i64() {
                Ok(DType::I64)
            } else if n.is_u64() {
                Err(Error::IntegerOutOfRange {
                    value: n.to_string(),
                })
            } else {
                Ok(DType::F64)
            }
        }
        _ => unreachable!("not a scalar"),
    }
}

/// The dtype of a list holding both dtypes.
fn combine(a: DType, b: DType) -> Result<DType, Error> {
    match (a, b) {
        _ if a == b => Ok(a),
        (DType::I64, DType::F64) | (DType::F64, DType::I64) => Ok(DType::F64),
        _ => Err(Error::MixedTypes {
            first: a,
            second: b,
        }),
    }
}

/// A JSON scalar as a `Scalar`.
fn to_scalar(v: &Value) -> Result<Scalar, Error> {
    Ok(match scalar_dtype(v)? {
        DType::I64 => Scalar::I64(v.as_i64().unwrap_or_default()),
        DType::F64 => Scalar::F64(v.as_f64().unwrap_or_default()),
        DType::Bool => Scalar::Bool(v.as_bool().unwrap_or_default()),
        DType::Str => Scalar::Str(v.as_str().unwrap_or_default().to_string()),
    })
}

/// Appends the scalars of `leaves` (all at one depth) to `values`, converting to its dtype.
fn push_scalars(values: &mut Values, leaves: &[&Value]) {
    match values {
        Values::I64(out) => out.extend(leaves.iter().map(|v| v.as_i64().unwrap_or_default())),
        Values::F64(out) => out.extend(leaves.iter().map(|v| v.as_f64().unwrap_or_default())),
        Values::Bool(out) => out.extend(leaves.iter().map(|v| v.as_bool().unwrap_or_default())),
        Values::Str(out) => out.extend(
            leaves
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_string()),
        ),
    }
}

/// TensorFlow's `ragged.constant` on a nested list with no dicts: scalars at one depth
/// `D`; the result has rank `D`, ragged in every dimension below the given outer ones.
fn ragged_constant(nested: Nested<'_>, scan: Scan) -> Result<Array, Error> {
    if let Some(e) = scan.deferred {
        return Err(e);
    }
    let total_depth = match scan.scalar_depth {
        Some(s) => {
            if scan.max_depth > s {
                return Err(Error::EmptyListTooDeep {
                    scalar_depth: s,
                    empty_depth: scan.max_depth,
                });
            }
            s
        }
        None => scan.max_depth,
    };
    let dtype = scan.dtype.unwrap_or(DType::F64);
    let Nested {
        nrows,
        mut parts,
        mut leaves,
    } = nested;
    let mut depth = parts.len() + 1;
    while depth < total_depth {
        let (p, children) = expand(&leaves, depth, &FieldPath::root())?;
        parts.push(p);
        leaves = children;
        depth += 1;
    }
    let mut values = Values::with_capacity(dtype, leaves.len());
    push_scalars(&mut values, &leaves);
    Ok(Array::from_parts_unchecked(
        parts.len() + 1,
        nrows,
        parts,
        Arc::new(values),
    ))
}
