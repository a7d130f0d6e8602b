//! `intersect_dense` and `ctc_loss` against brute force: every path of a small graph through
//! a few frames enumerated, scored and summed in f64.

use crate::common;

use common::Rng;
use ndarray::Array3;
use ragged_fsa::{
    create_fsa_vec, ctc_loss, ctc_loss_with, intersect_dense, Arc, CtcLossConfig, DenseFsaVec,
    Error, Fsa, FsaVec, Semiring,
};

/// A random graph with `2..=5` states, cycles and self-loops allowed, labels in `0..c`, and
/// `-1` arcs into the final state.
fn random_graph(rng: &mut Rng, c: u64) -> Fsa {
    let n = 2 + rng.below(4) as i32;
    let mut arcs = Vec::new();
    for s in 0..n - 1 {
        for _ in 0..1 + rng.below(3) {
            let d = rng.below(n as u64) as i32;
            let label = if d == n - 1 { -1 } else { rng.below(c) as i32 };
            arcs.push(Arc::new(s, d, label, rng.score()));
        }
    }
    Fsa::from_arcs(arcs, n as usize).unwrap()
}

fn random_log_probs(rng: &mut Rng, n: usize, t: usize, c: usize) -> Array3<f32> {
    Array3::from_shape_fn((n, t, c), |_| -(rng.below(3000) as f32) / 1000.0)
}

/// Every path of `graph` through the rows of `scores` (num_cols columns, last row final):
/// (graph arc index per frame, path score in f64).
fn paths(graph: &Fsa, scores: &[f32], num_cols: usize) -> Vec<(Vec<usize>, f64)> {
    let rows = scores.len() / num_cols;
    let final_state = graph.num_states() - 1;
    let arcs = graph.arcs().values();
    let mut out = Vec::new();
    // depth-first over (arcs taken so far, state, score)
    let mut stack = vec![(Vec::new(), 0usize, 0f64)];
    while let Some((path, state, score)) = stack.pop() {
        let t = path.len();
        if t == rows {
            if state == final_state {
                out.push((path, score));
            }
            continue;
        }
        for (i, a) in arcs.iter().enumerate() {
            if a.src_state as usize != state {
                continue;
            }
            let s = a.score as f64 + scores[t * num_cols + (a.label + 1) as usize] as f64;
            if s == f64::NEG_INFINITY {
                continue;
            }
            let mut next = path.clone();
            next.push(i);
            stack.push((next, a.dest_state as usize, score + s));
        }
    }
    out
}

