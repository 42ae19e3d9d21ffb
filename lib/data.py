"""The lab data: 1000 points in 2-D with labels 0/1 (book chapter "The data").

The files are never part of the project. :func:`load_lab_data` looks for them, in order:

1. the folder named by the environment variable ``BLC_DATA_DIR`` (offline use; nothing is
   downloaded when it is set);
2. the local cache (``BLC_CACHE_DIR``, or the user's cache folder ``blc-book``);
3. a download, trying the public copies in :data:`MIRRORS` in order until one serves a file with
   the right checksum; the file is then kept in the cache. ``BLC_DATA_URL`` (one address, or
   several separated by spaces) replaces that list: only the addresses it names are tried.

Every file is checked against its sha256 (:data:`REGISTRY`) before use. The check is made on the
file's canonical form, with ``\\n`` line endings and exactly one newline at the end, so a copy
that differs from the hand-out only in line endings or trailing newlines is accepted (and stored
in the cache in the canonical form); any other difference is rejected.
:func:`source_of` tells where each file came from.
"""
from __future__ import annotations

import hashlib
import io
import logging
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from lib._validate import as_labels, as_matrix, fraction, split_size
from lib._validate import seed as check_seed

log = logging.getLogger(__name__)


class Mirror(NamedTuple):
    """A public copy of the two data files: a folder address, and the files' names there."""

    label: str
    base_url: str
    renames: tuple[tuple[str, str], ...] = ()  #: (our name, the mirror's name) where they differ

    def url(self, name: str) -> str:
        """Address of the file ``name`` (``"X.txt"`` or ``"y.txt"``) at this mirror."""
        return self.base_url.rstrip("/") + "/" + dict(self.renames).get(name, name)


_SHEEV13 = "79a341e5abd2b22bbccd18eb5a3a50c37dd3f01a"  # the commit that holds X.txt and y.txt
_HARVEY = "e66a5b712431fead70a7f09fa076750f55c46fba"

#: Public copies of the lab data, tried in this order (see data/README.md). Each was compared
#: with the hand-out before it was listed; every download is checked against :data:`REGISTRY`.
MIRRORS: tuple[Mirror, ...] = (
    Mirror("Sheev13/bayesian-inference, branch master",
           "https://raw.githubusercontent.com/Sheev13/bayesian-inference/master/"),
    Mirror(f"Sheev13/bayesian-inference, commit {_SHEEV13[:7]}",
           f"https://raw.githubusercontent.com/Sheev13/bayesian-inference/{_SHEEV13}/"),
    Mirror(f"HarveyHughes/3f8_Coursework, commit {_HARVEY[:7]}",
           f"https://raw.githubusercontent.com/HarveyHughes/3f8_Coursework/{_HARVEY}/code/",
           renames=(("y.txt", "Y.txt"),)),
    Mirror(f"jsDelivr CDN, Sheev13/bayesian-inference@{_SHEEV13[:7]}",
           f"https://cdn.jsdelivr.net/gh/Sheev13/bayesian-inference@{_SHEEV13}/"),
)

#: sha256 of each file (of its canonical form, which is the hand-out's own form).
REGISTRY = {
    "X.txt": "c639403b054d5cd2d863dbcff7dac934199dc13d011342cde408dc50632846c7",
    "y.txt": "13b17c99244903927a1ef57161b87a900dcbc32157b51ec49e49fd76fdab9598",
}

#: Size in bytes of each file's canonical form (to tell a truncated copy from a corrupt one).
SIZES = {"X.txt": 36132, "y.txt": 2000}

N_POINTS = 1000
N_TRAIN = 750

#: Seconds to wait for a server: (to connect, between bytes received).
TIMEOUT = (10, 30)
_MAX_BYTES = 1 << 20  # the files are 36 kB and 2 kB; a mirror sending more is not serving them


class DataError(RuntimeError):
    """The lab data is missing, corrupt or of the wrong form; the message says how to fix it."""


class DataSource(NamedTuple):
    """Where one data file was found: see :func:`source_of`."""

    name: str
    path: Path
    origin: str  #: "BLC_DATA_DIR", "data_dir" (argument), "cache" or "download"
    mirror: str | None = None  #: label of the mirror that served a download
    url: str | None = None  #: address it was downloaded from

    def describe(self) -> str:
        if self.origin == "download":
            return f"{self.name}: downloaded from {self.mirror} ({self.url}) into {self.path}"
        where = {"BLC_DATA_DIR": "the folder named by BLC_DATA_DIR", "data_dir": "the folder given",
                 "cache": "the cache"}[self.origin]
        return f"{self.name}: from {where} ({self.path})"


