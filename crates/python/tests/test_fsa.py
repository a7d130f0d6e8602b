"""arrays.k2's Fsa against hand-worked examples and k2's printed forms."""

import math
import pickle

import numpy as np
import pytest

import arrays.k2 as k2

ACCEPTOR = "0 1 1 0.5\n0 1 2 0.25\n1 2 -1 0\n2"
# k2 1.23.2's str() of Fsa.from_str("0 1 1 0.5\n1 2 -1 0\n2")
K2_STR = (
    'k2.Fsa: 0 1 1 0.5\n1 2 -1 0\n2\nproperties_str = "Valid|Nonempty|TopSorted|'
    "TopSortedAndAcyclic|ArcSorted|ArcSortedAndDeterministic|EpsilonFree|MaybeAccessible|"
    'MaybeCoaccessible".'
)


def np_(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def test_str_is_k2s():
    assert str(k2.Fsa.from_str("0 1 1 0.5\n1 2 -1 0\n2")) == K2_STR


def test_from_str_views():
    f = k2.Fsa.from_str(ACCEPTOR)
    arcs = np_(f.arcs.values())
    assert arcs.dtype == np.int32 and arcs.shape == (3, 4)
    assert arcs[:, :3].tolist() == [[0, 1, 1], [0, 1, 2], [1, 2, -1]]
    assert np_(f.scores).tolist() == [0.5, 0.25, 0.0]
    assert np_(f.labels).tolist() == [1, 2, -1]
    assert f.shape == (3, None)
    assert f.num_arcs == 3
    assert f.to_str().splitlines()[0] == "0 1 1 0.5"


def test_transducer_and_attributes():
    f = k2.Fsa.from_str("0 1 1 3 0.5\n1 2 -1 -1 0\n2", acceptor=False)
    assert np_(f.aux_labels).tolist() == [3, -1]
    f.lm_scores = np.array([1.5, 2.5], dtype=np.float32)
    assert np_(f.lm_scores).tolist() == [1.5, 2.5]
    f.note = "not a tensor"
    g = k2.arc_sort(f)
    assert np_(g.lm_scores).tolist() == [1.5, 2.5]
    assert g.note == "not a tensor"
    with pytest.raises(AttributeError):
        f.no_such_attribute


def test_tot_scores_by_hand():
    f = k2.Fsa.from_str(ACCEPTOR)
    log = float(np_(f.get_tot_scores(use_double_scores=True, log_semiring=True))[0])
    assert math.isclose(log, math.log(math.exp(0.5) + math.exp(0.25)), rel_tol=1e-12)
    trop = float(np_(f.get_tot_scores(use_double_scores=True, log_semiring=False))[0])
    assert trop == 0.5
    fwd = np_(f.get_forward_scores(True, True)).tolist()
    assert fwd[0] == 0.0 and math.isclose(fwd[2], log)
    post = np_(f.get_arc_post(True, True))
    assert math.isclose(math.exp(post[0]) + math.exp(post[1]), 1.0, rel_tol=1e-12)


def test_fsa_vec_and_indexing():
    a = k2.Fsa.from_str(ACCEPTOR)
    b = k2.linear_fsa([7, 8])
    v = k2.create_fsa_vec([a, b])
    assert v.shape == (2, None, None)
    assert np_(v[1].labels).tolist() == [7, 8, -1]
    # states per FSA: 3 and 4 (linear_fsa([7, 8]) is 0 -7-> 1 -8-> 2 -(-1)-> 3)
    assert np_(v.arcs.row_splits(1)).tolist() == [0, 3, 7]
    assert np_(v.arcs.row_splits(2)).tolist() == [0, 2, 3, 3, 4, 5, 6, 6]
    with pytest.raises(IndexError):
        v[2]
    assert np_(v[-1].labels).tolist() == [7, 8, -1]


def test_pickle_round_trip():
    f = k2.Fsa.from_str("0 1 1 3 0.5\n1 2 -1 -1 0\n2", acceptor=False)
    f.words = k2.RaggedTensor([[1, 2], []])
    f.name = "x"
    g = pickle.loads(pickle.dumps(f))
    assert str(g) == str(f)
    assert g.words.tolist() == [[1, 2], []]
    assert g.name == "x"


def test_ragged_tensor_like_k2():
    r = k2.RaggedTensor("[[1 2] [3]]")
    # k2 1.23.2's str()
    assert str(r) == "RaggedTensor([[1, 2],\n              [3]], dtype=torch.int32)"
    r3 = k2.RaggedTensor([[[1, 2], [3]], [[4]]])
    assert str(r3) == (
        "RaggedTensor([[[1, 2],\n               [3]],\n              [[4]]], dtype=torch.int32)"
    )
    assert str(r3.shape) == "[ [ [ x x ] [ x ] ] [ [ x ] ] ]"
    assert np_(r.sum()).tolist() == [3, 3]
    assert np_(r.max()).tolist() == [2, 3]
    assert r3.remove_axis(1).tolist() == [[1, 2, 3], [4]]
    idx, _ = r3.index(np.array([1, 0], dtype=np.int32), axis=0)
    assert idx.tolist() == [[[4]], [[1, 2], [3]]]
    assert r.numel() == 3 and r.tot_size(1) == 3
    assert np_(r.row_splits(1)).tolist() == [0, 2, 3]


def test_algorithms_by_hand():
    f = k2.Fsa.from_str("0 1 2 0.5\n0 1 1 0.25\n1 2 -1 0\n2")
    s, arc_map = k2.arc_sort(f, ret_arc_map=True)
    assert np_(s.labels).tolist() == [1, 2, -1]
    assert np_(arc_map).tolist() == [1, 0, 2]
    c = k2.closure(k2.linear_fsa([5]))
    assert np_(c.labels).tolist() == [5, -1, 0]
    u = k2.union(k2.create_fsa_vec([k2.linear_fsa([1]), k2.linear_fsa([2])]))
    assert np_(u.labels).tolist()[:2] == [0, 0]
    t = k2.ctc_topo(2)
    assert t.shape[0] == 4 and t.num_arcs == 12
    best = k2.shortest_path(k2.create_fsa_vec([f]), use_double_scores=True)
    assert np_(best[0].labels).tolist() == [2, -1]


def test_symbol_table(tmp_path):
    p = tmp_path / "words.txt"
    p.write_text("<eps> 0\nhello 1\nworld 2\n")
    t = k2.SymbolTable.from_file(str(p))
    assert t.get("world") == 2 and t.get(1) == "hello"
    with pytest.raises(OSError):
        k2.SymbolTable.from_file(str(tmp_path / "missing.txt"))


def test_device_other_than_cpu_is_not_implemented():
    with pytest.raises(NotImplementedError):
        k2.ctc_topo(3, device="cuda:0")
    with pytest.raises(NotImplementedError):
        k2.Fsa.from_str(ACCEPTOR).to("cuda")
    for name in ("CtcLoss", "sparse", "mwer_loss", "replace_fsa", "OnlineDenseIntersecter",
                 "RnntDecodingStreams", "get_rnnt_logprobs_pruned", "to_tensor"):
        with pytest.raises(NotImplementedError, match="not reproduced; use"):
            getattr(k2, name)
    with pytest.raises(AttributeError):
        k2.no_such_name


def test_draw_writes_svg_when_graphviz_is_there(tmp_path):
    import shutil

    f = k2.Fsa.from_str(ACCEPTOR)
    dot = f.draw(None, title="two arcs")
    assert dot.startswith("digraph") and "two arcs" in dot
    if shutil.which("dot"):
        out = tmp_path / "f.svg"
        f.draw(str(out))
        assert out.read_text().lstrip().startswith(("<?xml", "<svg"))


def test_random_paths_and_nbest_on_a_two_path_fsa():
    # two paths, labels 1 and 2, probabilities e^0.5 and e^0.25 (normalised)
    v = k2.create_fsa_vec([k2.Fsa.from_str(ACCEPTOR)])
    paths = k2.random_paths(v, use_double_scores=True, num_paths=50)
    rows = paths.tolist()[0]
    assert len(rows) == 50
    # each path is an arc list: one of the two first arcs, then the final arc
    assert {tuple(r) for r in rows} <= {(0, 2), (1, 2)}
    lattice = k2.create_fsa_vec([k2.Fsa.from_str("0 1 1 3 0.5\n0 1 2 4 0.25\n1 2 -1 -1 0\n2", acceptor=False)])
    nbest = k2.Nbest.from_lattice(lattice, num_paths=20, nbest_scale=1.0)
    texts = nbest.texts()[0]
    assert texts[0] == [3] and sorted(map(tuple, texts)) <= [(3,), (4,)]
    best = k2.one_best(lattice)
    assert best[0][1] == [3] and abs(best[0][2] - 0.5) < 1e-12


def test_ragged_tensor_from_shape_and_values_and_from_a_2d_array():
    r = k2.RaggedTensor("[[1 2] [3]]")
    s = k2.RaggedTensor(r.shape, np.array([7, 8, 9], dtype=np.int32))
    assert s.tolist() == [[7, 8], [9]]
    with pytest.raises(ValueError):
        k2.RaggedTensor(r.shape, np.array([7], dtype=np.int32))
    d = k2.RaggedTensor(np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int32))
    assert d.tolist() == [[1, 2], [3, 4], [5, 6]]


