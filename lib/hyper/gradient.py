"""The Laplace log evidence's exact gradient in the hyper-parameters ``theta = (log s2, log l)``
of the RBF classifier, and in ``log bias_s2`` when the bias has its own prior variance.

Derived in the book chapter "Maximising the evidence automatically" (the bias prior in "The
probit likelihood"). The equations the comments cite, at ``w = w_MAP``, with
``h_n = phi_n^T A^{-1} phi_n``, ``D = dPhi/dlog l`` and ``W3_n = dW_nn/da_n``
(``sigma (1 - sigma)(1 - 2 sigma)`` for the logistic likelihood; the likelihood's
``curvature_derivative``, as ``y - sigma`` is its ``gradient`` and ``W`` its ``curvature``)::

    (E1) eo-chain          dlogZ/dtheta_j = dlogZ/dtheta_j|explicit + dlogZ/dw_MAP . dw_MAP/dtheta_j
    (E2) eo-dmode          dlogZ/dw_MAP = -(1/2) Phi^T (h * W3)
    (E3) eo-ift            A dw_MAP/dtheta_j = d(grad Psi)/dtheta_j
    (E4) eo-explicit-s2    dlogZ/dlog s2|explicit = w.w / (2 s2) - M/2 + tr(A^{-1}) / (2 s2)
    (E5) eo-explicit-l     dlogZ/dlog l|explicit = (y - sigma).(D w)
                               - sum_n W_nn (D A^{-1} Phi^T)_nn - (1/2) sum_n h_n W3_n (D w)_n
    (E6) eo-ift            d(grad Psi)/dlog s2 = w / s2
    (E7) eo-ift            d(grad Psi)/dlog l = D^T (y - sigma) - Phi^T W D w
    (E8) eo-mackay         gamma = M - tr(A^{-1}) / s2 = sum_n W_nn h_n
    (E9) pr-bias-gradient  the explicit parts for the prior diag(s2, ..., s2, bias_s2)

``log Z`` itself is ``eq-ev-laplace`` (:mod:`lib.laplace`).

Reference: Rasmussen & Williams (2006), algorithm 5.1 and section 5.5.1, the same gradient in
function space; :func:`_evidence_gradient` is its weight-space form, and the comments at its
lines cite the algorithm's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

from lib._validate import as_design_labels, as_vector, positive_scalar
from lib._validate import width as check_width
from lib.features import rbf_features, rbf_from_squared_distances, squared_distances
from lib.laplace import LaplacePosterior, bias_prior_variances, fit_laplace, log_prior_quadratic
from lib.likelihood import LOGISTIC, Likelihood, as_likelihood


@dataclass(frozen=True)
class EvidenceGradient:
    """Laplace log evidence and its gradient in ``theta = (log s2, log l[, log bias_s2])``.

    ``K = 2`` hyper-parameters for the shared prior ``w ~ N(0, s2 I)``; ``K = 3`` when the
    bias has its own prior variance ``bias_s2`` (then ``s2`` is that of the RBF weights).

    ``s2``, ``width``: the point ``(s2, l)``; ``log_evidence``: ``log Z(theta)``, the Laplace log
    evidence (:attr:`lib.laplace.LaplacePosterior.log_evidence`); ``gradient`` (K,):
    ``(dlogZ/dlog s2, dlogZ/dlog l[, dlogZ/dlog bias_s2])``, total derivatives (module
    docstring, E1); ``explicit`` (K,): the explicit parts (E4, E5, E9), ``w_MAP`` held fixed;
    ``implicit`` (K,): the parts through ``w_MAP(theta)`` (E2 . E3), ``gradient = explicit +
    implicit``; ``gamma``: MacKay's effective number of parameters ``M - tr(A^{-1} S^{-1})``
    (E8; ``S`` the prior covariance, ``s2 I`` when shared), as ``sum_n W_nn h_n``;
    ``mode_sensitivity`` (M, K): ``dw_MAP/dtheta`` (E3), how the posterior mode moves with
    ``theta``; ``posterior``: the :class:`~lib.laplace.LaplacePosterior` at ``theta``;
    ``bias_s2``: the bias's prior variance, None when it shares ``s2``.
    """

    s2: float
    width: float
    log_evidence: float
    gradient: np.ndarray
    explicit: np.ndarray
    implicit: np.ndarray
    gamma: float
    mode_sensitivity: np.ndarray
    posterior: LaplacePosterior
    bias_s2: float | None = None


def _rbf_from_distances(d2: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray]:
    """RBF design with bias, ``Phi`` (N, M), and its derivative ``D = dPhi/dlog l`` (N, M).

    ``Phi`` is :func:`lib.features.rbf_features` on the distances (the same flush of tiny
    values); ``D_nm = l dPhi_nm/dl = Phi_nm |x_n - c_m|^2 / l^2``.
    """
    K = rbf_from_squared_distances(d2, width)                # exp(-|x - c|^2 / (2 l^2))
    ones = np.ones((d2.shape[0], 1))
    Phi = np.hstack([K, ones])
    with np.errstate(over="ignore", invalid="ignore"):      # d2 / l^2 = inf where K = 0
        KD = np.where(K > 0, K * (d2 / width**2), 0.0)
    D = np.hstack([KD, np.zeros_like(ones)])                 # l dK/dl; the bias has none
    return Phi, D


def _prior_vector(s2, bias_s2, M):
    """``s2`` itself (one shared prior variance) when ``bias_s2`` is None, else the per-weight
    variances of :func:`lib.laplace.bias_prior_variances`."""
    return s2 if bias_s2 is None else bias_prior_variances(s2, bias_s2, M)


def _best_start(candidates, Phi, y, s2, likelihood=LOGISTIC):
    """The candidate starting point with the highest log posterior ``Psi`` (None if none)."""
    candidates = [w for w in candidates if w is not None and np.all(np.isfinite(w))]
    if not candidates:
        return None
    # Psi = L + log prior; for LOGISTIC and a float s2, log_posterior_from_activations, op for op
    return max(candidates, key=lambda w: likelihood.log_likelihood(Phi @ w, y) + log_prior_quadratic(w, s2))


def _evidence_gradient(d2, y, s2, width, w0=None, *, width_derivative=True,
                       likelihood=LOGISTIC, bias_s2=None) -> EvidenceGradient:
    """Unchecked core of :func:`evidence_gradient` on precomputed squared distances ``d2``.

    ``w0`` is a starting point for Newton's method, or a list of candidates (the one with
    the highest log posterior is used). With ``width_derivative=False`` the entries for
    ``log l`` are NaN and their (costlier) computation is skipped. With ``bias_s2`` the bias
    has its own prior variance and the gradient a third entry, ``dlogZ/dlog bias_s2`` (E9).
    """
    # Line 2 of R&W algorithm 5.1: compute K (and dK/dtheta_j, line 11); here Phi and D
    Phi, D = _rbf_from_distances(d2, width)
    M = Phi.shape[1]
    prior = _prior_vector(s2, bias_s2, M)                     # s2, or diag(S) with the bias last
    if isinstance(w0, list):
        w0 = _best_start(w0, Phi, y, prior, likelihood)
    # Lines 3-6: the mode (algorithm 3.1), W, L = cholesky(B) and log Z; here fit_laplace,
    # with L the factor of A (lib.laplace)
    post = fit_laplace(Phi, y, prior, w0=w0, max_iter=500, likelihood=likelihood)
    w, L = post.w_map, post.chol
    a = Phi @ w
    g_lik = likelihood.gradient(a, y)                         # d log p / da   (y - sigma)
    W = likelihood.curvature(a, y)                            # diagonal of W (line 4)
    W3 = likelihood.curvature_derivative(a, y)                # dW_nn/da_n (third derivative of L)

    # Line 8: C = L \ (W^1/2 K), for the posterior variances diag(K) - diag(C^T C) of line 9;
    # here C = L^{-1} Phi^T and h_n = |C[:, n]|^2, the posterior variance of a_n
    C = solve_triangular(L, Phi.T, lower=True)                # L^{-1} Phi^T, (M, N)
    h = np.einsum("mn,mn->n", C, C)                           # h_n = phi_n^T A^{-1} phi_n
    # (E8), from the h_n the gradient needs anyway: tr(A^{-1} S^{-1}) = M - gamma without
    # inverting A (lib.scores.effective_parameters computes it as M - tr(A^{-1}) / s2; tested)
    gamma = float(W @ h)
    # Line 9: R&W's s_2 = dlogZ/df (their eq. 5.23); here (E2). W3 = -grad^3 log p, so this is
    # +(1/2) Phi^T (h * grad^3 log p), plus one half (lib.models.gp.rbf_evidence_gradient
    # explains the sign; the central differences of tests/test_hyper_evidence.py confirm it)
    dZ_dw = -0.5 * Phi.T @ (W3 * h)                           # (E2)

    n_theta = 2 if bias_s2 is None else 3
    explicit = np.full(n_theta, np.nan)
    rhs = np.full((M, n_theta), np.nan)                       # d(grad Psi)/dtheta, columns j
    # Lines 10-15 (for each theta_j): line 12's s_1 (their eq. 5.22) is the explicit part
    # (E4, E5, E9); lines 13-14's b and s_3 (eq. 5.24, how the mode moves) are (E3) with the
    # right-hand sides (E6, E7); line 15's s_1 + s_2.s_3 (eq. 5.21) is (E1)
    if bias_s2 is None:
        tr_Ainv = s2 * (M - gamma)                            # tr(A^{-1}) for S = s2 I (E8)
        explicit[0] = float(w @ w) / (2.0 * s2) - 0.5 * M + tr_Ainv / (2.0 * s2)     # (E4)
        rhs[:, 0] = w / s2                                                            # (E6)
    else:
        # (E9): the bias is the last weight, so (A^{-1})_MM = 1 / L_MM^2 (L lower
        # triangular); the RBF group's trace is the rest of tr(A^{-1} S^{-1}) = M - gamma.
        bias_share = 1.0 / (L[-1, -1] ** 2 * bias_s2)          # (A^{-1})_MM / bias_s2
        wr = w[:-1]
        explicit[0] = float(wr @ wr) / (2.0 * s2) - 0.5 * (M - 1) + 0.5 * (M - gamma - bias_share)
        explicit[2] = w[-1] ** 2 / (2.0 * bias_s2) - 0.5 + 0.5 * bias_share   # (E9), the bias
        rhs[:, 0] = np.append(wr / s2, 0.0)                   # (E6) for the RBF weights
        rhs[:, 2] = 0.0                                       # d(grad Psi)/dlog bias_s2 =
        rhs[-1, 2] = w[-1] / bias_s2                          #   (0, ..., 0, w_M / bias_s2)
    if width_derivative:
        E = solve_triangular(L, D.T, lower=True)              # L^{-1} D^T,   (M, N)
        g = np.einsum("mn,mn->n", E, C)                       # (D A^{-1} Phi^T)_nn
        Dw = D @ w                                            # explicit change of a = Phi w
        explicit[1] = float(g_lik @ Dw) - float(W @ g) - 0.5 * float((W3 * h) @ Dw)     # (E5)
        rhs[:, 1] = D.T @ g_lik - Phi.T @ (W * Dw)                                      # (E7)
    cols = [j for j in range(n_theta) if j != 1 or width_derivative]
    dw_dtheta = np.full((M, n_theta), np.nan)
    dw_dtheta[:, cols] = cho_solve((L, True), rhs[:, cols])   # (E3) A dw/dtheta = d(grad Psi)/dtheta
    implicit = dZ_dw @ dw_dtheta                              # (E1); line 15's s_2.s_3
    return EvidenceGradient(
        s2=s2, width=width, log_evidence=float(post.log_evidence),
        gradient=explicit + implicit, explicit=explicit, implicit=implicit,
        gamma=gamma, mode_sensitivity=dw_dtheta, posterior=post, bias_s2=bias_s2,
    )


def evidence_gradient(X_train, y_train, s2, width, *, w0=None, likelihood: Likelihood = LOGISTIC,
                      bias_s2: float | None = None) -> EvidenceGradient:
    """Laplace log evidence of the RBF classifier and its gradient in ``(log s2, log l)``.

    Implements the total derivative (E1) of the module docstring: the explicit parts (E4,
    E5) plus the implicit part through ``w_MAP`` (E2, E3, E6, E7), as in Rasmussen &
    Williams (2006), algorithm 5.1; with ``bias_s2``, also in ``log bias_s2`` (E9).

    ``X_train`` (N, D): the training inputs, also the RBF centres; ``y_train`` (N,): their labels
    0/1; ``s2 > 0``: the prior variance (of the RBF weights when ``bias_s2`` is given); ``width``:
    the RBF width ``l > 0``; ``w0`` (N + 1,): a warm start for Newton's method; ``likelihood``:
    :data:`lib.likelihood.LOGISTIC` (default) or another, e.g. :data:`lib.models.probit.PROBIT`;
    ``bias_s2``: the bias's own prior variance (by default the bias shares ``s2``). Returns an
    :class:`EvidenceGradient`, its gradient of shape (2,), or (3,) when ``bias_s2`` is given.
    """
    X_train, y_train = as_design_labels(X_train, y_train, ("X_train", "y_train"))
    s2 = positive_scalar(s2, "s2")
    width = check_width(width, "width")
    likelihood = as_likelihood(likelihood)
    if bias_s2 is not None:
        bias_s2 = positive_scalar(bias_s2, "bias_s2")
    if w0 is not None:   # an array (a list here would be taken for a list of candidates)
        w0 = as_vector(w0, "w0", length=X_train.shape[0] + 1)
    return _evidence_gradient(squared_distances(X_train, X_train), y_train, s2, width, w0=w0,
                              likelihood=likelihood, bias_s2=bias_s2)


def central_difference_gradient(X_train, y_train, s2, width, *, step: float = 1e-4,
                                likelihood: Likelihood = LOGISTIC,
                                bias_s2: float | None = None) -> np.ndarray:
    """Central finite differences of the Laplace log evidence in ``(log s2, log l[, log bias_s2])``.

    ``dlogZ/dtheta_j ~= (log Z(theta + h e_j) - log Z(theta - h e_j)) / (2 h)``, error
    ``O(h^2)``; each ``log Z`` is a Laplace fit from scratch (:func:`lib.laplace.fit_laplace`,
    zero start), so the check shares nothing with :func:`evidence_gradient` but the model.
    Arguments as in :func:`evidence_gradient`; ``step``: ``h`` in log space, at most 1. Returns
    ``(dlogZ/dlog s2, dlogZ/dlog l[, dlogZ/dlog bias_s2])``, shape (2,) or (3,).
    """
    X_train, y_train = as_design_labels(X_train, y_train, ("X_train", "y_train"))
    theta = [positive_scalar(s2, "s2"), check_width(width, "width")]
    if bias_s2 is not None:
        theta.append(positive_scalar(bias_s2, "bias_s2"))
    theta = np.log(theta)
    h = positive_scalar(step, "step")
    if h > 1:
        raise ValueError(f"step must be a step in log space of at most 1, got {step!r}")
    likelihood = as_likelihood(likelihood)

    def log_Z(t):
        Phi = rbf_features(X_train, X_train, float(np.exp(t[1])))
        prior = _prior_vector(float(np.exp(t[0])), float(np.exp(t[2])) if len(t) == 3 else None,
                              Phi.shape[1])
        return fit_laplace(Phi, y_train, prior, max_iter=500, likelihood=likelihood).log_evidence

    return np.array([(log_Z(theta + h * e) - log_Z(theta - h * e)) / (2.0 * h)
                     for e in np.eye(len(theta))])
