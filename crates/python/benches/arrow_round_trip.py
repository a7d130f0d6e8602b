"""StructuredTensor.from_arrow and .to_arrow of pyarrow record batches at 10,000, 100,000
and 1,000,000 records, medians of ROUNDS; prints each step's time, its time per record,
and pyarrow's own C data interface round trip of the same batch as the floor
(`RecordBatch._import_from_c_capsule(*rb.__arrow_c_array__())`: no copy at all).

    python crates/python/benches/arrow_round_trip.py [ROUNDS] [--flat]

The records: {id: int64, score: float64, name: string (8 to 15 bytes), tags: list<int64>
(0 to 4 items)}, seeded; `--flat` leaves out `tags` (flat records: no list offsets, which
the crate copies into row partitions). `from_arrow` keeps pointing at the imported
numbers and string bytes and offsets (no copy; the string offsets and UTF-8 are checked,
a read), and `to_arrow` hands the tensor's buffers back, so with `--flat` neither step
copies a leaf. Use a release wheel (`maturin build --release`); the dev-profile wheel of
the test step is several times slower. Needs numpy, pyarrow and arrays installed.
"""

import statistics
import sys
import time

import numpy as np
import pyarrow as pa

from arrays.structured import StructuredTensor

ARGS = [a for a in sys.argv[1:] if a != "--flat"]
ROUNDS = int(ARGS[0]) if ARGS else 15
FLAT = "--flat" in sys.argv[1:]


def records(n):
    rng = np.random.default_rng(n)
    lengths = rng.integers(0, 5, n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    tags = pa.ListArray.from_arrays(pa.array(offsets), pa.array(rng.integers(0, 1000, offsets[-1])))
    names = pa.array([f"name-{i:07d}"[: 8 + i % 8] for i in range(n)])
    columns = {
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "score": pa.array(rng.random(n)),
        "name": names,
        "tags": tags,
    }
    if FLAT:
        del columns["tags"]
    return pa.record_batch(columns)


def median_time(fn):
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    print(f"{'records':>9} {'from_arrow':>12} {'to_arrow':>12} {'both':>12} {'pyarrow floor':>14}  per record (both)")
    for n in (10_000, 100_000, 1_000_000):
        rb = records(n)
        st = StructuredTensor.from_arrow(rb)
        assert st.to_arrow().to_pylist()[:3] == rb.to_pylist()[:3]
        t_in = median_time(lambda: StructuredTensor.from_arrow(rb))
        t_out = median_time(lambda: st.to_arrow())
        t_both = median_time(lambda: StructuredTensor.from_arrow(rb).to_arrow())
        t_floor = median_time(lambda: pa.RecordBatch._import_from_c_capsule(*rb.__arrow_c_array__()))
        print(
            f"{n:>9} {t_in * 1e3:>10.3f}ms {t_out * 1e3:>10.3f}ms {t_both * 1e3:>10.3f}ms"
            f" {t_floor * 1e3:>12.3f}ms  {t_both / n * 1e9:8.1f} ns"
        )


if __name__ == "__main__":
    main()
