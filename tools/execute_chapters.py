"""Execute chapters top to bottom: save them with their outputs, or keep the outputs for the site.

Each notebook runs in a fresh kernel in an empty temporary folder (as in Colab and in the build,
:func:`tools.run_notebook.run_in_empty_folder`), and its outputs are tidied: consecutive pieces of a
stream are joined and carriage returns are resolved as a terminal would (a progress bar keeps only
its final state), and the kernel's per-cell timing metadata is dropped, so that a re-run changes
only what the code printed or drew. Then, by default, the chapter is written back (what is
committed); with ``--cache``, its outputs go into the build's jupyter-cache instead
(``_build/.jupyter_cache``), where the book's build (``execute_notebooks: cache``) takes them rather
than executing the chapter again. ``make book`` runs it that way, two chapters at a time. It says what it
will do first, then reports each chapter as it finishes (``[3 of 9] 05_extrapolation.ipynb: 41.2 s``), in
the order they finish. Run from the repository's root::

    python -m tools.execute_chapters                       # every chapter, written back
    python -m tools.execute_chapters book/05_extrapolation.ipynb
    python -m tools.execute_chapters --cache --jobs 2      # every chapter, outputs for the site
"""

from __future__ import annotations

import argparse
import copy
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
from filelock import FileLock
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

from sphinx_ext.carriage_returns import join_streams
from tools.book import ROOT, chapters, read
from tools.run_notebook import run_in_empty_folder

#: Cell metadata that records when a cell ran, not what it produced.
TIMING_KEYS = ("execution",)


def tidy_outputs(notebook: nbformat.NotebookNode) -> None:
    """Join each cell's consecutive stream outputs, resolve carriage returns, drop timing metadata."""
    for cell in notebook.cells:
        for key in TIMING_KEYS:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = join_streams(cell.outputs)


def with_outputs(source: nbformat.NotebookNode, executed: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``source`` with the outputs of ``executed`` (a run of it, maybe with cells appended), tidied.

    Only outputs and execution counts are taken, so the copy's code and metadata are exactly the source's:
    what jupyter-cache hashes to match it to the chapter at build time.
    """
    merged = copy.deepcopy(source)
    for cell, run in zip(merged.cells, executed.cells, strict=False):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = copy.deepcopy(run.outputs), run.get("execution_count")
    tidy_outputs(merged)
    return merged


def cache_folder(root: Path = ROOT) -> Path:
    """The jupyter-cache of the build at ``root``: MyST-NB's default, ``_build/.jupyter_cache``."""
    return root / "_build" / ".jupyter_cache"


def store_for_the_site(path: Path, executed: nbformat.NotebookNode, seconds: float, root: Path = ROOT) -> None:
    """Keep the outputs of an execution of the chapter at ``path`` in the build's jupyter-cache.

    The build (``execute_notebooks: cache``) then renders them instead of executing the chapter. Safe to call
    from several processes at once (a lock around the cache's database).
    """
    folder = cache_folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    bundle = CacheBundleIn(with_outputs(read(path), executed), str(path), data={"execution_seconds": seconds})
    with FileLock(folder.parent / ".jupyter_cache.lock"):
        get_cache(str(folder)).cache_notebook_bundle(bundle, check_validity=False, overwrite=True)


def execute(path: Path, timeout: int = 150, for_the_site: bool = False) -> float:
    """Execute the chapter at ``path`` in an empty folder; write it back tidy, or keep it for the site."""
    notebook = read(path)
    seconds = run_in_empty_folder(notebook, timeout)
    if for_the_site:
        store_for_the_site(path, notebook, seconds)
    else:
        tidy_outputs(notebook)
        nbformat.write(notebook, path)
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapters to run (default: every chapter)")
    parser.add_argument("--timeout", type=int, default=150, help="seconds a cell may take (default 150)")
    parser.add_argument("--cache", action="store_true", help="keep the outputs for the site, not in the notebook")
    parser.add_argument("--jobs", type=int, default=1, help="chapters run at the same time (default 1)")
    args = parser.parse_args(argv)
    paths = [path.resolve() for path in args.notebooks] or chapters()
    where = "outputs kept for the site" if args.cache else "written back with their outputs"
    print(
        f"executing {len(paths)} chapter(s), {args.jobs} at a time ({where}), each reported as it finishes", flush=True
    )
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        running = {pool.submit(execute, path, args.timeout, args.cache): path for path in paths}
        for done, future in enumerate(as_completed(running), start=1):
            line = progress_line(done, len(paths), running[future].name, future.result(), time.perf_counter() - start)
            print(line, flush=True)


def progress_line(done: int, total: int, name: str, seconds: float, elapsed: float) -> str:
    """``[3 of 9] 05_extrapolation.ipynb: 41.2 s (2 min 03 s so far)``: a chapter that has just finished."""
    return f"[{done} of {total}] {name}: {seconds:.1f} s ({int(elapsed // 60)} min {int(elapsed % 60):02d} s so far)"


if __name__ == "__main__":
    main()
