"""The instructor's kit (tools/): the exercise list, the student edition, the handouts, the bulk grader.

Each is tried on the fixture book in tests/fixtures/minibook (two chapters; coding and text exercises; a
code solution in two cells; a text solution holding code) and on the real chapters. Where a test looks for
solutions, it finds them with its own simple parsing rather than the tools', so a tool that misses a
solution cannot also hide the miss.
"""

from __future__ import annotations

import ast
import csv
import html
import importlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from transformerland.exercises import VERDICT_PATTERN

from tools import book, exercise_list, handouts, stubs, student_edition
from tools import exercises as found_exercises
from tools.myst import directives
from tools.run_notebook import run_in_empty_folder

ROOT = book.ROOT
FIXTURES = Path(__file__).resolve().parent / "fixtures"
MINIBOOK = FIXTURES / "minibook"
CHAPTERS = book.chapters(ROOT)
SOLUTION_BLOCK = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{solution\} (?P<label>ex-\d+-\d+)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
ROLE = re.compile(r"\{[a-z:-]+\}`[^`]*`")
HIDING_TAGS = {"remove-cell", "remove-input", "hide-cell", "hide-input"}


def tool(*args: str) -> subprocess.CompletedProcess:
    """Run ``python -m tools.<args>`` from the repository root, as the Makefile does."""
    result = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"python -m {' '.join(args)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


def squeeze(text: str) -> str:
    """Letters and digits only, lowercased: what survives highlighting, smart quotes, escaping and MathJax."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def gated(nb: nbformat.NotebookNode) -> dict[int, str]:
    """Cell index → exercise label for every cell between a solution-start and its solution-end."""
    inside, label = {}, None
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and "{solution-end}" in cell.source:
            label = None
        elif label is not None:
            inside[index] = label
        if cell.cell_type == "markdown" and (start := re.search(r"\{solution-start\} (ex-\d+-\d+)", cell.source)):
            label = start[1]
    return inside


def code_prints(source: str) -> list[str]:
    """The lines of a solution's code that are its answer: not signatures, docstrings, imports or comments."""
    public = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            public |= set(range(first, node.body[0].lineno))
            if ast.get_docstring(node) is not None:
                public |= set(range(node.body[0].lineno, node.body[0].end_lineno + 1))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            public |= set(range(node.lineno, node.end_lineno + 1))
    lines = [line for number, line in enumerate(source.split("\n"), 1) if number not in public]
    return [squeeze(line) for line in lines if not line.strip().startswith("#")]


def text_prints(body: str) -> list[str]:
    """A text solution's lines and sentences, split where roles render as other text ({cite}, {ref})."""
    pieces = re.split(r"\n|(?<=[.!?:])\s+|" + ROLE.pattern, body)
    return [squeeze(piece) for piece in pieces if not piece.lstrip().startswith(("```", ":::"))]


def solution_prints(nb: nbformat.NotebookNode) -> dict[str, list[str]]:
    """Exercise label → the pieces of its solutions (code and text) that a leak would show."""
    prints: dict[str, list[str]] = {}
    inside = gated(nb)
    for index, label in inside.items():
        cell = nb.cells[index]
        found = code_prints(cell.source) if cell.cell_type == "code" else text_prints(cell.source)
        prints.setdefault(label, []).extend(found)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for block in SOLUTION_BLOCK.finditer(cell.source):
                prints.setdefault(block["label"], []).extend(text_prints(block["body"]))
    return prints


def public_text(root: Path) -> str:
    """Everything the book shows that is not a solution: pages, and chapters without their solutions."""
    parts = [page.read_text(encoding="utf-8") for page in (root / "book").glob("*.md")]
    for path in book.chapters(root):
        nb = book.read(path)
        inside = gated(nb)
        checks = {max(i for i, owner in inside.items() if owner == label) + 2 for label in inside.values()}
        for index, cell in enumerate(nb.cells):
            if index in inside or "{solution-" in cell.source:
                continue
            parts.append(SOLUTION_BLOCK.sub("", cell.source))
            if index not in checks:  # a checker's committed verdict is not shown to students
                for output in cell.get("outputs", []):
                    parts.append(output.get("text", "") + output.get("data", {}).get("text/plain", ""))
    return squeeze("\n".join(parts))


