"""Tests of lib.fastgrid: it computes lib.hyper.grid's reference (to 1e-8) in every solver form,
its speed features are in use (counted), and its linear-algebra pieces are right."""
from dataclasses import FrozenInstanceError, replace

import numpy as np
import pandas as pd
import pytest

import lib
from lib.fastgrid import DEFAULT_SETTINGS, chain, decompose, evidence_grid, forms, schedule
from lib.hyper.grid import COLUMNS

from conftest import make_blobs

#: Columns compared with the reference (n_iter counts different things in the two).
SCORES = [c for c in COLUMNS if c not in ("s2", "width", "n_iter")]
S2 = np.logspace(-2, 2, 9)
#: 0.03, 0.05: banded dual; 0.2 (and 0.5 on the small problem): dense dual; 1.5, 3: primal.
WIDTHS = np.array([0.03, 0.05, 0.2, 0.5, 1.5, 3.0])


def split(n_train, n_test, seed):
    X, y = make_blobs(n_train + n_test, seed=seed)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


@pytest.fixture(scope="module", params=[(90, 30, 2024), (300, 100, 7)], ids=["small", "medium"])
def problem(request):
    """A small and a medium generated problem, and the reference table on them."""
    data = split(*request.param)
    return data, evidence_grid(*data, S2, WIDTHS, n_jobs=1, engine="reference")


def test_every_form_is_exercised(problem):
    (X_train, _, X_test, _), _ = problem
    chosen = [decompose.form_and_directions(X_train, l, S2[-1])[0] for l in WIDTHS]
    assert chosen[:3] == ["banded", "banded", "dual"] and chosen[-2:] == ["primal", "primal"]
    assert isinstance(decompose._make_solver(X_train, X_test, 0.05, S2[-1]), forms._Banded)
    assert type(decompose._make_solver(X_train, X_test, 0.2, S2[-1])) is forms._Dual
    primal = decompose._make_solver(X_train, X_test, 3.0, S2[-1])
    assert isinstance(primal, forms._Primal)
    assert primal.size < X_train.shape[0] // 2        # rank reduction: far fewer directions
    assert decompose.form_and_directions(X_train, 3.0, S2[-1]) == ("primal", primal.size)
    assert decompose.form_and_directions(X_train, 0.03, S2[-1])[1] == X_train.shape[0] + 1


def test_engine_equals_reference(problem):
    data, reference = problem
    fast = evidence_grid(*data, S2, WIDTHS, n_jobs=1)
    assert fast[["s2", "width"]].equals(reference[["s2", "width"]])
    diff = (fast[SCORES] - reference[SCORES]).abs()
    assert diff.to_numpy().max() <= 1e-8, diff.max()
    # The plug-in MAP scores need the MAP itself: to 1e-11 only with Newton's last step (the
    # polish) taken; without it they are off by about ACCEPT_STEP = 1e-7 times their slope.
    assert diff[["train_ll_map", "test_ll_map"]].to_numpy().max() <= 1e-11


def test_split_chains_equal_the_reference(problem):
    """Every task of a many-task plan starts cold: still the reference's numbers."""
    data, reference = problem
    tasks = schedule.plan_tasks(data[0], S2, WIDTHS, target_tasks=200, min_segment=2)
    assert len(tasks) > 2 * WIDTHS.size
    rows = [row for task in tasks for row in schedule.run_task(*data, S2, task)[0]]
    fast = pd.DataFrame(rows).sort_values(["width", "s2"], ignore_index=True)
    assert (fast[SCORES] - reference[SCORES]).abs().to_numpy().max() <= 1e-8


def test_cold_starts_equal_the_reference(problem):
    data, reference = problem
    cold = evidence_grid(*data, S2, WIDTHS, n_jobs=1, warm_start=False)
    assert (cold[SCORES] - reference[SCORES]).abs().to_numpy().max() <= 1e-8


# --------------------------------------------------------------------------- speed features


@pytest.fixture(scope="module")
def chains():
    """One chain of 30 prior variances in each form, on the medium problem."""
    return split(300, 100, 7), np.logspace(-2, 2, 30), (0.05, 0.2, 1.5)


def run(chains, **changes):
    data, s2, widths = chains
    settings = replace(DEFAULT_SETTINGS, **changes)
    work = chain.Work()
    for width in widths:
        work.add(chain.chain_rows(*data, s2, width, s2[-1], settings=settings)[1])
    return work


def test_settings_are_frozen_and_checked_by_name():
    settings = replace(DEFAULT_SETTINGS, max_chord=0, extrapolate=1)
    assert (settings.max_chord, settings.extrapolate) == (0, 1)
    assert (DEFAULT_SETTINGS.max_chord, DEFAULT_SETTINGS.extrapolate) == (40, 5)
    with pytest.raises(FrozenInstanceError):
        settings.max_chord = 3
    with pytest.raises(TypeError):
        replace(DEFAULT_SETTINGS, MAX_CHORD=0)


