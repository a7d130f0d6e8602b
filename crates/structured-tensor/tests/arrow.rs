//! Arrow interchange (feature `arrow`): JSON -> tensor -> Arrow -> tensor round trips, the
//! Arrow side read back through Arrow's own accessors against the JSON, tensors read from
//! arrays built with Arrow's builders against `from_json` of the same data, partitions
//! shared by pointer, and the errors.
#![cfg(feature = "arrow")]

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Float32Array, Int32Array, Int64Array, RecordBatch,
    StructArray, UInt16Array, UInt8Array,
};
use arrow_schema::{DataType, Field};
use serde_json::{json, Value};
use structured_tensor::{DType, Error, FieldPath, StructuredTensor, Values};

fn st(v: Value) -> StructuredTensor {
    StructuredTensor::from_json(&v).unwrap()
}

#[test]
fn records_round_trip_and_read_as_arrow_columns() {
    let v = json!([
        {"id": 1, "score": 0.5, "ok": true, "name": "Bob", "tags": [1, 2], "pos": {"x": 1.5, "ys": [3]}},
        {"id": 2, "score": -1.0, "ok": false, "name": "Жозефина", "tags": [], "pos": {"x": 2.5, "ys": []}},
        {"id": 3, "score": 2.25, "ok": true, "name": "", "tags": [7], "pos": {"x": -0.0, "ys": [4, 5]}}
    ]);
    let t = st(v.clone());
    let batch = t.to_record_batch().unwrap();
    assert_eq!(batch.num_rows(), 3);
    // the Arrow side, read through Arrow's accessors, against the JSON
    let id = batch
        .column_by_name("id")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert_eq!(id.values().to_vec(), vec![1, 2, 3]);
    let score = batch
        .column_by_name("score")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert_eq!(score.values().to_vec(), vec![0.5, -1.0, 2.25]);
    let ok = batch.column_by_name("ok").unwrap().as_boolean();
    assert_eq!(
        ok.iter().flatten().collect::<Vec<_>>(),
        vec![true, false, true]
    );
    let name = batch.column_by_name("name").unwrap().as_string::<i32>();
    assert_eq!(
        name.iter().flatten().collect::<Vec<_>>(),
        vec!["Bob", "Жозефина", ""]
    );
    let tags = batch.column_by_name("tags").unwrap().as_list::<i32>();
    assert_eq!(tags.value_offsets(), &[0, 2, 2, 3]);
    let pos = batch.column_by_name("pos").unwrap().as_struct();
    let ys = pos.column_by_name("ys").unwrap().as_list::<i32>();
    assert_eq!(ys.value_offsets(), &[0, 1, 1, 3]);
    // and back
    let back = StructuredTensor::from_record_batch(&batch).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.to_json(), v);
    let back = StructuredTensor::from_arrow(t.to_arrow().unwrap().as_ref()).unwrap();
    assert_eq!(back, t);
}

#[test]
fn higher_ranks_are_lists_of_structs_sharing_the_partitions() {
    let v = json!([[{"a": [1, 2], "b": {"c": 1.5}}], [], [{"a": [], "b": {"c": 2.5}}, {"a": [3], "b": {"c": 3.5}}]]);
    let t = st(v.clone());
    assert_eq!(t.rank(), 2);
    let array = t.to_arrow().unwrap();
    let outer = array.as_list::<i32>();
    // the offsets are the tensor's partition itself, not a copy
    assert_eq!(
        outer.offsets().as_ptr(),
        t.row_partitions()[0].row_splits().as_ptr()
    );
    assert_eq!(outer.value_offsets(), &[0, 1, 1, 3]);
    let structs = outer.values().as_struct();
    let a = structs.column_by_name("a").unwrap().as_list::<i32>();
    let a_partition = &t.fields()["a"].row_partitions()[1];
    assert_eq!(a.offsets().as_ptr(), a_partition.row_splits().as_ptr());
    let back = StructuredTensor::from_arrow(array.as_ref()).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.to_json(), v);
    // every field of the result shares the struct's partition
    for value in back.fields().values() {
        assert!(value.row_partitions()[0].ptr_eq(&back.row_partitions()[0]));
    }
    assert_eq!(
        t.to_record_batch().unwrap_err().to_string(),
        "Arrow conversion at path (): a RecordBatch holds a rank-1 StructuredTensor, this one has rank 2"
    );
}

