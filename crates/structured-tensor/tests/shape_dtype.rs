//! `with_shape_dtype` (TensorFlow's `StructuredTensor.with_shape_dtype`): what the struct,
//! its nested structs and ragged fields and its `DynamicRaggedShape` report, that the ops
//! keep it, TensorFlow's errors, the `int64` rule for mixed fields (`_find_shape_dtype`),
//! and (feature `arrow`) `List` against `LargeList` offsets.

use serde_json::{json, Value};
use structured_tensor::{Array, DType, Error, FieldValue, StructuredTensor, Values};

fn st(v: Value) -> StructuredTensor {
    StructuredTensor::from_json(&v).unwrap()
}

fn people() -> Value {
    json!([
        [{"age": 12, "nicknames": ["Jo"], "shoes": {"sizes": [8.0, 7.5]}}],
        [],
        [{"age": 82, "nicknames": ["Bob", "Bobby"], "shoes": {"sizes": [11.0]}},
         {"age": 42, "nicknames": [], "shoes": {"sizes": []}}]
    ])
}

/// Every struct and array at every depth reports `dtype`.
#[track_caller]
fn assert_all(s: &StructuredTensor, dtype: DType) {
    assert_eq!(s.shape_dtype(), dtype);
    assert_eq!(s.dynamic_shape().dtype(), dtype);
    for value in s.fields().values() {
        assert_eq!(value.shape_dtype(), dtype);
        if let FieldValue::Struct(inner) = value {
            assert_all(inner, dtype);
        }
    }
}

#[test]
fn with_shape_dtype_converts_every_field_and_shares_the_data() {
    let s = st(people());
    assert_all(&s, DType::I32);
    let wide = s.with_shape_dtype(DType::I64).unwrap();
    assert_all(&wide, DType::I64);
    assert_eq!(wide.to_json(), people());
    assert!(
        wide.row_partitions()[0].ptr_eq(&s.row_partitions()[0]),
        "no copy"
    );
    let narrow = wide.with_shape_dtype(DType::I32).unwrap();
    assert_all(&narrow, DType::I32);
    assert_eq!(narrow, s);
}

#[test]
fn other_dtypes_are_refused() {
    let e = st(people()).with_shape_dtype(DType::F32).unwrap_err();
    assert_eq!(e.to_string(), "dtype must be int32 or int64, got float32");
    assert!(matches!(e, Error::ShapeDType { .. }));
    let a = Array::from_json(&json!([[1], []])).unwrap();
    assert!(a.with_shape_dtype(DType::Str).is_err());
}

#[test]
fn ops_keep_the_dtype() {
    let wide = st(people()).with_shape_dtype(DType::I64).unwrap();
    assert_all(&wide.gather(&[2, 0], 0).unwrap(), DType::I64);
    assert_all(
        &wide.gather(&[0], 1).unwrap_or_else(|_| wide.clone()),
        DType::I64,
    );
    assert_all(
        &StructuredTensor::concat(&[&wide, &wide], 0).unwrap(),
        DType::I64,
    );
    assert_all(
        &StructuredTensor::concat(&[&wide, &wide], 1).unwrap(),
        DType::I64,
    );
    assert_all(
        &StructuredTensor::stack(&[&wide, &wide], 0).unwrap(),
        DType::I64,
    );
    assert_all(&wide.merge_dims(0, 1).unwrap(), DType::I64);
    assert_all(&wide.expand_dims(1).unwrap(), DType::I64);
    assert_all(
        &wide.boolean_mask(&[true, false, true]).unwrap(),
        DType::I64,
    );
    assert_all(&wide.random_shuffle(3).unwrap(), DType::I64);
    assert_all(
        &wide.promote(["shoes", "sizes"], "shoe_sizes").unwrap(),
        DType::I64,
    );
    assert_all(
        &wide
            .get(&[structured_tensor::Key::Index(0)])
            .unwrap()
            .as_struct()
            .unwrap()
            .clone(),
        DType::I64,
    );
    // with_updates keeps an int64 struct int64, whatever the new field asks for
    let dense_only = StructuredTensor::from_json(&json!([{"a": 1}, {"a": 2}]))
        .unwrap()
        .with_shape_dtype(DType::I64)
        .unwrap();
    let narrow_field = Array::from_row_lengths(Values::I64(vec![5].into()), &[1, 0]).unwrap();
    let updated = dense_only
        .with_updates(vec![(
            "b",
            structured_tensor::Update::Set(narrow_field.clone().into()),
        )])
        .unwrap();
    assert_all(&updated, DType::I64);
    // and an int32 struct takes int64 from a new field that has it
    let narrow = StructuredTensor::from_json(&json!([{"a": 1}, {"a": 2}])).unwrap();
    let updated = narrow
        .with_updates(vec![(
            "b",
            structured_tensor::Update::Set(
                narrow_field.with_shape_dtype(DType::I64).unwrap().into(),
            ),
        )])
        .unwrap();
    assert_all(&updated, DType::I64);
    let fieldless = StructuredTensor::from_json(&json!([[{}, {}], []]))
        .unwrap()
        .with_shape_dtype(DType::I64)
        .unwrap();
    assert_all(&fieldless.gather(&[1, 0], 0).unwrap(), DType::I64);
    assert_all(&fieldless.merge_dims(0, 1).unwrap(), DType::I64);
    // concat needs one dtype
    let narrow = st(people());
    let e = StructuredTensor::concat(&[&narrow, &wide], 0).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Input StructuredTensors have mismatched row partition dtypes"),
        "{e}"
    );
}