fn log_sum(xs: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = xs.collect();
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// k2's output-beam pruning on enumerated paths: a (frame, arc) pair survives when some path
/// through it is within `beam` of the best; a path survives when all its pairs do.
fn kept_paths(all: &[(Vec<usize>, f64)], beam: f32) -> Vec<&(Vec<usize>, f64)> {
    let best = all.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let mut pairs = std::collections::HashSet::new();
    for (p, score) in all {
        if *score > best - beam as f64 {
            pairs.extend(p.iter().enumerate().map(|(t, &a)| (t, a)));
        }
    }
    all.iter()
        .filter(|(p, _)| p.iter().enumerate().all(|(t, &a)| pairs.contains(&(t, a))))
        .collect()
}

struct Case {
    graphs: Vec<Fsa>,
    log_probs: Array3<f32>,
    segments: Vec<[i32; 3]>,
}

fn random_case(seed: u64) -> Case {
    let mut rng = Rng(seed);
    let (n, t, c) = (2, 6, 3);
    let log_probs = random_log_probs(&mut rng, n, t, c);
    let num_segments = 1 + rng.below(4) as usize;
    let segments: Vec<[i32; 3]> = (0..num_segments)
        .map(|_| {
            let seq = rng.below(n as u64) as i32;
            let start = rng.below(3) as i32;
            let dur = rng.below((t as i32 - start) as u64 + 1).min(4) as i32;
            [seq, start, dur]
        })
        .collect();
    let graphs = (0..num_segments)
        .map(|_| random_graph(&mut rng, c as u64))
        .collect();
    Case {
        graphs,
        log_probs,
        segments,
    }
}

#[test]
fn intersect_dense_totals_and_lattice_arcs_match_brute_force() {
    for seed in 0..300 {
        let case = random_case(seed);
        let dense = DenseFsaVec::new(case.log_probs.view(), &case.segments);
        let graphs = create_fsa_vec(&case.graphs);
        let nc = dense.num_cols();
        for beam in [f32::INFINITY, 1.5] {
            let (lattice, a_map, b_map) = intersect_dense(&graphs, &dense, beam, None).unwrap();
            assert_eq!(lattice.num_fsas(), case.graphs.len());
            let log_tot: Vec<f64> = lattice.get_tot_scores(Semiring::Log).unwrap();
            let trop_tot: Vec<f64> = lattice.get_tot_scores(Semiring::Tropical).unwrap();
            let mut arc_base = 0usize;
            let mut graph_base = 0usize;
            let mut lattice_arc = 0usize;
            for (i, graph) in case.graphs.iter().enumerate() {
                let all = paths(graph, dense.fsa_scores(i), nc);
                let best = all.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
                let kept = kept_paths(&all, beam);
                let want_log = log_sum(kept.iter().map(|p| p.1));
                assert!(
                    (log_tot[i] - want_log).abs() < 1e-4 || log_tot[i] == want_log,
                    "seed {seed} fsa {i} beam {beam}: {} vs {want_log}",
                    log_tot[i]
                );
                assert!(
                    (trop_tot[i] - best).abs() < 1e-4 || trop_tot[i] == best,
                    "seed {seed} fsa {i}"
                );
                // lattice arcs: exactly the (frame, graph arc) pairs on kept paths
                let mut want: Vec<(usize, usize)> = kept
                    .iter()
                    .flat_map(|p| p.0.iter().enumerate().map(|(t, &a)| (t, a)))
                    .collect();
                want.sort();
                want.dedup();
                let n_arcs = lattice.get(i).num_arcs();
                let row0 = dense.row_splits()[i] as usize;
                let mut got: Vec<(usize, usize)> = (lattice_arc..lattice_arc + n_arcs)
                    .map(|j| {
                        (
                            b_map[j] as usize / nc - row0,
                            a_map[j] as usize - graph_base,
                        )
                    })
                    .collect();
                // b_map points at the column of the graph arc's label
                for j in lattice_arc..lattice_arc + n_arcs {
                    let arc = graphs.arcs().values()[a_map[j] as usize];
                    assert_eq!(b_map[j] as usize % nc, (arc.label + 1) as usize);
                    let lat = lattice.arcs().values()[j];
                    let t = b_map[j] as usize / nc;
                    assert_eq!(
                        lat.score,
                        arc.score + dense.scores()[t * nc + (arc.label + 1) as usize]
                    );
                    assert_eq!(lat.label, arc.label);
                }
                got.sort();
                assert_eq!(got, want, "seed {seed} fsa {i} beam {beam}");
                lattice_arc += n_arcs;
                graph_base += graph.num_arcs();
                arc_base += n_arcs;
            }
            assert_eq!(arc_base, lattice.num_arcs());
        }
    }
}

/// `graph` with each arc relabelled by its destination (`-1` into the final state): every
/// arc into a state has the same label, as in CTC graphs (the loss takes a shortcut there).
fn state_labelled(graph: &Fsa, c: i32) -> Fsa {
    let final_state = graph.num_states() as i32 - 1;
    let arcs: Vec<Arc> = graph
        .arcs()
        .values()
        .iter()
        .map(|a| {
            let label = if a.dest_state == final_state {
                -1
            } else {
                a.dest_state % c
            };
            Arc::new(a.src_state, a.dest_state, label, a.score)
        })
        .collect();
    Fsa::from_arcs(arcs, graph.num_states()).unwrap()
}

#[test]
fn ctc_loss_and_gradient_match_brute_force() {
    for seed in 0..300 {
        let case = random_case(seed);
        let dense = DenseFsaVec::new(case.log_probs.view(), &case.segments);
        let c = case.log_probs.dim().2 as i32;
        let relabelled: Vec<Fsa> = case.graphs.iter().map(|g| state_labelled(g, c)).collect();
        for graph_list in [&case.graphs, &relabelled] {
            check_ctc_against_brute_force(seed, graph_list, &case, &dense);
        }
    }
}

fn check_ctc_against_brute_force(seed: u64, graph_list: &[Fsa], case: &Case, dense: &DenseFsaVec) {
    {
        let graphs = create_fsa_vec(graph_list);
        let nc = dense.num_cols();
        for beam in [f32::INFINITY, 1.5] {
            let out = ctc_loss(&graphs, dense, beam).unwrap();
            let mut grad = Array3::<f64>::zeros(case.log_probs.dim());
            for (i, graph) in graph_list.iter().enumerate() {
                let all = paths(graph, dense.fsa_scores(i), nc);
                let kept = kept_paths(&all, beam);
                let tot = log_sum(kept.iter().map(|p| p.1));
                if tot == f64::NEG_INFINITY {
                    assert_eq!(out.loss[i], f64::INFINITY, "seed {seed}");
                    continue;
                }
                assert!(
                    (out.loss[i] + tot).abs() < 1e-4,
                    "seed {seed} fsa {i}: {} vs {}",
                    out.loss[i],
                    -tot
                );
                let [seq, start, dur] = case.segments[i];
                for (p, score) in &kept {
                    let w = (score - tot).exp();
                    for (t, &a) in p.iter().enumerate().take(dur as usize) {
                        let label = graph.arcs().values()[a].label;
                        grad[[seq as usize, start as usize + t, label as usize]] -= w;
                    }
                }
            }
            for (g, w) in out.grad.iter().zip(grad.iter()) {
                assert!(
                    (*g as f64 - w).abs() < 1e-5,
                    "seed {seed} beam {beam}: {g} vs {w}"
                );
            }
        }
    }
}

#[test]
fn a_shared_graph_and_a_to_b_map_pair_as_documented() {
    let case = random_case(7);
    let dense = DenseFsaVec::new(case.log_probs.view(), &case.segments);
    let one = create_fsa_vec(&case.graphs[..1]);
    let (shared, _, _) = intersect_dense(&one, &dense, f32::INFINITY, None).unwrap();
    assert_eq!(shared.num_fsas(), dense.num_fsas());
    let repeated = create_fsa_vec(&vec![case.graphs[0].clone(); dense.num_fsas()]);
    let (each, _, b_each) = intersect_dense(&repeated, &dense, f32::INFINITY, None).unwrap();
    assert_eq!(shared.arcs(), each.arcs());
    // a_to_b_map: graph 0 against the last segment, twice
    let last = dense.num_fsas() as i32 - 1;
    let two = create_fsa_vec(&[case.graphs[0].clone(), case.graphs[0].clone()]);
    let (mapped, _, b_mapped) =
        intersect_dense(&two, &dense, f32::INFINITY, Some(&[last, last])).unwrap();
    assert_eq!(mapped.get(0), each.get(last as usize));
    assert_eq!(mapped.get(1), each.get(last as usize));
    let last_arcs = each.get(last as usize).num_arcs();
    assert_eq!(b_mapped[..last_arcs], b_each[b_each.len() - last_arcs..]);
}

#[test]
fn bad_inputs_are_clear_errors() {
    let lp = Array3::<f32>::zeros((2, 4, 3));
    let dense = DenseFsaVec::new(lp.view(), &[[0, 0, 4], [1, 1, 2]]);
    let ok: Fsa = "0 1 2 0\n1 2 -1 0\n2".parse().unwrap();
    let bad_label: Fsa = "0 1 3 0\n1 2 -1 0\n2".parse().unwrap();
    let graphs = create_fsa_vec(&[ok.clone(), bad_label]);
    assert_eq!(
        intersect_dense(&graphs, &dense, 10.0, None).unwrap_err(),
        Error::LabelOutOfRange {
            fsa: 1,
            arc: 0,
            label: 3,
            num_symbols: 3
        }
    );
    let three = create_fsa_vec(&[ok.clone(), ok.clone(), ok.clone()]);
    let err = ctc_loss(&three, &dense, f32::INFINITY).unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "graphs",
            expected: 2,
            got: 3
        }
    );
    assert_eq!(err.to_string(), "3 graphs where 2 are needed");
    let two = create_fsa_vec(&[ok.clone(), ok.clone()]);
    assert_eq!(
        intersect_dense(&two, &dense, 10.0, Some(&[0])).unwrap_err(),
        Error::CountMismatch {
            what: "entries in a_to_b_map",
            expected: 2,
            got: 1
        }
    );
    let err = intersect_dense(&two, &dense, 10.0, Some(&[0, 2])).unwrap_err();
    assert_eq!(
        err,
        Error::MapOutOfRange {
            map: "a_to_b_map",
            position: 1,
            value: 2,
            size: 2
        }
    );
    assert_eq!(err.to_string(), "a_to_b_map[1] = 2 is outside 0..2");
    for beam in [0.0, -1.0, f32::NAN] {
        let err = intersect_dense(&two, &dense, beam, None).unwrap_err();
        assert!(
            matches!(
                err,
                Error::BadBeam {
                    name: "output_beam",
                    ..
                }
            ),
            "{err}"
        );
    }
    assert_eq!(
        ctc_loss(&two, &dense, -2.0).unwrap_err().to_string(),
        "output_beam = -2 must be a positive number"
    );
}

