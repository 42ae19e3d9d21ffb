"""The same printed digits on another Python (issue 37): three downloaded chapters run under nbval
in a fresh virtual environment of another CPython than the suite's.

The wheel the book serves is installed with its ``[notebooks,sampling]`` extras at the versions of
requirements.lock (the one lock serves every Python from 3.11 to 3.13) into a virtual environment
of Python 3.13 (once per test session, shared by the pytest-xdist workers, pip's cache reused); a
suite itself run on 3.13 (``make test PYTHON=python3.13``) checks 3.11 instead, the other end of
the supported range. Then the student notebooks of one core chapter, the ground-truth chapter
(JAX and NumPyro on that Python) and one chapter of the reference part run there exactly as
tests/test_student_notebooks.py runs every chapter in the suite's own Python: every stored output
must come out the same, to the digit, and so must every value glued into the text.

``BLC_OTHER_PYTHONS`` (e.g. ``3.12,3.13``) names other versions to check. A version not installed
(neither ``python3.X`` on the PATH nor pyenv's ``$(pyenv root)/versions/3.X.*``) skips, saying so;
with ``CI`` set it fails instead.
"""
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_student_notebooks import (CHAPTERS, downloaded_and_checked, make_student_env,
                                    run_nbval)

# One core chapter, the ground-truth chapter, one reference chapter.
CHECKED = ("data", "ground_truth", "report_base_case")


def _versions():
    if os.environ.get("BLC_OTHER_PYTHONS"):
        return [v.strip() for v in os.environ["BLC_OTHER_PYTHONS"].split(",") if v.strip()]
    return ["3.11" if sys.version_info[:2] == (3, 13) else "3.13"]


def find_python(version: str):
    """A CPython ``version`` ("3.13") that runs: ``python3.13`` on the PATH (a pyenv shim runs
    only when that version is selected), else pyenv's installs, newest patch first; or None."""
    pyenv_root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip() \
        if shutil.which("pyenv") else os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which(f"python{version}")] + sorted(
        glob.glob(f"{pyenv_root}/versions/{version}.*/bin/python{version}"),
        key=lambda p: [int(x) for x in Path(p).parts[-3].split(".")[:3] if x.isdigit()],
        reverse=True)
    for path in filter(None, candidates):
        got = subprocess.run([path, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True)
        if got.returncode == 0 and got.stdout.strip() == version:
            return path
    return None


@pytest.fixture(scope="session")
def other_envs(once, served_book):
    """``version -> environment`` (:func:`make_student_env`) for each other Python found, or
    ``version -> None`` where it is not installed."""
    _, origin = served_book
    envs = {}
    for version in _versions():
        python = find_python(version)
        envs[version] = None if python is None else once(
            f"student-env-{version}",
            lambda folder, python=python, version=version:
                make_student_env(folder, origin, python, f"blc-student-{version}"))
    return envs


@pytest.mark.parametrize("version", _versions())
@pytest.mark.parametrize("chapter", [c for c in CHECKED if c in CHAPTERS])
def test_chapter_prints_the_same_digits_on_another_python(chapter, version, served_book,
                                                          other_envs, tmp_path):
    env = other_envs[version]
    if env is None:
        message = (f"Python {version} is not installed (no python{version} on the PATH nor in "
                   f"pyenv's versions): the chapters are not checked on it")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    got = subprocess.run([env["python"], "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert got == version
    _, origin = served_book
    run_nbval(downloaded_and_checked(origin, chapter), chapter, tmp_path, env)


def test_three_chapters_are_checked():
    """The chapters named above exist (they are the book's; a renamed one must be replaced)."""
    assert [c for c in CHECKED if c in CHAPTERS] == list(CHECKED)
