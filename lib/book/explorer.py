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
"""
from __future__ import annotations

import base64
import html
import json
import zlib
from dataclasses import dataclass

import numpy as np

from lib._validate import as_labels, as_matrix

#: Probability levels of the contour lines (as :func:`lib.book.plots.plot_probability_contours`).
LEVELS = (0.1, 0.3, 0.5, 0.7, 0.9)
#: The asinh code of a logit ``a``: ``127 + 127 asinh(a / SCALE) / asinh(MAX / SCALE)``.
LOGIT_SCALE = 1e-3
LOGIT_MAX = 12.0
CLASS_COLOURS = ("#0072B2", "#D55E00")


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


@dataclass(frozen=True)
class PlaneFields:
    """Logits and activation variances over a grid of the input plane, at several settings.

    Attributes
    ----------
    s2 : ndarray, shape (S,)
        Prior variances, ascending.
    widths : ndarray, shape (P,)
        RBF widths, ascending.
    extent : tuple of float
        ``(x1_min, x1_max, x2_min, x2_max)`` of the plane grid.
    n : int
        Grid points per axis of the plane.
    map_logits, pred_logits, var : ndarray, shape (P, S, n * n)
        MAP logits ``mu_a``, probit-predictive logits ``rho mu_a`` and ``sigma_a^2`` at each
        plane point (rows of :func:`lib.book.plots.input_grid`), per width and prior variance.
    """

    s2: np.ndarray
    widths: np.ndarray
    extent: tuple
    n: int
    map_logits: np.ndarray
    pred_logits: np.ndarray
    var: np.ndarray


def plane_fields(X_train, y_train, s2_values, widths, *, n: int = 36,
                 margin: float = 0.5) -> PlaneFields:
    """MAP and predictive logits and ``sigma_a^2`` on an ``n`` x ``n`` plane, at each setting.

    Each width is one chain of the grid engine (:mod:`lib.fastgrid`), the plane's points in
    the place of the test inputs: the Laplace fit of :func:`lib.laplace.fit_laplace`,
    warm-started along ``s2``, equal to it to 1e-8 (as :func:`lib.hyper.evidence_grid`).

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
        Plane points per axis.
    margin : float
        Added to each side of the training inputs' range (:func:`lib.book.plots.input_grid`).

    Returns
    -------
    PlaneFields
    """
    from lib.book.plots import input_grid
    from lib.fastgrid import chain_fits
    from lib.predictive import probit_logits

    X_train = as_matrix(X_train, "X_train", n_cols=2)
    y_train = as_labels(y_train, "y_train", length=X_train.shape[0])
    s2 = np.sort(np.asarray(s2_values, dtype=float))
    widths = np.sort(np.asarray(widths, dtype=float))
    if s2.size == 0 or widths.size == 0 or s2.min() <= 0 or widths.min() <= 0:
        raise ValueError("s2_values and widths must be non-empty and positive")
    G1, G2, plane = input_grid(X_train, n=n, margin=margin)
    mu = np.empty((widths.size, s2.size, plane.shape[0]))
    var = np.empty_like(mu)
    for p, width in enumerate(widths):                 # one chain of the engine per width
        for k, fit in enumerate(chain_fits(X_train, y_train, plane, s2, width, s2.max())):
            mu[p, k], var[p, k] = fit.mu_test, np.maximum(fit.var_test, 0.0)
    extent = (float(G1.min()), float(G1.max()), float(G2.min()), float(G2.max()))
    return PlaneFields(s2=s2, widths=widths, extent=extent, n=int(n), map_logits=mu,
                       pred_logits=probit_logits(mu.ravel(), var.ravel()).reshape(mu.shape),
                       var=var)


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


def _plane_spec(fields: PlaneFields) -> dict:
    return {"extent": list(fields.extent), "n": fields.n, "levels": list(LEVELS),
            "bands": _bands(), "classes": list(CLASS_COLOURS),
            "code": {"scale": LOGIT_SCALE, "max": LOGIT_MAX}}


def _cells(values, grid) -> list:
    """The index in ``grid`` of each of ``values`` (each must be a point of ``grid``)."""
    idx = [int(np.argmin(np.abs(np.log(grid) - np.log(v)))) for v in values]
    if not np.allclose(grid[idx], values, rtol=1e-12):
        raise ValueError("every setting of fields must be a point of table")
    return idx


def grid_explorer(table, fields: PlaneFields, X_train, y_train, X_test, y_test, *,
                  figure: str, initial, ev_floor: float) -> str:
    """The grid chapter's explorer: two sliders, ``s2`` and ``l``, over ``fields``' settings.

    Shows the evidence heat map of ``table`` (the whole grid, clipped below at ``ev_floor``)
    with the current setting marked, the MAP and predictive contours over the training or the
    test points, and the setting's log evidence, accuracies and test log-likelihoods (from
    ``table``, formatted as the chapter prints them).

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
            numbers.append([f"{row.log_evidence:.2f}", f"{row.train_accuracy:.3f}",
                            f"{row.test_accuracy:.3f}", f"{row.test_ll_map:.3f}",
                            f"{row.test_ll_pred:.3f}"])
    order = lambda a: np.transpose(a, (1, 0, 2))       # (P, S, .) -> (S, P, .)
    spec = {
        "figure": figure, "label": "Grid explorer: the prior variance and the RBF width",
        **_plane_spec(fields),
        "sliders": [
            {"key": "s2", "label": "prior variance s²", "values": fields.s2.tolist(),
             "text": [f"{v:.3g}" for v in fields.s2],
             "initial": _cells([initial[0]], fields.s2)[0]},
            {"key": "l", "label": "RBF width l", "values": fields.widths.tolist(),
             "text": [f"{v:.3g}" for v in fields.widths],
             "initial": _cells([initial[1]], fields.widths)[0]}],
        "panels": [
            {"type": "heat", "title": "log evidence over the grid", "array": "heat",
             "rows": len(s2_all), "cols": len(l_all), "lut": "viridis",
             "row_cells": _cells(fields.s2, s2_all), "col_cells": _cells(fields.widths, l_all),
             "xlabel": "RBF width l", "ylabel": "prior variance s²",
             "xticks": _log_ticks(l_all), "yticks": _log_ticks(s2_all),
             "scale": [f"{ev_floor:.0f}", f"{top:.0f}"]},
            {"type": "proba", "title": "plug-in MAP", "array": "map"},
            {"type": "proba", "title": "probit predictive", "array": "pred"}],
        "points": ["training", "test"],
        "numbers": {"keys": ["log_evidence", "train_accuracy", "test_accuracy",
                             "test_ll_map", "test_ll_pred"],
                    "labels": ["log evidence", "training accuracy", "test accuracy",
                               "test log-likelihood, MAP", "test log-likelihood, predictive"],
                    "values": numbers},
    }
    arrays = {
        "heat": _scaled(np.nan_to_num(heat, nan=ev_floor), ev_floor, top).ravel(),
        "viridis": _lut("viridis").ravel(),
        "map": encode_logits(order(fields.map_logits)).ravel(),
        "pred": encode_logits(order(fields.pred_logits)).ravel(),
        "training": _points(X_train, y_train, fields.extent).ravel(),
        "test": _points(X_test, y_test, fields.extent).ravel(),
    }
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
        ``log10 sigma_a^2`` at the ends of the colour scale.

    Returns
    -------
    str
    """
    if fields.widths.size != 1:
        raise ValueError("a sweep has one width")
    if len(numbers) != fields.s2.size or any(len(r) != len(labels) for r in numbers):
        raise ValueError("numbers must hold one row per prior variance, one value per label")
    lo, hi = var_range
    spec = {
        "figure": figure, "label": "Prior variance explorer: MAP, predictive, activation variance",
        **_plane_spec(fields),
        "sliders": [{"key": "s2", "label": "prior variance s²", "values": fields.s2.tolist(),
                     "text": [f"{v:.3g}" for v in fields.s2],
                     "initial": int(np.argmin(np.abs(np.log(fields.s2) - np.log(initial))))}],
        "panels": [
            {"type": "scalar", "title": "log₁₀ σₐ², the activation's variance", "array": "logvar",
             "lut": "viridis", "scale": [f"{lo:g}", f"{hi:g}"]},
            {"type": "proba", "title": "plug-in MAP", "array": "map"},
            {"type": "proba", "title": "probit predictive", "array": "pred"}],
        "points": ["test", "training"],
        "numbers": {"keys": list(keys), "labels": list(labels),
                    "values": [list(map(str, r)) for r in numbers]},
    }
    arrays = {
        "viridis": _lut("viridis").ravel(),
        "map": encode_logits(fields.map_logits[0]).ravel(),
        "pred": encode_logits(fields.pred_logits[0]).ravel(),
        "logvar": _scaled(np.log10(np.maximum(fields.var[0], 1e-300)), lo, hi).ravel(),
        "training": _points(X_train, y_train, fields.extent).ravel(),
        "test": _points(X_test, y_test, fields.extent).ravel(),
    }
    return page_html(spec, arrays)


# --------------------------------------------------------------------------- static frames


def _plane_panel(ax, fields: PlaneFields, logits, X, y, title: str):
    """One frame's probability contours as the page draws them (from the stored codes)."""
    from lib.book.plots import plot_data

    x1 = np.linspace(fields.extent[0], fields.extent[1], fields.n)
    x2 = np.linspace(fields.extent[2], fields.extent[3], fields.n)
    P = 1 / (1 + np.exp(-decode_logits(encode_logits(logits)).reshape(fields.n, fields.n)))
    ax.contourf(x1, x2, P, levels=np.linspace(0, 1, 11), cmap="cividis", alpha=0.35)
    cs = ax.contour(x1, x2, P, levels=list(LEVELS), colors="k", linewidths=1.0)
    ax.clabel(cs, fmt="%.1f", fontsize=9)
    plot_data(ax, X, y, size=5)
    ax.set_title(title, loc="left")
    return ax


