"""The book builds strictly (warnings are errors) from the stored outputs, without executing, and
its pages are self-contained: MathJax and every other script, style and font come from the book's
own files (tests/test_browser.py checks the same in a browser)."""
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _config():
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def test_config_never_executes_committed_notebooks():
    assert _config()["execute"]["execute_notebooks"] == "off"


def test_every_chapter_is_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text()
    chapters = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
    missing = [c for c in chapters if f"file: chapters/{c}\n" not in toc]
    assert not missing, f"chapters not listed in _toc.yml: {missing}"


def test_chapters_are_numbered():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    for part in toc["parts"]:
        files = [c["file"] for c in part["chapters"]]
        if files != ["chapters/bibliography"]:
            assert part.get("numbered") is True, f"part {part['caption']!r} is not numbered"


def test_mathjax_is_local():
    config = _config()["sphinx"]["config"]
    assert "://" not in config["mathjax_path"], "MathJax must not come from a CDN"
    assert config["html_theme_options"]["use_download_button"] is True


def test_strict_book_build(book_build):
    result, html = book_build
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    assert (html / "index.html").is_file()


def test_pages_load_nothing_from_elsewhere(book_build):
    """No <script src>, <link href> or <img src> names another host; every page with math loads
    the book's own MathJax, whose file and fonts are in _static/mathjax/."""
    _, html = book_build
    assert (html / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()
    assert list((html / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*"))
    external = re.compile(
        r"<(?:script|img|iframe)\b[^>]*\bsrc=\"(?:https?:)?//|<link\b[^>]*\bhref=\"(?:https?:)?//"
    )
    pages = sorted(html.rglob("*.html"))
    assert pages
    with_math = 0
    for page in pages:
        text = page.read_text()
        assert not external.search(text), f"{page.relative_to(html)} loads from another host"
        if 'class="math' in text:
            with_math += 1
            local_mathjax = r'<script [^>]*src="(\.\./)*_static/mathjax/tex-mml-chtml\.js'
            assert re.search(local_mathjax, text), page
    assert with_math > 0
