"""Inputs are checked once, at the entry point a chapter or a user calls (issue 39): following
the training inputs from ``hyper.grid.reference_rows`` down to the scores, lib's checks
(``lib/_validate.py``) see an array of the training set's rows once per array the caller passed,
and the logistic function inside Newton's loop checks nothing."""
import sys
from pathlib import Path

import numpy as np
import pytest

import lib
from lib import _validate
from lib.hyper import grid

VALIDATE = str(Path(_validate.__file__).resolve())


def _checks_of_training_rows(call, n_rows):
    """How many times a function of lib/_validate.py is entered from outside it with a 2-D array
    of ``n_rows`` rows (the training inputs or a design built from them) among its arguments."""
    seen = []

    def profile(frame, event, arg):
        if event != "call" or frame.f_code.co_filename != VALIDATE:
            return
        if frame.f_back is not None and frame.f_back.f_code.co_filename == VALIDATE:
            return                                   # a check calling a check: counted once
        for value in frame.f_locals.values():
            if isinstance(value, np.ndarray) and value.ndim == 2 and value.shape[0] == n_rows:
                seen.append(frame.f_code.co_name)
                return

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


@pytest.fixture(scope="module")
def split():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    return X[:40], y[:40], X[40:], y[40:]


def test_a_grid_walk_checks_the_training_inputs_once(split):
    X_train, y_train, X_test, y_test = split
    seen = _checks_of_training_rows(
        lambda: grid.reference_rows(X_train, y_train, X_test, y_test, [0.5, 1.0, 2.0], 0.7),
        n_rows=X_train.shape[0])
    # X_train enters once (as_train_test), whatever the number of grid points
    assert seen == ["as_train_test"], seen


def test_a_chapter_call_chain_checks_each_argument_once(split):
    X_train, y_train, X_test, y_test = split
    Phi = lib.rbf_features(X_train, X_train, 0.7)
    Phi_test = lib.rbf_features(X_test, X_train, 0.7)
    post = lib.fit_laplace(Phi, y_train, 1.0)
    seen = _checks_of_training_rows(
        lambda: (lib.score_split(post, Phi, y_train), lib.score_split(post, Phi_test, y_test)),
        n_rows=X_train.shape[0])
    assert seen == ["as_design_labels"], seen     # the training design, once (Phi_test: 20 rows)


def test_newtons_loop_checks_nothing(split):
    X_train, y_train, _, _ = split
    Phi = lib.rbf_features(X_train, X_train, 0.7)
    seen = []

    def profile(frame, event, arg):
        if (event == "call" and frame.f_code.co_filename == VALIDATE
                and frame.f_back.f_code.co_filename != VALIDATE):
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        post = lib.fit_laplace(Phi, y_train, 1.0)
    finally:
        sys.setprofile(None)
    assert post.n_iter > 2
    # the entry point's checks only (Phi, y, s2, tol, max_iter), none repeated per iteration
    assert seen == ["as_design_labels", "positive_scalar", "positive_scalar",
                    "positive_int"], seen
