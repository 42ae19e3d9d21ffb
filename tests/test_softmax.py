import numpy as np
import pytest
from scipy.special import softmax
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression

import lib.models.softmax as sm


@pytest.fixture(scope="module")
def data():
    X, y = make_blobs(n_samples=150, centers=3, cluster_std=1.6, random_state=0)
    return np.c_[np.ones(len(X)), X], y


def test_one_hot():
    assert np.array_equal(sm.one_hot(np.array([0, 2, 1])), np.eye(3)[[0, 2, 1]])
    assert sm.one_hot(np.array([0, 1]), K=4).shape == (2, 4)


@pytest.mark.parametrize("y, kwargs, exc, match", [
    (np.array([0, -1]), {}, ValueError, "found -1"),
    (np.array([0, 3]), {"K": 3}, ValueError, "label 3 >= K = 3"),
    (np.array([0.0, 1.0]), {}, TypeError, "integer class labels"),
    (np.array([[0, 1]]), {}, ValueError, "1-D"),
    (np.array([], dtype=int), {}, ValueError, "non-empty"),
    (np.array([0, 1, 2]), {"length": 4}, ValueError, "length 4"),
    (np.array([0, 1]), {"K": 0}, ValueError, "K must be"),
    (np.array([0, 1]), {"name": "labels", "K": 1}, ValueError, "labels holds label 1"),
])
def test_one_hot_rejects_bad_labels(y, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sm.one_hot(y, **kwargs)


def test_gradient_and_hessian_match_finite_differences(data):
    Phi, y = data
    Y = sm.one_hot(y)
    w = np.random.default_rng(1).normal(size=9) * 0.3
    h = 1e-5
    E = np.eye(9) * h
    g_fd = np.array([(sm.log_likelihood(w + e, Phi, Y) - sm.log_likelihood(w - e, Phi, Y))
                     / (2 * h) for e in E])
    assert np.allclose(sm.gradient(w, Phi, Y), g_fd, rtol=1e-6, atol=1e-5)
    H_fd = np.array([(sm.gradient(w + e, Phi, Y) - sm.gradient(w - e, Phi, Y)) / (2 * h)
                     for e in E])
    H = sm.hessian(w, Phi)
    assert np.allclose(H, H.T)
    assert np.allclose(H, H_fd, rtol=1e-6, atol=1e-5)


def test_map_equals_sklearn(data):
    Phi, y = data
    for s2 in (0.5, 2.0):
        post = sm.fit_softmax_laplace(Phi, sm.one_hot(y), s2)
        clf = LogisticRegression(C=s2, fit_intercept=False, tol=1e-12, max_iter=10000)
        clf.fit(Phi, y)
        assert np.max(np.abs(post.W_map - clf.coef_.T)) < 1e-6
        assert post.n_iter <= 10
        # the prior breaks the shift invariance: the MAP weights sum to zero over classes
        assert np.allclose(post.W_map.sum(axis=1), 0, atol=1e-8)


def test_laplace_precision_and_predictives(data):
    Phi, y = data
    Y = sm.one_hot(y)
    post = sm.fit_softmax_laplace(Phi, Y, 1.0)
    A = -sm.hessian(post.w_map, Phi) + np.eye(9)
    assert np.allclose(post.L @ post.L.T, A)
    assert np.allclose(post.covariance @ A, np.eye(9), atol=1e-8)
    p_mc = sm.predictive_mc(post, Phi[:20], n_samples=2000, seed=0)
    p_mod = sm.predictive_moderated(post, Phi[:20])
    assert np.allclose(p_mc.sum(axis=1), 1) and np.allclose(p_mod.sum(axis=1), 1)
    assert np.max(np.abs(p_mc - p_mod)) < 0.05
    assert np.array_equal(p_mc, sm.predictive_mc(post, Phi[:20], n_samples=2000, seed=0))
    # zero posterior variance: both reduce to the MAP softmax
    tiny = sm.fit_softmax_laplace(Phi, Y, 1.0)
    object.__setattr__(tiny, "L", post.L * 1e6)
    p0 = softmax(Phi[:20] @ post.W_map, axis=1)
    assert np.allclose(sm.predictive_moderated(tiny, Phi[:20]), p0, atol=1e-8)
    assert np.allclose(sm.predictive_mc(tiny, Phi[:20], n_samples=10), p0, atol=1e-6)
