"""Golden Kaldi archives for the kaldi-io tests, written by kaldi-native-io.

kaldi-native-io wraps Kaldi's own table, holder and compressed-matrix code, so every byte
here is what Kaldi writes. Values come from a fixed numpy seed. Run from anywhere:

    python -m venv venv && venv/bin/pip install kaldi-native-io numpy
    venv/bin/python gen_goldens.py

The script works from the crate's root, so the scp files it writes name the archives as
`tests/golden/<name>.ark:<offset>`, the paths the tests (run from the crate root) open.

Files (binary `<name>.ark` and text `<name>_t.ark` unless said otherwise; values.json
holds every value as written, and as its text form reads back, under `<name>` and
`<name>_t`):
- float_matrix, double_matrix: keys a (3 x 4), b (1 x 1), e (empty 0 x 0), c (5 x 2);
- float_vector, double_vector: keys a (5), e (empty), b (1);
- int32, float, double, bool: keys k0..k3;
- int32_vector (with an empty one), int32_vector_vector, int32_pair_vector, token,
  token_vector, posterior;
- feats.ark + feats.scp: FloatMatrixWriter on `ark,scp:`, 4 utterances of 10 x 6, and
  feats_t.ark + feats_t.scp in text mode;
- ranges.scp (hand-written lines with `[r0:r1]` and `[r0:r1,c0:c1]` ranges into feats.ark)
  and ranges_expected.ark: what kaldi-native-io reads through that scp, written back as a
  plain float matrix archive;
- compressed_input.ark: the float matrices that were compressed; compressed.ark: each
  compressed with the method in its key (`m<code>_<name>`), by CompressedMatrixWriter;
  compressed_decoded.ark: compressed.ark read back as float matrices (Kaldi's
  decompression), written as plain float matrices; compressed_empty.ark: the empty matrix.
"""

import json
import os
import struct

import kaldi_native_io as kio
import numpy as np

CRATE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
G = "tests/golden/"


VALUES = {}


def bits(x):
    """A float as the bits of its float64 value (JSON numbers lose the last bit in some
    readers)."""
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def plain(v, text):
    """A value as JSON, every float as `bits`: arrays as nested lists; with `text`, each
    float as Kaldi's text form (`%.7g`) reads back, rounded to the array's precision."""
    if isinstance(v, np.ndarray):
        if text:
            return [plain(x, text) for x in v] if v.ndim > 1 else \
                [bits(v.dtype.type(float("%.7g" % x))) for x in v]
        return [plain(x, text) for x in v] if v.ndim > 1 else [bits(x) for x in v]
    if isinstance(v, (list, tuple)):
        return [plain(x, text) for x in v]
    if isinstance(v, float):
        return bits(float("%.7g" % v) if text else v)
    return v


def both(writer, name, items, single=False):
    for spec in ("ark:" + G + name + ".ark", "ark,t:" + G + name + "_t.ark"):
        with writer(spec) as w:
            for k, v in items:
                w[k] = v
    VALUES[name] = [[k, plain(v, False)] for k, v in items]
    if single:
        # a float that Kaldi stores as float32 (BaseFloat): its binary value is rounded
        VALUES[name] = [[k, bits(np.float32(v))] for k, v in items]
        VALUES[name + "_t"] = [[k, bits(np.float32(float("%.7g" % v)))] for k, v in items]
    else:
        VALUES[name + "_t"] = [[k, plain(v, True)] for k, v in items]


