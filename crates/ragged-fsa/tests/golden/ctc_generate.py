#!/usr/bin/env python3
"""Generates the CTC golden files for ragged-fsa's tests with torch 1.12 and k2 1.23.2.

    python -m venv venv && venv/bin/pip install torch==1.12.1 k2==1.23.2
    venv/bin/python crates/ragged-fsa/tests/golden/ctc_generate.py

Writes two files of cases separated by lines `=== <name>`. Every case holds whitespace
separated `key: values` lines:
  dims: N T C
  log_probs: N*T*C floats (torch's log_softmax of the seeded logits, row-major, float32)
  segments: 3 ints per supervision segment (sequence, start frame, frames), in the order
            the Rust side uses them (not sorted)
  target <i>: the tokens of segment i
and the answers:
  ctc_torch.txt  loss: torch.nn.functional.ctc_loss per segment (reduction="none",
                       `inf` for an infeasible one); grad_logits: d(sum loss)/d(logits) through
                       log_softmax, with zero_infinity=True so infeasible segments add nothing
  ctc_k2.txt     for k2.ctc_graph(targets) against k2.DenseFsaVec (segments sorted by
                 decreasing duration, as k2 requires, the answers put back in our order):
                   tot_log_<beam> / tot_tropical_<beam>: intersect_dense total scores
                   k2_loss: k2.ctc_loss(output_beam=10, reduction="none")
                   k2_grad: d(sum of that loss)/d(log_probs) (k2's autograd)
  ctc_k2_pruned.txt  a seeded cyclic graph (k2 text, lines joined by ` ; `) shared by all
                 segments, k2.intersect_dense_pruned at beams (search 4, output 3, active
                 states 1..3) and (20, 8, 30..10000): best path score and labels
                 (k2.shortest_path) and the lattice's log total
Inputs are seeded, so re-running reproduces the files.
"""

import os
import random

import k2
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def floats(xs):
    return " ".join(repr(float(x)) for x in xs)


def ints(xs):
    return " ".join(str(int(x)) for x in xs)


def make_logits(rng, n, t, c):
    return torch.tensor([[[rng.gauss(0.0, 2.0) for _ in range(c)] for _ in range(t)]
                         for _ in range(n)], dtype=torch.float32)


def torch_case(name, rng, n, t, c, specs):
    """specs: per sequence (frames, target); segment i is sequence i from frame 0."""
    logits = make_logits(rng, n, t, c).requires_grad_(True)
    log_probs = torch.log_softmax(logits, dim=2)
    lengths = torch.tensor([s[0] for s in specs], dtype=torch.long)
    targets = [s[1] for s in specs]
    flat = torch.tensor([x for tgt in targets for x in tgt], dtype=torch.long)
    tlens = torch.tensor([len(x) for x in targets], dtype=torch.long)
    loss = torch.nn.functional.ctc_loss(log_probs.transpose(0, 1), flat, lengths, tlens,
                                        blank=0, reduction="none", zero_infinity=False)
    loss_z = torch.nn.functional.ctc_loss(log_probs.transpose(0, 1), flat, lengths, tlens,
                                          blank=0, reduction="sum", zero_infinity=True)
    loss_z.backward()
    out = [f"=== {name}", f"dims: {n} {t} {c}",
           "log_probs: " + floats(log_probs.detach().reshape(-1).tolist()),
           "segments: " + ints(x for i, s in enumerate(specs) for x in (i, 0, s[0]))]
    out += [f"target {i}: " + ints(tgt) for i, tgt in enumerate(targets)]
    out.append("loss: " + floats(loss.tolist()))
    out.append("grad_logits: " + floats(logits.grad.reshape(-1).tolist()))
    return "\n".join(out) + "\n"


def k2_case(name, rng, n, t, c, segments, targets):
    log_probs = torch.log_softmax(make_logits(rng, n, t, c), dim=2).contiguous()
    order = sorted(range(len(segments)), key=lambda i: -segments[i][2])
    sorted_segs = torch.tensor([segments[i] for i in order], dtype=torch.int32)
    graphs = k2.ctc_graph([targets[i] for i in order], modified=False)
    out = [f"=== {name}", f"dims: {n} {t} {c}",
           "log_probs: " + floats(log_probs.reshape(-1).tolist()),
           "segments: " + ints(x for s in segments for x in s)]
    out += [f"target {i}: " + ints(tgt) for i, tgt in enumerate(targets)]

    def unsort(values):
        res = [0.0] * len(values)
        for pos, i in enumerate(order):
            res[i] = values[pos]
        return res

    for beam in (10.0, 3.0):
        dense = k2.DenseFsaVec(log_probs, sorted_segs)
        lattice = k2.intersect_dense(graphs, dense, output_beam=beam)
        log_tot = lattice.get_tot_scores(log_semiring=True, use_double_scores=True)
        trop_tot = lattice.get_tot_scores(log_semiring=False, use_double_scores=True)
        out.append(f"tot_log_{beam:g}: " + floats(unsort(log_tot.tolist())))
        out.append(f"tot_tropical_{beam:g}: " + floats(unsort(trop_tot.tolist())))
    lp = log_probs.clone().requires_grad_(True)
    dense = k2.DenseFsaVec(lp, sorted_segs)
    loss = k2.ctc_loss(graphs, dense, output_beam=10.0, reduction="none")
    loss.sum().backward()
    out.append("k2_loss: " + floats(unsort(loss.tolist())))
    out.append("k2_grad: " + floats(lp.grad.reshape(-1).tolist()))
    return "\n".join(out) + "\n"


