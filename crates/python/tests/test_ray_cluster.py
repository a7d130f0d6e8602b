"""Both example pipelines on a real two-node Ray cluster, compared with a single-process run
of the same code, and again while a worker process and then the second node are killed.

The cluster lives in a network namespace of its own with only loopback (``unshare
--net``): Ray advertises the machine's interface address even when told 127.0.0.1, and
here 127.0.0.1 is the only address there is, so nothing leaves the machine. The scenario
(ray_cluster_driver.py) runs once for the module, bounded by a timeout; whatever happens,
Ray is stopped (``ray stop --force`` in the driver's ``finally``) and every process left
in the namespace is killed. Ray's logs stay under ``target/python/ray/`` when a test
fails, and their path is printed.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import need

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples"))

DRIVER_TIMEOUT = 200  # seconds; the scenario takes about a minute on 2 shared cores
N_USERS, N_UTTS = 1500, 60


def _target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR", HERE.parents[2] / "target"))


def _netns(pid):
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def _kill_namespace(inode):
    """SIGKILL to every process whose network namespace is `inode` (ours never is)."""
    killed = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _netns(entry) == inode and int(entry) != os.getpid():
            try:
                os.kill(int(entry), signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


@pytest.fixture(scope="module")
def run(tmp_path_factory, request):
    need("ray")
    need("pyarrow")
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.fail("the Ray cluster test needs unshare and ip (util-linux, iproute2)")
    import ray_asr_pipeline as asr
    import ray_data_pipeline as data

    work = tmp_path_factory.mktemp("ray")
    users = data.make_dataset(str(work / "users"), N_USERS, rows_per_file=150)
    truth = asr.make_features(f"{work / 'feats.ark'},{work / 'feats.scp'}", N_UTTS)
    # the single-process runs of the same code
    data.run_local(str(work / "users"), str(work / "data-local"))
    asr_local = asr.run_local(str(work / "feats.scp"), str(work / "asr-local"), n_shards=6)

    temp_dir = _target_dir() / "python" / "ray"  # short: Ray's socket paths must fit 107 bytes
    temp_dir.mkdir(parents=True, exist_ok=True)
    before = set(os.listdir(temp_dir))
    python = sys.executable
    command = (
        "ip link set lo up && exec "
        f"'{python}' '{HERE / 'ray_cluster_driver.py'}' '{work}' '{temp_dir}'"
    )
    own_ns = _netns(os.getpid())
    proc = subprocess.Popen(
        ["unshare", "--net", "sh", "-c", command],
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    inode = None
    started = time.monotonic()
    try:
        while inode is None and proc.poll() is None and time.monotonic() - started < 10:
            ns = _netns(proc.pid)
            inode = ns if ns is not None and ns != own_ns else None
            time.sleep(0.01)
        try:
            output, _ = proc.communicate(timeout=DRIVER_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            output += f"\n(the driver was killed after {DRIVER_TIMEOUT} s)"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        leftovers = _kill_namespace(inode) if inode is not None else 0
    report_path = work / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {"ok": False}
    report.update(output=output, leftovers=leftovers, namespace=inode, own_namespace=own_ns)
    sessions = sorted(set(os.listdir(temp_dir)) - before)
    result = {
        "work": work,
        "report": report,
        "users": users,
        "truth": truth,
        "asr_local": asr_local,
        "failed": False,
        "logs": [str(temp_dir / name) for name in sessions],
    }
    failed_before = request.session.testsfailed
    yield result
    if request.session.testsfailed > failed_before or result["failed"] or not report.get("ok"):
        # past pytest's capture, so CI's output says where the logs are
        message = f"Ray's logs are kept in {temp_dir}: {', '.join(sessions) or 'no session folder'}"
        terminal = request.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(message)
            terminal.write_line(output[-8000:])
        else:
            sys.stderr.write(message + "\n")
    else:
        for name in sessions:
            shutil.rmtree(temp_dir / name, ignore_errors=True)


def _check_ok(run):
    report = run["report"]
    if not report.get("ok"):
        run["failed"] = True
        pytest.fail(
            f"the cluster scenario failed (Ray's logs: {run['logs']}):\n{report.get('error', '')}\n"
            f"{report['output'][-4000:]}"
        )


def test_the_cluster_has_two_nodes_on_loopback_only(run):
    _check_ok(run)
    report = run["report"]
    assert report["namespace"] is not None and report["namespace"] != report["own_namespace"]
    assert report["addresses"] == ["127.0.0.1", "127.0.0.1"]
    assert len(set(report["nodes"].values())) == 2


def test_data_pipeline_on_the_cluster_equals_one_process(run):
    import ray_data_pipeline as data

    _check_ok(run)
    local = data.read_output(str(run["work"] / "data-local"))
    cluster = data.read_output(str(run["work"] / "data-cluster"))
    assert len(cluster) == len(local) > 0
    assert cluster == local
    # and both equal a plain Python model of the transformation
    expected = []
    for user in run["users"]:
        ms = [e["ms"] for s in user["sessions"] for e in s["events"]]
        if len(ms) >= data.MIN_EVENTS:
            stats = {"n_sessions": len(user["sessions"]), "n_events": len(ms), "total_ms": sum(ms),
                     "longest_ms": max(ms)}
            expected.append(dict(user, stats=stats))
    assert cluster == sorted(expected, key=lambda r: r["user_id"])


def test_asr_pipeline_on_the_cluster_equals_one_process(run):
    import ray_asr_pipeline as asr

    _check_ok(run)
    local = asr.read_text(str(run["work"] / "asr-local"))
    cluster = asr.read_text(str(run["work"] / "asr-cluster"))
    assert len(cluster) == len(local) == N_UTTS
    assert cluster == local
    assert local == sorted(f"{key} {' '.join(words)}" for key, words in run["truth"])
    # both nodes decoded shards
    assert set(run["report"]["asr_nodes"]) == set(run["report"]["nodes"].values())


def test_data_pipeline_survives_a_killed_worker(run):
    import ray_data_pipeline as data

    _check_ok(run)
    assert len(run["report"]["killed_workers"]) == 1
    local = data.read_output(str(run["work"] / "data-local"))
    assert data.read_output(str(run["work"] / "data-fault")) == local


def test_asr_pipeline_survives_a_lost_node(run):
    import ray_asr_pipeline as asr

    _check_ok(run)
    report = run["report"]
    assert report["node_killed"]
    assert report["alive_after"] == [report["nodes"]["head"]]
    second = report["nodes"]["second"]
    # a shard started on the second node was started again on the head
    started = [m.split(".") for m in report["fault_started"]]
    lost = {shard for shard, node, _ in started if node == second}
    assert lost
    assert all(any(s == shard and n == report["nodes"]["head"] for s, n, _ in started) for shard in lost)
    text = asr.read_text(str(run["work"] / "asr-fault"))
    assert text == asr.read_text(str(run["work"] / "asr-local"))  # complete, nothing twice
    assert len(text) == len(set(text)) == N_UTTS


def test_ray_was_stopped(run):
    """Nothing of the cluster outlives the scenario: the driver's `ray stop --force` and the
    kill of the namespace's processes left no process behind."""
    _check_ok(run)
    assert run["report"]["leftovers"] == 0
