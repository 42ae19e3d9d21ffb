"""Bernoulli likelihood of the logistic model (book chapter "MAP"; report appendix A,
eqs. 1-3, and the likelihood part of the main text's eq. 5).

With activations ``a = Phi w``, ``sigma`` the logistic function and labels ``y in {0, 1}``::

    L(w)      = sum_n  y_n log sigma(a_n) + (1 - y_n) log sigma(-a_n)    (book eq. map-loglik)
    grad L(w) = Phi^T (y - sigma(a))                                     (book eq. map-grad-lik)
    hess L(w) = -Phi^T W Phi,      W = diag(sigma(a) (1 - sigma(a)))    (book eq. map-precision)

(the ML chapter writes the first two as book eqs. ``ml-loglik`` and ``ml-grad``).

``log sigma(a) = -log(1 + exp(-a))`` is evaluated with ``logaddexp``, so the term the report
writes as ``log(1 - sigma(a))`` (= ``log sigma(-a)``) never becomes ``log 0``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import expit

from lib._validate import as_labels, as_probabilities, as_vector, as_weights_design_labels, real_values


def sigmoid(a) -> np.ndarray:
    """Logistic function ``sigma(a) = 1 / (1 + exp(-a))``, overflow-free (``scipy.special.expit``)."""
    return expit(real_values(a, "a"))


def log_sigmoid(a) -> np.ndarray:
    """``log sigma(a) = -log(1 + exp(-a))``, stable for every real ``a``."""
    return _log_sigmoid(real_values(a, "a"))


def _log_sigmoid(a) -> np.ndarray:
    """:func:`log_sigmoid` without the check, for lib's hot paths on checked arrays."""
    return -np.logaddexp(0.0, -a)


def label_log_probs(a, y) -> np.ndarray:
    """Per-point log-likelihoods ``log sigma(+-a_n)``, the sign ``+`` where ``y_n = 1`` (no checks).

    ``y log sigma(a) + (1 - y) log sigma(-a)`` is ``log sigma(a)`` for ``y = 1`` and
    ``log sigma(-a)`` for ``y = 0``, so each term is one stable log-sigmoid (never ``log 0``).
    Every log-likelihood in :mod:`lib` (sums and averages, from weights or from logits) is
    built on this function. ``a`` (N,) activations (logits), ``y`` (N,) labels 0/1; returns (N,).
    """
    return _log_sigmoid(np.where(y == 1, a, -a))


def log_likelihood_from_activations(a, y) -> float:
    """``L = sum_n log sigma(+-a_n)`` from activations ``a = Phi w`` and labels ``y`` (no checks).

    Book eq. ``map-loglik``, the sum of :func:`label_log_probs` (``a``, ``y`` (N,) as there); a
    hot path (Newton's method, the grid search), called on arrays its callers have checked.
    """
    return float(np.sum(label_log_probs(a, y)))


def log_likelihood(w, Phi, y) -> float:
    """Log-likelihood ``L(w)`` (book eq. ``map-loglik``; report appendix A, eq. 2), a float, of
    weights ``w`` (M,), design ``Phi`` (N, M) and labels ``y`` (N,) of 0/1."""
    w, Phi, y = as_weights_design_labels(w, Phi, y)
    return log_likelihood_from_activations(Phi @ w, y)


def gradient(w, Phi, y) -> np.ndarray:
    """Gradient ``Phi^T (y - sigma(Phi w))`` of the log-likelihood (book eq. ``map-grad-lik``;
    report appendix A, eq. 3), shape (M,); arguments as :func:`log_likelihood`'s."""
    w, Phi, y = as_weights_design_labels(w, Phi, y)
    return Phi.T @ (y - expit(Phi @ w))


def hessian(w, Phi, y) -> np.ndarray:
    """Hessian ``-Phi^T W Phi``, ``W = diag(sigma_n (1 - sigma_n))``, of the log-likelihood, shape
    (M, M), arguments as :func:`log_likelihood`'s: the data part of book eq. ``map-precision``
    and the report's eq. 5 (with a Hessian's sign: the precision is ``I / s2`` minus this).
    Vectorised: the weights ``W`` scale the rows of ``Phi`` before one matrix product."""
    w, Phi, y = as_weights_design_labels(w, Phi, y)
    return -(Phi.T * logistic_curvature(Phi @ w)) @ Phi


def average_log_likelihood(p, y) -> float:
    """Average log-probability ``(1/N) sum_n y_n log p_n + (1 - y_n) log(1 - p_n)`` of labels
    ``y`` (N,) of 0/1 under predicted ``P(y = 1)`` ``p`` (N,) in ``[0, 1]``: a float, ``-inf``
    only if a label was predicted with probability exactly 0."""
    p = as_probabilities(p, "p")
    y = as_labels(y, "y", length=p.shape[0])
    with np.errstate(divide="ignore"):
        return float(np.mean(np.where(y == 1, np.log(p), np.log1p(-p))))


