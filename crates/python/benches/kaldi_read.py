"""Reading a float archive through its scp into numpy: arrays.kaldi against kaldiio and
kaldi-native-io, alternated rounds, medians; prints the times and ours / peer ratios.

    python crates/python/benches/kaldi_read.py [UTTERANCES] [ROUNDS] [sum]

UTTERANCES (default 1000) matrices of 500 x 80 float32 (1000: 160 MB) are written with
kaldi-native-io (`ark,scp:`) into a temporary folder, outside the timed region. Each
workload reads every value in the scp's order and keeps it for the length of one loop
step; every side hands out owned arrays: kaldi-native-io's reader hands out views of its
own matrix, overwritten by the next record, so they are copied (`.copy()`), as a caller
keeping them must; kaldiio's and ours are arrays of their own.
- `sequential`: `ReadHelper("scp:...")` (kaldiio, ours), `SequentialFloatMatrixReader`
  (kaldi-native-io).
- `mapping`: `load_scp(scp)[key]` for every key (kaldiio, ours),
  `RandomAccessFloatMatrixReader` (kaldi-native-io).
- `one copy` (a reference, not a peer): per scp entry one `os.pread` of the matrix's
  bytes at its offset (header length known in advance, nothing checked) into a new bytes
  object viewed by `np.frombuffer`: the kernel's copy out of the page cache with the least
  Python around it, the floor of any reader that copies each record once.
- `mapped views` (a reference, not a peer): numpy views of one read-only `mmap` of the
  archive per pass, nothing copied: what a zero-copy reader would cost. Untouched, its
  pages are never read, so it is nearly free; with `sum` it pays for the page faults and
  the reads from memory that the copying readers pay in their copy.
With `sum` (third argument) every side also sums each matrix (`m.sum()`), as code that
uses the values reads them.
Wall time (`perf_counter`) and the CPU time of the calling thread (`thread_time`: the
Rust side reads in the calling thread) are printed; on a shared machine CPU time is the
steadier measure. Needs numpy, kaldiio, kaldi-native-io and arrays installed.
"""

import mmap
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import arrays.kaldi as ours
import kaldi_native_io as kni
import kaldiio


def write_archive(folder, n):
    rng = np.random.default_rng(1000)
    scp = f"{folder}/feats.scp"
    with kni.FloatMatrixWriter(f"ark,scp:{folder}/feats.ark,{scp}") as writer:
        for i in range(n):
            writer.write("utt%04d" % i, (rng.random((500, 80), dtype=np.float32) * 20 - 10))
    return scp


TOUCH = len(sys.argv) > 3 and sys.argv[3] == "sum"


def use(m):
    """The rows of `m`, having summed it first with `sum`."""
    if TOUCH:
        m.sum()
    return m.shape[0]


def sequential_ours(scp):
    total = 0
    with ours.ReadHelper(f"scp:{scp}") as reader:
        for _, m in reader:
            total += use(m)
    return total


def sequential_kaldiio(scp):
    total = 0
    with kaldiio.ReadHelper(f"scp:{scp}") as reader:
        for _, m in reader:
            total += use(m)
    return total


def sequential_kni(scp):
    total = 0
    with kni.SequentialFloatMatrixReader(f"scp:{scp}") as reader:
        for _, m in reader:
            total += use(m.copy())
    return total


def mapping_ours(scp):
    table = ours.load_scp(scp)
    return sum(use(table[k]) for k in table)


def mapping_kaldiio(scp):
    table = kaldiio.load_scp(scp)
    return sum(use(table[k]) for k in table)


def mapping_kni(scp, keys):
    with kni.RandomAccessFloatMatrixReader(f"scp:{scp}") as reader:
        return sum(use(reader[k].copy()) for k in keys)


def one_copy(entries):
    # the scp's (path, offset) pairs parsed beforehand; each record: `\0B`, `FM `, two sizes
    # and values, rows and cols known (500 x 80)
    total = 0
    files = {}
    for path, offset in entries:
        fd = files.get(path)
        if fd is None:
            fd = files[path] = os.open(path, os.O_RDONLY)
        data = os.pread(fd, 13 + 500 * 80 * 4, offset + 2)
        total += use(np.frombuffer(data, dtype=np.float32, offset=13).reshape(500, 80))
    for fd in files.values():
        os.close(fd)
    return total


def mapped_views(entries):
    # one read-only mapping per archive for the pass; each value a view into it
    total = 0
    maps = {}
    for path, offset in entries:
        mapped = maps.get(path)
        if mapped is None:
            with open(path, "rb") as f:
                mapped = maps[path] = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        view = np.frombuffer(mapped, dtype=np.float32, count=500 * 80, offset=offset + 15)
        total += use(view.reshape(500, 80))
        del view
    return total


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    with tempfile.TemporaryDirectory() as folder:
        scp = write_archive(folder, n)
        keys = [line.split()[0] for line in open(scp)]
        entries = [
            (loc.rsplit(":", 1)[0], int(loc.rsplit(":", 1)[1]))
            for loc in (line.split()[1] for line in open(scp))
        ]
        workloads = {
            "sequential": {
                "ours": lambda: sequential_ours(scp),
                "kaldiio": lambda: sequential_kaldiio(scp),
                "kaldi-native-io": lambda: sequential_kni(scp),
                "one copy": lambda: one_copy(entries),
                "mapped views": lambda: mapped_views(entries),
            },
            "mapping": {
                "ours": lambda: mapping_ours(scp),
                "kaldiio": lambda: mapping_kaldiio(scp),
                "kaldi-native-io": lambda: mapping_kni(scp, keys),
            },
        }
        print(
            f"{n} matrices of 500 x 80 float32 ({n * 500 * 80 * 4 / 1e6:.0f} MB), {rounds} alternated rounds"
            + (", each matrix summed" if TOUCH else "")
        )
        for name, sides in workloads.items():
            times = {side: ([], []) for side in sides}
            for side, run in sides.items():
                assert run() == 500 * n, side  # warm the page cache, check the count
            for _ in range(rounds):
                for side, run in sides.items():
                    wall, cpu = time.perf_counter(), time.thread_time()
                    run()
                    times[side][0].append(time.perf_counter() - wall)
                    times[side][1].append(time.thread_time() - cpu)
            med = {side: (statistics.median(w), statistics.median(c)) for side, (w, c) in times.items()}
            for side, (wall, cpu) in med.items():
                print(f"  {name:10} {side:16} wall {wall * 1e3:8.1f} ms   cpu {cpu * 1e3:8.1f} ms")
            for peer in ("kaldiio", "kaldi-native-io", "one copy", "mapped views"):
                if peer not in med:
                    continue
                print(
                    f"  {name:10} ours / {peer:16} wall {med['ours'][0] / med[peer][0]:.3f}   "
                    f"cpu {med['ours'][1] / med[peer][1]:.3f}"
                )
            for floor in ("one copy", "mapped views"):
                if floor in med:
                    print(
                        f"  {name:10} {floor + ' / kaldiio':24} wall "
                        f"{med[floor][0] / med['kaldiio'][0]:.3f}   "
                        f"cpu {med[floor][1] / med['kaldiio'][1]:.3f}"
                    )


if __name__ == "__main__":
    main()
