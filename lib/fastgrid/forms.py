"""The three forms of the engine's Newton iterations (book appendix "How the grid is computed
fast"): primal reduced-rank, dual, banded dual; each factorises, steps and gives variances."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.linalg.blas import dsyrk, dtrmm
from scipy.linalg.lapack import dlauum, dpotrf, dpotrs, dtrtri
from scipy.sparse import csr_matrix

from lib.fastgrid.settings import DEFAULT_SETTINGS, Settings


def _curvature(a):
    """``W = s(a) s(-a)``: no ``1 - s`` that would round to zero."""
    return expit(a) * expit(-a)


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
        g = self.G.T @ (y - expit(a)) - z / s2       # gradient of Psi in z
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
        ``s2_f``: Newton's step if they are those of ``(a, s2)``, else a chord step."""
        r = np.sqrt(fac.W)
        v = (y - expit(a)) - alpha                   # residual of alpha = y - s(s2 K alpha)
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
