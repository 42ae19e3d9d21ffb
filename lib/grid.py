"""Grid search over the prior variance ``s2`` and the RBF width ``l`` (book chapter "The grid
search"; report section 3.3, figures 4-5).

For every ``(s2, l)`` the Laplace posterior of the RBF classifier (centres = the N training
inputs, width ``l``, bias column, so M = N + 1 weights; prior ``w ~ N(0, s2 I)``,
:mod:`lib.laplace`) is fitted on the training split and scored; the result is a tidy table,
one row per grid point. The numbers are those of :func:`lib.laplace.fit_laplace` point by
point (the tests check it to 1e-6), but the work is shared across the grid.

**One decomposition per width.** The design is ``Phi = [R, 1]`` with ``R`` the N x N RBF
block, symmetric positive semi-definite because the centres are the training inputs. Its
eigendecomposition ``R = Q diag(nu) Q^T`` resolves the small singular values of ``Phi`` to
the rounding level of ``R`` (a Gram matrix ``Phi Phi^T`` would square that level). When the
numerical rank ``m`` is small it comes from a pivoted Cholesky factorisation ``R ~ F F^T``
(``F`` N x m) and the SVD of ``F``, in ``O(N m^2)`` instead of ``O(N^3)``.

**Exact rank reduction (primal form, wide bumps).** Keep the k eigenvalues above the cut and
write ``w_rbf = Q_k u + w_perp``: then ``Phi w = G z`` with ``G = [Q_k diag(nu_k), 1]``
(N x r, r = k + 1) and ``z = (u, w_bias)``. The columns of ``Q_k`` are orthonormal, so the
prior stays ``N(0, s2 I)`` on ``z`` and on ``w_perp``; the likelihood does not see
``w_perp``, hence at the MAP ``w_perp = 0`` and ``z`` is the MAP of the model with design
``G``. In the basis ``[z, w_perp]`` the precision is block diagonal::

    A = blockdiag(A_r, I_{M-r} / s2),          A_r = I_r / s2 + G^T W G,

so ``log|A| = log|A_r| - (M - r) log s2`` and the Laplace log evidence (:mod:`lib.laplace`) is
that of the reduced model, the M - r other directions cancelling exactly::

    log Z = L(G z) - z.z / (2 s2) - D / 2,    D = log|A_r| + r log s2 = log|I_r + s2 G^T W G|  (G1)

An eigenvalue is dropped when ``s2_max nu^2 <= RANK_TOL``: the direction then adds at most
``s2 nu^2 / 8`` to ``D`` and moves the activations by as little, far below the 1e-6 the
tests ask for. A test input with RBF features ``r*`` has ``g* = (Q_k^T r*, 1)``, mean
``g*.z`` and variance::

    var = |L_r^{-1} g*|^2 + s2 (|phi*|^2 - |g*|^2)                                        (G2)

(the second term is the prior variance of the part of ``phi*`` outside the kept directions).

**Dual form (narrow bumps, R of full rank).** With ``w = s2 Phi^T alpha`` (the MAP has this
form, ``w = s2 Phi^T (y - s)``), ``K = Phi Phi^T`` (N x N), the activations are
``a = s2 K alpha``, ``w.w / (2 s2) = alpha.a / 2`` and by the determinant lemma::

    D = log|s2 A| = log|B|,        B = I_N + s2 W^{1/2} K W^{1/2}                         (G3)

(Rasmussen & Williams 2006, algorithm 3.1). Newton's step for ``alpha = y - s(s2 K alpha)``::

    alpha <- alpha + J^{-1} (y - s - alpha),   J^{-1} v = v - W^{1/2} B^{-1} W^{1/2} s2 K v   (G4)

costs one N x N Cholesky and no ``Phi^T W Phi`` product. The posterior variances of the
training activations are ``h = (1 - diag(B^{-1})) / W`` (from ``Sigma_f = W^{-1/2} (I - B^{-1})
W^{-1/2}``, with ``diag(B^{-1})`` the column sums of squares of ``L^{-1}``), or
``s2 K_nn - |L^{-1} W^{1/2} s2 K e_n|^2`` where ``1 - B^{-1}_nn`` is too small to divide; a
test input has ``mu = s2 k*.alpha``, ``var = s2 |phi*|^2 - |L^{-1} W^{1/2} s2 k*|^2``,
``k* = Phi phi*``. The primal form is used while ``r <= DUAL_FRACTION N`` (it is cheaper).

**Banded dual (narrowest bumps).** For small ``l`` most entries of ``R R^T`` are negligible:
dropping those at or below ``tau = 4 BAND_TOL / (s2_max N^2)`` (with ``W <= 1/4`` and ``B >= I``
this moves ``log|B|`` and every entry of ``B^{-1}`` by at most ``BAND_TOL``) leaves a sparse
``K0`` that the reverse Cuthill-McKee order makes banded. Then ``K = K0 + 1 1^T`` and::

    B = B0 + c c^T,   B0 = I + s2 W^{1/2} K0 W^{1/2} (block tridiagonal),   c = s2^{1/2} W^{1/2} 1
    log|B| = log|B0| + log(1 + c.B0^{-1} c)                                                 (G6)

with ``B0 = L L^T`` factorised block by block, solves by Sherman-Morrison, and ``diag(B0^{-1})``
by selected inversion (Takahashi's equations restricted to the diagonal blocks): ``O(N b^2)``
for blocks of ``b`` rows instead of ``O(N^3)``. Used while ``b <= BAND_FRACTION N``.

**Warm starts along s2 (sorted ascending).** Each fit starts from the best (largest log
posterior) of: the polynomial extrapolation in ``log s2`` of the last ``EXTRAPOLATE``
solutions, the last solution, zero. Chord steps, i.e. Newton's steps with the previous point's Cholesky factor
(cheap: no factorisation), bring it close; then Newton's method with step halving (as
:func:`lib.laplace.fit_laplace`) runs until the largest change of an activation is at most
``ACCEPT_STEP``; that step is taken, the MAP polished by chord steps with the same factor, and
the log determinant moved from the factor's point to the MAP to first order (the variances are
those of the factor's point, relative error about ``ACCEPT_STEP``)::

    D(a + da) ~= D(a) + sum_n h_n (W_n(a + da) - W_n(a))      (d log|A| = tr(A^{-1} dA))  (G5)

with an error below ``p ACCEPT_STEP^2 / 2``, ``p = tr(Sigma_f W) <= N`` the effective number of
parameters (the second derivative of ``log|A|`` along ``dW`` is ``-tr((A^{-1} dW)^2)``, and
``|dW_n| <= W_n |da_n|``).

**Parallel over widths.** The widths are independent tasks run by :class:`joblib.Parallel`,
so a ``dask.distributed`` cluster can run them (``with joblib.parallel_backend("dask")``).
Each task uses one BLAS thread, which makes the results identical on any backend.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from scipy.linalg import eigh, svd
from scipy.linalg.blas import dsyrk, dtrmm
from scipy.linalg.lapack import dlauum, dpotrf, dpotrs, dpstrf, dtrtri
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import reverse_cuthill_mckee
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from ._validate import as_labels, as_matrix, as_vector, positive_scalar
from .features import rbf_features
from .laplace import ConvergenceError
from .likelihood import log_sigmoid, sigmoid
from .predictive import probit_logits

#: Columns of the table returned by :func:`evidence_grid`, in order.
COLUMNS = (
    "s2", "width", "log_evidence",
    "train_accuracy", "test_accuracy",
    "train_ll_map", "test_ll_map", "train_ll_pred", "test_ll_pred",
    "n_iter",
)

#: An eigenvalue ``nu`` of the RBF block is dropped when ``s2_max * nu**2 <= RANK_TOL`` (its
#: share of the log evidence is below ``RANK_TOL / 8``) ...
RANK_TOL = 1e-12
#: ... or when it is at the rounding level of the RBF block: ``nu <= NOISE_TOL * nu_max``.
NOISE_TOL = 1e-13
#: The dual (N x N) form is used when the reduced model keeps more than this fraction of N.
DUAL_FRACTION = 0.7
#: The leading eigenpairs of the RBF block come from a pivoted Cholesky factorisation and an
#: SVD when its numerical rank is at most this fraction of N, else from a full eigendecomposition.
PIVOTED_FRACTION = 0.5
#: Newton stops once ``max |da| <= ACCEPT_STEP``: the step is taken, the MAP polished to
#: ``max |da| <= POLISH_TOL`` by chord steps, and (G5) applied (its error is at most
#: ``p ACCEPT_STEP^2 / 2 <= N ACCEPT_STEP^2 / 2``: at most 4e-8 for the book's N = 750).
ACCEPT_STEP = 1e-5
POLISH_TOL = 1e-12
#: Warm starts extrapolate the last this many solutions (a quartic; a higher order than the
#: quadratic saves about one chord step a point, and a poor extrapolation is never the start
#: chosen, the start with the largest log posterior is).
EXTRAPOLATE = 5
#: Newton iterations allowed per grid point.
MAX_ITER = 200
#: Chord steps (with the previous point's factor, then the current one) stop when a step is
#: not this much smaller than the one before, or after MAX_CHORD steps.
CHORD_CONTRACTION = 0.5
MAX_CHORD = 40
#: Below this value of ``1 - (B^{-1})_nn`` the dual uses the direct variance formula.
_DIRECT_VARIANCE = 1e-6
#: Banded dual (G6): entries of ``R R^T`` at or below ``4 BAND_TOL / (s2_max N^2)`` are dropped,
#: which moves the log evidence and every variance by at most ``BAND_TOL`` ...
BAND_TOL = 1e-10
#: ... and the block-tridiagonal form is used when the bandwidth left after reordering is at
#: most this fraction of N (beyond it the dense dual is faster) ...
BAND_FRACTION = 0.4
#: ... with blocks of at least this many rows (fewer blocks, less interpreter overhead).
MIN_BLOCK = 48


# --------------------------------------------------------------------------- per-point scores


def split_scores(mu, var, y, prefix: str) -> dict[str, float]:
    """Accuracy and average log-likelihoods of the MAP and probit-predictive classifiers.

    Parameters
    ----------
    mu : array_like, shape (N,)
        MAP activations ``phi.w_MAP``.
    var : array_like, shape (N,)
        Their posterior variances ``phi^T A^{-1} phi``.
    y : array_like, shape (N,)
        Labels 0/1.
    prefix : str
        ``"train"`` or ``"test"``: the keys are ``{prefix}_accuracy``, ``{prefix}_ll_map``,
        ``{prefix}_ll_pred``.

    Returns
    -------
    dict of str to float
        The accuracy is that of the MAP decisions, which the predictive shares (``kappa > 0``).

    Notes
    -----
    The same numbers as :func:`lib.metrics.accuracy` and
    :func:`lib.likelihood.average_log_likelihood_logits` (``y log s(a) + (1 - y) log s(-a)`` is
    ``log s(+-a)`` exactly), without their input checks: this runs at every grid point, on
    arrays :func:`evidence_grid` has checked.
    """
    positive = y == 1
    sign = np.where(positive, 1.0, -1.0)
    return {
        f"{prefix}_accuracy": float(np.mean((sigmoid(mu) > 0.5) == positive)),
        f"{prefix}_ll_map": float(np.mean(log_sigmoid(sign * mu))),
        f"{prefix}_ll_pred": float(np.mean(log_sigmoid(sign * probit_logits(mu, var)))),
    }


# --------------------------------------------------------------------------- the two solvers


def _log_lik(a, y):
    """``L = sum log s(+-a)`` from activations (stable log-sigmoid)."""
    return float(np.sum(log_sigmoid(np.where(y == 1, a, -a))))


def _curvature(a):
    """``W = s(a) s(-a)``: no ``1 - s`` that would round to zero."""
    return sigmoid(a) * sigmoid(-a)


@dataclass(frozen=True)
class _Factor:
    """Cholesky factor of ``A_r`` (primal: lower, ``A_r = L L^T``) or ``B`` (dual: upper,
    ``B = U^T U``), built at curvature ``W`` and prior variance ``s2``."""

    chol: np.ndarray
    W: np.ndarray
    s2: float
    log_det: float          # D of (G1) / (G3)


class _Primal:
    """Reduced design ``G`` (N x r): the MAP ``z`` of the model ``a = G z`` (eqs. G1-G2)."""

    def __init__(self, G, G_test, residual_test):
        self.G, self.G_test, self.residual_test = G, G_test, residual_test
        self.size = G.shape[1]

    def activations(self, z, s2):
        return self.G @ z

    def weight_scale(self, s2):
        return 1.0                                     # z are coordinates of w itself

    def penalty(self, z, a, s2):
        return float(z @ z) / (2.0 * s2)               # w.w / (2 s2), w_perp = 0

    def factor(self, a, s2):
        W = _curvature(a)
        GwT = self.G.T * np.sqrt(W)[None, :]           # (W^1/2 G)^T, Fortran order for BLAS
        A = dsyrk(1.0, GwT, lower=1)                   # G^T W G (lower triangle)
        A[np.diag_indices_from(A)] += 1.0 / s2         # A_r = I / s2 + G^T W G
        L, info = dpotrf(A, lower=1, clean=1, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"Cholesky factorisation of A_r failed (info={info})")
        D = 2.0 * float(np.sum(np.log(np.diag(L)))) + self.size * np.log(s2)   # (G1)
        return _Factor(L, W, s2, D)

    def step(self, fac, z, a, y, s2):
        """``z + A_f^{-1} grad psi(z)``: Newton's step if ``fac`` is at ``(a, s2)``, else a chord step."""
        g = self.G.T @ (y - sigmoid(a)) - z / s2       # gradient of psi in z
        z_new = z + dpotrs(fac.chol, g, lower=1)[0]     # A_f^{-1} g
        return z_new, self.G @ z_new

    def variances(self, fac, s2):
        """Posterior variances of the train and test activations (G2), from the factor."""
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
    """Gram matrix ``K`` (N x N): the MAP in the form ``a = s2 K alpha`` (eqs. G3-G4)."""

    def __init__(self, K, K_test, sqnorm_test):
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

    def penalty(self, alpha, a, s2):
        return 0.5 * float(alpha @ a)                  # w.w / (2 s2) with w = s2 Phi^T alpha

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
        return _Factor(U, W, s2, 2.0 * float(np.sum(np.log(np.diag(U)))))   # (G3)

    def step(self, fac, alpha, a, y, s2):
        """``alpha + J_f^{-1} (y - s - alpha)``, ``J = I + W s2 K`` (G4 in residual form).

        ``J_f^{-1} v = v - W_f^{1/2} B_f^{-1} W_f^{1/2} s2_f K v`` with the factor's own ``W_f``,
        ``s2_f``: Newton's step if they are those of ``(a, s2)``, else a chord step.
        """
        r = np.sqrt(fac.W)
        v = (y - sigmoid(a)) - alpha                   # residual of alpha = y - s(s2 K alpha)
        Jv = v - r * self._solve(fac, r * (fac.s2 * self._K(v)))
        alpha_new = alpha + Jv
        return alpha_new, self.activations(alpha_new, s2)

    def variances(self, fac, s2):
        """Posterior variances of the train and test activations, from the factor."""
        r = np.sqrt(fac.W)
        diag_inv, quadratic = self._inverse_parts(fac)
        one_minus = 1.0 - diag_inv                     # 1 - diag(B^{-1})
        ok = one_minus > _DIRECT_VARIANCE
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
    rank-one correction of the bias (G6)."""

    Li: list                # L_k^{-1} (lower triangular)
    Ms: list                # M_k, block (k + 1, k) of L
    q: np.ndarray           # L^{-1} c
    t: np.ndarray           # B0^{-1} c
    gamma: float            # 1 + c.B0^{-1} c


class _Banded(_Dual):
    """Dual form with a block-tridiagonal ``B`` (narrow bumps, eq. G6).

    ``K = K0 + 1 1^T`` with ``K0`` the RBF Gram block ``R R^T`` less its negligible entries,
    sparse; in the reverse Cuthill-McKee order ``perm`` it is banded, so
    ``B0 = I + s2 W^{1/2} K0 W^{1/2}`` is block tridiagonal with blocks of ``block`` rows, and
    the bias is the rank-one term ``c c^T``, ``c = s2^{1/2} W^{1/2} 1``.
    """

    def __init__(self, K0, perm, block, K_test, sqnorm_test):
        N = K0.shape[0]
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
        return _Factor(band, W, s2, log_det + np.log(gamma))   # (G6)

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


def band_drop_threshold(n_train: int, s2_max: float) -> float:
    """Entries of ``R R^T`` at or below this are dropped by the banded form (eq. G6).

    ``4 BAND_TOL / (s2_max N^2)``: with ``W <= 1/4`` and ``B >= I`` the dropped entries move
    ``log|B|`` and every entry of ``B^{-1}`` by at most ``BAND_TOL``.

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
    return 4.0 * BAND_TOL / (positive_scalar(s2_max, "s2_max") * n_train * n_train)


