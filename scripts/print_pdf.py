"""Print the one-page HTML book to a PDF with headless Chromium (``make pdf``, ``make pdf-course``).

    python scripts/print_pdf.py _build/singlehtml _build/pdf/book.pdf
    python scripts/print_pdf.py --course _build/singlehtml _build/pdf/course.pdf

Serves the folder on 127.0.0.1, opens a copy of ``chapters/intro.html`` (the whole book on one
page, from jupyter-book's ``singlehtml`` builder) as ``book.html`` in Chromium through Selenium,
waits until MathJax has typeset it and every image is decoded, opens the collapsed solutions and
errata (a printed copy has no buttons to press; folded code is left out, by
_assets/css/print.css), puts each part's caption from _toc.yml on a page of its own before the
part's first chapter, shrinks the display equations and tables wider than the printable width
until they fit (measured in print emulation at that width, as is every element's right edge),
and prints it on A4 with Chromium's own PDF printer (DevTools ``Page.printToPDF``): page numbers
in the footer and a PDF outline (bookmarks) of the parts, chapters and sections.

Then the front matter: a title page and a contents page whose page numbers are read from the
printed body's outline (where each part and chapter starts), printed by Chromium as a second,
short document and put before the body with pypdf. The body is numbered 1, 2, ... from the
start page, the front matter i, ii (the PDF's page labels say so too, so a viewer's page box
shows the printed numbers): the contents cannot shift the numbers it lists.

``--course`` prints the course alone: the start page, the core chapters and the optional ones
(each part says which it is), and the bibliography the chapters cite; not the reference part
(the lab report reproduced) nor the errata index that lists its errata.

No request leaves the machine. Prints one JSON line: pages, chapters, typeset formulas, images
seen on the page, the elements wider than the printable width.
"""
from __future__ import annotations

import base64
import datetime
import functools
import html as htmllib
import http.server
import io
import json
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

# A4; the text column is the paper less the side margins (CSS px: 96 to the inch).
_PAPER = {"width": 8.27, "height": 11.69}
_MARGIN = {"top": 0.6, "bottom": 0.7, "left": 0.6, "right": 0.6}
PRINTABLE_WIDTH_PX = round((_PAPER["width"] - _MARGIN["left"] - _MARGIN["right"]) * 96)
#: The book's licences (LICENSE-CC-BY-4.0, LICENSE; README): the title page's licence line and
#: the PDF's metadata say them; tests/test_pdf.py checks that CITATION.cff and the pages' footer
#: (_config.yml) name the same, so the three cannot drift apart.
#: (what: (name, SPDX id, where its text is))
LICENCES = {
    "Text and figures": ("CC BY 4.0", "CC-BY-4.0", "https://creativecommons.org/licenses/by/4.0/"),
    "code": ("MIT", "MIT", "https://opensource.org/license/mit"),
}


def licence_line() -> str:
    """The licence line of the title page: "Text and figures: CC BY 4.0; code: MIT"."""
    return "; ".join(f"{what}: {name}" for what, (name, _, _) in LICENCES.items())


#: The page's text height in CSS px (26.4 cm): a figure prints at most this tall less its caption
#: and FIGURE_GAP_CM, and never taller than FIGURE_ROOM_CM.
TEXT_HEIGHT_PX = round((_PAPER["height"] - _MARGIN["top"] - _MARGIN["bottom"]) * 96)
FIGURE_ROOM_CM, FIGURE_GAP_CM = 24, 0.8

# The body: the page number centred in the footer (Chromium's template: its own small font unless
# the template sets one); no header.
_PAGE = {
    "paperWidth": _PAPER["width"], "paperHeight": _PAPER["height"],
    "marginTop": _MARGIN["top"], "marginBottom": _MARGIN["bottom"],
    "marginLeft": _MARGIN["left"], "marginRight": _MARGIN["right"],
    "printBackground": True,
    "displayHeaderFooter": True,
    "headerTemplate": "<span></span>",
    "footerTemplate": ('<div style="width: 100%; text-align: center; font-size: 9pt; '
                       'font-family: sans-serif; color: #444;">'
                       '<span class="pageNumber"></span></div>'),
    "generateDocumentOutline": True,
}
# The front matter: no footer (its pages are numbered i, ii in the PDF's page labels).
_FRONT_PAGE = {k: v for k, v in _PAGE.items()
               if k not in ("headerTemplate", "footerTemplate", "generateDocumentOutline")}
_FRONT_PAGE["displayHeaderFooter"] = False

