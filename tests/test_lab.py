"""Tests of lib.lab: the curvature bound, scored fits, RBF probabilities and the majority effect."""
import numpy as np
import pytest

import lib
from lib.lab import (
    MajorityEffect,
    ScoredFit,
    curvature_bound,
    epochs,
    fit_and_score,
    majority_effect,
    rbf_probability,
    resample_to_fraction,
)



def make_blobs(n: int, seed: int = 0):
    """Two overlapping Gaussian classes in 2-D: X (n, 2), y (n,) of 0/1."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(float)
    X = rng.normal(size=(n, 2)) + np.where(y[:, None] == 1, 0.8, -0.8)
    return X, y


# --------------------------------------------------------------------------- curvature_bound


@pytest.mark.parametrize("n_cols", [3, 41, 250])  # dense solve and Lanczos paths
def test_curvature_bound_is_quarter_of_largest_eigenvalue(n_cols):
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(300, n_cols))
    expected = np.linalg.eigvalsh(Phi.T @ Phi)[-1] / 4
    assert curvature_bound(Phi) == pytest.approx(expected, rel=1e-8)


def test_curvature_bound_bounds_the_hessian(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    L = curvature_bound(Phi)
    for seed in range(3):
        w = np.random.default_rng(seed).normal(size=Phi.shape[1])
        # -Hessian is PSD and its largest eigenvalue never exceeds L.
        assert np.linalg.eigvalsh(-lib.hessian(w, Phi, y))[-1] <= L * (1 + 1e-12)


def test_step_below_two_over_L_always_climbs(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    eta = 1.9 / curvature_bound(Phi)
    r = lib.fit_ml(Phi, y, learning_rate=eta, n_steps=200)
    assert np.all(np.diff(r.train_ll) >= -1e-12)


def test_curvature_bound_errors():
    with pytest.raises(ValueError, match="Phi must be a 2-D array"):
        curvature_bound(np.ones(5))
    with pytest.raises(ValueError, match="Phi must contain only finite"):
        curvature_bound(np.array([[1.0, np.nan]]))
    with pytest.raises(TypeError, match="Phi must be a numeric array"):
        curvature_bound([["a", "b"]])


# --------------------------------------------------------------------------- epochs


def test_epochs():
    np.testing.assert_allclose(epochs([0, 10, 75], 750, 10), [0, 10 / 75, 1.0])
    np.testing.assert_allclose(epochs([0, 3], 750), [0, 3])


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        (([1, -1], 10), {}, ValueError, "steps must hold non-negative"),
        (([1], 0), {}, ValueError, "n_rows must be a positive integer"),
        (([1], 10), {"batch_size": 11}, ValueError, "batch_size must be at most n_rows"),
        (([1], 10), {"batch_size": 2.5}, TypeError, "batch_size must be a positive integer"),
    ],
)
def test_epochs_errors(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        epochs(*args, **kwargs)


# --------------------------------------------------------------------------- fit_and_score


def test_fit_and_score_matches_its_parts(small_problem):
    d = small_problem
    s = fit_and_score(d["Phi"], d["y"], d["Phi_test"], d["y_test"], learning_rate=0.01, n_steps=100,
                      record_every=10)
    assert isinstance(s, ScoredFit)
    r = lib.fit_ml(d["Phi"], d["y"], learning_rate=0.01, n_steps=100, Phi_test=d["Phi_test"],
                   y_test=d["y_test"], record_every=10)
    np.testing.assert_array_equal(s.fit.w, r.w)
    assert s.train_ll == pytest.approx(r.train_ll[-1])
    assert s.test_ll == pytest.approx(r.test_ll[-1])
    p_test = lib.sigmoid(d["Phi_test"] @ r.w)
    np.testing.assert_array_equal(s.test_confusion, lib.confusion_matrix(p_test, d["y_test"]))
    assert s.test_accuracy == pytest.approx(lib.accuracy(p_test, d["y_test"]))
    assert s.epochs == 100.0 and s.learning_rate == 0.01


def test_fit_and_score_counts_minibatch_epochs(small_problem):
    d = small_problem
    s = fit_and_score(d["Phi"], d["y"], d["Phi_test"], d["y_test"], learning_rate=0.01, n_steps=30,
                      batch_size=20)
    assert s.epochs == pytest.approx(30 * 20 / 60)


def test_fit_and_score_errors(small_problem):
    d = small_problem
    with pytest.raises(ValueError, match="Phi_test must have 41 columns"):
        fit_and_score(d["Phi"], d["y"], np.ones((3, 2)), np.zeros(3), learning_rate=0.1, n_steps=5)
    with pytest.raises(ValueError, match="y_test must have length"):
        fit_and_score(d["Phi"], d["y"], d["Phi_test"], np.zeros(3), learning_rate=0.1, n_steps=5)
    with pytest.raises(ValueError, match="learning_rate must be a positive"):
        fit_and_score(d["Phi"], d["y"], d["Phi_test"], d["y_test"], learning_rate=-1.0, n_steps=5)


# --------------------------------------------------------------------------- rbf_probability


@pytest.mark.parametrize("chunk_size", [1, 7, 4096])
def test_rbf_probability_matches_full_design(chunk_size):
    X, _ = make_blobs(50, seed=2)
    centres = X[:20]
    w = np.random.default_rng(1).normal(size=21)
    expected = lib.sigmoid(lib.rbf_features(X, centres, 0.5) @ w)
    np.testing.assert_allclose(rbf_probability(X, centres, 0.5, w, chunk_size=chunk_size), expected)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"w": np.zeros(20)}, ValueError, "w must have length 21"),
        ({"width": 0.0}, ValueError, "width must be a positive"),
        ({"centres": np.zeros((20, 3))}, ValueError, "centres must have 2 columns"),
        ({"chunk_size": 0}, ValueError, "chunk_size must be a positive integer"),
    ],
)
def test_rbf_probability_errors(kwargs, exc, match):
    X, _ = make_blobs(10, seed=2)
    args = {"X": X, "centres": np.zeros((20, 2)), "width": 0.5, "w": np.zeros(21)} | kwargs
    chunk = args.pop("chunk_size", 4096)
    with pytest.raises(exc, match=match):
        rbf_probability(args["X"], args["centres"], args["width"], args["w"], chunk_size=chunk)


# --------------------------------------------------------------------------- resample_to_fraction


@pytest.mark.parametrize("fraction", [0.0, 0.3, 0.5, 1.0])
def test_resample_to_fraction(fraction):
    X, y = make_blobs(200, seed=3)
    Xs, ys = resample_to_fraction(X, y, fraction=fraction, n_points=40, seed=5)
    assert Xs.shape == (40, 2) and ys.shape == (40,)
    assert ys.sum() == round(fraction * 40)
    # rows are drawn without replacement, and keep their true labels
    rows = [int(np.flatnonzero((X == x).all(1))[0]) for x in Xs]
    assert len(set(rows)) == 40
    np.testing.assert_array_equal(y[rows], ys)


def test_resample_to_fraction_is_seeded():
    X, y = make_blobs(200, seed=3)
    a = resample_to_fraction(X, y, fraction=0.4, n_points=30, seed=1)
    b = resample_to_fraction(X, y, fraction=0.4, n_points=30, seed=1)
    c = resample_to_fraction(X, y, fraction=0.4, n_points=30, seed=2)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"fraction": 1.5}, ValueError, "fraction must be in"),
        ({"fraction": "half"}, TypeError, "fraction must be a number"),
        ({"n_points": 0}, ValueError, "n_points must be a positive integer"),
        ({"fraction": 1.0, "n_points": 1000}, ValueError, "needs 1000 ones"),
    ],
)
def test_resample_to_fraction_errors(kwargs, exc, match):
    X, y = make_blobs(100, seed=3)
    args = {"fraction": 0.5, "n_points": 20} | kwargs
    with pytest.raises(exc, match=match):
        resample_to_fraction(X, y, **args)


def test_resample_to_fraction_bad_labels():
    with pytest.raises(ValueError, match="y must contain only the labels 0 and 1"):
        resample_to_fraction(np.zeros((3, 2)), np.array([0, 1, 2]), fraction=0.5, n_points=2)


# --------------------------------------------------------------------------- majority_effect


def test_majority_effect_narrow_width_predicts_training_majority():
    X, y = make_blobs(300, seed=4)
    Xtr, ytr, Xte = X[:200], y[:200], X[200:]
    res = majority_effect(Xtr, ytr, Xte, width=0.005, fractions=[0.2, 0.8], n_points=60, n_repeats=2,
                          n_steps=200, seed=0)
    assert isinstance(res, MajorityEffect)
    assert res.predicted_ones.shape == (2, 2)
    assert res.mean[0] < 0.1 and res.mean[1] > 0.9   # the bias alone decides the test points
    np.testing.assert_allclose(res.std, res.predicted_ones.std(axis=1))


def test_majority_effect_is_seeded():
    X, y = make_blobs(200, seed=4)
    kw = dict(width=0.5, fractions=[0.3, 0.6], n_points=40, n_repeats=2, n_steps=50)
    a = majority_effect(X[:150], y[:150], X[150:], seed=1, **kw)
    b = majority_effect(X[:150], y[:150], X[150:], seed=1, **kw)
    np.testing.assert_array_equal(a.predicted_ones, b.predicted_ones)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"fractions": [0.2, 1.2]}, ValueError, "fractions must all be in"),
        ({"width": -1.0}, ValueError, "width must be a positive"),
        ({"n_repeats": 0}, ValueError, "n_repeats must be a positive integer"),
        ({"n_steps": 1.5}, TypeError, "n_steps must be a positive integer"),
        ({"learning_rate": 0.0}, ValueError, "learning_rate must be a positive"),
        ({"X_test": np.zeros((4, 3))}, ValueError, "X_test must have 2 columns"),
    ],
)
def test_majority_effect_errors(kwargs, exc, match):
    X, y = make_blobs(100, seed=3)
    args = {"X_test": X[:10], "width": 0.1, "fractions": [0.5], "n_points": 20, "n_repeats": 1,
            "n_steps": 5} | kwargs
    X_test = args.pop("X_test")
    with pytest.raises(exc, match=match):
        majority_effect(X, y, X_test, **args)
