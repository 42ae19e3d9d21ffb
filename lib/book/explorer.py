"""The interactive explorers' fields and numbers, computed in a chapter (issue 21).

A chapter precomputes, over a few settings of the hyper-parameters, the MAP and predictive
logits and the activation variance on a coarse grid of the input plane (:func:`plane_fields`),
and the numbers to show at each setting. :func:`grid_explorer` and :func:`sweep_explorer`
return them as one output, for ``IPython.display.display(..., raw=True)``: a description of
what the explorer shows (:data:`MIME`: its sliders, numbers and planes, the arrays as uint8,
deflated and base64-encoded) and a ``text/plain`` table of the numbers it shows
(:func:`readout_text`), which the chapters' regression test (nbval) compares. The book's
extension ``_ext/explorer.py`` turns the description into the page's ``text/html`` (drawn by
``_assets/js/explorer.js`` in place of the static figure named by ``figure``, which a printed
copy and a reader without JavaScript see: :func:`lib.book.plots.plot_grid_frame`,
:func:`lib.book.plots.plot_sweep_frame`); a downloaded notebook shows the table.

Logits are stored on an ``asinh`` scale (:func:`encode_logits`): 127 codes per sign, fine near
zero (the decision boundary of a flat fit) and coarse in the tails, about 8 % of the logit per
code.

Each width gets the plane its bumps need (:func:`plane_size`): a grid step no larger than the
width, up to ``N_MAX`` points per axis. A width narrower than that cannot be drawn: its plane
shows the classifier between the training points, where every bump has faded
(:func:`plane_fields`), and the page says so. Numbers are printed for reading
(:func:`lib.book.display.readable`: ``10⁴``, ``4 790``, ``0.00575``).
"""
from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass

import numpy as np

from lib._validate import as_design_labels, prior_values, width_values
from lib.book.display import readable
from lib.book.plots import _nearest, input_grid

#: The output's media type: what ``_ext/explorer.py`` turns into the page.
MIME = "application/vnd.blc.explorer+json"
#: The asinh code of a logit ``a``: ``127 + 127 asinh(a / SCALE) / asinh(MAX / SCALE)``.
LOGIT_SCALE = 1e-3
LOGIT_MAX = 12.0
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


def _scaled(values, lo, hi) -> np.ndarray:
    """``values`` mapped linearly from ``[lo, hi]`` to uint8 0..255, clipped."""
    t = (np.asarray(values, dtype=float) - lo) / (hi - lo)
    return np.rint(255 * np.clip(t, 0, 1)).astype(np.uint8)


