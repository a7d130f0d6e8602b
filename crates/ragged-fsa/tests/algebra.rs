//! The FSA algebra (intersect, compose, remove_epsilon, determinize, minimize) against
//! k2's documented examples and brute force: every accepted (input, output) label sequence
//! with its best score, enumerated path by path on small random FSAs.

use crate::common;

use std::collections::BTreeMap;

use common::{log_sum, paths, random_acyclic, tuples, Rng};
use proptest::prelude::*;
use ragged_fsa::{
    create_fsa_vec, Arc, Attr, DeterminizeConfig, Error, Fsa, FsaVec, WeightPushing,
    PARALLEL_MIN_ARCS,
};

/// Fixed and printed, so a failure reproduces: proptest draws the seeds of our generator.
const PROPTEST_SEED: u64 = 13;

type Key = (Vec<i32>, Vec<i32>);

/// Every successful path's (input labels, output labels) with `drop` values removed and the
/// final -1 left out, and the best (max) score of each pair. `aux` is per-arc output labels
/// (the input labels when `None`).
fn best_pairs(fsa: &Fsa, aux: Option<&[i32]>, drop_eps: bool) -> BTreeMap<Key, f64> {
    let arcs = fsa.arcs().values();
    let mut out: BTreeMap<Key, f64> = BTreeMap::new();
    for (path, score) in paths(fsa) {
        let keep = |x: i32| x != -1 && !(drop_eps && x == 0);
        let input: Vec<i32> = path
            .iter()
            .map(|&i| arcs[i].label)
            .filter(|&x| keep(x))
            .collect();
        let output: Vec<i32> = match aux {
            Some(aux) => path.iter().map(|&i| aux[i]).filter(|&x| keep(x)).collect(),
            None => input.clone(),
        };
        let e = out.entry((input, output)).or_insert(f64::NEG_INFINITY);
        *e = e.max(score);
    }
    out
}

/// The best score of each accepted label sequence of an acceptor.
fn best(fsa: &Fsa, drop_eps: bool) -> BTreeMap<Vec<i32>, f64> {
    best_pairs(fsa, None, drop_eps)
        .into_iter()
        .map(|((i, _), s)| (i, s))
        .collect()
}

/// The log-sum of the scores of each accepted label sequence.
fn log_totals(fsa: &Fsa) -> BTreeMap<Vec<i32>, f64> {
    let arcs = fsa.arcs().values();
    let mut groups: BTreeMap<Vec<i32>, Vec<f64>> = BTreeMap::new();
    for (path, score) in paths(fsa) {
        let seq = path
            .iter()
            .map(|&i| arcs[i].label)
            .filter(|&x| x != -1)
            .collect();
        groups.entry(seq).or_default().push(score);
    }
    groups
        .into_iter()
        .map(|(k, v)| (k, log_sum(v.into_iter())))
        .collect()
}

#[track_caller]
fn assert_close<K: Ord + std::fmt::Debug>(
    got: &BTreeMap<K, f64>,
    want: &BTreeMap<K, f64>,
    tol: f64,
) {
    let got_keys: Vec<&K> = got.keys().collect();
    let want_keys: Vec<&K> = want.keys().collect();
    assert_eq!(got_keys, want_keys, "accepted sequences differ");
    for (k, w) in want {
        let g = got[k];
        assert!((g - w).abs() <= tol, "{k:?}: got {g}, want {w}");
    }
}

/// Random acyclic acceptor with labels 0..4 (0 is epsilon where it matters).
fn acceptor(rng: &mut Rng, max_states: u64) -> Fsa {
    random_acyclic(rng, max_states)
}

/// The same with no epsilon: labels 1..5.
fn epsilon_free(rng: &mut Rng, max_states: u64) -> Fsa {
    let fsa = random_acyclic(rng, max_states);
    let arcs: Vec<Arc> = fsa
        .arcs()
        .values()
        .iter()
        .map(|a| {
            Arc::new(
                a.src_state,
                a.dest_state,
                if a.label == 0 { 5 } else { a.label },
                a.score,
            )
        })
        .collect();
    Fsa::from_arcs(arcs, fsa.num_states()).unwrap()
}

/// A random acyclic transducer: labels as `acceptor`, aux labels 0..3 (-1 on final arcs).
fn transducer(rng: &mut Rng, max_states: u64) -> Fsa {
    let fsa = random_acyclic(rng, max_states);
    let aux: Vec<i32> = fsa
        .arcs()
        .values()
        .iter()
        .map(|a| {
            if a.label == -1 {
                -1
            } else {
                rng.below(4) as i32
            }
        })
        .collect();
    fsa.with_attr("aux_labels", Attr::I32(aux)).unwrap()
}

