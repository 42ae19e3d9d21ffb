"""Sphinx extension: what a reader downloads runs and reads on its own (issue 20).

After an HTML build it writes

- the package ``lib`` as a wheel, ``_static/wheels/blc_book-<version>-py3-none-any.whl``, built
  from this repository's ``pyproject.toml`` (its runtime dependencies only; the start page says
  how to install it), and
- over each chapter's download (``_sources/chapters/<name>.ipynb``, the page's ".ipynb" button)
  a **student notebook** made from the executed chapter: every ``{glue:text}`` role replaced by
  the value the chapter glued, cross-references by the numbers the page shows ("Fig. 3.2",
  "(3.4)", "Exercise 3.1"), citations by their labels with a reference list at the end, MyST
  directives by plain Markdown (admonitions as quotes, exercises and solutions as headings), the
  imports in a visible first code cell and no cell that only glues. The solutions stay in the
  notebook, after their exercises. The chapters in ``chapters/`` are not changed.
- beside it, for each chapter with exercises, an **exercise notebook** a teacher can set as an
  assignment, ``_sources/chapters/<name>-exercises.ipynb``: the same notebook less the
  solutions (their text and their code), each exercise followed by an empty code cell to answer
  in. The page's download menu offers it as ".ipynb (exercises)", after the student notebook's
  ".ipynb".

``student_notebook(source, resolve)`` is the conversion (``resolve``: the build's numbers and
titles), ``student_notebook(..., exercises=True)`` the exercise notebook;
tests/test_student_notebooks.py runs the downloaded notebooks in a fresh environment.
"""
from __future__ import annotations

import ast
import copy
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

import nbformat
from docutils.nodes import make_id

GLUE_ROLE = re.compile(r"\{glue:text\}`([^`]+)`")
ROLE = re.compile(r"\{([a-z][a-z:-]*)\}`([^`]*)`")
DIRECTIVE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z][a-z:-]*)\}[ \t]*(?P<arg>.*)$")
TARGET = re.compile(r"^\([A-Za-z0-9_.:-]+\)=[ \t]*$")
MATH_LABEL = re.compile(r"\$\$[ \t]*\((?P<label>[A-Za-z0-9_.:-]+)\)[ \t]*$", re.M)
GLUE_MODULE = "lib.book.glue"


@dataclass(frozen=True)
class Resolver:
    """What the built book shows for each cross-reference target.

    ``numbers``: label -> (kind, "3.2") for numbered targets (figure, displaymath, exercise);
    ``titles``: label -> section title; ``docs``: docname -> title; ``cites``: bib key -> label
    as printed on the page ("Mus18"); ``references``: bib key -> the full entry as text;
    ``formats``: kind -> numfig format ("Fig. %s").
    """

    docname: str
    numbers: dict = field(default_factory=dict)
    titles: dict = field(default_factory=dict)
    docs: dict = field(default_factory=dict)
    cites: dict = field(default_factory=dict)
    references: dict = field(default_factory=dict)
    formats: dict = field(default_factory=dict)

    def numbered(self, label: str, text: str | None = None) -> str:
        kind, number = self.numbers[label]
        if kind == "displaymath":
            return f"({number})"
        return (text or self.formats.get(kind, "%s")).replace("%s", number)


class ConversionError(ValueError):
    """A chapter uses markup the student notebook cannot render."""


# --- values ------------------------------------------------------------------------------------

def glued_values(nb) -> dict[str, str]:
    """``name -> text`` of every value the executed notebook glued (myst-nb's records)."""
    values = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            text = out.get("data", {}).get("application/papermill.record/text/plain")
            if name is not None and text is not None:
                values[name] = ast.literal_eval(text)   # a glued str is stored as its repr
    return values


def is_glue_cell(cell) -> bool:
    """A cell the book removes from the page that only computes values to glue."""
    return (cell.cell_type == "code" and "remove-cell" in cell.metadata.get("tags", [])
            and "glue_all(" in cell.source)


def without_glue_import(source: str) -> str:
    """``source`` less its ``from lib.book.glue import ...`` statements (the book's plumbing)."""
    tree = ast.parse(source)
    drop = [node for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.module == GLUE_MODULE]
    lines = source.splitlines(keepends=True)
    for node in reversed(drop):
        del lines[node.lineno - 1:node.end_lineno]
    return "".join(lines).strip("\n")


# --- Markdown ----------------------------------------------------------------------------------

