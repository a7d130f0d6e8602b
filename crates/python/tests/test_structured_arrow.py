"""arrays.structured with pyarrow as the peer: from_arrow / to_arrow through the Arrow C data
interface (round trips of every type the crate holds, sliced arrays, tables of many batches,
nulls refused naming the field and the row, buffer addresses shared both ways), and
read_parquet / write_parquet against pyarrow.parquet."""

import sys

import pytest

from conftest import need
from arrays.structured import StructuredTensor, read_parquet, write_parquet

pa = need("pyarrow")
pq = pytest.importorskip("pyarrow.parquet") if pa else None


def columns():
    """One column per type the crate holds, four rows, with empty lists and strings."""
    return {
        "i64": pa.array([1, -2, 3, 2**62], pa.int64()),
        "f64": pa.array([0.5, -1.25, 1e300, -0.0], pa.float64()),
        "flag": pa.array([True, False, False, True], pa.bool_()),
        "name": pa.array(["a", "", "héllo", "zz"], pa.string()),
        "i32": pa.array([7, -8, 9, 0], pa.int32()),
        "f32": pa.array([1.5, 2.5, -3.0, 0.0], pa.float32()),
        "u8": pa.array([0, 255, 7, 1], pa.uint8()),
        "ints": pa.array([[1, 2], [], [3], [4, 5, 6]], pa.list_(pa.int64())),
        "words": pa.array([["x"], ["y", "zz"], [], [""]], pa.list_(pa.string())),
        "grid": pa.array([[[1.0], []], [], [[2.0, 3.0]], [[], [4.0]]], pa.list_(pa.list_(pa.float64()))),
        "shoe": pa.array(
            [
                {"size": 8.0, "tags": ["a"]},
                {"size": 9.5, "tags": []},
                {"size": 10.0, "tags": ["b", "c"]},
                {"size": 7.0, "tags": []},
            ],
            pa.struct([("size", pa.float64()), ("tags", pa.list_(pa.string()))]),
        ),
        "pets": pa.array(
            [[{"age": 1}], [], [{"age": 2}, {"age": 3}], []],
            pa.list_(pa.struct([("age", pa.int64())])),
        ),
    }


def batch():
    return pa.record_batch(columns())


def test_record_batch_round_trip_of_every_type():
    rb = batch()
    st = StructuredTensor.from_arrow(rb)
    assert st.shape == (4,) and sorted(st.field_names()) == sorted(rb.schema.names)
    out = st.to_arrow()
    assert isinstance(out, pa.RecordBatch)
    assert out.num_rows == 4
    # the model: pyarrow's own Python values of the input, column by column
    for name in rb.schema.names:
        assert out.column(name).to_pylist() == rb.column(name).to_pylist(), name
        assert str(out.column(name).type).replace(" not null", "") == str(rb.column(name).type), name


def test_from_arrow_agrees_with_pyarrows_values():
    rb = batch()
    st = StructuredTensor.from_arrow(rb)
    rows = rb.to_pylist()
    assert st["i64"] == [r["i64"] for r in rows]
    assert st["grid"] == [r["grid"] for r in rows]
    assert st[("shoe", "tags")] == [r["shoe"]["tags"] for r in rows]
    assert st[("pets", "age")] == [[p["age"] for p in r["pets"]] for r in rows]


@pytest.mark.parametrize(
    "arrow_type,values",
    [
        (pa.binary(), [b"\x00\xff", b"", b"abc"]),
        (pa.large_string(), ["a", "bc", ""]),
        (pa.large_list(pa.int64()), [[1], [], [2, 3]]),
    ]
    if pa
    else [],
)
def test_wider_types_read(arrow_type, values):
    rb = pa.record_batch({"v": pa.array(values, arrow_type)})
    out = StructuredTensor.from_arrow(rb).to_arrow()
    assert out.column("v").to_pylist() == values