def leak_prints(root: Path) -> dict[str, list[str]]:
    """Label → the distinctive pieces of its solutions: 12 characters or more, shown nowhere outside a solution."""
    public = public_text(root)
    prints = {}
    for path in book.chapters(root):
        for label, pieces in solution_prints(book.read(path)).items():
            prints[label] = sorted({p for p in pieces if len(p) >= 12 and p not in public})
    return prints


def site_text(html_dir: Path) -> str:
    """The text of a built site: its pages without markup, its search index, its downloadable sources."""
    parts = []
    for page in html_dir.rglob("*.html"):
        parts.append(html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8"))))
    parts.append((html_dir / "searchindex.js").read_text(encoding="utf-8"))
    for source in (html_dir / "_sources").rglob("*"):
        if source.suffix == ".ipynb":
            nb = json.loads(source.read_text(encoding="utf-8"))
            parts += ["".join(cell["source"]) for cell in nb["cells"]]
            parts += [json.dumps(cell.get("outputs", []), ensure_ascii=False) for cell in nb["cells"]]
        elif source.is_file():
            parts.append(source.read_text(encoding="utf-8"))
    return squeeze("\n".join(parts))


def build_normal_site(root: Path, into: Path) -> Path:
    """The fixture book's ordinary site, solutions folded (execution is off in its configuration)."""
    command = ["jupyter-book", "build", str(root), "--path-output", str(into), "-W", "-n", "--keep-going"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, f"the fixture book did not build:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return into / "_build" / "html"


# --- reading the chapters -------------------------------------------------------------------------------


def test_directives_are_found_with_their_options_and_nested_fences():
    text = (
        "Intro.\n\n````{solution} ex-2-2\n:class: dropdown\n\nSome text.\n\n```python\nx = 1\n```\n````\n\n"
        ":::{exercise} A title\n:label: ex-2-3\n\n**Difficulty:** ★☆☆ · **Objective:** o · **Suits:** lab\n:::\n"
    )
    solution, exercise = directives(text)
    assert (solution.name, solution.argument, solution.options) == ("solution", "ex-2-2", {"class": "dropdown"})
    assert solution.body == "Some text.\n\n```python\nx = 1\n```"
    assert (exercise.name, exercise.argument, exercise.options) == ("exercise", "A title", {"label": "ex-2-3"})
    assert text[solution.start : solution.end].endswith("````") and text[exercise.end :] == "\n"


def test_a_stub_keeps_signatures_and_docstrings_and_nothing_else():
    source = '''import math
from functools import cache

SCALE = 3
OFFSET = 41


@cache
def scaled(
    x: float,
    factor: float = SCALE,
) -> float:
    """Multiply.

    Args: the usual.
    """
    helper = math.sqrt(x)
    return helper * factor


def one_liner(x): return x + OFFSET


class Ledger:
    """One page per seat."""

    pages = 512

    def __init__(self, n: int) -> None:
        self.n = n * 2

    async def read(self, seat: int) -> int:
        return self.n - seat


class Settings:
    size = 8


class Seat:
    @property
    def number(self) -> int:
        return 7 * 6


print(scaled(4.0))
'''
    stub = stubs.stub(source, "ex-3-1")
    namespace: dict = {}
    exec(compile(stub, "<stub>", "exec"), namespace)
    assert "import math" in stub and "from functools import cache" in stub and "@cache" in stub
    assert '"""Multiply.\n\n    Args: the usual.\n    """' in stub and '"""One page per seat."""' in stub
    assert "SCALE = 3\n\n\n@cache" in stub, "a constant that a signature uses stays"
    assert "    x: float,\n    factor: float = SCALE,\n) -> float:" in stub
    assert "class Settings:\n    pass" in stub and "class Seat:\n    @property\n    def number(self) -> int:" in stub
    for answer in ["OFFSET", "helper", "pages = 512", "n * 2", "self.n - seat", "size = 8", "7 * 6", "print("]:
        assert answer not in stub, f"the stub kept {answer!r}"
    assert stub.count(stubs.STUB_MARK) == 5
    for call in [lambda: namespace["scaled"].__wrapped__(1.0, 2.0), lambda: namespace["one_liner"](1)]:
        with pytest.raises(NotImplementedError, match="ex-3-1"):
            call()
    with pytest.raises(NotImplementedError):
        namespace["Ledger"](3)


def test_a_solution_without_functions_leaves_only_the_mark():
    assert stubs.stub("answer = 6 * 7\nprint(answer)", "ex-1-1") == stubs.STUB_MARK


def test_the_prose_answer_in_a_solution_ends_cell_is_cut_out():
    """A gated solution's prose often shares a cell with its ``solution-end``: that prose is the answer too."""
    fence = "```"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"{fence}{{solution-start}} ex-1-1\n:class: dropdown\n{fence}"),
        nbformat.v4.new_code_cell('def f(x: int) -> int:\n    """Twice x."""\n    return 2 * x'),
        nbformat.v4.new_markdown_cell(f"The score depends on m + n.\n\n{fence}{{solution-end}}\n{fence}"),
        nbformat.v4.new_code_cell("check_f(f);"),
    ]
    for handout in (False, True):
        text = "\n".join(cell.source for cell in stubs.student_notebook(nb, handout=handout).cells)
        assert "m + n" not in text and stubs.STUB_MARK in text, text


