#!/usr/bin/env python3
"""Writes tf_pyval.json: TensorFlow's ``StructuredTensor.from_pyval`` / ``to_pyval`` on
seeded documents, which tests/test_structured_tf.py compares ``arrays.structured`` with.

Needs TensorFlow 2.21 (python -m venv venv && venv/bin/pip install tensorflow-cpu==2.21.*).
Run from anywhere:

    venv/bin/python crates/python/tests/golden/make_tf_pyval.py

Documents come from SplitMix64 with fixed seeds (the same generator as the structured-tensor
crate's tf_ops_generate.py), so the script writes the same file everywhere. A document is a
random schema (field names, leaf kinds int/float/str/bool, leaf depth 0..2, nested structs)
filled at rank 0 (a dict), 1 (a list of dicts) or 2 and 3 (nested, ragged or uniform lists of
dicts); some are then broken (a value of another type, a missing key, a null, a bad field
name, a non-string key, dicts at two depths, ...). Hand-written edge cases come first.

Each case holds ``input`` as Python source (``repr``, so tuples and non-string keys
survive; NaN and infinities as ``float('nan')``, ``float('inf')``, ``float('-inf')``) and
either TensorFlow's result:

- ``shape`` (a list, ``None`` for a ragged dimension), ``rank``,
- ``fields``: ``[name, dtype]`` for a leaf (TensorFlow's dtype name) and ``[name, [...]]``
  for a struct, in TensorFlow's order where TensorFlow defines one (a dict at rank 0 keeps
  the dict's order); a struct of rank 1 or more takes its names from a Python ``set``, so
  its order depends on the hash seed, and is written sorted,
- ``to_pyval`` (numpy scalars as Python values, bytes decoded as UTF-8; keys written
  sorted, as every dict in the file),

or ``kind`` ``"not_struct"`` when TensorFlow returns a tensor rather than a StructuredTensor
(a list with no dict in it, a scalar), or ``error`` / ``message``: TensorFlow's exception
type and message (with the message of the exception it chains from, if any).
"""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

S = tf.experimental.StructuredTensor
HERE = os.path.dirname(os.path.abspath(__file__))
MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n

    def chance(self, num, den):
        return self.below(den) < num

    def pick(self, seq):
        return seq[self.below(len(seq))]


NAMES = ["a", "b", "id", "x1", "Name", "z_z", "score", "tags", "q", "m9"]
WORDS = ["", "x", "hello", "caf\u00e9", "\u65e5\u672c", "a b", "\U0001f600", "tab\tq", "quote\""]


def scalar(rng, kind):
    if kind == "int":
        r = rng.below(20)
        if r == 0:
            return 2**31 + rng.below(1000)  # past int32: TensorFlow takes int64
        if r == 1:
            return -(2**31) - 1 - rng.below(1000)
        return rng.below(200) - 100
    if kind == "float":
        r = rng.below(12)
        if r == 0:
            return rng.pick([0.1, 0.2, 1.3, 3.14159, -2.7])  # not exact in float32
        if r == 1:
            return float(rng.below(5))  # an integral float
        return (rng.below(161) - 80) / 8  # exact in float32
    if kind == "str":
        return rng.pick(WORDS) if rng.chance(1, 3) else "s%d" % rng.below(100)
    return rng.chance(1, 2)


def leaf(rng, kind, depth, lens):
    """A leaf value of `depth` list levels; `lens` fixes the lengths (uniform) or is None."""
    if depth == 0:
        return scalar(rng, kind)
    n = lens[0] if lens else rng.below(4)
    return [leaf(rng, kind, depth - 1, lens[1:] if lens else None) for _ in range(n)]


def schema(rng, depth=0):
    """[(name, spec)] with spec ("leaf", kind, list depth, uniform lens or None) or
    ("struct", sub-schema, list depth of the struct (0: a dict, 1: a list of dicts))."""
    names = list(NAMES)
    out = []
    for _ in range(rng.below(4) + (depth == 0)):
        name = names.pop(rng.below(len(names)))
        if depth < 2 and rng.chance(1, 5):
            out.append((name, ("struct", schema(rng, depth + 1), rng.below(2))))
        else:
            kind = rng.pick(["int", "int", "float", "float", "str", "bool"])
            ldepth = rng.pick([0, 0, 1, 1, 2])
            lens = None
            if ldepth and rng.chance(1, 3):
                lens = [rng.below(3) + 1 for _ in range(ldepth)]
            out.append((name, ("leaf", kind, ldepth, lens)))
    return out