def average_log_likelihood_logits(a, y) -> float:
    """Average log-likelihood from activations (logits) ``a`` (N,), with ``P(y=1) = sigma(a)``,
    of labels ``y`` (N,) of 0/1: the stable twin of :func:`average_log_likelihood`, which never
    forms ``1 - sigma(a)`` and so stays finite where a probability would round to 0 or 1."""
    a = as_vector(a, "a")
    y = as_labels(y, "y", length=a.shape[0])
    log_p = label_log_probs(a, y)
    scale = max(1.0, float(np.max(-log_p)))   # the sum of N terms near -1e308 overflows: scale first
    return float(np.mean(log_p / scale) * scale) if scale > 1e300 else float(np.mean(log_p))


@dataclass(frozen=True)
class Likelihood:
    """A Bernoulli likelihood as per-point functions of the activations ``a = Phi w``.

    What :func:`lib.laplace.fit_laplace` needs of it (labels ``y in {0, 1}``):
    ``log_likelihood(a, y)``, ``L = sum_n log p(y_n | a_n)`` (a float); ``gradient(a, y)``,
    ``d log p(y_n | a_n) / da_n`` per point, so ``grad L(w) = Phi^T gradient(a, y)``;
    ``curvature(a, y)``, ``W_nn = -d^2 log p(y_n | a_n) / da_n^2`` per point, so
    ``hess L(w) = -Phi^T W Phi``; ``curvature_derivative(a, y)``,
    ``dW_nn / da_n = -d^3 log p(y_n | a_n) / da_n^3`` per point, what the gradient of the
    Laplace evidence in the hyper-parameters needs (:mod:`lib.hyper.gradient`, eq. E2).

    What scoring a fitted posterior needs, so that a posterior is always scored with the
    likelihood it was fitted with (:attr:`lib.laplace.LaplacePosterior.likelihood`):
    ``logits(a)``, the log-odds ``log p(y=1 | a) - log p(y=0 | a)`` of the plug-in classifier
    at ``a``; ``predictive_logits(mu, var)``, the log-odds of the predictive ``E[p(y=1 | a)]``,
    ``a ~ N(mu, var)``: the probit approximation for the logistic likelihood, exact for the
    probit one.

    No input checks (hot paths). :data:`LOGISTIC` is the book's model; the probit (erfc)
    likelihood of Barrett's note is :data:`lib.models.probit.PROBIT`.
    """

    name: str
    log_likelihood: Callable[[np.ndarray, np.ndarray], float]
    gradient: Callable[[np.ndarray, np.ndarray], np.ndarray]
    curvature: Callable[[np.ndarray, np.ndarray], np.ndarray]
    curvature_derivative: Callable[[np.ndarray, np.ndarray], np.ndarray]
    logits: Callable[[np.ndarray], np.ndarray]
    predictive_logits: Callable[[np.ndarray, np.ndarray], np.ndarray]


def as_likelihood(value, name: str = "likelihood") -> Likelihood:
    """``value`` if it is a :class:`Likelihood`, else a TypeError naming ``name``."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (the argument's name), got {type(name).__name__}")
    if not isinstance(value, Likelihood):
        raise TypeError(f"{name} must be a lib.likelihood.Likelihood, got {value!r}")
    return value


def logistic_curvature(a) -> np.ndarray:
    """The logistic likelihood's curvature diagonal ``W_nn = sigma(a_n) (1 - sigma(a_n))`` (no
    checks), book eq. ``map-precision``: the one place this formula is written for lib's core
    (:func:`hessian`, :data:`LOGISTIC`, :mod:`lib.laplace`, :mod:`lib.hyper.gradient`);
    :mod:`lib.fastgrid` uses the equal form ``sigma(a) sigma(-a)``, which does not round to
    zero at large ``|a|``."""
    s = expit(a)
    return s * (1.0 - s)


def _logistic_gradient(a, y) -> np.ndarray:
    return y - expit(a)


def _logistic_curvature(a, y) -> np.ndarray:
    return logistic_curvature(a)


def _logistic_curvature_derivative(a, y) -> np.ndarray:
    # dW/da = sigma (1 - sigma)(1 - 2 sigma), the same for both labels
    return logistic_curvature(a) * (1.0 - 2.0 * expit(a))


def _identity(a) -> np.ndarray:
    return a


def _probit_logits(mu, var) -> np.ndarray:
    """``mu / sqrt(1 + pi var / 8)``, the logits of the probit approximation (no checks), book
    eq. ``eq-probit``: ``E[sigma(a)] ~= sigma(rho mu)``, ``rho = (1 + lambda^2 var)^{-1/2}``,
    ``lambda^2 = pi / 8`` (eq. ``eq-probit-scale``); :data:`LOGISTIC`'s ``predictive_logits``,
    behind :func:`lib.predictive.predictive_proba` and :func:`lib.scores.score_split`."""
    return mu / np.sqrt(1.0 + np.pi * var / 8.0)


#: The logistic likelihood ``p(y = 1 | a) = sigma(a)``: ``W_nn = sigma_n (1 - sigma_n)``,
#: ``dW_nn/da_n = sigma_n (1 - sigma_n)(1 - 2 sigma_n)``; its logits are ``a`` and its
#: predictive's the probit approximation's ``rho mu``.
LOGISTIC = Likelihood(
    "logistic", log_likelihood_from_activations, _logistic_gradient, _logistic_curvature,
    _logistic_curvature_derivative, _identity, _probit_logits,
)
