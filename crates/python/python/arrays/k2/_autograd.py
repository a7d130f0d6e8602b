"""torch autograd for arrays.k2 (imported only when torch is there and a tensor needs it).

Each Function's backward returns the gradient the Rust code computed in the forward pass
(ctc_loss) or computes it from the arc posteriors (get_tot_scores); nothing is recorded
on torch's tape but the one node.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from arrays import _native


class _CtcLoss(torch.autograd.Function):
    """The loss with the gradient the Rust code computed beside it. The first backward
    hands that buffer (a numpy array owning the Rust allocation) to torch, scaled in place
    when grad_output is not 1, so AccumulateGrad takes it as ``log_probs.grad`` without a
    copy; a later backward through the same graph (``retain_graph=True``) computes the
    gradient again, since torch may have accumulated into the buffer it was given."""

    @staticmethod
    def forward(ctx: Any, log_probs: torch.Tensor, graph: Any, dense: Any, output_beam: float) -> torch.Tensor:  # type: ignore[override]
        loss, grad = _native.ctc_loss(graph._raw, dense._native(), output_beam)
        ctx.grad = grad
        ctx.graph = graph
        ctx.dense = dense
        ctx.output_beam = output_beam
        ctx.dtype = log_probs.dtype
        # float64 to float32 as torch's .to rounds it (to nearest), without a torch call
        return torch.from_numpy(loss.astype(np.float32))

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> Any:  # type: ignore[override]
        grad = ctx.grad
        ctx.grad = None
        if grad is None:
            _, grad = _native.ctc_loss(ctx.graph._raw, ctx.dense._native(), ctx.output_beam)
        grad = torch.from_numpy(grad)
        # the segments' output gradients as Python floats (exact), in one torch call: a
        # backward right after the loss finds torch's code cold, so each call counts
        g = grad_output.tolist()
        if not g:
            grad.zero_()
        elif all(x == g[0] for x in g):
            if g[0] != 1.0:
                grad.mul_(g[0])
        else:
            from arrays.k2 import _segment_weights  # noqa: PLC0415

            w = _segment_weights(ctx.dense, np.asarray(g, dtype=np.float64), tuple(grad.shape))
            grad.mul_(torch.from_numpy(w).to(grad.dtype))
        if grad.dtype != ctx.dtype:
            grad = grad.to(ctx.dtype)
        return grad, None, None, None


def ctc_loss(graph: Any, dense: Any, output_beam: float, reduction: str, target_lengths: Any) -> torch.Tensor:
    log_probs = dense._log_probs
    loss = _CtcLoss.apply(log_probs, graph, dense, output_beam)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    tl = torch.as_tensor(target_lengths).to(loss.dtype)
    return (loss / tl).mean()


class _TotScores(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, scores: torch.Tensor, fsa: Any, use_double_scores: bool, log_semiring: bool) -> torch.Tensor:  # type: ignore[override]
        tot = fsa._raw.get_tot_scores(bool(use_double_scores), bool(log_semiring))
        grad, fsa_of_arc = fsa._raw.tot_scores_grad(bool(log_semiring))
        ctx.grad = torch.from_numpy(grad)
        ctx.fsa_of_arc = torch.from_numpy(fsa_of_arc).to(torch.int64)
        ctx.dtype = scores.dtype
        return torch.from_numpy(tot)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> Any:  # type: ignore[override]
        per_arc = grad_output.to(torch.float64)[ctx.fsa_of_arc] * ctx.grad
        return per_arc.to(ctx.dtype), None, None, None


def tot_scores(fsa: Any, scores: torch.Tensor, use_double_scores: bool, log_semiring: bool) -> torch.Tensor:
    return _TotScores.apply(scores, fsa, use_double_scores, log_semiring)


class _ForwardScores(torch.autograd.Function):
    """get_forward_scores with k2's backward: each state's gradient flows back to the arcs
    entering it, weighted by the arc's share of the state's forward score (log semiring:
    exp(alpha[src] + score - alpha[dest]); tropical: 1 for the best arc, the first of a
    tie), and on to the arc's source state, in decreasing state order (top-sorted)."""

    @staticmethod
    def forward(ctx: Any, scores: torch.Tensor, fsa: Any, use_double_scores: bool, log_semiring: bool) -> torch.Tensor:  # type: ignore[override]
        raw = fsa._raw
        out = raw.get_forward_scores(bool(use_double_scores), bool(log_semiring))
        alpha = np.asarray(raw.get_forward_scores(True, bool(log_semiring)), dtype=np.float64)
        axis = raw.num_axes - 1
        splits = np.asarray(raw.row_splits(axis), dtype=np.int64)
        src = np.asarray(raw.row_ids(axis), dtype=np.int64)
        arcs = np.asarray(raw.arcs())
        dest = src - arcs[:, 0].astype(np.int64) + arcs[:, 1].astype(np.int64)
        v = alpha[src] + scores.detach().to(torch.float64).numpy()
        if log_semiring:
            finite = np.isfinite(alpha[dest])
            p = np.where(finite, np.exp(np.where(finite, v - alpha[dest], 0.0)), 0.0)
        else:
            p = np.zeros(len(v))
            best = np.full(len(alpha), -np.inf)
            np.maximum.at(best, dest, v)
            taken = np.zeros(len(alpha), dtype=bool)
            for a in np.nonzero((v == best[dest]) & np.isfinite(v))[0]:
                if not taken[dest[a]]:
                    taken[dest[a]] = True
                    p[a] = 1.0
        ctx.graph = (splits, dest, p)
        ctx.dtype = scores.dtype
        return torch.from_numpy(np.asarray(out))

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> Any:  # type: ignore[override]
        splits, dest, p = ctx.graph
        g = grad_output.detach().to(torch.float64).numpy().copy()
        for s in range(len(g) - 1, -1, -1):
            b, e = splits[s], splits[s + 1]
            if e > b:
                g[s] += float(np.dot(g[dest[b:e]], p[b:e]))
        arc_grad = g[dest] * p
        return torch.from_numpy(arc_grad).to(ctx.dtype), None, None, None


