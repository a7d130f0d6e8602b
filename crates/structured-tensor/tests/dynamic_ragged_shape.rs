//! `DynamicRaggedShape`: TensorFlow 2.21's `dynamic_ragged_shape_test.py`, translated (the
//! cases about shapes and broadcasting on the CPU; graph-mode, gradient and `_Broadcaster`
//! internals are left out), with lengths written as JSON (`[2, [3, 2], 7]` is TensorFlow's
//! `[2, (3, 2), 7]`). Broadcast values are checked against a naive model on nested JSON
//! lists.

use serde_json::{json, Value};
use structured_tensor::{
    Array, DType, DynamicRaggedShape, Error, Length, StructuredTensor, Values,
};

/// TensorFlow's lengths from JSON: an int is a uniform length, a list the row lengths.
fn lengths(v: Value) -> Vec<Length> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| match l {
            Value::Array(items) => {
                Length::Ragged(items.iter().map(|x| x.as_u64().unwrap() as usize).collect())
            }
            n => Length::Uniform(n.as_u64().unwrap() as usize),
        })
        .collect()
}

fn shape(v: Value) -> DynamicRaggedShape {
    DynamicRaggedShape::from_lengths(&lengths(v), None).unwrap()
}

fn shape_n(v: Value, num_row_partitions: usize) -> DynamicRaggedShape {
    shape(v)
        .with_num_row_partitions(num_row_partitions)
        .unwrap()
}

/// Row splits of every partition, and the inner shape: what TensorFlow's `assertShapeEq`
/// compares.
fn parts(s: &DynamicRaggedShape) -> (Vec<Vec<i32>>, Vec<usize>) {
    (
        s.row_partitions()
            .iter()
            .map(|p| p.row_splits().to_vec())
            .collect(),
        s.inner_shape().to_vec(),
    )
}

#[track_caller]
fn assert_shape_eq(actual: &DynamicRaggedShape, expected: &DynamicRaggedShape) {
    assert_eq!(parts(actual), parts(expected), "{actual} vs {expected}");
}

/// An array of shape `s` holding `values`.
fn array_of(s: &DynamicRaggedShape, values: Values) -> Array {
    match s.rank() {
        0 => Array::dense(&[], values).unwrap(),
        1 => Array::from_values(values),
        _ => Array::from_partitions(s.nrows().unwrap(), s.as_row_partitions().unwrap(), values)
            .unwrap(),
    }
}

/// `0, 1, 2, ...` in the shape given by `lengths` (TensorFlow's tests use primes; any
/// distinct values do).
fn counting(v: Value) -> Array {
    let s = shape(v);
    let n = s.num_elements();
    array_of(&s, Values::I64((0..n as i64).collect()))
}

// ---- from_tensor -----------------------------------------------------------------------

#[track_caller]
fn check_from_tensor(value: Value, row_splits: &[&[i32]], inner_shape: &[usize]) {
    let a = Array::from_json(&value).unwrap();
    let s = a.dynamic_shape();
    let expected: Vec<Vec<i32>> = row_splits.iter().map(|r| r.to_vec()).collect();
    assert_eq!(parts(&s), (expected, inner_shape.to_vec()), "{value}");
}

#[test]
fn from_tensor() {
    check_from_tensor(json!("x"), &[], &[]);
    check_from_tensor(json!(["a", "b", "c"]), &[], &[3]);
    check_from_tensor(json!([["a", "b", "c"], ["d", "e", "f"]]), &[], &[2, 3]);
    check_from_tensor(json!([[["a", "b", "c"], ["d", "e", "f"]]]), &[], &[1, 2, 3]);
    check_from_tensor(json!([["a", "b", "c"], ["d", "e"]]), &[&[0, 3, 5]], &[5]);
    check_from_tensor(json!([[10, 20], [30]]), &[&[0, 2, 3]], &[3]);
    // docstring examples
    check_from_tensor(json!([[1, 2, 3], [4, 5, 6]]), &[], &[2, 3]);
    check_from_tensor(json!([[1, 2], [], [3, 4, 5]]), &[&[0, 2, 2, 5]], &[5]);
    check_from_tensor(
        json!([[[1, 2], [3]], [[4, 5]]]),
        &[&[0, 2, 3], &[0, 2, 3, 5]],
        &[5],
    );
    // ragged_rank=1 over dense inner dimensions: the inner dimensions stay dense
    check_from_tensor(
        json!([[[[1], [2]], [[3], [4]]], [[[5], [6]]]]),
        &[&[0, 2, 3]],
        &[3, 2, 1],
    );
    check_from_tensor(json!([[[1, 2], [3, 4]], [[5, 6]]]), &[&[0, 2, 3]], &[3, 2]);
}

#[test]
fn from_tensor_2() {
    let rt = json!([
        [[[7, 4], [5, 6]], [[1, 2], [3, 7]]],
        [[[7, 4], [5, 6]]],
        [[[1, 2], [3, 7]]]
    ]);
    let actual = Array::from_json(&rt).unwrap().dynamic_shape();
    assert_shape_eq(
        &actual.with_num_row_partitions(3).unwrap(),
        &shape_n(json!([3, [2, 1, 1], 2, 2]), 3),
    );
    assert_shape_eq(&actual, &shape(json!([3, [2, 1, 1], 2, 2])));
}