def _packed(codes) -> str:
    """uint8 ``codes``, flattened, deflated and base64-encoded."""
    return base64.b64encode(zlib.compress(np.ascontiguousarray(codes, np.uint8).tobytes(), 9)
                            ).decode("ascii")


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

    ``s2`` (S,) and ``widths`` (P,): the prior variances and RBF widths, ascending; ``extent``
    ``(x1_min, x1_max, x2_min, x2_max)`` of the plane grids; ``n`` and ``resolved`` (P-tuples):
    each width's points per axis (:func:`plane_size`) and whether its plane resolves its bumps
    (where it does not, the plane holds the classifier between the training points,
    :func:`plane_fields`); ``map_logits``, ``pred_logits``, ``var``: P arrays (S, n[p] ** 2) of
    the MAP logits ``mu_a``, probit-predictive logits ``rho mu_a`` and ``sigma_a^2`` at each
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
    warm-started along ``s2``, equal to it to 1e-8 (as :func:`lib.fastgrid.evidence_grid`). Each
    width's plane has the points its bumps need (:func:`plane_size`). At a width too narrow for
    ``n_max`` points the plane has ``n`` points, and a point within ``FADED`` widths of a
    training input takes the values of the nearest point beyond: the plane shows the classifier
    between the training points, not its bumps, which no drawing of that plane could show (it
    would alias them into a scatter of diamonds).

    ``X_train`` (N, 2) are the training inputs (also the RBF centres), ``y_train`` (N,);
    ``s2_values`` (S,) and ``widths`` (P,) positive (sorted here); ``n`` and ``n_max`` the fewest
    and most plane points per axis; ``margin`` is added to each side of the training inputs'
    range (:func:`lib.book.plots.input_grid`). Returns :class:`PlaneFields`.
    """
    from lib.fastgrid import chain_fits
    from lib.likelihood import LOGISTIC

    X_train, y_train = as_design_labels(X_train, y_train, ("X_train", "y_train"), n_cols=2)
    s2, widths = prior_values(s2_values, "s2_values"), width_values(widths, "widths")
    G1, G2, _ = input_grid(X_train, n=2, margin=margin)
    extent = (float(G1.min()), float(G1.max()), float(G2.min()), float(G2.max()))
    per_width = []                                     # (n, resolved, mu, pred, var)
    for width in widths:                               # one chain of the engine per width
        n_p, ok = plane_size(extent, width, n_min=n, n_max=n_max)
        _, _, plane = input_grid(X_train, n=n_p, extent=extent)
        mu = np.empty((s2.size, plane.shape[0]))
        var = np.empty_like(mu)
        for k, fit in enumerate(chain_fits(X_train, y_train, plane, s2, width, s2.max())):
            mu[k], var[k] = fit.mu_test, np.maximum(fit.var_test, 0.0)
        if not ok:
            mu, var = _between_bumps(plane, X_train, width, mu, var)
        per_width.append((n_p, ok, mu, LOGISTIC.predictive_logits(mu, var), var))  # probit approx.
    sizes, resolved, mus, preds, variances = zip(*per_width)
    return PlaneFields(s2=s2, widths=widths, extent=extent, n=sizes, resolved=resolved,
                       map_logits=mus, pred_logits=preds, var=variances)


# --------------------------------------------------------------------------- what a page shows


def _points(X, y, extent) -> str:
    """Points as uint8 triples (x1, x2 scaled to the extent; label), packed."""
    X, y = as_design_labels(X, y, n_cols=2)
    return _packed(np.column_stack([_scaled(X[:, 0], *extent[:2]),
                                    _scaled(X[:, 1], *extent[2:]), y.astype(np.uint8)]))


def _note(width: float, step: float) -> str:
    return (f"At l = {readable(width)} the bumps are narrower than the drawing's grid step "
            f"({readable(step)}): the shading shows P(y = 1 | x) between the training points, "
            "where every bump has faded; the bump on each training point is too narrow to draw.")


def _planes(fields: PlaneFields, X_train, y_train, X_test, y_test) -> dict:
    """The planes' part of an explorer's description: per width, its plane's points per axis,
    where its frames start in the ``map`` and ``pred`` arrays (``s2`` by ``s2``) and the note
    shown where the plane does not resolve the bumps; the codes, and the points."""
    planes, offset = [], 0
    for p, width in enumerate(fields.widths):
        planes.append({"n": fields.n[p], "offset": offset, "resolved": fields.resolved[p],
                       "note": "" if fields.resolved[p] else _note(width, fields.step(p))})
        offset += fields.map_logits[p].size
    arrays = {name: _packed(np.concatenate([encode_logits(a).ravel() for a in logits]))
              for name, logits in (("map", fields.map_logits), ("pred", fields.pred_logits))}
    arrays["training"] = _points(X_train, y_train, fields.extent)
    arrays["test"] = _points(X_test, y_test, fields.extent)
    return {"extent": list(fields.extent), "planes": planes, "arrays": arrays}


def _slider(key, label, values, initial) -> dict:
    return {"key": key, "label": label, "values": values.tolist(),
            "text": [readable(v) for v in values], "initial": _cells([initial], values)[0]}


def _cells(values, grid) -> list:
    """The index in ``grid`` of each of ``values`` (each must be a point of ``grid``)."""
    idx = [_nearest(grid, v) for v in values]
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
                  figure: str, initial, ev_floor: float) -> dict:
    """The grid chapter's explorer: two sliders, ``s2`` and ``l``, over ``fields``' settings.

    Shows the evidence heat map of ``table`` (the whole grid, clipped below at ``ev_floor``)
    with the current setting marked, the MAP and predictive contours over the training or the
    test points, and the setting's log evidence, accuracies and test log-likelihoods (from
    ``table``, formatted as the chapter prints them; :data:`GRID_NUMBERS`).

    ``table`` is :func:`lib.fastgrid.evidence_grid`'s table, holding every setting of
    ``fields``; ``X_train, y_train, X_test, y_test`` the data drawn over the contours;
    ``figure`` the name of the static figure the explorer replaces on screen; ``initial`` =
    ``(s2, width)`` the setting shown first (one of ``fields``); ``ev_floor`` the lower end of
    the heat map's colour scale. Returns the output (:func:`bundle`).
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
    data = {
        "kind": "grid", "figure": figure,
        "label": "Grid explorer: the prior variance and the RBF width",
        **_planes(fields, X_train, y_train, X_test, y_test),
        "sliders": [_slider("s2", "prior variance s²", fields.s2, initial[0]),
                    _slider("l", "RBF width l", fields.widths, initial[1])],
        "heat": {"s2": s2_all.tolist(), "l": l_all.tolist(),
                 "row_cells": _cells(fields.s2, s2_all), "col_cells": _cells(fields.widths, l_all),
                 "scale": [readable(round(ev_floor)), readable(round(top))]},
        "points": ["training", "test"],
        "numbers": {"keys": [k for k, _, _, _ in GRID_NUMBERS],
                    "labels": [label for _, label, _, _ in GRID_NUMBERS], "values": numbers},
    }
    data["arrays"]["heat"] = _packed(_scaled(np.nan_to_num(heat, nan=ev_floor), ev_floor, top))
    return bundle(data)


