"""Write the handout notebooks, ``student/notebooks/*.ipynb``, and the same in ``student/handouts.zip``.

Each chapter notebook without its solutions (:func:`tools.stubs.student_notebook`) and without the hidden
assertions that state answers (:func:`without_answers`): every gated code
solution is a stub that keeps its functions' signatures and docstrings, holds ``# YOUR CODE HERE`` and raises
``NotImplementedError``; text solutions are cut out; exercises are plain markdown (Jupyter and Colab do not
render MyST directives); every output is cleared. Each handout runs top to bottom as it is: its checkers
report NOT YET until the student writes the stubs. Hand them out, upload them to a learning platform, or
open them in Colab (File, then Upload notebook).

    python -m tools.handouts [--root .] [--out student]

:func:`with_first_stub` lets one run of a chapter also be its handout's run up to the first exercise (the
tests run each chapter once, and check both with that run).
"""

from __future__ import annotations

import argparse
import ast
import copy
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools.book import ROOT, chapters, read
from tools.exercises import checker_called, checkers, gates
from tools.stubs import student_notebook

#: Run around the handout's cells inside a chapter's run: whatever the checker of a stub draws from the
#: global random generators, the chapter's later cells draw exactly what they draw in a run without it.
SAVE_RANDOM = """\
import random as _random, numpy as _numpy, torch as _torch
_random_states = (_random.getstate(), _numpy.random.get_state(), _torch.random.get_rng_state(),
                  _torch.cuda.get_rng_state_all() if _torch.cuda.is_available() else None)"""
RESTORE_RANDOM = """\
_random.setstate(_random_states[0]); _numpy.random.set_state(_random_states[1])
_torch.random.set_rng_state(_random_states[2])
if _random_states[3] is not None:
    _torch.cuda.set_rng_state_all(_random_states[3])
del _random, _numpy, _torch, _random_states"""


def _names(tree: ast.AST, context: type) -> set[str]:
    """The names ``tree`` binds (``ast.Store``) or reads (``ast.Load``)."""
    found = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, context)}
    if context is ast.Store:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(node.name)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                found |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return found


#: Tags of the cells the site never shows (or shows folded) and Jupyter and Colab show: where tests hide.
HIDDEN_TAGS = ("remove-cell", "remove-input", "hide-cell", "hide-input", "hide-output")
#: The tag of a chapter's set-up cell: hidden on the site, kept in every handout (it installs the library).
SETUP_TAG = "setup"
#: The tag of the "Open in Colab" badge: it opens the repository's full chapter, so no handout keeps it.
BADGE_TAG = "colab-badge"


def is_test(node: ast.AST) -> bool:
    """Whether ``node`` holds test code: an ``assert``, a call of an ``assert…`` function (``assert_close``,
    ``torch.testing.…``), a ``raise AssertionError``."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Assert):
            return True
        if isinstance(inner, ast.Call):
            name = ast.unparse(inner.func)
            if name.split(".")[-1].startswith("assert") or ".testing." in f".{name}.":
                return True
        if isinstance(inner, ast.Raise) and inner.exc is not None and "AssertionError" in ast.unparse(inner.exc):
            return True
    return False


def without_answers(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` without its hidden tests, the answers that the chapters' hidden cells check, and its Colab badge.

    The site never shows a ``remove-cell`` cell, but Jupyter and Colab show every cell of a handout, and a
    test under an exercise states its answer. In a hidden code cell (:data:`HIDDEN_TAGS`) that holds test
    code (:func:`is_test`), every top-level statement holding test code goes; the rest stays only where a
    later cell reads a name it binds (without its comments), and the cell goes entirely otherwise. The
    set-up cell (tag ``setup``) always stays; the Colab badge (tag ``colab-badge``) always goes: it opens the
    repository's full chapter, solutions and tests included.
    """
    nb = copy.deepcopy(nb)
    nb.cells = [cell for cell in nb.cells if BADGE_TAG not in cell.metadata.get("tags", [])]
    trees = []
    for cell in nb.cells:
        try:
            trees.append(ast.parse(cell.source) if cell.cell_type == "code" else None)
        except SyntaxError:  # IPython magics: a cell that neither tests nor binds what we track
            trees.append(None)
    cells = []
    for index, (cell, tree) in enumerate(zip(nb.cells, trees, strict=True)):
        tags = cell.metadata.get("tags", [])
        hidden = SETUP_TAG not in tags and any(tag in HIDDEN_TAGS for tag in tags)
        if not hidden or tree is None or not is_test(tree):
            cells.append(cell)
            continue
        later = set().union(*(_names(t, ast.Load) for t in trees[index + 1 :] if t is not None))
        kept = [node for node in tree.body if not is_test(node)]
        if kept and set().union(*(_names(node, ast.Store) for node in kept)) & later:
            cell.source = "\n".join(ast.unparse(node) for node in kept)
            cells.append(cell)
    nb.cells = cells
    return nb


