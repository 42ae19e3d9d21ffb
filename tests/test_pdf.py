"""`make pdf`: the whole book as one PDF (issues 19 and 30). Builds the one-page HTML book as the
Makefile does, prints it with scripts/print_pdf.py, and checks that the page it printed holds every
chapter, typeset math (no MathJax error) and every figure; then reads the PDF back as a teacher
would use it: a title page and a contents page whose page numbers are where the chapters start,
bookmarks for every part and chapter, a number on every page past the front matter, chapters
starting at the top of a page, none of the screen's controls, and nothing wider than the page's
text column (measured in print emulation before printing). Issue 36: bookmarks that read as the
headings (math as text, none doubled), no page blank or holding only a heading, no screen-only
words ("Slide", "click", "Show code") outside print-only text, figures at 200 dpi or more with
their text at 7 pt or more; issue 35: the core at most 100 pages, no core chapter over 14;
issue 37: the title, authors and licence in the PDF's metadata and on its title page. One print
serves every test (about 3 to 15 minutes on a busy 2-core machine)."""
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
def printed(book_build):
    """The one-page HTML book, built as `make pdf` builds it but on top of the session's HTML
    build (tests/conftest.py): into the same output folder, so Sphinx reuses the chapters it
    has read and only writes the page; then printed. ``(what the page held, the PDF's path)``;
    the PDF lies beside ``_build/singlehtml``, which some tests read."""
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        if os.environ.get("CI"):
            pytest.fail("Chromium and chromedriver are needed for the PDF (.ci/run installs them)")
        pytest.skip("Chromium or chromedriver is not installed")
    import print_pdf

    _, html = book_build
    out = html.parents[1]                      # <out>/_build/html -> <out>
    jb = Path(sys.executable).with_name("jupyter-book")
    build = subprocess.run([str(jb), "build", str(ROOT), "--builder", "singlehtml",
                            "--path-output", str(out), "-W", "-n", "--keep-going"],
                           capture_output=True, text=True, timeout=1200)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "0 added, 0 changed, 0 removed" in build.stdout, "the chapters were read again"
    pdf = out / "book.pdf"
    return print_pdf.print_book(out / "_build" / "singlehtml", pdf), pdf


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


def page_texts(pdf):
    """Each page's text lines, top to bottom, as poppler's ``pdftotext -layout`` reads them
    (Debian's poppler-utils: a few seconds where pypdf's ``extract_text`` takes a minute; its
    order follows the page, where pypdf's follows the drawing)."""
    if not shutil.which("pdftotext"):
        message = ("pdftotext is needed to read the PDF's text: install Debian's poppler-utils "
                   "(sudo apt-get install poppler-utils; .ci/run does this)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    text = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(pdf), "-"],
                          capture_output=True, text=True, check=True).stdout
    return [[_flat(line) for line in page.splitlines() if line.strip()]
            for page in text.split("\f")]


@pytest.fixture(scope="session")
def book(printed):
    """The printed PDF read back: its outline as (depth, title, page index), each page's text
    lines (:func:`page_texts`), each page's label (its printed number), and how many pages the
    front matter has."""
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
    pages = page_texts(pdf)[:len(reader.pages)]
    assert len(pages) == len(reader.pages), (len(pages), len(reader.pages))
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
    """What the explorers' controls say on screen: each slider's label with the value it starts
    at ("RBF width l = 0.158": the label alone reads as prose, "RBF width l = 0.1", where the
    PDF's text holds the formula's letters), and the key under the panels."""
    import json
    import re

    page = (html / "chapters" / "intro.html").read_text()
    specs = re.findall(r'<div class="blc-explorer"[^>]*>\s*<script[^>]*>(.*?)</script>', page, re.S)
    labels = {f"{s['label']} = {s['text'][s['initial']]}"
              for spec in specs for s in json.loads(spec)["sliders"]}
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
    # a part's first chapter starts below the part's title, on the same page (issue 36.15)
    captions = [_squeezed(part["caption"])
                for part in yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]]
    wrong = {}
    for title, page in _chapter_starts(book).items():
        body = _body(book["pages"][page], book["labels"][page])
        # the title ("3. The MAP estimate") is the page's first line (a long one may wrap)
        first = _squeezed(" ".join(body[:4]))
        for caption in captions:
            if first.startswith(caption):
                first = first[len(caption):]
                break
        if not re.match(r"\d+\." + re.escape(_squeezed(title)), first):
            wrong[title] = (book["labels"][page], body[:2])
    assert not wrong, wrong


# --- Issue 36: bookmarks, pages, screen-only text, figures; issue 35: the core's length; issue
# 37: the PDF's metadata and licence.