# Wait for the page, MathJax's typesetting and the images; then open every collapsed admonition
# (sphinx-togglebutton hides their bodies) and report what the page holds.
_SETTLE = """
const done = arguments[arguments.length - 1];
(async () => {
  while (document.readyState !== "complete") await new Promise(r => setTimeout(r, 50));
  for (let i = 0; i < 400 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 50));
  let mathjax = "never started";
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    try { await MathJax.startup.promise; mathjax = "typeset"; } catch (e) { mathjax = "failed: " + e; }
  }
  const imgs = Array.from(document.images);
  imgs.forEach(img => { img.loading = "eager"; });
  await Promise.all(imgs.map(img => img.decode().catch(() => null)));
  await document.fonts.ready;
  document.querySelectorAll(".admonition.dropdown, div.solution").forEach(box => {
    box.classList.remove("toggle-hidden");
    box.querySelectorAll(".toggle-hidden").forEach(e => e.classList.remove("toggle-hidden"));
    box.querySelectorAll("details").forEach(d => { d.open = true; });
  });
  const style = document.createElement("style");
  style.textContent = ".toggle-button, .tb-icon { display: none !important; }";
  document.head.appendChild(style);
  done({
    mathjax,
    formulas: document.querySelectorAll("mjx-container").length,
    math_errors: Array.from(document.querySelectorAll("mjx-merror"))
      .map(e => e.getAttribute("data-mjx-error") || e.textContent),
    images: imgs.filter(img => img.naturalWidth > 0).length,
    broken_images: imgs.filter(img => img.naturalWidth === 0).length,
  });
})();
"""

# A heading's text with its math as plain text (MathJax's hidden MathML copy of each formula read
# out, with Unicode super- and subscripts where they exist: "s²", "w_MAP"), for the bookmarks
# (issue 36.14): Chromium's own outline drops the math and the space where a heading wraps.
_HEADING_TEXT = r"""
const SUP = {"0": "\u2070", "1": "\u00b9", "2": "\u00b2", "3": "\u00b3", "4": "\u2074",
  "5": "\u2075", "6": "\u2076", "7": "\u2077", "8": "\u2078", "9": "\u2079", "+": "\u207a",
  "-": "\u207b", "\u2212": "\u207b", "=": "\u207c", "(": "\u207d", ")": "\u207e",
  "n": "\u207f", "i": "\u2071", "T": "\u1d40", "\u22a4": "\u1d40"};
const SUB = {"0": "\u2080", "1": "\u2081", "2": "\u2082", "3": "\u2083", "4": "\u2084",
  "5": "\u2085", "6": "\u2086", "7": "\u2087", "8": "\u2088", "9": "\u2089", "+": "\u208a",
  "-": "\u208b", "\u2212": "\u208b", "=": "\u208c", "(": "\u208d", ")": "\u208e",
  "a": "\u2090", "e": "\u2091", "o": "\u2092", "x": "\u2093", "h": "\u2095", "k": "\u2096",
  "l": "\u2097", "m": "\u2098", "n": "\u2099", "p": "\u209a", "s": "\u209b", "t": "\u209c",
  "i": "\u1d62", "j": "\u2c7c", "r": "\u1d63", "u": "\u1d64", "v": "\u1d65"};
// operators set off by spaces, as the typeset formula sets them
const SPACED = new Set(["=", "<", ">", "\u2264", "\u2265", "\u2248", "\u2260", "\u221d",
  "\u2208", "\u2192", "+", "\u2212", "\u00d7", "\u223c", "~", "\u2261"]);
const script = (s, map, mark) => {
  const chars = Array.from(s);
  if (chars.length && chars.every(c => map[c])) return chars.map(c => map[c]).join("");
  return mark + (chars.length > 1 ? "(" + s + ")" : s);
};
const mml = node => {
  if (node.nodeType === 3) return node.textContent;
  if (node.nodeType !== 1) return "";
  const tag = node.localName, kids = Array.from(node.children);
  const all = () => kids.map(mml).join("");
  switch (tag) {
    case "mi": case "mn": case "mtext": case "ms": return node.textContent.trim();
    case "mo": {
      const op = node.textContent.trim();
      if (["\u2061", "\u2062", "\u2063"].includes(op)) return "";     // invisible operators
      if (op === ",") return ", ";
      // (a sign opening its group, "-4.7", stays on its number)
      return SPACED.has(op) && node.previousElementSibling ? " " + op + " " : op;
    }
    case "mspace": return " ";
    case "msup": return mml(kids[0]) + script(mml(kids[1]).trim(), SUP, "^");
    case "msub": return mml(kids[0]) + script(mml(kids[1]).trim(), SUB, "_");
    case "msubsup": return mml(kids[0]) + script(mml(kids[1]).trim(), SUB, "_")
                           + script(mml(kids[2]).trim(), SUP, "^");
    case "mfrac": return mml(kids[0]) + "/" + mml(kids[1]);
    case "msqrt": return "\u221a(" + all() + ")";
    case "mover": case "munder": case "munderover": return mml(kids[0]);
    case "annotation": case "annotation-xml": return "";
    default: return all();
  }
};
const mathText = m => {
  const math = m.querySelector("mjx-assistive-mml math");
  return math ? mml(math).replace(/\s+/g, " ").trim() : (m.getAttribute("aria-label") || "");
};
const headingText = h => {
  const walk = n => {
    if (n.nodeType === 3) return n.textContent;
    if (n.nodeType !== 1 || n.classList.contains("headerlink")) return "";
    if (n.localName === "mjx-container") return mathText(n);
    return Array.from(n.childNodes).map(walk).join("");
  };
  return walk(h);
};
"""

