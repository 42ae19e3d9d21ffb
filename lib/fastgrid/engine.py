"""The fast engine behind :func:`lib.hyper.grid.evidence_grid` (an optimisation, nothing more).

What it computes is :mod:`lib.hyper.grid`'s reference, faster: at every ``(s2, l)`` the Laplace fit
of :func:`lib.laplace.fit_laplace`, warm-started along ``s2``, and the scores of
:func:`lib.scores.score_posterior`, equal to the reference to 1e-8 (``tests/test_engine.py``
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
from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields

import numpy as np
from scipy.linalg import eigh, eigvalsh_tridiagonal, ldl, svd
from scipy.linalg.blas import dsyrk, dtrmm
from scipy.linalg.lapack import dlauum, dpotrf, dpotrs, dpstrf, dtrtri
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import reverse_cuthill_mckee
from threadpoolctl import threadpool_limits

from lib._validate import width as check_width
from lib._validate import as_matrix, positive_scalar
from lib.features import rbf_from_squared_distances, squared_distances
from lib.laplace import ConvergenceError, log_posterior_from_activations
from lib.likelihood import sigmoid
from lib.fastgrid.settings import DEFAULT_SETTINGS, Settings
from lib.scores import activation_scores


@dataclass
class Work:
    """What the engine did, summed over grid points (the counters the tests pin).

    Attributes
    ----------
    points : int
        Grid points fitted.
    setups : int
        Decompositions of a width's design (one per width and process; reused by segments).
    factorisations : int
        Cholesky factorisations of ``A_r`` or ``B`` (Newton iterations).
    chord_steps : int
        Steps taken with the previous point's factor (no factorisation).
    extrapolated_starts : int
        Points whose start was the polynomial extrapolation (not the last solution or zero).
    """

    points: int = 0
    setups: int = 0
    factorisations: int = 0
    chord_steps: int = 0
    extrapolated_starts: int = 0

    def add(self, other: "Work") -> "Work":
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self


def _curvature(a):
    """``W = s(a) s(-a)``: no ``1 - s`` that would round to zero."""
    return sigmoid(a) * sigmoid(-a)


# --------------------------------------------------------------------------- the solver forms


@dataclass(frozen=True)
class _Factor:
    """Cholesky factor of ``A_r`` (primal: lower, ``A_r = L L^T``) or ``B`` (dual: upper,
    ``B = U^T U``), built at curvature ``W`` and prior variance ``s2``."""

    chol: object
    W: np.ndarray
    s2: float
    log_det: float          # log|I_r + s2 G^T W G| or log|B| (book eqs. grid-reduced, grid-dual)


class _Primal:
    """Reduced design ``G`` (N x r): the MAP ``z`` of the model ``a = G z`` (eq. ``grid-reduced``)."""

    def __init__(self, G, G_test, residual_test):
        self.G, self.G_test, self.residual_test = G, G_test, residual_test
        self.size = G.shape[1]

    def activations(self, z, s2):
        return self.G @ z

    def weight_scale(self, s2):
        return 1.0                                     # z are coordinates of w itself

    def sq_norm(self, z, a, s2):
        return float(z @ z)                            # w.w (w_perp = 0)

    def factor(self, a, s2):
        W = _curvature(a)
        GwT = self.G.T * np.sqrt(W)[None, :]           # (W^1/2 G)^T, Fortran order for BLAS
        A = dsyrk(1.0, GwT, lower=1)                   # G^T W G (lower triangle)
        A[np.diag_indices_from(A)] += 1.0 / s2         # A_r = I / s2 + G^T W G
        L, info = dpotrf(A, lower=1, clean=1, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"Cholesky factorisation of A_r failed (info={info})")
        D = 2.0 * float(np.sum(np.log(np.diag(L)))) + self.size * np.log(s2)
        return _Factor(L, W, s2, D)

    def step(self, fac, z, a, y, s2):
        """``z + A_f^{-1} grad Psi(z)``: Newton's step if ``fac`` is at ``(a, s2)``, else a chord step."""
        g = self.G.T @ (y - sigmoid(a)) - z / s2       # gradient of Psi in z
        z_new = z + dpotrs(fac.chol, g, lower=1)[0]     # A_f^{-1} g
        return z_new, self.G @ z_new

    def variances(self, fac, s2):
        """Posterior variances of the train and test activations (eq. ``engine-reduced-variance``)."""
        Li, info = dtrtri(fac.chol, lower=1)           # L^{-1}: products below run as BLAS-3
        if info != 0:                                  # trmm, faster here than two trsm
            raise np.linalg.LinAlgError(f"triangular inverse failed (info={info})")
        V = dtrmm(1.0, Li, self.G.T, lower=1)          # L^{-1} G^T
        Vt = dtrmm(1.0, Li, self.G_test.T, lower=1)
        var_test = np.einsum("rn,rn->n", Vt, Vt) + s2 * self.residual_test
        return np.einsum("rn,rn->n", V, V), var_test

    def test_activations(self, z, s2):
        return self.G_test @ z


