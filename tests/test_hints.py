"""Hints and stubs point at the idea, never at the solution's line (issue 36's check).

For every coding exercise: no line of its reference solution (the notebook's gated solution cells, and the
reference function's own source) appears, whitespace aside, in a hint the checker can give, nor in a
docstring the handout's stub keeps. A "line" here is a statement of at least 10 characters of code that is
not a ``def``, an import, a docstring or a bare ``return`` of one name.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap

import pytest

from tools import book
from tools.exercises import checkers, gates

CHAPTERS = list(book.chapters(book.ROOT))


def _squashed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _code_lines(source: str) -> set[str]:
    """The solution's statements, whitespace squeezed out, that are long enough to be a giveaway."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return set()
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Module)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # a docstring
            continue
        if isinstance(node, ast.stmt):
            text = _squashed(ast.unparse(node).split("\n")[0])
            if len(text) >= 10 and not re.fullmatch(r"return\w+", text):
                lines.add(text.rstrip(":"))
    return lines


def _docstrings(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = [ast.get_docstring(node) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    return [doc for doc in found if doc]


def _solutions(path) -> dict[str, tuple[str, str]]:
    """For each exercise with a checker: the checker's name and the solution's code."""
    nb = book.read(path)
    found = gates(nb)
    named = checkers(nb, found)
    return {
        gate.label: (
            named[gate.label],
            "\n".join(nb.cells[i].source for i in gate.inside if nb.cells[i].cell_type == "code"),
        )
        for gate in found
        if named[gate.label]
    }


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_hint_or_stub_docstring_hands_over_a_line_of_the_solution(path):
    solutions = _solutions(path)
    if not solutions:
        pytest.skip(f"{path.stem} has no coding exercise")  # a chapter without checkers has nothing to check
    chapter = importlib.import_module(f"transformerland.exercises.ch{book.chapter_number(path)}")
    by_checker = {spec.checker: spec for spec in chapter.EXERCISES}
    for label, (checker, code) in solutions.items():
        spec = by_checker[checker]
        try:
            reference = inspect.getsource(spec.reference)
        except (OSError, TypeError):
            reference = ""
        lines = _code_lines(code) | _code_lines(reference)
        for text in [*spec.texts(), *_docstrings(code)]:
            given = [line for line in lines if line in _squashed(text)]
            assert not given, f"{label}: {text!r} holds the solution's line {given[0]!r}"
