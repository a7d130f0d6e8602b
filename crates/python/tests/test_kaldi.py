"""arrays.kaldi against kaldiio 2.18.1 and kaldi-native-io 1.23.0 (Kaldi's own table code),
run live: archives either writes are read back equal by the other side, and where Kaldi
defines the bytes (its holders' binary and text forms, its compression) ours are the same
bytes as kaldi-native-io's."""

import gzip
import os

import numpy as np
import pytest

import arrays.kaldi as ak
from conftest import need


@pytest.fixture
def kaldiio():
    return need("kaldiio")


@pytest.fixture
def kni():
    return need("kaldi_native_io")


def values(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "m32": rng.standard_normal((7, 5)).astype(np.float32),
        "m64": rng.standard_normal((3, 9)),
        "odd": rng.standard_normal((4, 3)).astype(np.float32),
        "v32": rng.standard_normal(6).astype(np.float32),
        "v64": rng.standard_normal(11),
        "ali": rng.integers(-5, 1000, size=13).astype(np.int32),
        "one": np.ones((1, 1), dtype=np.float32),
    }


def features(n=5, seed=1):
    """Speech-like features: 100 frames x 13, columns at different scales."""
    rng = np.random.default_rng(seed)
    scale = np.linspace(0.5, 20, 13, dtype=np.float32)
    return {f"utt{i}": (rng.standard_normal((100 + i, 13)).astype(np.float32) * scale) for i in range(n)}


def check_equal(got, want):
    assert list(got) == list(want)
    for key in want:
        assert got[key].dtype == want[key].dtype, key
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


# --- reading what the peers wrote -------------------------------------------------------


def test_reads_kaldiio_archives_every_way(tmp_path, kaldiio):
    want = values()
    ark, scp = tmp_path / "a.ark", tmp_path / "a.scp"
    kaldiio.save_ark(str(ark), want, scp=str(scp))
    with ak.ReadHelper(f"ark:{ark}") as reader:
        check_equal(dict(reader), want)
    check_equal(dict(ak.ReadHelper(f"scp:{scp}")), want)
    check_equal(dict(ak.ReadHelper(f"ark:cat {ark} |")), want)
    check_equal(dict(ak.ReadHelper(f"ark,bg:{ark}")), want)
    check_equal(dict(ak.load_ark(str(ark))), want)
    with open(ark, "rb") as f:
        check_equal(dict(ak.load_ark(f)), want)
    table = ak.load_scp(str(scp))
    assert len(table) == len(want) and "m32" in table and "nope" not in table
    check_equal({k: table[k] for k in table}, want)
    for line in scp.read_text().splitlines():
        key, rx = line.split()
        np.testing.assert_array_equal(ak.load_mat(rx), want[key])


def test_reads_kaldiio_text_archives(tmp_path, kaldiio):
    want = {"m": np.array([[1.5, -2.25], [3.0, 4.125]], dtype=np.float32), "v": np.array([0.5, 1.5, -3.0], dtype=np.float32)}
    ark = tmp_path / "t.ark"
    kaldiio.save_ark(str(ark), want, text=True)
    check_equal(dict(ak.ReadHelper(f"ark:{ark}")), want)


@pytest.mark.parametrize("method", [1, 2, 3, 4, 5, 6, 7])
def test_reads_kaldiio_compressed_archives(tmp_path, kaldiio, method):
    feats = features()
    if method in (4, 6):
        feats = {k: np.round(v).clip(0, 200) for k, v in feats.items()}
    if method == 7:
        feats = {k: (v > 0).astype(np.float32) for k, v in feats.items()}
    ark = tmp_path / "c.ark"
    kaldiio.save_ark(str(ark), feats, compression_method=method)
    ours = dict(ak.ReadHelper(f"ark:{ark}"))
    theirs = dict(kaldiio.load_ark(str(ark)))
    for key in feats:
        assert ours[key].dtype == np.float32
        # the same bytes decoded: Kaldi decodes in float, kaldiio in numpy float32 with
        # other operation orders, so a few units in the last place may differ
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6, atol=1e-5 * np.abs(theirs[key]).max())


