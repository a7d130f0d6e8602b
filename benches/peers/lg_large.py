"""Issue 35's LG graph ten times larger than the algebra bench's (200,000 words), timed and
with peak memory, beside k2 and kaldifst: one run of the pipeline per process, the sides
alternating round by round.

Not a peer script of `cargo xtask bench` (its name starts with no crate's), and not part of
CI: a driver run by hand, after `cargo build --release -p ragged-fsa --example lg_large`.

    python3 benches/peers/lg_large.py [--words 200000] [--rounds 3] [--no-twin-check]

The driver has the example write L and G (`benches::graphs`, seed 2026, 40 phones) as
OpenFst text under `<target>/lg_large/<words>/` once, checks that `graphs.py` (the Python
twin) writes the same bytes, then runs, each round, in this order and each in a process of
its own: ours on 1 thread, ours on 2 threads (`crates/ragged-fsa/examples/lg_large.rs`),
k2 (this script with `--side k2`, in the Python 3.9 venv that has k2), kaldifst (`--side
kaldifst`, in the peers venv). Every side reads the two files and parses them (timed as
`load_s`, left out of the pipeline's time), reads `VmRSS` and `VmHWM` from
`/proc/self/status`, resets the peak (`5` into `/proc/self/clear_refs`), runs its stages
with a wall clock and the process's CPU clock (all its threads) around each, and reads
`VmHWM` again after each: the pipeline's own peak, inputs included. The stages:

- ours: `compose`, `determinize` (no weight pushing), `minimize`;
- k2 1.23.2, one torch thread: `compose` (G arc-sorted while loading), `connect`,
  `determinize`; k2 has no minimization;
- kaldifst (OpenFst): `compose` (L sorted on output labels and G on input labels while
  loading), Kaldi's `determinize_star`, `minimize_encoded` (both in place).

A side that runs past `--timeout` seconds or whose resident memory passes `--max-rss-gib`
is stopped, and the stages it finished (each side prints one line per stage on stderr) are
reported as what it reached. Results go to `<target>/lg_large/<words>/results-<time>.jsonl`
and a Markdown table on stdout: per side the median over the rounds, and the ratios ours /
peer per round (median, min-max spread): the whole pipeline against kaldifst, compose plus
determinize against k2's compose, connect and determinize. `--report FILE` prints the
tables again from such a file of results.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import package_version, target_dir  # noqa: E402

SEED = 2026
NUM_PHONES = 40
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# -- one side's run, in this process -----------------------------------------------------


def memory_kib():
    """(VmRSS, VmHWM) of this process in KiB, from /proc/self/status."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                number, unit = value.split()
                if unit != "kB":
                    raise ValueError(f"{name} in /proc/self/status is {value.strip()!r}")
                fields[name] = int(number)
    return fields["VmRSS"], fields["VmHWM"]


