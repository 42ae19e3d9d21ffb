"""The probit (erfc) likelihood of Barrett's note (book chapter "The probit likelihood").

Barrett (2013) writes the class probabilities with the complementary error function,
``p(sigma = -1 | x, w) = (1/2) erfc(h)``, ``p(sigma = +1 | x, w) = 1 - (1/2) erfc(h)``,
``h = w.x + w0``. With the book's labels ``y in {0, 1}`` (``sigma = 2 y - 1``) and the
activation ``a = phi.w`` (bias in ``w``), and ``1 - erfc(h) / 2 = erfc(-h) / 2``::

    p(y | a) = (1/2) erfc(-t) = N(sqrt(2) t),     t = (2 y - 1) a,

with ``N`` the standard normal CDF. Per point, with the ratio
``r(h) = (2 / sqrt(pi)) exp(-h^2) / erfc(h) = 2 / (sqrt(pi) erfcx(h))``::

    log p     = log N(sqrt(2) t)                   (scipy.special.log_ndtr)
    d log p/da = (2 y - 1) q,                       q = r(-t)
    W_nn      = -d^2 log p / da^2 = q (q + 2 t)     (> 0: the model is log-concave)

``erfcx(h) = exp(h^2) erfc(h)`` (scipy) is finite and accurate for every ``h`` where the
naive ``exp(-h^2) / erfc(h)`` is ``0 / 0`` (``h`` above about 26.5) and overflows to ``inf``
only where ``r`` is 0 anyway (``h`` below about -26.6). :data:`PROBIT` plugs these into
:func:`lib.laplace.fit_laplace`.

Under a Gaussian ``a ~ N(mu, v)`` the predictive is exact (:func:`predictive_proba`)::

    p(y = 1) = E[N(sqrt(2) a)] = N(mu / sqrt(1/2 + v)).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import erfc, erfcx, log_ndtr, ndtr

from .likelihood import Likelihood

SQRT2 = float(np.sqrt(2.0))
SQRT_PI = float(np.sqrt(np.pi))

#: Coefficients ``c_n`` of ``erfc(h) ~ exp(-h^2) / (h sqrt(pi)) sum_n c_n / (2 h^2)^n``:
#: as printed in Barrett's note (1, -1, 2, -8) and as they are, ``(-1)^n (2n - 1)!!``.
NOTE_SERIES = (1.0, -1.0, 2.0, -8.0)
TRUE_SERIES = (1.0, -1.0, 3.0, -15.0)


def log_half_erfc(h) -> np.ndarray:
    """``log((1/2) erfc(h)) = log N(-sqrt(2) h)``, stable for every real ``h``."""
    return log_ndtr(-SQRT2 * np.asarray(h, dtype=float))


def erfc_ratio(h) -> np.ndarray:
    """``r(h) = (2 / sqrt(pi)) exp(-h^2) / erfc(h)`` as ``2 / (sqrt(pi) erfcx(h))``, every ``h``.

    ``r(h) = -d log erfc(h) / dh``; ``r(h) ~ 2 h`` for large ``h``, ``r(h) -> 0`` for ``h -> -inf``.
    """
    with np.errstate(over="ignore"):        # erfcx = inf (h < -26.6): r = 0, its limit
        return 2.0 / (SQRT_PI * erfcx(np.asarray(h, dtype=float)))


def naive_log_half_erfc(h) -> np.ndarray:
    """``log((1/2) erfc(h))`` evaluated as written (``-inf`` once ``erfc`` underflows)."""
    with np.errstate(all="ignore"):
        return np.log(0.5 * erfc(np.asarray(h, dtype=float)))


def naive_log_one_minus_half_erfc(h) -> np.ndarray:
    """``log(1 - (1/2) erfc(h))`` as the note's eq. (5) writes it (cancels for ``h < -6``)."""
    with np.errstate(all="ignore"):
        return np.log(1.0 - 0.5 * erfc(np.asarray(h, dtype=float)))


def naive_erfc_ratio(h) -> np.ndarray:
    """``(2 / sqrt(pi)) exp(-h^2) / erfc(h)`` as written (``0 / 0 = nan`` for large ``h``)."""
    h = np.asarray(h, dtype=float)
    with np.errstate(all="ignore"):
        return 2.0 / SQRT_PI * np.exp(-h * h) / erfc(h)


def asymptotic_bracket(h, series=TRUE_SERIES) -> np.ndarray:
    """``sum_n c_n / (2 h^2)^n``, the bracket of the note's asymptotic expansion (``h > 0``)."""
    x = 1.0 / (2.0 * np.asarray(h, dtype=float) ** 2)
    return sum(c * x**n for n, c in enumerate(series))


def asymptotic_log_half_erfc(h, series=TRUE_SERIES) -> np.ndarray:
    """The note's ``log((1/2) erfc(h)) ~ -h^2 - log h - log(2 sqrt(pi)) + log[bracket]``."""
    h = np.asarray(h, dtype=float)
    return -h * h - np.log(h) - np.log(2.0 * SQRT_PI) + np.log(asymptotic_bracket(h, series))


def asymptotic_ratio(h, series=TRUE_SERIES) -> np.ndarray:
    """The note's ``exp(-h^2) / erfc(h) ~ h sqrt(pi) / [bracket]`` (without ``2 / sqrt(pi)``)."""
    h = np.asarray(h, dtype=float)
    return h * SQRT_PI / asymptotic_bracket(h, series)


