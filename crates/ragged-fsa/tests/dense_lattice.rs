//! Gradients of total scores, the MMI loss and one-best decoding, against brute force and
//! hand-worked examples.

use crate::common;

use common::{log_sum, paths, random_acyclic, Rng};
use ndarray::Array3;
use ragged_fsa::{
    create_fsa_vec, ctc_loss, intersect_dense, mmi_loss, one_best, Attr, BestPath, DenseFsaVec,
    Error, Fsa, FsaVec, Semiring, AUX_LABELS,
};

#[test]
fn tot_score_gradients_are_arc_posteriors_and_best_path_indicators() {
    let mut rng = Rng(99);
    for case in 0..100 {
        let fsas: Vec<Fsa> = (0..3).map(|_| random_acyclic(&mut rng, 7)).collect();
        let vec = create_fsa_vec(&fsas);
        let log = vec.get_tot_scores_grad(Semiring::Log).unwrap();
        let trop = vec.get_tot_scores_grad(Semiring::Tropical).unwrap();
        let (_, best_map) = vec.shortest_path().unwrap();
        let mut base = 0;
        for fsa in &fsas {
            let all = paths(fsa);
            let tot = log_sum(all.iter().map(|p| p.1));
            for arc in 0..fsa.num_arcs() {
                let want: f64 = if tot == f64::NEG_INFINITY {
                    0.0
                } else {
                    all.iter()
                        .filter(|p| p.0.contains(&arc))
                        .map(|p| (p.1 - tot).exp())
                        .sum()
                };
                assert!(
                    (log[base + arc] - want).abs() < 1e-9,
                    "case {case} arc {arc}"
                );
                let on_best = best_map.contains(&((base + arc) as i32));
                assert_eq!(trop[base + arc], if on_best { 1.0 } else { 0.0 });
            }
            base += fsa.num_arcs();
        }
    }
    let cyclic: Fsa = "0 0 1 0\n0 1 -1 0\n1".parse().unwrap();
    assert!(matches!(
        create_fsa_vec(&[cyclic]).get_tot_scores_grad(Semiring::Log),
        Err(Error::NotTopSortedAcyclic { .. })
    ));
}

fn random_log_probs(rng: &mut Rng, n: usize, t: usize, c: usize) -> Array3<f32> {
    let mut x = Array3::from_shape_fn((n, t, c), |_| rng.score());
    // log_softmax per frame, so every frame is a distribution
    for mut row in x.lanes_mut(ndarray::Axis(2)) {
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let z = m + row.iter().map(|v| (v - m).exp()).sum::<f32>().ln();
        row.mapv_inplace(|v| v - z);
    }
    x
}

#[test]
fn mmi_loss_is_numerator_minus_scaled_denominator() {
    let mut rng = Rng(5);
    let lp = random_log_probs(&mut rng, 3, 9, 4);
    let segments = [[2, 1, 8], [0, 0, 9], [1, 3, 2]];
    let dense = DenseFsaVec::new(lp.view(), &segments);
    let num = FsaVec::ctc_graph(&[vec![1, 2, 3], vec![3, 3], vec![1, 1]], false).unwrap();
    // a token loop (written out: `Fsa::ctc_topo`'s signature is in flux)
    let den: Fsa = "0 0 0 0\n0 0 1 -0.5\n0 0 2 0.25\n0 0 3 0\n0 1 -1 0\n1"
        .parse()
        .unwrap();
    let den_scale = 0.7;
    let out = mmi_loss(&num, &den, &dense, den_scale).unwrap();
    // the parts, each checked against brute force in dense_intersect.rs
    let num_ctc = ctc_loss(&num, &dense, f32::INFINITY).unwrap();
    let den_ctc = ctc_loss(
        &create_fsa_vec(std::slice::from_ref(&den)),
        &dense,
        f32::INFINITY,
    )
    .unwrap();
    for i in 0..3 {
        if num_ctc.loss[i].is_infinite() {
            assert_eq!(out.loss[i], f64::INFINITY);
        } else {
            let want = num_ctc.loss[i] - den_scale * den_ctc.loss[i];
            assert!((out.loss[i] - want).abs() < 1e-9, "{i}");
        }
    }
    assert_eq!(out.loss[2], f64::INFINITY); // [1, 1] needs 3 frames, the segment has 2
                                            // the gradient: numerator minus scaled denominator, on the feasible segments only
    let feasible = DenseFsaVec::new(lp.view(), &segments[..2]);
    let num2 = FsaVec::ctc_graph(&[vec![1, 2, 3], vec![3, 3]], false).unwrap();
    let n2 = ctc_loss(&num2, &feasible, f32::INFINITY).unwrap();
    let d2 = ctc_loss(
        &create_fsa_vec(std::slice::from_ref(&den)),
        &feasible,
        f32::INFINITY,
    )
    .unwrap();
    for ((g, a), b) in out.grad.iter().zip(n2.grad.iter()).zip(d2.grad.iter()) {
        assert!((*g as f64 - (*a as f64 - den_scale * *b as f64)).abs() < 1e-6);
    }
    // a den graph with a label beyond C-1
    let bad: Fsa = "0 1 4 0\n1 2 -1 0\n2".parse().unwrap();
    assert_eq!(
        mmi_loss(&num, &bad, &dense, 1.0).unwrap_err(),
        Error::LabelOutOfRange {
            fsa: 0,
            arc: 0,
            label: 4,
            num_symbols: 4
        }
    );
}

