//! Regression tests of hardening round 3: each test feeds the exact hostile value that was
//! reproduced, and checks the documented error or result against a hand-worked one.

use ragged_fsa::{Error, Fsa};

// ---------------------------------------------------------------------------------------
// hardening round 3, item 3: remove_epsilon on epsilon cycles scored +inf or NaN

#[test]
fn remove_epsilon_inf_self_loop_is_a_positive_cycle() {
    // the reproduced input: looped until out of memory
    let fsa: Fsa = "0 1 0 0\n1 1 0 inf\n1 2 -1 0\n2".parse().unwrap();
    let err = fsa.remove_epsilon().unwrap_err();
    assert_eq!(err, Error::PositiveEpsilonCycle { fsa: 0, state: 0 });
    assert!(fsa.remove_epsilon_and_add_self_loops().is_err());
    // as an FsaVec, the error names the FSA
    let ok: Fsa = "0 1 1 0\n1 2 -1 0\n2".parse().unwrap();
    let vec = ragged_fsa::create_fsa_vec(&[ok, fsa]);
    assert_eq!(
        vec.remove_epsilon().unwrap_err(),
        Error::PositiveEpsilonCycle { fsa: 1, state: 0 }
    );
}

#[test]
fn remove_epsilon_nan_or_inf_on_longer_epsilon_cycles_is_an_error() {
    for (score, nan) in [("inf", false), ("nan", true)] {
        // a two-state epsilon cycle, the hostile score on either of its arcs
        for text in [
            format!("0 1 0 0\n1 2 0 {score}\n1 3 5 0\n2 1 0 -1\n3 4 -1 0\n4"),
            format!("0 1 0 0\n1 2 0 -1\n1 3 5 0\n2 1 0 {score}\n3 4 -1 0\n4"),
            format!("0 1 0 0\n1 1 0 {score}\n1 2 -1 0\n2"),
        ] {
            let fsa: Fsa = text.parse().unwrap();
            let err = fsa.remove_epsilon().unwrap_err();
            if nan {
                match err {
                    Error::BadScore {
                        op, fsa: 0, score, ..
                    } => {
                        assert_eq!(op, "remove_epsilon");
                        assert!(score.is_nan());
                    }
                    other => panic!("{text:?}: {other:?}"),
                }
            } else {
                assert!(
                    matches!(err, Error::PositiveEpsilonCycle { fsa: 0, .. }),
                    "{text:?}: {err:?}"
                );
            }
        }
    }
}

#[test]
fn remove_epsilon_infinite_scores_off_cycles_still_work() {
    // +inf on an epsilon arc that is on no cycle: the chain keeps its score
    let fsa: Fsa = "0 1 0 inf\n1 1 3 0\n1 2 -1 0\n2".parse().unwrap();
    let (out, derivs) = fsa.remove_epsilon().unwrap();
    assert!(out.arcs().values().iter().all(|a| a.label != 0));
    assert!(out.arcs().values().iter().any(|a| a.score == f32::INFINITY));
    assert_eq!(derivs.dim0(), out.num_arcs());
    // -inf on an epsilon cycle: the cycle is never taken (its score is -inf)
    let fsa: Fsa = "0 1 0 0\n1 1 0 -inf\n1 2 -1 0\n2".parse().unwrap();
    let (out, _) = fsa.remove_epsilon().unwrap();
    assert_eq!(out.num_arcs(), 1);
    assert_eq!(out.arcs().values()[0].score, 0.0);
    // an epsilon cycle with a finite negative score next to an +inf arc elsewhere
    let fsa: Fsa = "0 1 0 0\n1 2 0 -1\n1 3 7 inf\n2 1 0 -1\n3 4 -1 0\n4"
        .parse()
        .unwrap();
    let (out, _) = fsa.remove_epsilon().unwrap();
    assert!(out.arcs().values().iter().any(|a| a.score == f32::INFINITY));
    // a finite positive cycle is still an error
    let fsa: Fsa = "0 1 0 0\n1 2 0 1\n1 3 -1 0\n2 1 0 1\n3".parse().unwrap();
    assert!(matches!(
        fsa.remove_epsilon().unwrap_err(),
        Error::PositiveEpsilonCycle { .. }
    ));
}

// ---------------------------------------------------------------------------------------
// hardening round 3, item 11: random_paths on NaN and +inf scores