def record(rng, sch, widen):
    out = {}
    for name, spec in sch:
        if spec[0] == "leaf":
            _, kind, depth, lens = spec
            v = leaf(rng, kind, depth, lens)
            if widen and kind == "float" and depth == 1 and v:
                v[0] = int(v[0])  # mixed int/float: TensorFlow widens
            out[name] = v
        else:
            _, sub, ldepth = spec
            if ldepth == 0:
                out[name] = record(rng, sub, widen)
            else:
                out[name] = [record(rng, sub, widen) for _ in range(rng.below(3))]
    return out


def document(rng, sch, rank, uniform, widen):
    if rank == 0:
        return record(rng, sch, widen)
    n = rng.below(4) + 1
    if uniform:
        inner = [rng.below(3) + 1 for _ in range(rank - 1)]

        def fill(level):
            if level == rank:
                return record(rng, sch, widen)
            size = n if level == 0 else inner[level - 1]
            return [fill(level + 1) for _ in range(size)]

        return fill(0)

    def ragged(level):
        if level == rank:
            return record(rng, sch, widen)
        return [ragged(level + 1) for _ in range(n if level == 0 else rng.below(3))]

    return ragged(0)


def dicts(doc):
    """Every dict in `doc`, outer first."""
    if isinstance(doc, dict):
        yield doc
        for v in doc.values():
            yield from dicts(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from dicts(v)


def leaves(d):
    """(dict, key) of every non-dict, non-list-of-dict value directly in dict `d`."""
    return [(d, k) for k, v in d.items()
            if not isinstance(v, dict) and not (isinstance(v, list) and any(isinstance(x, dict) for x in v))]


def break_it(rng, doc):
    """One change that TensorFlow may refuse; None when the document offers no place."""
    ds = list(dicts(doc))
    if not ds:
        return None
    d = rng.pick(ds)
    how = rng.below(11)
    ls = leaves(d)
    if how == 0 and ls:  # a value of another type
        owner, k = rng.pick(ls)
        v = owner[k]
        other = rng.pick(["str", 7, 2.5, True, [1], [["x"]]])
        owner[k] = [other] + v[1:] if isinstance(v, list) and v else other
    elif how == 1 and len(ds) > 1 and d:  # a key missing from one dict
        del d[rng.pick(sorted(d))]
    elif how == 2:  # an extra key in one dict
        d["extra%d" % rng.below(3)] = rng.below(5)
    elif how == 3 and ls:  # a null
        owner, k = rng.pick(ls)
        v = owner[k]
        if isinstance(v, list) and v and rng.chance(1, 2):
            v[0] = None
        else:
            owner[k] = None
    elif how == 4:  # a field name TensorFlow does not allow
        d[rng.pick(["1a", "_a", "a-b", "", "a b", "\u00e9", "a.b"])] = 1
    elif how == 5:  # a key that is not a string
        d[rng.pick([1, 2.5, True, None, (1, 2)])] = 1
    elif how == 6 and ls:  # a leaf with lists at two depths
        owner, k = rng.pick(ls)
        owner[k] = [1, [2, 3]] if rng.chance(1, 2) else [[1], 2]
    elif how == 7 and isinstance(doc, list) and doc:  # dicts at two depths
        doc.append([dict(doc[0])] if isinstance(doc[0], dict) else {"a": 1})
    elif how == 8 and isinstance(doc, list):  # a scalar beside the dicts
        doc.append(rng.pick([1, "x", None]))
    elif how == 9 and ls:  # an integer past int64 or a float TensorFlow cannot take
        owner, k = rng.pick(ls)
        owner[k] = rng.pick([2**63, -(2**63) - 1, 2**64, float("nan"), float("inf")])
    elif how == 10 and ls:  # a tuple for a list
        owner, k = rng.pick(ls)
        v = owner[k]
        owner[k] = tuple(v) if isinstance(v, list) else (v, v)
    else:
        return None
    return doc


def plain(v):
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return plain(v.tolist())
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bytes):
        return v.decode("utf-8")
    return v


def fields(st):
    out = []
    names = list(st.field_names())
    if st.rank > 0:
        names.sort()  # a set's order: undefined, see the module docstring
    for name in names:
        v = st.field_value(name)
        out.append([name, fields(v) if isinstance(v, S) else v.dtype.name])
    return out


def message(err):
    text = "%s: %s" % (type(err).__name__, err)
    cause = err.__cause__ or err.__context__
    if cause is not None:
        text += " <- %s: %s" % (type(cause).__name__, str(cause).splitlines()[0] if str(cause) else "")
    return text[:400]


