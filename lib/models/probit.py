"""The probit (erfc) likelihood of Barrett's note, :data:`PROBIT`, for
:func:`lib.laplace.fit_laplace` and :mod:`lib.hyper` (``likelihood=PROBIT``), and the note's
formulas as printed, for checking.

Derived in the book chapter "The probit likelihood". Book equations implemented here:

* ``pr-model``: ``p(y | a) = (1/2) erfc(-t) = N(sqrt(2) t)``, ``t = (2 y - 1) a``;
* ``pr-ratio``: ``r(h) = (2 / sqrt(pi)) exp(-h^2) / erfc(h) = 2 / (sqrt(pi) erfcx(h))``;
* ``pr-derivatives``: ``d log p / da = (2 y - 1) q``, ``W = q (q + 2 t)``, ``q = r(-t)``;
* ``pr-third``: ``dW / da = 2 (2 y - 1)(q - W (q + t))``;
* ``pr-asymptotic``: the asymptotic series of ``erfc`` (coefficients ``(-1)^n (2n - 1)!!``);
* ``pr-predictive``: ``p(y = 1) = N(mu / sqrt(1/2 + v))`` for ``a ~ N(mu, v)``.

Reference: Barrett (2013), "Bayesian Linear Classifier" (a note); the comments cite its
equations.
"""
from __future__ import annotations

import numpy as np
from scipy.special import erfc, erfcx, log_ndtr, ndtr

from lib._validate import as_vector, real_values
from lib.likelihood import Likelihood

SQRT2 = float(np.sqrt(2.0))
SQRT_PI = float(np.sqrt(np.pi))

#: Coefficients ``c_n`` of ``erfc(h) ~ exp(-h^2) / (h sqrt(pi)) sum_n c_n / (2 h^2)^n``:
#: as printed in Barrett's note (1, -1, 2, -8) and as they are, ``(-1)^n (2n - 1)!!``.
NOTE_SERIES = (1.0, -1.0, 2.0, -8.0)
TRUE_SERIES = (1.0, -1.0, 3.0, -15.0)


def log_half_erfc(h) -> np.ndarray:
    """``log((1/2) erfc(h)) = log N(-sqrt(2) h)``, stable for every real ``h`` (the note's
    eq. (5) term for sigma = -1, by scipy's log_ndtr instead of log and erfc)."""
    return log_ndtr(-SQRT2 * real_values(h, "h"))


def erfc_ratio(h) -> np.ndarray:
    """``r(h) = (2 / sqrt(pi)) exp(-h^2) / erfc(h)`` as ``2 / (sqrt(pi) erfcx(h))``, every ``h``.

    ``r(h) = -d log erfc(h) / dh``; ``r(h) ~ 2 h`` for large ``h``, ``r(h) -> 0`` for ``h -> -inf``.
    """
    # Book eq. pr-ratio; erfcx(h) = exp(h^2) erfc(h) stays finite where the note's form is x / 0
    # (h >= 26.7) or 0 / 0 (h >= 27.3), so its switch to the asymptotic series is not needed
    return _erfc_ratio(real_values(h, "h"))


def _erfc_ratio(h) -> np.ndarray:
    """:func:`erfc_ratio` of a float array (no checks: the likelihood's hot path)."""
    with np.errstate(over="ignore"):        # erfcx = inf (h < -26.6): r = 0, its limit
        return 2.0 / (SQRT_PI * erfcx(h))


def naive_log_half_erfc(h) -> np.ndarray:
    """``log((1/2) erfc(h))``, the note's eq. (5) term for sigma = -1 as printed (``-inf`` once
    ``erfc`` underflows)."""
    h = real_values(h, "h")
    with np.errstate(all="ignore"):
        return np.log(0.5 * erfc(h))


def naive_log_one_minus_half_erfc(h) -> np.ndarray:
    """``log(1 - (1/2) erfc(h))``, the note's eq. (5) term for sigma = +1 as printed (cancels
    for ``h < -6``)."""
    h = real_values(h, "h")
    with np.errstate(all="ignore"):
        return np.log(1.0 - 0.5 * erfc(h))


def naive_erfc_ratio(h) -> np.ndarray:
    """``(2 / sqrt(pi)) exp(-h^2) / erfc(h)`` as written (``0 / 0 = nan`` for large ``h``)."""
    h = real_values(h, "h")
    with np.errstate(all="ignore"):
        return 2.0 / SQRT_PI * np.exp(-h * h) / erfc(h)


def _positive_h_series(h, series):
    """``h`` (positive, no NaN) and ``series`` (finite coefficients) checked."""
    h = real_values(h, "h")
    if not np.all(h > 0):
        raise ValueError("h must be positive (the asymptotic expansion is for large h)")
    return h, as_vector(series, "series").tolist()


def _bracket(h, series):
    """``sum_n c_n / (2 h^2)^n``, the bracket of the note's asymptotic expansion (no checks).

    Asymptotic: for small ``h`` the bracket may be negative (then the ``log`` of
    :func:`asymptotic_log_half_erfc` is NaN, with numpy's warning)."""
    # Book eq. pr-asymptotic with TRUE_SERIES; the note's (after Menzel) with NOTE_SERIES
    x = 1.0 / (2.0 * h ** 2)
    return sum(c * x**n for n, c in enumerate(series))