#[test]
fn random_paths_refuses_nan_scores() {
    let fsa: Fsa = "0 1 1 nan\n1 2 -1 0\n2".parse().unwrap();
    let err = fsa.random_paths(3, 7).unwrap_err();
    match err {
        Error::BadScore {
            op,
            fsa: 0,
            arc: 0,
            score,
            ..
        } => {
            assert_eq!(op, "random_paths");
            assert!(score.is_nan());
        }
        other => panic!("{other:?}"),
    }
    // a NaN on a second arc of a state, and in an FsaVec (the error names the FSA)
    let fsa: Fsa = "0 1 1 0\n0 1 2 nan\n1 2 -1 0\n2".parse().unwrap();
    assert!(matches!(
        fsa.random_paths(3, 7),
        Err(Error::BadScore { arc: 1, .. })
    ));
    let ok: Fsa = "0 1 1 0\n1 2 -1 0\n2".parse().unwrap();
    let vec = ragged_fsa::create_fsa_vec(&[ok, fsa]);
    assert!(matches!(
        vec.random_paths(3, 7),
        Err(Error::BadScore { fsa: 1, arc: 1, .. })
    ));
}

#[test]
fn random_paths_never_takes_an_inf_arc_into_a_dead_end() {
    // arc 0 scores +inf into state 1, which cannot reach the final state
    let fsa: Fsa = "0 1 1 inf\n0 2 2 0\n2 3 -1 0\n3".parse().unwrap();
    let paths = fsa.random_paths(20, 1).unwrap();
    assert_eq!(paths.dim0(), 20);
    let values = paths.values();
    // every path is arcs 1 then 2
    assert_eq!(values.len(), 40);
    assert!(values.chunks(2).all(|p| p == [1, 2]));
    // the same with the dead end's only arc scored -inf as well
    let fsa: Fsa = "0 1 1 inf\n0 2 2 0\n1 2 3 -inf\n2 3 -1 0\n3"
        .parse()
        .unwrap();
    let paths = fsa.random_paths(5, 2).unwrap();
    assert!(paths.values().chunks(2).all(|p| p == [1, 3]));
}

#[test]
fn random_paths_refuses_a_successful_path_scoring_inf() {
    let fsa: Fsa = "0 1 1 0\n0 1 2 inf\n1 2 -1 0\n2".parse().unwrap();
    match fsa.random_paths(3, 7).unwrap_err() {
        Error::BadScore {
            op, arc: 1, score, ..
        } => {
            assert_eq!(op, "random_paths");
            assert_eq!(score, f32::INFINITY);
        }
        other => panic!("{other:?}"),
    }
    // the +inf deeper in the path: the error names that arc
    let fsa: Fsa = "0 1 1 0\n1 2 2 inf\n2 3 -1 0\n3".parse().unwrap();
    assert!(matches!(
        fsa.random_paths(1, 0),
        Err(Error::BadScore { arc: 1, .. })
    ));
    // -inf scores are fine: such an arc is never taken
    let fsa: Fsa = "0 1 1 -inf\n0 1 2 0\n1 2 -1 0\n2".parse().unwrap();
    let paths = fsa.random_paths(10, 3).unwrap();
    assert!(paths.values().chunks(2).all(|p| p == [1, 2]));
}

// ---------------------------------------------------------------------------------------
// hardening round 3, item 13: minimize merges only equal quantised scores

#[test]
fn minimize_keeps_huge_and_infinite_scores_apart() {
    // two branches that differ only in the score of their second arc
    for (x, y) in [
        (1e16f32, 1e17f32),
        (1e17, f32::INFINITY),
        (1e16, f32::INFINITY),
        (f32::MAX, f32::INFINITY),
        (-1e17, -1e16),
        (f32::NEG_INFINITY, -f32::MAX),
        (0.0, f32::NAN),
    ] {
        let text = format!("0 1 1 0\n0 2 2 0\n1 3 3 {x}\n2 3 3 {y}\n3 4 -1 0\n4");
        let fsa: Fsa = text.parse().unwrap();
        let (min, arc_map) = fsa.minimize().unwrap();
        assert_eq!(min.num_states(), 5, "{x} and {y} merged");
        assert_eq!(arc_map, vec![0, 1, 2, 3, 4]);
        // every path keeps its score
        let scores: Vec<f32> = min.arcs().values().iter().map(|a| a.score).collect();
        assert_eq!(scores[2].to_bits(), x.to_bits());
        assert_eq!(scores[3].to_bits(), y.to_bits());
    }
    // the reproduced case: the path of label 2 scores 1e17 after minimizing
    let fsa: Fsa = "0 1 1 0\n0 2 2 0\n1 3 3 1e16\n2 3 3 1e17\n3 4 -1 0\n4"
        .parse()
        .unwrap();
    let (min, _) = fsa.minimize().unwrap();
    let path_of_2: f32 = {
        let arcs = min.arcs().values();
        let first = arcs
            .iter()
            .find(|a| a.src_state == 0 && a.label == 2)
            .unwrap();
        let second = arcs
            .iter()
            .find(|a| a.src_state == first.dest_state)
            .unwrap();
        first.score + second.score
    };
    assert_eq!(path_of_2, 1e17);
}