#[test]
fn from_fields_takes_int64_when_a_field_asks_for_it() {
    // TensorFlow's `_find_shape_dtype`: int64 when any field has it, every field converted
    let a = Array::from_row_lengths(Values::I64(vec![1, 2, 3].into()), &[2, 1])
        .unwrap()
        .with_shape_dtype(DType::I64)
        .unwrap();
    let b = Array::from_row_lengths(Values::I64(vec![4, 5].into()), &[1, 1]).unwrap();
    let dense = Array::from_values(Values::I64(vec![7, 8].into()));
    let s = StructuredTensor::from_fields(
        [("a", a), ("b", b.clone()), ("c", dense.clone())],
        &[None],
        None,
        None,
    )
    .unwrap();
    assert_all(&s, DType::I64);
    // a dense field asks for nothing
    let s = StructuredTensor::from_fields(
        [("b", b), ("c", dense.with_shape_dtype(DType::I64).unwrap())],
        &[None],
        None,
        None,
    )
    .unwrap();
    assert_all(&s, DType::I32);
}

#[cfg(feature = "arrow")]
mod arrow {
    use super::*;
    use arrow_schema::DataType;

    #[test]
    fn int64_shapes_are_large_lists_and_read_back() {
        let wide = st(people()).with_shape_dtype(DType::I64).unwrap();
        let array = wide.to_arrow().unwrap();
        let DataType::LargeList(item) = array.data_type() else {
            panic!("{}", array.data_type())
        };
        let DataType::Struct(fields) = item.data_type() else {
            panic!()
        };
        let by_name = |n: &str| {
            fields
                .iter()
                .find(|f| f.name() == n)
                .unwrap()
                .data_type()
                .clone()
        };
        assert!(matches!(by_name("nicknames"), DataType::LargeList(_)));
        assert!(matches!(by_name("age"), DataType::Int64));
        let DataType::Struct(shoes) = by_name("shoes") else {
            panic!()
        };
        assert!(matches!(shoes[0].data_type(), DataType::LargeList(_)));
        let back = StructuredTensor::from_arrow(array.as_ref()).unwrap();
        assert_all(&back, DType::I64);
        assert_eq!(back.to_json(), people());
        // int32 stays List
        let narrow = st(people()).to_arrow().unwrap();
        assert!(matches!(narrow.data_type(), DataType::List(_)));
        assert_all(
            &StructuredTensor::from_arrow(narrow.as_ref()).unwrap(),
            DType::I32,
        );
    }
}

#[cfg(feature = "parquet")]
mod parquet {
    use super::*;

    #[test]
    fn int64_shapes_survive_parquet() {
        let dir = std::env::temp_dir().join(format!("st-shape-dtype-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("wide.parquet");
        let rank1 = st(people())
            .merge_dims(0, 1)
            .unwrap()
            .with_shape_dtype(DType::I64)
            .unwrap();
        structured_tensor::write_parquet(&path, &rank1, &Default::default()).unwrap();
        let back = structured_tensor::read_parquet(&path).unwrap();
        assert_eq!(back.to_json(), rank1.to_json());
        assert_all(&back, DType::I64);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
