"""The exact answer an approximation is measured against, by Monte Carlo with its error: the
posterior's mean and covariance from a long NUTS run in Laplace-whitened coordinates (a dense
mass matrix, :func:`lib.checks.sampling.sample_posterior` with ``precondition``) and ``log Z``
by importance sampling from a Student-t fitted to the draws (:func:`importance_log_z`).

References: Hoffman & Gelman (2014) (NUTS); Gelman et al. (2013), ch. 11 (effective sample
size); Owen (2013), ch. 9 (importance sampling, its standard error and effective sample size).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cholesky, solve_triangular
from scipy.special import gammaln, logsumexp

from lib._validate import as_matrix, as_vector, int_at_least, positive_scalar
from lib.checks import sampling
from lib.laplace import fit_laplace


@dataclass(frozen=True)
class LogEvidenceEstimate:
    """An importance-sampling estimate of ``log Z``: ``log_z``, its Monte Carlo standard error
    ``se`` (delta method), the effective sample size ``ess`` of the weights (Kish) out of
    ``n_draws``, and the largest normalised weight ``max_weight``."""

    log_z: float
    se: float
    ess: float
    n_draws: int
    max_weight: float


def _log_student_t(W, mean, chol, df):
    """``log t_df(w | mean, L L^T)`` for the rows of ``W`` (no checks)."""
    M = mean.shape[0]
    r = solve_triangular(chol, (W - mean).T, lower=True)          # L^{-1} (w - mean)
    return (gammaln((df + M) / 2) - gammaln(df / 2) - 0.5 * M * np.log(df * np.pi)
            - np.sum(np.log(np.diag(chol)))
            - 0.5 * (df + M) * np.log1p(np.sum(r**2, axis=0) / df))


def importance_log_z(Phi, y, s2, mean, cov, *, n_draws: int = 20_000, df: float = 5.0,
                     seed: int = 0) -> LogEvidenceEstimate:
    """``log Z = log int f(w) dw`` by importance sampling from a Student-t proposal.

    ``Phi`` (N, M), ``y`` (N,) labels 0/1, ``s2`` the prior variance (``f`` as in
    :func:`lib.checks.sampling.log_joint`); ``mean`` (M,) and ``cov`` (M, M) the proposal's
    centre and scale matrix (e.g. the draws' mean and covariance, or the Laplace fit's);
    ``n_draws`` proposal draws, ``df`` its degrees of freedom (heavier tails than the
    posterior's keep the weights' variance finite), ``seed`` of ``numpy.random.default_rng``.
    ``Z_hat = mean(f / t)``; its standard error by the delta method,
    ``se(log Z_hat) = sd(f / t) / (sqrt(n) Z_hat)``. Returns a :class:`LogEvidenceEstimate`.
    """
    Phi, y, s2 = sampling._problem(Phi, y, s2)
    M = Phi.shape[1]
    mean = as_vector(mean, "mean", length=M)
    cov = as_matrix(cov, "cov", n_cols=M)
    if cov.shape != (M, M) or not np.allclose(cov, cov.T):
        raise ValueError(f"cov must be a symmetric ({M}, {M}) matrix, got shape {cov.shape}")
    try:
        chol = cholesky(cov, lower=True)
    except np.linalg.LinAlgError:
        raise ValueError("cov must be positive definite") from None
    return _importance_log_z(Phi, y, s2, mean, chol, int_at_least(n_draws, "n_draws", 2),
                             positive_scalar(df, "df"), int_at_least(seed, "seed", 0))


def _importance_log_z(Phi, y, s2, mean, chol, n, df, seed) -> LogEvidenceEstimate:
    """:func:`importance_log_z` on checked arguments, ``chol`` the proposal's lower Cholesky."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, mean.shape[0])) / np.sqrt(rng.chisquare(df, size=n) / df)[:, None]
    W = mean + z @ chol.T
    log_r = sampling._log_joint(W, Phi, 2.0 * y - 1.0, s2) - _log_student_t(W, mean, chol, df)
    log_sum = logsumexp(log_r)
    r = np.exp(log_r - log_sum)                                   # normalised weights
    se = np.sqrt(n / (n - 1) * np.sum((r - 1.0 / n) ** 2))
    return LogEvidenceEstimate(log_z=float(log_sum - np.log(n)), se=float(se),
                               ess=float(1.0 / np.sum(r**2)), n_draws=n, max_weight=float(r.max()))


@dataclass(frozen=True)
class ExactReference:
    """The exact posterior by Monte Carlo, each figure with its Monte Carlo standard error.

    ``samples`` the NUTS run (:class:`lib.checks.sampling.PosteriorSamples`); ``mean`` (M,),
    ``cov`` (M, M), ``sd`` (M,) the draws' moments; ``mcse_mean`` (M,) ``sd / sqrt(ESS)``;
    ``mcse_sd`` (M,) from the ESS of the squared deviations; ``evidence`` the
    :class:`LogEvidenceEstimate` of ``log Z``.
    """

    samples: sampling.PosteriorSamples
    mean: np.ndarray
    cov: np.ndarray
    sd: np.ndarray
    mcse_mean: np.ndarray
    mcse_sd: np.ndarray
    evidence: LogEvidenceEstimate

    @property
    def log_z(self) -> float:
        """The importance-sampling estimate of ``log Z``."""
        return self.evidence.log_z


def exact_reference(Phi, y, s2, *, num_warmup: int = 1000, num_draws: int = 5000,
                    num_chains: int = 4, n_is: int = 50_000, df: float = 5.0,
                    seed: int = 0, cache: bool = True) -> ExactReference:
    """The exact posterior's moments and ``log Z``, with their Monte Carlo errors.

    ``Phi`` (N, M), ``y`` (N,) labels 0/1, ``s2`` the prior variance. NUTS
    (:func:`~lib.checks.sampling.sample_posterior`) in the coordinates whitened by the Laplace
    fit: in the weights' own coordinates a dense mass matrix, the Laplace precision (needed
    where the posterior's sds span orders of magnitude, as on unstandardised inputs);
    ``num_warmup``, ``num_draws`` per chain, ``num_chains``; then :func:`importance_log_z` with
    ``n_is`` draws from a Student-t (``df``) with the draws' mean and covariance. Seeded by
    ``seed`` (both parts). ``cache``: keep the draws on disk (``sample_posterior``'s
    ``cache``); the importance sampling, a second at most, is computed again. Returns an
    :class:`ExactReference`.
    """
    Phi, y, s2 = sampling._problem(Phi, y, s2)
    seed = int_at_least(seed, "seed", 0)
    n_is, df = int_at_least(n_is, "n_is", 2), positive_scalar(df, "df")
    # sample_posterior checks the sampler's arguments and cache before it compiles anything
    run = sampling.sample_posterior(Phi, y, s2, precondition=fit_laplace(Phi, y, s2),
                                    num_warmup=num_warmup, num_draws=num_draws,
                                    num_chains=num_chains, seed=seed, cache=cache)
    flat = run.flat
    mean = flat.mean(axis=0)
    cov = (flat - mean).T @ (flat - mean) / flat.shape[0]
    moments = sampling.sample_moments(run.draws)
    evidence = _importance_log_z(Phi, y, s2, mean, cholesky(cov, lower=True), n_is, df, seed)
    return ExactReference(samples=run, mean=mean, cov=cov, sd=np.sqrt(np.diag(cov)),
                          mcse_mean=moments["mcse_mean"], mcse_sd=moments["mcse_sd"],
                          evidence=evidence)
