//! The rayon paths give exactly the sequential results: every parallel kernel run on the
//! same input with the threshold forced to 0 and to `usize::MAX`.

use ragged_core::{
    with_parallel_threshold, Ragged, RaggedShape, Renumbering, RowPartition, ShapeRng,
};

fn big_lengths(seed: u64, rows: usize) -> Vec<i32> {
    let mut rng = ShapeRng::new(seed);
    (0..rows)
        .map(|_| {
            if rng.range(0, 9) == 0 {
                0
            } else {
                rng.range(0, 12) as i32
            }
        })
        .collect()
}

fn big_ragged(seed: u64) -> Ragged<f64> {
    let shape = RaggedShape::from_layers(vec![RowPartition::from_row_lengths(&big_lengths(
        seed, 3_000,
    ))
    .unwrap()])
    .unwrap();
    let n1 = shape.num_elements();
    let lower = RowPartition::from_row_lengths(&big_lengths(seed + 1, n1)).unwrap();
    let shape = RaggedShape::from_layers(vec![shape.layers()[0].clone(), lower]).unwrap();
    let mut rng = ShapeRng::new(seed + 2);
    let values = (0..shape.num_elements())
        .map(|_| (rng.range(0, 1000) as f64) / 7.0 - 50.0)
        .collect();
    Ragged::new(shape, values)
}

/// Runs `f` sequentially and in parallel and checks both agree.
#[track_caller]
fn same<R: PartialEq + std::fmt::Debug>(f: impl Fn() -> R) {
    let seq = with_parallel_threshold(usize::MAX, &f);
    let par = with_parallel_threshold(0, &f);
    assert_eq!(seq, par);
}

#[test]
fn encodings_agree() {
    let lengths = big_lengths(1, 200_000);
    same(|| {
        RowPartition::from_row_lengths(&lengths)
            .unwrap()
            .row_splits()
            .to_vec()
    });
    same(|| {
        RowPartition::from_row_lengths(&lengths)
            .unwrap()
            .row_ids()
            .to_vec()
    });
    let ids = RowPartition::from_row_lengths(&lengths)
        .unwrap()
        .row_ids()
        .to_vec();
    same(|| {
        RowPartition::from_value_rowids(ids.clone(), lengths.len() + 3)
            .unwrap()
            .row_splits()
            .to_vec()
    });
    same(|| RowPartition::from_row_splits(vec![0, 5, 4]).err());
}

#[test]
fn reductions_agree() {
    let r = big_ragged(7);
    assert!(r.num_elements() > 50_000);
    same(|| r.sum_per_sublist(0.0));
    same(|| r.max_per_sublist(f64::NEG_INFINITY));
    same(|| r.min_per_sublist(f64::INFINITY));
    same(|| r.argmax_per_sublist(f64::NEG_INFINITY));
    same(|| r.log_sum_per_sublist(f64::NEG_INFINITY));
    same(|| r.normalize_per_sublist(true));
    same(|| r.segmented_exclusive_sum(0.0));
    same(|| r.map(|x| x * 2.0));
}

#[test]
fn gathers_and_filters_agree() {
    let r = big_ragged(11);
    let mut rng = ShapeRng::new(3);
    let idx: Vec<i32> = (0..100_000)
        .map(|_| rng.range(0, r.dim0() - 1) as i32)
        .collect();
    same(|| r.index_axis_with_map(0, &idx).unwrap());
    let flat = r.clone().remove_axis(1).unwrap();
    let idx2: Vec<i32> = (0..100_000)
        .map(|_| rng.range(0, flat.dim0() - 1) as i32)
        .collect();
    same(|| flat.index_axis(0, &idx2).unwrap());
    same(|| r.clone().remove_axis(1).unwrap());
    same(|| r.remove_values_leq(0.0));
    let keep: Vec<bool> = (0..r.num_elements()).map(|i| i % 3 != 0).collect();
    same(|| Renumbering::from_keep(&keep).unwrap());
    same(|| r.shape().validate());
}

/// Gathering rows of a 2-axis array (the copy-whole-rows fast path) against appending the
/// picked rows of a `Vec<Vec<_>>` model, on both paths, with `-1` (empty) picks, empty rows,
/// more rows than one parallel block, and a type whose clone allocates.
#[test]
fn row_gather_matches_the_nested_model() {
    let lengths = big_lengths(7, 9_000);
    let mut next = 0u32;
    let nested: Vec<Vec<String>> = lengths
        .iter()
        .map(|&l| {
            (0..l)
                .map(|_| {
                    next += 1;
                    format!("v{next}")
                })
                .collect()
        })
        .collect();
    let r = Ragged::from_nested(nested.clone()).unwrap();
    let mut rng = ShapeRng::new(8);
    let idx: Vec<i32> = (0..20_000)
        .map(|k| {
            if k % 11 == 0 {
                -1
            } else {
                rng.range(0, nested.len() - 1) as i32
            }
        })
        .collect();
    let expected: Vec<Vec<String>> = idx
        .iter()
        .map(|&i| {
            if i < 0 {
                vec![]
            } else {
                nested[i as usize].clone()
            }
        })
        .collect();
    for threshold in [0, usize::MAX] {
        let got = with_parallel_threshold(threshold, || r.index_axis(0, &idx).unwrap());
        assert_eq!(got.to_vec_vec(), expected, "threshold {threshold}");
        got.shape().validate().unwrap();
    }
    assert_eq!(r.index_axis(0, &[]).unwrap().num_elements(), 0);
}