def test_reads_kaldi_native_io_archives(tmp_path, kni):
    want = values()
    ark = tmp_path / "k.ark"
    scp = tmp_path / "k.scp"
    writers = {
        np.dtype(np.float32): (kni.FloatMatrixWriter, kni.FloatVectorWriter),
        np.dtype(np.float64): (kni.DoubleMatrixWriter, kni.DoubleVectorWriter),
    }
    # one archive per type, concatenated with their scp lines
    parts = []
    for i, (key, value) in enumerate(want.items()):
        part = tmp_path / f"p{i}.ark"
        if value.dtype == np.int32:
            writer = kni.Int32VectorWriter(f"ark:{part}")
            writer.write(key, value.tolist())
        else:
            writer = writers[value.dtype][value.ndim == 1](f"ark:{part}")
            writer.write(key, value)
        writer.close()
        parts.append(part.read_bytes())
    ark.write_bytes(b"".join(parts))
    check_equal(dict(ak.ReadHelper(f"ark:{ark}")), want)
    # an scp as kaldi-native-io writes it
    with kni.FloatMatrixWriter(f"ark,scp:{tmp_path / 'f.ark'},{scp}") as writer:
        writer.write("a", want["m32"])
        writer.write("b", want["odd"])
    table = ak.load_scp(str(scp))
    np.testing.assert_array_equal(table["b"], want["odd"])
    np.testing.assert_array_equal(table["a"], want["m32"])


@pytest.mark.parametrize("method", [1, 2, 3, 5])
def test_reads_kaldi_native_io_compressed(tmp_path, kni, method):
    feats = features(3)
    ark = tmp_path / "c.ark"
    with kni.CompressedMatrixWriter(f"ark:{ark}") as writer:
        for key, value in feats.items():
            writer.write(key, value, kni.CompressionMethod(method))
    ours = dict(ak.ReadHelper(f"ark:{ark}"))
    theirs = {}
    with kni.SequentialFloatMatrixReader(f"ark:{ark}") as reader:
        for key, value in reader:
            theirs[key] = value.copy()
    check_equal(ours, theirs)


def test_posteriors_both_ways(tmp_path, kni):
    post = [[(1, 0.5), (7, 0.5)], [], [(3, 1.0)]]
    theirs = tmp_path / "theirs.ark"
    ours = tmp_path / "ours.ark"
    with kni.PosteriorWriter(f"ark:{theirs}") as writer:
        writer.write("u", post)
    with ak.WriteHelper(f"ark:{ours}") as writer:
        writer("u", post)
    assert ours.read_bytes() == theirs.read_bytes()
    [(key, got)] = list(ak.ReadHelper(f"ark:{theirs}", holder="posterior"))
    assert key == "u" and got == [[(1, 0.5), (7, 0.5)], [], [(3, 1.0)]]


# --- peers reading what we wrote ---------------------------------------------------------


def test_peers_read_ours(tmp_path, kaldiio, kni):
    want = values()
    ark, scp = tmp_path / "o.ark", tmp_path / "o.scp"
    with ak.WriteHelper(f"ark,scp:{ark},{scp}") as writer:
        for key, value in want.items():
            writer(key, value)
    check_equal(dict(kaldiio.load_ark(str(ark))), want)
    check_equal(dict(kaldiio.load_scp(str(scp))), want)
    with kni.RandomAccessFloatMatrixReader(f"scp:{scp}") as reader:
        np.testing.assert_array_equal(reader["odd"], want["odd"])
    with kni.RandomAccessDoubleVectorReader(f"scp:{scp}") as reader:
        np.testing.assert_array_equal(reader["v64"], want["v64"])
    with kni.RandomAccessInt32VectorReader(f"scp:{scp}") as reader:
        assert reader["ali"] == want["ali"].tolist()


def test_save_ark_is_byte_identical_to_kaldiio(tmp_path, kaldiio):
    want = values()
    kaldiio.save_ark(str(tmp_path / "k.ark"), want, scp=str(tmp_path / "k.scp"))
    ak.save_ark(str(tmp_path / "o.ark"), want, scp=str(tmp_path / "o.scp"))
    assert (tmp_path / "o.ark").read_bytes() == (tmp_path / "k.ark").read_bytes()
    assert (tmp_path / "o.scp").read_text() == (tmp_path / "k.scp").read_text().replace("k.ark", "o.ark")
    # append, as kaldiio: offsets continue after what the file held
    extra = {"late": np.arange(4, dtype=np.float32)}
    kaldiio.save_ark(str(tmp_path / "k.ark"), extra, scp=str(tmp_path / "k.scp"), append=True)
    ak.save_ark(str(tmp_path / "o.ark"), extra, scp=str(tmp_path / "o.scp"), append=True)
    assert (tmp_path / "o.ark").read_bytes() == (tmp_path / "k.ark").read_bytes()
    assert (tmp_path / "o.scp").read_text() == (tmp_path / "k.scp").read_text().replace("k.ark", "o.ark")
    ak.save_mat(str(tmp_path / "o.mat"), want["m64"])
    kaldiio.save_mat(str(tmp_path / "k.mat"), want["m64"])
    assert (tmp_path / "o.mat").read_bytes() == (tmp_path / "k.mat").read_bytes()
    np.testing.assert_array_equal(ak.load_mat(str(tmp_path / "k.mat")), want["m64"])


