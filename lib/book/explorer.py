"""Interactive explorers on the book's pages, computed in a chapter and drawn without a kernel.

A chapter precomputes, over a few settings of the hyper-parameters, the MAP and predictive
logits and the activation variance on a coarse grid of the input plane (:func:`plane_fields`),
and the numbers to show at each setting. :func:`grid_explorer` and :func:`sweep_explorer` pack
them into one ``text/html`` output: a hidden container holding the data (the arrays as uint8,
deflated and base64-encoded, with a JSON description). The book's script
``_assets/js/explorer.js`` (loaded by ``_ext/explorer.py`` on the pages that hold an explorer)
draws them on canvases, with sliders, in place of the static frame of the figure named by
``figure``; that frame (:func:`plot_grid_frame`, :func:`plot_sweep_frame`) is what a printed
copy and a reader without JavaScript see. No request leaves the page.

Logits are stored on an ``asinh`` scale (:func:`encode_logits`): 127 codes per sign, fine near
zero (the decision boundary of a flat fit) and coarse in the tails, about 8 % of the logit per
code.

Each width gets the plane its bumps need (:func:`plane_size`): a grid step no larger than the
width, up to ``N_MAX`` points per axis. A width narrower than that cannot be drawn: its plane
shows the classifier between the training points, where every bump has faded
(:func:`plane_fields`), and the page says so. Numbers are printed for reading
(:func:`lib.book.display.readable`: ``10⁴``, ``4 790``, ``0.00575``), and :func:`bundle` pairs an explorer's
``text/html`` with a ``text/plain`` table of the numbers it shows (:func:`readout_text`), which
the chapters' regression test (nbval) compares.
"""
from __future__ import annotations

import base64
import html
import json
import zlib
from dataclasses import dataclass

import numpy as np

from lib._validate import as_labels, as_matrix
from lib.book.display import readable

#: Probability levels of the contour lines (as :func:`lib.book.plots.plot_probability_contours`).
LEVELS = (0.1, 0.3, 0.5, 0.7, 0.9)
#: The asinh code of a logit ``a``: ``127 + 127 asinh(a / SCALE) / asinh(MAX / SCALE)``.
LOGIT_SCALE = 1e-3
LOGIT_MAX = 12.0
CLASS_COLOURS = ("#0072B2", "#D55E00")
#: The finest plane a width may have, in points per axis (its weight on the page: 13 prior
#: variances x 2 planes x 128^2 codes is 430 kB before compression).
N_MAX = 128
#: Beyond this many widths from its centre a bump has faded (``exp(-4^2 / 2)``: 3e-4 of its
#: weight).
FADED = 4.0


def encode_logits(a) -> np.ndarray:
    """Logits as uint8 codes 0..254 (127: zero), on an asinh scale, clipped at ``LOGIT_MAX``."""
    a = np.clip(np.asarray(a, dtype=float), -LOGIT_MAX, LOGIT_MAX)
    top = np.arcsinh(LOGIT_MAX / LOGIT_SCALE)
    return np.rint(127 + 127 * np.arcsinh(a / LOGIT_SCALE) / top).astype(np.uint8)


def decode_logits(code) -> np.ndarray:
    """The logits of :func:`encode_logits` codes (what the page draws)."""
    top = np.arcsinh(LOGIT_MAX / LOGIT_SCALE)
    return LOGIT_SCALE * np.sinh((np.asarray(code, dtype=float) - 127) / 127 * top)


def _scaled(values, lo, hi) -> np.ndarray:
    """``values`` mapped linearly from ``[lo, hi]`` to uint8 0..255, clipped."""
    t = (np.asarray(values, dtype=float) - lo) / (hi - lo)
    return np.rint(255 * np.clip(t, 0, 1)).astype(np.uint8)


