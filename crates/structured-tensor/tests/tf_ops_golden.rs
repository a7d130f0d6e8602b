//! TensorFlow's own results for the dispatched ops on random inputs
//! (`tests/golden/tf_ops.json`, written by `tests/golden/tf_ops_generate.py` with TensorFlow
//! 2.21), compared through `to_json`; `gather_batch_dims` covers `tf.gather` with
//! `batch_dims` 0 to 2 on rank-3 struct arrays.

use serde_json::Value;
use structured_tensor::{Array, DType, FieldSpec, StructuredTensor};

/// Indices of rank `rank` as an `int64` array (read with a spec, so that empty lists keep
/// the rank and the dtype, as `tf.ragged.constant(.., dtype=tf.int64, ragged_rank=..)`).
fn index_array(v: &Value, rank: usize) -> Array {
    let spec = FieldSpec::Ragged {
        shape: vec![None; rank],
        dtype: DType::I64,
        ragged_rank: rank.saturating_sub(1),
    };
    Array::from_json_with_spec(v, &spec).unwrap()
}

fn indices(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn nested_indices(v: &Value) -> Vec<Vec<i64>> {
    v.as_array().unwrap().iter().map(indices).collect()
}

#[test]
fn dispatched_ops_match_tensorflow() {
    let text = include_str!("golden/tf_ops.json");
    let golden: Value = serde_json::from_str(text).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    assert!(cases.len() > 400, "{} cases", cases.len());
    for (i, case) in cases.iter().enumerate() {
        let inputs: Vec<StructuredTensor> = case["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| StructuredTensor::from_json(v).unwrap())
            .collect();
        let args = &case["args"];
        let axis = args["axis"].as_i64().unwrap_or(0) as isize;
        let out = match case["op"].as_str().unwrap() {
            "gather" => inputs[0].gather(&indices(&args["indices"]), axis),
            "gather_ragged" => inputs[0].gather_ragged(&nested_indices(&args["indices"])),
            "gather_batched" => inputs[0].gather_batched(&nested_indices(&args["indices"]), axis),
            "concat" => StructuredTensor::concat(&inputs.iter().collect::<Vec<_>>(), axis),
            "expand_dims" => inputs[0].expand_dims(axis),
            "gather_batch_dims" => inputs[0].gather_with_batch_dims(
                &index_array(
                    &args["indices"],
                    args["indices_rank"].as_u64().unwrap() as usize,
                ),
                axis,
                args["batch_dims"].as_i64().unwrap() as isize,
            ),
            op => panic!("unknown op {op}"),
        }
        .unwrap_or_else(|e| panic!("case {i} ({case}): {e}"));
        assert_eq!(out.to_json(), case["expected"], "case {i}: {case}");
    }
}
