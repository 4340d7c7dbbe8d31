"""What runs inside a grading sandbox: a submission's code cells, then its functions on the grader's cases.

Started by the grader (:mod:`tools.sandbox`) as ``python -m transformerland.exercises.harness`` inside
bubblewrap. It reads the job, one JSON message, from standard input and closes it before any of the
student's code runs: the code cells' sources, and for each exercise the name of the student's function,
the library functions it must not call, and the cases (inputs only) to call it on. It runs the cells in
order in one IPython namespace (an error in a cell is kept and the next cell runs; a cell that runs past
``cell_timeout`` seconds is interrupted), then calls each function on its cases and writes the answers,
as data (:mod:`~transformerland.exercises.codec`), as one JSON message to the file descriptor the job names. It decides
nothing: the verdicts are the grader's, made in its own process.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
from typing import Any

from .codec import decode, encode, from_bytes, to_bytes
from .spec import Answer, Case

__all__ = ["CellTimeout", "main", "run_cells"]


class CellTimeout(Exception):
    """A cell ran past its time limit."""


def _load(reference: str) -> Any:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def run_cells(cells: list[str], timeout: int) -> tuple[dict[str, Any], list[list[Any]]]:
    """Run ``cells`` in one IPython namespace; the namespace, and ``[cell number, error name, message]`` per error."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()

    def stop(signum: int, frame: Any) -> None:
        raise CellTimeout(f"ran longer than {timeout} s")

    errors = []
    for number, source in enumerate(cells, start=1):
        signal.signal(signal.SIGALRM, stop)
        signal.alarm(timeout)
        try:
            result = shell.run_cell(source, store_history=False, silent=True)
        except BaseException as error:
            errors.append([number, type(error).__name__, str(error)[:300]])
            continue
        finally:
            signal.alarm(0)
        error = result.error_before_exec or result.error_in_exec
        if error is not None:
            errors.append([number, type(error).__name__, str(error)[:300]])
    return shell.user_ns, errors


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
            signal.signal(signal.SIGALRM, lambda signum, frame: (_ for _ in ()).throw(CellTimeout("too slow")))
            signal.alarm(job["cell_timeout"])
            try:
                spec = _load(exercise["spec"]) if exercise.get("spec") else None
                cases = [Case(decode(c["args"], inputs), decode(c["kwargs"], inputs)) for c in exercise["cases"]]
                forbids = exercise["forbids"]
                calls = [
                    (case, spec.answer(student, case) if spec is not None else Answer.of(student, case, forbids))
                    for case in cases
                ]
            except CellTimeout:
                entry["timeout"] = True
                calls = []
            finally:
                signal.alarm(0)
            entry["calls"] = [
                {
                    "value": encode(answer.value, tensors),
                    "after": encode(answer.after, tensors) if answer.after else None,
                    **answer.to_data(),
                }
                for case, answer in calls
            ]
        results[exercise["label"]] = entry
    json.dump({"errors": errors, "exercises": results, "tensors": to_bytes(tensors)}, out)
    out.close()
    os._exit(0)


if __name__ == "__main__":
    main()
