"""pytest configuration: what nbval compares in the chapters, and how pytest-xdist shares the
work between processes (``-n 2`` in pyproject.toml)."""

# The student notebooks' test runs each chapter in a kernel of its own: each is a unit.
_PER_TEST = "tests/test_student_notebooks.py::test_downloaded_chapter_reads_and_runs"
# ... and so is each chapter's run on another Python (tests/test_other_pythons.py).
_OTHER_PYTHON = "tests/test_other_pythons.py::test_chapter_prints_the_same_digits_on_another_python"


# Tables are compared through text/plain; HTML renderings, stderr (progress bars, library
# chatter), widget state and the explorers' data (lib.book.explorer.MIME: their numbers are
# compared in its text/plain) are not compared. (tests/test_student_notebooks.py gives the
# chapters' run in the fresh environment this same list.)
SKIP_COMPARE = ("text/html", "stderr", "application/javascript",
                "application/vnd.blc.explorer+json")


def pytest_collectstart(collector):
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += SKIP_COMPARE


def _scope(nodeid):
    return nodeid if nodeid.startswith((_PER_TEST, _OTHER_PYTHON)) else nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config, log):
    """Distribute whole test files (their module fixtures are costly), each chapter's run on its
    own, in the order pytest_collection_modifyitems gives (``--no-loadscope-reorder``)."""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return _scope(nodeid)

    return FileScheduling(config, log)


# Costly units first, so that no worker is left with a long one at the end (measured on 2 cores).
# The book build (test_book.py, about 15 s) starts at once on one worker while the other runs
# the slowest unit tests (about as long), so that neither waits for the book; then the chapters,
# which wait for the book and the fresh environment (shared by the workers), costliest first.
_COSTLY_FIRST = (
    "tests/test_book.py", "tests/test_reference_values.py", "tests/test_sampling.py",
    "tests/test_properties.py", "tests/test_fastgrid.py",
    "tests/test_grid.py", "tests/test_browser.py",
    "tests/test_probit.py", "tests/test_pdf.py", "tests/test_explorers.py",
    *(f"{_OTHER_PYTHON}[ground_truth-{v}]" for v in ("3.13", "3.11")),
    *(f"{_PER_TEST}[{name}]" for name in (
        "ground_truth", "exact_posterior", "grid", "report_ml_lab", "report_search",
        "evidence_opt", "ml_lab", "probit_model", "broad_prior", "width_gradient", "map",
        "grid_engine", "probit_accuracy", "report_base_case", "evidence", "gp_view",
        "minibatches", "predictive", "laplace", "softmax", "bic", "evidence_exact", "report_theory", "data")),
)


# The fixtures that build, serve, print or run the book: a test using one is marked ``book``.
# `make check` (pytest -m "not book") runs the rest: lib's unit, property and reference-value
# tests and the chapters' static checks, in about a minute.
BOOK_FIXTURES = {"book_build", "served_book", "printed", "browser", "student_env", "other_envs"}


def pytest_configure(config):
    config.addinivalue_line("markers", "book: builds, serves, prints or runs the book (not in `make check`)")


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        callspec = getattr(item, "callspec", None)   # a parameter is not a fixture
        fixtures = set(getattr(item, "fixturenames", ())) - set(callspec.params if callspec else ())
        if BOOK_FIXTURES & fixtures:
            item.add_marker(pytest.mark.book)

    def rank(item):
        scope = _scope(item.nodeid)
        return _COSTLY_FIRST.index(scope) if scope in _COSTLY_FIRST else len(_COSTLY_FIRST)

    items.sort(key=rank)   # stable: the order within a file is kept
