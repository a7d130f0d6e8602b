//! TensorFlow's `structured_tensor_slice_test.py`: indexing scalar and vector struct arrays
//! with integer, negative, slice, step and field-name keys, and the error cases.

use serde_json::{json, Value};
use structured_tensor::{Error, Key, StructuredTensor};

fn example_struct() -> Value {
    json!({
        "f1": 1,
        "f2": [[1, 2], [3, 4]],
        "f3": {"f3_1": 1},
        "f4": [{"f4_1": 1, "f4_2": "a"}, {"f4_1": 2, "f4_2": "b"}],
        "f5": [[{"f5_1": 1}, {"f5_1": 2}], [{"f5_1": 3}, {"f5_1": 4}]],
    })
}

fn example_struct_2() -> Value {
    json!({
        "f1": 5,
        "f2": [[6, 7], [8, 9]],
        "f3": {"f3_1": 9},
        "f4": [{"f4_1": 5, "f4_2": "A"}, {"f4_1": 6, "f4_2": "B"}],
        "f5": [[{"f5_1": 6}, {"f5_1": 7}], [{"f5_1": 8}, {"f5_1": 9}]],
    })
}

fn example_vector() -> Value {
    let s = example_struct();
    json!([s, s, s, s, s, example_struct_2()])
}

fn all() -> Key {
    Key::all()
}

fn from(start: isize) -> Key {
    Key::slice(Some(start), None, None)
}

fn to(stop: isize) -> Key {
    Key::slice(None, Some(stop), None)
}

fn f(name: &str) -> Key {
    Key::field(name)
}

#[track_caller]
fn check(input: &Value, keys: &[Key], expected: Value) {
    let s = StructuredTensor::from_json(input).unwrap();
    let got = s
        .get(keys)
        .unwrap_or_else(|e| panic!("get({keys:?}) failed: {e}"));
    assert_eq!(got.to_json(), expected, "keys {keys:?}");
}

#[track_caller]
fn check_err(input: &Value, keys: &[Key], expected: &str) {
    let s = StructuredTensor::from_json(input).unwrap();
    let err = s.get(keys).expect_err("should fail");
    assert!(
        err.to_string().contains(expected),
        "{err} lacks {expected:?}"
    );
}

#[test]
fn getitem_from_scalar_struct() {
    let e = example_struct();
    check(&e, &[f("f1")], json!(1));
    check(&e, &[f("f2")], json!([[1, 2], [3, 4]]));
    check(&e, &[f("f3")], json!({"f3_1": 1}));
    check(&e, &[f("f4")], e["f4"].clone());
    check(&e, &[f("f5")], e["f5"].clone());
    // Multidimensional indexing.
    check(&e, &[f("f2"), 1.into()], json!([3, 4]));
    check(&e, &[f("f3"), f("f3_1")], json!(1));
    check(&e, &[f("f4"), 1.into()], json!({"f4_1": 2, "f4_2": "b"}));
    check(&e, &[f("f4"), 1.into(), f("f4_2")], json!("b"));
    check(&e, &[f("f5"), 0.into(), 1.into()], json!({"f5_1": 2}));
    check(&e, &[f("f5"), 0.into(), 1.into(), f("f5_1")], json!(2));
    // Multidimensional slicing.
    check(&e, &[f("f2"), from(1)], json!([[3, 4]]));
    check(&e, &[f("f4"), to(1)], json!([{"f4_1": 1, "f4_2": "a"}]));
    check(&e, &[f("f4"), from(1), f("f4_2")], json!(["b"]));
    check(&e, &[f("f4"), all(), f("f4_2")], json!(["a", "b"]));
    check(
        &e,
        &[f("f5"), all(), all(), f("f5_1")],
        json!([[1, 2], [3, 4]]),
    );
    // Slicing over multiple keys.
    check(&e, &[all()], e.clone());
    check(&e, &[], e.clone());
}

