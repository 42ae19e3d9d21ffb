"""`make pdf`: the whole book as one PDF (issue 19). Builds the one-page HTML book as the Makefile
does, prints it with scripts/print_pdf.py, and checks that the page it printed holds every
chapter, typeset math (no MathJax error) and every figure, and that the file is a PDF of many
pages."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


def _titles():
    """Each chapter's title: its first '# ' heading."""
    import nbformat

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    titles = []
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            path = ROOT / f"{chapter['file']}.ipynb"
            if path.exists():
                cells = nbformat.read(path, as_version=4).cells
                text = next(c.source for c in cells if c.cell_type == "markdown"
                            and c.source.lstrip().startswith("# "))
                titles.append(text.lstrip()[2:].splitlines()[0].strip())
    return titles


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        if os.environ.get("CI"):
            pytest.fail("Chromium and chromedriver are needed for the PDF (.ci/run installs them)")
        pytest.skip("Chromium or chromedriver is not installed")
    import print_pdf

    subprocess.run([sys.executable, str(ROOT / "scripts" / "install_mathjax.py")], check=True)
    out = tmp_path_factory.mktemp("pdf")
    jb = Path(sys.executable).with_name("jupyter-book")
    build = subprocess.run([str(jb), "build", str(ROOT), "--builder", "singlehtml",
                            "--path-output", str(out), "-W", "-n", "--keep-going"],
                           capture_output=True, text=True, timeout=1200)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    pdf = out / "book.pdf"
    seen = print_pdf.print_book(out / "_build" / "singlehtml", pdf)
    return seen, pdf


def test_the_pdf_holds_every_chapter(printed):
    seen, pdf = printed
    assert pdf.read_bytes()[:5] == b"%PDF-"
    # the page typesets straight quotes as curly ones ("The report's" -> "The report’s")
    headings = [h.replace("\u2019", "'") for h in seen["chapters"]]
    missing = [t for t in _titles() if not any(t in heading for heading in headings)]
    assert not missing, (missing, seen["chapters"])
    assert seen["pages"] >= 10 * len(_titles()) // 2, seen["pages"]


def test_the_pdf_has_typeset_math_and_every_figure(printed):
    seen, _ = printed
    assert seen["mathjax"] == "typeset"
    assert seen["formulas"] > 1000 and seen["math_errors"] == [], seen["math_errors"]
    assert seen["images"] >= 40 and seen["broken_images"] == 0, seen
