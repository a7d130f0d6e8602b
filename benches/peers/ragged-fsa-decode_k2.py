"""ragged-fsa's decoding peer: k2 1.23.2 (CPU) on the workload of
crates/ragged-fsa/benches/decode.rs.

The graph is the HLG our bench compiled (icefall's compile_hlg.py steps on the seeded L and G
of `graphs.py`, 5,000 words, 40 phones), read from the OpenFst text with word-id lists the
bench writes to `<target>/ragged-fsa-bench/hlg_<words>.txt`, so both sides decode the very
same graph. The scores are the log-softmaxed logits of `ctc_inputs.py` (N = 16, T = 500,
C = 41, seed 14), segments sorted by decreasing length as k2 wants.

Timed, at 1 and 2 torch threads: `k2.intersect_dense_pruned(HLG, dense, 20, 8, 30, 10000)`
then `k2.shortest_path`. Before timing, the best word sequences are compared with ours
(`best_<words>.txt`) and the agreement is printed on stderr.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from ctc_inputs import ctc_input  # noqa: E402

CRATE = "ragged-fsa"
PEER = "k2"
NUM_PHONES = 40



def bench_dir():
    """Where `benches/decode.rs` leaves the graph and our best paths."""
    return os.path.join(target_dir(), "ragged-fsa-bench")


def best_words(k2, best):
    """The word ids along each best path (k2's ragged aux labels without 0 and -1)."""
    out = []
    for i in range(best.shape[0]):
        words = best[i].aux_labels.values.tolist()
        out.append([w for w in words if w > 0])
    return out


def main():
    try:
        import k2
        import torch
    except Exception as e:  # noqa: BLE001
        skip(CRATE, PEER, f"import k2 failed: {e}")
        return
    words = size(5000, 10)
    path = os.path.join(bench_dir(), f"hlg_{words}.txt")
    if not os.path.exists(path):
        skip(CRATE, PEER, f"decode_hlg: {path} missing (the Rust bench `decode` writes it)")
        return
    with open(path) as f:
        hlg = k2.Fsa.from_str(f.read(), acceptor=True, openfst=True,
                              ragged_label_names=["aux_labels"])
    hlg = k2.arc_sort(hlg)
    n, t, c = 16, size(500, 5), NUM_PHONES + 1
    logits, lengths, _ = ctc_input(n, t, c, min(50, t // 5), min(120, t // 4), 14)
    log_probs = torch.log_softmax(torch.from_numpy(logits).double(), dim=2).float()
    order = sorted(range(n), key=lambda i: -lengths[i])
    segments = torch.tensor([[i, 0, lengths[i]] for i in order], dtype=torch.int32)
    dense = k2.DenseFsaVec(log_probs, segments)

    def decode():
        lattice = k2.intersect_dense_pruned(hlg, dense, 20.0, 8.0, 30, 10000)
        return k2.shortest_path(lattice, use_double_scores=True)

    ours_path = os.path.join(bench_dir(), f"best_{words}.txt")
    warm = os.path.exists(ours_path)
    if warm:
        with open(ours_path) as f:
            ours = [[int(w) for w in line.split()] for line in f.read().splitlines()]
        theirs = [None] * n
        for k, seq in enumerate(best_words(k2, decode())):
            theirs[order[k]] = seq
        same = sum(a == b for a, b in zip(ours, theirs))
        print(f"{CRATE}: decode_hlg: k2's best word sequences equal ours for {same} of {n} "
              f"utterances", file=sys.stderr)
    version = package_version("k2")
    repeats = 3 if QUICK else 5
    for threads in (1, 2):
        torch.set_num_threads(threads)
        seconds = time_it(decode, repeats, warm=warm or threads > 1)
        report(CRATE, f"decode_hlg_t{threads}", PEER, seconds, version)


if __name__ == "__main__":
    main()
