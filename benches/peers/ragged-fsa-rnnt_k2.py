"""ragged-fsa's RNN-T peers: k2 1.23.2 (CPU) and torchaudio 0.12.1, with gradients, on the
input of crates/ragged-fsa/benches/rnnt.rs (SplitMix64 seeds 21-25): B = 16 sequences of
T = 300 frames, S = 60 symbols, C = 500 classes.

- rnnt_pruned (k2): rnnt_loss_smoothed(lm, am, ..., 0.1, 0.1, boundary, reduction="sum",
  return_grad=True) => get_rnnt_prune_ranges(s_range=5) => rnnt_loss_pruned on the given
  joiner logits [B][T][5][C], reduction="sum"; one backward for lm, am and the logits.
- rnnt_loss_full (torchaudio, and k2): the full loss on logits [B][T][S + 1][C], reduction
  "sum", and its backward.
1 and 2 torch threads.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

CRATE = "ragged-fsa"


def uniform(seed, shape, scale):
    import numpy as np

    n = int(np.prod(shape))
    u = (splitmix64_array(seed, n) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    return ((u * 2.0 - 1.0) * scale).astype(np.float32).reshape(shape)


def main():
    try:
        import numpy as np
        import torch
    except Exception as e:  # noqa: BLE001
        skip(CRATE, "torch", f"import torch failed: {e}")
        return
    b, s, t, c = 16, 60, size(300, 5), size(500, 5)
    s_range = 5
    lm0 = torch.from_numpy(uniform(21, (b, s + 1, c), 2.0))
    am0 = torch.from_numpy(uniform(22, (b, t, c), 2.0))
    symbols = torch.from_numpy(
        (splitmix64_array(23, b * s) % np.uint64(c - 1) + np.uint64(1)).astype(np.int64)
    ).reshape(b, s)
    pruned0 = torch.from_numpy(uniform(24, (b, t, s_range, c), 2.0))
    boundary = torch.tensor([[0, 0, s, t]] * b, dtype=torch.int64)
    repeats = 3 if QUICK else 5

    try:
        import k2
    except Exception as e:  # noqa: BLE001
        skip(CRATE, "k2", f"import k2 failed: {e}")
        k2 = None

    if k2 is not None:
        def k2_pruned():
            lm = lm0.detach().clone().requires_grad_(True)
            am = am0.detach().clone().requires_grad_(True)
            logits = pruned0.detach().clone().requires_grad_(True)
            simple, (px_grad, py_grad) = k2.rnnt_loss_smoothed(
                lm, am, symbols, 0, 0.1, 0.1, boundary, reduction="sum", return_grad=True)
            ranges = k2.get_rnnt_prune_ranges(px_grad, py_grad, boundary, s_range)
            pruned = k2.rnnt_loss_pruned(logits, symbols, ranges, 0, boundary,
                                         reduction="sum")
            (simple + pruned).backward()
            return lm.grad, am.grad, logits.grad

        version = package_version("k2")
        for threads in (1, 2):
            torch.set_num_threads(threads)
            report(CRATE, f"rnnt_pruned_t{threads}", "k2", time_it(k2_pruned, repeats),
                   version)

    del pruned0
    logits0 = torch.from_numpy(uniform(25, (b, t, s + 1, c), 2.0))
    try:
        import torchaudio
    except Exception as e:  # noqa: BLE001
        skip(CRATE, "torchaudio", f"import torchaudio failed: {e}")
        torchaudio = None
    if torchaudio is not None:
        targets = symbols.int()
        logit_lengths = torch.full((b,), t, dtype=torch.int32)
        target_lengths = torch.full((b,), s, dtype=torch.int32)

        def torchaudio_full():
            logits = logits0.detach().requires_grad_(True)
            loss = torchaudio.functional.rnnt_loss(
                logits, targets, logit_lengths, target_lengths, blank=0, reduction="sum")
            loss.backward()
            return logits.grad

        for threads in (1, 2):
            torch.set_num_threads(threads)
            report(CRATE, f"rnnt_loss_full_t{threads}", "torchaudio",
                   time_it(torchaudio_full, repeats), f"torchaudio {torchaudio.__version__}")

    if k2 is not None:
        def k2_full():
            logits = logits0.detach().requires_grad_(True)
            loss = k2.rnnt_loss(logits, symbols, 0, boundary, reduction="sum")
            loss.backward()
            return logits.grad

        version = package_version("k2")
        for threads in (1, 2):
            torch.set_num_threads(threads)
            report(CRATE, f"rnnt_loss_full_t{threads}", "k2", time_it(k2_full, 3), version)


if __name__ == "__main__":
    main()
