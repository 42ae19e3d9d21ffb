"""A discriminant function: least squares on one-hot targets (a label, no probability).

The notes' first approach to classification {cite}`notesch7` learns a function
``f(x) in {1, ..., K}`` that assigns a class without a probability. The simplest linear one is
least squares for classification {cite}`bishop2006prml` (section 4.1.3; chapters/softmax.ipynb,
eq. ``gen-lsq``): regress the one-hot labels ``Y`` (N, K) on the inputs with a bias,
``W~ = argmin ||X~ W~ - Y||^2`` with ``X~ = [1, X]`` (N, D + 1), and assign each input to the
class with the largest output ``y_k(x) = W~^T (1, x)``. The outputs sum to 1 at every ``x``
but are not probabilities: nothing keeps them in [0, 1].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib import _validate
from lib.models.softmax import one_hot

__all__ = ["LeastSquaresDiscriminant", "fit_least_squares", "outputs", "predict"]


@dataclass(frozen=True)
class LeastSquaresDiscriminant:
    """Least-squares weights ``W~``, shape (D + 1, K): row 0 the biases, rows 1.. the inputs'."""

    W: np.ndarray

    @property
    def K(self) -> int:
        """The number of classes."""
        return self.W.shape[1]

    @property
    def D(self) -> int:
        """The input dimension."""
        return self.W.shape[0] - 1


def _augment(X) -> np.ndarray:
    return np.column_stack([np.ones(X.shape[0]), X])


def fit_least_squares(X, y) -> LeastSquaresDiscriminant:
    """Least squares on one-hot targets, ``W~ = X~^+ Y`` (minimum-norm if rank deficient).

    Parameters
    ----------
    X : array_like, shape (N, D)
        Inputs (the bias column is added here).
    y : array_like of int, shape (N,)
        Labels 0..K-1 (checked by :func:`lib.models.softmax.one_hot`); every class must occur.

    Returns
    -------
    LeastSquaresDiscriminant
    """
    X = _validate.as_matrix(X, "X")
    Y = one_hot(y, length=X.shape[0])
    missing = np.flatnonzero(Y.sum(axis=0) == 0)
    if missing.size:
        raise ValueError(f"y has no points of class {missing[0]} (labels must be 0..K-1, each "
                         "present)")
    W, *_ = np.linalg.lstsq(_augment(X), Y, rcond=None)
    return LeastSquaresDiscriminant(W=W)


def outputs(model: LeastSquaresDiscriminant, X) -> np.ndarray:
    """The linear outputs ``y_k(x_n) = W~^T (1, x_n)``, shape (N, K): scores, not probabilities."""
    X = _validate.as_matrix(X, "X", n_cols=model.D)
    return _augment(X) @ model.W


def predict(model: LeastSquaresDiscriminant, X) -> np.ndarray:
    """The discriminant ``f(x_n) = argmax_k y_k(x_n)``, integer labels 0..K-1 of shape (N,)."""
    return np.argmax(outputs(model, X), axis=1)
