//! The smaller k2 operations around the algebra against hand-worked examples:
//! `expand_ragged_attributes`, `prune_on_arc_post`, `linear_fsa_with_self_loops`,
//! `index_fsa`, `cat`, and the FsaVec `remove_epsilon_and_add_self_loops`.

use crate::common;

use common::tuples;
use ragged_fsa::{create_fsa_vec, Attr, Error, Fsa, FsaVec};

/// A ragged attribute from its lists.
fn ragged(lists: Vec<Vec<i32>>) -> Attr {
    let mut splits = vec![0i32];
    let mut values = Vec::new();
    for l in &lists {
        values.extend_from_slice(l);
        splits.push(values.len() as i32);
    }
    let layer = ragged_core::RowPartition::from_row_splits(splits).unwrap();
    let shape = ragged_core::RaggedShape::from_layers(vec![layer]).unwrap();
    Attr::Ragged(ragged_core::Ragged::new(shape, values))
}

#[test]
fn expand_ragged_attributes_makes_chains() {
    let fsa: Fsa = "0 1 2 0.5\n1 2 -1 0.25\n2".parse().unwrap();
    let fsa = fsa
        .with_attr("aux_labels", ragged(vec![vec![1, 2], vec![3, -1]]))
        .unwrap();
    let (out, arc_map) = fsa.expand_ragged_attributes().unwrap();
    assert_eq!(
        tuples(&out),
        vec![
            (0, 1, 2, 0.5),
            (1, 2, 0, 0.0),
            (2, 3, 0, 0.25),
            (3, 4, -1, 0.0)
        ]
    );
    assert_eq!(out.aux_labels(), Some(&Attr::I32(vec![1, 2, 3, -1])));
    assert_eq!(arc_map, vec![0, -1, 1, -1]);
    // plain aux labels: nothing to expand
    let plain = Fsa::linear_fst(&[1], &[2]).unwrap();
    let (same, identity) = plain.expand_ragged_attributes().unwrap();
    assert_eq!((same, identity), (plain, vec![0, 1]));
}

#[test]
fn prune_on_arc_post_drops_unlikely_arcs() {
    let fsa = Fsa::from_arcs(
        vec![
            ragged_fsa::Arc::new(0, 1, 1, 0.9f32.ln()),
            ragged_fsa::Arc::new(0, 1, 2, 0.1f32.ln()),
            ragged_fsa::Arc::new(1, 2, -1, 0.0),
        ],
        3,
    )
    .unwrap();
    let (pruned, arc_map) = fsa.prune_on_arc_post(0.5).unwrap();
    assert_eq!(arc_map, vec![0, 2]);
    assert_eq!(pruned.labels(), vec![1, -1]);
    let (kept, _) = fsa.prune_on_arc_post(0.05).unwrap();
    assert_eq!(kept.num_arcs(), 3);
    for bad in [0.0, 1.0, f64::NAN] {
        assert!(matches!(
            fsa.prune_on_arc_post(bad),
            Err(Error::InvalidArgument {
                what: "threshold_prob",
                ..
            })
        ));
    }
    assert_eq!(
        fsa.prune_on_arc_post(1.5).unwrap_err().to_string(),
        "threshold_prob = 1.5 is out of range: (0, 1)"
    );
    let vec = create_fsa_vec(&[fsa.clone(), fsa]);
    let (pruned_vec, map) = vec.prune_on_arc_post(0.5).unwrap();
    assert_eq!(map, vec![0, 2, 3, 5]);
    assert_eq!(pruned_vec.get(1), pruned);
}

#[test]
fn linear_fsa_with_self_loops_keeps_positive_labels() {
    let fsa = Fsa::linear(&[1, 0, 2]).unwrap();
    let out = fsa.linear_fsa_with_self_loops();
    assert_eq!(
        tuples(&out),
        vec![
            (0, 0, 0, 0.0),
            (0, 1, 1, 0.0),
            (1, 1, 0, 0.0),
            (1, 2, 2, 0.0),
            (2, 2, 0, 0.0),
            (2, 3, -1, 0.0)
        ]
    );
    let vec = FsaVec::linear(&[vec![3], vec![4, 5]]).unwrap();
    assert_eq!(vec.linear_fsa_with_self_loops().get(1).num_arcs(), 6);
}

