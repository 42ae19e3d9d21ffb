"""Unit tests of lib.evaluate (evidence terms, the report's evidence forms, BIC, scores)."""
import numpy as np
import pytest
from scipy.special import expit

import lib
from lib.evaluate import (
    SplitScores,
    bic,
    decision_crosstab,
    effective_parameters,
    evaluate,
    evidence_terms,
    report_evidence_forms,
    score_posterior,
    score_split,
)


@pytest.fixture
def fitted(small_problem):
    post = lib.fit_laplace(small_problem["Phi"], small_problem["y"], 2.0)
    return post, small_problem


# ------------------------------------------------------------------ evidence_terms, bic


@pytest.mark.parametrize("s2", [0.3, 1.0, 5.0])
def test_evidence_terms_sum_to_log_evidence(small_problem, s2):
    post = lib.fit_laplace(small_problem["Phi"], small_problem["y"], s2)
    t = evidence_terms(post)
    assert set(t) == {"log_likelihood", "prior_quadratic", "prior_normaliser", "occam_log_det", "log_evidence"}
    parts = t["log_likelihood"] + t["prior_quadratic"] + t["prior_normaliser"] + t["occam_log_det"]
    assert t["log_evidence"] == pytest.approx(parts, abs=1e-12)
    assert t["log_evidence"] == pytest.approx(post.log_evidence, abs=1e-9)


def test_evidence_terms_independent_values(fitted):
    post, prob = fitted
    Phi, y = prob["Phi"], prob["y"]
    M = Phi.shape[1]
    t = evidence_terms(post)
    p = expit(Phi @ post.w_map)
    assert t["log_likelihood"] == pytest.approx(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)), rel=1e-10)
    assert t["prior_quadratic"] == pytest.approx(-post.w_map @ post.w_map / 4.0, rel=1e-12)
    assert t["prior_normaliser"] == pytest.approx(-M / 2 * np.log(2.0), rel=1e-12)
    sign, logdet = np.linalg.slogdet(lib.precision_matrix(post.w_map, Phi, 2.0))
    assert sign == 1
    assert t["occam_log_det"] == pytest.approx(-logdet / 2, rel=1e-10)


def test_prior_normaliser_is_zero_at_unit_variance(small_problem):
    post = lib.fit_laplace(small_problem["Phi"], small_problem["y"], 1.0)
    assert evidence_terms(post)["prior_normaliser"] == 0.0


@pytest.mark.parametrize("s2", [0.3, 1.0, 5.0])
def test_report_evidence_forms(small_problem, s2):
    Phi, y = small_problem["Phi"], small_problem["y"]
    post = lib.fit_laplace(Phi, y, s2)
    forms = report_evidence_forms(post)
    assert list(forms) == ["eq6", "listing2", "laplace"]
    M = Phi.shape[1]
    _, logdet = np.linalg.slogdet(lib.precision_matrix(post.w_map, Phi, s2))
    L = lib.log_likelihood(post.w_map, Phi, y)
    quad = post.w_map @ post.w_map / (2 * s2)
    # eq. 6: L(w) + (1/2) log|A^{-1}|
    assert forms["eq6"] == pytest.approx(L - logdet / 2, rel=1e-10)
    # listing 2 with posterior = -Psi: Psi(w) - (1/2) log|A|
    assert forms["listing2"] == pytest.approx(L - quad - logdet / 2, rel=1e-10)
    assert forms["laplace"] == pytest.approx(post.log_evidence, abs=1e-12)
    # the full form differs from listing 2 by the prior normaliser alone
    assert forms["laplace"] - forms["listing2"] == pytest.approx(-M / 2 * np.log(s2), abs=1e-9)


def test_full_laplace_evidence_is_never_positive(small_problem):
    # Occam term -(1/2) log|I + s2 Phi^T W Phi| <= 0, so log Z <= Psi(w_MAP) <= L(w_MAP) <= 0
    for s2 in (0.1, 1.0, 100.0):
        post = lib.fit_laplace(small_problem["Phi"], small_problem["y"], s2)
        assert post.log_evidence <= post.log_likelihood <= 0


