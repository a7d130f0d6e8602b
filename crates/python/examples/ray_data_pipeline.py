"""The data pipeline on Ray: nested user records in hive-partitioned Parquet, through
``arrays.structured``, back to Parquet.

    read_parquet (Ray Data) => map_batches(transform, batch_format="pyarrow")
        => write_parquet (Ray Data)

``transform`` takes one Arrow batch of users (each with sessions of events) and returns
one: the users with at least ``MIN_EVENTS`` events (a filter), ordered by ``user_id``
(a gather), with a new nested field ``stats`` {n_sessions, n_events, total_ms,
longest_ms} from ragged per-user reductions over the events of all their sessions.
Batches enter our code through the Arrow C data interface (``StructuredTensor.from_arrow``)
and leave it the same way (``to_arrow`` shares the tensor's buffers with Arrow).

The same program runs on a laptop and on a cluster:

    python ray_data_pipeline.py IN_DIR OUT_DIR                      # ray.init(): local
    python ray_data_pipeline.py IN_DIR OUT_DIR --address HOST:6379  # an existing cluster
    python ray_data_pipeline.py IN_DIR OUT_DIR --no-ray             # one process, no Ray

``IN_DIR`` and ``OUT_DIR`` may be object-store URIs (``s3://...``, ``gs://...``) on a
cluster: Ray Data reads and writes them itself. ``make_dataset`` writes a test dataset.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import pyarrow as pa

from arrays.structured import RaggedArray, StructuredTensor

#: a user is kept when their sessions hold at least this many events
MIN_EVENTS = 2


def _plain(table: pa.Table) -> pa.Table:
    """Hive partition columns may arrive dictionary-encoded: as plain strings."""
    columns = [
        col.cast(col.type.value_type) if pa.types.is_dictionary(col.type) else col
        for col in table.columns
    ]
    return pa.Table.from_arrays(columns, names=table.column_names)


def transform(batch: pa.Table) -> pa.Table:
    """One batch of users in, the kept users with their ``stats`` out (see the module
    docstring). Arrow in, Arrow out: the same function serves Ray Data's ``map_batches``,
    Spark's ``mapInArrow`` and Dask's ``map_partitions``."""
    st = StructuredTensor.from_arrow(_plain(batch))
    # the events' durations per user: the session offsets composed with the event offsets
    # of the tensor's own Arrow form (its row partitions, shared, not copied)
    arrow = st.to_arrow()
    sessions = arrow.column(arrow.schema.get_field_index("sessions"))
    session_splits = sessions.offsets.to_numpy()
    events = sessions.values.field("events")
    event_splits = events.offsets.to_numpy()
    ms = events.values.field("ms")
    per_user = RaggedArray.from_arrow(pa.ListArray.from_arrays(pa.array(event_splits[session_splits]), ms))
    n_events = np.diff(per_user.row_splits(1))
    total_ms = np.asarray(per_user.sum())
    longest_ms = np.asarray(per_user.max(initial_value=0))
    n_sessions = np.diff(session_splits)
    # filter, then order by user id
    keep = n_events >= MIN_EVENTS
    kept = np.flatnonzero(keep)
    user_ids = np.asarray(arrow.column(arrow.schema.get_field_index("user_id")))
    order = kept[np.argsort(user_ids[kept], kind="stable")]
    st = st.boolean_mask(keep.tolist())
    st = st.gather(np.searchsorted(kept, order).tolist())
    out = st.to_arrow()
    stats = pa.StructArray.from_arrays(
        [
            pa.array(n_sessions[order].astype(np.int64)),
            pa.array(n_events[order].astype(np.int64)),
            pa.array(total_ms[order].astype(np.int64)),
            pa.array(longest_ms[order].astype(np.int64)),
        ],
        names=["n_sessions", "n_events", "total_ms", "longest_ms"],
    )
    columns = list(out.columns) + [stats]
    return pa.Table.from_arrays(columns, names=out.schema.names + ["stats"])


def run_ray(
    in_dir: str,
    out_dir: str,
    *,
    address: Optional[str] = None,
    batch_size: Optional[int] = 256,
    num_blocks: Optional[int] = None,
    fn: Callable[[pa.Table], pa.Table] = transform,
) -> None:
    """The pipeline on Ray: local (``address=None``) or on the cluster at ``address``.
    ``num_blocks`` sets how many read tasks share the files (Ray Data's
    ``override_num_blocks``; by default Ray Data decides, and may make one task of a
    small dataset)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address)
    # The pipeline is one operator (read, transform and write fuse into one task per
    # block). Ray Data's per-operator reservation held it to half the CPUs of a small
    # cluster: on two one-CPU nodes its tasks ran one at a time, taking turns. Without
    # the reservation every CPU takes a block.
    ray.data.DataContext.get_current().op_resource_reservation_enabled = False
    # hive partitions (country=xx/) are read by default
    ds = ray.data.read_parquet(in_dir, override_num_blocks=num_blocks)
    ds = ds.map_batches(fn, batch_format="pyarrow", batch_size=batch_size, zero_copy_batch=True)
    ds.write_parquet(out_dir)


