"""Grid search over the prior variance ``s2`` and the RBF width ``l`` (report section 3.3).

Preliminary version (per-point :func:`lib.laplace.fit_laplace`); the fast engine replaces it
with the same public signature.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._validate import as_labels, as_matrix, as_vector
from .features import rbf_features
from .laplace import fit_laplace
from .likelihood import average_log_likelihood_logits, sigmoid
from .predictive import map_logits, predictive_logits

COLUMNS = [
    "s2", "width", "log_evidence", "train_accuracy", "test_accuracy",
    "train_ll_map", "test_ll_map", "train_ll_pred", "test_ll_pred", "n_iter",
]


def _grid(values, name):
    v = as_vector(values, name)
    if v.size == 0 or np.any(v <= 0):
        raise ValueError(f"{name} must be a non-empty 1-D array of positive finite numbers")
    return v


def evidence_grid(X_train, y_train, X_test, y_test, s2_values, widths, *, n_jobs=1, progress=False):
    """Laplace fit at every ``(s2, l)``; one row per grid point (see module docstring)."""
    X_train = as_matrix(X_train, "X_train")
    y_train = as_labels(y_train, "y_train", length=X_train.shape[0])
    X_test = as_matrix(X_test, "X_test", n_cols=X_train.shape[1])
    y_test = as_labels(y_test, "y_test", length=X_test.shape[0])
    s2_values = _grid(s2_values, "s2_values")
    widths = _grid(widths, "widths")
    rows = []
    for l in widths:
        Ptr = rbf_features(X_train, X_train, l)
        Pte = rbf_features(X_test, X_train, l)
        w0 = None
        for s2 in np.sort(s2_values):
            post = fit_laplace(Ptr, y_train, s2, w0=w0, max_iter=500)
            w0 = post.w_map
            rows.append({
                "s2": s2, "width": l, "log_evidence": post.log_evidence,
                "train_accuracy": float(np.mean((map_logits(post, Ptr) > 0) == y_train)),
                "test_accuracy": float(np.mean((map_logits(post, Pte) > 0) == y_test)),
                "train_ll_map": average_log_likelihood_logits(map_logits(post, Ptr), y_train),
                "test_ll_map": average_log_likelihood_logits(map_logits(post, Pte), y_test),
                "train_ll_pred": average_log_likelihood_logits(predictive_logits(post, Ptr), y_train),
                "test_ll_pred": average_log_likelihood_logits(predictive_logits(post, Pte), y_test),
                "n_iter": post.n_iter,
            })
    return pd.DataFrame(rows, columns=COLUMNS)
