"""Tests of lib.grid: the fast evidence grid equals lib.fit_laplace point by point."""
import os
import warnings

import numpy as np
import pandas as pd
import pytest

import lib
from lib import grid
from lib.evaluate import evaluate
from lib.grid import COLUMNS, evidence_grid

S2 = np.array([0.01, 1.0, 100.0])
#: 0.05: narrow bumps, banded dual form; 0.2: RBF block of full rank, dense dual form;
#: 1.5 and 3: low rank (primal, reduced).
WIDTHS = np.array([0.05, 0.2, 1.5, 3.0])


@pytest.fixture(scope="module")
def data():
    """120 points in 2-D, two overlapping classes (seeded): 90 train, 30 test."""
    rng = np.random.default_rng(2024)
    y = (rng.random(120) < 0.5).astype(float)
    X = rng.normal(size=(120, 2)) + np.where(y[:, None] == 1, 0.9, -0.9)
    return X[:90], y[:90], X[90:], y[90:]


@pytest.fixture(scope="module")
def table(data):
    return evidence_grid(*data, S2, WIDTHS, n_jobs=1)           # serial: the reference


def test_all_forms_are_exercised(data):
    Xtr, _, Xte, _ = data
    assert [grid.solver_form(Xtr, l, 100.0) for l in WIDTHS] == ["banded", "dual", "primal", "primal"]
    assert isinstance(grid._make_solver(Xtr, Xte, 0.05, 100.0), grid._Banded)
    assert type(grid._make_solver(Xtr, Xte, 0.2, 100.0)) is grid._Dual
    primal = grid._make_solver(Xtr, Xte, 3.0, 100.0)
    assert isinstance(primal, grid._Primal)
    assert primal.size < 45                            # rank reduction: 91 weights -> fewer directions


def test_table_layout(table):
    assert list(table.columns) == list(COLUMNS)
    assert len(table) == S2.size * WIDTHS.size
    assert table[["width", "s2"]].equals(table[["width", "s2"]].sort_values(["width", "s2"]))
    assert np.all(np.isfinite(table.drop(columns="n_iter").to_numpy()))


def test_equals_fit_laplace_per_point(data, table):
    Xtr, ytr, Xte, yte = data
    for row in table.itertuples():
        Phi, Phi_test = lib.rbf_features(Xtr, Xtr, row.width), lib.rbf_features(Xte, Xtr, row.width)
        expected = evaluate(lib.fit_laplace(Phi, ytr, row.s2, max_iter=500), Phi, ytr, Phi_test, yte)
        for key, value in expected.items():
            assert getattr(row, key) == pytest.approx(value, abs=1e-6), (key, row.s2, row.width)


def test_warm_start_equals_cold_start(data):
    s2 = np.logspace(-1, 2, 8)
    warm = evidence_grid(*data, s2, WIDTHS)
    cold = evidence_grid(*data, s2, WIDTHS, warm_start=False)
    # Both stop Newton's method within ACCEPT_STEP = 1e-5 of the MAP, from different sides.
    pd.testing.assert_frame_equal(warm.drop(columns="n_iter"), cold.drop(columns="n_iter"), atol=1e-7, rtol=0)
    assert warm.n_iter.sum() < cold.n_iter.sum()       # the warm start saves factorisations


def test_joblib_parallel_equals_serial(data, table):
    parallel = evidence_grid(*data, S2, WIDTHS, n_jobs=2)
    pd.testing.assert_frame_equal(parallel, table, check_exact=True)


def test_default_jobs_use_the_cores_and_equal_serial(data, table):
    expected = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                   else os.cpu_count() or 1, WIDTHS.size)
    assert grid.default_n_jobs(WIDTHS.size) == expected
    default = evidence_grid(*data, S2, WIDTHS)                  # n_jobs=None
    pd.testing.assert_frame_equal(default, table, check_exact=True)


@pytest.mark.parametrize("cores, n_tasks, expected", [(8, 3, 3), (2, 50, 2), (1, 5, 1), (4, 0, 1)])
def test_default_jobs_are_bounded(monkeypatch, cores, n_tasks, expected):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert grid.default_n_jobs(n_tasks) == expected
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # platforms without it
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert grid.default_n_jobs(n_tasks) == expected
    monkeypatch.setattr(os, "cpu_count", lambda: None)        # unknown: one job
    assert grid.default_n_jobs(n_tasks) == 1


def test_dask_cluster_equals_serial(data, table):
    distributed = pytest.importorskip("distributed")
    import joblib

    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            on_cluster = evidence_grid(*data, S2, WIDTHS, n_jobs=-1)
    pd.testing.assert_frame_equal(on_cluster, table, check_exact=True)


