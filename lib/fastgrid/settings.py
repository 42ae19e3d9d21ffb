"""The fast engine's tuning constants, one frozen object (:class:`Settings`).

Every engine function that depends on a constant takes ``settings=`` (default
:data:`DEFAULT_SETTINGS`); to measure what a speed feature saves, switch it off in a copy:
``dataclasses.replace(DEFAULT_SETTINGS, max_chord=0)`` (book appendix "How the grid is computed
fast").
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """Tuning constants of :mod:`lib.fastgrid` (the equation labels are the appendix's)."""

    #: An eigenvalue ``nu`` of the RBF block is dropped when ``s2_max * nu**2 <= rank_tol``
    #: (its share of the log evidence is below ``rank_tol / 8``) ...
    rank_tol: float = 1e-12
    #: ... or when it is at the rounding level of the RBF block: ``nu <= noise_tol * nu_max``.
    noise_tol: float = 1e-13
    #: The dual (N x N) form is used when the reduced model keeps more than this fraction of N.
    dual_fraction: float = 0.7
    #: The leading eigenpairs come from a pivoted Cholesky factorisation and an SVD when the
    #: numerical rank is at most this fraction of N, else from a full eigendecomposition.
    pivoted_fraction: float = 0.5
    #: Chord steps with the previous point's factor run until ``max |da| <= chord_tol`` (or
    #: stall), and Newton's method stops once its step is ``max |da| <= accept_step``: that
    #: step is taken (the final polish, error of order ``accept_step**2``), the log
    #: determinant is moved to the MAP by eq. ``engine-logdet-update`` (error at most
    #: ``p accept_step**2 / 2``, ``p <= N``), and the variances are those of the factor's
    #: point (relative error about ``accept_step``).
    chord_tol: float = 1e-7
    accept_step: float = 1e-7
    #: Warm starts extrapolate the last this many solutions (a poor extrapolation is never
    #: the start chosen: the start with the largest log posterior is).
    extrapolate: int = 5
    #: Newton iterations allowed per grid point.
    max_iter: int = 200
    #: Chord steps stop when a step is not this much smaller than the one before ...
    chord_contraction: float = 0.5
    #: ... or after this many steps (0: no chord steps).
    max_chord: int = 40
    #: Below this value of ``1 - (B^{-1})_nn`` the dual uses the direct variance formula.
    direct_variance: float = 1e-6
    #: Banded dual: entries of ``R R^T`` at or below ``4 band_tol / (s2_max N^2)`` are
    #: dropped, which moves the log evidence and every variance by at most ``band_tol`` ...
    band_tol: float = 1e-10
    #: ... and the block-tridiagonal form is used when the bandwidth left after reordering is
    #: at most this fraction of N (beyond it the dense dual is faster) ...
    band_fraction: float = 0.4
    #: ... with blocks of at least this many rows.
    min_block: int = 48
    #: Scheduling: chains are split so that no task is estimated to cost more than the
    #: grid's total over ``target_tasks`` ...
    target_tasks: int = 24
    #: ... into segments of at least this many s2 values (each segment starts cold).
    min_segment: int = 10


#: The settings the book's grids are computed with.
DEFAULT_SETTINGS = Settings()
