"""A module named `k2` that is arrays.k2, for running k2's own tests unmodified."""

import sys

import arrays.k2 as _m
from arrays.k2 import *  # noqa: F401,F403
from arrays.k2 import ctc_loss_with_grad, one_best, ragged, to_str_simple  # noqa: F401

# `import k2.ragged` finds arrays.k2.ragged
sys.modules.setdefault("k2.ragged", ragged)


def __getattr__(name):
    return getattr(_m, name)
