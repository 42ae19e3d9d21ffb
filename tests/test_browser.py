"""The book as a reader gets it: every page opened in headless Chromium, served from 127.0.0.1.

Checks, page by page: no console error, no request to any host but the local server (and no
failed or 4xx/5xx request), MathJax typeset every equation (each math element holds an
mjx-container and no raw TeX delimiters are left in the text), every image loaded, every internal
link and #anchor resolves; the search page finds "evidence". With BLC_SCREENSHOTS=1 set, a
full-page screenshot of each chapter is saved under _build/screenshots/ (they cost about a minute
on 2 cores, so only when asked). Each chapter's layout (scripts/page_layout.py: figures shown at >= 60 %
of their natural width with alt text that describes them, tables that fit the column without
NaN, snake_case headers or raw indexes, no visible code cut off or glue call, no sideways scrolling
on a phone) is checked at 1280 px and at 390 px (the same page loaded once and shown at both widths: a chapter
loaded at a phone's width, where the one before it ended, is measured there first).
Each chapter is also checked by axe-core, the accessibility field's own checker (its WCAG 2 A and AA
rules: contrast, roles, names, ...), installed pinned from npm into _vendor/axe-core/ by
scripts/install_mathjax.py and injected into the page already loaded: 0 violations.

Needs Debian's `chromium` and `chromium-driver` (apt-get install chromium chromium-driver; .ci/run
installs them). Without them the tests are skipped locally, and fail when CI is set.
"""
import base64
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import page_layout  # noqa: E402  (scripts/page_layout.py: what a reader sees, measured)

SCREENSHOTS = ROOT / "_build" / "screenshots"
INSTALL_HINT = (
    "install Debian's chromium and chromium-driver "
    "(sudo apt-get install chromium chromium-driver; .ci/run does this)"
)


def _find(*names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def _need(condition, message):
    """Skip locally, fail in CI, when the browser or its driver is missing."""
    if not condition:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {message}: {INSTALL_HINT}")
        pytest.skip(f"{message}: {INSTALL_HINT}")


@pytest.fixture(scope="module")
def site(served_book):
    """The built book served on 127.0.0.1 (tests/conftest.py)."""
    return served_book


@pytest.fixture(scope="module")
def browser():
    chromium = _find("chromium", "chromium-browser")
    driver_path = _find("chromedriver")
    _need(chromium, "Chromium is not installed")
    _need(driver_path, "chromedriver is not installed")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _need(False, "selenium is not installed (pip install -r requirements.lock)")

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--window-size=1280,1000", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--disable-extensions",
        # Nothing but the local server resolves: a request to another host fails at once,
        # never leaves the machine, and still shows up in the network log the test reads.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


# Waits until the page has loaded, MathJax has typeset it (when the page loads MathJax), fonts
# are in and every image has been fetched and decoded (lazy images are made eager).
_SETTLE = """
const done = arguments[arguments.length - 1];
(async () => {
  while (document.readyState !== "complete") await new Promise(r => setTimeout(r, 50));
  let mathjax = "absent";
  if (document.querySelector('script[src*="mathjax"]')) {
    for (let i = 0; i < 200 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
      await new Promise(r => setTimeout(r, 50));
    if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) mathjax = "never started";
    else {
      try { await MathJax.startup.promise; mathjax = "typeset"; }
      catch (e) { mathjax = "failed: " + e; }
    }
  }
  const imgs = Array.from(document.images);
  imgs.forEach(img => { img.loading = "eager"; });
  await Promise.all(imgs.map(img => img.decode().catch(() => null)));
  await document.fonts.ready;
  done(mathjax);
})();
"""

# What the checks need from the page, in one round trip.
_INSPECT = r"""
const skip = "pre, code, script, style, textarea, mjx-container, .highlight";
const raw = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const texRe = /\\\(|\\\[|\$\$|\\begin\{|\$[^$\n]*\\[A-Za-z]+[^$\n]*\$/;
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const p = n.parentElement;
  if (!p || p.closest(skip)) continue;
  const m = n.textContent.match(texRe);
  if (m) raw.push(n.textContent.trim().slice(0, 120));
}
const math = Array.from(document.querySelectorAll(".math"));
return {
  url: location.href,
  title: document.title,
  math: math.length,
  untypeset: math.filter(el => !el.querySelector("mjx-container"))
                 .map(el => el.textContent.trim().slice(0, 80)),
  mjx: document.querySelectorAll("mjx-container").length,
  raw_tex: raw,
  images: document.images.length,
  broken_images: Array.from(document.images)
                   .filter(img => !(img.complete && img.naturalWidth > 0)).map(img => img.src),
  ids: Array.from(document.querySelectorAll("[id]")).map(el => el.id)
        .concat(Array.from(document.querySelectorAll("a[name]")).map(el => el.name)),
  links: Array.from(document.querySelectorAll("a[href]")).map(a => a.href),
  height: Math.max(document.documentElement.scrollHeight, document.body.scrollHeight),
};
"""


def _network(driver, origin):
    """(requests to other hosts, failed or 4xx/5xx local requests, all requested URLs) since the
    last call."""
    foreign, failed, urls = [], [], {}
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            urls[params["requestId"]] = url
            local = url.startswith(origin + "/")
            if not (local or url.split(":", 1)[0] in {"data", "blob", "about"}):
                foreign.append(url)
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            failed.append(f"{params['response']['status']} {params['response']['url']}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            url = urls.get(params["requestId"], params["requestId"])
            if url.startswith(origin + "/"):
                failed.append(f"{params.get('errorText')} {url}")
    return foreign, failed, list(urls.values())


def _console_errors(driver):
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _screenshot(driver, stem, height):
    """The whole page (not just the window) as PNGs 1280 px wide: stem.png, then stem-2.png, ...
    for every further 12000 px of a long page."""
    tile = 12000
    for i, top in enumerate(range(0, int(height), tile)):
        png = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": top, "width": 1280, "height": min(tile, height - top),
                     "scale": 1},
        })
        name = f"{stem}.png" if i == 0 else f"{stem}-{i + 1}.png"
        (SCREENSHOTS / name).write_bytes(base64.b64decode(png["data"]))


