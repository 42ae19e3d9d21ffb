"""The interactive explorers (issue 21) in headless Chromium, served from 127.0.0.1.

On the pages of the grid and predictive explorers (the optional chapters broad_prior and
probit_accuracy): each explorer starts (its data decoded by the book's
own script, no request to any other host, no console error) and takes the place of its figure's
static image; moving each slider (its value set and an ``input`` event dispatched) changes the
drawing and the numbers; the numbers shown at two settings of each explorer equal the values
computed here with ``lib`` (a Laplace fit from zero, :func:`lib.fit_laplace`, independent of
the grid engine and the warm starts the chapters use). In print (emulated ``@media print``) the
static image shows and the explorer does not, and without JavaScript the page's markup leaves
the static image in place.

Needs Chromium and chromedriver as tests/test_browser.py does (skipped locally without them,
failing when CI is set), and the lab data.
"""
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
import explorer as book_ext  # noqa: E402  (the book's extension: the explorers' pages)
import test_browser  # noqa: E402  (its Chromium options, page settling and network log)
from test_browser import browser  # noqa: E402,F401  (the module-scoped Chromium fixture)

import lib  # noqa: E402
from lib.book import display, explorer  # noqa: E402

# The explorer's state: whether it started, its frame, slider positions, numbers shown, and a
# hash of each canvas's pixels.
_STATE = """
const live = document.querySelector(arguments[0] + " .blc-explorer-live");
if (!live) return null;
const hash = (canvas) => {
  const d = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let h = 2166136261;
  for (let i = 0; i < d.length; i += 1) { h ^= d[i]; h = Math.imul(h, 16777619); }
  return h >>> 0;
};
return {
  ready: live.dataset.ready, frame: live.dataset.frame,
  sliders: Array.from(live.querySelectorAll("input[type=range]")).map(i => [i.dataset.key, Number(i.value)]),
  numbers: Object.fromEntries(Array.from(live.querySelectorAll("td[data-key]"))
                              .map(td => [td.dataset.key, td.textContent])),
  labels: Object.fromEntries(Array.from(live.querySelectorAll("tr"))
                             .map(tr => [tr.querySelector("td").dataset.key, tr.querySelector("th").textContent])),
  canvases: Array.from(live.querySelectorAll("canvas")).map(hash),
  image_shown: getComputedStyle(document.querySelector(arguments[0] + " > img")).display !== "none",
};
"""

_MOVE = """
const input = document.querySelector(arguments[0] + ` .blc-explorer-live input[data-key="${arguments[1]}"]`);
input.value = String(arguments[2]);
input.dispatchEvent(new Event("input", {bubbles: true}));
"""

_SPEC = "return JSON.parse(document.querySelector('.blc-explorer script').textContent);"

PAGES = {"broad_prior": "#fig-grid-explorer", "probit_accuracy": "#fig-pr-explorer"}


@pytest.fixture(scope="module")
def opened(served_book, browser):  # noqa: F811
    """``open(name)``: the chapter loaded and settled, its explorer started; returns the
    explorer's data (the JSON the chapter wrote) and the network and console logs of the load."""
    _, origin = served_book
    test_browser._network(browser, origin), test_browser._console_errors(browser)

    def open_(name):
        browser.get(f"{origin}/chapters/{name}.html")
        browser.execute_async_script(test_browser._SETTLE)
        for _ in range(200):
            state = browser.execute_script(_STATE, PAGES[name])
            if state and state["ready"] == "1":
                break
            time.sleep(0.05)
        assert state and state["ready"] == "1", f"the explorer of {name} did not start"
        return browser.execute_script(_SPEC)

    return open_


@pytest.fixture(scope="module")
def lab():
    X, y = lib.load_lab_data()
    return lib.first_rows_split(X, y)


def _state(browser, name):  # noqa: F811
    return browser.execute_script(_STATE, PAGES[name])


def _move(browser, name, key, index):  # noqa: F811
    browser.execute_script(_MOVE, PAGES[name], key, int(index))
    return _state(browser, name)


def _clean(browser, origin):  # noqa: F811
    foreign, failed, _ = test_browser._network(browser, origin)
    errors = test_browser._console_errors(browser)
    assert not foreign, f"requests to other hosts: {foreign}"
    assert not failed, f"failed requests: {failed}"
    assert not errors, f"console errors: {errors}"


