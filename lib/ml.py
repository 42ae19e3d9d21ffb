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
from scipy.special import expit

from lib._validate import as_design, as_design_labels, as_vector, positive_int, positive_scalar
from lib._validate import batch_size as check_batch_size
from lib._validate import seed as check_seed
from lib.likelihood import average_log_likelihood_logits


@dataclass(frozen=True)
class GradientAscentResult:
    """Outcome of :func:`fit_ml`.

    ``w`` (M,) the final weights; ``train_ll`` (n_records,) the average training
    log-likelihood before the first step and after each recorded step; ``test_ll`` the same on
    the test set (None without one); ``steps`` (n_records,) the gradient steps taken at each
    record (0 first); ``converged`` whether the convergence test stopped the run before
    ``n_steps``.
    """

    w: np.ndarray
    train_ll: np.ndarray
    test_ll: np.ndarray | None
    steps: np.ndarray
    converged: bool


def fit_ml(Phi, y, *, learning_rate: float, n_steps: int, batch_size: int | None = None,
           seed: int = 0, Phi_test=None, y_test=None, tol: float | None = None,
           record_every: int = 1, w0=None,
           callback: Callable[[int, np.ndarray], None] | None = None) -> GradientAscentResult:
    """Gradient ascent on the log-likelihood (report appendix algorithm 1) from the training
    design ``Phi`` (N, M) and labels ``y`` (N,) of 0/1.

    ``learning_rate``: the step size ``eta > 0`` applied to the *summed* minibatch gradient;
    ``n_steps``: the most gradient steps (one per minibatch); ``batch_size``: the minibatch
    size (``None``: all N rows each step); ``seed``: of the generator that shuffles the rows
    into minibatches; ``Phi_test`` (N_test, M), ``y_test`` (N_test,): a test set for the test
    history; ``tol``: stop when the average training log-likelihood changes by less than
    ``tol`` between two records (the report's convergence test; ``None`` runs all
    ``n_steps``); ``record_every``: record the averages every this many steps (and after the
    last); ``w0`` (M,): the starting weights (zeros by default; algorithm 1 draws them from
    ``N(0, 1)``); ``callback(k, w)``: called at every record, ``k`` steps taken, ``w`` (M,)
    the weights (a view the next step overwrites: copy what you keep). Returns a
    :class:`GradientAscentResult`.
    """
    Phi, y = as_design_labels(Phi, y, ("Phi", "y"))
    N, M = Phi.shape
    eta = positive_scalar(learning_rate, "learning_rate")
    n_steps = positive_int(n_steps, "n_steps")
    record_every = positive_int(record_every, "record_every")
    batch_size = check_batch_size(batch_size, N)
    tol = None if tol is None else positive_scalar(tol, "tol")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")
    Phi_test, y_test = _test_set(Phi_test, y_test, M)
    w = np.zeros(M) if w0 is None else as_vector(w0, "w0", length=M).copy()

    rng = np.random.default_rng(check_seed(seed))
    batches = None if batch_size is None else _minibatches(N, batch_size, rng)
    history = _History(Phi, y, Phi_test, y_test, callback)
    history.record(0, w)
    converged = False
    for k in range(1, n_steps + 1):
        idx = None if batches is None else next(batches)
        Pb, yb = (Phi, y) if idx is None else (Phi[idx], y[idx])   # full batch: Phi, no copy
        # Algorithm 1, update line: w <- w + eta * Phi_B^T (y_B - s(Phi_B w)).
        w += eta * (Pb.T @ (yb - expit(Pb @ w)))
        if k % record_every == 0 or k == n_steps:
            history.record(k, w)
            if tol is not None and history.last_change() < tol:
                converged = True
                break
    test_ll = np.array(history.test) if Phi_test is not None else None
    return GradientAscentResult(w=w, train_ll=np.array(history.train), test_ll=test_ll,
                                steps=np.array(history.steps), converged=converged)


