"""lib.approx: the Jaakkola-Jordan variational bound and expectation propagation against the
exact posterior (tensor Gauss-Hermite quadrature, :func:`lib.checks.sampling.quadrature_posterior`)
on problems of one and two weights, and their input checks."""
import dataclasses

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import expit, log_expit

import lib
from lib import approx
from lib.approx.ep import _tilted_moments
from lib.checks.sampling import quadrature_posterior


def _problem(N=20, M=2, seed=0):
    """``N`` points, an intercept and ``M - 1`` standard normal inputs, labels from a logistic
    model with weights (0.5, 1.5, ...)."""
    rng = np.random.default_rng(seed)
    Phi = np.c_[np.ones(N), rng.normal(size=(N, M - 1))]
    w = np.r_[0.5, np.full(M - 1, 1.5)]
    y = (rng.random(N) < expit(Phi @ w)).astype(float)
    return Phi, y


def _exact(Phi, y, s2):
    """Exact posterior mean, covariance and log Z by quadrature (60 nodes per axis)."""
    q = quadrature_posterior(Phi, y, s2, lib.fit_laplace(Phi, y, s2), n_nodes=60)
    mean = q.weights @ q.nodes
    d = q.nodes - mean
    return mean, d.T @ (d * q.weights[:, None]), q.log_z


def test_jj_lambda_is_the_bound_coefficient_with_its_limit_at_zero():
    xi = np.array([0.0, 1e-8, 1e-4, 0.5, 3.0, 40.0, 1e6])
    lam = approx.jj_lambda(xi)
    assert lam[0] == 0.125 and np.all(np.diff(lam) <= 0) and lam[3] < lam[2] and np.all(lam > 0)
    # (sigma(xi) - 1/2) / (2 xi) away from 0 (it cancels near 0), the series near 0
    assert np.allclose(lam[3:], (expit(xi[3:]) - 0.5) / (2 * xi[3:]), rtol=1e-10, atol=0)
    assert np.allclose(lam[:3], 0.125 - xi[:3]**2 / 96, rtol=1e-15, atol=0)
    # sigma(a) >= sigma(xi) exp((a - xi)/2 - lambda(xi)(a^2 - xi^2)), equal at a = +-xi
    a = np.linspace(-8, 8, 161)[:, None]
    x = np.array([0.3, 1.0, 2.5, 6.0])
    bound = expit(x) * np.exp((a - x) / 2 - approx.jj_lambda(x) * (a**2 - x**2))
    assert np.all(bound <= expit(a) * (1 + 1e-12))
    for a0 in (x, -x):                 # tight at a = +-xi
        tight = expit(x) * np.exp((a0 - x) / 2 - approx.jj_lambda(x) * (a0**2 - x**2))
        assert np.allclose(tight, expit(a0), rtol=1e-12)


@pytest.mark.parametrize("M, N, s2", [(1, 15, 1.0), (2, 20, 1.0), (2, 40, 10.0), (2, 10, 0.1)])
def test_elbo_rises_at_every_update_and_stays_below_the_exact_log_z(M, N, s2):
    Phi, y = _problem(N, M, seed=M + N)
    vb = approx.fit_vb(Phi, y, s2)
    _, _, log_z = _exact(Phi, y, s2)
    assert vb.converged and vb.elbo == vb.elbo_trace[-1] and len(vb.elbo_trace) == vb.n_iter
    assert np.all(np.diff(vb.elbo_trace) >= -1e-12 * abs(vb.elbo))   # rises (rounding aside)
    assert vb.elbo_trace[-1] > vb.elbo_trace[0] + 1e-3                # and really moved
    assert np.all(vb.elbo_trace < log_z)                              # a lower bound
    assert log_z - vb.elbo < 1.5          # and not a vacuous one (seen: 0.04 to 0.76)