#[test]
fn getitem_from_vector_struct() {
    let v = example_vector();
    check(&v, &[2.into()], v[2].clone());
    check(&v, &[5.into()], v[5].clone());
    check(&v, &[(-2).into()], v[4].clone());
    check(&v, &[(-1).into()], v[5].clone());
    check(&v, &[2.into(), f("f1")], json!(1));
    check(&v, &[(-1).into(), f("f1")], json!(5));
    check(&v, &[from(5)], json!([v[5].clone()]));
    check(&v, &[from(3), f("f1")], json!([1, 1, 5]));
    check(
        &v,
        &[Key::slice(None, None, Some(2)), f("f1")],
        json!([1, 1, 1]),
    );
    check(
        &v,
        &[Key::slice(Some(1), None, Some(2)), f("f1")],
        json!([1, 1, 5]),
    );
    check(
        &v,
        &[from(4), f("f5"), 0.into(), 1.into(), f("f5_1")],
        json!([2, 7]),
    );
    check(
        &v,
        &[from(4), f("f5"), all(), all(), f("f5_1")],
        json!([[[1, 2], [3, 4]], [[6, 7], [8, 9]]]),
    );
}

#[test]
fn getitem_keeps_structs_and_shares_partitions() {
    let v = example_vector();
    let s = StructuredTensor::from_json(&v).unwrap();
    let tail = s.get(&[Key::slice(Some(-1), None, Some(-2))]).unwrap();
    assert_eq!(
        tail.to_json(),
        json!([v[5].clone(), v[3].clone(), v[1].clone()])
    );
    let st = tail.as_struct().unwrap();
    assert_eq!(st.shape(), vec![Some(3)]);
    let ragged =
        StructuredTensor::from_json(&json!([[{"a": 1}, {"a": 2}], [], [{"a": 3}]])).unwrap();
    let rows = ragged.get(&[Key::slice(None, None, Some(-1))]).unwrap();
    assert_eq!(
        rows.to_json(),
        json!([[{"a": 3}], [], [{"a": 1}, {"a": 2}]])
    );
    let rows = rows.as_struct().unwrap();
    assert!(rows.field_value("a").unwrap().row_partitions()[0].ptr_eq(&rows.row_partitions()[0]));
    // Ragged inner dimension sliced per row.
    let inner = ragged.get(&[all(), from(1)]).unwrap();
    assert_eq!(inner.to_json(), json!([[{"a": 2}], [], []]));
    let one = ragged.get(&[0.into(), (-1).into()]).unwrap();
    assert_eq!(one.to_json(), json!({"a": 2}));
    assert_eq!(
        ragged.get(&[1.into(), 0.into()]).unwrap_err(),
        Error::IndexOutOfRange {
            index: 0,
            size: 0,
            axis: 1
        }
    );
}

#[test]
fn getitem_error() {
    let e = example_struct();
    check_err(
        &e,
        &[to(2)],
        "Key for indexing a StructuredTensor must be a string or a full slice (':')",
    );
    check_err(
        &e,
        &[f("f4"), Key::Ellipsis],
        "Slicing not supported for Ellipsis",
    );
    check_err(
        &e,
        &[f("f4"), Key::NewAxis],
        "Slicing not supported for tf.newaxis",
    );
    check_err(
        &e,
        &[f("f4"), all(), 0.into()],
        "Key for indexing a StructuredTensor must be a string",
    );
    check_err(&e, &[f("nope")], "Field path ('nope',) not found");
    check_err(
        &e,
        &[f("f2"), 0.into(), 0.into(), 0.into()],
        "too many indices",
    );
    check_err(
        &e,
        &[f("f2"), 5.into()],
        "index 5 out of bounds for axis 0 with size 2",
    );
    check_err(
        &e,
        &[f("f2"), Key::slice(None, None, Some(0))],
        "slice step cannot be zero",
    );
}

#[test]
fn getitem_from_vector_error() {
    let v = example_vector();
    check_err(
        &v,
        &[all(), 1.into()],
        "Key for indexing a StructuredTensor must be a string",
    );
    check_err(&v, &[f("f1")], "Slicing not supported for 'f1'");
    check_err(
        &v,
        &[6.into()],
        "index 6 out of bounds for axis 0 with size 6",
    );
    check_err(&v, &[(-7).into()], "index -7 out of bounds");
}
