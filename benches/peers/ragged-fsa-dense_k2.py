"""ragged-fsa's CTC peers: torch 1.12 `ctc_loss` and k2 1.23.2 `ctc_loss` (CPU), forward and
backward, on the inputs of crates/ragged-fsa/benches/dense.rs (`ctc_inputs.py`), three
shapes: N = 16, T = 500, C = 500, targets of 50-120 tokens, seed 14 (rows without a
suffix); N = 32, T = 200, C = 80, 20-50 tokens, seed 15 (`_small`); N = 8, T = 1000,
C = 2000, 100-250 tokens, seed 16 (`_long`).

Each timed call starts from the log-probabilities (a leaf tensor) and the token lists:
torch: ctc_loss(reduction="sum") and backward, on our exact rows (`ctc_loss..._tN`); k2:
ctc_graph, DenseFsaVec (segments sorted by decreasing length, as k2 requires),
ctc_loss(output_beam=10, reduction="sum") and backward, on our beam rows
(`ctc_loss_beam10..._tN`). 1 and 2 torch threads.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from ctc_inputs import ctc_input  # noqa: E402

CRATE = "ragged-fsa"

# (row suffix, N, T, C, (min, max) target tokens, seed), as in benches/dense.rs
SHAPES = [
    ("", 16, 500, 500, (50, 120), 14),
    ("_small", 32, 200, 80, (20, 50), 15),
    ("_long", 8, 1000, 2000, (100, 250), 16),
]


def main():
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        skip(CRATE, "torch", f"import torch failed: {e}")
        return
    try:
        import k2
    except Exception as e:  # noqa: BLE001
        k2 = None
        skip(CRATE, "k2", f"import k2 failed: {e}")
    repeats = 3 if QUICK else 5
    for suffix, n, full_t, full_c, (lo, hi), seed in SHAPES:
        t, c = size(full_t, 5), size(full_c, 5)
        logits, lengths, targets = ctc_input(n, t, c, min(lo, t // 5), min(hi, t // 4), seed)
        log_probs = torch.log_softmax(torch.from_numpy(logits).double(), dim=2).float()
        flat = torch.tensor([x for tgt in targets for x in tgt], dtype=torch.long)
        input_lengths = torch.tensor(lengths, dtype=torch.long)
        target_lengths = torch.tensor([len(x) for x in targets], dtype=torch.long)

        def torch_run():
            lp = log_probs.detach().clone().requires_grad_(True)
            loss = torch.nn.functional.ctc_loss(lp.transpose(0, 1), flat, input_lengths,
                                                target_lengths, blank=0, reduction="sum")
            loss.backward()
            return lp.grad

        for threads in (1, 2):
            torch.set_num_threads(threads)
            report(CRATE, f"ctc_loss{suffix}_t{threads}", "torch",
                   time_it(torch_run, repeats), torch.__version__)

        if k2 is None:
            continue
        order = sorted(range(n), key=lambda i: -lengths[i])
        segments = torch.tensor([[i, 0, lengths[i]] for i in order], dtype=torch.int32)
        sorted_targets = [targets[i] for i in order]

        def k2_run():
            lp = log_probs.detach().clone().requires_grad_(True)
            graphs = k2.ctc_graph(sorted_targets, modified=False)
            dense = k2.DenseFsaVec(lp, segments)
            loss = k2.ctc_loss(graphs, dense, output_beam=10.0, reduction="sum")
            loss.backward()
            return lp.grad

        version = package_version("k2")
        for threads in (1, 2):
            torch.set_num_threads(threads)
            report(CRATE, f"ctc_loss_beam10{suffix}_t{threads}", "k2",
                   time_it(k2_run, repeats), version)


if __name__ == "__main__":
    main()
