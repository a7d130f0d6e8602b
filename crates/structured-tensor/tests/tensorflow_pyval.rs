//! TensorFlow's docstring examples and `structured_tensor_test.py` cases for `from_pyval`,
//! `to_pyval`, `from_fields` and their errors, with the expected results written out.

use serde_json::{json, Value};
use structured_tensor::{
    Array, DType, Error, FieldSpec, FieldValue, RowPartition, StructuredTensor, Values,
};

fn st(v: Value) -> StructuredTensor {
    StructuredTensor::from_json(&v).unwrap_or_else(|e| panic!("from_json({v}) failed: {e}"))
}

fn arr(v: Value) -> FieldValue {
    FieldValue::Array(Array::from_json(&v).unwrap())
}

fn splits(s: &StructuredTensor) -> Vec<Vec<i32>> {
    s.row_partitions()
        .iter()
        .map(|p| p.row_splits().to_vec())
        .collect()
}

/// `from_json(v)` succeeds and `to_json` gives `v` back.
#[track_caller]
fn check_round_trip(v: Value) -> StructuredTensor {
    let s = st(v.clone());
    assert_eq!(s.to_json(), v);
    s
}

#[track_caller]
fn check_err(v: Value, expected_substring: &str) {
    let err = StructuredTensor::from_json(&v).expect_err(&format!("{v} should be rejected"));
    let msg = err.to_string();
    assert!(
        msg.contains(expected_substring),
        "message {msg:?} lacks {expected_substring:?}"
    );
}

// ---- The seed's and TensorFlow's docstring examples -------------------------------------

#[test]
fn seed_scalar_person() {
    let s1 = st(json!({"age": 82, "nicknames": ["Bob", "Bobby"]}));
    assert_eq!(s1.shape(), Vec::<Option<usize>>::new());
    assert_eq!(s1.rank(), 0);
    let age = s1.field_value("age").unwrap().as_array().unwrap();
    assert_eq!(age.rank(), 0);
    assert_eq!(age.dtype(), DType::I64);
    assert_eq!(age.to_json(), json!(82));
}

#[test]
fn seed_vector_of_people() {
    let s2 = st(json!([
        {"age": 12, "nicknames": ["Josaphine"]},
        {"age": 82, "nicknames": ["Bob", "Bobby"]},
        {"age": 42, "nicknames": ["Elmo"]}]));
    assert_eq!(s2.shape(), vec![Some(3)]);
    let first = s2.get(&[0.into()]).unwrap();
    let age = first.as_struct().unwrap().get(&["age".into()]).unwrap();
    assert_eq!(age.to_json(), json!(12));
}

fn x() -> Value {
    json!({"a": 1, "b": ["foo", "bar", "baz"]})
}

#[test]
fn seed_row_partitions_s1_to_s5() {
    let x = x();
    let s1 = st(json!([[x, x, x, x], [x, x, x, x]]));
    assert_eq!(splits(&s1), vec![vec![0, 4, 8]]);
    assert_eq!(s1.shape(), vec![Some(2), Some(4)]);
    let s2 = st(json!([[x, x], [x, x], [x, x], [x, x]]));
    assert_eq!(splits(&s2), vec![vec![0, 2, 4, 6, 8]]);
    assert_eq!(s2.shape(), vec![Some(4), Some(2)]);
    let s3 = st(json!([[x, x, x], [], [x, x, x, x], [x]]));
    assert_eq!(splits(&s3), vec![vec![0, 3, 3, 7, 8]]);
    assert_eq!(s3.shape(), vec![Some(4), None]);
    let s4 = st(json!([[[x, x], [x, x]], [[x, x], [x, x]]]));
    assert_eq!(splits(&s4), vec![vec![0, 2, 4], vec![0, 2, 4, 6, 8]]);
    assert_eq!(s4.shape(), vec![Some(2), Some(2), Some(2)]);
    let s5 = st(json!([[[x, x], [x]], [[x, x]], [[x, x], [x]]]));
    assert_eq!(splits(&s5), vec![vec![0, 2, 3, 5], vec![0, 2, 3, 5, 7, 8]]);
    assert_eq!(s5.shape(), vec![Some(3), None, None]);
    // Nested field shapes are not part of the struct's shape.
    assert_eq!(s5.row_partitions().len(), 2);
    for s in [s1, s2, s3, s4, s5] {
        let b = s.field_value("b").unwrap();
        assert_eq!(b.rank(), s.rank() + 1);
        // The fields share the struct's partitions (the same storage).
        for (p, q) in s.row_partitions().iter().zip(b.row_partitions()) {
            assert!(p.ptr_eq(q));
        }
    }
}

