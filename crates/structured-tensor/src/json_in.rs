//! JSON ingestion: TensorFlow's `from_pyval` rules (struct depth, key union, dtype
//! inference, ragged nesting) applied column by column without copying JSON values.

use std::sync::Arc;

use indexmap::{IndexMap, IndexSet};
use rayon::prelude::*;
use serde_json::Value;

use crate::array::Array;
use crate::error::{is_valid_field_name, Error, FieldPath};
use crate::json_tree::{Column, Node, View, MAX_NESTING};
use crate::partition::{self, RowPartition};
use crate::structured::{FieldValue, StructuredTensor};
use crate::values::{DType, Scalar, Values};

/// Lists of at least this many structs convert their columns in parallel.
const PARALLEL_STRUCTS: usize = 4096;

fn too_deep(path: &FieldPath) -> Error {
    Error::NestingTooDeep {
        limit: MAX_NESTING,
        path: path.clone(),
    }
}

/// A nested list described by `nrows`, the partitions of its outer levels and its
/// elements at depth `parts.len() + 1` (borrowed from the JSON document).
struct Nested<'a, N> {
    nrows: usize,
    parts: Vec<RowPartition>,
    leaves: Vec<&'a N>,
}

impl<N> Nested<'_, N> {
    fn depth(&self) -> usize {
        self.parts.len() + 1
    }
}

/// A short description of a JSON value for messages.
fn kind<N: Node>(v: &N) -> &'static str {
    match v.view() {
        View::Null => "null",
        View::Bool(_) => "a bool",
        View::Int(_) | View::BigInt(_) | View::Float(_) => "a number",
        View::Str(_) => "a string",
        View::List(_) => "a list",
        View::Dict(_) => "a dict",
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
        from_root(value, true)
    }

    /// Builds a struct array from JSON text: the same rules and result as
    /// [`StructuredTensor::from_json`] on the value Python's `json` module would parse
    /// (which is what TensorFlow's `from_pyval` sees), without building a
    /// `serde_json::Value` on the way. Text the fast reader does not take (a syntax error)
    /// goes through `serde_json`, whose messages report it.
    ///
    /// Numbers follow Python: a literal without fraction or exponent is an integer, so
    /// `-0` is int64 0 (`-0.0` is float64 -0.0), and an integer beyond int64 is
    /// [`Error::IntegerOutOfRange`]. `serde_json::from_str` differs on exactly these: it
    /// reads `-0` and integers below `i64::MIN` or above `u64::MAX` as floats, so
    /// `from_json` on its result (which takes every `f64` as a float, as `from_pyval` takes
    /// a Python float) gives float64 there. A repeated key keeps its last value, as in
    /// Python and `serde_json`.
    pub fn from_json_str(text: &str) -> Result<StructuredTensor, Error> {
        if let Some(st) = crate::text_columns::read_records(text) {
            return Ok(st);
        }
        if let Ok(root) = crate::text::parse(text) {
            return from_root(&root, true);
        }
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
        match value.view() {
            View::List(items) => {
                let nested = Nested {
                    nrows: items.len(),
                    parts: Vec::new(),
                    leaves: items.iter().collect(),
                };
                let scan = scan_nested(&nested, &FieldPath::root())?;
                if let Some(depth) = scan.dict_depth {
                    return Err(Error::DictInArray { depth });
                }
                ragged_constant(nested, scan)
            }
            View::Dict(_) => Err(Error::DictInArray { depth: 0 }),
            _ => Ok(Array::scalar(to_scalar(value)?)),
        }
    }
}

/// A struct array from a document's root: the one-pass reader for a list of records of one
/// shape, else the general rules.
pub(crate) fn from_root<N: Node>(value: &N, par: bool) -> Result<StructuredTensor, Error> {
    if let View::List(items) = value.view() {
        if let Some(st) = crate::text_columns::read_tree(items, 1, par) {
            return Ok(st);
        }
    }
    let path = FieldPath::root();
    match value.view() {
        View::Dict(map) => from_dict::<N>(map, &path, par),
        View::List(items) => {
            let nested = Nested {
                nrows: items.len(),
                parts: Vec::new(),
                leaves: items.iter().collect(),
            };
            match scan_nested(&nested, &path)?.dict_depth {
                Some(rank) => from_list_of_dicts(nested, rank, &path, par),
                None => from_empty_lists(nested),
            }
        }
        _ => Err(Error::NotAStruct { found: kind(value) }),
    }
}