# The book's pages in print order. The theme's own print title and contents (the first page
# of any printed page) give way to the front matter printed after the body; the start page's
# title (which the theme hides in print, as its print title repeats it) shows. The chapters the
# print leaves out go (with their part when it has none left). Each part's caption becomes a
# heading of its own (an h1, as the book's title is: the outline nests the chapters, h2, and their
# sections, h3, under it) at the top of its first chapter's first page (not on a page of its own,
# which would hold one line): the one-page build has no part captions; _toc.yml has them. Returns the headings in page order, as the outline lists them.
_ARRANGE = _HEADING_TEXT + """
const [parts, leaveOut] = arguments;
const front = document.getElementById("jb-print-docs-body");
if (front) front.remove();
const article = document.querySelector(".bd-article");
// (print.css starts the article on a new page, after the theme's print title: none here)
article.style.setProperty("break-before", "auto", "important");
const title = article.querySelector("h1");
title.classList.add("blc-book-title");
for (const file of leaveOut) {
  const anchor = document.getElementById("document-" + file);
  if (!anchor) continue;
  const section = anchor.nextElementSibling;
  if (section && section.tagName === "SECTION") section.remove();
  const wrapper = anchor.parentNode;
  anchor.remove();
  if (wrapper.classList.contains("toctree-wrapper") && !wrapper.querySelector("section"))
    wrapper.remove();
}
let placed = 0;
for (const part of parts) {
  const anchor = part.files.map(f => document.getElementById("document-" + f)).find(a => a);
  if (!anchor) continue;
  const page = document.createElement("div");
  page.className = "blc-part-page";
  const heading = document.createElement("h1");
  heading.className = "blc-part-title";
  heading.id = "part-" + (placed + 1);
  heading.textContent = part.caption;
  page.appendChild(heading);
  anchor.parentNode.insertBefore(page, anchor);
  // the part's first chapter starts on the part title's page, below it (print.css)
  const first = anchor.nextElementSibling;
  if (first && first.tagName === "SECTION") first.classList.add("blc-part-first");
  placed++;
}
// A cross-reference the one-page build writes as "intro.html#id" points at the page served on
// 127.0.0.1: in the PDF, it points inside the PDF ("#id"), and a link to what the print does not
// hold (a chapter left out, a download) is no link.
const links = {inside: 0, dropped: 0};
for (const a of article.querySelectorAll("a[href]")) {
  const url = new URL(a.getAttribute("href"), location.href);
  if (url.origin !== location.origin) continue;
  const id = decodeURIComponent(url.hash.slice(1));
  if (id && document.getElementById(id)) { a.setAttribute("href", "#" + id); links.inside++; }
  else { a.removeAttribute("href"); links.dropped++; }
}
// A heading's text as it reads, for the bookmarks: its math as text, without the link mark.
const text = h => headingText(h).replace(/\\s+/g, " ").trim();
// (every heading, numbered: print_book keeps those that show in print, as the outline does)
const headings = Array.from(article.querySelectorAll("h1, h2, h3, h4, h5, h6"))
  .map((h, i) => { h.dataset.blcHeading = String(i); return h; })
  .map(h => ({level: +h.tagName[1], text: text(h), index: +h.dataset.blcHeading,
              kind: h === title ? "start" : h.classList.contains("blc-part-title") ? "part"
                    : (h.tagName === "H2" && h.parentNode.previousElementSibling
                       && (h.parentNode.previousElementSibling.id || "").startsWith("document-"))
                      ? "chapter" : "section"}));
// the text of what prints only (`:::{container} print-only`): tests/test_pdf.py lets it say what
// the screen-only text may not ("on the web page the figure has sliders")
const printOnly = Array.from(article.querySelectorAll(".print-only")).map(e => e.textContent);
return {parts: placed, headings, links, printOnly};
"""

