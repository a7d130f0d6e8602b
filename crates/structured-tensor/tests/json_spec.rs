//! `from_json_with_spec` (TensorFlow's `StructuredTensor.from_pyval(pyval, typespec)`):
//! cases in the manner of `structured_tensor_test.py`'s typespec conversions, expected
//! values written out by hand, and its errors.

use serde_json::{json, Value};
use structured_tensor::{Array, DType, Error, FieldSpec, IndexMap, Spec, StructuredTensor};

fn tensor(shape: &[Option<usize>], dtype: DType) -> FieldSpec {
    FieldSpec::Tensor {
        shape: shape.to_vec(),
        dtype,
    }
}

fn ragged(shape: &[Option<usize>], dtype: DType, ragged_rank: usize) -> FieldSpec {
    FieldSpec::Ragged {
        shape: shape.to_vec(),
        dtype,
        ragged_rank,
    }
}

fn spec(shape: &[Option<usize>], fields: Vec<(&str, FieldSpec)>) -> Spec {
    Spec {
        shape: shape.to_vec(),
        fields: fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<IndexMap<_, _>>(),
    }
}

#[track_caller]
fn check(value: Value, s: &Spec, expected_json: Value) -> StructuredTensor {
    let st = StructuredTensor::from_json_with_spec(&value, s).unwrap();
    assert_eq!(st.to_json(), expected_json);
    // the result has the spec's dtypes and is compatible with its shapes
    let got = st.spec();
    assert_eq!(got.rank(), s.rank());
    for (name, field) in &s.fields {
        let dtype_of = |f: &FieldSpec| match f {
            FieldSpec::Tensor { dtype, .. } | FieldSpec::Ragged { dtype, .. } => Some(*dtype),
            FieldSpec::Struct(_) => None,
            FieldSpec::Nullable(_) => panic!("TensorFlow's reader gives no nullable field"),
        };
        assert_eq!(dtype_of(&got.fields[name]), dtype_of(field), "{name}");
    }
    st
}

#[test]
fn a_dict_with_typed_fields() {
    let s = spec(
        &[],
        vec![
            ("a", tensor(&[], DType::I32)),
            ("b", tensor(&[None], DType::F32)),
            ("c", ragged(&[None, None], DType::I64, 1)),
            ("d", tensor(&[], DType::Bytes)),
        ],
    );
    let st = check(
        json!({"a": 12, "b": [1, 2.5], "c": [[1, 2], [3]], "d": "x"}),
        &s,
        json!({"a": 12, "b": [1.0, 2.5], "c": [[1, 2], [3]], "d": "x"}),
    );
    assert_eq!(
        st.field_value("a").unwrap().as_array().unwrap().dtype(),
        DType::I32
    );
    assert_eq!(
        st.field_value("b").unwrap().as_array().unwrap().dtype(),
        DType::F32
    );
}

#[test]
fn lists_of_dicts_with_uniform_and_ragged_fields() {
    let s = spec(
        &[Some(2)],
        vec![
            ("a", tensor(&[Some(2)], DType::I32)),
            ("b", ragged(&[Some(2), None], DType::U8, 1)),
        ],
    );
    check(
        json!([{"a": 1, "b": [255]}, {"a": 2, "b": []}]),
        &s,
        json!([{"a": 1, "b": [255]}, {"a": 2, "b": []}]),
    );
    // rank 2, ragged outer dimension
    let s = spec(
        &[None, None],
        vec![("a", ragged(&[None, None], DType::I32, 1))],
    );
    let st = check(
        json!([[{"a": 1}], [{"a": 2}, {"a": 3}]]),
        &s,
        json!([[{"a": 1}], [{"a": 2}, {"a": 3}]]),
    );
    assert_eq!(st.shape(), vec![Some(2), None]);
    // nested struct spec
    let s = spec(
        &[None],
        vec![(
            "shoes",
            FieldSpec::Struct(spec(
                &[None],
                vec![("sizes", ragged(&[None, None], DType::F32, 1))],
            )),
        )],
    );
    check(
        json!([{"shoes": {"sizes": [8, 7.5]}}, {"shoes": {"sizes": []}}]),
        &s,
        json!([{"shoes": {"sizes": [8.0, 7.5]}}, {"shoes": {"sizes": []}}]),
    );
    // a ragged field with a dense inner dimension
    let s = spec(
        &[None],
        vec![("p", ragged(&[None, None, Some(2)], DType::I64, 1))],
    );
    check(
        json!([{"p": [[1, 2], [3, 4]]}, {"p": []}]),
        &s,
        json!([{"p": [[1, 2], [3, 4]]}, {"p": []}]),
    );
}

#[test]
fn empty_lists_take_the_spec() {
    let s = spec(
        &[None],
        vec![
            ("a", tensor(&[None], DType::I32)),
            ("b", ragged(&[None, None], DType::Str, 1)),
        ],
    );
    let st = StructuredTensor::from_json_with_spec(&json!([]), &s).unwrap();
    assert_eq!(st.nrows(), Some(0));
    assert_eq!(
        st.field_value("a").unwrap().as_array().unwrap().dtype(),
        DType::I32
    );
    assert_eq!(st.field_value("b").unwrap().rank(), 2);
    assert_eq!(st.to_json(), json!([]));
    // rank 2: two empty rows
    let s = spec(
        &[None, None],
        vec![("a", ragged(&[None, None], DType::I64, 1))],
    );
    let st = StructuredTensor::from_json_with_spec(&json!([[], []]), &s).unwrap();
    assert_eq!(st.to_json(), json!([[], []]));
    // (two rows of length 0 are a uniform dimension here, as everywhere in this crate)
    assert_eq!(st.shape(), vec![Some(2), Some(0)]);
    // a ragged leaf given as [] gets the spec's rank
    let a = Array::from_json_with_spec(&json!([]), &ragged(&[None, None], DType::I32, 1)).unwrap();
    assert_eq!(a.rank(), 2);
    assert_eq!(a.dtype(), DType::I32);
}