def test_a_solution_that_is_not_python_is_named():
    with pytest.raises(ValueError, match="ex-2-1"):
        stubs.stub("%timeit f()", "ex-2-1")


def test_the_fixture_chapters_are_read_as_written():
    assert [path.name for path in book.chapters(MINIBOOK)] == ["01_counting.ipynb", "02_tickets.ipynb"]
    found = found_exercises.exercises(book.read(MINIBOOK / "book" / "01_counting.ipynb"))
    assert [(e.label, e.difficulty, e.suits, e.checker) for e in found] == [
        ("ex-1-1", "★☆☆", "homework", "check_last_seat"),
        ("ex-1-2", "★★☆", "discussion", None),
        ("ex-1-3", "★☆☆", "lab", "check_seats_apart"),
    ]
    assert found_exercises.exercise_number("ex-12-3") == "12.3"
    with pytest.raises(ValueError, match="ex-2-1"):
        found_exercises.exercise_number("exercise-2")
    assert found[0].title == "The last seat" and found[0].objective == "number the seats of a queue from 0"


# --- the exercise list ----------------------------------------------------------------------------------


@pytest.mark.parametrize("root", [ROOT, MINIBOOK], ids=["book", "fixture"])
def test_the_exercise_list_is_up_to_date(root: Path):
    committed = (root / exercise_list.PAGE).read_text(encoding="utf-8")
    assert committed == exercise_list.render(root), "book/exercise_list.md is stale: run python -m tools.exercise_list"


def test_the_exercise_list_links_every_exercise_of_every_chapter():
    page = (ROOT / exercise_list.PAGE).read_text(encoding="utf-8")
    for path in CHAPTERS:
        text = "\n".join(cell.source for cell in book.read(path).cells if cell.cell_type == "markdown")
        for label in re.findall(r"^:label: (ex-\d+-\d+)$", text, re.M):
            assert f"\n| {{ref}}`{label}`" in page, f"{label} is missing from the exercise list"


