"""Softmax regression for K classes: likelihood, Newton MAP, Laplace posterior, predictive.

Notation (chapters/intro.md): the weights of class k are ``w_k`` (length M), stacked class by
class into one vector ``w = (w_1, ..., w_K)`` of length KM; the matrix ``W`` has shape (M, K),
column k is ``w_k``. ``Phi`` is the design matrix (N, M), ``Y`` the one-hot labels (N, K).
The log-likelihood is ``L(w) = sum_n sum_k y_nk log s_nk`` with ``s_n = softmax(W^T phi_n)``
{cite}`notesch7`, and the log posterior ``Psi(w) = L(w) - w^T w / (2 s2)`` under the prior
``N(0, s2 I)``. Laplace: ``A = -grad grad Psi`` at the MAP, posterior ``N(w_MAP, A^{-1})``
{cite}`bishop2006prml` (sections 4.3.4, 4.4).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular
from scipy.special import log_softmax, softmax

from lib import _validate
from lib.laplace import ConvergenceError, _step_halving


def one_hot(y, K: int | None = None, *, name: str = "y", length: int | None = None) -> np.ndarray:
    """Integer labels 0..K-1 (length N) -> one-hot matrix (N, K) of 0.0/1.0; labels checked by
    :func:`lib._validate.as_class_labels` (errors name ``name``), ``K`` by default the largest
    label plus one."""
    if K is not None:
        K = _validate.positive_int(K, "K")
    y = _validate.as_class_labels(y, name, K=K, length=length)
    K = int(y.max()) + 1 if K is None else K
    return np.eye(K)[y]


def _check(w, Phi, Y):
    Phi = _validate.as_design(Phi, "Phi")
    Y = _validate.as_one_hot(Y, "Y", length=Phi.shape[0])
    M, K = Phi.shape[1], Y.shape[1]
    w = _validate.as_vector(w, "w", length=K * M)
    return w.reshape(K, M).T, Phi, Y


def log_likelihood(w, Phi, Y) -> float:
    """L(w) = sum_n sum_k y_nk log softmax_k(W^T phi_n)."""
    W, Phi, Y = _check(w, Phi, Y)
    return float(np.sum(Y * log_softmax(Phi @ W, axis=1)))


def gradient(w, Phi, Y) -> np.ndarray:
    """grad_{w_k} L = sum_n (y_nk - s_nk) phi_n, stacked class by class (length KM)."""
    W, Phi, Y = _check(w, Phi, Y)
    S = softmax(Phi @ W, axis=1)
    return (Phi.T @ (Y - S)).T.ravel()


def hessian(w, Phi, Y=None) -> np.ndarray:
    """grad grad L: block (j, k) = -sum_n s_nj (delta_jk - s_nk) phi_n phi_n^T, shape (KM, KM)."""
    Phi = _validate.as_design(Phi, "Phi")
    M = Phi.shape[1]
    w = _validate.as_vector(w, "w")
    if w.size % M:
        raise ValueError(f"w has length {w.size}, not a multiple of M = {M}")
    K = w.size // M
    if Y is not None:
        _validate.as_one_hot(Y, "Y", length=Phi.shape[0])
    S = softmax(Phi @ w.reshape(K, M).T, axis=1)
    H = np.empty((K * M, K * M))
    for j in range(K):
        for k in range(j, K):
            c = S[:, j] * ((j == k) - S[:, k])
            B = -(Phi.T * c) @ Phi
            H[j * M:(j + 1) * M, k * M:(k + 1) * M] = B
            H[k * M:(k + 1) * M, j * M:(j + 1) * M] = B.T
    return H


def log_posterior(w, Phi, Y, s2) -> float:
    """Psi(w) = L(w) - w^T w / (2 s2) (unnormalised log posterior)."""
    s2 = _validate.positive_scalar(s2, "s2")
    w = _validate.as_vector(w, "w")
    return log_likelihood(w, Phi, Y) - w @ w / (2 * s2)


@dataclass(frozen=True)
class SoftmaxLaplace:
    """Laplace posterior N(w_map, A^{-1}); ``L`` is the lower Cholesky factor of A."""

    w_map: np.ndarray
    L: np.ndarray
    s2: float
    K: int
    M: int
    n_iter: int
    """Newton steps taken."""

    @property
    def W_map(self) -> np.ndarray:
        """The MAP weights as an (M, K) matrix, column k = w_k."""
        return self.w_map.reshape(self.K, self.M).T

    @property
    def covariance(self) -> np.ndarray:
        """A^{-1}, shape (KM, KM)."""
        Linv = solve_triangular(self.L, np.eye(self.L.shape[0]), lower=True)
        return Linv.T @ Linv


def fit_softmax_laplace(Phi, Y, s2, *, tol: float = 1e-10, max_iter: int = 100) -> SoftmaxLaplace:
    """MAP by Newton's method with step halving, then the Laplace posterior.

    Each step solves ``A d = grad Psi`` with ``A = -grad grad L + I / s2`` (Cholesky of the
    KM x KM precision), halved until Psi does not decrease (:func:`lib.laplace._step_halving`).
    Stops when the largest gradient entry is below ``tol``; ``n_iter`` counts the steps taken.
    """
    Phi = _validate.as_design(Phi, "Phi")
    Y = _validate.as_one_hot(Y, "Y", length=Phi.shape[0])
    s2 = _validate.positive_scalar(s2, "s2")
    tol = _validate.positive_scalar(tol, "tol")
    max_iter = _validate.positive_int(max_iter, "max_iter")
    M, K = Phi.shape[1], Y.shape[1]
    w = np.zeros(K * M)
    psi = log_posterior(w, Phi, Y, s2)
    for it in range(1, max_iter + 1):
        g = gradient(w, Phi, Y) - w / s2
        A = -hessian(w, Phi) + np.eye(K * M) / s2
        if np.max(np.abs(g)) < tol:
            break
        d = cho_solve(_cho_factor(A, s2), g)
        t, psi = _step_halving(lambda t: log_posterior(w + t * d, Phi, Y, s2), psi)
        w = w + t * d
    else:
        raise ConvergenceError(f"max_iter = {max_iter} Newton steps were not enough: the "
                               f"largest gradient entry is still above tol = {tol:g}")
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        _cho_factor(A, s2)                   # raises the error naming s2
        raise
    return SoftmaxLaplace(w_map=w, L=L, s2=s2, K=K, M=M, n_iter=it - 1)


def _cho_factor(A, s2):
    """``cho_factor(A, lower=True)``, or a :class:`lib.ConvergenceError` naming ``s2`` when the
    precision is not positive definite in floating point: the softmax likelihood is flat along
    the K directions that add one vector to every class's weights, so there ``A`` is ``I / s2``
    alone, lost to rounding against the curvature once ``s2`` is very large."""
    try:
        return cho_factor(A, lower=True)
    except np.linalg.LinAlgError:
        raise ConvergenceError(
            f"s2 = {s2:.3g} is too large: the posterior precision A = I/s2 - grad grad L is not "
            "positive definite in floating point (the softmax likelihood leaves K directions "
            "to the prior alone); use a smaller s2") from None


def activation_moments(post: SoftmaxLaplace, Phi_star):
    """Mean (N*, K) and covariance (N*, K, K) of the activations a = W^T phi under the posterior."""
    _validate.instance(post, "post", SoftmaxLaplace)
    Phi_star = _validate.as_design(Phi_star, "Phi_star", n_cols=post.M)
    mean = Phi_star @ post.W_map
    C = post.covariance.reshape(post.K, post.M, post.K, post.M)
    cov = np.einsum("nm,jmkp,np->njk", Phi_star, C, Phi_star)
    return mean, cov


def predictive_mc(post: SoftmaxLaplace, Phi_star, n_samples: int = 4000, seed: int = 0):
    """Monte Carlo p(C_k | phi) = E[softmax(a)] over a ~ N(mean, cov) per point, seeded."""
    n_samples = _validate.positive_int(n_samples, "n_samples")
    seed = _validate.seed(seed)
    mean, cov = activation_moments(post, Phi_star)
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n_samples, post.K))
    chol = np.linalg.cholesky(cov + 1e-12 * np.eye(post.K))
    a = mean[:, None, :] + np.einsum("njk,sk->nsj", chol, z)
    return softmax(a, axis=2).mean(axis=1)


def predictive_moderated(post: SoftmaxLaplace, Phi_star):
    """Closed-form approximation: softmax of the centred means, each moderated by its variance.

    The softmax is unchanged by adding one number to every activation, so the activations are
    first centred, ``c = a - mean_k(a_k)`` (mean ``mu_c``, covariance ``P Sigma P`` with
    ``P = I - 11^T / K``); each class's ``mu_c,k`` is then divided by
    ``sqrt(1 + pi sigma_c,k^2 / 8)`` as in the binary probit approximation (Bishop 2006,
    section 4.5.2) and passed through the softmax. Correlations between classes are ignored:
    an approximation, not exact (the chapter compares it with Monte Carlo).
    """
    mean, cov = activation_moments(post, Phi_star)
    P = np.eye(post.K) - 1.0 / post.K
    mean_c = mean @ P
    var_c = np.einsum("ij,njk,ki->ni", P, cov, P)
    return softmax(mean_c / np.sqrt(1 + np.pi * var_c / 8), axis=1)
