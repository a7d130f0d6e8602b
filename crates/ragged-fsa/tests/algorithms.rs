//! The algorithms against hand-worked examples and naive models: brute-force path
//! enumeration, reachability by fixed point, NFA simulation.

use crate::common;

use std::collections::BTreeSet;

use common::{log_sum, path_labels, paths, random_acyclic, random_cyclic, tuples, Rng};
use proptest::prelude::*;
use ragged_fsa::{
    create_fsa_vec, Arc, Attr, Error, Fsa, FsaVec, Properties, Semiring, PARALLEL_MIN_ARCS,
};

/// The fixed seed of the property tests; `PROPTEST_RNG_SEED` runs another.
const PROPTEST_SEED: u64 = 0x5EED_2026_0017;

/// Tags every arc with its index, to see where attributes travel.
fn tagged(fsa: Fsa) -> Fsa {
    let idx: Vec<i32> = (0..fsa.num_arcs() as i32).collect();
    let w: Vec<f32> = idx.iter().map(|&i| i as f32 + 0.5).collect();
    fsa.with_attr("idx", Attr::I32(idx))
        .unwrap()
        .with_attr("w", Attr::F32(w))
        .unwrap()
}

/// Attributes must equal a gather through the arc map (0 where the map is -1).
#[track_caller]
fn check_attrs_follow(out: &Fsa, arc_map: &[i32]) {
    let idx: Vec<i32> = arc_map.iter().map(|&m| m.max(0)).collect();
    let w: Vec<f32> = arc_map
        .iter()
        .map(|&m| if m < 0 { 0.0 } else { m as f32 + 0.5 })
        .collect();
    assert_eq!(out.attr("idx"), Some(&Attr::I32(idx)));
    assert_eq!(out.attr("w"), Some(&Attr::F32(w)));
}

/// Whether the FSA accepts `labels` (epsilon 0 and the final -1 are free moves).
fn accepts(fsa: &Fsa, labels: &[i32]) -> bool {
    accepts_with(fsa, labels, true)
}

/// Whether the FSA accepts `labels` with 0 read as a symbol (CTC's blank), only -1 free.
fn accepts_symbols(fsa: &Fsa, labels: &[i32]) -> bool {
    accepts_with(fsa, labels, false)
}

fn accepts_with(fsa: &Fsa, labels: &[i32], epsilon_free_move: bool) -> bool {
    let Some(final_state) = fsa.final_state() else {
        return false;
    };
    let closure = |set: BTreeSet<usize>| {
        let mut set = set;
        loop {
            let mut grown = set.clone();
            for &s in &set {
                for arc in fsa.state_arcs(s) {
                    if (epsilon_free_move && arc.label == 0) || arc.label == -1 {
                        grown.insert(arc.dest_state as usize);
                    }
                }
            }
            if grown == set {
                return set;
            }
            set = grown;
        }
    };
    let mut current = closure(BTreeSet::from([0]));
    for &l in labels {
        let mut next = BTreeSet::new();
        for &s in &current {
            for arc in fsa.state_arcs(s) {
                if arc.label == l {
                    next.insert(arc.dest_state as usize);
                }
            }
        }
        current = closure(next);
    }
    current.contains(&final_state)
}

#[test]
fn arc_sort_example() {
    let fsa: Fsa = "0 1 2 0.1\n0 2 -1 0.2\n0 1 1 0.3\n0 1 0 0.4\n1 2 -1 0.5\n2\n"
        .parse()
        .unwrap();
    assert!(!fsa.properties().contains(Properties::ARC_SORTED));
    let (sorted, arc_map) = tagged(fsa).arc_sort();
    assert_eq!(
        tuples(&sorted),
        vec![
            (0, 1, 0, 0.4),
            (0, 1, 1, 0.3),
            (0, 1, 2, 0.1),
            (0, 2, -1, 0.2),
            (1, 2, -1, 0.5)
        ]
    );
    assert_eq!(arc_map, vec![3, 2, 0, 1, 4]);
    check_attrs_follow(&sorted, &arc_map);
    assert!(sorted.properties().contains(Properties::ARC_SORTED));
}

#[test]
fn top_sort_example() {
    // states 1 and 2 in the wrong order
    let fsa: Fsa = "0 2 1 0.1\n1 3 -1 0.2\n2 1 2 0.3\n3\n".parse().unwrap();
    assert!(!fsa.properties().contains(Properties::TOPSORTED));
    let (sorted, arc_map) = tagged(fsa).top_sort().unwrap();
    assert_eq!(
        tuples(&sorted),
        vec![(0, 1, 1, 0.1), (1, 2, 2, 0.3), (2, 3, -1, 0.2)]
    );
    assert_eq!(arc_map, vec![0, 2, 1]);
    check_attrs_follow(&sorted, &arc_map);
    let cyclic: Fsa = "0 1 1 0\n1 2 2 0\n2 1 3 0\n2 3 -1 0\n3\n".parse().unwrap();
    assert!(matches!(
        cyclic.top_sort(),
        Err(Error::Cycle { fsa: 0, .. })
    ));
}