// ---- from_lengths ----------------------------------------------------------------------

#[track_caller]
fn check_from_lengths(
    l: Value,
    num_row_partitions: Option<usize>,
    row_lengths: &[&[i32]],
    inner_shape: &[usize],
) {
    let s = DynamicRaggedShape::from_lengths(&lengths(l.clone()), num_row_partitions).unwrap();
    let expected: Vec<Vec<i32>> = row_lengths
        .iter()
        .map(|r| {
            let mut splits = vec![0];
            for &x in *r {
                splits.push(splits.last().unwrap() + x);
            }
            splits
        })
        .collect();
    assert_eq!(parts(&s), (expected, inner_shape.to_vec()), "{l}");
}

#[test]
fn from_lengths() {
    check_from_lengths(json!([]), None, &[], &[]);
    check_from_lengths(json!([2, [3, 2]]), None, &[&[3, 2]], &[5]);
    check_from_lengths(json!([2, 2]), None, &[], &[2, 2]);
    check_from_lengths(json!([2, [3, 2], 7]), None, &[&[3, 2]], &[5, 7]);
    check_from_lengths(json!([2, [2, 2], 3]), None, &[&[2, 2]], &[4, 3]);
    check_from_lengths(json!([2, 2, 3]), None, &[], &[2, 2, 3]);
    check_from_lengths(
        json!([2, [2, 1], [2, 0, 3]]),
        None,
        &[&[2, 1], &[2, 0, 3]],
        &[5],
    );
    // with num_row_partitions
    check_from_lengths(json!([2, [3, 2], 2]), Some(2), &[&[3, 2], &[2; 5]], &[10]);
    check_from_lengths(json!([2, 2]), Some(1), &[&[2, 2]], &[4]);
    check_from_lengths(json!([2, 2, 3]), Some(0), &[], &[2, 2, 3]);
    check_from_lengths(json!([2, 2, 3]), Some(1), &[&[2, 2]], &[4, 3]);
    check_from_lengths(json!([2, 2, 3]), Some(2), &[&[2, 2], &[3; 4]], &[12]);
}

#[track_caller]
fn check_from_lengths_err(l: Value, num_row_partitions: Option<usize>, message: &str) {
    let e = DynamicRaggedShape::from_lengths(&lengths(l), num_row_partitions).unwrap_err();
    assert!(e.to_string().starts_with(message), "{e}");
}

#[test]
fn from_lengths_errors() {
    check_from_lengths_err(json!([2, [2, 1, 3]]), Some(1), "Shape not consistent");
    check_from_lengths_err(
        json!([2, 3]),
        Some(2),
        "num_row_partitions should be less than",
    );
    check_from_lengths_err(
        json!([]),
        Some(3),
        "num_row_partitions==0 for a scalar shape",
    );
    // (TensorFlow's type errors, a string for a length and so on, cannot be written here)
    check_from_lengths_err(
        json!([[5, 3], 3]),
        Some(0),
        "the first length is the number of rows",
    );
    check_from_lengths_err(json!([2, [1, 2], 3]), Some(0), "dimension 1 is ragged");
}

#[test]
fn from_row_partitions() {
    let rps = shape_n(json!([3, [1, 4, 2]]), 1).row_partitions().to_vec();
    let actual = DynamicRaggedShape::from_row_partitions(rps).unwrap();
    assert_shape_eq(&actual, &shape_n(json!([3, [1, 4, 2]]), 1));
    let rps = shape_n(json!([3, [1, 4, 2], 2]), 2)
        .row_partitions()
        .to_vec();
    let actual = DynamicRaggedShape::from_row_partitions(rps).unwrap();
    assert_shape_eq(&actual, &shape_n(json!([3, [1, 4, 2], 2]), 2));
    let e = DynamicRaggedShape::from_row_partitions(Vec::new()).unwrap_err();
    assert_eq!(e.to_string(), "row_partitions cannot be empty");
}

#[test]
fn constructor_checks() {
    use structured_tensor::RowPartition;
    // nvals and nrows don't match (3 != 6)
    let e = DynamicRaggedShape::try_new(
        vec![
            RowPartition::from_value_rowids(vec![0, 2, 4], 5).unwrap(),
            RowPartition::from_value_rowids(vec![0, 2, 5], 6).unwrap(),
        ],
        vec![3],
    )
    .unwrap_err();
    assert!(matches!(
        e,
        Error::ShapeMisaligned {
            axis: 1,
            expected: 3,
            got: 6
        }
    ));
    assert!(e
        .to_string()
        .starts_with("RowPartitions in DynamicRaggedShape do not align between 0 and 1"));
    // nvals and inner_shape[0] don't match (3 != 6)
    let e = DynamicRaggedShape::try_new(
        vec![RowPartition::from_value_rowids(vec![0, 2, 4], 5).unwrap()],
        vec![6],
    )
    .unwrap_err();
    assert!(e
        .to_string()
        .starts_with("Last row partition does not match inner_shape."));
    // the static OK case
    let s = DynamicRaggedShape::new(
        vec![
            RowPartition::from_value_rowids(vec![0, 2, 4], 5).unwrap(),
            RowPartition::from_value_rowids(vec![0, 1, 2], 3).unwrap(),
        ],
        vec![3],
    );
    assert_eq!(s.inner_shape(), &[3]);
    assert_eq!(s.row_partitions()[0].value_rowids(), &[0, 2, 4]);
    assert_eq!(s.row_partitions()[1].value_rowids(), &[0, 1, 2]);
}