def solver_form(X_train, width, s2_max) -> str:
    """The form :func:`evidence_grid` uses at this width (module docstring).

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs (the centres).
    width : float
        RBF width ``l``.
    s2_max : float
        Largest prior variance of the grid.

    Returns
    -------
    str
        ``"primal"`` (reduced rank, eq. G1), ``"dual"`` (eq. G3) or ``"banded"`` (eq. G6).
    """
    X_train = as_matrix(X_train, "X_train")
    solver = _make_solver(X_train, X_train[:1], positive_scalar(width, "width"),
                          positive_scalar(s2_max, "s2_max"))
    return {_Primal: "primal", _Dual: "dual", _Banded: "banded"}[type(solver)]


def _band_plan(KR, s2_max):
    """Reverse Cuthill-McKee order and block size of the banded dual (G6), or None.

    Entries of ``KR = R R^T`` at or below ``tau = 4 BAND_TOL / (s2_max N^2)`` are dropped: with
    ``W <= 1/4`` they change ``B`` by at most ``BAND_TOL`` in the sum of absolute values, hence
    ``log|B|`` and every entry of ``B^{-1}`` by at most about ``BAND_TOL`` (``B >= I``).

    Returns
    -------
    (K0, perm, block) or None
        The kept Gram block, the permutation and the block size; None when the bandwidth
        exceeds ``BAND_FRACTION N``.
    """
    N = KR.shape[0]
    keep = np.abs(KR) > band_drop_threshold(N, s2_max)
    perm = reverse_cuthill_mckee(csr_matrix(keep), symmetric_mode=True)
    position = np.empty(N, dtype=np.intp)
    position[perm] = np.arange(N)
    rows, cols = np.nonzero(keep)
    bandwidth = int(np.max(np.abs(position[rows] - position[cols])))
    if bandwidth > BAND_FRACTION * N:
        return None
    return np.where(keep, KR, 0.0), perm, max(bandwidth, MIN_BLOCK)


