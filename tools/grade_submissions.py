"""Grade a folder of submitted notebooks, each in a sandbox of its own; write one CSV row per student and exercise.

For each ``*.ipynb`` under FOLDER:

1. the chapter it answers is found (``--chapter``; else the chapter whose file name it has; else the chapter
   whose checkers its code calls most), and the exercises expected are read from the **instructor's** copy of
   that chapter (``--book``), never from the submission;
2. its code cells run in a bubblewrap sandbox (:mod:`tools.sandbox`): no network, a read-only Python and
   library, nothing else of this machine, limits on time, memory and output; then, still inside, each
   exercise's function is called on **hidden** cases (its spec's cases for a seed drawn for this run) and the
   answers come back as data;
3. here, in the grader's own process, each exercise's declaration (:mod:`transformerland.exercises.exercise`) compares
   the answers with the reference computed here and decides. Printed text never counts.

The CSV has one row per submission and expected exercise, whatever happened to the submission:

    student, notebook, exercise, verdict, message, hint, points

``verdict`` is ``PASSED``, ``NOT YET`` (the message says what is wrong, the hint how to fix it) or ``ERROR``
(the notebook could not be read, timed out, ran out of memory, or the kernel died: the message says which).
Rows are appended to ``OUT.partial`` as each submission is graded (a crash keeps what was done), and OUT is
written in one atomic step at the end. A field starting with ``=``, ``+``, ``-`` or ``@`` gets a leading
apostrophe, so that a spreadsheet shows it as text instead of running it as a formula.

The student is the first folder under FOLDER (``FOLDER/alice/ch2.ipynb``), or, for a notebook directly in
FOLDER, its file name (``FOLDER/alice.ipynb``).

    python -m tools.grade_submissions FOLDER [--out grades.csv] [--chapter N] [--timeout 900] [--jobs 1]
"""

from __future__ import annotations

import argparse
import codecs
import csv
import importlib
import json
import os
import secrets
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformerland.exercises.codec import Answer, encode, from_bytes, to_bytes
from transformerland.exercises.exercise import Exercise

from tools import book
from tools.exercises import checker_called, checkers, gates
from tools.sandbox import NoSandbox, command, run_job

COLUMNS = ["student", "notebook", "exercise", "verdict", "message", "hint", "points"]
#: The largest notebook read (bytes): a bigger file is an ERROR row, not a grader out of memory.
SIZE_LIMIT = 50 * 2**20
#: Characters a spreadsheet reads as the start of a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class Unreadable(ValueError):
    """A submission that is not a notebook this grader can read; the message says why."""


@dataclass(frozen=True)
class Chapter:
    """A chapter of the instructor's book: its number, file name, and expected exercises with their specs."""

    number: int
    path: Path
    expected: dict[str, Exercise | None]


# --- the instructor's side: chapters and specs ----------------------------------------------------------


def load_specs(package: str, number: int) -> dict[str, Exercise]:
    """The specs of chapter ``number``: ``<package>.ch<number>.EXERCISES`` by label (none if no such module).

    ``package`` is a dotted name (``transformerland.exercises``) or a folder holding ``ch<N>.py`` modules.
    """
    if os.sep in package or Path(package).is_dir():
        folder = Path(package).resolve()
        sys.path.insert(0, str(folder.parent))
        package = folder.name
    try:
        module = importlib.import_module(f"{package}.ch{number}")
    except ModuleNotFoundError:
        return {}
    return {spec.label: spec for spec in getattr(module, "EXERCISES", [])}


def instructor_chapter(path: Path, package: str) -> Chapter:
    """The instructor's chapter at ``path``: its coding exercises (those its gates check) and their specs."""
    nb = book.read(path)
    number = book.chapter_number(path)
    specs = load_specs(package, number)
    labels = [label for label, checker in checkers(nb, gates(nb)).items() if checker]
    return Chapter(number, path, {label: specs.get(label) for label in labels})


def instructor_chapters(root: Path, package: str) -> list[Chapter]:
    """Every chapter of the book at ``root`` (:func:`instructor_chapter`)."""
    return [instructor_chapter(path, package) for path in book.chapters(root)]


# --- the submission's side: reading it, finding its chapter ---------------------------------------------


def code_cells(path: Path) -> list[str]:
    """The sources of a notebook's code cells; raises :class:`Unreadable` saying why it cannot be read."""
    raw = path.read_bytes()
    if not raw.strip():
        raise Unreadable("the file is empty")
    if len(raw) > SIZE_LIMIT:
        raise Unreadable(f"the file is larger than {SIZE_LIMIT // 2**20} MB")
    boms = {codecs.BOM_UTF8: "utf-8-sig", codecs.BOM_UTF16_LE: "utf-16", codecs.BOM_UTF16_BE: "utf-16"}
    encoding = next((name for bom, name in boms.items() if raw.startswith(bom)), "utf-8")
    try:
        data = json.loads(raw.decode(encoding))
    except (UnicodeDecodeError, ValueError) as error:
        raise Unreadable(f"the file is not a notebook (not JSON: {str(error)[:80]})") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise Unreadable("the file is not a notebook (it has no list of cells)")
    sources = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            sources.append(source if isinstance(source, str) else "")
    return sources


