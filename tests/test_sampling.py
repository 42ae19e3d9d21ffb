"""lib.checks.sampling against known answers: quadrature in 1-D and 2-D, Gaussian draws, tiny NUTS runs."""
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit

import lib
from lib.checks import sampling
from numpyro.diagnostics import effective_sample_size


def _problem(n: int, m: int, seed: int = 0):
    """Design with ``m`` columns (the last a bias) on ``n`` points, and labels from a logistic model."""
    rng = np.random.default_rng(seed)
    Phi = np.ones((n, m))
    Phi[:, :-1] = rng.normal(size=(n, m - 1))
    y = (rng.random(n) < expit(Phi @ np.linspace(1.5, -0.5, m))).astype(float)
    return Phi, y


def _f(w, Phi, y, s2):
    """Unnormalised posterior f(w) = p(y | w) N(w | 0, s2 I) at one weight vector, written out
    here rather than through sampling.log_joint (checked against it below): scipy's adaptive
    quadrature calls it ~50,000 times in 2-D, where log_joint's argument checks cost ~20x more
    than the arithmetic."""
    w = np.asarray(w, dtype=float)
    t = (2.0 * y - 1.0) * (Phi @ w)
    return (np.exp(-np.logaddexp(0.0, -t).sum() - w @ w / (2.0 * s2))
            / (2.0 * np.pi * s2) ** (0.5 * w.size))


@pytest.fixture(scope="module")
def one_d():
    Phi, y = _problem(8, 1, seed=3)
    Phi = Phi + np.linspace(-1.0, 1.0, 8)[:, None]           # one informative column
    s2 = 2.0
    return Phi, y, s2, lib.fit_laplace(Phi, y, s2)


@pytest.fixture(scope="module")
def two_d():
    Phi, y = _problem(12, 2, seed=4)
    s2 = 1.5
    return Phi, y, s2, lib.fit_laplace(Phi, y, s2)


def test_log_joint_is_psi_minus_the_prior_constant(one_d, two_d):
    Phi, y, s2, post = two_d
    W = np.random.default_rng(0).normal(size=(5, 2))
    psi = np.array([lib.laplace.log_posterior(w, Phi, y, s2) for w in W])
    np.testing.assert_allclose(sampling.log_joint(W, Phi, y, s2),
                               psi - np.log(2 * np.pi * s2), rtol=1e-13)
    # and the written-out integrand of the quadrature checks below is the same density
    for Phi, y, s2, post in (one_d, two_d):
        W = np.random.default_rng(1).normal(size=(5, Phi.shape[1]))
        np.testing.assert_allclose([np.log(_f(w, Phi, y, s2)) for w in W],
                                   sampling.log_joint(W, Phi, y, s2), rtol=1e-13)


def test_jax_log_posterior_and_its_gradient(two_d):
    import jax

    Phi, y, s2, post = two_d
    psi = sampling.log_posterior_fn(Phi, y, s2)
    w = np.array([0.3, -0.7])
    assert float(psi(w)) == pytest.approx(lib.laplace.log_posterior(w, Phi, y, s2), rel=1e-13)
    grad = np.asarray(jax.grad(psi)(w))
    np.testing.assert_allclose(grad, lib.gradient(w, Phi, y) - w / s2, rtol=1e-12)


def test_quadrature_matches_adaptive_quadrature_in_1d(one_d):
    Phi, y, s2, post = one_d
    q = sampling.quadrature_posterior(Phi, y, s2, post, n_nodes=60)
    f = lambda w: _f([w], Phi, y, s2)
    lo, hi = post.w_map[0] - 15, post.w_map[0] + 15
    Z = integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
    mean = integrate.quad(lambda w: w * f(w), lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0] / Z
    var = integrate.quad(lambda w: (w - mean) ** 2 * f(w), lo, hi, epsrel=1e-12, limit=200)[0] / Z
    assert q.log_z == pytest.approx(np.log(Z), abs=1e-10)
    assert q.mean[0] == pytest.approx(mean, abs=1e-10)
    assert q.sd[0] == pytest.approx(np.sqrt(var), abs=1e-10)
    # KL(p || q) with q the Laplace Gaussian
    sd_q = 1.0 / post.chol[0, 0]
    logq = lambda w: -0.5 * ((w - post.w_map[0]) / sd_q) ** 2 - np.log(sd_q * np.sqrt(2 * np.pi))
    kl = integrate.quad(lambda w: f(w) / Z * (np.log(f(w) / Z) - logq(w)), lo, hi,
                        epsrel=1e-10, limit=200)[0]
    assert q.kl_laplace == pytest.approx(kl, abs=1e-9)
    assert q.kl_laplace > 0
    # the predictive at a few inputs
    phis = np.array([[-2.0], [0.5], [3.0]])
    pred = [integrate.quad(lambda w: expit(p[0] * w) * f(w), lo, hi, epsrel=1e-12)[0] / Z
            for p in phis]
    np.testing.assert_allclose(q.predictive(phis), pred, atol=1e-10)


