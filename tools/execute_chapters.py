"""Execute chapters top to bottom and save them with their outputs, as the book commits them.

Each notebook runs in a fresh kernel in an empty temporary folder (as in Colab and in the build),
and its outputs are tidied before it is written back: consecutive pieces of a stream are joined
and carriage returns are resolved as a terminal would (a progress bar keeps only its final
state), and the kernel's per-cell timing metadata is dropped, so that a re-run changes only what
the code printed or drew. Run from the repository's root::

    python -m tools.execute_chapters                       # every chapter
    python -m tools.execute_chapters book/05_extrapolation.ipynb
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tools.carriage_returns import join_streams
from tools.chapters import chapters, read

#: Cell metadata that records when a cell ran, not what it produced.
TIMING_KEYS = ("execution",)


def tidy_outputs(notebook: nbformat.NotebookNode) -> None:
    """Join each cell's consecutive stream outputs, resolve carriage returns, drop timing metadata."""
    for cell in notebook.cells:
        for key in TIMING_KEYS:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = join_streams(cell.outputs)


def run_in_empty_folder(notebook: nbformat.NotebookNode, timeout: int = 150) -> float:
    """Execute ``notebook`` in place, in a fresh kernel whose working folder is empty; return seconds."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        NotebookClient(notebook, timeout=timeout, resources={"metadata": {"path": folder}}).execute()
    return time.perf_counter() - start


def execute(path: Path, timeout: int = 150) -> float:
    """Execute the notebook at ``path`` in an empty folder, tidy it and write it back; return seconds."""
    notebook = read(path)
    seconds = run_in_empty_folder(notebook, timeout)
    tidy_outputs(notebook)
    nbformat.write(notebook, path)
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapters to run (default: every chapter)")
    parser.add_argument("--timeout", type=int, default=150, help="seconds a cell may take (default 150)")
    args = parser.parse_args(argv)
    for path in args.notebooks or chapters():
        print(f"{path.name}: {execute(path, args.timeout):.1f} s", flush=True)


if __name__ == "__main__":
    main()
