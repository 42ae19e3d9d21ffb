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

Each chapter with exercises also offers an exercise notebook (".ipynb (exercises)"): the tests
check that it holds every exercise, each followed by an empty cell to answer in, and no solution,
and that everything before its exercises is the student notebook's, which nbval runs here; the
data chapter's exercise notebook runs under nbval too, whole. tests/test_other_pythons.py runs
three chapters the same way on another Python (3.13).
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
from student_notebook import (count_exercises, glued_values, is_glue_cell,  # noqa: E402
                              without_glue_import)

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


def wheel_url(origin: str) -> str:
    """The wheel the start page links."""
    start = f"{origin}/chapters/intro.html"
    link = re.search(r'href="([^"]+\.whl)"', _get(start).decode())
    assert link, "the start page links no wheel"
    return urljoin(start, link.group(1))


def make_student_env(folder: Path, origin: str, base_python: str, kernel: str) -> dict:
    """A fresh virtual environment of ``base_python`` in ``folder`` holding only the book's wheel
    (taken from the served start page), its ``[notebooks,sampling]`` extras at the versions of
    requirements.lock, and a Jupyter kernel named ``kernel``."""
    url = wheel_url(origin)
    wheel = folder / Path(url).name
    wheel.write_bytes(_get(url))
    venv = folder / "venv"
    subprocess.run([base_python, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # pip from the test environment installs into the new one; no byte-compiling (saves
    # a minute on 2 cores; the kernels compile what they import)
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-compile", "--disable-pip-version-check", "-c", str(ROOT / "requirements.lock"),
         f"{wheel}[notebooks,sampling]"], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    subprocess.run([str(python), "-m", "ipykernel", "install", "--prefix", str(venv),
                    "--name", kernel], check=True, capture_output=True)
    return {"python": str(python), "jupyter_path": str(venv / "share" / "jupyter"),
            "kernel": kernel}


@pytest.fixture(scope="session")
def student_env(once, served_book):
    """A virtual environment with only the book's wheel, its dependencies and a kernel:
    ``{"python": ..., "jupyter_path": ..., "kernel": ...}``."""
    _, origin = served_book
    return once("student-env", lambda folder: make_student_env(folder, origin, sys.executable, KERNEL))


def download(origin: str, chapter: str, button: str = "download-source-button"):
    """The notebook behind the chapter page's download menu item ``button`` (the student
    notebook; "download-exercises-button": the exercise notebook)."""
    page_url = f"{origin}/chapters/{chapter}.html"
    page = _get(page_url).decode()
    link = re.search(r'<a href="([^"]+\.ipynb)"[^>]*?btn-' + button + r'\b', page, re.S)
    assert link, f"{chapter}: the page has no .ipynb download button ({button})"
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


def run_nbval(notebook, name: str, folder: Path, env_info: dict) -> None:
    """nbval over ``notebook`` (written to ``folder/name.ipynb``) in the kernel of ``env_info``
    (:func:`make_student_env`), comparing every output with the stored one; asserts it passes."""
    nbformat.write(notebook, folder / f"{name}.ipynb")
    (folder / "conftest.py").write_text(_NBVAL_CONFTEST)
    (folder / "sanitize.cfg").write_bytes((ROOT / "sanitize.cfg").read_bytes())
    (folder / "pytest.ini").write_text("[pytest]\n")
    # A student's Python writes bytecode: the first chapter's kernel compiles what it imports
    # into the fresh environment (installed with --no-compile), the others load it. Where
    # PYTHONDONTWRITEBYTECODE is set (some containers set it), every kernel would compile
    # numpy, scipy, pandas, matplotlib ... again: about 3.5 s per chapter.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["JUPYTER_PATH"] = env_info["jupyter_path"]
    for key in ("BLC_DATA_DIR", "BLC_CACHE_DIR"):   # the kernel runs in folder: a folder
        if env.get(key):                            # given relative to here, made absolute
            env[key] = os.path.abspath(env[key])
    if _core() is not None:
        env["BLC_TEST_CORE"] = str(_core())
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "--nbval", "--nbval-kernel-name", env_info["kernel"], "--nbval-sanitize-with",
         "sanitize.cfg", "--nbval-cell-timeout", "1200", f"{name}.ipynb"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=1800)
    # the first failure (later cells often fail only because of it), then the summary
    assert run.returncode == 0, (run.stdout[:6000] + "\n...\n" + run.stdout[-1500:]
                                 + run.stderr[-3000:])


def downloaded_and_checked(origin: str, chapter: str):
    """The chapter's student notebook as downloaded, checked to read as the page, with the
    chapter's glue cells back in place as checks (:func:`checked_copy`)."""
    student = download(origin, chapter)
    _reads_as_the_page(chapter, student)
    source = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    return checked_copy(source, student)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_downloaded_chapter_reads_and_runs(chapter, served_book, student_env, tmp_path):
    _, origin = served_book
    run_nbval(downloaded_and_checked(origin, chapter), chapter, tmp_path, student_env)


