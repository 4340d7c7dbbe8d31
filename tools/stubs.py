"""The student version of a chapter notebook: solutions out, stubs in.

:func:`student_notebook` keeps everything but the solutions: each gated solution becomes a "your turn" note
and a stub per code cell that keeps the signature and docstring of every function and raises
``NotImplementedError``; text solutions are cut out.
"""

from __future__ import annotations

import ast
import copy
import re

import nbformat

from tools.exercises import checkers, exercise_number, gates
from tools.myst import Directive, directives

#: The line a stub leaves where the student's code goes.
STUB_MARK = "# YOUR CODE HERE"


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
    """``text`` with solutions cut out, gates turned into "your turn" notes, and (handouts) exercises as markdown.

    Text before a ``solution-end`` in the same cell is the end of the gated solution (its prose answer): cut out.
    """
    pieces, position, opened = [], 0, 0
    for directive in directives(text):
        pieces.append(text[position : directive.start])
        if directive.name == "solution-start":
            pieces.append(_your_turn(directive.argument))
            opened = len(pieces)
        elif directive.name == "solution-end":
            del pieces[opened:]  # the solution's own prose, written in the cell that closes it
            opened = 0
        elif directive.name == "exercise" and handout:
            pieces.append(_exercise_as_markdown(directive))
        elif directive.name != "solution":
            pieces.append(text[directive.start : directive.end])
        position = directive.end
    pieces.append(text[position:])
    return re.sub(r"\n{3,}", "\n\n", "".join(pieces)).strip()


def student_notebook(nb: nbformat.NotebookNode, handout: bool) -> nbformat.NotebookNode:
    """A copy of a chapter notebook without its solutions.

    Gated code solutions become a "your turn" note and stubs (:func:`stub`), text solutions are cut out, and
    the checker cells lose their outputs (a stub cannot pass). A ``handout`` loses every output, and its
    exercises become plain markdown. ``metadata.transformerland.checkers`` (beside the chapter's facts) maps
    each coding exercise to its checker, so that the bulk grader knows which verdicts to expect and where.
    """
    nb = copy.deepcopy(nb)
    found = gates(nb)
    found_checkers = checkers(nb, found)
    labels = {index: gate.label for gate in found for index in gate.inside}
    checks = {gate.end + 1 for gate in found}
    cells = []
    for index, cell in enumerate(nb.cells):
        if index in labels:
            hidden = "remove-cell" in cell.metadata.get("tags", [])  # the solution's own checks: no stub for them
            if cell.cell_type == "code" and not hidden:  # markdown between the gates is part of the solution
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
    facts = nb.metadata.setdefault("transformerland", {})
    facts["checkers"] = {gate.label: found_checkers.get(gate.label) for gate in found}
    return nb
