"""Pages per part and chapter of a printed book, read from its PDF outline (`make pdf`,
`make pdf-course`), and the core's length as tests/test_pdf.py measures it (issue 35: the core,
chapter 1's first page to the last page before the first part whose caption starts "Optional",
at most 100 pages, no core chapter over 14).

    python scripts/pdf_pages.py _build/pdf/course.pdf
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CORE_PAGES, CHAPTER_PAGES = 100, 14


def spans(pdf: Path) -> list[dict]:
    """Each part (depth 0) and numbered chapter (depth 1) of the outline: its title, first page
    (index) and pages up to the next part's or chapter's start."""
    from pypdf import PdfReader

    reader = PdfReader(pdf)
    rows = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            elif depth == 0 or (depth == 1 and re.match(r"\d+\.", str(item.title))):
                rows.append({"depth": depth, "title": " ".join(str(item.title).split()),
                             "page": reader.get_destination_page_number(item)})
    walk(reader.outline, 0)
    labels = list(reader.page_labels)
    for i, row in enumerate(rows):
        after = next((r["page"] for r in rows[i + 1:] if r["page"] > row["page"]
                      and (r["depth"] <= row["depth"] or row["depth"] == 1)), len(reader.pages))
        row.update(pages=after - row["page"], label=labels[row["page"]])
    return rows


def core(rows: list[dict]) -> tuple[int, list[dict]]:
    """The core's pages and its chapters (the parts before the first optional one)."""
    parts = [p["caption"] for p in yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]]
    optional = next(c for c in parts if c.startswith("Optional"))
    first_optional = next(r["page"] for r in rows if r["depth"] == 0 and r["title"] == optional)
    chapters, in_core = [], False
    for row in rows:
        if row["depth"] == 0:
            in_core = row["title"] in parts[:parts.index(optional)]
        elif in_core:
            chapters.append(row)
    return first_optional - chapters[0]["page"], chapters


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    rows = spans(Path(sys.argv[1]))
    for row in rows:
        if row["title"] == "Contents":
            continue
        flag = " *" if row["depth"] == 1 and row["pages"] > CHAPTER_PAGES else ""
        print(f"{'  ' * row['depth']}{row['title'][:64]:64s} p. {row['label']:>4}  "
              f"{row['pages']:3d} pages{flag}")
    pages, chapters = core(rows)
    over = [c["title"] for c in chapters if c["pages"] > CHAPTER_PAGES]
    print(f"core: {pages} pages (at most {CORE_PAGES}); chapters over {CHAPTER_PAGES} pages: "
          f"{len(over)} {over if over else ''}")
