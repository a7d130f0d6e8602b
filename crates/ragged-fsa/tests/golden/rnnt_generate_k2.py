#!/usr/bin/env python3
"""Generates the RNN-T golden file for ragged-fsa's tests (tests/rnnt_golden.rs).

Run with k2 1.23.2 and torch 1.12.1 (and torchaudio 0.12.1) on Python 3.9:

    python -m venv venv && venv/bin/pip install torch==1.12.1 torchaudio==0.12.1 k2==1.23.2
    venv/bin/python crates/ragged-fsa/tests/golden/rnnt_generate_k2.py

Writes rnnt_k2.txt next to this script: cases separated by lines `=== <kind> <name>`, each
a list of `key: values` lines (whitespace separated, row-major). Inputs are float32 values
(seeded), the k2 computations run in float64 on them, so the answers are the exact values
the float32 Rust code must approach. Kinds and keys:
  mi        px py (dims: B S T1 T), [boundary], scores px_grad py_grad
            (k2.mutual_information_recursion with return_grad=True)
  joint_mi  px0 px1 py0 py1, [boundary], scores (N*B), px0_grad (autograd of scores[0].sum())
  logprobs  lm am symbols (dims: B S T C), term, type, [boundary], px py
            (get_rnnt_logprobs; get_rnnt_logprobs_smoothed with lm_scale am_scale)
  simple / smoothed  as logprobs, plus delay reduction; loss, px_grad py_grad
            (return_grad), lm_grad am_grad (autograd of the reduced loss)
  joint     logits (dims: B T S1 C) symbols term type delay reduction [boundary]:
            px py (get_rnnt_logprobs_joint), loss, logits_grad (rnnt_loss + autograd)
  torchaudio  logits (float32) symbols logit_lengths target_lengths blank: loss (none),
            logits_grad of the summed loss (torchaudio.functional.rnnt_loss, float32)
  ranges    px_grad py_grad boundary s_range (dims: B S T1 T): ranges (get_rnnt_prune_ranges)
  pruning   am lm ranges (dims B T R E D S1): lm_pruned (do_rnnt_pruning)
  pruned    logits (dims B T R C) symbols ranges term type delay reduction [boundary]:
            px py (get_rnnt_logprobs_pruned), loss, logits_grad (rnnt_loss_pruned + autograd)
Inputs are seeded, so re-running reproduces the file.
"""

import os

import k2
import torch
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = []


def fmt(x):
    x = float(x)
    if x == float("inf"):
        return "inf"
    if x == float("-inf"):
        return "-inf"
    return "%.10g" % x


def put(key, t):
    if isinstance(t, torch.Tensor):
        t = t.detach().reshape(-1).tolist()
    elif not isinstance(t, (list, tuple)):
        t = [t]
    OUT.append("%s: %s" % (key, " ".join(fmt(v) if isinstance(v, float) else str(v) for v in t)))


def case(kind, name):
    OUT.append("=== %s %s" % (kind, name))


def rand32(*shape, scale=1.0):
    """float32 values (seeded by the caller), returned as float64 of those exact values."""
    return (torch.randn(*shape, dtype=torch.float32) * scale).double()


def boundary_for(B, S, T, modified):
    rows = []
    for b in range(B):
        s_end = S - (b % 2)
        t_end = T - b
        if modified:
            t_end = max(t_end, s_end)
        rows.append([0, 0, s_end, t_end])
    return torch.tensor(rows, dtype=torch.int64)


def mi_cases():
    for seed, (B, S, T), modified, with_boundary in [
        (1, (2, 3, 4), False, False),
        (2, (2, 3, 4), True, False),
        (3, (3, 4, 5), False, True),
        (4, (3, 4, 5), True, True),
        (5, (2, 1, 1), False, False),
        (6, (2, 5, 2), False, True),
    ]:
        torch.manual_seed(seed)
        T1 = T if modified else T + 1
        px = rand32(B, S, T1)
        py = rand32(B, S + 1, T)
        boundary = None
        if with_boundary:
            rows = []
            for b in range(B):
                sb, tb = b % 2, (b + 1) % 2
                rows.append([sb, tb, S - (b % 2) + sb * 0, T - b % 2])
            boundary = torch.tensor(rows, dtype=torch.int64)
        scores, (gx, gy) = k2.mutual_information_recursion(px, py, boundary, return_grad=True)
        case("mi", "seed%d" % seed)
        put("dims", [B, S, T1, T])
        put("px", px)
        put("py", py)
        if boundary is not None:
            put("boundary", boundary)
        put("scores", scores)
        put("px_grad", gx)
        put("py_grad", gy)

    torch.manual_seed(7)
    B, S, T = 2, 3, 4
    px = [rand32(B, S, T + 1).requires_grad_() for _ in range(2)]
    py = [rand32(B, S + 1, T).requires_grad_() for _ in range(2)]
    scores = k2.joint_mutual_information_recursion(px, py)
    (gx0,) = torch.autograd.grad(scores[0].sum(), [px[0]])
    case("joint_mi", "seed7")
    put("dims", [B, S, T + 1, T])
    put("px0", px[0])
    put("px1", px[1])
    put("py0", py[0])
    put("py1", py[1])
    put("scores", scores)
    put("px0_grad", gx0)


