"""lib.models.probit: the erfc likelihood of Barrett's note, plugged into lib.laplace.fit_laplace."""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import erfc, logsumexp

import lib
from lib.models import probit
from lib.likelihood import LOGISTIC


def _long_series(n_terms=12):
    # (-1)^n (2n - 1)!!, n = 0 .. n_terms - 1
    c, out = 1.0, []
    for n in range(n_terms):
        out.append(c)
        c *= -(2 * n + 1)
    return tuple(out)


def test_stable_functions_agree_with_naive_where_naive_is_safe():
    h = np.linspace(-5.0, 5.0, 201)
    np.testing.assert_allclose(probit.log_half_erfc(h), np.log(0.5 * erfc(h)), rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(probit.erfc_ratio(h), probit.naive_erfc_ratio(h), rtol=1e-12)


def test_stable_functions_finite_to_40_and_match_long_series():
    h = np.linspace(-40.0, 40.0, 1601)
    assert np.all(np.isfinite(probit.log_half_erfc(h)))
    assert np.all(np.isfinite(probit.erfc_ratio(h)))
    big = np.linspace(15.0, 40.0, 51)        # 12 terms of the true series: error < 1e-15
    series = _long_series()
    np.testing.assert_allclose(probit.log_half_erfc(big),
                               probit.asymptotic_log_half_erfc(big, series), rtol=1e-14)
    np.testing.assert_allclose(probit.erfc_ratio(big),
                               2 / np.sqrt(np.pi) * probit.asymptotic_ratio(big, series),
                               rtol=1e-13)
    # the naive forms fail: 0/0 for large h, log 0 for log(1 - erfc/2) at h < -6
    assert np.isnan(probit.naive_erfc_ratio(30.0))
    assert np.isneginf(probit.naive_log_half_erfc(30.0))
    assert np.isneginf(probit.naive_log_one_minus_half_erfc(-9.0))


def test_note_series_coefficients_are_wrong():
    h = 20.0
    exact = probit.log_half_erfc(h)
    note = abs(probit.asymptotic_log_half_erfc(h, probit.NOTE_SERIES) - exact)
    true = abs(probit.asymptotic_log_half_erfc(h, probit.TRUE_SERIES) - exact)
    assert note > 1e-6 and true < 1e-9     # next true term: 105 / 800^4 = 2.6e-10


@pytest.mark.parametrize("y", [0.0, 1.0])
def test_derivatives_against_finite_differences(y):
    a = np.linspace(-8.0, 8.0, 41)
    yy = np.full_like(a, y)
    eps = 1e-5
    f = lambda x: probit.label_log_probs(x, yy)
    fd1 = (f(a + eps) - f(a - eps)) / (2 * eps)
    np.testing.assert_allclose(probit.gradient(a, yy), fd1, rtol=1e-6, atol=1e-9)
    g = lambda x: probit.gradient(x, yy)
    fd2 = -(g(a + eps) - g(a - eps)) / (2 * eps)
    np.testing.assert_allclose(probit.curvature(a, yy), fd2, rtol=1e-6, atol=1e-9)
    assert np.all(probit.curvature(a, yy) > 0)


@pytest.mark.parametrize("lik", [LOGISTIC, probit.PROBIT], ids=["logistic", "probit"])
@pytest.mark.parametrize("y", [0.0, 1.0])
def test_curvature_derivative_against_finite_differences(lik, y):
    # dW/da, the third derivative the evidence gradient needs, over activations up to |a| = 30
    a = np.linspace(-30.0, 30.0, 241)
    yy = np.full_like(a, y)
    eps = 1e-5
    fd3 = (lik.curvature(a + eps, yy) - lik.curvature(a - eps, yy)) / (2 * eps)
    third = lik.curvature_derivative(a, yy)
    assert np.all(np.isfinite(third))
    near = np.abs(a) <= 8.0
    np.testing.assert_allclose(third[near], fd3[near], rtol=1e-6, atol=1e-9)
    # far out on the wrong side W = q (q + 2t) -> 2 cancels (q ~ 2|t|): the differences carry
    # rounding of about 1e-16 q^2 / eps, so only an absolute check there
    np.testing.assert_allclose(third, fd3, rtol=0, atol=5e-7)


def test_probability_is_normal_cdf_of_sqrt2_a():
    a = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(probit.proba(a), 0.5 * erfc(-a), rtol=1e-14)
    np.testing.assert_allclose(np.exp(probit.label_log_probs(a, np.ones(13))),
                               probit.proba(a), rtol=1e-13)


@pytest.mark.parametrize("mu, var", [(0.3, 0.5), (-1.2, 2.0), (2.5, 0.01)])
def test_predictive_is_exact(mu, var):
    quad, _ = integrate.quad(
        lambda a: probit.proba(a) * np.exp(-(a - mu) ** 2 / (2 * var)) / np.sqrt(2 * np.pi * var),
        -np.inf, np.inf, epsabs=1e-13)
    assert probit.predictive_proba(mu, var) == pytest.approx(quad, abs=1e-11)


def test_probit_map_and_precision(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    s2 = lib.laplace.bias_prior_variances(2.0, 5.0, Phi.shape[1])
    post = lib.fit_laplace(Phi, y, s2, likelihood=probit.PROBIT)
    a = Phi @ post.w_map
    g = Phi.T @ probit.gradient(a, y) - post.w_map / s2
    assert np.max(np.abs(g)) < 1e-8
    # precision = minus the finite-difference Hessian of the log posterior
    eps = 1e-5
    grad = lambda w: Phi.T @ probit.gradient(Phi @ w, y) - w / s2
    H = np.column_stack([(grad(post.w_map + eps * e) - grad(post.w_map - eps * e)) / (2 * eps)
                         for e in np.eye(Phi.shape[1])])
    np.testing.assert_allclose(post.precision, -H, atol=1e-6)
    assert post.log_likelihood == pytest.approx(probit.log_likelihood_from_activations(a, y))


def _brute_force_log_evidence(Phi, y, post, prior_vars, n_points, half_width):
    """log of the integral of likelihood x prior, by the rectangle rule on an ``n_points``^2 grid
    spanning ``+- half_width`` Laplace standard deviations around the MAP."""
    sd = np.sqrt(np.diag(np.linalg.inv(post.precision)))
    g0 = post.w_map[0] + np.linspace(-half_width, half_width, n_points) * sd[0]
    g1 = post.w_map[1] + np.linspace(-half_width, half_width, n_points) * sd[1]
    W0, W1 = np.meshgrid(g0, g1, indexing="ij")
    W = np.stack([W0.ravel(), W1.ravel()], 1)
    loglik = probit.label_log_probs(Phi @ W.T, y[:, None]).sum(0)
    a2, b2 = prior_vars
    logprior = (-W[:, 0] ** 2 / (2 * a2) - W[:, 1] ** 2 / (2 * b2)
                - np.log(2 * np.pi) - 0.5 * np.log(a2 * b2))
    return logsumexp(loglik + logprior) + np.log((g0[1] - g0[0]) * (g1[1] - g1[0]))


def test_probit_evidence_against_brute_force_integration():
    # 2 weights (slope, bias) with separate prior variances: Laplace -> exact as n grows
    alpha2, beta2 = 2.0, 0.5
    gaps = []
    for n in (100, 400, 1600):
        rng = np.random.default_rng(n)
        x = rng.normal(size=n)
        Phi = np.column_stack([x, np.ones(n)])
        y = (rng.random(n) < probit.proba(Phi @ [0.8, -0.3])).astype(float)
        post = lib.fit_laplace(Phi, y, [alpha2, beta2], likelihood=probit.PROBIT)
        # The rectangle rule on a smooth, fast-decaying integrand converges exponentially in the
        # spacing: 65 points over +-8 sd (spacing sd / 4) agree with 401 points to 2e-10 (the
        # 401-point grid cost 28 s at n = 1600). A second, coarser and wider grid (+-10 sd,
        # spacing sd / 3) must agree to 1e-8: discretisation and truncation errors are then
        # checked to be far below the smallest gap measured here (3e-4).
        exact = _brute_force_log_evidence(Phi, y, post, (alpha2, beta2), 65, 8.0)
        wider = _brute_force_log_evidence(Phi, y, post, (alpha2, beta2), 61, 10.0)
        assert abs(exact - wider) < 1e-8, (n, exact, wider)
        gaps.append(abs(post.log_evidence - exact))
    assert max(gaps) < 0.05, gaps
    assert gaps[0] > gaps[1] > gaps[2], gaps      # about 7e-3, 1e-3, 3e-4: shrinking with n


def test_vector_prior_equal_entries_matches_scalar(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    for lik in (LOGISTIC, probit.PROBIT):
        scalar = lib.fit_laplace(Phi, y, 3.0, likelihood=lik)
        vector = lib.fit_laplace(Phi, y, np.full(Phi.shape[1], 3.0), likelihood=lik)
        np.testing.assert_allclose(vector.w_map, scalar.w_map, atol=1e-12)
        assert vector.log_evidence == pytest.approx(scalar.log_evidence, abs=1e-9)