# The headings that show in print (a heading in a screen-only part does not), as numbered by
# _ARRANGE: those Chromium's outline lists.
_PRINTED_HEADINGS = """
return Array.from(document.querySelectorAll("[data-blc-heading]"))
  .filter(h => h.getClientRects().length > 0).map(h => +h.dataset.blcHeading);
"""

_CUT = """
// The first n characters, whole: math italic letters are surrogate pairs, and a lone half is not
// a string WebDriver can return.
const cut = (text, n) => Array.from(text).slice(0, n).join("");
"""

# In print emulation at the printable width: a display equation or a table wider than its column
# is set in a smaller font until it fits (MathJax's output and a table scale with their font).
# Then every element whose right edge passes the text column is reported, but for what is clipped
# on purpose (inside an element that clips its overflow and itself fits) and MathJax's hidden
# copy of each formula for screen readers.
_FIT = _CUT + """
const article = document.querySelector(".bd-article");
const shrunk = [];
const fit = (el, box) => {
  for (let i = 0; i < 6; i++) {
    const need = el.scrollWidth, room = box.clientWidth;
    if (need <= room + 0.5) return;
    const size = parseFloat(getComputedStyle(el).fontSize);
    el.style.setProperty("font-size", (size * room / need * 0.98).toFixed(2) + "px", "important");
    if (i === 0) shrunk.push(el.tagName.toLowerCase() + " " + cut((el.textContent || "").trim(), 60));
  }
};
for (const el of article.querySelectorAll('mjx-container[display="true"]')) fit(el, el.parentNode);
// A figure prints at the size it was drawn: an inch per 100 px of its natural width (the book's
// style draws at 100 dpi; the page gives the natural size as the image's style, and a chapter's
// PNG holds lib.book.plots.PIXEL_SCALE times as many pixels: 200 dots to the inch), so its text
// prints at the point size the style gives it. A tall one shrinks to fit the page with its
// caption below it (the text height less the caption and a gap, at most FIGURE_ROOM_CM), and one
// 16 cm to 16/0.75 cm tall to 16 cm, which more often fits below the text before it (a taller
// one leaves that page half empty). Each figure's printed scale (of its drawn size) and dots per
// inch go to the report.
const [roomCm, gapCm, textHeight, column] = arguments;
const cm = 96 / 2.54, figures = [];
for (const img of article.querySelectorAll("figure img, div.cell_output img")) {
  if (!img.naturalWidth) continue;
  // its natural width (a PNG stored without its size: its pixels), drawn at 100 dpi: in CSS px
  const natural = /px$/.test(img.style.width) ? parseFloat(img.style.width) : img.naturalWidth;
  const drawn = natural / 100 * 96;
  const ratio = img.naturalHeight / img.naturalWidth;
  const caption = (img.closest("figure") || {querySelector: () => null}).querySelector("figcaption");
  const room = Math.min(roomCm * cm,
                        textHeight - (caption ? caption.getBoundingClientRect().height : 0) - gapCm * cm);
  let width = Math.min(drawn, column);
  if (width * ratio > room) width = room / ratio;
  else if (width * ratio > 16 * cm && 16 * cm / (width * ratio) >= 0.75) width = 16 * cm / ratio;
  img.style.setProperty("width", width.toFixed(2) + "px", "important");
  img.style.setProperty("height", (width * ratio).toFixed(2) + "px", "important");
  img.style.setProperty("max-height", "none", "important");
  img.style.setProperty("max-width", "100%", "important");
  figures.push({name: (img.closest("figure[id]") || {}).id || cut(img.getAttribute("alt") || img.src, 50),
                scale: width / drawn, dpi: img.naturalWidth / (width / 96)});
}
for (const el of article.querySelectorAll("table")) {
  const box = el.closest(".pst-scrollable-table-container, .table-wrapper, .output, .cell_output")
              || el.parentNode;
  fit(el, box);
}
return {shrunk, figures};
"""

