"""Unit tests of lib.scores and of the Laplace posterior's evidence terms."""
import numpy as np
import pytest
from scipy.special import expit

import lib
from lib.scores import SplitScores, _score_posterior, effective_parameters, score_split


@pytest.fixture
def fitted(small_problem):
    post = lib.fit_laplace(small_problem["Phi"], small_problem["y"], 2.0)
    return post, small_problem


def _logdet_precision(post, Phi):
    """``log|A|`` of ``A = I / s2 + Phi^T W Phi`` built from its definition (no lib)."""
    p = expit(Phi @ post.w_map)
    A = np.eye(Phi.shape[1]) / post.s2 + (Phi.T * (p * (1 - p))) @ Phi
    sign, logdet = np.linalg.slogdet(A)
    assert sign == 1
    return logdet


# ------------------------------------------------------------------ evidence_terms


@pytest.mark.parametrize("s2", [0.3, 2.0])
def test_evidence_terms_independent_values(small_problem, s2):
    Phi, y = small_problem["Phi"], small_problem["y"]
    post = lib.fit_laplace(Phi, y, s2)
    M = Phi.shape[1]
    t = post.evidence_terms
    assert list(t) == ["log_likelihood", "prior_quadratic", "prior_normaliser", "occam_log_det"]
    p = expit(Phi @ post.w_map)
    assert t["log_likelihood"] == pytest.approx(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)), rel=1e-10)
    assert t["prior_quadratic"] == pytest.approx(-post.w_map @ post.w_map / (2 * s2), rel=1e-12)
    assert t["prior_normaliser"] == pytest.approx(-M / 2 * np.log(s2), rel=1e-12)
    assert t["occam_log_det"] == pytest.approx(-_logdet_precision(post, Phi) / 2, rel=1e-10)
    assert sum(t.values()) == pytest.approx(post.log_evidence, rel=1e-12)


def test_full_laplace_evidence_is_never_positive(small_problem):
    # Occam term -(1/2) log|I + s2 Phi^T W Phi| <= 0, so log Z <= Psi(w_MAP) <= L(w_MAP) <= 0
    for s2 in (0.1, 1.0, 100.0):
        post = lib.fit_laplace(small_problem["Phi"], small_problem["y"], s2)
        assert post.log_evidence <= post.log_likelihood <= 0


# ------------------------------------------------------------------ score_split, the grid's rows


def _direct_scores(post, Phi, y):
    """MAP and probit-predictive probabilities and scores written out (no lib scoring)."""
    mu = Phi @ post.w_map
    var = np.einsum("nm,mk,nk->n", Phi, np.linalg.inv(post.chol @ post.chol.T), Phi)
    p_map, p_pred = expit(mu), expit(mu / np.sqrt(1 + np.pi * var / 8))
    ll = lambda p: np.mean(y * np.log(p) + (1 - y) * np.log1p(-p))  # noqa: E731
    scores = {"accuracy": np.mean((p_map > 0.5) == y), "ll_map": ll(p_map), "ll_pred": ll(p_pred)}
    return p_map, p_pred, scores


def _confusion(p, y):
    yhat = p > 0.5
    return np.array([[np.mean(~yhat[y == c]), np.mean(yhat[y == c])] for c in (0, 1)])


def test_score_split_against_direct_computation(fitted):
    post, prob = fitted
    Phi, y = prob["Phi_test"], prob["y_test"]
    s = score_split(post, Phi, y)
    assert isinstance(s, SplitScores)
    p_map, p_pred, direct = _direct_scores(post, Phi, y)
    assert s.ll_map == pytest.approx(direct["ll_map"], rel=1e-10)
    assert s.ll_pred == pytest.approx(direct["ll_pred"], rel=1e-10)
    assert s.accuracy_map == pytest.approx(direct["accuracy"])
    assert s.accuracy_pred == pytest.approx(np.mean((p_pred > 0.5) == y))
    np.testing.assert_allclose(s.confusion_map, _confusion(p_map, y))
    np.testing.assert_allclose(s.confusion_pred, _confusion(p_pred, y))
    np.testing.assert_array_equal(s.agreement, np.eye(2))
    # the predictive is less confident than the plug-in MAP
    assert np.all(np.abs(p_pred - 0.5) <= np.abs(p_map - 0.5) + 1e-15)