#[test]
fn docstring_from_fields_scalar() {
    let s = StructuredTensor::from_fields(
        [("x", arr(json!(1))), ("y", arr(json!([1, 2, 3])))],
        &[],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.shape(), Vec::<Option<usize>>::new());
    assert_eq!(s.field_value("x").unwrap().shape(), vec![]);
    assert_eq!(s.field_value("y").unwrap().shape(), vec![Some(3)]);
    assert_eq!(s.to_json(), json!({"x": 1, "y": [1, 2, 3]}));
    assert_eq!(
        s.to_string(),
        "<StructuredTensor(fields={\"x\": Tensor(1, shape=(), dtype=int64), \
         \"y\": Tensor([1,2,3], shape=(3,), dtype=int64)}, shape=())>"
    );
}

#[test]
fn docstring_from_fields_vector() {
    let s = StructuredTensor::from_fields(
        [("foo", arr(json!([1, 2]))), ("bar", arr(json!([3, 4])))],
        &[Some(2)],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.shape(), vec![Some(2)]);
    // TensorFlow 2.21's field_names() is ('foo', 'bar'): the order the fields were given
    assert_eq!(s.field_names(), vec!["foo", "bar"]);
    assert_eq!(
        s.to_json(),
        json!([{"bar": 3, "foo": 1}, {"bar": 4, "foo": 2}])
    );
}

#[test]
fn docstring_from_fields_and_rank() {
    let s0 = StructuredTensor::from_fields_and_rank(
        [("x", arr(json!(1))), ("y", arr(json!([1, 2, 3])))],
        0,
    )
    .unwrap();
    assert_eq!(s0.to_json(), json!({"x": 1, "y": [1, 2, 3]}));
    let s1 = StructuredTensor::from_fields_and_rank(
        [("foo", arr(json!([1, 2]))), ("bar", arr(json!([3, 4])))],
        1,
    )
    .unwrap();
    assert_eq!(s1.shape(), vec![Some(2)]);
    assert_eq!(
        StructuredTensor::from_fields_and_rank(Vec::<(String, FieldValue)>::new(), 1).unwrap_err(),
        Error::NoFields
    );
}

#[test]
fn docstring_from_pyval() {
    let s = check_round_trip(json!({"a": [1, 2, 3], "b": [[4, 5], [6, 7]]}));
    let a = s.field_value("a").unwrap().as_array().unwrap();
    assert_eq!(a.shape(), vec![Some(3)]);
    assert_eq!(a.values(), &Values::I64(vec![1, 2, 3].into()));
    let b = s.field_value("b").unwrap().as_array().unwrap();
    assert_eq!(b.row_partitions()[0].row_splits(), &[0, 2, 4]);
    assert_eq!(b.values(), &Values::I64(vec![4, 5, 6, 7].into()));
}

#[test]
fn docstring_to_pyval() {
    let s = StructuredTensor::from_fields([("a", arr(json!([1, 2, 3])))], &[Some(3)], None, None)
        .unwrap();
    assert_eq!(s.to_json(), json!([{"a": 1}, {"a": 2}, {"a": 3}]));
}

#[test]
fn spec_is_comparable_and_printable() {
    let s = st(json!([
        {"age": 12, "nicknames": ["Josaphine"], "shoes": {"sizes": [8.0, 7.5, 7.5]}},
        {"age": 82, "nicknames": ["Bob", "Bobby"], "shoes": {"sizes": [11.0, 11.5, 12.0]}}]));
    let spec = s.spec();
    assert_eq!(spec.rank(), 1);
    assert_eq!(
        spec.fields["age"],
        FieldSpec::Tensor {
            shape: vec![Some(2)],
            dtype: DType::I64
        }
    );
    assert_eq!(
        spec.fields["nicknames"],
        FieldSpec::Ragged {
            shape: vec![Some(2), None],
            dtype: DType::Str,
            ragged_rank: 1
        }
    );
    assert_eq!(
        spec.to_string(),
        "StructuredTensorSpec(shape=(2,), fields={\"age\": TensorSpec(shape=(2,), dtype=int64), \
         \"nicknames\": RaggedTensorSpec(shape=(2, None), dtype=string, ragged_rank=1), \
         \"shoes\": StructuredTensorSpec(shape=(2,), fields={\"sizes\": TensorSpec(shape=(2, 3), dtype=float64)})})"
    );
    let other = st(json!([
        {"age": 1, "nicknames": [], "shoes": {"sizes": [1.0, 2.0, 3.0]}},
        {"age": 2, "nicknames": ["x", "y"], "shoes": {"sizes": [4.0, 5.0, 6.0]}}]));
    assert_eq!(spec, other.spec());
    let third = st(json!([{"age": 1.5, "nicknames": [], "shoes": {"sizes": []}}]));
    assert_ne!(spec, third.spec());
}

// ---- testPyvalConversion -------------------------------------------------------------

#[test]
fn pyval_scalar_empty() {
    let s = check_round_trip(json!({}));
    assert_eq!(s.rank(), 0);
    assert!(s.field_names().is_empty());
}

