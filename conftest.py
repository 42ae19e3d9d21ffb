"""pytest configuration: what nbval compares in the chapters."""


def pytest_collectstart(collector):
    # Tables are compared through text/plain; HTML renderings, stderr (progress bars, library
    # chatter) and widget state are not compared.
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("text/html", "stderr", "application/javascript")
