//! JSON output: field-major columns regrouped into one object per struct (TensorFlow's
//! `to_pyval`), with the columns built in parallel for large arrays.

use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::structured::{FieldValue, StructuredTensor};
use crate::values::Values;

/// Below this many structs times fields, columns are built sequentially.
const PARALLEL_THRESHOLD: usize = 1 << 15;

/// One JSON object per struct, in row-major order over all `rank` dimensions.
pub(crate) fn records(st: &StructuredTensor) -> Vec<Value> {
    let n = st.num_structs();
    let rank = st.rank();
    let fields: Vec<(&String, &crate::structured::FieldValue)> = st.fields().iter().collect();
    let columns: Vec<Vec<Value>> = if n * fields.len() >= PARALLEL_THRESHOLD && fields.len() > 1 {
        fields
            .par_iter()
            .map(|(_, v)| v.elements_json(rank))
            .collect()
    } else {
        fields.iter().map(|(_, v)| v.elements_json(rank)).collect()
    };
    records_from_columns(&fields, columns, n)
}

fn records_from_columns(
    fields: &[(&String, &crate::structured::FieldValue)],
    columns: Vec<Vec<Value>>,
    n: usize,
) -> Vec<Value> {
    if n * fields.len().max(1) < PARALLEL_THRESHOLD {
        return assemble(fields, columns, n);
    }
    // Cut every column into the same chunks of records and assemble the chunks in parallel.
    let chunk = n.div_ceil(rayon::current_num_threads() * 4).max(1024);
    let nchunks = n.div_ceil(chunk);
    let mut per_chunk: Vec<Vec<Vec<Value>>> = (0..nchunks)
        .map(|_| Vec::with_capacity(columns.len()))
        .collect();
    for column in columns {
        let mut it = column.into_iter();
        for (c, slot) in per_chunk.iter_mut().enumerate() {
            let len = chunk.min(n - c * chunk);
            slot.push(it.by_ref().take(len).collect());
        }
    }
    let parts: Vec<Vec<Value>> = per_chunk
        .into_par_iter()
        .enumerate()
        .map(|(c, cols)| assemble(fields, cols, chunk.min(n - c * chunk)))
        .collect();
    let mut out = Vec::with_capacity(n);
    for part in parts {
        out.extend(part);
    }
    out
}

/// One object per struct from columns of `n` values each.
fn assemble(
    fields: &[(&String, &crate::structured::FieldValue)],
    columns: Vec<Vec<Value>>,
    n: usize,
) -> Vec<Value> {
    let mut iters: Vec<std::vec::IntoIter<Value>> =
        columns.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut map = Map::new();
        for ((name, _), it) in fields.iter().zip(iters.iter_mut()) {
            map.insert((*name).clone(), it.next().unwrap_or(Value::Null));
        }
        out.push(Value::Object(map));
    }
    out
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
        Values::Str(v) => serde_json::to_writer(&mut *out, v.get(i)),
        Values::I32(v) => serde_json::to_writer(&mut *out, &v[i]),
        Values::F32(v) => {
            serde_json::to_writer(&mut *out, &crate::values::f64_to_json(f64::from(v[i])))
        }
        Values::U8(v) => serde_json::to_writer(&mut *out, &v[i]),
        Values::Bytes(v) => {
            serde_json::to_writer(&mut *out, &crate::values::bytes_to_json(v.get(i)))
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parallel_and_sequential_columns_agree() {
        let input: Vec<Value> = (0..9000)
            .map(|i| json!({"a": i, "b": [i, i + 1], "c": {"d": format!("s{i}")}, "e": i as f64 / 2.0}))
            .collect();
        let v = Value::Array(input);
        let st = StructuredTensor::from_json(&v).unwrap();
        // 9000 structs x 4 fields is above the threshold: the parallel path runs.
        const { assert!(9000 * 4 >= PARALLEL_THRESHOLD) };
        let fields: Vec<_> = st.fields().iter().collect();
        let seq: Vec<Vec<Value>> = fields.iter().map(|(_, f)| f.elements_json(1)).collect();
        let seq_records = assemble(&fields, seq, st.num_structs());
        assert_eq!(records(&st), seq_records);
        assert_eq!(st.to_json(), v);
        assert_eq!(st.to_json_string(), serde_json::to_string(&v).unwrap());
    }
}
