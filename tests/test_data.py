"""The lab-data loader: local folder, cache, and the download path against a local HTTP server."""
import hashlib
import http.server
import os
import shutil
import socket
import threading
from pathlib import Path

import numpy as np
import pytest

import lib
from lib import data as data_mod
from lib.data import DataError


@pytest.fixture(scope="module")
def lab_dir():
    """The offline copy named by BLC_DATA_DIR (make test checks it exists before running pytest)."""
    d = os.environ.get("BLC_DATA_DIR")
    if not d:
        pytest.fail("BLC_DATA_DIR is not set: run `make test`, which checks the data first (see data/README.md)")
    return Path(d)


@pytest.fixture
def no_env(monkeypatch, tmp_path):
    monkeypatch.delenv("BLC_DATA_DIR", raising=False)
    monkeypatch.delenv("BLC_DATA_URL", raising=False)
    monkeypatch.setenv("BLC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


class _Server:
    def __init__(self, root: Path):
        handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(root), **k)
        http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_load_from_blc_data_dir(lab_dir, monkeypatch):
    monkeypatch.setenv("BLC_DATA_DIR", str(lab_dir))
    X, y = lib.load_lab_data()
    assert X.shape == (1000, 2) and y.shape == (1000,)
    assert int((y == 0).sum()) == 506 and int((y == 1).sum()) == 494
    Xtr, ytr, Xte, yte = lib.report_split(X, y)
    assert Xtr.shape == (750, 2) and Xte.shape == (250, 2)
    np.testing.assert_array_equal(Xte, X[750:])


def test_download_good_file_then_cache(lab_dir, no_env):
    served = no_env / "served"
    served.mkdir()
    for name in ("X.txt", "y.txt"):
        shutil.copy(lab_dir / name, served / name)
    with _Server(served) as srv:
        X, y = lib.load_lab_data(base_url=srv.url)
    assert X.shape == (1000, 2)
    cached = Path(os.environ["BLC_CACHE_DIR"])
    assert sorted(p.name for p in cached.iterdir()) == ["X.txt", "y.txt"]
    # The server is gone now: the verified cache serves the second load.
    X2, y2 = lib.load_lab_data(base_url=f"http://127.0.0.1:{_free_port()}/")
    np.testing.assert_array_equal(X, X2)


def test_download_corrupt_file(lab_dir, no_env):
    served = no_env / "served"
    served.mkdir()
    shutil.copy(lab_dir / "y.txt", served / "y.txt")
    text = (lab_dir / "X.txt").read_text().replace("1", "2", 1)
    (served / "X.txt").write_text(text)
    with _Server(served) as srv, pytest.raises(DataError, match="checksum") as err:
        lib.load_lab_data(base_url=srv.url)
    assert "BLC_DATA_DIR" in str(err.value)


def test_server_down(no_env):
    with pytest.raises(DataError, match="could not download") as err:
        lib.load_lab_data(base_url=f"http://127.0.0.1:{_free_port()}/")
    assert "BLC_DATA_DIR" in str(err.value)


def test_missing_file_in_data_dir(no_env):
    empty = no_env / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="X.txt not found") as err:
        lib.load_lab_data(data_dir=empty)
    assert "BLC_DATA_DIR" in str(err.value)


def test_corrupt_file_in_data_dir(lab_dir, no_env):
    d = no_env / "bad"
    d.mkdir()
    shutil.copy(lab_dir / "X.txt", d / "X.txt")
    (d / "y.txt").write_text((lab_dir / "y.txt").read_text()[:-4])
    with pytest.raises(DataError, match="checksum mismatch for .*y.txt"):
        lib.load_lab_data(data_dir=d)


def _register(monkeypatch, folder: Path):
    """Make the registry accept the (malformed) files written to ``folder``."""
    reg = {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in ("X.txt", "y.txt")}
    monkeypatch.setattr(data_mod, "REGISTRY", reg)


@pytest.mark.parametrize(
    "x_rows, y_rows, match",
    [
        (["1 2"] * 999, ["0"] * 999, r"1000 rows of 2 numbers, got shape \(999, 2\)"),
        (["1 2 3"] * 1000, ["0"] * 1000, r"got shape \(1000, 3\)"),
        (["1 2"] * 1000, ["0"] * 999 + ["2"], r"only the labels 0 and 1, found \[0.0, 2.0\]"),
        (["1 2"] * 1000, ["0"] * 998, r"1000 labels, got shape \(998,\)"),
        (["1 nan"] + ["1 2"] * 999, ["0"] * 1000, "NaN or inf"),
        (["1 a"] + ["1 2"] * 999, ["0"] * 1000, "could not parse"),
    ],
)
def test_wrong_shape_or_labels(monkeypatch, no_env, x_rows, y_rows, match):
    d = no_env / "malformed"
    d.mkdir()
    (d / "X.txt").write_text("\n".join(x_rows) + "\n")
    (d / "y.txt").write_text("\n".join(y_rows) + "\n")
    _register(monkeypatch, d)
    with pytest.raises(DataError, match=match) as err:
        lib.load_lab_data(data_dir=d)
    assert "BLC_DATA_DIR" in str(err.value)


def test_split_errors():
    X, y = np.zeros((10, 2)), np.zeros(10)
    with pytest.raises(ValueError, match="n_train must be between 1 and 9"):
        lib.report_split(X, y, n_train=10)
    with pytest.raises(ValueError, match="same number of rows"):
        lib.report_split(X, y[:5])
    with pytest.raises(ValueError, match="train_fraction must be strictly between"):
        lib.random_split(X, y, train_fraction=1.0)


def test_random_split_is_seeded_permutation():
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10) % 2
    a = lib.random_split(X, y, seed=3)
    b = lib.random_split(X, y, seed=3)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert a[0].shape == (8, 2) and a[2].shape == (2, 2)
    np.testing.assert_array_equal(np.sort(np.concatenate([a[0][:, 0], a[2][:, 0]])), X[:, 0])


def test_fetch_rejects_unknown_name():
    with pytest.raises(ValueError, match="name must be one of"):
        data_mod.fetch("Z.txt")


def test_check_command_says_how_to_fix(no_env):
    import subprocess
    import sys

    env = dict(os.environ, BLC_DATA_URL=f"http://127.0.0.1:{_free_port()}/")
    r = subprocess.run([sys.executable, "-m", "lib"], capture_output=True, text=True, env=env)
    assert r.returncode == 1
    assert "lab data unavailable" in r.stderr and "set BLC_DATA_DIR" in r.stderr


def test_check_command_ok(lab_dir):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "lib"], capture_output=True, text=True,
                       env=dict(os.environ, BLC_DATA_DIR=str(lab_dir)))
    assert r.returncode == 0, r.stderr
    assert "506 zeros, 494 ones" in r.stdout
