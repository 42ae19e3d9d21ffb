"""What a phone reader meets, checked on the committed chapters themselves (issue 31), so that it
holds where no browser runs: every figure drawn for the phone's column, and visible code short
enough to read. (tests/test_browser.py measures the built pages in Chromium when it is there.)"""
import base64
import struct
from pathlib import Path

import nbformat
import pytest

from lib.book.plots import MAX_WIDTH_IN

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
#: A figure at most this wide (MAX_WIDTH_IN at the style's 100 dpi, plus bbox_inches="tight"'s
#: margin) shows at >= 60 % of its natural size in a 390 px phone's column (book.css).
MAX_FIGURE_PX = round(MAX_WIDTH_IN * 100) + 20
#: Visible code lines at most this long (comments included): they fit the desktop column, and on a
#: phone they scroll a short way, behind the book's scroll cue.
MAX_CODE_LINE = 72
#: Cells whose code a reader does not see unfolded.
FOLDED = {"hide-input", "remove-input", "remove-cell", "hide-cell"}


def _cells(name):
    return nbformat.read(ROOT / "chapters" / f"{name}.ipynb", as_version=4).cells


def _png_size(data: str) -> tuple[int, int]:
    """(width, height) of a base64-encoded PNG, from its IHDR chunk."""
    head = base64.b64decode(data[:64])
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


def test_png_size_reads_the_header():
    import io

    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(0.03, 0.02), dpi=100)   # 3 x 2 px
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    assert _png_size(base64.b64encode(buffer.getvalue()).decode()) == (3, 2)


def _natural_size(out) -> tuple[int, int]:
    """A PNG output's natural size in px: the width and height its metadata gives (a figure
    stored at lib.book.plots.PIXEL_SCALE times its pixels, issue 36.17), else its pixels."""
    meta = out.get("metadata", {}).get("image/png", {})
    if "width" in meta and "height" in meta:
        return int(meta["width"]), int(meta["height"])
    return _png_size(out["data"]["image/png"])


@pytest.mark.parametrize("name", CHAPTERS)
def test_figures_are_drawn_for_a_phone(name):
    wide = [(i, _natural_size(out))
            for i, cell in enumerate(_cells(name)) for out in cell.get("outputs", [])
            if "image/png" in out.get("data", {})]
    wide = [(i, size) for i, size in wide if size[0] > MAX_FIGURE_PX]
    assert not wide, f"figures wider than {MAX_FIGURE_PX} px (cell, (width, height)): {wide}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_visible_code_lines_are_short(name):
    long = [(i, len(line), line.strip()[:40])
            for i, cell in enumerate(_cells(name))
            if cell.cell_type == "code" and not FOLDED & set(cell.metadata.get("tags", []))
            for line in cell.source.splitlines() if len(line) > MAX_CODE_LINE]
    assert not long, f"{len(long)} visible code lines over {MAX_CODE_LINE} characters: {long[:8]}"


#: Visible code cells at most this many lines: one idea per cell, prose between cells.
MAX_CELL_LINES = 15


@pytest.mark.parametrize("name", CHAPTERS)
def test_visible_code_cells_are_short(name):
    long = [(i, len(cell.source.rstrip("\n").splitlines()))
            for i, cell in enumerate(_cells(name))
            if cell.cell_type == "code" and not FOLDED & set(cell.metadata.get("tags", []))
            and len(cell.source.rstrip("\n").splitlines()) > MAX_CELL_LINES]
    assert not long, f"visible code cells over {MAX_CELL_LINES} lines (cell, lines): {long}"


# --- Glue cells only glue; computation is visible (issue 38, item 5) ----------------------------

import ast
import inspect

from lib.book import display as _display