def plane_size(extent, width: float, *, n_min: int = 36, n_max: int = N_MAX):
    """Points per axis of the plane for RBF ``width``, and whether they resolve its bumps.

    The bumps are resolved when the grid step (the larger of the two axes') is at most
    ``width``: then ``max(n_min, ceil(span / width) + 1)`` points, if that is at most ``n_max``.
    A narrower width gets ``n_min`` points and ``False``.
    """
    if not width > 0 or n_min < 2 or n_max < n_min:
        raise ValueError(f"width must be positive and 2 <= n_min <= n_max, got {width!r}, "
                         f"{n_min!r}, {n_max!r}")
    span = max(extent[1] - extent[0], extent[3] - extent[2])
    need = max(int(n_min), int(np.ceil(span / width - 1e-9)) + 1)
    return (need, True) if need <= n_max else (int(n_min), False)


@dataclass(frozen=True)
class PlaneFields:
    """Logits and activation variances over grids of the input plane, at several settings.

    Attributes
    ----------
    s2 : ndarray, shape (S,)
        Prior variances, ascending.
    widths : ndarray, shape (P,)
        RBF widths, ascending.
    extent : tuple of float
        ``(x1_min, x1_max, x2_min, x2_max)`` of the plane grids.
    n : tuple of int, length P
        Grid points per axis of each width's plane (:func:`plane_size`).
    resolved : tuple of bool, length P
        Whether each width's plane resolves its bumps; where it does not, the plane holds the
        classifier between the training points (:func:`plane_fields`).
    map_logits, pred_logits, var : tuple of P ndarrays, shape (S, n[p] ** 2)
        MAP logits ``mu_a``, probit-predictive logits ``rho mu_a`` and ``sigma_a^2`` at each
        plane point (rows of :func:`lib.book.plots.input_grid`), per width and prior variance.
    """

    s2: np.ndarray
    widths: np.ndarray
    extent: tuple
    n: tuple
    resolved: tuple
    map_logits: tuple
    pred_logits: tuple
    var: tuple

    def step(self, p: int) -> float:
        """The grid step of width ``p``'s plane (the larger of the two axes')."""
        e = self.extent
        return max(e[1] - e[0], e[3] - e[2]) / (self.n[p] - 1)


def _between_bumps(plane, centres, width, *fields):
    """``fields`` (arrays whose last axis runs over ``plane``) with the value at each plane point
    within ``FADED`` widths of a centre replaced by the value at the nearest plane point farther
    from every centre, where every bump has faded: what a drawing too coarse for the bumps can
    show. Unchanged if no point, or every point, is that far."""
    d2 = np.min(((plane[:, None, :] - centres[None, :, :]) ** 2).sum(-1), axis=1)
    far = d2 > (FADED * width) ** 2
    if far.all() or not far.any():
        return fields
    near, away = np.flatnonzero(~far), np.flatnonzero(far)
    nearest = away[np.argmin(((plane[near, None, :] - plane[None, away, :]) ** 2).sum(-1), axis=1)]
    out = []
    for f in fields:
        g = f.copy()
        g[..., near] = f[..., nearest]
        out.append(g)
    return tuple(out)


