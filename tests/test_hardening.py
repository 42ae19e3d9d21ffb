"""Every public entry point of ``lib`` given bad input (``scripts/probe_lib.py``): each probe
must raise ValueError or TypeError naming the argument, never return, warn or fail otherwise.
The valid calls the probes start from must return without a warning."""
import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpyro")      # the probe covers lib.checks.sampling


def _probe_module():
    path = Path(__file__).resolve().parents[1] / "scripts" / "probe_lib.py"
    spec = importlib.util.spec_from_file_location("probe_lib", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module       # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_no_bad_input_is_accepted_silently_or_with_a_cryptic_message():
    n_functions, n_probes, defects = _probe_module().run()
    assert n_functions >= 65 and n_probes >= 1800
    assert not defects, "\n".join(" | ".join(d) for d in defects)
