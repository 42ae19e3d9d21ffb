"""Maximum likelihood by gradient ascent (report appendix A, algorithm 1).

Each step moves the weights along the gradient of the log-likelihood of one minibatch::

    w <- w + eta * Phi_B^T (y_B - s(Phi_B w))          (book eq. map-ascent, with ml-grad)

(the full training set when no batch size is given). The minibatches are a fresh random
partition of the training rows each epoch, drawn from a seeded generator.

:func:`curvature_bound` gives the step sizes for which the full-batch ascent is stable
(``eta < 2 / kappa``), :func:`minibatch_curvature_bound` the same for one epoch's minibatches.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from scipy.linalg import eigh
from scipy.sparse.linalg import LinearOperator, eigsh

from lib._validate import as_labels, as_matrix, as_vector, positive_int, positive_scalar
from lib._validate import batch_size as check_batch_size
from lib.likelihood import average_log_likelihood_logits, sigmoid


@dataclass(frozen=True)
class GradientAscentResult:
    """Outcome of :func:`fit_ml`.

    Attributes
    ----------
    w : ndarray, shape (M,)
        Final weights.
    train_ll : ndarray, shape (n_records,)
        Average training log-likelihood before the first step and after each recorded step.
    test_ll : ndarray, shape (n_records,) or None
        The same on the test set, if one was given.
    steps : ndarray, shape (n_records,)
        Number of gradient steps taken at each record (0 first).
    converged : bool
        Whether the convergence test stopped the run before ``n_steps``.
    """

    w: np.ndarray
    train_ll: np.ndarray
    test_ll: np.ndarray | None
    steps: np.ndarray
    converged: bool


def fit_ml(
    Phi,
    y,
    *,
    learning_rate: float,
    n_steps: int,
    batch_size: int | None = None,
    seed: int = 0,
    Phi_test=None,
    y_test=None,
    tol: float | None = None,
    record_every: int = 1,
    w0=None,
    callback: Callable[[int, np.ndarray], None] | None = None,
) -> GradientAscentResult:
    """Gradient ascent on the log-likelihood (report appendix algorithm 1).

    Parameters
    ----------
    Phi : array_like, shape (N, M)
        Training design.
    y : array_like, shape (N,)
        Training labels 0/1.
    learning_rate : float
        Step size ``eta > 0`` applied to the *summed* minibatch gradient.
    n_steps : int
        Maximum number of gradient steps (one step per minibatch).
    batch_size : int, optional
        Minibatch size; ``None`` uses all N rows each step.
    seed : int
        Seed of the generator that shuffles the rows into minibatches.
    Phi_test, y_test : array_like, optional
        Test design, shape (N_test, M), and labels, shape (N_test,), for the test history.
    tol : float, optional
        Stop when the average training log-likelihood changes by less than ``tol`` between
        two records (the report's convergence test). ``None`` runs all ``n_steps``.
    record_every : int
        Record the averages every this many steps (and after the last).
    w0 : array_like, shape (M,), optional
        Starting weights; zeros by default (the report's algorithm 1 draws them from
        ``N(0, 1)``: pass such a draw here).
    callback : callable, optional
        Called as ``callback(k, w)`` at every record (``k`` steps taken, ``w`` the current
        weights, shape (M,); a view that the next step overwrites, so copy what you keep),
        e.g. to record other scores along the path.

    Returns
    -------
    GradientAscentResult
    """
    Phi = as_matrix(Phi, "Phi")
    N, M = Phi.shape
    y = as_labels(y, "y", length=N)
    eta = positive_scalar(learning_rate, "learning_rate")
    n_steps = positive_int(n_steps, "n_steps")
    record_every = positive_int(record_every, "record_every")
    batch_size = check_batch_size(batch_size, N)
    if tol is not None:
        tol = positive_scalar(tol, "tol")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")
    if (Phi_test is None) != (y_test is None):
        raise ValueError("Phi_test and y_test must be given together")
    if Phi_test is not None:
        Phi_test = as_matrix(Phi_test, "Phi_test", n_cols=M)
        y_test = as_labels(y_test, "y_test", length=Phi_test.shape[0])
    w = np.zeros(M) if w0 is None else as_vector(w0, "w0", length=M).copy()

    rng = np.random.default_rng(seed)
    bs = N if batch_size is None else batch_size
    train, test, steps = [], [], []

    def record(k):
        steps.append(k)
        train.append(average_log_likelihood_logits(Phi @ w, y))
        if Phi_test is not None:
            test.append(average_log_likelihood_logits(Phi_test @ w, y_test))
        if callback is not None:
            callback(k, w)

    record(0)
    converged = False
    order = np.arange(N)
    pos = N  # forces a fresh permutation on the first step
    for k in range(1, n_steps + 1):
        if batch_size is None:
            idx = order
        else:
            if pos + bs > N:  # new epoch: a fresh random partition of the rows
                order = rng.permutation(N)
                pos = 0
            idx = order[pos : pos + bs]
            pos += bs
        # Full batch: use Phi itself (no per-step copy of the whole design).
        Pb, yb = (Phi, y) if batch_size is None else (Phi[idx], y[idx])
        # Algorithm 1, update line: w <- w + eta * Phi_B^T (y_B - s(Phi_B w)).
        w += eta * (Pb.T @ (yb - sigmoid(Pb @ w)))
        if k % record_every == 0 or k == n_steps:
            record(k)
            if tol is not None and len(train) > 1 and abs(train[-1] - train[-2]) < tol:
                converged = True
                break
    return GradientAscentResult(
        w=w,
        train_ll=np.array(train),
        test_ll=np.array(test) if Phi_test is not None else None,
        steps=np.array(steps),
        converged=converged,
    )


#: Designs with at most this many columns get a dense eigen-solve; wider ones use Lanczos.
_DENSE_MAX_COLS = 200


def curvature_bound(Phi) -> float:
    """Curvature bound ``kappa = nu_max(Phi^T Phi) / 4`` of the summed log-likelihood.

    Book eq. ``ml-kappa``: ``-Hessian = Phi^T W Phi`` with ``W = diag(sigma_n (1 - sigma_n))``
    is bounded by ``Phi^T Phi / 4`` because ``sigma (1 - sigma) <= 1/4``. Gradient ascent on the summed log-likelihood (algorithm 1
    with the full batch) is then guaranteed to increase it for any step ``eta < 2 / kappa``.

    Parameters
    ----------
    Phi : array_like, shape (N, M)
        Design (rows are data points).

    Returns
    -------
    float
        ``kappa > 0`` (or ``0.0`` for an all-zero design).

    Notes
    -----
    The largest eigenvalue of ``Phi^T Phi`` is found by a dense symmetric solve for narrow
    designs and by Lanczos iteration (``scipy.sparse.linalg.eigsh``, started from a fixed
    vector so the result is reproducible) for wide ones, without forming ``Phi^T Phi``.
    """
    Phi = as_matrix(Phi, "Phi")
    M = Phi.shape[1]
    if M <= _DENSE_MAX_COLS:
        gram = Phi.T @ Phi
        lam = eigh(gram, eigvals_only=True, subset_by_index=[M - 1, M - 1])[0]
    else:
        op = LinearOperator((M, M), matvec=lambda v: Phi.T @ (Phi @ v), dtype=float)
        lam = eigsh(op, k=1, which="LA", v0=np.ones(M), return_eigenvectors=False)[0]
    return float(max(lam, 0.0)) / 4.0


def minibatch_curvature_bound(Phi, batch_size: int, *, seed: int = 0) -> float:
    """Largest curvature bound ``kappa_B`` over the minibatches of one random partition.

    A step on the *summed* log-likelihood of minibatch ``B`` is stable when
    ``eta < 2 / kappa_B`` with ``kappa_B = nu_max(Phi_B^T Phi_B) / 4`` (:func:`curvature_bound`
    of its rows). Each ``Phi_B^T Phi_B`` sums ``B`` of the ``N`` outer products, so
    ``kappa_B`` is roughly ``B / N`` of the full batch's ``kappa``.

    Parameters
    ----------
    Phi : array_like, shape (N, M)
        Design.
    batch_size : int
        Rows per minibatch B (at most N); the rows are permuted by ``default_rng(seed)`` and
        cut into ``N // B`` nearly equal batches, as one epoch of algorithm 1 would.
    seed : int
        Seed of the permutation.

    Returns
    -------
    float
        ``max_B kappa_B``.
    """
    Phi = as_matrix(Phi, "Phi")
    batch_size = check_batch_size(positive_int(batch_size, "batch_size"), Phi.shape[0])
    rows = np.random.default_rng(seed).permutation(Phi.shape[0])
    return max(curvature_bound(Phi[b]) for b in np.array_split(rows, Phi.shape[0] // batch_size))
