"""Generative classification with Gaussian class-conditional densities, fitted by maximum likelihood.

The generative approach of the notes {cite}`notesch7` models the class-conditional densities
``p(x | C_k)`` and the class priors ``p(C_k)``, and obtains the class posterior by Bayes'
theorem (chapters/softmax.ipynb, eq. ``gen-bayes``). Here ``p(x | C_k) = N(x | mu_k, Sigma_k)``
{cite}`bishop2006prml` (section 4.2): with one covariance shared by all classes ("linear
discriminant analysis") the posterior is a softmax of linear functions of ``x`` (eq.
``gen-linear``); with one covariance per class ("quadratic discriminant analysis") the
decision boundaries are quadratic.

Shapes: inputs ``X`` (N, D), integer labels ``y`` (N,) in 0..K-1, priors ``pi`` (K,), means
(K, D), covariances (K, D, D). Every covariance is used through its lower Cholesky factor
``L_k`` (``Sigma_k = L_k L_k^T``): ``log|Sigma_k| = 2 sum_i log (L_k)_ii`` and the
Mahalanobis term by a triangular solve, never an inverse or a determinant.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, solve_triangular
from scipy.special import log_softmax, logsumexp, softmax

from lib import _validate
from lib.models.softmax import one_hot

__all__ = [
    "GaussianClassifier", "gaussian_classifier", "fit_gaussian_classifier", "log_joint",
    "log_marginal", "posterior", "predict", "average_log_likelihood", "joint_log_likelihood",
    "shared_linear_weights",
]


@dataclass(frozen=True)
class GaussianClassifier:
    """Class priors, means and Cholesky factors of the class covariances.

    Build it with :func:`fit_gaussian_classifier` (maximum likelihood) or
    :func:`gaussian_classifier` (given parameters), which check the inputs.
    """

    priors: np.ndarray
    """Class priors ``pi_k = p(C_k)``, shape (K,), positive, summing to 1."""
    means: np.ndarray
    """Class means ``mu_k``, shape (K, D)."""
    chol: np.ndarray
    """Lower Cholesky factors ``L_k`` of the covariances, shape (K, D, D) (all equal if shared)."""
    shared: bool
    """True if every class has the same covariance (linear decision boundaries)."""

    @property
    def K(self) -> int:
        """The number of classes."""
        return self.priors.shape[0]

    @property
    def D(self) -> int:
        """The input dimension."""
        return self.means.shape[1]

    @property
    def covariances(self) -> np.ndarray:
        """``Sigma_k = L_k L_k^T``, shape (K, D, D)."""
        return self.chol @ np.swapaxes(self.chol, 1, 2)


def _cholesky(S: np.ndarray, what: str) -> np.ndarray:
    try:
        return np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        raise ValueError(f"{what} is not positive definite (singular: the points span fewer "
                         f"than D = {S.shape[0]} dimensions)") from None


def _check_priors(priors) -> np.ndarray:
    priors = _validate.as_probabilities(priors, "priors", what="class probabilities")
    if np.any(priors <= 0):
        raise ValueError("priors must be positive (log p(C_k) is used)")
    if abs(priors.sum() - 1) > 1e-10:
        raise ValueError(f"priors must sum to 1, got {priors.sum()!r}")
    return priors


def gaussian_classifier(priors, means, covariances) -> GaussianClassifier:
    """The classifier with given parameters, checked.

    Parameters
    ----------
    priors : array_like, shape (K,)
        Class priors, positive, summing to 1.
    means : array_like, shape (K, D)
        Class means.
    covariances : array_like, shape (D, D) or (K, D, D)
        One covariance shared by every class, or one per class; symmetric positive definite.

    Returns
    -------
    GaussianClassifier
        ``shared`` is True when one (D, D) matrix was given.
    """
    priors = _check_priors(priors)
    K = priors.shape[0]
    means = _validate.as_matrix(means, "means")
    if means.shape[0] != K:
        raise ValueError(f"means must have one row per class (K = {K}), got shape {means.shape}")
    D = means.shape[1]
    shared = np.ndim(covariances) == 2
    if shared:
        covs = [_validate.as_matrix(covariances, "covariances", n_cols=D)]
        names = ["covariances"]
    else:
        if np.ndim(covariances) != 3 or len(covariances) != K:
            raise ValueError(f"covariances must have shape (D, D) or (K, D, D) = ({K}, {D}, {D}), "
                             f"got shape {np.shape(covariances)}")
        names = [f"covariances[{k}]" for k in range(K)]
        covs = [_validate.as_matrix(c, n, n_cols=D) for c, n in zip(covariances, names)]
    for S, name in zip(covs, names):
        if S.shape != (D, D):
            raise ValueError(f"{name} must have shape ({D}, {D}), got {S.shape}")
        if not np.allclose(S, S.T, rtol=1e-12, atol=0):
            raise ValueError(f"{name} must be symmetric")
    chol = np.array([_cholesky(S, name) for S, name in zip(covs, names)])
    if shared:
        chol = np.repeat(chol, K, axis=0)
    return GaussianClassifier(priors=priors, means=means, chol=chol, shared=shared)


def _check_X_y(X, y, K: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Inputs (N, D) and labels as one-hot (N, K); labels checked by :func:`lib.models.softmax.one_hot`."""
    X = _validate.as_matrix(X, "X")
    return X, one_hot(y, K, length=X.shape[0])


