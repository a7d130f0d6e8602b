//! The decoding graph HLG of the decoding bench and test, compiled from the seeded lexicon L
//! and bigram grammar G of `benches::graphs` with the steps of icefall's `compile_hlg.py`:
//!
//! `L o G => connect => determinize => connect => disambiguation symbols to epsilon =>
//! remove_epsilon => connect => drop the 0 word ids => arc_sort`, then
//! `ctc_topo(num_phones) o LG => connect => arc_sort`.
//!
//! The result's `aux_labels` are ragged (an arc may carry several word ids after
//! `determinize` and `remove_epsilon`), as k2's are; [`hlg_text`] writes the graph as the
//! peers read it. Shared by `benches/decode.rs` and `tests/decode_golden.rs` through
//! `#[path]`.
#![allow(dead_code)]

use ragged_core::Ragged;
use ragged_fsa::{Arc, Attr, Fsa, TextFormat, WeightPushing, AUX_LABELS};

/// Seed and phone count of the decoding workload (the algebra bench's).
pub const SEED: u64 = 2026;
/// Phones `1..=NUM_PHONES`; the CTC topology's tokens are `0..=NUM_PHONES` (0 is blank).
pub const NUM_PHONES: usize = 40;

/// `fsa` with every arc's label passed through `relabel` and every attribute kept.
fn relabeled(fsa: &Fsa, relabel: impl Fn(i32) -> i32) -> Fsa {
    let arcs: Vec<Arc> = fsa
        .arcs()
        .values()
        .iter()
        .map(|a| Arc::new(a.src_state, a.dest_state, relabel(a.label), a.score))
        .collect();
    let mut out = Fsa::from_arcs(arcs, fsa.num_states()).expect("same structure");
    for (name, attr) in fsa.attrs() {
        out.set_attr(name, attr.clone()).expect("one value per arc");
    }
    out
}

/// The ragged aux labels of `fsa` with every value kept by `keep` (others removed) and every
/// value above `max_word` turned into 0 first.
fn filtered_aux(fsa: &Fsa, max_word: i32, drop_zeros: bool) -> Attr {
    let rows: Vec<Vec<i32>> = match fsa.aux_labels() {
        Some(Attr::Ragged(r)) => r.to_vec_vec(),
        Some(Attr::I32(v)) => v.iter().map(|&x| vec![x]).collect(),
        _ => panic!("LG has aux labels"),
    };
    let rows: Vec<Vec<i32>> = rows
        .into_iter()
        .map(|row| {
            row.into_iter()
                .map(|x| if x > max_word { 0 } else { x })
                .filter(|&x| !(drop_zeros && x == 0))
                .collect()
        })
        .collect();
    Attr::Ragged(Ragged::from_nested(rows).expect("one row per arc"))
}

/// L o G for `num_words` words, compiled as icefall does (see the module docs).
pub fn compile_lg(num_words: usize) -> Fsa {
    compile_lg_stages(num_words).0
}

/// [`compile_lg`], with the (name, states, arcs) of the graph after each step: `compose`
/// (connected), `determinize` (connected) and `remove_epsilon` (connected, the final LG).
pub fn compile_lg_stages(num_words: usize) -> (Fsa, Vec<(&'static str, usize, usize)>) {
    let mut stages = Vec::new();
    let mut note = |name: &'static str, fsa: &Fsa| {
        stages.push((name, fsa.num_states(), fsa.num_arcs()));
    };
    let l_text = benches::graphs::lexicon_text(num_words, NUM_PHONES, SEED);
    let g_text = benches::graphs::grammar_text(num_words, SEED);
    let l = Fsa::from_openfst(&l_text, false).expect("the generator writes valid L");
    let g = Fsa::from_openfst(&g_text, true).expect("the generator writes valid G");
    let (lg, _, _) = l.compose(&g, true).expect("L has aux labels");
    let lg = lg.connect().0;
    note("compose", &lg);
    let (lg, _) = lg
        .determinize(WeightPushing::None)
        .expect("L o G with disambiguation symbols is determinizable");
    let lg = lg.connect().0;
    note("determinize", &lg);
    // the disambiguation symbols become epsilons on both sides
    let max_word = num_words as i32;
    let mut lg = relabeled(&lg, |l| if l > NUM_PHONES as i32 { 0 } else { l });
    lg.set_attr(AUX_LABELS, filtered_aux(&lg, max_word, false))
        .expect("one row per arc");
    let (lg, _) = lg.remove_epsilon().expect("no positive epsilon cycles");
    let mut lg = lg.connect().0;
    lg.set_attr(AUX_LABELS, filtered_aux(&lg, max_word, true))
        .expect("one row per arc");
    let lg = lg.arc_sort().0;
    note("remove_epsilon", &lg);
    (lg, stages)
}

/// HLG for `num_words` words: `ctc_topo(NUM_PHONES) o LG`, connected and arc-sorted, with
/// ragged `aux_labels` (the word ids of each arc, usually none or one).
pub fn compile_hlg(num_words: usize) -> Fsa {
    hlg_of(&compile_lg(num_words))
}

/// `ctc_topo(NUM_PHONES) o lg`, connected and arc-sorted.
pub fn hlg_of(lg: &Fsa) -> Fsa {
    let h = Fsa::ctc_topo(NUM_PHONES as i32, false).expect("a small topology");
    let (hlg, _, _) = h.compose(lg, true).expect("H has aux labels");
    hlg.connect().0.arc_sort().0
}

/// The text the peers read: OpenFst text (costs = negated scores, the `-1` arcs as final
/// lines) with the word ids of each arc as a bracketed list, `src dest token [w ..] cost`,
/// which k2 reads with `k2.Fsa.from_str(text, acceptor=True, openfst=True,
/// ragged_label_names=["aux_labels"])`.
pub fn hlg_text(hlg: &Fsa) -> String {
    hlg.to_text(&TextFormat::acceptor().ragged(&[AUX_LABELS]).openfst())
        .expect("HLG has ragged aux labels")
}