class _Dual:
    """Gram matrix ``K`` (N x N): the MAP in the form ``a = s2 K alpha`` (eqs. ``grid-dual``,
    ``engine-dual-newton``, ``engine-dual-variance``).

    Rasmussen & Williams (2006) with the kernel matrix ``s2 K``: :meth:`factor` is line 5 of
    algorithm 3.1 (``L = cholesky(B)``; ``log|B|`` enters line 10's ``log q``), :meth:`step`
    lines 6-8 (the Newton update, in residual form), :meth:`variances` lines 5-6 of algorithm
    3.2 (``v = L^{-1} W^1/2 k*``, ``V[f*] = k(x*, x*) - v.v``) for the test inputs.
    """

    def __init__(self, K, K_test, sqnorm_test, cfg: Settings = DEFAULT_SETTINGS):
        self.cfg = cfg
        self.K, self.K_test, self.sqnorm_test = K, K_test, sqnorm_test
        self.size = K.shape[0]

    # The products with K and the solves with B are the only parts the banded form replaces.

    def _K(self, v):
        """``K v``."""
        return self.K @ v

    def _K_columns(self, index):
        """Columns ``K[:, index]`` and diagonal entries ``K[index, index]``."""
        return self.K[:, index], self.K[index, index]

    def _solve(self, fac, v):
        """``B_f^{-1} v`` (``B_f = U^T U``)."""
        return dpotrs(fac.chol, v, lower=0)[0]

    def _inverse_parts(self, fac):
        """``diag(B_f^{-1})`` and a function ``V -> diag(V^T B_f^{-1} V)``."""
        Ui = _upper_inverse(fac.chol)                  # U^{-1}; B^{-1} = U^{-1} U^{-T}

        def quadratic(V):                              # |U^{-T} V|^2 by columns (U^{-T} = L^{-1})
            Y = dtrmm(1.0, Ui, V, lower=0, trans_a=1)
            return np.einsum("in,in->n", Y, Y)

        return np.einsum("ni,ni->n", Ui, Ui), quadratic

    def activations(self, alpha, s2):
        return s2 * self._K(alpha)

    def weight_scale(self, s2):
        return s2                                      # w = Phi^T (s2 alpha)

    def sq_norm(self, alpha, a, s2):
        return s2 * float(alpha @ a)                   # w.w = s2^2 alpha^T K alpha = s2 alpha.a

    def factor(self, a, s2):
        W = _curvature(a)
        r = np.sqrt(W)
        B = self.K * (s2 * r)[:, None]
        B *= r[None, :]                                # s2 W^1/2 K W^1/2
        B.flat[:: self.size + 1] += 1.0                # B = I + s2 W^1/2 K W^1/2
        # B = U^T U; B is symmetric, so B.T is its Fortran-ordered view (factorised in place).
        # The upper factor, because LAPACK's triangular inverse (variances) is faster for it.
        U, info = dpotrf(B.T, lower=0, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"Cholesky factorisation of B failed (info={info})")
        return _Factor(U, W, s2, 2.0 * float(np.sum(np.log(np.diag(U)))))

    def step(self, fac, alpha, a, y, s2):
        """``alpha + J_f^{-1} (y - s - alpha)``, ``J = I + W s2 K`` (eq. ``engine-dual-newton``).

        ``J_f^{-1} v = v - W_f^{1/2} B_f^{-1} W_f^{1/2} s2_f K v`` with the factor's own ``W_f``,
        ``s2_f``: Newton's step if they are those of ``(a, s2)``, else a chord step.
        """
        r = np.sqrt(fac.W)
        v = (y - sigmoid(a)) - alpha                   # residual of alpha = y - s(s2 K alpha)
        Jv = v - r * self._solve(fac, r * (fac.s2 * self._K(v)))
        alpha_new = alpha + Jv
        return alpha_new, self.activations(alpha_new, s2)

    def variances(self, fac, s2):
        """Posterior variances of the train and test activations, from the factor
        (eq. ``engine-dual-variance``)."""
        r = np.sqrt(fac.W)
        diag_inv, quadratic = self._inverse_parts(fac)
        one_minus = 1.0 - diag_inv                     # 1 - diag(B^{-1})
        ok = one_minus > self.cfg.direct_variance
        h = np.empty(self.size)
        h[ok] = one_minus[ok] / fac.W[ok]
        bad = np.flatnonzero(~ok)
        if bad.size:                                   # direct formula where (1 - B^-1_nn) is tiny
            K_bad, K_bad_diag = self._K_columns(bad)
            h[bad] = s2 * K_bad_diag - quadratic((s2 * r)[:, None] * K_bad)
        var_test = s2 * self.sqnorm_test - quadratic((s2 * r)[:, None] * self.K_test)   # k* = Phi phi*
        return np.maximum(h, 0.0), np.maximum(var_test, 0.0)

    def test_activations(self, alpha, s2):
        return s2 * (alpha @ self.K_test)