def plot_grid_frame(fig, table, fields: PlaneFields, X_train, y_train, setting, *,
                    ev_floor: float):
    """The grid explorer's frame at ``setting`` = (s2, width), as a static figure: the evidence
    heat map with the setting starred above, the MAP and the predictive contours below (two
    rows, so that a printed page, a column wide, shows them legibly)."""
    from lib.book.plots import plot_grid_heatmap

    i = int(np.argmin(np.abs(np.log(fields.s2) - np.log(setting[0]))))
    j = int(np.argmin(np.abs(np.log(fields.widths) - np.log(setting[1]))))
    top, bottom = fig.subfigures(2, 1, height_ratios=(1.05, 1))
    axes = [top.subplots(), *bottom.subplots(1, 2)]
    axes[0].set_box_aspect(0.85)                  # the heat map centred, not a column wide
    plot_grid_heatmap(axes[0], table, "log_evidence", best=(fields.s2[i], fields.widths[j]),
                      vmin=ev_floor, colorbar_label="log evidence")
    axes[0].get_legend().remove()
    axes[0].set_title(f"$s^2$ = {fields.s2[i]:.3g}, $l$ = {fields.widths[j]:.3g} (star)",
                      loc="left")
    for ax, logits, title in ((axes[1], fields.map_logits, "plug-in MAP"),
                              (axes[2], fields.pred_logits, "probit predictive")):
        _plane_panel(ax, fields, logits[j, i], X_train, y_train, title)
    axes[2].set_ylabel("")
    return axes