#[test]
fn infeasible_segments_give_inf_or_zero_and_no_gradient() {
    // a graph needing 3 frames against segments of 2 and 3 frames
    let lp = Array3::<f32>::from_elem((1, 3, 2), -(2f32.ln()));
    let dense = DenseFsaVec::new(lp.view(), &[[0, 0, 2], [0, 0, 3]]);
    let graphs = FsaVec::linear(&[vec![1, 1, 1], vec![1, 1, 1]]).unwrap();
    for beam in [f32::INFINITY, 10.0] {
        let out = ctc_loss(&graphs, &dense, beam).unwrap();
        assert_eq!(out.loss[0], f64::INFINITY);
        assert!((out.loss[1] - 3.0 * 2f64.ln()).abs() < 1e-6);
        assert_eq!(out.grad[[0, 0, 1]], -1.0);
        assert_eq!(out.grad[[0, 0, 0]], 0.0);
        let zeroed = ctc_loss_with(
            &graphs,
            &dense,
            &CtcLossConfig {
                output_beam: beam,
                zero_infinity: true,
                ..CtcLossConfig::default()
            },
        )
        .unwrap();
        assert_eq!(zeroed.loss[0], 0.0);
        assert_eq!(zeroed.grad, out.grad);
        let (lattice, _, _) = intersect_dense(&graphs, &dense, beam, None).unwrap();
        assert_eq!(lattice.get(0).num_states(), 0);
    }
}

