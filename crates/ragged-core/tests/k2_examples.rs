//! Examples from k2's documentation of `ragged_ops.h`, one named test each.

use ragged_core::{
    get_transpose_reordering, Error, PadMode, PadSide, Ragged, RaggedShape, Reduced, Renumbering,
};

fn shape(text: &str) -> RaggedShape {
    text.parse().unwrap()
}

fn ragged(text: &str) -> Ragged<i32> {
    text.parse().unwrap()
}

#[track_caller]
fn check_shapes(got: &[RaggedShape], expected: &[&str]) {
    let got: Vec<String> = got.iter().map(|s| s.to_string()).collect();
    assert_eq!(got, expected);
}

#[test]
fn k2_change_sublist_size() {
    let s = shape("[ [ x x ] [ x x x ] ]");
    assert_eq!(
        s.change_sublist_size(1).unwrap().to_string(),
        "[ [ x x x ] [ x x x x ] ]"
    );
    assert_eq!(
        s.change_sublist_size(-3).unwrap_err(),
        Error::NegativeRowLength { row: 0, length: -1 }
    );
}

#[test]
fn k2_change_sublist_size_pinned() {
    let s = shape("[ [ x x ] [ ] ]");
    assert_eq!(
        s.change_sublist_size_pinned(1).unwrap().to_string(),
        "[ [ x x x ] [ ] ]"
    );
    let s = shape("[ [ x x x ] [ ] ]");
    assert_eq!(
        s.change_sublist_size_pinned(-2).unwrap().to_string(),
        "[ [ x ] [ ] ]"
    );
}

#[test]
fn k2_unstack_shape_axis0() {
    let s = shape("[ [ [ x x ] [ x ] ] [ [ x ] ] ]");
    let (out, maps) = s.unstack(0, true).unwrap();
    check_shapes(&out, &["[ [ x x ] [ x ] ]", "[ [ x ] ]"]);
    assert_eq!(maps, vec![vec![0, 1, 2], vec![3]]);
}

#[test]
fn k2_unstack_ragged_axis1_pad_right() {
    let r = ragged("[ [ [ 1 2 ] [ 3 ] ] [ [ 4 ] ] ]");
    let (out, maps) = r.unstack(1, true).unwrap();
    let texts: Vec<String> = out.iter().map(|o| o.to_string()).collect();
    assert_eq!(texts, vec!["[ [ 1 2 ] [ 4 ] ]", "[ [ 3 ] [ ] ]"]);
    assert_eq!(maps, vec![vec![0, 1, 3], vec![2]]);
}

#[test]
fn k2_unstack_ragged_axis2() {
    let r = ragged("[ [ [ 1 2 ] [ 3 ] ] [ [ 4 ] ] ]");
    let (out, maps) = r.unstack(2, true).unwrap();
    let texts: Vec<String> = out.iter().map(|o| o.to_string()).collect();
    assert_eq!(texts, vec!["[ [ 1 3 ] [ 4 ] ]", "[ [ 2 ] [ ] ]"]);
    assert_eq!(maps, vec![vec![0, 2, 3], vec![1]]);
}

#[test]
fn k2_unstack_ragged_axis1_pad_left() {
    let r = ragged("[ [ [ 1 2 ] [ 3 ] ] [ [ 4 ] ] ]");
    let (out, maps) = r.unstack(1, false).unwrap();
    let texts: Vec<String> = out.iter().map(|o| o.to_string()).collect();
    assert_eq!(texts, vec!["[ [ 1 2 ] [ ] ]", "[ [ 3 ] [ 4 ] ]"]);
    assert_eq!(maps, vec![vec![0, 1], vec![2, 3]]);
}

#[test]
fn k2_unstack_two_axes_adds_a_trivial_axis() {
    let r = ragged("[ [ 1 2 ] [ 3 ] ]");
    let (out, _) = r.unstack(1, true).unwrap();
    let texts: Vec<String> = out.iter().map(|o| o.to_string()).collect();
    assert_eq!(texts, vec!["[ [ 1 3 ] ]", "[ [ 2 ] ]"]);
    let (out, _) = r.unstack(0, true).unwrap();
    let texts: Vec<String> = out.iter().map(|o| o.to_string()).collect();
    assert_eq!(texts, vec!["[ [ 1 2 ] ]", "[ [ 3 ] ]"]);
}