#[test]
fn arrays_built_by_arrow_read_as_from_json_reads_the_same_data() {
    let mut tags = ListBuilder::new(Int64Builder::new());
    for row in [vec![1i64, 2], vec![], vec![3]] {
        tags.values().append_slice(&row);
        tags.append(true);
    }
    let mut names = StringBuilder::new();
    for n in ["x", "y", "z"] {
        names.append_value(n);
    }
    let batch = RecordBatch::try_from_iter(vec![
        ("tags", Arc::new(tags.finish()) as ArrayRef),
        ("name", Arc::new(names.finish()) as ArrayRef),
        (
            "flag",
            Arc::new(BooleanArray::from(vec![true, true, false])) as ArrayRef,
        ),
    ])
    .unwrap();
    let want = st(json!([
        {"tags": [1, 2], "name": "x", "flag": true},
        {"tags": [], "name": "y", "flag": true},
        {"tags": [3], "name": "z", "flag": false}
    ]));
    assert_eq!(StructuredTensor::from_record_batch(&batch).unwrap(), want);
    // a slice of the batch is rebased
    let sliced = batch.slice(1, 2);
    assert_eq!(
        StructuredTensor::from_record_batch(&sliced).unwrap(),
        st(
            json!([{"tags": [], "name": "y", "flag": true}, {"tags": [3], "name": "z", "flag": false}])
        )
    );
}

#[test]
fn bad_arrow_input_is_an_error_naming_the_path() {
    let with_null: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None]));
    let batch = RecordBatch::try_from_iter(vec![("a", with_null)]).unwrap();
    let err = StructuredTensor::from_record_batch(&batch).unwrap_err();
    assert_eq!(
        err,
        Error::Arrow {
            path: FieldPath::from("a"),
            problem: "null at index 1; StructuredTensor values hold no nulls".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "Arrow conversion at path ('a',): null at index 1; StructuredTensor values hold no nulls"
    );
    let shorts: ArrayRef = Arc::new(UInt16Array::from(vec![1u16]));
    let batch = RecordBatch::try_from_iter(vec![("b", shorts)]).unwrap();
    assert_eq!(
        StructuredTensor::from_record_batch(&batch)
            .unwrap_err()
            .to_string(),
        "Arrow conversion at path ('b',): unsupported Arrow type UInt16 (take Int64, Int32, \
         Float64, Float32, UInt8, Boolean, Utf8, LargeUtf8, Binary, LargeBinary, List, \
         LargeList, Struct)"
    );
    let bad_name = StructArray::from(vec![(
        Arc::new(Field::new("_x", DataType::Int64, false)),
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
    )]);
    assert_eq!(
        StructuredTensor::from_arrow(&bad_name)
            .unwrap_err()
            .to_string(),
        "Field name '_x' is not currently allowed. Names must match ^[a-zA-Z][a-zA-Z0-9_]*$ \
         (struct at path ())"
    );
    let not_structs = Int64Array::from(vec![1, 2]);
    assert_eq!(
        StructuredTensor::from_arrow(&not_structs)
            .unwrap_err()
            .to_string(),
        "Arrow conversion at path (): expected a Struct array or lists of one, found Int64"
    );
    assert_eq!(
        st(json!({"a": 1})).to_arrow().unwrap_err().to_string(),
        "Arrow conversion at path (): a rank-0 StructuredTensor has no rows for Arrow; give it rank 1"
    );
}

#[test]
fn generated_records_round_trip() {
    // a small seeded family of record lists: ints, floats, strings, lists, nested structs
    let mut state = 0x5EEDu64;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    for _ in 0..50 {
        let rows = next(6);
        let records: Vec<Value> = (0..rows)
            .map(|_| {
                let list: Vec<i64> = (0..next(4)).map(|_| next(100) as i64 - 50).collect();
                let s = ["", "a", "bc"][next(3) as usize];
                json!({
                    "i": next(1000) as i64 - 500,
                    "f": next(1000) as f64 / 8.0,
                    "s": s,
                    "l": list,
                    "n": {"m": [[next(9) as i64], []]}
                })
            })
            .collect();
        let v = Value::Array(records);
        let t = st(v.clone());
        let back = StructuredTensor::from_arrow(t.to_arrow().unwrap().as_ref()).unwrap();
        assert_eq!(back.to_json(), v);
        assert_eq!(back, t);
    }
}

