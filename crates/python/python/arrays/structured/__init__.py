"""TensorFlow's ``tf.experimental.StructuredTensor`` over the Rust structured-tensor crate.

``StructuredTensor.from_pyval(obj)`` / ``.to_pyval()`` follow TensorFlow's rules and
errors (the crate's JSON rules: a value of plain dicts, lists, tuples, strings, numbers,
bools and ``None`` is walked from Rust, anything else crosses as JSON text, and
``to_pyval`` comes back as JSON text),
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

``RaggedArray`` is ragged-core's ragged array of numbers (int32, int64, float32, float64):
from a ``pyarrow.ListArray`` (``from_arrow``), from nested lists (``from_list``), out as a
``ListArray`` (``to_arrow``) or nested lists, with ``sum``/``max``/``min`` per sublist.
"""

from __future__ import annotations

import json
import os
from typing import Any, List, Optional, Sequence, Tuple, Union

from arrays import _native

__all__ = ["RaggedArray", "StructuredTensor", "concat", "read_parquet", "write_parquet"]


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as Python values, for ``json.dumps``."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (bytes, bytearray)):
        raise NotImplementedError("bytes values: strings and numbers only (the value crosses as JSON text)")
    raise TypeError(f"a value of type {type(value).__name__} is not a Python value of StructuredTensor")


