"""Tests for lib.checks.laplace1d: the 1-D Laplace approximation and the quadrature normaliser."""
import math

import numpy as np
import pytest

from lib.checks.laplace1d import Laplace1D, laplace_1d, log_normaliser_1d
from lib.likelihood import log_sigmoid, sigmoid


def gaussian_log_density(mean, var, offset=0.0):
    return lambda z: offset - 0.5 * (z - mean) ** 2 / var


def skewed_log_density(z):
    """The book's illustration: log of exp(-z^2/2) sigma(20 z + 4)."""
    return -0.5 * z**2 + log_sigmoid(20.0 * z + 4.0)


@pytest.mark.parametrize("mean, var", [(0.0, 1.0), (3.0, 0.25), (-50.0, 4.0), (1e-3, 1e-4)])
def test_exact_for_a_gaussian(mean, var):
    lap = laplace_1d(gaussian_log_density(mean, var, offset=7.0))
    assert lap.mode == pytest.approx(mean, abs=1e-6 * (1 + abs(mean)))
    assert lap.precision == pytest.approx(1.0 / var, rel=1e-6)
    assert lap.variance == pytest.approx(var, rel=1e-6)
    assert lap.std == pytest.approx(math.sqrt(var), rel=1e-6)
    # log Z = offset + log sqrt(2 pi var), exact for a Gaussian.
    assert lap.log_normaliser == pytest.approx(7.0 + 0.5 * math.log(2 * math.pi * var), abs=1e-6)


def test_skewed_example_matches_analytic_derivatives():
    lap = laplace_1d(skewed_log_density)
    s = sigmoid(20.0 * lap.mode + 4.0)
    # Stationarity g'(z0) = -z0 + 20 (1 - s) = 0 and curvature A = 1 + 400 s (1 - s).
    assert -lap.mode + 20.0 * (1.0 - s) == pytest.approx(0.0, abs=1e-7)
    assert lap.precision == pytest.approx(1.0 + 400.0 * s * (1.0 - s), rel=1e-7)
    assert lap.log_peak == pytest.approx(skewed_log_density(lap.mode))


def test_gaussian_methods_are_normalised_and_consistent():
    lap = Laplace1D(mode=0.5, precision=4.0, log_peak=-2.0)
    z = np.linspace(-10, 10, 200001)
    assert np.trapezoid(lap.pdf(z), z) == pytest.approx(1.0, rel=1e-9)
    assert lap.log_quadratic(0.5) == pytest.approx(-2.0)
    assert lap.log_pdf(0.5) == pytest.approx(0.5 * math.log(4.0 / (2 * math.pi)))
    assert lap.log_quadratic(z).shape == z.shape


def test_log_normaliser_quadrature():
    # Gaussian: exact value known.
    assert log_normaliser_1d(gaussian_log_density(1.0, 2.0, offset=-300.0), -40, 40) == pytest.approx(
        -300.0 + 0.5 * math.log(2 * math.pi * 2.0), abs=1e-10
    )
    # Skewed example, against an independent fine trapezoid rule.
    z = np.linspace(-20, 20, 400001)
    expected = math.log(np.trapezoid(np.exp(-0.5 * z**2) * sigmoid(20 * z + 4), z))
    assert log_normaliser_1d(skewed_log_density, -20, 20, reference=0.1) == pytest.approx(expected, abs=1e-6)


def test_laplace_overestimates_the_skewed_normaliser():
    lap = laplace_1d(skewed_log_density)
    exact = log_normaliser_1d(skewed_log_density, -20, 20, reference=lap.mode)
    assert lap.log_normaliser > exact


def test_frozen():
    lap = Laplace1D(mode=0.0, precision=1.0, log_peak=0.0)
    with pytest.raises(AttributeError):
        lap.mode = 1.0


# ----------------------------------------------------------------------------- bad input


G = gaussian_log_density(0.0, 1.0)   # the standard normal log density


BAD_INPUT = [
    pytest.param(lambda: laplace_1d(3.0), TypeError, "log_density must be a callable", id="log_density"),
    pytest.param(lambda: log_normaliser_1d("abc", 0, 1), TypeError, "log_density must be a callable",
                 id="log_density-normaliser"),
    pytest.param(lambda: laplace_1d(lambda z: np.array([z, z])), ValueError, "log_density must return a scalar",
                 id="log_density-shape"),
    pytest.param(lambda: laplace_1d(lambda z: z), ValueError, "no finite maximum", id="log_density-linear"),
    pytest.param(lambda: laplace_1d(lambda z: z**2), ValueError, "no finite maximum", id="log_density-convex"),
    pytest.param(lambda: laplace_1d(lambda z: 0.0), ValueError, "no finite maximum", id="log_density-constant"),
    # flat-topped: g = 0 on [-1, 1], so g'' = 0 at any maximiser found there
    pytest.param(lambda: laplace_1d(lambda z: -max(abs(z) - 1.0, 0.0) ** 2), ValueError, "not strictly concave",
                 id="log_density-flat"),
    pytest.param(lambda: laplace_1d(G, bracket=(0.0, 0.0)), ValueError, "two distinct", id="bracket-equal"),
    pytest.param(lambda: laplace_1d(G, bracket=1.0), TypeError, "bracket must be a pair", id="bracket-scalar"),
    pytest.param(lambda: laplace_1d(G, bracket=(0.0, 1.0, 2.0)), TypeError, "bracket must be a pair",
                 id="bracket-triple"),
    pytest.param(lambda: laplace_1d(G, bracket=(0.0, np.nan)), ValueError, r"bracket\[1\] must be finite",
                 id="bracket-nan"),
    pytest.param(lambda: laplace_1d(G, bracket=("a", 1.0)), TypeError, r"bracket\[0\] must be a real number",
                 id="bracket-str"),
    *[pytest.param(lambda name=name, value=value: laplace_1d(G, **{name: value}), ValueError, name,
                   id=f"{name}-{value}")
      for name in ("step", "xtol") for value in (0.0, -1e-3, np.inf)],
    pytest.param(lambda: log_normaliser_1d(G, 1.0, 1.0), ValueError, "lower must be less than upper",
                 id="lower-equal"),
    pytest.param(lambda: log_normaliser_1d(G, 2.0, 1.0), ValueError, "lower must be less than upper",
                 id="lower-above"),
    pytest.param(lambda: log_normaliser_1d(G, -np.inf, 1.0), ValueError, "lower must be finite", id="lower-inf"),
    pytest.param(lambda: log_normaliser_1d(G, 0.0, 1.0, reference=5.0), ValueError,
                 "reference must lie strictly between", id="reference-outside"),
    pytest.param(lambda: log_normaliser_1d(gaussian_log_density(0.0, 1e-4), -50.0, 50.0, reference=40.0),
                 ValueError, "overflows", id="reference-far"),
    pytest.param(lambda: log_normaliser_1d(lambda z: -np.inf if z == 0.5 else 0.0, 0.0, 1.0), ValueError,
                 "finite at reference", id="reference-infinite"),
]


@pytest.mark.parametrize("call, exc, match", BAD_INPUT)
def test_rejects_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
