import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit

import lib


def _probit_approximation(mu, var):
    """The probit approximation as lib computes it: the logistic likelihood's predictive logits
    (the formula behind lib.predictive_proba)."""
    return expit(lib.LOGISTIC.predictive_logits(mu, var))


def _exact(mu, var):
    if var == 0:
        return expit(mu)
    sd = np.sqrt(var)
    f = lambda a: expit(a) * np.exp(-((a - mu) ** 2) / (2 * var)) / np.sqrt(2 * np.pi * var)
    return integrate.quad(f, mu - 20 * sd, mu + 20 * sd, epsabs=1e-13, epsrel=1e-12, limit=200)[0]


def test_trapezoid_reference_matches_adaptive_quadrature():
    mus = np.array([-3.0, 0.0, 0.5, 4.0, -1.0, 2.0, 0.0])
    vars_ = np.array([0.1, 1.0, 10.0, 50.0, 100.0, 1e4, 0.0])
    exact = np.array([_exact(m, v) for m, v in zip(mus, vars_)])
    np.testing.assert_allclose(lib.logistic_gaussian_expectation(mus, vars_), exact, atol=1e-10)


def test_probit_approximation_error_bound():
    mu, var = np.meshgrid(np.linspace(-6, 6, 49), np.geomspace(1e-3, 100, 41))
    mu, var = mu.ravel(), var.ravel()
    exact = np.array([_exact(m, v) for m, v in zip(mu, var)])
    err = np.max(np.abs(_probit_approximation(mu, var) - exact))
    assert err < 0.018
    assert err > 0.005  # it is an approximation: the grid does find its error


def test_probit_with_zero_variance_is_sigmoid():
    mu = np.linspace(-5, 5, 11)
    np.testing.assert_allclose(_probit_approximation(mu, np.zeros(11)), expit(mu), atol=1e-15)


def test_activation_moments(small_problem):
    Phi, y, Phi_t = small_problem["Phi"], small_problem["y"], small_problem["Phi_test"]
    post = lib.fit_laplace(Phi, y, 1.0)
    mu, var = lib.activation_moments(post, Phi_t)
    cov = np.linalg.solve(post.precision, np.eye(post.n_weights))
    np.testing.assert_allclose(mu, Phi_t @ post.w_map, atol=1e-12)
    np.testing.assert_allclose(var, np.einsum("nm,mk,nk->n", Phi_t, cov, Phi_t), rtol=1e-8)
    p = lib.predictive_proba(post, Phi_t)
    np.testing.assert_allclose(p, expit(mu / np.sqrt(1 + np.pi * var / 8)), atol=1e-14)
    # moderation pulls probabilities towards 1/2 without changing the decision
    p_map = lib.map_proba(post, Phi_t)
    assert np.all(np.abs(p - 0.5) <= np.abs(p_map - 0.5) + 1e-15)
    np.testing.assert_array_equal(p > 0.5, p_map > 0.5)


def _post():
    X, y = np.array([[0.0], [1.0], [2.0]]), np.array([0.0, 1.0, 1.0])
    return lib.fit_laplace(lib.linear_features(X), y, 1.0)


BAD_INPUT = [
    pytest.param(lambda: lib.predictive_proba(_post(), np.ones((3, 5))), ValueError, "Phi must have 2 columns",
                 id="Phi"),
    pytest.param(lambda: lib.activation_moments(_post(), np.ones(2)), ValueError, "Phi must be a 2-D array",
                 id="Phi-shape"),
    pytest.param(lambda: lib.map_proba({"w_map": 1}, np.ones((3, 2))), TypeError,
                 "posterior must be a LaplacePosterior", id="posterior"),
    pytest.param(lambda: lib.logistic_gaussian_expectation(np.zeros(2), np.ones(3)), ValueError,
                 "var must have length 2", id="var-length"),
    pytest.param(lambda: lib.logistic_gaussian_expectation(np.zeros(1), -np.ones(1)), ValueError,
                 "var must be non-negative", id="var-expectation"),
    pytest.param(lambda: lib.logistic_gaussian_expectation(np.array([np.nan]), np.ones(1)), ValueError,
                 "mu must contain only finite", id="mu"),
]


@pytest.mark.parametrize("call, exc, match", BAD_INPUT)
def test_rejects_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_probit_scale_matches_the_slopes_at_the_origin():
    from scipy.stats import norm

    from lib.predictive import PROBIT_SCALE

    assert PROBIT_SCALE**2 == pytest.approx(np.pi / 8, rel=1e-15)
    assert PROBIT_SCALE * norm.pdf(0.0) == pytest.approx(0.25, rel=1e-15)   # sigma'(0) = 1/4
