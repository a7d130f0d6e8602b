#!/usr/bin/env python3
"""Generates the OpenFst golden files for ragged-fsa's tests with kaldifst (OpenFst's
Python wrapper): random FSTs in OpenFst text and what OpenFst does with them.

    python -m venv venv && venv/bin/pip install kaldifst
    venv/bin/python crates/ragged-fsa/tests/golden/generate.py

Each output file is a list of cases separated by lines `=== <name>`; a case is an input FST
in OpenFst text, a line `---`, and OpenFst's answer:
  arcsort.txt        ArcSort(ilabel) of the input, as OpenFst text
  connect.txt        Connect of the input, as OpenFst text
  shortest_path.txt  ShortestPath of the input, as OpenFst text
  topsort.txt        `acyclic` or `cyclic` (OpenFst's kAcyclic/kCyclic properties) and
                     `topsorted` or `not-topsorted` (kTopSorted/kNotTopSorted); kaldifst does
                     not wrap TopSort itself.
Inputs are deterministic (seeded), so re-running reproduces the files byte for byte.
"""

import os
import random

import kaldifst

K_CYCLIC = 0x0000000400000000
K_ACYCLIC = 0x0000000800000000
K_TOP_SORTED = 0x0000004000000000
K_NOT_TOP_SORTED = 0x0000008000000000

HERE = os.path.dirname(os.path.abspath(__file__))


def cost(rng):
    return round(rng.uniform(0.0, 3.0), 3)


def fst_text(arcs, finals):
    """OpenFst text: arcs of state 0 first (the start), then the others, then final lines."""
    lines = []
    for (s, d, i, o, w) in sorted(arcs, key=lambda a: a[0]):
        lines.append(f"{s} {d} {i} {o} {w}")
    for s, w in finals:
        lines.append(f"{s} {w}")
    return "\n".join(lines) + "\n"


def random_general(rng, distinct_labels):
    """Any graph: cycles, unreachable states and dead ends allowed."""
    n = rng.randint(3, 8)
    arcs = []
    for s in range(n):
        labels = rng.sample(range(1, 20), rng.randint(0, 4)) if distinct_labels else \
            [rng.randint(1, 5) for _ in range(rng.randint(0, 4))]
        for label in labels:
            arcs.append((s, rng.randrange(n), label, rng.randint(1, 9), cost(rng)))
    if not any(a[0] == 0 for a in arcs):
        arcs.append((0, 1, 1, 1, cost(rng)))
    finals = [(s, cost(rng)) for s in sorted(rng.sample(range(n), rng.randint(1, 2)))]
    return fst_text(arcs, finals)


def random_accessible(rng, acyclic):
    """Every state reachable from 0 (a spanning arc into each state), no self-loops;
    acyclic inputs only have arcs to higher states, possibly listed out of order."""
    n = rng.randint(3, 8)
    perm = list(range(1, n))
    rng.shuffle(perm)
    order = [0] + perm  # a hidden topological order
    pos = {s: i for i, s in enumerate(order)}
    arcs = []
    for k in range(1, n):
        src = order[rng.randrange(k)]
        arcs.append((src, order[k], rng.randint(1, 5), rng.randint(1, 5), cost(rng)))
    for _ in range(rng.randint(0, n)):
        s, d = rng.randrange(n), rng.randrange(n)
        if s == d:
            continue
        if acyclic and pos[d] < pos[s]:
            s, d = d, s
        arcs.append((s, d, rng.randint(1, 5), rng.randint(1, 5), cost(rng)))
    last = order[-1]
    finals = [(last, cost(rng))]
    extra = rng.randrange(n)
    if extra != last:
        finals.append((extra, cost(rng)))
    finals.sort()
    return fst_text(arcs, finals)


def canonical(fst):
    """kaldifst's text uses tabs; ours uses single spaces."""
    return "\n".join(" ".join(line.split()) for line in fst.to_str().splitlines()) + "\n" \
        if fst.num_states > 0 else ""


def write(name, cases):
    with open(os.path.join(HERE, name), "w") as f:
        for i, (text, answer) in enumerate(cases):
            f.write(f"=== case {i}\n{text}---\n{answer}")


def main():
    rng = random.Random(20240601)

    cases = []
    for _ in range(30):
        text = random_general(rng, distinct_labels=True)
        fst = kaldifst.compile(text, acceptor=False, keep_state_numbering=True)
        kaldifst.arcsort(fst, sort_type="ilabel")
        cases.append((text, canonical(fst)))
    write("arcsort.txt", cases)

    cases = []
    for _ in range(40):
        text = random_general(rng, distinct_labels=False)
        fst = kaldifst.compile(text, acceptor=False, keep_state_numbering=True)
        kaldifst.connect(fst)
        cases.append((text, canonical(fst)))
    write("connect.txt", cases)

    cases = []
    for _ in range(40):
        text = random_accessible(rng, acyclic=True)
        fst = kaldifst.compile(text, acceptor=False, keep_state_numbering=True)
        best = kaldifst.shortest_path(fst)
        cases.append((text, canonical(best)))
    write("shortest_path.txt", cases)

    cases = []
    for k in range(40):
        text = random_accessible(rng, acyclic=(k % 2 == 0))
        fst = kaldifst.compile(text, acceptor=False, keep_state_numbering=True)
        props = fst.properties(K_CYCLIC | K_ACYCLIC | K_TOP_SORTED | K_NOT_TOP_SORTED, True)
        acyclic = "acyclic" if props & K_ACYCLIC else "cyclic"
        assert bool(props & K_ACYCLIC) != bool(props & K_CYCLIC)
        topsorted = "topsorted" if props & K_TOP_SORTED else "not-topsorted"
        cases.append((text, f"{acyclic} {topsorted}\n"))
    write("topsort.txt", cases)


if __name__ == "__main__":
    main()
