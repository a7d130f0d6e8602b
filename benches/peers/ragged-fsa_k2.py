"""ragged-fsa's peer: k2 itself (1.23.2, CPU) on the FSAs of crates/ragged-fsa/benches.

Same generator as the Rust side (see `ragged-fsa.py` and the bench file). The FsaVec is built
once from arc tensors; each timed call starts from an FsaVec whose cached properties, state
batches and entering arcs have been dropped (`_invalidate_cache_`), so k2 does the whole
work each time. One torch thread (k2's CPU algorithms are serial).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

CRATE = "ragged-fsa"
PEER = "k2"


def main():
    try:
        import k2
        import torch
    except Exception as e:  # noqa: BLE001
        skip(CRATE, PEER, f"import k2 failed: {e}")
        return
    torch.set_num_threads(1)
    version = package_version("k2")
    num_fsas = size(1000, 50)
    fsas = []
    for i in range(num_fsas):
        src, dest, label, score = random_fsa_arcs(i, 1000)
        arcs = torch.stack(
            [
                torch.from_numpy(src.astype("int32")),
                torch.from_numpy(dest.astype("int32")),
                torch.from_numpy(label.astype("int32")),
                torch.from_numpy(score).view(torch.int32),
            ],
            dim=1,
        ).contiguous()
        fsas.append(k2.Fsa(arcs))
    fsa_vec = k2.create_fsa_vec(fsas)

    def fresh():
        fsa_vec._invalidate_cache_()
        return fsa_vec

    repeats = 3 if QUICK else 5
    report(CRATE, "arc_sort_t1", PEER, time_it(lambda: k2.arc_sort(fresh()), repeats), version)
    report(CRATE, "connect_t1", PEER, time_it(lambda: k2.connect(fresh()), repeats), version)
    report(CRATE, "top_sort_t1", PEER, time_it(lambda: k2.top_sort(fresh()), repeats), version)
    report(CRATE, "shortest_path_t1", PEER,
           time_it(lambda: k2.shortest_path(fresh(), use_double_scores=True), repeats), version)
    report(CRATE, "get_tot_scores_t1", PEER,
           time_it(lambda: fresh().get_tot_scores(use_double_scores=True, log_semiring=True),
                   repeats),
           version)


if __name__ == "__main__":
    main()
