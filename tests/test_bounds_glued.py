"""A bound in the prose holds for the value it bounds (issue 36): a number glued after "at most",
"below", "within", "at least", ... is printed by lib.book.display.upper or .lower (rounded
outward), never rounded to nearest, which turns "no activation exceeds 0.17" false at 0.1724."""
import ast
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
#: Words that make the glued number after them a bound.
BOUND = re.compile(
    r"\b(at most|at least|below|above|within|exceeds?|under|no more than|less than|more than|"
    r"fewer than|smaller than|larger than|greater than|up to|between|and)\s+"
    r"[^.;{}]{0,12}?\{glue:text\}`([^`]+)`")
#: How a bound may be printed: rounded outward, as a rounding-level bound ("< 1e-10"), or as the
#: constant a cell asserts (a literal number or a name saying it is a tolerance or bound).
#: Exact prints pass too: a whole number or a constant printed in full (no rounding format), and
#: a figure quoted from the report (lib.report.printed).
OUTWARD = re.compile(r"\b(upper|lower|small)\(|\{[-+]?\d[\d.e+-]*:|\{\w*(tol|bound|limit|floor|threshold)\w*[:}]"
                     r"|^f[\"']\{[^:{}]+(:d|:g)?\}[\"']|\bprinted\.|^'[-+]?\d[\d.e+-]*'$")


def _bound_names(cells):
    """Names glued right after a bound word ("and" counts after "between ... ")."""
    names = []
    for cell in cells:
        if cell.cell_type != "markdown":
            continue
        text = re.sub(r"\s+", " ", cell.source)
        for m in BOUND.finditer(text):
            if m.group(1) == "and" and not re.search(r"between\s+[^.;]{0,40}$",
                                                     text[:m.start()]):
                continue
            names.append(m.group(2))
    return names


def _glue_expressions(cells):
    """name -> the source of the expression that glues it (names written out in a dict literal)."""
    found = {}
    for cell in cells:
        if cell.cell_type != "code" or "glue_all" not in cell.source:
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        found.setdefault(key.value, ast.unparse(value))
    return found


@pytest.mark.parametrize("name", CHAPTERS)
def test_bounds_are_glued_rounded_outward(name):
    cells = nbformat.read(ROOT / "chapters" / f"{name}.ipynb", as_version=4).cells
    glued = _glue_expressions(cells)
    wrong = []
    for glue_name in _bound_names(cells):
        expr = glued.get(glue_name)
        if expr is None or not OUTWARD.search(expr):
            wrong.append(f"{glue_name}: {expr or 'not glued by a literal name'}")
    assert not wrong, ("bounds glued with nearest rounding (use lib.book.display.upper/lower):\n"
                       + "\n".join(wrong))
