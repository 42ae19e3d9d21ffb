"""Checks of the method against ground truth, and the studies behind the report checks
(import a module: ``from lib.checks import ml_lab``).

* :mod:`lib.checks.sampling` -- NUTS, quadrature and importance-sampling ground truth for the
  Laplace approximation (imports JAX: install the ``sampling`` extra);
* :mod:`lib.checks.ml_lab` -- the ML lab's scored fits, majority effect, and its split and
  training-length studies;
* :mod:`lib.checks.laplace1d` -- the 1-D Laplace approximation, checked by quadrature.
"""