def kni_bytes(kni, tmp_path, writer_class, key, value, text=False, **kw):
    path = tmp_path / f"kni_{key}.ark"
    with writer_class(f"ark{',t' if text else ''}:{path}") as writer:
        writer.write(key, value, **kw)
    return path.read_bytes()


def test_writes_are_byte_identical_to_kaldi(tmp_path, kni):
    want = values()
    cases = [
        ("m32", kni.FloatMatrixWriter, want["m32"]),
        ("m64", kni.DoubleMatrixWriter, want["m64"]),
        ("v32", kni.FloatVectorWriter, want["v32"]),
        ("v64", kni.DoubleVectorWriter, want["v64"]),
        ("ali", kni.Int32VectorWriter, want["ali"].tolist()),
    ]
    for text in (False, True):
        for key, writer_class, value in cases:
            ours = tmp_path / f"ours_{key}.ark"
            with ak.WriteHelper(f"ark{',t' if text else ''}:{ours}") as writer:
                writer(key, want[key])
            assert ours.read_bytes() == kni_bytes(kni, tmp_path, writer_class, key, value, text), (key, text)


@pytest.mark.parametrize("method", [1, 2, 3, 4, 5, 6, 7])
def test_compression_is_byte_identical_to_kaldi(tmp_path, kni, method):
    feats = features(2)
    if method in (4, 6):
        feats = {k: np.round(v).clip(0, 200) for k, v in feats.items()}
    if method == 7:
        feats = {k: (v > 0).astype(np.float32) for k, v in feats.items()}
    feats["short"] = feats["utt0"][:5]  # the automatic method's two-byte branch
    ours, theirs = tmp_path / "ours.ark", tmp_path / "theirs.ark"
    with ak.WriteHelper(f"ark:{ours}", compression_method=method) as writer:
        for key, value in feats.items():
            writer(key, value)
    with kni.CompressedMatrixWriter(f"ark:{theirs}") as writer:
        for key, value in feats.items():
            writer.write(key, value, kni.CompressionMethod(method))
    assert ours.read_bytes() == theirs.read_bytes()
    # CompressedMatrix on its own: the same bytes, and the same decompression
    cm = ak.CompressedMatrix(feats["utt1"], method)
    body = theirs.read_bytes().split(b"utt1 \0B", 1)[1]
    assert body.startswith(cm.to_bytes())
    assert (cm.num_rows, cm.num_cols) == feats["utt1"].shape
    again = ak.CompressedMatrix.from_bytes(cm.to_bytes())
    np.testing.assert_array_equal(again.decompress(), cm.decompress())
    assert cm.decompress(double=True).dtype == np.float64
    read = dict(ak.ReadHelper(f"ark:{theirs}"))
    np.testing.assert_array_equal(read["utt1"], cm.decompress())


def test_compressed_matrix_values_write_as_they_are(tmp_path, kaldiio):
    feats = features(1)["utt0"]
    cm = ak.CompressedMatrix(feats, ak.kSpeechFeature)
    assert cm.token == "CM"
    with ak.WriteHelper(f"ark:{tmp_path / 'c.ark'}") as writer:
        writer("u", cm)
    [(key, got)] = list(kaldiio.load_ark(str(tmp_path / "c.ark")))
    np.testing.assert_allclose(got, cm.decompress(), rtol=1e-6, atol=1e-5)
    # the SpeechFeature bound: about 1/63 of a column's quantile interval, well under 1/20
    # of each column's range here
    span = feats.max(axis=0) - feats.min(axis=0)
    assert np.all(np.abs(cm.decompress() - feats) <= span / 20)


# --- rspecifier options, pipes, ranges ---------------------------------------------------


