"""The exercises of a chapter notebook, found the way CONTRIBUTING.md writes them.

An exercise is a MyST ``exercise`` directive labelled ``ex-<chapter>-<n>`` whose body opens with the meta
line (difficulty, objective, suits). A text solution is a ``solution`` directive; a code solution is gated:
a markdown cell with ``solution-start``, the solution's code cells (tag ``solution``), a markdown cell with
``solution-end``, then a visible cell that calls the exercise's checker (``check_…``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import nbformat

from tools.myst import directives

META_LINE = re.compile(
    r"^\*\*Difficulty:\*\* (?P<difficulty>★☆☆|★★☆|★★★) · \*\*Objective:\*\* (?P<objective>.+) · "
    r"\*\*Suits:\*\* (?P<suits>homework|lab|discussion)$"
)
#: An exercise's label, ``ex-<chapter>-<n>``: the one pattern the tools and tests build their expressions from.
#: (The checkers' own copy, in ``transformerland.exercises.checking``, is the library's: it cannot import tools.)
LABEL = r"ex-\d+-\d+"


def exercise_number(label: str) -> str:
    """The number the site shows for an exercise label: ``2.1`` for ``ex-2-1``."""
    if not isinstance(label, str) or re.fullmatch(LABEL, label) is None:
        raise ValueError(f"exercise labels look like 'ex-2-1', got {label!r}.")
    _, chapter, n = label.split("-")
    return f"{chapter}.{n}"


@dataclass(frozen=True)
class ExerciseDirective:
    """One exercise directive of a notebook: its label, title and meta line, and the checker its gated solution is
    followed by. (The checker's own description of an exercise is ``transformerland.exercises.spec.Exercise``.)"""

    label: str
    title: str
    difficulty: str
    objective: str
    suits: str
    checker: str | None


@dataclass(frozen=True)
class Gate:
    """A gated code solution: cell ``start`` holds ``solution-start``, cell ``end`` holds ``solution-end``."""

    label: str
    start: int
    end: int

    @property
    def inside(self) -> range:
        """The indices of the solution's cells."""
        return range(self.start + 1, self.end)


def gates(nb: nbformat.NotebookNode) -> list[Gate]:
    """The gated code solutions of a notebook, in order."""
    found: list[Gate] = []
    opened: tuple[str, int] | None = None
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for directive in directives(cell.source):
            if directive.name == "solution-start":
                if opened is not None:
                    raise ValueError(
                        f"cell {index}: solution-start for {directive.argument} inside {opened[0]}'s gate."
                    )
                opened = (directive.argument, index)
            elif directive.name == "solution-end":
                if opened is None:
                    raise ValueError(f"cell {index}: a solution-end without a solution-start before it.")
                found.append(Gate(opened[0], opened[1], index))
                opened = None
    if opened is not None:
        raise ValueError(f"cell {opened[1]}: the solution-start for {opened[0]} has no solution-end.")
    return found


def checker_called(source: str) -> str | None:
    """The name of the checker (a function named ``check_…``) that a code cell calls, if any."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics, or not code at all: no checker call
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name and name.startswith("check_"):
                return name
    return None


def checkers(nb: nbformat.NotebookNode, found: list[Gate]) -> dict[str, str | None]:
    """For each gated solution, the checker that the cell right after its gate calls (None when it calls none)."""
    after = [nb.cells[gate.end + 1] if gate.end + 1 < len(nb.cells) else None for gate in found]
    return {
        gate.label: checker_called(cell.source) if cell is not None and cell.cell_type == "code" else None
        for gate, cell in zip(found, after, strict=True)
    }


def exercises(nb: nbformat.NotebookNode) -> list[ExerciseDirective]:
    """The exercises of a notebook, in order, read from their directives and meta lines."""
    found_checkers = checkers(nb, gates(nb))
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for directive in directives(cell.source):
            if directive.name != "exercise":
                continue
            label = directive.options.get("label", "")
            exercise_number(label)  # raises on a missing or malformed label
            first_line = directive.body.strip().split("\n", 1)[0]
            meta = META_LINE.match(first_line.strip())
            if meta is None:
                raise ValueError(f"{label}: the first line of its body must be the meta line, got {first_line!r}.")
            found.append(
                ExerciseDirective(
                    label,
                    directive.argument,
                    meta["difficulty"],
                    meta["objective"],
                    meta["suits"],
                    found_checkers.get(label),
                )
            )
    return found