# "1 2" by two paths of score 3 (tropical 3, log 3 + ln 2) and "1" scored 0, against one
# path per sequence
TWO_PATHS = "0 1 1 1\n0 2 1 2\n0 3 1 0\n1 3 2 2\n2 3 2 1\n3 4 -1 0\n4"
ONE_PATH = "0 1 1 3\n0 2 1 0\n1 2 2 0\n2 3 -1 0\n3"


def test_is_rand_equivalent_hand_worked():
    a, b = k2.Fsa.from_str(TWO_PATHS), k2.Fsa.from_str(ONE_PATH)
    assert k2.is_rand_equivalent(a, b, log_semiring=False)
    assert not k2.is_rand_equivalent(a, b, log_semiring=True)
    log_sum = k2.Fsa.from_str(ONE_PATH.replace("0 1 1 3", f"0 1 1 {3 + math.log(2)}"))
    assert k2.is_rand_equivalent(a, log_sum, log_semiring=True)
    off = k2.Fsa.from_str(ONE_PATH.replace("0 1 1 3", "0 1 1 3.5"))
    assert not k2.is_rand_equivalent(b, off, log_semiring=False)
    with pytest.raises(ValueError, match="must both be single FSAs or both FsaVecs"):
        k2.is_rand_equivalent(a, k2.create_fsa_vec([b]), log_semiring=False)