def _pages(html):
    """Every HTML page of the book, relative to the site root (index.html only redirects)."""
    return sorted(
        p.relative_to(html).as_posix() for p in html.rglob("*.html")
        if not p.relative_to(html).parts[0].startswith("_") and p.name != "index.html"
    )


# After a change of the window's size: two animation frames, so that the page has been laid out
# again (MathJax's output is not re-typeset: it is the same at any width), then its layout.
_RELAYOUT = """
const done = arguments[arguments.length - 1];
requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
"""

#: A phone's window (a mobile viewport, 390 px wide).
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}


def _resize(driver, phone):
    """Show the loaded page at a phone's width (``phone``) or at the window's own, 1280 px, and
    wait until it is laid out again. The width stays for the pages loaded next."""
    if phone:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    else:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.execute_async_script(_RELAYOUT)


AXE_JS = ROOT / "_vendor" / "axe-core" / "axe.min.js"

# axe-core's rules for WCAG 2 level A and AA (its tags wcag2a and wcag2aa) on the page as shown
# (hidden content, such as a closed solution, is not checked). Only the violations come back, each
# rule with the CSS selectors of the elements that break it.
_AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa"]},
                   resultTypes: ["violations"]})
  .then(r => done(r.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      targets: v.nodes.map(n => n.target.join(" "))}))))
  .catch(e => done([{id: "axe-error", impact: "critical", help: String(e), targets: []}]));
"""


def _axe(driver, source):
    """axe-core's WCAG 2 A and AA violations on the loaded page: [{id, impact, help, targets}]."""
    driver.execute_script(source)
    return driver.execute_async_script(_AXE_RUN)


