"""The two Ray example pipelines' own code, run in one process without Ray: the data
pipeline's batch function against a plain Python model of it, the ASR pipeline's decoding
against the words its features were made from. (test_ray_cluster.py runs the same code on
a two-node cluster and compares it with these single-process runs.)"""

import os
import pickle
import sys
from pathlib import Path

import pytest

from conftest import need

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))


def model_of_transform(users, min_events):
    """The data pipeline's transformation as a Python loop over records."""
    out = []
    for user in users:
        ms = [e["ms"] for s in user["sessions"] for e in s["events"]]
        if len(ms) >= min_events:
            stats = {"n_sessions": len(user["sessions"]), "n_events": len(ms), "total_ms": sum(ms),
                     "longest_ms": max(ms)}
            out.append(dict(user, stats=stats))
    return sorted(out, key=lambda r: r["user_id"])


def test_transform_equals_a_python_loop():
    pa = need("pyarrow")
    import ray_data_pipeline as data

    users = data.make_users(300, seed=5)
    table = pa.Table.from_pylist(users)
    for start in (0, 7, 150):
        batch = table.slice(start, 64)
        got = data.transform(batch).to_pylist()
        assert got == model_of_transform(users[start : start + 64], data.MIN_EVENTS)


def test_transform_edge_cases():
    pa = need("pyarrow")
    import ray_data_pipeline as data

    users = [
        {"user_id": 3, "name": "Ωmega", "country": "gr", "sessions": []},
        {"user_id": 1, "name": "東京", "country": "jp",
         "sessions": [{"device": "tv", "events": []}, {"device": "手机", "events": [{"kind": "play", "ms": 4}]}]},
        {"user_id": 2, "name": "", "country": "jp",
         "sessions": [{"device": "", "events": [{"kind": "seek", "ms": 9}, {"kind": "stop", "ms": 1}]}]},
    ]
    got = data.transform(pa.Table.from_pylist(users)).to_pylist()
    assert got == model_of_transform(users, data.MIN_EVENTS)
    assert [u["user_id"] for u in got] == [2]
    assert got[0]["stats"] == {"n_sessions": 1, "n_events": 2, "total_ms": 10, "longest_ms": 9}
    empty = pa.Table.from_pylist(users).slice(0, 0)
    assert data.transform(empty).num_rows == 0


def test_transform_of_a_dictionary_partition_column():
    """Hive partition columns may come dictionary-encoded; they leave as plain strings."""
    pa = need("pyarrow")
    import ray_data_pipeline as data

    users = data.make_users(40, seed=2)
    table = pa.Table.from_pylist(users)
    i = table.schema.get_field_index("country")
    table = table.set_column(i, "country", table.column("country").dictionary_encode())
    assert data.transform(table).to_pylist() == model_of_transform(users, data.MIN_EVENTS)


def test_data_pipeline_in_one_process(tmp_path):
    need("pyarrow")
    import ray_data_pipeline as data

    users = data.make_dataset(str(tmp_path / "in"), 700, seed=3, rows_per_file=100)
    assert sorted(os.listdir(tmp_path / "in")) == ["country=de", "country=fr", "country=in", "country=jp", "country=ru"]
    data.run_local(str(tmp_path / "in"), str(tmp_path / "out"), batch_size=128)
    assert data.read_output(str(tmp_path / "out")) == model_of_transform(users, data.MIN_EVENTS)


def test_asr_pipeline_in_one_process_finds_the_words(tmp_path):
    import ray_asr_pipeline as asr

    truth = asr.make_features(f"{tmp_path / 'feats.ark'},{tmp_path / 'feats.scp'}", 25)
    results = asr.run_local(str(tmp_path / "feats.scp"), str(tmp_path / "out"), n_shards=3)
    assert results == truth
    assert asr.read_text(str(tmp_path / "out")) == sorted(f"{k} {' '.join(w)}" for k, w in truth)
    # the lattice archives hold one lattice per utterance, in order, whose best path is the text
    import arrays.k2 as k2

    keys = []
    for shard in range(3):
        with open(tmp_path / "out" / f"lattices.{shard}.pkl", "rb") as f:
            for key, lattice in pickle.load(f):
                (_, word_ids, _), = k2.one_best(lattice)
                assert [asr.WORDS[w] for w in word_ids] == dict(truth)[key]
                keys.append(key)
    assert keys == [k for k, _ in truth]


def test_split_scp_keeps_every_line_once(tmp_path):
    import ray_asr_pipeline as asr

    scp = tmp_path / "feats.scp"
    scp.write_text("".join(f"u{i} a.ark:{i}\n" for i in range(10)))
    shards = asr.split_scp(str(scp), 4, str(tmp_path))
    lines = [line for s in shards for line in Path(s).read_text().splitlines()]
    assert lines == scp.read_text().splitlines()
    assert [len(Path(s).read_text().splitlines()) for s in shards] == [3, 3, 2, 2]