def reset_peak():
    """Resets this process's peak RSS to its current RSS (Linux 4.0 and later)."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")


def progress(stage, seconds):
    """One line on stderr per finished stage, so a run that is stopped says how far it got;
    returns the peak RSS so far."""
    _, peak = memory_kib()
    line = {"stage": stage, "seconds": round(seconds, 6), "peak_kib": peak}
    print(json.dumps(line), file=sys.stderr, flush=True)
    return peak


def kaldifst_size(fst):
    """(states, arcs) of an OpenFst FST."""
    return fst.num_states, sum(fst.num_arcs(s) for s in range(fst.num_states))


def k2_size(fsa):
    """(states, arcs) of a k2 FSA (its extra final state counted, as ours are)."""
    return int(fsa.shape[0]), int(fsa.arcs.values().shape[0])


def run_k2(directory):
    import k2
    import torch

    torch.set_num_threads(1)
    start = time.perf_counter()
    with open(os.path.join(directory, "L.txt")) as f:
        lexicon = k2.Fsa.from_openfst(f.read(), acceptor=False)
    with open(os.path.join(directory, "G.txt")) as f:
        text = f.read()
    # G's final lines (`state cost`): one per word, and the start state's
    words = sum(1 for line in text.splitlines() if line.count(" ") == 1) - 1
    grammar = k2.arc_sort(k2.Fsa.from_openfst(text, acceptor=True))
    del text
    load_s = time.perf_counter() - start
    rss, peak_load = memory_kib()
    reset_peak()
    stages, cpu = {}, {}
    sizes = {"L": k2_size(lexicon), "G": k2_size(grammar)}

    t0, c0 = time.perf_counter(), time.process_time()
    lg = k2.compose(lexicon, grammar, treat_epsilons_specially=True)
    stages["compose_s"] = time.perf_counter() - t0
    cpu["compose_cpu_s"] = time.process_time() - c0
    peak_compose = progress("compose", stages["compose_s"])
    sizes["LG"] = k2_size(lg)

    t0, c0 = time.perf_counter(), time.process_time()
    lg = k2.connect(lg)
    stages["connect_s"] = time.perf_counter() - t0
    cpu["connect_cpu_s"] = time.process_time() - c0
    progress("connect", stages["connect_s"])
    sizes["LG_connected"] = k2_size(lg)

    t0, c0 = time.perf_counter(), time.process_time()
    det = k2.determinize(lg)
    stages["determinize_s"] = time.perf_counter() - t0
    cpu["determinize_cpu_s"] = time.process_time() - c0
    peak = progress("determinize", stages["determinize_s"])
    sizes["det"] = k2_size(det)
    return {
        "side": "k2",
        "version": package_version("k2"),
        "words": words,
        "threads": 1,
        "load_s": load_s,
        "rss_after_load_kib": rss,
        "peak_load_kib": peak_load,
        **stages,
        "minimize_s": None,
        "total_s": sum(stages.values()),
        **cpu,
        "total_cpu_s": sum(cpu.values()),
        "peak_compose_kib": peak_compose,
        "peak_determinize_kib": peak,
        "peak_kib": peak,
        "sizes": sizes,
    }


def run_kaldifst(directory):
    import kaldifst

    start = time.perf_counter()
    with open(os.path.join(directory, "L.txt")) as f:
        lexicon = kaldifst.compile(f.read(), acceptor=False)
    with open(os.path.join(directory, "G.txt")) as f:
        grammar = kaldifst.compile(f.read(), acceptor=True)
    kaldifst.arcsort(lexicon, sort_type="olabel")
    kaldifst.arcsort(grammar, sort_type="ilabel")
    load_s = time.perf_counter() - start
    rss, peak_load = memory_kib()
    reset_peak()
    stages, cpu = {}, {}
    # sizes are counted between the stages, off their clocks
    sizes = {"L": kaldifst_size(lexicon), "G": kaldifst_size(grammar)}

    t0, c0 = time.perf_counter(), time.process_time()
    graph = kaldifst.compose(lexicon, grammar)
    stages["compose_s"] = time.perf_counter() - t0
    cpu["compose_cpu_s"] = time.process_time() - c0
    peak_compose = progress("compose", stages["compose_s"])
    sizes["LG"] = kaldifst_size(graph)

    t0, c0 = time.perf_counter(), time.process_time()
    kaldifst.determinize_star(graph)
    stages["determinize_s"] = time.perf_counter() - t0
    cpu["determinize_cpu_s"] = time.process_time() - c0
    peak_determinize = progress("determinize_star", stages["determinize_s"])
    sizes["det"] = kaldifst_size(graph)

    t0, c0 = time.perf_counter(), time.process_time()
    kaldifst.minimize_encoded(graph)
    stages["minimize_s"] = time.perf_counter() - t0
    cpu["minimize_cpu_s"] = time.process_time() - c0
    peak = progress("minimize_encoded", stages["minimize_s"])
    sizes["min"] = kaldifst_size(graph)
    return {
        "side": "kaldifst",
        "version": package_version("kaldifst"),
        "words": sizes["G"][0] - 1,
        "threads": 1,
        "load_s": load_s,
        "rss_after_load_kib": rss,
        "peak_load_kib": peak_load,
        **stages,
        "total_s": sum(stages.values()),
        **cpu,
        "total_cpu_s": sum(cpu.values()),
        "peak_compose_kib": peak_compose,
        "peak_determinize_kib": peak_determinize,
        "peak_kib": peak,
        "sizes": sizes,
    }


# -- the driver ----------------------------------------------------------------------------


def rss_of(pid):
    """VmRSS of process `pid` in KiB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_side(name, command, timeout, max_rss_kib):
    """Runs one side's process; its JSON result, or a record of where it was stopped."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    stopped, max_seen = None, 0
    while process.poll() is None:
        rss = rss_of(process.pid)
        max_seen = max(max_seen, rss)
        if rss > max_rss_kib:
            stopped = f"stopped at {rss / 1048576:.1f} GiB resident (limit {max_rss_kib / 1048576:.0f} GiB)"
        elif time.perf_counter() - started > timeout:
            stopped = f"stopped after {timeout:.0f} s (time limit)"
        if stopped:
            process.kill()
            break
        time.sleep(0.2)
    out, err = process.communicate()
    wall = time.perf_counter() - started
    reached = [json.loads(line) for line in err.splitlines() if line.startswith('{"stage"')]
    if stopped is None and process.returncode == 0:
        result = json.loads(out.strip().splitlines()[-1])
        result["name"] = name
        result["process_wall_s"] = wall
        return result
    why = stopped or f"exit status {process.returncode}: {err.strip().splitlines()[-3:]}"
    return {
        "name": name,
        "failed": why,
        "reached": reached,
        "max_rss_seen_kib": max_seen,
        "process_wall_s": wall,
    }


def uptime():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def spread(values):
    """`median (min-max)` of a list of ratios."""
    if not values:
        return "—"
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def gib(kib):
    return f"{kib / 1048576:.2f} GiB"


def growth(r, key="peak_kib"):
    """How far a run's peak rose above its RSS after loading, KiB."""
    return r[key] - r["rss_after_load_kib"]