_SOURCES: dict[str, DataSource] = {}


def source_of(name: str) -> DataSource | None:
    """Where the last :func:`fetch` of ``name`` in this session found the file (None before any)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a file name (a str), got {type(name).__name__}")
    return _SOURCES.get(name)


def _check_data_dir(data_dir) -> None:
    if data_dir is not None and not isinstance(data_dir, (str, os.PathLike)):
        raise TypeError(f"data_dir must be a folder (a str or a path), got {type(data_dir).__name__}")


def _record(source: DataSource) -> Path:
    _SOURCES[source.name] = source
    return source.path


def canonical(data: bytes) -> bytes:
    """The file's canonical form: ``\\n`` line endings and exactly one newline at the end."""
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"data must be bytes (a file's contents), got {type(data).__name__}")
    return bytes(data).replace(b"\r\n", b"\n").rstrip(b"\n") + b"\n"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(canonical(data)).hexdigest()


def _how_to_fix() -> str:
    try:
        cache = str(cache_dir())
    except Exception:  # the advice must not fail
        cache = "the cache folder"
    return (
        "To fix: set BLC_DATA_DIR to a folder holding X.txt and y.txt (copies of the lab files you "
        "already have), or make sure this computer can reach one of the download addresses "
        "(network connection; proxy settings such as HTTPS_PROXY). Downloads are kept in "
        f"{cache} (set BLC_CACHE_DIR to choose another, writable, folder). See data/README.md."
    )


#: How to fix a bad local copy, by where it came from (:attr:`DataSource.origin`).
_FIXES = {
    "BLC_DATA_DIR": "replace it with a good copy of the lab file (or unset BLC_DATA_DIR to "
                    "download the files instead)",
    "data_dir": "replace it with a good copy of the lab file",
    "cache": "delete it; it will be downloaded again",
}


def _read(path: Path, origin: str) -> bytes:
    """The bytes of a local copy, or a DataError saying how to fix an unreadable one."""
    try:
        return path.read_bytes()
    except OSError as err:
        raise DataError(f"cannot read {path} ({err.strerror or err}). Make it readable "
                        f"(chmod u+r), or {_FIXES[origin]}.") from err


def _problem_with(path: Path, data: bytes) -> str | None:
    """None if ``data`` is the lab file ``path.name``, else what is wrong with it."""
    got = _sha256(data)
    if got == REGISTRY[path.name]:
        return None
    size, full = len(canonical(data)), SIZES[path.name]
    if size < full:
        return f"{path} is truncated ({size} of {full} bytes)"
    return (f"checksum mismatch for {path}: sha256 {got}, expected {REGISTRY[path.name]}; the "
            "file is corrupt or not the lab data")


def _verify(path: Path, origin: str) -> Path:
    problem = _problem_with(path, _read(path, origin))
    if problem:
        raise DataError(f"{problem}. To fix: {_FIXES[origin]}.")
    return path


def cache_dir() -> Path:
    """Folder where downloaded files are kept (``BLC_CACHE_DIR`` or the user cache)."""
    env = os.environ.get("BLC_CACHE_DIR")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir   # the folder pooch.os_cache would give

    return Path(user_cache_dir("blc-book"))


def mirrors(base_url=None) -> tuple[Mirror, ...]:
    """The mirrors a download tries, in order: ``base_url`` (an address or a sequence of them),
    else the addresses in ``BLC_DATA_URL`` (separated by spaces), else :data:`MIRRORS`."""
    urls = base_url if base_url is not None else os.environ.get("BLC_DATA_URL", "").split() or None
    if urls is None:
        return MIRRORS
    if isinstance(urls, str):
        urls = [urls]
    try:
        urls = list(urls)
    except TypeError:
        urls = None
    if not urls or not all(isinstance(u, str) for u in urls):
        raise TypeError(f"base_url must be an address (a str) or a sequence of them, got {base_url!r}")
    origin = "base_url" if base_url is not None else "BLC_DATA_URL"
    return tuple(Mirror(f"{origin} address", u) for u in urls)


