//! The algebra against OpenFst (through kaldifst): `tests/golden/generate_algebra.py`
//! wrote, for seeded random FSTs, the best-path cost of OpenFst's `compose`, `rmepsilon`,
//! `determinize` and Kaldi's `determinize_star`, and the number of states after
//! `minimize_encoded`.

use ragged_fsa::{Fsa, Semiring, WeightPushing};

struct Case {
    op: String,
    inputs: Vec<String>,
    /// OpenFst's best cost (`None` for no path).
    cost: Option<f64>,
    /// OpenFst's state count after `minimize_encoded` (-1 where not recorded).
    states: i64,
}

fn cases() -> Vec<Case> {
    include_str!("golden/algebra_openfst.txt")
        .split("=== ")
        .filter(|c| !c.trim().is_empty())
        .map(|case| {
            let (header, body) = case.split_once('\n').expect("a header line");
            let mut parts: Vec<&str> = body.split("---\n").collect();
            let answer: Vec<&str> = parts.pop().unwrap().split_whitespace().collect();
            assert_eq!((answer[0], answer[2]), ("total", "states"));
            Case {
                op: header.split_whitespace().next().unwrap().to_string(),
                inputs: parts.iter().map(|s| s.to_string()).collect(),
                cost: (answer[1] != "inf").then(|| answer[1].parse().unwrap()),
                states: answer[3].parse().unwrap(),
            }
        })
        .collect()
}

/// The best score of an acyclic FSA, as an OpenFst cost (`None` for no path).
fn best_cost(fsa: &Fsa) -> Option<f64> {
    let (connected, _) = fsa.connect();
    let (sorted, _) = connected.top_sort().unwrap();
    let score: f64 = sorted.get_tot_score(Semiring::Tropical).unwrap();
    (score > f64::NEG_INFINITY).then_some(-score)
}

#[track_caller]
fn check_cost(got: Option<f64>, want: Option<f64>, what: &str) {
    match (got, want) {
        (Some(g), Some(w)) => assert!((g - w).abs() < 2e-3, "{what}: cost {g}, OpenFst {w}"),
        _ => assert_eq!(got, want, "{what}"),
    }
}

#[test]
fn algebra_agrees_with_openfst() {
    let all = cases();
    let count = |op: &str| all.iter().filter(|c| c.op == op).count();
    assert_eq!(
        (
            count("compose"),
            count("rmepsilon"),
            count("determinize"),
            count("determinize_star")
        ),
        (40, 40, 60, 40)
    );
    let mut with_paths = 0;
    for (i, case) in all.iter().enumerate() {
        let what = format!("case {i} ({})", case.op);
        with_paths += usize::from(case.cost.is_some());
        match case.op.as_str() {
            "compose" => {
                let a = Fsa::from_openfst(&case.inputs[0], false).unwrap();
                let b = Fsa::from_openfst(&case.inputs[1], false).unwrap();
                let (c, _, _) = a.compose(&b, true).unwrap();
                check_cost(best_cost(&c), case.cost, &what);
            }
            "rmepsilon" => {
                let a = Fsa::from_openfst(&case.inputs[0], true).unwrap();
                let (c, _) = a.remove_epsilon().unwrap();
                assert!(c.labels().iter().all(|&l| l != 0), "{what}");
                check_cost(best_cost(&c), case.cost, &what);
            }
            "determinize" | "determinize_star" => {
                let mut a = Fsa::from_openfst(&case.inputs[0], true).unwrap();
                if case.op == "determinize_star" {
                    a = a.remove_epsilon().unwrap().0;
                }
                // OpenFst's determinize leaves the scores where its subsets put them
                let (det, _) = a.determinize(WeightPushing::Eager).unwrap();
                check_cost(best_cost(&det), case.cost, &what);
                let (min, _) = det.minimize().unwrap();
                // our FSAs have k2's one extra final state, entered by the -1 arcs
                let ours = min.num_states() as i64 - i64::from(min.num_states() > 0);
                assert_eq!(ours, case.states, "{what}: states after minimize");
            }
            other => panic!("unknown op {other}"),
        }
    }
    assert!(with_paths > 120, "most cases accept something");
}