def test_chord_steps_save_factorisations(chains):
    work = run(chains)
    assert work.points == 90 and work.setups == 3
    assert work.factorisations <= 1.1 * work.points     # about one factorisation a point ...
    without = run(chains, max_chord=0)
    assert without.chord_steps == 0
    assert without.factorisations >= 2 * work.points    # ... instead of more than two


def test_extrapolated_starts_are_chosen_and_save_chord_steps(chains):
    work = run(chains)
    # From the third point of each chain on, the quartic extrapolation is the best start ...
    assert work.extrapolated_starts == work.points - 2 * 3
    without = run(chains, extrapolate=1)                # the last solution only
    assert without.extrapolated_starts == 0
    assert work.chord_steps <= 0.8 * without.chord_steps   # ... and a third of the steps fewer
    assert work.factorisations <= without.factorisations


def test_work_adds_up():
    a, b = chain.Work(1, 2, 3, 4, 5), chain.Work(10, 20, 30, 40, 50)
    assert a.add(b) == chain.Work(11, 22, 33, 44, 55)


# --------------------------------------------------------------------------- scheduling


def test_plan_covers_every_point_once_costliest_first():
    X_train, _, _, _ = split(300, 100, 7)
    s2 = np.logspace(-2, 2, 40)
    tasks = schedule.plan_tasks(X_train, s2, WIDTHS, target_tasks=16)
    assert tasks == schedule.plan_tasks(X_train, s2, WIDTHS, target_tasks=16)   # deterministic
    assert [t.cost for t in tasks] == sorted((t.cost for t in tasks), reverse=True)
    for width in WIDTHS:
        segments = sorted((t.start, t.stop) for t in tasks if t.width == width)
        assert segments[0][0] == 0 and segments[-1][1] == s2.size
        assert all(a[1] == b[0] for a, b in zip(segments, segments[1:]))      # contiguous
        assert all(stop - start >= DEFAULT_SETTINGS.min_segment for start, stop in segments)
    assert len(tasks) > WIDTHS.size                     # the costly chains were split
    unsplit = schedule.plan_tasks(X_train, s2, WIDTHS, target_tasks=1)
    assert sorted((t.width, t.start, t.stop) for t in unsplit) == [(w, 0, 40) for w in WIDTHS]


def test_cost_model_ranks_the_forms():
    X_train, _, _, _ = split(300, 100, 7)
    costs = dict(zip(WIDTHS, schedule.estimate_costs(X_train, WIDTHS, 100.0)))
    assert costs[0.2] >= costs[0.5] > costs[1.5] >= costs[3.0]  # dual, then fewer directions
    assert np.all(costs[3.0] >= schedule._COST_POINT)


# --------------------------------------------------------------------------- the pieces


def test_recursive_upper_inverse_matches_lapack():
    from scipy.linalg.lapack import dtrtri

    rng = np.random.default_rng(0)
    for n in (5, 130, 300):
        X = rng.normal(size=(n, n))
        U = np.linalg.cholesky(X @ X.T / n + np.eye(n)).T
        expected, _ = dtrtri(U, lower=0)
        np.testing.assert_allclose(forms._upper_inverse(np.asfortranarray(U)), expected, atol=1e-13)
        inverse = forms._upper_inverse(np.asfortranarray(U), base=16)
        np.testing.assert_allclose(inverse @ U, np.eye(n), atol=1e-12)


def test_banded_form_equals_dense_form_with_many_blocks():
    data = split(90, 30, 2024)
    s2 = np.logspace(-2, 2, 6)
    small = replace(DEFAULT_SETTINGS, min_block=4, band_fraction=0.5)   # many small blocks
    solver = decompose._make_solver(data[0], data[2], 0.08, s2[-1], small)
    assert isinstance(solver, forms._Banded) and len(solver.blocks) >= 4
    banded = pd.DataFrame(chain.chain_rows(*data, s2, 0.08, s2[-1], settings=small)[0])
    never = replace(DEFAULT_SETTINGS, band_fraction=-1.0)             # never banded
    assert type(decompose._make_solver(data[0], data[2], 0.08, s2[-1], never)) is forms._Dual
    dense = pd.DataFrame(chain.chain_rows(*data, s2, 0.08, s2[-1], settings=never)[0])
    diff = (banded[SCORES] - dense[SCORES]).abs().to_numpy().max()
    assert diff <= 1e-9