def source(v):
    """Python source for `v` (``repr``, but NaN and infinities as ``float('nan')`` etc.)."""
    if isinstance(v, dict):
        return "{" + ", ".join("%s: %s" % (source(k), source(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(source(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + "".join(source(x) + ", " for x in v) + ")"
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return "float(%r)" % repr(v)
    return repr(v)


def run(doc):
    case = {"input": source(doc)}
    try:
        st = S.from_pyval(doc)
    except Exception as err:  # noqa: BLE001  (TensorFlow's exception is what we record)
        case["error"] = type(err).__name__
        case["message"] = message(err)
        return case
    if not isinstance(st, S):
        case["kind"] = "not_struct"
        case["result"] = type(st).__name__
        return case
    case["shape"] = st.shape.as_list()
    case["rank"] = st.rank
    case["fields"] = fields(st)
    case["to_pyval"] = plain(st.to_pyval())
    return case


HAND = [
    {},
    [],
    [[]],
    [[], []],
    [{}],
    [{}, {}],
    [[{}], []],
    {"a": []},
    {"a": [[]]},
    {"a": [[], []]},
    {"a": [[], [1]]},
    [{"a": []}, {"a": []}],
    [{"a": []}, {"a": [1]}],
    [{"a": [1]}, {"a": [2.5]}],
    [{"a": 1}, {"a": 2.5}],
    {"a": [1, 2.5]},
    {"a": [True, 1]},
    {"a": [1, "x"]},
    {"a": 2**31 - 1},
    {"a": 2**31},
    {"a": [1, 2**31]},
    {"a": 2**63 - 1},
    {"a": -(2**63)},
    {"a": 2**63},
    {"a": 0.1},
    {"a": 1e300},
    {"a": 1e-300},
    {"a": "caf\u00e9"},
    {"z": 1, "a": 2, "m": 3},
    {"z": {"y": 1, "b": 2}, "a": [{"q": 1, "c": 2}]},
    [{"z": 1, "a": 2, "m": 3}],
    [[{"a": 1}, {"a": 2}], [{"a": 3}, {"a": 4}]],
    [[{"a": 1}], [{"a": 2}, {"a": 3}]],
    [[[{"a": 1}]], []],
    [[[{"a": 1}], []], [[{"a": 2}]]],
    {"a": [{"b": 1}, {"b": 2}]},
    {"a": [[{"b": 1}], []]},
    {"a": {"b": {"c": [1, 2]}}},
    [{"a": {"b": 1}}, {"a": {"b": 2}}],
    [{"a": [{"b": 1}]}, {"a": []}],
    ({"a": 1}, {"a": 2}),
    {"a": (1, 2)},
    5,
    "x",
    [1, 2],
    [[1], []],
    None,
    {"a": None},
    {"a": [None]},
    [{"a": 1}, None],
    [{"a": 1}, {"b": 1}],
    [{"a": 1}, {"a": 1, "b": 2}],
    [{"a": 1}, [{"a": 1}]],
    [{"a": 1}, 1],
    {"1a": 1},
    {"_a": 1},
    {"": 1},
    {1: 1},
    {True: 1},
    {None: 1},
    {"a": {"b-c": 1}},
    [{"a": 1}, {"a": "x"}],
    {"a": [1, [2]]},
    {"a": [[1], 2]},
    {"a": float("nan")},
    {"a": float("inf")},
    {"a": b"bytes"},
]


def main():
    cases = [run(doc) for doc in HAND]
    hand = len(cases)
    # accepted documents of every rank, ragged and uniform
    for seed in range(360):
        rng = SplitMix64(1000 + seed)
        sch = schema(rng)
        rank = rng.pick([0, 1, 1, 2, 2, 3])
        uniform = rank >= 2 and rng.chance(1, 3)
        cases.append(run(document(rng, sch, rank, uniform, widen=rng.chance(1, 4))))
    # the same kinds of documents, broken in one place
    for seed in range(240):
        rng = SplitMix64(2000 + seed)
        sch = schema(rng)
        doc = document(rng, sch, rng.pick([0, 1, 1, 2]), False, widen=False)
        broken = break_it(rng, doc)
        if broken is not None:
            cases.append(run(broken))
    out = {"tensorflow": tf.__version__, "hand_written": hand, "cases": cases}
    with open(os.path.join(HERE, "tf_pyval.json"), "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
        f.write("\n")
    ok = sum("shape" in c for c in cases)
    print("%d cases: %d accepted, %d rejected, %d not structs"
          % (len(cases), ok, sum("error" in c for c in cases), sum("kind" in c for c in cases)))


if __name__ == "__main__":
    main()