#[test]
#[should_panic(
    expected = "DynamicRaggedShape::new: Last row partition does not match inner_shape."
)]
fn new_panics_where_try_new_refuses() {
    use structured_tensor::RowPartition;
    let _ = DynamicRaggedShape::new(
        vec![RowPartition::from_value_rowids(vec![0, 2, 4], 5).unwrap()],
        vec![6],
    );
}

// ---- queries ---------------------------------------------------------------------------

#[test]
fn num_slices_in_dimension() {
    for (l, axis, expected) in [
        (json!([2, 3]), 0, 2),
        (json!([2, 3]), 1, 6),
        (json!([2, 3]), -1, 6),
        (json!([2, 3]), -2, 2),
        (json!([2, 3, 4]), 0, 2),
        (json!([2, 3, 4]), 1, 6),
        (json!([2, 3, 4]), 2, 24),
        (json!([2, 3, 4]), -1, 24),
        (json!([2, 3, 4]), -2, 6),
        (json!([2, 3, 4]), -3, 2),
        (json!([2, [2, 3], 7]), 0, 2),
        (json!([2, [2, 3], 7]), 1, 5),
        (json!([2, [2, 3], 7]), 2, 35),
        (json!([2, [2, 3], 7]), -1, 35),
        (json!([2, [2, 3], 7]), -2, 5),
        (json!([2, [2, 3], 7]), -3, 2),
    ] {
        assert_eq!(
            shape(l.clone()).num_slices_in_dimension(axis).unwrap(),
            expected,
            "{l} {axis}"
        );
    }
}

#[test]
fn get_item() {
    for (l, nrp, axis, expected) in [
        (json!([2, [2, 3], 7, 4]), 2, -2, 7),
        (json!([2, [2, 3], 7, 4]), 2, 0, 2),
        (json!([2, [2, 3], 7, 4]), 2, 2, 7),
        (json!([2, [2, 3], 7, 4]), 2, 3, 4),
        (json!([2, [2, 3], 7, 4, 3]), 2, 4, 3),
        (json!([3]), 0, 0, 3),
        (json!([3, 4, 5]), 0, 0, 3),
        (json!([3, 4, 5]), 0, 1, 4),
        (json!([3, 4, 5]), 0, 2, 5),
    ] {
        assert_eq!(
            shape_n(l.clone(), nrp).dimension(axis).unwrap(),
            expected,
            "{l} {axis}"
        );
    }
}

#[test]
fn get_item_errors() {
    let e = shape(json!([2, [1, 2], 3, 4])).dimension(1).unwrap_err();
    assert_eq!(e, Error::ShapeNotUniform { index: 1 });
    assert_eq!(e.to_string(), "Index 1 is not uniform");
    let e = shape_n(json!([2, 3, 3, 4]), 1).dimension(-20).unwrap_err();
    assert!(
        e.to_string().starts_with("Index must be non-negative"),
        "{e}"
    );
    let e = shape_n(json!([2, 3, 3, 4]), 1).dimension(9).unwrap_err();
    assert_eq!(e.to_string(), "Index is too big: 9>=4");
}

#[test]
fn num_elements() {
    assert_eq!(shape_n(json!([2, 3, 4, 5]), 2).num_elements(), 120);
    assert_eq!(shape(json!([])).num_elements(), 1);
}

#[test]
fn is_uniform() {
    assert!(shape(json!([2, 3])).is_uniform(0).unwrap());
    assert!(shape(json!([2, 3])).is_uniform(1).unwrap());
    for axis in [0, 2, 3] {
        assert!(shape_n(json!([2, [2, 3], 7, 4]), 2)
            .is_uniform(axis)
            .unwrap());
    }
    assert!(!shape_n(json!([2, [2, 3], 7, 4]), 2).is_uniform(1).unwrap());
    let ragged = json!([2, [2, 3], 2, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 4]);
    assert!(!shape_n(ragged, 3).is_uniform(3).unwrap());
    let s = shape_n(json!([2, [2, 3], 7, 4]), 2);
    assert_eq!(
        s.is_uniform(10).unwrap_err().to_string(),
        "Expected axis=10 < rank=4"
    );
    assert!(s
        .is_uniform(-1)
        .unwrap_err()
        .to_string()
        .starts_with("Negative axis values are not supported"));
}

