"""Tests of lib.ml's curvature bounds and lib.report.ml_lab: scored fits, RBF probabilities and the majority effect."""
import numpy as np
import pytest

import lib
from conftest import make_blobs
from lib.book import plots
from lib.report.ml_lab import (
    MajorityEffect,
    ScoredFit,
    SplitPaths,
    epochs,
    first_crossing,
    fit_and_score,
    majority_effect,
    percentile_of,
    rbf_probability,
    resample_to_fraction,
    split_paths,
    split_rows,
    take_at,
)


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


# --------------------------------------------------------------------------- epochs


def test_epochs():
    np.testing.assert_allclose(epochs([0, 10, 75], 750, 10), [0, 10 / 75, 1.0])
    np.testing.assert_allclose(epochs([0, 3], 750), [0, 3])


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


# --------------------------------------------------------------------------- rbf_probability


@pytest.mark.parametrize("chunk_size", [1, 7, 4096])
def test_rbf_probability_matches_full_design(chunk_size):
    X, _ = make_blobs(50, seed=2)
    centres = X[:20]
    w = np.random.default_rng(1).normal(size=21)
    expected = lib.sigmoid(lib.rbf_features(X, centres, 0.5) @ w)
    np.testing.assert_allclose(rbf_probability(X, centres, 0.5, w, chunk_size=chunk_size), expected)


# --------------------------------------------------------------------------- resample_to_fraction


@pytest.mark.parametrize("fraction", [0.0, 0.29, 0.5, 1.0])   # 0.29 * 40 = 11.6 -> 12 ones
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


def test_majority_effect_steps_by_one_over_kappa(monkeypatch):
    seen = []

    def fit_ml(Phi, y, **kwargs):
        seen.append((kwargs["learning_rate"], lib.curvature_bound(Phi)))
        return lib.fit_ml(Phi, y, **kwargs)

    monkeypatch.setattr(lib.report.ml_lab, "fit_ml", fit_ml)
    X, y = make_blobs(120, seed=4)
    majority_effect(X[:100], y[:100], X[100:], width=0.5, fractions=[0.3, 0.6], n_points=30,
                    n_repeats=2, n_steps=5, seed=0)
    assert len(seen) == 4
    for eta, kappa in seen:
        assert eta == pytest.approx(1 / kappa, rel=1e-12)


def test_majority_effect_is_seeded():
    X, y = make_blobs(200, seed=4)
    kw = dict(width=0.5, fractions=[0.3, 0.6], n_points=40, n_repeats=2, n_steps=50)
    a = majority_effect(X[:150], y[:150], X[150:], seed=1, **kw)
    b = majority_effect(X[:150], y[:150], X[150:], seed=1, **kw)
    np.testing.assert_array_equal(a.predicted_ones, b.predicted_ones)


# --------------------------------------------------------------------------- split_rows / split_paths


def test_split_rows_are_random_splits_rows():
    X, y = make_blobs(40, seed=6)
    tr, te = split_rows(40, seed=3)
    Xtr, ytr, Xte, yte = lib.random_split(X, y, seed=3)
    np.testing.assert_array_equal(X[tr], Xtr)
    np.testing.assert_array_equal(y[te], yte)
    assert sorted(np.concatenate([tr, te]).tolist()) == list(range(40))


@pytest.mark.parametrize("width", [None, 0.7])
def test_split_paths_match_fit_ml_on_each_split(width):
    X, y = make_blobs(60, seed=7)
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


# --------------------------------------------------------------------------- crossings, percentiles


def test_first_crossing():
    paths = np.array([[-0.7, -0.5, -0.3, -0.2], [-0.7, -0.6, -0.6, -0.55], [-0.1, -0.2, 0.0, 0.0]])
    np.testing.assert_array_equal(first_crossing(paths, -0.4), [2, -1, 0])
    assert first_crossing(paths[0], -0.5) == 1          # one path: an int
    assert first_crossing(paths[1], 0.0) == -1


