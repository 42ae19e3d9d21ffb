"""The maximum-likelihood lab (report appendix A): scored fits, the majority effect, and the
spread of the lab's numbers over random splits and training lengths.

On top of :func:`lib.ml.fit_ml` (algorithm 1), with step sizes from
:func:`lib.ml.curvature_bound` (book eq. ``ml-kappa``):

* :func:`fit_and_score` -- one run of algorithm 1 with the numbers the lab reports: final
  average log-likelihoods (table 10), confusion matrices (tables 7-9), epochs used (figure 12).
* :func:`rbf_probability` -- ``P(y = 1 | x)`` of an RBF classifier on many inputs (contour
  grids), a chunk of rows at a time.
* :func:`majority_effect` -- the ``l = 0.01`` experiment of figure 11: a width far below the
  spacing of the inputs leaves every test point outside every basis function, so the
  classifier predicts from its bias alone.
* :func:`split_paths`, :func:`first_crossing`, :func:`take_at`, :func:`percentile_of` -- the
  training paths of one classifier on many seeded random 75/25 splits (the lab shuffled its
  split without a seed), and where a printed number lies among them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib._validate import width as check_width
from lib._validate import (
    as_labels,
    as_matrix,
    as_nonnegative,
    as_probabilities,
    as_vector,
    positive_int,
    positive_scalar,
    real_scalar,
)
from lib._validate import batch_size as check_batch_size
from lib._validate import fraction as check_fraction
from lib.data import random_split
from lib.features import linear_features, rbf_features
from lib.likelihood import label_log_probs, sigmoid
from lib.scores import logit_scores, predict_labels
from lib.ml import GradientAscentResult, curvature_bound, fit_ml

def epochs(steps, n_rows: int, batch_size: int | None = None) -> np.ndarray:
    """Passes through the training set made after a number of gradient steps.

    Parameters
    ----------
    steps : array_like, shape (K,)
        Step counts (e.g. ``GradientAscentResult.steps``), each >= 0.
    n_rows : int
        Number N of training rows.
    batch_size : int, optional
        Minibatch size B of the run; ``None`` means the full batch (one step per epoch).

    Returns
    -------
    ndarray, shape (K,)
        ``steps * B / N``.
    """
    steps = as_nonnegative(steps, "steps")
    n_rows = positive_int(n_rows, "n_rows")
    batch_size = check_batch_size(batch_size, n_rows)
    bs = n_rows if batch_size is None else batch_size
    return steps * bs / n_rows


@dataclass(frozen=True)
class ScoredFit:
    """One run of algorithm 1 with the lab's scores (report tables 7-10).

    Attributes
    ----------
    fit : GradientAscentResult
        The run: weights and train/test histories.
    learning_rate : float
        Step size used.
    epochs : float
        Passes through the training set made (to convergence, or the step cap).
    train_ll, test_ll : float
        Final average log-likelihoods (table 10).
    train_accuracy, test_accuracy : float
        Fractions of labels matched by ``p > 1/2``.
    train_confusion, test_confusion : ndarray, shape (2, 2)
        Row-normalised confusion matrices ``P(yhat = j | y = i)`` (tables 7-9).
    """

    fit: GradientAscentResult
    learning_rate: float
    epochs: float
    train_ll: float
    test_ll: float
    train_accuracy: float
    test_accuracy: float
    train_confusion: np.ndarray
    test_confusion: np.ndarray


def fit_and_score(
    Phi_train,
    y_train,
    Phi_test,
    y_test,
    *,
    learning_rate: float,
    n_steps: int,
    batch_size: int | None = None,
    seed: int = 0,
    tol: float | None = None,
    record_every: int = 1,
) -> ScoredFit:
    """Run algorithm 1 (:func:`lib.ml.fit_ml`) and score the final weights on both sets.

    Parameters
    ----------
    Phi_train : array_like, shape (N, M)
        Training design.
    y_train : array_like, shape (N,)
        Training labels 0/1.
    Phi_test : array_like, shape (N_test, M)
        Test design (features on the same centres).
    y_test : array_like, shape (N_test,)
        Test labels 0/1.
    learning_rate, n_steps, batch_size, seed, tol, record_every
        Passed to :func:`lib.ml.fit_ml`.

    Returns
    -------
    ScoredFit
    """
    res = fit_ml(
        Phi_train, y_train, learning_rate=learning_rate, n_steps=n_steps, batch_size=batch_size,
        seed=seed, Phi_test=Phi_test, y_test=y_test, tol=tol, record_every=record_every,
    )  # fit_ml validates every argument
    Phi_train = np.asarray(Phi_train, dtype=float)
    Phi_test = np.asarray(Phi_test, dtype=float)
    y_train = np.asarray(y_train, dtype=float)
    y_test = np.asarray(y_test, dtype=float)
    train_ll, train_accuracy, train_confusion = logit_scores(Phi_train @ res.w, y_train)  # a = Phi w
    test_ll, test_accuracy, test_confusion = logit_scores(Phi_test @ res.w, y_test)
    return ScoredFit(
        fit=res,
        learning_rate=float(learning_rate),
        epochs=float(epochs(res.steps[-1:], Phi_train.shape[0], batch_size)[0]),
        train_ll=train_ll,
        test_ll=test_ll,
        train_accuracy=train_accuracy,
        test_accuracy=test_accuracy,
        train_confusion=train_confusion,
        test_confusion=test_confusion,
    )


def rbf_probability(X, centres, width: float, w, *, chunk_size: int = 4096) -> np.ndarray:
    """``P(y = 1 | x) = s(phi(x) . w)`` of an RBF classifier, evaluated in chunks of rows.

    Contour plots of a narrow-width classifier need fine grids (10^5 points or more) against
    hundreds of centres; evaluating the design a chunk at a time keeps memory at
    ``chunk_size x (C + 1)`` floats.

    Parameters
    ----------
    X : array_like, shape (N, D)
        Inputs.
    centres : array_like, shape (C, D)
        Centres of the basis functions (the training inputs).
    width : float
        RBF width ``l``.
    w : array_like, shape (C + 1,)
        Weights, the bias last (as :func:`lib.features.rbf_features` orders the columns).
    chunk_size : int
        Rows per chunk.

    Returns
    -------
    ndarray, shape (N,)
    """
    X = as_matrix(X, "X")
    centres = as_matrix(centres, "centres", n_cols=X.shape[1])
    width = check_width(width, "width")
    w = as_vector(w, "w", length=centres.shape[0] + 1)
    chunk_size = positive_int(chunk_size, "chunk_size")
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], chunk_size):
        rows = slice(start, start + chunk_size)
        out[rows] = sigmoid(rbf_features(X[rows], centres, width) @ w)   # s(phi(x) . w)
    return out


def resample_to_fraction(X, y, *, fraction: float, n_points: int, seed: int = 0):
    """Draw a training set of ``n_points`` rows with a given fraction of ones.

    ``k = round(fraction * n_points)`` rows are drawn without replacement from the rows with
    ``y = 1`` and ``n_points - k`` from those with ``y = 0``; the result is shuffled. The
    labels stay the true labels of the drawn points.

    Parameters
    ----------
    X : array_like, shape (N, D)
        Inputs to draw from.
    y : array_like, shape (N,)
        Their labels 0/1.
    fraction : float
        Wanted fraction of ones, in [0, 1].
    n_points : int
        Size of the drawn set.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    X_s : ndarray, shape (n_points, D)
    y_s : ndarray, shape (n_points,)

    Raises
    ------
    ValueError
        If a class has fewer rows than the draw needs.
    """
    X = as_matrix(X, "X")
    y = as_labels(y, "y", length=X.shape[0])
    fraction = check_fraction(fraction, "fraction")
    n_points = positive_int(n_points, "n_points")
    k = int(round(fraction * n_points))
    ones, zeros = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    if k > ones.size or n_points - k > zeros.size:
        raise ValueError(
            f"n_points={n_points} at fraction={fraction} needs {k} ones and {n_points - k} zeros, "
            f"but y has {ones.size} ones and {zeros.size} zeros"
        )
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.choice(ones, k, replace=False), rng.choice(zeros, n_points - k, replace=False)])
    rows = rng.permutation(rows)
    return X[rows], y[rows]


@dataclass(frozen=True)
class MajorityEffect:
    """Outcome of :func:`majority_effect` (report figure 11).

    Attributes
    ----------
    fractions : ndarray, shape (F,)
        Fraction of ones forced on each training set.
    predicted_ones : ndarray, shape (F, R)
        Fraction of the test points classified as 1, for each fraction and repeat.
    width : float
        RBF width ``l`` used.
    n_points : int
        Size of each resampled training set.
    """

    fractions: np.ndarray
    predicted_ones: np.ndarray
    width: float
    n_points: int

    @property
    def mean(self) -> np.ndarray:
        """Average over repeats of the fraction of test points predicted 1, shape (F,)."""
        return self.predicted_ones.mean(axis=1)

    @property
    def std(self) -> np.ndarray:
        """Standard deviation over repeats, shape (F,)."""
        return self.predicted_ones.std(axis=1)


def majority_effect(
    X_train,
    y_train,
    X_test,
    *,
    width: float,
    fractions,
    n_points: int,
    n_repeats: int,
    n_steps: int,
    learning_rate: float | None = None,
    seed: int = 0,
) -> MajorityEffect:
    """Fraction of test points predicted 1 when the training set's fraction of ones is forced.

    For each fraction and repeat: draw a training set with :func:`resample_to_fraction`, build
    RBF features centred on its inputs, fit by full-batch gradient ascent (algorithm 1), and
    count the test points with ``s(phi(x) . w) > 1/2``.

    Parameters
    ----------
    X_train : array_like, shape (N, 2)
        Pool of training inputs.
    y_train : array_like, shape (N,)
        Their labels 0/1.
    X_test : array_like, shape (N_test, 2)
        Test inputs.
    width : float
        RBF width ``l``.
    fractions : array_like, shape (F,)
        Fractions of ones to force, each in [0, 1].
    n_points : int
        Size of each resampled training set.
    n_repeats : int
        Draws per fraction.
    n_steps : int
        Gradient steps per fit.
    learning_rate : float, optional
        Step size; ``None`` uses ``1 / kappa`` (:func:`curvature_bound`) of each design.
    seed : int
        Seed of the generator that seeds every draw.

    Returns
    -------
    MajorityEffect
    """
    X_train = as_matrix(X_train, "X_train")
    y_train = as_labels(y_train, "y_train", length=X_train.shape[0])
    X_test = as_matrix(X_test, "X_test", n_cols=X_train.shape[1])
    width = check_width(width, "width")
    fractions = as_probabilities(fractions, "fractions", what="numbers")
    n_points = positive_int(n_points, "n_points")
    n_repeats = positive_int(n_repeats, "n_repeats")
    n_steps = positive_int(n_steps, "n_steps")
    if learning_rate is not None:
        learning_rate = positive_scalar(learning_rate, "learning_rate")

    seeds = np.random.default_rng(seed).integers(0, 2**32, size=(fractions.size, n_repeats))
    out = np.empty((fractions.size, n_repeats))
    for i, f in enumerate(fractions):
        for r in range(n_repeats):
            Xs, ys = resample_to_fraction(X_train, y_train, fraction=float(f), n_points=n_points,
                                          seed=int(seeds[i, r]))
            Phi = rbf_features(Xs, Xs, width)             # centres = the drawn training inputs
            eta = 1.0 / curvature_bound(Phi) if learning_rate is None else learning_rate
            w = fit_ml(Phi, ys, learning_rate=eta, n_steps=n_steps, record_every=n_steps).w
            p_test = rbf_probability(X_test, Xs, width, w)
            out[i, r] = predict_labels(p_test).mean()     # fraction of test points predicted 1
    return MajorityEffect(fractions=fractions, predicted_ones=out, width=width, n_points=n_points)


# --------------------------------------------------------------------------- spread over splits


@dataclass(frozen=True)
class SplitPaths:
    """Training paths of one classifier on several seeded random splits (:func:`split_paths`).

    Attributes
    ----------
    seeds : ndarray, shape (S,)
        Seeds of :func:`lib.data.random_split`, one per split.
    steps : ndarray, shape (K,)
        Full-batch gradient steps (= epochs) at each record, 0 first.
    learning_rates : ndarray, shape (S,)
        Step ``eta = 1 / kappa`` of each split's design.
    train_ll, test_ll : ndarray, shape (S, K)
        Average log-likelihoods along each path.
    train_rates, test_rates : ndarray, shape (S, K, 2)
        Diagonal of the row-normalised confusion matrix along each path:
        ``P(yhat = 0 | y = 0)`` and ``P(yhat = 1 | y = 1)``.
    final_w : ndarray, shape (S, M)
        Weights after the last step.
    width : float or None
        RBF width ``l``; ``None`` for the linear classifier.
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
    """Row numbers that :func:`lib.data.random_split` puts in the training and the test set.

    Parameters
    ----------
    n_rows : int
        Number N of rows of the data.
    seed : int
        Seed of the split.
    train_fraction : float
        Fraction of the rows used for training.

    Returns
    -------
    train_rows : ndarray of int, shape (N_train,)
        In the order ``random_split`` returns them.
    test_rows : ndarray of int, shape (N - N_train,)
    """
    n_rows = positive_int(n_rows, "n_rows")
    rows = np.arange(n_rows, dtype=float)[:, None]
    tr, _, te, _ = random_split(rows, np.zeros(n_rows), train_fraction=train_fraction, seed=seed)
    return tr[:, 0].astype(int), te[:, 0].astype(int)


