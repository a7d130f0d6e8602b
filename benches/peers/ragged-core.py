"""Peers of the ragged-core benches: Awkward Array (and numpy for row_ids).

Same inputs as crates/ragged-core/benches/ragged-core.rs, from the shared SplitMix64:
- row_ids: 5 M row lengths below(21) from seed 1; row_splits -> row_ids (numpy repeat).
- sum_per_sublist / max_per_sublist: 1 M rows, lengths below(21) from seed 2, f32 values
  next_f64() from seed 3; ak.sum / ak.max over axis=1.
- index: that array indexed by 1 M rows below(nrows) from seed 4, packed:
  ak.to_packed(a[idx]). Awkward's a[idx] alone only gathers the row starts and stops (a
  ListArray view over the old values); ours, like k2's Index, returns contiguous values, so
  the peer packs too.
- flatten: 100 k rows of below(21) lists (seed 5) of below(21) elements (seed 6); the
  Rust side's remove_axis(1) is ak.flatten(a, axis=2).
- from_row_lengths: the seed-2 lengths; ak.unflatten(values, lengths).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F401,F403

CRATE = "ragged-core"


def lengths(np, seed, rows):
    return (splitmix64_array(seed, rows) % np.uint64(21)).astype(np.int32)


def f32_values(np, seed, n):
    return ((splitmix64_array(seed, n) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))).astype(np.float32)


def main():
    try:
        import numpy as np
    except ImportError as e:
        skip(CRATE, "numpy", str(e))
        return
    try:
        import awkward as ak
    except ImportError as e:
        ak = None
        skip(CRATE, "awkward", str(e))

    # row_ids
    lens = lengths(np, 1, size(5_000_000, 100))
    splits = np.zeros(len(lens) + 1, dtype=np.int32)
    np.cumsum(lens, out=splits[1:])
    rows = np.arange(len(lens), dtype=np.int32)
    t = time_it(lambda: np.repeat(rows, np.diff(splits)))
    report(CRATE, "row_ids", "numpy", t, np.__version__)

    if ak is None:
        return
    # 2-axis array
    lens2 = lengths(np, 2, size(1_000_000, 100))
    offsets = np.zeros(len(lens2) + 1, dtype=np.int64)
    np.cumsum(lens2, out=offsets[1:])
    values = f32_values(np, 3, int(offsets[-1]))
    a = ak.Array(ak.contents.ListOffsetArray(ak.index.Index64(offsets), ak.contents.NumpyArray(values)))
    report(CRATE, "sum_per_sublist", "awkward", time_it(lambda: ak.sum(a, axis=1)), ak.__version__)
    report(CRATE, "max_per_sublist", "awkward", time_it(lambda: ak.max(a, axis=1)), ak.__version__)

    picks = (splitmix64_array(4, len(lens2)) % np.uint64(len(lens2))).astype(np.int64)
    report(CRATE, "index", "awkward", time_it(lambda: ak.to_packed(a[picks])), ak.__version__)

    outer = lengths(np, 5, size(100_000, 100))
    inner = lengths(np, 6, int(outer.sum()))
    o1 = np.zeros(len(outer) + 1, dtype=np.int64)
    np.cumsum(outer, out=o1[1:])
    o2 = np.zeros(len(inner) + 1, dtype=np.int64)
    np.cumsum(inner, out=o2[1:])
    content = ak.contents.NumpyArray(np.zeros(int(o2[-1]), dtype=np.float32))
    a3 = ak.Array(
        ak.contents.ListOffsetArray(
            ak.index.Index64(o1), ak.contents.ListOffsetArray(ak.index.Index64(o2), content)
        )
    )
    report(CRATE, "flatten", "awkward", time_it(lambda: ak.flatten(a3, axis=2)), ak.__version__)

    report(
        CRATE,
        "from_row_lengths",
        "awkward",
        time_it(lambda: ak.unflatten(values, lens2)),
        ak.__version__,
    )


if __name__ == "__main__":
    main()