@pytest.fixture(scope="module")
def visited(site, browser):
    """Open every page once; return {page: (settle status, inspection, foreign, failed, errors,
    requested URLs)}. A chapter's inspection holds its layout at 1280 px ("layout") and at 390 px
    ("phone"), and axe-core's violations at 1280 px ("axe")."""
    html, origin = site
    screenshots = bool(os.environ.get("BLC_SCREENSHOTS"))
    if screenshots:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for old in SCREENSHOTS.glob("*.png"):
            old.unlink()
    _network(browser, origin), _console_errors(browser)  # drop the start-up logs
    # installed with MathJax before the book is built (conftest.py); test_chapters_pass_axe_core
    # fails when it is missing
    axe = AXE_JS.read_text() if AXE_JS.is_file() else None
    results, phone = {}, False
    for page in _pages(html):
        # Each chapter is seen at both widths, starting at the width the last one ended at: one
        # change of width a chapter (each lays the page out again: about a CPU second).
        browser.get(f"{origin}/{page}")
        status = browser.execute_async_script(_SETTLE)
        info = browser.execute_script(_INSPECT)
        if page.startswith("chapters/"):
            for _ in range(2):
                if phone:
                    info["phone"] = browser.execute_script(page_layout.LAYOUT)
                else:
                    if screenshots:
                        _screenshot(browser, Path(page).stem, browser.execute_script(
                            "return document.documentElement.scrollHeight"))
                    info["layout"] = browser.execute_script(page_layout.LAYOUT)
                    if axe:
                        info["axe"] = _axe(browser, axe)
                if "phone" not in info or "layout" not in info:
                    phone = not phone
                    _resize(browser, phone)
        foreign, failed, requested = _network(browser, origin)
        results[page] = (status, info, foreign, failed, _console_errors(browser), requested)
    if phone:
        _resize(browser, False)
    return results


def test_every_page_loads_cleanly_and_offline(visited):
    problems = {}
    for page, (status, info, foreign, failed, errors, _) in visited.items():
        issue = {}
        if foreign:
            issue["requests to other hosts"] = foreign
        if failed:
            issue["failed requests"] = failed
        if errors:
            issue["console errors"] = errors
        if status not in {"absent", "typeset"}:
            issue["MathJax"] = status
        if issue:
            problems[page] = issue
    assert not problems, json.dumps(problems, indent=1)
    assert any(p.startswith("chapters/") for p in visited)


def test_mathjax_typeset_every_equation(visited):
    problems, typeset = {}, 0
    for page, (status, info, *_rest) in visited.items():
        if info["untypeset"] or info["raw_tex"]:
            problems[page] = {"math left untypeset": info["untypeset"][:5],
                              "raw TeX in the text": info["raw_tex"][:5]}
        typeset += info["mjx"]
        if info["math"]:
            assert status == "typeset", (page, status)
    assert not problems, json.dumps(problems, indent=1)
    assert typeset > 0, "no page shows typeset math"
    requested = [url for *_r, urls in visited.values() for url in urls]
    assert any("/_static/mathjax/tex-mml-chtml.js" in url for url in requested)
    fonts = [url for url in requested if "/_static/mathjax/output/chtml/fonts/woff-v2/" in url]
    assert fonts, "MathJax's fonts were not loaded from the book's own _static/mathjax/"


def test_no_id_repeats_on_a_page(visited):
    # an id names one element: a repeated one is invalid HTML and its links land on the first
    repeated = {}
    for page, (_, info, *_r) in visited.items():
        seen = set()
        twice = sorted({i for i in info["ids"] if i in seen or seen.add(i)})
        if twice:
            repeated[page] = twice
    assert not repeated, repeated


def test_every_image_loads(visited):
    broken = {p: info["broken_images"] for p, (_, info, *_r) in visited.items()
              if info["broken_images"]}
    assert not broken, broken
    assert sum(info["images"] for _, info, *_r in visited.values()) > 0


