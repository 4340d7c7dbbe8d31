"""Ask before telling: no chapter shows an exercise's answer before the exercise asks it (issue 32).

Each chapter declares the facts that answer its exercises in its facts (``answers``, :mod:`tools.facts`); the
test fails, naming the exercise, the fact and where it appeared, when the site shows one above its exercise or
in its statement, or the handout shows one in code (:mod:`tools.giveaways` says exactly what is searched).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from tools.book import ROOT, chapter_number, chapters, read
from tools.facts import facts
from tools.giveaways import found, giveaways, hint_giveaways

CHAPTERS = chapters(ROOT)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_no_answer_above_its_exercise(path: Path) -> None:
    nb = read(path)
    problems = giveaways(nb, facts(path, nb).answers)
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_no_checker_hint_holds_an_answer(path: Path) -> None:
    """Only chapters that declare answers: their exercise module must import (a declared answer is checked)."""
    answers = facts(path).answers
    if not answers:
        pytest.skip(f"{path.stem} declares no answers")
    chapter = importlib.import_module(f"transformerland.exercises.ch{chapter_number(path)}")
    problems = hint_giveaways(getattr(chapter, "EXERCISES", []), answers)
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_a_hint_that_holds_an_answer_is_named() -> None:
    spec = SimpleNamespace(label="ex-9-1", texts=lambda: ["look at the exponent.", "the answer is 12 turns."])
    assert hint_giveaways([spec], {"ex-9-1": ("12",), "ex-9-2": ("7",)}) == [
        "ex-9-1: its answer '12' appears in its checker's hint 'the answer is 12 turns.'."
    ]


def _chapter(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=list(cells))


EXERCISE = """```{exercise} Count
:label: ex-9-1

**Difficulty:** ★☆☆ · **Objective:** count · **Suits:** homework

How many turns?
```"""


def test_facts_match_as_whole_tokens() -> None:
    assert found("63", "the first repeat is at 63.")
    assert found("63", "k = 63, then")
    assert not found("63", "630 positions") and not found("63", "0.63") and not found("63", "6.3")
    assert not found("63", "1,063")
    assert found("ln 2", "stuck at LN\n 2 for good")
    assert found("438,460", "(438,460 pairs)") and not found("438,460", "1438,460")
    assert found("1/(m+1)", "the output is $1/(m+1)$")


def test_a_fact_in_prose_or_output_above_is_found_and_placed() -> None:
    output = nbformat.v4.new_output("stream", name="stdout", text="turns: 12\n")
    nb = _chapter(
        nbformat.v4.new_markdown_cell("The wall turns 12 times."),
        nbformat.v4.new_code_cell("print(turns)", outputs=[output]),
        nbformat.v4.new_markdown_cell(EXERCISE),
    )
    problems = giveaways(nb, {"ex-9-1": ("12",)})
    assert problems == [
        "ex-9-1: its answer '12' appears in cell 0 (markdown).",
        "ex-9-1: its answer '12' appears in cell 1 (its output).",
    ]


def test_what_the_page_does_not_show_above_is_not_a_giveaway() -> None:
    hidden_output = nbformat.v4.new_output("stream", name="stdout", text="12\n")
    nb = _chapter(
        nbformat.v4.new_code_cell("turns = 12  # the source is the lesson, not searched"),
        nbformat.v4.new_code_cell("print(turns)", outputs=[hidden_output], metadata={"tags": ["remove-output"]}),
        nbformat.v4.new_markdown_cell(EXERCISE),
        nbformat.v4.new_markdown_cell("Below the exercise: 12 turns."),
    )
    assert giveaways(nb, {"ex-9-1": ("12",)}) == []


def test_a_hidden_cell_that_the_handout_keeps_is_a_giveaway() -> None:
    nb = _chapter(
        nbformat.v4.new_markdown_cell(EXERCISE),
        nbformat.v4.new_code_cell(
            "turns = 12  # a hidden set-up cell, which the handout keeps", metadata={"tags": ["remove-cell"]}
        ),
    )
    assert giveaways(nb, {"ex-9-1": ("12",)}) == [
        "ex-9-1: its answer '12' appears in handout cell 1 (a hidden cell the handout keeps)."
    ]


def test_the_answers_name_an_exercise_of_the_chapter() -> None:
    nb = _chapter(nbformat.v4.new_markdown_cell(EXERCISE))
    assert giveaways(nb, {"ex-9-2": ("12",)}) == [
        "ex-9-2: the chapter declares its answers, but has no exercise with that label."
    ]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_a_solution_s_prose_in_its_closing_cell_stays_out_of_the_handout(path: Path) -> None:
    """A solution's explanation written in the cell that closes it (before ``{solution-end}``) is part of the
    solution: the student edition must cut it as it cuts the rest (it once sat right under the stub)."""
    from tools.stubs import student_notebook

    nb = read(path)
    closing = [
        cell.source.split("```{solution-end}")[0].strip() for cell in nb.cells if "{solution-end}" in cell.source
    ]
    prose = [text.splitlines()[0] for text in closing if text and "{solution-start}" not in text]
    student = "\n".join(cell.source for cell in student_notebook(nb, handout=True).cells)
    leaked = [line for line in prose if line in student]
    assert not leaked, f"{path.name}: " + " | ".join(leaked)
