#!/usr/bin/env python3
"""Generates `decode_k2.txt`, the decoding golden file of ragged-fsa's tests, with k2 1.23.2.

    python -m venv venv && venv/bin/pip install torch==1.12.1 k2==1.23.2 "numpy<2"
    venv/bin/python crates/ragged-fsa/tests/golden/decode_generate_k2.py

k2 compiles HLG itself, with the steps of icefall's `compile_hlg.py`, from the seeded lexicon
L and bigram grammar G of `benches/peers/graphs.py` (OpenFst text read by
`k2.Fsa.from_openfst`; seed 2026, 40 phones, WORDS words):
  LG = determinize(connect(compose(arc_sort(L), arc_sort(G)))), connected; labels above the
  phones and word ids above WORDS set to 0; remove_epsilon, connect, 0 word ids removed,
  arc_sort; HLG = arc_sort(connect(compose(ctc_topo(40), LG, inner_labels="tokens"))).
It decodes the log-softmaxed logits of `benches/peers/ctc_inputs.py` (N, T, C = 41, seed 14;
segments sorted by decreasing length, as k2 wants, the answers put back in sequence order)
with `k2.intersect_dense_pruned(HLG, dense, 20, 8, 30, MAX_ACTIVE)` and `k2.shortest_path`.
MAX_ACTIVE is 10000 (the bench's, which these small graphs never reach), and 100 and 300 on
a 1,000-word graph, where the dynamic beam shrinks on most frames: there the best paths
depend on every detail of the search (beam updates, cutoffs, the rounding of the sums).

Each case (`=== <name>`) holds `key: values` lines:
  words: WORDS; dims: N T C (inputs to regenerate on the Rust side); max_active: MAX_ACTIVE
  hlg: states and arcs of k2's HLG
  best_score: the best path's total score per sequence
  best_words <i>: the word ids of sequence i's best path
"""

import os
import sys

import k2
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "..", "..", "..", "..", "benches", "peers")
sys.path.insert(0, PEERS)
from ctc_inputs import ctc_input  # noqa: E402
from graphs import grammar_text, lexicon_text  # noqa: E402

SEED = 2026
NUM_PHONES = 40


def compile_hlg(words):
    lexicon = k2.Fsa.from_openfst(lexicon_text(words, NUM_PHONES, SEED), acceptor=False)
    grammar = k2.Fsa.from_openfst(grammar_text(words, SEED), acceptor=True)
    lg = k2.connect(k2.compose(k2.arc_sort(lexicon), k2.arc_sort(grammar)))
    lg = k2.connect(k2.determinize(lg))
    lg.labels[lg.labels > NUM_PHONES] = 0
    lg.__dict__["_properties"] = None
    lg.aux_labels.values[lg.aux_labels.values > words] = 0
    lg = k2.connect(k2.remove_epsilon(lg))
    lg.aux_labels = lg.aux_labels.remove_values_eq(0)
    lg = k2.arc_sort(lg)
    h = k2.ctc_topo(NUM_PHONES)
    return k2.arc_sort(k2.connect(k2.compose(h, lg, inner_labels="tokens")))


def case(name, words, n, t, max_active=10000):
    c = NUM_PHONES + 1
    hlg = compile_hlg(words)
    logits, lengths, _ = ctc_input(n, t, c, min(50, t // 5), min(120, t // 4), 14)
    log_probs = torch.log_softmax(torch.from_numpy(logits).double(), dim=2).float()
    order = sorted(range(n), key=lambda i: -lengths[i])
    segments = torch.tensor([[i, 0, lengths[i]] for i in order], dtype=torch.int32)
    dense = k2.DenseFsaVec(log_probs, segments)
    lattice = k2.intersect_dense_pruned(hlg, dense, 20.0, 8.0, 30, max_active)
    best = k2.shortest_path(lattice, use_double_scores=True)
    scores = best.get_tot_scores(use_double_scores=True, log_semiring=False).tolist()
    best_score = [0.0] * n
    best_words = [None] * n
    for k, i in enumerate(order):
        best_score[i] = scores[k]
        best_words[i] = [w for w in best[k].aux_labels.values.tolist() if w > 0]
    lines = [f"=== {name}", f"words: {words}", f"dims: {n} {t} {c}",
             f"max_active: {max_active}",
             f"hlg: {hlg.shape[0]} {hlg.num_arcs}",
             "best_score: " + " ".join(repr(float(s)) for s in best_score)]
    for i, w in enumerate(best_words):
        lines.append(f"best_words {i}: " + " ".join(str(x) for x in w))
    return "\n".join(lines) + "\n"


def main():
    torch.set_num_threads(1)
    text = case("hlg_100_words", 100, 4, 60) + case("hlg_300_words", 300, 3, 120)
    text += case("hlg_1000_words_max_active_100", 1000, 6, 150, 100)
    text += case("hlg_1000_words_max_active_300", 1000, 6, 150, 300)
    with open(os.path.join(HERE, "decode_k2.txt"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