def test_internal_links_and_anchors_resolve(site, visited):
    html, origin = site
    ids = {urlsplit(info["url"]).path.lstrip("/"): set(info["ids"])
           for _, info, *_r in visited.values()}
    broken = []
    for page, (_, info, *_r) in visited.items():
        for link in info["links"]:
            if not link.startswith(origin + "/"):
                continue  # external links are not followed; javascript: buttons and mailto:
            url, fragment = urldefrag(link)
            target = unquote(urlsplit(url).path.lstrip("/")) or "index.html"
            if target.endswith("/"):
                target += "index.html"
            if not (html / target).is_file():
                broken.append(f"{page}: {link} (no such file)")
            elif fragment and target.endswith(".html"):
                known = ids.get(target)
                if known is None:  # a page not visited (index.html): read its ids from the file
                    known = set(re.findall(r'\bid="([^"]+)"', (html / target).read_text()))
                if unquote(fragment) not in known:
                    broken.append(f"{page}: {link} (no #{fragment} in {target})")
    assert not broken, "\n".join(broken)


def test_index_redirects_to_the_introduction(site, browser):
    _, origin = site
    browser.get(f"{origin}/index.html")
    for _ in range(100):
        if browser.current_url.endswith("/chapters/intro.html"):
            break
        time.sleep(0.05)
    assert browser.current_url.endswith("/chapters/intro.html"), browser.current_url
    browser.execute_async_script(_SETTLE)
    assert not _console_errors(browser)   # e.g. a 404 for /favicon.ico from the redirect


def test_search_finds_evidence(site, browser):
    _, origin = site
    browser.get(f"{origin}/search.html?q=evidence")
    hits = []
    for _ in range(200):
        hits = browser.execute_script(
            "return Array.from(document.querySelectorAll('#search-results ul.search li a'))"
            ".map(a => a.href)")
        summary = browser.execute_script(
            "const s = document.querySelector('#search-results .search-summary');"
            "return s ? s.textContent : ''")
        if hits and "found" in summary:
            break
        time.sleep(0.05)
    assert any("/chapters/evidence.html" in h for h in hits), hits
    assert not _console_errors(browser)


#: Layout problems known and left for a later change (issue 36.18), as (chapter, what the problem
#: says, up to the thing's name): on a phone, display equations that scroll and long inline
#: formulas, which the chapters' one-line equations (36.18: short equations on one line at desktop
#: width; MathJax 3 breaks no line by itself) and the inline formulas that no longer wrap at an
#: operator leave. At 1280 px none is left. The tests fail on any problem not listed here; the
#: list is to shrink, never to grow.
KNOWN_AT_1280 = set()
KNOWN_ON_A_PHONE = {
    ('data', 'display equation|equation-data-rbf'),
    ('beyond_laplace', 'display equation|equation-bl-jj'),
    ('beyond_laplace', 'display equation|equation-bl-elbo'),
    ('beyond_laplace', 'display equation|equation-bl-xi'),
    ('beyond_laplace', 'display equation|equation-bl-ep-q'),
    ('beyond_laplace', 'display equation|equation-bl-ep-logz'),
    ('beyond_laplace', "inline formula cut off at the window's edge: 'KL(pG‖q)=12[tr(Sq−1Sp)"),
    ('beyond_laplace', "inline formula cut off at the window's edge: 'W22=‖δ‖2+tr(Sp+Sq−2(Sp"),
    ('beyond_laplace', "inline formula cut off at the window's edge: 'ω=12π2∑k≥1gk/((k−12)2"),
    ('evidence', 'display equation|equation-eq-ev-z'),
    ('evidence_opt', 'display equation|equation-eo-chain'),
    ('evidence_opt', 'display equation|equation-eo-dmode'),
    ('evidence_opt', 'display equation|equation-eo-explicit-s2'),
    ('evidence_opt', 'display equation|equation-eo-ift'),
    ('evidence_opt', 'display equation|equation-eo-mackay'),
    ('evidence_opt', "inline formula cut off at the window's edge: 'M−tr(A−1)/s2=tr(A−1Φ⊤WΦ)"),
    ('evidence_opt', "inline formula cut off at the window's edge: 'M−tr(A−1)/s2=∑i(1−1/s2νi"),
    ('evidence_opt', "inline formula cut off at the window's edge: 'M−tr(A−1)/s2=∑iνi/(νi+1/"),
    ('grid', "inline formula cut off at the window's edge: '−12log\\u2061|I+s2Φ⊤WΦ|=−"),
    ('ground_truth', "inline formula cut off at the window's edge: 'Var(x¯)=1S2∑t,uρ|t−u|≈1S"),
    ('laplace', 'display equation|equation-lap-a'),
    ('laplace', 'display equation|equation-lap-taylor-1d'),
    ('laplace', 'display equation|equation-lap-z'),
    ('ml_lab', 'display equation|chapters/ml_lab-solution-1-content'),
    ('ml_lab', 'display equation|equation-ml-grad'),
    ('ml_lab', 'display equation|equation-ml-loglik'),
    ('ml_lab', 'display equation|equation-ml-model'),
    ('predictive', 'display equation|equation-eq-predictive-integral'),
    ('predictive', 'display equation|equation-eq-probit'),
    ('predictive', 'display equation|equation-eq-probit-conv'),
    ('width_gradient', 'display equation|equation-wg-explicit-l'),
}


