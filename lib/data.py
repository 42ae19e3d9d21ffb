"""The lab data: 1000 points in 2-D with labels 0/1 (book chapter "The data").

The files are never part of the project. :func:`load_lab_data` looks for them, in order:

1. the folder named by the environment variable ``BLC_DATA_DIR`` (offline use);
2. the local cache (``BLC_CACHE_DIR``, or the user's cache folder ``blc-book``);
3. a download from the public copy (``BLC_DATA_URL`` overrides the address), into the cache.

Every file is checked against its sha256 before use.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

#: Public copy of the lab data (byte-identical to the course's hand-out).
DEFAULT_URL = "https://raw.githubusercontent.com/Sheev13/bayesian-inference/master/"

#: sha256 of each file.
REGISTRY = {
    "X.txt": "c639403b054d5cd2d863dbcff7dac934199dc13d011342cde408dc50632846c7",
    "y.txt": "13b17c99244903927a1ef57161b87a900dcbc32157b51ec49e49fd76fdab9598",
}

N_POINTS = 1000
N_TRAIN = 750

_HOW_TO_FIX = (
    "To fix: set BLC_DATA_DIR to a folder holding X.txt and y.txt "
    "(in this project's CI: BLC_DATA_DIR=../shared/data/3f8-lab), or connect to the internet "
    "so the files can be downloaded into the cache. See data/README.md."
)


class DataError(RuntimeError):
    """The lab data is missing, corrupt or of the wrong form; the message says how to fix it."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _verify(path: Path) -> Path:
    expected = REGISTRY[path.name]
    got = _sha256(path)
    if got != expected:
        raise DataError(
            f"checksum mismatch for {path}: sha256 {got}, expected {expected}. "
            f"The file is corrupt or not the lab data; delete it and retry. {_HOW_TO_FIX}"
        )
    return path


def cache_dir() -> Path:
    """Folder where downloaded files are kept (``BLC_CACHE_DIR`` or the user cache)."""
    env = os.environ.get("BLC_CACHE_DIR")
    if env:
        return Path(env)
    import pooch

    return Path(pooch.os_cache("blc-book"))


def fetch(name: str, *, data_dir=None, base_url: str | None = None) -> Path:
    """Path to a verified copy of one data file, ``"X.txt"`` or ``"y.txt"``.

    Parameters
    ----------
    name : str
        File name, a key of :data:`REGISTRY`.
    data_dir : path-like, optional
        Folder holding the file; defaults to ``BLC_DATA_DIR``. When given (or set), no
        download is tried.
    base_url : str, optional
        Address of the folder to download from; defaults to ``BLC_DATA_URL`` or
        :data:`DEFAULT_URL`.

    Raises
    ------
    DataError
        Missing file, failed download, or checksum mismatch; the message says how to fix it.
    """
    if name not in REGISTRY:
        raise ValueError(f"name must be one of {sorted(REGISTRY)}, got {name!r}")
    data_dir = data_dir if data_dir is not None else os.environ.get("BLC_DATA_DIR") or None
    if data_dir is not None:
        path = Path(data_dir) / name
        if not path.is_file():
            raise DataError(
                f"{name} not found in {Path(data_dir).resolve()} (named by BLC_DATA_DIR or data_dir). "
                "Point BLC_DATA_DIR at a folder holding X.txt and y.txt, or unset it to download them."
            )
        return _verify(path)

    import pooch
    import requests

    url = (base_url or os.environ.get("BLC_DATA_URL") or DEFAULT_URL).rstrip("/") + "/" + name
    pooch.get_logger().setLevel("WARNING")  # no "Downloading ..." chatter in notebooks
    try:
        # pooch reuses a cached file whose hash matches, and downloads (then verifies) otherwise.
        got = pooch.retrieve(
            url,
            known_hash="sha256:" + REGISTRY[name],
            fname=name,
            path=cache_dir(),
            downloader=pooch.HTTPDownloader(timeout=30, progressbar=False),
            progressbar=False,
        )
    except ValueError as err:  # pooch's hash mismatch
        raise DataError(f"download of {url} failed its checksum ({err}). {_HOW_TO_FIX}") from err
    except (requests.exceptions.RequestException, OSError) as err:
        raise DataError(f"could not download {url} ({type(err).__name__}: {err}). {_HOW_TO_FIX}") from err
    return Path(got)