#[test]
fn pyval_scalar_simple() {
    let s = check_round_trip(json!({"a": 12, "b": [1, 2, 3], "c": [[1, 2], [3]]}));
    let expected = StructuredTensor::from_fields(
        [
            ("a", arr(json!(12))),
            ("b", arr(json!([1, 2, 3]))),
            (
                "c",
                FieldValue::Array(
                    Array::from_row_lengths(Values::I64(vec![1, 2, 3].into()), &[2, 1]).unwrap(),
                ),
            ),
        ],
        &[],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s, expected);
}

#[test]
fn pyval_scalar_with_nested_struct() {
    let s = check_round_trip(json!({"a": 12, "b": [1, 2, 3], "c": {"x": "Z", "y": [10, 20]}}));
    let c = s.field_value("c").unwrap().as_struct().unwrap();
    assert_eq!(c.rank(), 0);
    assert_eq!(c.field_value("x").unwrap().to_json(), json!("Z"));
    assert_eq!(c.field_value("y").unwrap().shape(), vec![Some(2)]);
}

#[test]
fn pyval_empty_list() {
    let s = check_round_trip(json!([]));
    assert_eq!(s.shape(), vec![Some(0)]);
    assert!(s.field_names().is_empty());
}

#[test]
fn pyval_list_of_empty_list() {
    let s = check_round_trip(json!([[], []]));
    assert_eq!(s.rank(), 2);
    assert_eq!(splits(&s), vec![vec![0, 0, 0]]);
}

#[test]
fn pyval_vector_of_dict() {
    let s = check_round_trip(json!([{"a": 1}, {"a": 2}]));
    let expected =
        StructuredTensor::from_fields([("a", arr(json!([1, 2])))], &[Some(2)], None, None).unwrap();
    assert_eq!(s, expected);
}

#[test]
fn pyval_vector_of_dict_with_nested_struct_scalar() {
    let s = check_round_trip(json!([{"a": 1, "b": {"x": [1, 2]}}, {"a": 2, "b": {"x": [3]}}]));
    let b = s.field_value("b").unwrap().as_struct().unwrap();
    assert_eq!(b.shape(), vec![Some(2)]);
    assert_eq!(b.field_value("x").unwrap().to_json(), json!([[1, 2], [3]]));
}

#[test]
fn pyval_vector_of_dict_with_nested_struct_vector() {
    let s = check_round_trip(json!([
        {"a": 1, "b": [{"x": [1, 2]}, {"x": [5]}]},
        {"a": 2, "b": [{"x": [3]}]}]));
    let b = s.field_value("b").unwrap().as_struct().unwrap();
    assert_eq!(b.shape(), vec![Some(2), None]);
    assert_eq!(
        b.field_value("x").unwrap().to_json(),
        json!([[[1, 2], [5]], [[3]]])
    );
}

#[test]
fn pyval_ragged_2d_of_dict() {
    let s = check_round_trip(json!([[{"a": 1}, {"a": 2}, {"a": 3}], [{"a": 4}, {"a": 5}]]));
    assert_eq!(s.shape(), vec![Some(2), None]);
    assert_eq!(
        s.field_value("a").unwrap().to_json(),
        json!([[1, 2, 3], [4, 5]])
    );
}

#[test]
fn pyval_matrix_of_dict() {
    let s =
        check_round_trip(json!([[{"a": 1}, {"a": 2}, {"a": 3}], [{"a": 4}, {"a": 5}, {"a": 6}]]));
    assert_eq!(s.shape(), vec![Some(2), Some(3)]);
    assert_eq!(
        s.field_value("a").unwrap().to_json(),
        json!([[1, 2, 3], [4, 5, 6]])
    );
}

#[test]
fn pyval_list_of_empty_dicts() {
    let s = check_round_trip(json!([{}]));
    assert_eq!(s.shape(), vec![Some(1)]);
    let s3 = check_round_trip(json!([{}, {}, {}]));
    assert_eq!(s3.shape(), vec![Some(3)]);
    assert!(s3.field_names().is_empty());
}

#[test]
fn pyval_deep_list_of_empty() {
    let s = check_round_trip(json!([
        [{"a": {}, "b": [3, 4]}, {"a": {}, "b": [5]}],
        [{"a": {}, "b": [7, 8, 9]}]]));
    assert_eq!(s.rank(), 2);
    assert_eq!(s.nrows(), Some(2));
    let a = s.field_value("a").unwrap().as_struct().unwrap();
    assert!(a.field_names().is_empty());
    assert_eq!(a.to_json(), json!([[{}, {}], [{}]]));
}

#[test]
fn pyval_deep_row_partitions() {
    let s = check_round_trip(json!([{"foo": [{"bar": [{"baz": ["FW"]}]}]}]));
    let bar = s.field_value(["foo", "bar"]).unwrap().as_struct().unwrap();
    assert_eq!(bar.rank(), 3);
    assert_eq!(bar.row_partitions().len(), bar.rank() - 1);
}