fn aux_of(fsa: &Fsa) -> Vec<i32> {
    fsa.aux_labels().unwrap().as_i32().unwrap().to_vec()
}

fn is_deterministic(fsa: &Fsa) -> bool {
    (0..fsa.num_states()).all(|s| {
        let arcs = fsa.state_arcs(s);
        arcs.windows(2)
            .all(|w| (w[0].label as u32) < (w[1].label as u32))
    })
}

// ---- k2's documented examples ----

#[test]
fn intersect_k2_example_epsilon_as_symbol() {
    // k2's intersect_test.py: a recognizes (0|1)2*, b recognizes 1|2
    let a: Fsa = "0 1 0 0.1\n0 1 1 0.2\n1 1 2 0.3\n1 2 -1 0.4\n2"
        .parse()
        .unwrap();
    let b: Fsa = "0 1 1 1\n0 1 2 2\n1 2 -1 3\n2".parse().unwrap();
    let (c, a_map, b_map) = a.intersect(&b, false).unwrap();
    assert_eq!(tuples(&c), vec![(0, 1, 1, 1.2), (1, 2, -1, 3.4)]);
    assert_eq!(c.num_states(), 3);
    assert_eq!(a_map, vec![1, 3]);
    assert_eq!(b_map, vec![0, 2]);
}

#[test]
fn intersect_k2_example_epsilon_special_on_unsorted_input() {
    // k2's intersect_test.py (k2 needs arc_sort first; we sort inside)
    let a: Fsa = "0 1 3 0.0\n0 1 1 0.2\n0 1 0 0.1\n1 1 2 0.3\n1 2 -1 0.4\n2"
        .parse()
        .unwrap();
    let b: Fsa = "0 1 5 0\n0 1 1 1\n0 1 2 2\n1 2 -1 3\n2".parse().unwrap();
    let (c, a_map, b_map) = a.intersect(&b, true).unwrap();
    assert_eq!(
        tuples(&c),
        vec![
            (0, 1, 0, 0.1),
            (0, 2, 1, 1.2),
            (1, 2, 2, 2.3),
            (2, 3, -1, 3.4)
        ]
    );
    assert_eq!(a_map, vec![2, 1, 3, 4]);
    assert_eq!(b_map, vec![-1, 1, 2, 3]);
}

#[test]
fn intersect_attributes_follow_k2_rule() {
    let a: Fsa = "0 1 1 0.5\n1 2 -1 0\n2".parse().unwrap();
    let b: Fsa = "0 0 0 0.25\n0 1 1 1\n1 2 -1 0\n2".parse().unwrap();
    let a = a
        .with_attr("w", Attr::F32(vec![1.0, 2.0]))
        .unwrap()
        .with_attr("ia", Attr::I32(vec![7, 8]))
        .unwrap()
        .with_attr("both", Attr::I32(vec![1, 1]))
        .unwrap();
    let b = b
        .with_attr("w", Attr::F32(vec![10.0, 20.0, 30.0]))
        .unwrap()
        .with_attr("both", Attr::I32(vec![2, 2, 2]))
        .unwrap();
    let (c, a_map, b_map) = a.intersect(&b, true).unwrap();
    // (0,0): b's epsilon self-loop first, then label 1; (1,1): -1
    assert_eq!(a_map, vec![-1, 0, 1]);
    assert_eq!(b_map, vec![0, 1, 2]);
    assert_eq!(c.attr("w"), Some(&Attr::F32(vec![10.0, 21.0, 32.0])));
    assert_eq!(c.attr("ia"), Some(&Attr::I32(vec![0, 7, 8])));
    assert!(
        c.attr("both").is_none(),
        "integer attributes of both sides are dropped"
    );
}

#[test]
fn compose_example_with_inner_labels() {
    // a: 1:10 then 2:0 ; b: 10:100 ; result 1:100 then 2:eps
    let a = Fsa::from_text(
        "0 1 1 10 0.5\n1 2 2 0 0.25\n2 3 -1 -1 0\n3",
        &ragged_fsa::TextFormat::transducer(),
    )
    .unwrap();
    let b = Fsa::from_text(
        "0 1 10 100 1\n1 2 -1 -1 0\n2",
        &ragged_fsa::TextFormat::transducer(),
    )
    .unwrap();
    let (c, a_map, b_map) = a.compose_with_inner_labels(&b, true, "inner").unwrap();
    assert_eq!(
        tuples(&c),
        vec![(0, 1, 1, 1.5), (1, 2, 2, 0.25), (2, 3, -1, 0.0)]
    );
    assert_eq!(a_map, vec![0, 1, 2]);
    assert_eq!(b_map, vec![0, -1, 1]);
    assert_eq!(c.aux_labels(), Some(&Attr::I32(vec![100, 0, -1])));
    assert_eq!(c.attr("inner"), Some(&Attr::I32(vec![10, 0, -1])));
    // b as an acceptor: aux labels are the matched labels
    let b_acc: Fsa = "0 1 10 1\n1 2 -1 0\n2".parse().unwrap();
    let (c, _, _) = a.compose(&b_acc, true).unwrap();
    assert_eq!(c.aux_labels(), Some(&Attr::I32(vec![10, 0, -1])));
    assert_eq!(c.labels(), vec![1, 2, -1]);
}

