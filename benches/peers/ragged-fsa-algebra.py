"""ragged-fsa's algebra peer: OpenFst through kaldifst, on the LG workload of
crates/ragged-fsa/benches/algebra.rs.

L and G come from `graphs.py` (the twin of the Rust generator: same seed, same OpenFst
text), compiled once; L is sorted on output labels and G on input labels, as composition
needs. Timed, one thread: `compose(L, G)`; Kaldi's `determinize_star` of `L o G` and
`minimize_encoded` of its result (both in place, so each run works on a fresh copy whose
copying is not timed); `rmepsilon` of the determinized graph's input side as an acceptor,
with its disambiguation symbols turned into epsilons (in place, on copies; OpenFst removes
only arcs whose input and output are both epsilon, so every side works on the acceptor);
and the pipeline compose,
determinize_star, minimize_encoded. OpenFst is single-threaded, so the same figure stands
for the one- and two-thread rows.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from graphs import grammar_text, lexicon_text  # noqa: E402

CRATE = "ragged-fsa"
PEER = "kaldifst"
SEED = 2026
NUM_PHONES = 40


def time_in_place(fst, op, repeats):
    times = []
    for _ in range(repeats):
        copy = fst.copy()
        t0 = time.perf_counter()
        op(copy)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def without_disambig(kaldifst, fst):
    """The FST's input side as an acceptor, labels above the phones turned into epsilons
    (built untimed)."""
    lines = []
    for line in fst.to_str().splitlines():
        f = line.split()
        if len(f) >= 4:
            label = "0" if int(f[2]) > NUM_PHONES else f[2]
            f = [f[0], f[1], label] + f[4:5]
        lines.append(" ".join(f))
    return kaldifst.compile("\n".join(lines) + "\n", acceptor=True, keep_state_numbering=True)


def main():
    try:
        import kaldifst
    except Exception as e:  # noqa: BLE001
        skip(CRATE, PEER, f"import kaldifst failed: {e}")
        return
    version = package_version("kaldifst")
    words = size(20000, 20)
    lexicon = kaldifst.compile(lexicon_text(words, NUM_PHONES, SEED), acceptor=False)
    grammar = kaldifst.compile(grammar_text(words, SEED), acceptor=True)
    kaldifst.arcsort(lexicon, sort_type="olabel")
    kaldifst.arcsort(grammar, sort_type="ilabel")
    repeats = 3 if QUICK else 5

    lg = kaldifst.compose(lexicon, grammar)
    det = lg.copy()
    kaldifst.determinize_star(det)
    plain = without_disambig(kaldifst, det)

    def pipeline():
        out = kaldifst.compose(lexicon, grammar)
        kaldifst.determinize_star(out)
        kaldifst.minimize_encoded(out)

    results = {
        "compose_lg": time_it(lambda: kaldifst.compose(lexicon, grammar), repeats=repeats),
        "determinize_lg": time_in_place(lg, kaldifst.determinize_star, repeats),
        "rmeps_lg": time_in_place(plain, kaldifst.rmepsilon, repeats),
        "minimize_lg": time_in_place(det, kaldifst.minimize_encoded, repeats),
        "pipeline_lg": time_it(pipeline, repeats=repeats),
    }
    for workload, seconds in results.items():
        for threads in (1, 2):
            report(CRATE, f"{workload}_t{threads}", PEER, seconds, version)


if __name__ == "__main__":
    main()