def _rank_cut(nu_max, s2_max):
    """Eigenvalues of the RBF block at or below this are dropped (module docstring)."""
    return max(np.sqrt(RANK_TOL / s2_max), NOISE_TOL * nu_max)


def kept_directions(X_train, width, s2_max) -> int:
    """Number of directions of the weights the data can reach, as kept by the rank reduction.

    The ``k`` eigenvalues of the RBF block above the cut, plus the bias: the reduced model
    has ``k + 1`` weights instead of ``N + 1`` (eq. G1).

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs (the centres).
    width : float
        RBF width ``l``.
    s2_max : float
        Largest prior variance of the grid (the cut is ``s2_max nu^2 <= RANK_TOL``).

    Returns
    -------
    int
    """
    X_train = as_matrix(X_train, "X_train")
    s2_max = positive_scalar(s2_max, "s2_max")
    R = rbf_features(X_train, X_train, positive_scalar(width, "width"))[:, :-1]
    return _leading_eigenpairs(R, s2_max)[0].size + 1


def _gram(R):
    """``R R^T`` (symmetric ``R``: syrk, half the flops of a product, then mirrored)."""
    KR = dsyrk(1.0, R, lower=1)
    KR += np.tril(KR, -1).T
    return KR


def _leading_eigenpairs(R, s2_max):
    """Eigenvalues of the PSD matrix ``R`` above the rank cut, descending, and their vectors.

    When the numerical rank is small (wide bumps), a pivoted Cholesky factorisation
    ``P^T R P = L L^T`` stopped at rank ``m`` (the remainder, positive semi-definite, has trace
    below ``N tol``, far below the cut) and the SVD ``P L = U diag(sigma)`` give
    ``R = U diag(sigma^2) U^T`` in ``O(N m^2)``; otherwise a full eigendecomposition (``O(N^3)``).
    """
    N = R.shape[0]
    tol = max(1e-3 * _rank_cut(0.0, s2_max) / N, N * np.finfo(float).eps * float(np.max(np.diag(R))))
    C, piv, m, info = dpstrf(R, tol=tol, lower=1)
    if info < 0:
        raise np.linalg.LinAlgError(f"pivoted Cholesky factorisation failed (info={info})")
    if m <= PIVOTED_FRACTION * N:
        F = np.zeros((N, m))
        F[piv - 1] = np.tril(C[:, :m])                 # R = F F^T + remainder
        U, sigma, _ = svd(F, full_matrices=False, check_finite=False)
        nu, Q = sigma**2, U
    else:
        nu, Q = eigh(R, check_finite=False, driver="evd")
        nu, Q = nu[::-1], Q[:, ::-1]
    k = int(np.sum(nu > _rank_cut(nu[0], s2_max)))
    return nu[:k], Q[:, :k]


