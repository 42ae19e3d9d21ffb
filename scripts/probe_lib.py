"""Probe every public entry point of ``lib`` with bad input, as a hostile user would.

Each probe replaces ONE argument of a valid call by a bad value of the argument's kind (a design
of the wrong shape, NaN, strings, labels 2 or -1, a seed of -1, a posterior of the wrong kind,
...) and runs it with warnings as errors. A probe passes when it raises ``ValueError``,
``TypeError`` or one of lib's own errors (:class:`lib.ConvergenceError`,
:class:`lib.data.DataError`) **raised by lib's own code** (the traceback's last frame is in
``lib/``, not inside numpy or scipy) whose message **names the argument as the subject**: the
name at the start of the message, after "argument", or quoted (``s2 must be positive`` names
``s2``; ``K is singular; rescale s2`` does not). It is a defect when it returns (*silent*),
warns (*warning*), or raises anything else (*cryptic*).

The valid calls themselves must return without a warning, and **equivalent inputs must give
equal results** (to 1e-12): each array argument of a valid call is passed again as a list, in
Fortran order, read-only, as float32 (compared with the float64 of the same values) and, for
0/1 labels, as integers; the inputs must not be modified (*unequal*).

Every public function and class of ``lib`` and its sub-packages (``lib.book`` aside) is probed,
documented as unchecked ("(no checks)" in its docstring's first line), or listed in
:data:`NOT_PROBED` with the reason; a new public name without any of these is a defect
(*unprobed*).

    .venv/bin/python scripts/probe_lib.py          # prints the defects and the counts

``tests/test_hardening.py`` runs it and asserts that it finds no defect beyond its commented
list of known ones (in ``lib/report/printed.py``, being rewritten by another change).
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# --- bad values, by kind of argument -------------------------------------------------------

def _bad_matrix(shape):
    n, m = shape
    return {
        "None": None, "a string": "abc", "a scalar": 1.0, "a 1-D array": np.ones(n),
        "a 3-D array": np.ones((n, m, 1)), "NaN": np.full(shape, np.nan),
        "inf": np.full(shape, np.inf), "complex": np.ones(shape) * 1j,
        "object dtype": np.array([["a"] * m] * n, dtype=object), "zero rows": np.ones((0, m)),
        "zero columns": np.ones((n, 0)), "1e300": np.full(shape, 1e300),
    }


def _bad_rows(shape):
    n, m = shape
    return {"one row too few": np.ones((n - 1, m)), "one column too many": np.ones((n, m + 1))}


def _bad_labels(n):
    return {
        "None": None, "a string": "abc", "label 2": np.r_[np.zeros(n - 1), 2.0],
        "label -1": np.r_[np.zeros(n - 1), -1.0], "label 0.5": np.full(n, 0.5),
        "NaN": np.full(n, np.nan), "wrong length": np.zeros(n + 1), "2-D": np.zeros((n, 1)),
        "empty": np.zeros(0), "strings": np.array(["0"] * n),
    }


def _bad_positive():
    return {"0": 0.0, "-1": -1.0, "NaN": np.nan, "inf": np.inf, "a string": "a", "None": None,
            "True": True, "a list": [1.0, 2.0]}


def _bad_int(minimum=1):
    return {"0": minimum - 1, "-1": -1, "1.5": 1.5, "a string": "a", "None": None, "True": True}


def _bad_seed():
    return {"-1": -1, "1.5": 1.5, "a string": "a", "True": True, "a list": [1, 2]}


def _bad_fraction():
    return {"0": 0.0, "1": 1.0, "1.5": 1.5, "NaN": np.nan, "a string": "a", "None": None,
            "0.001 (empty train set)": 0.001, "0.9999 (empty test set)": 0.9999}


def _bad_object():
    return {"None": None, "a string": "abc", "an int": 3}


def _bad_vector(n):
    return {"None": None, "a string": "abc", "NaN": np.full(n, np.nan), "inf": np.full(n, np.inf),
            "wrong length": np.ones(n + 1), "2-D": np.ones((n, 1)), "complex": np.ones(n) * 1j,
            "empty": np.zeros(0)}


def _bad_probabilities(n):
    return {**_bad_vector(n), "1.5": np.full(n, 1.5), "-0.1": np.full(n, -0.1)}


def _bad_pair():
    return {"None": None, "a number": 1.0, "reversed": (10.0, 0.1), "negative": (-1.0, 1.0),
            "NaN": (np.nan, 1.0), "three numbers": (0.1, 1.0, 10.0)}


def _bad_bool():
    return {"'no'": "no", "None": None, "2": 2, "a list": [True]}


# --- the problem the valid calls use -------------------------------------------------------

def _problem():
    import lib

    rng = np.random.default_rng(0)
    y = (rng.random(40) < 0.5).astype(float)
    X = rng.normal(size=(40, 2)) + np.where(y[:, None] == 1, 0.8, -0.8)
    Xtr, ytr, Xte, yte = X[:30], y[:30], X[30:], y[30:]
    Phi = lib.rbf_features(Xtr, Xtr[:8], 0.7)
    Phi_test = lib.rbf_features(Xte, Xtr[:8], 0.7)
    post = lib.fit_laplace(Phi, ytr, 1.0)
    return dict(X=Xtr, y=ytr, X_test=Xte, y_test=yte, Phi=Phi, Phi_test=Phi_test, post=post)


@dataclass
class Probe:
    """One function: a valid call and, per argument, the bad values of its kind."""

    label: str
    fn: object
    kwargs: dict
    bad: dict = field(default_factory=dict)   #: argument name -> {description: bad value}
    #: valid extremes: {description: {argument: value}}, each must return without a warning
    extremes: dict = field(default_factory=dict)
    #: the name an error must give for an argument, where it is not the argument's own
    #: (a checking helper's ``value`` is named by its ``name``)
    blame: dict = field(default_factory=dict)
    positional: tuple = ()                   #: names passed positionally, in order


def probes() -> list[Probe]:
    """The probes: every public function of lib, lib.models, lib.hyper, lib.fastgrid and
    lib.checks.sampling (not the sampler itself, which compiles JAX programs; its arguments
    are checked before it does)."""
    import lib
    from lib import approx, data, fastgrid, hyper
    from lib.checks import reference, sampling
    from lib import features, likelihood
    from lib.models import gp, probit, softmax
    from lib.report import ml_lab
    from lib.report import printed as printed_mod

    P = _problem()
    X, y, Xte, yte, Phi, Phi_te, post = (P[k] for k in ("X", "y", "X_test", "y_test", "Phi",
                                                        "Phi_test", "post"))
    N, M = Phi.shape
    S = Phi_te.shape[0]
    p = lib.predictive_proba(post, Phi)
    mu, var = lib.activation_moments(post, Phi)
    K = gp.rbf_kernel(X, X, 1.0, 1.0)
    gpfit = gp.fit_gp_laplace(K, y)
    K_star = gp.rbf_kernel(X, Xte, 1.0, 1.0)
    yk = (np.arange(N) % 3)
    Y = softmax.one_hot(yk, 3)
    Phi3 = lib.linear_features(X)
    sm = softmax.fit_softmax_laplace(Phi3, Y, 1.0)
    draws = np.random.default_rng(1).normal(size=(2, 50, M)) * 0.1 + post.w_map
    mat, lab, pos, vec = _bad_matrix, _bad_labels, _bad_positive, _bad_vector
    X_lab, y_lab = data.load_lab_data()
    task = fastgrid.plan_tasks(X, np.array([0.5, 1.0, 2.0]), np.array([0.7]), target_tasks=1)[0]
    h_pos = np.array([3.0, 10.0, 30.0])

    def design(shape):        # rows tied to another argument, columns too
        return {**mat(shape), **_bad_rows(shape)}

    def new_rows(shape):      # rows free (points to predict at), columns tied
        return {**mat(shape), "one column too many": np.ones((shape[0], shape[1] + 1))}

    def linear(shape):        # only indexed or copied: any finite magnitude is fine
        return {k: v for k, v in mat(shape).items() if k != "1e300"}

    out = [
        # lib: data, features
        Probe("first_rows_split", lib.first_rows_split, dict(X=X, y=y, n_train=20),
              dict(X=linear(X.shape), y=lab(N), n_train={**_bad_int(), "True": True, "N": N})),
        Probe("random_split", lib.random_split, dict(X=X, y=y, train_fraction=0.5, seed=0),
              dict(X=linear(X.shape), y=lab(N), train_fraction=_bad_fraction(), seed=_bad_seed())),
        Probe("add_bias", lib.add_bias, dict(Phi=Phi), dict(Phi=linear(Phi.shape))),
        Probe("linear_features", lib.linear_features, dict(X=X), dict(X=mat(X.shape))),
        Probe("rbf_features", lib.rbf_features, dict(X=X, centres=X[:5], width=0.5),
              dict(X=mat(X.shape), centres=new_rows((5, 2)),
                   width={**pos(), "1e-300": 1e-300})),
        # lib: likelihood
        Probe("sigmoid", lib.sigmoid, dict(a=mu), dict(a={"None": None, "a string": "a",
                                                         "NaN": np.nan})),
        Probe("log_sigmoid", lib.log_sigmoid, dict(a=mu), dict(a={"None": None, "a string": "a",
                                                                 "NaN": np.nan})),
        Probe("log_likelihood", lib.log_likelihood, dict(w=post.w_map, Phi=Phi, y=y),
              dict(w=vec(M), Phi=design(Phi.shape), y=lab(N))),
        Probe("gradient", lib.gradient, dict(w=post.w_map, Phi=Phi, y=y),
              dict(w=vec(M), Phi=design(Phi.shape), y=lab(N))),
        Probe("hessian", lib.hessian, dict(w=post.w_map, Phi=Phi, y=y),
              dict(w=vec(M), Phi=design(Phi.shape), y=lab(N))),
        Probe("average_log_likelihood", lib.average_log_likelihood, dict(p=p, y=y),
              dict(p=_bad_probabilities(N), y=lab(N))),
        Probe("average_log_likelihood_logits", lib.average_log_likelihood_logits, dict(a=mu, y=y),
              dict(a=vec(N), y=lab(N))),
        # lib: ml
        Probe("fit_ml", lib.fit_ml, dict(Phi=Phi, y=y, learning_rate=0.1, n_steps=5,
                                         Phi_test=Phi_te, y_test=yte, batch_size=10, seed=0),
              dict(Phi=mat(Phi.shape), y=lab(N), learning_rate=pos(), n_steps=_bad_int(),
                   Phi_test=design(Phi_te.shape), y_test=lab(S),
                   batch_size={k: v for k, v in _bad_int().items() if k != "None"},
                   seed=_bad_seed())),
        Probe("curvature_bound", lib.curvature_bound, dict(Phi=Phi), dict(Phi=mat(Phi.shape))),
        Probe("minibatch_curvature_bound", lib.minibatch_curvature_bound,
              dict(Phi=Phi, batch_size=5, seed=0),
              dict(Phi=mat(Phi.shape), batch_size={**_bad_int(), "N + 1": N + 1}, seed=_bad_seed())),
        # lib: laplace
        Probe("fit_laplace", lib.fit_laplace, dict(Phi=Phi, y=y, s2=1.0, tol=1e-10, max_iter=50),
              dict(Phi=mat(Phi.shape), y=lab(N), s2={**pos(), "wrong length": np.ones(M + 1)},
                   tol=pos(), max_iter=_bad_int(), w0={k: v for k, v in vec(M).items() if k != "None"},
                   likelihood=_bad_object())),
        Probe("log_evidence", lib.log_evidence, dict(Phi=Phi, y=y, s2=1.0),
              dict(Phi=mat(Phi.shape), y=lab(N), s2=pos())),
        Probe("log_posterior", lib.log_posterior, dict(w=post.w_map, Phi=Phi, y=y, s2=1.0),
              dict(w=vec(M), Phi=design(Phi.shape), y=lab(N), s2=pos())),
        Probe("precision_matrix", lib.precision_matrix, dict(w=post.w_map, Phi=Phi, s2=1.0),
              dict(w=vec(M), Phi=new_rows(Phi.shape), s2=pos())),
        Probe("bias_prior_variances", lib.bias_prior_variances,
              dict(s2=1.0, bias_s2=10.0, n_weights=M),
              dict(s2=pos(), bias_s2=pos(), n_weights=_bad_int())),
        # lib.approx: the variational bound and EP
        Probe("approx.fit_vb", approx.fit_vb, dict(Phi=Phi, y=y, s2=1.0),
              dict(Phi=mat(Phi.shape), y=lab(N), s2={**pos(), "1e300": 1e300},
                   max_iter=_bad_int(), tol=pos()),
              extremes={"s2 = 1e-2": dict(s2=1e-2), "s2 = 1e3": dict(s2=1e3)}),
        Probe("approx.fit_ep", approx.fit_ep, dict(Phi=Phi, y=y, s2=1.0),
              dict(Phi=mat(Phi.shape), y=lab(N), s2={**pos(), "1e300": 1e300},
                   damping={**{k: v for k, v in pos().items() if k != "None"}, "1.5": 1.5},
                   max_iter=_bad_int(), tol=pos(), schedule={"None": None, "a typo": "sequental"}),
              extremes={"s2 = 1e-2": dict(s2=1e-2), "s2 = 1e3": dict(s2=1e3),
                        "parallel": dict(schedule="parallel", damping=0.5)}),
        # lib.checks.reference: the exact answer by Monte Carlo
        Probe("reference.importance_log_z", reference.importance_log_z,
              dict(Phi=Phi, y=y, s2=1.0, mean=post.w_map, cov=np.linalg.inv(post.precision),
                   n_draws=200),
              dict(Phi=mat(Phi.shape), y=lab(N), s2=pos(), mean=vec(M),
                   cov={**mat((M, M)), "not symmetric": np.triu(np.ones((M, M))),
                        "not positive definite": -np.eye(M), "wrong shape": np.eye(M + 1)},
                   n_draws=_bad_int(2), df=pos(), seed=_bad_seed())),
        Probe("reference.exact_reference (arguments only)", reference.exact_reference,
              dict(Phi=Phi, y=y, s2=1.0, num_warmup=10, num_draws=10),
              dict(Phi=mat(Phi.shape), y=lab(N), s2=pos(), seed=_bad_seed(),
                   num_chains=_bad_int(2), n_is=_bad_int(2), df=pos(), cache=_bad_bool())),
        # lib: predictive
        Probe("activation_moments", lib.activation_moments, dict(posterior=post, Phi=Phi_te),
              dict(posterior=_bad_object(), Phi=new_rows(Phi_te.shape))),
        Probe("predictive_proba", lib.predictive_proba, dict(posterior=post, Phi=Phi_te),
              dict(posterior=_bad_object(), Phi=new_rows(Phi_te.shape))),
        Probe("map_proba", lib.map_proba, dict(posterior=post, Phi=Phi_te),
              dict(posterior=_bad_object(), Phi=new_rows(Phi_te.shape))),
        Probe("map_logits", lib.map_logits, dict(posterior=post, Phi=Phi_te),
              dict(posterior=_bad_object(), Phi=new_rows(Phi_te.shape))),
        Probe("logistic_gaussian_expectation", lib.logistic_gaussian_expectation,
              dict(mu=mu[:3], var=var[:3]),
              dict(mu=vec(3), var={**vec(3), "negative": -var[:3], "1e16": np.full(3, 1e16)})),
        # lib: scores
        Probe("predict_labels", lib.predict_labels, dict(p=p, threshold=0.5),
              dict(p={k: v for k, v in _bad_probabilities(N).items() if k != "wrong length"}, threshold={"NaN": np.nan, "-1": -1.0, "1.5": 1.5,
                                                       "a string": "a", "None": None})),
        Probe("accuracy", lib.accuracy, dict(p=p, y=y), dict(p=_bad_probabilities(N), y=lab(N))),
        Probe("confusion_matrix", lib.confusion_matrix, dict(p=p, y=y),
              dict(p=_bad_probabilities(N), y=lab(N))),
        Probe("effective_parameters", lib.effective_parameters, dict(posterior=post),
              dict(posterior=_bad_object())),
        Probe("score_split", lib.score_split, dict(posterior=post, Phi=Phi_te, y=yte),
              dict(posterior=_bad_object(), Phi=design(Phi_te.shape), y=lab(S))),
        # lib.models.probit
        Probe("probit.predictive_proba", probit.predictive_proba, dict(mu=mu, var=var),
              dict(mu=vec(N), var={**vec(N), "negative": -var})),
        # probit.label_log_probs, log_likelihood_from_activations, gradient, curvature: the
        # likelihood's unchecked hot path (documented "no checks"), not probed
        Probe("probit.proba", probit.proba, dict(a=mu), dict(a={"None": None, "a string": "a",
                                                               "NaN": np.full(3, np.nan)})),
        # lib.models.gp
        Probe("gp.basis_kernel", gp.basis_kernel, dict(Phi_a=Phi, Phi_b=Phi_te, s2=1.0),
              dict(Phi_a=mat(Phi.shape), Phi_b=new_rows(Phi_te.shape),
                   s2=pos())),
        Probe("gp.rbf_kernel", gp.rbf_kernel, dict(X_a=X, X_b=Xte, signal_var=1.0, width=1.0),
              dict(X_a=mat(X.shape), X_b=mat(Xte.shape), signal_var=pos(), width=pos())),
        Probe("gp.fit_gp_laplace", gp.fit_gp_laplace, dict(K=K, y=y),
              dict(K={**design(K.shape), "non-symmetric": K + np.triu(np.ones_like(K), 1),
                      "indefinite": K - 2 * np.eye(N)},
                   y=lab(N), tol=pos(), max_iter=_bad_int())),
        Probe("gp.newton_cg", gp.newton_cg, dict(K=K, y=y, cg_rtol=1e-8),
              dict(K={**design(K.shape), "non-symmetric": K + np.triu(np.ones_like(K), 1),
                      "indefinite": K - 2 * np.eye(N)},
                   y=lab(N), cg_rtol={**pos(), "2": 2.0}, max_newton=_bad_int(), tol=pos())),
        Probe("gp.predict_latent", gp.predict_latent,
              dict(fit=gpfit, K_star=K_star, k_star_diag=np.ones(S)),
              dict(fit={**_bad_object(), "a binary posterior": post},
                   K_star=design(K_star.shape),
                   k_star_diag={**vec(S), "negative": -np.ones(S)})),
        Probe("gp.rbf_evidence_gradient", gp.rbf_evidence_gradient,
              dict(X_train=X, y_train=y, signal_var=1.0, width=1.0),
              dict(X_train=mat(X.shape), y_train=lab(N), signal_var=pos(), width=pos())),
        # lib.models.softmax
        Probe("softmax.one_hot", softmax.one_hot, dict(y=yk, K=3),
              dict(y={"None": None, "-1": np.r_[yk[1:], -1], "1.5": yk + 0.5, "empty": yk[:0]},
                   K={**{k: v for k, v in _bad_int().items() if k != "None"},
                      "2 (< max label + 1)": 2})),
        Probe("softmax.log_likelihood", softmax.log_likelihood,
              dict(w=np.zeros(9), Phi=Phi3, Y=Y),
              dict(w=vec(9), Phi=design(Phi3.shape),
                   Y={**mat(Y.shape), "holds 2": Y * 2, "holds -1": Y - 1, "two ones in a row":
                      np.ones_like(Y), "one row too few": Y[1:]})),
        Probe("softmax.gradient", softmax.gradient, dict(w=np.zeros(9), Phi=Phi3, Y=Y),
              dict(w=vec(9), Phi=design(Phi3.shape), Y={"holds 2": Y * 2, "None": None})),
        Probe("softmax.hessian", softmax.hessian, dict(w=np.zeros(9), Phi=Phi3, Y=Y),
              dict(w=vec(9), Phi=new_rows(Phi3.shape), Y={"holds 2": Y * 2})),
        Probe("softmax.log_posterior", softmax.log_posterior,
              dict(w=np.zeros(9), Phi=Phi3, Y=Y, s2=1.0),
              dict(w=vec(9), Phi=design(Phi3.shape), Y={"holds 2": Y * 2}, s2=pos())),
        Probe("softmax.fit_softmax_laplace", softmax.fit_softmax_laplace,
              dict(Phi=Phi3, Y=Y, s2=1.0),
              dict(Phi=mat(Phi3.shape), Y={"holds 2": Y * 2, "None": None}, s2=pos(), tol=pos(),
                   max_iter=_bad_int())),
        Probe("softmax.activation_moments", softmax.activation_moments,
              dict(post=sm, Phi_star=Phi3),
              dict(post={**_bad_object(), "a binary posterior": post},
                   Phi_star=new_rows(Phi3.shape))),
        Probe("softmax.predictive_mc", softmax.predictive_mc,
              dict(post=sm, Phi_star=Phi3[:3], n_samples=10, seed=0),
              dict(post={**_bad_object(), "a binary posterior": post},
                   Phi_star=new_rows((3, 3)), n_samples=_bad_int(), seed=_bad_seed())),
        Probe("softmax.predictive_moderated", softmax.predictive_moderated,
              dict(post=sm, Phi_star=Phi3),
              dict(post={**_bad_object(), "a binary posterior": post},
                   Phi_star=new_rows(Phi3.shape))),
        # lib.hyper
        Probe("hyper.evidence_gradient", hyper.evidence_gradient,
              dict(X_train=X, y_train=y, s2=1.0, width=0.7, w0=list(np.zeros(N + 1))),
              dict(X_train=mat(X.shape), y_train=lab(N), s2=pos(), width=pos(),
                   w0={k: v for k, v in vec(N + 1).items() if k != "None"})),
        Probe("hyper.central_difference_gradient", hyper.central_difference_gradient,
              dict(X_train=X, y_train=y, s2=1.0, width=0.7),
              dict(X_train=mat(X.shape), y_train=lab(N), s2=pos(), width=pos(),
                   step={**pos(), "10": 10.0, "1e10": 1e10})),
        Probe("hyper.maximise_evidence_s2", hyper.maximise_evidence_s2,
              dict(X_train=X, y_train=y, width=0.7, max_iter=3),
              dict(X_train=mat(X.shape), y_train=lab(N), width=pos(), s2_bounds=_bad_pair(),
                   max_iter=_bad_int(), gtol=pos())),
        Probe("hyper.maximise_evidence", hyper.maximise_evidence,
              dict(X_train=X, y_train=y, starts=[(1.0, 0.7)], max_iter=3),
              dict(X_train=mat(X.shape), y_train=lab(N), s2_bounds=_bad_pair(),
                   width_bounds={**_bad_pair(), "1e-300": (1e-300, 1.0)},
                   starts={"None of pairs": [None], "negative": [(-1.0, 1.0)]},
                   max_iter=_bad_int(), gtol=pos())),
        Probe("hyper.grid_point", hyper.grid_point,
              dict(Phi_train=Phi, y_train=y, Phi_test=Phi_te, y_test=yte, s2=1.0),
              dict(Phi_train=mat(Phi.shape), y_train=lab(N), Phi_test=design(Phi_te.shape),
                   y_test=lab(S), s2=pos())),
        Probe("fastgrid.evidence_grid", fastgrid.evidence_grid,
              dict(X_train=X, y_train=y, X_test=Xte, y_test=yte, s2_values=[0.5, 2.0],
                   widths=[0.5, 1.0], n_jobs=1),
              dict(X_train=mat(X.shape), y_train=lab(N), X_test=design(Xte.shape), y_test=lab(S),
                   s2_values={**vec(2), "1e300": [1.0, 1e300], "negative": [-1.0, 1.0]},
                   widths={**vec(2), "1e-300": [1e-300, 1.0]},
                   engine={"'slow'": "slow", "None": None}, n_jobs={"0": 0, "a string": "a"})),
        Probe("hyper.reference_rows", hyper.reference_rows,
              dict(X_train=X, y_train=y, X_test=Xte, y_test=yte, s2_values=[0.5, 2.0], width=0.7),
              dict(X_train=mat(X.shape), y_train=lab(N), X_test=design(Xte.shape), y_test=lab(S),
                   s2_values={k: v for k, v in {**vec(2), "1e300": [1.0, 1e300]}.items()
                              if k != "wrong length"}, width=pos())),
        # lib.fastgrid
        Probe("fastgrid.chain_rows", fastgrid.chain_rows,
              dict(X_train=X, y_train=y, X_test=Xte, y_test=yte, s2_values=[0.5, 2.0],
                   width=0.7, s2_max=2.0),
              dict(X_train=mat(X.shape), y_train=lab(N), X_test=design(Xte.shape), y_test=lab(S),
                   s2_values={**vec(2), "1e300": [1.0, 1e300]}, width=pos(), s2_max=pos())),
        Probe("fastgrid.estimate_costs", fastgrid.estimate_costs,
              dict(X_train=X, widths=[0.5, 1.0], s2_max=2.0),
              dict(X_train=mat(X.shape), widths={k: v for k, v in vec(2).items() if k != "wrong length"}, s2_max=pos())),
        Probe("fastgrid.band_drop_threshold", fastgrid.band_drop_threshold,
              dict(n_train=N, s2_max=2.0), dict(n_train=_bad_int(), s2_max=pos())),
        # lib.checks.sampling (validation only)
        Probe("sampling.log_joint", _fn(sampling, "log_joint"),
              dict(W=draws[0], Phi=Phi, y=y, s2=1.0),
              dict(W={**mat((50, M)), "wrong columns": np.ones((50, M + 1))},
                   Phi=design(Phi.shape), y=lab(N), s2=pos())),
        Probe("sampling.sample_moments", _fn(sampling, "sample_moments"), dict(draws=draws),
              dict(draws={"None": None, "NaN": draws * np.nan, "2-D": draws[0],
                          "3 draws": draws[:, :3]})),
        Probe("sampling.laplace_moments", _fn(sampling, "laplace_moments"), dict(posterior=post),
              dict(posterior=_bad_object())),
        Probe("sampling.mc_predictive", _fn(sampling, "mc_predictive"), dict(draws=draws, Phi=Phi_te),
              dict(draws={"None": None, "NaN": draws * np.nan},
                   Phi=new_rows(Phi_te.shape), chunk=_bad_int())),
        Probe("sampling.quadrature_posterior", _fn(sampling, "quadrature_posterior"),
              dict(Phi=Phi3[:, :2], y=y, s2=1.0, posterior=lib.fit_laplace(Phi3[:, :2], y, 1.0),
                   n_nodes=5),
              dict(Phi=mat((N, 2)), y=lab(N), s2=pos(),
                   posterior={**_bad_object(), "fitted to another design": post},
                   n_nodes=_bad_int(2))),
        Probe("sampling.cubic_correction", _fn(sampling, "cubic_correction"), dict(Phi=Phi, posterior=post),
              dict(Phi=new_rows(Phi.shape), posterior=_bad_object())),
        Probe("sampling.sample_posterior (arguments only)", _fn(sampling, "sample_posterior"),
              dict(Phi=Phi, y=y, s2=1.0, num_warmup=10, num_draws=10),
              dict(Phi=mat(Phi.shape), y=lab(N), s2=pos(), seed=_bad_seed(),
                   num_chains=_bad_int(2),
                   target_accept={"0": 0.0, "1": 1.0, "NaN": np.nan, "a string": "a"})),
        # lib.data
        Probe("data.fetch", data.fetch, dict(name="X.txt"),
              dict(name={"None": None, "z.txt": "z.txt"})),
        Probe("data.cache_dir", data.cache_dir, dict()),
        # the disk caches' keys (no arguments)
        Probe("sampling.code_digest", sampling.code_digest, dict()),
        Probe("fastgrid.code_digest", fastgrid.code_digest, dict()),
        Probe("data.load_lab_data", data.load_lab_data, dict()),
        Probe("data.load_pima", data.load_pima, dict()),
        Probe("data.check_lab_data", data.check_lab_data, dict(X=X_lab, y=y_lab),
              dict(X={"None": None, "NaN": np.full(X_lab.shape, np.nan), "1-D": X_lab[:, 0]},
                   y={"None": None, "label 2": np.r_[y_lab[1:], 2.0], "2-D": y_lab[:, None]})),
        # lib.features: the RBF block's parts
        Probe("squared_distances", features.squared_distances, dict(X=X, centres=X[:5]),
              dict(X=mat(X.shape), centres=new_rows((5, 2)))),
        # lib.likelihood: the interface
        Probe("as_likelihood", likelihood.as_likelihood,
              dict(value=lib.LOGISTIC, name="likelihood"),
              dict(value=_bad_object(), name={"None": None, "an int": 3}),
              blame={"value": "likelihood"}),
        # lib.hyper
        Probe("fastgrid.default_n_jobs", fastgrid.default_n_jobs, dict(n_tasks=4),
              dict(n_tasks=_bad_int(0))),
        Probe("hyper.maximise_evidence_bias", hyper.maximise_evidence_bias,
              dict(X_train=X, y_train=y, bias_s2_bounds=(0.1, 10.0), starts=[(1.0, 0.7, 1.0)],
                   max_iter=2),
              dict(X_train=mat(X.shape), y_train=lab(N), bias_s2_bounds=_bad_pair(),
                   starts={"None of triples": [None], "negative": [(-1.0, 1.0, 1.0)]},
                   max_iter=_bad_int())),
        Probe("fastgrid.evidence_grid (options)", fastgrid.evidence_grid,
              dict(X_train=X, y_train=y, X_test=Xte, y_test=yte, s2_values=[0.5, 2.0],
                   widths=[0.5, 1.0], n_jobs=1),
              dict(cache=_bad_bool(), warm_start=_bad_bool(), progress=_bad_bool())),
        Probe("fastgrid.cached", fastgrid.cached, dict(function=hyper.maximise_evidence),
              dict(function={**_bad_object(), "not of lib.hyper": lib.fit_laplace})),
        # lib.fastgrid: the planning functions
        Probe("fastgrid.chain_fits", fastgrid.chain_fits,
              dict(X_train=X, y_train=y, X_test=Xte, s2_values=[0.5, 2.0], width=0.7, s2_max=2.0),
              dict(s2_values={"descending": [2.0, 0.5], "zero": [0.0, 2.0]},
                   warm_start=_bad_bool(), settings=_bad_object(),
                   work={"a string": "abc", "an int": 3, "a dict": {}})),
        Probe("fastgrid.chain_rows (options)", fastgrid.chain_rows,
              dict(X_train=X, y_train=y, X_test=Xte, y_test=yte, s2_values=[0.5, 2.0],
                   width=0.7, s2_max=2.0),
              dict(s2_values={"descending": [2.0, 0.5], "zero": [0.0, 2.0]},
                   warm_start=_bad_bool(), settings=_bad_object())),
        Probe("fastgrid.form_and_directions", fastgrid.form_and_directions,
              dict(X_train=X, width=0.7, s2_max=2.0),
              dict(X_train=mat(X.shape), width=pos(), s2_max=pos(), settings=_bad_object())),
        Probe("fastgrid.plan_tasks", fastgrid.plan_tasks,
              dict(X_train=X, s2_sorted=np.array([0.5, 1.0, 2.0]), widths=np.array([0.5, 1.0])),
              dict(X_train=mat(X.shape),
                   s2_sorted={**vec(3), "descending": np.array([2.0, 1.0, 0.5]),
                              "zero": np.array([0.0, 1.0, 2.0])},
                   widths={k: v for k, v in vec(2).items() if k != "wrong length"},
                   target_tasks={k: v for k, v in _bad_int().items() if k != "None"},
                   min_segment={k: v for k, v in _bad_int().items() if k != "None"},
                   settings=_bad_object())),
        Probe("fastgrid.run_task", fastgrid.run_task,
              dict(X_train=X, y_train=y, X_test=Xte, y_test=yte,
                   s2_sorted=np.array([0.5, 1.0, 2.0]), task=task),
              dict(X_train=mat(X.shape), y_train=lab(N), X_test=design(Xte.shape), y_test=lab(S),
                   s2_sorted={**vec(3), "descending": np.array([2.0, 1.0, 0.5]),
                              "zero": np.array([0.0, 1.0, 2.0])},
                   task={**_bad_object(), "out of range": fastgrid.Task(0.7, 2, 9, 1.0)},
                   warm_start=_bad_bool(), settings=_bad_object())),
        # lib.models.probit: the note's formulas
        *[Probe(f"probit.{f.__name__}", f, dict(h=h_pos),
                dict(h={"None": None, "a string": "a", "NaN": np.full(3, np.nan),
                        "complex": h_pos * 1j}))
          for f in (probit.log_half_erfc, probit.erfc_ratio, probit.naive_log_half_erfc,
                    probit.naive_log_one_minus_half_erfc, probit.naive_erfc_ratio)],
        *[Probe(f"probit.{f.__name__}", f, dict(h=h_pos),
                dict(h={"None": None, "a string": "a", "NaN": np.full(3, np.nan),
                        "0": np.zeros(3), "negative": -h_pos},
                     series={"None": None, "a string": "a", "empty": ()}))
          for f in (probit.asymptotic_log_half_erfc,
                    probit.asymptotic_ratio)],
        # lib.checks.sampling: the JAX log posterior and the sampler's preconditioner
        Probe("sampling.log_posterior_fn", _fn(sampling, "log_posterior_fn"),
              dict(Phi=Phi, y=y, s2=1.0),
              dict(Phi=mat(Phi.shape), y=lab(N), s2=pos())),
        Probe("sampling.sample_posterior (precondition)", _fn(sampling, "sample_posterior"),
              dict(Phi=Phi, y=y, s2=1.0, num_warmup=10, num_draws=10),
              dict(precondition={"a string": "abc", "an int": 3,
                                 "fitted to another design": lib.fit_laplace(Phi3, y, 1.0)})),
        Probe("sampling.quadrature_posterior (n_nodes)", _fn(sampling, "quadrature_posterior"),
              dict(Phi=Phi3[:, :2], y=y, s2=1.0, posterior=lib.fit_laplace(Phi3[:, :2], y, 1.0),
                   n_nodes=5),
              dict(n_nodes={"400": 400, "1000": 1000})),
        # lib.models: huge or inconsistent values
        Probe("softmax.fit_softmax_laplace (extremes)", softmax.fit_softmax_laplace,
              dict(Phi=Phi3, Y=Y, s2=1.0),
              dict(s2={"1e16": 1e16, "1e100": 1e100}, max_iter={"1": 1})),
        Probe("gp.predict_latent (k_star_diag)", gp.predict_latent,
              dict(fit=gpfit, K_star=K_star, k_star_diag=np.ones(S)),
              dict(k_star_diag={"too small for K_star": np.full(S, 1e-6)})),
        Probe("gp.rbf_evidence_gradient (extremes)", gp.rbf_evidence_gradient,
              dict(X_train=X, y_train=y, signal_var=1.0, width=1.0),
              dict(signal_var={"1e300": 1e300}, width={"1e-300": 1e-300})),
        Probe("fit_laplace (extremes)", lib.fit_laplace, dict(Phi=Phi, y=y, s2=1.0),
              dict(s2={"5e-324": 5e-324, "1e300": 1e300}),
              extremes={"s2 = 1e-300": dict(s2=1e-300)}),
        Probe("rbf_features (extremes)", lib.rbf_features, dict(X=X, centres=X[:5], width=0.5),
              extremes={"width 1e-150, inputs 1e150 apart":
                        dict(width=1e-150, X=np.full(X.shape, 1e150),
                             centres=np.full((5, 2), -1e150))}),
        Probe("gp.rbf_kernel (extremes)", gp.rbf_kernel,
              dict(X_a=X, X_b=Xte, signal_var=1.0, width=1.0),
              extremes={"width 1e-150": dict(width=1e-150)}),
        Probe("hyper.evidence_gradient (extremes)", hyper.evidence_gradient,
              dict(X_train=X, y_train=y, s2=1.0, width=0.7),
              extremes={"width 1e-150": dict(width=1e-150)}),
        # lib.report
        Probe("printed.printed", printed_mod.printed, dict(value="-0.060"),
              dict(value={"None": None, "a float": 0.06, "not a number": "abc"})),
        Probe("printed.decimals", printed_mod.decimals, dict(value="-0.060"),
              dict(value={"None": None, "a float": 0.06})),
        Probe("printed.agrees", printed_mod.agrees, dict(value="-0.060", ours=-0.0601),
              dict(value={"None": None, "a float": 0.06}, ours={"None": None, "a string": "a"})),
        Probe("printed.compare", printed_mod.compare, dict(rows=[("a", "0.50", 0.501)]),
              dict(rows={"None": None, "a float figure": [("a", 0.5, 0.5)]},
                   ours_decimals={"-1": -1, "a string": "a"})),
        Probe("printed.confusion_rows", printed_mod.confusion_rows,
              dict(label="c", printed_matrix=(("0.50", "0.50"), ("0.25", "0.75")),
                   ours=np.array([[0.5, 0.5], [0.25, 0.75]])),
              dict(printed_matrix={"None": None, "floats": ((0.5, 0.5), (0.25, 0.75))},
                   ours={"None": None, "1-D": np.ones(2)})),
        Probe("printed.confusion_frame", printed_mod.confusion_frame,
              dict(matrices={"a": np.array([[3, 1], [1, 3]])}),
              dict(matrices={"None": None, "a 1-D matrix": {"a": np.ones(2)}},
                   digits={"-1": -1, "a string": "a"})),
        Probe("ml_lab.split_rows", ml_lab.split_rows, dict(n_rows=10, seed=0),
              dict(n_rows=_bad_int(2), seed=_bad_seed(), train_fraction=_bad_fraction())),
        Probe("ml_lab.split_paths", ml_lab.split_paths,
              dict(X=X, y=y, width=0.7, seeds=[0, 1], n_steps=4, record_every=2),
              dict(X=linear(X.shape), y=lab(N), width={k: v for k, v in pos().items() if k != "None"},
                   seeds={"None": None, "[-1]": [-1]},
                   n_steps=_bad_int(), record_every=_bad_int(),
                   train_fraction=_bad_fraction())),
        Probe("ml_lab.logit_scores", ml_lab.logit_scores, dict(a=mu, y=y),
              dict(a=vec(N), y=lab(N))),
    ]
    # functions moved out of lib (into a chapter) since the probe was written are skipped
    return [pr for pr in out if pr.fn is not None]


def _fn(module, name):
    return getattr(module, name, None)


_MISMATCH = {"one row too few", "one column too many", "wrong length", "wrong columns",
             "2 (< max label + 1)"}
_SKIP_VALID = {"sampling.sample_posterior (arguments only)", "data.fetch",
               "reference.exact_reference (arguments only)",
               "sampling.sample_posterior (precondition)"}
#: probes whose valid call is too slow to repeat for every equivalent input (or not repeatable)
_SKIP_EQUIVALENT = _SKIP_VALID | {"data.cache_dir", "data.load_lab_data", "data.load_pima",
                                  # returns a JAX function (a new closure at each call)
                                  "sampling.log_posterior_fn"}

#: The modules whose public names are probed (``lib.book``, the book's plotting and display
#: plumbing, aside).
MODULES = ("lib", "lib.data", "lib.features", "lib.likelihood", "lib.laplace", "lib.ml",
           "lib.predictive", "lib.scores", "lib.hyper", "lib.hyper.grid", "lib.hyper.gradient",
           "lib.hyper.search", "lib.fastgrid", "lib.fastgrid.chain", "lib.fastgrid.decompose",
           "lib.fastgrid.forms", "lib.fastgrid.run", "lib.fastgrid.schedule",
           "lib.fastgrid.settings",
           "lib.models.gp", "lib.models.probit", "lib.models.softmax", "lib.checks.sampling",
           "lib.report.printed", "lib.report.ml_lab", "lib.approx", "lib.approx.vb",
           "lib.approx.ep", "lib.checks.reference")

#: Public names not probed with bad input, and why (everything else must have a probe or say
#: "(no checks)" in its docstring's first line).
NOT_PROBED = {
    # result types and errors: constructed by lib and returned, not entry points
    "lib.data.DataError": "an exception class",
    "lib.data.PimaData": "a result type (load_pima())",
    "lib.laplace.ConvergenceError": "an exception class",
    "lib.laplace.LaplacePosterior": "a result type (fit_laplace())",
    "lib.likelihood.Likelihood": "an interface record: its functions are the unchecked hot path",
    "lib.ml.GradientAscentResult": "a result type (fit_ml())",
    "lib.scores.SplitScores": "a result type (score_split())",
    "lib.hyper.gradient.EvidenceGradient": "a result type (evidence_gradient())",
    "lib.hyper.search.EvidenceRun": "a result type (maximise_evidence())",
    "lib.hyper.search.EvidenceOptimum": "a result type (maximise_evidence())",
    "lib.fastgrid.chain.Work": "a counter record (chain_rows())",
    "lib.fastgrid.chain.PointFit": "a result type (chain_fits())",
    "lib.fastgrid.schedule.Task": "a result record (plan_tasks()); run_task checks it",
    "lib.fastgrid.settings.Settings": "a frozen record of constants; the functions check it",
    "lib.models.gp.GPLaplace": "a result type (fit_gp_laplace())",
    "lib.models.softmax.SoftmaxLaplace": "a result type (fit_softmax_laplace())",
    "lib.checks.sampling.PosteriorSamples": "a result type (sample_posterior())",
    "lib.checks.sampling.QuadraturePosterior": "a result type (quadrature_posterior())",
    "lib.report.ml_lab.SplitPaths": "a result type (split_paths())",
    "lib.approx.vb.VariationalPosterior": "a result type (fit_vb())",
    "lib.approx.ep.EPPosterior": "a result type (fit_ep())",
    "lib.checks.reference.LogEvidenceEstimate": "a result type (importance_log_z())",
    "lib.checks.reference.ExactReference": "a result type (exact_reference())",
}


def public_names() -> dict:
    """Every public function and class defined in :data:`MODULES`: qualified name -> object."""
    out = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if name.startswith("_") or not (inspect.isfunction(value) or inspect.isclass(value)):
                continue
            home = getattr(value, "__module__", "") or ""
            private = any(part.startswith("_") for part in home.split("."))
            if home.startswith("lib") and not home.startswith("lib.book") and not private:
                out[f"{home}.{value.__qualname__}"] = value
    return out


def _qualified(fn) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def _says_no_checks(fn) -> bool:
    first = (inspect.getdoc(fn) or "").split("\n\n")[0]
    return "(no checks)" in " ".join(first.split())


def coverage_defects(all_probes) -> list:
    """An *unprobed* defect per public name with no probe, no "(no checks)" and no reason in
    :data:`NOT_PROBED`; a *stale* one per reason for a name that is no longer public."""
    public = public_names()
    probed = {_qualified(pr.fn) for pr in all_probes}
    defects = []
    for qname, obj in sorted(public.items()):
        if qname in probed or qname in NOT_PROBED:
            continue
        if inspect.isfunction(obj) and _says_no_checks(obj):
            continue
        defects.append(("unprobed", qname, "-", "-", "a public name with no probe"))
    for qname in sorted(set(NOT_PROBED) - set(public)):
        defects.append(("stale", qname, "-", "-", "listed in NOT_PROBED but not public"))
    return defects


_LIB_DIR = Path(__file__).resolve().parents[1] / "lib"


def _raised_in_lib(err: BaseException) -> bool:
    """Whether the frame that raised ``err`` is lib's own code (not numpy's, scipy's, ...)."""
    tb = err.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    try:
        Path(tb.tb_frame.f_code.co_filename).resolve().relative_to(_LIB_DIR)
    except ValueError:
        return False
    return True


