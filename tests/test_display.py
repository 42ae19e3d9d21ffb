"""lib.book.display: small numbers printed so that they reproduce on any machine, and numbers
printed for reading."""
import numpy as np
import pytest

from lib.book import display
from lib.book.display import small


@pytest.mark.parametrize("value, kwargs, text", [
    (3e-14, {}, "< 1e-10"),
    (-7e-13, {}, "< 1e-10"),
    (2.5e-4, {"digits": 1}, "2.5e-04"),
    (1e-10, {}, "1e-10"),
    (0.48, {"digits": 1}, "4.8e-01"),
    (5e-9, {"floor": 1e-8}, "< 1e-08"),
    (np.float64(4e-12), {}, "< 1e-10"),
])
def test_small(value, kwargs, text):
    assert small(value, **kwargs) == text


@pytest.mark.parametrize("value, kwargs, exc, match", [
    ("1e-3", {}, TypeError, "value must be a real number"),
    (True, {}, TypeError, "value"),
    (np.nan, {}, ValueError, "finite"),
    (1.0, {"floor": 0.0}, ValueError, "floor"),
])
def test_small_rejects_bad_input(value, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        small(value, **kwargs)


def test_numbers_are_printed_for_reading():
    r = display.readable
    assert [r(v) for v in (1e4, 1e-4, 1e8, 100.0, 1.0, 0.01)] == [
        "10⁴", "10⁻⁴", "10⁸", "100", "1", "0.01"]
    nb = display.THOUSANDS
    assert [r(v) for v in (4786.3, 4638.941, 28081.42, 999.7)] == [
        f"4{nb}786", f"4{nb}639", f"28{nb}081", f"1{nb}000"]
    assert [r(v) for v in (0.0057544, 0.15, 13.18, 356.6, -0.6931)] == [
        "0.00575", "0.150", "13.2", "357", "-0.693"]
    assert r(3.2e-6) == "3.20 × 10⁻⁶" and r(0) == "0"
    with pytest.raises(ValueError, match="finite"):
        r(float("nan"))


def test_bounds_are_rounded_outward():
    assert [display.upper(v, d) for v, d in ((0.1724, 2), (0.0430, 2), (0.00381, 4), (0.17, 2),
                                             (-8.344, 2), (0.010936, 4))] == [
        "0.18", "0.05", "0.0039", "0.17", "-8.34", "0.0110"]
    assert [display.lower(v, d) for v, d in ((21.7, 0), (-4.750, 1), (0.5, 1))] == [
        "21", "-4.8", "0.5"]
    for v in np.random.default_rng(0).normal(size=200) * 10.0 ** np.arange(-4, 4).repeat(25):
        assert float(display.upper(v, 3)) >= v >= float(display.lower(v, 3))


@pytest.mark.parametrize("func", [display.upper, display.lower])
def test_bounds_reject_bad_input(func):
    with pytest.raises(ValueError, match="finite"):
        func(np.inf)
    with pytest.raises(ValueError, match="decimals"):
        func(1.0, -1)
