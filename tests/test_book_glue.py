"""lib.book.glue: one call glues a dict of formatted strings; raw numbers are refused."""
import numpy as np
import pytest

from lib.book import glue


def test_glue_all_glues_each_string(monkeypatch):
    import myst_nb

    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: calls.append((name, value, display)))
    glue.glue_all({"a": "1.00", "b": "x"})
    assert calls == [("a", "1.00", False), ("b", "x", False)]


@pytest.mark.parametrize("values", [{"a": np.float64(1.0)}, {"a": 1}, {1: "x"}, [("a", "1")]])
def test_glue_all_refuses_what_is_not_a_formatted_string(values, monkeypatch):
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda *a, **k: pytest.fail("nothing may be glued"))
    with pytest.raises(TypeError, match="values must"):
        glue.glue_all(values)
