"""Checks of the method against ground truth: :mod:`lib.checks.sampling`, NUTS and quadrature
for the Laplace approximation, and :mod:`lib.checks.reference`, the exact answer with its Monte
Carlo errors (dense-mass NUTS and importance-sampled ``log Z``) for the other approximations
(both import JAX: install the ``sampling`` extra)."""