def test_struct_array_in_and_out():
    rb = batch()
    arr = pa.StructArray.from_arrays(rb.columns, names=rb.schema.names)
    st = StructuredTensor.from_arrow(arr)
    out = st.to_arrow(record_batch=False)
    assert isinstance(out, pa.StructArray)
    assert out.to_pylist() == arr.to_pylist()


def test_list_of_structs_is_rank_2():
    rows = [[{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], [], [{"a": 3, "b": "z"}]]
    arr = pa.array(rows, pa.list_(pa.struct([("a", pa.int64()), ("b", pa.string())])))
    st = StructuredTensor.from_arrow(arr)
    assert st.shape == (3, None)
    assert st.to_pyval() == rows
    out = st.to_arrow()
    assert isinstance(out, pa.ListArray)
    assert out.to_pylist() == rows
    with pytest.raises(ValueError, match="rank 2"):
        st.to_arrow(record_batch=True)


def test_table_of_many_batches_and_of_none():
    rb = batch()
    table = pa.Table.from_batches([rb, rb.slice(1, 2), rb.slice(0, 0)])
    st = StructuredTensor.from_arrow(table)
    assert st.shape == (6,)
    assert st.to_arrow().to_pylist() == table.to_pylist()
    one = StructuredTensor.from_arrow(pa.Table.from_batches([rb]))
    assert one.to_arrow().to_pylist() == rb.to_pylist()
    empty = StructuredTensor.from_arrow(pa.Table.from_batches([], schema=rb.schema))
    assert empty.shape == (0,) and sorted(empty.field_names()) == sorted(rb.schema.names)


@pytest.mark.parametrize("start,length", [(1, 2), (3, 1), (2, 0), (0, 4)])
def test_sliced_batches(start, length):
    rb = batch()
    part = rb.slice(start, length)
    assert length == 0 or start == 0 or part.column("ints").offset == start
    st = StructuredTensor.from_arrow(part)
    assert st.shape == (length,)
    assert st.to_arrow().to_pylist() == part.to_pylist()


def test_sliced_children_inside_a_struct():
    # the columns are slices (offsets != 0, list offsets not starting at 0) of longer arrays
    ints = pa.array([[9], [1, 2], [], [3]], pa.list_(pa.int64())).slice(1, 3)
    names = pa.array(["skip", "me", "a", "b", "c"]).slice(2, 3)
    arr = pa.StructArray.from_arrays([ints, names], names=["ints", "name"])
    assert ints.offsets.to_pylist()[0] == 1
    st = StructuredTensor.from_arrow(arr)
    assert st.to_pyval() == [{"ints": [1, 2], "name": "a"}, {"ints": [], "name": "b"}, {"ints": [3], "name": "c"}]
    assert st.to_arrow().to_pylist() == arr.to_pylist()


def test_nulls_refused_naming_the_field_and_row():
    with pytest.raises(ValueError, match=r"\('a',\).*null at index 1"):
        StructuredTensor.from_arrow(pa.record_batch({"a": pa.array([1, None, 3])}))
    nested = pa.array([{"x": 1.0}, {"x": 2.0}, {"x": None}], pa.struct([("x", pa.float64())]))
    with pytest.raises(ValueError, match=r"\('s', 'x'\).*null at index 2"):
        StructuredTensor.from_arrow(pa.record_batch({"s": nested}))
    lists = pa.array([[1], None], pa.list_(pa.int64()))
    with pytest.raises(ValueError, match=r"\('l',\).*null at index 1"):
        StructuredTensor.from_arrow(pa.record_batch({"l": lists}))


def test_nulls_accepted_when_asked():
    rb = pa.record_batch(
        {
            "a": pa.array([1, None, 3]),
            "l": pa.array([[1], None, [2, 3]], pa.list_(pa.int64())),
            "s": pa.array(["x", "y", None]),
        }
    )
    st = StructuredTensor.from_arrow(rb, nulls=True)
    out = st.to_arrow()
    assert out.column("a").to_pylist() == [1, None, 3]
    assert out.column("s").to_pylist() == ["x", "y", None]
    # the documented policy: a null list reads as an empty list
    assert out.column("l").to_pylist() == [[1], [], [2, 3]]


def test_unsupported_types_and_names_are_errors_naming_the_field():
    rb = pa.record_batch({"ok": pa.array([1, 2]), "day": pa.array([1, 2], pa.date32())})
    with pytest.raises(ValueError, match=r"\('day',\).*unsupported Arrow type Date32"):
        StructuredTensor.from_arrow(rb)
    odd = pa.record_batch({"user-id": pa.array([1, 2])})
    with pytest.raises(ValueError, match="user-id"):
        StructuredTensor.from_arrow(odd)
    assert StructuredTensor.from_arrow(odd, any_field_names=True).to_arrow().column("user-id").to_pylist() == [1, 2]
    with pytest.raises(ValueError, match="Struct array"):
        StructuredTensor.from_arrow(pa.array([1, 2, 3]))


def test_objects_without_the_protocol_or_with_bad_capsules():
    with pytest.raises(TypeError, match="__arrow_c_array__"):
        StructuredTensor.from_arrow([{"a": 1}])

    class Liar:
        def __arrow_c_array__(self, requested_schema=None):
            schema, array = batch().__arrow_c_array__()
            return array, schema  # swapped: the names are checked, not trusted

    with pytest.raises(TypeError, match="arrow_schema"):
        StructuredTensor.from_arrow(Liar())

    class Short:
        def __arrow_c_array__(self, requested_schema=None):
            return (batch().__arrow_c_array__()[0],)

    with pytest.raises(TypeError, match="1 items"):
        StructuredTensor.from_arrow(Short())


def addresses(array):
    return [b.address if b is not None else None for b in array.buffers()]


def test_buffers_are_shared_on_the_way_out():
    st = StructuredTensor.from_arrow(batch())
    first, second = st.to_arrow(), st.to_arrow()
    for name in ["i64", "f64", "name", "i32", "f32", "u8", "ints", "words", "grid", "pets"]:
        a, b = addresses(first.column(name)), addresses(second.column(name))
        # every data buffer (values, offsets, string bytes, list offsets, child values) is
        # the tensor's own memory handed over: the same address each time
        assert [x for x in a if x] == [x for x in b if x], name
    # and the memory stays valid after the tensor and the first export are gone
    expected = first.to_pylist()
    del st, first
    assert second.to_pylist() == expected


def first_value_address(array):
    """The address of the array's first value as pyarrow lays it out (its buffer's address
    plus the array's offset); for strings, of its first byte and of its first offset."""
    if pa.types.is_string(array.type):
        offsets = array.buffers()[1]
        at = 4 * array.offset
        first = int.from_bytes(offsets.to_pybytes()[at : at + 4], sys.byteorder, signed=True)
        return array.buffers()[2].address + first, offsets.address + at
    return array.buffers()[1].address + array.type.bit_width // 8 * array.offset, None


def test_leaf_buffers_are_shared_on_the_way_in_and_back_out():
    rb = batch()
    out = StructuredTensor.from_arrow(rb).to_arrow()
    # numbers, string bytes and string offsets: pyarrow's own memory went in and came back
    for name in ["i64", "f64", "i32", "f32", "u8", "name"]:
        assert first_value_address(out.column(name)) == first_value_address(rb.column(name)), name
    # a list's values are shared too; its offsets became a row partition (a copy)
    ints_in, ints_out = rb.column("ints"), out.column("ints")
    assert ints_out.buffers()[3].address == ints_in.buffers()[3].address
    assert ints_out.buffers()[1].address != ints_in.buffers()[1].address
    # booleans are copied: Arrow packs them in bits, the tensor holds bytes
    assert out.column("flag").buffers()[1].address != rb.column("flag").buffers()[1].address
    assert out.to_pylist() == rb.to_pylist()


def test_a_sliced_batch_shares_its_values_and_rebases_string_offsets():
    rb = batch().slice(1, 3)
    out = StructuredTensor.from_arrow(rb).to_arrow()
    assert out.to_pylist() == rb.to_pylist()
    for name in ["i64", "f64", "i32", "f32", "u8"]:
        # the slice's first value, one element into pyarrow's buffer
        assert first_value_address(out.column(name)) == first_value_address(rb.column(name)), name
    bytes_out, offsets_out = first_value_address(out.column("name"))
    bytes_in, offsets_in = first_value_address(rb.column("name"))
    assert bytes_out == bytes_in  # the string bytes are shared
    assert offsets_out != offsets_in  # offsets from 1, rebased to 0 in a copy


def test_row_partitions_are_shared_with_the_list_offsets():
    rows = [[{"a": 1}, {"a": 2}], [], [{"a": 3}]]
    st = StructuredTensor.from_arrow(pa.array(rows, pa.list_(pa.struct([("a", pa.int64())]))))
    one, two = st.to_arrow(), st.to_arrow()
    assert one.buffers()[1].address == two.buffers()[1].address  # the offsets
    assert one.offsets.to_pylist() == [0, 2, 2, 3]


def test_the_producer_may_go_before_the_tensor():
    rb = batch()
    expected = rb.to_pylist()
    st = StructuredTensor.from_arrow(rb)
    del rb
    assert st.to_arrow().to_pylist() == expected


def test_to_arrow_without_pyarrow_gives_the_capsule_object(monkeypatch):
    st = StructuredTensor.from_arrow(batch())
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    export = st.to_arrow()
    monkeypatch.undo()
    assert hasattr(export, "__arrow_c_array__") and len(export) == 4
    assert pa.record_batch(export).to_pylist() == batch().to_pylist()
    # the export may be consumed more than once, each time sharing the same buffers
    again = pa.record_batch(export)
    assert addresses(again.column("i64")) == addresses(pa.record_batch(export).column("i64"))


def test_parquet_round_trips_with_pyarrow(tmp_path):
    rb = batch()
    st = StructuredTensor.from_arrow(rb)
    ours = tmp_path / "ours.parquet"
    write_parquet(st, ours)
    assert pq.read_table(ours).to_pylist() == rb.to_pylist()
    theirs = tmp_path / "theirs.parquet"
    pq.write_table(pa.Table.from_batches([rb, rb]), theirs, row_group_size=3)
    back = read_parquet(theirs)
    assert back.shape == (8,)
    assert back.to_arrow().to_pylist() == rb.to_pylist() * 2


@pytest.mark.parametrize("compression,level", [("snappy", None), ("gzip", 9), ("zstd", 3), ("none", None)])
def test_parquet_codecs_and_row_groups(tmp_path, compression, level):
    st = StructuredTensor.from_arrow(batch())
    path = tmp_path / f"{compression}.parquet"
    st.write_parquet(path, row_group_size=3, compression=compression, compression_level=level)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 2
    codec = meta.row_group(0).column(0).compression
    assert codec == {"none": "UNCOMPRESSED"}.get(compression, compression.upper())
    assert read_parquet(path).to_pyval() == st.to_pyval()


def test_parquet_errors(tmp_path):
    path = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"a": pa.array([1, None])}), path)
    with pytest.raises(ValueError, match=r"nulls\.parquet.*\('a',\).*null at index 1"):
        read_parquet(path)
    assert read_parquet(path, nulls=True).to_arrow().column("a").to_pylist() == [1, None]
    with pytest.raises(ValueError, match="missing.parquet"):
        read_parquet(tmp_path / "missing.parquet")
    st = StructuredTensor.from_arrow(batch())
    with pytest.raises(ValueError, match="compression"):
        st.write_parquet(tmp_path / "x.parquet", compression="lz5")
    with pytest.raises(ValueError, match="rank 2"):
        st.partition_outer_dimension([0, 4]).write_parquet(tmp_path / "y.parquet")


