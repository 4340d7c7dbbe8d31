"""What runs inside a grading sandbox: a submission's code cells, then its functions on the grader's calls.

Started by the grader (:mod:`tools.sandbox`) as ``python -m transformerland.exercises.harness`` inside
bubblewrap, over a grading build of the library that holds no exercise's reference (the chapters' exercise
modules are stubs there, and each withheld function's body is gone). It imports nothing of the exercise
toolkit but :mod:`~transformerland.exercises.codec`.

It reads the job, one JSON message, from standard input and closes it before any of the student's code runs:
the code cells' sources, and for each exercise the name of the student's function and the calls (inputs
only, and ``feeds`` for a class) to make. It runs the cells in order in one IPython namespace (an error in a
cell is kept and the next cell runs; a cell that runs past ``cell_timeout`` seconds is interrupted), then
calls each function on its calls and writes the answers, as data, as one JSON message to the file descriptor
the job names. It decides nothing: the verdicts are the grader's, made in its own process, and the grader's
own wall-clock limit ends the sandbox whatever the code does to its signals.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from .codec import Answer, capture, decode, from_bytes, to_bytes

__all__ = ["CellTimeout", "main", "run_cells"]


class CellTimeout(Exception):
    """A cell (or a function on the grader's calls) ran past its time limit."""


def _stop(signum: int, frame: Any) -> None:
    raise CellTimeout("ran past its time limit")


def run_cells(cells: list[str], timeout: int) -> tuple[dict[str, Any], list[list[Any]]]:
    """Run ``cells`` in one IPython namespace; the namespace, and ``[cell number, error name, message]`` per error."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    errors = []
    for number, source in enumerate(cells, start=1):
        signal.signal(signal.SIGALRM, _stop)
        signal.alarm(timeout)
        try:
            result = shell.run_cell(source, store_history=False, silent=True)
            error = result.error_before_exec or result.error_in_exec
        except BaseException as raised:
            error = raised
        finally:
            signal.alarm(0)
        if error is not None:
            errors.append([number, type(error).__name__, str(error)[:300]])
    return shell.user_ns, errors


def _answers(student: Any, calls: list[dict[str, Any]], inputs: dict, timeout: int) -> list[Answer] | None:
    """The student's answers to ``calls``; None when they ran past ``timeout`` seconds in all."""
    signal.signal(signal.SIGALRM, _stop)
    signal.alarm(timeout)
    try:
        return [
            capture(student, decode(c["args"], inputs), decode(c["kwargs"], inputs), decode(c.get("feeds"), inputs))
            for c in calls
        ]
    except CellTimeout:
        return None
    finally:
        signal.alarm(0)


def main() -> None:
    job = json.loads(sys.stdin.read())
    os.close(0)
    out = os.fdopen(job["result_fd"], "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    inputs = from_bytes(job["tensors"])
    namespace, errors = run_cells(job["cells"], job["cell_timeout"])
    tensors: dict[str, Any] = {}
    results = {}
    for exercise in job["exercises"]:
        student = namespace.get(exercise["function"])
        entry: dict[str, Any] = {"found": student is not None}
        if student is not None:
            answers = _answers(student, exercise["cases"], inputs, job["cell_timeout"])
            entry["timeout"] = answers is None
            entry["calls"] = [answer.to_data(tensors) for answer in answers or []]
        results[exercise["label"]] = entry
    json.dump({"errors": errors, "exercises": results, "tensors": to_bytes(tensors)}, out)
    out.close()
    os._exit(0)


if __name__ == "__main__":
    main()
