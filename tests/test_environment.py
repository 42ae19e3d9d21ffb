"""environment.yml (conda) pins exactly the packages and versions of requirements.lock (pip), and
the supported Pythons (3.11 to 3.13) agree everywhere: pyproject.toml's requires-python, the
Makefile's search, environment.yml, and what the locked numpy and scipy support."""
import re
import sys
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from write_environment import NEWEST, OLDEST, read_lock  # noqa: E402

SUPPORTED = [f"3.{m}" for m in range(int(OLDEST.split(".")[1]), int(NEWEST.split(".")[1]) + 1)]


def _conda_pip_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.match(r"\s+- ([A-Za-z0-9_.\-\[\]]+)==(\S+)$", line)
        if m:
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    return pins


def test_conda_and_pip_pin_the_same_versions():
    lock, conda = read_lock(), _conda_pip_pins()
    assert lock, "requirements.lock is empty"
    assert conda == lock, {
        "only in lock": sorted(set(lock) - set(conda)),
        "only in environment.yml": sorted(set(conda) - set(lock)),
        "different": sorted(k for k in set(lock) & set(conda) if lock[k] != conda[k]),
    }


def test_python_and_jupyter_book_versions():
    env = (ROOT / "environment.yml").read_text()
    assert f"  - python>={OLDEST},<3.{int(NEWEST.split('.')[1]) + 1}\n" in env
    assert read_lock()["jupyter-book"] == "1.0.4.post1"  # 2.x no longer reads _config.yml/_toc.yml
    assert "%d.%d" % sys.version_info[:2] in SUPPORTED


def test_requires_python_admits_what_the_locked_numpy_and_scipy_support():
    """The wheel installs on every CPython from the oldest the locked numpy and scipy support
    (their own Requires-Python) up to 3.13, and the Makefile looks for the same ones."""
    from importlib.metadata import metadata

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    ours = SpecifierSet(project["requires-python"])
    assert [v for v in ("3.9", "3.10", *SUPPORTED) if v in ours] == [
        v for v in ("3.9", "3.10", *SUPPORTED)
        if all(v in SpecifierSet(metadata(name)["Requires-Python"]) for name in ("numpy", "scipy"))]
    assert OLDEST in ours and NEWEST in ours
    classifiers = {c.rsplit(" ", 1)[1] for c in project["classifiers"]
                   if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)}
    assert classifiers == set(SUPPORTED)
    makefile = (ROOT / "Makefile").read_text()
    low, high = (tuple(map(int, v.split("."))) for v in (OLDEST, NEWEST))
    assert f"{low} <= sys.version_info[:2] <= {high}" in makefile
    searched = re.search(r"\$\(foreach v,([0-9. ]+),", makefile).group(1).split()
    assert searched == SUPPORTED[::-1]   # newest first


def test_the_licences_are_there():
    """The code's MIT licence and the text's CC BY 4.0 licence, with their full texts, are in the
    repository and named in the wheel's metadata (pyproject.toml) and in CITATION.cff."""
    import yaml

    assert "Permission is hereby granted, free of charge" in (ROOT / "LICENSE").read_text()
    cc = (ROOT / "LICENSE-CC-BY-4.0").read_text()
    assert "Attribution 4.0 International Public License" in cc
    assert "Section 3 – License Conditions." in cc      # the legal code, not a summary
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE", "LICENSE-CC-BY-4.0"]
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and set(cff["license"]) == {"CC-BY-4.0", "MIT"}
    assert cff["title"] and cff["authors"] and cff["preferred-citation"]["type"] == "book"
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "creativecommons.org/licenses/by/4.0/" in config["html"]["extra_footer"]


def test_installed_versions_match_the_lock():
    from importlib.metadata import PackageNotFoundError, version

    wrong = {}
    for name, pinned in read_lock().items():
        try:
            got = version(name)
        except PackageNotFoundError:
            got = None
        if got != pinned:
            wrong[name] = (pinned, got)
    assert not wrong, wrong