def test_quadrature_matches_adaptive_quadrature_in_2d(two_d):
    Phi, y, s2, post = two_d
    q = sampling.quadrature_posterior(Phi, y, s2, post, n_nodes=40)
    m, r = post.w_map, 10.0
    Z = integrate.dblquad(lambda b, a: _f([a, b], Phi, y, s2), m[0] - r, m[0] + r,
                          m[1] - r, m[1] + r, epsabs=0, epsrel=1e-9)[0]
    assert q.log_z == pytest.approx(np.log(Z), abs=1e-8)
    assert q.weights.sum() == pytest.approx(1.0, abs=1e-12)
    # the Laplace evidence is an approximation of the same number
    assert post.log_evidence == pytest.approx(q.log_z, abs=0.2)
    assert post.log_evidence != pytest.approx(q.log_z, abs=1e-6)


def test_mc_predictive_of_gaussian_draws():
    rng = np.random.default_rng(6)
    mean, sd = np.array([0.8, -0.3]), np.array([1.0, 0.6])
    draws = mean + sd * rng.standard_normal((2, 3000, 2))
    Phi = np.array([[1.0, 0.0], [0.5, 2.0], [-3.0, 1.0]])
    p, mcse = sampling.mc_predictive(draws, Phi, chunk=2)
    mu, var = Phi @ mean, (Phi**2) @ sd**2
    exact = lib.logistic_gaussian_expectation(mu, var)
    assert np.all(np.abs(p - exact) < 4 * mcse)
    assert np.all(mcse < 0.01)


@pytest.fixture
def jax_compilation_cache(tmp_path):
    """JAX's persistent compilation cache in a fresh folder, for one test, then off again.

    ``sample_posterior`` compiles its NUTS loop once per call (the second chain loads it from a
    cache of its own). Here one cache spans the test's calls, so the repeated run loads the
    first one's loop too; a different program (the unpreconditioned run) is still compiled.
    What runs is the executable XLA would build again, so the draws are the same.
    """
    with sampling._compilation_cache_in(tmp_path / "jax-cache"):
        yield tmp_path / "jax-cache"


def test_nuts_matches_quadrature_and_repeats(two_d, jax_compilation_cache):
    Phi, y, s2, post = two_d
    q = sampling.quadrature_posterior(Phi, y, s2, post, n_nodes=40)
    runs = [sampling.sample_posterior(Phi, y, s2, precondition=pre, num_warmup=150,
                                      num_draws=300, seed=2) for pre in (post, post, None)]
    # same key, same draws (the second run loads the first one's compiled loop from the cache:
    # what this checks is that the draws depend on the seed alone)
    np.testing.assert_array_equal(runs[0].draws, runs[1].draws)
    for run, pre in zip(runs[1:], (True, False)):
        assert run.draws.shape == (2, 300, 2) and run.preconditioned == pre
        d = run.diagnostics()
        assert d["divergences"] == 0 and d["max R-hat"] < 1.02 and d["min ESS"] > 150
        sd = run.flat.std(axis=0)
        mcse = sd / np.sqrt(effective_sample_size(run.draws))   # of a mean; of an sd, smaller
        assert np.all(np.abs(run.flat.mean(axis=0) - q.mean) < 5 * mcse)
        assert np.all(np.abs(sd - q.sd) < 5 * mcse)