#[test]
fn k2_index_ragged_by_ragged() {
    let src = ragged("[ [ 10 11 ] [ 12 13 ] ]");
    let idx = ragged("[ [ 0 1 ] ]");
    assert_eq!(
        src.index_ragged(&idx, true).unwrap().to_string(),
        "[ [ 10 11 12 13 ] ]"
    );
    assert_eq!(
        src.index_ragged(&idx, false).unwrap().to_string(),
        "[ [ [ 10 11 ] [ 12 13 ] ] ]"
    );
}

#[test]
fn k2_index_axis0_with_minus_one_gives_an_empty_list() {
    let src = ragged("[ [ 1 2 ] [ 3 ] [ 4 5 6 ] ]");
    let (out, new2old) = src.index_axis_with_map(0, &[2, -1, 0, 2]).unwrap();
    assert_eq!(src.index_axis(0, &[2, -1, 0, 2]).unwrap(), out);
    assert!(matches!(
        src.index_axis(0, &[0, 3]),
        Err(ragged_core::Error::IndexOutOfRange {
            position: 1,
            index: 3,
            size: 3,
            ..
        })
    ));
    assert_eq!(out.to_string(), "[ [ 4 5 6 ] [ ] [ 1 2 ] [ 4 5 6 ] ]");
    assert_eq!(new2old, vec![3, 4, 5, 0, 1, 3, 4, 5]);
}

#[test]
fn k2_index_inner_axis_keeps_outer_order() {
    let src = ragged("[ [ [ 1 ] [ 2 3 ] ] [ [ 4 ] [ ] [ 5 ] ] ]");
    let (out, new2old) = src.index_axis_with_map(1, &[1, 1, 2, 4]).unwrap();
    assert_eq!(out.to_string(), "[ [ [ 2 3 ] [ 2 3 ] ] [ [ 4 ] [ 5 ] ] ]");
    assert_eq!(new2old, vec![1, 2, 1, 2, 3, 4]);
    assert_eq!(
        src.index_axis(1, &[2, 0]).unwrap_err(),
        Error::DecreasingRowIds {
            position: 1,
            previous: 1,
            value: 0
        }
    );
}

#[test]
fn k2_covering_shape_forward_map() {
    let src = shape("[ [ x x ] [ x ] ]");
    let other = shape("[ [ x ] [ x ] ]");
    let covering = RaggedShape::covering_shape(&[&src, &other]).unwrap();
    assert_eq!(covering.to_string(), "[ [ x x ] [ x ] ]");
    let covering = shape("[ [ x x x ] [ x ] ]");
    assert_eq!(
        src.covering_shape_forward_map(&covering).unwrap(),
        vec![0, 1, -1, 2]
    );
}

#[test]
fn k2_remove_axis_merges_lists() {
    let s = shape("[ [ [ x x ] [ x ] ] [ [ x ] [ ] [ x x ] ] ]");
    assert_eq!(
        s.remove_axis(1).unwrap().to_string(),
        "[ [ x x x ] [ x x x ] ]"
    );
    assert_eq!(
        s.remove_axis(0).unwrap().to_string(),
        "[ [ x x ] [ x ] [ x ] [ ] [ x x ] ]"
    );
    assert_eq!(
        s.remove_axis(2).unwrap().to_string(),
        "[ [ x x ] [ x x x ] ]"
    );
    assert_eq!(
        shape("[ [ x ] ]").remove_axis(0).unwrap_err(),
        Error::TooFewAxes { got: 1, min: 2 }
    );
}

#[test]
fn k2_unsqueeze() {
    let s = shape("[ [ x x ] [ x ] ]");
    assert_eq!(s.unsqueeze(0).unwrap().to_string(), "[ [ [ x x ] [ x ] ] ]");
    assert_eq!(
        s.unsqueeze(1).unwrap().to_string(),
        "[ [ [ x x ] ] [ [ x ] ] ]"
    );
    assert_eq!(
        s.unsqueeze(2).unwrap().to_string(),
        "[ [ [ x ] [ x ] ] [ [ x ] ] ]"
    );
    assert_eq!(
        s.unsqueeze(3).unwrap_err(),
        Error::AxisOutOfRange {
            axis: 3,
            min: 0,
            end: 3
        }
    );
}

