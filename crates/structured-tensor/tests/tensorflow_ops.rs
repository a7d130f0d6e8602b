//! TensorFlow's cases for `merge_dims`, `partition_outer_dimension`, `promote` and
//! `with_updates` (`structured_tensor_test.py` and the docstrings), expected values written out.

use serde_json::{json, Value};
use structured_tensor::{Array, Error, FieldValue, RowPartition, StructuredTensor, Update, Values};

fn st(v: Value) -> StructuredTensor {
    StructuredTensor::from_json(&v).unwrap_or_else(|e| panic!("from_json({v}) failed: {e}"))
}

fn arr(v: Value) -> FieldValue {
    FieldValue::Array(Array::from_json(&v).unwrap())
}

// ---- merge_dims ------------------------------------------------------------------------

#[track_caller]
fn check_merge(input: Value, outer: isize, inner: isize, expected: Value) {
    let s = st(input);
    let merged = s.merge_dims(outer, inner).unwrap();
    assert_eq!(merged.to_json(), expected);
    assert_eq!(merged, st(expected));
    // Fields share the merged struct's partitions.
    for value in merged.fields().values() {
        for (p, q) in merged.row_partitions().iter().zip(value.row_partitions()) {
            assert!(p.ptr_eq(q));
        }
    }
}

fn x(i: i64) -> Value {
    json!({"x": i})
}

fn four_d() -> Value {
    json!([
        [[[x(1), x(2)], [x(3)]], [[x(4)]]],
        [[[x(5)]], [[x(6)], [x(7)]]]
    ])
}

#[test]
fn merge_dims_docstring() {
    let s = st(json!([[{"foo": 12}, {"foo": 33}], [], [{"foo": 99}]]));
    let m = s.merge_dims(0, 1).unwrap();
    assert_eq!(m.shape(), vec![Some(3)]);
    assert_eq!(m.field_value("foo").unwrap().to_json(), json!([12, 33, 99]));
}

#[test]
fn merge_dims_2d_0_1() {
    check_merge(
        json!([[x(1), x(2)], [x(3)]]),
        0,
        1,
        json!([x(1), x(2), x(3)]),
    );
}

#[test]
fn merge_dims_3d() {
    let s3 = json!([[[x(1), x(2)], [x(3)]], [[x(4)]]]);
    check_merge(s3.clone(), 0, 1, json!([[x(1), x(2)], [x(3)], [x(4)]]));
    check_merge(s3.clone(), 1, 2, json!([[x(1), x(2), x(3)], [x(4)]]));
    check_merge(s3.clone(), 0, 2, json!([x(1), x(2), x(3), x(4)]));
    check_merge(s3, -3, -1, json!([x(1), x(2), x(3), x(4)]));
    let detail = st(json!([[[x(1), x(2)], [x(3)]], [[x(4)]]]))
        .merge_dims(0, 1)
        .unwrap();
    assert_eq!(detail.shape(), vec![Some(3), None]);
}

#[test]
fn merge_dims_4d() {
    check_merge(
        four_d(),
        0,
        1,
        json!([[[x(1), x(2)], [x(3)]], [[x(4)]], [[x(5)]], [[x(6)], [x(7)]]]),
    );
    check_merge(
        four_d(),
        0,
        2,
        json!([[x(1), x(2)], [x(3)], [x(4)], [x(5)], [x(6)], [x(7)]]),
    );
    check_merge(
        four_d(),
        0,
        3,
        json!([x(1), x(2), x(3), x(4), x(5), x(6), x(7)]),
    );
    check_merge(
        four_d(),
        1,
        2,
        json!([[[x(1), x(2)], [x(3)], [x(4)]], [[x(5)], [x(6)], [x(7)]]]),
    );
    check_merge(
        four_d(),
        1,
        3,
        json!([[x(1), x(2), x(3), x(4)], [x(5), x(6), x(7)]]),
    );
    check_merge(
        four_d(),
        2,
        3,
        json!([[[x(1), x(2), x(3)], [x(4)]], [[x(5)], [x(6), x(7)]]]),
    );
    check_merge(four_d(), 2, 2, four_d());
}

