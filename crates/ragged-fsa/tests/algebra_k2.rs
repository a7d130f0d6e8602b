//! The algebra against k2 1.23.2: `tests/golden/generate_algebra_k2.py` wrote, for seeded
//! random FSAs, k2's `intersect` (both epsilon rules) and `compose` results arc for arc
//! with their arc maps, and the tropical total scores of `remove_epsilon` and of
//! `determinize` with each weight pushing.

use ragged_fsa::{Attr, Fsa, Semiring, TextFormat, WeightPushing};

struct Case {
    op: String,
    parts: Vec<String>,
}

fn cases() -> Vec<Case> {
    include_str!("golden/algebra_k2.txt")
        .split("=== ")
        .filter(|c| !c.trim().is_empty())
        .map(|case| {
            let (header, body) = case.split_once('\n').expect("a header line");
            Case {
                op: header.split_whitespace().next().unwrap().to_string(),
                parts: body.split("---\n").map(str::to_string).collect(),
            }
        })
        .collect()
}

fn acceptor(text: &str) -> Fsa {
    text.parse().unwrap()
}

fn transducer(text: &str) -> Fsa {
    Fsa::from_text(text, &TextFormat::transducer()).unwrap()
}

/// The FSA part of an answer, and its `name ...` lines.
fn answer_with_maps(text: &str) -> (String, Vec<Vec<i32>>) {
    let mut fsa = String::new();
    let mut maps = Vec::new();
    for line in text.lines() {
        if line.starts_with("a_arc_map") || line.starts_with("b_arc_map") {
            maps.push(
                line.split_whitespace()
                    .skip(1)
                    .map(|x| x.parse().unwrap())
                    .collect(),
            );
        } else {
            fsa.push_str(line);
            fsa.push('\n');
        }
    }
    (fsa, maps)
}

fn tot(fsa: &Fsa) -> f64 {
    let (connected, _) = fsa.connect();
    let (sorted, _) = connected.top_sort().unwrap();
    sorted.get_tot_score(Semiring::Tropical).unwrap()
}

fn want_total(text: &str) -> f64 {
    let value = text.trim().strip_prefix("total ").expect("a total line");
    if value == "-inf" {
        f64::NEG_INFINITY
    } else {
        value.parse().unwrap()
    }
}

#[track_caller]
fn check_total(got: f64, want: f64, what: &str) {
    if want == f64::NEG_INFINITY {
        assert_eq!(got, want, "{what}");
    } else {
        assert!((got - want).abs() < 1e-3, "{what}: total {got}, k2 {want}");
    }
}

#[test]
fn intersect_and_compose_agree_with_k2_arc_for_arc() {
    let all = cases();
    let mut counted = (0, 0);
    for (i, case) in all.iter().enumerate() {
        let what = format!("case {i} ({})", case.op);
        match case.op.as_str() {
            "intersect_eps" | "intersect_plain" => {
                counted.0 += 1;
                let a = acceptor(&case.parts[0]);
                let b = acceptor(&case.parts[1]);
                let (want, maps) = answer_with_maps(&case.parts[2]);
                let (c, a_map, b_map) = a.intersect(&b, case.op == "intersect_eps").unwrap();
                assert_eq!(c, acceptor(&want), "{what}");
                assert_eq!((a_map, b_map), (maps[0].clone(), maps[1].clone()), "{what}");
            }
            "compose" => {
                counted.1 += 1;
                let a = transducer(&case.parts[0]);
                let b = acceptor(&case.parts[1]);
                let (c, _, _) = a.compose(&b, true).unwrap();
                let want = transducer(&case.parts[2]);
                assert_eq!(c.arcs(), want.arcs(), "{what}");
                assert_eq!(c.aux_labels(), want.aux_labels(), "{what}");
                assert!(matches!(c.aux_labels(), Some(Attr::I32(_))));
            }
            _ => {}
        }
    }
    assert_eq!(counted, (40, 30));
}

#[test]
fn remove_epsilon_and_determinize_agree_with_k2_totals() {
    let all = cases();
    let mut counted = 0;
    for (i, case) in all.iter().enumerate() {
        let what = format!("case {i} ({})", case.op);
        let pushing = match case.op.as_str() {
            "det_none" => WeightPushing::None,
            "det_tropical" => WeightPushing::Tropical,
            "det_log" => WeightPushing::Log,
            "rmeps" => {
                counted += 1;
                let (out, _) = acceptor(&case.parts[0]).remove_epsilon().unwrap();
                check_total(tot(&out), want_total(&case.parts[1]), &what);
                continue;
            }
            _ => continue,
        };
        counted += 1;
        let (out, _) = acceptor(&case.parts[0]).determinize(pushing).unwrap();
        check_total(tot(&out), want_total(&case.parts[1]), &what);
    }
    assert!(counted >= 70, "{counted} cases");
}
