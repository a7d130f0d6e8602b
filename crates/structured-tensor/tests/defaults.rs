//! Default values for missing keys (`JsonOptions::with_default`, as TensorFlow's
//! `tf.io.FixedLenFeature(default_value=...)`), against the model of the same records with
//! each missing key written in by hand and read without defaults.

use serde_json::{json, Value};
use structured_tensor::{Error, JsonOptions, Spec, StructuredTensor};

/// Records of rank 1: `age` (int64), `tags` (a ragged list of strings) and `shoes` (a
/// struct of `size`, float64, and `laces`, a list of int64).
fn spec() -> Spec {
    let one = json!([
        {"age": 1, "tags": ["a", "b"], "shoes": {"size": 1.5, "laces": [1]}},
        {"age": 2, "tags": [], "shoes": {"size": 2.5, "laces": [2, 3]}},
    ]);
    StructuredTensor::from_json(&one)
        .unwrap()
        .spec()
        .without_sizes()
}

fn options() -> JsonOptions {
    JsonOptions::default()
        .with_spec(spec())
        .with_default(&["age"], json!(-1))
        .with_default(&["tags"], json!(["none"]))
        .with_default(&["shoes", "size"], json!(9.5))
        .with_default(&["shoes", "laces"], json!([]))
}

/// The model: the same records with the defaults written in, read by TensorFlow's rules.
#[track_caller]
fn check(records: Value, filled: Value) {
    let got = StructuredTensor::from_json_with_options(&records, &options()).unwrap();
    let model = StructuredTensor::from_json_with_spec(&filled, &spec()).unwrap();
    assert_eq!(got.spec(), model.spec());
    assert_eq!(got.to_json(), model.to_json());
    assert_eq!(got.to_json(), filled);
}

#[test]
fn missing_keys_read_as_their_defaults() {
    check(
        json!([
            {"age": 3, "tags": ["a"], "shoes": {"size": 8.0, "laces": [1, 2]}},
            {"tags": [], "shoes": {"laces": [3]}},
            {"age": 5, "shoes": {"size": 7.5}},
            {"shoes": {}},
        ]),
        json!([
            {"age": 3, "tags": ["a"], "shoes": {"size": 8.0, "laces": [1, 2]}},
            {"age": -1, "tags": [], "shoes": {"size": 9.5, "laces": [3]}},
            {"age": 5, "tags": ["none"], "shoes": {"size": 7.5, "laces": []}},
            {"age": -1, "tags": ["none"], "shoes": {"size": 9.5, "laces": []}},
        ]),
    );
}

#[test]
fn a_struct_default_is_an_object_and_its_own_keys_take_theirs() {
    let options = options().with_default(&["shoes"], json!({"laces": [7]}));
    let got = StructuredTensor::from_json_with_options(
        &json!([{"age": 1, "tags": []}, {"age": 2, "tags": ["x"], "shoes": {"size": 6.0}}]),
        &options,
    )
    .unwrap();
    assert_eq!(
        got.to_json(),
        json!([
            {"age": 1, "tags": [], "shoes": {"size": 9.5, "laces": [7]}},
            {"age": 2, "tags": ["x"], "shoes": {"size": 6.0, "laces": []}},
        ])
    );
}

#[test]
fn an_explicit_null_stays_null_under_the_nulls_option() {
    let options = options().with_nulls(true);
    let got = StructuredTensor::from_json_with_options(
        &json!([
            {"age": null, "tags": ["a"], "shoes": {"size": 1.0, "laces": []}},
            {"tags": ["b"], "shoes": {"size": 2.0, "laces": []}},
        ]),
        &options,
    )
    .unwrap();
    assert_eq!(got.to_json()[0]["age"], Value::Null);
    assert_eq!(got.to_json()[1]["age"], json!(-1));
}

#[test]
fn without_the_default_a_missing_key_is_still_refused() {
    let options = JsonOptions::default()
        .with_spec(spec())
        .with_default(&["age"], json!(0));
    let err = StructuredTensor::from_json_with_options(
        &json!([{"tags": [], "shoes": {"size": 1.0, "laces": []}}, {"age": 1}]),
        &options,
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("record 1"), "{text}");
    // the first key the record lacks, in the spec's order
    assert!(text.contains("'tags' is missing"), "{text}");
}

#[test]
fn a_default_that_does_not_fit_names_its_path() {
    let options = options().with_default(&["shoes", "size"], json!("big"));
    let err = StructuredTensor::from_json_with_options(&json!([{"age": 1}]), &options)
        .unwrap_err()
        .to_string();
    assert!(err.contains("shoes") && err.contains("size"), "{err}");
    assert!(err.contains("big"), "{err}");
}

#[test]
fn a_default_for_no_field_of_the_spec_is_refused() {
    for path in [&["height"][..], &["shoes", "colour"], &["age", "x"]] {
        let options = options().with_default(path, json!(1));
        let err = StructuredTensor::from_json_with_options(&json!([]), &options).unwrap_err();
        assert!(
            matches!(&err, Error::SchemaMismatch { path: p, .. } if p.0 == path),
            "{err}"
        );
    }
}

#[test]
fn json_lines_take_the_defaults_in_every_batch() {
    let lines = "{\"age\": 1, \"tags\": [\"a\"], \"shoes\": {\"size\": 1.0, \"laces\": []}}\n\
                 {\"shoes\": {}}\n\
                 {\"age\": 3, \"shoes\": {\"laces\": [4]}}\n";
    let got =
        StructuredTensor::from_json_lines(lines.as_bytes(), &options().with_batch_size(1)).unwrap();
    assert_eq!(
        got.to_json(),
        json!([
            {"age": 1, "tags": ["a"], "shoes": {"size": 1.0, "laces": []}},
            {"age": -1, "tags": ["none"], "shoes": {"size": 9.5, "laces": []}},
            {"age": 3, "tags": ["none"], "shoes": {"size": 9.5, "laces": [4]}},
        ])
    );
}
