"""How the book prints small numbers (book chapters' check tables).

A difference at rounding level (``1e-13``, say) changes in its first digit from one machine, BLAS
kernel or library version to the next, so a chapter that printed it would fail its regression
test (nbval compares printed text) on a reader's machine. :func:`small` prints such a number as
its bound, ``"< 1e-10"``, and larger ones in scientific notation, which is stable.
"""
from __future__ import annotations

import numbers

import numpy as np

#: Below this, a difference is rounding, and is printed as ``"< 1e-10"``.
ROUNDING_FLOOR = 1e-10


def small(value, floor: float = ROUNDING_FLOOR, digits: int = 0) -> str:
    """``"< {floor:.0e}"`` if ``|value| < floor``, else ``value`` in scientific notation.

    Parameters
    ----------
    value : float
        A difference or error (any sign).
    floor : float
        Positive; differences below it are printed as the bound.
    digits : int
        Decimals of the mantissa for values at or above ``floor``.

    Returns
    -------
    str

    Examples
    --------
    >>> small(3e-14), small(2.5e-4, digits=1)
    ('< 1e-10', '2.5e-04')
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"value must be a real number, got {type(value).__name__}")
    if not (isinstance(floor, numbers.Real) and floor > 0):
        raise ValueError(f"floor must be a positive number, got {floor!r}")
    if not np.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}")
    return f"< {floor:.0e}" if abs(value) < floor else f"{value:.{digits}e}"
