"""environment.yml (conda) pins exactly the packages and versions of requirements.lock (pip)."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from write_environment import read_lock  # noqa: E402


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
    assert "  - python=3.11\n" in env
    assert read_lock()["jupyter-book"] == "1.0.4.post1"  # 2.x no longer reads _config.yml/_toc.yml
    assert sys.version_info[:2] == (3, 11)


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
