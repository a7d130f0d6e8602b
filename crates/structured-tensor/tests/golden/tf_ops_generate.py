#!/usr/bin/env python3
"""Writes tf_ops.json, TensorFlow's results for the dispatched StructuredTensor ops on
random inputs, which tests/tf_ops_golden.rs compares against.

Needs TensorFlow (python -m venv venv && venv/bin/pip install tensorflow-cpu). Run from
anywhere:

    venv/bin/python crates/structured-tensor/tests/golden/tf_ops_generate.py

Inputs come from SplitMix64 with fixed seeds, so the script reproduces them everywhere.
Each record is {"a": int, "b": [float, ...], "c": {"d": [str, ...]}} with 1..3 elements per
list (floats are multiples of 0.5, exact in TensorFlow's float32). Rank-2 and rank-3 inputs
have a non-empty first row at every level. Each case holds the op, its arguments, the inputs and TensorFlow's
`to_pyval()` of the result (bytes decoded as UTF-8).
"""

import json
import os

import tensorflow as tf
from tensorflow.python.ops.structured import structured_array_ops  # noqa: F401  (dispatch)

HERE = os.path.dirname(os.path.abspath(__file__))
MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n


def record(rng):
    b = [rng.below(9) * 0.5 for _ in range(1 + rng.below(3))]
    d = ["s%d" % rng.below(50) for _ in range(1 + rng.below(3))]
    return {"a": rng.below(100), "b": b, "c": {"d": d}}


def records(rng, rank, nrows):
    if rank == 1:
        return [record(rng) for _ in range(nrows)]
    return [[record(rng) for _ in range(rng.below(4) + (row == 0))] for row in range(nrows)]


def records3(rng, nrows):
    """Rank 3: rows of rows of records, the first row of each level non-empty."""
    return [
        [[record(rng) for _ in range(rng.below(3) + (row == 0 and sub == 0))]
         for sub in range(rng.below(3) + (row == 0))]
        for row in range(nrows)
    ]


def ragged_indices(rng, v, batch, axis, extra):
    """Indices mirroring the first `batch` levels of `v`, then `extra` levels of indices
    valid for every row along `axis` under that batch position."""
    if batch == 0:
        def min_len(x, depth):
            if depth == 0:
                return len(x)
            lens = [min_len(y, depth - 1) for y in x]
            lens = [l for l in lens if l is not None]
            return min(lens) if lens else None

        bound = min_len(v, axis)
        bound = 3 if bound is None else bound

        def nested(depth):
            if depth == 0:
                return rng.below(bound)
            if bound == 0:
                return []
            return [nested(depth - 1) for _ in range(1 + rng.below(2))]

        return nested(extra)
    return [ragged_indices(rng, x, batch - 1, axis - 1, extra) for x in v]


def plain(v):
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def main():
    S = tf.experimental.StructuredTensor.from_pyval
    cases = []
    for seed in range(40):
        rng = SplitMix64(1000 + seed)
        rank = 1 + rng.below(2)
        n = 1 + rng.below(5)
        v = records(rng, rank, n)
        w = records(rng, rank, n)
        sv, sw = S(v), S(w)

        def add(op, args, inputs, result):
            cases.append({"op": op, "args": args, "inputs": inputs,
                          "expected": plain(result.to_pyval())})

        idx = [rng.below(n) for _ in range(rng.below(6))]
        if idx:
            add("gather", {"indices": idx, "axis": 0}, [v],
                tf.gather(sv, tf.constant(idx, dtype=tf.int64), axis=0))
        add("concat", {"axis": 0}, [v, w], tf.concat([sv, sw], axis=0))
        for axis in range(rank + 1):
            add("expand_dims", {"axis": axis}, [v], tf.expand_dims(sv, axis))
        ragged = [[rng.below(n) for _ in range(1 + rng.below(3))] for _ in range(1 + rng.below(3))]
        add("gather_ragged", {"indices": ragged}, [v],
            tf.gather(sv, tf.ragged.constant(ragged, dtype=tf.int64), axis=0))
        if rank == 2:
            add("concat", {"axis": 1}, [v, w], tf.concat([sv, sw], axis=1))
            min_len = min(len(r) for r in v)
            if min_len > 0:
                idx1 = [rng.below(min_len) for _ in range(1 + rng.below(3))]
                add("gather", {"indices": idx1, "axis": 1}, [v],
                    tf.gather(sv, tf.constant(idx1, dtype=tf.int64), axis=1))
            batched = [[rng.below(len(r)) for _ in range(rng.below(3))] if r else [] for r in v]
            add("gather_batched", {"indices": batched, "axis": 1}, [v],
                tf.gather(sv, tf.ragged.constant(batched, dtype=tf.int64, ragged_rank=1)
                          if any(batched) else tf.zeros([n, 0], dtype=tf.int64),
                          axis=1, batch_dims=1))
    # tf.gather with batch_dims on rank-3 struct arrays, indices of rank batch_dims + 1
    for seed in range(30):
        rng = SplitMix64(5000 + seed)
        n = 1 + rng.below(3)
        v = records3(rng, n)
        sv = S(v)
        for batch, axis in ((2, 2), (1, 2), (1, 1), (0, 1), (0, 2)):
            ind = ragged_indices(rng, v, batch, axis, 1)
            rank = batch + 1
            indices = tf.ragged.constant(ind, dtype=tf.int64, ragged_rank=rank - 1) \
                if rank > 1 else tf.constant(ind, dtype=tf.int64)
            try:
                result = tf.gather(sv, indices, axis=axis, batch_dims=batch)
            except (ValueError, tf.errors.InvalidArgumentError):
                continue  # an empty index row TensorFlow cannot type; not a case
            cases.append({"op": "gather_batch_dims",
                          "args": {"indices": ind, "indices_rank": rank, "axis": axis,
                                   "batch_dims": batch},
                          "inputs": [v], "expected": plain(result.to_pyval())})
    out = {"tensorflow": tf.__version__, "cases": cases}
    with open(os.path.join(HERE, "tf_ops.json"), "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
