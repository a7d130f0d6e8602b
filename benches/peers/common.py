"""Shared pieces of the peer benchmarks.

`SplitMix64` produces exactly the sequence of the Rust `benches::SplitMix64`, so a peer
times the same input as our side. `report` prints one JSON line per measurement, which
`cargo xtask bench` reads and joins with the criterion results of the same workload.
"""

import json
import os
import statistics
import sys
import time

MASK = (1 << 64) - 1
QUICK = os.environ.get("ARRAYS_BENCH_QUICK", "") not in ("", "0")


def size(full, divisor):
    """`full` in a real run, `full // divisor` (at least 1) in a quick run."""
    return max(1, full // max(1, divisor)) if QUICK else full


class SplitMix64:
    """SplitMix64, identical to the Rust side's generator."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        return self.next_u64() % n

    def next_f64(self):
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))


def splitmix64_array(seed, n):
    """`n` outputs of SplitMix64(seed) as a numpy uint64 array, vectorised."""
    import numpy as np

    with np.errstate(over="ignore"):
        idx = np.arange(1, n + 1, dtype=np.uint64)
        z = np.uint64(seed) + idx * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def target_dir():
    """Cargo's target directory (`CARGO_TARGET_DIR`, else `target/` at the repository root),
    where the Rust benches leave inputs for their peers."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    return target if os.path.isabs(target) else os.path.join(root, target)


def time_it(fn, repeats=None, warm=False):
    """Median wall time of `fn()` in seconds over `repeats` runs (after one warm-up run,
    skipped when `warm` says the caller already ran it), stopping early once the runs have
    taken 20 s (2 s in a quick run)."""
    repeats = repeats or (3 if QUICK else 10)
    if not warm:
        fn()
    times = []
    start_all = time.perf_counter()
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start_all > (2 if QUICK else 20):
            break
    return statistics.median(times)


def report(crate, workload, peer, seconds, version=""):
    """One measurement, as the JSON line xtask reads."""
    print(
        json.dumps(
            {
                "crate": crate,
                "workload": workload,
                "peer": peer,
                "seconds": seconds,
                "version": version,
            }
        ),
        flush=True,
    )


def skip(crate, peer, why):
    """Say on stderr that a peer is not available, so the table can say so."""
    print(json.dumps({"crate": crate, "peer": peer, "skipped": why}), flush=True)
    print(f"{crate}: peer {peer} skipped: {why}", file=sys.stderr)


def package_version(dist):
    """`"<dist> <version>"` from the installed package's metadata (k2 has no __version__)."""
    try:
        from importlib.metadata import version

        return f"{dist} {version(dist)}"
    except Exception:  # the package is not installed, or has no metadata
        return dist


# Workload inputs used by more than one peer script, defined once.


def random_fsa_arcs(i, n):
    """(src, dest, label, score) arrays of ragged-fsa's bench FSA `i` with `n` states,
    identical to the Rust generator in crates/ragged-fsa/benches."""
    import numpy as np

    seed = 4 * (1000 + i)
    counts = (splitmix64_array(seed, n - 1) % np.uint64(11)).astype(np.int64)
    total = int(counts.sum())
    src = np.repeat(np.arange(n - 1, dtype=np.int64), counts)
    span = np.minimum(n - 1 - src, 20).astype(np.uint64)
    dest = src + 1 + (splitmix64_array(seed + 1, total) % span).astype(np.int64)
    label = 1 + (splitmix64_array(seed + 2, total) % np.uint64(100)).astype(np.int64)
    label[dest == n - 1] = -1
    unit = (splitmix64_array(seed + 3, total) >> np.uint64(11)).astype(np.float64) * (
        1.0 / (1 << 53)
    )
    score = (-5.0 * unit).astype(np.float32)
    return src, dest, label, score
