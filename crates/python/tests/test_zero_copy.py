"""Which calls share memory with ours and which copy.

Shared (no copy): an Fsa's arcs, labels, scores and int32/float32 attributes are views of
the Rust object's buffers (writing through them changes the FSA, as in k2); a result
array (arc maps, scores, losses, gradients) is a numpy array that owns the Rust vector;
a torch tensor of log_probs is read in place by every call on its DenseFsaVec (any
strides; a change made in place after construction is refused). Copies: setting an
attribute or `scores = ...` (the Rust object owns its vectors; a new object is made),
DenseFsaVec's score layout from numpy log_probs (as k2 copies: numpy has no version
counter to show a later write), and the row splits returned by `row_splits`.
"""

import numpy as np

import arrays.k2 as k2
from arrays import _native


def np_(x):
    return x.detach().numpy() if hasattr(x, "detach") else x


def test_arcs_labels_scores_are_views_of_the_rust_buffer():
    f = k2.Fsa.from_str("0 1 1 0.5\n0 1 2 0.25\n1 2 -1 0\n2")
    arcs = np_(f.arcs.values())
    labels = np_(f.labels)
    scores = np_(f.scores)
    addr = _native.arcs_address(f._raw)
    assert arcs.__array_interface__["data"][0] == addr
    assert labels.__array_interface__["data"][0] == addr + 8
    assert scores.__array_interface__["data"][0] == addr + 12
    assert np.shares_memory(arcs, labels) and np.shares_memory(arcs, scores)
    # writing through a view changes the FSA (icefall's LG.labels[...] = 0)
    labels[labels == 2] = 0
    assert np_(f.labels).tolist() == [1, 0, -1]
    assert "EpsilonFree" not in f.properties_str


def test_views_keep_the_object_alive():
    f = k2.Fsa.from_str("0 1 1 0.5\n1 2 -1 0\n2")
    scores = np_(f.scores)
    del f
    import gc

    gc.collect()
    assert scores.tolist() == [0.5, 0.0]


def test_attribute_views_and_ragged_values_write_through():
    f = k2.Fsa.from_str("0 1 1 3 0.5\n1 2 -1 -1 0\n2", acceptor=False)
    aux = np_(f.aux_labels)
    assert np.shares_memory(aux, np_(f.aux_labels))
    f.words = k2.RaggedTensor([[5, 6], [7]])
    values = np_(f.words.values)
    values[values == 6] = 0
    assert f.words.tolist() == [[5, 0], [7]]


def test_results_own_the_rust_vector():
    f = k2.Fsa.from_str("0 1 2 0.5\n0 1 1 0.25\n1 2 -1 0\n2")
    _, arc_map = k2.arc_sort(f, ret_arc_map=True)
    arc_map = np_(arc_map)
    assert arc_map.flags.owndata is False  # base: the capsule holding the Rust Vec
    assert arc_map.base is not None and arc_map.flags.writeable


def test_log_probs_are_read_in_place():
    # the loss of a strided view equals that of a copy: the native side reads the view
    lp = np.log(np.full((1, 4, 6), 0.25, dtype=np.float32))[:, :, :4]
    dense = k2.DenseFsaVec(lp, np.array([[0, 0, 4]], dtype=np.int32))
    assert dense._log_probs is lp


def test_numpy_log_probs_are_copied_at_construction_as_in_k2():
    lp = np.log(np.full((1, 4, 3), 1 / 3, dtype=np.float32))
    dense = k2.DenseFsaVec(lp, np.array([[0, 0, 4]], dtype=np.int32))
    assert not dense._raw.borrowed
    g = k2.ctc_graph([[1]])
    before = np.asarray(k2.ctc_loss(g, dense, float("inf"), "none")).tolist()
    lp[0, :, 1] = 0.0  # a later write does not reach the copy
    assert np.asarray(k2.ctc_loss(g, dense, float("inf"), "none")).tolist() == before
    # a new DenseFsaVec reads the new values (label 1 now has probability 1 everywhere)
    fresh = k2.DenseFsaVec(lp, np.array([[0, 0, 4]], dtype=np.int32))
    after = np.asarray(k2.ctc_loss(g, fresh, float("inf"), "none"))
    assert after.tolist() != before


class DlpackOnly:
    """An array known only by the DLPack protocol (as a framework's tensor would be)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_objects_are_read_without_a_copy():
    lp = np.log(np.full((1, 4, 3), 1 / 3, dtype=np.float32))
    from arrays.k2 import _array

    seen = _array(DlpackOnly(lp), np.float32, "log_probs", 3)
    assert np.shares_memory(seen, lp)
    dense = k2.DenseFsaVec(DlpackOnly(lp), np.array([[0, 0, 4]], dtype=np.int32))
    loss = np.asarray(k2.ctc_loss(k2.ctc_graph([[1]]), dense, float("inf"), "none"))
    ref = np.asarray(
        k2.ctc_loss(
            k2.ctc_graph([[1]]),
            k2.DenseFsaVec(lp, np.array([[0, 0, 4]], dtype=np.int32)),
            float("inf"),
            "none",
        )
    )
    assert loss.tolist() == ref.tolist()


def test_views_of_an_empty_fsa():
    # the hostile value for the views' pointer arithmetic: no arcs, a dangling buffer
    f = k2.Fsa.from_str("")
    assert np_(f.scores).tolist() == [] and np_(f.labels).tolist() == []
    assert np_(f.arcs.values()).shape == (0, 4)
    f.extra = np.zeros(0, dtype=np.float32)
    assert np_(f.extra).tolist() == []
