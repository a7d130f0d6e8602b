"""k2's Python API over ragged-fsa: ``import arrays.k2 as k2``.

Names, argument names and defaults are k2's (v1.23.2). Arrays come out as numpy arrays, or
as torch tensors sharing their memory when torch is importable (set ``ARRAYS_K2_NUMPY=1``
to keep numpy). All work is done by the native module with the GIL released; this module
only converts arguments, carries the non-tensor attributes and wires torch's autograd.
"""

from __future__ import annotations

import enum
import os
import random
import shutil
import subprocess
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from arrays import _native

__all__ = [
    "Fsa",
    "RaggedTensor",
    "RaggedShape",
    "DenseFsaVec",
    "SymbolTable",
    "DeterminizeWeightPushingType",
    "Nbest",
    "create_fsa_vec",
    "to_str",
    "to_str_simple",
    "arc_sort",
    "top_sort",
    "connect",
    "invert",
    "reverse",
    "closure",
    "union",
    "intersect",
    "compose",
    "determinize",
    "remove_epsilon",
    "remove_epsilon_self_loops",
    "add_epsilon_self_loops",
    "remove_epsilon_and_add_self_loops",
    "ctc_topo",
    "ctc_graph",
    "linear_fsa",
    "linear_fst",
    "levenshtein_graph",
    "levenshtein_alignment",
    "shortest_path",
    "random_paths",
    "random_fsa",
    "is_rand_equivalent",
    "fsa_properties",
    "prune_on_arc_post",
    "get_arc_post",
    "intersect_dense",
    "intersect_dense_pruned",
    "ctc_loss",
    "rnnt_loss_simple",
    "rnnt_loss_smoothed",
    "rnnt_loss",
    "rnnt_loss_pruned",
    "get_rnnt_prune_ranges",
    "get_rnnt_logprobs",
    "get_rnnt_logprobs_smoothed",
    "do_rnnt_pruning",
    "mutual_information_recursion",
    "joint_mutual_information_recursion",
    "rnnt_loss_simple_with_grad",
    "rnnt_loss_smoothed_with_grad",
    "rnnt_loss_with_grad",
    "rnnt_loss_pruned_with_grad",
    "one_best",
    "index_select",
    "index_add",
    "index_fsa",
    "intersect_device",
    "expand_ragged_attributes",
    "simple_ragged_index_select",
    "compose_arc_maps",
    "cat",
    "linear_fsa_with_self_loops",
    "linear_fst_with_self_loops",
    "ragged",
]

# --------------------------------------------------------------------------- torch, lazily

_TORCH: Any = None


def _torch() -> Any:
    """The torch module when it is importable (and not switched off), else None."""
    global _TORCH
    if _TORCH is None:
        if os.environ.get("ARRAYS_K2_NUMPY"):
            _TORCH = False
        else:
            try:
                import torch  # noqa: PLC0415 (imported lazily on purpose)

                _TORCH = torch
            except ImportError:
                _TORCH = False
    return _TORCH or None


def _is_tensor(x: Any) -> bool:
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def _tensor_state(x: Any) -> Tuple[int, int, Tuple[int, ...], Tuple[int, ...]]:
    """What changes when a torch tensor is written in place or given other memory: its
    version counter, data pointer, shape and strides."""
    return (int(x._version), int(x.data_ptr()), tuple(x.shape), tuple(x.stride()))


def _out(a: np.ndarray) -> Any:
    """A result array: torch tensor sharing memory when torch is there, else numpy."""
    t = _torch()
    return t.from_numpy(a) if t is not None else a


def _array(x: Any, dtype: Any, name: str, ndim: Optional[int] = None) -> np.ndarray:
    """An argument as a numpy array of exactly `dtype`, without a copy where possible.

    numpy arrays pass as they are; torch tensors on the CPU through ``.numpy()`` (shared
    memory); anything else with ``__dlpack__`` through ``np.from_dlpack``; lists are
    converted. A wrong dtype is a ValueError (no silent casts of arcs or scores)."""
    if _is_tensor(x):
        if x.device.type != "cpu":
            raise NotImplementedError(
                f"{name}: only CPU tensors are supported (got device {x.device}); use .cpu()"
            )
        a = x.detach().numpy()
    elif isinstance(x, np.ndarray):
        a = x
    elif hasattr(x, "__dlpack__"):
        a = np.from_dlpack(x)
    elif isinstance(x, (list, tuple)):
        a = np.asarray(x, dtype=dtype)
    else:
        raise ValueError(f"{name}: expected an array, got {type(x).__name__}")
    if a.dtype != np.dtype(dtype):
        raise ValueError(f"{name}: expected dtype {np.dtype(dtype)}, got {a.dtype}")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name}: expected {ndim} dimensions, got shape {a.shape}")
    return a


def _check_device(device: Any) -> None:
    if device is None:
        return
    name = str(device)
    if name != "cpu" and not name.startswith("cpu"):
        raise NotImplementedError(
            f"device {name!r}: arrays.k2 runs on the CPU only (in parallel); use 'cpu'"
        )


# --------------------------------------------------------------------------- ragged tensors

# k2's dtypes of a RaggedTensor, by numpy dtype
_RAGGED_DTYPES = (np.int32, np.int64, np.float32, np.float64)


def _np_dtype(dtype: Any) -> np.dtype:
    """A numpy dtype from a torch dtype, a numpy dtype or its name; only k2's."""
    try:
        if isinstance(dtype, (type, np.dtype)):
            d = np.dtype(dtype)
        else:
            d = np.dtype(str(dtype).replace("torch.", ""))
    except TypeError:
        d = None
    if d is None or d.type not in _RAGGED_DTYPES:
        raise ValueError(f"RaggedTensor dtype {dtype}: expected int32, int64, float32 or float64")
    return d


def _dtype_out(d: np.dtype) -> Any:
    """The dtype as k2 shows it: a torch dtype when torch is there."""
    t = _torch()
    return getattr(t, d.name) if t is not None else d


def _parse_ragged(s: str, what: str = "number") -> Tuple[List[np.ndarray], List[str]]:
    """Row splits and the leaf tokens of k2's text form ``[[1 2] [3]]`` (2 axes at least)."""
    tokens = s.replace("[", " [ ").replace("]", " ] ").split()
    if not tokens or tokens[0] != "[":
        raise ValueError(f"ragged text: expected '[' at the start, got {s[:20]!r}")
    children: List[List[int]] = []  # per depth, the child count of each list opened
    leaves: List[str] = []
    depth = 0
    leaf_depth: Optional[int] = None
    closed_at_end = False
    for pos, tok in enumerate(tokens):
        if closed_at_end:
            raise ValueError(f"ragged text: {tok!r} after the closing ']' (token {pos})")
        if tok == "[":
            if leaf_depth is not None and depth >= leaf_depth:
                raise ValueError(f"ragged text: a list where {what}s are expected (token {pos})")
            if depth > 0:
                children[depth - 1][-1] += 1
            if len(children) <= depth:
                children.append([])
            children[depth].append(0)
            depth += 1
        elif tok == "]":
            depth -= 1
            if depth == 0:
                closed_at_end = True
        else:
            if depth == 0:
                raise ValueError(f"ragged text: {tok!r} outside the brackets (token {pos})")
            if leaf_depth is None:
                leaf_depth = depth
            elif leaf_depth != depth:
                raise ValueError(f"ragged text: {what}s at two depths (token {pos})")
            if len(children) > depth:
                raise ValueError(f"ragged text: a {what} where lists are expected (token {pos})")
            children[depth - 1][-1] += 1
            leaves.append(tok)
    if not closed_at_end:
        raise ValueError(f"ragged text: {depth} unclosed '[' in {s[:40]!r}")
    if leaf_depth is not None and len(children) != leaf_depth:
        raise ValueError(f"ragged text: {what}s at a depth other than the deepest lists")
    if len(children) == 1:
        # "[ ]" is 2 axes with no rows; "[1 2]" is not ragged
        if leaves:
            raise ValueError("ragged text: a RaggedTensor needs at least 2 axes (lists of lists)")
        return [np.zeros(1, dtype=np.int32)], leaves
    splits = [np.concatenate([[0], np.cumsum(c)]).astype(np.int32) for c in children[1:]]
    return splits, leaves


def _nested_to_parts(data: list) -> Tuple[List[np.ndarray], list]:
    """Row splits and the leaves of nested lists (2 axes at least, leaves at the deepest
    level only)."""
    splits: List[np.ndarray] = []
    level: list = data
    while True:
        if not all(isinstance(x, (list, tuple)) for x in level):
            raise ValueError("RaggedTensor: numbers where lists are expected")
        sizes = [len(x) for x in level]
        splits.append(np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32))
        nxt = [y for x in level for y in x]
        if not nxt or not any(isinstance(y, (list, tuple)) for y in nxt):
            if any(isinstance(y, (list, tuple)) for y in nxt):
                raise ValueError("RaggedTensor: lists and numbers at the same depth")
            return splits, nxt
        level = nxt


def _row_ids(splits: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(splits) - 1, dtype=np.int32), np.diff(splits))


def _select_rows(splits: Sequence[np.ndarray], rows: np.ndarray) -> Tuple[List[np.ndarray], np.ndarray]:
    """The sub-shape of `rows` of axis 0 (-1: an empty row), with the indexes of the
    elements of the last axis selected (k2's Index on axis 0)."""
    cur = np.asarray(rows, dtype=np.int64)
    out: List[np.ndarray] = []
    for s in splits:
        s = np.asarray(s, dtype=np.int64)
        n = len(s) - 1
        bad = (cur < -1) | (cur >= n)
        if bad.any():
            raise IndexError(f"index {int(cur[bad][0])} out of range for {n} rows")
        keep = cur >= 0
        begin = np.where(keep, s[np.where(keep, cur, 0)], 0)
        end = np.where(keep, s[np.where(keep, cur, 0) + 1], 0)
        sizes = end - begin
        out.append(np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32))
        total = int(sizes.sum())
        starts = np.repeat(begin - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
        cur = starts + np.arange(total, dtype=np.int64)
    return out, cur


def _shape_index(splits: Sequence[np.ndarray], axis: int, indexes: np.ndarray) -> Tuple[List[np.ndarray], np.ndarray]:
    """k2's RaggedShape.index: the shape of the elements `indexes` of `axis` (-1 an empty
    row on axis 0; on a later axis the elements keep their parents, which must not
    decrease), and the indexes of the values taken."""
    num_axes = len(splits) + 1
    if not 0 <= axis < num_axes:
        raise IndexError(f"axis {axis} out of range for {num_axes} axes")
    idx = np.asarray(indexes, dtype=np.int64)
    if axis == 0:
        return _select_rows(splits, idx)
    parent_splits = np.asarray(splits[axis - 1], dtype=np.int64)
    n = int(parent_splits[-1])
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"index out of range for the {n} elements of axis {axis}")
    parents = _row_ids(parent_splits)[idx] if idx.size else np.zeros(0, dtype=np.int64)
    if parents.size and np.any(np.diff(parents) < 0):
        raise ValueError(f"index on axis {axis}: the elements' rows must not decrease")
    counts = np.bincount(parents, minlength=len(parent_splits) - 1)
    new_split = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    lower, values = _select_rows(splits[axis:], idx)
    return list(splits[: axis - 1]) + [new_split] + lower, values


def _shape_remove_axis(splits: Sequence[np.ndarray], axis: int) -> List[np.ndarray]:
    """k2's RemoveAxis: axis 0 drops the first splits, the last axis the last ones, an axis
    between merges its splits with the next."""
    num_axes = len(splits) + 1
    if num_axes < 3 or not 0 <= axis < num_axes:
        raise ValueError(f"remove_axis({axis}) on {num_axes} axes: needs 3 axes or more and 0 <= axis < {num_axes}")
    if axis == 0:
        return list(splits[1:])
    if axis == num_axes - 1:
        return list(splits[:-1])
    merged = np.asarray(splits[axis], dtype=np.int32)[np.asarray(splits[axis - 1], dtype=np.int64)]
    return list(splits[: axis - 1]) + [merged] + list(splits[axis + 1 :])


class RaggedShape:
    """k2's RaggedShape: row splits per axis."""

    def __init__(self, splits: Union[str, Sequence[np.ndarray]]) -> None:
        if isinstance(splits, str):
            # k2's text form, "[[x x] [x]]"
            splits, _ = _parse_ragged(splits, "x")
        self._splits = [np.asarray(s, dtype=np.int32) for s in splits]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RaggedShape):
            return NotImplemented
        return len(self._splits) == len(other._splits) and all(
            np.array_equal(a, b) for a, b in zip(self._splits, other._splits)
        )

    def __getstate__(self) -> Tuple[Any, ...]:
        return tuple(self._splits)

    def __setstate__(self, state: Tuple[Any, ...]) -> None:
        self._splits = [np.asarray(s, dtype=np.int32) for s in state]

    @property
    def num_axes(self) -> int:
        return len(self._splits) + 1

    @property
    def dim0(self) -> int:
        return int(len(self._splits[0]) - 1)

    @property
    def device(self) -> Any:
        t = _torch()
        return t.device("cpu") if t is not None else "cpu"

    def to(self, device: Any) -> "RaggedShape":
        _check_device(device)
        return self

    def row_splits(self, axis: int) -> Any:
        if not 1 <= axis < self.num_axes:
            raise IndexError(f"axis {axis} has no row splits (1..{self.num_axes - 1})")
        return _out(self._splits[axis - 1])

    def row_ids(self, axis: int) -> Any:
        if not 1 <= axis < self.num_axes:
            raise IndexError(f"axis {axis} has no row ids (1..{self.num_axes - 1})")
        return _out(_row_ids(self._splits[axis - 1]))

    def tot_size(self, axis: int) -> int:
        if axis == 0:
            return self.dim0
        if not 1 <= axis < self.num_axes:
            raise IndexError(f"axis {axis} out of range for {self.num_axes} axes")
        return int(self._splits[axis - 1][-1])

    def tot_sizes(self) -> Tuple[int, ...]:
        return tuple(self.tot_size(a) for a in range(self.num_axes))

    def max_size(self, axis: int) -> int:
        """The largest sublist of `axis` (1..num_axes-1); 0 when there is none."""
        if not 1 <= axis < self.num_axes:
            raise IndexError(f"axis {axis} has no sublists (1..{self.num_axes - 1})")
        d = np.diff(self._splits[axis - 1])
        return int(d.max()) if d.size else 0

    def numel(self) -> int:
        return self.tot_size(self.num_axes - 1)

    def get_layer(self, layer: int) -> "RaggedShape":
        """The 2-axis shape of axes `layer` and `layer + 1`."""
        if not 0 <= layer < self.num_axes - 1:
            raise IndexError(f"layer {layer} out of range for {self.num_axes} axes")
        return RaggedShape([self._splits[layer]])

    def compose(self, other: "RaggedShape") -> "RaggedShape":
        """k2's ComposeRaggedShapes: `other` indexes this shape's elements."""
        if other.dim0 != self.numel():
            raise ValueError(
                f"compose: the second shape has {other.dim0} rows for {self.numel()} elements"
            )
        return RaggedShape(self._splits + other._splits)

    def remove_axis(self, axis: int) -> "RaggedShape":
        return RaggedShape(_shape_remove_axis(self._splits, axis))

    def index(self, axis: int, indexes: Any, need_value_indexes: bool = True) -> Tuple["RaggedShape", Optional[Any]]:
        """k2's RaggedShape.index: (the shape of the elements `indexes` of `axis`, the
        indexes of its values in this shape's when asked)."""
        idx = _array(indexes, np.int32, "indexes", 1)
        splits, values = _shape_index(self._splits, int(axis), idx)
        vi = _out(values.astype(np.int32)) if need_value_indexes else None
        return RaggedShape(splits), vi

    def __str__(self) -> str:
        rows: Any = ["x"] * self.numel()
        for s in reversed(self._splits):
            rows = [rows[s[i] : s[i + 1]] for i in range(len(s) - 1)]

        def fmt(x: Any) -> str:
            return x if isinstance(x, str) else "[ " + " ".join(fmt(y) for y in x) + " ]"

        return fmt(rows)

    __repr__ = __str__


