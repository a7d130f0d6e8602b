"""Peers of the structured-tensor benches: TensorFlow's StructuredTensor and Awkward Array.

Same input as crates/structured-tensor/benches/structured-tensor.rs, from the shared
SplitMix64 (seed 7; 100,000 records, 1,000 in quick runs): per record, in this order,
age = below(100); k = below(4) nicknames, each "n{below(1000)}"; m = below(4) shoe sizes,
each 5.0 + below(20) * 0.5. Households (seed 8): lengths below(4) until the records are
used up, the last one clipped.
- from_json: Python lists already built -> StructuredTensor.from_pyval / ak.from_iter.
- from_json_text: JSON text -> ak.from_json.
- to_json: to_pyval / ak.to_list.
- to_json_text: JSON text out -> ak.to_json.
- merge_dims: households (rank 2) -> merge_dims(0, 1) / ak.flatten(axis=1).
- promote: promote(("shoes", "sizes"), "shoe_sizes") / ak.with_field(arr.shoes.sizes).
- gather: tf.gather(st, indices, axis=0) / ak.to_packed(arr[indices]), as many indices
  as records, each below(n) from seed 9, made into an int64 tensor / numpy array before
  the timing. Awkward's arr[indices] alone returns a view (an IndexedArray over the
  records, about the cost of checking the indices); to_packed copies the selected rows
  into contiguous lists, as a StructuredTensor's gather (ours and TensorFlow's) does.
- concat: tf.concat([st, st], axis=0) / ak.concatenate([arr, arr]).
- gather_1m, concat_1m: the same two on the 1,000,000 records below (10,000 in quick runs).
Only the operation is timed (no start-up, no file I/O).

pyarrow, on 1,000,000 records of the same generator (10,000 in quick runs), against
crates/structured-tensor/benches/interchange.rs:
- to_arrow: pa.array(list_of_dicts) (Python objects, pyarrow's native form, into Arrow).
- from_arrow: to_pylist() (Arrow back to Python objects).
- write_parquet: pq.write_table of that table, Snappy, pyarrow's default row groups
  (1,048,576 rows), as ours; file I/O is part of this workload and the next.
- read_parquet: pq.read_table (pyarrow's default: threads on) of the file our bench wrote
  (target/structured-tensor-bench/records.parquet, the same records, Snappy, one row
  group), so that both read the same bytes; of pyarrow's own file when ours is missing.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F401,F403

CRATE = "structured-tensor"


def records(n):
    rng = SplitMix64(7)
    out = []
    for _ in range(n):
        age = rng.below(100)
        k = rng.below(4)
        nicknames = ["n%d" % rng.below(1000) for _ in range(k)]
        m = rng.below(4)
        sizes = [5.0 + rng.below(20) * 0.5 for _ in range(m)]
        out.append({"age": age, "nicknames": nicknames, "shoes": {"sizes": sizes}})
    return out


def household_lengths(n):
    rng = SplitMix64(8)
    lengths = []
    used = 0
    while used < n:
        length = min(rng.below(4), n - used)
        lengths.append(length)
        used += length
    return lengths


def gather_indices(n):
    rng = SplitMix64(9)
    return [rng.below(n) for _ in range(n)]


def bench_tensorflow(recs, lengths):
    try:
        import tensorflow as tf
        from tensorflow.python.ops.ragged.row_partition import RowPartition
        # Registers tf.gather / tf.concat dispatch for StructuredTensor (not imported by
        # `import tensorflow`).
        from tensorflow.python.ops.structured import structured_array_ops  # noqa: F401
    except Exception as e:  # noqa: BLE001 - any import failure means the peer is absent
        skip(CRATE, "tensorflow", str(e))
        return
    st_cls = tf.experimental.StructuredTensor
    version = tf.__version__
    # from_pyval is slow on 100 k records: fewer repeats.
    report(CRATE, "from_json", "tensorflow", time_it(lambda: st_cls.from_pyval(recs), repeats=3), version)
    st = st_cls.from_pyval(recs)
    report(CRATE, "to_json", "tensorflow", time_it(lambda: st.to_pyval(), repeats=3), version)
    grouped = st.partition_outer_dimension(
        RowPartition.from_row_lengths(tf.constant(lengths, dtype=tf.int64)))
    report(CRATE, "merge_dims", "tensorflow", time_it(lambda: grouped.merge_dims(0, 1)), version)
    report(CRATE, "promote", "tensorflow",
           time_it(lambda: st.promote(("shoes", "sizes"), "shoe_sizes")), version)
    indices = tf.constant(gather_indices(len(recs)), dtype=tf.int64)
    report(CRATE, "gather", "tensorflow", time_it(lambda: tf.gather(st, indices, axis=0)), version)
    report(CRATE, "concat", "tensorflow", time_it(lambda: tf.concat([st, st], axis=0)), version)


def bench_awkward(recs, text, lengths):
    try:
        import awkward as ak
        import numpy as np
    except Exception as e:  # noqa: BLE001
        skip(CRATE, "awkward", str(e))
        return
    version = ak.__version__
    report(CRATE, "from_json", "awkward", time_it(lambda: ak.from_iter(recs)), version)
    report(CRATE, "from_json_text", "awkward", time_it(lambda: ak.from_json(text)), version)
    arr = ak.from_iter(recs)
    report(CRATE, "to_json", "awkward", time_it(lambda: ak.to_list(arr)), version)
    report(CRATE, "to_json_text", "awkward", time_it(lambda: ak.to_json(arr)), version)
    grouped = ak.unflatten(arr, lengths)
    report(CRATE, "merge_dims", "awkward", time_it(lambda: ak.flatten(grouped, axis=1)), version)
    report(CRATE, "promote", "awkward",
           time_it(lambda: ak.with_field(arr, arr.shoes.sizes, "shoe_sizes")), version)
    indices = np.asarray(gather_indices(len(recs)), dtype=np.int64)
    report(CRATE, "gather", "awkward", time_it(lambda: ak.to_packed(arr[indices])), version)
    report(CRATE, "concat", "awkward", time_it(lambda: ak.concatenate([arr, arr])), version)


def bench_large(recs):
    """gather_1m and concat_1m: gather and concat on the large records, in TensorFlow and
    Awkward (only the operation is timed; building the arrays is not)."""
    indices = gather_indices(len(recs))
    try:
        import tensorflow as tf
        from tensorflow.python.ops.structured import structured_array_ops  # noqa: F401
    except Exception as e:  # noqa: BLE001
        skip(CRATE, "tensorflow", str(e))
    else:
        st = tf.experimental.StructuredTensor.from_pyval(recs)
        tf_indices = tf.constant(indices, dtype=tf.int64)
        report(CRATE, "gather_1m", "tensorflow",
               time_it(lambda: tf.gather(st, tf_indices, axis=0), repeats=5), tf.__version__)
        report(CRATE, "concat_1m", "tensorflow",
               time_it(lambda: tf.concat([st, st], axis=0), repeats=5), tf.__version__)
        del st
    try:
        import awkward as ak
        import numpy as np
    except Exception as e:  # noqa: BLE001
        skip(CRATE, "awkward", str(e))
    else:
        arr = ak.from_iter(recs)
        np_indices = np.asarray(indices, dtype=np.int64)
        report(CRATE, "gather_1m", "awkward",
               time_it(lambda: ak.to_packed(arr[np_indices]), repeats=5), ak.__version__)
        report(CRATE, "concat_1m", "awkward",
               time_it(lambda: ak.concatenate([arr, arr]), repeats=5), ak.__version__)


def bench_pyarrow(recs):
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except Exception as e:  # noqa: BLE001
        skip(CRATE, "pyarrow", str(e))
        return
    import shutil
    import tempfile

    version = pa.__version__
    report(CRATE, "to_arrow", "pyarrow", time_it(lambda: pa.array(recs), repeats=5), version)
    arr = pa.array(recs)
    report(CRATE, "from_arrow", "pyarrow", time_it(lambda: arr.to_pylist(), repeats=5), version)
    table = pa.Table.from_struct_array(arr)
    directory = tempfile.mkdtemp(prefix="structured-tensor-peer-")
    try:
        path = os.path.join(directory, "records.parquet")
        report(CRATE, "write_parquet", "pyarrow",
               time_it(lambda: pq.write_table(table, path, compression="snappy")), version)
        ours = os.path.join(target_dir(), "structured-tensor-bench", "records.parquet")
        same = ours if os.path.exists(ours) and pq.read_metadata(ours).num_rows == table.num_rows else path
        report(CRATE, "read_parquet", "pyarrow", time_it(lambda: pq.read_table(same)), version)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main():
    n = size(100_000, 100)
    recs = records(n)
    text = json.dumps(recs)
    lengths = household_lengths(n)
    bench_awkward(recs, text, lengths)
    bench_tensorflow(recs, lengths)
    large = records(size(1_000_000, 100))
    bench_large(large)
    bench_pyarrow(large)


if __name__ == "__main__":
    main()
