"""MacKay's fixed-point update of the prior variance ``s2`` at a fixed RBF width.

Derived in the book chapter "Maximising the evidence automatically", eq. ``eo-mackay``
((E8) of :mod:`lib.hyper.gradient`): ``s2 <- w_MAP.w_MAP / gamma``, which zeroes the explicit
part of the gradient and ignores the implicit one. Reference: MacKay (1992), "Bayesian
interpolation" and "The evidence framework applied to classification networks".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib._validate import positive_int, positive_scalar
from lib._validate import width as check_width
from lib.features import squared_distances
from lib.hyper.gradient import _evidence_gradient, _training_data
from lib.laplace import ConvergenceError, LaplacePosterior


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
        # (E8), book eq. eo-mackay: gamma = sum_n W_nn h_n = M - tr(A^{-1}) / s2, the number of
        # well-determined parameters (lib.scores.effective_parameters), from _evidence_gradient's
        # h_n; (E4) is zero at the fixed point
        s2_new = float(w0 @ w0) / res.gamma
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