def _upper_inverse(U, base: int = 128) -> np.ndarray:
    """Inverse of an upper-triangular matrix by recursive 2 x 2 blocking.

    ``[[U11, U12], [0, U22]]^{-1} = [[X11, -X11 U12 X22], [0, X22]]`` with ``Xii = Uii^{-1}``:
    the same arithmetic as LAPACK's ``dtrtri``, but the off-diagonal blocks go through BLAS-3
    ``dtrmm`` (about 1.5 times faster here on a 750 x 750 factor); blocks of ``base`` rows or
    fewer use ``dtrtri``.
    """
    n = U.shape[0]
    if n <= base:
        Ui, info = dtrtri(U, lower=0)
        if info != 0:
            raise np.linalg.LinAlgError(f"triangular inverse failed (info={info})")
        return Ui
    k = n // 2
    X11 = _upper_inverse(U[:k, :k], base)
    X22 = _upper_inverse(U[k:, k:], base)
    X12 = dtrmm(-1.0, X11, np.asfortranarray(U[:k, k:]), lower=0)   # -X11 U12
    X12 = dtrmm(1.0, X22, X12, side=1, lower=0)                      # (-X11 U12) X22
    Ui = np.zeros((n, n), order="F")
    Ui[:k, :k], Ui[:k, k:], Ui[k:, k:] = X11, X12, X22
    return Ui


@dataclass(frozen=True)
class _BandFactor:
    """Block Cholesky factor of ``B0 = L L^T`` (block lower bidiagonal: diagonal blocks
    ``L_k``, kept as their inverses ``Li[k]``, and blocks ``Ms[k]`` below them) and the
    rank-one correction of the bias (eq. ``engine-banded``)."""

    Li: list                # L_k^{-1} (lower triangular)
    Ms: list                # M_k, block (k + 1, k) of L
    q: np.ndarray           # L^{-1} c
    t: np.ndarray           # B0^{-1} c
    gamma: float            # 1 + c.B0^{-1} c


