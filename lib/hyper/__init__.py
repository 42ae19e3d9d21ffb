"""Choosing the hyper-parameters ``(s2, l)`` (book part "Choosing the hyper-parameters").

* :mod:`lib.hyper.grid` -- the evidence grid's definition: what a grid point is
  (:func:`grid_point`) and the reference (:func:`reference_rows`); running a whole grid fast
  is :func:`lib.fastgrid.evidence_grid`'s job (``lib.hyper`` never imports the engine);
* :mod:`lib.hyper.gradient` -- the exact gradient of the Laplace log evidence;
* :mod:`lib.hyper.search` -- its maximisation by L-BFGS-B (objective apart from optimiser).

The names below are the sub-package's interface (``from lib import hyper``,
``hyper.grid_point(...)``).
"""
from lib.hyper.gradient import EvidenceGradient, central_difference_gradient, evidence_gradient
from lib.hyper.grid import COLUMNS, grid_point, reference_rows
from lib.hyper.search import (DEFAULT_S2_BOUNDS, DEFAULT_STARTS, DEFAULT_WIDTH_BOUNDS,
                              EvidenceOptimum, EvidenceRun, maximise_evidence,
                              maximise_evidence_bias, maximise_evidence_s2)

__all__ = [name for name in dir() if not name.startswith("_")]