#[test]
fn connect_example() {
    // state 2 cannot reach the final state; state 3 is unreachable
    let fsa: Fsa = "0 1 1 0.1\n0 2 2 0.2\n1 4 -1 0.3\n3 4 -1 0.4\n4\n"
        .parse()
        .unwrap();
    let (connected, arc_map) = tagged(fsa).connect();
    assert_eq!(tuples(&connected), vec![(0, 1, 1, 0.1), (1, 2, -1, 0.3)]);
    assert_eq!(arc_map, vec![0, 2]);
    check_attrs_follow(&connected, &arc_map);
}

#[test]
fn invert_swaps_labels_and_aux_labels() {
    let fst = Fsa::linear_fst(&[1, 2], &[10, 20]).unwrap();
    let (inverted, arc_map) = fst.invert().unwrap();
    assert_eq!(inverted.labels(), vec![10, 20, -1]);
    assert_eq!(inverted.aux_labels(), Some(&Attr::I32(vec![1, 2, -1])));
    assert_eq!(arc_map, vec![0, 1, 2]);
    assert_eq!(inverted.invert().unwrap().0, fst);
}

#[test]
fn invert_expands_ragged_aux_labels() {
    // a word-level lexicon arc: phone 5 -> words [7 8], phone 6 -> no word
    let fsa: Fsa = "0 1 5 1.5\n1 2 6 0.5\n2 3 -1 0\n3\n".parse().unwrap();
    let ragged = ragged_core::Ragged::from_nested(vec![vec![7, 8], vec![], vec![-1]]).unwrap();
    let fsa = tagged(fsa.with_attr("aux_labels", Attr::Ragged(ragged)).unwrap());
    let (inverted, arc_map) = fsa.invert().unwrap();
    assert_eq!(
        tuples(&inverted),
        vec![
            (0, 1, 7, 1.5),
            (1, 2, 8, 0.0),
            (2, 3, 0, 0.5),
            (3, 4, -1, 0.0)
        ]
    );
    assert_eq!(inverted.aux_labels(), Some(&Attr::I32(vec![5, 0, 6, -1])));
    assert_eq!(arc_map, vec![0, -1, 1, 2]);
    check_attrs_follow(&inverted, &arc_map);
    assert!(inverted
        .properties()
        .contains(Properties::TOPSORTED_AND_ACYCLIC));
}

#[test]
fn closure_example_accepts_repetitions() {
    let fsa = tagged(Fsa::linear_fst(&[1, 2], &[3, 4]).unwrap());
    let (closed, arc_map) = fsa.closure();
    assert_eq!(
        tuples(&closed),
        vec![
            (0, 1, 1, 0.0),
            (0, 3, -1, 0.0),
            (1, 2, 2, 0.0),
            (2, 0, 0, 0.0)
        ]
    );
    assert_eq!(arc_map, vec![0, -1, 1, 2]);
    assert_eq!(closed.aux_labels(), Some(&Attr::I32(vec![3, -1, 4, 0])));
    for (input, expected) in [
        (vec![], true),
        (vec![1, 2], true),
        (vec![1, 2, 1, 2, 1, 2], true),
        (vec![1], false),
        (vec![2, 1], false),
    ] {
        assert_eq!(accepts(&closed, &input), expected, "{input:?}");
    }
}

#[test]
fn closure_arc_map_follows_k2s_doc() {
    // k2: "Assume that the original start state has two arcs, then the arc-map would be
    // [ 0 1 -1 2 3 ... ]"
    let fsa: Fsa = "0 1 1 0.5\n0 2 2 1.5\n1 3 -1 0\n2 3 -1 0.25\n3\n"
        .parse()
        .unwrap();
    let (closed, arc_map) = fsa.closure();
    assert_eq!(arc_map, vec![0, 1, -1, 2, 3]);
    assert_eq!(
        tuples(&closed),
        vec![
            (0, 1, 1, 0.5),
            (0, 2, 2, 1.5),
            (0, 3, -1, 0.0),
            (1, 0, 0, 0.0),
            (2, 0, 0, 0.25)
        ]
    );
    assert!(closed.properties().contains(Properties::VALID));
}

#[test]
fn union_example() {
    let fsas = FsaVec::linear(&[vec![1, 2], vec![3]]).unwrap();
    let (u, arc_map) = fsas.union();
    assert_eq!(
        tuples(&u),
        vec![
            (0, 1, 0, 0.0),
            (0, 4, 0, 0.0),
            (1, 2, 1, 0.0),
            (2, 3, 2, 0.0),
            (3, 6, -1, 0.0),
            (4, 5, 3, 0.0),
            (5, 6, -1, 0.0)
        ]
    );
    assert_eq!(arc_map, vec![-1, -1, 0, 1, 2, 3, 4]);
    assert!(accepts(&u, &[1, 2]) && accepts(&u, &[3]) && !accepts(&u, &[1]));
}