#[test]
fn k2_transpose() {
    let r = ragged("[ [ [ 1 ] [ 2 3 ] ] [ [ ] [ 4 ] ] [ [ 5 6 ] [ 7 ] ] ]");
    let (t, new2old) = r.transpose().unwrap();
    assert_eq!(
        t.to_string(),
        "[ [ [ 1 ] [ ] [ 5 6 ] ] [ [ 2 3 ] [ 4 ] [ 7 ] ] ]"
    );
    assert_eq!(new2old, vec![0, 4, 5, 1, 2, 3, 6]);
    assert_eq!(
        ragged("[ [ [ 1 ] ] [ ] ]").transpose().unwrap_err(),
        Error::NotRegular {
            axis: 1,
            row: 1,
            expected: 1,
            got: 0
        }
    );
    let padded = shape("[ [ [ x ] ] [ ] ]").make_transposable().unwrap();
    assert_eq!(padded.to_string(), "[ [ [ x ] ] [ [ ] ] ]");
}

#[test]
fn k2_get_transpose_reordering() {
    let r = ragged("[ [ 3 1 ] [ 0 1 ] [ 3 ] ]");
    let order = get_transpose_reordering(&r, 4).unwrap();
    assert_eq!(order, vec![2, 1, 3, 0, 4]);
    assert_eq!(
        get_transpose_reordering(&r, 3).unwrap_err(),
        Error::IndexOutOfRange {
            what: "get_transpose_reordering column",
            position: 0,
            index: 3,
            size: 3
        }
    );
}

#[test]
fn k2_subset_and_remove_empty_lists() {
    let s = shape("[ [ [ x ] [ ] ] [ ] [ [ ] [ x x ] ] ]");
    let (out, renumbering) = s.remove_empty_lists(1).unwrap();
    assert_eq!(out.to_string(), "[ [ [ x ] ] [ ] [ [ x x ] ] ]");
    assert_eq!(renumbering.new2old(), &[0, 3]);
    let (out, _) = s.remove_empty_lists(0).unwrap();
    assert_eq!(out.to_string(), "[ [ [ x ] [ ] ] [ [ ] [ x x ] ] ]");
    let keep = Renumbering::from_keep(&[true, false, true]).unwrap();
    let (sub, new2old) = s.subset_ragged_shape(&keep, 2).unwrap();
    assert_eq!(sub.to_string(), "[ [ [ x ] [ ] ] [ ] [ [ ] [ x ] ] ]");
    assert_eq!(new2old, vec![0, 2]);
}

#[test]
fn k2_renumber_axis0_simple_drops_only_empty_lists() {
    let s = shape("[ [ x ] [ ] [ x x ] ]");
    let keep = Renumbering::from_keep(&[true, false, true]).unwrap();
    assert_eq!(
        s.renumber_axis0_simple(&keep).unwrap().to_string(),
        "[ [ x ] [ x x ] ]"
    );
    let bad = Renumbering::from_keep(&[false, true, true]).unwrap();
    assert_eq!(
        s.renumber_axis0_simple(&bad).unwrap_err(),
        ragged_core::Error::NonEmptyListRemoved { index: 0, size: 1 }
    );
}

#[test]
fn k2_remove_values() {
    let r = ragged("[ [ 1 -1 2 ] [ -1 ] [ 0 3 ] ]");
    assert_eq!(
        r.remove_values_eq(-1).to_string(),
        "[ [ 1 2 ] [ ] [ 0 3 ] ]"
    );
    assert_eq!(r.remove_values_leq(0).to_string(), "[ [ 1 2 ] [ ] [ 3 ] ]");
    let mask: Ragged<bool> = "[ [ true false true ] [ false ] [ false true ] ]"
        .parse()
        .unwrap();
    assert_eq!(
        r.filter_by_mask(&mask).unwrap().to_string(),
        "[ [ 1 2 ] [ ] [ 3 ] ]"
    );
}

