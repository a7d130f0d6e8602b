//! Invariants on random shapes of 2 to 5 axes (k2's `RandomRaggedShape`): coordinates and
//! offsets are inverse, text round-trips, and structural operations keep shapes valid and
//! agree with one another.

use ragged_core::{random_ragged_shape, Ragged, RaggedShape, ShapeRng};

fn shapes() -> Vec<RaggedShape> {
    let mut rng = ShapeRng::new(2024);
    (0..60)
        .map(|_| random_ragged_shape(&mut rng, false, 2, 5, 0, 60).unwrap())
        .collect()
}

/// All coordinates of every element, enumerated by walking the layers top-down.
fn all_coords(s: &RaggedShape) -> Vec<Vec<usize>> {
    let mut paths: Vec<(Vec<usize>, usize)> = (0..s.dim0()).map(|i| (vec![i], i)).collect();
    for axis in 1..s.num_axes() {
        let splits = s.row_splits(axis);
        let mut next = Vec::new();
        for (path, item) in paths {
            for (k, child) in (splits[item]..splits[item + 1]).enumerate() {
                let mut p = path.clone();
                p.push(k);
                next.push((p, child as usize));
            }
        }
        paths = next;
    }
    paths.into_iter().map(|(p, _)| p).collect()
}

#[test]
fn coords_and_offsets_are_inverse_at_every_depth() {
    for s in shapes() {
        s.validate().unwrap();
        for (offset, coords) in all_coords(&s).iter().enumerate() {
            assert_eq!(s.offset_of(coords), Some(offset), "{s}");
            assert_eq!(&s.coords_of(offset), coords, "{s}");
        }
    }
}

#[test]
fn text_round_trips_when_the_deepest_lists_exist() {
    for s in shapes() {
        if s.tot_size(s.num_axes() - 2) > 0 {
            assert_eq!(s.to_string().parse::<RaggedShape>().unwrap(), s);
        }
    }
}

#[test]
fn remove_axis_and_unsqueeze_keep_shapes_valid() {
    for s in shapes() {
        for axis in 0..=s.num_axes() {
            let u = s.unsqueeze(axis).unwrap();
            u.validate().unwrap();
            assert_eq!(u.remove_axis(axis).unwrap(), s);
        }
        if s.num_axes() > 2 {
            for axis in 0..s.num_axes() {
                let r = s.remove_axis(axis).unwrap();
                r.validate().unwrap();
                if axis + 1 < s.num_axes() {
                    assert_eq!(r.num_elements(), s.num_elements());
                }
            }
        }
    }
}

#[test]
fn index_unstack_stack_and_arange_agree() {
    for s in shapes() {
        let n = s.num_elements();
        let r = Ragged::new(s.clone(), (0..n as i32).collect());
        let all: Vec<i32> = (0..s.dim0() as i32).collect();
        assert_eq!(r.index_axis(0, &all).unwrap(), r);
        let (parts, maps) = r.unstack(0, true).unwrap();
        for (i, (p, m)) in parts.iter().zip(&maps).enumerate() {
            assert_eq!(p.values(), &m[..]);
            if s.num_axes() > 2 {
                assert_eq!(p, &r.index(0, i).to_ragged());
                assert_eq!(p, &r.arange(0, i, i + 1).unwrap().remove_axis(0).unwrap());
            }
        }
        if s.num_axes() > 2 && !parts.is_empty() {
            let refs: Vec<&Ragged<i32>> = parts.iter().collect();
            assert_eq!(Ragged::stack(0, &refs).unwrap(), r);
        }
        for k in 0..=s.dim0() {
            let p = s.prefix(k);
            p.validate().unwrap();
            assert_eq!(p.num_elements(), s.element_range(0, 0, k).len());
        }
    }
}

#[test]
fn transposable_shapes_transpose_twice_to_themselves() {
    for s in shapes() {
        if s.num_axes() < 3 {
            continue;
        }
        let t = s.make_transposable().unwrap();
        t.validate().unwrap();
        let n = t.num_elements();
        let r = Ragged::new(t.clone(), (0..n as i32).collect());
        let (once, _) = r.transpose().unwrap();
        once.shape().validate().unwrap();
        if once.dim0() > 0 {
            let (twice, _) = once.transpose().unwrap();
            if t.dim0() > 0 && t.tot_size(1) > 0 {
                assert_eq!(twice, r);
            }
        }
    }
}

