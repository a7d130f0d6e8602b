"""``from_pyval``'s walk over Python objects (``RawStructuredTensor.from_pyval``) against
the JSON path it replaces (``json.dumps``, then the crate's text reader): on seeded random
documents (nested dicts and lists, empty lists, tuples, mixed ints and floats, unicode keys
and strings, bools, ``None``, integers past int64, documents broken in one place) both give
the same tensor (rank, shape, field names in order, dtypes, values, its Arrow bytes) or the
same error; and what the walk leaves to the JSON path (numpy values, subclasses, NaN, bytes,
keys that are not ``str``, deep nesting) still gets that path's answer."""

import collections
import json
import random

import numpy as np
import pytest

from arrays import _native
from arrays.structured import StructuredTensor

INT64_MAX = 2**63 - 1
NAMES = ["a", "b", "id", "score", "x1", "Tag_2", "名前", "a b", "_x", "z"]
STRINGS = ["", "x", "user-0001", 'quote " and \\ back', "line\nbreak\t", "ünï", "名前", "🙂", "\x00"]


def scalar(rng):
    kind = rng.randrange(12)
    if kind < 3:
        return rng.randrange(-1000, 1000)
    if kind == 3:
        return rng.choice([0, -1, INT64_MAX, -INT64_MAX - 1, 2**31, -(2**31) - 1])
    if kind < 6:
        return rng.choice([rng.random(), -0.0, 0.0, 1e300, 5e-324, 2.5, -1e-7, 1e16])
    if kind < 8:
        return rng.choice(STRINGS)
    if kind == 8:
        return rng.random() < 0.5
    if kind == 9 and rng.random() < 0.15:
        return rng.choice([INT64_MAX + 1, -INT64_MAX - 2, 2**64, 10**30])
    if kind == 10 and rng.random() < 0.1:
        return None
    return rng.randrange(5)


def leaf(rng, depth=0):
    """A scalar, or lists of scalars (ragged, empty, mixed), now and then a tuple."""
    if depth > 2 or rng.random() < 0.5:
        return scalar(rng)
    items = [leaf(rng, depth + 1) for _ in range(rng.randrange(4))]
    return tuple(items) if rng.random() < 0.1 else items


def record(rng, schema, depth):
    out = {}
    for name, kind in schema:
        if kind == "dict" and depth < 3:
            out[name] = record(rng, sub_schema(rng, name), depth + 1)
        elif kind == "records" and depth < 3:
            sub = sub_schema(rng, name)
            out[name] = [record(rng, sub, depth + 1) for _ in range(rng.randrange(3))]
        elif kind == "ints":
            out[name] = [rng.randrange(100) for _ in range(rng.randrange(4))]
        elif kind == "int":
            out[name] = rng.randrange(-50, 50)
        elif kind == "float":
            out[name] = rng.choice([rng.random(), rng.randrange(10)])
        elif kind == "str":
            out[name] = rng.choice(STRINGS)
        else:
            out[name] = leaf(rng)
    return out


def sub_schema(rng, name):
    # one schema per (name, seed) so sibling records mostly agree
    local = random.Random(sum(map(ord, name)) * 2 + rng.randrange(2))
    return schema_of(local)


def schema_of(rng):
    kinds = ["int", "float", "str", "ints", "leaf", "dict", "records"]
    names = rng.sample(NAMES[:6] + (NAMES[6:] if rng.random() < 0.2 else []), rng.randrange(1, 5))
    return [(n, rng.choice(kinds)) for n in names]


def document(rng):
    schema = schema_of(rng)
    shape = rng.randrange(6)
    if shape == 0:
        return record(rng, schema, 0)
    if shape <= 3:
        doc = [record(rng, schema, 1) for _ in range(rng.randrange(8))]
    elif shape == 4:
        doc = [[record(rng, schema, 2) for _ in range(rng.randrange(3))] for _ in range(rng.randrange(4))]
    else:
        doc = leaf(rng)
    if isinstance(doc, list) and doc and rng.random() < 0.3:
        # broken in one place (or reordered: keys in another order, a missing key, a record
        # at another depth, a scalar where a record was)
        i = rng.randrange(len(doc))
        doc[i] = rng.choice(
            [
                scalar(rng),
                [doc[i]],
                dict(reversed(list(doc[i].items()))) if isinstance(doc[i], dict) else doc[i],
                {k: v for k, v in list(doc[i].items())[1:]} if isinstance(doc[i], dict) else doc[i],
                {**doc[i], "extra": 1} if isinstance(doc[i], dict) else doc[i],
            ]
        )
    return doc


def outcome(make):
    """What a conversion gives: the tensor, described in full, or the error."""
    try:
        raw = make()
    except Exception as err:  # noqa: BLE001 (the type is compared)
        return ("error", type(err).__name__, str(err))
    return ("ok", describe(raw))


def describe(raw):
    st = StructuredTensor(raw)
    return (st.rank, st.shape, fields(st), raw.to_json(), bytes(raw.to_bytes()))


def fields(st):
    out = []
    for name in st.field_names():
        dtype = st.field_dtype(name)
        out.append((name, dtype if dtype is not None else fields(st[name])))
    return out