def plane_fields(X_train, y_train, s2_values, widths, *, n: int = 36, n_max: int = N_MAX,
                 margin: float = 0.5) -> PlaneFields:
    """MAP and predictive logits and ``sigma_a^2`` on a plane per width, at each setting.

    Each width is one chain of the grid engine (:mod:`lib.fastgrid`), the plane's points in
    the place of the test inputs: the Laplace fit of :func:`lib.laplace.fit_laplace`,
    warm-started along ``s2``, equal to it to 1e-8 (as :func:`lib.hyper.evidence_grid`). Each
    width's plane has the points its bumps need (:func:`plane_size`). At a width too narrow for
    ``n_max`` points the plane has ``n`` points, and a point within ``FADED`` widths of a
    training input takes the values of the nearest point beyond: the plane shows the classifier
    between the training points, not its bumps, which no drawing of that plane could show (it
    would alias them into a scatter of diamonds).

    Parameters
    ----------
    X_train : array_like, shape (N, 2)
        Training inputs (also the RBF centres).
    y_train : array_like, shape (N,)
    s2_values : array_like, shape (S,)
        Prior variances, positive (sorted here).
    widths : array_like, shape (P,)
        RBF widths, positive (sorted here).
    n : int
        Fewest plane points per axis.
    n_max : int
        Most plane points per axis.
    margin : float
        Added to each side of the training inputs' range (:func:`lib.book.plots.input_grid`).

    Returns
    -------
    PlaneFields
    """
    from lib.book.plots import input_grid
    from lib.fastgrid import chain_fits
    from lib.likelihood import LOGISTIC

    X_train = as_matrix(X_train, "X_train", n_cols=2)
    y_train = as_labels(y_train, "y_train", length=X_train.shape[0])
    s2 = np.sort(np.asarray(s2_values, dtype=float))
    widths = np.sort(np.asarray(widths, dtype=float))
    if s2.size == 0 or widths.size == 0 or s2.min() <= 0 or widths.min() <= 0:
        raise ValueError("s2_values and widths must be non-empty and positive")
    G1, G2, _ = input_grid(X_train, n=2, margin=margin)
    extent = (float(G1.min()), float(G1.max()), float(G2.min()), float(G2.max()))
    sizes, resolved, mus, preds, variances = [], [], [], [], []
    for width in widths:                               # one chain of the engine per width
        n_p, ok = plane_size(extent, width, n_min=n, n_max=n_max)
        _, _, plane = input_grid(X_train, n=n_p, extent=extent)
        mu = np.empty((s2.size, plane.shape[0]))
        var = np.empty_like(mu)
        for k, fit in enumerate(chain_fits(X_train, y_train, plane, s2, width, s2.max())):
            mu[k], var[k] = fit.mu_test, np.maximum(fit.var_test, 0.0)
        if not ok:
            mu, var = _between_bumps(plane, X_train, width, mu, var)
        sizes.append(n_p)
        resolved.append(ok)
        mus.append(mu)
        variances.append(var)
        preds.append(LOGISTIC.predictive_logits(mu, var))      # the probit approximation
    return PlaneFields(s2=s2, widths=widths, extent=extent, n=tuple(sizes),
                       resolved=tuple(resolved), map_logits=tuple(mus),
                       pred_logits=tuple(preds), var=tuple(variances))


# --------------------------------------------------------------------------- the page's data


def _lut(name: str) -> np.ndarray:
    """A Matplotlib colour map as 256 RGB rows, uint8."""
    from matplotlib import colormaps

    return np.rint(255 * colormaps[name](np.linspace(0, 1, 256))[:, :3]).astype(np.uint8)


def _bands() -> list:
    """The fill colours of ``plot_probability_contours(filled=True)``: cividis at 35 % on white,
    one per tenth of probability."""
    from matplotlib import colormaps

    rgb = colormaps["cividis"]((np.arange(10) + 0.5) / 10)[:, :3]
    return np.rint(255 * (0.35 * rgb + 0.65)).astype(int).tolist()


def _points(X, y, extent) -> np.ndarray:
    """Points as uint8 triples (x1, x2 scaled to the extent; label)."""
    X = as_matrix(X, "X", n_cols=2)
    y = as_labels(y, "y", length=X.shape[0])
    return np.column_stack([_scaled(X[:, 0], *extent[:2]), _scaled(X[:, 1], *extent[2:]),
                            y.astype(np.uint8)]).astype(np.uint8)


def _log_ticks(values) -> list:
    """``[position in cells, "k"]`` for each whole power of ten ``10^k`` of a log-spaced axis."""
    from lib.book.plots import power_ticks

    return [[float(x), f"{p:g}"] for x, p in zip(*power_ticks(values))]


