"""The Laplace log evidence's exact gradient in the hyper-parameters (book chapter "Maximising
the evidence automatically", eqs. ``eo-*``; chapter "The probit likelihood" for (E9)).

The equations (E1)-(E9) below are the ones the code's comments cite, with their book labels.

The model is the RBF classifier of :mod:`lib.features` (centres = the training inputs, width
``l``, plus a bias column) with the prior ``w ~ N(0, s2 I)``. Its Laplace log evidence is
(:mod:`lib.laplace`)::

    log Z(theta) = Psi(w_MAP) - (M/2) log s2 - (1/2) log|A|,    theta = (log s2, log l),
    Psi(w)       = L(w) - w.w / (2 s2),
    A            = I / s2 + Phi^T W Phi,    W = diag(sigma_n (1 - sigma_n)),
    sigma_n      = sigma(phi_n.w_MAP).

Its gradient follows Rasmussen & Williams (2006), algorithm 5.1 and section 5.5.1: ``log Z``
depends on ``theta`` directly (*explicit* part) and through ``w_MAP(theta)`` (*implicit*
part). Because ``grad Psi(w_MAP) = 0``, only ``log|A|`` contributes to the implicit part, via
the third derivative of the log-likelihood ``dW_nn / da_n = sigma (1 - sigma)(1 - 2 sigma)``::

    dlogZ/dtheta_j  = dlogZ/dtheta_j|explicit + (dlogZ/dw_MAP) . (dw_MAP/dtheta_j)        (E1)
    dlogZ/dw_MAP    = -(1/2) Phi^T (h * sigma (1 - sigma)(1 - 2 sigma)),
                      h_n = phi_n^T A^{-1} phi_n                                         (E2)
    dw_MAP/dtheta_j = A^{-1} d(grad Psi)/dtheta_j     (implicit function theorem)       (E3)

With ``D = dPhi/dlog l`` (``D_nm = Phi_nm |x_n - c_m|^2 / l^2``, zero for the bias) the
explicit parts and the right-hand sides of (E3) are::

    dlogZ/dlog s2|explicit = w.w / (2 s2) - M/2 + tr(A^{-1}) / (2 s2)                   (E4)
    dlogZ/dlog l |explicit = (y - sigma).(D w) - sum_n W_nn (D A^{-1} Phi^T)_nn
                             - (1/2) sum_n h_n [sigma (1 - sigma)(1 - 2 sigma)]_n (D w)_n  (E5)
    d(grad Psi)/dlog s2    = w / s2                                                     (E6)
    d(grad Psi)/dlog l     = D^T (y - sigma) - Phi^T W D w                              (E7)

(all at ``w = w_MAP``). Every ``A^{-1}`` is applied through the Cholesky factor ``A = L L^T``
of :func:`lib.laplace.fit_laplace`: ``h`` and ``(D A^{-1} Phi^T)_nn`` are column sums of
elementwise products of ``L^{-1} Phi^T`` and ``L^{-1} D^T`` (two triangular solves);
``tr(A^{-1})`` in (E4) is ``s2 (M - gamma)`` with ``gamma = sum_n W_nn h_n`` (the trace of
``A^{-1} A = I``; E8), so ``A`` is never inverted; and (E3) is solved for ``dw_MAP/dtheta``
with ``cho_solve`` on ``L`` (two right-hand sides, one when the width derivative is not
needed). The optimiser uses ``dw_MAP/dtheta`` to predict the mode at its next point.

Book equations: (E1) is ``eo-chain``, (E2) ``eo-dmode``, (E3), (E6) and (E7) ``eo-ift``,
(E4) ``eo-explicit-s2``, (E5) ``eo-explicit-l``, (E8) ``eo-mackay``; ``log Z`` is
``eo-log-evidence`` (= ``eq-ev-laplace``).

Rasmussen & Williams (2006), algorithm 5.1, computes the same gradient in the function-space
(dual) form for Gaussian-process classification; :func:`evidence_gradient` is its
weight-space form. The mode (algorithm 3.1) and ``log Z`` are :func:`lib.laplace.fit_laplace`;
``W`` and the Cholesky factor are ``W`` and ``L`` here; the algorithm's ``s2`` (how ``log Z``
changes with the mode, their eq. 5.23) is (E2), with ``h_n`` the posterior variance of
``a_n``; ``s1`` (the explicit part, eq. 5.22) is (E4) and (E5); ``b`` and ``s3`` (how the mode
moves, eq. 5.24) are (E3) with (E6) and (E7); ``s1 + s2.s3`` (eq. 5.21) is (E1). The sign of
(E2): ``dW_nn/da_n = -d^3 log p``, so (E2) is ``+(1/2) Phi^T (h * d^3 log p)``, plus one half
(as :func:`lib.models.gp.rbf_evidence_gradient` explains); the central-difference tests
(``tests/test_hyper_evidence.py``) confirm it.

Other likelihoods and a separate bias prior (book chapter "The probit likelihood"). Nothing
above is specific to the logistic function except three per-point derivatives of
``log p(y_n | a_n)``: ``y - sigma`` is the likelihood's ``gradient``, ``W`` its ``curvature``
and ``sigma (1 - sigma)(1 - 2 sigma)`` its ``curvature_derivative``
(:class:`lib.likelihood.Likelihood`; :data:`lib.models.probit.PROBIT` supplies all three). With
``likelihood=`` every formula holds as written. With a prior variance ``s2`` for the RBF
weights and ``b2`` for the bias (the last weight), ``S = diag(s2, ..., s2, b2)``, the log
evidence has ``-(1/2) log|S|`` and ``-w.S^{-1}w / 2``, and the explicit parts split by group::

    dlogZ/dlog s2|explicit = sum_{m<M} w_m^2 / (2 s2) - (M-1)/2
                             + (1/2) (M - gamma - (A^{-1})_MM / b2)
    dlogZ/dlog b2|explicit = w_M^2 / (2 b2) - 1/2 + (1/2) (A^{-1})_MM / b2              (E9)
    d(grad Psi)/dlog b2    = (0, ..., 0, w_M / b2)

using ``sum_m (A^{-1})_mm / S_mm = tr(A^{-1} S^{-1}) = M - gamma`` and
``(A^{-1})_MM = 1 / L_MM^2`` (the last column of ``L^{-1}`` is ``e_M / L_MM``); (E5) and
(E7) are unchanged. (E9) is book eq. ``pr-bias-gradient`` (chapter "The probit likelihood").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

from lib._validate import as_labels, as_matrix, positive_scalar
from lib._validate import width as check_width
from lib.features import rbf_features, rbf_from_squared_distances, squared_distances
from lib.laplace import LaplacePosterior, bias_prior_variances, fit_laplace, log_prior_quadratic
from lib.likelihood import LOGISTIC, Likelihood, as_likelihood


# --------------------------------------------------------------------------- validation


def _training_data(X_train, y_train):
    X_train = as_matrix(X_train, "X_train")
    y_train = as_labels(y_train, "y_train", length=X_train.shape[0])
    return X_train, y_train


# --------------------------------------------------------------------------- the gradient


@dataclass(frozen=True)
class EvidenceGradient:
    """Laplace log evidence and its gradient in ``theta = (log s2, log l[, log bias_s2])``.

    ``K = 2`` hyper-parameters for the shared prior ``w ~ N(0, s2 I)``; ``K = 3`` when the
    bias has its own prior variance ``bias_s2`` (then ``s2`` is that of the RBF weights).

    Attributes
    ----------
    s2, width : float
        The point ``(s2, l)``.
    log_evidence : float
        ``log Z(theta)``, the Laplace log evidence (:attr:`lib.laplace.LaplacePosterior.log_evidence`).
    gradient : ndarray, shape (K,)
        ``(dlogZ/dlog s2, dlogZ/dlog l[, dlogZ/dlog bias_s2])``, total derivatives (module
        docstring, E1).
    explicit : ndarray, shape (K,)
        The explicit parts (E4, E5, E9), ``w_MAP`` held fixed.
    implicit : ndarray, shape (K,)
        The parts through ``w_MAP(theta)`` (E2 . E3); ``gradient = explicit + implicit``.
    gamma : float
        MacKay's effective number of parameters ``M - tr(A^{-1} S^{-1})`` (E8; ``S`` the prior
        covariance, ``s2 I`` when shared), computed as ``tr(A^{-1} Phi^T W Phi) =
        sum_n W_nn h_n`` (equal, since ``A^{-1} A = I``).
    mode_sensitivity : ndarray, shape (M, K)
        ``dw_MAP/dtheta`` (E3): how the posterior mode moves with ``theta``.
    posterior : LaplacePosterior
        The Laplace fit at ``theta``.
    bias_s2 : float or None
        The bias's prior variance, None when it shares ``s2``.
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
    D = np.hstack([K * (d2 / width**2), np.zeros_like(ones)])  # l dK/dl; the bias has none
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
    Phi, D = _rbf_from_distances(d2, width)
    M = Phi.shape[1]
    prior = _prior_vector(s2, bias_s2, M)                     # s2, or diag(S) with the bias last
    if isinstance(w0, list):
        w0 = _best_start(w0, Phi, y, prior, likelihood)
    post = fit_laplace(Phi, y, prior, w0=w0, max_iter=500, likelihood=likelihood)
    w, L = post.w_map, post.chol
    a = Phi @ w
    g_lik = likelihood.gradient(a, y)                         # d log p / da   (y - sigma)
    W = likelihood.curvature(a, y)                            # diagonal of W
    W3 = likelihood.curvature_derivative(a, y)                # dW_nn/da_n (third derivative of L)

    C = solve_triangular(L, Phi.T, lower=True)                # L^{-1} Phi^T, (M, N)
    h = np.einsum("mn,mn->n", C, C)                           # h_n = phi_n^T A^{-1} phi_n
    # gamma = tr(A^{-1} Phi^T W Phi) = sum_n W_nn h_n, MacKay's gamma = M - tr(A^{-1}) / s2 of
    # lib.scores.effective_parameters (equal since A^{-1} A = I; tested), from the h_n the
    # gradient needs anyway; so tr(A^{-1} S^{-1}) = M - gamma without inverting A.
    gamma = float(W @ h)
    dZ_dw = -0.5 * Phi.T @ (W3 * h)                           # (E2)

    n_theta = 2 if bias_s2 is None else 3
    explicit = np.full(n_theta, np.nan)
    rhs = np.full((M, n_theta), np.nan)                       # d(grad Psi)/dtheta, columns j
    if bias_s2 is None:
        tr_Ainv = s2 * (M - gamma)                            # tr(A^{-1}) for S = s2 I
        explicit[0] = float(w @ w) / (2.0 * s2) - 0.5 * M + tr_Ainv / (2.0 * s2)     # (E4)
        rhs[:, 0] = w / s2                                                            # (E6)
    else:
        # (E9): the bias is the last weight, so (A^{-1})_MM = 1 / L_MM^2 (L lower
        # triangular); the RBF group's trace is the rest of tr(A^{-1} S^{-1}) = M - gamma.
        bias_share = 1.0 / (L[-1, -1] ** 2 * bias_s2)          # (A^{-1})_MM / bias_s2
        wr = w[:-1]
        explicit[0] = float(wr @ wr) / (2.0 * s2) - 0.5 * (M - 1) + 0.5 * (M - gamma - bias_share)
        explicit[2] = w[-1] ** 2 / (2.0 * bias_s2) - 0.5 + 0.5 * bias_share
        rhs[:, 0] = np.append(wr / s2, 0.0)
        rhs[:, 2] = 0.0
        rhs[-1, 2] = w[-1] / bias_s2
    if width_derivative:
        E = solve_triangular(L, D.T, lower=True)              # L^{-1} D^T,   (M, N)
        g = np.einsum("mn,mn->n", E, C)                       # (D A^{-1} Phi^T)_nn
        Dw = D @ w                                            # explicit change of a = Phi w
        explicit[1] = float(g_lik @ Dw) - float(W @ g) - 0.5 * float((W3 * h) @ Dw)     # (E5)
        rhs[:, 1] = D.T @ g_lik - Phi.T @ (W * Dw)                                      # (E7)
    cols = [j for j in range(n_theta) if j != 1 or width_derivative]
    dw_dtheta = np.full((M, n_theta), np.nan)
    dw_dtheta[:, cols] = cho_solve((L, True), rhs[:, cols])   # (E3) A dw/dtheta = d(grad Psi)/dtheta
    implicit = dZ_dw @ dw_dtheta                              # (E1)
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

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs, also the RBF centres.
    y_train : array_like, shape (N,)
        Training labels 0/1.
    s2 : float
        Prior variance ``s2 > 0`` (of the RBF weights when ``bias_s2`` is given).
    width : float
        RBF width ``l > 0``.
    w0 : array_like, shape (N + 1,), optional
        Warm start for Newton's method.
    likelihood : lib.likelihood.Likelihood
        :data:`lib.likelihood.LOGISTIC` (default) or another, e.g. :data:`lib.models.probit.PROBIT`.
    bias_s2 : float, optional
        The bias's own prior variance; by default the bias shares ``s2``.

    Returns
    -------
    EvidenceGradient
        With a gradient of shape (2,), or (3,) when ``bias_s2`` is given.
    """
    X_train, y_train = _training_data(X_train, y_train)
    s2 = positive_scalar(s2, "s2")
    width = check_width(width, "width")
    likelihood = as_likelihood(likelihood)
    if bias_s2 is not None:
        bias_s2 = positive_scalar(bias_s2, "bias_s2")
    return _evidence_gradient(squared_distances(X_train, X_train), y_train, s2, width, w0=w0,
                              likelihood=likelihood, bias_s2=bias_s2)


def central_difference_gradient(X_train, y_train, s2, width, *, step: float = 1e-4,
                                likelihood: Likelihood = LOGISTIC,
                                bias_s2: float | None = None) -> np.ndarray:
    """Central finite differences of the Laplace log evidence in ``(log s2, log l[, log bias_s2])``.

    ``dlogZ/dtheta_j ~= (log Z(theta + h e_j) - log Z(theta - h e_j)) / (2 h)``, error
    ``O(h^2)``; each ``log Z`` is a Laplace fit from scratch (:func:`lib.laplace.fit_laplace`,
    zero start), so the check shares nothing with :func:`evidence_gradient` but the model.

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs (also the RBF centres).
    y_train : array_like, shape (N,)
        Training labels 0/1.
    s2, width : float
        The point ``(s2, l)``, both positive.
    step : float
        Step ``h`` in log space.
    likelihood : lib.likelihood.Likelihood
        As in :func:`evidence_gradient`.
    bias_s2 : float, optional
        As in :func:`evidence_gradient`.

    Returns
    -------
    ndarray, shape (2,) or (3,)
        ``(dlogZ/dlog s2, dlogZ/dlog l[, dlogZ/dlog bias_s2])``.
    """
    X_train, y_train = _training_data(X_train, y_train)
    theta = [positive_scalar(s2, "s2"), check_width(width, "width")]
    if bias_s2 is not None:
        theta.append(positive_scalar(bias_s2, "bias_s2"))
    theta = np.log(theta)
    h = positive_scalar(step, "step")
    likelihood = as_likelihood(likelihood)

    def log_Z(t):
        Phi = rbf_features(X_train, X_train, float(np.exp(t[1])))
        prior = _prior_vector(float(np.exp(t[0])), float(np.exp(t[2])) if len(t) == 3 else None,
                              Phi.shape[1])
        return fit_laplace(Phi, y_train, prior, max_iter=500, likelihood=likelihood).log_evidence

    return np.array([(log_Z(theta + h * e) - log_Z(theta - h * e)) / (2.0 * h)
                     for e in np.eye(len(theta))])