#[test]
fn pyval_int_float_mix_becomes_float() {
    let s = st(json!({"a": [1, 2.5], "b": [[1], [2.0]]}));
    let a = s.field_value("a").unwrap().as_array().unwrap();
    assert_eq!(a.values(), &Values::F64(vec![1.0, 2.5].into()));
    let b = s.field_value("b").unwrap().as_array().unwrap();
    assert_eq!(b.dtype(), DType::F64);
    // A list of empty lists has no scalars: float64, as TensorFlow's float32 default.
    let e = st(json!({"e": [[], []]}));
    assert_eq!(
        e.field_value("e").unwrap().as_array().unwrap().dtype(),
        DType::F64
    );
}

// ---- testToPyval ---------------------------------------------------------------------

#[test]
fn to_pyval_no_fields_ragged_rank0() {
    let s =
        StructuredTensor::from_fields(Vec::<(String, FieldValue)>::new(), &[Some(3)], None, None)
            .unwrap();
    assert_eq!(s.to_json(), json!([{}, {}, {}]));
}

#[test]
fn to_pyval_no_fields_ragged_rank1() {
    let p = RowPartition::from_row_lengths(&[3, 2]).unwrap();
    let s = StructuredTensor::from_fields(
        Vec::<(String, FieldValue)>::new(),
        &[Some(2), None],
        None,
        Some(vec![p]),
    )
    .unwrap();
    assert_eq!(s.to_json(), json!([[{}, {}, {}], [{}, {}]]));
}

#[test]
fn to_pyval_no_fields_ragged_rank2() {
    let p1 = RowPartition::from_row_lengths(&[2, 1]).unwrap();
    let p2 = RowPartition::from_row_lengths(&[2, 3, 1]).unwrap();
    let s = StructuredTensor::from_shape(3, 2, vec![p1, p2]).unwrap();
    assert_eq!(s.to_json(), json!([[[{}, {}], [{}, {}, {}]], [[{}]]]));
}

#[test]
fn to_pyval_no_fields_ragged_rank2_no_dicts() {
    let p1 = RowPartition::from_row_lengths(&[2]).unwrap();
    let p2 = RowPartition::from_row_lengths(&[0, 0]).unwrap();
    let s = StructuredTensor::from_shape(3, 1, vec![p1, p2]).unwrap();
    assert_eq!(s.to_json(), json!([[[], []]]));
}

#[test]
fn to_pyval_nested_struct_with_no_fields() {
    let bar = StructuredTensor::from_shape(
        4,
        1,
        vec![
            RowPartition::from_row_lengths(&[2]).unwrap(),
            RowPartition::from_row_lengths(&[0, 0]).unwrap(),
            RowPartition::from_row_lengths(&[]).unwrap(),
        ],
    )
    .unwrap();
    let foo = Array::from_json(&json!([[[], []]])).unwrap();
    let s = StructuredTensor::from_fields(
        [
            ("foo", FieldValue::Array(foo)),
            ("bar", FieldValue::Struct(bar)),
        ],
        &[Some(1), None, None],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.to_json(), json!([[[], []]]));
}

// ---- testFromPyvalError ----------------------------------------------------------------

#[test]
fn pyval_error_missing_keys() {
    check_err(json!([{"a": [1, 2]}, {"b": [3, 4]}]), "key 'a' is missing");
}

#[test]
fn pyval_error_list_tensor_deep_infer() {
    check_err(
        json!({"a": [{"b": [[1]]}, {"b": [["c"]]}]}),
        "Error parsing path ('a', 'b')",
    );
}

#[test]
fn pyval_error_list_tensor_deep_infer2() {
    check_err(json!([{"a": 1}, {"a": "c"}]), "Error parsing path ('a',)");
}

#[test]
fn pyval_error_inconsistent_dictionary_depth() {
    check_err(json!([{}, [{}]]), "Inconsistent depth of dictionaries");
}

#[test]
fn pyval_error_expected_dict() {
    check_err(
        json!([[{}], 5]),
        "Expected dict or nested list/tuple of dict",
    );
}

