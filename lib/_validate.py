"""Input checks shared by every module: each raises with the argument's name and what was expected.

The one place for argument checks in :mod:`lib`: arrays (:func:`as_matrix`, :func:`as_vector`,
:func:`as_labels`, :func:`as_one_hot`, :func:`as_design_labels` (paired inputs, used by
:func:`as_weights_design_labels` and :func:`as_train_test`),
:func:`as_probabilities`, :func:`as_nonnegative`, :func:`real_values`, :func:`kernel`,
:func:`grid_values`, :func:`prior_values`), scalars (:func:`positive_scalar`,
:func:`prior_variance`, :func:`fraction`, :func:`positive_int`, :func:`seed`, :func:`split_size`,
:func:`batch_size`), options (:func:`flag`, :func:`choice`, :func:`instance`) and pairs
(:func:`positive_pair`, :func:`bounds`).
"""
from __future__ import annotations

import numbers

import numpy as np


def _is_numeric(arr: np.ndarray) -> bool:
    return arr.dtype != object and (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool)


def _real_array(value, name: str) -> np.ndarray:
    """``np.asarray(value)``, or a TypeError unless it holds real numbers."""
    arr = np.asarray(value)
    if not _is_numeric(arr):
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got a complex array")
    return arr


def _finite_float(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` as float, or a ValueError naming ``name`` if it holds NaN or inf."""
    arr = arr.astype(float, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return arr


def real_values(value, name: str, *, nonnegative: bool = False) -> np.ndarray:
    """``value`` (any shape) as a float array with no NaN (``inf`` allowed unless
    ``nonnegative``, which also requires finite values ``>= 0``), or raise naming ``name``."""
    arr = _real_array(value, name).astype(float, copy=False)
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not contain NaN")
    if nonnegative and not np.all(np.isfinite(arr) & (arr >= 0)):
        raise ValueError(f"{name} must hold finite non-negative numbers (variances)")
    return arr


def as_matrix(value, name: str, *, n_cols: int | None = None) -> np.ndarray:
    """Return ``value`` as a finite float 2-D array (N, D), with ``n_cols`` columns if given, or
    raise naming ``name`` (the argument's name, as every function here)."""
    arr = _real_array(value, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (N, D), got shape {arr.shape}")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise ValueError(f"{name} must have {n_cols} columns, got shape {arr.shape}")
    if 0 in arr.shape:
        raise ValueError(f"{name} must have at least one row and one column, got shape {arr.shape}")
    return _finite_float(arr, name)


def as_vector(value, name: str, *, length: int | None = None) -> np.ndarray:
    """Return ``value`` as a finite float 1-D array, or raise naming ``name``."""
    arr = _real_array(value, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got length {arr.shape[0]}")
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one value")
    return _finite_float(arr, name)


def as_labels(value, name: str, *, length: int | None = None) -> np.ndarray:
    """Return binary labels as a float 1-D array of 0.0/1.0, or raise naming ``name``."""
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of 0/1 labels, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length} (one label per row), got length {arr.shape[0]}")
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one label")
    if not _is_numeric(arr):
        raise TypeError(f"{name} must hold numeric 0/1 labels, got dtype {arr.dtype}")
    bad = ~np.isin(arr, (0, 1))
    if np.any(bad):
        found = np.unique(arr[bad])[:5]
        raise ValueError(f"{name} must contain only the labels 0 and 1, found {found.tolist()}")
    return arr.astype(float)


def as_class_labels(value, name: str, *, K: int | None = None, length: int | None = None) -> np.ndarray:
    """Return class labels ``0, 1, ..., K-1`` as an int 1-D array, or raise naming ``name``;
    ``K`` defaults to the largest label plus one; ``length``, if given, is the required length."""
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of class labels, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must hold integer class labels 0..K-1, got dtype {arr.dtype}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length} (one label per row), got length {arr.shape[0]}")
    if arr.min() < 0:
        raise ValueError(f"{name} must hold labels 0, 1, ..., K-1, found {int(arr.min())}")
    if K is not None and arr.max() >= K:
        raise ValueError(f"{name} holds label {int(arr.max())} >= K = {K}")
    return arr.astype(int)


def as_one_hot(value, name: str, *, length: int | None = None) -> np.ndarray:
    """Return one-hot targets (N, K): 0/1 entries, exactly one 1 per row, or raise."""
    arr = as_matrix(value, name)
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have {length} rows (one per row of the design), got {arr.shape[0]}")
    if np.any((arr != 0) & (arr != 1)) or np.any(arr.sum(axis=1) != 1):
        raise ValueError(f"{name} must be one-hot: entries 0 or 1, exactly one 1 in each row")
    return arr


#: Largest magnitude of an input or design entry: sums of products of a thousand such values
#: (squared distances, ``Phi^T W Phi``) stay far from overflow.
MAX_INPUT = 1e150


def as_design(value, name: str, *, n_cols: int | None = None) -> np.ndarray:
    """:func:`as_matrix`, with entries of magnitude at most :data:`MAX_INPUT`."""
    arr = as_matrix(value, name, n_cols=n_cols)
    if arr.size and np.max(np.abs(arr)) > MAX_INPUT:
        raise ValueError(f"{name} must hold values of magnitude at most {MAX_INPUT:g} (products "
                         f"and squares of larger ones overflow), got {np.max(np.abs(arr)):.3g}; "
                         "rescale the inputs")
    return arr


def as_design_labels(X, y, names=("X", "y"), *, n_cols: int | None = None):
    """A design or inputs ``X`` (N, D) (:func:`as_design`) and their labels ``y`` (N,) of 0/1,
    checked together and named ``names``: lib's one check of paired inputs."""
    X = as_design(X, names[0], n_cols=n_cols)
    return X, as_labels(y, names[1], length=X.shape[0])


def as_weights_design_labels(w, Phi, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights ``w`` (M,), design ``Phi`` (N, M) and labels ``y`` (N,), checked together."""
    Phi, y = as_design_labels(Phi, y, ("Phi", "y"))
    return as_vector(w, "w", length=Phi.shape[1]), Phi, y


def as_train_test(X_train, y_train, X_test, y_test, x: str = "X"):
    """Training and test inputs and labels checked together, named ``X_train``, ``y_train``, ...
    (``Phi_train``, ... if ``x="Phi"``)."""
    X_train, y_train = as_design_labels(X_train, y_train, (f"{x}_train", "y_train"))
    X_test, y_test = as_design_labels(X_test, y_test, (f"{x}_test", "y_test"),
                                      n_cols=X_train.shape[1])
    return X_train, y_train, X_test, y_test


def chain_values(s2_values, s2_max, name: str = "s2_values") -> np.ndarray:
    """Prior variances in ascending order, none above ``s2_max`` (a grid engine's chain)."""
    arr = prior_values(s2_values, name)
    s2_max = prior_variance(s2_max, "s2_max")
    if not np.array_equal(arr, np.asarray(s2_values, dtype=float)) or arr[-1] > s2_max:
        raise ValueError(f"{name} must be ascending and at most s2_max = {s2_max!r}")
    return arr


def as_probabilities(value, name: str, *, length: int | None = None, what: str = "probabilities") -> np.ndarray:
    """Return ``value`` as a float 1-D array of numbers in ``[0, 1]``, or raise naming ``name``;
    ``what`` names the entries in the message: ``"{name} must hold {what} in [0, 1]"``."""
    arr = as_vector(value, name, length=length)
    if np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"{name} must hold {what} in [0, 1]")
    return arr


def as_nonnegative(value, name: str, *, length: int | None = None) -> np.ndarray:
    """Return ``value`` as a finite float 1-D array of numbers ``>= 0``, or raise naming ``name``."""
    arr = as_vector(value, name, length=length)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative")
    return arr


def grid_values(value, name: str) -> np.ndarray:
    """Return grid values as a sorted float 1-D array of distinct positive numbers, or raise."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be a 1-D array of positive numbers, got a scalar")
    arr = as_vector(arr, name)                         # at least one value
    if np.any(arr <= 0):
        raise ValueError(f"{name} must hold positive numbers, got minimum {arr.min()!r}")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must not contain repeated values")
    return np.sort(arr)


#: Usable prior variances of the hyper-parameter tools: far outside any useful setting, and
#: ``s2 * (Phi^T Phi)`` and ``|w|^2 / s2`` of any design stay far from overflow and underflow.
PRIOR_VARIANCE_RANGE = (1e-100, 1e100)


def prior_variance(value, name: str) -> float:
    """Return a prior variance as a float in :data:`PRIOR_VARIANCE_RANGE`, or raise."""
    lo, hi = PRIOR_VARIANCE_RANGE
    return _real_scalar(value, name, "a positive real number", lambda v: lo <= v <= hi,
                        f"a prior variance in [{lo:g}, {hi:g}]")


def _grid_within(value, name: str, within: tuple[float, float], what: str) -> np.ndarray:
    """Grid values (:func:`grid_values`) inside ``within``, or raise naming ``what`` they are."""
    arr = grid_values(value, name)
    lo, hi = within
    if arr[0] < lo or arr[-1] > hi:
        raise ValueError(f"{name} must hold {what} in [{lo:g}, {hi:g}], "
                         f"got [{float(arr[0])!r}, {float(arr[-1])!r}]")
    return arr


def prior_values(value, name: str) -> np.ndarray:
    """Grid values (:func:`grid_values`) that are usable prior variances."""
    return _grid_within(value, name, PRIOR_VARIANCE_RANGE, "prior variances")


def width_values(value, name: str) -> np.ndarray:
    """Grid values (:func:`grid_values`) that are usable RBF widths (:data:`WIDTH_RANGE`)."""
    return _grid_within(value, name, WIDTH_RANGE, "length scales")


def _is_real(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (numbers.Real, np.floating, np.integer))


def _real_scalar(value, name: str, kind: str, ok, expected: str) -> float:
    """``float(value)``: a TypeError unless it is a real number (``kind``), a ValueError unless
    ``ok(v)`` holds (``expected``)."""
    if not _is_real(value):
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__}")
    v = float(value)
    if not ok(v):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return v


def positive_scalar(value, name: str) -> float:
    """Return ``value`` as a positive finite float, or raise naming ``name``."""
    return _real_scalar(value, name, "a positive real number", lambda v: np.isfinite(v) and v > 0,
                        "a positive finite number")


#: Usable RBF widths: ``l**2`` must be a normal float, so ``2 l^2`` is never zero. ``d2 / (2 l^2)``
#: may still overflow to ``inf`` for a tiny width and distant inputs (``d2`` up to about
#: ``1e300`` under :data:`MAX_INPUT`): :func:`lib.features.rbf_from_squared_distances` takes
#: ``exp(-inf) = 0``, the basis function's limit, without a warning. Far outside any data scale:
#: at ``l = 1e-150`` every basis function is an indicator of its centre, at ``l = 1e150`` every
#: one is constant.
WIDTH_RANGE = (1e-150, 1e150)


def width(value, name: str) -> float:
    """Return an RBF width as a float in :data:`WIDTH_RANGE`, or raise naming ``name``."""
    lo, hi = WIDTH_RANGE
    return _real_scalar(value, name, "a positive real number", lambda v: lo <= v <= hi,
                        f"a positive length scale in [{lo:g}, {hi:g}]")


def fraction(value, name: str, *, open_interval: bool = False) -> float:
    """Return ``value`` as a float in ``[0, 1]`` (``(0, 1)`` if ``open_interval``), or raise."""
    if open_interval:
        return _real_scalar(value, name, "a number in (0, 1)", lambda v: 0.0 < v < 1.0,
                            "strictly between 0 and 1")
    return _real_scalar(value, name, "a number in [0, 1]", lambda v: 0.0 <= v <= 1.0, "in [0, 1]")


def positive_pair(value, name: str, what: str = "of positive numbers", names=("[0]", "[1]")) -> tuple[float, float]:
    """Two positive numbers from a pair, or an error naming ``name`` and the expected ``what``."""
    try:
        first, second = value
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair {what}, got {value!r}") from None
    return positive_scalar(first, f"{name}{names[0]}"), positive_scalar(second, f"{name}{names[1]}")


def bounds(value, name: str, within: tuple[float, float] | None = None) -> tuple[float, float]:
    """``(low, high)`` of positive numbers with ``low < high`` (inside ``within`` if given), or
    raise naming ``name``."""
    lo, hi = positive_pair(value, name, "(low, high) of positive numbers")
    if not lo < hi:
        raise ValueError(f"{name} must satisfy low < high, got ({lo}, {hi})")
    if within is not None and not within[0] <= lo < hi <= within[1]:
        raise ValueError(f"{name} must lie in [{within[0]:g}, {within[1]:g}], got ({lo!r}, {hi!r})")
    return lo, hi


def _integer(value, name: str, minimum: int, expected: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return int(value)


def positive_int(value, name: str, *, allow_none: bool = False) -> int | None:
    """Return ``value`` as a positive int, or raise naming ``name``."""
    if value is None and allow_none:
        return None
    return _integer(value, name, 1, "a positive integer")


def int_at_least(value, name: str, minimum: int) -> int:
    """Return ``value`` as an int ``>= minimum``, or raise naming ``name``."""
    return _integer(value, name, minimum, f"an integer >= {minimum}")


def seed(value, name: str = "seed") -> int:
    """Return a random seed as an int ``>= 0``, or raise naming ``name``."""
    return _integer(value, name, 0, "a non-negative integer (a random seed)")


def flag(value, name: str) -> bool:
    """Return ``value`` if it is ``True`` or ``False``, or raise naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(value, name: str, options: tuple):
    """Return ``value`` if it is one of ``options``, or raise naming ``name``."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def instance(value, name: str, cls, what: str | None = None):
    """Return ``value`` if it is a ``cls`` (a result object of the right kind), or raise."""
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be {what or 'a ' + cls.__name__}, got {type(value).__name__}")
    return value


def kernel(value, name: str, *, size: int | None = None) -> np.ndarray:
    """A square, symmetric, positive semi-definite matrix (a Cholesky attempt after a jitter
    of 1e-10 times the largest diagonal entry), or an error naming ``name``."""
    K = as_design(value, name)
    if K.shape[0] != K.shape[1] or (size is not None and K.shape[0] != size):
        want = "square" if size is None else f"of shape ({size}, {size})"
        raise ValueError(f"{name} must be a {want} kernel matrix, got shape {K.shape}")
    scale = float(np.max(np.abs(K)))
    if np.max(np.abs(K - K.T)) > 1e-10 * scale:
        raise ValueError(f"{name} must be symmetric (a kernel matrix), got max |K - K^T| = "
                         f"{np.max(np.abs(K - K.T)):.3g}")
    try:
        jitter = max(1e-10 * float(np.max(np.diag(K))), np.finfo(float).tiny)
        np.linalg.cholesky(K + jitter * np.eye(K.shape[0]))
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be positive semi-definite (a kernel matrix): its Cholesky "
                         "factorisation failed") from None
    return K


def split_size(n_train: int, n_rows: int, name: str) -> int:
    """A training-set size that leaves both the training and the test set non-empty."""
    n_train = positive_int(n_train, name)
    if n_train >= n_rows:
        raise ValueError(f"{name} must be between 1 and {n_rows - 1} (both sets non-empty), "
                         f"got {n_train}")
    return n_train


def batch_size(value, n_rows: int, name: str = "batch_size") -> int | None:
    """A minibatch size: ``None`` (the full batch) or a positive int at most ``n_rows``."""
    value = positive_int(value, name, allow_none=True)
    if value is not None and value > n_rows:
        raise ValueError(f"{name} must be at most the number of rows ({n_rows}), got {value}")
    return value
