"""Figures shared by the chapters: the data, and probability contours of a classifier.

Each function draws on a given Matplotlib ``Axes`` and returns it, so a chapter composes
panels and ends its cell with ``plt.show()``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from lib._validate import as_design_labels, as_matrix
from lib.book.display import readable

CLASS_COLOURS = ("#0072B2", "#D55E00")        # Okabe-Ito blue and vermillion (as the style sheet)
#: The book's Matplotlib style sheet (sizes for the text column, colour-blind-safe colours).
STYLE = Path(__file__).with_name("book.mplstyle")
#: Largest natural width of a figure, in inches at the style's 100 dpi: shown in a 390 px phone's
#: column it keeps at least 60 % of its size (tests/test_chapter_layout.py checks the PNGs).
MAX_WIDTH_IN = 5.7
#: Probability levels of the book's contour lines (the explorers' too).
PROBABILITY_LINES = (0.1, 0.3, 0.5, 0.7, 0.9)
#: The shading of ``P(y = 1 | x)``, in ten bands: cividis (its lightness rises with P, so it
#: reads in greyscale and for colour-blind readers: dark blue near 0, yellow near 1) at 35 %.
SHADE_CMAP, SHADE_ALPHA = "cividis", 0.35


#: Pixels stored per pixel of the style's 100 dpi (issue 36.17): a chapter's PNG holds twice the
#: pixels of its natural size and says its natural size in the output's metadata (IPython's
#: 'retina' PNG), so the page lays it out as before and a screen with two device pixels to the CSS
#: px, or paper, gets the detail. Print sets a figure at the size it was drawn (an inch per 100
#: natural px, scripts/print_pdf.py): 200 dots to the inch, more where it shrinks a tall one, and
#: its text at the point size the style gives it.
PIXEL_SCALE = 2


def use_book_style() -> None:
    """Apply the book's style sheet (:data:`STYLE`) to every later figure of the session, and in
    a Jupyter kernel store each figure as a PNG of :data:`PIXEL_SCALE` times its natural pixels,
    with its natural size as the output's width and height (sharp in print, same on the page)."""
    import matplotlib
    import matplotlib.pyplot as plt

    shell = _ipython_shell()
    if shell is not None and matplotlib.get_backend() in (
            "inline", "module://matplotlib_inline.backend_inline"):
        # the inline backend sets its formats and rcParams once, when first imported: before the
        # style and the formatter below, so that neither is overwritten afterwards
        import matplotlib_inline.backend_inline  # noqa: F401
    plt.style.use(STYLE)
    if shell is not None:
        from matplotlib.figure import Figure

        shell.display_formatter.formatters["image/png"].for_type(Figure, sharp_png)


def _ipython_shell():
    try:
        from IPython import get_ipython
    except ImportError:                        # matplotlib without IPython: nothing to register
        return None
    shell = get_ipython()
    return shell if shell is not None and hasattr(shell, "display_formatter") else None


def sharp_png(fig, scale: float = None):
    """``fig`` as a base64 PNG of ``scale`` (default :data:`PIXEL_SCALE`) times its natural pixels
    and the output metadata giving its natural size in px: IPython's PNG formatter for the book's
    figures (None for an empty figure, as IPython's own)."""
    import base64
    import io
    import struct

    if not fig.axes and not fig.lines:
        return None
    scale = PIXEL_SCALE if scale is None else scale
    buffer = io.BytesIO()
    fig.canvas.print_figure(buffer, format="png", dpi=fig.dpi * scale, bbox_inches="tight",
                            facecolor=fig.get_facecolor(), edgecolor=fig.get_edgecolor())
    data = buffer.getvalue()
    width, height = struct.unpack(">II", data[16:24])
    return (base64.b64encode(data).decode("ascii"),
            {"width": round(width / scale), "height": round(height / scale)})


def plot_data(ax, X, y, *, size: float = 12, alpha: float = 0.8, labels=("y = 0", "y = 1"), **kwargs):
    """Scatter the two classes of a 2-D data set, inputs ``X`` (N, 2) and labels ``y`` (N,) of 0/1,
    on the Axes ``ax``."""
    X, y = as_design_labels(X, y, n_cols=2)
    for k in (0, 1):
        m = y == k
        ax.scatter(X[m, 0], X[m, 1], s=size, c=CLASS_COLOURS[k], alpha=alpha, label=labels[k],
                   edgecolors="none", **kwargs)
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    return ax


