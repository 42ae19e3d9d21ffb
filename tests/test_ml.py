import numpy as np
import pytest

import lib


def test_full_batch_step_is_gradient_step(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    r = lib.fit_ml(Phi, y, learning_rate=0.01, n_steps=1)
    np.testing.assert_allclose(r.w, 0.01 * lib.gradient(np.zeros(Phi.shape[1]), Phi, y))
    assert r.train_ll[0] == pytest.approx(np.log(0.5))
    np.testing.assert_array_equal(r.steps, [0, 1])


def test_likelihood_increases_and_history_shapes(small_problem):
    d = small_problem
    r = lib.fit_ml(d["Phi"], d["y"], learning_rate=0.01, n_steps=200, Phi_test=d["Phi_test"], y_test=d["y_test"],
                   record_every=10)
    assert r.train_ll.shape == r.test_ll.shape == r.steps.shape == (21,)
    assert np.all(np.diff(r.train_ll) > 0)
    assert r.train_ll[-1] == pytest.approx(lib.log_likelihood(r.w, d["Phi"], d["y"]) / d["y"].size)


def test_minibatches_are_seeded(small_problem):
    Phi, y = small_problem["Phi"], small_problem["y"]
    a = lib.fit_ml(Phi, y, learning_rate=0.05, n_steps=50, batch_size=16, seed=3)
    b = lib.fit_ml(Phi, y, learning_rate=0.05, n_steps=50, batch_size=16, seed=3)
    c = lib.fit_ml(Phi, y, learning_rate=0.05, n_steps=50, batch_size=16, seed=4)
    np.testing.assert_array_equal(a.w, b.w)
    assert not np.allclose(a.w, c.w)


def test_convergence_test_stops_early(small_problem):
    r = lib.fit_ml(lib.linear_features(small_problem["X"]), small_problem["y"], learning_rate=0.01,
                   n_steps=100000, tol=1e-9)
    assert r.converged and r.steps[-1] < 100000
    changes = np.abs(np.diff(r.train_ll))
    assert changes[-1] < 1e-9 and np.all(changes[:-1] >= 1e-9)   # stopped at the first small change


def test_minibatches_partition_each_epoch():
    # one-hot rows: a step on batch B moves only the weights of the rows in B, so after one
    # epoch (N / B steps) every weight has moved exactly once, by eta (y_n - s(0))
    N, B = 60, 20
    y = (np.arange(N) % 3 == 0).astype(float)
    r = lib.fit_ml(np.eye(N), y, learning_rate=0.1, n_steps=N // B, batch_size=B, seed=1)
    np.testing.assert_allclose(r.w, 0.1 * (y - 0.5))


def test_callback_sees_every_record(small_problem):
    d = small_problem
    seen = []
    r = lib.fit_ml(d["Phi"], d["y"], learning_rate=0.01, n_steps=25, record_every=10,
                   callback=lambda k, w: seen.append((k, w.copy())))
    assert [k for k, _ in seen] == r.steps.tolist() == [0, 10, 20, 25]
    np.testing.assert_array_equal(seen[-1][1], r.w)
    # the weights passed at record k give the recorded average log-likelihood
    for (k, w), ll in zip(seen, r.train_ll):
        assert lib.log_likelihood(w, d["Phi"], d["y"]) / d["y"].size == pytest.approx(ll)


BAD_INPUT = [
    pytest.param({"learning_rate": 0.0, "n_steps": 5}, ValueError, "learning_rate must be a positive",
                 id="learning_rate"),
    pytest.param({"learning_rate": 0.1, "n_steps": 0}, ValueError, "n_steps must be a positive integer",
                 id="n_steps-zero"),
    pytest.param({"learning_rate": 0.1, "n_steps": 2.5}, TypeError, "n_steps must be a positive integer",
                 id="n_steps-float"),
    pytest.param({"learning_rate": 0.1, "n_steps": 5, "batch_size": 1000}, ValueError,
                 "batch_size must be at most the number of rows .60.", id="batch_size"),
    pytest.param({"learning_rate": 0.1, "n_steps": 5, "record_every": 0}, ValueError,
                 "record_every must be a positive integer", id="record_every"),
    pytest.param({"learning_rate": 0.1, "n_steps": 5, "tol": -1.0}, ValueError, "tol must be a positive",
                 id="tol"),
    pytest.param({"learning_rate": 0.1, "n_steps": 5, "Phi_test": np.ones((2, 41))}, ValueError,
                 "given together", id="y_test"),
    pytest.param({"learning_rate": 0.1, "n_steps": 5, "Phi_test": np.ones((2, 3)), "y_test": np.zeros(2)},
                 ValueError, "Phi_test must have 41 columns", id="Phi_test"),
    pytest.param({"learning_rate": 0.1, "n_steps": 5, "w0": np.zeros(2)}, ValueError, "w0 must have length 41",
                 id="w0"),
    pytest.param({"learning_rate": 0.1, "n_steps": 5, "callback": 3}, TypeError, "callback must be callable",
                 id="callback"),
]


@pytest.mark.parametrize("kwargs, exc, match", BAD_INPUT)
def test_rejects_bad_input(small_problem, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        lib.fit_ml(small_problem["Phi"], small_problem["y"], **kwargs)
