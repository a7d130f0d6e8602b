"""Peers of the dense-matrix benches: numpy (and scipy, torch where installed).

Same inputs as crates/dense-matrix/benches/dense-matrix.rs, from the shared SplitMix64
(`u = next_f64()`, row-major):
- add_mat_vec: M 4096 x 4096 f32 (seed 1, 2u - 1), x 4096 (seed 2, 2u - 1); y = M x.
- add_mat_mat: A, B 1024 x 1024 f64 (seeds 3, 4, 2u - 1); C = A B.
- apply_softmax_per_row: 4096 x 4096 f32 (seed 5, 10u - 5); softmax of each row
  (numpy by hand, scipy.special.softmax, torch.softmax on the CPU).
- svd: 512 x 512 f64 (seed 6, 2u - 1); thin SVD with U and Vt (gesdd in both).
- invert: 1024 x 1024 f64 (seed 7, 2u - 1, plus 1024 on the diagonal); numpy.linalg.inv
  and scipy.linalg.inv (getrf + getri, as ours).
- apply_exp: 16 M f32 (seed 8, 20u - 10); np.exp into a preallocated output.
- add_mat_diag_vec: M 4096 x 1024 f32 (seed 9, 2u - 1), v 1024 (seed 10, 2u - 1);
  out = M diag(v) as np.multiply(M, v, out=out).
- group_pnorm: S 4096 x 2048 f32 (seed 11, 2u - 1), groups of 4 columns, power 2, as
  np.sqrt(np.square(S).reshape(rows, 512, 4).sum(axis=2)).
- split_radix_real_fft: X 100,000 x 512 f32 (seed 12, 2u - 1); np.fft.rfft(X, axis=1)
  (the same spectrum that SplitRadixRealFft packs in place, one frame a row).
- compute_pca: X 100,000 x 80 f32 (seed 13, 2u - 1); the top 40 principal directions and
  the projections: numpy's SVD route (np.linalg.svd(X, full_matrices=False), X @ Vt[:40].T)
  and, as the peer numpy_eigh, the eigh route (np.linalg.eigh(X.T @ X), the same product).
- top_eigs: S symmetric 500 x 500 f64 (seed 13, 2u - 1, filling the lower triangle row by
  row); its 10 eigenpairs of largest magnitude by scipy.sparse.linalg.eigsh(S, k=10)
  (ARPACK, which='LM', on the dense array); reported for top_eigs (Kaldi's default Krylov
  dimension on our side) and top_eigs_converged (Krylov dimension 200, eigsh's precision).
- add_sp_mat: S symmetric 1024 x 1024 f32 (seed 14, 2u - 1, the lower triangle row by row)
  times B 1024 x 1024 f32 (seed 15, 2u - 1): np.matmul(S, B, out=out) on the full array.
Every version string states the BLAS thread count, as the Rust side prints it, and the
OpenBLAS kernel numpy's bundled library runs. Where our side's OpenBLAS is pinned to a kernel
(`cargo xtask bench` passes it as ARRAYS_OUR_OPENBLAS_CORETYPE), the BLAS and LAPACK
workloads run a second time in a child process pinned to that same kernel, reported as the
peer `numpy_same_kernel`: the like-for-like comparison of the two wrappers.
Under `cargo xtask bench --simd-cap avx2` the harness pins numpy's and scipy's OpenBLAS to
Haswell and turns numpy's AVX-512 dispatch off; the script prints, as notes, the kernels
of every BLAS loaded and numpy's dispatch targets.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F401,F403

CRATE = "dense-matrix"


def uniform(np, seed, n, scale, offset):
    u = (splitmix64_array(seed, n) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    return scale * u + offset


def blas_info():
    """(thread count, kernel name) of numpy's BLAS."""
    try:
        from threadpoolctl import threadpool_info

        blas = [p for p in threadpool_info() if p.get("user_api") == "blas"]
        if blas:
            return blas[0]["num_threads"], blas[0].get("architecture") or "unknown"
    except ImportError:
        pass
    return int(os.environ.get("OPENBLAS_NUM_THREADS", os.cpu_count() or 1)), "unknown"