#[test]
fn merge_dims_with_ragged_and_nested_fields() {
    let s = st(json!([
        [{"a": [1, 2], "n": {"b": [[1], []]}}, {"a": [], "n": {"b": [[2]]}}],
        [{"a": [3], "n": {"b": []}}]]));
    let m = s.merge_dims(0, 1).unwrap();
    assert_eq!(
        m.to_json(),
        json!([{"a": [1, 2], "n": {"b": [[1], []]}}, {"a": [], "n": {"b": [[2]]}}, {"a": [3], "n": {"b": []}}])
    );
}

#[test]
fn merge_dims_0_1_after_partitioning() {
    // rt = RaggedTensor.from_value_rowids([[1, 2], [3, 4], [5, 6]], [0, 0, 1])
    let rt = Array::from_partitions(
        2,
        vec![
            RowPartition::from_value_rowids(vec![0, 0, 1], 2).unwrap(),
            RowPartition::from_uniform_row_length(2, 3).unwrap(),
        ],
        Values::I64(vec![1, 2, 3, 4, 5, 6].into()),
    )
    .unwrap();
    let s = StructuredTensor::from_fields([("r", FieldValue::Array(rt))], &[Some(2)], None, None)
        .unwrap();
    let p = RowPartition::from_row_splits(vec![0, 1, 2]).unwrap();
    let s2 = s.partition_outer_dimension(&p).unwrap();
    let s3 = s2.partition_outer_dimension(&p).unwrap();
    assert_eq!(s3.rank(), 3);
    assert_eq!(s3.row_partitions().len(), 2);
    let merged = s3.merge_dims(0, 1).unwrap();
    assert_eq!(merged.row_partitions().len(), 1);
    assert_eq!(
        merged.to_json(),
        json!([[{"r": [[1, 2], [3, 4]]}], [{"r": [[5, 6]]}]])
    );
}

#[test]
fn merge_dims_errors() {
    let s = st(json!([[[{"a": 5}]]]));
    assert_eq!(
        s.merge_dims(2, 1).unwrap_err().to_string(),
        "Expected outer_axis (2) to be less than or equal to inner_axis (1)"
    );
    assert_eq!(
        s.merge_dims(0, 3).unwrap_err().to_string(),
        "inner_axis=3 out of bounds: expected -3<=inner_axis<3 (rank(self)=3)"
    );
    assert!(matches!(
        s.merge_dims(-4, 0).unwrap_err(),
        Error::AxisOutOfRange {
            name: "outer_axis",
            axis: -4,
            rank: 3
        }
    ));
    assert_eq!(
        st(json!({"a": 1})).merge_dims(0, 0).unwrap_err(),
        Error::AxisOutOfRange {
            name: "outer_axis",
            axis: 0,
            rank: 0
        }
    );
}

// ---- partition_outer_dimension -------------------------------------------------------

#[test]
fn partition_outer_dimension_docstring() {
    let s = st(json!([{"foo": 12}, {"foo": 33}, {"foo": 99}]));
    let p = RowPartition::from_row_lengths(&[2, 0, 1]).unwrap();
    let r = s.partition_outer_dimension(&p).unwrap();
    assert_eq!(r.shape(), vec![Some(3), None]);
    assert_eq!(
        r.field_value("foo").unwrap().to_json(),
        json!([[12, 33], [], [99]])
    );
    assert!(r.row_partitions()[0].ptr_eq(&p));
}

#[test]
fn partition_outer_dims() {
    let a = json!({"x": 1, "y": [1, 2]});
    let b = json!({"x": 2, "y": [3, 4]});
    let c = json!({"x": 3, "y": [5, 6]});
    let d = json!({"x": 4, "y": [7, 8]});
    let st1 = st(json!([a, b, c, d]));
    let st2 = st1
        .partition_outer_dimension(&RowPartition::from_row_splits(vec![0, 2, 2, 3, 4]).unwrap())
        .unwrap();
    assert_eq!(st2.to_json(), json!([[a, b], [], [c], [d]]));
    let st3 = st2
        .partition_outer_dimension(&RowPartition::from_row_lengths(&[1, 0, 3, 0]).unwrap())
        .unwrap();
    assert_eq!(st3.to_json(), json!([[[a, b]], [], [[], [c], [d]], []]));
    let st4 = st1
        .partition_outer_dimension(&RowPartition::from_uniform_row_length(2, 2).unwrap())
        .unwrap();
    assert_eq!(st4.to_json(), json!([[a, b], [c, d]]));
    assert_eq!(st4.shape(), vec![Some(2), Some(2)]);
    assert_eq!(
        st4.field_value("x").unwrap().shape(),
        vec![Some(2), Some(2)]
    );
}

