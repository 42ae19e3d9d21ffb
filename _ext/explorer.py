"""Sphinx extension: the interactive explorers' script and style, on the pages that hold one
(issue 21).

A chapter's explorer is a ``text/html`` output, ``<div class="blc-explorer" ...>``, written by
``lib.book.explorer``; ``_assets/js/explorer.js`` draws it and ``_assets/css/explorer.css``
styles it (and keeps the static figure for print). Both are served from the book's own
``_static/``; a page without an explorer loads neither.
"""
from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parents[1] / "_assets"


def _static_path(app, config):
    for folder in ("js", "css"):
        path = str(ASSETS / folder)
        if path not in config.html_static_path and f"_assets/{folder}" not in config.html_static_path:
            config.html_static_path.append(path)


def _page(app, pagename, templatename, context, doctree):
    if 'class="blc-explorer"' in (context.get("body") or ""):
        app.add_css_file("explorer.css")
        app.add_js_file("explorer.js", defer="defer")


def setup(app):
    app.connect("config-inited", _static_path)
    app.connect("html-page-context", _page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