#[test]
fn static_lengths_and_display() {
    let s = shape(json!([2, [3, 2], 7]));
    assert_eq!(
        s.static_lengths(),
        vec![
            Length::Uniform(2),
            Length::Ragged(vec![3, 2]),
            Length::Uniform(7)
        ]
    );
    assert_eq!(s.shape(), vec![Some(2), None, Some(7)]);
    assert_eq!(
        s.to_string(),
        "<DynamicRaggedShape lengths=[2, (3, 2), 7] num_row_partitions=1>"
    );
    assert_eq!(s.rank(), 3);
    assert_eq!(s.inner_rank(), 2);
    assert_eq!(s.dtype(), DType::I32);
}

// ---- changing the number of row partitions ---------------------------------------------

#[test]
fn with_num_row_partitions_round_trips() {
    for (l, a, b) in [
        (json!([2, 3]), 0, 1),
        (json!([2, [2, 3], 7, 4]), 2, 1),
        (json!([3, [2, 0, 1], 5]), 1, 2),
    ] {
        let s = shape(l.clone());
        let sa = s.with_num_row_partitions(a).unwrap();
        assert_eq!(sa.num_row_partitions(), a);
        let sb = sa.with_num_row_partitions(b).unwrap();
        assert_eq!(sb.num_row_partitions(), b);
        assert_shape_eq(
            &sb.with_num_row_partitions(s.num_row_partitions()).unwrap(),
            &s,
        );
    }
    // testWithNumRowPartitionsDynamic, with the inner shape known
    let s = DynamicRaggedShape::new(
        shape(json!([2, [1, 3], [2, 3, 4, 5]]))
            .row_partitions()
            .to_vec(),
        vec![14, 2, 3],
    );
    let wider = s.with_num_row_partitions(3).unwrap();
    assert_eq!(wider.inner_shape(), &[28, 3]);
    assert_eq!(wider.row_partitions()[2].uniform_row_length(), Some(2));
    assert_eq!(wider.row_partitions()[2].nrows(), 14);
}

#[test]
fn with_num_row_partitions_errors() {
    let e = shape(json!([2, [1, 2]]))
        .with_num_row_partitions(2)
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("num_row_partitions must be less than rank"),
        "{e}"
    );
    // _alt_inner_shape over a ragged dimension
    let e = shape(json!([2, [1, 2], 4]))
        .with_num_row_partitions(0)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot get an inner shape over a ragged dimension"
    );
    let e = shape(json!([2])).with_inner_rank(2).unwrap_err();
    assert!(
        e.to_string().starts_with("Cannot change inner_rank if"),
        "{e}"
    );
}

#[test]
fn with_inner_rank() {
    for (l, inner_rank) in [
        (json!([3, [1, 4, 2]]), 1),
        (json!([3, [1, 4, 2], 5]), 2),
        (json!([3]), 1),
    ] {
        let s = shape(l.clone()).with_inner_rank(inner_rank).unwrap();
        assert_eq!(s.inner_rank(), inner_rank);
        assert_eq!(s.static_lengths(), lengths(l));
    }
    // testAltInnerShape: [2, (1, 2), 4] with an inner rank of 2 has inner shape [3, 4]
    let s = shape_n(json!([2, [1, 2], 4]), 2)
        .with_inner_rank(2)
        .unwrap();
    assert_eq!(s.inner_shape(), &[3, 4]);
}

#[test]
fn as_row_partitions() {
    assert_eq!(
        shape(json!([3, [2, 0, 1], 5]))
            .as_row_partitions()
            .unwrap()
            .len(),
        2
    );
    let e = shape(json!([])).as_row_partitions().unwrap_err();
    assert_eq!(e.to_string(), "rank must be >= 1 for _as_row_partitions");
}

// ---- slicing ---------------------------------------------------------------------------

#[test]
fn get_item_slice() {
    for (l, nrp, start, stop, expected) in [
        (json!([2, 3]), None, Some(-1000), Some(100), json!([2, 3])),
        (json!([2, 3]), None, Some(0), Some(100), json!([2, 3])),
        (json!([2, 3]), None, Some(0), None, json!([2, 3])),
        (
            json!([2, [1, 2], 3, 4]),
            None,
            None,
            Some(3),
            json!([2, [1, 2], 3]),
        ),
        (
            json!([2, 3, 3, 4]),
            Some(1),
            Some(1),
            Some(4),
            json!([3, 3, 4]),
        ),
        (
            json!([2, 3, 3, 4]),
            Some(1),
            Some(1),
            Some(3),
            json!([3, 3]),
        ),
        (
            json!([2, 3, 4, 3, 4]),
            Some(2),
            Some(1),
            Some(3),
            json!([3, 4]),
        ),
        (
            json!([2, [1, 2], 3, 4]),
            None,
            Some(0),
            Some(3),
            json!([2, [1, 2], 3]),
        ),
        (json!([2, 3, 4]), None, Some(0), Some(2), json!([2, 3])),
        (
            json!([2, [1, 2], [3, 4, 5]]),
            None,
            Some(0),
            Some(2),
            json!([2, [1, 2]]),
        ),
        (
            json!([2, [1, 2], [3, 4, 5]]),
            None,
            Some(0),
            Some(1),
            json!([2]),
        ),
        (json!([2, 3]), None, Some(2), Some(0), json!([])),
        (json!([2, 3]), None, Some(0), Some(2), json!([2, 3])),
    ] {
        let s = match nrp {
            Some(n) => shape_n(l.clone(), n),
            None => shape(l.clone()),
        };
        assert_shape_eq(&s.slice(start, stop).unwrap(), &shape(expected));
    }
    let e = shape(json!([2, [1, 2], 3]))
        .slice(Some(1), None)
        .unwrap_err();
    assert_eq!(e.to_string(), "All relevant dimensions must be uniform");
}