def test_random_fsa_follows_its_arguments_and_python_seed():
    import random

    random.seed(5)
    f = k2.random_fsa(acyclic=True, max_symbol=7, min_num_arcs=10, max_num_arcs=30)
    random.seed(5)
    g = k2.random_fsa(acyclic=True, max_symbol=7, min_num_arcs=10, max_num_arcs=30)
    assert k2.to_str_simple(f) == k2.to_str_simple(g)
    arcs = np_(f.arcs.values())
    assert 10 <= len(arcs) <= 30
    final = int(arcs[:, 1].max())
    assert np.all(arcs[:, 1] > arcs[:, 0])  # acyclic
    assert np.all((arcs[:, 2] == -1) == (arcs[:, 1] == final))
    assert np.all((arcs[:, 2] >= -1) & (arcs[:, 2] <= 7))
    with pytest.raises(ValueError, match="max_num_arcs"):
        k2.random_fsa(min_num_arcs=5, max_num_arcs=4)


def test_log_weight_pushing_keeps_each_sequence_best_score():
    # "1 2": best 3 of two paths, "1": 0 (hand-worked above); pushed with log-sum, the
    # result is deterministic and each sequence keeps its best score
    d = k2.arc_sort(k2.determinize(k2.Fsa.from_str(TWO_PATHS), k2.DeterminizeWeightPushingType.kLogWeightPushing))
    assert d.properties & k2.fsa_properties.ARC_SORTED_AND_DETERMINISTIC
    for seq, best in (([1, 2], 3.0), ([1], 0.0)):
        both = k2.intersect(d, k2.linear_fsa(seq), treat_epsilons_specially=True)
        tot = k2.create_fsa_vec([k2.connect(both)]).get_tot_scores(True, False)
        assert math.isclose(float(tot[0]), best, abs_tol=1e-5), (seq, float(tot[0]))