def test_draws_kept_on_disk_per_arguments_code_and_python(two_d, tmp_path, monkeypatch):
    """sample_posterior(cache=True): the sampler's result for these arguments, sampled once per
    arguments and code; the key holds the Python version (another Python samples again). The
    sampler is a stand-in that records its calls (the draws themselves are
    test_nuts_matches_quadrature_and_repeats')."""
    import sys

    from lib import _cache

    calls = []

    def stand_in(*args):             # sampling._sample's arguments; the last is the code digest
        calls.append(args)
        return f"run {len(calls)}"

    monkeypatch.setattr(sampling, "_sample", stand_in)
    monkeypatch.setenv("BLC_CACHE_DIR", str(tmp_path))
    Phi, y, s2, post = two_d
    kw = dict(precondition=post, num_warmup=50, num_draws=50, seed=1)
    assert sampling.sample_posterior(Phi, y, s2, cache=True, **kw) == "run 1"
    stored = sorted(tmp_path.rglob("output.pkl"))
    assert len(stored) == 1 and stored[0].is_relative_to(tmp_path / "references")
    assert sampling.sample_posterior(Phi, y, s2, **kw) == "run 2"     # not cached: sampled
    for cached, plain in zip(calls[0][:-1], calls[1][:-1]):          # with the same arguments
        np.testing.assert_array_equal(cached, plain)
    assert calls[0][-1] == sampling.code_digest() and calls[1][-1] == ""
    assert sampling.sample_posterior(Phi, y, s2, cache=True, **kw) == "run 1"   # from disk
    assert sampling.sample_posterior(Phi, y, s2, cache=True, **{**kw, "seed": 2}) == "run 3"
    monkeypatch.setattr(sampling, "code_digest", lambda: "other code")
    assert sampling.sample_posterior(Phi, y, s2, cache=True, **kw) == "run 4"
    assert len(calls) == 4 and len(list(tmp_path.rglob("output.pkl"))) == 3
    digest = _cache.code_digest.__wrapped__                          # not the per-process copy
    here = digest(("checks/*.py",), ("numpy",))
    monkeypatch.setattr(sys, "version_info", (3, 99, 0))
    assert digest(("checks/*.py",), ("numpy",)) != here


def test_sample_moments_of_gaussian_draws():
    rng = np.random.default_rng(7)
    mean, sd = np.array([0.8, -0.3]), np.array([1.0, 0.6])
    m = sampling.sample_moments(mean + sd * rng.standard_normal((2, 4000, 2)))
    assert np.all(np.abs(m["mean"] - mean) < 4 * m["mcse_mean"])
    assert np.all(np.abs(m["sd"] - sd) < 4 * m["mcse_sd"])
    np.testing.assert_allclose(m["mcse_mean"], sd / np.sqrt(8000), rtol=0.1)
    np.testing.assert_allclose(m["mcse_sd"], sd / np.sqrt(2 * 8000), rtol=0.1)   # Gaussian


def test_sampler_cache_is_scoped_to_the_call(tmp_path):
    import jax

    assert jax.config.jax_compilation_cache_dir is None
    with sampling._each_program_compiled_once():
        folder = Path(jax.config.jax_compilation_cache_dir)
        assert folder.is_dir()
    assert jax.config.jax_compilation_cache_dir is None and not folder.exists()
    jax.config.update("jax_compilation_cache_dir", str(tmp_path))   # the caller's own cache
    try:
        with sampling._each_program_compiled_once():
            assert jax.config.jax_compilation_cache_dir == str(tmp_path)
    finally:
        jax.config.update("jax_compilation_cache_dir", None)


def test_input_checks(two_d):
    Phi, y, s2, post = two_d
    with pytest.raises(ValueError, match="s2"):
        sampling.log_joint(np.zeros((1, 2)), Phi, y, 0.0)
    with pytest.raises(ValueError, match="labels 0 and 1"):
        sampling.log_joint(np.zeros((1, 2)), Phi, y + 2, s2)
    with pytest.raises(ValueError, match="W must have 2 columns"):
        sampling.log_joint(np.zeros((1, 3)), Phi, y, s2)
    with pytest.raises(ValueError, match="length 12"):
        sampling.log_posterior_fn(Phi, y[:-1], s2)
    with pytest.raises(ValueError, match="M <= 3"):
        big = np.ones((12, 4))
        sampling.quadrature_posterior(big, y, s2, lib.fit_laplace(big, y, s2))
    with pytest.raises(ValueError, match="weights"):
        sampling.quadrature_posterior(Phi[:, :1], y, s2, post)
    with pytest.raises(ValueError, match=r"\(chains, draws, M\)"):
        sampling.mc_predictive(np.zeros((10, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="num_chains"):
        sampling.sample_posterior(Phi, y, s2, num_chains=1)
    with pytest.raises(ValueError, match="target_accept"):
        sampling.sample_posterior(Phi, y, s2, target_accept=1.0)
    with pytest.raises(ValueError, match="Phi must have 2 columns"):
        sampling.mc_predictive(np.zeros((2, 10, 2)), np.zeros((3, 3)))