def test_grid_row_scores_keys_and_values(fitted):
    # the grid's rows (lib.hyper.grid): score_split on both sets, and the log evidence
    post, prob = fitted
    out = _score_posterior(post, prob["Phi"], prob["y"], prob["Phi_test"], prob["y_test"])
    assert list(out) == ["log_evidence", "train_accuracy", "test_accuracy", "train_ll_map",
                         "test_ll_map", "train_ll_pred", "test_ll_pred"]
    assert all(type(v) is float for v in out.values())
    assert out["log_evidence"] == post.log_evidence
    for split in ("train", "test"):
        Phi, y = (prob["Phi"], prob["y"]) if split == "train" else (prob["Phi_test"], prob["y_test"])
        for key, value in _direct_scores(post, Phi, y)[2].items():
            assert out[f"{split}_{key}"] == pytest.approx(value, rel=1e-10), (split, key)
    # MAP is fitted to the training labels: it scores better there than the moderated predictive
    assert out["train_ll_map"] > out["train_ll_pred"]


# ------------------------------------------------------------------ effective_parameters


@pytest.mark.parametrize("s2", [0.1, 1.0, 10.0])
def test_effective_parameters_eigenvalue_formula(small_problem, s2):
    Phi, y = small_problem["Phi"], small_problem["y"]
    post = lib.fit_laplace(Phi, y, s2)
    p = expit(Phi @ post.w_map)
    W = p * (1 - p)
    nu = np.linalg.eigvalsh((Phi.T * W) @ Phi)
    gamma = effective_parameters(post)
    assert gamma == pytest.approx(np.sum(nu / (nu + 1 / s2)), rel=1e-9)
    # = sum_n W_nn h_n, h_n = phi_n^T A^{-1} phi_n (book eq. eo-mackay; lib.hyper.gradient's form)
    h = np.einsum("nm,mk,nk->n", Phi, np.linalg.inv(post.chol @ post.chol.T), Phi)
    assert gamma == pytest.approx(W @ h, rel=1e-9)
    assert 0 < gamma < Phi.shape[1]


def test_effective_parameters_limits(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    # a design with no information: the precision is the prior's, gamma = 0
    post0 = lib.fit_laplace(np.zeros((5, 3)), np.array([0, 1, 0, 1, 1]), 2.0)
    assert effective_parameters(post0) == pytest.approx(0.0, abs=1e-12)
    # more prior variance, more weights left to the data
    assert effective_parameters(lib.fit_laplace(Phi, y, 10.0)) > effective_parameters(lib.fit_laplace(Phi, y, 0.1))


# ------------------------------------------------------------------ bad input: one table


def _post():
    X, y = np.array([[0.0], [1.0], [2.0]]), np.array([0.0, 1.0, 1.0])
    return lib.fit_laplace(lib.linear_features(X), y, 1.0), lib.linear_features(X), y


BAD_INPUT = [
    pytest.param(lambda P, Phi, y: effective_parameters(np.eye(3)), TypeError, "posterior must be a LaplacePosterior",
                 id="posterior-effective_parameters"),
    pytest.param(lambda P, Phi, y: score_split("post", Phi, y), TypeError, "posterior must be a LaplacePosterior",
                 id="posterior-score_split"),
    pytest.param(lambda P, Phi, y: score_split(P, Phi[:, :-1], y), ValueError, "Phi must have 2 columns",
                 id="Phi"),
    pytest.param(lambda P, Phi, y: score_split(P, Phi, y[:-1]), ValueError, "y must have length 3", id="y-length"),
    pytest.param(lambda P, Phi, y: score_split(P, Phi, 2 * y), ValueError, "y must contain only the labels 0 and 1",
                 id="y-labels"),
    pytest.param(lambda P, Phi, y: score_split(P, Phi, y[:2]), ValueError, "y must have length 3", id="y-short"),
    pytest.param(lambda P, Phi, y: score_split(P, Phi * np.nan, y), ValueError, "Phi must contain only finite",
                 id="Phi-nan"),
]


@pytest.mark.parametrize("call, exc, match", BAD_INPUT)
def test_rejects_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call(*_post())
