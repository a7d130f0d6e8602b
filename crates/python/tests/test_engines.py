"""The data pipeline's batch function run by Dask's map_partitions (examples/engines.py,
the code docs/scaling.md shows), compared with the single-process run of the same function
and with a Python loop over the records. Spark's mapInArrow is in the same example; its
run is recorded in docs/scaling.md (a JVM is not part of the test venvs)."""

import sys
from pathlib import Path

from conftest import need

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))


def test_transform_on_no_rows_gives_the_output_columns():
    pa = need("pyarrow")
    import ray_data_pipeline as data

    table = pa.Table.from_pylist(data.make_users(40, seed=3))
    empty = data.transform(table.slice(0, 0))
    some = data.transform(table)
    assert empty.num_rows == 0
    assert empty.schema == some.schema


def test_dask_map_partitions_equals_the_single_process_run(tmp_path):
    need("pyarrow")
    need("dask")
    import engines
    import ray_data_pipeline as data
    from test_ray_pipelines import model_of_transform

    users = data.make_dataset(str(tmp_path / "in"), 600, seed=11, rows_per_file=70)
    data.run_local(str(tmp_path / "in"), str(tmp_path / "local"))
    engines.run_dask(str(tmp_path / "in"), str(tmp_path / "dask"), partitions=5)
    got = data.read_output(str(tmp_path / "dask"))
    assert got == data.read_output(str(tmp_path / "local"))
    assert got == model_of_transform(users, data.MIN_EVENTS)
    assert len(got) > 100