# ------------------------------------------------------------------ ragged arrays


from arrays.structured import RaggedArray  # noqa: E402


@pytest.mark.parametrize(
    "arrow_type,rows",
    [
        (pa.list_(pa.int32()), [[1, 2], [], [3]]),
        (pa.list_(pa.int64()), [[2**40], [-1, 0]]),
        (pa.list_(pa.float32()), [[0.5], [], [], [1.5, -2.0]]),
        (pa.list_(pa.float64()), [[]]),
        (pa.list_(pa.list_(pa.float64())), [[[1.0], []], [], [[2.0, 3.0]]]),
        (pa.large_list(pa.int64()), [[1], [2, 3]]),
    ]
    if pa
    else [],
)
def test_ragged_from_and_to_list_arrays(arrow_type, rows):
    arr = pa.array(rows, arrow_type)
    r = RaggedArray.from_arrow(arr)
    assert r.to_list() == rows
    assert r.num_axes == 1 + str(arrow_type).count("list<")
    out = r.to_arrow()
    assert isinstance(out, pa.ListArray) and out.to_pylist() == rows


def test_ragged_from_a_sliced_list_array():
    arr = pa.array([[9, 9], [1, 2], [], [3]], pa.list_(pa.int64())).slice(1, 3)
    r = RaggedArray.from_arrow(arr)
    assert r.to_list() == [[1, 2], [], [3]]
    assert r.row_splits(1).tolist() == [0, 2, 2, 3]


