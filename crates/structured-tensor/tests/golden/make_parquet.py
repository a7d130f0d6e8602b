#!/usr/bin/env python3
"""Writes the Parquet golden files under parquet/ beside this script, and the JSON each
holds, which tests/parquet.rs reads back (ours read through the Parquet reader, the JSON
through our JSON reader, the two compared). With --check DIR it does the reverse: reads
every DIR/*.parquet written by our writer with pyarrow and compares it with DIR/*.json.

Needs pyarrow (python -m venv venv && venv/bin/pip install pyarrow). Run from anywhere:

    venv/bin/python crates/structured-tensor/tests/golden/make_parquet.py
    cargo test -p structured-tensor --features parquet --test parquet
    venv/bin/python crates/structured-tensor/tests/golden/make_parquet.py \
        --check target/tmp/parquet-ours

(the test writes our files of every golden JSON to target/tmp/parquet-ours, or wherever
cargo's CARGO_TARGET_TMPDIR points).

Files written (the data is fixed, typed explicitly so that no column is inferred):
- records_snappy.parquet, records_uncompressed.parquet (row groups of 2 rows): records.json,
  every dtype we hold (int64, float64, bool, string) in nested structs, lists, lists of
  lists and lists of structs.
- hive/year=Y/city=C/part-0.parquet, written by pyarrow.dataset.write_dataset with hive
  partitioning (city values need percent-encoding); hive.json is what
  pyarrow.dataset.dataset(hive, partitioning="hive") reads, rows in sorted path order,
  keys as fields.
- ../../../../ragged-core/tests/golden/ragged.parquet: ragged-core's golden file, list
  columns written by pyarrow: tokens list<int32>, frames list<list<float32>>, ids int64 (no
  list), holes list<int32> with a null item. ragged-core's tests/parquet.rs holds the same
  values written out.
- narrow.parquet (row groups of 2 rows): narrow.json, the dtypes beside the JSON ones
  (int32, float32, uint8, binary) as scalars, lists, lists of lists, in a nested struct and
  in lists of structs, with their extreme values (int32 and uint8 bounds, float32's largest
  and smallest subnormal, bytes that are not UTF-8). JSON has no bytes: every bytes value
  is written as its hex string, here and in --check.
- timestamp.parquet: a timestamp column (a type we do not hold); nulls.parquet: an int64
  column with a null. The tests expect errors for both; no JSON.

--check also compares the leaf types of each of our files with those of the golden file of
the same name, so that int32 stays int32 (not int64) and bytes stay binary.
"""

import json
import os
import shutil
import sys

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "parquet")

RECORDS = [
    {
        "id": 1,
        "score": 0.5,
        "ok": True,
        "name": "Bob",
        "tags": [[1, 2], [], [3]],
        "pos": {"x": 1.5, "ys": [3], "inner": {"label": "a", "flags": [True]}},
        "pts": [{"px": 1.0, "py": -2.0}, {"px": 3.5, "py": 0.25}],
    },
    {
        "id": -4611686018427387904,
        "score": -0.0,
        "ok": False,
        "name": "Жозефина 🦀",
        "tags": [],
        "pos": {"x": 2.5, "ys": [], "inner": {"label": "", "flags": []}},
        "pts": [],
    },
    {
        "id": 9223372036854775807,
        "score": 1e-300,
        "ok": True,
        "name": "",
        "tags": [[4, 5, 6]],
        "pos": {"x": -1.25e10, "ys": [4, 5], "inner": {"label": "line\nbreak", "flags": [False, True]}},
        "pts": [{"px": 0.0, "py": 0.0}],
    },
    {
        "id": 0,
        "score": 123456.789,
        "ok": False,
        "name": "tab\there \"quoted\"",
        "tags": [[], [7]],
        "pos": {"x": 0.1, "ys": [6, 7, 8], "inner": {"label": "z", "flags": [True, True, False]}},
        "pts": [{"px": -1.0, "py": 1.0}, {"px": 2.0, "py": 2.0}, {"px": 4.0, "py": 8.0}],
    },
    {
        "id": -1,
        "score": 3.0,
        "ok": True,
        "name": "last",
        "tags": [[8], [9], [10, 11]],
        "pos": {"x": 7.0, "ys": [9], "inner": {"label": "end", "flags": []}},
        "pts": [],
    },
]

