"""The Monte Carlo standard error of :func:`lib.checks.sampling.mc_predictive`, bounded on both
sides by an independent estimate.

The ground-truth chapter's MCSE cells are nbval-ignored and its asserts were one-sided, so an
MCSE too small by a factor sqrt(ESS) passed every chapter. Here the MCSE of a mean of strongly
autocorrelated draws (AR(1) chains, lag-one correlation 0.9: an ESS about 1/19 of the draws)
must lie within a factor 2 of the batch-means estimate; an MCSE that ignores the
autocorrelation (``sd / sqrt(n)``, 4.4 times too small) or uses ``sd / ESS`` fails.
"""
import numpy as np
import pytest

pytest.importorskip("numpyro")

from lib.checks import sampling  # noqa: E402


def _ar1_chains(n_chains, n_draws, rho, seed):
    rng = np.random.default_rng(seed)
    x = np.empty((n_chains, n_draws))
    x[:, 0] = rng.normal(size=n_chains)
    noise = rng.normal(size=(n_chains, n_draws)) * np.sqrt(1 - rho**2)
    for t in range(1, n_draws):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


def _batch_means_mcse(values, n_batches=20):
    """MCSE of the overall mean from the spread of batch means (batches of consecutive draws,
    pooled over chains)."""
    C, S = values.shape
    size = S // n_batches
    means = values[:, : n_batches * size].reshape(C, n_batches, size).mean(axis=2).ravel()
    return means.std(ddof=1) / np.sqrt(means.size)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mc_predictive_mcse_within_a_factor_2_of_batch_means(seed):
    x = _ar1_chains(4, 4000, 0.9, seed)
    draws = x[:, :, None]                               # M = 1 weight
    Phi = np.array([[1.0], [0.3]])                      # p = E[sigma(w)], E[sigma(0.3 w)]
    p, mcse = sampling.mc_predictive(draws, Phi)
    for k, scale in enumerate(Phi[:, 0]):
        values = 1.0 / (1.0 + np.exp(-scale * x))
        batch = _batch_means_mcse(values)
        assert 0.5 < mcse[k] / batch < 2.0, (mcse[k], batch)
        # and the naive sd / sqrt(n), which ignores the autocorrelation, is far below both
        assert values.std() / np.sqrt(values.size) < 0.5 * batch