def test_extreme_hyperparameters_are_finite_and_quiet(data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = evidence_grid(*data, [1e-4, 1e4], [1e-4, 1e4])
    assert np.all(np.isfinite(out.drop(columns="n_iter").to_numpy()))
    Xtr, ytr, _, _ = data
    for row in out.itertuples():                       # still the Laplace evidence of fit_laplace
        Phi = lib.rbf_features(Xtr, Xtr, row.width)
        expected = lib.fit_laplace(Phi, ytr, row.s2, max_iter=500).log_evidence
        assert row.log_evidence == pytest.approx(expected, abs=1e-6)


def test_progress_bar_goes_to_stderr(data, capsys):
    evidence_grid(*data, [1.0], [0.6])
    assert capsys.readouterr().err == ""
    evidence_grid(*data, [1.0], [0.6], progress=True)
    captured = capsys.readouterr()
    assert "evidence grid" in captured.err and captured.out == ""


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"s2_values": [1.0, -1.0]}, ValueError, "s2_values must hold positive"),
        ({"s2_values": [[1.0, 2.0]]}, ValueError, "s2_values must be a 1-D array"),
        ({"s2_values": 1.0}, ValueError, "s2_values must be a 1-D array"),
        ({"s2_values": []}, ValueError, "s2_values must hold at least one"),
        ({"s2_values": [1.0, np.nan]}, ValueError, "s2_values must contain only finite"),
        ({"s2_values": [1.0, np.inf]}, ValueError, "s2_values must contain only finite"),
        ({"s2_values": [1.0, 1.0]}, ValueError, "s2_values must not contain repeated"),
        ({"s2_values": ["a"]}, TypeError, "s2_values must be a numeric array"),
        ({"widths": [0.0, 1.0]}, ValueError, "widths must hold positive"),
        ({"n_jobs": 0}, ValueError, "n_jobs must be None or a non-zero integer"),
        ({"n_jobs": 1.5}, ValueError, "n_jobs must be None or a non-zero integer"),
    ],
)
def test_bad_grid_arguments(data, kwargs, error, match):
    args = {"s2_values": [1.0], "widths": [0.6], **kwargs}
    with pytest.raises(error, match=match):
        evidence_grid(*data, **args)


def test_bad_data_arguments(data):
    Xtr, ytr, Xte, yte = data
    with pytest.raises(ValueError, match="X_test must have 2 columns"):
        evidence_grid(Xtr, ytr, Xte[:, :1], yte, [1.0], [0.6])
    with pytest.raises(ValueError, match="y_train must have length 90"):
        evidence_grid(Xtr, ytr[:-1], Xte, yte, [1.0], [0.6])
    with pytest.raises(ValueError, match="y_test must contain only the labels 0 and 1"):
        evidence_grid(Xtr, ytr, Xte, yte + 2, [1.0], [0.6])


def test_recursive_upper_inverse_matches_lapack():
    from scipy.linalg.lapack import dtrtri

    from lib.grid import _upper_inverse

    rng = np.random.default_rng(0)
    for n in (5, 130, 300):
        X = rng.normal(size=(n, n))
        U = np.linalg.cholesky(X @ X.T / n + np.eye(n)).T
        expected, _ = dtrtri(U, lower=0)
        np.testing.assert_allclose(_upper_inverse(np.asfortranarray(U)), expected, atol=1e-13)
        np.testing.assert_allclose(_upper_inverse(np.asfortranarray(U), base=16) @ U, np.eye(n), atol=1e-12)


def test_banded_form_equals_dense_form_with_many_blocks(data, monkeypatch):
    Xtr, ytr, Xte, yte = data
    s2 = np.logspace(-2, 2, 6)
    monkeypatch.setattr(grid, "MIN_BLOCK", 4)            # many small blocks: the recursions run
    monkeypatch.setattr(grid, "BAND_FRACTION", 0.5)
    solver = grid._make_solver(Xtr, Xte, 0.08, s2[-1])
    assert isinstance(solver, grid._Banded) and len(solver.blocks) >= 4
    banded = pd.DataFrame(grid._width_rows(Xtr, ytr, Xte, yte, s2, 0.08))
    monkeypatch.setattr(grid, "BAND_FRACTION", -1.0)     # never banded
    assert type(grid._make_solver(Xtr, Xte, 0.08, s2[-1])) is grid._Dual
    dense = pd.DataFrame(grid._width_rows(Xtr, ytr, Xte, yte, s2, 0.08))
    pd.testing.assert_frame_equal(banded.drop(columns="n_iter"), dense.drop(columns="n_iter"), atol=1e-9, rtol=0)