def _heading_texts_in_html(html):
    """Each heading of the one-page book as its HTML has it (tags and the link mark dropped),
    with the TeX of each inline formula: [(text, [tex, ...])]."""
    import html as htmllib

    page = (html / "chapters" / "intro.html").read_text()
    out = []
    for inner in re.findall(r"<h[1-6][^>]*>(.*?)</h[1-6]>", page, re.S):
        inner = re.sub(r'<a class="headerlink".*?</a>', "", inner, flags=re.S)
        tex = [htmllib.unescape(t) for t in
               re.findall(r'<span class="math[^"]*">\\\((.*?)\\\)</span>', inner, re.S)]
        text = htmllib.unescape(re.sub(r"<[^>]+>", "", inner))
        out.append((" ".join(text.split()), tex))
    return out


def test_the_bookmarks_read_as_the_headings(printed, book):
    """Issue 36.14: each bookmark is its heading's text, once (Chromium's own titles double some,
    "3.5. 3.5. The MAP ...The MAP ..."), with its math as text ("s² and l", not "  and  "),
    and the words apart where a heading wraps ("maximum-likelihood path")."""
    seen, pdf = printed
    titles = [t for _, t, _ in book["outline"] if t != "Contents"]
    headings = [_flat(h["text"]) for h in seen["headings"]]
    assert titles == headings, [(t, h) for t, h in zip(titles, headings) if t != h][:10]
    doubled = [t for t in titles
               if re.match(r"(\d+(\.\d+)*\.) \1", t)
               or (len(t) > 8 and t[:len(t) // 2].strip() == t[len(t) // 2:].strip())]
    assert not doubled, doubled
    gaps = [t for t in titles if "  " in t or re.search(r"\s[,.;:)]|\(\s|\s$|^\s", t)]
    assert not gaps, gaps
    # against the HTML itself: a heading without math is its bookmark, word for word; one with
    # math has each formula's letters and digits, in order, in its bookmark
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    parts = [(part["caption"], []) for part in toc["parts"]]
    html_headings = _heading_texts_in_html(pdf.parent / "_build" / "singlehtml") + parts
    in_html = [(_flat(text), tex) for text, tex in html_headings if _squeezed(text)]
    wrong = []
    for title in titles:
        match = next(((text, tex) for text, tex in in_html if not tex and text == title), None)
        if match:
            continue
        candidates = [(text, tex) for text, tex in in_html if tex]
        letters = unicodedata.normalize("NFKC", title)
        ok = False
        for text, tex in candidates:
            words = [w for w in re.split(r"\\\(.*?\\\)", text) if w.strip()]
            if not all(_squeezed(w) in _squeezed(title) for w in words):
                continue
            needed = "".join(re.findall(r"[A-Za-z0-9]", re.sub(r"\\[A-Za-z]+", "", "".join(tex))))
            if re.search(".*?".join(map(re.escape, needed)), letters):
                ok = True
                break
        if not ok:
            wrong.append(title)
    # (a title matched neither way: a heading the HTML spells otherwise)
    assert not wrong, wrong


def _page_images(pdf):
    """Each page's count of drawn images (figures, and the rasters Chromium makes of shadows)."""
    from pypdf import PdfReader

    counts = []
    for page in PdfReader(pdf).pages:
        xobjects = (page.get("/Resources") or {}).get("/XObject") or {}
        counts.append(sum(1 for x in xobjects.values()
                          if x.get_object().get("/Subtype") == "/Image"))
    return counts


def test_no_page_is_blank_or_holds_only_a_heading(printed, book):
    """Issue 36.15: every page past the front matter holds body text beyond its headings (two
    lines at least: not a reference's last line alone) or a figure: no page holds only a part's
    or a chapter's title, and none is blank."""
    _, pdf = printed
    images = _page_images(pdf)
    by_page = {}
    for _, title, page in book["outline"]:
        by_page.setdefault(page, []).append(_squeezed(title))
    poor = []
    for i in range(book["front"], len(book["pages"])):
        body = _body(book["pages"][i], book["labels"][i])
        text = [line for line in body
                if not any(_squeezed(line) and _squeezed(line) in t for t in by_page.get(i, []))]
        if len(text) < 2 and not images[i]:
            poor.append((book["labels"][i], body[:3]))
    assert not poor, poor


#: Words that say what only the screen does: moving a slider, clicking, dragging, the fold bars'
#: labels, the maintainers' commands (issue 36.16), regular expressions matched as whole words; a
#: word inside a `print-only` container (its text is left out first) may say them.
SCREEN_WORDS = (r"Slide(?! \d)", r"sliders?", r"click(?:s|ed|ing)?", r"drag(?:s|ged|ging)?",
                r"hover(?:s|ed|ing)?", r"Show code", r"Hide code", r"folded under", r"make test")


def _spaced(text):
    """``text`` with each run of whitespace made one space (words stay apart: squeezed, "with
    overlapping" would read as "hover", "slide read" as "slider")."""
    return re.sub(r"\s+", " ", text)


def _screen_words(text):
    """Each screen-only word's places in ``text`` (spaced, :func:`_spaced`), as whole words:
    [(word, start, end)]."""
    return [(word, hit.start(), hit.end()) for word in SCREEN_WORDS
            for hit in re.finditer(r"(?<!\w)" + word + r"(?![\w\d])", text)]


def test_no_screen_only_words_in_print(printed, book):
    seen, _ = printed
    allowed = {}
    for block in seen["print_only"]:
        for word, _, _ in _screen_words(_spaced(block)):
            allowed[word] = allowed.get(word, 0) + 1
    found = {}
    for i in range(book["front"], len(book["pages"])):
        text = _spaced(" ".join(book["pages"][i]))
        for word, start, end in _screen_words(text):
            found.setdefault(word, []).append(
                (book["labels"][i], text[max(0, start - 30):end + 30]))
    extra = {word: hits for word, hits in found.items() if len(hits) > allowed.get(word, 0)}
    assert not extra, extra


def test_figures_print_sharp_and_their_text_at_least_7_pt(printed):
    """Issue 36.17: every figure prints at 200 dots to the inch or more (a chapter's PNG holds
    lib.book.plots.PIXEL_SCALE times its natural pixels) and at no less than 0.7 of the size it
    was drawn, so the style's smallest text (10 pt tick labels, lib/book/book.mplstyle) prints
    at 7 pt or more."""
    seen, pdf = printed
    figures = seen["figures"]
    assert len(figures) >= 40, len(figures)
    soft = [(f["name"], round(f["dpi"])) for f in figures if f["dpi"] < 199]
    assert not soft, f"{len(soft)} figures under 200 dpi as printed: {soft[:10]}"
    small = [(f["name"], round(f["scale"], 2)) for f in figures if 10 * f["scale"] < 7]
    assert not small, f"figures whose 10 pt text prints under 7 pt: {small}"
    if shutil.which("pdfimages"):              # the PDF as printed: no raster under 199 ppi
        listing = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True,
                                 text=True, check=True).stdout.splitlines()[2:]
        low = [row.split()[0] for row in listing
               if row.split()[2] == "image" and int(row.split()[12]) < 199]
        assert not low, f"images under 199 ppi on pages {sorted(set(low))[:20]}"


def _core(book):
    """The core's pages: from chapter 1's first page to the last page before the first part
    whose caption starts "Optional" (page indices), and each core chapter's page count."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    parts = [part["caption"] for part in toc["parts"]]
    optional = next(i for i, c in enumerate(parts) if c.startswith("Optional"))
    core_parts = [_squeezed(c) for c in parts[:optional]]
    outline = book["outline"]
    # (parts, and numbered chapters: the start page's sections sit under the book's title, which
    # may read as a part's caption)
    tops = [(depth, _squeezed(title), page) for depth, title, page in outline
            if depth == 0 or (depth == 1 and re.match(r"\d+\.", title))]
    first_optional = next(page for depth, title, page in tops
                          if depth == 0 and title == _squeezed(parts[optional]))
    chapters, in_core = [], False
    for depth, title, page in tops:
        if depth == 0:
            in_core = title in core_parts
        elif in_core:
            chapters.append((title, page))
    assert chapters and chapters[0][0].startswith("1."), chapters[:2]
    starts = [page for _, page in chapters] + [first_optional]
    lengths = {title: after - page for (title, page), after in zip(chapters, starts[1:])}
    return chapters[0][1], first_optional - 1, lengths


def test_the_core_is_at_most_100_pages_and_no_chapter_over_14(book):
    """Issue 35 (Must show): the core, chapter 1's first page to the page before the first
    optional part, read from the PDF's outline, is at most 100 A4 pages, and no core chapter
    takes more than 14."""
    first, last, lengths = _core(book)
    pages = last - first + 1
    long = {title: n for title, n in lengths.items() if n > 14}
    assert pages <= 100 and not long, (f"core: {pages} pages (pp. {book['labels'][first]}-"
                                       f"{book['labels'][last]}); chapters over 14: {long}")


def test_the_pdf_says_its_title_authors_and_licence(printed, book):
    """Issue 37: the PDF's metadata (pdfinfo) and its title page carry the title, the authors'
    line and the licence; the licence the print says is the one CITATION.cff and the pages'
    footer (_config.yml) name."""
    import html as htmllib

    from pypdf import PdfReader

    import print_pdf

    _, pdf = printed
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    line = print_pdf.licence_line()
    info = PdfReader(pdf).metadata
    assert info.title == config["title"] and info.author == config["author"], info
    assert line in info.subject and info["/Rights"] == line, info
    xmp = PdfReader(pdf).trailer["/Root"]["/Metadata"].get_object().get_data().decode()
    assert f"<rdf:li xml:lang=\"x-default\">{line}</rdf:li></rdf:Alt></dc:rights>" in xmp
    if shutil.which("pdfinfo"):
        shown = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True,
                               check=True).stdout
        assert config["title"] in shown and config["author"] in shown and line in shown, shown
    assert _flat(line) in " ".join(book["pages"][0]), book["pages"][0]
    # one licence throughout
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["license"] == [spdx for _, spdx, _ in print_pdf.LICENCES.values()]
    footer = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", config["html"]["extra_footer"]))
                      .replace("\u00a0", " ").split())
    assert all(name in footer for name, _, _ in print_pdf.LICENCES.values()), footer


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