TYPES = ["regular", "modified", "constrained"]


def simple_cases():
    n = 0
    for rnnt_type in TYPES:
        for with_boundary in [False, True]:
            for delay, reduction in [(0.0, "none"), (0.5, "mean"), (0.0, "sum")]:
                n += 1
                torch.manual_seed(100 + n)
                B, S, T, C = 2, 3, 5, 6
                term = n % C
                lm = rand32(B, S + 1, C).requires_grad_()
                am = rand32(B, T, C).requires_grad_()
                symbols = torch.randint(0, C, (B, S), dtype=torch.int64)
                boundary = boundary_for(B, S, T, rnnt_type != "regular") if with_boundary else None
                for kind in ["simple", "smoothed"]:
                    scales = (0.1, 0.1) if n % 2 == 0 else (0.0, 0.25)
                    if kind == "simple":
                        px, py = k2.get_rnnt_logprobs(lm, am, symbols, term, rnnt_type, boundary)
                        loss, (gx, gy) = k2.rnnt_loss_simple(
                            lm, am, symbols, term, boundary, rnnt_type, delay, reduction,
                            return_grad=True)
                    else:
                        px, py = k2.get_rnnt_logprobs_smoothed(
                            lm, am, symbols, term, scales[0], scales[1], boundary, rnnt_type)
                        loss, (gx, gy) = k2.rnnt_loss_smoothed(
                            lm, am, symbols, term, scales[0], scales[1], boundary, rnnt_type,
                            delay, reduction, return_grad=True)
                    lm_grad, am_grad = torch.autograd.grad(loss.sum(), [lm, am])
                    case(kind, "%s_%d" % (rnnt_type, n))
                    put("dims", [B, S, T, C])
                    put("lm", lm)
                    put("am", am)
                    put("symbols", symbols)
                    put("term", term)
                    put("type", TYPES.index(rnnt_type))
                    put("scales", list(scales))
                    put("delay", delay)
                    put("reduction", ["none", "mean", "sum"].index(reduction))
                    if boundary is not None:
                        put("boundary", boundary)
                    put("px", px)
                    put("py", py)
                    put("loss", loss)
                    put("px_grad", gx)
                    put("py_grad", gy)
                    put("lm_grad", lm_grad)
                    put("am_grad", am_grad)


def joint_cases():
    n = 0
    for rnnt_type in TYPES:
        for with_boundary, delay, reduction in [(False, 0.0, "none"), (True, 0.3, "mean"),
                                                (True, 0.0, "sum")]:
            n += 1
            torch.manual_seed(200 + n)
            B, S, T, C = 2, 3, 4, 5
            term = 0
            logits = rand32(B, T, S + 1, C).requires_grad_()
            symbols = torch.randint(1, C, (B, S), dtype=torch.int64)
            boundary = boundary_for(B, S, T, rnnt_type != "regular") if with_boundary else None
            px, py = k2.get_rnnt_logprobs_joint(logits, symbols, term, rnnt_type, boundary)
            loss = k2.rnnt_loss(logits, symbols, term, boundary, rnnt_type, delay, reduction)
            (grad,) = torch.autograd.grad(loss.sum(), [logits])
            case("joint", "%s_%d" % (rnnt_type, n))
            put("dims", [B, T, S + 1, C])
            put("logits", logits)
            put("symbols", symbols)
            put("term", term)
            put("type", TYPES.index(rnnt_type))
            put("delay", delay)
            put("reduction", ["none", "mean", "sum"].index(reduction))
            if boundary is not None:
                put("boundary", boundary)
            put("px", px)
            put("py", py)
            put("loss", loss)
            put("logits_grad", grad)


