//! More property tests against the naive `Vec<Vec<..>>` model: the operations not covered
//! in `model.rs`.

use proptest::prelude::*;
use ragged_core::with_parallel_threshold;
use ragged_core::{
    compose_ragged_shapes, decompose_ragged_shape, ragged_shape3, Error, PadMode, PadSide, Ragged,
    RaggedShape, Reduced, Renumbering, RowPartition,
};

use crate::common;
use common::*;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn unsqueeze_then_remove_axis_is_identity(v in v3(), axis in 0usize..3) {
        let r = r3(&v);
        let u = r.clone().unsqueeze(axis).unwrap();
        prop_assert_eq!(u.num_axes(), 4);
        prop_assert_eq!(u.clone().remove_axis(axis).unwrap(), r.clone());
        if axis == 0 {
            prop_assert_eq!(u.dim0(), 1);
        }
        if axis == 1 {
            let wrapped: Vec<V3> = v.iter().map(|row| vec![row.clone()]).collect();
            let lens: Vec<usize> = wrapped.iter().map(|w| w.len()).collect();
            prop_assert_eq!(u.shape().layer(1).row_lengths().iter().map(|&l| l as usize).collect::<Vec<_>>(), lens);
        }
    }

    #[test]
    fn sublist_sizes_prefix_suffix(v in v2(), delta in 0i32..3) {
        let r = r2(&v);
        let grown = r.shape().change_sublist_size(delta).unwrap();
        let lens: Vec<i32> = v.iter().map(|x| x.len() as i32 + delta).collect();
        prop_assert_eq!(grown.layer(1).row_lengths(), lens);
        let shrunk = r.shape().change_sublist_size_pinned(-delta).unwrap();
        let lens: Vec<i32> = v.iter().map(|x| (x.len() as i32 - delta).max(0)).collect();
        prop_assert_eq!(shrunk.layer(1).row_lengths(), lens);
        let extra: Vec<i32> = (0..v.len() as i32).map(|i| 100 + i).collect();
        let suffixed: V2 = v.iter().zip(&extra).map(|(x, &e)| [x.clone(), vec![e]].concat()).collect();
        prop_assert_eq!(r.add_suffix(&extra).unwrap().to_vec_vec(), suffixed);
        let prefixed: V2 = v.iter().zip(&extra).map(|(x, &e)| [vec![e], x.clone()].concat()).collect();
        prop_assert_eq!(r.add_prefix(&extra).unwrap().to_vec_vec(), prefixed);
    }

    #[test]
    fn covering_and_forward_map(a in v2(), b in v2()) {
        let n = a.len().min(b.len());
        let (ra, rb) = (r2(&a[..n].to_vec()), r2(&b[..n].to_vec()));
        let cov = RaggedShape::covering_shape(&[ra.shape(), rb.shape()]).unwrap();
        let lens: Vec<i32> = (0..n).map(|i| a[i].len().max(b[i].len()) as i32).collect();
        prop_assert_eq!(cov.layer(1).row_lengths(), lens);
        let map = ra.shape().covering_shape_forward_map(&cov).unwrap();
        let mut expected = Vec::new();
        let mut off = 0i32;
        for i in 0..n {
            let w = a[i].len().max(b[i].len());
            for k in 0..w { expected.push(if k < a[i].len() { off + k as i32 } else { -1 }); }
            off += a[i].len() as i32;
        }
        prop_assert_eq!(map, expected);
    }

    #[test]
    fn value_ops_per_sublist(v in v2()) {
        let r = r2(&v);
        let f = r.map(|&x| x as f64 + 21.0);
        let norm = f.normalize_per_sublist(false);
        for (row, x) in f.to_vec_vec().iter().zip(norm.to_vec_vec()) {
            let s: f64 = row.iter().sum();
            for (a, b) in row.iter().zip(&x) { prop_assert!((a / s - b).abs() < 1e-12); }
        }
        let ls = f.log_sum_per_sublist(f64::NEG_INFINITY);
        for (row, l) in f.to_vec_vec().iter().zip(&ls) {
            let naive = row.iter().map(|x| (x - 40.0).exp()).sum::<f64>().ln() + 40.0;
            if row.is_empty() { prop_assert_eq!(*l, f64::NEG_INFINITY); } else { prop_assert!((naive - l).abs() < 1e-9); }
        }
        let add: Vec<i32> = (0..v.len() as i32).collect();
        let added: V2 = v.iter().enumerate().map(|(i, x)| x.iter().map(|y| y + 3 * i as i32).collect()).collect();
        prop_assert_eq!(r.add_per_sublist(&add, 3).unwrap().to_vec_vec(), added);
        let ands: Vec<i32> = v.iter().map(|x| x.iter().fold(-1, |a, &y| a & y)).collect();
        prop_assert_eq!(r.and_per_sublist(-1), ands);
        let ors: Vec<i32> = v.iter().map(|x| x.iter().fold(0, |a, &y| a | y)).collect();
        prop_assert_eq!(r.or_per_sublist(0), ors);
        let h = r.compute_hash();
        for i in 0..v.len() { for j in 0..v.len() { if v[i] == v[j] { prop_assert_eq!(h[i], h[j]); } } }
        let mut desc = r.clone();
        desc.sort_sublists_by(|a, b| b.cmp(a));
        let sorted: V2 = v.iter().map(|x| { let mut y = x.clone(); y.sort_by(|a, b| b.cmp(a)); y }).collect();
        prop_assert_eq!(desc.to_vec_vec(), sorted);
        let argmin: Vec<i32> = {
            let mut start = 0i32;
            v.iter().map(|x| {
                let mut best = -1; let mut bv = 50;
                for (k, &y) in x.iter().enumerate() { if y <= bv { bv = y; best = start + k as i32; } }
                start += x.len() as i32; best
            }).collect()
        };
        prop_assert_eq!(r.argmin_per_sublist(50), argmin);
    }

    #[test]
    fn pad_replicate(v in v2()) {
        let r = r2(&v);
        let d = r.pad(PadMode::Replicate, PadSide::Right, -99).unwrap();
        for (i, x) in v.iter().enumerate() {
            for k in 0..d.ncols() {
                let expected = if k < x.len() { x[k] } else { *x.last().unwrap_or(&-99) };
                prop_assert_eq!(d[[i, k]], expected);
            }
        }
    }

    #[test]
    fn unstack_axis1_of_three(v in v3(), pad_right in any::<bool>()) {
        let r = r3(&v);
        let (out, _) = r.unstack(1, pad_right).unwrap();
        let width = v.iter().map(|x| x.len()).max().unwrap_or(0);
        prop_assert_eq!(out.len(), width);
        for (j, o) in out.iter().enumerate() {
            let expected: V2 = v.iter().map(|row| {
                let k = if pad_right { Some(j) } else { (j + row.len()).checked_sub(width) };
                k.and_then(|k| row.get(k)).cloned().unwrap_or_default()
            }).collect();
            prop_assert_eq!(o.to_vec_vec(), expected);
        }
    }

    #[test]
    fn subset_inner_axis_and_index_ragged(v in v3(), seed in any::<u64>()) {
        let r = r3(&v);
        let n1 = r.tot_size(1);
        let keep: Vec<bool> = (0..n1).map(|i| (seed >> (i % 64)) & 1 == 1).collect();
        let ren = Renumbering::from_keep(&keep).unwrap();
        let (sub, _) = r.subset_ragged(&ren, 1).unwrap();
        let mut k = 0;
        let expected: V3 = v.iter().map(|row| row.iter().filter(|_| { k += 1; keep[k - 1] }).cloned().collect()).collect();
        prop_assert_eq!(sub.to_vec_vec_vec(), expected);
        if !v.is_empty() {
            let idx_rows: V2 = (0..3).map(|i| (0..i).map(|j| ((seed as usize + i + j) % v.len()) as i32).collect()).collect();
            let idx = r2(&idx_rows);
            let picked = r.index_ragged(&idx, true).unwrap();
            let expected: V3 = idx_rows.iter().map(|row| row.iter().flat_map(|&i| v[i as usize].clone()).collect()).collect();
            prop_assert_eq!(picked.to_vec_vec_vec(), expected);
        }
    }

    #[test]
    fn cat_stack_axis1_three_axes(a in v3(), b in v3()) {
        let n = a.len().min(b.len());
        let (ra, rb) = (r3(&a[..n].to_vec()), r3(&b[..n].to_vec()));
        let joined: V3 = (0..n).map(|i| [a[i].clone(), b[i].clone()].concat()).collect();
        prop_assert_eq!(Ragged::cat(1, &[&ra, &rb]).unwrap().to_vec_vec_vec(), joined);
        let (s, mm) = Ragged::stack_with_merge_map(1, &[&ra, &rb]).unwrap();
        prop_assert_eq!(s.num_axes(), 4);
        let srcs = [&ra, &rb];
        for (k, &m) in mm.iter().enumerate() {
            prop_assert_eq!(s.values()[k], srcs[(m % 2) as usize].values()[(m / 2) as usize]);
        }
    }

    #[test]
    fn max_over_axis0_of_three(v in v3()) {
        let r = r3(&v);
        let w1 = v.iter().map(|x| x.len()).max().unwrap_or(0);
        let expected: V2 = (0..w1).map(|j| {
            let w2 = v.iter().filter_map(|x| x.get(j)).map(|s| s.len()).max().unwrap_or(0);
            (0..w2).map(|k| v.iter().filter_map(|x| x.get(j)).filter_map(|s| s.get(k)).copied().fold(-100, i32::max)).collect()
        }).collect();
        match r.max_axis(0, -100).unwrap() {
            Reduced::Ragged(x) => prop_assert_eq!(x.to_vec_vec(), expected),
            Reduced::Flat(_) => prop_assert!(false),
        }
    }

    #[test]
    fn shapes_from_ids_compose_decompose(v in v3()) {
        let r = r3(&v);
        let s = r.shape();
        let built = ragged_shape3(None, Some(s.row_ids(1)), None, None, Some(s.row_ids(2)), Some(s.num_elements()));
        // From row ids alone, trailing empty rows of axis 0 cannot be known (k2 semantics).
        let trailing_empty = v.last().is_some_and(|x| x.is_empty());
        if !trailing_empty {
            prop_assert_eq!(&built.unwrap(), s);
        }
        let (top, bottom) = decompose_ragged_shape(s, 1).unwrap();
        prop_assert_eq!(&compose_ragged_shapes(&top, &bottom).unwrap(), s);
        let prefixes = s.get_prefixes(&[0, v.len()]);
        prop_assert_eq!(&prefixes[1], s);
        prop_assert_eq!(prefixes[0].num_elements(), 0);
    }
}