#[test]
fn gradient_matches_finite_differences_in_f64() {
    // d loss / d log_probs by central differences of the brute-force total (f64 throughout)
    let case = random_case(11);
    let dense = DenseFsaVec::new(case.log_probs.view(), &case.segments);
    let graphs = create_fsa_vec(&case.graphs);
    let out = ctc_loss(&graphs, &dense, f32::INFINITY).unwrap();
    let total_loss = |lp: &Array3<f64>| -> f64 {
        let mut sum = 0.0;
        for (i, graph) in case.graphs.iter().enumerate() {
            let [seq, start, dur] = case.segments[i];
            let nc = lp.dim().2 + 1;
            let mut scores = Vec::new();
            for t in 0..dur as usize {
                scores.push(f32::NEG_INFINITY);
                scores
                    .extend((0..nc - 1).map(|c| lp[[seq as usize, start as usize + t, c]] as f32));
            }
            scores.push(0.0);
            scores.extend(std::iter::repeat_n(f32::NEG_INFINITY, nc - 1));
            // brute force in f64 on the perturbed values
            let all = paths(graph, &scores, nc);
            let mut tot = Vec::new();
            for (p, _) in &all {
                let mut s = 0.0f64;
                for (t, &a) in p.iter().enumerate() {
                    let arc = graph.arcs().values()[a];
                    s += arc.score as f64;
                    if t < dur as usize {
                        s += lp[[seq as usize, start as usize + t, arc.label as usize]];
                    }
                }
                tot.push(s);
            }
            let t = log_sum(tot.into_iter());
            if t.is_finite() {
                sum -= t;
            }
        }
        sum
    };
    let base: Array3<f64> = case.log_probs.mapv(|x| x as f64);
    let h = 1e-6;
    for idx in ndarray::indices(base.dim()) {
        let mut plus = base.clone();
        plus[idx] += h;
        let mut minus = base.clone();
        minus[idx] -= h;
        let fd = (total_loss(&plus) - total_loss(&minus)) / (2.0 * h);
        assert!(
            (out.grad[idx] as f64 - fd).abs() < 1e-5,
            "{idx:?}: {} vs {fd}",
            out.grad[idx]
        );
    }
}