def chapter_of(path: Path, cells: list[str] | None, chapters: list[Chapter]) -> Chapter | None:
    """The chapter a submission answers: by its file name, else by the checkers its code calls most."""
    for chapter in chapters:
        if path.stem == chapter.path.stem or path.name.startswith(f"{chapter.number:02d}_"):
            return chapter
    if not cells:
        return chapters[0] if len(chapters) == 1 else None
    called = [checker_called(source) for source in cells]
    scores = {
        chapter.number: sum(
            name in {spec.checker for spec in chapter.expected.values() if spec} for name in called if name
        )
        for chapter in chapters
    }
    best = max(scores.values(), default=0)
    winners = [chapter for chapter in chapters if scores[chapter.number] == best]
    return winners[0] if best > 0 and len(winners) == 1 else (chapters[0] if len(chapters) == 1 else None)


# --- one submission ---------------------------------------------------------------------------------------


def job(chapter: Chapter, cells: list[str], seed: int, cell_timeout: int) -> dict[str, Any]:
    """What the sandbox is sent: the cells, and for each exercise its function and hidden calls (inputs only)."""
    tensors: dict[str, Any] = {}
    exercises = []
    for label, spec in chapter.expected.items():
        if spec is None:
            continue
        calls = [
            {
                "args": encode(c.args, tensors),
                "kwargs": encode(dict(c.kwargs), tensors),
                "feeds": encode(c.feeds, tensors),
            }
            for c in spec.cases(seed)
        ]
        exercises.append({"label": label, "function": spec.function, "cases": calls})
    return {"cells": cells, "cell_timeout": cell_timeout, "exercises": exercises, "tensors": to_bytes(tensors)}


def decide(spec: Exercise | None, entry: dict[str, Any] | None, tensors: dict, seed: int) -> tuple[str, str, str]:
    """The verdict, message and hint for one exercise, from what came back from the sandbox."""
    if spec is None:
        return "ERROR", "no spec for this exercise in the grader's library", ""
    if not entry or not entry.get("found"):
        return (
            "NOT YET",
            f"no {spec.function} was defined after running the notebook",
            f"keep the name {spec.function} from the handout, and make sure its cell runs without an error.",
        )
    if entry.get("timeout"):
        return "ERROR", f"{spec.function} ran too long on the grader's cases and was stopped", ""
    try:
        calls = entry.get("calls", [])
        answers = [Answer.from_data(call, tensors) for call in calls]
        result = spec.grade(answers, seed)
    except Exception as error:  # odd data from the sandbox costs this exercise its verdict, not the whole file
        return "ERROR", f"the answers came back garbled ({type(error).__name__})", ""
    return ("PASSED" if result else "NOT YET"), result.message, result.hint


def student_of(path: Path, folder: Path) -> str:
    """The student: the first folder under ``folder``, or the notebook's own name."""
    relative = path.relative_to(folder)
    return relative.parts[0] if len(relative.parts) > 1 else path.stem


def grade(
    path: Path,
    folder: Path,
    chapters: list[Chapter],
    *,
    seed: int,
    timeout: int = 900,
    cell_timeout: int = 120,
    memory_mb: int = 8192,
    unsafe: bool = False,
    forced: Chapter | None = None,
    threads: int | None = None,
) -> list[dict[str, str]]:
    """Grade one submission: one row per exercise its chapter expects (one row if its chapter is unknown).

    ``threads``: torch's threads in the sandbox (default: every core, for one submission at a time).
    """
    student, notebook = student_of(path, folder), str(path.relative_to(folder))
    problem, cells = "", None
    try:
        cells = code_cells(path)
    except (Unreadable, OSError) as error:
        problem = str(error)
    chapter = forced or chapter_of(path, cells, chapters)
    if chapter is None:
        why = problem or "could not tell which chapter it answers: name it like the chapter or pass --chapter"
        return [_row(student, notebook, "", "ERROR", why, "", 0)]
    outcome = None
    if not problem:
        try:
            sent = job(chapter, cells or [], seed, cell_timeout)
        except Exception as error:  # a fault in the instructor's specs: every row says so, and the batch goes on
            problem = f"the grader could not make this chapter's cases ({type(error).__name__}: {error})"
        else:
            outcome = run_job(sent, timeout, memory_mb, unsafe, threads or os.cpu_count() or 1)
            problem = outcome.problem
    result = outcome.result if outcome is not None else None
    tensors: dict = {}
    if result is not None:
        try:
            tensors = from_bytes(result.get("tensors", ""))
        except Exception:  # safetensors refuses what it did not write: the sandbox's answers are unusable
            problem, result = "its answers came back garbled (not safetensors)", None
    rows = []
    for label, spec in chapter.expected.items():
        if problem:
            verdict, message, hint = "ERROR", problem, ""
        else:
            entries = result.get("exercises", {}) if isinstance(result, dict) else {}
            verdict, message, hint = decide(
                spec, entries.get(label) if isinstance(entries, dict) else None, tensors, seed
            )
        points = spec.points if spec is not None and verdict == "PASSED" else 0
        rows.append(_row(student, notebook, label, verdict, message, hint, points))
    return rows


