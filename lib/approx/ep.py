"""Expectation propagation for Bayesian logistic regression, in weight space.

Minka (2001); Rasmussen & Williams (2006) §3.6, algorithm 3.5, here with the weights ``w``
instead of the latent function. Each likelihood term ``sigma(s_n a_n)`` (``a_n = phi_n^T w``,
``s_n = 2 y_n - 1``) is replaced by an unnormalised Gaussian site in ``a_n`` with precision
``tau_n`` and shift ``nu_n``, so that::

    q(w) = N(m, A^{-1}),   A = I / s2 + Phi^T diag(tau) Phi,   A m = Phi^T nu.

A site's update (R&W eq. 3.56-3.59): the cavity ``N(a_n | mu_c, v_c)`` (``q``'s marginal of
``a_n`` with site ``n`` removed), the moments of the tilted distribution
``sigma(s_n a) N(a | mu_c, v_c) / Z_n``, and the site that matches them::

    tau_n = 1 / v_hat - 1 / v_c,   nu_n = mu_hat / v_hat - mu_c / v_c.

**Schedules.** *Sequential* (the default, R&W's): the sites in turn, ``q`` updated after each
(a rank-one step), rebuilt by Cholesky after each sweep against drift. *Parallel*: every site
from the same ``q``, then ``q`` rebuilt once per sweep; cheaper per sweep for large N, but from
the prior with wide cavities (unstandardised inputs) all sites overshoot together and it can
diverge (seen on the Pima data even at damping 0.5); damping is its remedy.

**Tilted moments** (:func:`_tilted_moments`): the logistic ones have no closed form (the probit
link's do: R&W eq. 3.58; a mixture of probits would miss the logistic tails by orders of
magnitude where ``Z_n`` is small). Quadrature on the cavity itself fails for wide cavities: the
sigmoid's step, of width about 1 (its poles at ``a = +-i pi``), falls between the nodes. So the
rule adapts to each site's tilted density ``sigma(a) N(a | mu, v)`` (log-concave), centred at its
mode: where the tilted density is near-Gaussian (a cavity sd at most :data:`NARROW_SD`, or the
step 8 cavity sds or more beyond the mode, on the side where ``sigma`` is near 1) Gauss-Hermite,
32 nodes, centred and scaled at the mode and curvature; elsewhere composite Gauss-Legendre (48
panels of 8 nodes) over the mode +- 9 cavity sds in the variable ``u = asinh(a / pi)``, whose
panels are about 1 wide near the step and widen with ``|a|`` where only the Gaussian varies.
Checked against adaptive quadrature (``scipy.integrate.quad``, tests/test_approx.py): relative
errors of ``log Z_n``, mean (relative to the larger of ``|mean|`` and the sd) and variance below
``1e-9`` for cavity sds ``1e-3`` to ``100`` with ``|mu| <= 50``, and with ``|mu|`` up to 12 sds.

**Damping**: ``tau <- (1 - d) tau + d tau_new`` (and ``nu``), ``d = damping`` in (0, 1], 1
undamped. **Convergence**: over one sweep, the largest change of a site parameter, relative,
``max |Delta tau| / (1 + |tau|)`` and the same for ``nu``, at most ``tol``, with no site
skipped in that sweep; a fit that runs out
of sweeps says so (``converged=False`` and a ``RuntimeWarning``). **Negative
precisions**: the logistic likelihood is log-concave, so in exact arithmetic every cavity and
site precision is non-negative; a new site precision below 0 by at most ``1e-10`` of the
cavity's is rounding, taken as 0; a site whose cavity precision is not positive or whose new
precision is more negative is not updated in that sweep, and counted (``n_skipped``).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve
from scipy.linalg.blas import dsymv, dsyr
from scipy.special import expit

from lib._validate import as_design_labels, choice, positive_int, positive_scalar, prior_variance
from lib.approx._gaussian import GaussianApproximation, _activation_moments, _gaussian_from_sites
from lib.laplace import ConvergenceError
from lib.likelihood import _log_sigmoid

#: Cavity standard deviation up to which the tilted moments use Gauss-Hermite at the mode.
NARROW_SD = 1.0
_GH_Z, _GH_W = np.polynomial.hermite_e.hermegauss(32)       # weight exp(-z^2 / 2)


def _composite_legendre(panels: int = 48, nodes: int = 8):
    """Composite Gauss-Legendre nodes (panels * nodes,) on [0, 1] and their weights."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    edges = np.linspace(0.0, 1.0, panels + 1)
    h = np.diff(edges)[:, None]
    return (edges[:-1, None] + h * (x + 1.0) / 2.0).ravel(), (h * w / 2.0).ravel()


