"""What a reader sees on a chapter page, measured in the browser (issues 19 and 31).

``LAYOUT`` is a script for Selenium's ``execute_script`` on a loaded, typeset page; it returns
the page's figures, tables, visible code, display equations, the boxes that scroll sideways and
anything sticking out. ``problems(seen, width)`` turns that into the list of what falls short at
that window width:

- a figure shown at less than 60 % of its natural width, at 1280 px and on a 390 px phone alike
  (its text would be too small to read: the style's 10-11 pt labels at 100 dpi are 14-15 px at
  natural size, >= 8.3 px at 60 %), or whose alt text is a file name;
- a table wider than its box at 1280 px (it would hide columns), with ``NaN`` cells, snake_case
  headers, headers in ASCII pseudo-math, a raw 0, 1, 2, ... index, or a header row that is empty
  or holds one label among empty cells (pandas' row for an index's name);
- a printed output (a cell's text) cut off at 1280 px (it scrolls sideways);
- an inline formula broken across lines (book.css keeps each on one line);
- a visible code line cut off at 1280 px (the code box scrolls), or a visible ``glue(`` call;
- a display equation wider than the text column (it scrolls or sticks out): long equations are
  broken at relations instead;
- a box inside the article that scrolls sideways without the book's scroll cue
  (``_assets/js/scroll_cue.js``: the class ``blc-scroll-cue`` and a faded edge);
- an inline formula wider than the window (it does not scroll: it is cut off);
- at a phone's width, anything but scrolling boxes that makes the page scroll sideways.

:func:`smallest_text_px` gives the smallest figure text as displayed on a page. The browser test
(tests/test_browser.py) runs it on every chapter at 1280 and 390 px. For an author, on a built
book::

    python scripts/page_layout.py _build/html map laplace      # prints each page's problems
"""
from __future__ import annotations

import re

#: A figure shown at less than this share of its natural width has text too small to read.
MIN_FIGURE_SCALE = 0.6
#: The smallest text the book's style draws in a figure (tick labels, lib/book/book.mplstyle),
#: in px at the style's 100 dpi.
SMALLEST_FIGURE_TEXT_PX = 10 * 100 / 72