#[test]
fn minimize_still_merges_equal_and_nearly_equal_scores() {
    // equal within the quantum (1/1024) merge, as fstminimizeencoded's delta
    let fsa: Fsa = "0 1 1 0\n0 2 2 0\n1 3 3 0.5\n2 3 3 0.50001\n3 4 -1 0\n4"
        .parse()
        .unwrap();
    assert_eq!(fsa.minimize().unwrap().0.num_states(), 4);
    // two equal huge scores, two +inf, -0 and 0: each pair merges
    for (x, y) in [
        ("1e17", "1e17"),
        ("inf", "inf"),
        ("-0", "0"),
        ("nan", "nan"),
    ] {
        let text = format!("0 1 1 0\n0 2 2 0\n1 3 3 {x}\n2 3 3 {y}\n3 4 -1 0\n4");
        let fsa: Fsa = text.parse().unwrap();
        assert_eq!(fsa.minimize().unwrap().0.num_states(), 4, "{x} {y}");
    }
}

// ---------------------------------------------------------------------------------------
// hardening round 3, item 16: ctc_loss on +inf log-probs and NaN or +inf graph scores, one
// rule on both paths

/// The exact path (infinite beam) and a pruned one (beam 10, as reproduced).
const BEAMS: [f32; 2] = [f32::INFINITY, 10.0];

fn one_segment(log_probs: &ndarray::Array3<f32>) -> ragged_fsa::DenseFsaVec {
    let t = log_probs.dim().1 as i32;
    ragged_fsa::DenseFsaVec::new(log_probs.view(), &[[0, 0, t]])
}

#[test]
fn ctc_loss_refuses_inf_log_probs_on_both_paths() {
    use ndarray::Array3;
    // targets [1], 3 frames, 2 symbols; log_probs[0, 1, 1] = +inf
    let graphs = ragged_fsa::FsaVec::ctc_graph(&[vec![1]], false).unwrap();
    let mut lp = Array3::<f32>::from_elem((1, 3, 2), -(2f32.ln()));
    lp[[0, 1, 1]] = f32::INFINITY;
    let dense = one_segment(&lp);
    for beam in BEAMS {
        let err = ragged_fsa::ctc_loss(&graphs, &dense, beam).unwrap_err();
        assert_eq!(
            err,
            Error::InfiniteLogProb {
                sequence: 0,
                frame: 1,
                symbol: 1
            },
            "beam {beam}"
        );
        assert_eq!(
            err.to_string(),
            "log_probs[0, 1, 1] is +inf (a log-probability is at most 0)"
        );
    }
    // blank (symbol 0) too; and a +inf at a symbol no graph arc carries is never read: the
    // loss is the same finite value on both paths
    lp[[0, 1, 1]] = -(2f32.ln());
    lp[[0, 2, 0]] = f32::INFINITY;
    for beam in BEAMS {
        assert_eq!(
            ragged_fsa::ctc_loss(&graphs, &one_segment(&lp), beam).unwrap_err(),
            Error::InfiniteLogProb {
                sequence: 0,
                frame: 2,
                symbol: 0
            }
        );
    }
    let graphs_blank_only = ragged_fsa::FsaVec::ctc_graph(&[vec![]], false).unwrap();
    let mut lp = Array3::<f32>::from_elem((1, 3, 2), -(2f32.ln()));
    lp[[0, 1, 1]] = f32::INFINITY;
    let losses: Vec<_> = [f32::INFINITY, 1000.0]
        .iter()
        .map(|&beam| ragged_fsa::ctc_loss(&graphs_blank_only, &one_segment(&lp), beam).unwrap())
        .collect();
    for out in &losses {
        assert!(
            (out.loss[0] - 3.0 * 2f64.ln()).abs() < 1e-5,
            "{:?}",
            out.loss
        );
        assert!(out.grad.iter().all(|g| g.is_finite()));
    }
}

