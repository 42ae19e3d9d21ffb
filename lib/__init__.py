"""``lib``: the computation behind the book *Bayesian logistic classification*.

The top level is the **teaching core**, the method of the core chapters, one module per
concept: :mod:`lib.data` (the lab data), :mod:`lib.features` (linear and RBF designs),
:mod:`lib.likelihood` (the logistic likelihood and the :class:`~lib.likelihood.Likelihood`
interface), :mod:`lib.ml` (maximum likelihood by gradient ascent), :mod:`lib.laplace` (MAP,
Laplace approximation, evidence), :mod:`lib.predictive` (the probit-approximated predictive)
and :mod:`lib.scores` (metrics, evidence criteria, scores of a posterior). ``import lib``
exports their names and nothing else.

Everything else lives in a sub-package named for its role, imported as a module
(``from lib.models import probit``):

* :mod:`lib.models` -- the other models: probit (erfc) likelihood, GP classification,
  softmax regression;
* :mod:`lib.hyper` -- choosing the hyper-parameters: the evidence grid (what a grid point is,
  the reference), the evidence gradient, the search;
* :mod:`lib.fastgrid` -- the fast engine that runs :mod:`lib.hyper`'s grid
  (:func:`lib.fastgrid.evidence_grid`);
* :mod:`lib.checks` -- ground truth: the NUTS sampler and the quadrature;
* :mod:`lib.report` -- report-only code: the report's quoted figures and the ML lab's split
  study (the teaching core never imports it);
* :mod:`lib.book` -- book plumbing: plots, display and glue helpers, the explorers.

Each quantity has one definition: the log-likelihood
(:func:`lib.likelihood.label_log_probs`), the log posterior
(:func:`lib.laplace.log_posterior_from_activations`), the RBF block
(:func:`lib.features.rbf_from_squared_distances`), the Laplace log evidence
(:attr:`lib.laplace.LaplacePosterior.evidence_terms`), the probit predictive
(:func:`lib.predictive.predictive_proba`), the scores of a fit (:func:`lib.scores.score_split`),
the confusion count (:func:`lib.scores.confusion_matrix`), Newton's step halving
(``lib.laplace._step_halving``) and MacKay's gamma (:func:`lib.scores.effective_parameters`).
Input checks are in one place, :mod:`lib._validate` (paired inputs: ``as_design_labels``).
"""
from lib.data import DataError, first_rows_split, load_lab_data, random_split
from lib.features import add_bias, linear_features, rbf_features
from lib.laplace import (ConvergenceError, LaplacePosterior, bias_prior_variances, fit_laplace,
                         log_evidence, log_posterior, precision_matrix)
from lib.likelihood import (LOGISTIC, Likelihood, average_log_likelihood,
                            average_log_likelihood_logits, gradient, hessian, log_likelihood,
                            log_sigmoid, sigmoid)
from lib.ml import GradientAscentResult, curvature_bound, fit_ml, minibatch_curvature_bound
from lib.predictive import (PROBIT_SCALE, activation_moments, logistic_gaussian_expectation,
                            map_logits, map_proba, predictive_proba)
from lib.scores import (SplitScores, accuracy, confusion_matrix, effective_parameters,
                        predict_labels, score_split)

__all__ = [name for name in dir() if not name.startswith("_")]
