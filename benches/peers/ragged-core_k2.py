"""k2 (1.23.2, CPU) as a peer of the ragged-core benches; run with the Python 3.9 venv.

Same inputs as crates/ragged-core/benches/ragged-core.rs (see ragged-core.py):
- row_ids: a fresh shape from row_splits each run (k2 caches row_ids), then row_ids(1).
- sum_per_sublist / max_per_sublist: RaggedTensor.sum() / .max() over the last axis.
- index: RaggedTensor.index(indexes, axis=0).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F401,F403

CRATE = "ragged-core"


def main():
    try:
        import numpy as np
        import torch
        import k2
    except Exception as e:  # ImportError, or a broken binary wheel
        skip(CRATE, "k2", str(e))
        return
    version = package_version("k2")

    def lengths(seed, rows):
        return (splitmix64_array(seed, rows) % np.uint64(21)).astype(np.int32)

    def splits_of(lens):
        s = np.zeros(len(lens) + 1, dtype=np.int32)
        np.cumsum(lens, out=s[1:])
        return torch.from_numpy(s)

    s1 = splits_of(lengths(1, size(5_000_000, 100)))

    def row_ids():
        shape = k2.ragged.create_ragged_shape2(row_splits=s1, row_ids=None, cached_tot_size=-1)
        return shape.row_ids(1)

    report(CRATE, "row_ids", "k2", time_it(row_ids), version)

    lens2 = lengths(2, size(1_000_000, 100))
    s2 = splits_of(lens2)
    n = int(s2[-1])
    values = ((splitmix64_array(3, n) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))).astype(np.float32)
    shape = k2.ragged.create_ragged_shape2(row_splits=s2, row_ids=None, cached_tot_size=-1)
    a = k2.RaggedTensor(shape, torch.from_numpy(values))
    report(CRATE, "sum_per_sublist", "k2", time_it(lambda: a.sum()), version)
    report(CRATE, "max_per_sublist", "k2", time_it(lambda: a.max(initial_value=float("-inf"))), version)

    picks = torch.from_numpy((splitmix64_array(4, len(lens2)) % np.uint64(len(lens2))).astype(np.int32))
    report(CRATE, "index", "k2", time_it(lambda: a.index(picks, axis=0)), version)


if __name__ == "__main__":
    main()
