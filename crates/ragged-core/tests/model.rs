//! Property tests of the ragged operations against a naive `Vec<Vec<..>>` model.

use proptest::prelude::*;
use ragged_core::{with_parallel_threshold, PadMode, PadSide, Ragged, Reduced, Renumbering};

use crate::common;
use common::*;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn nested_text_and_encodings_roundtrip(v in v3()) {
        let r = r3(&v);
        prop_assert_eq!(r.to_vec_vec_vec(), v.clone());
        // The text form shows the axes only down to the deepest list present.
        if r.tot_size(1) > 0 {
            let parsed: Ragged<i32> = r.to_string().parse().unwrap();
            prop_assert_eq!(&parsed, &r);
        }
        r.shape().validate().unwrap();
        // row_ids(1): the row of each axis-1 item; row_splits(1): cumulative lengths.
        let ids1: Vec<i32> = v.iter().enumerate().flat_map(|(i, row)| std::iter::repeat_n(i as i32, row.len())).collect();
        prop_assert_eq!(r.row_ids(1), &ids1[..]);
        let mut splits2 = vec![0];
        for row in &v { for sub in row { splits2.push(splits2.last().unwrap() + sub.len() as i32); } }
        prop_assert_eq!(r.row_splits(2), &splits2[..]);
    }

    #[test]
    fn offsets_and_coords_match_enumeration(v in v3()) {
        let r = r3(&v);
        let mut offset = 0;
        for (i, row) in v.iter().enumerate() {
            for (j, sub) in row.iter().enumerate() {
                for (k, x) in sub.iter().enumerate() {
                    prop_assert_eq!(r.shape().offset_of(&[i, j, k]), Some(offset));
                    prop_assert_eq!(r.shape().coords_of(offset), vec![i, j, k]);
                    prop_assert_eq!(r.values()[offset], *x);
                    offset += 1;
                }
                prop_assert_eq!(r.shape().offset_of(&[i, j, sub.len()]), None);
            }
        }
    }

    #[test]
    fn float_sums_match_a_left_to_right_sum(
        v in prop::collection::vec(prop::collection::vec(-1.0e3f32..1.0e3, 0..40), 0..40)
    ) {
        // Lengths on both sides of the 24-element window; the sum order differs from a
        // front-to-back fold, so floats agree up to rounding and both paths bit for bit.
        let r = Ragged::from_nested(v.clone()).unwrap();
        let got = with_parallel_threshold(usize::MAX, || r.sum_per_sublist(0.25));
        let par = with_parallel_threshold(0, || r.sum_per_sublist(0.25));
        prop_assert_eq!(got.len(), v.len());
        for ((row, a), b) in v.iter().zip(&got).zip(&par) {
            let naive = row.iter().fold(0.25f32, |acc, &x| acc + x);
            let scale: f32 = row.iter().map(|x| x.abs()).sum::<f32>() + 1.0;
            prop_assert!((a - naive).abs() <= 1e-5 * scale, "{} vs {}", a, naive);
            prop_assert_eq!(a.to_bits(), b.to_bits());
        }
    }

    #[test]
    fn per_sublist_reductions(v in v2()) {
        let r = r2(&v);
        let sums: Vec<i32> = v.iter().map(|x| x.iter().sum::<i32>() + 5).collect();
        prop_assert_eq!(r.sum_per_sublist(5), sums);
        let maxes: Vec<i32> = v.iter().map(|x| x.iter().copied().fold(-3, i32::max)).collect();
        prop_assert_eq!(r.max_per_sublist(-3), maxes);
        let mins: Vec<i32> = v.iter().map(|x| x.iter().copied().fold(3, i32::min)).collect();
        prop_assert_eq!(r.min_per_sublist(3), mins);
        let mut start = 0;
        let mut arg = Vec::new();
        for x in &v {
            let mut best = -1;
            let mut best_v = -3;
            for (k, &y) in x.iter().enumerate() {
                if y >= best_v { best_v = y; best = (start + k) as i32; }
            }
            arg.push(best);
            start += x.len();
        }
        prop_assert_eq!(r.argmax_per_sublist(-3), arg);
    }

    #[test]
    fn cat_and_stack(a in v2(), b in v2()) {
        let (ra, rb) = (r2(&a), r2(&b));
        let mut ab = a.clone();
        ab.extend(b.clone());
        prop_assert_eq!(Ragged::cat(0, &[&ra, &rb]).unwrap().to_vec_vec(), ab);
        prop_assert_eq!(Ragged::stack(0, &[&ra, &rb]).unwrap().to_vec_vec_vec(), vec![a.clone(), b.clone()]);
        let n = a.len().min(b.len());
        let (ap, bp) = (r2(&a[..n].to_vec()), r2(&b[..n].to_vec()));
        let joined: V2 = (0..n).map(|i| [a[i].clone(), b[i].clone()].concat()).collect();
        prop_assert_eq!(Ragged::cat(1, &[&ap, &bp]).unwrap().to_vec_vec(), joined);
        let stacked: V3 = (0..n).map(|i| vec![a[i].clone(), b[i].clone()]).collect();
        prop_assert_eq!(Ragged::stack(1, &[&ap, &bp]).unwrap().to_vec_vec_vec(), stacked);
    }

    #[test]
    fn index_axis0(v in v2(), picks in prop::collection::vec(0usize..100, 0..10)) {
        let r = r2(&v);
        let idx: Vec<i32> = picks.iter().map(|&p| if v.is_empty() || p % 7 == 0 { -1 } else { (p % v.len()) as i32 }).collect();
        let (out, new2old) = r.index_axis_with_map(0, &idx).unwrap();
        prop_assert_eq!(&r.index_axis(0, &idx).unwrap(), &out);
        let expected: V2 = idx.iter().map(|&i| if i < 0 { vec![] } else { v[i as usize].clone() }).collect();
        prop_assert_eq!(out.to_vec_vec(), expected);
        let gathered: Vec<i32> = new2old.iter().map(|&k| r.values()[k as usize]).collect();
        prop_assert_eq!(out.values(), &gathered[..]);
    }

    #[test]
    fn index_axis1_sorted(v in v3(), picks in prop::collection::vec(0usize..100, 0..10)) {
        let r = r3(&v);
        let n1 = r.tot_size(1);
        prop_assume!(n1 > 0);
        let mut idx: Vec<i32> = picks.iter().map(|&p| (p % n1) as i32).collect();
        idx.sort();
        let out = r.index_axis(1, &idx).unwrap();
        let flat: Vec<(usize, Vec<i32>)> = v.iter().enumerate().flat_map(|(i, row)| row.iter().map(move |s| (i, s.clone()))).collect();
        let mut expected: V3 = vec![vec![]; v.len()];
        for &k in &idx { let (i, s) = &flat[k as usize]; expected[*i].push(s.clone()); }
        prop_assert_eq!(out.to_vec_vec_vec(), expected);
    }

    #[test]
    fn remove_axis_prefix_arange(v in v3(), n in 0usize..6) {
        let r = r3(&v);
        let merged: V2 = v.iter().map(|row| row.concat()).collect();
        prop_assert_eq!(r.clone().remove_axis(1).unwrap().to_vec_vec(), merged);
        let flat: V2 = v.iter().flatten().cloned().collect();
        prop_assert_eq!(r.clone().remove_axis(0).unwrap().to_vec_vec(), flat.clone());
        let n = n.min(v.len());
        prop_assert_eq!(r.prefix(n).to_vec_vec_vec(), v[..n].to_vec());
        let b = n / 2;
        prop_assert_eq!(r.arange(0, b, n).unwrap().to_vec_vec_vec(), v[b..n].to_vec());
        let m = flat.len();
        prop_assert_eq!(r.arange(1, m / 3, m).unwrap().to_vec_vec(), flat[m / 3..].to_vec());
        if n > 0 && r.num_axes() == 3 {
            prop_assert_eq!(r.index(0, n - 1).to_ragged().to_vec_vec(), v[n - 1].clone());
        }
    }

    #[test]
    fn filters_and_renumbering(v in v2(), seed in any::<u64>()) {
        let r = r2(&v);
        prop_assert_eq!(r.remove_values_leq(0).to_vec_vec(), v.iter().map(|x| x.iter().copied().filter(|&y| y > 0).collect()).collect::<V2>());
        prop_assert_eq!(r.remove_values_eq(1).to_vec_vec(), v.iter().map(|x| x.iter().copied().filter(|&y| y != 1).collect()).collect::<V2>());
        let keep: Vec<bool> = (0..v.len()).map(|i| (seed >> (i % 64)) & 1 == 1).collect();
        let ren = Renumbering::from_keep(&keep).unwrap();
        let (sub, _) = r.subset_ragged(&ren, 0).unwrap();
        let expected: V2 = v.iter().zip(&keep).filter(|(_, &k)| k).map(|(x, _)| x.clone()).collect();
        prop_assert_eq!(sub.to_vec_vec(), expected);
        let (ne, _) = r.clone().remove_empty_lists(0).unwrap();
        prop_assert_eq!(ne.to_vec_vec(), v.iter().filter(|x| !x.is_empty()).cloned().collect::<V2>());
    }

    #[test]
    fn transpose_regular(d0 in 0usize..4, d1 in 0usize..4, lens in prop::collection::vec(0usize..3, 16)) {
        let v: V3 = (0..d0).map(|i| (0..d1).map(|j| (0..lens[i * 4 + j]).map(|k| (i * 100 + j * 10 + k) as i32).collect()).collect()).collect();
        let r = r3(&v);
        let (t, _) = r.transpose().unwrap();
        if d0 > 0 {
            let expected: V3 = (0..d1).map(|j| (0..d0).map(|i| v[i][j].clone()).collect()).collect();
            prop_assert_eq!(t.to_vec_vec_vec(), expected);
        }
    }

    #[test]
    fn unstack_axis1_matches_model(v in v2()) {
        let r = r2(&v);
        let (out, _) = r.unstack(1, true).unwrap();
        let width = v.iter().map(|x| x.len()).max().unwrap_or(0);
        prop_assert_eq!(out.len(), width);
        for (j, o) in out.iter().enumerate() {
            let col: Vec<i32> = v.iter().filter_map(|x| x.get(j).copied()).collect();
            prop_assert_eq!(o.to_vec_vec(), vec![col]);
        }
    }

    #[test]
    fn pad_roundtrip(v in v2()) {
        let r = r2(&v);
        let lens: Vec<i32> = v.iter().map(|x| x.len() as i32).collect();
        for side in [PadSide::Right, PadSide::Left] {
            let dense = r.pad(PadMode::Constant, side, 99).unwrap();
            let width = v.iter().map(|x| x.len()).max().unwrap_or(0);
            prop_assert_eq!(dense.dim(), (v.len(), width));
            for (i, x) in v.iter().enumerate() {
                let pad = width - x.len();
                let row: Vec<i32> = dense.row(i).to_vec();
                let expected = match side {
                    PadSide::Right => [x.clone(), vec![99; pad]].concat(),
                    PadSide::Left => [vec![99; pad], x.clone()].concat(),
                };
                prop_assert_eq!(row, expected);
            }
            prop_assert_eq!(Ragged::from_dense(dense.view(), &lens, side).unwrap(), r.clone());
        }
    }

    #[test]
    fn scans_sorts_and_uniques(v in v2()) {
        let r = r2(&v);
        let excl: Vec<i32> = v.iter().flat_map(|x| x.iter().scan(0, |acc, &y| { let b = *acc; *acc += y; Some(b) }).collect::<Vec<_>>()).collect();
        prop_assert_eq!(r.segmented_exclusive_sum(0), excl);
        let incl: Vec<i32> = v.iter().flat_map(|x| x.iter().scan(0, |acc, &y| { *acc += y; Some(*acc) }).collect::<Vec<_>>()).collect();
        prop_assert_eq!(r.segmented_inclusive_sum(0), incl);
        let mut s = r.clone();
        s.sort_sublists();
        let sorted: V2 = v.iter().map(|x| { let mut y = x.clone(); y.sort(); y }).collect();
        prop_assert_eq!(s.to_vec_vec(), sorted);
        let mut counts = std::collections::BTreeMap::new();
        for x in &v { *counts.entry(x.clone()).or_insert(0) += 1; }
        let u = r.unique_sequences().unwrap();
        prop_assert_eq!(u.unique.to_vec_vec(), counts.keys().cloned().collect::<V2>());
        prop_assert_eq!(u.num_repeats, counts.values().copied().collect::<Vec<i32>>());
        for (k, &old) in u.new2old.iter().enumerate() {
            let first = v.iter().position(|x| *x == u.unique.to_vec_vec()[k]).unwrap();
            prop_assert_eq!(old as usize, first);
        }
    }

    #[test]
    fn reduce_axis0_aligns_left(v in v2()) {
        let r = r2(&v);
        let width = v.iter().map(|x| x.len()).max().unwrap_or(0);
        let cols: Vec<i32> = (0..width).map(|j| v.iter().filter_map(|x| x.get(j)).sum()).collect();
        prop_assert_eq!(r.sum_axis(0, 0).unwrap(), Reduced::Flat(cols));
    }

    #[test]
    fn reduce_axis1_of_three(v in v3()) {
        let r = r3(&v);
        let expected: V2 = v.iter().map(|row| {
            let width = row.iter().map(|x| x.len()).max().unwrap_or(0);
            (0..width).map(|k| row.iter().filter_map(|x| x.get(k)).sum()).collect()
        }).collect();
        match r.sum_axis(1, 0).unwrap() {
            Reduced::Ragged(x) => prop_assert_eq!(x.to_vec_vec(), expected),
            Reduced::Flat(_) => prop_assert!(false, "expected a ragged result"),
        }
    }

    #[test]
    fn merge_and_orders(a in v2(), b in v2(), seed in any::<u64>()) {
        let (ra, rb) = (r2(&a), r2(&b));
        // Interleave by the bits of seed.
        let (mut i, mut j, mut mm, mut expected) = (0usize, 0usize, Vec::new(), Vec::new());
        let mut bit = 0;
        while i < a.len() || j < b.len() {
            let take_a = j >= b.len() || (i < a.len() && (seed >> (bit % 64)) & 1 == 1);
            bit += 1;
            if take_a { mm.push((i * 2) as u32); expected.push(a[i].clone()); i += 1; }
            else { mm.push((j * 2 + 1) as u32); expected.push(b[j].clone()); j += 1; }
        }
        prop_assert_eq!(Ragged::merge(&[&ra, &rb], &mm).unwrap().0.to_vec_vec(), expected);
        let mut order: Vec<i32> = (0..a.len() as i32).collect();
        order.sort_by_key(|&k| std::cmp::Reverse(a[k as usize].len()));
        prop_assert_eq!(ra.shape().get_decreasing_size_order(), order);
        let shifted = ra.map(|x| x + 20);
        let mut by_col: Vec<i32> = (0..shifted.num_elements() as i32).collect();
        by_col.sort_by_key(|&k| shifted.values()[k as usize]);
        prop_assert_eq!(ragged_core::get_transpose_reordering(&shifted, 40).unwrap(), by_col);
    }
}