INNER = pa.struct([("label", pa.string()), ("flags", pa.list_(pa.bool_()))])
POS = pa.struct([("x", pa.float64()), ("ys", pa.list_(pa.int64())), ("inner", INNER)])
PT = pa.struct([("px", pa.float64()), ("py", pa.float64())])
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("score", pa.float64()),
        ("ok", pa.bool_()),
        ("name", pa.string()),
        ("tags", pa.list_(pa.list_(pa.int64()))),
        ("pos", POS),
        ("pts", pa.list_(PT)),
    ]
)

NARROW_RECORDS = [
    {
        "i": -2147483648,
        "f": 0.5,
        "u": 0,
        "b": b"",
        "li": [1, -2, 2147483647],
        "lf": [[1.5], [], [-0.25, 2.0]],
        "s": {
            "u8s": [0, 255],
            "raw": b"\x00\xff",
            "pts": [{"x": 1.0, "n": 1}, {"x": -3.5, "n": -1}],
        },
    },
    {
        "i": 2147483647,
        "f": 3.4028234663852886e38,
        "u": 255,
        "b": b"\xc3\x28",
        "li": [],
        "lf": [],
        "s": {"u8s": [], "raw": b"abc", "pts": []},
    },
    {
        "i": 0,
        "f": 1.401298464324817e-45,
        "u": 7,
        "b": "Жозефина".encode("utf-8"),
        "li": [0],
        "lf": [[], [1e-3]],
        "s": {"u8s": [128], "raw": b"", "pts": [{"x": 0.0, "n": 0}]},
    },
]
NARROW_PT = pa.struct([("x", pa.float32()), ("n", pa.int32())])
NARROW_S = pa.struct(
    [("u8s", pa.list_(pa.uint8())), ("raw", pa.binary()), ("pts", pa.list_(NARROW_PT))]
)
NARROW_SCHEMA = pa.schema(
    [
        ("i", pa.int32()),
        ("f", pa.float32()),
        ("u", pa.uint8()),
        ("b", pa.binary()),
        ("li", pa.list_(pa.int32())),
        ("lf", pa.list_(pa.list_(pa.float32()))),
        ("s", NARROW_S),
    ]
)

HIVE_ROWS = [
    {"year": 2024, "city": "New York", "temp": 3.5, "events": ["snow"]},
    {"year": 2023, "city": "Oslo", "temp": -7.0, "events": []},
    {"year": 2024, "city": "Oslo", "temp": -2.5, "events": ["ice", "wind"]},
    {"year": 2023, "city": "New York", "temp": 1.0, "events": ["rain"]},
    {"year": 2023, "city": "Oslo", "temp": -9.5, "events": ["snow", "snow"]},
    {"year": 2024, "city": "São Paulo/SP", "temp": 24.0, "events": []},
]
HIVE_SCHEMA = pa.schema(
    [
        ("year", pa.int64()),
        ("city", pa.string()),
        ("temp", pa.float64()),
        ("events", pa.list_(pa.string())),
    ]
)


