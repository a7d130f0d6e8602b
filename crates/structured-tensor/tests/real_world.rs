//! Real-world data: nulls and missing keys, JSON Lines, any field name, schemas as values
//! (`Spec` JSON, `Spec::infer`, `conform`), nulls through the ops, ragged reductions.

use serde_json::{json, Value};
use structured_tensor::{
    json_lines_batches, Error, FieldSpec, JsonOptions, Reduction, Spec, StructuredTensor, Validity,
};

fn nulls() -> JsonOptions {
    JsonOptions::default().with_nulls(true)
}

#[test]
fn nulls_and_missing_keys_become_nulls_under_the_option() {
    let v = json!([
        {"age": 12, "name": "a", "tags": ["x"], "shoe": {"size": 8.5}},
        {"age": null, "tags": null},
        {"name": "c", "tags": [], "shoe": null, "age": 7},
    ]);
    let st = StructuredTensor::from_json_with_options(&v, &nulls()).unwrap();
    assert_eq!(
        st.to_json(),
        json!([
            {"age": 12, "name": "a", "tags": ["x"], "shoe": {"size": 8.5}},
            {"age": null, "name": null, "tags": [], "shoe": {"size": null}},
            {"age": 7, "name": "c", "tags": [], "shoe": {"size": null}},
        ])
    );
    let age = st.field_value("age").unwrap().as_array().unwrap();
    assert_eq!(age.null_count(), 1);
    assert_eq!(age.validity().unwrap().to_bools(), vec![true, false, true]);
    assert!(matches!(st.spec().fields["age"], FieldSpec::Nullable(_)));
    // off by default: refused, naming the record
    let e = StructuredTensor::from_json_with_options(&v, &JsonOptions::default()).unwrap_err();
    assert!(matches!(e, Error::InRecord { record: 1, .. }), "{e}");
    // TensorFlow's reader itself is unchanged
    assert!(StructuredTensor::from_json(&v).is_err());
}

#[test]
fn errors_name_the_record() {
    let v = json!([{"a": 1}, {"a": 2}, {"a": "three"}, {"a": 4}]);
    let e = StructuredTensor::from_json_with_options(&v, &JsonOptions::default()).unwrap_err();
    assert!(e.to_string().starts_with("record 2: "), "{e}");
    let e = StructuredTensor::from_json_with_options(&v, &nulls()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "record 2: field ('a',) has type string, but the schema has int64"
    );
}

#[test]
fn any_field_names_by_option() {
    let v = json!([{"user-id": 1, "_id": "x", "@timestamp": 5, "ключ": true}]);
    assert!(StructuredTensor::from_json_with_options(&v, &JsonOptions::default()).is_err());
    let st = StructuredTensor::from_json_with_options(
        &v,
        &JsonOptions::default().with_any_field_names(true),
    )
    .unwrap();
    assert_eq!(st.to_json(), v);
    assert_eq!(st.field_names(), ["user-id", "_id", "@timestamp", "ключ"]);
}

/// `n` JSON Lines of records; record `bad` (0-based), if any, is broken.
fn lines(n: usize, bad: Option<usize>) -> String {
    let mut out = String::new();
    for i in 0..n {
        if Some(i) == bad {
            out.push_str("{\"id\": 1, \"v\": [1, 2,, 3]}\n");
        } else {
            out.push_str(&format!(
                "{{\"id\": {i}, \"v\": [{}], \"s\": {{\"t\": \"r{i}\"}}}}\n",
                i % 3
            ));
        }
    }
    out
}

#[test]
fn json_lines_bad_line_5001_is_named() {
    let text = lines(6000, Some(5000));
    for batch_size in [1000, 4096, 65_536] {
        let options = JsonOptions::default().with_batch_size(batch_size);
        let e = StructuredTensor::from_json_lines(text.as_bytes(), &options).unwrap_err();
        match &e {
            Error::InRecord {
                record,
                line,
                column,
                ..
            } => {
                assert_eq!(
                    (*record, *line, *column),
                    (5000, Some(5001), Some(22)),
                    "{e}"
                );
            }
            other => panic!("{other}"),
        }
        assert!(e
            .to_string()
            .starts_with("record 5000 (line 5001, column 22): "));
    }
}