_OVERFLOW = _CUT + """
const article = document.querySelector(".bd-article");
const right = article.getBoundingClientRect().right - parseFloat(getComputedStyle(article).paddingRight);
const left = article.getBoundingClientRect().left + parseFloat(getComputedStyle(article).paddingLeft);
const clips = el => { const s = getComputedStyle(el); return s.overflowX !== "visible"; };
// MathJax's copy of each formula for screen readers is positioned over it and clipped to nothing:
// out of the measure (it would count in its box's scroll width)
const hide = document.createElement("style");
hide.textContent = "mjx-assistive-mml { display: none !important; }";
document.head.appendChild(hide);
const wide = [];
const walk = el => {
  for (const child of el.children) {
    const tag = child.tagName.toLowerCase();
    if (tag === "mjx-assistive-mml" || tag === "script" || tag === "style") continue;
    const s = getComputedStyle(child);
    if (s.display === "none" || s.visibility === "hidden") continue;
    const r = child.getBoundingClientRect();
    if (r.width > 0 && (r.right > right + 1 || r.left < left - 1)) {
      wide.push({tag, cls: typeof child.className === "string" ? child.className : "",
                 width: Math.round(r.width), over: Math.round(Math.max(r.right - right, left - r.left)),
                 text: cut((child.textContent || "").replace(/\\s+/g, " ").trim(), 80),
                 where: (child.closest("section[id]") || {}).id || ""});
      continue;                       // its children are part of the same finding
    }
    // what an element clips to its own box cannot pass the column if the element does not;
    // but content it hides (or scrolls) is lost on paper, unless a figure crops on purpose
    // (an inline element clips nothing, whatever its overflow says)
    if (clips(child) && r.width > 0 && s.display !== "inline") {
      // (MathJax draws a stretched delimiter from glyphs clipped to its size: on purpose)
      if (child.scrollWidth > child.clientWidth + 1 && !tag.startsWith("mjx-")
          && !child.closest("figure, .blc-explorer"))
        wide.push({tag, cls: typeof child.className === "string" ? child.className : "",
                   width: Math.round(r.width), over: child.scrollWidth - child.clientWidth,
                   text: "clipped: " + cut((child.textContent || "").replace(/\\s+/g, " ").trim(), 70),
                   where: (child.closest("section[id]") || {}).id || ""});
      continue;
    }
    walk(child);
  }
};
walk(article);
hide.remove();
return {column: Math.round(right - left), wide: wide.slice(0, 50), count: wide.length};
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        raise SystemExit("make pdf needs Chromium and chromedriver (Debian: apt-get install "
                         "chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]:
        options.add_argument(arg)
    # Printing the whole book takes Chromium minutes on a busy 2-core machine: every command may
    # take 30 minutes (Selenium's own client otherwise gives a command 120 s).
    socket.setdefaulttimeout(1800)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    driver.command_executor.client_config.timeout = 1800
    driver.set_page_load_timeout(600)
    driver.set_script_timeout(1200)
    return driver


def toc_parts(toc: Path = ROOT / "_toc.yml") -> list[dict]:
    """Each part's caption and its chapters' files, as _toc.yml lists them."""
    parts = yaml.safe_load(toc.read_text())["parts"]
    return [{"caption": part["caption"], "files": [c["file"] for c in part["chapters"]]}
            for part in parts if part.get("chapters")]


def course_leaves_out(parts: list[dict]) -> list[str]:
    """The chapters the course alone does not print: the reference part (its caption starts
    "Reference") and the errata index, which lists the reference part's errata with the
    course's (each erratum stays in its chapter)."""
    out = [f for part in parts if part["caption"].startswith("Reference") for f in part["files"]]
    out += [f for part in parts for f in part["files"] if f.endswith("/errata")]
    if not out:
        raise ValueError("_toc.yml has no part whose caption starts 'Reference': the course "
                         "print would be the whole book")
    return out


def _squeezed(text: str) -> str:
    """Without white space or curly quotes: Chromium's outline drops the space where a heading
    wraps ("Maximum likelihood by gradientascent")."""
    return "".join(text.replace("\u2019", "'").replace("\u2018", "'").split())


def _outline(reader) -> list[dict]:
    """The printed body's outline: each entry's depth, title, page index and place on the page."""
    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                yield from walk(item, depth + 1)
            else:
                yield {"depth": depth, "title": str(item.title),
                       "page": reader.get_destination_page_number(item),
                       "left": item.get("/Left"), "top": item.get("/Top")}
    return list(walk(reader.outline, 0))