// `RowPartition::select_row_ranges` and `RowPartition::concat` against the row lengths as a
// `Vec`, rows picked one by one.

/// Row lengths and runs of rows into them (each `start <= end <= rows`).
fn lengths_and_runs() -> impl Strategy<Value = (Vec<i32>, Vec<(usize, usize)>)> {
    prop::collection::vec(0i32..5, 0..12).prop_flat_map(|lengths| {
        let n = lengths.len();
        let run = (0..=n).prop_flat_map(move |start| (Just(start), start..=n));
        (Just(lengths), prop::collection::vec(run, 0..8))
    })
}

/// The model: the lengths of the selected rows, and every selected element's index.
fn model(lengths: &[i32], runs: &[(usize, usize)]) -> (Vec<i32>, Vec<usize>) {
    let mut starts = vec![0usize];
    for &l in lengths {
        starts.push(starts.last().unwrap() + l as usize);
    }
    let mut out_lengths = Vec::new();
    let mut elements = Vec::new();
    for &(a, b) in runs {
        for row in a..b {
            out_lengths.push(lengths[row]);
            elements.extend(starts[row]..starts[row + 1]);
        }
    }
    (out_lengths, elements)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn select_row_ranges_matches_picking_rows((lengths, runs) in lengths_and_runs()) {
        let p = RowPartition::from_row_lengths(&lengths).unwrap();
        let (selected, element_runs) = p.select_row_ranges(&runs).unwrap();
        let (expected_lengths, expected_elements) = model(&lengths, &runs);
        prop_assert_eq!(selected.row_lengths(), expected_lengths);
        prop_assert!(selected.validate().is_ok());
        let elements: Vec<usize> = element_runs.iter().flat_map(|&(a, b)| a..b).collect();
        prop_assert_eq!(elements, expected_elements);
        // merged: no empty run, and no run that starts where the previous one ended
        prop_assert!(element_runs.iter().all(|&(a, b)| a < b));
        prop_assert!(element_runs.windows(2).all(|w| w[0].1 != w[1].0));
    }

    #[test]
    fn concat_matches_joined_lengths(parts in prop::collection::vec(prop::collection::vec(0i32..5, 0..8), 0..5)) {
        let partitions: Vec<RowPartition> =
            parts.iter().map(|l| RowPartition::from_row_lengths(l).unwrap()).collect();
        let refs: Vec<&RowPartition> = partitions.iter().collect();
        let joined = RowPartition::concat(&refs).unwrap();
        let expected: Vec<i32> = parts.concat();
        prop_assert_eq!(joined.row_lengths(), expected);
        prop_assert!(joined.validate().is_ok());
        // the parallel append gives the same splits
        let parallel = with_parallel_threshold(0, || RowPartition::concat(&refs).unwrap());
        prop_assert_eq!(parallel.row_splits(), joined.row_splits());
    }
}