#[test]
fn ctc_loss_refuses_nan_and_inf_graph_scores_on_both_paths() {
    use ndarray::Array3;
    let lp = Array3::<f32>::from_elem((1, 3, 2), -(2f32.ln()));
    let dense = one_segment(&lp);
    for bad in [f32::NAN, f32::INFINITY] {
        let mut graph = ragged_fsa::FsaVec::ctc_graph(&[vec![1]], false)
            .unwrap()
            .get(0);
        let mut arcs = graph.arcs().values().to_vec();
        arcs[2].score = bad;
        graph = Fsa::from_arcs(arcs, graph.num_states()).unwrap();
        let graphs = ragged_fsa::create_fsa_vec(&[graph]);
        for beam in BEAMS {
            match ragged_fsa::ctc_loss(&graphs, &dense, beam).unwrap_err() {
                Error::BadScore {
                    op,
                    fsa: 0,
                    arc: 2,
                    score,
                    ..
                } => {
                    assert_eq!(op, "ctc_loss");
                    assert_eq!(score.to_bits(), bad.to_bits());
                }
                other => panic!("{bad} at beam {beam}: {other:?}"),
            }
        }
        // mmi_loss follows the same rule
        let den = ragged_fsa::FsaVec::ctc_graph(&[vec![1]], false)
            .unwrap()
            .get(0);
        assert!(matches!(
            ragged_fsa::mmi_loss(&graphs, &den, &dense, 1.0),
            Err(Error::BadScore { op: "mmi_loss", .. })
        ));
    }
}

#[test]
fn ctc_loss_with_minus_inf_values_agrees_on_both_paths() {
    use ndarray::Array3;
    // -inf log-probs and graph scores are probabilities of zero: both paths give the same
    // finite loss and finite gradients, or +inf with a zero gradient when no path is left
    let graphs = ragged_fsa::FsaVec::ctc_graph(&[vec![1]], false).unwrap();
    let mut lp = Array3::<f32>::from_elem((1, 3, 2), -(2f32.ln()));
    lp[[0, 0, 1]] = f32::NEG_INFINITY;
    let dense = one_segment(&lp);
    let exact = ragged_fsa::ctc_loss(&graphs, &dense, f32::INFINITY).unwrap();
    let pruned = ragged_fsa::ctc_loss(&graphs, &dense, 1000.0).unwrap();
    assert!(exact.loss[0].is_finite());
    assert!((exact.loss[0] - pruned.loss[0]).abs() < 1e-5);
    for (a, b) in exact.grad.iter().zip(pruned.grad.iter()) {
        assert!(a.is_finite() && (a - b).abs() < 1e-5);
    }
    // symbol 1 impossible on every frame: no path
    let lp = Array3::<f32>::from_shape_fn(
        (1, 3, 2),
        |(_, _, c)| {
            if c == 1 {
                f32::NEG_INFINITY
            } else {
                0.0
            }
        },
    );
    for beam in BEAMS {
        let out = ragged_fsa::ctc_loss(&graphs, &one_segment(&lp), beam).unwrap();
        assert_eq!(out.loss, vec![f64::INFINITY]);
        assert!(out.grad.iter().all(|&g| g == 0.0));
    }
}

#[test]
fn ctc_loss_of_a_graph_without_arcs_is_infinite_on_both_paths() {
    use ndarray::Array3;
    // found by the dense_intersect fuzz target: the exact path indexed past the labels of a
    // graph that has none
    let graphs = ragged_fsa::create_fsa_vec(&[Fsa::from_arcs(Vec::new(), 2).unwrap()]);
    let lp = Array3::<f32>::from_elem((1, 3, 2), -(2f32.ln()));
    for beam in BEAMS {
        let out = ragged_fsa::ctc_loss(&graphs, &one_segment(&lp), beam).unwrap();
        assert_eq!(out.loss, vec![f64::INFINITY], "beam {beam}");
        assert!(out.grad.iter().all(|&g| g == 0.0));
    }
}

