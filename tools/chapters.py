"""Reading the chapter notebooks the way CONTRIBUTING.md writes them, and writing their student version.

An exercise is a MyST ``exercise`` directive labelled ``ex-<chapter>-<n>`` whose body opens with the meta
line (difficulty, objective, suits). A text solution is a ``solution`` directive; a code solution is gated:
a markdown cell with ``solution-start``, the solution's code cells (tag ``solution``), a markdown cell with
``solution-end``, then a visible cell that calls the exercise's checker (``check_…``).

The student version of a notebook (:func:`student_notebook`) keeps everything but the solutions: each gated
solution becomes a "your turn" note and a stub per code cell that keeps the signature and docstring of
every function and raises ``NotImplementedError``; text solutions are cut out.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

#: The repository root: every tool's default ``--root``.
ROOT = Path(__file__).resolve().parents[1]
#: The line a stub leaves where the student's code goes.
STUB_MARK = "# YOUR CODE HERE"
META_LINE = re.compile(
    r"^\*\*Difficulty:\*\* (?P<difficulty>★☆☆|★★☆|★★★) · \*\*Objective:\*\* (?P<objective>.+) · "
    r"\*\*Suits:\*\* (?P<suits>homework|lab|discussion)$"
)
LABEL = re.compile(r"ex-(?P<chapter>\d+)-(?P<n>\d+)")
_OPENING = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z][\w-]*)\}[ \t]*(?P<argument>.*)$", re.MULTILINE)
_OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")


@dataclass(frozen=True)
class Directive:
    """One MyST directive in a markdown text: ``{name} argument``, its ``:options:`` and its body.

    ``start`` and ``end`` are offsets into the text: the opening fence and just past the closing one.
    """

    name: str
    argument: str
    options: dict[str, str]
    body: str
    start: int
    end: int


def directives(text: str) -> list[Directive]:
    """The top-level directives of a markdown text, in order; nested ones stay inside their parent's body."""
    found = []
    position = 0
    while opening := _OPENING.search(text, position):
        fence = opening["fence"]
        closing = re.compile(rf"^{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE).search(
            text, opening.end()
        )
        body_end, end = (closing.start(), closing.end()) if closing else (len(text), len(text))
        lines = text[opening.end() + 1 : body_end].split("\n")
        options = {}
        while lines and (option := _OPTION.match(lines[0])):
            options[option["key"]] = option["value"].strip()
            lines.pop(0)
        body = "\n".join(lines).strip("\n")
        found.append(Directive(opening["name"], opening["argument"].strip(), options, body, opening.start(), end))
        position = end
    return found


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks that exist, in the order of the numbered parts of ``root/_toc.yml``."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [entry["file"] for part in toc.get("parts", []) if part.get("numbered") for entry in part["chapters"]]
    return [root / f"{file}.ipynb" for file in files if (root / f"{file}.ipynb").exists()]


def chapter_number(path: Path) -> int:
    """The chapter number in a notebook's file name: 2 for ``02_sinusoidal.ipynb``."""
    prefix = path.name.split("_", 1)[0]
    if not prefix.isdigit():
        raise ValueError(f"{path.name}: a chapter's file name starts with its number, like 02_sinusoidal.ipynb.")
    return int(prefix)


def read(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path`` (nbformat 4)."""
    return nbformat.read(path, as_version=4)


def title(nb: nbformat.NotebookNode) -> str:
    """The chapter's title: the ``# Title`` heading of its first cell."""
    first = nb.cells[0].source.split("\n", 1)[0] if nb.cells else ""
    if not first.startswith("# "):
        raise ValueError("a chapter's first cell starts with its title, '# Title'.")
    return first[2:].strip()


def exercise_number(label: str) -> str:
    """The number the site shows for an exercise label: ``2.1`` for ``ex-2-1``."""
    match = LABEL.fullmatch(label)
    if match is None:
        raise ValueError(f"exercise labels look like 'ex-2-1', got {label!r}.")
    return f"{match['chapter']}.{match['n']}"


@dataclass(frozen=True)
class Exercise:
    """One exercise: its label, title and meta line, and the checker its gated solution is followed by."""

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


def _checkers(nb: nbformat.NotebookNode, found: list[Gate]) -> dict[str, str | None]:
    """For each gated solution, the checker that the cell right after its gate calls (None when it calls none)."""
    after = [nb.cells[gate.end + 1] if gate.end + 1 < len(nb.cells) else None for gate in found]
    return {
        gate.label: checker_called(cell.source) if cell is not None and cell.cell_type == "code" else None
        for gate, cell in zip(found, after, strict=True)
    }


def exercises(nb: nbformat.NotebookNode) -> list[Exercise]:
    """The exercises of a notebook, in order, read from their directives and meta lines."""
    checkers = _checkers(nb, gates(nb))
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
                Exercise(
                    label,
                    directive.argument,
                    meta["difficulty"],
                    meta["objective"],
                    meta["suits"],
                    checkers.get(label),
                )
            )
    return found


def _lines(source: str, first: int, last: int) -> str:
    """Lines ``first`` … ``last`` (1-based, inclusive) of ``source``."""
    return "\n".join(source.split("\n")[first - 1 : last])


def _first_line(node: ast.stmt) -> int:
    """The line a statement starts on, its decorators included."""
    return min([node.lineno] + [decorator.lineno for decorator in getattr(node, "decorator_list", [])])