#: Calls a glue value may make (by name) besides lib.book.display's functions.
GLUE_BUILTINS = {"format", "round", "str", "int", "float", "len", "abs", "zip", "getattr"}
#: String methods a glue value may call on a value (formatting, not computing).
GLUE_STRING_METHODS = {"format", "join", "replace", "removeprefix", "removesuffix", "strip"}
#: lib.book.display's public functions (callable as `display.f(...)` or by an imported name).
DISPLAY_FUNCTIONS = {name for name, f in vars(_display).items()
                     if inspect.isfunction(f) and f.__module__ == _display.__name__
                     and not name.startswith("_")}
#: The expression nodes a glue value may contain (calls are checked apart, by what they call).
_GLUE_NODES = (ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple,
               ast.List, ast.JoinedStr, ast.FormattedValue, ast.BinOp, ast.UnaryOp, ast.Compare,
               ast.BoolOp, ast.IfExp, ast.GeneratorExp, ast.ListComp, ast.DictComp, ast.Dict,
               ast.comprehension, ast.keyword, ast.Call, ast.Starred, ast.expr_context,
               ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def _glue_call_allowed(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in GLUE_BUILTINS | DISPLAY_FUNCTIONS
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id == "display":
            return func.attr in DISPLAY_FUNCTIONS
        return func.attr in GLUE_STRING_METHODS
    return False


def _computing_in_value(node: ast.AST) -> list[str]:
    """What computes in a glue value: the offending sub-expressions, as source."""
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and not _glue_call_allowed(sub):
            found.append(ast.unparse(sub))
        elif isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult):
            found.append(ast.unparse(sub))
        elif not isinstance(sub, _GLUE_NODES):
            found.append(f"{type(sub).__name__}: {ast.unparse(sub)}")
    return found


def _is_glue_dict(node: ast.AST) -> list[str]:
    """The problems of `glue_all`'s argument (a dict display of strings to glue values)."""
    if isinstance(node, ast.DictComp):
        return [p for gen in node.generators for part in (gen.iter, *gen.ifs)
                for p in _computing_in_value(part)] + _is_glue_dict(
            ast.Dict(keys=[node.key], values=[node.value]))
    if not isinstance(node, ast.Dict):
        return [f"glue_all's argument is not a dict display: {ast.unparse(node)[:60]}"]
    problems = []
    for key, value in zip(node.keys, node.values):
        if key is None:                                  # `**{...}` unpacking
            problems += (_is_glue_dict(value) if isinstance(value, (ast.Dict, ast.DictComp))
                         else [f"unpacks a non-dict: {ast.unparse(value)[:60]}"])
            continue
        if not (isinstance(key, ast.JoinedStr)
                or isinstance(key, ast.Constant) and isinstance(key.value, str)):
            problems.append(f"key is not a string: {ast.unparse(key)}")
        problems += _computing_in_value(key) + _computing_in_value(value)
    return problems


def glue_cell_problems(source: str) -> list[str]:
    """Why a `remove-cell`'s ``source`` does more than glue (empty if it only glues)."""
    problems = []
    for stmt in ast.parse(source).body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(stmt, ast.Assert):
            problems += [f"`:=` in an assert: {ast.unparse(sub)}" for sub in ast.walk(stmt)
                         if isinstance(sub, ast.NamedExpr)]
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id == "glue_all" and len(call.args) == 1 and not call.keywords):
            problems += _is_glue_dict(call.args[0])
            continue
        problems.append(f"{type(stmt).__name__}: {ast.unparse(stmt).splitlines()[0][:60]}")
    return problems