#[test]
fn ctc_loss_gradients_stay_finite_when_huge_log_probs_cancel() {
    use ndarray::Array3;
    // found by the dense_intersect fuzz target: log-probs -f32::MAX and +f32::MAX on one
    // path cancel in the sums, and the rounding made occupations exp(1e22) = +inf on the
    // exact path; posteriors are now at most 1
    let mut arcs = vec![ragged_fsa::Arc::new(0, 0, 0, 6.625); 2049];
    arcs.push(ragged_fsa::Arc::new(0, 0, 0, 0.0));
    arcs.push(ragged_fsa::Arc::new(0, 1, -1, -0.4375));
    let graphs = ragged_fsa::create_fsa_vec(&[Fsa::from_arcs(arcs, 2).unwrap()]);
    let mut lp = Array3::<f32>::zeros((1, 16, 1));
    lp[[0, 3, 0]] = -227.0 / 32.0;
    lp[[0, 7, 0]] = -f32::MAX;
    lp[[0, 12, 0]] = -25.0 / 32.0;
    lp[[0, 15, 0]] = f32::MAX;
    for beam in BEAMS {
        let out = ragged_fsa::ctc_loss(&graphs, &one_segment(&lp), beam).unwrap();
        assert!(
            !out.loss[0].is_nan() && out.loss[0] != f64::NEG_INFINITY,
            "beam {beam}: {:?}",
            out.loss
        );
        assert!(out.grad.iter().all(|g| g.is_finite()), "beam {beam}");
    }
}

// ---------------------------------------------------------------------------------------
// hardening round 3, item 5: the arcs of intersect_dense, intersect_dense_pruned, ctc_loss
// and intersect / compose are bounded before they are stored

/// A 2-state graph: `loops` self-loops labelled 0 on state 0, and the final arc.
fn self_loops(loops: usize) -> ragged_fsa::FsaVec {
    let mut arcs: Vec<ragged_fsa::Arc> = (0..loops)
        .map(|_| ragged_fsa::Arc::new(0, 0, 0, 0.0))
        .collect();
    arcs.push(ragged_fsa::Arc::new(0, 1, -1, 0.0));
    ragged_fsa::create_fsa_vec(&[Fsa::from_arcs(arcs, 2).unwrap()])
}

#[test]
fn dense_intersections_of_200001_self_loops_and_2000_frames_are_refused() {
    use ndarray::Array3;
    // the reproduced case: aborted in 5 s; every arc on every frame is on a best path
    let graphs = self_loops(200_001);
    let lp = Array3::<f32>::zeros((1, 2000, 1));
    let dense = one_segment(&lp);
    let count = 200_001 * 2000 + 1;
    let want = |op: &'static str, what: &'static str| Error::OutputLimit {
        op,
        what,
        count,
        limit: ragged_fsa::MAX_OUTPUT_ARCS,
    };
    let started = std::time::Instant::now();
    assert_eq!(
        ragged_fsa::intersect_dense(&graphs, &dense, 10.0, None).unwrap_err(),
        want("intersect_dense", "lattice arcs (MAX_OUTPUT_ARCS)")
    );
    eprintln!("intersect_dense refused in {:?}", started.elapsed());
    let started = std::time::Instant::now();
    assert_eq!(
        ragged_fsa::intersect_dense_pruned(&graphs, &dense, 20.0, 8.0, 30, 10_000).unwrap_err(),
        want("intersect_dense_pruned", "lattice arcs (MAX_OUTPUT_ARCS)")
    );
    eprintln!("intersect_dense_pruned refused in {:?}", started.elapsed());
    let started = std::time::Instant::now();
    let err = ragged_fsa::ctc_loss(&graphs, &dense, 10.0).unwrap_err();
    assert_eq!(
        err,
        want("ctc_loss", "lattice arcs (CtcLossConfig::max_lattice_arcs)")
    );
    assert_eq!(
        err.to_string(),
        format!(
            "ctc_loss: 400002001 lattice arcs (CtcLossConfig::max_lattice_arcs) pass the bound of {}",
            1 << 25
        )
    );
    eprintln!("ctc_loss refused in {:?}", started.elapsed());
}