class _Banded(_Dual):
    """Dual form with a block-tridiagonal ``B`` (narrow bumps, eq. ``engine-banded``).

    ``K = K0 + 1 1^T`` with ``K0`` the RBF Gram block ``R R^T`` less its negligible entries,
    sparse; in the reverse Cuthill-McKee order ``perm`` it is banded, so
    ``B0 = I + s2 W^{1/2} K0 W^{1/2}`` is block tridiagonal with blocks of ``block`` rows, and
    the bias is the rank-one term ``c c^T``, ``c = s2^{1/2} W^{1/2} 1``.
    """

    def __init__(self, K0, perm, block, K_test, sqnorm_test, cfg: Settings = DEFAULT_SETTINGS):
        N = K0.shape[0]
        self.cfg = cfg
        self.K0 = csr_matrix(K0)
        self.K_test, self.sqnorm_test = K_test, sqnorm_test
        self.size, self.perm = N, perm
        self.K_diag = np.diag(K0) + 1.0                # K_nn
        Kp = K0[np.ix_(perm, perm)]
        edges = list(range(0, N, block)) + [N]
        self.blocks = list(zip(edges[:-1], edges[1:]))
        self.diag_blocks = [np.ascontiguousarray(Kp[s:e, s:e]) for s, e in self.blocks]
        self.sub_blocks = [np.ascontiguousarray(Kp[e:e2, s:e])   # block (k + 1, k)
                           for (s, e), (_, e2) in zip(self.blocks[:-1], self.blocks[1:])]

    def _K(self, v):
        """``K v = K0 v + 1 (1.v)``."""
        return self.K0 @ v + np.sum(v)

    def _K_columns(self, index):
        return self.K0[index].toarray().T + 1.0, self.K_diag[index]   # K symmetric

    def factor(self, a, s2):
        W = _curvature(a)
        r = np.sqrt(W)[self.perm]
        Li, Ms, log_det = [], [], 0.0
        for k, (s, e) in enumerate(self.blocks):
            rk = r[s:e]
            A = (s2 * rk)[:, None] * self.diag_blocks[k] * rk[None, :]
            A.flat[:: e - s + 1] += 1.0                # block k of B0 = I + s2 W^1/2 K0 W^1/2
            if Ms:                                     # Schur complement of the blocks above
                A -= dsyrk(1.0, Ms[-1], lower=1)       # M M^T (lower triangle, all dpotrf reads)
            L, info = dpotrf(A, lower=1, clean=1, overwrite_a=1)
            if info != 0:
                raise np.linalg.LinAlgError(f"Cholesky factorisation of B failed (info={info})")
            log_det += 2.0 * float(np.sum(np.log(np.diag(L))))
            Li.append(dtrtri(L, lower=1)[0])
            if k + 1 < len(self.blocks):
                s1, e1 = self.blocks[k + 1]
                C = (s2 * r[s1:e1])[:, None] * self.sub_blocks[k] * rk[None, :]
                Ms.append(dtrmm(1.0, Li[-1], C, side=1, lower=1, trans_a=1))   # M_k = C_k L_k^{-T}
        c = np.sqrt(s2) * r
        q = _block_forward(Li, Ms, self.blocks, c)
        t = _block_backward(Li, Ms, self.blocks, q)
        gamma = 1.0 + float(q @ q)
        band = _BandFactor(Li, Ms, q, t, gamma)
        return _Factor(band, W, s2, log_det + np.log(gamma))   # eq. engine-banded

    def _solve(self, fac, v):
        """``B^{-1} v`` in the original order (Sherman-Morrison on ``B0 + c c^T``)."""
        band = fac.chol
        vp = v[self.perm]
        x = _block_backward(band.Li, band.Ms, self.blocks, _block_forward(band.Li, band.Ms, self.blocks, vp))
        x -= band.t * (float(band.t @ vp) / band.gamma)
        out = np.empty_like(x)
        out[self.perm] = x
        return out

    def _inverse_parts(self, fac):
        """``diag(B^{-1}) = diag(B0^{-1}) - t^2 / gamma`` (selected inversion) and
        ``V -> diag(V^T B^{-1} V)`` (block forward substitution, Sherman-Morrison)."""
        band = fac.chol

        def quadratic(V):
            Y = _block_forward(band.Li, band.Ms, self.blocks, V[self.perm])
            return np.einsum("nj,nj->j", Y, Y) - (Y.T @ band.q) ** 2 / band.gamma

        diag_inv = np.empty(self.size)
        diag_inv[self.perm] = _block_inverse_diagonal(band.Li, band.Ms) - band.t**2 / band.gamma
        return diag_inv, quadratic


def _block_forward(Li, Ms, blocks, V):
    """``L^{-1} V`` for the block lower-bidiagonal ``L`` (vector or matrix ``V``):
    ``Y_k = L_k^{-1} (V_k - M_{k-1} Y_{k-1})``."""
    Y = np.empty_like(V)
    for k, (s, e) in enumerate(blocks):
        rhs = V[s:e] if k == 0 else V[s:e] - Ms[k - 1] @ Y[blocks[k - 1][0]:s]
        Y[s:e] = Li[k] @ rhs if V.ndim == 1 else dtrmm(1.0, Li[k], rhs, lower=1)
    return Y


def _block_backward(Li, Ms, blocks, Y):
    """``L^{-T} Y`` for the block lower-bidiagonal ``L``: ``X_k = L_k^{-T} (Y_k - M_k^T X_{k+1})``."""
    X = np.empty_like(Y)
    for k in range(len(blocks) - 1, -1, -1):
        s, e = blocks[k]
        rhs = Y[s:e] if k == len(blocks) - 1 else Y[s:e] - Ms[k].T @ X[e:blocks[k + 1][1]]
        X[s:e] = Li[k].T @ rhs
    return X


def _block_inverse_diagonal(Li, Ms) -> np.ndarray:
    """Diagonal of ``(L L^T)^{-1}`` for the block lower-bidiagonal ``L`` (selected inversion).

    From ``L^T Z = L^{-1}`` (Takahashi's equations), block by block from the last: with
    ``X_k = M_k L_k^{-1}``, ``Z_{k+1,k} = -Z_{k+1,k+1} X_k`` and
    ``Z_kk = L_k^{-T} L_k^{-1} + X_k^T Z_{k+1,k+1} X_k``; only the diagonal blocks are formed.
    """
    diagonals = []
    Z = None
    for k in range(len(Li) - 1, -1, -1):
        Z_new, info = dlauum(Li[k], lower=1)           # L_k^{-T} L_k^{-1}, lower triangle
        Z_new = np.tril(Z_new) + np.tril(Z_new, -1).T
        if Z is not None:
            X = dtrmm(1.0, Li[k], Ms[k], side=1, lower=1)   # M_k L_k^{-1}
            Z_new += X.T @ (Z @ X)
        Z = Z_new
        diagonals.append(np.diag(Z))
    return np.concatenate(diagonals[::-1])


