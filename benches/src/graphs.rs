//! Seeded decoding-graph inputs for the FSA benchmarks: a Kaldi-style lexicon L and a
//! bigram grammar G, both as OpenFst text. `benches/peers/graphs.py` writes the same text
//! byte for byte, so every side builds `L o G` from one input.
//!
//! Symbols: phones `1..=num_phones`, phone disambiguation symbols from `num_phones + 1`
//! (`#0` for G's back-off, then `#1`, `#2`, ... telling homophones apart); words
//! `1..=num_words`, and word `num_words + 1` is `#0`. Costs are written with three decimals
//! from integer thousandths, so both sides print the same digits.
//!
//! - L: state 0 is the start and the only final state; word `w` is a chain
//!   `0 -p1:w-> s1 -p2:0-> ... -pn:0-> sn -#k:0-> 0` with `n = 2 + x % 9` phones, and `k` is
//!   1 plus the number of earlier words with the same phones; a loop `0 -#0:#0-> 0` passes
//!   G's back-off symbol. Streams `seed` (lengths) and `seed + 1` (phones).
//! - G: state 0 is the start and the unigram (back-off) state, with an arc to every word
//!   `w` (into state `w`); state `w` is the history "previous word was w", with
//!   `1 + x % 26` draws of bigram words (duplicates dropped, ascending) and a back-off arc
//!   labelled `#0` to state 0; every state is final. Streams `seed + 2` (counts and words),
//!   `seed + 3` (arc costs), `seed + 4` (final costs).

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use crate::SplitMix64;

/// A cost of `0.500..10.000` as text, drawn from `rng`.
fn cost(rng: &mut SplitMix64) -> String {
    let milli = 500 + rng.below(9500);
    format!("{}.{:03}", milli / 1000, milli % 1000)
}

/// The lexicon L as OpenFst transducer text (`src dest phone word cost`, final line `0 0`).
pub fn lexicon_text(num_words: usize, num_phones: usize, seed: u64) -> String {
    let mut lengths = SplitMix64::new(seed);
    let mut phones = SplitMix64::new(seed + 1);
    let disambig0 = num_phones + 1;
    let word0 = num_words + 1;
    let mut prons: Vec<Vec<usize>> = Vec::with_capacity(num_words);
    let mut seen: HashMap<Vec<usize>, usize> = HashMap::new();
    let mut disambig = Vec::with_capacity(num_words);
    for _ in 0..num_words {
        let len = 2 + lengths.below(9) as usize;
        let pron: Vec<usize> = (0..len)
            .map(|_| 1 + phones.below(num_phones as u64) as usize)
            .collect();
        let count = seen.entry(pron.clone()).or_insert(0);
        *count += 1;
        disambig.push(disambig0 + *count);
        prons.push(pron);
    }
    let mut text = String::new();
    // the start state's arcs first: every word's first phone, then the #0 loop
    let mut next_state = 1usize;
    let mut first_states = Vec::with_capacity(num_words);
    for (w, pron) in prons.iter().enumerate() {
        first_states.push(next_state);
        let _ = writeln!(text, "0 {} {} {} 0.000", next_state, pron[0], w + 1);
        next_state += pron.len();
    }
    let _ = writeln!(text, "0 0 {disambig0} {word0} 0.000");
    for (w, pron) in prons.iter().enumerate() {
        let first = first_states[w];
        for (i, &p) in pron.iter().enumerate().skip(1) {
            let _ = writeln!(text, "{} {} {} 0 0.000", first + i - 1, first + i, p);
        }
        let _ = writeln!(text, "{} 0 {} 0 0.000", first + pron.len() - 1, disambig[w]);
    }
    text.push_str("0 0.000\n");
    text
}