def _tilted_by_quad(mu, sd, s):
    """``log Z``, mean and variance of ``sigma(s a) N(a | mu, sd^2) / Z`` by adaptive quadrature
    (``scipy.integrate.quad``), in log space about the tilted mode, split at the step (a = 0)."""
    lf = lambda a: log_expit(s * a) - (a - mu)**2 / (2 * sd**2)
    ends = (mu, mu + s * sd**2)                            # the mode lies between these
    grid = np.linspace(min(ends) - sd, max(ends) + sd, 40001)
    m = grid[np.argmax(lf(grid))]
    lo, hi = m - 12 * sd, m + 12 * sd
    pts = [x for x in (0.0, m - sd, m, m + sd) if lo < x < hi]
    z = [quad(lambda a: (a - m)**k * np.exp(lf(a) - lf(m)), lo, hi, points=pts, epsabs=0,
              epsrel=1e-13, limit=1000)[0] for k in range(3)]
    mean = z[1] / z[0]
    return np.log(z[0]) + lf(m) - np.log(np.sqrt(2 * np.pi) * sd), m + mean, z[2] / z[0] - mean**2


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")  # quad at 1e-13
def test_tilted_moments_match_adaptive_quadrature_for_narrow_and_wide_cavities():
    mus = np.array([-50.0, -20.0, -3.0, -0.5, 0.0, 0.7, 4.0, 15.0, 50.0])
    sds = np.array([1e-3, 0.3, 1.0, 1.5, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0])
    mu, sd = (g.ravel() for g in np.meshgrid(mus, sds))
    far_sd, far_k = (g.ravel() for g in np.meshgrid([3.0, 25.0, 100.0], [-12, -8, -6, -4, 4, 6, 8, 12]))
    mu, sd = np.r_[mu, far_k * far_sd], np.r_[sd, far_sd]      # and |mu| up to 12 sds
    s = np.where(np.arange(mu.size) % 2 == 0, 1.0, -1.0)
    with np.errstate(over="raise", invalid="raise", divide="raise"):                       # no overflow, no invalid value
        log_z, mean, var = _tilted_moments(mu, sd**2, s)
    ref = np.array([_tilted_by_quad(*args) for args in zip(mu, sd, s)])
    assert np.all(np.abs(log_z - ref[:, 0]) <= 1e-9 * np.maximum(1.0, np.abs(ref[:, 0])))
    scale = np.maximum(np.abs(ref[:, 1]), np.sqrt(ref[:, 2]))
    assert np.all(np.abs(mean - ref[:, 1]) <= 1e-9 * scale)
    assert np.all(np.abs(var - ref[:, 2]) <= 1e-9 * ref[:, 2])
    assert np.all(var <= sd**2 * (1 + 1e-12))   # log-concave likelihood: the tilted is narrower


def test_tilted_moments_stay_finite_for_extreme_cavities():
    # the prior's cavities of an unstandardised design (sd ~ 500) and sharp ones
    mu = np.array([0.0, 300.0, -300.0, 1e3, -1e3, 2.0, -40.0])
    v = np.array([500.0**2, 500.0**2, 1e4, 1e-12, 1e-12, 1e6**2, 1e-8])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        out = _tilted_moments(mu, v, np.ones(7))
    assert all(np.all(np.isfinite(x)) for x in out) and np.all(out[2] > 0)


def test_ep_fixed_point_does_not_depend_on_the_damping():
    Phi, y = _problem(30, 2, seed=3)
    a, b = approx.fit_ep(Phi, y, 2.0, damping=1.0), approx.fit_ep(Phi, y, 2.0, damping=0.6)
    assert a.converged and b.converged and b.n_iter > a.n_iter and a.n_skipped == b.n_skipped == 0
    assert np.allclose(a.mean, b.mean, atol=1e-7) and np.allclose(a.cov, b.cov, atol=1e-7)
    assert a.log_evidence == pytest.approx(b.log_evidence, abs=1e-7)
    assert np.all(a.site_precision >= 0)


def test_sequential_and_parallel_schedules_reach_the_same_fixed_point():
    Phi, y = _problem(60, 3, seed=8)
    seq = approx.fit_ep(Phi, y, 5.0)
    par = approx.fit_ep(Phi, y, 5.0, schedule="parallel")
    assert seq.converged and par.converged and seq.n_iter < par.n_iter
    assert "sequential" in seq.method and "parallel" in par.method
    assert np.allclose(seq.mean, par.mean, atol=1e-7) and np.allclose(seq.cov, par.cov, atol=1e-7)
    assert seq.log_evidence == pytest.approx(par.log_evidence, abs=1e-7)


def test_ep_and_vb_converge_on_the_unstandardised_pima_data():
    from lib import data
    X, y, _, _ = data.load_pima().split()
    vb, ep = approx.fit_vb(X, y, 10.0), approx.fit_ep(X, y, 10.0)
    assert vb.converged and np.all(np.diff(vb.elbo_trace) >= -1e-12 * abs(vb.elbo))
    # seen: 16 VB updates, 9 EP sweeps, no site skipped
    assert ep.converged and ep.n_iter < 30 and ep.n_skipped == 0
    lap = lib.fit_laplace(X, y, 10.0)
    assert vb.elbo < lap.log_evidence < ep.log_evidence    # seen: -129.02 < -127.84 < -127.76
    # the weights' posterior sds span a factor of about 200 (seen: 0.0066 to 1.45)
    sd = np.sqrt(ep.marginal_variances)
    assert 100 < sd.max() / sd.min() < 400


def test_parallel_ep_from_wide_cavities_can_fail_and_says_so():
    from lib import data
    X, y, _, _ = data.load_pima().split()
    with pytest.warns(RuntimeWarning, match=r"fit_ep \(parallel, damping 1\) did not converge"):
        ep = approx.fit_ep(X, y, 10.0, schedule="parallel", damping=1.0, max_iter=30)
    assert not ep.converged


def test_vb_out_of_updates_says_so():
    Phi, y = _problem(40, 2, seed=2)
    with pytest.warns(RuntimeWarning, match="fit_vb did not converge in 2 updates"):
        vb = approx.fit_vb(Phi, y, 10.0, max_iter=2)
    assert not vb.converged and vb.n_iter == 2


