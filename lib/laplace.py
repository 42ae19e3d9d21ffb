"""MAP estimate, Laplace approximation and Laplace log evidence of the classifier.

Derived in the book chapters "MAP", "The Laplace approximation" and "The model evidence"
(report sections 2.1-2.1.2); the other likelihoods and the per-weight prior in "The probit
likelihood". Book equations implemented here:

* ``map-logpost``: ``Psi(w) = L(w) - w.w / (2 s2)``, ``s2`` the prior variance (the report's
  sigma_0) of ``w ~ N(0, s2 I)`` (``map-prior``), or ``N(0, diag(s2))`` for a vector ``s2``;
* ``map-grad-post``: ``grad Psi(w) = Phi^T (y - sigma) - w / s2``;
* ``map-precision``, ``lap-precision``: ``A = I / s2 + Phi^T W Phi``,
  ``W = diag(sigma_n (1 - sigma_n))``;
* ``map-newton``: ``A d = grad Psi(w)``, ``w <- w + t d``;
* ``eq-ev-laplace``: ``log Z ~= L(w_MAP) - w_MAP.w_MAP / (2 s2) - (M/2) log s2 - (1/2) log|A|``;
* ``eq-ev-cholesky``: ``log|A| = 2 sum_i log L_ii``, ``A = L L^T``.

Reference: Rasmussen & Williams (2006), algorithm 3.1, the same mode in function space
(``f = Phi w``, ``K = s2 Phi Phi^T``); :func:`fit_laplace` is its weight-space form, and the
comments at its lines cite the algorithm's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular

from lib._validate import as_design, as_design_labels, as_vector, as_weights_design_labels, positive_int, positive_scalar
from lib.likelihood import LOGISTIC, Likelihood, as_likelihood, log_likelihood_from_activations, logistic_curvature


class ConvergenceError(RuntimeError):
    """Newton's method did not reach the requested tolerance."""


@dataclass(frozen=True)
class LaplacePosterior:
    """Gaussian approximation ``N(w_map, A^{-1})`` of the posterior over weights.

    ``w_map`` (M,) is the posterior mode; ``chol`` (M, M) the lower Cholesky factor ``L`` of the
    precision, ``A = L L^T``; ``s2`` the prior variance (a float, or (M,) one per weight);
    ``log_likelihood`` ``L(w_map)`` on the training data; ``n_iter`` the Newton iterations
    used; ``likelihood`` the :class:`lib.likelihood.Likelihood` it was fitted with
    (:data:`lib.likelihood.LOGISTIC` by default): every function that scores the posterior
    (:mod:`lib.predictive`, :mod:`lib.scores`) uses its link, so a probit fit is never scored
    as a logistic one.
    """

    w_map: np.ndarray
    chol: np.ndarray
    s2: float
    log_likelihood: float
    n_iter: int
    likelihood: Likelihood = LOGISTIC

    @property
    def n_weights(self) -> int:
        """Number of weights M."""
        return self.w_map.shape[0]

    @property
    def precision(self) -> np.ndarray:
        """Precision ``A = L L^T``, shape (M, M)."""
        return self.chol @ self.chol.T

    @property
    def marginal_variances(self) -> np.ndarray:
        """``diag(A^{-1})``, shape (M,): the posterior variance of each weight, as the squared
        column norms of ``L^{-1}`` (``A^{-1} = L^{-T} L^{-1}``), one triangular solve (``A`` is
        never inverted)."""
        L_inv = solve_triangular(self.chol, np.eye(self.n_weights), lower=True)
        return np.einsum("ij,ij->j", L_inv, L_inv)

    @property
    def log_det_precision(self) -> float:
        """``log|A| = 2 sum log L_ii`` (book eq. ``eq-ev-cholesky``)."""
        return float(2.0 * np.sum(np.log(np.diag(self.chol))))

    @property
    def evidence_terms(self) -> dict[str, float]:
        """The four terms of the Laplace log evidence (book eq. ``eq-ev-laplace``):
        ``log_likelihood`` ``L(w_MAP)``; ``prior_quadratic`` ``-w_MAP.w_MAP / (2 s2)``;
        ``prior_normaliser`` ``-(M/2) log s2``; ``occam_log_det`` ``-(1/2) log|A|``."""
        return {
            "log_likelihood": self.log_likelihood,
            "prior_quadratic": log_prior_quadratic(self.w_map, self.s2),
            "prior_normaliser": _prior_normaliser(self.s2, self.n_weights),
            "occam_log_det": -0.5 * self.log_det_precision,
        }

    @property
    def log_evidence(self) -> float:
        """Laplace approximation of the log evidence ``log Z = log p(y | s2, Phi)``: the sum of
        :attr:`evidence_terms` (book eq. ``eq-ev-laplace``; R&W algorithm 3.1, line 10)."""
        t = self.evidence_terms
        # Line 10 of R&W algorithm 3.1: log q = -a.f / 2 + log p(y | f) - sum_i log L_ii, L the
        # factor of B; here a.f / 2 = w.w / (2 s2) and that sum is (1/2) log|B| = (1/2) log|s2 A|
        # = (M/2) log s2 + (1/2) log|A| (book eq. grid-dual)
        return t["log_likelihood"] + t["prior_quadratic"] + t["prior_normaliser"] + t["occam_log_det"]


