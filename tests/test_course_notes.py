"""The book's two layers (issue 27). Every course and optional chapter has the shape of a chapter of
course notes (issue 18): learning objectives at the top, key takeaways, exercises whose solutions
are collapsed and assert their answers. The course (the core path) checks no source: no source
check, no erratum, no report-only code. The optional chapters end with their source check, errata
collapsed. The reference part reproduces the report: its errata collapsed, its numbers beside ours."""
import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
#: The core path (the start page and the table of contents say which chapters are optional).
CORE = ("data", "ml_lab", "map", "laplace", "evidence", "predictive", "grid", "evidence_opt",
        "ground_truth")
OPTIONAL = ("gp_view", "probit_model", "softmax")
#: The reference part, "The report, reproduced", after the optional chapters.
REFERENCE = ("report_theory", "report_base_case", "report_search", "report_ml_lab")
#: Depth moved out of the core chapters (issue 35): the part "Optional: going deeper", read from
#: the table of contents; each such chapter extends one core chapter and says it is optional.
DEEPER = tuple(c["file"].split("/")[-1] for part in yaml.safe_load(
    (ROOT / "_toc.yml").read_text())["parts"] if part["caption"].startswith("Optional: going deeper")
    for c in part["chapters"])
MIN_EXERCISES = {**{name: 3 for name in CORE}, **{name: 2 for name in OPTIONAL + DEEPER}}


def _cells(name):
    return nbformat.read(ROOT / "chapters" / f"{name}.ipynb", as_version=4).cells


def _headings(cells):
    """(cell index, level, title) of every markdown heading, in order."""
    out = []
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                m = re.match(r"^(#{1,6})\s+(.*)", line)
                if m:
                    out.append((i, len(m.group(1)), m.group(2).strip()))
    return out


def _section_start(headings, title_pattern):
    found = [i for i, level, title in headings if level == 2 and re.match(title_pattern, title)]
    return found[0] if found else None


def _toc_parts():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [(part["caption"], [c["file"].split("/")[-1] for c in part["chapters"]])
            for part in toc["parts"]]


def test_the_core_path_is_the_table_of_contents_order():
    parts = _toc_parts()
    files = [name for _, names in parts for name in names]
    assert files[:len(CORE)] == list(CORE)
    optional = [caption for caption, names in parts if set(names) & set(OPTIONAL)]
    assert optional and all(caption.startswith("Optional") for caption in optional)


def test_the_reference_part_is_one_part_after_the_optional_chapters():
    parts = _toc_parts()
    files = [name for _, names in parts for name in names]
    holding = [names for _, names in parts if set(names) & set(REFERENCE)]
    assert holding == [list(REFERENCE)], "the reference part is one part, in the report's order"
    assert max(files.index(n) for n in CORE + OPTIONAL + DEEPER) < files.index(REFERENCE[0])


@pytest.mark.parametrize("name", CORE + OPTIONAL + DEEPER)
def test_objectives_first_then_takeaways_then_exercises(name):
    cells = _cells(name)
    headings = _headings(cells)
    first_section = next(i for i, level, _ in headings if level == 2)
    objectives = [i for i, c in enumerate(cells) if c.cell_type == "markdown"
                  and re.search(r"^:::+\{admonition\} Learning objectives", c.source, re.M)]
    assert objectives and objectives[0] <= first_section, "learning objectives before section 1"
    items = re.findall(r"^- ", cells[objectives[0]].source, re.M)
    assert 3 <= len(items) <= 6, f"{len(items)} learning objectives"
    takeaways = _section_start(headings, r"Key takeaways")
    exercises = _section_start(headings, r"Exercises")
    assert takeaways is not None and exercises is not None
    assert takeaways < exercises


@pytest.mark.parametrize("name", CORE + OPTIONAL + DEEPER)
def test_exercises_have_collapsed_solutions_that_assert(name):
    cells = _cells(name)
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    labels = re.findall(r"```\{exercise\}[^\n]*\n:label: (\S+)", text)
    assert len(labels) >= MIN_EXERCISES[name], f"{len(labels)} exercises"
    for label in labels:
        pattern = r"```\{solution-start\} " + re.escape(label) + r"\n:class: dropdown"
        start = [(i, m.end()) for i, c in enumerate(cells) if c.cell_type == "markdown"
                 for m in re.finditer(pattern, c.source)]
        assert len(start) == 1, f"exercise {label}: no collapsed solution"
        (first, offset), = start
        # the solution ends at the first solution-end after its start (in the same cell or later)
        end = next(i for i in range(first, len(cells)) if cells[i].cell_type == "markdown"
                   and "```{solution-end}" in cells[i].source[offset if i == first else 0:])
        start = [first]
        code = [c for c in cells[start[0]:end + 1] if c.cell_type == "code"]
        assert code, f"exercise {label}: the solution runs no code"
        assert any(re.search(r"^\s*assert\b", c.source, re.M) for c in code), \
            f"exercise {label}: the solution asserts nothing"
        assert all(c.execution_count is not None for c in code), f"{label}: not executed"


def _errata(cells):
    """(cell index, source) of every markdown cell holding an erratum."""
    return [(i, c.source) for i, c in enumerate(cells) if c.cell_type == "markdown"
            and re.search(r"^:::+\{admonition\} Erratum: ", c.source, re.M)]


def _assert_collapsed(cells):
    """Every erratum and remark box is collapsed (``:class: dropdown ...``)."""
    for source in (c.source for c in cells if c.cell_type == "markdown"):
        for box in re.findall(r"^:::+\{admonition\} (?:Erratum|Remark): [^\n]*\n([^\n]*)", source,
                              re.M):
            assert re.match(r":class: dropdown", box), f"an erratum is not collapsed: {box!r}"


