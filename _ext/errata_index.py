"""Sphinx extension: the errors found in the source documents, and the remarks on them,
collected from the chapters into one page (chapters/errata.md, "Errors found in the sources").

Each chapter writes an erratum where it finds it, as an admonition titled "Erratum: ..." (README,
"Adding a chapter"), and a remark (on naming, emphasis or rationale: not an error) as one titled
"Remark: ...". This extension gathers both while the chapters are read and renders the errata,
grouped by source document, wherever a page places the directive::

    ```{errata-index}
    ```

and the remarks, in the book's order, where it places ``{remarks-index}``.

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
REMARK = "Remark:"

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


class remarks_index(nodes.General, nodes.Element):
    """Placeholder for the list of remarks."""


class ErrataIndexDirective(SphinxDirective):
    has_content = False

    def run(self):
        return [errata_index("")]


class RemarksIndexDirective(SphinxDirective):
    has_content = False

    def run(self):
        return [remarks_index("")]


def _source_of(text: str) -> str | None:
    first = text.split(". ")[0]
    for key, _, pattern in SOURCES:
        if re.search(pattern, first, flags=re.IGNORECASE):
            return key
    return None


def _entry(env, doctree, admonition, title, prefix):
    """Where the admonition sits and its title less ``prefix``, for the index."""
    section = admonition.parent
    while section is not None and not isinstance(section, nodes.section):
        section = section.parent
    anchor = section["ids"][0] if section is not None and section["ids"] else ""
    heading = section.next_node(nodes.title) if section is not None else None
    words = [child.deepcopy() for child in title.children]
    if words and isinstance(words[0], nodes.Text):   # drop "Erratum: ", keep the rest
        rest = words[0].astext()[len(prefix):].lstrip()
        words[0] = nodes.Text(rest[:1].upper() + rest[1:])
    return {
        "docname": env.docname, "anchor": anchor, "title": words,
        "heading": [child.deepcopy() for child in heading.children] if heading else [],
        "top": heading is None or section.parent is doctree,   # the chapter's own section
    }


def _collect(app, doctree):
    env = app.env
    if any(doctree.findall(errata_index)) or any(doctree.findall(remarks_index)):
        # The entries carry math from other pages: this page must load MathJax (set after the
        # math domain has looked for math of its own, which this event follows).
        env.get_domain("math").data["has_equations"][env.docname] = True
    found, remarks = [], []
    for admonition in doctree.findall(nodes.admonition):
        title = admonition.next_node(nodes.title)
        if title is None:
            continue
        if title.astext().startswith(REMARK):
            remarks.append(_entry(env, doctree, admonition, title, REMARK))
            continue
        if not title.astext().startswith(PREFIX):
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
        found.append({**_entry(env, doctree, admonition, title, PREFIX), "source": source})
    for attr, entries in (("blc_errata", found), ("blc_remarks", remarks)):
        if entries:
            if not hasattr(env, attr):
                setattr(env, attr, {})
            getattr(env, attr)[env.docname] = entries


def _purge(app, env, docname):
    for attr in ("blc_errata", "blc_remarks"):
        if hasattr(env, attr):
            getattr(env, attr).pop(docname, None)


def _merge(app, env, docnames, other):
    for attr in ("blc_errata", "blc_remarks"):
        if hasattr(other, attr):
            if not hasattr(env, attr):
                setattr(env, attr, {})
            theirs = getattr(other, attr)
            getattr(env, attr).update({d: theirs[d] for d in docnames if d in theirs})


def _number(env, docname, anchor):
    numbers = env.toc_secnumbers.get(docname, {})
    n = numbers.get("#" + anchor) or numbers.get("")
    return ".".join(map(str, n)) if n else ""


def _item(app, env, fromdocname, e):
    """One entry: its title, then the chapter (and section) it is worked out in, linked."""
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
    return nodes.list_item("", para)


def _in_order(env, found):
    order = {doc: i for i, doc in enumerate(_reading_order(env))}
    entries = [e for doc in found for e in found[doc]]
    entries.sort(key=lambda e: order.get(e["docname"], len(order)))   # stable within a page
    return entries


def _resolve(app, doctree, fromdocname):
    env = app.env
    for placeholder in list(doctree.findall(errata_index)):
        entries = _in_order(env, getattr(env, "blc_errata", {}))
        content = [nodes.paragraph(text=f"{len(entries)} errata in "
                                        f"{len({e['docname'] for e in entries})} chapters.")]
        names = {key: name for key, name, _ in SOURCES}
        for key in ORDER:
            group = [e for e in entries if e["source"] == key]
            if not group:
                continue
            content.append(nodes.rubric(text=f"{names[key]} ({len(group)})"))
            items = nodes.bullet_list()
            for e in group:
                items += _item(app, env, fromdocname, e)
            content.append(items)
        placeholder.replace_self(content)
    for placeholder in list(doctree.findall(remarks_index)):
        entries = _in_order(env, getattr(env, "blc_remarks", {}))
        content = [nodes.paragraph(text=f"{len(entries)} remarks in "
                                        f"{len({e['docname'] for e in entries})} chapters.")]
        items = nodes.bullet_list()
        for e in entries:
            items += _item(app, env, fromdocname, e)
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
    app.add_node(remarks_index)
    app.add_directive("errata-index", ErrataIndexDirective)
    app.add_directive("remarks-index", RemarksIndexDirective)
    app.connect("doctree-read", _collect)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