def page_html(spec: dict, arrays: dict) -> str:
    """The ``text/html`` output of an explorer: a hidden container with its data.

    Parameters
    ----------
    spec : dict
        What ``explorer.js`` draws (JSON-able): sliders, panels, numbers, ``figure`` (the id
        of the static figure it takes the place of).
    arrays : dict of str to ndarray
        uint8 arrays, packed one after another, deflated and base64-encoded; ``spec["arrays"]``
        gets each one's ``[offset, length]``.

    Returns
    -------
    str
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


def _data_ticks(lo: float, hi: float) -> list:
    """``[value, "label"]`` of a few round ticks within ``[lo, hi]`` (an axis in data units)."""
    from matplotlib.ticker import MaxNLocator

    ticks = [t for t in MaxNLocator(nbins=5, steps=[1, 2, 5, 10]).tick_values(lo, hi)
             if lo - 1e-9 <= t <= hi + 1e-9]
    return [[float(t), f"{t:g}".replace("-", "−")] for t in ticks]


def _note(width: float, step: float) -> str:
    return (f"At l = {readable(width)} the bumps are narrower than the drawing's grid step "
            f"({readable(step)}): the shading shows P(y = 1 | x) between the training points, "
            "where every bump has faded; the bump on each training point is too narrow to draw.")


def _plane_spec(fields: PlaneFields) -> tuple:
    """The planes' part of the page's description, and their codes: per width, its plane's
    points per axis, where its frames start in the ``map`` and ``pred`` arrays (``s2`` by
    ``s2``), and the note shown where the plane does not resolve the bumps."""
    planes, offset = [], 0
    for p, width in enumerate(fields.widths):
        planes.append({"n": fields.n[p], "offset": offset, "resolved": fields.resolved[p],
                       "note": "" if fields.resolved[p] else _note(width, fields.step(p))})
        offset += fields.map_logits[p].size
    e = fields.extent
    spec = {"extent": list(e), "planes": planes, "levels": list(LEVELS),
            "bands": _bands(), "classes": list(CLASS_COLOURS),
            "code": {"scale": LOGIT_SCALE, "max": LOGIT_MAX},
            "xticks": _data_ticks(e[0], e[1]), "yticks": _data_ticks(e[2], e[3])}
    arrays = {name: np.concatenate([encode_logits(a).ravel() for a in logits])
              for name, logits in (("map", fields.map_logits), ("pred", fields.pred_logits))}
    return spec, arrays


def _cells(values, grid) -> list:
    """The index in ``grid`` of each of ``values`` (each must be a point of ``grid``)."""
    idx = [int(np.argmin(np.abs(np.log(grid) - np.log(v)))) for v in values]
    if not np.allclose(grid[idx], values, rtol=1e-12):
        raise ValueError("every setting of fields must be a point of table")
    return idx


#: The grid explorer's numbers: (key, label, column of the grid's table, format).
GRID_NUMBERS = (
    ("log_evidence", "log evidence", "log_evidence", ".2f"),
    ("train_accuracy", "training accuracy", "train_accuracy", ".3f"),
    ("test_accuracy", "test accuracy", "test_accuracy", ".3f"),
    ("test_ll_map", "test log-likelihood, MAP", "test_ll_map", ".3f"),
    ("test_ll_pred", "test log-likelihood, predictive", "test_ll_pred", ".3f"),
)


def grid_explorer(table, fields: PlaneFields, X_train, y_train, X_test, y_test, *,
                  figure: str, initial, ev_floor: float) -> str:
    """The grid chapter's explorer: two sliders, ``s2`` and ``l``, over ``fields``' settings.

    Shows the evidence heat map of ``table`` (the whole grid, clipped below at ``ev_floor``)
    with the current setting marked, the MAP and predictive contours over the training or the
    test points, and the setting's log evidence, accuracies and test log-likelihoods (from
    ``table``, formatted as the chapter prints them; :data:`GRID_NUMBERS`).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`lib.hyper.evidence_grid`'s table; it must hold every setting of ``fields``.
    fields : PlaneFields
    X_train, y_train, X_test, y_test : the data drawn over the contours.
    figure : str
        Name of the static figure the explorer replaces on screen.
    initial : (s2, width)
        The setting shown first (a setting of ``fields``).
    ev_floor : float
        Lower end of the heat map's colour scale.

    Returns
    -------
    str
        The ``text/html`` output (:func:`page_html`).
    """
    s2_all = np.sort(table.s2.unique())
    l_all = np.sort(table.width.unique())
    heat = table.pivot(index="s2", columns="width", values="log_evidence").to_numpy()
    top = float(np.nanmax(heat))

    rows = table.set_index(["s2", "width"])
    numbers = []
    for s in fields.s2:                                # frame = i_s2 * P + i_l
        for width in fields.widths:
            row = rows.loc[(s2_all[_cells([s], s2_all)[0]], l_all[_cells([width], l_all)[0]])]
            numbers.append([format(row[column], fmt) for _, _, column, fmt in GRID_NUMBERS])
    planes, arrays = _plane_spec(fields)
    spec = {
        "figure": figure, "label": "Grid explorer: the prior variance and the RBF width",
        **planes,
        "sliders": [
            {"key": "s2", "label": "prior variance s²", "values": fields.s2.tolist(),
             "text": [readable(v) for v in fields.s2],
             "initial": _cells([initial[0]], fields.s2)[0]},
            {"key": "l", "label": "RBF width l", "values": fields.widths.tolist(),
             "text": [readable(v) for v in fields.widths],
             "initial": _cells([initial[1]], fields.widths)[0]}],
        "panels": [
            {"type": "heat", "title": "log evidence over the grid", "array": "heat",
             "rows": len(s2_all), "cols": len(l_all), "lut": "viridis",
             "row_cells": _cells(fields.s2, s2_all), "col_cells": _cells(fields.widths, l_all),
             "xlabel": "RBF width l", "ylabel": "prior variance s²",
             "xticks": _log_ticks(l_all), "yticks": _log_ticks(s2_all),
             "scale": [readable(round(ev_floor)), readable(round(top))]},
            {"type": "proba", "title": "plug-in MAP", "array": "map"},
            {"type": "proba", "title": "probit predictive", "array": "pred"}],
        "points": ["training", "test"],
        "numbers": {"keys": [k for k, _, _, _ in GRID_NUMBERS],
                    "labels": [label for _, label, _, _ in GRID_NUMBERS],
                    "values": numbers},
    }
    arrays.update({
        "heat": _scaled(np.nan_to_num(heat, nan=ev_floor), ev_floor, top).ravel(),
        "viridis": _lut("viridis").ravel(),
        "training": _points(X_train, y_train, fields.extent).ravel(),
        "test": _points(X_test, y_test, fields.extent).ravel(),
    })
    return page_html(spec, arrays)


def sweep_explorer(fields: PlaneFields, numbers, X_train, y_train, X_test, y_test, *,
                   figure: str, initial: float, labels, keys, var_range) -> str:
    """One slider over the prior variance at one width: MAP and predictive contours and the
    map of ``log10 sigma_a^2``, with ``numbers`` (one row of formatted strings per ``s2``).

    Parameters
    ----------
    fields : PlaneFields
        One width.
    numbers : sequence of sequence of str
        Per prior variance, the values shown, in the order of ``labels``.
    X_train, y_train, X_test, y_test : the data drawn over the contours.
    figure : str
        Name of the static figure the explorer replaces on screen.
    initial : float
        The prior variance shown first.
    labels, keys : sequence of str
        What each number is, and its key (``data-key`` on the page).
    var_range : (float, float)
        ``log10 sigma_a^2`` at the ends of the colour scale (whole numbers: its ticks).

    Returns
    -------
    str
    """
    if fields.widths.size != 1:
        raise ValueError("a sweep has one width")
    if len(numbers) != fields.s2.size or any(len(r) != len(labels) for r in numbers):
        raise ValueError("numbers must hold one row per prior variance, one value per label")
    lo, hi = var_range
    planes, arrays = _plane_spec(fields)
    spec = {
        "figure": figure, "label": "Prior variance explorer: MAP, predictive, activation variance",
        **planes,
        "sliders": [{"key": "s2", "label": "prior variance s²", "values": fields.s2.tolist(),
                     "text": [readable(v) for v in fields.s2],
                     "initial": int(np.argmin(np.abs(np.log(fields.s2) - np.log(initial))))}],
        "panels": [
            {"type": "scalar", "title": "log₁₀ σₐ², the activation's variance", "array": "logvar",
             "lut": "viridis", "range": [float(lo), float(hi)],
             "ticks": [[float(t), f"{t:g}".replace("-", "−")]
                       for t in np.arange(np.ceil(lo), np.floor(hi) + 1)]},
            {"type": "proba", "title": "plug-in MAP", "array": "map"},
            {"type": "proba", "title": "probit predictive", "array": "pred"}],
        "points": ["test", "training"],
        "numbers": {"keys": list(keys), "labels": list(labels),
                    "values": [list(map(str, r)) for r in numbers]},
    }
    arrays.update({
        "viridis": _lut("viridis").ravel(),
        "logvar": _scaled(np.log10(np.maximum(fields.var[0], 1e-300)), lo, hi).ravel(),
        "training": _points(X_train, y_train, fields.extent).ravel(),
        "test": _points(X_test, y_test, fields.extent).ravel(),
    })
    return page_html(spec, arrays)


def page_spec(page: str) -> dict:
    """The description an explorer's ``text/html`` output carries (what ``explorer.js`` reads)."""
    import re

    found = re.search(r'<script type="application/json">(.*?)</script>', page, re.S)
    if not found:
        raise ValueError("page must be an explorer's text/html output (page_html)")
    return json.loads(found.group(1))              # JSON reads page_html's "<\/" as "</"


