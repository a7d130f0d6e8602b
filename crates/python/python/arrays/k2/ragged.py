"""k2.ragged: k2's ragged-tensor functions (``import arrays.k2.ragged as k2r``)."""

from __future__ import annotations

import random
from typing import Any, Sequence

import numpy as np

from arrays.k2 import RaggedShape, RaggedTensor, _array, _row_ids

__all__ = [
    "RaggedShape",
    "RaggedTensor",
    "cat",
    "create_ragged_shape2",
    "create_ragged_tensor",
    "index",
    "index_and_sum",
    "random_ragged_shape",
    "regular_ragged_shape",
]


def create_ragged_tensor(data: Any, dtype: Any = None, device: Any = "cpu") -> RaggedTensor:
    """k2's create_ragged_tensor: RaggedTensor(data, dtype, device)."""
    return RaggedTensor(data, dtype, device)


def create_ragged_shape2(
    row_splits: Any = None, row_ids: Any = None, cached_tot_size: int = -1
) -> RaggedShape:
    """A 2-axis shape from its row splits or its row ids (with row ids alone, the last
    row is the last id's); both given must agree, as must `cached_tot_size` when not -1."""
    if row_splits is None and row_ids is None:
        raise ValueError("create_ragged_shape2: give row_splits or row_ids")
    ids = None if row_ids is None else _array(row_ids, np.int32, "row_ids", 1)
    if ids is not None and ids.size and (ids.min() < 0 or np.any(np.diff(ids) < 0)):
        raise ValueError("create_ragged_shape2: row_ids must be non-negative and not decrease")
    if row_splits is not None:
        splits = np.array(_array(row_splits, np.int32, "row_splits", 1), dtype=np.int32)
        if len(splits) == 0 or splits[0] != 0 or np.any(np.diff(splits) < 0):
            raise ValueError("create_ragged_shape2: row_splits must start at 0 and not decrease")
        if ids is not None and not np.array_equal(_row_ids(splits), ids):
            raise ValueError("create_ragged_shape2: row_splits and row_ids disagree")
    else:
        n = int(ids[-1]) + 1 if ids.size else 0
        splits = np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=n))]).astype(np.int32)
    if cached_tot_size != -1 and cached_tot_size != int(splits[-1]):
        raise ValueError(f"create_ragged_shape2: cached_tot_size {cached_tot_size}, the shape has {int(splits[-1])}")
    return RaggedShape([splits])


def regular_ragged_shape(dim0: int, dim1: int) -> RaggedShape:
    """The 2-axis shape of `dim0` rows of `dim1` elements each."""
    if dim0 < 0 or dim1 < 0:
        raise ValueError(f"regular_ragged_shape({dim0}, {dim1}): sizes must be non-negative")
    return RaggedShape([(np.arange(dim0 + 1, dtype=np.int64) * dim1).astype(np.int32)])


def random_ragged_shape(
    set_row_ids: bool = False,
    min_num_axes: int = 2,
    max_num_axes: int = 4,
    min_num_elements: int = 0,
    max_num_elements: int = 2000,
) -> RaggedShape:
    """A random shape of `min_num_axes..max_num_axes` axes and
    `min_num_elements..max_num_elements` elements, drawn from Python's ``random`` (so
    ``random.seed`` repeats it); `set_row_ids` is accepted for k2's signature."""
    if not 2 <= min_num_axes <= max_num_axes or not 0 <= min_num_elements <= max_num_elements:
        raise ValueError("random_ragged_shape: needs 2 <= min_num_axes <= max_num_axes and 0 <= min <= max elements")
    num_axes = random.randint(min_num_axes, max_num_axes)
    n = random.randint(min_num_elements, max_num_elements)
    splits = []
    for _ in range(num_axes - 1):
        rows = random.randint(1, max(1, n))
        cuts = sorted(random.randint(0, n) for _ in range(rows - 1))
        splits.append(np.asarray([0, *cuts, n], dtype=np.int32))
        n = rows
    return RaggedShape(list(reversed(splits)))


def cat(srcs: Sequence[RaggedTensor], axis: int = 0) -> RaggedTensor:
    """The tensors one after another (axis 0), or each row's sublists joined (axis 1:
    tensors of equal dim0); all of one dtype and number of axes."""
    if not srcs:
        raise ValueError("cat: no tensors")
    d = srcs[0]._values.dtype
    n = srcs[0].num_axes
    if any(s._values.dtype != d or s.num_axes != n for s in srcs):
        raise ValueError("cat: the tensors differ in dtype or number of axes")
    if axis == 0:
        splits = []
        for a in range(n - 1):
            parts, offset = [np.zeros(1, dtype=np.int64)], 0
            for s in srcs:
                parts.append(s._splits[a][1:].astype(np.int64) + offset)
                offset += int(s._splits[a][-1])
            splits.append(np.concatenate(parts).astype(np.int32))
        return RaggedTensor._from_parts(splits, np.concatenate([s._values for s in srcs]))
    if axis == 1:
        rows = srcs[0].dim0
        if any(s.dim0 != rows for s in srcs):
            raise ValueError("cat(axis=1): the tensors differ in dim0")
        lists = [s.tolist() for s in srcs]
        joined = [[y for lst in lists for y in lst[i]] for i in range(rows)]
        out = RaggedTensor(joined, dtype=d) if rows else RaggedTensor._from_parts(
            [np.zeros(1, np.int32)] * (n - 1), np.zeros(0, d))
        return out
    raise ValueError(f"cat: axis must be 0 or 1, not {axis}")


def index(src: Any, indexes: Any, axis: int = 0, need_value_indexes: bool = False) -> Any:
    """k2.ragged.index: on a RaggedTensor, ``src.index(indexes, axis,
    need_value_indexes)``; on a 1-D tensor with ragged `indexes`, the ragged tensor of
    the shape of `indexes` whose values are ``src[indexes.values]`` (0 for -1)."""
    if isinstance(src, RaggedTensor):
        if isinstance(indexes, RaggedTensor):
            return src.index(indexes)
        return src.index(indexes, axis, need_value_indexes)
    if not isinstance(indexes, RaggedTensor):
        raise ValueError("k2.ragged.index of a tensor needs ragged int32 indexes")
    from arrays.k2 import index_select  # noqa: PLC0415

    return RaggedTensor(indexes.shape, index_select(src, indexes.values))


def index_and_sum(src: Any, indexes: RaggedTensor) -> Any:
    """For each sublist of the last axis of `indexes`, the sum of `src` at those indexes
    (-1 adds nothing); back-propagates into `src` when it is a tensor that requires grad."""
    from arrays.k2 import index_select  # noqa: PLC0415

    picked = index_select(src, indexes.values)
    return RaggedTensor(indexes.shape, picked).sum()