def forward_scores(fsa: Any, scores: torch.Tensor, use_double_scores: bool, log_semiring: bool) -> torch.Tensor:
    """get_forward_scores as a tensor that back-propagates into ``scores``."""
    return _ForwardScores.apply(scores, fsa, use_double_scores, log_semiring)


def _arc_states(raw: Any) -> Any:
    """Per arc its source and destination state (idx01), and the leaving arcs' splits."""
    axis = raw.num_axes - 1
    splits = np.asarray(raw.row_splits(axis), dtype=np.int64)
    src = np.asarray(raw.row_ids(axis), dtype=np.int64)
    arcs = np.asarray(raw.arcs())
    dest = src - arcs[:, 0].astype(np.int64) + arcs[:, 1].astype(np.int64)
    return splits, src, dest


def _fsa_states(raw: Any) -> np.ndarray:
    """The states' splits per FSA (one FSA for a 2-axis Fsa)."""
    if raw.num_axes == 3:
        return np.asarray(raw.row_splits(1), dtype=np.int64)
    return np.asarray([0, len(raw.row_splits(1)) - 1], dtype=np.int64)


class _BackwardScores(torch.autograd.Function):
    """get_backward_scores with k2's backward (BackpropGetBackwardScores): each state's
    gradient flows to the arcs leaving it, weighted by the arc's share of the state's
    backward score (log semiring: exp(score + beta[dest] - beta[src]), 0 where beta[src]
    is -inf; tropical: 1 for the best leaving arc, the last of a tie as k2's CPU
    ArgMaxPerSublist), and on to the arc's destination state, in increasing state order
    (top-sorted)."""

    @staticmethod
    def forward(ctx: Any, scores: torch.Tensor, fsa: Any, use_double_scores: bool, log_semiring: bool) -> torch.Tensor:  # type: ignore[override]
        raw = fsa._raw
        out = raw.get_backward_scores(bool(use_double_scores), bool(log_semiring))
        beta = np.asarray(raw.get_backward_scores(True, bool(log_semiring)), dtype=np.float64)
        splits, src, dest = _arc_states(raw)
        v = beta[dest] + scores.detach().to(torch.float64).numpy()
        if log_semiring:
            finite = np.isfinite(beta[src])
            with np.errstate(invalid="ignore", over="ignore"):
                p = np.where(finite, np.exp(np.where(finite, v - beta[src], -np.inf)), 0.0)
        else:
            p = np.zeros(len(v))
            for s in range(len(splits) - 1):
                b, e = int(splits[s]), int(splits[s + 1])
                if e > b:
                    row = v[b:e]
                    # the last of the maxima (k2: `elem >= val`, from -inf)
                    p[b + (e - b - 1) - int(np.argmax(row[::-1]))] = 1.0
        ctx.graph = (splits, dest, p)
        ctx.dtype = scores.dtype
        return torch.from_numpy(np.asarray(out))

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> Any:  # type: ignore[override]
        splits, dest, p = ctx.graph
        g = grad_output.detach().to(torch.float64).numpy().copy()
        for s in range(len(g)):
            b, e = splits[s], splits[s + 1]
            if e > b:
                np.add.at(g, dest[b:e], g[s] * p[b:e])
        src = np.repeat(np.arange(len(g)), np.diff(splits))
        arc_grad = g[src] * p
        return torch.from_numpy(arc_grad).to(ctx.dtype), None, None, None


