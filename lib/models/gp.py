"""Gaussian-process (function-space) Laplace classification (book chapter "The function-space
view"; Hennig, lecture 14; Rasmussen & Williams (2006), section 3.4, algorithms 3.1, 3.2, 5.1).

With the prior ``w ~ N(0, s2 I)`` on the weights of a design ``Phi``, the latent function
``f = Phi w`` is a Gaussian process with kernel ``k(x, x') = s2 phi(x).phi(x')``
(:func:`basis_kernel`). The same Laplace approximation, written for ``f`` at the N training
inputs instead of for the M weights, needs only the N x N Gram matrix ``K``; the stationary
kernel ``k(x, x') = s_f^2 exp(-|x - x'|^2 / (2 l^2))`` (:func:`rbf_kernel`) is the limit of
infinitely many radial-basis functions.

Labels are 0/1 (``t`` in R&W's eq. 3.15, ``t = (y + 1)/2``); the likelihood is logistic,
``log p(y | f) = sum_n log sigma((2 y_n - 1) f_n)`` (:func:`lib.likelihood.log_sigmoid`), with
gradient ``y - pi``, curvature ``W = diag(pi (1 - pi))``, ``pi = sigma(f)``, and third
derivative ``-pi (1 - pi)(1 - 2 pi)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cholesky, solve_triangular

from lib._validate import width as check_width
from lib._validate import as_labels, as_matrix, positive_int, positive_scalar
from lib.features import squared_distances
from lib.laplace import ConvergenceError
from lib.likelihood import log_likelihood_from_activations, logistic_curvature, sigmoid


def basis_kernel(Phi_a, Phi_b, s2) -> np.ndarray:
    """The kernel of a finite basis with prior ``w ~ N(0, s2 I)``: ``s2 Phi_a Phi_b^T``.

    Parameters
    ----------
    Phi_a : array_like, shape (A, M)
    Phi_b : array_like, shape (B, M)
    s2 : float
        Prior variance of the weights.

    Returns
    -------
    ndarray, shape (A, B)
    """
    Phi_a = as_matrix(Phi_a, "Phi_a")
    Phi_b = as_matrix(Phi_b, "Phi_b", n_cols=Phi_a.shape[1])
    return positive_scalar(s2, "s2") * (Phi_a @ Phi_b.T)


def rbf_kernel(X_a, X_b, signal_var, width) -> np.ndarray:
    """Stationary RBF kernel ``s_f^2 exp(-|x - x'|^2 / (2 l^2))``.

    Parameters
    ----------
    X_a : array_like, shape (A, D)
    X_b : array_like, shape (B, D)
    signal_var : float
        ``s_f^2 > 0``, the prior variance of ``f(x)`` at every ``x``.
    width : float
        Length scale ``l > 0``.

    Returns
    -------
    ndarray, shape (A, B)
    """
    signal_var = positive_scalar(signal_var, "signal_var")
    width = check_width(width, "width")
    return signal_var * np.exp(-squared_distances(X_a, X_b) / (2.0 * width**2))


@dataclass(frozen=True)
class GPLaplace:
    """Laplace approximation of a GP classifier at the training inputs (R&W algorithm 3.1).

    Attributes
    ----------
    f_hat : ndarray, shape (N,)
        Posterior mode of the latent ``f`` at the training inputs.
    grad : ndarray, shape (N,)
        ``grad log p(y | f_hat) = y - pi``; at the mode ``f_hat = K grad`` (``a`` of line 7).
    sqrt_w : ndarray, shape (N,)
        ``W^1/2`` at the mode.
    chol : ndarray, shape (N, N)
        Lower Cholesky factor ``L`` of ``B = I + W^1/2 K W^1/2`` (line 5).
    log_likelihood : float
        ``log p(y | f_hat)``.
    log_evidence : float
        Laplace log marginal likelihood ``log q(y | X)`` (line 10).
    n_iter : int
        Newton iterations.
    """

    f_hat: np.ndarray
    grad: np.ndarray
    sqrt_w: np.ndarray
    chol: np.ndarray
    log_likelihood: float
    log_evidence: float
    n_iter: int


def fit_gp_laplace(K, y, *, tol: float = 1e-12, max_iter: int = 100) -> GPLaplace:
    """Mode, ``B`` and log marginal likelihood by R&W algorithm 3.1.

    Line 2 ``f = 0``; each iteration: line 4 ``W = diag(pi (1 - pi))``; line 5
    ``L = cholesky(I + W^1/2 K W^1/2)``; line 6 ``b = W f + grad log p(y | f)``; line 7
    ``a = b - W^1/2 L^T \\ (L \\ (W^1/2 K b))``; line 8 ``f = K a``; line 9: until
    ``max |Delta f| <= tol (1 + max |f|)``. Line 10 ``log q = -a.f / 2 + log p(y | f) -
    sum_i log L_ii``, with ``W``, ``L`` and ``a = grad log p(y | f)`` recomputed at the final
    mode (so that ``a`` and ``f`` are consistent to rounding). No step halving: the logistic
    Newton iteration from ``f = 0`` converges on the problems of the book.

    Parameters
    ----------
    K : array_like, shape (N, N)
        Prior covariance (Gram matrix) of ``f`` at the training inputs.
    y : array_like, shape (N,)
        Labels 0/1.
    tol : float
        Relative tolerance on the change of ``f``.
    max_iter : int

    Returns
    -------
    GPLaplace

    Raises
    ------
    ConvergenceError
        If the tolerance is not met within ``max_iter`` iterations.
    """
    K = as_matrix(K, "K")
    N = K.shape[0]
    K = as_matrix(K, "K", n_cols=N)
    y = as_labels(y, "y", length=N)
    tol = positive_scalar(tol, "tol")
    max_iter = positive_int(max_iter, "max_iter")
    f = np.zeros(N)
    for it in range(1, max_iter + 1):
        pi = sigmoid(f)
        w = logistic_curvature(f)
        sw = np.sqrt(w)
        L = _chol_b(K, sw)
        b = w * f + (y - pi)
        c = solve_triangular(L, sw * (K @ b), lower=True)
        a = b - sw * solve_triangular(L, c, lower=True, trans="T")
        f_new = K @ a
        step = np.max(np.abs(f_new - f))
        f = f_new
        if step <= tol * (1.0 + np.max(np.abs(f))):
            break
    else:
        raise ConvergenceError(f"Newton (algorithm 3.1) did not converge in {max_iter} iterations")
    pi = sigmoid(f)
    sw = np.sqrt(logistic_curvature(f))
    L = _chol_b(K, sw)
    grad = y - pi
    loglik = log_likelihood_from_activations(f, y)
    log_q = -0.5 * float(grad @ f) + loglik - float(np.sum(np.log(np.diag(L))))
    return GPLaplace(f, grad, sw, L, loglik, log_q, it)


def _chol_b(K, sw):
    B = sw[:, None] * K * sw[None, :]
    B[np.diag_indices_from(B)] += 1.0
    return cholesky(B, lower=True)


def predict_latent(fit: GPLaplace, K_star, k_star_diag) -> tuple[np.ndarray, np.ndarray]:
    """Predictive mean and variance of the latent ``f(x_*)`` by R&W algorithm 3.2.

    Line 4 ``mean = k_*^T grad log p(y | f_hat)``; line 5 ``v = L \\ (W^1/2 k_*)``;
    line 6 ``var = k(x_*, x_*) - v.v``. (Line 7, the averaged probability, is
    :func:`lib.predictive.logistic_gaussian_expectation` of these moments.)

    Parameters
    ----------
    fit : GPLaplace
    K_star : array_like, shape (N, S)
        ``k(x_n, x_*)`` between the training and the S test inputs.
    k_star_diag : array_like, shape (S,)
        Prior variances ``k(x_*, x_*)``.

    Returns
    -------
    mean, var : ndarray, shape (S,)
    """
    K_star = as_matrix(K_star, "K_star")
    if K_star.shape[0] != fit.f_hat.shape[0]:
        raise ValueError(f"K_star must have {fit.f_hat.shape[0]} rows, got {K_star.shape[0]}")
    k_diag = np.asarray(k_star_diag, dtype=float).reshape(-1)
    if k_diag.shape[0] != K_star.shape[1]:
        raise ValueError("k_star_diag must have one entry per column of K_star")
    mean = K_star.T @ fit.grad
    v = solve_triangular(fit.chol, fit.sqrt_w[:, None] * K_star, lower=True)
    return mean, k_diag - np.einsum("ns,ns->s", v, v)


def rbf_evidence_gradient(X_train, y_train, signal_var, width) -> tuple[float, np.ndarray, GPLaplace]:
    """Log marginal likelihood of the RBF-kernel GP and its gradient in ``(log s_f^2, log l)``.

    R&W algorithm 5.1: after the mode (lines 2-3, :func:`fit_gp_laplace`), line 4
    ``log Z``; line 5 ``R = W^1/2 L^T \\ (L \\ W^1/2)``; line 6 ``C = L \\ (W^1/2 K)``;
    line 7 ``s2 = 1/2 diag(diag(K) - diag(C^T C)) grad^3 log p(y | f_hat)``; for each
    hyper-parameter (lines 8-13) with ``C = dK/dtheta_j``: ``s1 = a^T C a / 2 - tr(R C)/2``,
    ``b = C grad log p``, ``s3 = b - K R b``, ``d log Z / d theta_j = s1 + s2.s3``.
    Here ``dK/dlog s_f^2 = K`` and ``dK/dlog l = K * |x - x'|^2 / l^2``.

    Sign of line 7: ``d log q / d f_i = -(1/2) d log|B| / d f_i``, and ``d W_ii / d f_i =
    -grad^3 log p``, so ``s2`` is *plus* one half of ``diag(Sigma)`` times the third
    derivative (with ``-1/2`` the implicit term would have the wrong sign; the gradient
    here matches central finite differences, see ``tests/test_gp.py``).

    Parameters
    ----------
    X_train : array_like, shape (N, D)
    y_train : array_like, shape (N,)
        Labels 0/1.
    signal_var, width : float
        ``s_f^2`` and ``l``.

    Returns
    -------
    log_evidence : float
    gradient : ndarray, shape (2,)
        ``(d log Z / d log s_f^2, d log Z / d log l)``.
    fit : GPLaplace
    """
    X_train = as_matrix(X_train, "X_train")
    d2 = squared_distances(X_train, X_train)
    width = check_width(width, "width")
    K = positive_scalar(signal_var, "signal_var") * np.exp(-d2 / (2.0 * width**2))
    fit = fit_gp_laplace(K, y_train)
    L, sw, a = fit.chol, fit.sqrt_w, fit.grad
    R = sw[:, None] * solve_triangular(L, solve_triangular(L, np.diag(sw), lower=True),
                                       lower=True, trans="T")
    C = solve_triangular(L, sw[:, None] * K, lower=True)
    pi = sigmoid(fit.f_hat)
    third = -pi * (1.0 - pi) * (1.0 - 2.0 * pi)
    s2 = 0.5 * (np.diag(K) - np.einsum("ij,ij->j", C, C)) * third
    grads = []
    for dK in (K, K * d2 / width**2):
        s1 = 0.5 * float(a @ dK @ a) - 0.5 * float(np.einsum("ij,ji->", R, dK))
        b = dK @ a
        s3 = b - K @ (R @ b)
        grads.append(s1 + float(s2 @ s3))
    return fit.log_evidence, np.array(grads), fit


def newton_cg(K, y, cg_rtol, *, max_newton: int = 30, tol: float = 1e-12):
    """R&W algorithm 3.1 with the Newton system of line 7 solved by conjugate gradients.

    Line 7 needs ``z = B^{-1} W^1/2 K b`` with ``B = I + W^1/2 K W^1/2`` (symmetric, positive
    definite, eigenvalues ``>= 1``). Instead of the Cholesky factor, ``z`` is approximated by
    :func:`scipy.sparse.linalg.cg` (lecture 14's iterative numerics: each iteration one product
    with ``B``), started from the previous Newton step's ``z`` and stopped at the relative
    residual ``cg_rtol`` (an inexact Newton method). Newton stops as in
    :func:`fit_gp_laplace` or after ``max_newton`` steps. The log marginal likelihood of
    line 10 is evaluated at the final ``f = K a`` with the exact ``log|B|`` (Cholesky), so its
    error is that of the inexact mode alone.

    Parameters
    ----------
    K : array_like, shape (N, N)
    y : array_like, shape (N,)
        Labels 0/1.
    cg_rtol : float
        Relative residual at which each CG solve stops.
    max_newton : int
    tol : float
        Relative tolerance on the change of ``f``.

    Returns
    -------
    log_evidence : float
    n_cg : int
        CG iterations over all Newton steps (products with ``B``).
    residuals : ndarray
        Relative residuals ``|r_k| / |rhs|`` of the first Newton step's CG solve, one per CG
        iteration (from the ``callback``).
    """
    from scipy.sparse.linalg import LinearOperator, cg

    K = as_matrix(K, "K")
    N = K.shape[0]
    y = as_labels(y, "y", length=N)
    cg_rtol = positive_scalar(cg_rtol, "cg_rtol")
    max_newton = positive_int(max_newton, "max_newton")
    f, z = np.zeros(N), np.zeros(N)
    history = []
    for _ in range(max_newton):
        pi = sigmoid(f)
        w = logistic_curvature(f)
        sw = np.sqrt(w)
        B = LinearOperator((N, N), matvec=lambda v, sw=sw: v + sw * (K @ (sw * v)), dtype=float)
        b = w * f + (y - pi)
        rhs = sw * (K @ b)
        norm = float(np.linalg.norm(rhs))
        residuals = []

        def record(zk, B=B, rhs=rhs, norm=norm, residuals=residuals):
            residuals.append(float(np.linalg.norm(rhs - B.matvec(zk))) / norm)

        z, _ = cg(B, rhs, x0=z, rtol=cg_rtol, atol=0.0, maxiter=10 * N, callback=record)
        history.append(residuals)
        a = b - sw * z
        f_new = K @ a
        step = np.max(np.abs(f_new - f))
        f = f_new
        if step <= tol * (1.0 + np.max(np.abs(f))):
            break
    L = _chol_b(K, np.sqrt(logistic_curvature(f)))
    log_q = -0.5 * float(a @ f) + log_likelihood_from_activations(f, y) - float(np.sum(np.log(np.diag(L))))
    return log_q, sum(len(r) for r in history), np.array(history[0])
