"""A chapter a student can download and run (issue 20), and the chapters' nbval run.

The book is built and served on 127.0.0.1. The wheel of `lib` is taken from the start page's link
and installed, with its `[notebooks,sampling]` extras at the versions of requirements.lock, into a
fresh virtual environment outside the repository (once per test session, shared by the workers),
which gets a Jupyter kernel of its own. For each chapter, the notebook behind the page's ".ipynb"
download button is fetched and checked to read as the page does (no glue role or MyST markup
left, the imports in a visible first code cell) and to hold the chapter's code and stored outputs.

Then nbval executes it in that environment and compares every output with the stored one: this
is the chapters' regression test, so each chapter's code runs once in the suite. The values the
chapter glued into its prose (and the student notebook has in its text) are checked too: each of
the chapter's glue cells runs at its place, apart from the notebook's names, and prints what it
glues, which nbval compares with the values the book substituted.
"""
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import urljoin

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
from student_notebook import glued_values, is_glue_cell, without_glue_import  # noqa: E402

KERNEL = "blc-student"


def _chapters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [Path(f).name for f in files if (ROOT / f"{f}.ipynb").exists()]


# The costliest first, so that no worker is left with a long one at the end (root conftest.py).
CHAPTERS = _chapters()


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


@pytest.fixture(scope="session")
def student_env(once, served_book):
    """A virtual environment with only the book's wheel, its dependencies and a kernel:
    ``{"python": ..., "jupyter_path": ...}``."""
    _, origin = served_book

    def make(folder):
        start = f"{origin}/chapters/intro.html"
        link = re.search(r'href="([^"]+\.whl)"', _get(start).decode())
        assert link, "the start page links no wheel"
        wheel = folder / Path(link.group(1)).name
        wheel.write_bytes(_get(urljoin(start, link.group(1))))
        venv = folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        # pip from the test environment installs into the new one; no byte-compiling (saves
        # a minute on 2 cores; the kernels compile what they import)
        pip = subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
             "--no-compile", "--disable-pip-version-check", "-c", str(ROOT / "requirements.lock"),
             f"{wheel}[notebooks,sampling]"], capture_output=True, text=True)
        assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
        subprocess.run([str(python), "-m", "ipykernel", "install", "--prefix", str(venv),
                        "--name", KERNEL], check=True, capture_output=True)
        return {"python": str(python), "jupyter_path": str(venv / "share" / "jupyter")}

    return once("student-env", make)


def _download(origin: str, chapter: str):
    page_url = f"{origin}/chapters/{chapter}.html"
    page = _get(page_url).decode()
    link = re.search(r'<a href="([^"]+\.ipynb)"[^>]*?btn-download-source-button', page, re.S)
    assert link, f"{chapter}: the page has no .ipynb download button"
    return nbformat.reads(_get(urljoin(page_url, link.group(1))).decode(), as_version=4)


def test_student_notebooks_are_written_for_every_chapter(book_build):
    _, html = book_build
    assert CHAPTERS and len(CHAPTERS) >= 13
    for chapter in CHAPTERS:
        assert (html / "_sources" / "chapters" / f"{chapter}.ipynb").is_file(), chapter


# The helper the checked copy runs first: lib must come from the fresh environment, and each of
# the chapter's glue cells runs on a copy of the notebook's names (so it cannot define a name the
# student notebook lacks) and prints the values it glues.
_CHECKS = '''\
import sys as _sys
import lib as _lib
assert _lib.__file__.startswith(_sys.prefix), _lib.__file__

def _glued(source):
    values = {}
    def glue_all(v):
        assert all(isinstance(k, str) and isinstance(t, str) for k, t in v.items()), v
        values.update(v)
    exec(source, dict(get_ipython().user_ns, glue_all=glue_all))
    print("\\n".join(f"{k} = {t}" for k, t in values.items()))
'''


def _check_cell(glue_cell):
    """The chapter's glue cell as a check: its code, printing the values the book glued."""
    values = glued_values(nbformat.v4.new_notebook(cells=[glue_cell]))
    cell = nbformat.v4.new_code_cell(f"_glued({glue_cell.source!r})", execution_count=1)
    cell.outputs = [nbformat.v4.new_output(
        "stream", name="stdout", text="\n".join(f"{k} = {t}" for k, t in values.items()) + "\n")]
    cell.metadata["tags"] = [t for t in glue_cell.metadata.get("tags", []) if t.startswith("nbval")]
    return cell


