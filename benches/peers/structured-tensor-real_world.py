"""Peers of crates/structured-tensor/benches/real_world.rs: JSON Lines of nested records.

Input: the records of benches/peers/structured-tensor.py (SplitMix64 seed 7; 1,000,000,
100,000 in quick runs), one JSON object per line, read from the file the Rust bench leaves
at target/structured-tensor-bench/records.jsonl (the same bytes; written here from the same
generator when it is missing).
- json_lines: pyarrow.json.read_json(path) (threads on, its default) and
  pandas.read_json(path, lines=True); ours parses the same text already in memory, so the
  peers' times include reading the file from the page cache.
"""

import importlib.util
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F401,F403

CRATE = "structured-tensor"


def records(n):
    spec = importlib.util.spec_from_file_location(
        "st_peer", os.path.join(os.path.dirname(__file__), "structured-tensor.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.records(n)


def main():
    n = size(1_000_000, 10)
    path = os.path.join(target_dir(), "structured-tensor-bench", "records.jsonl")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            for r in records(n):
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
    try:
        import pyarrow as pa
        import pyarrow.json as pj

        report(CRATE, "json_lines", "pyarrow", time_it(lambda: pj.read_json(path)), pa.__version__)
    except Exception as e:  # noqa: BLE001 - any import failure means the peer is absent
        skip(CRATE, "pyarrow", str(e))
    try:
        import pandas as pd

        report(CRATE, "json_lines", "pandas",
               time_it(lambda: pd.read_json(path, lines=True), repeats=3), pd.__version__)
    except Exception as e:  # noqa: BLE001
        skip(CRATE, "pandas", str(e))


if __name__ == "__main__":
    main()
