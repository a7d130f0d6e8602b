"""k2 from Python: `arrays.k2` against k2 1.23.2, and against the Rust benches' own times
(the Python call overhead), alternated rounds, medians and spread of the ratios.

    python crates/python/benches/k2_calls.py [ROUNDS] [ctc] [small] [decode]

(all three workloads when none is named)

Run it in the Python 3.9 venv that holds k2 1.23.2 and torch 1.12.1, with a release build
of the package installed (a dev build times unoptimised glue). The same workload function
runs with `k2` bound to k2 itself and to `arrays.k2` (the drop-in: the code is word for word
the same), one torch thread on both sides:

- `ctc_loss`: the CTC workload of crates/ragged-fsa/benches/dense.rs and its k2 peer
  (benches/peers/ragged-fsa-dense_k2.py): N = 16 sequences of up to 500 frames, C = 500, seed
  14; `ctc_graph`, `DenseFsaVec`, `ctc_loss(output_beam=10, reduction="sum")`, backward.
  Two rows for ours, both against k2 at `output_beam=10` (k2's default): `ctc_loss` with
  `output_beam=inf` (the exact loss on the trellis, what the Rust row `ctc_loss_t1` times
  against k2) and `ctc_loss_beam10` with k2's beam (the pruned lattice, `ctc_loss_beam10_t1`).
- `small_calls`: `arc_sort`, `connect` and `shortest_path` of one 100-arc FSA, 10,000 times
  (what per-call overhead costs: k2 crosses pybind11 and builds torch tensors each call).
- `decode_hlg`: `intersect_dense_pruned(HLG, dense, 20, 8, 30, 10000)` then `shortest_path`,
  on the HLG that crates/ragged-fsa/benches/decode.rs writes under the target folder (run
  `cargo bench -p ragged-fsa --bench decode` first; without it this row is skipped).

The Rust rows are criterion's medians of `ragged-fsa/ctc_loss_t1`,
`ragged-fsa/ctc_loss_beam10_t1` and `ragged-fsa/decode_hlg_t1` when `target/criterion` holds
them (run `cargo bench -p ragged-fsa --bench dense --bench decode -- '_t1$'`): `ours / Rust`
is then the overhead of going through Python (from separate runs: on a busy machine, read it
with the spread). For CTC the script also times, alternated in its own process, the bare
native call doing the Rust bench's work (graphs, dense FSAs, loss and gradient from numpy
arrays): `through arrays.k2 / bare native call` is the Python layer's cost (torch in,
autograd, backward) without another process's noise. Besides each table the script checks that both sides agree (loss and
gradient, best paths), so a fast wrong answer is not timed.
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


def decode_workload(k2):
    path = os.path.join(target_dir(), "ragged-fsa-bench", "hlg_5000.txt")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        hlg = k2.Fsa.from_str(f.read(), acceptor=True, openfst=True,
                              ragged_label_names=["aux_labels"])
    hlg = k2.arc_sort(hlg)
    n, t, c = 16, 500, NUM_PHONES + 1
    logits, lengths, _ = ctc_input(n, t, c, 50, 120, 14)
    log_probs = torch.log_softmax(torch.from_numpy(logits).double(), dim=2).float()
    order = sorted(range(n), key=lambda i: -lengths[i])
    segments = torch.tensor([[i, 0, lengths[i]] for i in order], dtype=torch.int32)
    dense = k2.DenseFsaVec(log_probs, segments)

    def run():
        lattice = k2.intersect_dense_pruned(hlg, dense, 20.0, 8.0, 30, 10000)
        best = k2.shortest_path(lattice, use_double_scores=True)
        return [[w for w in best[i].aux_labels.values.tolist() if w > 0]
                for i in range(best.shape[0])]

    return run


def rust_seconds(workload):
    """criterion's median for `ragged-fsa/<workload>`, if a bench run left it."""
    path = os.path.join(target_dir(), "criterion", "ragged-fsa", workload, "new",
                        "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"] / 1e9
    except (OSError, KeyError, ValueError):
        return None


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def alternate(a_run, b_run, rounds):
    """Each run once to warm up (first allocations), then `rounds` alternated timings:
    their medians and the sorted per-round ratios a / b."""
    a_run()
    b_run()
    a_t, b_t = [], []
    for _ in range(rounds):
        a_t.append(timed(a_run))
        b_t.append(timed(b_run))
    ratios = sorted(a / b for a, b in zip(a_t, b_t))
    return a_t, statistics.median(b_t), ratios


