"""Sphinx extension: the bibliography's entries as ARIA list items, not ``doc-biblioentry``.

docutils' HTML5 writer (0.21) wraps a run of citations in ``<div role="list">`` and gives each
entry ``role="doc-biblioentry"``. DPUB-ARIA 1.1 deprecated that role, so assistive technology
and axe-core (tests/test_browser.py) no longer count the entries as the list's items: axe
reports each entry (``aria-deprecated-role``) and the list as holding a bare link, the links
inside the entries (``aria-required-children``, critical). DPUB-ARIA's advice is a list item:
this writes ``role="listitem"`` instead, with the same markup otherwise (the theme's styles for
``div.citation`` and ``.citation-list`` still apply). No configuration of sphinxcontrib-bibtex
changes the role; it comes from the HTML writer. The one-page build (``singlehtml``) gets this
visitor too (_ext/singlehtml_nodes.py copies the HTML visitors).
"""
from __future__ import annotations

from docutils import nodes
from sphinx.writers.html5 import HTML5Translator


def visit_citation(self, node):
    if not isinstance(node.previous_sibling(), type(node)):  # the first of a run opens the list
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, "div", classes=[node.tagname], role="listitem"))


def setup(app):
    app.add_node(nodes.citation, override=True,
                 html=(visit_citation, HTML5Translator.depart_citation))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