#[test]
fn partition_outer_dimension_2d_dense_field() {
    let r = Array::dense(&[2, 2], Values::I64(vec![1, 2, 3, 4].into())).unwrap();
    let s = StructuredTensor::from_fields([("r", FieldValue::Array(r))], &[Some(2)], None, None)
        .unwrap();
    let result = s
        .partition_outer_dimension(&RowPartition::from_uniform_row_length(2, 1).unwrap())
        .unwrap();
    assert_eq!(
        result.field_value("r").unwrap().to_json(),
        json!([[[1, 2], [3, 4]]])
    );
}

#[test]
fn partition_outer_dimension_errors() {
    let s =
        StructuredTensor::from_fields(Vec::<(String, FieldValue)>::new(), &[], None, None).unwrap();
    let p = RowPartition::from_row_splits(vec![0]).unwrap();
    assert_eq!(
        s.partition_outer_dimension(&p).unwrap_err().to_string(),
        "Shape () must have rank at least 1"
    );
    let v = st(json!([{"a": 1}, {"a": 2}]));
    assert_eq!(
        v.partition_outer_dimension(&RowPartition::from_row_lengths(&[1, 2]).unwrap())
            .unwrap_err(),
        Error::PartitionMismatch { nvals: 3, nrows: 2 }
    );
}

// ---- promote ---------------------------------------------------------------------------

#[track_caller]
fn check_promote(input: Value, path: &[&str], new_name: &str, expected: Value) {
    let result = st(input).promote(path, new_name).unwrap();
    assert_eq!(result.to_json(), expected);
    assert_eq!(result, st(expected));
}

#[test]
fn promote_docstring() {
    let d = json!([
        {"docs": [{"tokens": [1, 2]}, {"tokens": [3]}]},
        {"docs": [{"tokens": [7]}]}]);
    let s2 = st(d).promote(["docs", "tokens"], "docs_tokens").unwrap();
    let row0 = s2.get(&[0.into(), "docs_tokens".into()]).unwrap();
    assert_eq!(row0.to_json(), json!([1, 2, 3]));
    let row1 = s2.get(&[1.into(), "docs_tokens".into()]).unwrap();
    assert_eq!(row1.to_json(), json!([7]));
}

