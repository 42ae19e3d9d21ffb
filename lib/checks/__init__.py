"""Checks of the method against ground truth (import a module: ``from lib.checks import sampling``).

* :mod:`lib.checks.sampling` -- NUTS and quadrature ground truth for the
  Laplace approximation (imports JAX: install the ``sampling`` extra). (The 1-D Laplace
  approximation of the chapter "The Laplace approximation" is written out in that chapter.)
"""