#[test]
fn json_lines_equal_the_document_reader_in_any_batch_size() {
    let text = lines(3000, None);
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let whole = StructuredTensor::from_json(&Value::Array(records)).unwrap();
    for batch_size in [1, 7, 1000, 5000] {
        let options = JsonOptions::default().with_batch_size(batch_size);
        let st = StructuredTensor::from_json_lines(text.as_bytes(), &options).unwrap();
        assert_eq!(st, whole, "batch size {batch_size}");
    }
    // blank lines are skipped, but counted as lines
    let e = StructuredTensor::from_json_lines(
        "{\"a\": 1}\n\n{\"a\": \"x\"}\n".as_bytes(),
        &JsonOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("record 1 (line 3): "), "{e}");
    let n = json_lines_batches(
        text.as_bytes(),
        &JsonOptions::default().with_batch_size(1000),
    )
    .count();
    assert_eq!(n, 3);
}

#[test]
fn an_empty_list_takes_its_type_from_another_batch() {
    // the first batch has only empty sessions (float64 by TensorFlow's rule), the second
    // has sessions with structs: the result has the structs
    let mut text = String::new();
    for i in 0..4 {
        text.push_str(&format!("{{\"user\": {i}, \"sessions\": []}}\n"));
    }
    text.push_str("{\"user\": 9, \"sessions\": [{\"len\": 2.5}]}\n");
    let st = StructuredTensor::from_json_lines(
        text.as_bytes(),
        &JsonOptions::default().with_batch_size(4),
    )
    .unwrap();
    let expected = json!([
        {"user": 0, "sessions": []}, {"user": 1, "sessions": []},
        {"user": 2, "sessions": []}, {"user": 3, "sessions": []},
        {"user": 9, "sessions": [{"len": 2.5}]},
    ]);
    assert_eq!(st.to_json(), expected);
    assert!(st.field_value("sessions").unwrap().as_struct().is_some());
    // int in one batch, float in another: float64
    let st = StructuredTensor::from_json_lines(
        "{\"x\": 1}\n{\"x\": 2.5}\n".as_bytes(),
        &JsonOptions::default().with_batch_size(1),
    )
    .unwrap();
    assert_eq!(st.to_json(), json!([{"x": 1.0}, {"x": 2.5}]));
}

/// What `from_json_lines` is documented to give: its batches (`json_lines_batches`, the
/// first error if any), typed by `Spec::infer`, conformed and concatenated.
fn batches_joined(text: &str, options: &JsonOptions) -> Result<StructuredTensor, Error> {
    let batches: Vec<StructuredTensor> =
        json_lines_batches(text.as_bytes(), options).collect::<Result<_, _>>()?;
    if batches.is_empty() {
        return StructuredTensor::from_json_lines("".as_bytes(), options);
    }
    let refs: Vec<&StructuredTensor> = batches.iter().collect();
    let spec = Spec::infer(&refs)?;
    let conformed: Vec<StructuredTensor> = batches
        .iter()
        .map(|b| b.conform(&spec))
        .collect::<Result<_, _>>()?;
    StructuredTensor::concat(&conformed.iter().collect::<Vec<_>>(), 0)
}

/// One JSON Lines record of a fixed shape, with now and then something that changes the
/// type of a batch (a float, an empty list, strings, another struct), something only the
/// general reader takes (keys reordered, a list of lists or of objects), or something
/// refused (a `null`, a missing, extra or renamed key, a type that conflicts, broken syntax, an
/// integer beyond `int64`); blank lines between records.
fn varied_line(rng: &mut Rng, odd: u64) -> String {
    let a = match rng.below(odd) {
        0 => "2.5".to_string(),
        1 => "\"x\"".to_string(),
        2 => "null".to_string(),
        3 => "true".to_string(),
        4 => "99999999999999999999".to_string(),
        _ => rng.below(100).to_string(),
    };
    let l = match rng.below(odd) {
        0 => "[0.5, 1]".to_string(),
        1 => "[\"p\", \"q\"]".to_string(),
        2 => "[[1], [2, 3]]".to_string(),
        3 => "[{\"z\": 1}]".to_string(),
        4..=6 => "[]".to_string(),
        _ => format!("[{}, {}]", rng.below(9), rng.below(9)),
    };
    let s = match rng.below(odd) {
        0 => "{\"t\": [true], \"u\": \"v\"}".to_string(),
        1 => "{\"u\": \"v\"}".to_string(),
        2 => "{\"t\": [1], \"u\": 3}".to_string(),
        3 => "{\"t\": [true], \"w\": \"v\"}".to_string(),
        _ => format!(
            "{{\"t\": [{}], \"u\": \"v{}\"}}",
            rng.below(2) == 0,
            rng.below(9)
        ),
    };
    match rng.below(odd * 4) {
        0 => format!("{{\"l\": {l}, \"a\": {a}, \"s\": {s}}}"),
        1 => format!("{{\"a\": {a}, \"l\": {l}}}"),
        2 => format!("{{\"a\": {a}, \"l\": {l}, \"s\": {s}, \"e\": 1}}"),
        3 => format!("{{\"a\": {a}, \"l\": {l},, \"s\": {s}}}"),
        4 => String::new(),
        5 => "[1]".to_string(),
        6 => format!("{{\"a\": {a}, \"l\": {l}, \"r\": {s}}}"),
        _ => format!("{{\"a\": {a}, \"l\": {l}, \"s\": {s}}}"),
    }
}