def _make_solver(X_train, X_test, width, s2_max):
    """Decompose the design of one width; pick the banded, dual or primal (reduced) form."""
    Phi = rbf_features(X_train, X_train, width)        # [R, 1], N x (N + 1)
    Phi_test = rbf_features(X_test, X_train, width)
    R, R_test = Phi[:, :-1], Phi_test[:, :-1]
    N = R.shape[0]
    sqnorm_test = np.einsum("nm,nm->n", Phi_test, Phi_test)               # |phi*|^2
    KR = None
    # A band of half-width b holds at most N (2b + 1) entries, and R R^T >= R entrywise
    # (R >= 0, R_nn = 1): a cheap test before forming R R^T.
    if np.count_nonzero(R > band_drop_threshold(N, s2_max)) <= N * (2 * BAND_FRACTION * N + 1):
        KR = _gram(R)                                  # K = KR + 1 1^T
        plan = _band_plan(KR, s2_max)
        if plan is not None:
            return _Banded(*plan, Phi @ Phi_test.T, sqnorm_test)
    # R - cut I positive definite (a cheap Cholesky) <=> every eigenvalue kept: full rank.
    _, info = dpotrf(R - _rank_cut(0.0, s2_max) * np.eye(N), lower=1, overwrite_a=1)
    if info != 0:
        nu_k, Q_k = _leading_eigenpairs(R, s2_max)
    if info == 0 or nu_k.size + 1 > DUAL_FRACTION * N:
        KR = _gram(R) if KR is None else KR
        KR += 1.0
        return _Dual(KR, Phi @ Phi_test.T, sqnorm_test)
    G = np.column_stack([Q_k * nu_k, np.ones(N)])     # Phi w = G z,  z = (Q_k^T w_rbf, w_bias)
    G_test = np.column_stack([R_test @ Q_k, np.ones(R_test.shape[0])])
    residual_test = np.maximum(sqnorm_test - np.einsum("nr,nr->n", G_test, G_test), 0.0)
    return _Primal(G, G_test, residual_test)