#[test]
fn k2_add_prefix_and_suffix() {
    let r = ragged("[ [ [ 1 ] [ ] ] [ [ 2 3 ] ] ]");
    assert_eq!(
        r.add_suffix(&[7, 8, 9]).unwrap().to_string(),
        "[ [ [ 1 7 ] [ 8 ] ] [ [ 2 3 9 ] ] ]"
    );
    assert_eq!(
        r.add_prefix(&[7, 8, 9]).unwrap().to_string(),
        "[ [ [ 7 1 ] [ 8 ] ] [ [ 9 2 3 ] ] ]"
    );
    assert_eq!(
        r.add_suffix(&[1]).unwrap_err(),
        Error::SizeMismatch {
            what: "one value per last-axis sublist",
            expected: 3,
            got: 1
        }
    );
}

#[test]
fn k2_merge() {
    let a = ragged("[ [ 1 ] [ 2 3 ] ]");
    let b = ragged("[ [ 4 ] ]");
    // Order: a[0], b[0], a[1]  ->  merge_map = [0*2+0, 0*2+1, 1*2+0]
    let (m, mm) = Ragged::merge(&[&a, &b], &[0, 1, 2]).unwrap();
    assert_eq!(m.to_string(), "[ [ 1 ] [ 4 ] [ 2 3 ] ]");
    assert_eq!(mm, vec![0, 1, 2, 4]);
}

#[test]
fn k2_prefix_and_arange() {
    let s = shape("[ [ [ x ] [ x x ] ] [ [ x ] ] [ [ ] ] ]");
    let p = s.prefix(2);
    assert_eq!(p.to_string(), "[ [ [ x ] [ x x ] ] [ [ x ] ] ]");
    assert!(p.layers()[0].shares_storage_with(&s.layers()[0]));
    let (a, range) = s.arange(1, 1, 3).unwrap();
    assert_eq!(a.to_string(), "[ [ x x ] [ x ] ]");
    assert_eq!(range, 1..4);
    let (i, range) = s.index(0, 1);
    assert_eq!((i.to_string(), range), ("[ [ x ] ]".to_string(), 3..4));
}

#[test]
fn k2_pad_constant_and_replicate() {
    let r = ragged("[ [ 1 2 ] [ ] [ 3 ] ]");
    let dense = r.pad(PadMode::Constant, PadSide::Right, -1).unwrap();
    assert_eq!(dense, ndarray::arr2(&[[1, 2], [-1, -1], [3, -1]]));
    let dense = r.pad(PadMode::Replicate, PadSide::Right, -1).unwrap();
    assert_eq!(dense, ndarray::arr2(&[[1, 2], [-1, -1], [3, 3]]));
    let dense = r.pad(PadMode::Replicate, PadSide::Left, 0).unwrap();
    assert_eq!(dense, ndarray::arr2(&[[1, 2], [0, 0], [3, 3]]));
    let back = Ragged::from_dense(dense.view(), &[2, 0, 1], PadSide::Left).unwrap();
    assert_eq!(back, r);
}

#[test]
fn k2_normalize_and_log_sum() {
    let r: Ragged<f64> = "[ [ 1 3 ] [ ] [ 2 ] ]".parse().unwrap();
    let n = r.normalize_per_sublist(false);
    assert_eq!(n.values(), &[0.25, 0.75, 1.0]);
    let l = r.normalize_per_sublist(true);
    let expected = (1f64.exp() + 3f64.exp()).ln();
    approx_eq(l.values()[0], 1.0 - expected);
    approx_eq(l.values()[2], 0.0);
    let ls = r.log_sum_per_sublist(f64::NEG_INFINITY);
    approx_eq(ls[0], expected);
    assert_eq!(ls[1], f64::NEG_INFINITY);
}

fn approx_eq(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} vs {b}");
}

#[test]
fn k2_and_or_add_per_sublist() {
    let r = ragged("[ [ 6 3 ] [ ] [ 4 ] ]");
    assert_eq!(r.and_per_sublist(-1), vec![2, -1, 4]);
    assert_eq!(r.or_per_sublist(0), vec![7, 0, 4]);
    assert_eq!(
        r.add_per_sublist(&[1, 2, 3], 10).unwrap().to_string(),
        "[ [ 16 13 ] [ ] [ 34 ] ]"
    );
}