/// Under TensorFlow's rules the reader fills one set of columns across batches and hands
/// the batches it cannot take to the general path: the result, or the error, is what its
/// batches typed, conformed and joined give, for any batch size.
#[test]
fn json_lines_in_one_set_of_columns_equal_their_batches_joined() {
    let mut rng = Rng(47);
    let (mut ok, mut failed) = (0, 0);
    for case in 0..3000 {
        // rarely odd (most inputs read whole) to often odd (most are refused)
        let odd = [8, 40, 200, 1000][case % 4];
        let n = 1 + rng.below(24) as usize;
        let text: String = (0..n)
            .map(|_| varied_line(&mut rng, odd) + if rng.below(9) == 0 { "\r\n" } else { "\n" })
            .collect();
        let options = JsonOptions::default().with_batch_size(1 + rng.below(7) as usize);
        let got = StructuredTensor::from_json_lines(text.as_bytes(), &options);
        let want = batches_joined(&text, &options);
        match (&got, &want) {
            (Ok(g), Ok(w)) => {
                assert_eq!(g, w, "case {case}\n{text}");
                ok += 1;
            }
            (Err(g), Err(w)) => {
                assert_eq!(g.to_string(), w.to_string(), "case {case}\n{text}");
                failed += 1;
            }
            _ => panic!("case {case}: {got:?} against {want:?}\n{text}"),
        }
    }
    assert!(ok > 600 && failed > 600, "{ok} read, {failed} refused");
}

#[test]
fn spec_infer_and_conform_unify_many_inputs() {
    let a = StructuredTensor::from_json(&json!([{"u": 1, "s": []}])).unwrap();
    let b = StructuredTensor::from_json(&json!([{"u": 2.5, "s": [{"t": "x"}]}])).unwrap();
    // concat of the two as read fails: float64 list against a struct list
    assert!(StructuredTensor::concat(&[&a, &b], 0).is_err());
    let spec = Spec::infer(&[&a, &b]).unwrap();
    let joined =
        StructuredTensor::concat(&[&a.conform(&spec).unwrap(), &b.conform(&spec).unwrap()], 0)
            .unwrap();
    assert_eq!(
        joined.to_json(),
        json!([{"u": 1.0, "s": []}, {"u": 2.5, "s": [{"t": "x"}]}])
    );
    // a spec that does not fit names the path and both types
    let c = StructuredTensor::from_json(&json!([{"u": "no", "s": []}])).unwrap();
    let e = Spec::infer(&[&a, &b, &c]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "field ('u',) has type string, but the schema has float64"
    );
    let e = c.conform(&spec).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "field ('u',) has type TensorSpec(shape=(1,), dtype=string), but the schema has"
        ),
        "{e}"
    );
    // fields missing from one input: nullable with infer_allowing_missing
    let d = StructuredTensor::from_json(&json!([{"u": 3}])).unwrap();
    assert!(Spec::infer(&[&a, &d]).is_err());
    let spec = Spec::infer_allowing_missing(&[&b, &d]).unwrap();
    let joined =
        StructuredTensor::concat(&[&b.conform(&spec).unwrap(), &d.conform(&spec).unwrap()], 0)
            .unwrap();
    assert_eq!(
        joined.to_json(),
        json!([{"u": 2.5, "s": [{"t": "x"}]}, {"u": 3.0, "s": []}])
    );
}

#[test]
fn spec_json_round_trips_every_spec_we_infer() {
    let v = json!([{"a": 1, "b": [[1.5]], "c": {"d": ["x"], "e": [{"f": true}]}, "n": null}]);
    let st = StructuredTensor::from_json_with_options(&v, &nulls()).unwrap();
    let spec = st.spec();
    let text = serde_json::to_string(&spec.to_json()).unwrap();
    let back = Spec::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
    assert_eq!(back, spec);
    // a spec shipped as JSON reads other records the same way
    let w = json!([{"a": 2, "b": [], "c": {"d": [], "e": []}, "n": 4.0}]);
    let other =
        StructuredTensor::from_json_with_options(&w, &nulls().with_spec(back.without_sizes()))
            .unwrap();
    assert_eq!(other.to_json(), w);
}