#[track_caller]
fn check_err(value: Value, s: &Spec, message: &str) -> Error {
    let e = StructuredTensor::from_json_with_spec(&value, s).unwrap_err();
    assert!(e.to_string().starts_with(message), "{e}");
    e
}

#[test]
fn values_that_do_not_fit_the_spec() {
    let one = spec(&[], vec![("b", tensor(&[], DType::I32))]);
    // a key the spec does not have
    check_err(json!({"a": 1}), &one, "Value at () does not match typespec");
    // a list where the spec has rank 0
    check_err(
        json!([{"b": 1}]),
        &one,
        "Value at () does not match typespec",
    );
    // a dict where a tensor is expected
    check_err(
        json!({"b": {"c": 1}}),
        &one,
        "Value at ('b',) does not match typespec",
    );
    // a struct spec given a scalar
    let nested = spec(&[], vec![("b", FieldSpec::Struct(spec(&[], vec![])))]);
    check_err(
        json!({"b": 5}),
        &nested,
        "Value at ('b',) does not match typespec",
    );
    // a missing key in one record
    let list = spec(
        &[None],
        vec![
            ("a", tensor(&[None], DType::I64)),
            ("b", tensor(&[None], DType::I64)),
        ],
    );
    let e = check_err(
        json!([{"a": 1, "b": 2}, {"a": 3}]),
        &list,
        "Value at () does not match typespec",
    );
    assert!(e.to_string().contains("key 'b'"), "{e}");
    // rank mismatch
    let rank1 = spec(&[None], vec![("a", tensor(&[None], DType::I64))]);
    check_err(
        json!([[{"a": 1}]]),
        &rank1,
        "Value at () does not match typespec",
    );
    // static size mismatch
    let three = spec(&[Some(3)], vec![("a", tensor(&[Some(3)], DType::I64))]);
    check_err(
        json!([{"a": 1}, {"a": 2}]),
        &three,
        "Value at ('a',) does not match typespec",
    );
    // ragged rows under a dense spec
    let dense = spec(&[None], vec![("a", tensor(&[None, None], DType::I64))]);
    check_err(
        json!([{"a": [1, 2]}, {"a": [3]}]),
        &dense,
        "Error parsing path ('a',): Can't convert non-rectangular Python sequence to Tensor",
    );
    // ragged past the ragged rank
    let rr = spec(
        &[None],
        vec![("a", ragged(&[None, None, None], DType::I64, 1))],
    );
    check_err(
        json!([{"a": [[1, 2], [3]]}]),
        &rr,
        "Error parsing path ('a',): dimension 2 is ragged but the spec has ragged_rank=1",
    );
}

#[test]
fn elements_that_cannot_take_the_dtype() {
    let s = |dtype| spec(&[None], vec![("a", tensor(&[None], dtype))]);
    check_err(
        json!([{"a": 3000000000i64}]),
        &s(DType::I32),
        "Error parsing path ('a',): 3000000000 does not fit in int32",
    );
    check_err(
        json!([{"a": 256}]),
        &s(DType::U8),
        "Error parsing path ('a',): 256 does not fit in uint8",
    );
    check_err(
        json!([{"a": -1}]),
        &s(DType::U8),
        "Error parsing path ('a',): -1 does not fit in uint8",
    );
    check_err(
        json!([{"a": 1.5}]),
        &s(DType::I64),
        "Error parsing path ('a',): float64 values cannot be read as int64",
    );
    check_err(
        json!([{"a": true}]),
        &s(DType::I32),
        "Error parsing path ('a',): bool values cannot be read as int32",
    );
    check_err(
        json!([{"a": "x"}]),
        &s(DType::F64),
        "Error parsing path ('a',): string values cannot be read as float64",
    );
    check_err(
        json!([{"a": 1}]),
        &s(DType::Str),
        "Error parsing path ('a',): int64 values cannot be read as string",
    );
    // the errors of the untyped reader keep their paths
    let e = check_err(
        json!([{"a": null}]),
        &s(DType::I64),
        "Error parsing path ('a',)",
    );
    assert!(matches!(e, Error::ParsePath { .. }));
}

#[test]
fn the_spec_of_a_tensor_reads_its_json_back() {
    // Spec::of(st) then from_json_with_spec(st.to_json()) is st, dtypes included
    let st = StructuredTensor::from_json(&json!([
        {"id": 1, "tags": ["a"], "pos": {"x": 0.5, "ys": [1, 2]}},
        {"id": 2, "tags": [], "pos": {"x": 1.5, "ys": []}}
    ]))
    .unwrap();
    let back = StructuredTensor::from_json_with_spec(&st.to_json(), &st.spec()).unwrap();
    assert_eq!(back, st);
    assert_eq!(back.spec(), st.spec());
}
