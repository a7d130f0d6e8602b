"""The drop-in test: tests/dropin_body.py run with arrays.k2 against k2 1.23.2's results
(golden/dropin_k2.json, written by golden/generate_k2.py), and, where k2 is installed, the
same body run live with both."""

import json
import pathlib

import numpy as np
import pytest

from conftest import need

HERE = pathlib.Path(__file__).resolve().parent
GOLDEN = json.loads((HERE / "golden" / "dropin_k2.json").read_text())


def close(a, b, rel=1e-5, abs_=1e-6):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=rel, atol=abs_)


def compare(ours, theirs):
    for name in ("L", "G", "LG_compose", "LG_connect", "H"):
        o, t = ours[name], theirs[name]
        assert o["arcs"] == t["arcs"], name
        assert o["num_arcs"] == t["num_arcs"], name
        assert o["properties_str"] == t["properties_str"], name
        close(o["scores"], t["scores"])
        assert o.get("aux_labels") == t.get("aux_labels"), name
    assert ours["L_str"] == theirs["L_str"]
    for name in ("LG_det", "LG"):
        o, t = ours[name], theirs[name]
        assert (o["num_states"], o["num_arcs"]) == (t["num_states"], t["num_arcs"]), name
        assert [a[:2] for a in o["arcs"]] == [a[:2] for a in t["arcs"]], name
        close([a[2] for a in o["arcs"]], [a[2] for a in t["arcs"]], abs_=1e-4)
    assert ours["HLG"] == theirs["HLG"]
    close(ours["ctc_loss"], theirs["ctc_loss"])
    close(ours["ctc_grad"], theirs["ctc_grad"], abs_=1e-5)
    close(ours["lattice_tot"], theirs["lattice_tot"])
    assert ours["words"] == theirs["words"]
    assert ours["get_texts"] == theirs["get_texts"] == theirs["words"]
    close(ours["best_tot"], theirs["best_tot"])


def test_against_k2_golden():
    need("torch")
    import arrays.k2 as k2
    import dropin_body

    compare(dropin_body.run(k2), GOLDEN)


def test_against_k2_live():
    need("torch")
    k2_itself = need("k2")
    import arrays.k2 as k2
    import dropin_body

    compare(dropin_body.run(k2), dropin_body.run(k2_itself))
