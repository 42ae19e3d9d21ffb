"""Speed of the evidence grid (issue 5): ``make bench`` or ``python benchmarks/grid.py``.

Runs the 50 x 50 grid of the book (``l`` log-spaced over [0.01, 10], ``s2`` over [0.01, 100])
on the report's training split with :func:`lib.fastgrid.evidence_grid`, then, on a 5 x 5 sub-grid
of the same points, a per-point baseline: scikit-learn's
``LogisticRegression(C=s2, fit_intercept=False, solver="newton-cholesky", tol=1e-10)`` on the
RBF design with its bias column (``C`` multiplies the summed log-loss against ``w.w / 2``, so
``C = s2`` is the MAP under the prior ``N(0, s2 I)``), followed by the vectorised precision
``A = I / s2 + Phi^T diag(s (1 - s)) Phi`` and its Cholesky log determinant for the Laplace
evidence.

Prints one JSON line::

    {"grid_seconds": ..., "speedup_vs_sklearn": ..., "max_abs_evidence_diff": ...}

``grid_seconds``: wall time of the 50 x 50 grid on ``--n-jobs`` cores (default 2);
``speedup_vs_sklearn``: the baseline's time for 2500 points (its time per point on the
sub-grid, times 2500) shared over the same number of cores, over ``grid_seconds``;
``max_abs_evidence_diff``: the largest ``|log evidence (grid) - log evidence (baseline)|`` on the
sub-grid.

The baseline runs with one BLAS thread per fit and is credited with perfect parallelism over
points: on a shared machine a multi-threaded BLAS makes it erratic (ten times slower when the
cores are busy), which would flatter the ratio.

``--simulate-workers K [K ...]`` prints instead how the grid's tasks
(:func:`lib.fastgrid.plan_tasks`) would share K workers: it measures, one after the other in
this process, the CPU time of each task (which builds its width's decomposition), then replays
the schedule on K workers: each task goes, in the schedule's order, to the worker that is free
first. It reports
the makespan (the time the last worker finishes) of the engine's schedule (chains split,
costliest first) and of the old one (one task per width, widths in ascending order), beside the
lower bound ``max(total / K, longest task)`` of each. Worker start-up and data transfer are not
counted.
"""
from __future__ import annotations

import argparse
import heapq
import json
import time
import warnings

import numpy as np
from scipy.linalg import cholesky
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import lib
from lib import fastgrid
from lib.fastgrid import evidence_grid

S2_VALUES = np.logspace(-2, 2, 50)
WIDTHS = np.logspace(-2, 1, 50)
SUB = np.array([0, 12, 24, 37, 49])                   # 5 x 5 sub-grid, corners included


def baseline_log_evidence(Phi, y, s2) -> float:
    """Laplace log evidence with scikit-learn's MAP (the per-point baseline)."""
    model = LogisticRegression(C=s2, fit_intercept=False, solver="newton-cholesky", tol=1e-10,
                               max_iter=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)   # a non-converged MAP would be unfair
        model.fit(Phi, y)
    w = model.coef_.ravel()
    a = Phi @ w
    W = lib.sigmoid(a) * lib.sigmoid(-a)
    A = (Phi.T * W) @ Phi                              # vectorised Hessian of -L
    A[np.diag_indices_from(A)] += 1.0 / s2
    log_det = 2.0 * np.sum(np.log(np.diag(cholesky(A, lower=True))))
    log_lik = np.sum(lib.log_sigmoid(np.where(y == 1, a, -a)))
    return float(log_lik - w @ w / (2 * s2) - 0.5 * Phi.shape[1] * np.log(s2) - 0.5 * log_det)


def main(n_jobs: int = 2) -> dict:
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive number of cores, got {n_jobs}")
    X, y = lib.load_lab_data()
    X_train, y_train, X_test, y_test = lib.first_rows_split(X, y)

    start = time.perf_counter()
    table = evidence_grid(X_train, y_train, X_test, y_test, S2_VALUES, WIDTHS, n_jobs=n_jobs)
    grid_seconds = time.perf_counter() - start
    ours = table.set_index(["width", "s2"]).log_evidence

    diffs = []
    start = time.perf_counter()
    with threadpool_limits(limits=1):
        for width in WIDTHS[SUB]:
            Phi = lib.rbf_features(X_train, X_train, width)
            for s2 in S2_VALUES[SUB]:
                diffs.append(abs(baseline_log_evidence(Phi, y_train, s2) - ours[(width, s2)]))
    baseline_seconds = time.perf_counter() - start

    per_point = baseline_seconds / SUB.size**2
    baseline_grid_seconds = per_point * S2_VALUES.size * WIDTHS.size / n_jobs   # on n_jobs cores
    return {
        "grid_seconds": round(grid_seconds, 2),
        "speedup_vs_sklearn": round(baseline_grid_seconds / grid_seconds, 1),
        "max_abs_evidence_diff": float(f"{max(diffs):.3g}"),
    }


# --------------------------------------------------------------------------- --simulate-workers


def measure_tasks(data, tasks):
    """CPU seconds of each task, its width's decomposition included (every task builds its own)."""
    X_train, y_train, X_test, y_test = data
    run = []
    with threadpool_limits(limits=1):
        for task in tasks:
            start = time.process_time()
            fastgrid.run_task(X_train, y_train, X_test, y_test, S2_VALUES, task)
            run.append(time.process_time() - start)
    return run


def makespan(run, workers: int) -> float:
    """Replay the tasks' CPU times ``run`` in order on ``workers``: each to the first free one."""
    free = [0.0] * workers
    for seconds in run:
        heapq.heappush(free, heapq.heappop(free) + seconds)
    return max(free)


def simulate(workers) -> dict:
    X, y = lib.load_lab_data()
    data = lib.first_rows_split(X, y)
    schedules = {
        "old": sorted(fastgrid.plan_tasks(data[0], S2_VALUES, WIDTHS, target_tasks=1),
                      key=lambda task: task.width),
        "new": fastgrid.plan_tasks(data[0], S2_VALUES, WIDTHS),
    }
    report = {}
    for name, tasks in schedules.items():
        run = measure_tasks(data, tasks)
        report[name] = {
            "tasks": len(tasks),
            "cpu_seconds": round(sum(run), 2),
            "makespan": {str(k): round(makespan(run, k), 2) for k in workers},
            "bound": {str(k): round(max(sum(run) / k, max(run)), 2) for k in workers},
        }
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-jobs", type=int, default=2, help="parallel workers for the grid (default 2)")
    parser.add_argument("--simulate-workers", type=int, nargs="+", metavar="K",
                        help="report the makespan of the grid's schedule on K workers instead")
    args = parser.parse_args()
    if args.simulate_workers:
        print(json.dumps(simulate(args.simulate_workers)))
    else:
        print(json.dumps(main(args.n_jobs)))