def readout_text(page: str) -> str:
    """A plain-text view of what an explorer shows: the numbers at every setting, as the page
    prints them, and each width's plane (its points, and the note where it does not resolve
    the bumps). A chapter displays it with the page (:func:`bundle`), so that nbval, which
    compares text only, compares the numbers the page carries."""
    import itertools

    import pandas as pd

    spec = page_spec(page)
    sliders, numbers = spec["sliders"], spec["numbers"]
    index = pd.MultiIndex.from_tuples(list(itertools.product(*(s["text"] for s in sliders))),
                                      names=[s["label"] for s in sliders])
    table = pd.DataFrame(numbers["values"], index=index, columns=numbers["labels"])
    lines = [f"{spec['label']}: the numbers it shows at each setting", table.to_string()]
    widths = next((s["text"] for s in sliders if s["key"] == "l"), None)
    for k, plane in enumerate(spec["planes"]):
        where = f"l = {widths[k]}: " if widths else ""
        lines.append(f"plane {where}{plane['n']} x {plane['n']} points"
                     + (f". {plane['note']}" if plane["note"] else ""))
    return "\n".join(lines)


def bundle(page: str) -> dict:
    """An explorer's output for ``IPython.display.display(..., raw=True)``: ``text/html`` (the
    page) and ``text/plain`` (:func:`readout_text`, which nbval compares)."""
    return {"text/html": page, "text/plain": readout_text(page)}


