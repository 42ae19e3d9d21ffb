import numpy as np
import pytest

import lib


def test_accuracy_and_confusion():
    p = np.array([0.9, 0.2, 0.6, 0.4, 0.7])
    y = np.array([1, 0, 0, 1, 1])
    assert lib.accuracy(p, y) == pytest.approx(3 / 5)
    np.testing.assert_allclose(lib.confusion_matrix(p, y), [[1 / 2, 1 / 2], [1 / 3, 2 / 3]])
    np.testing.assert_array_equal(lib.predict_labels(p), [1, 0, 1, 0, 1])


def test_confusion_rows_sum_to_one_and_absent_class_is_nan():
    C = lib.confusion_matrix(np.array([0.2, 0.8]), np.array([1, 1]))
    assert np.all(np.isnan(C[0]))
    np.testing.assert_allclose(C[1], [0.5, 0.5])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: lib.accuracy(np.array([0.1, 2.0]), np.array([0, 1])), "p must hold probabilities"),
        (lambda: lib.accuracy(np.array([0.1, 0.2]), np.array([0, 1, 1])), "y must have length 2"),
        (lambda: lib.confusion_matrix(np.array([0.1, 0.2]), np.array([0, 3])), "only the labels 0 and 1"),
        (lambda: lib.confusion_matrix(np.array([[0.1, 0.2]]), np.array([0, 1])), "p must be a 1-D array"),
    ],
)
def test_metric_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_logit_scores_agree_with_the_separate_metrics():
    a = np.array([3.0, -1.0, 0.4, -0.2, 50.0])
    y = np.array([1, 0, 0, 1, 1])
    ll, acc, conf = lib.metrics.logit_scores(a, y)
    assert ll == pytest.approx(lib.average_log_likelihood_logits(a, y))
    assert acc == pytest.approx(lib.accuracy(lib.sigmoid(a), y)) == pytest.approx(3 / 5)
    np.testing.assert_allclose(conf, lib.confusion_matrix(lib.sigmoid(a), y))
    with pytest.raises(ValueError, match="y must have length 5"):
        lib.metrics.logit_scores(a, y[:3])
