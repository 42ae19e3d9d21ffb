"""One decomposition per width: which form the engine uses, and the leading eigenpairs or the
band it is built from (book appendix "How the grid is computed fast")."""
from __future__ import annotations

import numpy as np
from scipy.linalg import eigh, eigvalsh_tridiagonal, ldl, svd
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dpotrf, dpstrf
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import reverse_cuthill_mckee

from lib._validate import as_design, instance, positive_int, positive_scalar
from lib._validate import width as check_width
from lib.fastgrid.settings import DEFAULT_SETTINGS, Settings
from lib.features import rbf_from_squared_distances, squared_distances
from lib.fastgrid.forms import _Banded, _Dual, _Primal


def band_drop_threshold(n_train: int, s2_max: float, settings: Settings = DEFAULT_SETTINGS) -> float:
    """Entries of ``R R^T`` at or below this are dropped by the banded form (eq. ``engine-banded``).

    ``4 band_tol / (s2_max N^2)``: with ``W <= 1/4`` and ``B >= I`` the dropped entries move
    ``log|B|`` and every entry of ``B^{-1}`` by at most ``band_tol`` (they change ``B`` by at
    most ``band_tol`` in the sum of absolute values). ``n_train`` is N, ``s2_max`` the grid's
    largest prior variance."""
    n_train = positive_int(n_train, "n_train")
    settings = instance(settings, "settings", Settings)
    return 4.0 * settings.band_tol / (positive_scalar(s2_max, "s2_max") * n_train * n_train)


def _band_plan(KR, s2_max, cfg: Settings = DEFAULT_SETTINGS):
    """The banded dual's kept Gram block ``K0`` (``KR = R R^T`` less its entries at or below
    :func:`band_drop_threshold`), reverse Cuthill-McKee order ``perm`` and block size, as
    ``(K0, perm, block)``; None when the bandwidth exceeds ``band_fraction N``."""
    N = KR.shape[0]
    keep = np.abs(KR) > band_drop_threshold(N, s2_max, cfg)
    perm = reverse_cuthill_mckee(csr_matrix(keep), symmetric_mode=True)
    position = np.empty(N, dtype=np.intp)
    position[perm] = np.arange(N)
    rows, cols = np.nonzero(keep)
    bandwidth = int(np.max(np.abs(position[rows] - position[cols])))
    if bandwidth > cfg.band_fraction * N:
        return None
    return np.where(keep, KR, 0.0), perm, max(bandwidth, cfg.min_block)


def _rank_cut(nu_max, s2_max, cfg: Settings = DEFAULT_SETTINGS):
    """Eigenvalues of the RBF block at or below this are dropped (eq. ``grid-reduced``)."""
    return max(np.sqrt(cfg.rank_tol / s2_max), cfg.noise_tol * nu_max)


def _gram(R):
    """``R R^T`` (symmetric ``R``: syrk, half the flops of a product, then mirrored)."""
    KR = dsyrk(1.0, R, lower=1)
    KR += np.tril(KR, -1).T
    return KR


def _count_above(R, cut) -> int:
    """Number of eigenvalues of the symmetric ``R`` above ``cut`` (Sylvester's law of inertia):
    ``R - cut I = P L D L^T P^T`` (Bunch-Kaufman) has as many positive eigenvalues as the
    block-diagonal ``D``, whose 1 x 1 and 2 x 2 blocks make it tridiagonal."""
    _, D, _ = ldl(R - cut * np.eye(R.shape[0]), lower=True, check_finite=False)
    return int(np.sum(eigvalsh_tridiagonal(np.diag(D).copy(), np.diag(D, -1).copy()) > 0))


def _pivoted_cholesky(R, s2_max, cfg: Settings = DEFAULT_SETTINGS):
    """``P^T R P = L L^T`` stopped at rank ``m``, where the remainder (positive semi-definite)
    has trace below ``N tol``, far below the rank cut: ``(C, piv, m)``, ``O(N m^2)`` flops.

    No eigenvalue of ``R`` beyond the ``m``-th is above the cut (Weyl's inequality).
    """
    N = R.shape[0]
    tol = max(1e-3 * _rank_cut(0.0, s2_max, cfg) / N, N * np.finfo(float).eps * float(np.max(np.diag(R))))
    C, piv, m, info = dpstrf(R, tol=tol, lower=1)
    if info < 0:
        raise np.linalg.LinAlgError(f"pivoted Cholesky factorisation failed (info={info})")
    return C, piv, m