def fit_gaussian_classifier(X, y, *, shared: bool = True) -> GaussianClassifier:
    """Maximum-likelihood Gaussian class-conditional classifier (eq. ``gen-mle``).

    ``pi_k = N_k / N``, ``mu_k`` the mean of class k's inputs, and covariances with the
    maximum-likelihood denominators: per class ``Sigma_k = (1/N_k) sum_{n in C_k}
    (x_n - mu_k)(x_n - mu_k)^T``, or shared ``Sigma = sum_k (N_k / N) Sigma_k``
    {cite}`bishop2006prml` (section 4.2.2). These maximise :func:`joint_log_likelihood`.

    Parameters
    ----------
    X : array_like, shape (N, D)
        Inputs.
    y : array_like of int, shape (N,)
        Labels 0..K-1; every class must occur.
    shared : bool
        One covariance for all classes (linear boundaries) or one per class (quadratic).

    Returns
    -------
    GaussianClassifier

    Raises
    ------
    ValueError
        If a class has no points, there are fewer than 2 classes, a class has fewer than
        D + 1 points (per-class covariance) or N < K + D (shared), or a covariance is singular.
    """
    X, Y = _check_X_y(X, y)
    N, D = X.shape
    K = Y.shape[1]
    counts = Y.sum(axis=0).astype(int)
    missing = np.flatnonzero(counts == 0)
    if missing.size:
        raise ValueError(f"y has no points of class {missing[0]} (labels must be 0..K-1 = "
                         f"0..{K - 1}, each present)")
    if K < 2:
        raise ValueError("y must hold at least 2 classes")
    means = (Y.T @ X) / counts[:, None]
    R = X - Y @ means
    if shared:
        if N < K + D:
            raise ValueError(f"the shared covariance needs N >= K + D = {K + D} points, got "
                             f"N = {N}")
        covariances = (R.T @ R / N)[None]
        what = ["the shared covariance"]
    else:
        for k in range(K):
            if counts[k] < D + 1:
                raise ValueError(f"class {k} has {counts[k]} point(s); its covariance in D = {D} "
                                 f"dimensions needs at least {D + 1}")
        covariances = np.einsum("nk,ni,nj->kij", Y, R, R) / counts[:, None, None]
        what = [f"the covariance of class {k}" for k in range(K)]
    chol = np.array([_cholesky(S, w) for S, w in zip(covariances, what)])
    if shared:
        chol = np.repeat(chol, K, axis=0)
    return GaussianClassifier(priors=counts / N, means=means, chol=chol, shared=shared)


