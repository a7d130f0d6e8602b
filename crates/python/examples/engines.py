"""The data pipeline's batch function on Dask and on Spark, unchanged.

``ray_data_pipeline.transform`` takes an Arrow table and returns one, so any engine that
hands out Arrow (or pandas backed by Arrow) can call it. This program runs it

- on Dask, through ``dask.dataframe.map_partitions`` (pandas partitions backed by
  pyarrow, converted to Arrow at the edge), and
- on Spark, through ``DataFrame.mapInArrow`` (Spark hands each partition over as Arrow
  record batches),

and checks that each engine's output equals the single-process run of the same
function (``run_local``), record for record:

    python engines.py IN_DIR OUT_DIR [--engines dask,spark] [--make-users N]

Spark runs in local mode (``local[2]``), bound to 127.0.0.1. Neither engine is needed by
the package: each is imported only when its run is asked for.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import pyarrow as pa

import ray_data_pipeline as data


def run_dask(in_dir: str, out_dir: str, *, partitions: int = 4) -> None:
    """``transform`` over a Dask DataFrame's partitions; writes Parquet to ``out_dir``."""
    import dask
    import dask.dataframe as dd
    import pandas as pd

    def per_partition(frame: pd.DataFrame) -> pd.DataFrame:
        table = pa.Table.from_pandas(frame, preserve_index=False)
        return data.transform(table).to_pandas(types_mapper=pd.ArrowDtype)

    ddf = dd.read_parquet(in_dir, dtype_backend="pyarrow").repartition(npartitions=partitions)
    # the output's columns and types, from the function itself on no rows
    meta = per_partition(ddf._meta)
    out = ddf.map_partitions(per_partition, meta=meta)
    with dask.config.set(scheduler="threads"):
        out.to_parquet(out_dir, write_index=False)


def run_spark(in_dir: str, out_dir: str) -> None:
    """``transform`` through Spark's ``mapInArrow``, in local mode; writes Parquet."""
    from pyspark.sql import SparkSession

    # Spark's Python workers run this interpreter (with numpy, pyarrow and this package)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("arrays-engines")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        frame = spark.read.parquet(in_dir)
        # the output schema, from the function on no rows of the input
        out_schema = data.transform(frame.limit(0).toArrow()).schema

        def per_partition(batches):  # an iterator of pyarrow.RecordBatch
            for batch in batches:
                yield from data.transform(pa.Table.from_batches([batch])).to_batches()

        frame.mapInArrow(per_partition, schema=_spark_schema(spark, out_schema)).write.parquet(out_dir)
    finally:
        spark.stop()


def _spark_schema(spark, schema: pa.Schema):
    """A Spark schema for an Arrow one: through an empty Arrow table made into a frame."""
    return spark.createDataFrame(schema.empty_table()).schema


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("in_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--engines", default="dask,spark")
    parser.add_argument("--make-users", type=int, default=0, help="first write this many test users to IN_DIR")
    args = parser.parse_args()
    if args.make_users:
        data.make_dataset(args.in_dir, args.make_users)
    baseline = os.path.join(args.out_dir, "local")
    shutil.rmtree(baseline, ignore_errors=True)
    data.run_local(args.in_dir, baseline)
    expected = data.read_output(baseline)
    runs = {"dask": run_dask, "spark": run_spark}
    for engine in args.engines.split(","):
        out = os.path.join(args.out_dir, engine)
        shutil.rmtree(out, ignore_errors=True)
        runs[engine](args.in_dir, out)
        got = data.read_output(out)
        verdict = "equal to" if got == expected else "DIFFERENT from"
        print(f"{engine}: {len(got)} users, {verdict} the single-process run ({len(expected)} users)")
        if got != expected:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