def band_drop_threshold(n_train: int, s2_max: float, settings: Settings = DEFAULT_SETTINGS) -> float:
    """Entries of ``R R^T`` at or below this are dropped by the banded form (eq. ``engine-banded``).

    ``4 band_tol / (s2_max N^2)``: with ``W <= 1/4`` and ``B >= I`` the dropped entries move
    ``log|B|`` and every entry of ``B^{-1}`` by at most ``band_tol``.

    Parameters
    ----------
    n_train : int
        Number of training points N.
    s2_max : float
        Largest prior variance of the grid.

    Returns
    -------
    float
    """
    return 4.0 * settings.band_tol / (positive_scalar(s2_max, "s2_max") * n_train * n_train)


def _band_plan(KR, s2_max, cfg: Settings = DEFAULT_SETTINGS):
    """Reverse Cuthill-McKee order and block size of the banded dual, or None.

    Entries of ``KR = R R^T`` at or below ``tau = 4 band_tol / (s2_max N^2)`` are dropped: with
    ``W <= 1/4`` they change ``B`` by at most ``band_tol`` in the sum of absolute values, hence
    ``log|B|`` and every entry of ``B^{-1}`` by at most about ``band_tol`` (``B >= I``).

    Returns
    -------
    (K0, perm, block) or None
        The kept Gram block, the permutation and the block size; None when the bandwidth
        exceeds ``band_fraction N``.
    """
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
    """Number of eigenvalues of the symmetric ``R`` above ``cut`` (Sylvester's law of inertia).

    ``R - cut I = P L D L^T P^T`` (Bunch-Kaufman) has as many positive eigenvalues as the
    block-diagonal ``D``, whose 1 x 1 and 2 x 2 blocks make it tridiagonal.
    """
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
    ``O(N m^2)``; otherwise a full eigendecomposition (``O(N^3)``).
    """
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
    """The form the engine uses at this width, and how many weight directions it keeps.

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs (the centres).
    width : float
        RBF width ``l``.
    s2_max : float
        Largest prior variance of the grid (the rank cut is ``s2_max nu^2 <= rank_tol``).

    Returns
    -------
    form : str
        ``"primal"`` (reduced rank, eq. ``grid-reduced``), ``"dual"`` (eq. ``grid-dual``) or
        ``"banded"`` (eq. ``engine-banded``).
    directions : int
        The eigenvalues of the RBF block above the cut, plus the bias: the number of weights
        of the reduced model (``N + 1`` when none is dropped).
    """
    X_train = as_matrix(X_train, "X_train")
    width, s2_max = check_width(width, "width"), positive_scalar(s2_max, "s2_max")
    solver = _make_solver(X_train, X_train[:1], width, s2_max, settings)
    R = rbf_from_squared_distances(squared_distances(X_train, X_train), width)
    form = {_Primal: "primal", _Dual: "dual", _Banded: "banded"}[type(solver)]
    return form, _count_above(R, _rank_cut(0.0, s2_max, settings)) + 1


#: The solvers built in this process, by data, width and s2_max, least recently used first:
#: the segments of one width's chain that run in the same process share its decomposition.
_SOLVERS: dict = {}
_KEEP_SOLVERS = 2


def forget_solvers() -> None:
    """Empty this process's store of decompositions (the benchmark times tasks from cold)."""
    _SOLVERS.clear()


def _solver(X_train, X_test, width, s2_max, work, cfg: Settings = DEFAULT_SETTINGS):
    """The decomposition of one width, from this process's store (the last two used) or new."""
    digest = hashlib.sha1(np.ascontiguousarray(X_train).tobytes()
                          + np.ascontiguousarray(X_test).tobytes()).hexdigest()
    key = (digest, X_train.shape, X_test.shape, float(width), float(s2_max), cfg)
    solver = _SOLVERS.pop(key, None)
    if solver is None:
        solver = _make_solver(X_train, X_test, width, s2_max, cfg)
        work.setups += 1
    _SOLVERS[key] = solver                             # the most recently used last
    while len(_SOLVERS) > _KEEP_SOLVERS:
        _SOLVERS.pop(next(iter(_SOLVERS)))
    return solver


# --------------------------------------------------------------------------- Newton per point


