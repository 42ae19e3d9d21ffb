"""Gaussian-process (function-space) Laplace classification: the mode and log marginal
likelihood, the latent predictive and the hyper-parameter gradient.

Derived in the book chapter "The function-space view: Gaussian-process classification"
(Hennig, lecture 14). Book equations implemented here: ``gp-kernel`` (:func:`basis_kernel`),
``gp-rbf`` (:func:`rbf_kernel`), ``gp-newton`` and ``gp-logz`` (:func:`fit_gp_laplace`),
``gp-pred`` (:func:`predict_latent`). Labels are 0/1 (R&W's ``t = (y + 1) / 2``, their
eq. 3.15) and the likelihood is the logistic one.

Reference: Rasmussen & Williams (2006), section 3.4, algorithms 3.1, 3.2 and 5.1; the comments
at the code cite the algorithms' lines.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.linalg import cholesky, solve_triangular

from lib._validate import (MAX_INPUT, as_design, as_labels, as_nonnegative, fraction, instance,
                           kernel, positive_int, positive_scalar, width as check_width)
from lib.features import squared_distances
from lib.laplace import ConvergenceError
from lib.likelihood import log_likelihood_from_activations, logistic_curvature


def basis_kernel(Phi_a, Phi_b, s2) -> np.ndarray:
    """The kernel of a finite basis with prior ``w ~ N(0, s2 I)``: ``s2 Phi_a Phi_b^T`` (A, B)
    for ``Phi_a`` (A, M), ``Phi_b`` (B, M), ``s2`` the prior variance of the weights."""
    Phi_a = as_design(Phi_a, "Phi_a")
    Phi_b = as_design(Phi_b, "Phi_b", n_cols=Phi_a.shape[1])
    return positive_scalar(s2, "s2") * (Phi_a @ Phi_b.T)


def rbf_kernel(X_a, X_b, signal_var, width) -> np.ndarray:
    """Stationary RBF kernel ``s_f^2 exp(-|x - x'|^2 / (2 l^2))`` (A, B) between ``X_a`` (A, D)
    and ``X_b`` (B, D); ``signal_var`` ``s_f^2 > 0`` is the prior variance of ``f(x)`` at every
    ``x``, ``width`` the length scale ``l > 0``."""
    X_a = as_design(X_a, "X_a")
    X_b = as_design(X_b, "X_b", n_cols=X_a.shape[1])
    signal_var = positive_scalar(signal_var, "signal_var")
    width = check_width(width, "width")
    with np.errstate(over="ignore"):       # d2 / l^2 = inf (tiny width, distant inputs): exp = 0
        return signal_var * np.exp(-squared_distances(X_a, X_b) / (2.0 * width**2))


@dataclass(frozen=True)
class GPLaplace:
    """Laplace approximation of a GP classifier at the training inputs (R&W algorithm 3.1).

    ``f_hat`` (N,): the posterior mode of the latent ``f`` at the training inputs; ``grad`` (N,):
    ``grad log p(y | f_hat) = y - pi`` (at the mode ``f_hat = K grad``; ``a`` of line 7);
    ``sqrt_w`` (N,): ``W^1/2`` at the mode; ``chol`` (N, N): the lower Cholesky factor ``L`` of
    ``B = I + W^1/2 K W^1/2`` (line 5); ``log_likelihood``: ``log p(y | f_hat)``;
    ``log_evidence``: the Laplace log marginal likelihood ``log q(y | X)`` (line 10);
    ``n_iter``: the Newton iterations.
    """

    f_hat: np.ndarray
    grad: np.ndarray
    sqrt_w: np.ndarray
    chol: np.ndarray
    log_likelihood: float
    log_evidence: float
    n_iter: int


def fit_gp_laplace(K, y, *, tol: float = 1e-12, max_iter: int = 100) -> GPLaplace:
    """Mode, ``B`` and log marginal likelihood by R&W algorithm 3.1 (book eqs. ``gp-newton``,
    ``gp-logz``).

    Newton's iteration from ``f = 0`` until ``max |Delta f| <= tol (1 + max |f|)``, with ``W``,
    ``L`` and ``a = grad log p(y | f)`` recomputed at the final mode (so that ``a`` and ``f``
    are consistent to rounding). No step halving: the logistic Newton iteration from ``f = 0``
    converges on the problems of the book.

    ``K`` (N, N) is the prior covariance (Gram matrix) of ``f`` at the training inputs, ``y``
    (N,) the labels 0/1, ``tol`` the relative tolerance on the change of ``f``. Returns a
    :class:`GPLaplace`; raises :class:`ConvergenceError` if ``tol`` is not met within
    ``max_iter`` iterations.
    """
    K = kernel(K, "K")
    N = K.shape[0]
    y = as_labels(y, "y", length=N)
    tol = positive_scalar(tol, "tol")
    max_iter = positive_int(max_iter, "max_iter")

    def solve(sw, r):                                         # line 5: L = cholesky(B)
        L = _chol_b(K, sw)                                    # line 7: L^T \ (L \ r)
        return solve_triangular(L, solve_triangular(L, r, lower=True), lower=True, trans="T")

    f, _, it = _newton(K, y, tol, max_iter, solve)
    if it is None:
        raise ConvergenceError(f"Newton (algorithm 3.1) did not converge in {max_iter} iterations")
    pi = expit(f)                                           # W, L and a again at the mode
    sw = np.sqrt(logistic_curvature(f))
    L = _chol_b(K, sw)
    grad = y - pi                                             # a = grad log p(y | f_hat)
    loglik = log_likelihood_from_activations(f, y)
    # Line 10: log q = -a.f / 2 + log p(y | f) - sum_i log L_ii (book eq. gp-logz)
    log_q = -0.5 * float(grad @ f) + loglik - float(np.sum(np.log(np.diag(L))))
    return GPLaplace(f, grad, sw, L, loglik, log_q, it)


def _newton(K, y, tol, max_iter, solve):
    """Lines 2-9 of R&W algorithm 3.1, from ``f = 0`` until ``max |Delta f| <= tol (1 + max |f|)``
    (their line 9 tests the objective), line 7's ``B^{-1} r`` by ``solve(W^1/2, r)``. Returns
    ``f``, ``a`` and the iterations taken (None if ``max_iter`` were not enough)."""
    f = np.zeros(K.shape[0])                                  # line 2: f = 0
    for it in range(1, max_iter + 1):                         # line 3: repeat
        pi = expit(f)
        w = logistic_curvature(f)                             # line 4: W = diag(pi (1 - pi))
        sw = np.sqrt(w)
        b = w * f + (y - pi)                                  # line 6: b = W f + grad log p
        a = b - sw * solve(sw, sw * (K @ b))                  # line 7: b - W^1/2 B^{-1} W^1/2 K b
        f_new = K @ a                                         # line 8: f = K a
        step = np.max(np.abs(f_new - f))
        f = f_new
        if step <= tol * (1.0 + np.max(np.abs(f))):           # line 9
            return f, a, it
    return f, a, None


def _chol_b(K, sw):
    # Line 5 of R&W algorithm 3.1: L = cholesky(B), B = I + W^1/2 K W^1/2
    B = sw[:, None] * K * sw[None, :]
    B[np.diag_indices_from(B)] += 1.0
    return cholesky(B, lower=True)


def predict_latent(fit: GPLaplace, K_star, k_star_diag) -> tuple[np.ndarray, np.ndarray]:
    """Predictive mean and variance of the latent ``f(x_*)`` by R&W algorithm 3.2, lines 4-6
    (book eq. ``gp-pred``); its line 7, the averaged probability, is
    :func:`lib.predictive.logistic_gaussian_expectation` of these moments.

    ``fit`` a :class:`GPLaplace`; ``K_star`` (N, S): ``k(x_n, x_*)`` between the training and
    the S test inputs; ``k_star_diag`` (S,): the prior variances ``k(x_*, x_*)``. Returns
    ``mean, var``, each (S,).
    """
    instance(fit, "fit", GPLaplace, "a GPLaplace (from fit_gp_laplace)")
    K_star = as_design(K_star, "K_star")
    if K_star.shape[0] != fit.f_hat.shape[0]:
        raise ValueError(f"K_star must have {fit.f_hat.shape[0]} rows, got {K_star.shape[0]}")
    k_diag = as_nonnegative(k_star_diag, "k_star_diag", length=K_star.shape[1])
    mean = K_star.T @ fit.grad                                # line 4: k_*^T grad log p(y | f_hat)
    v = solve_triangular(fit.chol, fit.sqrt_w[:, None] * K_star, lower=True)   # line 5
    explained = np.einsum("ns,ns->s", v, v)
    var = k_diag - explained                                  # line 6: k(x_*, x_*) - v.v
    # v.v <= k(x_*, x_*) for a kernel: beyond rounding, k_star_diag does not match K_star
    if np.any(var < -1e-8 * np.maximum(k_diag, explained)):
        worst = int(np.argmin(var / np.maximum(np.maximum(k_diag, explained), 1e-300)))
        raise ValueError(f"k_star_diag is inconsistent with K_star (and the fit's kernel): at "
                         f"test point {worst} k(x_*, x_*) = {k_diag[worst]:.6g} is below the "
                         f"variance K_star explains, {explained[worst]:.6g} (negative variance)")
    return mean, var


def rbf_evidence_gradient(X_train, y_train, signal_var, width) -> tuple[float, np.ndarray, GPLaplace]:
    """Log marginal likelihood of the RBF-kernel GP and its gradient in ``(log s_f^2, log l)``.

    By R&W algorithm 5.1, with ``dK/dlog s_f^2 = K`` and ``dK/dlog l = K * |x - x'|^2 / l^2``;
    the gradient matches central finite differences (``tests/test_gp.py``).

    ``X_train`` (N, D), ``y_train`` (N,) labels 0/1, ``signal_var`` and ``width`` ``s_f^2`` and
    ``l``. Returns ``log_evidence``, ``gradient`` (2,) ``(d log Z / d log s_f^2, d log Z / d
    log l)`` and the :class:`GPLaplace` fit.
    """
    X_train = as_design(X_train, "X_train")
    y_train = as_labels(y_train, "y_train", length=X_train.shape[0])
    d2 = squared_distances(X_train, X_train)
    width = check_width(width, "width")
    signal_var = positive_scalar(signal_var, "signal_var")
    if signal_var > MAX_INPUT:
        raise ValueError(f"signal_var must be at most {MAX_INPUT:g} (the kernel's entries, "
                         f"products and squares must not overflow), got {signal_var!r}")
    # Based on R&W algorithm 5.1
    K = signal_var * np.exp(-d2 / (2.0 * width**2))          # line 2
    fit = fit_gp_laplace(K, y_train)                          # lines 3-6: f_hat, W, L, log Z
    L, sw, a = fit.chol, fit.sqrt_w, fit.grad
    # Line 7: R = W^1/2 L^T \ (L \ W^1/2)
    R = sw[:, None] * solve_triangular(L, solve_triangular(L, np.diag(sw), lower=True),
                                       lower=True, trans="T")
    C = solve_triangular(L, sw[:, None] * K, lower=True)      # line 8: C = L \ (W^1/2 K)
    pi = expit(fit.f_hat)
    third = -pi * (1.0 - pi) * (1.0 - 2.0 * pi)               # grad^3 log p(y | f_hat)
    # Line 9: s_2 = diag(diag(K) - diag(C^T C)) grad^3 log p / 2 (their eq. 5.23), *plus* one
    # half: d log q / d f_i = -(1/2) d log|B| / d f_i and d W_ii / d f_i = -grad^3 log p (with
    # -1/2 the implicit term would have the wrong sign)
    s2 = 0.5 * (np.diag(K) - np.einsum("ij,ij->j", C, C)) * third
    grads = []
    for dK in (K, K * d2 / width**2):                         # lines 10-11: C = dK/dtheta_j
        # Line 12: s_1 = a^T C a / 2 - tr(R C) / 2 (their eq. 5.22)
        s1 = 0.5 * float(a @ dK @ a) - 0.5 * float(np.einsum("ij,ji->", R, dK))
        b = dK @ a                                            # line 13: b = C grad log p
        s3 = b - K @ (R @ b)                                  # line 14: s_3 = b - K R b
        grads.append(s1 + float(s2 @ s3))                     # line 15: s_1 + s_2.s_3
    return fit.log_evidence, np.array(grads), fit


def newton_cg(K, y, cg_rtol, *, max_newton: int = 30, tol: float = 1e-12):
    """R&W algorithm 3.1 with the Newton system of line 7 solved by conjugate gradients.

    Line 7's ``z = B^{-1} W^1/2 K b`` (``B = I + W^1/2 K W^1/2``, eigenvalues ``>= 1``) is
    approximated by :func:`scipy.sparse.linalg.cg` (lecture 14's iterative numerics: one product
    with ``B`` per iteration), started from the previous Newton step's ``z`` and stopped at the
    relative residual ``cg_rtol`` (an inexact Newton method). Newton stops as in
    :func:`fit_gp_laplace` or after ``max_newton`` steps. Line 10's log marginal likelihood
    uses the exact ``log|B|`` (Cholesky) at the final ``f = K a``: its error is the mode's alone.

    ``K``, ``y``, ``tol`` as in :func:`fit_gp_laplace`; ``cg_rtol`` (below 1) the relative
    residual at which each CG solve stops. Returns ``log_evidence``, ``n_cg`` (the CG iterations
    over all Newton steps: products with ``B``) and ``residuals``, the relative residuals
    ``|r_k| / |rhs|`` of the first Newton step's CG solve, one per CG iteration (``callback``).
    """
    from scipy.sparse.linalg import LinearOperator, cg

    K = kernel(K, "K")
    N = K.shape[0]
    y = as_labels(y, "y", length=N)
    cg_rtol = fraction(cg_rtol, "cg_rtol", open_interval=True)
    max_newton = positive_int(max_newton, "max_newton")
    tol = positive_scalar(tol, "tol")
    z, history = np.zeros(N), []

    def solve(sw, rhs):
        nonlocal z
        # Line 5's B = I + W^1/2 K W^1/2, as products only (no Cholesky factor)
        B = LinearOperator((N, N), matvec=lambda v: v + sw * (K @ (sw * v)), dtype=float)
        norm, residuals = float(np.linalg.norm(rhs)), []

        def record(zk):
            residuals.append(float(np.linalg.norm(rhs - B.matvec(zk))) / norm)

        # Line 7's B^{-1} r by CG, from the previous step's solution
        z, _ = cg(B, rhs, x0=z, rtol=cg_rtol, atol=0.0, maxiter=10 * N, callback=record)
        history.append(residuals)
        return z

    f, a, _ = _newton(K, y, tol, max_newton, solve)
    L = _chol_b(K, np.sqrt(logistic_curvature(f)))           # line 10, with the exact log|B|
    log_q = -0.5 * float(a @ f) + log_likelihood_from_activations(f, y) - float(np.sum(np.log(np.diag(L))))
    return log_q, sum(len(r) for r in history), np.array(history[0])
