"""Sphinx extension: pages that load only what they use, from the book's own files.

Jupyter Book always loads sphinx-thebe (live code cells, started from a launch button). This book
has no launch buttons, so its scripts only cost a request, and its inline configuration is
written twice into every page, which stops the second copy with "Identifier 'THEBE_JS_URL' has
already been declared" (a console error) and names a CDN (unpkg) in every page. This extension
removes sphinx-thebe's scripts and style while thebe is off (``launch_buttons: thebe`` in
_config.yml), and drops duplicate inline scripts in any case. It also gives the start redirect
(``index.html``) the book's icon.
"""


def _thebe_enabled(app) -> bool:
    options = app.config.html_theme_options or {}
    return bool((options.get("launch_buttons") or {}).get("thebe"))


def _is_thebe(asset) -> bool:
    filename = asset.filename or ""
    body = asset.attributes.get("body", "") if hasattr(asset, "attributes") else ""
    return "sphinx-thebe." in filename or "THEBE_JS_URL" in body


def _clean_page(app, pagename, templatename, context, doctree):
    drop_thebe = not _thebe_enabled(app)
    scripts, seen = [], set()
    for js in context.get("script_files", []):
        body = js.attributes.get("body") if hasattr(js, "attributes") else None
        if drop_thebe and _is_thebe(js):
            continue
        if body is not None:
            if body in seen:
                continue
            seen.add(body)
        scripts.append(js)
    context["script_files"] = scripts
    if drop_thebe:
        context["css_files"] = [c for c in context.get("css_files", []) if not _is_thebe(c)]


def _redirect_icon(app, exception):
    """The start redirect (``index.html``, written by sphinx-external-toc) names the book's icon,
    or the browser asks for ``/favicon.ico``, which the book has not (a 404 in the console)."""
    from pathlib import Path

    index = Path(app.outdir) / "index.html"
    if exception is not None or app.builder.format != "html" or not index.is_file():
        return
    text = index.read_text(encoding="utf8")
    icon = app.config.html_favicon
    if icon and 'rel="icon"' not in text and text.startswith("<meta http-equiv=\"Refresh\""):
        name = Path(icon).name
        index.write_text(text + f'<link rel="icon" href="_static/{name}" />\n', encoding="utf8")


def setup(app):
    app.connect("html-page-context", _clean_page, priority=900)
    app.connect("build-finished", _redirect_icon, priority=900)   # after sphinx-external-toc
    return {"parallel_read_safe": True, "parallel_write_safe": True}