# --- checkers after every gated solution -----------------------------------------------------------------


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_gated_solution_is_followed_by_a_visible_checker_that_passes_it(path: Path):
    nb = book.read(path)
    module = importlib.import_module(f"transformerland.exercises.ch{book.chapter_number(path)}")
    inside = gated(nb)
    for label in sorted(set(inside.values())):
        cells = [index for index, owner in inside.items() if owner == label]
        code = [nb.cells[i] for i in cells if nb.cells[i].cell_type == "code"]
        assert code, f"{label}: a gated solution holds the solution's code cells"
        assert all("solution" in cell.metadata.get("tags", []) for cell in code), f"{label}: tag code cells 'solution'"
        after = nb.cells[max(cells) + 2]  # the cell after solution-end
        checker = found_exercises.checker_called(after.source) if after.cell_type == "code" else None
        assert checker, f"{label}: the cell after solution-end must call its checker, check_…(your_function)"
        assert not HIDING_TAGS & set(after.metadata.get("tags", [])), f"{label}: the checker call must be visible"
        assert hasattr(module, checker), f"{label}: {checker} is not in transformerland.exercises.ch{path.name[:2]}"
        printed = "".join(output.get("text", "") for output in after.get("outputs", []))
        verdicts = {m["exercise"]: m["verdict"] for m in VERDICT_PATTERN.finditer(printed)}
        assert verdicts == {label: "PASSED"}, f"{label}: the committed output of {checker} should say it PASSED"


# --- the student edition ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_fixture_student_edition_has_the_exercises_and_none_of_the_solutions(tmp_path: Path):
    prints = leak_prints(MINIBOOK)
    assert set(prints) == {"ex-1-1", "ex-1-2", "ex-1-3", "ex-2-1", "ex-2-2"}
    assert all(prints.values()), f"a solution without a distinctive line: {prints}"
    normal = site_text(build_normal_site(MINIBOOK, tmp_path / "normal"))
    shown = [p for pieces in prints.values() for p in pieces if p not in normal]
    assert not shown, f"the ordinary site should show every solution (folded); it lacks {shown}"
    student_edition.build(MINIBOOK, tmp_path / "student")
    student = site_text(tmp_path / "student" / "html")
    leaks = {label: [p for p in pieces if p in student] for label, pieces in prints.items()}
    assert not any(leaks.values()), f"solutions in the student edition: {leaks}"
    for shown_to_students in ["The last seat", "Your turn: Exercise 2.1", stubs.STUB_MARK, "check_ticket_label("]:
        assert squeeze(shown_to_students) in student
    assert_downloads_are_handouts(MINIBOOK, tmp_path / "student" / "html")


def assert_downloads_are_handouts(root: Path, html: Path) -> None:
    """Every notebook the student site serves (its download button's ``_sources``) is the chapter's handout."""
    served = sorted(html.rglob("*.ipynb"))
    assert [p.name for p in served] == [p.name for p in book.chapters(root)], served
    for path, chapter in zip(served, book.chapters(root), strict=True):
        nb = book.read(path)
        handout = handouts.handout(book.read(chapter))
        assert nbformat.writes(nb) == nbformat.writes(handout), f"{path} is not the handout"
        assert not hidden_assertions(nb) and not any(cell.get("outputs") for cell in nb.cells)


@pytest.mark.slow
def test_the_student_edition_of_the_book_builds_without_any_solution(tmp_path: Path):
    prints = leak_prints(ROOT)
    tool("tools.student_edition", "--out", str(tmp_path))
    student = site_text(tmp_path / "html")
    for path in CHAPTERS:
        assert (tmp_path / "html" / "book" / path.with_suffix(".html").name).exists(), f"{path.name} was not built"
    leaks = {label: [p for p in pieces if p in student] for label, pieces in prints.items()}
    assert not any(leaks.values()), f"solutions in the student edition: {leaks}"
    assert all(prints.values()), f"solutions with no line distinctive enough to search for: {prints}"
    assert_downloads_are_handouts(ROOT, tmp_path / "html")
    for pattern in [pattern for patterns in KEY_VALUES.values() for pattern in patterns]:
        served = "\n".join(p.read_text(encoding="utf-8") for p in (tmp_path / "html").rglob("*.ipynb"))
        assert not re.search(pattern, served), f"the student site serves {pattern}"


# --- the handouts ----------------------------------------------------------------------------------------