#[test]
fn a_large_concat_in_parallel_tasks_matches_joined_lengths() {
    // Parts of up to 150,000 rows: each spans several of the append's tasks of 65,536
    // splits, and the threshold 0 sends every part through them.
    // Lengths 0 to 4 from a multiplicative hash of the row number.
    let parts: Vec<Vec<i32>> = [150_000u64, 0, 1, 70_000]
        .iter()
        .map(|&n| {
            (0..n)
                .map(|i| (((i * 2_654_435_761) >> 7) % 5) as i32)
                .collect()
        })
        .collect();
    let partitions: Vec<RowPartition> = parts
        .iter()
        .map(|l| RowPartition::from_row_lengths(l).unwrap())
        .collect();
    let refs: Vec<&RowPartition> = partitions.iter().collect();
    for threshold in [0, usize::MAX] {
        let joined = with_parallel_threshold(threshold, || RowPartition::concat(&refs).unwrap());
        assert_eq!(
            joined.row_lengths(),
            parts.concat(),
            "threshold {threshold}"
        );
        assert!(joined.validate().is_ok());
    }
}

#[test]
fn uniform_partitions_stay_uniform() {
    let p = RowPartition::from_uniform_row_length(3, 4).unwrap();
    let (none, runs) = p.select_row_ranges(&[]).unwrap();
    assert_eq!(none.nrows(), 0);
    assert_eq!(
        none.uniform_row_length(),
        Some(3),
        "declared, even with no rows"
    );
    assert!(runs.is_empty());
    let (two, runs) = p.select_row_ranges(&[(3, 4), (0, 1)]).unwrap();
    assert_eq!(two.row_splits(), &[0, 3, 6]);
    assert_eq!(runs, vec![(9, 12), (0, 3)]);
    let q = RowPartition::from_uniform_row_length(3, 0).unwrap();
    let joined = RowPartition::concat(&[&p, &q, &p]).unwrap();
    assert_eq!(joined.nrows(), 8);
    assert_eq!(joined.uniform_row_length(), Some(3));
    let r = RowPartition::from_uniform_row_length(2, 1).unwrap();
    assert_eq!(
        RowPartition::concat(&[&p, &r])
            .unwrap()
            .uniform_row_length(),
        None
    );
    assert_eq!(RowPartition::concat(&[]).unwrap().row_splits(), &[0]);
}

