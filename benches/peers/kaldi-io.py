"""Peers of the kaldi-io benches: kaldi-native-io (Kaldi's own table and compressed-matrix
code, called from Python, values into numpy).

Same inputs as crates/kaldi-io/benches/kaldi-io.rs: utterance i (0-based) is a 500 x 80
float32 matrix of 20u - 10, u from SplitMix64(1000 + i), row-major; 1,000 utterances (20 in
a quick run), keys utt0000, utt0001, ... This script writes its own archives with
kaldi-native-io (`ark,scp:`, float and SpeechFeature-compressed) under the target dir
(`kaldi-io-bench/peer/`), outside the timed region.
- read_scp_float / read_scp_compressed: SequentialFloatMatrixReader over the scp.
- read_scp_float_into / read_scp_compressed_into / random_access_scp_into: read_scp_float,
  read_scp_compressed and random_access_scp with kaldi-native-io's own views, not copied
  (each value used before the next read): the counterpart of reading into one reused
  matrix (`next_into`, `get_into`) on the Rust side.
- random_access_scp: RandomAccessFloatMatrixReader over the float scp, every key in the
  shuffled order of the Rust side (Fisher-Yates with SplitMix64(7).below).
- compress_speech_feature: CompressedMatrixWriter writing utterance 0 with kSpeechFeature
  to `ark:/dev/null` (kaldi-native-io exposes compression only through a writer, so this
  includes writing the ~42 KB result to /dev/null).
- read_scp_float_bg: read_scp_float with Kaldi's `bg` option (`scp,bg:`).
- copy_feats_compress / copy_feats_compress_bg: `copy-feats --compress=true
  --compression-method=2 scp:first.scp ark:/dev/null` over the first 100 utterances
  (first.scp: the first 100 lines of the float scp), read with SequentialFloatMatrixReader
  (`scp:` / `scp,bg:`) and written with CompressedMatrixWriter (kSpeechFeature).
Owned values on both sides in the other workloads: kaldi-native-io's readers hand out
numpy views of the reader's own matrix, which the next record (or `get`) overwrites in
place; the Rust side returns a `Matrix<f32>` that owns its data, so each value here is
copied (`.copy()`) into an array of its own, as a caller keeping it must do.
When the Rust bench has run, its archives are read back here with kaldi-native-io and
compared with the inputs (an exception on any difference).
`kaldi-io.py probe PASSES WORKLOAD[,WORKLOAD...]` writes the archives, then times the named
reading workloads in turn, PASSES rounds, and prints wall and CPU times: the peer's half of
the alternated comparison with `cargo run --release -p kaldi-io --example read-probe`
(docs/kaldi-io.md, "Speed").
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F401,F403

CRATE = "kaldi-io"


def utterance(np, i):
    u = (splitmix64_array(1000 + i, 500 * 80) >> np.uint64(11)).astype(np.float64) * (
        1.0 / (1 << 53)
    )
    return (20.0 * u - 10.0).astype(np.float32).reshape(500, 80)


def shuffled_keys(n):
    keys = ["utt%04d" % i for i in range(n)]
    rng = SplitMix64(7)
    for i in range(n - 1, 0, -1):
        j = rng.below(i + 1)
        keys[i], keys[j] = keys[j], keys[i]
    return keys


def check_ours(kio, np, n):
    """Reads the Rust bench's archives (if present) with kaldi-native-io."""
    ours = os.path.join(target_dir(), "kaldi-io-bench", "ours")
    scp = os.path.join(ours, "feats.scp")
    if not os.path.exists(scp):
        return
    seen = 0
    for key, value in kio.SequentialFloatMatrixReader("scp:" + scp):
        i = int(key[3:])
        if i < n and not np.array_equal(value, utterance(np, i)):
            raise AssertionError(f"kaldi-io wrote {key} differently from the input")
        seen += 1
    cscp = os.path.join(ours, "feats_cm.scp")
    for key, value in kio.SequentialFloatMatrixReader("scp:" + cscp):
        if np.max(np.abs(value - utterance(np, int(key[3:])))) > 0.2:
            raise AssertionError(f"kaldi-io's compressed {key} is off")
    print(f"{CRATE}: kaldi-native-io read back {seen} matrices kaldi-io wrote", file=sys.stderr)


