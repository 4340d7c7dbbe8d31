"""Write every table that is made from the chapters' facts, between markers in the pages that hold them.

A generated region starts with a line ``BEGIN GENERATED <name>`` and ends with ``END GENERATED <name>``, each
in a comment: ``<!-- … -->`` in the README and CONTRIBUTING (GitHub's markdown), ``% …`` in the book's MyST
pages. Only what lies between them is rewritten; the prose around them is the authors'. The regions, and
what fills them (:data:`REGIONS`):

* ``README.md`` · ``chapters``: floor, chapter, notebook;
* ``CONTRIBUTING.md`` · ``floors``: floor, place, chapter, notebook;
* ``book/intro.md`` · ``floors``: floor, chapter, the question it answers;
* ``book/instructors.md`` · ``outcomes``: what a student can do after each chapter; ``times``: minutes to work
  through each chapter and its exercises by difficulty.

It also writes ``book/exercise_list.md`` (:mod:`tools.exercise_list`). A test fails when any of them is stale.

    python -m tools.tables [--root .] [--check]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

from tools import exercise_list
from tools.book import ROOT, read
from tools.exercises import exercises
from tools.facts import Facts, book_facts

_REGION = re.compile(
    r"^(?P<open>(?:<!--|%) BEGIN GENERATED (?P<name>[\w-]+)\b[^\n]*)\n(?P<body>.*?)"
    r"^(?P<close>(?:<!--|%) END GENERATED (?P=name)\b[^\n]*)$",
    re.MULTILINE | re.DOTALL,
)
DIFFICULTIES = {"★☆☆": "warm-up", "★★☆": "core", "★★★": "stretch"}


def _doc(fact: Facts, page: str, root: Path) -> str:
    """A ``{doc}`` link from ``page`` to the chapter."""
    return f"{{doc}}`{os.path.relpath(fact.path.with_suffix(''), (root / page).parent)}`"


def _notebook(fact: Facts, root: Path) -> str:
    return f"`{fact.path.relative_to(root).as_posix()}`"


def readme_chapters(facts: list[Facts], root: Path) -> str:
    rows = ["| floor | chapter | notebook |", "| --- | --- | --- |"]
    rows += [f"| {f.floor} | {f.title} | {_notebook(f, root)} |" for f in facts]
    return "\n".join(rows)


def contributing_floors(facts: list[Facts], root: Path) -> str:
    rows = ["| floor | place | chapter | notebook |", "| --- | --- | --- | --- |"]
    rows += [f"| {f.floor} | {f.short_title} | {f.title} | {_notebook(f, root)} |" for f in facts]
    return "\n".join(rows)


def intro_floors(facts: list[Facts], root: Path) -> str:
    rows = ["| floor | chapter | the question it answers |", "| --- | --- | --- |"]
    rows += [f"| {f.floor} | {_doc(f, 'book/intro.md', root)} | {f.question} |" for f in facts]
    return "\n".join(rows)


def instructors_outcomes(facts: list[Facts], root: Path) -> str:
    return "\n\n".join(f"{_doc(f, 'book/instructors.md', root)}\n: {'; '.join(f.outcomes)}." for f in facts)


def instructors_times(facts: list[Facts], root: Path) -> str:
    rows = ["| chapter | work through it | its exercises |", "| --- | --- | --- |"]
    for f in facts:
        found = [exercise.difficulty for exercise in exercises(read(f.path))]
        counts = [f"{found.count(stars)} {name}" for stars, name in DIFFICULTIES.items() if found.count(stars)]
        rows.append(f"| {f.floor}. {f.title} | about {f.reading_minutes} min | {', '.join(counts) or 'none'} |")
    return "\n".join(rows)


#: Which file holds which generated regions, and the function that writes each.
REGIONS: dict[str, dict[str, Callable[[list[Facts], Path], str]]] = {
    "README.md": {"chapters": readme_chapters},
    "CONTRIBUTING.md": {"floors": contributing_floors},
    "book/intro.md": {"floors": intro_floors},
    "book/instructors.md": {"outcomes": instructors_outcomes, "times": instructors_times},
}


def replace_region(text: str, name: str, body: str) -> str:
    """``text`` with the body of its generated region ``name`` replaced; a ``ValueError`` when there is none."""
    found = [match for match in _REGION.finditer(text) if match["name"] == name]
    if not found:
        raise ValueError(f"no generated region named {name!r}: add BEGIN/END GENERATED {name} markers for it.")
    for match in reversed(found):
        text = f"{text[: match.start()]}{match['open']}\n\n{body}\n\n{match['close']}{text[match.end() :]}"
    return text


def render(text: str, writers: dict[str, Callable[[list[Facts], Path], str]], facts: list[Facts], root: Path) -> str:
    """``text`` with each generated region that ``writers`` names rewritten."""
    for name, writer in writers.items():
        text = replace_region(text, name, writer(facts, root))
    return text


def generated(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file's text as it should be: path → text."""
    facts = book_facts(root)
    pages = {root / exercise_list.PAGE: exercise_list.render(root)}
    for name, writers in REGIONS.items():
        path = root / name
        pages[path] = render(path.read_text(encoding="utf-8"), writers, facts, root)
    return pages


def stale(root: Path = ROOT) -> list[Path]:
    """The generated files whose committed text differs from a fresh run."""
    return [path for path, text in generated(root).items() if path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's root, with _toc.yml (default: this one)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a generated file is stale")
    args = parser.parse_args(argv)
    if args.check:
        found = stale(args.root)
        for path in found:
            print(f"stale: {path.relative_to(args.root)} (run python -m tools.tables)")
        return 1 if found else 0
    for path, text in generated(args.root).items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
