"""Every Python object of the package pickles into a compact binary form (what Ray's object
store ships) and back, equal; truncated or forged bytes are a ValueError, never a crash."""

import pickle
import random

import numpy as np
import pytest

import arrays.k2 as k2
import arrays.kaldi as kaldiio
from arrays.structured import RaggedArray, StructuredTensor

USERS = [
    {"name": "Zoë", "city": "東京", "age": 31, "score": 0.5, "ok": True,
     "sessions": [{"device": "téléphone", "events": [{"kind": "play", "ms": 120}, {"kind": "stop", "ms": 5}]}]},
    {"name": "Ёжик", "city": "Москва", "age": 7, "score": -2.25, "ok": False, "sessions": []},
    {"name": "", "city": "मुंबई", "age": 0, "score": 1e300, "ok": True,
     "sessions": [{"device": "tv", "events": []}, {"device": "", "events": [{"kind": "seek", "ms": -1}]}]},
]


def round_trip(x):
    return pickle.loads(pickle.dumps(x, protocol=pickle.HIGHEST_PROTOCOL))


@pytest.mark.parametrize(
    "pyval",
    [
        USERS,
        [],
        {"a": 1, "b": "x", "c": [1.5, 2.5]},  # rank 0: no Arrow form, crosses as JSON text
        [[{"a": 1}, {"a": 2}], [{"a": 3}]],  # ragged rank 2
        [[{"a": 1}, {"a": 2}], [{"a": 3}, {"a": 4}]],  # uniform rank 2
        [{"x": [[1, 2], [3]]}, {"x": [[]]}],
    ],
)
def test_structured_tensor_round_trip(pyval):
    st = StructuredTensor.from_pyval(pyval)
    back = round_trip(st)
    assert back.to_pyval() == pyval
    assert back.shape == st.shape
    assert back.field_names() == st.field_names()


def test_structured_tensor_bytes_are_arrow_ipc_pyarrow_reads():
    """The bytes after the 9-byte header are an Arrow IPC stream: pyarrow reads the same
    records (an independent reader of the format)."""
    pa = pytest.importorskip("pyarrow")
    st = StructuredTensor.from_pyval(USERS)
    data = st.to_bytes()
    assert data[:8] == b"arrST001"
    table = pa.ipc.open_stream(data[9:]).read_all()
    assert table.column(0).to_pylist() == USERS


def test_structured_tensor_is_compact():
    """A thousand records take less than their JSON text: values travel as Arrow buffers."""
    import json

    records = [{"id": i, "x": [float(i)] * 4, "tag": f"t{i % 7}"} for i in range(1000)]
    st = StructuredTensor.from_pyval(records)
    assert len(pickle.dumps(st)) < len(json.dumps(records))


def test_structured_tensor_truncated_and_forged_bytes():
    data = StructuredTensor.from_pyval(USERS).to_bytes()
    for n in range(len(data)):
        with pytest.raises(ValueError):
            StructuredTensor.from_bytes(data[:n])
    with pytest.raises(ValueError, match="magic"):
        StructuredTensor.from_bytes(b"arrFSA01" + data[8:])
    with pytest.raises(ValueError, match="after the end"):
        StructuredTensor.from_bytes(data + b"\0" * 8)
    rng = random.Random(7)
    for _ in range(400):
        forged = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            forged[rng.randrange(9, len(forged))] ^= 1 << rng.randrange(8)
        try:
            StructuredTensor.from_bytes(bytes(forged))
        except ValueError:
            pass  # a clear error; any other exception (a Rust panic) fails the test


@pytest.mark.parametrize(
    "nested, dtype",
    [([[1, 2], [], [3]], "int32"), ([[[1.5], []], [[2.5, 3.5]]], "float64"), ([[]], "int64"), ([[1.0]], "float32")],
)
def test_ragged_array_round_trip(nested, dtype):
    r = RaggedArray.from_list(nested, dtype=dtype)
    back = round_trip(r)
    assert back.to_list() == r.to_list() == nested
    assert back.dtype == dtype


def test_ragged_array_forged_splits():
    r = RaggedArray.from_list([[1, 2], [3]])
    fn, (splits, values) = r.__reduce__()
    with pytest.raises(ValueError):
        fn([np.array([0, 2, 5], dtype=np.int32)], values)  # splits past the values
    with pytest.raises(ValueError):
        fn([np.array([0, 2, 1, 3], dtype=np.int32)], values)  # decreasing


def test_fsa_round_trip_and_forged_bytes():
    f = k2.Fsa.from_str("0 1 1 3 0.5\n0 1 2 4 0.25\n1 2 -1 -1 0\n2", acceptor=False)
    v = k2.create_fsa_vec([f, k2.linear_fst([5, 6], [7, 8])])
    for x in (f, v):
        back = round_trip(x)
        assert str(back) == str(x)
        assert back.aux_labels.tolist() == x.aux_labels.tolist()
    data = bytes(v._raw.to_bytes())
    for n in range(len(data)):
        with pytest.raises(ValueError):
            k2.Fsa(k2._native.RawFsa.from_bytes(data[:n]))
    rng = random.Random(3)
    for _ in range(300):
        forged = bytearray(data)
        forged[rng.randrange(len(forged))] ^= 1 << rng.randrange(8)
        try:
            k2._native.RawFsa.from_bytes(bytes(forged))
        except ValueError:
            pass


def test_dense_fsa_vec_round_trip():
    rng = np.random.default_rng(0)
    lp = np.log(rng.dirichlet(np.ones(4), size=(2, 5))).astype(np.float32)
    d = k2.DenseFsaVec(lp, np.array([[0, 0, 5], [1, 1, 3]], dtype=np.int32))
    back = round_trip(d)
    assert np.array_equal(np.asarray(back.scores), np.asarray(d.scores))
    assert np.asarray(back.duration).tolist() == np.asarray(d.duration).tolist()


def test_ragged_tensor_symbol_table_and_compressed_matrix():
    r = k2.RaggedTensor([[1, 2], [], [3]])
    assert str(round_trip(r)) == str(r)
    table = k2.SymbolTable.from_str("<eps> 0\nhello 1\nмир 2\n")
    assert round_trip(table).to_str() == table.to_str()
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    cm = kaldiio.CompressedMatrix(m, kaldiio.kSpeechFeature)
    back = round_trip(cm)
    assert bytes(back.to_bytes()) == bytes(cm.to_bytes())
    assert np.array_equal(back.decompress(), cm.decompress())


def test_readers_refuse_to_pickle(tmp_path):
    """An open reader or writer holds a file: pickling it is a TypeError, not a crash."""
    ark = tmp_path / "a.ark"
    with kaldiio.WriteHelper(f"ark:{ark}") as w:
        w("u", np.zeros((2, 2), dtype=np.float32))
    reader = kaldiio.ReadHelper(f"ark:{ark}")
    with pytest.raises(TypeError):
        pickle.dumps(reader)
    reader.close()
