"""torch adapters: tensors out sharing memory, ctc_loss and get_tot_scores back-propagate.

Checked against torch.nn.functional.ctc_loss (an independent CTC) and finite differences
(torch.autograd.gradcheck in float64)."""

import math

import numpy as np
import pytest

from conftest import need

import arrays.k2 as k2


@pytest.fixture
def torch():
    return need("torch")


def test_values_are_tensors_sharing_memory(torch):
    f = k2.Fsa.from_str("0 1 1 0.5\n1 2 -1 0\n2")
    assert isinstance(f.arcs.values(), torch.Tensor)
    assert f.arcs.values().dtype == torch.int32
    assert isinstance(f.scores, torch.Tensor) and f.scores.dtype == torch.float32
    assert f.scores.data_ptr() == f.arcs.values().data_ptr() + 12
    f.labels[0] = 7
    assert f.arcs.values()[0, 2].item() == 7


def test_dlpack_input(torch):
    lp = torch.log_softmax(torch.randn(1, 5, 4), -1)
    segs = torch.tensor([[0, 0, 5]], dtype=torch.int32)
    dense = k2.DenseFsaVec(lp, segs)
    assert isinstance(k2.ctc_loss(k2.ctc_graph([[1, 2]]), dense), torch.Tensor)


def _random_case(torch, seed):
    g = torch.Generator().manual_seed(seed)
    n, t, c = 3, 12, 6
    logits = torch.randn(n, t, c, generator=g, dtype=torch.float32)
    targets = [[1, 2, 2], [3, 4], [5, 1, 5, 2]]
    lengths = [12, 10, 11]
    return logits, targets, lengths


def test_ctc_loss_gradient_equals_torch_ctc_loss(torch):
    logits, targets, lengths = _random_case(torch, 3)
    # ours
    x = logits.clone().requires_grad_(True)
    segs = torch.tensor([[i, 0, lengths[i]] for i in range(3)], dtype=torch.int32)
    dense = k2.DenseFsaVec(x.log_softmax(-1), segs)
    ours = k2.ctc_loss(k2.ctc_graph(targets), dense, output_beam=float("inf"), reduction="sum")
    ours.backward()
    # torch's
    y = logits.clone().requires_grad_(True)
    flat = torch.tensor([s for t in targets for s in t], dtype=torch.long)
    ref = torch.nn.functional.ctc_loss(
        y.log_softmax(-1).transpose(0, 1),
        flat,
        torch.tensor(lengths),
        torch.tensor([len(t) for t in targets]),
        reduction="sum",
    )
    ref.backward()
    assert math.isclose(ours.item(), ref.item(), rel_tol=1e-5)
    torch.testing.assert_close(x.grad, y.grad, rtol=1e-4, atol=1e-5)


def test_ctc_loss_reductions_weight_the_gradient(torch):
    logits, targets, lengths = _random_case(torch, 4)
    segs = torch.tensor([[i, 0, lengths[i]] for i in range(3)], dtype=torch.int32)
    tl = torch.tensor([len(t) for t in targets])
    grads = {}
    for reduction in ("none", "mean"):
        x = logits.clone().requires_grad_(True)
        loss = k2.ctc_loss(
            k2.ctc_graph(targets),
            k2.DenseFsaVec(x.log_softmax(-1), segs),
            reduction=reduction,
            target_lengths=tl,
        )
        (loss.sum() if reduction == "none" else loss).backward()
        grads[reduction] = x.grad
        if reduction == "none":
            per = loss.detach()
    # mean = sum_i loss_i / len_i / N, so its gradient is per-segment scaled
    x = logits.clone().requires_grad_(True)
    loss = k2.ctc_loss(
        k2.ctc_graph(targets), k2.DenseFsaVec(x.log_softmax(-1), segs), reduction="none"
    )
    (loss / tl / 3).sum().backward()
    torch.testing.assert_close(grads["mean"], x.grad)
    assert per.shape == (3,)


def _torch_ctc_logits_grad(torch, logits, targets, lengths, scale):
    """torch's own CTC on log_softmax(logits): d(scale * sum of losses)/d(logits)."""
    y = logits.detach().clone().requires_grad_(True)
    flat = torch.tensor([s for t in targets for s in t], dtype=torch.long)
    ref = torch.nn.functional.ctc_loss(
        y.log_softmax(-1).transpose(0, 1),
        flat,
        torch.tensor(lengths),
        torch.tensor([len(t) for t in targets]),
        reduction="sum",
    )
    (ref * scale).backward()
    return y.grad


def _chain_through_log_softmax(logits, lp_grad):
    """d/d(logits) from d/d(log_softmax(logits)), by hand: g - softmax * sum(g)."""
    return lp_grad - logits.softmax(-1) * lp_grad.sum(-1, keepdim=True)