def input_grid(X, *, n: int = 200, margin: float = 0.5, extent=None):
    """A regular grid of ``n`` points per axis covering the inputs ``X`` (N, 2), ``margin`` added
    on each side of their range, or over ``extent`` = ``(x1_min, x1_max, x2_min, x2_max)`` if
    given: the mesh coordinates ``G1``, ``G2`` (n, n) and the mesh as input rows (n * n, 2)."""
    if extent is None:
        X = as_matrix(X, "X", n_cols=2)
        lo, hi = X.min(0) - margin, X.max(0) + margin
        extent = (lo[0], hi[0], lo[1], hi[1])
    g1 = np.linspace(extent[0], extent[1], n)
    g2 = np.linspace(extent[2], extent[3], n)
    G1, G2 = np.meshgrid(g1, g2)
    return G1, G2, np.column_stack([G1.ravel(), G2.ravel()])


def _probabilities(predict, X, n, extent=None):
    """The grid of :func:`input_grid` and ``predict`` on it, shaped as the mesh."""
    G1, G2, pts = input_grid(X, n=n, extent=extent)
    return G1, G2, np.asarray(predict(pts)).reshape(G1.shape)


def plot_probability_contours(ax, predict: Callable[[np.ndarray], np.ndarray], X, y=None, *,
                              levels=PROBABILITY_LINES, n: int = 200, extent=None,
                              filled: bool = False, title: str | None = None,
                              clabel_fontsize: float = 10):
    """Contours of ``P(y = 1 | x)`` over the input plane, with the data on top.

    ``predict`` maps inputs (G, 2) to probabilities (G,); ``X`` (N, 2) are the points to draw
    (and to size the grid from, unless ``extent`` is given, as in :func:`input_grid`, with ``n``
    points per axis); without their labels ``y`` (N,) they are not drawn. ``levels`` are the
    probability levels of the labelled lines, ``clabel_fontsize`` their labels' size (points);
    ``filled`` also shades the probability, dark blue (0) to yellow (1) (cividis).
    """
    G1, G2, P = _probabilities(predict, X, n, extent)
    if filled:
        _shade(ax, G1, G2, P)
    cs = ax.contour(G1, G2, P, levels=list(levels), colors="k", linewidths=1.0)
    ax.clabel(cs, fmt="%.1f", fontsize=clabel_fontsize)
    if y is not None:
        plot_data(ax, X, y)
    ax.set_xlim(G1.min(), G1.max())
    ax.set_ylim(G2.min(), G2.max())
    if title:
        ax.set_title(title)
    return ax


def relabel_where_room(ax, predict, X, *, n: int = 200, fontsize: float = 10):
    """Redraw the contour lines :func:`plot_probability_contours` drew on ``ax`` unbroken, and
    label them only where no other label or other level's line runs into the label: where the
    contours crowd, labels cannot be read. ``predict``, ``X`` and ``n`` as given to it."""
    from matplotlib.contour import ContourSet

    ax.figure.canvas.draw()                    # the labels' boxes exist once drawn
    cs = next(c for c in ax.collections if isinstance(c, ContourSet) and not c.filled)
    lines = [cs.get_transform().transform(p.vertices) for p in cs.get_paths()]
    keep, boxes = [], []
    for text, value in zip(cs.labelTexts, cs.labelCValues):
        box = text.get_window_extent().padded(2)
        own = np.argmin(np.abs(cs.levels - value))
        crossed = any(box.count_contains(v) for j, v in enumerate(lines) if j != own and len(v))
        if not crossed and not any(box.overlaps(b) for b in boxes):
            keep.append(text.get_position())
            boxes.append(box)
    levels = list(cs.levels)
    cs.remove()                                # with its labels
    G1, G2, P = _probabilities(predict, X, n)
    redrawn = ax.contour(G1, G2, P, levels=levels, colors="k", linewidths=1.0)
    if keep:
        ax.clabel(redrawn, fmt="%.1f", fontsize=fontsize, manual=keep)
    return ax


def _shade(ax, G1, G2, P):
    return ax.contourf(G1, G2, P, levels=np.linspace(0, 1, 11), cmap=SHADE_CMAP,
                       alpha=SHADE_ALPHA)


def shade_probability(ax, G1, G2, P, *, lines=PROBABILITY_LINES, linewidths=1.0):
    """``P(y = 1 | x)`` on a grid, shaded in ten bands, with unlabelled contour lines at ``lines``,
    read on :func:`probability_colorbar` (where labels would collide or sit on the data).

    ``G1``, ``G2`` and ``P`` have the grid's shape (from :func:`input_grid`); ``linewidths`` is
    one width or one per line. Returns the shading, for the colour bar.
    """
    shade = _shade(ax, G1, G2, P)
    ax.contour(G1, G2, P, levels=list(lines), colors="k", linewidths=linewidths)
    return shade