# --------------------------------------------------------------------------- Newton per point


def _starting_points(history, log_s2, solver):
    """Candidate starts ``(state, activations)`` (the caller keeps the one with the largest psi).

    ``history`` holds ``(log s2, u, a)`` of the last solutions, with ``u`` the state scaled to
    weight coordinates (``z``, or ``s2 alpha`` in the dual) and ``a`` its activations: the
    candidates are the polynomial extrapolation of ``u`` in ``log s2`` (through all of
    ``history``), the last ``u`` (the same weights), and zero. The activations are linear in
    ``u`` (``a = G z`` or ``K s2 alpha``), so they are extrapolated alongside, not recomputed.
    """
    zero = np.zeros(solver.size)
    if not history:
        return [(zero, solver.activations(zero, 1.0))]
    ts = [t for t, _, _ in history]
    u0, a0 = np.zeros(solver.size), np.zeros_like(history[-1][2])
    for i, (ti, ui, ai) in enumerate(history):         # Lagrange basis polynomials
        weight = np.prod([(log_s2 - tj) / (ti - tj) for j, tj in enumerate(ts) if j != i])
        u0 += weight * ui
        a0 += weight * ai
    scale = solver.weight_scale(np.exp(log_s2))
    return [(u0 / scale, a0), (history[-1][1] / scale, history[-1][2]), (zero, np.zeros_like(a0))]