#[test]
fn remove_epsilon_example_with_ragged_aux_labels() {
    // 0 -eps:5/1-> 1 -a:6/2-> 2 -final-> 3 ; eps chain folds into the a arc
    let fsa = Fsa::from_text(
        "0 1 0 5 1\n0 2 8 0 0.5\n1 2 7 6 2\n2 3 -1 -1 0.25\n3",
        &ragged_fsa::TextFormat::transducer(),
    )
    .unwrap();
    let (out, derivs) = fsa.remove_epsilon().unwrap();
    assert_eq!(
        tuples(&out),
        vec![(0, 1, 7, 3.0), (0, 1, 8, 0.5), (1, 2, -1, 0.25)]
    );
    assert_eq!(derivs.to_vec_vec(), vec![vec![0, 2], vec![1], vec![3]]);
    assert_eq!(
        out.aux_labels().unwrap().as_ragged().unwrap().to_vec_vec(),
        vec![vec![5, 6], vec![], vec![]]
    );
    let (with_loops, derivs) = fsa.remove_epsilon_and_add_self_loops().unwrap();
    assert_eq!(
        tuples(&with_loops),
        vec![
            (0, 0, 0, 0.0),
            (0, 1, 7, 3.0),
            (0, 1, 8, 0.5),
            (1, 1, 0, 0.0),
            (1, 2, -1, 0.25)
        ]
    );
    assert_eq!(
        derivs.to_vec_vec(),
        vec![vec![], vec![0, 2], vec![1], vec![], vec![3]]
    );
}

#[test]
fn remove_epsilon_handles_cycles_and_rejects_positive_epsilon_cycles() {
    // epsilon loop 1 <-> 2 with negative score, and a labelled loop on 1
    let fsa: Fsa = "0 1 1 0\n1 2 0 -1\n1 1 2 -0.5\n2 1 0 -1\n2 3 -1 0\n3"
        .parse()
        .unwrap();
    let (out, _) = fsa.remove_epsilon().unwrap();
    assert!(out.labels().iter().all(|&l| l != 0));
    // paths: 1, then 2*, then the eps to 2 (-1), then final
    assert_eq!(
        tuples(&out),
        vec![(0, 1, 1, 0.0), (1, 1, 2, -0.5), (1, 2, -1, -1.0)]
    );
    let bad: Fsa = "0 1 0 1\n1 0 0 -0.5\n1 2 -1 0\n2".parse().unwrap();
    assert_eq!(
        bad.remove_epsilon().map(|_| ()),
        Err(Error::PositiveEpsilonCycle { fsa: 0, state: 0 })
    );
}

