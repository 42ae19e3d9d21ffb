"""The fast engine behind :func:`lib.hyper.evidence_grid`: the same table as the reference
(:func:`lib.hyper.reference_rows`), computed faster (book appendix "How the grid is computed
fast"). ``from lib import fastgrid``; the engine's internals are in :mod:`lib.fastgrid.engine`.
"""
from lib.fastgrid import engine
from lib.fastgrid.engine import (
    ACCEPT_STEP,
    BAND_FRACTION,
    BAND_TOL,
    CHORD_TOL,
    DUAL_FRACTION,
    EXTRAPOLATE,
    MIN_SEGMENT,
    RANK_TOL,
    TARGET_TASKS,
    Task,
    Work,
    band_drop_threshold,
    chain_rows,
    estimate_costs,
    form_and_directions,
    forget_solvers,
    plan_tasks,
    run_task,
    settings,
)

__all__ = [name for name in dir() if not name.startswith("_")]
