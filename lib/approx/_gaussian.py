"""The Gaussian ``q(w) = N(mean, A^{-1})`` both approximations return (shared fields)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular

from lib.laplace import ConvergenceError


@dataclass(frozen=True)
class GaussianApproximation:
    """``q(w) = N(mean, A^{-1})``: ``mean`` (M,), ``chol`` (M, M) the lower Cholesky factor ``L``
    of the precision ``A = L L^T``, ``s2`` the prior variance of ``w ~ N(0, s2 I)``."""

    mean: np.ndarray
    chol: np.ndarray
    s2: float

    @property
    def n_weights(self) -> int:
        """Number of weights M."""
        return self.mean.shape[0]

    @property
    def cov(self) -> np.ndarray:
        """``A^{-1}``, shape (M, M), by Cholesky solves (``A`` is never inverted)."""
        return cho_solve((self.chol, True), np.eye(self.n_weights))

    @property
    def marginal_variances(self) -> np.ndarray:
        """``diag(A^{-1})``, shape (M,): squared column norms of ``L^{-1}``."""
        L_inv = solve_triangular(self.chol, np.eye(self.n_weights), lower=True)
        return np.einsum("ij,ij->j", L_inv, L_inv)


def _gaussian_from_sites(Phi, s2, tau, b):
    """Cholesky ``L`` of ``A = I / s2 + Phi^T diag(tau) Phi`` and the mean ``A^{-1} b`` (no
    checks), or a :class:`lib.laplace.ConvergenceError` if ``A`` is not positive definite."""
    A = (Phi.T * tau) @ Phi
    A[np.diag_indices_from(A)] += 1.0 / s2
    try:
        L = cholesky(A, lower=True)
    except np.linalg.LinAlgError:
        raise ConvergenceError(f"s2 = {s2:.3g} is too large for this design: the precision "
                               "I/s2 + Phi^T T Phi is not positive definite in floating point; "
                               "use a smaller s2") from None
    return L, cho_solve((L, True), b)


def _activation_moments(Phi, L, m):
    """Mean ``phi_n^T m`` and variance ``phi_n^T A^{-1} phi_n`` of each activation (no checks)."""
    V = solve_triangular(L, Phi.T, lower=True)
    return Phi @ m, np.einsum("ij,ij->j", V, V)