def log_joint(model: GaussianClassifier, X) -> np.ndarray:
    """``log p(x_n, C_k) = log pi_k + log N(x_n | mu_k, Sigma_k)`` (eq. ``gen-log-joint``).

    Parameters
    ----------
    model : GaussianClassifier
    X : array_like, shape (N, D)

    Returns
    -------
    ndarray, shape (N, K)
    """
    X = _validate.as_matrix(X, "X", n_cols=model.D)
    out = np.empty((X.shape[0], model.K))
    for k in range(model.K):
        L = model.chol[k]
        Z = solve_triangular(L, (X - model.means[k]).T, lower=True)
        half_logdet = np.sum(np.log(np.diag(L)))
        out[:, k] = (np.log(model.priors[k]) - 0.5 * np.sum(Z * Z, axis=0) - half_logdet
                     - 0.5 * model.D * np.log(2 * np.pi))
    return out


def log_marginal(model: GaussianClassifier, X) -> np.ndarray:
    """``log p(x_n) = log sum_k p(x_n, C_k)``, shape (N,): the model's density of the inputs."""
    return logsumexp(log_joint(model, X), axis=1)


def posterior(model: GaussianClassifier, X) -> np.ndarray:
    """Class posteriors ``p(C_k | x_n)`` by Bayes' theorem (eq. ``gen-bayes``), shape (N, K).

    The softmax of the log joint over the classes (a log-sum-exp normalisation).
    """
    return softmax(log_joint(model, X), axis=1)


def predict(model: GaussianClassifier, X) -> np.ndarray:
    """The most probable class ``argmax_k p(C_k | x_n)``, integer labels of shape (N,)."""
    return np.argmax(log_joint(model, X), axis=1)


def average_log_likelihood(model: GaussianClassifier, X, y) -> float:
    """``(1/N) sum_n log p(y_n | x_n)``: the conditional log-likelihood per point.

    Parameters
    ----------
    model : GaussianClassifier
    X : array_like, shape (N, D)
    y : array_like of int, shape (N,)
        Labels 0..K-1.
    """
    X, Y = _check_X_y(X, y, model.K)
    return float(np.sum(Y * log_softmax(log_joint(model, X), axis=1)) / X.shape[0])


def joint_log_likelihood(model: GaussianClassifier, X, y) -> float:
    """``sum_n log p(x_n, y_n)``: the generative model's own objective (total, not averaged).

    It equals ``sum_n [log p(y_n | x_n) + log p(x_n)]``; :func:`fit_gaussian_classifier`
    maximises it.

    Parameters
    ----------
    model : GaussianClassifier
    X : array_like, shape (N, D)
    y : array_like of int, shape (N,)
        Labels 0..K-1.
    """
    X, Y = _check_X_y(X, y, model.K)
    return float(np.sum(Y * log_joint(model, X)))


def shared_linear_weights(model: GaussianClassifier) -> tuple[np.ndarray, np.ndarray]:
    """Weights of the linear activations of a shared-covariance model (eq. ``gen-linear``).

    ``a_k(x) = w_k^T x + w_k0`` with ``w_k = Sigma^{-1} mu_k`` and
    ``w_k0 = -mu_k^T Sigma^{-1} mu_k / 2 + log pi_k`` {cite}`bishop2006prml` (eqs. 4.68-4.70);
    ``p(C_k | x) = softmax_k(a(x))``.

    Returns
    -------
    W : ndarray, shape (D, K)
        Column k is ``w_k``.
    w0 : ndarray, shape (K,)

    Raises
    ------
    ValueError
        If the model has one covariance per class (its activations are quadratic in x).
    """
    if not model.shared:
        raise ValueError("model has one covariance per class: its activations are quadratic, "
                         "not linear, in x")
    W = cho_solve((model.chol[0], True), model.means.T)
    w0 = -0.5 * np.sum(model.means.T * W, axis=0) + np.log(model.priors)
    return W, w0