def _split_target(text: str) -> tuple[str | None, str]:
    """``"Some text <label>"`` -> ("Some text", "label"); ``"label"`` -> (None, "label")."""
    match = re.fullmatch(r"(.*?)\s*<([^<>]+)>", text.strip(), re.S)
    return (match.group(1), match.group(2)) if match else (None, text.strip())


def _role(name: str, content: str, values: dict, r: Resolver, cited: list) -> str:
    text, target = _split_target(content)
    if name == "glue:text":
        if content not in values:
            raise ConversionError(f"{r.docname}: no glued value named {content!r}")
        return values[content]
    if name == "eq":
        return r.numbered(target)
    if name == "numref":
        return r.numbered(target, text)
    if name == "ref":
        if text:
            return text
        if target in r.numbers and r.numbers[target][0] != "displaymath":
            return r.numbered(target)
        return r.titles[target]
    if name == "doc":
        doc = str(Path(r.docname).parent / target) if "/" not in target else target.lstrip("/")
        return text or r.docs[doc]
    if name in {"cite", "cite:p", "cite:t"}:
        keys = [k.strip() for k in content.split(",")]
        cited.extend(k for k in keys if k not in cited)
        return "[" + ", ".join(r.cites[k] for k in keys) + "]"
    raise ConversionError(f"{r.docname}: the role {{{name}}} has no plain-Markdown form")


def _roles(text: str, values: dict, r: Resolver, cited: list) -> str:
    return ROLE.sub(lambda m: _role(m.group(1), m.group(2), values, r, cited), text)


def _options(lines: list[str], i: int) -> tuple[dict, int]:
    options = {}
    while i < len(lines) and (m := re.match(r"^:([a-z-]+):\s*(.*)$", lines[i])):
        options[m.group(1)] = m.group(2)
        i += 1
    return options, i


def _quote(body: str) -> str:
    return "\n".join(("> " + line).rstrip() for line in body.splitlines())


def _directive(name: str, arg: str, options: dict, body: str, r: Resolver) -> str:
    if name == "admonition":
        return _quote(f"**{arg}**\n\n{body}")
    if name in {"note", "warning", "tip", "important", "caution", "attention", "hint", "seealso"}:
        return _quote(f"**{name.capitalize()}**\n\n{body}")
    if name == "exercise":
        title = f" ({arg})" if arg else ""
        return f"#### {r.numbered(options['label'])}{title}\n\n{body}"
    if name == "solution-start":
        return f"#### Solution to {r.numbered(arg)}\n\n{body}".rstrip()
    if name == "solution-end":
        return body
    if name == "container":
        # screen-only / print-only text (issue 36.16): a downloaded notebook is read on screen
        return "" if "print-only" in arg.split() else body
    if name == "math":
        tag = f"\\tag{{{r.numbered(options['label'])[1:-1]}}}\n" if "label" in options else ""
        return f"$$\n{body}\n{tag}$$"
    raise ConversionError(f"{r.docname}: the directive {{{name}}} has no plain-Markdown form")


def _markdown_blocks(lines: list[str], r: Resolver) -> str:
    """Directives (fenced, possibly nested) -> plain Markdown; target lines dropped."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        match = DIRECTIVE.match(line)
        if TARGET.match(line):
            i += 1
            continue
        if not match:
            out.append(line)
            i += 1
            continue
        fence = match.group("fence")
        closing = re.compile("^" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        options, j = _options(lines, i + 1)
        k = j
        while k < len(lines) and not closing.match(lines[k]):
            k += 1
        body = _markdown_blocks(lines[j:k], r).strip("\n")
        out.append(_directive(match.group("name"), match.group("arg").strip(), options, body, r))
        i = k + 1
    return "\n".join(out)


def _tag_equations(text: str, r: Resolver) -> str:
    return MATH_LABEL.sub(
        lambda m: "\\tag{" + r.numbered(m.group("label"))[1:-1] + "}\n$$", text)


def markdown(text: str, values: dict, r: Resolver, cited: list) -> str:
    """One Markdown cell of the chapter as Jupyter renders it without MyST."""
    text = _tag_equations(text, r)
    text = _markdown_blocks(text.split("\n"), r)
    text = _roles(text, values, r, cited)
    text = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
    left = ROLE.search(text) or re.search(r"^(`{3,}|:{3,})\{", text, re.M)
    if left:
        raise ConversionError(f"{r.docname}: left unconverted: {left.group(0)!r}")
    return text


# --- the exercise notebook ---------------------------------------------------------------------

EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise\}", re.M)
SOLUTION_START = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution-start\}")
SOLUTION_END = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution-end\}")
EXERCISES_SUFFIX = "-exercises"


def count_exercises(nb) -> int:
    """How many ``{exercise}`` directives the chapter's Markdown holds."""
    return sum(len(EXERCISE.findall(c.source)) for c in nb.cells if c.cell_type == "markdown")