#[test]
fn index_fsa_and_cat() {
    let a = Fsa::linear(&[1]).unwrap();
    let b = Fsa::linear(&[2, 3]).unwrap();
    let v = create_fsa_vec(&[a.clone(), b.clone()]);
    let picked = v.index_fsa(&[1, 1, 0]).unwrap();
    assert_eq!(picked.to_fsas(), vec![b.clone(), b.clone(), a.clone()]);
    assert_eq!(
        v.index_fsa(&[0, 2]),
        Err(Error::FsaIndexOutOfRange {
            position: 1,
            index: 2,
            num_fsas: 2
        })
    );
    let joined = FsaVec::cat(&[&v, &picked]).unwrap();
    assert_eq!(joined.num_fsas(), 5);
    assert_eq!(joined.get(4), a);
    let with_attr = create_fsa_vec(&[a.with_attr("w", Attr::F32(vec![1.0, 2.0])).unwrap()]);
    assert_eq!(
        FsaVec::cat(&[&with_attr, &v]),
        Err(Error::AttrMismatch {
            name: "w".into(),
            fsa: 1
        })
    );
}

#[test]
fn fsa_vec_remove_epsilon_and_add_self_loops_matches_each_fsa() {
    let a: Fsa = "0 1 0 1\n0 1 3 0.5\n1 2 -1 0\n2".parse().unwrap();
    let b: Fsa = "0 1 4 1\n1 2 -1 0\n2".parse().unwrap();
    let v = create_fsa_vec(&[a.clone(), b.clone()]);
    let (out, derivs) = v.remove_epsilon_and_add_self_loops().unwrap();
    let (want_a, derivs_a) = a.remove_epsilon_and_add_self_loops().unwrap();
    let (want_b, derivs_b) = b.remove_epsilon_and_add_self_loops().unwrap();
    assert_eq!(out.get(0), want_a);
    assert_eq!(out.get(1), want_b);
    let mut want = derivs_a.to_vec_vec();
    want.extend(
        derivs_b
            .to_vec_vec()
            .into_iter()
            .map(|row| row.into_iter().map(|x| x + 3).collect()),
    );
    assert_eq!(derivs.to_vec_vec(), want);
    let bad: Fsa = "0 1 0 1\n1 0 0 -0.5\n1 2 -1 0\n2".parse().unwrap();
    assert_eq!(
        create_fsa_vec(&[a, bad])
            .remove_epsilon_and_add_self_loops()
            .map(|_| ()),
        Err(Error::PositiveEpsilonCycle { fsa: 1, state: 0 })
    );
}

#[test]
fn levenshtein_graph_is_k2s_test_example() {
    // k2's fsa_algo_test.cu TestLevenshteinGraph, ins_del_score -0.51
    let graphs = FsaVec::levenshtein_graph(&[vec![1, 2, 3], vec![4, 5, 6]], -0.51).unwrap();
    let want = |s: [i32; 3]| {
        vec![
            (0, 0, 0, -0.51),
            (0, 1, 0, -0.5),
            (0, 1, s[0], 0.0),
            (1, 1, 0, -0.51),
            (1, 2, 0, -0.5),
            (1, 2, s[1], 0.0),
            (2, 2, 0, -0.51),
            (2, 3, 0, -0.5),
            (2, 3, s[2], 0.0),
            (3, 3, 0, -0.51),
            (3, 4, -1, 0.0),
        ]
    };
    assert_eq!(tuples(&graphs.get(0)), want([1, 2, 3]));
    assert_eq!(tuples(&graphs.get(1)), want([4, 5, 6]));
    assert_eq!(
        graphs.aux_labels(),
        Some(&Attr::I32(vec![
            0, 1, 1, 0, 2, 2, 0, 3, 3, 0, -1, 0, 4, 4, 0, 5, 5, 0, 6, 6, 0, -1
        ]))
    );
    let offsets = graphs
        .attr(ragged_fsa::INS_DEL_SCORE_OFFSET)
        .unwrap()
        .as_f32()
        .unwrap();
    let want_offsets = [
        -0.01, 0.0, 0.0, -0.01, 0.0, 0.0, -0.01, 0.0, 0.0, -0.01, 0.0, -0.01, 0.0, 0.0, -0.01, 0.0,
        0.0, -0.01, 0.0, 0.0, -0.01, 0.0,
    ];
    assert_eq!(offsets.len(), want_offsets.len());
    for (got, want) in offsets.iter().zip(want_offsets) {
        assert!((got - want).abs() < 1e-4, "{got} vs {want}");
    }
    assert_eq!(
        Fsa::levenshtein_graph(&[4, 5, 6], -0.51).unwrap(),
        graphs.get(1)
    );
    assert_eq!(
        Fsa::levenshtein_graph(&[1, 0], -0.5).map(|_| ()),
        Err(Error::InvalidArgument {
            what: "symbol",
            value: 0.0,
            allowed: "labels other than 0 and -1"
        })
    );
}