@pytest.mark.parametrize("name", list(PAGES))
def test_each_slider_changes_the_figure_and_the_numbers(name, opened, browser, served_book):  # noqa: F811
    spec = opened(name)
    start = _state(browser, name)
    assert not start["image_shown"], "the static image should give way to the explorer"
    assert len(start["canvases"]) == 3 and all(start["numbers"].values())
    for key, value in start["sliders"]:
        slider = next(s for s in spec["sliders"] if s["key"] == key)
        target = 0 if value > len(slider["values"]) // 2 else len(slider["values"]) - 1
        moved = _move(browser, name, key, target)
        assert dict(moved["sliders"])[key] == target
        assert moved["frame"] != start["frame"], key
        # the first panel (evidence map, or variance map), then the probability panels
        assert moved["canvases"][0] != start["canvases"][0], f"{key}: the first panel did not change"
        assert moved["canvases"][1:] != start["canvases"][1:], f"{key}: the contours did not change"
        assert moved["numbers"] != start["numbers"], f"{key}: the numbers did not change"
        start = _move(browser, name, key, value)          # back where it was
    _clean(browser, served_book[1])


def _fit(X_train, y_train, X_test, s2, width):
    Phi_train = lib.rbf_features(X_train, X_train, width)
    Phi_test = lib.rbf_features(X_test, X_train, width)
    return lib.fit_laplace(Phi_train, y_train, s2, max_iter=500), Phi_train, Phi_test


def test_grid_numbers_are_the_laplace_fit_at_two_settings(opened, browser, lab, served_book):  # noqa: F811
    X_train, y_train, X_test, y_test = lab
    spec = opened("broad_prior")
    s2_values, widths = (spec["sliders"][k]["values"] for k in (0, 1))
    for i, j in ((spec["sliders"][0]["initial"], spec["sliders"][1]["initial"]), (2, 1)):
        _move(browser, "broad_prior", "s2", i)
        shown = _move(browser, "broad_prior", "l", j)["numbers"]
        post, Phi_train, Phi_test = _fit(X_train, y_train, X_test, s2_values[i], widths[j])
        scores = lib.scores._score_posterior(post, Phi_train, y_train, Phi_test, y_test)
        expected = {"log_evidence": f"{scores['log_evidence']:.2f}",
                    **{key: f"{scores[key]:.3f}" for key in (
                        "train_accuracy", "test_accuracy", "test_ll_map", "test_ll_pred")}}
        assert shown == expected, (s2_values[i], widths[j])
    _clean(browser, served_book[1])


def test_predictive_numbers_are_the_laplace_fit_at_two_settings(opened, browser, lab, served_book):  # noqa: F811
    X_train, y_train, X_test, y_test = lab
    spec = opened("probit_accuracy")
    labels = _state(browser, "probit_accuracy")["labels"]
    s2_values = spec["sliders"][0]["values"]
    width = 0.5        # the predictive chapter's explorer sweeps s2 at the course's width
    for k in (spec["sliders"][0]["initial"], len(s2_values) - 2):
        shown = _move(browser, "probit_accuracy", "s2", k)["numbers"]
        post, _, Phi_test = _fit(X_train, y_train, X_test, s2_values[k], width)
        mu, var = lib.activation_moments(post, Phi_test)
        a_map, a_pred = lib.map_logits(post, Phi_test), lib.LOGISTIC.predictive_logits(mu, var)
        band = lambda a: f"{np.sum((lib.sigmoid(a) > 0.3) & (lib.sigmoid(a) < 0.7))}"
        expected = {
            "log evidence": f"{post.log_evidence:.2f}",
            "median σ_a²": display.readable(np.median(var)),
            "largest σ_a²": display.readable(var.max()),
            "smallest ρ": f"{1 / np.sqrt(1 + lib.PROBIT_SCALE**2 * var.max()):.2f}",
            "MAP: 0.3 < p < 0.7": band(a_map), "predictive: 0.3 < p < 0.7": band(a_pred),
            "test log-lik., MAP": f"{lib.average_log_likelihood_logits(a_map, y_test):.3f}",
            "test log-lik., predictive":
                f"{lib.average_log_likelihood_logits(a_pred, y_test):.3f}"}
        assert {labels[key]: text for key, text in shown.items()} == expected, s2_values[k]
    _clean(browser, served_book[1])