#[test]
fn string_and_number_columns_share_their_buffers_with_arrow() {
    let t = st(json!([
        {"name": "Bob", "n": 1, "x": 0.5, "tags": ["a", "bc"]},
        {"name": "Жозефина", "n": 2, "x": 1.5, "tags": []},
        {"name": "", "n": 3, "x": 2.5, "tags": ["d"]}
    ]));
    let batch = t.to_record_batch().unwrap();
    let name = batch.column_by_name("name").unwrap().as_string::<i32>();
    let Some(structured_tensor::Values::Str(column)) =
        t.fields()["name"].as_array().map(|a| a.values())
    else {
        panic!("name is a string column")
    };
    // the Arrow array's buffers are the column's own, not copies
    assert_eq!(
        name.value_data().as_ptr(),
        column.as_bytes().bytes().as_ptr()
    );
    assert_eq!(
        name.value_offsets().as_ptr(),
        column.as_bytes().offsets_i32().unwrap().as_ptr()
    );
    assert_eq!(name.value_offsets(), &[0, 3, 19, 19]);
    assert_eq!(name.value_data(), "BobЖозефина".as_bytes());
    let n = batch
        .column_by_name("n")
        .unwrap()
        .as_primitive::<Int64Type>();
    let Some(structured_tensor::Values::I64(ns)) = t.fields()["n"].as_array().map(|a| a.values())
    else {
        panic!("n is an int64 column")
    };
    assert_eq!(n.values().as_ptr(), ns.as_ptr());
    let x = batch
        .column_by_name("x")
        .unwrap()
        .as_primitive::<Float64Type>();
    let Some(structured_tensor::Values::F64(xs)) = t.fields()["x"].as_array().map(|a| a.values())
    else {
        panic!("x is a float64 column")
    };
    assert_eq!(x.values().as_ptr(), xs.as_ptr());
    // strings under a list: the list's child is the shared string array
    let tags = batch.column_by_name("tags").unwrap().as_list::<i32>();
    let tag_strings = tags.values().as_string::<i32>();
    let Some(structured_tensor::Values::Str(tag_column)) =
        t.fields()["tags"].as_array().map(|a| a.values())
    else {
        panic!("tags is a string column")
    };
    assert_eq!(
        tag_strings.value_data().as_ptr(),
        tag_column.as_bytes().bytes().as_ptr()
    );
    // the buffers outlive the tensor
    drop(t);
    assert_eq!(
        name.iter().flatten().collect::<Vec<_>>(),
        vec!["Bob", "Жозефина", ""]
    );
}

#[test]
fn sliced_and_large_string_arrays_read_back_rebased() {
    use arrow_array::{LargeStringArray, StringArray};
    let strings = StringArray::from(vec!["ab", "", "cde", "f"]);
    let sliced: ArrayRef = Arc::new(strings.slice(1, 3));
    let batch = RecordBatch::try_from_iter(vec![("s", sliced)]).unwrap();
    let t = StructuredTensor::from_record_batch(&batch).unwrap();
    assert_eq!(t.to_json(), json!([{"s": ""}, {"s": "cde"}, {"s": "f"}]));
    let Some(structured_tensor::Values::Str(column)) =
        t.fields()["s"].as_array().map(|a| a.values())
    else {
        panic!("s is a string column")
    };
    assert_eq!(column.as_bytes().offsets_i32(), Some(&[0, 0, 3, 4][..]));
    let large: ArrayRef = Arc::new(LargeStringArray::from(vec!["x", "yz"]).slice(1, 1));
    let batch = RecordBatch::try_from_iter(vec![("s", large)]).unwrap();
    let t = StructuredTensor::from_record_batch(&batch).unwrap();
    assert_eq!(t.to_json(), json!([{"s": "yz"}]));
}