#[test]
fn promote_cases() {
    check_promote(
        json!({"b": {"a": 5}}),
        &["b", "a"],
        "new_field",
        json!({"b": {"a": 5}, "new_field": 5}),
    );
    check_promote(
        json!({"b": {"a": [5, 3]}}),
        &["b", "a"],
        "new_field",
        json!({"b": {"a": [5, 3]}, "new_field": [5, 3]}),
    );
    check_promote(
        json!({"b": {"a": [[7], [5, 3]]}}),
        &["b", "a"],
        "new_field",
        json!({"b": {"a": [[7], [5, 3]]}, "new_field": [[7], [5, 3]]}),
    );
    check_promote(
        json!([{"b": {"a": [7]}}, {"b": {"a": [5, 3]}}]),
        &["b", "a"],
        "new_field",
        json!([{"b": {"a": [7]}, "new_field": [7]}, {"b": {"a": [5, 3]}, "new_field": [5, 3]}]),
    );
    check_promote(
        json!([{"b": {"a": [[5, 7], []]}}, {"b": {"a": [[5, 1], [3]]}}]),
        &["b", "a"],
        "new_field",
        json!([{"b": {"a": [[5, 7], []]}, "new_field": [[5, 7], []]},
               {"b": {"a": [[5, 1], [3]]}, "new_field": [[5, 1], [3]]}]),
    );
    check_promote(
        json!({"a": {"b": {"c": 7}}}),
        &["a", "b", "c"],
        "new_field",
        json!({"a": {"b": {"c": 7}, "new_field": 7}}),
    );
    check_promote(
        json!([{"a": {"b": {"c": 7}}}, {"a": {"b": {"c": 5}}}]),
        &["a", "b", "c"],
        "new_field",
        json!([{"a": {"b": {"c": 7}, "new_field": 7}}, {"a": {"b": {"c": 5}, "new_field": 5}}]),
    );
    check_promote(
        json!([{"a": [{"b": {"c": 7}}, {"b": {"c": 3}}]}, {"a": [{"b": {"c": 5}}]}]),
        &["a", "b", "c"],
        "new_field",
        json!([{"a": [{"b": {"c": 7}, "new_field": 7}, {"b": {"c": 3}, "new_field": 3}]},
               {"a": [{"b": {"c": 5}, "new_field": 5}]}]),
    );
    check_promote(
        json!([{"docs": [{"tokens": [7, 17]}, {"tokens": [3, 13]}]}, {"docs": [{"tokens": [5, 15]}]}]),
        &["docs", "tokens"],
        "docs_tokens",
        json!([{"docs": [{"tokens": [7, 17]}, {"tokens": [3, 13]}], "docs_tokens": [7, 17, 3, 13]},
               {"docs": [{"tokens": [5, 15]}], "docs_tokens": [5, 15]}]),
    );
    check_promote(
        json!([{"a": [{"b": {"c": [7, 17]}}, {"b": {"c": [3, 13]}}]}, {"a": [{"b": {"c": [5, 15]}}]}]),
        &["a", "b", "c"],
        "new_field",
        json!([{"a": [{"b": {"c": [7, 17]}, "new_field": [7, 17]}, {"b": {"c": [3, 13]}, "new_field": [3, 13]}]},
               {"a": [{"b": {"c": [5, 15]}, "new_field": [5, 15]}]}]),
    );
    check_promote(
        json!({"a": {"b": {"c": [7, 3, 5]}}}),
        &["a", "b", "c"],
        "new_field",
        json!({"a": {"b": {"c": [7, 3, 5]}, "new_field": [7, 3, 5]}}),
    );
    check_promote(
        json!([{"a": [{"b": {"c": [[7, 3], [17]]}}, {"b": {"c": [[3, 13]]}}]}, {"a": [{"b": {"c": [[5, 15]]}}]}]),
        &["a", "b", "c"],
        "new_field",
        json!([{"a": [{"b": {"c": [[7, 3], [17]]}, "new_field": [[7, 3], [17]]},
                      {"b": {"c": [[3, 13]]}, "new_field": [[3, 13]]}]},
               {"a": [{"b": {"c": [[5, 15]]}, "new_field": [[5, 15]]}]}]),
    );
    check_promote(
        json!([{"user_info": [{"gaia_id": {"vec": [0, 1, 2]}}]}, {"user_info": [{"gaia_id": {"vec": [3, 4, 5]}}]}]),
        &["user_info", "gaia_id"],
        "user_info_gaia_id",
        json!([{"user_info": [{"gaia_id": {"vec": [0, 1, 2]}}], "user_info_gaia_id": [{"vec": [0, 1, 2]}]},
               {"user_info": [{"gaia_id": {"vec": [3, 4, 5]}}], "user_info_gaia_id": [{"vec": [3, 4, 5]}]}]),
    );
    check_promote(
        json!([{"a": [{"aa": [{"b": {"c": 1}}, {"b": {"c": 8}}]}]}, {"a": [{"aa": [{"b": {"c": 12}}]}]}]),
        &["a", "aa", "b"],
        "new_field",
        json!([{"a": [{"aa": [{"b": {"c": 1}}, {"b": {"c": 8}}], "new_field": [{"c": 1}, {"c": 8}]}]},
               {"a": [{"aa": [{"b": {"c": 12}}], "new_field": [{"c": 12}]}]}]),
    );
}

#[test]
fn promote_dense() {
    let b = Array::dense(
        &[2, 2, 2],
        Values::I64(vec![1, 11, 2, 12, 3, 13, 4, 14].into()),
    )
    .unwrap();
    let a = StructuredTensor::from_fields(
        [("b", FieldValue::Array(b))],
        &[Some(2), Some(2), Some(2)],
        None,
        None,
    )
    .unwrap();
    let s = StructuredTensor::from_fields([("a", FieldValue::Struct(a))], &[Some(2)], None, None)
        .unwrap();
    assert_eq!(s.rank(), 1);
    assert_eq!(s.field_value("a").unwrap().rank(), 3);
    let result = s.promote(["a", "b"], "new_field").unwrap();
    assert_eq!(
        result.field_value("new_field").unwrap().to_json(),
        json!([[1, 11, 2, 12], [3, 13, 4, 14]])
    );
}