def _starting_points(history, log_s2, solver):
    """Candidate starts ``(state, activations)``, the extrapolation first (the caller keeps the
    one with the largest Psi).

    ``history`` holds ``(log s2, u, a)`` of the last solutions, with ``u`` the state scaled to
    weight coordinates (``z``, or ``s2 alpha`` in the dual) and ``a`` its activations: the
    candidates are the polynomial extrapolation of ``u`` in ``log s2`` (through all of
    ``history``, when it holds two or more), the last ``u`` (the same weights), and zero. The
    activations are linear in ``u`` (``a = G z`` or ``K s2 alpha``), so they are extrapolated
    alongside, not recomputed.
    """
    zero = np.zeros(solver.size)
    if not history:
        return [(zero, solver.activations(zero, 1.0))]
    scale = solver.weight_scale(np.exp(log_s2))
    last = (history[-1][1] / scale, history[-1][2])
    candidates = [last, (zero, np.zeros_like(last[1]))]
    if len(history) >= 2:
        ts = [t for t, _, _ in history]
        u0, a0 = np.zeros(solver.size), np.zeros_like(history[-1][2])
        for i, (ti, ui, ai) in enumerate(history):     # Lagrange basis polynomials
            weight = np.prod([(log_s2 - tj) / (ti - tj) for j, tj in enumerate(ts) if j != i])
            u0 += weight * ui
            a0 += weight * ai
        candidates.insert(0, (u0 / scale, a0))
    return candidates


def _log_posterior(solver, x, a, y, s2):
    """``Psi = L(a) - w.w / (2 s2)`` (:func:`lib.laplace.log_posterior_from_activations`)."""
    return log_posterior_from_activations(a, y, solver.sq_norm(x, a, s2), s2)


def _chord(solver, fac, y, s2, x, a, psi, cfg: Settings = DEFAULT_SETTINGS):
    """Chord iterations: Newton-like steps with a factor built elsewhere (no factorisation).

    With the previous grid point's factor they converge linearly (the rate is the relative
    change of ``A`` between neighbouring points). Stops at ``max |da| <= tol``, or as soon as
    a step fails to contract or to raise Psi.

    Returns
    -------
    x, a, psi, steps
        The last accepted state and the number of steps taken.
    """
    previous, steps = np.inf, 0
    for _ in range(cfg.max_chord):
        x_new, a_new = solver.step(fac, x, a, y, s2)
        change = float(np.max(np.abs(a_new - a)))
        psi_new = _log_posterior(solver, x_new, a_new, y, s2)
        if change > cfg.chord_contraction * previous or psi_new < psi - 1e-12 * abs(psi):
            break
        x, a, psi, previous, steps = x_new, a_new, psi_new, change, steps + 1
        if change <= cfg.chord_tol:
            break
    return x, a, psi, steps


@dataclass(frozen=True)
class PointFit:
    """The MAP and Laplace quantities at one grid point (what :func:`_fit_point` returns).

    Attributes
    ----------
    x : ndarray
        The solver form's state at the MAP (reduced weights or dual coefficients).
    factor : object
        The last factorisation (the next point's chord steps reuse it).
    a, h : ndarray, shape (N,)
        Training activations at the MAP and their posterior variances.
    mu_test, var_test : ndarray, shape (N_test,)
        Test activations' posterior means and variances.
    log_evidence : float
        Laplace log evidence.
    n_iter : int
        Newton iterations (factorisations).
    """

    x: np.ndarray
    factor: object
    a: np.ndarray
    h: np.ndarray
    mu_test: np.ndarray
    var_test: np.ndarray
    log_evidence: float
    n_iter: int


