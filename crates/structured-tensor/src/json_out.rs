//! JSON output: field-major columns regrouped into one object per struct (TensorFlow's
//! `to_pyval`), with the columns built in parallel for large arrays.

use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::structured::StructuredTensor;

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
        let seq_records = records_from_columns(&fields, seq, st.num_structs());
        assert_eq!(records(&st), seq_records);
        assert_eq!(st.to_json(), v);
    }
}
