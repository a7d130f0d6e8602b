"""k2 1.23.2's own tests (k2_upstream/, unmodified) against arrays.k2 through a shim `k2`.

They run in a subprocess, so the shim never shadows the real k2 of this process."""

import os
import pathlib
import subprocess
import sys

from conftest import need

HERE = pathlib.Path(__file__).resolve().parent / "k2_upstream"


def test_k2_own_tests_pass_through_the_shim():
    need("torch")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE / "shim"), env.get("PYTHONPATH", "")])
    which = subprocess.run(
        [sys.executable, "-c", "import k2; print(k2.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "shim" in which.stdout, which.stdout  # the shim, not an installed k2
    files = sorted(str(p) for p in HERE.glob("*_test.py"))
    assert len(files) == 45
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
        env=env,
        capture_output=True,
        text=True,
        cwd=str(HERE),
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "passed" in result.stdout and "failed" not in result.stdout
