//! JSON output (TensorFlow's `to_pyval`): every object and list is built once, straight
//! from the columns and row splits (no intermediate column of JSON values), with the outer
//! rows built in parallel for large arrays; and JSON text written from the columns.

use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::array::Array;
use crate::partition::RowPartition;
use crate::structured::{FieldValue, StructuredTensor};
use crate::values::{f64_to_json, Values};

/// Arrays with at least this many outer rows build them in parallel.
const PARALLEL_ROWS: usize = 2048;

/// What sits below the partitions of a value: flat leaf values or a struct array (indexed
/// by its structs over all of its dimensions).
#[derive(Clone, Copy)]
enum Leaf<'a> {
    Values(&'a Values),
    Struct(&'a StructuredTensor),
}

/// A leaf array as JSON.
pub(crate) fn array_json(a: &Array) -> Value {
    whole_json(
        a.rank(),
        a.nrows().unwrap_or(0),
        a.row_partitions(),
        Leaf::Values(a.values()),
        true,
    )
}

/// A struct array as JSON.
pub(crate) fn struct_json(st: &StructuredTensor) -> Value {
    whole_json(
        st.rank(),
        st.nrows().unwrap_or(0),
        st.row_partitions(),
        Leaf::Struct(st),
        true,
    )
}

/// A whole value: its element at rank 0, else the list of its outer rows.
fn whole_json(
    rank: usize,
    nrows: usize,
    parts: &[RowPartition],
    leaf: Leaf<'_>,
    par: bool,
) -> Value {
    if rank == 0 {
        return leaf_json(leaf, 0);
    }
    if rank == 1 {
        if let Leaf::Values(v) = leaf {
            return Value::Array(values_json(v, 0, nrows));
        }
    }
    if par && nrows >= PARALLEL_ROWS {
        Value::Array(
            (0..nrows)
                .into_par_iter()
                .with_min_len(256)
                .map(|row| elem_json(parts, leaf, row))
                .collect(),
        )
    } else {
        Value::Array((0..nrows).map(|row| elem_json(parts, leaf, row)).collect())
    }
}

/// Row `row` of the first partition in `parts` (the leaf element `row` when there is none).
fn elem_json(parts: &[RowPartition], leaf: Leaf<'_>, row: usize) -> Value {
    let Some((first, rest)) = parts.split_first() else {
        return leaf_json(leaf, row);
    };
    let splits = first.row_splits();
    let (start, end) = (splits[row] as usize, splits[row + 1] as usize);
    match (rest.is_empty(), leaf) {
        (true, Leaf::Values(v)) => Value::Array(values_json(v, start, end)),
        _ => Value::Array((start..end).map(|k| elem_json(rest, leaf, k)).collect()),
    }
}

/// Leaf element `i`: a scalar or the struct at flat position `i`.
fn leaf_json(leaf: Leaf<'_>, i: usize) -> Value {
    match leaf {
        Leaf::Values(v) => v.json_at(i),
        Leaf::Struct(st) => object_json(st, i),
    }
}

/// The elements `start..end` of a flat buffer as JSON.
fn values_json(values: &Values, start: usize, end: usize) -> Vec<Value> {
    match values {
        Values::I64(v) => v[start..end].iter().map(|&x| Value::from(x)).collect(),
        Values::F64(v) => v[start..end].iter().map(|&x| f64_to_json(x)).collect(),
        Values::Bool(v) => v[start..end].iter().map(|&x| Value::Bool(x)).collect(),
        Values::Str(v) => v[start..end]
            .iter()
            .map(|x| Value::String(x.clone()))
            .collect(),
    }
}

/// Struct number `index` (over all of the struct array's dimensions) as an object.
fn object_json(st: &StructuredTensor, index: usize) -> Value {
    let rank = st.rank();
    let mut map = Map::new();
    for (name, field) in st.fields() {
        let value = match field {
            _ if rank == 0 => match field {
                FieldValue::Array(a) => whole_json(
                    a.rank(),
                    a.nrows().unwrap_or(0),
                    a.row_partitions(),
                    Leaf::Values(a.values()),
                    false,
                ),
                FieldValue::Struct(s) => whole_json(
                    s.rank(),
                    s.nrows().unwrap_or(0),
                    s.row_partitions(),
                    Leaf::Struct(s),
                    false,
                ),
            },
            FieldValue::Array(a) => elem_json(
                &a.row_partitions()[rank - 1..],
                Leaf::Values(a.values()),
                index,
            ),
            FieldValue::Struct(s) => {
                elem_json(&s.row_partitions()[rank - 1..], Leaf::Struct(s), index)
            }
        };
        map.insert(name.clone(), value);
    }
    Value::Object(map)
}

impl StructuredTensor {
    /// The struct array as JSON text, written straight from the columns without building
    /// a `serde_json::Value` (the same text as `serde_json::to_string(&self.to_json())`).
    pub fn to_json_string(&self) -> String {
        let mut out = Vec::with_capacity(64 * self.num_structs().max(1));
        write_whole(&FieldValue::Struct(self.clone()), &mut out);
        String::from_utf8(out).expect("JSON output is UTF-8")
    }
}

/// Writes a scalar with serde_json's formatting.
fn write_scalar(values: &Values, i: usize, out: &mut Vec<u8>) {
    let result = match values {
        Values::I64(v) => serde_json::to_writer(&mut *out, &v[i]),
        Values::F64(v) => serde_json::to_writer(&mut *out, &v[i]),
        Values::Bool(v) => serde_json::to_writer(&mut *out, &v[i]),
        Values::Str(v) => serde_json::to_writer(&mut *out, &v[i]),
    };
    result.expect("writing JSON to memory cannot fail");
}

/// Writes a whole value (an object at rank 0, else nested lists).
fn write_whole(value: &FieldValue, out: &mut Vec<u8>) {
    if value.rank() == 0 {
        match value {
            FieldValue::Array(a) => write_scalar(a.values(), 0, out),
            FieldValue::Struct(s) => write_struct_fields(s, 0, out),
        }
        return;
    }
    out.push(b'[');
    for row in 0..value.nrows().unwrap_or(0) {
        if row > 0 {
            out.push(b',');
        }
        write_elem(value, 0, row, out);
    }
    out.push(b']');
}

/// Writes row `row` of level `level` (0 = the outer dimension) of a value.
fn write_elem(value: &FieldValue, level: usize, row: usize, out: &mut Vec<u8>) {
    let parts = value.row_partitions();
    if level < parts.len() {
        let s = parts[level].row_splits();
        out.push(b'[');
        for (n, k) in (s[row] as usize..s[row + 1] as usize).enumerate() {
            if n > 0 {
                out.push(b',');
            }
            write_elem(value, level + 1, k, out);
        }
        out.push(b']');
        return;
    }
    match value {
        FieldValue::Array(a) => write_scalar(a.values(), row, out),
        FieldValue::Struct(s) => write_struct_fields(s, row, out),
    }
}

/// Writes struct number `index` (over all of the struct array's dimensions) as an object.
fn write_struct_fields(st: &StructuredTensor, index: usize, out: &mut Vec<u8>) {
    out.push(b'{');
    for (n, (name, field)) in st.fields().iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, name).expect("writing JSON to memory cannot fail");
        out.push(b':');
        if st.rank() == 0 {
            write_whole(field, out);
        } else {
            write_elem(field, st.rank() - 1, index, out);
        }
    }
    out.push(b'}');
}

