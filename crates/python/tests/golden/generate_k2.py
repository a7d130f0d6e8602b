"""Writes dropin_k2.json: the drop-in script body (tests/dropin_body.py) run with k2 1.23.2.

Run it in a Python 3.9 environment with k2==1.23.2 and torch 1.12.1:
    python crates/python/tests/golden/generate_k2.py
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import k2  # noqa: E402

import dropin_body  # noqa: E402

from importlib.metadata import version  # noqa: E402

assert version("k2").startswith("1.23.2"), version("k2")
result = dropin_body.run(k2)
(HERE / "dropin_k2.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
print("wrote", HERE / "dropin_k2.json")