#[test]
fn pyval_error_cases_beyond_tensorflow_tests() {
    check_err(
        json!({"a": null}),
        "Error parsing path ('a',): null values are not supported",
    );
    check_err(json!([{"a": [1, null]}]), "Error parsing path ('a',)");
    check_err(json!({"": 5}), "Field name '' is not currently allowed");
    check_err(json!({"_": 5}), "Field name '_' is not currently allowed");
    check_err(
        json!({"a": {"1x": 5}}),
        "Field name '1x' is not currently allowed.",
    );
    check_err(json!({"a": {"1x": 5}}), "(struct at path ('a',))");
    check_err(json!([{"a-b": 1}]), "Field name 'a-b'");
    check_err(json!(5), "found a number");
    check_err(json!("s"), "found a string");
    check_err(json!(null), "found null");
    check_err(json!([1, 2]), "found a list of values");
    check_err(
        json!({"a": [1, [2]]}),
        "all scalar values must have the same nesting depth",
    );
    check_err(
        json!({"a": [1, []]}),
        "empty list nesting (2) is greater than scalar value nesting (1)",
    );
    check_err(
        json!({"a": 18446744073709551615u64}),
        "does not fit in int64",
    );
    check_err(
        json!({"a": [true, 1]}),
        "values of incompatible types bool and int64",
    );
    check_err(
        json!({"a": ["x", 1.5]}),
        "values of incompatible types string and float64",
    );
    check_err(json!([{"a": 1}, []]), "found a list at list depth 1");
    check_err(json!([{"a": [1]}, [[]]]), "found a list at list depth 1");
    check_err(
        json!([{"a": [1]}, [{"a": 1}]]),
        "Inconsistent depth of dictionaries",
    );
    check_err(
        json!({"a": [{"b": 1}, 2]}),
        "Expected dict or nested list/tuple of dict at path ('a',)",
    );
}

// ---- testFromFields and its errors -----------------------------------------------------

#[test]
fn from_fields_rank0_with_tensor_fields() {
    let s = StructuredTensor::from_fields(
        [("Foo", arr(json!(5))), ("Bar", arr(json!([1, 2, 3])))],
        &[],
        None,
        None,
    )
    .unwrap();
    // the order given, as TensorFlow 2.21's field_names()
    assert_eq!(s.field_names(), vec!["Foo", "Bar"]);
    assert_eq!(s.field_value("Foo").unwrap().to_json(), json!(5));
}

#[test]
fn from_fields_rank1_with_explicit_nrows() {
    let s = StructuredTensor::from_fields(
        [
            ("x", arr(json!([1, 2]))),
            ("y", arr(json!([[1, 2], [3, 4]]))),
        ],
        &[None],
        Some(2),
        None,
    )
    .unwrap();
    assert_eq!(s.shape(), vec![Some(2)]);
}

#[test]
fn from_fields_rank1_with_no_elements() {
    let s = StructuredTensor::from_fields(
        [
            ("x", arr(json!([]))),
            ("s", FieldValue::Struct(st(json!([])))),
        ],
        &[Some(0)],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.to_json(), json!([]));
}

#[test]
fn from_fields_rank2_with_ragged_fields() {
    let s = StructuredTensor::from_fields(
        [
            ("a", arr(json!([[1, 2], [3]]))),
            ("b", arr(json!([[4, 5], [6]]))),
            ("c", arr(json!([[[1, 2], [3]], [[4, 5]]]))),
            (
                "d",
                arr(json!([[[[1, 2], [3]], [[4], [], [5]]], [[[6, 7, 8], []]]])),
            ),
        ],
        &[Some(2), None],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.shape(), vec![Some(2), None]);
    assert_eq!(splits(&s), vec![vec![0, 2, 3]]);
    for name in ["a", "b", "c", "d"] {
        assert!(s.field_value(name).unwrap().row_partitions()[0].ptr_eq(&s.row_partitions()[0]));
    }
    assert_eq!(
        s.to_json(),
        json!([
            [{"a": 1, "b": 4, "c": [1, 2], "d": [[1, 2], [3]]},
             {"a": 2, "b": 5, "c": [3], "d": [[4], [], [5]]}],
            [{"a": 3, "b": 6, "c": [4, 5], "d": [[6, 7, 8], []]}]])
    );
}

#[test]
fn from_fields_rank1_with_mixed_fields() {
    let s = StructuredTensor::from_fields(
        [
            ("x", arr(json!([1, 2]))),
            ("y", arr(json!([[1, 2], [3, 4]]))),
            ("r", arr(json!([[1, 2], [3]]))),
            (
                "s",
                FieldValue::Struct(st(json!([[{"x": 12}], [{"x": 13}, {"x": 14}]]))),
            ),
        ],
        &[Some(2)],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.shape(), vec![Some(2)]);
    assert_eq!(
        s.to_json(),
        json!([
            {"r": [1, 2], "s": [{"x": 12}], "x": 1, "y": [1, 2]},
            {"r": [3], "s": [{"x": 13}, {"x": 14}], "x": 2, "y": [3, 4]}])
    );
}

