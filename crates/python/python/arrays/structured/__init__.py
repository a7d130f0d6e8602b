"""TensorFlow's ``tf.experimental.StructuredTensor`` over the Rust structured-tensor crate.

``StructuredTensor.from_pyval(obj)`` / ``.to_pyval()`` follow TensorFlow's rules and
errors (the crate's ``from_json`` / ``to_json``; the Python value crosses as JSON text),
with ``shape``, ``rank``, ``nrows()``, ``field_names()``, ``field_value(path)``,
``gather``, ``boolean_mask``, ``merge_dims``, ``partition_outer_dimension`` and
``concat``. Leaf fields come out as nested Python lists (as ``to_pyval`` gives them), not
as tensors.

Arrow: ``StructuredTensor.from_arrow(obj)`` takes a pyarrow ``RecordBatch``, ``Table`` or
``StructArray`` (any object with ``__arrow_c_array__`` or ``__arrow_c_stream__``, the Arrow
PyCapsule protocol) and ``.to_arrow()`` gives a pyarrow ``RecordBatch`` (or an array), both
through the Arrow C data interface: the buffers cross without a copy (the crate copies leaf
values into its own columns on the way in; on the way out numbers, strings and row
partitions are handed to Arrow as they are). ``read_parquet`` / ``write_parquet`` over the
crate's Parquet reader and writer.
"""

from __future__ import annotations

import json
import os
from typing import Any, List, Optional, Sequence, Tuple, Union

from arrays import _native

__all__ = ["StructuredTensor", "concat", "read_parquet", "write_parquet"]


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as Python values, for ``json.dumps``."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (bytes, bytearray)):
        raise NotImplementedError("bytes values: strings and numbers only (the value crosses as JSON text)")
    raise TypeError(f"a value of type {type(value).__name__} is not a Python value of StructuredTensor")


