"""Book plumbing (import a module: ``from lib.book import plots``).

* :mod:`lib.book.plots` -- the book's figures (the explorers' static frames too);
* :mod:`lib.book.display` -- rounding-level differences printed as their bound;
* :mod:`lib.book.glue` -- glue a dict of formatted values into the page in one call.
* :mod:`lib.book.explorer` -- the interactive explorers' fields and numbers, computed in a
  chapter; the book's extension (``_ext/explorer.py``) makes the page of them.
"""