def torchaudio_cases():
    for seed, (B, S, T, C) in [(300, (2, 3, 5, 6)), (301, (3, 4, 7, 5))]:
        torch.manual_seed(seed)
        logits = torch.randn(B, T, S + 1, C, dtype=torch.float32).requires_grad_()
        symbols = torch.randint(1, C, (B, S), dtype=torch.int32)
        logit_lengths = torch.tensor([T - b for b in range(B)], dtype=torch.int32)
        target_lengths = torch.tensor([S - (b % 2) for b in range(B)], dtype=torch.int32)
        loss = torchaudio.functional.rnnt_loss(
            logits, symbols, logit_lengths, target_lengths, blank=0, clamp=-1,
            reduction="none")
        (grad,) = torch.autograd.grad(loss.sum(), [logits])
        case("torchaudio", "seed%d" % seed)
        put("dims", [B, T, S + 1, C])
        put("logits", logits)
        put("symbols", symbols)
        put("logit_lengths", logit_lengths)
        put("target_lengths", target_lengths)
        put("loss", loss)
        put("logits_grad", grad)


def pruned_cases():
    n = 0
    for rnnt_type in TYPES:
        for s_range, with_boundary, delay, reduction in [(2, False, 0.0, "none"),
                                                         (3, True, 0.4, "mean"),
                                                         (9, True, 0.0, "sum")]:
            n += 1
            torch.manual_seed(400 + n)
            B, S, T, C = 2, 4, 7, 6
            term = 0
            lm = rand32(B, S + 1, C)
            am = rand32(B, T, C)
            symbols = torch.randint(1, C, (B, S), dtype=torch.int64)
            modified = rnnt_type != "regular"
            boundary = boundary_for(B, S, T, modified) if with_boundary else \
                torch.tensor([[0, 0, S, T]] * B, dtype=torch.int64)
            _, (gx, gy) = k2.rnnt_loss_smoothed(
                lm, am, symbols, term, 0.1, 0.1, boundary, rnnt_type, return_grad=True)
            gx, gy = gx.float(), gy.float()
            ranges = k2.get_rnnt_prune_ranges(gx, gy, boundary, s_range)
            case("ranges", "%s_%d" % (rnnt_type, n))
            put("dims", list(gx.shape) + [gy.shape[2]])
            put("px_grad", gx)
            put("py_grad", gy)
            put("boundary", boundary)
            put("s_range", s_range)
            put("ranges", ranges)

            R = ranges.shape[2]
            E, D = 3, 2
            enc = rand32(B, T, E)
            dec = rand32(B, S + 1, D)
            am_pruned, lm_pruned = k2.do_rnnt_pruning(enc, dec, ranges)
            case("pruning", "%s_%d" % (rnnt_type, n))
            put("dims", [B, T, R, E, D, S + 1])
            put("am", enc)
            put("lm", dec)
            put("ranges", ranges)
            put("lm_pruned", lm_pruned)

            logits = rand32(B, T, R, C).requires_grad_()
            bnd = boundary if with_boundary else None
            px, py = k2.get_rnnt_logprobs_pruned(logits, symbols, ranges, term, bnd, rnnt_type)
            loss = k2.rnnt_loss_pruned(logits, symbols, ranges, term, bnd, rnnt_type, delay,
                                       reduction)
            (grad,) = torch.autograd.grad(loss.sum(), [logits])
            case("pruned", "%s_%d" % (rnnt_type, n))
            put("dims", [B, T, R, C])
            put("logits", logits)
            put("symbols", symbols)
            put("ranges", ranges)
            put("term", term)
            put("type", TYPES.index(rnnt_type))
            put("delay", delay)
            put("reduction", ["none", "mean", "sum"].index(reduction))
            if bnd is not None:
                put("boundary", bnd)
            put("px", px)
            put("py", py)
            put("loss", loss)
            put("logits_grad", grad)


def main():
    assert torch.__version__.startswith("1.12"), torch.__version__
    mi_cases()
    simple_cases()
    joint_cases()
    torchaudio_cases()
    pruned_cases()
    with open(os.path.join(HERE, "rnnt_k2.txt"), "w") as f:
        f.write("\n".join(OUT) + "\n")


if __name__ == "__main__":
    main()
