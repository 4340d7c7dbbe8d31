"""Grade a folder of submitted notebooks: run each one, collect its checkers' verdicts, write them as CSV.

Every ``*.ipynb`` under FOLDER is executed with nbclient in an empty temporary folder, every cell in order,
with errors allowed so that one broken cell does not hide the verdicts of the others; a cell that runs longer
than ``--timeout`` seconds is interrupted. The verdict lines that the checkers print in this run
(``ex-2-1 · PASSED · …`` or ``ex-2-1 · NOT YET · …``, matched by ``VERDICT_PATTERN``) are what counts; outputs
saved in the submission are ignored. The CSV has one row per submission and exercise:

    student, notebook, exercise, verdict, message, hint

``verdict`` is ``PASSED``, ``NOT YET``, or ``NO VERDICT`` for a coding exercise of the handout (the handout's
metadata names each one's checker) that printed none; the message says why: no cell calls the checker any
more, or the cell that calls it failed (an error, or the time limit), or an earlier cell did.

The student is the first folder under FOLDER (``FOLDER/alice/ch2.ipynb``), or, for a notebook directly in
FOLDER, its file name (``FOLDER/alice.ipynb``).

Submissions are code that someone else wrote: grade them in a container or a throwaway machine.

    python -m tools.grade_submissions FOLDER [--out grades.csv] [--timeout 120] [--jobs 2]
"""

from __future__ import annotations

import argparse
import csv
import re
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from pathlib import Path

import nbformat
from nbclient.exceptions import DeadKernelError
from transformerland.exercises import VERDICT_PATTERN

from tools.exercises import checker_called
from tools.run_notebook import run_in_empty_folder

COLUMNS = ["student", "notebook", "exercise", "verdict", "message", "hint"]
#: The hint line a checker prints under a NOT YET verdict.
HINT = re.compile(r"\n +Hint: (?P<hint>.*)")


def verdicts(nb: nbformat.NotebookNode) -> dict[str, tuple[str, str, str]]:
    """The last verdict each exercise printed in an executed notebook: label → (verdict, message, hint)."""
    found = {}
    for cell in nb.cells:
        text = "".join(
            output.get("text", "") for output in cell.get("outputs", []) if output.get("output_type") == "stream"
        )
        for match in VERDICT_PATTERN.finditer(text):
            hint = HINT.match(text, match.end())
            found[match["exercise"]] = (match["verdict"], match["message"], hint["hint"] if hint else "")
    return found


def _error(output: dict, timeout: int) -> str:
    """An error output in words."""
    if output["ename"] == "KeyboardInterrupt":  # how nbclient stops a cell at the time limit
        return f"ran longer than {timeout} s and was stopped"
    return f"stopped with {output['ename']}: {output['evalue']}"


def why_no_verdict(nb: nbformat.NotebookNode, checker: str | None, timeout: int) -> str:
    """Why an executed notebook printed no verdict for an exercise whose cells call ``checker``."""
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    errors = [
        (number, output)
        for number, cell in enumerate(code, start=1)
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    calls = [number for number, cell in enumerate(code, start=1) if checker and checker_called(cell.source) == checker]
    if checker and not calls:
        return f"no cell calls {checker}: was it deleted?"
    failed = [(number, output) for number, output in errors if number in calls] or errors
    if not failed:
        return "no checker printed a verdict"
    number, output = failed[0]
    return f"code cell {number} {_error(output, timeout)}"


def run(nb: nbformat.NotebookNode, timeout: int) -> str:
    """Execute ``nb`` in place, in an empty temporary folder; return why it stopped early, or ``""``."""
    try:
        run_in_empty_folder(nb, timeout, allow_errors=True, interrupt_on_timeout=True, kernel_name="python3")
    except DeadKernelError:
        return "the kernel died (out of memory, or the code ended the process)"
    return ""


def grade(path: Path, folder: Path, timeout: int) -> list[dict[str, str]]:
    """Execute one submission; one row per exercise it should answer or answered."""
    nb = nbformat.read(path, as_version=4)
    expected = nb.metadata.get("transformerland", {}).get("checkers", {})
    died = run(nb, timeout)
    found = verdicts(nb)
    relative = path.relative_to(folder)
    student = relative.parts[0] if len(relative.parts) > 1 else path.stem
    rows = []
    for label in [*expected, *(label for label in found if label not in expected)] or [""]:
        if label in found:
            verdict, message, hint = found[label]
        else:
            verdict, message, hint = "NO VERDICT", died or why_no_verdict(nb, expected.get(label), timeout), ""
        rows.append(dict(zip(COLUMNS, [student, str(relative), label, verdict, message, hint], strict=True)))
    return rows


def grade_folder(folder: Path, timeout: int, jobs: int) -> list[dict[str, str]]:
    """Grade every notebook under ``folder``, ``jobs`` at a time; the rows in the order of the paths."""
    paths = sorted(path for path in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in path.parts)
    if not paths:
        raise ValueError(f"no notebooks (*.ipynb) under {folder}: point FOLDER at the submissions.")
    with ProcessPoolExecutor(jobs) as pool:
        return [row for rows in pool.map(grade, paths, repeat(folder), repeat(timeout)) for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="the folder of submitted notebooks")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="the CSV to write (default: grades.csv)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds a cell may run (default: 120)")
    parser.add_argument("--jobs", type=int, default=1, help="notebooks run at the same time (default: 1)")
    args = parser.parse_args()
    rows = grade_folder(args.folder, args.timeout, args.jobs)
    with args.out.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    for student in dict.fromkeys(row["student"] for row in rows):
        mine = [row for row in rows if row["student"] == student]
        passed = sum(row["verdict"] == "PASSED" for row in mine)
        print(f"{student}: {passed} of {len(mine)} passed")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
