"""Golden values for `compute_pca` (Kaldi's ComputePca) in `src/pca.rs`, computed by
numpy's SVD route: for data X (N x D, rows are points, not centred),
X = W diag(s) Vt, the principal directions are the rows of Vt, the scatter eigenvalues
are s**2, and the projections are X Vt[:G].T. Run from this folder:

    python -m venv venv && venv/bin/pip install numpy
    venv/bin/python gen_pca_goldens.py

It writes pca_goldens.txt, one case a line:
`pca N D G : X : eigenvalues : U : A`, matrices row-major, numbers in `repr` form.
Eigenvalues are all min(N, D) of them, largest first; U is G x D (the first G rows of
Vt); A is N x G. Directions are defined up to sign: the test compares them after making
each row's largest-magnitude element positive (and flips A's columns to match).
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def fmt(xs):
    return " ".join(repr(float(x)) for x in np.asarray(xs).reshape(-1))


def main():
    rng = np.random.default_rng(20261201)
    lines = []
    # (N, D, G): conventional (D < N), inner-product (D >= N), and a tall thin case
    for n, d, g in [(20, 6, 4), (40, 10, 10), (5, 9, 3), (7, 7, 5), (200, 3, 2)]:
        # distinct variances per direction so the eigenvalues are well separated
        scales = np.linspace(3.0, 0.5, d)
        x = rng.standard_normal((n, d)) * scales
        _, s, vt = np.linalg.svd(x, full_matrices=False)
        u = vt[:g]
        a = x @ u.T
        lines.append(
            f"pca {n} {d} {g} : {fmt(x)} : {fmt(s**2)} : {fmt(u)} : {fmt(a)}"
        )
    with open(os.path.join(HERE, "pca_goldens.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
