"""Cost of the three Gaussian approximations (issue 40): ``python benchmarks/approx.py``.

The chapter "Beyond Laplace" fits the Laplace approximation (:func:`lib.fit_laplace`), the
Jaakkola-Jordan variational bound (:func:`lib.approx.fit_vb`) and expectation propagation
(:func:`lib.approx.fit_ep`, sequential and parallel with damping 0.5) on three problems: the lab
data's linear classifier (750 points, 3 weights, s2 = 1), Pima (200 training rows, 8 weights,
s2 = 10) and the course's full radial-basis model (750 points, 751 weights, l = 0.5, s2 = 1; no
sequential EP: 751 one-site updates a sweep in Python). The baseline is Laplace, timed in the
same process on the same problem. Each fit is timed by ``time.process_time`` (CPU seconds of
this process), the best of ``--repeat`` runs; run it with one BLAS thread
(``OPENBLAS_NUM_THREADS=1``, as ``make bench`` does).

Prints one JSON line per problem::

    {"problem": ..., "N": ..., "M": ..., "laplace_seconds": ...,
     "VB": {"seconds": ..., "iterations": ..., "ratio_to_laplace": ...}, "EP sequential": ..., ...}
"""
from __future__ import annotations

import argparse
import json
import time

import lib
from lib import approx

FITS = {
    "VB": lambda Phi, y, s2: approx.fit_vb(Phi, y, s2),
    "EP sequential": lambda Phi, y, s2: approx.fit_ep(Phi, y, s2),
    "EP parallel": lambda Phi, y, s2: approx.fit_ep(Phi, y, s2, schedule="parallel",
                                                    damping=0.5),
}


def best_time(fit, repeat):
    """(the fit, the least CPU seconds of ``repeat`` runs)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        result = fit()
        best = min(best, time.process_time() - start)
    return result, best


def problems():
    X, y = lib.load_lab_data()
    X_train, y_train, _, _ = lib.first_rows_split(X, y)
    Xp, yp, _, _ = lib.data.load_pima().split()
    return {
        "linear": (lib.linear_features(X_train), y_train, 1.0, tuple(FITS)),
        "Pima": (Xp, yp, 10.0, tuple(FITS)),
        "full RBF": (lib.rbf_features(X_train, X_train, 0.5), y_train, 1.0,
                     ("VB", "EP parallel")),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs per fit (the best is kept)")
    args = parser.parse_args(argv)
    for name, (Phi, y, s2, methods) in problems().items():
        laplace, base = best_time(lambda: lib.fit_laplace(Phi, y, s2), args.repeat)
        row = {"problem": name, "N": int(Phi.shape[0]), "M": int(Phi.shape[1]),
               "laplace_seconds": round(base, 4), "laplace_iterations": laplace.n_iter}
        for method in methods:
            fit, seconds = best_time(lambda: FITS[method](Phi, y, s2), args.repeat)
            assert fit.converged, (name, method)
            row[method] = {"seconds": round(seconds, 4), "iterations": fit.n_iter,
                           "ratio_to_laplace": round(seconds / base, 1)}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