@pytest.mark.parametrize("name", list(PAGES))
def test_print_and_no_script_show_the_static_figure(name, opened, browser, served_book):  # noqa: F811
    html, _ = served_book
    opened(name)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        seen = browser.execute_script(
            "const f = document.querySelector(arguments[0]);"
            "return [getComputedStyle(f.querySelector(':scope > img')).display,"
            "        getComputedStyle(f.querySelector('.blc-explorer-live')).display,"
            "        f.querySelector(':scope > img').naturalWidth];", PAGES[name])
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    assert seen[0] != "none" and seen[1] == "none" and seen[2] > 0, seen
    # Without JavaScript nothing adds the class that hides the image; the data stays hidden.
    page = (html / "chapters" / f"{name}.html").read_text()
    figure = re.search(r'<figure[^>]*id="%s".*?</figure>' % PAGES[name][1:], page, re.S).group(0)
    assert "<img" in figure and "blc-explorer-on" not in figure
    assert re.search(r'<div class="blc-explorer" hidden data-figure="%s"' % PAGES[name][1:], page)
    css = (html / "_static" / "explorer.css").read_text()
    hiding = [rule for rule in re.findall(r"([^{}]+)\{[^}]*display:\s*none", css)
              if "img" in rule]
    assert all("blc-explorer-on" in rule for rule in hiding), hiding
    _clean(browser, served_book[1])


def test_pages_without_an_explorer_load_no_explorer_script(served_book):
    html, _ = served_book
    loads = {p.stem for p in (html / "chapters").glob("*.html") if "explorer.js" in p.read_text()}
    assert loads == set(PAGES), loads
    spec_sizes = {name: len(re.search(r'<div class="blc-explorer".*?</div>',
                                      (html / "chapters" / f"{name}.html").read_text(), re.S).group(0))
                  for name in PAGES}
    assert all(size < 400_000 for size in spec_sizes.values()), spec_sizes


# --- lib.book.explorer and the extension's pages, without a browser ---------------------------

def _page_spec(out):
    """The description the page carries (what ``explorer.js`` reads), for the output ``out``
    of lib.book.explorer: the extension's page of it, parsed."""
    page = book_ext.page(out[explorer.MIME])
    found = re.search(r'<script type="application/json">(.*?)</script>', page, re.S)
    return json.loads(found.group(1))              # JSON reads page_html's "<\/" as "</"


def test_logit_codes_keep_the_sign_and_a_few_percent():
    a = np.array([-50.0, -12.0, -2.2, -0.01, -1e-5, 0.0, 1e-5, 0.01, 0.85, 2.2, 12.0])
    code = explorer.encode_logits(a)
    assert code.dtype == np.uint8 and code.max() <= 254 and code[a == 0] == 127
    top = np.arcsinh(explorer.LOGIT_MAX / explorer.LOGIT_SCALE)      # explorer.js's decoding
    back = explorer.LOGIT_SCALE * np.sinh((code.astype(float) - 127) / 127 * top)
    big = np.abs(a) >= 0.01
    assert np.all(np.sign(back[big]) == np.sign(a[big]))
    assert np.all(np.abs(back[big] - np.clip(a[big], -12, 12)) <= 0.045 * np.abs(a[big]))


def test_plane_fields_are_the_laplace_fit_on_the_plane():
    from conftest import make_blobs
    from lib.book import plots

    X, y = make_blobs(60, seed=3)
    fields = explorer.plane_fields(X, y, [3.0, 0.5], [0.8], n=12)
    assert list(fields.s2) == [0.5, 3.0] and fields.map_logits[0].shape == (2, 144)
    assert fields.resolved == (True,) and fields.step(0) <= 0.8
    _, _, plane = plots.input_grid(X, n=12)
    for k, s2 in enumerate(fields.s2):
        post = lib.fit_laplace(lib.rbf_features(X, X, 0.8), y, s2)
        Phi = lib.rbf_features(plane, X, 0.8)
        mu, var = lib.activation_moments(post, Phi)
        assert np.allclose(fields.map_logits[0][k], mu, atol=1e-7)
        assert np.allclose(fields.var[0][k], var, atol=1e-7)
        assert np.allclose(fields.pred_logits[0][k], lib.LOGISTIC.predictive_logits(mu, var), atol=1e-7)


