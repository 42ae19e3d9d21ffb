"""Tests of lib.evidence_opt: the evidence gradient, the L-BFGS-B optimiser, MacKay's update."""
import numpy as np
import pytest

from lib.evidence_opt import central_difference_gradient, evidence_gradient, mackay_s2, maximise_evidence
from lib.features import rbf_features
from lib.laplace import ConvergenceError, fit_laplace


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
    X, y = data
    res = evidence_gradient(X, y, s2, width)
    theta = np.log([s2, width])
    h = 1e-4
    fd = np.array([
        (laplace_log_evidence(X, y, theta + h * e) - laplace_log_evidence(X, y, theta - h * e)) / (2 * h)
        for e in np.eye(2)
    ])
    np.testing.assert_allclose(res.gradient, fd, rtol=1e-5, atol=1e-7)
    assert res.log_evidence == pytest.approx(laplace_log_evidence(X, y, theta), rel=1e-12)
    np.testing.assert_allclose(res.explicit + res.implicit, res.gradient, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(central_difference_gradient(X, y, s2, width), fd, rtol=1e-12, atol=1e-12)


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


def test_mackay_fixed_point_is_stationary_up_to_the_implicit_term(data):
    X, y = data
    mk = mackay_s2(X, y, 0.5, s2_init=1.0, tol=1e-10)
    w = mk.posterior.w_map
    assert mk.s2 == pytest.approx(float(w @ w) / mk.gamma, rel=1e-9)      # the fixed point (E8)
    assert abs(mk.explicit[0]) < 1e-6                                    # explicit part (E4) vanishes
    assert mk.gradient[0] == pytest.approx(mk.implicit[0], abs=1e-6)     # what is left is implicit
    # The gradient optimiser at the same width is a true stationary point, and at least as good.
    opt = maximise_evidence(X, y, fixed_width=0.5, starts=[mk.s2])
    assert abs(opt.gradient[0]) < 1e-4
    assert opt.width == 0.5
    assert opt.log_evidence >= mk.log_evidence - 1e-9
    assert opt.runs[0].path.shape[1] == 2


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


def test_optimiser_respects_bounds(data):
    X, y = data
    opt = maximise_evidence(X, y, starts=[(0.5, 0.5)], s2_bounds=(0.1, 0.5), width_bounds=(0.2, 0.5))
    assert 0.1 - 1e-12 <= opt.s2 <= 0.5 + 1e-12
    assert 0.2 - 1e-12 <= opt.width <= 0.5 + 1e-12


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"s2": -1.0}, ValueError, "s2"),
        ({"width": 0.0}, ValueError, "width"),
        ({"width": "wide"}, TypeError, "width"),
        ({"y_train": np.full(80, 2.0)}, ValueError, "y_train"),
        ({"y_train": np.zeros(79)}, ValueError, "y_train"),
        ({"X_train": np.zeros(80)}, ValueError, "X_train"),
    ],
)
def test_evidence_gradient_rejects_bad_input(data, kwargs, error, match):
    X, y = data
    args = {"X_train": X, "y_train": y, "s2": 1.0, "width": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        evidence_gradient(**args)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"s2_bounds": (1.0, 0.1)}, ValueError, "s2_bounds"),
        ({"width_bounds": (0.0, 1.0)}, ValueError, r"width_bounds\[0\]"),
        ({"width_bounds": 5.0}, TypeError, "width_bounds"),
        ({"starts": []}, ValueError, "starts"),
        ({"starts": [(1.0, 20.0)]}, ValueError, "width_bounds"),
        ({"starts": [(1e3, 1.0)]}, ValueError, "s2_bounds"),
        ({"starts": [1.0]}, TypeError, r"starts\[0\]"),
        ({"fixed_width": -1.0}, ValueError, "fixed_width"),
        ({"fixed_width": 0.5, "starts": [(1.0, 0.5)]}, TypeError, "fixed_width is given"),
        ({"fixed_width": 0.5, "starts": [1e3]}, ValueError, "s2_bounds"),
        ({"max_iter": 0}, ValueError, "max_iter"),
        ({"gtol": 0.0}, ValueError, "gtol"),
    ],
)
def test_maximise_evidence_rejects_bad_input(data, kwargs, error, match):
    X, y = data
    with pytest.raises(error, match=match):
        maximise_evidence(X, y, **kwargs)


def test_central_difference_gradient_rejects_bad_step(data):
    X, y = data
    with pytest.raises(ValueError, match="step"):
        central_difference_gradient(X, y, 1.0, 1.0, step=-1e-4)


def test_mackay_rejects_bad_input_and_reports_non_convergence(data):
    X, y = data
    with pytest.raises(ValueError, match="width"):
        mackay_s2(X, y, -0.5)
    with pytest.raises(ValueError, match="s2_init"):
        mackay_s2(X, y, 0.5, s2_init=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        mackay_s2(X, y, 0.5, max_iter=0)
    with pytest.raises(ConvergenceError, match="max_iter=1"):
        mackay_s2(X, y, 0.5, max_iter=1)
