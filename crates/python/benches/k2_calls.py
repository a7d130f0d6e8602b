"""k2 from Python: `arrays.k2` against k2 1.23.2, and against the Rust code it calls (the
Python layer's overhead), alternated rounds, medians and spread of the ratios.

    python crates/python/benches/k2_calls.py [--no-k2] [ROUNDS] [ctc] [small] [decode]

(all three workloads when none is named; `--no-k2` times only the overhead rows, not k2)

Run it in the Python 3.9 venv that holds k2 1.23.2 and torch 1.12.1, with a release build
of the package installed (a dev build times unoptimised glue). The same workload function
runs with `k2` bound to k2 itself and to `arrays.k2` (the drop-in: the code is word for word
the same), one torch thread and one rayon thread (unless RAYON_NUM_THREADS says otherwise):

- `ctc_loss`: the CTC workload of crates/ragged-fsa/benches/dense.rs and its k2 peer
  (benches/peers/ragged-fsa-dense_k2.py): N = 16 sequences of up to 500 frames, C = 500, seed
  14; `ctc_graph`, `DenseFsaVec`, `ctc_loss(output_beam=10, reduction="sum")`, backward.
  Two rows for ours, both against k2 at `output_beam=10` (k2's default): `ctc_loss` with
  `output_beam=inf` (the exact loss on the trellis, what the Rust row `ctc_loss_t1` times
  against k2) and `ctc_loss_beam10` with k2's beam (the pruned lattice, `ctc_loss_beam10_t1`).
- `small_calls`: `arc_sort`, `connect` and `shortest_path` of one 100-arc FSA, 10,000 times
  (what per-call overhead costs: k2 crosses pybind11 and builds torch tensors each call).
- `decode_hlg`: `intersect_dense_pruned(HLG, dense, 20, 8, 30, 10000)` then `shortest_path`
  and the word ids of each best path, on the HLG that crates/ragged-fsa/benches/decode.rs
  writes under the target folder (run `cargo bench -p ragged-fsa --bench decode -- _t1`
  first; without it this row is skipped).

Every round times each side with the wall clock and the process CPU clock
(`time.process_time`); with one thread a side, the CPU time is the side's own work, steadier
than the wall time when other processes share the cores. Both are printed, each as the
median and range of the per-round ratios. An overhead row's CTC timing is ten calls (about
25 ms of CPU each), so a round is not one scheduler slice; the others time one call.

The Rust rows are criterion's medians of `ragged-fsa/ctc_loss_t1`,
`ragged-fsa/ctc_loss_beam10_t1` and `ragged-fsa/decode_hlg_t1` when `target/criterion` holds
them (run `cargo bench -p ragged-fsa --bench dense --bench decode -- '_t1$'`): `ours / Rust`
is then the overhead of going through Python (from separate runs, on criterion's wall clock:
on a busy machine, read it with the spread). The overhead rows time instead, alternated in
this process, the bare native calls doing the Rust bench's work: for CTC, graphs, dense FSAs,
loss and gradient from numpy arrays (`_native.ctc_graph`, `RawDenseFsaVec`, `ctc_loss`); for
decoding, `_native.intersect_dense_pruned` of the graph and dense FSAs made beforehand (as
`decode_hlg_t1` makes them) and `_native.one_best`. `through arrays.k2 / bare native calls`
is the Python layer's cost (torch in; autograd and backward for CTC; the lattice's Fsa and
shortest_path's for decoding) without another process's noise. Before timing, the script
checks that the sides agree (loss and gradient; best word sequences, also against those the
Rust bench wrote), so a fast wrong answer is not timed.
"""

import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "benches", "peers"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import k2 as peer  # noqa: E402
import arrays.k2 as ours  # noqa: E402
from ctc_inputs import ctc_input  # noqa: E402
from common import target_dir  # noqa: E402

NUM_PHONES = 40


