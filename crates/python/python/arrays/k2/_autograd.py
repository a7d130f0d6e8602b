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
    @staticmethod
    def forward(ctx: Any, log_probs: torch.Tensor, graph: Any, dense: Any, output_beam: float) -> torch.Tensor:  # type: ignore[override]
        loss, grad = _native.ctc_loss(graph._raw, dense._raw, output_beam)
        ctx.grad = torch.from_numpy(grad)
        ctx.dense = dense
        ctx.dtype = log_probs.dtype
        return torch.from_numpy(loss).to(torch.float32)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> Any:  # type: ignore[override]
        from arrays.k2 import _segment_weights  # noqa: PLC0415

        g = grad_output.detach().to(torch.float64).numpy()
        grad = ctx.grad
        if np.all(g == g[0]) if g.size else True:
            scaled = grad * float(g[0]) if g.size else grad * 0.0
        else:
            w = _segment_weights(ctx.dense, g, tuple(grad.shape))
            scaled = grad * torch.from_numpy(w).to(grad.dtype)
        return scaled.to(ctx.dtype), None, None, None


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
