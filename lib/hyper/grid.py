"""Grid search over the prior variance ``s2`` and the RBF width ``l`` (book chapter "The grid
search"; report section 3.3, figures 4-5).

**A grid point** ``(s2, l)`` is one Laplace fit and its scores, nothing else:

1. the design ``Phi = rbf_features(X_train, X_train, l)`` (centres = the N training inputs,
   bias column: M = N + 1 weights) and ``Phi_test = rbf_features(X_test, X_train, l)``;
2. ``posterior = fit_laplace(Phi, y_train, s2, w0=...)``: the MAP by Newton's method, started
   from the MAP at the previous (smaller) ``s2`` of the same width (a warm start, which
   changes the number of iterations, not the answer), and the Laplace approximation there
   (:func:`lib.laplace.fit_laplace`);
3. ``_score_posterior(posterior, Phi, y_train, Phi_test, y_test)``: the Laplace log evidence
   and the accuracies and average log-likelihoods of the MAP and probit-predictive
   classifiers on both splits (:func:`lib.scores._score_posterior`: the log evidence and
   :func:`lib.scores.score_split` on both splits).

:func:`reference_rows` does exactly that, point by point. This module is the definition only:
running a whole grid fast (:func:`lib.fastgrid.evidence_grid`: shared decompositions,
warm-started chord steps, parallel tasks, a disk cache) is the engine's job, equal to the
reference to 1e-8; the book's appendix "How the grid is computed fast" derives it.
"""
from __future__ import annotations

import numpy as np

from lib._validate import as_train_test, as_vector, positive_scalar, prior_values
from lib._validate import width as check_width
from lib.scores import _score_posterior
from lib.features import _rbf_features
from lib.laplace import NEWTON_TOL, _fit_laplace
from lib.likelihood import LOGISTIC

#: Columns of a grid's table (:func:`reference_rows`, :func:`lib.fastgrid.evidence_grid`), in
#: order.
COLUMNS = ("s2", "width", "log_evidence", "train_accuracy", "test_accuracy",
           "train_ll_map", "test_ll_map", "train_ll_pred", "test_ll_pred", "n_iter")

#: Newton iterations allowed per grid point in the reference.
MAX_ITER = 500


def grid_point(Phi_train, y_train, Phi_test, y_test, s2, *, w0=None):
    """One grid point: the Laplace fit at prior variance ``s2`` and its scores.

    ``Phi_train`` (N, M) is the training design (RBF features of width ``l`` on the training
    centres, with bias), ``y_train`` (N,), ``Phi_test`` (N_test, M), ``y_test`` (N_test,); ``w0``
    (M,) Newton's starting point (the MAP of a neighbouring point: a warm start). Returns the
    ``LaplacePosterior`` and its scores, a dict (:func:`lib.scores._score_posterior`: the log
    evidence, :func:`lib.scores.score_split` on both splits).
    """
    Phi_train, y_train, Phi_test, y_test = as_train_test(Phi_train, y_train, Phi_test, y_test, "Phi")
    s2 = positive_scalar(s2, "s2")
    w0 = None if w0 is None else as_vector(w0, "w0", length=Phi_train.shape[1])
    return _grid_point(Phi_train, y_train, Phi_test, y_test, s2, w0)


def _grid_point(Phi_train, y_train, Phi_test, y_test, s2, w0):
    """:func:`grid_point` on checked arguments (no checks)."""
    posterior = _fit_laplace(Phi_train, y_train, s2, w0, NEWTON_TOL, MAX_ITER, LOGISTIC)
    return posterior, _score_posterior(posterior, Phi_train, y_train, Phi_test, y_test)


def reference_rows(X_train, y_train, X_test, y_test, s2_values, width):
    """The grid points of one width, point by point (the reference; slow): the prior variances
    in ascending order, each fit warm-started from the previous MAP. One row (a dict) per ``s2``,
    columns :data:`COLUMNS` (``n_iter``: Newton iterations of :func:`lib.laplace.fit_laplace`)."""
    X_train, y_train, X_test, y_test = as_train_test(X_train, y_train, X_test, y_test)
    s2_values = prior_values(s2_values, "s2_values")
    width = check_width(width, "width")
    Phi_train = _rbf_features(X_train, X_train, width)
    Phi_test = _rbf_features(X_test, X_train, width)
    rows, w = [], None
    for s2 in np.sort(s2_values):
        posterior, scores = _grid_point(Phi_train, y_train, Phi_test, y_test, float(s2), w)
        w = posterior.w_map
        rows.append({"s2": float(s2), "width": float(width), **scores, "n_iter": posterior.n_iter})
    return rows