def _all_splits_design(X, width):
    """The design on every input, ``F`` (N, M_all), and its products for all splits at once:
    ``activations(W)`` = F W and ``gradients(R)`` = F^T R (W: (M_all, S), R: (N, S)).

    All splits run at once: with the design ``F`` of all N points on all N centres (shape
    (N, N + 1); for the linear classifier (N, 3)), split ``s`` uses the rows and centre
    columns of its training set, so its activations on *every* point are ``F @ w_s`` with
    ``w_s`` zero on the test centres. One matrix product ``F @ W`` (W of shape (N + 1, S))
    then gives every split's training and test activations, and ``F^T @ R`` (R the residuals
    ``y - s(a)`` on each split's training rows, zero elsewhere) every gradient: two BLAS-3
    products per step instead of ``2 S`` matrix-vector products.
    """
    N = X.shape[0]
    F = linear_features(X) if width is None else rbf_features(X, X, width)   # (N, M_all)
    if width is None:
        return F, (lambda W: F @ W), (lambda R: F.T @ R)
    # F = [K, 1] with K symmetric: K @ V is cheaper than F.T @ V for C-ordered K
    Kc = np.ascontiguousarray(F[:, :N])
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
    iterates as :func:`lib.ml.fit_ml` on that split (to rounding). Every ``record_every``
    steps the average log-likelihoods and confusion diagonals of both sets are recorded.

    All splits run at once (:func:`_all_splits_design`).

    Parameters
    ----------
    X : array_like, shape (N, 2)
        All inputs.
    y : array_like, shape (N,)
        All labels 0/1.
    width : float or None
        RBF width ``l``, or None for the linear classifier.
    seeds : array_like of int, shape (S,)
        One split per seed.
    n_steps : int
        Gradient steps per split.
    record_every : int
        Record interval; must divide ``n_steps``.
    train_fraction : float
        Fraction of the rows used for training.

    Returns
    -------
    SplitPaths
        ``final_w[s]`` is ordered like the columns of the split's own design (training
        centres in ``random_split`` order, bias last).
    """
    X = as_matrix(X, "X", n_cols=2)
    y = as_labels(y, "y", length=X.shape[0])
    if width is not None:
        width = check_width(width, "width")
    seeds = np.asarray(seeds)
    if seeds.ndim != 1 or seeds.size == 0 or not np.issubdtype(seeds.dtype, np.integer):
        raise ValueError(f"seeds must be a non-empty 1-D sequence of integers, got {seeds!r}")
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
            R = np.where(train_mask, Y - sigmoid(A), 0.0)
            W += step_scale * gradients(R)           # algorithm 1, full batch, every split
    final_w = [W[c, s] for s, c in enumerate(cols)]
    return SplitPaths(seeds=seeds.copy(), steps=steps, learning_rates=etas, train_ll=train_ll,
                      test_ll=test_ll, train_rates=train_rates, test_rates=test_rates,
                      final_w=np.array(final_w), width=width)


def first_crossing(paths, level: float) -> np.ndarray:
    """Index of the first record at which each path reaches ``level`` (``>= level``).

    Parameters
    ----------
    paths : array_like, shape (S, K) or (K,)
        Values along each path (e.g. :attr:`SplitPaths.train_ll`).
    level : float
        The level to reach.

    Returns
    -------
    ndarray of int, shape (S,) (an int for one path)
        Record index, or ``-1`` where the path never reaches the level.
    """
    one = np.ndim(paths) == 1
    arr = as_vector(paths, "paths")[None, :] if one else as_matrix(paths, "paths")
    if arr.shape[1] == 0:
        raise ValueError("paths must hold at least one record")
    level = real_scalar(level, "level")
    reached = arr >= level
    idx = np.where(reached.any(axis=1), reached.argmax(axis=1), -1)
    return int(idx[0]) if one else idx


def take_at(paths, index) -> np.ndarray:
    """Values of each path at its own record index (NaN where the index is ``-1``).

    Parameters
    ----------
    paths : array_like, shape (S, K) or (S, K, ...)
        Values along each path.
    index : array_like of int, shape (S,)
        One record index per path (e.g. from :func:`first_crossing`); ``-1`` means none.

    Returns
    -------
    ndarray, shape (S,) or (S, ...)
    """
    paths = np.asarray(paths, dtype=float)
    index = np.asarray(index)
    if paths.ndim < 2:
        raise ValueError(f"paths must have shape (S, K, ...), got shape {paths.shape}")
    if index.shape != (paths.shape[0],) or not np.issubdtype(index.dtype, np.integer):
        raise ValueError(f"index must hold {paths.shape[0]} integers (one per path), got {index!r}")
    if np.any((index < -1) | (index >= paths.shape[1])):
        raise ValueError(f"index must be -1 or in [0, {paths.shape[1] - 1}]")
    out = paths[np.arange(paths.shape[0]), np.maximum(index, 0)].copy()
    out[index < 0] = np.nan
    return out


def percentile_of(value: float, sample) -> float:
    """Percent of ``sample`` at or below ``value`` (0: below every draw; 100: at or above all).

    Parameters
    ----------
    value : float
        E.g. a number the report printed.
    sample : array_like, shape (S,)
        E.g. the same quantity on S random splits. NaNs are not allowed.

    Returns
    -------
    float in [0, 100]
    """
    value = real_scalar(value, "value")
    sample = as_vector(sample, "sample")
    return float(100.0 * np.mean(sample <= value))