def read_workloads(kio, scp, cscp, keys):
    """The reading workloads by name, each a function of no arguments."""

    # The copies' cost depends on glibc's heap: here, after the inputs were generated and
    # written, each copy reuses freed memory; in a fresh process glibc gives the heap's top
    # back and takes it again for every 160 KB copy (page faults on fresh pages), and
    # read_all took 6-8 times as long on the reference machine.
    def read_all(rspecifier):
        rows = 0
        for _, value in kio.SequentialFloatMatrixReader(rspecifier):
            rows += value.copy().shape[0]
        return rows

    def read_views(rspecifier):
        rows = 0
        for _, value in kio.SequentialFloatMatrixReader(rspecifier):
            rows += value.shape[0]
        return rows

    def random_access(copy):
        reader = kio.RandomAccessFloatMatrixReader("scp:" + scp)
        rows = 0
        for key in keys:
            value = reader[key]
            rows += (value.copy() if copy else value).shape[0]
        reader.close()
        return rows

    return {
        "read_scp_float": lambda: read_all("scp:" + scp),
        "read_scp_float_into": lambda: read_views("scp:" + scp),
        "read_scp_compressed": lambda: read_all("scp:" + cscp),
        "read_scp_compressed_into": lambda: read_views("scp:" + cscp),
        "read_scp_float_bg": lambda: read_all("scp,bg:" + scp),
        "random_access_scp": lambda: random_access(True),
        "random_access_scp_into": lambda: random_access(False),
    }


def probe(workloads, names, passes):
    """`passes` rounds of every named workload in turn (after one warm-up round), then per
    workload the median, fastest and slowest wall time and the median CPU time of this
    thread, in ms: the Python half of the alternated comparison with the Rust example
    `read-probe`, which prints the same lines."""
    wall = {name: [] for name in names}
    cpu = {name: [] for name in names}
    for round_ in range(passes + 1):
        for name in names:
            t, c = time.perf_counter(), time.thread_time()
            workloads[name]()
            if round_ > 0:
                wall[name].append((time.perf_counter() - t) * 1e3)
                cpu[name].append((time.thread_time() - c) * 1e3)
    for name in names:
        w = sorted(wall[name])
        print(
            f"kaldi-native-io {name:26} wall {statistics.median(w):7.1f} ms"
            f" [{w[0]:7.1f} - {w[-1]:7.1f}]  cpu {statistics.median(cpu[name]):7.1f} ms",
            flush=True,
        )


def main():
    try:
        import kaldi_native_io as kio
        import numpy as np
    except ImportError as e:
        skip(CRATE, "kaldi-native-io", str(e))
        return
    version = package_version("kaldi-native-io")
    n = size(1000, 50)
    probing = sys.argv[1:2] == ["probe"]
    if not probing:
        check_ours(kio, np, n)
    out = os.path.join(target_dir(), "kaldi-io-bench", "peer")
    os.makedirs(out, exist_ok=True)
    ark, scp = os.path.join(out, "feats.ark"), os.path.join(out, "feats.scp")
    cark, cscp = os.path.join(out, "feats_cm.ark"), os.path.join(out, "feats_cm.scp")
    method = kio.CompressionMethod.kSpeechFeature
    with kio.FloatMatrixWriter(f"ark,scp:{ark},{scp}") as w, kio.CompressedMatrixWriter(
        f"ark,scp:{cark},{cscp}"
    ) as cw:
        for i in range(n):
            m = utterance(np, i)
            w["utt%04d" % i] = m
            cw.write("utt%04d" % i, m, method)
    keys = shuffled_keys(n)
    workloads = read_workloads(kio, scp, cscp, keys)
    if probing:
        # probe PASSES WORKLOAD[,WORKLOAD...]: the alternated comparison (docs/kaldi-io.md)
        probe(workloads, sys.argv[3].split(","), int(sys.argv[2]))
        return
    for workload in [
        "read_scp_float",
        "read_scp_float_into",
        "read_scp_compressed",
        "read_scp_compressed_into",
        "read_scp_float_bg",
    ]:
        report(CRATE, workload, "kaldi-native-io", time_it(workloads[workload]), version)
    first = os.path.join(out, "first.scp")
    with open(scp) as f, open(first, "w") as g:
        g.writelines(f.readlines()[:100])

    def copy_feats(rspecifier):
        with kio.CompressedMatrixWriter("ark:/dev/null") as w:
            for key, value in kio.SequentialFloatMatrixReader(rspecifier):
                w.write(key, value, method)

    for workload, options in [("copy_feats_compress", ""), ("copy_feats_compress_bg", ",bg")]:
        seconds = time_it(lambda: copy_feats(f"scp{options}:{first}"), repeats=5)
        report(CRATE, workload, "kaldi-native-io", seconds, version)
    for workload in ["random_access_scp", "random_access_scp_into"]:
        report(CRATE, workload, "kaldi-native-io", time_it(workloads[workload]), version)
    m0 = utterance(np, 0)

    def compress():
        with kio.CompressedMatrixWriter("ark:/dev/null") as w:
            w.write("utt0000", m0, method)

    report(
        CRATE,
        "compress_speech_feature",
        "kaldi-native-io",
        time_it(compress, repeats=200),
        version,
    )


if __name__ == "__main__":
    main()