#[test]
fn k2_segmented_sums() {
    let r = ragged("[ [ 1 2 3 ] [ ] [ 4 5 ] ]");
    assert_eq!(r.segmented_exclusive_sum(0), vec![0, 1, 3, 0, 4]);
    assert_eq!(r.segmented_inclusive_sum(0), vec![1, 3, 6, 4, 9]);
}

#[test]
fn k2_sort_sublists() {
    let mut r = ragged("[ [ 3 1 2 ] [ ] [ 5 4 ] ]");
    let order = r.sort_sublists();
    assert_eq!(r.to_string(), "[ [ 1 2 3 ] [ ] [ 4 5 ] ]");
    assert_eq!(order, vec![1, 2, 0, 4, 3]);
    r.sort_sublists_by(|a, b| b.cmp(a));
    assert_eq!(r.to_string(), "[ [ 3 2 1 ] [ ] [ 5 4 ] ]");
}

#[test]
fn sort_sublists_puts_nan_last_without_panicking() {
    // long enough for the standard sort's checks of its comparison; NaN equal to every
    // value (the old comparison) made it panic
    let mut values: Vec<f32> = (0..64).map(|i| ((i * 37) % 64) as f32).collect();
    for i in (0..64).step_by(5) {
        values[i] = f32::NAN;
    }
    let numbers: Vec<f32> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    let nans = values.len() - numbers.len();
    let shape = RaggedShape::from_row_splits(vec![vec![0, 64]]).unwrap();
    let mut r = Ragged::new(shape, values);
    r.sort_sublists();
    // the model: the numbers sorted by a plain loop, then every NaN
    let mut expected = numbers.clone();
    for i in 0..expected.len() {
        for j in i + 1..expected.len() {
            if expected[j] < expected[i] {
                expected.swap(i, j);
            }
        }
    }
    assert_eq!(&r.values()[..expected.len()], &expected[..]);
    assert_eq!(r.values()[expected.len()..].len(), nans);
    assert!(r.values()[expected.len()..].iter().all(|v| v.is_nan()));
}

#[test]
fn k2_unique_sequences_two_and_three_axes() {
    let r = ragged("[ [ 1 2 ] [ 3 ] [ 1 2 ] [ ] [ 3 ] [ 1 2 ] ]");
    let u = r.unique_sequences().unwrap();
    assert_eq!(u.unique.to_string(), "[ [ ] [ 1 2 ] [ 3 ] ]");
    assert_eq!(u.num_repeats, vec![1, 3, 2]);
    assert_eq!(u.new2old, vec![3, 0, 1]);
    let r3 = ragged("[ [ [ 1 ] [ 1 ] ] [ [ 2 ] [ 1 ] [ 2 ] ] ]");
    let u = r3.unique_sequences().unwrap();
    assert_eq!(u.unique.to_string(), "[ [ [ 1 ] ] [ [ 1 ] [ 2 ] ] ]");
    assert_eq!(u.num_repeats, vec![2, 1, 2]);
    assert_eq!(u.new2old, vec![0, 3, 2]);
}

#[test]
fn k2_compute_hash_equal_lists_equal_hashes() {
    let r = ragged("[ [ 1 2 ] [ 2 1 ] [ 1 2 ] [ ] ]");
    let h = r.compute_hash();
    assert_eq!(h[0], h[2]);
    assert_ne!(h[0], h[1]);
    assert_ne!(h[0], h[3]);
}

#[test]
fn k2_get_decreasing_size_order() {
    let s = shape("[ [ x ] [ x x x ] [ ] [ x x x ] ]");
    assert_eq!(s.get_decreasing_size_order(), vec![1, 3, 0, 2]);
}