#[test]
fn reverse_example() {
    let fsa = Fsa::linear(&[1, 2, 3]).unwrap();
    let (rev, arc_map) = fsa.reverse();
    assert!(accepts(&rev, &[3, 2, 1]) && !accepts(&rev, &[1, 2, 3]));
    // k2's numbering: old final 4 -> 0, old start 0 -> 4, others unchanged, new final 5
    assert_eq!(
        tuples(&rev),
        vec![
            (0, 3, 0, 0.0),
            (1, 4, 1, 0.0),
            (2, 1, 2, 0.0),
            (3, 2, 3, 0.0),
            (4, 5, -1, 0.0)
        ]
    );
    assert_eq!(arc_map, vec![3, 0, 1, 2, -1]);
    assert!(rev.properties().contains(Properties::VALID));
}

#[test]
fn linear_fsa_batches_and_rejects_minus_one() {
    let v = FsaVec::linear(&[vec![1, 2], vec![], vec![5]]).unwrap();
    assert_eq!(v.num_fsas(), 3);
    assert_eq!(v.arcs().shape().row_splits(1), &[0, 4, 6, 9]);
    assert_eq!(v.get(1).labels(), vec![-1]);
    assert_eq!(
        FsaVec::linear(&[vec![1], vec![2, -1]]).unwrap_err(),
        Error::ReservedLabel {
            sequence: 1,
            position: 1
        }
    );
    let ragged: ragged_core::Ragged<i32> = "[ [ 1 2 ] [ ] [ 5 ] ]".parse().unwrap();
    assert_eq!(FsaVec::linear_from_ragged(&ragged).unwrap(), v);
    let fst = FsaVec::linear_fst(&[vec![1, 2], vec![3]], &[vec![4, 5], vec![6]]).unwrap();
    assert_eq!(fst.aux_labels(), Some(&Attr::I32(vec![4, 5, -1, 6, -1])));
    assert!(matches!(
        Fsa::linear_fst(&[1, 2], &[3]),
        Err(Error::LengthMismatch { .. })
    ));
}

/// Every output (the non-zero aux labels, in order) of the paths that read `input` and then
/// take a `-1` arc into the final state: a brute-force walk over all such paths.
fn outputs_of(fst: &Fsa, input: &[i32]) -> BTreeSet<Vec<i32>> {
    let aux = fst.aux_labels().unwrap().as_i32().unwrap();
    let splits = fst.arcs().shape().row_splits(1);
    let arcs = fst.arcs().values();
    let final_state = fst.final_state().unwrap();
    // (state, output so far) after reading a prefix of the input
    let mut current: Vec<(usize, Vec<i32>)> = vec![(0, Vec::new())];
    for &label in input {
        let mut next = Vec::new();
        for (state, out) in &current {
            for i in splits[*state] as usize..splits[*state + 1] as usize {
                if arcs[i].label == label {
                    let mut out = out.clone();
                    if aux[i] != 0 {
                        out.push(aux[i]);
                    }
                    next.push((arcs[i].dest_state as usize, out));
                }
            }
        }
        current = next;
    }
    let mut outputs = BTreeSet::new();
    for (state, out) in current {
        for i in splits[state] as usize..splits[state + 1] as usize {
            if arcs[i].label == -1 && arcs[i].dest_state as usize == final_state {
                assert_eq!(aux[i], -1, "a final arc outputs -1");
                outputs.insert(out.clone());
            }
        }
    }
    outputs
}

#[test]
fn ctc_topo_transduces_repeats_and_blanks() {
    // standard topology: "1 1 0 1 2 2" -> "1 1 2", by exactly one path
    let topo = Fsa::ctc_topo(2, false).unwrap();
    assert_eq!(topo.num_states(), 4);
    assert_eq!(topo.num_arcs(), 12);
    assert_eq!(
        outputs_of(&topo, &[1, 1, 0, 1, 2, 2]),
        BTreeSet::from([vec![1, 1, 2]])
    );
    // repeats collapse, blanks vanish
    assert_eq!(
        outputs_of(&topo, &[0, 2, 2, 2, 0, 0]),
        BTreeSet::from([vec![2]])
    );
    assert_eq!(
        outputs_of(&topo, &[1, 1, 2, 2, 1]),
        BTreeSet::from([vec![1, 2, 1]])
    );
    let (inv, _) = topo.invert().unwrap();
    // on the inverse, the output "1 1 2" is reachable through epsilons
    assert!(accepts(&inv, &[1, 1, 2]));
    let modified = Fsa::ctc_topo(2, true).unwrap();
    assert_eq!(modified.num_arcs(), 10);
    // the modified topology reads "1 1" as one 1 or as two, and still maps the alignment
    // to "1 1 2", never to "1 2" (the blank separates the two runs of 1s)
    let outputs = outputs_of(&modified, &[1, 1, 0, 1, 2, 2]);
    assert!(outputs.contains(&vec![1, 1, 2]), "{outputs:?}");
    assert!(!outputs.contains(&vec![1, 2]), "{outputs:?}");
    assert_eq!(outputs_of(&topo, &[1, 1]), BTreeSet::from([vec![1]]));
    assert!(outputs_of(&modified, &[1, 1]).contains(&vec![1]));
    assert!(outputs_of(&modified, &[1, 1]).contains(&vec![1, 1]));
    assert!(topo.properties().contains(Properties::VALID));
}