#[test]
fn promote_errors() {
    let s = st(json!({"a": {"b": 1}}));
    assert!(matches!(
        s.promote(["a"], "x").unwrap_err(),
        Error::PromotePathTooShort { .. }
    ));
    assert!(matches!(
        s.promote(["a", "zz"], "x").unwrap_err(),
        Error::FieldNotFound { .. }
    ));
    assert!(matches!(
        s.promote(["a", "b"], "1x").unwrap_err(),
        Error::UpdateFailed { .. }
    ));
}

// ---- with_updates --------------------------------------------------------------------

#[track_caller]
fn check_update_values(input: Value, updates: Vec<(Vec<&str>, Value)>) {
    let s = st(input);
    let pairs: Vec<(Vec<&str>, Update)> = updates
        .iter()
        .map(|(k, v)| (k.clone(), Update::Set(value_of(v))))
        .collect();
    let updated = s.with_updates(pairs).unwrap();
    assert_eq!(updated.shape(), s.shape());
    for (k, v) in updates {
        assert_eq!(updated.field_value(k).unwrap().to_json(), v);
    }
}

fn value_of(v: &Value) -> FieldValue {
    if v.is_object() || v.as_array().is_some_and(|a| a.iter().any(Value::is_object)) {
        FieldValue::Struct(st(v.clone()))
    } else {
        arr(v.clone())
    }
}

#[test]
fn with_updates_values() {
    check_update_values(json!({"a": 12, "b": 23}), vec![(vec!["a"], json!(7))]);
    check_update_values(json!({"a": 12}), vec![(vec!["b"], json!(13))]);
    check_update_values(
        json!({"a": 12, "b": {"c": 23}}),
        vec![(vec!["b", "c"], json!(7))],
    );
    check_update_values(
        json!({"a": 12, "b": {"c": 23}}),
        vec![(vec!["a"], json!(3)), (vec!["b", "c"], json!(7))],
    );
    check_update_values(
        json!({"a": 12, "b": {"c": 23, "d": {"e": 11}}}),
        vec![(vec!["b", "c"], json!(7)), (vec!["b", "d", "e"], json!(13))],
    );
    check_update_values(
        json!({"a": 12, "b": {"c": 23, "d": {"e": 11}}}),
        vec![(vec!["b", "c"], json!(7)), (vec!["b", "f"], json!(13))],
    );
    check_update_values(
        json!({"a": 5}),
        vec![(vec!["a"], json!([[51, 52], [61, 62, 63]]))],
    );
    check_update_values(
        json!({"c": {"a": [5, 3], "b": 2}}),
        vec![(vec!["c", "a"], json!(5))],
    );
    check_update_values(
        json!([{"a": 5}, {"a": 6}]),
        vec![(vec!["a"], json!([15, 16])), (vec!["b"], json!([0.9, 1.1]))],
    );
    check_update_values(
        json!([[{"a": [5]}], [{"a": [3, 4]}, {"a": [8]}]]),
        vec![(vec!["a"], json!([[[50, 60]], [[30], []]]))],
    );
}

#[test]
fn with_updates_functions() {
    let s = st(json!({"a": 12, "b": {"c": 23, "d": {"e": 11}}}));
    let plus = |k: i64| {
        Update::transform(move |v: &FieldValue| {
            Ok(FieldValue::Array(v.as_array().unwrap().map_i64(|x| x + k)?))
        })
    };
    let updated = s
        .with_updates(vec![(vec!["a"], plus(1)), (vec!["b", "d", "e"], plus(7))])
        .unwrap();
    assert_eq!(updated.field_value("a").unwrap().to_json(), json!(13));
    assert_eq!(
        updated.field_value(["b", "d", "e"]).unwrap().to_json(),
        json!(18)
    );
    assert_eq!(
        updated.field_value(["b", "c"]).unwrap().to_json(),
        json!(23)
    );
}

