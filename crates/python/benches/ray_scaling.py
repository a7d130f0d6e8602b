"""Ray's overhead and two-node scaling for the example pipelines (a benchmark, not a test).

    python benches/ray_scaling.py [--users 1600000] [--utts 20000] [--rounds 3]

Runs itself inside a network namespace with only loopback (``unshare --net``; root), as
the cluster test does, so the cluster never talks past 127.0.0.1. For each pipeline:

- direct: the same transformation called in this process, no Ray (``run_local``);
- one node: a Ray cluster of one node with one CPU, the pipeline through Ray;
- two nodes: a second node with one CPU joined to it.

Each node is one core, as the issue asks: this process (the driver) and the head node it
starts are held to the first core of the machine (``sched_setaffinity``, inherited by
every process Ray starts there, so rayon and Arrow see one CPU), and the second node to
the second core. ``direct`` runs on the first core as well, so all three rows compare the
same work on one core, then on two. ``--no-pin`` runs unpinned, as before: there the
pipelines' own threads already use every core on one node.

Each row is the median of ``--rounds`` timed runs after one warm-up run (cluster start-up
is not timed; the dataset and the features are written once before). Prints the ratios
the issue asks for (one node / direct, goal <= 1.15; two nodes' throughput / one node's,
goal >= 1.6), the CPU and the load average.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import ray_asr_pipeline as asr  # noqa: E402
import ray_data_pipeline as data  # noqa: E402

RAY = os.path.join(os.path.dirname(sys.executable), "ray")
NODE = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--object-store-memory=500000000", "--disable-usage-stats"]


def timed(fn, rounds):
    fn()  # warm-up
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    return path


def make_users(path, n_users, base=20_000, files=40):
    """``n_users`` users in ``files`` Parquet files over the five partitions: copies of
    ``make_users(base)`` with user ids moved past each other (generating every user in
    Python would take minutes)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(data.make_users(base))
    country = table.column("country")
    table = table.drop_columns(["country"])
    copies = max(n_users // base, 1)
    per_file = max(copies * base // files, 1)
    k = 0
    for c in range(copies):
        shifted = table.set_column(table.schema.get_field_index("user_id"), "user_id",
                                   pc.add(table.column("user_id"), c * base))
        for start in range(0, base, per_file):
            part = shifted.slice(start, per_file)
            key = country[start].as_py()
            folder = os.path.join(path, f"country={key}")
            os.makedirs(folder, exist_ok=True)
            pq.write_table(part, os.path.join(folder, f"part-{k}.parquet"))
            k += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=1_600_000)
    parser.add_argument("--utts", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=2048)
    parser.add_argument("--ray-batch-size", type=int, default=0,
                        help="map_batches' batch size on Ray (0: each block as Ray Data read it)")
    parser.add_argument("--pipelines", default="data,asr")
    parser.add_argument("--num-blocks", type=int, default=8, help="Ray Data's read tasks (override_num_blocks)")
    parser.add_argument("--datasource-v2", action="store_true",
                        help="Ray Data's new Parquet reader (its ListFiles step took ~7 s a run here)")
    parser.add_argument("--no-pin", action="store_true",
                        help="do not hold each node (and the direct run) to one core")
    parser.add_argument("--work", default=os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "target", "python", "ray-bench"))
    args = parser.parse_args()
    if os.environ.get("RAY_BENCH_IN_NETNS") != "1":
        os.execvp("unshare", ["unshare", "--net", "sh", "-c",
                              "ip link set lo up && RAY_BENCH_IN_NETNS=1 exec \"$0\" \"$@\"",
                              sys.executable] + sys.argv)
    cores = sorted(os.sched_getaffinity(0))
    pin = not args.no_pin
    if pin and len(cores) < 2:
        raise SystemExit("two nodes of one core each need two cores; run with --no-pin")
    if pin:
        os.sched_setaffinity(0, {cores[0]})
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(os.path.dirname(HERE), "examples"), env.get("PYTHONPATH", "")])
    os.environ.update(env)
    work = args.work
    os.makedirs(work, exist_ok=True)
    users_dir = fresh(os.path.join(work, "users"))
    make_users(users_dir, args.users)
    asr.make_features(f"{work}/feats.ark,{work}/feats.scp", args.utts)
    scp = os.path.join(work, "feats.scp")
    n_shards = 8
    rows = []

    pipelines = args.pipelines.split(",")
    ray_batch = args.ray_batch_size or None
    if "data" in pipelines:
        rows.append(("data", "direct", *timed(
            lambda: data.run_local(users_dir, fresh(f"{work}/d-out"), batch_size=args.batch_size), args.rounds)))
    if "asr" in pipelines:
        rows.append(("asr", "direct", *timed(
            lambda: asr.run_local(scp, fresh(f"{work}/a-out"), n_shards=n_shards), args.rounds)))
    second = None
    try:
        subprocess.run([RAY, "start", "--head", "--port=6379", "--include-dashboard=false",
                        f"--temp-dir={work}/rt"] + NODE, check=True, env=env, stdout=subprocess.DEVNULL)
        import ray

        ray.init(address="127.0.0.1:6379", logging_level="warning")
        ray.data.DataContext.get_current().enable_progress_bars = False
        ray.data.DataContext.get_current().use_datasource_v2 = args.datasource_v2

        def ray_rows(label):
            if "data" in pipelines:
                rows.append(("data", label, *timed(
                    lambda: data.run_ray(users_dir, fresh(f"{work}/d-out"), batch_size=ray_batch,
                                         num_blocks=args.num_blocks), args.rounds)))
            if "asr" in pipelines:
                rows.append(("asr", label, *timed(
                    lambda: asr.run_ray(scp, fresh(f"{work}/a-out"), n_shards=n_shards), args.rounds)))

        ray_rows("one node")
        second_core = (lambda: os.sched_setaffinity(0, {cores[1]})) if pin else None
        second = subprocess.Popen([RAY, "start", "--address=127.0.0.1:6379", "--block"] + NODE, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  preexec_fn=second_core)
        deadline = time.monotonic() + 60
        while sum(n["Alive"] for n in ray.nodes()) < 2:
            if time.monotonic() > deadline:
                raise TimeoutError("the second node did not join")
            time.sleep(0.2)
        ray_rows("two nodes")
    finally:
        try:
            import ray

            ray.shutdown()
        except Exception:
            pass
        subprocess.run([RAY, "stop", "--force"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if second is not None:
            second.kill()

    by = {(p, label): t for p, label, t, _ in rows}
    n_files = sum(len(files) for _, _, files in os.walk(users_dir))
    print(f"{args.users} users in {n_files} files, batch size {args.batch_size} (on Ray: {ray_batch or 'each block'}, "
          f"{args.num_blocks} read tasks, datasource v{2 if args.datasource_v2 else 1}); "
          f"{args.utts} utterances in {n_shards} shards; median of {args.rounds} after a warm-up; "
          + (f"each node held to one core (driver and head: CPU {cores[0]}, second node: CPU {cores[1]})"
             if pin else "unpinned"))
    print(f"{'pipeline':<9}{'run':<11}{'median s':>9}  all rounds")
    for p, label, t, times in rows:
        print(f"{p:<9}{label:<11}{t:>9.3f}  {' '.join(f'{x:.3f}' for x in times)}")
    for p in pipelines:
        print(f"{p}: one node / direct = {by[(p, 'one node')] / by[(p, 'direct')]:.2f}x (goal <= 1.15); "
              f"two nodes' throughput / one node's = {by[(p, 'one node')] / by[(p, 'two nodes')]:.2f}x (goal >= 1.6)")
    model = next((line.split(":", 1)[1].strip() for line in subprocess.run(
        ["lscpu"], capture_output=True, text=True).stdout.splitlines() if line.startswith("Model name")), "?")
    print(f"CPU: {model}, {os.cpu_count()} logical CPUs; load average at the end: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
