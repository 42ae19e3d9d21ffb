"""Approximations of the posterior beyond Laplace's, each a frozen Gaussian result that knows
its ``method``, with its evidence estimate: :func:`~lib.approx.vb.fit_vb` (the Jaakkola-Jordan
variational bound: a lower bound on ``log Z``) and :func:`~lib.approx.ep.fit_ep` (expectation
propagation: an estimate of ``log Z``). Imported as a module: ``from lib import approx``.
"""
from lib.approx.ep import EPPosterior, fit_ep
from lib.approx.vb import VariationalPosterior, fit_vb, jj_lambda

__all__ = ["EPPosterior", "VariationalPosterior", "fit_ep", "fit_vb", "jj_lambda"]
