"""Write environment.yml from requirements.lock, so conda and pip install the same versions.

Run by ``make lock``; ``tests/test_environment.py`` checks that the two files agree.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The Pythons the book supports and checks (pyproject.toml's requires-python admits them, the
#: Makefile looks for them; tests/test_environment.py checks that the three agree). The lock
#: serves each of them.
OLDEST, NEWEST = "3.11", "3.13"


def read_lock(path: Path = ROOT / "requirements.lock") -> dict[str, str]:
    """``{normalised name: version}`` of every ``name==version`` line of the pip lock."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


def main() -> None:
    lines = [
        "# Generated from requirements.lock by scripts/write_environment.py (make lock): do not edit.",
        "name: blc-book",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        f"  - python>={OLDEST},<3.{int(NEWEST.split('.')[1]) + 1}",
        "  - pip",
        "  - pip:",
    ]
    lines += [f"      - {name}=={version}" for name, version in sorted(read_lock().items())]
    lines.append("      - -e .")
    (ROOT / "environment.yml").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
