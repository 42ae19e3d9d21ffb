"""The fast engine: :func:`evidence_grid` runs a whole grid, an optimisation and nothing more;
``from lib import fastgrid``. At every ``(s2, l)`` it computes :mod:`lib.hyper.grid`'s
reference (the Laplace fit of :func:`lib.laplace.fit_laplace`, warm-started along ``s2``, and
the scores of :func:`lib.scores._score_posterior`) to 1e-8 (``tests/test_fastgrid.py``, for each
solver form), sharing the work across the grid. :class:`Work` counts what that saves.

Derived in the book's appendix chapter "How the grid is computed fast"; the modules and the
equations they implement:

* :mod:`~lib.fastgrid.decompose`: one decomposition of the RBF block per width, and the form;
* :mod:`~lib.fastgrid.forms`: the three forms of the Newton iterations: primal rank-reduced
  (``grid-reduced``, ``engine-reduced-variance``), dual (``grid-dual``, ``engine-dual-newton``,
  ``engine-dual-variance``) and banded dual (``engine-banded``);
* :mod:`~lib.fastgrid.chain`: Newton along a chain of ``s2``: warm starts, chord steps, the
  final polish (``engine-logdet-update``);
* :mod:`~lib.fastgrid.schedule` (the tasks, costliest first) and
  :mod:`~lib.fastgrid.settings` (the tuning constants);
* :mod:`~lib.fastgrid.run`: :func:`evidence_grid` runs the tasks (joblib), with a progress bar
  (tqdm) and a disk cache (joblib.Memory), which :func:`cached` offers the searches of
  :mod:`lib.hyper` too; the reference on request.

Reference: Rasmussen & Williams (2006), algorithms 3.1 and 3.2, of which the dual form is a
version (``lib.fastgrid.forms._Dual`` cites their lines).
"""
from lib.fastgrid import chain, decompose, forms, run, schedule
from lib.fastgrid.chain import PointFit, Work, chain_fits, chain_rows
from lib.fastgrid.decompose import band_drop_threshold, form_and_directions
from lib.fastgrid.run import cached, code_digest, default_n_jobs, evidence_grid
from lib.fastgrid.schedule import Task, estimate_costs, plan_tasks, run_task
from lib.fastgrid.settings import DEFAULT_SETTINGS, Settings

__all__ = [name for name in dir() if not name.startswith("_")]