def ctc_workload(k2, output_beam=10.0):
    n, t, c = 16, 500, 500
    logits, lengths, targets = ctc_input(n, t, c, 50, 120, 14)
    log_probs = torch.log_softmax(torch.from_numpy(logits).double(), dim=2).float()
    order = sorted(range(n), key=lambda i: -lengths[i])
    segments = torch.tensor([[i, 0, lengths[i]] for i in order], dtype=torch.int32)
    sorted_targets = [targets[i] for i in order]

    def run():
        # a fresh leaf over the same values (no copy: neither side writes them), so each
        # run's gradient starts from None as in the Rust bench, which copies nothing
        lp = log_probs.detach().requires_grad_(True)
        graphs = k2.ctc_graph(sorted_targets, modified=False)
        dense = k2.DenseFsaVec(lp, segments)
        loss = k2.ctc_loss(graphs, dense, output_beam=output_beam, reduction="sum")
        loss.backward()
        return float(loss), lp.grad

    return run


def ctc_native(output_beam):
    """The Rust work of the Rust bench with nothing of Python around it but one call per
    step: graphs, `RawDenseFsaVec` and the loss with its gradient, on numpy arrays made
    beforehand (no torch, no autograd)."""
    from arrays import _native

    n, t, c = 16, 500, 500
    logits, lengths, targets = ctc_input(n, t, c, 50, 120, 14)
    log_probs = torch.log_softmax(torch.from_numpy(logits).double(), dim=2).float().numpy()
    order = sorted(range(n), key=lambda i: -lengths[i])
    segments = np.array([[i, 0, lengths[i]] for i in order], dtype=np.int32)
    sorted_targets = [targets[i] for i in order]

    def run():
        graphs = _native.ctc_graph(sorted_targets, False)
        dense = _native.RawDenseFsaVec(log_probs, segments, 0)
        return _native.ctc_loss(graphs, dense, float(output_beam))

    return run


def small_fsa_text():
    """A 100-arc acceptor on 21 states: from each state i < 20, five arcs to states i+1..i+5
    (clipped to 20), labels and scores from a fixed sequence; state 20 final."""
    lines = []
    k = 0
    for s in range(20):
        for j in range(5):
            d = min(s + 1 + j, 20)
            label = 1 + (s * 7 + j * 3) % 11
            score = ((s * 31 + j * 17) % 23) / 10.0 - 1.1
            lines.append(f"{s} {d} {label} {score:.1f}")
            k += 1
    lines.append("20 21 -1 0.0")
    lines.append("21")
    assert k == 100
    return "\n".join(lines)


def small_workload(k2, calls=10_000):
    fsa = k2.Fsa.from_str(small_fsa_text())
    fsa_vec = k2.create_fsa_vec([fsa])

    def run():
        best = None
        for _ in range(calls):
            sorted_ = k2.arc_sort(fsa_vec)
            connected = k2.connect(sorted_)
            best = k2.shortest_path(connected, use_double_scores=True)
        return best

    return run


def bench_file(name):
    return os.path.join(target_dir(), "ragged-fsa-bench", name)


def load_hlg(k2):
    """The decode bench's HLG read as the peers read it, arc-sorted; None without it."""
    path = bench_file("hlg_5000.txt")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        hlg = k2.Fsa.from_str(f.read(), acceptor=True, openfst=True,
                              ragged_label_names=["aux_labels"])
    return k2.arc_sort(hlg)


def decode_input():
    """The decode bench's batch: log-softmaxed CTC input with C = 41, segments sorted by
    decreasing length (k2 needs them so), and that order (utterance of each segment)."""
    n, t, c = 16, 500, NUM_PHONES + 1
    logits, lengths, _ = ctc_input(n, t, c, 50, 120, 14)
    log_probs = torch.log_softmax(torch.from_numpy(logits).double(), dim=2).float()
    order = sorted(range(n), key=lambda i: -lengths[i])
    segments = torch.tensor([[i, 0, lengths[i]] for i in order], dtype=torch.int32)
    return log_probs, segments, order


