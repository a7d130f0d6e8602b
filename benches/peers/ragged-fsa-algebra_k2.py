"""ragged-fsa's algebra peer: k2 itself (1.23.2, CPU) on the LG workload of
crates/ragged-fsa/benches/algebra.rs.

L and G come from `graphs.py` (the twin of the Rust generator), read with
`k2.Fsa.from_openfst`; G is arc-sorted once, as k2's compose needs. Timed, one torch
thread: `compose(L, G)`; `determinize` of the connected `L o G` (no weight pushing);
`remove_epsilon` of the determinized graph's input side as an acceptor, with its
disambiguation symbols turned into epsilons; and the pipeline compose, connect, determinize. k2 has no minimization, so
`minimize_lg` is reported as skipped. k2's CPU algorithms are serial, so the same figure
stands for the one- and two-thread rows.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from graphs import grammar_text, lexicon_text  # noqa: E402

CRATE = "ragged-fsa"
PEER = "k2"
SEED = 2026
NUM_PHONES = 40


def main():
    try:
        import k2
        import torch
    except Exception as e:  # noqa: BLE001
        skip(CRATE, PEER, f"import k2 failed: {e}")
        return
    torch.set_num_threads(1)
    version = package_version("k2")
    words = size(20000, 20)
    lexicon = k2.Fsa.from_openfst(lexicon_text(words, NUM_PHONES, SEED), acceptor=False)
    grammar = k2.arc_sort(k2.Fsa.from_openfst(grammar_text(words, SEED), acceptor=True))
    repeats = 3 if QUICK else 5

    def compose():
        return k2.compose(lexicon, grammar, treat_epsilons_specially=True)

    lg = k2.connect(compose())

    def determinize():
        fresh = lg.clone()
        return k2.determinize(fresh)

    det = determinize()
    arcs = det.arcs.values()[:, :3].clone()
    arcs[:, 2][arcs[:, 2] > NUM_PHONES] = 0
    scores = det.scores.detach().clone()
    plain = k2.Fsa(
        torch.cat([arcs, scores.view(torch.int32).unsqueeze(1)], dim=1).contiguous()
    )

    def remove_epsilon():
        fresh = plain.clone()
        return k2.remove_epsilon(fresh)

    def pipeline():
        return k2.determinize(k2.connect(compose()))

    results = {
        "compose_lg": time_it(compose, repeats=repeats),
        "determinize_lg": time_it(determinize, repeats=repeats),
        "rmeps_lg": time_it(remove_epsilon, repeats=repeats),
        "pipeline_lg": time_it(pipeline, repeats=repeats),
    }
    for workload, seconds in results.items():
        for threads in (1, 2):
            report(CRATE, f"{workload}_t{threads}", PEER, seconds, version)
    skip(CRATE, PEER, "minimize_lg_t1: k2 has no minimization")


if __name__ == "__main__":
    main()