def precision_matrix(w, Phi, s2) -> np.ndarray:
    """Precision ``A = I / s2 + Phi^T W Phi = -grad grad Psi(w)``, (M, M), at weights ``w`` (M,),
    ``Phi`` (N, M), ``s2`` the prior variance (a float); ``W = diag(sigma_n (1 - sigma_n))``.
    Vectorised: one matrix product, no loop over n."""
    Phi = as_design(Phi, "Phi")
    w = as_vector(w, "w", length=Phi.shape[1])
    return _precision_from_curvature(logistic_curvature(Phi @ w), Phi, positive_scalar(s2, "s2"))


def _precision_from_curvature(W, Phi, s2):
    """``A = Phi^T diag(W) Phi + diag(1 / s2)`` (``s2`` a float or a vector; no checks)."""
    # Book eq. map-precision; W is line 4 of R&W algorithm 3.1, W = -grad grad log p(y | f)
    A = (Phi.T * W) @ Phi
    A[np.diag_indices_from(A)] += 1.0 / s2
    return A


def _prior_variances(s2, M):
    """``s2`` checked: a positive float, or a vector of M positive per-weight variances."""
    if np.ndim(s2) == 0:
        s2 = positive_scalar(s2, "s2")
    else:
        s2 = as_vector(s2, "s2", length=M)
        if not np.all(s2 > 0):
            raise ValueError("s2 must hold positive prior variances")
    if np.min(s2) < _MIN_PRIOR_VARIANCE:
        raise ValueError(f"s2 must be at least {_MIN_PRIOR_VARIANCE:.3g} (the prior precision "
                         f"1/s2 must be a finite float), got {np.min(s2)!r}")
    return s2


#: The smallest prior variance whose inverse is a finite float.
_MIN_PRIOR_VARIANCE = 1.0 / np.finfo(float).max


def bias_prior_variances(s2, bias_s2, n_weights) -> np.ndarray:
    """Per-weight prior variances ``diag(S)``: ``s2`` for the first ``n_weights - 1`` weights (the
    RBF weights), ``bias_s2`` for the last (the bias column of :func:`lib.features.rbf_features`).

    Barrett's note's prior (book chapter "The probit likelihood": ``s2`` is its ``alpha^2``,
    ``bias_s2`` its ``beta^2``). Shape (n_weights,).
    """
    v = np.full(positive_int(n_weights, "n_weights"), positive_scalar(s2, "s2"))
    v[-1] = positive_scalar(bias_s2, "bias_s2")
    return v


def log_prior_quadratic(w, s2) -> float:
    """``-w.w / (2 s2)``, or ``-sum_i w_i^2 / (2 s2_i)`` for a vector ``s2`` (no checks)."""
    if np.ndim(s2) == 0:
        return prior_quadratic(float(w @ w), s2)
    return -0.5 * float(np.sum(w * w / s2))