class _Capped(io.BytesIO):
    def write(self, chunk) -> int:
        if self.tell() + len(chunk) > _MAX_BYTES:
            raise OSError(f"more than {_MAX_BYTES} bytes: not the lab data")
        return super().write(chunk)


def _download(url: str) -> bytes:
    """The bytes at ``url`` (pooch's HTTP downloader; requests' errors pass through)."""
    import pooch

    buffer = _Capped()
    pooch.HTTPDownloader(timeout=TIMEOUT, progressbar=False)(url, buffer, None)
    return buffer.getvalue()


def _why(err: Exception) -> str:
    """A one-line reason for a failed download."""
    import requests

    text = " ".join(str(err).split())
    if isinstance(err, requests.HTTPError) and err.response is not None:
        return f"HTTP {err.response.status_code} {err.response.reason}".strip()
    if isinstance(err, requests.exceptions.ProxyError):
        return "could not connect through the proxy"
    if isinstance(err, requests.Timeout):
        return "no answer in time"
    if isinstance(err, requests.ConnectionError):
        if "NameResolution" in text or "not known" in text or "getaddrinfo" in text:
            return "host name not found (no network, or no DNS)"
        if "Connection refused" in text:
            return "connection refused"
        return "could not connect" + (f" ({text[:160]})" if text else "")
    return f"{type(err).__name__}: {text[:160]}"


def _store(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file, then a rename)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as err:
        raise DataError(
            f"could not write {path} ({err}). Set BLC_CACHE_DIR to a writable folder, or set "
            "BLC_DATA_DIR to a folder holding X.txt and y.txt."
        ) from err


def fetch(name: str, *, data_dir=None, base_url=None) -> Path:
    """Path to a verified copy of one data file, ``"X.txt"`` or ``"y.txt"``.

    Parameters
    ----------
    name : str
        File name, a key of :data:`REGISTRY`.
    data_dir : path-like, optional
        Folder holding the file; defaults to ``BLC_DATA_DIR``. When given (or set), no
        download is tried.
    base_url : str or sequence of str, optional
        Folder address(es) to download from, instead of ``BLC_DATA_URL`` or :data:`MIRRORS`.

    Raises
    ------
    DataError
        Missing file, checksum mismatch, or every download failed; the message lists each
        address tried, why it failed, and how to fix it.
    """
    if not isinstance(name, str) or name not in REGISTRY:
        raise ValueError(f"name must be one of {sorted(REGISTRY)}, got {name!r}")
    _check_data_dir(data_dir)
    mirrors(base_url)                              # checks base_url, whether or not it is used
    origin = "data_dir" if data_dir is not None else "BLC_DATA_DIR"
    data_dir = data_dir if data_dir is not None else os.environ.get("BLC_DATA_DIR") or None
    if data_dir is not None:
        path = Path(data_dir) / name
        if not path.is_file():
            raise DataError(
                f"{name} not found in {Path(data_dir).resolve()} (named by BLC_DATA_DIR or data_dir). "
                "Point BLC_DATA_DIR at a folder holding X.txt and y.txt, or unset it to download them."
            )
        return _record(DataSource(name, _verify(path, origin), origin))

    expected = REGISTRY[name]
    cached = cache_dir() / name
    bad_cache = None      # what is wrong with the cached copy, if there is one
    if cached.is_file():
        try:
            bad_cache = _problem_with(cached, _read(cached, "cache"))
        except DataError as err:
            bad_cache = str(err)
        if bad_cache is None:
            return _record(DataSource(name, cached, "cache"))
        log.warning("%s; downloading it again", bad_cache)

    import requests

    failures = []
    for mirror in mirrors(base_url):
        url = mirror.url(name)
        try:
            data = canonical(_download(url))
        except (requests.exceptions.RequestException, OSError) as err:
            failures.append(f"{mirror.label} <{url}>: {_why(err)}")
            continue
        got = hashlib.sha256(data).hexdigest()
        if got != expected:
            short = (f"a truncated file ({len(data)} of {SIZES[name]} bytes)"
                     if len(data) < SIZES[name] else "a file that failed its checksum")
            failures.append(f"{mirror.label} <{url}>: served {short} "
                            f"(sha256 {got[:16]}..., expected {expected[:16]}...)")
            continue
        _store(cached, data)
        if failures:
            log.warning("%s: %d address(es) failed before %s served it: %s",
                        name, len(failures), mirror.label, "; ".join(failures))
        log.info("%s downloaded from %s (%s)", name, mirror.label, url)
        return _record(DataSource(name, cached, "download", mirror.label, url))
    tried = "\n".join(f"  {i}. {line}" for i, line in enumerate(failures, 1))
    cache_note = f"The cached copy is no good: {bad_cache} (delete it).\n" if bad_cache else ""
    raise DataError(
        f"could not download {name}: every address failed.\n{tried}\n{cache_note}{_how_to_fix()}"
    )


