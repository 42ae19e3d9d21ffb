"""``lib``: the computation behind the book *Bayesian logistic classification*.

Modules, one per concept: :mod:`lib.data`, :mod:`lib.features`, :mod:`lib.likelihood`,
:mod:`lib.ml`, :mod:`lib.laplace`, :mod:`lib.predictive`, :mod:`lib.metrics`,
:mod:`lib.evaluate`; the chapters' experiments in :mod:`lib.lab`, :mod:`lib.laplace1d`,
:mod:`lib.grid` and :mod:`lib.evidence_opt`; the other models in :mod:`lib.probit`,
:mod:`lib.gp`, :mod:`lib.softmax`, :mod:`lib.generative` and :mod:`lib.discriminant`; input
checks in one place, :mod:`lib._validate`.

Each quantity has one definition: the log-likelihood
(:func:`lib.likelihood.label_log_probs`), the log posterior
(:func:`lib.laplace.log_posterior_from_activations`), the RBF block
(:func:`lib.features.rbf_from_squared_distances`), the Laplace log evidence
(:attr:`lib.laplace.LaplacePosterior.evidence_terms`), the per-point scores
(:func:`lib.metrics.activation_scores`) and MacKay's gamma
(:func:`lib.evaluate.effective_parameters`).
"""
from . import data, features, laplace, likelihood, metrics, ml, plots, predictive, report
from .data import DataError, load_lab_data, random_split, report_split
from .features import add_bias, linear_features, rbf_features
from .laplace import (
    ConvergenceError,
    LaplacePosterior,
    fit_laplace,
    log_evidence,
    log_posterior,
    precision_matrix,
)
from .likelihood import (
    average_log_likelihood,
    average_log_likelihood_logits,
    gradient,
    hessian,
    log_likelihood,
    log_sigmoid,
    sigmoid,
)
from .metrics import accuracy, confusion_matrix, predict_labels
from .ml import GradientAscentResult, fit_ml
from .predictive import (
    activation_moments,
    logistic_gaussian_expectation,
    map_logits,
    map_proba,
    predictive_logits,
    predictive_proba,
    probit_approximation,
)

__all__ = [name for name in dir() if not name.startswith("_")]
