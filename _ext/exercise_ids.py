"""Sphinx extension: each exercise's and solution's body gets an id of its own.

sphinx-exercise wraps the body of every exercise in a section with the id ``exercise-content``
and of every solution in one with ``solution-content`` (its source marks this "should id be
classes?"), so a chapter with five exercises has five elements with one id: invalid HTML, and a
link to ``#exercise-content`` would always land on the first. This names each body after the
exercise or solution that holds it (``map-ex-gradient-content``), which is
unique wherever the label is, the one-page build for the PDF included.
"""
from __future__ import annotations

from docutils import nodes

_SHARED = ("exercise-content", "solution-content")


def _owner_id(node) -> str | None:
    """The first id on the nearest ancestor that has one (the exercise or the solution)."""
    node = node.parent
    while node is not None and not node.get("ids"):
        node = node.parent
    return None if node is None else node["ids"][0]


def _unique_ids(app, doctree, docname):
    for section in doctree.findall(nodes.section):
        if len(section["ids"]) == 1 and section["ids"][0] in _SHARED:
            owner = _owner_id(section)
            if owner is None:
                continue
            shared = section["ids"][0]
            section["ids"] = [f"{owner}-content"]
            section["classes"].append(shared)      # what the id said, kept as a class


def setup(app):
    app.connect("doctree-resolved", _unique_ids)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
