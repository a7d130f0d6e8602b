"""Golden values for `OptimizeLbfgs` in `src/optimization.rs`: seeded random convex
quadratics f(x) = 0.5 x^T S x - v^T x (S symmetric positive definite), minimised by
scipy.optimize.minimize (L-BFGS-B, tight tolerances), with the closed form S^{-1} v beside.
Run from this folder:

    python -m venv venv && venv/bin/pip install numpy scipy
    venv/bin/python gen_lbfgs_goldens.py

It writes lbfgs_goldens.txt, one case a line:
`quad N : S : v : x0 : scipy_x : scipy_f : closed_x`, S row-major, numbers in `repr` form.
"""

import os

import numpy as np
import scipy.optimize

HERE = os.path.dirname(os.path.abspath(__file__))


def fmt(xs):
    return " ".join(repr(float(x)) for x in np.asarray(xs).reshape(-1))


def main():
    rng = np.random.default_rng(20261201)
    lines = []
    for n in [1, 3, 8, 20]:
        q = rng.standard_normal((n, n))
        s = q @ q.T + 0.5 * n * np.eye(n)
        v = rng.standard_normal(n)
        x0 = rng.standard_normal(n)

        def f(x):
            return 0.5 * x @ s @ x - v @ x

        def g(x):
            return s @ x - v

        res = scipy.optimize.minimize(
            f,
            x0,
            jac=g,
            method="L-BFGS-B",
            options={"gtol": 1e-13, "ftol": 1e-16, "maxiter": 10000},
        )
        closed = np.linalg.solve(s, v)
        lines.append(
            f"quad {n} : {fmt(s)} : {fmt(v)} : {fmt(x0)} : {fmt(res.x)} : "
            f"{fmt([res.fun])} : {fmt(closed)}"
        )
    with open(os.path.join(HERE, "lbfgs_goldens.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
