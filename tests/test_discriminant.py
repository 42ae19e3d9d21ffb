"""Tests of lib.models.discriminant: least squares on one-hot targets."""
import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.linear_model import LinearRegression

import lib.models.discriminant as dis


@pytest.fixture(scope="module")
def data():
    return make_blobs(n_samples=[30, 50, 70], n_features=2, cluster_std=2.0, random_state=4)


def test_weights_equal_lstsq_and_sklearn(data):
    X, y = data
    m = dis.fit_least_squares(X, y)
    Y = np.eye(3)[y]
    W_ref = np.linalg.solve(np.c_[np.ones(len(X)), X].T @ np.c_[np.ones(len(X)), X],
                            np.c_[np.ones(len(X)), X].T @ Y)  # normal equations
    assert np.allclose(m.W, W_ref, rtol=1e-10, atol=1e-12)
    reg = LinearRegression().fit(X, Y)
    assert np.allclose(m.W[0], reg.intercept_, atol=1e-12)
    assert np.allclose(m.W[1:], reg.coef_.T, atol=1e-12)
    assert np.allclose(dis.outputs(m, X), reg.predict(X), atol=1e-12)
    assert m.K == 3 and m.D == 2


def test_labels_only_and_outputs_not_probabilities(data):
    X, y = data
    m = dis.fit_least_squares(X, y)
    far = np.array([[40.0, -40.0], [-40.0, 40.0], [0.0, 60.0]])
    F = dis.outputs(m, np.r_[X, far])
    # with a bias and one-hot targets the outputs sum to 1 (Bishop 2006, section 4.1.3) ...
    assert np.allclose(F.sum(axis=1), 1, atol=1e-12)
    # ... but leave [0, 1] away from the data: they are not probabilities
    assert F.min() < 0 and F.max() > 1
    pred = dis.predict(m, X)
    assert pred.dtype.kind == "i" and np.array_equal(pred, dis.outputs(m, X).argmax(axis=1))
    assert np.mean(pred == y) > 0.6


@pytest.mark.parametrize("args, error, match", [
    ((np.zeros(5), np.zeros(5, int)), ValueError, "X must be a 2-D"),
    ((np.zeros((5, 2)), np.zeros(4, int)), ValueError, "one label per row"),
    ((np.zeros((5, 2)), np.array([0, 0, 2, 2, 2])), ValueError, "no points of class 1"),
    ((np.zeros((5, 2)), np.array([0.0, 1, 0, 1, 0])), TypeError, "integer class labels"),
    ((np.full((2, 2), np.inf), np.array([0, 1])), ValueError, "finite"),
])
def test_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        dis.fit_least_squares(*args)


def test_predict_checks_columns(data):
    X, y = data
    with pytest.raises(ValueError, match="X must have 2 columns"):
        dis.predict(dis.fit_least_squares(X, y), X[:, :1])
