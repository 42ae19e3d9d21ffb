"""Maximising the Laplace evidence over ``(s2, l)`` (and a bias prior variance) by L-BFGS-B
with the exact gradient of :mod:`lib.hyper.gradient` (book chapter "Maximising the evidence
automatically", eq. ``eo-chain``; report section 3.3 did this by grid search). The objective
(:class:`_EvidenceObjective`) is kept apart from the optimiser (:func:`_search`).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from lib._validate import WIDTH_RANGE, as_design_labels, positive_int, positive_scalar
from lib._validate import bounds as check_bounds, width as check_width
from lib.features import squared_distances
from lib.hyper.gradient import EvidenceGradient, _evidence_gradient
from lib.laplace import LaplacePosterior
from lib.likelihood import LOGISTIC, Likelihood, as_likelihood

#: Default search box, the range of the book's 50 x 50 grid: s2 in [0.01, 100], l in [0.01, 10].
DEFAULT_S2_BOUNDS = (1e-2, 1e2)
DEFAULT_WIDTH_BOUNDS = (1e-2, 1e1)

#: Default starting points ``(s2, l)``: the report's base case and three spread-out settings.
DEFAULT_STARTS = ((1.0, 0.1), (1.0, 1.0), (10.0, 0.3), (0.1, 3.0))

#: Default starting values of ``s2`` when the width is held fixed.
DEFAULT_S2_STARTS = (0.1, 1.0, 10.0)


@dataclass(frozen=True)
class EvidenceRun:
    """One L-BFGS-B run from one starting point.

    ``start``: the starting ``(s2, l)`` or ``(s2, l, bias_s2)``; ``s2``, ``width``: where the
    run stopped, ``log_evidence`` ``log Z`` there and ``gradient`` (K,) ``dlogZ/dtheta`` there
    (zero at an interior maximum; for a fixed width the second entry is still ``dlogZ/dlog l``);
    ``path`` (n, K): the iterates ``(log s2, log l[, log bias_s2])``, the start first;
    ``n_evaluations``: of ``log Z`` and its gradient; ``success``, ``message``: scipy's
    convergence flag and message; ``bias_s2``: where the run stopped in ``bias_s2`` (None for a
    shared prior variance).
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

    ``s2``, ``width``, ``log_evidence``, ``gradient``, ``bias_s2`` as in :class:`EvidenceRun`,
    of the best run; ``n_evaluations`` over all runs; ``starts`` the starting points tried,
    ``(s2, l)`` or ``(s2, l, bias_s2)``; ``runs`` one :class:`EvidenceRun` per start, in that
    order; ``posterior`` the :class:`~lib.laplace.LaplacePosterior` at the optimum.
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


def _points(starts, boxes, names):
    """Starting points, each a tuple of positive numbers (one per box, inside it), checked.

    With one name, a point may be a bare number and ``starts`` one number."""
    if len(names) == 1 and isinstance(starts, numbers.Real):
        starts = [starts]
    out = []
    for i, point in enumerate(starts):
        if len(names) == 1 and isinstance(point, numbers.Real):
            point = (point,)
        try:
            values = tuple(point)
        except TypeError:
            values = ()
        if len(values) != len(names):
            expected = (f"a starting {names[0]} (a positive number)" if len(names) == 1 else
                        f"a {len(names)}-tuple ({', '.join(names)}) of positive numbers")
            raise TypeError(f"starts[{i}] must be {expected}, got {point!r}")
        values = tuple(positive_scalar(v, f"starts[{i}][{k}] ({n})")
                       for k, (v, n) in enumerate(zip(values, names)))
        for v, box, n in zip(values, boxes, names):
            if not box[0] <= v <= box[1]:
                raise ValueError(f"starts[{i}] has {n} = {v} outside {n}_bounds {box}")
        out.append(values)
    if not out:
        raise ValueError("starts must hold at least one starting point")
    return tuple(out)


def _problem(X_train, y_train, likelihood, max_iter, gtol) -> tuple:
    """A search's checked arguments, shared by the three entry points."""
    return (*as_design_labels(X_train, y_train, ("X_train", "y_train")), as_likelihood(likelihood),
            positive_int(max_iter, "max_iter"), positive_scalar(gtol, "gtol"))


