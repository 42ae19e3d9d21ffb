"""Checks of the method against ground truth: :mod:`lib.checks.sampling`, NUTS and quadrature
for the Laplace approximation (imports JAX: install the ``sampling`` extra)."""
