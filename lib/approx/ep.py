"""Expectation propagation for Bayesian logistic regression, in weight space.

Minka (2001); Rasmussen & Williams (2006) §3.6, algorithm 3.5, here with the weights ``w``
instead of the latent function and the *parallel* schedule (all sites at once, damped). Each
likelihood term ``sigma(s_n a_n)`` (``a_n = phi_n^T w``, ``s_n = 2 y_n - 1``) is replaced by an
unnormalised Gaussian site in ``a_n`` with precision ``tau_n`` and shift ``nu_n``, so that::

    q(w) = N(m, A^{-1}),   A = I / s2 + Phi^T diag(tau) Phi,   A m = Phi^T nu.

One iteration (R&W eq. 3.56-3.59): the cavity ``N(a_n | mu_c, v_c)`` (``q``'s marginal of
``a_n`` with site ``n`` removed), the moments of the tilted distribution
``sigma(s_n a) N(a | mu_c, v_c) / Z_n``, and the site that matches them::

    tau_n = 1 / v_hat - 1 / v_c,   nu_n = mu_hat / v_hat - mu_c / v_c.

**Quadrature.** The logistic tilted moments have no closed form (the probit link's do: R&W eq.
3.58), so they are computed by Gauss-Hermite quadrature on the cavity, ``n_quad`` nodes, in
log space. Its error grows with the cavity's standard deviation ``sd`` (the sigmoid's step,
of width about 1, falls between nodes): with 200 nodes, relative errors of the moments about
``1e-7`` at ``sd = 5``, ``1e-4`` at ``sd = 10``, ``5e-3`` at ``sd = 20``; check wide cavities
by raising ``n_quad``. **Damping**: ``tau <- (1 - d) tau + d tau_new`` (and ``nu``), ``d = damping`` in
(0, 1], 1 undamped. **Convergence**: the largest change of a site parameter, relative,
``max |Delta tau| / (1 + |tau|)`` and the same for ``nu``, at most ``tol``. **Negative
precisions**: the logistic likelihood is log-concave, so in exact arithmetic every cavity and
site precision is non-negative; a site whose cavity precision is not positive or whose new
precision is negative (rounding, quadrature error) is not updated in that iteration, and
counted (``n_skipped``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from lib._validate import as_design_labels, int_at_least, positive_int, positive_scalar, prior_variance
from lib.approx._gaussian import GaussianApproximation, _activation_moments, _gaussian_from_sites
from lib.laplace import ConvergenceError
from lib.likelihood import _log_sigmoid

#: The most Gauss-Hermite nodes (numpy's rule loses accuracy beyond a few hundred).
MAX_QUAD = 300


@dataclass(frozen=True)
class EPPosterior(GaussianApproximation):
    """``q(w) = N(mean, A^{-1})``, ``A = L L^T`` (``chol``), from :func:`fit_ep`.

    ``site_precision`` (N,) and ``site_shift`` (N,) the sites' natural parameters ``tau``,
    ``nu``; ``log_evidence`` EP's estimate of ``log Z``; ``n_iter`` the iterations;
    ``converged`` whether the tolerance was met; ``n_skipped`` the site updates skipped for a
    non-positive cavity or a negative site precision; ``method`` what produced it.
    """

    site_precision: np.ndarray
    site_shift: np.ndarray
    log_evidence: float
    n_iter: int
    converged: bool
    n_skipped: int
    method: str = "expectation propagation (logistic, Gauss-Hermite)"


def _tilted_moments(mu, v, s, n_quad):
    """``log Z``, mean and variance of ``sigma(s a) N(a | mu, v) / Z`` per site (no checks):
    Gauss-Hermite nodes ``a = mu + sqrt(v) z`` for the weight ``exp(-z^2 / 2)``."""
    z, om = np.polynomial.hermite_e.hermegauss(n_quad)
    a = mu[:, None] + np.sqrt(v)[:, None] * z
    log_w = np.log(om / np.sqrt(2.0 * np.pi)) + _log_sigmoid(s[:, None] * a)
    log_z = logsumexp(log_w, axis=1)
    p = np.exp(log_w - log_z[:, None])
    mean = p @ z                                   # in z units: stable for any v
    var = np.einsum("ij,ij->i", p, (z - mean[:, None])**2)
    return log_z, mu + np.sqrt(v) * mean, v * var


def _cavity(mu, v, tau, nu):
    """Cavity precision and shift, ``1 / v - tau`` and ``mu / v - nu`` (R&W eq. 3.56)."""
    return 1.0 / v - tau, mu / v - nu


def _log_evidence(Phi, s2, L, m, tau, nu, s, n_quad):
    """EP's ``log Z`` (R&W eq. 3.65 in weight space; no checks): each site's constant makes
    ``int t_n q_{-n} = Z_n``, and the Gaussian integral of prior times sites is exact::

        log Z = sum_n [log Z_n - log int exp(-tau a^2 / 2 + nu a) N(a | mu_c, v_c) da]
                - (M/2) log s2 - (1/2) log|A| + (1/2) m^T A m
    """
    mu, v = _activation_moments(Phi, L, m)
    tau_c, nu_c = _cavity(mu, v, tau, nu)
    if np.any(tau_c <= 0):
        raise ConvergenceError("EP ended with a non-positive cavity precision; its log Z is "
                               "undefined; use a smaller damping")
    mu_c, v_c = nu_c / tau_c, 1.0 / tau_c
    log_z, _, _ = _tilted_moments(mu_c, v_c, s, n_quad)
    # log int exp(-tau a^2/2 + nu a) N(a | mu_c, v_c) da, with 1/v_c + tau = 1/v
    log_site = -0.5 * np.log1p(tau * v_c) + 0.5 * (nu_c + nu)**2 * v - 0.5 * mu_c**2 / v_c
    b = Phi.T @ nu
    M = m.shape[0]
    return float(np.sum(log_z - log_site) - 0.5 * M * np.log(s2)
                 - np.sum(np.log(np.diag(L))) + 0.5 * m @ b)


def fit_ep(Phi, y, s2, *, damping: float = 0.5, max_iter: int = 1000, tol: float = 1e-9,
           n_quad: int = 200) -> EPPosterior:
    """Expectation propagation (parallel, damped) for the logistic likelihood.

    ``Phi`` (N, M) the design, ``y`` (N,) labels 0/1, ``s2`` the prior variance of
    ``w ~ N(0, s2 I)``; ``damping`` in (0, 1] the step towards the new sites (1 undamped);
    ``max_iter`` the most iterations; ``tol`` the convergence test on the largest relative
    change of a site parameter; ``n_quad`` Gauss-Hermite nodes per tilted moment (2 to
    :data:`MAX_QUAD`). Starts from the prior (all sites zero). Returns an :class:`EPPosterior`
    (``converged=False`` if ``max_iter`` ran out).
    """
    Phi, y = as_design_labels(Phi, y, ("Phi", "y"))
    damping = positive_scalar(damping, "damping")
    if damping > 1.0:
        raise ValueError(f"damping must be in (0, 1] (1 undamped), got {damping!r}")
    n_quad = int_at_least(n_quad, "n_quad", 2)
    if n_quad > MAX_QUAD:
        raise ValueError(f"n_quad must be at most {MAX_QUAD}, got {n_quad}")
    return _fit_ep(Phi, y, prior_variance(s2, "s2"), damping, positive_int(max_iter, "max_iter"),
                   positive_scalar(tol, "tol"), n_quad)


def _fit_ep(Phi, y, s2, damping, max_iter, tol, n_quad) -> EPPosterior:
    """:func:`fit_ep` on checked arguments (no checks)."""
    N = Phi.shape[0]
    s = 2.0 * y - 1.0
    tau, nu = np.zeros(N), np.zeros(N)                    # R&W alg. 3.5, line 2: sites at 0
    L, m = _gaussian_from_sites(Phi, s2, tau, Phi.T @ nu)
    n_skipped, converged = 0, False
    for it in range(1, max_iter + 1):                     # line 3: repeat
        mu, v = _activation_moments(Phi, L, m)
        tau_c, nu_c = _cavity(mu, v, tau, nu)             # line 5: cavity (eq. 3.56)
        ok = tau_c > 0
        tau_c = np.where(ok, tau_c, 1.0)                  # placeholder, never used where not ok
        _, mu_hat, v_hat = _tilted_moments(nu_c / tau_c, 1.0 / tau_c, s, n_quad)  # eq. 3.58
        tau_new = 1.0 / v_hat - tau_c                     # line 7: site update (eq. 3.59)
        nu_new = mu_hat / v_hat - nu_c
        ok &= tau_new >= 0
        n_skipped += int(N - np.sum(ok))
        tau_next = np.where(ok, (1.0 - damping) * tau + damping * tau_new, tau)
        nu_next = np.where(ok, (1.0 - damping) * nu + damping * nu_new, nu)
        change = max(np.max(np.abs(tau_next - tau) / (1.0 + np.abs(tau))),
                     np.max(np.abs(nu_next - nu) / (1.0 + np.abs(nu))))
        tau, nu = tau_next, nu_next
        # line 8 (parallel form): recompute q from all sites at once, by Cholesky
        L, m = _gaussian_from_sites(Phi, s2, tau, Phi.T @ nu)
        if change <= tol:
            converged = True
            break
    return EPPosterior(mean=m, chol=L, s2=s2, site_precision=tau, site_shift=nu,
                       log_evidence=_log_evidence(Phi, s2, L, m, tau, nu, s, n_quad),
                       n_iter=it, converged=converged, n_skipped=n_skipped)
