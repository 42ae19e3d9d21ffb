"""Maximising the Laplace evidence over ``(s2, l)`` (and a bias prior variance) by L-BFGS-B
with the exact gradient of :mod:`lib.hyper.gradient` (book chapter "Maximising the evidence
automatically"; report section 3.3 did this by grid search). The objective
(:class:`_EvidenceObjective`) is kept apart from the optimiser (:func:`_lbfgs_from_starts`).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from lib._validate import positive_int, positive_pair, positive_scalar
from lib._validate import bounds as check_bounds
from lib.features import squared_distances
from lib.hyper.gradient import EvidenceGradient, _evidence_gradient, _training_data
from lib.laplace import LaplacePosterior
from lib.likelihood import LOGISTIC, Likelihood, as_likelihood

#: Default search box, the range of the book's 50 x 50 grid: s2 in [0.01, 100], l in [0.01, 10].
DEFAULT_S2_BOUNDS = (1e-2, 1e2)
DEFAULT_WIDTH_BOUNDS = (1e-2, 1e1)

#: Default starting points ``(s2, l)``: the report's base case and three spread-out settings.
DEFAULT_STARTS = ((1.0, 0.1), (1.0, 1.0), (10.0, 0.3), (0.1, 3.0))

#: Default starting values of ``s2`` when the width is held fixed.
DEFAULT_S2_STARTS = (0.1, 1.0, 10.0)


# --------------------------------------------------------------------------- the optimiser


@dataclass(frozen=True)
class EvidenceRun:
    """One L-BFGS-B run from one starting point.

    Attributes
    ----------
    start : tuple of float
        Starting ``(s2, l)``, or ``(s2, l, bias_s2)``.
    s2, width : float
        Where the run stopped.
    log_evidence : float
        ``log Z`` there.
    gradient : ndarray, shape (K,)
        ``dlogZ/dtheta`` there (zero at an interior maximum; for a fixed width, the second
        entry is still ``dlogZ/dlog l``).
    path : ndarray, shape (n, K)
        Iterates ``(log s2, log l[, log bias_s2])``, the start first.
    n_evaluations : int
        Evaluations of ``log Z`` and its gradient.
    success : bool
        scipy's convergence flag.
    message : str
        scipy's message.
    bias_s2 : float or None
        Where the run stopped in ``bias_s2`` (None for a shared prior variance).
    """

    start: tuple
    s2: float
    width: float
    log_evidence: float
    gradient: np.ndarray
    path: np.ndarray
    n_evaluations: int
    success: bool
    message: str
    bias_s2: float | None = None


@dataclass(frozen=True)
class EvidenceOptimum:
    """Best of several L-BFGS-B runs maximising the Laplace log evidence.

    Attributes
    ----------
    s2, width : float
        The best ``(s2, l)`` found.
    log_evidence : float
        ``log Z`` there.
    gradient : ndarray, shape (K,)
        ``dlogZ/dtheta`` there.
    n_evaluations : int
        Evaluations over all runs.
    starts : tuple of tuple of float
        The starting points tried, ``(s2, l)`` or ``(s2, l, bias_s2)``.
    runs : tuple of EvidenceRun
        One per start, in the order of ``starts``.
    posterior : LaplacePosterior
        The Laplace fit at the optimum.
    bias_s2 : float or None
        The best ``bias_s2`` (None for a shared prior variance).
    """

    s2: float
    width: float
    log_evidence: float
    gradient: np.ndarray
    n_evaluations: int
    starts: tuple
    runs: tuple
    posterior: LaplacePosterior
    bias_s2: float | None = None


def _in_box(value, box, name, i):
    if not box[0] <= value <= box[1]:
        raise ValueError(f"starts[{i}] has {name} = {value} outside {name}_bounds {box}")


def _starts(starts, s2_bounds, width_bounds, fixed_width, bias_s2_bounds=None):
    if starts is None:
        if fixed_width is not None:
            starts = DEFAULT_S2_STARTS
        elif bias_s2_bounds is not None:
            starts = tuple((s2, l, s2) for s2, l in DEFAULT_STARTS)
        else:
            starts = DEFAULT_STARTS
    if fixed_width is not None:
        if isinstance(starts, numbers.Real):
            starts = [starts]
        out = []
        for i, s in enumerate(starts):
            if not isinstance(s, numbers.Real):
                raise TypeError(
                    f"starts[{i}] must be a starting s2 (a positive number) when fixed_width is given, "
                    f"got {s!r}"
                )
            s = positive_scalar(s, f"starts[{i}]")
            if not s2_bounds[0] <= s <= s2_bounds[1]:
                raise ValueError(f"starts[{i}] = {s} lies outside s2_bounds {s2_bounds}")
            out.append((s, fixed_width))
    elif bias_s2_bounds is not None:
        out = []
        for i, triple in enumerate(starts):
            try:
                s2, l, b2 = triple
            except (TypeError, ValueError):
                raise TypeError(
                    f"starts[{i}] must be a triple (s2, width, bias_s2) of positive numbers when "
                    f"bias_s2_bounds is given, got {triple!r}"
                ) from None
            s2 = positive_scalar(s2, f"starts[{i}][0] (s2)")
            l = positive_scalar(l, f"starts[{i}][1] (width)")
            b2 = positive_scalar(b2, f"starts[{i}][2] (bias_s2)")
            _in_box(s2, s2_bounds, "s2", i)
            _in_box(l, width_bounds, "width", i)
            _in_box(b2, bias_s2_bounds, "bias_s2", i)
            out.append((s2, l, b2))
    else:
        out = []
        for i, pair in enumerate(starts):
            s2, l = positive_pair(pair, f"starts[{i}]", "(s2, width)", ("[0] (s2)", "[1] (width)"))
            _in_box(s2, s2_bounds, "s2", i)
            _in_box(l, width_bounds, "width", i)
            out.append((s2, l))
    if not out:
        raise ValueError("starts must hold at least one starting point")
    return tuple(out)


def maximise_evidence(
    X_train,
    y_train,
    *,
    starts=None,
    s2_bounds=DEFAULT_S2_BOUNDS,
    width_bounds=DEFAULT_WIDTH_BOUNDS,
    fixed_width: float | None = None,
    likelihood: Likelihood = LOGISTIC,
    bias_s2_bounds=None,
    max_iter: int = 200,
    gtol: float = 1e-6,
) -> EvidenceOptimum:
    """Maximise the Laplace log evidence over ``theta = (log s2, log l[, log bias_s2])`` by L-BFGS-B.

    Minimises ``-log Z(theta)`` with its exact gradient (:func:`evidence_gradient`) by
    ``scipy.optimize.minimize(method="L-BFGS-B")`` in log space within the box
    ``log s2_bounds x log width_bounds [x log bias_s2_bounds]``, once from each start, and
    keeps the best. Newton's method for ``w_MAP`` is warm-started from the previous
    evaluation's mode or from its first-order prediction ``w + (dw/dtheta) dtheta`` (E3),
    whichever has the higher log posterior ``Psi`` at the new point.

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs (also the RBF centres).
    y_train : array_like, shape (N,)
        Training labels 0/1.
    starts : sequence of (s2, width) pairs, of (s2, width, bias_s2) triples when
        ``bias_s2_bounds`` is given, or of s2 values when ``fixed_width`` is given
        Starting points, inside the bounds. Default: :data:`DEFAULT_STARTS` (with
        ``bias_s2 = s2``), or :data:`DEFAULT_S2_STARTS` with a fixed width.
    s2_bounds, width_bounds : (float, float)
        Search box ``low < high``, both positive.
    fixed_width : float, optional
        If given, ``l`` is held at this value and only ``log s2`` is optimised.
    likelihood : lib.likelihood.Likelihood
        :data:`lib.likelihood.LOGISTIC` (default) or another, e.g. :data:`lib.models.probit.PROBIT`.
    bias_s2_bounds : (float, float), optional
        If given, the bias has its own prior variance ``bias_s2``, optimised within these
        bounds (book chapter "The probit likelihood": ``s2`` is then the note's ``alpha^2``,
        ``bias_s2`` its ``beta^2``). Not combined with ``fixed_width``.
    max_iter : int
        Maximum L-BFGS-B iterations per start.
    gtol : float
        Tolerance on the projected gradient (scipy's ``gtol``).

    Returns
    -------
    EvidenceOptimum

    Raises
    ------
    lib.laplace.ConvergenceError
        If Newton's method fails at some evaluated point.
    """
    X_train, y_train = _training_data(X_train, y_train)
    s2_bounds = check_bounds(s2_bounds, "s2_bounds")
    width_bounds = check_bounds(width_bounds, "width_bounds")
    if fixed_width is not None:
        fixed_width = positive_scalar(fixed_width, "fixed_width")
    likelihood = as_likelihood(likelihood)
    separate_bias = bias_s2_bounds is not None
    if separate_bias:
        bias_s2_bounds = check_bounds(bias_s2_bounds, "bias_s2_bounds")
        if fixed_width is not None:
            raise ValueError("fixed_width and bias_s2_bounds cannot be combined; give one of them")
    starts = _starts(starts, s2_bounds, width_bounds, fixed_width, bias_s2_bounds)
    max_iter = positive_int(max_iter, "max_iter")
    gtol = positive_scalar(gtol, "gtol")

    n_free = 1 if fixed_width is not None else (3 if separate_bias else 2)
    bounds = [tuple(np.log(s2_bounds)), tuple(np.log(width_bounds))]
    if separate_bias:
        bounds.append(tuple(np.log(bias_s2_bounds)))
    objective = _EvidenceObjective(squared_distances(X_train, X_train), y_train, likelihood,
                                   n_free, fixed_width)
    return _lbfgs_from_starts(objective, starts, bounds[:n_free], max_iter=max_iter, gtol=gtol)


class _EvidenceObjective:
    """``theta -> (-log Z, -grad log Z)`` over the free log hyper-parameters, with Newton's
    mode warm-started from the previous evaluation (the objective of the search; the optimiser
    is :func:`_lbfgs_from_starts`).

    ``theta`` is ``(log s2, log l, log bias_s2)`` cut to its first ``n_free`` entries: 1 when
    the width is fixed at ``fixed_width``, 3 with a separate bias prior variance, else 2.
    ``d2`` (N, N) are the squared distances of the training inputs, computed once for every l.
    """

    def __init__(self, d2, y, likelihood, n_free: int, fixed_width):
        self.d2, self.y, self.likelihood = d2, y, likelihood
        self.n_free, self.fixed_width = n_free, fixed_width
        self.last: EvidenceGradient | None = None
        self.n_evaluations = 0

    def evaluate(self, theta, width_derivative: bool) -> EvidenceGradient:
        """The evidence and its gradient at ``theta`` (with d/dlog l if ``width_derivative``)."""
        s2 = float(np.exp(theta[0]))
        l = self.fixed_width if self.fixed_width is not None else float(np.exp(theta[1]))
        b2 = float(np.exp(theta[2])) if self.n_free == 3 else None
        starts_w = []
        if self.last is not None:
            # Warm start for Newton: the last mode, or its first-order prediction at the new
            # theta, w + (dw/dtheta) dtheta (E3), whichever has the higher log posterior.
            last = self.last
            previous = [last.s2, last.width] + ([last.bias_s2] if self.n_free == 3 else [])
            dtheta = np.asarray(theta, dtype=float) - np.log(previous)[:self.n_free]
            w_last = last.posterior.w_map
            starts_w = [w_last + last.mode_sensitivity[:, :self.n_free] @ dtheta, w_last]
        self.last = _evidence_gradient(self.d2, self.y, s2, l, w0=starts_w,
                                       width_derivative=width_derivative,
                                       likelihood=self.likelihood, bias_s2=b2)
        self.n_evaluations += 1
        return self.last

    def __call__(self, theta):
        # d/dlog l only if l is free; minimise -log Z
        res = self.evaluate(theta, width_derivative=self.fixed_width is None)
        return -res.log_evidence, -res.gradient[:self.n_free]


def _lbfgs_from_starts(objective: _EvidenceObjective, starts, bounds, *, max_iter, gtol):
    """L-BFGS-B on ``objective`` from each start (in log space, within ``bounds``); the best."""
    n_free, fixed_width = objective.n_free, objective.fixed_width
    runs, finals = [], []
    for start in starts:
        theta0 = np.log(start)[:n_free]
        path = [theta0.copy()]
        n_before = objective.n_evaluations
        opt = minimize(
            objective, theta0, jac=True, method="L-BFGS-B", bounds=bounds,
            callback=lambda xk: path.append(np.array(xk, dtype=float)),
            options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-12},
        )
        final = objective.evaluate(opt.x, width_derivative=True)   # returned point, full gradient
        path = np.array(path)
        if fixed_width is not None:
            path = np.column_stack([path, np.full(len(path), np.log(fixed_width))])
        finals.append(final)
        runs.append(EvidenceRun(
            start=start, s2=final.s2, width=final.width, log_evidence=final.log_evidence,
            gradient=final.gradient, path=path,
            n_evaluations=objective.n_evaluations - n_before,
            success=bool(opt.success), message=str(opt.message), bias_s2=final.bias_s2,
        ))
    k = int(np.argmax([r.log_evidence for r in runs]))        # first of the best runs
    best = finals[k]
    return EvidenceOptimum(
        s2=best.s2, width=best.width, log_evidence=best.log_evidence, gradient=best.gradient,
        n_evaluations=objective.n_evaluations, starts=starts, runs=tuple(runs),
        posterior=best.posterior, bias_s2=best.bias_s2,
    )