def probability_colorbar(fig, shade, ax, *, lines=PROBABILITY_LINES, linewidths=1.0,
                         label=r"$P(y = 1 \mid \mathbf{x})$"):
    """A colour bar under ``ax`` (one Axes or several) for :func:`shade_probability`'s
    ``shade``, with the contour lines at ``lines`` marked on it; returns the colour bar."""
    widths = np.broadcast_to(np.asarray(linewidths, dtype=float), (len(lines),)).tolist()
    bar = fig.colorbar(shade, ax=ax, location="bottom", shrink=0.9, aspect=30, pad=0.01,
                       ticks=(0, *lines, 1), format="%g", label=label)
    bar.add_lines(list(lines), colors=["k"] * len(lines), linewidths=widths)
    return bar


def _log_ticks(values):
    """Tick positions (cell units) and labels ``10^e`` for a log-spaced heat-map axis."""
    e = np.log10(values)
    if e.size <= 12:                                   # few cells: label every one
        return np.arange(e.size) + 0.5, [f"$10^{{{v:g}}}$" for v in np.round(e, 2)]
    positions, powers = power_ticks(values)             # many cells: whole powers of ten
    return positions, [f"$10^{{{p:g}}}$" for p in powers]


def power_ticks(values):
    """Positions (in cells, centres at ``k + 0.5``) and exponents of the whole powers of ten
    along a log-spaced axis of ``values``."""
    e = np.log10(np.asarray(values, dtype=float))
    step = (e[-1] - e[0]) / (e.size - 1)
    powers = np.arange(np.ceil(e[0] - 1e-9), np.floor(e[-1] + 1e-9) + 1)
    return (powers - e[0]) / step + 0.5, powers


def plot_grid_heatmap(ax, table, value: str, *, best=None, annotate: bool = False, fmt: str = ".0f",
                      cmap: str = "viridis", vmin=None, vmax=None, colorbar_label: str | None = None,
                      title: str | None = None, annot_fontsize: float = 7):
    """Seaborn heat map of one column of a ``(s2, width)`` grid table (report figures 4-5).

    The width ``l`` runs along x and the prior variance ``s2`` up y; both grids must be
    log-spaced (as from :func:`numpy.logspace`), and the tick labels are powers of ten.
    ``table`` (a DataFrame) has one row per grid point with columns ``s2``, ``width`` and
    ``value``, the column to colour by (the layout of :func:`lib.fastgrid.evidence_grid`);
    ``best`` = ``(s2, width)`` is starred (e.g. the highest evidence); ``annotate`` writes each
    cell's value (small grids) with ``fmt``, at ``annot_fontsize`` points; ``cmap``, ``vmin``,
    ``vmax``: the colour map and its limits.
    """
    import seaborn as sns

    if value not in table.columns:
        raise ValueError(f"value must be a column of table, got {value!r}")
    grid = table.pivot(index="s2", columns="width", values=value)   # rows: s2 ascending
    sns.heatmap(grid, ax=ax, cmap=cmap, vmin=vmin, vmax=vmax, annot=annotate, fmt=fmt,
                annot_kws={"fontsize": annot_fontsize}, cbar_kws={"label": colorbar_label or value})
    ax.invert_yaxis()                                  # small s2 at the bottom
    for axis, values in ((ax.xaxis, grid.columns.to_numpy()), (ax.yaxis, grid.index.to_numpy())):
        positions, labels = _log_ticks(values)
        axis.set_ticks(positions)
        axis.set_ticklabels(labels, rotation=0)
    if best is not None:
        i, j = _nearest(grid.index.to_numpy(), best[0]), _nearest(grid.columns.to_numpy(), best[1])
        ax.plot(j + 0.5, i + 0.5, marker="*", markersize=16, color="white", markeredgecolor="black",
                linestyle="none", label="highest evidence")
        ax.legend(loc="upper left", framealpha=0.9)
    ax.set_xlabel("RBF width $l$")
    ax.set_ylabel("prior variance $s^2$")
    if title:
        ax.set_title(title)
    return ax


# --------------------------------------------------------------------------- explorers' frames


#: The explorers' contour widths: the line at 0.5 thick.
_THICK_HALF = [2.0 if v == 0.5 else 1.0 for v in PROBABILITY_LINES]