_GL_X, _GL_W = _composite_legendre()


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
    method: str = "expectation propagation (logistic)"


def _tilted_mode(mu, v):
    """Mode of ``sigma(a) N(a | mu, v)`` per site (no checks): the root of the decreasing
    ``sigma(-a) - (a - mu) / v``, which lies in ``[mu, mu + v]``; Newton's steps, bisection when
    a step leaves the bracket."""
    e = expit(-mu)
    lo, hi = mu.copy(), mu + v
    a = mu + e / (e * (1.0 - e) + 1.0 / v)           # Newton's first step, from mu: in the bracket
    tol = 1e-9 * np.minimum(np.sqrt(v), 1.0 + np.abs(mu))
    for _ in range(200):
        e = expit(-a)
        g = e - (a - mu) / v
        lo, hi = np.where(g > 0, a, lo), np.where(g > 0, hi, a)
        step = g / (e * (1.0 - e) + 1.0 / v)
        if np.all(np.abs(step) <= tol):
            return a + step
        a = np.where((a + step > lo) & (a + step < hi), a + step, 0.5 * (lo + hi))
    return a


def _moments_on_nodes(log_w, a, m):
    """``log`` of the summed weights and the mean and variance of the nodes ``a`` (K, Q) under
    the weights ``exp(log_w)``, the mean computed about ``m`` (K,) against cancellation."""
    top = np.max(log_w, axis=1, keepdims=True)          # log-sum-exp (scipy's is slow here)
    p = np.exp(log_w - top)
    total = np.sum(p, axis=1)
    log_z, p = top[:, 0] + np.log(total), p / total[:, None]
    d = a - m[:, None]
    e1 = np.einsum("ij,ij->i", p, d)
    return log_z, m + e1, np.einsum("ij,ij->i", p, (d - e1[:, None])**2)


def _tilted_moments(mu, v, s):
    """``log Z``, mean and variance of ``sigma(s a) N(a | mu, v) / Z`` per site, arrays (K,)
    (no checks): quadrature adapted to each site (module docstring, "Tilted moments")."""
    mu_s = s * mu                                  # sigma(s a): a -> s a flips the mean only
    m = _tilted_mode(mu_s, v)
    log_z, mean, var = np.empty_like(mu), np.empty_like(mu), np.empty_like(mu)
    # near-Gaussian tilted densities: a narrow cavity, or the step 8 sds or more left of the mode
    narrow = (v <= NARROW_SD**2) | (m >= 8.0 * np.sqrt(v))
    for part, quad in ((narrow, _at_mode_hermite), (~narrow, _asinh_legendre)):
        if np.any(part):
            log_z[part], mean[part], var[part] = quad(mu_s[part], v[part], m[part])
    return log_z - 0.5 * np.log(2.0 * np.pi * v), s * mean, var


def _at_mode_hermite(mu, v, m):
    """Gauss-Hermite centred at the tilted mode ``m``, scaled by its curvature: log of the
    unnormalised ``int sigma(a) exp(-(a - mu)^2 / (2 v)) da``, mean and variance."""
    c = 1.0 / np.sqrt(expit(m) * expit(-m) + 1.0 / v)
    a = m[:, None] + c[:, None] * _GH_Z
    log_w = (np.log(_GH_W) + 0.5 * _GH_Z**2 + np.log(c)[:, None] + _log_sigmoid(a)
             - (a - mu[:, None])**2 / (2.0 * v[:, None]))
    return _moments_on_nodes(log_w, a, m)