def _prior_normaliser(s2, M) -> float:
    """``-(M/2) log s2``, or ``-(1/2) sum_i log s2_i`` for a vector ``s2`` (no checks)."""
    if np.ndim(s2) == 0:
        return 0.0 - 0.5 * M * float(np.log(s2))  # 0.0 at s2 = 1
    return -0.5 * float(np.sum(np.log(s2)))


def prior_quadratic(sq_norm, s2) -> float:
    """``-w.w / (2 s2)``, the log prior ``log N(w | 0, s2 I)`` up to its normaliser (no checks),
    book eq. ``map-prior``, from ``sq_norm`` = ``w.w``."""
    return -sq_norm / (2.0 * s2)


def log_posterior_from_activations(a, y, sq_norm, s2) -> float:
    """Log posterior ``Psi = L(a) - sq_norm / (2 s2)`` up to a constant (no checks).

    The one definition of ``Psi`` (book eq. ``map-logpost``): the log-likelihood of the
    activations ``a = Phi w`` (:func:`lib.likelihood.log_likelihood_from_activations`) plus the
    log prior ``-w.w / (2 s2)`` without its constant. No input checks: a hot path (every
    Newton step and step halving here and in :mod:`lib.fastgrid`), called on checked arrays.
    ``a`` (N,) activations ``Phi w``, ``y`` (N,) labels 0/1, ``sq_norm`` ``w.w``, ``s2`` the
    prior variance (a float).
    """
    return log_likelihood_from_activations(a, y) + prior_quadratic(sq_norm, s2)


def log_posterior(w, Phi, y, s2) -> float:
    """Log posterior ``Psi(w) = L(w) - w.w / (2 s2)`` up to a constant (book eq. ``map-logpost``),
    a float: ``w`` (M,), ``Phi`` (N, M), ``y`` (N,) labels 0/1, ``s2`` the prior variance."""
    w, Phi, y = as_weights_design_labels(w, Phi, y)
    s2 = positive_scalar(s2, "s2")
    return log_posterior_from_activations(Phi @ w, y, float(w @ w), s2)


def _cholesky_of_precision(A, s2):
    """Lower Cholesky factor of the posterior precision ``A``, or a :class:`ConvergenceError`
    saying why it has none: at a very large ``s2`` the prior's ``I / s2`` is lost to rounding
    against ``Phi^T W Phi``, which is singular when the design has more columns than its rank."""
    try:
        return cholesky(A, lower=True)
    except np.linalg.LinAlgError:
        raise ConvergenceError(
            f"s2 = {np.max(s2):.3g} is too large for this design: the posterior precision "
            "A = I/s2 + Phi^T W Phi is not positive definite in floating point (the prior is too "
            "weak to regularise it); use a smaller s2"
        ) from None


def _step_halving(psi_of_step, psi) -> tuple[float, float]:
    """The step length ``t``, halved from 1, at which ``Psi`` does not decrease (beyond rounding;
    ``t >= 1e-10``), and ``Psi`` there: a safeguard far from the mode. ``psi_of_step(t)`` is
    ``Psi`` at ``w + t d``. lib's one step halving (also :mod:`lib.fastgrid` and softmax's)."""
    t = 1.0
    while True:
        psi_t = psi_of_step(t)
        if psi_t >= psi - 1e-12 * abs(psi) or t < 1e-10:
            return t, psi_t
        t *= 0.5


def _step_negligible(Phi, w, step, tol) -> bool:
    """Converged when the step is negligible in weight space, or in activation space: at large
    s2 rounding in the design's near-null directions (scaled by s2) keeps the weight step above
    tol although the fitted activations no longer move."""
    if np.max(np.abs(step)) <= tol * (1.0 + np.max(np.abs(w))):
        return True
    return bool(np.max(np.abs(Phi @ step)) <= tol * (1.0 + np.max(np.abs(Phi @ w))))


#: Newton's default relative tolerance on the step (:func:`fit_laplace`).
NEWTON_TOL = 1e-10