# --- the exercise notebooks ----------------------------------------------------------------------

EXERCISE_HEADING = re.compile(r"^#### (Exercise \S+)", re.M)
SOLUTION_HEADING = re.compile(r"^#### Solution to (Exercise \S+)", re.M)
WITH_EXERCISES = [c for c in CHAPTERS
                  if count_exercises(nbformat.read(ROOT / "chapters" / f"{c}.ipynb", as_version=4))]


def _first_exercise(nb):
    """(index of the cell where the first exercise heading stands, the text before it there)."""
    for i, cell in enumerate(nb.cells):
        match = cell.cell_type == "markdown" and EXERCISE_HEADING.search(cell.source)
        if match:
            return i, cell.source[:match.start()]
    raise AssertionError("no exercise heading")


def _solutions(student):
    """The student notebook's solutions, read off its headings: ``(code cells' sources, lines
    of the solutions' text found nowhere else in the notebook)``. A solution runs from its
    "#### Solution to" heading to the next exercise heading, a "## " heading or the end."""
    code, inside_lines, outside, inside = [], [], [], False
    for cell in student.cells:
        if cell.cell_type == "code":
            if inside and cell.source.strip():
                code.append(cell.source)
            continue
        for block in re.split(r"(?m)^(?=#{2,4} )", cell.source):
            if SOLUTION_HEADING.match(block):
                inside = True
                block = block.split("\n", 1)[1] if "\n" in block else ""
            elif re.match(r"#### Exercise |## ", block):
                inside = False
            (inside_lines if inside else outside).extend(
                line for line in block.splitlines() if len(line.strip()) > 3)
    elsewhere = "\n".join(outside)
    return code, [line for line in inside_lines if line not in elsewhere]


@pytest.mark.parametrize("chapter", WITH_EXERCISES)
def test_exercise_notebook_holds_the_exercises_and_no_solution(chapter, served_book):
    """The exercise notebook: every exercise of the chapter (as the student notebook numbers
    them), an empty code cell after each, no solution (no solution heading, none of the solutions'
    code or text), and before the exercises exactly the student notebook (which
    test_downloaded_chapter_reads_and_runs runs), but for the note on top saying what it is."""
    _, origin = served_book
    student = download(origin, chapter)
    exercises = download(origin, chapter, "download-exercises-button")
    source = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    text = "\n".join(c.source for c in exercises.cells if c.cell_type == "markdown")
    student_text = "\n".join(c.source for c in student.cells if c.cell_type == "markdown")

    names = EXERCISE_HEADING.findall(text)
    assert names == EXERCISE_HEADING.findall(student_text), names
    assert len(names) == count_exercises(source) > 0, names
    assert not SOLUTION_HEADING.search(text)
    assert SOLUTION_HEADING.findall(student_text) == names   # the student notebook keeps them
    code, texts = _solutions(student)
    assert code, "no solution code found in the student notebook"
    kept = [c.source for c in exercises.cells if c.cell_type == "code"]
    assert not [c for c in code if c in kept], "solution code in the exercise notebook"
    assert texts, "no solution text found in the student notebook"
    assert not [t for t in texts if t in text], "solution text in the exercise notebook"

    # each exercise: its heading, then (before the next heading) an empty cell to answer in
    headings = [i for i, c in enumerate(exercises.cells)
                if c.cell_type == "markdown" and EXERCISE_HEADING.search(c.source)]
    assert all(len(EXERCISE_HEADING.findall(exercises.cells[i].source)) == 1 for i in headings)
    for i, end in zip(headings, headings[1:] + [len(exercises.cells)]):
        answers = [c for c in exercises.cells[i + 1:end] if c.cell_type == "code"]
        assert answers and answers[0].source == "" and not answers[0].outputs, (chapter, i)

    # before the exercises: the student notebook's cells, the note on top aside
    k, head = _first_exercise(exercises)
    k_student, head_student = _first_exercise(student)
    assert (k, head) == (k_student, head_student)
    notes = [i for i, c in enumerate(student.cells[:k]) if "**Running this notebook**" in c.source]
    assert len(notes) == 1
    assert "**The exercise notebook.**" in exercises.cells[notes[0]].source
    assert student.cells[notes[0]].source in exercises.cells[notes[0]].source
    for i in range(k):
        if i != notes[0]:
            a, b = exercises.cells[i], student.cells[i]
            assert (a.cell_type, a.source, a.get("outputs")) == (b.cell_type, b.source, b.get("outputs")), i


# One exercise notebook runs whole under nbval (the cells before the exercises, the answer
# cells, anything kept between them); the others' cells before the exercises are the student
# notebooks', which run above.
RUN_EXERCISES = [c for c in ("data",) if c in WITH_EXERCISES]


@pytest.mark.parametrize("chapter", RUN_EXERCISES)
def test_exercise_notebook_runs(chapter, served_book, student_env, tmp_path):
    _, origin = served_book
    exercises = download(origin, chapter, "download-exercises-button")
    run_nbval(exercises, f"{chapter}-exercises", tmp_path, student_env)