def _tensor_values(x: Any) -> Tuple[np.ndarray, Any]:
    """The numpy values of a 1-D (or N-D) array argument and, for a torch tensor that
    requires grad, the tensor itself (k2 keeps autograd through the values)."""
    if _is_tensor(x):
        if x.device.type != "cpu":
            raise NotImplementedError(f"only CPU tensors are supported (got device {x.device}); use .cpu()")
        a = x.detach().numpy()
        return a, (x if x.requires_grad else None)
    return np.asarray(x), None


class RaggedTensor:
    """k2's RaggedTensor of int32, int64, float32 or float64 values: from a string
    (``"[[1 2] [3]]"``), nested lists, a regular tensor, or a RaggedShape and values."""

    def __init__(self, data: Any, dtype: Any = None, device: Any = None) -> None:
        _check_device(device)
        self._values_t = None
        if isinstance(data, RaggedShape):
            # k2's RaggedTensor(shape, values): the values keep their autograd
            if dtype is None:
                raise ValueError("RaggedTensor(shape, values): pass the values too")
            values, vt = _tensor_values(dtype)
            if values.ndim != 1:
                raise ValueError(f"values: expected 1 dimension, got shape {values.shape}")
            _np_dtype(values.dtype)
            if len(values) != data.numel():
                raise ValueError(f"{len(values)} values for a shape of {data.numel()} elements")
            self._splits = list(data._splits)
            self._values = values
            self._values_t = vt
            return
        d = None if dtype is None else _np_dtype(dtype)
        if _is_tensor(data) or isinstance(data, np.ndarray):
            # a regular tensor of N >= 2 dimensions: N axes, the values shared when contiguous
            a, _ = _tensor_values(data)
            if a.ndim < 2:
                raise ValueError(f"RaggedTensor from an array: expected 2 dimensions or more, got {a.shape}")
            if d is not None and a.dtype != d:
                raise ValueError(f"RaggedTensor: dtype {dtype} for values of {a.dtype}")
            _np_dtype(a.dtype)
            splits = []
            rows = a.shape[0]
            for n in a.shape[1:]:
                splits.append((np.arange(rows + 1, dtype=np.int64) * n).astype(np.int32))
                rows *= n
            self._splits = splits
            self._values = np.ascontiguousarray(a).reshape(-1)
            return
        if isinstance(data, str):
            splits, tokens = _parse_ragged(data)
            if d is None:
                d = np.dtype(np.float32 if any(("." in t or "e" in t.lower()) for t in tokens) else np.int32)
            try:
                values = np.asarray([float(t) if d.kind == "f" else int(t) for t in tokens], dtype=d)
            except ValueError as e:
                raise ValueError(f"ragged text: {e}") from None
        elif isinstance(data, (list, tuple)):
            splits, leaves = _nested_to_parts(list(data))
            if d is None:
                d = np.dtype(np.float32 if any(isinstance(v, float) for v in leaves) else np.int32)
            values = np.asarray(leaves, dtype=d)
        else:
            raise ValueError(f"RaggedTensor: expected a str, a list, an array or a RaggedShape, got {type(data).__name__}")
        self._splits = [np.asarray(s, dtype=np.int32) for s in splits]
        self._values = values.reshape(-1)

    @classmethod
    def _from_parts(cls, splits: Sequence[np.ndarray], values: np.ndarray, values_t: Any = None) -> "RaggedTensor":
        r = cls.__new__(cls)
        r._splits = list(splits)
        r._values = values
        r._values_t = values_t
        return r

    def _like(self, splits: Sequence[np.ndarray], take: np.ndarray) -> "RaggedTensor":
        """A tensor of `splits` whose values are this one's at `take` (autograd kept)."""
        take = np.asarray(take, dtype=np.int64)
        vt = None
        if self._values_t is not None and self._values_t.requires_grad:
            vt = self._values_t[_torch().from_numpy(take)]
            return RaggedTensor._from_parts(splits, vt.detach().numpy(), vt)
        return RaggedTensor._from_parts(splits, self._values[take], vt)

    # -- state

    def __getstate__(self) -> Tuple[Any, ...]:
        """k2's pickled state: (row_splits1, "row_ids1", ..., values)."""
        out: List[Any] = []
        for i, s in enumerate(self._splits):
            out += [_out(s), f"row_ids{i + 1}"]
        return tuple(out) + (_out(self._values),)

    def __setstate__(self, state: Tuple[Any, ...]) -> None:
        if len(state) < 3 or len(state) % 2 != 1:
            raise ValueError(f"RaggedTensor state: expected (row_splits1, 'row_ids1', ..., values), got {len(state)} items")
        self._splits = [np.array(_tensor_values(s)[0], dtype=np.int32) for s in state[:-1:2]]
        values = np.array(_tensor_values(state[-1])[0])
        _np_dtype(values.dtype)
        self._values = values
        self._values_t = None

    # -- properties

    @property
    def values(self) -> Any:
        """The values (a view: writing to it writes to the tensor)."""
        if self._values_t is not None:
            return self._values_t
        return _out(self._values)

    @property
    def shape(self) -> RaggedShape:
        return RaggedShape(self._splits)

    @property
    def num_axes(self) -> int:
        return len(self._splits) + 1

    @property
    def dim0(self) -> int:
        return int(len(self._splits[0]) - 1)

    @property
    def dtype(self) -> Any:
        return _dtype_out(self._values.dtype)

    @property
    def device(self) -> Any:
        t = _torch()
        return t.device("cpu") if t is not None else "cpu"

    @property
    def requires_grad(self) -> bool:
        return bool(self._values_t is not None and self._values_t.requires_grad)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "RaggedTensor":
        t = _torch()
        if t is None:
            raise NotImplementedError("requires_grad needs torch")
        if self._values.dtype.kind != "f":
            raise ValueError(f"only floating-point values can require grad, not {self._values.dtype}")
        if self._values_t is None:
            self._values_t = t.from_numpy(self._values)
        self._values_t.requires_grad_(bool(requires_grad))
        return self

    @property
    def grad(self) -> Any:
        return None if self._values_t is None else self._values_t.grad

    def to(self, device_or_dtype: Any) -> "RaggedTensor":
        """The same tensor on the CPU, or its values converted to a dtype."""
        name = str(device_or_dtype)
        if "int" in name or "float" in name:
            d = _np_dtype(device_or_dtype)
            if d == self._values.dtype:
                return self
            return RaggedTensor._from_parts(self._splits, self._values.astype(d))
        _check_device(device_or_dtype)
        return self

    def clone(self) -> "RaggedTensor":
        if self.requires_grad:
            vt = self._values_t.clone()
            return RaggedTensor._from_parts(list(self._splits), vt.detach().numpy(), vt)
        return RaggedTensor._from_parts([s.copy() for s in self._splits], self._values.copy())

    def row_splits(self, axis: int) -> Any:
        return self.shape.row_splits(axis)

    def row_ids(self, axis: int) -> Any:
        return self.shape.row_ids(axis)

    def tot_size(self, axis: int) -> int:
        return self.shape.tot_size(axis)

    def numel(self) -> int:
        return int(len(self._values))

    # -- reductions over the last axis

    def _last_rows(self) -> Tuple[np.ndarray, int]:
        s = self._splits[-1]
        return _row_ids(s).astype(np.int64), len(s) - 1

    def sum(self, initial_value: float = 0) -> Any:
        """The sum of each sublist of the last axis plus `initial_value`; back-propagates
        into the values when they require grad."""
        if self.requires_grad:
            t = _torch()
            rows, n = self._last_rows()
            base = t.full((n,), float(initial_value), dtype=self._values_t.dtype)
            return base.index_add(0, t.from_numpy(rows), self._values_t)
        if self._values.dtype == np.int32:
            return _out(_native.ragged_reduce(self._splits, self._values, "sum", int(initial_value)))
        rows, n = self._last_rows()
        out = np.full(n, initial_value, dtype=self._values.dtype)
        np.add.at(out, rows, self._values)
        return _out(out)

    def _extreme(self, initial_value: Any, is_max: bool) -> Any:
        if self._values.dtype == np.int32 and initial_value is not None:
            op = "max" if is_max else "min"
            return _out(_native.ragged_reduce(self._splits, self._values, op, int(initial_value)))
        rows, n = self._last_rows()
        if initial_value is None:
            info = np.finfo if self._values.dtype.kind == "f" else np.iinfo
            initial_value = info(self._values.dtype).min if is_max else info(self._values.dtype).max
        out = np.full(n, initial_value, dtype=self._values.dtype)
        (np.maximum if is_max else np.minimum).at(out, rows, self._values)
        return _out(out)

    def max(self, initial_value: Any = None) -> Any:
        """The largest value of each sublist of the last axis, at least `initial_value`
        (the dtype's lowest by default)."""
        return self._extreme(initial_value, True)

    def min(self, initial_value: Any = None) -> Any:
        """The smallest value of each sublist of the last axis, at most `initial_value`."""
        return self._extreme(initial_value, False)

    def argmax(self, initial_value: Any = None) -> Any:
        """The index (into the values) of the largest value of each sublist of the last
        axis, the last of a tie as k2 on the CPU; -1 for an empty sublist or one whose
        values are all below `initial_value`."""
        s = self._splits[-1]
        v = self._values
        out = np.full(len(s) - 1, -1, dtype=np.int32)
        for i in range(len(s) - 1):
            b, e = int(s[i]), int(s[i + 1])
            if e > b:
                j = e - 1 - int(np.argmax(v[b:e][::-1]))
                if initial_value is None or v[j] >= initial_value:
                    out[i] = j
        return _out(out)

    def normalize(self, use_log: bool) -> "RaggedTensor":
        """Each sublist of the last axis normalized: divided by its sum, or with
        `use_log`, minus its log-sum-exp; back-propagates when the values require grad."""
        rows, n = self._last_rows()
        if self._values.dtype.kind != "f":
            raise ValueError(f"normalize needs floating-point values, not {self._values.dtype}")
        t = _torch()
        if self.requires_grad:
            v = self._values_t
            r = t.from_numpy(rows)
            if use_log:
                m = np.full(n, -np.inf, dtype=self._values.dtype)
                np.maximum.at(m, rows, self._values)
                m = np.where(np.isfinite(m), m, 0).astype(self._values.dtype)
                mt = t.from_numpy(m)[r]
                tot = t.zeros(n, dtype=v.dtype).index_add(0, r, (v - mt).exp())
                out = v - (tot.log()[r] + mt)
            else:
                tot = t.zeros(n, dtype=v.dtype).index_add(0, r, v)
                out = v / tot[r]
            return RaggedTensor._from_parts(self._splits, out.detach().numpy(), out)
        v = self._values.astype(np.float64)
        if use_log:
            m = np.full(n, -np.inf)
            np.maximum.at(m, rows, v)
            m = np.where(np.isfinite(m), m, 0.0)
            tot = np.zeros(n)
            np.add.at(tot, rows, np.exp(v - m[rows]))
            out = v - (np.log(tot[rows]) + m[rows])
        else:
            tot = np.zeros(n)
            np.add.at(tot, rows, v)
            out = v / tot[rows]
        return RaggedTensor._from_parts(self._splits, out.astype(self._values.dtype))

    # -- structure

    def remove_axis(self, axis: int) -> "RaggedTensor":
        if not 0 <= axis < self.num_axes - 1:
            raise ValueError(f"remove_axis({axis}): a tensor of {self.num_axes} axes keeps its last axis")
        return RaggedTensor._from_parts(_shape_remove_axis(self._splits, axis), self._values, self._values_t)

    def _remove_where(self, keep: np.ndarray) -> "RaggedTensor":
        rows, n = self._last_rows()
        counts = np.bincount(rows[keep], minlength=n)
        last = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        return self._like(self._splits[:-1] + [last], np.nonzero(keep)[0])

    def remove_values_eq(self, target: Any) -> "RaggedTensor":
        return self._remove_where(self._values != target)

    def remove_values_leq(self, cutoff: Any) -> "RaggedTensor":
        return self._remove_where(self._values > cutoff)

    def index(
        self, indexes: Any, axis: int = 0, need_value_indexes: bool = False
    ) -> Tuple["RaggedTensor", Optional[Any]]:
        """k2's RaggedTensor.index: (the tensor of the elements `indexes` of `axis`, the
        indexes of its values in this one's when asked)."""
        if isinstance(indexes, RaggedTensor):
            # k2: each index replaced by the sublist it names (axis 0, -1 an empty one);
            # the result has the axes of `indexes` and then those of this tensor but 0
            if indexes._values.dtype != np.int32:
                raise ValueError(f"index: ragged indexes must be int32, not {indexes._values.dtype}")
            sel, take = _select_rows(self._splits, indexes._values)
            return self._like(list(indexes._splits) + sel, take)
        idx = _array(indexes, np.int32, "indexes", 1)
        splits, take = _shape_index(self._splits, int(axis), idx)
        out = self._like(splits, take)
        return out, (_out(take.astype(np.int32)) if need_value_indexes else None)

    def pad(self, mode: str, padding_value: Any) -> Any:
        """A 2-axis tensor as a matrix of `dim0` rows of the longest row's length, padded
        with `padding_value` ('constant') or the row's last value ('replicate'; an empty
        row takes `padding_value`)."""
        if self.num_axes != 2:
            raise ValueError(f"pad needs 2 axes, not {self.num_axes}")
        if mode not in ("constant", "replicate"):
            raise ValueError(f"pad mode {mode!r}: expected 'constant' or 'replicate'")
        s = self._splits[0]
        sizes = np.diff(s)
        width = int(sizes.max()) if sizes.size else 0
        out = np.full((len(sizes), width), padding_value, dtype=self._values.dtype)
        for i in range(len(sizes)):
            row = self._values[s[i] : s[i + 1]]
            out[i, : len(row)] = row
            if mode == "replicate" and len(row):
                out[i, len(row) :] = row[-1]
        return _out(out)

    def sort_(self, descending: bool = False, need_new2old_indexes: bool = False) -> Optional[Any]:
        """Sorts each sublist of the last axis in place (stable); with
        `need_new2old_indexes`, the old index of each new value."""
        rows, _ = self._last_rows()
        key = -self._values if descending and self._values.dtype.kind == "f" else self._values
        if descending and self._values.dtype.kind != "f":
            key = -self._values.astype(np.int64)
        order = np.lexsort((key, rows))
        self._values[:] = self._values[order]
        return _out(order.astype(np.int32)) if need_new2old_indexes else None

    def unique(self, need_num_repeats: bool = False, need_new2old_indexes: bool = False) -> Any:
        """The distinct sublists of the last axis within each row of the axis before (all
        of them for 2 axes), in lexicographic order (k2 orders them by a hash); with the
        repeat counts (a ragged tensor, one row per group) and the index of each one's
        first occurrence."""
        if self.num_axes not in (2, 3):
            raise ValueError(f"unique needs 2 or 3 axes, not {self.num_axes}")
        seqs = self.tolist() if self.num_axes == 3 else [self.tolist()]
        out_rows, repeats, new2old = [], [], []
        base = 0
        for group in seqs:
            first: Dict[Tuple[Any, ...], int] = {}
            count: Dict[Tuple[Any, ...], int] = {}
            for j, seq in enumerate(group):
                k = tuple(seq)
                first.setdefault(k, base + j)
                count[k] = count.get(k, 0) + 1
            keys = sorted(first)
            out_rows.append([list(k) for k in keys])
            repeats.append([count[k] for k in keys])
            new2old += [first[k] for k in keys]
            base += len(group)
        d = self._values.dtype
        uniq = RaggedTensor(out_rows if self.num_axes == 3 else out_rows[0], dtype=d)
        if self.num_axes == 3 and not out_rows:
            uniq = RaggedTensor._from_parts([np.zeros(1, np.int32), np.zeros(1, np.int32)], np.zeros(0, d))
        reps = RaggedTensor(repeats, dtype=np.int32) if need_num_repeats else None
        idx = _out(np.asarray(new2old, dtype=np.int32)) if need_new2old_indexes else None
        return uniq, reps, idx

    def tolist(self) -> list:
        out: Any = self._values.tolist()
        for s in reversed(self._splits):
            out = [out[s[i] : s[i + 1]] for i in range(len(s) - 1)]
        return out

    def __getitem__(self, i: Any) -> Any:
        if _is_tensor(i) or isinstance(i, np.ndarray):
            return self.index(i, axis=0)[0]
        if not isinstance(i, (int, np.integer)):
            raise TypeError(f"RaggedTensor index: an int or a 1-D int32 array, not {type(i).__name__}")
        n = self.dim0
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for {n} rows")
        i = int(i) % n
        sub, take = _select_rows(self._splits, np.asarray([i]))
        if self.num_axes == 2:
            b, e = int(self._splits[0][i]), int(self._splits[0][i + 1])
            if self._values_t is not None:
                return self._values_t[b:e]
            return _out(self._values[b:e])
        return self._like(sub[1:], take)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RaggedTensor):
            return NotImplemented
        return (
            self._values.dtype == other._values.dtype
            and self.shape == other.shape
            and np.array_equal(self._values, other._values)
        )

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return _k2_ragged_repr(self.tolist(), self.num_axes, self._values.dtype)

    __repr__ = __str__