def _log_posterior(solver, x, a, y, s2):
    """``psi = L(a) - w.w / (2 s2)``."""
    return _log_lik(a, y) - solver.penalty(x, a, s2)


def _chord(solver, fac, y, s2, x, a, psi, tol):
    """Chord iterations: Newton-like steps with a factor built elsewhere (no factorisation).

    With the previous grid point's factor they converge linearly (the rate is the relative
    change of ``A`` between neighbouring points); with the current point's factor, after
    Newton's last step, they polish the MAP to rounding level. Stops at ``max |da| <= tol``,
    or as soon as a step fails to contract or to raise psi.
    """
    previous = np.inf
    for _ in range(MAX_CHORD):
        x_new, a_new = solver.step(fac, x, a, y, s2)
        change = float(np.max(np.abs(a_new - a)))
        psi_new = _log_posterior(solver, x_new, a_new, y, s2)
        if change > CHORD_CONTRACTION * previous or psi_new < psi - 1e-12 * abs(psi):
            break
        x, a, psi, previous = x_new, a_new, psi_new, change
        if change <= tol:
            break
    return x, a, psi


def _fit_point(solver, y, s2, starts, fac=None):
    """MAP and Laplace quantities at one ``(s2, l)``, from the best of ``starts`` (a list of
    ``(state, activations)``) and with chord steps with ``fac`` when given.

    Chord steps with the previous point's factor ``fac``, then Newton's method with step
    halving (as :func:`lib.laplace.fit_laplace`) until the largest change of an activation is
    at most ``ACCEPT_STEP``; that step is taken, the MAP polished by chord steps with the same
    factor, and the log determinant updated to first order from the factor's point (G5).

    Returns
    -------
    x, fac, a, h, mu_test, var_test, log_evidence, n_iter
        State, last factor, train activations and variances, test means and variances, the
        Laplace log evidence (G1 / G3) and the number of Newton iterations (factorisations).
    """
    candidates = []
    for x0, a0 in starts:                              # the start with the largest psi
        candidates.append((_log_posterior(solver, x0, a0, y, s2), x0, a0))
    psi, x, a = max(candidates, key=lambda candidate: candidate[0])
    if fac is not None:
        x, a, psi = _chord(solver, fac, y, s2, x, a, psi, ACCEPT_STEP)
    for it in range(1, MAX_ITER + 1):
        fac = solver.factor(a, s2)
        x_new, a_new = solver.step(fac, x, a, y, s2)
        if np.max(np.abs(a_new - a)) <= ACCEPT_STEP:   # converged
            psi = _log_posterior(solver, x_new, a_new, y, s2)
            x, a, psi = _chord(solver, fac, y, s2, x_new, a_new, psi, POLISH_TOL)
            h, var_test = solver.variances(fac, s2)
            log_det = fac.log_det + float(h @ (_curvature(a) - fac.W))              # (G5)
            mu_test = solver.test_activations(x, s2)
            return x, fac, a, h, mu_test, var_test, psi - 0.5 * log_det, it
        t = 1.0
        while True:                                    # halve until psi does not decrease
            x_t, a_t = x + t * (x_new - x), a + t * (a_new - a)
            psi_t = _log_posterior(solver, x_t, a_t, y, s2)
            if psi_t >= psi - 1e-12 * abs(psi) or t < 1e-10:
                break
            t *= 0.5
        x, a, psi = x_t, a_t, psi_t
    raise ConvergenceError(f"Newton's method did not converge in {MAX_ITER} iterations (s2={s2})")