#[test]
fn a_prefix_selects_only_its_rows() {
    let p = RowPartition::from_row_lengths(&[1, 2, 3])
        .unwrap()
        .prefix(2);
    let (s, runs) = p.select_row_ranges(&[(1, 2), (0, 2)]).unwrap();
    assert_eq!(s.row_splits(), &[0, 2, 3, 5]);
    assert_eq!(runs, vec![(1, 3), (0, 3)]);
}

#[test]
fn selections_past_i32_elements_are_errors() {
    let big = RowPartition::from_row_lengths(&[i32::MAX / 2 + 1]).unwrap();
    assert!(matches!(
        big.select_row_ranges(&[(0, 1), (0, 1)]),
        Err(Error::Overflow { value, .. }) if value == 2 * (i32::MAX as u64 / 2 + 1)
    ));
    assert!(matches!(
        RowPartition::concat(&[&big, &big]),
        Err(Error::Overflow { .. })
    ));
    // one copy fits
    let (one, _) = big.select_row_ranges(&[(0, 1)]).unwrap();
    assert_eq!(one.nvals(), i32::MAX as usize / 2 + 1);
}

#[test]
#[should_panic(expected = "row range 2..4 out of bounds for a partition with 3 rows")]
fn a_run_past_the_rows_panics() {
    let p = RowPartition::from_row_lengths(&[1, 1, 1]).unwrap();
    let _ = p.select_row_ranges(&[(2, 4)]);
}

#[test]
#[should_panic(expected = "row range 2..1 out of bounds")]
fn a_reversed_run_panics() {
    let p = RowPartition::from_row_lengths(&[1, 1, 1]).unwrap();
    let _ = p.select_row_ranges(&[(2, 1)]);
}
