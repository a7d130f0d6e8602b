//! Arrow interchange (feature `arrow`) against a `Vec<Vec<..>>` model read back through
//! Arrow's own accessors, with pointer equality for the zero-copy paths.
#![cfg(feature = "arrow")]

use crate::common;

use std::sync::Arc;

use arrow_array::builder::{Int32Builder, LargeListBuilder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type};
use arrow_array::{Array, ArrayRef, Int64Array, ListArray, PrimitiveArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use common::*;
use proptest::prelude::*;
use ragged_core::{Error, Ragged};

/// A 2-axis list array read back through Arrow's accessors (the model side).
fn arrow_to_v2(list: &ListArray) -> V2 {
    (0..list.len())
        .map(|i| list.value(i).as_primitive::<Int32Type>().values().to_vec())
        .collect()
}

/// A 3-axis list array read back through Arrow's accessors.
fn arrow_to_v3(list: &ListArray) -> V3 {
    (0..list.len())
        .map(|i| arrow_to_v2(list.value(i).as_list::<i32>()))
        .collect()
}

/// A 2-axis model built by Arrow's own builder.
fn builder_v2(v: &V2) -> ListArray {
    let mut b = ListBuilder::new(Int32Builder::new());
    for row in v {
        b.values().append_slice(row);
        b.append(true);
    }
    b.finish()
}

/// A 3-axis model built by Arrow's own builders.
fn builder_v3(v: &V3) -> ListArray {
    let mut b = ListBuilder::new(ListBuilder::new(Int32Builder::new()));
    for list in v {
        for row in list {
            b.values().values().append_slice(row);
            b.values().append(true);
        }
        b.append(true);
    }
    b.finish()
}

/// A list array built from vectors, so that its buffers are plain `Vec`s nobody else holds.
fn list_from_vecs(offsets: Vec<i32>, values: Vec<i32>) -> ListArray {
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let values: ArrayRef = Arc::new(PrimitiveArray::<Int32Type>::new(
        ScalarBuffer::from(values),
        None,
    ));
    let field = Arc::new(Field::new("item", DataType::Int32, false));
    ListArray::try_new(field, offsets, values, None).unwrap()
}

#[test]
fn into_arrow_moves_the_buffers_without_copying() {
    let r = Ragged::from_nested(vec![vec![1, 2], vec![], vec![3, 4, 5]]).unwrap();
    let (splits_ptr, values_ptr) = (r.row_splits(1).as_ptr(), r.values().as_ptr());
    let list = r.into_arrow();
    assert_eq!(list.offsets().as_ptr(), splits_ptr);
    let child = list.values().as_primitive::<Int32Type>();
    assert_eq!(child.values().as_ptr(), values_ptr);
    assert_eq!(arrow_to_v2(&list), vec![vec![1, 2], vec![], vec![3, 4, 5]]);
    assert_eq!(list.data_type().to_string(), "List(non-null Int32)");
}

#[test]
fn to_arrow_shares_the_row_splits_and_copies_the_values() {
    let r: Ragged<i32> = "[ [ [ 1 ] [ 2 3 ] ] [ ] [ [ 4 ] ] ]".parse().unwrap();
    let list = r.to_arrow();
    assert_eq!(list.offsets().as_ptr(), r.row_splits(1).as_ptr());
    let inner = list.values().as_list::<i32>();
    assert_eq!(inner.offsets().as_ptr(), r.row_splits(2).as_ptr());
    let leaf = inner.values().as_primitive::<Int32Type>();
    assert_ne!(leaf.values().as_ptr(), r.values().as_ptr());
    assert_eq!(arrow_to_v3(&list), r.to_vec_vec_vec());
    // the Arrow array keeps the splits alive after the ragged array is gone
    let model = r.to_vec_vec_vec();
    drop(r);
    assert_eq!(arrow_to_v3(&list), model);
}

#[test]
fn shared_layers_are_shared_with_arrow_too() {
    let r = Ragged::from_nested(vec![vec![1.5f64], vec![2.5, 3.5]]).unwrap();
    let keep = r.shape().clone();
    let list = r.into_arrow();
    // `keep` holds the layer, so it could not be moved: the buffer points into it
    assert_eq!(list.offsets().as_ptr(), keep.row_splits(1).as_ptr());
    let leaf = list.values().as_primitive::<Float64Type>();
    assert_eq!(leaf.values().to_vec(), vec![1.5, 2.5, 3.5]);
    drop(list);
    assert_eq!(keep.row_splits(1), &[0, 1, 3]);
}

#[test]
fn from_arrow_takes_over_unshared_buffers() {
    let list = list_from_vecs(vec![0, 2, 2, 5], vec![1, 2, 3, 4, 5]);
    let splits_ptr = list.offsets().as_ptr();
    let values_ptr = list.values().as_primitive::<Int32Type>().values().as_ptr();
    let r = Ragged::<i32>::from_arrow(Arc::new(list)).unwrap();
    assert_eq!(r.row_splits(1).as_ptr(), splits_ptr);
    assert_eq!(r.values().as_ptr(), values_ptr);
    assert_eq!(r.to_vec_vec(), vec![vec![1, 2], vec![], vec![3, 4, 5]]);
}

#[test]
fn a_round_trip_copies_nothing() {
    let r: Ragged<i32> = "[ [ [ 1 2 ] [ ] ] [ [ 3 ] ] ]".parse().unwrap();
    let model = r.to_vec_vec_vec();
    let ptrs = (
        r.row_splits(1).as_ptr(),
        r.row_splits(2).as_ptr(),
        r.values().as_ptr(),
    );
    let back = Ragged::<i32>::from_arrow(Arc::new(r.into_arrow())).unwrap();
    assert_eq!(
        (
            back.row_splits(1).as_ptr(),
            back.row_splits(2).as_ptr(),
            back.values().as_ptr()
        ),
        ptrs
    );
    assert_eq!(back.to_vec_vec_vec(), model);
}

#[test]
fn shared_arrow_buffers_are_copied_not_stolen() {
    let list: ArrayRef = Arc::new(list_from_vecs(vec![0, 1, 3], vec![7, 8, 9]));
    let r = Ragged::<i32>::from_arrow(list.clone()).unwrap();
    let kept = list.as_list::<i32>();
    assert_ne!(r.row_splits(1).as_ptr(), kept.offsets().as_ptr());
    assert_eq!(r.to_vec_vec(), vec![vec![7], vec![8, 9]]);
    assert_eq!(arrow_to_v2(kept), vec![vec![7], vec![8, 9]]);
}

#[test]
fn sliced_arrays_are_rebased() {
    let v: V3 = vec![
        vec![vec![1], vec![2, 3]],
        vec![vec![], vec![4, 5, 6]],
        vec![vec![7]],
        vec![],
        vec![vec![8, 9], vec![10]],
    ];
    let list = builder_v3(&v);
    for (offset, len) in [(0, 5), (1, 2), (2, 3), (4, 1), (3, 0), (1, 4)] {
        let sliced = list.slice(offset, len);
        let r = Ragged::<i32>::from_arrow(Arc::new(sliced)).unwrap();
        assert_eq!(r.to_vec_vec_vec(), v[offset..offset + len].to_vec());
        assert_eq!(r.row_splits(1)[0], 0);
        r.shape().validate().unwrap();
    }
    // a sliced child under unsliced offsets (the inner lists of a sliced outer list)
    let inner = builder_v2(&vec![vec![1, 2], vec![3], vec![4, 5]]).slice(1, 2);
    let field = Arc::new(Field::new("item", inner.data_type().clone(), false));
    let outer = ListArray::try_new(
        field,
        OffsetBuffer::new(ScalarBuffer::from(vec![0, 2])),
        Arc::new(inner),
        None,
    )
    .unwrap();
    let r = Ragged::<i32>::from_arrow(Arc::new(outer)).unwrap();
    assert_eq!(r.to_vec_vec_vec(), vec![vec![vec![3], vec![4, 5]]]);
}

#[test]
fn large_lists_are_read() {
    let mut b = LargeListBuilder::new(Int32Builder::new());
    for row in [vec![1, 2], vec![], vec![3]] {
        b.values().append_slice(&row);
        b.append(true);
    }
    let large = b.finish();
    let r = Ragged::<i32>::from_arrow(Arc::new(large.clone())).unwrap();
    assert_eq!(r.to_vec_vec(), vec![vec![1, 2], vec![], vec![3]]);
    let r = Ragged::<i32>::from_arrow(Arc::new(large.slice(1, 2))).unwrap();
    assert_eq!(r.to_vec_vec(), vec![vec![], vec![3]]);
}

#[test]
fn nulls_are_errors_naming_where() {
    let mut b = ListBuilder::new(Int32Builder::new());
    b.values().append_value(1);
    b.append(true);
    b.append(false); // a null list
    let with_null_list = b.finish();
    assert_eq!(
        Ragged::<i32>::from_arrow(Arc::new(with_null_list.clone())).unwrap_err(),
        Error::ArrowNull { axis: 0, index: 1 }
    );
    // slicing the null away leaves a valid array
    let r = Ragged::<i32>::from_arrow(Arc::new(with_null_list.slice(0, 1))).unwrap();
    assert_eq!(r.to_vec_vec(), vec![vec![1]]);
    let mut b = ListBuilder::new(Int32Builder::new());
    b.values().append_value(1);
    b.values().append_null();
    b.values().append_value(3);
    b.append(true);
    let err = Ragged::<i32>::from_arrow(Arc::new(b.finish())).unwrap_err();
    assert_eq!(err, Error::ArrowNull { axis: 1, index: 1 });
    assert_eq!(
        err.to_string(),
        "Arrow array at nesting level 1 has a null at index 1; ragged arrays hold no nulls"
    );
    let nulls = NullBuffer::from(vec![true, false]);
    let list = ListArray::try_new(
        Arc::new(Field::new("item", DataType::Int32, true)),
        OffsetBuffer::new(ScalarBuffer::from(vec![0, 1, 1])),
        Arc::new(PrimitiveArray::<Int32Type>::from(vec![4])),
        Some(nulls),
    )
    .unwrap();
    assert_eq!(
        Ragged::<i32>::from_arrow(Arc::new(list)).unwrap_err(),
        Error::ArrowNull { axis: 0, index: 1 }
    );
}

#[test]
fn wrong_types_are_errors_naming_both() {
    let ints: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    assert_eq!(
        Ragged::<i64>::from_arrow(ints).unwrap_err(),
        Error::ArrowType {
            axis: 0,
            expected: "a list (List or LargeList)".into(),
            found: "Int64".into()
        }
    );
    let list: ArrayRef = Arc::new(list_from_vecs(vec![0, 1], vec![5]));
    let err = Ragged::<i64>::from_arrow(list).unwrap_err();
    assert_eq!(
        err,
        Error::ArrowType {
            axis: 1,
            expected: "a list or Int64".into(),
            found: "Int32".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "Arrow array at nesting level 1 has type Int32, expected a list or Int64"
    );
}

#[test]
fn empty_arrays_and_prefixes() {
    let empty = Ragged::<i32>::from_nested(Vec::new()).unwrap();
    let list = empty.to_arrow();
    assert_eq!((list.len(), list.offsets().as_ref()), (0, &[0][..]));
    assert_eq!(Ragged::<i32>::from_arrow(Arc::new(list)).unwrap(), empty);
    let r = Ragged::from_nested(vec![vec![1], vec![2, 3], vec![4]]).unwrap();
    let p = r.prefix(2);
    let list = p.to_arrow();
    assert_eq!(arrow_to_v2(&list), vec![vec![1], vec![2, 3]]);
    assert_eq!(arrow_to_v2(&p.into_arrow()), vec![vec![1], vec![2, 3]]);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn two_axes_agree_with_the_model(v in v2()) {
        let r = r2(&v);
        prop_assert_eq!(arrow_to_v2(&r.to_arrow()), v.clone());
        prop_assert_eq!(arrow_to_v2(&r.clone().into_arrow()), v.clone());
        let read = Ragged::<i32>::from_arrow(Arc::new(builder_v2(&v))).unwrap();
        prop_assert_eq!(read.to_vec_vec(), v.clone());
        prop_assert_eq!(read, r);
    }

    #[test]
    fn three_axes_agree_with_the_model(v in v3(), cut in 0usize..6, len in 0usize..6) {
        let r = r3(&v);
        prop_assert_eq!(arrow_to_v3(&r.to_arrow()), v.clone());
        prop_assert_eq!(arrow_to_v3(&r.clone().into_arrow()), v.clone());
        let list = builder_v3(&v);
        let read = Ragged::<i32>::from_arrow(Arc::new(list.clone())).unwrap();
        prop_assert_eq!(read.to_vec_vec_vec(), v.clone());
        let begin = cut.min(v.len());
        let end = (begin + len).min(v.len());
        let sliced = Ragged::<i32>::from_arrow(Arc::new(list.slice(begin, end - begin))).unwrap();
        prop_assert_eq!(sliced.to_vec_vec_vec(), v[begin..end].to_vec());
    }
}
