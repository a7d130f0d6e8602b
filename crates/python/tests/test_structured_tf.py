"""arrays.structured's ``from_pyval`` / ``to_pyval`` against TensorFlow 2.21 on seeded
documents: tests/golden/tf_pyval.json, written by tests/golden/make_tf_pyval.py (see its
docstring; TensorFlow is not needed here). For every document TensorFlow takes: the same
rank, shape, field names, leaf dtypes (TensorFlow's names mapped to ours by ``DTYPES``)
and ``to_pyval()``; for every document it refuses: an exception of the matching type.

Where we differ on purpose, ``DIFFERENCES`` says how and why, and the case is still
checked against what we do instead (a case falls in a difference by what it is, never by
its number); ``test_every_difference_is_seen`` keeps that list from going stale.
"""

import ast
import json
import math
import os
import re
from collections import Counter

import numpy as np
import pytest

from arrays.structured import StructuredTensor

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "tf_pyval.json")
with open(GOLDEN, encoding="utf-8") as _f:
    DATA = json.load(_f)
CASES = DATA["cases"]

# TensorFlow's leaf dtype -> ours. TensorFlow's from_pyval makes Python ints int32 (int64
# when one does not fit) and Python floats float32; ours keeps JSON's int64 and float64.
DTYPES = {
    "int32": "int64",
    "int64": "int64",
    "float32": "float64",
    "float64": "float64",
    "bool": "bool",
    "string": "string",
}

DIFFERENCES = {
    "float64": "floats stay float64 (TensorFlow rounds them to float32): our to_pyval() "
    "rounded to float32 equals TensorFlow's, and ours equals the input exactly",
    "uniform_dims": "a list of dicts whose rows all have one length has that length in our "
    "shape; TensorFlow's static shape says None for every dimension after the first",
    "not_struct": "a document with no dict in it: TensorFlow returns a tf.Tensor or "
    "RaggedTensor, not a StructuredTensor; we give a struct array of no fields for nested "
    "empty lists and a ValueError for numbers, strings and lists of them",
    "float32_range": "a float past float32's range (1e300): TensorFlow refuses it (ValueError, "
    "its float32), ours keeps it as float64",
    "nan": "NaN and infinities: TensorFlow takes them as float32; we refuse them (ValueError), "
    "as the value crosses as JSON text",
    "bytes": "bytes values: TensorFlow takes them as tf.string; we raise NotImplementedError",
    "missing_key": "a key missing from some of the dicts of a list: TensorFlow raises a bare "
    "KeyError (its own lookup failing), ours a ValueError naming the key and the path",
    "key_type": "a dict key that is not a string: always a TypeError naming the key and the "
    "path; TensorFlow raises TypeError, or ValueError wrapping it under a list, or KeyError "
    "when sibling dicts lack the key",
}