#[test]
fn random_paths_follow_the_arc_probabilities() {
    // two arcs out of the start with probabilities 0.8 and 0.2, then one way to the end
    let fsa = Fsa::from_arcs(
        vec![
            ragged_fsa::Arc::new(0, 1, 1, 0.8f32.ln()),
            ragged_fsa::Arc::new(0, 2, 2, 0.2f32.ln()),
            ragged_fsa::Arc::new(1, 3, 3, 0.0),
            ragged_fsa::Arc::new(2, 3, 4, 0.0),
            ragged_fsa::Arc::new(3, 4, -1, 0.0),
        ],
        5,
    )
    .unwrap();
    let paths = fsa.random_paths(2000, 7).unwrap().to_vec_vec();
    assert_eq!(paths.len(), 2000);
    for p in &paths {
        assert!(
            p == &vec![0, 2, 4] || p == &vec![1, 3, 4],
            "{p:?} is not a path"
        );
    }
    let first = paths.iter().filter(|p| p[0] == 0).count();
    // binomial(2000, 0.8): mean 1600, standard deviation about 18
    assert!((1500..1700).contains(&first), "{first} of 2000");
    // the same seed draws the same paths
    assert_eq!(
        fsa.random_paths(50, 7).unwrap().to_vec_vec(),
        paths[..50].to_vec()
    );
    // an FsaVec gives idx012 arc indices
    let vec = create_fsa_vec(&[Fsa::linear(&[5]).unwrap(), fsa.clone()]);
    let drawn = vec.random_paths(3, 1).unwrap();
    assert_eq!(drawn.num_axes(), 3);
    assert_eq!(drawn.to_vec_vec_vec()[0], vec![vec![0, 1]; 3]);
    assert!(drawn.to_vec_vec_vec()[1]
        .iter()
        .all(|p| p[0] == 2 || p[0] == 3));
    // cyclic input is refused as by the score functions
    let cyclic: Fsa = "0 1 1 0\n1 0 2 0\n1 2 -1 0\n2".parse().unwrap();
    assert!(matches!(
        cyclic.random_paths(1, 0),
        Err(Error::NotTopSortedAcyclic { .. })
    ));
}

#[test]
fn levenshtein_alignment_is_k2s_documented_example() {
    // k2's levenshtein_alignment docstring
    let hyps = FsaVec::levenshtein_graph(&[vec![1, 2, 3], vec![1, 3, 3, 2]], -0.501).unwrap();
    let refs = FsaVec::levenshtein_graph(&[vec![1, 2, 4]], -0.501).unwrap();
    let alignment = refs.levenshtein_alignment(&hyps, &[0, 0]).unwrap();
    // the first alignment is unique: k2's answer exactly
    let first = alignment.get(0);
    assert_eq!(first.labels(), vec![1, 2, 0, -1]);
    assert_eq!(
        first.attr("ref_labels"),
        Some(&Attr::I32(vec![1, 2, 4, -1]))
    );
    assert_eq!(
        first.attr("hyp_labels"),
        Some(&Attr::I32(vec![1, 2, 3, -1]))
    );
    // the second has several alignments of cost 3 (k2 shows [1 0 0 0] against ref
    // [1 2 4 0] and hyp [1 3 3 2]); ties may fall elsewhere, since k2 numbers the lattice
    // by its device intersection. Check it is a valid alignment of cost 3.
    let second = alignment.get(1);
    let refs_seen = second
        .attr("ref_labels")
        .unwrap()
        .as_i32()
        .unwrap()
        .to_vec();
    let hyps_seen = second
        .attr("hyp_labels")
        .unwrap()
        .as_i32()
        .unwrap()
        .to_vec();
    let strip = |v: &[i32]| -> Vec<i32> { v.iter().copied().filter(|&x| x > 0).collect() };
    assert_eq!(strip(&refs_seen), vec![1, 2, 4]);
    assert_eq!(strip(&hyps_seen), vec![1, 3, 3, 2]);
    for ((&label, &r), &h) in second.labels().iter().zip(&refs_seen).zip(&hyps_seen) {
        let want = if r == h { r } else { 0 };
        assert_eq!(label, want, "aligned {r} with {h}");
    }
    let tot: Vec<f64> = alignment
        .get_tot_scores(ragged_fsa::Semiring::Tropical)
        .unwrap();
    assert!(
        (tot[0] + 1.0).abs() < 1e-5 && (tot[1] + 3.0).abs() < 1e-5,
        "{tot:?}"
    );
    assert_eq!(
        refs.levenshtein_alignment(&hyps, &[0, 1]).map(|_| ()),
        Err(Error::FsaIndexOutOfRange {
            position: 1,
            index: 1,
            num_fsas: 1
        })
    );
}
