"""Golden Kaldi archives for the binary and text readers in `src/io.rs`.

Written by kaldi-native-io, which wraps Kaldi's own table and matrix I/O code, so the bytes
are Kaldi's. Run from this folder:

    python -m venv venv && venv/bin/pip install kaldi-native-io numpy
    venv/bin/python gen_io_goldens.py

It writes:
- io_float_matrix.ark: FloatMatrixWriter, key `key`, [[1, 2], [3, 4]], binary;
- io_double_vector.ark: DoubleVectorWriter, key `v`, [0.5, -1.25, 1e300], binary;
- io_double_matrix_text.ark: DoubleMatrixWriter in text mode (`ark,t:`), key `m`,
  [[0.1, -2], [3e-300, 7], [inf, -0.0]].
"""

import os

import kaldi_native_io
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def main():
    with kaldi_native_io.FloatMatrixWriter("ark:" + path("io_float_matrix.ark")) as w:
        w["key"] = np.array([[1, 2], [3, 4]], dtype=np.float32)
    with kaldi_native_io.DoubleVectorWriter("ark:" + path("io_double_vector.ark")) as w:
        w["v"] = np.array([0.5, -1.25, 1e300], dtype=np.float64)
    with kaldi_native_io.DoubleMatrixWriter("ark,t:" + path("io_double_matrix_text.ark")) as w:
        w["m"] = np.array([[0.1, -2], [3e-300, 7], [np.inf, -0.0]], dtype=np.float64)


if __name__ == "__main__":
    main()
