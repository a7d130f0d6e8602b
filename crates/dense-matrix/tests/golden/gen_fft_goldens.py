"""Golden values for the FFTs and the DCT matrix in `src/fft.rs`, computed by numpy and
scipy and written in Kaldi's layouts. Run from this folder:

    python -m venv venv && venv/bin/pip install numpy scipy
    venv/bin/python gen_fft_goldens.py

It writes fft_goldens.txt (the last lines: lengths 7, 100, 1000, 997 and real 200, 1994,
which are not powers of two), one case a line: `KIND N : inputs : outputs`, numbers in
`repr` form (exact doubles). Kinds:
- `complex`: N complex points interleaved [re0, im0, re1, im1, ...]; outputs are
  numpy.fft.fft (forward, e^{-i...}, no scaling), interleaved the same way;
- `complex_inv`: the same inputs; outputs are N * numpy.fft.ifft (Kaldi's backward
  transform has no 1/N);
- `real`: N real points; outputs are numpy.fft.rfft in Kaldi's packing
  [Re X_0, Re X_{N/2}, Re X_1, Im X_1, ..., Re X_{N/2-1}, Im X_{N/2-1}];
- `dct`: K rows (inputs: the single number K) of the N-column DCT matrix of Kaldi's
  ComputeDctMatrix, i.e. the first K rows of scipy.fft.dct(eye(N), norm="ortho", axis=0),
  row-major.
"""

import os

import numpy as np
import scipy.fft

HERE = os.path.dirname(os.path.abspath(__file__))


def fmt(xs):
    return " ".join(repr(float(x)) for x in xs)


def interleave(z):
    out = np.empty(2 * len(z))
    out[0::2] = z.real
    out[1::2] = z.imag
    return out


def main():
    rng = np.random.default_rng(20261201)
    lines = []
    for n in [1, 2, 4, 8, 16, 64, 256, 3, 5, 6, 12, 15]:
        z = rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)
        lines.append(f"complex {n} : {fmt(interleave(z))} : {fmt(interleave(np.fft.fft(z)))}")
        lines.append(
            f"complex_inv {n} : {fmt(interleave(z))} : {fmt(interleave(n * np.fft.ifft(z)))}"
        )
    for n in [4, 8, 16, 32, 128, 512, 6, 10, 12]:
        x = rng.uniform(-1, 1, n)
        f = np.fft.rfft(x)
        packed = np.empty(n)
        packed[0] = f[0].real
        packed[1] = f[n // 2].real
        packed[2::2] = f[1 : n // 2].real
        packed[3::2] = f[1 : n // 2].imag
        lines.append(f"real {n} : {fmt(x)} : {fmt(packed)}")
    for k, n in [(1, 1), (4, 4), (13, 23), (23, 23)]:
        d = scipy.fft.dct(np.eye(n), norm="ortho", axis=0)[:k]
        lines.append(f"dct {n} : {k} : {fmt(d.reshape(-1))}")
    # lengths that are not powers of two (Bluestein's route), from a second generator so
    # the cases above stay as they were; backward only for the shorter ones
    rng2 = np.random.default_rng(20261202)
    for n in [7, 100, 1000, 997]:
        z = rng2.uniform(-1, 1, n) + 1j * rng2.uniform(-1, 1, n)
        lines.append(f"complex {n} : {fmt(interleave(z))} : {fmt(interleave(np.fft.fft(z)))}")
        if n <= 100:
            lines.append(
                f"complex_inv {n} : {fmt(interleave(z))} : {fmt(interleave(n * np.fft.ifft(z)))}"
            )
    for n in [200, 1994]:
        x = rng2.uniform(-1, 1, n)
        f = np.fft.rfft(x)
        packed = np.empty(n)
        packed[0] = f[0].real
        packed[1] = f[n // 2].real
        packed[2::2] = f[1 : n // 2].real
        packed[3::2] = f[1 : n // 2].imag
        lines.append(f"real {n} : {fmt(x)} : {fmt(packed)}")
    with open(os.path.join(HERE, "fft_goldens.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