#[test]
fn ctc_topo_rejects_sizes_beyond_the_offsets() {
    // 46339 is the largest standard topology whose arcs i32 offsets can number
    let too_big = |max_token: i32, allowed: &'static str| Error::InvalidArgument {
        what: "max_token",
        value: max_token.into(),
        allowed,
    };
    let offsets = "the topology's arcs must be numbered by i32 offsets";
    assert_eq!(
        Fsa::ctc_topo(i32::MAX, false),
        Err(too_big(i32::MAX, offsets))
    );
    assert_eq!(
        Fsa::ctc_topo(i32::MAX, true),
        Err(too_big(i32::MAX, offsets))
    );
    assert_eq!(Fsa::ctc_topo(46340, false), Err(too_big(46340, offsets)));
    assert_eq!(
        Fsa::ctc_topo(536_870_912, true),
        Err(too_big(536_870_912, offsets))
    );
    let negative = "the largest token must be at least 0 (the blank)";
    assert_eq!(Fsa::ctc_topo(-1, false), Err(too_big(-1, negative)));
    assert_eq!(
        Fsa::ctc_topo(i32::MIN, true).unwrap_err().to_string(),
        "max_token = -2147483648 is out of range: the largest token must be at least 0 (the blank)"
    );
    // the smallest topology: blank only
    let blank = Fsa::ctc_topo(0, false).unwrap();
    assert_eq!((blank.num_states(), blank.num_arcs()), (2, 2));
}

/// Whether the transducer maps the input `labels` (0 read as a symbol, CTC's blank) to the
/// output `output` (aux label 0 is an empty output, -1 the final move).
fn transduces(fst: &Fsa, labels: &[i32], output: &[i32]) -> bool {
    let aux = fst.aux_labels().unwrap().as_i32().unwrap();
    let splits = fst.arcs().shape().row_splits(1);
    let arcs = fst.arcs().values();
    let final_state = fst.final_state().unwrap();
    // (state, output position) after reading a prefix of the input
    let mut current: BTreeSet<(usize, usize)> = BTreeSet::from([(0, 0)]);
    for &l in labels {
        let mut next = BTreeSet::new();
        for &(s, pos) in &current {
            for i in splits[s] as usize..splits[s + 1] as usize {
                if arcs[i].label != l {
                    continue;
                }
                let d = arcs[i].dest_state as usize;
                match aux[i] {
                    0 => {
                        next.insert((d, pos));
                    }
                    a if output.get(pos) == Some(&a) => {
                        next.insert((d, pos + 1));
                    }
                    _ => {}
                }
            }
        }
        current = next;
    }
    current.iter().any(|&(s, pos)| {
        pos == output.len()
            && (splits[s] as usize..splits[s + 1] as usize)
                .any(|i| arcs[i].label == -1 && arcs[i].dest_state as usize == final_state)
    })
}

#[test]
fn ctc_topo_follows_k2s_examples() {
    // k2's test_no_repeated: both topologies map these alignments to [1 2 3]
    let standard = Fsa::ctc_topo(3, false).unwrap();
    let modified = Fsa::ctc_topo(3, true).unwrap();
    for input in [[1, 1, 1, 0, 0, 2, 2, 3, 3], [1, 1, 0, 0, 2, 2, 0, 3, 3]] {
        assert!(transduces(&standard, &input, &[1, 2, 3]), "{input:?}");
        assert!(transduces(&modified, &input, &[1, 2, 3]), "{input:?}");
        assert!(!transduces(&standard, &input, &[1, 2]), "{input:?}");
    }
    // k2's test_with_repeated ("zoo"): the standard topology needs a blank between the two
    // o's, the modified one does not
    let zoo = [1, 2, 2];
    let input = [1, 1, 0, 0, 2, 2, 2, 0];
    assert!(!transduces(&standard, &input, &zoo));
    assert!(transduces(&modified, &input, &zoo));
    assert!(transduces(&standard, &[1, 0, 2, 0, 2], &zoo));
    assert!(transduces(&standard, &input, &[1, 2]));
}

