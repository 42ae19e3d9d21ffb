"""pytest configuration: what nbval compares in the chapters, and how pytest-xdist shares the
work between processes (``-n 2`` in pyproject.toml)."""

# Test files that share the session fixture ``book_build`` (tests/conftest.py): one worker runs
# them all, so the book is built once.
_BOOK_TESTS = ("tests/test_book.py", "tests/test_browser.py")


def pytest_collectstart(collector):
    # Tables are compared through text/plain; HTML renderings, stderr (progress bars, library
    # chatter) and widget state are not compared.
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("text/html", "stderr", "application/javascript")


def pytest_xdist_make_scheduler(config, log):
    """Distribute whole files (a notebook's cells run in order in one kernel), the book's two
    test files together, the costliest units first."""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return "book" if path in _BOOK_TESTS else path

    return FileScheduling(config, log)


# Known costly units, run first so that no worker is left with a long one at the end (measured
# on 2 cores: the book build and browser test, the PDF, then the chapters that sample or search).
_COSTLY_FIRST = ("book", "tests/test_pdf.py", "chapters/ground_truth.ipynb", "chapters/ml_lab.ipynb",
                 "chapters/grid.ipynb", "chapters/probit_model.ipynb", "chapters/gp_view.ipynb")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = item.nodeid.split("::", 1)[0]
        scope = "book" if path in _BOOK_TESTS else path
        return _COSTLY_FIRST.index(scope) if scope in _COSTLY_FIRST else len(_COSTLY_FIRST)

    items.sort(key=rank)   # stable: the order within a file is kept