/// The former column-wise construction (one column of JSON values per field, nested by
/// the partitions, then regrouped into objects), kept as the model of the direct one.
#[cfg(test)]
pub(crate) mod model {
    use serde_json::{Map, Value};

    use crate::array::Array;
    use crate::partition::{self, RowPartition};
    use crate::structured::{FieldValue, StructuredTensor};

    /// Groups `values` into JSON lists by the rows of `p`.
    fn nest_json(values: Vec<Value>, p: &RowPartition) -> Vec<Value> {
        let mut out = Vec::with_capacity(p.nrows());
        let mut it = values.into_iter();
        for len in partition::lengths(p) {
            out.push(Value::Array(it.by_ref().take(len).collect()));
        }
        out
    }

    /// A field value as JSON.
    pub(crate) fn value_json(v: &FieldValue) -> Value {
        match v {
            FieldValue::Array(a) => array_json(a),
            FieldValue::Struct(s) => struct_json(s),
        }
    }

    /// A leaf array as JSON.
    pub(crate) fn array_json(a: &Array) -> Value {
        if a.rank() == 0 {
            return a.values().json_at(0);
        }
        Value::Array(array_elements(a, 1))
    }

    fn array_elements(a: &Array, depth: usize) -> Vec<Value> {
        let mut level: Vec<Value> = (0..a.values().len())
            .map(|i| a.values().json_at(i))
            .collect();
        for p in a.row_partitions()[depth - 1..].iter().rev() {
            level = nest_json(level, p);
        }
        level
    }

