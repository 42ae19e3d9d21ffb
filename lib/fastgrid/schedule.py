"""Tasks: each width's chain, the costliest split into segments, ordered costliest first
(book appendix "How the grid is computed fast")."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib._validate import (as_design, as_train_test, as_vector, flag, instance, positive_int,
                           prior_values)
from lib._validate import width as check_width
from lib.fastgrid.settings import DEFAULT_SETTINGS, Settings
from lib.features import rbf_from_squared_distances, squared_distances
from lib.fastgrid.chain import _chain_rows
from lib.fastgrid.decompose import band_drop_threshold


@dataclass(frozen=True)
class Task:
    """One unit of parallel work: the chain of ``s2`` values ``s2_sorted[start:stop]`` at ``width``;
    ``cost`` is the model's estimate in seconds (:func:`estimate_costs`), setup included."""

    width: float
    start: int
    stop: int
    cost: float


#: Cost model (:func:`estimate_costs`), in seconds on one core of the machine it was fitted
#: on (the book's): a fixed part per point, then per flop of the factorisation-sized work of
#: each form, and per block of the banded form.
_COST_POINT = 1.2e-3
_COST_DUAL = 6e-11
_COST_PRIMAL = 1.3e-10
_COST_BANDED = 4.4e-10
_COST_BLOCK = 4e-4
#: A task's setup costs about this many of its points plus a fixed part; a segment that does
#: not start at the smallest s2 starts cold, which costs about COLD_POINTS more points.
_SETUP_POINTS, _SETUP_FIXED, _COLD_POINTS = 3.0, 0.015, 6.0


