"""The fast engine behind :func:`lib.hyper.evidence_grid`: the same table as the reference
(:func:`lib.hyper.reference_rows`), computed faster (book appendix "How the grid is computed
fast"). ``from lib import fastgrid``.
"""
from lib.fastgrid.engine import *  # noqa: F401,F403  (the helper replaces this with named modules)
