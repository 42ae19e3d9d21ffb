"""The fast engine behind :func:`lib.hyper.evidence_grid` (an optimisation, nothing more);
``from lib import fastgrid``. Modules: :mod:`~lib.fastgrid.forms` (the three solver forms),
:mod:`~lib.fastgrid.decompose` (one decomposition per width, and which form),
:mod:`~lib.fastgrid.chain` (Newton along a chain of ``s2``: warm starts, chord steps, polish),
:mod:`~lib.fastgrid.schedule` (tasks), :mod:`~lib.fastgrid.settings` (the tuning constants).

What it computes is :mod:`lib.hyper.grid`'s reference, faster: at every ``(s2, l)`` the Laplace fit
of :func:`lib.laplace.fit_laplace`, warm-started along ``s2``, and the scores of
:func:`lib.scores.score_posterior`, equal to the reference to 1e-8 (``tests/test_fastgrid.py``
checks it for each solver form below). The work is shared across the grid:

* **one decomposition per width** of the RBF block ``R`` (``Phi = [R, 1]``, N x (N + 1)),
  then one of three forms of the same Newton iterations (:func:`form_and_directions`):

  - *primal, rank-reduced* (wide bumps): the ``k`` eigen-directions of ``R`` above a cut plus
    the bias, an exact reduction of the model (book eqs. ``grid-reduced``,
    ``engine-reduced-variance``);
  - *dual* (narrow bumps, ``R`` of full rank): the ``N x N`` matrix
    ``B = I + s2 W^1/2 Phi Phi^T W^1/2`` of Rasmussen & Williams (2006), algorithm 3.1,
    and the variances of their algorithm 3.2 (book eqs. ``grid-dual``, ``engine-dual-newton``,
    ``engine-dual-variance``);
  - *banded dual* (narrowest bumps): ``B`` block tridiagonal plus the bias's rank-one term,
    factorised block by block, with the variances by selected inversion (book eq.
    ``engine-banded``);

* **warm starts along s2**: the start is the best of a polynomial extrapolation of the last
  solutions, the last solution and zero; **chord steps** (Newton steps with the previous
  point's Cholesky factor, no factorisation) bring it within ``chord_tol`` of the MAP before
  the one factorisation a point usually needs; Newton's step with that factor is the **final
  polish**, and the log determinant is moved to the MAP to first order (book eq.
  ``engine-logdet-update``);
* **tasks**: each width's chain of ``s2`` values, the costliest split into segments, handed
  to the workers costliest first (:func:`plan_tasks`) by :func:`lib.hyper.grid.evidence_grid`;
  the split depends on the grid alone, so the table is the same on any number of workers.

The derivations are in the book's appendix chapter "How the grid is computed fast"
(``chapters/grid_engine.ipynb``); the equation labels above are its. :class:`Work` counts
what the speed features save (factorisations, chord steps, chosen starts), so that the tests
can pin them.
"""
from lib.fastgrid import chain, decompose, forms, schedule
from lib.fastgrid.chain import PointFit, Work, chain_rows
from lib.fastgrid.decompose import band_drop_threshold, form_and_directions
from lib.fastgrid.schedule import Task, estimate_costs, plan_tasks, run_task
from lib.fastgrid.settings import DEFAULT_SETTINGS, Settings

__all__ = [name for name in dir() if not name.startswith("_")]
