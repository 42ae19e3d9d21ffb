"""The split study of the maximum-likelihood lab (report appendix A): the training paths of one
classifier on many seeded random 75/25 splits (the lab shuffled its split without a seed).

* :func:`split_paths` -- full-batch gradient ascent (algorithm 1, :func:`lib.ml.fit_ml`, with
  ``eta = 1 / kappa`` of :func:`lib.ml.curvature_bound`) on every split at once, scored along
  the way;
* :func:`split_rows` -- the rows a seeded :func:`lib.data.random_split` puts in each set;
* :func:`logit_scores` -- the lab's scores of one maximum-likelihood fit.

The chapter ``report_ml_lab`` holds the rest of the lab's code (scored fits, the majority
effect, crossings and percentiles) in its own cells.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse
from scipy.special import expit

from lib._validate import as_labels, as_matrix, as_vector, int_at_least, positive_int, width as check_width
from lib.data import random_split
from lib.features import linear_features, rbf_features
from lib.likelihood import average_log_likelihood_logits, label_log_probs
from lib.ml import curvature_bound
from lib.scores import accuracy, confusion_matrix


def logit_scores(a, y) -> tuple[float, float, np.ndarray]:
    """Average log-likelihood, accuracy and confusion matrix of a fit given by its logits.

    The lab's scores of a maximum-likelihood fit ``w`` (tables 7-10), with ``a = Phi w`` and
    ``P(y = 1) = s(a)``; a Laplace posterior is scored by :func:`lib.scores.score_split`.
    ``a`` (N,) are the activations (logits), ``y`` (N,) the labels 0/1. Returns the average
    log-likelihood (computed stably from the logits), the accuracy of the decisions
    ``s(a) > 1/2`` and the row-normalised confusion matrix (2, 2)
    (:func:`lib.scores.confusion_matrix`).
    """
    a = as_vector(a, "a")
    y = as_labels(y, "y", length=a.shape[0])
    p = expit(a)
    return average_log_likelihood_logits(a, y), accuracy(p, y), confusion_matrix(p, y)


@dataclass(frozen=True)
class SplitPaths:
    """Training paths of one classifier on several seeded random splits (:func:`split_paths`).

    ``seeds`` (S,): those of :func:`lib.data.random_split`, one per split; ``steps`` (K,): the
    full-batch gradient steps (= epochs) at each record, 0 first; ``learning_rates`` (S,): the
    step ``eta = 1 / kappa`` of each split's design; ``train_ll``, ``test_ll`` (S, K): average
    log-likelihoods along each path; ``train_rates``, ``test_rates`` (S, K, 2): the diagonal of
    the row-normalised confusion matrix along each path, ``P(yhat = 0 | y = 0)`` and
    ``P(yhat = 1 | y = 1)``; ``final_w`` (S, M): the weights after the last step; ``width``:
    the RBF width ``l``, ``None`` for the linear classifier.
    """

    seeds: np.ndarray
    steps: np.ndarray
    learning_rates: np.ndarray
    train_ll: np.ndarray
    test_ll: np.ndarray
    train_rates: np.ndarray
    test_rates: np.ndarray
    final_w: np.ndarray
    width: float | None

    @property
    def test_balanced_accuracy(self) -> np.ndarray:
        """Mean of the two test rates, shape (S, K): the accuracy a row-normalised table gives."""
        return self.test_rates.mean(axis=-1)

    @property
    def train_balanced_accuracy(self) -> np.ndarray:
        """Mean of the two training rates, shape (S, K)."""
        return self.train_rates.mean(axis=-1)


def split_rows(n_rows: int, seed: int, train_fraction: float = 0.75):
    """Row numbers (in the order it returns them) that :func:`lib.data.random_split` with this
    ``seed`` and ``train_fraction`` puts in the training set, shape (N_train,), and in the test
    set, shape (n_rows - N_train,)."""
    n_rows = int_at_least(n_rows, "n_rows", 2)       # both sets non-empty
    rows = np.arange(n_rows, dtype=float)[:, None]
    tr, _, te, _ = random_split(rows, np.zeros(n_rows), train_fraction=train_fraction, seed=seed)
    return tr[:, 0].astype(int), te[:, 0].astype(int)


def _all_splits_design(X, width):
    """The design ``F`` of all N points on all N centres (N, N + 1; linear: (N, 3)) and its
    products ``activations(W) = F W`` (W: (M_all, S)) and ``gradients(R) = F^T R`` (R: (N, S)).

    Split ``s`` uses its training rows and centre columns, so its activations on *every* point
    are ``F w_s`` with ``w_s`` zero on the test centres, and its gradient is ``F^T r_s`` with the
    residuals ``y - s(a)`` zero off its training rows: two BLAS-3 products per step for all
    splits instead of ``2 S`` matrix-vector products. Where most of ``K`` is exactly zero (narrow
    widths) it is held sparse: the same sums without their zero terms (at l = 0.01 on the lab
    data, 2 % of it is non-zero and the study runs three times faster).
    """
    N = X.shape[0]
    F = linear_features(X) if width is None else rbf_features(X, X, width)   # (N, M_all)
    if width is None:
        return F, (lambda W: F @ W), (lambda R: F.T @ R)
    # F = [K, 1] with K symmetric: K @ V is cheaper than F.T @ V for C-ordered K
    Kc = np.ascontiguousarray(F[:, :N])
    if np.count_nonzero(Kc) < Kc.size / 10:
        Kc = scipy.sparse.csr_array(Kc)
    return F, (lambda W: Kc @ W[:N] + W[N]), (lambda R: np.vstack([Kc @ R, R.sum(0)]))


def _split_masks(F, seeds, train_fraction, linear: bool):
    """Each split's training rows (N, S) and design columns (M_all, S) as masks, its columns
    and its learning rate ``1 / kappa`` (:func:`lib.ml.curvature_bound`)."""
    N, M_all, S = F.shape[0], F.shape[1], seeds.size
    train_mask = np.zeros((N, S), dtype=bool)        # rows of each split's training set
    col_mask = np.zeros((M_all, S), dtype=bool)      # columns of each split's design
    cols, etas = [], np.empty(S)
    for s, seed in enumerate(seeds):
        tr, _ = split_rows(N, int(seed), train_fraction)
        c = np.arange(M_all) if linear else np.append(tr, N)   # centres, bias last
        train_mask[tr, s], col_mask[c, s] = True, True
        cols.append(c)
        etas[s] = 1.0 / curvature_bound(F[np.ix_(tr, c)])
    return train_mask, col_mask, cols, etas


def _class_rates(A, Y, mask, out):
    """Per split, the fraction of class 0 and of class 1 among ``mask``'s rows that the
    activations ``A`` (N, S) classify correctly, into ``out`` (S, 2)."""
    zero, one = mask & (Y == 0), mask & (Y == 1)
    out[:, 0] = ((A <= 0) & zero).sum(0) / zero.sum(0)
    out[:, 1] = ((A > 0) & one).sum(0) / one.sum(0)


def split_paths(X, y, *, width: float | None, seeds, n_steps: int, record_every: int = 10,
                train_fraction: float = 0.75) -> SplitPaths:
    """Full-batch gradient ascent on several seeded random splits, scored along the way.

    For each seed the data is split as :func:`lib.data.random_split` splits it, the design is
    ``[x1, x2, 1]`` (``width`` None) or RBF features of that width centred on the training
    inputs plus the bias, and the weights climb from ``w = 0`` with ``eta = 1 / kappa``
    (:func:`curvature_bound` of that design) for ``n_steps`` full-batch steps -- the same
    iterates as :func:`lib.ml.fit_ml` on that split (to rounding), all splits at once
    (:func:`_all_splits_design`). Every ``record_every`` steps the average log-likelihoods and
    confusion diagonals of both sets are recorded.

    ``X`` (N, 2) and ``y`` (N,) of 0/1 are all inputs and labels; ``width`` the RBF width ``l``
    (None: linear); ``seeds`` (S,) ints, one split per seed; ``n_steps`` the gradient steps per
    split; ``record_every`` the record interval (it must divide ``n_steps``); ``train_fraction``
    as in :func:`split_rows`. Returns :class:`SplitPaths`, ``final_w[s]`` ordered like the
    columns of the split's own design (training centres in ``random_split`` order, bias last).
    """
    X = as_matrix(X, "X", n_cols=2)
    y = as_labels(y, "y", length=X.shape[0])
    if width is not None:
        width = check_width(width, "width")
    seeds = np.asarray(seeds)
    if seeds.ndim != 1 or seeds.size == 0 or not np.issubdtype(seeds.dtype, np.integer):
        raise ValueError(f"seeds must be a non-empty 1-D sequence of integers, got {seeds!r}")
    if np.any(seeds < 0):
        raise ValueError(f"seeds must be non-negative integers (random seeds), got {seeds.min()}")
    n_steps = positive_int(n_steps, "n_steps")
    record_every = positive_int(record_every, "record_every")
    if n_steps % record_every:
        raise ValueError(f"record_every ({record_every}) must divide n_steps ({n_steps})")

    N, S = X.shape[0], seeds.size
    F, activations, gradients = _all_splits_design(X, width)
    M_all = F.shape[1]
    train_mask, col_mask, cols, etas = _split_masks(F, seeds, train_fraction, width is None)
    test_mask = ~train_mask
    n_tr, n_te = train_mask.sum(0), test_mask.sum(0)
    Y = np.broadcast_to(y[:, None], (N, S))
    step_scale = col_mask * etas                     # eta_s on the split's columns, else 0

    steps = np.arange(0, n_steps + 1, record_every)
    K = steps.size
    train_ll, test_ll = np.empty((S, K)), np.empty((S, K))
    train_rates, test_rates = np.empty((S, K, 2)), np.empty((S, K, 2))
    W = np.zeros((M_all, S))
    for k in range(n_steps + 1):
        A = activations(W)                           # every point, every split
        if k % record_every == 0:
            r = k // record_every
            ll = label_log_probs(A, Y)                # log s(+-a), per point and split
            train_ll[:, r] = (ll * train_mask).sum(0) / n_tr
            test_ll[:, r] = (ll * test_mask).sum(0) / n_te
            _class_rates(A, Y, train_mask, train_rates[:, r])
            _class_rates(A, Y, test_mask, test_rates[:, r])
        if k < n_steps:
            R = np.where(train_mask, Y - expit(A), 0.0)
            W += step_scale * gradients(R)           # algorithm 1, full batch, every split
    final_w = [W[c, s] for s, c in enumerate(cols)]
    return SplitPaths(seeds=seeds.copy(), steps=steps, learning_rates=etas, train_ll=train_ll,
                      test_ll=test_ll, train_rates=train_rates, test_rates=test_rates,
                      final_w=np.array(final_w), width=width)