#[test]
fn with_updates_shoe_sizes_us_to_eu() {
    let shoes_us = st(json!([
        {"age": 12, "nicknames": ["Josaphine"], "shoes": {"sizes": [8.0, 7.5, 7.5]}},
        {"age": 82, "nicknames": ["Bob", "Bobby"], "shoes": {"sizes": [11.0, 11.5, 12.0]}},
        {"age": 42, "nicknames": ["Elmo"], "shoes": {"sizes": [9.0, 9.5, 10.0]}}]));
    let us_to_europe = Update::transform(|t: &FieldValue| {
        Ok(FieldValue::Array(
            t.as_array()
                .unwrap()
                .map_f64(|x| (x * 2.54 + 17.0).round())?,
        ))
    });
    let shoes_eu = shoes_us
        .with_updates(vec![(["shoes", "sizes"], us_to_europe)])
        .unwrap();
    assert_eq!(
        shoes_eu.field_value(["shoes", "sizes"]).unwrap().to_json(),
        json!([[37.0, 36.0, 36.0], [45.0, 46.0, 47.0], [40.0, 41.0, 42.0]])
    );
    assert_eq!(
        shoes_eu.field_value("age").unwrap(),
        shoes_us.field_value("age").unwrap()
    );
}

#[test]
fn with_updates_checks() {
    let s = st(json!({"a": 12, "b": {"c": 23, "d": {"e": 11}}}));
    let set5 = || Update::set(Array::from_json(&json!(5)).unwrap());
    let inc = || Update::transform(|v: &FieldValue| Ok(v.clone()));
    let msg = |r: Result<StructuredTensor, Error>| r.unwrap_err().to_string();
    let m = msg(s.with_updates(vec![(vec!["b", "x", "e"], set5())]));
    assert!(
        m.contains(
            "cannot create new sub-field ('b', 'x', 'e') if parent field ('b', 'x') is not set"
        ),
        "{m}"
    );
    let m = msg(s.with_updates(vec![(vec!["b", "c", "e"], set5())]));
    assert!(
        m.contains("cannot create new sub-field")
            && m.contains("('b', 'c') is not a `StructuredTensor`"),
        "{m}"
    );
    let m = msg(s.with_updates(vec![(vec!["b", "d", "x"], inc())]));
    assert!(
        m.contains("cannot update the field ('b', 'd', 'x')")
            && m.contains("does not already exist"),
        "{m}"
    );
    let m = msg(s.with_updates(vec![(Vec::<&str>::new(), inc())]));
    assert!(m.contains("does not allow empty names"), "{m}");
    let m = msg(s.with_updates(vec![(vec!["b", ""], inc())]));
    assert!(m.contains("does not allow empty names ('b', '')"), "{m}");
    let m = msg(s.with_updates(vec![
        (vec!["b", "d"], inc()),
        (vec!["a"], set5()),
        (vec!["b"], set5()),
    ]));
    assert!(
        m.contains("does not allow both parent and child nodes")
            && m.contains("parent=('b',), child=('b', 'd')"),
        "{m}"
    );
    let with_shape =
        st(json!([[{"c": {"a": 5, "b": 2}}], [{"c": {"a": 3, "b": 1}}, {"c": {"a": 8, "b": 18}}]]));
    let m = msg(with_shape.with_updates(vec![(vec!["c", "a"], set5())]));
    assert!(
        m.starts_with("`StructuredTensor.with_updates` failed for field ('c',)"),
        "{m}"
    );
}

#[test]
fn with_updates_delete() {
    let s = st(json!({"a": 12, "b": {"c": 23, "d": {"e": 11}}}));
    let updated = s
        .with_updates(vec![(vec!["b", "c"], Update::Delete)])
        .unwrap();
    assert_eq!(
        updated
            .field_value("b")
            .unwrap()
            .as_struct()
            .unwrap()
            .field_names(),
        vec!["d"]
    );
    let m = s
        .with_updates(vec![(vec!["b", "x"], Update::Delete)])
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("cannot delete field ('b', 'x') because it is not present"),
        "{m}"
    );
    let m = s
        .with_updates(vec![("x", Update::Delete)])
        .unwrap_err()
        .to_string();
    assert!(m.contains("cannot delete field ('x',)"), "{m}");

    let s = st(json!([[{"a": 1}, {"a": 2}], [{"a": 3}]]));
    let updated = s.with_updates(vec![("a", Update::Delete)]).unwrap();
    assert_eq!(updated.row_partitions().len(), 1);
    assert_eq!(updated.nrows(), Some(2));
    assert_eq!(updated.row_partitions()[0].row_lengths(), vec![2, 1]);
    assert_eq!(updated.to_json(), json!([[{}, {}], [{}]]));

    let s = st(json!([{"a": 1}, {"a": 2}]));
    let updated = s.with_updates(vec![("a", Update::Delete)]).unwrap();
    assert_eq!(updated.rank(), 1);
    assert_eq!(updated.nrows(), Some(2));

    let s = st(json!({"a": [0, 1]}));
    let updated = s.with_updates(vec![("a", Update::Delete)]).unwrap();
    assert_eq!(updated.rank(), 0);
    assert!(updated.row_partitions().is_empty());
    assert_eq!(updated.nrows(), None);
}