#[test]
fn one_best_reads_labels_and_words_of_the_best_path() {
    // four frames that clearly say 1 1 blank 2
    let mut lp = Array3::<f32>::from_elem((1, 4, 3), -5.0);
    for (t, c) in [(0, 1), (1, 1), (2, 0), (3, 2)] {
        lp[[0, t, c]] = -0.01;
    }
    let dense = DenseFsaVec::new(lp.view(), &[[0, 0, 4]]);
    let mut graph = FsaVec::ctc_graph(&[vec![1, 2]], false).unwrap();
    let aux: Vec<i32> = graph
        .aux_labels()
        .unwrap()
        .as_i32()
        .unwrap()
        .iter()
        .map(|&a| if a > 0 { a + 10 } else { a })
        .collect();
    graph.set_attr(AUX_LABELS, Attr::I32(aux)).unwrap();
    let (lattice, _, _) = intersect_dense(&graph, &dense, 8.0, None).unwrap();
    let best = one_best(&lattice).unwrap();
    assert_eq!(best.len(), 1);
    assert_eq!(best[0].labels, vec![1, 1, 0, 2]);
    assert_eq!(best[0].aux_labels, vec![11, 12]);
    assert!((best[0].score - 4.0 * -0.01).abs() < 1e-5);
    // no path: empty, -inf
    let short = DenseFsaVec::new(lp.view(), &[[0, 0, 1]]);
    let (lattice, _, _) = intersect_dense(&graph, &short, 8.0, None).unwrap();
    assert_eq!(
        one_best(&lattice).unwrap(),
        vec![BestPath {
            labels: vec![],
            aux_labels: vec![],
            score: f64::NEG_INFINITY
        }]
    );
}

#[test]
fn nbest_finds_every_word_sequence_with_its_best_path() {
    let mut rng = Rng(31);
    let mut checked = 0;
    for case in 0..40 {
        let fsas: Vec<Fsa> = (0..2).map(|_| random_acyclic(&mut rng, 6)).collect();
        let vec = create_fsa_vec(&fsas);
        let lists = ragged_fsa::nbest(&vec, 3000, 0.5, 7).unwrap();
        assert_eq!(lists, ragged_fsa::nbest(&vec, 3000, 0.5, 7).unwrap());
        for (fsa, list) in fsas.iter().zip(&lists) {
            // brute force: best score per word sequence (labels without 0 and -1)
            let mut want: std::collections::BTreeMap<Vec<i32>, f64> = Default::default();
            let arcs = fsa.arcs().values();
            for (path, score) in paths(fsa) {
                let words: Vec<i32> = path
                    .iter()
                    .map(|&a| arcs[a].label)
                    .filter(|&l| l != 0 && l != -1)
                    .collect();
                let e = want.entry(words).or_insert(f64::NEG_INFINITY);
                *e = e.max(score);
            }
            assert_eq!(list.len(), want.len(), "case {case}");
            for w in list.windows(2) {
                assert!(w[0].score >= w[1].score);
            }
            for p in list {
                assert!((p.score - want[&p.aux_labels]).abs() < 1e-5, "case {case}");
            }
            checked += list.len();
        }
    }
    assert!(checked > 40);
}
