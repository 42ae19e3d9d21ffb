"""Words per chapter: the teaching text against the source checks (issue 18's measure), and the
total of each part of the book (issue 27's budgets: the course at most 22,000 words, the report
reproduced at most 10,000; tests/test_course_notes.py checks them).

    python scripts/chapter_words.py [ROOT]

A chapter's markdown words count as *checks* when they sit under a section heading (level 2 or
deeper) that names a source ("report", "lecture", "notes", "errata", "reproduced", ...) or inside
an ``Erratum:`` admonition; every other word counts as *teaching* (takeaways and exercises
included).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

SOURCE = re.compile(r"report|lecture|notes|note\b|barrett|errat|reproduc|source", re.I)
ERRATUM = re.compile(r"(:::+\{admonition\} Erratum.*?\n:::+)", re.S)


def count(path: Path) -> tuple[int, int]:
    """(teaching words, check words) of one chapter notebook."""
    teach = check = 0
    in_check, level_check = False, 0
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        for part in ERRATUM.split(cell.source):
            if part.startswith(":::") and "Erratum" in part[:40]:
                check += len(part.split())
                continue
            for line in part.split("\n"):
                heading = re.match(r"^(#+)\s+(.*)", line)
                if heading:
                    level = len(heading.group(1))
                    if in_check and level <= level_check:
                        in_check = False
                    if not in_check and level > 1 and SOURCE.search(heading.group(2)):
                        in_check, level_check = True, level
                if in_check:
                    check += len(line.split())
                else:
                    teach += len(line.split())
    return teach, check


if __name__ == "__main__":
    import yaml

    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    for part in toc["parts"]:
        names = [c["file"].split("/")[-1] for c in part["chapters"]]
        paths = [root / "chapters" / f"{n}.ipynb" for n in names]
        paths = [p for p in paths if p.exists()]
        if not paths:
            continue
        print(f"{part['caption']}")
        total = 0
        for path in paths:
            teach, check = count(path)
            total += teach + check
            print(f"  {path.stem:16s} teaching {teach:5d}  checks {check:5d}  "
                  f"({100 * check / max(teach + check, 1):.0f}%)")
        print(f"  {'total':16s} {total:5d}")