# --------------------------------------------------------------------------- static frames


def _proba_colours():
    """The page's probability shading as a colour map and norm (ten bands of :func:`_bands`)."""
    from matplotlib.colors import BoundaryNorm, ListedColormap

    return ListedColormap(np.array(_bands()) / 255), BoundaryNorm(np.linspace(0, 1, 11), 10)


def _plane_panel(ax, fields: PlaneFields, p: int, logits, X, y, title: str):
    """One frame's probability contours as the page draws them (from the stored codes), at
    width ``p``'s plane."""
    from lib.book.plots import plot_data

    n = fields.n[p]
    x1 = np.linspace(fields.extent[0], fields.extent[1], n)
    x2 = np.linspace(fields.extent[2], fields.extent[3], n)
    P = 1 / (1 + np.exp(-decode_logits(encode_logits(logits)).reshape(n, n)))
    cmap, norm = _proba_colours()
    ax.contourf(x1, x2, P, levels=np.linspace(0, 1, 11), cmap=cmap, norm=norm)
    cs = ax.contour(x1, x2, P, levels=list(LEVELS), colors="k",
                    linewidths=[2.0 if v == 0.5 else 1.0 for v in LEVELS])
    ax.clabel(cs, fmt="%.1f", fontsize=9)
    plot_data(ax, X, y, size=5)
    ax.set_aspect("equal")
    ax.set_title(title if fields.resolved[p] else f"{title}\n(its bumps too narrow to draw)",
                 loc="left")
    return ax