def test_ragged_row_splits_shared_on_the_way_out():
    r = RaggedArray.from_list([[1, 2], [], [3]])
    one, two = r.to_arrow(), r.to_arrow()
    assert one.buffers()[1].address == two.buffers()[1].address


def test_ragged_from_nested_lists():
    assert RaggedArray.from_list([[1, 2], [], [3]]).dtype == "int64"
    assert RaggedArray.from_list([[1.5], [2]]).dtype == "float64"
    assert RaggedArray.from_list([[1], [2]], dtype="int32").dtype == "int32"
    three = RaggedArray.from_list([[[1], []], [], [[2, 3]]])
    assert three.num_axes == 3 and three.to_list() == [[[1], []], [], [[2, 3]]]
    assert RaggedArray.from_list([[], []]).to_list() == [[], []]
    assert RaggedArray.from_list([]).to_list() == []
    with pytest.raises(ValueError, match="mixed"):
        RaggedArray.from_list([[1], [[2]]])
    with pytest.raises(ValueError, match="2 axes"):
        RaggedArray.from_list([1, 2])
    with pytest.raises(ValueError, match="<U1 values; take numbers"):
        RaggedArray.from_list([["a"]])
    with pytest.raises(ValueError, match="bool"):
        RaggedArray.from_list([[True]])


