#!/usr/bin/env python3
"""Generates `mmi_k2.txt`, the LF-MMI golden file of ragged-fsa's tests, with k2 1.23.2.

    python -m venv venv && venv/bin/pip install torch==1.12.1 k2==1.23.2 "numpy<2"
    venv/bin/python crates/ragged-fsa/tests/golden/mmi_generate_k2.py

The loss as icefall's `LFMMILoss(den_scale, beam_size)` computes it by default
(`_compute_mmi_loss_exact_non_optimized`): `k2.intersect_dense(num_graphs, dense,
output_beam=beam)` and `k2.intersect_dense(den_graphs, dense, output_beam=beam)` (the one
denominator graph repeated per segment), log-semiring totals in double,
`loss = -(num_tot - den_scale * den_tot)`, and its gradient with respect to the
log-probabilities (k2's autograd). Numerator graphs: `k2.ctc_graph(targets)`; denominator: a
seeded phone bigram (k2 text). Segments are sorted by decreasing duration for k2 and the
answers put back in the order given.

Each case (`=== <name>`) holds `key: values` lines: dims (N T C), log_probs (row-major,
float32 values), segments (3 ints each, the order the Rust side uses), `target <i>`,
den_graph (k2 text, lines joined by ` ; `), den_scale, and per output beam `b` in BEAMS:
`num_tot_<b>`, `den_tot_<b>`, `loss_<b>` (per segment) and `grad_<b>` (d(sum of loss) /
d(log_probs), row-major). Seeded, so re-running reproduces the file.
"""

import os
import random

import k2
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
BEAMS = (8.0, 2.0)


def floats(xs):
    return " ".join(repr(float(x)) for x in xs)


def ints(xs):
    return " ".join(str(int(x)) for x in xs)


def bigram_text(rng, c):
    """A phone bigram over symbols 0..c-1: state s (after symbol s-1; 0 is the start) has
    an arc to state k+1 for every symbol k, then the final arc from every state."""
    lines = []
    for s in range(c + 1):
        for k in range(c):
            lines.append(f"{s} {k + 1} {k} {round(rng.uniform(-2.0, 0.0), 3)}")
        lines.append(f"{s} {c + 1} -1 0")
    lines.append(f"{c + 1}")
    return lines


def case(name, rng, n, t, c, segments, targets, den_scale):
    logits = torch.tensor([[[rng.gauss(0.0, 2.0) for _ in range(c)] for _ in range(t)]
                           for _ in range(n)], dtype=torch.float32)
    log_probs = torch.log_softmax(logits, dim=2).contiguous()
    den_lines = bigram_text(rng, c)
    den = k2.Fsa.from_str("\n".join(den_lines))
    order = sorted(range(len(segments)), key=lambda i: -segments[i][2])
    sorted_segs = torch.tensor([segments[i] for i in order], dtype=torch.int32)
    num_graphs = k2.ctc_graph([targets[i] for i in order], modified=False)
    den_graphs = k2.create_fsa_vec([den] * len(segments))
    out = [f"=== {name}", f"dims: {n} {t} {c}",
           "log_probs: " + floats(log_probs.reshape(-1).tolist()),
           "segments: " + ints(x for s in segments for x in s)]
    out += [f"target {i}: " + ints(tgt) for i, tgt in enumerate(targets)]
    out.append("den_graph: " + " ; ".join(den_lines))
    out.append(f"den_scale: {den_scale!r}")

    def unsort(values):
        res = [0.0] * len(values)
        for pos, i in enumerate(order):
            res[i] = values[pos]
        return res

    for beam in BEAMS:
        lp = log_probs.clone().requires_grad_(True)
        dense = k2.DenseFsaVec(lp, sorted_segs)
        num_lats = k2.intersect_dense(num_graphs, dense, output_beam=beam)
        den_lats = k2.intersect_dense(den_graphs, dense, output_beam=beam)
        num_tot = num_lats.get_tot_scores(log_semiring=True, use_double_scores=True)
        den_tot = den_lats.get_tot_scores(log_semiring=True, use_double_scores=True)
        loss = -(num_tot - den_scale * den_tot)
        loss.sum().backward()
        out.append(f"num_tot_{beam:g}: " + floats(unsort(num_tot.tolist())))
        out.append(f"den_tot_{beam:g}: " + floats(unsort(den_tot.tolist())))
        out.append(f"loss_{beam:g}: " + floats(unsort(loss.tolist())))
        out.append(f"grad_{beam:g}: " + floats(lp.grad.reshape(-1).tolist()))
    return "\n".join(out) + "\n"


def main():
    rng = random.Random(20261202)
    cases = []
    for k in range(3):
        n, c = rng.randrange(2, 5), rng.randrange(3, 7)
        t = rng.randrange(10, 25)
        segments, targets = [], []
        for i in range(n):
            frames = rng.randrange(t // 2, t + 1)
            start = rng.randrange(0, t - frames + 1)
            segments.append([i, start, frames])
            targets.append([rng.randrange(1, c) for _ in range(rng.randrange(1, frames // 3 + 2))])
        cases.append(case(f"random_{k}", rng, n, t, c, segments, targets, 0.5 + 0.25 * k))
    with open(os.path.join(HERE, "mmi_k2.txt"), "w") as f:
        f.write("".join(cases))


if __name__ == "__main__":
    main()