// ---- broadcast_to ----------------------------------------------------------------------

/// The naive model of `broadcast_to` on nested JSON lists: `x` (rank `r`) repeated to the
/// target's lengths, dimension by dimension, aligned on the last dimension.
fn model_broadcast(x: &Value, target: &[Length], rank_x: usize) -> Value {
    fn go(x: &Value, target: &[Length], depth: usize, pad: usize, pos: &mut Vec<usize>) -> Value {
        if depth == target.len() {
            return x.clone();
        }
        // the length of this target row: uniform, or the row lengths at the flat position
        let flat = flat_position(target, depth, pos);
        let len = match &target[depth] {
            Length::Uniform(n) => *n,
            Length::Ragged(v) => v[flat],
        };
        let mut out = Vec::with_capacity(len);
        for k in 0..len {
            let sub = if depth < pad {
                x
            } else {
                let items = x.as_array().unwrap();
                if items.len() == 1 {
                    &items[0]
                } else {
                    &items[k]
                }
            };
            pos.push(k);
            out.push(go(sub, target, depth + 1, pad, pos));
            pos.pop();
        }
        Value::Array(out)
    }
    /// The flattened index of the position `pos` (one index per dimension before `depth`).
    fn flat_position(target: &[Length], depth: usize, pos: &[usize]) -> usize {
        let mut flat = 0usize;
        for d in 0..depth {
            // rows of dimension d before the current one: the elements of all earlier rows
            let before: usize = match &target[d] {
                Length::Uniform(n) => flat * n,
                Length::Ragged(v) => v[..flat].iter().sum(),
            };
            flat = before + pos[d];
        }
        flat
    }
    let pad = target.len() - rank_x;
    go(x, target, 0, pad, &mut Vec::new())
}

#[track_caller]
fn check_broadcast_to(origin: Array, target: &DynamicRaggedShape) {
    let out = origin.broadcast_to(target).unwrap();
    assert_shape_eq(
        &out.dynamic_shape()
            .with_num_row_partitions(target.num_row_partitions())
            .unwrap(),
        target,
    );
    let expected = model_broadcast(&origin.to_json(), &target.static_lengths(), origin.rank());
    assert_eq!(out.to_json(), expected, "{target}");
}

#[test]
fn broadcast_tensor_to() {
    let x = Array::from_json(&json!("x")).unwrap();
    check_broadcast_to(x.clone(), &shape(json!([2, [1, 2]])));
    assert_eq!(
        x.broadcast_to(&shape(json!([2, [1, 2]])))
            .unwrap()
            .to_json(),
        json!([["x"], ["x", "x"]])
    );
    check_broadcast_to(x.clone(), &shape_n(json!([1, 1, 1]), 2));
    let abc = Array::from_json(&json!(["a", "b", "c"])).unwrap();
    check_broadcast_to(abc.clone(), &shape(json!([3])));
    check_broadcast_to(abc.clone(), &shape_n(json!([1, 1, 3]), 2));
    let two_by_three = Array::from_json(&json!([["a", "b", "c"], ["d", "e", "f"]])).unwrap();
    check_broadcast_to(two_by_three, &shape_n(json!([1, 2, 3]), 2));
    // scalar to scalar
    assert_eq!(x.broadcast_to(&shape(json!([]))).unwrap(), x);
    // testBroadcastToAlt: uniform row length 1 to 2
    let origin = Array::dense(&[3, 1], Values::I64(vec![3, 4, 5].into())).unwrap();
    let out = origin.broadcast_to(&shape_n(json!([3, 2]), 1)).unwrap();
    assert_eq!(out.to_json(), json!([[3, 3], [4, 4], [5, 5]]));
}

#[test]
fn broadcast_ragged_to() {
    for (origin, target) in [
        (json!([3]), json!([2, 3])),
        (json!([3, [3, 2, 4]]), json!([3, [3, 2, 4]])),
        (json!([3, [3, 2, 4]]), json!([1, 3, [3, 2, 4]])),
        (json!([3, [3, 2, 4]]), json!([1, 1, 3, [3, 2, 4]])),
        (json!([1, 2, [1, 2]]), json!([2, 2, [1, 2, 1, 2]])),
        (json!([2, 1, [1, 2]]), json!([2, 2, [1, 1, 2, 2]])),
        (json!([2, 1, 1]), json!([2, 1, [3, 3]])),
        (json!([3]), json!([4, 2, 3])),
        (json!([2, 3]), json!([4, 2, 3])),
        (
            json!([3, [1, 2, 1], 2, 2]),
            json!([1, 1, 3, [1, 2, 1], 2, 2]),
        ),
    ] {
        check_broadcast_to(counting(origin), &shape(target));
    }
    // [2, 1, (1, 2)] -> [2, 2, (1, 1, 2, 2)], values as TensorFlow's test writes them
    let origin = array_of(
        &shape(json!([2, 1, [1, 2]])),
        Values::I64(vec![2, 3, 5].into()),
    );
    let out = origin
        .broadcast_to(&shape(json!([2, 2, [1, 1, 2, 2]])))
        .unwrap();
    assert_eq!(out.to_json(), json!([[[2], [2]], [[3, 5], [3, 5]]]));
}

