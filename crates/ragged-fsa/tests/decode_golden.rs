//! Decoding with an HLG, end to end, against k2 1.23.2: the graph compiled from the seeded
//! lexicon and bigram as icefall's `compile_hlg.py` does (`common/hlg.rs`; k2 compiles its
//! own from the same text), the seeded network outputs of the decoding bench, then
//! `intersect_dense_pruned(20, 8, 30, 10000)` and `one_best`: the same best word sequences
//! and scores as k2's `intersect_dense_pruned` + `shortest_path` (golden file and script:
//! `tests/golden/decode_k2.txt`, `tests/golden/decode_generate_k2.py`). Two cases decode a
//! 1,000-word graph with at most 100 and 300 active states, where the dynamic beam shrinks
//! on most frames and the best paths depend on every detail of the search; our HLG must
//! also have k2's size. The HLG is passed as one `Fsa`, as icefall passes it to k2.

use crate::common;
use crate::hlg;

use common::cases;
use ndarray::ArrayView3;
use ragged_fsa::{create_fsa_vec, intersect_dense_pruned, one_best, DenseFsaVec, Fsa};

#[test]
fn hlg_best_paths_agree_with_k2() {
    let all = cases(include_str!("golden/decode_k2.txt"));
    assert_eq!(all.len(), 4);
    for case in &all {
        let words: Vec<usize> = case.get("words");
        let dims: Vec<usize> = case.get("dims");
        let (n, t, c) = (dims[0], dims[1], dims[2]);
        assert_eq!(c, hlg::NUM_PHONES + 1);
        let graph: Fsa = hlg::compile_hlg(words[0]);
        let k2_size: Vec<usize> = case.get("hlg");
        assert_eq!(
            vec![graph.num_states(), graph.num_arcs()],
            k2_size,
            "{}: our HLG has k2's states and arcs",
            case.name
        );
        let input = benches::ctc::ctc_input(n, t, c, 50.min(t / 5), 120.min(t / 4), 14);
        let log_probs = input.log_probs();
        let view = ArrayView3::from_shape((n, t, c), &log_probs).unwrap();
        let segments: Vec<[i32; 3]> = input
            .lengths
            .iter()
            .enumerate()
            .map(|(i, &len)| [i as i32, 0, len as i32])
            .collect();
        let dense = DenseFsaVec::new(view, &segments);
        let max_active: Vec<usize> = case.get("max_active");
        // the single HLG, as k2 takes it (borrowed as a vector of one, not copied), gives
        // what its copy into an FsaVec of one gives
        let (lattice, a_map, b_map) =
            intersect_dense_pruned(&graph, &dense, 20.0, 8.0, 30, max_active[0]).unwrap();
        let graphs = create_fsa_vec(std::slice::from_ref(&graph));
        let copied = intersect_dense_pruned(&graphs, &dense, 20.0, 8.0, 30, max_active[0]);
        assert!(
            copied.unwrap() == (lattice.clone(), a_map, b_map),
            "{}: the single graph's lattice",
            case.name
        );
        let best = one_best(&lattice).unwrap();
        let want_scores: Vec<f64> = case.get("best_score");
        for i in 0..n {
            let want: Vec<i32> = case.get(&format!("best_words {i}"));
            assert_eq!(best[i].aux_labels, want, "{} utterance {i}", case.name);
            assert!(
                (best[i].score - want_scores[i]).abs() < 1e-3 * want_scores[i].abs(),
                "{} utterance {i}: score {} vs k2's {}",
                case.name,
                best[i].score,
                want_scores[i]
            );
            assert!(!want.is_empty(), "the golden utterances say some words");
        }
    }
}
