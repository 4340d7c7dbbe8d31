"""Start a chapter from the template: ``book/<NN>_<slug>.ipynb``, numbered, with its badge and labels set.

The template (``tools/templates/00_template.ipynb``) is a chapter numbered 0 that keeps every convention
(``tests/test_conventions.py`` checks it as it checks the chapters): title, Colab badge, objectives, set-up
cell, imports, a formula before its code, an asserted claim, an exercise with its solution, a summary, and
the chapter's facts in its metadata. The new chapter gets the template's cells and outputs with its own
number in its file name, badge, exercise labels and ``floor``. Then, by hand, the chapter's other files
(CONTRIBUTING.md, "Adding a chapter"): its line in ``_toc.yml``, its exercises' ``ch<N>.toml`` and ``ch<N>.py``
and their tests, its references and its floor in ``story_bible.yml``; ``python -m tools.tables`` writes every
table that lists the chapters.

    python -m tools.new_chapter 10 video_positions
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import nbformat

from tools.book import ROOT, read

TEMPLATE = Path(__file__).resolve().parent / "templates" / "00_template.ipynb"


def new_chapter(number: int, slug: str, root: Path = ROOT) -> Path:
    """Write the template as chapter ``number`` named ``<NN>_<slug>.ipynb`` into ``root/book``; return its path."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", slug):
        raise ValueError(
            f"the slug names the file: lowercase letters, digits and '_', like long_contexts; got {slug!r}."
        )
    if not 0 < number < 100:
        raise ValueError(f"a chapter's number is its floor, 1 to 99; got {number}.")
    path = root / "book" / f"{number:02d}_{slug}.ipynb"
    if path.exists():
        raise ValueError(f"{path} exists already; pick another number or slug.")
    nb = read(TEMPLATE)
    for cell in nb.cells:
        cell.source = cell.source.replace(TEMPLATE.name, path.name)
        cell.source = re.sub(r"\bex-0-(\d+)\b", rf"ex-{number}-\1", cell.source)
    nb.metadata["transformerland"]["floor"] = number
    nbformat.write(nb, path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("number", type=int, help="the chapter's number, which is its floor")
    parser.add_argument("slug", help="the rest of the file name, like long_contexts")
    args = parser.parse_args()
    path = new_chapter(args.number, args.slug)
    print(f"wrote {path.relative_to(ROOT)}; now add '- file: book/{path.stem}' to a numbered part of _toc.yml")


if __name__ == "__main__":
    main()
