"""Every chapter has the shape of a chapter of course notes (issue 18): learning objectives at the
top, key takeaways, exercises whose solutions are collapsed and assert their answers, and, where a
chapter checks a source, that check as its last section with its errata collapsed."""
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
MIN_EXERCISES = {**{name: 3 for name in CORE}, **{name: 2 for name in OPTIONAL}}


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


def test_the_core_path_is_the_table_of_contents_order():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"].split("/")[-1] for part in toc["parts"] for c in part["chapters"]]
    assert files[:len(CORE)] == list(CORE)
    optional = [part["caption"] for part in toc["parts"]
                if any(c["file"].split("/")[-1] in OPTIONAL for c in part["chapters"])]
    assert optional and all(caption.startswith("Optional") for caption in optional)


@pytest.mark.parametrize("name", CORE + OPTIONAL)
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


@pytest.mark.parametrize("name", CORE + OPTIONAL)
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


@pytest.mark.parametrize("name", CORE + OPTIONAL)
def test_a_source_check_is_the_last_section_with_its_errata_collapsed(name):
    cells = _cells(name)
    headings = _headings(cells)
    errata = [(i, c.source) for i, c in enumerate(cells) if c.cell_type == "markdown"
              and re.search(r"^:::+\{admonition\} Erratum: ", c.source, re.M)]
    last = [title for _, level, title in headings if level == 2][-1]
    if errata:
        assert last.startswith("Checking"), f"the last section is {last!r}"
        check = _section_start(headings, r"Checking")
        assert all(i >= check for i, _ in errata), "an erratum sits in the teaching text"
    for _, source in errata:
        for box in re.findall(r"^:::+\{admonition\} Erratum: [^\n]*\n([^\n]*)", source, re.M):
            assert re.match(r":class: dropdown", box), f"an erratum is not collapsed: {box!r}"


def test_no_section_title_outside_the_checks_names_a_source():
    """Teaching sections are named by concept, not by the report (issue 18)."""
    offenders = []
    for name in CORE + OPTIONAL:
        headings = _headings(_cells(name))
        check = _section_start(headings, r"Checking")
        for i, level, title in headings:
            if (check is None or i < check) and re.search(r"\breport\b|\btable \d", title, re.I):
                offenders.append(f"{name}: {title}")
    assert not offenders, offenders


@pytest.mark.parametrize("name", CORE + OPTIONAL)
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