def _k2_ragged_repr(rows: list, num_axes: int, dtype: Any = np.int32) -> str:
    """k2's ``str(RaggedTensor)``: torch-like nested lists, one row of axis 0 per line."""
    prefix = "RaggedTensor("

    def fmt(x: Any, depth: int, indent: int) -> str:
        if depth == num_axes - 1:
            return "[" + ", ".join(str(v) for v in x) + "]"
        inner = [fmt(y, depth + 1, indent + 1) for y in x]
        return "[" + (",\n" + " " * (indent + 1)).join(inner) + "]"

    return prefix + fmt(rows, 0, len(prefix)) + f", dtype=torch.{np.dtype(dtype).name})"


# --------------------------------------------------------------------------- FSAs


class _Arcs:
    """k2's ``fsa.arcs`` (a RaggedArc): ``values()`` is the (N, 4) int32 view."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def values(self) -> Any:
        return _out(self._raw.arcs())

    def __array__(self, dtype: Any = None) -> np.ndarray:
        a = self._raw.arcs()
        return a if dtype is None else a.astype(dtype)

    def shape(self) -> RaggedShape:
        return RaggedShape([self._raw.row_splits(a) for a in range(1, self._raw.num_axes)])

    def row_splits(self, axis: int) -> Any:
        return _out(self._raw.row_splits(axis))

    def row_ids(self, axis: int) -> Any:
        return _out(self._raw.row_ids(axis))

    def num_axes(self) -> int:
        return int(self._raw.num_axes)

    def dim0(self) -> int:
        return int(self._raw.tot_sizes()[0])

    def num_elements(self) -> int:
        return int(self._raw.num_arcs)

    def __str__(self) -> str:
        """The arcs as nested lists, one ``[src dest label score]`` per arc."""
        arcs = self._raw.arcs()
        scores = self._raw.scores()
        rows: Any = [f"[ {a[0]} {a[1]} {a[2]} {s:g} ]" for a, s in zip(arcs.tolist(), scores.tolist())]
        for axis in range(self._raw.num_axes - 1, 0, -1):
            sp = self._raw.row_splits(axis)
            rows = ["[ " + " ".join(rows[sp[i] : sp[i + 1]]) + " ]" for i in range(len(sp) - 1)]
        return "[ " + " ".join(rows) + " ]"

    def tot_size(self, axis: int) -> int:
        return int(self._raw.tot_sizes()[axis])


_RESERVED = {
    "arcs",
    "scores",
    "labels",
    "properties",
    "properties_str",
    "shape",
    "num_arcs",
    "grad",
}


class Fsa:
    """k2's Fsa: one FSA (2 axes) or a vector of FSAs (3 axes) with per-arc attributes."""

    def __init__(self, arcs: Any, aux_labels: Any = None, properties: Any = None) -> None:
        if isinstance(arcs, _native.RawFsa):
            raw = arcs
        else:
            a = _array(arcs, np.int32, "arcs", 2)
            if a.shape[1] != 4:
                raise ValueError(f"arcs: expected shape (num_arcs, 4), got {a.shape}")
            raw = _raw_from_arcs(a)
        object.__setattr__(self, "_raw", raw)
        object.__setattr__(self, "_non_tensor_attr", {})
        # k2's per-FSA cache dict (shallow-copied by clone and detach, as k2's)
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_scores_t", None)
        # float32 attributes set as tensors that require grad (k2 back-propagates into them)
        object.__setattr__(self, "_attr_t", {})
        if aux_labels is not None:
            self.aux_labels = aux_labels

    @classmethod
    def _wrap(cls, raw: Any, like: Optional["Fsa"] = None) -> "Fsa":
        f = cls(raw)
        if like is not None:
            f._non_tensor_attr.update(like._non_tensor_attr)
        return f

    def _set_raw(self, raw: Any, keep_scores: bool = False) -> None:
        """Points at a new native object. With `keep_scores` (same scores: an attribute or
        the labels changed), a scores tensor that requires grad stays this FSA's scores."""
        object.__setattr__(self, "_raw", raw)
        if not (keep_scores and self.requires_grad):
            object.__setattr__(self, "_scores_t", None)

    # -- construction and text

    @staticmethod
    def from_str(
        s: str,
        acceptor: Optional[bool] = None,
        num_aux_labels: Optional[int] = None,
        aux_label_names: Optional[List[str]] = None,
        ragged_label_names: List[str] = [],  # noqa: B006 (k2's default)
        openfst: bool = False,
    ) -> "Fsa":
        if aux_label_names is not None:
            # k2: the names of the aux-label columns (none: an acceptor)
            if num_aux_labels is not None and num_aux_labels != len(aux_label_names):
                raise ValueError(
                    f"num_aux_labels={num_aux_labels} with {len(aux_label_names)} aux_label_names"
                )
            if acceptor is not None and acceptor != (len(aux_label_names) == 0):
                raise ValueError(f"acceptor={acceptor} with aux_label_names {aux_label_names}")
            names = list(aux_label_names)
            if len(set(names)) != len(names) or set(names) & (set(ragged_label_names) | _RESERVED):
                raise ValueError(f"aux_label_names {names}: repeated or reserved names")
            fsa = Fsa.from_str(s, len(names) == 0, len(names), None, ragged_label_names, openfst)
            raw = fsa._raw
            defaults = ["aux_labels"] + [f"aux_labels{i + 1}" for i in range(1, len(names))]
            values = [raw.get_attr(d) for d in defaults]
            for d in defaults:
                raw = raw.without_attr(d)
            for n, v in zip(names, values):
                raw = raw.with_attr(n, v)
            return Fsa(raw)
        if acceptor is None and num_aux_labels is None:
            acceptor = True
        if num_aux_labels is None:
            num_aux_labels = 0 if acceptor else 1
        if acceptor is None:
            acceptor = num_aux_labels == 0
        raw = _native.RawFsa.from_str(
            s, bool(acceptor), int(num_aux_labels), list(ragged_label_names), bool(openfst)
        )
        if openfst:
            # k2 negates each cost, so a cost of 0 is a score of -0.0 (to_str shows it)
            scores = np.array(raw.scores(), dtype=np.float32)
            if np.any(scores == 0):
                scores[scores == 0] = np.float32(-0.0)
                raw = raw.with_scores(scores)
        return Fsa(raw)

    @staticmethod
    def from_openfst(
        s: str,
        acceptor: Optional[bool] = None,
        num_aux_labels: Optional[int] = None,
        aux_label_names: Optional[List[str]] = None,
        ragged_label_names: List[str] = [],  # noqa: B006 (k2's default)
    ) -> "Fsa":
        return Fsa.from_str(
            s, acceptor, num_aux_labels, aux_label_names, ragged_label_names, openfst=True
        )

    @staticmethod
    def from_fsas(fsas: Sequence["Fsa"]) -> "Fsa":
        """An FsaVec of the FSAs (k2's wrapper of create_fsa_vec)."""
        return create_fsa_vec(fsas)

    def set_scores_stochastic_(self, scores: Any) -> None:
        """k2's: the scores of the arcs leaving each state normalized (log-sum-exp 0),
        back-propagating into `scores` when it requires grad."""
        r = RaggedTensor(self.arcs.shape(), scores).normalize(use_log=True)
        self.scores = r.values

    def to_str(self, openfst: bool = False) -> str:
        return to_str(self, openfst)

    def __str__(self) -> str:
        raw = self._raw
        if raw.num_axes == 2:
            s = "k2.Fsa: " + raw.to_str(False, True)
        else:
            s = "k2.FsaVec: \n"
            for i in range(raw.num_fsas):
                s += f"FsaVec[{i}]: " + raw.get(i).to_str(False, True)
        s += f"properties_str = {self.properties_str}."
        for name in raw.attr_names():
            v = self.__getattr__(name)
            s += f"\n{name}: {v}"
        return s

    # -- arrays

    @property
    def arcs(self) -> _Arcs:
        return _Arcs(self._raw)

    @property
    def scores(self) -> Any:
        if self._scores_t is not None:
            return self._scores_t
        s = _out(self._raw.scores())
        if _is_tensor(s):
            object.__setattr__(self, "_scores_t", s)
        return s

    @scores.setter
    def scores(self, value: Any) -> None:
        a = _array(value, np.float32, "scores", 1)
        self._set_raw(self._raw.with_scores(a))
        if _is_tensor(value) and value.requires_grad:
            object.__setattr__(self, "_scores_t", value)

    @property
    def labels(self) -> Any:
        return _out(self._raw.labels())

    @labels.setter
    def labels(self, value: Any) -> None:
        """New labels, fixed as k2's FixFinalLabels: -1 on the arcs entering the final
        state, and a -1 elsewhere becomes 0."""
        labels = np.array(_array(value, np.int32, "labels", 1), dtype=np.int32)
        raw = self._raw
        if len(labels) != raw.num_arcs:
            raise ValueError(f"labels: {len(labels)} values for {raw.num_arcs} arcs")
        axis = raw.num_axes - 1
        src = np.asarray(raw.row_ids(axis), dtype=np.int64)
        arcs = np.asarray(raw.arcs())
        dest = src - arcs[:, 0] + arcs[:, 1]
        if raw.num_axes == 3:
            fsa_splits = np.asarray(raw.row_splits(1), dtype=np.int64)
            final = fsa_splits[np.searchsorted(fsa_splits, src, side="right")] - 1
        else:
            final = np.full(len(src), len(raw.row_splits(1)) - 2)
        to_final = dest == final
        labels[to_final] = -1
        labels[(~to_final) & (labels == -1)] = 0
        self._set_raw(raw.with_labels(labels), True)

    @property
    def properties(self) -> int:
        return int(self._raw.properties())

    @property
    def properties_str(self) -> str:
        # k2 quotes it
        return '"' + str(self._raw.properties_str()) + '"'

    @property
    def shape(self) -> Tuple[Optional[int], ...]:
        sizes = self._raw.tot_sizes()
        return (int(sizes[0]),) + (None,) * (self._raw.num_axes - 1)

    @property
    def num_arcs(self) -> int:
        return int(self._raw.num_arcs)

    @property
    def device(self) -> str:
        t = _torch()
        return t.device("cpu") if t is not None else "cpu"

    @property
    def requires_grad(self) -> bool:
        s = self._scores_t
        return bool(s is not None and s.requires_grad)

    @property
    def grad(self) -> Any:
        """The gradient of the scores (k2's ``fsa.grad``)."""
        s = self._scores_t
        return None if s is None else s.grad

    def requires_grad_(self, requires_grad: bool) -> "Fsa":
        s = self.scores
        if not _is_tensor(s):
            raise NotImplementedError("requires_grad_ needs torch; without it use get_tot_scores_grad")
        s.requires_grad_(requires_grad)
        return self

    def to(self, device: Any) -> "Fsa":
        _check_device(device)
        return self

    def clone(self) -> "Fsa":
        """A copy whose arcs and attributes are new arrays (scores and float attributes
        that require grad back-propagate into this FSA's); non-tensor attributes and the
        cache entries are shared, as k2's."""
        raw = self._raw.with_scores(self._raw.scores().copy())
        for name in raw.attr_names():
            v = raw.get_attr(name)
            if isinstance(v, tuple):
                raw = raw.with_attr(name, ([s.copy() for s in v[0]], v[1].copy()))
            else:
                raw = raw.with_attr(name, v.copy())
        out = Fsa._wrap(raw, self)
        out._cache.update(self._cache)
        return _track(out, self, np.arange(self.num_arcs, dtype=np.int32))

    def detach(self) -> "Fsa":
        out = Fsa._wrap(self._raw, self)
        out._cache.update(self._cache)
        return out

    def is_cpu(self) -> bool:
        return True

    def is_cuda(self) -> bool:
        return False

    def invert_(self) -> "Fsa":
        """k2's in-place invert: labels and aux_labels swapped."""
        inv = invert(self)
        object.__setattr__(self, "_raw", inv._raw)
        object.__setattr__(self, "_scores_t", inv._scores_t)
        object.__setattr__(self, "_attr_t", inv._attr_t)
        return self

    def convert_attr_to_ragged_(self, name: str, remove_eps: bool = True) -> "Fsa":
        """k2's: the int32 attribute `name` as a ragged one of one value per arc (without
        the 0s when `remove_eps`), in place."""
        v = self._raw.get_attr(name)
        if not isinstance(v, np.ndarray) or v.dtype != np.int32:
            raise ValueError(f"convert_attr_to_ragged_: {name!r} is not a 1-D int32 attribute")
        splits = np.arange(len(v) + 1, dtype=np.int32)
        r = RaggedTensor._from_parts([splits], np.ascontiguousarray(v).copy())
        if remove_eps:
            r = r.remove_values_eq(0)
        setattr(self, name, r)
        return self

    # -- attributes

    def __getattr__(self, name: str) -> Any:
        # k2's own internal attributes (levenshtein_graph's
        # `__ins_del_score_offset_internal_attr_`) are arc attributes too
        if name.startswith("_") and not name.endswith("_internal_attr_"):
            raise AttributeError(name)
        attr_t = object.__getattribute__(self, "_attr_t")
        if name in attr_t:
            return attr_t[name]
        raw = object.__getattribute__(self, "_raw")
        v = raw.get_attr(name)
        if v is None:
            nt = object.__getattribute__(self, "_non_tensor_attr")
            if name in nt:
                return nt[name]
            raise AttributeError(f"this Fsa has no attribute {name!r}")
        if isinstance(v, tuple):
            return RaggedTensor._from_parts(*v)
        return _out(v)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") or name in ("scores", "labels") or name in _RESERVED:
            if name in _RESERVED and name not in ("scores", "labels"):
                raise AttributeError(f"{name} cannot be set")
            object.__setattr__(self, name, value)
            return
        self._attr_t.pop(name, None)
        if isinstance(value, RaggedTensor):
            if value.num_axes != 2:
                raise ValueError(f"{name}: a ragged attribute has 2 axes, not {value.num_axes}")
            self._set_raw(self._raw.with_attr(name, (value._splits, value._values)), True)
        elif _is_tensor(value) or isinstance(value, np.ndarray):
            a = value.detach().numpy() if _is_tensor(value) else value
            if a.dtype == np.int64:
                if a.size and (a.min() < -(2**31) or a.max() >= 2**31):
                    raise ValueError(f"{name}: int64 values beyond int32")
                a = a.astype(np.int32)
            elif a.dtype == np.float64:
                a = a.astype(np.float32)
            if a.dtype not in (np.int32, np.float32) or a.ndim != 1:
                raise ValueError(
                    f"{name}: expected a 1-D int32 or float32 array, got {a.dtype} of shape "
                    f"{a.shape} (attributes of more dimensions are not reproduced)"
                )
            self._set_raw(self._raw.with_attr(name, a), True)
            if _is_tensor(value) and value.requires_grad and a.dtype == np.float32:
                self._attr_t[name] = value
        else:
            self._non_tensor_attr[name] = value

    def __delattr__(self, name: str) -> None:
        self._attr_t.pop(name, None)
        if name in self._raw.attr_names():
            self._set_raw(self._raw.without_attr(name), True)
        elif name in self._non_tensor_attr:
            del self._non_tensor_attr[name]
        else:
            raise AttributeError(name)

    def __contains__(self, name: str) -> bool:
        return name in self._raw.attr_names() or name in self._non_tensor_attr

    def named_tensor_attr(self) -> Any:
        for name in self._raw.attr_names():
            yield name, self.__getattr__(name)

    def named_non_tensor_attr(self) -> Any:
        yield from self._non_tensor_attr.items()

    # -- FsaVec

    def __getitem__(self, i: int) -> "Fsa":
        if not isinstance(i, (int, np.integer)):
            raise NotImplementedError(
                "Fsa[...] takes an int; for several FSAs use create_fsa_vec([fsas[i], ...])"
            )
        out = Fsa._wrap(self._raw.get(int(i)), self)
        if self.requires_grad or self._attr_t:
            splits = self._raw.row_splits(1)
            arcs = self._raw.row_splits(2)
            k = int(i) % int(self._raw.num_fsas)
            begin, end = int(arcs[splits[k]]), int(arcs[splits[k + 1]])
            _track(out, self, np.arange(begin, end, dtype=np.int32))
        return out

    # -- pickling (compact binary)

    def __reduce__(self) -> Any:
        return (_fsa_from_bytes, (bytes(self._raw.to_bytes()), dict(self._non_tensor_attr)))

    def as_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"arcs": self.arcs.values()}
        for name, v in self.named_tensor_attr():
            d[name] = v
        d.update(self._non_tensor_attr)
        return d

    @staticmethod
    def from_dict(d: Dict[str, Any]) -> "Fsa":
        f = Fsa(d["arcs"])
        for k, v in d.items():
            if k != "arcs":
                setattr(f, k, v)
        return f

    # -- scores

    def get_forward_scores(self, use_double_scores: bool, log_semiring: bool) -> Any:
        s = self._scores_t
        if s is not None and s.requires_grad and _wants_grad(s):
            from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

            return _autograd.forward_scores(self, s, use_double_scores, log_semiring)
        return _out(self._raw.get_forward_scores(bool(use_double_scores), bool(log_semiring)))

    def get_backward_scores(self, use_double_scores: bool, log_semiring: bool) -> Any:
        s = self._scores_t
        if s is not None and s.requires_grad and _wants_grad(s):
            from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

            return _autograd.backward_scores(self, s, use_double_scores, log_semiring)
        return _out(self._raw.get_backward_scores(bool(use_double_scores), bool(log_semiring)))

    def get_arc_post(self, use_double_scores: bool, log_semiring: bool) -> Any:
        s = self._scores_t
        if s is not None and s.requires_grad and _wants_grad(s):
            from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

            return _autograd.arc_post(self, s, use_double_scores, log_semiring)
        return _out(self._raw.get_arc_post(bool(use_double_scores), bool(log_semiring)))

    def get_tot_scores(self, use_double_scores: bool, log_semiring: bool) -> Any:
        tot = self._raw.get_tot_scores(bool(use_double_scores), bool(log_semiring))
        s = self._scores_t
        if s is not None and s.requires_grad:
            from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

            return _autograd.tot_scores(self, s, use_double_scores, log_semiring)
        return _out(tot)

    def get_tot_scores_grad(self, log_semiring: bool = True) -> np.ndarray:
        """d(sum of total scores)/d(arc scores) without torch (float64, one per arc)."""
        return self._raw.tot_scores_grad(bool(log_semiring))[0]

    # -- drawing

    def to_dot(self, title: Optional[str] = None) -> str:
        return str(self._raw.to_dot(title or ""))

    def draw(self, filename: Optional[str], title: Optional[str] = None) -> str:
        """Graphviz text; written as SVG (or the suffix's format) to `filename` when the
        ``dot`` program is installed."""
        dot = self.to_dot(title)
        if filename:
            exe = shutil.which("dot")
            if exe is None:
                raise OSError("drawing to a file needs Graphviz's `dot` program")
            fmt = os.path.splitext(filename)[1].lstrip(".") or "svg"
            subprocess.run([exe, f"-T{fmt}", "-o", filename], input=dot.encode(), check=True)
        return dot