def fit_laplace(Phi, y, s2, *, w0=None, tol: float = NEWTON_TOL, max_iter: int = 100,
                likelihood: Likelihood = LOGISTIC) -> LaplacePosterior:
    """MAP by Newton's method, then the Laplace approximation at the mode.

    Newton step (gradient of ``Psi`` over its negative Hessian ``A``, by Cholesky), with ``t``
    halved until ``Psi`` does not decrease (a safeguard far from the mode)::

        g = Phi^T (y - sigma(Phi w)) - w / s2,     A d = g,     w <- w + t d

    Another ``likelihood`` supplies ``y - sigma(Phi w)`` (its ``gradient``) and ``W`` in ``A``
    (its ``curvature``); a vector ``s2`` acts elementwise. Converged when
    ``max |t d| <= tol (1 + max |w|)`` or ``max |Phi t d| <= tol (1 + max |Phi w|)``.

    ``Phi`` (N, M) and ``y`` (N,) of 0/1 are the training design and labels; ``s2 > 0`` the prior
    variance, or one per weight, shape (M,) (``w ~ N(0, diag(s2))``); ``w0`` (M,) a warm start
    (zeros by default); ``tol`` the relative tolerance on the step; ``max_iter`` the most Newton
    iterations. Returns a :class:`LaplacePosterior`; raises :class:`ConvergenceError` if the
    tolerance is not met within ``max_iter`` iterations.
    """
    Phi, y = as_design_labels(Phi, y, ("Phi", "y"))
    M = Phi.shape[1]
    s2 = _prior_variances(s2, M)
    w0 = None if w0 is None else as_vector(w0, "w0", length=M)
    return _fit_laplace(Phi, y, s2, w0, positive_scalar(tol, "tol"),
                        positive_int(max_iter, "max_iter"), as_likelihood(likelihood))


def _fit_laplace(Phi, y, s2, w0, tol, max_iter, lik) -> LaplacePosterior:
    """:func:`fit_laplace` on checked arguments (lib's internal callers; no checks)."""
    M = Phi.shape[1]
    # Line 2 of R&W algorithm 3.1: f = 0; here w = 0, or a warm start
    w = np.zeros(M) if w0 is None else np.array(w0, dtype=float)

    def psi_at(w):
        # Psi = L + log prior up to a constant (= log_posterior_from_activations, logistic)
        return lik.log_likelihood(Phi @ w, y) + log_prior_quadratic(w, s2)

    psi = psi_at(w)
    for it in range(1, max_iter + 1):                         # line 3: repeat
        a = Phi @ w
        g = Phi.T @ lik.gradient(a, y) - w / s2               # grad Psi (book eq. map-grad-post)
        # Line 4: W = -grad grad log p(y | f); here inside A = I / s2 + Phi^T W Phi
        A = _precision_from_curvature(lik.curvature(a, y), Phi, s2)
        # Line 5: L = cholesky(B), B = I + W^1/2 K W^1/2; here A = L L^T (|B| = |s2 A|)
        L = _cholesky_of_precision(A, s2)
        # Lines 6-8: b = W f + grad log p, a = b - W^1/2 L^T \ (L \ (W^1/2 K b)), f = K a; here
        # book eq. map-newton, A d = grad Psi, w <- w + t d (the halving is not in R&W)
        d = cho_solve((L, True), g)
        t, psi = _step_halving(lambda t: psi_at(w + t * d), psi)
        step = t * d
        w = w + step
        # Line 9: until convergence (of Psi in the algorithm); here the step is negligible
        if _step_negligible(Phi, w, step, tol):
            break
    else:
        raise ConvergenceError(f"Newton's method did not converge in max_iter={max_iter} "
                               f"iterations (s2={s2}, {lik.name} likelihood); "
                               "raise max_iter or loosen tol")
    a = Phi @ w
    # W and L at the mode, for line 10 (LaplacePosterior.log_evidence) and the predictive
    L = _cholesky_of_precision(_precision_from_curvature(lik.curvature(a, y), Phi, s2), s2)
    return LaplacePosterior(w_map=w, chol=L, s2=s2, log_likelihood=lik.log_likelihood(a, y),
                            n_iter=it, likelihood=lik)


def log_evidence(Phi, y, s2, **kwargs) -> float:
    """Laplace log evidence ``log Z``; shorthand for ``fit_laplace(...).log_evidence``."""
    return fit_laplace(Phi, y, s2, **kwargs).log_evidence