def test_fsa_properties_names():
    assert k2.fsa_properties.ARC_SORTED_AND_DETERMINISTIC == 0x20
    assert k2.fsa_properties.to_str(0x01 | 0x04 | 0x100) == "Valid|TopSorted|MaybeCoaccessible"
    assert k2.fsa_properties.to_str(0) == ""


def test_ragged_tensors_of_floats_hand_worked():
    """k2.ragged on float values, with or without torch (numpy out without it)."""
    r = k2.RaggedTensor("[[1.5 2] [] [3]]")
    assert "float32" in str(r.dtype) and r.tolist() == [[1.5, 2.0], [], [3.0]]
    assert str(r) == "RaggedTensor([[1.5, 2.0],\n              [],\n              [3.0]], dtype=torch.float32)"
    assert np.asarray(r.sum()).tolist() == [3.5, 0.0, 3.0]
    assert np.asarray(r.max(initial_value=0)).tolist() == [2.0, 0.0, 3.0]
    assert np.asarray(r.argmax()).tolist() == [1, -1, 2]
    n = r.normalize(use_log=False)
    np.testing.assert_allclose(np.asarray(n.values), [1.5 / 3.5, 2 / 3.5, 1.0], rtol=1e-6)
    lg = r.normalize(use_log=True)
    lse = math.log(math.exp(1.5) + math.exp(2.0))
    np.testing.assert_allclose(np.asarray(lg.values), [1.5 - lse, 2.0 - lse, 0.0], rtol=1e-6)
    assert np.asarray(r.pad("replicate", -1.0)).tolist() == [[1.5, 2.0], [-1.0, -1.0], [3.0, 3.0]]
    d = k2.RaggedTensor([[3, 1, 2], [5, 4]], dtype="float64")
    assert np.asarray(d.sort_(descending=True, need_new2old_indexes=True)).tolist() == [0, 2, 1, 3, 4]
    assert d.tolist() == [[3.0, 2.0, 1.0], [5.0, 4.0]]
    both = k2.ragged.cat([d, k2.RaggedTensor([[7.0]], dtype="float64")], axis=0)
    assert both.tolist() == [[3.0, 2.0, 1.0], [5.0, 4.0], [7.0]] and both.num_axes == 2
    u, reps, new2old = k2.RaggedTensor([[2, 1], [1], [2, 1]]).unique(True, True)
    assert u.tolist() == [[1], [2, 1]] and reps.tolist() == [[1, 2]]
    assert np.asarray(new2old).tolist() == [1, 0]
    back = pickle.loads(pickle.dumps(d))
    assert back == d and back != k2.RaggedTensor([[3, 2, 1], [5, 4]])  # int32 differs
    with pytest.raises(ValueError):
        k2.RaggedTensor([[1], [[2]]])
    with pytest.raises(ValueError):
        k2.RaggedTensor("[[1 2] [3]", dtype="float32")


def test_ragged_shape_index_and_row_ids_hand_worked():
    shape = k2.RaggedShape("[ [x x] [] [x x x] ]")
    ans, vi = shape.index(axis=0, indexes=np.array([2, -1, 0], dtype=np.int32))
    assert ans == k2.RaggedShape("[ [x x x] [] [x x] ]")
    assert np.asarray(vi).tolist() == [2, 3, 4, 0, 1]
    s2 = k2.ragged.create_ragged_shape2(row_ids=np.array([0, 0, 2], dtype=np.int32))
    assert s2 == k2.RaggedShape("[ [x x] [] [x] ]") and s2.max_size(1) == 2
    with pytest.raises(ValueError):
        k2.ragged.create_ragged_shape2(row_ids=np.array([1, 0], dtype=np.int32))