@pytest.mark.parametrize("source, ok", [
    ('glue_all({"a": f"{post.evidence:.2f}", "b": upper(t.loc[3, "x"], 2)})', True),
    ('glue_all({"a": display.small(d, floor=1e-12), **{f"k-{c}": f"{r[c]:.3f}" for c in cols}})',
     True),
    ('from lib.book.glue import glue_all\nassert np.all(x > 0)\nglue_all({"a": f"{100 * s:.0f}"})',
     True),
    ('glue_all({"a": " and ".join(names), "b": str(len(y)), "c": f"{round(n / 2)}"})', True),
    ('x = t.max()\nglue_all({"a": f"{x}"})', False),                 # an assignment
    ('glue_all({"a": f"{t.max():.2f}"})', False),                    # a reduction
    ('glue_all({"a": f"{np.sqrt(v):.2f}"})', False),                 # numpy
    ('glue_all({"a": upper(np.abs(e).max(), 3)})', False),           # inside a display helper
    ('glue_all({"a": f"{fit(X, y).s2:.2f}"})', False),               # a fit
    ('glue_all({"a": f"{(A @ w)[0]:.2f}"})', False),                 # a product
    ('glue_all(values)', False),                                     # a dict built elsewhere
    ('glue_all({1: "x"})', False),                                   # a key not a string
    ('for k in ks:\n    glue_all({k: "x"})', False),                 # a loop
    ('print(x)', False),                                             # any other call
])
def test_glue_cell_problems_tells_glue_from_computation(source, ok):
    assert (glue_cell_problems(source) == []) is ok, glue_cell_problems(source)


def _tags(cell) -> set:
    return set(cell.metadata.get("tags", []))


@pytest.mark.parametrize("name", CHAPTERS)
def test_glue_cells_only_glue(name):
    """Every `remove-cell` only imports, asserts and glues values computed visibly.

    A `remove-cell` is dropped from the page and from the student notebook, so whatever it computes
    is computed where no reader sees it. Such a cell may hold only:

    - imports;
    - `assert` statements (they bind no name; the names they test are then defined visibly, since a
      glue cell binds none);
    - `glue_all({...})` calls, whose one argument is a dict display (`**` may unpack a dict
      comprehension of the same kind) with string keys (literals or f-strings) and values built
      only from: names, constants, attribute access and subscripts of them (`post.evidence`,
      `table.loc[3, "x"]`, `.iloc[0]`), f-strings and their format specs, arithmetic operators
      other than `@` (a difference of two visible numbers, a percentage: `100 * share`), `abs`,
      comparisons and conditional expressions (a sign, a word), comprehensions over such values,
      and calls to formatting helpers only: lib.book.display's functions (`upper(x, 3)`,
      `display.small(d)`), `format`, `round`, `str`, `int`, `float`, `len`, `abs`, `zip`, `getattr`
      and the string methods in GLUE_STRING_METHODS.

    Anything else is computation and belongs in a visible cell: an assignment, any other call
    (`np.sqrt(x)`, `v.max()`, `table.sum()`, a fit, a chapter's own function), `@`, a lambda or `:=`.
    """
    bad = {i: problems[:3] for i, cell in enumerate(_cells(name))
           if cell.cell_type == "code" and "remove-cell" in _tags(cell)
           for problems in [glue_cell_problems(cell.source)] if problems}
    assert not bad, f"{len(bad)} remove-cells compute (cell: first problems): {bad}"


#: Tags that keep a code cell's source off the page.
HIDDEN_CODE = {"remove-cell", "hide-input", "remove-input"}
#: At least this share of a chapter's code lines (non-blank) is visible.
MIN_VISIBLE_CODE = 0.5


def visible_code_share(name) -> float:
    """The share of a chapter's non-blank code lines in cells shown unfolded on its page."""
    lines = [(not HIDDEN_CODE & _tags(cell), line)
             for cell in _cells(name) if cell.cell_type == "code"
             for line in cell.source.splitlines() if line.strip()]
    return sum(shown for shown, _ in lines) / max(len(lines), 1)


@pytest.mark.parametrize("name", CHAPTERS)
def test_most_code_is_visible(name):
    share = visible_code_share(name)
    assert share >= MIN_VISIBLE_CODE, (
        f"{share:.0%} of the code lines are visible (at least {MIN_VISIBLE_CODE:.0%}): show the "
        "computation, fold only plotting and table layout")
