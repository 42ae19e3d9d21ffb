"""Sphinx extension: every figure's image gets its caption as alt text (issue 19).

myst-nb writes a notebook figure's image with its file path as ``alt`` (``_images/0c67...png``),
which a screen reader reads out and a reader without images sees. A figure's caption says what
it shows: this copies the caption's text (math as its TeX, references as their text) into the
image's ``alt`` wherever the alt is missing or is a file name.
"""
from __future__ import annotations

import re

from docutils import nodes

_FILE_NAME = re.compile(r"^[\w./-]+\.(png|jpe?g|svg|gif)$", re.IGNORECASE)


def _set_alt(app, doctree, docname):
    for figure in doctree.findall(nodes.figure):
        caption = figure.next_node(nodes.caption)
        if caption is None:
            continue
        text = " ".join(caption.astext().split())
        for image in figure.findall(nodes.image):
            alt = image.get("alt", "")
            if not alt or _FILE_NAME.match(alt):
                image["alt"] = text


def setup(app):
    app.connect("doctree-resolved", _set_alt)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