def main():
    os.chdir(CRATE)
    rng = np.random.default_rng(20261201)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    d = lambda *s: rng.standard_normal(s).astype(np.float64) * 1e3

    both(kio.FloatMatrixWriter, "float_matrix",
         [("a", f(3, 4)), ("b", f(1, 1)), ("e", np.zeros((0, 0), np.float32)), ("c", f(5, 2))])
    both(kio.DoubleMatrixWriter, "double_matrix",
         [("a", d(3, 4)), ("b", d(1, 1)), ("e", np.zeros((0, 0))), ("c", d(5, 2))])
    both(kio.FloatVectorWriter, "float_vector",
         [("a", f(5)), ("e", np.zeros(0, np.float32)), ("b", f(1))])
    both(kio.DoubleVectorWriter, "double_vector",
         [("a", d(5)), ("e", np.zeros(0)), ("b", d(1))])
    both(kio.Int32Writer, "int32", [("k0", 0), ("k1", -7), ("k2", 2147483647), ("k3", -2147483648)])
    both(kio.FloatWriter, "float", [("k0", 0.5), ("k1", -1.0e-7), ("k2", 3.4e38), ("k3", 1.0 / 3)],
         single=True)
    both(kio.DoubleWriter, "double", [("k0", 0.1), ("k1", -2.5e-300), ("k2", 1e300), ("k3", 2.0 / 3)])
    both(kio.BoolWriter, "bool", [("k0", True), ("k1", False), ("k2", True), ("k3", False)])
    both(kio.Int32VectorWriter, "int32_vector",
         [("ali1", [1, 1, 2, 3, 3, 3]), ("empty", []), ("ali2", [-5, 2147483647])])
    both(kio.Int32VectorVectorWriter, "int32_vector_vector",
         [("a", [[1, 2], [], [3]]), ("e", []), ("b", [[-4]])])
    both(kio.Int32PairVectorWriter, "int32_pair_vector",
         [("a", [(1, 2), (3, -4)]), ("e", []), ("b", [(0, 0)])])
    both(kio.TokenWriter, "token", [("a", "hello"), ("b", "wörld"), ("c", "x")])
    both(kio.TokenVectorWriter, "token_vector",
         [("a", ["the", "cat", "sat"]), ("e", []), ("b", ["one"])])
    both(kio.PosteriorWriter, "posterior",
         [("a", [[(1, 0.5), (2, 0.5)], [], [(7, 1.0)]]), ("e", []), ("b", [[(0, 0.25)]])])
    with open(G + "values.json", "w") as out:
        json.dump(VALUES, out, indent=0, sort_keys=True)

    feats = [("utt%d" % i, f(10, 6)) for i in range(1, 5)]
    with kio.FloatMatrixWriter("ark,scp:" + G + "feats.ark," + G + "feats.scp") as w:
        for k, v in feats:
            w[k] = v
    with kio.FloatMatrixWriter("ark,scp,t:" + G + "feats_t.ark," + G + "feats_t.scp") as w:
        for k, v in feats:
            w[k] = v

    offsets = dict(line.split() for line in open(G + "feats.scp"))
    with open(G + "ranges.scp", "w") as out:
        out.write("r1 %s[0:2]\n" % offsets["utt1"])
        out.write("r2 %s[3:9,1:4]\n" % offsets["utt2"])
        out.write("r3 %s[2:4,:]\n" % offsets["utt3"])
        out.write("r4 %s[8:11]\n" % offsets["utt4"])
        out.write("r5 %s[:,0:5]\n" % offsets["utt1"])
    with kio.FloatMatrixWriter("ark:" + G + "ranges_expected.ark") as w:
        for k, v in kio.SequentialFloatMatrixReader("scp:" + G + "ranges.scp"):
            w[k] = v

    inputs = [
        ("speech", f(40, 5) * 3 + 1),
        ("tall", f(200, 3)),
        ("small", f(3, 4)),
        ("rows4", f(4, 3)),
        ("rows5", f(5, 3)),
        ("rows1", f(1, 6)),
        ("const", np.full((12, 2), 2.5, np.float32)),
        ("ints", rng.integers(-40000, 40000, (6, 5)).astype(np.float32)),
        ("bytes", rng.integers(-3, 260, (9, 4)).astype(np.float32)),
        ("zeroone", rng.integers(0, 2, (10, 3)).astype(np.float32)),
    ]
    with kio.FloatMatrixWriter("ark:" + G + "compressed_input.ark") as w:
        for k, v in inputs:
            w[k] = v
    with kio.CompressedMatrixWriter("ark:" + G + "compressed.ark") as w:
        for code in range(1, 8):
            method = kio.CompressionMethod(code)
            for k, v in inputs:
                w.write("m%d_%s" % (code, k), v, method)
    # Kaldi writes the empty compressed matrix as `CM ` and 20 bytes (its uninitialised
    # format field included) but reads 16, so it sits alone at the end of its archive.
    with kio.CompressedMatrixWriter("ark:" + G + "compressed_empty.ark") as w:
        w.write("empty", np.zeros((0, 0), np.float32), kio.CompressionMethod(2))
    with kio.FloatMatrixWriter("ark:" + G + "compressed_decoded.ark") as w:
        for k, v in kio.SequentialFloatMatrixReader("ark:" + G + "compressed.ark"):
            w[k] = v


if __name__ == "__main__":
    main()