def spread(ratios):
    return f"{statistics.median(ratios):.3f} ({ratios[0]:.3f}-{ratios[-1]:.3f})"


def compare(name, ours_run, peer_run, rounds, rust=None):
    ours_t, peer, ratios = alternate(ours_run, peer_run, rounds)
    line = (f"{name:12s} ours {statistics.median(ours_t) * 1e3:9.2f} ms   "
            f"k2 {peer * 1e3:9.2f} ms   ours/k2 {spread(ratios)}")
    if rust is not None:
        line += (f"   Rust {rust * 1e3:8.2f} ms   ours/Rust "
                 f"{spread(sorted(o / rust for o in ours_t))}")
    print(line, flush=True)


def compare_overhead(name, full_run, native_run, rounds):
    """The package's k2 call (torch in, autograd, backward) against the bare native call of
    the same work, alternated in this process: the cost of the Python layer."""
    full_t, native, ratios = alternate(full_run, native_run, rounds)
    print(f"{name:12s} through arrays.k2 {statistics.median(full_t) * 1e3:9.2f} ms   bare "
          f"native call {native * 1e3:9.2f} ms   ratio {spread(ratios)}", flush=True)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    chosen = set(sys.argv[2:]) or {"ctc", "small", "decode"}
    unknown = chosen - {"ctc", "small", "decode"}
    if unknown:
        sys.exit(f"k2_calls.py: unknown workload(s) {sorted(unknown)}: ctc, small, decode")
    torch.set_num_threads(1)
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    print(f"k2 {peer.__version__ if hasattr(peer, '__version__') else '1.23.2'}, "
          f"torch {torch.__version__}, {rounds} alternated rounds, one thread",
          flush=True)

    if "ctc" in chosen:
        peer_ctc = ctc_workload(peer)
        l2, g2 = peer_ctc()
        for name, beam in (("ctc_loss", float("inf")), ("ctc_loss_beam10", 10.0)):
            ours_ctc = ctc_workload(ours, beam)
            l1, g1 = ours_ctc()
            if beam == 10.0:
                assert abs(l1 - l2) <= 1e-6 * abs(l2), (name, l1, l2)
                assert np.allclose(g1.numpy(), g2.numpy(), atol=1e-5), name
            else:
                # the exact loss also sums the paths k2's beam drops: its total is close (here
                # 0.02 % apart), its gradient a different function (frames near the pruning
                # differ by up to 0.8), as torch's exact ctc_loss differs from k2's
                assert abs(l1 - l2) <= 1e-3 * abs(l2), (name, l1, l2)
            compare(name, ours_ctc, peer_ctc, rounds, rust_seconds(f"{name}_t1"))
            compare_overhead(name, ours_ctc, ctc_native(beam), rounds)

    if "small" in chosen:
        ours_small, peer_small = small_workload(ours), small_workload(peer)
        one_ours, one_peer = small_workload(ours, 1)(), small_workload(peer, 1)()
        assert one_ours.labels.tolist() == one_peer.labels.tolist(), "best paths differ"
        compare("small_calls", ours_small, peer_small, rounds)
    if "decode" not in chosen:
        return

    ours_dec, peer_dec = decode_workload(ours), decode_workload(peer)
    if ours_dec is None:
        print("decode_hlg   skipped: run `cargo bench -p ragged-fsa --bench decode` first")
        return
    same = sum(a == b for a, b in zip(ours_dec(), peer_dec()))
    print(f"decode_hlg   best word sequences equal for {same} of 16 utterances")
    compare("decode_hlg", ours_dec, peer_dec, rounds, rust_seconds("decode_hlg_t1"))


if __name__ == "__main__":
    main()