#[test]
fn dense_intersections_past_the_bound_at_an_infinite_beam() {
    use ndarray::Array3;
    // a tenth of the reproduced case, still past the bound: 40,002,001 arcs
    let graphs = self_loops(20_001);
    let lp = Array3::<f32>::zeros((1, 2000, 1));
    let dense = one_segment(&lp);
    assert_eq!(
        ragged_fsa::intersect_dense(&graphs, &dense, f32::INFINITY, None).unwrap_err(),
        Error::OutputLimit {
            op: "intersect_dense",
            what: "lattice arcs (MAX_OUTPUT_ARCS)",
            count: 20_001 * 2000 + 1,
            limit: ragged_fsa::MAX_OUTPUT_ARCS,
        }
    );
    // the exact loss stores no lattice: it is computed
    let exact = ragged_fsa::ctc_loss(&graphs, &dense, f32::INFINITY).unwrap();
    let want = 2000.0 * 20_001f64.ln();
    assert!(
        (exact.loss[0] + want).abs() < 1e-6 * want,
        "{:?}",
        exact.loss
    );
}

#[test]
fn the_lattice_bound_is_configurable_and_exact() {
    use ndarray::Array3;
    let graphs = self_loops(3);
    let lp = Array3::<f32>::zeros((2, 4, 1));
    let dense = ragged_fsa::DenseFsaVec::new(lp.view(), &[[0, 0, 4], [1, 0, 4]]);
    // 3 x 4 + 1 arcs per segment, 26 in all
    let (lattice, _, _) = ragged_fsa::intersect_dense(&graphs, &dense, 10.0, None).unwrap();
    assert_eq!(lattice.num_arcs(), 26);
    let config = |max_lattice_arcs| ragged_fsa::CtcLossConfig {
        output_beam: 10.0,
        max_lattice_arcs,
        ..ragged_fsa::CtcLossConfig::default()
    };
    assert!(ragged_fsa::ctc_loss_with(&graphs, &dense, &config(26)).is_ok());
    assert_eq!(
        ragged_fsa::ctc_loss_with(&graphs, &dense, &config(25)).unwrap_err(),
        Error::OutputLimit {
            op: "ctc_loss",
            what: "lattice arcs (CtcLossConfig::max_lattice_arcs)",
            count: 26,
            limit: 25
        }
    );
    let mmi = |max_lattice_arcs| ragged_fsa::MmiLossConfig {
        output_beam: 10.0,
        max_lattice_arcs,
        ..ragged_fsa::MmiLossConfig::default()
    };
    let den = graphs.get(0);
    assert!(ragged_fsa::mmi_loss_with(&graphs, &den, &dense, &mmi(26)).is_ok());
    assert!(matches!(
        ragged_fsa::mmi_loss_with(&graphs, &den, &dense, &mmi(25)),
        Err(Error::OutputLimit {
            op: "mmi_loss",
            count: 26,
            limit: 25,
            ..
        })
    ));
}

/// A 2-state FSA with `n` parallel arcs into the final state.
fn parallel_arcs(n: usize) -> Fsa {
    let arcs = (0..n)
        .map(|i| ragged_fsa::Arc::new(0, 1, -1, i as f32))
        .collect();
    Fsa::from_arcs(arcs, 2).unwrap()
}

#[test]
fn intersect_and_compose_of_20000_parallel_arcs_are_refused() {
    // the reproduced case: aborted in 4 s (400,000,000 arcs)
    let a = parallel_arcs(20_000);
    let started = std::time::Instant::now();
    let want = |op| Error::OutputLimit {
        op,
        what: "arcs (MAX_OUTPUT_ARCS)",
        count: 400_000_000,
        limit: ragged_fsa::MAX_OUTPUT_ARCS,
    };
    for eps in [false, true] {
        assert_eq!(a.intersect(&a, eps).unwrap_err(), want("intersect"));
    }
    let mut t = a.clone();
    t.set_attr(
        ragged_fsa::AUX_LABELS,
        ragged_fsa::Attr::I32(vec![-1; 20_000]),
    )
    .unwrap();
    assert_eq!(t.compose(&a, true).unwrap_err(), want("compose"));
    assert_eq!(
        t.compose_with_inner_labels(&a, true, "inner").unwrap_err(),
        want("compose")
    );
    let va = ragged_fsa::create_fsa_vec(std::slice::from_ref(&a));
    assert_eq!(va.intersect(&va, false).unwrap_err(), want("intersect"));
    let vt = ragged_fsa::create_fsa_vec(&[t]);
    assert_eq!(vt.compose(&va, false).unwrap_err(), want("compose"));
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    // below the bound the product is built as before
    let small = parallel_arcs(100);
    let (out, a_map, b_map) = small.intersect(&small, false).unwrap();
    assert_eq!(out.num_arcs(), 10_000);
    assert_eq!((a_map.len(), b_map.len()), (10_000, 10_000));
}
