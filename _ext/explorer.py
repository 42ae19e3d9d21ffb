"""Sphinx extension: the interactive explorers' pages (issue 21).

A chapter's explorer is an output of media type ``lib.book.explorer.MIME``: what the explorer
shows (its sliders, numbers and planes, the arrays as uint8, deflated and base64-encoded),
written by :func:`lib.book.explorer.grid_explorer` or :func:`~lib.book.explorer.sweep_explorer`.
When a chapter is read, :func:`page` turns it into the page's ``text/html``: a hidden
``<div class="blc-explorer">`` holding a JSON description of the panels (with the book's
colours, contour levels and ticks, :mod:`lib.book.plots`) and one blob of its arrays, which
``_assets/js/explorer.js`` draws and ``_assets/css/explorer.css`` styles (keeping the static
figure for print). Both are served from the book's own ``_static/``; a page without an
explorer loads neither.
"""
from __future__ import annotations

import base64
import html
import json
import zlib
from pathlib import Path

import numpy as np

from lib.book import explorer, plots

ASSETS = Path(__file__).resolve().parents[1] / "_assets"


def _lut(name: str) -> np.ndarray:
    """A Matplotlib colour map as 256 RGB rows, uint8."""
    from matplotlib import colormaps

    return np.rint(255 * colormaps[name](np.linspace(0, 1, 256))[:, :3]).astype(np.uint8)


def _bands() -> list:
    """The ten colours of the book's probability shading on white (:data:`lib.book.plots.SHADE_CMAP`
    at :data:`~lib.book.plots.SHADE_ALPHA`), as ``[r, g, b]`` in 0..255."""
    from matplotlib import colormaps

    rgb = colormaps[plots.SHADE_CMAP]((np.arange(10) + 0.5) / 10)[:, :3]
    return np.rint(255 * (plots.SHADE_ALPHA * rgb + 1 - plots.SHADE_ALPHA)).astype(int).tolist()


def _log_ticks(values) -> list:
    """``[position in cells, "k"]`` for each whole power of ten ``10^k`` of a log-spaced axis."""
    return [[float(x), f"{p:g}"] for x, p in zip(*plots.power_ticks(values))]


def _ticks(ticks) -> list:
    return [[float(t), f"{t:g}".replace("-", "−")] for t in ticks]


def _data_ticks(lo: float, hi: float) -> list:
    """``[value, "label"]`` of a few round ticks within ``[lo, hi]`` (an axis in data units)."""
    from matplotlib.ticker import MaxNLocator

    ticks = MaxNLocator(nbins=5, steps=[1, 2, 5, 10]).tick_values(lo, hi)
    return _ticks(t for t in ticks if lo - 1e-9 <= t <= hi + 1e-9)


def page_html(spec: dict, arrays: dict) -> str:
    """The ``text/html`` of an explorer: a hidden container with its data.

    ``spec`` is what ``explorer.js`` draws (JSON-able): sliders, panels, numbers, ``figure``
    (the id of the static figure it takes the place of). ``arrays`` (str to uint8 ndarray) are
    packed one after another, deflated and base64-encoded; ``spec["arrays"]`` gets each one's
    ``[offset, length]``.
    """
    blob, offsets = bytearray(), {}
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        if array.dtype != np.uint8:
            raise TypeError(f"array {name!r} must be uint8, got {array.dtype}")
        offsets[name] = [len(blob), int(array.size)]
        blob += array.tobytes()
    data = base64.b64encode(zlib.compress(bytes(blob), 9)).decode("ascii")
    text = json.dumps({**spec, "arrays": offsets, "data": data}, separators=(",", ":"))
    text = text.replace("</", "<\\/")                  # never closes the script element
    label = html.escape(spec.get("label", "interactive figure"))
    return (f'<div class="blc-explorer" hidden data-figure="{html.escape(spec["figure"])}" '
            f'aria-label="{label}"><script type="application/json">{text}</script></div>')


def _first_panel(data: dict) -> dict:
    """The evidence map (a grid explorer) or the variance map (a sweep)."""
    if data["kind"] == "grid":
        heat = data["heat"]
        return {"type": "heat", "title": "log evidence over the grid", "array": "heat",
                "rows": len(heat["s2"]), "cols": len(heat["l"]), "lut": "viridis",
                "row_cells": heat["row_cells"], "col_cells": heat["col_cells"],
                "xlabel": "RBF width l", "ylabel": "prior variance s²",
                "xticks": _log_ticks(heat["l"]), "yticks": _log_ticks(heat["s2"]),
                "scale": heat["scale"]}
    lo, hi = data["var_range"]
    return {"type": "scalar", "title": "log₁₀ σₐ², the activation's variance",
            "array": "logvar", "lut": "viridis", "range": [lo, hi],
            "ticks": _ticks(np.arange(np.ceil(lo), np.floor(hi) + 1))}


def page(data: dict) -> str:
    """The page's ``text/html`` for an explorer's description ``data``
    (:func:`lib.book.explorer.bundle`)."""
    e = data["extent"]
    spec = {key: value for key, value in data.items()
            if key not in ("kind", "arrays", "heat", "var_range")}
    spec.update({
        "levels": list(plots.PROBABILITY_LINES), "bands": _bands(),
        "classes": list(plots.CLASS_COLOURS),
        "code": {"scale": explorer.LOGIT_SCALE, "max": explorer.LOGIT_MAX},
        "xticks": _data_ticks(e[0], e[1]), "yticks": _data_ticks(e[2], e[3]),
        "panels": [_first_panel(data),
                   {"type": "proba", "title": "plug-in MAP", "array": "map"},
                   {"type": "proba", "title": "probit predictive", "array": "pred"}]})
    arrays = {name: np.frombuffer(zlib.decompress(base64.b64decode(packed)), np.uint8)
              for name, packed in data["arrays"].items()}
    arrays["viridis"] = _lut("viridis").ravel()
    return page_html(spec, arrays)


def _read(app, docname, source):
    """A notebook's explorer outputs, as the page's ``text/html`` (before myst-nb reads it)."""
    if explorer.MIME not in source[0]:
        return
    nb = json.loads(source[0])
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if explorer.MIME in out.get("data", {}):
                out["data"]["text/html"] = page(out["data"].pop(explorer.MIME))
    source[0] = json.dumps(nb)


def _static_path(app, config):
    for folder in ("js", "css"):
        path = str(ASSETS / folder)
        if path not in config.html_static_path and f"_assets/{folder}" not in config.html_static_path:
            config.html_static_path.append(path)


def _page(app, pagename, templatename, context, doctree):
    if 'class="blc-explorer"' in (context.get("body") or ""):
        app.add_css_file("explorer.css")
        app.add_js_file("explorer.js", defer="defer")


def setup(app):
    app.connect("config-inited", _static_path)
    app.connect("source-read", _read)
    app.connect("html-page-context", _page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
