"""The probit-approximated predictive distribution under the Laplace posterior.

Derived in the book chapter "The probit predictive" (report section 2.1.3, eq. 9). Book
equations implemented here:

* ``eq-activation``: ``a ~ N(mu_a, sigma_a^2)``, ``mu_a = phi.w_MAP``,
  ``sigma_a^2 = phi^T A^{-1} phi = |L^{-1} phi|^2``;
* ``eq-probit-scale``: ``sigma(a) ~= N(lambda a)``, ``lambda^2 = pi / 8``;
* ``eq-probit``: ``P(y=1 | phi) ~= sigma(rho mu_a)``, ``rho = (1 + pi sigma_a^2 / 8)^{-1/2}``
  (the sources' kappa; the book keeps kappa for a curvature bound).

References: Spiegelhalter & Lauritzen (1990); MacKay (1992); Bishop (2006), section 4.5.2;
Rasmussen & Williams (2006), algorithm 3.2, of which :func:`activation_moments` is the
weight-space form (the comments at its lines cite the algorithm's).
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit
from scipy.linalg import solve_triangular

from lib._validate import as_design, as_nonnegative, as_vector, instance
from lib.laplace import LaplacePosterior

#: The probit approximation's scale ``lambda = sqrt(pi / 8)``: ``sigma(a) ~= N(lambda a)``.
PROBIT_SCALE = float(np.sqrt(np.pi / 8.0))


def _design(posterior: LaplacePosterior, Phi) -> np.ndarray:
    """``Phi`` checked as a design for ``posterior`` (checked first)."""
    posterior = instance(posterior, "posterior", LaplacePosterior)
    return as_design(Phi, "Phi", n_cols=posterior.n_weights)


def activation_moments(posterior: LaplacePosterior, Phi) -> tuple[np.ndarray, np.ndarray]:
    """Mean ``mu`` (N,) and variance ``var`` (N,) of the activation under the Laplace posterior
    at the rows of ``Phi`` (N, M) (book eq. ``eq-activation``)."""
    return _activation_moments(posterior, _design(posterior, Phi))


def _activation_moments(posterior: LaplacePosterior, Phi) -> tuple[np.ndarray, np.ndarray]:
    """:func:`activation_moments` on a checked posterior and design (no checks)."""
    # Line 4 of R&W algorithm 3.2: mean = k_*^T grad log p(y | f_hat); here mu_a = phi.w_MAP
    mu = Phi @ posterior.w_map
    # Line 5: v = L \ (W^1/2 k_*); here V = L^{-1} Phi^T with A = L L^T
    V = solve_triangular(posterior.chol, Phi.T, lower=True)   # L^{-1} Phi^T, shape (M, N)
    # Line 6: V[f_*] = k(x_*, x_*) - v.v; here sigma_a^2 = |L^{-1} phi|^2 (book eq. eq-activation)
    return mu, np.einsum("mn,mn->n", V, V)


#: Most evaluations of the logistic :func:`logistic_gaussian_expectation` makes (its cost).
_MAX_EVALUATIONS = 5e8


def logistic_gaussian_expectation(mu, var) -> np.ndarray:
    """``E[sigma(a)]`` for ``a ~ N(mu, var)`` by the trapezoid rule (the exact reference).

    With ``a = mu + sd z``, the integrand ``sigma(mu + sd z) exp(-z^2/2) / sqrt(2 pi)`` is analytic
    in a strip of half-width ``pi / sd`` (the poles of ``sigma``), so the trapezoid rule on ``z in [-10, 10]`` with
    step ``h <= 0.25 / sd`` converges geometrically, error ``~ exp(-2 pi^2 / (sd h))``: far below
    ``1e-12`` here (checked against adaptive quadrature in the tests). ``mu``, ``var`` and the
    result have shape (N,).
    """
    mu = as_vector(np.atleast_1d(mu), "mu")
    var = as_nonnegative(np.atleast_1d(var), "var", length=mu.shape[0])
    # Line 7 of R&W algorithm 3.2: int sigma(a) N(a | mu, var) da, here by the trapezoid rule in
    # z = (a - mu) / sd
    sd = np.sqrt(var)
    h = min(0.1, 0.25 / max(float(sd.max(initial=0.0)), 1e-12))
    if mu.size * 20.0 / h > _MAX_EVALUATIONS:
        raise ValueError(f"var up to {var.max():.3g} needs {mu.size * 20.0 / h:.2g} evaluations of "
                         f"the logistic (limit {_MAX_EVALUATIONS:.0g}; 1e8 take seconds); "
                         "use the probit approximation for such variances")
    z = np.arange(-10.0, 10.0 + h / 2, h)
    weights = np.exp(-0.5 * z**2) * h / np.sqrt(2.0 * np.pi)   # trapezoid (ends are ~1e-22)
    out = np.empty_like(mu)
    chunk = max(1, 2_000_000 // z.size)
    for i in range(0, mu.size, chunk):
        a = mu[i : i + chunk, None] + sd[i : i + chunk, None] * z[None, :]
        out[i : i + chunk] = expit(a) @ weights
    return out


def predictive_proba(posterior: LaplacePosterior, Phi) -> np.ndarray:
    """Predictive ``P(y=1 | phi, data)`` under the Laplace posterior, shape (N,): lib's one
    function for it.

    With the activation's moments ``mu_a``, ``sigma_a^2`` (:func:`activation_moments`) and the
    posterior's own likelihood (:attr:`LaplacePosterior.likelihood`, its ``predictive_logits``):
    for the logistic one the probit approximation ``sigma(mu_a / sqrt(1 + pi sigma_a^2 / 8))``
    (book eq. ``eq-probit``); for the probit one the exact ``N(mu_a / sqrt(1/2 + sigma_a^2))``.
    """
    mu, var = activation_moments(posterior, Phi)    # checks posterior first
    # Line 7 of R&W algorithm 3.2 (the averaged probability), approximated by book eq. eq-probit
    return expit(posterior.likelihood.predictive_logits(mu, var))


def map_logits(posterior: LaplacePosterior, Phi) -> np.ndarray:
    """Log-odds of the plug-in MAP classifier, shape (N,): ``Phi w_MAP`` for the logistic
    likelihood, the posterior's own likelihood's log-odds at ``Phi w_MAP`` otherwise."""
    Phi = _design(posterior, Phi)                   # checks posterior first
    return posterior.likelihood.logits(Phi @ posterior.w_map)


def map_proba(posterior: LaplacePosterior, Phi) -> np.ndarray:
    """Plug-in MAP predictive ``p(y=1 | phi, w_MAP)`` (``sigma(Phi w_MAP)`` for the logistic likelihood), shape (N,)."""
    return expit(map_logits(posterior, Phi))