def _unknown(found, known):
    """The problems of ``found`` (page -> list of problem texts) that ``known`` does not list."""
    def is_known(page, problem):
        name = page.split("/")[-1].removesuffix(".html")
        for chapter, key in known:
            kind, _, label = key.partition("|")
            if chapter == name and (problem.startswith(kind) and label in problem if label
                                    else problem.startswith(key)):
                return True
        return False
    return {page: [p for p in problems if not is_known(page, p)] for page, problems in found.items()}


def test_chapter_layout_at_1280_px(visited):
    found = {page: page_layout.problems(info["layout"], 1280)
             for page, (_, info, *_r) in visited.items() if "layout" in info}
    assert found, "no chapter page was measured"
    found = _unknown(found, KNOWN_AT_1280)
    assert not any(found.values()), json.dumps({p: f for p, f in found.items() if f}, indent=1)


def test_chapter_layout_on_a_phone(visited):
    found = {page: page_layout.problems(info["phone"], 390)
             for page, (_, info, *_r) in visited.items() if "phone" in info}
    assert found
    found = _unknown(found, KNOWN_ON_A_PHONE)
    assert not any(found.values()), json.dumps({p: f for p, f in found.items() if f}, indent=1)


def test_every_figure_is_described(visited):
    figures = [f for _, info, *_r in visited.values() for f in info.get("layout", {}).get("figures", [])]
    assert len(figures) >= 40
    assert all(len(f["alt"]) > 20 and not f["alt"].startswith(("_images", "../_images"))
               for f in figures), [f["alt"] for f in figures][:5]


def test_chapters_pass_axe_core(visited):
    # Accessibility by the field's own checker: axe-core's WCAG 2 A and AA rules on every chapter
    assert AXE_JS.is_file(), f"no {AXE_JS.relative_to(ROOT)}: run scripts/install_mathjax.py"
    found = {page: info["axe"] for page, (_, info, *_r) in visited.items() if "axe" in info}
    assert found, "axe-core ran on no chapter page"
    report = {page: {f"{v['id']} ({v['impact']}): {v['help']}": v["targets"] for v in found[page]}
              for page in sorted(found) if found[page]}
    count = sum(len(v["targets"]) for violations in found.values() for v in violations)
    assert not report, f"{count} axe-core violations:\n" + json.dumps(report, indent=1)


def test_no_empty_index_pages(site, visited):
    """Issue 36.18: no general index (the book has no index entries: it was an empty page) and
    no "Proof Index" (prf-prf.html, whose one entry read "alg-blc alg-blc alg-blc"), built or
    linked (_config.yml: html_use_index and html_domain_indices off)."""
    html, _ = site
    built = sorted(p.name for p in html.rglob("*.html") if p.name in {"genindex.html", "prf-prf.html"})
    assert not built, built
    linked = sorted({(page, link) for page, (_, info, *_r) in visited.items()
                     for link in info["links"] if re.search(r"/(genindex|prf-prf)\.html", link)})
    assert not linked, linked[:5]
