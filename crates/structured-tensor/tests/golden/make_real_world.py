#!/usr/bin/env python3
"""Writes the real-world Parquet goldens under real_world/ beside this script, which
tests/real_world_golden.rs reads (no Python needed there): nullable columns of every type
we hold, with actual nulls, written by pyarrow with each codec, a file written by polars
(zstd, its default), and real_world.json, the rows as pyarrow's to_pylist() returns them
(the same for every file). Bytes are written as hex strings in the JSON.

Needs pyarrow (polars and duckdb optional). Where this package's Python module
(`arrays`, crates/python) is importable too, the script also writes the table with it in
each codec and checks that pyarrow, polars and DuckDB read those files back as written;
real_world.json records which readers did. Run from anywhere:

    python3.11 -m venv target/tmp/golden-venv
    target/tmp/golden-venv/bin/pip install pyarrow polars duckdb target/python/wheels/python/*.whl
    target/tmp/golden-venv/bin/python crates/structured-tensor/tests/golden/make_real_world.py

Files:
- nullable_{snappy,gzip,zstd,uncompressed}.parquet: the table below, row groups of 2 rows.
- polars_zstd.parquet: the same rows through polars' write_parquet (zstd), where polars
  installs; skipped otherwise.
- duckdb_{zstd,snappy}.parquet: the same rows through DuckDB's `COPY ... (FORMAT parquet)`,
  row groups of 2 rows, where duckdb installs; skipped otherwise.
- real_world.json: the rows, and the versions that wrote them.
"""

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_world")

SCHEMA = pa.schema(
    [
        ("i64", pa.int64()),
        ("i32", pa.int32()),
        ("f64", pa.float64()),
        ("f32", pa.float32()),
        ("u8", pa.uint8()),
        ("flag", pa.bool_()),
        ("name", pa.string()),
        ("blob", pa.binary()),
        ("tags", pa.list_(pa.string())),
        ("grid", pa.list_(pa.list_(pa.int64()))),
        ("point", pa.struct([("x", pa.float64()), ("label", pa.string())])),
        ("events", pa.list_(pa.struct([("t", pa.int64()), ("kind", pa.string())]))),
        ("user-id", pa.string()),
    ]
)

ROWS = [
    {"i64": 1, "i32": -5, "f64": 0.5, "f32": 1.5, "u8": 255, "flag": True, "name": "a",
     "blob": b"\x00\xff", "tags": ["x", None, "y"], "grid": [[1, None], []],
     "point": {"x": 1.0, "label": "p"}, "events": [{"t": 1, "kind": "open"}],
     "user-id": "u1"},
    {"i64": None, "i32": None, "f64": None, "f32": None, "u8": None, "flag": None,
     "name": None, "blob": None, "tags": None, "grid": None, "point": None,
     "events": None, "user-id": None},
    {"i64": -9, "i32": 7, "f64": -2.25, "f32": None, "u8": 0, "flag": False, "name": "",
     "blob": b"", "tags": [], "grid": [[None]], "point": {"x": None, "label": None},
     "events": [{"t": None, "kind": "close"}, {"t": 3, "kind": None}], "user-id": "u3"},
    {"i64": 4, "i32": None, "f64": 1e300, "f32": 2.0, "u8": 7, "flag": None, "name": "é",
     "blob": None, "tags": [None], "grid": [], "point": {"x": -0.0, "label": "q"},
     "events": [], "user-id": None},
]


def jsonable(v):
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    return v


def main():
    os.makedirs(HERE, exist_ok=True)
    table = pa.Table.from_pylist(ROWS, schema=SCHEMA)
    for codec in ["snappy", "gzip", "zstd", "none"]:
        name = "uncompressed" if codec == "none" else codec
        pq.write_table(table, os.path.join(HERE, f"nullable_{name}.parquet"),
                       compression=codec, row_group_size=2)
    versions = {"pyarrow": pa.__version__}
    try:
        import polars as pl

        pl.from_arrow(table).write_parquet(os.path.join(HERE, "polars_zstd.parquet"))
        versions["polars"] = pl.__version__
    except ImportError:
        pass
    try:
        import duckdb

        con = duckdb.connect()
        con.register("rows", table)
        for codec in ["zstd", "snappy"]:
            path = os.path.join(HERE, f"duckdb_{codec}.parquet")
            con.execute(f"COPY (SELECT * FROM rows) TO '{path}' "
                        f"(FORMAT parquet, COMPRESSION {codec}, ROW_GROUP_SIZE 2)")
        versions["duckdb"] = duckdb.__version__
    except ImportError:
        pass
    for name in sorted(os.listdir(HERE)):
        if name.endswith(".parquet"):
            back = pq.read_table(os.path.join(HERE, name)).to_pylist()
            assert back == ROWS, f"pyarrow reads {name} as written"
    doc = {"versions": versions, "rows": jsonable(ROWS)}
    read_back = ours_read_back(table)
    if read_back:
        doc["ours_read_back_by"] = read_back
    with open(os.path.join(HERE, "real_world.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def as_we_hold(row):
    """A row under our documented null policy: a null list is an empty list, a null
    struct a struct of null leaves."""
    row = dict(row)
    for name in ["tags", "grid", "events"]:
        if row[name] is None:
            row[name] = []
    if row["point"] is None:
        row["point"] = {"x": None, "label": None}
    return row


def ours_read_back(table):
    """Writes `table` with this package in each codec (to a scratch folder; the files are
    not kept) and reads each file back with pyarrow, polars and DuckDB, where installed:
    the readers that gave ROWS (under our null policy, `as_we_hold`), with their versions.
    Empty when `arrays` is missing."""
    try:
        from arrays.structured import StructuredTensor
    except ImportError:
        return {}
    import tempfile

    ours = StructuredTensor.from_arrow(table, nulls=True, any_field_names=True)
    readers = {"pyarrow": (pa.__version__, lambda path: pq.read_table(path).to_pylist())}
    try:
        import polars as pl

        readers["polars"] = (pl.__version__, lambda path: pl.read_parquet(path).to_dicts())
    except ImportError:
        pass
    try:
        import duckdb

        def by_duckdb(path):
            return duckdb.sql(f"SELECT * FROM '{path}'").arrow().read_all().to_pylist()

        readers["duckdb"] = (duckdb.__version__, by_duckdb)
    except ImportError:
        pass
    result = {}
    with tempfile.TemporaryDirectory() as scratch:
        for codec in ["snappy", "gzip", "zstd", "none"]:
            path = os.path.join(scratch, f"ours_{codec}.parquet")
            ours.write_parquet(path, compression=codec)
            for reader, (version, read) in readers.items():
                rows = [{key: row[key] for key in SCHEMA.names} for row in read(path)]
                assert rows == [as_we_hold(r) for r in ROWS], f"{reader}, our {codec} file: {rows}"
                result[reader] = version
    return result


if __name__ == "__main__":
    main()
