"""Grid search over the prior variance ``s2`` and the RBF width ``l`` (book chapter "The grid
search"; report section 3.3, figures 4-5).

**A grid point** ``(s2, l)`` is one Laplace fit and its scores, nothing else:

1. the design ``Phi = rbf_features(X_train, X_train, l)`` (centres = the N training inputs,
   bias column: M = N + 1 weights) and ``Phi_test = rbf_features(X_test, X_train, l)``;
2. ``posterior = fit_laplace(Phi, y_train, s2, w0=...)``: the MAP by Newton's method, started
   from the MAP at the previous (smaller) ``s2`` of the same width (a warm start, which
   changes the number of iterations, not the answer), and the Laplace approximation there
   (:func:`lib.laplace.fit_laplace`);
3. ``score_posterior(posterior, Phi, y_train, Phi_test, y_test)``: the Laplace log evidence
   and the accuracies and average log-likelihoods of the MAP and probit-predictive
   classifiers on both splits (:func:`lib.scores.score_posterior`).

:func:`reference_rows` does exactly that, point by point. :func:`evidence_grid` returns the
same table, by default computed by :mod:`lib.fastgrid`, an optimisation of the reference
(shared decompositions, warm-started chord steps, parallel tasks) equal to it to 1e-8; the
book's appendix "How the grid is computed fast" derives it.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from tqdm import tqdm

from lib import fastgrid
from lib.fastgrid.schedule import _run_task
from lib._validate import (as_train_test, as_vector, choice, flag, int_at_least, positive_scalar,
                           prior_values,
                           width_values)
from lib._validate import width as check_width
from lib.scores import _score_posterior
from lib.features import _rbf_features
from lib.laplace import NEWTON_TOL, _fit_laplace
from lib.likelihood import LOGISTIC

#: Columns of the table returned by :func:`evidence_grid`, in order.
COLUMNS = (
    "s2", "width", "log_evidence",
    "train_accuracy", "test_accuracy",
    "train_ll_map", "test_ll_map", "train_ll_pred", "test_ll_pred",
    "n_iter",
)

#: Newton iterations allowed per grid point in the reference.
MAX_ITER = 500

ENGINES = ("fast", "reference")


def grid_point(Phi_train, y_train, Phi_test, y_test, s2, *, w0=None):
    """One grid point: the Laplace fit at prior variance ``s2`` and its scores.

    Parameters
    ----------
    Phi_train : array_like, shape (N, M)
        Training design (RBF features of width ``l`` on the training centres, with bias).
    y_train : array_like, shape (N,)
    Phi_test : array_like, shape (N_test, M)
    y_test : array_like, shape (N_test,)
    s2 : float
        Prior variance.
    w0 : array_like, shape (M,), optional
        Newton's starting point (the MAP of a neighbouring point: a warm start).

    Returns
    -------
    posterior : LaplacePosterior
    scores : dict of str to float
        :func:`lib.scores.score_posterior`.
    """
    Phi_train, y_train, Phi_test, y_test = as_train_test(Phi_train, y_train, Phi_test, y_test,
                                                         "Phi")
    s2 = positive_scalar(s2, "s2")
    w0 = None if w0 is None else as_vector(w0, "w0", length=Phi_train.shape[1])
    return _grid_point(Phi_train, y_train, Phi_test, y_test, s2, w0)


def _grid_point(Phi_train, y_train, Phi_test, y_test, s2, w0):
    """:func:`grid_point` on checked arguments (no checks)."""
    posterior = _fit_laplace(Phi_train, y_train, s2, w0, NEWTON_TOL, MAX_ITER, LOGISTIC)
    return posterior, _score_posterior(posterior, Phi_train, y_train, Phi_test, y_test)


def reference_rows(X_train, y_train, X_test, y_test, s2_values, width):
    """The grid points of one width, point by point (the reference; slow).

    The prior variances in ascending order, each fit warm-started from the previous MAP.

    Returns
    -------
    list of dict
        One row per ``s2`` with the columns :data:`COLUMNS` (``n_iter``: Newton iterations
        of :func:`lib.laplace.fit_laplace`).
    """
    X_train, y_train, X_test, y_test = as_train_test(X_train, y_train, X_test, y_test)
    s2_values = prior_values(s2_values, "s2_values")
    width = check_width(width, "width")
    Phi_train = _rbf_features(X_train, X_train, width)
    Phi_test = _rbf_features(X_test, X_train, width)
    rows, w = [], None
    for s2 in np.sort(s2_values):
        posterior, scores = _grid_point(Phi_train, y_train, Phi_test, y_test, float(s2), w)
        w = posterior.w_map
        rows.append({"s2": float(s2), "width": float(width), **scores, "n_iter": posterior.n_iter})
    return rows


def default_n_jobs(n_tasks: int) -> int:
    """Worker processes :func:`evidence_grid` uses when ``n_jobs=None``.

    The cores this process may run on (``os.sched_getaffinity`` where the platform has it, else
    ``os.cpu_count()``), at most one per task and at least one.

    Parameters
    ----------
    n_tasks : int
        Number of independent tasks.

    Returns
    -------
    int
    """
    n_tasks = int_at_least(n_tasks, "n_tasks", 0)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):                  # not on every platform
        cores = os.cpu_count() or 1
    return max(1, min(int(cores), int(n_tasks)))


def evidence_grid(
    X_train, y_train, X_test, y_test, s2_values, widths, *, n_jobs=None, progress=False,
    warm_start=True, engine="fast", cache=False,
):
    """Laplace fit and scores at every ``(s2, l)`` of a grid (report section 3.3).

    Every row is a grid point as the module docstring defines it (:func:`grid_point`):
    ``fit_laplace`` warm-started along ``s2``, scored by ``score_posterior``.

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs; also the RBF centres.
    y_train : array_like, shape (N,)
        Training labels 0/1.
    X_test : array_like, shape (N_test, D)
    y_test : array_like, shape (N_test,)
    s2_values : array_like, shape (S,)
        Prior variances, positive, distinct.
    widths : array_like, shape (P,)
        RBF widths ``l``, positive, distinct.
    n_jobs : int or None
        Tasks run in parallel through :class:`joblib.Parallel`. ``None`` (default): the cores
        of this machine, at most one per task (:func:`default_n_jobs`); ``-1``: every worker of
        the active joblib backend (e.g. a dask cluster). The table is the same, to the last
        bit, for any value.
    progress : bool
        Show a tqdm progress bar (on stderr).
    warm_start : bool
        Start each fit from the previous solutions (default); ``False`` fits every point from
        zero (the same numbers to 1e-8, slower).
    engine : {"fast", "reference"}
        ``"fast"`` (default): :mod:`lib.fastgrid`; ``"reference"``: :func:`reference_rows`,
        the definition, one width per task (slow: for checking).
    cache : bool
        Keep the table on disk (under ``BLC_CACHE_DIR``, see :func:`lib.data.cache_dir`), keyed
        by a hash of the inputs and of ``lib``'s source, and return it from there when the same
        grid is asked again (by this or another chapter).

    Returns
    -------
    pandas.DataFrame, S * P rows
        Columns :data:`COLUMNS`: ``s2``, ``width``, ``log_evidence`` (Laplace),
        ``train_accuracy``, ``test_accuracy``, average log-likelihoods ``*_ll_map`` (plug-in
        MAP) and ``*_ll_pred`` (probit predictive), and ``n_iter`` (Newton iterations).
        Sorted by width, then s2.

    Raises
    ------
    ConvergenceError
        If Newton's method fails at some point (the message names it).
    """
    X_train, y_train, X_test, y_test = as_train_test(X_train, y_train, X_test, y_test)
    s2_sorted = prior_values(s2_values, "s2_values")
    widths = width_values(widths, "widths")
    engine = choice(engine, "engine", ENGINES)
    progress, warm_start = flag(progress, "progress"), flag(warm_start, "warm_start")
    cache = flag(cache, "cache")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer))
                               or n_jobs == 0):
        raise ValueError(f"n_jobs must be None or a non-zero integer (as for joblib), got {n_jobs!r}")
    import pandas as pd     # here, not at the top: the worker processes need no pandas (0.2 s)

    inputs = (X_train, y_train, X_test, y_test, s2_sorted, widths)
    path = _cache_path(inputs, engine, bool(warm_start)) if cache else None
    if path is not None and path.exists():
        with np.load(path) as stored:
            return pd.DataFrame({name: stored[name] for name in COLUMNS})

    jobs = _jobs(inputs, engine, bool(warm_start))
    rows = _run(jobs, default_n_jobs(len(jobs)) if n_jobs is None else int(n_jobs),
                widths.size * s2_sorted.size, progress)
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table = table.sort_values(["width", "s2"], kind="stable", ignore_index=True)
    if path is not None:
        _store(path, table)
    return table


def _jobs(inputs, engine: str, warm_start: bool):
    """The grid's tasks as joblib jobs: the engine's plan, or one width per reference task."""
    if engine == "fast":
        tasks = fastgrid.plan_tasks(inputs[0], inputs[4], inputs[5])
        return [delayed(_run_task)(*inputs[:5], task, warm_start) for task in tasks]
    return [delayed(_reference_task)(*inputs[:5], width) for width in inputs[5]]


def _run(jobs, n_jobs: int, n_points: int, progress: bool) -> list:
    """Every job's rows, in the order the jobs finish (the table is sorted afterwards)."""
    parallel = Parallel(n_jobs=n_jobs, batch_size=1, return_as="generator")
    rows = []
    with tqdm(total=n_points, disable=not progress, file=sys.stderr,
              desc="evidence grid", unit="point") as bar:
        for task_rows, _ in parallel(jobs):
            rows.extend(task_rows)
            bar.update(len(task_rows))
    return rows


def _reference_task(X_train, y_train, X_test, y_test, s2_sorted, width):
    return reference_rows(X_train, y_train, X_test, y_test, s2_sorted, width), None


def _cache_path(inputs, engine: str, warm_start: bool) -> Path:
    """``<cache>/grids/<sha256 of the inputs, the options and lib's source>.npz``."""
    from lib.data import cache_dir

    folder = cache_dir()
    digest = hashlib.sha256()
    for array in inputs:
        digest.update(repr((array.shape, array.dtype.str)).encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    digest.update(f"{engine} {warm_start} {np.__version__}".encode())
    for source in sorted(Path(__file__).parents[1].rglob("*.py")):   # any change to lib: a new key
        digest.update(source.read_bytes())
    return folder / "grids" / f"{digest.hexdigest()}.npz"


def _store(path: Path, table) -> None:
    """Write the table (exact float64 columns); a cache that cannot be written is skipped."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
        np.savez(partial, **{name: table[name].to_numpy() for name in COLUMNS})
        os.replace(partial, path)
    except OSError:
        pass