LAYOUT = r"""
if (window.blcScrollCue) window.blcScrollCue();   // the cue follows the window's size at once
const main = document.querySelector("main") || document.body;
// The first n characters, whole: math italic letters are surrogate pairs, and a lone half is
// not a string WebDriver can return.
const cut = (text, n) => Array.from(text || "").slice(0, n).join("");
const W = document.documentElement.clientWidth;
const scrolls = el => { const s = getComputedStyle(el).overflowX; return s === "auto" || s === "scroll"; };
const visible = el => el.offsetParent !== null && el.getBoundingClientRect().width > 0;
// A cell's text as read: innerText, or, in a closed solution (visibility: hidden, where innerText
// is empty), its textContent, so that a table there is checked by what it holds.
const text = el => (el.innerText || "").trim() || (el.textContent || "").trim();
const figures = Array.from(main.querySelectorAll("img")).filter(visible).map(img => ({
  name: (img.closest("figure") || {}).id || img.src.split("/").pop().slice(0, 20),
  alt: img.getAttribute("alt") || "",
  // its natural width in CSS px: the width the page gives it (a chapter's figure stores
  // lib.book.plots.PIXEL_SCALE times its natural pixels and says its natural size, which Sphinx
  // writes as the image's style), else its pixels
  natural: /px$/.test(img.style.width) ? parseFloat(img.style.width) : img.naturalWidth,
  shown: img.getBoundingClientRect().width,
}));
const tables = Array.from(main.querySelectorAll("table")).filter(visible).map(t => {
  let box = t.parentElement;
  while (box && box !== main && !scrolls(box)) box = box.parentElement;
  const rowHeads = Array.from(t.querySelectorAll("tbody tr")).map(tr => {
    const th = tr.querySelector("th"); return th ? text(th) : null; });
  return {
    name: ((t.closest("[id]") || {}).id || "") + ": " + cut(text(t).split("\n")[0], 50),
    width: t.getBoundingClientRect().width,
    box: box && box !== main ? box.clientWidth : main.getBoundingClientRect().width,
    nan: /(^|\s)NaN(\s|$)/.test(text(t)),
    heads: Array.from(t.querySelectorAll("thead th")).map(text),
    headRows: Array.from(t.querySelectorAll("thead tr")).map(tr =>
      Array.from(tr.children).map(text)),
    rowHeads,
  };
});
const code = Array.from(main.querySelectorAll("div.cell_input pre, div.highlight pre"))
  .filter(visible).filter(pre => !pre.closest("details:not([open])"))
  .filter(pre => !pre.closest(".cell_output, .output") && pre.innerText.trim())
  .map(pre => ({
    text: cut(pre.innerText, 60),
    cut: pre.scrollWidth > pre.clientWidth + 1,
    glue: /(^|[^_\w])glue\(/.test(pre.innerText),
  }));
// Printed output (a cell's text output) cut off: it scrolls sideways inside its box.
const outputs = Array.from(main.querySelectorAll("div.cell_output pre, div.output pre"))
  .filter(visible).filter(pre => !pre.closest("details:not([open])"))
  .filter(pre => pre.scrollWidth > pre.clientWidth + 1)
  .map(pre => cut(pre.textContent.split("\n").reduce((a, b) => b.length > a.length ? b : a, ""), 60));
// Inline formulas broken across lines (at an operator): more than one line box.
const brokenMath = Array.from(main.querySelectorAll("mjx-container:not([display='true'])"))
  .filter(visible).filter(m => !m.closest("details:not([open])"))
  .filter(m => new Set(Array.from(m.getClientRects()).filter(r => r.width > 0)
                       .map(r => Math.round(r.top))).size > 1)
  .map(m => cut(m.getAttribute("aria-label") || m.textContent, 40));
const wide = [];
for (const el of main.querySelectorAll("*")) {
  const r = el.getBoundingClientRect();
  if (r.right <= W + 1 || r.width === 0) continue;
  if (el.closest("pre, .highlight, mjx-container, .math, table, .bd-sidebar-secondary")) continue;
  let inside = false;
  for (let a = el.parentElement; a && a !== main; a = a.parentElement)
    if (scrolls(a) && a.getBoundingClientRect().right <= W + 1) { inside = true; break; }
  if (!inside) wide.push(el.tagName.toLowerCase() + "." + (el.className || "").toString().split(" ")[0]
                        + " (" + Math.round(r.right) + " px)");
}
// Display equations: wider than the column they sit in (they scroll or stick out).
const equations = Array.from(main.querySelectorAll("mjx-container[display='true']")).filter(visible)
  .filter(m => !m.closest("details:not([open])"))
  .map(m => {
    let box = m.parentElement;
    while (box && box !== main && getComputedStyle(box).display.startsWith("inline")) box = box.parentElement;
    const inner = m.querySelector("mjx-math") || m;
    const label = (m.closest("[id]") || {}).id || "";
    return {name: label + ": " + cut(m.getAttribute("aria-label") || m.textContent, 40),
            width: Math.max(inner.getBoundingClientRect().width, m.scrollWidth),
            box: Math.min(box.clientWidth, m.clientWidth || box.clientWidth)};
  })
  .filter(e => e.width > e.box + 1);
// Boxes that scroll sideways: each should carry the scroll cue.
const scrollers = Array.from(main.querySelectorAll("*")).filter(visible).filter(scrolls)
  .filter(el => el.scrollWidth > el.clientWidth + 1)
  .map(el => ({name: el.tagName.toLowerCase() + "." + (el.className || "").toString().split(" ")[0]
                     + ": " + cut((el.innerText || "").trim(), 40),
               cue: el.classList.contains("blc-scroll-cue")}));
// Inline formulas do not scroll: one wider than the window is cut off at its edge.
const cutMath = Array.from(main.querySelectorAll("mjx-container:not([display='true'])"))
  .filter(visible).filter(m => !m.closest("table, pre, .bd-sidebar-secondary, nav"))
  .filter(m => m.getBoundingClientRect().right > W + 1)
  .map(m => cut(m.getAttribute("aria-label") || m.textContent, 40));
return {width: W, page_scroll: document.documentElement.scrollWidth, figures, tables, code,
        wide: wide.slice(0, 5), cut_math: cutMath, equations, scrollers, outputs,
        broken_math: brokenMath};
"""

_FILE = re.compile(r"(^|/)[\w.-]+\.(png|jpe?g|svg|gif)$", re.IGNORECASE)
_SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")


#: A table header in ASCII pseudo-math ("-w.w/(2 s2)", "int_{-inf}^f sech^2(x/2)/4 dx",
#: "sqrt(pi/8)"): headers say it in words or as Unicode math (issue 36.18).
_ASCII_MATH = re.compile(r"\^|\*\*|_\{|\bint_|\b(sqrt|exp)\(|(^|[^\w])-?inf\b|\w\.\w\b/")


def empty_header_rows(rows: list[list[str]]) -> list[list[str]]:
    """A table's header rows that are empty, or, where it has more than one, that hold only a
    first label over empty cells (the row pandas adds for the index's name: "set | | |"; issue
    36.18)."""
    return [row for row in rows
            if row and (not any(row) or (len(rows) > 1 and len(row) > 1 and row[0]
                                         and not any(row[1:])))]