def plot_sweep_frame(fig, fields: PlaneFields, X, y, s2: float, *, var_range):
    """The sweep explorer's frame at the prior variance of ``fields`` nearest ``s2``, as a static
    figure: the MAP and the predictive contours over ``(X, y)`` above, ``log10 sigma_a^2``
    (clipped to ``var_range``) below (two rows, legible a printed column wide)."""
    from lib.book.plots import plot_data

    x1 = np.linspace(fields.extent[0], fields.extent[1], fields.n)
    x2 = np.linspace(fields.extent[2], fields.extent[3], fields.n)
    k = int(np.argmin(np.abs(np.log(fields.s2) - np.log(s2))))
    top, bottom = fig.subfigures(2, 1)
    axes = [*top.subplots(1, 2, sharex=True, sharey=True), bottom.subplots()]
    for ax, logits, title in ((axes[0], fields.map_logits, "plug-in MAP"),
                              (axes[1], fields.pred_logits, "probit predictive")):
        _plane_panel(ax, fields, logits[0, k], X, y, f"{title}, $s^2$ = {fields.s2[k]:g}")
    axes[1].set_ylabel("")
    logvar = np.log10(np.maximum(fields.var[0, k], 1e-300)).reshape(fields.n, fields.n)
    mesh = axes[2].contourf(x1, x2, np.clip(logvar, *var_range),
                            levels=np.linspace(*var_range, 17))
    plot_data(axes[2], X, y, size=2)
    axes[2].set(xlabel="$x_1$", ylabel="$x_2$", box_aspect=1)
    axes[2].set_title(f"variance of $a$, $s^2$ = {fields.s2[k]:g}", loc="left")
    bottom.colorbar(mesh, ax=axes[2], location="right", label="$\\log_{10}\\sigma_a^2$")
    return axes