@pytest.mark.parametrize("name", CORE)
def test_the_course_checks_no_source(name):
    """No source check, no erratum, no report-only code in the core path (issue 27)."""
    cells = _cells(name)
    headings = _headings(cells)
    assert _section_start(headings, r"Checking") is None
    assert not _errata(cells), "an erratum in the course"
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert not re.search(r"\blib\.report\b|\bfrom lib import report\b|\breport\.\w", code)


@pytest.mark.parametrize("name", OPTIONAL)
def test_a_source_check_is_the_last_section_with_its_errata_collapsed(name):
    cells = _cells(name)
    headings = _headings(cells)
    errata = _errata(cells)
    last = [title for _, level, title in headings if level == 2][-1]
    if errata:
        assert last.startswith("Checking"), f"the last section is {last!r}"
        check = _section_start(headings, r"Checking")
        assert all(i >= check for i, _ in errata), "an erratum sits in the teaching text"
    _assert_collapsed(cells)


@pytest.mark.parametrize("name", REFERENCE)
def test_a_reference_chapter_compares_and_collapses_its_errata(name):
    cells = _cells(name)
    _assert_collapsed(cells)
    outputs = "\n".join(out.get("data", {}).get("text/plain", "") + out.get("text", "")
                        for c in cells if c.cell_type == "code" for out in c.get("outputs", []))
    assert re.search(r"reproduced", outputs), "no report | ours | reproduced? table"


@pytest.mark.parametrize("name", CORE + OPTIONAL + DEEPER + REFERENCE)
def test_no_stored_output_is_a_warning_or_an_error(name):
    # nbval does not compare stderr (conftest.py), so a warning printed by a cell would reach the
    # page unnoticed: the committed outputs must hold none, and no error.
    found = []
    for i, cell in enumerate(_cells(name)):
        for out in cell.get("outputs", []):
            text = out.get("text", "") + out.get("data", {}).get("text/plain", "")
            if (out.get("name") == "stderr" or out.output_type == "error"
                    or re.search(r"\w+Warning\b", text)):
                found.append((i, out.get("name", out.output_type), text[:200]))
    assert not found, found


def test_word_budgets():
    """The course at most 22,000 words, the reference part at most 10,000 (issue 27), counted as
    scripts/chapter_words.py counts them (whitespace-separated words of the markdown cells)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("chapter_words", ROOT / "scripts" / "chapter_words.py")
    words = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(words)
    total = {part: sum(sum(words.count(ROOT / "chapters" / f"{name}.ipynb")) for name in names)
             for part, names in [("course", CORE), ("reference", REFERENCE)]}
    assert total["course"] <= 22_000, total
    assert total["reference"] <= 10_000, total


#: The five source documents: not published, so a reader cannot look anything up in them.
UNPUBLISHED_KEYS = ("mustafa2018report", "notesch7", "hennig2023lecture14", "barrett2013classifier",
                    "ting2024lecture9")
_UNPUBLISHED_WORDS = (r"(lecture notes|the notes\b|notes'|lecture 9|lecture 14|the report\b|"
                      r"report's|Barrett|Ting\b|Hennig|Mustafa|the slides|the note\b|note's|"
                      + "|".join(UNPUBLISHED_KEYS) + ")")
#: A pointer into a document: a figure, equation, slide, page, section, table or appendix number.
_LOCATOR = (r"(\bfigures?\b|\bfig\.|\bequations?\b|\beqs?\.|\bslides?\b|\bpages?\b|\bpp?\.|"
            r"\bsections?\b|§|\btables?\b|\bappendix\b)\s*\(?[A-Z]?\.?\d")


def _sentences(cells):
    """The markdown's sentences: paragraphs (blank lines, directive fences) cut at . ! ?"""
    out = []
    for cell in cells:
        if cell.cell_type == "markdown":
            for para in re.split(r"\n\s*\n|\n(?=:::|```|\$\$|- |\d+\. |#)", cell.source):
                out += re.split(r"(?<=[.!?])\s+", re.sub(r"\s+", " ", para))
    return out


@pytest.mark.parametrize("name", CORE)
def test_the_course_sends_no_reader_into_an_unpublished_document(name):
    """Issue 35: no course sentence points to a figure, equation, slide, page or section of a
    source document the reader cannot get; what the reader needs is shown in the book."""
    near = re.compile(_UNPUBLISHED_WORDS + r"[^.;()]{0,25}?" + _LOCATOR + "|" + _LOCATOR
                      + r"[^.;()]{0,25}?\b(of|in) " + _UNPUBLISHED_WORDS, re.I)
    found = [s for s in _sentences(_cells(name)) if near.search(s)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("name", CORE)
def test_the_course_cites_published_texts(name):
    """Issue 35: every core chapter stands on at least one published book or paper it cites."""
    bib = (ROOT / "references.bib").read_text()
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, re.M))
    text = "\n".join(c.source for c in _cells(name) if c.cell_type == "markdown")
    cited = {k.strip() for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", text)
             for k in group.split(",")}
    assert cited <= keys, f"cited but not in references.bib: {cited - keys}"
    assert cited - set(UNPUBLISHED_KEYS), f"{name} cites no published text"


@pytest.mark.parametrize("name", DEEPER)
def test_a_deeper_chapter_says_it_is_optional_and_checks_no_source(name):
    cells = _cells(name)
    opening = next(c.source for c in cells if c.cell_type == "markdown")
    assert re.search(r"\boptional\b", opening, re.I), "the opening does not say it is optional"
    assert re.search(r"\{doc\}`(" + "|".join(CORE) + r")`", opening), \
        "the opening does not name the core chapter it extends"
    assert not _errata(cells), "an erratum outside the source checks"