#[test]
fn from_fields_rank2_with_mixed_fields() {
    let dense = Array::dense(&[2, 2], Values::I64(vec![1, 2, 3, 4].into())).unwrap();
    let s = StructuredTensor::from_fields(
        [
            ("a", FieldValue::Array(dense)),
            ("b", arr(json!([[1, 2], [3, 4]]))),
            (
                "c",
                FieldValue::Struct(st(json!([[[{"y": 1}], []], [[], [{"y": 2}, {"y": 3}]]]))),
            ),
            ("d", arr(json!([[[1, 2], []], [[3], [4]]]))),
        ],
        &[Some(2), None],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.shape(), vec![Some(2), Some(2)]);
    let p = &s.row_partitions()[0];
    for name in ["a", "b", "c", "d"] {
        assert!(
            s.field_value(name).unwrap().row_partitions()[0].ptr_eq(p),
            "{name}"
        );
    }
}

#[test]
fn from_fields_rank2_with_structured_fields() {
    let s = StructuredTensor::from_fields(
        [
            (
                "a",
                FieldValue::Struct(st(json!([[{"x": 1}], [{"x": 2}, {"x": 3}]]))),
            ),
            (
                "b",
                FieldValue::Struct(st(json!([[[{"y": 1}]], [[], [{"y": 2}, {"y": 3}]]]))),
            ),
        ],
        &[Some(2), None],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.shape(), vec![Some(2), None]);
    assert_eq!(s.field_value("b").unwrap().rank(), 3);
}

#[test]
fn from_fields_rank2_with_no_fields_and_explicit_row_partitions() {
    let p = RowPartition::from_row_lengths(&[3, 7]).unwrap();
    let s = StructuredTensor::from_fields(
        Vec::<(String, FieldValue)>::new(),
        &[Some(2), None],
        None,
        Some(vec![p]),
    )
    .unwrap();
    assert_eq!(s.shape(), vec![Some(2), None]);
    assert_eq!(s.num_structs(), 10);
}

#[test]
fn from_fields_rank2_with_no_fields_uniform_shape() {
    let s = StructuredTensor::from_fields(
        Vec::<(String, FieldValue)>::new(),
        &[Some(2), Some(8)],
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.shape(), vec![Some(2), Some(8)]);
    assert_eq!(splits(&s), vec![vec![0, 8, 16]]);
}

#[test]
fn from_fields_rank4_with_no_fields() {
    let s = StructuredTensor::from_fields(
        Vec::<(String, FieldValue)>::new(),
        &[Some(1), None, None, Some(3)],
        None,
        Some(vec![
            RowPartition::from_row_lengths(&[3]).unwrap(),
            RowPartition::from_row_lengths(&[2, 0, 1]).unwrap(),
            RowPartition::from_uniform_row_length(3, 3).unwrap(),
        ]),
    )
    .unwrap();
    assert_eq!(s.shape(), vec![Some(1), Some(3), None, Some(3)]);
    assert_eq!(s.num_structs(), 9);
}

#[test]
fn nested_struct_construction() {
    let rt = arr(json!([[1, 2], [3]]));
    let struct1 =
        StructuredTensor::from_fields([("x", arr(json!([1, 2])))], &[], None, None).unwrap();
    let struct2 =
        StructuredTensor::from_fields([("x", arr(json!([1, 2])))], &[Some(2)], None, None).unwrap();
    let struct3 = StructuredTensor::from_fields(
        [
            ("r", rt.clone()),
            ("s", FieldValue::Struct(struct1.clone())),
        ],
        &[],
        None,
        None,
    )
    .unwrap();
    let struct4 = StructuredTensor::from_fields(
        [
            ("r", rt.clone()),
            ("s", FieldValue::Struct(struct2.clone())),
        ],
        &[Some(2)],
        None,
        None,
    )
    .unwrap();
    assert_eq!(struct3.rank(), 0);
    assert_eq!(struct3.field_names(), vec!["r", "s"]);
    assert_eq!(struct3.field_value("r").unwrap(), &rt);
    assert_eq!(
        struct3.field_value("s").unwrap(),
        &FieldValue::Struct(struct1)
    );
    assert_eq!(struct4.shape(), vec![Some(2)]);
    assert_eq!(
        struct4.field_value("s").unwrap(),
        &FieldValue::Struct(struct2)
    );
}