def table(results, rounds):
    """The Markdown tables of a run's results: medians per side, then ratios per round."""
    names = ["ours_t1", "ours_t2", "k2", "kaldifst"]
    lines = [
        "| side | load (s) | RSS after load | compose (s) | connect (s) | determinize (s) "
        "| minimize (s) | pipeline (s) | pipeline CPU (s) | peak RSS to determinize "
        "| peak RSS to the end | rise above the RSS after load |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in names:
        done = [r for r in results if r["name"] == name and "failed" not in r]
        failed = [r for r in results if r["name"] == name and "failed" in r]
        for r in failed:
            reached = ", ".join(
                f"{s['stage']} {s['seconds']:.1f} s (peak {gib(s['peak_kib'])})"
                for s in r["reached"]
            )
            lines.append(
                f"| {name}, round {r['round'] + 1} | {r['failed']}; reached: "
                f"{reached or 'no stage'}; largest RSS seen {gib(r['max_rss_seen_kib'])} "
                "| | | | | | | | | | |"
            )
        if not done:
            continue

        def med(key):
            values = [r[key] for r in done if r.get(key) is not None]
            return statistics.median(values) if values else None

        def cell(key):
            value = med(key)
            return "—" if value is None else f"{value:.2f}"

        rise = statistics.median(growth(r) for r in done)
        lines.append(
            f"| {name} | {cell('load_s')} | {gib(med('rss_after_load_kib'))} "
            f"| {cell('compose_s')} | {cell('connect_s')} | {cell('determinize_s')} "
            f"| {cell('minimize_s')} | {cell('total_s')} | {cell('total_cpu_s')} "
            f"| {gib(med('peak_determinize_kib'))} "
            f"| {gib(med('peak_kib'))} | {gib(rise)} |"
        )
    by_round = {}
    for r in results:
        by_round.setdefault(r["round"], {})[r["name"]] = r
    ratios = {}

    def add(key, value):
        ratios.setdefault(key, []).append(value)

    for sides in by_round.values():
        kaldifst = sides.get("kaldifst")
        k2 = sides.get("k2")
        for ours_name in ("ours_t1", "ours_t2"):
            ours = sides.get(ours_name)
            if not ours or "failed" in ours:
                continue
            if kaldifst and "failed" not in kaldifst:
                key = (ours_name, "kaldifst")
                add(key + ("time, whole pipeline",), ours["total_s"] / kaldifst["total_s"])
                if "total_cpu_s" in ours and "total_cpu_s" in kaldifst:
                    add(
                        key + ("CPU time, whole pipeline",),
                        ours["total_cpu_s"] / kaldifst["total_cpu_s"],
                    )
                add(key + ("peak RSS",), ours["peak_kib"] / kaldifst["peak_kib"])
                add(key + ("rise above the RSS after load",), growth(ours) / growth(kaldifst))
            if k2 and "failed" not in k2:
                key = (ours_name, "k2")
                ours_s = ours["compose_s"] + ours["determinize_s"]
                add(key + ("time, compose + determinize",), ours_s / k2["total_s"])
                if "total_cpu_s" in ours and "total_cpu_s" in k2:
                    ours_cpu = ours["compose_cpu_s"] + ours["determinize_cpu_s"]
                    add(
                        key + ("CPU time, compose + determinize",),
                        ours_cpu / k2["total_cpu_s"],
                    )
                add(
                    key + ("peak RSS to determinize",),
                    ours["peak_determinize_kib"] / k2["peak_determinize_kib"],
                )
                add(
                    key + ("rise above the RSS after load, to determinize",),
                    growth(ours, "peak_determinize_kib") / growth(k2, "peak_determinize_kib"),
                )
    lines += [
        "",
        f"| ours / peer, per round ({rounds} rounds) | median (min–max) |",
        "| --- | ---: |",
    ]
    for (ours_name, peer, what), values in sorted(ratios.items()):
        lines.append(f"| {ours_name} / {peer}: {what} | {spread(values)} |")
    return "\n".join(lines)


def driver(args):
    target = target_dir()
    example = os.path.join(target, "release", "examples", "lg_large")
    if not os.path.exists(example):
        sys.exit(f"{example} is missing: cargo build --release -p ragged-fsa --example lg_large")
    directory = os.path.join(target, "lg_large", str(args.words))
    if not all(os.path.exists(os.path.join(directory, f)) for f in ("L.txt", "G.txt")):
        subprocess.run([example, "write", directory, str(args.words)], check=True)
    if args.twin_check:
        from graphs import grammar_text, lexicon_text

        for name, text in (
            ("L.txt", lexicon_text(args.words, NUM_PHONES, SEED)),
            ("G.txt", grammar_text(args.words, SEED)),
        ):
            with open(os.path.join(directory, name)) as f:
                if f.read() != text:
                    sys.exit(f"{directory}/{name} differs from what graphs.py writes")
        print(f"graphs.py writes {directory}/L.txt and G.txt byte for byte", file=sys.stderr)
    script = os.path.abspath(__file__)
    sides = [
        ("ours_t1", [example, "run", directory, "1"]),
        ("ours_t2", [example, "run", directory, "2"]),
        ("k2", [args.k2_python, script, "--side", "k2", directory]),
        ("kaldifst", [args.peers_python, script, "--side", "kaldifst", directory]),
    ]
    results = []
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    log = os.path.join(directory, f"results-{stamp}.jsonl")
    for round_index in range(args.rounds):
        for name, command in sides:
            load_before = uptime()
            result = run_side(name, command, args.timeout, args.max_rss_gib * 1048576)
            result["round"] = round_index
            result["load_before"] = load_before
            result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            results.append(result)
            with open(log, "a") as f:
                f.write(json.dumps(result) + "\n")
            print(json.dumps(result), file=sys.stderr, flush=True)
    print(f"results in {log}", file=sys.stderr)
    print(table(results, args.rounds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", choices=["k2", "kaldifst"], help="one run of one peer")
    parser.add_argument("directory", nargs="?", help="with --side: where L.txt and G.txt are")
    parser.add_argument("--words", type=int, default=200000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per side")
    parser.add_argument("--max-rss-gib", type=float, default=18.0)
    parser.add_argument("--no-twin-check", dest="twin_check", action="store_false")
    parser.add_argument("--report", metavar="FILE", help="print the tables of FILE's results")
    target = target_dir()
    parser.add_argument(
        "--k2-python", default=os.path.join(target, "python", "venv-k2", "bin", "python")
    )
    parser.add_argument(
        "--peers-python", default=os.path.join(target, "peers", "venv", "bin", "python")
    )
    args = parser.parse_args()
    if args.report:
        with open(args.report) as f:
            results = [json.loads(line) for line in f if line.strip()]
        print(table(results, len({r["round"] for r in results})))
    elif args.side:
        if not args.directory:
            parser.error("--side needs the directory of L.txt and G.txt")
        run = run_k2 if args.side == "k2" else run_kaldifst
        print(json.dumps(run(args.directory)), flush=True)
    else:
        driver(args)


if __name__ == "__main__":
    main()