def test_tiny_problem_laplace_vb_ep_against_the_exact_posterior():
    Phi, y = _problem(20, 2, seed=0)
    s2 = 1.0
    mean, cov, log_z = _exact(Phi, y, s2)
    lap, vb, ep = lib.fit_laplace(Phi, y, s2), approx.fit_vb(Phi, y, s2), approx.fit_ep(Phi, y, s2)
    lap_cov = np.linalg.inv(lap.precision)
    err_mean = {k: np.max(np.abs(m - mean)) for k, m in
                (("lap", lap.w_map), ("vb", vb.mean), ("ep", ep.mean))}
    err_cov = {k: np.max(np.abs(c - cov)) for k, c in (("lap", lap_cov), ("vb", vb.cov), ("ep", ep.cov))}
    # EP closest in mean and covariance, by a wide margin (seen: 4e-4 against 0.05 and 0.08)
    assert err_mean["ep"] < 0.01 and err_mean["ep"] < err_mean["vb"] / 5 < err_mean["lap"] / 5
    assert err_cov["ep"] < 0.01 and err_cov["ep"] < min(err_cov["vb"], err_cov["lap"]) / 2
    assert np.allclose(np.sqrt(ep.marginal_variances), np.sqrt(np.diag(cov)), rtol=0.02)
    # VB's variances too small (seen: 4% and 9% smaller sds); its ELBO below log Z
    assert np.all(vb.marginal_variances < 0.97 * np.diag(cov))
    assert vb.elbo < log_z - 0.05
    # EP's log Z close to the exact (seen: 0.004 off), closer than Laplace's
    assert abs(ep.log_evidence - log_z) < 0.02 < abs(lap.log_evidence - log_z)
    assert vb.method != ep.method and "expectation propagation" in ep.method


def test_results_are_frozen_and_finite_over_the_stated_range():
    rng = np.random.default_rng(5)
    Phi = rng.normal(size=(100, 5))
    y = (rng.random(100) < expit(Phi @ rng.normal(size=5))).astype(float)
    for s2 in (1e-2, 1e3):
        vb, ep = approx.fit_vb(Phi, y, s2), approx.fit_ep(Phi, y, s2)
        for r in (vb, ep):
            assert r.converged and np.all(np.isfinite(r.mean)) and np.isfinite(r.log_evidence)
            with pytest.raises(dataclasses.FrozenInstanceError):
                r.mean = None


@pytest.mark.parametrize("fn, kwargs, name", [
    (approx.fit_vb, dict(s2=-1.0), "s2"), (approx.fit_vb, dict(max_iter=0), "max_iter"),
    (approx.fit_vb, dict(tol=np.nan), "tol"), (approx.fit_vb, dict(y=np.full(20, 2.0)), "y"),
    (approx.fit_vb, dict(Phi=np.ones((19, 2))), "y"), (approx.fit_ep, dict(Phi=np.ones(20)), "Phi"),
    (approx.fit_ep, dict(damping=1.5), "damping"), (approx.fit_ep, dict(damping=0.0), "damping"),
    (approx.fit_ep, dict(s2="a"), "s2")])
def test_bad_input_gets_an_error_naming_the_argument(fn, kwargs, name):
    Phi, y = _problem(20, 2)
    with pytest.raises((ValueError, TypeError), match=rf"^{name} "):
        fn(**{"Phi": Phi, "y": y, "s2": 1.0, **kwargs})


# ---- the exact reference (lib.checks.reference): NUTS with a dense mass and IS for log Z ----

def test_importance_log_z_matches_quadrature_within_its_error():
    from lib.checks import reference
    Phi, y = _problem(30, 2, seed=4)
    mean, cov, log_z = _exact(Phi, y, 2.0)
    est = reference.importance_log_z(Phi, y, 2.0, mean, cov, n_draws=20_000, seed=1)
    assert 0 < est.se < 0.01 and abs(est.log_z - log_z) < 4 * est.se
    assert 0.5 * est.n_draws < est.ess <= est.n_draws and est.max_weight < 0.01
    with pytest.raises(ValueError, match="^cov "):
        reference.importance_log_z(Phi, y, 2.0, mean, -cov)


def test_exact_reference_agrees_with_quadrature_within_its_monte_carlo_errors():
    from lib.checks import reference
    Phi, y = _problem(40, 2, seed=6)
    Phi = Phi * np.array([1.0, 50.0])              # weights' scales 50x apart: the dense mass
    mean, cov, log_z = _exact(Phi, y, 10.0)
    ref = reference.exact_reference(Phi, y, 10.0, num_warmup=300, num_draws=1000, num_chains=2,
                                    n_is=10_000, seed=0, cache=False)
    assert ref.samples.preconditioned and ref.samples.diagnostics()["divergences"] == 0
    assert np.all(np.abs(ref.mean - mean) < 4 * ref.mcse_mean)
    assert np.all(np.abs(ref.sd - np.sqrt(np.diag(cov))) < 4 * ref.mcse_sd)
    assert abs(ref.log_z - log_z) < 4 * ref.evidence.se and ref.evidence.se < 0.02
