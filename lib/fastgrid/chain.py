"""Newton along one chain of prior variances at one width: warm starts, chord steps, the
final polish (book appendix "How the grid is computed fast"), and what the engine did
(:class:`Work`)."""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from threadpoolctl import threadpool_limits

from lib._validate import as_design, as_design_labels, as_train_test, chain_values, flag, instance
from lib._validate import width as check_width
from lib.fastgrid.settings import DEFAULT_SETTINGS, Settings
from lib.laplace import ConvergenceError, _step_halving, log_posterior_from_activations
from lib.scores import _activation_scores
from lib.fastgrid.decompose import _make_solver
from lib.fastgrid.forms import _curvature


@dataclass
class Work:
    """What the engine did, summed over grid points (the counters the tests pin)."""

    points: int = 0                 #: grid points fitted
    #: decompositions of a width's design (one per width and process; reused by segments)
    setups: int = 0
    factorisations: int = 0         #: Cholesky factorisations of A_r or B (Newton iterations)
    chord_steps: int = 0            #: steps taken with the previous point's factor
    #: points whose start was the polynomial extrapolation (not the last solution or zero)
    extrapolated_starts: int = 0

    def add(self, other: "Work") -> "Work":
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self


# --------------------------------------------------------------------------- Newton per point


def _starting_points(history, log_s2, solver):
    """Candidate starts ``(state, activations)``, the extrapolation first (the caller keeps the
    one with the largest Psi).

    ``history`` holds ``(log s2, u, a)`` of the last solutions, with ``u`` the state scaled to
    weight coordinates (``z``, or ``s2 alpha`` in the dual) and ``a`` its activations: the
    candidates are the polynomial extrapolation of ``u`` in ``log s2`` (through all of
    ``history``, when it holds two or more), the last ``u`` (the same weights), and zero. The
    activations are linear in ``u`` (``a = G z`` or ``K s2 alpha``), so they are extrapolated
    alongside, not recomputed.
    """
    zero = np.zeros(solver.size)
    if not history:
        return [(zero, solver.activations(zero, 1.0))]
    scale = solver.weight_scale(np.exp(log_s2))
    last = (history[-1][1] / scale, history[-1][2])
    candidates = [last, (zero, np.zeros_like(last[1]))]
    if len(history) >= 2:
        ts = [t for t, _, _ in history]
        u0, a0 = np.zeros(solver.size), np.zeros_like(history[-1][2])
        for i, (ti, ui, ai) in enumerate(history):     # Lagrange basis polynomials
            weight = np.prod([(log_s2 - tj) / (ti - tj) for j, tj in enumerate(ts) if j != i])
            u0 += weight * ui
            a0 += weight * ai
        candidates.insert(0, (u0 / scale, a0))
    return candidates


def _log_posterior(solver, x, a, y, s2):
    """``Psi = L(a) - w.w / (2 s2)`` (:func:`lib.laplace.log_posterior_from_activations`)."""
    return log_posterior_from_activations(a, y, solver.sq_norm(x, a, s2), s2)


def _chord(solver, fac, y, s2, x, a, psi, cfg: Settings = DEFAULT_SETTINGS):
    """Chord iterations: Newton-like steps with a factor built elsewhere (no factorisation).

    With the previous grid point's factor they converge linearly (the rate is the relative
    change of ``A`` between neighbouring points). Stops at ``max |da| <= tol``, or as soon as
    a step fails to contract or to raise Psi. Returns the last accepted state ``x, a, psi`` and
    the number of steps taken.
    """
    previous, steps = np.inf, 0
    for _ in range(cfg.max_chord):
        x_new, a_new = solver.step(fac, x, a, y, s2)
        change = float(np.max(np.abs(a_new - a)))
        psi_new = _log_posterior(solver, x_new, a_new, y, s2)
        if change > cfg.chord_contraction * previous or psi_new < psi - 1e-12 * abs(psi):
            break
        x, a, psi, previous, steps = x_new, a_new, psi_new, change, steps + 1
        if change <= cfg.chord_tol:
            break
    return x, a, psi, steps


@dataclass(frozen=True)
class PointFit:
    """The MAP and Laplace quantities at one grid point (what :func:`_fit_point` returns).

    ``x``: the solver form's state at the MAP (reduced weights or dual coefficients);
    ``factor``: the last factorisation (the next point's chord steps reuse it); ``a``, ``h``
    (N,): training activations at the MAP and their posterior variances; ``mu_test``,
    ``var_test`` (N_test,): the test activations' posterior means and variances;
    ``log_evidence``: the Laplace log evidence; ``n_iter``: Newton iterations (factorisations).
    """

    x: np.ndarray
    factor: object
    a: np.ndarray
    h: np.ndarray
    mu_test: np.ndarray
    var_test: np.ndarray
    log_evidence: float
    n_iter: int