def rand_target(rng, length, c):
    return [rng.randrange(1, c) for _ in range(length)]


def main():
    rng = random.Random(20261201)
    torch_cases = []
    # random batches, unsorted lengths, repeated labels likely with few symbols
    for k in range(6):
        n, c = rng.randrange(2, 6), rng.randrange(3, 9)
        t = rng.randrange(8, 30)
        specs = []
        for _ in range(n):
            frames = rng.randrange(1, t + 1)
            specs.append((frames, rand_target(rng, rng.randrange(0, frames // 2 + 1), c)))
        torch_cases.append(torch_case(f"random_{k}", rng, n, t, c, specs))
    # blanks only (empty targets), repeats at the shortest feasible length, infeasible
    torch_cases.append(torch_case("blanks_only", rng, 3, 7, 4,
                                  [(7, []), (1, []), (4, [])]))
    torch_cases.append(torch_case("repeats_shortest", rng, 4, 9, 5,
                                  [(5, [2, 2, 2]), (9, [1, 1, 3, 3, 3]), (3, [4, 4]),
                                   (4, [1, 2, 3, 4])]))
    torch_cases.append(torch_case("infeasible", rng, 3, 6, 4,
                                  [(4, [2, 2, 2]), (6, [1, 2, 1]), (2, [3, 3])]))
    with open(os.path.join(HERE, "ctc_torch.txt"), "w") as f:
        f.write("".join(torch_cases))

    k2_cases = []
    for k in range(6):
        n, c = rng.randrange(2, 5), rng.randrange(3, 9)
        t = rng.randrange(10, 40)
        segments, targets = [], []
        for _ in range(rng.randrange(1, 6)):
            seq = rng.randrange(0, n)
            start = rng.randrange(0, t // 2)
            frames = rng.randrange(1, t - start + 1)
            segments.append([seq, start, frames])
            targets.append(rand_target(rng, rng.randrange(0, (frames + 1) // 2), c))
        k2_cases.append(k2_case(f"k2_random_{k}", rng, n, t, c, segments, targets))
    with open(os.path.join(HERE, "ctc_k2.txt"), "w") as f:
        f.write("".join(k2_cases))


def random_graph_text(rng, num_states, c):
    """A cyclic graph in k2 text: arcs sorted as k2.arc_sort sorts them (label, then dest)."""
    final = num_states - 1
    lines = []
    for s in range(final):
        arcs = []
        for _ in range(rng.randrange(2, 6)):
            arcs.append((rng.randrange(0, final), rng.randrange(0, c), round(rng.uniform(-2, 0), 2)))
        if s >= final // 2 or rng.random() < 0.3:
            arcs.append((final, -1, round(rng.uniform(-1, 0), 2)))
        arcs.sort(key=lambda a: (a[1], a[0]))
        lines += [f"{s} {d} {lab} {w}" for d, lab, w in arcs]
    lines.append(str(final))
    return "\n".join(lines)


def pruned_cases():
    rng = random.Random(7)
    out = []
    for k in range(8):
        n, c, t = rng.randrange(1, 4), rng.randrange(3, 7), rng.randrange(8, 25)
        graph_text = random_graph_text(rng, rng.randrange(5, 12), c)
        graph = k2.arc_sort(k2.Fsa.from_str(graph_text))
        log_probs = torch.log_softmax(make_logits(rng, n, t, c), dim=2).contiguous()
        segments = [[i, 0, rng.randrange(1, t + 1)] for i in range(n)]
        dense = k2.DenseFsaVec(log_probs, torch.tensor(segments, dtype=torch.int32))
        graphs = k2.create_fsa_vec([graph])
        lines = [f"=== pruned_{k}", f"dims: {n} {t} {c}",
                 "log_probs: " + floats(log_probs.reshape(-1).tolist()),
                 "segments: " + ints(x for s in segments for x in s),
                 "graph: " + graph_text.replace("\n", " ; ")]
        for search_beam, output_beam, min_a, max_a in ((4.0, 3.0, 1, 3), (20.0, 8.0, 30, 10000)):
            lattice = k2.intersect_dense_pruned(graphs, dense, search_beam=search_beam,
                                                output_beam=output_beam,
                                                min_active_states=min_a,
                                                max_active_states=max_a)
            best = k2.shortest_path(lattice, use_double_scores=True)
            tag = f"{search_beam:g}_{output_beam:g}_{min_a}_{max_a}"
            lines.append(f"best_score_{tag}: " + floats(
                best.get_tot_scores(log_semiring=False, use_double_scores=True).tolist()))
            lines.append(f"tot_log_{tag}: " + floats(
                lattice.get_tot_scores(log_semiring=True, use_double_scores=True).tolist()))
            for i in range(n):
                labels = [x for x in best[i].labels.tolist() if x != -1]
                lines.append(f"best_labels_{tag} {i}: " + ints(labels))
        out.append("\n".join(lines) + "\n")
    with open(os.path.join(HERE, "ctc_k2_pruned.txt"), "w") as f:
        f.write("".join(out))


if __name__ == "__main__":
    main()
    pruned_cases()
