"""Where a chapter shows an exercise's answer before asking it: the facts of ``answers`` found on the page.

Each chapter declares, in its facts (:mod:`tools.facts`), the facts that answer each exercise: numbers and
short phrases. A fact *gives the exercise away* when the page shows it before the student has answered:

* **on the site, above the exercise**, or in the exercise's own statement: the text of the markdown cells (the
  folded solutions of earlier exercises included, since a click opens them) and what the code cells print,
  their text outputs and the text of their HTML (scripts and tags left out). Visible code is the lesson, so
  its source is not searched; the cells the site removes (``remove-cell``) and the outputs it removes
  (``remove-output``) are not on the page;
* **in a checker's hints**: every text a coding exercise's checker can show (its slips' ``says`` and ``then``,
  :meth:`transformerland.exercises.exercise.Exercise.texts`), since a first wrong try shows them;
* **in the handout, anywhere**: the source of a hidden cell that the handout keeps
  (:func:`tools.handouts.without_answers` drops only the statements that ``assert``, so a call such as
  ``torch.testing.assert_close(...)`` stays and states its answer), and the stub of the exercise's own
  solution (its docstring), which Jupyter and Colab show as code.

A fact matches as a whole token, whatever the case and the line breaks: "63" is not found in "630", "0.63" or
"6.3", and "ln 2" is found in "at ln  2". ``tests/test_giveaways.py`` runs :func:`giveaways` on every chapter.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import nbformat

from tools.handouts import without_answers
from tools.myst import directives
from tools.stubs import STUB_MARK, student_notebook

_SCRIPT = re.compile(r"<(script|style)\b.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Shown:
    """A piece of text that the reader sees: ``where`` says where (``cell 12, markdown``), ``text`` is what."""

    where: str
    text: str


def _tags(cell: nbformat.NotebookNode) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _output_text(output: nbformat.NotebookNode) -> str:
    """The text a code cell's output shows: a stream, an error's message, or its plain, HTML or markdown text."""
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return f"{output.get('ename', '')}: {output.get('evalue', '')}"
    data = output.get("data", {})
    parts = [data.get(kind, "") for kind in ("text/plain", "text/markdown", "text/latex")]
    if "text/html" in data:
        parts.append(html.unescape(_TAG.sub(" ", _SCRIPT.sub(" ", data["text/html"]))))
    return "\n".join(part if isinstance(part, str) else "".join(part) for part in parts)


def site_above(nb: nbformat.NotebookNode, label: str) -> list[Shown]:
    """What the site shows above the exercise ``label``, its statement included; ``[]`` when it has no such exercise."""
    shown = []
    for index, cell in enumerate(nb.cells):
        if "remove-cell" in _tags(cell):
            continue
        if cell.cell_type == "markdown":
            exercise = next(
                (d for d in directives(cell.source) if d.name == "exercise" and d.options.get("label") == label), None
            )
            if exercise is not None:
                shown.append(
                    Shown(f"cell {index} (markdown, up to and with {label}'s statement)", cell.source[: exercise.end])
                )
                return shown
            shown.append(Shown(f"cell {index} (markdown)", cell.source))
        elif cell.cell_type == "code" and "remove-output" not in _tags(cell):
            text = "\n".join(_output_text(output) for output in cell.get("outputs", []))
            if text.strip():
                shown.append(Shown(f"cell {index} (its output)", text))
    return []


def handout_code(nb: nbformat.NotebookNode) -> dict[str, list[Shown]]:
    """The code a handout shows that the site does not, by exercise label (``""``: for every exercise).

    The hidden cells the handout keeps count against every exercise; a stub counts against its own exercise.
    """
    handout = without_answers(student_notebook(nb, handout=True))
    shown: dict[str, list[Shown]] = {"": []}
    for index, cell in enumerate(handout.cells):
        if cell.cell_type != "code":
            continue
        if "remove-cell" in _tags(cell):
            shown[""].append(Shown(f"handout cell {index} (a hidden cell the handout keeps)", cell.source))
        elif STUB_MARK in cell.source and (label := re.search(r'"(ex-\d+-\d+): ', cell.source)):
            shown.setdefault(label[1], []).append(Shown(f"handout cell {index} ({label[1]}'s stub)", cell.source))
    return shown


def found(fact: str, text: str) -> bool:
    """Whether ``fact`` occurs in ``text`` as a whole token, ignoring case and how the white space runs."""
    words = [re.escape(word) for word in fact.split()]
    if not words:
        return False
    pattern = r"\s+".join(words)
    before = r"(?<![\w])(?<!\d[.,])" if re.match(r"\w", fact.strip()) else ""
    after = r"(?![\w])(?![.,]\d)" if re.search(r"\w$", fact.strip()) else ""
    return re.search(before + pattern + after, text, flags=re.IGNORECASE) is not None


def giveaways(nb: nbformat.NotebookNode, answers: dict[str, tuple[str, ...]]) -> list[str]:
    """One line for each fact of ``answers`` that the chapter ``nb`` shows before its exercise is answered."""
    problems = []
    handout = handout_code(nb) if answers else {}
    for label, facts in answers.items():
        places = site_above(nb, label)
        if not places:
            problems.append(f"{label}: the chapter declares its answers, but has no exercise with that label.")
            continue
        places += handout[""] + handout.get(label, [])
        for fact in facts:
            for place in places:
                if found(fact, place.text):
                    problems.append(f"{label}: its answer {fact!r} appears in {place.where}.")
    return problems


def hint_giveaways(exercises: Iterable[Any], answers: dict[str, tuple[str, ...]]) -> list[str]:
    """One line for each fact of ``answers`` that a hint of its exercise's checker holds.

    ``exercises`` are the chapter's declarations (``EXERCISES`` of its module): anything with a ``label`` and
    a ``texts()`` that lists every hint its checker can give.
    """
    problems = []
    for spec in exercises:
        for fact in answers.get(spec.label, ()):
            for text in spec.texts():
                if found(fact, text):
                    problems.append(f"{spec.label}: its answer {fact!r} appears in its checker's hint {text!r}.")
    return problems
