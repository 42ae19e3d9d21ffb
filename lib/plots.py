"""Figures shared by the chapters: the data, and probability contours of a classifier.

Each function draws on a given Matplotlib ``Axes`` and returns it, so a chapter composes
panels and ends its cell with ``plt.show()``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ._validate import as_labels, as_matrix

CLASS_COLOURS = ("tab:blue", "tab:red")


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
        Also shade the probability with a colour map.
    title : str, optional
    """
    G1, G2, pts = input_grid(X, n=n, extent=extent)
    P = np.asarray(predict(pts)).reshape(G1.shape)
    if filled:
        ax.contourf(G1, G2, P, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.35)
    cs = ax.contour(G1, G2, P, levels=list(levels), colors="k", linewidths=1.0)
    ax.clabel(cs, fmt="%.1f", fontsize=8)
    if y is not None:
        plot_data(ax, X, y)
    ax.set_xlim(G1.min(), G1.max())
    ax.set_ylim(G2.min(), G2.max())
    if title:
        ax.set_title(title)
    return ax