def test_report_evidence_forms_needs_a_posterior():
    with pytest.raises(TypeError, match="posterior must be a LaplacePosterior"):
        report_evidence_forms(np.eye(3))


def test_bic_formula(fitted):
    post, prob = fitted
    N, M = prob["Phi"].shape
    assert bic(post, N) == pytest.approx(post.log_likelihood - M / 2 * np.log(N), rel=1e-12)
    assert bic(post, np.int64(N)) == bic(post, N)


def test_bic_decreases_with_n(fitted):
    post, _ = fitted
    assert bic(post, 100) > bic(post, 1000)


@pytest.mark.parametrize("bad, err, match", [(0, ValueError, "n_data"), (-3, ValueError, "n_data"),
                                             (2.5, TypeError, "n_data"), (True, TypeError, "n_data")])
def test_bic_bad_n(fitted, bad, err, match):
    with pytest.raises(err, match=match):
        bic(fitted[0], bad)


@pytest.mark.parametrize("func", [evidence_terms, lambda p: bic(p, 10)])
def test_evidence_needs_a_posterior(func):
    with pytest.raises(TypeError, match="posterior must be a LaplacePosterior"):
        func({"w_map": np.zeros(3)})


# ------------------------------------------------------------------ decision_crosstab


def test_crosstab_identity_and_mixed():
    p = np.array([0.1, 0.9, 0.7, 0.2])
    np.testing.assert_array_equal(decision_crosstab(p, p), np.eye(2))
    q = np.array([0.6, 0.9, 0.3, 0.2])   # row 0: (0->1, 0->0); row 1: (1->1, 1->0)
    np.testing.assert_allclose(decision_crosstab(p, q), [[0.5, 0.5], [0.5, 0.5]])


def test_crosstab_absent_decision_gives_nan_row():
    C = decision_crosstab([0.9, 0.8], [0.9, 0.1])
    assert np.all(np.isnan(C[0]))
    np.testing.assert_allclose(C[1], [0.5, 0.5])


@pytest.mark.parametrize("p_row, p_col, err, match", [
    ([0.1, 0.2], [0.1], ValueError, "p_col must have length 2"),
    ([0.1, 1.2], [0.1, 0.2], ValueError, "p_row must hold probabilities"),
    ([0.1, 0.2], [-0.1, 0.2], ValueError, "p_col must hold probabilities"),
    ([[0.1, 0.2]], [0.1, 0.2], ValueError, "p_row must be a 1-D array"),
    (["a", "b"], [0.1, 0.2], TypeError, "p_row must be a numeric array"),
    ([0.1, np.nan], [0.1, 0.2], ValueError, "p_row must contain only finite"),
])
def test_crosstab_bad_input(p_row, p_col, err, match):
    with pytest.raises(err, match=match):
        decision_crosstab(p_row, p_col)


# ------------------------------------------------------------------ score_split, score_posterior


def test_score_split_against_direct_computation(fitted):
    post, prob = fitted
    Phi, y = prob["Phi_test"], prob["y_test"]
    s = score_split(post, Phi, y)
    assert isinstance(s, SplitScores)
    p_map = expit(Phi @ post.w_map)
    mu, var = lib.activation_moments(post, Phi)
    p_pred = expit(mu / np.sqrt(1 + np.pi * var / 8))
    ll = lambda p: np.mean(y * np.log(p) + (1 - y) * np.log1p(-p))  # noqa: E731
    assert s.ll_map == pytest.approx(ll(p_map), rel=1e-10)
    assert s.ll_pred == pytest.approx(ll(p_pred), rel=1e-10)
    assert s.accuracy_map == pytest.approx(np.mean((p_map > 0.5) == y))
    assert s.accuracy_pred == s.accuracy_map          # kappa > 0 keeps the sign of mu_a
    np.testing.assert_allclose(s.confusion_map, lib.confusion_matrix(p_map, y))
    np.testing.assert_allclose(s.confusion_pred, lib.confusion_matrix(p_pred, y))
    np.testing.assert_array_equal(s.agreement, np.eye(2))
    # the predictive is less confident than the plug-in MAP
    assert np.all(np.abs(p_pred - 0.5) <= np.abs(p_map - 0.5) + 1e-15)