def maximise_evidence(X_train, y_train, *, starts=None, s2_bounds=DEFAULT_S2_BOUNDS,
                      width_bounds=DEFAULT_WIDTH_BOUNDS, likelihood: Likelihood = LOGISTIC,
                      max_iter: int = 200, gtol: float = 1e-6) -> EvidenceOptimum:
    """Maximise the Laplace log evidence over ``theta = (log s2, log l)`` by L-BFGS-B.

    Minimises ``-log Z(theta)`` with its exact gradient (:func:`lib.hyper.evidence_gradient`)
    in log space within the box ``log s2_bounds x log width_bounds``, once from each start,
    and keeps the best. Newton's method for ``w_MAP`` is warm-started from the previous
    evaluation's mode or its first-order prediction ``w + (dw/dtheta) dtheta`` (E3),
    whichever has the higher log posterior. :func:`maximise_evidence_s2` holds the width
    fixed; :func:`maximise_evidence_bias` adds a separate bias prior variance.

    ``X_train``, ``y_train``, ``likelihood`` as in :func:`lib.hyper.evidence_gradient`;
    ``starts``: (s2, width) pairs inside the box (default :data:`DEFAULT_STARTS`); ``s2_bounds``,
    ``width_bounds``: the search box, ``(low, high)`` positive; ``max_iter``: the most L-BFGS-B
    iterations per start; ``gtol``: the tolerance on the projected gradient (scipy's ``gtol``).
    Returns an :class:`EvidenceOptimum`; raises :class:`lib.laplace.ConvergenceError` if
    Newton's method fails at some evaluated point.
    """
    problem = _problem(X_train, y_train, likelihood, max_iter, gtol)
    boxes = (check_bounds(s2_bounds, "s2_bounds"), check_bounds(width_bounds, "width_bounds", WIDTH_RANGE))
    starts = _points(DEFAULT_STARTS if starts is None else starts, boxes, ("s2", "width"))
    return _search(problem, starts, boxes, None)


def maximise_evidence_s2(X_train, y_train, width, *, starts=None, s2_bounds=DEFAULT_S2_BOUNDS,
                         likelihood: Likelihood = LOGISTIC, max_iter: int = 200,
                         gtol: float = 1e-6) -> EvidenceOptimum:
    """Maximise the Laplace log evidence over ``log s2`` at a fixed RBF ``width``, as
    :func:`maximise_evidence`, with ``starts`` a sequence of ``s2`` values (default
    :data:`DEFAULT_S2_STARTS`) inside ``s2_bounds``."""
    problem = _problem(X_train, y_train, likelihood, max_iter, gtol)
    width = check_width(width, "width")
    boxes = (check_bounds(s2_bounds, "s2_bounds"),)
    points = _points(DEFAULT_S2_STARTS if starts is None else starts, boxes, ("s2",))
    return _search(problem, tuple((s2, width) for (s2,) in points), boxes, width)


def maximise_evidence_bias(X_train, y_train, *, bias_s2_bounds, starts=None,
                           s2_bounds=DEFAULT_S2_BOUNDS, width_bounds=DEFAULT_WIDTH_BOUNDS,
                           likelihood: Likelihood = LOGISTIC, max_iter: int = 200,
                           gtol: float = 1e-6) -> EvidenceOptimum:
    """Maximise the Laplace log evidence over ``(log s2, log l, log bias_s2)``: the bias has its
    own prior variance ``bias_s2`` within ``bias_s2_bounds`` (book chapter "The probit
    likelihood": ``s2`` is the note's ``alpha^2``, ``bias_s2`` its ``beta^2``).

    As :func:`maximise_evidence`, with ``starts`` a sequence of ``(s2, width, bias_s2)``
    triples (default: :data:`DEFAULT_STARTS` with ``bias_s2 = s2``).
    """
    problem = _problem(X_train, y_train, likelihood, max_iter, gtol)
    boxes = (check_bounds(s2_bounds, "s2_bounds"), check_bounds(width_bounds, "width_bounds", WIDTH_RANGE),
             check_bounds(bias_s2_bounds, "bias_s2_bounds"))
    default = tuple((s2, l, s2) for s2, l in DEFAULT_STARTS)
    starts = _points(default if starts is None else starts, boxes, ("s2", "width", "bias_s2"))
    return _search(problem, starts, boxes, None)


def _search(problem, starts, boxes, fixed_width):
    """L-BFGS-B on :class:`_EvidenceObjective` from each start, over the free log
    hyper-parameters (one per box, within its logs); the best run."""
    X_train, y_train, likelihood, max_iter, gtol = problem
    n_free, bounds = len(boxes), [tuple(np.log(box)) for box in boxes]
    objective = _EvidenceObjective(squared_distances(X_train, X_train), y_train, likelihood,
                                   n_free, fixed_width)
    runs, finals = [], []
    for start in starts:
        theta0 = np.log(start)[:n_free]
        path = [theta0.copy()]
        n_before = objective.n_evaluations
        opt = minimize(objective, theta0, jac=True, method="L-BFGS-B", bounds=bounds,
                       callback=lambda xk: path.append(np.array(xk, dtype=float)),
                       options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-12})
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
    best = finals[int(np.argmax([r.log_evidence for r in runs]))]    # first of the best runs
    return EvidenceOptimum(
        s2=best.s2, width=best.width, log_evidence=best.log_evidence, gradient=best.gradient,
        n_evaluations=objective.n_evaluations, starts=starts, runs=tuple(runs),
        posterior=best.posterior, bias_s2=best.bias_s2)


class _EvidenceObjective:
    """``theta -> (-log Z, -grad log Z)`` over the free log hyper-parameters, Newton's mode
    warm-started from the previous evaluation.

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
            # The last mode, or its first-order prediction w + (dw/dtheta) dtheta ((E3), book
            # eq. eo-ift), whichever has the higher log posterior
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