def _fsa_from_bytes(data: bytes, non_tensor: Dict[str, Any]) -> Fsa:
    f = Fsa(_native.RawFsa.from_bytes(data))
    f._non_tensor_attr.update(non_tensor)
    return f


def _raw_from_arcs(a: np.ndarray) -> Any:
    """A single FSA from k2's (N, 4) int32 arcs (score bits in column 3)."""
    return _native.RawFsa.from_arcs(a)


def _track(out: Fsa, a: Fsa, a_map: np.ndarray, b: Optional[Fsa] = None, b_map: Any = None) -> Fsa:
    """Carries the autograd of the input scores to `out`'s (k2's index_select of the scores
    through the arc maps), when an input's scores require grad; the same for the float
    attributes set as tensors that require grad."""
    if a._attr_t or (b is not None and b._attr_t):
        _track_attrs(out, a, a_map, b, b_map)
    sa = a._scores_t
    sb = None if b is None else b._scores_t
    if (sa is None or not sa.requires_grad) and (sb is None or not sb.requires_grad):
        return out
    from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

    t = _torch()
    a_scores = sa if sa is not None else t.from_numpy(a._raw.scores())
    b_scores = None
    if b is not None:
        b_scores = sb if sb is not None else t.from_numpy(b._raw.scores())
    view = t.from_numpy(out._raw.scores())
    object.__setattr__(out, "_scores_t", _autograd.map_scores(view, a_map, a_scores, b_map, b_scores))
    return out


def _track_attrs(out: Fsa, a: Fsa, a_map: np.ndarray, b: Optional[Fsa], b_map: Any) -> None:
    """k2's index_select of the float attributes through the arc maps (a float attribute of
    both sides is the sum), as autograd nodes for those that require grad."""
    from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

    t = _torch()

    def source(f: Optional[Fsa], name: str) -> Any:
        if f is None:
            return None
        if name in f._attr_t:
            return f._attr_t[name]
        v = f._raw.get_attr(name)
        return t.from_numpy(v) if isinstance(v, np.ndarray) and v.dtype == np.float32 else None

    names = set(a._attr_t) | (set(b._attr_t) if b is not None else set())
    for name in sorted(names):
        v = out._raw.get_attr(name)
        if not isinstance(v, np.ndarray) or v.dtype != np.float32:
            continue
        sa, sb = source(a, name), source(b, name)
        view = t.from_numpy(v)
        if sa is None:
            out._attr_t[name] = _autograd.map_scores(view, b_map, sb)
        elif sb is None:
            out._attr_t[name] = _autograd.map_scores(view, a_map, sa)
        else:
            out._attr_t[name] = _autograd.map_scores(view, a_map, sa, b_map, sb)


def _unary(fsa: Fsa, op: str, ret_arc_map: bool = False) -> Any:
    raw, arc_map = getattr(fsa._raw, op)()
    out = _track(Fsa._wrap(raw, fsa), fsa, arc_map)
    return (out, _out(arc_map)) if ret_arc_map else out


def create_fsa_vec(fsas: Sequence[Fsa]) -> Fsa:
    out = Fsa(_native.create_fsa_vec([f._raw for f in fsas]))
    # k2's rule: the non-tensor attributes of all the FSAs, equal where two have one
    for f in fsas:
        for name, value in f._non_tensor_attr.items():
            if name in out._non_tensor_attr and out._non_tensor_attr[name] != value:
                raise ValueError(
                    f"create_fsa_vec: attribute {name!r} differs between the FSAs "
                    f"({out._non_tensor_attr[name]!r} and {value!r})"
                )
            out._non_tensor_attr.setdefault(name, value)
    grad_names = sorted({name for f in fsas for name in f._attr_t})
    if grad_names:
        from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

        t = _torch()
        for name in grad_names:
            v = out._raw.get_attr(name)
            if isinstance(v, np.ndarray) and v.dtype == np.float32:
                srcs = [f._attr_t.get(name, None) for f in fsas]
                srcs = [s if s is not None else t.from_numpy(f._raw.get_attr(name)) for s, f in zip(srcs, fsas)]
                out._attr_t[name] = _autograd.cat_scores(t.from_numpy(v), srcs)
    if any(f.requires_grad for f in fsas):
        from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

        t = _torch()
        srcs = [f._scores_t if f.requires_grad else t.from_numpy(f._raw.scores()) for f in fsas]
        view = t.from_numpy(out._raw.scores())
        object.__setattr__(out, "_scores_t", _autograd.cat_scores(view, srcs))
    return out


def _k2_text(fsa: Fsa, openfst: bool, aux: Sequence[np.ndarray], ragged: Sequence[Any]) -> str:
    """k2's FsaToString: one line per arc, ``src dest label``, the aux-label columns, the
    ragged columns as ``[ 1 2 ]``, the score (negated for OpenFst, whose arcs into the final
    state are ``src cost`` lines) as C++'s ``<<`` of a float (``%g``); k2 text ends with
    the final state's line."""
    raw = fsa._raw
    if raw.num_axes != 2:
        raise ValueError("to_str needs a single FSA, not an FsaVec (index it first)")
    arcs = np.asarray(raw.arcs())
    scores = np.asarray(raw.scores(), dtype=np.float32)
    scale = np.float32(-1.0 if openfst else 1.0)
    aux_rows = [np.asarray(c).tolist() for c in aux]
    rag = [(np.asarray(r._splits[0]), r._values.tolist()) for r in ragged]
    lines = []
    for a in range(len(arcs)):
        src, dest, label = int(arcs[a, 0]), int(arcs[a, 1]), int(arcs[a, 2])
        if openfst and label == -1:
            line = f"{src} "
        else:
            line = f"{src} {dest} {label} " + "".join(f"{c[a]} " for c in aux_rows)
            for splits, values in rag:
                line += "[ " + "".join(f"{v} " for v in values[splits[a] : splits[a + 1]]) + "] "
        lines.append(line + f"{float(scale * scores[a]):g}\n")
    if len(arcs) and not openfst:
        lines.append(f"{len(raw.row_splits(1)) - 2}\n")
    return "".join(lines)


def to_str_simple(fsa: Fsa, openfst: bool = False) -> str:
    """k2's to_str_simple: the text with the plain aux labels only."""
    aux = fsa._raw.get_attr("aux_labels") if "aux_labels" in fsa._raw.attr_names() else None
    return _k2_text(fsa, openfst, [aux] if isinstance(aux, np.ndarray) else [], [])


