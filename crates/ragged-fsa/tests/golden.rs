//! Agreement with OpenFst: golden files written by `tests/golden/generate.py` (kaldifst) on
//! random FSTs, for arc sort, connect, shortest path and top sort (acyclicity).

use crate::common;

use common::path_labels;
use ragged_fsa::{Error, Fsa, Properties};

/// The (input, answer) pairs of a golden file.
fn cases(text: &str) -> Vec<(String, String)> {
    text.split("=== case ")
        .filter(|c| !c.trim().is_empty())
        .map(|case| {
            let body = case.split_once('\n').expect("a case header").1;
            let (input, answer) = body.split_once("---\n").expect("a --- separator");
            (input.to_string(), answer.to_string())
        })
        .collect()
}

#[test]
fn arc_sort_agrees_with_openfst() {
    let all = cases(include_str!("golden/arcsort.txt"));
    assert_eq!(all.len(), 30);
    for (i, (input, answer)) in all.iter().enumerate() {
        let fsa = Fsa::from_openfst(input, false).unwrap();
        let want = Fsa::from_openfst(answer, false).unwrap();
        let (got, _) = fsa.arc_sort();
        assert_eq!(got, want, "case {i}");
        assert!(got.properties().contains(Properties::ARC_SORTED));
    }
}

#[test]
fn connect_agrees_with_openfst() {
    let all = cases(include_str!("golden/connect.txt"));
    assert_eq!(all.len(), 40);
    let mut nonempty = 0;
    for (i, (input, answer)) in all.iter().enumerate() {
        let fsa = Fsa::from_openfst(input, false).unwrap();
        let want = Fsa::from_openfst(answer, false).unwrap();
        let (got, _) = fsa.connect();
        assert_eq!(got, want, "case {i}");
        nonempty += usize::from(got.num_states() > 0);
    }
    assert!(nonempty > 10, "the cases exercise real connections");
}

#[test]
fn shortest_path_agrees_with_openfst() {
    let all = cases(include_str!("golden/shortest_path.txt"));
    assert_eq!(all.len(), 40);
    for (i, (input, answer)) in all.iter().enumerate() {
        let fsa = Fsa::from_openfst(input, false).unwrap();
        // OpenFst numbers its answer's states backwards; compare the path itself
        let want = Fsa::from_openfst(answer, false).unwrap();
        let (sorted, _) = fsa.top_sort().unwrap();
        let (got, arc_map) = sorted.shortest_path().unwrap();
        let (want_sorted, _) = want.top_sort().unwrap();
        assert_eq!(path_labels(&got), path_labels(&want_sorted), "case {i}");
        assert_eq!(
            got.aux_labels().unwrap().as_i32().unwrap(),
            want_sorted.aux_labels().unwrap().as_i32().unwrap(),
            "case {i}: output labels"
        );
        assert_eq!(arc_map.len(), got.num_arcs());
    }
}

#[test]
fn top_sort_agrees_with_openfst_on_cycles() {
    let all = cases(include_str!("golden/topsort.txt"));
    assert_eq!(all.len(), 40);
    let mut acyclic_count = 0;
    for (i, (input, answer)) in all.iter().enumerate() {
        let fsa = Fsa::from_openfst(input, false).unwrap();
        let (acyclic, topsorted) = answer.trim().split_once(' ').unwrap();
        assert_eq!(
            fsa.properties().contains(Properties::TOPSORTED_AND_ACYCLIC),
            topsorted == "topsorted",
            "case {i}"
        );
        match (fsa.top_sort(), acyclic) {
            (Ok((sorted, _)), "acyclic") => {
                acyclic_count += 1;
                assert!(sorted
                    .properties()
                    .contains(Properties::TOPSORTED_AND_ACYCLIC));
                assert_eq!(path_labels(&sorted), path_labels(&fsa.connect().0));
            }
            (Err(Error::Cycle { .. }), "cyclic") => {}
            (got, want) => panic!("case {i}: OpenFst says {want}, we got {got:?}"),
        }
    }
    assert!(acyclic_count >= 20);
}