/// A nullable int column of `n` rows of lists, every third value null, as JSON.
fn nullable_records(n: usize, seed: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                let k = (i * 7 + seed) % 4;
                let xs: Vec<Value> = (0..k)
                    .map(|j| {
                        if (i + j + seed).is_multiple_of(3) {
                            Value::Null
                        } else {
                            json!((i * 10 + j) as i64)
                        }
                    })
                    .collect();
                let y = if (i + seed).is_multiple_of(5) {
                    Value::Null
                } else {
                    json!(i as f64 / 2.0)
                };
                json!({"xs": xs, "y": y})
            })
            .collect(),
    )
}

#[test]
fn nulls_follow_gather_concat_boolean_mask_and_merge_dims() {
    let v = nullable_records(40, 0);
    let st = StructuredTensor::from_json_with_options(&v, &nulls()).unwrap();
    let rows = v.as_array().unwrap();
    // gather, against picking the JSON records
    let indices: Vec<i64> = (0..40).map(|i| (i * 13 % 40) as i64).collect();
    let g = st.gather(&indices, 0).unwrap();
    let model: Vec<Value> = indices.iter().map(|&i| rows[i as usize].clone()).collect();
    assert_eq!(g.to_json(), Value::Array(model));
    // concat with a struct of the same spec
    let w = nullable_records(17, 1);
    let other = StructuredTensor::from_json_with_options(&w, &nulls()).unwrap();
    let c = StructuredTensor::concat(&[&st, &other], 0).unwrap();
    let mut model = rows.clone();
    model.extend(w.as_array().unwrap().iter().cloned());
    assert_eq!(c.to_json(), Value::Array(model));
    // boolean_mask
    let mask: Vec<bool> = (0..40).map(|i| i % 3 != 1).collect();
    let m = st.boolean_mask(&mask).unwrap();
    let model: Vec<Value> = rows
        .iter()
        .zip(&mask)
        .filter(|(_, &keep)| keep)
        .map(|(r, _)| r.clone())
        .collect();
    assert_eq!(m.to_json(), Value::Array(model));
    // merge_dims of the field's two dimensions keeps the nulls in order
    let xs = st.field_value("xs").unwrap().as_array().unwrap();
    let flat = xs.merge_dims(0, 1).unwrap();
    let model: Vec<Value> = rows
        .iter()
        .flat_map(|r| r["xs"].as_array().unwrap().clone())
        .collect();
    assert_eq!(flat.to_json(), Value::Array(model));
    // a rank-2 struct merged
    let grouped = st
        .partition_outer_dimension(
            &structured_tensor::RowPartition::from_row_lengths(&[10; 4]).unwrap(),
        )
        .unwrap();
    assert_eq!(grouped.merge_dims(0, 1).unwrap(), st);
}

#[test]
fn ragged_reductions_skip_nulls_as_a_loop_does() {
    let v = nullable_records(30, 2);
    let st = StructuredTensor::from_json_with_options(&v, &nulls()).unwrap();
    let xs = st.field_value("xs").unwrap().as_array().unwrap();
    let rows: Vec<Vec<Option<i64>>> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["xs"]
                .as_array()
                .unwrap()
                .iter()
                .map(Value::as_i64)
                .collect()
        })
        .collect();
    let valid = |r: &Vec<Option<i64>>| r.iter().flatten().copied().collect::<Vec<i64>>();
    let sum = xs.reduce_innermost(Reduction::Sum).unwrap();
    let model: Vec<Value> = rows
        .iter()
        .map(|r| json!(valid(r).iter().sum::<i64>()))
        .collect();
    assert_eq!(sum.to_json(), Value::Array(model));
    let count = xs.reduce_innermost(Reduction::Count).unwrap();
    let model: Vec<Value> = rows.iter().map(|r| json!(valid(r).len())).collect();
    assert_eq!(count.to_json(), Value::Array(model));
    let mean = xs.reduce_innermost(Reduction::Mean).unwrap();
    let model: Vec<Value> = rows
        .iter()
        .map(|r| {
            let v = valid(r);
            if v.is_empty() {
                Value::Null
            } else {
                json!(v.iter().sum::<i64>() as f64 / v.len() as f64)
            }
        })
        .collect();
    assert_eq!(mean.to_json(), Value::Array(model));
    let max = xs.reduce_innermost(Reduction::Max).unwrap();
    let model: Vec<Value> = rows
        .iter()
        .map(|r| valid(r).into_iter().max().map_or(Value::Null, |m| json!(m)))
        .collect();
    assert_eq!(max.to_json(), Value::Array(model));
    let min = xs.reduce_innermost(Reduction::Min).unwrap();
    let model: Vec<Value> = rows
        .iter()
        .map(|r| valid(r).into_iter().min().map_or(Value::Null, |m| json!(m)))
        .collect();
    assert_eq!(min.to_json(), Value::Array(model));
}