def test_each_width_gets_the_plane_its_bumps_need():
    extent = (-3.0, 3.0, -2.0, 2.0)                     # span 6
    assert explorer.plane_size(extent, 1.0, n_min=12) == (12, True)
    assert explorer.plane_size(extent, 0.1, n_min=12) == (61, True)   # step 0.1
    assert explorer.plane_size(extent, 0.01, n_min=12, n_max=128) == (12, False)
    with pytest.raises(ValueError, match="width"):
        explorer.plane_size(extent, 0.0)


def test_a_width_too_narrow_to_draw_shows_the_classifier_between_the_points():
    from conftest import make_blobs
    from lib.book import plots

    X, y = make_blobs(40, seed=5)
    width = 0.01
    fields = explorer.plane_fields(X, y, [100.0], [width], n=20, n_max=40)
    assert fields.n == (20,) and fields.resolved == (False,)
    _, _, plane = plots.input_grid(X, n=20)
    post = lib.fit_laplace(lib.rbf_features(X, X, width), y, 100.0)
    mu, _ = lib.activation_moments(post, lib.rbf_features(plane, X, width))
    d = np.min(np.linalg.norm(plane[:, None] - X[None], axis=2), axis=1)
    far = d > explorer.FADED * width
    assert 0 < far.sum() < far.size
    # beyond the bumps, the plane's own values; within one, a value from beyond
    assert np.allclose(fields.map_logits[0][0][far], mu[far], atol=1e-7)
    assert np.all(np.isin(fields.map_logits[0][0][~far], fields.map_logits[0][0][far]))
    page = _page_spec(explorer.sweep_explorer(
        fields, [["x"]], X, y, X, y, figure="f", initial=100.0, labels=["a"], keys=["a"],
        var_range=(-3, 1)))
    assert "too narrow to draw" in page["planes"][0]["note"]


@pytest.fixture(scope="module")
def small_grid():
    """A 3 x 2 grid on blobs, its planes, and the grid explorer's output."""
    from conftest import make_blobs
    from lib import fastgrid

    X, y = make_blobs(90, seed=2)
    X_train, y_train, X_test, y_test = X[:60], y[:60], X[60:], y[60:]
    s2, widths = np.array([0.1, 1.0, 100.0]), np.array([0.3, 1.0])
    table = fastgrid.evidence_grid(X_train, y_train, X_test, y_test, s2, widths)
    fields = explorer.plane_fields(X_train, y_train, s2, widths, n=10)
    best = table.loc[table.log_evidence.idxmax()]
    page = explorer.grid_explorer(table, fields, X_train, y_train, X_test, y_test,
                                  figure="fig-x", initial=(best.s2, best.width),
                                  ev_floor=float(table.log_evidence.min()))
    return (X_train, y_train, X_test, y_test), s2, widths, page


def test_each_grid_readout_is_the_quantity_it_names(small_grid):
    """Every number the grid explorer shows, at every setting, against a Laplace fit from zero
    and lib's own scores, each column by its label (a column filled with another quantity,
    say the training accuracy in the test accuracy's place, fails)."""
    (X_train, y_train, X_test, y_test), s2_values, widths, page = small_grid
    spec = _page_spec(page)
    labels = spec["numbers"]["labels"]
    assert labels == ["log evidence", "training accuracy", "test accuracy",
                      "test log-likelihood, MAP", "test log-likelihood, predictive"]
    named = {}
    for i, s2 in enumerate(s2_values):                 # frame = i_s2 * P + i_l
        for j, width in enumerate(widths):
            Phi_train = lib.rbf_features(X_train, X_train, width)
            Phi_test = lib.rbf_features(X_test, X_train, width)
            post = lib.fit_laplace(Phi_train, y_train, s2, max_iter=500)
            accuracy = lambda Phi, y: np.mean((Phi @ post.w_map > 0) == (y == 1))
            expected = {
                "log evidence": post.log_evidence,
                "training accuracy": accuracy(Phi_train, y_train),
                "test accuracy": accuracy(Phi_test, y_test),
                "test log-likelihood, MAP":
                    lib.average_log_likelihood(lib.map_proba(post, Phi_test), y_test),
                "test log-likelihood, predictive":
                    lib.average_log_likelihood(lib.predictive_proba(post, Phi_test), y_test)}
            shown = dict(zip(labels, spec["numbers"]["values"][i * len(widths) + j]))
            for label, text in shown.items():
                decimals = len(text.split(".")[1])
                assert abs(float(text) - expected[label]) <= 0.5 * 10.0**-decimals + 1e-9, (
                    s2, width, label, text, expected[label])
                named.setdefault(label, []).append(expected[label])
    # the test can tell the two accuracies, and the two log-likelihoods, apart
    for a, b in (("training accuracy", "test accuracy"),
                 ("test log-likelihood, MAP", "test log-likelihood, predictive")):
        assert np.max(np.abs(np.subtract(named[a], named[b]))) > 0.002, (a, b)


