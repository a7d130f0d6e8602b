"""An Fsa travels to another process by pickle (what Ray's object store does)."""

import multiprocessing
import pickle

import arrays.k2 as k2


def _describe(fsa):
    return str(fsa), fsa.get_tot_scores(True, False).tolist()


def test_fsa_ships_to_a_spawned_process():
    f = k2.Fsa.from_str("0 1 1 3 0.5\n0 1 2 4 0.25\n1 2 -1 -1 0\n2", acceptor=False)
    v = k2.create_fsa_vec([f, k2.linear_fst([5, 6], [7, 8])])
    v.note = "sent"
    assert len(pickle.dumps(v)) < 400  # compact: 16 bytes an arc plus the splits
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        text, tot = pool.apply(_describe, (v,))
    assert text == str(v)
    assert tot == [0.5, 0.0]
