"""The fast engine behind :func:`lib.hyper.evidence_grid`: the same table as the reference
(:func:`lib.hyper.reference_rows`), computed faster (book appendix "How the grid is computed
fast"). ``from lib import fastgrid``; the engine is :mod:`lib.fastgrid.engine`, its tuning
constants one frozen :class:`~lib.fastgrid.settings.Settings`.
"""
from lib.fastgrid import engine
from lib.fastgrid.engine import (
    Task,
    Work,
    band_drop_threshold,
    chain_rows,
    estimate_costs,
    form_and_directions,
    forget_solvers,
    plan_tasks,
    run_task,
)
from lib.fastgrid.settings import DEFAULT_SETTINGS, Settings

__all__ = [name for name in dir() if not name.startswith("_")]