def load_lab_data(*, data_dir=None, base_url: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Load the lab data set.

    Parameters
    ----------
    data_dir : path-like, optional
        Folder holding ``X.txt`` and ``y.txt`` (default: ``BLC_DATA_DIR``, then cache, then download).
    base_url : str or sequence of str, optional
        Download address(es) of the folder (default: ``BLC_DATA_URL``, else :data:`MIRRORS`).

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
        raise DataError(f"could not parse the lab data ({err}). {_how_to_fix()}") from err
    check_lab_data(X, y)
    return X, y


def check_lab_data(X: np.ndarray, y: np.ndarray) -> None:
    """Raise :class:`DataError` unless ``X`` is (1000, 2) finite and ``y`` is (1000,) of 0/1."""
    X, y = np.asarray(X), np.asarray(y)
    if X.shape != (N_POINTS, 2):
        raise DataError(f"X.txt must hold {N_POINTS} rows of 2 numbers, got shape {X.shape}. {_how_to_fix()}")
    if X.dtype.kind not in "fiu" or not np.all(np.isfinite(X)):
        raise DataError(f"X.txt holds NaN or inf values. {_how_to_fix()}")
    if y.shape != (N_POINTS,):
        raise DataError(f"y.txt must hold {N_POINTS} labels, got shape {y.shape}. {_how_to_fix()}")
    if y.dtype.kind not in "fiub" or not np.all(np.isin(y, (0, 1))):
        raise DataError(f"y.txt must hold only the labels 0 and 1, found {np.unique(y)[:5].tolist()}. {_how_to_fix()}")


def _paired(X, y) -> tuple[np.ndarray, np.ndarray]:
    """Return ``X`` (N, D) and ``y`` (N,) of 0/1 as arrays (unchanged), or raise naming them."""
    n = as_matrix(X, "X").shape[0]
    as_labels(y, "y", length=n)
    return np.asarray(X), np.asarray(y)


def first_rows_split(X, y, n_train: int = N_TRAIN):
    """The course's split: the first ``n_train`` rows train, the rest test, in file order.

    The file is not sorted by class, so both parts keep its balance. The report says only that
    it disabled shuffling; that it used this split is our inference, which the reproduction of
    its Bayesian tables supports (chapter "The base case, reproduced").

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
    n_train = split_size(n_train, X.shape[0], "n_train")
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def random_split(X, y, *, train_fraction: float = 0.75, seed: int = 0):
    """A seeded random split (the ML lab's 75/25 split), rows permuted by ``default_rng(seed)``.

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarray
    """
    X, y = _paired(X, y)
    train_fraction = fraction(train_fraction, "train_fraction", open_interval=True)
    n_train = int(round(train_fraction * X.shape[0]))
    if not 0 < n_train < X.shape[0]:
        raise ValueError(f"train_fraction must leave both sets non-empty: {train_fraction!r} of "
                         f"{X.shape[0]} rows gives {n_train} training rows")
    perm = np.random.default_rng(check_seed(seed)).permutation(X.shape[0])
    tr, te = perm[:n_train], perm[n_train:]
    return X[tr], y[tr], X[te], y[te]


def main() -> int:
    """``python -m lib``: check that the data can be loaded; exit 1 with the fix if not."""
    import sys

    try:
        X, y = load_lab_data()
    except (DataError, OSError) as err:   # OSError: e.g. an unreadable BLC_DATA_DIR folder
        print(f"lab data unavailable: {err}", file=sys.stderr)
        return 1
    print(f"lab data OK: X {X.shape}, y {y.shape}, {int((y == 0).sum())} zeros, {int((y == 1).sum())} ones")
    for name in REGISTRY:
        print(f"  {source_of(name).describe()}")
    return 0