def test_expand_ragged_attributes_of_an_fsa_vec_hand_worked():
    """Each arc becomes a chain through new states numbered right after its source state,
    score and label on the first arc; an arc into the final state ends in -1, one arc more
    when its list does not end in -1 (k2's ExpandArcs)."""
    a = k2.Fsa.from_str("0 1 2 10\n0 1 1 20\n1 2 -1 30\n2")
    a.ragged_attr = k2.RaggedTensor([[1, 2, 3], [5, 6], []])
    a.ints = np.array([4, 5, 6], dtype=np.int32)
    b = k2.Fsa.from_str("0 1 -1 5\n1")
    b.ragged_attr = k2.RaggedTensor([[7, 8]])
    b.ints = np.array([9], dtype=np.int32)
    d, arc_map = k2.expand_ragged_attributes(k2.create_fsa_vec([a, b]), ret_arc_map=True)
    arcs = np.asarray(d.arcs.values())[:, :3].tolist()
    assert arcs == [
        [0, 1, 2], [0, 3, 1], [1, 2, 0], [2, 4, 0], [3, 4, 0], [4, 5, -1],
        [0, 1, 0], [1, 2, 0], [2, 3, -1],
    ]
    assert np.asarray(d.scores).tolist() == [10, 20, 0, 0, 0, 30, 5, 0, 0]
    assert np.asarray(arc_map).tolist() == [0, 1, -1, -1, -1, 2, 3, -1, -1]
    assert np.asarray(d.ragged_attr).tolist() == [1, 5, 2, 3, 6, -1, 7, 8, -1]
    assert np.asarray(d.ints).tolist() == [4, 5, 0, 0, 0, 6, 9, 0, 0]
    assert k2.expand_ragged_attributes(b, ragged_attribute_names=[]) is b
    with pytest.raises(ValueError):
        k2.expand_ragged_attributes(a, ragged_attribute_names=["ints"])


def test_intersect_device_arc_maps_point_into_the_inputs():
    """FSA i intersects a[b_to_a_map[i]] with b[i], epsilon as an ordinary symbol: each
    result arc's score is the sum of the two arcs its maps name, its label theirs."""
    a0 = k2.Fsa.from_str("0 1 0 0.1\n0 1 1 0.2\n1 2 0 0.4\n1 2 2 0.3\n2 3 -1 0.5\n3")
    a1 = k2.Fsa.from_str("0 1 1 1.5\n1 2 -1 0.25\n2")
    b0 = k2.Fsa.from_str("0 1 0 1\n1 1 2 2\n1 2 -1 3\n2")
    b1 = k2.Fsa.from_str("0 1 1 10\n1 2 -1 30\n2")
    a = k2.create_fsa_vec([a0, a1])
    b = k2.create_fsa_vec([b0, b1, b0])
    c, a_map, b_map = k2.intersect_device(a, b, np.array([0, 1, 0], dtype=np.int32), ret_arc_maps=True)
    assert c.shape == (3, None, None)
    a_map, b_map = np.asarray(a_map), np.asarray(b_map)
    assert (a_map >= 0).all() and (b_map >= 0).all()
    labels = np.asarray(c.labels)
    np.testing.assert_array_equal(labels, np.asarray(a.labels)[a_map])
    np.testing.assert_array_equal(labels, np.asarray(b.labels)[b_map])
    np.testing.assert_allclose(
        np.asarray(c.scores), np.asarray(a.scores)[a_map] + np.asarray(b.scores)[b_map], rtol=1e-6
    )
    # FSA 1 is a1 with b1 (arcs 5 and 6 of a): the path 1, -1 scoring 1.5 + 10 + 0.25 + 30
    assert k2.to_str_simple(k2.connect(c)[1]) == "0 1 1 11.5\n1 2 -1 30.25\n2\n"
    assert sorted(set(a_map[np.asarray(c.arcs.row_ids(1))[np.asarray(c.arcs.row_ids(2))] == 1])) == [5, 6]
    with pytest.raises(ValueError):
        k2.intersect_device(a, b, np.array([0], dtype=np.int32))
