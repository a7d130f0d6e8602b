"""RNN-T losses: values and gradients equal k2 1.23.2's, computed live with k2 on seeded
small shapes (losses to 1e-5 relative, gradients to 1e-4 absolute); the pruned recipe as
icefall trains; the numpy path; bad input raises ValueError."""

import numpy as np
import pytest

from conftest import need

import arrays.k2 as ak2

B, T, S, C = 2, 6, 3, 5


@pytest.fixture
def torch():
    return need("torch")


@pytest.fixture
def k2(torch):
    return need("k2")


def _case(torch, seed, rnnt_type="regular"):
    g = torch.Generator().manual_seed(seed)
    lm = torch.randn(B, S + 1, C, generator=g)
    am = torch.randn(B, T, C, generator=g)
    symbols = torch.randint(1, C, (B, S), generator=g)
    boundary = torch.tensor([[0, 0, S, T], [0, 0, S - 1, T - 2]], dtype=torch.int64)
    if rnnt_type != "regular":
        boundary = torch.tensor([[0, 0, S, T], [0, 0, S - 1, T - 1]], dtype=torch.int64)
    return lm, am, symbols, boundary


def _close_loss(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def _close_grad(a, b):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=1e-4)


def _run(f, lm, am, *args, **kw):
    lm = lm.clone().requires_grad_(True)
    am = am.clone().requires_grad_(True)
    out = f(lm, am, *args, **kw)
    loss = out[0] if isinstance(out, tuple) else out
    w = (
        loss.detach().clone().fill_(1.0) * 0.5
        if loss.dim() == 0
        else loss.new_tensor([0.5 + 0.25 * i for i in range(loss.numel())])
    )
    (loss * w).sum().backward()
    return out, lm.grad, am.grad