#[test]
fn narrow_numbers_and_bytes_map_to_their_arrow_types_and_back() {
    let batch = RecordBatch::try_from_iter(vec![
        ("i", Arc::new(Int32Array::from(vec![-1, 7])) as ArrayRef),
        (
            "f",
            Arc::new(Float32Array::from(vec![0.5f32, -2.0])) as ArrayRef,
        ),
        ("u", Arc::new(UInt8Array::from(vec![0u8, 255])) as ArrayRef),
        (
            "b",
            Arc::new(BinaryArray::from(vec![b"ok".as_slice(), &[0xFF, 0x00]])) as ArrayRef,
        ),
    ])
    .unwrap();
    let t = StructuredTensor::from_record_batch(&batch).unwrap();
    let dtype = |name: &str| t.fields()[name].as_array().unwrap().dtype();
    assert_eq!(
        [dtype("i"), dtype("f"), dtype("u"), dtype("b")],
        [DType::I32, DType::F32, DType::U8, DType::Bytes]
    );
    // bytes that are not UTF-8 come out of JSON as their byte values
    assert_eq!(
        t.to_json(),
        json!([
            {"i": -1, "f": 0.5, "u": 0, "b": "ok"},
            {"i": 7, "f": -2.0, "u": 255, "b": [255, 0]}
        ])
    );
    // the text keeps the Arrow field order (`to_json`'s map sorts its keys)
    assert_eq!(
        t.to_json_string(),
        r#"[{"i":-1,"f":0.5,"u":0,"b":"ok"},{"i":7,"f":-2.0,"u":255,"b":[255,0]}]"#
    );
    assert_eq!(t.field_names(), ["i", "f", "u", "b"]);
    let out = t.to_record_batch().unwrap();
    for name in ["i", "f", "u", "b"] {
        assert_eq!(
            out.column_by_name(name).unwrap().data_type(),
            batch.column_by_name(name).unwrap().data_type()
        );
    }
    assert_eq!(
        out.column_by_name("b").unwrap().as_binary::<i32>().value(1),
        &[0xFF, 0x00]
    );
    let Some(Values::I32(is)) = t.fields()["i"].as_array().map(|a| a.values()) else {
        panic!("i is an int32 column")
    };
    assert_eq!(
        out.column_by_name("i")
            .unwrap()
            .as_primitive::<arrow_array::types::Int32Type>()
            .values()
            .as_ptr(),
        is.as_ptr()
    );
    assert_eq!(StructuredTensor::from_record_batch(&out).unwrap(), t);
}

/// The leaf `Values` of field `name` of a rank-1 tensor.
fn leaf<'t>(t: &'t StructuredTensor, name: &str) -> &'t Values {
    t.fields()[name].as_array().expect("a leaf field").values()
}

/// A record batch of every leaf type, a list of numbers and a nested struct, built by
/// Arrow's own constructors.
fn every_leaf_batch() -> RecordBatch {
    use arrow_array::{Float64Array, ListArray, StringArray};
    let inner: ArrayRef = Arc::new(Int64Array::from(vec![10, 20, 30, 40]));
    let nested = StructArray::try_from(vec![("k", inner)]).unwrap();
    let list = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
        Some(vec![Some(1), Some(2)]),
        Some(vec![]),
        Some(vec![Some(3)]),
        Some(vec![Some(4), Some(5), Some(6)]),
    ]);
    RecordBatch::try_from_iter(vec![
        (
            "i64",
            Arc::new(Int64Array::from(vec![1, -2, 3, 4])) as ArrayRef,
        ),
        (
            "f64",
            Arc::new(Float64Array::from(vec![0.5, 1.5, -2.0, 8.0])),
        ),
        ("i32", Arc::new(Int32Array::from(vec![7, 8, 9, 10]))),
        (
            "f32",
            Arc::new(Float32Array::from(vec![0.25, 0.5, 1.0, 2.0])),
        ),
        ("u8", Arc::new(UInt8Array::from(vec![0, 1, 254, 255]))),
        ("s", Arc::new(StringArray::from(vec!["ab", "", "cde", "é"]))),
        (
            "b",
            Arc::new(BinaryArray::from(vec![
                b"x".as_slice(),
                &[0xff],
                b"",
                b"yz",
            ])),
        ),
        (
            "ok",
            Arc::new(BooleanArray::from(vec![true, false, true, true])),
        ),
        ("list", Arc::new(list)),
        ("nested", Arc::new(nested)),
    ])
    .unwrap()
}