def _fit_point(solver, y, s2, starts, fac, work, cfg: Settings = DEFAULT_SETTINGS):
    """MAP and Laplace quantities at one ``(s2, l)``, from the best of ``starts`` (a list of
    ``(state, activations)``, the extrapolation first when there is one) and with chord steps
    with the previous point's factor ``fac`` when given.

    Chord steps with ``fac`` until ``max |da| <= chord_tol``, then Newton's method with step
    halving (as :func:`lib.laplace.fit_laplace`), each full step followed by chord steps with
    its factor (they save factorisations far from the MAP, after a cold start), until the
    largest change of an activation is at most ``accept_step``; that last step is taken (the
    polish) and the log determinant moved from the factor's point to the MAP to first order
    (eq. ``engine-logdet-update``).

    Returns
    -------
    PointFit
    """
    candidates = [(_log_posterior(solver, x0, a0, y, s2), k, x0, a0)
                  for k, (x0, a0) in enumerate(starts)]
    psi, chosen, x, a = max(candidates, key=lambda candidate: (candidate[0], -candidate[1]))
    if chosen == 0 and len(starts) == 3:
        work.extrapolated_starts += 1
    if fac is not None:
        x, a, psi, steps = _chord(solver, fac, y, s2, x, a, psi, cfg)
        work.chord_steps += steps
    for it in range(1, cfg.max_iter + 1):
        fac = solver.factor(a, s2)
        work.factorisations += 1
        x_new, a_new = solver.step(fac, x, a, y, s2)
        if np.max(np.abs(a_new - a)) <= cfg.accept_step:   # converged: the step is the polish
            x, a = x_new, a_new
            psi = _log_posterior(solver, x, a, y, s2)
            h, var_test = solver.variances(fac, s2)
            log_det = fac.log_det + float(h @ (_curvature(a) - fac.W))   # engine-logdet-update
            mu_test = solver.test_activations(x, s2)
            work.points += 1
            return PointFit(x=x, factor=fac, a=a, h=h, mu_test=mu_test, var_test=var_test,
                            log_evidence=psi - 0.5 * log_det, n_iter=it)
        t = 1.0
        while True:                                    # halve until Psi does not decrease
            x_t, a_t = x + t * (x_new - x), a + t * (a_new - a)
            psi_t = _log_posterior(solver, x_t, a_t, y, s2)
            if psi_t >= psi - 1e-12 * abs(psi) or t < 1e-10:
                break
            t *= 0.5
        x, a, psi = x_t, a_t, psi_t
        if t == 1.0:                                   # a full step: the factor may carry on
            x, a, psi, steps = _chord(solver, fac, y, s2, x, a, psi, cfg)
            work.chord_steps += steps
    raise ConvergenceError(f"Newton's method did not converge in {cfg.max_iter} iterations (s2={s2})")


def chain_rows(X_train, y_train, X_test, y_test, s2_values, width, s2_max, *, warm_start=True,
               settings: Settings = DEFAULT_SETTINGS):
    """The grid points of one chain: ``s2_values`` (ascending) at one width.

    The first point starts from zero; each next one from the best of the extrapolated
    previous solutions, the last one and zero, with chord steps with the last factor
    (``warm_start=False``: every point from zero, no chord steps). ``s2_max`` is the grid's
    largest prior variance (it sets the rank cut and the banded form's threshold, so the
    segments of one width share a decomposition). ``settings``: the engine's constants.

    Arrays must be checked (:func:`lib.hyper.grid.evidence_grid` does it).

    Returns
    -------
    rows : list of dict
        One per ``s2``, the columns of :data:`lib.hyper.grid.COLUMNS`.
    work : Work
    """
    work = Work()
    with threadpool_limits(limits=1):                  # same arithmetic on any backend
        solver = _solver(X_train, X_test, width, s2_max, work, settings)
        rows, history, fac = [], [], None
        for s2 in s2_values:
            starts = _starting_points(history[-settings.extrapolate:], np.log(s2), solver)
            try:
                fit = _fit_point(solver, y_train, s2, starts, fac, work, settings)
            except ConvergenceError as err:
                raise ConvergenceError(f"{err} at width={width}") from None
            if warm_start:
                history.append((np.log(s2), fit.x * solver.weight_scale(s2), fit.a))
                fac = fit.factor
            else:
                fac = None
            train = activation_scores(fit.a, fit.h, y_train)
            test = activation_scores(fit.mu_test, fit.var_test, y_test)
            rows.append({
                "s2": float(s2), "width": float(width), "log_evidence": fit.log_evidence,
                **{f"train_{key}": value for key, value in train.items()},
                **{f"test_{key}": value for key, value in test.items()},
                "n_iter": fit.n_iter,
            })
    return rows, work


# --------------------------------------------------------------------------- scheduling


@dataclass(frozen=True)
class Task:
    """One unit of parallel work: the chain of ``s2`` values ``s2_sorted[start:stop]`` at ``width``.

    ``cost`` is the model's estimate in seconds (:func:`estimate_costs`), setup included.
    """

    width: float
    start: int
    stop: int
    cost: float


#: Cost model (:func:`estimate_costs`), in seconds on one core of the machine it was fitted
#: on (the book's): a fixed part per point, then per flop of the factorisation-sized work of
#: each form, and per block of the banded form.
_COST_POINT = 1.2e-3
_COST_DUAL = 6e-11
_COST_PRIMAL = 1.3e-10
_COST_BANDED = 4.4e-10
_COST_BLOCK = 4e-4
#: A task's setup costs about this many of its points plus a fixed part; a segment that does
#: not start at the smallest s2 starts cold, which costs about COLD_POINTS more points.
_SETUP_POINTS, _SETUP_FIXED, _COLD_POINTS = 3.0, 0.015, 6.0