def decode_workload(k2, hlg):
    log_probs, segments, _ = decode_input()
    dense = k2.DenseFsaVec(log_probs, segments)

    def run():
        lattice = k2.intersect_dense_pruned(hlg, dense, 20.0, 8.0, 30, 10000)
        best = k2.shortest_path(lattice, use_double_scores=True)
        return [[w for w in best[i].aux_labels.values.tolist() if w > 0]
                for i in range(best.shape[0])]

    return run


def decode_native(hlg):
    """What `decode_hlg_t1` times, with nothing of Python around it but one call per step:
    `intersect_dense_pruned` of the graph (an FsaVec of one, made beforehand as the Rust
    bench makes it) with the dense FSAs (made beforehand from numpy arrays), then
    `one_best` (best path and word ids). The segments are in decode_input's order, as
    through arrays.k2; the Rust bench takes them unsorted (the same work, in another order).
    """
    from arrays import _native

    graphs = _native.create_fsa_vec([hlg._raw])
    log_probs, segments, _ = decode_input()
    dense = _native.RawDenseFsaVec(log_probs.numpy(), segments.numpy(), 0)

    def run():
        lattice, _, _ = _native.intersect_dense_pruned(graphs, dense, 20.0, 8.0, 30, 10000)
        return [list(words) for _, words, _ in _native.one_best(lattice)]

    return run


def rust_best_words(order):
    """The Rust bench's best word sequences (written beside the HLG), in `order`."""
    path = bench_file("best_5000.txt")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        rows = [[int(w) for w in line.split()] for line in f.read().splitlines()]
    return [rows[i] for i in order] if len(rows) == len(order) else None


def rust_seconds(workload):
    """criterion's median for `ragged-fsa/<workload>`, if a bench run left it."""
    path = os.path.join(target_dir(), "criterion", "ragged-fsa", workload, "new",
                        "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"] / 1e9
    except (OSError, KeyError, ValueError):
        return None


def timed(fn, repeat=1):
    """(wall seconds, process CPU seconds) of `repeat` calls, per call. On one thread a
    side, the CPU time is what the side itself spent: steadier than the wall time when
    other processes share the cores."""
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - w0) / repeat, (time.process_time() - c0) / repeat


def alternate(a_run, b_run, rounds, repeat=1):
    """Each run once to warm up (first allocations), then `rounds` alternated timings,
    A B A B, of `repeat` calls each (short calls are timed in batches, so a round is not
    one scheduler slice): the (wall, CPU) times of each side per call, per round."""
    a_run()
    b_run()
    a_t, b_t = [], []
    for _ in range(rounds):
        a_t.append(timed(a_run, repeat))
        b_t.append(timed(b_run, repeat))
    return a_t, b_t


def ratios(a_t, b_t, clock):
    """The sorted per-round ratios a / b on one clock (0: wall, 1: CPU)."""
    return sorted(a[clock] / b[clock] for a, b in zip(a_t, b_t))


def ms(times, clock):
    return statistics.median(t[clock] for t in times) * 1e3


def spread(ratios):
    return f"{statistics.median(ratios):.3f} ({ratios[0]:.3f}-{ratios[-1]:.3f})"


def compare(name, ours_run, peer_run, rounds, rust=None):
    ours_t, peer_t = alternate(ours_run, peer_run, rounds)
    for clock, label in ((0, "wall"), (1, "cpu")):
        line = (f"{name:15s} {label:4s} ours {ms(ours_t, clock):9.2f} ms   "
                f"k2 {ms(peer_t, clock):9.2f} ms   ours/k2 {spread(ratios(ours_t, peer_t, clock))}")
        if rust is not None:
            # criterion times wall clock, on one thread
            line += (f"   Rust {rust * 1e3:8.2f} ms   ours/Rust "
                     f"{spread(sorted(o[clock] / rust for o in ours_t))}")
        print(line, flush=True)


def compare_overhead(name, full_run, native_run, rounds, repeat=1):
    """The package's k2 calls (torch in; for CTC autograd and backward) against the bare
    native calls of the same work, alternated in this process: the cost of the Python
    layer, on both clocks."""
    full_t, native_t = alternate(full_run, native_run, rounds, repeat)
    for clock, label in ((0, "wall"), (1, "cpu")):
        print(f"{name:15s} {label:4s} through arrays.k2 {ms(full_t, clock):9.2f} ms   bare "
              f"native calls {ms(native_t, clock):9.2f} ms   ratio "
              f"{spread(ratios(full_t, native_t, clock))}", flush=True)


