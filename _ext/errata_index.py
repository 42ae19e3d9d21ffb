"""Sphinx extension: the book's errata, collected from the chapters into one page.

Each chapter writes an erratum where it finds it, as an admonition titled "Erratum: ..." (README,
"Adding a chapter"). This extension gathers them while the chapters are read and renders them,
grouped by source document, wherever a page places the directive::

    ```{errata-index}
    ```

Each entry names the chapter and section (numbered as in the book) and links to that section;
the title keeps its math. The source is read off the erratum's first sentence ("The report ...",
"The lecture notes ...", "The note ...", "Lecture 9 ...", "... slide ..."); an erratum whose
source cannot be told is a build warning, so a strict build (``-W``) fails until it is worded
to name its source. Nothing is stored by hand, so the page cannot fall out of step.
"""
from __future__ import annotations

import re

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

PREFIX = "Erratum:"

#: The source documents, in the order the page lists them, each with the pattern that names it
#: in an erratum's first sentence (tried in this order: the first match wins).
SOURCES = (
    ("lecture9", "Ting, lecture 9: Bayesian logistic regression", r"\blecture 9\b"),
    ("lecture14", "Hennig, lecture 14: GP classification", r"\blecture 14\b|\bslide\b"),
    ("notes", "Lecture notes, chapter 7: Bayesian linear classification", r"\bnotes\b"),
    ("barrett", "Barrett, note on a probit (erfc) classifier", r"\bnote(?:'s)?\b"),
    ("report", "The lab report (Mustafa)",
     r"\breport\b|\btables?\b|\balgorithm 1\b|\blisting\b"),
)
ORDER = ("report", "notes", "lecture9", "lecture14", "barrett")


class errata_index(nodes.General, nodes.Element):
    """Placeholder, replaced by the list once every chapter has been read."""


class ErrataIndexDirective(SphinxDirective):
    has_content = False

    def run(self):
        return [errata_index("")]


def _source_of(text: str) -> str | None:
    first = text.split(". ")[0]
    for key, _, pattern in SOURCES:
        if re.search(pattern, first, flags=re.IGNORECASE):
            return key
    return None


def _collect(app, doctree):
    env = app.env
    if any(doctree.findall(errata_index)):
        # The entries carry math from other pages: this page must load MathJax (set after the
        # math domain has looked for math of its own, which this event follows).
        env.get_domain("math").data["has_equations"][env.docname] = True
    found = []
    for admonition in doctree.findall(nodes.admonition):
        title = admonition.next_node(nodes.title)
        if title is None or not title.astext().startswith(PREFIX):
            continue
        body = [child for child in admonition.children if not isinstance(child, nodes.title)]
        text = " ".join(child.astext() for child in body)
        source = _source_of(text)
        if source is None:
            logger.warning(
                "erratum %r: its first sentence names no source document (the report, the "
                "notes, the note, lecture 9 or lecture 14)", title.astext(),
                location=admonition,
            )
            continue
        section = admonition.parent
        while section is not None and not isinstance(section, nodes.section):
            section = section.parent
        anchor = section["ids"][0] if section is not None and section["ids"] else ""
        heading = section.next_node(nodes.title) if section is not None else None
        words = [child.deepcopy() for child in title.children]
        if words and isinstance(words[0], nodes.Text):   # drop "Erratum: ", keep the rest
            rest = words[0].astext()[len(PREFIX):].lstrip()
            words[0] = nodes.Text(rest[:1].upper() + rest[1:])
        found.append({
            "docname": env.docname, "anchor": anchor, "source": source, "title": words,
            "heading": [child.deepcopy() for child in heading.children] if heading else [],
            "top": heading is None or section.parent is doctree,   # the chapter's own section
        })
    if found:
        if not hasattr(env, "blc_errata"):
            env.blc_errata = {}
        env.blc_errata[env.docname] = found


def _purge(app, env, docname):
    if hasattr(env, "blc_errata"):
        env.blc_errata.pop(docname, None)


def _merge(app, env, docnames, other):
    if hasattr(other, "blc_errata"):
        if not hasattr(env, "blc_errata"):
            env.blc_errata = {}
        env.blc_errata.update({d: other.blc_errata[d] for d in docnames if d in other.blc_errata})


def _number(env, docname, anchor):
    numbers = env.toc_secnumbers.get(docname, {})
    n = numbers.get("#" + anchor) or numbers.get("")
    return ".".join(map(str, n)) if n else ""


def _resolve(app, doctree, fromdocname):
    env = app.env
    errata = getattr(env, "blc_errata", {})
    order = {doc: i for i, doc in enumerate(_reading_order(env))}
    for placeholder in list(doctree.findall(errata_index)):
        content = []
        entries = [e for doc in errata for e in errata[doc]]
        entries.sort(key=lambda e: order.get(e["docname"], len(order)))
        total = nodes.paragraph(text=f"{len(entries)} errata in "
                                     f"{len({e['docname'] for e in entries})} chapters.")
        content.append(total)
        names = {key: name for key, name, _ in SOURCES}
        for key in ORDER:
            group = [e for e in entries if e["source"] == key]
            if not group:
                continue
            content.append(nodes.rubric(text=f"{names[key]} ({len(group)})"))
            items = nodes.bullet_list()
            for e in group:
                chapter = [n.deepcopy() for n in env.titles[e["docname"]].children]
                uri = app.builder.get_relative_uri(fromdocname, e["docname"])
                if e["anchor"]:
                    uri += "#" + e["anchor"]
                link = nodes.reference("", "", internal=True, refuri=uri)
                link += nodes.Text(f"{_number(env, e['docname'], '')}. ")
                link += chapter
                if not e["top"]:                       # in a section: name it too
                    link += nodes.Text(f", {_number(env, e['docname'], e['anchor'])} ")
                    link += [n.deepcopy() for n in e["heading"]]
                para = nodes.paragraph()
                para += [n.deepcopy() for n in e["title"]]
                para += nodes.Text(" (")
                para += link
                para += nodes.Text(")")
                items += nodes.list_item("", para)
            content.append(items)
        placeholder.replace_self(content)


def _reading_order(env):
    """Documents in the table of contents' order (the book's order)."""
    order, seen = [], set()

    def walk(doc):
        if doc in seen:
            return
        seen.add(doc)
        order.append(doc)
        for child in env.toctree_includes.get(doc, []):
            walk(child)

    walk(env.config.root_doc)
    return order


def setup(app):
    app.add_node(errata_index)
    app.add_directive("errata-index", ErrataIndexDirective)
    app.connect("doctree-read", _collect)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