def _proba_colour_bar(fig, axes):
    from matplotlib.cm import ScalarMappable

    cmap, norm = _proba_colours()
    fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=axes[-1], location="bottom",
                 ticks=[0, 0.3, 0.5, 0.7, 1], label="$P(y = 1 \\mid \\mathbf{x})$", shrink=0.9)


def plot_grid_frame(fig, table, fields: PlaneFields, X_train, y_train, setting, *,
                    ev_floor: float):
    """The grid explorer's frame at ``setting`` = (s2, width), as a static figure, in three
    stacked panels (legible a phone's column wide): the evidence heat map with the setting
    starred, then the MAP's and the predictive's contours."""
    from lib.book.plots import plot_grid_heatmap

    i = int(np.argmin(np.abs(np.log(fields.s2) - np.log(setting[0]))))
    j = int(np.argmin(np.abs(np.log(fields.widths) - np.log(setting[1]))))
    axes = fig.subplots(3, 1, height_ratios=(0.9, 1, 1.12))
    axes[0].set_box_aspect(0.85)
    plot_grid_heatmap(axes[0], table, "log_evidence", best=(fields.s2[i], fields.widths[j]),
                      vmin=ev_floor, colorbar_label="log evidence")
    axes[0].get_legend().remove()
    axes[0].set_title(f"$s^2$ = {readable(fields.s2[i])}, $l$ = {readable(fields.widths[j])} "
                      "(star)", loc="left")
    for ax, logits, title in ((axes[1], fields.map_logits, "plug-in MAP"),
                              (axes[2], fields.pred_logits, "probit predictive")):
        _plane_panel(ax, fields, j, logits[j][i], X_train, y_train, title)
    axes[1].set_xlabel("")
    _proba_colour_bar(fig, axes[1:])
    return axes


def plot_sweep_frame(fig, fields: PlaneFields, X, y, s2: float, *, var_range):
    """The sweep explorer's frame at the prior variance of ``fields`` nearest ``s2``, as a static
    figure, in three stacked panels as the page shows them: ``log10 sigma_a^2`` (clipped to
    ``var_range``), then the MAP's and the predictive's contours over ``(X, y)``."""
    from lib.book.plots import plot_data

    n = fields.n[0]
    x1 = np.linspace(fields.extent[0], fields.extent[1], n)
    x2 = np.linspace(fields.extent[2], fields.extent[3], n)
    k = int(np.argmin(np.abs(np.log(fields.s2) - np.log(s2))))
    axes = fig.subplots(3, 1, sharex=True, height_ratios=(1, 1, 1.12))
    where = f"$s^2$ = {readable(fields.s2[k])}"
    logvar = np.log10(np.maximum(fields.var[0][k], 1e-300)).reshape(n, n)
    mesh = axes[0].contourf(x1, x2, np.clip(logvar, *var_range),
                            levels=np.linspace(*var_range, 17))
    plot_data(axes[0], X, y, size=2)
    axes[0].set(xlabel="", ylabel="$x_2$", aspect="equal")
    axes[0].set_title(f"variance of $a$, {where}", loc="left")
    fig.colorbar(mesh, ax=axes[0], location="right", label="$\\log_{10}\\sigma_a^2$",
                 ticks=np.arange(np.ceil(var_range[0]), np.floor(var_range[1]) + 1),
                 shrink=0.8)
    for ax, logits, title in ((axes[1], fields.map_logits, "plug-in MAP"),
                              (axes[2], fields.pred_logits, "probit predictive")):
        _plane_panel(ax, fields, 0, logits[0][k], X, y, f"{title}, {where}")
    axes[1].set_xlabel("")
    _proba_colour_bar(fig, axes[1:])
    return axes