def names_argument(message: str, name: str) -> bool:
    """Whether ``message`` names ``name`` as the argument at fault: at its start, after
    "argument" or quoted. ``"s2 must be positive"`` names ``s2``; ``"K is singular; rescale
    s2"`` does not."""
    n = re.escape(name)
    return re.search(rf"(?:^(?:[\w.\[\]]+ and )?|\bargument\s+|[`'\"]){n}(?![\w])",
                     message.strip()) is not None


def _lib_errors():
    import lib
    from lib.data import DataError

    return (ValueError, TypeError, lib.ConvergenceError, DataError)


def _classify(fn, kwargs, name):
    """'ok', or the kind of defect and a description."""
    names = (name,) if isinstance(name, str) else name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            fn(**kwargs)
        except Warning as w:
            return "warning", f"{type(w).__name__}: {str(w)[:120]}"
        except _lib_errors() as err:
            if not _raised_in_lib(err):
                return "cryptic", f"not lib's check: {type(err).__name__}: {str(err)[:110]}"
            if any(names_argument(str(err), n) for n in names):
                return "ok", ""
            return "cryptic", f"{type(err).__name__}: {str(err)[:120]}"
        except Exception as err:  # noqa: BLE001 (a probe records every failure)
            return "cryptic", f"{type(err).__name__}: {str(err)[:120]}"
    return "silent", "returned a result"