def backward_scores(fsa: Any, scores: torch.Tensor, use_double_scores: bool, log_semiring: bool) -> torch.Tensor:
    """get_backward_scores as a tensor that back-propagates into ``scores``."""
    return _BackwardScores.apply(scores, fsa, use_double_scores, log_semiring)


class _ArcPost(torch.autograd.Function):
    """get_arc_post (alpha[src] + score + beta[dest] - (alpha[final] + beta[start]) / 2)
    with k2's backward (BackpropGetArcPost): the arc's gradient goes to its score, to its
    source state's forward score and to its destination state's backward score; the
    final state's forward score and the start state's backward score get -1/2 of the
    FSA's summed arc gradient (set, not added, as k2 does)."""

    @staticmethod
    def forward(ctx: Any, scores: torch.Tensor, fwd: torch.Tensor, bwd: torch.Tensor, fsa: Any, use_double_scores: bool, log_semiring: bool) -> torch.Tensor:  # type: ignore[override]
        raw = fsa._raw
        out = raw.get_arc_post(bool(use_double_scores), bool(log_semiring))
        splits, src, dest = _arc_states(raw)
        ctx.graph = (src, dest, len(splits) - 1, _fsa_states(raw))
        ctx.dtypes = (scores.dtype, fwd.dtype, bwd.dtype)
        return torch.from_numpy(np.asarray(out))

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Any:  # type: ignore[override]
        src, dest, num_states, fsa_states = ctx.graph
        ga = g.detach().to(torch.float64).numpy()
        g_fwd = np.zeros(num_states)
        g_bwd = np.zeros(num_states)
        np.add.at(g_fwd, src, ga)
        np.add.at(g_bwd, dest, ga)
        first_arc = np.searchsorted(src, fsa_states, side="left")
        for i in range(len(fsa_states) - 1):
            if fsa_states[i + 1] > fsa_states[i]:
                d = -0.5 * float(ga[first_arc[i] : first_arc[i + 1]].sum())
                g_fwd[fsa_states[i + 1] - 1] = d
                g_bwd[fsa_states[i]] = d
        t_s, t_f, t_b = ctx.dtypes
        return (
            torch.from_numpy(ga.copy()).to(t_s),
            torch.from_numpy(g_fwd).to(t_f),
            torch.from_numpy(g_bwd).to(t_b),
            None,
            None,
            None,
        )