def _signed(a, y):
    return np.where(y == 1, a, -a)


def label_log_probs(a, y) -> np.ndarray:
    """Per-point ``log p(y_n | a_n) = log N(sqrt(2) t_n)``, ``t_n = (2 y_n - 1) a_n`` (no checks)."""
    return log_ndtr(SQRT2 * _signed(a, y))


def log_likelihood_from_activations(a, y) -> float:
    """``L = sum_n log N(sqrt(2) t_n)`` from activations and labels 0/1 (no checks)."""
    return float(np.sum(label_log_probs(a, y)))


def gradient(a, y) -> np.ndarray:
    """``d log p(y_n | a_n) / da_n = (2 y_n - 1) r(-t_n)`` per point (no checks)."""
    return np.where(y == 1, 1.0, -1.0) * erfc_ratio(-_signed(a, y))


def curvature(a, y) -> np.ndarray:
    """``W_nn = -d^2 log p(y_n | a_n) / da_n^2 = q (q + 2 t)``, ``q = r(-t_n)`` (no checks)."""
    t = _signed(a, y)
    q = erfc_ratio(-t)
    return q * (q + 2.0 * t)


#: The probit likelihood ``p(y = 1 | a) = (1/2) erfc(-a) = N(sqrt(2) a)`` for
#: :func:`lib.laplace.fit_laplace`.
PROBIT = Likelihood("probit", log_likelihood_from_activations, gradient, curvature)


def proba(a) -> np.ndarray:
    """``p(y = 1 | a) = (1/2) erfc(-a) = N(sqrt(2) a)``."""
    return ndtr(SQRT2 * np.asarray(a, dtype=float))


def predictive_proba(mu, var) -> np.ndarray:
    """Exact ``E[N(sqrt(2) a)]`` for ``a ~ N(mu, var)``: ``N(mu / sqrt(1/2 + var))``."""
    mu, var = np.asarray(mu, dtype=float), np.asarray(var, dtype=float)
    return ndtr(mu / np.sqrt(0.5 + var))


def prior_variances(alpha2, beta2, n_weights) -> np.ndarray:
    """Per-weight prior variances: ``alpha2`` for the ``n_weights - 1`` RBF weights, ``beta2``
    for the bias (the last column of :func:`lib.features.rbf_features`)."""
    s2 = np.full(n_weights, float(alpha2))
    s2[-1] = float(beta2)
    return s2


@dataclass(frozen=True)
class ProbitOptimum:
    """Hyper-parameters ``(alpha2, beta2, l)`` of largest Laplace log evidence found.

    ``path`` holds ``(alpha2, beta2, l, log Z)`` at each evaluation; ``posterior`` is the
    Laplace fit at the optimum.
    """

    alpha2: float
    beta2: float
    width: float
    log_evidence: float
    n_evaluations: int
    success: bool
    posterior: object
    path: tuple


def maximise_evidence(X_train, y_train, start=(1.0, 1.0, 0.5), *, step: float = 1e-4,
                      bounds=((1e-3, 1e3), (1e-3, 1e3), (1e-2, 10.0)),
                      gtol: float = 1e-4) -> ProbitOptimum:
    """Maximise the Laplace log evidence of the probit RBF model over ``(alpha2, beta2, l)``.

    L-BFGS-B on ``theta = log(alpha2, beta2, l)`` with central-difference gradients of
    ``log Z(theta)`` (step ``step`` in ``theta``); each ``log Z`` is
    :func:`lib.laplace.fit_laplace` with :data:`PROBIT` and the prior variances of
    :func:`prior_variances`, warm-started from the last mode found.
    """
    from scipy.optimize import minimize

    from .features import rbf_from_squared_distances, squared_distances
    from .laplace import fit_laplace

    X_train = np.asarray(X_train, dtype=float)
    y_train = np.asarray(y_train, dtype=float)
    d2 = squared_distances(X_train, X_train)
    state = {"w": None, "path": [], "best": None}

    def log_z(theta):
        alpha2, beta2, width = np.exp(theta)
        Phi = np.ones((d2.shape[0], d2.shape[1] + 1))
        Phi[:, :-1] = rbf_from_squared_distances(d2, width)
        post = fit_laplace(Phi, y_train, prior_variances(alpha2, beta2, Phi.shape[1]),
                           w0=state["w"], likelihood=PROBIT, max_iter=500)
        state["w"] = post.w_map
        state["path"].append((alpha2, beta2, width, post.log_evidence))
        if state["best"] is None or post.log_evidence > state["best"][1]:
            state["best"] = (np.array(theta), post.log_evidence, post)
        return post.log_evidence

    def objective(theta):
        value = log_z(theta)
        grad = np.array([(log_z(theta + step * e) - log_z(theta - step * e)) / (2 * step)
                         for e in np.eye(3)])
        return -value, -grad

    res = minimize(objective, np.log(start), jac=True, method="L-BFGS-B",
                   bounds=[tuple(np.log(b)) for b in bounds], options={"gtol": gtol})
    theta, value, post = state["best"]
    alpha2, beta2, width = np.exp(theta)
    return ProbitOptimum(float(alpha2), float(beta2), float(width), float(value),
                         len(state["path"]), bool(res.success), post, tuple(state["path"]))
