"""The Jaakkola-Jordan variational bound for Bayesian logistic regression.

Bishop (2006) §10.6; Jaakkola & Jordan (2000). The logistic sigmoid is bounded below by a
Gaussian-shaped function of the activation ``a = w^T phi`` (Bishop eq. 10.144)::

    sigma(a) >= sigma(xi) exp((a - xi) / 2 - lambda(xi) (a^2 - xi^2)),
    lambda(xi) = tanh(xi / 2) / (4 xi) = (sigma(xi) - 1/2) / (2 xi),

one variational parameter ``xi_n`` per data point. With the prior ``N(0, s2 I)`` the bound on
the joint is Gaussian in ``w``, so ``q(w) = N(m, S)`` (Bishop eq. 10.156-10.158)::

    S^{-1} = I / s2 + 2 Phi^T Lambda Phi,   m = S Phi^T (y - 1/2),   Lambda = diag(lambda(xi_n)),

and maximising the bound over ``xi`` (an EM step, Bishop eq. 10.163) gives::

    xi_n^2 = phi_n^T (S + m m^T) phi_n.

Each step raises the lower bound on ``log Z`` (Bishop eq. 10.164). Its optimum treats each
``xi_n`` like the mean of a Polya-Gamma variable (Polson, Scott & Windle 2013): the same
Gaussian update is the mean-field scheme with ``E[omega_n] = tanh(xi_n / 2) / (2 xi_n)``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from lib._validate import as_design_labels, positive_int, positive_scalar, prior_variance
from lib.approx._gaussian import GaussianApproximation, _activation_moments, _gaussian_from_sites
from lib.likelihood import _log_sigmoid


@dataclass(frozen=True)
class VariationalPosterior(GaussianApproximation):
    """``q(w) = N(mean, S)``, ``S^{-1} = L L^T`` (``chol``), from :func:`fit_vb`.

    ``xi`` (N,) the variational parameters; ``elbo`` the lower bound on ``log Z`` at them;
    ``elbo_trace`` (n_iter,) the bound after each update (non-decreasing); ``n_iter`` the
    updates made; ``converged`` whether the tolerance was met; ``method`` what produced it.
    """

    xi: np.ndarray
    elbo: float
    elbo_trace: np.ndarray
    n_iter: int
    converged: bool
    method: str = "variational bound (Jaakkola-Jordan)"

    @property
    def log_evidence(self) -> float:
        """The ELBO: a lower bound on ``log Z``, not an estimate of it."""
        return self.elbo


def jj_lambda(xi) -> np.ndarray:
    """``lambda(xi) = tanh(xi / 2) / (4 xi)``, its limit ``1/8 - xi^2 / 96`` near 0 (no checks)."""
    xi = np.abs(np.asarray(xi, dtype=float))
    small = xi < 1e-4                                   # series error < 1e-18 there
    safe = np.where(small, 1.0, xi)
    return np.where(small, 0.125 - xi**2 / 96.0, np.tanh(safe / 2.0) / (4.0 * safe))


def _elbo(L, m, b, xi, lam, s2):
    """Bishop eq. 10.164 with ``m_0 = 0``, ``S_0 = s2 I`` (no checks)::

        (1/2) log(|S| / |S_0|) + (1/2) m^T S^{-1} m
            + sum_n [log sigma(xi_n) - xi_n / 2 + lambda(xi_n) xi_n^2]
    """
    M = m.shape[0]
    log_det_S = -2.0 * np.sum(np.log(np.diag(L)))                  # |S| = |L|^{-2}
    quad = float(m @ b)                                             # m^T S^{-1} m, S^{-1} m = b
    sites = np.sum(_log_sigmoid(xi) - xi / 2.0 + lam * xi**2)
    return float(0.5 * (log_det_S - M * np.log(s2)) + 0.5 * quad + sites)


def fit_vb(Phi, y, s2, *, max_iter: int = 500, tol: float = 1e-10) -> VariationalPosterior:
    """The Jaakkola-Jordan variational posterior and its lower bound on ``log Z``.

    ``Phi`` (N, M) the design, ``y`` (N,) labels 0/1, ``s2`` the prior variance of
    ``w ~ N(0, s2 I)``; ``max_iter`` the most ``xi`` updates; ``tol``: converged when the bound
    rises by at most ``tol (1 + |ELBO|)`` and ``max |Delta xi| <= sqrt(tol) (1 + max xi)``.
    Starts from ``xi = 0`` (``lambda = 1/8``). Returns a :class:`VariationalPosterior`; if
    ``max_iter`` ran out, ``converged=False`` and a ``RuntimeWarning`` says so.
    """
    Phi, y = as_design_labels(Phi, y, ("Phi", "y"))
    return _fit_vb(Phi, y, prior_variance(s2, "s2"), positive_int(max_iter, "max_iter"),
                   positive_scalar(tol, "tol"))


def _fit_vb(Phi, y, s2, max_iter, tol) -> VariationalPosterior:
    """:func:`fit_vb` on checked arguments (no checks)."""
    b = Phi.T @ (y - 0.5)                       # S^{-1} m = Phi^T (t - 1/2) (Bishop eq. 10.157)
    xi = np.zeros(Phi.shape[0])
    trace, converged = [], False
    for it in range(1, max_iter + 1):
        lam = jj_lambda(xi)                     # Bishop eq. 10.150
        L, m = _gaussian_from_sites(Phi, s2, 2.0 * lam, b)       # eq. 10.157-10.158
        trace.append(_elbo(L, m, b, xi, lam, s2))                # eq. 10.164
        mu, v = _activation_moments(Phi, L, m)
        xi_new = np.sqrt(v + mu**2)             # xi^2 = phi^T (S + m m^T) phi (eq. 10.163)
        if it > 1 and (trace[-1] - trace[-2] <= tol * (1.0 + abs(trace[-1]))
                       and np.max(np.abs(xi_new - xi)) <= np.sqrt(tol) * (1.0 + np.max(xi))):
            converged = True
            break
        xi = xi_new
    if not converged:
        warnings.warn(f"fit_vb did not converge in {max_iter} updates: the bound still rose by "
                      f"{trace[-1] - trace[-2]:.2g} at the last (tol = {tol:.2g}); the result "
                      "(converged=False) is a valid lower bound but not its maximum",
                      RuntimeWarning, stacklevel=3)
    return VariationalPosterior(mean=m, chol=L, s2=s2, xi=xi, elbo=trace[-1],
                                elbo_trace=np.array(trace), n_iter=it, converged=converged)