def _plane_panel(ax, fields, p: int, logits, X, y, title: str):
    """Probability shading and contours, as the explorers draw them, of ``logits`` on width
    ``p``'s plane of ``fields`` (a :class:`lib.book.explorer.PlaneFields`); returns the
    shading."""
    from scipy.special import expit

    x1, x2 = _plane_axes(fields, p)
    P = expit(np.asarray(logits).reshape(x2.size, x1.size))
    shade = _shade(ax, x1, x2, P)
    cs = ax.contour(x1, x2, P, levels=list(PROBABILITY_LINES), colors="k",
                    linewidths=_THICK_HALF)
    ax.clabel(cs, fmt="%.1f", fontsize=9)
    plot_data(ax, X, y, size=5)
    ax.set_aspect("equal")
    ax.set_title(title if fields.resolved[p] else f"{title}\n(its bumps too narrow to draw)",
                 loc="left")
    return shade


def _plane_axes(fields, p: int):
    e, n = fields.extent, fields.n[p]
    return np.linspace(e[0], e[1], n), np.linspace(e[2], e[3], n)


def _frame_planes(fig, axes, fields, p: int, k: int, X, y, where: str = ""):
    """The MAP's and the predictive's panels of a frame (width ``p``, prior variance ``k``),
    with the shading's colour bar under them."""
    for ax, logits, title in ((axes[0], fields.map_logits, "plug-in MAP"),
                              (axes[1], fields.pred_logits, "probit predictive")):
        shade = _plane_panel(ax, fields, p, logits[p][k], X, y, title + where)
    axes[0].set_xlabel("")
    probability_colorbar(fig, shade, axes[-1], linewidths=_THICK_HALF)


def _nearest(grid, value) -> int:
    return int(np.argmin(np.abs(np.log(grid) - np.log(value))))


def plot_grid_frame(fig, table, fields, X_train, y_train, setting, *, ev_floor: float):
    """The grid explorer's frame (:func:`lib.book.explorer.grid_explorer`) at ``setting`` =
    (s2, width) of ``fields``, as a static figure, in three stacked panels (legible a phone's
    column wide): the evidence heat map of ``table`` with the setting starred, then the MAP's
    and the predictive's contours."""
    i, j = _nearest(fields.s2, setting[0]), _nearest(fields.widths, setting[1])
    axes = fig.subplots(3, 1, height_ratios=(0.9, 1, 1.12))
    axes[0].set_box_aspect(0.85)
    plot_grid_heatmap(axes[0], table, "log_evidence", best=(fields.s2[i], fields.widths[j]),
                      vmin=ev_floor, colorbar_label="log evidence")
    axes[0].get_legend().remove()
    axes[0].set_title(f"$s^2$ = {readable(fields.s2[i])}, $l$ = "
                      f"{readable(fields.widths[j])} (star)", loc="left")
    _frame_planes(fig, axes[1:], fields, j, i, X_train, y_train)
    return axes


def plot_sweep_frame(fig, fields, X, y, s2: float, *, var_range):
    """The sweep explorer's frame (:func:`lib.book.explorer.sweep_explorer`) at the prior
    variance of ``fields`` nearest ``s2``, as a static figure, in three stacked panels:
    ``log10 sigma_a^2`` (clipped to ``var_range``), then the MAP's and the predictive's contours
    over ``(X, y)``."""
    k = _nearest(fields.s2, s2)
    x1, x2 = _plane_axes(fields, 0)
    axes = fig.subplots(3, 1, sharex=True, height_ratios=(1, 1, 1.12))
    where = f"$s^2$ = {readable(fields.s2[k])}"
    logvar = np.log10(np.maximum(fields.var[0][k], 1e-300)).reshape(x2.size, x1.size)
    mesh = axes[0].contourf(x1, x2, np.clip(logvar, *var_range),
                            levels=np.linspace(*var_range, 17))
    plot_data(axes[0], X, y, size=2)
    axes[0].set(xlabel="", ylabel="$x_2$", aspect="equal")
    axes[0].set_title(f"variance of $a$, {where}", loc="left")
    fig.colorbar(mesh, ax=axes[0], location="right", label="$\\log_{10}\\sigma_a^2$",
                 ticks=np.arange(np.ceil(var_range[0]), np.floor(var_range[1]) + 1),
                 shrink=0.8)
    _frame_planes(fig, axes[1:], fields, 0, k, X, y, f", {where}")
    return axes