def test_ragged_reductions_against_a_loop():
    rows = [[3, -1, 7], [], [5], [2, 2]]
    r = RaggedArray.from_list(rows)
    assert r.sum().tolist() == [sum(x) for x in rows]
    low = -(2**63)
    assert r.max().tolist() == [max(x, default=low) for x in rows]
    assert r.min(100).tolist() == [min(x + [100]) for x in rows]
    f = RaggedArray.from_arrow(pa.array([[0.5, 1.5], []], pa.list_(pa.float64())))
    assert f.sum().tolist() == [2.0, 0.0]
    assert f.max().tolist() == [1.5, float("-inf")]
    nested = RaggedArray.from_list([[[1, 2], [3]], [[4]]])
    assert nested.sum().tolist() == [3, 3, 4]  # over the last axis, as k2 does


def test_ragged_errors():
    with pytest.raises(ValueError, match="nesting level 0 has a null at index 1"):
        RaggedArray.from_arrow(pa.array([[1], None], pa.list_(pa.int64())))
    with pytest.raises(ValueError, match=r"not Utf8 \(in List\(Utf8\)\)"):
        RaggedArray.from_arrow(pa.array([["a"]], pa.list_(pa.string())))
    with pytest.raises(ValueError):
        RaggedArray.from_arrow(pa.array([1, 2]))