class _History:
    """The averages fit_ml records along its path (and the caller's callback at each record)."""

    def __init__(self, Phi, y, Phi_test, y_test, callback):
        self.Phi, self.y, self.Phi_test, self.y_test = Phi, y, Phi_test, y_test
        self.callback = callback
        self.steps, self.train, self.test = [], [], []

    def record(self, k: int, w) -> None:
        self.steps.append(k)
        self.train.append(average_log_likelihood_logits(self.Phi @ w, self.y))
        if self.Phi_test is not None:
            self.test.append(average_log_likelihood_logits(self.Phi_test @ w, self.y_test))
        if self.callback is not None:
            self.callback(k, w)

    def last_change(self) -> float:
        """``|change|`` of the average training log-likelihood between the last two records."""
        return abs(self.train[-1] - self.train[-2]) if len(self.train) > 1 else np.inf


def _test_set(Phi_test, y_test, M):
    """The optional test design and labels, checked (both or neither)."""
    if (Phi_test is None) != (y_test is None):
        raise ValueError("Phi_test and y_test must be given together")
    if Phi_test is None:
        return None, None
    return as_design_labels(Phi_test, y_test, ("Phi_test", "y_test"), n_cols=M)


def _minibatches(N: int, batch_size: int, rng):
    """Row indices of each step's minibatch: a fresh random partition of the N rows each epoch
    (the rows left over at an epoch's end, fewer than ``batch_size``, are skipped)."""
    order, pos = np.arange(N), N          # pos = N: a fresh permutation on the first step
    while True:
        if pos + batch_size > N:          # new epoch
            order, pos = rng.permutation(N), 0
        yield order[pos : pos + batch_size]
        pos += batch_size


#: Designs with at most this many columns get a dense eigen-solve; wider ones use Lanczos.
_DENSE_MAX_COLS = 200


def curvature_bound(Phi) -> float:
    """Curvature bound ``kappa = nu_max(Phi^T Phi) / 4`` of the summed log-likelihood.

    Book eq. ``ml-kappa``: ``-Hessian = Phi^T W Phi`` with ``W = diag(sigma_n (1 - sigma_n))``
    is bounded by ``Phi^T Phi / 4`` because ``sigma (1 - sigma) <= 1/4``. Gradient ascent on
    the summed log-likelihood (algorithm 1 with the full batch) is then guaranteed to increase
    it for any step ``eta < 2 / kappa``. ``Phi`` (N, M) the design (rows are data points);
    ``kappa > 0`` (``0.0`` for an all-zero design).

    The largest eigenvalue of ``Phi^T Phi`` is found by a dense symmetric solve for narrow
    designs and by Lanczos iteration (``scipy.sparse.linalg.eigsh``, started from a fixed
    vector so the result is reproducible) for wide ones, without forming ``Phi^T Phi``.
    """
    Phi = as_design(Phi, "Phi")
    M = Phi.shape[1]
    if M <= _DENSE_MAX_COLS:
        lam = eigh(Phi.T @ Phi, eigvals_only=True, subset_by_index=[M - 1, M - 1])[0]
    else:
        op = LinearOperator((M, M), matvec=lambda v: Phi.T @ (Phi @ v), dtype=float)
        lam = eigsh(op, k=1, which="LA", v0=np.ones(M), return_eigenvectors=False)[0]
    return float(max(lam, 0.0)) / 4.0


def minibatch_curvature_bound(Phi, batch_size: int, *, seed: int = 0) -> float:
    """Largest curvature bound ``kappa_B`` over the minibatches of one random partition.

    A step on the *summed* log-likelihood of minibatch ``B`` is stable when
    ``eta < 2 / kappa_B`` with ``kappa_B = nu_max(Phi_B^T Phi_B) / 4`` (:func:`curvature_bound`
    of its rows). Each ``Phi_B^T Phi_B`` sums ``B`` of the ``N`` outer products, so
    ``kappa_B`` is roughly ``B / N`` of the full batch's ``kappa``. Returns ``max_B kappa_B``
    over the minibatches of ``Phi`` (N, M): its rows permuted by ``default_rng(seed)`` and cut
    into ``N // batch_size`` nearly equal batches (``batch_size`` at most N), as one epoch of
    algorithm 1 would.
    """
    Phi = as_design(Phi, "Phi")
    batch_size = check_batch_size(positive_int(batch_size, "batch_size"), Phi.shape[0])
    rows = np.random.default_rng(check_seed(seed)).permutation(Phi.shape[0])
    return max(curvature_bound(Phi[b]) for b in np.array_split(rows, Phi.shape[0] // batch_size))