#[test]
fn extreme_log_probs_keep_their_exact_loss() {
    // target [1, 2] in 3 frames: the blank path dominates the first two frames by 1000
    // nats but leads nowhere; only label 2 is possible on the last frame. The paths are
    // "1 b 2", "b 1 2" (-1000 each) and "1 1 2" (-2000).
    let inf = f32::NEG_INFINITY;
    let lp = Array3::from_shape_vec(
        (1, 3, 3),
        vec![0.0, -1000.0, inf, 0.0, -1000.0, inf, inf, inf, 0.0],
    )
    .unwrap();
    let dense = DenseFsaVec::new(lp.view(), &[[0, 0, 3]]);
    let graphs = FsaVec::ctc_graph(&[vec![1, 2]], false).unwrap();
    let out = ctc_loss(&graphs, &dense, f32::INFINITY).unwrap();
    let want = -log_sum([-1000.0, -1000.0, -2000.0].into_iter());
    assert!(
        (out.loss[0] - want).abs() < 1e-9,
        "{} vs {want}",
        out.loss[0]
    );
    // posteriors: frame 0 is "1" or "b" half each, frame 2 is "2"
    assert!((out.grad[[0, 0, 1]] + 0.5).abs() < 1e-6);
    assert!((out.grad[[0, 0, 0]] + 0.5).abs() < 1e-6);
    assert_eq!(out.grad[[0, 2, 2]], -1.0);
}

#[test]
fn a_trellis_too_large_is_an_error_not_an_allocation() {
    // 2^20 states (no arcs: cheap to build) against 300 frames: 2^20 * 302 > 2^28 slots
    let graph = Fsa::from_arcs(Vec::new(), 1 << 20).unwrap();
    let lp = Array3::<f32>::zeros((1, 300, 2));
    let dense = DenseFsaVec::new(lp.view(), &[[0, 0, 300]]);
    let graphs = create_fsa_vec(&[graph]);
    let want = Error::TooLarge {
        what: "graph states x frames of one segment (intersect_dense_pruned bounds it)",
    };
    assert_eq!(
        intersect_dense(&graphs, &dense, 10.0, None).unwrap_err(),
        want
    );
    assert_eq!(ctc_loss(&graphs, &dense, f32::INFINITY).unwrap_err(), want);
    assert_eq!(ragged_fsa::MAX_TRELLIS_STATES, 1 << 28);
}

#[test]
fn no_segments_give_empty_answers() {
    let lp = Array3::<f32>::zeros((2, 3, 2));
    let dense = DenseFsaVec::new(lp.view(), &[]);
    assert_eq!(dense.num_fsas(), 0);
    assert_eq!(dense.scores_index_to_log_probs(0), None);
    let graphs = FsaVec::linear(&[]).unwrap();
    let (lattice, a_map, b_map) = intersect_dense(&graphs, &dense, 10.0, None).unwrap();
    assert_eq!((lattice.num_fsas(), a_map.len(), b_map.len()), (0, 0, 0));
    let out = ctc_loss(&graphs, &dense, f32::INFINITY).unwrap();
    assert!(out.loss.is_empty());
    assert_eq!(out.grad, Array3::<f32>::zeros((2, 3, 2)));
}