#[test]
fn with_updates_shares_partitions() {
    let s = st(json!([[{"a": 1}, {"a": 2}], [{"a": 3}]]));
    let b = Array::from_json(&json!([[10, 20], [30]])).unwrap();
    let updated = s.with_updates(vec![("b", Update::set(b))]).unwrap();
    let p = &updated.row_partitions()[0];
    assert!(p.ptr_eq(&s.row_partitions()[0]));
    assert!(updated.field_value("b").unwrap().row_partitions()[0].ptr_eq(p));
    assert_eq!(
        updated.to_json(),
        json!([[{"a": 1, "b": 10}, {"a": 2, "b": 20}], [{"a": 3, "b": 30}]])
    );
}

#[test]
fn ragged_core_interop_shares_partitions() {
    let s = st(json!([[{"a": [1, 2], "x": 1.5}, {"a": [], "x": 2.5}], [{"a": [3], "x": 3.5}]]));
    let shape = s.ragged_shape().unwrap();
    assert_eq!(shape.num_axes(), 2);
    assert!(shape.layers()[0].ptr_eq(&s.row_partitions()[0]));
    let a = s.field_value("a").unwrap().as_array().unwrap();
    let ragged = a.to_ragged_i64().unwrap();
    assert_eq!(ragged.num_axes(), 3);
    assert_eq!(ragged.values(), &[1, 2, 3]);
    assert!(ragged.shape().layers()[0].ptr_eq(&s.row_partitions()[0]));
    assert_eq!(ragged.shape().row_splits(2), &[0, 2, 2, 3]);
    let x = s.field_value("x").unwrap().as_array().unwrap();
    assert_eq!(x.to_ragged_f64().unwrap().values(), &[1.5, 2.5, 3.5]);
    assert!(x.to_ragged_i64().is_none());
    assert!(st(json!([{"a": 1}])).ragged_shape().is_none());
}

#[test]
fn builder_checks_lengths() {
    use structured_tensor::Builder;
    let e = Builder::vector(2)
        .list_lengths("a", Values::I64(vec![1].into()), &[usize::MAX, 2])
        .unwrap_err();
    assert_eq!(
        e,
        Error::InvalidPartition {
            what: "offset 18446744073709551615 does not fit in i32".into()
        }
    );
    let e = Builder::vector(2)
        .list_lengths("a", Values::I64(vec![1].into()), &[1, 1])
        .unwrap_err();
    assert_eq!(
        e,
        Error::ValuesLength {
            expected: 2,
            got: 1
        }
    );
    let e = Builder::vector(2)
        .scalar("a", Values::I64(vec![1].into()))
        .unwrap_err();
    assert_eq!(
        e,
        Error::ValuesLength {
            expected: 2,
            got: 1
        }
    );
    let e = Builder::vector(2)
        .list_lengths("a", Values::I64(vec![1].into()), &[1])
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::LayerMismatch {
                expected: 2,
                got: 1,
                ..
            }
        ),
        "{e}"
    );
    let e = Builder::vector(1)
        .scalar("_a", Values::I64(vec![1].into()))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Field name '_a' is not currently allowed. Names must match ^[a-zA-Z][a-zA-Z0-9_]*$ (struct at path ())"
    );
    let ok = Builder::with_row_lengths(&[2, 0, 1])
        .unwrap()
        .scalar("a", Values::Bool(vec![true, false, true]))
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(
        ok.to_json(),
        json!([[{"a": true}, {"a": false}], [], [{"a": true}]])
    );
    let e = Builder::vector(2)
        .field("a", Array::from_json(&json!([1, 2, 3])).unwrap())
        .unwrap()
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::IncompatibleNrows {
                expected: 2,
                got: 3,
                ..
            }
        ),
        "{e}"
    );
}
