"""Speed of the probit evidence search (issue 12): ``python benchmarks/evidence_search.py``.

The book chapter "The probit likelihood" maximises the Laplace log evidence of the probit RBF
model over ``(alpha2, beta2, l)`` by L-BFGS-B with the exact gradient of
:func:`lib.hyper.evidence_gradient` (E1-E9). The baseline, run in the same process on
the same data and from the same start, is the same L-BFGS-B on the same objective with
central-difference gradients (step ``1e-4`` in log space, six further Laplace fits per
gradient, each warm-started from the last mode): what the chapter did before the gradient was
extended to the probit likelihood and the bias prior.

Prints one JSON line::

    {"exact_seconds": ..., "fd_seconds": ..., "speedup": ..., "exact_fits": ..., "fd_fits": ...,
     "log_evidence_diff": ..., "max_rel_hyper_diff": ...}

``speedup`` = ``fd_seconds / exact_seconds``; ``*_fits`` count Laplace fits; the last two
compare the optima the two searches reach.
"""
from __future__ import annotations

import json
import time

import numpy as np
from scipy.optimize import minimize

import lib
from lib.hyper import maximise_evidence_bias
from lib.features import rbf_features
from lib.laplace import bias_prior_variances, fit_laplace
from lib.models.probit import PROBIT

BOX = (1e-3, 1e3)
WIDTH_BOX = (1e-2, 1e1)
START = (0.1, 0.55, 0.1)            # (alpha2, l, beta2), near the logistic optimum rescaled


def finite_difference_search(X, y, start, step=1e-4):
    """L-BFGS-B on ``log(alpha2, l, beta2)`` with central differences of ``log Z``."""
    state = {"w": None, "fits": 0, "best": (-np.inf, None)}

    def log_z(theta):
        alpha2, width, beta2 = np.exp(theta)
        Phi = rbf_features(X, X, width)
        post = fit_laplace(Phi, y, bias_prior_variances(alpha2, beta2, Phi.shape[1]),
                           w0=state["w"], likelihood=PROBIT, max_iter=500)
        state["w"], state["fits"] = post.w_map, state["fits"] + 1
        if post.log_evidence > state["best"][0]:
            state["best"] = (post.log_evidence, np.exp(theta))
        return post.log_evidence

    def objective(theta):
        grad = [(log_z(theta + step * e) - log_z(theta - step * e)) / (2 * step) for e in np.eye(3)]
        return -log_z(theta), -np.array(grad)

    bounds = [tuple(np.log(BOX)), tuple(np.log(WIDTH_BOX)), tuple(np.log(BOX))]
    minimize(objective, np.log(start), jac=True, method="L-BFGS-B", bounds=bounds,
             options={"gtol": 1e-6, "ftol": 1e-12})
    return state["best"], state["fits"]


def main() -> None:
    X, y = lib.load_lab_data()
    X_train, y_train, _, _ = lib.first_rows_split(X, y)

    t0 = time.perf_counter()
    exact = maximise_evidence_bias(X_train, y_train, starts=[START], s2_bounds=BOX,
                                   width_bounds=WIDTH_BOX, bias_s2_bounds=BOX, likelihood=PROBIT)
    t1 = time.perf_counter()
    (fd_log_z, fd_hyper), fd_fits = finite_difference_search(X_train, y_train, START)
    t2 = time.perf_counter()

    ours = np.array([exact.s2, exact.width, exact.bias_s2])
    print(json.dumps({
        "exact_seconds": round(t1 - t0, 2),
        "fd_seconds": round(t2 - t1, 2),
        "speedup": round((t2 - t1) / (t1 - t0), 2),
        "exact_fits": exact.n_evaluations,
        "fd_fits": fd_fits,
        "log_evidence_diff": float(f"{exact.log_evidence - fd_log_z:.2e}"),
        "max_rel_hyper_diff": float(f"{np.max(np.abs(ours / fd_hyper - 1)):.2e}"),
    }))


if __name__ == "__main__":
    main()
