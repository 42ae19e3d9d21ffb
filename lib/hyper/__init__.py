"""Choosing the hyper-parameters ``(s2, l)`` (book part "Choosing the hyper-parameters").

* :mod:`lib.hyper.grid` -- the evidence grid: what a grid point is (:func:`grid_point`), the
  reference (:func:`reference_rows`) and :func:`evidence_grid`, which computes the reference's
  table with the fast engine of :mod:`lib.fastgrid` (or the reference itself);
* :mod:`lib.hyper.evidence` -- the evidence gradient, its maximisation and MacKay's update.

The names below are the sub-package's interface (``from lib import hyper``,
``hyper.evidence_grid(...)``).
"""
from lib.hyper.evidence import (
    DEFAULT_S2_BOUNDS,
    DEFAULT_STARTS,
    DEFAULT_WIDTH_BOUNDS,
    EvidenceGradient,
    EvidenceOptimum,
    MacKayResult,
    central_difference_gradient,
    evidence_gradient,
    mackay_s2,
    maximise_evidence,
)
from lib.hyper.grid import COLUMNS, evidence_grid, grid_point, reference_rows

__all__ = [name for name in dir() if not name.startswith("_")]