#[test]
fn broadcast_dimension() {
    for (origin, target) in [
        (json!([1, 4, 5]), json!([3, 4, 5])),
        (json!([3, 4, 1]), json!([3, 4, 5])),
        (json!([3, [3, 2, 8], 1]), json!([3, [3, 2, 8], 5])),
        (
            json!([2, [2, 1], [3, 2, 8], 3, 4, 1]),
            json!([2, [2, 1], [3, 2, 8], 3, 4, 5]),
        ),
        (json!([3, 1]), json!([3, [2, 0, 1]])),
        (json!([3, 1, 5]), json!([3, [2, 0, 1], 5])),
        (
            json!([4, 3, 1]),
            json!([4, 3, [2, 0, 1, 3, 8, 2, 3, 4, 1, 8, 7, 0]]),
        ),
        (json!([2, [2, 1], 1]), json!([2, [2, 1], [2, 5, 3]])),
        (
            json!([2, [2, 1], 3, 2, 1, 8]),
            json!([
                2,
                [2, 1],
                3,
                2,
                [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17],
                8
            ]),
        ),
        (json!([1, [5]]), json!([3, [5, 5, 5]])),
        (json!([1, 3, [3, 0, 2]]), json!([2, 3, [3, 0, 2, 3, 0, 2]])),
        (
            json!([1, [3], [3, 5, 2], 9, 4, 5]),
            json!([3, [3, 3, 3], [3, 5, 2, 3, 5, 2, 3, 5, 2], 9, 4, 5]),
        ),
        (
            json!([1, 2, [2, 1], [3, 5, 2], 2]),
            json!([2, 2, [2, 1, 2, 1], [3, 5, 2, 3, 5, 2], 2]),
        ),
        (
            json!([3, 1, [4, 0, 2], 5]),
            json!([3, 2, [4, 4, 0, 0, 2, 2], 5]),
        ),
        (
            json!([2, 3, [1, 2, 3, 4, 5, 6]]),
            json!([2, 3, [1, 2, 3, 4, 5, 6]]),
        ),
        (
            json!([3, 1, [3, 1, 2], 5]),
            json!([3, [4, 1, 2], [3, 3, 3, 3, 1, 2, 2], 5]),
        ),
        (
            json!([3, 1, [3, 1, 2], [3, 1, 4, 1, 5, 9]]),
            json!([
                3,
                [2, 0, 3],
                [3, 3, 2, 2, 2],
                [3, 1, 4, 3, 1, 4, 5, 9, 5, 9, 5, 9]
            ]),
        ),
        (
            json!([3, [2, 0, 1], 1, [3, 2, 1], [1, 0, 1, 0, 2, 3], 5]),
            json!([
                3,
                [2, 0, 1],
                [4, 1, 2],
                [3, 3, 3, 3, 2, 1, 1],
                [1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 2, 3, 3],
                5
            ]),
        ),
        (json!([1, 1, 2, [2, 1]]), json!([2, 1, 2, [2, 1, 2, 1]])),
        (
            json!([2, 1, 2, [2, 1, 2, 1]]),
            json!([2, [2, 1], 2, [2, 1, 2, 1, 2, 1]]),
        ),
        (
            json!([2, [2, 1], 2, [2, 1, 2, 1, 2, 1]]),
            json!([2, [2, 1], 2, [2, 1, 2, 1, 2, 1]]),
        ),
        (
            json!([2, [2, 1], 2, 1]),
            json!([2, [2, 1], 2, [2, 1, 2, 1, 2, 1]]),
        ),
    ] {
        check_broadcast_to(counting(origin), &shape(target));
    }
}

#[test]
fn broadcast_to_errors() {
    let x = counting(json!([2, 3]));
    let e = x.broadcast_to(&shape(json!([3]))).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Cannot broadcast to a shape with smaller rank"),
        "{e}"
    );
    let e = x.broadcast_to(&shape(json!([2, 4]))).unwrap_err();
    assert_eq!(
        e,
        Error::CannotBroadcast {
            axis: 1,
            position: 0,
            left: 3,
            right: 4
        }
    );
    assert!(e.to_string().starts_with("Cannot broadcast"));
    let ragged = counting(json!([2, [1, 2]]));
    let e = ragged
        .broadcast_to(&shape(json!([2, [1, 2]])).with_dtype(DType::I64).unwrap())
        .unwrap_err();
    assert!(
        e.to_string().starts_with("Cannot coerce row_splits.dtype"),
        "{e}"
    );
    // a dense value takes the target's dtype
    let out = counting(json!([1]))
        .broadcast_to(&shape(json!([2, [1, 2]])).with_dtype(DType::I64).unwrap())
        .unwrap();
    assert_eq!(out.shape_dtype(), DType::I64);
}

