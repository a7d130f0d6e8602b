"""One icefall-style script body, run with k2 itself and with arrays.k2 (the drop-in test).

`run(k2)` builds L, G, LG and HLG as icefall's compile_hlg does, computes a CTC loss with
its gradient, and decodes random inputs; it returns plain lists and numbers, so the k2
results can be stored as a golden file (golden/generate_k2.py) and compared in CI.
"""

import numpy as np
import torch

# tokens: blank 0, a=1 b=2 c=3 d=4, #0=5; words: w1=1 ("a b"), w2=2 ("b c"), w3=3 ("a d"), #0=4
FIRST_TOKEN_DISAMBIG_ID = 5
FIRST_WORD_DISAMBIG_ID = 4
MAX_TOKEN = 4

L_TEXT = """0 1 1 1 -0.5
0 2 2 2 -0.25
0 3 1 3 -1.5
0 0 5 4 0
0 4 -1 -1 0
1 0 2 0 0
2 0 3 0 0
3 0 4 0 0
4
"""

G_TEXT = """0 1 1 1.25
0 2 2 0.75
0 3 3 2.0
1 0 4 0.25
1 2 3 0.5
2 0 4 0.125
3 0 4 0.5
0 0.5
1 1.0
"""


def fsa_summary(fsa):
    arcs = fsa.arcs.values()
    out = {
        "shape": [fsa.shape[0]],
        "num_arcs": int(arcs.shape[0]),
        "properties_str": fsa.properties_str,
        "arcs": arcs[:, :3].tolist(),
        "scores": fsa.scores.tolist(),
    }
    aux = getattr(fsa, "aux_labels", None)
    if aux is not None:
        if hasattr(aux, "tolist") and not hasattr(aux, "values"):
            out["aux_labels"] = aux.tolist()
        else:
            out["aux_labels"] = aux.tolist()
    return out


def unordered_summary(fsa):
    """What must agree when states may be numbered differently: the counts and the
    multiset of (label, words, score)."""
    arcs = fsa.arcs.values()
    aux = fsa.aux_labels
    aux = aux.tolist()
    items = sorted(
        [l, list(a) if isinstance(a, list) else [a], round(float(s), 4)]
        for l, a, s in zip(arcs[:, 2].tolist(), aux, fsa.scores.tolist())
    )
    return {
        "num_states": int(fsa.shape[0]),
        "num_arcs": int(arcs.shape[0]),
        "arcs": items,
    }


def get_texts(k2, best_paths):
    """icefall's get_texts (icefall/utils.py), verbatim but for the `k2` it is handed."""
    if isinstance(best_paths.aux_labels, k2.RaggedTensor):
        # remove 0's and -1's.
        aux_labels = best_paths.aux_labels.remove_values_leq(0)
        # TODO: change arcs.shape() to arcs.shape
        aux_shape = best_paths.arcs.shape().compose(aux_labels.shape)

        # remove the states and arcs axes.
        aux_shape = aux_shape.remove_axis(1)
        aux_shape = aux_shape.remove_axis(1)
        aux_labels = k2.RaggedTensor(aux_shape, aux_labels.values)
    else:
        # remove axis corresponding to states.
        aux_shape = best_paths.arcs.shape().remove_axis(1)
        aux_labels = k2.RaggedTensor(aux_shape, best_paths.aux_labels)
        # remove 0's and -1's.
        aux_labels = aux_labels.remove_values_leq(0)

    assert aux_labels.num_axes == 2
    return aux_labels.tolist()


def run(k2):
    out = {}
    # ---- graph building, as icefall's compile_hlg
    L = k2.Fsa.from_str(L_TEXT, acceptor=False)
    G = k2.Fsa.from_openfst(G_TEXT, acceptor=True)
    L = k2.arc_sort(L)
    G = k2.arc_sort(G)
    out["L"] = fsa_summary(L)
    out["G"] = fsa_summary(G)
    out["L_str"] = k2.to_str(L)
    LG = k2.compose(L, G)
    out["LG_compose"] = fsa_summary(LG)
    LG = k2.connect(LG)
    out["LG_connect"] = fsa_summary(LG)
    LG = k2.determinize(LG)
    LG = k2.connect(LG)
    out["LG_det"] = unordered_summary(LG)
    LG.labels[LG.labels >= FIRST_TOKEN_DISAMBIG_ID] = 0
    LG.__dict__["_properties"] = None
    assert isinstance(LG.aux_labels, k2.RaggedTensor)
    LG.aux_labels.values[LG.aux_labels.values >= FIRST_WORD_DISAMBIG_ID] = 0
    LG = k2.remove_epsilon(LG)
    LG = k2.connect(LG)
    LG.aux_labels = LG.aux_labels.remove_values_eq(0)
    LG = k2.arc_sort(LG)
    out["LG"] = unordered_summary(LG)
    H = k2.ctc_topo(MAX_TOKEN)
    out["H"] = fsa_summary(H)
    HLG = k2.compose(H, LG, inner_labels="tokens")
    HLG = k2.connect(HLG)
    HLG = k2.arc_sort(HLG)
    out["HLG"] = {
        "num_states": int(HLG.shape[0]),
        "num_arcs": int(HLG.num_arcs),
        "labels": sorted(HLG.labels.tolist()),
    }

    # ---- CTC loss with gradients
    rng = np.random.default_rng(7)
    logits = torch.from_numpy(rng.standard_normal((2, 9, MAX_TOKEN + 1)).astype(np.float32))
    logits.requires_grad_(True)
    log_probs = logits.log_softmax(-1)
    segments = torch.tensor([[0, 0, 9], [1, 1, 7]], dtype=torch.int32)
    graph = k2.ctc_graph([[1, 2], [3, 3, 4]])
    dense = k2.DenseFsaVec(log_probs, segments)
    loss = k2.ctc_loss(graph, dense, output_beam=10, reduction="none")
    loss.sum().backward()
    out["ctc_loss"] = loss.tolist()
    out["ctc_grad"] = logits.grad.tolist()

    # ---- decoding
    lp = torch.from_numpy(rng.standard_normal((2, 12, MAX_TOKEN + 1)).astype(np.float32))
    lp = lp.log_softmax(-1)
    dense = k2.DenseFsaVec(lp, torch.tensor([[0, 0, 12], [1, 0, 10]], dtype=torch.int32))
    lattice = k2.intersect_dense_pruned(HLG, dense, 20.0, 8.0, 30, 10000)
    out["lattice_tot"] = lattice.get_tot_scores(True, False).tolist()
    best = k2.shortest_path(lattice, use_double_scores=True)
    words = []
    for i in range(best.shape[0]):
        aux = best[i].aux_labels
        values = aux.values if hasattr(aux, "values") else aux
        words.append([int(w) for w in values.tolist() if w > 0])
    out["words"] = words
    out["get_texts"] = get_texts(k2, best)
    out["best_tot"] = best.get_tot_scores(True, False).tolist()
    return out