def test_score_posterior_keys_and_values(fitted):
    post, prob = fitted
    out = score_posterior(post, prob["Phi"], prob["y"], prob["Phi_test"], prob["y_test"])
    assert list(out) == ["log_evidence", "train_accuracy", "test_accuracy", "train_ll_map",
                         "test_ll_map", "train_ll_pred", "test_ll_pred"]
    assert all(type(v) is float for v in out.values())
    tr = score_split(post, prob["Phi"], prob["y"])
    te = score_split(post, prob["Phi_test"], prob["y_test"])
    assert out["log_evidence"] == post.log_evidence
    assert (out["train_accuracy"], out["test_accuracy"]) == (tr.accuracy_map, te.accuracy_map)
    assert (out["train_ll_map"], out["test_ll_pred"]) == (tr.ll_map, te.ll_pred)
    # MAP is fitted to the training labels: it scores better there than the moderated predictive
    assert out["train_ll_map"] > out["train_ll_pred"]


def test_score_split_bad_input(fitted):
    post, prob = fitted
    Phi, y = prob["Phi_test"], prob["y_test"]
    with pytest.raises(TypeError, match="posterior must be a LaplacePosterior"):
        score_split("not a posterior", Phi, y)
    with pytest.raises(ValueError, match="Phi must have 41 columns"):
        score_split(post, Phi[:, :-1], y)
    with pytest.raises(ValueError, match="y must have length 30"):
        score_split(post, Phi, y[:-1])
    with pytest.raises(ValueError, match="y must contain only the labels 0 and 1"):
        score_split(post, Phi, np.where(y == 1, 2, 0))
    with pytest.raises(ValueError, match="y_test|y must have length"):
        score_posterior(post, prob["Phi"], prob["y"], Phi, y[:5])
    with pytest.raises(TypeError, match="posterior must be a LaplacePosterior"):
        score_posterior(None, prob["Phi"], prob["y"], Phi, y)


def test_evaluate_is_a_deprecated_alias_of_score_posterior(fitted):
    post, prob = fitted
    assert evaluate is score_posterior
    args = (post, prob["Phi"], prob["y"], prob["Phi_test"], prob["y_test"])
    assert evaluate(*args) == score_posterior(*args)


# ------------------------------------------------------------------ effective_parameters


@pytest.mark.parametrize("s2", [0.1, 1.0, 10.0])
def test_effective_parameters_eigenvalue_formula(small_problem, s2):
    Phi, y = small_problem["Phi"], small_problem["y"]
    post = lib.fit_laplace(Phi, y, s2)
    p = expit(Phi @ post.w_map)
    lam = np.linalg.eigvalsh((Phi.T * (p * (1 - p))) @ Phi)
    gamma = effective_parameters(post)
    assert gamma == pytest.approx(np.sum(lam / (lam + 1 / s2)), rel=1e-9)
    assert 0 < gamma < Phi.shape[1]


def test_effective_parameters_limits(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    # a design with no information: the precision is the prior's, gamma = 0
    post0 = lib.fit_laplace(np.zeros((5, 3)), np.array([0, 1, 0, 1, 1]), 2.0)
    assert effective_parameters(post0) == pytest.approx(0.0, abs=1e-12)
    # more prior variance, more weights left to the data
    assert effective_parameters(lib.fit_laplace(Phi, y, 10.0)) > effective_parameters(lib.fit_laplace(Phi, y, 0.1))


def test_effective_parameters_needs_a_posterior():
    with pytest.raises(TypeError, match="posterior must be a LaplacePosterior"):
        effective_parameters(np.eye(3))