#[test]
fn ctc_graph_accepts_ctc_alignments() {
    let graphs = FsaVec::ctc_graph(&[vec![1, 1], vec![2, 3]], false).unwrap();
    let g = graphs.get(0);
    // a blank is mandatory between the two 1s
    assert!(accepts_symbols(&g, &[1, 0, 1]));
    assert!(accepts_symbols(&g, &[0, 1, 1, 0, 0, 1, 0]));
    assert!(!accepts_symbols(&g, &[1, 1]));
    let g2 = graphs.get(1);
    assert!(accepts_symbols(&g2, &[2, 3]) && accepts_symbols(&g2, &[2, 2, 0, 3, 3]));
    let modified = FsaVec::ctc_graph(&[vec![1, 1]], true).unwrap().get(0);
    assert!(accepts_symbols(&modified, &[1, 1]));
}

#[test]
fn epsilon_self_loops_add_and_remove() {
    let fsa = tagged(Fsa::linear(&[1, 2]).unwrap());
    let (looped, arc_map) = fsa.add_epsilon_self_loops();
    assert_eq!(
        tuples(&looped),
        vec![
            (0, 0, 0, 0.0),
            (0, 1, 1, 0.0),
            (1, 1, 0, 0.0),
            (1, 2, 2, 0.0),
            (2, 2, 0, 0.0),
            (2, 3, -1, 0.0)
        ]
    );
    check_attrs_follow(&looped, &arc_map);
    let (back, _) = looped.remove_epsilon_self_loops();
    assert_eq!(tuples(&back), tuples(&fsa));
}

#[test]
fn scores_need_top_sorted_acyclic_input() {
    let looped: Fsa = "0 1 1 0\n1 1 2 0\n1 2 -1 0\n2\n".parse().unwrap();
    assert_eq!(
        looped.get_tot_score::<f32>(Semiring::Log),
        Err(Error::NotTopSortedAcyclic {
            fsa: 0,
            arc: 1,
            src_state: 1,
            dest_state: 1
        })
    );
    let v = create_fsa_vec(&[Fsa::linear(&[1]).unwrap(), looped]);
    assert!(matches!(
        v.shortest_path(),
        Err(Error::NotTopSortedAcyclic { fsa: 1, .. })
    ));
}

#[test]
fn empty_fsas_score_minus_infinity() {
    let v = create_fsa_vec(&[Fsa::empty(), Fsa::linear(&[]).unwrap()]);
    let tot: Vec<f64> = v.get_tot_scores(Semiring::Tropical).unwrap();
    assert_eq!(tot, vec![f64::NEG_INFINITY, 0.0]);
    let (best, arc_map) = v.shortest_path().unwrap();
    assert_eq!(best.arcs().shape().row_splits(1), &[0, 0, 2]);
    assert_eq!(arc_map, vec![0]);
}

fn reachable_naive(fsa: &Fsa) -> (Vec<bool>, Vec<bool>) {
    let n = fsa.num_states();
    let arcs = fsa.arcs().values();
    let mut acc = vec![false; n];
    let mut coacc = vec![false; n];
    if n == 0 {
        return (acc, coacc);
    }
    acc[0] = true;
    coacc[n - 1] = true;
    loop {
        let mut changed = false;
        for a in arcs {
            let (s, d) = (a.src_state as usize, a.dest_state as usize);
            if acc[s] && !acc[d] {
                acc[d] = true;
                changed = true;
            }
            if coacc[d] && !coacc[s] {
                coacc[s] = true;
                changed = true;
            }
        }
        if !changed {
            return (acc, coacc);
        }
    }
}

/// Whether a cycle other than a self-loop runs through a state reachable from the start.
fn has_real_cycle(fsa: &Fsa) -> bool {
    !states_on_cycles(fsa).is_empty()
}

/// The reachable states that lie on a cycle other than a self-loop.
#[allow(clippy::needless_range_loop)]
fn states_on_cycles(fsa: &Fsa) -> Vec<usize> {
    let n = fsa.num_states();
    let (acc, _) = reachable_naive(fsa);
    let mut reach = vec![vec![false; n]; n];
    for a in fsa.arcs().values() {
        if a.src_state != a.dest_state {
            reach[a.src_state as usize][a.dest_state as usize] = true;
        }
    }
    for k in 0..n {
        for i in 0..n {
            if reach[i][k] {
                for j in 0..n {
                    if reach[k][j] {
                        reach[i][j] = true;
                    }
                }
            }
        }
    }
    (0..n).filter(|&s| acc[s] && reach[s][s]).collect()
}