def _name_outline(outline: list[dict], headings: list[dict]) -> list[dict]:
    """Each outline entry with the heading it points to (its text as the page sets it, math as
    text, and its kind: start page, part, chapter, section), matched in order. Chromium's outline
    lists the page's headings in order, but its titles are not their text: it drops a formula
    ("The evidence as  and  vary"), runs words together where a heading wraps, and doubles some
    ("3.5. 3.5. The MAP ...The MAP ..."). So each entry takes the heading, among the next few,
    whose text is most like its title (issue 36.14)."""
    import difflib

    i = 0
    for entry in outline:
        want = _squeezed(entry["title"])
        best, score = None, 0.0
        for j in range(i, min(i + 4, len(headings))):
            have = _squeezed(headings[j]["text"])
            ratio = 1.0 if have == want else difflib.SequenceMatcher(None, want, have).ratio()
            if ratio > score:
                best, score = j, ratio
            if ratio == 1.0:
                break
        if best is not None and score >= 0.5:
            entry.update(title=headings[best]["text"], kind=headings[best]["kind"])
            i = best + 1
        else:
            entry["kind"] = "other"
    return outline


def _version() -> str:
    """The revision printed (git's short hash, marked when the tree has local changes)."""
    try:
        rev = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--",
                                "chapters", "_toc.yml", "_config.yml"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return f"revision {rev}" + (" with local changes" if dirty else "")


def contents(outline: list[dict], pages: int) -> list[dict]:
    """The contents page's entries from the body's outline: the start page, each part with its
    first and last page, each chapter with its first page (pages numbered from 1)."""
    entries = []
    for entry in outline:
        if entry["kind"] in ("start", "part", "chapter"):
            entries.append({"kind": entry["kind"], "title": entry["title"],
                            "page": entry["page"] + 1})
    starts = [e for e in entries if e["kind"] in ("start", "part")]
    for here, after in zip(starts, starts[1:] + [None]):
        here["last"] = after["page"] - 1 if after else pages
    return entries


_FRONT_CSS = """
@page { size: A4; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #222; margin: 0; font-size: 11pt; line-height: 1.35; }
.title-page { height: 9.6in; display: flex; flex-direction: column; justify-content: center;
              text-align: center; break-after: page; }
.title-page h1 { font-size: 30pt; margin: 0 0 0.3in 0; line-height: 1.15; }
.title-page .subtitle { font-size: 16pt; margin: 0 0 0.8in 0; color: #444; }
.title-page .author { font-size: 14pt; margin: 0 0 0.2in 0; }
.title-page .version { font-size: 10pt; color: #555; }
.title-page .licence { font-size: 10pt; color: #333; margin: 0.25in 0 0 0; }
h2 { font-size: 20pt; margin: 0 0 0.15in 0; }
.note { font-size: 10pt; color: #333; margin: 0 0 0.2in 0; }
ol { list-style: none; padding: 0; margin: 0; }
li { display: flex; align-items: baseline; margin: 0.04in 0; break-inside: avoid; }
li .t { flex: 0 1 auto; }
li .dots { flex: 1 1 auto; border-bottom: 1px dotted #888; margin: 0 0.4em; min-width: 1em; }
li .p { flex: 0 0 auto; font-variant-numeric: tabular-nums; }
li.start, li.part { font-weight: 600; margin-top: 0.16in; }
li.chapter { padding-left: 1.6em; }
li.part .p, li.start .p { font-weight: 600; }
a { color: inherit; text-decoration: none; }
"""


def subtitle_of(entries: list[dict], course: bool) -> str:
    """The title page's subtitle: "Course notes", with the chapters the course alone holds."""
    numbers = [e["title"].split(".")[0] for e in entries
               if e["kind"] == "chapter" and e["title"].split(".")[0].isdigit()]
    return "Course notes" + (f": the course alone (chapters {numbers[0]}\u2013{numbers[-1]})"
                             if course and numbers else "")


