"""StructuredTensor.from_pyval of 100,000 records: arrays.structured against TensorFlow's
tf.experimental.StructuredTensor.from_pyval, alternated call by call, medians of ROUNDS,
with the ratio of each pair's times (ours / TensorFlow's) and its spread.

    python crates/python/benches/pyval.py [ROUNDS] [RECORDS]

The records (seeded): {"id": int, "score": float, "name": str, "tags": [int, ...] (0 to 4
items), "owner": {"age": int, "city": str}}, a list of dicts, so both build a rank-1
StructuredTensor with a ragged field and a nested struct. TensorFlow's call is its own
Python walk of the value; ours walks the Python objects from Rust into the crate's Tree
(the GIL held), then reads the columns from it with the GIL released. Use a release wheel
(`maturin build --release --out DIR`; unpack it and put it on PYTHONPATH, or install it);
the dev-profile wheel of the test step is slower. Needs tensorflow-cpu and arrays in one
interpreter (the peers venv, with arrays' wheel installed or on PYTHONPATH).
"""

import os
import random
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402

from arrays.structured import StructuredTensor  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
RECORDS = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
CITIES = ["Oslo", "Lima", "Pune", "Kyiv", "Perth", "Quito"]


def records(n):
    rng = random.Random(n)
    return [
        {
            "id": i,
            "score": rng.random(),
            "name": f"user-{i:06d}",
            "tags": [rng.randrange(1000) for _ in range(rng.randrange(5))],
            "owner": {"age": rng.randrange(18, 90), "city": rng.choice(CITIES)},
        }
        for i in range(n)
    ]


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main():
    value = records(RECORDS)
    ours_t, tf_t, ratios = [], [], []
    for _ in range(ROUNDS):
        t_ours, st = timed(lambda: StructuredTensor.from_pyval(value))
        t_tf, tst = timed(lambda: tf.experimental.StructuredTensor.from_pyval(value))
        assert st.shape == (RECORDS,) and tuple(tst.shape) == (RECORDS,)
        ours_t.append(t_ours)
        tf_t.append(t_tf)
        ratios.append(t_ours / t_tf)
    print(
        f"from_pyval {RECORDS:,} records, {ROUNDS} alternated rounds: ours "
        f"{statistics.median(ours_t) * 1e3:.1f} ms, TensorFlow {tf.__version__} "
        f"{statistics.median(tf_t) * 1e3:.1f} ms, ours / TensorFlow "
        f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
    )


if __name__ == "__main__":
    main()