/// The address of the first value of column `name` of `batch` (its values buffer as the
/// array sees it: offset applied) and, for strings and bytes, of its offsets.
fn arrow_addresses(batch: &RecordBatch, name: &str) -> (usize, Option<usize>) {
    let column = batch.column_by_name(name).unwrap();
    match column.data_type() {
        DataType::Int64 => (
            column.as_primitive::<Int64Type>().values().as_ptr() as usize,
            None,
        ),
        DataType::Float64 => (
            column.as_primitive::<Float64Type>().values().as_ptr() as usize,
            None,
        ),
        DataType::Int32 => (
            column
                .as_primitive::<arrow_array::types::Int32Type>()
                .values()
                .as_ptr() as usize,
            None,
        ),
        DataType::Float32 => (
            column
                .as_primitive::<arrow_array::types::Float32Type>()
                .values()
                .as_ptr() as usize,
            None,
        ),
        DataType::UInt8 => (
            column
                .as_primitive::<arrow_array::types::UInt8Type>()
                .values()
                .as_ptr() as usize,
            None,
        ),
        DataType::Utf8 => {
            let s = column.as_string::<i32>();
            let first = s.value_offsets()[0] as usize;
            (
                s.value_data()[first..].as_ptr() as usize,
                Some(s.value_offsets().as_ptr() as usize),
            )
        }
        DataType::Binary => {
            let b = column.as_binary::<i32>();
            let first = b.value_offsets()[0] as usize;
            (
                b.value_data()[first..].as_ptr() as usize,
                Some(b.value_offsets().as_ptr() as usize),
            )
        }
        other => panic!("no addresses for {other}"),
    }
}

/// The address of a leaf's values, and of its offsets for strings and bytes.
fn leaf_addresses(values: &Values) -> (usize, Option<usize>) {
    match values {
        Values::I64(v) => (v.as_ptr() as usize, None),
        Values::F64(v) => (v.as_ptr() as usize, None),
        Values::I32(v) => (v.as_ptr() as usize, None),
        Values::F32(v) => (v.as_ptr() as usize, None),
        Values::U8(v) => (v.as_ptr() as usize, None),
        Values::Str(c) => (
            c.as_bytes().bytes().as_ptr() as usize,
            Some(c.as_bytes().offsets_i32().unwrap().as_ptr() as usize),
        ),
        Values::Bytes(c) => (
            c.bytes().as_ptr() as usize,
            Some(c.offsets_i32().unwrap().as_ptr() as usize),
        ),
        Values::Bool(v) => (v.as_ptr() as usize, None),
    }
}

const SHARED_COLUMNS: [&str; 7] = ["i64", "f64", "i32", "f32", "u8", "s", "b"];

#[test]
fn from_arrow_reads_leaf_buffers_in_place_and_to_arrow_hands_them_back() {
    let batch = every_leaf_batch();
    let t = StructuredTensor::from_record_batch(&batch).unwrap();
    // the values against the batch's own JSON form, written out by hand
    assert_eq!(
        t.to_json()[3],
        json!({"i64": 4, "f64": 8.0, "i32": 10, "f32": 2.0, "u8": 255, "s": "é",
               "b": "yz", "ok": true, "list": [4, 5, 6], "nested": {"k": 40}})
    );
    for name in SHARED_COLUMNS {
        // the tensor's leaf is the batch's buffer: same address, nothing copied
        assert_eq!(
            leaf_addresses(leaf(&t, name)),
            arrow_addresses(&batch, name),
            "{name}"
        );
    }
    // booleans are copied: Arrow packs them in bits, the tensor holds bytes
    let ok = batch.column_by_name("ok").unwrap().as_boolean();
    assert_ne!(
        leaf_addresses(leaf(&t, "ok")).0,
        ok.values().inner().as_ptr() as usize
    );
    // leaves under a list and in a nested struct are shared too
    let list = batch.column_by_name("list").unwrap().as_list::<i32>();
    let list_values = list.values().as_primitive::<Int64Type>().values().as_ptr();
    assert_eq!(leaf_addresses(leaf(&t, "list")).0, list_values as usize);
    let nested = batch.column_by_name("nested").unwrap().as_struct();
    let k = nested
        .column(0)
        .as_primitive::<Int64Type>()
        .values()
        .as_ptr();
    let Some(structured_tensor::FieldValue::Struct(inner)) = t.fields().get("nested") else {
        panic!("nested is a struct")
    };
    assert_eq!(leaf_addresses(leaf(inner, "k")).0, k as usize);
    // and out again: the new batch's buffers are still the first batch's
    let back = t.to_record_batch().unwrap();
    for name in SHARED_COLUMNS {
        assert_eq!(
            arrow_addresses(&back, name),
            arrow_addresses(&batch, name),
            "{name}"
        );
    }
    // the tensor keeps the Arrow memory alive after the batches are gone
    drop((batch, back));
    assert_eq!(t.to_json()[2]["s"], json!("cde"));
    assert_eq!(t.to_json()[0]["i64"], json!(1));
}