def estimate_costs(X_train, widths, s2_max, settings: Settings = DEFAULT_SETTINGS) -> np.ndarray:
    """Estimated seconds per grid point at each width, shape (P,) (for scheduling only).

    A point costs about one factorisation and its products, ``N m^2`` flops, plus a fixed
    overhead: ``m`` is ``N`` for the dual form, the block size ``b`` for the banded one (whose
    ``N / b`` blocks each cost a little more) and the number of kept directions for the primal
    one. These are estimated without decomposing anything, from the RBF block's rows at (up
    to) 200 training points: the mean number ``k`` of entries above the banded form's
    threshold gives the band (about ``sqrt(N k)`` after reordering, in two dimensions), and the
    participation ratio ``p = N^2 / sum R_nm^2`` the rank (about ``30 p^0.76``, fitted on the
    lab data). The estimates only order and split the tasks (:func:`plan_tasks`); a poor one
    costs time, never accuracy.
    """
    X_train = as_design(X_train, "X_train")
    widths = [check_width(w, "widths") for w in as_vector(widths, "widths")]
    settings = instance(settings, "settings", Settings)
    N = X_train.shape[0]
    rows = X_train[:: max(1, N // 200)]
    d2 = squared_distances(rows, X_train)
    threshold = band_drop_threshold(N, s2_max, settings)
    costs = []
    for width in widths:
        R = rbf_from_squared_distances(d2, width)
        k = float(np.mean(np.sum(R > threshold, axis=1)))
        p = N / float(np.mean(np.sum(R * R, axis=1)))
        band = max(np.sqrt(N * k), settings.min_block)
        rank = min(30.0 * p**0.76, N)
        if band <= settings.band_fraction * N:
            cost = _COST_BANDED * N * band**2 + _COST_BLOCK * N / band
        elif rank + 1 > settings.dual_fraction * N:
            cost = _COST_DUAL * float(N) ** 3
        else:
            cost = _COST_PRIMAL * N * rank**2
        costs.append(_COST_POINT + cost)
    return np.asarray(costs)


def _task_cost(per_point, start, stop):
    cold = _COLD_POINTS if start > 0 else 0.0
    return per_point * (stop - start + _SETUP_POINTS + cold) + _SETUP_FIXED


def plan_tasks(X_train, s2_sorted, widths, *, target_tasks=None, min_segment=None,
               settings: Settings = DEFAULT_SETTINGS):
    """The tasks of a grid, costliest first.

    Each width's chain is split into the fewest segments of consecutive ``s2`` values (as
    equal in length as possible, each at least ``min_segment`` long) for which no task is
    estimated to cost more than the whole grid's estimate over ``target_tasks``; the tasks are
    then sorted by estimated cost, largest first (the longest-processing-time rule: handed to
    free workers in this order, they keep the workers busy to the end).

    The split depends on the grid and the data only, never on the number of workers, so the
    table is the same, to the last bit, on any number of workers. A segment starts cold (from
    zero), so its numbers differ from an unsplit chain's within the engine's tolerance.
    ``target_tasks=1`` splits nothing. ``X_train`` (N, D), ``s2_sorted`` (S,) the prior
    variances, ascending, ``widths`` (P,); ``target_tasks`` and ``min_segment`` default to
    ``settings``'. Returns a list of :class:`Task`.
    """
    settings = instance(settings, "settings", Settings)
    s2_sorted = _ascending(s2_sorted)
    target_tasks = positive_int(target_tasks, "target_tasks", allow_none=True)
    min_segment = positive_int(min_segment, "min_segment", allow_none=True)
    target_tasks = settings.target_tasks if target_tasks is None else target_tasks
    min_segment = settings.min_segment if min_segment is None else min_segment
    per_point = estimate_costs(X_train, widths, s2_sorted[-1], settings)
    S = len(s2_sorted)
    limit = sum(_task_cost(p, 0, S) for p in per_point) / target_tasks
    tasks = []
    for width, p in zip(widths, per_point):
        n = 1
        while n < S // min_segment and _task_cost(p, 1, 1 + -(-S // n)) > limit:
            n += 1
        edges = np.linspace(0, S, n + 1).round().astype(int)
        tasks += [Task(float(width), int(a), int(b), _task_cost(p, a, b))
                  for a, b in zip(edges[:-1], edges[1:])]
    return sorted(tasks, key=lambda task: (-task.cost, task.width, task.start))


def run_task(X_train, y_train, X_test, y_test, s2_sorted, task, warm_start=True,
             settings: Settings = DEFAULT_SETTINGS):
    """Rows and :class:`Work` of one task (:func:`chain_rows` on its segment); ``s2_sorted``: the
    grid's prior variances, ascending; ``task``: one of :func:`plan_tasks`'s for it."""
    X_train, y_train, X_test, y_test = as_train_test(X_train, y_train, X_test, y_test)
    s2_sorted = _ascending(s2_sorted)
    task = instance(task, "task", Task)
    if not 0 <= task.start < task.stop <= s2_sorted.size:
        raise ValueError(f"task must cover a segment of s2_sorted (0 <= start < stop <= "
                         f"{s2_sorted.size}), got start={task.start}, stop={task.stop}")
    check_width(task.width, "task.width")
    warm_start, settings = flag(warm_start, "warm_start"), instance(settings, "settings", Settings)
    return _run_task(X_train, y_train, X_test, y_test, s2_sorted, task, warm_start, settings)


def _run_task(X_train, y_train, X_test, y_test, s2_sorted, task, warm_start=True,
              settings: Settings = DEFAULT_SETTINGS):
    """:func:`run_task` on checked arguments (no checks): :func:`lib.fastgrid.evidence_grid`'s
    jobs."""
    return _chain_rows(X_train, y_train, X_test, y_test, s2_sorted[task.start:task.stop],
                       task.width, s2_sorted[-1], warm_start, settings)


def _ascending(s2_sorted) -> np.ndarray:
    """The grid's prior variances, checked: distinct, positive and ascending."""
    arr = prior_values(s2_sorted, "s2_sorted")
    if not np.array_equal(arr, np.asarray(s2_sorted, dtype=float)):
        raise ValueError("s2_sorted must be ascending (sorted, as the grid's chains are)")
    return arr
