"""The README's "Using lib" example runs and prints what the README says it prints."""
import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _section(text: str, heading: str) -> str:
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_using_lib_example_prints_documented_values():
    section = _section(README.read_text(), "Using lib")
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    expected = re.search(r"prints\n\n```text\n(.*?)```", section, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == expected
    # The figures the report prints for its best setting (issue 2).
    for line in ("log evidence: -175.81", "test accuracy: 0.908", "(MAP): -0.218", "(predictive): -0.220"):
        assert line in expected