def arc_post(fsa: Any, scores: torch.Tensor, use_double_scores: bool, log_semiring: bool) -> torch.Tensor:
    """get_arc_post as a tensor that back-propagates into ``scores``, directly and through
    the forward and backward scores."""
    fwd = forward_scores(fsa, scores, use_double_scores, log_semiring)
    bwd = backward_scores(fsa, scores, use_double_scores, log_semiring)
    return _ArcPost.apply(scores, fwd, bwd, fsa, use_double_scores, log_semiring)


class _MapScores(torch.autograd.Function):
    """The scores of an algorithm's result: `a_scores[a_map]` (+ `b_scores[b_map]` for
    intersect and compose), with -1 in a map for a created arc, as k2's index_select."""

    @staticmethod
    def forward(ctx: Any, out: torch.Tensor, a_map: torch.Tensor, a: torch.Tensor, b_map: Any, b: Any) -> torch.Tensor:  # type: ignore[override]
        ctx.save_for_backward(a_map, b_map if b_map is not None else a_map)
        ctx.sizes = (a.shape[0], None if b is None else b.shape[0])
        ctx.dtypes = (a.dtype, None if b is None else b.dtype)
        ctx.has_b = b is not None
        return out

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Any:  # type: ignore[override]
        a_map, b_map = ctx.saved_tensors

        def scatter(m: torch.Tensor, n: int, dtype: Any) -> torch.Tensor:
            keep = m >= 0
            grad = torch.zeros(n, dtype=g.dtype)
            grad.index_add_(0, m[keep], g[keep])
            return grad.to(dtype)

        ga = scatter(a_map, ctx.sizes[0], ctx.dtypes[0])
        gb = scatter(b_map, ctx.sizes[1], ctx.dtypes[1]) if ctx.has_b else None
        return None, None, ga, None, gb


def map_scores(out: torch.Tensor, a_map: Any, a: torch.Tensor, b_map: Any = None, b: Any = None) -> torch.Tensor:
    a_map_t = torch.from_numpy(np.asarray(a_map)).to(torch.int64)
    b_map_t = None if b_map is None else torch.from_numpy(np.asarray(b_map)).to(torch.int64)
    if b is not None and not b.requires_grad:
        b = b.detach()
    return _MapScores.apply(out, a_map_t, a, b_map_t, b)