def _asinh_legendre(mu, v, m):
    """Composite Gauss-Legendre in ``u = asinh(a / pi)`` over ``m +- 9 sqrt(v)``: as
    :func:`_at_mode_hermite`."""
    sd = np.sqrt(v)
    u0, u1 = np.arcsinh((m - 9.0 * sd) / np.pi), np.arcsinh((m + 9.0 * sd) / np.pi)
    u = u0[:, None] + (u1 - u0)[:, None] * _GL_X
    a, jac = np.pi * np.sinh(u), np.pi * np.cosh(u)                 # a(u), da/du
    log_w = (np.log(_GL_W) + np.log(u1 - u0)[:, None] + np.log(jac) + _log_sigmoid(a)
             - (a - mu[:, None])**2 / (2.0 * v[:, None]))
    return _moments_on_nodes(log_w, a, m)


def _cavity(mu, v, tau, nu):
    """Cavity precision and shift, ``1 / v - tau`` and ``mu / v - nu`` (R&W eq. 3.56)."""
    return 1.0 / v - tau, mu / v - nu


def _log_evidence(Phi, s2, L, m, tau, nu, s):
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
    log_z, _, _ = _tilted_moments(mu_c, v_c, s)
    # log int exp(-tau a^2/2 + nu a) N(a | mu_c, v_c) da, with 1/v_c + tau = 1/v
    log_site = -0.5 * np.log1p(tau * v_c) + 0.5 * (nu_c + nu)**2 * v - 0.5 * mu_c**2 / v_c
    b = Phi.T @ nu
    M = m.shape[0]
    return float(np.sum(log_z - log_site) - 0.5 * M * np.log(s2)
                 - np.sum(np.log(np.diag(L))) + 0.5 * m @ b)


def fit_ep(Phi, y, s2, *, schedule: str = "sequential", damping: float | None = None,
           max_iter: int = 1000, tol: float = 1e-9) -> EPPosterior:
    """Expectation propagation for the logistic likelihood.

    ``Phi`` (N, M) the design, ``y`` (N,) labels 0/1, ``s2`` the prior variance of
    ``w ~ N(0, s2 I)``; ``schedule`` ``"sequential"`` (site by site, ``q`` updated after each by
    a rank-one step and rebuilt by Cholesky after each sweep: R&W alg. 3.5, robust) or
    ``"parallel"`` (all sites from one ``q``, then ``q`` rebuilt: one Cholesky per sweep, fast for
    large N, but it can diverge from the prior when the cavities are wide, e.g. on unstandardised
    inputs: then lower ``damping``); ``damping`` in (0, 1] the step towards the new sites (1
    undamped; ``None``: 1 sequential, 0.5 parallel); ``max_iter`` the most sweeps; ``tol`` the convergence test (module docstring).
    Starts from the prior (all sites zero). Returns an :class:`EPPosterior`; if ``max_iter`` ran
    out, ``converged=False`` and a ``RuntimeWarning`` says so.
    """
    Phi, y = as_design_labels(Phi, y, ("Phi", "y"))
    schedule = choice(schedule, "schedule", ("sequential", "parallel"))
    damping = (1.0 if schedule == "sequential" else 0.5) if damping is None else damping
    damping = positive_scalar(damping, "damping")
    if damping > 1.0:
        raise ValueError(f"damping must be in (0, 1] (1 undamped), got {damping!r}")
    return _fit_ep(Phi, y, prior_variance(s2, "s2"), schedule, damping,
                   positive_int(max_iter, "max_iter"), positive_scalar(tol, "tol"))


def _site_update(mu, v, tau, nu, s, damping):
    """Damped new sites ``tau, nu`` from ``q``'s activation moments ``mu, v`` (arrays (K,)), and
    how many were skipped (a non-positive cavity precision or a negative new site precision)."""
    tau_c, nu_c = _cavity(mu, v, tau, nu)            # R&W eq. 3.56
    ok = tau_c > 0
    tau_c = np.where(ok, tau_c, 1.0)                 # placeholder, never used where not ok
    _, mu_hat, v_hat = _tilted_moments(nu_c / tau_c, 1.0 / tau_c, s)        # eq. 3.58
    tau_new = 1.0 / v_hat - tau_c                    # eq. 3.59
    tau_new = np.where(tau_new < 0, np.where(tau_new > -1e-10 * tau_c, 0.0, -1.0), tau_new)
    ok &= tau_new >= 0                               # (rounding below 0 taken as 0)
    tau_next = np.where(ok, (1.0 - damping) * tau + damping * tau_new, tau)
    nu_next = np.where(ok, (1.0 - damping) * nu + damping * (mu_hat / v_hat - nu_c), nu)
    return tau_next, nu_next, int(ok.size - np.sum(ok))