def to_str(fsa: Fsa, openfst: bool = False) -> str:
    """k2's to_str: every int32 attribute (by name) as a label column, then every ragged
    one (by name) as a bracketed column."""
    aux, ragged = [], []
    for name in sorted(fsa._raw.attr_names()):
        v = fsa._raw.get_attr(name)
        if isinstance(v, tuple):
            ragged.append(RaggedTensor._from_parts(*v))
        elif v.dtype == np.int32:
            aux.append(v)
    return _k2_text(fsa, openfst, aux, ragged)


def arc_sort(fsa: Fsa, ret_arc_map: bool = False) -> Any:
    return _unary(fsa, "arc_sort", ret_arc_map)


def top_sort(fsa: Fsa) -> Fsa:
    return _unary(fsa, "top_sort")


def connect(fsa: Fsa) -> Fsa:
    return _unary(fsa, "connect")


def invert(fsa: Fsa, ret_arc_map: bool = False) -> Any:
    return _unary(fsa, "invert", ret_arc_map)


def reverse(fsa: Fsa) -> Fsa:
    return _unary(fsa, "reverse")


def closure(fsa: Fsa) -> Fsa:
    return _unary(fsa, "closure")


def add_epsilon_self_loops(fsa: Fsa, ret_arc_map: bool = False) -> Any:
    return _unary(fsa, "add_epsilon_self_loops", ret_arc_map)


def remove_epsilon_self_loops(fsa: Fsa) -> Fsa:
    return _unary(fsa, "remove_epsilon_self_loops")


def union(fsas: Fsa) -> Fsa:
    raw, arc_map = _native.union(fsas._raw)
    return _track(Fsa._wrap(raw, fsas), fsas, arc_map)


def intersect(
    a_fsa: Fsa, b_fsa: Fsa, treat_epsilons_specially: bool = True, ret_arc_maps: bool = False
) -> Any:
    raw, a_map, b_map = _native.intersect(a_fsa._raw, b_fsa._raw, bool(treat_epsilons_specially))
    out = _track(Fsa._wrap(raw, a_fsa), a_fsa, a_map, b_fsa, b_map)
    return (out, _out(a_map), _out(b_map)) if ret_arc_maps else out


def compose(
    a_fsa: Fsa,
    b_fsa: Fsa,
    treat_epsilons_specially: bool = True,
    inner_labels: Optional[str] = None,
) -> Fsa:
    raw, a_map, b_map = _native.compose(
        a_fsa._raw, b_fsa._raw, bool(treat_epsilons_specially), inner_labels
    )
    return _track(Fsa._wrap(raw, a_fsa), a_fsa, a_map, b_fsa, b_map)


class DeterminizeWeightPushingType(enum.IntEnum):
    """k2's values. Every one keeps each label sequence's best score (tropical
    equivalence); kLogWeightPushing pushes with log-sum towards the start (the arcs differ
    from k2's, which normalizes each subset by its log-sum of forward scores)."""

    kTropicalWeightPushing = 0
    kLogWeightPushing = 1
    kNoWeightPushing = 2


def determinize(
    fsa: Fsa,
    weight_pushing_type: DeterminizeWeightPushingType = DeterminizeWeightPushingType.kNoWeightPushing,
) -> Fsa:
    raw, _ = fsa._raw.determinize(int(weight_pushing_type))
    return Fsa._wrap(raw, fsa)


def _track_sums(out: Fsa, a: Fsa, derivs: Any) -> Fsa:
    """Carries the autograd of `a`'s scores and float attributes to `out`'s, each arc
    of which sums the arcs of `a` its derivation lists (k2's index_and_sum)."""
    if not a.requires_grad and not a._attr_t:
        return out
    from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

    t = _torch()
    splits, values = derivs[0][-1], derivs[1]
    if a.requires_grad:
        view = t.from_numpy(out._raw.scores())
        object.__setattr__(out, "_scores_t", _autograd.sum_scores(view, splits, values, a._scores_t))
    for name, src in a._attr_t.items():
        v = out._raw.get_attr(name)
        if isinstance(v, np.ndarray) and v.dtype == np.float32:
            out._attr_t[name] = _autograd.sum_scores(t.from_numpy(v), splits, values, src)
    return out


def remove_epsilon(fsa: Fsa) -> Fsa:
    raw, derivs = fsa._raw.remove_epsilon()
    return _track_sums(Fsa._wrap(raw, fsa), fsa, derivs)


def remove_epsilon_and_add_self_loops(fsa: Fsa, remove_filler: bool = True) -> Fsa:
    raw, derivs = fsa._raw.remove_epsilon_and_add_self_loops()
    return _track_sums(Fsa._wrap(raw, fsa), fsa, derivs)


def shortest_path(fsa: Fsa, use_double_scores: bool) -> Fsa:
    raw, arc_map = fsa._raw.shortest_path()
    return _track(Fsa._wrap(raw, fsa), fsa, arc_map)


def random_paths(fsas: Fsa, use_double_scores: bool, num_paths: int, seed: int = 0) -> RaggedTensor:
    """k2's random_paths; seeded (repeatable), so the paths differ from k2's own draws."""
    return RaggedTensor._from_parts(*fsas._raw.random_paths(int(num_paths), int(seed)))


def random_fsa(
    acyclic: bool = True, max_symbol: int = 50, min_num_arcs: int = 0, max_num_arcs: int = 1000
) -> Fsa:
    """k2's random_fsa: arcs from random states to random later ones (any state when not
    acyclic), labels in [0, max_symbol] (-1 into the final state), scores in [0, 10). The
    draw is seeded from Python's ``random``, so ``random.seed`` repeats it."""
    seed = random.getrandbits(64)
    return Fsa(
        _native.random_fsa(bool(acyclic), int(max_symbol), int(min_num_arcs), int(max_num_arcs), seed)
    )


def is_rand_equivalent(
    a: Fsa,
    b: Fsa,
    log_semiring: bool,
    beam: float = float("inf"),
    treat_epsilons_specially: bool = True,
    delta: float = 1e-6,
    npath: int = 100,
) -> bool:
    """k2's is_rand_equivalent: whether `a` and `b` (top-sorted, acyclic) give the same
    total score to `npath` label sequences drawn from either. The draws are seeded from
    Python's ``random``, so ``random.seed`` repeats them."""
    seed = random.getrandbits(64)
    return bool(
        _native.is_rand_equivalent(
            a._raw,
            b._raw,
            bool(log_semiring),
            float(beam),
            bool(treat_epsilons_specially),
            float(delta),
            int(npath),
            seed,
        )
    )


def prune_on_arc_post(fsas: Fsa, threshold_prob: float, use_double_scores: bool) -> Fsa:
    raw, arc_map = fsas._raw.prune_on_arc_post(float(threshold_prob))
    return _track(Fsa._wrap(raw, fsas), fsas, arc_map)


def get_arc_post(fsas: Fsa, use_double_scores: bool, log_semiring: bool) -> Any:
    return fsas.get_arc_post(use_double_scores, log_semiring)


def _sequences(x: Any) -> Any:
    if isinstance(x, RaggedTensor):
        return x.tolist()
    return x


def ctc_topo(max_token: int, modified: bool = False, device: Any = None) -> Fsa:
    _check_device(device)
    return Fsa(_native.ctc_topo(int(max_token), bool(modified)))


def ctc_graph(symbols: Any, modified: bool = False, device: Any = "cpu") -> Fsa:
    _check_device(device)
    return Fsa(_native.ctc_graph(_sequences(symbols), bool(modified)))


def linear_fsa(labels: Any, device: Any = None) -> Fsa:
    _check_device(device)
    return Fsa(_native.linear_fsa(_sequences(labels)))


def linear_fst(labels: Any, aux_labels: Any) -> Fsa:
    return Fsa(_native.linear_fst(labels, aux_labels))


def levenshtein_graph(symbols: Any, ins_del_score: float = -0.501, device: Any = "cpu") -> Fsa:
    _check_device(device)
    return Fsa(_native.levenshtein_graph(_sequences(symbols), float(ins_del_score)))


def levenshtein_alignment(
    refs: Fsa, hyps: Fsa, hyp_to_ref_map: Any, sorted_match_ref: bool = False
) -> Fsa:
    m = _array(hyp_to_ref_map, np.int32, "hyp_to_ref_map", 1)
    return Fsa(_native.levenshtein_alignment(refs._raw, hyps._raw, m))


# --------------------------------------------------------------------------- symbol tables


class SymbolTable:
    """k2's SymbolTable (``words.txt``, ``tokens.txt``)."""

    def __init__(self, _id2sym: Optional[Dict[int, str]] = None, _sym2id: Optional[Dict[str, int]] = None) -> None:
        # k2's empty table holds <eps> = 0
        self._id2sym: Dict[int, str] = dict(_id2sym or {0: "<eps>"})
        self._sym2id: Dict[str, int] = dict(_sym2id or {"<eps>": 0})

    @staticmethod
    def from_str(s: str) -> "SymbolTable":
        pairs = _native.parse_symbol_table(s)
        id2sym = {i: sym for sym, i in pairs}
        sym2id = {sym: i for sym, i in pairs}
        if 0 not in id2sym and "<eps>" not in sym2id:
            # as k2: a table without id 0 gets <eps> = 0
            id2sym[0], sym2id["<eps>"] = "<eps>", 0
        return SymbolTable(id2sym, sym2id)

    @staticmethod
    def from_file(filename: str) -> "SymbolTable":
        return SymbolTable.from_str(_native.read_text(filename))

    def to_str(self) -> str:
        return "".join(f"{s} {i}\n" for i, s in sorted(self._id2sym.items()))

    def to_file(self, filename: str) -> None:
        with open(filename, "w", encoding="utf-8") as f:
            f.write(self.to_str())

    def add(self, symbol: str, index: Optional[int] = None) -> int:
        if symbol in self._sym2id:
            return self._sym2id[symbol]
        if index is None:
            index = max(self._id2sym, default=-1) + 1
        if index in self._id2sym:
            raise ValueError(f"id {index} already names {self._id2sym[index]!r}")
        self._id2sym[index] = symbol
        self._sym2id[symbol] = index
        return index

    def get(self, k: Union[int, str]) -> Union[str, int]:
        return self._id2sym[k] if isinstance(k, int) else self._sym2id[k]

    def __getitem__(self, k: Union[int, str]) -> Union[str, int]:
        return self.get(k)

    def __contains__(self, k: Union[int, str]) -> bool:
        return k in (self._id2sym if isinstance(k, int) else self._sym2id)

    def __len__(self) -> int:
        return len(self._id2sym)

    def merge(self, other: "SymbolTable") -> "SymbolTable":
        """The union of two tables (k2's merge); an id or a symbol the two map
        differently is a ValueError naming both."""
        for i in set(self._id2sym) & set(other._id2sym):
            if self._id2sym[i] != other._id2sym[i]:
                raise ValueError(
                    f"merge: id {i} is {self._id2sym[i]!r} here and {other._id2sym[i]!r} there"
                )
        for sym in set(self._sym2id) & set(other._sym2id):
            if self._sym2id[sym] != other._sym2id[sym]:
                raise ValueError(
                    f"merge: {sym!r} is id {self._sym2id[sym]} here and "
                    f"{other._sym2id[sym]} there"
                )
        return SymbolTable({**self._id2sym, **other._id2sym}, {**self._sym2id, **other._sym2id})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolTable):
            return NotImplemented
        return self._id2sym == other._id2sym and self._sym2id == other._sym2id

    @property
    def ids(self) -> List[int]:
        return sorted(self._id2sym)

    @property
    def symbols(self) -> List[str]:
        return [self._id2sym[i] for i in self.ids]


# --------------------------------------------------------------------------- dense FSAs


class DenseFsaVec:
    """k2's DenseFsaVec(log_probs (N, T, C) float32, supervision_segments (S, 3) int32)."""

    def __init__(self, log_probs: Any, supervision_segments: Any, allow_truncate: int = 0) -> None:
        lp = _array(log_probs, np.float32, "log_probs", 3)
        segs = _array(supervision_segments, np.int32, "supervision_segments", 2)
        # A torch tensor is read in place by each call, not copied as k2 copies it: its
        # version counter and data pointer, kept here, show an in-place change made before
        # a call, which is then refused (as torch's autograd refuses a tensor it saved).
        # Anything else has no such counter and is copied, so later writes cannot reach us.
        borrow = _is_tensor(log_probs)
        self._raw = _native.RawDenseFsaVec(lp, segs, int(allow_truncate), borrow)
        self._snapshot = _tensor_state(log_probs) if borrow else None
        self._log_probs = log_probs
        self._segments = np.array(segs, dtype=np.int32)
        self._allow_truncate = int(allow_truncate)
        self._num_cols = int(lp.shape[2]) + 1

    def _native(self) -> Any:
        """The native object for a call, after checking that a borrowed tensor is as it was
        (same version, data pointer, shape and strides)."""
        snapshot = self._snapshot
        if snapshot is not None and _tensor_state(self._log_probs) != snapshot:
            raise RuntimeError(
                "DenseFsaVec: log_probs was modified in place (or resized) after the "
                "DenseFsaVec was built from it, and the DenseFsaVec reads it in place; "
                "build the DenseFsaVec again from the new values"
            )
        return self._raw

    def __reduce__(self) -> Any:
        # the log-probs and segments as numpy arrays (a torch tensor's values, detached):
        # pickled as their raw bytes, checked again by the constructor on the other side
        lp = np.ascontiguousarray(_array(self._log_probs, np.float32, "log_probs", 3))
        return (DenseFsaVec, (lp, self._segments, self._allow_truncate))

    @property
    def scores(self) -> Any:
        return _out(self._native().scores())

    @property
    def duration(self) -> Any:
        """The frames of each segment, int32 (cached in ``_duration`` as k2 does)."""
        d = self.__dict__.get("_duration")
        if d is None:
            d = _out(np.asarray(self._raw.durations(), dtype=np.int32))
            self._duration = d
        return d

    @property
    def device(self) -> Any:
        t = _torch()
        return t.device("cpu") if t is not None else "cpu"

    def dim0(self) -> int:
        return int(self._raw.num_fsas)

    def to(self, device: Any) -> "DenseFsaVec":
        _check_device(device)
        return self


def intersect_dense(
    a_fsas: Fsa,
    b_fsas: DenseFsaVec,
    output_beam: float,
    max_states: int = 15000000,
    max_arcs: int = 1073741824,
    a_to_b_map: Any = None,
    seqframe_idx_name: Optional[str] = None,
    frame_idx_name: Optional[str] = None,
) -> Fsa:
    m = None if a_to_b_map is None else _array(a_to_b_map, np.int32, "a_to_b_map", 1)
    raw, a_map, b_map = _native.intersect_dense(a_fsas._raw, b_fsas._native(), float(output_beam), m)
    return _dense_lattice(raw, a_fsas, b_fsas, a_map, b_map, seqframe_idx_name, frame_idx_name)


