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
    assert_eq!(
        t.to_json_string(),
        serde_json::to_string(&t.to_json()).unwrap()
    );
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
