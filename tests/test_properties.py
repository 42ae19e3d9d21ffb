"""Property-based tests of ``lib`` (Hypothesis): generated designs, labels, kernels and
hyper-parameters, valid and invalid.

Valid inputs must give finite results of the documented shapes and invariants (probabilities
in [0, 1], the MAP gradient about zero, a positive-definite precision, the same result for
lists, arrays and DataFrames); invalid ones must raise ``ValueError`` or ``TypeError`` naming
the argument. Every test runs with warnings as errors. The profile below (fixed examples,
``derandomize``, no deadline) keeps the whole file to tens of seconds on one core.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lib
from lib.models import gp, probit, softmax

pytestmark = pytest.mark.filterwarnings("error")

#: The CI profile: the same examples on every run and machine, no per-example deadline.
CI = settings(max_examples=30, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

finite = st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False)
log_uniform = lambda lo, hi: st.floats(np.log(lo), np.log(hi)).map(np.exp)  # noqa: E731
prior_variances = log_uniform(1e-2, 1e2)
widths = log_uniform(0.05, 5.0)


@st.composite
def problems(draw, max_rows=12, max_cols=5):
    """A design Phi (N, M) with entries in [-5, 5] and labels y (N,) holding both classes."""
    n = draw(st.integers(3, max_rows))
    m = draw(st.integers(1, max_cols))
    Phi = draw(hnp.arrays(float, (n, m), elements=finite))
    y = draw(hnp.arrays(float, n, elements=st.sampled_from([0.0, 1.0])))
    assume(0 < y.sum() < n)
    return Phi, y


@st.composite
def inputs(draw, max_rows=12):
    """2-D inputs X (N, 2) of distinct rows, labels y (N,) of both classes."""
    n = draw(st.integers(4, max_rows))
    X = draw(hnp.arrays(float, (n, 2), elements=finite, unique=False))
    assume(np.unique(X.round(6), axis=0).shape[0] == n)
    y = draw(hnp.arrays(float, n, elements=st.sampled_from([0.0, 1.0])))
    assume(0 < y.sum() < n)
    return X, y


@st.composite
def kernels(draw, max_rows=10):
    """A symmetric positive semi-definite K = A A^T (N, N) and labels y (N,)."""
    n = draw(st.integers(2, max_rows))
    A = draw(hnp.arrays(float, (n, draw(st.integers(1, n))), elements=st.floats(-2, 2)))
    y = draw(hnp.arrays(float, n, elements=st.sampled_from([0.0, 1.0])))
    return A @ A.T, y


def _log_posterior_gradient(post, Phi, y):
    return Phi.T @ (y - lib.sigmoid(Phi @ post.w_map)) - post.w_map / post.s2


# --------------------------------------------------------------------------- valid inputs


@CI
@given(problems(), prior_variances)
def test_laplace_fit_is_a_mode_with_a_positive_definite_precision(problem, s2):
    Phi, y = problem
    post = lib.fit_laplace(Phi, y, s2)
    g = _log_posterior_gradient(post, Phi, y)
    scale = 1.0 + np.abs(Phi).sum() + np.abs(post.w_map).max() / s2
    assert np.abs(g).max() <= 1e-8 * scale
    assert np.all(np.diag(post.chol) > 0) and np.isfinite(post.log_evidence)
    np.testing.assert_allclose(post.precision, lib.precision_matrix(post.w_map, Phi, s2),
                               rtol=1e-10, atol=1e-10 * np.abs(post.precision).max())
    assert post.log_evidence <= 1e-9   # the evidence of binary labels is a probability
    gamma = lib.effective_parameters(post)
    assert -1e-9 <= gamma <= Phi.shape[1] + 1e-9


@CI
@given(problems(), prior_variances)
def test_results_unchanged_by_list_array_and_dataframe_inputs(problem, s2):
    Phi, y = problem
    ref = lib.fit_laplace(Phi, y, s2)
    for P, t in ((Phi.tolist(), y.tolist()), (Phi, y.astype(int)), (Phi, y.astype(bool))):
        post = lib.fit_laplace(P, t, s2)
        np.testing.assert_array_equal(post.w_map, ref.w_map)
        assert post.log_evidence == ref.log_evidence
    # a DataFrame is column-major: BLAS may sum in another order, so equal up to rounding
    post = lib.fit_laplace(pd.DataFrame(Phi), pd.Series(y), s2)
    np.testing.assert_allclose(post.w_map, ref.w_map, rtol=1e-9, atol=1e-12)
    assert post.log_evidence == pytest.approx(ref.log_evidence, rel=1e-12, abs=1e-12)
    p = lib.predictive_proba(ref, Phi)
    np.testing.assert_allclose(lib.predictive_proba(ref, pd.DataFrame(Phi)), p, rtol=1e-12)
    assert lib.accuracy(p.tolist(), y.tolist()) == lib.accuracy(p, y)


@CI
@given(problems(), prior_variances)
def test_predictions_are_probabilities_and_scores_are_consistent(problem, s2):
    Phi, y = problem
    post = lib.fit_laplace(Phi, y, s2)
    mu, var = lib.activation_moments(post, Phi)
    assert np.all(var >= 0) and mu.shape == var.shape == y.shape
    for p in (lib.predictive_proba(post, Phi), lib.map_proba(post, Phi),
              lib.sigmoid(lib.LOGISTIC.predictive_logits(mu, var))):
        assert p.shape == y.shape and np.all((p >= 0) & (p <= 1))
    p = lib.predictive_proba(post, Phi)
    # the predictive is the MAP's probability pulled towards 1/2
    assert np.all(np.abs(p - 0.5) <= np.abs(lib.map_proba(post, Phi) - 0.5) + 1e-15)
    cm = lib.confusion_matrix(p, y)        # rows: P(yhat | y), both classes present
    np.testing.assert_allclose(cm.sum(axis=1), 1.0)
    hits = cm[0, 0] * (y == 0).sum() + cm[1, 1] * (y == 1).sum()
    assert hits == pytest.approx(lib.accuracy(p, y) * len(y))
    assert lib.average_log_likelihood(p, y) <= 0
    scores = lib.score_split(post, Phi, y)
    assert all(np.isfinite(v) for v in (scores.ll_map, scores.ll_pred, scores.accuracy_pred))
    assert 0 <= scores.accuracy_map <= 1
    np.testing.assert_allclose(scores.confusion_pred, cm)


@CI
@given(st.lists(st.floats(-30, 30), min_size=1, max_size=8),
       st.lists(log_uniform(1e-6, 1e3), min_size=1, max_size=8))
def test_probit_approximation_is_close_to_the_exact_expectation(mus, variances):
    n = min(len(mus), len(variances))
    mu, var = np.array(mus[:n]), np.array(variances[:n])
    exact = lib.logistic_gaussian_expectation(mu, var)
    approx = lib.sigmoid(lib.LOGISTIC.predictive_logits(mu, var))   # predictive_proba's formula
    assert np.all((exact >= 0) & (exact <= 1))
    assert np.abs(exact - approx).max() < 0.02     # the probit gap, |g| <= 0.0177, and a margin
    p = probit.predictive_proba(mu, var)
    assert np.all((p >= 0) & (p <= 1))


@CI
@given(inputs(), widths)
def test_rbf_features_are_bounded_with_a_bias(data, width):
    X, _ = data
    Phi = lib.rbf_features(X, X[:3], width)
    assert Phi.shape == (X.shape[0], 4)
    assert np.all((Phi[:, :-1] > 0) | (Phi[:, :-1] == 0)) and np.all(Phi[:, :-1] <= 1)
    np.testing.assert_array_equal(Phi[:, -1], 1.0)


@CI
@given(problems(), st.floats(0.1, 1.0))
def test_gradient_ascent_does_not_decrease_the_likelihood_below_the_curvature_bound(problem, f):
    Phi, y = problem
    kappa = lib.curvature_bound(Phi)
    assume(kappa > 1e-6)
    res = lib.fit_ml(Phi, y, learning_rate=f / kappa, n_steps=20)
    assert np.all(np.diff(res.train_ll) >= -1e-9 * (1 + np.abs(res.train_ll[:-1])))


@CI
@given(inputs(max_rows=40), st.floats(0.05, 0.95), st.integers(0, 2**31 - 1))
def test_splits_partition_the_rows(data, fraction, seed):
    X, y = data
    n = X.shape[0]
    assume(0 < round(fraction * n) < n)
    parts = lib.random_split(X, y, train_fraction=fraction, seed=seed)
    assert len(parts[0]) + len(parts[2]) == n and len(parts[0]) > 0 and len(parts[2]) > 0
    np.testing.assert_array_equal(np.sort(np.r_[parts[1], parts[3]]), np.sort(y))
    k = max(1, min(n - 1, int(fraction * n)))
    Xtr, ytr, Xte, yte = lib.first_rows_split(X, y, n_train=k)
    np.testing.assert_array_equal(np.r_[Xtr, Xte], X)


@CI
@given(kernels())
def test_gp_laplace_on_a_kernel_is_self_consistent(problem):
    K, y = problem
    fit = gp.fit_gp_laplace(K, y)
    assert np.isfinite(fit.log_evidence) and fit.log_evidence <= 1e-9
    np.testing.assert_allclose(fit.f_hat, K @ fit.grad, atol=1e-8 * (1 + np.abs(K).max()))
    mean, var = gp.predict_latent(fit, K, np.diag(K))
    assert np.all(var >= -1e-9 * (1 + np.abs(K).max()))


@CI
@given(inputs(max_rows=15).filter(lambda d: len(d[1]) >= 6), prior_variances)
def test_softmax_gives_distributions(data, s2):
    X, y = data
    labels = (np.arange(len(y)) % 3)
    Y = softmax.one_hot(labels, 3)
    post = softmax.fit_softmax_laplace(lib.linear_features(X), Y, s2)
    w = post.w_map
    g = softmax.gradient(w, lib.linear_features(X), Y) - w / s2
    assert np.abs(g).max() < 1e-8 * (1 + np.abs(X).sum())
    for P in (softmax.predictive_moderated(post, lib.linear_features(X)),
              softmax.predictive_mc(post, lib.linear_features(X), n_samples=50)):
        assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1.0)


# --------------------------------------------------------------------------- invalid inputs


def _call(fn, **kwargs):
    return lambda **bad: fn(**{**kwargs, **bad})


def _entry_points(Phi, y, X):
    """``{label: (call, {argument: value})}`` of public functions on a valid problem."""
    post = lib.fit_laplace(Phi, y, 1.0)
    n = len(y)
    return {
        "fit_laplace": (_call(lib.fit_laplace, Phi=Phi, y=y, s2=1.0), ("Phi", "y")),
        "log_likelihood": (_call(lib.log_likelihood, w=post.w_map, Phi=Phi, y=y), ("w", "Phi", "y")),
        "fit_ml": (_call(lib.fit_ml, Phi=Phi, y=y, learning_rate=0.1, n_steps=2), ("Phi", "y")),
        "predictive_proba": (_call(lib.predictive_proba, posterior=post, Phi=Phi), ("Phi",)),
        "score_split": (_call(lib.score_split, posterior=post, Phi=Phi, y=y), ("Phi", "y")),
        "accuracy": (_call(lib.accuracy, p=np.full(n, 0.5), y=y), ("p", "y")),
        "rbf_features": (_call(lib.rbf_features, X=X, centres=X, width=0.5), ("X", "centres")),
        "first_rows_split": (_call(lib.first_rows_split, X=X, y=y), ("X", "y")),
    }


CORRUPTIONS = {
    "NaN": lambda a, rng: _put(a, rng, np.nan),
    "inf": lambda a, rng: _put(a, rng, np.inf),
    "string": lambda a, rng: np.asarray(a).astype(str),
    "one row short": lambda a, rng: np.asarray(a)[:-1],
    "extra axis": lambda a, rng: np.asarray(a)[..., None],
    "None": lambda a, rng: None,
}


def _put(a, rng, value):
    a = np.array(a, dtype=float)
    a.flat[rng.integers(a.size)] = value
    return a


@CI
@given(problems(max_cols=3), st.sampled_from(sorted(CORRUPTIONS)), st.integers(0, 2**31 - 1),
       st.data())
def test_invalid_arrays_raise_naming_the_argument(problem, kind, seed, data):
    Phi, y = problem
    X = Phi[:, :1] @ np.ones((1, 2)) + np.arange(len(y))[:, None]     # distinct 2-D inputs
    entries = _entry_points(Phi, y, X)
    label = data.draw(st.sampled_from(sorted(entries)))
    call, args = entries[label]
    arg = data.draw(st.sampled_from(args))
    value = {"Phi": Phi, "Phi_train": Phi, "Phi_test": Phi, "y": y, "y_train": y, "y_test": y,
             "X": X, "centres": X, "p": np.full(len(y), 0.5),
             "w": lib.fit_laplace(Phi, y, 1.0).w_map}[arg]
    if kind == "one row short" and label in ("predictive_proba", "rbf_features"):
        return                                     # rows are free there
    bad = CORRUPTIONS[kind](value, np.random.default_rng(seed))
    with pytest.raises((ValueError, TypeError)) as err:
        call(**{arg: bad})
    names = (arg,) if kind != "one row short" else args
    assert any(n in str(err.value) for n in names), (label, arg, kind, str(err.value))


@CI
@given(problems(max_cols=3), st.sampled_from([2.0, -1.0, 0.5, np.nan]), st.integers(0, 100))
def test_labels_outside_0_1_are_rejected(problem, label, i):
    Phi, y = problem
    y = y.copy()
    y[i % len(y)] = label
    for fn in (lambda: lib.fit_laplace(Phi, y, 1.0), lambda: lib.log_likelihood(np.zeros(Phi.shape[1]), Phi, y),
               lambda: lib.accuracy(np.full(len(y), 0.5), y)):
        with pytest.raises(ValueError, match="y must contain only the labels 0 and 1"):
            fn()


@CI
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True).filter(lambda v: not v > 0 or not np.isfinite(v)),
                 st.text(max_size=3), st.none(), st.booleans()))
def test_invalid_prior_variances_and_widths_are_rejected(value):
    X, y = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]]), np.array([0.0, 1.0, 1.0])
    Phi = lib.linear_features(X)
    with pytest.raises((ValueError, TypeError), match="s2"):
        lib.fit_laplace(Phi, y, value)
    with pytest.raises((ValueError, TypeError), match="width"):
        lib.rbf_features(X, X, value)


@CI
@given(st.one_of(st.integers(max_value=-1), st.floats(allow_nan=True), st.text(max_size=2),
                 st.booleans()))
def test_invalid_seeds_are_rejected(seed):
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10) % 2
    with pytest.raises((ValueError, TypeError), match="seed"):
        lib.random_split(X, y, seed=seed)
    with pytest.raises((ValueError, TypeError), match="seed"):
        lib.minibatch_curvature_bound(lib.linear_features(X), 2, seed=seed)


@CI
@given(st.integers(2, 8), st.floats(-3, 3), st.data())
def test_non_psd_kernels_are_rejected(n, shift, data):
    A = np.random.default_rng(n).normal(size=(n, n))
    K = A @ A.T
    kind = data.draw(st.sampled_from(["indefinite", "non-symmetric"]))
    if kind == "indefinite":
        K = K - (np.linalg.eigvalsh(K).min() + 1.0 + abs(shift)) * np.eye(n)
    else:
        K = K + np.triu(np.ones((n, n)), 1) * (1.0 + abs(shift))
    y = (np.arange(n) % 2).astype(float)
    for fn in (lambda: gp.fit_gp_laplace(K, y), lambda: gp.newton_cg(K, y, 1e-8)):
        with pytest.raises(ValueError, match="K must be"):
            fn()


@CI
@given(st.integers(3, 40), st.floats(0.0, 1.0))
def test_split_fractions_must_leave_both_sets_non_empty(n, fraction):
    X, y = np.zeros((n, 2)), (np.arange(n) % 2).astype(float)
    k = round(fraction * n)
    if 0 < fraction < 1 and 0 < k < n:
        parts = lib.random_split(X, y, train_fraction=fraction)
        assert len(parts[0]) == k
    else:
        with pytest.raises(ValueError, match="train_fraction"):
            lib.random_split(X, y, train_fraction=fraction)
