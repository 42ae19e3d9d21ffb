import numpy as np
import pytest

import lib


def test_log_sigmoid_stable_at_extremes():
    a = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        ls = lib.log_sigmoid(a)
    np.testing.assert_allclose(ls, [-1000.0, -40.0 - np.log1p(np.exp(-40.0)), -np.log(2), -np.exp(-40.0), 0.0],
                               rtol=1e-12, atol=1e-300)
    assert np.all(np.isfinite(ls))


def test_log_likelihood_matches_naive_formula(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    w = np.random.default_rng(2).normal(size=Phi.shape[1]) * 0.3
    s = 1 / (1 + np.exp(-Phi @ w))
    naive = np.sum(y * np.log(s) + (1 - y) * np.log(1 - s))
    assert lib.log_likelihood(w, Phi, y) == pytest.approx(naive, rel=1e-12)


def test_log_likelihood_finite_for_huge_activations():
    Phi = np.array([[1.0], [1.0]])
    y = np.array([0.0, 1.0])
    ll = lib.log_likelihood(np.array([800.0]), Phi, y)
    assert ll == pytest.approx(-800.0)


def _central_differences(f, w, h=1e-6):
    """``(f(w + h e_j) - f(w - h e_j)) / (2 h)`` for every unit vector ``e_j``, stacked."""
    return np.array([(f(w + h * e) - f(w - h * e)) / (2 * h) for e in np.eye(w.size)])


def test_gradient_against_finite_differences(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    w = np.random.default_rng(3).normal(size=Phi.shape[1]) * 0.5
    fd = _central_differences(lambda v: lib.log_likelihood(v, Phi, y), w)
    np.testing.assert_allclose(lib.gradient(w, Phi, y), fd, rtol=1e-6, atol=1e-7)


def test_hessian_against_finite_differences(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    w = np.random.default_rng(4).normal(size=Phi.shape[1]) * 0.5
    fd = _central_differences(lambda v: lib.gradient(v, Phi, y), w)
    H = lib.hessian(w, Phi, y)
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(H, H.T, atol=1e-12)


def test_average_log_likelihood_agrees_with_logits(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    a = Phi @ np.random.default_rng(5).normal(size=Phi.shape[1])
    assert lib.average_log_likelihood(lib.sigmoid(a), y) == pytest.approx(
        lib.average_log_likelihood_logits(a, y), rel=1e-10
    )
    assert lib.average_log_likelihood_logits(a, y) == pytest.approx(lib.log_likelihood(np.ones(1), a[:, None], y) / y.size)


@pytest.mark.filterwarnings("error")
def test_average_log_likelihood_logits_at_the_largest_logits():
    # every point wrong by a logit of 1e308: each log-probability is -1e308, and so is the mean
    # (summing first would overflow to -inf)
    assert lib.average_log_likelihood_logits(np.full(4, 1e308), np.zeros(4)) == pytest.approx(-1e308)
    assert lib.average_log_likelihood_logits(np.array([-1.7e308, 1e308, 3.0]),
                                             np.array([1, 0, 1])) == pytest.approx(-9e307)


BAD_INPUT = [
    pytest.param(lambda: lib.log_likelihood(np.zeros(3), np.ones((4, 2)), np.zeros(4)), ValueError,
                 "w must have length 2", id="w-length"),
    pytest.param(lambda: lib.log_likelihood(np.array([np.nan, 0]), np.ones((4, 2)), np.zeros(4)), ValueError,
                 "w must contain only finite", id="w-nan"),
    pytest.param(lambda: lib.gradient(np.zeros(2), np.ones(4), np.zeros(4)), ValueError,
                 "Phi must be a 2-D array", id="Phi"),
    pytest.param(lambda: lib.log_likelihood(np.zeros(2), np.ones((4, 2)), np.zeros(3)), ValueError,
                 "y must have length 4", id="y-length"),
    pytest.param(lambda: lib.gradient(np.zeros(2), np.ones((4, 2)), np.array([0, 1, 2, 0])), ValueError,
                 "only the labels 0 and 1", id="y-labels"),
    pytest.param(lambda: lib.hessian(np.zeros(2), np.ones((4, 2)), np.array([0, 1, -1, 0])), ValueError,
                 "only the labels 0 and 1", id="y-negative"),
    pytest.param(lambda: lib.hessian(np.zeros(2), np.ones((4, 2)), np.zeros((4, 1))), ValueError,
                 "y must be a 1-D array", id="y-shape"),
    pytest.param(lambda: lib.log_likelihood(np.zeros(2), np.ones((4, 2)), np.array(["0", "1", "0", "1"])), TypeError,
                 "y must hold numeric", id="y-dtype"),
    pytest.param(lambda: lib.average_log_likelihood(np.array([0.5, 1.5]), np.array([0, 1])), ValueError,
                 "p must hold probabilities", id="p"),
    pytest.param(lambda: lib.average_log_likelihood(np.array([0.5, 0.5]), np.array([0, 1, 1])), ValueError,
                 "y must have length 2", id="y-average"),
    pytest.param(lambda: lib.average_log_likelihood_logits(np.array(["a"]), np.array([0])), TypeError,
                 "a must be a numeric", id="a"),
]


@pytest.mark.parametrize("call, exc, match", BAD_INPUT)
def test_rejects_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