def main():
    args = sys.argv[1:]
    with_k2 = "--no-k2" not in args
    args = [a for a in args if a != "--no-k2"]
    rounds = int(args[0]) if args else 5
    chosen = set(args[1:]) or {"ctc", "small", "decode"}
    unknown = chosen - {"ctc", "small", "decode"}
    if unknown:
        sys.exit(f"k2_calls.py: unknown workload(s) {sorted(unknown)}: ctc, small, decode")
    torch.set_num_threads(1)
    # read by rayon when its pool starts, at the first parallel call (after this line)
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    print(f"k2 {peer.__version__ if hasattr(peer, '__version__') else '1.23.2'}, "
          f"torch {torch.__version__}, {rounds} alternated rounds, one thread, "
          f"rayon threads {os.environ['RAYON_NUM_THREADS']}, load {os.getloadavg()[0]:.1f}",
          flush=True)

    if "ctc" in chosen:
        peer_ctc = ctc_workload(peer)
        l2, g2 = peer_ctc()
        for name, beam in (("ctc_loss", float("inf")), ("ctc_loss_beam10", 10.0)):
            ours_ctc, native_ctc = ctc_workload(ours, beam), ctc_native(beam)
            l1, g1 = ours_ctc()
            native_loss, native_grad = native_ctc()
            assert abs(l1 - float(np.float32(native_loss.sum()))) <= 1e-6 * abs(l1), name
            assert np.array_equal(g1.numpy(), native_grad), name
            if beam == 10.0:
                assert abs(l1 - l2) <= 1e-6 * abs(l2), (name, l1, l2)
                assert np.allclose(g1.numpy(), g2.numpy(), atol=1e-5), name
            else:
                # the exact loss also sums the paths k2's beam drops: its total is close (here
                # 0.02 % apart), its gradient a different function (frames near the pruning
                # differ by up to 0.8), as torch's exact ctc_loss differs from k2's
                assert abs(l1 - l2) <= 1e-3 * abs(l2), (name, l1, l2)
            if with_k2:
                compare(name, ours_ctc, peer_ctc, rounds, rust_seconds(f"{name}_t1"))
            # about 25 ms of CPU a call: ten calls a timing
            compare_overhead(name, ours_ctc, native_ctc, rounds, 10)

    if "small" in chosen and with_k2:
        ours_small, peer_small = small_workload(ours), small_workload(peer)
        one_ours, one_peer = small_workload(ours, 1)(), small_workload(peer, 1)()
        assert one_ours.labels.tolist() == one_peer.labels.tolist(), "best paths differ"
        compare("small_calls", ours_small, peer_small, rounds)
    if "decode" not in chosen:
        return

    hlg = load_hlg(ours)
    if hlg is None:
        print("decode_hlg      skipped: run `cargo bench -p ragged-fsa --bench decode` first")
        return
    ours_dec, native_dec = decode_workload(ours, hlg), decode_native(hlg)
    best = ours_dec()
    assert best == native_dec(), "best word sequences: arrays.k2 and the native calls differ"
    rust_best = rust_best_words(decode_input()[2])
    if rust_best is not None:
        same = sum(a == b for a, b in zip(best, rust_best))
        print(f"decode_hlg      best word sequences equal to the Rust bench's for {same} of 16 "
              "utterances", flush=True)
    if with_k2:
        peer_dec = decode_workload(peer, load_hlg(peer))
        same = sum(a == b for a, b in zip(best, peer_dec()))
        print(f"decode_hlg      best word sequences equal to k2's for {same} of 16 utterances",
              flush=True)
        compare("decode_hlg", ours_dec, peer_dec, rounds, rust_seconds("decode_hlg_t1"))
    compare_overhead("decode_hlg", ours_dec, native_dec, rounds)


if __name__ == "__main__":
    main()