def _dense_lattice(
    raw: Any,
    a_fsas: Fsa,
    b_fsas: DenseFsaVec,
    a_map: np.ndarray,
    b_map: np.ndarray,
    seqframe_idx_name: Optional[str],
    frame_idx_name: Optional[str],
) -> Fsa:
    """The lattice of intersect_dense(_pruned) as k2 makes it: the graphs' attributes, the
    frame attributes asked for, and scores that back-propagate into the graphs' scores and
    the log-probs (k2's arc maps: `b_map` indexes the dense scores, `C + 1` columns, a
    segment's frames and its final row one after another; column 0 is the final arc's)."""
    out = Fsa._wrap(raw, a_fsas)
    log_probs = b_fsas._log_probs
    wants_grad = (_is_tensor(log_probs) and log_probs.requires_grad) or a_fsas.requires_grad
    if frame_idx_name is None and seqframe_idx_name is None and not wants_grad:
        # nothing reads the frame of an arc: a decoding lattice (tens of millions of arcs)
        # is handed out as the native call made it
        return out
    num_cols = b_fsas._num_cols
    b_map = np.asarray(b_map, dtype=np.int64)
    seqframe = b_map // num_cols
    durations = np.asarray(b_fsas._raw.durations(), dtype=np.int64)
    row_splits = np.concatenate([[0], np.cumsum(durations + 1)])
    segment = np.searchsorted(row_splits, seqframe, side="right") - 1
    frame = seqframe - row_splits[segment]
    for name, value in ((frame_idx_name, frame), (seqframe_idx_name, seqframe)):
        if name is not None:
            if name in out or name in _RESERVED:
                raise ValueError(f"{name}: the lattice already has an attribute of that name")
            setattr(out, name, value.astype(np.int32))
    if wants_grad:
        # the log-prob of each arc (-1 for the final arcs, whose column 0 is constant)
        col = b_map % num_cols
        seq = b_fsas._segments[segment, 0].astype(np.int64)
        start = b_fsas._segments[segment, 1].astype(np.int64)
        num_frames, num_classes = np.shape(log_probs)[1], np.shape(log_probs)[2]
        lp_map = ((seq * num_frames + start + frame) * num_classes + col - 1).astype(np.int64)
        lp_map[col == 0] = -1
        from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

        t = _torch()
        a_scores = a_fsas._scores_t if a_fsas.requires_grad else t.from_numpy(a_fsas._raw.scores())
        lp = log_probs if _is_tensor(log_probs) else t.from_numpy(np.asarray(log_probs))
        view = t.from_numpy(out._raw.scores())
        scores = _autograd.map_scores(view, a_map, a_scores, lp_map, lp.reshape(-1))
        object.__setattr__(out, "_scores_t", scores)
    return out


def intersect_dense_pruned(
    a_fsas: Fsa,
    b_fsas: DenseFsaVec,
    search_beam: float,
    output_beam: float,
    min_active_states: int,
    max_active_states: int,
    seqframe_idx_name: Optional[str] = None,
    frame_idx_name: Optional[str] = None,
) -> Fsa:
    raw, a_map, b_map = _native.intersect_dense_pruned(
        a_fsas._raw,
        b_fsas._native(),
        float(search_beam),
        float(output_beam),
        int(min_active_states),
        int(max_active_states),
    )
    return _dense_lattice(raw, a_fsas, b_fsas, a_map, b_map, seqframe_idx_name, frame_idx_name)


def _segment_weights(dense: DenseFsaVec, weights: np.ndarray, shape: Tuple[int, ...]) -> np.ndarray:
    """A per-frame weight (N, T, 1) that is `weights[i]` on segment i's frames; segments
    that share a frame with a different weight cannot be told apart in the summed gradient."""
    w = np.zeros(shape[:2] + (1,), dtype=np.float64)
    seen = np.zeros(shape[:2], dtype=bool)
    for (seq, start, frames), wi in zip(dense._segments.tolist(), weights.tolist()):
        span = slice(start, start + frames)
        if seen[seq, span].any() and not np.all(w[seq, span, 0] == wi):
            raise NotImplementedError(
                "overlapping segments with different loss weights: use reduction='sum'"
            )
        w[seq, span, 0] = wi
        seen[seq, span] = True
    return w


def ctc_loss_with_grad(
    decoding_graph: Fsa, dense_fsa_vec: DenseFsaVec, output_beam: float = 10
) -> Tuple[np.ndarray, np.ndarray]:
    """Without torch: the loss per segment (float64) and d(sum of losses)/d(log_probs)."""
    loss, grad = _native.ctc_loss(decoding_graph._raw, dense_fsa_vec._native(), float(output_beam))
    return loss, grad


def ctc_loss(
    decoding_graph: Fsa,
    dense_fsa_vec: DenseFsaVec,
    output_beam: float = 10,
    reduction: str = "sum",
    use_double_scores: bool = True,
    target_lengths: Any = None,
) -> Any:
    """k2's ctc_loss. With torch, a tensor that back-propagates into the log_probs the
    DenseFsaVec was built from; without it, a numpy value (the gradient is
    ``ctc_loss_with_grad``)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"reduction must be 'none', 'mean' or 'sum', not {reduction!r}")
    if reduction == "mean" and target_lengths is None:
        raise ValueError("reduction='mean' needs target_lengths")
    lp = dense_fsa_vec._log_probs
    if _is_tensor(lp):
        from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

        return _autograd.ctc_loss(
            decoding_graph, dense_fsa_vec, float(output_beam), reduction, target_lengths
        )
    loss, _ = ctc_loss_with_grad(decoding_graph, dense_fsa_vec, output_beam)
    loss = loss.astype(np.float32)
    if reduction == "none":
        return _out(loss)
    if reduction == "sum":
        return _out(np.asarray(loss.sum(), dtype=np.float32))
    tl = np.asarray(target_lengths, dtype=np.float32)
    return _out(np.asarray((loss / tl).mean(), dtype=np.float32))


# --------------------------------------------------------------------------- RNN-T losses


def _rnnt_opt(x: Any, name: str, ndim: int) -> Optional[np.ndarray]:
    return None if x is None else _array(x, np.int64, name, ndim)


def _wants_grad(*xs: Any) -> bool:
    t = _torch()
    return t is not None and t.is_grad_enabled() and any(_is_tensor(x) and x.requires_grad for x in xs)


def _rnnt_result(
    raw: Tuple[Any, ...],
    inputs: Tuple[Any, ...],
    grads: Tuple[Optional[np.ndarray], ...],
    reduction: Optional[str],
    per_sequence: bool,
    return_grad: bool,
    recompute: Any = None,
) -> Any:
    """The loss (a tensor that back-propagates into the tensor inputs, or numpy), with
    `(px_grad, py_grad)` when return_grad; `recompute()` gives `grads` again for a second
    backward through the same graph."""
    loss = raw[0] if reduction == "none" else raw[0].reshape(())
    px_grad, py_grad = raw[4], raw[5]
    if any(_is_tensor(x) for x in inputs):
        t = _torch()
        if _wants_grad(*inputs):
            from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

            out = _autograd.rnnt_loss(loss, grads, per_sequence, inputs, recompute)
        else:
            out = t.from_numpy(loss)
        if return_grad:
            return out, (t.from_numpy(px_grad), t.from_numpy(py_grad))
        return out
    if return_grad:
        return loss, (px_grad, py_grad)
    return loss


def _reduction(reduction: Optional[str]) -> str:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"reduction must be 'none', 'mean' or 'sum', not {reduction!r}")
    return str(reduction)


def _lm_am(
    lm: Any, am: Any, symbols: Any, termination_symbol: int, boundary: Any, smoothed: bool,
    rnnt_type: str, delay_penalty: float, reduction: Optional[str], return_grad: bool,
    requires_grad: bool, lm_only_scale: float, am_only_scale: float,
) -> Tuple[Any, ...]:
    return _native.rnnt_loss_lm_am(
        _array(lm, np.float32, "lm", 3),
        _array(am, np.float32, "am", 3),
        _array(symbols, np.int64, "symbols", 2),
        int(termination_symbol),
        _rnnt_opt(boundary, "boundary", 2),
        smoothed,
        str(rnnt_type),
        float(delay_penalty),
        _reduction(reduction),
        bool(return_grad),
        bool(requires_grad),
        float(lm_only_scale),
        float(am_only_scale),
    )


def _logits(
    logits: Any, symbols: Any, ranges: Any, termination_symbol: int, boundary: Any,
    rnnt_type: str, delay_penalty: float, reduction: Optional[str], requires_grad: bool,
) -> Tuple[Any, ...]:
    return _native.rnnt_loss_logits(
        _array(logits, np.float32, "logits", 4),
        _array(symbols, np.int64, "symbols", 2),
        _rnnt_opt(ranges, "ranges", 3),
        int(termination_symbol),
        _rnnt_opt(boundary, "boundary", 2),
        str(rnnt_type),
        float(delay_penalty),
        _reduction(reduction),
        False,
        bool(requires_grad),
    )


def rnnt_loss_simple(
    lm: Any,
    am: Any,
    symbols: Any,
    termination_symbol: int,
    boundary: Any = None,
    rnnt_type: str = "regular",
    delay_penalty: float = 0.0,
    reduction: Optional[str] = "mean",
    return_grad: bool = False,
) -> Any:
    """k2's rnnt_loss_simple (additive joiner): lm [B][S+1][C], am [B][T][C] (float32),
    symbols [B][S] and boundary [B][4] (int64). Tensors in: a tensor that back-propagates
    into lm and am; numpy in: numpy out (the input gradients: rnnt_loss_simple_with_grad).
    With return_grad, also (px_grad, py_grad)."""
    want = _wants_grad(lm, am)
    raw = _lm_am(lm, am, symbols, termination_symbol, boundary, False, rnnt_type,
                 delay_penalty, reduction, return_grad, want, 0.1, 0.1)

    def again() -> Any:
        r = _lm_am(lm, am, symbols, termination_symbol, boundary, False, rnnt_type,
                   delay_penalty, reduction, False, True, 0.1, 0.1)
        return (r[1], r[2])

    return _rnnt_result(raw, (lm, am), (raw[1], raw[2]), reduction, True, return_grad, again)


def rnnt_loss_smoothed(
    lm: Any,
    am: Any,
    symbols: Any,
    termination_symbol: int,
    lm_only_scale: float = 0.1,
    am_only_scale: float = 0.1,
    boundary: Any = None,
    rnnt_type: str = "regular",
    delay_penalty: float = 0.0,
    reduction: Optional[str] = "mean",
    return_grad: bool = False,
) -> Any:
    """k2's rnnt_loss_smoothed, as rnnt_loss_simple with the lm-only and am-only terms."""
    want = _wants_grad(lm, am)
    raw = _lm_am(lm, am, symbols, termination_symbol, boundary, True, rnnt_type,
                 delay_penalty, reduction, return_grad, want, lm_only_scale, am_only_scale)

    def again() -> Any:
        r = _lm_am(lm, am, symbols, termination_symbol, boundary, True, rnnt_type,
                   delay_penalty, reduction, False, True, lm_only_scale, am_only_scale)
        return (r[1], r[2])

    return _rnnt_result(raw, (lm, am), (raw[1], raw[2]), reduction, False, return_grad, again)


def rnnt_loss(
    logits: Any,
    symbols: Any,
    termination_symbol: int,
    boundary: Any = None,
    rnnt_type: str = "regular",
    delay_penalty: float = 0.0,
    reduction: Optional[str] = "mean",
) -> Any:
    """k2's rnnt_loss on the joiner's logits [B][T][S+1][C] (float32)."""
    want = _wants_grad(logits)
    raw = _logits(logits, symbols, None, termination_symbol, boundary, rnnt_type,
                  delay_penalty, reduction, want)

    def again() -> Any:
        return (_logits(logits, symbols, None, termination_symbol, boundary, rnnt_type,
                        delay_penalty, reduction, True)[3],)

    return _rnnt_result(raw, (logits,), (raw[3],), reduction, True, False, again)


def rnnt_loss_pruned(
    logits: Any,
    symbols: Any,
    ranges: Any,
    termination_symbol: int,
    boundary: Any = None,
    rnnt_type: str = "regular",
    delay_penalty: float = 0.0,
    reduction: Optional[str] = "mean",
) -> Any:
    """k2's rnnt_loss_pruned on pruned logits [B][T][s_range][C] and ranges [B][T][s_range]."""
    want = _wants_grad(logits)
    raw = _logits(logits, symbols, ranges, termination_symbol, boundary, rnnt_type,
                  delay_penalty, reduction, want)

    def again() -> Any:
        return (_logits(logits, symbols, ranges, termination_symbol, boundary, rnnt_type,
                        delay_penalty, reduction, True)[3],)

    return _rnnt_result(raw, (logits,), (raw[3],), reduction, True, False, again)


def rnnt_loss_simple_with_grad(*args: Any, **kwargs: Any) -> Tuple[np.ndarray, Tuple[np.ndarray, np.ndarray]]:
    """rnnt_loss_simple's arguments (without return_grad): the numpy loss and
    (d loss/d lm, d loss/d am)."""
    raw = _call_lm_am(False, args, kwargs)
    return _numpy_loss(raw, kwargs), (raw[1], raw[2])


def rnnt_loss_smoothed_with_grad(*args: Any, **kwargs: Any) -> Tuple[np.ndarray, Tuple[np.ndarray, np.ndarray]]:
    """rnnt_loss_smoothed's arguments (without return_grad): the numpy loss and
    (d loss/d lm, d loss/d am)."""
    raw = _call_lm_am(True, args, kwargs)
    return _numpy_loss(raw, kwargs), (raw[1], raw[2])


def rnnt_loss_with_grad(*args: Any, **kwargs: Any) -> Tuple[np.ndarray, np.ndarray]:
    """rnnt_loss's arguments: the numpy loss and d loss/d logits."""
    import inspect  # noqa: PLC0415

    b = inspect.signature(rnnt_loss).bind(*args, **kwargs)
    b.apply_defaults()
    a = b.arguments
    raw = _logits(a["logits"], a["symbols"], None, a["termination_symbol"], a["boundary"],
                  a["rnnt_type"], a["delay_penalty"], a["reduction"], True)
    return _numpy_loss(raw, a), raw[3]


def rnnt_loss_pruned_with_grad(*args: Any, **kwargs: Any) -> Tuple[np.ndarray, np.ndarray]:
    """rnnt_loss_pruned's arguments: the numpy loss and d loss/d logits (pruned shape)."""
    import inspect  # noqa: PLC0415

    b = inspect.signature(rnnt_loss_pruned).bind(*args, **kwargs)
    b.apply_defaults()
    a = b.arguments
    raw = _logits(a["logits"], a["symbols"], a["ranges"], a["termination_symbol"],
                  a["boundary"], a["rnnt_type"], a["delay_penalty"], a["reduction"], True)
    return _numpy_loss(raw, a), raw[3]