def note(peer, text):
    """A line the harness lists under the table's notes."""
    print(json.dumps({"crate": CRATE, "peer": peer, "note": text}), flush=True)


def dispatch_notes(np):
    """Notes of numpy's dispatch targets and of the kernel of every BLAS loaded."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    on = [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]
    note("numpy", "dispatches on " + (" ".join(on) or "baseline only"))
    try:
        from threadpoolctl import threadpool_info

        for p in threadpool_info():
            if p.get("user_api") == "blas":
                name = os.path.basename(p.get("filepath", "?"))
                note("numpy", f"BLAS {name}: kernel {p.get('architecture')}, {p.get('num_threads')} threads")
    except ImportError:
        pass


def blas_workloads(np, peer, npv, scipy):
    """svd, invert, gemv and gemm: the workloads whose time is the BLAS/LAPACK library's."""
    n = size(512, 4)
    a = uniform(np, 6, n * n, 2.0, -1.0).reshape(n, n)
    t = time_it(lambda: np.linalg.svd(a, full_matrices=False))
    report(CRATE, "svd", peer, t, npv)

    n = size(1024, 4)
    a = uniform(np, 7, n * n, 2.0, -1.0).reshape(n, n) + n * np.eye(n)
    t = time_it(lambda: np.linalg.inv(a))
    report(CRATE, "invert", peer, t, npv)
    if scipy is not None:
        t = time_it(lambda: scipy.linalg.inv(a))
        scipy_peer = peer.replace("numpy", "scipy")
        report(CRATE, "invert", scipy_peer, t, npv.replace(np.__version__, scipy.__version__))

    n = size(4096, 8)
    m = uniform(np, 1, n * n, 2.0, -1.0).astype(np.float32).reshape(n, n)
    x = uniform(np, 2, n, 2.0, -1.0).astype(np.float32)
    y = np.empty(n, dtype=np.float32)
    t = time_it(lambda: np.dot(m, x, out=y))
    report(CRATE, "add_mat_vec", peer, t, npv)
    del m

    n = size(1024, 4)
    a = uniform(np, 3, n * n, 2.0, -1.0).reshape(n, n)
    b = uniform(np, 4, n * n, 2.0, -1.0).reshape(n, n)
    c = np.empty((n, n))
    t = time_it(lambda: np.matmul(a, b, out=c))
    report(CRATE, "add_mat_mat", peer, t, npv)


