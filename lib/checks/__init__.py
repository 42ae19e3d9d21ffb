"""Checks of the method against ground truth (import a module: ``from lib.checks import sampling``).

* :mod:`lib.checks.sampling` -- NUTS, quadrature and importance-sampling ground truth for the
  Laplace approximation (imports JAX: install the ``sampling`` extra);
* :mod:`lib.checks.laplace1d` -- the 1-D Laplace approximation, checked by quadrature.
"""