def _parallel_sweep(Phi, s, tau, nu, L, m, damping):
    """Every site from the same ``q``; the new sites (no checks)."""
    mu, v = _activation_moments(Phi, L, m)
    return _site_update(mu, v, tau, nu, s, damping)


def _sequential_sweep(Phi, s, tau, nu, L, m, damping):
    """The sites one by one, ``q`` (covariance ``S``, mean ``m``) updated after each by
    Sherman-Morrison for ``A + dtau phi phi^T``, ``b + dnu phi`` (BLAS ``dsymv``/``dsyr`` on
    ``S``'s lower triangle, in place); the new sites (no checks)."""
    S = np.asfortranarray(cho_solve((L, True), np.eye(L.shape[0])))
    m, tau, nu, skipped = m.copy(), tau.copy(), nu.copy(), 0
    for n, phi in enumerate(Phi):
        s_phi = dsymv(1.0, S, phi, lower=1)
        mu, v = phi @ m, phi @ s_phi
        t, u, k = _site_update(np.array([mu]), np.array([v]), tau[n:n + 1], nu[n:n + 1],
                               s[n:n + 1], damping)
        d_tau, d_nu, skipped = t[0] - tau[n], u[0] - nu[n], skipped + k
        c = 1.0 + d_tau * v                          # = (tau_c + tau_new) / (tau_c + tau) > 0
        S = dsyr(-d_tau / c, s_phi, a=S, lower=1, overwrite_a=1)
        m += s_phi * ((d_nu - d_tau * mu) / c)
        tau[n], nu[n] = t[0], u[0]
    return tau, nu, skipped


def _fit_ep(Phi, y, s2, schedule, damping, max_iter, tol) -> EPPosterior:
    """:func:`fit_ep` on checked arguments (no checks)."""
    sweep = _sequential_sweep if schedule == "sequential" else _parallel_sweep
    s = 2.0 * y - 1.0
    tau, nu = np.zeros(Phi.shape[0]), np.zeros(Phi.shape[0])      # R&W alg. 3.5: sites at 0
    L, m = _gaussian_from_sites(Phi, s2, tau, Phi.T @ nu)
    n_skipped, converged = 0, False
    for it in range(1, max_iter + 1):
        tau_next, nu_next, skipped = sweep(Phi, s, tau, nu, L, m, damping)
        change = max(np.max(np.abs(tau_next - tau) / (1.0 + np.abs(tau))),
                     np.max(np.abs(nu_next - nu) / (1.0 + np.abs(nu))))
        tau, nu, n_skipped = tau_next, nu_next, n_skipped + skipped
        L, m = _gaussian_from_sites(Phi, s2, tau, Phi.T @ nu)     # q from all sites, by Cholesky
        if change <= tol and skipped == 0:
            converged = True
            break
    if not converged:
        warnings.warn(f"fit_ep ({schedule}, damping {damping:g}) did not converge in {max_iter} "
                      f"sweeps: the sites still changed by {change:.2g} (relative; tol = {tol:.2g}) "
                      f"and {skipped} site update(s) were skipped in the last sweep; the result "
                      "(converged=False) is not EP's fixed point"
                      + ("; try schedule='sequential'" if schedule == "parallel" else ""),
                      RuntimeWarning, stacklevel=3)
    return EPPosterior(mean=m, chol=L, s2=s2, site_precision=tau, site_shift=nu,
                       log_evidence=_log_evidence(Phi, s2, L, m, tau, nu, s),
                       n_iter=it, converged=converged, n_skipped=n_skipped,
                       method=f"expectation propagation (logistic, {schedule})")
