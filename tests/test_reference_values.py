"""Reference values below the printed digit: headline quantities of the course, recomputed
here and compared with stored full-precision values at a relative 1e-7.

The chapters print these numbers rounded (test accuracy 0.908, log-likelihoods to 3 decimals),
so a bug that moves them by less than the rounding passes every chapter: a split one row late,
a log Z off by 1e-8 in the grid engine. A relative 1e-7 is far above run-to-run and
machine-to-machine noise (about 1e-13 here) and far below print rounding.

The course protocol (chapter "The data"): ``lib.first_rows_split``, RBF features on the
training points plus a bias; settings ``(s2, l)``: a narrow width (1, 0.1), the grid's best
(0.692, 0.479) and the course's teaching setting (1, 0.5).

To regenerate after a deliberate change of a result (never to make a failing test pass
without knowing why)::

    BLC_DATA_DIR=... .venv/bin/python tests/test_reference_values.py

prints the dictionary to paste over :data:`REFERENCE`.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import lib

RTOL = 1e-7

SETTINGS = {"narrow": (1.0, 0.1), "best": (0.692, 0.479), "course": (1.0, 0.5)}


def _exact_small_evidence(X_train, y_train, n=8, s2=1.0, n_nodes=30):
    """log Z of the first ``n`` training points' labels under the linear model, by a tensor
    Gauss-Hermite rule (chapter "The evidence", its exact check), and the largest
    ``|log Z_Laplace - log Z_exact|`` over all ``2**n`` labelings."""
    Phi = lib.linear_features(X_train[:n])
    t, q = np.polynomial.hermite_e.hermegauss(n_nodes)
    nodes = np.sqrt(s2) * np.array(list(itertools.product(t, repeat=3)))
    q_nodes = np.prod(list(itertools.product(q / q.sum(), repeat=3)), axis=1)
    a = nodes @ Phi.T
    labelings = np.array(list(itertools.product([0.0, 1.0], repeat=n)))
    loglik = labelings @ lib.log_sigmoid(a).T + (1 - labelings) @ lib.log_sigmoid(-a).T
    log_z_exact = np.log(np.exp(loglik) @ q_nodes)
    log_z_laplace = np.array([lib.fit_laplace(Phi, lab, s2).log_evidence for lab in labelings])
    observed = int(np.flatnonzero((labelings == y_train[:n]).all(axis=1))[0])
    return float(log_z_exact[observed]), float(np.abs(log_z_laplace - log_z_exact).max())


def compute() -> dict[str, float]:
    """Every reference quantity, computed afresh from the lab data."""
    from lib import fastgrid, hyper

    X, y = lib.load_lab_data()
    X_train, y_train, X_test, y_test = lib.first_rows_split(X, y)
    out = {
        "split: training rows": float(len(X_train)),
        "split: first test row x1": float(X_test[0, 0]),
        "split: first test row x2": float(X_test[0, 1]),
        "split: last training row x1": float(X_train[-1, 0]),
        "split: training ones": float(y_train.sum()),
    }
    for name, (s2, width) in SETTINGS.items():
        Phi = lib.rbf_features(X_train, X_train, width)
        Phi_test = lib.rbf_features(X_test, X_train, width)
        post = lib.fit_laplace(Phi, y_train, s2)
        test = lib.score_split(post, Phi_test, y_test)
        scores = {"log_evidence": post.log_evidence, "test_ll_map": test.ll_map,
                  "test_ll_pred": test.ll_pred, "test_accuracy": test.accuracy_map}
        for key in ("log_evidence", "test_ll_map", "test_ll_pred", "test_accuracy"):
            out[f"{name}: {key}"] = float(scores[key])
    g = hyper.evidence_gradient(X_train, y_train, *SETTINGS["best"])
    out["best: dlogZ/dlog s2"] = float(g.gradient[0])
    out["best: dlogZ/dlog l"] = float(g.gradient[1])
    opt = hyper.maximise_evidence(X_train, y_train, starts=[SETTINGS["course"]])
    out["optimum: s2"] = float(opt.s2)
    out["optimum: l"] = float(opt.width)
    out["optimum: log_evidence"] = float(opt.log_evidence)
    # MacKay's fixed point s2 = w.w / gamma (chapter evidence_opt), relative tolerance 1e-8,
    # started near it (rounded) to save iterations
    for width, s2 in ((0.1, 1.6), (0.479, 0.5)):
        Phi, w = lib.rbf_features(X_train, X_train, width), None
        for _ in range(200):
            post = lib.fit_laplace(Phi, y_train, s2, w0=w, max_iter=500)
            w, s2_old = post.w_map, s2
            s2 = float(w @ w) / lib.effective_parameters(post)
            if abs(s2 - s2_old) <= 1e-8 * s2_old:
                break
        else:
            raise lib.ConvergenceError(f"MacKay's update did not settle at l = {width}")
        out[f"MacKay s2 at l = {width}"] = s2
    grid = fastgrid.evidence_grid(X_train, y_train, X_test, y_test, [0.5, 2.0], [0.3, 1.0], n_jobs=1)
    for row in grid.itertuples():
        out[f"grid corner ({row.s2:g}, {row.width:g}): log_evidence"] = float(row.log_evidence)
    exact, err = _exact_small_evidence(X_train, y_train)
    out["8-point check: exact log Z"] = exact
    out["8-point check: max |log Z_Laplace - log Z_exact|"] = err
    return out


#: Generated once by ``python tests/test_reference_values.py`` (see the module docstring).
REFERENCE: dict[str, float] = {
    'split: training rows': 750.0,
    'split: first test row x1': 0.717233689684815,
    'split: first test row x2': -0.820467188179066,
    'split: last training row x1': -0.345811655541104,
    'split: training ones': 369.0,
    'narrow: log_evidence': -304.0133747157912,
    'narrow: test_ll_map': -0.3342624854786587,
    'narrow: test_ll_pred': -0.3530892664538874,
    'narrow: test_accuracy': 0.896,
    'best: log_evidence': -175.80570118796376,
    'best: test_ll_map': -0.21769377529772285,
    'best: test_ll_pred': -0.2201363668452758,
    'best: test_accuracy': 0.908,
    'course: log_evidence': -175.74350714425597,
    'course: test_ll_map': -0.21860307655468952,
    'course: test_ll_pred': -0.2206078552749515,
    'course: test_accuracy': 0.908,
    'best: dlogZ/dlog s2': 0.17158507988558114,
    'best: dlogZ/dlog l': 9.837098655181872,
    'optimum: s2': 0.8637909732135937,
    'optimum: l': 0.5457770742384569,
    'optimum: log_evidence': -175.14135800356965,
    'MacKay s2 at l = 0.1': 1.5725157670495487,
    'MacKay s2 at l = 0.479': 0.5289861950414637,
    'grid corner (0.5, 0.3): log_evidence': -188.1040988066677,
    'grid corner (2, 0.3): log_evidence': -189.00921832220286,
    'grid corner (0.5, 1): log_evidence': -221.17058311298757,
    'grid corner (2, 1): log_evidence': -195.87331209952725,
    '8-point check: exact log Z': -6.841451678248773,
    '8-point check: max |log Z_Laplace - log Z_exact|': 0.11480613576622556,
}


@pytest.fixture(scope="module")
def computed():
    return compute()


def test_every_quantity_is_stored(computed):
    assert sorted(computed) == sorted(REFERENCE)


@pytest.mark.parametrize("key", sorted(REFERENCE))
def test_reference_value(computed, key):
    assert computed[key] == pytest.approx(REFERENCE[key], rel=RTOL, abs=0.0), key


if __name__ == "__main__":
    import time

    start = time.perf_counter()
    values = compute()
    print("REFERENCE: dict[str, float] = {")
    for key, value in values.items():
        print(f"    {key!r}: {value!r},")
    print("}")
    print(f"# {time.perf_counter() - start:.1f} s")
