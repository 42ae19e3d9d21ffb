"""Every public entry point of ``lib`` given bad input (``scripts/probe_lib.py``): each probe
must raise ValueError, TypeError or lib's own error, from lib's own check, naming the argument;
never return, warn or fail otherwise. The valid calls the probes start from must return without
a warning, give equal results for equivalent inputs (a list, Fortran order, read-only, float32,
integer labels), and every public name must be probed."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numpyro")      # the probe covers lib.checks.sampling

#: Defects the probe may still find, as ``(kind, function, argument, bad value)``: none. The test
#: fails on any defect.
KNOWN_IN_PRINTED: set = set()


def _probe_module():
    path = Path(__file__).resolve().parents[1] / "scripts" / "probe_lib.py"
    spec = importlib.util.spec_from_file_location("probe_lib", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module       # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_no_bad_input_is_accepted_silently_or_with_a_cryptic_message():
    n_functions, n_probes, defects = _probe_module().run()
    # issue 38 (one name per idea, lib.data on pooch, dead code) left 101 of 112 public functions
    assert n_functions >= 101 and n_probes >= 2260
    new = [d for d in defects if d[:4] not in KNOWN_IN_PRINTED]
    assert not new, "\n".join(" | ".join(d) for d in new)


def test_the_checker_requires_the_argument_named_as_the_subject():
    probe = _probe_module()
    assert probe.names_argument("s2 must be positive", "s2")
    assert probe.names_argument("s2_bounds[0] must be a positive finite number", "s2_bounds[0]")
    assert probe.names_argument("Phi_test and y_test must be given together", "y_test")
    assert probe.names_argument("bad argument 'width': negative", "width")
    assert not probe.names_argument("K is singular; rescale the inputs", "s2")
    assert not probe.names_argument("the precision at s2 = 1 is singular", "s2")
    assert not probe.names_argument("s2_max must be positive", "s2")


def test_the_checker_requires_lib_s_own_check():
    probe = _probe_module()

    def unchecked(A):                     # numpy raises, not lib: cryptic whatever it says
        return np.linalg.cholesky(A)

    kind, _ = probe._classify(unchecked, {"A": -np.eye(2)}, "A")
    assert kind == "cryptic"
    import lib
    kind, _ = probe._classify(lib.fit_laplace, {"Phi": np.ones((3, 2)), "y": np.zeros(3),
                                                 "s2": -1.0}, "s2")
    assert kind == "ok"


def test_equal_inputs_give_equal_results_or_a_defect():
    probe = _probe_module()
    assert probe.same({"a": np.ones(3), "b": (1.0, "x")}, {"a": np.ones(3) + 1e-15, "b": (1.0, "x")})
    assert not probe.same(np.ones(3), np.ones(3) + 1e-9)

    def list_unfriendly(x):               # gives another answer for a list than for an array
        return np.asarray(x).sum() if isinstance(x, np.ndarray) else 0.0

    pr = probe.Probe("toy", list_unfriendly, dict(x=np.arange(3.0)))
    kinds = {(d[0], d[3]) for d in probe.equivalence_defects(pr)}
    assert ("unequal", "a list") in kinds


def test_a_new_public_name_without_a_probe_is_a_defect():
    probe = _probe_module()
    import lib
    all_probes = probe.probes()
    assert not [d for d in probe.coverage_defects(all_probes)]
    fewer = [pr for pr in all_probes if pr.fn is not lib.accuracy]
    assert ("unprobed", "lib.scores.accuracy") in {d[:2] for d in probe.coverage_defects(fewer)}