def sweep_explorer(fields: PlaneFields, numbers, X_train, y_train, X_test, y_test, *,
                   figure: str, initial: float, labels, keys, var_range) -> dict:
    """One slider over the prior variance at one width: MAP and predictive contours and the
    map of ``log10 sigma_a^2``, with ``numbers`` (one row of formatted strings per ``s2``, in
    the order of ``labels``).

    ``fields`` holds one width; the data, ``figure`` and the output as in :func:`grid_explorer`;
    ``initial`` the prior variance shown first; ``labels`` and ``keys`` what each number is and
    its key (``data-key`` on the page); ``var_range`` ``log10 sigma_a^2`` at the ends of the
    colour scale (whole numbers: its ticks).
    """
    if fields.widths.size != 1:
        raise ValueError("a sweep has one width")
    if len(numbers) != fields.s2.size or any(len(r) != len(labels) for r in numbers):
        raise ValueError("numbers must hold one row per prior variance, one value per label")
    lo, hi = var_range
    initial = fields.s2[_nearest(fields.s2, initial)]
    data = {
        "kind": "sweep", "figure": figure,
        "label": "Prior variance explorer: MAP, predictive, activation variance",
        **_planes(fields, X_train, y_train, X_test, y_test),
        "sliders": [_slider("s2", "prior variance s²", fields.s2, initial)],
        "var_range": [float(lo), float(hi)],
        "points": ["test", "training"],
        "numbers": {"keys": list(keys), "labels": list(labels),
                    "values": [list(map(str, r)) for r in numbers]},
    }
    logvar = np.log10(np.maximum(fields.var[0], 1e-300))
    data["arrays"]["logvar"] = _packed(_scaled(logvar, lo, hi))
    return bundle(data)


def readout_text(data: dict) -> str:
    """A plain-text view of what an explorer shows: the numbers at every setting, as the page
    prints them, and each width's plane (its points, and the note where it does not resolve
    the bumps)."""
    import itertools

    import pandas as pd

    sliders, numbers = data["sliders"], data["numbers"]
    index = pd.MultiIndex.from_tuples(list(itertools.product(*(s["text"] for s in sliders))),
                                      names=[s["label"] for s in sliders])
    table = pd.DataFrame(numbers["values"], index=index, columns=numbers["labels"])
    lines = [f"{data['label']}: the numbers it shows at each setting", table.to_string()]
    widths = next((s["text"] for s in sliders if s["key"] == "l"), None)
    for k, plane in enumerate(data["planes"]):
        where = f"l = {widths[k]}: " if widths else ""
        lines.append(f"plane {where}{plane['n']} x {plane['n']} points"
                     + (f". {plane['note']}" if plane["note"] else ""))
    return "\n".join(lines)


def bundle(data: dict) -> dict:
    """An explorer's output for ``IPython.display.display(..., raw=True)``: its description
    (:data:`MIME`, which the book turns into the page) and ``text/plain`` (:func:`readout_text`,
    which nbval compares)."""
    return {MIME: data, "text/plain": readout_text(data)}
