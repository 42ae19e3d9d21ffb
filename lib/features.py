"""Feature maps (book chapter "The data"; report appendix A.2.3, whose equations are unnumbered).

The linear map is ``phi(x) = [x, 1]``; the radial-basis map puts one Gaussian bump on each
centre ``c_m`` (the training inputs) and appends a constant bias feature::

    phi_m(x) = exp(-|x - c_m|^2 / (2 l^2)),  m = 1..M-1,   phi_M(x) = 1.

``l`` is a *width* (a length scale), not the "variance" the report calls it.
"""
from __future__ import annotations

import numpy as np

from lib._validate import as_design, as_matrix
from lib._validate import width as check_width

#: RBF values below this (about the square root of the smallest normal double) are set to 0.
#: They are far below rounding against any O(1) term, but they and their products are
#: subnormal numbers, which slow every matrix product on them 10-20 times.
FLUSH_BELOW = 1e-150
_EXP_FLOOR = float(np.log(FLUSH_BELOW)) - 10.0


def add_bias(Phi) -> np.ndarray:
    """``Phi`` (N, M) with a column of ones appended, shape (N, M + 1)."""
    Phi = as_matrix(Phi, "Phi")
    return np.hstack([Phi, np.ones((Phi.shape[0], 1))])


def linear_features(X) -> np.ndarray:
    """Linear design ``[x, 1]`` of the inputs ``X`` (N, D), shape (N, D + 1)."""
    return add_bias(as_design(X, "X"))


def squared_distances(X, centres) -> np.ndarray:
    """Squared Euclidean distances ``|x_n - c_m|^2`` (clipped at zero) between the rows of
    ``X`` (N, D) and of ``centres`` (C, D), shape (N, C)."""
    return _squared_distances(*_inputs_and_centres(X, centres))


def _inputs_and_centres(X, centres):
    """``X`` and ``centres`` checked: designs with the same number of columns."""
    X = as_design(X, "X")
    centres = as_design(centres, "centres")
    if centres.shape[1] != X.shape[1]:
        raise ValueError(
            f"centres must have the same number of columns as X ({X.shape[1]}), got shape {centres.shape}"
        )
    return X, centres


def _squared_distances(X, centres) -> np.ndarray:
    """:func:`squared_distances` on checked inputs (no checks)."""
    d2 = (X**2).sum(1)[:, None] + (centres**2).sum(1)[None, :] - 2.0 * X @ centres.T
    return np.maximum(d2, 0.0)


def rbf_features(X, centres, width) -> np.ndarray:
    """Gaussian radial-basis design with a bias column (the ``phi_m`` of the module docstring).

    ``X`` (N, D) are the inputs, ``centres`` (C, D) the centres of the basis functions (the
    book uses the training inputs), ``width`` the length scale ``l > 0`` in
    ``exp(-|x - c|^2 / (2 l^2))``. Returns (N, C + 1), the last column the bias (all ones);
    values below :data:`FLUSH_BELOW` are 0."""
    width = check_width(width, "width")
    return _rbf_features(*_inputs_and_centres(X, centres), width)


def _rbf_features(X, centres, width) -> np.ndarray:
    """:func:`rbf_features` on checked inputs (no checks)."""
    d2 = _squared_distances(X, centres)
    Phi = np.ones((d2.shape[0], d2.shape[1] + 1))     # last column: the bias
    Phi[:, :-1] = rbf_from_squared_distances(d2, width)
    return Phi


def rbf_from_squared_distances(d2, width) -> np.ndarray:
    """The RBF block ``exp(-d2 / (2 l^2))``, values below :data:`FLUSH_BELOW` set to 0 (no checks).

    The one definition of the basis functions ``phi_m`` (without the bias column), shared by
    :func:`rbf_features`, :mod:`lib.hyper.gradient` and :mod:`lib.fastgrid`, called on squared
    distances ``d2`` (N, C) from :func:`squared_distances` and a checked width ``l``; shape (N, C).
    """
    with np.errstate(over="ignore"):    # d2 / l^2 = inf (far from a tiny-width centre): exp = 0
        exponent = -d2 / (2.0 * width**2)
    # Clip below log(FLUSH_BELOW) (exp stays normal, and is flushed next): an exp whose result
    # is subnormal (exponent below about -708) is 30 times slower.
    np.maximum(exponent, _EXP_FLOOR, out=exponent)
    np.exp(exponent, out=exponent)
    exponent[exponent < FLUSH_BELOW] = 0.0             # no subnormals (see FLUSH_BELOW)
    return exponent
