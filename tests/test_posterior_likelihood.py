"""A fitted posterior knows its likelihood, and every function that scores it uses that
likelihood's link (issue 39): a probit fit is never scored with logistic numbers."""
import numpy as np
import pytest

import lib
from lib.models import probit
from lib.scores import _score_posterior


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] + 0.7 * X[:, 1] + 0.8 * rng.normal(size=80) > 0).astype(int)
    Phi = lib.rbf_features(X, X[:40], width=1.0)
    return Phi[:40], y[:40], Phi[40:], y[40:]


@pytest.fixture(scope="module")
def fits(problem):
    Phi, y, _, _ = problem
    return {lik.name: lib.fit_laplace(Phi, y, s2=2.0, likelihood=lik)
            for lik in (lib.likelihood.LOGISTIC, probit.PROBIT)}


def test_a_posterior_carries_its_likelihood(fits):
    assert fits["logistic"].likelihood is lib.likelihood.LOGISTIC
    assert fits["probit"].likelihood is probit.PROBIT


def _probit_expected(post, Phi):
    mu, var = lib.activation_moments(post, Phi)
    return probit.proba(mu), probit.predictive_proba(mu, var)


def test_probabilities_use_the_fitted_link(fits, problem):
    _, _, Phi_test, _ = problem
    post = fits["probit"]
    p_map, p_pred = _probit_expected(post, Phi_test)
    np.testing.assert_allclose(lib.map_proba(post, Phi_test), p_map, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(lib.predictive_proba(post, Phi_test), p_pred, rtol=1e-12, atol=1e-15)
    # and they are not the logistic numbers for the same activations
    mu, var = lib.activation_moments(post, Phi_test)
    assert np.max(np.abs(lib.predictive_proba(post, Phi_test)
                         - lib.sigmoid(mu / np.sqrt(1 + np.pi * var / 8)))) > 1e-3


def test_logistic_probabilities_are_unchanged(fits, problem):
    _, _, Phi_test, _ = problem
    post = fits["logistic"]
    mu, var = lib.activation_moments(post, Phi_test)
    np.testing.assert_array_equal(lib.map_proba(post, Phi_test), lib.sigmoid(mu))
    np.testing.assert_array_equal(lib.predictive_proba(post, Phi_test),
                                  lib.sigmoid(mu / np.sqrt(1 + np.pi * var / 8)))


def _avg_ll(p, y):
    return float(np.mean(np.where(y == 1, np.log(p), np.log1p(-p))))


def test_score_split_and_the_grid_rows_use_the_fitted_link(fits, problem):
    Phi, y, Phi_test, y_test = problem
    post = fits["probit"]
    p_map, p_pred = _probit_expected(post, Phi_test)
    split = lib.score_split(post, Phi_test, y_test)
    assert split.ll_map == pytest.approx(_avg_ll(p_map, y_test), rel=1e-10)
    assert split.ll_pred == pytest.approx(_avg_ll(p_pred, y_test), rel=1e-10)
    assert split.accuracy_map == pytest.approx(np.mean((p_map > 0.5) == (y_test == 1)))
    scores = _score_posterior(post, Phi, y, Phi_test, y_test)     # the grid's rows
    assert scores["test_ll_pred"] == pytest.approx(_avg_ll(p_pred, y_test), rel=1e-10)
    assert scores["test_ll_map"] == pytest.approx(_avg_ll(p_map, y_test), rel=1e-10)
    train_map, train_pred = _probit_expected(post, Phi)
    assert scores["train_ll_pred"] == pytest.approx(_avg_ll(train_pred, y), rel=1e-10)


def test_probit_logits_are_stable_far_out():
    a = np.array([-40.0, -5.0, 0.0, 5.0, 40.0])
    logits = probit.PROBIT.logits(a)
    assert np.all(np.isfinite(logits)) and np.all(np.diff(logits) > 0)
    np.testing.assert_allclose(lib.sigmoid(logits[1:4]), probit.proba(a[1:4]), rtol=1e-12)
