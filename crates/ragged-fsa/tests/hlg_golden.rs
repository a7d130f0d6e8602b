//! Graph compilation against k2 1.23.2: LG and HLG compiled from the seeded lexicon and
//! bigram as icefall's `compile_hlg.py` does (`common/hlg.rs`; k2 compiles its own from the
//! same text) have k2's state and arc counts after every step, and on a 20-word lexicon
//! the final LG is k2's arc for arc (labels, word ids and scores), up to the numbering of
//! states. Golden file and script: `tests/golden/hlg_k2.txt`,
//! `tests/golden/hlg_generate_k2.py`.

use crate::common;
use crate::hlg;

use std::collections::{BTreeMap, HashMap, VecDeque};

use common::cases;
use ragged_fsa::{Attr, Fsa};

/// An arc with its destination as read from text or an FSA: (src, dest, label, word ids,
/// score).
type TextArc = (usize, usize, i32, Vec<i32>, f64);

/// The arcs of `fsa` with their word ids.
fn arcs_of(fsa: &Fsa) -> Vec<TextArc> {
    let words = match fsa.aux_labels() {
        Some(Attr::Ragged(r)) => r.to_vec_vec(),
        other => panic!("LG has ragged aux labels, not {other:?}"),
    };
    fsa.arcs()
        .values()
        .iter()
        .zip(words)
        .map(|(a, w)| {
            let (src, dest) = (a.src_state as usize, a.dest_state as usize);
            (src, dest, a.label, w, a.score as f64)
        })
        .collect()
}

/// The golden's arc lines, `src dest label [w ..] score`.
fn arcs_of_text(body: &str) -> Vec<TextArc> {
    body.lines()
        .filter(|l| !l.contains(':') && l.contains('['))
        .map(|l| {
            let (head, rest) = l.split_once('[').unwrap();
            let (ids, score) = rest.split_once(']').unwrap();
            let head: Vec<i64> = head
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let ids = ids.split_whitespace().map(|x| x.parse().unwrap()).collect();
            let (src, dest) = (head[0] as usize, head[1] as usize);
            (
                src,
                dest,
                head[2] as i32,
                ids,
                score.trim().parse().unwrap(),
            )
        })
        .collect()
}

/// The arcs renumbered by a breadth-first walk from state 0 that takes each state's arcs in
/// the order of (label, word ids, score to 1/100), then sorted: equal for two graphs that
/// differ only in their state numbering (the walk's order is unambiguous on these graphs;
/// an ambiguity would show as a difference, never hide one).
fn canonical(arcs: &[TextArc]) -> Vec<TextArc> {
    let mut by_state: HashMap<usize, Vec<&TextArc>> = HashMap::new();
    for arc in arcs {
        by_state.entry(arc.0).or_default().push(arc);
    }
    let mut number: HashMap<usize, usize> = HashMap::from([(0, 0)]);
    let mut queue = VecDeque::from([0usize]);
    let mut out = Vec::new();
    while let Some(s) = queue.pop_front() {
        let mut leaving = by_state.remove(&s).unwrap_or_default();
        leaving.sort_by_key(|a| (a.2, a.3.clone(), (a.4 * 100.0).round() as i64));
        for a in leaving {
            let next = number.len();
            let dest = *number.entry(a.1).or_insert_with(|| {
                queue.push_back(a.1);
                next
            });
            out.push((number[&s], dest, a.2, a.3.clone(), a.4));
        }
    }
    assert!(by_state.is_empty(), "every state is reachable");
    out.sort_by(|x, y| {
        (x.0, x.1, x.2, &x.3)
            .cmp(&(y.0, y.1, y.2, &y.3))
            .then(x.4.total_cmp(&y.4))
    });
    out
}

#[test]
fn lg_and_hlg_have_k2s_sizes_after_every_step() {
    let all = cases(include_str!("golden/hlg_k2.txt"));
    assert_eq!(all.len(), 4);
    for case in &all {
        let words: Vec<usize> = case.get("words");
        let (lg, stages) = hlg::compile_lg_stages(words[0]);
        let mut got: BTreeMap<&str, Vec<usize>> = stages
            .iter()
            .map(|&(name, states, arcs)| (name, vec![states, arcs]))
            .collect();
        let hlg = hlg::hlg_of(&lg);
        got.insert("hlg", vec![hlg.num_states(), hlg.num_arcs()]);
        for (name, counts) in &got {
            let want: Vec<usize> = case.get(name);
            assert_eq!(counts, &want, "{}: states and arcs after {name}", case.name);
        }
    }
}

#[test]
fn small_lg_is_k2s_arc_for_arc() {
    let text = include_str!("golden/hlg_k2.txt");
    let all = cases(text);
    let case = &all[0];
    assert_eq!(case.name, "lg_20_words");
    let body = text.split("=== ").nth(1).unwrap();
    let want = canonical(&arcs_of_text(body));
    let got = canonical(&arcs_of(&hlg::compile_lg(20)));
    assert_eq!(got.len(), want.len());
    assert_eq!(want.len(), case.get::<usize>("remove_epsilon")[1]);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(
            (g.0, g.1, g.2, &g.3),
            (w.0, w.1, w.2, &w.3),
            "arc {g:?} vs k2's {w:?}"
        );
        assert!((g.4 - w.4).abs() < 1e-4, "score of {g:?} vs k2's {w:?}");
    }
}
