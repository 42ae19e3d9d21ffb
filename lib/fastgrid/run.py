"""Running the evidence grid: :mod:`lib.hyper.grid`'s table at every ``(s2, l)`` of a grid,
computed by the engine (or by the reference), in parallel tasks (joblib), with a progress bar
(tqdm) and a disk cache (:class:`joblib.Memory`), which :func:`cached` offers :mod:`lib.hyper`'s
searches too."""
from __future__ import annotations

import functools
import inspect
import os
import sys

import numpy as np
from joblib import Parallel, delayed
from tqdm import tqdm

from lib import hyper
from lib._cache import code_digest as _code_digest, disk_cache
from lib._validate import as_train_test, choice, flag, int_at_least, prior_values, width_values
from lib.fastgrid.schedule import _run_task, plan_tasks
from lib.hyper.grid import COLUMNS, reference_rows

ENGINES = ("fast", "reference")


def default_n_jobs(n_tasks: int) -> int:
    """Worker processes :func:`evidence_grid` uses when ``n_jobs=None``.

    The cores this process may run on (``os.sched_getaffinity`` where the platform has it, else
    ``os.cpu_count()``), at most one per task (``n_tasks`` independent tasks) and at least one.
    """
    n_tasks = int_at_least(n_tasks, "n_tasks", 0)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):                  # not on every platform
        cores = os.cpu_count() or 1
    return max(1, min(int(cores), int(n_tasks)))


def evidence_grid(X_train, y_train, X_test, y_test, s2_values, widths, *, n_jobs=None,
                  progress=False, warm_start=True, engine="fast", cache=False):
    """Laplace fit and scores at every ``(s2, l)`` of a grid (report section 3.3).

    Every row is a grid point as :mod:`lib.hyper.grid` defines it
    (:func:`lib.hyper.grid.grid_point`): ``fit_laplace`` warm-started along ``s2``, scored by
    ``_score_posterior``; the fast engine computes it to 1e-8.

    ``X_train`` (N, D) are the training inputs (also the RBF centres), ``y_train`` (N,) their
    labels 0/1, ``X_test`` (N_test, D), ``y_test`` (N_test,); ``s2_values`` (S,) and ``widths``
    (P,) the prior variances and RBF widths ``l``, positive and distinct.

    Parameters
    ----------
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
        ``"fast"`` (default): this engine; ``"reference"``:
        :func:`lib.hyper.grid.reference_rows`, the definition, one width per task (slow: for
        checking).
    cache : bool
        Keep the table on disk (:class:`joblib.Memory` under ``<BLC_CACHE_DIR>/grids``, see
        :func:`lib.data.cache_dir`) and return it from there when the same grid is asked again
        (by this or another chapter). The key: the inputs, ``engine``, ``warm_start`` and
        :func:`code_digest` (the code the table is computed by), not ``n_jobs`` or
        ``progress``. A folder that cannot be made is skipped.

    Returns a DataFrame of S * P rows, sorted by width, then s2, with the columns
    :data:`lib.hyper.grid.COLUMNS`: ``s2``, ``width``, ``log_evidence`` (Laplace),
    ``train_accuracy``, ``test_accuracy``, average log-likelihoods ``*_ll_map`` (plug-in MAP)
    and ``*_ll_pred`` (probit predictive), and ``n_iter`` (Newton iterations; the engine's:
    factorisations). Raises ``ConvergenceError`` if Newton's method fails at some point (the
    message names it).
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
    table = disk_cache("grids").cache(_table, ignore=["n_jobs", "progress"]) if cache else _table
    return table(X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
                 s2_sorted=s2_sorted, widths=widths, engine=engine, warm_start=bool(warm_start),
                 code=code_digest() if cache else "", n_jobs=n_jobs, progress=bool(progress))


def _table(*, X_train, y_train, X_test, y_test, s2_sorted, widths, engine, warm_start, code,
           n_jobs, progress):
    """:func:`evidence_grid` on checked arguments. ``code`` is not used: it is part of the
    cache's key."""
    import pandas as pd     # here, not at the top: the worker processes need no pandas (0.2 s)

    data = (X_train, y_train, X_test, y_test, s2_sorted)
    if engine == "fast":
        jobs = [delayed(_run_task)(*data, task, warm_start)
                for task in plan_tasks(X_train, s2_sorted, widths)]
    else:
        jobs = [delayed(_reference_task)(*data, width) for width in widths]
    parallel = Parallel(n_jobs=default_n_jobs(len(jobs)) if n_jobs is None else int(n_jobs),
                        batch_size=1, return_as="generator")
    rows = []
    with tqdm(total=widths.size * s2_sorted.size, disable=not progress, file=sys.stderr,
              desc="evidence grid", unit="point") as bar:
        for task_rows, _ in parallel(jobs):            # in the order the tasks finish
            rows.extend(task_rows)
            bar.update(len(task_rows))
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    return table.sort_values(["width", "s2"], kind="stable", ignore_index=True)


def _reference_task(X_train, y_train, X_test, y_test, s2_sorted, width):
    return reference_rows(X_train, y_train, X_test, y_test, s2_sorted, width), None


def cached(function):
    """``function``, a public function of :mod:`lib.hyper` (e.g.
    :func:`lib.hyper.maximise_evidence`), with its results kept on disk as :func:`evidence_grid`
    keeps its tables (``cache=True``): a call with the same arguments, by this or another
    chapter, returns the result the first one stored. The key: the function's name, its
    arguments and :func:`code_digest` (the code of :mod:`lib.hyper` and of the teaching core).
    """
    name = getattr(function, "__name__", None)
    if not (inspect.isfunction(function) and getattr(hyper, str(name), None) is function
            and name in hyper.__all__):
        raise TypeError(f"function must be a public function of lib.hyper, got {function!r}")
    call = disk_cache("grids").cache(_call)

    @functools.wraps(function)
    def on_disk(*args, **kwargs):
        return call(name, code_digest(), args, kwargs)

    return on_disk


def _call(name, code, args, kwargs):
    """``lib.hyper.<name>(*args, **kwargs)``; ``code`` is part of the cache's key."""
    return getattr(hyper, name)(*args, **kwargs)


def code_digest() -> str:
    """SHA-256 of the code a grid's table is computed by, of numpy's and scipy's versions and
    of Python's: part of :func:`evidence_grid`'s cache key, so that the cache never serves a
    table computed by other code. The code: every module of the teaching core, :mod:`lib.hyper`
    and :mod:`lib.fastgrid` (which import nothing else from ``lib``: ``tests/test_grid.py``), not
    the book's plots, the report's code or the other models."""
    return _code_digest(("*.py", "hyper/*.py", "fastgrid/*.py"), ("numpy", "scipy"))