#[test]
fn determinize_example_and_errors() {
    // two arcs labelled 1 from the start: merged; without pushing the scores wait until
    // the best paths meet again (k2 1.23.2's kNoWeightPushing output, arc for arc)
    let fsa: Fsa = "0 1 1 1\n0 2 1 2\n1 3 2 0\n2 3 2 0.5\n3 4 -1 0\n4"
        .parse()
        .unwrap();
    let (det, derivs) = fsa.determinize(WeightPushing::None).unwrap();
    assert_eq!(
        tuples(&det),
        vec![(0, 1, 1, 0.0), (1, 2, 2, 2.5), (2, 3, -1, 0.0)]
    );
    // eager scores: the best score so far on each arc (k2's kTropicalWeightPushing output)
    let (eager, _) = fsa.determinize(WeightPushing::Eager).unwrap();
    assert_eq!(
        tuples(&eager),
        vec![(0, 1, 1, 2.0), (1, 2, 2, 0.5), (2, 3, -1, 0.0)]
    );
    // one entry per input state reached: both label-2 arcs reach state 3, the best wins
    assert_eq!(derivs.to_vec_vec(), vec![vec![1, 0], vec![3], vec![4]]);
    let eps: Fsa = "0 1 0 1\n1 2 -1 0\n2".parse().unwrap();
    assert_eq!(
        eps.determinize(WeightPushing::None).map(|_| ()),
        Err(Error::HasEpsilon {
            op: "determinize",
            fsa: 0,
            arc: 0
        })
    );
    // a transducer: outputs and scores come out with the input arcs the best paths share,
    // so both wait until the paths meet (k2 1.23.2's output, arc for arc)
    let fst = Fsa::from_text(
        "0 1 1 10 1\n0 2 1 10 2\n1 3 2 11 0\n2 3 3 12 0\n3 4 -1 -1 0\n4",
        &ragged_fsa::TextFormat::transducer(),
    )
    .unwrap();
    let (det, _) = fst.determinize(WeightPushing::None).unwrap();
    assert_eq!(
        tuples(&det),
        vec![
            (0, 1, 1, 0.0),
            (1, 2, 2, 1.0),
            (1, 2, 3, 2.0),
            (2, 3, -1, 0.0)
        ]
    );
    assert_eq!(
        det.aux_labels().unwrap().as_ragged().unwrap().to_vec_vec(),
        vec![vec![], vec![10, 11], vec![10, 12], vec![]]
    );
    // another attribute follows each output arc's best input arc (arc 1 beats arc 0 into
    // the first subset); the aux labels stay the construction's
    let tagged = fst
        .clone()
        .with_attr("tag", ragged_fsa::Attr::F32(vec![0.5, 1.5, 2.5, 3.5, 4.5]))
        .unwrap();
    let (det, _) = tagged.determinize(WeightPushing::None).unwrap();
    assert_eq!(
        det.attrs().get("tag"),
        Some(&ragged_fsa::Attr::F32(vec![1.5, 2.5, 3.5, 4.5]))
    );
    assert_eq!(
        det.aux_labels().unwrap().as_ragged().unwrap().to_vec_vec(),
        vec![vec![], vec![10, 11], vec![10, 12], vec![]]
    );
    // with tropical pushing the scores go as far forward as they can
    let (pushed, _) = fst.determinize(WeightPushing::Tropical).unwrap();
    assert_eq!(
        tuples(&pushed),
        vec![
            (0, 1, 1, 2.0),
            (1, 2, 2, -1.0),
            (1, 2, 3, 0.0),
            (2, 3, -1, 0.0)
        ]
    );
}

#[test]
fn determinize_stops_at_the_bound_without_the_twins_property() {
    // a b* c | a b* d with b costing differently on the two branches: not determinizable
    let fsa: Fsa = "0 1 1 0\n0 2 1 0\n1 1 2 -1\n1 3 3 0\n2 2 2 -2\n2 3 4 0\n3 4 -1 0\n4"
        .parse()
        .unwrap();
    let config = DeterminizeConfig {
        max_states: 1000,
        max_arcs: 100_000,
        ..DeterminizeConfig::default()
    };
    let err = fsa.determinize_with(&config).unwrap_err();
    assert_eq!(
        err,
        Error::DeterminizeLimit {
            fsa: 0,
            max_states: 1000,
            max_arcs: 100_000
        }
    );
    assert_eq!(
        err.to_string(),
        "determinizing FSA 0 passed the bound of 1000 states or 100000 arcs (is it determinizable?)"
    );
    // with equal loop costs it is determinizable
    let ok: Fsa = "0 1 1 0\n0 2 1 0\n1 1 2 -1\n1 3 3 0\n2 2 2 -1\n2 3 4 0\n3 4 -1 0\n4"
        .parse()
        .unwrap();
    let (det, _) = ok.determinize_with(&config).unwrap();
    assert!(is_deterministic(&det));
    assert_eq!(det.num_states(), 4);
}

#[test]
fn minimize_example_and_errors() {
    // two identical branches after a fork on labels 1 and 2 merge
    let fsa: Fsa = "0 1 1 0\n0 2 2 0\n1 3 3 0.5\n2 3 3 0.5\n3 4 -1 0\n4"
        .parse()
        .unwrap();
    let (min, arc_map) = fsa.minimize().unwrap();
    assert_eq!(
        tuples(&min),
        vec![
            (0, 1, 1, 0.0),
            (0, 1, 2, 0.0),
            (1, 2, 3, 0.5),
            (2, 3, -1, 0.0)
        ]
    );
    assert_eq!(arc_map, vec![0, 1, 2, 4]);
    // different scores keep them apart (the score is part of the encoded symbol)
    let apart: Fsa = "0 1 1 0\n0 2 2 0\n1 3 3 0.5\n2 3 3 0.75\n3 4 -1 0\n4"
        .parse()
        .unwrap();
    assert_eq!(apart.minimize().unwrap().0.num_states(), 5);
    let nondet: Fsa = "0 1 1 0\n0 2 1 0\n1 3 -1 0\n2 3 -1 0\n3".parse().unwrap();
    assert_eq!(
        nondet.minimize().map(|_| ()),
        Err(Error::NotDeterministic {
            fsa: 0,
            state: 0,
            label: 1
        })
    );
}