def test_band_plan_drops_only_negligible_entries():
    X_train = split(90, 30, 2024)[0]
    R = lib.rbf_features(X_train, X_train, 0.05)[:, :-1]
    KR = R @ R.T
    K0, perm, block = decompose._band_plan(KR, 100.0)
    dropped = np.abs(KR - K0)
    assert np.all(dropped <= decompose.band_drop_threshold(X_train.shape[0], 100.0))
    assert 0 < np.count_nonzero(dropped)                 # something was dropped ...
    assert 100.0 / 4 * dropped.sum() <= DEFAULT_SETTINGS.band_tol  # ... within the bound of the docstring
    positions = np.empty_like(perm)
    positions[perm] = np.arange(perm.size)
    rows, cols = np.nonzero(K0)
    assert np.max(np.abs(positions[rows] - positions[cols])) <= block   # block tridiagonal
    wide = lib.rbf_features(X_train, X_train, 1.0)[:, :-1]
    assert decompose._band_plan(wide @ wide.T, 100.0) is None               # dense


def test_block_inverse_diagonal_matches_dense_inverse():
    rng = np.random.default_rng(1)
    blocks = [(0, 5), (5, 12), (12, 16), (16, 23)]
    Li, Ms, L = [], [], np.zeros((23, 23))
    for k, (s, e) in enumerate(blocks):
        Lk = np.tril(rng.normal(size=(e - s, e - s))) + 3 * np.eye(e - s)
        L[s:e, s:e] = Lk
        Li.append(np.linalg.inv(Lk))
        if k + 1 < len(blocks):
            s1, e1 = blocks[k + 1]
            Ms.append(rng.normal(size=(e1 - s1, e - s)))
            L[s1:e1, s:e] = Ms[-1]
    B = L @ L.T
    np.testing.assert_allclose(forms._block_inverse_diagonal(Li, Ms), np.diag(np.linalg.inv(B)),
                               rtol=1e-10)
    v = rng.normal(size=(23, 3))
    np.testing.assert_allclose(forms._block_forward(Li, Ms, blocks, v), np.linalg.solve(L, v),
                               atol=1e-12)
    np.testing.assert_allclose(forms._block_backward(Li, Ms, blocks, v), np.linalg.solve(L.T, v),
                               atol=1e-12)


def test_leading_eigenpairs_match_a_full_eigendecomposition():
    from scipy.linalg import eigh

    X_train = split(90, 30, 2024)[0]
    R = lib.rbf_features(X_train, X_train, 3.0)[:, :-1]
    nu, Q = decompose._leading_eigenpairs(R, 100.0)       # pivoted Cholesky + SVD (low rank)
    nu_full, Q_full = decompose._leading_eigenpairs(
        R, 100.0, cfg=replace(DEFAULT_SETTINGS, pivoted_fraction=-1.0))   # full eigendecomposition
    assert 3 < nu.size == nu_full.size < R.shape[0] // 2
    np.testing.assert_allclose(nu, nu_full, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(Q @ np.diag(nu) @ Q.T, R, atol=1e-9)   # the dropped part is tiny
    nu_all = eigh(R, eigvals_only=True)
    assert nu_full[-1] > decompose._rank_cut(nu_all[-1], 100.0) >= nu_all[-nu.size - 1]


@pytest.mark.parametrize("width", [0.3, 0.5, 1.0, 3.0])
def test_inertia_counts_the_eigenvalues_above_the_cut(width):
    X_train = split(300, 100, 7)[0]
    R = lib.rbf_features(X_train, X_train, width)[:, :-1]
    cut = decompose._rank_cut(0.0, 100.0)
    assert decompose._count_above(R, cut) == int(np.sum(np.linalg.eigvalsh(R) > cut))


@pytest.mark.parametrize("banded", [True, False])
def test_dual_variances_equal_a_direct_computation(banded):
    """Both dual forms, including the direct formula where ``1 - B^-1_nn`` is tiny (W ~ 1e-18)."""
    X_train, _, X_test, _ = split(90, 30, 2024)
    cfg = DEFAULT_SETTINGS if banded else replace(DEFAULT_SETTINGS, band_fraction=-1.0)
    solver = decompose._make_solver(X_train, X_test, 0.05, 100.0, cfg)
    assert isinstance(solver, forms._Banded) == banded
    a = np.random.default_rng(5).normal(scale=3.0, size=X_train.shape[0])
    a[:10] = 40.0                                      # W = s(a) s(-a) ~ 4e-18
    s2 = 0.5
    h, var_test = solver.variances(solver.factor(a, s2), s2)
    Phi, Phi_test = lib.rbf_features(X_train, X_train, 0.05), lib.rbf_features(X_test, X_train, 0.05)
    W = lib.sigmoid(a) * lib.sigmoid(-a)
    cov = np.linalg.inv(np.eye(Phi.shape[1]) / s2 + (Phi.T * W) @ Phi)   # A^{-1}, directly
    np.testing.assert_allclose(h, np.einsum("nm,mk,nk->n", Phi, cov, Phi), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(var_test, np.einsum("nm,mk,nk->n", Phi_test, cov, Phi_test),
                               rtol=1e-8, atol=1e-12)
