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
