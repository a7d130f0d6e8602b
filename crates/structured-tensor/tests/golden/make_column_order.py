#!/usr/bin/env python3
"""Writes parquet/column_order.parquet beside this script: three int64 columns written by
pyarrow in the order z, a, m (not sorted), with a struct column s whose children are y, b,
which tests/field_order.rs reads back in that order. Needs pyarrow; run from anywhere:

    venv/bin/python crates/structured-tensor/tests/golden/make_column_order.py

The table (two rows): z = [1, 2], a = [3, 4], m = [5, 6], s = [{y: 7, b: 8}, {y: 9, b: 10}].
"""
import os

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))

table = pa.table(
    {
        "z": pa.array([1, 2], pa.int64()),
        "a": pa.array([3, 4], pa.int64()),
        "m": pa.array([5, 6], pa.int64()),
        "s": pa.array(
            [{"y": 7, "b": 8}, {"y": 9, "b": 10}],
            pa.struct([("y", pa.int64()), ("b", pa.int64())]),
        ),
    }
)
assert table.column_names == ["z", "a", "m", "s"]
pq.write_table(table, os.path.join(HERE, "parquet", "column_order.parquet"), compression="snappy")