def handout_problems(path: Path, prints: dict[str, list[str]]) -> list[str]:
    """What is wrong with a handout: outputs left in it, solution directives, any piece of a solution."""
    nb = book.read(path)
    text = squeeze("\n".join(cell.source for cell in nb.cells))
    problems = [f"cell {i} keeps its outputs" for i, cell in enumerate(nb.cells) if cell.get("outputs")]
    problems += [f"a solution directive in cell {i}" for i, cell in enumerate(nb.cells) if "{solution" in cell.source]
    return problems + [f"{label}: {p!r}" for label, pieces in prints.items() for p in pieces if p in text]


def run_handout(path: Path, nb: nbformat.NotebookNode | None = None) -> tuple[list[str], dict[str, str]]:
    """Execute a handout as a student would first run it: its errors, and each exercise's verdict message.

    ``nb``: the cells to run, when not the whole handout at ``path``.
    """
    nb = book.read(path) if nb is None else nb
    run_in_empty_folder(nb, 600, allow_errors=True, kernel_name="python3")  # generous: a busy CI
    errors = [
        f"cell {i}: {output['ename']}: {output['evalue']}"
        for i, cell in enumerate(nb.cells)
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error" and "raises-exception" not in cell.metadata.get("tags", [])
    ]
    printed = "".join(output.get("text", "") for cell in nb.cells for output in cell.get("outputs", []))
    return errors, {m["exercise"]: f"{m['verdict']} · {m['message']}" for m in VERDICT_PATTERN.finditer(printed)}


@pytest.mark.slow
def test_the_fixture_handouts_hold_no_solution_and_run_to_not_yet(tmp_path: Path):
    written = handouts.write(MINIBOOK, tmp_path)
    assert [p.name for p in written] == ["01_counting.ipynb", "02_tickets.ipynb"]
    assert sorted(zipfile.ZipFile(tmp_path / "handouts.zip").namelist()) == [p.name for p in written]
    expected = {"01_counting.ipynb": ["ex-1-1", "ex-1-3"], "02_tickets.ipynb": ["ex-2-1"]}
    not_yet = ": the function is not written yet (it raised NotImplementedError)."
    prints = leak_prints(MINIBOOK)
    for path in written:
        assert not handout_problems(path, prints)
        nb = book.read(path)
        assert list(nb.metadata["transformerland"]["checkers"]) == expected[path.name]
        assert any(cell.source.startswith("### Exercise 1.2: A shuffled queue (ex-1-2)") for cell in nb.cells) == (
            path.name == "01_counting.ipynb"
        )
        errors, verdicts = run_handout(path)
        assert not errors and set(verdicts) == set(expected[path.name]), (errors, verdicts)
        assert all(v.startswith("NOT YET · ") and v.endswith(not_yet) for v in verdicts.values()), verdicts