def walked(doc):
    raw = _native.RawStructuredTensor.from_pyval(doc)
    assert raw is not None, f"the walk declined a plain document: {doc!r}"
    return raw


def via_json(doc):
    return _native.RawStructuredTensor.from_json(json.dumps(doc))


def test_the_walk_gives_what_the_json_path_gives():
    rng = random.Random(20261204)
    kinds = collections.Counter()
    for n in range(3000):
        doc = document(rng)
        ours = outcome(lambda: walked(doc))
        expected = outcome(lambda: via_json(doc))
        assert ours == expected, (n, doc)
        kinds[ours[0] if ours[0] == "ok" else ours[2].split(":")[0][:40]] += 1
    # the documents reach both results and many kinds of errors
    assert kinds["ok"] > 1000, kinds
    assert sum(kinds.values()) - kinds["ok"] > 300, kinds
    assert len(kinds) > 8, kinds


def test_long_lists_of_records_read_in_parallel_chunks_agree():
    rng = random.Random(7)
    docs = [
        [{"id": i, "score": rng.random(), "tags": list(range(i % 4)), "o": {"c": str(i)}} for i in range(20000)],
        [{"id": i, "v": i if i % 3 else i / 2} for i in range(20000)],
        [{"id": i} for i in range(20000)] + [{"id": "x"}],
        [{"id": i} for i in range(20000)] + [{"id": 2**64}],
    ]
    for doc in docs:
        assert outcome(lambda: walked(doc)) == outcome(lambda: via_json(doc))


def test_integers_past_int64_are_refused_naming_them_and_the_path():
    for big in (2**63, -(2**63) - 1, 10**30):
        with pytest.raises(ValueError, match=rf"\('a', 'b'\).*integer {big} does not fit in int64"):
            StructuredTensor.from_pyval([{"a": {"b": [1, big]}}])
    st = StructuredTensor.from_pyval([{"a": 2**63 - 1, "b": -(2**63)}])
    assert st.to_pyval() == [{"a": 2**63 - 1, "b": -(2**63)}]


def test_values_are_kept_exactly():
    doc = [
        {"f": -0.0, "t": (1, 2.5), "s": "名前 🙂 \" \\", "b": True, "n": [[], [1]]},
        {"f": 5e-324, "t": [], "s": "", "b": False, "n": [[2, 3]]},
    ]
    st = StructuredTensor.from_pyval(doc)
    assert st.field_names() == ["f", "t", "s", "b", "n"]
    assert [st.field_dtype(n) for n in st.field_names()] == ["float64", "float64", "string", "bool", "int64"]
    out = st.to_pyval()
    assert out[0]["t"] == [1.0, 2.5] and out[1]["f"] == 5e-324
    assert str(out[0]["f"]) == "-0.0"
    assert out[0]["s"] == doc[0]["s"]


class MyInt(int):
    pass


class MyDict(dict):
    pass


LEFT_TO_JSON = [
    [{"a": np.int64(3)}],
    [{"a": np.array([1, 2])}],
    [{"a": float("nan")}],
    [{"a": float("inf")}],
    [{"a": b"x"}],
    [{1: 2}],
    {True: 1},
    {"a": MyInt(3)},
    MyDict(a=1),
    collections.OrderedDict(a=1),
    {"a": "\ud800"},
    {"a": object()},
]


@pytest.mark.parametrize("doc", LEFT_TO_JSON, ids=range(len(LEFT_TO_JSON)))
def test_the_walk_leaves_other_values_to_the_json_path(doc):
    assert _native.RawStructuredTensor.from_pyval(doc) is None


def test_what_the_json_path_judges_is_judged_as_before():
    assert StructuredTensor.from_pyval([{"a": np.int64(3)}]).to_pyval() == [{"a": 3}]
    assert StructuredTensor.from_pyval({"a": MyInt(3)}).to_pyval() == {"a": 3}
    assert StructuredTensor.from_pyval(MyDict(a=1)).to_pyval() == {"a": 1}
    with pytest.raises(ValueError, match="NaN and infinities"):
        StructuredTensor.from_pyval([{"a": float("nan")}])
    with pytest.raises(NotImplementedError, match="bytes"):
        StructuredTensor.from_pyval([{"a": b"x"}])
    with pytest.raises(TypeError, match="key 1"):
        StructuredTensor.from_pyval([{1: 2}])
    with pytest.raises(TypeError, match="key True"):
        StructuredTensor.from_pyval({True: 1})


def test_deep_and_cyclic_documents_go_to_the_json_path():
    deep = {"x": 1}
    for _ in range(127):
        deep = {"a": deep}
    assert _native.RawStructuredTensor.from_pyval(deep) is not None
    assert outcome(lambda: walked(deep)) == outcome(lambda: via_json(deep))
    deeper = {"a": deep}  # the leaf 1 now 129 deep: past the text reader's limit
    assert _native.RawStructuredTensor.from_pyval(deeper) is None
    assert outcome(lambda: StructuredTensor.from_pyval(deeper)._raw) == outcome(lambda: via_json(deeper))
    cycle = [{"a": 1}]
    cycle[0]["b"] = cycle
    assert _native.RawStructuredTensor.from_pyval(cycle) is None
    with pytest.raises(ValueError, match="Circular reference"):
        StructuredTensor.from_pyval(cycle)