def test_band_plan_drops_only_negligible_entries(data):
    Xtr = data[0]
    R = lib.rbf_features(Xtr, Xtr, 0.05)[:, :-1]
    KR = R @ R.T
    K0, perm, block = grid._band_plan(KR, 100.0)
    dropped = np.abs(KR - K0)
    assert np.all(dropped <= grid.band_drop_threshold(Xtr.shape[0], 100.0))
    assert 0 < np.count_nonzero(dropped)                 # something was dropped ...
    assert 100.0 / 4 * dropped.sum() <= grid.BAND_TOL    # ... within the bound of the docstring
    positions = np.empty_like(perm)
    positions[perm] = np.arange(perm.size)
    rows, cols = np.nonzero(K0)
    assert np.max(np.abs(positions[rows] - positions[cols])) <= block   # block tridiagonal
    assert grid._band_plan(lib.rbf_features(Xtr, Xtr, 1.0)[:, :-1] @ R.T, 100.0) is None  # dense


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
    np.testing.assert_allclose(grid._block_inverse_diagonal(Li, Ms), np.diag(np.linalg.inv(B)), rtol=1e-10)
    v = rng.normal(size=(23, 3))
    np.testing.assert_allclose(grid._block_forward(Li, Ms, blocks, v), np.linalg.solve(L, v), atol=1e-12)
    np.testing.assert_allclose(grid._block_backward(Li, Ms, blocks, v), np.linalg.solve(L.T, v), atol=1e-12)


def test_split_scores_equal_the_checked_metrics():
    rng = np.random.default_rng(3)
    mu, var = rng.normal(scale=4.0, size=200), rng.exponential(size=200)
    y = (rng.random(200) < 0.5).astype(float)
    scores = grid.split_scores(mu, var, y, "test")
    assert scores["test_accuracy"] == lib.accuracy(lib.sigmoid(mu), y)
    assert scores["test_ll_map"] == lib.average_log_likelihood_logits(mu, y)
    expected = lib.average_log_likelihood_logits(lib.predictive.probit_logits(mu, var), y)
    assert scores["test_ll_pred"] == expected


def test_leading_eigenpairs_match_a_full_eigendecomposition(data, monkeypatch):
    from scipy.linalg import eigh

    R = lib.rbf_features(data[0], data[0], 3.0)[:, :-1]
    nu, Q = grid._leading_eigenpairs(R, 100.0)        # pivoted Cholesky + SVD (low rank)
    monkeypatch.setattr(grid, "PIVOTED_FRACTION", -1.0)
    nu_full, Q_full = grid._leading_eigenpairs(R, 100.0)   # full eigendecomposition
    assert 3 < nu.size == nu_full.size < R.shape[0] // 2
    np.testing.assert_allclose(nu, nu_full, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(Q @ np.diag(nu) @ Q.T, R, atol=1e-9)   # the dropped part is tiny
    nu_all = eigh(R, eigvals_only=True)
    assert nu_full[-1] > grid._rank_cut(nu_all[-1], 100.0) >= nu_all[-nu.size - 1]


@pytest.mark.parametrize("banded", [True, False])
def test_dual_variances_equal_a_direct_computation(data, monkeypatch, banded):
    """Both dual forms, including the direct formula where ``1 - B^-1_nn`` is tiny (W ~ 1e-18)."""
    Xtr, _, Xte, _ = data
    if not banded:
        monkeypatch.setattr(grid, "BAND_FRACTION", -1.0)
    solver = grid._make_solver(Xtr, Xte, 0.05, 100.0)
    assert isinstance(solver, grid._Banded) == banded
    a = np.random.default_rng(5).normal(scale=3.0, size=Xtr.shape[0])
    a[:10] = 40.0                                      # W = s(a) s(-a) ~ 4e-18
    s2 = 0.5
    h, var_test = solver.variances(solver.factor(a, s2), s2)
    Phi, Phi_test = lib.rbf_features(Xtr, Xtr, 0.05), lib.rbf_features(Xte, Xtr, 0.05)
    W = lib.sigmoid(a) * lib.sigmoid(-a)
    A = np.eye(Phi.shape[1]) / s2 + (Phi.T * W) @ Phi  # the precision, directly
    cov = np.linalg.inv(A)
    np.testing.assert_allclose(h, np.einsum("nm,mk,nk->n", Phi, cov, Phi), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(var_test, np.einsum("nm,mk,nk->n", Phi_test, cov, Phi_test), rtol=1e-8, atol=1e-12)