def test_take_at():
    paths = np.arange(12.0).reshape(3, 4)
    out = take_at(paths, np.array([1, -1, 3]))
    np.testing.assert_array_equal(out[[0, 2]], [1.0, 11.0])
    assert np.isnan(out[1])
    rates = np.arange(24.0).reshape(3, 4, 2)
    np.testing.assert_array_equal(take_at(rates, np.array([0, 1, 2]))[2], [20.0, 21.0])


def test_percentile_of():
    sample = np.array([-0.3, -0.2, -0.1, 0.0])
    assert percentile_of(-0.5, sample) == 0.0
    assert percentile_of(-0.2, sample) == 50.0       # at or below
    assert percentile_of(0.0, sample) == 100.0


# --------------------------------------------------------------------------- plot_split_band


def test_plot_split_band_draws_line_band_and_reference():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    paths = np.array([[0.0, 1.0, 2.0], [1.0, 2.0, 4.0]])
    plots.plot_split_band(ax, [0, 10, 20], paths, highlight=1, label="x", reference=3.0)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), paths[1])
    assert ax.lines[1].get_ydata()[0] == 3.0                     # the reference line
    assert len(ax.collections) == 1                              # the band
    plt.close(fig)


# --------------------------------------------------------------------------- bad input: one table

X30, Y30 = make_blobs(30, seed=7)
PHI = lib.rbf_features(X30[:20], X30[:20], 0.7)            # (20, 21)
PHI_TEST = lib.rbf_features(X30[20:], X30[:20], 0.7)       # (10, 21)
FIT = {"learning_rate": 0.1, "n_steps": 5}
MAJ = {"width": 0.1, "fractions": [0.5], "n_points": 10, "n_repeats": 1, "n_steps": 5}
PATHS = {"width": None, "seeds": [0], "n_steps": 20, "record_every": 10}


