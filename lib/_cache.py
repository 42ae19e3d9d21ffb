"""The disk cache of lib's long computations (the grids of :mod:`lib.fastgrid`, the draws of
:func:`lib.checks.sampling.sample_posterior`): a :class:`joblib.Memory` under a folder of
:func:`lib.data.cache_dir`, keyed by the arguments and by :func:`code_digest`."""
from __future__ import annotations

import functools
import hashlib
import sys
from importlib.metadata import version
from pathlib import Path

from lib.data import cache_dir


def disk_cache(folder: str):
    """``joblib.Memory`` under ``<cache_dir()>/<folder>``; ``Memory(None)`` (nothing kept) where
    the folder cannot be made."""
    from joblib import Memory     # here: ``import lib`` (and lib.hyper) loads no joblib

    try:
        return Memory(cache_dir() / folder, verbose=0)
    except OSError:
        return Memory(None, verbose=0)


@functools.cache
def code_digest(globs: tuple[str, ...], packages: tuple[str, ...]) -> str:
    """SHA-256 of the Python version (``major.minor``), of the installed versions of
    ``packages`` and of lib's sources matching ``globs`` (relative to lib's folder): part of a
    cache's key, so that a result computed by other code or another Python is never served.
    Computed once per process and arguments: the code that runs is the code loaded."""
    root = Path(__file__).parent
    digest = hashlib.sha256(" ".join(["python %d.%d" % sys.version_info[:2],
                                      *(f"{p} {version(p)}" for p in packages)]).encode())
    for path in sorted({path for pattern in globs for path in root.glob(pattern)}):
        digest.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()