/// A field value from JSON.
fn convert_value<N: Node>(value: &N, path: &FieldPath, par: bool) -> Result<FieldValue, Error> {
    on_fresh_stack_every_few_levels(path, || convert_value_here(value, path, par))
}

/// Field names deep a walk goes on one thread's stack before it moves to a fresh thread:
/// each level of the walk takes about 2 KiB of stack in a test build, so the 1,000 levels
/// `MAX_NESTING` allows would overflow a 2 MiB stack (a test thread's or a rayon worker's;
/// a CI build overflowed at level 997).
const LEVELS_PER_STACK: usize = 128;

/// The stack of each fresh thread: 128 levels need about 256 KiB; eight times that.
const FRESH_STACK_BYTES: usize = 2 << 20;

/// `walk()`, on a fresh thread with a stack of its own when `path` is a multiple of
/// `LEVELS_PER_STACK` field names deep (so only documents nested that deep pay for a
/// thread), else right here.
fn on_fresh_stack_every_few_levels<T: Send>(
    path: &FieldPath,
    walk: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    if path.is_empty() || !path.len().is_multiple_of(LEVELS_PER_STACK) {
        return walk();
    }
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("structured-tensor-deep-json".to_string())
            .stack_size(FRESH_STACK_BYTES)
            .spawn_scoped(scope, walk)
            .expect("a thread for a deeply nested JSON document could not be started");
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// `convert_value` on the current thread's stack.
fn convert_value_here<N: Node>(
    value: &N,
    path: &FieldPath,
    par: bool,
) -> Result<FieldValue, Error> {
    match value.view() {
        View::Dict(map) => Ok(FieldValue::Struct(from_dict::<N>(map, path, par)?)),
        View::List(items) => {
            // Records sit one list and `path.len()` field names deep.
            if let Some(st) = crate::text_columns::read_tree(items, path.len() + 1, par) {
                return Ok(FieldValue::Struct(st));
            }
            convert_nested(
                Nested {
                    nrows: items.len(),
                    parts: Vec::new(),
                    leaves: items.iter().collect(),
                },
                path,
                par,
            )
        }
        _ => to_scalar(value)
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
fn from_dict<N: Node>(
    map: &N::Dict,
    path: &FieldPath,
    par: bool,
) -> Result<StructuredTensor, Error> {
    if path.len() > MAX_NESTING {
        return Err(too_deep(path));
    }
    let mut fields = IndexMap::new();
    for (key, value) in N::dict_entries(map) {
        let child = path.child(key);
        fields.insert(key.to_string(), convert_value(value, &child, par)?);
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
fn convert_nested<N: Node>(
    nested: Nested<'_, N>,
    path: &FieldPath,
    par: bool,
) -> Result<FieldValue, Error> {
    on_fresh_stack_every_few_levels(path, || convert_nested_here(nested, path, par))
}

/// `convert_nested` on the current thread's stack.
fn convert_nested_here<N: Node>(
    nested: Nested<'_, N>,
    path: &FieldPath,
    par: bool,
) -> Result<FieldValue, Error> {
    if let Some(array) = fast_leaf(&nested, path) {
        return Ok(FieldValue::Array(array));
    }
    convert_nested_general(nested, path, par)
}

/// `convert_nested` without the one-pass leaf path.
fn convert_nested_general<N: Node>(
    nested: Nested<'_, N>,
    path: &FieldPath,
    par: bool,
) -> Result<FieldValue, Error> {
    let scan = scan_nested(&nested, path)?;
    match scan.dict_depth {
        Some(rank) => Ok(FieldValue::Struct(from_list_of_dicts(
            nested, rank, path, par,
        )?)),
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

fn scan_nested<N: Node>(nested: &Nested<'_, N>, path: &FieldPath) -> Result<Scan, Error> {
    let base = nested.depth();
    let mut scan = Scan {
        dict_depth: None,
        scalar_depth: None,
        max_depth: base,
        dtype: None,
        deferred: None,
    };
    for leaf in &nested.leaves {
        scan_value(*leaf, base, &mut scan, path)?;
    }
    Ok(scan)
}

fn scan_value<N: Node>(v: &N, at: usize, scan: &mut Scan, path: &FieldPath) -> Result<(), Error> {
    if at + path.len() > MAX_NESTING {
        return Err(too_deep(path));
    }
    match v.view() {
        View::Dict(_) => match scan.dict_depth {
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
        View::List(items) => {
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
            let combined = scalar_dtype::<N>(scalar).and_then(|t| match scan.dtype {
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
fn expand<'a, N: Node>(
    leaves: &[&'a N],
    depth: usize,
    path: &FieldPath,
) -> Result<(RowPartition, Vec<&'a N>), Error> {
    let mut splits = Vec::with_capacity(leaves.len() + 1);
    splits.push(0i32);
    let mut children = Vec::new();
    for leaf in leaves {
        match leaf.view() {
            View::List(items) => {
                children.extend(items.iter());
                splits.push(partition::offset(children.len())?);
            }
            _ => {
                return Err(Error::ExpectedDict {
                    path: path.clone(),
                    depth,
                    found: kind(*leaf),
                })
            }
        }
    }
    Ok((partition::from_splits(splits)?, children))
}

/// A struct array of rank `rank` from a nested list whose dicts sit at depth `rank`.
fn from_list_of_dicts<N: Node>(
    nested: Nested<'_, N>,
    rank: usize,
    path: &FieldPath,
    par: bool,
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
    let columns = split_columns(&leaves, rank, path, par)?;
    let convert = |(key, column): (&str, Vec<&N>)| {
        let nested = Nested {
            nrows,
            parts: parts.clone(),
            leaves: column,
        };
        convert_nested(nested, &path.child(key), par).map(|v| (key.to_string(), v))
    };
    let converted: Vec<Result<(String, FieldValue), Error>> =
        if par && leaves.len() >= PARALLEL_STRUCTS && columns.len() > 1 {
            columns.into_par_iter().map(convert).collect()
        } else {
            let mut out = Vec::with_capacity(columns.len());
            for column in columns {
                let done = convert(column);
                let failed = done.is_err();
                out.push(done);
                if failed {
                    break;
                }
            }
            out
        };
    // The first error in key order, as the sequential walk reports it.
    let mut fields = IndexMap::new();
    for result in converted {
        let (key, value) = result?;
        fields.insert(key, value);
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

/// The column of every key: one pass over the dicts when they all list the keys of the first
/// one in the same order (the common case), else the union of the keys with a check that
/// every dict has each of them (and an error at the first value that is not a dict).
fn split_columns<'a, N: Node>(
    leaves: &[&'a N],
    rank: usize,
    path: &FieldPath,
    par: bool,
) -> Result<Vec<(&'a str, Vec<&'a N>)>, Error> {
    if let Some(columns) = split_uniform(leaves, par) {
        return Ok(columns);
    }
    let as_dict = |leaf: &'a N| match leaf.view() {
        View::Dict(map) => Ok(map),
        _ => Err(Error::ExpectedDict {
            path: path.clone(),
            depth: rank,
            found: kind(leaf),
        }),
    };
    let mut dicts = Vec::with_capacity(leaves.len());
    let mut keys: IndexSet<&str> = IndexSet::new();
    for leaf in leaves {
        let map = as_dict(leaf)?;
        keys.extend(N::dict_entries(map).map(|(k, _)| k));
        dicts.push(map);
    }
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let mut column = Vec::with_capacity(dicts.len());
        for map in &dicts {
            match N::dict_get(map, key) {
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

/// The columns of dicts that all list the keys of the first one in the same order, split
/// in parallel over chunks of dicts for long lists when `par`; `None` for anything else (no
/// dicts, a value that is not a dict, other keys), which `split_columns` then walks.
fn split_uniform<'a, N: Node>(leaves: &[&'a N], par: bool) -> Option<Vec<(&'a str, Vec<&'a N>)>> {
    let View::Dict(first) = leaves.first()?.view() else {
        return None;
    };
    let names: Vec<&str> = N::dict_entries(first).map(|(k, _)| k).collect();
    let empty_columns = |rows: usize| -> Vec<Vec<&'a N>> {
        (0..names.len()).map(|_| Vec::with_capacity(rows)).collect()
    };
    let split = |part: &[&'a N]| -> Option<Vec<Vec<&'a N>>> {
        let mut columns = empty_columns(part.len());
        for leaf in part {
            let View::Dict(map) = leaf.view() else {
                return None;
            };
            if N::dict_len(map) != names.len() {
                return None;
            }
            for ((key, value), (name, column)) in
                N::dict_entries(map).zip(names.iter().zip(columns.iter_mut()))
            {
                if key != *name {
                    return None;
                }
                column.push(value);
            }
        }
        Some(columns)
    };
    let columns = if par && leaves.len() >= PARALLEL_STRUCTS {
        let chunk = leaves
            .len()
            .div_ceil(rayon::current_num_threads() * 4)
            .max(1024);
        let parts: Vec<Option<Vec<Vec<&N>>>> = leaves.par_chunks(chunk).map(split).collect();
        let mut columns = empty_columns(leaves.len());
        for part in parts {
            for (column, piece) in columns.iter_mut().zip(part?) {
                column.extend(piece);
            }
        }
        columns
    } else {
        split(leaves)?
    };
    Some(names.into_iter().zip(columns).collect())
}

/// A list of nested empty lists: a struct array with no fields and the list's shape.
fn from_empty_lists<N: Node>(nested: Nested<'_, N>) -> Result<StructuredTensor, Error> {
    let Nested {
        nrows,
        mut parts,
        mut leaves,
    } = nested;
    let mut depth = 1;
    while !leaves.is_empty() {
        if !leaves.iter().all(|l| matches!(l.view(), View::List(_))) {
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
        IndexMap::new(),
    ))
}

/// The dtype of a JSON scalar.
fn scalar_dtype<N: Node>(v: View<'_, N>) -> Result<DType, Error> {
    match v {
        View::Null => Err(Error::NullValue),
        View::Bool(_) => Ok(DType::Bool),
        View::Str(_) => Ok(DType::Str),
        View::Int(_) => Ok(DType::I64),
        View::BigInt(value) => Err(Error::IntegerOutOfRange { value }),
        View::Float(_) => Ok(DType::F64),
        View::List(_) | View::Dict(_) => unreachable!("not a scalar"),
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
fn to_scalar<N: Node>(v: &N) -> Result<Scalar, Error> {
    Ok(match v.view() {
        View::Int(i) => Scalar::I64(i),
        View::Float(f) => Scalar::F64(f),
        View::Bool(b) => Scalar::Bool(b),
        View::Str(s) => Scalar::Str(s.to_string()),
        other => return Err(scalar_dtype(other).err().unwrap_or(Error::NullValue)),
    })
}

/// Appends the scalars of `leaves` (all at one depth, already checked) to `values`,
/// converting integers to floats when `values` holds floats.
fn push_scalars<N: Node>(values: &mut Values, leaves: &[&N]) {
    match values {
        Values::I64(out) => out.to_mut().extend(leaves.iter().map(|v| match v.view() {
            View::Int(i) => i,
            _ => 0,
        })),
        Values::F64(out) => out.to_mut().extend(leaves.iter().map(|v| match v.view() {
            View::Float(f) => f,
            View::Int(i) => i as f64,
            _ => 0.0,
        })),
        Values::Bool(out) => {
            out.extend(leaves.iter().map(|v| matches!(v.view(), View::Bool(true))))
        }
        Values::Str(out) => {
            for v in leaves {
                match v.view() {
                    View::Str(s) => out.push(s),
                    _ => out.push(""),
                }
            }
        }
        // JSON gives only the dtypes above
        other => unreachable!("JSON scalars into a {} buffer", other.dtype()),
    }
}

/// TensorFlow's `ragged.constant` on a nested list with no dicts: scalars at one depth
/// `D`; the result has rank `D`, ragged in every dimension below the given outer ones.
fn ragged_constant<N: Node>(nested: Nested<'_, N>, scan: Scan) -> Result<Array, Error> {
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

/// One pass for the common leaf columns: every element a scalar, or every element a list
/// of scalars (or empty). `None` for any other input, which the general path (scan, then
/// fill) then converts or rejects; where this path answers, it answers as that one does.
fn fast_leaf<N: Node>(nested: &Nested<'_, N>, path: &FieldPath) -> Option<Array> {
    let base = nested.depth();
    if base + 1 + path.len() > MAX_NESTING {
        return None;
    }
    let first = nested.leaves.first()?;
    let mut column = Column::Empty;
    let mut parts = nested.parts.clone();
    if let View::List(_) = first.view() {
        let capacity = 2 * nested.leaves.len();
        let mut splits = Vec::with_capacity(nested.leaves.len() + 1);
        splits.push(0i32);
        let mut total = 0usize;
        for leaf in &nested.leaves {
            let View::List(items) = leaf.view() else {
                return None;
            };
            for item in items {
                column.push(item.view(), capacity)?;
            }
            total += items.len();
            splits.push(partition::offset(total).ok()?);
        }
        parts.push(partition::from_splits(splits).ok()?);
    } else {
        for leaf in &nested.leaves {
            column.push(leaf.view(), nested.leaves.len())?;
        }
    }
    Some(Array::from_parts_unchecked(
        parts.len() + 1,
        nested.nrows,
        parts,
        Arc::new(column.finish()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `{"a": {"a": ... {"x": 1}}}` with `levels` objects around the innermost one, or the
    /// same path through lists of one record (`{"a": [{"a": [...]}]}`).
    fn nested_document(levels: usize, through_lists: bool) -> Value {
        let mut doc = json!({"x": 1});
        for _ in 0..levels {
            doc = if through_lists {
                json!({ "a": [doc] })
            } else {
                json!({ "a": doc })
            };
        }
        doc
    }

    #[test]
    fn nesting_up_to_the_limit_converts_on_a_small_thread_stack() {
        // 990 lists and objects deep, under MAX_NESTING, on a 384 KiB stack: a walk that kept
        // to one stack would need 1 to 2 MiB here
        for (levels, through_lists) in [(990, false), (495, true)] {
            let doc = nested_document(levels, through_lists);
            let (converted, doc) = std::thread::Builder::new()
                .stack_size(384 << 10)
                .spawn(move || (StructuredTensor::from_json(&doc), doc))
                .unwrap()
                .join()
                .unwrap();
            let st = converted.unwrap_or_else(|e| panic!("through lists {through_lists}: {e}"));
            // writing back, comparing and dropping recurse too: on a big stack
            let round_trip = std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn(move || st.to_json() == doc)
                .unwrap()
                .join()
                .unwrap();
            assert!(round_trip, "through lists {through_lists}");
        }
    }

    #[test]
    fn parallel_and_sequential_columns_agree() {
        let records: Vec<Value> = (0..6000)
            .map(|i| {
                json!({"a": i, "b": [i, i + 1], "c": {"d": format!("s{i}"), "e": [[i]]}, "f": i as f64 / 4.0})
            })
            .collect();
        // `e` (a list of lists) keeps the one-pass reader out: the general path runs,
        // with its columns split in parallel.
        assert!(crate::text_columns::read_tree(&records, 1, true).is_none());
        let v = Value::Array(records);
        let parallel = from_root(&v, true).unwrap();
        let sequential = from_root(&v, false).unwrap();
        assert_eq!(parallel, sequential);
        assert_eq!(parallel.to_json(), v);
        // Errors: the first one in key order, whichever path runs.
        let mut bad: Vec<Value> = (0..6000).map(|i| json!({"a": i, "b": i, "c": i})).collect();
        bad[5000] = json!({"a": "x", "b": i64::MAX, "c": null});
        let bad = Value::Array(bad);
        let e1 = from_root(&bad, true).unwrap_err();
        let e2 = from_root(&bad, false).unwrap_err();
        assert_eq!(e1, e2);
        assert!(
            e1.to_string().starts_with("Error parsing path ('a',)"),
            "{e1}"
        );
    }

    /// A small random JSON value for leaf columns: scalars of every kind (and `null`, an
    /// integer beyond `int64`), lists of them, nested and empty lists, now and then a dict.
    fn random_element(state: &mut u64, depth: usize) -> Value {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (*state >> 33) as usize;
        match r % 16 {
            0..=3 => json!(r % 7),
            4..=5 => json!((r % 9) as f64 / 2.0),
            6 => json!(format!("s{}", r % 5)),
            7 => json!(r.is_multiple_of(2)),
            8 if r.is_multiple_of(5) => Value::Null,
            9 if r.is_multiple_of(7) => json!(u64::MAX),
            10 if r.is_multiple_of(6) => json!({"k": r % 3}),
            _ if depth < 3 => {
                let n = r % 4;
                Value::Array((0..n).map(|_| random_element(state, depth + 1)).collect())
            }
            _ => json!(1),
        }
    }

    #[test]
    fn one_pass_leaf_columns_match_the_general_path() {
        let mut state = 7u64;
        let mut answered = 0;
        let mut columns: Vec<Vec<Value>> = vec![
            vec![],
            vec![json!([]), json!([])],
            vec![json!([1, 2]), json!([2.5]), json!([])],
            vec![json!([1.5]), json!([2])],
            vec![json!(1), json!(2.5), json!(3)],
            vec![json!(["a"]), json!([]), json!(["b", "c"])],
            vec![json!([true]), json!([false])],
            vec![json!([1]), json!(2)],
            vec![json!(1), json!([2])],
            vec![json!([[1]]), json!([2])],
            vec![json!([1]), json!(["a"])],
            vec![json!([1]), json!([null])],
            vec![json!([1]), json!([u64::MAX])],
            vec![json!([{"a": 1}]), json!([])],
        ];
        for _ in 0..3000 {
            let n = (state >> 40) as usize % 6;
            let template = random_element(&mut state, 1);
            // Mostly columns of one shape (as in real data), sometimes anything.
            let column = (0..n)
                .map(|_| {
                    let e = random_element(&mut state, 1);
                    if (state >> 20).is_multiple_of(3) {
                        e
                    } else {
                        match (&template, e) {
                            (Value::Array(_), Value::Array(items)) => Value::Array(items),
                            (Value::Array(_), other) => Value::Array(vec![other]),
                            (_, Value::Array(_)) => template.clone(),
                            (_, other) => other,
                        }
                    }
                })
                .collect();
            columns.push(column);
        }
        for column in &columns {
            let path = FieldPath::root().child("f");
            let nested = || Nested {
                nrows: column.len(),
                parts: Vec::new(),
                leaves: column.iter().collect(),
            };
            let general = convert_nested_general(nested(), &path, false);
            if let Some(fast) = fast_leaf(&nested(), &path) {
                answered += 1;
                assert_eq!(general, Ok(FieldValue::Array(fast)), "{column:?}");
            }
            if column.is_empty() {
                continue;
            }
            // Through `from_json`, whichever path runs, the answer is the general one.
            let records: Vec<Value> = column.iter().map(|v| json!({"f": v})).collect();
            let expected = general.map(|f| {
                let mut fields = IndexMap::new();
                fields.insert("f".to_string(), f);
                StructuredTensor::from_parts_unchecked(1, column.len(), Vec::new(), fields)
            });
            let got = StructuredTensor::from_json(&Value::Array(records));
            match (&got, &expected) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{column:?}"),
                (Err(a), Err(b)) => assert_eq!(a, b, "{column:?}"),
                _ => panic!("{column:?}: {got:?} vs {expected:?}"),
            }
        }
        assert!(
            answered > 500,
            "the one-pass path answered only {answered} columns"
        );
    }
}