def asymptotic_log_half_erfc(h, series=TRUE_SERIES) -> np.ndarray:
    """The note's ``log((1/2) erfc(h)) ~ -h^2 - log h - log(2 sqrt(pi)) + log[bracket]``."""
    h, series = _positive_h_series(h, series)
    return -h * h - np.log(h) - np.log(2.0 * SQRT_PI) + np.log(_bracket(h, series))


def asymptotic_ratio(h, series=TRUE_SERIES) -> np.ndarray:
    """The note's ``exp(-h^2) / erfc(h) ~ h sqrt(pi) / [bracket]`` (without ``2 / sqrt(pi)``)."""
    h, series = _positive_h_series(h, series)
    return h * SQRT_PI / _bracket(h, series)


def _signed(a, y):
    return np.where(y == 1, a, -a)


def label_log_probs(a, y) -> np.ndarray:
    """Per-point ``log p(y_n | a_n) = log N(sqrt(2) t_n)``, ``t_n = (2 y_n - 1) a_n`` (no checks)."""
    # Book eq. pr-model: the note's eq. (5) terms log((1/2) erfc(h)) (sigma = -1) and
    # log(1 - (1/2) erfc(h)) (sigma = +1), both log N(sqrt(2) t) with t = -h and t = h
    return log_ndtr(SQRT2 * _signed(a, y))


def log_likelihood_from_activations(a, y) -> float:
    """``L = sum_n log N(sqrt(2) t_n)`` from activations and labels 0/1 (no checks)."""
    return float(np.sum(label_log_probs(a, y)))


def gradient(a, y) -> np.ndarray:
    """``d log p(y_n | a_n) / da_n = (2 y_n - 1) r(-t_n)`` per point (no checks)."""
    # Book eq. pr-derivatives; the likelihood part of the note's gradient, eq. (6), carries a
    # further -1/N (the note minimises -log p / N)
    return np.where(y == 1, 1.0, -1.0) * _erfc_ratio(-_signed(a, y))


def curvature(a, y) -> np.ndarray:
    """``W_nn = -d^2 log p(y_n | a_n) / da_n^2 = q (q + 2 t)``, ``q = r(-t_n)`` (no checks)."""
    t = _signed(a, y)
    q = _erfc_ratio(-t)
    # Book eq. pr-derivatives; the note's curvature matrix is (Phi^T W Phi + S^{-1}) / N
    return q * (q + 2.0 * t)


def curvature_derivative(a, y) -> np.ndarray:
    """``dW_nn / da_n = (2 y_n - 1) 2 (q - W_nn (q + t_n))``, ``q = r(-t_n)`` (no checks).

    From ``dq/dt = -W`` (since ``r'(h) = r (r - 2 h)``): ``dW/dt = -W (q + 2 t) + q (2 - W)``.
    """
    t = _signed(a, y)
    q = _erfc_ratio(-t)
    W = q * (q + 2.0 * t)
    return np.where(y == 1, 2.0, -2.0) * (q - W * (q + t))  # book eq. pr-third


def _log_odds(z) -> np.ndarray:
    """``log N(z) - log N(-z)``, stably (``log_ndtr`` on both sides; no checks)."""
    return log_ndtr(z) - log_ndtr(-z)


def _logits(a) -> np.ndarray:
    return _log_odds(SQRT2 * a)


def _predictive_logits(mu, var) -> np.ndarray:
    return _log_odds(mu / np.sqrt(0.5 + var))               # book eq. pr-predictive, exact


#: The probit likelihood ``p(y = 1 | a) = (1/2) erfc(-a) = N(sqrt(2) a)`` for
#: :func:`lib.laplace.fit_laplace` and :mod:`lib.hyper.gradient`.
PROBIT = Likelihood("probit", log_likelihood_from_activations, gradient, curvature,
                    curvature_derivative, _logits, _predictive_logits)


def proba(a) -> np.ndarray:
    """``p(y = 1 | a) = (1/2) erfc(-a) = N(sqrt(2) a)``."""
    return ndtr(SQRT2 * real_values(a, "a"))


def predictive_proba(mu, var) -> np.ndarray:
    """Exact ``E[N(sqrt(2) a)]`` for ``a ~ N(mu, var)``: ``N(mu / sqrt(1/2 + var))``."""
    mu, var = real_values(mu, "mu"), real_values(var, "var", nonnegative=True)
    if np.any(np.isinf(mu)) or mu.size == 0:
        raise ValueError("mu must hold at least one finite number")
    if var.shape not in ((), mu.shape):
        raise ValueError(f"mu and var must have the same shape (or var be a scalar), got shapes "
                         f"{mu.shape} and {var.shape}")
    return ndtr(mu / np.sqrt(0.5 + var))                    # book eq. pr-predictive, c = sqrt(2)
