"""Input checks shared by every module: each raises with the argument's name and what was expected."""
from __future__ import annotations

import numbers

import numpy as np


def _real_array(value, name: str) -> np.ndarray:
    """``np.asarray(value)``, or a TypeError unless it holds real numbers."""
    arr = np.asarray(value)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got a complex array")
    return arr


def as_matrix(value, name: str, *, n_cols: int | None = None) -> np.ndarray:
    """Return ``value`` as a finite float 2-D array, or raise naming ``name``.

    Parameters
    ----------
    value : array_like, shape (N, D)
    name : str
        The argument's name, used in the error message.
    n_cols : int, optional
        Required number of columns D.
    """
    arr = _real_array(value, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (N, D), got shape {arr.shape}")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise ValueError(f"{name} must have {n_cols} columns, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must have at least one row, got shape {arr.shape}")
    arr = arr.astype(float, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return arr


def as_vector(value, name: str, *, length: int | None = None) -> np.ndarray:
    """Return ``value`` as a finite float 1-D array, or raise naming ``name``."""
    arr = _real_array(value, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got length {arr.shape[0]}")
    arr = arr.astype(float, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return arr


def as_labels(value, name: str, *, length: int | None = None) -> np.ndarray:
    """Return binary labels as a float 1-D array of 0.0/1.0, or raise naming ``name``."""
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of 0/1 labels, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length} (one label per row), got length {arr.shape[0]}")
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must hold numeric 0/1 labels, got dtype {arr.dtype}")
    bad = ~np.isin(arr, (0, 1))
    if np.any(bad):
        found = np.unique(arr[bad])[:5]
        raise ValueError(f"{name} must contain only the labels 0 and 1, found {found.tolist()}")
    return arr.astype(float)


def positive_scalar(value, name: str) -> float:
    """Return ``value`` as a positive finite float, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a positive real number, got {type(value).__name__}")
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return v


def positive_int(value, name: str, *, allow_none: bool = False) -> int | None:
    """Return ``value`` as a positive int, or raise naming ``name``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be a positive integer, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