def test_ctc_loss_gradient_scaled_by_the_output_gradient(torch):
    # backward scales the stored gradient in place: 2.5 * loss gives 2.5 times torch's; the
    # log-probs are a leaf, so the gradient goes straight to lp.grad (no node in between)
    logits, targets, lengths = _random_case(torch, 6)
    lp = logits.log_softmax(-1).detach().requires_grad_(True)
    segs = torch.tensor([[i, 0, lengths[i]] for i in range(3)], dtype=torch.int32)
    loss = k2.ctc_loss(k2.ctc_graph(targets), k2.DenseFsaVec(lp, segs), float("inf"))
    (2.5 * loss).backward()
    expected = _torch_ctc_logits_grad(torch, logits, targets, lengths, 2.5)
    got = _chain_through_log_softmax(logits, lp.grad)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


def test_ctc_loss_backward_three_times_through_one_graph(torch):
    # the first backward hands its buffer to torch as lp.grad; the later ones (retain_graph)
    # must not read that buffer, which torch accumulates into: 3 passes give 3 times torch's
    logits, targets, lengths = _random_case(torch, 7)
    lp = logits.log_softmax(-1).detach().requires_grad_(True)
    segs = torch.tensor([[i, 0, lengths[i]] for i in range(3)], dtype=torch.int32)
    loss = k2.ctc_loss(k2.ctc_graph(targets), k2.DenseFsaVec(lp, segs), float("inf"))
    for _ in range(3):
        loss.backward(retain_graph=True)
    expected = _torch_ctc_logits_grad(torch, logits, targets, lengths, 3.0)
    got = _chain_through_log_softmax(logits, lp.grad)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    # and zeroing lp.grad in place (as optimizers do) leaves the next pass whole
    lp.grad.zero_()
    loss.backward()
    expected = _torch_ctc_logits_grad(torch, logits, targets, lengths, 1.0)
    got = _chain_through_log_softmax(logits, lp.grad)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


def test_gradcheck_float64(torch):
    logits, targets, lengths = _random_case(torch, 5)
    segs = torch.tensor([[i, 0, lengths[i]] for i in range(3)], dtype=torch.int32)
    graph = k2.ctc_graph(targets)

    def f(x):
        lp = x.log_softmax(-1)
        # the native loss reads float32; gradcheck perturbs in float64 and compares
        return k2.ctc_loss(graph, k2.DenseFsaVec(lp.float(), segs), float("inf"), "none").double()

    x = logits.double().requires_grad_(True)
    assert torch.autograd.gradcheck(f, (x,), eps=1e-3, atol=2e-3, rtol=1e-2)


def test_tot_scores_back_propagate_into_scores(torch):
    f = k2.Fsa.from_str("0 1 1 0.5\n0 1 2 0.25\n1 2 -1 0\n2")
    v = k2.create_fsa_vec([f])
    v.scores.requires_grad_(True)
    tot = v.get_tot_scores(use_double_scores=True, log_semiring=True)
    tot.sum().backward()
    p = math.exp(0.5) / (math.exp(0.5) + math.exp(0.25))
    np.testing.assert_allclose(v.scores.grad.numpy(), [p, 1 - p, 1.0], rtol=1e-6)
    # tropical: 1 on the best path
    w = k2.create_fsa_vec([f])
    w.scores.requires_grad_(True)
    w.get_tot_scores(True, False).sum().backward()
    assert w.scores.grad.tolist() == [1.0, 0.0, 1.0]


