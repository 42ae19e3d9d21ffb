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