class _SumScores(torch.autograd.Function):
    """The scores of a result whose arc i sums the source arcs ``values[j]`` of its row
    (``row_ids[j] == i``), as k2's index_and_sum after remove_epsilon."""

    @staticmethod
    def forward(ctx: Any, out: torch.Tensor, row_ids: torch.Tensor, values: torch.Tensor, a: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        ctx.save_for_backward(row_ids, values)
        ctx.size = a.shape[0]
        ctx.dtype = a.dtype
        return out

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Any:  # type: ignore[override]
        row_ids, values = ctx.saved_tensors
        grad = torch.zeros(ctx.size, dtype=g.dtype)
        grad.index_add_(0, values, g[row_ids])
        return None, None, None, grad.to(ctx.dtype)


def sum_scores(out: torch.Tensor, splits: Any, values: Any, a: torch.Tensor) -> torch.Tensor:
    s = np.asarray(splits, dtype=np.int64)
    row_ids = np.repeat(np.arange(len(s) - 1, dtype=np.int64), np.diff(s))
    return _SumScores.apply(out, torch.from_numpy(row_ids), torch.from_numpy(np.asarray(values, dtype=np.int64)), a)


class _CatScores(torch.autograd.Function):
    """The scores of create_fsa_vec's result: the inputs' scores one after another."""

    @staticmethod
    def forward(ctx: Any, out: torch.Tensor, *srcs: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        ctx.sizes = [s.shape[0] for s in srcs]
        ctx.dtypes = [s.dtype for s in srcs]
        return out

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Any:  # type: ignore[override]
        parts = torch.split(g, ctx.sizes)
        return (None, *(p.to(d) for p, d in zip(parts, ctx.dtypes)))


def cat_scores(out: torch.Tensor, srcs: Any) -> torch.Tensor:
    return _CatScores.apply(out, *srcs)


class _RnntLoss(torch.autograd.Function):
    """An RNN-T loss computed by the Rust code with its input gradients; backward scales
    them by grad_output (per sequence when the loss is per sequence and each input's
    sequence reaches only its own loss). As ctc_loss's, the first backward scales the Rust
    buffers in place and hands them to torch without a copy, and a later backward through
    the same graph (``retain_graph=True``) has ``recompute`` give the gradients again. When
    the caller also returned those buffers (``recompute`` is None), backward copies them."""

    @staticmethod
    def forward(ctx: Any, loss: Any, grads: Any, per_sequence: bool, recompute: Any, *inputs: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        ctx.grads = grads
        ctx.recompute = recompute
        ctx.per_sequence = per_sequence
        ctx.dtypes = [x.dtype for x in inputs]
        return torch.from_numpy(loss)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Any:  # type: ignore[override]
        grads = ctx.grads
        owned = ctx.recompute is not None
        if owned:
            ctx.grads = None
            if grads is None:
                grads = ctx.recompute()
        out = []
        for grad, dtype in zip(grads, ctx.dtypes):
            if grad is None:
                out.append(None)
                continue
            grad = torch.from_numpy(grad)
            g = g.detach().to(grad.dtype)
            if g.dim() == 0 or g.numel() == 0 or bool(torch.all(g == g[0])):
                w: Any = float(g) if g.dim() == 0 else (float(g[0]) if g.numel() else 0.0)
                if w == 1.0:
                    scaled = grad if owned else grad.clone()
                else:
                    scaled = grad.mul_(w) if owned else grad * w
            elif ctx.per_sequence:
                w = g.reshape((-1,) + (1,) * (grad.dim() - 1))
                scaled = grad.mul_(w) if owned else grad * w
            else:
                raise NotImplementedError(
                    "rnnt_loss_smoothed with reduction='none' and different weights per "
                    "sequence: use reduction='sum' or 'mean'"
                )
            out.append(scaled.to(dtype))
        return (None, None, None, None, *out)


def rnnt_loss(loss: Any, grads: Any, per_sequence: bool, inputs: Any, recompute: Any = None) -> torch.Tensor:
    """The loss as a tensor back-propagating ``grads`` into ``inputs``; ``recompute()``
    gives ``grads`` afresh (None: the buffers are shared with the caller, so copied)."""
    return _RnntLoss.apply(loss, grads, per_sequence, recompute, *inputs)


class _RnntPruning(torch.autograd.Function):
    """do_rnnt_pruning's gather (done in Rust); backward sums am's copies and scatters
    lm's rows back to their symbol positions."""

    @staticmethod
    def forward(ctx: Any, am: torch.Tensor, lm: torch.Tensor, ranges: torch.Tensor, am_p: Any, lm_p: Any) -> Any:  # type: ignore[override]
        ctx.save_for_backward(ranges)
        ctx.lm_shape = tuple(lm.shape)
        ctx.dtypes = (am.dtype, lm.dtype)
        return torch.from_numpy(am_p), torch.from_numpy(lm_p)

    @staticmethod
    def backward(ctx: Any, g_am: torch.Tensor, g_lm: torch.Tensor) -> Any:  # type: ignore[override]
        (ranges,) = ctx.saved_tensors
        b, t, r = ranges.shape
        d = ctx.lm_shape[2]
        ga = g_am.sum(dim=2).to(ctx.dtypes[0])
        gl = torch.zeros(ctx.lm_shape, dtype=g_lm.dtype)
        idx = ranges.reshape(b, t * r, 1).expand(b, t * r, d)
        gl.scatter_add_(1, idx, g_lm.reshape(b, t * r, d))
        return ga, gl.to(ctx.dtypes[1]), None, None, None


def rnnt_pruning(am: torch.Tensor, lm: torch.Tensor, ranges: torch.Tensor, am_p: Any, lm_p: Any) -> Any:
    if not am.requires_grad:
        am = am.detach()
    if not lm.requires_grad:
        lm = lm.detach()
    return _RnntPruning.apply(am, lm, ranges, am_p, lm_p)