#[test]
fn reduce_axis_matches_grouping_by_coordinates() {
    use ragged_core::Reduced;
    use std::collections::BTreeMap;
    for s in shapes() {
        let n = s.num_elements();
        let r = Ragged::new(s.clone(), (0..n as i64).map(|v| v * 3 + 1).collect());
        let coords = all_coords(&s);
        for axis in 0..s.num_axes() {
            let mut groups: BTreeMap<Vec<usize>, i64> = BTreeMap::new();
            for (offset, c) in coords.iter().enumerate() {
                let mut key = c.clone();
                key.remove(axis);
                *groups.entry(key).or_insert(0) += r.values()[offset];
            }
            match r.sum_axis(axis, 0).unwrap() {
                Reduced::Flat(v) => {
                    // A 2-axis source: keys are single coordinates; unreached slots stay 0.
                    for (key, total) in &groups {
                        assert_eq!(v[key[0]], *total, "{s} axis {axis}");
                    }
                    if axis == 0 {
                        assert_eq!(v.len(), groups.len());
                    }
                }
                Reduced::Ragged(out) => {
                    out.shape().validate().unwrap();
                    for (key, total) in &groups {
                        let off = out
                            .shape()
                            .offset_of(key)
                            .unwrap_or_else(|| panic!("{s} axis {axis} key {key:?}"));
                        assert_eq!(out.values()[off], *total, "{s} axis {axis}");
                    }
                    // Lists align at the left, so every result element has at least one source,
                    // except the empty last-axis sublists a per-sublist reduction keeps.
                    if axis + 1 < s.num_axes() {
                        assert_eq!(out.num_elements(), groups.len(), "{s} axis {axis}");
                    } else {
                        assert!(out.num_elements() >= groups.len());
                    }
                }
            }
        }
    }
}

/// A text nested `depth` deep around one element: `[[[ ... [5] ... ]]]`.
fn nested_text(depth: usize) -> String {
    let mut text = "[".repeat(depth);
    text.push('5');
    text.push_str(&"]".repeat(depth));
    text
}

/// The same array in k2's printed form, built by a plain loop: `[ [ ... [ 5 ] ... ] ]`.
fn printed_text(depth: usize) -> String {
    let mut text = "[ ".repeat(depth);
    text.push_str("5 ");
    text.push_str(&"] ".repeat(depth - 1));
    text.push(']');
    text
}

#[test]
fn a_million_levels_print_without_overflowing_the_stack() {
    // The parser takes a million levels; printing used to recurse once per level and
    // overflowed the test thread's stack. This runs on the ordinary test thread.
    let depth = 1_000_000;
    let r: Ragged<i32> = nested_text(depth).parse().unwrap();
    assert_eq!(r.num_axes(), depth);
    let printed = r.to_string();
    assert_eq!(printed.len(), printed_text(depth).len());
    assert!(printed == printed_text(depth), "the printed form differs");
    let debug = format!("{r:?}");
    assert!(debug == format!("Ragged({})", printed_text(depth)));
    let shape = r.shape().clone();
    let shape_text = shape.to_string();
    assert!(shape_text == printed_text(depth).replace('5', "x"));
    assert!(format!("{shape:?}") == format!("RaggedShape({shape_text})"));
    // and it reads back
    assert!(printed.parse::<Ragged<i32>>().unwrap() == r);
}

#[test]
fn iterative_printing_matches_the_nested_model() {
    // small cases written out by hand: empty lists at every depth, elements in the last
    for (text, printed) in [
        ("[[1 2] [] [3]]", "[ [ 1 2 ] [ ] [ 3 ] ]"),
        ("[[[1] []] [[2 3]] []]", "[ [ [ 1 ] [ ] ] [ [ 2 3 ] ] [ ] ]"),
        ("[[[[7]]] [[]]]", "[ [ [ [ 7 ] ] ] [ [ ] ] ]"),
        ("[ ]", "[ ]"),
    ] {
        let r: Ragged<i32> = text.parse().unwrap();
        assert_eq!(r.to_string(), printed);
        assert_eq!(format!("{r:?}"), format!("Ragged({printed})"));
    }
}
