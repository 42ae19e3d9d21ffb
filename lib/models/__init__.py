"""The sources' other models, each in its own module (import it: ``from lib.models import probit``).

* :mod:`lib.models.probit` -- the probit (erfc) likelihood of Barrett's note, a
  :class:`lib.likelihood.Likelihood` for :func:`lib.laplace.fit_laplace`;
* :mod:`lib.models.gp` -- Laplace GP classification (the function-space view, lecture 14);
* :mod:`lib.models.softmax` -- K-class softmax regression (MAP, Laplace, predictive);
"""
