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


@pytest.fixture(scope="session")
def book_build(tmp_path_factory):
    """The book built once per test session, as `make book` builds it (strict: -W -n --keep-going),
    into a temporary folder; shared by test_book.py and test_browser.py.

    Returns ``(result, html)``: the CompletedProcess of the build and its ``_build/html`` folder.
    MathJax is installed first (scripts/install_mathjax.py; nothing to do when already there).
    """
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, str(root / "scripts" / "install_mathjax.py")], check=True)
    out = tmp_path_factory.mktemp("book")
    jb = Path(sys.executable).with_name("jupyter-book")
    result = subprocess.run(
        [str(jb), "build", str(root), "--path-output", str(out), "-W", "-n", "--keep-going"],
        capture_output=True, text=True, timeout=1200,
    )
    return result, out / "_build" / "html"
