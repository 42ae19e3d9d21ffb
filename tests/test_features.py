import numpy as np
import pytest

import lib
from lib.features import squared_distances


def test_linear_features_appends_bias():
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(lib.linear_features(X), [[1, 2, 1], [3, 4, 1]])


def test_rbf_matches_definition():
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(7, 2)), rng.normal(size=(5, 2))
    width = 0.37
    Phi = lib.rbf_features(X, C, width)
    assert Phi.shape == (7, 6)
    expected = np.exp(-((X[:, None, :] - C[None, :, :]) ** 2).sum(-1) / (2 * width**2))
    np.testing.assert_allclose(Phi[:, :5], expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(Phi[:, 5], 1.0)


def test_rbf_at_centre_is_one_and_distances_non_negative():
    X = np.array([[1e8, 1e8], [0.0, 0.0]])
    assert np.all(squared_distances(X, X) >= 0)
    np.testing.assert_allclose(np.diag(lib.rbf_features(X, X, 1.0)[:, :2]), 1.0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), 0.0), "width must be a positive"),
        (lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), -1), "width must be a positive"),
        (lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), np.nan), "width must be a positive"),
        (lambda: lib.rbf_features(np.ones(3), np.ones((2, 2)), 1.0), "X must be a 2-D array"),
        (lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 3)), 1.0), "centres must have the same number"),
        (lambda: lib.rbf_features(np.full((3, 2), np.inf), np.ones((2, 2)), 1.0), "X must contain only finite"),
        (lambda: lib.linear_features(np.zeros((0, 2))), "X must have at least one row"),
    ],
)
def test_feature_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), "1"), "width must be a positive real"),
        (lambda: lib.linear_features([["a", "b"]]), "X must be a numeric array"),
        (lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), True), "width must be a positive real"),
    ],
)
def test_feature_type_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_rbf_has_no_subnormal_values():
    X = np.linspace(0, 1, 200)[:, None] * np.array([[1.0, 0.0]])
    Phi = lib.rbf_features(X, X, 0.02)          # exp(-d^2 / (2 l^2)) spans 1 .. 1e-543
    tiny = np.finfo(float).tiny
    assert not np.any((Phi > 0) & (Phi < tiny))
    assert np.min(Phi[Phi > 0]) >= lib.features.FLUSH_BELOW
    G = Phi @ Phi.T                              # products of kept values stay normal too
    assert not np.any((G > 0) & (G < tiny))


def test_rbf_block_from_squared_distances_is_the_design_without_bias():
    X = np.linspace(0, 1, 50)[:, None] * np.array([[1.0, 0.0]])
    d2 = squared_distances(X, X)
    K = lib.features.rbf_from_squared_distances(d2, 0.05)
    np.testing.assert_array_equal(K, lib.rbf_features(X, X, 0.05)[:, :-1])
    kept = np.exp(-d2 / (2 * 0.05**2)) >= lib.features.FLUSH_BELOW
    np.testing.assert_array_equal(K > 0, kept)           # the flush and only it zeroes values