def _past_directive(lines: list[str], i: int, fence: str) -> int:
    """The index after the directive opened on line ``i`` with ``fence`` (its closing fence)."""
    closing = re.compile("^" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
    j = i + 1
    while j < len(lines) and not closing.match(lines[j]):
        j += 1
    return j + 1


def answer_cell():
    """The empty code cell the exercise notebook puts after each exercise."""
    cell = nbformat.v4.new_code_cell("")
    cell.metadata["tags"] = ["answer"]
    return cell


def without_solutions(source):
    """The chapter less its solutions: everything from each ``{solution-start}`` directive to its
    ``{solution-end}`` (the Markdown, the code cells and their outputs) is replaced by one empty
    code cell to answer in (:func:`answer_cell`). The exercises and all else stay."""
    nb = copy.deepcopy(source)
    cells, inside = [], False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            if not inside:
                cells.append(cell)
            continue
        lines, kept, i = cell.source.split("\n"), [], 0
        while i < len(lines):
            start, end = SOLUTION_START.match(lines[i]), SOLUTION_END.match(lines[i])
            if start and not inside:
                if "\n".join(kept).strip():
                    cells.append(nbformat.v4.new_markdown_cell("\n".join(kept).strip("\n"),
                                                               metadata=copy.deepcopy(cell.metadata)))
                cells.append(answer_cell())
                kept, inside = [], True
                i = _past_directive(lines, i, start.group("fence"))
            elif end:   # (a stray one outside a solution is dropped too)
                inside = False
                i = _past_directive(lines, i, end.group("fence"))
            else:
                if not inside:
                    kept.append(lines[i])
                i += 1
        if "\n".join(kept).strip():
            cells.append(nbformat.v4.new_markdown_cell("\n".join(kept).strip("\n"),
                                                       metadata=copy.deepcopy(cell.metadata)))
    nb.cells = cells
    return nb


def _exercise_note(wheel: str) -> str:
    return (
        "> **The exercise notebook.** This is the chapter without the solutions to its exercises: "
        "answer each exercise in the empty code cell after it. The student notebook, with the "
        "solutions, is the chapter page's other download (\".ipynb\").\n>\n"
        + _setup_note(wheel))


# --- the notebook ------------------------------------------------------------------------------

def _setup_note(wheel: str) -> str:
    # One line: the start page ("Running the chapters yourself") says how, once for the book.
    return (
        f"> **Running this notebook** needs the book's package `lib` (the wheel `{wheel}`): "
        "see \"Running the chapters yourself\" on the book's start page.")


def student_notebook(source, r: Resolver, wheel: str, exercises: bool = False):
    """The chapter ``source`` (an executed notebook) as a reader downloads it; with
    ``exercises``, the exercise notebook (no solutions, an empty cell after each exercise)."""
    values = glued_values(source)   # the whole chapter's: a solution may glue a value the text shows
    nb = without_solutions(source) if exercises else copy.deepcopy(source)
    cited: list[str] = []
    cells, first_code = [], True
    for cell in nb.cells:
        if is_glue_cell(cell):
            continue
        cell.metadata.pop("execution", None)
        if cell.cell_type == "markdown":
            cell.source = markdown(cell.source, values, r, cited)
            if not cell.source:
                continue
        elif cell.cell_type == "code":
            if first_code:
                note = _exercise_note(wheel) if exercises else _setup_note(wheel)
                cells.append(nbformat.v4.new_markdown_cell(note))
                cell.source = without_glue_import(cell.source)
                tags = [t for t in cell.metadata.get("tags", []) if t != "remove-cell"]
                cell.metadata["tags"] = tags
                first_code = False
            if "glue_all(" in cell.source:
                raise ConversionError(f"{r.docname}: a kept cell glues: {cell.source[:80]!r}")
        cells.append(cell)
    if cited:
        entries = "\n".join(f"- [{r.cites[k]}] {r.references[k]}" for k in cited)
        cells.append(nbformat.v4.new_markdown_cell(f"## References\n\n{entries}"))
    nb.cells = cells
    nbformat.validate(nb)
    return nb


# --- Sphinx -----------------------------------------------------------------------------------

def _resolver(app, docname: str) -> Resolver:
    env = app.env
    numbers = {}
    for label, (doc, node_id, _title) in env.domaindata["std"]["labels"].items():
        for kind, ids in env.toc_fignumbers.get(doc, {}).items():
            if node_id in ids:
                numbers[label] = (kind, ".".join(map(str, ids[node_id])))
    for label, (doc, _n) in env.domaindata["math"]["objects"].items():
        number = env.toc_fignumbers.get(doc, {}).get("displaymath", {}).get(
            make_id(f"equation-{label}"))
        if number:
            numbers[label] = ("displaymath", ".".join(map(str, number)))
    titles = {label: title for label, (_d, _i, title) in env.domaindata["std"]["labels"].items()}
    docs = {doc: title.astext() for doc, title in env.titles.items()}
    cites, references = {}, {}
    for citation in env.domaindata["cite"]["citations"]:
        cites[citation.key] = citation.formatted_entry.label
        references[citation.key] = citation.formatted_entry.text.render_as("text")
    return Resolver(docname, numbers, titles, docs, cites, references,
                    dict(app.config.numfig_format))


def build_wheel(root: Path, out: Path) -> Path:
    """``lib`` as a wheel in ``out``, built from a clean copy of the sources (the working tree
    gets no build/ or .egg-info folder, and two builds at once do not meet)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE", "LICENSE-CC-BY-4.0"):
            shutil.copy2(root / name, src / name)   # the licences go into the wheel's metadata
        shutil.copytree(root / "lib", src / "lib",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        out.mkdir(parents=True, exist_ok=True)
        # With the build environment's setuptools where it is new enough (the Makefile installs
        # one: offline, fast); else pip fetches one into an isolated build environment.
        isolation = ["--no-build-isolation"] if _setuptools_major() >= 77 else []
        run = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation,
             "--disable-pip-version-check", "--wheel-dir", str(out), str(src)],
            capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"building the wheel of lib failed:\n{run.stderr[-2000:]}")
    return out / wheel_name(root)


def _setuptools_major() -> int:
    try:
        from importlib.metadata import version
        return int(version("setuptools").split(".")[0])
    except Exception:   # not installed, or an odd version string
        return 0


def wheel_name(root: Path) -> str:
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    return f"{project['name'].replace('-', '_')}-{project['version']}-py3-none-any.whl"


def _write(app, exception) -> None:
    if exception is not None or app.builder.name != "html":
        return   # the one-page build that `make pdf` prints has no downloads
    root = Path(app.srcdir)
    out = Path(app.outdir)
    wheel = build_wheel(root, out / "_static" / "wheels").name
    book = _resolver(app, "")
    for docname in sorted(app.env.found_docs):
        path = Path(app.env.doc2path(docname))
        download = out / "_sources" / f"{docname}.ipynb"
        if path.suffix != ".ipynb" or not download.parent.is_dir():
            continue
        source = nbformat.read(path, as_version=4)
        resolver = replace(book, docname=docname)
        nbformat.write(student_notebook(source, resolver, wheel), download)
        if count_exercises(source):
            nbformat.write(student_notebook(source, resolver, wheel, exercises=True),
                           download.with_name(download.stem + EXERCISES_SUFFIX + ".ipynb"))


def _has_exercises(app, docname: str) -> bool:
    path = Path(app.env.doc2path(docname))
    return path.suffix == ".ipynb" and bool(count_exercises(nbformat.read(path, as_version=4)))


def _exercise_button(app, pagename, templatename, context, doctree):
    """The exercise notebook in the page's download menu (sphinx-book-theme's, made at priority
    501), after the student notebook's ".ipynb"."""
    if app.builder.name != "html" or doctree is None or not _has_exercises(app, pagename):
        return
    for group in context.get("header_buttons", []):
        if group.get("label") != "download-buttons":
            continue
        at = next((i + 1 for i, b in enumerate(group["buttons"])
                   if b.get("label") == "download-source-button"), len(group["buttons"]))
        group["buttons"].insert(at, {
            "type": "link",
            "url": f"{context['pathto']('_sources', 1)}/{pagename}{EXERCISES_SUFFIX}.ipynb",
            "text": ".ipynb (exercises)",
            "tooltip": "Download the exercise notebook (the exercises without their solutions)",
            "icon": "fas fa-pencil",
            "label": "download-exercises-button",
        })


def setup(app):
    app.connect("build-finished", _write)
    app.connect("html-page-context", _exercise_button, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