def estimate_costs(X_train, widths, s2_max, settings: Settings = DEFAULT_SETTINGS) -> np.ndarray:
    """Estimated seconds per grid point at each width (for scheduling only).

    A point costs about one factorisation and its products, ``N m^2`` flops, plus a fixed
    overhead: ``m`` is ``N`` for the dual form, the block size ``b`` for the banded one (whose
    ``N / b`` blocks each cost a little more) and the number of kept directions for the primal
    one. These are estimated without decomposing anything, from the RBF block's rows at (up
    to) 200 training points: the mean number ``k`` of entries above the banded form's
    threshold gives the band (about ``sqrt(N k)`` after reordering, in two dimensions), and the
    participation ratio ``p = N^2 / sum R_nm^2`` the rank (about ``30 p^0.76``, fitted on the
    lab data). The estimates only order and split the tasks (:func:`plan_tasks`); a poor one
    costs time, never accuracy.

    Returns
    -------
    ndarray, shape (P,)
    """
    N = X_train.shape[0]
    rows = X_train[:: max(1, N // 200)]
    d2 = squared_distances(rows, X_train)
    threshold = band_drop_threshold(N, s2_max, settings)
    costs = []
    for width in widths:
        R = rbf_from_squared_distances(d2, width)
        k = float(np.mean(np.sum(R > threshold, axis=1)))
        p = N / float(np.mean(np.sum(R * R, axis=1)))
        band = max(np.sqrt(N * k), settings.min_block)
        rank = min(30.0 * p**0.76, N)
        if band <= settings.band_fraction * N:
            cost = _COST_BANDED * N * band**2 + _COST_BLOCK * N / band
        elif rank + 1 > settings.dual_fraction * N:
            cost = _COST_DUAL * float(N) ** 3
        else:
            cost = _COST_PRIMAL * N * rank**2
        costs.append(_COST_POINT + cost)
    return np.asarray(costs)


def _task_cost(per_point, start, stop):
    cold = _COLD_POINTS if start > 0 else 0.0
    return per_point * (stop - start + _SETUP_POINTS + cold) + _SETUP_FIXED


def plan_tasks(X_train, s2_sorted, widths, *, target_tasks=None, min_segment=None,
               settings: Settings = DEFAULT_SETTINGS):
    """The tasks of a grid, costliest first.

    Each width's chain is split into the fewest segments of consecutive ``s2`` values (as
    equal in length as possible, each at least ``min_segment`` long) for which no task is
    estimated to cost more than the whole grid's estimate over ``target_tasks``; the tasks are
    then sorted by estimated cost, largest first (the longest-processing-time rule: handed to
    free workers in this order, they keep the workers busy to the end).

    The split depends on the grid and the data only, never on the number of workers, so the
    table is the same, to the last bit, on any number of workers. A segment starts cold (from
    zero), so its numbers differ from an unsplit chain's within the engine's tolerance.
    ``target_tasks=1`` splits nothing.

    Parameters
    ----------
    X_train : ndarray, shape (N, D)
    s2_sorted : ndarray, shape (S,)
        Prior variances, ascending.
    widths : ndarray, shape (P,)
    target_tasks : int, optional
        Default ``settings.target_tasks``.
    min_segment : int, optional
        Default ``settings.min_segment``.

    Returns
    -------
    list of Task
    """
    target_tasks = settings.target_tasks if target_tasks is None else target_tasks
    min_segment = settings.min_segment if min_segment is None else min_segment
    per_point = estimate_costs(X_train, widths, s2_sorted[-1], settings)
    S = len(s2_sorted)
    limit = sum(_task_cost(p, 0, S) for p in per_point) / target_tasks
    tasks = []
    for width, p in zip(widths, per_point):
        n = 1
        while n < S // min_segment and _task_cost(p, 1, 1 + -(-S // n)) > limit:
            n += 1
        edges = np.linspace(0, S, n + 1).round().astype(int)
        tasks += [Task(float(width), int(a), int(b), _task_cost(p, a, b))
                  for a, b in zip(edges[:-1], edges[1:])]
    return sorted(tasks, key=lambda task: (-task.cost, task.width, task.start))


def run_task(X_train, y_train, X_test, y_test, s2_sorted, task, warm_start=True,
             settings: Settings = DEFAULT_SETTINGS):
    """Rows and :class:`Work` of one task (:func:`chain_rows` on its segment)."""
    return chain_rows(X_train, y_train, X_test, y_test, s2_sorted[task.start:task.stop],
                      task.width, s2_sorted[-1], warm_start=warm_start, settings=settings)
