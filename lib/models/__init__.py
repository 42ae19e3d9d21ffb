"""The sources' other models, one module each (``from lib.models import probit``):
:mod:`~lib.models.probit`, the probit (erfc) likelihood of Barrett's note (a
:class:`lib.likelihood.Likelihood`); :mod:`~lib.models.gp`, Laplace GP classification (the
function-space view, lecture 14); :mod:`~lib.models.softmax`, K-class softmax regression."""
