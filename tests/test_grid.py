"""Tests of the grid: lib.hyper.grid's definition (a grid point is fit_laplace and
score_posterior), which imports no engine; lib.fastgrid.evidence_grid's table, its parallel and
cached runs, and the checks of its arguments. (The fast engine against the reference:
tests/test_fastgrid.py.)"""
import ast
import os
import subprocess
import sys
import warnings
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest

import lib
from lib import fastgrid
from lib.fastgrid import default_n_jobs, evidence_grid
from lib.hyper import grid
from lib.hyper.grid import COLUMNS
from lib.scores import _score_posterior as score_posterior

HYPER = Path(lib.__file__).parent / "hyper"
#: What the definition (lib.hyper) must not import: the engine and what runs it.
ENGINE_MODULES = ("lib.fastgrid", "joblib", "tqdm", "hashlib")

S2 = np.array([0.01, 1.0, 100.0])
#: 0.05: banded dual form; 0.2: dense dual; 1.5 and 3: low rank (primal, reduced).
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
    return evidence_grid(*data, S2, WIDTHS, n_jobs=1)           # serial


def test_table_layout(table):
    assert list(table.columns) == list(COLUMNS)
    assert len(table) == S2.size * WIDTHS.size
    assert table[["width", "s2"]].equals(table[["width", "s2"]].sort_values(["width", "s2"]))
    assert table.index.equals(pd.RangeIndex(len(table)))
    assert np.all(np.isfinite(table.drop(columns="n_iter").to_numpy()))


def test_reference_is_cold_fit_laplace_point_by_point(data):
    """The warm starts of the reference change the iterations, not the numbers."""
    Xtr, ytr, Xte, yte = data
    reference = evidence_grid(*data, S2, WIDTHS, n_jobs=1, engine="reference")
    for row in reference.itertuples():
        Phi, Phi_test = lib.rbf_features(Xtr, Xtr, row.width), lib.rbf_features(Xte, Xtr, row.width)
        expected = score_posterior(lib.fit_laplace(Phi, ytr, row.s2, max_iter=500),
                                   Phi, ytr, Phi_test, yte)
        for key, value in expected.items():
            assert getattr(row, key) == pytest.approx(value, abs=1e-9), (key, row.s2, row.width)


def test_grid_point_is_a_fit_and_its_scores(data):
    Xtr, ytr, Xte, yte = data
    Phi, Phi_test = lib.rbf_features(Xtr, Xtr, 0.7), lib.rbf_features(Xte, Xtr, 0.7)
    posterior, scores = grid.grid_point(Phi, ytr, Phi_test, yte, 2.0)
    assert posterior.s2 == 2.0 and scores["log_evidence"] == posterior.log_evidence
    assert scores == score_posterior(posterior, Phi, ytr, Phi_test, yte)


def test_hyper_imports_no_engine():
    """lib.hyper is the definition: no import of the engine, joblib, tqdm or hashlib (or os) in
    its source, and importing it loads none of them beyond what ``import lib`` loads."""
    for path in HYPER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith((*ENGINE_MODULES, "os")), (path.name, name)
                assert not (name == "lib" and any(a.name == "fastgrid" for a in node.names))
    probe = ("import sys, lib; before = set(sys.modules); import lib.hyper; "
             "print(' '.join(sorted(set(sys.modules) - before)))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, env={**os.environ, "PYTHONPATH": str(HYPER.parents[1])})
    added = loaded.stdout.split()
    assert "lib.hyper.grid" in added
    assert not [m for m in added if m.split(".")[0] in ENGINE_MODULES or m.startswith(
        "lib.fastgrid")], added


def test_joblib_parallel_equals_serial(data, table):
    parallel = evidence_grid(*data, S2, WIDTHS, n_jobs=2)
    pd.testing.assert_frame_equal(parallel, table, check_exact=True)


def test_default_jobs_use_the_cores_and_equal_serial(data, table):
    expected = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                   else os.cpu_count() or 1, WIDTHS.size)
    assert default_n_jobs(WIDTHS.size) == expected
    default = evidence_grid(*data, S2, WIDTHS)                  # n_jobs=None
    pd.testing.assert_frame_equal(default, table, check_exact=True)


@pytest.mark.parametrize("cores, n_tasks, expected", [(8, 3, 3), (2, 50, 2), (1, 5, 1), (4, 0, 1)])
def test_default_jobs_are_bounded(monkeypatch, cores, n_tasks, expected):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert default_n_jobs(n_tasks) == expected
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # platforms without it
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert default_n_jobs(n_tasks) == expected
    monkeypatch.setattr(os, "cpu_count", lambda: None)        # unknown: one job
    assert default_n_jobs(n_tasks) == 1


def test_split_chains_are_the_same_on_any_number_of_workers(data):
    """Chains split into segments (many s2 values): still bit-identical to serial."""
    s2 = np.logspace(-2, 2, 40)
    tasks = fastgrid.plan_tasks(data[0], s2, WIDTHS)
    assert len(tasks) > WIDTHS.size                             # some chains are split
    serial = evidence_grid(*data, s2, WIDTHS, n_jobs=1)
    pd.testing.assert_frame_equal(evidence_grid(*data, s2, WIDTHS, n_jobs=2), serial,
                                  check_exact=True)


def test_dask_cluster_equals_serial(data, table):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            on_cluster = evidence_grid(*data, S2, WIDTHS, n_jobs=-1)
    pd.testing.assert_frame_equal(on_cluster, table, check_exact=True)


def _cached(folder):
    return sorted(folder.rglob("output.pkl"))                  # joblib.Memory's entries


