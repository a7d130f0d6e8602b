"""The two-node Ray cluster scenario of test_ray_cluster.py, run by it inside a network
namespace that has only loopback (``unshare --net``): starts a head and a second node,
runs both example pipelines on them (and each once more while a worker process or the
second node is killed mid-task), stops Ray, and writes what it saw to ``report.json``.

    python ray_cluster_driver.py WORK_DIR RAY_TEMP_DIR

WORK_DIR holds the inputs the test wrote (``users/``, ``feats.scp``); every output goes
under it. Not a test module itself (pytest collects ``test_*.py`` only).
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")
sys.path.insert(0, EXAMPLES)

import ray_asr_pipeline as asr  # noqa: E402
import ray_data_pipeline as data  # noqa: E402

PORT = "6379"
ADDRESS = f"127.0.0.1:{PORT}"
RAY = os.path.join(os.path.dirname(sys.executable), "ray")
NODE_ARGS = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--object-store-memory=200000000", "--disable-usage-stats"]
STEP_TIMEOUT = 60


def log(message):
    print(f"[driver {time.strftime('%H:%M:%S')}] {message}", flush=True)


def descendants(pid):
    """`pid` and every process below it (walking /proc's parent links)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def kill_tree(pid):
    for p in descendants(pid):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_for(predicate, what, timeout=STEP_TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")


# ---- task wrappers: markers say where a task ran; the fault runs pause to be killable


def asr_task_with_marker(scp_path, hlg, model, out_dir, name):
    import ray

    node = ray.get_runtime_context().get_node_id()
    markers = os.path.join(out_dir, "started")
    os.makedirs(markers, exist_ok=True)
    with open(os.path.join(markers, f"{name}.{node}.{os.getpid()}"), "w"):
        pass
    if os.path.exists(os.path.join(out_dir, "pause")):
        time.sleep(2.0)  # the fault run: long enough to be killed mid-task
    return asr.decode_shard(scp_path, hlg, model, out_dir, name)


def data_transform_killable(batch):
    """Writes this worker's pid once and pauses on its first batch, so the driver can kill
    the worker mid-task; then the example's transform."""
    marker_dir = os.environ.get("DATA_FAULT_MARKERS")
    if marker_dir:
        marker = os.path.join(marker_dir, str(os.getpid()))
        if not os.path.exists(marker):
            with open(marker, "w"):
                pass
            time.sleep(2.0)
    return data.transform(batch)


def main():
    work, temp_dir = sys.argv[1], sys.argv[2]
    report = {"steps": []}
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    # a lost node is noticed within ~3 s instead of Ray's default ~30 s
    env.update(RAY_health_check_period_ms="500", RAY_health_check_failure_threshold="4",
               RAY_health_check_initial_delay_ms="0")
    env["PYTHONPATH"] = os.pathsep.join([HERE, EXAMPLES, env.get("PYTHONPATH", "")])
    env["DATA_FAULT_MARKERS"] = os.path.join(work, "data-fault-markers")
    os.makedirs(env["DATA_FAULT_MARKERS"], exist_ok=True)
    os.environ.update(env)
    second = None
    try:
        log("starting the head")
        subprocess.run(
            [RAY, "start", "--head", f"--port={PORT}", "--include-dashboard=false",
             f"--temp-dir={temp_dir}", "--resources={\"head\": 1}"] + NODE_ARGS,
            env=env, check=True, timeout=STEP_TIMEOUT,
        )
        log("starting the second node")
        second_log = open(os.path.join(work, "second-node.log"), "w")
        second = subprocess.Popen(
            [RAY, "start", f"--address={ADDRESS}", "--block", "--resources={\"second\": 1}"] + NODE_ARGS,
            env=env, stdout=second_log, stderr=subprocess.STDOUT,
        )
        import ray

        ray.init(address=ADDRESS, logging_level="warning")
        wait_for(lambda: sum(n["Alive"] for n in ray.nodes()) == 2, "two live nodes")
        nodes = [n for n in ray.nodes() if n["Alive"]]
        report["addresses"] = sorted(n["NodeManagerAddress"] for n in nodes)
        head_id = next(n["NodeID"] for n in nodes if "head" in n["Resources"])
        second_id = next(n["NodeID"] for n in nodes if "second" in n["Resources"])
        report["nodes"] = {"head": head_id, "second": second_id}
        log(f"cluster up: {report['addresses']}")

        t = time.monotonic()
        data.run_ray(os.path.join(work, "users"), os.path.join(work, "data-cluster"), batch_size=200)
        report["steps"].append(["data pipeline", round(time.monotonic() - t, 1)])
        log("data pipeline done")

        t = time.monotonic()
        asr.run_ray(os.path.join(work, "feats.scp"), os.path.join(work, "asr-cluster"), n_shards=6,
                    task=asr_task_with_marker)
        report["asr_nodes"] = sorted({m.split(".")[1] for m in os.listdir(os.path.join(work, "asr-cluster", "started"))})
        report["steps"].append(["asr pipeline", round(time.monotonic() - t, 1)])
        log("asr pipeline done")

        # ---- a worker process killed mid-task in the data pipeline
        killed_workers = []

        def kill_first_worker():
            pid = wait_for(lambda: os.listdir(env["DATA_FAULT_MARKERS"]), "a data task to start")[0]
            time.sleep(0.5)
            os.kill(int(pid), signal.SIGKILL)
            killed_workers.append(int(pid))
            log(f"killed data worker {pid}")

        t = time.monotonic()
        killer = threading.Thread(target=kill_first_worker, daemon=True)
        killer.start()
        data.run_ray(os.path.join(work, "users"), os.path.join(work, "data-fault"), batch_size=200,
                     fn=data_transform_killable)
        killer.join(timeout=5)
        report["killed_workers"] = killed_workers
        report["steps"].append(["data pipeline, a worker killed", round(time.monotonic() - t, 1)])
        log("data pipeline with a killed worker done")

        # ---- the second node killed mid-ASR
        fault_out = os.path.join(work, "asr-fault")
        os.makedirs(fault_out, exist_ok=True)
        open(os.path.join(fault_out, "pause"), "w").close()
        killed_node = []

        def kill_second_node():
            started = os.path.join(fault_out, "started")
            wait_for(lambda: os.path.isdir(started) and any(second_id in m for m in os.listdir(started)),
                     "an ASR task on the second node")
            time.sleep(0.5)
            kill_tree(second.pid)
            killed_node.append(time.monotonic())
            log("killed the second node")

        t = time.monotonic()
        killer = threading.Thread(target=kill_second_node, daemon=True)
        killer.start()
        asr.run_ray(os.path.join(work, "feats.scp"), fault_out, n_shards=6, task=asr_task_with_marker)
        killer.join(timeout=5)
        report["node_killed"] = bool(killed_node)
        report["fault_started"] = sorted(os.listdir(os.path.join(fault_out, "started")))
        report["alive_after"] = sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])
        report["steps"].append(["asr pipeline, the second node killed", round(time.monotonic() - t, 1)])
        log("asr pipeline with a killed node done")
        report["ok"] = True
    except BaseException:
        report["ok"] = False
        report["error"] = traceback.format_exc()
        log(report["error"])
    finally:
        try:
            import ray

            ray.shutdown()
        except Exception:
            pass
        subprocess.run([RAY, "stop", "--force"], env=env, timeout=STEP_TIMEOUT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if second is not None:
            kill_tree(second.pid)
        with open(os.path.join(work, "report.json"), "w") as f:
            json.dump(report, f, indent=1)
    sys.exit(0 if report.get("ok") else 1)


if __name__ == "__main__":
    main()