#[test]
fn with_validity_checks_the_length() {
    let st = StructuredTensor::from_json(&json!([{"a": 1}, {"a": 2}])).unwrap();
    let a = st.field_value("a").unwrap().as_array().unwrap();
    assert!(a.with_validity(Some(Validity::all_valid(3))).is_err());
    let b = a
        .with_validity(Some(Validity::from_bools(&[false, true])))
        .unwrap();
    assert_eq!(b.to_json(), json!([null, 2]));
}

/// A tiny seeded generator (SplitMix64) for the property tests.
pub struct Rng(pub u64);

impl Rng {
    /// A value below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1334_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// A random schema: (name, kind) with kind 0 int, 1 float, 2 string, 3 bool, 4 list of
/// ints, 5 struct of an int and a list of strings.
pub fn random_schema(rng: &mut Rng) -> Vec<(String, u64)> {
    let names = ["a", "b-c", "_id", "d", "@t"];
    (0..1 + rng.below(4) as usize)
        .map(|i| (names[i].to_string(), rng.below(6)))
        .collect()
}

/// A random record of `schema` with nulls and missing keys (`raw`), and the record as we
/// read it under the null policy (`model`).
pub fn random_record(rng: &mut Rng, schema: &[(String, u64)]) -> (Value, Value) {
    let mut raw = serde_json::Map::new();
    let mut model = serde_json::Map::new();
    for (name, kind) in schema {
        let roll = rng.below(6);
        let (r, m) = if roll == 0 {
            (None, None)
        } else if roll == 1 {
            (Some(Value::Null), None)
        } else {
            let v = match kind {
                0 => json!(rng.below(1000) as i64 - 500),
                1 => json!(rng.below(100) as f64 / 4.0 + 0.5),
                2 => json!(format!("s{}", rng.below(50))),
                3 => json!(rng.below(2) == 1),
                4 => Value::Array(
                    (0..rng.below(4))
                        .map(|_| {
                            if rng.below(4) == 0 {
                                Value::Null
                            } else {
                                json!(rng.below(9))
                            }
                        })
                        .collect(),
                ),
                _ => json!({"x": rng.below(9), "ys": ["p", "q"]}),
            };
            (Some(v.clone()), Some(v))
        };
        // what a null or missing value reads as
        let m = m.unwrap_or_else(|| match kind {
            4 => json!([]),
            5 => json!({"x": null, "ys": []}),
            _ => Value::Null,
        });
        if let Some(r) = r {
            raw.insert(name.clone(), r);
        }
        model.insert(name.clone(), m);
    }
    (Value::Object(raw), Value::Object(model))
}

#[test]
fn random_records_with_nulls_read_from_json_lines_as_the_model() {
    let mut rng = Rng(31);
    for case in 0..40 {
        let schema = random_schema(&mut rng);
        let n = 1 + rng.below(30) as usize;
        let mut text = String::new();
        let mut model = Vec::new();
        // one complete record first, so that every field's type is seen
        let mut saw = vec![false; schema.len()];
        for _ in 0..n {
            let (raw, m) = random_record(&mut rng, &schema);
            for (k, (name, _)) in schema.iter().enumerate() {
                saw[k] |= raw.get(name).is_some_and(|v| !v.is_null());
            }
            text.push_str(&serde_json::to_string(&raw).unwrap());
            text.push('\n');
            model.push(m);
        }
        if saw.iter().any(|s| !s) {
            continue; // a field never seen has no type to infer
        }
        let options = JsonOptions::default()
            .with_nulls(true)
            .with_any_field_names(true)
            .with_batch_size(1 + rng.below(8) as usize);
        let st = StructuredTensor::from_json_lines(text.as_bytes(), &options)
            .unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        // lists of ints with nulls may widen nothing: compare as JSON values
        assert_eq!(
            st.to_json(),
            Value::Array(model.clone()),
            "case {case}\n{text}"
        );
        // the inferred spec, shipped as JSON, reads the same records the same way
        let spec = Spec::from_json(&st.spec().without_sizes().to_json()).unwrap();
        let again =
            StructuredTensor::from_json_lines(text.as_bytes(), &options.with_spec(spec)).unwrap();
        assert_eq!(again.to_json(), Value::Array(model), "case {case}");
    }
}
