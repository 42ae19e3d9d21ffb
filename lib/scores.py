"""Scores: how good a classifier is, and how good a model is (book chapters "The model
evidence" and "The probit predictive"; report tables 1-5 and 7-9).

Notation of the book: ``L`` the log-likelihood, ``Psi(w) = L(w) - w.w / (2 s2)`` the log
posterior up to a constant, ``A = I / s2 + Phi^T W Phi`` the posterior precision with Cholesky
factor ``L_chol``, ``Z`` the evidence and ``log Z`` the log evidence.

Three kinds of score:

* **classification metrics** of any probabilities: decisions, accuracy, the row-normalised
  confusion matrix (:func:`confusion_matrix`, lib's one count: cross-tabulating two
  classifiers' decisions is the confusion matrix of one against the other's labels); the
  average log-likelihood is :func:`lib.likelihood.average_log_likelihood`;
* **evidence criteria** on the training data: the number of well-determined weights
  ``gamma = M - tr(A^{-1}) / s2`` (the Laplace log evidence and its four terms are
  :attr:`lib.laplace.LaplacePosterior.evidence_terms`);
* **the scores of a fit**, :func:`score_split`, lib's one scorer: a posterior on a labelled
  set, for the plug-in MAP classifier ``s(phi.w_MAP)`` and the probit-approximated predictive
  ``s(rho mu_a)``. The grid's rows (:mod:`lib.hyper.grid`) are built from it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.linalg import solve_triangular

from lib._validate import as_design_labels, as_labels, as_probabilities, fraction, instance
from lib.laplace import LaplacePosterior
from lib.likelihood import _probit_logits, label_log_probs
from lib.predictive import _activation_moments


def predict_labels(p, threshold: float = 0.5) -> np.ndarray:
    """Hard decisions ``1[p > threshold]`` from probabilities ``p``, shape (N,)."""
    return (as_probabilities(p, "p") > fraction(threshold, "threshold")).astype(int)


def accuracy(p, y) -> float:
    """Fraction of labels ``y`` (N,) of 0/1 matched by the decisions ``p > 0.5``, ``p`` (N,) the
    predicted ``P(y = 1)``."""
    yhat = predict_labels(p)
    y = as_labels(y, "y", length=yhat.shape[0])
    return float(np.mean(yhat == y))


def confusion_matrix(p, y) -> np.ndarray:
    """Row-normalised confusion matrix ``C[i, j] = P(yhat = j | y = i)``, shape (2, 2), of ``p``
    and ``y`` as in :func:`accuracy`.

    Rows: true label 0, 1; columns: predicted label 0, 1. A class absent from ``y``
    gives a row of NaN. With ``y = predict_labels(q)``, the decisions of a second
    classifier, it cross-tabulates the two classifiers' decisions (the identity when they
    always agree).
    """
    yhat = predict_labels(p)
    return _row_normalised_counts(as_labels(y, "y", length=yhat.shape[0]), yhat)


def _row_normalised_counts(rows, cols) -> np.ndarray:
    """``C[i, j]`` = fraction of the points with ``rows == i`` that have ``cols == j`` (labels
    0/1, no checks); a row with no points is NaN. The one count behind :func:`confusion_matrix`
    and :class:`SplitScores`."""
    counts = np.zeros((2, 2))
    np.add.at(counts, (np.asarray(rows, dtype=int), np.asarray(cols, dtype=int)), 1.0)
    totals = counts.sum(1, keepdims=True)
    with np.errstate(invalid="ignore"):
        return counts / totals


# --------------------------------------------------------------------------- evidence criteria


def effective_parameters(posterior: LaplacePosterior) -> float:
    """Number of well-determined weights ``gamma = M - tr(A^{-1}) / s2`` (MacKay 1992).

    With ``nu_i`` the eigenvalues of the data term ``Phi^T W Phi`` of the precision,
    ``gamma = sum_i nu_i / (nu_i + 1/s2)``: each direction counts 1 when the data pin it down
    (``nu_i >> 1/s2``) and 0 when the prior does. ``tr(A^{-1})`` is ``|L^{-1}|_F^2`` from the
    Cholesky factor ``L``, no explicit inverse. ``0 <= gamma <= M``."""
    post = instance(posterior, "posterior", LaplacePosterior)
    M = post.n_weights
    Linv = solve_triangular(post.chol, np.eye(M), lower=True)   # A^{-1} = L^{-T} L^{-1}
    if np.ndim(post.s2):   # one prior variance per weight: M - tr(S^{-1} A^{-1})
        return float(M - np.sum(np.sum(Linv**2, axis=0) / post.s2))
    return float(M - np.sum(Linv**2) / post.s2)


# --------------------------------------------------------------------------- predictive scores


@dataclass(frozen=True)
class SplitScores:
    """Scores of the MAP and predictive classifiers on one labelled set.

    ``ll_map``, ``ll_pred``: average log-likelihood of the labels under ``s(phi.w_MAP)`` and
    ``s(rho mu_a)``; ``accuracy_map``, ``accuracy_pred``: fraction of labels matched by the
    decisions ``p > 1/2``; ``confusion_map``, ``confusion_pred`` (2, 2): row-normalised
    confusion matrices ``P(yhat = j | y = i)``; ``agreement`` (2, 2): cross-tabulation of the
    MAP (rows) and predictive (columns) decisions, the confusion matrix of the predictive
    against the MAP's decisions (:func:`confusion_matrix`).
    """

    ll_map: float
    ll_pred: float
    accuracy_map: float
    accuracy_pred: float
    confusion_map: np.ndarray
    confusion_pred: np.ndarray
    agreement: np.ndarray


def score_split(posterior: LaplacePosterior, Phi, y) -> SplitScores:
    """Score the MAP and probit-predictive classifiers on one labelled set: lib's one scorer.

    Each classifier is scored with the likelihood the posterior was fitted with
    (:attr:`lib.laplace.LaplacePosterior.likelihood`); the log-likelihoods are computed stably
    from the logits (:func:`lib.likelihood.label_log_probs`). ``Phi`` (N, M) is the set's
    design (RBF features on the *training* centres), ``y`` (N,) its labels 0/1.
    """
    post = instance(posterior, "posterior", LaplacePosterior)
    return _score_split(post, *as_design_labels(Phi, y, ("Phi", "y"), n_cols=post.n_weights))


def _score_split(post: LaplacePosterior, Phi, y) -> SplitScores:
    """:func:`score_split` on a checked posterior, design and labels (no checks)."""
    mu, var = _activation_moments(post, Phi)
    lik = post.likelihood                           # scored with the likelihood it was fitted with
    a_map = lik.logits(mu)                          # mu itself for the logistic likelihood
    a_pred = lik.predictive_logits(mu, var)         # rho(var) mu for the logistic likelihood
    p_map, p_pred = expit(a_map), expit(a_pred)
    return SplitScores(
        ll_map=float(np.mean(label_log_probs(a_map, y))),
        ll_pred=float(np.mean(label_log_probs(a_pred, y))),
        accuracy_map=float(np.mean((p_map > 0.5) == (y == 1))),
        accuracy_pred=float(np.mean((p_pred > 0.5) == (y == 1))),
        confusion_map=_row_normalised_counts(y, p_map > 0.5),
        confusion_pred=_row_normalised_counts(y, p_pred > 0.5),
        agreement=_row_normalised_counts(p_map > 0.5, p_pred > 0.5),
    )


def _score_posterior(post, Phi_train, y_train, Phi_test, y_test) -> dict[str, float]:
    """A grid row's scores of a posterior fitted on ``(Phi_train, y_train)``: its log evidence
    and :func:`score_split`'s headline scores on both sets (no checks; :mod:`lib.hyper.grid`),
    the accuracies those of the MAP decisions, which coincide with the predictive's (``rho > 0``
    keeps the sign of ``mu_a``)."""
    tr = _score_split(post, Phi_train, y_train)
    te = _score_split(post, Phi_test, y_test)
    return {"log_evidence": float(post.log_evidence),
            "train_accuracy": tr.accuracy_map, "test_accuracy": te.accuracy_map,
            "train_ll_map": tr.ll_map, "test_ll_map": te.ll_map,
            "train_ll_pred": tr.ll_pred, "test_ll_pred": te.ll_pred}


def _activation_scores(mu, var, y) -> dict[str, float]:
    """The logistic fit's :func:`score_split` headline scores from the activations' moments
    (no checks: :mod:`lib.fastgrid`'s hot path, at every grid point): ``accuracy`` of the
    decisions ``s(mu) > 1/2`` (the predictive's are the same: ``rho > 0``), ``ll_map`` and
    ``ll_pred``, the average log-likelihoods under ``s(mu)`` and ``s(rho(var) mu)`` (book eq.
    ``eq-probit``)."""
    return {"accuracy": float(np.mean((expit(mu) > 0.5) == (y == 1))),
            "ll_map": float(np.mean(label_log_probs(mu, y))),
            "ll_pred": float(np.mean(label_log_probs(_probit_logits(mu, var), y)))}