def main():
    try:
        import numpy as np
    except ImportError as e:
        skip(CRATE, "numpy", str(e))
        return
    threads, kernel = blas_info()
    npv = f"{np.__version__} (BLAS threads {threads}, kernel {kernel})"
    try:
        import scipy
        import scipy.linalg
        import scipy.special
    except ImportError as e:
        scipy = None
        skip(CRATE, "scipy", str(e))

    if "--blas-only" in sys.argv:
        blas_workloads(np, "numpy_same_kernel", npv, scipy)
        return
    dispatch_notes(np)
    try:
        import torch
    except ImportError as e:
        torch = None
        skip(CRATE, "torch", str(e))

    blas_workloads(np, "numpy", npv, scipy)
    pinned = os.environ.get("ARRAYS_OUR_OPENBLAS_CORETYPE")
    if pinned:
        env = dict(os.environ, OPENBLAS_CORETYPE=pinned)
        subprocess.run([sys.executable, __file__, "--blas-only"], env=env, check=False)

    # softmax per row
    n = size(4096, 8)
    s = uniform(np, 5, n * n, 10.0, -5.0).astype(np.float32).reshape(n, n)

    def np_softmax():
        e = np.exp(s - s.max(axis=1, keepdims=True))
        e /= e.sum(axis=1, keepdims=True)
        return e

    t = time_it(np_softmax)
    report(CRATE, "apply_softmax_per_row", "numpy", t, npv)
    if scipy is not None:
        t = time_it(lambda: scipy.special.softmax(s, axis=1))
        report(CRATE, "apply_softmax_per_row", "scipy", t, scipy.__version__)
    if torch is not None:
        ts = torch.from_numpy(s)
        t = time_it(lambda: torch.softmax(ts, dim=1))
        report(
            CRATE,
            "apply_softmax_per_row",
            "torch",
            t,
            f"{torch.__version__} (threads {torch.get_num_threads()})",
        )
    del s

    # exp
    n = size(16 << 20, 16)
    v = uniform(np, 8, n, 20.0, -10.0).astype(np.float32)
    out = np.empty_like(v)
    t = time_it(lambda: np.exp(v, out=out))
    report(CRATE, "apply_exp", "numpy", t, npv)
    del v, out

    # Lanczos top eigenpairs (issue 12): ARPACK through scipy
    if scipy is not None:
        import scipy.sparse.linalg

        n = size(500, 4)
        s = np.zeros((n, n))
        s[np.tril_indices(n)] = uniform(np, 13, n * (n + 1) // 2, 2.0, -1.0)
        s = s + s.T - np.diag(np.diag(s))
        t = time_it(lambda: scipy.sparse.linalg.eigsh(s, k=10))
        version = npv.replace(np.__version__, scipy.__version__)
        report(CRATE, "top_eigs", "scipy", t, version)
        # eigsh converges to machine precision: also the peer of our converged run
        report(CRATE, "top_eigs_converged", "scipy", t, version)
        del s

    # packed symmetric times full (issue 12's AddSpMat): numpy holds S full
    n = size(1024, 8)
    s = np.zeros((n, n), dtype=np.float32)
    s[np.tril_indices(n)] = uniform(np, 14, n * (n + 1) // 2, 2.0, -1.0).astype(np.float32)
    s = s + s.T - np.diag(np.diag(s))
    bm = uniform(np, 15, n * n, 2.0, -1.0).astype(np.float32).reshape(n, n)
    out = np.empty_like(bm)
    t = time_it(lambda: np.matmul(s, bm, out=out))
    report(CRATE, "add_sp_mat", "numpy", t, npv)
    del s, bm, out

    # nnet kernels (issue 12) as numpy expressions
    rows, cols = size(4096, 8), 1024
    m = uniform(np, 9, rows * cols, 2.0, -1.0).astype(np.float32).reshape(rows, cols)
    d = uniform(np, 10, cols, 2.0, -1.0).astype(np.float32)
    out = np.empty_like(m)
    t = time_it(lambda: np.multiply(m, d, out=out))
    report(CRATE, "add_mat_diag_vec", "numpy", t, npv)
    del m, out

    rows, cols, group = size(4096, 8), 2048, 4
    s = uniform(np, 11, rows * cols, 2.0, -1.0).astype(np.float32).reshape(rows, cols)
    t = time_it(lambda: np.sqrt(np.square(s).reshape(rows, cols // group, group).sum(axis=2)))
    report(CRATE, "group_pnorm", "numpy", t, npv)
    del s

    # split-radix real FFT (issue 12): numpy's pocketfft on the same frames
    frames, n = size(100_000, 100), 512
    x = uniform(np, 12, frames * n, 2.0, -1.0).astype(np.float32).reshape(frames, n)
    t = time_it(lambda: np.fft.rfft(x, axis=1))
    report(CRATE, "split_radix_real_fft", "numpy", t, npv)
    del x

    # ComputePca (issue 12): the SVD route and the eigh route of the scatter matrix
    points, dim, keep = size(100_000, 100), 80, 40
    x = uniform(np, 13, points * dim, 2.0, -1.0).astype(np.float32).reshape(points, dim)

    def pca_svd():
        _, _, vt = np.linalg.svd(x, full_matrices=False)
        u = vt[:keep]
        return u, x @ u.T

    def pca_eigh():
        _, p = np.linalg.eigh(x.T @ x)
        u = p[:, ::-1][:, :keep].T
        return u, x @ u.T

    t = time_it(pca_svd)
    report(CRATE, "compute_pca", "numpy", t, npv)
    t = time_it(pca_eigh)
    report(CRATE, "compute_pca", "numpy_eigh", t, npv)


if __name__ == "__main__":
    main()