def load_lab_data(*, data_dir=None, base_url: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Load the lab data set.

    Parameters
    ----------
    data_dir : path-like, optional
        Folder holding ``X.txt`` and ``y.txt`` (default: ``BLC_DATA_DIR``, then cache, then download).
    base_url : str, optional
        Download address of the folder (default: ``BLC_DATA_URL`` or :data:`DEFAULT_URL`).

    Returns
    -------
    X : ndarray, shape (1000, 2)
        Inputs.
    y : ndarray, shape (1000,)
        Labels, 0.0 or 1.0.

    Raises
    ------
    DataError
        If the files are missing, corrupt, or not of the expected shape and labels.
    """
    x_path = fetch("X.txt", data_dir=data_dir, base_url=base_url)
    y_path = fetch("y.txt", data_dir=data_dir, base_url=base_url)
    try:
        X = np.loadtxt(x_path, ndmin=2)
        y = np.loadtxt(y_path, ndmin=1)
    except ValueError as err:
        raise DataError(f"could not parse the lab data ({err}). {_HOW_TO_FIX}") from err
    check_lab_data(X, y)
    return X, y


def check_lab_data(X: np.ndarray, y: np.ndarray) -> None:
    """Raise :class:`DataError` unless ``X`` is (1000, 2) finite and ``y`` is (1000,) of 0/1."""
    if X.shape != (N_POINTS, 2):
        raise DataError(f"X.txt must hold {N_POINTS} rows of 2 numbers, got shape {X.shape}. {_HOW_TO_FIX}")
    if not np.all(np.isfinite(X)):
        raise DataError(f"X.txt holds NaN or inf values. {_HOW_TO_FIX}")
    if y.shape != (N_POINTS,):
        raise DataError(f"y.txt must hold {N_POINTS} labels, got shape {y.shape}. {_HOW_TO_FIX}")
    if not np.all(np.isin(y, (0, 1))):
        raise DataError(f"y.txt must hold only the labels 0 and 1, found {np.unique(y)[:5].tolist()}. {_HOW_TO_FIX}")


def _paired(X, y) -> tuple[np.ndarray, np.ndarray]:
    """Return ``X`` and ``y`` as arrays, checking that they have the same number of rows."""
    X, y = np.asarray(X), np.asarray(y)
    if X.ndim == 0 or y.ndim == 0 or X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y must have the same number of rows, got shapes {X.shape} and {y.shape}")
    return X, y


def report_split(X, y, n_train: int = N_TRAIN):
    """The report's split: the first ``n_train`` rows train, the rest test, in file order.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
    n_train : int

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarray
    """
    X, y = _paired(X, y)
    if not 0 < n_train < X.shape[0]:
        raise ValueError(f"n_train must be between 1 and {X.shape[0] - 1}, got {n_train}")
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def random_split(X, y, *, train_fraction: float = 0.75, seed: int = 0):
    """A seeded random split (the ML lab's 75/25 split), rows permuted by ``default_rng(seed)``.

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarray
    """
    X, y = _paired(X, y)
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must be strictly between 0 and 1, got {train_fraction}")
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    n_train = int(round(train_fraction * X.shape[0]))
    tr, te = perm[:n_train], perm[n_train:]
    return X[tr], y[tr], X[te], y[te]


def main() -> int:
    """``python -m lib``: check that the data can be loaded; exit 1 with the fix if not."""
    import sys

    try:
        X, y = load_lab_data()
    except DataError as err:
        print(f"lab data unavailable: {err}", file=sys.stderr)
        return 1
    print(f"lab data OK: X {X.shape}, y {y.shape}, {int((y == 0).sum())} zeros, {int((y == 1).sum())} ones")
    return 0


