"""Maximising the Laplace evidence over the hyper-parameters (book chapter "Maximising the
evidence automatically"; report section 3.3 did this by grid search).

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
(``tests/test_evidence_opt.py``) confirm it.

MacKay's (1992) fixed-point update for ``s2`` sets the explicit part (E4) to zero and
iterates::

    gamma = M - tr(A^{-1}) / s2 = sum_n W_nn h_n     (well-determined parameters; computed
                                                      as the sum, = lib.scores.effective_parameters)
    s2   <- w_MAP.w_MAP / gamma                                                         (E8)

It ignores the implicit part (E1-E3), so its fixed point is a stationary point of ``log Z`` in
``s2`` only up to that term.

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

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, solve_triangular
from scipy.optimize import minimize

from lib._validate import width as check_width
from lib._validate import as_labels, as_matrix, positive_int, positive_pair, positive_scalar
from lib._validate import bounds as check_bounds
from lib.features import rbf_features, rbf_from_squared_distances, squared_distances
from lib.laplace import (
    ConvergenceError, LaplacePosterior, bias_prior_variances, fit_laplace, log_prior_quadratic,
)
from lib.likelihood import LOGISTIC, Likelihood, as_likelihood

#: Default search box, the range of the book's 50 x 50 grid: s2 in [0.01, 100], l in [0.01, 10].
DEFAULT_S2_BOUNDS = (1e-2, 1e2)
DEFAULT_WIDTH_BOUNDS = (1e-2, 1e1)

#: Default starting points ``(s2, l)``: the report's base case and three spread-out settings.
DEFAULT_STARTS = ((1.0, 0.1), (1.0, 1.0), (10.0, 0.3), (0.1, 3.0))

#: Default starting values of ``s2`` when the width is held fixed.
DEFAULT_S2_STARTS = (0.1, 1.0, 10.0)


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


# --------------------------------------------------------------------------- the optimiser


@dataclass(frozen=True)
class EvidenceRun:
    """One L-BFGS-B run from one starting point.

    Attributes
    ----------
    start : tuple of float
        Starting ``(s2, l)``, or ``(s2, l, bias_s2)``.
    s2, width : float
        Where the run stopped.
    log_evidence : float
        ``log Z`` there.
    gradient : ndarray, shape (K,)
        ``dlogZ/dtheta`` there (zero at an interior maximum; for a fixed width, the second
        entry is still ``dlogZ/dlog l``).
    path : ndarray, shape (n, K)
        Iterates ``(log s2, log l[, log bias_s2])``, the start first.
    n_evaluations : int
        Evaluations of ``log Z`` and its gradient.
    success : bool
        scipy's convergence flag.
    message : str
        scipy's message.
    bias_s2 : float or None
        Where the run stopped in ``bias_s2`` (None for a shared prior variance).
    """

    start: tuple
    s2: float
    width: float
    log_evidence: float
    gradient: np.ndarray
    path: np.ndarray
    n_evaluations: int
    success: bool
    message: str
    bias_s2: float | None = None


@dataclass(frozen=True)
class EvidenceOptimum:
    """Best of several L-BFGS-B runs maximising the Laplace log evidence.

    Attributes
    ----------
    s2, width : float
        The best ``(s2, l)`` found.
    log_evidence : float
        ``log Z`` there.
    gradient : ndarray, shape (K,)
        ``dlogZ/dtheta`` there.
    n_evaluations : int
        Evaluations over all runs.
    starts : tuple of tuple of float
        The starting points tried, ``(s2, l)`` or ``(s2, l, bias_s2)``.
    runs : tuple of EvidenceRun
        One per start, in the order of ``starts``.
    posterior : LaplacePosterior
        The Laplace fit at the optimum.
    bias_s2 : float or None
        The best ``bias_s2`` (None for a shared prior variance).
    """

    s2: float
    width: float
    log_evidence: float
    gradient: np.ndarray
    n_evaluations: int
    starts: tuple
    runs: tuple
    posterior: LaplacePosterior
    bias_s2: float | None = None


def _in_box(value, box, name, i):
    if not box[0] <= value <= box[1]:
        raise ValueError(f"starts[{i}] has {name} = {value} outside {name}_bounds {box}")


def _starts(starts, s2_bounds, width_bounds, fixed_width, bias_s2_bounds=None):
    if starts is None:
        if fixed_width is not None:
            starts = DEFAULT_S2_STARTS
        elif bias_s2_bounds is not None:
            starts = tuple((s2, l, s2) for s2, l in DEFAULT_STARTS)
        else:
            starts = DEFAULT_STARTS
    if fixed_width is not None:
        if isinstance(starts, numbers.Real):
            starts = [starts]
        out = []
        for i, s in enumerate(starts):
            if not isinstance(s, numbers.Real):
                raise TypeError(
                    f"starts[{i}] must be a starting s2 (a positive number) when fixed_width is given, "
                    f"got {s!r}"
                )
            s = positive_scalar(s, f"starts[{i}]")
            if not s2_bounds[0] <= s <= s2_bounds[1]:
                raise ValueError(f"starts[{i}] = {s} lies outside s2_bounds {s2_bounds}")
            out.append((s, fixed_width))
    elif bias_s2_bounds is not None:
        out = []
        for i, triple in enumerate(starts):
            try:
                s2, l, b2 = triple
            except (TypeError, ValueError):
                raise TypeError(
                    f"starts[{i}] must be a triple (s2, width, bias_s2) of positive numbers when "
                    f"bias_s2_bounds is given, got {triple!r}"
                ) from None
            s2 = positive_scalar(s2, f"starts[{i}][0] (s2)")
            l = positive_scalar(l, f"starts[{i}][1] (width)")
            b2 = positive_scalar(b2, f"starts[{i}][2] (bias_s2)")
            _in_box(s2, s2_bounds, "s2", i)
            _in_box(l, width_bounds, "width", i)
            _in_box(b2, bias_s2_bounds, "bias_s2", i)
            out.append((s2, l, b2))
    else:
        out = []
        for i, pair in enumerate(starts):
            s2, l = positive_pair(pair, f"starts[{i}]", "(s2, width)", ("[0] (s2)", "[1] (width)"))
            _in_box(s2, s2_bounds, "s2", i)
            _in_box(l, width_bounds, "width", i)
            out.append((s2, l))
    if not out:
        raise ValueError("starts must hold at least one starting point")
    return tuple(out)


def maximise_evidence(
    X_train,
    y_train,
    *,
    starts=None,
    s2_bounds=DEFAULT_S2_BOUNDS,
    width_bounds=DEFAULT_WIDTH_BOUNDS,
    fixed_width: float | None = None,
    likelihood: Likelihood = LOGISTIC,
    bias_s2_bounds=None,
    max_iter: int = 200,
    gtol: float = 1e-6,
) -> EvidenceOptimum:
    """Maximise the Laplace log evidence over ``theta = (log s2, log l[, log bias_s2])`` by L-BFGS-B.

    Minimises ``-log Z(theta)`` with its exact gradient (:func:`evidence_gradient`) by
    ``scipy.optimize.minimize(method="L-BFGS-B")`` in log space within the box
    ``log s2_bounds x log width_bounds [x log bias_s2_bounds]``, once from each start, and
    keeps the best. Newton's method for ``w_MAP`` is warm-started from the previous
    evaluation's mode or from its first-order prediction ``w + (dw/dtheta) dtheta`` (E3),
    whichever has the higher log posterior ``Psi`` at the new point.

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs (also the RBF centres).
    y_train : array_like, shape (N,)
        Training labels 0/1.
    starts : sequence of (s2, width) pairs, of (s2, width, bias_s2) triples when
        ``bias_s2_bounds`` is given, or of s2 values when ``fixed_width`` is given
        Starting points, inside the bounds. Default: :data:`DEFAULT_STARTS` (with
        ``bias_s2 = s2``), or :data:`DEFAULT_S2_STARTS` with a fixed width.
    s2_bounds, width_bounds : (float, float)
        Search box ``low < high``, both positive.
    fixed_width : float, optional
        If given, ``l`` is held at this value and only ``log s2`` is optimised.
    likelihood : lib.likelihood.Likelihood
        :data:`lib.likelihood.LOGISTIC` (default) or another, e.g. :data:`lib.models.probit.PROBIT`.
    bias_s2_bounds : (float, float), optional
        If given, the bias has its own prior variance ``bias_s2``, optimised within these
        bounds (book chapter "The probit likelihood": ``s2`` is then the note's ``alpha^2``,
        ``bias_s2`` its ``beta^2``). Not combined with ``fixed_width``.
    max_iter : int
        Maximum L-BFGS-B iterations per start.
    gtol : float
        Tolerance on the projected gradient (scipy's ``gtol``).

    Returns
    -------
    EvidenceOptimum

    Raises
    ------
    lib.laplace.ConvergenceError
        If Newton's method fails at some evaluated point.
    """
    X_train, y_train = _training_data(X_train, y_train)
    s2_bounds = check_bounds(s2_bounds, "s2_bounds")
    width_bounds = check_bounds(width_bounds, "width_bounds")
    if fixed_width is not None:
        fixed_width = positive_scalar(fixed_width, "fixed_width")
    likelihood = as_likelihood(likelihood)
    separate_bias = bias_s2_bounds is not None
    if separate_bias:
        bias_s2_bounds = check_bounds(bias_s2_bounds, "bias_s2_bounds")
        if fixed_width is not None:
            raise ValueError("fixed_width and bias_s2_bounds cannot be combined; give one of them")
    starts = _starts(starts, s2_bounds, width_bounds, fixed_width, bias_s2_bounds)
    max_iter = positive_int(max_iter, "max_iter")
    gtol = positive_scalar(gtol, "gtol")

    n_free = 1 if fixed_width is not None else (3 if separate_bias else 2)
    bounds = [tuple(np.log(s2_bounds)), tuple(np.log(width_bounds))]
    if separate_bias:
        bounds.append(tuple(np.log(bias_s2_bounds)))
    objective = _EvidenceObjective(squared_distances(X_train, X_train), y_train, likelihood,
                                   n_free, fixed_width)
    return _lbfgs_from_starts(objective, starts, bounds[:n_free], max_iter=max_iter, gtol=gtol)


class _EvidenceObjective:
    """``theta -> (-log Z, -grad log Z)`` over the free log hyper-parameters, with Newton's
    mode warm-started from the previous evaluation (the objective of the search; the optimiser
    is :func:`_lbfgs_from_starts`).

    ``theta`` is ``(log s2, log l, log bias_s2)`` cut to its first ``n_free`` entries: 1 when
    the width is fixed at ``fixed_width``, 3 with a separate bias prior variance, else 2.
    ``d2`` (N, N) are the squared distances of the training inputs, computed once for every l.
    """

    def __init__(self, d2, y, likelihood, n_free: int, fixed_width):
        self.d2, self.y, self.likelihood = d2, y, likelihood
        self.n_free, self.fixed_width = n_free, fixed_width
        self.last: EvidenceGradient | None = None
        self.n_evaluations = 0

    def evaluate(self, theta, width_derivative: bool) -> EvidenceGradient:
        """The evidence and its gradient at ``theta`` (with d/dlog l if ``width_derivative``)."""
        s2 = float(np.exp(theta[0]))
        l = self.fixed_width if self.fixed_width is not None else float(np.exp(theta[1]))
        b2 = float(np.exp(theta[2])) if self.n_free == 3 else None
        starts_w = []
        if self.last is not None:
            # Warm start for Newton: the last mode, or its first-order prediction at the new
            # theta, w + (dw/dtheta) dtheta (E3), whichever has the higher log posterior.
            last = self.last
            previous = [last.s2, last.width] + ([last.bias_s2] if self.n_free == 3 else [])
            dtheta = np.asarray(theta, dtype=float) - np.log(previous)[:self.n_free]
            w_last = last.posterior.w_map
            starts_w = [w_last + last.mode_sensitivity[:, :self.n_free] @ dtheta, w_last]
        self.last = _evidence_gradient(self.d2, self.y, s2, l, w0=starts_w,
                                       width_derivative=width_derivative,
                                       likelihood=self.likelihood, bias_s2=b2)
        self.n_evaluations += 1
        return self.last

    def __call__(self, theta):
        # d/dlog l only if l is free; minimise -log Z
        res = self.evaluate(theta, width_derivative=self.fixed_width is None)
        return -res.log_evidence, -res.gradient[:self.n_free]


def _lbfgs_from_starts(objective: _EvidenceObjective, starts, bounds, *, max_iter, gtol):
    """L-BFGS-B on ``objective`` from each start (in log space, within ``bounds``); the best."""
    n_free, fixed_width = objective.n_free, objective.fixed_width
    runs, finals = [], []
    for start in starts:
        theta0 = np.log(start)[:n_free]
        path = [theta0.copy()]
        n_before = objective.n_evaluations
        opt = minimize(
            objective, theta0, jac=True, method="L-BFGS-B", bounds=bounds,
            callback=lambda xk: path.append(np.array(xk, dtype=float)),
            options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-12},
        )
        final = objective.evaluate(opt.x, width_derivative=True)   # returned point, full gradient
        path = np.array(path)
        if fixed_width is not None:
            path = np.column_stack([path, np.full(len(path), np.log(fixed_width))])
        finals.append(final)
        runs.append(EvidenceRun(
            start=start, s2=final.s2, width=final.width, log_evidence=final.log_evidence,
            gradient=final.gradient, path=path,
            n_evaluations=objective.n_evaluations - n_before,
            success=bool(opt.success), message=str(opt.message), bias_s2=final.bias_s2,
        ))
    k = int(np.argmax([r.log_evidence for r in runs]))        # first of the best runs
    best = finals[k]
    return EvidenceOptimum(
        s2=best.s2, width=best.width, log_evidence=best.log_evidence, gradient=best.gradient,
        n_evaluations=objective.n_evaluations, starts=starts, runs=tuple(runs),
        posterior=best.posterior, bias_s2=best.bias_s2,
    )


# --------------------------------------------------------------------------- MacKay's update


@dataclass(frozen=True)
class MacKayResult:
    """MacKay's fixed-point iteration for ``s2`` at a fixed width.

    Attributes
    ----------
    s2, width : float
        The fixed point ``s2 = w_MAP.w_MAP / gamma`` (E8) and the width.
    log_evidence : float
        ``log Z`` at the fixed point.
    gamma : float
        Effective number of parameters ``M - tr(A^{-1}) / s2`` there.
    gradient : ndarray, shape (2,)
        Total ``dlogZ/dtheta`` there; its first entry equals the implicit part (E2 . E3),
        the explicit part (E4) being zero at the fixed point.
    explicit, implicit : ndarray, shape (2,)
        The two parts of ``gradient``.
    s2_path : ndarray, shape (n_iter + 1,)
        The iterates, starting value first.
    n_iter : int
        Updates performed.
    posterior : LaplacePosterior
        The Laplace fit at the fixed point.
    """

    s2: float
    width: float
    log_evidence: float
    gamma: float
    gradient: np.ndarray
    explicit: np.ndarray
    implicit: np.ndarray
    s2_path: np.ndarray
    n_iter: int
    posterior: LaplacePosterior


def mackay_s2(
    X_train, y_train, width, *, s2_init: float = 1.0, tol: float = 1e-8, max_iter: int = 500
) -> MacKayResult:
    """MacKay's fixed-point update of the prior variance at a fixed RBF width (E8).

    Repeats: fit the Laplace posterior at ``s2`` (warm-started from the previous mode), compute
    ``gamma = sum_n W_nn h_n`` (``= M - tr(A^{-1}) / s2``, book eq. ``eo-mackay``) and set
    ``s2 <- w_MAP.w_MAP / gamma``, until the relative change of ``s2`` is at most ``tol``.

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs (also the RBF centres).
    y_train : array_like, shape (N,)
        Training labels 0/1.
    width : float
        RBF width ``l > 0``, held fixed.
    s2_init : float
        Starting prior variance.
    tol : float
        Relative tolerance on the change of ``s2``.
    max_iter : int
        Maximum number of updates.

    Returns
    -------
    MacKayResult

    Raises
    ------
    lib.laplace.ConvergenceError
        If the iteration has not converged after ``max_iter`` updates.
    """
    X_train, y_train = _training_data(X_train, y_train)
    width = check_width(width, "width")
    s2 = positive_scalar(s2_init, "s2_init")
    tol = positive_scalar(tol, "tol")
    max_iter = positive_int(max_iter, "max_iter")

    d2 = squared_distances(X_train, X_train)
    path = [s2]
    w0 = None
    for it in range(1, max_iter + 1):
        res = _evidence_gradient(d2, y_train, s2, width, w0=w0, width_derivative=False)
        w0 = res.posterior.w_map
        s2_new = float(w0 @ w0) / res.gamma                   # (E8)
        path.append(s2_new)
        if abs(s2_new - s2) <= tol * s2:
            s2 = s2_new
            break
        s2 = s2_new
    else:
        raise ConvergenceError(
            f"MacKay's update did not converge in max_iter={max_iter} updates (width={width}, "
            f"last s2={s2:.6g}); raise max_iter or loosen tol"
        )
    res = _evidence_gradient(d2, y_train, s2, width, w0=w0)
    return MacKayResult(
        s2=s2, width=width, log_evidence=res.log_evidence, gamma=res.gamma,
        gradient=res.gradient, explicit=res.explicit, implicit=res.implicit,
        s2_path=np.array(path), n_iter=it, posterior=res.posterior,
    )
