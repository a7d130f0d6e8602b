"""Bad input raises the exception of its kind with the Rust message, never a crash."""

import pickle

import numpy as np
import pytest

import arrays.k2 as k2
from arrays import _native


def test_bad_text_is_value_error_with_the_line():
    with pytest.raises(ValueError, match="line 2"):
        k2.Fsa.from_str("0 1 1 0.5\n1 x -1 0\n2")


def test_nan_log_probs():
    lp = np.full((1, 3, 3), -1.0, dtype=np.float32)
    lp[0, 1, 2] = np.nan
    with pytest.raises(ValueError, match="log_probs\\[0, 1, 2\\] is NaN"):
        dense = k2.DenseFsaVec(lp, np.array([[0, 0, 3]], dtype=np.int32))
        k2.ctc_loss(k2.ctc_graph([[1]]), dense, reduction="none")


def test_segment_past_the_end():
    lp = np.zeros((1, 3, 3), dtype=np.float32)
    with pytest.raises(ValueError):
        k2.DenseFsaVec(lp, np.array([[0, 1, 3]], dtype=np.int32))


def test_arcs_of_the_wrong_dtype():
    good = np.array([[0, 1, -1, 0]], dtype=np.int32)
    assert k2.Fsa(good).num_arcs == 1
    with pytest.raises(ValueError, match="int32"):
        k2.Fsa(good.astype(np.int64))
    with pytest.raises(ValueError, match="int32"):
        k2.Fsa(good.astype(np.float64))
    with pytest.raises(ValueError):
        k2.Fsa(np.array([[0, 5, -1, 0]], dtype=np.int32)[:, :3])


def test_forged_arcs():
    # an arc leaving the final state, a negative state
    with pytest.raises(ValueError):
        k2.Fsa(np.array([[0, 1, -1, 0], [1, 0, 1, 0]], dtype=np.int32))
    with pytest.raises(ValueError):
        k2.Fsa(np.array([[-3, 1, -1, 0]], dtype=np.int32))


def test_non_contiguous_arrays_are_read_correctly():
    lp = np.log(np.full((2, 4, 6), 1 / 3, dtype=np.float32))[:, :, ::2]
    assert not lp.flags.c_contiguous
    dense = k2.DenseFsaVec(lp, np.array([[0, 0, 4], [1, 0, 4]], dtype=np.int32))
    contiguous = k2.DenseFsaVec(
        np.ascontiguousarray(lp), np.array([[0, 0, 4], [1, 0, 4]], dtype=np.int32)
    )
    g = k2.ctc_graph([[1], [2]])
    a = k2.ctc_loss(g, dense, reduction="none")
    b = k2.ctc_loss(g, contiguous, reduction="none")
    assert np.asarray(a).tolist() == np.asarray(b).tolist()


def test_index_errors():
    v = k2.create_fsa_vec([k2.linear_fsa([1])])
    with pytest.raises(IndexError):
        v[5]
    r = k2.RaggedTensor([[1], [2, 3]])
    with pytest.raises(IndexError):
        r.index(np.array([2], dtype=np.int32))


def test_corrupt_pickle_bytes():
    data = _native.RawFsa.from_str("0 1 1 0.5\n1 2 -1 0\n2").to_bytes()
    for cut in (0, 5, 12, len(data) - 1):
        with pytest.raises(ValueError):
            _native.RawFsa.from_bytes(data[:cut])
    forged = bytearray(data)
    forged[9:17] = (2**62).to_bytes(8, "little")  # an absurd row-splits length
    with pytest.raises(ValueError):
        _native.RawFsa.from_bytes(bytes(forged))


def test_ctc_graph_label_beyond_the_symbols():
    lp = np.zeros((1, 3, 3), dtype=np.float32)
    dense = k2.DenseFsaVec(lp, np.array([[0, 0, 3]], dtype=np.int32))
    with pytest.raises(ValueError):
        k2.ctc_loss(k2.ctc_graph([[7]]), dense)


def test_a_rust_panic_is_an_exception_not_a_crash():
    # pyo3 turns a panic into PanicException (a BaseException); no public call panics
    with pytest.raises(BaseException, match="deliberate panic"):
        _native._panic_for_test()


def test_ragged_text_errors():
    with pytest.raises(ValueError):
        k2.RaggedTensor("[[1 2] [3")


def test_symbol_table_gets_eps_as_k2():
    t = k2.SymbolTable.from_str("a 1\nb 2\n")
    assert t.get(0) == "<eps>" and t.ids == [0, 1, 2]


def test_symbol_table_merge_conflicts_name_both_sides():
    a = k2.SymbolTable.from_str("a 1\nb 2\n")
    with pytest.raises(ValueError, match="id 2 is 'b' here and 'c' there"):
        a.merge(k2.SymbolTable.from_str("c 2\n"))
    with pytest.raises(ValueError, match="'b' is id 2 here and 3 there"):
        a.merge(k2.SymbolTable.from_str("b 3\n"))
    # the union, by hand
    m = a.merge(k2.SymbolTable.from_str("a 1\nh 12\n"))
    assert m.ids == [0, 1, 2, 12] and m["h"] == 12 and m != a


def test_create_fsa_vec_keeps_the_non_tensor_attributes_of_all():
    a = k2.Fsa.from_str("0 1 -1 0\n1")
    b = k2.Fsa.from_str("0 1 -1 0\n1")
    a.name, b.other = "x", "y"
    both = k2.create_fsa_vec([a, b])
    assert (both.name, both.other) == ("x", "y")
    b.name = "z"
    with pytest.raises(ValueError, match="attribute 'name' differs between the FSAs"):
        k2.create_fsa_vec([a, b])


def test_nbest_of_fsas_checks_its_shape():
    fsas = k2.create_fsa_vec([k2.Fsa.from_str("0 1 -1 0.5\n1")] * 3)
    with pytest.raises(ValueError, match="2 elements for 3 FSAs"):
        k2.Nbest(fsas, k2.RaggedShape("[[x] [x]]"))
    # by hand: the one best of each group, and a group of one repeated for k=2
    fsas.scores = np.array([1.0, 3.0, 2.0], dtype=np.float32)
    nbest = k2.Nbest(fsas, k2.RaggedShape("[[x x] [x]]"))
    assert nbest.top_k(1).fsa.scores.tolist() == [3.0, 2.0]
    assert nbest.top_k(2).fsa.scores.tolist() == [3.0, 1.0, 2.0, 2.0]
    assert nbest.top_k(2).shape == k2.RaggedShape("[[x x] [x x]]")
    assert nbest.top_k(0).shape == k2.RaggedShape("[[] []]")
    with pytest.raises(ValueError, match="texts needs an Nbest made by Nbest.from_lattice"):
        nbest.texts()
