"""Each chapter's facts, kept once: in the ``"transformerland"`` object of the notebook's metadata.

.. code-block:: json

    "transformerland": {
      "floor": 7,
      "short_title": "The Observatory",
      "question": "What does a real RoPE language model know about position, and how does it use it?",
      "outcomes": ["load a real RoPE language model offline and read its position configuration", "..."],
      "reading_minutes": 60,
      "budget_seconds": 45,
      "answers": {"ex-7-1": ["12", "438,460"], "ex-7-2": ["the last layer"]}
    }

``floor`` is the chapter's number (its file name's prefix); the full title is the notebook's ``# `` heading;
``outcomes`` are the items of the learning-objectives cell, word for word; ``reading_minutes`` is the time a
student needs to work through the chapter; ``budget_seconds`` its execution budget on the 2-core CPU; ``answers``
(optional) maps each exercise's label to the facts that answer it, numbers and short phrases, which
``tests/test_giveaways.py`` keeps off the page above the exercise (:mod:`tools.giveaways`). Every
table about the chapters (README, CONTRIBUTING, the introduction, the instructor's guide) and the chapter
benchmark's budgets are made from these (:mod:`tools.tables`); a convention test holds every chapter to
this schema.

When a chapter's objectives cell is rewritten, copy its items into the metadata with::

    python -m tools.facts --sync-outcomes [book/03_learned.ipynb ...]
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools.book import ROOT, chapter_number, chapters, read, title

#: The metadata key, and the type of each fact.
KEY = "transformerland"
SCHEMA = {
    "floor": int,
    "short_title": str,
    "question": str,
    "outcomes": list,
    "reading_minutes": int,
    "budget_seconds": int,
}
#: The most seconds a chapter may take to execute on the 2-core CPU (the book's limit for one chapter).
MAX_BUDGET_SECONDS = 45
#: A numbered item of the objectives cell, with the lines that continue it (indented).
_ITEM = re.compile(r"^\d+\. (.*(?:\n[ \t]+\S.*)*)", re.MULTILINE)


@dataclass(frozen=True)
class Facts:
    """What the tables say about one chapter."""

    path: Path
    floor: int
    title: str
    short_title: str
    question: str
    outcomes: tuple[str, ...]
    reading_minutes: int
    budget_seconds: int
    answers: dict[str, tuple[str, ...]]


def objectives(nb: nbformat.NotebookNode) -> list[str]:
    """The learning objectives of a chapter: the numbered items of its first markdown cell that has any.

    Each item with its line breaks folded into spaces and its closing ``;`` or ``.`` dropped.
    """
    for cell in nb.cells:
        if cell.cell_type == "markdown" and (items := _ITEM.findall(cell.source)):
            return [re.sub(r"[;.]$", "", " ".join(item.split())) for item in items]
    return []


def facts(path: Path, nb: nbformat.NotebookNode | None = None) -> Facts:
    """The facts of the chapter at ``path``; a ``ValueError`` names what is missing or wrong."""
    nb = read(path) if nb is None else nb
    found = nb.metadata.get(KEY)
    where = f"{path.name}: the notebook's metadata"
    if not isinstance(found, dict):
        raise ValueError(f"{where} has no {KEY!r} object; add one with the keys {', '.join(SCHEMA)} (CONTRIBUTING.md).")
    for key, kind in SCHEMA.items():
        if not isinstance(found.get(key), kind) or isinstance(found.get(key), bool):
            raise ValueError(f"{where}: {KEY}.{key} must be a {kind.__name__}, got {found.get(key)!r}.")
    if found["floor"] != chapter_number(path):
        raise ValueError(
            f"{where}: {KEY}.floor is {found['floor']}, but the file name says chapter {chapter_number(path)}."
        )
    if not found["outcomes"] or not all(isinstance(o, str) and o.strip() for o in found["outcomes"]):
        raise ValueError(f"{where}: {KEY}.outcomes must list the learning objectives, one phrase each.")
    if not 0 < found["budget_seconds"] <= MAX_BUDGET_SECONDS:
        raise ValueError(
            f"{where}: {KEY}.budget_seconds is {found['budget_seconds']}; the book allows 1 to {MAX_BUDGET_SECONDS}."
        )
    if found["reading_minutes"] <= 0:
        raise ValueError(f"{where}: {KEY}.reading_minutes must be positive, got {found['reading_minutes']}.")
    answers = _answers(found.get("answers", {}), found["floor"], where)
    return Facts(
        path,
        found["floor"],
        title(nb),
        found["short_title"],
        found["question"],
        tuple(found["outcomes"]),
        found["reading_minutes"],
        found["budget_seconds"],
        answers,
    )


def _answers(found: object, floor: int, where: str) -> dict[str, tuple[str, ...]]:
    """The ``answers`` fact checked: labels of this chapter's exercises, each with a list of non-empty strings."""
    if not isinstance(found, dict):
        raise ValueError(f"{where}: {KEY}.answers must map exercise labels to lists of facts, got {found!r}.")
    answers = {}
    for label, items in found.items():
        if not re.fullmatch(rf"ex-{floor}-\d+", str(label)):
            raise ValueError(
                f"{where}: {KEY}.answers has the key {label!r}; use this chapter's labels (ex-{floor}-1, …)."
            )
        if not isinstance(items, list) or not items or not all(isinstance(i, str) and i.strip() for i in items):
            raise ValueError(
                f"{where}: {KEY}.answers[{label!r}] must be a non-empty list of facts (strings), got {items!r}."
            )
        answers[label] = tuple(items)
    return answers


def book_facts(root: Path = ROOT) -> list[Facts]:
    """The facts of every chapter of the book at ``root``, in the order of ``_toc.yml``."""
    return [facts(path) for path in chapters(root)]


def sync_outcomes(path: Path) -> bool:
    """Set the chapter's ``outcomes`` to its objectives cell's items; whether that changed the file.

    Only that one entry of the metadata changes: the rest of the file is written back as it was read.
    """
    wanted = objectives(read(path))
    raw = json.loads(path.read_text(encoding="utf-8"))
    found = raw["metadata"].setdefault(KEY, {})
    if found.get("outcomes") == wanted:
        return False
    found["outcomes"] = wanted
    path.write_text(json.dumps(raw, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapters (default: every chapter)")
    parser.add_argument("--sync-outcomes", action="store_true", help="copy the objectives into the metadata")
    args = parser.parse_args(argv)
    for path in args.notebooks or chapters():
        if args.sync_outcomes and sync_outcomes(path):
            print(f"{path}: outcomes copied from its objectives cell")
        print(facts(path))


if __name__ == "__main__":
    main()
