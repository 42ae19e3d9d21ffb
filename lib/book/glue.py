"""Glue a dict of formatted values into the page in one call (myst-nb's ``glue``).

A chapter computes its numbers visibly, formats them as the prose shows them, and glues them
all at once: ``glue_all({"ev-N": f"{N}", "ev-M": f"{M}"})``; the prose reads them with
``{glue:text}`ev-N```. Values must be strings (formatted by the chapter), never raw floats, so
the page shows exactly the digits nbval compares.
"""
from __future__ import annotations

from collections.abc import Mapping


def glue_all(values: Mapping[str, str]) -> None:
    """Glue every ``name -> text`` pair of ``values`` (str to str), without displaying them;
    a TypeError if ``values`` is not such a mapping."""
    if not isinstance(values, Mapping):
        raise TypeError(f"values must be a mapping of names to formatted strings, "
                        f"got {type(values).__name__}")
    for name, text in values.items():
        if not isinstance(name, str) or not isinstance(text, str):
            raise TypeError(f"values must map str names to formatted str texts, got "
                            f"{name!r}: {type(text).__name__} (format numbers first, e.g. "
                            f"f\"{{x:.3f}}\")")
    from myst_nb import glue   # the book's toolchain; only the chapters call this

    for name, text in values.items():
        glue(name, text, display=False)
