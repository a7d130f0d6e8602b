//! Text formats: k2's and OpenFst's, exact round trips, errors with line numbers, no panics.

use crate::common;

use common::{random_acyclic, random_cyclic, Rng};
use proptest::prelude::*;
use ragged_fsa::{Arc, Attr, Error, Fsa, ParseProblem, TextFormat};

/// k2's documentation example (`k2.Fsa.from_str`).
const K2_DOC: &str = "0 1 10 0.1\n0 2 20 0.2\n1 2 30 0.3\n1 3 -1 0.4\n2 3 -1 0.5\n3\n";

#[test]
fn k2_acceptor_text_reads_arcs_and_final_state() {
    let fsa: Fsa = K2_DOC.parse().unwrap();
    assert_eq!(fsa.num_states(), 4);
    assert_eq!(fsa.arcs().shape().row_splits(1), &[0, 2, 4, 5, 5]);
    assert_eq!(fsa.arcs().values()[3], Arc::new(1, 3, -1, 0.4));
    assert_eq!(fsa.to_string(), K2_DOC);
}

#[test]
fn k2_text_accepts_tabs_spaces_and_blank_lines() {
    let messy = "\n  0\t1   10 0.1\n0 2 20\t0.2\n\n1 2 30 0.3\n1 3 -1 0.4\n2 3 -1 0.5\n 3 \n\n";
    assert_eq!(
        messy.parse::<Fsa>().unwrap(),
        K2_DOC.parse::<Fsa>().unwrap()
    );
}

#[test]
fn empty_text_is_the_empty_fsa() {
    let fsa: Fsa = "  \n".parse().unwrap();
    assert_eq!(fsa.num_states(), 0);
    assert_eq!(fsa.to_string(), "");
    assert_eq!(Fsa::from_openfst("", true).unwrap(), Fsa::empty());
}

#[test]
fn k2_transducer_and_ragged_columns_round_trip() {
    let s = "0 1 2 22 [] -1.2\n0 2 10 100 [10] -2.2\n1 3 3 33 [11 12] -4.2\n2 3 -1 -1 [] 0\n3\n";
    let format = TextFormat::transducer().ragged(&["ragged"]);
    let fsa = Fsa::from_text(s, &format).unwrap();
    assert_eq!(fsa.aux_labels(), Some(&Attr::I32(vec![22, 100, 33, -1])));
    let ragged = fsa.attr("ragged").unwrap().as_ragged().unwrap();
    assert_eq!(
        ragged.to_vec_vec(),
        vec![vec![], vec![10], vec![11, 12], vec![]]
    );
    assert_eq!(fsa.to_text(&format).unwrap(), s);
}

#[test]
fn several_aux_label_columns_are_named_like_k2() {
    let s = "0 1 1 2 3 0.5\n1 2 -1 -1 -1 0\n2\n";
    let format = TextFormat::with_num_aux_labels(2);
    let fsa = Fsa::from_text(s, &format).unwrap();
    assert_eq!(fsa.attr("aux_labels"), Some(&Attr::I32(vec![2, -1])));
    assert_eq!(fsa.attr("aux_labels2"), Some(&Attr::I32(vec![3, -1])));
    assert_eq!(fsa.to_text(&format).unwrap(), s);
}

#[test]
fn openfst_transducer_text_negates_costs_and_adds_a_final_state() {
    // two final states with costs, arcs in any order
    let s = "0 1 1 11 0.5\n1 2 2 22\n0 2 3 33 1.5\n2 0.25\n1\n";
    let fsa = Fsa::from_openfst(s, false).unwrap();
    assert_eq!(fsa.num_states(), 4);
    assert_eq!(
        fsa.arcs().values(),
        &[
            Arc::new(0, 1, 1, -0.5),
            Arc::new(0, 2, 3, -1.5),
            Arc::new(1, 2, 2, 0.0),
            Arc::new(1, 3, -1, 0.0),
            Arc::new(2, 3, -1, -0.25),
        ]
    );
    assert_eq!(fsa.aux_labels(), Some(&Attr::I32(vec![11, 33, 22, -1, -1])));
    // written per state: arcs, then the final line
    assert_eq!(
        fsa.to_openfst().unwrap(),
        "0 1 1 11 0.5\n0 2 3 33 1.5\n1 2 2 22\n1\n2 0.25\n"
    );
}

