import os

import pytest

# k2's own tests run in a subprocess with the shim `k2` (test_k2_upstream.py), never here
collect_ignore = ["k2_upstream"]


def _required():
    return {x for x in os.environ.get("ARRAYS_TEST_REQUIRE", "").split(",") if x}


def need(module_name):
    """Imports `module_name`, or skips the test; when ARRAYS_TEST_REQUIRE names it (as
    `cargo xtask test` does in the venv that has torch and k2) a missing module fails."""
    if module_name in _required():
        return __import__(module_name)
    return pytest.importorskip(module_name)
