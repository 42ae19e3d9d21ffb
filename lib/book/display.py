"""How the book prints numbers: small ones in check tables, and any for reading.

A difference at rounding level (``1e-13``, say) changes in its first digit from one machine, BLAS
kernel or library version to the next, so a chapter that printed it would fail its regression
test (nbval compares printed text) on a reader's machine. :func:`small` prints such a number as
its bound, ``"< 1e-10"``, and larger ones in scientific notation, which is stable.
:func:`readable` prints a number as a reader expects it in a table, on a slider or in a readout
(``10⁴``, ``4 639``, ``0.00575``), without an exponent.
"""
from __future__ import annotations

import decimal
import numbers

import numpy as np

#: Thousands separator of :func:`readable` (a narrow no-break space, as the SI writes 4 790).
THOUSANDS = "\u202f"
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
#: Below this, a difference is rounding, and is printed as ``"< 1e-10"``.
ROUNDING_FLOOR = 1e-10


def small(value, floor: float = ROUNDING_FLOOR, digits: int = 0) -> str:
    """``"< {floor:.0e}"`` if ``|value| < floor`` (``floor`` positive), else ``value`` (a
    difference or error, any sign) in scientific notation with ``digits`` mantissa decimals.

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


def readable(value, digits: int = 3) -> str:
    """``value`` printed for reading: to ``digits`` significant figures without an exponent,
    whole numbers from 1 000 up with a narrow space between thousands (``4 639``), whole powers
    of ten as ``10⁴`` from ``10⁴`` up and ``10⁻⁴`` down and plainly in between (``0.01``,
    ``1 000``); below ``0.0001`` as ``a × 10⁻ᵏ``.

    >>> [readable(v) for v in (1e4, 4638.941, 0.0057544, 0.15, 1.0, 1e-4, 3.2e-6)]
    ['10⁴', '4\\u202f639', '0.00575', '0.150', '1', '10⁻⁴', '3.20 × 10⁻⁶']
    """
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"value must be finite, got {value!r}")
    if v == 0:
        return "0"
    sign, v = ("-" if v < 0 else ""), abs(v)
    k = int(np.round(np.log10(v)))
    power = np.isclose(v, 10.0**k, rtol=1e-9, atol=0)
    if power and abs(k) >= 4:
        return f"{sign}10{str(k).translate(_SUPERSCRIPT)}"
    if power:
        return sign + f"{10.0**k:,.{max(0, -k)}f}".replace(",", THOUSANDS)
    if v >= 999.5:                                     # whole numbers: 4 639, 28 081
        return sign + f"{v:,.0f}".replace(",", THOUSANDS)
    v = float(f"{v:.{digits}g}")                       # rounded to the digits shown
    e = int(np.floor(np.log10(v)))
    if e < -4:
        return f"{sign}{v / 10.0**e:.{digits - 1}f} × 10{str(e).translate(_SUPERSCRIPT)}"
    return f"{sign}{v:.{max(0, digits - 1 - e)}f}"


def _rounded(value, decimals: int, rounding: str) -> str:
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"value must be finite, got {value!r}")
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral) or decimals < 0:
        raise ValueError(f"decimals must be a whole number >= 0, got {decimals!r}")
    shortest = decimal.Decimal(repr(v))               # the shortest text that reads back as v
    return str(shortest.quantize(decimal.Decimal(1).scaleb(-int(decimals)), rounding=rounding))


def upper(value, decimals: int = 2) -> str:
    """``value`` rounded *up* to ``decimals`` places: the text of an upper bound.

    A bound glued into prose must hold for the value it bounds (rounding to nearest prints 0.17
    for 0.1724): use :func:`upper` after "at most", "below", "within", "exceeds", "under", and
    :func:`lower` after "at least", "above"; for a magnitude, pass ``abs(value)``.

    >>> upper(0.1724), upper(0.00381, 4), upper(-8.344, 2), upper(0.17, 2)
    ('0.18', '0.0039', '-8.34', '0.17')
    """
    return _rounded(value, decimals, decimal.ROUND_CEILING)


def lower(value, decimals: int = 2) -> str:
    """``value`` rounded *down* to ``decimals`` places: the text of a lower bound ("at least").

    >>> lower(21.7, 0), lower(-4.7501, 2), lower(0.5, 1)
    ('21', '-4.76', '0.5')
    """
    return _rounded(value, decimals, decimal.ROUND_FLOOR)