def test_cache_returns_the_same_table(data, table, tmp_path, monkeypatch):
    monkeypatch.setenv("BLC_CACHE_DIR", str(tmp_path))
    first = evidence_grid(*data, S2, WIDTHS, n_jobs=1, cache=True)
    assert len(_cached(tmp_path / "grids")) == 1
    pd.testing.assert_frame_equal(first, table, check_exact=True)
    again = evidence_grid(*data, S2, WIDTHS, n_jobs=2, cache=True, progress=True)  # same key
    pd.testing.assert_frame_equal(again, table, check_exact=True)
    assert len(_cached(tmp_path / "grids")) == 1
    evidence_grid(*data, S2[:2], WIDTHS, n_jobs=1, cache=True)       # other inputs, other key
    evidence_grid(*data, S2, WIDTHS, n_jobs=1, cache=True, engine="reference")
    evidence_grid(*data, S2, WIDTHS, n_jobs=1, cache=True, warm_start=False)
    assert len(_cached(tmp_path / "grids")) == 4


def test_cache_is_keyed_on_the_code(data, table, tmp_path, monkeypatch):
    """Other code (a change to lib's engine or fit): another key, the table recomputed."""
    monkeypatch.setenv("BLC_CACHE_DIR", str(tmp_path))
    evidence_grid(*data, S2, WIDTHS, n_jobs=1, cache=True)
    stale = _cached(tmp_path / "grids")[0]
    joblib.dump(table.assign(log_evidence=0.0), stale)              # as if other code made it
    pd.testing.assert_frame_equal(evidence_grid(*data, S2, WIDTHS, n_jobs=1, cache=True),
                                  table.assign(log_evidence=0.0))   # the cache is read ...
    monkeypatch.setattr(fastgrid.run, "code_digest", lambda: "other code")
    pd.testing.assert_frame_equal(evidence_grid(*data, S2, WIDTHS, n_jobs=1, cache=True), table,
                                  check_exact=True)                 # ... but not for other code
    assert len(_cached(tmp_path / "grids")) == 2


def test_cached_search_is_the_search_kept_on_disk(data, tmp_path, monkeypatch):
    """fastgrid.cached(hyper.f)(...) returns hyper.f(...), computed once per arguments and code,
    then read from the cache; only lib.hyper's public functions are taken."""
    from lib import hyper

    monkeypatch.setenv("BLC_CACHE_DIR", str(tmp_path))
    Xtr, ytr = data[:2]
    search = fastgrid.cached(hyper.maximise_evidence_s2)
    direct = hyper.maximise_evidence_s2(Xtr, ytr, 0.7, starts=[1.0])
    first = search(Xtr, ytr, 0.7, starts=[1.0])
    assert first.s2 == direct.s2 and first.log_evidence == direct.log_evidence
    assert np.array_equal(first.posterior.w_map, direct.posterior.w_map)
    assert len(_cached(tmp_path / "grids")) == 1
    stale = _cached(tmp_path / "grids")[0]
    joblib.dump("stored", stale)                                    # as if stored before
    assert search(Xtr, ytr, 0.7, starts=[1.0]) == "stored"          # read, not recomputed
    assert search(Xtr, ytr, 0.8, starts=[1.0]).s2 != direct.s2      # other arguments
    monkeypatch.setattr(fastgrid.run, "code_digest", lambda: "other code")
    assert search(Xtr, ytr, 0.7, starts=[1.0]).s2 == direct.s2      # other code: computed
    assert len(_cached(tmp_path / "grids")) == 3
    for other in (lib.fit_laplace, hyper.EvidenceRun, print, lambda: 0, None):
        with pytest.raises(TypeError, match="public function of lib.hyper"):
            fastgrid.cached(other)


def test_the_cache_key_covers_every_module_a_table_is_computed_by():
    """code_digest hashes the teaching core, lib.hyper and lib.fastgrid; these import nothing
    else from lib, so that a change to any code a table is computed by changes the key."""
    root = Path(lib.__file__).parent
    for path in [*root.glob("*.py"), *root.glob("hyper/*.py"), *root.glob("fastgrid/*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for sub in {name.split(".")[1] for name in names if name.startswith("lib.")}:
                assert sub in ("hyper", "fastgrid") or not (root / sub).is_dir(), (path, sub)
    assert len(fastgrid.code_digest()) == 64


def test_cache_in_an_unwritable_folder_is_skipped(data, table, tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("BLC_CACHE_DIR", str(blocked))
    pd.testing.assert_frame_equal(evidence_grid(*data, S2, WIDTHS, n_jobs=1, cache=True), table,
                                  check_exact=True)


def test_extreme_hyperparameters_are_finite_and_quiet(data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = evidence_grid(*data, [1e-4, 1e4], [1e-4, 1e4])
    assert np.all(np.isfinite(out.drop(columns="n_iter").to_numpy()))
    Xtr, ytr, _, _ = data
    for row in out.itertuples():                       # still the Laplace evidence of fit_laplace
        Phi = lib.rbf_features(Xtr, Xtr, row.width)
        expected = lib.fit_laplace(Phi, ytr, row.s2, max_iter=500).log_evidence
        assert row.log_evidence == pytest.approx(expected, abs=1e-8)


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
        ({"engine": "slow"}, ValueError, "engine must be one of"),
        ({"X_test": np.zeros((5, 1))}, ValueError, "X_test must have 2 columns"),
        ({"y_train": np.zeros(89)}, ValueError, "y_train must have length 90"),
        ({"y_test": np.full(30, 2.0)}, ValueError, "y_test must contain only the labels 0 and 1"),
    ],
)
def test_bad_arguments(data, kwargs, error, match):
    args = dict(zip(("X_train", "y_train", "X_test", "y_test"), data))
    args.update({"s2_values": [1.0], "widths": [0.6]})
    args.update(kwargs)
    with pytest.raises(error, match=match):
        evidence_grid(**args)
