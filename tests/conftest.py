"""Small, generated data sets for the unit tests of lib (the lab data is used only where stated)."""
import numpy as np
import pytest

import lib


def make_blobs(n: int, seed: int = 0, spread: float = 1.0):
    """Two overlapping Gaussian classes in 2-D: X (n, 2), y (n,) of 0/1."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(float)
    X = rng.normal(size=(n, 2)) * spread + np.where(y[:, None] == 1, 0.8, -0.8)
    return X, y


@pytest.fixture
def small_problem():
    """RBF design (40 + bias columns) on 60 training and 30 test points."""
    X, y = make_blobs(90, seed=1)
    Xtr, ytr, Xte, yte = X[:60], y[:60], X[60:], y[60:]
    centres = Xtr[:40]
    return {
        "Phi": lib.rbf_features(Xtr, centres, 0.7),
        "y": ytr,
        "Phi_test": lib.rbf_features(Xte, centres, 0.7),
        "y_test": yte,
        "X": Xtr,
    }


def shared_once(tmp_path_factory, name: str, make):
    """``make(folder)`` run once per test session, however many pytest-xdist workers ask: the
    first runs it into a folder all workers share, the others wait on a lock and reuse what it
    made. ``make`` returns a JSON-able result, which every caller gets."""
    import fcntl
    import json
    import os

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent            # the session's folder, above each worker's own
    folder, done = base / name, base / f"{name}.json"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            folder.mkdir(exist_ok=True)
            done.write_text(json.dumps(make(folder)))
    return json.loads(done.read_text())


@pytest.fixture(scope="session")
def book_build(tmp_path_factory):
    """The book built once per test session, as `make book` builds it (strict: -W -n --keep-going),
    into a temporary folder shared by every worker (test_book.py, test_browser.py and the student
    notebooks' tests).

    Returns ``(result, html)``: the build's return code, stdout and stderr (a SimpleNamespace) and
    its ``_build/html`` folder. MathJax is installed first (scripts/install_mathjax.py; nothing to
    do when already there).
    """
    import subprocess
    import sys
    from pathlib import Path
    from types import SimpleNamespace

    root = Path(__file__).resolve().parents[1]

    def build(out):
        subprocess.run([sys.executable, str(root / "scripts" / "install_mathjax.py")], check=True)
        jb = Path(sys.executable).with_name("jupyter-book")
        run = subprocess.run(
            [str(jb), "build", str(root), "--path-output", str(out), "-W", "-n", "--keep-going"],
            capture_output=True, text=True, timeout=1200,
        )
        return {"returncode": run.returncode, "stdout": run.stdout, "stderr": run.stderr,
                "html": str(out / "_build" / "html")}

    made = shared_once(tmp_path_factory, "book", build)
    return SimpleNamespace(**made), Path(made["html"])


@pytest.fixture(scope="session")
def once(tmp_path_factory):
    """``once(name, make)``: :func:`shared_once` for this session."""
    return lambda name, make: shared_once(tmp_path_factory, name, make)


@pytest.fixture(scope="session")
def served_book(book_build):
    """The built book served over HTTP on 127.0.0.1 (a free port), in a thread:
    ``(html folder, origin)``."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    _, html = book_build
    assert (html / "index.html").is_file(), "the book did not build (see test_book.py)"
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield html, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