#[test]
fn openfst_writer_refuses_what_openfst_cannot_express() {
    let two_finals: Fsa = "0 1 -1 0.5\n0 1 -1 0.25\n1\n".parse().unwrap();
    assert!(matches!(
        two_finals.to_openfst(),
        Err(Error::NotOpenFstExpressible { state: 0, .. })
    ));
    // word ids on an arc into the final state have no place on a final line
    let format = TextFormat::acceptor().ragged(&["aux_labels"]).openfst();
    let words_at_the_end = Fsa::from_text(
        "0 1 5 [7] 1\n1 2 -1 [8] 0.5\n2\n",
        &TextFormat::acceptor().ragged(&["aux_labels"]),
    )
    .unwrap();
    assert_eq!(
        words_at_the_end.to_text(&format),
        Err(Error::NotOpenFstExpressible {
            state: 1,
            reason: "an arc entering the final state has ragged labels other than -1",
        })
    );
    let no_words_at_the_end = Fsa::from_text(
        "0 1 5 [7] 1\n1 2 -1 [] 0.5\n2\n",
        &TextFormat::acceptor().ragged(&["aux_labels"]),
    )
    .unwrap();
    assert_eq!(
        no_words_at_the_end.to_text(&format).unwrap(),
        "0 1 5 [7] -1\n1 -0.5\n"
    );
}

#[test]
fn openfst_text_with_aux_and_ragged_columns_reads_as_worked_out_by_hand() {
    // the start state 2 (the first line's source) swaps with 0; arcs are grouped by source
    // in file order; the final lines become -1 arcs into a new state 4, with aux label -1
    // and empty lists; costs become scores
    let openfst = TextFormat::transducer().ragged(&["r1", "r2"]).openfst();
    let text = "2 1 5 50 [1 2] [] 0.5\n1 3 6 60 [] [7]\n2 3 7 70 [3] [8 9] 1.25\n3 0.75\n1\n";
    let fsa = Fsa::from_text(text, &openfst).unwrap();
    let k2 = TextFormat::transducer().ragged(&["r1", "r2"]);
    assert_eq!(
        fsa.to_text(&k2).unwrap(),
        "0 1 5 50 [1 2] [] -0.5\n\
         0 3 7 70 [3] [8 9] -1.25\n\
         1 3 6 60 [] [7] 0\n\
         1 4 -1 -1 [] [] 0\n\
         3 4 -1 -1 [] [] -0.75\n\
         4\n"
    );
}

#[track_caller]
fn check_error(s: &str, line: usize, problem: ParseProblem) {
    match s.parse::<Fsa>() {
        Err(Error::Parse {
            line: l,
            problem: p,
        }) => {
            assert_eq!((l, p), (line, problem), "for {s:?}");
        }
        other => panic!("expected an error for {s:?}, got {other:?}"),
    }
}

#[test]
fn malformed_k2_text_names_the_line_and_the_problem() {
    check_error(
        "0 1 1 0.5\n1 9 -1 0\n2\n",
        2,
        ParseProblem::DestBeyondFinal {
            dest: 9,
            final_state: 2,
        },
    );
    check_error(
        "0 1 -1 0.5\n1 2 -1 0\n2\n",
        1,
        ParseProblem::MinusOneNotFinal {
            dest: 1,
            final_state: 2,
        },
    );
    check_error("0 1 1 0.5\n1 2 -1 0\n", 2, ParseProblem::MissingFinalLine);
    check_error(
        "0 1 1 0.5\n1 2 -1 abc\n2\n",
        2,
        ParseProblem::BadNumber {
            token: "abc".into(),
            field: "score",
        },
    );
    check_error(
        "0 -1 1 0.5\n1\n",
        1,
        ParseProblem::NegativeState { state: -1 },
    );
    check_error(
        "0 1 1 0.5\n2 3 -1 0.5\n2\n",
        2,
        ParseProblem::SrcNotBeforeFinal {
            src: 2,
            final_state: 2,
        },
    );
    let err = "0 1 1 0.5\n1 9 -1 0\n2\n".parse::<Fsa>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 2: destination state 9 is beyond the final state 2"
    );
}

