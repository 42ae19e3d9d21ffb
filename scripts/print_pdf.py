"""Print the one-page HTML book to a PDF with headless Chromium (``make pdf``).

    python scripts/print_pdf.py _build/singlehtml _build/pdf/book.pdf

Serves the folder on 127.0.0.1, opens a copy of ``chapters/intro.html`` (the whole book on one
page, from jupyter-book's ``singlehtml`` builder) as ``book.html`` in Chromium through Selenium, waits until MathJax has
typeset it and every image is decoded, opens the collapsed solutions and errata (a printed copy
has no buttons to press; folded code stays folded), and prints it on A4 with Chromium's own PDF
printer. No request leaves the machine. Prints one JSON line: pages, chapters, typeset formulas
and images seen on the page.
"""
from __future__ import annotations

import base64
import functools
import http.server
import json
import shutil
import socket
import sys
import threading
from pathlib import Path

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
    chapters: Array.from(document.querySelectorAll("section > h2, section > h1"))
      .map(h => h.textContent.replace("#", "").trim()),
  });
})();
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
    # Printing the whole book takes Chromium minutes on a busy 2-core machine: wait up to 15.
    socket.setdefaulttimeout(900)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    driver.set_page_load_timeout(300)
    driver.set_script_timeout(300)
    return driver


def print_book(html: Path, out: Path) -> dict:
    """Print ``html/chapters/intro.html`` to ``out``; return what the page held."""
    if not (html / "chapters" / "intro.html").is_file():
        raise SystemExit(f"{html}/chapters/intro.html is missing: build it first with "
                         "`jupyter-book build --builder singlehtml .`")
    # The builder writes the book to chapters/intro.html with links relative to the top folder
    # (_static/, _images/): open a copy from there.
    (html / "book.html").write_bytes((html / "chapters" / "intro.html").read_bytes())
    handler = functools.partial(_Quiet, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = _driver()
    try:
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/book.html")
        seen = driver.execute_async_script(_SETTLE)
        # Chrome's DevTools call, not WebDriver's print (which gives up after 10 s on a long page)
        pdf = base64.b64decode(driver.execute_cdp_cmd("Page.printToPDF", {
            "paperWidth": 8.27, "paperHeight": 11.69,                  # A4, in inches
            "marginTop": 0.6, "marginBottom": 0.6, "marginLeft": 0.6, "marginRight": 0.6,
            "printBackground": True,
        })["data"])
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pdf)
    seen["pages"] = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    seen["bytes"] = len(pdf)
    return seen


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    report = print_book(Path(sys.argv[1]), Path(sys.argv[2]))
    print(json.dumps(report | {"chapters": len(report["chapters"])}))
