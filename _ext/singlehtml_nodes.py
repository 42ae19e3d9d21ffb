"""Sphinx extension: the one-page HTML builder (``singlehtml``, which ``make pdf`` prints) renders
every node the HTML builder does.

Sphinx looks a node's visitors up under the builder's name and falls back to its format
(``html``) only when no extension has registered anything under that name. Some extensions
register nodes for ``singlehtml`` by name, so the others' (sphinx-proof's algorithm box, for
one) are then missing and the build stops at them. This copies every HTML visitor that has no
``singlehtml`` entry of its own.
"""
from __future__ import annotations


def _copy_html_visitors(app):
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node, visitors in handlers.get("html", {}).items():
        single.setdefault(node, visitors)


def setup(app):
    app.connect("builder-inited", _copy_html_visitors)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