def test_pipes_and_ranges(tmp_path):
    want = values()
    gz = tmp_path / "a.ark.gz"
    with ak.WriteHelper(f"ark:| gzip -c > {gz}") as writer:
        for key, value in want.items():
            writer(key, value)
    with gzip.open(gz, "rb") as f:
        check_equal(dict(ak.load_ark(f)), want)
    check_equal(dict(ak.ReadHelper(f"ark:gunzip -c {gz} |")), want)
    ark, scp = tmp_path / "r.ark", tmp_path / "r.scp"
    ak.save_ark(str(ark), want, scp=str(scp))
    offsets = dict(line.split() for line in scp.read_text().splitlines())
    # Kaldi's ranges: inclusive, rows then columns
    np.testing.assert_array_equal(ak.load_mat(offsets["m32"] + "[2:4]"), want["m32"][2:5])
    np.testing.assert_array_equal(ak.load_mat(offsets["m32"] + "[1:2,3:4]"), want["m32"][1:3, 3:5])
    np.testing.assert_array_equal(ak.load_mat(offsets["v64"] + "[3:5]"), want["v64"][3:6])
    ranged = tmp_path / "ranged.scp"
    ranged.write_text(f"x {offsets['m32']}[0:1]\ny {offsets['m64']}[:,2:3]\n")
    got = dict(ak.ReadHelper(f"scp:{ranged}"))
    np.testing.assert_array_equal(got["x"], want["m32"][0:2])
    np.testing.assert_array_equal(got["y"], want["m64"][:, 2:4])
    table = ak.load_scp(f"cat {ranged} |")
    np.testing.assert_array_equal(table["y"], want["m64"][:, 2:4])


def test_options(tmp_path):
    want = values()
    ark = tmp_path / "a.ark"
    ak.save_ark(str(ark), want)
    cut = tmp_path / "cut.ark"
    data = ark.read_bytes()
    cut.write_bytes(data[: len(data) - 10])
    # p: an archive that cannot be read ends quietly
    got = dict(ak.ReadHelper(f"ark,p:{cut}"))
    assert list(got) == list(want)[:-1]
    # s, cs: accepted (a sequential reader, as Kaldi's, does not check them)
    sorted_ark = tmp_path / "s.ark"
    ak.save_ark(str(sorted_ark), dict(sorted(want.items())))
    assert [k for k, _ in ak.ReadHelper(f"ark,s,cs:{sorted_ark}")] == sorted(want)
    # text archives written through the wspecifier
    text = tmp_path / "t.ark"
    with ak.WriteHelper(f"ark,t:{text}") as writer:
        writer("m", np.array([[1.0, 2.5]], dtype=np.float32))
        writer("ali", np.array([3, 4], dtype=np.int32))
    assert text.read_bytes() == b"m  [\n  1 2.5 ]\nali 3 4 \n"
    got = dict(ak.ReadHelper(f"ark:{text}"))
    np.testing.assert_array_equal(got["m"], [[1.0, 2.5]])
    np.testing.assert_array_equal(got["ali"], np.array([3, 4], dtype=np.int32))


def test_values_own_their_memory(tmp_path):
    want = values()
    ark = tmp_path / "a.ark"
    ak.save_ark(str(ark), want)
    got = dict(ak.ReadHelper(f"ark:{ark}"))
    for key, value in got.items():
        assert value.flags.c_contiguous and value.flags.writeable, key
    # each value is its own buffer (not a view overwritten by the next record)
    assert not np.shares_memory(got["m32"], got["odd"])
    got["m32"][0, 0] = 42.0
    np.testing.assert_array_equal(got["odd"], want["odd"])


