"""`make pdf`: the whole book as one PDF (issues 19 and 30). Builds the one-page HTML book as the
Makefile does, prints it with scripts/print_pdf.py, and checks that the page it printed holds every
chapter, typeset math (no MathJax error) and every figure; then reads the PDF back as a teacher
would use it: a title page and a contents page whose page numbers are where the chapters start,
bookmarks for every part and chapter, a number on every page past the front matter, chapters
starting at the top of a page, none of the screen's controls, and nothing wider than the page's
text column (measured in print emulation before printing). One print serves every test (about
3 to 6 minutes on a busy 2-core machine)."""
import functools
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


@functools.lru_cache(maxsize=1)
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


@pytest.fixture(scope="session")
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


# --- The printed book (issue 30): front matter, page numbers, the outline, chapters on new pages,
# no controls, nothing clipped.

def _flat(text):
    """Whitespace collapsed, curly quotes straightened and ligatures split (the PDF's text has
    "ﬁ" for "fi"), as the PDF's text and the titles compare."""
    text = unicodedata.normalize("NFKC", text)
    return " ".join(text.replace("\u2019", "'").replace("\u2018", "'").split())


def _squeezed(text):
    """Without any white space: Chromium's text drops the space where a heading wraps."""
    return "".join(_flat(text).split())


@pytest.fixture(scope="session")
def book(printed):
    """The printed PDF read back: its outline as (depth, title, page index), each page's text
    lines, each page's label (its printed number), and how many pages the front matter has."""
    from pypdf import PdfReader

    _, pdf = printed
    reader = PdfReader(pdf)

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                yield from walk(item, depth + 1)
            else:
                yield depth, _flat(item.title), reader.get_destination_page_number(item)

    outline = list(walk(reader.outline, 0))
    pages = [[_flat(line) for line in page.extract_text().splitlines() if line.strip()]
             for page in reader.pages]
    labels = list(reader.page_labels)
    assert "1" in labels, labels[:5]
    uris = [str(annot.get_object()["/A"].get("/URI", ""))
            for page in reader.pages for annot in page.get("/Annots", None) or []
            if "/A" in annot.get_object()]
    return {"outline": outline, "pages": pages, "labels": labels, "front": labels.index("1"),
            "uris": uris}


def _body(lines, number):
    """A page's text lines without its page number (the footer's line, wherever the PDF's
    text order puts it)."""
    rest = list(lines)
    if number in rest:
        rest.remove(number)
    return rest


def _explorer_labels(html):
    """What the explorers' controls say on screen: each slider's label as it prints beside its
    value ("RBF width l = 0.50"), and the key under the panels."""
    import json
    import re

    page = (html / "chapters" / "intro.html").read_text()
    specs = re.findall(r'<div class="blc-explorer"[^>]*>\s*<script[^>]*>(.*?)</script>', page, re.S)
    labels = {s["label"] + " =" for spec in specs for s in json.loads(spec)["sliders"]}
    return specs, sorted(labels) + ["Shading and contours"]


def _chapter_starts(book):
    """Each chapter's title -> the index of the page its bookmark points to."""
    starts = {}
    for depth, title, page in book["outline"]:
        for t in _titles():
            numbered = re.fullmatch(r"\d+\." + re.escape(_squeezed(t)), _squeezed(title))
            if depth == 1 and numbered and t not in starts:
                starts[t] = page
    assert len(starts) == len(_titles()), sorted(set(_titles()) - set(starts))
    return starts


def test_the_front_matter_is_a_title_page_and_the_contents(book):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    front = book["front"]
    assert 2 <= front <= 4, front
    assert book["labels"][:front] == ["i", "ii", "iii", "iv"][:front], book["labels"][:front]
    title_page = " ".join(book["pages"][0])
    assert _flat(config["title"]) in title_page and _flat(config["author"]) in title_page
    assert "Printed 20" in title_page, title_page
    assert book["pages"][1][0] == "Contents", book["pages"][1][:3]


