"""The Laplace approximation of a one-dimensional density (book chapter "The Laplace
approximation"; lecture notes ch. 7, section 7.3).

Given an unnormalised density ``f(z) = exp(g(z))``, expand ``g`` to second order about its mode
``z0``, where ``g'(z0) = 0``::

    g(z) ~= g(z0) - (A / 2) (z - z0)^2,        A = -g''(z0) > 0,          (book eq. lap-taylor-1d)

so that ``f`` is approximated by an unnormalised Gaussian and its normaliser by::

    Z = int f(z) dz ~= f(z0) sqrt(2 pi / A).                            (book eq. lap-1d)

The mode is found with Brent's method on ``-g`` and the curvature ``A`` with a
Richardson-extrapolated central difference, so ``g`` only has to be evaluable; nothing needs its
derivatives. :func:`log_normaliser_1d` computes the exact ``log Z`` by adaptive quadrature, for
comparison.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.integrate import quad
from scipy.optimize import minimize_scalar

from lib._validate import positive_scalar, real_scalar

_LOG_2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True)
class Laplace1D:
    """Gaussian approximation ``N(z | mode, 1 / precision)`` of a 1-D density.

    Attributes
    ----------
    mode : float
        ``z0``, the maximiser of the log density ``g``.
    precision : float
        ``A = -g''(z0) > 0``, the curvature of ``-g`` at the mode.
    log_peak : float
        ``g(z0)``, the unnormalised log density at the mode.
    """

    mode: float
    precision: float
    log_peak: float

    @property
    def variance(self) -> float:
        """``1 / A``."""
        return 1.0 / self.precision

    @property
    def std(self) -> float:
        """``A^{-1/2}``."""
        return 1.0 / math.sqrt(self.precision)

    @property
    def log_normaliser(self) -> float:
        """Laplace estimate of ``log Z``: ``g(z0) + (1/2) log(2 pi) - (1/2) log A``."""
        return self.log_peak + 0.5 * _LOG_2PI - 0.5 * math.log(self.precision)

    def log_quadratic(self, z) -> np.ndarray:
        """The quadratic approximation ``g(z0) - (A/2) (z - z0)^2`` of the unnormalised log density.

        Parameters
        ----------
        z : array_like, shape (K,) or scalar

        Returns
        -------
        ndarray, same shape as ``z``
        """
        z = np.asarray(z, dtype=float)
        return self.log_peak - 0.5 * self.precision * (z - self.mode) ** 2

    def log_pdf(self, z) -> np.ndarray:
        """Log density of the normalised Gaussian ``N(z | z0, 1/A)``.

        Parameters
        ----------
        z : array_like, shape (K,) or scalar

        Returns
        -------
        ndarray, same shape as ``z``
        """
        return self.log_quadratic(z) - self.log_normaliser

    def pdf(self, z) -> np.ndarray:
        """Density of ``N(z | z0, 1/A)``; see :meth:`log_pdf`."""
        return np.exp(self.log_pdf(z))


def _check_callable(log_density) -> Callable[[float], float]:
    if not callable(log_density):
        raise TypeError(
            f"log_density must be a callable mapping a float z to log f(z), got {type(log_density).__name__}"
        )

    def g(z: float) -> float:
        value = np.asarray(log_density(float(z)), dtype=float)
        if value.size != 1:
            raise ValueError(f"log_density must return a scalar, got an array of shape {value.shape}")
        return float(value.reshape(()))

    return g


def laplace_1d(log_density, *, bracket=(-1.0, 1.0), step: float = 1e-3, xtol: float = 1e-12) -> Laplace1D:
    """Laplace approximation of the unnormalised density ``exp(log_density(z))``.

    Parameters
    ----------
    log_density : callable
        ``g(z) = log f(z)`` up to an additive constant; called with one float, returns one float.
    bracket : (float, float)
        Two distinct starting points for the downhill search that brackets the mode (Brent's
        method in :func:`scipy.optimize.minimize_scalar`); the mode need not lie between them.
    step : float
        Finite-difference step ``h`` for the curvature, relative to ``1 + |z0|``. The estimate is
        ``(4 D(h/2) - D(h)) / 3`` with ``D(h) = -(g(z0+h) - 2 g(z0) + g(z0-h)) / h^2`` (error
        ``O(h^4)``).
    xtol : float
        Relative tolerance on the mode.

    Returns
    -------
    Laplace1D

    Raises
    ------
    ValueError
        If no finite maximum is found, or the log density is not strictly concave there.
    """
    g = _check_callable(log_density)
    try:
        lo, hi = bracket
    except (TypeError, ValueError):
        raise TypeError(f"bracket must be a pair of two distinct real numbers, got {bracket!r}") from None
    lo, hi = real_scalar(lo, "bracket[0]"), real_scalar(hi, "bracket[1]")
    if lo == hi:
        raise ValueError(f"bracket must hold two distinct numbers, got {bracket!r}")
    step = positive_scalar(step, "step")
    xtol = positive_scalar(xtol, "xtol")

    # Mode: minimise -g by Brent's method (no derivatives needed).
    # Brent's bracket search may step far out (inf - inf) before giving up; the outcome is checked below.
    with np.errstate(all="ignore"):
        try:
            res = minimize_scalar(lambda z: -g(z), bracket=(lo, hi), method="brent", options={"xtol": xtol})
        except (RuntimeError, ValueError, OverflowError) as err:  # the search ran away: no maximum
            raise ValueError(f"log_density has no finite maximum reachable from bracket={bracket!r}: {err}") from None
    z0 = float(res.x)
    g0 = g(z0)
    if not (res.success and math.isfinite(z0) and math.isfinite(g0)):
        raise ValueError(f"log_density has no finite maximum reachable from bracket={bracket!r}")

    # Curvature A = -g''(z0): central differences at h and h/2, Richardson-extrapolated.
    h = step * (1.0 + abs(z0))

    def minus_second_difference(h):
        return -(g(z0 + h) - 2.0 * g0 + g(z0 - h)) / h**2

    A = (4.0 * minus_second_difference(h / 2) - minus_second_difference(h)) / 3.0
    if not (math.isfinite(A) and A > 0):
        raise ValueError(
            f"log_density is not strictly concave at the mode found (z0={z0:.6g}, -g''(z0)={A:.3g}); "
            "the Laplace approximation needs a strict maximum"
        )
    return Laplace1D(mode=z0, precision=A, log_peak=g0)


def log_normaliser_1d(log_density, lower, upper, *, reference=None) -> float:
    """``log int_lower^upper exp(log_density(z)) dz`` by adaptive quadrature.

    The integrand is scaled by ``exp(-log_density(reference))`` before integrating (so a peak far
    above or below 1 neither overflows nor underflows), and ``reference`` is given to
    :func:`scipy.integrate.quad` as a breakpoint so the peak is not missed.

    Parameters
    ----------
    log_density : callable
        ``g(z)``, called with one float, returning one float.
    lower, upper : float
        Finite integration limits, ``lower < upper``; choose them so the mass outside is negligible.
    reference : float, optional
        A point near the mode, inside the limits; the midpoint by default.

    Returns
    -------
    float
    """
    g = _check_callable(log_density)
    lower, upper = real_scalar(lower, "lower"), real_scalar(upper, "upper")
    if not lower < upper:
        raise ValueError(f"lower must be less than upper, got lower={lower}, upper={upper}")
    reference = 0.5 * (lower + upper) if reference is None else real_scalar(reference, "reference")
    if not lower < reference < upper:
        raise ValueError(f"reference must lie strictly between lower and upper, got {reference}")
    g_ref = g(reference)
    if not math.isfinite(g_ref):
        raise ValueError(f"log_density must be finite at reference={reference}, got {g_ref}")
    try:
        value, _ = quad(
            lambda z: math.exp(g(z) - g_ref), lower, upper, points=[reference], limit=200, epsabs=0.0, epsrel=1e-12
        )
    except OverflowError:
        raise ValueError(
            f"exp(log_density(z) - log_density(reference)) overflows; choose reference={reference} nearer the mode"
        ) from None
    if not value > 0:
        raise ValueError("the integral of exp(log_density) over [lower, upper] is not positive")
    return g_ref + math.log(value)