def _stub_function(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef, label: str) -> str:
    """A function's decorators, signature and docstring, then ``# YOUR CODE HERE`` and a raise."""
    first, body = _first_line(node), node.body[0]
    if body.lineno == node.lineno:  # a one-line function: `def f(x): return x`
        header = source.split("\n")[node.lineno - 1][: body.col_offset].rstrip()
        header = "\n".join([_lines(source, first, node.lineno - 1), header]).strip("\n")
        indent = " " * (node.col_offset + 4)
    else:
        header = _lines(source, first, _first_line(body) - 1).rstrip()
        indent = " " * body.col_offset
    parts = [header]
    if ast.get_docstring(node, clean=False) is not None:
        parts.append(indent + ast.get_source_segment(source, body))
    parts += [indent + STUB_MARK, f'{indent}raise NotImplementedError("{label}: your code replaces this line.")']
    return "\n".join(parts)


def stub(source: str, label: str) -> str:
    """The stub of a solution cell: its imports, and each function and class with its body left to write.

    Functions keep their decorators, signature and docstring; a class keeps its header and docstring and
    stubs each method. Of the other statements, only the assignments that the stubs' signatures use (a
    constant as a default value) are kept.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ValueError(f"the solution of {label} is not plain Python ({error.msg}, line {error.lineno}).") from None
    pieces: dict[ast.stmt, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            pieces[node] = ast.get_source_segment(source, node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            pieces[node] = _stub_function(source, node, label)
        elif isinstance(node, ast.ClassDef):
            body = node.body[0]
            head = _lines(source, _first_line(node), _first_line(body) - 1).rstrip() + "\n"
            if ast.get_docstring(node, clean=False) is not None:
                head += " " * body.col_offset + ast.get_source_segment(source, body) + "\n\n"
            methods = [m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
            stubs = [_stub_function(source, method, label) for method in methods] or [" " * body.col_offset + "pass"]
            pieces[node] = head + "\n\n".join(stubs)
    used = {name.id for name in ast.walk(ast.parse("\n\n".join(pieces.values()))) if isinstance(name, ast.Name)}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)} & used:
                pieces[node] = ast.get_source_segment(source, node)
    text, after_simple = "", False
    for node in tree.body:
        if node not in pieces:
            continue
        simple = isinstance(node, ast.Import | ast.ImportFrom | ast.Assign | ast.AnnAssign)
        if text:  # imports and constants one to a line; two blank lines around definitions
            text += "\n" if simple and after_simple else "\n\n\n"
        text += pieces[node]
        after_simple = simple
    return text or STUB_MARK


def _your_turn(label: str) -> str:
    return (
        f"**Your turn: Exercise {exercise_number(label)}.** Write your code in place of `{STUB_MARK}` below and "
        "delete the `raise NotImplementedError` line under it; then run the checker in the cell that follows."
    )


def _exercise_as_markdown(directive: Directive) -> str:
    """An exercise directive as plain markdown, which Jupyter and Colab render (they do not render MyST)."""
    label = directive.options.get("label", "")
    heading = f"### Exercise {exercise_number(label)}" + (f": {directive.argument}" if directive.argument else "")
    return f"{heading} ({label})\n\n{directive.body}"


def _rewrite_markdown(text: str, handout: bool) -> str:
    """``text`` with solutions cut out, gates turned into "your turn" notes, and (handouts) exercises as markdown."""
    pieces, position = [], 0
    for directive in directives(text):
        pieces.append(text[position : directive.start])
        if directive.name == "solution-start":
            pieces.append(_your_turn(directive.argument))
        elif directive.name == "exercise" and handout:
            pieces.append(_exercise_as_markdown(directive))
        elif directive.name not in ("solution", "solution-end"):
            pieces.append(text[directive.start : directive.end])
        position = directive.end
    pieces.append(text[position:])
    return re.sub(r"\n{3,}", "\n\n", "".join(pieces)).strip()


def student_notebook(nb: nbformat.NotebookNode, handout: bool) -> nbformat.NotebookNode:
    """A copy of a chapter notebook without its solutions.

    Gated code solutions become a "your turn" note and stubs (:func:`stub`), text solutions are cut out, and
    the checker cells lose their outputs (a stub cannot pass). A ``handout`` loses every output, and its
    exercises become plain markdown. ``metadata.transformerland.checkers`` maps each coding exercise to its
    checker, so that the bulk grader knows which verdicts to expect and where.
    """
    nb = copy.deepcopy(nb)
    found = gates(nb)
    checkers = _checkers(nb, found)
    labels = {index: gate.label for gate in found for index in gate.inside}
    checks = {gate.end + 1 for gate in found}
    cells = []
    for index, cell in enumerate(nb.cells):
        if index in labels:
            if cell.cell_type == "code":  # markdown between the gates is part of the solution: dropped
                cell.source = stub(cell.source, labels[index])
                cell.outputs, cell.execution_count = [], None
                cell.metadata["tags"] = [tag for tag in cell.metadata.get("tags", []) if tag != "solution"]
                cells.append(cell)
            continue
        if cell.cell_type == "markdown":
            cell.source = _rewrite_markdown(cell.source, handout)
            if not cell.source:
                continue
        elif cell.cell_type == "code" and (handout or index in checks):
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    nb.cells = cells
    nb.metadata["transformerland"] = {"checkers": {gate.label: checkers.get(gate.label) for gate in found}}
    return nb