    /// A struct array as JSON.
    pub(crate) fn struct_json(st: &StructuredTensor) -> Value {
        if st.rank() == 0 {
            let map = st
                .fields()
                .iter()
                .map(|(k, v)| (k.clone(), value_json(v)))
                .collect();
            return Value::Object(map);
        }
        Value::Array(struct_elements(st, 1))
    }

    fn struct_elements(st: &StructuredTensor, depth: usize) -> Vec<Value> {
        let n = st.num_structs();
        let columns: Vec<Vec<Value>> = st
            .fields()
            .values()
            .map(|v| match v {
                FieldValue::Array(a) => array_elements(a, st.rank()),
                FieldValue::Struct(s) => struct_elements(s, st.rank()),
            })
            .collect();
        let mut iters: Vec<_> = columns.into_iter().map(Vec::into_iter).collect();
        let mut level = Vec::with_capacity(n);
        for _ in 0..n {
            let mut map = Map::new();
            for (name, it) in st.fields().keys().zip(iters.iter_mut()) {
                map.insert(name.clone(), it.next().unwrap_or(Value::Null));
            }
            level.push(Value::Object(map));
        }
        for p in st.row_partitions()[depth - 1..].iter().rev() {
            level = nest_json(level, p);
        }
        level
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Values of many shapes: structs of rank 0 to 3, nested structs at several ranks, leaf
    /// fields with uniform and ragged inner dimensions of every dtype.
    fn cases() -> Vec<Value> {
        let big: Vec<Value> = (0..5000)
            .map(|i| {
                json!({"a": i, "b": [i, i + 1], "c": {"d": format!("s{i}"), "e": [[i], []]},
                       "f": i as f64 / 2.0, "g": i % 3 == 0})
            })
            .collect();
        let households: Vec<Value> = (0..3000)
            .map(|i| {
                let members: Vec<Value> = (0..i % 4)
                    .map(|j| json!({"age": j, "shoes": [{"size": [j as f64 + 0.5]}], "n": ["x"]}))
                    .collect();
                Value::Array(members)
            })
            .collect();
        vec![
            json!({}),
            json!({"a": 1, "b": [[1, 2], [], [3]], "c": {"d": [true, false], "e": "s"}}),
            json!({"x": [{"y": [[1.5], [2.5, 3.5]]}, {"y": []}], "z": [[[1]], [[2, 3], []]]}),
            json!([{"a": [[1, 2], [3]]}, {"a": [[]]}]),
            json!([[{"a": 1, "s": {"t": ["u", "v"]}}], [], [{"a": 2, "s": {"t": []}}, {"a": 3, "s": {"t": ["w"]}}]]),
            json!([[[{"a": [1.0]}]], [[], [{"a": []}, {"a": [2.0, 3.0]}]]]),
            json!([[], [[]]]),
            Value::Array(big),
            Value::Array(households),
        ]
    }

    #[test]
    fn direct_construction_matches_the_column_model() {
        for v in cases() {
            let st = StructuredTensor::from_json(&v).unwrap();
            let direct = st.to_json();
            assert_eq!(direct, model::struct_json(&st), "{v}");
            assert_eq!(direct, v);
            // Without the parallel outer loop, the same.
            let seq = whole_json(
                st.rank(),
                st.nrows().unwrap_or(0),
                st.row_partitions(),
                Leaf::Struct(&st),
                false,
            );
            assert_eq!(seq, direct);
            assert_eq!(st.to_json_string(), serde_json::to_string(&v).unwrap());
            for (name, field) in st.fields() {
                assert_eq!(field.to_json(), model::value_json(field), "{name} of {v}");
            }
        }
    }

    #[test]
    fn leaf_arrays_match_the_column_model() {
        for v in [
            json!(3),
            json!("s"),
            json!([1, 2]),
            json!([[1.5], [], [2.0, 3.0]]),
            json!([[["a"]], [[], ["b", "c"]]]),
            json!([[true], [false, true]]),
            Value::Array((0..5000).map(|i| json!([i, i])).collect()),
        ] {
            let a = Array::from_json(&v).unwrap();
            assert_eq!(a.to_json(), model::array_json(&a), "{v}");
            assert_eq!(a.to_json(), v);
        }
        // A non-finite float has no JSON number: `null` in both.
        let a = Array::from_json(&json!([1.0, 2.0]))
            .unwrap()
            .map_f64(|x| x / 0.0)
            .unwrap();
        assert_eq!(a.to_json(), model::array_json(&a));
        assert_eq!(a.to_json(), json!([null, null]));
    }
}
