"""Every chapter runs as a student runs it in Colab: alone, in an empty folder, in a fresh runtime.

This is where the chapters are executed in a test run, once each. The runtime
(:class:`tools.colab_runtime.ColabRuntime`) holds only what a Colab runtime brings, plus the library
installed from the checkout; each chapter is executed in an empty temporary folder, top to bottom, on
that runtime's kernel. This catches a chapter that reads a path of the repository, needs a package its
set-up cell does not install, or depends on its working directory. The same fresh run is then checked
as the chapter's own claims demand: every checker that follows a reference solution says PASSED now,
every cell marked ``# NBVAL_CHECK_OUTPUT`` prints what the committed notebook shows (what nbval checked),
and every cell tagged ``raises-exception`` did raise. Its outputs
go into the build's jupyter-cache, so the site shows this run rather than executing the chapter again.

The same run is also the chapter's handout run up to its first exercise, as a student first runs it: the
handout has the chapter's code up to its first stub, so just before the chapter's first gated solution the
run executes the handout's stub cells and the checker call after them, which must say NOT YET
(:func:`tools.handouts.with_first_stub`); those cells are taken out again before anything else is checked.

``make test-chapters`` runs these two at a time (``pytest -n 2``): training in the chapters uses one
CPU thread.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from site_helpers import CONFIG, NOTEBOOKS
from transformerland.exercises import VERDICT_PATTERN

from tools.book import read
from tools.colab_runtime import COLAB_KERNEL, ColabRuntime
from tools.execute_chapters import store_for_the_site, with_outputs
from tools.exercises import checkers, gates
from tools.handouts import with_first_stub
from tools.run_notebook import run_in_empty_folder

CELL_TIMEOUT_S = CONFIG["execute"]["timeout"]
#: Appended to the run: where the kernel's Python and the library really came from.
WHERE_FROM = "import json, sys, transformerland\nprint(json.dumps([sys.prefix, transformerland.__file__]))"
#: The first line of a cell whose printed output must stay as committed (nbval's marker).
CHECK_OUTPUT = "# NBVAL_CHECK_OUTPUT"


def outputs_text(cell: nbformat.NotebookNode) -> str:
    return "".join(output.get("text", "") for output in cell.get("outputs", []))


def shown(cell: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """What a cell's outputs say in text: streams, plain-text results, errors (not images)."""
    found = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            found.append((output["name"], output["text"]))
        elif kind in ("execute_result", "display_data") and "text/plain" in output.get("data", {}):
            found.append((kind, output["data"]["text/plain"]))
        elif kind == "error":
            found.append(("error", f"{output['ename']}: {output['evalue']}"))
    return found


def fresh_verdicts(run: nbformat.NotebookNode) -> dict[str, dict[str, str]]:
    """For each gated solution of a run: the verdicts that the checker cell after it printed in this run."""
    found = gates(run)
    return {
        gate.label: {
            m["exercise"]: m["verdict"] for m in VERDICT_PATTERN.finditer(outputs_text(run.cells[gate.end + 1]))
        }
        for gate in found
        if checkers(run, [gate]).get(gate.label)
    }


def kernel_environment(colab_runtime: ColabRuntime) -> dict[str, str]:
    """The runtime's environment; with chapters side by side (``pytest -n 2``), one intra-op thread each.

    Two kernels that each start a pool of as many threads as there are cores fight over the cores (OpenMP
    threads wait for one another by spinning): chapter 7, beside chapter 8, once took 171 s instead of
    70 s. Training already uses one thread; this gives the real model's forward passes one too. No
    printed output that a test compares depends on it.
    """
    env = colab_runtime.environment()
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        env |= {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return env


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_chapter_runs_alone_in_a_colab_like_runtime(path: Path, colab_runtime: ColabRuntime):
    committed = read(path)
    run, first = with_first_stub(committed)
    run.cells.append(nbformat.v4.new_code_cell(WHERE_FROM))
    kernels = KernelSpecManager(kernel_dirs=[str(colab_runtime.kernels)])
    manager = AsyncKernelManager(kernel_name=COLAB_KERNEL, kernel_spec_manager=kernels)
    # raises on the first failing cell (cells tagged raises-exception excepted)
    seconds = run_in_empty_folder(run, CELL_TIMEOUT_S, kernel_manager=manager, env=kernel_environment(colab_runtime))

    printed = "".join(outputs_text(run.cells[index]) for index in first.cells)
    said = {m["exercise"]: f"{m['verdict']} · {m['message']}" for m in VERDICT_PATTERN.finditer(printed)}
    stopped = list(said) == [first.label] and said[first.label].startswith("NOT YET") and "not written yet" in printed
    assert stopped, f"the handout's first checker, {first.checker}, on its stub said: {said}"
    del run.cells[first.inserted.start : first.inserted.stop]

    prefix, library = json.loads(outputs_text(run.cells[-1]))
    assert Path(prefix) == colab_runtime.venv, f"the kernel ran in {prefix}, not in the Colab-like runtime"
    assert Path(library).is_relative_to(colab_runtime.venv), f"transformerland came from {library}, not the runtime"
    setup = next(cell for cell in run.cells if "setup" in cell.metadata.get("tags", []))
    assert "ERROR" not in outputs_text(setup), f"the set-up cell's install failed:\n{outputs_text(setup)}"

    quiet = [
        index
        for index, cell in enumerate(run.cells)
        if "raises-exception" in cell.metadata.get("tags", [])
        and not any(output.get("output_type") == "error" for output in cell.get("outputs", []))
    ]
    assert not quiet, f"cells tagged raises-exception that raised nothing in this run: {quiet}"

    verdicts = fresh_verdicts(run)
    wrong = {label: found for label, found in verdicts.items() if found != {label: "PASSED"}}
    assert not wrong, f"checkers after a reference solution that did not say PASSED in this run: {wrong}"

    tidy = with_outputs(committed, run)
    changed = [
        index
        for index, (before, now) in enumerate(zip(committed.cells, tidy.cells, strict=True))
        if before.cell_type == "code" and before.source.startswith(CHECK_OUTPUT) and shown(before) != shown(now)
    ]
    assert not changed, f"cells marked {CHECK_OUTPUT} printed something else than committed: cells {changed}"

    store_for_the_site(path, run, seconds)