#[test]
fn broadcast_tensor_to_ragged_shape() {
    // testBroadcastToRaggedShape-style: a [3, 1] tensor to [3, 2] and [3, (3, 0, 2)]
    let x = Array::from_json(&json!([[10], [20], [30]])).unwrap();
    assert_eq!(
        x.broadcast_to(&shape(json!([3, 2]))).unwrap().to_json(),
        json!([[10, 10], [20, 20], [30, 30]])
    );
    assert_eq!(
        x.broadcast_to(&shape(json!([3, [3, 0, 2]])))
            .unwrap()
            .to_json(),
        json!([[10, 10, 10], [], [30, 30]])
    );
}

// ---- broadcast_dynamic_shape -----------------------------------------------------------

#[track_caller]
fn check_broadcast_shapes(a: DynamicRaggedShape, b: DynamicRaggedShape, e: DynamicRaggedShape) {
    let actual = DynamicRaggedShape::broadcast_dynamic_shape(&a, &b).unwrap();
    assert_shape_eq(&actual, &e);
    let reversed = DynamicRaggedShape::broadcast_dynamic_shape(&b, &a).unwrap();
    assert_shape_eq(&reversed, &e);
    // both sides broadcast to the result
    for side in [&a, &b] {
        let values = counting_of(side);
        let out = values.broadcast_to(&e).unwrap();
        let expected = model_broadcast(&values.to_json(), &e.static_lengths(), side.rank());
        assert_eq!(out.to_json(), expected);
    }
}

fn counting_of(s: &DynamicRaggedShape) -> Array {
    array_of(s, Values::I64((0..s.num_elements() as i64).collect()))
}

#[test]
fn broadcast_dynamic_shape_extended() {
    let cases: Vec<[(Value, Option<usize>); 3]> = vec![
        [
            (json!([3, [1, 4, 2]]), None),
            (json!([3, [1, 4, 2]]), None),
            (json!([3, [1, 4, 2]]), None),
        ],
        [
            (json!([1, 2, [1, 4]]), None),
            (json!([3, 2, [1, 4, 1, 4, 1, 4]]), None),
            (json!([3, 2, [1, 4, 1, 4, 1, 4]]), None),
        ],
        [
            (json!([1, 1]), Some(1)),
            (json!([3, 5]), Some(1)),
            (json!([3, 5]), Some(1)),
        ],
        [
            (json!([1, 4, 5]), None),
            (json!([3, 1, 1]), None),
            (json!([3, 4, 5]), None),
        ],
        [
            (json!([3]), None),
            (json!([4, 2, 1]), None),
            (json!([4, 2, 3]), None),
        ],
        [
            (json!([2, 3]), None),
            (json!([4, 2, 1]), None),
            (json!([4, 2, 3]), None),
        ],
        [
            (json!([2, [1, 3], 1]), None),
            (json!([2, [1, 3], [3, 4, 5, 6]]), None),
            (json!([2, [1, 3], [3, 4, 5, 6]]), None),
        ],
        [
            (json!([2, 1, 5]), None),
            (json!([2, [1, 3], 5]), Some(2)),
            (json!([2, [1, 3], 5]), Some(2)),
        ],
        [
            (json!([5, [1, 2, 0, 3, 1]]), None),
            (json!([1, 5, [1, 2, 0, 3, 1]]), None),
            (json!([1, 5, [1, 2, 0, 3, 1]]), None),
        ],
        [
            (json!([1, 5]), Some(1)),
            (json!([3, 5]), Some(1)),
            (json!([3, 5]), Some(1)),
        ],
        [
            (json!([1, 3, [5, 1, 6]]), None),
            (json!([2, 1, 1]), None),
            (json!([2, 3, [5, 1, 6, 5, 1, 6]]), None),
        ],
        [
            (json!([2, 1, 1]), Some(2)),
            (json!([2, [1, 3], [3, 4, 5, 6]]), None),
            (json!([2, [1, 3], [3, 4, 5, 6]]), None),
        ],
        [
            (json!([3, 1, 5]), Some(2)),
            (json!([3, 4, 5]), Some(2)),
            (json!([3, 4, 5]), Some(2)),
        ],
        [
            (json!([2, 1, 5]), Some(2)),
            (json!([2, [1, 3], 5]), Some(2)),
            (json!([2, [1, 3], 5]), Some(2)),
        ],
        [
            (json!([3, 1, 5]), Some(2)),
            (json!([2, 1]), Some(1)),
            (json!([3, 2, 5]), Some(2)),
        ],
        [
            (json!([2, [1, 2], 2, 1]), None),
            (json!([2, 1, 1, 3]), Some(1)),
            (json!([2, [1, 2], 2, 3]), None),
        ],
    ];
    for [(la, na), (lb, nb), (le, ne)] in cases {
        let with = |l: Value, n: Option<usize>| match n {
            Some(n) => shape_n(l, n),
            None => shape(l),
        };
        check_broadcast_shapes(with(la, na), with(lb, nb), with(le, ne));
    }
}