def run_local(in_dir: str, out_dir: str, *, batch_size: int = 256) -> None:
    """The same transformation in this process, without Ray (the baseline)."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    table = ds.dataset(in_dir, format="parquet", partitioning="hive").to_table()
    os.makedirs(out_dir, exist_ok=True)
    for start in range(0, max(table.num_rows, 1), batch_size):
        out = transform(table.slice(start, batch_size))
        pq.write_table(out, os.path.join(out_dir, f"part-{start // batch_size:05d}.parquet"))


def read_output(out_dir: str) -> List[Dict[str, Any]]:
    """Every record the pipeline wrote, ordered by user id."""
    import pyarrow.dataset as ds

    records = ds.dataset(out_dir, format="parquet").to_table().to_pylist()
    return sorted(records, key=lambda r: r["user_id"])


_NAMES = ["Zoë", "Ёжик", "東京太郎", "Amélie", "मीरा", "Łukasz", "Ωmega", "José", "Søren", "李雷"]
_DEVICES = ["téléphone", "tv", "ordinateur", "планшет", "手机"]
_KINDS = ["play", "pause", "seek", "stop", "like"]


def make_users(n_users: int, seed: int = 0) -> List[Dict[str, Any]]:
    """Seeded users with sessions of events; non-ASCII names, devices and countries."""
    rng = np.random.default_rng(seed)
    countries = ["de", "fr", "jp", "ru", "in"]
    users = []
    for user_id in rng.permutation(n_users).tolist():
        sessions = []
        for _ in range(int(rng.integers(0, 4))):
            events = [
                {"kind": _KINDS[int(rng.integers(len(_KINDS)))], "ms": int(rng.integers(1, 10_000))}
                for _ in range(int(rng.integers(0, 5)))
            ]
            sessions.append({"device": _DEVICES[int(rng.integers(len(_DEVICES)))], "events": events})
        users.append(
            {
                "user_id": int(user_id),
                "name": f"{_NAMES[user_id % len(_NAMES)]}-{user_id}",
                "country": countries[int(rng.integers(len(countries)))],
                "sessions": sessions,
            }
        )
    return users


def make_dataset(path: str, n_users: int, seed: int = 0, rows_per_file: int = 500) -> List[Dict[str, Any]]:
    """Writes ``make_users`` as hive-partitioned Parquet (``country=xx/part-N.parquet``)
    and returns the records."""
    import pyarrow.parquet as pq

    users = make_users(n_users, seed)
    by_country: Dict[str, List[Dict[str, Any]]] = {}
    for user in users:
        by_country.setdefault(user["country"], []).append(user)
    for country, rows in sorted(by_country.items()):
        folder = os.path.join(path, f"country={country}")
        os.makedirs(folder, exist_ok=True)
        for k in range(0, len(rows), rows_per_file):
            part = [{key: v for key, v in r.items() if key != "country"} for r in rows[k : k + rows_per_file]]
            pq.write_table(pa.Table.from_pylist(part), os.path.join(folder, f"part-{k // rows_per_file}.parquet"))
    return users


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("in_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--address", default=None, help="a Ray cluster's address (default: a local one)")
    parser.add_argument("--no-ray", action="store_true", help="run in this process, without Ray")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--make-users", type=int, default=0, help="first write this many test users to IN_DIR")
    args = parser.parse_args()
    if args.make_users:
        make_dataset(args.in_dir, args.make_users)
    if args.no_ray:
        run_local(args.in_dir, args.out_dir, batch_size=args.batch_size)
    else:
        run_ray(args.in_dir, args.out_dir, address=args.address, batch_size=args.batch_size)
    print(f"{len(read_output(args.out_dir))} users written to {args.out_dir}")


if __name__ == "__main__":
    main()