def hex_bytes(value):
    """`value` with every bytes object replaced by its hex string (JSON has no bytes)."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return [hex_bytes(x) for x in value]
    if isinstance(value, dict):
        return {k: hex_bytes(v) for k, v in value.items()}
    return value


def leaf_types(t, path=()):
    """The type of every leaf under `t` (a schema or type), by path; lists add "[]"."""
    if isinstance(t, pa.Schema):
        out = {}
        for field in t:
            out.update(leaf_types(field.type, path + (field.name,)))
        return out
    if pa.types.is_struct(t):
        out = {}
        for i in range(t.num_fields):
            out.update(leaf_types(t.field(i).type, path + (t.field(i).name,)))
        return out
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return leaf_types(t.value_type, path + ("[]",))
    return {"/".join(path): str(t)}


def dump(name, value):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, indent=1)
        f.write("\n")


RAGGED_OUT = os.path.join(HERE, "..", "..", "..", "ragged-core", "tests", "golden")
RAGGED = {
    "tokens": ([[1, 2, 3], [], [4], [-2147483648, 2147483647]], pa.list_(pa.int32())),
    "frames": (
        [[[0.5, 1.5], []], [], [[2.25]], [[-1.0, 3.0, 1e-3]]],
        pa.list_(pa.list_(pa.float32())),
    ),
    "ids": ([10, 20, 30, 40], pa.int64()),
    "holes": ([[1], [2, None], [], [3]], pa.list_(pa.int32())),
}


def generate_ragged():
    os.makedirs(RAGGED_OUT, exist_ok=True)
    table = pa.table({k: pa.array(v, type=t) for k, (v, t) in RAGGED.items()})
    pq.write_table(table, os.path.join(RAGGED_OUT, "ragged.parquet"), row_group_size=3)


def generate():
    generate_ragged()
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    table = pa.Table.from_pylist(RECORDS, schema=SCHEMA)
    pq.write_table(table, os.path.join(OUT, "records_snappy.parquet"), compression="snappy")
    pq.write_table(
        table,
        os.path.join(OUT, "records_uncompressed.parquet"),
        compression="none",
        row_group_size=2,
    )
    assert pq.ParquetFile(os.path.join(OUT, "records_uncompressed.parquet")).num_row_groups == 3
    dump("records.json", pq.read_table(os.path.join(OUT, "records_snappy.parquet")).to_pylist())

    hive = os.path.join(OUT, "hive")
    ds.write_dataset(
        pa.Table.from_pylist(HIVE_ROWS, schema=HIVE_SCHEMA),
        hive,
        format="parquet",
        partitioning=ds.partitioning(
            pa.schema([("year", pa.int64()), ("city", pa.string())]), flavor="hive"
        ),
        basename_template="part-{i}.parquet",
    )
    dataset = ds.dataset(hive, format="parquet", partitioning="hive")
    files = sorted(os.path.relpath(f, hive) for f in dataset.files)
    assert [os.path.relpath(f, hive) for f in dataset.files] == files, "pyarrow's order is sorted"
    dump("hive.json", dataset.to_table().to_pylist())

    narrow = pa.Table.from_pylist(NARROW_RECORDS, schema=NARROW_SCHEMA)
    pq.write_table(narrow, os.path.join(OUT, "narrow.parquet"), row_group_size=2)
    dump("narrow.json", hex_bytes(pq.read_table(os.path.join(OUT, "narrow.parquet")).to_pylist()))

    pq.write_table(
        pa.table({"when": pa.array([0, 1], pa.timestamp("ms")), "n": pa.array([1, 2], pa.int64())}),
        os.path.join(OUT, "timestamp.parquet"),
    )
    pq.write_table(
        pa.table({"n": pa.array([1, None, 3], pa.int64())}), os.path.join(OUT, "nulls.parquet")
    )


def check(directory):
    names = sorted(n for n in os.listdir(directory) if n.endswith(".parquet"))
    assert names, "no .parquet files in " + directory
    for name in names:
        stem = name[: -len(".parquet")]
        with open(os.path.join(directory, stem + ".json"), encoding="utf-8") as f:
            expected = json.load(f)
        table = pq.read_table(os.path.join(directory, name))
        got = hex_bytes(table.to_pylist())
        assert got == expected, "%s: pyarrow read %r, the JSON holds %r" % (name, got, expected)
        golden = os.path.join(OUT, name)
        if os.path.exists(golden):
            ours, theirs = leaf_types(table.schema), leaf_types(pq.read_schema(golden))
            assert ours == theirs, "%s: leaf types %r, pyarrow's file has %r" % (name, ours, theirs)
        print("ok", name, len(got), "rows")
    print("pyarrow", pa.__version__, "read", len(names), "files written by our writer")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
    elif len(sys.argv) == 1:
        generate()
    else:
        sys.exit("usage: make_parquet.py [--check DIR]")