def test_large_values_read_into_new_memory_equal_kaldiio(tmp_path, kaldiio):
    # matrices and vectors larger than one read piece (256 KiB) of the unzeroed path, in
    # both precisions, through scp (new values each) and an archive, as kaldiio reads them
    rng = np.random.default_rng(7)
    want = {
        "big32": rng.standard_normal((900, 100)).astype(np.float32),
        "big64": rng.standard_normal((300, 150)),
        "vec32": rng.standard_normal(70_000).astype(np.float32),
        "vec64": rng.standard_normal(40_000),
        "small": rng.standard_normal((2, 3)).astype(np.float32),
    }
    ark, scp = tmp_path / "a.ark", tmp_path / "a.scp"
    kaldiio.save_ark(str(ark), want, scp=str(scp))
    check_equal(dict(ak.ReadHelper(f"scp:{scp}")), want)
    check_equal(dict(ak.ReadHelper(f"ark:{ark}")), want)
    table = ak.load_scp(str(scp))
    order = ["vec64", "big32", "small", "big64", "vec32"]  # random access, out of order
    check_equal({k: table[k] for k in order}, {k: want[k] for k in order})
    peer = kaldiio.load_scp(str(scp))
    for key in want:
        np.testing.assert_array_equal(table[key], peer[key], err_msg=key)
    # cut inside the second piece of the first matrix: the error names the key and byte
    data = ark.read_bytes()
    cut = tmp_path / "cut.ark"
    cut.write_bytes(data[:300_000])
    with pytest.raises(ValueError, match=r"key `big32` at byte \d+"):
        list(ak.ReadHelper(f"ark:{cut}"))


# --- bad input ---------------------------------------------------------------------------


def test_truncated_archive_names_the_key_and_offset(tmp_path):
    want = values()
    ark = tmp_path / "a.ark"
    ak.save_ark(str(ark), want)
    data = ark.read_bytes()
    cut = tmp_path / "cut.ark"
    cut.write_bytes(data[: data.index(b"v32 ") + 20])
    with pytest.raises(ValueError, match=r"key `v32` at byte \d+"):
        list(ak.ReadHelper(f"ark:{cut}"))
    with pytest.raises(ValueError, match="v32"):
        list(ak.load_ark(str(cut)))


def test_bad_specifiers_and_missing_things(tmp_path):
    with pytest.raises(ValueError, match="rspecifier"):
        ak.ReadHelper("feats.ark")
    with pytest.raises(ValueError, match="rspecifier"):
        ak.ReadHelper("ark,scp:a.ark")
    with pytest.raises(ValueError, match="wspecifier"):
        ak.WriteHelper("scp,ark:a.ark,a.scp")
    with pytest.raises(FileNotFoundError, match="nope.ark"):
        ak.ReadHelper(f"ark:{tmp_path / 'nope.ark'}")
    with pytest.raises(OSError, match="exit"):
        list(ak.ReadHelper("ark:exit 3 |"))
    ark, scp = tmp_path / "a.ark", tmp_path / "a.scp"
    ak.save_ark(str(ark), values(), scp=str(scp))
    table = ak.load_scp(str(scp))
    with pytest.raises(KeyError, match="missing"):
        table["missing"]
    with pytest.raises(ValueError, match=r"offset 999999 is past the end"):
        ak.load_mat(f"{ark}:999999")
    bad = tmp_path / "bad.scp"
    bad.write_text(f"a {ark}:1\n")
    with pytest.raises(ValueError, match="key `a` at byte 1"):
        list(ak.ReadHelper(f"scp:{bad}"))
    with pytest.raises(ValueError, match="FX"):
        tmp = tmp_path / "fx.ark"
        tmp.write_bytes(b"k \0BFX \x04\x01\x00\x00\x00")
        list(ak.ReadHelper(f"ark:{tmp}"))


def test_bad_values_to_write(tmp_path):
    with ak.WriteHelper(f"ark:{tmp_path / 'w.ark'}") as writer:
        with pytest.raises(ValueError, match="int64"):
            writer("a", np.arange(3))
        with pytest.raises(ValueError, match="shape"):
            writer("b", np.zeros((2, 2, 2), dtype=np.float32))
        with pytest.raises(ValueError, match="invalid key"):
            writer("has space", np.zeros(2, dtype=np.float32))
        with pytest.raises(NotImplementedError, match="wav"):
            writer("w", (16000, np.zeros(10, dtype=np.int16)))
    with pytest.raises(RuntimeError, match="closed"):
        writer("late", np.zeros(2, dtype=np.float32))
    with pytest.raises(ValueError, match="compression_method 9"):
        ak.WriteHelper(f"ark:{tmp_path / 'x.ark'}", compression_method=9)
    with pytest.raises(ValueError, match="not a float matrix"):
        ak.save_mat(str(tmp_path / "m"), np.zeros(3, dtype=np.float32), compression_method=1)
    with pytest.raises(ValueError, match="NaN|finite|infinite"):
        ak.CompressedMatrix(np.array([[np.nan]], dtype=np.float32))
    with pytest.raises(NotImplementedError, match="endian"):
        ak.load_mat("x", endian=">")