@pytest.mark.parametrize("rnnt_type", ["regular", "modified", "constrained"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["rnnt_loss_simple", "rnnt_loss_smoothed"])
def test_simple_and_smoothed_equal_k2(torch, k2, name, reduction, rnnt_type):
    if name == "rnnt_loss_smoothed" and reduction == "none":
        reduction_w = "none"
    else:
        reduction_w = reduction
    lm, am, symbols, boundary = _case(torch, 3, rnnt_type)
    kw = dict(boundary=boundary, rnnt_type=rnnt_type, reduction=reduction_w, delay_penalty=0.1)
    if name == "rnnt_loss_smoothed":
        kw.update(lm_only_scale=0.2, am_only_scale=0.15)
    if name == "rnnt_loss_smoothed" and reduction == "none":
        # the unigram joins the sequences: a uniform weight is back-propagated exactly
        lmo, amo = lm.clone().requires_grad_(True), am.clone().requires_grad_(True)
        lmt, amt = lm.clone().requires_grad_(True), am.clone().requires_grad_(True)
        a = getattr(ak2, name)(lmo, amo, symbols, 0, **kw)
        b = getattr(k2, name)(lmt, amt, symbols, 0, **kw)
        _close_loss(a, b)
        a.sum().backward()
        b.sum().backward()
        _close_grad(lmo.grad, lmt.grad)
        _close_grad(amo.grad, amt.grad)
        return
    (a, ga_lm, ga_am) = _run(getattr(ak2, name), lm, am, symbols, 0, **kw)
    (b, gb_lm, gb_am) = _run(getattr(k2, name), lm, am, symbols, 0, **kw)
    _close_loss(a, b)
    _close_grad(ga_lm, gb_lm)
    _close_grad(ga_am, gb_am)


@pytest.mark.parametrize("name", ["rnnt_loss_simple", "rnnt_loss_smoothed"])
def test_return_grad_equals_k2(torch, k2, name):
    lm, am, symbols, boundary = _case(torch, 5)
    a, (apx, apy) = getattr(ak2, name)(lm, am, symbols, 0, boundary=boundary, return_grad=True)
    b, (bpx, bpy) = getattr(k2, name)(lm, am, symbols, 0, boundary=boundary, return_grad=True)
    _close_loss(a, b)
    _close_grad(apx, bpx)
    _close_grad(apy, bpy)


@pytest.mark.parametrize("rnnt_type", ["regular", "modified"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_full_rnnt_loss_equals_k2(torch, k2, reduction, rnnt_type):
    g = torch.Generator().manual_seed(11)
    logits = torch.randn(B, T, S + 1, C, generator=g)
    _, _, symbols, boundary = _case(torch, 11, rnnt_type)
    outs = []
    for mod in (ak2, k2):
        x = logits.clone().requires_grad_(True)
        loss = mod.rnnt_loss(x, symbols, 0, boundary=boundary, rnnt_type=rnnt_type, reduction=reduction)
        (loss * (torch.arange(loss.numel()) + 1.0).reshape(loss.shape)).sum().backward()
        outs.append((loss, x.grad))
    _close_loss(outs[0][0], outs[1][0])
    _close_grad(outs[0][1], outs[1][1])


def _pruned_recipe(mod, torch, lm0, am0, symbols, boundary, s_range, rnnt_type):
    lm = lm0.clone().requires_grad_(True)
    am = am0.clone().requires_grad_(True)
    simple, (px_grad, py_grad) = mod.rnnt_loss_smoothed(
        lm, am, symbols, 0, lm_only_scale=0.25, am_only_scale=0.0, boundary=boundary,
        rnnt_type=rnnt_type, reduction="sum", return_grad=True,
    )
    ranges = mod.get_rnnt_prune_ranges(px_grad, py_grad, boundary, s_range)
    am_p, lm_p = mod.do_rnnt_pruning(am, lm, ranges)
    logits = torch.tanh(am_p + lm_p)
    pruned = mod.rnnt_loss_pruned(logits, symbols, ranges, 0, boundary=boundary,
                                  rnnt_type=rnnt_type, reduction="sum")
    (0.5 * simple + pruned).backward()
    return simple, ranges, pruned, lm.grad, am.grad


@pytest.mark.parametrize("rnnt_type", ["regular", "modified"])
@pytest.mark.parametrize("s_range", [2, 3, 5])
def test_pruned_recipe_equals_k2(torch, k2, s_range, rnnt_type):
    lm, am, symbols, boundary = _case(torch, 17, rnnt_type)
    a = _pruned_recipe(ak2, torch, lm, am, symbols, boundary, s_range, rnnt_type)
    b = _pruned_recipe(k2, torch, lm, am, symbols, boundary, s_range, rnnt_type)
    _close_loss(a[0], b[0])
    assert torch.equal(a[1], b[1])
    _close_loss(a[2], b[2])
    _close_grad(a[3], b[3])
    _close_grad(a[4], b[4])


def test_numpy_path_without_torch_grad():
    rng = np.random.default_rng(0)
    lm = rng.standard_normal((B, S + 1, C)).astype(np.float32)
    am = rng.standard_normal((B, T, C)).astype(np.float32)
    symbols = rng.integers(1, C, (B, S)).astype(np.int64)
    boundary = np.array([[0, 0, S, T], [0, 0, S - 1, T - 2]], dtype=np.int64)
    loss = ak2.rnnt_loss_simple(lm, am, symbols, 0, boundary, reduction="none")
    assert isinstance(loss, np.ndarray) and loss.shape == (B,) and np.all(loss > 0)
    loss2, (glm, gam) = ak2.rnnt_loss_simple_with_grad(lm, am, symbols, 0, boundary, reduction="sum")
    assert isinstance(loss2, np.ndarray) and loss2.shape == ()
    np.testing.assert_allclose(loss2, loss.sum(), rtol=1e-5)
    assert glm.shape == lm.shape and gam.shape == am.shape
    # d(loss)/d(am) summed over the classes is zero (each frame's log-softmax)
    s, (px_grad, py_grad) = ak2.rnnt_loss_smoothed(lm, am, symbols, 0, boundary=boundary, return_grad=True)
    ranges = ak2.get_rnnt_prune_ranges(px_grad, py_grad, boundary, 2)
    assert ranges.shape == (B, T, 2) and ranges.dtype == np.int64
    am_p, lm_p = ak2.do_rnnt_pruning(am, lm, ranges)
    assert am_p.shape == (B, T, 2, C) and lm_p.shape == (B, T, 2, C)
    np.testing.assert_array_equal(lm_p[1, 2, 1], lm[1, ranges[1, 2, 1]])
    pl, g = ak2.rnnt_loss_pruned_with_grad(am_p + lm_p, symbols, ranges, 0, boundary)
    assert g.shape == am_p.shape and np.isfinite(pl)
    fl, fg = ak2.rnnt_loss_with_grad(rng.standard_normal((B, T, S + 1, C)).astype(np.float32), symbols, 0)
    assert fg.shape == (B, T, S + 1, C) and np.isfinite(fl)


def test_numpy_path_equals_k2(torch, k2):
    lm, am, symbols, boundary = _case(torch, 23)
    a, (glm, gam) = ak2.rnnt_loss_smoothed_with_grad(lm.numpy(), am.numpy(), symbols.numpy(), 0,
                                                     boundary=boundary.numpy())
    _, b_lm, b_am = _run(k2.rnnt_loss_smoothed, lm, am, symbols, 0, boundary=boundary)
    b = k2.rnnt_loss_smoothed(lm, am, symbols, 0, boundary=boundary)
    np.testing.assert_allclose(a, b.numpy(), rtol=1e-5)
    np.testing.assert_allclose(glm * 0.5, b_lm.numpy(), atol=1e-4)
    np.testing.assert_allclose(gam * 0.5, b_am.numpy(), atol=1e-4)


@pytest.mark.parametrize(
    "call",
    [
        lambda lm, am, sy, bd: ak2.rnnt_loss_simple(lm, am, sy, 0, bd, reduction="avg"),
        lambda lm, am, sy, bd: ak2.rnnt_loss_simple(lm, am, sy, 0, bd, rnnt_type="odd"),
        lambda lm, am, sy, bd: ak2.rnnt_loss_simple(lm, am[:1], sy, 0, bd),
        lambda lm, am, sy, bd: ak2.rnnt_loss_simple(lm, am, sy, C + 3, bd),
        lambda lm, am, sy, bd: ak2.rnnt_loss_simple(lm, am, sy, -1, bd),
        lambda lm, am, sy, bd: ak2.rnnt_loss_simple(lm.astype(np.float64), am, sy, 0, bd),
        lambda lm, am, sy, bd: ak2.rnnt_loss_simple(lm, am, sy, 0, bd[:, :3]),
        lambda lm, am, sy, bd: ak2.get_rnnt_prune_ranges(
            np.zeros((B, S, T + 1), np.float32), np.zeros((B, S + 1, T), np.float32), bd, 0),
        lambda lm, am, sy, bd: ak2.do_rnnt_pruning(am, lm[:1], np.zeros((B, T, 2), np.int64)),
        lambda lm, am, sy, bd: ak2.rnnt_loss(np.zeros((B, T, S, C), np.float32), sy, 0, bd),
        lambda lm, am, sy, bd: ak2.rnnt_loss_pruned(
            np.zeros((B, T, 2, C), np.float32), sy, np.zeros((B, T, 3), np.int64), 0, bd),
    ],
)
def test_bad_input_raises_value_error(call):
    lm = np.zeros((B, S + 1, C), np.float32)
    am = np.zeros((B, T, C), np.float32)
    sy = np.ones((B, S), np.int64)
    bd = np.array([[0, 0, S, T]] * B, np.int64)
    with pytest.raises(ValueError):
        call(lm, am, sy, bd)


def test_indexes_out_of_range_raise_index_error():
    lm = np.zeros((B, S + 1, C), np.float32)
    am = np.zeros((B, T, C), np.float32)
    sy = np.ones((B, S), np.int64)
    with pytest.raises(IndexError):
        ak2.do_rnnt_pruning(am, lm, np.full((B, T, 2), 9, np.int64))
    with pytest.raises(IndexError):
        ak2.rnnt_loss_smoothed(lm, am, sy + C, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("modified", [False, True])
def test_mutual_information_recursion_equals_k2(torch, k2, dtype, modified):
    g = torch.Generator().manual_seed(29)
    dt = getattr(torch, dtype)
    px = torch.randn(B, S, T if modified else T + 1, generator=g).to(dt)
    py = torch.randn(B, S + 1, T, generator=g).to(dt)
    boundary = torch.tensor([[0, 0, S, T], [0, 1, S - 1, T - 1]], dtype=torch.int64)
    outs = []
    for mod in (ak2, k2):
        x, y = px.clone().requires_grad_(True), py.clone().requires_grad_(True)
        scores, (gx, gy) = mod.mutual_information_recursion(x, y, boundary, return_grad=True)
        (scores * torch.tensor([0.5, 2.0], dtype=dt)).sum().backward()
        outs.append((scores, gx, gy, x.grad, y.grad))
    _close_loss(outs[0][0], outs[1][0])
    for a, b in zip(outs[0][1:], outs[1][1:]):
        _close_grad(a.to(torch.float32), b.to(torch.float32))


@pytest.mark.parametrize("modified", [False, True])
def test_joint_mutual_information_recursion_equals_k2(torch, k2, modified):
    g = torch.Generator().manual_seed(31)
    shape_x = (B, S, T if modified else T + 1)
    px = [torch.randn(*shape_x, generator=g) for _ in range(3)]
    py = [torch.randn(B, S + 1, T, generator=g) for _ in range(3)]
    px[1][:, :, -1] = float("-inf")  # a -inf term: k2 clamps it, no nan
    boundary = torch.tensor([[0, 0, S, T], [0, 1, S - 1, T - 1]], dtype=torch.int64)
    outs = []
    for mod in (ak2, k2):
        xs = [x.clone().requires_grad_(True) for x in px]
        ys = [y.clone().requires_grad_(True) for y in py]
        prods = mod.joint_mutual_information_recursion(xs, ys, boundary)
        (prods * torch.tensor([[1.0], [0.5], [2.0]])).sum().backward()
        outs.append((prods, *[x.grad for x in xs], *[y.grad for y in ys]))
    assert outs[0][0].shape == (3, B)
    _close_loss(outs[0][0], outs[1][0])
    for a, b in zip(outs[0][1:], outs[1][1:]):
        _close_grad(a, b)
    # numpy in, numpy out, the same values
    plain = ak2.joint_mutual_information_recursion(
        [x.numpy() for x in px], [y.numpy() for y in py], boundary.numpy()
    )
    np.testing.assert_allclose(plain, outs[1][0].detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["rnnt_loss_simple", "rnnt_loss_smoothed", "rnnt_loss", "mi"])
def test_backward_three_times_through_one_graph(torch, k2, name):
    # the first backward scales the Rust buffers in place and hands them to torch as the
    # inputs' .grad; later ones (retain_graph) must compute them again, not reuse buffers
    # torch accumulated into: 3 passes at weight 0.5 give 1.5 times k2's gradient
    lm, am, symbols, boundary = _case(torch, 41)
    g = torch.Generator().manual_seed(41)
    logits = torch.randn(B, T, S + 1, C, generator=g)
    px = torch.randn(B, S, T + 1, generator=g)
    py = torch.randn(B, S + 1, T, generator=g)
    grads = []
    for mod in (ak2, k2):
        if name == "rnnt_loss":
            xs = [logits.clone().requires_grad_(True)]
            loss = mod.rnnt_loss(xs[0], symbols, 0, boundary=boundary, reduction="sum")
        elif name == "mi":
            xs = [px.clone().requires_grad_(True), py.clone().requires_grad_(True)]
            loss = mod.mutual_information_recursion(xs[0], xs[1], boundary).sum()
        else:
            xs = [lm.clone().requires_grad_(True), am.clone().requires_grad_(True)]
            loss = getattr(mod, name)(xs[0], xs[1], symbols, 0, boundary=boundary, reduction="sum")
        reps = 3 if mod is ak2 else 1
        for _ in range(reps):
            (0.5 * loss).backward(retain_graph=True)
        grads.append([x.grad / reps for x in xs])
    for a, b in zip(*grads):
        _close_grad(a, b)


def test_mutual_information_return_grad_left_alone_by_backward(torch, k2):
    # with return_grad the caller holds px_grad and py_grad: backward at weight 2 must copy
    # them, not scale the caller's tensors in place
    g = torch.Generator().manual_seed(43)
    px = torch.randn(B, S, T + 1, generator=g).requires_grad_(True)
    py = torch.randn(B, S + 1, T, generator=g).requires_grad_(True)
    boundary = torch.tensor([[0, 0, S, T], [0, 1, S - 1, T - 1]], dtype=torch.int64)
    scores, (gx, gy) = ak2.mutual_information_recursion(px, py, boundary, return_grad=True)
    (2.0 * scores.sum()).backward()
    _, (kx, ky) = k2.mutual_information_recursion(px.detach(), py.detach(), boundary, return_grad=True)
    _close_grad(gx, kx)
    _close_grad(gy, ky)
    _close_grad(px.grad, 2.0 * kx)
    _close_grad(py.grad, 2.0 * ky)


def test_first_backward_hands_the_rust_buffer_to_torch(torch, monkeypatch):
    # rnnt_loss's input gradient becomes logits.grad without a copy: same address
    seen = []
    inner = ak2._logits

    def spy(*args):
        raw = inner(*args)
        seen.append(raw[3].ctypes.data)
        return raw

    monkeypatch.setattr(ak2, "_logits", spy)
    _, _, symbols, boundary = _case(torch, 47)
    logits = torch.randn(B, T, S + 1, C, generator=torch.Generator().manual_seed(47))
    x = logits.requires_grad_(True)
    (3.0 * ak2.rnnt_loss(x, symbols, 0, boundary=boundary, reduction="sum")).backward()
    assert len(seen) == 1 and x.grad.data_ptr() == seen[0]


@pytest.mark.parametrize("rnnt_type", ["regular", "modified", "constrained"])
def test_get_rnnt_logprobs_equal_k2s(k2, torch, rnnt_type):
    lm, am, symbols, boundary = _case(torch, 11, rnnt_type)
    for ours, theirs in (
        (
            ak2.get_rnnt_logprobs(lm, am, symbols, C - 1, rnnt_type, boundary),
            k2.get_rnnt_logprobs(lm, am, symbols, C - 1, rnnt_type, boundary),
        ),
        (
            ak2.get_rnnt_logprobs_smoothed(lm, am, symbols, C - 1, 0.2, 0.1, boundary, rnnt_type),
            k2.get_rnnt_logprobs_smoothed(lm, am, symbols, C - 1, 0.2, 0.1, boundary, rnnt_type),
        ),
    ):
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
    # numpy in, numpy out
    px, _ = ak2.get_rnnt_logprobs(lm.numpy(), am.numpy(), symbols.numpy(), C - 1, rnnt_type)
    assert isinstance(px, np.ndarray)


def test_get_rnnt_logprobs_refuses_inputs_that_require_grad(torch):
    lm, am, symbols, _ = _case(torch, 12)
    with pytest.raises(NotImplementedError, match="back-propagate"):
        ak2.get_rnnt_logprobs(lm.requires_grad_(True), am, symbols, C - 1)