@pytest.fixture(scope="module")
def real_handouts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handouts of every chapter, made once for the tests that read them: the folder they are in."""
    out = tmp_path_factory.mktemp("handouts")
    tool("tools.handouts", "--out", str(out))
    return out


def test_the_real_handouts_hold_no_solution(real_handouts: Path):
    assert sorted(p.name for p in (real_handouts / "notebooks").glob("*.ipynb")) == [p.name for p in CHAPTERS]
    prints = leak_prints(ROOT)
    for path in CHAPTERS:
        problems = handout_problems(real_handouts / "notebooks" / path.name, prints)
        assert not problems, f"{path.name}: {problems}"
        # the search is not blind: in the chapter itself it finds every one of its solutions
        found = {problem.split(":")[0] for problem in handout_problems(path, prints)}
        mine = {label for label in prints if label.startswith(f"ex-{book.chapter_number(path)}-")}
        assert mine <= found, f"{path.name}: the search misses {sorted(mine - found)}"


#: Answers that the chapters' hidden cells under exercises state (issue 23): none may reach a handout.
KEY_VALUES = {
    "01_why_order_matters.ipynb": [
        r'"running sum": \(.*, False\)',
        r'"layer norm": \(.*, True\)',
    ],
    "02_sinusoidal.ipynb": [r"\(100\.0, 63\)", r"\(10\.0, 358\)"],
    "04_bert.ipynb": [r"31_?782_?912", r"3_?670_?016", r"524_?288"],
}


def hidden_assertions(nb: nbformat.NotebookNode) -> list[str]:
    """Every test of the notebook's hidden cells (an assert, an ``assert_close(…)`` call: the innermost statements
    that hold one), as ast.unparse writes it."""
    found = []
    for cell in nb.cells:
        if cell.cell_type == "code" and HIDING_TAGS & set(cell.metadata.get("tags", [])):
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            statements = [node for node in ast.walk(tree) if isinstance(node, ast.stmt) and handouts.is_test(node)]
            found += [
                ast.unparse(node)
                for node in statements
                if not any(inner is not node and inner in statements for inner in ast.walk(node))
            ]
    return found


def test_the_real_handouts_hold_no_hidden_answer(real_handouts: Path):
    for path in CHAPTERS:
        chapter, handout = book.read(path), book.read(real_handouts / "notebooks" / path.name)
        shown = {ast.unparse(ast.parse(c.source)) for c in handout.cells if c.cell_type == "code" and _parses(c.source)}
        shown_text = "\n".join(shown)
        asserted = hidden_assertions(chapter)
        assert asserted, f"{path.name}: the chapter has no hidden assertion: is the search blind?"
        leaks = [a for a in asserted if a in shown_text]
        assert not leaks, f"{path.name}: hidden assertions in the handout: {leaks[:3]}"
        assert not hidden_assertions(handout)
        tags = [cell.metadata.get("tags", []) for cell in handout.cells]
        assert sum("setup" in t for t in tags) == 1, f"{path.name}: the handout must keep its set-up cell"
        assert not [t for t in tags if "colab-badge" in t], f"{path.name}: the badge opens the full chapter"
        assert "colab.research.google.com/github" not in nbformat.writes(handout)
        for pattern in KEY_VALUES.get(path.name, []):
            chapter_text = "\n".join(cell.source for cell in chapter.cells)
            assert re.search(pattern, chapter_text), f"{path.name}: {pattern} is not in the chapter: the test is blind"
            assert not re.search(pattern, "\n".join(c.source for c in handout.cells)), f"{path.name}: {pattern} leaks"


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def up_to_first_checker(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The handout's cells up to the one that calls the checker of its first coding exercise."""
    first = next(iter(nb.metadata["transformerland"]["checkers"].values()))
    calls = [i for i, cell in enumerate(nb.cells) if found_exercises.checker_called(cell.source) == first]
    assert calls, f"no cell of the handout calls {first}"
    return nbformat.from_dict({**nb, "cells": nb.cells[: calls[0] + 1]})