def _row(*fields: Any) -> dict[str, str]:
    shown = [f"{field:g}" if isinstance(field, float) else str(field) for field in fields]
    return dict(zip(COLUMNS, [safe(field) for field in shown], strict=True))


def safe(field: str) -> str:
    """``field`` as a spreadsheet shows it as text: a leading apostrophe before a formula's first character."""
    return "'" + field if field.startswith(FORMULA_START) else field


# --- the whole folder -------------------------------------------------------------------------------------


def submissions(folder: Path) -> list[Path]:
    """Every notebook under ``folder``, in order (checkpoints skipped)."""
    paths = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and p.is_file())
    if not paths:
        raise ValueError(f"no notebooks (*.ipynb) under {folder}: point FOLDER at the submissions.")
    return paths


def write_csv(rows: Iterable[dict[str, str]], out: Path) -> None:
    """Write ``rows`` to ``out`` in one atomic step (a temporary file beside it, then renamed)."""
    handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    with os.fdopen(handle, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(temporary, out)


def grade_folder(folder: Path, out: Path, chapters: list[Chapter], *, jobs: int = 1, **options: Any) -> list[dict]:
    """Grade every submission under ``folder``, ``jobs`` at a time; rows go to ``out.partial`` as they come."""
    paths = submissions(folder)
    partial = out.with_name(out.name + ".partial")
    done: dict[Path, list[dict[str, str]]] = {}
    with partial.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        with ThreadPoolExecutor(max(1, jobs)) as pool:
            threads = max(1, (os.cpu_count() or 1) // max(1, jobs))  # the cores shared by the submissions at once
            futures = {pool.submit(grade, path, folder, chapters, threads=threads, **options): path for path in paths}
            for future in as_completed(futures):
                try:
                    rows = future.result()
                except Exception as error:  # a bug of the grader's on one file costs that file only
                    path = futures[future]
                    rows = [
                        _row(student_of(path, folder), path.relative_to(folder), "", "ERROR", f"grader: {error}", "", 0)
                    ]
                done[futures[future]] = rows
                writer.writerows(rows)
                file.flush()
    rows = [row for path in paths for row in done[path]]
    write_csv(rows, out)
    partial.unlink()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="the folder of submitted notebooks")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="the CSV to write (default: grades.csv)")
    parser.add_argument("--book", type=Path, default=book.ROOT, help="the instructor's book (default: here)")
    parser.add_argument("--specs", default="transformerland.exercises", help="where the chapters' specs are")
    parser.add_argument("--chapter", type=int, help="the chapter every submission answers (default: found per file)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds a whole submission may run (default: 900)")
    parser.add_argument("--cell-timeout", type=int, default=120, help="seconds one cell may run (default: 120)")
    parser.add_argument("--memory", type=int, default=8192, help="MB of memory a submission may use (default: 8192)")
    parser.add_argument("--jobs", type=int, default=1, help="submissions graded at the same time (default: 1)")
    parser.add_argument("--seed", type=int, help="the seed of the hidden cases (default: drawn afresh, kept secret)")
    parser.add_argument("--unsafe", action="store_true", help="run without a sandbox (trusted submissions only)")
    args = parser.parse_args()
    if not args.unsafe:
        try:
            command()
        except NoSandbox as error:
            sys.exit(str(error))
    chapters = instructor_chapters(args.book, args.specs)
    forced = next((c for c in chapters if c.number == args.chapter), None)
    if args.chapter is not None and forced is None:
        sys.exit(f"--chapter {args.chapter}: the book at {args.book} has no such chapter.")
    seed = args.seed if args.seed is not None else 1 + secrets.randbelow(2**31)
    rows = grade_folder(
        args.folder,
        args.out,
        chapters,
        jobs=args.jobs,
        seed=seed,
        timeout=args.timeout,
        cell_timeout=args.cell_timeout,
        memory_mb=args.memory,
        unsafe=args.unsafe,
        forced=forced,
    )
    for student in dict.fromkeys(row["student"] for row in rows):
        mine = [row for row in rows if row["student"] == student]
        passed = sum(row["verdict"] == "PASSED" for row in mine)
        print(f"{student}: {passed} of {len(mine)} passed")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
