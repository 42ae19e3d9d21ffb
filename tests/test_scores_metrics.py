import numpy as np
import pytest

import lib
from lib.report.ml_lab import logit_scores
from lib.scores import _activation_scores


def test_accuracy_and_confusion():
    p = np.array([0.9, 0.2, 0.6, 0.4, 0.7])
    y = np.array([1, 0, 0, 1, 1])
    assert lib.accuracy(p, y) == pytest.approx(3 / 5)
    np.testing.assert_allclose(lib.confusion_matrix(p, y), [[1 / 2, 1 / 2], [1 / 3, 2 / 3]])
    np.testing.assert_array_equal(lib.predict_labels(p), [1, 0, 1, 0, 1])
    # a tie, p = 1/2, is decided as 0 (the decision is p > 1/2)
    np.testing.assert_array_equal(lib.predict_labels([0.5, np.nextafter(0.5, 1)]), [0, 1])
    assert lib.accuracy([0.5], [0]) == 1.0


def test_confusion_rows_sum_to_one_and_absent_class_is_nan():
    C = lib.confusion_matrix(np.array([0.2, 0.8]), np.array([1, 1]))
    assert np.all(np.isnan(C[0]))
    np.testing.assert_allclose(C[1], [0.5, 0.5])


BAD_INPUT = [
    pytest.param(lambda: lib.accuracy(np.array([0.1, 2.0]), np.array([0, 1])), ValueError,
                 "p must hold probabilities", id="p-range"),
    pytest.param(lambda: lib.confusion_matrix(np.array([[0.1, 0.2]]), np.array([0, 1])), ValueError,
                 "p must be a 1-D array", id="p-shape"),
    pytest.param(lambda: lib.accuracy(np.array([0.1, 0.2]), np.array([0, 1, 1])), ValueError,
                 "y must have length 2", id="y-length"),
    pytest.param(lambda: lib.confusion_matrix(np.array([0.1, 0.2]), np.array([0, 3])), ValueError,
                 "only the labels 0 and 1", id="y-labels"),
    pytest.param(lambda: lib.predict_labels(["a", "b"]), TypeError, "p must be a numeric array",
                 id="p-dtype"),
    pytest.param(lambda: lib.predict_labels([0.1, np.nan]), ValueError, "p must contain only finite",
                 id="p-nan"),
    pytest.param(lambda: lib.confusion_matrix([0.1, 0.2], [0.1]), ValueError, "y must have length 2",
                 id="y-length-confusion"),
    pytest.param(lambda: logit_scores(np.zeros(5), np.zeros(3)), ValueError,
                 "y must have length 5", id="y-logit_scores"),
    pytest.param(lambda: logit_scores(np.array(["a"]), np.zeros(1)), TypeError,
                 "a must be a numeric array", id="a"),
]


@pytest.mark.parametrize("call, exc, match", BAD_INPUT)
def test_rejects_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_logit_scores_agree_with_the_separate_metrics():
    a = np.array([3.0, -1.0, 0.4, -0.2, 50.0])
    y = np.array([1, 0, 0, 1, 1])
    ll, acc, conf = logit_scores(a, y)
    assert ll == pytest.approx(lib.average_log_likelihood_logits(a, y))
    assert acc == pytest.approx(lib.accuracy(lib.sigmoid(a), y)) == pytest.approx(3 / 5)
    np.testing.assert_allclose(conf, lib.confusion_matrix(lib.sigmoid(a), y))


def test_the_grid_engines_scores_from_the_moments():
    mu = np.array([3.0, -1.0, 0.4, -0.2, 800.0, 0.0])
    var = np.array([0.0, 2.0, 8.0 / np.pi, 1.0, 1e6, 1.0])
    y = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    scores = _activation_scores(mu, var, y)
    rho = 1.0 / np.sqrt(1.0 + np.pi * var / 8.0)
    assert scores["accuracy"] == 4 / 6                  # mu = 0 (s = 1/2) is decided as 0
    # by hand, from the probabilities of the observed labels (s(800) = 1: a zero term)
    p = lib.sigmoid(mu)
    assert scores["ll_map"] == pytest.approx(np.mean(np.log(np.where(y == 1, p, 1 - p))))
    q = lib.sigmoid(rho * mu)
    assert scores["ll_pred"] == pytest.approx(np.mean(np.log(np.where(y == 1, q, 1 - q))))
    assert scores["ll_pred"] != scores["ll_map"]


def test_the_grid_engines_scores_are_score_splits(small_problem):
    # lib.fastgrid's unchecked scores of the moments are the one scorer's, for a logistic fit
    post = lib.fit_laplace(small_problem["Phi"], small_problem["y"], 1.0)
    Phi, y = small_problem["Phi_test"], small_problem["y_test"]
    scores = _activation_scores(*lib.activation_moments(post, Phi), np.asarray(y, dtype=float))
    split = lib.score_split(post, Phi, y)
    assert scores == {"accuracy": split.accuracy_map, "ll_map": split.ll_map, "ll_pred": split.ll_pred}


def test_a_crosstab_of_decisions_is_a_confusion_matrix():
    # the decisions of one classifier taken as the other's labels (report table 4)
    p = np.array([0.1, 0.9, 0.7, 0.2])
    np.testing.assert_array_equal(lib.confusion_matrix(p, lib.predict_labels(p)), np.eye(2))
    q = np.array([0.6, 0.9, 0.3, 0.2])   # row 0: (0->1, 0->0); row 1: (1->1, 1->0)
    np.testing.assert_allclose(lib.confusion_matrix(q, lib.predict_labels(p)), [[0.5, 0.5], [0.5, 0.5]])
    r = np.array([0.6, 0.9, 0.8, 0.7])   # row 0: (0->1, 0->1); row 1: (1->1, 1->1)
    np.testing.assert_allclose(lib.confusion_matrix(r, lib.predict_labels(p)), [[0.0, 1.0], [0.0, 1.0]])
    # a decision the first never takes gives a row of NaN
    C = lib.confusion_matrix([0.9, 0.1], lib.predict_labels([0.9, 0.8]))
    assert np.all(np.isnan(C[0]))
    np.testing.assert_allclose(C[1], [0.5, 0.5])