def _fit_point(solver, y, s2, starts, fac, work, cfg: Settings = DEFAULT_SETTINGS):
    """MAP and Laplace quantities at one ``(s2, l)``, from the best of ``starts`` (a list of
    ``(state, activations)``, the extrapolation first when there is one) and with chord steps
    with the previous point's factor ``fac`` when given.

    Chord steps with ``fac`` until ``max |da| <= chord_tol``, then Newton's method with step
    halving (as :func:`lib.laplace.fit_laplace`), each full step followed by chord steps with
    its factor (they save factorisations far from the MAP, after a cold start), until the
    largest change of an activation is at most ``accept_step``; that last step is taken (the
    polish) and the log determinant moved from the factor's point to the MAP to first order
    (eq. ``engine-logdet-update``). Returns a :class:`PointFit`.
    """
    candidates = [(_log_posterior(solver, x0, a0, y, s2), k, x0, a0)
                  for k, (x0, a0) in enumerate(starts)]
    psi, chosen, x, a = max(candidates, key=lambda candidate: (candidate[0], -candidate[1]))
    if chosen == 0 and len(starts) == 3:
        work.extrapolated_starts += 1
    if fac is not None:
        x, a, psi, steps = _chord(solver, fac, y, s2, x, a, psi, cfg)
        work.chord_steps += steps
    for it in range(1, cfg.max_iter + 1):
        fac = solver.factor(a, s2)
        work.factorisations += 1
        x_new, a_new = solver.step(fac, x, a, y, s2)
        if np.max(np.abs(a_new - a)) <= cfg.accept_step:   # converged: the step is the polish
            x, a = x_new, a_new
            psi = _log_posterior(solver, x, a, y, s2)
            h, var_test = solver.variances(fac, s2)
            log_det = fac.log_det + float(h @ (_curvature(a) - fac.W))   # engine-logdet-update
            mu_test = solver.test_activations(x, s2)
            work.points += 1
            return PointFit(x=x, factor=fac, a=a, h=h, mu_test=mu_test, var_test=var_test,
                            log_evidence=psi - 0.5 * log_det, n_iter=it)
        dx, da = x_new - x, a_new - a                 # halve until Psi does not decrease
        t, psi = _step_halving(
            lambda t: _log_posterior(solver, x + t * dx, a + t * da, y, s2), psi)
        x, a = x + t * dx, a + t * da
        if t == 1.0:                                   # a full step: the factor may carry on
            x, a, psi, steps = _chord(solver, fac, y, s2, x, a, psi, cfg)
            work.chord_steps += steps
    raise ConvergenceError(f"Newton's method did not converge in {cfg.max_iter} iterations (s2={s2})")


def chain_fits(X_train, y_train, X_test, s2_values, width, s2_max, *, warm_start=True,
               settings: Settings = DEFAULT_SETTINGS, work: Work | None = None):
    """The Laplace fits along one chain: ``s2_values`` (ascending) at one width, one
    :class:`PointFit` per ``s2``, yielded in order (the MAP and Laplace quantities, and the
    activation's mean and variance at ``X_test``).

    The first point starts from zero; each next one from the best of the extrapolated
    previous solutions, the last one and zero, with chord steps with the last factor
    (``warm_start=False``: every point from zero, no chord steps). ``s2_max`` is the grid's
    largest prior variance (it sets the rank cut and the banded form's threshold, so the
    segments of one width use the same decomposition). ``settings``: the engine's constants;
    ``work``: counters to add this chain's work to.
    """
    X_train, y_train = as_design_labels(X_train, y_train, ("X_train", "y_train"))
    X_test = as_design(X_test, "X_test", n_cols=X_train.shape[1])
    s2_values, width = chain_values(s2_values, s2_max), check_width(width, "width")
    warm_start, settings = _options(warm_start, settings)
    work = Work() if work is None else instance(work, "work", Work, "a Work or None")
    return _chain_fits(X_train, y_train, X_test, s2_values, width, float(s2_max), warm_start,
                       settings, work)


def _options(warm_start, settings):
    """``warm_start`` and ``settings`` checked (a bool and a :class:`Settings`)."""
    return flag(warm_start, "warm_start"), instance(settings, "settings", Settings)


def _chain_fits(X_train, y_train, X_test, s2_values, width, s2_max, warm_start, settings, work):
    """:func:`chain_fits` on checked arguments, a generator (no checks)."""
    with threadpool_limits(limits=1):                  # same arithmetic on any backend
        solver = _make_solver(X_train, X_test, width, s2_max, settings)   # one per chain
        work.setups += 1
        history, fac = [], None
        for s2 in s2_values:
            starts = _starting_points(history[-settings.extrapolate:], np.log(s2), solver)
            try:
                fit = _fit_point(solver, y_train, s2, starts, fac, work, settings)
            except ConvergenceError as err:
                raise ConvergenceError(f"{err} at width={width}") from None
            if warm_start:
                history.append((np.log(s2), fit.x * solver.weight_scale(s2), fit.a))
            fac = fit.factor if warm_start else None
            yield fit


def chain_rows(X_train, y_train, X_test, y_test, s2_values, width, s2_max, *, warm_start=True,
               settings: Settings = DEFAULT_SETTINGS):
    """The grid points of one chain (:func:`chain_fits`), scored: ``rows``, a dict per ``s2``
    with the columns of :data:`lib.hyper.grid.COLUMNS`, and the chain's :class:`Work`."""
    X_train, y_train, X_test, y_test = as_train_test(X_train, y_train, X_test, y_test)
    s2_values, width = chain_values(s2_values, s2_max), check_width(width, "width")
    warm_start, settings = _options(warm_start, settings)
    return _chain_rows(X_train, y_train, X_test, y_test, s2_values, width, float(s2_max),
                       warm_start, settings)


def _chain_rows(X_train, y_train, X_test, y_test, s2_values, width, s2_max, warm_start, settings):
    """:func:`chain_rows` on checked arguments (no checks)."""
    work, rows = Work(), []
    for s2, fit in zip(s2_values, _chain_fits(X_train, y_train, X_test, s2_values, width, s2_max,
                                              warm_start, settings, work)):
        train = _activation_scores(fit.a, fit.h, y_train)
        test = _activation_scores(fit.mu_test, fit.var_test, y_test)
        rows.append({"s2": float(s2), "width": float(width), "log_evidence": fit.log_evidence,
                     **{f"train_{key}": value for key, value in train.items()},
                     **{f"test_{key}": value for key, value in test.items()},
                     "n_iter": fit.n_iter})
    return rows, work
