"""Tests of lib.ml's curvature bounds and lib.report.ml_lab's split study (split_rows, split_paths)."""
import inspect

import numpy as np
import pytest
import scipy.sparse

import lib
from conftest import make_blobs
from lib.report import ml_lab
from lib.report.ml_lab import SplitPaths, split_paths, split_rows


# --------------------------------------------------------------------------- curvature_bound


@pytest.mark.parametrize("n_cols", [3, 41, 250])  # dense solve and Lanczos paths
def test_curvature_bound_is_quarter_of_largest_eigenvalue(n_cols):
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(300, n_cols))
    expected = np.linalg.eigvalsh(Phi.T @ Phi)[-1] / 4
    assert lib.curvature_bound(Phi) == pytest.approx(expected, rel=1e-8)


def test_curvature_bound_bounds_the_hessian(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    L = lib.curvature_bound(Phi)
    for seed in range(3):
        w = np.random.default_rng(seed).normal(size=Phi.shape[1])
        # -Hessian is PSD and its largest eigenvalue never exceeds L.
        assert np.linalg.eigvalsh(-lib.hessian(w, Phi, y))[-1] <= L * (1 + 1e-12)


def test_step_below_two_over_L_always_climbs(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    eta = 1.9 / lib.curvature_bound(Phi)
    r = lib.fit_ml(Phi, y, learning_rate=eta, n_steps=200)
    assert np.all(np.diff(r.train_ll) >= -1e-12)


def test_minibatch_curvature_bound():
    rng = np.random.default_rng(1)
    Phi = rng.normal(size=(60, 3))
    rows = np.random.default_rng(4).permutation(60)
    expected = max(np.linalg.eigvalsh(Phi[b].T @ Phi[b])[-1] / 4 for b in np.array_split(rows, 6))
    assert lib.minibatch_curvature_bound(Phi, 10, seed=4) == pytest.approx(expected, rel=1e-10)
    assert lib.minibatch_curvature_bound(Phi, 60) == pytest.approx(lib.curvature_bound(Phi))
    # fewer rows per batch: a smaller bound (roughly B / N of the full batch's)
    assert lib.minibatch_curvature_bound(Phi, 6) < 0.5 * lib.curvature_bound(Phi)


# --------------------------------------------------------------------------- split_rows / split_paths


def test_split_rows_are_random_splits_rows():
    X, y = make_blobs(40, seed=6)
    tr, te = split_rows(40, seed=3)
    Xtr, ytr, Xte, yte = lib.random_split(X, y, seed=3)
    np.testing.assert_array_equal(X[tr], Xtr)
    np.testing.assert_array_equal(y[te], yte)
    assert sorted(np.concatenate([tr, te]).tolist()) == list(range(40))


@pytest.mark.parametrize("width", [None, 0.7, 0.01])   # 0.01: K mostly zeros, held sparse
def test_split_paths_match_fit_ml_on_each_split(width):
    X, y = make_blobs(60, seed=7)
    if width == 0.01:
        activations = ml_lab._all_splits_design(X, width)[1]
        assert scipy.sparse.issparse(inspect.getclosurevars(activations).nonlocals["Kc"])
    sp = split_paths(X, y, width=width, seeds=[0, 5], n_steps=40, record_every=10)
    assert isinstance(sp, SplitPaths)
    assert sp.train_ll.shape == sp.test_ll.shape == (2, 5)
    assert sp.train_rates.shape == sp.test_rates.shape == (2, 5, 2)
    np.testing.assert_array_equal(sp.steps, [0, 10, 20, 30, 40])
    for i, seed in enumerate([0, 5]):
        Xtr, ytr, Xte, yte = lib.random_split(X, y, seed=seed)
        if width is None:
            Phi, Phi_test = lib.linear_features(Xtr), lib.linear_features(Xte)
        else:
            Phi, Phi_test = lib.rbf_features(Xtr, Xtr, width), lib.rbf_features(Xte, Xtr, width)
        eta = 1 / lib.curvature_bound(Phi)
        assert sp.learning_rates[i] == pytest.approx(eta, rel=1e-10)
        r = lib.fit_ml(Phi, ytr, learning_rate=eta, n_steps=40, Phi_test=Phi_test, y_test=yte,
                       record_every=10)
        np.testing.assert_allclose(sp.train_ll[i], r.train_ll, rtol=1e-12)
        np.testing.assert_allclose(sp.test_ll[i], r.test_ll, rtol=1e-12)
        np.testing.assert_allclose(sp.final_w[i], r.w, rtol=1e-10, atol=1e-13)
        C = lib.confusion_matrix(lib.sigmoid(Phi_test @ r.w), yte)
        np.testing.assert_allclose(sp.test_rates[i, -1], np.diag(C))
        np.testing.assert_allclose(sp.test_balanced_accuracy[i, -1], np.diag(C).mean())
        C = lib.confusion_matrix(lib.sigmoid(Phi @ r.w), ytr)
        np.testing.assert_allclose(sp.train_balanced_accuracy[i, -1], np.diag(C).mean())
    # before the first step every prediction is 1/2: log(1/2), and s(0) = 1/2 is called 0
    np.testing.assert_allclose(sp.train_ll[:, 0], np.log(0.5))
    np.testing.assert_array_equal(sp.test_rates[:, 0], [[1, 0], [1, 0]])


# --------------------------------------------------------------------------- bad input: one table

X30, Y30 = make_blobs(30, seed=7)
PHI = lib.rbf_features(X30[:20], X30[:20], 0.7)            # (20, 21)
PATHS = {"width": None, "seeds": [0], "n_steps": 20, "record_every": 10}


BAD_INPUT = [
    # curvature bounds
    pytest.param(lambda: lib.curvature_bound(np.ones(5)), ValueError, "Phi must be a 2-D array", id="Phi-shape"),
    pytest.param(lambda: lib.curvature_bound(np.array([[1.0, np.nan]])), ValueError, "Phi must contain only finite",
                 id="Phi-nan"),
    pytest.param(lambda: lib.curvature_bound([["a", "b"]]), TypeError, "Phi must be a numeric array", id="Phi-dtype"),
    pytest.param(lambda: lib.minibatch_curvature_bound(PHI, 21), ValueError,
                 "batch_size must be at most the number of rows .20.", id="batch_size-minibatch"),
    pytest.param(lambda: lib.minibatch_curvature_bound(PHI, 2.0), TypeError, "batch_size must be a positive integer",
                 id="batch_size-float"),
    pytest.param(lambda: lib.minibatch_curvature_bound(PHI, None), TypeError, "batch_size must be a positive integer",
                 id="batch_size-none"),
    # split_paths
    pytest.param(lambda: split_paths(X30, Y30, **PATHS | {"seeds": []}), ValueError, "seeds must be a non-empty",
                 id="seeds-empty"),
    pytest.param(lambda: split_paths(X30, Y30, **PATHS | {"seeds": [0.5]}), ValueError,
                 "seeds must be a non-empty", id="seeds-float"),
    pytest.param(lambda: split_paths(X30, Y30, **PATHS | {"n_steps": 25}), ValueError,
                 "record_every .10. must divide n_steps .25.", id="record_every"),
    pytest.param(lambda: split_paths(X30, Y30, **PATHS | {"width": 0.0}), ValueError, "width must be a positive",
                 id="width-split_paths"),
    pytest.param(lambda: split_paths(X30, Y30, **PATHS | {"n_steps": 0}), ValueError,
                 "n_steps must be a positive integer", id="n_steps-split_paths"),
    pytest.param(lambda: split_paths(np.zeros((5, 3)), np.zeros(5), **PATHS), ValueError, "X must have 2 columns",
                 id="X"),
    pytest.param(lambda: split_paths(np.zeros((5, 2)), np.arange(5), **PATHS), ValueError,
                 "y must contain only the labels 0 and 1", id="y-split_paths"),
]


@pytest.mark.parametrize("call, exc, match", BAD_INPUT)
def test_rejects_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