/// k2's `intersect` matches labels and carries a transducer's `aux_labels` through the arc
/// map (k2's ctc_topo_test intersects a CTC graph with a linear acceptor): by hand, `1:7 2:8`
/// against the acceptor `1 2` is itself; against `1 3` it has only the first arc, kept.
#[test]
fn intersect_carries_the_aux_labels_of_a_transducer() {
    let fst = Fsa::linear_fst(&[1, 2], &[7, 8]).unwrap();
    for (a, b, fst_side) in [
        (&fst, &Fsa::linear(&[1, 2]).unwrap(), 0),
        (&Fsa::linear(&[1, 2]).unwrap(), &fst, 1),
    ] {
        let (out, a_map, b_map) = a.intersect(b, true).unwrap();
        let labels: Vec<i32> = out.arcs().values().iter().map(|arc| arc.label).collect();
        assert_eq!(labels, [1, 2, -1]);
        assert_eq!(out.aux_labels(), Some(&Attr::I32(vec![7, 8, -1])));
        assert_eq!([a_map, b_map][fst_side], [0, 1, 2]);
    }
    let (dead_end, _, _) = fst.intersect(&Fsa::linear(&[1, 3]).unwrap(), true).unwrap();
    assert_eq!(dead_end.aux_labels(), Some(&Attr::I32(vec![7])));
}

#[test]
fn errors_name_the_operand() {
    let acc = Fsa::linear(&[1]).unwrap();
    assert_eq!(
        Error::NotAcceptor {
            op: "intersect",
            operand: "b"
        }
        .to_string(),
        "intersect needs acceptors, but operand b has aux_labels (a transducer)"
    );
    assert!(matches!(
        acc.compose(&acc, true),
        Err(Error::MissingAttr { ref name, .. }) if name == "aux_labels"
    ));
    let two = create_fsa_vec(&[acc.clone(), acc.clone()]);
    let three = create_fsa_vec(&[acc.clone(), acc.clone(), acc.clone()]);
    assert_eq!(
        two.intersect(&three, true).map(|_| ()),
        Err(Error::FsaCountMismatch { a: 2, b: 3 })
    );
    assert_eq!(
        two.intersect_with_map(&three, &[0, 1, 2], true).map(|_| ()),
        Err(Error::FsaIndexOutOfRange {
            position: 2,
            index: 2,
            num_fsas: 2
        })
    );
}

#[test]
fn empty_inputs_give_empty_results() {
    let empty = Fsa::empty();
    let one = Fsa::linear(&[1]).unwrap();
    assert_eq!(empty.intersect(&one, true).unwrap().0.num_states(), 0);
    assert_eq!(one.intersect(&empty, false).unwrap().0.num_states(), 0);
    assert_eq!(empty.remove_epsilon().unwrap().0.num_states(), 0);
    assert_eq!(
        empty
            .determinize(WeightPushing::Tropical)
            .unwrap()
            .0
            .num_states(),
        0
    );
    assert_eq!(empty.minimize().unwrap().0.num_states(), 0);
    // nothing accepted in common: not connected (as k2) but no path
    let two = Fsa::linear(&[2]).unwrap();
    let (c, _, _) = one.intersect(&two, true).unwrap();
    assert!(paths(&c).is_empty());
}

