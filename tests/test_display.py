"""lib.book.display: small numbers printed so that they reproduce on any machine."""
import numpy as np
import pytest

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