#[test]
fn awkward_style_reductions_over_any_axis() {
    let r = ragged("[ [ 1 2 3 ] [ ] [ 4 5 ] ]");
    assert_eq!(r.sum_axis(1, 0).unwrap(), Reduced::Flat(vec![6, 0, 9]));
    // ak.sum([[1,2,3],[],[4,5]], axis=0) == [5, 7, 3]
    assert_eq!(r.sum_axis(0, 0).unwrap(), Reduced::Flat(vec![5, 7, 3]));
    let r3 = ragged("[ [ [ 1 2 ] [ 3 ] ] [ [ 4 ] ] [ ] ]");
    // axis 0: combine r3[0], r3[1], r3[2] item-wise
    match r3.sum_axis(0, 0).unwrap() {
        Reduced::Ragged(x) => assert_eq!(x.to_string(), "[ [ 5 2 ] [ 3 ] ]"),
        other => panic!("{other:?}"),
    }
    match r3.sum_axis(1, 0).unwrap() {
        Reduced::Ragged(x) => assert_eq!(x.to_string(), "[ [ 4 2 ] [ 4 ] [ ] ]"),
        other => panic!("{other:?}"),
    }
    match r3.max_axis(2, i32::MIN).unwrap() {
        Reduced::Ragged(x) => assert_eq!(x.to_string(), "[ [ 2 3 ] [ 4 ] [ ] ]"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        r3.sum_axis(3, 0).unwrap_err(),
        Error::AxisOutOfRange {
            axis: 3,
            min: 0,
            end: 3
        }
    );
}

#[test]
fn k2_get_counts_partitioned() {
    let src = ragged("[ [ 0 1 1 ] [ 4 4 3 ] [ ] ]");
    let ans_shape = shape("[ [ x x x ] [ x x ] [ x ] ]");
    let counts = ragged_core::get_counts_partitioned(&src, &ans_shape).unwrap();
    assert_eq!(counts.to_string(), "[ [ 1 2 0 ] [ 1 2 ] [ 0 ] ]");
    let bad = ragged("[ [ 3 ] [ ] [ ] ]");
    assert_eq!(
        ragged_core::get_counts_partitioned(&bad, &ans_shape).unwrap_err(),
        Error::IndexOutOfRange {
            what: "get_counts_partitioned value outside its row",
            position: 0,
            index: 3,
            size: 6
        }
    );
}

#[test]
fn k2_index_array_by_ragged_with_default() {
    let idx = ragged("[ [ 2 -1 ] [ ] [ 0 ] ]");
    let out = Ragged::from_index_or(&[10, 11, 12], &idx, 99).unwrap();
    assert_eq!(out.to_string(), "[ [ 12 99 ] [ ] [ 10 ] ]");
    assert_eq!(
        Ragged::from_index(&[10, 11, 12], &idx).unwrap_err(),
        Error::IndexOutOfRange {
            what: "from_index",
            position: 1,
            index: -1,
            size: 3
        }
    );
    assert_eq!(
        Ragged::from_index_or(&[10], &idx, 0).unwrap_err(),
        Error::IndexOutOfRange {
            what: "from_index_or",
            position: 0,
            index: 2,
            size: 1
        }
    );
}

#[test]
fn k2_reads_an_empty_outer_list_as_two_axes() {
    // k2 1.23.2, asked in Python:
    //   k2.RaggedShape('[ ]')  -> num_axes 2, dim0 0, str '[ ]'
    //   k2.RaggedShape('[]')   -> num_axes 2, dim0 0, str '[ ]'
    //   k2.RaggedTensor('[ ]') -> num_axes 2, dim0 0, shape.row_splits(1) [0], values []
    //   k2.RaggedTensor('[ 1 2 ]') -> RuntimeError (a flat list is one axis)
    for text in ["[ ]", "[]", " [ ] "] {
        let s = shape(text);
        assert_eq!((s.num_axes(), s.dim0(), s.num_elements()), (2, 0, 0));
        assert_eq!(s.row_splits(1), &[0]);
        assert_eq!(s.to_string(), "[ ]");
        let r = ragged(text);
        assert_eq!((r.num_axes(), r.dim0()), (2, 0));
        assert_eq!(r.row_splits(1), &[0]);
        assert!(r.values().is_empty());
        assert_eq!(r.to_string(), "[ ]");
        assert_eq!(r, Ragged::from_nested(Vec::<Vec<i32>>::new()).unwrap());
    }
    // an empty batch round-trips, as it does through k2
    let empty = ragged("[ [ 1 ] ]").arange(0, 0, 0).unwrap();
    assert_eq!(empty.to_string(), "[ ]");
    assert_eq!(ragged(&empty.to_string()), empty);
    assert_eq!(
        "[ 1 2 ]".parse::<Ragged<i32>>().unwrap_err(),
        Error::TooFewAxes { got: 1, min: 2 }
    );
}