def _leading_eigenpairs(R, s2_max, pivoted=None, cfg: Settings = DEFAULT_SETTINGS):
    """Eigenvalues of the PSD matrix ``R`` above the rank cut, descending, and their vectors.

    When the numerical rank ``m`` of the pivoted Cholesky factorisation (given, or computed)
    is small (wide bumps), the SVD ``P L = U diag(sigma)`` gives ``R = U diag(sigma^2) U^T`` in
    ``O(N m^2)``; otherwise a full eigendecomposition (``O(N^3)``)."""
    N = R.shape[0]
    C, piv, m = _pivoted_cholesky(R, s2_max, cfg) if pivoted is None else pivoted
    if m <= cfg.pivoted_fraction * N:
        F = np.zeros((N, m))
        F[piv - 1] = np.tril(C[:, :m])                 # R = F F^T + remainder
        U, sigma, _ = svd(F, full_matrices=False, check_finite=False)
        nu, Q = sigma**2, U
    else:
        nu, Q = eigh(R, check_finite=False, driver="evd")
        nu, Q = nu[::-1], Q[:, ::-1]
    k = int(np.sum(nu > _rank_cut(nu[0], s2_max, cfg)))
    return nu[:k], Q[:, :k]


def _make_solver(X_train, X_test, width, s2_max, cfg: Settings = DEFAULT_SETTINGS):
    """Decompose the design of one width; pick the banded, dual or primal (reduced) form."""
    R = rbf_from_squared_distances(squared_distances(X_train, X_train), width)   # N x N block
    R_test = rbf_from_squared_distances(squared_distances(X_test, X_train), width)
    N = R.shape[0]
    Phi_K_test = R @ R_test.T + 1.0                    # k* = Phi phi* for every test input
    sqnorm_test = np.einsum("nm,nm->n", R_test, R_test) + 1.0                # |phi*|^2
    KR = None
    # A band of half-width b holds at most N (2b + 1) entries, and R R^T >= R entrywise
    # (R >= 0, R_nn = 1): a cheap test before forming R R^T.
    if np.count_nonzero(R > band_drop_threshold(N, s2_max, cfg)) <= N * (2 * cfg.band_fraction * N + 1):
        KR = _gram(R)                                  # K = KR + 1 1^T
        plan = _band_plan(KR, s2_max, cfg)
        if plan is not None:
            return _Banded(*plan, Phi_K_test, sqnorm_test, cfg)
    # Dual when the reduced model would keep more than dual_fraction N directions. Cheapest
    # tests first: R - cut I positive definite (a Cholesky) means every eigenvalue is kept; a
    # pivoted Cholesky of rank m bounds the count from above; the inertia of R - cut I (an
    # LDL^T factorisation) gives it exactly, without an eigendecomposition.
    cut = _rank_cut(0.0, s2_max, cfg)
    _, info = dpotrf(R - cut * np.eye(N), lower=1, overwrite_a=1)
    pivoted = None if info == 0 else _pivoted_cholesky(R, s2_max, cfg)
    if pivoted is None or (pivoted[2] + 1 > cfg.dual_fraction * N
                           and _count_above(R, cut) + 1 > cfg.dual_fraction * N):
        KR = _gram(R) if KR is None else KR
        KR += 1.0
        return _Dual(KR, Phi_K_test, sqnorm_test, cfg)
    nu_k, Q_k = _leading_eigenpairs(R, s2_max, pivoted, cfg)
    G = np.column_stack([Q_k * nu_k, np.ones(N)])     # Phi w = G z,  z = (Q_k^T w_rbf, w_bias)
    G_test = np.column_stack([R_test @ Q_k, np.ones(R_test.shape[0])])
    residual_test = np.maximum(sqnorm_test - np.einsum("nr,nr->n", G_test, G_test), 0.0)
    return _Primal(G, G_test, residual_test)


def form_and_directions(X_train, width, s2_max, settings: Settings = DEFAULT_SETTINGS) -> tuple[str, int]:
    """The form the engine uses at RBF width ``l`` = ``width`` on the training inputs (the
    centres) ``X_train`` (N, D), and how many weight directions it keeps; ``s2_max`` is the
    grid's largest prior variance (the rank cut is ``s2_max nu^2 <= rank_tol``).

    The form is ``"primal"`` (reduced rank, eq. ``grid-reduced``), ``"dual"`` (eq.
    ``grid-dual``) or ``"banded"`` (eq. ``engine-banded``); the directions are the eigenvalues
    of the RBF block above the cut, plus the bias: the number of weights of the reduced model
    (``N + 1`` when none is dropped).
    """
    X_train = as_design(X_train, "X_train")
    width, s2_max = check_width(width, "width"), positive_scalar(s2_max, "s2_max")
    settings = instance(settings, "settings", Settings)
    solver = _make_solver(X_train, X_train[:1], width, s2_max, settings)
    R = rbf_from_squared_distances(squared_distances(X_train, X_train), width)
    form = {_Primal: "primal", _Dual: "dual", _Banded: "banded"}[type(solver)]
    return form, _count_above(R, _rank_cut(0.0, s2_max, settings)) + 1