def _width_rows(X_train, y_train, X_test, y_test, s2_sorted, width, warm_start=True):
    """All grid points of one width (one task): a list of row dicts, s2 ascending."""
    with threadpool_limits(limits=1):                  # same arithmetic on any backend
        solver = _make_solver(X_train, X_test, width, s2_sorted[-1])
        rows, history, fac = [], [], None
        for s2 in s2_sorted:
            starts = _starting_points(history[-EXTRAPOLATE:], np.log(s2), solver)
            try:
                x, fac, a, h, mu_test, var_test, log_ev, n_iter = _fit_point(solver, y_train, s2, starts, fac)
            except ConvergenceError as err:
                raise ConvergenceError(f"{err} at width={width}") from None
            if warm_start:
                history.append((np.log(s2), x * solver.weight_scale(s2), a))
            else:
                fac = None
            rows.append({
                "s2": float(s2), "width": float(width), "log_evidence": log_ev,
                **split_scores(a, h, y_train, "train"),
                **split_scores(mu_test, var_test, y_test, "test"),
                "n_iter": n_iter,
            })
    return rows


# --------------------------------------------------------------------------- public function


def default_n_jobs(n_tasks: int) -> int:
    """Worker processes :func:`evidence_grid` uses when ``n_jobs=None``.

    The cores this process may run on (``os.sched_getaffinity`` where the platform has it, else
    ``os.cpu_count()``), at most one per task and at least one.

    Parameters
    ----------
    n_tasks : int
        Number of independent tasks (widths of the grid).

    Returns
    -------
    int
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):                  # not on every platform
        cores = os.cpu_count() or 1
    return max(1, min(int(cores), int(n_tasks)))


def _grid_values(values, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be a 1-D array of positive numbers, got a scalar")
    arr = as_vector(arr, name)
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one value")
    if np.any(arr <= 0):
        raise ValueError(f"{name} must hold positive numbers, got minimum {arr.min()!r}")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must not contain repeated values")
    return np.sort(arr)


def evidence_grid(
    X_train, y_train, X_test, y_test, s2_values, widths, *, n_jobs=None, progress=False, warm_start=True
):
    """Laplace fit and scores at every ``(s2, l)`` of a grid (report section 3.3).

    Parameters
    ----------
    X_train : array_like, shape (N, D)
        Training inputs; also the RBF centres.
    y_train : array_like, shape (N,)
        Training labels 0/1.
    X_test : array_like, shape (N_test, D)
    y_test : array_like, shape (N_test,)
    s2_values : array_like, shape (S,)
        Prior variances, positive, distinct.
    widths : array_like, shape (P,)
        RBF widths ``l``, positive, distinct.
    n_jobs : int or None
        Widths run in parallel through :class:`joblib.Parallel`. ``None`` (default): the cores
        of this machine, at most one per width (:func:`default_n_jobs`); ``-1``: every worker
        of the active joblib backend (e.g. a dask cluster). The table is the same, to the last
        bit, for any value: each width is one task with one BLAS thread.
    progress : bool
        Show a tqdm progress bar (on stderr).
    warm_start : bool
        Start each fit from the extrapolated previous solutions with chord steps (default);
        ``False`` fits every point from zero (same results to about 1e-7, slower).

    Returns
    -------
    pandas.DataFrame, S * P rows
        Columns :data:`COLUMNS`: ``s2``, ``width``, ``log_evidence`` (Laplace, eq. G1),
        ``train_accuracy``, ``test_accuracy``, average log-likelihoods ``*_ll_map`` (plug-in
        MAP) and ``*_ll_pred`` (probit predictive), and ``n_iter`` (Newton iterations).
        Sorted by width, then s2.

    Raises
    ------
    ConvergenceError
        If Newton's method fails at some point (the message names it).
    """
    X_train = as_matrix(X_train, "X_train")
    y_train = as_labels(y_train, "y_train", length=X_train.shape[0])
    X_test = as_matrix(X_test, "X_test", n_cols=X_train.shape[1])
    y_test = as_labels(y_test, "y_test", length=X_test.shape[0])
    s2_sorted = _grid_values(s2_values, "s2_values")
    widths = _grid_values(widths, "widths")
    if n_jobs is None:
        n_jobs = default_n_jobs(widths.size)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer (as for joblib), got {n_jobs!r}")

    tasks = (delayed(_width_rows)(X_train, y_train, X_test, y_test, s2_sorted, l, bool(warm_start))
             for l in widths)
    parallel = Parallel(n_jobs=int(n_jobs), batch_size=1, return_as="generator")
    rows = []
    with tqdm(total=widths.size * s2_sorted.size, disable=not progress, file=sys.stderr,
              desc="evidence grid", unit="point") as bar:
        for width_rows in parallel(tasks):
            rows.extend(width_rows)
            bar.update(len(width_rows))
    import pandas as pd     # here, not at the top: the worker processes need no pandas (0.2 s)

    return pd.DataFrame(rows, columns=list(COLUMNS))