def _call_lm_am(smoothed: bool, args: Any, kwargs: Any) -> Tuple[Any, ...]:
    import inspect  # noqa: PLC0415

    f = rnnt_loss_smoothed if smoothed else rnnt_loss_simple
    b = inspect.signature(f).bind(*args, **kwargs)
    b.apply_defaults()
    a = b.arguments
    kwargs.clear()
    kwargs.update(a)
    return _lm_am(a["lm"], a["am"], a["symbols"], a["termination_symbol"], a["boundary"],
                  smoothed, a["rnnt_type"], a["delay_penalty"], a["reduction"],
                  False, True, a.get("lm_only_scale", 0.1), a.get("am_only_scale", 0.1))


def _numpy_loss(raw: Tuple[Any, ...], a: Dict[str, Any]) -> np.ndarray:
    return raw[0] if a["reduction"] == "none" else raw[0].reshape(())


def _rnnt_logprobs(lm: Any, am: Any, symbols: Any, termination_symbol: int, boundary: Any,
                   rnnt_type: str, smoothed: bool, lm_only_scale: float, am_only_scale: float) -> Tuple[Any, Any]:
    if _wants_grad(lm, am):
        raise NotImplementedError(
            "get_rnnt_logprobs does not back-propagate here; the losses (rnnt_loss_simple, "
            "rnnt_loss_smoothed) do, or detach lm and am"
        )
    px, py = _native.get_rnnt_logprobs(
        _array(lm, np.float32, "lm", 3),
        _array(am, np.float32, "am", 3),
        _array(symbols, np.int64, "symbols", 2),
        int(termination_symbol),
        _rnnt_opt(boundary, "boundary", 2),
        str(rnnt_type),
        bool(smoothed),
        float(lm_only_scale),
        float(am_only_scale),
    )
    if _is_tensor(lm) or _is_tensor(am):
        t = _torch()
        return t.from_numpy(px), t.from_numpy(py)
    return px, py


def get_rnnt_logprobs(
    lm: Any, am: Any, symbols: Any, termination_symbol: int, rnnt_type: str = "regular",
    boundary: Any = None,
) -> Tuple[Any, Any]:
    """k2's get_rnnt_logprobs: (px [B][S][T+1] for 'regular', else [B][S][T]; py
    [B][S+1][T]) of the additive joiner, for mutual_information_recursion; float32 lm
    and am that do not require grad (the losses back-propagate)."""
    return _rnnt_logprobs(lm, am, symbols, termination_symbol, boundary, rnnt_type, False, 0.0, 0.0)


def get_rnnt_logprobs_smoothed(
    lm: Any, am: Any, symbols: Any, termination_symbol: int, lm_only_scale: float = 0.1,
    am_only_scale: float = 0.1, boundary: Any = None, rnnt_type: str = "regular",
) -> Tuple[Any, Any]:
    """k2's get_rnnt_logprobs_smoothed: as get_rnnt_logprobs, interpolated with the
    lm-only and am-only log-probabilities."""
    return _rnnt_logprobs(lm, am, symbols, termination_symbol, boundary, rnnt_type, True,
                          lm_only_scale, am_only_scale)


def get_rnnt_prune_ranges(px_grad: Any, py_grad: Any, boundary: Any, s_range: int) -> Any:
    """k2's get_rnnt_prune_ranges: [B][T][s_range] int64 (a tensor when px_grad is one)."""
    r = _native.get_rnnt_prune_ranges(
        _array(px_grad, np.float32, "px_grad", 3),
        _array(py_grad, np.float32, "py_grad", 3),
        _array(boundary, np.int64, "boundary", 2),
        int(s_range),
    )
    return _torch().from_numpy(r) if _is_tensor(px_grad) else r


def mutual_information_recursion(
    px: Any, py: Any, boundary: Any = None, return_grad: bool = False
) -> Any:
    """k2's mutual_information_recursion: px [B][S][T+1] (or [B][S][T]), py [B][S+1][T],
    float32 or float64; scores [B] (a tensor that back-propagates into px and py when they
    are tensors), with (px_grad, py_grad) when return_grad."""
    dtype = np.float64 if str(getattr(px, "dtype", "")).endswith("float64") else np.float32
    x = _array(px, dtype, "px", 3)
    y = _array(py, dtype, "py", 3)
    want = _wants_grad(px, py)
    f = _native.mutual_information_recursion_f64 if dtype == np.float64 else _native.mutual_information_recursion_f32
    scores, gx, gy = f(x, y, _rnnt_opt(boundary, "boundary", 2), bool(return_grad or want))
    if any(_is_tensor(v) for v in (px, py)):
        t = _torch()
        if want:
            from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

            # with return_grad the caller holds gx and gy too: backward copies them
            again = None if return_grad else (
                lambda: f(x, y, _rnnt_opt(boundary, "boundary", 2), True)[1:]
            )
            out = _autograd.rnnt_loss(scores, (gx, gy), True, (px, py), again)
        else:
            out = t.from_numpy(scores)
        return (out, (t.from_numpy(gx), t.from_numpy(gy))) if return_grad else out
    return (scores, (gx, gy)) if return_grad else scores


def joint_mutual_information_recursion(
    px: Sequence[Any], py: Sequence[Any], boundary: Any = None
) -> Any:
    """k2's joint_mutual_information_recursion: the recursion of the sums of the terms
    ``px[i]``, ``py[i]``, broken down per term as k2 does it: (N, B), term i's inner product
    with the occupation counts (d total / d px_sum), the first term also carrying the offset
    to the total. Tensors in: back-propagates into every term (the counts are constants,
    as in k2); numpy in: numpy out."""
    if len(px) != len(py) or len(px) == 0:
        raise ValueError(f"px and py: expected equally many terms (at least 1), got {len(px)} and {len(py)}")
    n_terms = len(px)
    t = _torch() if any(_is_tensor(x) for x in (*px, *py)) else None
    if t is not None:
        x_cat, y_cat = t.stack(list(px), dim=0), t.stack(list(py), dim=0)
        x_tot, y_tot = x_cat.detach().sum(dim=0), y_cat.detach().sum(dim=0)
        finfo_min = t.finfo(x_cat.dtype).min
    else:
        x_cat, y_cat = np.stack(list(px), axis=0), np.stack(list(py), axis=0)
        x_tot, y_tot = x_cat.sum(axis=0), y_cat.sum(axis=0)
        finfo_min = np.finfo(x_cat.dtype).min
    n_seqs = x_tot.shape[0]
    tot, (gx, gy) = mutual_information_recursion(x_tot, y_tot, boundary, return_grad=True)
    gx, gy = gx.reshape(1, n_seqs, -1), gy.reshape(1, n_seqs, -1)
    # -inf terms would give nan against a zero count (k2 clamps them the same way)
    x_cat = x_cat.reshape(n_terms, n_seqs, -1).clip(finfo_min)
    y_cat = y_cat.reshape(n_terms, n_seqs, -1).clip(finfo_min)
    prods = (gx * x_cat).sum(2) + (gy * y_cat).sum(2)
    offset = tot - (prods.detach() if t is not None else prods).sum(0)
    prods[0] = prods[0] + offset
    return prods


def do_rnnt_pruning(am: Any, lm: Any, ranges: Any) -> Tuple[Any, Any]:
    """k2's do_rnnt_pruning: (am_pruned, lm_pruned), each [B][T][s_range][.]; with tensors,
    both back-propagate into am and lm."""
    a = _array(am, np.float32, "am", 3)
    l_ = _array(lm, np.float32, "lm", 3)
    r = _array(ranges, np.int64, "ranges", 3)
    am_p, lm_p = _native.do_rnnt_pruning(a, l_, r)
    if not (_is_tensor(am) or _is_tensor(lm)):
        return am_p, lm_p
    t = _torch()
    if _wants_grad(am, lm):
        from arrays.k2 import _autograd  # noqa: PLC0415 (needs torch)

        return _autograd.rnnt_pruning(am, lm, t.from_numpy(r), am_p, lm_p)
    return t.from_numpy(am_p), t.from_numpy(lm_p)


def index_select(src: Any, index: Any, default_value: Any = 0) -> Any:
    """k2's index_select: ``src[index]`` along axis 0, `default_value` where the index
    is -1; back-propagates into `src` when it is a tensor that requires grad."""
    idx = _array(index, np.int32, "index", 1).astype(np.int64)
    if _is_tensor(src):
        n = int(src.shape[0])
    else:
        src = np.asarray(src)
        n = src.shape[0]
    if idx.size and (idx.min() < -1 or idx.max() >= n):
        raise IndexError(f"index_select: an index out of range for {n} rows (-1 allowed)")
    keep = idx >= 0
    safe = np.where(keep, idx, 0)
    if _is_tensor(src):
        t = _torch()
        picked = src.index_select(0, t.from_numpy(safe)) if n else src.new_zeros((len(idx),) + tuple(src.shape[1:]))
        mask = t.from_numpy(keep).reshape((-1,) + (1,) * (src.dim() - 1))
        return t.where(mask, picked, t.full_like(picked, default_value))
    picked = src[safe] if n else np.zeros((len(idx),) + src.shape[1:], dtype=src.dtype)
    mask = keep.reshape((-1,) + (1,) * (src.ndim - 1))
    return _out(np.where(mask, picked, np.asarray(default_value, dtype=src.dtype)))


def index_add(index: Any, value: Any, in_out: Any) -> None:
    """k2's index_add: ``in_out[index[i]] += value[i]`` in place, skipping index -1
    (no autograd, as k2's)."""
    idx = _array(index, np.int32, "index", 1).astype(np.int64)
    n = int(in_out.shape[0])
    if idx.size and (idx.min() < -1 or idx.max() >= n):
        raise IndexError(f"index_add: an index out of range for {n} rows (-1 allowed)")
    if int(value.shape[0]) != len(idx):
        raise ValueError(f"index_add: {len(idx)} indexes for {int(value.shape[0])} values")
    keep = idx >= 0
    if _is_tensor(in_out):
        t = _torch()
        v = value if _is_tensor(value) else t.from_numpy(np.asarray(value))
        if v.dtype != in_out.dtype:
            raise ValueError(f"index_add: value of {v.dtype} into {in_out.dtype}")
        with t.no_grad():
            in_out.index_add_(0, t.from_numpy(idx[keep]), v.detach()[t.from_numpy(keep)])
        return
    v = np.asarray(value.detach().numpy() if _is_tensor(value) else value)
    if v.dtype != in_out.dtype:
        raise ValueError(f"index_add: value of {v.dtype} into {in_out.dtype}")
    np.add.at(in_out, idx[keep], v[keep])


def index_fsa(src: Fsa, indexes: Any) -> Fsa:
    """k2's index_fsa: the FsaVec of ``src[i]`` for each i of `indexes` (repeats
    allowed), with the attributes; scores back-propagate into `src`'s."""
    idx = _array(indexes, np.int32, "indexes", 1)
    if src._raw.num_axes != 3:
        raise ValueError(f"index_fsa: expected an FsaVec, got an Fsa of shape {src.shape}")
    n = int(src._raw.num_fsas)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"index_fsa: an index out of range for {n} FSAs")
    return create_fsa_vec([src[int(i)] for i in idx])


def simple_ragged_index_select(src: Any, indexes: RaggedTensor) -> Any:
    """k2's: for each row of the 2-axis int32 `indexes`, the one non-zero value of the
    1-D `src` at its indexes (0 when there is none; more than one is a ValueError)."""
    if not isinstance(indexes, RaggedTensor) or indexes.num_axes != 2 or indexes._values.dtype != np.int32:
        raise ValueError("simple_ragged_index_select: indexes must be a 2-axis int32 RaggedTensor")
    a = src.detach().numpy() if _is_tensor(src) else np.asarray(src)
    if a.ndim != 1:
        raise ValueError(f"simple_ragged_index_select: src must be 1-D, got shape {a.shape}")
    idx = indexes._values.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= len(a)):
        raise IndexError(f"simple_ragged_index_select: an index out of range for {len(a)} values")
    rows = _row_ids(indexes._splits[0]).astype(np.int64)
    picked = a[idx]
    nz = picked != 0
    counts = np.bincount(rows[nz], minlength=indexes.dim0)
    if counts.size and counts.max() > 1:
        bad = int(np.argmax(counts > 1))
        raise ValueError(f"simple_ragged_index_select: row {bad} of indexes has more than one non-zero value")
    out = np.zeros(indexes.dim0, dtype=a.dtype)
    out[rows[nz]] = picked[nz]
    return _out(out)


def _expand_one(
    arcs: np.ndarray, scores: np.ndarray, lists: List[List[List[int]]], num_states: int
) -> Tuple[np.ndarray, np.ndarray, List[List[int]]]:
    """k2's ExpandArcs on one FSA: arc a becomes a chain of max(1, longest list) arcs (an
    arc into the final state one more when a list does not end in -1), through new states
    numbered right after a's source state; the score and the label go on the first arc
    (into the final state: the -1 on the last). Returns the arcs, the arc map (-1 for the
    arcs made) and each ragged attribute's value per new arc (0 past a list's end, -1 on
    the last arc into the final state)."""
    n = len(arcs)
    if n == 0:
        return arcs.reshape(0, 4), np.zeros(0, dtype=np.int32), [[] for _ in lists]
    length = np.ones(n, dtype=np.int64)
    for a in range(n):
        final = arcs[a, 2] == -1
        for lst in lists:
            v = lst[a]
            need = len(v) + (1 if final and (not v or v[-1] != -1) else 0)
            length[a] = max(length[a], need)
    new_id = np.zeros(num_states, dtype=np.int64)
    nxt = 0
    for st in range(num_states):
        new_id[st] = nxt
        leaving = np.nonzero(arcs[:, 0] == st)[0]
        nxt += 1 + int((length[leaving] - 1).sum())
    # src, dest, label, score, arc map, source arc, position in the chain, final arc's last
    out_arcs: List[Tuple[int, int, int, float, int, int, int, bool]] = []
    for st in range(num_states):
        leaving = np.nonzero(arcs[:, 0] == st)[0]
        inter = new_id[st] + 1
        firsts, rest = [], []
        for a in leaving:
            final = arcs[a, 2] == -1
            chain = [int(new_id[st])] + list(range(int(inter), int(inter + length[a] - 1))) + [int(new_id[arcs[a, 1]])]
            inter += length[a] - 1
            for j in range(int(length[a])):
                last = j == length[a] - 1
                label = (-1 if last else 0) if final else (int(arcs[a, 2]) if j == 0 else 0)
                row = (chain[j], chain[j + 1], label, float(scores[a]) if j == 0 else 0.0,
                       int(a) if j == 0 else -1, int(a), j, bool(final and last))
                (firsts if j == 0 else rest).append(row)
        out_arcs.extend(firsts + rest)
    m = len(out_arcs)
    new_arcs = np.zeros((m, 4), dtype=np.int32)
    new_scores = np.zeros(m, dtype=np.float32)
    amap = np.zeros(m, dtype=np.int32)
    values: List[List[int]] = [[] for _ in lists]
    for i, (src, dst, label, score, mp, a, j, final_last) in enumerate(out_arcs):
        new_arcs[i, :3] = (src, dst, label)
        new_scores[i] = score
        amap[i] = mp
        for k, lst in enumerate(lists):
            v = lst[a]
            values[k].append(v[j] if j < len(v) else (-1 if final_last else 0))
    new_arcs[:, 3] = new_scores.view(np.int32)
    return new_arcs, amap, values