def parse(text):
    """The document from its Python source (literals, tuples, float('nan') and the like)."""

    def conv(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.List):
            return [conv(x) for x in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(conv(x) for x in node.elts)
        if isinstance(node, ast.Dict):
            return {conv(k): conv(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -conv(node.operand)
        if isinstance(node, ast.Call) and node.func.id == "float" and len(node.args) == 1:
            return float(conv(node.args[0]))
        raise ValueError(f"unexpected syntax in a golden input: {ast.dump(node)}")

    return conv(ast.parse(text, mode="eval").body)


def walk(doc):
    """Every value in ``doc``, dict keys included, outer first."""
    yield doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from walk(v)
    elif isinstance(doc, (list, tuple)):
        for v in doc:
            yield from walk(v)


def has_dict(doc):
    return any(isinstance(v, dict) for v in walk(doc))


def non_string_key(doc):
    return any(isinstance(v, dict) and any(not isinstance(k, str) for k in v) for v in walk(doc))


def non_finite(doc):
    return any(isinstance(v, float) and not math.isfinite(v) for v in walk(doc))


def past_float32(doc):
    return any(
        isinstance(v, float) and math.isfinite(v) and abs(v) > float(np.finfo(np.float32).max)
        for v in walk(doc)
    )


def plain(doc):
    """``doc`` with tuples as lists (what to_pyval gives back)."""
    if isinstance(doc, dict):
        return {k: plain(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [plain(v) for v in doc]
    return doc


def to_float32(value):
    if isinstance(value, dict):
        return {k: to_float32(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_float32(v) for v in value]
    if isinstance(value, float):
        with np.errstate(over="ignore"):
            return float(np.float32(value))
    return value


def uniform_length(doc, depth):
    """The length every list at ``depth`` of the nested lists of dicts has, or None."""
    level = [doc]
    for _ in range(depth):
        level = [x for lst in level for x in lst]
    lengths = {len(x) for x in level}
    return lengths.pop() if len(lengths) == 1 else None


def check_fields(st, expected, seen, path=()):
    """Our fields of ``st`` against TensorFlow's ``[name, dtype or [...]]`` list."""
    ours = st.field_names()
    names = [name for name, _ in expected]
    if st.rank == 0:
        # a dict at rank 0 keeps its key order in both; at rank 1 and up TensorFlow's order
        # comes from a Python set (it changes with the hash seed), so only names compare
        assert ours == names, (path, ours, names)
    assert sorted(ours) == sorted(names), (path, ours, names)
    for name, tf_type in expected:
        dtype = st.field_dtype(name)
        if isinstance(tf_type, list):
            assert dtype is None, (path + (name,), dtype)
            check_fields(st[name], tf_type, seen, path + (name,))
        else:
            assert dtype == DTYPES[tf_type], (path + (name,), dtype, tf_type)
            if tf_type == "float32":
                seen["float64"] += 1


def ids(kind):
    return [i for i, c in enumerate(CASES) if kind(c)]


ACCEPTED = ids(lambda c: "shape" in c)
REJECTED = ids(lambda c: "error" in c)
NOT_STRUCT = ids(lambda c: c.get("kind") == "not_struct")


def test_the_golden_file():
    assert DATA["tensorflow"].startswith("2.21.")
    assert len(ACCEPTED) + len(REJECTED) + len(NOT_STRUCT) == len(CASES)
    assert len(ACCEPTED) >= 300 and len(REJECTED) >= 100
    ranks = Counter(CASES[i]["rank"] for i in ACCEPTED)
    assert all(ranks[r] >= 20 for r in range(4)), ranks


def check_accepted(case, seen):
    """Ours against TensorFlow's result on a document TensorFlow takes."""
    doc = parse(case["input"])
    if non_finite(doc):
        seen["nan"] += 1
        with pytest.raises(ValueError, match="NaN and infinities"):
            StructuredTensor.from_pyval(doc)
        return
    if any(isinstance(v, bytes) for v in walk(doc)):
        seen["bytes"] += 1
        with pytest.raises(NotImplementedError, match="bytes"):
            StructuredTensor.from_pyval(doc)
        return
    st = StructuredTensor.from_pyval(doc)
    assert st.rank == case["rank"]
    shape = list(st.shape)
    assert len(shape) == len(case["shape"])
    for depth, (ours, tf_dim) in enumerate(zip(shape, case["shape"])):
        if tf_dim is not None:
            assert ours == tf_dim, (depth, shape, case["shape"])
        else:
            assert ours == uniform_length(doc, depth), (depth, shape, case["shape"])
            if ours is not None:
                seen["uniform_dims"] += 1
    check_fields(st, case["fields"], seen)
    ours = st.to_pyval()
    assert ours == plain(doc)  # from_pyval(v).to_pyval() == v, floats exact
    assert to_float32(ours) == case["to_pyval"]


def check_refused(case, seen):
    """Ours raises where TensorFlow raises, an exception of the matching type."""
    doc = parse(case["input"])
    if non_string_key(doc):
        expected = TypeError
        if case["error"] != "TypeError":
            seen["key_type"] += 1
    elif case["error"] == "KeyError":
        expected = ValueError
        seen["missing_key"] += 1
    elif past_float32(doc) and "out of range" in case["message"]:
        seen["float32_range"] += 1
        assert StructuredTensor.from_pyval(doc).to_pyval() == plain(doc)
        return
    else:
        expected = {"ValueError": ValueError, "TypeError": TypeError}[case["error"]]
    with pytest.raises(expected) as err:
        StructuredTensor.from_pyval(doc)
    message = case["message"]
    if message.startswith("ValueError: Error parsing path (") and "path (" in str(err.value):
        # where both name a path (ours refuses NaN, or a null among the dicts, before
        # looking at fields), the same path
        tf_path = message[len("ValueError: Error parsing path ") :].split(")")[0] + ")"
        assert f"path {tf_path}" in str(err.value), (str(err.value), message)
    head = message.split(" <- ")[0]
    if head.startswith("ValueError: ") and not head.startswith("ValueError: Error parsing path"):
        # TensorFlow's own words: "Expected dict or nested list/tuple of dict",
        # "Inconsistent depth of dictionaries", "Field name '1a' is not currently allowed"
        assert head[len("ValueError: ") :].rstrip(".") in str(err.value), (str(err.value), message)
    name = re.search(r"Field name .*? is not currently allowed", message)
    if name and expected is ValueError:
        assert name.group(0) in str(err.value), (str(err.value), message)
    if case["error"] == "KeyError" and expected is ValueError:
        assert "missing from a struct" in str(err.value), (str(err.value), message)


def check_not_struct(case, seen):
    """A document TensorFlow makes a tensor of, not a StructuredTensor."""
    doc = parse(case["input"])
    assert not has_dict(doc)
    seen["not_struct"] += 1
    if isinstance(doc, list) and all(isinstance(v, list) for v in walk(doc)):
        st = StructuredTensor.from_pyval(doc)  # nested empty lists
        assert st.field_names() == [] and st.to_pyval() == doc
        assert st.shape[0] == len(doc)
    else:
        with pytest.raises(ValueError, match="a StructuredTensor is built from an object"):
            StructuredTensor.from_pyval(doc)


CHECKS = (("shape", check_accepted), ("error", check_refused), ("kind", check_not_struct))


def check(case, seen):
    next(f for key, f in CHECKS if key in case)(case, seen)


@pytest.mark.parametrize("i", range(len(CASES)), ids=lambda i: f"case{i}")
def test_as_tensorflow_2_21(i):
    check(CASES[i], Counter())


def test_every_difference_is_seen():
    """Each listed difference met by at least one case, so none stays in the list after it
    stops being true."""
    seen = Counter()
    for case in CASES:
        check(case, seen)
    assert set(seen) == set(DIFFERENCES), (dict(seen), sorted(DIFFERENCES))


def test_keys_that_are_not_strings():
    # TensorFlow: TypeError: Unexpected type for key in `fields`: True
    for doc in ({True: 1}, {None: 1}, {1: 2}, [{"a": {False: 1}}], {"a": [{(1, 2): 1}]}):
        with pytest.raises(TypeError, match="is not a string"):
            StructuredTensor.from_pyval(doc)
    # the names "true", "null" written as strings are names like any other
    st = StructuredTensor.from_pyval({"true": 1, "null": [2]})
    assert st.to_pyval() == {"true": 1, "null": [2]}
