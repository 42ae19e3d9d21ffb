"""Tests of lib.hyper (gradient, search): the evidence gradient and the L-BFGS-B optimiser."""
import numpy as np
import pytest

from lib.scores import effective_parameters
from lib.hyper import (
    central_difference_gradient, evidence_gradient, maximise_evidence,
    maximise_evidence_bias, maximise_evidence_s2,
)
from lib.features import rbf_features
from lib.laplace import fit_laplace
from lib.likelihood import LOGISTIC
from lib.models.probit import PROBIT


@pytest.fixture(scope="module")
def data():
    """80 points in 2-D with a curved, noisy class boundary (seeded)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] ** 2 + X[:, 1] - 0.5 + 0.5 * rng.normal(size=80) > 0).astype(float)
    return X, y


def laplace_log_evidence(X, y, theta):
    """Reference value: the Laplace log evidence at theta = (log s2, log l), fitted from scratch."""
    s2, width = np.exp(theta)
    return fit_laplace(rbf_features(X, X, width), y, s2).log_evidence


@pytest.mark.parametrize("s2, width", [(1.0, 1.0), (0.1, 0.3), (30.0, 2.0), (3.0, 0.05)])
def test_gradient_matches_central_differences(data, s2, width):
    # two computations that share only the model: the analytic gradient (E1-E7) and central
    # differences of log Z, each a Laplace fit from scratch
    X, y = data
    res = evidence_gradient(X, y, s2, width)
    fd = central_difference_gradient(X, y, s2, width, step=1e-4)
    np.testing.assert_allclose(res.gradient, fd, rtol=1e-5, atol=1e-7)
    assert res.log_evidence == pytest.approx(laplace_log_evidence(X, y, np.log([s2, width])), rel=1e-12)
    # gamma = sum_n W_nn h_n is MacKay's M - tr(A^{-1}) / s2 (lib.scores.effective_parameters)
    assert res.gamma == pytest.approx(effective_parameters(res.posterior), rel=1e-9)


def test_trace_and_mode_sensitivity_as_the_chapter_states(data):
    # tr(A^{-1}) = s2 (M - gamma) with gamma = sum_n W_nn h_n, and A dw/dtheta = d(grad psi)/dtheta
    # (the solve the code does) gives the motion of the mode: checked against A inverted
    # directly and against central differences of w_MAP.
    X, y = data
    s2, width = 2.0, 0.7
    res = evidence_gradient(X, y, s2, width)
    Phi = rbf_features(X, X, width)
    s = 1.0 / (1.0 + np.exp(-Phi @ res.posterior.w_map))
    A = np.eye(Phi.shape[1]) / s2 + Phi.T @ (Phi * (s * (1 - s))[:, None])
    M = Phi.shape[1]
    assert np.trace(np.linalg.inv(A)) == pytest.approx(s2 * (M - res.gamma), rel=1e-9)
    theta, h = np.log([s2, width]), 1e-5
    for j, e in enumerate(np.eye(2)):
        plus, minus = (np.exp(theta + h * e), np.exp(theta - h * e))
        w_plus = fit_laplace(rbf_features(X, X, plus[1]), y, plus[0]).w_map
        w_minus = fit_laplace(rbf_features(X, X, minus[1]), y, minus[0]).w_map
        np.testing.assert_allclose(res.mode_sensitivity[:, j], (w_plus - w_minus) / (2 * h),
                                   rtol=1e-4, atol=1e-6)


def test_implicit_part_is_needed(data):
    # Without the dependence of w_MAP on theta the gradient is wrong (here by more than 10%).
    X, y = data
    res = evidence_gradient(X, y, 1.0, 1.0)
    assert np.all(np.abs(res.implicit) > 0.1 * np.abs(res.gradient))


def test_optimiser_beats_a_coarse_grid(data):
    X, y = data
    opt = maximise_evidence(X, y, starts=[(1.0, 0.1), (10.0, 3.0)])
    grid = max(
        laplace_log_evidence(X, y, np.log([s2, l]))
        for s2 in np.logspace(-2, 2, 7)
        for l in np.logspace(-2, 1, 7)
    )
    assert opt.log_evidence >= grid - 1e-9
    assert np.max(np.abs(opt.gradient)) < 1e-4
    assert opt.n_evaluations == sum(r.n_evaluations for r in opt.runs)
    assert opt.starts == ((1.0, 0.1), (10.0, 3.0))
    assert len(opt.runs) == 2 and all(r.path.shape[1] == 2 for r in opt.runs)
    assert opt.log_evidence == pytest.approx(max(r.log_evidence for r in opt.runs), abs=1e-9)
    assert 1e-2 <= opt.s2 <= 1e2 and 1e-2 <= opt.width <= 1e1


def test_optimiser_keeps_the_best_run(data):
    # one iteration per run: the runs stop at different points, and the best one is kept
    X, y = data
    opt = maximise_evidence(X, y, starts=[(1.0, 0.1), (10.0, 3.0), (0.1, 1.0)], max_iter=1)
    ends = [r.log_evidence for r in opt.runs]
    assert np.ptp(ends) > 1.0
    best = opt.runs[int(np.argmax(ends))]
    assert (opt.log_evidence, opt.s2, opt.width) == (max(ends), best.s2, best.width)


def test_optimiser_respects_bounds(data):
    X, y = data
    opt = maximise_evidence(X, y, starts=[(0.5, 0.5)], s2_bounds=(0.1, 0.5), width_bounds=(0.2, 0.5))
    assert 0.1 - 1e-12 <= opt.s2 <= 0.5 + 1e-12
    assert 0.2 - 1e-12 <= opt.width <= 0.5 + 1e-12


def _gradient(**kwargs):
    return lambda X, y: evidence_gradient(**{"X_train": X, "y_train": y, "s2": 1.0, "width": 1.0, **kwargs})


@pytest.mark.parametrize("likelihood", [LOGISTIC, PROBIT], ids=["logistic", "probit"])
@pytest.mark.parametrize("s2, width, bias_s2", [(1.0, 1.0, None), (0.3, 0.4, 2.0), (5.0, 1.5, 0.01)])
def test_gradient_other_likelihood_and_bias_prior(data, likelihood, s2, width, bias_s2):
    # (E1-E9) for any Likelihood and a separate bias prior variance, against central differences
    X, y = data
    res = evidence_gradient(X, y, s2, width, likelihood=likelihood, bias_s2=bias_s2)
    fd = central_difference_gradient(X, y, s2, width, likelihood=likelihood, bias_s2=bias_s2)
    assert res.gradient.shape == (2 if bias_s2 is None else 3,)
    np.testing.assert_allclose(res.gradient, fd, rtol=1e-5, atol=1e-7)
    prior = s2 if bias_s2 is None else np.append(np.full(X.shape[0], s2), bias_s2)
    ref = fit_laplace(rbf_features(X, X, width), y, prior, likelihood=likelihood)
    assert res.log_evidence == pytest.approx(ref.log_evidence, rel=1e-12)


@pytest.mark.parametrize("likelihood", [LOGISTIC, PROBIT], ids=["logistic", "probit"])
def test_bias_prior_gradient_splits_the_shared_one(data, likelihood):
    # with bias_s2 = s2 the model is the shared-prior one, and d/dlog s2 of the shared prior is
    # the sum of the two group derivatives (chain rule), the width derivative unchanged
    X, y = data
    shared = evidence_gradient(X, y, 0.8, 0.6, likelihood=likelihood)
    split = evidence_gradient(X, y, 0.8, 0.6, likelihood=likelihood, bias_s2=0.8)
    assert split.log_evidence == pytest.approx(shared.log_evidence, rel=1e-12)
    assert split.gradient[0] + split.gradient[2] == pytest.approx(shared.gradient[0], rel=1e-9)
    assert split.gradient[1] == pytest.approx(shared.gradient[1], rel=1e-9)
    assert split.gamma == pytest.approx(shared.gamma, rel=1e-12)


def test_optimiser_with_bias_prior_and_probit(data):
    # three hyper-parameters: the optimum beats its start and the shared-prior optimum (a special
    # case, bias_s2 = s2), and its projected gradient vanishes
    X, y = data
    box = (1e-3, 1e3)
    shared = maximise_evidence(X, y, starts=[(1.0, 0.5)], s2_bounds=box, likelihood=PROBIT)
    opt = maximise_evidence_bias(X, y, starts=[(shared.s2, shared.width, shared.s2)], s2_bounds=box,
                                 bias_s2_bounds=box, likelihood=PROBIT)
    assert opt.bias_s2 is not None and opt.runs[0].path.shape[1] == 3
    assert opt.log_evidence >= shared.log_evidence - 1e-9
    theta = np.log([opt.s2, opt.width, opt.bias_s2])
    lo, hi = np.log([box[0], 1e-2, box[0]]), np.log([box[1], 1e1, box[1]])
    free = (theta > lo + 1e-6) & (theta < hi - 1e-6)
    assert np.all(np.abs(opt.gradient[free]) < 1e-3), opt.gradient
    assert np.all(opt.gradient[theta <= lo + 1e-6] <= 1e-3)   # at a lower bound: no ascent inward


def _maximise(**kwargs):
    return lambda X, y: maximise_evidence(X, y, **kwargs)


def _maximise_s2(width=0.5, **kwargs):
    return lambda X, y: maximise_evidence_s2(X, y, width, **kwargs)


def _maximise_bias(bias_s2_bounds=(0.1, 1.0), **kwargs):
    return lambda X, y: maximise_evidence_bias(X, y, bias_s2_bounds=bias_s2_bounds, **kwargs)


BAD_INPUT = [
    pytest.param(_gradient(s2=-1.0), ValueError, "s2", id="s2"),
    pytest.param(_gradient(width=0.0), ValueError, "width", id="width"),
    pytest.param(_gradient(width="wide"), TypeError, "width", id="width-str"),
    pytest.param(_gradient(y_train=np.full(80, 2.0)), ValueError, "y_train", id="y_train-labels"),
    pytest.param(_gradient(y_train=np.zeros(79)), ValueError, "y_train", id="y_train-length"),
    pytest.param(_gradient(X_train=np.zeros(80)), ValueError, "X_train", id="X_train"),
    pytest.param(_maximise(s2_bounds=(1.0, 0.1)), ValueError, "s2_bounds", id="s2_bounds"),
    pytest.param(_maximise(width_bounds=(0.0, 1.0)), ValueError, r"width_bounds\[0\]", id="width_bounds"),
    pytest.param(_maximise(width_bounds=5.0), TypeError, "width_bounds", id="width_bounds-scalar"),
    pytest.param(_maximise(starts=[]), ValueError, "starts", id="starts-empty"),
    pytest.param(_maximise(starts=[(1.0, 20.0)]), ValueError, "width_bounds", id="starts-width"),
    pytest.param(_maximise(starts=[(1e3, 1.0)]), ValueError, "s2_bounds", id="starts-s2"),
    pytest.param(_maximise(starts=[1.0]), TypeError, r"starts\[0\] must be a 2-tuple", id="starts-scalar"),
    pytest.param(_maximise_s2(width=-1.0), ValueError, "width", id="fixed-width"),
    pytest.param(_maximise_s2(starts=[(1.0, 0.5)]), TypeError, r"starts\[0\] must be a starting s2",
                 id="starts-pair-with-fixed-width"),
    pytest.param(_maximise_s2(starts=[1e3]), ValueError, "s2_bounds", id="starts-fixed-width"),
    pytest.param(_maximise_s2(starts=[]), ValueError, "starts", id="starts-empty-fixed-width"),
    pytest.param(_maximise(max_iter=0), ValueError, "max_iter", id="max_iter"),
    pytest.param(_gradient(bias_s2=0.0), ValueError, "bias_s2", id="bias_s2"),
    pytest.param(_gradient(likelihood="probit"), TypeError, "likelihood", id="likelihood"),
    pytest.param(_maximise(likelihood=None), TypeError, "likelihood", id="likelihood-maximise"),
    pytest.param(_maximise_bias(bias_s2_bounds=(1.0, 0.1)), ValueError, "bias_s2_bounds", id="bias_s2_bounds"),
    pytest.param(_maximise_bias(starts=[(1.0, 0.5)]), TypeError,
                 r"starts\[0\] must be a 3-tuple \(s2, width, bias_s2\)", id="starts-pair-with-bias"),
    pytest.param(_maximise_bias(starts=[(1.0, 0.5, 5.0)]), ValueError,
                 "bias_s2_bounds", id="starts-bias-outside"),
    pytest.param(_maximise_bias(likelihood="probit"), TypeError, "likelihood", id="likelihood-bias"),
    pytest.param(_maximise(gtol=0.0), ValueError, "gtol", id="gtol"),
    pytest.param(lambda X, y: central_difference_gradient(X, y, 1.0, 1.0, step=-1e-4), ValueError, "step",
                 id="step"),
]


@pytest.mark.parametrize("call, exc, match", BAD_INPUT)
def test_rejects_bad_input(data, call, exc, match):
    with pytest.raises(exc, match=match):
        call(*data)