def checked_copy(source, student):
    """The student notebook with the chapter's glue cells back in their places as checks.
    Asserts that the student notebook holds the chapter's code cells, in order, with their
    stored outputs (less the glue import)."""
    code = [c for c in student.cells if c.cell_type == "code"]
    before, pending, k = {}, [], 0
    for cell in (c for c in source.cells if c.cell_type == "code"):
        if is_glue_cell(cell):
            pending.append(_check_cell(cell))
            continue
        want = without_glue_import(cell.source) if k == 0 else cell.source
        assert k < len(code) and code[k].source == want, f"code cell {k} differs"
        assert code[k].outputs == cell.outputs, f"code cell {k}: outputs differ"
        before[id(code[k])], pending, k = pending, [], k + 1
    assert k == len(code), "the student notebook has code the chapter has not"
    cells = [nbformat.v4.new_code_cell(_CHECKS, execution_count=1)]
    for cell in student.cells:
        cells += before.get(id(cell), []) + [cell]
    return nbformat.v4.new_notebook(cells=cells + pending, metadata=student.metadata)


def _reads_as_the_page(chapter, student):
    markdown = "\n".join(c.source for c in student.cells if c.cell_type == "markdown")
    assert not re.search(r"\{glue|\{(eq|numref|ref|doc|cite)\}`|^(```|:::)\{", markdown, re.M)
    code = [c for c in student.cells if c.cell_type == "code"]
    assert re.search(r"^(from lib|import lib)", code[0].source, re.M), chapter
    assert "remove-cell" not in code[0].metadata.get("tags", [])
    assert not any("glue" in c.source or "myst_nb" in c.source for c in code), chapter



def _root_skip_compare():
    """The root conftest.py's SKIP_COMPARE (not importable by name: ``conftest`` is this
    folder's)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SKIP_COMPARE


# nbval in the fresh environment: what the chapters' run compares (the root conftest's list),
# on the core it is given (the kernel inherits it).
_NBVAL_CONFTEST = f'''\
import os

if os.environ.get("BLC_TEST_CORE"):
    os.sched_setaffinity(0, {{int(os.environ["BLC_TEST_CORE"])}})


def pytest_collectstart(collector):
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += {_root_skip_compare()!r}
'''


def _core():
    """The core this worker's chapter runs on (a different one per pytest-xdist worker), or
    None outside xdist. The suite runs chapters side by side, so a chapter's own worker
    processes (the grid engine's joblib pool, sized by the cores it may use) would only compete
    with the other worker's chapter. No output depends on the number of processes (lib.fastgrid).
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not (worker and hasattr(os, "sched_getaffinity")):
        return None
    cores = sorted(os.sched_getaffinity(0))
    return cores[int(worker.removeprefix("gw")) % len(cores)]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_downloaded_chapter_reads_and_runs(chapter, served_book, student_env, tmp_path):
    _, origin = served_book
    student = _download(origin, chapter)
    _reads_as_the_page(chapter, student)
    source = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    nbformat.write(checked_copy(source, student), tmp_path / f"{chapter}.ipynb")
    (tmp_path / "conftest.py").write_text(_NBVAL_CONFTEST)
    (tmp_path / "sanitize.cfg").write_bytes((ROOT / "sanitize.cfg").read_bytes())
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    # A student's Python writes bytecode: the first chapter's kernel compiles what it imports
    # into the fresh environment (installed with --no-compile), the others load it. Where
    # PYTHONDONTWRITEBYTECODE is set (some containers set it), every kernel would compile
    # numpy, scipy, pandas, matplotlib ... again: about 3.5 s per chapter.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["JUPYTER_PATH"] = student_env["jupyter_path"]
    for name in ("BLC_DATA_DIR", "BLC_CACHE_DIR"):   # the kernel runs in tmp_path: a folder
        if env.get(name):                            # given relative to here, made absolute
            env[name] = os.path.abspath(env[name])
    if _core() is not None:
        env["BLC_TEST_CORE"] = str(_core())
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "--nbval", "--nbval-kernel-name", KERNEL, "--nbval-sanitize-with", "sanitize.cfg",
         "--nbval-cell-timeout", "1200", f"{chapter}.ipynb"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    # the first failure (later cells often fail only because of it), then the summary
    assert run.returncode == 0, (run.stdout[:6000] + "\n...\n" + run.stdout[-1500:]
                                 + run.stderr[-3000:])