#[test]
fn fsa_vec_batches_pairwise_and_one_against_many_in_parallel() {
    let mut rng = Rng(77);
    let many: Vec<Fsa> = (0..48).map(|_| acceptor(&mut rng, 12)).collect();
    let others: Vec<Fsa> = (0..48).map(|_| acceptor(&mut rng, 12)).collect();
    let a = create_fsa_vec(&many);
    let b = create_fsa_vec(&others);
    // make the batch big enough for the parallel path
    let big_a = create_fsa_vec(
        &many
            .iter()
            .cycle()
            .take(48 * 20)
            .cloned()
            .collect::<Vec<_>>(),
    );
    let big_b = create_fsa_vec(
        &others
            .iter()
            .cycle()
            .take(48 * 20)
            .cloned()
            .collect::<Vec<_>>(),
    );
    assert!(big_a.num_arcs() >= PARALLEL_MIN_ARCS);
    for (va, vb) in [(&a, &b), (&big_a, &big_b)] {
        let (c, a_map, b_map) = va.intersect(vb, true).unwrap();
        let a_offsets = offsets(va);
        let b_offsets = offsets(vb);
        let mut arc = 0;
        for i in 0..va.num_fsas() {
            let (want, am, bm) = va.get(i).intersect(&vb.get(i), true).unwrap();
            assert_eq!(c.get(i), want);
            for k in 0..want.num_arcs() {
                let expect_a = if am[k] < 0 { -1 } else { am[k] + a_offsets[i] };
                let expect_b = if bm[k] < 0 { -1 } else { bm[k] + b_offsets[i] };
                assert_eq!((a_map[arc], b_map[arc]), (expect_a, expect_b));
                arc += 1;
            }
        }
    }
    // one against many, and through a map
    let single = create_fsa_vec(&[many[0].clone()]);
    let (c, _, _) = single.intersect(&b, false).unwrap();
    let (d, _, _) = a
        .intersect_with_map(&b, &vec![0; b.num_fsas()], false)
        .unwrap();
    assert_eq!(c, d);
    for (i, other) in others.iter().enumerate() {
        assert_eq!(c.get(i), many[0].intersect(other, false).unwrap().0);
    }
    // compose batches the same way
    let fsts: Vec<Fsa> = (0..6).map(|_| transducer(&mut rng, 6)).collect();
    let accs: Vec<Fsa> = (0..6).map(|_| acceptor(&mut rng, 6)).collect();
    let (composed, a_map, b_map) = create_fsa_vec(&fsts)
        .compose(&create_fsa_vec(&accs), true)
        .unwrap();
    let mut arc = 0;
    for i in 0..fsts.len() {
        let (want, _, _) = fsts[i].compose(&accs[i], true).unwrap();
        assert_eq!(composed.get(i), want);
        arc += want.num_arcs();
    }
    assert_eq!((a_map.len(), b_map.len()), (arc, arc));
    // the unary ops agree with the per-FSA ones
    let ef: Vec<Fsa> = (0..40).map(|_| epsilon_free(&mut rng, 10)).collect();
    let v = create_fsa_vec(&ef);
    let (det, derivs) = v.determinize(WeightPushing::Log).unwrap();
    let (min, _) = det.minimize().unwrap();
    let (rm, _) = a.remove_epsilon().unwrap();
    let mut total_derivs = 0;
    for i in 0..ef.len() {
        let (want, want_derivs) = ef[i].determinize(WeightPushing::Log).unwrap();
        assert_eq!(det.get(i), want);
        total_derivs += want_derivs.values().len();
        assert_eq!(min.get(i), want.minimize().unwrap().0);
        assert_eq!(rm.get(i), many[i].remove_epsilon().unwrap().0);
    }
    assert_eq!(derivs.values().len(), total_derivs);
}

fn offsets(v: &FsaVec) -> Vec<i32> {
    let mut out = Vec::new();
    let mut total = 0;
    for i in 0..v.num_fsas() {
        out.push(total);
        total += v.get(i).num_arcs() as i32;
    }
    out
}

/// A random FSA with cycles (epsilon cycles included) whose epsilon arcs score at most 0,
/// so that no epsilon cycle is positive: labels 0..3 on inner arcs, `-1` into the final
/// state.
fn cyclic_with_epsilons(rng: &mut Rng, max_states: u64) -> Fsa {
    let n = 2 + rng.below(max_states - 1) as i32;
    let mut arcs = Vec::new();
    for s in 0..n - 1 {
        for _ in 0..rng.below(4) {
            let d = rng.below(n as u64) as i32;
            let label = if d == n - 1 { -1 } else { rng.below(4) as i32 };
            let score = if label == 0 {
                -rng.score().abs()
            } else {
                rng.score()
            };
            arcs.push(Arc::new(s, d, label, score));
        }
    }
    Fsa::from_arcs(arcs, n as usize).unwrap()
}