def front_matter(entries: list[dict], title: str, author: str, course: bool,
                 printed: str) -> str:
    """The title page and the contents page, as an HTML document. Each contents line links to
    ``#page-N`` (the page the merge points it to)."""
    esc = htmllib.escape
    subtitle = subtitle_of(entries, course)
    lines = []
    for e in entries:
        if e["kind"] == "chapter":
            where = str(e["page"])
        else:
            where = (f"{e['page']}\u2013{e['last']}" if e["last"] > e["page"] else str(e["page"]))
        # (the start page's title is the book's, as is the second part's caption)
        name = "About these notes (the start page)" if e["kind"] == "start" else e["title"]
        lines.append(f'<li class="{e["kind"]}"><a class="t" href="https://blc.invalid/#page-{e["page"]}">'
                     f'{esc(name)}</a><span class="dots"></span>'
                     f'<a class="p" href="https://blc.invalid/#page-{e["page"]}">{where}</a></li>')
    parts = [e for e in entries if e["kind"] == "part"]
    ref = [p for p in parts if p["title"].startswith("Reference")]
    optional = [p for p in parts if p["title"].startswith("Optional")]
    core = [p for p in parts if p not in ref and p not in optional and p["title"] != "Back matter"]
    note = []
    if core:
        note.append(f"The core course: pages {core[0]['page']}\u2013{core[-1]['last']}, read in "
                    "order.")
    if optional:
        note.append(f"Optional chapters: pages {optional[0]['page']}\u2013{optional[-1]['last']}.")
    if ref:
        note.append(f"The reference part (the lab report, reproduced): pages "
                    f"{ref[0]['page']}\u2013{ref[-1]['last']}; the course never depends on it, "
                    "and <code>make pdf-course</code> prints the course without it.")
    elif course:
        note.append("The reference part (the lab report, reproduced) and the errata index are "
                    "in the whole book (<code>make pdf</code>).")
    note.append("Each solution is printed right after its exercise; folded plotting code is left "
                "out, its figures and tables are printed.")
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>{esc(title)}</title><style>{_FRONT_CSS}</style></head><body>
<div class="title-page"><h1>{esc(title)}</h1><p class="subtitle">{esc(subtitle)}</p>
<p class="author">{esc(author)}</p><p class="version">{esc(printed)}</p>
<p class="licence">{esc(licence_line())}</p></div>
<h2>Contents</h2><p class="note">{' '.join(note)}</p>
<ol>{''.join(lines)}</ol></body></html>"""


def metadata(title: str, author: str, subtitle: str) -> dict:
    """The PDF's document information (pdfinfo shows it): title, authors, the licence."""
    return {"/Title": title, "/Author": author,
            "/Subject": f"{subtitle}. {licence_line()}.",
            "/Keywords": "Bayesian logistic classification; Laplace approximation; model evidence; "
                         "course notes",
            "/Creator": "scripts/print_pdf.py (Jupyter Book, printed by Chromium)",
            "/Rights": licence_line()}


def _xmp(info: dict) -> bytes:
    """The same as XMP (the catalogue's /Metadata stream), where dc:rights holds the licence."""
    esc = htmllib.escape
    return f"""<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"
 xmlns:xmpRights="http://ns.adobe.com/xap/1.0/rights/" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">{esc(info["/Title"])}</rdf:li></rdf:Alt></dc:title>
<dc:creator><rdf:Seq><rdf:li>{esc(info["/Author"])}</rdf:li></rdf:Seq></dc:creator>
<dc:description><rdf:Alt><rdf:li xml:lang="x-default">{esc(info["/Subject"])}</rdf:li></rdf:Alt></dc:description>
<dc:rights><rdf:Alt><rdf:li xml:lang="x-default">{esc(info["/Rights"])}</rdf:li></rdf:Alt></dc:rights>
<xmpRights:Marked>True</xmpRights:Marked>
<pdf:Keywords>{esc(info["/Keywords"])}</pdf:Keywords>
</rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>""".encode("utf-8")