def test_the_outline_lists_every_part_and_chapter(book):
    outline = book["outline"]
    chapters = [_squeezed(t) for t in _titles()]
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    parts = [_squeezed(part["caption"]) for part in toc["parts"]]
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    # the contents page, the book's title (the start page), then each part, with its chapters
    # under it and their sections under them
    top = [_squeezed(title) for depth, title, _ in outline if depth == 0]
    assert top == ["Contents", _squeezed(config["title"]), *parts], top
    under = [_squeezed(title) for depth, title, _ in outline if depth == 1]
    missing = [t for t in chapters
               if not any(re.fullmatch(r"\d+\." + re.escape(t), title) for title in under)]
    assert not missing, (missing, under)
    assert sum(depth == 2 for depth, _, _ in outline) >= 3 * len(chapters), "few sections"
    # every bookmark points past the front matter, but the contents' own
    assert all(page >= book["front"] for _, title, page in outline if title != "Contents")


def test_the_contents_page_numbers_are_where_the_chapters_start(book):
    front = " ".join(line for page in book["pages"][1:book["front"]] for line in page)
    starts = _chapter_starts(book)
    wrong = {}
    for title, page in starts.items():
        # "3. The MAP estimate 57": the chapter's number, its title, its page
        found = re.search(r"\d+\. " + re.escape(_flat(title)) + r" (\d+)\b", front)
        printed = found and found.group(1)
        if printed != book["labels"][page]:
            wrong[title] = (printed, book["labels"][page])
    assert not wrong, wrong
    # and each part's page range
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    for part in toc["parts"]:
        assert re.search(re.escape(_flat(part["caption"])) + r" \d+(\u2013\d+)?\b", front), \
            part["caption"]


def test_every_page_carries_its_number(book):
    pages, labels, front = book["pages"], book["labels"], book["front"]
    assert labels[front:] == [str(n) for n in range(1, len(pages) - front + 1)]
    unnumbered = [labels[i] for i in range(front, len(pages)) if labels[i] not in pages[i]]
    assert not unnumbered, unnumbered


def test_every_chapter_starts_at_the_top_of_a_page(book):
    wrong = {}
    for title, page in _chapter_starts(book).items():
        body = _body(book["pages"][page], book["labels"][page])
        # the title ("3. The MAP estimate") is the page's first line (a long one may wrap)
        first = _squeezed(" ".join(body[:2]))
        if not re.match(r"\d+\." + re.escape(_squeezed(title)), first):
            wrong[title] = (book["labels"][page], body[:2])
    assert not wrong, wrong


def test_no_page_prints_the_screen_controls(printed, book):
    _, pdf = printed
    specs, explorer = _explorer_labels(pdf.parent / "_build" / "singlehtml")
    assert specs, "the page has no explorer: the check of their controls checks nothing"
    # the fold bars say "Show code cell source" (the start page names them "Show code")
    controls = ["Show code cell", "Hide code cell", "Copy to clipboard", *explorer]
    found = {(book["labels"][i], c) for i, lines in enumerate(book["pages"]) for c in controls
             if c in " ".join(lines)}
    assert not found, sorted(found)


def test_the_links_stay_inside_the_pdf(printed, book):
    """A cross-reference is a link to its place in the PDF, not to the page the print served on
    127.0.0.1."""
    seen, _ = printed
    assert seen["links"]["inside"] > 100, seen["links"]
    local = [u for u in book["uris"] if "127.0.0.1" in u or "localhost" in u]
    assert not local, local[:5]


def test_nothing_is_wider_than_the_text_column(printed):
    """Measured on the page as it prints (print media, the printable width), after the print
    script shrank the equations and tables that were too wide: no element's box passes the
    column's edges (but for what an element clips on purpose inside its own box)."""
    import print_pdf

    seen, _ = printed
    overflow = seen["overflow"]
    assert abs(overflow["column"] - print_pdf.PRINTABLE_WIDTH_PX) < 60, overflow["column"]
    assert overflow["count"] == 0, overflow["wide"]


def test_the_course_alone_leaves_out_the_reference_part_only():
    import print_pdf

    parts = print_pdf.toc_parts()
    out = print_pdf.course_leaves_out(parts)
    reference = [f for p in parts if p["caption"].startswith("Reference") for f in p["files"]]
    assert reference and set(reference) <= set(out)
    assert set(out) - set(reference) == {"chapters/errata"}
