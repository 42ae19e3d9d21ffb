import warnings

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
    # far from the origin |x|^2 + |c|^2 - 2 x.c cancels, and rounding leaves negative values
    X = 1e4 + np.random.default_rng(0).normal(size=(50, 2))
    assert np.any((X**2).sum(1)[:, None] + (X**2).sum(1)[None, :] - 2 * X @ X.T < 0)
    assert np.all(squared_distances(X, X) >= 0)


BAD_INPUT = [
    pytest.param(lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), 0.0), ValueError,
                 "width must be a positive", id="width-zero"),
    pytest.param(lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), -1), ValueError,
                 "width must be a positive", id="width-negative"),
    pytest.param(lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), np.nan), ValueError,
                 "width must be a positive", id="width-nan"),
    pytest.param(lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), "1"), TypeError,
                 "width must be a positive real", id="width-str"),
    pytest.param(lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 2)), True), TypeError,
                 "width must be a positive real", id="width-bool"),
    pytest.param(lambda: lib.rbf_features(np.ones(3), np.ones((2, 2)), 1.0), ValueError,
                 "X must be a 2-D array", id="X-shape"),
    pytest.param(lambda: lib.rbf_features(np.full((3, 2), np.inf), np.ones((2, 2)), 1.0), ValueError,
                 "X must contain only finite", id="X-inf"),
    pytest.param(lambda: lib.linear_features(np.zeros((0, 2))), ValueError, "X must have at least one row",
                 id="X-empty"),
    pytest.param(lambda: lib.linear_features([["a", "b"]]), TypeError, "X must be a numeric array",
                 id="X-dtype"),
    pytest.param(lambda: lib.rbf_features(np.ones((3, 2)), np.ones((2, 3)), 1.0), ValueError,
                 "centres must have the same number", id="centres"),
    pytest.param(lambda: lib.add_bias(np.ones(3)), ValueError, "Phi must be a 2-D array", id="Phi"),
]


@pytest.mark.parametrize("call, exc, match", BAD_INPUT)
def test_rejects_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
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


@pytest.mark.parametrize("width", [1e-300, 1e300, 1e-151, 1e151])
def test_rbf_width_outside_the_usable_range_is_a_clear_error(width):
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"width must be a positive length scale in \[1e-150, 1e\+150\]"):
        lib.rbf_features(X, X, width)


@pytest.mark.parametrize("width, expected", [(1e-150, np.eye(3)), (1e150, np.ones((3, 3)))])
def test_rbf_widths_at_the_ends_of_the_range_are_computed_without_warnings(width, expected):
    import warnings

    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Phi = lib.rbf_features(X, X, width)
    np.testing.assert_array_equal(Phi[:, :-1], expected)
    np.testing.assert_array_equal(Phi[:, -1], 1.0)


def test_inputs_too_large_for_squared_distances_are_a_clear_error():
    X = np.array([[1e200, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"X must hold values of magnitude at most 1e\+150"):
        squared_distances(X, np.zeros((1, 2)))
    with pytest.raises(ValueError, match=r"centres must hold values of magnitude at most 1e\+150"):
        lib.rbf_features(np.zeros((1, 2)), X, 1.0)


def test_linear_features_and_designs_refuse_inputs_that_overflow():
    X = np.array([[1e200, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"X must hold values of magnitude at most 1e\+150"):
        lib.linear_features(X)
    with pytest.raises(ValueError, match=r"Phi must hold values of magnitude at most 1e\+150"):
        lib.fit_laplace(np.c_[X, np.ones(2)], np.array([1, 0]), 1.0)
    with pytest.raises(ValueError, match=r"Phi must hold values of magnitude at most 1e\+150"):
        lib.fit_ml(np.c_[X, np.ones(2)], np.array([1, 0]), learning_rate=0.1, n_steps=5)


def test_laplace_at_the_largest_inputs_is_finite_and_quiet():
    X = np.array([[1e150, 0.0], [0.0, 1e150], [1.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post = lib.fit_laplace(lib.linear_features(X), np.array([1, 0, 1]), 1.0)
    assert np.isfinite(post.log_evidence)