def test_the_plain_view_carries_the_numbers_the_page_shows(small_grid):
    *_, out = small_grid
    assert set(out) == {explorer.MIME, "text/plain"}
    text, spec = out["text/plain"], _page_spec(out)
    lines = text.splitlines()
    values = spec["numbers"]["values"]
    rows = [line for line in lines if line.split() and line.split()[-1] == values[0][-1]]
    assert rows, "the first setting's numbers are missing from the plain view"
    for row in values:                                 # each setting's numbers, in order
        assert any(line.split()[-len(row):] == row for line in lines), row
    assert sum(line.startswith("plane l = ") for line in lines) == len(spec["planes"])


def test_the_sweep_shows_each_row_at_its_prior_variance():
    from conftest import make_blobs

    X, y = make_blobs(40, seed=4)
    fields = explorer.plane_fields(X, y, [0.1, 1.0, 10.0], [0.8], n=10)
    numbers = [[f"{k}a", f"{k}b"] for k in range(3)]
    spec = _page_spec(explorer.sweep_explorer(
        fields, numbers, X, y, X, y, figure="f", initial=1.0, labels=["A", "B"],
        keys=["a", "b"], var_range=(-2, 1)))
    assert spec["numbers"]["values"] == numbers and spec["numbers"]["labels"] == ["A", "B"]
    assert spec["sliders"][0]["text"] == ["0.1", "1", "10"]
    assert spec["sliders"][0]["initial"] == 1
    assert [p["n"] for p in spec["planes"]] == [10] and spec["planes"][0]["note"] == ""


def test_page_html_packs_uint8_arrays_and_never_closes_its_script():
    import base64
    import zlib

    out = book_ext.page_html({"figure": "fig-x", "note": "</script>"},
                             {"a": np.arange(5, dtype=np.uint8), "b": np.ones(3, np.uint8)})
    assert out.count("</script>") == 1 and 'data-figure="fig-x"' in out and " hidden " in out
    spec = json.loads(re.search(r"<script[^>]*>(.*)</script>", out, re.S).group(1))
    blob = zlib.decompress(base64.b64decode(spec["data"]))
    assert spec["arrays"] == {"a": [0, 5], "b": [5, 3]} and blob == bytes([0, 1, 2, 3, 4, 1, 1, 1])
    with pytest.raises(TypeError):
        book_ext.page_html({"figure": "f"}, {"a": np.zeros(2)})


