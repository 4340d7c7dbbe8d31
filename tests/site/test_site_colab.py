"""Every chapter runs as a student runs it in Colab: alone, in an empty folder, in a fresh runtime.

The runtime (:class:`site_helpers.ColabRuntime`) holds only what a Colab runtime brings, plus the
library installed from the checkout. Each notebook is copied alone into an empty temporary folder
and executed there top to bottom with nbclient on that runtime's kernel. This catches a chapter
that reads a path of the repository, needs a package its set-up cell does not install, or depends
on its working directory.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from site_helpers import COLAB_KERNEL, CONFIG, NOTEBOOKS, ColabRuntime

CELL_TIMEOUT_S = CONFIG["execute"]["timeout"]
#: Appended to the copy: where the kernel's Python and the library really came from.
WHERE_FROM = "import json, sys, transformerland\nprint(json.dumps([sys.prefix, transformerland.__file__]))"


def outputs_text(cell: nbformat.NotebookNode) -> str:
    return "".join(output.get("text", "") for output in cell.get("outputs", []))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_chapter_runs_alone_in_a_colab_like_runtime(path: Path, colab_runtime: ColabRuntime, tmp_path: Path):
    runtime = colab_runtime.ready()
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    notebook = nbformat.read(copy, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(WHERE_FROM))
    kernels = KernelSpecManager(kernel_dirs=[str(runtime.kernels)])
    client = NotebookClient(
        notebook,
        km=AsyncKernelManager(kernel_name=COLAB_KERNEL, kernel_spec_manager=kernels),
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute(env=runtime.environment(), cleanup_kc=True)  # raises on the first failing cell

    prefix, library = json.loads(outputs_text(notebook.cells[-1]))
    assert Path(prefix) == runtime.venv, f"the kernel ran in {prefix}, not in the Colab-like runtime"
    assert Path(library).is_relative_to(runtime.venv), f"transformerland came from {library}, not the runtime"
    setup = next(cell for cell in notebook.cells if "setup" in cell.metadata.get("tags", []))
    assert "ERROR" not in outputs_text(setup), f"the set-up cell's install failed:\n{outputs_text(setup)}"
