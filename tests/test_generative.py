"""Tests of lib.models.generative: the Gaussian class-conditional classifier (shared / per-class)."""
import numpy as np
import pytest
from scipy.special import softmax
from scipy.stats import multivariate_normal
from sklearn.datasets import make_blobs
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)

import lib.models.generative as gen


@pytest.fixture(scope="module")
def data():
    """Four classes of unequal sizes (so the priors matter) in D = 3, overlapping."""
    X, y = make_blobs(n_samples=[30, 50, 70, 40], n_features=3, cluster_std=2.5,
                      random_state=3)
    # stretch the inputs so that the class covariances differ and are not isotropic
    X = X @ np.array([[1.0, 0.4, 0.0], [0.0, 1.5, 0.3], [0.0, 0.0, 0.7]])
    X[y == 2] *= 1.8
    return X, y


@pytest.fixture(scope="module")
def grid(data):
    X, _ = data
    return np.random.default_rng(0).uniform(X.min(0) - 2, X.max(0) + 2, size=(200, 3))


def test_mle_parameters(data):
    X, y = data
    N, K = len(y), 4
    shared = gen.fit_gaussian_classifier(X, y)
    per = gen.fit_gaussian_classifier(X, y, shared=False)
    counts = np.bincount(y)
    for m in (shared, per):
        assert np.allclose(m.priors, counts / N)
        assert np.allclose(m.means, [X[y == k].mean(0) for k in range(K)])
    covs = np.array([np.cov(X[y == k].T, bias=True) for k in range(K)])  # denominator N_k
    assert np.allclose(per.covariances, covs, rtol=1e-12, atol=1e-12)
    pooled = np.tensordot(counts / N, covs, axes=1)  # sum_k (N_k/N) Sigma_k, denominator N
    assert np.allclose(shared.covariances, pooled[None], rtol=1e-12, atol=1e-12)
    assert shared.shared and not per.shared


def test_log_joint_matches_scipy(data, grid):
    X, y = data
    for shared in (True, False):
        m = gen.fit_gaussian_classifier(X, y, shared=shared)
        ref = np.column_stack([np.log(m.priors[k]) + multivariate_normal(
            m.means[k], m.covariances[k]).logpdf(grid) for k in range(4)])
        assert np.allclose(gen.log_joint(m, grid), ref, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("solver", ["svd", "lsqr", "eigen"])
def test_shared_equals_sklearn_lda(data, grid, solver):
    X, y = data
    m = gen.fit_gaussian_classifier(X, y)
    lda = LinearDiscriminantAnalysis(solver=solver, store_covariance=True).fit(X, y)
    # scikit-learn (the pinned 1.9.1) pools with the maximum-likelihood denominator N
    assert np.allclose(lda.covariance_, m.covariances[0], rtol=1e-12, atol=1e-12)
    assert np.max(np.abs(gen.posterior(m, grid) - lda.predict_proba(grid))) < 1e-8
    assert np.array_equal(gen.predict(m, grid), lda.predict(grid))


def test_per_class_equals_sklearn_qda(data, grid):
    X, y = data
    m = gen.fit_gaussian_classifier(X, y, shared=False)
    qda = QuadraticDiscriminantAnalysis(reg_param=0.0, store_covariance=True).fit(X, y)
    counts = np.bincount(y)
    # scikit-learn 1.9.1 divides by N_k (maximum likelihood), not by N_k - 1
    assert np.allclose(np.array(qda.covariance_), m.covariances, rtol=1e-12, atol=1e-12)
    unbiased = m.covariances * (counts / (counts - 1))[:, None, None]
    assert not np.allclose(np.array(qda.covariance_), unbiased, rtol=1e-6, atol=0)
    assert np.max(np.abs(gen.posterior(m, grid) - qda.predict_proba(grid))) < 1e-8
    # given sklearn's own parameters, gaussian_classifier gives its probabilities too
    m2 = gen.gaussian_classifier(qda.priors_, qda.means_, np.array(qda.covariance_))
    assert np.max(np.abs(gen.posterior(m2, grid) - qda.predict_proba(grid))) < 1e-8


def test_posteriors_normalised_and_consistent(data, grid):
    X, y = data
    for shared in (True, False):
        m = gen.fit_gaussian_classifier(X, y, shared=shared)
        P = gen.posterior(m, grid)
        assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1, rtol=0, atol=1e-14)
        assert np.array_equal(gen.predict(m, grid), P.argmax(axis=1))
        # log p(x, y) = log p(y | x) + log p(x), summed over the data
        cond = gen.average_log_likelihood(m, X, y) * len(y)
        assert np.isclose(gen.joint_log_likelihood(m, X, y),
                          cond + gen.log_marginal(m, X).sum(), rtol=1e-12)