def test_scores_grad_flows_through_algorithms(torch):
    # arc_sort permutes the arcs: the gradient of the sorted scores goes back permuted
    f = k2.Fsa.from_str("0 1 2 0.5\n0 1 1 0.25\n1 2 -1 0\n2")
    f.scores.requires_grad_(True)
    s = k2.arc_sort(f)
    assert s.scores.tolist() == [0.25, 0.5, 0.0]
    (s.scores * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert f.scores.grad.tolist() == [10.0, 1.0, 100.0]
    # intersect of two acceptors sums one arc of each: each side gets the result's gradient
    a = k2.Fsa.from_str("0 1 1 0.5\n1 2 -1 0\n2")
    b = k2.Fsa.from_str("0 1 1 0.25\n1 2 -1 0\n2")
    a.scores.requires_grad_(True)
    c = k2.intersect(a, b)
    c.scores.sum().backward()
    assert a.scores.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("pruned", [False, True])
def test_intersect_dense_lattice_equals_k2(torch, pruned):
    """The lattice's frame attributes and the gradients of its total scores into the graph
    scores and the log-probs, against k2 1.23.2 run live (two segments of one sequence,
    one truncated, a CTC graph each)."""
    real_k2 = need("k2")
    g = torch.Generator().manual_seed(5)
    log_probs0 = torch.randn(2, 6, 4, generator=g).log_softmax(-1)
    segments = torch.tensor([[0, 0, 5], [1, 3, 4], [0, 3, 3]], dtype=torch.int32)
    outs = []
    for mod in (k2, real_k2):
        graph = mod.ctc_graph([[1, 2], [3], [2, 2]])
        graph.requires_grad_(True)
        log_probs = log_probs0.clone().requires_grad_(True)
        dense = mod.DenseFsaVec(log_probs, segments, allow_truncate=1)
        if pruned:
            lat = mod.intersect_dense_pruned(graph, dense, 20.0, 20.0, 1, 1000, "seqframe", "frame")
        else:
            lat = mod.intersect_dense(graph, dense, 20.0, seqframe_idx_name="seqframe", frame_idx_name="frame")
        lat.get_tot_scores(use_double_scores=True, log_semiring=True).sum().backward()
        outs.append((lat.seqframe, lat.frame, graph.grad, log_probs.grad))
    for ours, theirs in zip(*outs):
        assert torch.allclose(ours.to(torch.float32), theirs.to(torch.float32), atol=1e-5)
    with pytest.raises(ValueError, match="labels: the lattice already has"):
        k2.intersect_dense(k2.ctc_graph([[1]]), k2.DenseFsaVec(log_probs0, segments[:1]), 20.0, frame_idx_name="labels")


def test_intersect_dense_pruned_decoding_lattice_equals_k2(torch):
    """A decoding lattice (no frame attribute asked, nothing requiring grad: the arcs'
    frames are then not worked out) against k2 1.23.2 run live: total scores and best
    paths, and the same lattice with one frame attribute asked alone."""
    real_k2 = need("k2")
    g = torch.Generator().manual_seed(6)
    log_probs = torch.randn(2, 6, 4, generator=g).log_softmax(-1)
    segments = torch.tensor([[0, 0, 6], [1, 0, 5]], dtype=torch.int32)
    outs = []
    for mod in (k2, real_k2):
        graph = mod.ctc_graph([[1, 2], [3]])
        dense = mod.DenseFsaVec(log_probs, segments)
        lat = mod.intersect_dense_pruned(graph, dense, 20.0, 20.0, 1, 1000)
        best = mod.shortest_path(lat, use_double_scores=True)
        framed = mod.intersect_dense_pruned(graph, dense, 20.0, 20.0, 1, 1000, frame_idx_name="frame")
        outs.append((lat, best, framed))
    (lat, best, framed), (k2_lat, k2_best, k2_framed) = outs
    assert "frame" not in lat and "seqframe" not in lat and "seqframe" not in framed
    assert not lat.scores.requires_grad
    for ours, theirs in ((lat, k2_lat), (framed, k2_framed)):
        torch.testing.assert_close(
            ours.get_tot_scores(True, True).to(torch.float64),
            theirs.get_tot_scores(True, True).to(torch.float64),
        )
    assert best.labels.tolist() == k2_best.labels.tolist()
    assert sorted(framed.frame.tolist()) == sorted(k2_framed.frame.tolist())


def _random_dag_text(rng, n):
    # arcs i -> j (j > i) with seeded scores, two more parallel arcs 0 -> 1 and final arcs
    # into state n - 1 (no ties: torch's max shares a tie's gradient, k2 gives it to one arc)
    lines = []
    for i in range(n - 1):
        for j in range(i + 1, n - 1):
            if rng.random() < 0.6:
                lines.append(f"{i} {j} {1 + (i + j) % 3} {rng.normal():.4f}")
        lines.append(f"{i} {n - 1} -1 {rng.normal():.4f}")
    lines.append(f"0 1 2 {0.25}")
    lines.append(f"0 1 3 {0.5}")
    lines.append(str(n - 1))
    return "\n".join(sorted(lines[:-1], key=lambda l: int(l.split()[0])) + [lines[-1]])


def _naive_forward(torch, arcs, scores, num_states, log_semiring):
    # a loop over states with torch's own logsumexp / max: the independent model
    alpha = [torch.zeros((), dtype=torch.float64)]
    for d in range(1, num_states):
        inc = [alpha[int(a[0])] + scores[i] for i, a in enumerate(arcs) if int(a[1]) == d]
        if not inc:
            alpha.append(torch.tensor(-math.inf, dtype=torch.float64))
        elif log_semiring:
            alpha.append(torch.logsumexp(torch.stack(inc), 0))
        else:
            alpha.append(torch.stack(inc).max())
    return torch.stack(alpha)


@pytest.mark.parametrize("log_semiring", [True, False])
@pytest.mark.parametrize("use_double_scores", [True, False])
def test_forward_scores_back_propagate_into_scores(torch, log_semiring, use_double_scores):
    rng = np.random.default_rng(53)
    texts = [_random_dag_text(rng, n) for n in (6, 4, 7)]
    fsas = [k2.Fsa.from_str(t).requires_grad_(True) for t in texts]
    vec = k2.create_fsa_vec(fsas)
    fwd = vec.get_forward_scores(use_double_scores=use_double_scores, log_semiring=log_semiring)
    w = torch.tensor(rng.normal(size=fwd.numel()), dtype=fwd.dtype)
    (w * fwd).sum().backward()
    start = 0
    for f, t in zip(fsas, texts):
        arcs = f.arcs.values()
        n = int(arcs[:, 1].max()) + 1
        s = f.scores.detach().to(torch.float64).requires_grad_(True)
        expected = _naive_forward(torch, arcs, s, n, log_semiring)
        torch.testing.assert_close(fwd[start : start + n].to(torch.float64), expected, rtol=1e-5, atol=1e-5)
        (w[start : start + n].to(torch.float64) * expected).sum().backward()
        torch.testing.assert_close(f.grad.to(torch.float64), s.grad, rtol=1e-5, atol=1e-5)
        start += n
    assert start == fwd.numel()


def test_dense_fsa_vec_reads_a_tensor_in_place_and_refuses_one_changed_since(torch):
    logits, targets, lengths = _random_case(torch, 11)
    segs = torch.tensor([[i, 0, lengths[i]] for i in range(3)], dtype=torch.int32)
    graphs = k2.ctc_graph(targets)
    lp = logits.log_softmax(-1)
    dense = k2.DenseFsaVec(lp, segs)
    assert dense._raw.borrowed
    # the same loss as a numpy copy of the same values, which is copied
    copied = k2.DenseFsaVec(lp.numpy().copy(), segs.numpy())
    assert not copied._raw.borrowed
    ref = k2.ctc_loss(graphs, copied, float("inf"), "none")
    assert k2.ctc_loss(graphs, dense, float("inf"), "none").tolist() == np.asarray(ref).tolist()
    # an in-place write after construction: k2 would use its copy; we refuse, naming it
    lp[0, 0, 0] = 0.0
    with pytest.raises(RuntimeError, match="modified in place"):
        k2.ctc_loss(graphs, dense, float("inf"), "none")
    with pytest.raises(RuntimeError, match="modified in place"):
        dense.scores
    with pytest.raises(RuntimeError, match="modified in place"):
        k2.intersect_dense(graphs, dense, 10.0)
    # a tensor given other memory (set_) is refused before anything reads the old memory
    other = logits.log_softmax(-1)
    dense = k2.DenseFsaVec(other, segs)
    other.set_(other.clone())
    with pytest.raises(RuntimeError, match="modified in place"):
        k2.ctc_loss(graphs, dense, float("inf"), "none")
    # a DenseFsaVec built after the change reads the new values
    lp2 = logits.log_softmax(-1)
    lp2[1] = lp2[1].flip(0)
    fresh = k2.DenseFsaVec(lp2, segs)
    want = k2.ctc_loss(graphs, k2.DenseFsaVec(lp2.numpy().copy(), segs.numpy()), float("inf"), "none")
    assert k2.ctc_loss(graphs, fresh, float("inf"), "none").tolist() == np.asarray(want).tolist()


def test_a_second_backward_refuses_log_probs_changed_in_place(torch):
    logits, targets, lengths = _random_case(torch, 12)
    lp = logits.log_softmax(-1).detach().requires_grad_(True)
    segs = torch.tensor([[i, 0, lengths[i]] for i in range(3)], dtype=torch.int32)
    loss = k2.ctc_loss(k2.ctc_graph(targets), k2.DenseFsaVec(lp, segs), float("inf"))
    loss.backward(retain_graph=True)
    with torch.no_grad():
        lp.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_nan_in_a_borrowed_tensor_is_a_value_error_of_the_call(torch):
    lp = torch.full((1, 3, 3), -1.0)
    segs = torch.tensor([[0, 0, 3]], dtype=torch.int32)
    dense = k2.DenseFsaVec(lp, segs)
    lp2 = torch.full((1, 3, 3), -1.0)
    lp2[0, 1, 2] = float("nan")
    with pytest.raises(ValueError, match="log_probs\\[0, 1, 2\\] is NaN"):
        k2.ctc_loss(k2.ctc_graph([[1]]), k2.DenseFsaVec(lp2, segs), reduction="none")
    # bad segments are still the constructor's error
    with pytest.raises(ValueError, match="segment"):
        k2.DenseFsaVec(lp, torch.tensor([[0, 1, 3]], dtype=torch.int32))
    assert dense.duration.tolist() == [3]