def code(cells: list) -> list[str]:
    return [cell.source for cell in cells if cell.cell_type == "code"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_each_chapter_run_is_also_its_handouts_run_to_the_first_exercise(path: Path):
    """The chapter's one run in a test session (tests/site/test_site_colab.py) also runs its handout's first part.

    That run is :func:`tools.handouts.with_first_stub`: it must execute exactly the handout's code, in order, from
    the top to the first checker call (whose NOT YET the chapter's test asserts), and then, without the cells it
    added, exactly the chapter. (The chapter itself runs to the end there, and no cell after a solution uses what
    the solution defines (the test below), so the rest of the handout runs as far as this part does.)
    """
    chapter = book.read(path)
    run, first = handouts.with_first_stub(chapter)
    handout_part = up_to_first_checker(stubs.student_notebook(chapter, handout=True))
    ours = [cell for index, cell in enumerate(run.cells) if index not in first.inserted or index in first.cells]
    assert code(ours[: first.cells.stop - 1]) == code(handout_part.cells)
    assert found_exercises.checker_called(run.cells[first.cells[-1]].source) == first.checker
    assert [run.cells[i].source for i in (first.inserted[0], first.inserted[-1])] == [
        handouts.SAVE_RANDOM,
        handouts.RESTORE_RANDOM,
    ]
    without = [cell for index, cell in enumerate(run.cells) if index not in first.inserted]
    assert without == chapter.cells and len({cell.id for cell in run.cells}) == len(run.cells)


def test_a_chapter_without_a_checked_exercise_has_no_first_stub():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    with pytest.raises(ValueError, match="no gated solution"):
        handouts.with_first_stub(nb)


def bound_names(source: str) -> set[str]:
    """The names a cell's code binds at its top level: functions, classes, assignments, imports."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: a cell that binds nothing we track
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        else:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            names |= {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def used_names(source: str) -> set[str]:
    """The names a cell's code reads."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_nothing_after_a_solution_uses_what_only_the_solution_defines(path: Path):
    """In a handout a solution is a stub, so no later cell but its checker call may use what the solution binds.

    What the stub keeps (its functions, which raise, and its imports) and what an earlier cell already bound
    are not the solution's own; a name bound again by a later cell is that cell's from then on.
    """
    nb = book.read(path)
    problems = []
    for gate in found_exercises.gates(nb):
        before = set().union(*(bound_names(c.source) for c in nb.cells[: gate.start] if c.cell_type == "code"))
        solution = "\n\n".join(nb.cells[i].source for i in gate.inside if nb.cells[i].cell_type == "code")
        only_solution = bound_names(solution) - bound_names(stubs.stub(solution, gate.label)) - before
        for index in range(gate.end + 2, len(nb.cells)):
            cell = nb.cells[index]
            if cell.cell_type != "code" or index in gate.inside:
                continue
            if clash := used_names(cell.source) & only_solution:
                problems.append(f"cell {index} uses {sorted(clash)} from the solution of {gate.label}")
            only_solution -= bound_names(cell.source)
    assert not problems, f"{path.name}: a handout would stop here: {problems}"


# --- the bulk grader -------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.usefixtures("working_sandbox")
def test_the_grader_tabulates_a_right_and_a_wrong_submission(tmp_path: Path):
    """The command line, as `make grade` runs it; the cheats and bad files are in tests/test_grading.py."""
    grades = tmp_path / "grades.csv"
    specs = str(MINIBOOK / "specs")
    out = tool(
        "tools.grade_submissions", str(FIXTURES / "submissions"), "--out", str(grades), "--jobs", "2",
        "--book", str(MINIBOOK), "--specs", specs, "--chapter", "1",
    )  # fmt: skip
    rows = [(r["student"], r["exercise"], r["verdict"], r["message"]) for r in csv.DictReader(grades.open())]
    assert [row[:3] for row in rows] == [
        ("alice", "ex-1-1", "PASSED"),
        ("alice", "ex-1-3", "PASSED"),
        # bob's saved notebook shows a PASSED that he never earned: only the grader's own verdict counts
        ("bob", "ex-1-1", "NOT YET"),
        ("bob", "ex-1-3", "NOT YET"),
    ]
    assert rows[2][3] == "on one of the grader's calls: one past the last seat: look at where the numbering starts."
    assert "not written yet" in rows[3][3]
    assert out.stdout.splitlines()[0] == "grading chapter 1 (01_counting.ipynb): ex-1-1, ex-1-3"
    assert "alice (alice.ipynb, chapter 1): 2 of 2 passed" in out.stdout
    assert "bob (bob.ipynb, chapter 1): 0 of 2 passed" in out.stdout


def test_saved_chapters_keep_a_progress_bars_last_state_only():
    from sphinx_ext.carriage_returns import resolve_carriage_returns
    from tools.execute_chapters import tidy_outputs

    assert resolve_carriage_returns("run:  0%\rrun: 50%\rrun: 100%\ndone\n") == "run: 100%\ndone\n"
    assert resolve_carriage_returns("a long line\rshort") == "shortg line"
    cell = nbformat.v4.new_code_cell("train()", metadata={"execution": {"iopub.status.busy": "then"}})
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="bar 10%"),
        nbformat.v4.new_output("stream", name="stdout", text="\rbar 100%\n"),
        nbformat.v4.new_output("stream", name="stderr", text="warned\n"),
    ]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    tidy_outputs(notebook)
    assert [(o.name, o.text) for o in cell.outputs] == [("stdout", "bar 100%\n"), ("stderr", "warned\n")]
    assert "execution" not in cell.metadata