#[test]
fn a_sliced_batch_shares_values_and_bytes_and_rebases_string_offsets() {
    let full = every_leaf_batch();
    let batch = full.slice(1, 3);
    let t = StructuredTensor::from_record_batch(&batch).unwrap();
    assert_eq!(
        t.to_json()[0],
        json!({"i64": -2, "f64": 1.5, "i32": 8, "f32": 0.5, "u8": 1, "s": "", "b": [255],
               "ok": false, "list": [], "nested": {"k": 20}})
    );
    for name in ["i64", "f64", "i32", "f32", "u8"] {
        // the slice starts one element in: still aligned, still the batch's memory
        assert_eq!(
            leaf_addresses(leaf(&t, name)),
            arrow_addresses(&batch, name),
            "{name}"
        );
    }
    for name in ["s", "b"] {
        let (bytes, offsets) = leaf_addresses(leaf(&t, name));
        let (arrow_bytes, arrow_offsets) = arrow_addresses(&batch, name);
        assert_eq!(bytes, arrow_bytes, "{name}: the bytes are shared");
        assert_ne!(
            offsets, arrow_offsets,
            "{name}: offsets from 2, rebased to 0 in a copy"
        );
    }
    let Values::Str(s) = leaf(&t, "s") else {
        panic!("s is a string column")
    };
    assert_eq!(s.as_bytes().offsets_i32(), Some(&[0, 0, 3, 5][..]));
    assert!(s.as_bytes().bytes_shared() && !s.as_bytes().offsets_shared());
}

#[test]
fn writing_to_shared_values_copies_and_leaves_the_arrow_buffer_alone() {
    let batch = every_leaf_batch();
    let t = StructuredTensor::from_record_batch(&batch).unwrap();
    let arrow_i64 = batch
        .column_by_name("i64")
        .unwrap()
        .as_primitive::<Int64Type>()
        .clone();
    // a write through a clone of the leaf copies first (copy on write)
    let mut values = leaf(&t, "i64").clone();
    let Values::I64(v) = &mut values else {
        panic!("i64 is an int64 column")
    };
    assert!(v.is_shared());
    v.to_mut()[0] = 99;
    v.to_mut().push(5);
    assert!(!v.is_shared());
    assert_eq!(v.as_slice(), &[99, -2, 3, 4, 5]);
    assert_eq!(arrow_i64.values().to_vec(), vec![1, -2, 3, 4]);
    assert_eq!(t.to_json()[0]["i64"], json!(1));
    // an update through the tensor's own API leaves the Arrow buffer and the old tensor as
    // they were, and the untouched fields still share it
    let doubled = t
        .with_updates(vec![(
            "i64",
            structured_tensor::Update::transform(|value| {
                let a = value.as_array().unwrap();
                let Values::I64(v) = a.values() else {
                    unreachable!("an int64 column")
                };
                Ok(
                    a.with_values(Values::I64(v.iter().map(|x| x * 2).collect()))?
                        .into(),
                )
            }),
        )])
        .unwrap();
    assert_eq!(
        doubled.field_value("i64").unwrap().to_json(),
        json!([2, -4, 6, 8])
    );
    assert_eq!(arrow_i64.values().to_vec(), vec![1, -2, 3, 4]);
    assert_eq!(
        leaf_addresses(leaf(&doubled, "f64")),
        arrow_addresses(&batch, "f64")
    );
    // string columns copy on write too
    let Values::Str(s) = leaf(&t, "s") else {
        panic!("s is a string column")
    };
    let mut s = s.clone();
    s.push("new");
    assert_eq!(s.len(), 5);
    let arrow_s = batch.column_by_name("s").unwrap().as_string::<i32>();
    assert_eq!(arrow_s.value_data(), "abcdeé".as_bytes());
    assert_eq!(arrow_s.value_offsets(), &[0, 2, 2, 5, 7]);
}