def handout(chapter: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The handout of a chapter: its student notebook (stubs, no solutions, no outputs) without answers."""
    return without_answers(student_notebook(chapter, handout=True))


def write(root: Path, out: Path) -> list[Path]:
    """Write the handouts of the book at ``root`` into ``out/notebooks`` and ``out/handouts.zip``."""
    folder = out / "notebooks"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    written = []
    for path in chapters(root):
        target = folder / path.name
        nbformat.write(handout(read(path)), target)
        written.append(target)
    with zipfile.ZipFile(out / "handouts.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for target in written:
            archive.write(target, target.name)
    return written


@dataclass(frozen=True)
class FirstStub:
    """Where the handout's first exercise sits in a chapter's run made by :func:`with_first_stub`.

    ``label`` and ``checker``: the first coding exercise with a checker; ``cells``: the indices, in that run,
    of the cells taken from the handout (its stub cells, then its checker call); ``inserted``: the indices of
    every cell added to the chapter (those, and the two around them that keep the random state).
    """

    label: str
    checker: str
    cells: range
    inserted: range


def with_first_stub(chapter: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, FirstStub]:
    """A copy of ``chapter`` that also runs its handout up to the handout's first checker call.

    The handout (:func:`~tools.stubs.student_notebook`) has the chapter's own code cells up to its first
    stub; from there it runs the stub cells and then the checker, which must say NOT YET. The copy runs the
    chapter's cells up to its first gated solution, then those stub cells and that checker call (between
    :data:`SAVE_RANDOM` and :data:`RESTORE_RANDOM`), then the rest of the chapter. Raises ``ValueError`` if
    the handout's code before its first stub is not the chapter's, or the chapter has no checked exercise.
    """
    found = [gate for gate in gates(chapter) if checkers(chapter, [gate])[gate.label]]
    if not found:
        raise ValueError("the chapter has no gated solution followed by a checker call.")
    gate = found[0]
    checker = checkers(chapter, [gate])[gate.label]
    handout = student_notebook(chapter, handout=True)
    calls = [i for i, cell in enumerate(handout.cells) if cell.cell_type == "code" and checker_called(cell.source)]
    code = [i for i, cell in enumerate(handout.cells[: calls[0] + 1]) if cell.cell_type == "code"]
    before = [cell.source for cell in chapter.cells[: gate.start] if cell.cell_type == "code"]
    handout_before = [handout.cells[i].source for i in code[: len(before)]]
    if handout_before != before:
        raise ValueError(f"the handout's code before its first stub ({gate.label}) is not the chapter's code.")
    taken = [copy.deepcopy(handout.cells[i]) for i in code[len(before) :]]
    if checker_called(taken[-1].source) != checker or len(taken) < 2:
        raise ValueError(f"the handout does not run a stub and then {checker} for {gate.label}.")
    run = copy.deepcopy(chapter)
    added = [nbformat.v4.new_code_cell(SAVE_RANDOM), *taken, nbformat.v4.new_code_cell(RESTORE_RANDOM)]
    for number, cell in enumerate(added):
        cell.id = f"handout-{number}"  # ids stay unique: the chapter's own are never of this form
    run.cells[gate.start : gate.start] = added
    start = gate.start
    return run, FirstStub(
        gate.label, checker, range(start + 1, start + 1 + len(taken)), range(start, start + len(added))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's root, with _toc.yml")
    parser.add_argument("--out", type=Path, help="where notebooks/ and handouts.zip go (default: ROOT/student)")
    args = parser.parse_args()
    out = args.out or args.root / "student"
    written = write(args.root, out)
    print(f"wrote {len(written)} handouts into {out / 'notebooks'} and {out / 'handouts.zip'}")


if __name__ == "__main__":
    main()
