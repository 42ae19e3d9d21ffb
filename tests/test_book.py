"""The book builds strictly (warnings are errors) from the stored outputs, without executing."""
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_config_never_executes_committed_notebooks():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off"


def test_every_chapter_is_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text()
    chapters = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
    missing = [c for c in chapters if f"file: chapters/{c}\n" not in toc]
    assert not missing, f"chapters not listed in _toc.yml: {missing}"


def test_strict_book_build(tmp_path):
    jb = Path(sys.executable).with_name("jupyter-book")
    r = subprocess.run(
        [str(jb), "build", str(ROOT), "--path-output", str(tmp_path), "-W", "-n", "--keep-going"],
        capture_output=True, text=True, timeout=1200,
    )
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-5000:]
    assert (tmp_path / "_build" / "html" / "index.html").is_file()