/// The best score with which an FSA (cycles allowed, no positive epsilon cycle) accepts
/// `seq` (label 0 is epsilon), by relaxing the (position, state) trellis to a fixed point;
/// `-inf` when it does not accept it.
fn best_score_of(fsa: &Fsa, seq: &[i32]) -> f64 {
    let n = fsa.num_states();
    if n == 0 {
        return f64::NEG_INFINITY;
    }
    let arcs = fsa.arcs().values();
    // positions 0..=len, then one more for the final -1
    let mut best = vec![vec![f64::NEG_INFINITY; n]; seq.len() + 2];
    best[0][0] = 0.0;
    for pos in 0..seq.len() + 2 {
        // epsilons within a position until nothing improves
        loop {
            let mut changed = false;
            for a in arcs.iter().filter(|a| a.label == 0) {
                let cand = best[pos][a.src_state as usize] + a.score as f64;
                if cand > best[pos][a.dest_state as usize] + 1e-9 {
                    best[pos][a.dest_state as usize] = cand;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        if pos == seq.len() + 1 {
            break;
        }
        let want = if pos < seq.len() { seq[pos] } else { -1 };
        for a in arcs.iter().filter(|a| a.label == want) {
            let cand = best[pos][a.src_state as usize] + a.score as f64;
            if cand > best[pos + 1][a.dest_state as usize] {
                best[pos + 1][a.dest_state as usize] = cand;
            }
        }
    }
    best[seq.len() + 1][n - 1]
}

// ---- brute force ----

proptest! {
    #![proptest_config(common::proptest_config(96, PROPTEST_SEED))]

    #[test]
    fn intersect_with_ordinary_zero_is_exact_in_log(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let a = acceptor(&mut rng, 7);
        let b = acceptor(&mut rng, 7);
        let (c, a_map, b_map) = a.intersect(&b, false).unwrap();
        let (la, lb) = (log_totals(&a), log_totals(&b));
        let mut want = BTreeMap::new();
        for (seq, x) in &la {
            if let Some(y) = lb.get(seq) {
                want.insert(seq.clone(), x + y);
            }
        }
        assert_close(&log_totals(&c), &want, 1e-4);
        // each result arc is the sum of the arcs it maps to
        for (k, arc) in c.arcs().values().iter().enumerate() {
            let sa = a.arcs().values()[a_map[k] as usize];
            let sb = b.arcs().values()[b_map[k] as usize];
            prop_assert_eq!(arc.label, sa.label);
            prop_assert_eq!(sa.label, sb.label);
            prop_assert!((arc.score - (sa.score + sb.score)).abs() < 1e-6);
        }
    }

    #[test]
    fn intersect_with_epsilons_is_exact_in_tropical(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let a = acceptor(&mut rng, 7);
        let b = acceptor(&mut rng, 7);
        let (c, _, _) = a.intersect(&b, true).unwrap();
        let (ba, bb) = (best(&a, true), best(&b, true));
        let mut want = BTreeMap::new();
        for (seq, x) in &ba {
            if let Some(y) = bb.get(seq) {
                want.insert(seq.clone(), x + y);
            }
        }
        assert_close(&best(&c, true), &want, 1e-4);
    }

    #[test]
    fn compose_matches_brute_force(seed in any::<u64>(), b_is_acceptor in any::<bool>()) {
        let mut rng = Rng(seed);
        let a = transducer(&mut rng, 6);
        let b = if b_is_acceptor { acceptor(&mut rng, 6) } else { transducer(&mut rng, 6) };
        let (c, _, _) = a.compose(&b, true).unwrap();
        let pa = best_pairs(&a, Some(&aux_of(&a)), true);
        let b_aux = if b_is_acceptor { None } else { Some(aux_of(&b)) };
        let pb = best_pairs(&b, b_aux.as_deref(), true);
        let mut want: BTreeMap<Key, f64> = BTreeMap::new();
        for ((ia, oa), x) in &pa {
            for ((ib, ob), y) in &pb {
                if oa == ib {
                    let e = want.entry((ia.clone(), ob.clone())).or_insert(f64::NEG_INFINITY);
                    *e = e.max(x + y);
                }
            }
        }
        let got = best_pairs(&c, Some(&aux_of(&c)), true);
        assert_close(&got, &want, 1e-4);
    }

    #[test]
    fn remove_epsilon_keeps_tropical_scores(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let a = acceptor(&mut rng, 8);
        let (out, derivs) = a.remove_epsilon().unwrap();
        prop_assert!(out.labels().iter().all(|&l| l != 0));
        assert_close(&best(&out, false), &best(&a, true), 1e-4);
        // each arc's score is the sum of its derivs, ending in an arc with its label
        for (k, arc) in out.arcs().values().iter().enumerate() {
            let row = &derivs.to_vec_vec()[k];
            let sum: f32 = row.iter().map(|&j| a.arcs().values()[j as usize].score).sum();
            prop_assert!((arc.score - sum).abs() < 1e-4);
            prop_assert_eq!(a.arcs().values()[*row.last().unwrap() as usize].label, arc.label);
        }
    }

    #[test]
    fn remove_epsilon_of_cyclic_fsas_keeps_tropical_scores(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let a = cyclic_with_epsilons(&mut rng, 6);
        let (out, derivs) = a.remove_epsilon().unwrap();
        prop_assert!(out.labels().iter().all(|&l| l != 0));
        // every label sequence of length up to 3 keeps its best score
        let mut seqs: Vec<Vec<i32>> = vec![vec![]];
        for len in 1..=3usize {
            for code in 0..3usize.pow(len as u32) {
                seqs.push((0..len).map(|k| 1 + (code / 3usize.pow(k as u32) % 3) as i32).collect());
            }
        }
        for seq in &seqs {
            let (want, got) = (best_score_of(&a, seq), best_score_of(&out, seq));
            prop_assert!(
                want == got || (want - got).abs() < 1e-4,
                "{:?}: {} after remove_epsilon, {} before", seq, got, want
            );
        }
        // each arc stands for a path of the input: one real label, scores summed
        let rows = derivs.to_vec_vec();
        let input = a.arcs().values();
        for (k, arc) in out.arcs().values().iter().enumerate() {
            let row = &rows[k];
            let sum: f32 = row.iter().map(|&j| input[j as usize].score).sum();
            prop_assert!((arc.score - sum).abs() < 1e-4);
            let labels: Vec<i32> = row.iter().map(|&j| input[j as usize].label).filter(|&l| l != 0).collect();
            prop_assert_eq!(labels, vec![arc.label]);
            for w in row.windows(2) {
                prop_assert_eq!(input[w[0] as usize].dest_state, input[w[1] as usize].src_state);
            }
        }
    }

    #[test]
    fn determinize_and_minimize_keep_tropical_scores(seed in any::<u64>(), push in 0..4u8) {
        let mut rng = Rng(seed);
        let a = epsilon_free(&mut rng, 8);
        let pushing = [WeightPushing::None, WeightPushing::Tropical, WeightPushing::Log, WeightPushing::Eager][push as usize];
        let (det, _) = a.determinize(pushing).unwrap();
        prop_assert!(is_deterministic(&det));
        let want = best(&a, false);
        assert_close(&best(&det, false), &want, 1e-3);
        let (min, _) = det.minimize().unwrap();
        prop_assert!(is_deterministic(&min));
        prop_assert!(min.num_states() <= det.num_states());
        assert_close(&best(&min, false), &want, 1e-3);
        if pushing == WeightPushing::Tropical && !want.is_empty() {
            // tropical pushing: the best arc out of every state but the start scores 0
            for s in 1..det.num_states() - 1 {
                let best = det.state_arcs(s).iter().map(|a| a.score).fold(f32::NEG_INFINITY, f32::max);
                prop_assert!(best.abs() < 1e-3, "state {} best arc {}", s, best);
            }
        }
        if pushing == WeightPushing::Log && !want.is_empty() {
            // log pushing: every state but the start sums to probability one
            let arcs = det.arcs().values();
            for s in 1..det.num_states() - 1 {
                let total = log_sum(det.state_arcs(s).iter().map(|a| a.score as f64));
                prop_assert!(total.abs() < 1e-3, "state {} sums to {}", s, total);
            }
            prop_assert!(!arcs.is_empty());
        }
    }

    #[test]
    fn determinize_of_a_transducer_keeps_a_best_paths_output(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let plain = transducer(&mut rng, 7);
        // epsilon-free input labels
        let arcs: Vec<Arc> = plain
            .arcs()
            .values()
            .iter()
            .map(|a| Arc::new(a.src_state, a.dest_state, if a.label == 0 { 5 } else { a.label }, a.score))
            .collect();
        let a = Fsa::from_arcs(arcs, plain.num_states())
            .unwrap()
            .with_attr("aux_labels", plain.aux_labels().unwrap().clone())
            .unwrap();
        let (det, _) = a.determinize(WeightPushing::None).unwrap();
        prop_assert!(is_deterministic(&det));
        let want = best_pairs(&a, Some(&aux_of(&a)), true);
        let out_aux = det.aux_labels().unwrap().as_ragged().unwrap().to_vec_vec();
        let det_arcs = det.arcs().values();
        let mut seen = 0;
        for (path, score) in paths(&det) {
            let input: Vec<i32> = path.iter().map(|&i| det_arcs[i].label).filter(|&x| x != -1).collect();
            let output: Vec<i32> = path.iter().flat_map(|&i| out_aux[i].clone()).collect();
            let best_score = want
                .iter()
                .filter(|((i, _), _)| *i == input)
                .map(|(_, &s)| s)
                .fold(f64::NEG_INFINITY, f64::max);
            prop_assert!((score - best_score).abs() < 1e-3, "{:?}: {} vs {}", input, score, best_score);
            let best_output_score = want.get(&(input.clone(), output.clone())).copied();
            prop_assert!(
                best_output_score.is_some_and(|s| (s - best_score).abs() < 1e-3),
                "{:?} -> {:?} is not a best path's output", input, output
            );
            seen += 1;
        }
        let inputs: std::collections::BTreeSet<&Vec<i32>> = want.keys().map(|(i, _)| i).collect();
        prop_assert_eq!(seen, inputs.len());
    }
}
