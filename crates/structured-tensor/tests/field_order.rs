//! Field order: fields keep the order they were written in (JSON text's key order, first
//! record first; Arrow's and Parquet's field order; the order `from_fields` is given),
//! writing keeps ours, and equality ignores the order (see the crate guide's "Field
//! order"). Expected orders are written out by hand.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{json, Value};
use structured_tensor::{Array, JsonOptions, Spec, StructuredTensor};

fn names(st: &StructuredTensor) -> Vec<&str> {
    st.field_names()
}

fn nested_names<'a>(st: &'a StructuredTensor, field: &str) -> Vec<&'a str> {
    st.fields()[field]
        .as_struct()
        .expect("a struct field")
        .field_names()
}

#[test]
fn json_text_keeps_the_first_records_key_order_and_appends_new_keys() {
    // the same keys in another order in the second record: the first record's order
    let st =
        StructuredTensor::from_json_str(r#"[{"z": 1, "a": 2, "m": 3}, {"m": 4, "z": 5, "a": 6}]"#)
            .unwrap();
    assert_eq!(names(&st), ["z", "a", "m"]);
    assert_eq!(
        st.to_json_string(),
        r#"[{"z":1,"a":2,"m":3},{"z":5,"a":6,"m":4}]"#
    );
    // nested objects too, and a single object (TensorFlow keeps a dict's order there)
    let one = StructuredTensor::from_json_str(r#"{"z": 1, "a": {"y": 2, "b": 3}}"#).unwrap();
    assert_eq!(names(&one), ["z", "a"]);
    assert_eq!(nested_names(&one, "a"), ["y", "b"]);
    // JSON Lines under TensorFlow's rules, in batches: the first record's order
    let lines = "{\"z\": 1, \"a\": 2}\n{\"a\": 3, \"z\": 4}\n{\"z\": 5, \"a\": 6}\n";
    for batch_size in [1, 2, 10] {
        let options = JsonOptions::default().with_batch_size(batch_size);
        let st = StructuredTensor::from_json_lines(lines.as_bytes(), &options).unwrap();
        assert_eq!(names(&st), ["z", "a"], "batch size {batch_size}");
    }
}

#[test]
fn a_key_first_seen_in_a_later_record_comes_after_the_first_records_keys() {
    // missing keys are nulls under `nulls`; the union over records and JSON Lines batches
    // is in order of first appearance. That reader parses each record into a
    // `serde_json::Value`, whose objects keep their keys in the order written (serde_json's
    // `preserve_order`): so "z" before "a" here, and the keys first seen later follow.
    let lines = "{\"z\": 1, \"a\": 2}\n{\"q\": 3, \"a\": 4, \"z\": 5}\n{\"b\": 6}\n";
    for batch_size in [1, 10] {
        let options = JsonOptions::default()
            .with_nulls(true)
            .with_batch_size(batch_size);
        let st = StructuredTensor::from_json_lines(lines.as_bytes(), &options).unwrap();
        assert_eq!(names(&st), ["z", "a", "q", "b"], "batch size {batch_size}");
    }
    // inference over tensors read from text: the first one's order, then new keys
    let first = StructuredTensor::from_json_str(r#"[{"z": 1, "a": 2}]"#).unwrap();
    let second = StructuredTensor::from_json_str(r#"[{"q": 3, "z": 5, "a": 4}]"#).unwrap();
    let spec = Spec::infer_allowing_missing(&[&first, &second]).unwrap();
    assert_eq!(spec.fields.keys().collect::<Vec<_>>(), ["z", "a", "q"]);
}

#[test]
fn from_fields_keeps_the_order_given_and_equality_ignores_it() {
    let col = |v: Value| Array::from_json(&v).unwrap();
    let za = StructuredTensor::from_fields(
        [("z", col(json!([1, 2]))), ("a", col(json!([3, 4])))],
        &[Some(2)],
        None,
        None,
    )
    .unwrap();
    let az = StructuredTensor::from_fields(
        [("a", col(json!([3, 4]))), ("z", col(json!([1, 2])))],
        &[Some(2)],
        None,
        None,
    )
    .unwrap();
    assert_eq!(names(&za), ["z", "a"]);
    assert_eq!(names(&az), ["a", "z"]);
    // equal as values (as two Python dicts with the same items are), orders told apart
    // by field_names
    assert_eq!(za, az);
    assert_ne!(names(&za), names(&az));
    let (sa, sz) = (Spec::of(&za), Spec::of(&az));
    assert_eq!(sa, sz);
    let hash = |s: &Spec| {
        let mut h = DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(&sa), hash(&sz));
    assert_eq!(sa.fields.keys().collect::<Vec<_>>(), ["z", "a"]);
    // a different value is still unequal
    let other = StructuredTensor::from_fields(
        [("a", col(json!([3, 5]))), ("z", col(json!([1, 2])))],
        &[Some(2)],
        None,
        None,
    )
    .unwrap();
    assert_ne!(za, other);
    // TensorFlow's repr lists the fields sorted, whatever their order
    assert_eq!(za.to_string(), az.to_string());
    // a concat of the two orders takes the first input's order
    let both = StructuredTensor::concat(&[&za, &az], 0).unwrap();
    assert_eq!(names(&both), ["z", "a"]);
    assert_eq!(
        both.to_json(),
        json!([{"z": 1, "a": 3}, {"z": 2, "a": 4}, {"z": 1, "a": 3}, {"z": 2, "a": 4}])
    );
}

#[test]
fn spec_json_keeps_the_order() {
    let st = StructuredTensor::from_json_str(r#"[{"z": 1, "a": {"y": 2, "b": 3}}]"#).unwrap();
    let spec = Spec::of(&st);
    let j = spec.to_json();
    let order: Vec<&str> = j["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["z", "a"]);
    let back = Spec::from_json(&j).unwrap();
    assert_eq!(back.fields.keys().collect::<Vec<_>>(), ["z", "a"]);
    let Some(structured_tensor::FieldSpec::Struct(inner)) = back.fields.get("a") else {
        panic!("a is a struct");
    };
    assert_eq!(inner.fields.keys().collect::<Vec<_>>(), ["y", "b"]);
}

#[cfg(feature = "arrow")]
#[test]
fn arrow_keeps_the_schema_field_order_both_ways() {
    let st =
        StructuredTensor::from_json_str(r#"[{"z": 1, "a": 2, "m": {"y": 3, "b": 4}}]"#).unwrap();
    let batch = st.to_record_batch().unwrap();
    let schema = batch.schema();
    let fields: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(fields, ["z", "a", "m"]);
    let back = StructuredTensor::from_record_batch(&batch).unwrap();
    assert_eq!(names(&back), ["z", "a", "m"]);
    assert_eq!(nested_names(&back, "m"), ["y", "b"]);
}

#[cfg(feature = "parquet")]
#[test]
fn a_parquet_file_written_by_pyarrow_reads_back_in_its_column_order() {
    // tests/golden/make_column_order.py: pyarrow 26.0.1 wrote columns z, a, m, s{y, b}
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/parquet/column_order.parquet");
    let st = structured_tensor::read_parquet(&path).unwrap();
    assert_eq!(names(&st), ["z", "a", "m", "s"]);
    assert_eq!(nested_names(&st, "s"), ["y", "b"]);
    assert_eq!(
        st.to_json_string(),
        r#"[{"z":1,"a":3,"m":5,"s":{"y":7,"b":8}},{"z":2,"a":4,"m":6,"s":{"y":9,"b":10}}]"#
    );
    // written by us and read back: the same order
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("field_order");
    std::fs::create_dir_all(&dir).unwrap();
    let ours = dir.join("z_a_m.parquet");
    structured_tensor::write_parquet(&ours, &st, &Default::default()).unwrap();
    let back = structured_tensor::read_parquet(&ours).unwrap();
    assert_eq!(names(&back), ["z", "a", "m", "s"]);
    assert_eq!(nested_names(&back, "s"), ["y", "b"]);
}
