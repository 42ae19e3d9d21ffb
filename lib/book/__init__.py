"""Book plumbing (import a module: ``from lib.book import plots``).

* :mod:`lib.book.plots` -- the book's figures;
* :mod:`lib.book.display` -- rounding-level differences printed as their bound;
* :mod:`lib.book.glue` -- glue a dict of formatted values into the page in one call.
* :mod:`lib.book.explorer` -- the interactive explorers' data, computed in a chapter and drawn
  on the page by the book's own script, and their static frames.
"""