def test_reading_a_chapter_turns_its_explorer_into_the_page(small_grid):
    """The extension, as Sphinx reads a notebook, puts the page in place of the description;
    the arrays the page unpacks are the ones the chapter packed, with the colour map."""
    import base64
    import zlib

    *_, out = small_grid
    cell = {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": out}]}
    source = [json.dumps({"cells": [{"cell_type": "markdown", "source": ""}, cell]})]
    book_ext._read(None, "chapters/x", source)
    data = json.loads(source[0])["cells"][1]["outputs"][0]["data"]
    assert set(data) == {"text/html", "text/plain"} and data["text/plain"] == out["text/plain"]
    assert data["text/html"].startswith('<div class="blc-explorer" hidden data-figure="fig-x"')
    spec = _page_spec(out)
    blob = zlib.decompress(base64.b64decode(spec["data"]))
    for name, packed in out[explorer.MIME]["arrays"].items():
        start, size = spec["arrays"][name]
        assert blob[start:start + size] == zlib.decompress(base64.b64decode(packed)), name
    assert spec["arrays"]["viridis"][1] == 768


# --- The layout (issue 36.19): side by side at a desktop's width, the ring inside the heat map,
# the narrow-bumps note moving nothing.

_RECTS = """
const live = document.querySelector(arguments[0] + " .blc-explorer-live");
const rect = (el) => { const r = el.getBoundingClientRect();
                       return {top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, right: r.right}; };
const note = live.querySelector(".blc-explorer-note");
return {
  sliders: Array.from(live.querySelectorAll("input[type=range]")).map(rect),
  panels: Object.fromEntries(Array.from(live.querySelectorAll("canvas"))
                             .map(c => [c.dataset.panel, rect(c)])),
  note: {text: note.textContent, visible: getComputedStyle(note).visibility === "visible"
         && getComputedStyle(note).display !== "none", rect: rect(note)},
  ring: (live.querySelector("canvas[data-ring]") || {dataset: {}}).dataset.ring || null,
  heat: Array.from(live.querySelectorAll("canvas[data-ring]")).map(c => [c.width, c.height])[0] || null,
  screen: innerHeight,
};
"""


def _rects(browser, name):  # noqa: F811
    return browser.execute_script(_RECTS, PAGES[name])


@pytest.mark.parametrize("name", list(PAGES))
def test_sliders_and_both_panels_share_the_screen_at_desktop_width(name, opened, browser,
                                                                   served_book):  # noqa: F811
    """At 1280 px the plug-in MAP and the probit predictive panels stand side by side, and
    the sliders and both panels fit in the window's height together: the comparison the text
    asks for is on screen at once."""
    opened(name)
    seen = _rects(browser, name)
    a, b = seen["panels"]["map"], seen["panels"]["pred"]
    assert abs(a["top"] - b["top"]) < 2 and a["right"] <= b["left"], (a, b)
    top = min(s["top"] for s in seen["sliders"])
    bottom = max(a["bottom"], b["bottom"])
    assert bottom - top <= seen["screen"], (f"sliders to the panels' foot: {bottom - top:.0f} px "
                                            f"in a {seen['screen']} px window")
    _clean(browser, served_book[1])


def test_the_ring_stays_inside_the_heat_map(opened, browser, served_book):  # noqa: F811
    """The ring around the chosen setting is drawn whole at every corner of the grid (it was
    cut at the heat map's top edge)."""
    spec = opened("broad_prior")
    sizes = {s["key"]: len(s["values"]) for s in spec["sliders"]}
    for s2_index in (0, sizes["s2"] - 1):
        for l_index in (0, sizes["l"] - 1):
            _move(browser, "broad_prior", "s2", s2_index)
            _move(browser, "broad_prior", "l", l_index)
            seen = _rects(browser, "broad_prior")
            x, y, r = map(float, seen["ring"].split(","))
            width, height = seen["heat"]
            assert r <= x <= width - r and r <= y <= height - r, (s2_index, l_index, seen["ring"])
    _clean(browser, served_book[1])


@pytest.mark.parametrize("name", list(PAGES))
def test_the_narrow_bumps_note_moves_nothing(name, opened, browser, served_book):  # noqa: F811
    """The note shown where a width's bumps are too narrow to draw keeps its space when it is
    not shown: no panel moves as it comes and goes."""
    spec = opened(name)
    noted = [k for k, plane in enumerate(spec["planes"]) if plane["note"]]
    plain = [k for k, plane in enumerate(spec["planes"]) if not plane["note"]]
    if not noted or not plain or not any(s["key"] == "l" for s in spec["sliders"]):
        pytest.skip(f"the {name} explorer has no width both with and without the note")
    _move(browser, name, "l", plain[-1])
    before = _rects(browser, name)
    assert not before["note"]["visible"]
    _move(browser, name, "l", noted[0])
    after = _rects(browser, name)
    assert after["note"]["visible"] and after["note"]["text"] == spec["planes"][noted[0]]["note"]
    moved = {(panel, side): (before["panels"][panel][side], after["panels"][panel][side])
             for panel in before["panels"] for side in ("top", "bottom", "left", "right")
             if abs(before["panels"][panel][side] - after["panels"][panel][side]) > 1}
    assert not moved, moved
    assert abs(after["note"]["rect"]["top"] - before["note"]["rect"]["top"]) <= 1
    _clean(browser, served_book[1])