# --- equivalent inputs ---------------------------------------------------------------------

def _variants(name, value):
    """``(description, value, reference)``: an input equivalent to ``reference`` (the
    reference is ``value`` itself, except for float32, whose reference is its float64)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiub" or value.size == 0:
        return []
    out = [("a list", value.tolist(), value)]
    if value.ndim >= 2:
        out.append(("Fortran order", np.asfortranarray(value), value))
    frozen = value.copy()
    frozen.flags.writeable = False
    out.append(("read-only", frozen, value))
    if value.dtype.kind == "f":
        v32 = value.astype(np.float32)
        if np.all(np.isfinite(v32)):
            out.append(("float32", v32, v32.astype(np.float64)))
        if np.all(np.isin(value, (0.0, 1.0))) and name.lower().startswith("y"):
            out.append(("int labels", value.astype(int), value))
    return out


def same(a, b, tol=1e-12) -> bool:
    """Equal results: arrays and numbers to ``tol`` (relative and absolute), records field by
    field."""
    if a is b:
        return True
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return (type(a) is type(b) and all(same(getattr(a, f.name), getattr(b, f.name), tol)
                                           for f in dataclasses.fields(a)))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k], tol) for k in a)
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(same(x, y, tol) for x, y in zip(a, b)))
    if hasattr(a, "to_numpy") and hasattr(a, "columns"):            # a DataFrame
        return (list(a.columns) == list(b.columns) and list(a.index) == list(b.index)
                and all(same(a[c].to_numpy(), b[c].to_numpy(), tol) for c in a.columns))
    if callable(a) or isinstance(a, (str, bytes)) or a is None:
        return a == b
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:  # noqa: BLE001
        return a == b
    if x.dtype.kind in "fiub" and y.dtype.kind in "fiub":
        return x.shape == y.shape and bool(np.allclose(x, y, rtol=tol, atol=tol, equal_nan=True))
    if x.dtype == object and hasattr(a, "__dict__"):
        return type(a) is type(b) and same(vars(a), vars(b), tol)
    return bool(np.array_equal(x, y))


def _call(fn, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fn(**kwargs)
        if inspect.isgenerator(out):
            out = list(out)
        return out


def equivalence_defects(pr) -> list:
    """*unequal* defects: an equivalent input giving another result, or an input modified."""
    defects = []
    copies = {k: v.copy() for k, v in pr.kwargs.items() if isinstance(v, np.ndarray)}
    try:
        base = _call(pr.fn, pr.kwargs)
    except Exception:  # noqa: BLE001 (reported as "valid call fails")
        return defects
    for k, v in copies.items():
        if not np.array_equal(v, pr.kwargs[k], equal_nan=True):
            defects.append(("unequal", pr.label, k, "-", "the valid call modified its input"))
    for arg, value in pr.kwargs.items():
        for desc, variant, reference in _variants(arg, value):
            try:
                ref = base if reference is value else _call(pr.fn, {**pr.kwargs, arg: reference})
                got = _call(pr.fn, {**pr.kwargs, arg: variant})
            except Exception as err:  # noqa: BLE001
                defects.append(("unequal", pr.label, arg, desc,
                                f"{type(err).__name__}: {str(err)[:110]}"))
                continue
            if not same(got, ref):
                defects.append(("unequal", pr.label, arg, desc, "a different result"))
    return defects


def run(verbose: bool = False):
    """Run every probe; return ``(n_functions, n_probes, defects)``, each defect a tuple
    ``(kind, function, argument, bad value, what happened)``."""
    defects, n = [], 0
    all_probes = probes()
    defects += coverage_defects(all_probes)
    for pr in all_probes:
        if pr.label not in _SKIP_VALID:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    _call(pr.fn, pr.kwargs)
                except Exception as err:  # noqa: BLE001
                    defects.append(("valid call fails", pr.label, "-", "-",
                                    f"{type(err).__name__}: {str(err)[:120]}"))
        if pr.label not in _SKIP_EQUIVALENT:
            defects += equivalence_defects(pr)
        for desc, overrides in pr.extremes.items():
            n += 1
            try:
                _call(pr.fn, {**pr.kwargs, **overrides})
            except Warning as w:
                defects.append(("warning", pr.label, ", ".join(overrides), desc,
                                f"{type(w).__name__}: {str(w)[:120]}"))
            except Exception as err:  # noqa: BLE001
                defects.append(("valid extreme fails", pr.label, ", ".join(overrides), desc,
                                f"{type(err).__name__}: {str(err)[:120]}"))
        for arg, values in pr.bad.items():
            for desc, value in values.items():
                n += 1
                names = pr.blame.get(arg, arg)
                if desc in _MISMATCH:   # the mismatch may be blamed on the other argument
                    names = tuple(pr.kwargs) + tuple(pr.bad)
                kind, what = _classify(_consumed(pr.fn), {**pr.kwargs, arg: value}, names)
                if kind != "ok":
                    defects.append((kind, pr.label, arg, desc, what))
                if verbose:
                    print(kind, pr.label, arg, desc, what, flush=True)
    return len(all_probes), n, defects


def _consumed(fn):
    """``fn``, its result consumed if it is a generator (a generator checks on first use)."""
    def call(**kwargs):
        out = fn(**kwargs)
        return list(out) if inspect.isgenerator(out) else out
    return call


def main(argv=None) -> int:
    import sys

    argv = sys.argv[1:] if argv is None else argv
    n_fn, n, defects = run(verbose="-v" in argv)
    for d in defects:
        print(" | ".join(d))
    kinds = {}
    for d in defects:
        kinds[d[0]] = kinds.get(d[0], 0) + 1
    print(f"{n_fn} functions, {n} probes, {len(defects)} defects {kinds}")
    return 1 if defects else 0


if __name__ == "__main__":
    raise SystemExit(main())
