#!/usr/bin/env python3
"""Generates `hlg_k2.txt`, the graph-compilation golden file of ragged-fsa's tests, with k2
1.23.2.

    python -m venv venv && venv/bin/pip install torch==1.12.1 k2==1.23.2 "numpy<2"
    venv/bin/python crates/ragged-fsa/tests/golden/hlg_generate_k2.py

k2 compiles LG and HLG with the steps of icefall's `compile_hlg.py` from the seeded lexicon
L and bigram grammar G of `benches/peers/graphs.py` (seed 2026, 40 phones, WORDS words), the
same steps as `tests/common/hlg.rs` on our side:
  LG = connect(compose(arc_sort(L), arc_sort(G)))             -> compose
  LG = connect(determinize(LG))                               -> determinize
  labels above the phones and word ids above WORDS set to 0;
  LG = arc_sort(connect(remove_epsilon(LG))), 0 word ids gone -> remove_epsilon
  HLG = arc_sort(connect(compose(ctc_topo(40), LG, inner_labels="tokens"))) -> hlg

Each case (`=== <name>`) holds `key: values` lines:
  words: WORDS
  <stage>: states and arcs of the graph after that step (remove_epsilon_raw: before the
           connect that follows it; our remove_epsilon connects its result)
and, for the small lexicon, the final LG itself, one arc a line without a colon:
  `src dest label [word ids] score`, scores printed with 6 decimals.
"""

import os
import sys

import k2
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "..", "..", "..", "..", "benches", "peers")
sys.path.insert(0, PEERS)
from graphs import grammar_text, lexicon_text  # noqa: E402

SEED = 2026
NUM_PHONES = 40


def counts(fsa):
    return f"{fsa.shape[0]} {fsa.num_arcs}"


def compile_graphs(words):
    stages = []
    lexicon = k2.Fsa.from_openfst(lexicon_text(words, NUM_PHONES, SEED), acceptor=False)
    grammar = k2.Fsa.from_openfst(grammar_text(words, SEED), acceptor=True)
    lg = k2.connect(k2.compose(k2.arc_sort(lexicon), k2.arc_sort(grammar)))
    stages.append(("compose", counts(lg)))
    lg = k2.connect(k2.determinize(lg))
    stages.append(("determinize", counts(lg)))
    lg.labels[lg.labels > NUM_PHONES] = 0
    lg.__dict__["_properties"] = None
    lg.aux_labels.values[lg.aux_labels.values > words] = 0
    lg = k2.remove_epsilon(lg)
    stages.append(("remove_epsilon_raw", counts(lg)))
    lg = k2.connect(lg)
    lg.aux_labels = lg.aux_labels.remove_values_eq(0)
    lg = k2.arc_sort(lg)
    stages.append(("remove_epsilon", counts(lg)))
    h = k2.ctc_topo(NUM_PHONES)
    hlg = k2.arc_sort(k2.connect(k2.compose(h, lg, inner_labels="tokens")))
    stages.append(("hlg", counts(hlg)))
    return lg, stages


def case(words, with_arcs):
    lg, stages = compile_graphs(words)
    lines = [f"=== lg_{words}_words", f"words: {words}"]
    lines += [f"{name}: {value}" for name, value in stages]
    if with_arcs:
        arcs = lg.arcs.values()[:, :3].tolist()
        scores = lg.scores.tolist()
        aux = lg.aux_labels.tolist()
        for (src, dest, label), score, words_of_arc in zip(arcs, scores, aux):
            ids = " ".join(str(w) for w in words_of_arc)
            lines.append(f"{src} {dest} {label} [{ids}] {score:.6f}")
    return "\n".join(lines) + "\n"


def main():
    torch.set_num_threads(1)
    text = case(20, True) + case(100, False) + case(300, False) + case(5000, False)
    with open(os.path.join(HERE, "hlg_k2.txt"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