#[test]
fn broadcast_dynamic_shape() {
    for (x, y, e) in [
        (json!([]), json!([]), json!([])),
        (json!([]), json!([2]), json!([2])),
        (json!([]), json!([2, 3]), json!([2, 3])),
        (
            json!([]),
            json!([2, [2, 3], [5, 7, 2, 0, 9]]),
            json!([2, [2, 3], [5, 7, 2, 0, 9]]),
        ),
        (json!([3]), json!([4, 2, 3]), json!([4, 2, 3])),
        (json!([1]), json!([4, 2, 3]), json!([4, 2, 3])),
        (json!([3]), json!([4, 2, 1]), json!([4, 2, 3])),
        (
            json!([3]),
            json!([3, [2, 3, 1], 1]),
            json!([3, [2, 3, 1], 3]),
        ),
        (json!([1]), json!([3, [2, 1, 3]]), json!([3, [2, 1, 3]])),
        (
            json!([1]),
            json!([3, [2, 1, 3], 8]),
            json!([3, [2, 1, 3], 8]),
        ),
        (
            json!([1]),
            json!([2, [2, 3], [5, 7, 2, 0, 9]]),
            json!([2, [2, 3], [5, 7, 2, 0, 9]]),
        ),
        (
            json!([1, 3, [3, 0, 2], 1, 2]),
            json!([2, 1, 1, [7, 2], 1]),
            json!([2, 3, [3, 0, 2, 3, 0, 2], [7, 7, 7, 7, 7, 2, 2, 2, 2, 2], 2]),
        ),
        (
            json!([2, [2, 1], 2, 1]),
            json!([1, 1, 2, [2, 1]]),
            json!([2, [2, 1], 2, [2, 1, 2, 1, 2, 1]]),
        ),
    ] {
        check_broadcast_shapes(shape(x), shape(y), shape(e));
    }
}

#[test]
fn broadcast_dynamic_shape_errors_and_dtypes() {
    let e =
        DynamicRaggedShape::broadcast_dynamic_shape(&shape(json!([2, 3])), &shape(json!([2, 4])))
            .unwrap_err();
    assert_eq!(
        e,
        Error::CannotBroadcast {
            axis: 1,
            position: 0,
            left: 3,
            right: 4
        }
    );
    let e = DynamicRaggedShape::broadcast_dynamic_shape(
        &shape(json!([2, [1, 2]])),
        &shape(json!([2, [2, 1]])),
    )
    .unwrap_err();
    assert_eq!(
        e,
        Error::CannotBroadcast {
            axis: 1,
            position: 0,
            left: 1,
            right: 2
        }
    );
    // both partitioned with different dtypes
    let a = shape(json!([2, [1, 2]]));
    let b = a.with_dtype(DType::I64).unwrap();
    let e = DynamicRaggedShape::broadcast_dynamic_shape(&a, &b).unwrap_err();
    assert!(e.to_string().starts_with("Dtypes don't match"), "{e}");
    // one partitioned side gives its dtype; neither: int64 when they differ
    let dense = shape(json!([1]));
    assert_eq!(
        DynamicRaggedShape::broadcast_dynamic_shape(&dense, &b)
            .unwrap()
            .dtype(),
        DType::I64
    );
    let dense64 = dense.with_dtype(DType::I64).unwrap();
    assert_eq!(
        DynamicRaggedShape::broadcast_dynamic_shape(&dense64, &a)
            .unwrap()
            .dtype(),
        DType::I32
    );
    assert_eq!(
        DynamicRaggedShape::broadcast_dynamic_shape(&dense64, &dense)
            .unwrap()
            .dtype(),
        DType::I64
    );
    assert!(shape(json!([2])).with_dtype(DType::F32).is_err());
}

// ---- StructuredTensor ------------------------------------------------------------------

#[test]
fn structured_tensor_shapes() {
    let st = StructuredTensor::from_json(&json!([[{"a": 1}, {"a": 2}], [{"a": 3}]])).unwrap();
    let s = st.dynamic_shape();
    assert_shape_eq(&s, &shape(json!([2, [2, 1]])));
    assert!(
        s.row_partitions()[0].ptr_eq(&st.row_partitions()[0]),
        "shared"
    );
    let back = StructuredTensor::from_dynamic_shape(&s).unwrap();
    assert_eq!(back.shape(), st.shape());
    assert_eq!(back.row_partitions(), st.row_partitions());
    let dense = StructuredTensor::from_json(&json!([[{"a": 1}, {"a": 2}]])).unwrap();
    assert_shape_eq(&dense.dynamic_shape(), &shape(json!([1, 2])));
    let scalar = StructuredTensor::from_json(&json!({"a": 1})).unwrap();
    assert_eq!(scalar.dynamic_shape().rank(), 0);
    let wide = StructuredTensor::from_dynamic_shape(&s.with_dtype(DType::I64).unwrap()).unwrap();
    assert_eq!(wide.shape_dtype(), DType::I64);
    assert_eq!(wide.dynamic_shape().dtype(), DType::I64);
}
