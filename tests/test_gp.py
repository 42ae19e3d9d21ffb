"""Tests of lib.models.gp: the function-space Laplace classifier equals the weight-space one."""
import numpy as np
import pytest

import lib
from lib.models import gp


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] - X[:, 1] + 0.7 * rng.normal(size=40) > 0).astype(float)
    X_test = rng.normal(scale=2.0, size=(15, 2))
    return X, y, X_test


@pytest.mark.parametrize("n_centres", [10, 60])     # M < N and M > N
def test_function_space_equals_weight_space(small, n_centres):
    X, y, X_test = small
    centres = np.random.default_rng(5).normal(size=(n_centres, 2))
    s2, width = 0.8, 0.6
    Phi, Phi_s = lib.rbf_features(X, centres, width), lib.rbf_features(X_test, centres, width)
    post = lib.fit_laplace(Phi, y, s2)
    mu, var = lib.activation_moments(post, Phi_s)
    fit = gp.fit_gp_laplace(gp.basis_kernel(Phi, Phi, s2), y)
    mean, v = gp.predict_latent(fit, gp.basis_kernel(Phi, Phi_s, s2), s2 * (Phi_s**2).sum(1))
    assert abs(fit.log_evidence - post.log_evidence) < 1e-8
    np.testing.assert_allclose(mean, mu, rtol=0, atol=1e-8)
    np.testing.assert_allclose(v, var, rtol=0, atol=1e-8)
    np.testing.assert_allclose(fit.f_hat, Phi @ post.w_map, rtol=0, atol=1e-8)


def test_rbf_kernel_and_prior_variance(small):
    X, _, X_test = small
    K = gp.rbf_kernel(X, X_test, 1.7, 0.4)
    assert K.shape == (40, 15)
    np.testing.assert_allclose(np.diag(gp.rbf_kernel(X, X, 1.7, 0.4)), 1.7)
    assert np.all(K > 0) and np.all(K <= 1.7)


def test_far_from_data_variance_is_prior(small):
    X, y, _ = small
    fit = gp.fit_gp_laplace(gp.rbf_kernel(X, X, 2.0, 0.5), y)
    far = np.array([[50.0, 50.0]])
    mean, var = gp.predict_latent(fit, gp.rbf_kernel(X, far, 2.0, 0.5), [2.0])
    assert abs(mean[0]) < 1e-12 and abs(var[0] - 2.0) < 1e-12


def test_evidence_gradient_matches_finite_differences(small):
    X, y, _ = small
    theta, h = np.log([1.3, 0.7]), 1e-5
    _, grad, _ = gp.rbf_evidence_gradient(X, y, *np.exp(theta))
    fd = [(gp.rbf_evidence_gradient(X, y, *np.exp(theta + h * e))[0]
           - gp.rbf_evidence_gradient(X, y, *np.exp(theta - h * e))[0]) / (2 * h)
          for e in np.eye(2)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_sklearn_log_marginal_likelihood(small):
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    X, y, _ = small
    kernel = ConstantKernel(1.5, "fixed") * RBF(0.8, "fixed")
    clf = GaussianProcessClassifier(kernel=kernel, optimizer=None).fit(X, y)
    ours = gp.fit_gp_laplace(gp.rbf_kernel(X, X, 1.5, 0.8), y).log_evidence
    assert abs(clf.log_marginal_likelihood_value_ - ours) < 1e-6


def test_input_checks(small):
    X, y, X_test = small
    with pytest.raises(ValueError):
        gp.fit_gp_laplace(np.eye(3), y)
    fit = gp.fit_gp_laplace(gp.rbf_kernel(X, X, 1.0, 1.0), y)
    with pytest.raises(ValueError):
        gp.predict_latent(fit, np.ones((3, 2)), [1.0, 1.0])
    with pytest.raises(ValueError):
        gp.rbf_kernel(X, X, -1.0, 1.0)


def test_newton_cg_matches_cholesky(small):
    X, y, _ = small
    K = gp.rbf_kernel(X, X, 3.0, 0.7)
    log_z, n_cg, residuals = gp.newton_cg(K, y, 1e-12)
    assert abs(log_z - gp.fit_gp_laplace(K, y).log_evidence) < 1e-8
    assert residuals[-1] <= 1e-12 and n_cg >= len(residuals)