def problems(seen: dict, width: int) -> list[str]:
    """What falls short on a page measured by :data:`LAYOUT` at a window ``width`` px wide."""
    out = []
    for fig in seen["figures"]:
        if not fig["alt"] or _FILE.search(fig["alt"]):
            out.append(f"figure {fig['name']}: alt text is {fig['alt']!r}, not a description")
        if fig["natural"] and fig["shown"] < MIN_FIGURE_SCALE * fig["natural"]:
            out.append(f"figure {fig['name']}: shown at {fig['shown'] / fig['natural']:.0%} of "
                       f"its natural width ({fig['natural']} px) at {width} px")
    for table in seen["tables"]:
        if width >= 1000 and table["width"] > table["box"] + 1:
            out.append(f"table {table['name']!r}: {table['width']:.0f} px wide in a "
                       f"{table['box']:.0f} px column")
        if table["nan"]:
            out.append(f"table {table['name']!r}: NaN cells")
        snake = [h for h in table["heads"] if _SNAKE.match(h)]
        if snake:
            out.append(f"table {table['name']!r}: snake_case headers {snake}")
        heads = table["rowHeads"]
        if len(heads) > 1 and heads == [str(i) for i in range(len(heads))]:
            out.append(f"table {table['name']!r}: a raw 0, 1, 2, ... index")
        for row in empty_header_rows(table.get("headRows", [])):
            out.append(f"table {table['name']!r}: a header row with at most one label {row}")
        ascii_math = [h for h in table["heads"] if _ASCII_MATH.search(h)]
        if ascii_math:
            out.append(f"table {table['name']!r}: headers in ASCII pseudo-math {ascii_math}")
    for cell in seen["code"]:
        if width >= 1000 and cell["cut"]:
            out.append(f"code cut off (scrolls sideways): {cell['text']!r}")
        if cell["glue"]:
            out.append(f"visible glue() call: {cell['text']!r}")
    for text in seen.get("outputs", []):
        if width >= 1000:
            out.append(f"printed output cut off (scrolls sideways): {text!r}")
    for formula in seen.get("broken_math", []):
        out.append(f"inline formula broken across lines: {formula!r}")
    for eq in seen.get("equations", []):
        out.append(f"display equation {eq['width']:.0f} px wide in a {eq['box']:.0f} px column: "
                   f"{eq['name']!r}")
    for box in seen.get("scrollers", []):
        if not box["cue"]:
            out.append(f"scrolls sideways without a scroll cue: {box['name']!r}")
    for formula in seen.get("cut_math", []):
        out.append(f"inline formula cut off at the window's edge: {formula!r}")
    if width < 1000 and seen["page_scroll"] > seen["width"] + 1:
        out.append(f"the page scrolls sideways ({seen['page_scroll']} px at {seen['width']} px): "
                   f"{seen['wide']}")
    return out


def smallest_text_px(seen: dict) -> float | None:
    """The smallest figure text on a page as displayed, in CSS px (None: no figure): the style's
    smallest text at the smallest display scale of the page's figures."""
    scales = [f["shown"] / f["natural"] for f in seen["figures"] if f["natural"]]
    return SMALLEST_FIGURE_TEXT_PX * min(scales) if scales else None


def _main(argv):
    import functools
    import http.server
    import threading
    from pathlib import Path

    from print_pdf import _driver, _Quiet     # the same local server and Chromium as `make pdf`

    html, pages = Path(argv[0]), argv[1:]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_Quiet, directory=str(html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = _driver()
    settle = ("const done = arguments[0]; (async () => {"
              "while (document.readyState !== 'complete') await new Promise(r => setTimeout(r, 50));"
              "document.querySelectorAll('img').forEach(i => { i.loading = 'eager'; });"
              "await Promise.all(Array.from(document.images).map(i => i.decode().catch(() => null)));"
              "if (window.MathJax && MathJax.startup) await MathJax.startup.promise; done(1); })()")
    try:
        for width in (1280, 390):
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 1000})
            for page in pages:
                driver.get(f"http://127.0.0.1:{server.server_address[1]}/chapters/{page}.html")
                driver.execute_async_script(settle)
                seen = driver.execute_script(LAYOUT)
                found = problems(seen, width)
                small = smallest_text_px(seen)
                small = "no figure" if small is None else f"smallest figure text {small:.1f} px"
                print(f"{page} at {width} px: {len(found)} problems ({small})")
                for line in found:
                    print("   ", line)
    finally:
        driver.quit()
        server.shutdown()


if __name__ == "__main__":
    import sys

    _main(sys.argv[1:])