def _check_keys(pyval: Any) -> None:
    """Raises ``TypeError`` for a dict key in ``pyval`` that is not a string (TensorFlow's
    ``from_pyval`` refuses them; ``json.dumps`` would make ``1``, ``True`` and ``None`` the
    names ``"1"``, ``"true"``, ``"null"``)."""
    stack: List[Tuple[Any, Tuple[str, ...]]] = [(pyval, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                if not isinstance(key, str):
                    raise TypeError(
                        f"from_pyval: the key {key!r} ({type(key).__name__}) of a dict at path "
                        f"{path!r} is not a string"
                    )
                if isinstance(child, (dict, list, tuple)):
                    stack.append((child, path + (key,)))
        elif isinstance(value, (list, tuple)):
            stack.extend((child, path) for child in value if isinstance(child, (dict, list, tuple)))


class StructuredTensor:
    """A multi-dimensional array of structs sharing one schema (TensorFlow's
    ``StructuredTensor``), field-major over ragged row partitions."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Any):
        self._raw = raw

    @staticmethod
    def from_pyval(pyval: Any) -> "StructuredTensor":
        """TensorFlow's ``from_pyval``: nested dicts and lists to a structured tensor. A
        dict key that is not a string is a ``TypeError`` naming it and its path."""
        # plain Python values are walked from Rust; the walk answers None for anything
        # else (numpy values, subclasses, bytes, NaN, keys that are not str), which the
        # JSON text below then judges, with the same rules
        raw = _native.RawStructuredTensor.from_pyval(pyval)
        if raw is not None:
            return StructuredTensor(raw)
        try:
            text = json.dumps(pyval, default=_plain, allow_nan=False)
        except ValueError as err:
            raise ValueError(f"from_pyval: {err} (NaN and infinities are not taken)") from None
        except TypeError:
            _check_keys(pyval)
            raise
        # json.dumps writes the keys True, False, None as "true", "false", "null", names
        # the crate would take: look for a key that was not a string only where one of
        # those (or an error) shows up, so a plain document is not walked twice
        if '"true": ' in text or '"false": ' in text or '"null": ' in text:
            _check_keys(pyval)
        try:
            raw = _native.RawStructuredTensor.from_json(text)
        except ValueError:
            _check_keys(pyval)  # 1 or 2.5 as a key: a TypeError, as TensorFlow has it
            raise
        return StructuredTensor(raw)

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

    def field_dtype(self, field_name: Union[str, Sequence[str]]) -> Optional[str]:
        """The dtype of the leaf at a name or a path: ``"int64"``, ``"float64"``, ``"bool"``,
        ``"string"`` from ``from_pyval`` (TensorFlow infers ``int32`` / ``float32``, or
        ``int64`` for an integer past int32), also ``"int32"``, ``"float32"``, ``"uint8"``,
        ``"bytes"`` from Arrow; ``None`` for a struct field."""
        path = [field_name] if isinstance(field_name, str) else list(field_name)
        return self._raw.field_dtype(path)

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

    def to_bytes(self) -> bytes:
        """The compact binary form: the tensor's Arrow form as an Arrow IPC stream behind
        a short header (a rank-0 tensor: its JSON text). What pickling ships."""
        return bytes(self._raw.to_bytes())

    @staticmethod
    def from_bytes(data: bytes) -> "StructuredTensor":
        """The tensor :meth:`to_bytes` wrote; truncated or forged bytes are a
        ``ValueError``."""
        return StructuredTensor(_native.RawStructuredTensor.from_bytes(bytes(data)))

    def __reduce__(self) -> Any:
        return (StructuredTensor.from_bytes, (self.to_bytes(),))


def concat(values: Sequence[StructuredTensor], axis: int = 0) -> StructuredTensor:
    """``tf.concat`` of structured tensors."""
    return StructuredTensor(_native.RawStructuredTensor.concat([v._raw for v in values], int(axis)))


_DTYPES = ("int32", "int64", "float32", "float64")


class RaggedArray:
    """A ragged array of numbers (ragged-core's ``Ragged<T>``): ``num_axes`` axes, row
    splits per axis, values of one of int32, int64, float32, float64."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Any):
        self._raw = raw

    @staticmethod
    def from_arrow(obj: Any) -> "RaggedArray":
        """From a ``pyarrow.ListArray`` or ``LargeListArray`` (nested as deep as it goes)
        over int32, int64, float32 or float64 values; a null is a ``ValueError`` naming the
        axis and the index."""
        return RaggedArray(_native.RawRagged.from_arrow(obj))

    @staticmethod
    def from_list(nested: Sequence[Any], dtype: Optional[str] = None) -> "RaggedArray":
        """From nested Python lists of equal depth (at least a list of lists). ``dtype``
        defaults to int64 for integers and float64 otherwise."""
        import numpy as np

        if dtype is not None and str(dtype) not in _DTYPES:
            raise ValueError(f"dtype {dtype} is not one of {', '.join(_DTYPES)}")
        splits: List[List[int]] = []
        level: List[Any] = list(nested)
        while True:
            lists = [isinstance(x, (list, tuple)) for x in level]
            if not all(lists):
                if any(lists):
                    raise ValueError(f"from_list: lists and values mixed at depth {len(splits) + 1}")
                break
            if not level and splits:
                break  # nothing below: the depth reached so far
            splits.append([0] + np.cumsum([len(x) for x in level], dtype=np.int64).tolist())
            level = [y for x in level for y in x]
        if not splits:
            raise ValueError("from_list: a ragged array needs at least 2 axes (a list of lists)")
        values = np.asarray(level, dtype=dtype)
        if dtype is None:
            if values.size == 0 or values.dtype.kind in "iu":
                values = values.astype(np.int64)
            elif values.dtype.kind == "f":
                values = values.astype(np.float64)
        if values.ndim != 1 or str(values.dtype) not in _DTYPES:
            raise ValueError(
                f"from_list: the innermost lists hold {values.dtype} values; take numbers "
                f"({', '.join(_DTYPES)})"
            )
        if max(s[-1] for s in splits) > np.iinfo(np.int32).max:
            raise ValueError("from_list: more values than int32 row splits hold")
        return RaggedArray(_native.RawRagged.from_parts(splits, values))

    def to_arrow(self) -> Any:
        """A ``pyarrow.ListArray`` nested ``num_axes - 1`` deep (the row splits shared, the
        values copied once); without pyarrow the object with ``__arrow_c_array__``."""
        export = self._raw.to_arrow()
        try:
            import pyarrow
        except ImportError:
            return export
        return pyarrow.array(export)

    def to_list(self) -> List[Any]:
        """Nested Python lists."""
        out: Any = self._raw.values().tolist()
        for axis in range(self.num_axes - 1, 0, -1):
            s = self._raw.row_splits(axis).tolist()
            out = [out[s[i] : s[i + 1]] for i in range(len(s) - 1)]
        return out

    @property
    def num_axes(self) -> int:
        return self._raw.num_axes

    @property
    def dtype(self) -> str:
        return self._raw.dtype

    def row_splits(self, axis: int) -> Any:
        return self._raw.row_splits(int(axis))

    def values(self) -> Any:
        return self._raw.values()

    def sum(self, initial_value: Any = 0) -> Any:
        """k2's ``SumPerSublist`` over the last axis, a numpy array."""
        return self._raw.reduce("sum", initial_value)

    def max(self, initial_value: Any = None) -> Any:
        """k2's ``MaxPerSublist``: ``initial_value`` (default the type's lowest) for an
        empty sublist."""
        return self._raw.reduce("max", self._limit(initial_value, low=True))

    def min(self, initial_value: Any = None) -> Any:
        """k2's ``MinPerSublist``: ``initial_value`` (default the type's highest)."""
        return self._raw.reduce("min", self._limit(initial_value, low=False))

    def _limit(self, value: Any, low: bool) -> Any:
        import numpy as np

        if value is not None:
            return value
        if self.dtype.startswith("int"):
            info = np.iinfo(self.dtype)
            return int(info.min if low else info.max)
        return float("-inf") if low else float("inf")

    def __repr__(self) -> str:
        return f"<RaggedArray {self.dtype} num_axes={self.num_axes}>"

    def __reduce__(self) -> Any:
        # the row splits and the values as numpy arrays (pickled as their raw bytes); the
        # receiving side rebuilds through the checked constructor, so forged splits are a
        # ValueError
        splits = [self._raw.row_splits(axis) for axis in range(1, self.num_axes)]
        return (_ragged_from_parts, (splits, self._raw.values()))


def _ragged_from_parts(splits: Sequence[Any], values: Any) -> RaggedArray:
    """The unpickling side of :class:`RaggedArray`."""
    import numpy as np

    return RaggedArray(
        _native.RawRagged.from_parts([np.asarray(s, dtype=np.int32).tolist() for s in splits], values)
    )


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