#[test]
fn from_fields_errors() {
    let none: Vec<(String, FieldValue)> = Vec::new();
    let e =
        StructuredTensor::from_fields([("f", arr(json!(5)))], &[Some(5)], None, None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Field f has shape (), which is incompatible with the shape that was specified or \
         inferred from other fields: (5,)"
    );
    let e = StructuredTensor::from_fields(
        [("x", arr(json!([1]))), ("y", arr(json!([])))],
        &[None],
        None,
        None,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Field y has shape (0,), which is incompatible"),
        "{e}"
    );
    let e = StructuredTensor::from_fields([("", arr(json!(5)))], &[], None, None).unwrap_err();
    assert!(
        e.to_string()
            .contains("Field name '' is not currently allowed."),
        "{e}"
    );
    let e = StructuredTensor::from_fields([("_", arr(json!(5)))], &[], None, None).unwrap_err();
    assert!(
        e.to_string()
            .contains("Field name '_' is not currently allowed."),
        "{e}"
    );
    let e = StructuredTensor::from_fields(
        [
            ("r1", arr(json!([[1, 2], [3]]))),
            ("r2", arr(json!([[1, 2, 3], [4]]))),
        ],
        &[Some(2), None],
        None,
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("incompatible row_splits"), "{e}");
    assert_eq!(
        StructuredTensor::from_fields(none.clone(), &[], Some(5), None)
            .unwrap_err()
            .to_string(),
        "nrows must be None if shape.rank==0"
    );
    assert_eq!(
        StructuredTensor::from_fields(
            none.clone(),
            &[],
            None,
            Some(vec![RowPartition::from_row_lengths(&[1]).unwrap()])
        )
        .unwrap_err()
        .to_string(),
        "row_partitions must be None or [] if shape.rank<2"
    );
    assert!(
        StructuredTensor::from_fields(none.clone(), &[None, None, None], None, Some(vec![]))
            .unwrap_err()
            .to_string()
            .starts_with("len(row_partitions) must be shape.rank-1")
    );
    assert_eq!(
        StructuredTensor::from_fields(none.clone(), &[None], None, None)
            .unwrap_err()
            .to_string(),
        "nrows must be specified if rank==1 and `fields` is empty."
    );
    assert_eq!(
        StructuredTensor::from_fields(none.clone(), &[None, None], None, None)
            .unwrap_err()
            .to_string(),
        "row_partitions must be specified if rank>1 and `fields` is empty."
    );
    // Partitions that do not chain.
    let e = StructuredTensor::from_fields(
        none.clone(),
        &[None, None, None],
        None,
        Some(vec![
            RowPartition::from_row_lengths(&[1, 2]).unwrap(),
            RowPartition::from_row_lengths(&[1, 1]).unwrap(),
        ]),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the row partition of axis 2 has 2 rows, but the dimension above it has 3 positions"
    );
    // nrows that disagrees with the fields.
    let e = StructuredTensor::from_fields([("a", arr(json!([1, 2, 3])))], &[None], Some(2), None)
        .unwrap_err();
    assert!(
        e.to_string().starts_with("fields have incompatible nrows"),
        "{e}"
    );
    // A static size that the ragged rows do not have.
    let e = StructuredTensor::from_fields(
        [("a", arr(json!([[1, 2], [3]])))],
        &[Some(2), Some(2)],
        None,
        None,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::IncompatibleDim {
                axis: 1,
                expected: 2
            }
        ),
        "{e}"
    );
}

#[test]
fn tuple_field_value() {
    let s = st(json!({"a": 5, "b": {"c": [1, 2, 3]}}));
    assert_eq!(s.field_value(["a"]).unwrap().to_json(), json!(5));
    assert_eq!(
        s.field_value(["b", "c"]).unwrap().to_json(),
        json!([1, 2, 3])
    );
    assert_eq!(
        s.field_value(["a", "b"]).unwrap_err().to_string(),
        "Field path ('a', 'b') not found"
    );
    assert_eq!(
        s.field_value("zz").unwrap_err().to_string(),
        "Field path ('zz',) not found"
    );
}

#[test]
fn array_from_json() {
    let a = Array::from_json(&json!([[1, 2], [], [3]])).unwrap();
    assert_eq!(a.shape(), vec![Some(3), None]);
    assert_eq!(a.values(), &Values::I64(vec![1, 2, 3].into()));
    assert_eq!(Array::from_json(&json!(2.5)).unwrap().rank(), 0);
    assert_eq!(
        Array::from_json(&json!({"a": 1})).unwrap_err(),
        Error::DictInArray { depth: 0 }
    );
    assert_eq!(
        Array::from_json(&json!([[{"a": 1}]])).unwrap_err(),
        Error::DictInArray { depth: 2 }
    );
    assert_eq!(
        Array::from_json(&json!([1, "x"])).unwrap_err(),
        Error::MixedTypes {
            first: DType::I64,
            second: DType::Str
        }
    );
}

