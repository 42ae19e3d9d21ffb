"""Classification metrics (report tables 2-5, 7-9)."""
from __future__ import annotations

import numpy as np

from ._validate import as_labels, as_probabilities, as_vector
from .likelihood import average_log_likelihood_logits, label_log_probs, sigmoid
from .predictive import moderate


def predict_labels(p, threshold: float = 0.5) -> np.ndarray:
    """Hard decisions ``1[p > threshold]`` from probabilities ``p``, shape (N,)."""
    return (as_probabilities(p, "p") > threshold).astype(int)


def accuracy(p, y) -> float:
    """Fraction of labels ``y`` matched by the decisions ``p > 0.5``.

    Parameters
    ----------
    p : array_like, shape (N,)
        Predicted ``P(y = 1)``.
    y : array_like, shape (N,)
        Labels 0/1.
    """
    yhat = predict_labels(p)
    y = as_labels(y, "y", length=yhat.shape[0])
    return float(np.mean(yhat == y))


def confusion_matrix(p, y) -> np.ndarray:
    """Row-normalised confusion matrix ``C[i, j] = P(yhat = j | y = i)``.

    Parameters
    ----------
    p : array_like, shape (N,)
        Predicted ``P(y = 1)``.
    y : array_like, shape (N,)
        Labels 0/1.

    Returns
    -------
    ndarray, shape (2, 2)
        Rows: true label 0, 1; columns: predicted label 0, 1. A class absent from ``y``
        gives a row of NaN.
    """
    yhat = predict_labels(p)
    y = as_labels(y, "y", length=yhat.shape[0]).astype(int)
    counts = np.zeros((2, 2))
    np.add.at(counts, (y, yhat), 1.0)
    rows = counts.sum(1, keepdims=True)
    with np.errstate(invalid="ignore"):
        return counts / rows


def logit_scores(a, y) -> tuple[float, float, np.ndarray]:
    """Average log-likelihood, accuracy and confusion matrix of a classifier given by logits.

    Parameters
    ----------
    a : array_like, shape (N,)
        Activations (logits), ``P(y = 1) = s(a)``.
    y : array_like, shape (N,)
        Labels 0/1.

    Returns
    -------
    ll : float
        Average log-likelihood, computed stably from the logits.
    acc : float
        Accuracy of the decisions ``s(a) > 1/2``.
    confusion : ndarray, shape (2, 2)
        Row-normalised confusion matrix (:func:`confusion_matrix`).
    """
    a = as_vector(a, "a")
    y = as_labels(y, "y", length=a.shape[0])
    p = sigmoid(a)
    return average_log_likelihood_logits(a, y), accuracy(p, y), confusion_matrix(p, y)


def activation_scores(mu, var, y) -> dict[str, float]:
    """Accuracy and average log-likelihoods of the MAP and probit-predictive classifiers.

    From the activations' posterior means ``mu = phi.w_MAP`` and variances
    ``var = phi^T A^{-1} phi`` (book eq. ``eq-activation``): the MAP classifier predicts
    ``s(mu)``, the probit predictive ``s(rho(var) mu)`` (book eq. ``eq-probit``). Both
    log-likelihoods are computed stably from the logits (:func:`lib.likelihood.label_log_probs`).

    No input checks: this runs at every grid point (:mod:`lib.grid_engine`) on checked arrays;
    :func:`logit_scores` and :func:`lib.evaluate.score_split` are the checked entry points.

    Parameters
    ----------
    mu : ndarray, shape (N,)
    var : ndarray, shape (N,)
        Non-negative.
    y : ndarray, shape (N,)
        Labels 0/1.

    Returns
    -------
    dict of str to float
        ``accuracy`` of the MAP decisions ``s(mu) > 1/2`` (the predictive's are the same:
        ``rho > 0`` keeps the sign of ``mu``); ``ll_map`` and ``ll_pred``, the average
        log-likelihoods of the labels under ``s(mu)`` and ``s(rho mu)``.
    """
    return {
        "accuracy": float(np.mean((sigmoid(mu) > 0.5) == (y == 1))),
        "ll_map": float(np.mean(label_log_probs(mu, y))),
        "ll_pred": float(np.mean(label_log_probs(moderate(mu, var), y))),
    }