/// The bigram grammar G as OpenFst acceptor text (`src dest word cost`, then final lines).
pub fn grammar_text(num_words: usize, seed: u64) -> String {
    let mut draws = SplitMix64::new(seed + 2);
    let mut costs = SplitMix64::new(seed + 3);
    let mut finals = SplitMix64::new(seed + 4);
    let backoff = num_words + 1;
    let mut text = String::new();
    for w in 1..=num_words {
        let _ = writeln!(text, "0 {w} {w} {}", cost(&mut costs));
    }
    for h in 1..=num_words {
        let k = 1 + draws.below(26);
        let words: BTreeSet<u64> = (0..k).map(|_| 1 + draws.below(num_words as u64)).collect();
        for w in words {
            let _ = writeln!(text, "{h} {w} {w} {}", cost(&mut costs));
        }
        let _ = writeln!(text, "{h} 0 {backoff} {}", cost(&mut costs));
    }
    for s in 0..=num_words {
        let _ = writeln!(text, "{s} {}", cost(&mut finals));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by `python benches/peers/graphs.py` (the twin): both sides agree.
    const PYTHON_L: &str = "0 1 3 1 0.000\n\
0 6 3 2 0.000\n\
0 14 5 3 0.000\n\
0 0 6 4 0.000\n\
1 2 3 0 0.000\n\
2 3 1 0 0.000\n\
3 4 5 0 0.000\n\
4 5 3 0 0.000\n\
5 0 7 0 0.000\n\
6 7 5 0 0.000\n\
7 8 5 0 0.000\n\
8 9 1 0 0.000\n\
9 10 1 0 0.000\n\
10 11 1 0 0.000\n\
11 12 1 0 0.000\n\
12 13 1 0 0.000\n\
13 0 7 0 0.000\n\
14 15 5 0 0.000\n\
15 0 7 0 0.000\n\
0 0.000\n\
";
    const PYTHON_G: &str = "0 1 1 8.592\n\
0 2 2 4.833\n\
0 3 3 3.186\n\
0 4 4 9.308\n\
1 1 1 0.807\n\
1 2 2 6.060\n\
1 4 4 3.520\n\
1 0 5 0.512\n\
2 1 1 7.147\n\
2 2 2 3.622\n\
2 3 3 0.617\n\
2 4 4 8.605\n\
2 0 5 1.512\n\
3 1 1 6.237\n\
3 3 3 1.343\n\
3 4 4 9.810\n\
3 0 5 3.039\n\
4 1 1 9.600\n\
4 2 2 3.038\n\
4 3 3 2.424\n\
4 4 4 7.116\n\
4 0 5 8.696\n\
0 1.987\n\
1 8.304\n\
2 1.846\n\
3 3.703\n\
4 5.674\n\
";

    #[test]
    fn text_is_what_the_python_twin_writes() {
        assert_eq!(lexicon_text(3, 5, 7), PYTHON_L);
        assert_eq!(grammar_text(4, 3), PYTHON_G);
    }

    #[test]
    fn lexicon_chains_return_to_the_start() {
        let l = lexicon_text(3, 5, 7);
        let lines: Vec<&str> = l.lines().collect();
        // three first arcs, the #0 loop, then the chains, then the final line
        assert!(lines[0].starts_with("0 1 "));
        assert_eq!(lines[3], "0 0 6 4 0.000");
        assert_eq!(*lines.last().unwrap(), "0 0.000");
        let back: Vec<&&str> = lines
            .iter()
            .filter(|l| l.split(' ').nth(1) == Some("0"))
            .collect();
        assert_eq!(back.len(), 1 + 3, "the #0 loop and one return per word");
    }

    #[test]
    fn grammar_has_unigram_bigram_and_backoff_arcs() {
        let g = grammar_text(50, 3);
        let arcs = g.lines().filter(|l| l.split(' ').count() == 4).count();
        let finals = g.lines().filter(|l| l.split(' ').count() == 2).count();
        assert_eq!(finals, 51);
        assert!(arcs > 50 + 50 && arcs < 50 + 50 * 27, "{arcs} arcs");
        assert!(g
            .lines()
            .all(|l| l.rsplit(' ').next().unwrap().contains('.')));
    }
}