class StructuredTensor:
    """A multi-dimensional array of structs sharing one schema (TensorFlow's
    ``StructuredTensor``), field-major over ragged row partitions."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Any):
        self._raw = raw

    @staticmethod
    def from_pyval(pyval: Any) -> "StructuredTensor":
        """TensorFlow's ``from_pyval``: nested dicts and lists to a structured tensor."""
        try:
            text = json.dumps(pyval, default=_plain, allow_nan=False)
        except ValueError as err:
            raise ValueError(f"from_pyval: {err} (NaN and infinities are not taken)") from None
        return StructuredTensor(_native.RawStructuredTensor.from_json(text))

    def to_pyval(self) -> Any:
        """TensorFlow's ``to_pyval``: nested dicts and lists."""
        return json.loads(self._raw.to_json())

    @staticmethod
    def from_arrow(obj: Any, *, nulls: bool = False, any_field_names: bool = False) -> "StructuredTensor":
        """A tensor from a pyarrow ``RecordBatch``, ``Table`` (its batches concatenated),
        ``StructArray`` (rank 1) or ``ListArray`` of structs (rank 1 + the list depth), or
        any object with ``__arrow_c_array__`` / ``__arrow_c_stream__``. TensorFlow's rules by
        default: a null or a field name outside ``[a-zA-Z][a-zA-Z0-9_]*`` is a
        ``ValueError`` naming the field and the row; ``nulls=True`` reads nulls (a null list
        as an empty list, a null struct nulling every leaf below), ``any_field_names=True``
        any UTF-8 name."""
        return StructuredTensor(
            _native.RawStructuredTensor.from_arrow(obj, bool(nulls), bool(any_field_names))
        )

    def to_arrow(self, record_batch: Optional[bool] = None) -> Any:
        """This tensor as Arrow: a ``pyarrow.RecordBatch`` (rank 1, the default there) or a
        pyarrow array (``record_batch=False``: a ``StructArray`` at rank 1, ``ListArray``s
        of one above). Numbers, strings and row partitions are shared with this tensor, not
        copied. Without pyarrow, the object with ``__arrow_c_array__`` that any Arrow
        library takes in."""
        if record_batch is None:
            record_batch = self.rank == 1
        export = self._raw.to_arrow(bool(record_batch))
        try:
            import pyarrow
        except ImportError:
            return export
        return pyarrow.record_batch(export) if record_batch else pyarrow.array(export)

    def write_parquet(
        self,
        path: Any,
        *,
        row_group_size: Optional[int] = None,
        compression: str = "snappy",
        compression_level: Optional[int] = None,
    ) -> None:
        """Writes this rank-1 tensor to a Parquet file (see :func:`write_parquet`)."""
        self._raw.write_parquet(os.fspath(path), row_group_size, compression, compression_level)

    @property
    def shape(self) -> Tuple[Optional[int], ...]:
        """The shape; ``None`` for a ragged dimension."""
        return tuple(self._raw.shape)

    @property
    def rank(self) -> int:
        return self._raw.rank

    def nrows(self) -> Optional[int]:
        return self._raw.nrows()

    def field_names(self) -> List[str]:
        return self._raw.field_names()

    def field_value(self, field_name: Union[str, Sequence[str]]) -> Any:
        """The field at a name or a path (a tuple of names): a ``StructuredTensor`` for a
        struct field, nested lists for a leaf."""
        path = [field_name] if isinstance(field_name, str) else list(field_name)
        struct, leaf = self._raw.field_value(path)
        return StructuredTensor(struct) if struct is not None else json.loads(leaf)

    def __getitem__(self, key: Union[str, Tuple[str, ...]]) -> Any:
        if isinstance(key, (str, tuple)):
            return self.field_value(key)
        raise NotImplementedError("indexing by field name or path only")

    def gather(self, indices: Sequence[int], axis: int = 0) -> "StructuredTensor":
        """``tf.gather(st, indices, axis)``."""
        return StructuredTensor(self._raw.gather([int(i) for i in indices], int(axis)))

    def boolean_mask(self, mask: Sequence[bool]) -> "StructuredTensor":
        """``tf.boolean_mask(st, mask)`` on the outer dimension."""
        return StructuredTensor(self._raw.boolean_mask([bool(m) for m in mask]))

    def merge_dims(self, outer_axis: int, inner_axis: int) -> "StructuredTensor":
        return StructuredTensor(self._raw.merge_dims(int(outer_axis), int(inner_axis)))

    def partition_outer_dimension(self, row_splits: Sequence[int]) -> "StructuredTensor":
        """Splits the outer dimension by ``row_splits`` (TensorFlow's ``RowPartition``)."""
        return StructuredTensor(self._raw.partition_outer_dimension([int(s) for s in row_splits]))

    def __repr__(self) -> str:
        return f"<StructuredTensor shape={self.shape} fields={self.field_names()}>"


def concat(values: Sequence[StructuredTensor], axis: int = 0) -> StructuredTensor:
    """``tf.concat`` of structured tensors."""
    return StructuredTensor(_native.RawStructuredTensor.concat([v._raw for v in values], int(axis)))


def read_parquet(path: Any, *, nulls: bool = False, any_field_names: bool = False) -> StructuredTensor:
    """A Parquet file (ours, pyarrow's, Spark's, ...) as a rank-1 tensor: one field per
    column, one struct per row. ``nulls`` and ``any_field_names`` as in
    :meth:`StructuredTensor.from_arrow`; a column we cannot hold, or a null refused,
    raises ``ValueError`` naming the file, the field and the row."""
    return StructuredTensor(
        _native.RawStructuredTensor.read_parquet(os.fspath(path), bool(nulls), bool(any_field_names))
    )


def write_parquet(
    st: StructuredTensor,
    path: Any,
    *,
    row_group_size: Optional[int] = None,
    compression: str = "snappy",
    compression_level: Optional[int] = None,
) -> None:
    """Writes a rank-1 tensor to a Parquet file (replacing one that exists): one column per
    field, nested structs as groups, ragged dimensions as lists. ``compression`` is one of
    pyarrow's names: ``"snappy"`` (the default), ``"gzip"``, ``"zstd"``, ``"none"``."""
    st.write_parquet(
        path, row_group_size=row_group_size, compression=compression, compression_level=compression_level
    )
