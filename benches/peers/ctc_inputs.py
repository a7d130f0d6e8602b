"""The Python twin of `benches/src/ctc.rs`: the seeded CTC workload (logits, frame counts,
token targets), stream for stream the same numbers as the Rust side."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import SplitMix64, splitmix64_array  # noqa: E402


def ctc_input(n, t, c, min_tokens, max_tokens, seed):
    """(logits as a float32 numpy array [n, t, c], frame counts, targets)."""
    import numpy as np

    bits = splitmix64_array(seed, n * t * c)
    u = (bits >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    logits = (4.0 * u - 2.0).astype(np.float32).reshape(n, t, c)
    frames = SplitMix64(seed + 1)
    lengths = [t - frames.next_u64() % (t // 5 + 1) for _ in range(n)]
    tokens = SplitMix64(seed + 2)
    targets = []
    for _ in range(n):
        length = min_tokens + tokens.next_u64() % (max_tokens - min_tokens + 1)
        targets.append([1 + tokens.next_u64() % (c - 1) for _ in range(length)])
    return logits, lengths, targets