def expand_ragged_attributes(
    fsas: Fsa, ret_arc_map: bool = False, ragged_attribute_names: Optional[List[str]] = None
) -> Any:
    """k2's expand_ragged_attributes: the ragged int32 attributes (all, or those named)
    made linear by expanding each arc into a chain (see k2's ExpandArcs); the other
    attributes follow the arc map (0 on the arcs made, ragged ones empty), the scores and
    float attributes back-propagate through it; with `ret_arc_map`, (fsa, arc map)."""
    raw = fsas._raw
    if ragged_attribute_names is None:
        ragged_attribute_names = [n for n in raw.attr_names() if isinstance(raw.get_attr(n), tuple)]
    for n in ragged_attribute_names:
        if not isinstance(raw.get_attr(n), tuple):
            raise ValueError(f"expand_ragged_attributes: {n!r} is not a ragged attribute")
    if not ragged_attribute_names:
        return (fsas, _out(np.arange(raw.num_arcs, dtype=np.int32))) if ret_arc_map else fsas
    lists = [RaggedTensor._from_parts(*raw.get_attr(n)).tolist() for n in ragged_attribute_names]
    arcs = np.asarray(raw.arcs())
    scores = np.asarray(raw.scores(), dtype=np.float32)
    if raw.num_axes == 2:
        pieces = [(0, len(arcs), len(raw.row_splits(1)) - 1)]
    else:
        s1 = np.asarray(raw.row_splits(1))
        b = np.asarray(raw.row_splits(2))[s1]
        pieces = [(int(b[i]), int(b[i + 1]), int(s1[i + 1] - s1[i])) for i in range(len(b) - 1)]
    fsa_list, maps, vals = [], [], [[] for _ in lists]
    for lo, hi, num_states in pieces:
        a, m, v = _expand_one(arcs[lo:hi], scores[lo:hi], [l[lo:hi] for l in lists], num_states)
        fsa_list.append(Fsa(a) if len(a) else Fsa(_native.RawFsa.from_str("", True, 0, [], False)))
        maps.append(np.where(m >= 0, m + lo, -1).astype(np.int32))
        for k in range(len(lists)):
            vals[k].extend(v[k])
    dest = fsa_list[0] if raw.num_axes == 2 else create_fsa_vec(fsa_list)
    arc_map = np.concatenate(maps) if maps else np.zeros(0, dtype=np.int32)
    keep = arc_map >= 0
    safe = np.where(keep, arc_map, 0)
    for name in raw.attr_names():
        if name in ragged_attribute_names:
            continue
        v = raw.get_attr(name)
        if isinstance(v, tuple):
            r = RaggedTensor._from_parts(*v)
            setattr(dest, name, r.index(arc_map)[0])
        else:
            setattr(dest, name, np.where(keep, v[safe] if len(v) else 0, 0).astype(v.dtype))
    for name, values in zip(ragged_attribute_names, vals):
        setattr(dest, name, np.asarray(values, dtype=np.int32))
    if "aux_labels" in ragged_attribute_names or "aux_labels" in raw.attr_names():
        aux = dest._raw.get_attr("aux_labels")
        if isinstance(aux, np.ndarray):
            final = np.asarray(dest._raw.labels()) == -1
            aux = aux.copy()
            aux[final] = -1
            aux[(~final) & (aux == -1)] = 0
            setattr(dest, "aux_labels", aux)
    dest._non_tensor_attr.update(fsas._non_tensor_attr)
    _track(dest, fsas, arc_map)
    return (dest, _out(arc_map)) if ret_arc_map else dest


def intersect_device(
    a_fsas: Fsa, b_fsas: Fsa, b_to_a_map: Any, sorted_match_a: bool = False,
    ret_arc_maps: bool = False,
) -> Any:
    """k2's intersect_device: FSA i of the result intersects ``a_fsas[b_to_a_map[i]]``
    with ``b_fsas[i]``, epsilons matched as ordinary symbols; scores back-propagate
    into both; with `ret_arc_maps`, the arc maps into `a_fsas` and `b_fsas` too.
    (`sorted_match_a` is k2's speed hint and changes nothing here.)"""
    m = _array(b_to_a_map, np.int32, "b_to_a_map", 1)
    if a_fsas._raw.num_axes != 3 or b_fsas._raw.num_axes != 3:
        raise ValueError("intersect_device: a_fsas and b_fsas must be FsaVecs")
    if len(m) != int(b_fsas._raw.num_fsas):
        raise ValueError(f"intersect_device: {len(m)} entries in b_to_a_map for {int(b_fsas._raw.num_fsas)} FSAs in b_fsas")
    a_sel = index_fsa(a_fsas, m)
    out, a_map, b_map = intersect(a_sel, b_fsas, treat_epsilons_specially=False, ret_arc_maps=True)
    if not ret_arc_maps:
        return out
    splits = np.asarray(a_fsas._raw.row_splits(2))[np.asarray(a_fsas._raw.row_splits(1))]
    sel2a = np.concatenate(
        [np.arange(splits[j], splits[j + 1], dtype=np.int32) for j in m]
        or [np.zeros(0, dtype=np.int32)]
    )
    am = np.asarray(a_map)
    a_map = np.where(am >= 0, sel2a[np.where(am >= 0, am, 0)] if len(sel2a) else -1, -1).astype(np.int32)
    return out, _out(a_map), b_map


def compose_arc_maps(step1_arc_map: Any, step2_arc_map: Any) -> Any:
    """k2's compose_arc_maps: ``step1[step2[i]]``, -1 where ``step2[i]`` is -1."""
    a = _array(step1_arc_map, np.int32, "step1_arc_map", 1)
    b = _array(step2_arc_map, np.int32, "step2_arc_map", 1)
    if b.size and (b.min() < -1 or b.max() >= len(a)):
        raise IndexError(f"compose_arc_maps: step2_arc_map indexes beyond the {len(a)} arcs of step 1")
    keep = b >= 0
    return _out(np.where(keep, a[np.where(keep, b, 0)] if len(a) else -1, -1).astype(np.int32))


def cat(srcs: Sequence[Fsa]) -> Fsa:
    """k2's cat: the FsaVecs one after another, with the tensor attributes they all
    have, and each non-tensor attribute from the first FsaVec that has it."""
    for src in srcs:
        if src._raw.num_axes != 3:
            raise ValueError(f"cat: expected FsaVecs, got an Fsa of shape {src.shape}")
    common = set.intersection(*(set(src._raw.attr_names()) for src in srcs)) if srcs else set()
    pieces = []
    for src in srcs:
        for i in range(int(src._raw.num_fsas)):
            f = src[i]
            for name in list(f._raw.attr_names()):
                if name not in common:
                    delattr(f, name)
            f._non_tensor_attr.clear()
            pieces.append(f)
    out = create_fsa_vec(pieces)
    for src in srcs:
        for name, value in src._non_tensor_attr.items():
            out._non_tensor_attr.setdefault(name, value)
    return out


def _labels_per_fsa(fsas: Fsa) -> List[List[int]]:
    """The labels of each FSA's arcs (one list for an Fsa)."""
    raw = fsas._raw
    labels = np.asarray(raw.labels())
    if raw.num_axes == 2:
        return [labels.tolist()]
    arcs = np.asarray(raw.row_splits(2))[np.asarray(raw.row_splits(1))]
    return [labels[arcs[i] : arcs[i + 1]].tolist() for i in range(len(arcs) - 1)]


def linear_fsa_with_self_loops(fsas: Fsa) -> Fsa:
    """k2's: the linear FSA(s) of the positive labels of linear `fsas`, with epsilon
    self-loops."""
    rows = [[x for x in r if x > 0] for r in _labels_per_fsa(fsas)]
    ans = add_epsilon_self_loops(linear_fsa(rows))
    return ans[0] if fsas._raw.num_axes == 2 else ans


def linear_fst_with_self_loops(fsts: Fsa) -> Fsa:
    """k2's: a linear FST (or FstVec) without its epsilon arcs, each kept arc carrying
    the aux labels (without 0 and -1, ragged) and the summed scores of itself and the
    epsilon arcs before the next kept one, with epsilon self-loops."""
    if "aux_labels" not in fsts:
        raise ValueError("linear_fst_with_self_loops: the FST has no aux_labels")
    aux = fsts.aux_labels
    if isinstance(aux, RaggedTensor):
        raise NotImplementedError("linear_fst_with_self_loops: ragged aux_labels are not reproduced")
    labels = np.asarray(fsts._raw.labels())
    aux = np.asarray(fsts._raw.get_attr("aux_labels"))
    flag = np.ones(len(labels), dtype=np.int64)
    flag[1:] = labels[:-1] != 0
    row_ids = np.cumsum(flag) - 1
    n = int(row_ids[-1]) + 1 if len(row_ids) else 0
    splits = np.concatenate([[0], np.cumsum(np.bincount(row_ids, minlength=n))]).astype(np.int32)
    dest_aux = RaggedTensor._from_parts([splits], aux.astype(np.int32)).remove_values_leq(0)
    scores = fsts.scores
    if _is_tensor(scores):
        t = _torch()
        dest_scores = t.zeros(n, dtype=scores.dtype).index_add(0, t.from_numpy(row_ids), scores)
    else:
        dest_scores = np.zeros(n, dtype=np.float32)
        np.add.at(dest_scores, row_ids, scores)
    rows = [[x for x in r if x > 0] for r in _labels_per_fsa(fsts)]
    ans = linear_fsa(rows)
    ans.aux_labels = dest_aux
    ans.scores = dest_scores
    ans = add_epsilon_self_loops(ans)
    return ans[0] if fsts._raw.num_axes == 2 else ans


# --------------------------------------------------------------------------- decoding helpers


def one_best(lattice: Fsa) -> List[Tuple[List[int], List[int], float]]:
    """The best path of each lattice: (labels, aux_labels, score); the aux labels are the
    word ids without 0 and -1 (k2.shortest_path followed by icefall's get_texts)."""
    return [(list(a), list(b), float(c)) for a, b, c in _native.one_best(lattice._raw)]


class Nbest:
    """icefall/k2's Nbest: distinct word sequences drawn from a lattice (``from_lattice``),
    or k2's ``Nbest(fsa, shape)``: an FsaVec of paths grouped by a 2-axis RaggedShape."""

    def __init__(self, paths: Any, shape: Optional[RaggedShape] = None) -> None:
        if shape is not None:
            if shape.num_axes != 2 or shape.numel() != int(paths._raw.num_fsas):
                raise ValueError(
                    f"Nbest: a shape of {shape.num_axes} axes and {shape.numel()} elements "
                    f"for {int(paths._raw.num_fsas)} FSAs (expected 2 axes, one per FSA)"
                )
            self.fsa = paths
            self.shape = shape
            self.paths = None
            return
        self.paths = paths

    def top_k(self, k: int) -> "Nbest":
        """k2's top_k: the k best paths of each group by total score (tropical), a group
        of fewer repeating its last (worst) one."""
        if self.paths is not None:
            raise ValueError("top_k needs an Nbest made as Nbest(fsa, shape)")
        scores = np.asarray(self.fsa._raw.get_tot_scores(True, False))
        splits = self.shape._splits[0]
        picked: List[int] = []
        for row in range(len(splits) - 1):
            begin, end = int(splits[row]), int(splits[row + 1])
            if end == begin:
                raise ValueError(f"top_k: group {row} has no path")
            # stable, best first
            order = sorted(range(begin, end), key=lambda i: -scores[i])
            picked.extend(order[min(j, len(order) - 1)] for j in range(k))
        fsas = create_fsa_vec([self.fsa[i] for i in picked])
        rows = len(splits) - 1
        return Nbest(fsas, RaggedShape([np.arange(rows + 1, dtype=np.int32) * int(k)]))

    @staticmethod
    def from_lattice(
        lattice: Fsa,
        num_paths: int,
        use_double_scores: bool = True,
        nbest_scale: float = 0.5,
        seed: int = 0,
    ) -> "Nbest":
        lists = _native.nbest(lattice._raw, int(num_paths), float(nbest_scale), int(seed))
        return Nbest([[(list(a), list(b), float(c)) for a, b, c in l] for l in lists])

    def texts(self) -> List[List[List[int]]]:
        """Per lattice, the word sequences, best first."""
        if self.paths is None:
            raise ValueError("texts needs an Nbest made by Nbest.from_lattice")
        return [[p[1] for p in l] for l in self.paths]


def __getattr__(name: str) -> Any:
    """k2 names that are not reproduced raise NotImplementedError naming an alternative."""
    alternatives = {
        "CtcLoss": "arrays.k2.ctc_loss",
        "sparse": "torch.sparse on the arc posteriors (get_arc_post)",
        "mwer_loss": "Nbest.from_lattice and the scores of its paths",
        "replace_fsa": "compose with the FSAs to substitute",
        "get_best_matching_stats": "no alternative here (k2's n-gram matching statistics)",
        "OnlineDenseIntersecter": "intersect_dense_pruned on the whole utterance",
        "RnntDecodingStreams": "the RNN-T losses and icefall's greedy or beam search",
        "RnntDecodingConfig": "the RNN-T losses and icefall's greedy or beam search",
        "get_rnnt_logprobs_joint": "rnnt_loss on the logits",
        "get_rnnt_logprobs_pruned": "rnnt_loss_pruned",
        "to_tensor": "fsa.arcs.values() (an Fsa's (N, 4) arcs) or pickle",
    }
    if name in alternatives:
        raise NotImplementedError(f"k2.{name} is not reproduced; use {alternatives[name]}")
    raise AttributeError(f"module 'arrays.k2' has no attribute {name!r}")


from arrays.k2 import fsa_properties  # noqa: E402 (k2.fsa_properties)
from arrays.k2 import ragged  # noqa: E402 (k2.ragged)