def _plot_band(**kwargs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        args = {"steps": [0, 10, 20], "paths": np.zeros((2, 3))} | kwargs
        plots.plot_split_band(ax, args.pop("steps"), args.pop("paths"), **args)
    finally:
        plt.close(fig)


BAD_INPUT = [
    # curvature bounds, epochs
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
    pytest.param(lambda: epochs([1, -1], 10), ValueError, "steps must be non-negative", id="steps"),
    pytest.param(lambda: epochs([1], 0), ValueError, "n_rows must be a positive integer", id="n_rows"),
    pytest.param(lambda: epochs([1], 10, batch_size=11), ValueError,
                 "batch_size must be at most the number of rows .10.", id="batch_size-epochs"),
    pytest.param(lambda: epochs([1], 10, batch_size=2.5), TypeError, "batch_size must be a positive integer",
                 id="batch_size-epochs-float"),
    # fit_and_score
    pytest.param(lambda: fit_and_score(PHI, Y30[:20], np.ones((3, 2)), np.zeros(3), **FIT), ValueError,
                 "Phi_test must have 21 columns", id="Phi_test"),
    pytest.param(lambda: fit_and_score(PHI, Y30[:20], PHI_TEST, np.zeros(3), **FIT), ValueError,
                 "y_test must have length 10", id="y_test"),
    pytest.param(lambda: fit_and_score(PHI, Y30[:20], PHI_TEST, Y30[20:], learning_rate=-1.0, n_steps=5),
                 ValueError, "learning_rate must be a positive", id="learning_rate"),
    # rbf_probability
    pytest.param(lambda: rbf_probability(X30, X30[:20], 0.5, np.zeros(20)), ValueError, "w must have length 21",
                 id="w"),
    pytest.param(lambda: rbf_probability(X30, X30[:20], 0.0, np.zeros(21)), ValueError, "width must be a positive",
                 id="width-rbf_probability"),
    pytest.param(lambda: rbf_probability(X30, np.zeros((20, 3)), 0.5, np.zeros(21)), ValueError,
                 "centres must have 2 columns", id="centres"),
    pytest.param(lambda: rbf_probability(X30, X30[:20], 0.5, np.zeros(21), chunk_size=0), ValueError,
                 "chunk_size must be a positive integer", id="chunk_size"),
    # resample_to_fraction
    pytest.param(lambda: resample_to_fraction(X30, Y30, fraction=1.5, n_points=10), ValueError,
                 "fraction must be in", id="fraction-range"),
    pytest.param(lambda: resample_to_fraction(X30, Y30, fraction="half", n_points=10), TypeError,
                 "fraction must be a number", id="fraction-str"),
    pytest.param(lambda: resample_to_fraction(X30, Y30, fraction=0.5, n_points=0), ValueError,
                 "n_points must be a positive integer", id="n_points"),
    pytest.param(lambda: resample_to_fraction(X30, Y30, fraction=1.0, n_points=1000), ValueError,
                 "needs 1000 ones", id="n_points-too-many"),
    pytest.param(lambda: resample_to_fraction(np.zeros((3, 2)), np.array([0, 1, 2]), fraction=0.5, n_points=2),
                 ValueError, "y must contain only the labels 0 and 1", id="y-resample"),
    # majority_effect
    pytest.param(lambda: majority_effect(X30, Y30, X30[:5], **MAJ | {"fractions": [0.2, 1.2]}), ValueError,
                 "fractions must hold numbers in", id="fractions"),
    pytest.param(lambda: majority_effect(X30, Y30, X30[:5], **MAJ | {"width": -1.0}), ValueError,
                 "width must be a positive", id="width-majority_effect"),
    pytest.param(lambda: majority_effect(X30, Y30, X30[:5], **MAJ | {"n_repeats": 0}), ValueError,
                 "n_repeats must be a positive integer", id="n_repeats"),
    pytest.param(lambda: majority_effect(X30, Y30, X30[:5], **MAJ | {"n_steps": 1.5}), TypeError,
                 "n_steps must be a positive integer", id="n_steps-majority_effect"),
    pytest.param(lambda: majority_effect(X30, Y30, X30[:5], **MAJ | {"learning_rate": 0.0}), ValueError,
                 "learning_rate must be a positive", id="learning_rate-majority_effect"),
    pytest.param(lambda: majority_effect(X30, Y30, np.zeros((4, 3)), **MAJ), ValueError,
                 "X_test must have 2 columns", id="X_test"),
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
    # first_crossing, take_at, percentile_of
    pytest.param(lambda: first_crossing(np.zeros((2, 0)), 0.0), ValueError, "at least one record",
                 id="paths-empty"),
    pytest.param(lambda: first_crossing(np.zeros((2, 2, 2)), 0.0), ValueError, "paths must be a 2-D array",
                 id="paths-3d"),
    pytest.param(lambda: first_crossing(np.zeros(3), np.nan), ValueError, "level must be finite", id="level-nan"),
    pytest.param(lambda: first_crossing(np.zeros(3), "high"), TypeError, "level must be a real number",
                 id="level-str"),
    pytest.param(lambda: take_at(np.zeros((3, 4)), np.array([0, 1])), ValueError, "index must hold 3 integers",
                 id="index-length"),
    pytest.param(lambda: take_at(np.zeros((3, 4)), np.array([0.0, 1.0, 2.0])), ValueError, "index must hold",
                 id="index-float"),
    pytest.param(lambda: take_at(np.zeros((3, 4)), np.array([0, 4, 1])), ValueError, "index must be -1 or in",
                 id="index-range"),
    pytest.param(lambda: take_at(np.zeros(3), np.array([0, 0, 0])), ValueError, "paths must have shape",
                 id="paths-take_at"),
    pytest.param(lambda: percentile_of(np.nan, [0.0]), ValueError, "value must be finite", id="value-nan"),
    pytest.param(lambda: percentile_of("-0.44", [0.0]), TypeError, "value must be a real number", id="value-str"),
    pytest.param(lambda: percentile_of(0.0, [0.0, np.nan]), ValueError, "sample must contain only finite",
                 id="sample"),
    # lib.book.plots.plot_split_band
    pytest.param(lambda: _plot_band(steps=[0, 10]), ValueError, "paths must have 2 columns", id="paths-plot"),
    pytest.param(lambda: _plot_band(highlight=2), ValueError, "highlight must index a row", id="highlight"),
]


@pytest.mark.parametrize("call, exc, match", BAD_INPUT)
def test_rejects_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
