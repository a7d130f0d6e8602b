//! `intersect_dense_pruned`: k2's pruned search on the same inputs (golden file from
//! `tests/golden/ctc_generate.py`), and with wide beams the same best path as the exact
//! `intersect_dense`.

use crate::common;

use common::{cases, Case};
use ndarray::Array3;
use ragged_fsa::{
    create_fsa_vec, intersect_dense, intersect_dense_pruned, one_best, DenseFsaVec, Error, Fsa,
    FsaVec, Semiring,
};

fn inputs(case: &Case) -> (Array3<f32>, DenseFsaVec, FsaVec) {
    let d: Vec<usize> = case.get("dims");
    let values: Vec<f32> = case.get("log_probs");
    let lp = Array3::from_shape_vec((d[0], d[1], d[2]), values).unwrap();
    let segs: Vec<i32> = case.get("segments");
    let segments: Vec<[i32; 3]> = segs.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
    let dense = DenseFsaVec::new(lp.view(), &segments);
    let graph: Fsa = case.fields["graph"]
        .replace(" ; ", "\n")
        .trim()
        .parse()
        .unwrap();
    (lp, dense, create_fsa_vec(&[graph]))
}

#[track_caller]
fn close(got: f64, want: f64, what: &str) {
    if want.is_infinite() {
        assert_eq!(got, want, "{what}");
    } else {
        assert!(
            (got - want).abs() < 1e-4 * want.abs().max(1.0),
            "{what}: {got} vs {want}"
        );
    }
}

#[test]
fn pruned_search_agrees_with_k2() {
    let all = cases(include_str!("golden/ctc_k2_pruned.txt"));
    assert_eq!(all.len(), 8);
    let mut pruned_away = 0;
    for case in &all {
        let (_, dense, graphs) = inputs(case);
        for (sb, ob, min_a, max_a) in [(4.0f32, 3.0f32, 1usize, 3usize), (20.0, 8.0, 30, 10000)] {
            let tag = format!("{sb}_{ob}_{min_a}_{max_a}");
            let (lattice, _, _) =
                intersect_dense_pruned(&graphs, &dense, sb, ob, min_a, max_a).unwrap();
            let best = one_best(&lattice).unwrap();
            let want_best: Vec<f64> = case.get(&format!("best_score_{tag}"));
            let want_log: Vec<f64> = case.get(&format!("tot_log_{tag}"));
            let log: Vec<f64> = lattice.get_tot_scores(Semiring::Log).unwrap();
            for i in 0..dense.num_fsas() {
                let what = format!("{} {tag} segment {i}", case.name);
                close(best[i].score, want_best[i], &what);
                close(log[i], want_log[i], &what);
                let labels: Vec<i32> = case.get(&format!("best_labels_{tag} {i}"));
                assert_eq!(best[i].labels, labels, "{what}");
                pruned_away += usize::from(want_best[i].is_infinite());
            }
        }
    }
    assert!(
        pruned_away > 0,
        "some narrow-beam searches lose every path, as in k2"
    );
}

#[test]
fn wide_beams_find_the_exact_best_path() {
    for case in &cases(include_str!("golden/ctc_k2_pruned.txt")) {
        let (_, dense, graphs) = inputs(case);
        let (exact, exact_a_map, exact_b_map) =
            intersect_dense(&graphs, &dense, f32::INFINITY, None).unwrap();
        let (pruned, a_map, b_map) =
            intersect_dense_pruned(&graphs, &dense, 1e4, 1e4, 1, 100_000).unwrap();
        // nothing pruned: the very same lattice, states numbered by frame then graph state
        assert_eq!(pruned, exact, "{}", case.name);
        assert_eq!(
            (&a_map, &b_map),
            (&exact_a_map, &exact_b_map),
            "{}",
            case.name
        );
        assert_eq!(
            one_best(&pruned).unwrap(),
            one_best(&exact).unwrap(),
            "{}",
            case.name
        );
        let a: Vec<f64> = exact.get_tot_scores(Semiring::Log).unwrap();
        let b: Vec<f64> = pruned.get_tot_scores(Semiring::Log).unwrap();
        for (x, y) in a.iter().zip(&b) {
            close(*y, *x, &case.name);
        }
        assert_eq!(pruned.num_arcs(), exact.num_arcs());
        assert_eq!(b_map.len(), pruned.num_arcs());
    }
}

#[test]
fn pruned_rejects_bad_parameters() {
    let case = &cases(include_str!("golden/ctc_k2_pruned.txt"))[0];
    let (_, dense, graphs) = inputs(case);
    let err = intersect_dense_pruned(&graphs, &dense, 4.0, 3.0, 5, 5).unwrap_err();
    assert_eq!(
        err,
        Error::BadActiveStates {
            min_active_states: 5,
            max_active_states: 5
        }
    );
    assert_eq!(
        err.to_string(),
        "max_active_states = 5 must exceed min_active_states = 5"
    );
    assert_eq!(
        intersect_dense_pruned(&graphs, &dense, f32::NAN, 3.0, 1, 5)
            .unwrap_err()
            .to_string(),
        "search_beam = NaN must be a positive number"
    );
}