fn formats() -> Vec<TextFormat> {
    vec![
        TextFormat::acceptor(),
        TextFormat::transducer(),
        TextFormat::transducer().ragged(&["r"]),
        TextFormat::acceptor().openfst(),
        TextFormat::transducer().openfst(),
        TextFormat::with_num_aux_labels(2)
            .ragged(&["a", "b"])
            .openfst(),
    ]
}

/// The fixed seed of the property tests; `PROPTEST_RNG_SEED` runs another.
const PROPTEST_SEED: u64 = 0x5EED_2026_0017;

proptest! {
    #![proptest_config(common::proptest_config(256, PROPTEST_SEED))]

    #[test]
    fn parsers_never_panic_on_arbitrary_strings(s in "\\PC{0,80}") {
        for format in formats() {
            let _ = Fsa::from_text(&s, &format);
        }
    }

    #[test]
    fn parsers_never_panic_on_fsa_like_strings(s in "([0-9 \\-\\[\\]\\.e]{0,14}\n){0,6}") {
        for format in formats() {
            if let Ok(fsa) = Fsa::from_text(&s, &format) {
                // whatever parses is a well-formed FSA that can be written back
                let text = fsa.to_text(&format);
                if !format.openfst {
                    prop_assert_eq!(Fsa::from_text(&text.unwrap(), &format).unwrap(), fsa);
                }
            }
        }
    }

    #[test]
    fn k2_text_round_trips_exactly(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let fsa = random_cyclic(&mut rng, 7);
        let aux: Vec<i32> = fsa.labels().iter().map(|&l| if l == -1 { -1 } else { l * 10 }).collect();
        let lists: Vec<Vec<i32>> = (0..fsa.num_arcs()).map(|i| (0..(i % 3) as i32).collect()).collect();
        let ragged = ragged_core::Ragged::from_nested(lists).unwrap();
        let fsa = fsa.with_attr("aux_labels", Attr::I32(aux)).unwrap()
            .with_attr("r", Attr::Ragged(ragged)).unwrap();
        let format = TextFormat::transducer().ragged(&["r"]);
        let text = fsa.to_text(&format).unwrap();
        let back = Fsa::from_text(&text, &format).unwrap();
        prop_assert_eq!(&back, &fsa);
        prop_assert_eq!(back.to_text(&format).unwrap(), text);
    }

    #[test]
    fn openfst_text_round_trips_exactly(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        // the final line of a state follows its arcs, so its -1 arc must be last, as in an
        // arc-sorted FSA
        let (fsa, _) = random_acyclic(&mut rng, 7).arc_sort();
        let aux: Vec<i32> = fsa.labels().iter().map(|&l| if l == -1 { -1 } else { l + 100 }).collect();
        let fsa = fsa.with_attr("aux_labels", Attr::I32(aux)).unwrap();
        // at most one -1 arc per state is expressible
        prop_assume!(fsa.to_openfst().is_ok());
        let text = fsa.to_openfst().unwrap();
        let back = Fsa::from_openfst(&text, false).unwrap();
        prop_assert_eq!(&back, &fsa);
        prop_assert_eq!(back.to_openfst().unwrap(), text);
    }
}

#[test]
fn openfst_text_names_a_start_state_without_arcs_first() {
    // state 0 (the start) has no arcs but is entered by one; OpenFst takes the first line's
    // state as the start, so state 0 must have a line of its own, first
    let fsa = Fsa::from_openfst("0 Infinity\n1 0 5\n", true).unwrap();
    assert_eq!(fsa.to_string(), "1 0 5 0\n2\n");
    let printed = fsa.to_openfst().unwrap();
    assert_eq!(printed, "0 Infinity\n1 0 5\n");
    assert_eq!(Fsa::from_openfst(&printed, true).unwrap(), fsa);
    // the same FSA built from arcs
    let built = Fsa::from_arcs(vec![Arc::new(1, 0, 5, 0.)], 3).unwrap();
    assert_eq!(built.to_openfst().unwrap(), "0 Infinity\n1 0 5\n");
    // a start state with arcs keeps its arcs first, and no extra line
    let plain = Fsa::from_openfst("0 1 5\n1\n", true).unwrap();
    assert_eq!(plain.to_openfst().unwrap(), "0 1 5\n1\n");
}
