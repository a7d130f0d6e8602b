#!/usr/bin/env python3
"""Generates the k2 golden file of ragged-fsa's algebra tests with k2 1.23.2 (CPU):
seeded random FSAs in k2 text and what k2 computes from them.

    python -m venv venv && venv/bin/pip install torch==1.12.0 k2==1.23.2
    venv/bin/python crates/ragged-fsa/tests/golden/generate_algebra_k2.py

The output, algebra_k2.txt, is a list of cases `=== <op> <i>`; a case is its inputs in k2
text (acceptors `src dest label score`, transducers `src dest label aux score`, inputs
arc-sorted, as k2 needs), each followed by `---`, then k2's answer:
  intersect_eps, intersect_plain
                 intersect(a, b, treat_epsilons_specially=True / False): the result in
                 k2 text, then lines `a_arc_map ...` and `b_arc_map ...`
  compose        compose(a, b) (a transducer, b an acceptor): the result in k2 text
                 with its aux labels
  rmeps          remove_epsilon(a): `total <tropical total score>`
  det_none, det_tropical, det_log
                 determinize(a) with that weight pushing: `total <tropical total>`
Re-running reproduces the file byte for byte.
"""

import os
import random

import k2
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def score(rng):
    return round(rng.uniform(-2.0, 2.0), 2)


def random_fsa(rng, epsilons, transducer=False, num_labels=4):
    """Top-sorted acyclic, every state reachable from 0, the last state final."""
    n = rng.randint(2, 7)
    arcs = []
    for d in range(1, n - 1):
        arcs.append((rng.randrange(d), d))
    for _ in range(rng.randint(1, 2 * n)):
        s = rng.randrange(n - 1)
        arcs.append((s, rng.randint(s + 1, n - 1)))
    if not any(d == n - 1 for _, d in arcs):
        arcs.append((rng.randrange(n - 1), n - 1))
    low = 0 if epsilons else 1
    lines = []
    for (s, d) in sorted(arcs):
        label = -1 if d == n - 1 else rng.randint(low, num_labels)
        if transducer:
            aux = -1 if d == n - 1 else rng.randint(0, num_labels)
            lines.append(f"{s} {d} {label} {aux} {score(rng)}")
        else:
            lines.append(f"{s} {d} {label} {score(rng)}")
    lines.append(f"{n - 1}")
    if len(lines) < 3:
        # k2 under torch 1.12 rejects the strided one-element score tensor of a one-arc FSA
        return random_fsa(rng, epsilons, transducer, num_labels)
    text = "\n".join(lines) + "\n"
    fsa = k2.arc_sort(k2.Fsa.from_str(text, acceptor=not transducer))
    return fsa


def text_of(fsa):
    """k2 text of an FSA (with aux labels when it has them), scores as float32 values."""
    lines = []
    arcs = fsa.arcs.values()[:, :3].tolist()
    scores = fsa.scores.tolist()
    aux = fsa.aux_labels.tolist() if hasattr(fsa, "aux_labels") else None
    for i, (s, d, label) in enumerate(arcs):
        fields = [str(s), str(d), str(label)]
        if aux is not None:
            fields.append(str(aux[i]))
        fields.append(repr(float(torch.tensor(scores[i], dtype=torch.float32))))
        lines.append(" ".join(fields))
    if fsa.shape[0] > 0:
        lines.append(str(fsa.shape[0] - 1))
    return "\n".join(lines) + "\n"


def total(fsa):
    if fsa.num_arcs <= 1:
        # k2 under torch 1.12 rejects the strided one-element score tensor of a one-arc FSA
        arcs = fsa.arcs.values().tolist()
        ok = len(arcs) == 1 and arcs[0][0] == 0 and arcs[0][1] == fsa.shape[0] - 1
        return f"{float(fsa.scores[0]):.4f}" if ok else "-inf"
    fsa = k2.connect(fsa)
    if fsa.shape[0] == 0:
        return "-inf"
    fsa = k2.top_sort(fsa)
    vec = k2.create_fsa_vec([fsa])
    t = vec.get_tot_scores(use_double_scores=True, log_semiring=False)
    return f"{float(t[0]):.4f}"


def main():
    rng = random.Random(20261202)
    torch.manual_seed(0)
    out = []
    for i in range(40):
        eps = i % 2 == 0
        a, b = random_fsa(rng, True), random_fsa(rng, True)
        c, am, bm = k2.intersect(a, b, treat_epsilons_specially=eps, ret_arc_maps=True)
        name = "intersect_eps" if eps else "intersect_plain"
        out.append(
            f"=== {name} {i}\n{text_of(a)}---\n{text_of(b)}---\n{text_of(c)}"
            f"a_arc_map {' '.join(map(str, am.tolist()))}\n"
            f"b_arc_map {' '.join(map(str, bm.tolist()))}\n"
        )
    for i in range(30):
        a = random_fsa(rng, True, transducer=True)
        b = random_fsa(rng, True)
        c = k2.compose(a, b, treat_epsilons_specially=True)
        out.append(f"=== compose {i}\n{text_of(a)}---\n{text_of(b)}---\n{text_of(c)}")
    for i in range(30):
        a = random_fsa(rng, True)
        c = k2.remove_epsilon(a)
        out.append(f"=== rmeps {i}\n{text_of(a)}---\ntotal {total(c)}\n")
    kinds = [
        ("det_none", k2.DeterminizeWeightPushingType.kNoWeightPushing),
        ("det_tropical", k2.DeterminizeWeightPushingType.kTropicalWeightPushing),
        ("det_log", k2.DeterminizeWeightPushingType.kLogWeightPushing),
    ]
    for i in range(45):
        name, kind = kinds[i % 3]
        a = k2.connect(random_fsa(rng, False, num_labels=3))
        if a.shape[0] == 0:
            continue
        c = k2.determinize(a, kind)
        out.append(f"=== {name} {i}\n{text_of(a)}---\ntotal {total(c)}\n")
    with open(os.path.join(HERE, "algebra_k2.txt"), "w") as f:
        f.write("".join(out))


if __name__ == "__main__":
    main()
