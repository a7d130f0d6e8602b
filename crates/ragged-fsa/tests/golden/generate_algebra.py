#!/usr/bin/env python3
"""Generates the OpenFst golden file of ragged-fsa's algebra tests with kaldifst (OpenFst's
and Kaldi's FST tools in Python): random FSTs and what OpenFst computes from them.

    python -m venv venv && venv/bin/pip install kaldifst
    venv/bin/python crates/ragged-fsa/tests/golden/generate_algebra.py

The output, algebra_openfst.txt, is a list of cases `=== <op> <i>`; a case is one or two
input FSTs in OpenFst text, each followed by a line `---`, then the answer line
`total <best cost or inf> states <n>`:
  compose           compose(a, b) (a's output labels against b's input labels); n = -1
  rmepsilon         rmepsilon(a) of an acceptor; n = -1
  determinize       determinize(a) of a connected epsilon-free acceptor, then minimize_encoded:
                    n is the number of states of the minimized result
  determinize_star  Kaldi's determinize_star(a) of a connected acceptor with epsilons, then
                    minimize_encoded; n as above
The total is the cost of the best path (the tropical shortest distance). Inputs are seeded,
so re-running reproduces the file byte for byte.
"""

import os
import random

import kaldifst

HERE = os.path.dirname(os.path.abspath(__file__))


def cost(rng):
    return round(rng.uniform(0.0, 2.0), 2)


def random_acyclic(rng, transducer, epsilons, num_labels=4):
    """Arcs only to higher states; every state reachable from 0; one or two final states."""
    n = rng.randint(2, 7)
    arcs = []
    low = 0 if epsilons else 1
    for d in range(1, n):
        s = rng.randrange(d)
        arcs.append((s, d))
    for _ in range(rng.randint(0, 2 * n)):
        s = rng.randrange(n - 1)
        d = rng.randint(s + 1, n - 1)
        arcs.append((s, d))
    lines = []
    for (s, d) in sorted(arcs, key=lambda a: a[0]):
        i = rng.randint(low, num_labels)
        if transducer:
            o = rng.randint(low, num_labels)
            lines.append(f"{s} {d} {i} {o} {cost(rng)}")
        else:
            lines.append(f"{s} {d} {i} {cost(rng)}")
    finals = sorted({n - 1, rng.randrange(n)})
    for s in finals:
        lines.append(f"{s} {cost(rng)}")
    return "\n".join(lines) + "\n"


def total_cost(fst):
    """The best path's cost, read from kaldifst's shortest path."""
    best = kaldifst.shortest_path(fst)
    if best.num_states == 0:
        return "inf"
    total = 0.0
    for line in best.to_str().splitlines():
        fields = line.split()
        # arcs: `s d i o [w]`; final states: `s [w]` (an omitted weight is 0)
        if len(fields) == 5 or len(fields) == 2:
            total += float(fields[-1])
    return f"{total:.4f}"


def compile_fst(text, acceptor):
    return kaldifst.compile(text, acceptor=acceptor, keep_state_numbering=True)


def connected(text):
    """The acceptor trimmed by OpenFst's connect (k2's determinize wants connected input),
    as acceptor text; `None` if nothing is left."""
    fst = compile_fst(text, True)
    kaldifst.connect(fst)
    if fst.num_states == 0:
        return None
    lines = []
    for line in fst.to_str().splitlines():
        f = line.split()
        if len(f) >= 4:  # s d i o [w]: an acceptor has i == o
            lines.append(" ".join([f[0], f[1], f[2]] + f[4:5]))
        else:
            lines.append(" ".join(f))
    return "\n".join(lines) + "\n"


def main():
    rng = random.Random(20261201)
    out = []

    for i in range(40):
        a = random_acyclic(rng, transducer=True, epsilons=True)
        b = random_acyclic(rng, transducer=True, epsilons=True)
        fa, fb = compile_fst(a, False), compile_fst(b, False)
        kaldifst.arcsort(fa, sort_type="olabel")
        kaldifst.arcsort(fb, sort_type="ilabel")
        c = kaldifst.compose(fa, fb)
        out.append(f"=== compose {i}\n{a}---\n{b}---\ntotal {total_cost(c)} states -1\n")

    for i in range(40):
        a = random_acyclic(rng, transducer=False, epsilons=True)
        fa = compile_fst(a, True)
        kaldifst.rmepsilon(fa)
        out.append(f"=== rmepsilon {i}\n{a}---\ntotal {total_cost(fa)} states -1\n")

    for i in range(60):
        a = None
        while a is None:
            a = connected(random_acyclic(rng, transducer=False, epsilons=False, num_labels=3))
        fa = compile_fst(a, True)
        det = kaldifst.determinize(fa)
        total = total_cost(det)
        kaldifst.minimize_encoded(det)
        out.append(f"=== determinize {i}\n{a}---\ntotal {total} states {det.num_states}\n")

    for i in range(40):
        a = None
        while a is None:
            a = connected(random_acyclic(rng, transducer=False, epsilons=True, num_labels=3))
        fa = compile_fst(a, True)
        kaldifst.determinize_star(fa)
        total = total_cost(fa)
        kaldifst.minimize_encoded(fa)
        out.append(f"=== determinize_star {i}\n{a}---\ntotal {total} states {fa.num_states}\n")

    with open(os.path.join(HERE, "algebra_openfst.txt"), "w") as f:
        f.write("".join(out))


if __name__ == "__main__":
    main()
