"""ragged-fsa's peer: OpenFst through kaldifst, on the FSAs of crates/ragged-fsa/benches.

Same generator as the Rust side (four SplitMix64 streams per FSA, see the bench file). k2's
`-1` arcs into the final state become epsilon arcs with cost = -score into a final state of
weight 0. Timed: `arcsort` and `connect` (in place, so each run works on fresh copies whose
copying is not timed) and `shortest_path`, in a Python loop over the FSAs, one thread.
kaldifst wraps neither TopSort nor log-semiring ShortestDistance, so `top_sort` and
`get_tot_scores` are reported as skipped.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

CRATE = "ragged-fsa"
PEER = "kaldifst"


def build(kaldifst, i, n):
    src, dest, label, score = random_fsa_arcs(i, n)
    fst = kaldifst.StdVectorFst()
    for _ in range(n):
        fst.add_state()
    fst.start = 0
    fst.set_final(n - 1, 0.0)
    for s, d, l, w in zip(src.tolist(), dest.tolist(), label.tolist(), score.tolist()):
        l = 0 if l == -1 else l
        fst.add_arc(s, kaldifst.StdArc(l, l, -w, d))
    return fst


def time_in_place(fsts, op, repeats):
    times = []
    for _ in range(repeats):
        copies = [f.copy() for f in fsts]
        t0 = time.perf_counter()
        for f in copies:
            op(f)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    try:
        import kaldifst
    except Exception as e:  # noqa: BLE001
        skip(CRATE, PEER, f"import kaldifst failed: {e}")
        return
    version = getattr(kaldifst, "__version__", "")
    num_fsas = size(1000, 50)
    fsts = [build(kaldifst, i, 1000) for i in range(num_fsas)]
    repeats = 3 if QUICK else 5
    report(CRATE, "arc_sort_t1", PEER,
           time_in_place(fsts, lambda f: kaldifst.arcsort(f, sort_type="ilabel"), repeats),
           version)
    report(CRATE, "connect_t1", PEER, time_in_place(fsts, kaldifst.connect, repeats), version)
    report(CRATE, "shortest_path_t1", PEER,
           time_it(lambda: [kaldifst.shortest_path(f) for f in fsts], repeats=repeats), version)
    skip(CRATE, PEER, "top_sort_t1: kaldifst does not wrap OpenFst's TopSort")
    skip(CRATE, PEER, "get_tot_scores_t1: kaldifst has no log-semiring ShortestDistance")


if __name__ == "__main__":
    main()
