"""Figures shared by the chapters: the data, and probability contours of a classifier.

Each function draws on a given Matplotlib ``Axes`` and returns it, so a chapter composes
panels and ends its cell with ``plt.show()``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from lib._validate import as_labels, as_matrix

CLASS_COLOURS = ("#0072B2", "#D55E00")        # Okabe-Ito blue and vermillion (as the style sheet)
#: The book's Matplotlib style sheet (sizes for the text column, colour-blind-safe colours).
STYLE = Path(__file__).with_name("book.mplstyle")
#: Largest natural width of a figure, in inches at the style's 100 dpi: shown in the 660 px
#: column at 1280 px, it keeps at least 60 % of its size.
MAX_WIDTH_IN = 11.0


def use_book_style() -> None:
    """Apply the book's style sheet (:data:`STYLE`) to every later figure of the session."""
    import matplotlib.pyplot as plt

    plt.style.use(STYLE)



def plot_data(ax, X, y, *, size: float = 12, alpha: float = 0.8, labels=("y = 0", "y = 1"), **kwargs):
    """Scatter the two classes of a 2-D data set.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    X : array_like, shape (N, 2)
    y : array_like, shape (N,)
        Labels 0/1.
    """
    X = as_matrix(X, "X", n_cols=2)
    y = as_labels(y, "y", length=X.shape[0])
    for k in (0, 1):
        m = y == k
        ax.scatter(X[m, 0], X[m, 1], s=size, c=CLASS_COLOURS[k], alpha=alpha, label=labels[k],
                   edgecolors="none", **kwargs)
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    return ax


def input_grid(X, *, n: int = 200, margin: float = 0.5, extent=None):
    """A regular grid covering the inputs.

    Parameters
    ----------
    X : array_like, shape (N, 2)
    n : int
        Points per axis.
    margin : float
        Added on each side of the data's range (ignored when ``extent`` is given).
    extent : (x1_min, x1_max, x2_min, x2_max), optional

    Returns
    -------
    G1, G2 : ndarray, shape (n, n)
        Mesh coordinates.
    points : ndarray, shape (n * n, 2)
        The mesh as input rows.
    """
    if extent is None:
        X = as_matrix(X, "X", n_cols=2)
        lo, hi = X.min(0) - margin, X.max(0) + margin
        extent = (lo[0], hi[0], lo[1], hi[1])
    g1 = np.linspace(extent[0], extent[1], n)
    g2 = np.linspace(extent[2], extent[3], n)
    G1, G2 = np.meshgrid(g1, g2)
    return G1, G2, np.column_stack([G1.ravel(), G2.ravel()])


def plot_probability_contours(
    ax,
    predict: Callable[[np.ndarray], np.ndarray],
    X,
    y=None,
    *,
    levels=(0.1, 0.3, 0.5, 0.7, 0.9),
    n: int = 200,
    extent=None,
    filled: bool = False,
    title: str | None = None,
    clabel_fontsize: float = 8,
):
    """Contours of ``P(y = 1 | x)`` over the input plane, with the data on top.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    predict : callable
        Maps inputs of shape (G, 2) to probabilities of shape (G,).
    X : array_like, shape (N, 2)
        Points to draw (and to size the grid from, unless ``extent`` is given).
    y : array_like, shape (N,), optional
        Their labels; without them the points are not drawn.
    levels : sequence of float
        Probability levels of the labelled contour lines.
    n : int
        Grid points per axis.
    extent : (x1_min, x1_max, x2_min, x2_max), optional
    filled : bool
        Also shade the probability, dark blue (0) to yellow (1) (cividis).
    title : str, optional
    clabel_fontsize : float
        Font size (points) of the contour labels.
    """
    G1, G2, pts = input_grid(X, n=n, extent=extent)
    P = np.asarray(predict(pts)).reshape(G1.shape)
    if filled:
        # cividis: its lightness rises with P, so the shading reads in greyscale and for
        # colour-blind readers (dark blue near 0, yellow near 1)
        ax.contourf(G1, G2, P, levels=np.linspace(0, 1, 11), cmap="cividis", alpha=0.35)
    cs = ax.contour(G1, G2, P, levels=list(levels), colors="k", linewidths=1.0)
    ax.clabel(cs, fmt="%.1f", fontsize=clabel_fontsize)
    if y is not None:
        plot_data(ax, X, y)
    ax.set_xlim(G1.min(), G1.max())
    ax.set_ylim(G2.min(), G2.max())
    if title:
        ax.set_title(title)
    return ax


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

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    table : pandas.DataFrame
        One row per grid point with columns ``s2``, ``width`` and ``value`` (the layout of
        :func:`lib.hyper.grid.evidence_grid`).
    value : str
        Column to colour by.
    best : (s2, width), optional
        Grid point to mark with a star (e.g. the highest evidence).
    annotate : bool
        Write each cell's value (for small grids), formatted with ``fmt``.
    cmap, vmin, vmax : colour map and its limits.
    colorbar_label, title : str, optional
    annot_fontsize : float
        Font size (points) of the cell values written by ``annotate``.
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
        i = int(np.argmin(np.abs(np.log(grid.index.to_numpy()) - np.log(best[0]))))
        j = int(np.argmin(np.abs(np.log(grid.columns.to_numpy()) - np.log(best[1]))))
        ax.plot(j + 0.5, i + 0.5, marker="*", markersize=16, color="white", markeredgecolor="black",
                linestyle="none", label="highest evidence")
        ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    ax.set_xlabel("RBF width $l$")
    ax.set_ylabel("prior variance $s^2$")
    if title:
        ax.set_title(title)
    return ax