proptest! {
    #![proptest_config(common::proptest_config(64, PROPTEST_SEED))]

    #[test]
    fn tot_scores_match_brute_force(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let fsas: Vec<Fsa> = (0..4).map(|_| random_acyclic(&mut rng, 7)).collect();
        let v = create_fsa_vec(&fsas);
        let log64: Vec<f64> = v.get_tot_scores(Semiring::Log).unwrap();
        let log32: Vec<f32> = v.get_tot_scores(Semiring::Log).unwrap();
        let trop64: Vec<f64> = v.get_tot_scores(Semiring::Tropical).unwrap();
        for (i, fsa) in fsas.iter().enumerate() {
            let p = paths(fsa);
            let want_log = log_sum(p.iter().map(|x| x.1));
            let want_max = p.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
            if p.is_empty() {
                prop_assert_eq!(log64[i], f64::NEG_INFINITY);
                prop_assert_eq!(trop64[i], f64::NEG_INFINITY);
            } else {
                prop_assert!((log64[i] - want_log).abs() < 1e-9);
                prop_assert!((log32[i] as f64 - want_log).abs() < 1e-4);
                prop_assert!((trop64[i] - want_max).abs() < 1e-9);
            }
            let back: Vec<f64> = fsa.get_backward_scores(Semiring::Log).unwrap();
            prop_assert!(p.is_empty() || (back[0] - want_log).abs() < 1e-9);
        }
    }

    #[test]
    fn shortest_path_matches_brute_force(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let fsas: Vec<Fsa> = (0..4).map(|_| random_acyclic(&mut rng, 8)).collect();
        let v = create_fsa_vec(&fsas);
        let (best, arc_map) = v.shortest_path().unwrap();
        prop_assert_eq!(best.num_fsas(), 4);
        let mut offset = 0usize;
        let mut map_pos = 0usize;
        for (i, fsa) in fsas.iter().enumerate() {
            let p = paths(fsa);
            let b = best.get(i);
            if p.is_empty() {
                prop_assert_eq!(b.num_states(), 0);
            } else {
                let want = p.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
                let got: f64 = b.scores().iter().map(|&s| s as f64).sum();
                prop_assert!((got - want).abs() < 1e-5);
                prop_assert!(b.properties().contains(Properties::VALID));
                // the arc map points at arcs with the same label and score, forming a path
                let mut state = 0;
                for (k, arc) in b.arcs().values().iter().enumerate() {
                    let orig = v.arcs().values()[arc_map[map_pos + k] as usize];
                    prop_assert_eq!((orig.label, orig.score), (arc.label, arc.score));
                    prop_assert_eq!(orig.src_state, state);
                    prop_assert!(arc_map[map_pos + k] as usize >= offset);
                    state = orig.dest_state;
                }
                prop_assert_eq!(state as usize, fsa.num_states() - 1);
            }
            map_pos += b.num_arcs();
            offset += fsa.num_arcs();
        }
    }

    #[test]
    fn arc_posteriors_match_brute_force(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let fsa = random_acyclic(&mut rng, 7);
        let p = paths(&fsa);
        prop_assume!(!p.is_empty());
        let tot_log = log_sum(p.iter().map(|x| x.1));
        let tot_max = p.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
        let log: Vec<f64> = fsa.get_arc_post(Semiring::Log).unwrap();
        let trop: Vec<f64> = fsa.get_arc_post(Semiring::Tropical).unwrap();
        for arc in 0..fsa.num_arcs() {
            let through: Vec<f64> = p.iter().filter(|x| x.0.contains(&arc)).map(|x| x.1).collect();
            if through.is_empty() {
                prop_assert_eq!(log[arc], f64::NEG_INFINITY);
            } else {
                prop_assert!((log[arc] - (log_sum(through.iter().copied()) - tot_log)).abs() < 1e-9);
                let best = through.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                prop_assert!((trop[arc] - (best - tot_max)).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn connect_keeps_exactly_the_useful_states(seed in any::<u64>(), cyclic in any::<bool>()) {
        // cyclic FSAs take the search path, top-sorted ones the sweeps
        let mut rng = Rng(seed);
        let fsa = if cyclic {
            tagged(random_cyclic(&mut rng, 8))
        } else {
            tagged(random_acyclic(&mut rng, 8))
        };
        let (acc, coacc) = reachable_naive(&fsa);
        let keep: Vec<usize> = (0..fsa.num_states()).filter(|&s| acc[s] && coacc[s]).collect();
        let (out, arc_map) = fsa.connect();
        check_attrs_follow(&out, &arc_map);
        if !keep.contains(&0) {
            prop_assert_eq!(out.num_states(), 0);
        } else {
            prop_assert_eq!(out.num_states(), keep.len());
            let want_arcs: Vec<Arc> = fsa.arcs().values().iter().copied().filter(|a| {
                keep.contains(&(a.src_state as usize)) && keep.contains(&(a.dest_state as usize))
            }).collect();
            prop_assert_eq!(out.num_arcs(), want_arcs.len());
            for (k, &m) in arc_map.iter().enumerate() {
                let orig = fsa.arcs().values()[m as usize];
                let new = out.arcs().values()[k];
                prop_assert_eq!(keep[new.src_state as usize] as i32, orig.src_state);
                prop_assert_eq!(keep[new.dest_state as usize] as i32, orig.dest_state);
            }
            let props = out.properties();
            prop_assert!(props.contains(Properties::ACCESSIBLE | Properties::COACCESSIBLE));
        }
    }

    #[test]
    fn top_sort_sorts_or_finds_the_cycle(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let fsa = tagged(random_cyclic(&mut rng, 7));
        match fsa.top_sort() {
            Err(Error::Cycle { fsa: 0, state }) => {
                prop_assert!(states_on_cycles(&fsa).contains(&(state as usize)));
            }
            Err(e) => prop_assert!(false, "unexpected {e}"),
            Ok((out, arc_map)) => {
                prop_assert!(!has_real_cycle(&fsa));
                prop_assert!(out.properties().contains(Properties::TOPSORTED));
                check_attrs_follow(&out, &arc_map);
                // same labels and scores on the mapped arcs
                for (k, &m) in arc_map.iter().enumerate() {
                    let (a, b) = (out.arcs().values()[k], fsa.arcs().values()[m as usize]);
                    prop_assert_eq!((a.label, a.score), (b.label, b.score));
                }
            }
        }
        let acyclic = random_acyclic(&mut rng, 7);
        let (sorted, _) = acyclic.top_sort().unwrap();
        let (connected_in, _) = acyclic.connect();
        prop_assert_eq!(path_labels(&sorted), path_labels(&connected_in));
    }

    #[test]
    fn arc_sort_is_a_sorted_permutation_within_states(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let fsa = tagged(random_cyclic(&mut rng, 8));
        let (out, arc_map) = fsa.arc_sort();
        prop_assert!(out.properties().contains(Properties::ARC_SORTED));
        check_attrs_follow(&out, &arc_map);
        let mut seen = arc_map.clone();
        seen.sort();
        prop_assert_eq!(seen, (0..fsa.num_arcs() as i32).collect::<Vec<_>>());
        for (k, &m) in arc_map.iter().enumerate() {
            prop_assert_eq!(out.arcs().values()[k], fsa.arcs().values()[m as usize]);
        }
        // the FsaVec path (sorting in place) agrees, with arc maps shifted per FSA
        let (v, v_map) = create_fsa_vec(&[fsa.clone(), fsa.clone()]).arc_sort();
        prop_assert_eq!(v.get(0), out.clone());
        prop_assert_eq!(v.get(1), out);
        let n = fsa.num_arcs() as i32;
        let shifted: Vec<i32> = arc_map.iter().map(|m| m + n).collect();
        prop_assert_eq!(&v_map[..n as usize], &arc_map[..]);
        prop_assert_eq!(&v_map[n as usize..], &shifted[..]);
    }

    #[test]
    fn reverse_union_and_invert_keep_the_paths(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let a = random_acyclic(&mut rng, 6);
        let b = random_acyclic(&mut rng, 6);
        let strip = |v: Vec<(Vec<i32>, i64)>| -> Vec<(Vec<i32>, i64)> {
            let mut v: Vec<_> = v.into_iter()
                .map(|(l, s)| (l.into_iter().filter(|&x| x != 0).collect(), s)).collect();
            v.sort();
            v
        };
        // reverse: each path backwards, same score
        let (rev, _) = a.reverse();
        let want: Vec<_> = strip(path_labels(&a)).into_iter()
            .map(|(mut l, s)| { l.reverse(); (l, s) }).collect();
        let mut want = want;
        want.sort();
        prop_assert_eq!(strip(path_labels(&rev)), want);
        // union: the paths of both
        let (u, arc_map) = create_fsa_vec(&[a.clone(), b.clone()]).union();
        let mut both = strip(path_labels(&a));
        both.extend(strip(path_labels(&b)));
        both.sort();
        prop_assert_eq!(strip(path_labels(&u)), both);
        prop_assert_eq!(arc_map.iter().filter(|&&m| m == -1).count(), 2);
        // invert twice is the identity
        let aux: Vec<i32> = a.labels().iter().map(|&l| if l == -1 { -1 } else { l + 7 }).collect();
        let fst = a.with_attr("aux_labels", Attr::I32(aux)).unwrap();
        prop_assert_eq!(fst.invert().unwrap().0.invert().unwrap().0, fst);
    }

    #[test]
    fn ctc_graph_agrees_with_ctc_topo(seed in any::<u64>(), modified in any::<bool>()) {
        // the graph of a transcript accepts exactly the alignments the topology maps to it
        let mut rng = Rng(seed);
        let topo = Fsa::ctc_topo(3, modified).unwrap();
        let transcript: Vec<i32> = (0..rng.below(4)).map(|_| 1 + rng.below(3) as i32).collect();
        let graph = FsaVec::ctc_graph(std::slice::from_ref(&transcript), modified).unwrap().get(0);
        for _ in 0..20 {
            let alignment: Vec<i32> = (0..rng.below(7)).map(|_| rng.below(4) as i32).collect();
            prop_assert_eq!(
                transduces(&graph, &alignment, &transcript),
                transduces(&topo, &alignment, &transcript),
                "alignment {:?} transcript {:?}", alignment, transcript
            );
        }
        // and the alignment made by repeating each token, with blanks between repeats
        let mut alignment = Vec::new();
        for (k, &t) in transcript.iter().enumerate() {
            if k > 0 && transcript[k - 1] == t {
                alignment.push(0);
            }
            alignment.extend([t, t]);
        }
        prop_assert!(transduces(&graph, &alignment, &transcript));
    }

    #[test]
    fn ragged_invert_keeps_every_path(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let fsa = random_acyclic(&mut rng, 6);
        let lists: Vec<Vec<i32>> = fsa
            .arcs()
            .values()
            .iter()
            .map(|a| {
                let mut l: Vec<i32> = (0..rng.below(4)).map(|_| 1 + rng.below(5) as i32).collect();
                if a.label == -1 {
                    l.push(-1);
                }
                l
            })
            .collect();
        let ragged = ragged_core::Ragged::from_nested(lists.clone()).unwrap();
        let fst = fsa.clone().with_attr("aux_labels", Attr::Ragged(ragged)).unwrap();
        let (inv, _) = fst.invert().unwrap();
        prop_assert!(inv.properties().contains(Properties::VALID | Properties::TOPSORTED_AND_ACYCLIC));
        // each path of the input, read as (aux lists, labels, score), is a path of the output
        let key = |ins: Vec<i32>, outs: Vec<i32>, score: f64| {
            let clean = |v: Vec<i32>| -> Vec<i32> { v.into_iter().filter(|&x| x > 0).collect() };
            (clean(ins), clean(outs), (score * 1000.0).round() as i64)
        };
        let mut want: Vec<_> = paths(&fsa)
            .into_iter()
            .map(|(p, s)| {
                let ins = p.iter().flat_map(|&i| lists[i].clone()).collect();
                let outs = p.iter().map(|&i| fsa.arcs().values()[i].label).collect();
                key(ins, outs, s)
            })
            .collect();
        let aux = inv.aux_labels().unwrap().as_i32().unwrap().to_vec();
        let mut got: Vec<_> = paths(&inv)
            .into_iter()
            .map(|(p, s)| {
                let ins = p.iter().map(|&i| inv.arcs().values()[i].label).collect();
                let outs = p.iter().map(|&i| aux[i]).collect();
                key(ins, outs, s)
            })
            .collect();
        want.sort();
        got.sort();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn fsa_vec_results_equal_per_fsa_results(seed in any::<u64>()) {
        // enough arcs to take the parallel path
        let mut rng = Rng(seed);
        let mut fsas = Vec::new();
        let mut arcs = 0;
        while arcs < PARALLEL_MIN_ARCS + 100 {
            let f = random_acyclic(&mut rng, 40);
            arcs += f.num_arcs();
            fsas.push(f);
        }
        let fsas: Vec<Fsa> = fsas.into_iter().map(tagged).collect();
        let v = create_fsa_vec(&fsas);
        let (sorted, sorted_map) = v.arc_sort();
        let (connected, connected_map) = v.connect();
        let (best, best_map) = v.shortest_path().unwrap();
        let (reversed, reversed_map) = v.reverse();
        let tot: Vec<f32> = v.get_tot_scores(Semiring::Log).unwrap();
        let mut offset = 0;
        let mut position = [0usize; 4];
        for (i, fsa) in fsas.iter().enumerate() {
            // results and attributes per FSA, and the global arc maps = local maps + offset
            let outputs = [
                (sorted.get(i), fsa.arc_sort(), &sorted_map),
                (connected.get(i), fsa.connect(), &connected_map),
                (best.get(i), fsa.shortest_path().unwrap(), &best_map),
                (reversed.get(i), fsa.reverse(), &reversed_map),
            ];
            for (k, (got, (want, local_map), global_map)) in outputs.into_iter().enumerate() {
                prop_assert_eq!(&got, &want);
                let n = local_map.len();
                let shifted: Vec<i32> = local_map
                    .iter()
                    .map(|&m| if m < 0 { -1 } else { m + offset as i32 })
                    .collect();
                prop_assert_eq!(&global_map[position[k]..position[k] + n], &shifted[..]);
                position[k] += n;
            }
            prop_assert_eq!(tot[i], fsa.get_tot_score::<f32>(Semiring::Log).unwrap());
            offset += fsa.num_arcs();
        }
    }
}