def _merge(front: bytes, body: bytes, outline: list[dict], contents_pages: int,
           info: dict | None = None) -> bytes:
    """The front matter then the body; the outline: the contents page, then the body's (its
    titles as the page sets them); page labels i, ii, ... then 1, 2, ...; the contents lines
    link to their pages; the document information ``info`` (:func:`metadata`), also as XMP."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, Fit, NameObject, NullObject

    front_reader, body_reader = PdfReader(io.BytesIO(front)), PdfReader(io.BytesIO(body))
    writer = PdfWriter()
    writer.append(front_reader, import_outline=False)
    offset = len(writer.pages)
    writer.append(body_reader, import_outline=False)
    # the contents' links: Chromium wrote each "#page-N" as a link to that address; point it at
    # the body's page N instead
    for page in writer.pages[:offset]:
        for ref in page.get("/Annots", []) or []:
            annot = ref.get_object()
            action = annot.get("/A")
            uri = str(action.get("/URI", "")) if action else ""
            if "#page-" in uri:
                target = writer.pages[offset + int(uri.rsplit("#page-", 1)[1]) - 1]
                del annot[NameObject("/A")]
                annot[NameObject("/Dest")] = ArrayObject(
                    [target.indirect_reference, NameObject("/XYZ"), NullObject(), NullObject(),
                     NullObject()])
    writer.add_outline_item(title="Contents", page_number=offset - contents_pages)
    parents = {}
    for entry in outline:
        parent = parents.get(entry["depth"] - 1) if entry["depth"] else None
        fit = (Fit.xyz(entry["left"], entry["top"]) if entry["top"] is not None else Fit.fit())
        item = writer.add_outline_item(title=entry["title"], page_number=offset + entry["page"],
                                       parent=parent, fit=fit)
        parents[entry["depth"]] = item
    writer.set_page_label(0, offset - 1, style="/r")
    writer.set_page_label(offset, len(writer.pages) - 1, style="/D", start=1)
    writer.page_mode = "/UseOutlines"
    if info:
        from pypdf.generic import StreamObject

        writer.add_metadata(info)
        xmp = StreamObject()
        xmp.set_data(_xmp(info))
        xmp.update({NameObject("/Type"): NameObject("/Metadata"),
                    NameObject("/Subtype"): NameObject("/XML")})
        writer._root_object[NameObject("/Metadata")] = writer._add_object(xmp)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def print_book(html: Path, out: Path, course: bool = False) -> dict:
    """Print ``html/chapters/intro.html`` to ``out`` (the course alone if ``course``); return
    what the page held and where each part and chapter starts."""
    from pypdf import PdfReader

    if not (html / "chapters" / "intro.html").is_file():
        raise SystemExit(f"{html}/chapters/intro.html is missing: build it first with "
                         "`jupyter-book build --builder singlehtml .`")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    parts = toc_parts()
    leave_out = course_leaves_out(parts) if course else []
    # The builder writes the book to chapters/intro.html with links relative to the top folder
    # (_static/, _images/): open a copy from there.
    (html / "book.html").write_bytes((html / "chapters" / "intro.html").read_bytes())
    handler = functools.partial(_Quiet, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    driver = _driver()
    try:
        # The page loads at the printable width (each change of width or media lays the whole
        # book out again: a few CPU seconds each), and keeps it while printing.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": PRINTABLE_WIDTH_PX, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        driver.get(f"{base}/book.html")
        seen = driver.execute_async_script(_SETTLE)
        arranged = driver.execute_script(_ARRANGE, parts, leave_out)
        seen["parts"], seen["links"] = arranged["parts"], arranged["links"]
        seen["print_only"] = arranged["printOnly"]
        # the page as it prints: print media, the printable width
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        fitted = driver.execute_script(_FIT, FIGURE_ROOM_CM, FIGURE_GAP_CM, TEXT_HEIGHT_PX,
                                       PRINTABLE_WIDTH_PX)
        seen["shrunk"], seen["figures"] = fitted["shrunk"], fitted["figures"]
        printed_headings = set(driver.execute_script(_PRINTED_HEADINGS))
        arranged["headings"] = [h for h in arranged["headings"] if h["index"] in printed_headings]
        seen["chapters"] = [h["text"] for h in arranged["headings"] if h["kind"] == "chapter"]
        seen["headings"] = arranged["headings"]
        seen["overflow"] = driver.execute_script(_OVERFLOW)
        # Chrome's DevTools call, not WebDriver's print (which gives up after 10 s on a long page)
        body = base64.b64decode(driver.execute_cdp_cmd("Page.printToPDF", _PAGE)["data"])
        reader = PdfReader(io.BytesIO(body))
        outline = _name_outline(_outline(reader), arranged["headings"])
        entries = contents(outline, len(reader.pages))
        printed = f"Printed {datetime.date.today().isoformat()}"
        version = _version()
        (html / "front.html").write_text(front_matter(
            entries, config["title"], config.get("author", ""), course,
            printed + (f" from {version}" if version else "")))
        driver.get(f"{base}/front.html")
        front = base64.b64decode(driver.execute_cdp_cmd("Page.printToPDF", _FRONT_PAGE)["data"])
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
    front_pages = len(PdfReader(io.BytesIO(front)).pages)
    info = metadata(config["title"], config.get("author", ""), subtitle_of(entries, course))
    pdf = _merge(front, body, outline, front_pages - 1, info)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pdf)
    seen.update(pages=front_pages + len(reader.pages), front_pages=front_pages,
                bytes=len(pdf), contents=entries)
    return seen


if __name__ == "__main__":
    args = sys.argv[1:]
    course = "--course" in args
    args = [a for a in args if a != "--course"]
    if len(args) != 2:
        raise SystemExit(__doc__)
    report = print_book(Path(args[0]), Path(args[1]), course=course)
    print(json.dumps(report | {"chapters": len(report["chapters"]),
                               "contents": len(report["contents"]),
                               "headings": len(report["headings"]),
                               "print_only": len(report["print_only"]),
                               "figures": len(report["figures"]),
                               "smallest_figure_scale": min(
                                   (f["scale"] for f in report["figures"]), default=None)}))