#[test]
fn json_text_in() {
    let s = StructuredTensor::from_json_str(r#"[{"a": 1}, {"a": 2}]"#).unwrap();
    assert_eq!(s.to_json(), json!([{"a": 1}, {"a": 2}]));
    assert!(matches!(
        StructuredTensor::from_json_str("[{").unwrap_err(),
        Error::Json { .. }
    ));
    // Escapes, unicode and whitespace read like serde_json reads them.
    let text =
        "[ {\"s\": \"a\\\"b\\u00e9\\ud83d\\ude00\", \"n\": -0.5e1},\n {\"s\": \"\", \"n\": 3} ]";
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(StructuredTensor::from_json_str(text).unwrap(), st(v));
    // Duplicate keys and integers beyond int64 go through serde_json (last key wins).
    assert_eq!(
        StructuredTensor::from_json_str(r#"{"a": 1, "a": 2}"#)
            .unwrap()
            .to_json(),
        json!({"a": 2})
    );
    assert!(matches!(
        StructuredTensor::from_json_str(r#"{"a": 18446744073709551615}"#).unwrap_err(),
        Error::ParsePath { .. }
    ));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let mut v = json!(1);
    for _ in 0..3000 {
        v = Value::Array(vec![v]);
    }
    let doc = json!({"a": v});
    let err = StructuredTensor::from_json(&doc).unwrap_err();
    assert!(
        err.to_string().starts_with("JSON nested deeper than 1000"),
        "{err}"
    );
    let mut d = json!({"x": 1});
    for _ in 0..3000 {
        d = json!({ "a": d });
    }
    assert!(matches!(
        StructuredTensor::from_json(&d).unwrap_err(),
        Error::NestingTooDeep { .. }
    ));
    // The same object as the one record of a list, and after a shallow record.
    let alone = json!([d]);
    assert!(matches!(
        StructuredTensor::from_json(&alone).unwrap_err(),
        Error::NestingTooDeep { .. }
    ));
    let records = json!([{"a": 1}, d]);
    // the shallow record's `a` is a number where the deep one's is an object
    assert_eq!(
        StructuredTensor::from_json(&records)
            .unwrap_err()
            .to_string(),
        "Expected dict or nested list/tuple of dict at path ('a',): found a number at list depth 1"
    );
    // Free the deep values on a thread with room for serde_json's recursive drop.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || drop((doc, d, alone, records)))
        .unwrap()
        .join()
        .unwrap();
    // A few hundred levels are fine.
    let mut ok = json!([1]);
    for _ in 0..300 {
        ok = json!([ok]);
    }
    let st = StructuredTensor::from_json(&json!({"a": ok})).unwrap();
    assert_eq!(st.field_value("a").unwrap().rank(), 301);
}

#[test]
fn negative_zero_follows_python_json() {
    // Python 3.11: json.loads('{"a": -0, "b": -0.0}') == {'a': 0, 'b': -0.0}, an int and a
    // float, and from_pyval keeps ints as ints and floats as floats: int64 0, float64 -0.0.
    let text = r#"{"a": -0, "b": -0.0, "c": [-0, 1]}"#;
    let from_text = StructuredTensor::from_json_str(text).unwrap();
    assert_eq!(from_text, st(json!({"a": 0, "b": -0.0, "c": [0, 1]})));
    assert_eq!(from_text.to_json_string(), r#"{"a":0,"b":-0.0,"c":[0,1]}"#);
    // the one-pass record reader and the general reader agree
    let records = r#"[{"a": -0, "b": 1.5}, {"a": 2, "b": -0.0}]"#;
    assert_eq!(
        StructuredTensor::from_json_str(records).unwrap(),
        st(json!([{"a": 0, "b": 1.5}, {"a": 2, "b": -0.0}]))
    );
    // serde_json's own parser reads `-0` as the float -0.0; from_json takes a Value's f64
    // as a float, as from_pyval takes a Python float
    let serde_parsed: Value = serde_json::from_str(r#"{"a": -0}"#).unwrap();
    assert_eq!(serde_parsed, json!({"a": -0.0}));
    assert_eq!(st(serde_parsed).to_json_string(), r#"{"a":-0.0}"#);
}

#[test]
fn integer_literals_beyond_int64_are_errors_as_in_python() {
    // Python reads these as ints, and TensorFlow cannot fit them in int64; serde_json would
    // have read the negative one as a float
    for (text, value) in [
        (r#"{"a": -99999999999999999999}"#, "-99999999999999999999"),
        (r#"{"a": 18446744073709551616}"#, "18446744073709551616"),
        (
            r#"[{"a": [1, 9223372036854775808]}]"#,
            "9223372036854775808",
        ),
    ] {
        let err = StructuredTensor::from_json_str(text).unwrap_err();
        assert!(
            matches!(&err, Error::ParsePath { source, .. }
                if **source == Error::IntegerOutOfRange { value: value.to_string() }),
            "{text}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("Error parsing path ('a',): integer {value} does not fit in int64")
        );
    }
    assert_eq!(
        StructuredTensor::from_json_str(r#"{"a": -9223372036854775808}"#).unwrap(),
        st(json!({"a": i64::MIN}))
    );
}

#[test]
fn a_repeated_key_keeps_its_last_value() {
    // Python: json.loads('{"a": 1.5, "a": -0}') == {'a': 0}
    assert_eq!(
        StructuredTensor::from_json_str(r#"{"a": 1.5, "b": true, "a": -0}"#).unwrap(),
        st(json!({"a": 0, "b": true}))
    );
}