def test_shared_log_odds_are_linear(data, grid):
    X, y = data
    m = gen.fit_gaussian_classifier(X, y)
    W, w0 = gen.shared_linear_weights(m)
    # the posterior is the softmax of the linear activations W^T x + w0 (eqs. 4.68-4.70)
    assert np.max(np.abs(gen.posterior(m, grid) - softmax(grid @ W + w0, axis=1))) < 1e-12

    def log_odds(model, Z):
        lj = gen.log_joint(model, Z)
        return lj[:, 1:] - lj[:, :1]

    a, b = grid[:100], grid[100:]
    t = np.random.default_rng(1).uniform(-2, 3, size=(100, 1))
    mix = t * a + (1 - t) * b
    # exact: log-odds along any line is affine in the position, for the shared model ...
    gap = log_odds(m, mix) - (t * log_odds(m, a) + (1 - t) * log_odds(m, b))
    assert np.max(np.abs(gap)) < 1e-9
    # ... and not for one covariance per class (the check can fail)
    q = gen.fit_gaussian_classifier(X, y, shared=False)
    gap_q = log_odds(q, mix) - (t * log_odds(q, a) + (1 - t) * log_odds(q, b))
    assert np.max(np.abs(gap_q)) > 1.0
    with pytest.raises(ValueError, match="quadratic"):
        gen.shared_linear_weights(q)


def test_mle_maximises_the_joint_likelihood(data):
    X, y = data
    rng = np.random.default_rng(2)
    for shared in (True, False):
        m = gen.fit_gaussian_classifier(X, y, shared=shared)
        best = gen.joint_log_likelihood(m, X, y)
        for _ in range(5):
            A = np.eye(3) + 0.05 * rng.normal(size=(3, 3))
            covs = A @ m.covariances @ A.T
            means = m.means + 0.05 * rng.normal(size=m.means.shape)
            pri = softmax(np.log(m.priors) + 0.05 * rng.normal(size=4))
            other = gen.gaussian_classifier(pri, means, covs[0] if shared else covs)
            assert gen.joint_log_likelihood(other, X, y) < best


def test_shared_flag_of_given_parameters(data):
    X, y = data
    m = gen.fit_gaussian_classifier(X, y)
    same = gen.gaussian_classifier(m.priors, m.means, m.covariances[0])
    assert same.shared
    assert np.allclose(gen.log_joint(same, X), gen.log_joint(m, X), rtol=1e-13)


X0, Y0 = make_blobs(n_samples=30, centers=3, cluster_std=1.0, random_state=0)
_fit = gen.fit_gaussian_classifier


@pytest.mark.parametrize("call, error, match", [
    (lambda: _fit(X0[:, 0], Y0), ValueError, "X must be a 2-D"),
    (lambda: _fit(np.where(X0 > 5, np.nan, X0), Y0), ValueError, "X must contain only finite"),
    (lambda: _fit(X0, Y0.astype(float)), TypeError, "integer class labels"),
    (lambda: _fit(X0, Y0 - 1), ValueError, "labels 0, 1, ..., K-1"),
    (lambda: _fit(X0, Y0[:-1]), ValueError, "one label per row"),
    (lambda: _fit(X0, np.where(Y0 == 1, 2, Y0)), ValueError, "no points of class 1"),
    (lambda: _fit(X0, np.zeros(30, int)), ValueError, "at least 2 classes"),
    (lambda: _fit(X0, np.r_[0, 0, np.full(28, 1)], shared=False), ValueError,
     r"class 0 has 2 point\(s\); its covariance in D = 2 dimensions needs at least 3"),
    (lambda: _fit(X0[:4], np.array([0, 1, 2, 0])), ValueError, "N >= K \\+ D = 5"),
    (lambda: _fit(np.c_[X0[:, 0], 2 * X0[:, 0]], Y0, shared=False), ValueError,
     "covariance of class 0 is not positive definite"),
    (lambda: _fit(np.c_[X0[:, 0], 2 * X0[:, 0]], Y0), ValueError,
     "shared covariance is not positive definite"),
    (lambda: gen.gaussian_classifier([0.5, 0.6], np.zeros((2, 2)), np.eye(2)), ValueError,
     "priors must sum to 1"),
    (lambda: gen.gaussian_classifier([1.0, 0.0], np.zeros((2, 2)), np.eye(2)), ValueError,
     "priors must be positive"),
    (lambda: gen.gaussian_classifier([0.5, 0.5], np.zeros((3, 2)), np.eye(2)), ValueError,
     "means must have one row per class"),
    (lambda: gen.gaussian_classifier([0.5, 0.5], np.zeros((2, 2)), np.eye(3)), ValueError,
     "covariances must have 2 columns"),
    (lambda: gen.gaussian_classifier([0.5, 0.5], np.zeros((2, 2)), np.ones((3, 2, 2))),
     ValueError, "shape \\(D, D\\) or \\(K, D, D\\)"),
    (lambda: gen.gaussian_classifier([0.5, 0.5], np.zeros((2, 2)), [np.eye(2), -np.eye(2)]),
     ValueError, r"covariances\[1\] is not positive definite"),
    (lambda: gen.gaussian_classifier([0.5, 0.5], np.zeros((2, 2)), [[1, 0.5], [0, 1]]),
     ValueError, "covariances must be symmetric"),
    (lambda: gen.posterior(_fit(X0, Y0), X0[:, :1]), ValueError, "X must have 2 columns"),
    (lambda: gen.average_log_likelihood(_fit(X0, Y0), X0, np.r_[Y0[:-1], 3]), ValueError,
     "label 3 >= K = 3"),
    (lambda: gen.joint_log_likelihood(_fit(X0, Y0), X0, Y0[:5]), ValueError,
     "one label per row"),
    (lambda: gen.fit_gaussian_classifier(X0.astype(str), Y0), TypeError, "X must be a numeric"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
